"""The `toolkit` command: train, evaluate, predict, serve, visualize, oracle, package, list.

A mistake in the user's input (config, data, archive) prints one ``error:`` line and exits with
status 1; click's own usage errors exit with 2. Only bugs show a traceback.
"""

import glob
import json
import logging
import os
import sys
import warnings
from pathlib import Path

import click

from toolkit.cli_options import (
    FiniteRange,
    archive_parts,
    beam_option,
    check_output,
    config_params,
    corpus_options,
    device_option,
    ensemble_option,
    guided_option,
    import_packages,
    include_option,
    load_archives,
    quantize_option,
    search_for,
    within_open_files,
)
from toolkit.corpus.run import DEFAULT_SHARD_SIZE
from toolkit.errors import ToolkitError
from toolkit.interrupts import Terminated
from toolkit.limits import MAX_BATCH, MAX_TIMEOUT, MIN_TIMEOUT
from toolkit.upgrades import ToolkitDeprecationWarning

MAX_WAIT_MS = 10_000  # a batch that waits longer for company makes each lone request wait as long (1e308: never answered)
MAX_SENTENCES = 1000  # visualize: about ten pictures each


class ReaderGone(Exception):
    """Standard output's reader has closed it (``toolkit predict ... | head``)."""


class Commands(click.Group):
    """The command group; a broken pipe leaves it as :class:`ReaderGone`, which click does not catch
    (click turns it into exit status 1 with no message).
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as error:
            raise ReaderGone from error


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
def cli(verbose: bool) -> None:
    """Grammar-driven neural parsers built from jsonnet configs.

    An ARCHIVE is a model.tar.gz (or its training folder), an https:// URL (downloaded once into a
    cache), or the name of an installed model package (see `toolkit package`).
    """
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not sys.warnoptions:  # a plugin's old calls, once per call site (Python hides DeprecationWarnings outside __main__); -W decides otherwise
        warnings.simplefilter("default", ToolkitDeprecationWarning)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("-s", "--serialization-dir", required=True, type=click.Path(file_okay=False), help="Where checkpoints, logs and the archive go.")
@click.option(
    "-o",
    "--overrides",
    multiple=True,
    help="JSON or jsonnet (inline, or a file) merged into the config, e.g. '{\"trainer.num_epochs\": 5}'; repeatable, later ones win.",
)
@click.option("--recover", is_flag=True, help="Continue the training in SERIALIZATION_DIR from its last checkpoint.")
@click.option("-f", "--force", is_flag=True, help="Delete SERIALIZATION_DIR first.")
@include_option
def train(config: str, serialization_dir: str, overrides: tuple[str, ...], recover: bool, force: bool, include: tuple[str, ...]) -> None:
    """Train the model CONFIG describes; writes SERIALIZATION_DIR/model.tar.gz."""
    from toolkit.training.train import train_model

    import_packages(include)
    archive = train_model(config_params(config, overrides), serialization_dir, recover=recover, force=force)
    click.echo(str(archive))


@cli.command()
@click.argument("archive", type=click.Path())
@click.argument("data", type=click.Path())
@click.option("--output-file", type=click.Path(dir_okay=False), default=None, help="Also write the metrics here.")
@click.option(
    "--metric", "extra_metrics", multiple=True, metavar="NAME", help="Also score with this registered metric (repeatable), e.g. both smatch and exact_smatch."
)
@beam_option
@guided_option
@ensemble_option
@device_option
@quantize_option
@include_option
def evaluate(
    archive: str,
    data: str,
    output_file: str | None,
    extra_metrics: tuple[str, ...],
    beam_size: int | None,
    execution_guided: bool,
    ensemble: tuple[str, ...],
    device: str,
    quantize: str | None,
    include: tuple[str, ...],
) -> None:
    """Score ARCHIVE on DATA; prints the metrics as one JSON object.

    The archive's metrics come first; each ``--metric NAME`` adds one more, decoded once for all.
    A score whose name another metric already used is printed as ``NAME:score``. With
    ``--execution-guided``, ``execution_guided_changes`` counts the inputs whose choice execution changed.
    Where the search abstains (``abstain``), ``abstained`` is the fraction of inputs it would not answer
    (no reading passed); their best readings are scored all the same.
    """
    from toolkit.evaluation import predict, score, undecodable
    from toolkit.files import writing_output
    from toolkit.metrics.metric import Metric, check_golds

    if output_file:
        check_output(output_file, [data], [archive, *ensemble])  # before the decoding, not after it
    import_packages(include)
    loaded = load_archives(archive, device, ensemble, quantize)
    search = search_for(loaded, beam_size, execution_guided)
    extras = [(name, Metric.by_name(name)()) for name in extra_metrics]
    examples = loaded.dataset_reader.read(data, whole=True)
    check_golds([*loaded.metrics, *(metric for _, metric in extras)], examples)  # before decoding
    too_long = undecodable(loaded.model, examples, search)
    decoding = search or getattr(loaded.model, "search", None)  # a tagger has none
    abstained = getattr(decoding, "abstentions", 0)
    predictions = predict(loaded.model, examples, search=search)
    metrics = score(predictions, examples, loaded.metrics)
    for name, metric in extras:
        for key, value in score(predictions, examples, [metric]).items():
            metrics[f"{name}:{key}" if key in metrics else key] = value
    if execution_guided:
        metrics["execution_guided_changes"] = search.guided_changes
    if getattr(decoding, "abstain", False) and getattr(decoding, "execution_guided", None) is not None:
        metrics["abstained"] = (decoding.abstentions - abstained) / len(examples) if examples else 0.0
    text = json.dumps({"examples": len(examples), **({"too_long": len(too_long)} if too_long else {}), **metrics})
    click.echo(text)
    if output_file:
        with writing_output(output_file) as sink:
            sink.write(text + "\n")


@cli.command()
@click.argument("archive", type=click.Path())
@click.argument("inputs", metavar="INPUT...", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--predictor", default=None, help="Predictor name (see `toolkit list Predictor`); default: the one the archive's grammar names.")
@click.option(
    "--output-file",
    "--output",
    "-o",
    "output",
    type=click.Path(),
    default=None,
    help="Write the output here instead of stdout: whole, once the last line is parsed (stdout streams). With --engine: the output folder.",
)
@click.option("--batch-size", type=click.IntRange(1, MAX_BATCH), default=64, show_default=True, help="Most lines decoded together.")
@beam_option
@guided_option
@ensemble_option
@device_option
@quantize_option
@corpus_options
@include_option
def predict(archive: str, inputs: tuple[str, ...], output: str | None, engine: str | None, **options) -> None:
    """Parse each line of INPUT (plain text or JSON; - for stdin); one JSON line out per line in.

    ``--predictor dependency`` reads plain text or CoNLL-U and writes one CoNLL-U sentence per input sentence.
    With --engine, INPUT is a corpus (files, folders, globs; gzip too) parsed shard by shard into the
    folder -o, with a manifest that lets the same command resume.
    """
    from toolkit.corpus.worker import PredictionSettings

    corpus = {name: options.pop(name) for name in ("workers", "address", "shard_size", "retries")}
    batch_size = options.pop("batch_size")
    settings = PredictionSettings(archive, **{**options, "include": tuple(options["include"]), "ensemble": tuple(options["ensemble"])}, batch_size=batch_size)
    if engine is not None:
        return predict_corpus_into(settings, inputs, output, engine, **corpus)
    if len(inputs) > 1 or Path(inputs[0]).is_dir() or (glob.has_magic(inputs[0]) and not Path(inputs[0]).exists()):
        raise ToolkitError(
            f"{' '.join(inputs)} is a corpus (several files, a folder or a glob): parse it into a folder with --engine dask (or local) -o FOLDER"
        )
    if given := [name for name, value in corpus.items() if value != CORPUS_DEFAULTS[name]]:
        raise ToolkitError(f"--{given[0].replace('_', '-')} is for corpus prediction: add --engine dask (or local) -o FOLDER")
    predict_stream(settings, inputs[0], output)


CORPUS_DEFAULTS = {"workers": None, "address": None, "shard_size": DEFAULT_SHARD_SIZE, "retries": 2}


def predict_stream(settings, input_file: str, output_file: str | None) -> None:
    """One input file (or stdin) parsed in this process, streaming to stdout or written whole to *output_file*."""
    from toolkit.files import input_lines, writing_output

    if output_file:
        check_output(output_file, [input_file], [settings.archive, *settings.ensemble])
    runner = settings.load()
    with input_lines(input_file) as lines, writing_output(output_file) as sink:
        for line in runner.predict_lines(lines, settings.batch_size):
            sink.write(line + "\n")
    if settings.execution_guided:
        logging.getLogger(__name__).info("execution guidance changed the choice of %d inputs", runner.search.guided_changes)


def predict_corpus_into(settings, inputs: tuple[str, ...], output: str | None, engine: str, **corpus) -> None:
    """``toolkit predict --engine``: the corpus *inputs* into the folder *output*, resuming what its manifest shows finished."""
    from toolkit.corpus import Engine, predict_corpus
    from toolkit.files import check_not_read, lands_on
    from toolkit.interrupts import termination_interrupts

    import_packages(settings.include)
    if output is None:
        raise ToolkitError("--engine writes one output file per input shard: name their folder with -o FOLDER")
    if "-" in inputs:
        raise ToolkitError("--engine reads files (shards of a corpus), not standard input: name the files, folders or globs")
    if Path(output).exists() and not Path(output).is_dir():
        raise ToolkitError(f"the output folder {output} is a file: name a folder (it is made if missing)")
    if not Engine.is_registered(engine):
        raise ToolkitError(f"--engine {engine!r} is not an engine; the engines: {', '.join(Engine.list_available())}")
    check_not_read(output, [], [part for archive in (settings.archive, *settings.ensemble) for part in archive_parts(archive)], kind="folder")
    if held := next((path for path in inputs if Path(path).exists() and lands_on(path, output)), None):
        raise ToolkitError(f"the output folder {output} holds the input {held}: its outputs could overwrite what is read; name another folder")
    shard_size = corpus.pop("shard_size")
    with termination_interrupts():
        summary = predict_corpus(settings, list(inputs), output, Engine.by_name(engine)(**corpus), shard_size)
    click.echo(
        f"{summary['finished']} of {summary['shards']} shards written to {output} ({summary['parsed_now']} parsed now): "
        f"{summary['lines']:,} input lines, {summary['records']:,} records, {summary['errors']:,} error records",
        err=True,
    )


@cli.command()
@click.argument("archive", type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--batch-size", type=click.IntRange(1, MAX_BATCH), default=64, show_default=True, help="Most inputs decoded together.")
@click.option(
    "--max-wait-ms",
    type=FiniteRange(0, MAX_WAIT_MS),
    default=0.0,
    show_default=True,
    help="How long a batch waits for more requests (each request waits as long).",
)
@click.option("--predictor", default=None, help="Predictor name (see `toolkit list Predictor`); default: the one the archive's grammar names.")
@click.option(
    "--client-timeout",
    type=FiniteRange(MIN_TIMEOUT, MAX_TIMEOUT),
    default=10.0,
    show_default=True,
    help="Seconds a client has to send a request's head, then again its body (else 408, connection closed); a client that reads none of its response for this long is cut off.",
)
@click.option(
    "--graceful-timeout",
    type=FiniteRange(MIN_TIMEOUT, MAX_TIMEOUT),
    default=20.0,
    show_default=True,
    help="On SIGTERM or Ctrl-C: seconds that requests already read may take to be answered; then the rest get a 503 and the server exits.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1, 65536),
    callback=within_open_files,
    default=256,
    show_default=True,
    help="Connections open at once; the next ones get a 503 and are closed (at most what ulimit -n allows).",
)
@beam_option
@ensemble_option
@device_option
@quantize_option
@include_option
def serve(
    archive: str,
    host: str,
    port: int,
    batch_size: int,
    max_wait_ms: float,
    predictor: str | None,
    client_timeout: float,
    graceful_timeout: float,
    max_connections: int,
    beam_size: int | None,
    ensemble: tuple[str, ...],
    device: str,
    quantize: str | None,
    include: tuple[str, ...],
) -> None:
    """Serve ARCHIVE over HTTP: a JSON API (/predict, /draw, /health, /info) and a page at / that draws the parse."""
    from toolkit import load_predictor
    from toolkit.serving.server import listen, require_serve_extra
    from toolkit.serving.server import serve as run_server

    sock = listen(host, port)
    require_serve_extra()
    runner = load_predictor(archive, predictor, device=device, beam_size=beam_size, include_package=include, ensemble=ensemble, quantize=quantize)
    run_server(
        runner,
        predictor or runner.model.grammar.default_predictor,
        archive,
        sock,
        batch_size,
        max_wait_ms / 1000,
        ensemble,
        client_timeout=client_timeout,
        graceful_timeout=graceful_timeout,
        max_connections=max_connections,
    )


@cli.command()
@click.argument("archive", type=click.Path())
@click.argument("input_file", metavar="INPUT", type=click.Path())
@click.option("-o", "--output-dir", required=True, type=click.Path(file_okay=False), help="Where the pictures go (one folder per sentence).")
@click.option("--max-sentences", type=click.IntRange(1, MAX_SENTENCES), default=5, show_default=True, help="Draw the first N sentences of INPUT.")
@device_option
@include_option
def visualize(archive: str, input_file: str, output_dir: str, max_sentences: int, device: str, include: tuple[str, ...]) -> None:
    """Draw what ARCHIVE does with the sentences of INPUT (one per line, as `predict` reads them); prints each file written.

    Attention heatmaps (encoder self-attention per layer and head, output symbols against source
    tokens), a transition parser's stack and buffer per action, and the predicted structure: a
    dependency tree (displaCy SVG), an AMR graph (Graphviz) or a logical-form tree. A picture the
    archive has no material for is skipped with a note. Needs the `viz` extra.
    """
    from toolkit.visualization.command import visualize_archive

    import_packages(include)
    for path in visualize_archive(archive, input_file, output_dir, max_sentences, device, note=lambda message: click.echo(f"note: {message}", err=True)):
        click.echo(str(path))


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.argument("data", type=click.Path())
@click.option("-o", "--overrides", multiple=True, help="As for `train`: JSON or jsonnet merged into the config.")
@include_option
def oracle(config: str, data: str, overrides: tuple[str, ...], include: tuple[str, ...]) -> None:
    """Replay CONFIG's grammar oracle on DATA; prints round-trip counts as one JSON object.

    DATA is read whole (no ``max_examples``) by the reader of unseen data: the config's
    ``validation_dataset_reader`` if it has one, else its ``dataset_reader``. A grammar that
    learns from training data (labeled-SHIFT words) is fitted on DATA itself.
    """
    from toolkit.data.dataset_readers import DatasetReader
    from toolkit.grammars.grammar import Grammar
    from toolkit.oracle import replay_oracle

    import_packages(include)
    params = config_params(config, overrides)
    reader = DatasetReader.of_unseen_data(params)
    grammar = Grammar.from_params(params.pop_object("grammar", {}))
    examples = reader.read(data, whole=True)
    grammar.fit(examples)  # as `toolkit train` does
    click.echo(json.dumps(replay_oracle(grammar, examples)))


@cli.command()
@click.argument("archive", type=click.Path())
@click.option("-o", "--output-dir", required=True, type=click.Path(file_okay=False), help="Where the wheel goes (made if missing).")
@click.option("--name", required=True, help="The model's name, and its Python package's: lowercase letters, digits and _ (e.g. ewt_parser).")
@click.option("--version", "model_version", required=True, help="The package's version, in PEP 440's canonical form (e.g. 1.0.0).")
@include_option
def package(archive: str, output_dir: str, name: str, model_version: str, include: tuple[str, ...]) -> None:
    """Build a wheel of ARCHIVE; once it is pip-installed, NAME loads it anywhere an archive is taken.

    As `spacy package` does: `toolkit predict NAME INPUT`, `toolkit serve NAME` and
    `load_predictor("NAME")` then find it. The archive is loaded first, so a damaged one is
    refused, not shipped. Prints the wheel's path.
    """
    from toolkit.packaging import package_archive

    import_packages(include)
    click.echo(str(package_archive(archive, output_dir, name, model_version)))


@cli.command(name="list")
@click.argument("base", required=False)
@include_option
def list_components(base: str | None, include: tuple[str, ...]) -> None:
    """List registered names per base class (or for BASE only), each with the package that provides it."""
    from toolkit.plugins import load_entry_point_plugins, origin
    from toolkit.registrable import registered_bases

    import_packages(include)
    load_entry_point_plugins()
    bases = registered_bases()
    if base is not None:
        matches = {cls: names for cls, names in bases.items() if cls.__name__.lower() == base.lower()}
        if not matches:
            raise ToolkitError(f"no base class named {base!r}; available: {', '.join(sorted(c.__name__ for c in bases))}")
        bases = matches
    for cls, names in sorted(bases.items(), key=lambda item: item[0].__name__):
        click.echo(f"{cls.__name__} ({cls.__module__})")
        for name, implementation in sorted(names.items()):
            default = " (default)" if name == getattr(cls, "default_implementation", None) else ""
            click.echo(f"  {name}{default}: {implementation.__module__}.{implementation.__qualname__} [{origin(implementation)}]")


def one_line(message: str) -> str:
    """Fold a multi-line message (jsonnet's traces, tarfile's per-method reasons) into one line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0] + (f" ({'; '.join(lines[1:])})" if len(lines) > 1 else "") if lines else message


