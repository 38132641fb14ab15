"""Where a sweep's runs execute: in this process, on a local process pool, or on Dask.

Every executor does one thing: apply a picklable function to tasks and hand back
``(task, result)`` pairs as they complete, in whatever order. Tasks are taken from their
iterable only as workers free up, so a sweep never holds more than a window of them. Results
never depend on the executor or the number of workers: each task carries everything that
determines its outcome (resolved parameters, seed, replication), and the sweep orders rows by
point and replication.

Workers never outlive the sweep. A pool's workers hold the read end of a pipe whose only
write end is the sweep's: when the sweep's process ends, however it ends (SIGKILL included),
every worker sees end-of-file and exits at once, whatever the start method. They also poll the
sweep's pid, and on Linux ask the kernel to kill them with their parent (PR_SET_PDEATHSIG).
Workers ignore Ctrl-C: the sweep stops them itself, keeping every finished run.

Workers never run the caller's script. multiprocessing starts a forkserver or spawned worker
by running the parent's ``__main__`` again (as ``__mp_main__``), which is why Python asks for an
``if __name__ == "__main__":`` guard around code that starts processes: a plain script that
calls :func:`irqlab.sweep` at its top level would start a sweep inside every worker. A worker
needs only irqlab, and every task is irqlab's own function and plain data, so while it starts
workers a pool names the main module ``__main__`` (:func:`_workers_skip_main`), a name
multiprocessing's children never import: a user's script works as written, guard or no guard.
(A function defined in the main module itself is sent as a reference to it: a pool given one
lets its workers import the main module, as multiprocessing does.)
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.machinery
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from irqlab import __version__
from irqlab.errors import ConfigError, IrqlabError

KINDS = ("process", "inline", "dask")
T = TypeVar("T")

#: How often a worker checks that the sweep's process still exists, seconds.
PARENT_POLL_S = 1.0


class WorkersLost(IrqlabError):
    """The workers (a process, the Dask cluster) went away: the sweep cannot go on, but every
    finished run is in the journal and a rerun resumes."""


def default_workers() -> int:
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Executor:
    """Runs ``fn`` over tasks; yields ``(task, result)`` as each completes."""

    def imap_unordered(self, fn: Callable[[T], Any], tasks: Iterable[T]) -> Iterator[tuple[T, Any]]:
        raise NotImplementedError

    def close(self, abort: bool = False) -> None:
        """Releases workers (a no-op for executors that hold none). ``abort`` stops the runs
        in progress rather than waiting for them."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(abort=exc_type is not None)


class InlineExecutor(Executor):
    """Runs tasks one after the other in this process (debugging, tiny sweeps)."""

    def imap_unordered(self, fn: Callable[[T], Any], tasks: Iterable[T]) -> Iterator[tuple[T, Any]]:
        for task in tasks:
            yield task, fn(task)


def _die_with_parent() -> None:
    """Linux: the kernel sends SIGKILL to this process when its parent ends."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: ours has gone and the pid was reused
        return False
    return True


def _watch_parent(lifeline: Any, parent: int, inherited: int) -> None:
    """A pool worker's initializer: ignore Ctrl-C, and exit as soon as the sweep's process
    ``parent`` is gone (``lifeline`` reaches end-of-file, or ``parent`` no longer exists).
    ``inherited`` is the lifeline's write end if this worker was forked with it (else -1):
    closed here, so that only the sweep holds it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if inherited >= 0:
        with contextlib.suppress(OSError):
            os.close(inherited)

    def watch() -> None:
        while True:
            try:
                if lifeline.poll(PARENT_POLL_S):
                    lifeline.recv_bytes()  # nothing is ever sent: this raises at end-of-file
            except (EOFError, OSError):
                break
            if not _alive(parent):
                break
        os._exit(1)

    threading.Thread(target=watch, name="irqlab-watch-parent", daemon=True).start()


_skip_main_lock = threading.Lock()
_skip_main_depth = 0
_skip_main_saved: Any = None


