r"""Prolog-style terms (JOBS logical forms) as trees, with an exact print-back.

``job ( ANS ) , \+ ( a ( X ) , b ( X ) ) ; ( c ( X ) )`` is read with Prolog's operator
priorities (``;`` loosest, then ``,``, then the prefix ``\+``), which become tree nodes:

- ``a , b , c``  -> ``,`` with children a, b, c (a chain of one operator is one n-ary node, like
  ``and/3`` in the lambda-calculus data, so conjunct order is flat rather than a right spine);
- ``a ; b``      -> ``;`` with children a, b;
- ``\+ a``       -> ``\+`` with one child;
- ``( a )``      -> ``()`` with one child: written brackets are kept as a node, since the data
  brackets redundantly (``( ( language ( ANS , l0 ) ) ; ( ... ) )``) and printing must give
  the text back exactly;
- ``f ( x , y )`` -> ``f`` with children x, y; an atom alone is a leaf.

Tokens are space-separated, so ``\+ (`` and ``\+(`` cannot be told apart: ``\+`` is always the
prefix operator. An operator node at another arity than its own (a decoder may emit ``,/1``)
prints as an ordinary term, and printing brackets a child whenever its operator binds looser
than its place, so every printed tree reads back as the same logic.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_codecs.tree import Tree

AND, OR, NOT, GROUP = ",", ";", "\\+", "()"
OPEN, CLOSE = "(", ")"
_PUNCTUATION = frozenset({OPEN, CLOSE, AND, OR, NOT})
_LOOSENESS = {OR: 2, AND: 1}  # how loosely an infix operator binds; terms and \+ are 0


def parse_prolog(text: str) -> Tree:
    """Read one Prolog-style term of space-separated tokens; raise ``ValueError`` if malformed."""
    reader = _Reader(text.split())
    if not reader.tokens:
        raise ValueError("empty Prolog term")
    tree = reader.disjunction()
    if reader.position < len(reader.tokens):
        raise reader.error("the term already ended")
    return tree


class _Reader:
    """A recursive-descent reader over the tokens, one method per priority level."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.position = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            raise ValueError(f"unbalanced or truncated term: expected {expected or 'more'} after the last token")
        if expected is not None and token != expected:
            raise self.error(f"expected {expected!r}")
        self.position += 1
        return token

    def error(self, why: str) -> ValueError:
        return ValueError(f"unexpected {self.peek()!r} at token {self.position + 1}: {why}")

    def chain(self, operator: str, operand: Callable[[], Tree]) -> Tree:
        parts = [operand()]
        while self.peek() == operator:
            self.take()
            parts.append(operand())
        return parts[0] if len(parts) == 1 else Tree(operator, tuple(parts))

    def disjunction(self) -> Tree:
        return self.chain(OR, self.conjunction)

    def conjunction(self) -> Tree:
        return self.chain(AND, self.unary)

    def unary(self) -> Tree:
        if self.peek() == NOT:
            self.take()
            return Tree(NOT, (self.unary(),))
        if self.peek() == OPEN:
            self.take()
            inner = self.disjunction()
            self.take(CLOSE)
            return Tree(GROUP, (inner,))
        token = self.peek()
        if token in _PUNCTUATION:
            raise self.error("expected a term")
        head = self.take()
        if self.peek() != OPEN:
            return Tree(head)
        self.take()
        arguments = [self.unary()]
        while self.peek() == AND:
            self.take()
            arguments.append(self.unary())
        self.take(CLOSE)
        return Tree(head, tuple(arguments))


def to_prolog(tree: Tree) -> str:
    """The Prolog text of *tree*, single-spaced: ``parse_prolog`` reads back what the parser built."""
    label, children = tree.label, tree.children
    if label in _LOOSENESS and len(children) >= 2:
        return f" {label} ".join(_operand(child, _LOOSENESS[label] - 1) for child in children)
    if label == NOT and len(children) == 1:
        return f"{NOT} {_operand(children[0], 0)}"
    if label == GROUP and len(children) == 1:
        return f"{OPEN} {to_prolog(children[0])} {CLOSE}"
    if not children:
        return label
    return f"{label} {OPEN} {' , '.join(_operand(child, 0) for child in children)} {CLOSE}"


def _operand(tree: Tree, loosest: int) -> str:
    """*tree* printed where nothing looser than *loosest* may stand unbracketed."""
    text = to_prolog(tree)
    if len(tree.children) >= 2 and _LOOSENESS.get(tree.label, 0) > loosest:
        return f"{OPEN} {text} {CLOSE}"
    return text
