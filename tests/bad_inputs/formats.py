"""Formats other tools read back: CoNLL-U ranges, AMR metadata; graphs whose oracle must stay linear."""

from __future__ import annotations

import json
from collections.abc import Callable

import conllu
import penman

from tests.bad_inputs.machinery import CONLLU, WHERE, Case, Env, conllu_row, reader_error
from tests.conftest import FIXTURES
from transition_systems.amr.penman_text import read_metadata_value, write_penman

# ---- CoNLL-U multiword-token ranges and empty nodes (issue 60, item 11)


def mwt(span: str, form: str) -> str:
    return f"{span}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_\n"


TWO_WORDS = conllu_row(1, "go", 0, "root") + conllu_row(2, "now", 1)
PAST_THE_END = conllu_row(1, "go", 0, "root") + mwt("2-5", "nowhere") + conllu_row(2, "now", 1) + "\n"  # the case
RANGE_MESSAGE = "multiword token 2-5 ends past the sentence's last word (2)"


def evaluate_gold_error(env: Env) -> str:
    """`toolkit evaluate` on a gold file with the range: one line, before any decoding (it scored UAS 1.0)."""
    archive = env.request.getfixturevalue("dependency_archive")
    env.capsys.readouterr()
    return env.cli_error("evaluate", archive, env.write({"gold.conllu": CONLLU + PAST_THE_END}), "--device", "cpu")


def predict_error_comment(env: Env) -> str:
    """`toolkit predict --predictor dependency` on CoNLL-U with the range: the sentence's record is its error, the others are parsed."""
    archive = env.request.getfixturevalue("dependency_archive")
    env.capsys.readouterr()
    path = env.write({"input.conllu": CONLLU + PAST_THE_END})
    code, out, err = env.cli("predict", archive, path, "--predictor", "dependency", "--device", "cpu")
    sentences = out.strip().split("\n\n")
    assert code == 0 and len(sentences) == 3 and "# error" not in sentences[0] + sentences[1], (out, err)
    [error] = [line for line in sentences[2].splitlines() if line.startswith("# error = ")]
    assert sentences[2].splitlines() == [error]  # no rows copied: the range used to be written out as it was
    return env.clean(error.removeprefix("# error = "))


CONLLU_CASES = [
    Case(
        "range-past-end-conllu",
        "multiword token `2-5` in a 2-word sentence (as reported)",
        WHERE["conllu"],
        f"data.conllu:2: {RANGE_MESSAGE}",
        reader_error("conllu", {"data.conllu": PAST_THE_END}),
    ),
    Case(
        "range-past-end-evaluate",
        "the same sentence in a gold file",
        "`toolkit evaluate` (a dependency archive)",
        f"error: gold.conllu:11: {RANGE_MESSAGE}",
        evaluate_gold_error,
    ),
    Case(
        "range-past-end-predict",
        "the same sentence as CoNLL-U input, after two good ones",
        "`toolkit predict --predictor dependency` (its `# error =` comment)",
        f"input.conllu:11: {RANGE_MESSAGE}",
        predict_error_comment,
    ),
    Case(
        "range-overlap-conllu",
        "multiword tokens `1-2` and `2-3`",
        WHERE["conllu"],
        "data.conllu:3: multiword tokens 1-2 and 2-3 overlap",
        reader_error(
            "conllu",
            {"data.conllu": mwt("1-2", "gon") + conllu_row(1, "go", 0, "root") + mwt("2-3", "nowt") + conllu_row(2, "now", 1) + conllu_row(3, "t", 1) + "\n"},
        ),
    ),
    Case(
        "range-one-word-conllu",
        "multiword token `1-1`",
        WHERE["conllu"],
        "data.conllu:1: malformed CoNLL-U line: multiword token 1-1 must span two words or more (3-4: its start before its end)",
        reader_error("conllu", {"data.conllu": mwt("1-1", "go") + TWO_WORDS + "\n"}),
    ),
    Case(
        "range-after-words-conllu",
        "multiword token `1-2` after its words",
        WHERE["conllu"],
        "data.conllu:3: multiword token 1-2 is out of place: its line comes right before its first word 1, and the next word here is 3",
        reader_error("conllu", {"data.conllu": TWO_WORDS + mwt("1-2", "gonow") + "\n"}),
    ),
    Case(
        "empty-node-place-conllu",
        "empty node `2.1` between words 1 and 2",
        WHERE["conllu"],
        "data.conllu:2: empty node 2.1 is out of place: empty node i.k comes right after word i (k = 1) or after empty node i.(k-1)",
        reader_error(
            "conllu", {"data.conllu": conllu_row(1, "go", 0, "root") + "2.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t0:root\t_\n" + conllu_row(2, "now", 1) + "\n"}
        ),
    ),
]


# ---- metadata lines that other tools read back (issue 60, item 12)


def predicted(env: Env, predictor: str, name: str, text: str) -> str:
    """The output of `toolkit predict --predictor PREDICTOR` (its archive) on the file *name* holding *text*."""
    archive = env.request.getfixturevalue(f"{predictor}_archive")
    env.capsys.readouterr()
    code, out, err = env.cli("predict", archive, env.write({name: text}), "--predictor", predictor, "--device", "cpu")
    assert code == 0, err
    return out


