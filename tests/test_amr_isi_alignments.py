"""Gold alignments in the ``# ::alignments`` line of the ISI/LDC releases, next to JAMR's and the in-graph ``~e.N``."""

import logging
import re
from dataclasses import replace
from pathlib import Path

import penman
import pytest

from toolkit.errors import DataError
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.gold_alignments import read_gold_alignments, score_aligner

TOKENS = "# ::tok The boy did not want to go home\n"  # 0 The, 1 boy, 2 did, 3 not, 4 want, 5 to, 6 go, 7 home
GRAPH = "(w / want-01\n   :ARG0 (b / boy)\n   :ARG1 (g / go-02\n            :ARG0 b\n            :ARG4 (h / home))\n   :polarity -)\n"
# hand-numbered: ISI counts from 1 and counts the re-entrant ``b`` (1.2.1), so home is 1.2.2; JAMR counts from 0 and
# skips re-entrancies, so home is 0.1.0. Both also align the constant ``-`` (1.3, 0.2) and ISI the role :ARG4 to "to"
# (1.2.2.r) and the re-entrancy to "did" (1.2.1): none of those is a concept node
ISI_LINE = "1-1.1 2-1.2.1 3-1.3 4-1 5-1.2.2.r 6-1.2 7-1.2.2"
JAMR_LINE = "1-2|0.0 3-4|0.2 4-5|0 6-7|0.1 7-8|0.1.0"
IN_GRAPH = "(w / want-01~e.4 :ARG0 (b / boy~e.1) :ARG1 (g / go-02~e.6 :ARG0 b~e.2 :ARG4~e.5 (h / home~e.7)) :polarity -~e.3)\n"
EXPECTED = {"w": {4}, "b": {1}, "g": {6}, "h": {7}}


def read(tmp_path, text: str, name: str = "gold.txt"):
    path = tmp_path / name
    path.write_text(text)
    return read_gold_alignments(path)


def test_isi_jamr_and_in_graph_alignments_give_the_same_concept_tokens(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="transition_systems.amr.gold_alignments"):
        (isi,) = read(tmp_path, f"# ::id isi\n{TOKENS}# ::alignments {ISI_LINE} ::annotator ISI-hand\n{GRAPH}", "isi.txt")
        (jamr,) = read(tmp_path, f"# ::id jamr\n{TOKENS}# ::alignments {JAMR_LINE} ::annotator JAMR\n{GRAPH}", "jamr.txt")
        (in_graph,) = read(tmp_path, f"# ::id in-graph\n{TOKENS}{IN_GRAPH}", "in_graph.txt")
    assert isi.gold == jamr.gold == in_graph.gold == EXPECTED
    assert (isi.alignment_format, jamr.alignment_format, in_graph.alignment_format) == ("ISI", "JAMR", None)
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 2 and "isi.txt: gold alignments in ISI format" in logged[0] and "jamr.txt: gold alignments in JAMR format" in logged[1]
    # the release files carry both forms: they agree, and the aligner is scored the same on each
    (both,) = read(tmp_path, f"# ::id both\n{TOKENS}# ::alignments {ISI_LINE}\n{IN_GRAPH}", "both.txt")
    assert both.gold == EXPECTED and both.alignment_format == "ISI"
    grammar = AmrTransitionSystem()
    assert score_aligner(grammar, [isi]) == score_aligner(grammar, [jamr]) == score_aligner(grammar, [in_graph])


def test_isi_addresses_are_penmans_tree_paths():
    """ISI's ``1.a.b`` is the path ``(a, b)`` of ``penman``'s ``Tree.walk`` (whose index 0 is the concept)."""
    paths = {".".join(map(str, (1, *path))): target[0] for path, (role, target) in penman.parse(GRAPH).walk() if isinstance(target, tuple)}
    assert paths == {"1.1": "b", "1.2": "g", "1.2.2": "h"}  # the top, 1, is no branch; 1.2.1 is the re-entrant b
    items = dict(reversed(item.split("-")) for item in ISI_LINE.split())
    assert {node: {int(items[address])} for address, node in paths.items()} | {"w": {int(items["1"])}} == EXPECTED


