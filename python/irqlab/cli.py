"""The ``irqlab`` command line.

Every subcommand has ``--help``. User errors (bad scenario, a file that cannot be read, an
output that cannot be written) print one line on stderr and exit with status 2; they never
print a traceback. A setting that has no effect in its scenario prints one warning line.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
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


def _stopped_by(e: KeyboardInterrupt) -> tuple[str, int]:
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
        said: set[str] = set()

        def show(message: Any, category: Any, *rest: Any, **kw: Any) -> None:
            if not issubclass(category, IrqlabWarning):
                shown(message, category, *rest, **kw)
            elif (line := f"irqlab: warning: {one_line(str(message))}") not in said:
                said.add(line)  # once, though checking and running both find it
                click.echo(line, err=True)

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
            word, status = _stopped_by(e)
            click.echo(f"irqlab: {word}", err=True)
            sys.exit(status)
        except Exception as e:
            _exit_if_policy_raised(e)
            raise

    return wrapper  # type: ignore[return-value]


def _exit_if_policy_raised(e: BaseException) -> None:
    """A Python moderation policy's exception: the user's own code failed, and its traceback
    is what they need (without irqlab's frames); exit status 2."""
    from irqlab.policy import describe, raised_by_policy

    if raised_by_policy(e):
        click.echo(f"irqlab: error: {one_line(describe(e))}", err=True)
        click.echo(_user_traceback(e), err=True)
        sys.exit(EXIT_USER_ERROR)


def _user_traceback(e: BaseException) -> str:
    """The traceback of an exception raised in the user's code, without irqlab's frames."""
    own = str(Path(__file__).resolve().parent)
    tb = traceback.TracebackException.from_exception(e)
    tb.stack = traceback.StackSummary.from_list(
        [f for f in tb.stack if not str(Path(f.filename).resolve()).startswith(own)]
    )
    return "".join(tb.format()).rstrip()


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
        'TOML: numbers, true/false, [lists], "strings" or bare words).',
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


def parse_sets(sets: tuple[str, ...]) -> list[tuple[str, Any]]:
    from irqlab.scenario import parse_override

    return [parse_override(s) for s in sets]


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
      irqlab probe eth0 --out host.toml   # a scenario of this host's NIC, IRQs and NAPI
    """


@main.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@format_option
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    metavar="FILE",
    help="Write the output to FILE instead of stdout. FILE's directory must exist (it is not "
    "created); an existing FILE is replaced. Checked before the run.",
)
@user_errors
def run(
    scenario: Path, seed: int | None, sets: tuple[str, ...], fmt: str, out: Path | None
) -> None:
    """Run one SCENARIO (a TOML file) and report its metrics.

    Metrics are measured after run.warmup_ms: offered and delivered packets, drops, latency
    (mean and percentiles, µs, NIC arrival to end of protocol processing), CPU time by
    category, IRQs and polls per second, packets per poll, cycles per packet and the
    load-latency product; with host.forward, what was transmitted; with apps, what they
    consumed, their goodput and latency. Several cores add a table per core, several traffic
    classes a table per class (--format json: per_core, per_queue, per_class, per_app).
    The same scenario and seed always give the same output.

    A run of more than 1e9 packets (traffic.rate_pps × (warm-up + duration); a minute or
    more) is announced with a warning line on stderr. Ctrl-C stops any run within about a
    second: one line on stderr, nothing written, exit status 130.
    """
    from irqlab.report import render
    from irqlab.scenario import resolve
    from irqlab.simulate import expected_packets
    from irqlab.simulate import run as run_scenario

    overrides = parse_sets(sets)
    params = resolve(scenario, overrides, seed=seed)
    _warn_if_large(params)
    if out:
        check_output_file(out, "--out")
    seconds = (params["run.warmup_ms"] + params["run.duration_ms"]) / 1e3
    packets = expected_packets(params)
    status = Console(stderr=True)
    if packets > 2e7 and status.is_terminal:
        # Long runs (seconds of wall time): say what is happening while the core works.
        with status.status(f"simulating {packets / 1e6:,.0f} M packets ({seconds:g} s)…"):
            report = run_scenario(scenario, overrides, seed=seed)
    else:
        report = run_scenario(scenario, overrides, seed=seed)
    if fmt == "json":
        text = json.dumps(report, indent=2) + "\n"
        if out:
            _write(out, lambda fh: fh.write(text))
        else:
            click.echo(text, nl=False)
        return
    table = render(report, params)
    if out:
        _write(out, lambda fh: Console(file=fh, width=100, color_system=None).print(table))
    else:
        Console().print(table)


def _warn_if_large(params: dict[str, Any]) -> None:
    """One line on stderr before a run of more than ``LARGE_RUN_PACKETS`` packets."""
    from irqlab.simulate import large_run_warning

    warning = large_run_warning(params)
    if warning:
        click.echo(f"irqlab: warning: {warning}", err=True)


def _write(path: Path, write: Callable[[Any], Any]) -> None:
    """Writes ``path`` with ``write(file)``; a failure (a full disk) is one line."""
    try:
        with path.open("w", encoding="utf-8") as fh:
            write(fh)
    except OSError as e:
        raise ConfigError(f"--out {path}: cannot write ({e.strerror or e})", "--out") from None


def _default(value: Any) -> str:
    """A default as a scenario file writes it: false, [], "" (other strings bare)."""
    if isinstance(value, bool | list | tuple) or value == "":
        return json.dumps(value)
    return str(value)


@main.command()
@click.argument("prefix", required=False, default="")
@user_errors
def keys(prefix: str) -> None:
    """List every scenario key (or those starting with PREFIX), its default and allowed values.

    Plain keys come first, then the fields of each numbered entry ([[app]],
    [[traffic.classes]]) as app.N.core: N counts the entries from 0. PREFIX may name an entry
    (app.0) or a table (app).
    """
    from rich.markup import escape

    from irqlab.layout import fit, min_width
    from irqlab.report import template
    from irqlab.scenario import schema, tables

    wanted = template(prefix)  # app.0 → app.N
    rows: list[tuple[str, ...] | None] = []  # None: a new section
    for key, spec in schema().items():
        if "table" not in spec and key.startswith(wanted):
            rows.append((key, _default(spec["default"]), spec["allowed"], spec["doc"]))
    for name, table in tables().items():
        fields = [f for f in table["fields"].values() if f["key"].startswith(wanted)]
        if fields:
            rows.append(None)
            rows.append((f"[[{name}]]", "", f"at most {table['max_entries']}", table["doc"]))
            rows += [(f["key"], _default(f["default"]), f["allowed"], f["doc"]) for f in fields]
    shown = [r for r in rows if r is not None]
    if not shown:
        raise ConfigError(f"no scenario key starts with '{prefix}'", None)
    t = Table(show_header=True, header_style="bold", show_lines=False)
    t.add_column("key", no_wrap=True, min_width=max(len(r[0]) for r in shown))
    t.add_column("default", justify="right")
    t.add_column("allowed")
    t.add_column("meaning")
    for row in rows:
        if row is None:
            t.add_section()
        else:
            t.add_row(*(escape(cell) for cell in row))
    console = Console()
    if min_width(t, console) <= console.width:
        console.print(fit(t, prose=("allowed", "meaning")))
    else:  # too narrow for the table without cutting a bound (a pipe: 80 columns)
        click.echo(_key_list(rows, console.width), nl=False)


def _key_list(rows: list[tuple[str, ...] | None], width: int) -> str:
    """The keys as a list, for an output too narrow for their table: ``key = default``, then
    the allowed values and the meaning indented beneath (a section's heading: ``[[app]]``,
    how many entries it takes and what they are)."""
    import textwrap

    out: list[str] = []
    for row in rows:
        if row is None:
            out.append("")
            continue
        key, default, allowed, doc = row
        out.append(f"{key}  ({allowed})" if key.startswith("[[") else f"{key} = {default}")
        for line in [doc] if key.startswith("[[") else [allowed, doc]:
            out.append(
                textwrap.fill(
                    line,
                    max(width, 40),
                    initial_indent="    ",
                    subsequent_indent="    ",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return "\n".join(out) + "\n"


@main.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=None, help="Override run.seed.")
@overrides_option
@user_errors
def check(scenario: Path, seed: int | None, sets: tuple[str, ...]) -> None:
    """Validate SCENARIO without running it; print every key with its resolved value.

    A scenario of more than 1e9 packets (traffic.rate_pps × (warm-up + duration)) gets a
    warning line on stderr saying how long its run would take. With driver.moderation =
    "python", the class that driver.policy names is imported (and so checked) too.
    """
    from irqlab.policy import resolve_policy
    from irqlab.scenario import resolve

    params = resolve(scenario, parse_sets(sets), seed=seed)
    resolve_policy(params)
    _warn_if_large(params)
    for key, value in params.items():
        click.echo(f"{key} = {json.dumps(value)}")


@main.command()
@click.argument("sweep_file", metavar="SWEEP", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    # checked by the sweep, which names the path in one line (and creates missing folders)
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory, created if missing (default: sweep.out in the file, else "
    "results/<file name>).",
)
@click.option(
    "-n",
    "--replications",
    type=int,
    default=None,
    help="Replications per point (sweep.replications).",
)
@click.option("--seed", type=int, default=None, help="The sweep seed (sweep.seed).")
@click.option(
    "--warmup",
    default=None,
    metavar="auto|MS",
    help="Warm-up: a number of ms, or auto (MSER-5 on a pilot run of each point).",
)
@overrides_option
@executor_option
@workers_option
@scheduler_option
@click.option(
    "--resume/--fresh",
    default=True,
    show_default=True,
    help="Resume: reuse the runs already finished in --out. Fresh: discard them first.",
)
@progress_option
@user_errors
def sweep(
    sweep_file: Path,
    out: Path | None,
    replications: int | None,
    seed: int | None,
    warmup: str | None,
    sets: tuple[str, ...],
    executor: str,
    workers: int | None,
    scheduler: str | None,
    resume: bool,
    progress: bool | None,
) -> None:
    """Run every point of a SWEEP file, with replications, and write the results.

    A sweep file has a base scenario, axes over any keys (their product gives the points)
    and how many replications to run (see docs/sweeps.md). Replication r of every point uses
    random streams (run.seed, r): independent across replications, common across schemes and
    loads, so differences between points are not noise.

    \b
    Writes to --out:
      runs.parquet      one row per point × replication: metrics (as in `irqlab run
                        --format json`, dotted; per_core.N.*, per_queue.N.*,
                        per_class.N.*, per_app.N.* for each entry), every parameter
                        (lists as text, "[0, 1]"), the seed
      summary.parquet   one row per point: per metric the mean, .std, .ci95 (Student-t
      summary.csv       half-width), .rel (half-width / mean), and n
      journal.sqlite    every finished run; rerunning the command resumes from it

    Results are identical, row for row, whatever the executor and number of workers.
    """
    from irqlab.executors import WorkersLost
    from irqlab.experiments import execute, parse_sweep, summary_table
    from irqlab.files import own_folder, writable_folder
    from irqlab.report import count

    spec = parse_sweep(sweep_file, parse_sets(sets))
    spec.override(replications=replications, seed=seed, warmup=warmup)
    spec.check_size()
    target = Path(os.path.normpath(out or spec.out or Path("results") / sweep_file.stem))
    own_folder(target, "sweep", "--out")  # before the banner: an error says it all
    writable_folder(target, "--out")
    console = Console(stderr=True)
    points, reps = count(spec.count(), "point"), count(spec.replications, "replication")
    console.print(f"sweep: {points} × {reps} → {target}", highlight=False)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            runs = execute(
                spec,
                target,
                executor=executor,
                workers=workers,
                scheduler=scheduler,
                resume=resume,
                progress=console.is_terminal if progress is None else progress,
            )
    except KeyboardInterrupt as e:
        word, status = _stopped_by(e)
        click.echo(
            f"irqlab: {word}; the finished runs are kept in {target}: "
            "the same command resumes the sweep",
            err=True,
        )
        sys.exit(status)
    except WorkersLost as e:
        click.echo(f"irqlab: error: {e}", err=True)
        sys.exit(EXIT_STOPPED)
    _print_summary(summary_table(runs), [a.key for a in spec.axes])
    click.echo(f"wrote {target}/runs.parquet, summary.parquet, summary.csv")


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """A warning as one line on stderr, like an error."""
    click.echo(f"irqlab: warning: {message}", err=True)


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, never in exponent notation."""
    if x == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, places):.{max(places, 0)}f}"


