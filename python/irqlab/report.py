"""Presenting a run's report: tables for a person, and flat rows for data frames.

A report is a nested dict. Most of it is one host-wide figure per key; four lists hold one
entry per core, queue vector, traffic class and app (``per_core``, ``per_queue``,
``per_class``, ``per_app``). :func:`flatten_report` turns all of it into flat scalars, the
row of a data frame: ``per_core.1.cpu.busy``; a list of numbers inside an entry
(``per_core.0.vectors``) becomes its canonical text ``"[0, 2]"`` (:func:`encode_list`), so
Parquet and CSV store it and ``groupby`` can use it. :func:`render` draws the tables
``irqlab run`` prints: the host-wide table, then a table per core and per class when the host
has several.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from irqlab.layout import fit

#: The lists of entries in a report, and the fields that name an entry rather than measure
#: it: they are carried into tables as they are and never averaged.
ENTRY_LABELS: dict[str, tuple[str, ...]] = {
    "per_core": ("core", "vectors"),
    "per_queue": ("queue", "core", "flows"),
    "per_class": ("class", "share"),
    "per_app": ("app", "core", "flows"),
}

#: A numeric component of a flattened name: an index into a list (``per_core.3.…``).
_INDEX = re.compile(r"(?<=\.)(0|[1-9][0-9]*)(?=\.|$)")
_LABEL = re.compile(r"^(?P<list>per_[a-z_]+)\.(0|[1-9][0-9]*)\.(?P<field>[a-z_]+)$")


def encode_list(values: Iterable[Any]) -> str:
    """The canonical text of a list of scalars in a table: ``[0, 1]`` → ``"[0, 1]"``."""
    return json.dumps(list(values))


def decode_list(text: Any) -> list[Any]:
    """The inverse of :func:`encode_list`; a list (or array) is returned as a list."""
    if isinstance(text, str):
        value = json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"{text!r} is not a list")
        return value
    return [x.item() if hasattr(x, "item") else x for x in text]


def template(name: str) -> str:
    """A flattened name with its list indices as ``N``: ``per_core.3.cpu.busy`` →
    ``per_core.N.cpu.busy`` (``app.0.core`` → ``app.N.core``)."""
    return _INDEX.sub("N", name)


def list_indices(name: str) -> list[int]:
    """The list indices in a flattened name: ``per_core.3.cpu.busy`` → ``[3]``."""
    return [int(i) for i in _INDEX.findall(name)]


def instantiate(name: str, indices: Sequence[int]) -> str:
    """The inverse of :func:`template`: its ``N``s replaced by ``indices`` in order (by 0 when
    they run out)."""
    rest = iter(indices)
    return re.sub(r"(?<=\.)N(?=\.|$)", lambda _: str(next(rest, 0)), name)


def is_entry_label(name: str) -> bool:
    """Whether a flattened name is a field naming an entry (``per_core.0.vectors``)."""
    m = _LABEL.match(name)
    return bool(m) and m["field"] in ENTRY_LABELS.get(m["list"], ())


def flatten_report(report: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The report as flat scalars, names joined with dots.

    ``{"latency_us": {"p99": 1.0}}`` → ``{"latency_us.p99": 1.0}``; a list of entries becomes
    numbered names (``per_core.0.cpu.busy``; an empty one, none); a list of scalars its
    canonical text (``"[0, 1]"``, :func:`encode_list`).
    """
    out: dict[str, Any] = {}
    for k, v in report.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten_report(v, f"{name}."))
        elif isinstance(v, list | tuple):
            if v and all(isinstance(e, Mapping) for e in v):
                for i, entry in enumerate(v):
                    out.update(flatten_report(entry, f"{name}.{i}."))
            elif v or not (k in ENTRY_LABELS or str(k).startswith("per_")):
                out[name] = encode_list(v)
        else:
            out[name] = v
    return out


