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


# ------------------------------------------------------------------ a wide beam is bounded by what the grammar makes, and by memory


def count_rows(model):
    """Wrap *model*.decode_step to record the rows (hypotheses) of each step."""
    rows: list[int] = []
    decode_step = model.decode_step

    def counting(prefix, *args, **kwargs):
        rows.append(prefix.size(0))
        return decode_step(prefix, *args, **kwargs)

    model.decode_step = counting
    return rows


def count_is_final(monkeypatch):
    """Count the grammar-state questions a search asks (``AlternatingState.is_final``): its work per hypothesis held."""
    calls = [0]
    original = AlternatingState.is_final

    def counting(self):
        calls[0] += 1
        return original(self)

    monkeypatch.setattr(AlternatingState, "is_final", counting)
    return calls


ALTERNATING_OUTPUTS = [["(", p] for p in ("state:t", "city:t")] + [["(", p, "(", q] for p in ("state:t", "city:t") for q in ("state:t", "city:t")]


@torch.no_grad()
def exhaustive_best(model, sentence, length_penalty):
    """The best of AlternatingGrammar's six outputs by the beam's own score: the sum of the model's
    log-probabilities of its symbols and the end (each masked by what the grammar allowed), over GNMT's lp.
    """
    batch = model.decoding_batch([Example(sentence)])
    best, best_score = None, float("-inf")
    for output in ALTERNATING_OUTPUTS:
        state, score, prefix = AlternatingState(), 0.0, [Vocabulary.BOS_INDEX]
        for symbol in [*output, Vocabulary.EOS]:
            context = model.start_decoding(batch, use_cache=False)
            log_probs, _ = model.decode_step(torch.tensor([prefix]), context, [state])
            assert symbol in state.allowed()
            score += float(log_probs[0, model.target_ids[symbol]])
            state, prefix = state.apply(symbol), [*prefix, model.target_ids[symbol]]
        penalised = score / ((5.0 + len(output) + 1) / 6.0) ** length_penalty
        if penalised > best_score:
            best, best_score = " ".join(output), penalised
    return best


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_a_beam_wider_than_the_grammar_s_outputs_is_exact_and_holds_only_what_exists(seed, length_penalty, monkeypatch):
    """AlternatingGrammar makes six outputs through at most four open prefixes: a beam of 100,000 decodes at
    most four hypotheses a sentence at any step, and finds the best of the six, as enumerating them does.
    """
    model = tiny_model(AlternatingGrammar(), seed=seed)
    rows = count_rows(model)
    asked = count_is_final(monkeypatch)
    found = model.predict(examples(), BeamSearch(beam_size=100_000, length_penalty=length_penalty))
    assert found == [exhaustive_best(model, sentence, length_penalty) for sentence in SENTENCES]
    assert rows[0] == len(SENTENCES) and max(rows) <= 4 * len(SENTENCES)
    wide, asked[0] = asked[0], 0
    assert model.predict(examples(), BeamSearch(beam_size=10, length_penalty=length_penalty)) == found
    assert wide == asked[0]  # the same work: the beam of 100,000 never held more hypotheses than the one of 10


def test_the_beam_widens_only_as_far_as_the_candidates_go():
    """SequenceGrammar over 11 symbols and the end: the first step decodes one hypothesis a sentence, the
    second 11 (one per symbol the first chose but the end, which finished its hypothesis), then at most the beam.
    """
    model = tiny_model(SequenceGrammar(max_length=6), seed=1)
    rows = count_rows(model)
    model.predict(examples()[:1], BeamSearch(beam_size=50, early_stopping=False))
    assert rows[:2] == [1, len(SYMBOLS)] and max(rows) <= 50


def test_the_context_s_bytes_per_input_are_its_keys_values_and_mask():
    """tiny_model's decoder: 2 layers, each with keys and values of (2 heads x 8) floats per source position, and a bool mask."""
    from toolkit.decoding.memory import row_bytes

    model = tiny_model()
    batch = model.decoding_batch(examples())
    positions = batch["source"].size(1)
    assert row_bytes(model.start_decoding(batch, use_cache=True), len(SENTENCES)) == 2 * 2 * 16 * 4 * positions + positions
    assert row_bytes(model.start_decoding(batch, use_cache=False), len(SENTENCES)) == 16 * 4 * positions + positions  # the encoded source


def test_a_beam_that_cannot_fit_is_refused_in_one_line_before_it_grows(monkeypatch):
    """With 8 MB free, a beam of a million is refused at the step that would widen it past what fits, naming
    the widest beam that does; that beam decodes, and no step ever held more hypotheses than fit.
    """
    from toolkit.decoding import beam as beam_module
    from toolkit.errors import ConfigurationError

    monkeypatch.setattr(beam_module, "free_bytes", lambda device: 8 << 20)
    model = tiny_model(SequenceGrammar(max_length=15), seed=2)
    rows = count_rows(model)
    with pytest.raises(ConfigurationError) as refused:
        model.predict(examples()[:1], BeamSearch(beam_size=1_000_000))
    message = str(refused.value)
    assert message.startswith("a beam of 1,000,000 (beam_size, --beam-size) does not fit in memory: ") and "\n" not in message
    fits = int(message.rsplit("a beam of at most ", 1)[1].split()[0].replace(",", ""))
    assert 100 < fits < 1000 and max(rows) <= fits
    rows.clear()
    model.predict(examples()[:1], BeamSearch(beam_size=fits))
    assert fits // 2 < max(rows) <= fits  # as wide as it may be (less the hypotheses that ended)


def test_an_allocation_that_fails_is_one_line_and_other_errors_are_not_hidden():
    from toolkit.errors import ConfigurationError

    model = tiny_model()

    def failing(message):
        def step(*args, **kwargs):
            raise RuntimeError(message)

        return step

    model.decode_step = failing("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8589934592 bytes. Error code 12")
    with pytest.raises(
        ConfigurationError, match=r"^decoding 3 input\(s\) ran out of memory with a beam of 30,000 \(beam_size, --beam-size\): a smaller beam needs less$"
    ):
        model.predict(examples(), BeamSearch(beam_size=30_000))
    model.decode_step = failing("shape mismatch")
    with pytest.raises(RuntimeError, match="shape mismatch"):
        model.predict(examples(), BeamSearch(beam_size=3))


def test_decoding_a_data_set_shows_its_progress_only_where_asked(monkeypatch):
    """The test set's decoding at the end of `train` has a progress bar (``trainer.progress_bar``), counted in inputs."""
    import toolkit.evaluation as evaluation

    bars = []

    class Bar:
        def __init__(self, total, disable, **_):
            self.total, self.disable, self.done = total, disable, 0
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return False

        def update(self, count):
            self.done += count

    monkeypatch.setattr(evaluation, "tqdm", Bar)
    model = tiny_model()
    shown = evaluation.predict(model, examples(), max_tokens=8, search=GreedySearch(max_steps=5), progress=True)
    hidden = evaluation.predict(model, examples(), max_tokens=8, search=GreedySearch(max_steps=5))
    assert shown == hidden
    assert [(bar.total, bar.done, bar.disable) for bar in bars] == [(3, 3, None), (3, 3, True)]  # None: on a terminal only, as training's bar