def main() -> None:
    try:
        cli.main(standalone_mode=False)
        sys.stdout.flush()  # here, where a broken pipe or a full disk is caught, not at the interpreter's exit
    except click.exceptions.Abort as abort:
        cause = abort.__context__
        if isinstance(cause, EOFError):  # click turns any EOFError into an abort: a file ended too soon
            fail(f"a file ended before it was complete ({one_line(str(cause)) or 'EOFError'})")
        interrupted(cause)
    except (ReaderGone, BrokenPipeError):  # `toolkit predict ... | head`: the reader has gone, which is no error
        leave(0)
    except OSError as error:
        from toolkit.files import reason, write_failure

        if error.filename is not None:
            fail(f"{error.filename}: {reason(error)}")
        if why := write_failure(error, "."):  # standard output on a full disk, a write that named no file
            fail(f"a write failed: {why}")
        raise  # not a file the user named, nor the file system's fault: a bug, with its traceback
    except click.ClickException as error:
        error.show()
        leave(error.exit_code)
    except ToolkitError as error:
        fail(one_line(str(error)))
    except KeyboardInterrupt as interrupt:
        interrupted(interrupt)


def interrupted(interrupt: BaseException | None) -> None:
    """Ctrl-C or SIGTERM: one line, with what the command left behind when it says (a training run
    does), and the shell's status for the signal (130 for SIGINT, 143 for SIGTERM).
    """
    said = str(interrupt) if isinstance(interrupt, KeyboardInterrupt) else ""
    click.echo(f"interrupted{': ' + said if said else ''}", err=True)
    leave(143 if isinstance(interrupt, Terminated) else 130)


def fail(message: str) -> None:
    """Print ``error: MESSAGE`` and exit with status 1."""
    click.echo(f"error: {message}", err=True)
    leave(1)


def leave(status: int) -> None:
    """Exit with *status*; output that can no longer be written (its reader gone, its disk full) is dropped
    here rather than reported by the interpreter at its exit, after the one line the user was given.
    """
    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(status)


if __name__ == "__main__":
    main()
