"""The probe's outputs: the scenario file (every value with its source, the notes and what was
observed as comments), the summary ``irqlab probe`` prints, and writing the file.

Values are written by :mod:`irqlab.toml_writer` (a whole float as an integer, as a person writes
a scenario); what a host wrote goes into a comment only as one clean line
(:func:`~irqlab.ops.probe.text.one_line`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from irqlab import toml_writer
from irqlab.errors import ConfigError
from irqlab.formatting import whole
from irqlab.ops.probe.findings import Napi, Probe, Setting, Vector
from irqlab.ops.probe.text import clean, one_line
from irqlab.scenario import schema


def _value(value: Any) -> str:
    """A value as the scenario file writes it."""
    return toml_writer.value(value, whole=True)


# --- the scenario file --------------------------------------------------------------------

#: Sections of the written file, in order, and what each says first.
SECTIONS = {
    "host": None,
    "nic": None,
    "driver": None,
    "kernel": None,
    "socket": "what a socket gets by default (only [[app]] entries use it)",
    "platform": None,
}


def _section(key: str) -> str:
    """The table a key is written in: ``nic.queues`` → ``nic``; top-level keys → ``""``."""
    return key.split(".", 1)[0] if "." in key else ""


def _comment(text: str, width: int = 98) -> list[str]:
    """``text`` as ``#`` lines of at most ``width`` characters."""
    words, lines, line = clean(text).split(), [], "#"
    for w in words:
        if len(line) + 1 + len(w) > width and line != "#":
            lines.append(line)
            line = "#  "
        line += " " + w
    lines.append(line)
    return lines


def render_toml(p: Probe) -> str:
    """The scenario file of ``p``: a header, the notes, each value with its source, the
    vectors, and the platform's costs left to calibrate."""
    where = f"host {p.hostname}" if p.hostname else "this host"
    kernel = f" (Linux {p.kernel})" if p.kernel else ""
    driver = f", driver {p.driver}" + (f" {p.driver_version}" if p.driver_version else "")
    out = _comment(
        f"irqlab scenario probed from {where}{kernel}, interface {p.iface}"
        f"{driver if p.driver else ''}, by `irqlab probe`. Each value names where it was "
        "read; the costs under [platform] cannot be read from a host: they are irqlab's "
        "defaults, to calibrate (docs/probe.md)."
    )
    if p.notes:
        out += ["#", "# Notes:"]
        for note in p.notes:
            out += [
                ("# - " + line[2:]) if i == 0 else line for i, line in enumerate(_comment(note))
            ]
    if p.ineffective:
        out += ["#", "# Settings that do nothing on this host, or not what their value says:"]
        for finding in p.ineffective:
            out += [
                ("# - " + line[2:]) if i == 0 else line
                for i, line in enumerate(_comment(str(finding)))
            ]
    out.append("")
    by_section: dict[str, list[Setting]] = {}
    for s in p.settings.values():
        if "." not in s.key:
            out.append(f"{s.key} = {_value(s.value)}  # {one_line(s.source)}")
        else:
            by_section.setdefault(s.key.split(".", 1)[0], []).append(s)
    out += ["", *_traffic_comment(p)]
    platform_defaults = [
        (key, spec)
        for key, spec in schema().items()
        if key.startswith("platform.") and key not in ("platform.preset", "platform.cpu_ghz")
    ]
    for section, intro in SECTIONS.items():
        rows = by_section.pop(section, [])
        extra = _section_extra(p, section)
        if not rows and not extra and section != "platform":
            continue
        out += ["", f"[{section}]"]
        if intro:
            out += _comment(intro)
        for s in rows:
            out.append(f"{s.key.split('.', 1)[1]} = {_value(s.value)}  # {one_line(s.source)}")
            if s.key == "nic.irq_affinity":
                out += _vector_comment(p)
        out += extra
        if section == "platform":
            out += _comment(
                "Costs: irqlab's defaults (Salah et al. 2007's Pentium 4) — calibrate them "
                "against this host (docs/probe.md), or delete them and set preset = "
                '"emmerich2015" for a 3.3 GHz Xeon forwarding 64 B frames.'
            )
            for key, spec in platform_defaults:
                value = _value(spec["default"])
                out.append(f"{key.split('.', 1)[1]} = {value}  # default — calibrate")
    for section, rows in by_section.items():  # any other section the mapping may add
        out += ["", f"[{section}]"]
        out += [
            f"{s.key.split('.', 1)[1]} = {_value(s.value)}  # {one_line(s.source)}" for s in rows
        ]
    return "\n".join(out) + "\n"


