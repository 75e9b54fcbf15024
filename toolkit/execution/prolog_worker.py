"""One long-lived ``swipl`` process that answers GeoQuery queries over a line protocol, so a query costs a round trip, not a start-up.

The worker has consulted ``geobase.pl``, ``geoquery.pl`` and the toolkit's prelude (below) and
serves a line protocol on its pipes. Python writes ``ID<TAB>FORM`` on one line; the worker replies
with a header line ``ID ok N KINDS`` (then N answers, one a line; KINDS: the answers' kinds, joined
by commas), ``ID error WHY`` or ``ID limit KIND``, closed by ``ID end``. Python reads up to the
``end`` of its own ID, so stray output cannot shift replies.

A query runs as ``execute_query/2`` runs it (geoquery.pl's ``tq/2``, then each solution's
``print_name/2``), and each answer's kind is read off its term before it is printed as a name
(``cityid(austin, tx)``: ``city``); see :attr:`~toolkit.execution.Denotation.kinds`.

**The prelude** defines what GEO's gold queries use and ``geoquery.pl`` lacks, without editing the
data: ``sum/4`` (``sum(Var, Goal, Measure, Total)``: the total of ``Measure`` over the distinct
``Var`` that satisfy ``Goal``, ``Measure`` being a goal short of its value, ``population(C)``), which
three training and two test gold queries use; ``geoquery.pl`` has only ``sum/3``.

A query's whole life in the worker runs under its :class:`Limits`: reading the form, running it,
and making its answers text, so that no answer is printed outside them (a 1 KB query whose answer
shares its subterms prints gigabytes). The limits are a time limit, an inference limit (a count of
Prolog calls: the same query stops at the same point on any machine, however busy), Prolog's
stack limit (which covers ``findall``'s bags and big integers too), and a size limit on the
answers' text, checked by a walk that gives up within that many steps before anything is printed.
An answer that is not ground (``answer(A, state(B))`` leaves ``A`` unbound) is an error of the
query, never an answer. What the query's predicates print goes to a null stream; replies go to
``user_output``.

The worker refuses forms that mention a built-in it does not need (``halt``, ``shell``,
``assert``...): predicted forms are model output, and must not stop or change the worker.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import ConfigurationError
from toolkit.execution.executor import Denotation

try:
    import resource
except ImportError:  # not on Windows: the stack limit stands alone there
    resource = None  # type: ignore[assignment]

# The worker's program: loaded by path, then it serves one request a line until its input ends.
# argv: the database folder, then the limits (seconds, inferences or 0 for none, stack bytes, answer characters).
SERVER_PROGRAM = r"""
:- use_module(library(time)).
:- use_module(library(readutil)).
:- use_module(library(lists)).
:- use_module(library(apply)).

geo_main :-
    current_prolog_flag(argv, [Dir, Seconds0, Inferences0, Stack0, Chars0|_]),
    maplist(atom_number, [Seconds0, Inferences0, Stack0, Chars0], [Seconds, Inferences1, Stack, Chars]),
    (   Inferences1 =:= 0
    ->  Inferences = infinite
    ;   Inferences = Inferences1
    ),
    nb_setval(geo_limits, limits(Seconds, Inferences, Chars)),
    atomic_list_concat([Dir, '/geobase.pl'], Base),
    atomic_list_concat([Dir, '/geoquery.pl'], Query),
    load_files(user:[Base, Query], [silent(true)]),
    geo_prelude,
    autoload_all,
    set_prolog_flag(autoload, false),
    set_prolog_flag(stack_limit, Stack),
    open_null_stream(Null),
    set_output(Null),
    (   current_predicate(user:execute_query/2)
    ->  format(user_output, "ready~n", [])
    ;   format(user_output, "failed no execute_query/2 after loading ~w~n", [Query])
    ),
    flush_output(user_output),
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
    geo_limited(geo_run(Text), Reply),
    geo_reply(Id, Reply),
    flush_output(user_output).

% The goal's whole life under the time, inference and memory limits: Reply is ok(Lines), error(Why) or limit(Kind).
geo_limited(Goal, Reply) :-
    nb_getval(geo_limits, limits(Seconds, Inferences, _)),
    catch(call_with_time_limit(Seconds, geo_counted(Goal, Inferences, Reply)), Error, geo_stopped(Error, Reply)).

