import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.batching import TokenBudgetBatchSampler
from toolkit.errors import ConfigurationError


def flat(batches):
    return sorted(i for batch in batches for i in batch)


class TestDeterministic:
    def test_sorted_batches_hand_checked(self):
        lengths = [5, 1, 3, 2, 4, 10]
        sampler = TokenBudgetBatchSampler(lengths, max_tokens=8, shuffle=False)
        # sorted (index:length) 1:1 3:2 2:3 4:4 0:5 5:10; adding 2 to [1, 3] costs 3*3 = 9 > 8, and so on
        assert list(sampler) == [[1, 3], [2, 4], [0], [5]]
        assert len(sampler) == 4

    def test_long_example_gets_own_batch(self):
        sampler = TokenBudgetBatchSampler([1, 100, 1], max_tokens=10, shuffle=False)
        assert list(sampler) == [[0, 2], [1]]

    def test_max_examples(self):
        sampler = TokenBudgetBatchSampler([1] * 7, max_tokens=100, max_examples=3, shuffle=False)
        assert list(sampler) == [[0, 1, 2], [3, 4, 5], [6]]

    def test_ties_keep_index_order(self):
        assert list(TokenBudgetBatchSampler([2, 2, 2, 2], max_tokens=4, shuffle=False)) == [[0, 1], [2, 3]]

    def test_empty(self):
        sampler = TokenBudgetBatchSampler([], max_tokens=4)
        assert list(sampler) == [] and len(sampler) == 0

    @pytest.mark.parametrize("kwargs", [{"max_tokens": 0}, {"max_examples": 0}, {"padding_noise": 1.0}, {"seed": -1}])
    def test_bad_arguments(self, kwargs):
        with pytest.raises(ConfigurationError):
            TokenBudgetBatchSampler([1, 2], **{"max_tokens": 4, **kwargs})


class TestEpochs:
    lengths = tuple(np.random.default_rng(1).integers(1, 40, size=300))

    def test_epoch_is_pure_function_of_seed_and_epoch(self):
        first = TokenBudgetBatchSampler(self.lengths, max_tokens=120, seed=7)
        second = TokenBudgetBatchSampler(self.lengths, max_tokens=120, seed=7)
        first.set_epoch(3)
        epoch3 = list(first)
        assert list(first) == epoch3  # iterating again does not advance
        second.set_epoch(1)
        list(second)
        second.set_epoch(3)
        assert list(second) == epoch3

    def test_epochs_and_seeds_differ(self):
        sampler = TokenBudgetBatchSampler(self.lengths, max_tokens=120, seed=7)
        epoch0 = list(sampler)
        sampler.set_epoch(1)
        assert list(sampler) != epoch0
        assert list(TokenBudgetBatchSampler(self.lengths, max_tokens=120, seed=8)) != epoch0

    def test_shuffled_batches_have_little_padding(self):
        lengths = np.asarray(self.lengths)
        batches = list(TokenBudgetBatchSampler(lengths, max_tokens=120, seed=0, padding_noise=0.1))
        padded = sum(len(batch) * lengths[batch].max() for batch in batches)
        assert padded / lengths.sum() < 1.25


@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 50), max_size=80),
    max_tokens=st.integers(1, 200),
    max_examples=st.none() | st.integers(1, 10),
    shuffle=st.booleans(),
    seed=st.integers(0, 2**32),
    epoch=st.integers(0, 5),
    noise=st.floats(0, 0.5),
)
def test_properties(lengths, max_tokens, max_examples, shuffle, seed, epoch, noise):
    sampler = TokenBudgetBatchSampler(lengths, max_tokens, max_examples, shuffle, seed, noise)
    sampler.set_epoch(epoch)
    batches = list(sampler)
    assert flat(batches) == list(range(len(lengths)))
    assert len(sampler) == len(batches)
    for batch in batches:
        assert batch
        if len(batch) > 1:
            assert len(batch) * max(max(lengths[i] for i in batch), 1) <= max_tokens
        if max_examples is not None:
            assert len(batch) <= max_examples
    if not shuffle:
        order = [i for batch in batches for i in batch]
        assert [lengths[i] for i in order] == sorted(lengths)


def test_predict_sizes_batches_by_hypotheses_and_keeps_the_input_order():
    """A beam of k decodes k rows per sentence, so its batches hold k times fewer sentences; outputs come back in input order."""
    from toolkit.data.example import Example
    from toolkit.decoding import BeamSearch, GreedySearch
    from toolkit.evaluation import predict

    class Recorder:
        search = GreedySearch()

        def __init__(self):
            self.batches = []

        def eval(self):
            return self

        def predict(self, examples, search=None):
            self.batches.append(len(examples))
            return [" ".join(example.tokens) for example in examples]

    examples = [Example(["w"] * length) for length in (4, 1, 3, 2) * 5]  # 20 sentences, 50 tokens
    for search, beam, sizes in ((None, 1, [20]), (GreedySearch(), 1, [20]), (BeamSearch(beam_size=4), 4, [10, 5, 5])):
        model = Recorder()
        assert predict(model, examples, max_tokens=80, search=search) == [" ".join(example.tokens) for example in examples]
        assert model.batches == sizes, beam  # greedy: 20 sentences of at most 4 words fit 80; a beam of 4 has 20: 10 of <= 2 words, 5 of 3, 5 of 4
    model = Recorder()
    model.search = BeamSearch(beam_size=4)  # the model's own search counts too
    predict(model, examples, max_tokens=80)
    assert model.batches == [10, 5, 5]


def test_length_groups_keep_each_group_within_a_quarter_of_its_longest():
    from toolkit.data.batching import length_groups

    assert length_groups([10, 2, 9, 3, 8]) == [[0, 2, 4], [3], [1]]
    assert length_groups([4, 4, 4]) == [[0, 1, 2]]
    assert length_groups([]) == []


@given(st.lists(st.integers(1, 60), min_size=1, max_size=80))
def test_length_groups_cover_every_index_once_longest_first(lengths):
    from toolkit.data.batching import length_groups

    groups = length_groups(lengths)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))
    firsts = [lengths[group[0]] for group in groups]
    assert firsts == sorted(firsts, reverse=True)
    assert all(0.75 * lengths[group[0]] <= lengths[i] <= lengths[group[0]] for group in groups for i in group)


def test_predict_halves_a_batch_that_a_beam_cannot_decode_at_once_and_keeps_the_order():
    """A beam too wide for a batch's inputs together is decoded on halves of it until it fits;
    one input that does not fit is still the error.
    """
    from toolkit.data.example import Example
    from toolkit.decoding import BeamSearch
    from toolkit.decoding.beam import BeamTooWide
    from toolkit.evaluation import predict

    class Tight:
        search = BeamSearch(beam_size=4)

        def __init__(self, fits):
            self.fits, self.batches = fits, []

        def eval(self):
            return self

        def predict(self, examples, search=None):
            if len(examples) > self.fits:
                raise BeamTooWide(f"{len(examples)} do not fit")
            self.batches.append(len(examples))
            return [" ".join(example.tokens) for example in examples]

    examples = [Example([f"w{i}"] * (1 + i % 3)) for i in range(10)]
    model = Tight(fits=3)
    assert predict(model, examples, max_tokens=10_000) == [" ".join(example.tokens) for example in examples]
    assert sum(model.batches) == 10 and max(model.batches) <= 3
    with pytest.raises(BeamTooWide):
        predict(Tight(fits=0), examples[:2], max_tokens=10_000)
