"""Figures from a sweep: one panel per metric against one swept parameter, one line per variant.

A sweep directory holds ``summary.parquet`` (one row per point: the parameters, ``n`` and, for
each metric ``M``, the mean ``M`` and its spread ``M.std``, ``M.ci95`` and ``M.rel``) and
``runs.parquet`` (one row per point and replication). :func:`plot` draws either, stacking the
metrics in panels that share the x axis, as the receive-path papers do::

    >>> from irqlab.figures import plot
    >>> fig = plot("out/sweep", x="traffic.rate_pps", y=["latency_us.p99", "cpu.busy"],
    ...            hue="scheme", logy=True, out="latency.png")  # doctest: +SKIP

The figure is built with :class:`matplotlib.figure.Figure` directly, not pyplot: no backend
is selected and nothing global changes, so it is safe in scripts, servers and worker processes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from irqlab.experiments.statistics import summarize
from irqlab.formatting import compact

__all__ = ["label", "plot"]

# Spread columns stored next to each metric M of a summary: M.std, M.ci95, M.rel.
_SUFFIXES = ("std", "ci95", "rel")
# Columns that identify a row rather than describe the scenario or its outcome.
# The warm-up is one of them: with MSER-5 each point has its own, and it must not split lines.
_BOOKKEEPING = frozenset(
    {
        "point",
        "point_id",
        "n",
        "replication",
        "seed",
        "run.seed",
        "run.replication",
        "run.warmup_ms",
        "warmup.method",
        "warmup.reliable",
    }
)
_SAVE_SUFFIXES = (".png", ".svg")
_MARKERS = ("o", "s", "^", "D", "v", "<", ">", "p", "h", "*")

# Names with a label of their own; everything else is derived from its prefix or unit suffix.
_LABELS = {
    "traffic.rate_pps": "offered load (packets/s)",
    "offered_pps": "offered rate (packets/s)",
    "throughput_pps": "throughput (packets/s)",
    "irq_per_s": "IRQ rate (1/s)",
    "polls_per_s": "poll rate (1/s)",
    "loss_ratio": "loss ratio",
    "packets_per_poll": "packets per poll",
    "cycles_per_packet": "cycles per packet",
    "load_latency_product": "load-latency product (cycles·µs)",
    "measured_s": "measured time (s)",
    "goodput_bps": "goodput (bytes/s)",
}
# The lists of entries in a report, by the noun of one entry.
_ENTRY_NOUNS = {"per_core": "core", "per_queue": "queue", "per_class": "class", "per_app": "app"}
_UNITS = {
    "_pps": "packets/s",
    "_bytes": "bytes",
    "_us": "µs",
    "_ns": "ns",
    "_ms": "ms",
}
_SPREAD_WORDS = {
    "std": "std of",
    "ci95": "95% CI half-width of",
    "rel": "relative precision of",
}


def label(name: str) -> str:
    """A readable axis label, with its unit, for a parameter or metric name.

    ``label("traffic.rate_pps")`` is ``"offered load (packets/s)"``, ``label("latency_us.p99")``
    is ``"latency p99 (µs)"``, ``label("cpu.irq")`` is ``"CPU irq (fraction)"`` and
    ``label("per_core.1.cpu.busy")`` is ``"core 1: CPU busy (fraction)"``. A name ending in a
    unit (``_us``, ``_ns``, ``_ms``, ``_pps``, ``_bytes``) keeps its stem and gains the unit;
    anything unknown is returned unchanged.
    """
    if name in _LABELS:
        return _LABELS[name]
    base, _, last = name.rpartition(".")
    if base and last in _SPREAD_WORDS:
        inner = label(base)
        if last == "rel":  # a ratio: the metric's unit does not apply
            inner = re.sub(r" \([^()]*\)$", "", inner)
        return f"{_SPREAD_WORDS[last]} {inner}"
    root, _, rest = name.partition(".")
    index, _, field = rest.partition(".")
    if root in _ENTRY_NOUNS and index.isdigit() and field:
        return f"{_ENTRY_NOUNS[root]} {index}: {label(field)}"
    numbered = _numbered(name)
    if numbered is not None:
        noun, index, field = numbered
        return f"{noun} {index}: {label(field)}"
    if rest:
        if root == "latency_us":
            return f"latency {rest} (µs)"
        if root == "app_latency_us":
            return f"app latency {rest} (µs)"
        if root == "cpu":
            return f"CPU {rest} (fraction)"
        if root == "cpu_ps":
            return f"CPU {rest} time (ps)"
        if root == "packets":
            return f"packets {rest}"
    if root == "latency_us" and not rest:
        return "latency (µs)"
    for suffix, unit in _UNITS.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return f"{name[: -len(suffix)]} ({unit})"
    return name


def _numbered(name: str) -> tuple[str, str, str] | None:
    """``app.0.cost_ns`` → ``("app", "0", "cost_ns")``: a field of a numbered entry."""
    from irqlab.scenario import spec_of

    spec = spec_of(name)
    if spec is None or "table" not in spec:
        return None
    index = name[len(spec["table"]) + 1 :].split(".", 1)[0]
    return spec["noun"], index, spec["field"]


def plot(
    results: pd.DataFrame | str | Path,
    x: str,
    y: str | Sequence[str],
    hue: str | None = None,
    *,
    where: Mapping[str, Any] | None = None,
    logx: bool = False,
    logy: bool = False,
    band: bool = False,
    ci: str = "ci95",
    title: str | None = None,
    out: str | Path | None = None,
    width: float = 6.4,
    height_per_panel: float = 3.2,
) -> Figure:
    """Draws metrics ``y`` against parameter ``x``: one panel per metric, one line per ``hue``.

    ``results`` is a summary or runs data frame, a sweep directory (its ``summary.parquet``,
    else ``summary.csv``) or a ``.parquet``/``.csv`` file. Runs (a ``replication`` column and
    no ``n``) are first reduced to a mean and a 95 % Student-t half-width per point.

    ``where`` keeps only the rows whose parameters equal the given values (a list or tuple
    means any of them). Should another parameter still vary, each of its values gets its own
    line, labelled ``scheme=napi, nic.itr_us=10``: different points are never averaged.

    Each point carries an error bar of half-width ``M.<ci>`` (``"ci95"``, or ``"std"``), or,
    with ``band=True``, a shaded band; a missing value (one replication) draws no bar.
    ``logx`` and ``logy`` drop the non-positive values a log axis cannot show. ``out`` saves
    the figure as PNG or SVG, creating its directory. Returns the
    :class:`~matplotlib.figure.Figure`.
    """
    ys = [y] if isinstance(y, str) else list(y)
    if not ys:
        raise ValueError("y names no metric: give one name or a list of names")
    if out is not None and Path(out).suffix.lower() not in _SAVE_SUFFIXES:
        raise ValueError(
            f"cannot save a figure as {Path(out).suffix or 'a file without suffix'!r} ({out}); "
            f"use one of {', '.join(_SAVE_SUFFIXES)}"
        )

    df = _load(results)
    columns = list(df.columns)
    for key in where or {}:
        _check_column(key, columns, "where key")
    _check_column(x, columns, "x")
    for name in ys:
        _check_column(name, columns, "y")
        _check_measure(name, df[name])
    if hue is not None:
        _check_column(hue, columns, "hue")

    df = _filter(df, where or {})
    if _is_runs(df):
        df = _summarise_runs(df, x, ys, hue)
    for name in ys:
        _check_column(f"{name}.{ci}", list(df.columns), f"{ci!r} spread of y={name!r}")

    varying = _varying_params(df, x, ys, hue)
    keys = ([hue] if hue is not None else []) + varying
    lines = _split(df, keys)

    fig = Figure(figsize=(width, height_per_panel * len(ys)), layout="constrained")
    axes = fig.subplots(nrows=len(ys), ncols=1, sharex=True, squeeze=False)[:, 0]
    for ax, metric in zip(axes, ys, strict=True):
        for i, (values, part) in enumerate(lines):
            _check_unique_x(part, x, keys, values)
            line = _line_label(keys, values, hue, varying)
            _draw_line(ax, part, x, metric, ci, i, line, logx=logx, logy=logy, band=band)
        ax.set_ylabel(label(metric))
        ax.grid(True, alpha=0.3)
        if logy:
            ax.set_yscale("log")
        elif _is_rate(metric):
            ax.yaxis.set_major_formatter(EngFormatter())
        if keys:
            ax.legend(title=hue if not varying else None, fontsize="small")
    if logx:
        for ax in axes:
            ax.set_xscale("log")
    elif _is_rate(x):
        axes[-1].xaxis.set_major_formatter(EngFormatter())
    axes[-1].set_xlabel(label(x))
    if title is not None:
        fig.suptitle(title)

    if out is not None:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight", format=path.suffix.lower()[1:])
    return fig


def _load(results: pd.DataFrame | str | Path) -> pd.DataFrame:
    """The data frame behind ``results``: itself, a sweep directory's summary, or a file."""
    if isinstance(results, pd.DataFrame):
        return results
    from irqlab.experiments import load_results

    return load_results(results, "summary")


