"""Transition systems: output grammars whose symbols are parser actions (arc-standard, AMR).

Each is a :class:`toolkit.grammars.Grammar`; see ../shared/DESIGN.md. Pure Python, no torch.
"""
