"""The picture ``/draw`` returns beside a prediction, chosen by what the prediction holds."""

from typing import Any

from toolkit.visualization.svg import Unavailable, amr_svg, dependency_svg, tags_svg, tree_svg
from tree_codecs.tree import parse_lisp


def draw(predictor, output: dict[str, Any]) -> dict[str, Any]:
    """``{"kind", "svg"}`` for a predictor's JSON *output*; ``svg`` is ``None`` with a ``note`` where none can be drawn."""
    try:
        if {"tokens", "heads", "deprels"} <= output.keys():
            return {"kind": "dependency", "svg": dependency_svg(output["tokens"], output["heads"], output["deprels"])}
        if "graph" in output:
            return {"kind": "amr", "svg": amr_svg(output["graph"])}
        if {"tokens", "tags"} <= output.keys():
            return {"kind": "tags", "svg": tags_svg(output["tokens"], output["tags"])}
        if "logical_form" in output:
            parse = getattr(predictor.model.grammar, "parse_text", parse_lisp)
            return {"kind": "tree", "svg": tree_svg(parse(output["logical_form"]))}
    except Unavailable as error:
        return {"kind": None, "svg": None, "note": str(error)}
    except ValueError as error:  # an output that is not a tree (a translation) or not a graph
        return {"kind": None, "svg": None, "note": f"this output cannot be drawn: {error}"}
    return {"kind": None, "svg": None, "note": f"no picture for the outputs of the {type(predictor).__name__}"}