def _check_column(name: str, columns: list[str], role: str) -> None:
    """Raises a ValueError naming ``name`` and the columns it was probably meant to be."""
    if name in columns:
        return
    close = difflib.get_close_matches(name, columns, n=3, cutoff=0.6)
    close += [c for c in columns if name in c and c not in close][: 5 - len(close)]
    hint = (
        f"did you mean {', '.join(map(repr, close))}?"
        if close
        else f"available: {', '.join(map(repr, columns[:20]))}{', …' if len(columns) > 20 else ''}"
    )
    raise ValueError(f"unknown column {name!r} for {role}; {hint}")


#: Metrics to suggest for a y that is no metric.
_EXAMPLE_METRICS = "throughput_pps, latency_us.p99, cpu.busy, irq_per_s"


def _check_measure(name: str, column: pd.Series) -> None:
    """Raises a ValueError for a y that is not a measured number: a setting of the scenario
    (``scheme``, ``traffic.rate_pps``: x and hue take those), an entry's name
    (``per_core.0.vectors``), text, or a spread (``throughput_pps.ci95``: the bars show it)."""
    from irqlab.experiments import is_parameter
    from irqlab.report import is_entry_label

    head, _, suffix = name.rpartition(".")
    why = None
    if is_parameter(name):
        why = "is a setting of the scenario, not a measurement (x and hue take settings)"
    elif is_entry_label(name):
        why = "names an entry, it is not a measurement"
    elif name in _BOOKKEEPING or name == "n":
        why = "identifies the rows, it is not a measurement"
    elif suffix in _SUFFIXES and head:
        why = f"is the spread of {head}: give y={head!r}, its error bars show the spread"
    elif not (pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)):
        shown = column.dropna()
        example = f", e.g. {shown.iloc[0]!r}" if len(shown) else ""
        why = f"is not a number (its values are {column.dtype}{example})"
    if why:
        raise ValueError(f"y={name!r} {why}; y takes a metric such as {_EXAMPLE_METRICS}")