def _si(x: float, digits: int = 3) -> str:
    """Significant digits with an SI prefix: 187312.4 → 187k, 0.00421 → 0.00421."""
    if x != x:
        return "—"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return _sig(x / div, digits) + suffix
    return _sig(x, digits)


def _cell(value: Any) -> str:
    """An axis value in the sweep's table: text as it is, true/false, numbers with SI prefixes."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    return _si(value)


#: Columns of the table `irqlab sweep` prints: (metric, header).
SUMMARY_COLUMNS = (
    ("throughput_pps", "throughput pps"),
    ("loss_ratio", "loss"),
    ("latency_us.mean", "latency µs"),
    ("latency_us.p99", "p99 µs"),
    ("cpu.busy", "CPU busy"),
    ("irq_per_s", "IRQ/s"),
)


def _print_summary(summary: Any, axes: list[str], limit: int = 40) -> None:
    """The sweep's points as a table: axes, n, and key metrics as mean ±95% half-width."""
    from irqlab.layout import fit

    t = Table(show_header=True, header_style="bold", caption="mean ±95% confidence half-width")
    for a in axes:
        t.add_column(a, justify="right")
    t.add_column("n", justify="right")
    for _, header in SUMMARY_COLUMNS:
        t.add_column(header, justify="right")
    for _, row in summary.head(limit).iterrows():
        cells = [_cell(row[a]) for a in axes]
        cells.append(str(row["n"]))
        for m, _ in SUMMARY_COLUMNS:
            ci = row[f"{m}.ci95"]
            cells.append(_si(row[m]) + ("" if ci != ci else f" ±{_si(ci, 2)}"))
        t.add_row(*cells)
    Console().print(fit(t, keep=len(axes)))
    if len(summary) > limit:
        click.echo(f"… and {len(summary) - limit} more points in summary.csv")


