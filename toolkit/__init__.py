"""A toolkit of grammar-driven neural parsers built from jsonnet configs.

The Python API is one function::

    from toolkit import load_predictor

    parser = load_predictor("runs/geo/model.tar.gz")      # the README's main job; or a URL, or an installed model's name
    parser.predict("What is the capital of Texas?")          # {..., "logical_form": ..., "answer": ["austin"]}
    parser.predict_batch(["...", "..."])                     # one dict per input, in order

Importing ``toolkit`` itself stays cheap (no torch): the work happens when the function runs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from predictors.predictor import Predictor

__all__ = ["load_predictor"]


def load_predictor(
    archive: str | Path,
    predictor: str | None = None,
    *,
    device: str = "auto",
    beam_size: int | None = None,
    include_package: str | Sequence[str] = (),
    ensemble: Sequence[str | Path] = (),
    quantize: str | None = None,
) -> Predictor:
    """The predictor of a ``model.tar.gz`` (or a training directory), ready for ``predict(text)``.

    *archive* (and each of *ensemble*) may also be an ``https://`` URL, downloaded once into a cache,
    or the name of a model package ``toolkit package`` built and pip installed
    (:mod:`toolkit.archive_sources`).

    *predictor* defaults to the one the archive's grammar names (``dependency`` for a transition
    system, ``amr``, ``tagger``, else ``semantic_parser``); *beam_size* gives the model's own
    search a beam of that size and keeps all else it has (a beam's executor, answer kinds,
    abstention and ``min_confidence``: :func:`~toolkit.decoding.beam.search_with_beam`), so a size
    never answers what the archive abstains on; *include_package* (one name or several) imports
    plugin packages first, as ``--include-package`` does (archives import the plugins they record by
    themselves); *ensemble* names more archives of the same grammar and data to decode with,
    averaging their predictions (:mod:`toolkit.models.ensemble`; *beam_size* resizes the first
    one's search); *quantize* ``"int8"`` quantizes the models' Linear layers for the CPU
    (:mod:`toolkit.quantization`).
    """
    from predictors.predictor import Predictor, describe
    from toolkit.archive_sources import resolve_archive
    from toolkit.decoding import BeamSearch, search_with_beam
    from toolkit.device import resolve_device
    from toolkit.models.ensemble import load_ensemble
    from toolkit.plugins import import_plugins

    if not isinstance(archive, (str, os.PathLike)):
        raise TypeError(f"load_predictor takes the path of an archive (a str or a Path), not {describe(archive)}")
    if predictor is not None and not isinstance(predictor, str):
        raise TypeError(f"load_predictor's predictor is a registered name (a str, see `toolkit list Predictor`), not {describe(predictor)}")
    BeamSearch.check_size(beam_size)  # a bad argument fails before the archive is loaded
    import_plugins((include_package,) if isinstance(include_package, str) else tuple(include_package))  # one name, not its letters
    if isinstance(ensemble, (str, os.PathLike)) or not all(isinstance(path, (str, os.PathLike)) for path in ensemble):
        raise TypeError(f"load_predictor's ensemble is a list of archive paths, not {describe(ensemble)}")
    loaded = load_ensemble([resolve_archive(source) for source in (archive, *ensemble)], resolve_device(device, "device"), quantize)
    name = predictor or loaded.model.grammar.default_predictor
    return Predictor.by_name(name)(loaded, search=search_with_beam(getattr(loaded.model, "search", None), beam_size))
