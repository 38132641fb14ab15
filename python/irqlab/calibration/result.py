"""A calibration's result (:class:`Calibration`) and the files it writes: the fitted preset
``NAME.toml`` (a scenario file, each value with its uncertainty as a comment), ``residuals.csv``,
``calibration.json`` (everything), ``measured_vs_predicted.png``; and the summary it prints."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqlab import __version__, toml_writer
from irqlab.files import write_atomic
from irqlab.formatting import count, short, significant

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from irqlab.calibration.spec import TargetsSpec

#: The columns of residuals.csv.
RESIDUAL_COLUMNS = (
    "role",
    "name",
    "metric",
    "point",
    "measured",
    "sigma",
    "predicted",
    "predicted_se",
    "residual",
    "normalised",
)
#: The files a calibration writes besides NAME.toml (and the journal).
FILES = ("calibration.json", "residuals.csv", "measured_vs_predicted.png")


@dataclass
class Parameter:
    """A free parameter, fitted: its value, its 1-σ uncertainty (in its unit), and whether the
    targets identify it."""

    key: str
    start: float
    value: float
    sigma: float
    lo: float
    hi: float
    log: bool
    identifiable: bool
    status: str
    note: str
    at_bound: bool
    effect: float
    profile: dict[str, Any] | None = None


@dataclass
class Calibration:
    """The result of :func:`irqlab.calibrate`."""

    spec: TargetsSpec
    parameters: list[Parameter]
    rows: list[dict[str, Any]]
    chi2: float
    dof: int
    p_value: float
    poor: bool
    poor_reasons: list[str]
    chi2_start: float = math.nan
    error_scale: float = 1.0
    condition: float = math.nan
    combinations: list[dict[str, Any]] = field(default_factory=list)
    correlation: list[list[float]] = field(default_factory=list)
    jacobian: list[list[float]] = field(default_factory=list)
    message: str = ""
    stopped: str = ""
    evaluations: int = 0
    runs_new: int = 0
    runs_cached: int = 0
    wall_s: float = 0.0
    out: Path | None = None
    files: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def values(self) -> dict[str, float]:
        """The fitted values, by key."""
        return {p.key: p.value for p in self.parameters}

    @property
    def sigmas(self) -> dict[str, float]:
        """The 1-σ uncertainties, by key."""
        return {p.key: p.sigma for p in self.parameters}

    @property
    def reduced_chi2(self) -> float:
        return self.chi2 / self.dof if self.dof > 0 else math.nan

    def preset(self) -> dict[str, Any]:
        """The fitted platform as flat scenario keys: the base's platform keys, then the fitted
        values."""
        base = {k: v for k, v in self.spec.base.items() if k.startswith("platform.")}
        return {**base, **{p.key: _rounded(p.value, p.sigma) for p in self.parameters}}

    def describe(self) -> dict[str, Any]:
        """Everything, JSON-able (calibration.json)."""
        return {
            "irqlab": __version__,
            "kind": "calibration",
            "name": self.name,
            "definition": self.spec.describe(),
            "parameters": [vars(p) for p in self.parameters],
            "preset": self.preset(),
            "fit": {
                "chi2": self.chi2,
                "dof": self.dof,
                "reduced_chi2": self.reduced_chi2,
                "p_value": self.p_value,
                "poor": self.poor,
                "poor_reasons": self.poor_reasons,
                "chi2_start": self.chi2_start,
                "error_scale": self.error_scale,
                "condition": self.condition,
                "combinations": self.combinations,
                "correlation": self.correlation,
                "jacobian": self.jacobian,
                "message": self.message,
                "stopped": self.stopped,
            },
            "residuals": self.rows,
            "evaluations": self.evaluations,
            "runs": {"new": self.runs_new, "from_journal": self.runs_cached},
            "wall_s": self.wall_s,
        }


def _rounded(value: float, sigma: float) -> float:
    """``value`` to the place of its uncertainty's second significant digit (559.3 ± 10 →
    559.0, 3706 ± 1300 → 3700.0, 2e-8 ± 930 → 0.0); six significant digits when the
    uncertainty is unknown."""
    if not (math.isfinite(sigma) and sigma > 0) or value == 0:
        return float(f"{value:.6g}")
    return float(round(value, 1 - math.floor(math.log10(sigma)))) + 0.0  # no -0.0


def uncertainty_text(p: Parameter) -> str:
    """``± 120`` or ``± ∞`` (not identified)."""
    if not math.isfinite(p.sigma):
        return "± ∞"
    return f"± {significant(p.sigma, 2)}"


def preset_toml(result: Calibration) -> str:
    """NAME.toml: a scenario file holding the fitted platform, each fitted value's
    uncertainty as a trailing comment (calibration.json holds them for programs)."""
    head = [
        f"# {result.name}: fitted by irqlab calibrate {__version__} to "
        f"{count(len(result.spec.targets), 'target')} of {Path(result.spec.source).name}",
        f"# chi2/dof = {_num(result.reduced_chi2)} (p = {_p(result.p_value)})"
        + ("; the fit is poor" if result.poor else ""),
        "# every value with its 1-sigma uncertainty; calibration.json has them all",
        "",
    ]
    fitted = {p.key: p for p in result.parameters}
    out, table = [], ""
    for line in toml_writer.scenario(result.preset()).splitlines():
        if line.startswith("[") and line.endswith("]"):
            table = line.strip("[]") + "."
        elif " = " in line:
            p = fitted.get(table + line.split(" = ", 1)[0].strip())
            if p is not None:
                flag = "" if p.identifiable else f"; NOT IDENTIFIED ({p.status})"
                line = f"{line}  # {uncertainty_text(p)}{flag}"
        out.append(line)
    return "\n".join(head + out) + "\n"


def _num(x: float) -> str:
    return "n/a" if not math.isfinite(x) else short(x, 3)


def _p(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.2g}"


def residuals_csv(result: Calibration) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(RESIDUAL_COLUMNS), lineterminator="\n")
    w.writeheader()
    for row in result.rows:
        w.writerow({k: row[k] for k in RESIDUAL_COLUMNS})
    return buf.getvalue()


def figure(result: Calibration) -> Figure:
    """Measured against predicted, one panel per metric: error bars both ways (the measured
    σ across, the simulation's standard error up), the line y = x; targets as circles,
    validation points as squares."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    metrics = list(dict.fromkeys(r["metric"] for r in result.rows))
    cols = min(3, len(metrics))
    rows_n = math.ceil(len(metrics) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.8 * rows_n), layout="constrained")
    axes = fig.subplots(rows_n, cols, squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        lo, hi = math.inf, -math.inf
        for role, marker, color in (("target", "o", "tab:blue"), ("validation", "s", "tab:orange")):
            part = [r for r in result.rows if r["metric"] == metric and r["role"] == role]
            if not part:
                continue
            x = [r["measured"] for r in part]
            y = [r["predicted"] for r in part]
            ax.errorbar(
                x,
                y,
                xerr=[r["sigma"] for r in part],
                yerr=[r["predicted_se"] for r in part],
                fmt=marker,
                color=color,
                ms=5,
                capsize=2,
                lw=1,
                label=role,
            )
            for r in part:
                lo = min(lo, r["measured"] - r["sigma"], r["predicted"])
                hi = max(hi, r["measured"] + r["sigma"], r["predicted"])
        if math.isfinite(lo) and math.isfinite(hi):
            pad = 0.05 * (hi - lo or abs(hi) or 1.0)
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="gray", lw=0.8, ls="--")
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.set_title(metric, fontsize=10)
        ax.set_xlabel("measured")
        ax.set_ylabel("predicted")
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(metrics) :]:
        ax.set_visible(False)
    fig.suptitle(f"{result.name}: measured against predicted (dashed: y = x)", fontsize=11)
    return fig


