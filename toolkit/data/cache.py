"""A disk cache of indexed training examples, so a second run skips the oracles, masks and phrases.

Indexing an example runs the grammar's oracle through its state machine (transition actions,
AMR alignments, Stack-Transformer masks, tree positions) and the encoder's preprocessing (n-gram
or spaCy phrases): for some parsers the slowest part of starting a run. It depends only on the
data and the parts of the config that shape it, so it is cached under a key made of:

- the content of the training file (and of the indexed file, when that is another one);
- the config without ``trainer``, ``metrics`` and the data paths (so moving a file or changing
  the learning rate keeps the entry, and changing the grammar, vocabulary or model does not);
- what shapes the token embedders' inputs besides the config (a pretrained tokenizer's files);
- the toolkit's version.

The cache is opt-in (``"cache_directory": "..."`` at the config's top level, or
``$TOOLKIT_CACHE_DIR``) because the key does not cover the toolkit's code: after editing a grammar,
clear the directory. Entries are pickles this machine wrote for itself, like ``__pycache__``:
never ship them, and never point the cache at files from elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from toolkit.data.tokenization import lemmatizer_name
from toolkit.files import atomic_write

logger = logging.getLogger(__name__)
NOT_IN_KEY = ("trainer", "metrics", "train_data_path", "validation_data_path", "test_data_path", "cache_directory")


def fingerprint(path: str | Path) -> str:
    """The SHA-256 of a data file, or of every file a prefix names (``multi30k/train`` -> ``train.de``, ``train.en``)."""
    path = Path(path)
    files = [path] if path.is_file() else sorted(p for p in path.parent.glob(path.name + "*") if p.is_file())
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode())
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def cache_key(config: Mapping[str, Any], *data_paths: str | Path, inputs: Sequence[Any] = ()) -> str:
    """The entry's name: a hash of the data files' contents, the config that shapes indexing, *inputs*
    (the token embedders' ``inputs_source()``) and the version.
    """
    try:
        toolkit_version = version("parsing-toolkit")
    except PackageNotFoundError:
        toolkit_version = "unknown"
    shaping = {key: value for key, value in config.items() if key not in NOT_IN_KEY}
    # the lemmatizer shapes AMR oracles: spaCy's lemmas and simplemma's must not share an entry
    text = json.dumps(
        {
            "config": shaping,
            "data": [fingerprint(path) for path in data_paths],
            "version": toolkit_version,
            "lemmas": lemmatizer_name(),
            **({"inputs": list(inputs)} if inputs else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached(directory: str | Path | None, key: str, compute: Callable[[], Sequence[Any]], write: bool = True) -> list[Any]:
    """``compute()``, or the entry *key* in *directory* when it exists (written after computing, if
    *write*: under ``torchrun`` only rank 0 writes); no cache when *directory* is ``None``.
    """
    if directory is None:
        return list(compute())
    path = Path(directory) / f"{key}.pickle"
    if path.exists():
        try:
            with open(path, "rb") as handle:
                items = pickle.load(handle)
            logger.info("read %d preprocessed examples from the cache %s", len(items), path)
            return items
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as error:
            logger.warning("ignoring the unreadable cache entry %s (%s)", path, error)
    items = list(compute())
    if not write:
        return items
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda temporary: temporary.write_bytes(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)), shared_folder=True)  # runs share a cache
    logger.info("cached %d preprocessed examples in %s", len(items), path)
    return items
