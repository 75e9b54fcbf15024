"""GeoQuery's Prolog forms run by SWI-Prolog against Geobase (Zelle & Mooney's ``execute_query/2``).

Each worker is one long-lived ``swipl`` process that has consulted ``geobase.pl`` and
``geoquery.pl`` and serves a line protocol on its pipes, so a query costs a round trip rather
than a start-up. Python writes ``ID<TAB>FORM`` on one line; the worker reads the form with
``term_string`` inside ``catch/3`` (a malformed form is an error answer, not a stuck reader),
runs it under ``call_with_time_limit`` with its printing swallowed, and replies with a header
line ``ID ok N`` (then N answers, one a line), ``ID error WHY`` or ``ID timeout``, closed by
``ID end``. Python reads up to the ``end`` of its own ID, so stray output cannot shift replies;
a worker that dies or outlives the limit by a margin is killed and replaced.

The worker refuses forms that mention a built-in it does not need (``halt``, ``shell``,
``assert``...): predicted forms are model output, and must not stop or change the worker.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import select
import shutil
import subprocess
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


# The worker's program: loaded by path, then it serves one request a line until its input ends.
_SERVER = r"""
:- use_module(library(time)).
:- use_module(library(readutil)).
:- use_module(library(lists)).

geo_main :-
    current_prolog_flag(argv, [Dir, Limit|_]),
    atom_number(Limit, Seconds),
    nb_setval(geo_time_limit, Seconds),
    atomic_list_concat([Dir, '/geobase.pl'], Base),
    atomic_list_concat([Dir, '/geoquery.pl'], Query),
    load_files(user:[Base, Query], [silent(true)]),
    autoload_all,
    set_prolog_flag(autoload, false),
    (   current_predicate(user:execute_query/2)
    ->  format("ready~n")
    ;   format("failed no execute_query/2 after loading ~w~n", [Query])
    ),
    flush_output,
    geo_serve.

geo_serve :-
    repeat,
    read_line_to_string(user_input, Line),
    (   Line == end_of_file
    ->  !, halt(0)
    ;   geo_handle(Line),
        fail
    ).

geo_handle(Line) :-
    (   sub_string(Line, Before, _, After, "\t")
    ->  sub_string(Line, 0, Before, _, Id),
        sub_string(Line, _, After, 0, Text)
    ;   Id = "?", Text = Line
    ),
    catch(geo_run(Text, Result), Error, Result = error(Error)),
    geo_reply(Id, Result),
    flush_output.

geo_run(Text, Result) :-
    term_string(Query, Text),
    (   geo_forbidden(Query, Name/Arity)
    ->  Result = error(not_allowed(Name/Arity))
    ;   nb_getval(geo_time_limit, Seconds),
        catch(( call_with_time_limit(Seconds, with_output_to(string(_), user:execute_query(Query, Answers)))
              ->  Result = ok(Answers)
              ;   Result = error(no_answer_form)
              ),
              Error,
              geo_caught(Error, Result))
    ).

geo_caught(time_limit_exceeded, timeout) :- !.
geo_caught(time_limit_exceeded(_), timeout) :- !.
geo_caught(Error, error(Error)).

% A sub-term naming a built-in or library predicate the queries do not use: it could stop or change the worker.
geo_forbidden(Query, Name/Arity) :-
    sub_term(Term, Query),
    callable(Term),
    functor(Term, Name, Arity),
    \+ geo_allowed(Name, Arity),
    functor(Head, Name, Arity),
    (   predicate_property(system:Head, defined)
    ;   predicate_property(user:Head, imported_from(_))
    ),
    !.

geo_allowed(',', 2).
geo_allowed(';', 2).
geo_allowed('->', 2).
geo_allowed('\\+', 1).
geo_allowed(not, 1).
geo_allowed(true, 0).
geo_allowed(fail, 0).
geo_allowed(false, 0).
geo_allowed(=, 2).
geo_allowed(\=, 2).
geo_allowed(==, 2).
geo_allowed(\==, 2).
geo_allowed(<, 2).
geo_allowed(>, 2).
geo_allowed(=<, 2).
geo_allowed(>=, 2).
geo_allowed(=:=, 2).
geo_allowed(=\=, 2).
geo_allowed(is, 2).

geo_reply(Id, ok(Answers)) :-
    length(Answers, N),
    format("~w ok ~d~n", [Id, N]),
    forall(member(Answer, Answers), geo_write_answer(Answer)),
    format("~w end~n", [Id]).
geo_reply(Id, timeout) :-
    format("~w timeout~n~w end~n", [Id, Id]).
geo_reply(Id, error(Error)) :-
    (   Error = error(_, _),
        catch(message_to_codes(Error, Codes), _, fail)
    ->  true
    ;   format(codes(Codes), "~q", [Error])
    ),
    geo_one_line(Codes, Why),
    format("~w error ~w~n~w end~n", [Id, Why, Id]).

message_to_codes(Error, Codes) :-
    '$messages':translate_message(Error, Lines, []),
    with_output_to(codes(Codes), print_message_lines(current_output, '', Lines)).

geo_write_answer(Answer) :-
    copy_term(Answer, Copy),
    numbervars(Copy, 0, _),
    (   atom(Copy)
    ->  format(string(Text), "~a", [Copy])
    ;   format(string(Text), "~W", [Copy, [quoted(true), numbervars(true)]])
    ),
    geo_one_line(Text, Line),
    format("~w~n", [Line]).