def write_outputs(result: Calibration, out: Path) -> list[str]:
    """Writes the preset, residuals.csv, calibration.json and the figure into ``out``; returns
    the names written."""
    from irqlab.errors import ConfigError

    what = "--out"
    written = []
    if result.parameters:  # a check without free keys fits no preset
        written.append(f"{result.name}.toml")
        write_atomic(out / written[0], preset_toml(result), what)
    write_atomic(out / "residuals.csv", residuals_csv(result), what)
    fig = figure(result)
    try:
        fig.savefig(out / "measured_vs_predicted.png", dpi=110)
    except OSError as e:
        raise ConfigError(
            f"{what} {out}: cannot write the figure ({e.strerror or e})", what
        ) from None
    # last: its presence marks a finished calibration (irqlab report reads it)
    text = json.dumps(result.describe(), indent=2, default=_json_default, allow_nan=True)
    write_atomic(out / "calibration.json", text + "\n", what)
    return [*written, "residuals.csv", "calibration.json", "measured_vs_predicted.png"]


def _json_default(v: Any) -> Any:
    if isinstance(v, Path):
        return str(v)
    if hasattr(v, "item"):
        return v.item()
    if hasattr(v, "tolist"):
        return v.tolist()
    raise TypeError(f"{type(v).__name__} is not JSON")