def _filter(df: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows whose columns equal ``where``'s values; an empty result is an error."""
    keep = pd.Series(True, index=df.index)
    for key, value in where.items():
        value = _as_stored(key, value)
        if isinstance(value, (list, tuple, set, frozenset)):
            keep &= df[key].isin(list(value))
        else:
            keep &= df[key] == value
        if not keep.any():
            seen = ", ".join(compact(v) for v in pd.unique(df[key]))
            raise ValueError(f"no rows left after where[{key!r}] = {value!r}; it takes: {seen}")
    return df[keep]


def _as_stored(key: str, value: Any) -> Any:
    """A list-valued parameter is stored as text (``"[0, 1]"``): ``[0, 1]`` means that value,
    a list of lists any of them."""
    from irqlab.report import encode_list
    from irqlab.scenario import spec_of

    spec = spec_of(key)
    if spec is None or spec["type"] != "int_list":
        return value
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (list, tuple)) for v in value)
    ):
        return [encode_list(v) for v in value]
    if isinstance(value, (list, tuple)):
        return encode_list(value)
    return value


def _is_runs(df: pd.DataFrame) -> bool:
    """Runs data has one row per replication: a ``replication`` column and no ``n``."""
    return "replication" in df.columns and "n" not in df.columns


def _summarise_runs(df: pd.DataFrame, x: str, ys: list[str], hue: str | None) -> pd.DataFrame:
    """Per point: the mean of each y over replications, its std, 95 % t half-width and rel."""
    if "point" not in df.columns:
        raise ValueError("runs data needs a 'point' column to group replications")
    groups = df.groupby("point", sort=True)
    # A parameter is constant within a point; the outcomes and the seed are not.
    spread = groups.nunique(dropna=False).max()
    means = list(ys)
    if x not in ys and spread.get(x, 1) > 1:
        means.append(x)  # x is itself an outcome (e.g. throughput): average it too
    constant = [
        c
        for c in df.columns
        if c != "point"
        and c not in means
        and (c in (x, hue) or (c not in _BOOKKEEPING and not _is_metric(c, ())))
        and spread[c] <= 1
    ]
    return summarize(df, params=constant, metrics=means)


@cache
def _metric_roots() -> frozenset[str]:
    """First dotted component of every figure in a run's report: outcomes, not parameters."""
    from irqlab.experiments import metric_templates

    return frozenset(m.partition(".")[0] for m in metric_templates())


def _is_metric(column: str, columns: Iterable[str]) -> bool:
    """An outcome of a run: a known report figure, or a column with a spread next to it."""
    cols = set(columns)
    return column.partition(".")[0] in _metric_roots() or any(
        f"{column}.{s}" in cols for s in _SUFFIXES
    )


