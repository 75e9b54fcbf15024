"""Load an archive and serve it under uvicorn until SIGTERM or Ctrl-C (see :mod:`toolkit.serving.app`)."""

import logging
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolkit.errors import ToolkitError

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
        raise ToolkitError(f'toolkit serve needs the serve extra ({error.name} is not installed): pip install "parsing-toolkit[serve]"') from None


def serve(predictor, name: str, archive: str | Path, sock: socket.socket, batch_size: int, max_wait: float, ensemble: Sequence[str | Path] = ()) -> None:
    """Serve *predictor* (registered as *name*, loaded from *archive* and the *ensemble* archives) on the bound socket *sock* until stopped."""
    require_serve_extra()
    import uvicorn

    from toolkit.serving.app import create_app
    from toolkit.serving.batcher import Batcher

    batcher = Batcher(predictor.predict_batch, batch_size=batch_size, max_wait=max_wait)
    app = create_app(predictor, batcher, describe(archive, predictor, name, ensemble))
    host, port = sock.getsockname()[:2]
    logger.info("serving %s on http://%s:%d/ (batches of up to %d inputs)", archive, f"[{host}]" if ":" in host else host, port, batch_size)
    config = uvicorn.Config(app, host=host, port=port, log_level="info", timeout_graceful_shutdown=None, access_log=False)
    uvicorn.Server(config).run(sockets=[sock])  # SIGTERM: stop accepting, finish every accepted request (no time limit), then the lifespan drains the batcher
