"""Where shards are parsed: in this process, or on Dask's workers (a local cluster, or one at an address).

An engine runs :func:`~toolkit.corpus.worker.parse_shard` for each shard and hands back each
manifest entry as the shard ends; the scheduling, retries of killed workers, and dashboard are the
engine's own. ``docs/corpus_prediction.md`` says why Dask: a shard is a task that writes one file,
which Dask's futures express as they are, on a laptop or a cluster, in 2 MB of pure Python.
More engines register as plugins (``@Engine.register("ray")``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

from toolkit.corpus.shards import Shard
from toolkit.corpus.worker import PredictionSettings, describe, parse_shard
from toolkit.errors import ConfigurationError, ToolkitError
from toolkit.extras import install_hint
from toolkit.registrable import Registrable

Result = dict[str, Any]  # a manifest entry, or {"failed": why}

logger = logging.getLogger(__name__)


class Engine(Registrable):
    """Runs the worker's functions: ``start``, then ``describe`` and ``parse``, then ``close`` (or ``with``)."""

    dashboard_link: str | None = None

    def __init__(self, workers: int | None = None, address: str | None = None, retries: int = 2):
        self.workers, self.address, self.retries = workers, address, retries

    def start(self, settings: PredictionSettings) -> None:
        self.settings = settings

    def describe(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, shards: list[Shard], folder: str, archive_sha256: str) -> Iterator[tuple[Shard, Result]]:  # pragma: no cover - abstract
        """Each of *shards* with its result (:func:`~toolkit.corpus.worker.parse_shard`'s), in the order they end."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exception) -> None:
        self.close()


@Engine.register("local")
class LocalEngine(Engine):
    """Every shard in this process, one after another: resumable corpus prediction with nothing to install."""

    def __init__(self, workers: int | None = None, address: str | None = None, retries: int = 2):
        if workers not in (None, 1) or address:
            raise ConfigurationError("--engine local parses in this process: --workers and --address need --engine dask")
        super().__init__(workers, address, retries)

    def describe(self) -> dict[str, Any]:
        return describe(self.settings)

    def parse(self, shards: list[Shard], folder: str, archive_sha256: str) -> Iterator[tuple[Shard, Result]]:
        """Each shard in turn; one that fails, for whatever reason, fails alone, as a Dask worker's does after its retries."""
        for shard in shards:
            try:
                result = reported(parse_shard, self.settings, shard, folder, archive_sha256)
            except Exception as error:
                logger.debug("%s failed", shard.describe(), exc_info=True)
                result = {"failed": failure(error)}
            yield shard, result


def reported(function, *arguments, **keywords) -> Result:
    """*function*'s result, or ``{"failed": why}`` for an error no retry would mend (bad input, a bad archive)."""
    try:
        return function(*arguments, **keywords)
    except ToolkitError as error:
        return {"failed": str(error)}


