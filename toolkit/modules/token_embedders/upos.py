"""Universal POS tags as an input feature: the data's own (CoNLL-U), or spaCy's tagger's on raw text."""

from typing import Any, Literal

import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder, pad_lists

# The 17 tags of Universal Dependencies v2; 0 is padding, and any other tag is read as the last id.
UPOS_TAGS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")
TAG_IDS = {tag: i + 1 for i, tag in enumerate(UPOS_TAGS)}
OTHER = len(UPOS_TAGS) + 1


@TokenEmbedder.register("upos")
class UposEmbedder(TokenEmbedder):
    """A learned embedding of each word's UPOS tag.

    # Parameters
    embedding_dim : the width of a tag's embedding.
    source : where the tags come from. ``"data"``: the example's own (the ``conllu`` reader keeps
        them in ``meta["upos"]``, also when predicting from CoNLL-U); ``"spacy"``: spaCy's tagger on
        the words, always (the same tagger in training and prediction); ``"auto"``: the data's tags
        where an example has them, spaCy's otherwise (raw text).
    pipeline : the spaCy pipeline whose tagger is used (loaded the first time it is needed).
    dropout : dropout on the tag embeddings.

    The tag set is UD's, so the embedder needs no vocabulary and reads any treebank's tags.
    """

    def __init__(
        self,
        embedding_dim: PositiveInt = 32,
        source: Literal["data", "spacy", "auto"] = "auto",
        pipeline: str = "en_core_web_md",
        dropout: Probability = 0.0,
    ):
        super().__init__()
        if source not in ("data", "spacy", "auto"):
            raise ConfigurationError(f"must be 'data', 'spacy' or 'auto', got {source!r}", key="source")
        self.source, self.pipeline = source, pipeline
        self.embedding = nn.Embedding(OTHER + 1, embedding_dim, padding_idx=0)
        self.dropout = Dropout(dropout)
        self.nlp: Any = None
        self.cache: dict[tuple[str, ...], tuple[str, ...]] = {}

    def tags(self, example: Example) -> tuple[str, ...]:
        given = example.meta.get("upos")
        if self.source != "spacy" and given is not None and len(given) == len(example.tokens):
            return tuple(given)
        if self.source == "data":
            raise DataError(
                "the 'upos' token embedder (source: 'data') needs one UPOS tag per word, as CoNLL-U gives; "
                "this input has none (source: 'auto' tags it with spaCy)",
                example.meta.get("path"),
                example.meta.get("line"),
            )
        return self.spacy_tags(tuple(example.tokens))

    def spacy_tags(self, words: tuple[str, ...]) -> tuple[str, ...]:
        if words not in self.cache:
            if self.nlp is None:
                from toolkit.phrases.spacy_dependency import load_pipeline

                self.nlp = load_pipeline(self.pipeline, ["parser", "ner", "lemmatizer"], key="the 'upos' token embedder's pipeline")
            from spacy.tokens import Doc

            if len(self.cache) >= 200_000:
                self.cache.clear()
            self.cache[words] = tuple(token.pos_ for token in self.nlp(Doc(self.nlp.vocab, words=list(words))))
        return self.cache[words]

    def example_inputs(self, example: Example) -> dict[str, Any]:
        return {"tags": [TAG_IDS.get(tag, OTHER) for tag in self.tags(example)]}

    def batch_inputs(self, inputs, num_tokens):
        return {"tags": pad_lists([item["tags"] for item in inputs], num_tokens)}

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, tags: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.embedding(tags)) * mask.unsqueeze(-1).to(self.embedding.weight.dtype)

    def get_output_dim(self) -> int:
        return self.embedding.embedding_dim
