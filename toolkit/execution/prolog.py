"""GeoQuery's Prolog forms run by SWI-Prolog against Geobase (Zelle & Mooney's ``execute_query/2``).

A form becomes Prolog text (:func:`prolog_query`) and runs on a pool of
:class:`~toolkit.execution.prolog_worker.PrologWorker` processes, each query under the executor's
limits (time, inferences, memory, answer size); a worker that dies or outlives the time limit by a
margin is killed and replaced, and answers are memoised per form.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty, Queue
from typing import Any

from toolkit.errors import ConfigurationError
from toolkit.execution.executor import Denotation, Executor
from toolkit.execution.prolog_worker import SERVER_PROGRAM, Limits, PrologWorker
from toolkit.params import data_root

MISSING_SWIPL = "SWI-Prolog (swipl) is not installed: apt-get install swi-prolog-nox (Debian, Ubuntu), or brew install swi-prolog (macOS)"

_SCAN = re.compile(r"(?P<quoted>'(?:[^'\\]|\\.|'')*')|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<space>\s+)|(?P<other>.)", re.S)
_UNDERSCORED = re.compile(r"_+[a-z][A-Za-z0-9_]*")
_ANSWER_FORM = re.compile(r"answer\(\s*[A-Z_][A-Za-z0-9_]*\s*,")


def prolog_query(form: str | Sequence[str]) -> str:
    """The Prolog text of a GeoQuery form as the data writes it, ready to execute.

    The data's forms are space-separated tokens whose predicate and constant names carry a
    leading underscore (``_answer ( A , _capital ( A ) )``): the underscores go (a lone ``_`` or
    ``_X`` is a variable and stays), a name is joined to its ``(`` (``foo (`` is not a term in
    Prolog), and a quoted atom the tokenizer spaced out (``' new york '``) is closed up again,
    its words unmarked too (the data has ``' salt _lake _city '``). Forms already in Prolog
    syntax pass through unchanged.

    >>> prolog_query("_answer ( A , ( _loc ( B , A ) , _const ( B , _cityid ( ' san antonio ' , _ ) ) ) )")
    "answer( A , ( loc( B , A ) , const( B , cityid( 'san antonio' , _ ) ) ) )"
    """
    text = form if isinstance(form, str) else " ".join(form)
    tokens = [(match.lastgroup, match.group()) for match in _SCAN.finditer(text)]
    out: list[str] = []
    for index, (kind, token) in enumerate(tokens):
        if kind == "space":
            previous = tokens[index - 1] if index else None
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            after_atom = previous is not None and previous[0] == "name" and (previous[1][:1].islower() or bool(_UNDERSCORED.fullmatch(previous[1])))
            if following is None or (after_atom and following == ("other", "(")):
                continue
            out.append(" ")
        elif kind == "name" and _UNDERSCORED.fullmatch(token):
            out.append(token.lstrip("_"))
        elif kind == "quoted":
            out.append("'" + " ".join(word.lstrip("_") if _UNDERSCORED.fullmatch(word) else word for word in token[1:-1].split()) + "'")
        else:
            out.append(token)
    return "".join(out).strip()


def _text(form: Any) -> str | None:
    """A form as one string (tokens joined), or ``None`` if it is neither a string nor a list of strings."""
    if isinstance(form, str):
        return form
    if isinstance(form, (list, tuple)) and all(isinstance(item, str) for item in form):
        return " ".join(form)
    return None


@Executor.register("geoquery_prolog")
class GeoQueryProlog(Executor):
    """GeoQuery Prolog forms executed by a pool of SWI-Prolog workers over Geobase.

    Workers start on first use. Answers are memoized per form (least recently used first out).
    Each limit covers a query's whole life in the worker, its answers' text included; a query one
    stops is a failure whose detail names the limit (:attr:`Denotation.stopped`).

    Args:
        database: the folder holding ``geobase.pl`` and ``geoquery.pl``; by default
            ``geo-raw`` under the data root (``$DATA_ROOT``).
        workers: at most this many ``swipl`` processes, queried in parallel.
        max_inferences: the Prolog calls one query may make (``None``: no limit); past them the
            answer is ``"timeout"``. The limit that decides in practice: it stops a query at the
            same point however busy the machine is. The slowest GEO gold query that ends (test
            #226, a nested superlative) makes 151 million, 10 s on one core; test #258 makes
            over a billion without ending.
        timeout_seconds: the wall time one query may run; past it the answer is ``"timeout"``. A
            backstop for work that makes no calls (printing, arithmetic on huge numbers), well
            above what ``max_inferences`` takes even on a busy machine.
        memory_mb: Prolog's stacks for one query (``findall``'s bags and big integers included);
            past them the answer is ``"memory"``.
        max_answer_chars: the text of one query's answers; past it the answer is ``"memory"``,
            before anything is printed.
        cache_size: how many forms' answers to remember (0: none).

    Registered as ``"geoquery_prolog"``.
    """

    def __init__(
        self,
        database: str | None = None,
        workers: int = 1,
        timeout_seconds: float = 60.0,
        cache_size: int = 100_000,
        max_inferences: int | None = 300_000_000,
        memory_mb: int = 1024,
        max_answer_chars: int = 1_000_000,
    ) -> None:
        swipl = shutil.which("swipl")
        if swipl is None:
            raise ConfigurationError(MISSING_SWIPL)
        if workers < 1:
            raise ConfigurationError(f"must be at least 1, got {workers}", key="workers")
        if not 0 < timeout_seconds <= 86_400:
            raise ConfigurationError(f"must be more than 0 and at most 86400 (a day), got {timeout_seconds}", key="timeout_seconds")
        if max_inferences is not None and max_inferences < 1:
            raise ConfigurationError(f"must be at least 1 (or null: no limit), got {max_inferences}", key="max_inferences")
        if memory_mb < 64:
            raise ConfigurationError(f"must be at least 64 (Prolog needs that much to run a query), got {memory_mb}", key="memory_mb")
        if max_answer_chars < 1:
            raise ConfigurationError(f"must be at least 1, got {max_answer_chars}", key="max_answer_chars")
        self.swipl = swipl
        self.database = Path(database if database is not None else Path(data_root()) / "geo-raw").absolute()
        missing = [name for name in ("geobase.pl", "geoquery.pl") if not (self.database / name).is_file()]
        if missing:
            raise ConfigurationError(f"no {' and '.join(missing)} in {self.database} (set DATA_ROOT, or the executor's database)")
        self.workers = workers
        self.timeout_seconds, self.max_inferences, self.memory_mb, self.max_answer_chars = float(timeout_seconds), max_inferences, memory_mb, max_answer_chars
        self.limits = Limits(self.timeout_seconds, max_inferences, memory_mb, max_answer_chars)
        self.stuck_seconds = self.timeout_seconds + max(2.0, self.timeout_seconds)  # a worker this late is killed: see _run
        self.cache_size = cache_size
        self._setup()

    def _setup(self) -> None:
        self._idle: Queue[PrologWorker] = Queue()
        self._started: list[PrologWorker] = []
        self._starting = 0
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Denotation] = OrderedDict()
        self._ids = itertools.count()
        self._directory: tempfile.TemporaryDirectory | None = None
        self.restarts = 0

    def check_form(self, form: Any) -> str | None:
        text = _text(form)
        if text is None:
            return f"expected a GeoQuery Prolog form (a string or tokens), got {type(form).__name__}"
        if not _ANSWER_FORM.match(prolog_query(text)):
            shown = text if len(text) <= 80 else text[:77] + "..."
            return f"expected a GeoQuery Prolog form answer(Var, Goal), got {shown!r}"
        return None

    def execute(self, forms: Sequence[str | Sequence[str]]) -> list[Denotation]:
        queries = [prolog_query(text) if (text := _text(form)) is not None else None for form in forms]
        known: dict[str, Denotation] = {}
        todo: list[str] = []
        for query in dict.fromkeys(query for query in queries if query is not None):
            cached = self._cached(query)
            if cached is not None:
                known[query] = cached
            else:
                todo.append(query)
        if self.workers == 1 or len(todo) <= 1:
            found = [self._run(query) for query in todo]
        else:
            with ThreadPoolExecutor(min(self.workers, len(todo))) as pool:
                found = list(pool.map(self._run, todo))
        for query, denotation in zip(todo, found):
            known[query] = denotation
            self._remember(query, denotation)
        return [known[query] if query is not None else Denotation.error(f"not a form: {type(form).__name__}") for form, query in zip(forms, queries)]

    def _cached(self, query: str) -> Denotation | None:
        with self._lock:
            found = self._cache.get(query)
            if found is not None:
                self._cache.move_to_end(query)
            return found

    def _remember(self, query: str, denotation: Denotation) -> None:
        if self.cache_size <= 0:
            return
        with self._lock:
            self._cache[query] = denotation
            self._cache.move_to_end(query)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _run(self, query: str) -> Denotation:
        """One query on a borrowed worker; a worker that dies or hangs is replaced."""
        if not query:
            return Denotation.error("empty form")
        worker = self._borrow()
        query_id = f"q{next(self._ids)}"
        # The worker enforces the limits itself; this margin only catches one stuck beyond them.
        denotation = worker.ask(query_id, query, time.monotonic() + self.stuck_seconds)
        if denotation is None:
            overflowed, alive = worker.overflowed, worker.alive()
            self._discard(worker)
            if overflowed:
                return Denotation.out_of_memory(f"answers over the size limit ({self.max_answer_chars:,} characters); the worker was restarted")
            if alive:
                return Denotation.timeout(f"over the time limit ({self.timeout_seconds:g} s); the worker did not stop, and was restarted")
            return Denotation.error(f"the worker died (exit status {worker.process.returncode}); restarted")
        self._idle.put(worker)
        return denotation

    def _borrow(self) -> PrologWorker:
        """An idle worker, else a new one while there are fewer than ``workers``, else the next one freed."""
        with self._lock:
            try:
                return self._idle.get_nowait()
            except Empty:
                pass
            starting = len(self._started) + self._starting < self.workers
            if starting:
                self._starting += 1
        if not starting:
            return self._idle.get()
        try:
            worker = self._start()  # outside the lock: the others go on meanwhile
        finally:
            with self._lock:
                self._starting -= 1
        with self._lock:
            self._started.append(worker)
        return worker

    def _start(self) -> PrologWorker:
        with self._lock:  # workers start side by side: one folder, and no worker may read a half-written server
            if self._directory is None:
                self._directory = tempfile.TemporaryDirectory(prefix="geoquery_prolog_")
                (Path(self._directory.name) / "server.pl").write_text(SERVER_PROGRAM)
            folder = Path(self._directory.name)
        return PrologWorker(self.swipl, folder / "server.pl", self.database, self.limits, folder / "stderr.log")

    def _discard(self, worker: PrologWorker) -> None:
        worker.close(grace=0.0)
        with self._lock:
            self._started.remove(worker)
            self.restarts += 1

    def close(self) -> None:
        """Stop every worker (and reap it) and remove the temporary files; a later query starts afresh."""
        with self._lock:
            workers, self._started = self._started, []
            self._idle = Queue()
            directory, self._directory = self._directory, None
        for worker in workers:
            worker.close()
        if directory is not None:
            directory.cleanup()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown there is nothing left to report to
            self.close()

    def __getstate__(self) -> dict[str, Any]:
        """A copy (deepcopy, pickle) carries the settings and starts its own workers."""
        names = ("swipl", "database", "workers", "timeout_seconds", "max_inferences", "memory_mb", "max_answer_chars", "limits", "stuck_seconds", "cache_size")
        return {key: self.__dict__[key] for key in names}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()