@main.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option("--x", "x", required=True, help="Column on the x axis, e.g. traffic.rate_pps.")
@click.option(
    "--y",
    "ys",
    required=True,
    multiple=True,
    help="Metric on the y axis, e.g. latency_us.mean; repeat for one panel per metric.",
)
@click.option("--hue", default=None, help="One line per value of this column, e.g. scheme.")
@click.option(
    "--where",
    "wheres",
    multiple=True,
    metavar="KEY=VALUE",
    help="Keep only rows with this parameter value (repeatable).",
)
@click.option("--logx", is_flag=True, help="Logarithmic x axis.")
@click.option("--logy", is_flag=True, help="Logarithmic y axes.")
@click.option("--band", is_flag=True, help="Shaded confidence bands instead of error bars.")
@click.option("--title", default=None, help="Figure title.")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="PNG or SVG file (default: <results>/<first y>.png).",
)
@user_errors
def plot(
    results: Path,
    x: str,
    ys: tuple[str, ...],
    hue: str | None,
    wheres: tuple[str, ...],
    logx: bool,
    logy: bool,
    band: bool,
    title: str | None,
    out: Path | None,
) -> None:
    """Plot a sweep's RESULTS (its directory, or a summary/runs .parquet or .csv).

    Points are the means over replications; error bars (or --band) are their 95% confidence
    intervals. Several --y give one panel per metric sharing the x axis.

    \b
    Example:
      irqlab plot results/livelock --x traffic.rate_pps \\
          --y throughput_pps --y latency_us.mean --y cpu.busy --hue scheme --logy
    """
    from irqlab.figures import plot as make_plot
    from irqlab.scenario import parse_override

    where = dict(parse_override(w) for w in wheres)
    if out is None:
        folder = results if results.is_dir() else results.parent
        out = folder / f"{ys[0]}.png"
    try:
        make_plot(
            results,
            x,
            list(ys),
            hue,
            where=where,
            logx=logx,
            logy=logy,
            band=band,
            title=title,
            out=out,
        )
    except ValueError as e:
        raise ConfigError(str(e), None) from None
    except OSError as e:  # the tables are read without raising it: this is the figure's file
        raise IrqlabError(f"{out}: cannot write the figure ({e.strerror or e})") from None
    click.echo(f"wrote {out}")