def count(n: int, noun: str) -> str:
    """``n`` and its noun, singular for one: ``count(1, "queue")`` → ``"1 queue"``,
    ``count(4, "queue")`` → ``"4 queues"``."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _mbps(bytes_per_s: float | None) -> str:
    """Bytes per second as MB/s (10^6 bytes)."""
    return "—" if bytes_per_s is None else f"{_num(bytes_per_s / 1e6)} MB/s"


def _setting(
    report: Mapping[str, Any], scenario: Mapping[str, Any] | None, key: str, default: Any
) -> Any:
    """A scenario value: the report's echo of what ran, else ``scenario``, else ``default``."""
    for source in (report.get("scenario"), scenario):
        if source and key in source:
            return source[key]
    return default


def _grouped(group: str, rows: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(group if i == 0 else "", m, v) for i, (m, v) in enumerate(rows)]


def render_table(report: Mapping[str, Any], scenario: Mapping[str, Any] | None = None) -> Table:
    """The host-wide table, grouped as an engineer reads it.

    A one-core host without apps or forwarding gets exactly the groups it always had; a
    ``forwarding`` group appears with ``host.forward``, an ``apps`` group when apps read
    sockets. With several cores, the CPU shares are the mean over the cores.
    """
    r = report
    cores = len(r.get("per_core") or ()) or _setting(r, scenario, "host.cores", 1)
    queues = len(r.get("per_queue") or ()) or _setting(r, scenario, "nic.queues", 1)
    title = f"irqlab run — scheme {r['scheme']}, seed {r['seed']}"
    if scenario:
        title += (
            f"\n{scenario.get('traffic.kind', '')} {_num(scenario.get('traffic.rate_pps'))} pps,"
            f" ring {scenario.get('nic.ring_descriptors', '')},"
            f" {r['measured_s'] * 1e3:g} ms measured"
        )
        if cores > 1 or queues > 1:
            title += f", {count(cores, 'core')}, {count(queues, 'queue')}"
    t = Table(title=title, show_header=True, header_style="bold")
    t.add_column("group")
    t.add_column("metric")
    t.add_column("value", justify="right")
    p = r["packets"]
    rows: list[tuple[str, str, str]] = [
        ("traffic", "offered", f"{_num(r['offered_pps'])} pps"),
        ("", "throughput", f"{_num(r['throughput_pps'])} pps"),
        ("", "loss", _pct(r["loss_ratio"])),
        ("packets", "offered / delivered", f"{p['offered']:,} / {p['delivered']:,}"),
        ("", "dropped (nic / socket)", f"{p['dropped_nic']:,} / {p['dropped_socket']:,}"),
        ("", "in flight (end / warm-up)", f"{p['in_flight']:,} / {p['in_flight_at_warmup']:,}"),
    ]
    if _setting(r, scenario, "host.forward", False):
        rows += _grouped(
            "forwarding",
            [
                ("transmitted", f"{p.get('transmitted', 0):,}"),
                ("dropped at Tx ring", f"{p.get('dropped_tx', 0):,}"),
                ("in Tx rings", f"{p.get('in_tx_ring', 0):,}"),
            ],
        )
    lat = r["latency_us"]
    rows += _grouped(
        "latency", [(n, f"{_num(lat[n])} µs") for n in ("mean", "p50", "p90", "p99", "p999", "max")]
    )
    if r.get("per_app"):
        app_lat = r.get("app_latency_us") or {}
        rows += _grouped(
            "apps",
            [
                ("consumed", f"{p.get('consumed', 0):,}"),
                ("goodput", _mbps(r.get("goodput_bps"))),
                ("app latency p50", f"{_num(app_lat.get('p50'))} µs"),
                ("app latency p99", f"{_num(app_lat.get('p99'))} µs"),
                ("socket drops", f"{p['dropped_socket']:,}"),
            ],
        )
    cpu = r["cpu"]
    rows += _grouped(
        "cpu" if cores <= 1 else f"cpu (mean of {cores})",
        [(n, _pct(cpu[n])) for n in ("busy", "irq", "softirq", "ksoftirqd", "app", "idle")],
    )
    rows += [
        ("interrupts", "IRQs", f"{_num(r['irq_per_s'])} /s"),
        ("", "polls", f"{_num(r['polls_per_s'])} /s"),
        ("", "packets per poll", _num(r["packets_per_poll"])),
        ("efficiency", "cycles per packet", _num(r["cycles_per_packet"])),
        ("", "load-latency product", f"{_num(r['load_latency_product'])} cycles·µs"),
    ]
    for g, m, v in rows:
        t.add_row(g, m, v)
    return t


