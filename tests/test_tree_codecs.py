"""Tree codecs: notations, LCRS, traversals with paths, and the incremental state of each codec."""

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.data.example import Example
from toolkit.errors import ConfigurationError, DataError
from toolkit.grammars import Grammar
from tree_codecs import (
    ArityAtMost,
    BinaryTree,
    Frontier,
    Layout,
    LcrsBfsCodec,
    LcrsDfsCodec,
    NaryDfsCodec,
    Order,
    Tree,
    TreeCodec,
    breadth_first,
    depth_first,
    difference,
    from_lcrs,
    leaf_labels,
    parse_lisp,
    parse_prolog,
    rebuild,
    replace_at,
    replace_leaves,
    split_symbol,
    subtree_paths,
    symbol,
    to_lcrs,
    to_lisp,
    to_prolog,
    traverse,
)

CODECS = {"lcrs_dfs": LcrsDfsCodec, "lcrs_bfs": LcrsBfsCodec, "nary_dfs": NaryDfsCodec}


def leaf(label):
    return Tree(label)


# ( f ( g a b ) c ): five nodes, worked out by hand below.
FIVE = Tree("f", (Tree("g", (leaf("a"), leaf("b"))), leaf("c")))


def visits(found):
    return [(visit.symbol, visit.path) for visit in found]


# ---------------------------------------------------------------- hand-checked cases


def test_five_node_tree_measures_and_lcrs_form():
    assert parse_lisp("( f ( g a b ) c )") == FIVE and to_lisp(FIVE) == "( f ( g a b ) c )"
    assert (FIVE.size, FIVE.depth, FIVE.max_degree) == (5, 2, 2)
    # g is f's first child; g's next sibling is c; a is g's first child, b a's next sibling.
    assert to_lcrs(FIVE) == BinaryTree("f", BinaryTree("g", BinaryTree("a", None, BinaryTree("b")), BinaryTree("c")))
    assert from_lcrs(to_lcrs(FIVE)) == FIVE


def test_five_node_tree_traversals_and_paths():
    assert visits(depth_first(FIVE, Layout.NARY)) == [("f/2", ()), ("g/2", (0,)), ("a/0", (0, 0)), ("b/0", (0, 1)), ("c/0", (1,))]
    assert visits(depth_first(FIVE, Layout.LCRS)) == [("f/2", ()), ("g/2", (0,)), ("a/0", (0, 0)), ("b/0", (0, 0, 1)), ("c/0", (0, 1))]
    # BFS over the binary tree: level 2 holds a (first child of g) and c (next sibling of g).
    assert visits(breadth_first(FIVE, Layout.LCRS)) == [("f/2", ()), ("g/2", (0,)), ("a/0", (0, 0)), ("c/0", (0, 1)), ("b/0", (0, 0, 1))]
    assert visits(breadth_first(FIVE, Layout.NARY)) == [("f/2", ()), ("g/2", (0,)), ("c/0", (1,)), ("a/0", (0, 0)), ("b/0", (0, 1))]


def test_five_node_tree_oracles_and_allowed_bounds():
    example = Example(["q"], "( f ( g a b ) c )")
    assert LcrsDfsCodec().oracle(example) == ["f/2", "g/2", "a/0", "b/0", "c/0"]
    assert NaryDfsCodec().oracle(example) == ["f/2", "g/2", "a/0", "b/0", "c/0"]
    assert LcrsBfsCodec().oracle(example) == ["f/2", "g/2", "a/0", "c/0", "b/0"]
    state = LcrsDfsCodec(max_nodes=5).initial_state(example)
    limits = []
    for name in ["f/2", "g/2", "a/0", "b/0", "c/0"]:
        limits.append(state.allowed().limit)
        state = state.apply(name)
    assert limits == [4, 2, 0, 0, 0]  # max_nodes - nodes so far - open slots
    assert state.is_final() and state.allowed() == () and state.result() == "( f ( g a b ) c )"
    assert state.features() == {"path": (), "degree": 2}


