"""The kernel's receive-path counters, parsed and read once (a *snapshot*).

Each parser takes a file's text as the kernel writes it and returns plain numbers; a line it
does not recognise is skipped, never an exception. Every list read from a host is bounded by
probe's limits (:mod:`irqlab.ops.probe.limits`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from irqlab.ops.probe import limits
from irqlab.ops.probe.host import Host
from irqlab.ops.probe.parsers import parse_interrupts

#: The files a snapshot reads, by the name they have in it.
FILES = {
    "softnet_stat": "/proc/net/softnet_stat",
    "softirqs": "/proc/softirqs",
    "interrupts": "/proc/interrupts",
    "snmp": "/proc/net/snmp",
    "stat": "/proc/stat",
}

#: The interface's counters a snapshot reads when it names one
#: (``/sys/class/net/IFACE/statistics``).
IFACE_COUNTERS = ("rx_packets", "rx_bytes", "rx_dropped", "rx_missed_errors")
_IFACE_NAME = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")

#: /proc/stat's columns of a cpu line, in order (jiffies of USER_HZ).
STAT_FIELDS = (
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
)

#: The softirqs a snapshot keeps from /proc/softirqs.
SOFTIRQS = ("NET_RX", "NET_TX")


def parse_softnet_stat(text: str) -> dict[int, dict[str, int]]:
    """/proc/net/softnet_stat (``softnet_seq_show``, net/core/net-procfs.c): one line per online
    CPU of hexadecimal columns — packets processed, dropped (the backlog was full), time_squeeze
    (``net_rx_action`` ran out of budget or time with work left), six zeros, received_rps,
    flow_limit_count, the backlog's length, and since Linux 5.x the CPU's number (13th column);
    older kernels have no CPU column, and a line's position is its CPU."""
    rows: dict[int, dict[str, int]] = {}
    for position, line in enumerate(itertools.islice(text.splitlines(), limits.MAX_CPUS)):
        cols = line.split()
        if len(cols) < 3 or not all(re.fullmatch(r"[0-9a-fA-F]{1,16}", c) for c in cols):
            continue
        cpu = int(cols[12], 16) if len(cols) >= 13 else position
        rows[cpu] = {
            "processed": int(cols[0], 16),
            "dropped": int(cols[1], 16),
            "time_squeeze": int(cols[2], 16),
        }
    return rows


def _header_cpus(line: str) -> list[int]:
    found = re.finditer(r"CPU([0-9]{1,9})", line)
    return [int(m[1]) for m in itertools.islice(found, limits.MAX_CPUS)]


def parse_softirqs(text: str) -> dict[str, dict[int, int]]:
    """/proc/softirqs: a header of CPU columns, then one line per softirq with its count on each
    CPU; only NET_RX and NET_TX are kept."""
    lines = text.splitlines()
    if not lines:
        return {}
    cpus = _header_cpus(lines[0])
    found: dict[str, dict[int, int]] = {}
    for line in lines[1:]:
        name, _, rest = line.partition(":")
        name = name.strip()
        if name not in SOFTIRQS:
            continue
        counts = rest.split()
        if len(counts) < len(cpus) or not all(c.isdigit() for c in counts[: len(cpus)]):
            continue
        found[name] = {cpu: int(c) for cpu, c in zip(cpus, counts, strict=False)}
    return found


def parse_snmp(text: str, protocol: str = "Udp") -> dict[str, int]:
    """/proc/net/snmp: for each protocol a line of names and a line of values, both starting
    ``Proto:``; the counters of ``protocol`` by name."""
    pairs = [line.split() for line in text.splitlines() if line.startswith(f"{protocol}:")]
    if len(pairs) < 2:
        return {}
    names, values = pairs[0][1:], pairs[1][1:]
    return {
        n: int(v) for n, v in zip(names, values, strict=False) if re.fullmatch(r"-?[0-9]{1,20}", v)
    }


def parse_stat(text: str) -> dict[int, dict[str, int]]:
    """/proc/stat's ``cpuN`` lines: each CPU's time in jiffies of USER_HZ by kind (user, nice,
    system, idle, iowait, irq, softirq, steal, guest, guest_nice; older kernels have fewer)."""
    cpus: dict[int, dict[str, int]] = {}
    for line in text.splitlines():
        m = re.match(r"cpu([0-9]{1,9})\s+(.*)", line)
        if m is None:
            continue
        values = m[2].split()
        if not all(v.isdigit() for v in values) or len(values) < 7:
            continue
        cpus[int(m[1])] = {f: int(v) for f, v in zip(STAT_FIELDS, values, strict=False)}
        if len(cpus) == limits.MAX_CPUS:
            break
    return cpus


def _keyed(d: dict[int, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in sorted(d.items())}


def snapshot(host: Host, iface: str | None = None) -> dict[str, Any]:
    """One reading of every counter of :data:`FILES` through ``host``, as JSON-ready data
    (CPUs and IRQs keyed by their number as text); a file that cannot be read is named in
    ``missing`` with the reason. With ``iface``, also its receive counters
    (:data:`IFACE_COUNTERS`) under ``"iface"``, those that could be read."""
    snap: dict[str, Any] = {"missing": {}}
    if iface is not None and _IFACE_NAME.match(iface):
        counters: dict[str, Any] = {"name": iface}
        for name in IFACE_COUNTERS:
            text = host.read(f"/sys/class/net/{iface}/statistics/{name}")
            if text is not None and text.strip().isdigit():
                counters[name] = int(text.strip())
        if len(counters) > 1:
            snap["iface"] = counters
    for key, name in FILES.items():
        limit = limits.MAX_TABLE_BYTES if key == "interrupts" else limits.MAX_FILE_BYTES
        text = host.read(name, limit=limit)
        if text is None:
            snap["missing"][name] = host.failure(name)
            continue
        if key == "softnet_stat":
            snap[key] = _keyed(parse_softnet_stat(text))
        elif key == "softirqs":
            snap[key] = {k: _keyed(v) for k, v in parse_softirqs(text).items()}
        elif key == "interrupts":
            table = parse_interrupts(text)
            snap[key] = {
                str(irq): {
                    "name": table.names[irq],
                    "counts": _keyed(dict(zip(table.cpus, counts, strict=False))),
                }
                for irq, counts in table.counts.items()
            }
        elif key == "snmp":
            snap["udp"] = parse_snmp(text)
        else:
            snap[key] = _keyed(parse_stat(text))
    return snap
