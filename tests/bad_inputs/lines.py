"""Lines that one tokenizer or one line-end convention used to turn into a lost file: a line past spaCy's own
limit, files whose lines end in a carriage return alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.bad_inputs.machinery import CONLLU, Case, Env, reads_like_clean

SPACY_LIMIT = 1_000_000  # spaCy's Language.max_length, where its error E088 was raised
LONG_WORDS = ("anticonstitutionnellement " * (SPACY_LIMIT // 25))[: SPACY_LIMIT + 1]  # 1,000,001 characters, 38,462 words
FRENCH = "Le chat dort .\n{line}\nIl pleut .\n"


def french_error(env: Env, text: str, *options: str) -> str:
    """`toolkit predict FRENCH_ARCHIVE` on *text*: three blocks, the middle one an error; its error."""
    archive = env.request.getfixturevalue("french_archive")
    env.capsys.readouterr()
    path = env.write({"input.txt": text})
    code, out, err = env.cli("predict", archive, path, "--device", "cpu", *options)
    assert code == 0 and "Traceback" not in err, err
    blocks = out.strip("\n").split("\n\n")
    assert len(blocks) == 3 and "# error" not in blocks[0] + blocks[2], blocks[:1] + blocks[2:]
    assert blocks[0].startswith("# sent_id = 1") and blocks[2].startswith("# sent_id = 3")
    (error,) = [line for line in blocks[1].splitlines() if line.startswith("# error = ")]
    return env.clean(error.removeprefix("# error = "))


def french_corpus(env: Env) -> str:
    archive = env.request.getfixturevalue("french_archive")
    env.capsys.readouterr()
    (env.tmp / "corpus").mkdir()
    (env.tmp / "corpus" / "in.txt").write_text(FRENCH.format(line=LONG_WORDS), encoding="utf-8")
    code, _, err = env.cli("predict", archive, env.tmp / "corpus", "-o", env.tmp / "out", "--engine", "local", "--device", "cpu")
    assert code == 0 and "Traceback" not in err, err
    return err.strip().splitlines()[-1].split(" shards written")[0] + ": " + err.strip().splitlines()[-1].split(": ", 1)[1]


def python_api_error(env: Env) -> str:
    from toolkit import load_predictor

    predictor = load_predictor(env.archive(), device="cpu")
    outputs = predictor.predict_batch(["what state border s0", "word " * 220_000, "citi in s0"])
    assert "error" not in outputs[0] and "error" not in outputs[2]
    return outputs[1]["error"]


# ---- lines that end in a carriage return alone (classic Mac OS)


def to_cr(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")


def predict_cr_conllu(env: Env) -> None:
    """Dependency predict on CoNLL-U with CR line ends writes what it writes for the same file with LF ends."""
    archive = env.request.getfixturevalue("dependency_archive")
    env.capsys.readouterr()
    outputs = []
    for name, data in (("lf.conllu", CONLLU.encode()), ("cr.conllu", to_cr(CONLLU.encode()))):
        code, out, err = env.cli("predict", archive, env.write({name: data}), "--device", "cpu")
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1] and outputs[0].count("# sent_id") == 2, outputs


def evaluate_cr_conllu(env: Env) -> None:
    archive = env.request.getfixturevalue("dependency_archive")
    env.capsys.readouterr()
    metrics = []
    for name, data in (("lf.conllu", CONLLU.encode()), ("cr.conllu", to_cr(CONLLU.encode()))):
        code, out, err = env.cli("evaluate", archive, env.write({name: data}), "--device", "cpu")
        assert code == 0, err
        metrics.append(json.loads(out))
    assert metrics[0] == metrics[1] and metrics[0]["examples"] == 2, metrics


def predict_cr_lines(engine: bool) -> Callable[[Env], None]:
    """Plain-text questions with CR line ends: one record per line, the same as with LF ends (one file, or a corpus folder)."""

    def check(env: Env) -> None:
        questions = b"what state border s0\rciti in s0\r\rciti in s0"
        records = []
        for name, data in (("lf", questions.replace(b"\r", b"\n")), ("cr", questions)):
            (env.tmp / name).mkdir()
            path = env.tmp / name / "in.txt"
            path.write_bytes(data)
            if engine:
                code, _, err = env.cli("predict", env.archive(), env.tmp / name, "-o", env.tmp / f"{name}-out", "--engine", "local", "--device", "cpu")
                out = (env.tmp / f"{name}-out" / "in.jsonl").read_text(encoding="utf-8")
            else:
                code, out, err = env.cli("predict", env.archive(), path, "--device", "cpu")
            assert code == 0, err
            records.append(out)
        assert records[0] == records[1] and records[0].count("\n") == 4, records

    return check


CASES: list[Case] = [
    Case(
        "line-spacy-limit",
        "a line of 1,000,001 characters between two sentences, for a French parser (spaCy's E088 as a traceback: nothing written for any line)",
        "`toolkit predict` (French archive: spaCy tokenizes its raw text)",
        "a sentence of 38462 words is longer than this model can parse (512 words: search max_steps and decoder positions)",
        lambda env: french_error(env, FRENCH.format(line=LONG_WORDS)).split(": ", 1)[1],
    ),
    Case(
        "line-spacy-limit-json",
        'the same text as `{"sentence": ...}`',
        "`toolkit predict` (French archive)",
        "a sentence of 38462 words is longer than this model can parse (512 words: search max_steps and decoder positions)",
        lambda env: french_error(env, FRENCH.format(line=json.dumps({"sentence": LONG_WORDS}))).split(": ", 1)[1],
    ),
    Case(
        "line-spacy-limit-corpus",
        "the same file as a corpus (`--engine local` aborted the whole job; under Dask the shard failed after its retries)",
        "`toolkit predict --engine local` (French archive)",
        "1 of 1: 3 input lines, 3 records, 1 error records",
        french_corpus,
    ),
    Case(
        "line-past-predict-python",
        "a text of 1,100,000 characters given to `predict_batch` from Python, between two questions (only a line read from a file was bounded)",
        "`Predictor.predict_batch` (seq2seq archive)",
        "a line of 1,100,000 characters is longer than predict reads (1,048,576 at most)",
        python_api_error,
    ),
    Case(
        "cr-only-conllu-predict",
        "CoNLL-U whose lines end in CR alone, as classic Mac OS saved it (read as one line of raw text: 99 nonsense sentences, exit 0)",
        "`toolkit predict` (dependency archive)",
        "the same output as the file with LF ends",
        predict_cr_conllu,
        message=False,
    ),
    Case(
        "cr-only-conllu-evaluate",
        "the same file as gold (refused: `a sentence without words`)",
        "`toolkit evaluate` (dependency archive)",
        "the same scores as the file with LF ends",
        evaluate_cr_conllu,
        message=False,
    ),
    Case(
        "cr-only-text-predict",
        "plain-text questions with CR line ends, a blank line among them",
        "`toolkit predict` (seq2seq archive)",
        "one record per line, as with LF ends",
        predict_cr_lines(engine=False),
        message=False,
    ),
    Case(
        "cr-only-text-corpus",
        "the same file in a corpus folder",
        "`toolkit predict --engine local` (seq2seq archive)",
        "one record per line, as with LF ends",
        predict_cr_lines(engine=True),
        message=False,
    ),
    Case(
        "cr-only-tsv",
        "a TSV file with CR line ends",
        "reader `tsv`",
        "reads as the clean file",
        reads_like_clean("tsv", to_cr),
        message=False,
    ),
    Case(
        "cr-only-penman",
        "PENMAN with CR line ends (blank lines between graphs too)",
        "reader `penman` (`lemmas: false`)",
        "reads as the clean file",
        reads_like_clean("penman", to_cr),
        message=False,
    ),
]
