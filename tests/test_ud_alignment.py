"""The CoNLL 2018 scores of a raw-text analysis, on hand-checked sentences."""

import pytest

from toolkit.data.conllu_format import blocks, parse_sentence
from toolkit.errors import DataError
from toolkit.metrics.ud_alignment import analysis, ud_scores


def read(text: str):
    lines = [(number, line.replace(" | ", "\t")) for number, line in enumerate(text.strip().splitlines(), start=1)]
    return analysis(parse_sentence(block.lines, "test") for block in blocks(lines))


GOLD = """
1 | Le | _ | DET | _ | Number=Sing | 2 | det | _ | _
2 | chat | _ | NOUN | _ | _ | 5 | nsubj | _ | _
3-4 | du | _ | _ | _ | _ | _ | _ | _ | _
3 | de | _ | ADP | _ | _ | 5 | case | _ | _
4 | le | _ | DET | _ | _ | 5 | det | _ | _
5 | voisin | _ | NOUN | _ | _ | 0 | root | _ | _
"""


def test_a_perfect_analysis_scores_one_everywhere():
    assert set(ud_scores(read(GOLD), read(GOLD)).values()) == {1.0}


def test_a_multiword_token_left_whole_loses_its_words_but_not_its_token():
    whole = """
1 | Le | _ | DET | _ | Number=Sing | 2 | det | _ | _
2 | chat | _ | NOUN | _ | _ | 0 | root | _ | _
3 | du | _ | ADP | _ | _ | 4 | case | _ | _
4 | voisin | _ | NOUN | _ | _ | 2 | nmod | _ | _
"""
    scores = ud_scores(read(GOLD), read(whole))
    assert scores["Tokens"] == 1.0 and scores["Sentences"] == 1.0
    assert scores["Words"] == pytest.approx(2 * 3 / (5 + 4))  # Le, chat and voisin align; du matches neither de nor le
    assert scores["UPOS"] == pytest.approx(2 * 3 / 9)  # the three aligned words have their tags
    assert scores["LAS"] == pytest.approx(2 * 1 / 9)  # only Le -> chat (det) has the aligned head and relation


def test_a_split_token_and_a_wrong_expansion_are_counted_apart():
    split = """
1 | Le | _ | DET | _ | Number=Sing | 2 | det | _ | _
2 | chat | _ | NOUN | _ | _ | 6 | nsubj | _ | _
3-4 | du | _ | _ | _ | _ | _ | _ | _ | _
3 | de | _ | ADP | _ | _ | 6 | case | _ | _
4 | les | _ | DET | _ | _ | 6 | det | _ | _
5 | voi | _ | NOUN | _ | _ | 6 | compound | _ | _
6 | sin | _ | NOUN | _ | _ | 0 | root | _ | _
"""
    scores = ud_scores(read(GOLD), read(split))
    assert scores["Tokens"] == pytest.approx(2 * 3 / (4 + 5))  # Le, chat, du
    assert scores["Words"] == pytest.approx(2 * 3 / (5 + 6))  # Le, chat and de (les is not le)
    assert scores["LAS"] == pytest.approx(2 * 1 / 11)  # Le -> chat; chat and de hang from words that do not align


def test_two_sentences_where_the_gold_has_one():
    two = """
1 | Le | _ | DET | _ | Number=Sing | 2 | det | _ | _
2 | chat | _ | NOUN | _ | _ | 0 | root | _ | _

1-2 | du | _ | _ | _ | _ | _ | _ | _ | _
1 | de | _ | ADP | _ | _ | 3 | case | _ | _
2 | le | _ | DET | _ | _ | 3 | det | _ | _
3 | voisin | _ | NOUN | _ | _ | 0 | root | _ | _
"""
    scores = ud_scores(read(GOLD), read(two))
    assert scores["Sentences"] == 0.0 and scores["Words"] == 1.0 and scores["Tokens"] == 1.0
    assert scores["LAS"] == pytest.approx(2 * 4 / 10)  # every word but chat (nsubj of voisin in the gold) keeps its arc


def test_analyses_of_different_texts_are_refused_where_they_part():
    other = GOLD.replace("voisin", "voisine")
    with pytest.raises(DataError, match="different texts .* from character 14: the end and 'e'"):
        ud_scores(read(GOLD), read(other))
