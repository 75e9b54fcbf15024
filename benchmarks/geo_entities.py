"""Entity mentions and anonymization on raw GEO (Prolog): coverage of the gold entities, per split.

    python benchmarks/geo_entities.py [--data DATA_ROOT/geo-raw]

The lexicon is ``geo_entities.json`` checked against the *training* logical forms only (as a
trained model would be); for each split it prints how many questions have a mention, how many
gold entity constants a placeholder replaces and which are missed, placeholders per question, how
often the context's preferred reading of an ambiguous mention is the gold one, and whether
restore(anonymize(question, gold)) gives the gold logical form back.
"""

import argparse
from collections import Counter
from pathlib import Path

from toolkit.entities import EntityLexicon, GeoPrologAnonymizer, LexiconMentionFinder, find_constants
from toolkit.entities.lexicon import CONSTRUCTOR_TYPES
from toolkit.params import data_root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(data_root()) / "geo-raw"))
    args = parser.parse_args()
    folder = Path(args.data)
    lexicon_path = str(folder / "geo_entities.json")
    splits = {split: folder / f"geo_prolog_{split}.tsv" for split in ("train", "test")}

    for split, path in splits.items():
        check = EntityLexicon(lexicon_path, gold_forms=[str(path)])
        print(f"{split}: entities spelled in the gold forms but absent from the JSON: {len(check.added)} {check.added[:5]}")
        print(f"{split}: entities in the JSON that the gold forms spell otherwise: {len(check.respelled)} {check.respelled[:5]}")
    lexicon = EntityLexicon(lexicon_path, gold_forms=[str(splits["train"])])
    anonymizer = GeoPrologAnonymizer(LexiconMentionFinder(lexicon))

    for split, path in splits.items():
        pairs = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        counts: Counter[str] = Counter()
        per_question: Counter[int] = Counter()
        misses: list[str] = []
        for question, logical_form in pairs:
            tokens = question.split()
            gold = logical_form.split()
            anonymized = anonymizer.anonymize(tokens, gold)
            placeholders = anonymizer.anonymize(tokens).placeholders
            counts["questions"] += 1
            counts["with a mention"] += bool(anonymizer.finder.find(tokens))
            counts["with a placeholder"] += bool(placeholders)
            per_question[len(placeholders)] += 1
            constants = [constant for constant in find_constants(gold) if constant.constructor in anonymizer.constructors]
            counts["gold entities"] += len(constants)
            counts["found (replaced)"] += anonymized.replaced
            counts["missed (left as names)"] += len(anonymized.unmatched)
            counts["city state slots (not _)"] += sum(constant.state not in (None, "_") for constant in constants)
            counts["  city state slots replaced"] += sum(
                (constant.state or "").startswith(anonymizer.prefix) for constant in find_constants(anonymized.logical_form or []) if constant.state
            )
            counts["_countryid left as names (by design)"] += sum(constant.constructor == "_countryid" for constant in find_constants(gold))
            misses += [f"{constant}  <-  {question}" for constant in anonymized.unmatched]
            used = {token for token in anonymized.logical_form or [] if token.startswith(anonymizer.prefix) and token[len(anonymizer.prefix) :].isdigit()}
            counts["placeholders not in the gold form"] += sum(f"{anonymizer.prefix}{number}" not in used for number in range(len(placeholders)))
            counts["round trip exact"] += anonymizer.restore(anonymized.logical_form or [], placeholders).tokens == gold
            for constant in constants:  # ambiguous mentions: is the context's first reading the gold constructor's?
                for mention in placeholders:
                    names = {" ".join(lexicon.spelling(entity)) for entity in mention.candidates}
                    if len(mention.types) > 1 and " ".join(constant.name) in names:
                        counts["ambiguous gold mentions"] += 1
                        counts["  first reading = gold type"] += mention.candidates[0].type in CONSTRUCTOR_TYPES[constant.constructor]
                        break
        total = counts["questions"]
        mean = sum(number * count for number, count in per_question.items()) / total
        print(f"\n== {split} ({path.name})")
        for name, value in counts.items():
            print(f"  {name}: {value}" + (f" ({100 * value / total:.1f}%)" if name.startswith("with") or name == "round trip exact" else ""))
        print(f"  placeholders per question: mean {mean:.2f}, distribution {dict(sorted(per_question.items()))}")
        for miss in misses[:8]:
            print(f"  miss: {miss}")


if __name__ == "__main__":
    main()
