"""``irqlab lab``: a receive-path lab on the local kernel.

Two network namespaces joined by a veth pair, a paced UDP sender in one (``sockperf
throughput``) and a receiving application in the other (``sockperf server``), each pinned to a
core; the knobs the kernel offers there (GRO on so that veth polls with NAPI, threaded NAPI
off or on, ``netdev_budget``, the socket's receive buffer, ``busy_read``); and at each rate an
``irqlab measure`` bundle of the window with the figures calibration compares against
(``OUT/lab.json``). The host is put back on every way out, SIGKILL included (a watchdog
process).

The package, by concern:

- :mod:`~irqlab.ops.lab.plan` — the points, checked before anything is made, and the time;
- :mod:`~irqlab.ops.lab.netns` — commands, the namespaces and veth, sysctls, threads, the
  watchdog's other end (the watchdog, the process that puts the host back, is
  :mod:`irqlab.ops.watchdog`, which ``irqlab measure`` uses too);
- :mod:`~irqlab.ops.lab.load` — the sender and the receiver, the counters around a window;
- :mod:`~irqlab.ops.lab.measured` — a point's figures from what was read;
- :mod:`~irqlab.ops.lab.sweep` — the sweep and ``lab.json``.
"""

from __future__ import annotations

from irqlab.ops.lab.measured import measured
from irqlab.ops.lab.netns import LabError
from irqlab.ops.lab.plan import Plan, Point, check, parse_rates, parse_threaded
from irqlab.ops.lab.sweep import FORMAT, FORMAT_VERSION, run_lab

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LabError",
    "Plan",
    "Point",
    "check",
    "measured",
    "parse_rates",
    "parse_threaded",
    "run_lab",
]
