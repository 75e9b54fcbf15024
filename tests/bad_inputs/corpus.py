"""Corpus folders (``toolkit predict --engine``) that must hold one record per input line of the inputs as they
are now, whatever ran in them before; sizes and scheduler addresses that must be one line.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.bad_inputs.machinery import Case, Env
from tests.conftest import require_dask
from toolkit.corpus.engines import LocalEngine
from toolkit.corpus.manifest import MANIFEST_NAME, SUMMARY_NAME
from toolkit.corpus.run import predict_corpus
from toolkit.corpus.worker import PredictionSettings, parse_shard
from toolkit.errors import ToolkitError
from toolkit.files import DirectoryLock

SENTENCES = ["The cat sat on the mat .", "Birds sing .", "It rains in Paris today .", "We went home ."]
TEXT = "".join(line + "\n" for line in SENTENCES * 20)  # 80 lines, 1,580 bytes
OWN = {MANIFEST_NAME, SUMMARY_NAME, DirectoryLock.NAME}


class Stopped(LocalEngine):
    """The local engine, stopped before shard *at* as a kill would stop it (*how*), or with an input edited there.

    ``between``: after the shards before it were recorded. ``unrecorded``: after its output was renamed
    into place, before its entry was written. ``mid-shard``: while its temporary file was being
    written (a file nobody holds is left). ``edited``: *edit* runs, and the run goes on.
    """

    def __init__(self, at: int, how: str, edit: Callable[[], object] | None = None):
        super().__init__()
        self.at, self.how, self.edit = at, how, edit

    def parse(self, shards, folder, archive_sha256):
        for index, shard in enumerate(shards):
            if index == self.at:
                if self.how == "edited":
                    self.edit()
                elif self.how == "unrecorded":
                    parse_shard(self.settings, shard, folder, archive_sha256)
                    raise KeyboardInterrupt
                elif self.how == "mid-shard":
                    target = Path(folder) / shard.output
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.with_name(f".{target.name}.0123abcd.tmp").write_text("half a shard\n")
                    raise KeyboardInterrupt
                else:
                    raise KeyboardInterrupt
            yield from super().parse([shard], folder, archive_sha256)


def outputs(folder: Path) -> dict[str, int]:
    """Every file of the folder but the run's own records, with its number of records."""
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8").count("\n")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in OWN
    }


def corpus_of(env: Env, files: dict[str, str]) -> Path:
    folder = env.tmp / "corpus"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def local(env: Env, *arguments) -> tuple[int, str]:
    """`toolkit predict ARCHIVE ARGUMENTS --engine local`: its exit status and stderr."""
    code, _, err = env.cli("predict", env.archive(), *arguments, "--engine", "local", "--device", "cpu")
    return code, err


# ---- outputs of another plan (item 1)


def shard_size_changed(env: Env) -> None:
    corpus, out = corpus_of(env, {"in.txt": TEXT}), env.tmp / "out"
    assert local(env, corpus, "-o", out, "--shard-size", "200")[0] == 0
    assert len(outputs(out)) > 5
    code, err = local(env, corpus, "-o", out)
    assert code == 0 and "80 input lines, 80 records" in err, err
    assert outputs(out) == {"in.jsonl": 80}


def input_removed(env: Env) -> None:
    corpus, out = corpus_of(env, {"a.txt": TEXT, "b.txt": TEXT[:200]}), env.tmp / "out"
    assert local(env, corpus, "-o", out)[0] == 0 and set(outputs(out)) == {"a.jsonl", "b.jsonl"}
    (corpus / "b.txt").unlink()
    assert local(env, corpus, "-o", out)[0] == 0
    assert outputs(out) == {"a.jsonl": 80}


def unrecorded_then_resized(env: Env) -> None:
    corpus, out = corpus_of(env, {"in.txt": TEXT}), env.tmp / "out"
    settings = PredictionSettings(str(env.archive()), device="cpu")
    with pytest.raises(KeyboardInterrupt):
        predict_corpus(settings, [str(corpus)], out, Stopped(2, "unrecorded"), shard_size=200)
    assert "in-00002.jsonl" in outputs(out), "written, not recorded"
    predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=400)
    assert sum(outputs(out).values()) == 80 and all(name.startswith("in-") for name in outputs(out))
    predict_corpus(settings, [str(corpus)], out, LocalEngine())
    assert outputs(out) == {"in.jsonl": 80}


