"""Downloads that end (toolkit/downloads.py): a deadline, a size cap, and no ``.part`` file left however they end.

The server is a loopback thread that misbehaves on demand (tests/misbehaving_server.py). Bounds are
set small through their environment variables or constants, so no test waits long, and no test
asserts on how fast anything ran: each bound is far from where an honest server or a slow machine
would meet it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.misbehaving_server import endless, misbehaving_server, slow_headers, trickle, whole
from toolkit import downloads
from toolkit.archive import _pack
from toolkit.archive_members import MANIFEST_NAME
from toolkit.archive_sources import manifest_bound, resolve_archive
from toolkit.errors import ArchiveError, ConfigurationError
from toolkit.serving.launch import answering_ctrl_c

REPO = Path(__file__).resolve().parents[1]


def make_archive(folder: Path, members: dict[str, bytes]) -> Path:
    """An archive packed as ``write_archive`` packs one: its manifest first, listing every member's SHA-256 and size."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in members.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    manifest = {"sha256": {n: hashlib.sha256(d).hexdigest() for n, d in members.items()}, "size": {n: len(d) for n, d in members.items()}}
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    tops = sorted({name.split("/")[0] for name in members})
    _pack(folder / "model.tar.gz", folder, [MANIFEST_NAME, *tops])
    return folder / "model.tar.gz"


@pytest.fixture
def archive(tmp_path) -> bytes:
    """A small archive of 200 KB that passes the download's checks (random bytes: gzip cannot shrink them)."""
    return make_archive(
        tmp_path / "packed", {"config.json": b"{}", "weights.safetensors": os.urandom(200_000), "vocabulary/tokens.txt": b"a\nb\n"}
    ).read_bytes()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("TOOLKIT_ARCHIVE_CACHE", str(directory))
    return directory


@pytest.fixture
def server():
    with misbehaving_server() as running:
        yield running


def left_in(cache: Path) -> list[str]:
    return sorted(path.name for path in cache.iterdir()) if cache.exists() else []


def refused(url: str) -> str:
    with pytest.raises(ArchiveError) as error:
        resolve_archive(url)
    return str(error.value)


# ---------------------------------------------------------------- time


def test_a_trickling_body_ends_at_the_stall_bound(server, cache, archive, monkeypatch):
    monkeypatch.setattr(downloads, "STALL_SECONDS", 0.3)
    url = server.serve("/model.tar.gz", trickle(archive, every=0.02))  # 50 bytes a second: 64 KB would take 20 minutes
    assert refused(url) == f"cannot download {url}: less than 64 KB arrived in 0.3 s (the server stalls or trickles); nothing was kept"
    assert left_in(cache) == []


def test_a_body_that_never_stalls_ends_at_the_deadline(server, cache, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DOWNLOAD_SECONDS", "0.5")
    url = server.serve("/model.tar.gz", endless())
    assert refused(url) == f"cannot download {url}: it took longer than 0.5 s (TOOLKIT_DOWNLOAD_SECONDS); nothing was kept"
    assert left_in(cache) == []


def test_headers_that_never_end_meet_the_deadline(server, cache, monkeypatch):
    """No byte of the body ever comes, so only the alarm can stop it: http.client reads headers of any length, a byte at a time."""
    monkeypatch.setenv("TOOLKIT_DOWNLOAD_SECONDS", "0.5")
    url = server.serve("/model.tar.gz", slow_headers(every=0.02))
    assert refused(url) == f"cannot download {url}: it took longer than 0.5 s (TOOLKIT_DOWNLOAD_SECONDS); nothing was kept"
    assert left_in(cache) == []


def test_the_alarm_is_put_back_as_it_was(server, cache, archive):
    """No alarm before: none after. One of the caller's: its handler back, with what was left of its time."""
    before = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    resolve_archive(server.serve("/model.tar.gz", whole(archive)))
    assert (signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)) == before

    def callers(signum, frame):
        raise AssertionError("the caller's alarm rang")

    signal.signal(signal.SIGALRM, callers)
    signal.setitimer(signal.ITIMER_REAL, 1000)
    try:
        resolve_archive(server.serve("/other.tar.gz", whole(archive)))
        assert signal.getsignal(signal.SIGALRM) is callers and 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 1000
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before[0])


