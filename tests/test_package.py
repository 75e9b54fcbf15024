"""Models people can share: ``toolkit package`` builds a wheel that, once pip-installed, is loaded by its
name; an archive also loads from a URL, through a cache that never keeps a damaged download.

The round trip runs offline: the wheel is installed with ``pip --no-index`` into a new virtual
environment (which sees this one's packages through a ``.pth`` file, as in
``tests/plugin_env.py``), and URLs are served by a loopback HTTP server in a thread.
"""

import base64
import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import run
from tests.plugin_env import make_venv
from tests.waiting import GENEROUS
from toolkit import load_predictor
from toolkit.archive import toolkit_version
from toolkit.archive_sources import MODELS_GROUP, cached_path, installed_models, resolve_archive
from toolkit.errors import ArchiveError
from toolkit.packaging import package_archive

NAME = "tiny_geo_parser"
QUESTIONS = ["where is c0", "what is the capital of s0"]


@pytest.fixture(scope="module")
def wheel(seq2seq_archive, tmp_path_factory) -> Path:
    return package_archive(seq2seq_archive, tmp_path_factory.mktemp("dist"), NAME, "1.0.0")


@pytest.fixture(scope="module")
def expected(seq2seq_archive) -> list[dict]:
    """What the archive itself predicts for QUESTIONS, loaded from its path."""
    return load_predictor(seq2seq_archive, device="cpu").predict_batch(QUESTIONS)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("TOOLKIT_ARCHIVE_CACHE", str(directory))
    return directory


def one_error_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), (code, err)
    return lines[0]


# ---------------------------------------------------------------- the wheel


def test_the_wheel_holds_the_archive_and_declares_the_model(wheel, seq2seq_archive, tmp_path, monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, "package", seq2seq_archive.parent, "-o", tmp_path / "dist", "--name", NAME, "--version", "1.0.0")
    assert code == 0, err
    assert out.strip() == str(tmp_path / "dist" / f"{NAME}-1.0.0-py3-none-any.whl")
    assert Path(out.strip()).read_bytes() == wheel.read_bytes()  # from the run's folder as from its archive, and the same bytes each time
    info = f"{NAME}-1.0.0.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.namelist() == [
            f"{NAME}/__init__.py",
            f"{NAME}/model.tar.gz",
            f"{info}/METADATA",
            f"{info}/WHEEL",
            f"{info}/entry_points.txt",
            f"{info}/top_level.txt",
            f"{info}/RECORD",
        ]
        assert archive.read(f"{NAME}/model.tar.gz") == seq2seq_archive.read_bytes()
        assert archive.read(f"{info}/entry_points.txt").decode() == f"[{MODELS_GROUP}]\n{NAME} = {NAME}\n"
        metadata = archive.read(f"{info}/METADATA").decode()
        with tarfile.open(seq2seq_archive) as tar:
            written = json.load(tar.extractfile("version.json"))["toolkit_version"]
        assert written == toolkit_version()
        assert f"Name: {NAME}\nVersion: 1.0.0\n" in metadata and f"Requires-Dist: parsing-toolkit>={written}\n" in metadata
        *rows, last = archive.read(f"{info}/RECORD").decode().splitlines()
        assert last == f"{info}/RECORD,,"
        for row in rows:
            name, digest, size = row.split(",")
            data = archive.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode() and int(size) == len(data)


