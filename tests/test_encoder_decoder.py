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


class AliasingGrammar(SequenceGrammar):
    """Reads ``state:t`` as itself plus ``city:t``, and names an alias the vocabulary lacks."""

    def input_aliases(self, symbols):
        return {"state:t": "city:t", "s0": "river:t"}


def test_an_aliased_symbol_is_read_as_itself_plus_its_alias_on_input_only():
    torch.manual_seed(0)
    grammar = AliasingGrammar()
    counters = {"tokens": Counter(t for e in EXAMPLES for t in e.tokens), "symbols": Counter(s for e in EXAMPLES for s in grammar.oracle(e))}
    vocab = Vocabulary(counters)
    model = EncoderDecoder(vocab, grammar, TransformerEncoder(16, SMALL), TransformerDecoder(16, SMALL), alias_inputs=True)
    ids = model.target_ids
    table, scale = model.target_embedding.weight, model.embedding_scale
    read = model.embed_symbols(torch.tensor([[ids["state:t"], ids["s0"], ids["city:t"]]]))
    assert torch.allclose(read[0, 0], (table[ids["state:t"]] + table[ids["city:t"]]) * scale)
    assert torch.allclose(read[0, 1], table[ids["s0"]] * scale)  # its alias is not a symbol of the vocabulary
    assert torch.allclose(read[0, 2], table[ids["city:t"]] * scale)  # an alias is one way: the common symbol reads as itself
    assert "input_alias" not in model.state_dict()  # rebuilt from the grammar, so archives stay as they were
    plain = EncoderDecoder(vocab, grammar, TransformerEncoder(16, SMALL), TransformerDecoder(16, SMALL))
    assert plain.input_alias is None


def test_amr_reads_a_date_and_a_typed_entity_as_the_concepts_they_make():
    from transition_systems.amr import AmrTransitionSystem

    symbols = ["DATE", "ENTITY:city", "PRED:city", "NAME", "COPY_LEMMA", "PRED:date-entity"]
    assert AmrTransitionSystem().input_aliases(symbols) == {"DATE": "PRED:date-entity", "ENTITY:city": "PRED:city"}
