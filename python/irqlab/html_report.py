"""One self-contained HTML page of a result, to read in a browser and to share.

``irqlab report RESULTS -o report.html`` (and :func:`write_report`) turns any result irqlab
writes into one file that opens offline: a run's JSON report (``irqlab run --format json``), a
sweep folder, a ``tune`` folder or a reproduction folder (``irqlab reproduce``). Which one is
told by its files (:func:`detect`); a folder missing what its kind needs is a
:class:`~irqlab.errors.ConfigError` naming the missing files.

The page holds the scenario (every key), the key metrics, the figures, the tables with their
confidence intervals, and the commands that re-run each result. Figures of sweeps, runs and
tunes are Plotly figures (hover to read a value, click a legend entry to hide its line); the
plotly.js bundle is inlined once (about 5 MB), so nothing is fetched from the network.
Reproductions embed their PNG figures as data URIs. Every number in a table carries its exact
value in ``data-value`` (and ``data-ci`` for a 95% half-width), which is how the browser test
compares the page with the results.

The HTML comes from one Jinja2 template (``templates/report.html.j2``) with autoescaping on;
figure specifications are JSON in ``<script type="application/json">`` with ``<``, ``>`` and
``&`` escaped, so no value from a result can end a script or inject markup. Plotly and Jinja2
are imported only here, when a report is made.
"""

from __future__ import annotations

import base64
import json
import math
import numbers
import re
import shlex
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab import shapes
from irqlab.errors import ConfigError, option
from irqlab.files import read_limited, regular_file, write_atomic

__all__ = ["detect", "number", "render_report", "toml_text", "write_report"]

#: The metrics a sweep's table and figures show (when its summary has them).
SWEEP_METRICS = (
    "throughput_pps",
    "loss_ratio",
    "latency_us.mean",
    "latency_us.p99",
    "cpu.busy",
    "irq_per_s",
)
#: What a run's JSON report must hold to be presented.
RUN_KEYS = (
    "scheme",
    "seed",
    "measured_s",
    "packets",
    "offered_pps",
    "throughput_pps",
    "loss_ratio",
    "latency_us",
    "cpu",
    "irq_per_s",
    "polls_per_s",
    "packets_per_poll",
    "cycles_per_packet",
    "load_latency_product",
    "scenario",
)
#: The numeric columns of a tune's tables (``margin[SLO]`` and the like by their prefix).
_TUNE_NUMBERS = (
    "objective",
    "objective_lo",
    "objective_hi",
    "margin",
    "margin_lo",
    "margin_hi",
    "worst_load",
)
#: The columns of a tune's candidates.csv the page reads.
_TUNE_COLUMNS = (
    "candidate",
    "setting",
    "status",
    "reason",
    "replications",
    "objective",
    "objective_lo",
    "objective_hi",
)
#: The files each kind of folder needs.
SWEEP_FILES = ("sweep.json", "runs.parquet", "summary.parquet")
TUNE_FILES = ("tune.json", "candidates.csv", "recommendation.json", "pareto.csv")
#: A reproduction's CSV with more columns than this is listed, not shown (a sweep summary).
MAX_TABLE_COLUMNS = 16
_PERCENTILES = ("mean", "p50", "p90", "p99", "p999", "max")
_CPU = ("irq", "softirq", "ksoftirqd", "app", "idle")
_CPU_COLORS = {
    "irq": "#d62728",
    "softirq": "#1f77b4",
    "ksoftirqd": "#9467bd",
    "app": "#2ca02c",
    "idle": "#c7c7c7",
}
_STATUS_COLORS = {
    "feasible": "#2ca02c",
    "undecided": "#ff7f0e",
    "infeasible": "#d62728",
    "worse": "#7f7f7f",
}
#: The fields of each list of entries a run's tables show (those its entries have).
_ENTRY_COLUMNS = {
    "per_core": (
        "core",
        "vectors",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p99",
        "cpu.busy",
        "cpu.irq",
        "cpu.softirq",
        "cpu.ksoftirqd",
        "cpu.app",
        "irq_per_s",
        "polls_per_s",
    ),
    "per_queue": (
        "queue",
        "core",
        "flows",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p99",
        "irq_per_s",
        "packets_per_poll",
    ),
    "per_class": (
        "class",
        "share",
        "offered_pps",
        "throughput_pps",
        "loss_ratio",
        "latency_us.p50",
        "latency_us.p99",
        "app_latency_us.p99",
        "goodput_bps",
    ),
    "per_app": (
        "app",
        "core",
        "flows",
        "consumed",
        "consumed_pps",
        "dropped_socket",
        "goodput_bps",
        "app_latency_us.p50",
        "app_latency_us.p99",
    ),
}
#: Names in a run's key metrics where the plot label reads poorly.
_RUN_LABELS = {
    "packets.offered": "packets offered",
    "packets.delivered": "packets delivered",
    "packets.dropped_nic": "dropped at the NIC (ring full)",
    "packets.dropped_socket": "dropped at a socket",
    "packets.in_flight": "in flight at the end",
    "packets.in_flight_at_warmup": "in flight at the end of the warm-up",
    "packets.transmitted": "transmitted",
    "packets.dropped_tx": "dropped at a Tx ring",
    "packets.in_tx_ring": "in Tx rings at the end",
    "packets.consumed": "consumed by the apps",
}
_ENTRY_TITLES = {
    "per_core": "Per core",
    "per_queue": "Per queue vector",
    "per_class": "Per traffic class",
    "per_app": "Per application",
}


# --- numbers and TOML as the page shows them ----------------------------------------------------


def number(x: Any) -> str:
    """A value as the page shows it: integers with thousands separators, other numbers to four
    significant digits (whole above 10,000), NaN and None as a dash, text as it is.

    >>> number(100675.0), number(15.43219), number(0.70612), number(20134), number(float("nan"))
    ('100,675', '15.43', '0.7061', '20,134', '—')
    """
    if x is None:
        return "—"
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return "true" if x else "false"
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}"
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return "—"
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == 0:
            return "0"
        if 1e4 <= abs(v) < 1e15:
            return f"{v:,.0f}"
        return f"{v:.4g}"
    if isinstance(x, list | tuple):
        return json.dumps(list(x))
    return str(x)


def exact(x: Any) -> str:
    """A value exactly, for ``data-value``: ``repr`` of a float (it reads back bit for bit)."""
    if x is None:
        return ""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return "true" if x else "false"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        return repr(float(x))
    if isinstance(x, list | tuple):
        return json.dumps(list(x))
    return str(x)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, numbers.Real) and math.isnan(float(x)))


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's; DEL is the one control character JSON leaves as it is
    return json.dumps(text, ensure_ascii=True).replace("\x7f", "\\u007f")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ValueError(f"no TOML for {v!r}")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list | tuple) and bool(v) and all(isinstance(e, Mapping) for e in v)


