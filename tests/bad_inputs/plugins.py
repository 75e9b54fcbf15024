"""What a plugin author and a reader of the docs meet: deprecation warnings, missing plugins, a codec or a
system of one's own, examples in the docs that must run as written.
"""

from __future__ import annotations

import json
import tarfile
import warnings
from collections.abc import Callable

import pytest

from tests.bad_inputs.machinery import CONLLU, TSV, Case, Env
from tests.conftest import FIXTURES, REPO
from tests.test_docs import doc_examples
from toolkit import upgrades
from toolkit.data.example import Example
from toolkit.errors import DataError
from toolkit.upgrades import ToolkitDeprecationWarning
from transition_systems import SWAP, ValidActions

PLUGIN = REPO / "examples" / "plugin"
NON_PROJECTIVE = (  # "A hearing is scheduled on the issue today": the arc hearing -> on crosses is -> scheduled
    "# sent_id = np1\n"
    "1\tA\t_\tX\tX\t_\t2\tdet\t_\t_\n2\thearing\t_\tX\tX\t_\t3\tsbj\t_\t_\n3\tis\t_\tX\tX\t_\t0\troot\t_\t_\n"
    "4\tscheduled\t_\tX\tX\t_\t3\tvg\t_\t_\n5\ton\t_\tX\tX\t_\t2\tnmod\t_\t_\n6\tthe\t_\tX\tX\t_\t7\tdet\t_\t_\n"
    "7\tissue\t_\tX\tX\t_\t5\tpc\t_\t_\n8\ttoday\t_\tX\tX\t_\t4\tadv\t_\t_\n9\t.\t_\tX\tX\t_\t3\tp\t_\t_\n\n"
)
TWO_ROOTS = "# sent_id = r2\n1\tHi\t_\tX\tX\t_\t0\troot\t_\t_\n2\tthere\t_\tX\tX\t_\t0\troot\t_\t_\n\n"


# ------------------------------------------------------------------ deprecation warnings: once per call site


