"""Token embedders: one vector per word from a (tiny, random, local) pretrained transformer, or from characters."""

import json
import shutil
import sys

import pytest
import torch

from tests.conftest import TINY_BERT_VOCABULARY as VOCABULARY
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.modules.token_embedders import CharacterEmbedder, HashedFeaturesEmbedder, ScalarMix, TokenEmbedder
from toolkit.modules.token_embedders.characters import character_ids
from toolkit.modules.token_embedders.hashed_features import word_shape
from toolkit.training.trainer import caching_in_eval

ID = {piece: i for i, piece in enumerate(VOCABULARY)}
CLS, SEP, UNK = ID["[CLS]"], ID["[SEP]"], ID["[UNK]"]


@pytest.fixture(scope="module")
def bert_dir(tiny_bert):
    return tiny_bert


@pytest.fixture(scope="module")
def raw_bert(bert_dir):
    """The same weights, loaded independently: the reference the embedder is checked against."""
    import transformers

    return transformers.AutoModel.from_pretrained(bert_dir, local_files_only=True).eval()


def embedder(bert_dir, **params) -> TokenEmbedder:
    return TokenEmbedder.from_params({"type": "pretrained_transformer", "model_name": str(bert_dir), "layers": "last", **params})


def embed(module: TokenEmbedder, *sentences: list[str]) -> torch.Tensor:
    """(B, S, D) word vectors of *sentences*, padded as a model would."""
    inputs = [module.example_inputs(Example(list(words))) for words in sentences]
    num_words = max(len(words) for words in sentences)
    mask = torch.tensor([[i < len(words) for i in range(num_words)] for words in sentences])
    return module(torch.zeros(mask.shape, dtype=torch.long), mask, **module.batch_inputs(inputs, num_words))


def raw_states(raw_bert, piece_ids: list[int], all_layers: bool = False):
    """The reference model's states over ``[CLS] pieces [SEP]``: (T, H), or every layer's (L+1, T, H)."""
    with torch.no_grad():
        output = raw_bert(input_ids=torch.tensor([[CLS, *piece_ids, SEP]]), output_hidden_states=True)
    return torch.stack(output.hidden_states)[:, 0] if all_layers else output.last_hidden_state[0]


SENTENCE = ["the", "dogs", "unbelievable", "running"]
PIECES = [ID["the"], ID["dog"], ID["##s"], ID["un"], ID["##believ"], ID["##able"], ID["run"], ID["##ning"]]


# ------------------------------------------------------------------ subwords and pooling


def test_words_are_split_into_the_tokenizers_pieces(bert_dir):
    inputs = embedder(bert_dir).example_inputs(Example(SENTENCE))
    assert inputs == {"piece_ids": PIECES, "piece_counts": [1, 2, 3, 2]}


def test_a_stem_is_read_as_the_most_frequent_vocabulary_word_with_that_stem():
    from toolkit.modules.token_embedders.pretrained_transformer import unstemmed_words

    vocabulary = {"[PAD]": 0, "##ing": 3, "the": 5, "run": 7, "running": 8, "city": 10, "cities": 12, "arrived": 15, "arrive": 20}
    vocabulary |= {"department": 25, "arrival": 30, "Ġairlines": 40, "▁airline": 45, "depart": 50, "ci0": 60}
    assert unstemmed_words(vocabulary) == {"citi": "city", "arriv": "arrived", "airlin": "airlines"}  # lowest id; marks stripped
    # "depart" and "run" are words themselves (not "department"); "##ing" and "ci0" are no words


def test_unstem_changes_what_the_transformer_reads_and_nothing_else(bert_dir):
    plain, unstemming = embedder(bert_dir), embedder(bert_dir, unstem=True)
    assert unstemming.unstemmed == {}  # every stem of the tiny vocabulary's words is a word of it
    unstemming.unstemmed["dg"] = "dog"
    assert unstemming.example_inputs(Example(["the", "dg"]))["piece_ids"] == [ID["the"], ID["dog"]]
    assert plain.example_inputs(Example(["the", "dg"]))["piece_ids"] != [ID["the"], ID["dog"]]
    assert unstemming.example_inputs(Example(SENTENCE))["piece_ids"] == PIECES


