"""A table of bad inputs, each met by a reader or a `toolkit` command, and the outcome it must have.

Every case is one row of ``docs/bad_inputs.md``: :func:`test_the_doc_is_the_table` checks that the
doc's table is exactly :func:`render_table` of :data:`CASES`, so no documented row goes untested
and no tested case goes undocumented. After changing a case, rewrite the doc's table with
``python -m tests.test_bad_inputs --write``.

An outcome in backticks is the exact message (``…`` stands for a part that varies: an installed
version, a library's own wording); the temporary directory is left out of paths. A CLI error must
be one ``error:`` line with exit status 1 and no traceback. A case marked as a known gap still
fails in the way it says (``xfail(strict=True)``): when someone fixes it, the test fails until the
row is updated.
"""

from __future__ import annotations

import json
import sys

import pytest
import torch

from tests.bad_inputs import (
    claims,
    commands,
    configs,
    corpus,
    execution,
    formats,
    lines,
    outputs,
    plugins,
    readers,
    search_options,
    sources,
    text_tokens,
    training,
)
from tests.bad_inputs.machinery import BEGIN, DOC, END, Case, Env, matches
from tests.conftest import data_root, run

CASES = [
    *readers.READER_CASES,
    *commands.COMMAND_CASES,
    *configs.CONFIG_CASES,
    *(
        case
        for module in (training, outputs, execution, sources, formats, plugins, corpus, lines, search_options, text_tokens, claims)
        for case in module.CASES
    ),
]


# ------------------------------------------------------------------ the doc


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table(cases: list[Case] = CASES) -> str:
    rows = ["| case | input | reader / command | outcome |", "| --- | --- | --- | --- |"]
    for case in cases:
        outcome = f"`{case.outcome}`" if case.message else case.outcome
        rows.append(f"| {case.name} | {cell(case.input)} | {cell(case.where)} | {cell(outcome)} |")
    return "\n".join(rows)


def doc_table(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def test_the_doc_is_the_table():
    assert len({case.name for case in CASES}) == len(CASES), "case names must be unique"
    assert doc_table(DOC.read_text(encoding="utf-8")) == render_table(), "docs/bad_inputs.md is stale: python -m tests.test_bad_inputs --write"


# ------------------------------------------------------------------ the test


def parameters():
    for case in CASES:
        marks = [pytest.mark.xfail(raises=case.known_gap, strict=True, reason=case.outcome)] if case.known_gap else []
        yield pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", list(parameters()))
def test_bad_input(case, tmp_path, monkeypatch, capsys, request):
    env = Env(tmp_path, monkeypatch, capsys, request)
    outcome = case.check(env)
    if case.message:
        assert outcome is not None and matches(case.outcome, outcome), f"\nexpected: {case.outcome}\nactual:   {outcome}"
    else:
        assert outcome is None


def test_predictor_keeps_10000_lines_in_order(seq2seq_archive, tmp_path, monkeypatch, capsys):
    """10,000 lines, 1% garbage (empty lines, invalid JSON, over-long lines): 10,000 records in input order."""
    import random

    questions = [line.split("\t")[0] for line in (data_root() / "geo" / "train.txt").read_text(encoding="utf-8").splitlines()]
    rng = random.Random(0)
    garbage = ["", "   ", '{"question": "what', "{not json}", '{"question": 7}', " ".join(["state"] * 1500)]
    lines, bad = [], set()
    for i in range(10_000):
        if rng.random() < 0.01:
            lines.append(rng.choice(garbage))
            bad.add(i)
        else:
            question = rng.choice(questions)
            lines.append(json.dumps({"question": question}) if rng.random() < 0.3 else question)
    path = tmp_path / "input.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "output.jsonl"
    code, _, err = run(monkeypatch, capsys, "predict", seq2seq_archive, path, "--batch-size", 64, "--device", "cpu", "-o", output)
    assert code == 0, err
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 10_000 and 50 <= len(bad) <= 150
    for i, (line, record) in enumerate(zip(lines, records)):
        if i in bad:
            assert set(record) == {"error", "input"} and record["input"] == line, (i, record)
        else:
            question = json.loads(line)["question"] if line.startswith("{") else line
            assert record["question"] == " ".join(question.split()) and isinstance(record["logical_form"], str), (i, record)


def test_no_flipped_byte_of_an_archive_is_ever_used(seq2seq_archive, tmp_path):
    """25 random single-byte flips: each archive is refused in one ArchiveError, or (a flip in the gzip
    header's time stamp, which no checksum covers and nothing reads) loads with the very same weights.
    """
    import random

    from toolkit.archive import load_archive
    from toolkit.errors import ArchiveError

    original = seq2seq_archive.read_bytes()
    weights = load_archive(seq2seq_archive).model.state_dict()
    rng, refused = random.Random(11), 0
    for trial in range(25):
        data = bytearray(original)
        position = rng.randrange(len(data))
        data[position] ^= 1 << rng.randrange(8)
        path = tmp_path / f"flip{trial}.tar.gz"
        path.write_bytes(bytes(data))
        try:
            loaded = load_archive(path).model.state_dict()
        except ArchiveError as error:
            assert "\n" not in str(error)
            refused += 1
            continue
        assert 4 <= position < 10, f"a flip at byte {position} of {len(data)} loaded"
        assert all(torch.equal(loaded[name], weights[name]) for name in weights)
    assert refused >= 20


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        text = DOC.read_text(encoding="utf-8")
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        DOC.write_text(text[:start] + "\n" + render_table() + "\n" + text[end:], encoding="utf-8")
    else:
        print(render_table())