def toml_text(tree: Mapping[str, Any], _header: tuple[str, ...] = ()) -> str:
    """A nested dict as a TOML document (tables, arrays of tables, scalars and lists): what
    the page offers as ``scenario.toml`` and ``sweep.toml``.

    >>> print(toml_text({"scheme": "napi", "traffic": {"rate_pps": 1e5}}), end="")
    scheme = "napi"
    <BLANKLINE>
    [traffic]
    rate_pps = 100000.0
    """
    lines: list[str] = []
    for k, v in tree.items():
        if not isinstance(v, Mapping) and not _is_table_array(v):
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    for k, v in tree.items():
        path = (*_header, k)
        name = ".".join(_toml_key(p) for p in path)
        if isinstance(v, Mapping):
            lines += ["", f"[{name}]", toml_text(v, path).rstrip("\n")]
        elif _is_table_array(v):
            for entry in v:
                lines += ["", f"[[{name}]]", toml_text(entry, path).rstrip("\n")]
    text = "\n".join(line for line in lines).lstrip("\n")
    return re.sub(r"\n{3,}", "\n\n", text) + "\n"


def _scenario_toml(flat: Mapping[str, Any]) -> str:
    from irqlab.scenario import unflatten

    return toml_text(unflatten(flat))


# --- what the page is made of --------------------------------------------------------------------


@dataclass
class Cell:
    """A table cell: its text, and for numbers the exact value (and 95% half-width)."""

    text: str
    attrs: dict[str, str] = field(default_factory=dict)
    numeric: bool = False
    strong: bool = False


@dataclass
class Table:
    id: str
    caption: str
    headers: list[str]
    rows: list[list[Cell]]
    note: str = ""
    open: bool = True  # shown, or folded in a <details>


@dataclass
class Plot:
    """A Plotly figure: ``spec`` is its JSON (data, layout, config), safe inside <script>."""

    id: str
    caption: str
    spec: str
    wide: bool = False
    kind: str = "plotly"


@dataclass
class Image:
    id: str
    caption: str
    src: str  # a data: URI
    alt: str
    wide: bool = False  # much wider than tall: a row of its own
    kind: str = "image"


@dataclass
class Code:
    """A block of commands or a file, with a download link when ``filename`` is given."""

    text: str
    caption: str = ""
    filename: str = ""
    id: str = ""

    @property
    def is_file(self) -> bool:
        return bool(self.filename)


@dataclass
class Section:
    id: str
    title: str
    items: list[Any] = field(default_factory=list)  # str (a paragraph), Table, Code, list

    def p(self, text: str) -> Section:
        self.items.append(Paragraph(text))
        return self


@dataclass
class Paragraph:
    text: str


@dataclass
class Figures:
    figures: list[Plot | Image]


@dataclass
class Facts:
    """A definition list: (term, description) pairs."""

    pairs: list[tuple[str, str]]


@dataclass
class Page:
    title: str
    kind: str
    source: str
    lede: list[str]
    sections: list[Section]


# --- detecting what RESULTS is -------------------------------------------------------------------


def detect(path: str | Path) -> str:
    """``"run"``, ``"sweep"``, ``"tune"`` or ``"reproduction"``, from what ``path`` holds; a
    :class:`ConfigError` names what is missing from a damaged or unknown one."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file or directory", None)
    if p.is_file():
        if p.suffix.lower() != ".json":
            raise ConfigError(
                f"{p}: not a result irqlab reports on; give a run's JSON report "
                "(irqlab run --format json --out r.json) or a sweep, tune or reproduction folder",
                None,
            )
        return "run"
    if not p.is_dir():
        regular_file(p, "results")  # a pipe or a device: says which
    names = {c.name for c in p.iterdir()}
    if {"tune.json", "candidates.csv", "recommendation.json"} & names:
        missing = [f for f in TUNE_FILES if f not in names]
        if missing:
            hint = " (a tune that did not finish: run its command again to finish it)"
            raise ConfigError(
                f"{p}: a tune folder without {', '.join(missing)}"
                + (hint if "tune.json" in names else ""),
                None,
            )
        return "tune"
    if {"sweep.json", "runs.parquet", "summary.parquet", "journal.sqlite"} & names:
        missing = [f for f in SWEEP_FILES if f not in names]
        if "summary.parquet" in missing and "summary.csv" in names:
            missing.remove("summary.parquet")
        if missing:
            raise ConfigError(
                f"{p}: a sweep folder without {', '.join(missing)} (a sweep that did not "
                "finish: run it again to finish it)",
                None,
            )
        return "sweep"
    if "README.md" in names:
        _reproduction_readme(p)  # checks it
        return "reproduction"
    raise ConfigError(
        f"{p}: not an irqlab results folder: no sweep.json (a sweep), tune.json (a tune) or "
        "README.md of `irqlab reproduce` (a reproduction)",
        None,
    )


def _read_json(path: Path) -> Any:
    data = read_limited(path, "results")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON ({e})", None) from None


def _read_table(path: Path) -> Any:
    import pandas as pd

    regular_file(path, "results")  # pyarrow would wait on a pipe through Ctrl-C
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read it ({e})", None) from None
    except Exception as e:  # pyarrow's errors for a damaged file are not OSError/ValueError
        raise ConfigError(f"{path}: cannot read it ({type(e).__name__}: {e})", None) from None


# --- the common parts -------------------------------------------------------------------------


def _label(name: str) -> str:
    from irqlab.figures import label

    return label(name)


def _value_cell(value: Any, **attrs: Any) -> Cell:
    out = {k.replace("_", "-"): str(v) for k, v in attrs.items()}
    out["data-value"] = exact(value)
    numeric = isinstance(value, numbers.Number) and not isinstance(value, bool)
    return Cell(number(value), out, numeric=numeric)


def _ci_cell(mean: Any, ci: Any, **attrs: Any) -> Cell:
    """``mean ± half-width`` (the half-width left out when it is missing)."""
    cell = _value_cell(mean, **attrs)
    if not _missing(ci) and not _missing(mean):
        cell.text = _mean_ci(mean, ci)
        cell.attrs["data-ci"] = exact(ci)
    return cell


def _mean_ci(mean: Any, ci: Any) -> str:
    """``mean ± half-width`` as the tables show it."""
    if _missing(ci) or _missing(mean):
        return number(mean)
    return f"{number(mean)} ± {number(ci)}"


def _scenario_table(
    flat: Mapping[str, Any], table_id: str, caption: str, *, open_: bool = False
) -> Table:
    """Every key of a scenario, its value and, where it differs, the default."""
    from irqlab.scenario import spec_of

    rows = []
    for key, value in flat.items():
        spec = spec_of(key)
        default = spec["default"] if spec else None
        changed = spec is not None and value != default
        cell = _value_cell(value, data_key=key)
        cell.strong = changed
        rows.append(
            [
                Cell(key, strong=changed),
                cell,
                Cell(number(default) if changed else ""),
            ]
        )
    return Table(
        table_id,
        caption,
        ["key", "value", "default (where it differs)"],
        rows,
        note="Keys set to other than their default are in bold; irqlab keys explains each.",
        open=open_,
    )


def _finite(values: Iterable[Any]) -> list[Any]:
    """Values for a figure's JSON: NaN and infinities as null, numpy scalars as Python's."""
    out = []
    for v in values:
        if hasattr(v, "item") and not isinstance(v, str):
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        out.append(v)
    return out


def _plot(fig_id: str, caption: str, data: list[dict[str, Any]], layout: dict[str, Any]) -> Plot:
    """A Plotly figure (checked by plotly's own validators) as escaped JSON."""
    import plotly.graph_objects as go

    base_layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 40, "b": 60},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": "system-ui, sans-serif", "size": 12},
        "hovermode": "closest",
        "legend": {"itemclick": "toggle", "itemdoubleclick": "toggleothers"},
    }
    axis_style = {"gridcolor": "#e5e5e5", "zerolinecolor": "#bbbbbb", "linecolor": "#888888"}
    merged = {**base_layout, **layout}
    for axis in ("xaxis", "yaxis"):
        merged[axis] = {**axis_style, **layout.get(axis, {})}
    fig = go.Figure(data=data, layout=merged).to_plotly_json()  # validated by plotly
    spec = {
        "data": fig["data"],
        "layout": fig["layout"],
        "config": {
            "displaylogo": False,
            "responsive": True,
            "toImageButtonOptions": {"filename": fig_id},
        },
    }
    text = json.dumps(spec, allow_nan=False, default=_json_default)
    # inside <script>: nothing may close it or open a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Plot(fig_id, caption, text)


