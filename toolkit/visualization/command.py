"""``toolkit visualize ARCHIVE INPUT -o DIR``: every picture a trained model offers, for the first sentences of INPUT.

Each sentence gets a folder ``DIR/sentence_<line>/`` with, as far as the archive has them:

- ``encoder_layer<k>.png``: encoder self-attention per head (``_phase2``: the hypernode encoder's second phase);
- ``cross_layer<k>.png``: the decoder's attention from each output symbol to the source tokens;
- ``stack_buffer.png``: a transition parser's stack and buffer before each action;
- ``tree.svg`` (dependency tree), ``graph.svg`` or ``graph.dot`` (AMR), ``logical_form.png`` (logical form);
- ``prediction.txt``: the tokens, the predicted symbols and the result, as text.

A picture an archive has no material for (a tagger has no decoder, a translation no tree) is
skipped with one note for the run, not an error. A sentence's files are drawn in a hidden folder
beside its own and renamed into it one by one, so that no reader finds half a picture; none may
land on the input or on a file of the archive (a run's ``vocabulary/``...).
"""

import io
import os
import tempfile
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from toolkit.archive_sources import resolve_archive
from toolkit.errors import DataError, ToolkitError
from toolkit.extras import install_hint
from toolkit.files import check_not_read, input_lines
from toolkit.models.model import Model

DPI = 100  # small files that stay readable; tick labels are 7 pt
Note = Callable[[str], None]


def require_plotting() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ToolkitError(f"toolkit visualize needs matplotlib: {install_hint('viz')}") from None


def check_has_text(path: str | Path) -> None:
    """Fail before the archive loads where *path* has nothing to draw."""
    with input_lines(path) as lines:
        if not any(line.strip() for line in lines):
            raise DataError(f"{path}: no sentences to visualize (the file has no non-blank line)")


class OnceNotes:
    """Passes each distinct note on once: a run over five sentences says "no decoder" once, not five times."""

    def __init__(self, note: Note):
        self.note, self.seen = note, set()

    def __call__(self, message: str) -> None:
        if message not in self.seen:
            self.seen.add(message)
            self.note(message)


def save_png(figure, path: Path) -> None:
    """A PNG with an adaptive 256-colour palette: a third of the RGBA file's size, and the same picture to the eye."""
    from PIL import Image  # matplotlib's own dependency

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)


def visualize_archive(
    archive: str | Path, input_path: str | Path, output_dir: str | Path, max_sentences: int = 5, device: str = "auto", note: Note = print
) -> Iterator[Path]:
    """Draw the pictures of the first *max_sentences* sentences of *input_path*; yields each file as it is written."""
    from toolkit import load_predictor
    from toolkit.cli_options import archive_parts

    require_plotting()
    source, archive = archive, resolve_archive(archive)  # a path, an https URL or an installed model's name; refused at once if none
    check_has_text(input_path)
    read = ([input_path], archive_parts(str(source)))
    check_not_read(output_dir, *read, kind="folder")
    try:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolkitError(f"cannot create the output directory {output_dir}: {error.strerror}") from None
    predictor = load_predictor(archive, device=device)
    notes = OnceNotes(note)
    with input_lines(input_path) as lines:  # read as `toolkit predict` reads them: a CoNLL-U file by its blocks
        for number, example in islice(predictor.read_inputs(lines, str(input_path)), max_sentences):
            if isinstance(example, DataError):
                notes(f"{input_path}:{number}: skipped: {example}")
                continue
            directory = Path(output_dir) / f"sentence_{number}"
            directory.mkdir(parents=True, exist_ok=True)
            for drawn, path in draw_sentence(predictor.model, example, directory, notes):
                check_not_read(path, *read)
                os.replace(drawn, path)
                yield path


def draw_sentence(model: Model, example, directory: Path, notes: Note) -> Iterator[tuple[Path, Path]]:
    """Each file of the sentence, drawn in a hidden folder beside *directory*, with its place in *directory*
    (where the caller renames it); the hidden folder goes once the last is taken.
    """
    from toolkit.visualization.fonts import covering_fonts
    from toolkit.visualization.trace import trace

    traced = trace(model, example)
    with tempfile.TemporaryDirectory(dir=directory.parent, prefix=f".{directory.name}.") as scratch:
        drawing = Path(scratch)
        with covering_fonts([*traced.tokens, *traced.symbols, str(traced.result)], notes):  # made and saved in those fonts
            pictures = draw_pictures(model, traced, drawing, notes)
        text = drawing / "prediction.txt"
        text.write_text(f"tokens: {' '.join(traced.tokens)}\nsymbols: {' '.join(traced.symbols)}\nresult: {traced.result}\n", encoding="utf-8")
        for drawn in [*pictures, text]:
            yield drawn, directory / drawn.name


def draw_pictures(model: Model, traced, directory: Path, notes: Note) -> list[Path]:
    """The attention, stack/buffer and structure pictures of a traced sentence, as far as the model has them."""
    from toolkit.visualization.heatmaps import cross_attention_figures, encoder_figures
    from toolkit.visualization.stack_buffer import has_stack_and_buffer, stack_buffer_figure

    figures = encoder_figures(traced, model.encoder)
    decoder = getattr(model, "decoder", None)
    if decoder is None:
        notes(f"a {type(model).__name__} model has no decoder: no cross-attention or stack/buffer pictures")
    else:
        figures.update(cross_attention_figures(traced, decoder))
        if has_stack_and_buffer(traced.steps):
            figures["stack_buffer.png"] = stack_buffer_figure(traced.steps, traced.tokens, traced.symbols)
        else:
            notes(f"grammar {type(model.grammar).__name__} has no stack or buffer: no stack/buffer picture")
    for file, figure in figures.items():
        save_png(figure, directory / file)
    structure = draw_structure(model.grammar, traced.tokens, traced.result, directory, notes)
    return [directory / file for file in figures] + ([structure] if structure is not None else [])


def draw_structure(grammar, tokens: list[str], result: Any, directory: Path, notes: Note) -> Path | None:
    """The predicted structure as a picture, or ``None`` (with a note) where there is none to draw."""
    from toolkit.visualization.structures import amr_digraph, logical_form_tree, tree_figure, write_graph
    from toolkit.visualization.svg import Unavailable, dependency_svg
    from transition_systems.amr.system import AmrTransitionSystem
    from tree_codecs.tree import parse_lisp

    kind = type(grammar).__name__
    if hasattr(result, "heads") and hasattr(result, "deprels"):
        try:
            svg = dependency_svg(tokens, result.heads, result.deprels)
        except Unavailable as error:
            notes(str(error))
            return None
        path = directory / "tree.svg"
        path.write_text(svg, encoding="utf-8")
        return path
    if isinstance(grammar, AmrTransitionSystem):
        try:
            dot = amr_digraph(str(result))
        except ImportError:
            notes(f"AMR graphs are drawn with the graphviz package, which is not installed: {install_hint('viz')}")
            return None
        return write_graph(dot, directory / "graph", notes)
    if isinstance(result, str):
        try:
            tree = logical_form_tree(result, getattr(grammar, "parse_text", parse_lisp))
        except ValueError:
            notes(f"the outputs of grammar {kind} here are not trees (e.g. translations): no structure picture")
            return None
        path = directory / "logical_form.png"
        save_png(tree_figure(tree, result if len(result) <= 120 else result[:119] + "…"), path)
        return path
    notes(f"grammar {kind} outputs {type(result).__name__} (e.g. tags): no structure picture")
    return None