geo_counted(Goal, infinite, Reply) :-
    !,
    call(Goal, Reply).
geo_counted(Goal, Inferences, Reply) :-
    call_with_inference_limit(call(Goal, Reply0), Inferences, Outcome),
    (   Outcome == inference_limit_exceeded
    ->  Reply = limit(inferences)
    ;   Reply = Reply0
    ).

geo_stopped(time_limit_exceeded, limit(time)) :- !.
geo_stopped(time_limit_exceeded(_), limit(time)) :- !.
geo_stopped(error(resource_error(_), _), limit(memory)) :- !.
geo_stopped(Error, error(Why)) :-
    (   compound(Error)
    ->  compound_name_arity(Error, Name, Arity),
        format(string(Why), "stopped by ~q", [Name/Arity])
    ;   format(string(Why), "stopped by ~q", [Error])
    ).

% The limits' own exceptions pass through the query's error handling to the limits.
geo_limit_error(time_limit_exceeded).
geo_limit_error(time_limit_exceeded(_)).
geo_limit_error(inference_limit_exceeded).
geo_limit_error(error(resource_error(_), _)).

geo_run(Text, Reply) :-
    catch(geo_answers(Text, Reply), Error, geo_failed(Error, Reply)).

geo_failed(Error, _) :-
    geo_limit_error(Error),
    !,
    throw(Error).
geo_failed(Error, error(Why)) :-
    geo_error_text(Error, Why).

geo_answers(Text, Reply) :-
    term_string(Query, Text),
    (   geo_forbidden(Query, Name/Arity)
    ->  format(string(Why), "~q is not allowed in a query", [Name/Arity]),
        Reply = error(Why)
    ;   geo_typed_query(Query, Answers, Kinds)
    ->  geo_answer_lines(Answers, Kinds, Reply)
    ;   Reply = error("not a query of the form answer(Var, Goal)")
    ).

% What execute_query/2 answers (its very steps: tq/2, then each solution's print_name/2, sorted), and the
% kinds of the answers, read off each answer's term before print_name/2 makes it a name; a geoquery.pl
% without those steps is asked execute_query/2 itself, and its answers have no kinds.
geo_typed_query(Query, Answers, Kinds) :-
    (   current_predicate(user:tq/2),
        current_predicate(user:print_name/2)
    ->  user:tq(Query, answer(Var, Goal)),
        findall(Name-Kind, (user:Goal, user:print_name(Var, Name), geo_kind(Var, Kind)), Pairs),
        pairs_keys_values(Pairs, Names, Kinds0),
        sort(Names, Answers),
        sort(Kinds0, Kinds)
    ;   user:execute_query(Query, Answers),
        Kinds = []
    ).

geo_kind(Term, Kind) :-
    (   var(Term)
    ->  Kind = unbound
    ;   number(Term)
    ->  Kind = number
    ;   geo_id_kind(Term, Kind0)
    ->  Kind = Kind0
    ;   ( Term = _/_ ; Term = _*_ ; Term = _+_ ; Term = _-_ )
    ->  Kind = number  % print_name/2 evaluates it
    ;   atom(Term)
    ->  Kind = name
    ;   Kind = other
    ).

geo_id_kind(stateid(_), state).
geo_id_kind(cityid(_, _), city).
geo_id_kind(riverid(_), river).
geo_id_kind(lakeid(_), lake).
geo_id_kind(mountainid(_), mountain).
geo_id_kind(placeid(_), place).
geo_id_kind(countryid(_), country).

% The toolkit's prelude, loaded after geoquery.pl: what GEO's gold queries use and geoquery.pl lacks
% (a definition geoquery.pl has is left as it is).
geo_prelude :-
    (   current_predicate(user:sum/4)
    ->  true
    ;   assertz((user:sum(Var, Goal, Measure, Total) :- geo_sum(Var, Goal, Measure, Total)))
    ).

% sum(+Var, +Goal, +Measure, -Total): the total of Measure over the distinct values of Var that satisfy Goal;
% Measure is a goal short of its last argument, the value (population(C) for population(C, P)). It reads as
% count/3 counts (each entity once), and as the gold queries mean it: "what is the total population of the
% states that border texas?" is answer(A, sum(C, (state(C), next_to(D, C), const(D, stateid(texas))), population(C), A)).
geo_sum(Var, Goal, Measure, Total) :-
    findall(Var, Goal, Found),
    sort(Found, Distinct),
    findall(Value, (member(Var, Distinct), call(Measure, Value)), Values),
    sum_list(Values, Total).

geo_answer_lines(Answers, Kinds, Reply) :-
    nb_getval(geo_limits, limits(_, _, Chars)),
    (   \+ geo_fits(Answers, Chars, _)
    ->  Reply = limit(answer_size)
    ;   member(Answer, Answers),
        \+ ground(Answer)
    ->  copy_term(Answer, Copy),
        numbervars(Copy, 0, _, [singletons(true)]),
        format(string(Text), "~W", [Copy, [quoted(true), numbervars(true)]]),
        geo_one_line(Text, Line),
        geo_truncated(Line, 200, Shown),
        format(string(Why), "an answer is not ground (it holds an unbound variable): ~w", [Shown]),
        Reply = error(Why)
    ;   maplist(geo_answer_text, Answers, Lines),
        foldl(geo_add_length, Lines, 0, Length),
        (   Length > Chars
        ->  Reply = limit(answer_size)
        ;   Reply = ok(Lines, Kinds)
        )
    ).

geo_add_length(Line, Sum0, Sum) :-
    string_length(Line, N),
    Sum is Sum0 + N + 1.

% geo_fits(+Terms, +Budget0, -Budget): the terms' text needs at most Budget0 characters (counting each name and
% number, and one per argument: less than the text). It fails as soon as they need more, so it takes at most
% Budget0 steps whatever the terms (a term whose subterms are shared can have a text of gigabytes).
geo_fits([], Budget, Budget).
geo_fits([Term|Terms], Budget0, Budget) :-
    geo_fits_term(Term, Budget0, Budget1),
    geo_fits(Terms, Budget1, Budget).

