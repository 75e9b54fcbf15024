"""Scores of a UD analysis of raw text, by the CoNLL 2018 shared task's definitions.

A parser that tokenizes its own text may find other words than the gold ones, so its words are
first aligned with the gold words through the text they cover (``conll18_ud_eval.py``, Zeman et al.,
2018): both files must spell the same characters once whitespace is removed. Tokens and sentences
match when they cover the same characters; a word outside multiword tokens matches the gold word
covering the same characters; inside a stretch where either side has a multiword token, the words
are aligned by the longest common subsequence of their lower-cased forms. Every score is an F1 of
the matched units against the gold and the system's counts: ``Tokens``, ``Sentences``, ``Words``,
and over aligned words ``UPOS``, ``UFeats`` and ``LAS`` (the head aligned to the gold head, and the
same relation).

Two scores are stricter than the shared task's script: ``LAS`` compares whole relations, subtypes
included (the script compares only the universal part: ``nmod`` for ``nmod:poss``), and ``UFeats``
the whole FEATS string (the script keeps only the universal features). Tokens, Sentences, Words and
UPOS are the script's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.data.conllu_format import Kind, Sentence, blocks, parse_sentence
from toolkit.errors import DataError


@dataclass(frozen=True)
class Word:
    """A syntactic word with what is scored of it, and the characters of its surface token."""

    span: tuple[int, int]  # of its token, in the text without whitespace
    form: str
    upos: str
    feats: str
    head: int  # the index of its head in the file's words, -1 for the root
    deprel: str
    multiword: bool  # part of a multiword token


@dataclass
class Analysis:
    """A CoNLL-U file's tokens, sentences and words over its characters without whitespace."""

    characters: str
    tokens: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    words: list[Word]


def read_analysis(path: str | Path) -> Analysis:
    """The units of a CoNLL-U file (comment-only blocks, such as a predictor's errors, have none)."""
    with open(path, encoding="utf-8") as lines:
        sentences = [parse_sentence(block.lines, str(path)) for block in blocks((number, line.rstrip("\r\n")) for number, line in enumerate(lines, start=1))]
    return analysis(sentences)


def analysis(sentences: Iterable[Sentence]) -> Analysis:
    characters: list[str] = []
    tokens, spans, words = [], [], []
    at = 0
    for sentence in sentences:
        start, offset, inside = at, len(words), 0  # inside: the last word of the multiword token being read
        for row in sentence.rows:
            if row.kind is Kind.EMPTY:
                continue
            if row.kind is Kind.MULTIWORD or int(row.fields[0]) > inside:
                form = "".join(row.form.split())
                tokens.append((at, at + len(form)))
                characters.append(form)
                at += len(form)
                if row.kind is Kind.MULTIWORD:
                    inside = row.span[1]
                    continue
            head = -1 if not row.head else offset + row.head - 1
            words.append(Word(tokens[-1], row.form, row.upos, row.feats, head, row.deprel, int(row.fields[0]) <= inside))
        if at > start:
            spans.append((start, at))
    return Analysis("".join(characters), tokens, spans, words)


def f1(matched: int, gold: int, system: int) -> float:
    return 2 * matched / (gold + system) if gold + system else 1.0


def align(gold: Sequence[Word], system: Sequence[Word]) -> list[tuple[int, int]]:
    """Pairs of (gold, system) word indices: by span outside multiword tokens, by LCS of forms inside them."""
    pairs, g, s = [], 0, 0
    while g < len(gold) and s < len(system):
        if not gold[g].multiword and not system[s].multiword:
            if gold[g].span == system[s].span:
                pairs.append((g, s))
                g, s = g + 1, s + 1
            elif gold[g].span[0] <= system[s].span[0]:  # the earlier one cannot match anything later
                g += 1
            else:
                s += 1
            continue
        # a stretch where either side has a multiword token: every word whose token overlaps it, on both sides
        end, g_end, s_end = max(gold[g].span[1], system[s].span[1]), g, s
        while True:
            while g_end < len(gold) and gold[g_end].span[0] < end:
                end, g_end = max(end, gold[g_end].span[1]), g_end + 1
            grown = s_end
            while s_end < len(system) and system[s_end].span[0] < end:
                end, s_end = max(end, system[s_end].span[1]), s_end + 1
            if s_end == grown and (g_end == len(gold) or gold[g_end].span[0] >= end):
                break
        pairs.extend(lcs(gold, system, range(g, g_end), range(s, s_end)))
        g, s = g_end, s_end
    return pairs


def lcs(gold: Sequence[Word], system: Sequence[Word], golds: range, systems: range) -> list[tuple[int, int]]:
    """The longest common subsequence of the lower-cased forms of two runs of words, as index pairs."""
    table = [[0] * (len(systems) + 1) for _ in range(len(golds) + 1)]
    for i in reversed(range(len(golds))):
        for j in reversed(range(len(systems))):
            same = gold[golds[i]].form.lower() == system[systems[j]].form.lower()
            table[i][j] = table[i + 1][j + 1] + 1 if same else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < len(golds) and j < len(systems):
        if gold[golds[i]].form.lower() == system[systems[j]].form.lower():
            pairs.append((golds[i], systems[j]))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def ud_scores(gold: Analysis, system: Analysis) -> dict[str, float]:
    """``Tokens``, ``Sentences``, ``Words``, ``UPOS``, ``UFeats`` and ``LAS`` F1 (0 to 1) of *system* against *gold*."""
    if gold.characters != system.characters:
        at = next((i for i, (a, b) in enumerate(zip(gold.characters, system.characters)) if a != b), min(len(gold.characters), len(system.characters)))
        gold_rest, system_rest = (repr(text[at : at + 20]) if text[at:] else "the end" for text in (gold.characters, system.characters))
        raise DataError(f"the gold and the system analyses spell different texts (whitespace aside), from character {at}: {gold_rest} and {system_rest}")
    pairs = align(gold.words, system.words)
    aligned = {g: s for g, s in pairs}
    counts = (len(gold.words), len(system.words))
    scores = {
        "Tokens": f1(len(set(gold.tokens) & set(system.tokens)), len(gold.tokens), len(system.tokens)),
        "Sentences": f1(len(set(gold.sentences) & set(system.sentences)), len(gold.sentences), len(system.sentences)),
        "Words": f1(len(pairs), *counts),
    }
    for name, same in (
        ("UPOS", lambda g, s: g.upos == s.upos),
        ("UFeats", lambda g, s: g.feats == s.feats),
        ("LAS", lambda g, s: g.deprel == s.deprel and (aligned.get(g.head) if g.head >= 0 else -1) == s.head),
    ):
        scores[name] = f1(sum(same(gold.words[g], system.words[s]) for g, s in pairs), *counts)
    return scores
