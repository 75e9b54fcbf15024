"""`toolkit visualize`: attention capture, stack/buffer grids, structure drawings and the command end to end.

The archives are seconds-sized models trained once per session (conftest) or per module here: the
pictures need real weights and a real decoding, not good ones.
"""

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import penman
import pytest
import torch
import torch.nn.functional as F

from tests.conftest import data_root, run, train_archive
from toolkit.data.example import Example
from toolkit.modules.attention import MultiHeadAttention, attention_probabilities
from toolkit.modules.transformer_settings import TransformerSettings

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    """A real PNG: the signature, and matplotlib reads it back as a non-empty image."""
    from matplotlib.image import imread

    assert path.read_bytes()[:8] == PNG_SIGNATURE, path
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 0 and image.shape[1] > 0, path


def assert_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag.rsplit("}", 1)[-1] == "svg", path


def assert_distributions(weights: torch.Tensor) -> None:
    assert torch.all(weights >= 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-5, rtol=0)


# ------------------------------------------------------------------ capture


@pytest.mark.parametrize("kind", ["none", "bool", "additive", "causal"])
def test_recorded_probabilities_are_the_ones_the_kernel_uses(kind):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 7, 4)
    mask, causal = None, False
    if kind == "bool":
        mask = torch.rand(2, 1, 5, 7) > 0.3
        mask[..., 0] = True  # every query sees something
    elif kind == "additive":
        mask = torch.randn(2, 3, 5, 7).masked_fill(torch.rand(2, 3, 5, 7) > 0.7, float("-inf"))
        mask[..., 0] = 0.0
    elif kind == "causal":
        k, v = k[:, :, :5], v[:, :, :5]
        causal = True
    probabilities = attention_probabilities(q, k, mask, causal)
    assert_distributions(probabilities)
    torch.testing.assert_close(probabilities @ v, F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal), atol=1e-5, rtol=1e-5)


def test_recording_changes_no_output_and_leaves_nothing_behind():
    from toolkit.modules.encoders import TransformerEncoder
    from toolkit.visualization.recording import record_attention

    torch.manual_seed(0)
    encoder = TransformerEncoder(16, layers=TransformerSettings(num_layers=2, num_heads=4, ff_dim=32)).eval()
    x, mask = torch.randn(2, 6, 16), torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    before = encoder(x, mask)
    with record_attention(encoder) as maps:
        during = encoder(x, mask)
    assert torch.equal(before, during)
    assert sorted(maps) == ["layers.0.attention", "layers.1.attention"]
    weights = maps["layers.0.attention"][0]
    assert weights.shape == (2, 4, 6, 6)
    assert torch.all(weights[1, :, :, 4:] == 0)  # padding gets no attention
    assert_distributions(weights.transpose(1, 2)[mask])  # each word's attention (padding queries are never drawn)
    assert all("recorder" not in vars(module) for module in encoder.modules() if isinstance(module, MultiHeadAttention))
    assert MultiHeadAttention.recorder is None