@pytest.mark.parametrize(
    "pooling, positions",  # the words' pieces sit at 1, 2-3, 4-6, 7-8 after [CLS]
    [("first", [[1], [2], [4], [7]]), ("last", [[1], [3], [6], [8]]), ("mean", [[1], [2, 3], [4, 5, 6], [7, 8]])],
)
def test_pooling_takes_a_words_first_last_or_mean_piece(bert_dir, raw_bert, pooling, positions):
    states = raw_states(raw_bert, PIECES)
    expected = torch.stack([states[chosen].mean(0) for chosen in positions])
    words = embed(embedder(bert_dir, pooling=pooling), SENTENCE)
    assert words.shape == (1, 4, 32)
    torch.testing.assert_close(words[0], expected, atol=1e-5, rtol=1e-4)


def test_the_scalar_mix_starts_as_the_average_of_the_chosen_layers(bert_dir, raw_bert):
    layers = raw_states(raw_bert, PIECES, all_layers=True)[:, 1:2]  # (3, 1, H): "the", every layer
    everything = embed(embedder(bert_dir, layers="all"), SENTENCE)[0, 0]
    torch.testing.assert_close(everything, layers.mean(0)[0], atol=1e-5, rtol=1e-4)
    chosen = embed(embedder(bert_dir, layers=[0, -1]), SENTENCE)[0, 0]
    torch.testing.assert_close(chosen, (layers[0, 0] + layers[2, 0]) / 2, atol=1e-5, rtol=1e-4)
    mix = ScalarMix(2)
    with torch.no_grad():
        mix.weights.copy_(torch.tensor([0.0, torch.log(torch.tensor(3.0))]))  # softmax: 1/4, 3/4
        mix.gamma.fill_(2.0)
    torch.testing.assert_close(mix([torch.ones(2), torch.full((2,), 5.0)]), torch.full((2,), 2 * (0.25 + 3.75)))


def test_a_transformer_cut_to_its_first_layers_gives_those_layers_states(bert_dir, raw_bert):
    layers = raw_states(raw_bert, PIECES, all_layers=True)[:, 1]  # (3, H): "the", every layer of the 2
    cut = embedder(bert_dir, num_layers=1, layers="all")
    assert len(cut.transformer.encoder.layer) == 1 and cut.transformer.config.num_hidden_layers == 1
    torch.testing.assert_close(embed(cut, SENTENCE)[0, 0], layers[:2].mean(0), atol=1e-5, rtol=1e-4)  # embeddings and layer 1
    torch.testing.assert_close(embed(embedder(bert_dir, num_layers=1), SENTENCE)[0, 0], layers[1], atol=1e-5, rtol=1e-4)
    with pytest.raises(ConfigurationError, match="num_layers.*has 2 layers, cannot keep 3"):
        embedder(bert_dir, num_layers=3)


def test_words_the_tokenizer_drops_still_get_one_vector_each(bert_dir, raw_bert):
    # "" and a control character give no piece; a lone combining mark is stripped to nothing; "á" loses its accent.
    words = ["the", "", "\x07", "\u0301", "a\u0301", "zzz", "dogs"]
    module = embedder(bert_dir, pooling="mean")
    inputs = module.example_inputs(Example(words))
    assert inputs["piece_counts"] == [1, 1, 1, 1, 1, 1, 2]
    assert inputs["piece_ids"] == [ID["the"], UNK, UNK, UNK, ID["a"], UNK, ID["dog"], ID["##s"]]
    vectors = embed(module, words)
    assert vectors.shape == (1, 7, 32) and torch.isfinite(vectors).all()
    states = raw_states(raw_bert, inputs["piece_ids"])
    torch.testing.assert_close(vectors[0, 1], states[2], atol=1e-5, rtol=1e-4)  # the empty word reads [UNK] at its place
    assert embed(module, [""]).shape == (1, 1, 32)


# ------------------------------------------------------------------ windows


def test_windowed_encoding_equals_unwindowed_when_the_input_fits_one_window(bert_dir):
    whole = embed(embedder(bert_dir), SENTENCE, ["dogs", "run"])
    windowed = embed(embedder(bert_dir, max_length=8, window_stride=3), SENTENCE, ["dogs", "run"])  # 8 pieces: one window
    torch.testing.assert_close(windowed, whole, atol=1e-5, rtol=1e-4)


