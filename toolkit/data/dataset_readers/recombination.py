"""Data recombination (Jia & Liang 2016): a reader that adds new, recombined training examples.

``"type": "recombination"`` wraps a ``base_reader`` (the ``tsv`` reader of GEO and ATIS) and a
list of ``strategies``; each strategy samples ``round(ratio * N)`` new examples from the N
originals, which are always kept, first and unchanged. Sampling is driven by ``seed`` only (same
seed, same output; another seed, another sample), and an example never repeats one already in
the set. The paper samples a fresh recombinant set every epoch; this reader fixes one set per run.
Strategies draw independently from the originals (CONCAT never concatenates AE outputs).

Put the wrapper in ``dataset_reader`` and the plain reader in ``validation_dataset_reader``:
validation and test data must never be augmented.

Our GEO and ATIS copies have their entities already anonymized to typed, numbered placeholders
(``s0`` state, ``ci1`` city, numbered in order of appearance), which shapes what each strategy can do.

``abs_entities`` (ABSENTITIES)
    An *entity* is an LF constant outside head position whose mention is found exactly once in
    the question: a typed constant ``word:type`` (ATIS ``afternoon:pd``, ``first:cl``,
    ``breakfast:me``; the mention is its ``_``-separated words, matched against the stemmed
    question by :func:`mentions`), and, with ``swap_placeholders``, a placeholder (``s0``: its own
    mention, type ``s``). A new example replaces one entity of an example, in question and LF,
    by another entity of the same type seen anywhere in the training set. Swapping placeholders
    cannot add content (``s0`` for ``s0`` is the same example); it only produces numberings the
    anonymizer never does (a lone ``s1``), so it is off by default.

``abs_whole_phrases`` (ABSWHOLEPHRASES)
    The paper abstracts a phrase whose LF is a whole subexpression of a known type and lets any
    phrase of that type fill the slot. We find such phrases from *minimal pairs*: two training
    examples whose questions differ in exactly one span (longest common prefix and suffix
    removed, both spans non-empty, at most ``max_phrase_length`` tokens, some context left)
    and whose LFs differ in exactly one proper subtree (the smallest one holding every
    difference). The two (span, subtree) pairs are *whole phrases* of one type: they fill the
    same template. A new example takes any example in which a phrase's span occurs exactly once
    in the question and its subtree exactly once in the LF, and puts in a phrase of the same
    type. Limits: the type is the one-step relation "seen in a common template" (no transitive
    closure), so a phrase travels only as far as its minimal pairs show; the alignment is only
    as good as the pair (a span and a subtree that differ together need not mean the same in
    every other context, e.g. "largest state" uses ``size:i`` but "largest citi" ``population:i``);
    a substituted phrase may bring no placeholder the rest of the question already has, and no
    variable the rest of the LF uses that the old subtree did not.

``concat`` (CONCAT-k)
    k different examples, questions joined by ``separator`` (the paper's ``</s>``; not the
    toolkit's end symbol ``@end@``), LFs put under a new root: ``( concat LF1 ... LFk )``, one
    well-formed s-expression that the bracketed grammar and the tree codecs read like any other
    (``concat/k`` is one more node). Placeholders are not renumbered, so ``ci0`` may name two
    cities, one in each part, as in the paper's concatenations of repeated entities.
"""

from __future__ import annotations

import logging
import random
import re
from abc import abstractmethod
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.data.dataset_readers.dataset_reader import DatasetReader
from toolkit.data.example import Example
from toolkit.errors import ConfigurationError
from toolkit.from_params import as_params
from toolkit.params import Params
from toolkit.registrable import Registrable
from tree_codecs.tree import Tree, parse_lisp, to_lisp

logger = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"([a-z]+)\d+")
VARIABLE = re.compile(r"\$\d+")
CONCAT = "concat"
HOLE = Tree("@hole@")  # where a phrase was taken out of an LF

