"""What the studies share: running one named sweep into the study's folder and summarising it,
drawing summary points with their confidence intervals, writing tables as CSV."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

import irqlab


def sweep_summary(
    out: Path,
    name: str,
    base: Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    *,
    duration_ms: float,
    replications: int,
    seed: int,
    warmup: str | float,
    precision: Mapping[str, Any] | None = None,
    run_opts: Mapping[str, Any],
) -> pd.DataFrame:
    """Runs (or resumes) the sweep ``out/name`` and returns its per-point summary."""
    runs = irqlab.sweep(
        base={**base, "run.duration_ms": duration_ms},
        axes={k: list(v) for k, v in axes.items()},
        replications=replications,
        seed=seed,
        warmup=warmup,
        precision=precision,
        out=out / name,
        **run_opts,
    )
    return irqlab.summarize(runs)


def errorbar(
    ax: Any,
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    scale: float = 1.0,
    x_scale: float = 1.0,
    **style: Any,
) -> None:
    """Summary points of ``y`` against ``x`` with their 95% half-widths, sorted by ``x``."""
    d = df.sort_values(x)
    ax.errorbar(d[x] * x_scale, d[y] * scale, yerr=d[f"{y}.ci95"].fillna(0) * scale, **style)


def write_csvs(out: Path, tables: Mapping[str, pd.DataFrame]) -> None:
    """Each table as ``out/NAME.csv``."""
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