def test_inference_runs_windows_in_groups_of_similar_length_with_the_same_vectors(bert_dir, monkeypatch):
    """A batch of long and short sentences: the transformer sees each group cut to its longest, and the words get the vectors one call gives."""
    from toolkit.modules.token_embedders import pretrained_transformer

    module = embedder(bert_dir, layers="all", pooling="mean").eval()
    sentences = [SENTENCE * 3, ["run"], SENTENCE, ["dogs", "run"]]
    widths = []
    real_forward = module.transformer.forward
    module.transformer.forward = lambda **inputs: widths.append(tuple(inputs["input_ids"].shape)) or real_forward(**inputs)
    grouped = embed(module, *sentences)
    assert len(widths) > 1 and sum(rows for rows, _ in widths) == 4 and min(width for _, width in widths) < max(width for _, width in widths)
    monkeypatch.setattr(pretrained_transformer, "length_groups", lambda lengths: [list(range(len(lengths)))])
    torch.testing.assert_close(embed(module, *sentences), grouped, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    "words, stride, expected_window",
    [
        # Ten one-piece words, windows of 4 every 2: starts 0, 2, 4, 6 (the last ends at the input's end).
        (list("abcdefghij"), 2, [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]),
        # Six words, windows of 4 every 1: starts 0, 1, 2. Piece 2 scores 1, 1, 0 and piece 3 scores 0, 1, 1: ties go earlier.
        (list("abcdef"), 1, [0, 0, 0, 1, 2, 2]),
    ],
)
def test_a_long_input_is_stitched_from_the_window_where_each_piece_is_most_central(bert_dir, raw_bert, words, stride, expected_window):
    # Each piece's window is where min(left, right), its distance to the nearer window edge, is largest (ties: the earlier):
    # piece 2: window 0 gives min(2, 1) = 1, window 1 gives min(0, 3) = 0 -> window 0;
    # piece 3: window 0 gives min(3, 0) = 0, window 1 gives min(1, 2) = 1 -> window 1;
    # piece 4: window 1 gives min(2, 1) = 1, window 2 gives 0 -> window 1; piece 6: windows 2 and 3 give 1 and 0 -> window 2.
    pieces = [ID[word] for word in words]
    windows = [raw_states(raw_bert, pieces[start : start + 4]) for start in range(0, len(words) - 3, stride)]
    expected = torch.stack([windows[w][1 + i - stride * w] for i, w in enumerate(expected_window)])
    vectors = embed(embedder(bert_dir, max_length=4, window_stride=stride), words)
    torch.testing.assert_close(vectors[0], expected, atol=1e-5, rtol=1e-4)
    unwindowed = raw_states(raw_bert, pieces)[1:-1]
    assert not torch.allclose(vectors[0], unwindowed, atol=1e-3)  # windows really differ from one pass


def test_an_input_longer_than_the_model_gets_one_vector_per_word(bert_dir):
    module = embedder(bert_dir, layers="all")  # 64 positions: windows of 62 pieces by default
    assert module.window_length == 62 and module.window_stride == 31
    words = ["dogs", "running", "unbelievable", ""] * 40  # 320 pieces
    vectors = embed(module, words, ["the", "dog"])
    assert vectors.shape == (2, 160, 32) and torch.isfinite(vectors).all()
    assert (vectors[1, 2:] == 0).all() and (vectors[0].abs().sum(-1) > 0).all()