geo_one_line(Text, Line) :-
    split_string(Text, "\n\r", " ", Parts),
    exclude(==(""), Parts, Kept),
    atomic_list_concat(Kept, ' ', Line).

:- initialization(geo_main, main).
"""


class _Worker:
    """One ``swipl`` process serving queries on its pipes."""

    def __init__(self, swipl: str, server: Path, database: Path, timeout_seconds: float, log: Path, startup_seconds: float = 60.0):
        self.log = log
        with open(log, "ab") as stderr:
            self.process = subprocess.Popen(
                [swipl, "-q", "-O", "--no-tty", str(server), str(database), repr(float(timeout_seconds))],
                cwd=database,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=0,
            )
        self._buffer = b""
        line = self.readline(time.monotonic() + startup_seconds)
        if line != "ready":
            self.close()
            why = line if line is not None else "no answer: " + self._log_tail()
            raise ConfigurationError(f"SWI-Prolog could not load Geobase from {database}: {why}")

    def ask(self, query_id: str, query: str, deadline: float) -> Denotation | None:
        """The denotation of *query*; ``None`` when the worker died or missed *deadline* (then it is unusable)."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(f"{query_id}\t{' '.join(query.split())}\n".encode())
        except OSError:
            return None
        header: list[str] | None = None
        answers: list[str] = []
        while True:
            line = self.readline(deadline)
            if line is None:
                return None
            ident, _, rest = line.partition(" ")
            if header is None:
                if ident == query_id:
                    header = rest.split(" ", 1)
                continue  # until our own header: nothing else is ours
            if ident == query_id and rest == "end":
                break
            answers.append(line)
        kind = header[0]
        detail = header[1] if len(header) > 1 else ""
        if kind == "ok":
            return Denotation.of(answers)
        if kind == "timeout":
            return Denotation.timeout("over the time limit")
        return Denotation.error(detail)

    def readline(self, deadline: float) -> str | None:
        """The next line of output, or ``None`` at end of file or past *deadline*."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([descriptor], [], [], left)
            if not ready:
                return None
            chunk = os.read(descriptor, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self, grace: float = 2.0) -> None:
        """End the process: close its input (it halts at end of file), else kill it; always reap it."""
        process = self.process
        if process.poll() is None:
            try:
                if process.stdin:
                    process.stdin.close()
                process.wait(grace)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe and not pipe.closed:
                pipe.close()

    def _log_tail(self) -> str:
        try:
            return " ".join(self.log.read_text(errors="replace").split()[-60:]) or "(nothing on stderr)"
        except OSError:
            return "(no log)"


@Executor.register("geoquery_prolog")
class GeoQueryProlog(Executor):
    """GeoQuery Prolog forms executed by a pool of SWI-Prolog workers over Geobase.

    Workers start on first use. Answers are memoized per form (least recently used first out).

    Args:
        database: the folder holding ``geobase.pl`` and ``geoquery.pl``; by default
            ``geo-raw`` under the data root (``$DATA_ROOT``).
        workers: at most this many ``swipl`` processes, queried in parallel.
        timeout_seconds: the time one query may run; past it the answer is ``"timeout"``. Some
            gold GEO queries need several seconds (nested superlatives), hence the default.
        cache_size: how many forms' answers to remember (0: none).

    Registered as ``"geoquery_prolog"``.
    """

    def __init__(self, database: str | None = None, workers: int = 1, timeout_seconds: float = 20.0, cache_size: int = 100_000) -> None:
        swipl = shutil.which("swipl")
        if swipl is None:
            raise ConfigurationError(MISSING_SWIPL)
        if workers < 1:
            raise ConfigurationError(f"workers must be at least 1, got {workers}")
        if timeout_seconds <= 0:
            raise ConfigurationError(f"timeout_seconds must be positive, got {timeout_seconds}")
        self.swipl = swipl
        self.database = Path(database if database is not None else Path(data_root()) / "geo-raw").absolute()
        missing = [name for name in ("geobase.pl", "geoquery.pl") if not (self.database / name).is_file()]
        if missing:
            raise ConfigurationError(f"no {' and '.join(missing)} in {self.database} (set DATA_ROOT, or the executor's database)")
        self.workers = workers
        self.timeout_seconds = float(timeout_seconds)
        self.cache_size = cache_size
        self._setup()

    def _setup(self) -> None:
        self._idle: Queue[_Worker] = Queue()
        self._started: list[_Worker] = []
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
        # The worker enforces the limit itself; this margin only catches one stuck beyond it.
        deadline = time.monotonic() + self.timeout_seconds + max(2.0, self.timeout_seconds)
        denotation = worker.ask(query_id, query, deadline)
        if denotation is None:
            timed_out = worker.alive()
            self._discard(worker)
            return Denotation.timeout("the worker did not answer in time; restarted") if timed_out else Denotation.error("the worker died; restarted")
        self._idle.put(worker)
        return denotation

    def _borrow(self) -> _Worker:
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

    def _start(self) -> _Worker:
        with self._lock:  # workers start side by side: one folder, and no worker may read a half-written server
            if self._directory is None:
                self._directory = tempfile.TemporaryDirectory(prefix="geoquery_prolog_")
                (Path(self._directory.name) / "server.pl").write_text(_SERVER)
            folder = Path(self._directory.name)
        return _Worker(self.swipl, folder / "server.pl", self.database, self.timeout_seconds, folder / "stderr.log")

    def _discard(self, worker: _Worker) -> None:
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
        return {key: self.__dict__[key] for key in ("swipl", "database", "workers", "timeout_seconds", "cache_size")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()