def test_state_is_a_value_and_guards_its_contract():
    codec = LcrsDfsCodec(max_nodes=3)
    start = codec.initial_state(Example(["q"]))
    after = start.apply("g/1")
    assert start.symbols == () and after.symbols == ("g/1",)
    assert start.features() == {"path": (), "degree": 2} and after.features()["path"] == (0,)
    with pytest.raises(ValueError, match="not complete"):
        after.result()
    with pytest.raises(ValueError, match="not allowed"):
        after.apply("h/2")  # 2 nodes + 2 children > 3
    with pytest.raises(ValueError, match="not allowed"):
        after.apply("plain")
    done = after.apply("x/0")
    with pytest.raises(ValueError):
        done.apply("x/0")
    assert done.result() == "( g x )"


def test_nary_features_and_degree_bound():
    codec = NaryDfsCodec(max_degree=3)
    state = codec.initial_state(Example(["q"]))
    assert state.features() == {"path": (), "degree": 3} and state.allowed() == ArityAtMost(3)
    with pytest.raises(DataError, match=r"data.txt:7: a node has 4 children, more than grammar.max_degree = 3"):
        codec.oracle(Example(["q"], "( and a b c d )", {"path": "data.txt", "line": 7}))


def test_arity_symbols():
    assert symbol("and", 3) == "and/3" and split_symbol("and/3") == ("and", 3)
    assert split_symbol("a/b/0") == ("a/b", 0) and split_symbol("//12") == ("/", 12)
    for bad in ["and", "and/", "and/x", "and/01", "/3", "and/-1"]:
        with pytest.raises(ValueError):
            split_symbol(bad)
    bound = ArityAtMost(2)
    assert "and/2" in bound and "a/b/0" in bound and "and/3" not in bound and "@PAD@" not in bound and 5 not in bound
    assert TreeCodec.arity("flight/1") == 1 and TreeCodec.arity("@EOS@") is None
    # one label, several arities: several symbols
    tree = parse_lisp("( and ( and a b ) c d )")
    assert {visit.symbol for visit in depth_first(tree, Layout.NARY) if visit.label == "and"} == {"and/2", "and/3"}


