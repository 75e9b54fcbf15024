"""Where an archive comes from: a path, an ``https://`` URL, or the name of an installed model package.

Every command and :func:`toolkit.load_predictor` resolve what the user gave through
:func:`resolve_archive`, so ``toolkit predict``, ``evaluate``, ``serve``, ``--ensemble`` and the
spaCy component all take the three forms, in this order:

- a file or folder that exists, used as it is;
- a URL, downloaded once into the cache (:func:`cache_directory`) under a hash of the URL. The
  download goes to a temporary file, which becomes the cache entry only once the archive's own
  manifest checks pass (and the SHA-256 the URL may pin, ``...#sha256=HEX``): a cut or damaged
  download is removed and refused, never left to be found later. A download is bounded in time and
  size, and leaves nothing behind however it ends (:mod:`toolkit.downloads`). Plain ``http://`` is refused
  except from a loopback host (tests, a local mirror), since anyone on the way could swap the model;
- the name of a model installed by a wheel that ``toolkit package`` built
  (:mod:`toolkit.packaging`), found through the ``parsing_toolkit.models`` entry points, as spaCy
  finds installed pipelines by their package names.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import ipaddress
import logging
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from http.client import HTTPException
from importlib.metadata import EntryPoint, entry_points
from importlib.resources import files
from pathlib import Path, PurePosixPath
from typing import IO
from urllib.parse import urlsplit

from toolkit import downloads
from toolkit.archive import ARCHIVE_NAME, toolkit_version
from toolkit.archive_members import MANIFEST_NAME, extract_archive, verify_manifest
from toolkit.errors import ArchiveError
from toolkit.files import parse_json, reason, write_failure
from toolkit.weights import sha256

MODELS_GROUP = "parsing_toolkit.models"  # entry points NAME = PACKAGE, the package holding ARCHIVE_NAME
CACHE_VARIABLE = "TOOLKIT_ARCHIVE_CACHE"
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")  # any scheme, so that ftp:// is refused as a URL, not looked for as a file
MODEL_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a model's name is its package's: one word, so it is never mistaken for a path
BARE_WORD = re.compile(r"[A-Za-z0-9_-]+")  # no folder, no suffix: meant as a model's name when no such file is here

logger = logging.getLogger(__name__)


def resolve_archive(source: str | os.PathLike) -> Path:
    """The local path of the archive *source* names (a path, a URL or an installed model's name).

    A ``Path`` is always a path. A path that does not exist is returned as it is, for
    :func:`toolkit.archive.load_archive` to refuse as ever; a bare word (``ewt-quick``) that is
    neither a file nor an installed model is refused here, suggesting the installed names it may
    mean (``ewt_quick``), else naming the models that are installed.
    """
    if not isinstance(source, str):
        return Path(source)
    if URL.match(source):
        return download(source)
    path = Path(source)
    if path.exists() or not BARE_WORD.fullmatch(source):
        return path
    models = installed_models()
    if source in models:
        return installed_archive(models[source])
    if close := close_names(source, models):
        raise ArchiveError(f"archive not found: {source} is no file or folder here, nor the name of an installed model; did you mean {' or '.join(close)}?")
    installed = f"the installed models are {', '.join(sorted(models))}" if models else "no model package is installed (toolkit package builds one)"
    raise ArchiveError(f"archive not found: {source} is no file or folder here, nor the name of an installed model: {installed}")


def archive_path(source: str | os.PathLike) -> Path:
    """Where the archive *source* names lies, as :func:`resolve_archive` finds it, but without downloading:
    a URL's place in the cache, whether it is there yet or not.
    """
    if isinstance(source, str) and URL.match(source):
        try:
            return cached_path(source)
        except ValueError:  # not a URL after all: resolve_archive refuses it
            return Path(source)
    return resolve_archive(source)


def close_names(word: str, names: Iterable[str]) -> list[str]:
    """The installed names *word* may mean: those equal to it but for case and ``-``/``_``, else near misses (difflib's)."""
    key = word.lower().replace("-", "_")
    names = sorted(names)
    return [name for name in names if name.lower().replace("-", "_") == key] or difflib.get_close_matches(key, names, n=3, cutoff=0.8)


# ---------------------------------------------------------------- installed model packages


def installed_models() -> dict[str, EntryPoint]:
    """The models installed packages declare, by name."""
    return {entry.name: entry for entry in entry_points(group=MODELS_GROUP)}


def installed_archive(entry: EntryPoint) -> Path:
    """The archive file inside the package an entry point of :data:`MODELS_GROUP` names."""
    try:
        archive = files(entry.module) / ARCHIVE_NAME
    except ImportError as error:
        raise ArchiveError(f"the model {entry.name} is declared installed, but its package {entry.module} cannot be imported ({error}): reinstall it") from None
    if not isinstance(archive, Path):  # a zipped install: load_archive reads files
        raise ArchiveError(f"the model {entry.name} is installed zipped, so its archive is no file: reinstall it with pip")
    return archive


# ---------------------------------------------------------------- URLs and the download cache


def cache_directory() -> Path:
    """``$TOOLKIT_ARCHIVE_CACHE``, else ``$XDG_CACHE_HOME/parsing-toolkit/archives``, else ``~/.cache/parsing-toolkit/archives``."""
    if chosen := os.environ.get(CACHE_VARIABLE):
        return Path(chosen).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "parsing-toolkit" / "archives"


def cached_path(url: str) -> Path:
    """Where the archive at *url* is kept: a hash of the whole URL (so a pinned URL is an entry of its own), then its file name."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", PurePosixPath(urlsplit(url).path).name)[-64:] or ARCHIVE_NAME
    return cache_directory() / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}-{name}"


def download(url: str) -> Path:
    """The cached copy of the archive at *url*, downloaded and checked first if there is none."""
    check_scheme(url, url)
    target = cached_path(url)
    if target.is_file():
        logger.info("%s: using the copy cached at %s", url, target)
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        part = downloads.PartialFile(target.parent)
    except OSError as error:
        raise ArchiveError(
            f"cannot download {url}: cannot write into the cache {target.parent}: {reason(error)} (set {CACHE_VARIABLE} to another folder)"
        ) from None
    with part as (partial, file):  # removed however the download ends
        logger.info("downloading %s into %s", url, target)
        fetch(url, partial, file)
        check_download(url, partial)
        os.replace(partial, target)
    return target


def check_scheme(url: str, asked: str) -> None:
    """Refuse *url* (reached from *asked*, maybe by a redirect) unless it is https, or http from a loopback host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as error:
        raise ArchiveError(f"refusing {asked}: not a URL ({error})") from None
    if parts.scheme == "https" or (parts.scheme == "http" and _loopback(host)):
        return
    if parts.scheme == "http":
        raise ArchiveError(
            f"refusing {asked}: plain http:// is allowed only from this machine (localhost); an archive sent in the clear can be swapped on the way, so use https://"
        )
    raise ArchiveError(f"refusing {asked}: {f'it redirects to {url}, and ' if url != asked else ''}archives are downloaded over https:// only")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def fetch(url: str, into: Path, file: IO[bytes]) -> None:
    """Write the body at *url* into *file*, open on *into*, within the bounds of :mod:`toolkit.downloads`
    (its manifest's size among them); a network failure, a body that ends short or goes on too long, or
    a server too slow, is one :class:`ArchiveError` naming the URL.
    """
    request = urllib.request.Request(url, headers={"User-Agent": f"parsing-toolkit/{toolkit_version() or 'dev'}"})
    try:
        with downloads.deadline(url) as ends, urllib.request.urlopen(request, timeout=downloads.STALL_SECONDS) as response:
            check_scheme(response.geturl(), url)
            claimed = response.headers.get("Content-Length", "")
            expected = int(claimed) if claimed.isascii() and claimed.isdigit() else None
            if expected is not None:
                downloads.check_room(url, expected, into.parent, CACHE_VARIABLE)
            received = downloads.copy_body(response, file, url, ends, expected, manifest_bound)
            file.flush()
    except urllib.error.HTTPError as error:
        raise ArchiveError(f"cannot download {url}: the server answered {error.code} {error.reason}") from None
    except (OSError, HTTPException) as error:
        if why := write_failure(error, into):
            raise ArchiveError(f"cannot download {url} into the cache {into.parent}: {why} (set {CACHE_VARIABLE} to another folder)") from None
        why = getattr(error, "reason", None) or error
        raise ArchiveError(f"cannot download {url}: {why.strerror if isinstance(why, OSError) and why.strerror else why}") from None
    if expected is not None and received != expected:
        raise ArchiveError(f"cannot download {url}: it ended after {received:,} of its {expected:,} bytes; nothing was kept")


def manifest_bound(head: bytes) -> int | None:
    """The most bytes an archive that begins with *head* can rightly have: its first member, its
    manifest, lists every member's size. ``None`` when *head* does not show that much.
    """
    block = tarfile.BLOCKSIZE
    try:
        start = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1 << 24) if head[:2] == b"\x1f\x8b" else head
        with tarfile.open(fileobj=io.BytesIO(start), mode="r:") as tar:
            first = tar.next()
            if first is None or first.name != MANIFEST_NAME or not first.isfile():
                return None
            text = tar.extractfile(first).read()
        manifest = parse_json(text) if len(text) == first.size else None
    except (zlib.error, tarfile.TarError, EOFError, OSError, ValueError):
        return None
    sizes = manifest.get("size") if isinstance(manifest, dict) else None
    if not isinstance(sizes, dict) or not set(manifest.get("sha256") or ()) <= set(sizes) or not all(type(n) is int and n >= 0 for n in sizes.values()):
        return None
    folders = {parent for name in sizes for parent in PurePosixPath(name).parents} - {PurePosixPath(".")}
    # Each member: its header and an extended (PAX) header with room for a long name, then its data; then the end, padded to a record.
    blocks = sum(4 + -(-size // block) for size in (first.size, *sizes.values())) + 4 * len(folders) + 2
    size = -(-blocks * block // tarfile.RECORDSIZE) * tarfile.RECORDSIZE
    return size + size // 1000 + (1 << 16)  # deflate's worst case (stored blocks) and gzip's header


def check_download(url: str, path: Path) -> None:
    """Refuse the download *path* of *url* unless it is an intact archive: its manifest's checks, and the SHA-256 the URL pins, if any."""
    pinned = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", urlsplit(url).fragment)
    if pinned and (found := sha256(path)) != pinned.group(1).lower():
        raise ArchiveError(f"{url}: the download's SHA-256 is {found}, not the {pinned.group(1).lower()} the URL pins; nothing was kept")
    try:
        with tempfile.TemporaryDirectory() as temporary:
            verify_manifest(extract_archive(path, Path(temporary)), path)
    except ArchiveError as error:
        raise ArchiveError(f"{str(error).replace(str(path), url)}; the download was not kept") from None
