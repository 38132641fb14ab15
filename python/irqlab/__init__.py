"""irqlab: a laboratory for the host receive path.

Simulates how a host turns packets arriving at a NIC into CPU work (interrupts, interrupt
moderation, NAPI polling, softirqs) and reports latency, CPU load, IRQ rate, throughput and loss.

    >>> import irqlab
    >>> r = irqlab.run({"scheme": "napi", "traffic": {"rate_pps": 50_000}})
    >>> r["packets"]["offered"] > 0
    True
"""

from __future__ import annotations

from irqlab._irqlab import __version__
from irqlab.errors import ConfigError, InternalError, IrqlabError
from irqlab.scenario import load_scenario, resolve
from irqlab.simulate import run, run_traced

__all__ = [
    "ConfigError",
    "InternalError",
    "IrqlabError",
    "__version__",
    "load_scenario",
    "resolve",
    "run",
    "run_traced",
]