def _json_default(v: Any) -> Any:
    if hasattr(v, "tolist"):
        return _finite(v.tolist()) if isinstance(v.tolist(), list) else v.item()
    raise TypeError(f"{type(v).__name__} is not JSON")


def _png(path: Path, fig_id: str, caption: str) -> Image:
    data = read_limited(path, "results")
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ConfigError(f"{path}: not a PNG image", None)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return Image(fig_id, caption, src, alt=caption, wide=width > 2 * max(height, 1))


def _shell(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(w)) for w in words)


# --- a run -----------------------------------------------------------------------------------


def _get(tree: Mapping[str, Any], dotted: str) -> Any:
    node: Any = tree
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit():
            node = node[int(part)]
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return None
    return node


def _run_page(path: Path, title: str | None) -> Page:
    report = _read_json(path)
    if not isinstance(report, Mapping):
        raise ConfigError(f"{path}: not a run's JSON report (irqlab run --format json)", None)
    missing = [k for k in RUN_KEYS if k not in report]
    if len(missing) > 3:
        raise ConfigError(
            f"{path}: not a run's JSON report (irqlab run --format json --out r.json): no "
            + ", ".join(repr(k) for k in missing[:3])
            + ", …",
            None,
        )
    if missing:
        raise ConfigError(
            f"{path}: not a complete run report (irqlab run --format json): no "
            + ", ".join(repr(k) for k in missing),
            None,
        )
    shapes.check_report(report, path)
    scenario = dict(report["scenario"])
    cores = len(report.get("per_core") or ()) or 1
    lede = [
        f"Scheme {report['scheme']}, seed {report['seed']}, replication "
        f"{report.get('replication', 0)}: {scenario.get('traffic.kind', '')} traffic at "
        f"{number(scenario.get('traffic.rate_pps'))} packets/s, "
        f"{number(report['measured_s'] * 1e3)} ms measured after "
        f"{number(scenario.get('run.warmup_ms'))} ms of warm-up; {cores} "
        f"core{'s' if cores > 1 else ''}, {number(scenario.get('nic.queues', 1))} queue "
        f"vector{'s' if scenario.get('nic.queues', 1) != 1 else ''}.",
        "One run: its numbers carry no confidence intervals. For intervals, replicate it "
        "in a sweep (irqlab sweep, docs/sweeps.md); its report shows mean ± 95% half-width.",
    ]

    groups: list[tuple[str, list[str]]] = [
        ("traffic", ["offered_pps", "throughput_pps", "loss_ratio"]),
        (
            "packets",
            [f"packets.{k}" for k in ("offered", "delivered", "dropped_nic", "dropped_socket")]
            + ["packets.in_flight", "packets.in_flight_at_warmup"],
        ),
    ]
    if scenario.get("host.forward"):
        groups.append(
            ("forwarding", [f"packets.{k}" for k in ("transmitted", "dropped_tx", "in_tx_ring")])
        )
    groups.append(("latency", [f"latency_us.{k}" for k in _PERCENTILES]))
    if report.get("per_app"):
        groups.append(
            (
                "apps",
                ["packets.consumed", "goodput_bps", "app_latency_us.p50", "app_latency_us.p99"],
            )
        )
    groups += [
        (
            "cpu" if cores == 1 else f"cpu (mean of {cores} cores)",
            [f"cpu.{k}" for k in ("busy", *_CPU)],
        ),
        ("interrupts", ["irq_per_s", "polls_per_s", "packets_per_poll"]),
        ("efficiency", ["cycles_per_packet", "load_latency_product"]),
    ]
    rows = []
    for group, keys in groups:
        first = True
        for key in keys:
            value = _get(report, key)
            if value is None and key.startswith("packets."):
                continue
            rows.append(
                [
                    Cell(group if first else ""),
                    Cell(_RUN_LABELS.get(key) or _label(key)),
                    Cell(key),
                    _value_cell(value, data_key=key),
                ]
            )
            first = False
    metrics = Section("metrics", "Key metrics")
    metrics.items.append(Table("key-metrics", "", ["group", "metric", "name", "value"], rows))

    figures = [_latency_figure(report), _cpu_figure(report)]
    figs = Section("figures", "Figures")
    figs.p(
        "Hover over a bar to read its value; click a legend entry to hide or show its series "
        "(double-click: that series alone)."
    )
    figs.items.append(Figures(figures))

    entries = Section("entries", "Cores, queues, classes and apps")
    for name, columns in _ENTRY_COLUMNS.items():
        items = report.get(name) or []
        if len(items) > 1 or (name == "per_app" and items):
            entries.items.append(_entry_table(name, items, columns))
    sections = [metrics, figs]
    if entries.items:
        sections.append(entries)

    every = Section("every-metric", "Every metric")
    flat = _flatten({k: v for k, v in report.items() if k != "scenario"})
    every.items.append(
        Table(
            "every-metric-table",
            f"{len(flat)} figures, named as in irqlab run --format json (dotted)",
            ["name", "value"],
            [[Cell(k), _value_cell(v, data_key=k)] for k, v in flat.items()],
            open=False,
        )
    )
    sections.append(every)

    scen = Section("scenario", "Scenario")
    scen.p(
        f"Every key of the scenario that ran ({len(scenario)} keys; the run's echo of what "
        "the core was given)."
    )
    scen.items.append(_scenario_table(scenario, "scenario-table", "the scenario"))
    sections.append(scen)

    toml = _scenario_toml(scenario)
    out_name = path.name
    rerun = Section("rerun", "How to re-run")
    rerun.p(
        "Save the scenario as scenario.toml (or download it) and run it: the same scenario "
        "and seed give the same report, bit for bit."
    )
    rerun.items.append(
        Code(
            _shell(["irqlab", "run", "scenario.toml", "--format", "json", "--out", out_name]),
            "the command",
            id="command",
        )
    )
    rerun.items.append(Code(toml, "scenario.toml: every key as it ran", "scenario.toml", "toml"))
    sections.append(rerun)
    return Page(
        title or f"irqlab run — scheme {report['scheme']}, seed {report['seed']}",
        "run",
        str(path),
        lede,
        sections,
    )


def _flatten(report: Mapping[str, Any]) -> dict[str, Any]:
    from irqlab.report import flatten_report

    return flatten_report(report)


