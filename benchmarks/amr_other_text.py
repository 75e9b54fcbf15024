"""The AMR grammar fitted on The Little Prince, on text of other kinds: concept labels, entity types and dates.

For each held-out file (default: the repository's hand-annotated science prose and news-style entity sets):

1. **Oracle Smatch** fitted on the file itself (the ceiling the transition system and the aligner
   set there) and fitted on Little Prince train (the ceiling a parser trained on the book has), with
   the graphs the fitted grammar relabelled.
2. **Symbols a parser trained on the book cannot emit**: the oracle's actions on the file (fitted on
   itself) that the Little Prince training oracle never makes, so that no model trained on it has
   them in its vocabulary (``ENTITY:company``, ``PRED:enzyme``), by kind, with the commonest.
   Copies, ``NAME`` and ``DATE`` spell their concept from the words, so they are never among them
   unless their sense is new.
3. **Entity types**: of the gold named entities, how many a mention makes whole with the right type
   (``NAME``, typed by :mod:`transition_systems.amr.entity_types`: what a parse that takes mentions
   makes, whatever its model), and the wrong ones.
4. **Dates**: of the gold ``date-entity`` nodes, how many a ``DATE`` mention makes whole.

With ``--archive``, a trained parser parses each file too (its own search), and the table gives its
Smatch, the gold names it made with the right type (a ``name`` with the same strings under a node of the
gold type), and the gold dates it made and attached where the gold does (a ``date-entity`` with the same
parts, below a node of the gold parent's concept by the same role).

    python benchmarks/amr_other_text.py [--data DATA_ROOT/amr-little-prince] [--dictionaries DIR] [--mentions auto|spacy|rules]
        [--archive MODEL.tar.gz] [FILE ...]
"""

import argparse
import logging
from collections import Counter
from pathlib import Path

import transition_systems  # noqa: F401  (registers the amr grammar)
from toolkit.data.dataset_readers import DatasetReader
from toolkit.metrics.smatch import Smatch
from toolkit.oracle import replay_oracle
from toolkit.params import data_root
from transition_systems.amr import AmrTransitionSystem
from transition_systems.amr.graph import GoldGraph

REPOSITORY = Path(__file__).absolute().parents[1]
FIXTURES = REPOSITORY / "tests" / "fixtures"
DEFAULT_FILES = [FIXTURES / name for name in ("amr_science_heldout.txt", "amr_entities_fresh.txt", "amr_entities_heldout.txt")]


def entity_types(grammar: AmrTransitionSystem, examples: list) -> tuple[int, int, list[str]]:
    """Gold named entities typed right by a mention's NAME, all of them, and the wrong ones (gold -> what was made)."""
    right, total, wrong = 0, 0, []
    for example in examples:
        graph, sentence = GoldGraph.of(grammar.target(example)), grammar.derivation_state(example).sentence
        children: dict[str, dict[str, str]] = {}
        for source, role, target in graph.edges:
            children.setdefault(source, {})[role] = target
        for entity, roles in children.items():
            if "name" not in roles:
                continue
            ops = [graph.labels[target].strip('"') for role, target in sorted(children.get(roles["name"], {}).items()) if role.startswith("op")]
            total += 1
            made = next(
                (grammar.entity_type(m.kind, ops) for m in sentence.mentions if list(sentence.tokens[m.start : m.end]) == ops),
                "no mention",
            )
            if made == graph.labels[entity]:
                right += 1
            else:
                wrong.append(f"{' '.join(ops)}: {graph.labels[entity]} -> {made}")
    return right, total, wrong


def dates(grammar: AmrTransitionSystem, examples: list) -> tuple[int, int]:
    """Gold date-entities that the oracle makes whole with DATE, and all of them."""
    made = sum(grammar.oracle(example).count("DATE") for example in examples)
    total = sum(1 for example in examples for _, _, concept in grammar.target(example).instances() if concept == "date-entity")
    return made, total


def named(graph) -> dict[tuple[str, ...], list[str]]:
    """A graph's names by their strings, each with the concepts of the entities that bear it."""
    concept = {source: target for source, _, target in graph.instances()}
    strings: dict[str, list[tuple[str, str]]] = {}
    for source, role, target in graph.attributes():
        if role.startswith(":op") and concept.get(source) == "name":
            strings.setdefault(source, []).append((role, str(target).strip('"')))
    found: dict[tuple[str, ...], list[str]] = {}
    for source, role, target in graph.edges():
        if role == ":name" and target in strings:
            found.setdefault(tuple(word for _, word in sorted(strings[target])), []).append(concept[source])
    return found