def test_lisp_errors():
    for bad, why in [
        ("( a b", "unbalanced '\\('"),
        ("a b )", "already ended"),
        ("( a b ) c", "already ended"),
        (") a", "unbalanced '\\)'"),
        ("( )", "followed by an atom"),
        ("( ( a b ) c )", "followed by an atom"),
        ("( x )", "no arguments"),
        ("  ", "empty"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_lisp(bad)


def test_prolog_reading_keeps_operators_and_brackets():
    text = "job ( ANS ) , \\+ ( a ( X ) , b ( X ) ) ; ( c ( X , 20 ) )"
    tree = parse_prolog(text)
    group = Tree("()", (Tree(",", (Tree("a", (leaf("X"),)), Tree("b", (leaf("X"),)))),))
    assert tree == Tree(
        ";",
        (
            Tree(",", (Tree("job", (leaf("ANS"),)), Tree("\\+", (group,)))),
            Tree("()", (Tree("c", (leaf("X"), leaf("20"))),)),
        ),
    )
    assert to_prolog(tree) == text
    assert to_prolog(parse_prolog("ANS")) == "ANS"
    # trees the reader never builds still print as the same logic
    assert to_prolog(Tree(",", (leaf("a"), Tree(";", (leaf("b"), leaf("c")))))) == "a , ( b ; c )"
    assert to_prolog(Tree("\\+", (Tree(",", (leaf("a"), leaf("b"))),))) == "\\+ ( a , b )"


def test_prolog_errors():
    for bad in ["job ( ANS", "job ( ANS ) )", "job ( ANS ) ,", "( )", ", a", "job ( )", "\\+", ""]:
        with pytest.raises(ValueError):
            parse_prolog(bad)


def test_oracle_reports_file_and_line():
    example = Example(["q"], "( a ( b c )", {"path": "train.txt", "line": 3})
    for codec in CODECS.values():
        with pytest.raises(DataError, match=r"^train.txt:3: lisp logical form: unbalanced"):
            codec().oracle(example)
    with pytest.raises(DataError, match="more than grammar.max_nodes = 2"):
        LcrsBfsCodec(max_nodes=2).oracle(Example(["q"], "( f a b )"))


def test_too_deep_counts_paths_in_the_codec_layout():
    wide = Example(["q"], "( f a b c d e )")  # e is at n-ary (4,) but LCRS (0, 1, 1, 1, 1)
    assert LcrsDfsCodec(max_depth=4).too_deep(wide) and not LcrsDfsCodec(max_depth=5).too_deep(wide)
    assert not NaryDfsCodec(max_depth=1).too_deep(wide)
    assert NaryDfsCodec(max_depth=1).too_deep(Example(["q"], "( f ( g a ) )"))


def test_registered_and_configurable():
    for name, cls in CODECS.items():
        assert isinstance(Grammar.from_params({"type": name}), cls)
    codec = Grammar.from_params({"type": "nary_dfs", "format": "prolog", "max_nodes": 50, "max_degree": 4})
    assert (codec.format, codec.max_nodes, codec.max_degree) == ("prolog", 50, 4)
    with pytest.raises(ConfigurationError):
        Grammar.from_params({"type": "lcrs_dfs", "format": "xml"})
    with pytest.raises(ConfigurationError):
        LcrsDfsCodec(max_nodes=0)


# ---------------------------------------------------------------- properties on random trees

LABELS = st.sampled_from(["a", "b", "and", "f/1", "$0", "x:t"])


def trees(labels=LABELS, max_children=4):
    return st.recursive(
        st.builds(Tree, labels),
        lambda kids: st.builds(Tree, labels, st.lists(kids, min_size=1, max_size=max_children).map(tuple)),
        max_leaves=12,
    ).filter(lambda tree: tree.size <= 30)


LAYOUTS_ORDERS = [(layout, order) for layout in Layout for order in Order]


@settings(max_examples=150, deadline=None)
@given(trees())
def test_lcrs_round_trip(tree):
    assert from_lcrs(to_lcrs(tree)) == tree


@settings(max_examples=150, deadline=None)
@given(trees())
def test_traverse_and_rebuild_round_trip(tree):
    for layout, order in LAYOUTS_ORDERS:
        found = traverse(tree, layout, order)
        assert len(found) == tree.size and len({visit.path for visit in found}) == tree.size
        assert rebuild([(visit.label, visit.arity) for visit in found], layout, order) == tree
    nary = depth_first(tree, Layout.NARY)
    assert max(len(visit.path) for visit in nary) == tree.depth
    assert [visit.symbol for visit in nary] == [visit.symbol for visit in depth_first(tree, Layout.LCRS)]


@settings(max_examples=100, deadline=None)
@given(trees(st.sampled_from(["a", "b/c", "and", "$0", "x:t"])))
def test_notations_round_trip(tree):
    assert parse_lisp(to_lisp(tree)) == tree
    assert parse_prolog(to_prolog(tree)) == tree  # no operator labels: every node is a term


NATURAL_ARITY = {",": range(2, 99), ";": range(2, 99), "\\+": (1,), "()": (1,)}


def operators_at_their_arity(tree):
    """Relabel operator nodes at another arity than their own as plain terms."""
    children = tuple(map(operators_at_their_arity, tree.children))
    label = tree.label if tree.arity in NATURAL_ARITY.get(tree.label, range(99)) else "f"
    return Tree(label, children)


@settings(max_examples=150, deadline=None)
@given(trees(st.sampled_from([",", ";", "\\+", "()", "job", "ANS"])).map(operators_at_their_arity))
def test_prolog_text_round_trips_when_operators_have_their_arity(tree):
    text = to_prolog(tree)
    assert to_prolog(parse_prolog(text)) == text


@settings(max_examples=100, deadline=None)
@given(trees())
def test_replaying_each_oracle_rebuilds_the_tree_along_the_traversal_paths(tree):
    text = to_lisp(tree)
    for name, cls in CODECS.items():
        codec = cls(max_nodes=30)
        example = Example(["q"], text)
        derivation = codec.derive(example)
        found = traverse(tree, codec.layout, codec.order)
        assert derivation.symbols == [visit.symbol for visit in found]
        assert [features["path"] for features in derivation.features] == [visit.path for visit in found], name
        state = codec.initial_state(example)
        for name in derivation.symbols:
            state = state.apply(name)
        assert state.is_final() and state.tree() == tree and state.result() == text


WALK_ALPHABET = ["a/0", "b/0", "f/1", "g/2", "h/3", "and/5", "plain", "@PAD@"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(CODECS)), st.integers(1, 20), st.lists(st.integers(0, 1000), min_size=20, max_size=20))
def test_random_walks_through_allowed_always_complete_within_max_nodes(name, max_nodes, picks):
    codec = CODECS[name](max_nodes=max_nodes, **({"max_degree": 3} if name == "nary_dfs" else {}))
    state, paths = codec.initial_state(Example(["q"])), []
    for pick in picks:
        if state.is_final():
            break
        options = [option for option in WALK_ALPHABET if option in state.allowed()]
        assert options and "plain" not in options and "@PAD@" not in options
        paths.append(state.features()["path"])
        state = state.apply(options[pick % len(options)])
    assert state.is_final(), state.symbols
    tree = state.tree()
    assert tree.size == len(state.symbols) <= max_nodes
    assert paths == [visit.path for visit in traverse(tree, codec.layout, codec.order)]
    if name == "nary_dfs":
        assert tree.max_degree <= 3


def test_frontier_counts_open_slots():
    frontier = Frontier(Layout.LCRS, Order.BREADTH_FIRST).fill(3)
    assert frontier.open == 3 and frontier.next_path == (0,) and len(frontier.slots) == 1
    frontier = frontier.fill(0).fill(0).fill(0)
    assert frontier.complete and frontier.open == 0


# ---------------------------------------------------------------- the real data


def data_root() -> Path:
    return Path(os.environ.get("TOOLKIT_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


DATA = {"lisp": ["geo/train.txt", "geo/test.txt", "atis/train.tsv", "atis/dev.tsv", "atis/test.tsv"], "prolog": ["jobs/train.txt", "jobs/test.txt"]}


@pytest.mark.parametrize("fmt", sorted(DATA))
def test_every_real_logical_form_round_trips_through_every_codec(fmt):
    forms: dict[str, tuple[str, int]] = {}
    for name in DATA[fmt]:
        path = data_root() / name
        if not path.exists():
            pytest.skip(f"data not found at {path}")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            forms.setdefault(line.split("\t")[1], (str(path), number))
    assert forms
    # ATIS has nodes with up to 15 children, more than nary_dfs's default max_degree of 8
    codecs = [LcrsDfsCodec(format=fmt), LcrsBfsCodec(format=fmt), NaryDfsCodec(format=fmt, max_degree=16)]
    for form, (path, number) in forms.items():
        expected = " ".join(form.split())
        example = Example(["q"], form, {"path": path, "line": number})
        for codec in codecs:
            derivation = codec.derive(example)
            state = codec.initial_state(example)
            for name in derivation.symbols:
                state = state.apply(name)
            assert state.result() == expected, (codec, path, number)


def test_data_report_counts_trees_deeper_than_the_encoding_reaches():
    from toolkit.grammars import Grammar

    examples = [Example(["q"], "( f ( g ( h a ) ) )"), Example(["q"], "( f a )")]
    assert Grammar.from_params({"type": "nary_dfs", "max_depth": 2}).data_report(examples) == {"trees_deeper_than_max_depth_2": 1}
    assert Grammar.from_params({"type": "lcrs_dfs"}).data_report(examples) == {"trees_deeper_than_max_depth_32": 0}


# ------------------------------------------------------------------ editing trees as values


def test_subtree_paths_and_replace_at_edit_one_place_and_share_the_rest():
    tree = parse_lisp("( f ( g a ) b ( g a ) )")
    assert [(path, to_lisp(sub)) for path, sub in subtree_paths(tree)] == [
        ((), "( f ( g a ) b ( g a ) )"),
        ((0,), "( g a )"),
        ((0, 0), "a"),
        ((1,), "b"),
        ((2,), "( g a )"),
        ((2, 0), "a"),
    ]
    edited = replace_at(tree, (2, 0), Tree("c"))
    assert to_lisp(edited) == "( f ( g a ) b ( g c ) )" and edited.children[0] is tree.children[0]
    assert replace_at(tree, (), Tree("x")) == Tree("x")


def test_replace_leaves_relabels_leaves_only_and_leaf_labels_lists_them():
    tree = parse_lisp("( a ( b a ) a )")
    assert to_lisp(replace_leaves(tree, "a", "z")) == "( a ( b z ) z )"
    assert leaf_labels(tree) == {"a"}


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("( f a b )", "( f a b )", None),
        ("( f ( g a ) b )", "( f ( g c ) b )", ((0, 0), "a", "c")),
        ("( f a b )", "( f c d )", ((), "( f a b )", "( f c d )")),  # two children differ: the root holds both
        ("( f a )", "( f a b )", ((), "( f a )", "( f a b )")),  # arities differ
    ],
)
def test_difference_is_the_smallest_subtree_holding_every_difference(a, b, expected):
    found = difference(parse_lisp(a), parse_lisp(b))
    assert (found if found is None else (found[0], to_lisp(found[1]), to_lisp(found[2]))) == expected


# ---------------------------------------------------------------- the public hooks a codec of one's own uses


class NaryBfsCodec(TreeCodec):
    """A codec the toolkit does not ship, from the two class attributes alone: n-ary paths, breadth first."""

    layout = Layout.NARY
    order = Order.BREADTH_FIRST


@settings(max_examples=100, deadline=None)
@given(trees())
def test_a_codec_of_two_class_attributes_round_trips_every_tree(tree):
    codec, example = NaryBfsCodec(max_nodes=30), Example(["q"], to_lisp(tree))
    derivation = codec.derive(example)
    assert derivation.symbols == [visit.symbol for visit in breadth_first(tree, Layout.NARY)]
    assert [features["path"] for features in derivation.features] == [visit.path for visit in breadth_first(tree, Layout.NARY)]
    assert codec.replay(example).result() == to_lisp(tree)


def test_refuse_is_public_and_the_old_private_name_still_works_with_one_warning(monkeypatch):
    import warnings

    from toolkit import upgrades
    from toolkit.upgrades import ToolkitDeprecationWarning

    monkeypatch.setattr(upgrades, "_WARNED_SITES", set())  # as in a fresh process

    where = Example(["q"], "( a )", {"path": "data.tsv", "line": 3})
    with pytest.raises(DataError, match="^data.tsv:3: too wide$"):
        NaryBfsCodec.refuse(where, "too wide")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):  # a plugin calling the old name in a loop: one warning
            with pytest.raises(DataError, match="^data.tsv:3: too wide$"):
                NaryBfsCodec()._refuse(where, "too wide")
    assert [(warning.category, warning.filename) for warning in caught] == [(ToolkitDeprecationWarning, __file__)]
    assert "TreeCodec.refuse(example, why)" in str(caught[0].message)
