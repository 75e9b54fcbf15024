"""Throughput of every parser config: training tokens/s (fp32 and bf16) with MFU, decoding sentences/s, peak memory.

Each config runs in a subprocess of its own (so the peak memory is that config's); the parent
prints one table. In the subprocess:

- The reader, grammar (fitted), vocabulary and model are built as ``toolkit train`` builds them
  (``toolkit.training.train``: ``build_vocabulary`` through ``construct``, ``drop_skipped``), from
  the whole training file, so the vocabulary and thus the model have the size they have in
  training. The timed work uses the first ``--examples`` training examples.
- Training: ``--steps`` optimizer steps (after 3 warm-up steps) on the config's token-budget batches
  (``TokenBudgetBatchSampler``, ``trainer.max_tokens``): collate, forward, backward, gradient
  clipping (``trainer.grad_norm``) and the config's Adam step, as the trainer does, without the
  learning-rate schedule. fp32 and bf16 (the forward under ``torch.autocast(..., dtype=bfloat16)``,
  as ``trainer.mixed_precision: "bf16"`` does) take turns on the same batches, in two halves
  each, so that machine noise hits both alike. Tokens are those of the indexed examples, padding
  left out: source plus target tokens for an encoder-decoder (``len(item["source"]) +
  len(item["target"])``), source words only for a tagger, whose tags are outputs, not inputs.
- MFU: ``toolkit.training.flops``: 6 x parameters x fp32 tokens/s against the fp32 matmul peak
  measured in the subprocess (2048 x 2048, at ``--threads``), printed under the table, with the
  bf16 matmul peak beside it: the most bf16 can gain. It counts
  every parameter for every token, so it overestimates an encoder-decoder's FLOPs.
- Decoding: sentences/s of ``toolkit.evaluation.predict`` (length-sorted batches of
  ``trainer.decode_max_tokens``) in fp32 with greedy search and beams of 5 and 10 on the first
  ``--predict-examples`` training sentences, on the untrained model: the weights are restored to
  their seeded initial values after the training steps, so decoding is the same whatever
  ``--steps`` is. An untrained model decodes until its grammar ends the output or the search's
  step limit stops it, and often that is the limit: the searches keep the config's
  ``model.search.max_steps`` (500 where the config sets none), and the grammars their own caps
  (``max_length``, ``max_nodes``; a transition system takes exactly 2n actions). These rates are
  thus those of untrained output lengths, mostly slower than a trained model's (an untrained
  output can also end early). Rows whose untrained decoding takes far too long decode fewer
  sentences (``PREDICTION_SHARE``: AMR, whose untrained parser seldom CLOSEs and so takes all 400
  steps, decodes a fifth of them, 20 of 100), and say so in the row. A tagger has no search: its
  one rate is in the greedy column.
- Peak memory: ``ru_maxrss`` of the subprocess (the whole training file, model, optimizer and
  decoding included), and ``torch.cuda.max_memory_allocated`` on CUDA. Beams of 10 over untrained
  sentences that run to the step limit can dominate it, so the peak before decoding (after the
  training steps) is printed under the table too.

    python benchmarks/throughput.py [--configs geo_transformer atis_transformer ...] [--examples 500]
        [--steps 20] [--predict-examples 100] [--precision both|fp32|bf16] [--device cpu|cuda] [--threads 2]
    python benchmarks/throughput.py --quick --configs geo_transformer     # a smoke run: 50 examples, 3 steps, 10 predictions

Speeds compare within one run on one machine; the bf16/fp32 ratio is measured in one process.
"""

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = [
    "geo_transformer",
    "geo_seq2tree",
    "geo_phrase_transformer",
    "atis_transformer",
    "ud_ewt_upos_hypernode",
    "ud_ewt_stack_transformer",
    "amr_stack_transformer",
    "multi30k_transformer",
]
# Untrained decoding that runs to the step limit on (nearly) every sentence: these rows decode only this
# share of --predict-examples. AMR: an untrained parser seldom CLOSEs, so most sentences take all 400
# steps; 10 sentences took 2.4 s greedy, 33 s with beam 5 and 50 s with beam 10 (1 thread, loaded
# machine); 50 sentences, after a few training steps, about 7 minutes in all, with 3.2 GB peak RSS.
PREDICTION_SHARE: dict[str, float] = {"amr_stack_transformer": 0.2}
WARMUP_STEPS = 3
PEAK_SIZE = 2048
RESULT_PREFIX = "THROUGHPUT-RESULT "