def cut_short_between_runs(env: Env) -> None:
    corpus, out = corpus_of(env, {"news/in.txt": TEXT}), env.tmp / "out"
    assert local(env, corpus, "-o", out, "--shard-size", "200")[0] == 0
    (corpus / "news" / "in.txt").write_text(TEXT[:260], encoding="utf-8")
    assert local(env, corpus, "-o", out, "--shard-size", "200")[0] == 0
    assert sum(outputs(out).values()) == len(TEXT[:260].splitlines()) and len(outputs(out)) == 2


# ---- an output folder in the input tree (item 2)


def glob_reaches_output(env: Env) -> None:
    corpus_of(env, {"in.txt": TEXT})
    env.monkeypatch.chdir(env.tmp)
    for _ in range(2):
        code, err = local(env, "corpus/**", "-o", "corpus/parsed")
        assert code == 0 and "80 input lines" in err, err
    assert outputs(env.tmp / "corpus") == {"in.txt": 80, "parsed/in.jsonl": 80}


def folder_holds_output(env: Env) -> None:
    corpus = corpus_of(env, {"in.txt": TEXT})
    for _ in range(2):
        code, err = local(env, corpus, "-o", corpus / "parsed")
        assert code == 0 and "80 input lines" in err, err
    assert outputs(corpus) == {"in.txt": 80, "parsed/in.jsonl": 80}


def output_holds_input(env: Env) -> str:
    corpus = corpus_of(env, {"in.txt": TEXT})
    return env.cli_error("predict", env.archive(), corpus / "in.txt", "-o", corpus, "--engine", "local")


# ---- globs through links (item 3)


def symlink_loop(env: Env) -> None:
    corpus = corpus_of(env, {"loop/a.txt": TEXT})
    (corpus / "loop" / "sub").mkdir()
    (corpus / "loop" / "sub" / "up").symlink_to("..")
    code, err = local(env, str(corpus / "loop" / "**" / "*.txt"), "-o", env.tmp / "out")
    assert code == 0 and "1 of 1 shards written" in err and "80 input lines" in err, err


def two_symlink_loops(env: Env) -> None:
    corpus = corpus_of(env, {"loop/a.txt": TEXT})
    for name, target in (("up", ".."), ("top", "../.."), ("self", ".")):
        (corpus / "loop" / "sub").mkdir(exist_ok=True)
        (corpus / "loop" / "sub" / name).symlink_to(target)
    code, err = local(env, str(corpus / "**" / "*.txt"), "-o", env.tmp / "out")
    assert code == 0 and "1 of 1 shards written" in err and "80 input lines" in err, err


def file_and_its_link(env: Env) -> None:
    corpus = corpus_of(env, {"a.txt": TEXT})
    (corpus / "same.txt").symlink_to("a.txt")
    (corpus / "hard.txt").hardlink_to(corpus / "a.txt")
    code, err = local(env, corpus / "a.txt", corpus, str(corpus / "*.txt"), "-o", env.tmp / "out")
    assert code == 0 and "1 of 1 shards written" in err, err
    assert outputs(env.tmp / "out") == {"a.jsonl": 80}


# ---- inputs that change while they are parsed (item 4)


def changed_mid_run(edit: Callable[[Path], object], shard_size: int = 300) -> Callable[[Env], str]:
    """A check: *edit* the input after the run's first shard; the run's one line; the rerun holds the input as it is now."""

    def check(env: Env) -> str:
        corpus, out = corpus_of(env, {"in.txt": TEXT, "later.txt": "Birds sing .\n"}), env.tmp / "out"
        settings = PredictionSettings(str(env.archive()), device="cpu")
        path = corpus / "in.txt"
        with pytest.raises(ToolkitError) as error:
            predict_corpus(settings, [str(corpus)], out, Stopped(1, "edited", lambda: edit(path)), shard_size=shard_size)
        if path.exists():
            summary = predict_corpus(settings, [str(corpus)], out, LocalEngine(), shard_size=shard_size)
            assert summary["lines"] == summary["records"] == path.read_text().count("\n") + 1 == sum(outputs(out).values())
        return env.clean(str(error.value))

    return check


def write(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text, encoding="utf-8")


# ---- --address at what is no Dask scheduler (item 9)