def _entry_table(name: str, items: list[Mapping[str, Any]], columns: Sequence[str]) -> Table:
    shown = [c for c in columns if any(_get(e, c) is not None for e in items)]
    rows = []
    for i, entry in enumerate(items):
        rows.append([_value_cell(_get(entry, c), data_key=f"{name}.{i}.{c}") for c in shown])
    return Table(f"{name}-table", _ENTRY_TITLES[name], [_label(c) for c in shown], rows)


def _latency_figure(report: Mapping[str, Any]) -> Plot:
    data = []
    series = [("latency_us", "to the end of protocol processing")]
    if report.get("per_app") and report.get("app_latency_us"):
        series.append(("app_latency_us", "to the application"))
    for key, name in series:
        lat = report[key]
        ys = [lat.get(k) for k in _PERCENTILES]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": list(_PERCENTILES),
                "y": _finite(ys),
                "customdata": [number(y) for y in ys],  # as the tables show them
                "hovertemplate": "%{x}: %{customdata} µs<extra>" + name + "</extra>",
            }
        )
    layout = {
        "title": {"text": "Latency: mean and percentiles"},
        "yaxis": {"title": {"text": "latency (µs)"}},
        "barmode": "group",
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.15},
    }
    return _plot("latency", "Latency of the packets, from NIC arrival (µs)", data, layout)


def _cpu_figure(report: Mapping[str, Any]) -> Plot:
    per_core = report.get("per_core") or []
    if len(per_core) > 1:
        names = [f"core {c.get('core', i)}" for i, c in enumerate(per_core)]
        shares = [c.get("cpu") or {} for c in per_core]  # a field edited away: no bar
    else:
        names, shares = ["host"], [report["cpu"]]
    data = []
    for k in _CPU:
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": k,
                "y": names,
                "x": _finite([s.get(k) for s in shares]),
                "customdata": [number(s.get(k)) for s in shares],
                "marker": {"color": _CPU_COLORS[k]},
                "hovertemplate": "%{y}: cpu." + k + " = %{customdata}<extra></extra>",
            }
        )
    layout = {
        "title": {"text": "Where the CPU time goes"},
        "barmode": "stack",
        "xaxis": {"title": {"text": "share of the measured time"}, "tickformat": ".0%"},
        "yaxis": {"autorange": "reversed"},
        "legend": {"orientation": "h", "traceorder": "normal", "y": -0.3},
        "height": max(260, 120 + 40 * len(names)),
    }
    return _plot("cpu", "CPU time by category", data, layout)


# --- a sweep ---------------------------------------------------------------------------------


def _sweep_page(path: Path, title: str | None) -> Page:
    from irqlab.report import count

    spec = _read_json(path / "sweep.json")
    if not isinstance(spec, Mapping) or not {"base", "axes", "replications"} <= set(spec):
        raise ConfigError(f"{path / 'sweep.json'}: not a sweep definition (damaged?)", None)
    shapes.check(spec, shapes.SWEEP_DEFINITION, path / "sweep.json")
    summary_path = path / "summary.parquet"
    if not summary_path.exists():
        summary_path = path / "summary.csv"
    summary = _read_table(summary_path)
    runs = _read_table(path / "runs.parquet")
    axes = list(spec["axes"])
    for key in [*axes, "point", "n"]:
        if key not in summary.columns:
            raise ConfigError(f"{summary_path}: no column {key!r} (damaged?)", None)
    for key in ("point", "replication"):
        if key not in runs.columns:
            raise ConfigError(f"{path / 'runs.parquet'}: no column {key!r} (damaged?)", None)
    shapes.check_columns(
        summary,
        summary_path,
        integers=("point", "n"),
        numbers_=shapes.metric_columns(list(summary.columns)),
        least={"n": 1, "point": 0},
    )
    shapes.check_columns(
        runs, path / "runs.parquet", integers=("point", "replication"), least={"point": 0}
    )
    summary = summary.sort_values("point", kind="stable")
    metrics = [m for m in SWEEP_METRICS if m in summary.columns]
    reps = sorted({int(n) for n in summary["n"]})
    n_text = (
        count(reps[0], "replication") if len(reps) == 1 else f"{reps[0]}–{reps[-1]} replications"
    )
    lede = [
        f"{count(len(summary), 'point')} × {n_text} ({count(len(runs), 'run')}); axes: "
        + "; ".join(f"{k} ({count(len(v), 'value')})" for k, v in spec["axes"].items())
        + ".",
        "Each number is the mean over the replications ± the half-width of its 95% "
        "Student-t confidence interval (n − 1 degrees of freedom); the figures draw the same "
        "intervals as error bars. Replication r of every point uses the same random streams "
        "(common random numbers).",
    ]

    table = Section("metrics", "Key metrics, per point")
    headers = ["point", *axes, "n", *(_label(m) for m in metrics)]
    rows = []
    for _, row in summary.iterrows():
        p = int(row["point"])
        cells = [_value_cell(p, data_point=p, data_key="point")]
        cells += [_value_cell(_py(row[a]), data_point=p, data_key=a) for a in axes]
        cells.append(_value_cell(int(row["n"]), data_point=p, data_key="n"))
        for m in metrics:
            ci = row[f"{m}.ci95"] if f"{m}.ci95" in summary.columns else None
            cells.append(_ci_cell(_py(row[m]), _py(ci), data_point=p, data_key=m))
        rows.append(cells)
    table.items.append(
        Table(
            "summary-table",
            "mean ± 95% confidence half-width",
            headers,
            rows,
            note=f"Every metric of every point: {summary_path.name} "
            "(columns M, M.std, M.ci95, M.rel).",
        )
    )

    figs = Section("figures", "Figures")
    if axes:
        x, lines = _sweep_x(spec["axes"])
        figs.p(
            f"Each metric against {x}"
            + (f", a line per value of {', '.join(lines)}" if lines else "")
            + ". Hover over a point to read its mean, interval and n; click a legend entry to "
            "hide or show its line (double-click: that line alone)."
        )
        figs.items.append(Figures([_sweep_figure(summary, x, lines, m) for m in metrics]))

    scen = Section("scenario", "Scenario")
    settings = [
        ("replications", str(spec["replications"])),
        ("seed", "the base's run.seed" if spec.get("seed") is None else str(spec["seed"])),
        (
            "warm-up",
            "the base's run.warmup_ms"
            if spec.get("warmup") is None
            else ("auto (MSER-5)" if spec["warmup"] == "auto" else f"{spec['warmup']:g} ms"),
        ),
    ]
    if spec.get("precision"):
        prec = spec["precision"]
        settings.append(
            (
                "precision",
                f"{', '.join(prec['metrics'])} within {prec['relative']:g} of the mean at "
                f"{prec['confidence']:g}, at most {prec['max_replications']} replications",
            )
        )
    settings += [(f"axis {k}", ", ".join(number(x) for x in v)) for k, v in spec["axes"].items()]
    scen.items.append(Facts(settings))
    scen.items.append(
        _scenario_table(
            dict(spec["base"]),
            "base-table",
            "the base scenario: the keys the sweep sets (every other key at its default)",
            open_=True,
        )
    )
    try:
        resolved = _point_scenario(runs)
    except ConfigError as e:
        raise ConfigError(f"{path / 'runs.parquet'}: point 0, replication 0: {e}", e.key) from None
    if resolved:
        scen.items.append(
            _scenario_table(resolved, "point0-table", "point 0, replication 0: every key")
        )

    rerun = Section("rerun", "How to re-run")
    toml = _sweep_toml(spec)
    rerun.p(
        "Save the sweep below as sweep.toml (or download it) and run it; into this folder it "
        "reuses every run already there, into a new one it runs them all again and gives the "
        "same tables row for row."
    )
    rerun.items.append(
        Code(_shell(["irqlab", "sweep", "sweep.toml", "--out", str(path)]), id="command")
    )
    rerun.items.append(Code(toml, "sweep.toml", "sweep.toml", "toml"))
    rerun.p(
        "Any one run alone, exactly as it ran (point P, replication R; the table's first "
        "column is P):"
    )
    last = int(summary["point"].max())
    rerun.items.append(
        Code(
            "\n".join(
                [
                    _shell(["irqlab", "rerun", str(path), "--point", "0", "--replication", "0"]),
                    _shell(
                        [
                            "irqlab",
                            "rerun",
                            str(path),
                            "--point",
                            str(last),
                            "--replication",
                            str(reps[0] - 1),
                            "--format",
                            "json",
                        ]
                    ),
                ]
            ),
            "",
        )
    )
    if axes:
        rerun.items.append(_plot_command(path, x, lines, metrics))
    sections = [table, figs, scen, rerun] if axes else [table, scen, rerun]
    return Page(
        title or f"irqlab sweep — {path.name or path.resolve().name}",
        "sweep",
        str(path),
        lede,
        sections,
    )


