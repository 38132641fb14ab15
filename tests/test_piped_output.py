"""The tables the commands print, piped (80 columns, as into a file, a pager or ``| cat``):
no value is cut to "…", no line is wider than the output, and the numbers printed are the
report's, to the digits printed. A table too wide for 80 columns wraps its headers, then is
printed as several tables repeating the column that names the row (irqlab.report.layout)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console
from rich.table import Table

from irqlab.report.layout import fit

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
IRQLAB = Path(sys.executable).with_name("irqlab")
SHORT = ["--set", "run.duration_ms=20", "--set", "run.warmup_ms=5"]

#: A word cut by rich: a character, then the ellipsis, then the cell's end.
CUT = re.compile(r"[^\s…]…\s*[│┃]|[^\s…]…$", re.M)


def piped(*args: object) -> str:
    """``irqlab ARGS | cat``: stdout a pipe, no COLUMNS, so 80 columns as in a file."""
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.run(
        [*command, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def assert_whole(text: str, width: int = 80) -> None:
    """No cell cut to "…" and no table wider than the output."""
    assert not CUT.search(text), CUT.search(text).group()  # type: ignore[union-attr]
    drawn = [line for line in text.splitlines() if line.lstrip()[:1] in set("┏┃┡│└┌")]
    too_wide = [line for line in drawn if len(line) > width]
    assert not too_wide, too_wide


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip()[1:-1].split(line.strip()[0])]


def tables(text: str, names: int = 1) -> list[tuple[list[str], list[list[str]]]]:
    """Each table drawn in ``text``: its headers and its rows, a cell wrapped over several lines
    joined by spaces. A line starts a row when one of its first ``names`` cells (what names
    the row) is not empty."""
    out: list[tuple[list[str], list[list[str]]]] = []
    head: list[list[str]] = []
    rows: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("┏"):
            head, rows = [], []
        elif line.startswith("┃"):
            head.append(cells(line))
        elif line.startswith("│"):
            row = cells(line)
            if any(row[:names]) or not rows:
                rows.append(row)
            else:
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row, strict=True)]
        elif line.startswith("└") and head:
            headers = [" ".join(filter(None, parts)) for parts in zip(*head, strict=True)]
            out.append((headers, rows))
    return out


def table(text: str, first: str) -> dict[str, dict[str, str]]:
    """The table whose first header is ``first``, its parts (a table split to fit) joined:
    ``{row name: {header: cell}}``."""
    found: dict[str, dict[str, str]] = {}
    for headers, rows in tables(text):
        if headers[0] == first:
            for row in rows:
                found.setdefault(row[0], {}).update(zip(headers, row, strict=True))
    assert found, f"no table headed {first!r}"
    return found


def agrees(printed: str, value: float | None) -> bool:
    """``printed`` (``1,495.2``, ``2.35``, ``1e-05``, ``—``) is ``value`` to its last digit."""
    if value is None:
        return printed == "—"
    d = Decimal(printed.replace(",", ""))
    return abs(float(d) - value) <= 0.5 * 10.0 ** d.as_tuple().exponent * (1 + 1e-9)


def number(cell: str, unit: str = "") -> str:
    assert cell.endswith(unit), (cell, unit)
    return cell.removesuffix(unit).strip()


# ----- irqlab run ----------------------------------------------------------------------------

RUNS = {
    "4 cores": [EXAMPLES / "rss_4core.toml"],
    "an app on a core of its own (app % column)": [
        EXAMPLES / "app_socket.toml",
        *("--set", "host.cores=2", "--set", "app.0.core=1", "--set", "app.0.flows=[0]"),
    ],
    "two classes, overloaded (drops column)": [
        EXAMPLES / "beifuss2016.toml",
        *("--set", "traffic.rate_pps=5e6"),
    ],
    "two classes read by an app (app and goodput columns)": [
        EXAMPLES / "app_socket.toml",
        *("--set", "qos.strategy=ll-wfq", "--set", "qos.rt_share=0.3"),
        *("--set", "traffic.rate_pps=3e5", "--set", "host.cores=2", "--set", "nic.queues=2"),
        *("--set", "traffic.flows=16"),
    ],
}

#: The per-core table's columns: the report's value each shows.
PER_CORE = {
    "kpps": lambda c: c["throughput_pps"] / 1e3,
    "p99 µs": lambda c: c["latency_us"]["p99"],
    "busy %": lambda c: 100 * c["cpu"]["busy"],
    "irq %": lambda c: 100 * c["cpu"]["irq"],
    "softirq %": lambda c: 100 * c["cpu"]["softirq"],
    "ksoftirqd %": lambda c: 100 * c["cpu"]["ksoftirqd"],
    "app %": lambda c: 100 * c["cpu"]["app"],
    "IRQ k/s": lambda c: c["irq_per_s"] / 1e3,
}
PER_CLASS = {
    "share": lambda c: c["share"],
    "offered": lambda c: c["offered_pps"] / 1e3,
    "kpps": lambda c: c["throughput_pps"] / 1e3,
    "loss %": lambda c: 100 * c["loss_ratio"],
    "mean µs": lambda c: c["latency_us"]["mean"],
    "p50 µs": lambda c: c["latency_us"]["p50"],
    "p99 µs": lambda c: c["latency_us"]["p99"],
    "app p99 µs": lambda c: c["app_latency_us"]["p99"],
}
HOST = {
    "offered": ("pps", lambda r: r["offered_pps"]),
    "throughput": ("pps", lambda r: r["throughput_pps"]),
    "loss": ("%", lambda r: 100 * r["loss_ratio"]),
    "mean": ("µs", lambda r: r["latency_us"]["mean"]),
    "p99": ("µs", lambda r: r["latency_us"]["p99"]),
    "busy": ("%", lambda r: 100 * r["cpu"]["busy"]),
    "IRQs": ("/s", lambda r: r["irq_per_s"]),
    "polls": ("/s", lambda r: r["polls_per_s"]),
    "cycles per packet": ("", lambda r: r["cycles_per_packet"]),
}


@pytest.mark.parametrize("args", RUNS.values(), ids=RUNS.keys())
def test_run_piped_prints_every_number_whole_and_as_the_json_report_has_it(args):
    text = piped("run", *args, *SHORT)
    report = json.loads(piped("run", *args, *SHORT, "--format", "json"))
    assert_whole(text)
    shown = 0

    host = {row[1]: row[2] for headers, rows in tables(text, names=2)[:1] for row in rows}
    for metric, (unit, value) in HOST.items():
        assert agrees(number(host[metric], unit).removesuffix(" cycles·µs"), value(report))
        shown += 1

    if len(report["per_core"]) > 1:
        rows = table(text, "core")
        assert set(rows) == {str(c["core"]) for c in report["per_core"]}
        for c in report["per_core"]:
            row = rows[str(c["core"])]
            for header, value in PER_CORE.items():
                if header in row:
                    assert agrees(row[header], value(c)), (c["core"], header, row[header])
                    shown += 1

    if len(report["per_class"]) > 1:
        rows = table(text, "class")
        assert set(rows) == {c["class"] for c in report["per_class"]}
        for c in report["per_class"]:
            row = rows[c["class"]]
            for header, value in PER_CLASS.items():
                if header in row:
                    assert agrees(row[header], value(c)), (c["class"], header, row[header])
                    shown += 1
            if "drops" in row:  # "nic 163,446, socket 8,216", or 0
                for place, n in re.findall(r"([a-z]+) ([\d,]+)", row["drops"]):
                    assert int(n.replace(",", "")) == c[f"dropped_{place}"]
                    shown += 1
            if "goodput" in row:
                assert agrees(number(row["goodput"], "MB/s"), c["goodput_bps"] / 1e6)
                shown += 1
    assert shown >= len(HOST) + 2 * 4


def test_the_widest_run_tables_are_split_not_cut():
    # two classes read by an app: 11 columns, too wide for 80 even with wrapped headers
    text = piped("run", *RUNS["two classes read by an app (app and goodput columns)"], *SHORT)
    heads = [headers for headers, _ in tables(text) if headers[0] == "class"]
    assert len(heads) == 2, heads
    assert "goodput" in heads[1] and "p99 µs" in heads[0]


# ----- the other commands that print tables --------------------------------------------------


def test_sweep_piped_prints_every_point_whole(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        f'[sweep]\nbase = "{(EXAMPLES / "napi.toml").as_posix()}"\nreplications = 2\n'
        '[base]\n"run.duration_ms" = 5\n'
        '[axes]\nscheme = ["irq", "napi"]\n"traffic.rate_pps" = [1e5, 2e5, 3e5]\n'
    )
    text = piped("sweep", sweep, "--out", tmp_path / "out", "--executor", "inline")
    assert_whole(text)
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    parts = [rows for headers, rows in tables(text) if headers[0] == "scheme"]
    assert parts and all(len(rows) == len(summary) for rows in parts)
    headers = {h for h, _ in tables(text) for h in h}
    for column in ("throughput pps", "loss", "latency µs", "p99 µs", "CPU busy", "IRQ/s"):
        assert column in headers, headers


def test_analytic_keys_and_probe_piped_are_whole():
    assert_whole(piped("analytic", "irq", "--set", "platform.preset=salah2007"))
    keys = piped("keys")
    assert_whole(keys)
    # too narrow for the keys' table: each key on a line of its own, its bounds whole
    assert "run.seed = 1\n    an integer in 0 … 18446744073709551615\n" in keys
    trees = ROOT / "tests" / "data" / "probe"
    for host in ("i40e", "mlx5"):
        command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        p = subprocess.run(
            [*command, "probe", "--root", str(trees / host), "--interval", "0"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        tables_only = "\n".join(line for line in p.stderr.splitlines() if line[:1] in "┏┃│┡└")
        assert_whole(tables_only)


def test_trace_info_piped_is_whole(tmp_path):
    from test_pcap import traffic, write

    capture = write(tmp_path / "c.pcapng", traffic(300), "pcapng")
    assert_whole(piped("trace-info", capture, "--top", "20"))


# ----- the layout itself ---------------------------------------------------------------------


def _render(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(renderable)
    console.file.close()
    return console.export_text()


def test_fit_wraps_headers_then_splits_repeating_the_row_names_never_cutting():
    t = Table(title="per thing")
    t.add_column("name")
    for i in range(12):
        t.add_column(f"metric number {i}", justify="right")
    t.add_row("first", *(f"{1234567.5 * (i + 1):,.1f}" for i in range(12)))
    t.add_row("second", *(f"{7.25 * (i + 1):,.2f}" for i in range(12)))
    assert CUT.search(_render(t, 80))  # rich alone cuts them
    for width in (40, 60, 80, 100, 200):
        text = _render(fit(t), width)
        assert_whole(text, width)
        rows = table(text, "name")
        assert rows["first"]["metric number 11"] == f"{1234567.5 * 12:,.1f}"
        assert rows["second"]["metric number 0"] == "7.25"
        assert len(rows["first"]) == 13
    # wide enough: one table, as rich draws it
    assert _render(fit(t), 400) == _render(t, 400)