geo_fits_term(Term, Budget0, Budget) :-
    (   var(Term)
    ->  Budget is Budget0 - 1
    ;   atomic(Term)
    ->  atom_length(Term, N),
        Budget is Budget0 - N - 1
    ;   compound_name_arity(Term, Name, Arity),
        atom_length(Name, N),
        Budget1 is Budget0 - N - Arity - 1,
        Budget1 >= 0,
        geo_fits_args(1, Arity, Term, Budget1, Budget)
    ),
    Budget >= 0.

geo_fits_args(I, Arity, Term, Budget0, Budget) :-
    (   I > Arity
    ->  Budget = Budget0
    ;   arg(I, Term, Arg),
        geo_fits_term(Arg, Budget0, Budget1),
        I1 is I + 1,
        geo_fits_args(I1, Arity, Term, Budget1, Budget)
    ).

geo_answer_text(Answer, Line) :-
    (   atom(Answer)
    ->  format(string(Text), "~a", [Answer])
    ;   format(string(Text), "~W", [Answer, [quoted(true), numbervars(false)]])
    ),
    geo_one_line(Text, Line).

geo_error_text(Error, Why) :-
    (   Error = error(_, _),
        catch(message_to_codes(Error, Codes), _, fail)
    ->  true
    ;   format(codes(Codes), "~q", [Error])
    ),
    geo_one_line(Codes, Line),
    geo_truncated(Line, 500, Why).

message_to_codes(Error, Codes) :-
    '$messages':translate_message(Error, Lines, []),
    with_output_to(codes(Codes), print_message_lines(current_output, '', Lines)).

geo_truncated(Text, Most, Shown) :-
    (   string_length(Text, N),
        N > Most
    ->  sub_string(Text, 0, Most, _, Start),
        string_concat(Start, "...", Shown)
    ;   Shown = Text
    ).

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

geo_reply(Id, ok(Lines, Kinds)) :-
    length(Lines, N),
    atomic_list_concat(Kinds, ',', Joined),
    format(user_output, "~w ok ~d ~w~n", [Id, N, Joined]),
    forall(member(Line, Lines), format(user_output, "~w~n", [Line])),
    format(user_output, "~w end~n", [Id]).
geo_reply(Id, limit(Kind)) :-
    format(user_output, "~w limit ~w~n~w end~n", [Id, Kind, Id]).