@main.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option("--point", type=int, required=True, help="Point index (column 'point').")
@click.option("--replication", type=int, default=0, show_default=True, help="Replication.")
@format_option
@user_errors
def rerun(results: Path, point: int, replication: int, fmt: str) -> None:
    """Re-run one row of a sweep's RESULTS alone (its directory or runs.parquet).

    The row's parameters and seed are exactly what ran, so the report equals the row.
    """
    from irqlab.experiments import load_results, row_scenario
    from irqlab.report import render
    from irqlab.simulate import run as run_scenario

    runs = load_results(results, "runs")
    for column in ("point", "replication"):
        if column not in runs.columns:
            raise ConfigError(
                f"{results}: not a sweep's runs table (no column '{column}'); give the sweep's "
                "folder or its runs.parquet",
                None,
            )
    match = runs[(runs["point"] == point) & (runs["replication"] == replication)]
    if match.empty:
        raise ConfigError(
            f"no row with point {point} and replication {replication} "
            f"(points 0–{runs['point'].max()}, replications 0–{runs['replication'].max()})",
            None,
        )
    try:
        params = row_scenario(match.iloc[0].to_dict())
    except ConfigError as e:  # a table edited by hand
        where = f"{results}: point {point}, replication {replication}"
        raise ConfigError(f"{where}: {e}", e.key) from None
    report = run_scenario(params)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        Console().print(render(report, params))