def test_a_file_keeps_the_format_of_its_first_alignments_line(tmp_path):
    isi_then_jamr = f"# ::id a\n{TOKENS}# ::alignments {ISI_LINE}\n{GRAPH}\n# ::id b\n{TOKENS}# ::alignments {JAMR_LINE}\n{GRAPH}"
    with pytest.raises(DataError, match=re.escape("gold.txt:11: cannot read the alignment '1-2|0.0' in ISI format")):
        read(tmp_path, isi_then_jamr)
    jamr_then_isi = f"# ::id a\n{TOKENS}{GRAPH}\n# ::id b\n{TOKENS}# ::alignments {JAMR_LINE}\n{GRAPH}\n# ::id c\n{TOKENS}# ::alignments {ISI_LINE}\n{GRAPH}"
    with pytest.raises(DataError, match=re.escape("gold.txt:20: cannot read the alignment '1-1.1' in JAMR format")):
        read(tmp_path, jamr_then_isi)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("4-1 1-1.4", "cannot read the alignment '1-1.4': the graph has no node 1.4"),  # the top has 3 relations
        ("4-1 7-1.2.2.1", "cannot read the alignment '7-1.2.2.1': the graph has no node 1.2.2.1"),  # home has none
        ("4-1 2-1.2.1.1", "cannot read the alignment '2-1.2.1.1': the graph has no node 1.2.1.1"),  # nor does a re-entrancy
        ("4-1 5-1.2.5.r", "cannot read the alignment '5-1.2.5.r': the graph has no node 1.2.5"),  # a role into no node
        ("4-1 1-1.0", "cannot read the alignment '1-1.0' in ISI format"),  # 1-based
        ("4-1 1-0.1", "cannot read the alignment '1-0.1' in ISI format"),  # the top is 1
        ("4-1 0-1.r", "cannot read the alignment '0-1.r' in ISI format"),  # no role leads into the top
        ("4-1 1-2-1.1", "cannot read the alignment '1-2-1.1' in ISI format"),  # one token per item
        ("4-1 x-1.1", "cannot read the alignment 'x-1.1' in ISI format"),
        ("4-1 5-1.2.2.x", "cannot read the alignment '5-1.2.2.x' in ISI format"),
        ("4-1 9-1.2.2.r", "alignment to token 9, but the sentence has 8 tokens"),  # checked for a role, too
    ],
)
def test_malformed_isi_alignments_name_file_and_line(tmp_path, line, message):
    text = f"# ::id ok\n{TOKENS}# ::alignments {ISI_LINE}\n{GRAPH}\n# ::id bad\n{TOKENS}# ::alignments {line}\n{GRAPH}"
    with pytest.raises(DataError, match="gold.txt:11: " + re.escape(message)):
        read(tmp_path, text)


# ISI's biomedical release: a markup tag is one token of # ::tok, and a name's strings are aligned, not its name node
BIO_TOKENS = '# ::tok MEK acts ( <xref ref-type="fig" rid="F2"> Fig. 2 </xref> ) .\n'  # 0 MEK ... 3 <xref ...> 4 Fig. 5 2
BIO_GRAPH = '(a / act-02~e.1 :ARG0 (e / enzyme :name (n / name :op1 "MEK"~e.0)) :ARG1-of (d / describe-01 :ARG0 (f / figure~e.4 :mod "2"~e.5)))\n'
BIO_ISI_LINE = "0-1.1.1.1 1-1 4-1.2.1 5-1.2.1.1"  # MEK is the string (1.1.1.1), not the name (1.1.1)


def test_a_markup_tag_is_one_token_and_keeps_later_indices(tmp_path):
    (in_graph,) = read(tmp_path, f"# ::id bio\n{BIO_TOKENS}{BIO_GRAPH}")
    assert len(in_graph.tokens) == 9 and in_graph.tokens[3] == '<xref ref-type="fig" rid="F2">'
    assert in_graph.gold["f"] == {4} and in_graph.tokens[4] == "Fig."  # split on spaces, index 4 would be 'rid="F2">'
    # the PENMAN reader reads # ::tok the same way, so training and scoring see the same tokens
    from toolkit.data.dataset_readers import DatasetReader

    path = tmp_path / "bio.txt"
    path.write_text(f"# ::id bio\n{BIO_TOKENS}{BIO_GRAPH}")
    (example,) = DatasetReader.by_name("penman")().read(path)
    assert list(example.tokens) == list(in_graph.tokens)


