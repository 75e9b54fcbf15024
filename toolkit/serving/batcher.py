"""Requests that arrive together are decoded together.

Every request puts its inputs on one queue. A single worker takes the oldest request, then every
request queued behind it (waiting up to ``max_wait`` seconds for more, until ``batch_size`` inputs),
and decodes them all in one call on a thread of its own, so the event loop keeps accepting
requests while the model runs. Requests that arrive while a batch decodes form the next batch, so
under load batches grow by themselves and an idle server answers a lone request at once.

A batch that raises is decoded again one request at a time, so that only the request that fails
gets the error. Stopping drains the queue: every accepted request is answered.
"""

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

Decode = Callable[[list[str]], list[dict[str, Any]]]


class Overloaded(Exception):
    """More inputs are waiting than the queue holds; the client should retry later."""


class DecodingFailed(Exception):
    """Decoding this request raised; the message says what, and the server goes on."""


@dataclass
class Job:
    texts: list[str]
    future: asyncio.Future = field(repr=False)


@dataclass
class BatchStats:
    """What the batcher has done, for ``/info`` and the load benchmark."""

    requests: int = 0
    inputs: int = 0
    batches: int = 0
    largest: int = 0


class Batcher:
    def __init__(self, decode: Decode, batch_size: int = 64, max_wait: float = 0.0, max_queue: int = 4096):
        self.decode, self.batch_size, self.max_wait, self.max_queue = decode, batch_size, max_wait, max_queue
        self.stats = BatchStats()
        self.waiting = 0  # inputs queued and not yet taken into a batch
        self.closed = False  # stop() was called: no new requests
        self._stopping = False  # the worker has seen the stop signal
        self._queue: asyncio.Queue[Job | None] | None = None
        self._worker: asyncio.Task | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="decode")

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._worker = asyncio.create_task(self._run(), name="batcher")

    async def stop(self) -> None:
        """Answer everything queued, then stop the worker."""
        if self._queue is None or self._worker is None or self.closed:
            return
        self.closed = True
        self._queue.put_nowait(None)
        await self._worker
        self._executor.shutdown(wait=True)

    async def submit(self, texts: list[str]) -> list[dict[str, Any]]:
        """The decoder's outputs for *texts*, in order, once a batch that holds them is decoded."""
        if self._queue is None:
            raise RuntimeError("the batcher is not running")
        if self.closed:
            raise Overloaded("the server is shutting down")
        if self.waiting + len(texts) > self.max_queue:
            raise Overloaded(f"{self.waiting} inputs are waiting to be decoded (at most {self.max_queue}); retry later")
        job = Job(texts, asyncio.get_running_loop().create_future())
        self.waiting += len(texts)
        self._queue.put_nowait(job)
        return await job.future

    async def _run(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while not self._stopping:
            job = await self._queue.get()
            if job is None:
                break
            jobs, size = [job], len(job.texts)
            deadline = loop.time() + self.max_wait
            while size < self.batch_size and (more := await self._next(deadline)) is not None:
                jobs.append(more)
                size += len(more.texts)
            self.waiting -= size
            await self._decode_all(jobs)
        while not self._queue.empty():  # queued behind the stop signal: answered too
            if (job := self._queue.get_nowait()) is not None:
                self.waiting -= len(job.texts)
                await self._decode_all([job])

    async def _next(self, deadline: float) -> Job | None:
        """The next queued job, waiting until *deadline* for one; ``None`` if none came (or stop was asked)."""
        assert self._queue is not None
        try:
            job = self._queue.get_nowait()
        except asyncio.QueueEmpty:
            timeout = deadline - asyncio.get_running_loop().time()
            if timeout <= 0:
                return None
            try:
                job = await asyncio.wait_for(self._queue.get(), timeout)
            except TimeoutError:
                return None
        if job is None:
            self._stopping = True
        return job

    async def _decode_all(self, jobs: list[Job]) -> None:
        """Decode *jobs* as one batch; if that raises, each alone, so only the failing one is told."""
        jobs = [job for job in jobs if not job.future.done()]  # a client that went away is not decoded for
        if not jobs:
            return
        texts = [text for job in jobs for text in job.texts]
        try:
            outputs = await asyncio.get_running_loop().run_in_executor(self._executor, self.decode, texts)
        except Exception as error:  # a failure in one request must not stop the server
            if len(jobs) == 1:
                logger.exception("decoding a request of %d inputs failed", len(texts))
                _settle(jobs[0], error=DecodingFailed(f"{type(error).__name__}: {error}"))
            else:
                for job in jobs:
                    await self._decode_all([job])
            return
        self.stats.batches += 1
        self.stats.requests += len(jobs)
        self.stats.inputs += len(texts)
        self.stats.largest = max(self.stats.largest, len(texts))
        start = 0
        for job in jobs:
            _settle(job, result=outputs[start : start + len(job.texts)])
            start += len(job.texts)


def _settle(job: Job, result: Any = None, error: BaseException | None = None) -> None:
    if job.future.done():
        return
    if error is not None:
        job.future.set_exception(error)
    else:
        job.future.set_result(result)