@contextlib.contextmanager
def _workers_skip_main() -> Iterator[None]:
    """Processes started meanwhile do not run this process's main module.

    A child started by spawn or a forkserver prepares itself from the parent's main module: by
    its module name (``python -m NAME``: runs NAME) or else by its file (``python FILE``: runs
    FILE), and runs nothing when the name is ``__main__`` itself. The main module's spec says
    ``__main__`` meanwhile, and is put back when the last of those that overlap ends.
    """
    global _skip_main_depth, _skip_main_saved
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _skip_main_lock:
        if _skip_main_depth == 0:
            _skip_main_saved = getattr(main, "__spec__", None)
            main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
        _skip_main_depth += 1
    try:
        yield
    finally:
        with _skip_main_lock:
            _skip_main_depth -= 1
            if _skip_main_depth == 0:
                main.__spec__ = _skip_main_saved
                _skip_main_saved = None


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """Ignores SIGINT meanwhile (in the main thread; elsewhere Python cannot)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class ProcessExecutor(Executor):
    """A local pool of worker processes, one task per process at a time.

    At most ``2 × workers`` tasks are in flight, so an interrupted sweep loses little work and
    the pool never holds a huge queue of pickled tasks.
    """

    def __init__(self, workers: int | None = None, method: str | None = None):
        """``method`` is the start method of the workers; by default forkserver (workers start
        from a clean interpreter, with no inherited threads or locks), or spawn where
        forkserver does not exist."""
        self.workers = workers or default_workers()
        if method is None:
            method = "forkserver" if sys.platform.startswith("linux") else "spawn"
        context = multiprocessing.get_context(method)
        # The workers get the read end; the write end stays here and is never written (a
        # forked worker inherits it, and closes it first thing).
        self._lifeline_r, self._lifeline_w = context.Pipe(duplex=False)
        inherited = self._lifeline_w.fileno() if method == "fork" else -1
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=_watch_parent,
            initargs=(self._lifeline_r, os.getpid(), inherited),
        )

    def imap_unordered(self, fn: Callable[[T], Any], tasks: Iterable[T]) -> Iterator[tuple[T, Any]]:
        window = 2 * self.workers
        source = iter(tasks)
        # Work defined in the main module needs it in the workers (and the caller's guard).
        from_main = getattr(fn, "__module__", None) == "__main__"
        pending: dict[Any, T] = {}
        try:
            while True:
                for task in itertools.islice(source, window - len(pending)):
                    # a submit starts a worker when none is idle (the forkserver too, first)
                    with contextlib.nullcontext() if from_main else _workers_skip_main():
                        pending[self._pool.submit(fn, task)] = task
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = pending.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        raise WorkersLost(
                            "a worker process died (killed, or out of memory?)"
                        ) from None
                    yield task, result
        finally:
            for fut in pending:
                fut.cancel()

    def close(self, abort: bool = False) -> None:
        if abort:
            # The workers exit at once when the lifeline closes: runs in progress are dropped
            # (they were not journaled), nothing waits for them.
            self._lifeline_w.close()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._lifeline_w.close()
        self._lifeline_r.close()


def _silence(prefix: str) -> dict[str, int]:
    """Silences the loggers named ``prefix`` and ``prefix.*`` (but critical messages);
    returns their levels, for :func:`_restore`."""
    names = [prefix, *(n for n in logging.root.manager.loggerDict if n.startswith(prefix + "."))]
    levels = {}
    for name in names:
        log = logging.getLogger(name)
        levels[name] = log.level
        log.setLevel(logging.CRITICAL)
    return levels


def _restore(levels: dict[str, int]) -> None:
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def _quiet_workers_plugin() -> Any:
    """A Dask worker plugin that silences each worker's ``distributed`` loggers (but critical
    messages), as :func:`_silence` does here: for a local cluster, whose workers print to this
    terminal."""
    from distributed import WorkerPlugin

    class QuietWorker(WorkerPlugin):
        name = "irqlab-quiet-logs"

        def setup(self, worker: Any) -> None:
            _silence("distributed")

    return QuietWorker()


def _connect(scheduler: str) -> Any:
    """A Dask client of the scheduler at ``scheduler``; one line if there is none there."""
    from distributed import Client

    try:
        return Client(scheduler, timeout="20s")
    except (ValueError, TypeError) as e:
        raise IrqlabError(
            f"--scheduler {scheduler}: not an address ({e}); give it as tcp://HOST:PORT"
        ) from None
    except OSError as e:  # TimeoutError included
        raise IrqlabError(
            f"cannot reach the Dask scheduler at {scheduler} ({e}); is it running, "
            "and reachable from here?"
        ) from None


class DaskExecutor(Executor):
    """Dask distributed: a LocalCluster of ``workers`` single-threaded processes, or an
    existing cluster at ``scheduler`` (e.g. one started by dask-jobqueue on SLURM or PBS).

    The workers need irqlab installed in the same version as the client. A lost worker is
    Dask's business (it runs the worker's tasks elsewhere); a lost scheduler ends the sweep
    with :class:`WorkersLost`, the finished runs kept.
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise IrqlabError("the dask executor needs Dask: pip install 'irqlab[dask]'") from None
        self._cluster = None
        self._where = f"the Dask scheduler at {scheduler}" if scheduler else "the Dask cluster"
        self._threads = (0.0, 0)  # (when counted, how many)
        self._levels: dict[str, int] = {}
        # A local cluster's nannies start (and restart) worker processes as long as it runs.
        self._skip_main = contextlib.ExitStack()
        # Dask logs with tracebacks what the sweep reports itself, in one line: the client a
        # lost scheduler while it tries to reconnect, a local worker whose scheduler closed
        # first (at the end, or at Ctrl-C) its failed heartbeat.
        self._levels = _silence("distributed")
        try:
            if scheduler:
                self._client = _connect(scheduler)
            else:
                # Its worker processes start ignoring Ctrl-C (they inherit that), as a pool's
                # do, and share this terminal.
                self._skip_main.enter_context(_workers_skip_main())
                with _ctrl_c_ignored():
                    self._cluster = LocalCluster(
                        n_workers=workers or default_workers(),
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.ERROR,
                    )
                self._client = Client(self._cluster)
                self._client.register_plugin(_quiet_workers_plugin())
        except BaseException:
            _restore(self._levels)
            self._skip_main.close()
            raise

    def _window(self) -> int:
        """Tasks in flight: four per worker thread (counted again every few seconds, as a
        cluster may grow), at least 64."""
        when, threads = self._threads
        if time.monotonic() - when > 5:
            with contextlib.suppress(Exception):  # counted again next time
                threads = sum(self._client.nthreads().values())
                self._threads = (time.monotonic(), threads)
        return max(64, 4 * threads)

    def imap_unordered(self, fn: Callable[[T], Any], tasks: Iterable[T]) -> Iterator[tuple[T, Any]]:
        from concurrent.futures import CancelledError

        from distributed import KilledWorker, as_completed

        source = iter(tasks)
        pending: dict[str, tuple[Any, T]] = {}
        running = as_completed()

        def refill() -> None:
            for task in itertools.islice(source, max(0, self._window() - len(pending))):
                fut = self._client.submit(fn, task, pure=False)
                pending[fut.key] = (fut, task)
                running.add(fut)

        try:
            refill()
            while pending:
                fut = next(running)
                _, task = pending.pop(fut.key)
                try:
                    result = fut.result()
                except (CancelledError, OSError, TimeoutError):
                    raise WorkersLost(f"lost {self._where}") from None
                except KilledWorker:
                    raise WorkersLost(
                        "a run ended every Dask worker that tried it (out of memory?)"
                    ) from None
                except ImportError as e:
                    raise IrqlabError(
                        f"the Dask workers cannot run irqlab ({e}): install irqlab "
                        f"{__version__} on every worker"
                    ) from None
                refill()
                yield task, result
        finally:
            with contextlib.suppress(Exception):
                self._client.cancel([f for f, _ in pending.values()])

    def close(self, abort: bool = False) -> None:
        with contextlib.suppress(Exception):  # a lost scheduler may not answer
            self._client.close(timeout=5 if abort else None)
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close(timeout=10)
        self._skip_main.close()
        _restore(self._levels)


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