def _plot_command(path: Path, x: str, lines: list[str], metrics: list[str]) -> Code:
    """The `irqlab plot` command that draws the page's first figures as a PNG."""
    return Code(
        _shell(
            [
                "irqlab",
                "plot",
                str(path),
                "--x",
                x,
                *(w for m in metrics[:3] for w in ("--y", m)),
                *(("--hue", lines[0]) if len(lines) == 1 else ()),
            ]
        ),
        "the same figures as PNG, from the command line",
    )


def _py(v: Any) -> Any:
    """A numpy scalar as Python's."""
    if hasattr(v, "item") and not isinstance(v, str):
        return v.item()
    return v


def _point_scenario(runs: Any) -> dict[str, Any]:
    """The resolved scenario of point 0, replication 0, as ``irqlab rerun`` runs it."""
    from irqlab.experiments import row_scenario

    match = runs[(runs["point"] == 0) & (runs["replication"] == 0)]
    if match.empty:
        return {}
    return row_scenario(match.iloc[0].to_dict())


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _sweep_x(axes: Mapping[str, Sequence[Any]]) -> tuple[str, list[str]]:
    """The x of the figures (the first axis of numbers, else the first axis) and the axes
    that split lines (the others)."""
    keys = list(axes)
    x = next((k for k in keys if all(_is_number(v) for v in axes[k])), keys[0])
    return x, [k for k in keys if k != x]


def _sweep_figure(summary: Any, x: str, lines: list[str], metric: str) -> Plot:
    data = []
    groups = summary.groupby(lines, sort=False, dropna=False) if lines else [((), summary)]
    for values, part in groups:
        values = values if isinstance(values, tuple) else (values,)
        part = part.sort_values(x, kind="stable")
        if not lines:
            name = metric
        elif len(lines) == 1:
            name = number(_py(values[0]))
        else:
            name = ", ".join(f"{k}={number(_py(v))}" for k, v in zip(lines, values, strict=True))
        ci_col = f"{metric}.ci95"
        ci = _finite(part[ci_col]) if ci_col in part.columns else [None] * len(part)
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": _finite(part[x]),
                "y": _finite(part[metric]),
                "error_y": {
                    "type": "data",
                    "array": ci,
                    "visible": True,
                    "thickness": 1.2,
                    "width": 3,
                },
                # the values as the table shows them
                "customdata": [
                    [_mean_ci(m, c), number(_py(v)), int(n), int(p)]
                    for m, c, v, n, p in zip(
                        _finite(part[metric]), ci, part[x], part["n"], part["point"], strict=True
                    )
                ],
                "hovertemplate": (
                    f"{x} = %{{customdata[1]}}<br>{metric} = %{{customdata[0]}}"
                    "<br>n = %{customdata[2]}, point %{customdata[3]}<extra>%{fullData.name}"
                    "</extra>"
                ),
            }
        )
    xs = [v for v in _finite(summary[x]) if _is_number(v)]
    spread = len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) >= 100
    layout = {
        "title": {"text": _label(metric)},
        # values over two decades or more (a geometric axis): a log axis shows them all
        "xaxis": {"title": {"text": _label(x)}, "type": "log" if spread else "-"},
        "yaxis": {"title": {"text": _label(metric)}},
        "legend": {"title": {"text": lines[0] if len(lines) == 1 else ""}},
        "showlegend": bool(lines),
    }
    return _plot(f"sweep-{metric}", f"{_label(metric)} against {_label(x)}", data, layout)


def _sweep_toml(spec: Mapping[str, Any]) -> str:
    """A sweep file that runs the sweep ``sweep.json`` describes."""
    from irqlab.scenario import unflatten

    sweep: dict[str, Any] = {"replications": spec["replications"]}
    if spec.get("seed") is not None:
        sweep["seed"] = spec["seed"]
    if spec.get("warmup") is not None:
        sweep["warmup"] = spec["warmup"]
    if spec.get("precision"):
        sweep["precision"] = dict(spec["precision"])
    tree = {"sweep": sweep, "base": unflatten(spec["base"]), "axes": dict(spec["axes"])}
    return toml_text(tree)


# --- a tune ----------------------------------------------------------------------------------


def _tune_scenario(scenario: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """A tune's scenario as tune.json holds it (every key), checked as a scenario: an edited
    one is a page of what it now says, or one line naming the field."""
    from irqlab.errors import ConfigWarning
    from irqlab.scenario import resolve

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)  # the tune warned when it ran
            return resolve(dict(scenario))
    except ConfigError as e:
        raise ConfigError(f"{path / 'tune.json'}: field scenario: {e}", "scenario") from None


