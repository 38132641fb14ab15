"""irqlab: a laboratory for the host receive path.

Simulates how a host turns packets arriving at a NIC into CPU work (interrupts, interrupt
moderation, NAPI polling, softirqs) and reports latency, CPU load, IRQ rate, throughput and loss.

    >>> import irqlab
    >>> r = irqlab.run({"scheme": "napi", "traffic": {"rate_pps": 50_000}})
    >>> r["packets"]["offered"] > 0
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from irqlab.core import __version__
from irqlab.errors import (
    ConfigError,
    ConfigWarning,
    InternalError,
    IrqlabError,
    IrqlabWarning,
    ReplayWarning,
)
from irqlab.scenario import load_scenario, resolve
from irqlab.simulate import run, run_traced

if TYPE_CHECKING:
    import pandas

    from irqlab.calibration import calibrate
    from irqlab.experiments import load_results, sweep
    from irqlab.ops.tune import tune

#: Loaded on first use: sweeps, statistics and tuning need pandas and scipy (about a second
#: to import), which a single run and the command line's quick commands do without.
_LAZY = {
    "calibrate": "irqlab.calibration",
    "load_results": "irqlab.experiments",
    "sweep": "irqlab.experiments",
    "tune": "irqlab.ops.tune",
}


def __getattr__(name: str) -> Any:
    """``irqlab.sweep``, ``irqlab.load_results``, ``irqlab.tune``, ``irqlab.calibrate`` and
    the submodules (``irqlab.experiments``, …), imported when first asked for."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif not name.startswith("__"):
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise  # the submodule exists; a library it needs does not
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def summarize(runs: Any, confidence: float = 0.95) -> pandas.DataFrame:
    """Per point of a sweep's runs table: parameters, ``n``, and for each metric its mean,
    ``.std``, ``.ci95`` (Student-t half-width) and ``.rel`` (half-width / mean).

    ``runs`` is the runs table (a DataFrame, as :func:`sweep` or ``load_results(path,
    "runs")`` returns it), or the path of a sweep's folder or of its runs.parquet or .csv."""
    import os

    import pandas as pd

    from irqlab.experiments import load_results, summary_table

    if isinstance(runs, str | os.PathLike):
        runs = load_results(runs, "runs")
    elif not isinstance(runs, pd.DataFrame):
        raise ConfigError(
            "runs: expected a sweep's runs table (a pandas DataFrame) or the path of a sweep's "
            f"folder or of its runs.parquet, got {type(runs).__name__}",
            "runs",
        )
    if "point" not in runs.columns or ("n" in runs.columns and "replication" not in runs.columns):
        what = "a summary already" if "point" in runs.columns else "not a sweep's runs table"
        raise ConfigError(
            f"runs: {what} (a runs table has a row per point and replication, with columns "
            "'point' and 'replication'): give the sweep's folder, its runs.parquet or "
            'load_results(path, "runs")',
            "runs",
        )
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
    "calibrate",
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
