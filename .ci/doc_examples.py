#!/usr/bin/env python3
"""Run the examples of README.md and of every page in docs/ as they are written, in a fresh virtual environment.

    python3 .ci/doc_examples.py [--keep DIR] [--check] [PAGE.md ...]

With no PAGE, README.md and then every page under docs/ (sorted), so that a new page cannot slip
through. ``--check`` only reads the pages and checks the rules below (tests/test_docs.py does the
same); ``--keep DIR`` works in DIR and keeps it (default: a new temporary folder, removed on success):
run README.md there once, and a page's blocks can then be run again alone, with the environment
and archives the README's blocks made.

Which fenced blocks run, the same rules for every page:

- ```` ```bash ```` blocks run with ``bash -euo pipefail`` and ```` ```python ```` blocks with the fresh
  environment's python, in the page's order, in the copy's root, each with a time limit
  (``EXAMPLE_BLOCK_TIMEOUT`` seconds, 900 by default). A page's blocks share that folder, so a block may
  use what an earlier one made; a server a block starts in the background (``... &``) runs until the
  page's last block has run, and must be waited for before it is used (poll ``/health``).
- A block with a title (```` ```python title="my_parsers/grammars.py" ````) is a file: where the title
  names a file of the repository, the block must be a verbatim excerpt of it, or one dedented (a
  method on its own; checked, not run);
  otherwise the block is written to that path before the page's next block runs.
- Blocks in any language of :data:`SHOWN` (``console``, ``text``, ``jsonnet``, ...) are shown to the
  reader and never run: an example that cannot run in CI within minutes (a 45-minute training, a
  GPU, a cluster) is written as ```` ```console ````. A block with no language, or another one, is an
  error, so that every block is one or the other on purpose.
- README.md's first two ```` ```bash ```` blocks are the main command and the test command, which
  ``.ci/run`` runs in steps of their own.

The copy holds the files git tracks or would track (``git ls-files``), not ``runs/`` or virtual
environments; the data is read from ``DATA_ROOT`` (default: ``../shared/data`` beside this checkout).
Archives the pages share are built once: ``runs/ewt_quickstart`` by the README's quickstart block,
and ``runs/geo``, the README's main command, copied from this checkout where ``.ci/run`` trained it
just before (trained here, in about 8 minutes, where it is missing). Each block's time, each page's
and the totals are printed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN = ("bash", "python")
SHOWN = ("console", "text", "jsonnet", "ini", "json", "yaml", "toml", "html", "diff")
CI_STEPS = 2  # README.md's first ```bash blocks: .ci/run's own steps
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^`]*)$")  # as CommonMark: no backtick in the info string
INFO = re.compile(r'^(?P<language>[\w+-]*)(?:\s+title="(?P<title>[^"]+)")?\s*$')
BACKGROUND_SERVER = re.compile(r"^\s*toolkit serve\b.*&\s*(#.*)?$", flags=re.MULTILINE)
GEO = "runs/geo/model.tar.gz"  # the README's main command's archive
GEO_COMMAND = "toolkit train jsonnet_configs/geo_raw_transformer.jsonnet -s runs/geo"


class BlockError(ValueError):
    """A page breaks a rule of the module docstring: ``page:line: what``."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it opens, its language, its title and its text."""

    page: str
    line: int
    language: str
    title: str | None
    body: str
    action: str  # "bash" or "python" (run), "write" or "excerpt" (a titled file), "shown", "ci" (.ci/run's own step)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages(root: Path = REPO) -> list[Path]:
    """README.md, then every Markdown page under docs/, sorted: what runs by default."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def read_blocks(path: Path, root: Path = REPO) -> list[Block]:
    """Every fenced block of *path*, classified; :class:`BlockError` for a block that breaks a rule."""
    page = str(path.relative_to(root))
    lines = path.read_text(encoding="utf-8").splitlines()
    found, opening, bash_seen = [], None, 0
    for number, text in enumerate(lines, start=1):
        fence = FENCE.match(text)
        if opening is None:
            if fence:
                opening, body = (number, fence.group("indent"), fence.group("info").strip()), []
            continue
        if fence and fence.group("info").strip() == "":
            line, indent, info = opening
            opening = None
            language, title, action = classify(page, line, info, root)
            source = "\n".join(part[len(indent) :] if part.startswith(indent) else part for part in body) + "\n"
            if language == "bash" and not title and page == "README.md":
                bash_seen += 1
                action = "ci" if bash_seen <= CI_STEPS else action
            block = Block(page, line, language, title, source, action)
            check(block, root)
            found.append(block)
            continue
        body.append(text)
    if opening is not None:
        raise BlockError(f"{page}:{opening[0]}: a fenced block is never closed")
    return found


def classify(page: str, line: int, info: str, root: Path = REPO) -> tuple[str, str | None, str]:
    """(language, title, action) of a block's info string."""
    match = INFO.match(info)
    language, title = (match.group("language"), match.group("title")) if match else (info, None)
    if match is None or language not in RUN + SHOWN:
        said = f"```{info}" if info else "``` (no language)"
        raise BlockError(f"{page}:{line}: a {said} block is neither run (```bash, ```python) nor shown only (```{', ```'.join(SHOWN)}): write one of them")
    if title:
        if Path(title).is_absolute() or ".." in Path(title).parts:
            raise BlockError(f"{page}:{line}: a block's title must be a path inside the repository, got {title}")
        return language, title, "excerpt" if (root / title).is_file() else "write"
    return language, None, language if language in RUN else "shown"