def test_a_bound_that_is_no_number_is_one_line(server, cache, archive, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DOWNLOAD_SECONDS", "soon")
    with pytest.raises(ConfigurationError, match=r"^TOOLKIT_DOWNLOAD_SECONDS: expected a positive number \(s\), got 'soon'$"):
        resolve_archive(server.serve("/model.tar.gz", whole(archive)))


# ---------------------------------------------------------------- size


def test_an_endless_body_of_no_stated_size_ends_at_the_global_cap(server, cache, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DOWNLOAD_MAX_MB", "0.5")
    url = server.serve("/model.tar.gz", endless())
    assert refused(url) == (
        f"cannot download {url}: it goes on past 500,000 bytes, 0.5 MB (TOOLKIT_DOWNLOAD_MAX_MB), the most a body of no stated size may be; nothing was kept"
    )
    assert left_in(cache) == []


def test_an_archive_that_goes_on_ends_where_its_manifest_says(server, cache, archive):
    """The global cap (10 GB) is far away: the manifest's sizes stop the body a little past the archive's end."""
    bound = manifest_bound(archive[: downloads.HEAD])
    assert bound is not None and len(archive) <= bound < 2 * len(archive) + (1 << 17)
    url = server.serve("/model.tar.gz", endless(start=archive))
    assert refused(url) == f"cannot download {url}: it goes on past {bound:,} bytes, what the archive's manifest accounts for; nothing was kept"
    assert left_in(cache) == []


def test_a_stated_size_beyond_the_free_space_is_refused_before_the_body(server, cache, archive):
    url = server.serve("/model.tar.gz", whole(archive, claimed=10**18))
    message = refused(url)
    assert message.startswith(f"cannot download {url}: it is 1,000,000,000,000.0 MB, and the cache {cache} has ") and message.endswith(
        "MB free (make room, or set TOOLKIT_ARCHIVE_CACHE to another folder)"
    )
    assert left_in(cache) == []


def test_a_cache_that_refuses_the_write_is_one_line_and_keeps_nothing(server, cache, archive):
    """A file-size limit (setrlimit) stands in for a full disk: the write fails with EFBIG as it would with ENOSPC."""
    url = server.serve("/model.tar.gz", whole(archive))
    script = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))\n"
        "from toolkit.archive_sources import resolve_archive\n"
        "from toolkit.errors import ArchiveError\n"
        f"try:\n    resolve_archive({url!r})\nexcept ArchiveError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO, env=os.environ)
    assert done.stdout.strip() == f"cannot download {url} into the cache {cache}: file too large (set TOOLKIT_ARCHIVE_CACHE to another folder)", done.stderr
    assert left_in(cache) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.lists(st.text("abcdefghij_", min_size=1, max_size=60), min_size=1, max_size=4).map("/".join),
        st.integers(0, 70_000),
        min_size=1,
        max_size=12,
    )
)
def test_the_manifest_bound_is_never_below_the_archive(tmp_path_factory, sizes):
    """Any members (long names, nested folders, empty files, incompressible bytes): the bound covers the archive it was read from."""
    names = [name for name in sizes if not any(other.startswith(name + "/") for other in sizes)]  # a name cannot be a file and a folder
    archive = make_archive(tmp_path_factory.mktemp("archive"), {name: os.urandom(sizes[name]) for name in names}).read_bytes()
    bound = manifest_bound(archive[: downloads.HEAD])
    assert bound is not None and bound >= len(archive)


def test_no_bound_from_what_is_no_archive_with_sizes():
    assert manifest_bound(b"") is None
    assert manifest_bound(bytes(downloads.HEAD)) is None
    assert manifest_bound(b"\x1f\x8b" + os.urandom(1000)) is None


# ---------------------------------------------------------------- nothing left behind


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_download_leaves_nothing(stop, status, server, cache, archive, tmp_path):
    """`toolkit predict URL` stopped mid-download (a scheduler's SIGTERM, Ctrl-C): the shell's status for the signal, and no .part file."""
    url = server.serve("/model.tar.gz", trickle(archive, every=0.05))
    questions = tmp_path / "questions.txt"
    questions.write_text("where is c0\n")
    command = [sys.executable, "-m", "toolkit", "predict", url, str(questions)]
    child = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True, preexec_fn=answering_ctrl_c)
    try:
        waited = time.monotonic()
        while not any(name.endswith(".part") for name in left_in(cache)):
            assert child.poll() is None and time.monotonic() - waited < 300, "the download never started"
            time.sleep(0.05)
        child.send_signal(stop)
        _, err = child.communicate(timeout=300)
    finally:
        child.kill()
    assert child.returncode == status and err.strip().splitlines()[-1] == "interrupted", err
    assert left_in(cache) == []


def test_a_part_file_a_killed_download_left_is_removed_by_the_next_one(server, cache, archive):
    """SIGKILL leaves the .part; the next download in the cache removes it, but not one another process is still writing."""
    url = server.serve("/model.tar.gz", trickle(archive, every=0.05))
    script = f"from toolkit.archive_sources import resolve_archive\nresolve_archive({url!r})\n"
    child = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    try:
        waited = time.monotonic()
        while not (parts := [name for name in left_in(cache) if name.endswith(".part")]):
            assert child.poll() is None and time.monotonic() - waited < 300, "the download never started"
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
    stale = cache / parts[0]
    old = time.time() - 2 * downloads.STALE_SECONDS
    os.utime(stale, (old, old))
    live = cache / ".live.part"
    live.write_bytes(b"")
    os.utime(live, (old, old))
    with open(live, "rb") as held:
        downloads.fcntl.flock(held.fileno(), downloads.fcntl.LOCK_EX)
        path = resolve_archive(server.serve("/other.tar.gz", whole(archive)))
    assert path.read_bytes() == archive and left_in(cache) == sorted([path.name, live.name])
