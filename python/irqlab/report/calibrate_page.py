"""The page of a calibration: the fitted parameters with their uncertainties and whether the
targets identify them, the fit's quality, every target's and validation point's residual, the
figure of measured against predicted, the fitted preset and the command that runs it again."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.formatting import count, page_number
from irqlab.report.page import Cell, Code, Facts, Figures, Page, Section, Table
from irqlab.report.parts import png, shell, value_cell
from irqlab.report.reading import read_json, read_table

#: The files a calibration's folder needs for its page.
FILES = ("calibration.json", "residuals.csv", "measured_vs_predicted.png")
_FIT_FIELDS = ("chi2", "dof", "p_value", "poor", "poor_reasons")
_PARAMETER_FIELDS = ("key", "start", "value", "sigma", "lo", "hi", "identifiable", "status")


def unfinished(path: Path) -> bool:
    """Whether the folder holds only the journal of a calibration that did not finish (its
    journal says it is a calibration's)."""
    import sqlite3

    journal = path / "journal.sqlite"
    if not journal.is_file():
        return False
    try:
        db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'definition'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return row is not None and '"kind": "calibration"' in str(row[0])


def _number(x: Any) -> float:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else math.nan


def _check(data: Any, path: Path) -> None:
    """calibration.json has what the page reads; else one line naming what is missing."""
    where = path / "calibration.json"
    if not isinstance(data, Mapping) or data.get("kind") != "calibration":
        raise ConfigError(f"{where}: not a calibration's result (damaged?)", None)
    fit = data.get("fit")
    if not isinstance(fit, Mapping) or not all(k in fit for k in _FIT_FIELDS):
        raise ConfigError(f"{where}: no field fit with {', '.join(_FIT_FIELDS)} (damaged?)", None)
    params = data.get("parameters")
    if not isinstance(params, list) or not all(
        isinstance(p, Mapping) and all(k in p for k in _PARAMETER_FIELDS) for p in params
    ):
        raise ConfigError(f"{where}: field parameters is damaged", None)
    if not isinstance(data.get("preset"), Mapping) or not isinstance(data.get("name"), str):
        raise ConfigError(f"{where}: no preset or name (damaged?)", None)


def page(path: Path, title: str | None) -> Page:
    """The page of the calibration folder ``path``."""
    from irqlab import toml_writer
    from irqlab.calibration.result import RESIDUAL_COLUMNS

    data = read_json(path / "calibration.json")
    _check(data, path)
    residuals = read_table(path / "residuals.csv")
    for col in RESIDUAL_COLUMNS:
        if col not in residuals.columns:
            raise ConfigError(f"{path / 'residuals.csv'}: no column {col!r} (damaged?)", None)
    fit = data["fit"]
    params = data["parameters"]
    name = data["name"]
    chi2, dof, p_value = _number(fit["chi2"]), fit["dof"], _number(fit["p_value"])
    targets = residuals[residuals["role"] == "target"]
    valid = residuals[residuals["role"] == "validation"]
    runs = data.get("runs") if isinstance(data.get("runs"), Mapping) else {}
    lede = [
        f"{count(len(params), 'free parameter')} fitted to {count(len(targets), 'target')}; "
        f"{count(len(valid), 'validation point')} predicted, not fitted.",
        f"χ² = {page_number(chi2)} on {dof} degrees of freedom (χ²/dof = "
        f"{page_number(chi2 / dof) if isinstance(dof, int) and dof > 0 else '—'}, p = "
        f"{page_number(p_value)}); "
        f"{count(int(_number(data.get('evaluations')) or 0), 'evaluation')}, "
        f"{count(int(_number(runs.get('new')) or 0), 'run')} made, "
        f"{page_number(runs.get('from_journal'))} from the journal, in "
        f"{page_number(_number(data.get('wall_s')))} s.",
    ]
    verdict = Section("verdict", "Verdict")
    unidentified = [p for p in params if not p["identifiable"]]
    if fit["poor"]:
        verdict.p("The fit is poor: " + "; ".join(str(r) for r in fit["poor_reasons"]) + ".")
    else:
        verdict.p(
            "The fit meets the targets within their uncertainties (χ² p-value ≥ 0.01, no "
            "residual beyond 3σ)."
        )
    if unidentified:
        verdict.p(
            "Not identified by these targets: "
            + "; ".join(f"{p['key']} ({p.get('note') or p['status']})" for p in unidentified)
            + "."
        )
    else:
        verdict.p("The targets identify every free parameter.")
    if fit.get("stopped"):
        verdict.p(f"The optimiser stopped early: {fit['stopped']}.")

    table = Section("parameters", "Fitted parameters")
    table.items.append(_parameters_table(params))
    notes = [
        (str(p["key"]), str(p["profile"]["note"]))
        for p in params
        if isinstance(p.get("profile"), Mapping) and "note" in p["profile"]
    ]
    if notes:
        table.p(
            "The profile: χ² re-evaluated at each fitted value ± σ, the others fixed, against "
            "the rise the Jacobian predicts."
        )
        table.items.append(Facts(notes))

    figs = Section("figures", "Measured against predicted")
    figs.p(
        "One panel per metric; horizontal bars: the measured value's σ; vertical bars: the "
        "simulation's standard error over the seeds; dashed: y = x. Circles are targets, "
        "squares validation points."
    )
    figure = png(
        path / "measured_vs_predicted.png", "measured-vs-predicted", "measured vs predicted"
    )
    figs.items.append(Figures([figure]))
    res = Section("residuals", "Residuals")
    res.items.append(_residuals_table(residuals))
    sections = [verdict, table, figs]
    for prefix in ("lab", "bundle"):
        if (path / f"{prefix}-comparison.json").is_file():
            sections.append(_lab_section(path, prefix))
    if (path / "lab-distributions.json").is_file():
        sections.append(_distributions_section(path))
    sections.append(res)

    preset = Section("preset", "The fitted preset")
    preset_file = path / f"{name}.toml"
    text = (
        preset_file.read_text(encoding="utf-8", errors="replace")
        if preset_file.is_file()
        else toml_writer.scenario(dict(data["preset"]))
    )
    preset.p(f"{name}.toml, a scenario file: irqlab run it, or use it as a sweep's base.")
    preset.items.append(Code(text, f"{name}.toml", f"{name}.toml", "preset"))
    rerun = Section("rerun", "How to re-run")
    rerun.p(
        "Run the targets file again into this folder: the fit replays from the runs kept in "
        "journal.sqlite (nothing new to run); into a new folder it runs again."
    )
    definition = data.get("definition")
    source = definition.get("source") if isinstance(definition, Mapping) else None
    if not isinstance(source, str) or source == "targets":  # a calibration from a dict
        source = "TARGETS.toml"
    rerun.items.append(
        Code(shell(["irqlab", "calibrate", source, "--out", str(path)]), id="command")
    )
    return Page(
        title or f"irqlab calibrate — {name}",
        "calibration",
        str(path),
        lede,
        [*sections, preset, rerun],
    )


def _parameters_table(params: list[Mapping[str, Any]]) -> Table:
    headers = ["parameter", "start", "fitted", "σ", "bounds", "identified", "why not"]
    rows = []
    for p in params:
        key = str(p["key"])
        sigma = _number(p["sigma"])
        rows.append(
            [
                Cell(key),
                value_cell(_number(p["start"]), data_key=f"{key}.start"),
                value_cell(_number(p["value"]), data_key=f"{key}.value"),
                value_cell(sigma, data_key=f"{key}.sigma") if math.isfinite(sigma) else Cell("∞"),
                Cell(
                    f"[{page_number(_number(p['lo']))}, {page_number(_number(p['hi']))}]"
                    + (" log" if p.get("log") else "")
                ),
                Cell("yes" if p["identifiable"] else "no", strong=not p["identifiable"]),
                Cell("" if p["identifiable"] else str(p.get("note") or p["status"])),
            ]
        )
    return Table(
        "parameters-table",
        "each free parameter: its start, fitted value and 1-σ uncertainty",
        headers,
        rows,
        note="σ from the Jacobian at the optimum, (JᵀJ)⁻¹ of the weighted problem, scaled by "
        "χ²/dof when that exceeds 1.",
    )


def _residuals_table(residuals: Any) -> Table:
    headers = ["role", "name", "metric", "point", "measured", "σ", "predicted", "s.e.", "(p − m)/σ"]
    rows = []
    for _, r in residuals.iterrows():
        z = _number(r["normalised"])
        cell = value_cell(z, data_key="normalised")
        cell.strong = abs(z) > 3
        rows.append(
            [
                Cell(str(r["role"])),
                Cell(str(r["name"])),
                Cell(str(r["metric"])),
                Cell(str(r["point"])),
                value_cell(_number(r["measured"])),
                value_cell(_number(r["sigma"])),
                value_cell(_number(r["predicted"])),
                value_cell(_number(r["predicted_se"])),
                cell,
            ]
        )
    return Table(
        "residuals-table",
        "every target and validation point",
        headers,
        rows,
        note="(p − m)/σ: predicted minus measured over σ_total = √(σ² + s.e.²); beyond 3 in bold.",
    )


def _lab_section(path: Path, prefix: str = "lab") -> Section:
    """A lab's rates (or measurement bundles'): predicted against measured at each, with the
    tolerance and the verdict."""
    where = path / f"{prefix}-comparison.json"
    data = read_json(where)
    rows = data.get("rows") if isinstance(data, Mapping) else None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise ConfigError(f"{where}: no list of rows (damaged?)", None)
    needed: tuple[str, ...] = ("label", "role", "threaded", "rate_pps", "measured", "runs")
    needed += ("predicted", "predicted_se", "tolerance", "met")
    for r in rows:
        missing = [k for k in needed if k not in r]
        if missing:
            raise ConfigError(f"{where}: a row lacks {', '.join(missing)} (damaged?)", None)
    what = "The lab" if prefix == "lab" else "The measurement bundles"
    section = Section(prefix, f"{what}: predicted against measured at every rate")
    valid = [r for r in rows if r["role"] == "validation"]
    met = sum(1 for r in valid if r["met"])
    repeated = "the repeated lab runs" if prefix == "lab" else "repeated measurements"
    section.p(
        f"Measured on {data.get('kernel') or 'the local kernel'}; fitted at the filled points, "
        f"predicted at the hollow ones: {met} of {len(valid)} predictions within their "
        f"tolerance (the goal, or the spread of {repeated} where that is wider). "
        "Bars: the runs' range; bands: ±2 standard errors of the prediction over the seeds."
    )
    figure = path / f"{prefix}_predicted_vs_measured.png"
    if figure.is_file():
        section.items.append(Figures([png(figure, prefix, f"{prefix}: predicted vs measured")]))
    head = ["quantity", "NAPI", "rate /s", "role", "measured", "runs' range", "predicted",
            "± s.e.", "tolerance", "met"]  # fmt: skip
    body = []
    for r in rows:
        runs = [float(x) for x in r["runs"]]
        body.append(
            [
                Cell(str(r["label"])),
                Cell("threaded" if r["threaded"] else "softirq"),
                value_cell(r["rate_pps"]),
                Cell("fitted" if r["role"] == "target" else "predicted"),
                value_cell(r["measured"]),
                Cell(f"{page_number(min(runs))} – {page_number(max(runs))}"),
                value_cell(r["predicted"]),
                value_cell(r["predicted_se"]),
                value_cell(r["tolerance"]),
                Cell("yes" if r["met"] else "NO"),
            ]
        )
    title = "The lab's rates" if prefix == "lab" else "The bundles' rates"
    section.items.append(Table(f"{prefix}-rates", title, head, body))
    return section


def _distributions_section(path: Path) -> Section:
    """The lab's traced points: packets per poll and the app's wake-up delay, measured and
    predicted."""
    where = path / "lab-distributions.json"
    data = read_json(where)
    rows = data.get("rows") if isinstance(data, Mapping) else None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise ConfigError(f"{where}: no list of rows (damaged?)", None)
    for r in rows:
        missing = [k for k in ("threaded", "rate_pps", "sent_pps", "throttled",
                               "packets_per_poll", "wakeup_us") if k not in r]  # fmt: skip
        if missing:
            raise ConfigError(f"{where}: a row lacks {', '.join(missing)} (damaged?)", None)
    section = Section("lab-distributions", "The lab's distributions: measured and predicted")
    section.p(
        "At the lab's traced points, the fitted model run at the rate the traced sender "
        "achieved: each log2 bucket's share of the polls (bars: measured; hatched: predicted) "
        "and their total variation distance (½ Σ |p − q|: 0 the same, 1 disjoint), and the "
        "app's wake-up delay (sched_wakeup → sched_switch; the model's leaves the switch's own "
        "cost out, as the tracepoint does). No goal is set for these: evidence. A traced "
        "point is not the untraced load the fit used: the probes cost the kernel time the "
        "model does not charge, and a point where they held the sender back is marked."
    )
    figure = path / "lab_packets_per_poll.png"
    if figure.is_file():
        section.items.append(
            Figures([png(figure, "lab-ppp", "lab: packets per poll, measured and predicted")])
        )
    head = ["NAPI", "rate /s", "sent /s", "ppp distance", "wake-up mean µs (m / p)",
            "wake-up p99 µs (m / p)", "note"]  # fmt: skip
    body = []
    for r in rows:
        tv = r["packets_per_poll"].get("total_variation")
        m, p = r["wakeup_us"].get("measured"), r["wakeup_us"].get("predicted")

        def pair(key: str, m: Any = m, p: Any = p) -> Cell:
            a = page_number(m[key]) if isinstance(m, Mapping) else "—"
            b = page_number(p[key]) if isinstance(p, Mapping) else "—"
            return Cell(f"{a} / {b}")

        body.append(
            [
                Cell("threaded" if r["threaded"] else "softirq"),
                value_cell(r["rate_pps"]),
                value_cell(r["sent_pps"]),
                Cell("—" if tv is None else f"{tv:.2f}"),
                pair("mean"),
                pair("p99"),
                Cell("tracing held the sender back" if r["throttled"] else ""),
            ]
        )
    section.items.append(Table("lab-distributions", "The lab's traced points", head, body))
    return section
