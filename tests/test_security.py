"""What a model archive or a config can and cannot do to the machine that loads it (see docs/security.md).

- Archives load without unpickling anything: the weights are safetensors, the config and the
  vocabulary are text. Pickle and ``torch.load`` are made to fail while a real archive loads.
- A tar member that would land outside the extraction directory (``..``, an absolute path, a link
  pointing out) is refused with one ArchiveError line before anything is extracted.
- Configs are jsonnet: no native functions, no ext vars but the toolkit's own (the environment's
  identifier-named variables and ``DATA_ROOT``), no shell. They can read regular files through
  ``import``/``importstr``, by design, and an archive's config is plain JSON, never evaluated.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import _jsonnet
import pytest
import torch

from tests.conftest import run
from toolkit import bounded_jsonnet, jsonnet_child
from toolkit.archive import load_archive
from toolkit.data.example import Example
from toolkit.errors import ArchiveError, ConfigurationError
from toolkit.params import Params, default_ext_vars, evaluate_jsonnet

ARCHIVE_MEMBERS = {"config.json", "vocabulary", "weights.safetensors", "metrics.json", "plugins.json", "version.json", "manifest.json"}

# ------------------------------------------------------------------ no unpickling

AUDIT: list[tuple[str, tuple]] = []
WATCHING = [False]


def _audit(event: str, args: tuple) -> None:
    if WATCHING[0] and event.startswith("pickle."):
        AUDIT.append((event, args))


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only records while WATCHING


def test_the_audit_hook_sees_unpickling():
    """The check below is only as good as its hook: an unpickled object raises pickle.find_class."""
    AUDIT.clear()
    WATCHING[0] = True
    try:
        pickle.loads(pickle.dumps(Path("x")))
    finally:
        WATCHING[0] = False
    assert [event for event, _ in AUDIT] == ["pickle.find_class"]


def refuse(*args, **kwargs):
    raise AssertionError("something was unpickled while an archive loaded")


def test_archives_load_without_unpickling(dependency_archive, monkeypatch):
    import _pickle

    class RefusingUnpickler(pickle.Unpickler):
        def __init__(self, *args, **kwargs):
            refuse()

    for module in (pickle, _pickle):
        monkeypatch.setattr(module, "load", refuse)
        monkeypatch.setattr(module, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", RefusingUnpickler)
    monkeypatch.setattr(torch, "load", refuse)
    monkeypatch.setattr(torch.serialization, "load", refuse)
    AUDIT.clear()
    WATCHING[0] = True
    try:
        archive = load_archive(dependency_archive)
        [tree] = archive.model.predict([Example(["Hello", "there", "."])])  # the weights loaded are usable
    finally:
        WATCHING[0] = False
    assert AUDIT == []  # no pickle.find_class: not even an unpatched unpickler ran
    assert len(tree.heads) == 3
    with tarfile.open(dependency_archive) as tar:
        assert {name.split("/")[0] for name in tar.getnames()} <= ARCHIVE_MEMBERS


PWNED: list[str] = []


def _pwned() -> None:
    PWNED.append("a pickle ran code")


class Payload:
    def __reduce__(self):
        return _pwned, ()


def repack(archive: Path, target: Path, replace: dict[str, bytes] | None = None, extra: list[tarfile.TarInfo] | None = None) -> Path:
    """A copy of *archive* with some members' bytes replaced and *extra* members added right after the manifest.

    ``manifest.json`` is rewritten to match the replaced members (checksums and sizes): an attacker who
    crafts an archive writes a consistent manifest, so these tests reach the defences behind the
    integrity check.
    """
    replace = dict(replace or {})
    with tarfile.open(archive) as source:
        manifest = json.loads(source.extractfile("manifest.json").read())
    for name, payload in replace.items():
        manifest["sha256"][name] = hashlib.sha256(payload).hexdigest()
        manifest["size"][name] = len(payload)
    replace["manifest.json"] = json.dumps(manifest).encode()
    with tarfile.open(archive) as source, tarfile.open(target, "w:gz") as out:
        for member in source.getmembers():
            if not member.isfile():
                out.addfile(member)
                continue
            payload = replace.get(member.name, source.extractfile(member).read())
            member.size = len(payload)
            out.addfile(member, io.BytesIO(payload))
            if member.name == "manifest.json":
                for added in extra or []:
                    out.addfile(added, io.BytesIO(b"escaped") if added.isfile() else None)
    return target


def test_a_pickle_posing_as_weights_is_refused_without_running(dependency_archive, tmp_path):
    buffer = io.BytesIO()
    torch.save({"weights": Payload()}, buffer)  # what a malicious "checkpoint" looks like
    torn = repack(dependency_archive, tmp_path / "pickled.tar.gz", {"weights.safetensors": buffer.getvalue()})
    with pytest.raises(ArchiveError, match="cannot load weights.safetensors"):
        load_archive(torn)
    raw = repack(dependency_archive, tmp_path / "raw.tar.gz", {"weights.safetensors": pickle.dumps(Payload())})
    with pytest.raises(ArchiveError, match="cannot load weights.safetensors"):
        load_archive(raw)
    assert PWNED == []


# ------------------------------------------------------------------ tar members outside the archive


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = len(b"escaped") if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize(
    "name, kind, link, message",
    [
        ("../escaped.txt", tarfile.REGTYPE, "", "refusing the member '../escaped.txt', which points outside the archive"),
        ("vocabulary/../../../escaped.txt", tarfile.REGTYPE, "", "refusing the member 'vocabulary/../../../escaped.txt'"),
        ("ABSOLUTE", tarfile.REGTYPE, "", "which points outside the archive"),
        ("escape", tarfile.SYMTYPE, "../../escaped.txt", "holds escape, which is not a file or a folder (a link or a device)"),
        ("etc", tarfile.SYMTYPE, "/etc", "holds etc, which is not a file or a folder"),
        ("hard", tarfile.LNKTYPE, "../../escaped.txt", "holds hard, which is not a file or a folder"),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink-out", "symlink-absolute", "hardlink-out"],
)
def test_tar_members_outside_the_archive_are_refused(dependency_archive, tmp_path, monkeypatch, name, kind, link, message):
    extract_root = tmp_path / "a" / "b"
    extract_root.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(extract_root))  # load_archive extracts into extract_root/tmpXXXX
    if name == "ABSOLUTE":
        name = str(tmp_path / "escaped.txt")
    evil = repack(dependency_archive, tmp_path / "evil.tar.gz", extra=[member(name, kind, link)])
    with pytest.raises(ArchiveError) as error:
        load_archive(evil)
    assert message in str(error.value) and str(evil) in str(error.value)
    assert not list(tmp_path.rglob("escaped.txt")), "a member was written outside the extraction directory"


def test_the_cli_says_so_in_one_line(dependency_archive, tmp_path, monkeypatch, capsys):
    evil = repack(dependency_archive, tmp_path / "evil.tar.gz", extra=[member("../escaped.txt")])
    code, _, err = run(monkeypatch, capsys, "evaluate", evil, tmp_path / "data.conllu")
    assert code == 1 and err.strip().splitlines() == [f"error: {evil}: refusing the member '../escaped.txt', which points outside the archive"]


# ------------------------------------------------------------------ configs


def test_jsonnet_gets_only_the_toolkit_ext_vars_and_no_native_functions(tmp_path, monkeypatch):
    """What the evaluating child is sent (the toolkit's ext vars), and what it gives jsonnet: those, and an import callback that reads regular files only."""
    requests, calls = [], []
    run_child, evaluate_snippet = bounded_jsonnet.subprocess.run, _jsonnet.evaluate_snippet

    def send(command, **kwargs):
        requests.append(json.loads(kwargs["input"]))
        return run_child(command, **kwargs)

    def spy(name, text, **kwargs):
        calls.append(kwargs)
        return evaluate_snippet(name, text, **kwargs)

    monkeypatch.setattr(bounded_jsonnet.subprocess, "run", send)
    monkeypatch.setattr(_jsonnet, "evaluate_snippet", spy)
    monkeypatch.setenv("TOOLKIT_SECURITY_PROBE", "visible")
    monkeypatch.setenv("NOT-AN-IDENTIFIER", "hidden")
    config = tmp_path / "config.jsonnet"
    config.write_text("{ probe: std.extVar('TOOLKIT_SECURITY_PROBE'), root: std.extVar('DATA_ROOT') }")
    params = Params.from_file(config)
    assert params["probe"] == "visible"  # by design: every identifier-named environment variable is an ext var
    [request] = requests
    assert request["ext_vars"] == default_ext_vars() and params["root"] == default_ext_vars()["DATA_ROOT"]
    assert "NOT-AN-IDENTIFIER" not in request["ext_vars"]
    assert json.loads(jsonnet_child.evaluate(request)) == params.as_dict()  # what the child does, here where it can be watched
    [kwargs] = calls
    assert set(kwargs) == {"ext_vars", "import_callback"}  # no native_callbacks, no top-level arguments
    config.write_text("{ probe: std.extVar('NOT-AN-IDENTIFIER') }")
    with pytest.raises(ConfigurationError, match="undefined external variable"):
        Params.from_file(config)


@pytest.mark.parametrize(
    "snippet, message",
    [
        ("{ out: std.native('system')('id') }", "is not a function|Only functions can be called|null"),
        ("{ out: std.native('exec') }", None),
        ("{ out: std.extVar('TOOLKIT_NEVER_SET_PROBE') }", "undefined external variable"),
    ],
)
def test_configs_have_no_native_functions(snippet, message, monkeypatch):
    monkeypatch.delenv("TOOLKIT_NEVER_SET_PROBE", raising=False)
    if message is None:  # jsonnet answers an unregistered native function with null
        assert evaluate_jsonnet(snippet) == {"out": None}
        return
    with pytest.raises(ConfigurationError, match=message):
        evaluate_jsonnet(snippet)


def test_the_jsonnet_standard_library_runs_nothing():
    """Std has no function that runs a command, writes a file or reads the environment (ext vars aside)."""
    fields = evaluate_jsonnet("{ fields: std.objectFieldsAll(std) }")["fields"]
    assert len(fields) > 100
    suspicious = [
        field
        for field in fields
        if any(word in field.lower() for word in ("exec", "system", "shell", "popen", "spawn", "write", "env", "file", "http", "socket"))
    ]
    assert suspicious == ["thisFile"]  # the path of the config being evaluated, a string


def test_configs_can_read_files_by_design(tmp_path):
    """import/importstr resolve relative to the config, and absolute paths work too: a config is code the user runs."""
    (tmp_path / "sizes.libsonnet").write_text("{ layers: 2 }")
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("not only beside the config")
    config = tmp_path / "configs" / "c.jsonnet"
    config.parent.mkdir()
    config.write_text(f"{{ sizes: import '../sizes.libsonnet', text: importstr '{secret}' }}")
    assert evaluate_jsonnet(config) == {"sizes": {"layers": 2}, "text": "not only beside the config"}


def test_an_archive_config_is_json_never_jsonnet(dependency_archive, tmp_path):
    jsonnet = repack(dependency_archive, tmp_path / "jsonnet.tar.gz", {"config.json": b"{ model: importstr '/etc/hostname' }"})
    with pytest.raises(ArchiveError, match="corrupt config.json"):
        load_archive(jsonnet)


def test_a_type_cannot_name_an_arbitrary_callable(dependency_archive, tmp_path, monkeypatch):
    """A dotted "type" imports its module but must name a subclass of the base: subprocess.Popen is refused, never called."""
    started = []
    monkeypatch.setattr(subprocess.Popen, "__init__", lambda self, *a, **k: started.append(a))
    with tarfile.open(dependency_archive) as tar:
        config = json.loads(tar.extractfile("config.json").read())
    config["grammar"] = {"type": "subprocess.Popen", "args": ["id"]}
    popen = repack(dependency_archive, tmp_path / "popen.tar.gz", {"config.json": json.dumps(config).encode()})
    with pytest.raises(ArchiveError, match=r"'subprocess\.Popen' is not a subclass of toolkit\.grammars\.grammar\.Grammar"):
        load_archive(popen)
    assert started == []