def _tune_page(path: Path, title: str | None) -> Page:
    from irqlab.report import count
    from irqlab.tuning import Slo, TuneResult, closest, label

    definition = _read_json(path / "tune.json")
    rec = _read_json(path / "recommendation.json")
    need = {"scenario", "slos", "minimize", "candidates", "loads", "confidence", "replications"}
    if not isinstance(definition, Mapping) or not need <= set(definition):
        raise ConfigError(f"{path / 'tune.json'}: not a tune's definition (damaged?)", None)
    if not isinstance(rec, Mapping) or "feasible" not in rec:
        raise ConfigError(f"{path / 'recommendation.json'}: damaged (no 'feasible')", None)
    shapes.check(definition, shapes.TUNE_DEFINITION, path / "tune.json")
    shapes.check(rec, shapes.TUNE_RECOMMENDATION, path / "recommendation.json")
    definition = {**definition, "scenario": _tune_scenario(definition["scenario"], path)}
    table = _read_table(path / "candidates.csv")
    front = _read_table(path / "pareto.csv")
    try:
        slos = [Slo.parse(s) for s in definition["slos"]]
    except ConfigError as e:
        raise ConfigError(f"{path / 'tune.json'}: field slos: {e}", "slos") from None
    objective = definition["minimize"]
    for col in (*_TUNE_COLUMNS, slos[0].metric):
        if col not in table.columns:
            raise ConfigError(f"{path / 'candidates.csv'}: no column {col!r} (damaged?)", None)
    for col in ("objective", slos[0].metric):  # the frontier's line
        if col not in front.columns:
            raise ConfigError(f"{path / 'pareto.csv'}: no column {col!r} (damaged?)", None)
    measured = [objective, *(s.metric for s in slos)]
    for name, t in (("candidates.csv", table), ("pareto.csv", front)):
        shapes.check_columns(
            t,
            path / name,
            integers=("candidate", "replications"),
            numbers_=[c for c in t.columns if c.split("[")[0] in _TUNE_NUMBERS or c in measured],
        )
    counts = table["status"].value_counts().to_dict()
    runs = rec.get("runs")
    loads = definition["loads"]
    lede = [
        f"SLOs: {'; '.join(str(s) for s in slos)} — each at every load "
        f"({', '.join(number(x) for x in loads)} packets/s), decided at "
        f"{definition['confidence']:g} confidence (Bonferroni over SLOs and loads). "
        f"Objective: the least {objective} (mean over the loads).",
        f"{count(len(table), 'candidate')}, "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; {count(runs, 'run') if isinstance(runs, int) else '? runs'}, "
        f"{definition['replications'][0]}–"
        f"{definition['replications'][1]} replications per candidate and load.",
    ]

    recommend = Section("recommendation", "Recommendation")
    pick = None
    if rec["feasible"] and rec.get("recommended") is not None:
        name = label(rec["recommended"])
        match = table[table["setting"] == name]
        pick = int(match.iloc[0]["candidate"]) if len(match) else None
        recommend.p(f"Recommended: {name} (candidate {number(pick)}).")
        recommend.items.append(Code("\n".join(rec.get("commands", [])), "the commands to type"))
        if pick is not None:
            row = match.iloc[0]
            facts = [
                (
                    objective,
                    f"{number(row['objective'])} (95% CI {number(row['objective_lo'])} to "
                    f"{number(row['objective_hi'])})",
                )
            ]
            for s in slos:
                margin = row.get(f"margin[{s}]")
                facts.append(
                    (
                        str(s),
                        f"{s.metric} = {number(_py(row.get(s.metric)))} at the worst load; "
                        f"margin {number(_py(margin))} (interval "
                        f"{number(_py(row.get(f'margin_lo[{s}]')))} to "
                        f"{number(_py(row.get(f'margin_hi[{s}]')))})",
                    )
                )
            recommend.items.append(Facts(facts))
        runners = table[(table["status"] == "feasible") & (table["candidate"] != pick)]
        runners = runners.sort_values(["objective", "candidate"]).head(5)
        if len(runners):
            recommend.p(
                "Runners-up: "
                + "; ".join(
                    f"{r['setting']} ({objective} = {number(_py(r['objective']))})"
                    for _, r in runners.iterrows()
                )
                + "."
            )
    else:
        recommend.p("No candidate meets every SLO. The closest, by their worst relative shortfall:")
        result = TuneResult(None, False, [], table, slos, objective, loads, 0)
        recommend.items.append(
            Facts(
                [
                    (
                        str(r["setting"]),
                        ", ".join(f"{s.metric} = {number(_py(r.get(s.metric)))}" for s in slos),
                    )
                    for _, r in closest(result).head(5).iterrows()
                ]
            )
        )

    figs = Section("figures", "Figures")
    figs.p(
        f"Every candidate's {objective} against {slos[0].metric} (means; bars: 95% intervals, "
        f"{slos[0].metric} at its worst load), coloured by status; the dashed line is the "
        "Pareto frontier. Hover over a point for its setting; click a legend entry to hide or "
        "show a status."
    )
    figs.items.append(Figures([_pareto_figure(table, front, slos[0], objective, pick)]))

    cands = Section("candidates", "Candidates")
    cands.items.append(_candidates_table(table, slos))

    scen = Section("scenario", "Scenario")
    scenario = dict(definition["scenario"])
    scen.p("The scenario every candidate starts from (its knobs then change it).")
    scen.items.append(_scenario_table(scenario, "scenario-table", "the scenario"))

    rerun = Section("rerun", "How to re-run")
    command, note = _tune_command(definition, path, rec)
    rerun.p(
        "Save the scenario as scenario.toml (or download it) and run the command: the same "
        "seed gives the same decisions with any executor. Into this folder it resumes from "
        "runs.jsonl (nothing left to run); into a new one it runs the race again."
    )
    rerun.items.append(Code(command, id="command"))
    if note:
        rerun.p(note)
    rerun.items.append(Code(_scenario_toml(scenario), "scenario.toml", "scenario.toml", "toml"))
    return Page(
        title or f"irqlab tune — {path.name or path.resolve().name}",
        "tune",
        str(path),
        lede,
        [recommend, figs, cands, scen, rerun],
    )


def _candidates_table(table: Any, slos: Sequence[Any]) -> Table:
    headers = ["candidate", "setting", "status", "why", "replications", "objective (95% CI)"]
    for s in slos:
        headers += [f"{s.metric} (worst load)", f"margin to {s} (interval)", "worst load"]
    rows = []
    for _, r in table.iterrows():
        c = int(r["candidate"])
        reason = r.get("reason")
        cells = [
            _value_cell(c, data_candidate=c, data_key="candidate"),
            Cell(str(r["setting"])),
            _value_cell(str(r["status"]), data_candidate=c, data_key="status"),
            Cell("" if _missing(reason) else str(reason)),
            _value_cell(_py(r.get("replications")), data_candidate=c, data_key="replications"),
            _interval_cell(r, "objective", "objective_lo", "objective_hi", c),
        ]
        for s in slos:
            cells.append(_value_cell(_py(r.get(s.metric)), data_candidate=c, data_key=s.metric))
            cells.append(_interval_cell(r, f"margin[{s}]", f"margin_lo[{s}]", f"margin_hi[{s}]", c))
            cells.append(
                _value_cell(
                    _py(r.get(f"worst_load[{s}]")), data_candidate=c, data_key=f"worst_load[{s}]"
                )
            )
        rows.append(cells)
    return Table(
        "candidates-table",
        "every candidate, in the search order",
        headers,
        rows,
        note="feasible: meets every SLO with the stated confidence; infeasible: misses one; "
        "worse: costs more than the best feasible one (paired interval); undecided: neither "
        "shown within the replications allowed.",
    )


def _interval_cell(row: Any, key: str, lo: str, hi: str, candidate: int) -> Cell:
    cell = _value_cell(_py(row.get(key)), data_candidate=candidate, data_key=key)
    low, high = _py(row.get(lo)), _py(row.get(hi))
    if not _missing(row.get(key)) and not _missing(low) and not _missing(high):
        cell.text = f"{number(_py(row.get(key)))} ({number(low)} to {number(high)})"
        cell.attrs["data-lo"], cell.attrs["data-hi"] = exact(low), exact(high)
    return cell


