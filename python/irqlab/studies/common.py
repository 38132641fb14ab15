"""What the studies share while they run: the sweeps into the study's folder (:class:`Sweeps`),
plans, load steps, summary points drawn with their confidence intervals, and each study's
declared calibration (:func:`targets`: the ``<module>.targets.toml`` beside it)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

import irqlab
from irqlab.scenario import flatten


def targets_file(module: str) -> str:
    """The name of a study module's targets file (``chang2007`` → ``chang2007.targets.toml``),
    shipped beside it in the package."""
    return f"{module.rsplit('.', 1)[-1]}.targets.toml"


def targets(module: str) -> dict[str, Any]:
    """A study's declared calibration, in the format of ``irqlab calibrate``: ``calibrate``
    (the preset's name, the seeds), ``base`` (scenario keys), ``free`` (the fitted keys with
    their bounds), ``target`` (what the preset is fitted to: each a point, a metric, a value)
    and ``validate`` (measured, not fitted: evidence). Missing lists are empty."""
    text = resources.files("irqlab.studies").joinpath(targets_file(module)).read_text("utf-8")
    data = tomllib.loads(text)
    data.setdefault("free", {})
    data.setdefault("target", [])
    data.setdefault("validate", [])
    return data


def preset_file(module: str) -> str:
    """The name of a study module's fitted platform (``beifuss2016.preset.toml``)."""
    return f"{module.rsplit('.', 1)[-1]}.preset.toml"


def preset(module: str) -> dict[str, Any]:
    """The platform keys a study's calibration fitted (its ``<module>.preset.toml``, shipped
    beside it), as flat scenario keys for its ``BASE``; none if the study has no such file."""
    found = resources.files("irqlab.studies").joinpath(preset_file(module))
    if not found.is_file():
        return {}
    return flatten(tomllib.loads(found.read_text("utf-8")))


class Planned(Protocol):
    """How long and how often a study runs each point (a study's plan has these, and more;
    read-only, as a frozen dataclass has them)."""

    @property
    def duration_ms(self) -> float: ...
    @property
    def warmup_ms(self) -> str | float | None: ...
    @property
    def replications(self) -> int: ...


@dataclass(frozen=True)
class SweepPlan:
    """A plan with nothing but the run length, warm-up (ms, or ``"auto"``) and replications."""

    duration_ms: float
    warmup_ms: str | float | None
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

    def planned(
        self,
        name: str,
        base: Mapping[str, Any],
        axes: Mapping[str, Sequence[Any]],
        plan: Planned,
        precision: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """The per-point summary of the sweep ``out/name`` (:meth:`runs`), run with the plan's
        run length, warm-up and replications."""
        runs = self.runs(
            name,
            base,
            axes,
            duration_ms=plan.duration_ms,
            replications=plan.replications,
            warmup=plan.warmup_ms,
            precision=precision,
        )
        return irqlab.summarize(runs)


def markdown_table(columns: Sequence[str], rows: Iterable[str | Sequence[object]]) -> str:
    """A Markdown table of ``rows``, a line each and a newline at the end. A row is its cells
    as given (already formatted), or one text of them joined by `` | ``; an empty column name
    is a single space."""
    head = "|" + "".join(f" {c} |" if c else " |" for c in columns)
    body = [
        f"| {row if isinstance(row, str) else ' | '.join(str(c) for c in row)} |" for row in rows
    ]
    return "\n".join([head, "|" + "---|" * len(columns), *body]) + "\n"


def finish(ax: Any, xlabel: str, ylabel: str | None = None, *, legend: bool = True) -> None:
    """An axes as the studies draw it: its labels, a light grid and (``legend``) the legend."""
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8)


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
