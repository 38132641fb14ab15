"""What a tune found (:class:`TuneResult`) and the folder it writes: the recommendation as
Markdown and JSON, every candidate (``candidates.csv``), the Pareto frontier of the objective
against the first SLO's metric (``pareto.csv``, ``pareto.png``), and the closest candidates when
none meets every SLO."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, option
from irqlab.formatting import count
from irqlab.ops.tune.search import Skipped, Slo

#: Skipped candidates listed in the summary at most (the folder's skipped.csv has them all).
SHOWN_SKIPPED = 20


@dataclass
class TuneResult:
    """What :func:`tune` found."""

    recommended: dict[str, Any] | None
    feasible: bool
    commands: list[str]
    table: Any  # pandas.DataFrame: every candidate, its status, means and intervals
    slos: list[Slo]
    objective: str
    loads: list[float]
    runs: int
    out: Path | None = None
    #: The recommended candidate's number (``candidate`` in :attr:`table`).
    pick: int | None = None
    #: Candidates not raced as given: a setting of theirs does nothing on the host.
    skipped: list[Skipped] = field(default_factory=list)
    #: Candidates raced that may do nothing on the host, depending on what its device offers.
    doubts: list[Skipped] = field(default_factory=list)

    def row(self) -> Any:
        """The recommended candidate's row of :attr:`table`."""
        return self.table[self.table["candidate"] == self.pick].iloc[0]

    def runners_up(self, k: int = 5) -> Any:
        """The next ``k`` feasible candidates by objective."""
        t = self.table
        t = t[(t["status"] == "feasible") & (t["candidate"] != self.pick)]
        return t.sort_values(["objective", "candidate"]).head(k)


def closest(result: TuneResult) -> Any:
    """When nothing is feasible: candidates by their worst relative shortfall to any SLO."""
    t = result.table.copy()
    shortfall = []
    for _, row in t.iterrows():
        worst = 0.0
        for s in result.slos:
            m = row.get(f"margin[{s}]")
            if m is None or (isinstance(m, float) and math.isnan(m)):
                worst = math.inf
                break
            worst = max(worst, -m / max(abs(s.bound), 1e-12))
        shortfall.append(worst)
    t["shortfall"] = shortfall
    return t.sort_values(["shortfall", "objective"])


def pareto(table: Any, objective: str, slo: Slo) -> Any:
    """The candidates no other beats on both the objective and the first SLO's metric."""
    t = table.dropna(subset=["objective", slo.metric]).sort_values(["objective", slo.metric])
    keep, best = [], math.inf
    sign = 1 if slo.upper else -1
    for i, row in t.iterrows():
        v = sign * row[slo.metric]
        if v < best:
            keep.append(i)
            best = v
    return t.loc[keep]


