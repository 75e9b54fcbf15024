"""Arity-annotated symbols (``and/3``, ``flight/1``, ``$0/0``): one decoder symbol per node.

Pairing each label with its number of children makes a pre-order or breadth-first symbol
sequence describe the tree completely, with no brackets or end symbol. A label used with
several arities (``and/2``, ``and/3``) is several symbols. Labels may contain ``/`` themselves,
so only a final ``/`` followed by a canonical decimal number is the arity.
"""

import functools
import re

_SYMBOL = re.compile(r"(?s)(.+)/(0|[1-9][0-9]*)")


def symbol(label: str, arity: int) -> str:
    """The symbol of a node labelled *label* with *arity* children."""
    if not label:
        raise ValueError("a tree label must not be empty")
    if arity < 0:
        raise ValueError(f"arity must not be negative, got {arity} for {label!r}")
    return f"{label}/{arity}"


@functools.lru_cache(maxsize=1 << 16)  # a grammar's symbols are few, and a search splits each one at every step
def split_symbol(text: str) -> tuple[str, int]:
    """The (label, arity) of a symbol; ``ValueError`` if *text* has no ``/digits`` suffix."""
    match = _SYMBOL.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not an arity-annotated symbol like 'and/3'")
    return match.group(1), int(match.group(2))
