"""irqlab: a laboratory for the host receive path.

Simulates how a host turns packets arriving at a NIC into CPU work (interrupts, interrupt
moderation, NAPI polling, softirqs) and reports latency, CPU load, IRQ rate, throughput and loss.

    >>> import irqlab
    >>> r = irqlab.run({"scheme": "napi", "traffic": {"rate_pps": 50_000}})
    >>> r["packets"]["offered"] > 0
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irqlab._irqlab import __version__
from irqlab.errors import (
    ConfigError,
    ConfigWarning,
    InternalError,
    IrqlabError,
    IrqlabWarning,
    ReplayWarning,
)
from irqlab.experiments import load_results, summary_table, sweep
from irqlab.scenario import load_scenario, resolve
from irqlab.simulate import run, run_traced
from irqlab.tuning import tune

if TYPE_CHECKING:
    import pandas


def summarize(runs: pandas.DataFrame, confidence: float = 0.95) -> pandas.DataFrame:
    """Per point of a sweep's runs table: parameters, ``n``, and for each metric its mean,
    ``.std``, ``.ci95`` (Student-t half-width) and ``.rel`` (half-width / mean)."""
    return summary_table(runs, confidence)


def plot(results: Any, x: str, y: str | list[str], hue: str | None = None, **kwargs: Any) -> Any:
    """Plots a sweep's results (means with confidence intervals, a panel per ``y``); returns
    the matplotlib Figure. See :func:`irqlab.figures.plot` for the options."""
    from irqlab.figures import plot as _plot  # matplotlib loads only when plotting

    return _plot(results, x, y, hue, **kwargs)


__all__ = [
    "ConfigError",
    "ConfigWarning",
    "InternalError",
    "IrqlabError",
    "IrqlabWarning",
    "ReplayWarning",
    "__version__",
    "load_results",
    "load_scenario",
    "plot",
    "resolve",
    "run",
    "run_traced",
    "summarize",
    "sweep",
    "tune",
]