def write_outputs(result: TuneResult, base: Mapping[str, Any], out: Path) -> None:
    """recommendation.md/.json, candidates.csv, pareto.csv and pareto.png in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        result.table.to_csv(out / "candidates.csv", index=False)
        front = pareto(result.table, result.objective, result.slos[0])
        front.to_csv(out / "pareto.csv", index=False)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        t = result.table.dropna(subset=["objective", result.slos[0].metric])
        for status, marker in (
            ("feasible", "o"),
            ("undecided", "s"),
            ("infeasible", "x"),
            ("worse", "."),
        ):
            part = t[t["status"] == status]
            if len(part):
                ax.scatter(
                    part["objective"],
                    part[result.slos[0].metric],
                    marker=marker,
                    label=status,
                    alpha=0.7,
                )
        ax.plot(
            front["objective"], front[result.slos[0].metric], "k--", lw=1, label="Pareto frontier"
        )
        ax.axhline(result.slos[0].bound, color="red", lw=1, label=str(result.slos[0]))
        ax.set_xlabel(result.objective)
        ax.set_ylabel(result.slos[0].metric)
        ax.legend(fontsize=8)
        ax.set_title("irqlab tune: every candidate (means over replications)")
        fig.tight_layout()
        fig.savefig(out / "pareto.png", dpi=110)
        plt.close(fig)
        (out / "recommendation.md").write_text(summary_text(result), encoding="utf-8")
        rec: dict[str, Any] = {
            "feasible": result.feasible,
            "recommended": result.recommended,
            "commands": result.commands,
            "slos": [str(s) for s in result.slos],
            "minimize": result.objective,
            "loads": result.loads,
            "runs": result.runs,
        }
        if result.skipped or result.doubts:
            rec["skipped"] = [vars(k) for k in result.skipped]
            rec["doubts"] = [vars(k) for k in result.doubts]
            _write_skipped(result, out / "skipped.csv")
        (out / "recommendation.json").write_text(
            json.dumps(rec, indent=2) + "\n",
            encoding="utf-8",
        )
    except OSError as e:
        raise ConfigError(
            f"{option('--out', 'out=')} {out}: cannot write ({e.strerror})", "out"
        ) from None


def summary_text(result: TuneResult) -> str:
    """The recommendation as Markdown: the commands, the margins, the runners-up."""
    lines = ["# irqlab tune", ""]
    lines.append(f"SLOs: {', '.join(str(s) for s in result.slos)}; minimise {result.objective}; ")
    lines.append(
        f"loads (pps): {', '.join(f'{x:,.0f}' for x in result.loads)}; {count(result.runs, 'run')}."
    )
    lines.append("")
    t = result.table
    if result.feasible:
        row = result.row()
        lines += [f"## Recommended: {row['setting']}", "", "```sh", *result.commands, "```", ""]
        obj = f"{row['objective']:.4g}"
        ci = f"{row['objective_lo']:.4g} to {row['objective_hi']:.4g}"
        lines += [f"{result.objective} = {obj} (95% CI {ci})", ""]
        for s in result.slos:
            lo, hi = row[f"margin_lo[{s}]"], row[f"margin_hi[{s}]"]
            lines.append(
                f"- {s}: {s.metric} = {row[s.metric]:.4g} at the worst load; margin "
                f"{row[f'margin[{s}]']:.4g} (interval {lo:.4g} to {hi:.4g})"
            )
        runners = result.runners_up()
        if len(runners):
            lines += ["", "## Runners-up", ""]
            lines += [
                f"- {r['setting']}: {result.objective} = {r['objective']:.4g}"
                for _, r in runners.iterrows()
            ]
    else:
        lines += ["## No setting meets every SLO", "", "The closest:", ""]
        for _, r in closest(result).head(5).iterrows():
            parts = [f"{s.metric} = {r.get(s.metric, math.nan):.4g}" for s in result.slos]
            lines.append(f"- {r['setting']}: {', '.join(parts)}")
    counts = t["status"].value_counts().to_dict()
    lines += ["", "Candidates: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), ""]
    lines += _skipped_lines(
        result.skipped,
        f"Skipped before racing: {count(len(result.skipped), 'candidate')} with a setting that "
        "does nothing on this host",
        result.out,
    )
    lines += _skipped_lines(
        result.doubts,
        f"Raced, but may do nothing on this host: {count(len(result.doubts), 'candidate')}",
        result.out,
    )
    return "\n".join(lines)


def _skipped_lines(items: list[Skipped], title: str, out: Path | None) -> list[str]:
    """A section listing ``items`` (at most :data:`SHOWN_SKIPPED`), or nothing."""
    if not items:
        return []
    lines = [f"## {title}", ""]
    for k in items[:SHOWN_SKIPPED]:
        instead = f" — raced as {k.instead}" if k.instead and k.instead != k.setting else ""
        lines.append(f"- {k.setting}: {k.reason}{instead}")
    if len(items) > SHOWN_SKIPPED:
        where = " (skipped.csv lists them all)" if out is not None else ""
        lines.append(f"- … and {len(items) - SHOWN_SKIPPED} more{where}")
    return [*lines, ""]


def _write_skipped(result: TuneResult, path: Path) -> None:
    """skipped.csv: every candidate skipped or doubted, why, and what raced instead."""
    import csv

    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["setting", "status", "reason", "raced_as", "source"])
        for status, items in (("skipped", result.skipped), ("may do nothing", result.doubts)):
            for k in items:
                w.writerow([k.setting, status, k.reason, k.instead or "", k.source])