def _traffic_comment(p: Probe) -> list[str]:
    text = (
        "[traffic] is the workload, not the host: not probed, so irqlab's default (Poisson "
        "arrivals, 100 kpps of 64 B frames, one flow) applies until you set it."
    )
    if p.rx_pps is not None:
        size = (
            f", {p.rx_bytes_per_packet:,.0f} B per packet on average"
            if p.rx_bytes_per_packet
            else ""
        )
        text += (
            f" Observed on {p.iface} over {p.interval_s:g} s: {p.rx_pps:,.0f} packets/s "
            f"received{size} (statistics/rx_packets, rx_bytes)."
        )
    return _comment(text)


def _section_extra(p: Probe, section: str) -> list[str]:
    lines = []
    for s in p.with_apps.values():
        if _section(s.key) == section:
            lines.append(
                f"# {s.key.split('.', 1)[1]} = {_value(s.value)}  # {one_line(s.source)} — "
                "takes effect with an application: uncomment it once the scenario has an [[app]]"
            )
    if section == "kernel" and p.napis:
        lines += napi_comment(p)
    if section == "kernel" and p.unmodelled:
        lines.append("# Read, but not modelled yet (irqlab has no key for these):")
        for name, value, what, source in p.unmodelled:
            lines.append(f"#   {one_line(name)} = {one_line(value)}  ({what}; {one_line(source)})")
    if section == "driver" and p.driver:
        version = f", version {p.driver_version}" if p.driver_version else ""
        lines.append(one_line(f"# the driver: {p.driver}{version} ({p.driver_source})"))
    return lines


def _vector_comment(p: Probe) -> list[str]:
    rate = f"IRQs/s over {p.interval_s:g} s" if p.interval_s else "IRQs/s"
    lines = [f"#   vector  IRQ  core  affinity  {rate:>18}  name"]
    for i, v in enumerate(p.vectors):
        lines.append(
            f"#   {i:>6}  {v.irq:>3}  {'' if v.core is None else v.core:>4}  "
            f"{one_line(v.affinity or '?'):>8}  {whole(v.rate_per_s):>18}  {one_line(v.name)}"
        )
    for v in p.other_vectors:
        lines.append(
            f"#   {'other':>6}  {v.irq:>3}  {'':>4}  {one_line(v.affinity or '?'):>8}  "
            f"{whole(v.rate_per_s):>18}  {one_line(v.name)}"
        )
    return lines


#: The NAPI table's columns after the NAPI's id, its queues and its IRQ: each NAPI's own
#: settings as netdev.yaml names them (``irqlab tune`` reads the table back, to write napi-set
#: for each NAPI), and its thread's PID.
NAPI_COLUMNS = ("defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout", "threaded", "pid")


def _napi_cells(n: Napi) -> list[str]:
    """A NAPI's row: id, queues, IRQ (in parentheses: its Rx queue's vector's), then
    :data:`NAPI_COLUMNS` ("-" for what the kernel did not give)."""
    queues = [f"rx-{q}" for q in n.rx_queues] + [f"tx-{q}" for q in n.tx_queues]
    irq = str(n.irq) if n.irq is not None else f"({n.vector_irq})" if n.vector_irq else "-"
    own = {**n.settings, **({} if n.pid is None else {"pid": n.pid})}
    return [str(n.id), ",".join(queues) or "-", irq] + [str(own.get(c, "-")) for c in NAPI_COLUMNS]


