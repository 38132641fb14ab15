"""What the studies share: running one named sweep into the study's folder and summarising it,
drawing summary points with their confidence intervals, writing tables as CSV."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

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


class Planned(Protocol):
    """How long and how often a study runs each point (a study's plan has these, and more)."""

    duration_ms: float
    warmup_ms: float
    replications: int


@dataclass(frozen=True)
class SweepPlan:
    """A plan with nothing but the run length, warm-up and replications."""

    duration_ms: float
    warmup_ms: float
    replications: int


def planned_sweep(
    out: Path,
    name: str,
    base: Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    plan: Planned,
    *,
    seed: int,
    run_opts: Mapping[str, Any],
) -> pd.DataFrame:
    """:func:`sweep_summary` with the plan's run length, warm-up and replications."""
    return sweep_summary(
        out,
        name,
        base,
        axes,
        duration_ms=plan.duration_ms,
        replications=plan.replications,
        seed=seed,
        warmup=plan.warmup_ms,
        run_opts=run_opts,
    )


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