def summary_text(result: Calibration) -> str:
    """What ``irqlab calibrate`` prints: the parameters, the fit's quality, the worst
    residuals, the validation points."""
    lines = [
        f"calibration {result.name}: {len(result.parameters)} free parameter(s), "
        f"{count(len(result.spec.targets), 'target')}, "
        f"{count(len(result.spec.validation), 'validation point')}",
        "",
    ]
    if not result.parameters:
        lines[0] = (
            f"calibration {result.name}: nothing fitted, the base compared with "
            f"{count(len(result.spec.validation), 'validation point')}"
        )
        valid = [r for r in result.rows if r["role"] == "validation"]
        poor = [r for r in valid if abs(r["normalised"]) > 3]
        lines += _residual_lines(valid)
        if poor:
            lines += ["", f"{count(len(poor), 'point')} more than 3σ off"]
        lines += [
            "",
            f"{count(result.runs_new, 'run')} made, {result.runs_cached} from the journal, "
            f"in {result.wall_s:.1f} s",
        ]
        return "\n".join(lines) + "\n"
    table = [["parameter", "start", "fitted ± σ", "bounds", "identified"]]
    for p in result.parameters:
        bounds = f"[{short(p.lo, 4)}, {short(p.hi, 4)}]" + (" log" if p.log else "")
        fitted = f"{short(_rounded(p.value, p.sigma), 4)} {uncertainty_text(p)}"
        if p.at_bound:
            fitted += " (at a bound)"
        ident = "yes" if p.identifiable else f"NO: {p.status}"
        table.append([p.key, short(p.start, 4), fitted, bounds, ident])
    lines += _columns(table)
    for p in result.parameters:
        if p.note:
            lines.append(f"  {p.key}: {p.note}")
        if p.profile is not None and not p.profile["agrees"]:
            lines.append(f"  {p.key}: profile: {p.profile['note']}")
    lines.append("")
    dof_text = f"{result.dof}" if result.dof > 0 else "0 (as many parameters as targets)"
    lines.append(
        f"χ² = {_num(result.chi2)} on {dof_text} degrees of freedom: χ²/dof = "
        f"{_num(result.reduced_chi2)}, p = {_p(result.p_value)}"
        + (f" (σ scaled by √{_num(result.error_scale)})" if result.error_scale > 1 else "")
    )
    if result.poor:
        lines.append("THE FIT IS POOR:")
        lines += [f"  - {r}" for r in result.poor_reasons]
    if result.stopped:
        lines.append(f"the optimiser stopped early: {result.stopped}")
    targets = sorted(
        (r for r in result.rows if r["role"] == "target"), key=lambda r: -abs(r["normalised"])
    )
    lines += ["", "worst target residuals (predicted − measured):"]
    lines += _residual_lines(targets[:5])
    valid = [r for r in result.rows if r["role"] == "validation"]
    if valid:
        lines += ["", "validation (not fitted):"]
        lines += _residual_lines(valid)
    lines += [
        "",
        f"{count(result.evaluations, 'evaluation')} ({count(result.runs_new, 'run')} made, "
        f"{result.runs_cached} from the journal) in {result.wall_s:.1f} s",
    ]
    return "\n".join(lines) + "\n"


def _residual_lines(rows: list[dict[str, Any]]) -> list[str]:
    table = [["", "metric", "measured ± σ", "predicted", "residual"]]
    for r in rows:
        table.append(
            [
                r["name"],
                r["metric"],
                f"{short(r['measured'], 4)} ± {significant(r['sigma'], 2)}",
                short(r["predicted"], 4),
                f"{r['normalised']:+.2f}σ",
            ]
        )
    return _columns(table)


def _columns(table: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
