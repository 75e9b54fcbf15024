"""No test depends on how fast the machine is, checked over the tests' own source.

The README's test command failed on a busy machine (issue 60): a test expected exactly one query to
run past a 20 s limit, others asserted `< 5 s`. A duration can be bounded from below (a slow
machine only makes it truer) or by a backstop no machine comes near (:data:`tests.waiting.GENEROUS`,
at least a minute), never by a few seconds; and Hypothesis's per-example deadline and its
slow-generation check, clocks too, stay off (tests/conftest.py).
"""

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "perf_counter", "process_time", "monotonic_ns", "perf_counter_ns", "time_ns"}
BACKSTOP = 60  # seconds: the least upper bound on a duration that a test may assert


def is_clock(node: ast.AST) -> bool:
    """A call that reads a clock: ``time.monotonic()``, ``perf_counter()``, ``time.time()``, ``loop.time()``..."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Name):
        return function.id in CLOCKS
    if not isinstance(function, ast.Attribute):
        return False
    owner = ast.unparse(function.value)
    return function.attr in CLOCKS or (function.attr == "time" and (owner == "time" or "loop" in owner))


def reads_clock(node: ast.AST | None, names: set[str]) -> bool:
    """Whether *node* reads a clock, or one of the *names* that hold a reading."""
    return node is not None and any(is_clock(part) or (isinstance(part, ast.Name) and part.id in names) for part in ast.walk(node))


def clock_names(scope: ast.AST) -> set[str]:
    """The names in *scope* that hold a clock reading or something made from one (a difference, a dict of them, its values)."""
    names: set[str] = set()

    def tainted(node: ast.AST | None) -> bool:
        return reads_clock(node, names)

    def bound(target: ast.AST) -> set[str]:
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        return {part.id for part in ast.walk(target) if isinstance(part, ast.Name)}

    while True:
        before = len(names)
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and tainted(node.value):
                names |= set().union(*(bound(target) for target in node.targets))
            source = node.iter if isinstance(node, (ast.For, ast.comprehension)) else getattr(node, "value", None)
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.comprehension)) and tainted(source):
                names |= bound(node.target)
        if len(names) == before:
            return names


def is_backstop(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "GENEROUS"
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):  # not a literal
        return False
    return isinstance(value, (int, float)) and value >= BACKSTOP


def upper_bounds_on_clocks(tree: ast.AST) -> list[str]:
    """The asserts that bound a clock reading from above by less than a backstop."""
    found = []
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    top_level = ast.Module([statement for statement in getattr(tree, "body", []) if not isinstance(statement, ast.ClassDef) and statement not in functions], [])
    scopes = [top_level, *functions]  # a function with the functions inside it, which read its names
    for scope in scopes:
        names = clock_names(scope)
        for check in ast.walk(scope):
            if not isinstance(check, ast.Assert):
                continue
            for compare in (node for node in ast.walk(check.test) if isinstance(node, ast.Compare)):
                sides = [compare.left, *compare.comparators]
                for left, op, right in zip(sides, compare.ops, sides[1:]):
                    if isinstance(op, (ast.Lt, ast.LtE)):
                        small, large = left, right
                    elif isinstance(op, (ast.Gt, ast.GtE)):
                        small, large = right, left
                    else:
                        continue
                    if reads_clock(small, names) and not is_backstop(large):
                        found.append(f"line {check.lineno}: {ast.unparse(check)[:120]}")
    return sorted(set(found))


SOURCES = sorted(TESTS.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(path.relative_to(TESTS)) for path in SOURCES])
def test_no_test_bounds_a_duration_by_a_few_seconds(path):
    """Count the work instead (tests/test_large_graphs.py), fake the clock, or wait for the event (tests/waiting.py)."""
    assert upper_bounds_on_clocks(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_checker_finds_what_issue_60_met():
    """The forms the tests had: a timer helper, a stop timed to a few seconds, a loop that gave up after 5 s and its count."""
    timer = "def __exit__(self, *exc):\n    elapsed = time.perf_counter() - self.start\n    assert exc[0] is not None or elapsed < seconds\n"
    stop = "started = time.monotonic()\nstop()\ntook = time.monotonic() - started\nassert took < 5, took\n"
    loop = "began, closed = time.monotonic(), {}\nclosed[s] = time.monotonic() - began\nassert all(0.8 < t < 3 for t in closed.values())\n"
    for source in (timer, stop, loop):
        assert len(upper_bounds_on_clocks(ast.parse(source))) == 1, source
    fine = (
        "opened = time.monotonic()\nassert time.monotonic() - opened >= 0.9\n"  # a lower bound
        "assert time.monotonic() - waited < 300\nassert time.monotonic() - waited < GENEROUS\n"  # backstops
        "assert len(items) < 5\n"  # no clock
    )
    assert upper_bounds_on_clocks(ast.parse(fine)) == []


def test_hypothesis_reads_no_clock():
    assert settings.default.deadline is None and HealthCheck.too_slow in settings.default.suppress_health_check
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "settings":
                given = {keyword.arg: ast.unparse(keyword.value) for keyword in node.keywords}
                assert given.get("deadline", "None") == "None", f"{path.name}:{node.lineno}: a deadline per example"
                assert "too_slow" in given.get("suppress_health_check", "too_slow"), f"{path.name}:{node.lineno}: its own health checks, too_slow among them"
