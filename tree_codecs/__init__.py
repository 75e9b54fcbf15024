"""Tree codecs: output grammars whose symbols are arity-annotated tree nodes (LCRS, BFS/DFS positions).

Each is a :class:`toolkit.grammars.Grammar`; see ../shared/DESIGN.md. Pure Python, no torch.
"""