Question = tuple[str, ...]
Pair = tuple[Question, str]  # (question tokens, logical form): what makes an example new


@dataclass(frozen=True)
class Candidate:
    """A recombined example before sampling, with the lines of the originals it came from."""

    question: Question
    target: str
    sources: tuple[Any, ...]

    @property
    def pair(self) -> Pair:
        return self.question, self.target


class RecombinationStrategy(Registrable):
    """One way of making new examples; *ratio* is how many, relative to the original set.

    Errors in a strategy's own settings name their key path (``dataset_reader.strategies.1.ratio``).
    """

    def __init__(self, ratio: float = 0.5) -> None:
        if ratio < 0:
            raise ConfigurationError(f"ratio: must be >= 0, got {ratio}")
        self.ratio = ratio

    @classmethod
    def from_params(cls, params: Params | Mapping[str, Any], **extras: Any) -> RecombinationStrategy:
        params = as_params(params)
        where = params.history
        try:
            return super().from_params(params, **extras)
        except ConfigurationError as error:
            message = str(error)
            if where and not message.startswith(where) and re.match(r"[a-z_]+: ", message):
                raise ConfigurationError(where + message) from None
            raise

    @property
    def name(self) -> str:
        """The registered name, which augmented examples carry in ``meta["recombination"]``."""
        return next(name for name in self.list_available() if self.resolve_class_name(name)[0] is type(self))

    @abstractmethod
    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        """Up to *count* new candidates, none in *known*, drawn with *rng* alone."""


class EnumeratedStrategy(RecombinationStrategy):
    """A strategy whose new examples can all be listed: sample uniformly from that list."""

    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        pool = {candidate.pair: candidate for candidate in self.candidates(unique(examples)) if candidate.pair not in known}
        ordered = [pool[pair] for pair in sorted(pool)]  # sorted: independent of hash seeds and set order
        if len(ordered) < count:
            logger.info("%s: only %d new examples exist, %d wanted", self.name, len(ordered), count)
        return rng.sample(ordered, min(count, len(ordered)))

    @abstractmethod
    def candidates(self, examples: Sequence[Example]) -> Iterable[Candidate]:
        """Every recombined example this strategy can make from the (deduplicated) *examples*."""


def unique(examples: Sequence[Example]) -> list[Example]:
    """The first example of each distinct (question, LF) pair, in order."""
    seen: dict[Pair, Example] = {}
    for example in examples:
        seen.setdefault(pair_of(example), example)
    return list(seen.values())


def pair_of(example: Example) -> Pair:
    return tuple(example.tokens), str(example.target)


def source_of(example: Example) -> Any:
    return example.meta.get("line")


# ---------------------------------------------------------------------------------- ABSENTITIES


@dataclass(frozen=True)
class Entity:
    """An LF constant and the question tokens that mention it; entities swap within a *type*."""

    constant: str
    mention: Question
    type: str


def stem_matches(token: str, word: str) -> bool:
    """Whether the stemmed question *token* can be *word*: a stand-in for the Porter stemmer the data used.

    >>> [stem_matches(t, w) for t, w in [("morn", "morning"), ("earli", "early"), ("first", "first"), ("a", "am")]]
    [True, True, True, False]
    """
    return token == word or (word.endswith("y") and token == word[:-1] + "i") or (len(token) >= 4 and word.startswith(token))


def entity_type(constant: str, swap_placeholders: bool) -> str | None:
    """``pd`` for ``afternoon:pd``, ``s`` for the placeholder ``s0`` (if swapped), else ``None``."""
    word, colon, kind = constant.rpartition(":")
    if colon and word and kind:
        return kind
    match = PLACEHOLDER.fullmatch(constant)
    return match.group(1) if match and swap_placeholders else None


def mentions(question: Question, entity_constant: str) -> list[int]:
    """Start positions of the mentions of a constant in *question* (its ``_``-separated words, stemmed)."""
    word = entity_constant.rpartition(":")[0] or entity_constant
    words = word.split("_")
    return [start for start in range(len(question) - len(words) + 1) if all(stem_matches(question[start + offset], part) for offset, part in enumerate(words))]


