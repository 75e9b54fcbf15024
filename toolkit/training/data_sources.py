"""Where a config's data comes from: files, parts of files picked by id, and the domain each belongs to.

``train_data_path``, ``validation_data_path`` and ``test_data_path`` each take a path, a source
``{path: P, ids: [...]}`` (the examples of *P* whose ``id`` is listed, in the file's order: a split
written down once, e.g. ``import 'splits/amr_bio.json'``), or a list of these, read one after
another. An object of named data instead gives each its domain::

    validation_data_path: { little_prince: LP + 'dev.txt', bio: { path: BIO, ids: split.dev } },

Every example is tagged ``meta["domain"]``, and scores are reported for each domain beside the
whole (``validation_bio_smatch``, :func:`toolkit.evaluation.score`), so a parser trained on two
domains is measured on each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.data.dataset_readers import DatasetReader
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError


@dataclass(frozen=True)
class DataSource:
    """The examples of the file *path* (those whose id is in *ids*, if given), of the domain *domain*."""

    path: str
    ids: tuple[str, ...] | None = None
    domain: str | None = None

    def read(self, reader: DatasetReader) -> list[Example]:
        examples = reader.read(self.path, whole=self.ids is not None)
        if self.ids is not None:
            wanted = set(self.ids)
            found = {example.meta.get("id") for example in examples}
            if found <= {None}:
                raise ConfigurationError(f"{self.path}: its examples have no ids (a PENMAN file's '# ::id' gives them), so ids pick none")
            if missing := [graph_id for graph_id in self.ids if graph_id not in found]:
                raise ConfigurationError(f"{self.path} holds no example with the id {missing[0]!r} ({len(missing)} of {len(self.ids)} ids missing)")
            examples = [example for example in examples if example.meta.get("id") in wanted]
        if self.domain is not None:
            for example in examples:
                example.meta["domain"] = self.domain
        return examples


def data_sources(value: object, key: str) -> list[DataSource]:
    """The sources a config's *value* at *key* names (see the module docstring); a one-line error naming *key* otherwise."""
    if isinstance(value, dict) and value and "path" not in value:
        return [source for domain, named in value.items() for source in _sources(named, f"{key}.{domain}", domain)]
    return _sources(value, key, None)


def _sources(value: object, key: str, domain: str | None) -> list[DataSource]:
    if isinstance(value, str):
        return [DataSource(value, None, domain)]
    if isinstance(value, dict):
        if set(value) - {"path", "ids"} or not isinstance(value.get("path"), str):
            raise ConfigurationError(f"{key}: a source is {{path: FILE, ids: [ID, ...]}}, got keys {sorted(value)}")
        ids = value.get("ids")
        if ids is not None and (not isinstance(ids, list) or not ids or not all(isinstance(graph_id, str) for graph_id in ids)):
            raise ConfigurationError(f"{key}.ids: expected a non-empty list of ids (strings), got {ids!r}")
        return [DataSource(value["path"], tuple(ids) if ids is not None else None, domain)]
    if isinstance(value, list) and value:
        return [source for index, item in enumerate(value) for source in _sources(item, f"{key}[{index}]", domain)]
    raise ConfigurationError(f"{key}: expected a path, a source {{path, ids}}, a non-empty list of them, or an object of named ones, got {value!r}")


def read_sources(reader: DatasetReader, sources: Sequence[DataSource]) -> list[Example]:
    return [example for source in sources for example in source.read(reader)]
