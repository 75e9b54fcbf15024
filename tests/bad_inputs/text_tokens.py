"""Raw text to words, and the AMR oracle on text of another kind (items 12 to 14): words written without an apostrophe,
markup tags in running text, and a replay of gold actions that a parse's span guards must not cut.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable

import penman

from tests.bad_inputs.formats import predicted
from tests.bad_inputs.machinery import Case, Env
from tests.conftest import FIXTURES
from toolkit.data import tokenization
from toolkit.data.dataset_readers import PenmanReader
from transition_systems.amr.penman_text import read_metadata_value

TOKENIZERS = "`tokenize` (spaCy's words, and the nltk fallback's)"
SPACY_READER = "reader `penman` (`tokenizer: spacy`, no `# ::tok`)"
LOST_LABELS = "`lost_labels` of `benchmarks/amr_alignment.py` (a grammar fitted on 40 Little Prince graphs)"

# ---- words written without an apostrophe (item 12)


def amr_tok(text: str, expected: str) -> Callable[[Env], None]:
    """A check: `toolkit predict --predictor amr` writes *text*'s words as the ``# ::tok`` *expected*."""

    def check(env: Env) -> None:
        [graph] = penman.loads(predicted(env, "amr", "input.txt", text + "\n"))
        assert read_metadata_value(graph.metadata["tok"]) == expected

    return check


def words_of(text: str, expected: str) -> Callable[[Env], None]:
    """A check: spaCy's tokenizer (where installed) and the fallback both split *text* into the words *expected*."""

    def check(env: Env) -> None:
        tokenizers = [tokenization.treebank_tokens] + ([tokenization.spacy_tokens] if tokenization.spacy_installed() else [])
        assert [[word for word, _ in tokens(text)] for tokens in tokenizers] == [expected.split()] * len(tokenizers)

    return check


WORD_CASES = [
    Case(
        "tok-id-amr",
        "the sentence `my id card` (as reported)",
        "`toolkit predict --predictor amr` (its `# ::tok`)",
        "`# ::tok my id card`: the words as written (`my i d card` before: spaCy's rule for `I'd` without its apostrophe)",
        amr_tok("my id card", "my id card"),
        message=False,
    ),
    Case(
        "tok-wed",
        "`Wed night`",
        TOKENIZERS,
        "the 2 words as written (`We d night` before)",
        words_of("Wed night", "Wed night"),
        message=False,
    ),
    Case(
        "tok-cant",
        "`he cant go , hes sure , whats up`",
        TOKENIZERS,
        "the words as written (`ca nt`, `he s`, `what s` before): no word without an apostrophe is split",
        words_of("he cant go , hes sure , whats up", "he cant go , hes sure , whats up"),
        message=False,
    ),
    Case(
        "tok-treebank-splits",
        "`I cannot go , gonna try , wanna come`",
        TOKENIZERS,
        "`can not`, `gon na`, `wan na`: the Penn Treebank's splits (`WORD_SPLITS`), the only ones of words without an apostrophe",
        words_of("I cannot go , gonna try , wanna come", "I can not go , gon na try , wan na come"),
        message=False,
    ),
]

# ---- markup tags in running text (item 13)


def snt_tokens(text: str, expected: list[str], spacy: bool = True) -> Callable[[Env], None]:
    """A check: the ``penman`` reader's ``spacy`` tokenizer makes the words *expected* of ``# ::snt`` *text*
    (with *spacy* false, as if spaCy were not installed: the nltk fallback).
    """

    def check(env: Env) -> None:
        if not spacy:
            env.monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
        path = env.write({"data.txt": f"# ::snt {text}\n(m / mutate-01)\n"})
        assert PenmanReader(tokenizer="spacy", lemmas=False).read(path)[0].tokens == expected

    return check


TAG_CASES = [
    Case(
        "tag-glued-snt",
        "`# ::snt <i>BRAF</i> mutations` (as reported)",
        SPACY_READER,
        "`<i>`, `BRAF`, `</i>`, `mutations`: each tag one word (`<`, `i`, `>`, ... before), as the whitespace tokenizer keeps it",
        snt_tokens("<i>BRAF</i> mutations", ["<i>", "BRAF", "</i>", "mutations"]),
        message=False,
    ),
    Case(
        "tag-attributes-snt",
        '`# ::snt see (<xref ref-type="fig" rid="F3">Fig 3</xref>)`',
        SPACY_READER,
        'the tag with its attributes and spaces one word: `see`, `(`, `<xref ref-type="fig" rid="F3">`, `Fig`, `3`, `</xref>`, `)`',
        snt_tokens('see (<xref ref-type="fig" rid="F3">Fig 3</xref>)', ["see", "(", '<xref ref-type="fig" rid="F3">', "Fig", "3", "</xref>", ")"]),
        message=False,
    ),
    Case(
        "tag-bare-lt-snt",
        "`# ::snt a < b and x<y and y>z`",
        SPACY_READER,
        "no tag: `<` and `>` are words of their own (`<y and y>`, glued to text with attributes that have no values, compares)",
        snt_tokens("a < b and x<y and y>z", ["a", "<", "b", "and", "x", "<", "y", "and", "y", ">", "z"]),
        message=False,
    ),
    Case(
        "tag-only-snt",
        "`# ::snt <p><br/></p>`: a line of tags only, one self-closing",
        SPACY_READER,
        "`<p>`, `<br/>`, `</p>`",
        snt_tokens("<p><br/></p>", ["<p>", "<br/>", "</p>"]),
        message=False,
    ),
    Case(
        "tag-glued-no-spacy",
        "`# ::snt <i>BRAF</i> mutations` where spaCy is not installed",
        SPACY_READER,
        "the same words from the nltk fallback: `<i>`, `BRAF`, `</i>`, `mutations`",
        snt_tokens("<i>BRAF</i> mutations", ["<i>", "BRAF", "</i>", "mutations"], spacy=False),
        message=False,
    ),
]

