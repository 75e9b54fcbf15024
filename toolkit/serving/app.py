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
                   ``note``, where the picture needs something not installed)
/health    GET     ``{"status": "ok"}``; 503 while shutting down
/info      GET     the archive: predictor, grammar, model, metrics, plugins, versions, batching
=========  ======  ===============================================================================

A request the server cannot read is a 4xx with ``{"error": "..."}``: 400 for a body that is not
JSON or lacks ``input``/``inputs``, 413 for a body or batch over the limits, 422 for a single input
the predictor rejects (empty, too long). In a batch, a rejected input is an ``{"error": ...}``
record at its place, as ``toolkit predict`` writes it. A failure while decoding is a 500 for the
requests in that decode alone (see :mod:`toolkit.serving.batcher`); a full queue is a 503.
"""

import json
import logging
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from toolkit.serving.batcher import Batcher, DecodingFailed, Overloaded
from toolkit.serving.drawing import draw

logger = logging.getLogger(__name__)

MAX_BODY = 1 << 20  # bytes
MAX_INPUTS = 1024  # per request


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
        return JSONResponse({"error": f"internal error: {type(error).__name__}: {error}"}, status_code=500)

    routes = [
        Route("/", page),
        Route("/health", health),
        Route("/info", information),
        Route("/predict", predict, methods=["POST"]),
        Route("/draw", drawing, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error, Exception: server_error})


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object, read at most *limit* bytes far."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(413, f"the body is {int(declared):,} bytes, more than the {limit:,} this server takes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BadRequest(413, f"the body is more than the {limit:,} bytes this server takes")
    try:
        parsed = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadRequest(400, f"the body is not JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise BadRequest(400, f'the body must be a JSON object with "input" or "inputs", not {type(parsed).__name__}')
    return parsed


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
