"""What ``/draw`` returns beside a prediction: its picture, chosen by what the prediction holds, and
the answer a semantic parser's executor gave, as a line the page shows under the picture.
"""

from collections.abc import Callable
from typing import Any

from toolkit.execution.executor import FAILURE_WORDS
from toolkit.visualization.svg import Unavailable, amr_svg, dependency_svg, tags_svg, tree_svg
from tree_codecs.prolog import GROUP, parse_prolog
from tree_codecs.tree import Tree, parse_lisp

QUOTE = "'"
MOST_ANSWERS = 100  # shown on the answer line; the JSON holds them all
FAILURES = FAILURE_WORDS  # what an executor's failure codes mean, for an output that gives the bare code (see toolkit.execution.Denotation)


def draw(predictor, output: dict[str, Any]) -> dict[str, Any]:
    """``{"kind", "svg"}`` for a predictor's JSON *output*; ``svg`` is ``None`` with a ``note`` where none can be drawn.

    Where *output* holds an executor's ``answer`` or ``answer_error``, ``"answer"`` (see :func:`answer_line`) is added.
    """
    answer = answer_line(output)
    return {**picture(predictor, output), **({"answer": answer} if answer is not None else {})}


def picture(predictor, output: dict[str, Any]) -> dict[str, Any]:
    try:
        if {"tokens", "heads", "deprels"} <= output.keys():
            return {"kind": "dependency", "svg": dependency_svg(output["tokens"], output["heads"], output["deprels"])}
        if "graph" in output:
            return {"kind": "amr", "svg": amr_svg(output["graph"])}
        if {"tokens", "tags"} <= output.keys():
            return {"kind": "tags", "svg": tags_svg(output["tokens"], output["tags"])}
        if "logical_form" in output:
            return {"kind": "tree", "svg": tree_svg(logical_form_tree(output["logical_form"], own_parser(predictor)))}
    except Unavailable as error:
        return {"kind": None, "svg": None, "note": str(error)}
    except ValueError as error:  # an output that is not a tree (a translation) or not a graph
        return {"kind": None, "svg": None, "note": f"this output cannot be drawn: {error}"}
    return {"kind": None, "svg": None, "note": f"no picture for the outputs of the {type(predictor).__name__}"}


def own_parser(predictor) -> Callable[[str], Tree] | None:
    """The grammar's reader of its logical forms (a tree codec's ``parse_text``), looked for through wrapping grammars
    (``anonymized`` keeps the grammar it wraps as ``.grammar``); ``None`` where there is none.
    """
    grammar = getattr(getattr(predictor, "model", None), "grammar", None)
    for _ in range(8):
        if grammar is None:
            return None
        parse = getattr(grammar, "parse_text", None)
        if callable(parse):
            return parse
        grammar = getattr(grammar, "grammar", None)
    return None


def logical_form_tree(text: str, parse: Callable[[str], Tree] | None = None) -> Tree:
    """The tree of a logical form: read by *parse* (the grammar's own reader) where given, else as a Prolog term
    (``_answer ( A , _capital ( A ) )``) or an s-expression (``( lambda $0 e ( state:t $0 ) )``), whichever reads it.

    No s-expression of more than one token reads as a Prolog term (two atoms never stand side by side in
    one), so the order is safe; text without a bracket (a translation, even one with commas) is no Prolog
    term. ``ValueError`` (saying why, in the notation the text looks like) where nothing reads it.
    """
    tokens = text.split()
    if parse is not None:
        readers = [prolog_tree if parse is parse_prolog else parse]
    elif "(" in tokens:
        readers = [prolog_tree, parse_lisp]
    else:
        readers = [parse_lisp]
    errors = []
    for reader in readers:
        try:
            return reader(text)
        except ValueError as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]
    prolog_like = tokens[0] != "(" or "," in tokens
    raise ValueError(f"it is not a Prolog term ({errors[0]})" if prolog_like else f"it is not an s-expression ({errors[1]})")


def prolog_tree(text: str) -> Tree:
    """A Prolog term as a tree to look at: a quoted name of several words (``' new york '``, as GEO writes them) is
    one leaf (``'new york'``), and brackets written for grouping alone (``( a , b )``) are no node of their own.
    """
    tokens, names = [], []
    words = text.split()
    mark = "\x00"
    while mark in text:  # a placeholder prefix the text does not hold
        mark += "\x00"
    start = 0
    while start < len(words):
        if words[start] == QUOTE and QUOTE in words[start + 1 :]:
            end = words.index(QUOTE, start + 1)
            tokens.append(f"{mark}{len(names)}")  # no whitespace: parse_prolog reads it as one atom
            names.append(QUOTE + " ".join(words[start + 1 : end]) + QUOTE)
            start = end + 1
        else:
            tokens.append(words[start])
            start += 1

    def shown(tree: Tree) -> Tree:
        if tree.label == GROUP and len(tree.children) == 1:
            return shown(tree.children[0])
        label = tree.label
        number = label.removeprefix(mark)
        if number != label and number.isdigit() and int(number) < len(names):
            label = names[int(number)]
        return Tree(label, tuple(shown(child) for child in tree.children))

    return shown(parse_prolog(" ".join(tokens)))


def answer_line(output: dict[str, Any]) -> dict[str, Any] | None:
    """What the page shows under the picture of a semantic parse that was executed: ``{"ok", "label", "text"}``,
    e.g. ``{"ok": true, "label": "Answer", "text": "austin", "count": 1}`` (answers joined by commas, at most
    ``MOST_ANSWERS`` of them), ``{"ok": false, "label": "No answer", "text": why}`` where the query failed, or
    ``{"ok": false, "abstained": true, "label": "Cannot answer", "text": why}`` where the parser abstained
    (the output's ``abstained``: no reading of the question passed), which the page shows unlike either.

    ``None`` for an output without ``answer`` or ``answer_error`` (a parser without an executor). The text is
    plain text; the page writes it as text, never as markup.
    """
    if "answer" in output:
        answers = output["answer"]
        if not isinstance(answers, list):
            answers = [answers]
        if not answers:
            return {"ok": True, "label": "Answer", "text": "none (the query ran and found nothing)", "count": 0}
        shown = ", ".join(str(answer) for answer in answers[:MOST_ANSWERS])
        if len(answers) > MOST_ANSWERS:
            shown += f" … and {len(answers) - MOST_ANSWERS:,} more (see the JSON)"
        return {"ok": True, "label": "Answer", "text": shown, "count": len(answers)}
    if "answer_error" in output and output.get("abstained"):
        return {"ok": False, "abstained": True, "label": "Cannot answer", "text": str(output["answer_error"]).strip() or "the parser gave no reason"}
    if "answer_error" in output:
        failure = str(output["answer_error"]).strip() or "the executor gave no reason"
        code, _, detail = failure.partition(":")  # "error" or "timeout", maybe with the executor's detail after a colon
        if code.strip() in FAILURES:
            failure = FAILURES[code.strip()] + (f": {detail.strip()}" if detail.strip() else "")
        return {"ok": False, "label": "No answer", "text": failure}
    return None