def test_a_names_strings_align_its_name_node_in_either_isi_form(tmp_path):
    (in_graph,) = read(tmp_path, f"# ::id bio\n{BIO_TOKENS}{BIO_GRAPH}", "in_graph.txt")
    plain_graph = BIO_GRAPH.replace("~e.0", "").replace("~e.1", "").replace("~e.4", "").replace("~e.5", "")
    (line,) = read(tmp_path, f"# ::id bio\n{BIO_TOKENS}# ::alignments {BIO_ISI_LINE}\n{plain_graph}", "line.txt")
    assert in_graph.gold == line.gold == {"a": {1}, "n": {0}, "f": {4}}  # the enzyme and describe-01: no word, no gold


def test_the_aligner_is_scored_by_isi_conventions_on_its_own_fixture():
    """The aligner puts an entity at its name; ISI leaves the entity's type unaligned: by that convention, not an error.
    Scored naively (tokens split on spaces, the name node unaligned in the gold) it loses a third of its F1.
    """
    graphs = read_gold_alignments(Path(__file__).parent / "fixtures" / "amr_gold_alignments_isi.txt")
    grammar = AmrTransitionSystem()
    score = score_aligner(grammar, graphs)
    assert score.f1 >= 0.85 and score.precision > 0.9, score
    naive = [
        replace(
            item,
            tokens=tuple(item.graph.metadata["tok"].split()),
            gold={node: tokens for node, tokens in item.gold.items() if (node, ":instance", "name") not in item.graph.triples},
        )
        for item in graphs
    ]
    assert score_aligner(grammar, naive).f1 < score.f1 - 0.15


@pytest.mark.parametrize(
    ("tokens", "span"),
    [
        ("B @-@ Raf activates ERK1 @/@ 2 .", {"braf": (0, 3), "erk": (4, 7)}),  # ISI's glue marks: the name spelled across them
        ("B - Raf activates ERK1 / 2 .", {}),  # spaCy's plain hyphen: an entity of these tokens would spell "B" "-" "Raf"
    ],
)
def test_a_name_split_by_isis_glue_marks_is_found_as_a_span(tokens, span):
    from toolkit.data.tokenization import lemmatize
    from transition_systems.amr.graph import GoldGraph
    from transition_systems.amr.sentence import Sentence

    graph = GoldGraph.of(
        penman.decode('(a / activate-01 :ARG0 (e / enzyme :name (n / name :op1 "B-Raf")) :ARG1 (e2 / enzyme :name (n2 / name :op1 "ERK1/2")))')
    )
    words = tokens.split()
    alignment = AmrTransitionSystem(mentions="none").align(graph, Sentence(tuple(words), lemmatize(tuple(words))))
    names = {"braf" if entity == "e" else "erk": found for entity, found in alignment.names.items()}
    assert names == span


@pytest.mark.parametrize(
    ("tokens", "cue"),
    [
        ("HCT116 cell lines grew .", 2),  # the last of the type's words after the name
        ("the kinase AKT binds .", 1),  # else the word before it, a word TYPE_WORDS gives the type
        ("HCT116 grew .", None),  # no such word: the type stays at the name
    ],
)
def test_isi_aligns_an_entity_type_at_the_word_that_says_it(tokens, cue):
    from toolkit.data.tokenization import lemmatize
    from transition_systems.amr.gold_alignments import isi_type_cues
    from transition_systems.amr.graph import GoldGraph
    from transition_systems.amr.sentence import Sentence

    words = tuple(tokens.split())
    name = "AKT" if "AKT" in words else "HCT116"
    concept = "enzyme" if name == "AKT" else "cell-line"
    graph = GoldGraph.of(penman.decode(f'(x / {concept} :name (n / name :op1 "{name}"))'))
    alignment = AmrTransitionSystem(mentions="none").align(graph, Sentence(words, lemmatize(words)))
    assert alignment.tokens["x"] == words.index(name)  # the aligner keeps the entity at its name, where the oracle makes it
    assert isi_type_cues(graph, alignment, lemmatize(words)) == ({} if cue is None else {"x": cue})
