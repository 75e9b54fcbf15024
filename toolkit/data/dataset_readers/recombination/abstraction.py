"""Raw examples (entity names, Prolog queries) with their entities taken out, and put back.

The ``tsv`` reader with an anonymizer gives each raw GEO example its mentions (``meta["mentions"]``)
and its anonymized query (``meta["anonymized_target"]``: ``_stateid ( e0 )``). :func:`abstract`
makes of them what the abstraction strategies recombine: the question with one placeholder per
mention and no type words (``what rivers flow through e0 ?``), the anonymized query as a Prolog
tree, and the mention each placeholder stands for. :func:`realize` puts mentions back into such a
pair, after any edit, giving a raw question and a raw query; the reader then anonymizes them again
as it does any line, so a recombined example is exactly what the reader would make of that line
(the type words come from the names put back, not from the example they were taken from).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from toolkit.data.dataset_readers.recombination.strategy import PROLOG, Question
from toolkit.data.example import Example
from toolkit.entities.anonymizer import Anonymized, Anonymizer, RestoreError
from toolkit.entities.lexicon import CONSTRUCTOR_TYPES
from toolkit.entities.mentions import Mention
from tree_codecs.tree import Tree

Mentions = tuple[tuple[str, Mention], ...]  # placeholder -> the mention it stands for, hashable


@dataclass(frozen=True)
class Abstracted:
    """A raw example with its entities taken out (see the module docstring)."""

    question: Question
    tree: Tree
    mentions: Mentions

    def mention(self, placeholder: str) -> Mention:
        return dict(self.mentions)[placeholder]


def abstract(example: Example, anonymizer: Anonymizer) -> Abstracted | None:
    """*example* with a placeholder per mention; ``None`` where the reader did not anonymize it (no
    ``anonymized_target``) or its query does not read as a Prolog tree (a multiword name no mention matched).
    """
    meta = example.meta
    if "anonymized_target" not in meta or "mentions" not in meta:
        return None
    raw = str(meta.get("question", " ".join(example.tokens))).split()
    prefix = getattr(anonymizer, "prefix", "e")
    question = list(raw)
    named: dict[str, Mention] = {}
    for number in reversed(range(len(meta["mentions"]))):
        mention = meta["mentions"][number]
        placeholder = f"{prefix}{number}"
        question[mention.start : mention.end] = [placeholder]
        named[placeholder] = mention
    try:
        tree = PROLOG.parse(meta["anonymized_target"])
    except ValueError:
        return None
    return Abstracted(tuple(question), tree, tuple(sorted(named.items())))


def realize(question: Question, tree: Tree, mentions: Mapping[str, Mention], anonymizer: Anonymizer) -> tuple[Question, str] | None:
    """The raw question and query of an abstracted pair: each placeholder's mention written back.

    Placeholders are numbered again in the order the question has them, as the anonymizer numbers
    them. ``None`` when a placeholder has no mention, or the query puts a mention under an id
    constructor of a type it cannot name (``_riverid`` for *texas*).
    """
    order = list(dict.fromkeys(token for token in question if token in mentions))
    if any(label in mentions and label not in order for label in _leaves(tree)):
        return None  # a placeholder of the query that the question does not mention
    prefix = getattr(anonymizer, "prefix", "e")
    renamed = {placeholder: f"{prefix}{number}" for number, placeholder in enumerate(order)}
    query = [renamed.get(token, token) for token in PROLOG.show(tree).split()]
    try:
        restored = anonymizer.restore(query, [mentions[placeholder] for placeholder in order])
    except RestoreError:  # an anonymizer with unknown: "error"
        return None
    if restored.problems:  # unknown: "keep"
        return None
    words = tuple(word for token in question for word in (mentions[token].surface.split() if token in mentions else [token]))
    return words, restored.text


def entity_slots(tree: Tree) -> dict[str, set[str]]:
    """Placeholder (or name) -> the entity types every place the query puts it allows: an id
    constructor's name argument takes that constructor's types, a city's state argument a state.
    """
    slots: dict[str, set[str]] = {}
    for node, _ in tree.walk():
        types = CONSTRUCTOR_TYPES.get(node.label)
        if types is None or not node.children:
            continue
        places = [(node.children[0].label, set(types))]
        if node.label == "_cityid" and len(node.children) == 2 and node.children[1].label != "_":
            places.append((node.children[1].label, {"state"}))
        for label, allowed in places:
            slots[label] = slots[label] & allowed if label in slots else allowed
    return slots


def misread(anonymized: Anonymized, anonymizer: Anonymizer) -> bool:
    """Whether the query of an anonymized pair takes a mention for another thing than the anonymizer
    reads first (its first type word): *new york* as the city where the question says nothing
    more. A question alone cannot tell such a reading, so a generated example must not teach it.
    """
    if anonymized.logical_form is None:
        return False
    try:
        tree = PROLOG.parse(" ".join(anonymized.logical_form))
    except ValueError:
        return False
    prefix = getattr(anonymizer, "prefix", "e")
    for label, types in entity_slots(tree).items():
        number = label[len(prefix) :]
        if label.startswith(prefix) and number.isdigit() and int(number) < len(anonymized.placeholders):
            mention = anonymized.placeholders[int(number)]
            if mention.candidates and mention.candidates[0].type not in types:
                return True
    return False


def _leaves(tree: Tree) -> list[str]:
    return [node.label for node, _ in tree.walk() if not node.children]
