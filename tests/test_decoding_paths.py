"""Every grammar on a small random model: the fast decoding paths give what the plain ones give.

The plain paths, written here as they were before decoding was made fast: a beam search that
keeps every sentence in the batch until all are done, and a greedy search that never drops a
finished row. The fast ones drop finished sentences, keep the self-attention cache preallocated
(copying only the rows a beam step moves), and build AMR masks from symbol ids.
"""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import data_root
from toolkit.data.dataset_readers import DatasetReader
from toolkit.decoding import BeamSearch, GreedySearch
from toolkit.decoding.search import as_rows
from toolkit.grammars import Grammar
from toolkit.models import Model
from toolkit.plugins import import_builtin_components
from toolkit.training.train import build_vocabulary

import_builtin_components()


class PlainBeam(BeamSearch):
    """The beam search without dropping finished sentences: they extend by padding, at no cost, until all are done."""

    def search(self, model, batch, states):
        batch_size, beam = len(states), self.beam_size
        rows = torch.arange(batch_size).repeat_interleave(beam)
        context = model.start_decoding(batch, self.use_cache).reorder(rows)
        hypotheses = [state for state in states for _ in range(beam)]
        scores = torch.full((batch_size, beam), float("-inf"))
        scores[:, 0] = 0.0
        lengths = torch.zeros(batch_size * beam)
        prefix = torch.full((batch_size * beam, 1), model.bos_index, dtype=torch.long)
        for _ in range(self.max_steps):
            final = torch.tensor([h.is_final() for h in hypotheses])
            done = final.view(batch_size, beam).gather(1, scores.argmax(dim=1, keepdim=True))
            scores = scores.masked_fill(done & ~final.view(batch_size, beam), float("-inf"))
            if all(f or not a for f, a in zip(final.tolist(), torch.isfinite(scores.view(-1)).tolist())):
                break
            log_probs, context = model.decode_step(prefix, context, hypotheses)
            log_probs = log_probs.float().masked_fill(~model.allowed_mask(hypotheses), float("-inf"))
            log_probs[final] = float("-inf")
            log_probs[final, model.pad_index] = 0.0
            vocab_size = log_probs.size(-1)
            scores, chosen = (scores.view(-1, 1) + log_probs).view(batch_size, beam * vocab_size).topk(beam, dim=-1)
            source = (torch.arange(batch_size)[:, None] * beam + chosen // vocab_size).view(-1)
            symbols = model.symbols((chosen % vocab_size).view(-1).tolist())
            finite, was_final = torch.isfinite(scores.view(-1)).tolist(), final[source].tolist()
            hypotheses = [hypotheses[s] if was_final[i] or not finite[i] else hypotheses[s].apply(symbols[i]) for i, s in enumerate(source.tolist())]
            lengths = lengths[source] + (~final[source]).float()
            prefix = torch.cat([prefix[source], (chosen % vocab_size).view(-1, 1)], dim=1)
            context = context.reorder(source, same_sources=True)
        final = torch.tensor([h.is_final() for h in hypotheses]).view(batch_size, beam)
        ranked = (scores / ((5.0 + lengths.view(batch_size, beam)) / 6.0) ** self.length_penalty).masked_fill(~final, float("-inf"))
        best = torch.where(final.any(dim=1, keepdim=True), ranked, scores).argmax(dim=-1)
        return [hypotheses[b * beam + k] for b, k in enumerate(best.tolist())]


class PlainGreedy(GreedySearch):
    """Greedy search over every row at every step; a finished state only takes padding."""

    def search(self, model, batch, states):
        states = list(states)
        context = model.start_decoding(batch, self.use_cache)
        prefix = torch.full((len(states), 1), model.bos_index, dtype=torch.long)
        for _ in range(self.max_steps):
            if all(state.is_final() for state in states):
                break
            log_probs, context = model.decode_step(prefix, context, states)
            best = log_probs.masked_fill(~model.allowed_mask(states), float("-inf")).argmax(dim=-1)
            states = [state if state.is_final() else state.apply(symbol) for state, symbol in zip(states, model.symbols(best.tolist()))]
            prefix = torch.cat([prefix, best[:, None]], dim=1)
        return states


SMALL = {"input_dim": 16, "layers": {"num_layers": 2, "num_heads": 2, "ff_dim": 32, "dropout": 0.0}}
GEO = ("geo", "train.txt", {"type": "tsv"})
EWT = ("ud-english-ewt", "en_ewt-ud-dev.conllu", {"type": "conllu"})
AMR = ("amr-little-prince", "amr-bank-struct-v3.0-dev.txt", {"type": "penman"})
TREE = {"type": "transformer", "positional_encoding": {"type": "tree", "degree": 2}}
# grammar, data, decoder, whether the decoder also decodes without the cache
CASES = {
    "sequence": ({"type": "sequence"}, GEO, {"type": "transformer"}, True),
    "bracketed": ({"type": "bracketed"}, GEO, {"type": "transformer"}, True),
    "lcrs_dfs": ({"type": "lcrs_dfs", "max_nodes": 40}, GEO, TREE, False),
    "lcrs_bfs": ({"type": "lcrs_bfs", "max_nodes": 40}, GEO, TREE, False),
    "nary_dfs": ({"type": "nary_dfs", "max_nodes": 40, "max_degree": 4}, GEO, {**TREE, "positional_encoding": {"type": "tree", "degree": 4}}, False),
    "arc_standard": ({"type": "arc_standard"}, EWT, {"type": "stack_transformer"}, False),
    "arc_hybrid": ({"type": "arc_hybrid"}, EWT, {"type": "stack_transformer"}, False),
    "arc_swap": ({"type": "arc_swap"}, EWT, {"type": "stack_transformer"}, False),
    "amr": ({"type": "amr", "max_actions_per_token": 3.0}, AMR, {"type": "stack_transformer"}, False),
    "arc_standard, state_mlp": ({"type": "arc_standard"}, EWT, {"type": "state_mlp", "input_dim": 16, "dropout": 0.0}, False),
    "arc_swap, state_mlp": ({"type": "arc_swap"}, EWT, {"type": "state_mlp", "input_dim": 16, "stack": 2, "buffer": 2, "dropout": 0.0}, False),
    "amr, state_mlp": ({"type": "amr", "max_actions_per_token": 3.0}, AMR, {"type": "state_mlp", "input_dim": 16, "dropout": 0.0}, False),
}


def tiny_model(name: str, seed: int = 0):
    """A random 2+2-layer, width-16 parser for grammar *name*, its vocabulary from a few real examples."""
    grammar_params, (folder, file, reader), decoder, _ = CASES[name]
    path = data_root() / folder / file
    if not path.exists():
        pytest.skip(f"{path} not found")
    examples = [e for e in DatasetReader.from_params({**reader, "max_examples": 12}).read(path) if len(e.tokens) <= 14][:6]
    grammar = Grammar.from_params(dict(grammar_params))
    grammar.fit(examples)
    examples = [e for e in examples if not grammar.skips(e)]
    torch.manual_seed(seed)
    decoder = decoder if decoder["type"] == "state_mlp" else {**SMALL, **decoder}  # state_mlp has no layers
    model = Model.from_params(
        {"type": "encoder_decoder", "encoder": {"type": "transformer", **SMALL}, "decoder": decoder, "label_smoothing": 0.0},
        vocab=build_vocabulary(examples, grammar),
        grammar=grammar,
    )
    return model.eval(), examples


@pytest.mark.parametrize("name", CASES)
def test_fast_and_plain_searches_agree_on_every_grammar(name):
    model, examples = tiny_model(name)
    for fast, plain in ((BeamSearch(beam_size=4, max_steps=80), PlainBeam(beam_size=4, max_steps=80)), (GreedySearch(max_steps=80), PlainGreedy(max_steps=80))):
        assert model.predict(examples, fast) == model.predict(examples, plain)
        if CASES[name][3]:
            fast.use_cache = False
            assert model.predict(examples, fast) == model.predict(examples, plain)


@pytest.mark.parametrize("steps", [1, 2])
def test_attention_over_the_cache_block_equals_attention_over_the_written_positions(steps):
    """Attention reads each layer's whole (N, H, capacity, d) block; stale keys and values past the written ones change nothing."""
    from toolkit.modules.attention import MultiHeadAttention
    from toolkit.modules.decoders.decoder import SelfAttentionCache

    torch.manual_seed(0)
    attention = MultiHeadAttention(16, 4).eval()
    cache = SelfAttentionCache(layers=1, capacity=3)
    for turn in range(4):  # grows twice, and reorders into its spare buffer and back
        query = torch.randn(6, steps, 16)
        new_keys, new_values = attention.project_keys_values(query)
        keys, values, end = cache.extend(0, new_keys, new_values)
        assert keys.is_contiguous() and keys.size(2) == cache.capacity >= end
        expected = attention.attend(query, keys[:, :, :end], values[:, :, :end])
        torch.testing.assert_close(attention.attend_prefix(query, keys, values, end), expected)
        if turn == 3:  # unwritten keys may be anything (fresh memory); unwritten values only finite
            assert end < cache.capacity
            keys[:, :, end:], values[:, :, end:] = float("nan"), 1e30
            torch.testing.assert_close(attention.attend_prefix(query, keys, values, end), expected)
        cache.advance(steps)
        cache.reorder(torch.tensor([5, 4, 3, 2, 1, 0]))  # every row moves: into the spare buffer, whose tail is stale
    records = []
    attention.recorder = lambda module, probabilities: records.append(probabilities)
    attention.attend_prefix(query, keys, values, end)
    assert records[0].shape == (6, 4, steps, end)  # what `toolkit visualize` draws: the written positions only


def test_the_cache_copies_only_moved_rows_and_keeps_the_others():
    """A reorder that moves few rows writes in place; one that moves most swaps buffers; both give index_select's rows."""
    from toolkit.modules.decoders.decoder import SelfAttentionCache

    cache = SelfAttentionCache(layers=2, capacity=2)
    for _ in range(3):  # grows past its capacity
        for layer in range(2):
            keys = torch.randn(5, 2, 1, 4)
            cache.extend(layer, keys, keys + 1)
        cache.advance(1)
    assert cache.capacity == 4 and cache.length == 3
    for index in ([0, 1, 1, 3, 4], [4, 3, 2, 0, 0], [2, 2]):  # one moved row, most rows, fewer rows
        before = cache.buffer[..., :3, :].clone()
        cache.reorder(torch.tensor(index))
        torch.testing.assert_close(cache.buffer[..., :3, :], before[:, :, index], rtol=0, atol=0)


def test_a_shrinking_batch_moves_its_few_changed_rows_in_the_same_storage():
    from toolkit.modules.decoders.decoder import SelfAttentionCache, take_rows

    cache = SelfAttentionCache(layers=1, capacity=4)
    keys = torch.randn(6, 2, 3, 4)
    cache.extend(0, keys, -keys)
    cache.advance(3)
    storage, before = cache.buffer.data_ptr(), cache.buffer[..., :3, :].clone()
    cache.reorder(torch.tensor([0, 5, 2, 3]))  # rows 1 and 4 finished; the last row takes row 1's place
    assert cache.buffer.data_ptr() == storage and cache.buffer.size(SelfAttentionCache.ROWS) == 4
    torch.testing.assert_close(cache.buffer[..., :3, :], before[:, :, [0, 5, 2, 3]], rtol=0, atol=0)
    memory = torch.randn(6, 5)
    expected = memory[[0, 5, 2, 3]].clone()
    assert torch.equal(take_rows(memory, torch.tensor([0, 5, 2, 3])), expected)
    assert torch.equal(take_rows(torch.arange(6.0), torch.tensor([5, 4, 3, 2, 1])), torch.tensor([5.0, 4, 3, 2, 1]))  # most move: a copy


@pytest.mark.parametrize(
    ("keep", "batch"),
    [([0, 1, 3, 5, 6], [0, 1, 6, 3, 5]), ([1, 2, 3], [3, 1, 2]), ([0, 1, 2], [0, 1, 2]), ([4], [4]), ([0, 2, 4, 5, 7, 8, 9], [0, 9, 2, 8, 4, 5, 7])],
)
def test_greedy_fills_finished_rows_from_the_end(keep, batch):
    from toolkit.decoding.greedy import fill_from_the_end

    assert fill_from_the_end(keep) == batch


@given(st.sets(st.integers(0, 40), min_size=1))
def test_filling_from_the_end_keeps_every_row_and_moves_one_per_hole(rows):
    from toolkit.decoding.greedy import fill_from_the_end

    keep = sorted(rows)
    batch = fill_from_the_end(keep)
    assert sorted(batch) == keep
    moved = [position for position, row in enumerate(batch) if row != position]
    assert len(moved) == sum(1 for position in range(len(keep)) if position not in rows)


@pytest.mark.parametrize("name", ["arc_standard", "arc_standard, state_mlp", "amr"])
def test_packed_and_padded_encoding_decode_alike(name, monkeypatch):
    """In inference the encoder runs its position-wise layers on the words alone: the same states at every word, the same outputs."""
    from toolkit.modules.encoders.transformer import TransformerEncoderLayer

    model, examples = tiny_model(name)
    batch = model.decoding_batch(examples)
    assert not bool((batch["source"] != model.pad_index).all())  # the batch has padding to leave out
    packed, mask = model.encode(batch["source"], batch)
    packed_outputs = {search: model.predict(examples, search) for search in (GreedySearch(max_steps=80), BeamSearch(beam_size=3, max_steps=80))}
    monkeypatch.setattr(TransformerEncoderLayer, "packs", property(lambda layer: False))
    padded, _ = model.encode(batch["source"], batch)
    torch.testing.assert_close(packed[mask], padded[mask])
    assert not packed[~mask].any()  # padding states are zero, never read
    for search, outputs in packed_outputs.items():
        assert model.predict(examples, search) == outputs


@pytest.mark.parametrize("name", ["lcrs_dfs", "sequence", "arc_standard", "arc_standard, state_mlp"])
def test_the_beam_decodes_open_hypotheses_only(name):
    """Finished and dead hypotheses never reach the model, and the outputs are the plain beam's."""
    model, examples = tiny_model(name)
    expected = model.predict(examples, PlainBeam(beam_size=4, max_steps=80))
    decode_step, rows = model.decode_step, []

    def open_rows_only(prefix, context, states):
        assert not as_rows(model, states).finished().any()  # Python states or a transition system's tensor states
        rows.append(len(states))
        return decode_step(prefix, context, states)

    model.decode_step = open_rows_only
    assert model.predict(examples, BeamSearch(beam_size=4, max_steps=80)) == expected
    assert rows[0] == len(examples)  # the first step: one hypothesis per sentence, not beam_size identical ones


@pytest.mark.parametrize(
    ("sources", "reading", "order", "index", "same"),
    [
        ([0, 0, 1, 1], [7, 7, 7, 7], [0, 2, 1, 3], [0, 1, 0, 1], True),  # row 0 branches: its second child takes row 1
        ([3, 1], [5, 5, 6, 6], [0, 1], [3, 1], False),  # rows 0 and 2 ended: row 1 stays, row 3 moves to row 0, which read another sentence
        ([0, 1, 2], [0, 1, 2], [0, 1, 2], [0, 1, 2], True),  # nothing moves
    ],
)
def test_keeping_the_open_rows_leaves_each_surviving_row_in_place(sources, reading, order, index, same):
    from toolkit.decoding.beam import keep_rows

    calls = []

    class Context:
        def reorder(self, index, same_sources=False):
            calls.append((index.tolist(), same_sources))
            return self

    _, _, got = keep_rows(Context(), torch.tensor(sources), torch.tensor(reading))
    assert got.tolist() == order
    assert calls == ([] if index == list(range(len(reading))) else [(index, same)])


@given(st.lists(st.integers(0, 11), min_size=1, max_size=24), st.lists(st.integers(0, 3), min_size=12, max_size=12))
def test_keeping_rows_gives_each_hypothesis_its_source_row_and_copies_only_the_branches(sources, reading):
    """Row j holds the source row of hypothesis order[j]; a row moves only where no hypothesis could stay in it."""
    from toolkit.decoding.beam import keep_rows

    seen = {}

    class Context:
        def reorder(self, index, same_sources=False):
            seen.update(index=index, same=same_sources)
            return self

    sources_t, reading_t = torch.tensor(sources), torch.tensor(reading)
    _, rows_read, order = keep_rows(Context(), sources_t, reading_t)
    assert sorted(order.tolist()) == list(range(len(sources)))  # every hypothesis gets exactly one row
    index = seen.get("index", torch.arange(len(reading)))
    assert torch.equal(index, sources_t[order])
    assert torch.equal(rows_read, reading_t[index])
    can_stay = len({s for s in sources if s < len(sources)})
    assert int((index != torch.arange(len(index))).sum()) == len(sources) - can_stay
    if seen.get("same"):
        assert torch.equal(reading_t[index], reading_t[: len(index)])