@main.command()
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    metavar="FILE",
    help="The HTML file to write (default: RESULTS/report.html for a folder, r.html beside "
    "r.json). Its directory must exist; an existing FILE is replaced.",
)
@click.option("--title", default=None, help="The page's title (default: one naming the result).")
@user_errors
def report(results: Path, out: Path | None, title: str | None) -> None:
    """Write one self-contained HTML page of RESULTS, to read in a browser or send to someone.

    \b
    RESULTS is any result irqlab writes; which one is told by its files:
      r.json          a run's report (irqlab run ... --format json --out r.json)
      a sweep folder  sweep.json, runs.parquet, summary.parquet (irqlab sweep)
      a tune folder   tune.json, candidates.csv, recommendation.json (irqlab tune)
      a reproduction  README.md and its figures and tables (irqlab reproduce)

    The page holds the scenario (every key), the key metrics, the figures, the tables with
    their 95% confidence intervals, and the commands that re-run each result. The figures of
    runs, sweeps and tunes are interactive: hover over a point to read its value, click a
    legend entry to hide or show a line. Everything is inside the file (plotly.js, about
    5 MB, and the images): it opens offline and fetches nothing.

    \b
    Examples:
      irqlab report results/livelock                  # → results/livelock/report.html
      irqlab run examples/napi.toml --format json --out r.json && irqlab report r.json
      irqlab report results/tune -o tune.html --title "eth0 at 1 Mpps"
      irqlab report results/emmerich2015 -o emmerich2015.html
    """
    from irqlab.html_report import default_out, detect, write_report

    kind = detect(results)  # before anything is written: a damaged folder is one line
    target = out or default_out(results)
    check_output_file(target, "--out")
    write_report(results, target, title=title)
    size = target.stat().st_size
    click.echo(f"wrote {target} ({kind}, {size / 1e6:.1f} MB)")


def _parse_rates(text: str) -> list[float]:
    """``FROM:TO:NUM`` (geometric) or ``FROM:TO:NUM:lin``, or a comma-separated list: at most
    :data:`irqlab.analytic.limits.MAX_RATES` rates, counted before any is made."""
    from irqlab.analytic.limits import MAX_RATES

    shown = repr(text if len(text) <= 60 else text[:57] + "...")
    parts = text.split(":")
    try:
        if len(parts) in (3, 4):
            lo, hi, num = float(parts[0]), float(parts[1]), int(parts[2])
            spacing = parts[3] if len(parts) == 4 else "log"
            if not (0 < lo < hi < math.inf) or num < 2 or spacing not in ("log", "lin"):
                raise ValueError
        else:
            rates = [float(x) for x in text.split(",")]
            num = len(rates)
    except ValueError:
        raise ConfigError(
            f"--rates {shown}: expected FROM:TO:NUM (geometric), FROM:TO:NUM:lin, "
            "or a list like 1e4,5e4,1e5 (packets/s, finite and > 0, FROM < TO, NUM >= 2)",
            None,
        ) from None
    if num > MAX_RATES:
        raise ConfigError(
            f"--rates {shown}: {num:,} rates; a curve takes at most {MAX_RATES:,} "
            "(fewer rates, or several curves)",
            None,
        )
    if len(parts) in (3, 4):
        import numpy as np

        space = np.geomspace if spacing == "log" else np.linspace
        return [float(x) for x in space(lo, hi, num)]
    if not rates or any(not (r > 0) or math.isinf(r) for r in rates):
        raise ConfigError(f"--rates {shown}: every rate must be a number > 0", None)
    return rates


