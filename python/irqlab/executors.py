"""Where a sweep's runs execute: in this process, on a local process pool, or on Dask.

Every executor does one thing: apply a picklable function to a list of tasks and hand back
``(task index, result)`` pairs as they complete, in whatever order. Results never depend on the
executor or the number of workers: each task carries everything that determines its outcome
(resolved parameters, seed, replication), and the sweep orders rows by point and replication.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from irqlab.errors import ConfigError, IrqlabError

KINDS = ("process", "inline", "dask")


def default_workers() -> int:
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Executor:
    """Runs ``fn`` over tasks; yields ``(index, result)`` as each completes."""

    def imap_unordered(
        self, fn: Callable[[Any], Any], tasks: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        """Releases workers (a no-op for executors that hold none)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InlineExecutor(Executor):
    """Runs tasks one after the other in this process (debugging, tiny sweeps)."""

    def imap_unordered(
        self, fn: Callable[[Any], Any], tasks: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        for i, task in enumerate(tasks):
            yield i, fn(task)


class ProcessExecutor(Executor):
    """A local pool of worker processes, one task per process at a time.

    At most ``2 × workers`` tasks are in flight, so an interrupted sweep loses little work and
    the pool never holds a huge queue of pickled tasks.
    """

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()
        # forkserver: workers start from a clean interpreter (no inherited threads or locks);
        # spawn where forkserver does not exist.
        method = "forkserver" if sys.platform.startswith("linux") else "spawn"
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context(method)
        )

    def imap_unordered(
        self, fn: Callable[[Any], Any], tasks: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        window = 2 * self.workers
        pending: dict[Any, int] = {}
        next_task = 0
        try:
            while next_task < len(tasks) or pending:
                while next_task < len(tasks) and len(pending) < window:
                    pending[self._pool.submit(fn, tasks[next_task])] = next_task
                    next_task += 1
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield pending.pop(fut), fut.result()
        finally:
            for fut in pending:
                fut.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Dask distributed: a LocalCluster of ``workers`` single-threaded processes, or an
    existing cluster at ``scheduler`` (e.g. one started by dask-jobqueue on SLURM or PBS).

    The workers need irqlab installed in the same version as the client.
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise IrqlabError("the dask executor needs Dask: pip install 'irqlab[dask]'") from None
        self._cluster = None
        if scheduler:
            try:
                self._client = Client(scheduler, timeout="20s")
            except OSError as e:
                raise IrqlabError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        else:
            self._cluster = LocalCluster(
                n_workers=workers or default_workers(),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self._client = Client(self._cluster)

    def imap_unordered(
        self, fn: Callable[[Any], Any], tasks: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        if not tasks:
            return
        futures = self._client.map(fn, list(tasks), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut, result in as_completed(futures, with_results=True):
                yield index[fut.key], result
        finally:
            self._client.cancel(futures)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def check(kind: str, workers: int | None) -> None:
    """Raises :class:`ConfigError` for an unknown executor or a worker count below one."""
    if kind not in KINDS:
        raise ConfigError(f"executor = {kind!r}: must be one of {', '.join(KINDS)}", None)
    if workers is not None and workers < 1:
        raise ConfigError(f"workers = {workers}: must be at least 1", None)


def make_executor(
    kind: str = "process", workers: int | None = None, scheduler: str | None = None
) -> Executor:
    """An executor by name: ``process`` (default), ``inline`` or ``dask``."""
    check(kind, workers)
    if kind == "dask" or scheduler:  # a scheduler address means Dask
        return DaskExecutor(workers, scheduler)
    if kind == "inline":
        return InlineExecutor()
    return ProcessExecutor(workers)