def argument_constants(tree: Tree) -> set[str]:
    """Leaves outside head position: the constants and variables an LF mentions."""
    return {node.label for node, _ in tree.walk() if not node.children}


def entities_of(question: Question, tree: Tree, swap_placeholders: bool) -> list[Entity]:
    """The entities of one example: constants of a known type whose mention occurs exactly once."""
    found = []
    for constant in sorted(argument_constants(tree)):
        kind = entity_type(constant, swap_placeholders)
        if kind is None:
            continue
        starts = mentions(question, constant)
        if len(starts) == 1:
            length = len((constant.rpartition(":")[0] or constant).split("_"))
            found.append(Entity(constant, question[starts[0] : starts[0] + length], kind))
    return found


def replace_leaves(tree: Tree, old: str, new: str) -> Tree:
    if not tree.children:
        return Tree(new) if tree.label == old else tree
    return Tree(tree.label, tuple(replace_leaves(child, old, new) for child in tree.children))


def replace_span(question: Question, span: Question, new: Question) -> Question | None:
    """*question* with its one occurrence of *span* replaced by *new*; ``None`` unless it occurs exactly once."""
    starts = [i for i in range(len(question) - len(span) + 1) if question[i : i + len(span)] == span]
    if len(starts) != 1:
        return None
    start = starts[0]
    return question[:start] + new + question[start + len(span) :]


@RecombinationStrategy.register("abs_entities")
class AbsEntities(EnumeratedStrategy):
    """ABSENTITIES: swap one entity of an example for another entity of the same type (see the module docstring)."""

    def __init__(self, ratio: float = 0.5, swap_placeholders: bool = False) -> None:
        super().__init__(ratio)
        self.swap_placeholders = swap_placeholders

    def candidates(self, examples: Sequence[Example]) -> Iterator[Candidate]:
        parsed = [(tuple(example.tokens), parse_lisp(str(example.target)), example) for example in examples]
        by_type: dict[str, set[Entity]] = defaultdict(set)
        found = []
        for question, tree, _ in parsed:
            entities = entities_of(question, tree, self.swap_placeholders)
            found.append(entities)
            for entity in entities:
                by_type[entity.type].add(entity)
        lexicon = {kind: sorted(entities, key=lambda e: (e.constant, e.mention)) for kind, entities in by_type.items()}
        for (question, tree, example), entities in zip(parsed, found):
            constants = argument_constants(tree)
            for entity in entities:
                rest = replace_span(question, entity.mention, ())
                for other in lexicon[entity.type]:
                    if other.constant in constants or set(other.mention) & set(rest or ()):
                        continue  # it would merge with an entity already there
                    new_question = replace_span(question, entity.mention, other.mention)
                    if new_question is not None:
                        yield Candidate(new_question, to_lisp(replace_leaves(tree, entity.constant, other.constant)), (source_of(example),))


# ------------------------------------------------------------------------------ ABSWHOLEPHRASES


@dataclass(frozen=True)
class Phrase:
    """A question span aligned with an LF subtree (a *whole phrase*, found from a minimal pair)."""

    span: Question
    tree: Tree


TreePath = tuple[int, ...]


def difference(a: Tree, b: Tree) -> tuple[TreePath, Tree, Tree] | None:
    """The smallest subtree position holding every difference of *a* and *b*, and both subtrees there."""
    if a == b:
        return None
    path: TreePath = ()
    while a.label == b.label and a.arity == b.arity:
        differing = [index for index, (x, y) in enumerate(zip(a.children, b.children)) if x != y]
        if len(differing) != 1:
            break
        path += (differing[0],)
        a, b = a.children[differing[0]], b.children[differing[0]]
    return path, a, b


