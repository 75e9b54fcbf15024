"""Static word vectors of an installed spaCy pipeline (``en_core_web_md``'s 300-d vectors, say), frozen."""

import hashlib
from typing import Any

import numpy
import torch
from torch import nn

from toolkit.data.example import Example
from toolkit.data.language import Language
from toolkit.errors import ConfigurationError
from toolkit.from_params import PositiveInt, Probability
from toolkit.modules.dropout import Dropout
from toolkit.modules.token_embedders.token_embedder import TokenEmbedder, pad_lists
from toolkit.phrases.spacy_dependency import load_pipeline

UNKNOWN = -1  # the row of a word the table lacks: the learned unknown vector
# every component a pipeline may have: only its vocabulary (and vectors) is read
COMPONENTS = ["tok2vec", "tagger", "morphologizer", "parser", "attribute_ruler", "lemmatizer", "ner", "senter", "transformer"]


@TokenEmbedder.register("spacy_vectors")
class SpacyVectorsEmbedder(TokenEmbedder):
    """One fixed vector per word from a spaCy pipeline's vectors table, and one learned vector for words it lacks.

    # Parameters
    pipeline : an installed spaCy pipeline (package name or directory) that has vectors.
    lowercase : look a word up in lowercase (by the data's language's rules: training and archives
        give the ``language``) when its own form has no vector.
    projection_dim : a linear projection of the vectors to this width (None: the table's width).
    dropout : dropout on the word vectors.

    The table is read from the pipeline every time the embedder is built and never trained or
    archived; an archive records the pipeline's name, version and the table's SHA-256, and is
    refused if the installed pipeline differs.
    """

    def __init__(
        self,
        pipeline: str = "en_core_web_md",
        lowercase: bool = True,
        projection_dim: PositiveInt | None = None,
        dropout: Probability = 0.0,
        language: Language | None = None,
    ):
        super().__init__()
        nlp = load_pipeline(pipeline, COMPONENTS)
        vectors = nlp.vocab.vectors
        if vectors.shape[0] == 0 or vectors.shape[1] == 0:
            raise ConfigurationError(f"the spaCy pipeline {pipeline!r} has no word vectors", key="pipeline")
        table = numpy.ascontiguousarray(vectors.data, dtype=numpy.float32)
        self.pipeline, self.lowercase, self.vectors = pipeline, lowercase, vectors
        self.language = language or Language()
        self.source = {
            "spacy_pipeline": pipeline,
            "version": str(nlp.meta.get("version")),
            "vectors_sha256": hashlib.sha256(table.tobytes()).hexdigest(),
        }
        self.register_buffer("table", torch.from_numpy(table), persistent=False)  # never trained, never archived
        self.unknown = nn.Parameter(torch.zeros(table.shape[1]))
        self.projection = nn.Linear(table.shape[1], projection_dim) if projection_dim else None
        self.dropout = Dropout(dropout)
        self.output_dim = projection_dim or table.shape[1]

    def row(self, word: str) -> int:
        row = int(self.vectors.find(key=word))
        if row < 0 and self.lowercase and (lower := self.language.lower(word)) != word:
            row = int(self.vectors.find(key=lower))
        return row if row >= 0 else UNKNOWN

    def example_inputs(self, example: Example) -> dict[str, Any]:
        return {"rows": [self.row(word) for word in example.tokens]}

    def batch_inputs(self, inputs, num_tokens):
        return {"rows": pad_lists([item["rows"] for item in inputs], num_tokens, value=UNKNOWN)}

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        known = (rows != UNKNOWN).unsqueeze(-1)
        vectors = torch.where(known, self.table[rows.clamp(min=0)], self.unknown.to(self.table.dtype))
        if self.projection is not None:
            vectors = self.projection(vectors)
        return self.dropout(vectors) * mask.unsqueeze(-1).to(vectors.dtype)

    def pretrained_source(self) -> dict[str, Any]:
        return dict(self.source)

    def get_output_dim(self) -> int:
        return self.output_dim