def test_phrase_heads_are_named_after_their_n_and_hypernodes_after_their_phrase():
    from toolkit.modules.encoders import (
        HypernodeTransformerEncoder,
        PhraseTransformerEncoder,
    )
    from toolkit.phrases import PhraseGenerator
    from toolkit.visualization.heatmaps import (
        encoder_figures,
        encoder_head_names,
        encoder_node_labels,
    )
    from toolkit.visualization.recording import record_attention
    from toolkit.visualization.trace import Trace, first_calls

    tokens = ["the", "dog", "barks", "loudly", "."]
    phrase = PhraseTransformerEncoder(16, gram_sizes=[0, 2, 3, 0], phrase_layers=[2], layers=TransformerSettings(num_layers=2, ff_dim=32)).eval()
    assert encoder_head_names(phrase, 0, 4) == ["head 0", "head 1", "head 2", "head 3"]  # layer 1 has no phrase heads
    assert encoder_head_names(phrase, 1, 4) == ["head 0 (word)", "head 1 (2-gram)", "head 2 (3-gram)", "head 3 (word)"]

    hypernode = HypernodeTransformerEncoder(
        16, PhraseGenerator.by_name("ngram")(max_n=2), layers=TransformerSettings(num_layers=1, num_heads=2, ff_dim=32)
    ).eval()
    labels = encoder_node_labels(hypernode, tokens)
    assert labels == tokens + ["[the dog]", "[dog barks]", "[barks loudly]", "[loudly .]"]
    with record_attention(hypernode) as maps:
        hypernode(torch.randn(1, 5, 16), torch.ones(1, 5, dtype=torch.bool), hypernodes=hypernode.hypernodes(tokens)[None])
    attention = first_calls(maps)
    assert {name: tuple(w.shape) for name, w in attention.items()} == {"layers.0.attention": (2, 9, 9), "layers.0.phrase_attention": (2, 9, 9)}
    for weights in attention.values():
        assert_distributions(weights)
    figures = encoder_figures(Trace(tokens, None, attention={f"encoder.{name}": w for name, w in attention.items()}), hypernode)
    assert sorted(figures) == ["encoder_layer1.png", "encoder_layer1_phase2.png"]
    assert [tick.get_text() for tick in figures["encoder_layer1.png"].axes[0].get_xticklabels()] == labels


# ------------------------------------------------------------------ stack and buffer


def test_stack_buffer_grid_of_a_hand_checked_arc_standard_parse():
    from toolkit.visualization.stack_buffer import BUFFER, STACK, stack_buffer_grid
    from toolkit.visualization.trace import replay
    from transition_systems.arc_standard import ArcStandard

    grammar = ArcStandard()
    actions = ["SHIFT", "SHIFT", "LEFT-ARC:nsubj", "SHIFT", "RIGHT-ARC:obj", "RIGHT-ARC:root"]  # She eats fish
    steps = replay(grammar, Example(["She", "eats", "fish"]), actions)
    where, depth = stack_buffer_grid(steps, 3)
    S, B, _ = STACK, BUFFER, 0
    assert where.tolist() == [
        [B, B, B],  # SHIFT: only the root on the stack, which is no token
        [S, B, B],  # SHIFT
        [S, S, B],  # LEFT-ARC: eats -> She
        [_, S, B],  # SHIFT
        [_, S, S],  # RIGHT-ARC: eats -> fish
        [_, S, _],  # RIGHT-ARC: root -> eats
    ]
    assert depth.tolist() == [[-1, -1, -1], [0, -1, -1], [1, 0, -1], [-1, 0, -1], [-1, 1, 0], [-1, 0, -1]]


# ------------------------------------------------------------------ structures


def test_logical_form_tree_layout_reuses_the_tree_codec():
    from toolkit.visualization.structures import logical_form_tree, tree_figure
    from toolkit.visualization.svg import tree_layout

    text = "( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 s0 ) ) )"
    tree = logical_form_tree(text)
    figure = tree_figure(tree, text)
    labels = [t for t in figure.axes[0].texts] + [figure.axes[0].title]
    assert [t.get_text() for t in labels[:2]] == ["lambda", "$0"] and labels[-1].get_text() == text
    assert not any(t.get_parse_math() for t in labels)  # "$0 ... $0" is a variable twice, not TeX
    nodes = tree_layout(tree)
    assert [label for label, *_ in nodes] == ["lambda", "$0", "e", "and", "state:t", "$0", "next_to:t", "$0", "s0"]
    leaves = [x for label, x, depth, parent in nodes if label in ("$0", "e", "s0")]
    assert leaves == [0, 1, 2, 3, 4]  # leaves one unit apart, in order
    assert nodes[3][1] == (nodes[4][1] + nodes[6][1]) / 2  # "and" centred over its children
    assert tree_layout(logical_form_tree("s0")) == [("s0", 0.0, 0, -1)]
    with pytest.raises(ValueError):
        logical_form_tree("a man rides a horse")  # a translation is no tree


def test_dependency_tree_without_spacy_is_unavailable(monkeypatch):
    from toolkit.visualization.svg import Unavailable, dependency_svg

    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(Unavailable, match="spaCy is not installed"):
        dependency_svg(["She", "eats"], [2, 0], ["nsubj", "root"])


