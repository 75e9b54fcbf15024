"""Universal Dependencies treebanks by name, so one config trains a parser for any of them.

UD names every treebank's files ``LANG_NAME-ud-SPLIT.conllu`` (``fr_sequoia-ud-train.conllu``), the
language's ISO code first, whatever folder holds them. A config names the treebank instead of its
files, at its top level::

    toolkit train jsonnet_configs/ud.jsonnet -s runs/fr -o '{"treebank": "fr_sequoia"}'

and :func:`resolve_treebank` (run on every config as it is read, after its overrides) finds
``DATA_ROOT/*/fr_sequoia-ud-{train,dev,test}.conllu`` and fills in the data paths the config does not
give itself: a ``test_data_path`` the config or an override names is kept. The readers record the
treebank's language (``"language": "fr"``, unless they name one), which the model and the
predictor read (:mod:`toolkit.data.language`). A treebank without a dev
or test file trains all the same, without validation or a test score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.errors import ConfigurationError

KEY = "treebank"
NAME = re.compile(r"[a-z]{2,3}_[a-z0-9]+")  # UD's LANG_NAME: an ISO 639 code, then the treebank's name
READERS = ("dataset_reader", "validation_dataset_reader")  # they record the language, for the model and the predictor
SPLITS = {"train": "train_data_path", "dev": "validation_data_path", "test": "test_data_path"}


@dataclass(frozen=True)
class Treebank:
    """A treebank's name (``fr_sequoia``) and its files; ``dev`` and ``test`` may be missing."""

    name: str
    train: Path
    dev: Path | None = None
    test: Path | None = None

    @property
    def language(self) -> str:
        """The ISO 639 code its name starts with: ``fr``."""
        return self.name.split("_", 1)[0]


def available(root: str | Path) -> list[str]:
    """The names of the treebanks under *root* that have a training file, sorted."""
    return sorted({path.name.removesuffix("-ud-train.conllu") for path in Path(root).glob("*/*-ud-train.conllu")})


def find_treebank(name: str, root: str | Path) -> Treebank:
    """The treebank *name* under *root* (one folder down, as UD's releases lay them out); a
    ``ConfigurationError`` that lists the treebanks there where it is missing or found twice.
    """
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ConfigurationError(f"expected a UD treebank name such as 'fr_sequoia' (LANG_NAME), got {name!r}", key=KEY)
    found = sorted(Path(root).glob(f"*/{name}-ud-train.conllu"))
    if not found:
        names = available(root)
        listed = f"those there: {', '.join(names)}" if names else "none is there"
        raise ConfigurationError(f"no treebank {name!r} under {root} (no */{name}-ud-train.conllu); {listed}", key=KEY)
    if len(found) > 1:
        raise ConfigurationError(f"treebank {name!r} is in {len(found)} folders under {root}: {', '.join(str(path.parent) for path in found)}", key=KEY)
    folder = found[0].parent
    other = {split: folder / f"{name}-ud-{split}.conllu" for split in ("dev", "test")}
    return Treebank(name, found[0], *(path if path.is_file() else None for path in other.values()))


def resolve_treebank(config: dict[str, Any], root: str | Path) -> dict[str, Any]:
    """*config* with its top-level ``treebank`` replaced by the data paths it does not give, and
    its readers' ``language`` by the treebank's where they leave it out (see the module doc).
    """
    if KEY not in config:
        return config
    treebank = find_treebank(config.pop(KEY), root)
    for split, key in SPLITS.items():
        path = getattr(treebank, split)
        if path is not None and config.get(key) is None:
            config[key] = str(path)
    for key in READERS:
        if isinstance(reader := config.get(key), dict) and reader.get("language") is None:
            reader["language"] = treebank.language
    return config