def dated(graph) -> set[tuple[frozenset, str, str]]:
    """A graph's dates: their parts, the role that attaches each and its parent's concept (an inverted role read back)."""
    concept = {source: target for source, _, target in graph.instances()}
    parts: dict[str, set] = {}
    for source, role, target in graph.triples:
        if concept.get(source) == "date-entity" and role in (":year", ":month", ":day", ":weekday"):
            parts.setdefault(source, set()).add((role, concept.get(target, str(target))))
    found = set()
    for source, role, target in graph.edges():
        if target in parts:
            found.add((frozenset(parts[target]), role, concept[source]))
        elif source in parts and role.endswith("-of"):
            found.add((frozenset(parts[source]), role[: -len("-of")], concept[target]))
    return found


def parsed(archive: str, examples: list) -> tuple[float, int, int, int, int]:
    """A trained parser on *examples*: Smatch, gold names typed right and all, gold dates attached right and all."""
    import penman

    from toolkit.archive import load_archive
    from toolkit.evaluation import predict

    model = load_archive(archive).model
    outputs = predict(model, examples)
    metric = Smatch(13)
    metric(outputs, [example.target for example in examples])
    typed = names = attached = all_dates = 0
    for output, example in zip(outputs, examples):
        prediction = penman.decode(output)
        made = named(prediction)
        for words, concepts in named(example.target).items():
            names += len(concepts)
            typed += sum(min(concepts.count(type_), made.get(words, []).count(type_)) for type_ in set(concepts))
        gold_dates = dated(example.target)
        all_dates += len(gold_dates)
        attached += len(gold_dates & dated(prediction))
    return 100 * metric.get_metric()["smatch"], typed, names, attached, all_dates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--data", type=Path, default=None, help="the amr-little-prince folder (default: DATA_ROOT/amr-little-prince)")
    parser.add_argument("--dictionaries", default=str(Path(data_root()) / "amr-dictionaries"))
    parser.add_argument("--mentions", default="auto", choices=("auto", "spacy", "rules"))
    parser.add_argument("--archive", default=None, help="a trained AMR parser: parse each file and score it too")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    folder = args.data or Path(data_root()) / "amr-little-prince"
    reader = DatasetReader.by_name("penman")()
    train = reader.read(folder / "amr-bank-struct-v3.0-train.txt")
    settings = {"dictionaries": args.dictionaries, "mentions": args.mentions}
    book = AmrTransitionSystem(**settings)
    book.fit(train)
    vocabulary = {symbol for example in train for symbol in book.oracle(example)}
    print(f"fitted on {len(train)} Little Prince training graphs; mentions: {book.mentions}; {len(vocabulary)} symbols\n")
    print(
        "| file | graphs | Smatch, fitted on itself | fitted on the book | relabelled | symbols the book's parser lacks | entity types right | dates made whole |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    details = []
    for path in args.files:
        examples = reader.read(path)
        itself = AmrTransitionSystem(**settings)
        itself.fit(examples)
        scores = {}
        for name, grammar in (("itself", itself), ("book", book)):
            report = replay_oracle(grammar, examples, [Smatch(grammar.smatch_seed)])
            scores[name] = (100 * report["smatch"], report.get("oracle_relabelled", 0))
        actions = [symbol for example in examples for symbol in itself.oracle(example)]
        missing = Counter(symbol for symbol in actions if symbol not in vocabulary)
        right, total, wrong = entity_types(book, examples)
        made, all_dates = dates(book, examples)
        print(
            f"| {path.name} | {len(examples)} | {scores['itself'][0]:.1f} | {scores['book'][0]:.1f} | {scores['book'][1]} "
            f"| {sum(missing.values())} of {len(actions)} | {right}/{total} ({100 * right / max(total, 1):.0f}%) | {made}/{all_dates} |"
        )
        by_kind = Counter(symbol.partition(":")[0] for symbol in missing.elements())
        details.append(f"\n{path.name}: symbols missing by kind {dict(by_kind.most_common())}; commonest {missing.most_common(8)}")
        details.extend(f"  wrong type: {line}" for line in wrong)
    print("\n".join(details))
    if args.archive:
        print(f"\nparsed by {args.archive}\n\n| file | Smatch | names typed right | dates attached right |\n|---|---:|---:|---:|")
        for path in args.files:
            smatch, typed, names, attached, all_dates = parsed(args.archive, reader.read(path))
            print(f"| {path.name} | {smatch:.1f} | {typed}/{names} ({100 * typed / max(names, 1):.0f}%) | {attached}/{all_dates} |")


if __name__ == "__main__":
    main()