def test_a_fresh_environment_installs_the_wheel_and_loads_the_model_by_name(wheel, expected, tmp_path):
    """The round trip a user makes: pip install the wheel (offline), then `toolkit predict NAME` and `load_predictor("NAME")`."""
    assert NAME not in installed_models()  # only the new environment has it
    python = make_venv(tmp_path / "venv", with_plugin=False)
    # --no-deps: the toolkit is visible from this environment (the wheel's requirements are checked above)
    install = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel], capture_output=True, text=True, timeout=GENEROUS)
    assert install.returncode == 0, install.stderr
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    environment = {**os.environ, "TOOLKIT_ARCHIVE_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}

    predicted = subprocess.run(
        [python, "-m", "toolkit", "predict", NAME, questions, "--device", "cpu"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
        timeout=GENEROUS,
    )
    assert predicted.returncode == 0, predicted.stderr
    assert [json.loads(line) for line in predicted.stdout.splitlines()] == expected

    script = (
        "import json, toolkit\nfrom toolkit.archive_sources import resolve_archive\n"
        f"print(resolve_archive({NAME!r}))\nprint(json.dumps(toolkit.load_predictor({NAME!r}, device='cpu').predict_batch({QUESTIONS!r})))\n"
    )
    loaded = subprocess.run([python, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=GENEROUS)
    assert loaded.returncode == 0, loaded.stderr
    where, outputs = loaded.stdout.splitlines()
    assert Path(where).is_relative_to(tmp_path / "venv") and Path(where).name == "model.tar.gz"
    assert json.loads(outputs) == expected


@pytest.fixture
def installed(wheel, tmp_path, monkeypatch) -> Path:
    """The wheel unpacked onto ``sys.path``, as pip lays a pure wheel out: its model is installed, in this process."""
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop(NAME, None)


def test_serve_and_evaluate_find_an_installed_model_by_name(installed, seq2seq_archive, monkeypatch, capsys):
    assert resolve_archive(NAME) == installed / NAME / "model.tar.gz"
    served = {}
    monkeypatch.setattr("toolkit.serving.server.serve", lambda runner, predictor, archive, *rest, **options: served.update(runner=runner, archive=archive))
    code, _, err = run(monkeypatch, capsys, "serve", NAME, "--port", "0", "--device", "cpu")
    assert code == 0, err
    assert served["archive"] == NAME and "logical_form" in served["runner"].predict(QUESTIONS[0])
    code, out, err = run(monkeypatch, capsys, "evaluate", NAME, seq2seq_archive.parent.parent / "test.tsv", "--device", "cpu")
    assert code == 0, err
    assert json.loads(out)["examples"] == 10


def test_an_unknown_name_is_one_line_naming_the_installed_models(installed, tmp_path, monkeypatch, capsys):
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS[0] + "\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", "no_such_model", questions)
    line = one_error_line(code, err)
    assert out == "" and "no_such_model is no file or folder here, nor the name of an installed model" in line and NAME in line
    with pytest.raises(ArchiveError, match="archive not found: elsewhere/model.tar.gz"):  # a path stays a path
        load_predictor("elsewhere/model.tar.gz")


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("tiny-geo-parser", "tiny_geo_parser"),
        ("Tiny_Geo_Parser", "tiny_geo_parser"),
        ("TINY-GEO-PARSER", "tiny_geo_parser"),
        ("tiny_geo_parsr", "tiny_geo_parser"),
    ],
)
def test_a_name_close_to_an_installed_one_suggests_it(given, suggested, installed, tmp_path, monkeypatch, capsys):
    """Differing by `-`/`_` or case, or a near miss: it used to say only `archive not found: tiny-geo-parser`."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(monkeypatch, capsys, "predict", given, "questions.txt")
    line = one_error_line(code, err)
    assert line == f"error: archive not found: {given} is no file or folder here, nor the name of an installed model; did you mean {suggested}?" and out == ""


def test_close_names_prefer_the_same_name_written_otherwise():
    from toolkit.archive_sources import close_names

    installed = ["ewt_quick", "ewt_quick2", "amr_parser"]
    assert close_names("EWT-Quick", installed) == ["ewt_quick"]  # not also ewt_quick2, a near miss
    assert close_names("ewt_quik", installed) == ["ewt_quick", "ewt_quick2"]
    assert close_names("geo", installed) == []


@pytest.mark.parametrize(
    ("archive", "name", "version", "message"),
    [
        (
            None,
            "Tiny-Parser",
            "1.0.0",
            "--name 'Tiny-Parser': a model's name is lowercase letters, digits and underscores, beginning with a letter (e.g. tiny_parser)",
        ),
        (None, "1parser", "1.0.0", "--name '1parser': a model's name is lowercase letters, digits and underscores, beginning with a letter (e.g. ewt_parser)"),
        (None, "json", "1.0.0", "--name json: a Python module of that name is already importable here"),
        (None, NAME, "v1", "--version 'v1': not a version in PEP 440's canonical form"),
        (None, NAME, "1.0.0-final", "--version '1.0.0-final': not a version in PEP 440's canonical form"),
        ("missing.tar.gz", NAME, "1.0.0", "archive not found: "),
        ("cut.tar.gz", NAME, "1.0.0", "cut.tar.gz is damaged"),
    ],
)
def test_package_refuses_bad_inputs_in_one_line(archive, name, version, message, seq2seq_archive, tmp_path, monkeypatch, capsys):
    data = seq2seq_archive.read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(data[: len(data) // 2])
    source = seq2seq_archive if archive is None else tmp_path / archive
    code, out, err = run(monkeypatch, capsys, "package", source, "-o", tmp_path / "dist", "--name", name, "--version", version)
    assert message in one_error_line(code, err) and out == ""
    assert not list((tmp_path / "dist").glob("*")) if (tmp_path / "dist").exists() else True  # nothing half-written


def test_package_needs_a_name_and_a_version(seq2seq_archive, tmp_path, monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, "package", seq2seq_archive, "-o", tmp_path)
    assert code == 2 and "Missing option '--name'" in err


# ---------------------------------------------------------------- URLs


@pytest.fixture
def server():
    """A loopback HTTP server in a thread: ``files`` maps a path to its body (and, to lie, the length it claims); ``requests`` lists what was asked."""
    files: dict[str, tuple[bytes, int | None]] = {}
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            if self.path not in files:
                self.send_error(404)
                return
            body, claimed = files[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(claimed or len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield SimpleNamespace(url=f"http://127.0.0.1:{httpd.server_port}", files=files, requests=requests)
    httpd.shutdown()
    httpd.server_close()


def test_an_archive_at_a_url_is_downloaded_once_and_then_read_from_the_cache(server, cache, seq2seq_archive, expected, monkeypatch, capsys):
    data = seq2seq_archive.read_bytes()
    server.files["/models/geo.tar.gz"] = (data, None)
    url = f"{server.url}/models/geo.tar.gz"
    assert load_predictor(url, device="cpu").predict_batch(QUESTIONS) == expected
    assert server.requests == ["/models/geo.tar.gz"]
    assert [path.name for path in cache.iterdir()] == [cached_path(url).name] and cached_path(url).read_bytes() == data
    code, out, err = run(monkeypatch, capsys, "evaluate", url, seq2seq_archive.parent.parent / "test.tsv", "--device", "cpu")
    assert code == 0 and json.loads(out)["examples"] == 10, err
    assert server.requests == ["/models/geo.tar.gz"]  # the second use asked nothing
    pinned = f"{url}#sha256={hashlib.sha256(data).hexdigest()}"
    assert resolve_archive(pinned).read_bytes() == data and cached_path(pinned) != cached_path(url)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("cut", "is damaged"),
        ("flipped", "is damaged"),
        ("short", "it ended after"),
        ("pinned", "the URL pins"),
        ("missing", "the server answered 404 Not Found"),
    ],
)
def test_a_damaged_download_is_refused_in_one_line_and_not_kept(damage, message, server, cache, seq2seq_archive, tmp_path, monkeypatch, capsys):
    data = bytearray(seq2seq_archive.read_bytes())
    if damage == "flipped":
        data[len(data) // 2] ^= 0xFF
    body = bytes(data[: len(data) // 2] if damage in ("cut", "short") else data)
    if damage != "missing":
        server.files["/model.tar.gz"] = (body, len(data) if damage == "short" else None)
    url = f"{server.url}/model.tar.gz" + ("#sha256=" + "0" * 64 if damage == "pinned" else "")
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTIONS[0] + "\n", encoding="utf-8")
    code, out, err = run(monkeypatch, capsys, "predict", url, questions)
    line = one_error_line(code, err)
    assert message in line and url in line and out == ""
    assert not cache.exists() or not list(cache.iterdir())  # no entry, and no temporary file left behind


def test_network_failures_and_plain_http_elsewhere_are_refused(cache):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(ArchiveError, match=rf"cannot download http://127.0.0.1:{port}/model.tar.gz: .*refused"):
        resolve_archive(f"http://127.0.0.1:{port}/model.tar.gz")
    with pytest.raises(ArchiveError, match="plain http:// is allowed only from this machine"):
        resolve_archive("http://models.example.com/model.tar.gz")  # refused before any connection
    with pytest.raises(ArchiveError, match="refusing ftp://models.example.com/model.tar.gz: archives are downloaded over https:// only"):
        resolve_archive("ftp://models.example.com/model.tar.gz")
    with pytest.raises(ArchiveError, match="archive not found: no_such_model is no file or folder here"):
        resolve_archive("no_such_model")
