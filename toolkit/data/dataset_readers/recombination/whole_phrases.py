"""ABSWHOLEPHRASES (``abs_whole_phrases``): swap a whole phrase (span + LF subtree) for one of the same type.

The paper abstracts a phrase whose LF is a whole subexpression of a known type and lets any
phrase of that type fill the slot. We find such phrases from *minimal pairs*: two training
examples whose questions differ in exactly one span (longest common prefix and suffix removed,
both spans non-empty, at most ``max_phrase_length`` tokens, some context left) and whose LFs
differ in exactly one proper subtree (the smallest one holding every difference). The two
(span, subtree) pairs are *whole phrases* of one type: they fill the same template. A new
example takes any example in which a phrase's span occurs exactly once in the question and its
subtree exactly once in the LF, and puts in a phrase of the same type.

Limits: the type is the one-step relation "seen in a common template" (no transitive closure),
so a phrase travels only as far as its minimal pairs show; the alignment is only as good as the
pair (a span and a subtree that differ together need not mean the same in every other context,
e.g. "largest state" uses ``size:i`` but "largest citi" ``population:i``); a substituted phrase
may bring no placeholder the rest of the question already has, and no variable the rest of the
LF uses that the old subtree did not.

On raw data (a base reader with an anonymizer, GEO's raw Prolog) the questions are the
examples' with a placeholder per mention and no type words, the LFs their anonymized Prolog
queries (:mod:`.abstraction`); a phrase carries the mentions of its placeholders, which the new
example names again, and the reader anonymizes the result as it does any line.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from toolkit.data.dataset_readers.recombination.abstraction import Mentions, abstract, realize
from toolkit.data.dataset_readers.recombination.strategy import (
    LISP,
    PROLOG,
    Candidate,
    EnumeratedStrategy,
    Notation,
    Question,
    RecombinationStrategy,
    placeholders,
    replace_span,
    source_of,
)
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymizer
from toolkit.errors import ConfigurationError
from tree_codecs.editing import difference, leaf_labels, replace_at, subtree_paths
from tree_codecs.paths import Path
from tree_codecs.tree import Tree

HOLE = Tree("@hole@")  # where a phrase was taken out of an LF


@dataclass(frozen=True)
class Phrase:
    """A question span aligned with an LF subtree (a *whole phrase*, found from a minimal pair).

    On raw data it carries the mentions its placeholders stood for where it was found; they do
    not count in comparing phrases.
    """

    span: Question
    tree: Tree
    mentions: Mentions = field(default=(), compare=False)


def variables(tree: Tree, notation: Notation = LISP) -> set[str]:
    """The LF variables (``$0``, Prolog's ``A``) a subtree uses, which a substitute must not capture."""
    return {label for label in leaf_labels(tree) if notation.variable.fullmatch(label)}


def minimal_pairs(
    parsed: Sequence[tuple[Question, Tree]],
    max_phrase_length: int,
    min_support: int,
    notation: Notation = LISP,
    mentions: Sequence[Mentions] | None = None,
) -> dict[Phrase, set[Phrase]]:
    """Whole phrases and, for each, the phrases seen filling the same template (see the module docstring).

    A pair of phrases counts once it is seen in *min_support* different templates. *mentions*
    (raw data) are each example's, which its phrases carry.
    """
    templates: dict[tuple[Question, Question], list[tuple[int, Question]]] = defaultdict(list)
    for index, (question, _) in enumerate(parsed):
        n = len(question)
        for start in range(n):
            for end in range(start + 1, min(n, start + max_phrase_length) + 1):
                if start > 0 or end < n:  # some context must be left
                    templates[question[:start], question[end:]].append((index, question[start:end]))
    support: dict[tuple[Phrase, Phrase], set[tuple[Question, Question, Tree]]] = defaultdict(set)
    for (prefix, suffix), members in templates.items():
        for position, (i, span_i) in enumerate(members):
            for j, span_j in members[position + 1 :]:
                if span_i[0] == span_j[0] or span_i[-1] == span_j[-1]:
                    continue  # not the longest common prefix and suffix: another template has this pair
                found = difference(parsed[i][1], parsed[j][1])
                if found is None or not found[0]:
                    continue  # same LF, or no common context in the LF
                phrase_i = Phrase(span_i, found[1], _carried(span_i, mentions[i]) if mentions else ())
                phrase_j = Phrase(span_j, found[2], _carried(span_j, mentions[j]) if mentions else ())
                if is_substitution(phrase_i, phrase_j, notation):
                    context = replace_at(parsed[i][1], found[0], HOLE)
                    support[phrase_i, phrase_j].add((prefix, suffix, context))
                    support[phrase_j, phrase_i].add((prefix, suffix, context))
    substitutes: dict[Phrase, set[Phrase]] = defaultdict(set)
    for (phrase, other), contexts in support.items():
        if len(contexts) >= min_support:
            substitutes[phrase].add(other)
    return substitutes


def _carried(span: Question, mentions: Mentions) -> Mentions:
    return tuple((placeholder, mention) for placeholder, mention in mentions if placeholder in span)


def is_substitution(a: Phrase, b: Phrase, notation: Notation = LISP) -> bool:
    """Whether two aligned differences look like one phrase put for another, not an added modifier.

    A bare variable is no phrase; one node with a child more (``and`` with an extra conjunct) is an
    insertion that the question span does not cover; and a span must mention exactly the
    placeholders its subtree holds (the paper's entity condition).
    """
    if notation.variable.fullmatch(a.tree.label) or notation.variable.fullmatch(b.tree.label):
        return False
    if a.tree.label == b.tree.label and a.tree.arity != b.tree.arity:
        return False
    return all(placeholders(p.span) == placeholders(leaf_labels(p.tree)) for p in (a, b))


@RecombinationStrategy.register("abs_whole_phrases")
class AbsWholePhrases(EnumeratedStrategy):
    """ABSWHOLEPHRASES: swap a whole phrase (span + LF subtree) for one of the same type (see the module docstring)."""

    def __init__(self, ratio: float = 0.5, max_phrase_length: int = 4, min_support: int = 2) -> None:
        super().__init__(ratio)
        if max_phrase_length < 1:
            raise ConfigurationError(f"max_phrase_length: must be >= 1, got {max_phrase_length}")
        if min_support < 1:
            raise ConfigurationError(f"min_support: must be >= 1, got {min_support}")
        self.max_phrase_length, self.min_support = max_phrase_length, min_support

    def candidates(self, examples: Sequence[Example], anonymizer: Anonymizer | None = None) -> Iterator[Candidate]:
        if anonymizer is None:
            notation, forms = LISP, [(example, tuple(example.tokens), LISP.parse(str(example.target)), ()) for example in examples]
        else:
            notation = PROLOG
            abstracted = [(example, abstract(example, anonymizer)) for example in examples]
            forms = [(example, form.question, form.tree, form.mentions) for example, form in abstracted if form is not None]
        parsed = [(question, tree) for _, question, tree, _ in forms]
        substitutes = minimal_pairs(parsed, self.max_phrase_length, self.min_support, notation, [m for *_, m in forms] if anonymizer else None)
        by_span: dict[Question, list[Phrase]] = defaultdict(list)
        for phrase in sorted(substitutes, key=lambda p: (p.span, notation.show(p.tree))):
            by_span[phrase.span].append(phrase)
        for example, question, tree, mentions in forms:
            paths: dict[Tree, list[Path]] = defaultdict(list)
            for path, subtree in subtree_paths(tree):
                paths[subtree].append(path)
            spans = Counter(question[i:j] for i in range(len(question)) for j in range(i + 1, min(len(question), i + self.max_phrase_length) + 1))
            for span in sorted(span for span, count in spans.items() if count == 1 and span in by_span):
                for phrase in by_span[span]:
                    if len(paths.get(phrase.tree, ())) != 1:
                        continue
                    rest = replace_at(tree, paths[phrase.tree][0], HOLE)
                    for other in sorted(substitutes[phrase], key=lambda p: (p.span, notation.show(p.tree))):
                        new_question = replace_span(question, phrase.span, other.span)
                        if new_question is None or placeholders(other.span) & placeholders(question) - placeholders(phrase.span):
                            continue
                        if (variables(other.tree, notation) - variables(phrase.tree, notation)) & variables(rest, notation):
                            continue
                        new_tree = replace_at(tree, paths[phrase.tree][0], other.tree)
                        if anonymizer is None:
                            yield Candidate(new_question, notation.show(new_tree), (source_of(example),))
                            continue
                        named = {**{p: m for p, m in mentions if p not in phrase.span}, **dict(other.mentions)}
                        realized = realize(new_question, new_tree, named, anonymizer)
                        if realized is not None:
                            yield Candidate(realized[0], realized[1], (source_of(example),))
