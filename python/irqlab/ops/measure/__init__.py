"""``irqlab measure``: a live host's receive-path counters over a window, as a measurement
bundle.

Reads, before and after a window, ``/proc/net/softnet_stat``, ``/proc/softirqs`` (NET_RX,
NET_TX), ``/proc/interrupts``, ``/proc/net/snmp`` (UDP) and ``/proc/stat``'s cpu lines, through
probe's :class:`~irqlab.ops.probe.Host` (``/`` on the live host, a recorded tree otherwise, each
file bounded), and writes a bundle: a manifest, the two snapshots and the window's per-CPU,
per-IRQ and UDP rates; as root with bpftrace, the tracepoints' distributions over the window
too, and the host's settings as ``irqlab probe`` reads them.

The package, by concern:

- :mod:`~irqlab.ops.measure.counters` — the files' parsers and one snapshot;
- :mod:`~irqlab.ops.measure.summary` — deltas and rates, counters that went backwards left out;
- :mod:`~irqlab.ops.measure.tracing` — the tracepoints, aggregated in the kernel by bpftrace,
  and what the probes cost;
- :mod:`~irqlab.ops.measure.bundle` — recording a window, writing and reading a bundle.
"""

from __future__ import annotations

from irqlab.ops.measure.bundle import (
    FORMAT,
    FORMAT_VERSION,
    MAX_SECONDS,
    MIN_SECONDS,
    TRACED,
    TRACING,
    Bundle,
    BundleError,
    check_seconds,
    load_bundle,
    record,
    write_bundle,
)
from irqlab.ops.measure.counters import (
    FILES,
    parse_snmp,
    parse_softirqs,
    parse_softnet_stat,
    parse_stat,
    snapshot,
)
from irqlab.ops.measure.summary import summarize, summarize_trace
from irqlab.ops.measure.tracing import (
    TraceError,
    TraceSession,
    distributions,
    histogram,
    parse_output,
)

__all__ = [
    "FILES",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_SECONDS",
    "MIN_SECONDS",
    "TRACED",
    "TRACING",
    "Bundle",
    "BundleError",
    "TraceError",
    "TraceSession",
    "check_seconds",
    "distributions",
    "histogram",
    "load_bundle",
    "parse_output",
    "parse_snmp",
    "parse_softirqs",
    "parse_softnet_stat",
    "parse_stat",
    "record",
    "snapshot",
    "summarize",
    "summarize_trace",
    "write_bundle",
]
