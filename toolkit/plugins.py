"""Importing outside packages that register components: ``--include-package`` and entry points."""

import importlib
import logging
from importlib.metadata import entry_points

from toolkit.errors import ConfigurationError

logger = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "toolkit.plugins"


def import_builtin_components() -> None:
    """Import every toolkit module that registers something, so that names resolve and ``list`` is complete."""
    for module in ("toolkit.data.dataset_readers", "toolkit.grammars", "toolkit.models", "toolkit.metrics", "toolkit.decoding",
                   "toolkit.phrases", "toolkit.training.trainer", "predictors", "tree_codecs", "transition_systems"):
        importlib.import_module(module)


def include_package(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError as error:
        raise ConfigurationError(f"--include-package {name}: cannot import it ({error})") from None


def import_plugins(include: tuple[str, ...] = ()) -> None:
    """Import the packages named with ``--include-package`` and those declaring the ``toolkit.plugins`` entry point."""
    import_builtin_components()
    for name in include:
        include_package(name)
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry_point.load()
        except Exception as error:  # a broken plugin must not break the toolkit
            logger.warning("plugin %s could not be loaded: %s", entry_point.value, error)
