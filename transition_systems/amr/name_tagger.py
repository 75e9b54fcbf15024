"""Names a domain writes, found and typed from its training graphs: a tagger learned from the aligned names.

A news NER finds no proteins, enzymes, drugs or cell lines, and types a disease's acronym as an
organisation: on Bio AMR's test part it gave 14 of 348 names their type. What the training graphs
show is enough to learn better: every gold name the aligner finds as a token span (``:name`` with
its ``:opN`` strings) is a tagged example, ``B-<type>`` on its first word, ``I-<type>`` on the rest.

:class:`NameTagger` is an averaged perceptron over each word's spelling (the word, its shape
``Xxdd``, prefixes and suffixes, digits and inner capitals), its neighbours and the tag before it,
decoded greedily left to right (Collins, 2002). In training, the word itself is hidden from a share
of the steps (:data:`WORD_DROPOUT`), so that what a name looks like and where it stands get weight
too, not only the names training saw: a domain's text names more than its training graphs do. Its weights are kept small (those that matter, rounded), so that a grammar's
config records them and an archive parses with the tagger it was trained with. Its mentions have
the kind ``TYPE:<type>`` (:data:`~transition_systems.amr.entity_types.TYPED`), so ``NAME`` makes
the type the tagger read.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from transition_systems.amr.entity_types import TYPED
from transition_systems.amr.mentions import MAX_MENTION_WORDS, Mention

OUTSIDE = "O"
EPOCHS = 10
WORD_DROPOUT = 0.3  # share of training steps that do not see the word itself (Bio AMR dev names typed right: 20.6% -> 23.9%)
WORD_FEATURES = ("w=", "t+w=")  # the features a training step without its word leaves out
SMALLEST_WEIGHT = 1e-3  # averaged weights below this are dropped: they decide nothing
Tagged = tuple[Sequence[str], Mapping[tuple[int, int], str]]  # a sentence's tokens and its names: span -> type


def shape(word: str) -> str:
    """``Xxdd``-style: capitals X, small letters x, digits d, runs of one kind at most two long (``HCT116`` -> ``XXdd``)."""
    coded = re.sub("[0-9]", "d", re.sub("[a-z]", "x", re.sub("[A-Z]", "X", word)))
    return re.sub(r"(.)\1+", r"\1\1", coded)


def features(tokens: Sequence[str], i: int, previous: str) -> list[str]:
    """What tags the *i*-th word: its spelling, its neighbours' words and shapes, and the tag before it."""
    word = tokens[i]
    lower, coded = word.lower(), shape(word)
    found = ["bias", f"w={lower}", f"s={coded}", f"t={previous}", f"t+w={previous} {lower}", f"3={lower[-3:]}", f"2={lower[-2:]}", f"p={lower[:3]}"]
    found += [f"4={lower[-4:]}", f"p4={lower[:4]}"]
    found += [
        flag for flag, holds in (("digit", any(c.isdigit() for c in word)), ("innercap", any(c.isupper() for c in word[1:])), ("hyphen", "-" in word)) if holds
    ]
    for offset in (-2, -1, 1, 2):
        j = i + offset
        neighbour = tokens[j].lower() if 0 <= j < len(tokens) else "<>"
        found.append(f"w{offset}={neighbour}")
        if abs(offset) == 1:
            found += [f"s{offset}={shape(tokens[j]) if 0 <= j < len(tokens) else '<>'}", f"s+w{offset}={coded} {neighbour}"]
    return found


