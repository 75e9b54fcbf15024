"""The encoder-decoder's options: embedding sharing and tying, source token dropout, indexing."""

from collections import Counter

import pytest
import torch

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.errors import ConfigurationError
from toolkit.grammars import SequenceGrammar
from toolkit.models import EncoderDecoder, Model
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings

SMALL = TransformerSettings(num_layers=1, num_heads=2, ff_dim=32, dropout=0.0)
EXAMPLES = [Example(["citi", "in", "s0"], "( city:t $0 )"), Example(["state", "s0"], "( state:t s0 )")]


def build(aliases=None, **options) -> EncoderDecoder:
    grammar = SequenceGrammar()
    counters = {"tokens": Counter(t for e in EXAMPLES for t in e.tokens), "symbols": Counter(s for e in EXAMPLES for s in grammar.oracle(e))}
    vocab = Vocabulary(counters, namespace_aliases=aliases)
    return EncoderDecoder(vocab, grammar, TransformerEncoder(16, SMALL), TransformerDecoder(16, SMALL), **options)


def test_shared_embeddings_need_one_namespace():
    with pytest.raises(ConfigurationError, match="namespace_aliases"):
        build(share_embeddings=True)
    model = build({"symbols": "tokens"}, share_embeddings=True)
    assert model.source_embedding is model.target_embedding
    assert model.output_projection.weight is model.target_embedding.weight


def test_untied_output_layer_is_its_own_parameter():
    model = build(tie_output_embeddings=False)
    assert model.output_projection.weight is not model.target_embedding.weight
    assert model.source_embedding is not model.target_embedding


def test_dimension_mismatch_is_a_config_error():
    grammar, vocab = SequenceGrammar(), Vocabulary({"tokens": {"a": 1}, "symbols": {"b": 1}})
    with pytest.raises(ConfigurationError, match="input_dim"):
        EncoderDecoder(vocab, grammar, TransformerEncoder(16, SMALL), TransformerDecoder(32, SMALL))


def test_index_and_collate_shift_targets_by_one():
    model = build()
    batch = model.collate([model.index(example) for example in EXAMPLES])
    symbols = model.vocab.tokens("symbols")
    assert [symbols[i] for i in batch["target_out"][0].tolist()] == ["(", "city:t", "$0", ")", Vocabulary.EOS]
    assert batch["target_in"][0, 0] == Vocabulary.BOS_INDEX
    assert torch.equal(batch["target_in"][:, 1:], batch["target_out"][:, :-1].masked_fill(batch["target_out"][:, :-1] == Vocabulary.EOS_INDEX, 0))
    assert batch["source"].shape == (2, 3) and batch["source"][1, 2] == Vocabulary.PAD_INDEX


def test_source_token_dropout_replaces_words_by_unknown_in_training_only():
    torch.manual_seed(0)
    model = build(source_token_dropout=1.0)
    batch = model.collate([model.index(example) for example in EXAMPLES])
    unknown = batch["source"].masked_fill(batch["source"] != Vocabulary.PAD_INDEX, Vocabulary.UNK_INDEX)
    model.train()
    model.encoder.eval()  # no other dropout in this check
    seen = {}
    model.encoder.register_forward_hook(lambda module, args, output: seen.setdefault("source", args[0]))
    model(batch)
    expected = model.source_embedding(unknown) * model.embedding_scale
    assert torch.equal(seen.pop("source"), expected)
    model.eval()
    model(batch)
    assert torch.equal(seen.pop("source"), model.source_embedding(batch["source"]) * model.embedding_scale)


def test_model_builds_from_a_config_with_extras():
    model = build()
    built = Model.from_params(
        {
            "encoder": {"input_dim": 16, "layers": {"num_layers": 1}},
            "decoder": {"input_dim": 16, "layers": {"num_layers": 1}},
            "search": {"type": "beam", "beam_size": 2},
        },
        vocab=model.vocab,
        grammar=model.grammar,
    )
    assert isinstance(built, EncoderDecoder) and built.search.beam_size == 2


@pytest.mark.parametrize(
    ("grammar", "decoder", "message"),
    [
        ({"type": "sequence"}, {"type": "state_mlp"}, "'state_mlp' decoder reads the grammar state's buffer and stack, which grammar 'sequence'"),
        (
            {"type": "bracketed"},
            {"type": "stack_transformer"},
            "'stack_transformer' decoder reads .* grammars that do: amr, .*arc_standard, arc_swap",
        ),
        (
            {"type": "arc_standard"},
            {"type": "transformer", "positional_encoding": {"type": "tree"}},
            "reads the grammar state's path, .* grammars that do: lcrs_bfs, lcrs_dfs, nary_dfs",
        ),
    ],
)
def test_a_decoder_that_reads_what_the_grammar_does_not_give_is_refused_at_once(grammar, decoder, message):
    from toolkit.grammars import Grammar
    from toolkit.plugins import import_builtin_components

    import_builtin_components()
    vocab = Vocabulary({"tokens": Counter(t for e in EXAMPLES for t in e.tokens), "symbols": Counter(["SHIFT"])})
    with pytest.raises(ConfigurationError, match=message) as error:
        Model.from_params(
            {"type": "encoder_decoder", "encoder": {"type": "transformer", "input_dim": 16}, "decoder": {"input_dim": 16, **decoder}},
            vocab=vocab,
            grammar=Grammar.from_params(grammar),
        )
    assert "decoder.type" in str(error.value)
