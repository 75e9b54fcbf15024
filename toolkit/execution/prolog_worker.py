"""One long-lived ``swipl`` process that answers GeoQuery queries over a line protocol, so a query costs a round trip, not a start-up.

The worker has consulted ``geobase.pl`` and ``geoquery.pl`` and serves a line protocol on its
pipes. Python writes ``ID<TAB>FORM`` on one line; the worker reads the form with
``term_string`` inside ``catch/3`` (a malformed form is an error answer, not a stuck reader),
runs it under ``call_with_time_limit`` with its printing swallowed, and replies with a header
line ``ID ok N`` (then N answers, one a line), ``ID error WHY`` or ``ID timeout``, closed by
``ID end``. Python reads up to the ``end`` of its own ID, so stray output cannot shift replies.

The worker refuses forms that mention a built-in it does not need (``halt``, ``shell``,
``assert``...): predicted forms are model output, and must not stop or change the worker.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

from toolkit.errors import ConfigurationError
from toolkit.execution.executor import Denotation

# The worker's program: loaded by path, then it serves one request a line until its input ends.
SERVER_PROGRAM = r"""
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


class PrologWorker:
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
