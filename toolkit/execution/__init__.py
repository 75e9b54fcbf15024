"""Executing logical forms to their answers; importing this package registers the executors."""

from toolkit.execution.executor import Denotation, Executor, canonical_answer
from toolkit.execution.prolog import GeoQueryProlog, prolog_query

__all__ = ["Denotation", "Executor", "GeoQueryProlog", "canonical_answer", "prolog_query"]