@main.command()
@click.argument("scheme")
@click.argument("scenario", required=False, type=click.Path(path_type=Path))
@overrides_option
@click.option(
    "--rates",
    default="1e3:6e5:25",
    show_default=True,
    metavar="FROM:TO:NUM|LIST",
    help="Poisson arrival rates, packets/s: FROM:TO:NUM geometric, FROM:TO:NUM:lin, or a list.",
)
@click.option(
    "--empty-wait",
    type=click.Choice(["period", "half-period"]),
    default="half-period",
    show_default=True,
    help="poll, hybrid: wait of a packet that finds the system empty, Eq. 12 (half-period: "
    "the mean time to the next tick; period: the paper's upper bound T_poll).",
)
@click.option(
    "--printed",
    is_flag=True,
    help="irq: evaluate Eqs. 1-6 as printed instead of solving the model's Markov chain "
    "(they agree on throughput and CPU; Eq. 6 underestimates the latency).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: for a person; csv or json: every column, for programs.",
)
@user_errors
def analytic(
    scheme: str,
    scenario: Path | None,
    sets: tuple[str, ...],
    rates: str,
    empty_wait: str,
    printed: bool,
    fmt: str,
) -> None:
    """Throughput, CPU availability and mean latency of SCHEME from its analytic model.

    The models of Salah et al. (2007): ideal (M/M/1/B), irq (the Markov chain of the model
    Eqs. 1-6 approximate; --printed for the equations), disable-enable (the Markov chain of
    Fig. 2, solved from its generator), poll (Eqs. 9-12 on an M/D/1/B queue, computed stably)
    and hybrid (disable-enable below its switching point, polling above).
    Costs, buffer and scheme parameters come from the scenario (optional SCENARIO file plus
    --set), e.g. --set platform.preset=salah2007 --set nic.ring_descriptors=32.

    \b
    Examples:
      irqlab analytic irq --set platform.preset=salah2007
      irqlab analytic disable-enable --set platform.irq_ns=2000 --rates 5e4,1e5,2e5
      irqlab analytic poll --set poll.quota=4 --format csv > poll.csv
    """
    from irqlab.analytic import SCHEMES_WITH_MODEL, curve
    from irqlab.layout import fit
    from irqlab.scenario import resolve

    if scheme not in SCHEMES_WITH_MODEL:
        raise ConfigError(
            f"scheme '{scheme}' has no analytic model; models exist for "
            f"{', '.join(SCHEMES_WITH_MODEL)} (simulate the others with `irqlab run`)",
            "scheme",
        )
    params = resolve(scenario, [*parse_sets(sets), ("scheme", scheme)])
    df = curve(
        scheme,
        params,
        _parse_rates(rates),
        empty_wait=empty_wait,  # type: ignore[arg-type]
        normal_method="printed" if printed else "chain",
    )
    if fmt == "csv":
        click.echo(df.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        click.echo(df.to_json(orient="records", indent=2))
        return
    table = Table(title=f"{scheme}: analytic model", title_justify="left")
    for name in ("offered", "throughput", "CPU availability", "mean latency", "loss", "ρ"):
        table.add_column(name, justify="right")
    for row in df.itertuples(index=False):
        table.add_row(
            f"{_si(row.rate_pps)} pps",
            f"{_si(row.throughput_pps)} pps",
            f"{row.cpu_availability:.3f}",
            f"{_si(row.latency_us)} µs",
            f"{row.loss_ratio:.2e}",
            f"{row.rho:.3f}",
        )
    Console().print(fit(table))


@main.command()
@click.argument("study")
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output directory (default: results/STUDY, or results/STUDY-quick with --quick).",
)
@click.option("--quick", is_flag=True, help="A coarse version in under a minute.")
@executor_option
@workers_option
@scheduler_option
@progress_option
@user_errors
def reproduce(
    study: str,
    out: Path | None,
    quick: bool,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Re-run a published study and write its figures (PNG), data (CSV) and headline table.

    \b
    Studies:
      salah2007     Salah, El-Badawi & Haidari (2007): seven interrupt-handling schemes and a
                    hybrid, analysis and simulation, Poisson and bursty traffic (Figs. 6, 9, 10)
      emmerich2015  Emmerich et al. (2015): ITR off, ixgbe's dynamic ITR and the linear ITR
                    (Figs. 3, 5, 7, 8), plus today's ixgbe, i40e, DIM and software coalescing
      chang2007     Chang et al. (2007): goodput of an application under receive load with
                    NAPI, QAPolling, AIC and RHIP (Figs. 8-11, Table II)
      beifuss2016   Beifuß et al. (2016): ingress QoS, SQ, RR, LL-RR and LL-WFQ (Figs. 5a/b,
                    6a/b, 7a/b) and the paper's numbers beside irqlab's
      busypoll2013  the socket busy-poll cover letter (2013): TCP_RR transactions/s with and
                    without busy polling, rx-usecs 0 / adaptive / 100, deep C-states on and off
      irq-suspend   Linux 6.13 IRQ suspension: interrupts, deferral, busy polling and suspension
                    at low, medium and saturating load, with napi.rst's conclusions

    The sweeps are resumable: rerunning the command reuses the runs already in --out.
    """
    from irqlab.studies import reproduce as run_study
    from irqlab.studies import study as find

    found = find(study)
    target = out or Path("results") / (f"{study}-quick" if quick else study)
    console = Console(stderr=True)
    console.print(f"{found.TITLE}\n→ {target}", highlight=False)
    tables = run_study(
        found,
        target,
        quick=quick,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        progress=console.is_terminal if progress is None else progress,
    )
    printed = [markdown(tables[name]) for name, markdown in found.TABLES.items()]
    click.echo("\n".join(printed), nl=False)
    click.echo(f"wrote {target}/README.md and the figures and tables it lists")


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--slo",
    "slos",
    multiple=True,
    required=True,
    metavar="'METRIC OP VALUE'",
    help="A service-level objective every recommendation meets, at every load: "
    "'latency_us.p99 <= 50', 'loss_ratio <= 1e-6', 'throughput_pps >= 9.9e5' "
    "(repeatable; any metric of `irqlab run --format json`, dotted).",
)
@click.option(
    "--knob",
    "knobs",
    multiple=True,
    metavar="KEY=RANGE",
    help="A setting to search: a..b:step, a..b (nine values) or v1,v2,... "
    "(repeatable; the candidates are every combination). Default: the scheme's operator "
    "settings (docs/tune.md).",
)
@click.option(
    "--minimize",
    default="cpu.busy",
    show_default=True,
    metavar="METRIC",
    help="The objective: the feasible setting with its lowest mean wins.",
)
@overrides_option
@click.option(
    "--load-range",
    default=None,
    metavar="PPS",
    help="Loads (traffic.rate_pps) at which every SLO must hold: a..b:step, a..b or "
    "v1,v2,... (default: the scenario's rate). The objective is averaged over them.",
)
@click.option(
    "--seed", type=int, default=None, help="Override run.seed (the same seed, the same decisions)."
)
@click.option(
    "--confidence",
    type=float,
    default=0.95,
    show_default=True,
    help="Confidence of each 'meets the SLOs' decision (Bonferroni over SLOs and loads).",
)
@click.option(
    "--replications",
    default="3..10",
    show_default=True,
    metavar="MIN..MAX",
    help="Replications per candidate and load: MIN in the first round, then one more per "
    "round for the candidates still racing, up to MAX.",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Results folder (created; a rerun resumes from the runs it holds).",
)
@click.option("--fresh", is_flag=True, help="Discard the runs already in --out first.")
@click.option(
    "--iface", default="IFACE", show_default=True, help="Interface name for the commands."
)
@executor_option
@workers_option
@scheduler_option
@progress_option
@user_errors
def tune(
    scenario: Path,
    slos: tuple[str, ...],
    knobs: tuple[str, ...],
    minimize: str,
    sets: tuple[str, ...],
    load_range: str | None,
    seed: int | None,
    confidence: float,
    replications: str,
    out: Path,
    fresh: bool,
    iface: str,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    progress: bool | None,
) -> None:
    """Find the setting that meets every SLO at the lowest cost, for SCENARIO's load.

    Searches the settings an operator can change (for napi/irq: driver.moderation among the
    policies, nic.itr_us for static, kernel.napi_defer_hard_irqs with
    kernel.gro_flush_timeout_ns, kernel.netdev_budget; or --knob) by racing: every candidate
    runs with the same random numbers, a round of replications at a time; candidates that
    clearly miss an SLO, or clearly cost more than the best feasible one, drop out; the rest
    get more replications. Prints the recommended setting as the commands to type, its
    margin to each SLO with its interval, and the runners-up (docs/tune.md).

    \b
    Example:
      irqlab tune examples/emmerich2015.toml --set traffic.rate_pps=1e6 \\
          --slo 'latency_us.p99 <= 50' --out results/tune

    \b
    Writes to --out:
      recommendation.md   the commands, margins, runners-up (also printed)
      recommendation.json the same, for scripts
      candidates.csv      every candidate: status, objective and SLO metrics with intervals
      pareto.csv/.png     the objective against the first SLO's metric, and its frontier
      runs.jsonl          every finished run (a rerun resumes from it), tune.json the setup
    """
    from irqlab.experiments import progress_bar
    from irqlab.tuning import parse_range, summary_text
    from irqlab.tuning import tune as run_tune

    lo, sep, hi = replications.partition("..")
    try:
        reps = (int(lo), int(hi)) if sep else (int(lo), int(lo))
    except ValueError:
        raise ConfigError(f"--replications {replications}: expected MIN..MAX", None) from None
    loads = parse_range("traffic.rate_pps", load_range) if load_range else None
    show = Console(stderr=True).is_terminal if progress is None else progress
    bar = progress_bar(show, "runs (at most)", "ETA ≤")
    with bar:
        task = bar.add_task("tune", total=None)

        def advance(done: int, most: int) -> None:
            bar.update(task, completed=done, total=most)

        result = run_tune(
            scenario,
            slos,
            knobs=knobs,
            minimize=minimize,
            overrides=parse_sets(sets),
            loads=loads,
            seed=seed,
            confidence=confidence,
            min_replications=reps[0],
            max_replications=reps[1],
            out=out,
            fresh=fresh,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            progress=advance,
            iface=iface,
        )
        bar.update(task, total=result.runs, completed=result.runs)
    click.echo(summary_text(result), nl=False)
    click.echo(f"wrote {out}/recommendation.md, candidates.csv, pareto.csv and pareto.png")


@main.command()
@click.argument("iface", required=False)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    metavar="FILE",
    help="Write the scenario to FILE (default: print it on stdout, the summary on stderr).",
)
@click.option("--force", is_flag=True, help="Replace --out if it exists (else: an error).")
@click.option(
    "--interval",
    default="1s",
    show_default=True,
    metavar="DURATION",
    help="Time between the two samples of /proc/interrupts and of the interface's packet "
    "counters that give the IRQ and packet rates: 1s, 500ms, or 0 (one sample, no rates).",
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/"),
    show_default=True,
    metavar="ROOT",
    help="Probe a recorded host instead of this one: ROOT/proc and ROOT/sys as the host had "
    "them, ethtool's output in ROOT/ethtool/IFACE/{driver,show-coalesce,show-ring,"
    "show-channels,show-rxfh-indir}, netlink's per-NAPI settings in ROOT/netlink/IFACE/napi-get, "
    "second samples as FILE.2 (docs/probe.md).",
)
@user_errors
def probe(iface: str | None, out: Path | None, force: bool, interval: str, root: Path) -> None:
    """Write a scenario of this host's receive path for IFACE (default: the interface of the
    default route).

    Reads the interface's coalescing, ring sizes, channels and RSS table (`ethtool
    -c/-g/-l/-x/-i`), the NAPI and busy-poll sysctls (netdev_budget, netdev_budget_usecs,
    busy_read, busy_poll), the per-device and per-NAPI settings (napi_defer_hard_irqs,
    gro_flush_timeout, and irq-suspend-timeout over netlink), its IRQs with their affinity and
    rates (/proc/interrupts sampled twice), the CPUs, their clock and the kernel's tick rate,
    and the driver. Each value in the scenario names its source in a comment; the costs a
    host cannot tell (how long an IRQ or a packet takes) are irqlab's defaults marked
    "default — calibrate". No root needed; whatever cannot be read (no ethtool, an old
    kernel) becomes a note in the file and the summary.

    \b
    Examples:
      irqlab probe eth0 --out host.toml
      irqlab run host.toml --set traffic.rate_pps=5e5 --set traffic.flows=64
      irqlab probe > host.toml             # the default route's interface, to stdout
      irqlab probe ens4 --root recorded/   # a host recorded elsewhere (docs/probe.md)
    """
    from irqlab.layout import fit
    from irqlab.probe import parse_interval, summary, write
    from irqlab.probe import probe as run_probe

    seconds = parse_interval(interval)
    if out is not None:
        if out.exists() and not force:
            raise ConfigError(f"{out} exists; --force to overwrite it", None)
        if not out.parent.is_dir():
            raise ConfigError(f"{out}: no directory {out.parent}", None)
    if not root.is_dir():
        raise ConfigError(f"--root {root}: no such directory", None)
    console = Console(stderr=out is None)
    if seconds > 0 and console.is_terminal:
        with console.status(f"sampling /proc/interrupts for {seconds:g} s…"):
            result = run_probe(iface, root=root, interval_s=seconds)
    else:
        result = run_probe(iface, root=root, interval_s=seconds)
    if out is None:
        click.echo(result.toml(), nl=False)
    else:
        write(result, out, force=force)
    for table in summary(result):
        console.print(fit(table, prose=("source",)))
    for note in result.notes:
        click.echo(f"note: {note}", err=out is None)
    if out is not None:
        click.echo(f"wrote {out}")


@main.command("trace-info")
@click.argument("capture", type=click.Path(path_type=Path))
@click.option(
    "--top", type=click.IntRange(min=0), default=5, show_default=True, help="Largest flows to list."
)
@format_option
@user_errors
def trace_info(capture: Path, top: int, fmt: str) -> None:
    """What CAPTURE (pcap or pcapng, gzip-compressed or not) holds, before replaying it with
    traffic.kind = "pcap" and traffic.pcap = CAPTURE: packets, duration (a replay's default
    length), rate, frame sizes, flows (5-tuples) and the largest gaps. A capture the replay
    cannot read gets the same one-line reason here.

    \b
      irqlab trace-info examples/web.pcapng.gz
      irqlab trace-info examples/web.pcapng.gz --format json --top 20
      irqlab run examples/replay.toml
    """
    from irqlab.trace import render
    from irqlab.trace import trace_info as info

    result = info(capture, top)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        Console().print(render(result))


if __name__ == "__main__":  # pragma: no cover
    main()