def _varying_params(df: pd.DataFrame, x: str, ys: list[str], hue: str | None) -> list[str]:
    """Parameter columns, other than ``x`` and ``hue``, that take more than one value.

    Two kinds are left out, since splitting by them would cut lines into single points: a
    column that merely renames ``x``, ``hue`` or an earlier one (its values pair one to one
    with theirs), and the parameter an outcome on the x axis follows (``x="throughput_pps"``
    and ``traffic.rate_pps``: one row per value within each line).
    """
    columns = list(df.columns)
    taken = {x, hue, *ys} | {f"{m}.{s}" for m in ys for s in _SUFFIXES}
    out: list[str] = []
    for c in columns:
        base, _, last = c.rpartition(".")
        if c in taken or c in _BOOKKEEPING or (last in _SUFFIXES and base in columns):
            continue
        if _is_metric(c, columns) or df[c].nunique(dropna=False) <= 1:
            continue
        keys = [k for k in [hue, *out] if k is not None]
        if any(_one_to_one(df, c, k) for k in [x, *keys]):
            continue
        if df.groupby([*keys, c], dropna=False).size().max() > 1:
            out.append(c)
    return out


def _one_to_one(df: pd.DataFrame, a: str, b: str) -> bool:
    """Whether each value of column ``a`` goes with exactly one of ``b``, and the other way."""
    pairs = df[[a, b]].drop_duplicates()
    return not (pairs[a].duplicated().any() or pairs[b].duplicated().any())


def _split(df: pd.DataFrame, keys: list[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """The rows of each line: one group per combination of ``keys`` values, in sorted order."""
    if not keys:
        return [((), df)]
    return [
        (values if isinstance(values, tuple) else (values,), part)
        for values, part in df.groupby(keys, sort=True, dropna=False)
    ]


def _line_label(
    keys: list[str], values: tuple[Any, ...], hue: str | None, varying: list[str]
) -> str | None:
    """``napi`` under a legend titled by the hue, or ``scheme=napi, nic.itr_us=10``."""
    if not keys:
        return None
    if hue is not None and not varying:
        return compact(values[0])
    return _describe(keys, values)


def _describe(keys: list[str], values: tuple[Any, ...]) -> str:
    """``scheme=napi, nic.itr_us=10``."""
    return ", ".join(f"{k}={compact(v)}" for k, v in zip(keys, values, strict=True))


def _check_unique_x(part: pd.DataFrame, x: str, keys: list[str], values: tuple[Any, ...]) -> None:
    """Two rows of one line at the same x differ in something unseen: refuse to draw them."""
    dup = part[x][part[x].duplicated()]
    if len(dup):
        where = _describe(keys, values) or "the only line"
        raise ValueError(
            f"several rows share {x}={compact(dup.iloc[0])} in {where}; narrow them with where= "
            "or split them with hue="
        )


def _draw_line(
    ax: Any,
    part: pd.DataFrame,
    x: str,
    metric: str,
    ci: str,
    style: int,
    name: str | None,
    *,
    logx: bool,
    logy: bool,
    band: bool,
) -> None:
    """One line: marked means sorted by x, with error bars or a band of half-width ``M.<ci>``."""
    part = part.sort_values(x, kind="stable")
    xs = part[x].to_numpy()
    ys = part[metric].to_numpy(dtype=float)
    half = part[f"{metric}.{ci}"].to_numpy(dtype=float)
    keep = np.isfinite(ys)
    if logy:  # a log axis cannot show zero or less: leave those points out
        keep &= ys > 0
    if logx:
        keep &= pd.to_numeric(part[x], errors="coerce").to_numpy(dtype=float) > 0
    xs, ys, half = xs[keep], ys[keep], half[keep]
    color, marker = f"C{style % 10}", _MARKERS[style % len(_MARKERS)]
    ax.plot(xs, ys, marker=marker, markersize=4, color=color, label=name)
    bar = np.isfinite(half)
    if not bar.any():
        return
    if band:
        lo, hi = ys - np.where(bar, half, 0), ys + np.where(bar, half, 0)
        if logy:  # a log axis cannot reach zero: stop the band just above it
            lo = np.where(lo > 0, lo, ys * 1e-3)
        ax.fill_between(xs, lo, hi, where=bar, color=color, alpha=0.2, linewidth=0)
    else:
        ax.errorbar(xs[bar], ys[bar], yerr=half[bar], fmt="none", ecolor=color, capsize=0)


def _is_rate(name: str) -> bool:
    """Packets, events or bytes per second: large numbers best read with k and M prefixes."""
    return name.endswith(("_pps", "_per_s", "_bps"))