def warnings_of(env: Env, calls: Callable[[], None]) -> list[warnings.WarningMessage]:
    """The ToolkitDeprecationWarnings *calls* gives, with every warning shown each time (pytest's "always"), in a process that warned of nothing yet."""
    env.monkeypatch.setattr(upgrades, "_WARNED_SITES", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        calls()
    return [warning for warning in caught if warning.category is ToolkitDeprecationWarning]


def old_flags_in_a_hot_loop(env: Env) -> None:
    def calls():
        for step in range(100_000):
            ValidActions.of(shift=True, left=True, right=False, root=False, swap=False, root_label="root", shift_symbol="SHIFT")
            if step % 1000 == 0:
                warnings.filterwarnings("ignore", message="unrelated")  # as torch does: Python's record of the site is reset

    [warning] = warnings_of(env, calls)
    assert "shift_symbol=" in str(warning.message) and "ValidActions.of(moves=" in str(warning.message)


def old_but_from_two_sites(env: Env) -> None:
    valid, results = ValidActions.of(moves=["SHIFT"], root_label="root"), set()

    def calls():
        for _ in range(1000):
            results.add(valid.but(swap=True).moves)
            results.add(valid.but(swap=False).moves)

    found = warnings_of(env, calls)
    assert len(found) == 2 and found[0].lineno != found[1].lineno and results == {frozenset({"SHIFT", SWAP}), frozenset({"SHIFT"})}


def old_private_codec_hook(env: Env) -> str:
    from tree_codecs import LcrsDfsCodec

    where = Example(["q"], "( a )", {"path": "data.tsv", "line": 2})

    def calls():
        for _ in range(100):
            with pytest.raises(DataError, match="^data.tsv:2: mine$"):
                LcrsDfsCodec()._refuse(where, "mine")

    [warning] = warnings_of(env, calls)
    return str(warning.message)


# ------------------------------------------------------------------ an archive whose plugin is missing


def missing_plugin(record: dict) -> Callable[[Env], str]:
    """`toolkit predict` on the seq2seq archive, unpacked, whose plugins.json records a package nobody installed."""

    def check(env: Env) -> str:
        run = env.tmp / "run"
        with tarfile.open(env.archive()) as tar:
            tar.extractall(run, filter="data")
        (run / "manifest.json").unlink()  # an unpacked archive its owner trusts: no checksums to keep
        (run / "plugins.json").write_text(json.dumps([{"package": "my_parsers", "distribution": None, "version": None, **record}]))
        return env.cli_error("predict", run, env.write({"q.txt": "what state border s0\n"}))

    return check


# ------------------------------------------------------------------ a codec or a system of one's own


def with_the_plugin(env: Env) -> None:
    env.monkeypatch.syspath_prepend(str(PLUGIN))


def oracle_report(config: str, data: dict[str, str], overrides: dict | None = None) -> Callable[[Env], dict]:
    def report(env: Env) -> dict:
        with_the_plugin(env)
        path = env.write(data)
        env.monkeypatch.setenv("TRAIN", str(path))
        env.monkeypatch.setenv("TEST", str(path))
        args = ("-o", json.dumps(overrides)) if overrides else ()
        code, out, err = env.cli("oracle", FIXTURES / config, path, *args, "--include-package", "toolkit_example_plugin")
        assert code == 0, err
        return json.loads(out)

    return report


def postorder_round_trips(env: Env) -> None:
    report = oracle_report("tiny_postorder.jsonnet", {"data.tsv": TSV})(env)
    assert report["examples"] == report["exact_round_trips"] == 2 and report["oracle_errors"] == 0


def two_attribute_codec_round_trips(env: Env) -> None:
    from tree_codecs import Layout, Order, TreeCodec

    class LcrsBreadthFirst(TreeCodec):  # what lcrs_bfs is, written by a plugin
        layout, order = Layout.LCRS, Order.BREADTH_FIRST

    for line in TSV.splitlines():
        example = Example(["q"], line.split("\t")[1])
        assert LcrsBreadthFirst().replay(example).result() == " ".join(example.target.split())


def arc_eager_pseudo_projective(env: Env) -> None:
    report = oracle_report(
        "tiny_dependency.jsonnet", {"data.conllu": NON_PROJECTIVE}, {"grammar": {"type": "arc_eager", "non_projective": "pseudo_projective"}}
    )(env)
    assert (report["exact_round_trips"], report["lifted_arcs"], report["uas"], report["las"]) == (1, 2, 1.0, 1.0), report


def arc_eager_two_roots(env: Env) -> str:
    report = oracle_report("tiny_dependency.jsonnet", {"data.conllu": TWO_ROOTS}, {"grammar": {"type": "arc_eager"}})(env)
    assert report["oracle_errors"] == 1
    return env.clean(report["first_errors"][0])


def arc_eager_labeled_shift(env: Env) -> None:
    report = oracle_report("tiny_dependency.jsonnet", {"data.conllu": CONLLU}, {"grammar": {"type": "arc_eager", "labeled_shift_words": 2}})(env)
    assert report["exact_round_trips"] == report["examples"] == 2 and report["labeled_shifts"] >= 2


# ------------------------------------------------------------------ examples in the docs


def docs_rule(page: str, files: dict[str, str] | None = None) -> Callable[[Env], str]:
    """The runner's rules (.ci/doc_examples.py, and tests/test_docs.py) on a page of Markdown: the BlockError."""

    def check(env: Env) -> str:
        env.write({"page.md": page, **(files or {})})
        runner = doc_examples()
        with pytest.raises(runner.BlockError) as error:
            runner.read_blocks(env.tmp / "page.md", root=env.tmp)
        return str(error.value)

    return check


SERVE_AT_ONCE = '```bash\ntoolkit serve runs/ewt_quickstart/model.tar.gz --port 8000 &\ncurl -s localhost:8000/predict -d \'{"input": "Hi"}\'\n```\n'

CASES: list[Case] = [
    Case(
        "deprecation-in-a-hot-loop",
        "a plugin's `valid` calls the old `ValidActions.of(shift=True, ..., shift_symbol=...)` 100,000 times, with every warning shown (pytest) and the filters reset every 1,000 calls (as torch does)",
        "a plugin's transition system",
        "one `ToolkitDeprecationWarning`, naming every old argument, `shift_symbol=` included, and the new form (before: one per filter reset, twice a `toolkit train` run, and one per call under pytest: 103,896 in one plugin's test run)",
        old_flags_in_a_hot_loop,
        message=False,
    ),
    Case(
        "deprecation-two-call-sites",
        "the old `valid.but(swap=True)` and `valid.but(swap=False)`, 1,000 times each",
        "a plugin's transition system",
        "two warnings, one per call site; both calls still do what they did",
        old_but_from_two_sites,
        message=False,
    ),
    Case(
        "deprecation-private-codec-hook",
        "a codec calls `TreeCodec._refuse(example, why)` (private before the hooks were public) 100 times",
        "a plugin's tree codec",
        "TreeCodec._refuse is deprecated since parsing-toolkit 0.2 and may go in 0.3: call TreeCodec.refuse(example, why), with the same arguments; see CHANGELOG.md",
        old_private_codec_hook,
    ),
    Case(
        "plugin-missing-editable",
        "an archive whose plugin was installed with `pip install -e /home/me/my_parsers`, loaded where it is not installed",
        "`toolkit predict` (any load)",
        "error: run needs the plugin package 'my_parsers' (my-parsers 0.3.0, an editable install of /home/me/my_parsers), which is not installed: pip install -e /home/me/my_parsers",
        missing_plugin({"distribution": "my-parsers", "version": "0.3.0", "direct_url": {"url": "file:///home/me/my_parsers", "dir_info": {"editable": True}}}),
    ),
    Case(
        "plugin-missing-from-an-index",
        "the same, the plugin installed from a package index",
        "`toolkit predict` (any load)",
        "error: run needs the plugin package 'my_parsers' (my-parsers 0.3.0 from a package index), which is not installed: pip install my-parsers==0.3.0",
        missing_plugin({"distribution": "my-parsers", "version": "0.3.0", "direct_url": None}),
    ),
    Case(
        "plugin-missing-from-the-path",
        "the same, the plugin imported from `/work/my plugins` on the path, never pip-installed",
        "`toolkit predict` (any load)",
        "error: run needs the plugin package 'my_parsers' (imported from /work/my plugins when the archive was written), which is not installed: put '/work/my plugins' on PYTHONPATH or pip install it",
        missing_plugin({"path": "/work/my plugins"}),
    ),
    Case(
        "codec-postorder",
        "the post-order tree codec of docs/tree_codec_guide.md (the example plugin's), written on `TreeCodec`'s public hooks `visits` and `initial_state`",
        "`toolkit oracle` (`tiny_postorder.jsonnet`)",
        "every tree round-trips; `tests/test_example_plugin.py` has its properties, `tests/test_plugins.py` trains it",
        postorder_round_trips,
        message=False,
    ),
    Case(
        "codec-two-attributes",
        "a codec that sets only `layout` and `order` (`Layout.LCRS`, `Order.BREADTH_FIRST`)",
        "a plugin's tree codec",
        "every tree round-trips (`tests/test_tree_codecs.py` checks an n-ary breadth-first one on random trees)",
        two_attribute_codec_round_trips,
        message=False,
    ),
    Case(
        "arc-eager-pseudo-projective",
        "a non-projective tree, `non_projective: pseudo_projective` with the plugin's arc-eager system",
        "`toolkit oracle` (`tiny_dependency.jsonnet`)",
        "the crossing arc is lifted and lowered back: an exact round trip (UAS 1.0); the default, `projectivize`, gives UAS below 1",
        arc_eager_pseudo_projective,
        message=False,
    ),
    Case(
        "arc-eager-two-roots",
        "a gold tree with two words on the root, `single_root` (the default) with arc-eager, whose root arc is not its last action",
        "`toolkit oracle` (`tiny_dependency.jsonnet`)",
        "data.conllu:1: 2 words attach to the root (words [1, 2]); set grammar.single_root to false to allow that",
        arc_eager_two_roots,
    ),
    Case(
        "arc-eager-labeled-shift",
        "`labeled_shift_words: 2` with arc-eager, which never names `shift_symbol=`",
        "`toolkit oracle` (`tiny_dependency.jsonnet`)",
        "the words shift as `SHIFT:<word>` and every tree round-trips",
        arc_eager_labeled_shift,
        message=False,
    ),
    Case(
        "docs-server-not-waited-for",
        "a docs page's ```bash block starts `toolkit serve ... &` and curls at once (getting_started.md did: connection refused)",
        "`.ci/doc_examples.py`, `tests/test_docs.py`",
        "page.md:1: starts `toolkit serve` in the background and does not wait for it: poll /health before using it (timeout 60 sh -c 'until curl -sf localhost:8000/health >/dev/null; do sleep 1; done')",
        docs_rule(SERVE_AT_ONCE),
    ),
    Case(
        "docs-unknown-language",
        "a docs page's block in ```sh, neither run nor shown on purpose",
        "`.ci/doc_examples.py`, `tests/test_docs.py`",
        "page.md:2: a ```sh block is neither run (```bash, ```python) nor shown only (```console, ```text, ```jsonnet, ```ini, ```json, ```yaml, ```toml, ```html, ```diff): write one of them",
        docs_rule("Run:\n```sh\ntoolkit list\n```\n"),
    ),
    Case(
        "docs-excerpt-drifted",
        "a docs block titled with a file of the repository whose lines have changed since",
        "`.ci/doc_examples.py`, `tests/test_docs.py`",
        "page.md:1: the block titled codec.py is not an excerpt of that file any more: copy the file's lines again",
        docs_rule('```python title="codec.py"\nlayout = Layout.NARY\n```\n', {"codec.py": "layout = Layout.LCRS\n"}),
    ),
]
