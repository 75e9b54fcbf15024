"""The bracketed grammar's learned constraints, on the weights of one trained archive.

Training never sees the grammar's masks (its loss is over the whole vocabulary), so one archive
can be decoded with the grammar it was trained with and with the constraints fitted on its
training file, and the two compared pair by pair, with no retraining and no seed noise:

- ``bracketed``: balanced brackets only (what the archive decodes with unless it was trained with
  the constraints on);
- ``arities``: ``restrict_arities``, each operator's argument counts as training showed them;
- ``arities+copy``: ``copy_atoms`` too, the atoms training always copied from the question only
  where the question has them.

    python benchmarks/learned_constraints.py runs/atis/model.tar.gz DATA_ROOT/atis/train.tsv DATA_ROOT/atis/test.tsv [--threads 2]

Each row is the archive's metrics with its own search (beam 5 in the shipped configs), the number
of predictions whose operators take an argument count training never showed, the number that
differ from the first row's, and sentences/s.
"""

import argparse
import json
import time

import torch

from toolkit.archive import load_archive
from toolkit.evaluation import predict, score
from toolkit.grammars.bracketed import Arities, BracketedGrammar
from toolkit.metrics import parse_sexpr


def outside(prediction: str, arities: Arities) -> bool:
    """Whether *prediction* is unbalanced, or uses an atom with an argument count *arities* never saw."""
    try:
        parse_sexpr(prediction)
    except ValueError:
        return True
    counted = Arities.of([prediction.split()], "(", ")").table
    return any(atom not in arities.table or not counts <= arities.table[atom] for atom, counts in counted.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("train", help="the training file the constraints are fitted on")
    parser.add_argument("data", help="the file to decode and score")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    loaded = load_archive(args.archive)
    model = loaded.model
    if not isinstance(model.grammar, BracketedGrammar):
        raise SystemExit(f"{args.archive}: its grammar is {type(model.grammar).__name__}, not bracketed")
    train, data = loaded.dataset_reader.read(args.train), loaded.dataset_reader.read(args.data)
    own = model.grammar  # the rows below are made anew, so an archive trained with constraints is compared too
    shape = {"max_length": own.max_length, "open": own.open, "close": own.close, "head_first": own.head_first}
    grammars: dict[str, BracketedGrammar] = {}
    for name, options in [("bracketed", {}), ("arities", {"restrict_arities": True}), ("arities+copy", {"restrict_arities": True, "copy_atoms": True})]:
        grammars[name] = BracketedGrammar(**shape, **options)
        grammars[name].fit(train)
    arities = grammars["arities"].arities
    first = None
    for name, grammar in grammars.items():
        model.grammar = grammar
        start = time.perf_counter()
        predictions = predict(model, data)
        seconds = time.perf_counter() - start
        first = first or predictions
        row = {"grammar": name, **{key: round(100 * value, 2) for key, value in score(predictions, data, loaded.metrics).items()}}
        row.update(
            outside_training_arities=sum(outside(prediction, arities) for prediction in predictions),
            changed=sum(a != b for a, b in zip(first, predictions)),
            sentences_per_second=round(len(data) / seconds, 1),
        )
        print(json.dumps(row))


if __name__ == "__main__":
    main()
