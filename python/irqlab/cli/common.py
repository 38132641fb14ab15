"""What every command of the ``irqlab`` command line shares: the group itself (:func:`main`),
the turning of errors into one line and an exit status (:func:`user_errors`), the options
several commands take, and rich's console and tables, loaded when a command first prints."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from irqlab import __version__
from irqlab.errors import (
    ConfigError,
    InternalError,
    IrqlabError,
    IrqlabWarning,
    Terminated,
    command_line,
)

if TYPE_CHECKING:
    import rich.console
    import rich.table

F = TypeVar("F", bound=Callable[..., Any])


# rich loads when a command first prints a table, not for --help, check or an error.
def Console(*args: Any, **kwargs: Any) -> rich.console.Console:
    from rich.console import Console

    return Console(*args, **kwargs)


def Table(*args: Any, **kwargs: Any) -> rich.table.Table:
    from rich.table import Table

    return Table(*args, **kwargs)


EXIT_USER_ERROR = 2
EXIT_INTERNAL = 3
#: A sweep stopped by the loss of its workers: rerunning the command resumes it.
EXIT_STOPPED = 1
#: Interrupted (Ctrl-C), as a shell reports SIGINT.
EXIT_INTERRUPTED = 130


def one_line(text: str) -> str:
    """``text`` on one line: newlines and other control characters escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