class NameTagger:
    """An averaged-perceptron tagger of names and their AMR types; *weights*: feature -> tag -> weight."""

    def __init__(self, weights: Mapping[str, Mapping[str, float]]):
        self.weights = {feature: dict(tags) for feature, tags in weights.items()}
        self.tags = sorted({OUTSIDE, *(tag for tags in self.weights.values() for tag in tags)})
        self.cache: dict[tuple[str, ...], tuple[Mention, ...]] = {}

    @classmethod
    def train(cls, sentences: Sequence[Tagged], epochs: int = EPOCHS, seed: int = 13, word_dropout: float = WORD_DROPOUT) -> NameTagger:
        """Learn from *sentences* (tokens and gold name spans with their types), in a seeded order, each step
        without the word itself with probability *word_dropout*.
        """
        data = [(list(tokens), tags_of(len(tokens), names)) for tokens, names in sentences]
        tags = sorted({OUTSIDE, *(tag for _, gold in data for tag in gold)})
        weights: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        stamps: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        step = 0
        order = random.Random(seed)
        for _ in range(epochs):
            order.shuffle(data)
            for tokens, gold in data:
                previous = OUTSIDE
                for i, right in enumerate(gold):
                    step += 1
                    found = features(tokens, i, previous)
                    if order.random() < word_dropout:
                        found = [feature for feature in found if not feature.startswith(WORD_FEATURES)]
                    guess = best(tags, found, weights)
                    if guess != right:
                        for feature in found:
                            for tag, change in ((right, 1.0), (guess, -1.0)):
                                totals[feature][tag] += (step - stamps[feature][tag]) * weights[feature][tag]
                                stamps[feature][tag] = step
                                weights[feature][tag] += change
                    previous = right
        averaged: dict[str, dict[str, float]] = {}
        for feature, by_tag in weights.items():
            for tag, weight in by_tag.items():
                mean = (totals[feature][tag] + (step - stamps[feature][tag]) * weight) / step  # the weight's average over every step
                if abs(mean) >= SMALLEST_WEIGHT:
                    averaged.setdefault(feature, {})[tag] = round(mean, 3)
        return cls(averaged)

    def tag(self, tokens: Sequence[str]) -> list[str]:
        """One tag per token, greedily left to right; an ``I-`` that continues no name of its type begins one."""
        tags, previous = [], OUTSIDE
        for i in range(len(tokens)):
            guess = best(self.tags, features(tokens, i, previous), self.weights)
            if guess.startswith("I-") and previous[2:] != guess[2:]:
                guess = "B-" + guess[2:]
            tags.append(guess)
            previous = guess
        return tags

    def mentions(self, tokens: Sequence[str]) -> tuple[Mention, ...]:
        """The names of *tokens* as mentions of kind ``TYPE:<type>``, left to right (cached per sentence)."""
        key = tuple(tokens)
        if key not in self.cache:
            self.cache[key] = tuple(
                Mention(start, end, f"{TYPED}{type_}") for (start, end), type_ in spans_of(self.tag(key)).items() if end - start <= MAX_MENTION_WORDS
            )
        return self.cache[key]


def best(tags: Sequence[str], found: Iterable[str], weights: Mapping[str, Mapping[str, float]]) -> str:
    scores: dict[str, float] = defaultdict(float)
    for feature in found:
        for tag, weight in weights.get(feature, {}).items():
            scores[tag] += weight
    return max(tags, key=lambda tag: (scores[tag], tag == OUTSIDE))  # a tie is no name


def tags_of(length: int, names: Mapping[tuple[int, int], str]) -> list[str]:
    tags = [OUTSIDE] * length
    for (start, end), type_ in names.items():
        tags[start:end] = [f"B-{type_}"] + [f"I-{type_}"] * (end - start - 1)
    return tags


def spans_of(tags: Sequence[str]) -> dict[tuple[int, int], str]:
    """The names *tags* mark: span -> type."""
    spans, i = {}, 0
    while i < len(tags):
        if tags[i].startswith("B-"):
            end = i + 1
            while end < len(tags) and tags[end] == "I-" + tags[i][2:]:
                end += 1
            spans[i, end] = tags[i][2:]
            i = end
        else:
            i += 1
    return spans


def merged(learned: Sequence[Mention], others: Sequence[Mention]) -> tuple[Mention, ...]:
    """The learned mentions, and the others (a general NER's, dates) that overlap none of them, left to right."""
    taken = [(mention.start, mention.end) for mention in learned]
    kept = [mention for mention in others if all(mention.end <= start or end <= mention.start for start, end in taken)]
    return tuple(sorted([*learned, *kept]))
