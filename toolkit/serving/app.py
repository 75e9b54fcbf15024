"""The HTTP API of ``toolkit serve``: a Starlette app around one predictor.

=========  ======  ===============================================================================
path       method  what it does
=========  ======  ===============================================================================
``/``      GET     a page that parses a sentence and draws the result
/predict   POST    ``{"input": X}`` -> the predictor's JSON object for X (what ``toolkit predict``
                   writes with ``--predictor``'s JSON interface); ``{"inputs": [X, ...]}`` ->
                   ``{"outputs": [...]}``, one per input, in order. X is a string, or an object
                   such as ``{"tokens": [...]}`` that the predictor reads.
/draw      POST    ``{"input": X}`` -> ``{"output": ..., "svg": ...}`` (``svg`` is null, with a
                   ``note``, where the picture needs something not installed); for a semantic parser
                   whose executor ran the form, also ``"answer": {"ok", "label", "text"}``, the line
                   the page shows under the tree ("Answer: austin", or "No answer: " and why)
/health    GET     ``{"status": "ok"}``; 503 while shutting down
/info      GET     the archive: predictor, grammar, model, metrics, plugins, versions, batching
=========  ======  ===============================================================================

A request the server cannot read is a 4xx with ``{"error": "..."}`` (one line, never a traceback):
400 for a body that is not a JSON object (not UTF-8, not JSON, ``NaN``, nested more than
``MAX_DEPTH`` deep, a lone surrogate, an integer Python will not read) or lacks ``input``/``inputs``,
413 for a body or batch over the limits, 422 for a single input the predictor rejects (empty, too
long). In a batch, a rejected input is an ``{"error": ...}`` record at its place, as ``toolkit
predict`` writes it. A failure while decoding is a 500 for the requests in that decode alone (see
:mod:`toolkit.serving.batcher`); a full queue is a 503. Under ``toolkit serve``,
:mod:`toolkit.serving.guard` adds 408 (a request that does not arrive in time), 503 (too many
connections; stopping) and reads each body before the app does.
"""

import json
import logging
import re
import sys
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from toolkit.serving.batcher import Batcher, DecodingFailed, Overloaded
from toolkit.serving.drawing import draw

logger = logging.getLogger(__name__)

MAX_BODY = 1 << 20  # bytes
MAX_INPUTS = 1024  # per request
MAX_DEPTH = 32  # arrays and objects within each other; an input needs 2 ({"input": {"tokens": [...]}})
SURROGATE = re.compile(r"[\ud800-\udfff]")


class BadRequest(HTTPException):
    """An HTTP error whose detail is the message the client reads."""


def create_app(predictor, batcher: Batcher, info: dict[str, Any], max_body: int = MAX_BODY, max_inputs: int = MAX_INPUTS) -> Starlette:
    """The app: *batcher* decodes (it is started and stopped with the app), *info* is what ``/info`` adds."""

    @asynccontextmanager
    async def lifespan(app):
        await batcher.start()
        yield
        await batcher.stop()  # after the server has stopped accepting: every queued request is answered

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(resources.files("toolkit.serving").joinpath("page.html").read_text(encoding="utf-8"))

    async def health(request: Request) -> JSONResponse:
        if batcher.closed:
            return JSONResponse({"status": "shutting down"}, status_code=503)
        return JSONResponse({"status": "ok", "waiting": batcher.waiting})

    async def information(request: Request) -> JSONResponse:
        stats = vars(batcher.stats)
        return JSONResponse({**info, "batching": {"batch_size": batcher.batch_size, "max_wait_ms": batcher.max_wait * 1000, **stats}})

    async def predict(request: Request) -> JSONResponse:
        body = await read_json(request, max_body)
        if "inputs" in body:
            texts = inputs(body["inputs"], max_inputs)
            return JSONResponse({"outputs": await decode(texts)})
        output = await decode_one(body)
        return JSONResponse(output)

    async def drawing(request: Request) -> JSONResponse:
        output = await decode_one(await read_json(request, max_body))
        return JSONResponse({"output": output, **draw(predictor, output)})

    async def decode_one(body: dict[str, Any]) -> dict[str, Any]:
        if "input" not in body:
            raise BadRequest(400, 'the body needs "input" (one input) or "inputs" (a list of them)')
        [output] = await decode([text_of(body["input"], "input")])
        if "error" in output:
            raise BadRequest(422, output["error"])
        return output

    async def decode(texts: list[str]) -> list[dict[str, Any]]:
        try:
            return await batcher.submit(texts)
        except Overloaded as error:
            raise HTTPException(503, str(error), headers={"Retry-After": "1"}) from None
        except DecodingFailed as error:
            raise HTTPException(500, f"decoding failed: {error}") from None

    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse({"error": error.detail}, status_code=error.status_code, headers=error.headers)

    async def server_error(request: Request, error: Exception) -> JSONResponse:
        logger.exception("%s %s failed", request.method, request.url.path)
        return JSONResponse({"error": f"internal error: {type(error).__name__}: {one_line(error)}"}, status_code=500)

    routes = [
        Route("/", page),
        Route("/health", health),
        Route("/info", information),
        Route("/predict", predict, methods=["POST"]),
        Route("/draw", drawing, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error, Exception: server_error})


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object, read at most *limit* bytes far; any body that is not one is a 400 that says why."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"the body is {int(declared):,} bytes, more than the {limit:,} this server takes")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise BadRequest(413, f"the body is more than the {limit:,} bytes this server takes")
    except ClientDisconnect:  # nobody to answer (under `toolkit serve` the guard reads bodies, and logs this)
        raise BadRequest(400, "the client left before its body had come") from None
    parsed = parse_json(bytes(body), request.headers.get("content-type", ""))
    if not isinstance(parsed, dict):
        raise BadRequest(400, f'the body must be a JSON object with "input" or "inputs", not {type(parsed).__name__}')
    return parsed


