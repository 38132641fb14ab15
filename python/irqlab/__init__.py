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
from irqlab.experiments import load_results, summary_table, sweep
from irqlab.scenario import load_scenario, resolve
from irqlab.simulate import run, run_traced


def summarize(runs, confidence: float = 0.95):
    """Per point of a sweep's runs table: parameters, ``n``, and for each metric its mean,
    ``.std``, ``.ci95`` (Student-t half-width) and ``.rel`` (half-width / mean)."""
    return summary_table(runs, confidence)


def plot(results, x, y, hue=None, **kwargs):
    """Plots a sweep's results; see :func:`irqlab.plot.plot`."""
    from irqlab.plot import plot as _plot

    return _plot(results, x, y, hue, **kwargs)


__all__ = [
    "ConfigError",
    "InternalError",
    "IrqlabError",
    "__version__",
    "load_results",
    "load_scenario",
    "plot",
    "resolve",
    "run",
    "run_traced",
    "summarize",
    "sweep",
]