def is_excerpt(body: str, text: str) -> bool:
    """Whether *body* is lines of *text*, as they are or dedented (a method shown on its own, as the
    formatter wants a page's Python: it cannot format an indented fragment).
    """
    return any(textwrap.indent(body, " " * depth) in text for depth in range(0, 17, 4))


def check(block: Block, root: Path) -> None:
    """The rules a block's text must keep: an excerpt still is one; a background server is waited for."""
    if block.action == "excerpt" and not is_excerpt(block.body.strip("\n"), (root / block.title).read_text(encoding="utf-8")):
        raise BlockError(f"{block.where}: the block titled {block.title} is not an excerpt of that file any more: copy the file's lines again")
    if block.action == "bash":
        for server in BACKGROUND_SERVER.finditer(block.body):
            if "/health" not in block.body[server.end() :]:
                raise BlockError(
                    f"{block.where}: starts `toolkit serve` in the background and does not wait for it: poll /health before using it "
                    "(timeout 60 sh -c 'until curl -sf localhost:8000/health >/dev/null; do sleep 1; done')"
                )


# ------------------------------------------------------------------ running them


def copy_tree(target: Path) -> None:
    """The files git tracks or would track, into *target* (a fresh copy: no runs/, no virtual environments)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, check=False)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = REPO / name
            if source.is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
    else:
        shutil.copytree(REPO, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".venv*", "runs", "build", ".git"))


def stop(groups: list[int]) -> None:
    """End what the blocks of a page left running (a server): SIGTERM to each process group, then SIGKILL."""
    for signal_number, patience in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 5.0)):
        alive = []
        for group in groups:
            try:
                os.killpg(group, signal_number)
                alive.append(group)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + patience
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = [group for group in alive if group_alive(group)]
        if not alive:
            return


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def run_block(block: Block, copy: Path, environment: dict[str, str], timeout: float, groups: list[int]) -> int:
    """Run one block in its own process group (kept in *groups*, so the page's end can stop what it left running)."""
    script = copy.parent / "blocks" / f"{block.page.replace('/', '_')}_{block.line}.{'sh' if block.action == 'bash' else 'py'}"
    script.parent.mkdir(exist_ok=True)
    script.write_text(block.body, encoding="utf-8")
    command = ["bash", "-euo", "pipefail", str(script)] if block.action == "bash" else [environment["VIRTUAL_ENV"] + "/bin/python", str(script)]
    process = subprocess.Popen(command, cwd=copy, env=environment, stdin=subprocess.DEVNULL, start_new_session=True)
    groups.append(process.pid)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return 124


def ensure_geo(copy: Path, environment: dict[str, str], timeout: float) -> None:
    """runs/geo/model.tar.gz in the copy: this checkout's (.ci/run's main command), else trained here."""
    if (copy / GEO).is_file():
        return
    if (REPO / GEO).is_file():
        (copy / GEO).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / GEO, copy / GEO)
        print(f"-- {GEO}: the README's main command's archive, from this checkout", flush=True)
        return
    print(f"-- {GEO} is not in this checkout: the README's main command trains it ({GEO_COMMAND})", flush=True)
    geo = Block("README.md", 0, "bash", None, GEO_COMMAND + "\n", "bash")
    if run_block(geo, copy, environment, timeout, []) != 0:
        sys.exit(f"{GEO_COMMAND} failed")