def _pareto_figure(table: Any, front: Any, slo: Any, objective: str, pick: int | None) -> Plot:
    t = table.dropna(subset=["objective", slo.metric])
    data = []
    sign = -1 if slo.upper else 1  # metric = bound − margin (a ceiling), bound + margin (a floor)

    def metric_interval(part: Any) -> tuple[list[Any], list[Any]]:
        lo = part.get(f"margin_lo[{slo}]")
        hi = part.get(f"margin_hi[{slo}]")
        if lo is None or hi is None:
            return [None] * len(part), [None] * len(part)
        ends_a = slo.bound + sign * lo
        ends_b = slo.bound + sign * hi
        top = _finite(ends_a.where(ends_a > ends_b, ends_b) - part[slo.metric])
        bottom = _finite(part[slo.metric] - ends_a.where(ends_a < ends_b, ends_b))
        return top, bottom

    for status, color in _STATUS_COLORS.items():
        part = t[t["status"] == status]
        if not len(part):
            continue
        top, bottom = metric_interval(part)
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": status,
                "x": _finite(part["objective"]),
                "y": _finite(part[slo.metric]),
                "marker": {"color": color, "size": 8, "opacity": 0.8},
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": _finite(part["objective_hi"] - part["objective"]),
                    "arrayminus": _finite(part["objective"] - part["objective_lo"]),
                    "thickness": 1,
                    "width": 0,
                },
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": top,
                    "arrayminus": bottom,
                    "thickness": 1,
                    "width": 0,
                },
                "text": [str(s) for s in part["setting"]],
                "customdata": [
                    [int(c), "" if _missing(r) else str(r), number(_py(o)), number(_py(v))]
                    for c, r, o, v in zip(
                        part["candidate"],
                        part["reason"],
                        part["objective"],
                        part[slo.metric],
                        strict=True,
                    )
                ],
                "hovertemplate": (
                    "%{text}<br>candidate %{customdata[0]}<br>"
                    f"{objective} = %{{customdata[2]}}<br>{slo.metric} = %{{customdata[3]}}<br>"
                    "%{customdata[1]}<extra>" + status + "</extra>"
                ),
            }
        )
    if len(front):
        f = front.sort_values("objective")
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Pareto frontier",
                "x": _finite(f["objective"]),
                "y": _finite(f[slo.metric]),
                "line": {"color": "black", "dash": "dash", "width": 1},
                "hoverinfo": "skip",
            }
        )
    if len(t):
        lo, hi = float(t["objective_lo"].min()), float(t["objective_hi"].max())
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = float(t["objective"].min()), float(t["objective"].max())
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": str(slo),
                "x": [lo, hi],
                "y": [slo.bound, slo.bound],
                "line": {"color": "#d62728", "width": 1},
                "hovertemplate": f"{slo}<extra></extra>",
            }
        )
    if pick is not None:
        row = t[t["candidate"] == pick]
        if len(row):
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": "recommended",
                    "x": _finite(row["objective"]),
                    "y": _finite(row[slo.metric]),
                    "marker": {
                        "symbol": "star",
                        "size": 18,
                        "color": "gold",
                        "line": {"color": "black", "width": 1},
                    },
                    "text": [str(s) for s in row["setting"]],
                    "hovertemplate": "recommended: %{text}<extra></extra>",
                }
            )
    layout = {
        "title": {"text": "Every candidate: objective against the first SLO's metric"},
        "xaxis": {"title": {"text": _label(objective)}},
        "yaxis": {"title": {"text": _label(slo.metric)}},
        "height": 480,
    }
    return _plot("pareto", f"{objective} against {slo.metric}", data, layout)


def _knob_text(value: Any) -> str | None:
    """A knob value as ``--knob`` reads it back (None: it cannot be written in a list)."""
    from irqlab.tuning import _scalar

    if isinstance(value, str):
        if "," in value or ".." in value or not value.strip():
            return None
        return value if _scalar(value) == value else _toml_string(value)
    return _toml_value(value)


def _tune_command(
    definition: Mapping[str, Any], path: Path, rec: Mapping[str, Any]
) -> tuple[str, str]:
    """The ``irqlab tune`` command that runs this tune again, and a note when the candidates
    cannot be given as knobs."""
    from irqlab.tuning import _effective, default_candidates, knob_candidates

    base = dict(definition["scenario"])
    loads = [float(x) for x in definition["loads"]]
    candidates = [dict(c) for c in definition["candidates"]]
    words = ["irqlab", "tune", "scenario.toml"]
    for s in definition["slos"]:
        words += ["--slo", s]
    note = ""
    knobs: list[tuple[str, list[Any]]] | None = None
    try:
        same_as_default = _effective(default_candidates(base), base, loads) == candidates
    except ConfigError:
        same_as_default = False
    if not same_as_default:
        keys = list(dict.fromkeys(k for c in candidates for k in c))
        knobs = [(k, list(dict.fromkeys(c[k] for c in candidates if k in c))) for k in keys]
        try:
            expressible = _effective(knob_candidates(knobs), base, loads) == candidates
        except ConfigError:
            expressible = False
        texts = [[_knob_text(v) for v in values] for _, values in knobs]
        if expressible and all(t is not None for vs in texts for t in vs):
            for (k, _), vs in zip(knobs, texts, strict=True):
                words += ["--knob", f"{k}={','.join(t for t in vs if t is not None)}"]
        else:
            note = (
                "Its candidates are not every combination of a few knobs' values (a tune from "
                "Python with its own list?): give them as --knob, or call irqlab.tune with "
                "the candidates listed in tune.json."
            )
    if definition["minimize"] != "cpu.busy":
        words += ["--minimize", definition["minimize"]]
    if loads != [float(base["traffic.rate_pps"])]:
        words += ["--load-range", ",".join(_toml_value(x) for x in definition["loads"])]
    if float(definition["confidence"]) != 0.95:
        words += ["--confidence", repr(float(definition["confidence"]))]
    lo, hi = definition["replications"]
    if (lo, hi) != (3, 10):
        words += ["--replications", f"{lo}..{hi}"]
    iface = _iface(rec.get("commands") or [])
    if iface and iface != "IFACE":
        words += ["--iface", iface]
    words += ["--out", str(path)]
    return _shell(words), note


def _iface(commands: Sequence[str]) -> str | None:
    for c in commands:
        m = re.match(r"ethtool -C (\S+)", c) or re.search(r"/sys/class/net/([^/]+)/", c)
        if m:
            return m.group(1)
    return None


# --- a reproduction -------------------------------------------------------------------------


@dataclass
class _Readme:
    title: str
    study: str
    quick: bool
    bullets: list[str]
    files: list[str]  # the files and folders the bullets name, in order


def _reproduction_readme(path: Path) -> _Readme:
    readme = path / "README.md"
    try:
        text = read_limited(readme, "results").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{readme}: cannot read it ({e})", None) from None
    m = re.search(r"reproduction by `irqlab reproduce ([A-Za-z0-9_-]+)`", text)
    if not m:
        raise ConfigError(
            f"{path}: not an irqlab results folder: its README.md is not one of `irqlab "
            "reproduce`, and there is no sweep.json (a sweep) or tune.json (a tune)",
            None,
        )
    lines = text.splitlines()
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), m.group(1))
    bullets = [ln[2:].strip() for ln in lines if ln.startswith("- ")]
    files = [f for b in bullets for f in re.findall(r"`([^`\s]+)`", b)]
    files = [f for f in files if re.search(r"(\.png|\.csv|\.md|/)$", f)]
    missing = [f for f in files if not _present(path, f)]
    files = [g for f in files for g in _expand(path, f)]
    if missing:
        raise ConfigError(
            f"{path}: a reproduction folder without {', '.join(missing)} (its README.md lists "
            f"them; run `irqlab reproduce {m.group(1)}` again to make them)",
            None,
        )
    quick = "A quick" in text
    return _Readme(title, m.group(1), quick, bullets, files)