def napi_comment(p: Probe) -> list[str]:
    """The NAPI table as comments: a title naming the interface, then a row per NAPI."""
    lines = [one_line(f"# NAPIs of {p.iface} ({p.napi_source}):")]
    lines += _comment(
        "Each NAPI's own settings: irqlab has one value for every vector, written above (the "
        "most common). An IRQ in parentheses is its Rx queue's vector in /proc/interrupts "
        "(napi-get gives none). `irqlab tune` writes napi-set for each of these NAPIs."
    )
    rows = [["NAPI", "queues", "IRQ", *NAPI_COLUMNS]] + [_napi_cells(n) for n in p.napis]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [r[0].rjust(widths[0]), r[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(r[2:], widths[2:], strict=True)]
        lines.append(("#   " + "  ".join(cells)).rstrip())  # numbers alone: no host text
    return lines


# --- the summary `irqlab probe` prints ------------------------------------------------------


def summary(p: Probe) -> list[Any]:
    """Rich tables for a person: the values written and their sources, the vectors with their
    observed rates, and the notes. What a host wrote is shown as text, never as markup."""
    from rich.markup import escape
    from rich.table import Table

    def text(value: str) -> str:
        return escape(one_line(value))

    title = f"irqlab probe — {p.iface}" + (f" ({p.driver})" if p.driver else "")
    if p.hostname:
        title += f" on {p.hostname}"
    t = Table(title=text(title), title_justify="left", show_header=True, header_style="bold")
    t.add_column("key", no_wrap=True)
    t.add_column("value", justify="right", overflow="fold", max_width=24)
    t.add_column("source", overflow="fold")
    order = {name: i for i, name in enumerate(["", *SECTIONS])}
    for s in sorted(p.settings.values(), key=lambda s: order.get(_section(s.key), len(order))):
        t.add_row(s.key, text(_value(s.value)), text(s.source.rstrip(":")))
    for s in p.with_apps.values():
        t.add_row(
            f"({s.key})",
            text(_value(s.value)),
            text(f"{s.source}; needs an [[app]]: written commented out"),
        )
    if p.rx_pps is not None:
        t.add_row("(observed)", f"{p.rx_pps:,.0f} pps", text(f"{p.iface} received, not written"))
    for name, value, what, source in p.unmodelled:
        t.add_row(text(f"({name})"), text(value), text(f"{source} ({what}); not modelled yet"))
    out: list[Any] = [t]
    if p.ineffective:
        w = Table(
            title="settings that do nothing on this host, or not what their value says",
            title_justify="left",
            show_header=True,
            header_style="bold",
        )
        w.add_column("key", no_wrap=True)
        w.add_column("value", justify="right", max_width=12)
        w.add_column("why", overflow="fold")
        w.add_column("source", overflow="fold")
        for f in p.ineffective:
            w.add_row(text(f.key), text(str(f.value)), text(f.reason), text(f.source))
        out.append(w)
    if p.vectors or p.other_vectors:
        rate = f"IRQs/s ({p.interval_s:g} s)" if p.interval_s else "IRQs/s"
        v = Table(show_header=True, header_style="bold")
        for name, justify in (
            ("vector", "right"),
            ("IRQ", "right"),
            ("name", "left"),
            ("affinity", "right"),
            ("core", "right"),
            (rate, "right"),
            ("busiest CPU", "right"),
        ):
            v.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for i, vec in enumerate(p.vectors):
            v.add_row(*_vector_row(str(i), vec))
        for vec in p.other_vectors:
            v.add_row(*_vector_row("other", vec))
        out.append(v)
    if p.napis:
        n = Table(title=text(f"NAPIs of {p.iface}"), title_justify="left", header_style="bold")
        for name in ("NAPI", "queues", "IRQ", *NAPI_COLUMNS):
            n.add_column(name, justify="left" if name == "queues" else "right", overflow="fold")
        for napi in p.napis:
            n.add_row(*(text(c) for c in _napi_cells(napi)))
        out.append(n)
    return out


def _vector_row(label: str, v: Vector) -> list[str]:
    from rich.markup import escape

    return [
        label,
        str(v.irq),
        escape(one_line(v.name)),
        escape(one_line(v.affinity or "?")),
        "" if v.core is None or v.queue is None else str(v.core),
        whole(v.rate_per_s),
        "" if v.busiest_cpu is None else str(v.busiest_cpu),
    ]


def write(p: Probe, out: Path, *, force: bool = False) -> None:
    """Writes the scenario to ``out``; refuses to replace a file unless ``force``."""
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; --force to overwrite it", None)
    try:
        out.write_text(p.toml(), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{out}: cannot write ({e.strerror})", None) from None