def amr_metadata(name: str, text: str) -> list[dict[str, str]]:
    """A check's helper: what penman's metadata parser reads from each graph of the AMR predictor's output, unescaped."""

    def check(env: Env) -> list[dict[str, str]]:
        return [
            {key: env.clean(read_metadata_value(value)) for key, value in graph.metadata.items()} for graph in penman.loads(predicted(env, "amr", name, text))
        ]

    return check


def amr_snt_with_id(env: Env) -> None:
    out = predicted(env, "amr", "input.txt", "the prince ::id 2 sleeps\n")
    assert out.splitlines()[1] == r"# ::snt the prince :\:id 2 sleeps"
    [graph] = penman.loads(out)
    # the untrained archive's parse may carry a warning (its span guards stop it), never a key made from the sentence
    assert graph.metadata.keys() - {"warning"} == {"id", "snt", "tok"} and read_metadata_value(graph.metadata["snt"]) == "the prince ::id 2 sleeps"
    assert graph.metadata["id"] == "1"


def amr_token_with_a_line_break(env: Env) -> str:
    [metadata] = amr_metadata("input.txt", '{"tokens": ["a", "b\\n# ::id 3"]}\n')(env)
    assert metadata["id"] == "1"  # the token's line break made a line `# ::id 3` of its own
    return metadata["error"]


def amr_path_with_colons(env: Env) -> str:
    [metadata] = amr_metadata("in::put.txt", "\n")(env)
    assert metadata.keys() == {"id", "snt", "tok", "error"}
    return metadata["error"]


def conllu_text_with_comments(env: Env) -> None:
    text = "# text = a = b # sent_id = 5 ::snt c"
    [sentence] = conllu.parse(predicted(env, "dependency", "input.txt", text + "\n"))
    assert sentence.metadata == {"sent_id": "1", "text": text} and [token["form"] for token in sentence][:3] == ["#", "text", "="]


METADATA_CASES = [
    Case(
        "metadata-id-amr",
        "the sentence `the prince ::id 2 sleeps` (as reported)",
        "`toolkit predict --predictor amr`",
        r"penman reads `snt` back whole: `# ::snt the prince :\:id 2 sleeps`, `::` written `:\:` (read as `snt` `the prince` and `id` `2 sleeps` before)",
        message=False,
        check=amr_snt_with_id,
    ),
    Case(
        "metadata-token-newline-amr",
        r'`{"tokens": ["a", "b\n# ::id 3"]}`',
        "`toolkit predict --predictor amr` (the `# ::error` penman reads)",
        'input.txt:1: "tokens" must be a list of strings, none empty or with spaces in it',
        amr_token_with_a_line_break,
    ),
    Case(
        "metadata-path-amr",
        "an empty line in a file named `in::put.txt`",
        "`toolkit predict --predictor amr` (the `# ::error` penman reads)",
        "in::put.txt:1: an empty sentence (no words to parse)",
        amr_path_with_colons,
    ),
    Case(
        "metadata-text-conllu",
        "the sentence `# text = a = b # sent_id = 5 ::snt c`",
        "`toolkit predict --predictor dependency`",
        "the `conllu` library reads `# text` back as the sentence, and `# sent_id` as its line",
        message=False,
        check=conllu_text_with_comments,
    ),
]


# ---- AMR graphs of degenerate shapes: the oracle's work stays linear (issue 60, item 8)


def oracle_on(shape: str, size: int) -> Callable[[Env], None]:
    """`toolkit oracle` on one graph of *shape*: an exact round trip; and twice the graph, twice the oracle's work."""

    def check(env: Env) -> None:
        from tests.test_large_graphs import SHAPES, work

        graph, tokens = SHAPES[shape](size)
        data = env.write({"data.txt": f"# ::id big\n# ::tok {' '.join(tokens)}\n{write_penman(graph.triples, graph.top)}\n"})
        env.monkeypatch.setenv("TRAIN", "x")
        env.monkeypatch.setenv("TEST", "x")
        code, out, err = env.cli("oracle", FIXTURES / "tiny_amr.jsonnet", data, "-o", "{grammar: {max_nodes: 10000, max_actions_per_token: 20}}")
        assert code == 0 and json.loads(out)["exact_round_trips"] == 1, err
        small, large = (work(*SHAPES[shape](n)) for n in (300, 600))
        assert large / small < 2.2, (small, large)

    return check


ORACLE_CASES = [
    Case(
        "star-oracle-amr",
        "a graph of 1,000 nodes of one concept, all children of the top (as reported: 55 s at 5,000 nodes)",
        "`toolkit oracle` (`tests/test_large_graphs.py`)",
        "an exact round trip; twice the nodes, twice the oracle's work (it was 3.1 times, and same_graph gave up: a traceback)",
        message=False,
        check=oracle_on("star", 1000),
    ),
    Case(
        "parents-oracle-amr",
        "a node with 998 re-entrant parents (1,000 nodes)",
        "`toolkit oracle` (`tests/test_large_graphs.py`)",
        "an exact round trip; twice the nodes, twice the oracle's work (it was 2.4 times)",
        message=False,
        check=oracle_on("parents", 1000),
    ),
    Case(
        "names-oracle-amr",
        "333 cities named Paris under one `and`",
        "`toolkit oracle` (`tests/test_large_graphs.py`)",
        "an exact round trip; twice the nodes, twice the oracle's work (it was 2.4 times: each mention went over every name)",
        message=False,
        check=oracle_on("names", 1000),
    ),
]

CASES: list[Case] = [*CONLLU_CASES, *METADATA_CASES, *ORACLE_CASES]