geo_reply(Id, error(Why)) :-
    format(user_output, "~w error ~w~n~w end~n", [Id, Why, Id]).

geo_one_line(Text, Line) :-
    split_string(Text, "\n\r", " ", Parts),
    exclude(==(""), Parts, Kept),
    atomic_list_concat(Kept, ' ', Atom),
    atom_string(Atom, Line).

:- initialization(geo_main, main).
"""


@dataclass(frozen=True)
class Limits:
    """What one query may use in a worker, from reading its form to its answers' text.

    *seconds* of wall time; *inferences*, Prolog calls (``None``: no limit), the limit that stops a
    query at the same point on a busy machine as on an idle one; *memory_mb*, Prolog's stacks (the
    worker's address space is capped at twice that plus 1 GiB, for what lives outside them);
    *answer_chars*, the answers' text.
    """

    seconds: float
    inferences: int | None
    memory_mb: int
    answer_chars: int

    def argv(self) -> list[str]:
        return [repr(float(self.seconds)), str(self.inferences or 0), str(self.memory_mb << 20), str(self.answer_chars)]

    def stopped(self, kind: str) -> Denotation:
        """The denotation of a query that the limit *kind* stopped (``time``, ``inferences``, ``memory`` or ``answer_size``), naming it."""
        if kind == "time":
            return Denotation.timeout(f"over the time limit ({self.seconds:g} s)")
        if kind == "inferences":
            return Denotation.timeout(f"over the inference limit ({self.inferences:,} inferences)")
        if kind == "memory":
            return Denotation.out_of_memory(f"over the memory limit ({self.memory_mb:,} MB of Prolog stacks)")
        return Denotation.out_of_memory(f"answers over the size limit ({self.answer_chars:,} characters)")

    @property
    def address_space(self) -> int:
        """The worker's address-space cap in bytes: a backstop for what the stack limit does not cover."""
        return (2 * self.memory_mb << 20) + (1 << 30)

    @property
    def reply_bytes(self) -> int:
        """The longest reply line Python reads: the answers' text in UTF-8, and room for an error's."""
        return 4 * self.answer_chars + 4096


class PrologWorker:
    """One ``swipl`` process serving queries on its pipes, each under *limits*.

    ``overflowed`` says that a reply line ran past ``limits.reply_bytes`` (the worker keeps its
    answers under that, so it is not in step any more): the worker is then unusable, as after a
    missed deadline.
    """

    def __init__(self, swipl: str, server: Path, database: Path, limits: Limits, log: Path, startup_seconds: float = 60.0):
        self.log, self.limits, self.overflowed = log, limits, False
        with open(log, "ab") as stderr:
            self.process = subprocess.Popen(
                [swipl, "-q", "-O", "--no-tty", str(server), str(database), *limits.argv()],
                cwd=database,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=0,
            )
        if resource is not None and hasattr(resource, "prlimit"):  # Linux
            with contextlib.suppress(OSError, ValueError):  # gone already: the readline below says so
                resource.prlimit(self.process.pid, resource.RLIMIT_AS, (limits.address_space, limits.address_space))
        self._buffer = b""
        line = self.readline(time.monotonic() + startup_seconds)
        if line != "ready":
            self.close()
            why = line if line is not None else "no answer: " + self._log_tail()
            raise ConfigurationError(f"SWI-Prolog could not load Geobase from {database}: {why}")

    def ask(self, query_id: str, query: str, deadline: float) -> Denotation | None:
        """The denotation of *query*; ``None`` when the worker died, missed *deadline* or overflowed (then it is unusable)."""
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
        if kind == "ok":  # "N KINDS": the answers' kinds, joined by commas
            counted = detail.split()
            return Denotation.of(answers, counted[1].split(",") if len(counted) > 1 else ())
        if kind == "limit":
            return self.limits.stopped(detail)
        return Denotation.error(detail)

    def readline(self, deadline: float) -> str | None:
        """The next line of output, or ``None`` at end of file, past *deadline*, or past ``limits.reply_bytes`` (``overflowed``)."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            if len(self._buffer) > self.limits.reply_bytes:
                self.overflowed = True
                return None
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
        if len(line) > self.limits.reply_bytes:
            self.overflowed = True
            return None
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