def _expand(path: Path, name: str) -> list[str]:
    """A name a README lists (``fig10_*.csv``, ``fig10_*/``) as the names it stands for."""
    if "*" not in name:
        return [name]
    folder = name.endswith("/")
    found = sorted(p for p in path.glob(name.rstrip("/")) if p.is_dir() == folder)
    return [p.name + ("/" if folder else "") for p in found]


def _present(path: Path, name: str) -> bool:
    if "*" in name:
        return bool(_expand(path, name))
    return (path / name).is_dir() if name.endswith("/") else (path / name).is_file()


def _inline(text: str) -> str:
    """A README line as plain text: `code` marks dropped (the template escapes the rest)."""
    return text.replace("`", "")


def _reproduction_page(path: Path, title: str | None) -> Page:
    readme = _reproduction_readme(path)
    lede = [
        f"A {'quick (coarse)' if readme.quick else 'full'} reproduction by irqlab reproduce "
        f"{readme.study}.",
        "Tables show means over replications; a column with a 95% half-width beside it is "
        "shown as mean ± half-width.",
    ]
    what = Section("contents", "What it holds")
    what.items.append([_inline(b) for b in readme.bullets])

    pngs = [f for f in readme.files if f.endswith(".png")]
    pngs += sorted(p.name for p in path.glob("*.png") if p.name not in pngs)
    captions = {f: next((_inline(b) for b in readme.bullets if f"`{f}`" in b), f) for f in pngs}
    figs = Section("figures", "Figures")
    figs.items.append(
        Figures([_png(path / f, f"figure-{Path(f).stem}", captions[f]) for f in pngs])
    )

    csvs = [f for f in readme.files if f.endswith(".csv")]
    csvs += sorted(p.name for p in path.glob("*.csv") if p.name not in csvs)
    # the study's headline tables first
    headlines = _headline_tables(readme.study)
    csvs.sort(key=lambda f: Path(f).stem not in headlines)
    tables = Section("tables", "Tables")
    listed = []
    for name in csvs:
        df = _read_table(path / name)
        if len(df.columns) > MAX_TABLE_COLUMNS:
            listed.append(f"{name}: {len(df)} rows × {len(df.columns)} columns")
            continue
        headline = Path(name).stem in headlines
        tables.items.append(_csv_table(name, df, open_=headline or len(df) <= 25))
    if listed:
        tables.p("Too wide to show here, in the folder: " + "; ".join(listed) + ".")

    rerun = Section("rerun", "How to re-run")
    words = ["irqlab", "reproduce", readme.study, "--out", str(path)]
    if readme.quick:
        words.append("--quick")
    rerun.p(
        "Into this folder, the command reuses every run already there and redraws the "
        "figures; into a new one it runs every sweep again (the same seeds, the same numbers)."
    )
    rerun.items.append(Code(_shell(words), id="command"))
    sweeps = sorted(p.name for p in path.iterdir() if (p / "sweep.json").exists())
    if sweeps:
        rerun.p(
            "Each sweep behind the figures is a folder of its own, with a report of its own "
            "and single runs to re-run:"
        )
        rerun.items.append(
            Code(
                "\n".join(
                    _shell(["irqlab", "report", str(path / s), "-o", f"{s}.html"]) for s in sweeps
                )
                + "\n"
                + _shell(
                    ["irqlab", "rerun", str(path / sweeps[0]), "--point", "0", "--replication", "0"]
                ),
                "",
            )
        )
    return Page(title or readme.title, "reproduction", str(path), lede, [what, figs, tables, rerun])


def _headline_tables(name: str) -> set[str]:
    """The headline tables of study ``name``, as the study names them (none if irqlab has no
    such study: a README of an older or another version)."""
    from irqlab.studies import STUDIES, study

    return set(study(name).TABLES) if name in STUDIES else set()


def _csv_table(name: str, df: Any, *, open_: bool) -> Table:
    """A CSV table; a column ``X.ci95`` beside ``X`` is shown as ``X ± half-width``."""
    columns = [c for c in df.columns if not (c.endswith(".ci95") and c[:-5] in df.columns)]
    rows = []
    for i, (_, r) in enumerate(df.iterrows()):
        cells = []
        for c in columns:
            attrs = {"data_table": name, "data_row": i, "data_key": c}
            if f"{c}.ci95" in df.columns:
                cells.append(_ci_cell(_py(r[c]), _py(r[f"{c}.ci95"]), **attrs))
            else:
                cells.append(_value_cell(_py(r[c]), **attrs))
        rows.append(cells)
    table_id = "table-" + re.sub(r"[^A-Za-z0-9_-]", "-", Path(name).stem)
    return Table(table_id, name, [str(c) for c in columns], rows, open=open_)


# --- the page ------------------------------------------------------------------------------


_PAGES = {
    "run": _run_page,
    "sweep": _sweep_page,
    "tune": _tune_page,
    "reproduction": _reproduction_page,
}


def render_report(results: str | Path, *, title: str | None = None) -> str:
    """The HTML page of ``results`` (a run's JSON report, a sweep, tune or reproduction
    folder), self-contained: no file or network fetch when it opens."""
    import jinja2

    from irqlab import __version__

    path = Path(results)
    kind = detect(path)
    page = _PAGES[kind](path, title)
    plots = [f for s in page.sections for i in s.items if isinstance(i, Figures) for f in i.figures]
    needs_plotly = any(isinstance(f, Plot) for f in plots)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irqlab", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    return template.render(
        page=page,
        version=__version__,
        plotly_js=_plotly_js() if needs_plotly else "",
        is_table=lambda x: isinstance(x, Table),
        is_code=lambda x: isinstance(x, Code),
        is_figures=lambda x: isinstance(x, Figures),
        is_facts=lambda x: isinstance(x, Facts),
        is_paragraph=lambda x: isinstance(x, Paragraph),
        is_list=lambda x: isinstance(x, list),
    )


def _plotly_js() -> str:
    """The plotly.js bundle the plotly package ships, safe to inline in a <script>."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().replace("</script", "<\\/script")


def default_out(results: str | Path) -> Path:
    """``RESULTS/report.html`` for a folder, ``r.html`` beside ``r.json``."""
    p = Path(results)
    return p / "report.html" if p.is_dir() else p.with_suffix(".html")


def write_report(
    results: str | Path, out: str | Path | None = None, *, title: str | None = None
) -> Path:
    """Writes the page of ``results`` to ``out`` (default: :func:`default_out`); returns the
    path written."""
    target = Path(out) if out is not None else default_out(results)
    html = render_report(results, title=title)
    # whole or not at all: a full disk leaves the previous page, not half of a new one
    return write_atomic(target, html, option("--out", "out="))
