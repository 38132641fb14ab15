"""What the studies share while they run: the sweeps into the study's folder (:class:`Sweeps`),
plans, load steps, and summary points drawn with their confidence intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

import irqlab


class Planned(Protocol):
    """How long and how often a study runs each point (a study's plan has these, and more;
    read-only, as a frozen dataclass has them)."""

    @property
    def duration_ms(self) -> float: ...
    @property
    def warmup_ms(self) -> float: ...
    @property
    def replications(self) -> int: ...


@dataclass(frozen=True)
class SweepPlan:
    """A plan with nothing but the run length, warm-up and replications."""

    duration_ms: float
    warmup_ms: float
    replications: int


@dataclass(frozen=True)
class Sweeps:
    """Runs a study's sweeps: each into a folder of its own under ``out`` (rerunning the study
    resumes it), with the study's seed and the executor options of the command."""

    out: Path
    seed: int
    options: Mapping[str, Any]

    def runs(
        self,
        name: str,
        base: Mapping[str, Any],
        axes: Mapping[str, Sequence[Any]],
        *,
        duration_ms: float,
        replications: int,
        warmup: str | float | None,
        precision: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """The runs table of the sweep ``out/name`` (a row per point and replication)."""
        return irqlab.sweep(
            base={**base, "run.duration_ms": duration_ms},
            axes={k: list(v) for k, v in axes.items()},
            replications=replications,
            seed=self.seed,
            warmup=warmup,
            precision=precision,
            out=self.out / name,
            **self.options,
        )

    def summary(
        self,
        name: str,
        base: Mapping[str, Any],
        axes: Mapping[str, Sequence[Any]],
        *,
        duration_ms: float,
        replications: int,
        warmup: str | float | None,
        precision: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """The per-point summary of the sweep ``out/name`` (:meth:`runs`)."""
        runs = self.runs(
            name,
            base,
            axes,
            duration_ms=duration_ms,
            replications=replications,
            warmup=warmup,
            precision=precision,
        )
        return irqlab.summarize(runs)

    def planned(
        self,
        name: str,
        base: Mapping[str, Any],
        axes: Mapping[str, Sequence[Any]],
        plan: Planned,
    ) -> pd.DataFrame:
        """:meth:`summary` with the plan's run length, warm-up and replications."""
        return self.summary(
            name,
            base,
            axes,
            duration_ms=plan.duration_ms,
            replications=plan.replications,
            warmup=plan.warmup_ms,
        )


def mpps(*x: float) -> tuple[float, ...]:
    """Rates in Mpps as whole packets/s: ``mpps(0.5, 1)`` → ``(500000.0, 1000000.0)``."""
    return tuple(float(round(1e6 * v)) for v in x)


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