def run(paths: list[Path], work: Path) -> None:
    everything = [(path, read_blocks(path)) for path in paths]  # every page's rules, before anything runs
    timeout = float(os.environ.get("EXAMPLE_BLOCK_TIMEOUT", "900"))
    copy, venv = work / "repo", work / "venv"
    shutil.rmtree(work / "blocks", ignore_errors=True)
    copy.mkdir(parents=True, exist_ok=True)
    copy_tree(copy)  # a kept folder's copy is brought up to date; what the blocks made there (runs/) stays
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    environment = {
        **{name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")},
        "VIRTUAL_ENV": str(venv),
        "PATH": f"{venv}/bin{os.pathsep}{os.environ.get('PATH', '')}",
        "DATA_ROOT": os.environ.get("DATA_ROOT") or str(REPO.parent / "shared" / "data"),
    }
    began, totals = time.monotonic(), {}
    for path, blocks in everything:
        page = str(path.relative_to(REPO))
        runnable = [block for block in blocks if block.action in ("bash", "python", "write")]
        if not runnable:
            continue
        print(f"==== {page}: {len(runnable)} blocks", flush=True)
        page_began, groups = time.monotonic(), []
        try:
            for block in runnable:
                if block.action == "write":
                    (copy / block.title).parent.mkdir(parents=True, exist_ok=True)
                    (copy / block.title).write_text(block.body, encoding="utf-8")
                    print(f"== {block.where}: wrote {block.title}", flush=True)
                    continue
                if GEO in block.body:
                    ensure_geo(copy, environment, timeout)
                print(f"== {block.where} ({block.language})\n" + "".join(f"    {line}\n" for line in block.body.splitlines()), end="", flush=True)
                block_began = time.monotonic()
                status = run_block(block, copy, environment, timeout, groups)
                if status != 0:
                    sys.exit(f"{block.where}: the block failed (exit {status}; {timeout:.0f} s limit); the copy is in {copy}")
                print(f"\n-- {block.where}: {time.monotonic() - block_began:.0f} s", flush=True)  # after a newline: curl's output ends without one
        finally:
            stop(groups)
        totals[page] = time.monotonic() - page_began
        print(f"==== {page}: {totals[page]:.0f} s", flush=True)
    readme = totals.get("README.md", 0.0)
    print(f"== the examples ran in {time.monotonic() - began:.0f} s: README.md {readme:.0f} s, docs/ {sum(totals.values()) - readme:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="Markdown pages (default: README.md and every page under docs/)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--check", action="store_true", help="only check the pages' blocks against the rules")
    arguments = parser.parse_args()
    paths = [path.resolve() for path in arguments.pages] or pages()
    try:
        if arguments.check:
            for path in paths:
                read_blocks(path)
            return
        work = arguments.keep.resolve() if arguments.keep else Path(tempfile.mkdtemp(prefix="doc_examples."))
        run(paths, work)
    except BlockError as error:
        sys.exit(str(error))
    if not arguments.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