# ------------------------------------------------------------------ the subprocess: one config


def train_rates(model, indexed, batches, optimizer, grad_norm, device, precisions, steps) -> dict[str, float]:
    """Tokens/s per precision over *steps* optimizer steps each, the precisions taking turns on the same batches."""
    import torch

    from toolkit.device import autocast, move_to_device
    from toolkit.models.tagger import Tagger

    def tokens(item) -> int:
        return len(item["source"]) + (0 if isinstance(model, Tagger) else len(item.get("target", [])))

    def run(precision: str, first: int, count: int) -> tuple[float, int]:
        model.train()
        seen = 0
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        for step in range(first, first + count):
            items = [indexed[i] for i in batches[step % len(batches)]]
            batch = move_to_device(model.collate(items), device)
            with autocast(device, None if precision == "fp32" else precision):
                loss = model(batch)["loss"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
            optimizer.step()
            loss.item()  # as the trainer does (it logs the loss): on CUDA, waits for the step
            seen += sum(tokens(item) for item in items)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter() - start, seen

    for precision in precisions:
        run(precision, 0, WARMUP_STEPS)
    totals = {precision: [0.0, 0] for precision in precisions}
    first = WARMUP_STEPS
    for half in (steps // 2, steps - steps // 2):
        for precision in precisions:
            seconds, seen = run(precision, first, half)
            totals[precision][0] += seconds
            totals[precision][1] += seen
        first += half
    return {precision: seen / seconds for precision, (seconds, seen) in totals.items() if seconds > 0}


def predict_rates(model, examples, max_tokens, device) -> tuple[dict[str, float], int]:
    """Sentences/s of greedy search and beams of 5 and 10, with the model's own step limit; and that limit."""
    import torch

    from toolkit.decoding import BeamSearch, GreedySearch
    from toolkit.evaluation import predict

    own = getattr(model, "search", None)
    if own is None:  # a tagger: one pass, no search
        searches = {"greedy": None}
        max_steps = 0
    else:
        max_steps = own.max_steps
        searches = {
            "greedy": GreedySearch(max_steps=max_steps),
            "beam 5": BeamSearch(beam_size=5, max_steps=max_steps),
            "beam 10": BeamSearch(beam_size=10, max_steps=max_steps),
        }
    predict(model, examples[:2], max_tokens, next(iter(searches.values())))  # warm-up
    rates = {}
    for name, search in searches.items():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        predict(model, examples, max_tokens, search)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        rates[name] = len(examples) / (time.perf_counter() - start)
    return rates, max_steps


def measure(config: str, args: argparse.Namespace) -> dict:
    """Everything one row of the table needs, for *config*."""
    import torch

    from toolkit.data.batching import TokenBudgetBatchSampler
    from toolkit.data.dataset_readers import DatasetReader
    from toolkit.from_params import construct
    from toolkit.grammars.grammar import Grammar
    from toolkit.models.model import Model
    from toolkit.params import Params
    from toolkit.plugins import import_plugins
    from toolkit.training.flops import measure_peak_flops, model_flops_utilization
    from toolkit.training.train import build_vocabulary, drop_skipped
    from toolkit.training.trainer import Trainer, seed_everything

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    import_plugins()

    started = time.perf_counter()
    params = Params.from_file(REPO / "jsonnet_configs" / f"{config}.jsonnet")
    seed = params.pop_int("random_seed", 13)
    seed_everything(seed)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    train_path = params.pop("train_data_path")
    grammar = Grammar.from_params(params.pop("grammar", {}))
    train_examples = reader.read(train_path)
    grammar.fit(train_examples)
    train_examples = drop_skipped(grammar, train_examples, "training")
    vocab = construct(build_vocabulary, params.pop("vocabulary", {}), examples=train_examples, grammar=grammar)
    model = Model.from_params(params.pop("model"), vocab=vocab, grammar=grammar).to(device)
    trainer = Trainer.from_params(params.pop("trainer", {}))
    parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    setup_seconds = time.perf_counter() - started

    initial = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
    indexed = [model.index(example) for example in train_examples[: args.examples]]
    sampler = TokenBudgetBatchSampler([model.length(item) for item in indexed], trainer.max_tokens, trainer.max_examples, shuffle=True, seed=seed)
    batches = list(sampler)
    optimizer = trainer.optimizer.construct(model_parameters=[p for p in model.parameters() if p.requires_grad])
    precisions = ["fp32", "bf16"] if args.precision == "both" else [args.precision]
    tokens_per_second = train_rates(model, indexed, batches, optimizer, trainer.grad_norm, device, precisions, args.steps)
    training_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    training_cuda_mib = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    del optimizer
    model.zero_grad(set_to_none=True)

    peak = measure_peak_flops(torch.float32, size=PEAK_SIZE, device=device)
    # what bf16 can gain at most: its matmul peak on the same device (on a CPU without AMX it can be below fp32's)
    peak_bf16 = measure_peak_flops(torch.bfloat16, size=PEAK_SIZE, device=device) if "bf16" in precisions else None
    mfu = {precision: model_flops_utilization(parameters, rate, peak) for precision, rate in tokens_per_second.items()}

    # Decoding on the initial (seeded) weights: untrained, and the same whatever --steps is.
    model.load_state_dict(initial)
    predicted = max(1, round(args.predict_examples * PREDICTION_SHARE.get(config, 1.0)))
    sentences, max_steps = predict_rates(model, train_examples[:predicted], trainer.decode_max_tokens, device)

    result = {
        "config": config,
        "parameters": parameters,
        "examples": len(indexed),
        "batches": len(batches),
        "max_tokens": trainer.max_tokens,
        "tokens_per_second": tokens_per_second,
        "mfu": mfu,
        "peak_flops_fp32": peak,
        "peak_flops_bf16": peak_bf16,
        "sentences_per_second": sentences,
        "predicted": predicted,
        "capped": predicted < args.predict_examples,
        "max_steps": max_steps,
        "setup_seconds": setup_seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "training_rss_mib": training_rss_mib,
    }
    if device.type == "cuda":
        result["peak_cuda_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
        result["training_cuda_mib"] = training_cuda_mib
    return result


# ------------------------------------------------------------------ the parent: one subprocess per config, one table


def run_config(config: str, args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        config,
        "--examples",
        str(args.examples),
        "--steps",
        str(args.steps),
        "--predict-examples",
        str(args.predict_examples),
        "--precision",
        args.precision,
        "--device",
        args.device,
        "--threads",
        str(args.threads),
    ]
    start = time.perf_counter()
    process = subprocess.run(command, check=False, capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - start
    lines = [line for line in process.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if process.returncode != 0 or not lines:
        tail = (process.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"{config}: failed (exit {process.returncode}) after {seconds:.0f} s: {tail}", file=sys.stderr)
        print(process.stderr[-4000:], file=sys.stderr)
        return {"config": config, "error": tail}
    result = json.loads(lines[-1].removeprefix(RESULT_PREFIX))
    print(f"{config}: {seconds:.0f} s", file=sys.stderr)
    return result


def number(value, format_spec: str) -> str:
    return "–" if value is None or (isinstance(value, float) and not math.isfinite(value)) else format(value, format_spec)


def print_table(results: list[dict], args: argparse.Namespace) -> None:
    cuda = args.device.startswith("cuda")
    columns = [
        "config",
        "parameters",
        "train tokens/s fp32",
        "train tokens/s bf16",
        "bf16/fp32",
        "MFU fp32",
        "greedy sent/s",
        "beam 5 sent/s",
        "beam 10 sent/s",
        "peak RSS MiB",
    ] + (["peak CUDA MiB"] if cuda else [])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    notes = []
    for result in results:
        if "error" in result:
            print(f"| {result['config']} | failed: {result['error']} |" + " |" * (len(columns) - 2))
            continue
        rate, sentences = result["tokens_per_second"], result["sentences_per_second"]
        fp32, bf16 = rate.get("fp32"), rate.get("bf16")
        name = result["config"]
        if result["capped"]:
            name += f" (decoding: {result['predicted']} sentences)"
        tagger = result["max_steps"] == 0
        cells = [
            name,
            f"{result['parameters']:,}",
            number(fp32, ",.0f"),
            number(bf16, ",.0f"),
            number(bf16 / fp32 if fp32 and bf16 else None, ".2f"),
            number(result["mfu"].get("fp32"), ".2%") if fp32 else "–",
            number(sentences.get("greedy"), ",.1f") + (" (tagger, no search)" if tagger else ""),
            number(sentences.get("beam 5"), ",.1f"),
            number(sentences.get("beam 10"), ",.1f"),
            f"{result['peak_rss_mib']:,.0f}",
        ] + ([f"{result.get('peak_cuda_mib', 0):,.0f}"] if cuda else [])
        print("| " + " | ".join(cells) + " |")
        limit = f"max_steps {result['max_steps']}" if not tagger else "no search"
        notes.append(
            f"- {result['config']}: {result['examples']} training examples in {result['batches']} batches of <= {result['max_tokens']} tokens; "
            f"fp32 matmul peak {result['peak_flops_fp32'] / 1e9:,.1f} GFLOP/s"
            + (f" (bf16: {result['peak_flops_bf16'] / 1e9:,.1f})" if result.get("peak_flops_bf16") else "")
            + f"; decoding {result['predicted']} sentences, {limit}; "
            f"peak RSS after training {result['training_rss_mib']:,.0f} MiB"
            + (f", CUDA {result['training_cuda_mib']:,.0f} MiB" if cuda else "")
            + f"; setup (read, fit, vocabulary, model) {result['setup_seconds']:.1f} s"
        )
    print(
        "\nMFU: 6 x parameters x fp32 tokens/s over the fp32 matmul peak measured in the same subprocess "
        f"({PEAK_SIZE} x {PEAK_SIZE} torch.matmul on {args.device}, {args.threads} threads). Decoding: untrained models, fp32."
    )
    print("\n".join(notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="+", default=CONFIGS, metavar="NAME", help="config names in jsonnet_configs/ (default: all eight)")
    parser.add_argument("--examples", type=int, default=500, help="training examples batched for the timed steps")
    parser.add_argument("--steps", type=int, default=20, help=f"timed optimizer steps per precision (after {WARMUP_STEPS} warm-up steps)")
    parser.add_argument("--predict-examples", type=int, default=100, help="sentences decoded per search")
    parser.add_argument("--precision", choices=["both", "fp32", "bf16"], default="both")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads in each subprocess")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 50 examples, 3 steps, 10 predicted sentences")
    parser.add_argument("--worker", metavar="CONFIG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.examples, args.steps, args.predict_examples = 50, 3, 10

    if args.worker:
        print(RESULT_PREFIX + json.dumps(measure(args.worker, args)), flush=True)
        return

    unknown = [name for name in args.configs if not (REPO / "jsonnet_configs" / f"{name}.jsonnet").is_file()]
    if unknown:
        parser.error(f"no such config in jsonnet_configs/: {', '.join(unknown)}")
    import torch

    print(
        f"torch {torch.__version__}, device {args.device}, {args.threads} threads; {args.examples} training examples, "
        f"{args.steps} steps per precision after {WARMUP_STEPS} warm-up, {args.predict_examples} decoded sentences\n"
    )
    results = [run_config(config, args) for config in args.configs]
    print_table(results, args)


if __name__ == "__main__":
    main()