@contextmanager
def service(greeting: bytes | None) -> Iterator[str]:
    """A TCP service on a free local port that sends *greeting* to each connection (``None``: nothing), and its address."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed: the case is over
                return
            held.append(connection)
            if greeting is not None:
                connection.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for connection in held:
            connection.close()


def dask_address(greeting: bytes | None, scheme: str = "tcp") -> Callable[[Env], str]:
    def check(env: Env) -> str:
        require_dask()
        import dask

        corpus = corpus_of(env, {"in.txt": TEXT})
        with service(greeting) as address, dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
            address = address.replace("tcp", scheme, 1)
            message = env.cli_error("predict", env.archive(), corpus, "-o", env.tmp / "out", "--engine", "dask", "--address", address)
        return message.replace(address.rsplit(":", 1)[1], "PORT")

    return check


def usage(*arguments: str) -> Callable[[Env], str]:
    def check(env: Env) -> str:
        code, out, err = env.cli("predict", "model.tar.gz", "corpus", "-o", "out", "--engine", "local", *arguments)
        assert code == 2 and out == "" and "Traceback" not in err, (code, err)
        return err.strip().splitlines()[-1]

    return check


WHERE = "`toolkit predict --engine local` (seq2seq archive)"

CASES: list[Case] = [
    Case(
        "corpus-shard-size-changed",
        "a second run into the same folder with another `--shard-size` (the old ranges stayed beside the new whole file: 609 records for 300 lines, exit 0)",
        WHERE,
        "the outputs of the first plan are removed: the folder holds `in.jsonl` alone, 80 records for 80 lines",
        shard_size_changed,
        message=False,
    ),
    Case(
        "corpus-input-removed",
        "a file of the input folder deleted between two runs",
        WHERE,
        "its output is removed; the other is kept",
        input_removed,
        message=False,
    ),
    Case(
        "corpus-unrecorded-output",
        "a run stopped after a shard's output was renamed into place and before its manifest entry, then runs with other shard sizes",
        "`predict_corpus` (seq2seq archive)",
        "the unrecorded output (named in the manifest before it was written) is removed with the rest of its plan",
        unrecorded_then_resized,
        message=False,
    ),
    Case(
        "corpus-input-cut-short",
        "an input cut from 8 shards to 2 between two runs",
        WHERE,
        "the 6 ranges past its end are removed; 2 outputs hold its lines",
        cut_short_between_runs,
        message=False,
    ),
    Case(
        "corpus-glob-reaches-output",
        "`'corpus/**' -o corpus/parsed`, run twice (the second parsed its own outputs, manifest and summary into `corpus/parsed/parsed/`)",
        WHERE,
        "the output folder is never an input: the second run parses nothing new, and `corpus/parsed` holds `in.jsonl` alone",
        glob_reaches_output,
        message=False,
    ),
    Case(
        "corpus-folder-holds-output",
        "`corpus/ -o corpus/parsed`, run twice (refused as `is the input`, though the glob was not)",
        WHERE,
        "as the glob: the output folder is left out of the inputs, and both runs write `parsed/in.jsonl` alone",
        folder_holds_output,
        message=False,
    ),
    Case(
        "corpus-output-holds-input",
        "`corpus/in.txt -o corpus` (outputs written among the inputs)",
        WHERE,
        "error: the output folder corpus holds the input corpus/in.txt: its outputs could overwrite what is read; name another folder",
        output_holds_input,
    ),
    Case(
        "corpus-glob-symlink-loop",
        "`'loop/**/*.txt'` with `loop/sub/up -> ..` (the one file was parsed 41 times, exit 0)",
        WHERE,
        "each real folder is entered once: 1 shard, 80 records",
        symlink_loop,
        message=False,
    ),
    Case(
        "corpus-glob-symlink-loops",
        "`'corpus/**/*.txt'` with three links back up at two levels (2^40 paths for `glob.glob`)",
        WHERE,
        "ends at once: 1 shard, 80 records",
        two_symlink_loops,
        message=False,
    ),
    Case(
        "corpus-file-and-its-links",
        "a file named directly, through its folder, by a glob, a symbolic link and a hard link",
        WHERE,
        "parsed once, under its first name: `a.jsonl`",
        file_and_its_link,
        message=False,
    ),
    Case(
        "corpus-input-shrinks-mid-run",
        "an input truncated while its later shards wait (they were recorded as finished with `lines: 0`, and the job said all were written)",
        "`predict_corpus` (seq2seq archive), shards of 300 bytes; then the same run again",
        "5 of 7 shards failed (the first: corpus/in.txt (bytes 301-…, from line …): corpus/in.txt changed while the corpus was parsed "
        "(1,580 bytes when it was cut into shards, 20 now): nothing of corpus/in.txt (bytes 301-…, from line …) was written; rerun the command "
        "to parse it as it is now); the others are written: rerun the command to parse the failed ones",
        changed_mid_run(write("Birds sing .\nCats .\n")),
    ),
    Case(
        "corpus-input-grows-mid-run",
        "an input appended to after its only shard was parsed",
        "`predict_corpus` (seq2seq archive), one shard; then the same run again",
        "corpus/in.txt changed while the corpus was parsed (1 input(s) in all): rerun the command to parse them as they are now",
        changed_mid_run(lambda path: path.write_text(TEXT + "Birds sing .\n", encoding="utf-8"), shard_size=1 << 20),
    ),
    Case(
        "corpus-input-rewritten-mid-run",
        "an input rewritten at the same size while its later shards wait (the ranges no longer fall on its lines)",
        "`predict_corpus` (seq2seq archive), shards of 300 bytes; then the same run again",
        "5 of 7 shards failed (the first: corpus/in.txt (bytes 301-…, from line …): corpus/in.txt changed while the corpus was parsed "
        "(1,580 bytes when it was cut into shards, 1,580 now): nothing of corpus/in.txt (bytes 301-…, from line …) was written; rerun the "
        "command to parse it as it is now); the others are written: rerun the command to parse the failed ones",
        changed_mid_run(write(TEXT.replace("Birds sing .\nIt", "Birds sang .\nIt"))),
    ),
    Case(
        "corpus-input-deleted-mid-run",
        "an input deleted while its later shards wait",
        "`predict_corpus` (seq2seq archive), shards of 300 bytes",
        "5 of 7 shards failed (the first: corpus/in.txt (bytes 301-…, from line …): cannot read the input file corpus/in.txt: no such file "
        "or directory); the others are written: rerun the command to parse the failed ones",
        changed_mid_run(Path.unlink),
    ),
    Case(
        "shard-size-inf",
        "`--shard-size inf` (an `OverflowError` traceback)",
        "`toolkit predict --engine local`",
        "Error: Invalid value for '--shard-size': 'inf' is more bytes than any file holds: at most 1024P",
        usage("--shard-size", "inf"),
    ),
    Case(
        "shard-size-huge-unit",
        "`--shard-size 1e308G` (an `OverflowError` traceback)",
        "`toolkit predict --engine local`",
        "Error: Invalid value for '--shard-size': '1e308G' is more bytes than any file holds: at most 1024P",
        usage("--shard-size", "1e308G"),
    ),
    Case(
        "shard-size-nan",
        "`--shard-size nan`",
        "`toolkit predict --engine local`",
        "Error: Invalid value for '--shard-size': 'nan' is not a size in bytes (e.g. 65536, 512K, 64M, 1G)",
        usage("--shard-size", "nan"),
    ),
    Case(
        "shard-size-fraction",
        "`--shard-size 0.5K` (512 bytes) and `--shard-size 0.4` (no byte)",
        "`toolkit predict --engine local`",
        "Error: Invalid value for '--shard-size': '0.4' is not a size in bytes (e.g. 65536, 512K, 64M, 1G)",
        usage("--shard-size", "0.5K", "--shard-size", "0.4"),
    ),
    Case(
        "dask-address-banner",
        "`--address` at a service that greets with a banner, as SSH does (a 22-frame traceback: `Unable to allocate 2.82 EiB`)",
        "`toolkit predict --engine dask`, Dask's connect timeout 2 s",
        "error: the service at tcp://127.0.0.1:PORT is not a Dask scheduler: it answered otherwise than Dask's handshake (MemoryError)",
        dask_address(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"),
    ),
    Case(
        "dask-address-silent",
        "`--address` at a service that sends nothing, as a web server does (it waited past 120 s)",
        "`toolkit predict --engine dask`, Dask's connect timeout 2 s",
        "error: cannot reach the Dask scheduler at tcp://127.0.0.1:PORT: nothing answered as a Dask scheduler within 2 s (a scheduler's address is tcp://HOST:8786)",
        dask_address(None),
    ),
    Case(
        "dask-address-http",
        "`--address http://127.0.0.1:PORT` (a web server's address)",
        "`toolkit predict --engine dask`",
        "error: cannot reach the Dask scheduler at http://127.0.0.1:PORT: unknown address scheme 'http' (known schemes: […]) (a scheduler's address is tcp://HOST:8786)",
        dask_address(None, scheme="http"),
    ),
]