def _vectors(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "—"


def _k(x: float | None) -> str:
    """A rate in thousands, one decimal: ``480513.0`` → ``480.5``."""
    return "—" if x is None else f"{x / 1e3:,.1f}"


def _p(x: float | None) -> str:
    """A share in percent, one decimal, without the sign (the header carries it)."""
    return "—" if x is None else f"{100 * x:.1f}"


def render_per_core(report: Mapping[str, Any]) -> Table | None:
    """One row per core (vectors, throughput, latency, CPU shares, IRQs), or None with one.
    Compact enough for an 80-column terminal: rates in thousands, shares in percent; the
    ksoftirqd and app columns only when some core spends time there."""
    per_core = report.get("per_core") or []
    if len(per_core) <= 1:
        return None
    shares = ["busy", "irq", "softirq"]
    shares += [n for n in ("ksoftirqd", "app") if any(c["cpu"][n] > 0 for c in per_core)]
    t = Table(title="per core", show_header=True, header_style="bold")
    headers = ["core", "vectors", "kpps", "p99 µs", *(f"{n} %" for n in shares), "IRQ k/s"]
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i < 2 else "right")
    for c in per_core:
        t.add_row(
            str(c["core"]),
            _vectors(c["vectors"]),
            _k(c["throughput_pps"]),
            _num(c["latency_us"]["p99"]),
            *(_p(c["cpu"][n]) for n in shares),
            _k(c["irq_per_s"]),
        )
    return t


def render_per_class(report: Mapping[str, Any]) -> Table | None:
    """One row per traffic class (offered and delivered rates, loss, latency mean and
    percentiles, drops by place where there are some), or None with one class."""
    per_class = report.get("per_class") or []
    if len(per_class) <= 1:
        return None
    apps = bool(report.get("per_app"))
    t = Table(title="per traffic class (rates in kpps)", show_header=True, header_style="bold")
    headers = ["class", "share", "offered", "kpps", "loss %", "mean µs", "p50 µs", "p99 µs"]
    # packets dropped, by place, when some class lost some
    places = [p for p in ("nic", "socket", "tx") if any(c[f"dropped_{p}"] for c in per_class)]
    if places:
        headers.append("drops")
    if apps:
        headers += ["app p99 µs", "goodput"]
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i == 0 else "right")
    for c in per_class:
        cells = [
            str(c["class"]),
            _num(c["share"]),
            _k(c["offered_pps"]),
            _k(c["throughput_pps"]),
            _p(c["loss_ratio"]),
            _num(c["latency_us"]["mean"]),
            _num(c["latency_us"]["p50"]),
            _num(c["latency_us"]["p99"]),
        ]
        if places:
            drops = [f"{p} {_num(c[f'dropped_{p}'])}" for p in places if c[f"dropped_{p}"]]
            cells.append(", ".join(drops) or "0")
        if apps:
            cells += [_num(c["app_latency_us"]["p99"]), _mbps(c.get("goodput_bps"))]
        t.add_row(*cells)
    return t


def render(report: Mapping[str, Any], scenario: Mapping[str, Any] | None = None) -> Group:
    """Everything ``irqlab run`` prints: the host-wide table, then the per-core table (several
    cores) and the per-class table (several classes)."""
    parts = [render_table(report, scenario), render_per_core(report), render_per_class(report)]
    # what the result depends on beyond the sources (plain text: no markup)
    notes = [Text(f"note: {n}") for n in report.get("notes", ())]
    return Group(*(fit(p) for p in parts if p is not None), *notes)


def print_table(
    report: Mapping[str, Any],
    scenario: Mapping[str, Any] | None = None,
    console: Console | None = None,
) -> None:
    """Prints :func:`render` of the report."""
    (console or Console()).print(render(report, scenario))