def variables(tree: Tree) -> set[str]:
    return {label for label in argument_constants(tree) if VARIABLE.fullmatch(label)}


def placeholders(tokens: Iterable[str]) -> set[str]:
    return {token for token in tokens if PLACEHOLDER.fullmatch(token)}


def subtree_paths(tree: Tree, path: TreePath = ()) -> Iterator[tuple[TreePath, Tree]]:
    yield path, tree
    for index, child in enumerate(tree.children):
        yield from subtree_paths(child, path + (index,))


def replace_at(tree: Tree, path: TreePath, new: Tree) -> Tree:
    if not path:
        return new
    head, *rest = path
    children = list(tree.children)
    children[head] = replace_at(children[head], tuple(rest), new)
    return Tree(tree.label, tuple(children))


def minimal_pairs(parsed: Sequence[tuple[Question, Tree]], max_phrase_length: int, min_support: int) -> dict[Phrase, set[Phrase]]:
    """Whole phrases and, for each, the phrases seen filling the same template (see the module docstring).

    A pair of phrases counts once it is seen in *min_support* different templates.
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
                phrase_i, phrase_j = Phrase(span_i, found[1]), Phrase(span_j, found[2])
                if is_substitution(phrase_i, phrase_j):
                    context = replace_at(parsed[i][1], found[0], HOLE)
                    support[phrase_i, phrase_j].add((prefix, suffix, context))
                    support[phrase_j, phrase_i].add((prefix, suffix, context))
    substitutes: dict[Phrase, set[Phrase]] = defaultdict(set)
    for (phrase, other), contexts in support.items():
        if len(contexts) >= min_support:
            substitutes[phrase].add(other)
    return substitutes


def is_substitution(a: Phrase, b: Phrase) -> bool:
    """Whether two aligned differences look like one phrase put for another, not an added modifier.

    A bare variable is no phrase; one node with a child more (``and`` with an extra conjunct) is an
    insertion that the question span does not cover; and a span must mention exactly the
    placeholders its subtree holds (the paper's entity condition).
    """
    if VARIABLE.fullmatch(a.tree.label) or VARIABLE.fullmatch(b.tree.label):
        return False
    if a.tree.label == b.tree.label and a.tree.arity != b.tree.arity:
        return False
    return all(placeholders(p.span) == placeholders(argument_constants(p.tree)) for p in (a, b))


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

    def candidates(self, examples: Sequence[Example]) -> Iterator[Candidate]:
        parsed = [(tuple(example.tokens), parse_lisp(str(example.target))) for example in examples]
        substitutes = minimal_pairs(parsed, self.max_phrase_length, self.min_support)
        by_span: dict[Question, list[Phrase]] = defaultdict(list)
        for phrase in sorted(substitutes, key=lambda p: (p.span, to_lisp(p.tree))):
            by_span[phrase.span].append(phrase)
        for example, (question, tree) in zip(examples, parsed):
            paths: dict[Tree, list[TreePath]] = defaultdict(list)
            for path, subtree in subtree_paths(tree):
                paths[subtree].append(path)
            spans = Counter(question[i:j] for i in range(len(question)) for j in range(i + 1, min(len(question), i + self.max_phrase_length) + 1))
            for span in sorted(span for span, count in spans.items() if count == 1 and span in by_span):
                for phrase in by_span[span]:
                    if len(paths.get(phrase.tree, ())) != 1:
                        continue
                    rest = replace_at(tree, paths[phrase.tree][0], HOLE)
                    for other in sorted(substitutes[phrase], key=lambda p: (p.span, to_lisp(p.tree))):
                        new_question = replace_span(question, phrase.span, other.span)
                        if new_question is None or placeholders(other.span) & placeholders(question) - placeholders(phrase.span):
                            continue
                        if (variables(other.tree) - variables(phrase.tree)) & variables(rest):
                            continue
                        new_tree = replace_at(tree, paths[phrase.tree][0], other.tree)
                        yield Candidate(new_question, to_lisp(new_tree), (source_of(example),))


# ------------------------------------------------------------------------------------- CONCAT-k


@RecombinationStrategy.register("concat")
class Concat(RecombinationStrategy):
    """CONCAT-k: k different examples in one, questions joined by *separator*, LFs as ``( concat LF1 ... LFk )``.

    *max_target_tokens* skips draws whose LF would be longer (a grammar's ``max_length`` would
    drop them from training anyway).
    """

    def __init__(self, ratio: float = 0.5, k: int = 2, separator: str = "</s>", max_target_tokens: int | None = None) -> None:
        super().__init__(ratio)
        if k < 2:
            raise ConfigurationError(f"k: must be >= 2 (CONCAT-k joins k examples), got {k}")
        if not separator or len(separator.split()) != 1:
            raise ConfigurationError(f"separator: must be one token, got {separator!r}")
        self.k, self.separator, self.max_target_tokens = k, separator, max_target_tokens

    @property
    def name(self) -> str:
        return f"concat-{self.k}"

    def combine(self, parts: Sequence[Example]) -> Candidate:
        question: list[str] = []
        for part in parts:
            question += ([self.separator] if question else []) + list(part.tokens)
        target = " ".join(["(", CONCAT, *(str(part.target) for part in parts), ")"])
        return Candidate(tuple(question), target, tuple(source_of(part) for part in parts))

    def sample(self, examples: Sequence[Example], count: int, rng: random.Random, known: set[Pair]) -> list[Candidate]:
        pool = unique(examples)
        if len(pool) < self.k:
            return []
        drawn: dict[Pair, Candidate] = {}
        for _ in range(20 * count):  # draws that repeat an example or exceed the length are retried
            if len(drawn) == count:
                break
            candidate = self.combine([pool[index] for index in rng.sample(range(len(pool)), self.k)])
            too_long = self.max_target_tokens is not None and len(candidate.target.split()) > self.max_target_tokens
            if not too_long and candidate.pair not in known and candidate.pair not in drawn:
                drawn[candidate.pair] = candidate
        return list(drawn.values())


# ------------------------------------------------------------------------------------- the reader


@DatasetReader.register("recombination")
class RecombinationReader(DatasetReader):
    """Reads with *base_reader*, then appends each strategy's recombined examples (originals first, unchanged).

    Strategy *i* draws with its own generator seeded by ``(seed, i)``, so adding a strategy at the
    end leaves the earlier ones' samples as they were. Augmented examples carry
    ``meta = {"path", "line": None, "recombination": name, "sources": lines of the originals}``.

    Registered as ``"recombination"``.
    """

    def __init__(self, base_reader: DatasetReader, strategies: list[RecombinationStrategy], seed: int = 13) -> None:
        super().__init__(None)
        if not strategies:
            raise ConfigurationError("dataset_reader.strategies: expected at least one strategy")
        self.base_reader, self.strategies, self.seed = base_reader, strategies, seed

    def read(self, path: str | Path, whole: bool = False) -> list[Example]:
        originals = self.base_reader.read(path, whole)
        known = {pair_of(example) for example in originals}
        augmented: list[Example] = []
        for index, strategy in enumerate(self.strategies):
            rng = random.Random(f"recombination:{self.seed}:{index}")
            count = round(strategy.ratio * len(originals))
            sampled = strategy.sample(originals, count, rng, known)
            known.update(candidate.pair for candidate in sampled)
            meta = {"path": str(path), "line": None, "recombination": strategy.name}
            augmented += [Example(list(c.question), c.target, {**meta, "sources": list(c.sources)}) for c in sampled]
            logger.info("%s: %d new examples (%d wanted) added to %d originals", strategy.name, len(sampled), count, len(originals))
        return originals + augmented

    def _read(self, path: Path) -> Iterator[Example]:
        return iter(self.read(path))

    def text_to_example(self, text: str) -> Example:
        return self.base_reader.text_to_example(text)
