"""A spaCy pipeline component that parses with a toolkit archive.

Added to any pipeline::

    nlp = spacy.blank("en")                      # or any pipeline; a sentencizer first splits sentences
    nlp.add_pipe("toolkit_parser", config={"archive": "runs/ewt/model.tar.gz"})
    doc = nlp("The cat sat on the mat.")

- A **dependency** archive (a transition-system grammar) sets ``token.head`` and ``token.dep_``,
  so spaCy's own tools work on our parses: ``displacy.render(doc, style="dep")``, ``doc.sents``,
  and noun chunks when an earlier component tagged parts of speech (or the parser itself, one
  trained with ``grammar.tags``: it sets ``token.pos_`` and ``token.morph`` too). The root's
  relation is spaCy's ``ROOT``.
- An **AMR** archive sets ``doc._.amr``: the PENMAN graphs of the doc's sentences, separated by
  blank lines (one graph for a doc without sentence boundaries), and ``span._.amr`` per sentence.

Each sentence (or the whole doc, when nothing set sentence boundaries) is parsed as one input,
with spaCy's tokens as the words (a sentence longer than a dependency model can parse, in pieces
of as many words as it can, each with its own root); whitespace tokens hang from the word before them (``dep``), as
spaCy's own parser does. spaCy finds the factory through the ``spacy_factories`` entry point of
this package, so ``add_pipe`` works without importing the toolkit first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from predictors.amr import readable
from toolkit import load_predictor
from toolkit.errors import ConfigurationError
from transition_systems.amr.system import AmrTransitionSystem
from transition_systems.configuration import NO_LABEL
from transition_systems.transition_system import TransitionSystem

FACTORY = "toolkit_parser"
ROOT = "ROOT"  # spaCy's name for the root's relation
LOOSE = "dep"  # a whitespace token's, or a word's that decoding left unattached


@Language.factory(FACTORY, default_config={"archive": None, "device": "cpu", "beam_size": None, "batch_size": 32, "ensemble": []})
def make_toolkit_parser(
    nlp: Language, name: str, archive: str | None, device: str, beam_size: int | None, batch_size: int, ensemble: list[str]
) -> ToolkitParser:
    if not archive:
        raise ConfigurationError(f'the {FACTORY} component needs an archive: nlp.add_pipe("{FACTORY}", config={{"archive": PATH}})')
    return ToolkitParser(name, archive, device=device, beam_size=beam_size, batch_size=batch_size, ensemble=ensemble)


class ToolkitParser:
    """The component: see the module docstring."""

    def __init__(self, name: str, archive: str, device: str = "cpu", beam_size: int | None = None, batch_size: int = 32, ensemble: Sequence[str] = ()):
        self.name, self.batch_size = name, batch_size
        self.predictor = load_predictor(archive, device=device, beam_size=beam_size, ensemble=ensemble)
        grammar = self.predictor.model.grammar
        if isinstance(grammar, TransitionSystem):
            self.kind = "dependency"
        elif isinstance(grammar, AmrTransitionSystem):
            self.kind = "amr"
            for cls in (Doc, Span):
                if not cls.has_extension("amr"):
                    cls.set_extension("amr", default=None)
        else:
            raise ConfigurationError(f"the {FACTORY} component needs a dependency or AMR archive; {archive} has a {type(grammar).__name__} grammar")

    def __call__(self, doc: Doc) -> Doc:
        self.annotate([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        for batch in minibatch(docs, size=batch_size or self.batch_size):
            self.annotate(batch)
            yield from batch

    def annotate(self, docs: list[Doc]) -> None:
        """Parse every sentence of *docs* in one call to the model, then write the results back.

        A sentence longer than a dependency model can parse (``max_words``) is parsed in pieces of
        that many words, each with a root of its own, so that every word gets a head.
        """
        limit = getattr(self.predictor, "max_words", None) if self.kind == "dependency" else None
        pieces = [(doc, span, piece) for doc in docs for span in sentences(doc) for piece in split([token for token in span if not token.is_space], limit)]
        results = iter(self.predictor.predict_tokens([[token.text for token in piece] for _, _, piece in pieces if piece]))
        per_doc: dict[int, list[tuple[Span, list, object]]] = {}
        for doc, span, piece in pieces:
            per_doc.setdefault(id(doc), []).append((span, piece, next(results) if piece else None))
        for doc in docs:
            parsed = per_doc.get(id(doc), [])
            if self.kind == "dependency":
                self.set_trees(doc, parsed)
            else:
                self.set_graphs(doc, parsed)

    def set_trees(self, doc: Doc, parsed: list) -> None:
        heads = list(range(len(doc)))  # absolute; a token heading itself is a root
        deps = [LOOSE] * len(doc)
        for span, words, tree in parsed:
            upos, feats = getattr(tree, "upos", None), getattr(tree, "feats", None)  # a parser that tags (grammar.tags)
            for position, token in enumerate(words):
                if upos:
                    token.pos_ = upos[position]
                if feats:
                    token.set_morph("" if feats[position] == "_" else feats[position])
                head, label = tree.heads[position], tree.deprels[position]
                if head == 0 or label == NO_LABEL:
                    deps[token.i] = ROOT if head == 0 and label != NO_LABEL else LOOSE
                else:
                    heads[token.i], deps[token.i] = words[head - 1].i, label
            for token in span:
                if token.is_space:  # from the word before it, or after it at the start of a sentence
                    heads[token.i] = token.i - 1 if token.i > span.start else next((w.i for w in words), token.i)
        if doc:
            # spaCy's arrays are uint64: relative heads in two's complement, labels as string hashes,
            # half of which (those of obl:npmod, list, goeswith, ...) do not fit an int64
            offsets = numpy.array([head - i for i, head in enumerate(heads)], dtype="int64").astype("uint64")
            labels = numpy.array([doc.vocab.strings.add(dep) for dep in deps], dtype="uint64")
            doc.from_array([HEAD, DEP], numpy.stack([offsets, labels], axis=1))

    @staticmethod
    def set_graphs(doc: Doc, parsed: list) -> None:
        graphs = []
        for span, words, graph in parsed:
            span._.amr = readable(graph) if words else None
            if span._.amr is not None:
                graphs.append(span._.amr)
        doc._.amr = "\n\n".join(graphs) if graphs else None


def split(words: list, limit: int | None) -> list[list]:
    """*words* in consecutive pieces of at most *limit* (one piece, maybe empty, without a limit)."""
    if not limit or len(words) <= limit:
        return [words]
    return [words[start : start + limit] for start in range(0, len(words), limit)]


def sentences(doc: Doc) -> list[Span]:
    """The doc's sentences when something set their boundaries, else the whole doc as one."""
    return list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
