"""Token <-> index maps, one per namespace, saved as plain text.

A namespace is one index space: ``"tokens"`` for source words, ``"symbols"`` for output symbols,
``"labels"`` for tags. Padded namespaces (the default) start with four specials so that index 0 is
always padding and unknown words have a home; non-padded namespaces (label sets) hold exactly the
tokens seen, and looking up an unseen one is an error rather than a silent UNK.

Namespace aliases let two names share one index, e.g. ``{"symbols": "tokens"}`` so that source and
target embeddings can be tied:

>>> vocab = Vocabulary({"tokens": {"a": 2}, "symbols": {"b": 1}}, namespace_aliases={"symbols": "tokens"})
>>> vocab.tokens("symbols")
['@@PADDING@@', '@@UNKNOWN@@', '@start@', '@end@', 'a', 'b']
>>> vocab.get_index("b", "tokens"), vocab.get_index("zzz", "symbols")
(5, 1)
"""

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from toolkit.data import symbols
from toolkit.errors import ArchiveError, ConfigurationError
from toolkit.files import parse_json

_META_FILE = "vocabulary.json"
SOURCE = "tokens"  # the namespace of source tokens
TARGET = "symbols"  # the namespace of a grammar's output symbols


class Vocabulary:
    """Namespaced token <-> index maps with deterministic construction and a text file format.

    Args:
        counters: per namespace, token counts (e.g. from a pass over the training data).
        min_count: per namespace, drop tokens seen fewer times than this.
        max_size: per namespace, keep at most this many tokens (specials not counted).
        non_padded_namespaces: names (or ``fnmatch`` patterns such as ``"*labels"``) of namespaces
            without specials.
        namespace_aliases: alias namespace -> canonical namespace; every method resolves aliases.

    Tokens are ordered by count descending, then alphabetically, so the same counts always give the
    same indices.
    """

    PAD, UNK, BOS, EOS = symbols.PAD, symbols.UNK, symbols.BOS, symbols.EOS
    PAD_INDEX, UNK_INDEX, BOS_INDEX, EOS_INDEX = 0, 1, 2, 3
    SPECIALS = (PAD, UNK, BOS, EOS)

    def __init__(
        self,
        counters: dict[str, Mapping[str, int]] | None = None,
        min_count: dict[str, int] | None = None,
        max_size: dict[str, int] | None = None,
        non_padded_namespaces: Iterable[str] = (),
        namespace_aliases: dict[str, str] | None = None,
    ) -> None:
        self._non_padded = list(non_padded_namespaces)
        self._aliases = dict(namespace_aliases or {})
        for alias, target in self._aliases.items():
            if target in self._aliases:
                raise ConfigurationError(
                    f"namespace_aliases: {alias!r} -> {target!r}, but {target!r} is itself an alias; point aliases at a canonical namespace"
                )
        self._index_to_token: dict[str, list[str]] = {}
        self._token_to_index: dict[str, dict[str, int]] = {}

        merged: dict[str, Counter[str]] = {}
        for namespace, counts in (counters or {}).items():
            merged.setdefault(self.canonical(namespace), Counter()).update(counts)
        min_count = {self.canonical(ns): n for ns, n in (min_count or {}).items()}
        max_size = {self.canonical(ns): n for ns, n in (max_size or {}).items()}
        for namespace, counts in merged.items():
            self._create(namespace)
            ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            kept = [token for token, count in ranked if count >= min_count.get(namespace, 1)]
            for token in kept[: max_size.get(namespace)]:
                self.add_token(token, namespace)

    def canonical(self, namespace: str) -> str:
        """The namespace that *namespace* is an alias of, or *namespace* itself."""
        return self._aliases.get(namespace, namespace)

    def is_padded(self, namespace: str) -> bool:
        """Whether *namespace* starts with the four specials (decided by its canonical name)."""
        namespace = self.canonical(namespace)
        return not any(fnmatchcase(namespace, pattern) for pattern in self._non_padded)

    def _create(self, namespace: str) -> None:
        """Create the canonical *namespace* (with specials if padded) unless it exists."""
        if namespace not in self._index_to_token:
            initial = list(self.SPECIALS) if self.is_padded(namespace) else []
            self._index_to_token[namespace] = initial
            self._token_to_index[namespace] = {token: i for i, token in enumerate(initial)}

    def _table(self, namespace: str) -> tuple[list[str], dict[str, int]]:
        """Read-only view of a namespace; one never filled looks as if just created (no side effect)."""
        namespace = self.canonical(namespace)
        if namespace in self._index_to_token:
            return self._index_to_token[namespace], self._token_to_index[namespace]
        initial = list(self.SPECIALS) if self.is_padded(namespace) else []
        return initial, {token: i for i, token in enumerate(initial)}

    def add_token(self, token: str, namespace: str = "tokens") -> int:
        """Add *token* to *namespace* if new; return its index."""
        namespace = self.canonical(namespace)
        self._create(namespace)
        index = self._token_to_index[namespace].get(token)
        if index is None:
            index = len(self._index_to_token[namespace])
            self._index_to_token[namespace].append(token)
            self._token_to_index[namespace][token] = index
        return index

    def get_index(self, token: str, namespace: str = "tokens") -> int:
        """Index of *token*; UNK in padded namespaces, ``KeyError`` in non-padded ones."""
        _, token_to_index = self._table(namespace)
        index = token_to_index.get(token)
        if index is not None:
            return index
        if self.is_padded(namespace):
            return self.UNK_INDEX
        raise KeyError(
            f"token {token!r} is not in the non-padded namespace {self.canonical(namespace)!r} ({len(token_to_index)} tokens), which has no unknown token"
        )

    def indices(self, tokens: Iterable[str], namespace: str = "tokens") -> list[int]:
        """``get_index`` for each of *tokens*."""
        return [self.get_index(token, namespace) for token in tokens]

    def get_token(self, index: int, namespace: str = "tokens") -> str:
        """Token at *index*; ``KeyError`` if out of range."""
        index_to_token, _ = self._table(namespace)
        if not 0 <= index < len(index_to_token):
            raise KeyError(f"index {index} is out of range for namespace {self.canonical(namespace)!r} of size {len(index_to_token)}")
        return index_to_token[index]

    def size(self, namespace: str = "tokens") -> int:
        """Number of indices in *namespace*, specials included."""
        return len(self._table(namespace)[0])

    def tokens(self, namespace: str = "tokens") -> list[str]:
        """All tokens of *namespace* in index order (a copy)."""
        return list(self._table(namespace)[0])

    def namespaces(self) -> list[str]:
        """The canonical namespaces that exist, in creation order."""
        return list(self._index_to_token)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self._index_to_token == other._index_to_token and self._non_padded == other._non_padded and self._aliases == other._aliases

    def __repr__(self) -> str:
        sizes = ", ".join(f"{ns}: {len(tokens)}" for ns, tokens in self._index_to_token.items())
        return f"Vocabulary({sizes})"

    def save(self, directory: str | Path) -> None:
        """Write ``<namespace>.txt`` (one token per line) per namespace plus ``vocabulary.json``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for namespace, tokens in self._index_to_token.items():
            if not _is_file_name(namespace):
                raise ConfigurationError(f"namespace {namespace!r} cannot be used as a file name")
            assert all("\n" not in token for token in tokens), f"a token in {namespace!r} contains a newline"
            text = "".join(token + "\n" for token in tokens)
            (directory / f"{namespace}.txt").write_text(text, encoding="utf-8", newline="")
        meta = {
            "namespaces": self.namespaces(),
            "non_padded_namespaces": self._non_padded,
            "namespace_aliases": self._aliases,
        }
        (directory / _META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> "Vocabulary":
        """Read a vocabulary written by :meth:`save`; ``ArchiveError`` if missing or corrupt."""
        directory = Path(directory)
        meta_path = directory / _META_FILE
        try:
            meta = parse_json(meta_path.read_bytes())
            vocab = cls(
                non_padded_namespaces=meta["non_padded_namespaces"],
                namespace_aliases=meta["namespace_aliases"],
            )
            namespaces = list(meta["namespaces"])
        except (OSError, ValueError, KeyError, TypeError, ConfigurationError) as error:
            raise ArchiveError(f"{meta_path}: cannot read vocabulary metadata: {error}") from error
        for namespace in namespaces:
            if not isinstance(namespace, str) or not _is_file_name(namespace):
                raise ArchiveError(f"{meta_path}: invalid namespace name {namespace!r}")
            path = directory / f"{namespace}.txt"
            try:
                with open(path, encoding="utf-8", newline="") as file:
                    text = file.read()
            except (OSError, UnicodeDecodeError) as error:
                raise ArchiveError(f"{path}: cannot read vocabulary namespace: {error}") from error
            if text and not text.endswith("\n"):
                raise ArchiveError(f"{path}: truncated (no newline after the last token)")
            tokens = text[:-1].split("\n") if text else []
            if len(set(tokens)) != len(tokens):
                raise ArchiveError(f"{path}: a token appears twice")
            if vocab.is_padded(namespace) and tuple(tokens[: len(cls.SPECIALS)]) != cls.SPECIALS:
                raise ArchiveError(f"{path}: a padded namespace must start with {list(cls.SPECIALS)}")
            vocab._index_to_token[namespace] = tokens
            vocab._token_to_index[namespace] = {token: i for i, token in enumerate(tokens)}
        return vocab


def _is_file_name(namespace: str) -> bool:
    """Whether ``<namespace>.txt`` stays inside the vocabulary directory."""
    return bool(namespace) and "/" not in namespace and "\\" not in namespace and not namespace.startswith(".")