# ---- the AMR oracle replayed on text of another kind (item 14)


def fitted_on_the_book(env: Env):  # type: ignore[no-untyped-def]
    """An AMR grammar fitted on the first 40 graphs of The Little Prince's training split (skipped without the data)."""
    from transition_systems.amr import AmrTransitionSystem

    grammar = AmrTransitionSystem()
    grammar.fit(PenmanReader().read(env.request.getfixturevalue("little_prince")["train"]))
    return grammar


def lost_on(examples: Callable[[], list], expected: Counter | None = None) -> Callable[[Env], None]:
    """A check: ``lost_labels`` of the grammar fitted on the book counts labels of *examples* (*expected*, where given),
    each lost for a reason it names; fitted on the examples themselves, it loses none.
    """

    def check(env: Env) -> None:
        from benchmarks.amr_alignment import lost_labels
        from transition_systems.amr import AmrTransitionSystem

        data = examples()
        lost = lost_labels(fitted_on_the_book(env), data)
        assert set(lost) <= {"never in training", "seen with other lemmas"} and sum(lost.values()) > 0, lost
        assert expected is None or lost == expected, lost
        itself = AmrTransitionSystem()
        itself.fit(data)
        assert lost_labels(itself, data) == Counter()

    return check


def figures() -> list:
    from tests.test_amr_limits import FIGURES

    return [FIGURES]


def fixture(name: str) -> Callable[[], list]:
    return lambda: PenmanReader().read(FIXTURES / name)


def oracle_replays(env: Env) -> None:
    """The unfitted grammar's oracle of six ``figure`` nodes from one token: replayed as training does, the gold graph;
    from a parse's start, cut by the span guards; fitted on the graph, its guards allow it.
    """
    import pytest

    from tests.test_amr_limits import FIGURES, replayed
    from transition_systems.amr import AmrTransitionSystem

    unfitted = AmrTransitionSystem()
    actions = unfitted.oracle(FIGURES)
    state = unfitted.derivation_state(FIGURES)
    for action in actions:
        state = state.apply(action)
    assert state.result() == unfitted.gold(FIGURES)
    with pytest.raises(ValueError, match="is not allowed"):
        replayed(unfitted, FIGURES, actions)
    fitted = AmrTransitionSystem()
    fitted.fit([FIGURES])
    assert replayed(fitted, FIGURES, actions).result() == fitted.gold(FIGURES)


ORACLE_CASES = [
    Case(
        "lost-labels-science",
        "`tests/fixtures/amr_science_heldout.txt`: 28 graphs of scientific prose",
        LOST_LABELS,
        "a count of the gold labels lost, each never in training or seen with other lemmas; fitted on the text itself, none",
        lost_on(fixture("amr_science_heldout.txt")),
        message=False,
    ),
    Case(
        "lost-labels-figures",
        "`Figures 1A-1F show the cells .`: six `figure` nodes from one token, as in ISI's biomedical AMR",
        LOST_LABELS,
        "`PRED:and` counted as never in training (`ValueError: 'DEPENDENT:mod:\"1F\"' is not allowed` before: "
        "the span guards of a parse cut the replay at the sixth `figure`)",
        lost_on(figures, Counter({"never in training": 1})),
        message=False,
    ),
    Case(
        "lost-labels-entities",
        "`tests/fixtures/amr_entities_heldout.txt`: 20 graphs of names and dates",
        LOST_LABELS,
        "a count of the gold labels lost, each never in training or seen with other lemmas; fitted on the text itself, none",
        lost_on(fixture("amr_entities_heldout.txt")),
        message=False,
    ),
    Case(
        "oracle-replay-guards",
        "the oracle of `Figures 1A-1F show the cells .`, unfitted grammar",
        "an AMR grammar's replay from `derivation_state` (the oracle's start) and from `initial_state` (a parse's)",
        "from `derivation_state`, the gold graph; from `initial_state`, refused past `max_repeats_per_span` = 5, "
        "unless the grammar is fitted on the graph (which raises it to 8)",
        oracle_replays,
        message=False,
    ),
]

CASES: list[Case] = [*WORD_CASES, *TAG_CASES, *ORACLE_CASES]
