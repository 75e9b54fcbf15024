"""Logic match: exact match of logical forms up to the order of ``and`` / ``or`` arguments.

This is the accuracy of Dong & Lapata (2018, "Coarse-to-Fine Decoding for Neural Semantic
Parsing") on GEO and ATIS: two lambda-calculus forms match when their trees are equal once the
arguments of commutative operators are treated as multisets.

>>> tree = parse_sexpr("( and ( b $0 ) ( a $0 ) )")
>>> tree
('and', ('b', '$0'), ('a', '$0'))
>>> canonical(tree, ["and"])
'( and ( a $0 ) ( b $0 ) )'
"""

import re
from collections.abc import Iterable, Sequence
from typing import Union

from toolkit.errors import DataError
from toolkit.metrics.exact_match import ExactMatch
from toolkit.metrics.metric import Metric

Tree = Union[str, tuple["Tree", ...]]  # noqa: UP007 - a recursive alias: "str | tuple[Tree, ...]" would evaluate the forward reference
"""An atom, or a bracketed node as the tuple of its children (the operator first)."""

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_sexpr(text: str | Sequence[str]) -> Tree:
    """Parse one bracketed expression into nested tuples; ``ValueError`` if it is not exactly one.

    *text* is a string (brackets need not be space-separated) or a token list.

    >>> parse_sexpr("( lambda $0 e ( state:t $0 ) )")
    ('lambda', '$0', 'e', ('state:t', '$0'))
    >>> parse_sexpr("( a ( b )")
    Traceback (most recent call last):
    ...
    ValueError: unbalanced brackets: 1 left open
    """
    tokens = _TOKEN.findall(text if isinstance(text, str) else " ".join(text))
    stack: list[list[Tree]] = [[]]
    for token in tokens:
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced brackets: ')' closes nothing")
            node = tuple(stack.pop())
            stack[-1].append(node)
        else:
            stack[-1].append(token)
    if len(stack) > 1:
        raise ValueError(f"unbalanced brackets: {len(stack) - 1} left open")
    if len(stack[0]) != 1:
        raise ValueError(f"expected one expression, found {len(stack[0])}")
    return stack[0][0]


def canonical(tree: Tree, commutative: Iterable[str] = ("and", "or")) -> str:
    """*tree* as a string in which the arguments of *commutative* operators are sorted.

    Sorting keeps duplicates, so arguments compare as multisets.

    >>> canonical(("or", ("b",), ("a",), ("b",)), ["or"])
    '( or ( a ) ( b ) ( b ) )'
    """
    commutative = frozenset(commutative)
    return _canonical(tree, commutative)


def _canonical(tree: Tree, commutative: frozenset[str]) -> str:
    if isinstance(tree, str):
        return tree
    parts = [_canonical(child, commutative) for child in tree]
    if parts and isinstance(tree[0], str) and tree[0] in commutative:
        parts[1:] = sorted(parts[1:])
    return "( " + " ".join(parts) + " )"


@Metric.register("logic_match")
class LogicMatch(ExactMatch):
    """Counts predicted logical forms equal to their gold up to reordering commutative arguments.

    An unparsable prediction (unbalanced brackets) is a miss; an unparsable gold is a data error.
    Reports ``{"logic_match": correct / total}``.

    Args:
        commutative: the operators whose arguments are compared as multisets.

    Registered as ``"logic_match"``.
    """

    key = "logic_match"

    def __init__(self, commutative: list[str] = ["and", "or"]) -> None:  # noqa: B006 (never mutated)
        self.commutative = frozenset(commutative)
        super().__init__()

    def _predicted_form(self, prediction: str | Sequence[str]) -> str | None:
        try:
            return _canonical(parse_sexpr(prediction), self.commutative)
        except (ValueError, RecursionError):  # malformed or absurdly deep: a miss, never a crash
            return None

    def _gold_form(self, gold: str | Sequence[str]) -> str:
        try:
            return _canonical(parse_sexpr(gold), self.commutative)
        except ValueError as error:
            raise DataError(f"gold logical form {gold!r} is not well-formed: {error}") from None
