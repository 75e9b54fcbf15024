"""Load an archive and serve it under uvicorn until SIGTERM or Ctrl-C (see :mod:`toolkit.serving.app`)."""

import logging
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolkit.errors import ToolkitError
from toolkit.extras import install_hint
from toolkit.limits import MAX_TIMEOUT, MIN_TIMEOUT

logger = logging.getLogger(__name__)


def describe(archive: str | Path, predictor, name: str, ensemble: Sequence[str | Path] = ()) -> dict[str, Any]:
    """What ``/info`` says of the model: where it came from, what it parses, how well it scored (*archive*'s metrics; *ensemble*: the other members)."""
    from toolkit.archive import toolkit_version

    loaded, config = predictor.archive, predictor.archive.config
    search = predictor.search or predictor.model.search
    return {
        "archive": str(archive),
        "ensemble": [str(path) for path in ensemble],
        "predictor": name,
        "grammar": config.get("grammar", {}).get("type", type(predictor.model.grammar).__name__),
        "model": config.get("model", {}).get("type"),
        "search": {"type": type(search).__name__, "beam_size": getattr(search, "beam_size", 1)},
        "metrics": loaded.training_metrics,
        "plugins": loaded.plugins,
        "device": str(next(predictor.model.parameters()).device),
        "version": toolkit_version(),
    }


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to *host*:*port*, made before the archive loads, so that a port in use or an
    unknown host is one error line at once, not a uvicorn log line after the model has loaded.
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as error:
        raise ToolkitError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def require_serve_extra() -> None:
    """Fail at once, before the archive loads, where the ``serve`` extra is not installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise ToolkitError(f"toolkit serve needs the serve extra ({error.name} is not installed): {install_hint('serve')}") from None


CLIENT_TIMEOUT = 10.0  # seconds a client has to send a request's head, then its body; and the most a response waits for it to read
GRACEFUL_TIMEOUT = 20.0  # seconds requests already read may take to be answered once the server is told to stop
MAX_CONNECTIONS = 256  # open at once; the next ones are answered 503 and closed


def serve(
    predictor,
    name: str,
    archive: str | Path,
    sock: socket.socket,
    batch_size: int,
    max_wait: float,
    ensemble: Sequence[str | Path] = (),
    *,
    client_timeout: float = CLIENT_TIMEOUT,
    graceful_timeout: float = GRACEFUL_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> None:
    """Serve *predictor* (registered as *name*, loaded from *archive* and the *ensemble* archives) on the bound socket *sock* until stopped.

    A client has *client_timeout* seconds to send a request's head (from when it connects, or from
    the previous response on a kept-alive connection) and again to send its body: a 408 and the
    connection closed otherwise; one that stops reading its response that long is cut off. At most
    *max_connections* are open at once. On SIGTERM or Ctrl-C the server stops accepting, closes idle
    connections and those still sending a request (a 503), lets requests it has read whole be
    answered for up to *graceful_timeout* seconds, then cancels the rest (a 503 each) and exits.
    A second Ctrl-C exits at once. See :mod:`toolkit.serving.guard`.
    """
    require_serve_extra()
    import uvicorn

    from toolkit.serving.app import MAX_BODY, create_app
    from toolkit.serving.batcher import Batcher
    from toolkit.serving.guard import Guard, Server, protocol_class

    for option, value in (("client_timeout", client_timeout), ("graceful_timeout", graceful_timeout)):
        if not MIN_TIMEOUT <= value <= MAX_TIMEOUT:
            raise ToolkitError(f"{option} must be from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:,} seconds, not {value}")
    if not max_connections > 0:
        raise ToolkitError(f"max_connections must be more than 0, not {max_connections}")
    batcher = Batcher(predictor.predict_batch, batch_size=batch_size, max_wait=max_wait)
    app = create_app(predictor, batcher, describe(archive, predictor, name, ensemble), max_body=MAX_BODY)
    guard = Guard(app, max_body=MAX_BODY, client_timeout=client_timeout)
    host, port = sock.getsockname()[:2]
    logger.info("serving %s on http://%s:%d/ (batches of up to %d inputs)", archive, f"[{host}]" if ":" in host else host, port, batch_size)
    config = uvicorn.Config(
        guard,
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        http=protocol_class(client_timeout, max_connections),
        timeout_graceful_shutdown=graceful_timeout,  # type: ignore[arg-type] - uvicorn takes any number of seconds
    )
    # SIGTERM: stop accepting, answer what was read whole (within graceful_timeout), then the lifespan drains the batcher
    Server(config, guard).run(sockets=[sock])
