"""Load an archive and serve it under uvicorn until SIGTERM or Ctrl-C (see :mod:`toolkit.serving.app`)."""

import logging
from pathlib import Path
from typing import Any

from toolkit.errors import ToolkitError

logger = logging.getLogger(__name__)


def describe(archive: str | Path, predictor, name: str) -> dict[str, Any]:
    """What ``/info`` says of the model: where it came from, what it parses, how well it scored."""
    from toolkit.archive import toolkit_version

    loaded, config = predictor.archive, predictor.archive.config
    search = predictor.search or predictor.model.search
    return {
        "archive": str(archive),
        "predictor": name,
        "grammar": config.get("grammar", {}).get("type", type(predictor.model.grammar).__name__),
        "model": config.get("model", {}).get("type"),
        "search": {"type": type(search).__name__, "beam_size": getattr(search, "beam_size", 1)},
        "metrics": loaded.training_metrics,
        "plugins": loaded.plugins,
        "device": str(next(predictor.model.parameters()).device),
        "version": toolkit_version(),
    }


def serve(predictor, name: str, archive: str | Path, host: str, port: int, batch_size: int, max_wait: float) -> None:
    """Serve *predictor* (registered as *name*, loaded from *archive*) on *host*:*port* until stopped."""
    try:
        import uvicorn

        from toolkit.serving.app import create_app
    except ImportError as error:
        raise ToolkitError(f'toolkit serve needs the serve extra ({error.name} is not installed): pip install "parsing-toolkit[serve]"') from None
    from toolkit.serving.batcher import Batcher

    batcher = Batcher(predictor.predict_batch, batch_size=batch_size, max_wait=max_wait)
    app = create_app(predictor, batcher, describe(archive, predictor, name))
    logger.info("serving %s on http://%s:%d/ (batches of up to %d inputs)", archive, host, port, batch_size)
    config = uvicorn.Config(app, host=host, port=port, log_level="info", timeout_graceful_shutdown=None, access_log=False)
    uvicorn.Server(config).run()  # SIGTERM: stop accepting, finish every accepted request (no time limit), then the lifespan drains the batcher