def test_dependency_tree_is_a_displacy_svg(tmp_path):
    pytest.importorskip("spacy")
    from toolkit.visualization.svg import dependency_svg

    path = tmp_path / "tree.svg"
    path.write_text(dependency_svg(["She", "eats", "fish"], [2, 0, 2], ["nsubj", "root", "obj"]))
    assert_svg(path)
    text = path.read_text()
    assert "nsubj" in text and "obj" in text and "ROOT" in text


# ------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def semantic_archive(tmp_path_factory) -> Path:
    """A seconds-sized GEO parser: bracketed lambda-calculus output, a PhraseTransformer encoder with 2-gram heads."""
    source = data_root() / "geo" / "train.txt"
    if not source.exists():
        pytest.skip(f"GEO data not found at {source}")
    directory = tmp_path_factory.mktemp("geo_phrase")
    lines = source.read_text(encoding="utf-8").splitlines()
    (directory / "train.tsv").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    (directory / "test.tsv").write_text("\n".join(lines[40:45]) + "\n", encoding="utf-8")
    config = directory / "geo_phrase.json"
    config.write_text(
        json.dumps(
            {
                "dataset_reader": {"type": "tsv"},
                "train_data_path": str(directory / "train.tsv"),
                "validation_data_path": str(directory / "test.tsv"),
                "grammar": {"type": "bracketed", "max_length": 40},
                "model": {
                    "type": "encoder_decoder",
                    "encoder": {"type": "phrase_transformer", "input_dim": 32, "gram_sizes": [0, 2], "layers": {"num_layers": 1, "ff_dim": 64}},
                    "decoder": {"type": "transformer", "input_dim": 32, "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 64}},
                },
                "trainer": {
                    "optimizer": {"type": "adam", "lr": 3e-3},
                    "num_epochs": 1,
                    "max_tokens": 512,
                    "validation_metric": "-loss",
                    "num_checkpoints_to_average": 1,
                    "device": "cpu",
                    "progress_bar": False,
                },
                "random_seed": 7,
            }
        )
    )
    return train_archive(config, directory / "run", directory / "train.tsv", directory / "test.tsv")


def load(archive: Path):
    from toolkit import load_predictor

    return load_predictor(archive, device="cpu")


def test_cross_attention_of_the_prediction_is_what_decoding_attended_to(semantic_archive):
    """The teacher-forced pass over the predicted symbols reproduces, row by row, the attention of step-by-step decoding."""
    from toolkit.device import move_to_device
    from toolkit.models.encoder_decoder import EncoderDecoder
    from toolkit.visualization.recording import record_attention
    from toolkit.visualization.trace import trace

    predictor = load(semantic_archive)
    model: EncoderDecoder = predictor.model
    example = predictor.to_example("what state border s0")
    traced = trace(model, example)
    assert traced.symbols[-1] == "@end@" and str(traced.result) == predictor.predict("what state border s0")["logical_form"]
    steps, source = len(traced.symbols), len(traced.tokens)
    assert traced.attention["encoder.layers.0.attention"].shape == (2, source, source)
    cross = traced.attention["decoder.layers.0.cross_attention"]
    assert cross.shape == (2, steps, source)  # heads x target x source
    assert_distributions(cross)

    batch = move_to_device(model.collate([model.index(example)]), model.device)
    with record_attention(model) as maps, torch.no_grad():
        model.search.search(model, batch, [model.grammar.initial_state(example)])
    incremental = torch.cat([call[0] for call in maps["decoder.layers.0.cross_attention"]], dim=1)  # one (H, 1, S) per step
    torch.testing.assert_close(incremental, cross, atol=1e-5, rtol=1e-4)


def test_visualize_a_semantic_parser(semantic_archive, monkeypatch, capsys, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("what state border s0\n\nhow long is the longest river in s0\nriver in s0\n")
    out = tmp_path / "pictures"
    code, stdout, stderr = run(monkeypatch, capsys, "visualize", semantic_archive, questions, "-o", out, "--max-sentences", 2, "--device", "cpu")
    assert code == 0, stderr
    written = [Path(line) for line in stdout.splitlines()]
    assert {path.parent.name for path in written} == {"sentence_1", "sentence_3"}  # blank lines are not sentences; two at most
    for folder in ("sentence_1", "sentence_3"):
        names = sorted(path.name for path in written if path.parent.name == folder)
        assert names == ["cross_layer1.png", "encoder_layer1.png", "logical_form.png", "prediction.txt"]
    for path in written:
        assert path.exists()
        if path.suffix == ".png":
            assert_png(path)
    assert stderr.count("no stack/buffer picture") == 1  # one note for the run, not one per sentence
    assert "Traceback" not in stderr


def test_visualize_a_stack_transformer_dependency_parser(dependency_archive, monkeypatch, capsys, tmp_path):
    from toolkit.visualization.trace import trace

    predictor = load(dependency_archive)
    traced = trace(predictor.model, predictor.to_example("The dog saw a cat ."))
    cross = traced.attention["decoder.layers.0.cross_attention"]
    assert cross.shape == (2, len(traced.symbols), 6 + 1)  # the null slot is the last key
    assert_distributions(cross)
    assert torch.all(cross[0, 0, :6] == 0)  # head 0 sees the stack only, which is empty before the first action

    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The dog saw a cat .\n")
    code, _stdout, stderr = run(monkeypatch, capsys, "visualize", dependency_archive, sentences, "-o", tmp_path / "out", "--device", "cpu")
    assert code == 0, stderr
    folder = tmp_path / "out" / "sentence_1"
    for name in ("encoder_layer1.png", "cross_layer1.png", "stack_buffer.png"):
        assert_png(folder / name)
    try:
        import spacy  # noqa: F401
    except ImportError:
        assert "spaCy is not installed" in stderr and not (folder / "tree.svg").exists()
    else:
        assert_svg(folder / "tree.svg")


def test_visualize_reads_conllu_as_predict_does(dependency_archive, monkeypatch, capsys, tmp_path):
    """A CoNLL-U file was drawn line by line: `# sent_id = 1` was a sentence of five words, and each row another."""
    conllu = tmp_path / "in.conllu"
    conllu.write_text(
        "# sent_id = a\n# text = Dogs bark .\n1\tDogs\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tbark\t_\t_\t_\t_\t0\troot\t_\t_\n3\t.\t_\t_\t_\t_\t2\tpunct\t_\t_\n\n"
        "1\tCats\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tsleep\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    )
    code, _stdout, stderr = run(monkeypatch, capsys, "visualize", dependency_archive, conllu, "-o", tmp_path / "out", "--device", "cpu")
    assert code == 0, stderr
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["sentence_1", "sentence_7"]  # each block at its first line
    assert (tmp_path / "out" / "sentence_1" / "prediction.txt").read_text().startswith("tokens: Dogs bark .\n")
    assert (tmp_path / "out" / "sentence_7" / "prediction.txt").read_text().startswith("tokens: Cats sleep\n")


def test_an_amr_graph_has_a_node_per_variable_and_an_arrow_per_relation():
    pytest.importorskip("graphviz")
    from toolkit.visualization.structures import amr_digraph

    source = amr_digraph("(s / smile-01 :ARG0 (p / prince :mod (l / little)) :polarity - :time (n / now))").source
    assert source.count(" -> ") == 4  # ARG0, mod, time and polarity (to its constant)
    assert source.count("peripheries=2") == 1  # the top, doubled
    for label in ("smile-01", "prince", "little", "ARG0", "polarity"):
        assert label in source


def test_visualize_an_amr_parser_with_and_without_dot(amr_archive, monkeypatch, capsys, tmp_path):
    pytest.importorskip("graphviz")
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("The little prince smiled .\nI saw a boa .\n")
    if shutil.which("dot"):
        code, _stdout, stderr = run(monkeypatch, capsys, "visualize", amr_archive, sentences, "-o", tmp_path / "with", "--device", "cpu")
        assert code == 0, stderr
        assert_svg(tmp_path / "with" / "sentence_1" / "graph.svg")
        assert_png(tmp_path / "with" / "sentence_1" / "stack_buffer.png")

    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    code, _stdout, stderr = run(monkeypatch, capsys, "visualize", amr_archive, sentences, "-o", tmp_path / "without", "--device", "cpu")
    assert code == 0, stderr
    for folder in ("sentence_1", "sentence_2"):
        source = (tmp_path / "without" / folder / "graph.dot").read_text()
        assert source.startswith("digraph amr {")  # whether the tiny parser predicted any relation is training luck:
        parse = penman.decode((tmp_path / "without" / folder / "prediction.txt").read_text().split("\nresult: ", 1)[1])
        assert source.count(" -> ") == len(parse.edges()) + len(parse.attributes())  # an arrow for each relation of the parse
        assert not (tmp_path / "without" / folder / "graph.svg").exists()
    assert stderr.count("`dot` program is not installed") == 1


def test_visualize_a_hypernode_tagger_skips_what_it_has_not(ewt, monkeypatch, capsys, tmp_path_factory):
    directory = tmp_path_factory.mktemp("tagger")
    config = directory / "tagger.jsonnet"
    config.write_text(
        json.dumps(
            {
                "dataset_reader": {"type": "conllu"},
                "train_data_path": str(ewt["train"]),
                "validation_data_path": str(ewt["test"]),
                "grammar": {"type": "tags"},
                "model": {
                    "type": "tagger",
                    "encoder": {
                        "type": "hypernode_transformer",
                        "input_dim": 32,
                        "layers": {"num_layers": 1, "num_heads": 2, "ff_dim": 64},
                        "phrases": {"type": "ngram", "max_n": 2},
                    },
                },
                "trainer": {
                    "optimizer": {"type": "adam", "lr": 3e-3},
                    "num_epochs": 1,
                    "max_tokens": 1024,
                    "validation_metric": "-loss",
                    "num_checkpoints_to_average": 1,
                    "device": "cpu",
                    "progress_bar": False,
                },
            }
        )
    )
    archive = train_archive(config, directory / "run", ewt["train"], ewt["test"])
    sentences = directory / "sentences.txt"
    sentences.write_text("The dog barks .\n")
    code, _stdout, stderr = run(monkeypatch, capsys, "visualize", archive, sentences, "-o", directory / "out", "--device", "cpu")
    assert code == 0, stderr
    folder = directory / "out" / "sentence_1"
    assert sorted(path.name for path in folder.iterdir()) == ["encoder_layer1.png", "encoder_layer1_phase2.png", "prediction.txt"]
    assert_png(folder / "encoder_layer1.png")
    assert "has no decoder" in stderr and "no structure picture" in stderr


def test_bad_inputs_get_one_line(semantic_archive, monkeypatch, capsys, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("what state border s0\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    cases = [
        ((tmp_path / "missing.tar.gz", questions, tmp_path / "out"), "archive not found"),
        ((questions, questions, tmp_path / "out"), "not a readable model archive"),
        ((semantic_archive, tmp_path / "missing.txt", tmp_path / "out"), "input file not found"),
        ((semantic_archive, empty, tmp_path / "out"), "no sentences"),
        ((semantic_archive, questions, empty / "out"), "cannot create the output directory"),
    ]
    for (archive, inputs, out), message in cases:
        code, _stdout, stderr = run(monkeypatch, capsys, "visualize", archive, inputs, "-o", out)
        assert code == 1 and message in stderr and "Traceback" not in stderr, stderr
        assert len(stderr.strip().splitlines()) == 1


def test_an_unreadable_sentence_is_skipped_with_a_note(semantic_archive, monkeypatch, capsys, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("s0 " * 1100 + "\nriver in s0\n")  # longer than the encoder's 1024 positions
    code, stdout, stderr = run(monkeypatch, capsys, "visualize", semantic_archive, questions, "-o", tmp_path / "out", "--device", "cpu")
    assert code == 0, stderr
    assert f"{questions}:1: skipped" in stderr and "longer than this model can read" in stderr
    assert {Path(line).parent.name for line in stdout.splitlines()} == {"sentence_2"}