@Engine.register("dask")
class DaskEngine(Engine):
    """Dask's distributed scheduler: a ``LocalCluster`` of *workers* processes (default: one per core, or per
    GPU with ``--device cuda``), or the cluster whose scheduler is at *address* (``tcp://host:8786``, or
    ``DASK_SCHEDULER_ADDRESS``).

    Each worker process loads the model once, on its first shard, and parses one shard at a time
    with torch threads = the worker's threads (a local cluster's: the cores shared among its workers).
    A worker that dies mid-shard is restarted by its nanny and the shard is run again elsewhere, up
    to Dask's ``distributed.scheduler.allowed-failures`` times; an ordinary exception is retried
    *retries* times.
    """

    WINDOW = 1024  # shards handed to the scheduler at a time: a corpus of 10^6 files never becomes 10^6 futures at once

    def start(self, settings: PredictionSettings) -> None:
        super().start(settings)
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise ToolkitError(f"--engine dask needs Dask's distributed scheduler: {install_hint('scale')}") from None
        if not logger.isEnabledFor(logging.DEBUG):  # its INFO lines (each worker's start and stop) drown the run's own
            logging.getLogger("distributed").setLevel(logging.WARNING)
        self.gpu = settings.device.startswith("cuda") or (settings.device == "auto" and cuda_devices() > 0)
        self.resources = {"GPU": 1} if self.gpu else None
        self.threads: int | None = None
        self.cluster = None
        address = self.address or dask.config.get("scheduler-address", None)
        if address:
            timeout = dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")  # 30 s unless configured
            check_scheduler(address, timeout)
            try:
                self.client = Client(address, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as error:
                raise ToolkitError(f"cannot reach the Dask scheduler at {address}: {error}") from None
            self.check_cluster(address)
        else:
            workers = self.workers or (cuda_devices() if self.gpu else os.cpu_count() or 1)
            self.threads = None if self.gpu else max(1, (os.cpu_count() or 1) // workers)
            # Dask's statistical profiler walks each worker's stack every 10 ms, and a parser's is deep
            # (4% of its time): off, as workers restarted after a crash inherit
            with dask.config.set({"distributed.worker.profile.enabled": False}):
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":8787" if dashboard_available() else None,
                    silence_logs=logging.ERROR,
                    resources=self.resources,
                )
            self.client = Client(self.cluster)
        self.dashboard_link = self.client.dashboard_link if dashboard_available() else None

    def check_cluster(self, address: str) -> None:
        """Refuse a cluster that could never run a shard: no workers, or no GPU worker for ``--device cuda``."""
        try:
            self.client.wait_for_workers(1, timeout=60)
        except TimeoutError:
            raise ToolkitError(f"the Dask cluster at {address} has no workers (start some: dask worker {address} --nthreads 1)") from None
        if self.gpu and not any(info.get("resources", {}).get("GPU") for info in self.client.scheduler_info()["workers"].values()):
            raise ToolkitError(
                f"--device {self.settings.device}: no worker of the Dask cluster at {address} offers a GPU; start one per GPU with "
                f"CUDA_VISIBLE_DEVICES=N dask worker {address} --nthreads 1 --resources GPU=1"
            )

    def describe(self) -> dict[str, Any]:
        try:
            result = self.client.submit(on_worker, describe, self.settings, self.threads, pure=False, resources=self.resources).result()
        except Exception as error:  # noqa: BLE001 - a worker that died loading the model, whatever killed it
            raise ToolkitError(f"no worker could load {self.settings.archive}: {failure(error)}") from None
        if "failed" in result:
            raise ToolkitError(result["failed"])
        return result

    def parse(self, shards: list[Shard], folder: str, archive_sha256: str) -> Iterator[tuple[Shard, Result]]:
        from distributed import as_completed

        waiting = iter(shards)
        running: dict[str, Shard] = {}
        finished = as_completed()

        def submit() -> None:
            shard = next(waiting, None)
            if shard is not None:
                future = self.client.submit(
                    on_worker,
                    parse_shard,
                    self.settings,
                    self.threads,
                    shard,
                    folder,
                    archive_sha256,
                    pure=False,
                    retries=self.retries,
                    resources=self.resources,
                )
                running[future.key] = shard
                finished.add(future)

        for _ in range(self.WINDOW):
            submit()
        for future in finished:
            shard = running.pop(future.key)
            if future.status == "error":
                yield shard, {"failed": failure(future.exception())}
            else:
                yield shard, future.result()
            future.release()
            submit()

    def close(self) -> None:
        for part in (getattr(self, "client", None), getattr(self, "cluster", None)):
            if part is not None:
                part.close()


def check_scheduler(address: str, timeout: float) -> None:
    """Refuse, within *timeout* seconds, an *address* where no Dask scheduler answers Dask's handshake.

    ``Client`` itself is not bounded: a service that sends a banner (an SSH server) made it try to
    allocate exabytes for a frame of that length, and one that sends nothing (a web server) left it
    waiting for good, whatever its ``timeout``.
    """
    import asyncio

    from distributed.comm import connect
    from distributed.security import Security

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **Security().get_connection_args("client")), timeout)
        await comm.close()

    try:
        asyncio.run(handshake())
    except (TimeoutError, asyncio.TimeoutError, OSError, ValueError) as error:  # ValueError: no address (an unknown scheme)
        why = (
            f"nothing answered as a Dask scheduler within {timeout:g} s"
            if isinstance(error, (TimeoutError, asyncio.TimeoutError)) and not str(error)
            else error
        )
        raise ToolkitError(f"cannot reach the Dask scheduler at {address}: {why} (a scheduler's address is tcp://HOST:8786)") from None
    except Exception as error:  # noqa: BLE001 - whatever a service that is no scheduler makes the protocol raise
        raise ToolkitError(f"the service at {address} is not a Dask scheduler: it answered otherwise than Dask's handshake ({type(error).__name__})") from None


def on_worker(function, settings: PredictionSettings, threads: int | None, *arguments) -> Result:
    """*function* run on a Dask worker, with its device (its own GPU, where a machine has several) and torch threads."""
    from distributed import get_worker

    worker = get_worker()
    slot = worker.name if isinstance(worker.name, int) else 0
    return reported(function, settings, *arguments, device=worker_device(settings.device, slot), threads=threads or worker.state.nthreads)


def worker_device(device: str, slot: int) -> str:
    """The worker numbered *slot*'s device: on a machine of several GPUs, each local worker its own."""
    count = cuda_devices()
    if device in ("cuda", "auto") and count > 1:
        return f"cuda:{slot % count}"
    return device


def cuda_devices() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def dashboard_available() -> bool:
    """Whether Dask can serve its dashboard (it needs bokeh, which the ``scale`` extra installs)."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return False
    return True


def failure(error: BaseException | None) -> str:
    """Why a shard failed, in a line: a worker that kept dying, or the exception that outlasted its retries."""
    name = type(error).__name__
    if name == "KilledWorker":
        return "the workers that parsed it died each time (out of memory? see the workers' logs); rerun to try again"
    return f"{name}: {error}"