def test_a_batch_gives_each_sentence_the_vectors_it_gets_alone(bert_dir):
    for params in ({"pooling": "mean", "layers": "all"}, {"pooling": "last", "max_length": 4, "window_stride": 3}):
        module = embedder(bert_dir, **params)
        short, long = ["dogs", "run"], SENTENCE + ["a", "b", "c"]
        batch = embed(module, short, long)
        torch.testing.assert_close(batch[0, :2], embed(module, short)[0], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(batch[1], embed(module, long)[0], atol=1e-5, rtol=1e-4)
        assert (batch[0, 2:] == 0).all()


# ------------------------------------------------------------------ training


def test_a_frozen_transformer_gets_no_gradient_and_stays_in_eval_mode(bert_dir):
    module = embedder(bert_dir, layers="all", freeze=True)
    assert not any(parameter.requires_grad for parameter in module.transformer.parameters())
    module.train()
    assert module.training and not module.transformer.training and not module.transformer.encoder.layer[0].training
    embed(module, SENTENCE).sum().backward()
    assert all(parameter.grad is None for parameter in module.transformer.parameters())
    assert module.scalar_mix.weights.grad is not None and module.scalar_mix.gamma.grad is not None
    assert module.parameter_groups() == []


def test_a_frozen_transformer_reads_each_training_sentence_once_and_gives_the_same_vectors(bert_dir):
    cached = embedder(bert_dir, layers="all", pooling="mean").train()
    uncached = embedder(bert_dir, layers="all", pooling="mean", cache=False).train()
    batches = []
    real_forward = cached.transformer.forward
    cached.transformer.forward = lambda **inputs: batches.append(inputs["input_ids"].size(0)) or real_forward(**inputs)
    short = ["dogs", "run"]
    embed(cached, SENTENCE, short)
    again = embed(cached, short, ["the", "dogs"], SENTENCE)  # another batch: only the new sentence is read
    assert batches == [2, 1] and len(cached.cache) == 3
    torch.testing.assert_close(again, embed(uncached, short, ["the", "dogs"], SENTENCE), atol=1e-5, rtol=1e-4)
    assert (again[0, 2:] == 0).all()
    again.sum().backward()  # the mix still trains on cached vectors
    assert cached.scalar_mix.weights.grad is not None
    cached.eval()
    embed(cached, ["run", "the", "dogs"])  # prediction sentences are not kept
    assert len(cached.cache) == 3 and batches == [2, 1, 1]
    assert embedder(bert_dir, freeze=False).cache is None


def test_a_cache_in_memory_mapped_files_gives_the_same_vectors_and_leaves_no_file(bert_dir, tmp_path):
    in_memory = embedder(bert_dir, layers="all", pooling="mean").train()
    on_disk = embedder(bert_dir, layers="all", pooling="mean", cache_dir=str(tmp_path)).train()
    short = ["dogs", "run"]
    embed(on_disk, SENTENCE, short)  # fills the cache
    torch.testing.assert_close(embed(on_disk, SENTENCE, short), embed(in_memory, SENTENCE, short))
    assert len(on_disk.cache) == 2 and on_disk.cache.nbytes == in_memory.cache.nbytes > 0
    assert list(tmp_path.iterdir()) == []  # unlinked as made: nothing to clean up, even after a crash
    with pytest.raises(ConfigurationError, match="cache_dir"):
        embedder(bert_dir, cache_dir=str(tmp_path / "missing"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_half_precision_cache_keeps_half_the_bytes_and_gives_float32_vectors_close_to_the_full_ones(bert_dir, dtype):
    full = embedder(bert_dir, layers="all", pooling="mean").train()
    half = embedder(bert_dir, layers="all", pooling="mean", cache_dtype=dtype).train()
    short = ["dogs", "run"]
    expected = embed(full, SENTENCE, short)
    embed(half, SENTENCE, short)  # fills the cache
    again = embed(half, SENTENCE, short)  # read from it
    assert again.dtype == torch.float32
    embed(full, SENTENCE, short)  # fills the full cache
    assert {block.dtype for block in half.cache.blocks} == {getattr(torch, dtype)} and 2 * half.cache.nbytes == full.cache.nbytes
    tolerance = 1e-2 if dtype == "bfloat16" else 2e-3  # 8 and 11 significant bits
    torch.testing.assert_close(again, expected, atol=tolerance, rtol=tolerance)
    assert not torch.equal(again, expected)  # really rounded
    with pytest.raises(ConfigurationError, match="cache_dtype"):
        embedder(bert_dir, cache_dtype="int8")


def test_validation_sentences_are_cached_while_the_trainer_validates_and_prediction_ones_never(bert_dir):
    cached = embedder(bert_dir, layers="all", pooling="mean").eval()
    model = torch.nn.Sequential(torch.nn.ModuleDict({"minilm": cached}))  # found however deep it sits
    batches = []
    real_forward = cached.transformer.forward
    cached.transformer.forward = lambda **inputs: batches.append(inputs["input_ids"].size(0)) or real_forward(**inputs)
    validation = ["run", "the", "dogs"]
    with caching_in_eval(model):
        first = embed(cached, validation, SENTENCE)
        again = embed(cached, SENTENCE, validation)  # the loss pass, then the decoding pass, then the next epoch
    assert sum(batches) == 2 and len(cached.cache) == 2 and not cached.cache_in_eval  # sentences through the transformer
    torch.testing.assert_close(again, first.flip(0), atol=1e-5, rtol=1e-4)
    embed(cached, ["dogs", "run"])
    assert sum(batches) == 3 and len(cached.cache) == 2


def test_a_fine_tuned_transformer_has_its_own_learning_rate(bert_dir):
    module = embedder(bert_dir, freeze=False, learning_rate=3e-5, warmup_steps=10, projection_dim=8)
    module.train()
    assert module.transformer.training and module.get_output_dim() == 8
    [group] = module.parameter_groups()
    assert group["lr"] == 3e-5 and group["warmup_steps"] == 10
    assert {id(p) for p in group["params"]} == {id(p) for p in module.transformer.parameters()}
    embed(module, SENTENCE).sum().backward()
    assert module.transformer.embeddings.word_embeddings.weight.grad is not None


# ------------------------------------------------------------------ archives and errors


def test_the_fingerprint_of_a_directory_follows_its_weight_files(bert_dir, tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(bert_dir, copy)
    module = embedder(copy)
    before = module.pretrained_source()
    assert before["model_name"] == str(copy) and set(before["sha256"]) == {"model.safetensors"}
    assert module.pretrained_source() == before and json.loads(json.dumps(before)) == before
    with (copy / "model.safetensors").open("ab") as weights:  # it reads the files, not the loaded model
        weights.write(b"\0")
    after = module.pretrained_source()
    assert after["sha256"]["model.safetensors"] != before["sha256"]["model.safetensors"]


def test_without_transformers_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # runs whether or not transformers is installed
    with pytest.raises(ConfigurationError, match=r'pip install "parsing-toolkit\[transformers\]"'):
        TokenEmbedder.from_params({"type": "pretrained_transformer", "model_name": "bert-base-cased"})


def test_unloadable_models_are_one_line_configuration_errors(bert_dir, tmp_path):
    empty = tmp_path / "not_a_model"
    empty.mkdir()
    with pytest.raises(ConfigurationError, match="not_a_model") as error:
        embedder(empty)
    assert "\n" not in str(error.value)
    weights_only = tmp_path / "weights_only"  # a model saved without its tokenizer
    weights_only.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(bert_dir / name, weights_only / name)
    with pytest.raises(ConfigurationError, match="weights_only.*no tokenizer files"):
        embedder(weights_only)


def test_bad_settings_are_configuration_errors(bert_dir):
    with pytest.raises(ConfigurationError, match="pooling"):
        embedder(bert_dir, pooling="max")
    with pytest.raises(ConfigurationError, match="layers"):
        embedder(bert_dir, layers=[5])
    with pytest.raises(ConfigurationError, match="window_stride"):
        embedder(bert_dir, max_length=4, window_stride=5)


# ------------------------------------------------------------------ characters


def test_character_ids_are_utf8_bytes_between_word_markers():
    assert character_ids("é", 50) == [1, 0xC3 + 3, 0xA9 + 3, 2]
    assert character_ids("", 50) == [1, 2]
    assert character_ids("abcdef", 5) == [1, ord("a") + 3, ord("b") + 3, ord("c") + 3, 2]


@pytest.mark.parametrize("encoder", ["cnn", "lstm"])
def test_characters_give_one_batch_invariant_vector_per_word(encoder):
    torch.manual_seed(0)
    module = TokenEmbedder.from_params({"type": "characters", "encoder": encoder, "widths": [1, 3, 5], "num_filters": 8, "hidden_dim": 8})
    assert isinstance(module, CharacterEmbedder) and module.get_output_dim() == (24 if encoder == "cnn" else 16)
    short, long = ["a", "", "dog"], ["extraordinarily", "long", "wordsmithery", "x"]
    batch = embed(module, short, long)
    assert batch.shape == (2, 4, module.get_output_dim()) and (batch[0, 3] == 0).all()
    torch.testing.assert_close(batch[0, :3], embed(module, short)[0], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(batch[1], embed(module, long)[0], atol=1e-6, rtol=1e-5)
    assert not torch.allclose(batch[0, 0], batch[0, 2])
    batch.sum().backward()
    assert module.embedding.weight.grad.abs().sum() > 0
    trained = module.convolutions[0].weight if encoder == "cnn" else module.lstm.weight_hh_l0_reverse
    assert trained.grad is not None and trained.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "config, message",
    [
        ({"type": "characters", "embedding_dim": 0}, "embedding_dim: must be at least 1, got 0"),  # used to build
        ({"type": "characters", "num_filters": -1}, "num_filters: must be at least 1, got -1"),  # torch's message, no key
        ({"type": "characters", "dropout": -0.5}, "dropout: must be from 0 to 1, got -0.5"),
        ({"type": "upos", "embedding_dim": 0}, "embedding_dim: must be at least 1, got 0"),
        (
            {"type": "pretrained_transformer", "model_name": "/nowhere", "warmup_steps": 0},
            "warmup_steps: must be at least 1, got 0",
        ),  # a division by zero at the first step
        ({"type": "pretrained_transformer", "model_name": "/nowhere", "learning_rate": 0}, "learning_rate: must be more than 0, got 0.0"),
    ],
)
def test_a_size_or_rate_out_of_range_names_its_key_before_anything_is_built(config, message):
    with pytest.raises(ConfigurationError, match=f"^{message}$"):
        TokenEmbedder.from_params(config)


# ------------------------------------------------------------------ hashed spelling features


def test_word_shapes_cut_long_runs_of_one_kind():
    assert [word_shape(word) for word in ("Paris", "2019", "U.S.", "can't", "COVID-19", "")] == ["Xxxxx", "dddd", "X.X.", "xxx'x", "XXXX-dd", ""]


def test_hashed_features_share_rows_where_spellings_share_features():
    module = TokenEmbedder.from_params({"type": "hashed_features", "width": 4, "hashes": 2})
    assert isinstance(module, HashedFeaturesEmbedder) and module.get_output_dim() == 16
    walking, talking, Walking = (module.word_rows(word) for word in ("walking", "talking", "Walking"))
    assert len(walking) == 8  # 4 features x 2 hashes
    assert walking[4:6] == talking[4:6] and walking[6:] == talking[6:]  # suffix "ing" and shape "xxxx": shared
    assert walking[:2] != talking[:2]  # norms differ
    assert Walking[:6] == walking[:6] and Walking[6:] != walking[6:]  # case changes only the shape
    assert walking == TokenEmbedder.from_params({"type": "hashed_features", "width": 8}).word_rows("walking")  # CRC-32: no process salt
    assert all(0 <= row < size for row, size in zip(walking, [5000, 5000, 1000, 1000, 2500, 2500, 2500, 2500]))


def test_hashed_features_give_one_batch_invariant_vector_per_word():
    torch.manual_seed(0)
    module = TokenEmbedder.from_params({"type": "hashed_features", "rows": {"suffix": 50, "shape": 20}, "width": 3})
    assert module.get_output_dim() == 6
    short, long = ["a", "dog"], ["Extraordinarily", "long", "words", "x"]
    batch = embed(module, short, long)
    assert batch.shape == (2, 4, 6) and (batch[0, 2:] == 0).all()
    torch.testing.assert_close(batch[0, :2], embed(module, short)[0])
    torch.testing.assert_close(batch[1], embed(module, long)[0])
    first, second, shape_first, shape_second = module.word_rows("dog")  # suffix "dog" twice, shape "xxx" twice
    table = module.embedding.weight
    expected = torch.cat([table[first] + table[second], table[50 + shape_first] + table[50 + shape_second]])  # shapes after the 50 suffix rows
    torch.testing.assert_close(batch[0, 1], expected)
    batch.sum().backward()
    assert module.embedding.weight.grad.abs().sum() > 0


def test_hashed_features_refuse_unknown_features_by_key():
    with pytest.raises(ConfigurationError, match=r"^rows: unknown features \['lemma'\]"):
        TokenEmbedder.from_params({"type": "hashed_features", "rows": {"lemma": 10}})
    with pytest.raises(ConfigurationError, match=r"^rows: needs at least one feature"):
        TokenEmbedder.from_params({"type": "hashed_features", "rows": {"norm": 0}})