def parse_json(body: bytes, content_type: str = "") -> Any:
    """*body* as JSON: UTF-8 text (or UTF-16/32, as ``json.loads`` reads bytes; a leading BOM is skipped),
    standard JSON (no ``NaN``), nested at most ``MAX_DEPTH`` deep, every string valid Unicode.

    Whatever the body holds, the outcome is a value or a :class:`BadRequest` (400) with one line.
    """
    hint = ""
    if content_type and "json" not in content_type.lower():
        hint = f' (it was sent as {content_type.split(";")[0].strip()[:60]}; send a JSON object such as {{"input": "..."}})'
    encoding = json.detect_encoding(body)  # UTF-8 unless the first bytes hold the NULs of UTF-16 or UTF-32
    try:
        text = body.decode(encoding)  # strict: an encoded lone surrogate is an error too
    except UnicodeDecodeError as error:
        name = "UTF-8" if encoding.startswith("utf-8") else f"{encoding.upper()} (as its first bytes suggest) or UTF-8"
        raise BadRequest(400, f"the body is not JSON: it is not {name} text ({error.reason} at byte {error.start:,}){hint}") from None
    try:
        value = json.loads(text.removeprefix("\ufeff"), parse_constant=not_json)
    except RecursionError:
        raise BadRequest(400, too_deep()) from None
    except json.JSONDecodeError as error:
        raise BadRequest(400, f"the body is not JSON: {error}{hint}") from None
    except ValueError as error:  # NaN, or an integer longer than Python converts (4,300 digits)
        if "digits" in str(error):
            raise BadRequest(400, f"the body holds an integer of more than {sys.get_int_max_str_digits():,} digits") from None
        raise BadRequest(400, f"the body cannot be read as JSON: {one_line(error)}") from None
    check_values(value)
    return value


def not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def too_deep() -> str:
    return f"the body nests arrays and objects more than {MAX_DEPTH} deep"


def check_values(value: Any) -> None:
    r"""A 400 for JSON nested more than ``MAX_DEPTH`` deep or holding a lone surrogate (``"\ud800"``),
    which no encoder can write back and no tokenizer expects. Walked without recursion.
    """
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and SURROGATE.search(item):
                escape = f"\\u{ord(SURROGATE.search(item).group()):04x}"
                raise BadRequest(400, f"the body holds a lone surrogate ({escape}), which is not a character: JSON strings must be valid Unicode")
        elif isinstance(item, (dict, list)):
            if depth == MAX_DEPTH:
                raise BadRequest(400, too_deep())
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def one_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:300]


def inputs(value: Any, most: int) -> list[str]:
    if not isinstance(value, list):
        raise BadRequest(400, f'"inputs" must be a list, not {type(value).__name__}')
    if len(value) > most:
        raise BadRequest(413, f'"inputs" holds {len(value):,} inputs, more than the {most:,} one request may send')
    return [text_of(item, f"inputs[{number}]") for number, item in enumerate(value)]


def text_of(value: Any, where: str) -> str:
    """One input as the line a predictor reads: a string as it is, an object as its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    raise BadRequest(400, f"{where} must be a string or a JSON object, not {type(value).__name__}")