@contextlib.contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` meanwhile, so that a command stops as at Ctrl-C (its
    workers released, its finished runs kept) rather than vanishing and leaving its pool's
    semaphores to the resource tracker. Only where SIGTERM has its default action, in the main
    thread."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    ):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped_by(e: KeyboardInterrupt) -> tuple[str, int]:
    """What stopped a command, in a word, and its exit status (128 + the signal's number)."""
    if isinstance(e, Terminated):
        return "terminated", 128 + e.signum
    return "interrupted", EXIT_INTERRUPTED


def user_errors(f: F) -> F:
    """Turns irqlab's errors into one line on stderr and an exit status, and its warnings into
    one line each."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        shown = warnings.showwarning

        def show(message: Any, category: Any, *rest: Any, **kw: Any) -> None:
            if not issubclass(category, IrqlabWarning):
                shown(message, category, *rest, **kw)
            else:
                click.echo(f"irqlab: warning: {one_line(str(message))}", err=True)

        try:
            with warnings.catch_warnings(), command_line(), _sigterm_stops():
                warnings.simplefilter("default", IrqlabWarning)  # each once, never an error
                warnings.showwarning = show
                return f(*args, **kwargs)
        except InternalError as e:
            click.echo(f"irqlab: internal error: {one_line(str(e))}", err=True)
            sys.exit(EXIT_INTERNAL)
        except (ConfigError, IrqlabError) as e:
            click.echo(f"irqlab: error: {one_line(str(e))}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except BrokenPipeError:  # `irqlab run … | head`: the reader left, nothing to say
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except OSError as e:  # a file the command reads or writes, where it did not check
            _exit_if_policy_raised(e)
            where = f"{one_line(str(e.filename))}: " if e.filename else ""
            click.echo(f"irqlab: error: {where}{one_line(e.strerror or str(e))}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt as e:
            word, status = stopped_by(e)
            click.echo(f"irqlab: {word}", err=True)
            sys.exit(status)
        except Exception as e:
            _exit_if_policy_raised(e)
            raise

    return wrapper  # type: ignore[return-value]


def _exit_if_policy_raised(e: BaseException) -> None:
    """A Python moderation policy's exception: the user's own code failed, and its traceback
    is what they need (without irqlab's frames); exit status 2."""
    from irqlab.ops.policies import describe, raised_by_policy

    if raised_by_policy(e):
        click.echo(f"irqlab: error: {one_line(describe(e))}", err=True)
        click.echo(_user_traceback(e), err=True)
        sys.exit(EXIT_USER_ERROR)


def _user_traceback(e: BaseException) -> str:
    """The traceback of an exception raised in the user's code, without irqlab's frames."""
    own = str(Path(__file__).resolve().parents[1])  # the irqlab package
    tb = traceback.TracebackException.from_exception(e)
    tb.stack = traceback.StackSummary.from_list(
        [f for f in tb.stack if not str(Path(f.filename).resolve()).startswith(own)]
    )
    return "".join(tb.format()).rstrip()


@contextlib.contextmanager
def stops_resumably(target: Path, what: str) -> Iterator[None]:
    """A resumable command's long work (a sweep, a calibration): Ctrl-C or SIGTERM ends it in
    one line saying where the finished runs are kept and that the same command resumes the
    ``what``, with a stop's exit status; so does losing the workers."""
    from irqlab.experiments.executors import WorkersLost

    try:
        yield
    except KeyboardInterrupt as e:
        word, status = stopped_by(e)
        click.echo(
            f"irqlab: {word}; the finished runs are kept in {target}: the same command resumes "
            f"the {what}",
            err=True,
        )
        sys.exit(status)
    except WorkersLost as e:
        click.echo(f"irqlab: error: {e}; the same command resumes the {what}", err=True)
        sys.exit(EXIT_STOPPED)


def check_output_file(path: Path, option: str) -> None:
    """Checks, before anything runs, that ``path`` can be written: not a directory, in a
    directory that exists and takes files. Nothing is left behind or truncated."""
    verb = "write it" if os.path.lexists(path) else "create it there"
    try:
        if path.is_dir():
            raise ConfigError(
                f"{option} {path}: is a directory; give a file name, e.g. {path / 'out.json'}",
                option,
            )
        parent = path.parent
        if not parent.is_dir():
            what = "is not a directory" if parent.exists() else "does not exist"
            raise ConfigError(
                f"{option} {path}: the directory {parent} {what} "
                f"(a file's directory is not created: mkdir -p {parent})",
                option,
            )
        existed = os.path.lexists(path)
        if existed and not path.is_file():  # a device or pipe: opening it could block
            if not os.access(path, os.W_OK):
                raise PermissionError(13, "Permission denied")
            return
        with path.open("a"):
            pass
        if not existed:
            path.unlink()
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot {verb} ({e.strerror or e})", option) from None


def overrides_option(f: F) -> F:
    return click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override any scenario key, e.g. --set traffic.rate_pps=2e5 --set scheme=irq "
        "--set nic.irq_affinity=[0,1] --set app.0.core=1 (repeatable; values are read as "
        'TOML: numbers, true/false, [lists], "strings" or bare words). --set @FILE sets every '
        "key of a scenario file, e.g. the platform `irqlab calibrate` fitted "
        "(--set @results/cal/NAME.toml); later --set win.",
    )(f)


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; json: every metric, for programs.",
)


executor_option = click.option(
    "--executor",
    type=click.Choice(["process", "inline", "dask"]),
    default="process",
    show_default=True,
    help="process: a local pool; inline: this process; dask: a Dask LocalCluster or --scheduler.",
)
workers_option = click.option(
    "-j", "--workers", type=int, default=None, help="Worker processes (default: one per core)."
)
scheduler_option = click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Join the Dask cluster at ADDRESS (e.g. tcp://10.0.0.1:8786); implies --executor dask.",
)
progress_option = click.option(
    "--progress/--no-progress", default=None, help="Progress bars (default: on a terminal)."
)


def root_option(help: str) -> Callable[[F], F]:
    """--root ROOT: read a recorded host (a directory standing in for /) instead of this one
    (probe, measure)."""
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("/"),
        show_default=True,
        metavar="ROOT",
        help=help,
    )


def pool_options(f: F) -> F:
    """--executor, -j/--workers and --scheduler: where a command that makes many runs runs
    them (sweep, tune, reproduce)."""
    for add in (scheduler_option, workers_option, executor_option):  # the last shown first
        f = add(f)
    return f


def out_option(
    help: str,
    *,
    metavar: str | None = None,
    file_okay: bool = True,
    dir_okay: bool = True,
    required: bool = False,
) -> Callable[[F], F]:
    """-o/--out, where a command writes (``file_okay=False``: a folder; ``dir_okay=False``: a
    file); the command checks it, naming the path in one line."""
    # a required option gets no default at all: Click 8.3+ takes an explicit None as a
    # default given, and would let the option be left out
    default: dict[str, Any] = {} if required else {"default": None}
    return click.option(
        "-o",
        "--out",
        type=click.Path(file_okay=file_okay, dir_okay=dir_okay, path_type=Path),
        required=required,
        metavar=metavar,
        help=help,
        **default,
    )


def parse_sets(sets: tuple[str, ...]) -> list[tuple[str, Any]]:
    """``--set KEY=VALUE`` as a pair, ``--set @FILE`` as every key of that scenario file, in
    the order given."""
    from irqlab.scenario import flatten, load_toml, parse_override

    out: list[tuple[str, Any]] = []
    for s in sets:
        if s.startswith("@"):
            out += flatten(load_toml(s[1:])).items()
        else:
            out.append(parse_override(s))
    return out


class _UsageLine(click.ClickException):
    """A usage error as one line on stderr, exit status 2, as irqlab's own errors are."""

    exit_code = EXIT_USER_ERROR

    def show(self, file: Any = None) -> None:
        click.echo(f"irqlab: error: {one_line(self.message)}", err=True)


@contextlib.contextmanager
def _usage_errors_in_one_line() -> Iterator[None]:
    """Click's usage errors as :class:`_UsageLine`: a bad value (a path that does not exist, a
    file where a folder is wanted, a word for a number) names the option and the value; a
    missing argument or an unknown option adds the command's usage and where its help is."""
    try:
        yield
    except click.UsageError as e:
        if isinstance(e, getattr(click.exceptions, "NoArgsIsHelpError", ())):
            raise  # plain `irqlab`: the help, as Click prints it
        text = e.format_message().rstrip(".")
        if e.ctx is not None and (
            not isinstance(e, click.BadParameter) or isinstance(e, click.MissingParameter)
        ):
            usage = e.ctx.get_usage().removeprefix("Usage: ")
            text += f" (usage: {usage}; {e.ctx.command_path} --help says more)"
        raise _UsageLine(text) from None


class _Commands(click.Group):
    """irqlab's commands: Click's usage errors are one line, like irqlab's own errors."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _usage_errors_in_one_line():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _usage_errors_in_one_line():
            return super().invoke(ctx)


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="irqlab")
def main() -> None:
    """irqlab: a laboratory for the host receive path.

    Simulates how a host turns packets arriving at a NIC into CPU work — interrupts,
    interrupt moderation (ITR, coalescing), NAPI polling with budgets, softirqs and
    ksoftirqd — and reports latency, CPU load, IRQ rate, throughput and loss.

    \b
    Start with:
      irqlab run examples/napi.toml
      irqlab run examples/napi.toml --set scheme=irq --set traffic.rate_pps=2e5
      irqlab keys            # every scenario key, its default and allowed values
      irqlab keys app        # the fields of each [[app]] entry (app.0.core, ...)
      irqlab sweep examples/livelock_sweep.toml --out results/livelock
      irqlab plot results/livelock --x traffic.rate_pps --y throughput_pps --hue scheme
      irqlab analytic irq --set platform.preset=salah2007
      irqlab reproduce salah2007 --out results/salah2007
      irqlab report results/livelock      # one HTML page: figures, tables, how to re-run
      irqlab calibrate examples/calibrate_beifuss2016.toml   # fit costs to measured numbers
      irqlab probe eth0 --out host.toml   # a scenario of this host's NIC, IRQs and NAPI
    """
