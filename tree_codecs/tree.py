"""The labelled ordered tree every codec encodes, and its s-expression notation (GEO, ATIS).

Trees are values (immutable and hashable) so that parsed gold trees, decoded trees and their
parts can be compared, shared and used as dictionary keys. The s-expression notation is the
tree's native text: ``( head a b ( c d ) )`` is the node ``head`` with children ``a``, ``b`` and
``c(d)``, and an atom alone is a leaf. Printing is the exact inverse of parsing on whitespace-
normalized text, so a decoded tree can be compared with the gold logical form as a string.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

OPEN, CLOSE = "(", ")"


@dataclass(frozen=True)
class Tree:
    """A node: its *label* and its ordered *children* (none for a leaf)."""

    label: str
    children: tuple[Tree, ...] = ()

    @property
    def arity(self) -> int:
        """The number of children (0 for a leaf)."""
        return len(self.children)

    def walk(self) -> Iterator[tuple[Tree, int]]:
        """Every node with its depth, in pre-order, without recursion (data may nest deeper than Python's stack)."""
        stack = [(self, 0)]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((child, depth + 1) for child in reversed(node.children))

    @property
    def size(self) -> int:
        """The number of nodes, this one included."""
        return sum(1 for _ in self.walk())

    @property
    def depth(self) -> int:
        """The longest root-to-leaf path counted in edges: a leaf has depth 0."""
        return max(depth for _, depth in self.walk())

    @property
    def max_degree(self) -> int:
        """The largest number of children of any node."""
        return max(len(node.children) for node, _ in self.walk())

    def __str__(self) -> str:
        return to_lisp(self)


def parse_lisp(text: str) -> Tree:
    """Read one s-expression of space-separated tokens; raise ``ValueError`` on malformed input.

    A bracketed expression needs an atom head and at least one argument: ``( x )`` and
    ``( ( f ) a )`` would not print back the same from a :class:`Tree`, so they are refused.
    """
    tokens = text.split()
    if not tokens:
        raise ValueError("empty s-expression")
    stack: list[tuple[str, list[Tree]]] = []  # the open brackets: head and arguments so far
    done: Tree | None = None
    for index, token in enumerate(tokens):
        if done is not None:
            raise ValueError(f"unexpected {token!r} at token {index + 1}: the expression already ended")
        if token == OPEN:
            head = tokens[index + 1] if index + 1 < len(tokens) else None
            if head is None or head in (OPEN, CLOSE):
                raise ValueError(f"'(' at token {index + 1} must be followed by an atom (the head)")
            stack.append(("", []))
        elif token == CLOSE:
            if not stack:
                raise ValueError(f"unbalanced ')' at token {index + 1}: no '(' is open")
            head, arguments = stack.pop()
            if not arguments:
                raise ValueError(f"'( {head} )' at token {index + 1} has no arguments; write a leaf without brackets")
            done = _attach(stack, Tree(head, tuple(arguments)))
        elif stack and not stack[-1][0]:
            stack[-1] = (token, stack[-1][1])  # the head
        else:
            done = _attach(stack, Tree(token))
    if stack:
        raise ValueError(f"unbalanced '(': {len(stack)} still open at the end of the input")
    assert done is not None
    return done


def _attach(stack: list[tuple[str, list[Tree]]], tree: Tree) -> Tree | None:
    """Add *tree* as an argument of the innermost open bracket; return it if none is open."""
    if not stack:
        return tree
    stack[-1][1].append(tree)
    return None


def to_lisp(tree: Tree) -> str:
    """The s-expression of *tree*, single-spaced: ``parse_lisp`` reads it back as *tree*."""
    if not tree.children:
        return tree.label
    return " ".join([OPEN, tree.label, *(to_lisp(child) for child in tree.children), CLOSE])
