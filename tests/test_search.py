"""Greedy and beam search on a tiny random model: equivalences a broken search would violate."""

from collections import Counter

import pytest
import torch

from toolkit.data.example import Example
from toolkit.data.vocabulary import Vocabulary
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.grammars import SequenceGrammar, State
from toolkit.models import EncoderDecoder
from toolkit.modules.decoders import TransformerDecoder
from toolkit.modules.encoders import TransformerEncoder
from toolkit.modules.transformer_settings import TransformerSettings

SYMBOLS = ["(", ")", "and", "or", "state:t", "city:t", "$0", "s0", "c0", "lambda", "e"]
SENTENCES = [["what", "state", "border", "s0"], ["citi", "in", "s0"], ["what", "is", "the", "largest", "citi", "in", "the", "state"]]


def tiny_model(grammar=None, seed=0) -> EncoderDecoder:
    torch.manual_seed(seed)
    words = Counter(word for sentence in SENTENCES for word in sentence)
    vocab = Vocabulary({"tokens": words, "symbols": Counter(SYMBOLS + [Vocabulary.EOS])})
    model = EncoderDecoder(
        vocab,
        grammar or SequenceGrammar(max_length=15),
        TransformerEncoder(16, layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, dropout=0.0)),
        TransformerDecoder(16, layers=TransformerSettings(num_layers=2, num_heads=2, ff_dim=32, dropout=0.0)),
    )
    return model.eval()


def examples():
    return [Example(sentence) for sentence in SENTENCES]


def test_incremental_steps_match_teacher_forcing():
    model = tiny_model()
    batch = {"source": torch.tensor([model.vocab.indices(SENTENCES[0], "tokens")])}
    prefix = torch.tensor([[Vocabulary.BOS_INDEX, 4, 5, 6, 7]])
    full = model.decode_step(prefix, model.start_decoding(batch, use_cache=False), [])[0]
    context = model.start_decoding(batch, use_cache=True)
    for t in range(1, prefix.size(1) + 1):
        step, context = model.decode_step(prefix[:, :t], context, [])
    assert torch.allclose(step, full, atol=1e-5)


@pytest.mark.parametrize("search", [GreedySearch(), BeamSearch(beam_size=3)])
def test_cache_does_not_change_predictions(search):
    model = tiny_model()
    cached = model.predict(examples(), search)
    search.use_cache = False
    assert model.predict(examples(), search) == cached


def test_beam_of_one_equals_greedy():
    for seed in range(3):
        model = tiny_model(seed=seed)
        assert model.predict(examples(), BeamSearch(beam_size=1, length_penalty=0.0)) == model.predict(examples(), GreedySearch())


@pytest.mark.parametrize("search", [GreedySearch(), BeamSearch(beam_size=4)])
def test_batching_does_not_leak_between_sentences(search):
    model = tiny_model(seed=1)
    together = model.predict(examples(), search)
    alone = [model.predict([example], search)[0] for example in examples()]
    assert together == alone


class AlternatingState(State):
    """Symbols alternate '(' and a predicate; at most 4 symbols, ends with EOS after a predicate."""

    def __init__(self, symbols=(), done=False):
        self.symbols, self.done = symbols, done

    def allowed(self):
        if self.done:
            return ()
        if not self.symbols or self.symbols[-1] != "(":
            return {"("} if len(self.symbols) < 4 and not self.symbols else {Vocabulary.EOS, "("} if len(self.symbols) < 4 else {Vocabulary.EOS}
        return {"state:t", "city:t"}

    def apply(self, symbol):
        return AlternatingState(self.symbols, True) if symbol == Vocabulary.EOS else AlternatingState(self.symbols + (symbol,))

    def is_final(self):
        return self.done

    def result(self):
        return " ".join(self.symbols)


class AlternatingGrammar(SequenceGrammar):
    def initial_state(self, example):
        return AlternatingState()


@pytest.mark.parametrize("search", [GreedySearch(), BeamSearch(beam_size=5)])
def test_search_only_emits_what_the_grammar_allows(search):
    model = tiny_model(AlternatingGrammar(), seed=2)
    for prediction in model.predict(examples(), search):
        symbols = prediction.split()
        assert 2 <= len(symbols) <= 4 and len(symbols) % 2 == 0
        assert symbols[0::2] == ["("] * (len(symbols) // 2)
        assert set(symbols[1::2]) <= {"state:t", "city:t"}


@pytest.mark.parametrize("search", [GreedySearch(), BeamSearch(beam_size=4)])
def test_bracketed_grammar_makes_even_a_random_model_balanced(search):
    from toolkit.grammars import BracketedGrammar
    from toolkit.metrics import parse_sexpr

    model = tiny_model(BracketedGrammar(max_length=9), seed=3)
    for prediction in model.predict(examples(), search):
        assert len(prediction.split()) <= 9
        parse_sexpr(prediction)  # raises on unbalanced brackets


def count_steps(model):
    """Wrap *model*.decode_step to count the steps a search takes."""
    calls = [0]
    decode_step = model.decode_step

    def counting(*args, **kwargs):
        calls[0] += 1
        return decode_step(*args, **kwargs)

    model.decode_step = counting
    return calls


@pytest.mark.parametrize("seed", range(4))
def test_early_stopping_keeps_the_raw_score_winner_and_saves_steps(seed):
    """Without a length penalty, stopping once the best hypothesis is finished cannot change the winner."""
    from toolkit.grammars import BracketedGrammar

    model = tiny_model(BracketedGrammar(max_length=15), seed=seed)
    calls = count_steps(model)
    exhaustive = model.predict(examples(), BeamSearch(beam_size=4, length_penalty=0.0, early_stopping=False))
    exhaustive_steps, calls[0] = calls[0], 0
    early = model.predict(examples(), BeamSearch(beam_size=4, length_penalty=0.0))
    assert early == exhaustive
    assert calls[0] <= exhaustive_steps


def end_or_go_on_model():
    """A tiny model whose every step ends with p = 0.6 or goes on with '(' with p = 0.4: its best output is the empty one."""
    model = tiny_model(SequenceGrammar(max_length=30))
    end, go_on = model.target_ids[Vocabulary.EOS], model.target_ids["("]

    def fixed_step(prefix, context, states):
        log_probs = torch.full((prefix.size(0), len(model.target_tokens)), float("-inf"))
        log_probs[:, end], log_probs[:, go_on] = torch.tensor(0.6).log(), torch.tensor(0.4).log()
        return log_probs, context

    model.decode_step = fixed_step
    return model


def test_early_stopping_ends_when_the_best_hypothesis_is_finished():
    """Every step: end with p = 0.6, go on with '(' with p = 0.4. The best hypothesis ends at once."""
    model = end_or_go_on_model()
    calls = count_steps(model)
    assert model.predict(examples()[:1], BeamSearch(beam_size=3, length_penalty=0.0)) == [""]
    assert calls[0] == 1  # the empty output finished first and no open hypothesis can beat it
    calls[0] = 0
    assert model.predict(examples()[:1], BeamSearch(beam_size=3, length_penalty=0.0, early_stopping=False)) == [""]
    assert calls[0] == 3  # waits until three finished hypotheses fill the beam
