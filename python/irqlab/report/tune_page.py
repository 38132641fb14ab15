"""The page of a tune: the recommendation with its margins, every candidate against the first
SLO's metric, the candidates' table, the scenario, and the ``irqlab tune`` command that runs the
race again."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from irqlab import shapes, toml_writer
from irqlab.errors import ConfigError
from irqlab.formatting import count, exact, page_number
from irqlab.report.charts import error_bars, finite, metric_label, plotly_figure, scatter
from irqlab.report.page import Cell, Code, Facts, Figures, Page, Plot, Section, Table
from irqlab.report.parts import scenario_table, shell, value_cell
from irqlab.report.reading import missing, py, read_json, read_table

#: The numeric columns of a tune's tables (``margin[SLO]`` and the like by their prefix).
_TUNE_NUMBERS = (
    "objective",
    "objective_lo",
    "objective_hi",
    "margin",
    "margin_lo",
    "margin_hi",
    "worst_load",
)
#: The columns of a tune's candidates.csv the page reads.
_TUNE_COLUMNS = (
    "candidate",
    "setting",
    "status",
    "reason",
    "replications",
    "objective",
    "objective_lo",
    "objective_hi",
)
#: The files each kind of folder needs.


_STATUS_COLORS = {
    "feasible": "#2ca02c",
    "undecided": "#ff7f0e",
    "infeasible": "#d62728",
    "worse": "#7f7f7f",
}


def _tune_scenario(scenario: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """A tune's scenario as tune.json holds it (every key), checked as a scenario: an edited
    one is a page of what it now says, or one line naming the field."""
    from irqlab.errors import ConfigWarning
    from irqlab.scenario import resolve

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)  # the tune warned when it ran
            return resolve(dict(scenario))
    except ConfigError as e:
        raise ConfigError(f"{path / 'tune.json'}: field scenario: {e}", "scenario") from None


def page(path: Path, title: str | None) -> Page:
    """The page of the tune folder ``path``."""
    from irqlab.ops.tune import Slo, TuneResult, closest, label

    definition = read_json(path / "tune.json")
    rec = read_json(path / "recommendation.json")
    need = {"scenario", "slos", "minimize", "candidates", "loads", "confidence", "replications"}
    if not isinstance(definition, Mapping) or not need <= set(definition):
        raise ConfigError(f"{path / 'tune.json'}: not a tune's definition (damaged?)", None)
    if not isinstance(rec, Mapping) or "feasible" not in rec:
        raise ConfigError(f"{path / 'recommendation.json'}: damaged (no 'feasible')", None)
    shapes.check(definition, shapes.TUNE_DEFINITION, path / "tune.json")
    shapes.check(rec, shapes.TUNE_RECOMMENDATION, path / "recommendation.json")
    definition = {**definition, "scenario": _tune_scenario(definition["scenario"], path)}
    table = read_table(path / "candidates.csv")
    front = read_table(path / "pareto.csv")
    try:
        slos = [Slo.parse(s) for s in definition["slos"]]
    except ConfigError as e:
        raise ConfigError(f"{path / 'tune.json'}: field slos: {e}", "slos") from None
    objective = definition["minimize"]
    for col in (*_TUNE_COLUMNS, slos[0].metric):
        if col not in table.columns:
            raise ConfigError(f"{path / 'candidates.csv'}: no column {col!r} (damaged?)", None)
    for col in ("objective", slos[0].metric):  # the frontier's line
        if col not in front.columns:
            raise ConfigError(f"{path / 'pareto.csv'}: no column {col!r} (damaged?)", None)
    measured = [objective, *(s.metric for s in slos)]
    for name, t in (("candidates.csv", table), ("pareto.csv", front)):
        shapes.check_columns(
            t,
            path / name,
            integers=("candidate", "replications"),
            numbers_=[c for c in t.columns if c.split("[")[0] in _TUNE_NUMBERS or c in measured],
        )
    counts = table["status"].value_counts().to_dict()
    runs = rec.get("runs")
    loads = definition["loads"]
    lede = [
        f"SLOs: {'; '.join(str(s) for s in slos)} — each at every load "
        f"({', '.join(page_number(x) for x in loads)} packets/s), decided at "
        f"{definition['confidence']:g} confidence (Bonferroni over SLOs and loads). "
        f"Objective: the least {objective} (mean over the loads).",
        f"{count(len(table), 'candidate')}, "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; {count(runs, 'run') if isinstance(runs, int) else '? runs'}, "
        f"{definition['replications'][0]}–"
        f"{definition['replications'][1]} replications per candidate and load.",
    ]

    recommend = Section("recommendation", "Recommendation")
    pick = None
    if rec["feasible"] and rec.get("recommended") is not None:
        name = label(rec["recommended"])
        match = table[table["setting"] == name]
        pick = int(match.iloc[0]["candidate"]) if len(match) else None
        recommend.p(f"Recommended: {name} (candidate {page_number(pick)}).")
        recommend.items.append(Code("\n".join(rec.get("commands", [])), "the commands to type"))
        if pick is not None:
            row = match.iloc[0]
            facts = [
                (
                    objective,
                    f"{page_number(row['objective'])} (95% CI "
                    f"{page_number(row['objective_lo'])} to {page_number(row['objective_hi'])})",
                )
            ]
            for s in slos:
                margin = row.get(f"margin[{s}]")
                facts.append(
                    (
                        str(s),
                        f"{s.metric} = {page_number(py(row.get(s.metric)))} at the worst load; "
                        f"margin {page_number(py(margin))} (interval "
                        f"{page_number(py(row.get(f'margin_lo[{s}]')))} to "
                        f"{page_number(py(row.get(f'margin_hi[{s}]')))})",
                    )
                )
            recommend.items.append(Facts(facts))
        runners = table[(table["status"] == "feasible") & (table["candidate"] != pick)]
        runners = runners.sort_values(["objective", "candidate"]).head(5)
        if len(runners):
            recommend.p(
                "Runners-up: "
                + "; ".join(
                    f"{r['setting']} ({objective} = {page_number(py(r['objective']))})"
                    for _, r in runners.iterrows()
                )
                + "."
            )
    else:
        recommend.p("No candidate meets every SLO. The closest, by their worst relative shortfall:")
        result = TuneResult(None, False, [], table, slos, objective, loads, 0)
        recommend.items.append(
            Facts(
                [
                    (
                        str(r["setting"]),
                        ", ".join(f"{s.metric} = {page_number(py(r.get(s.metric)))}" for s in slos),
                    )
                    for _, r in closest(result).head(5).iterrows()
                ]
            )
        )

    figs = Section("figures", "Figures")
    figs.p(
        f"Every candidate's {objective} against {slos[0].metric} (means; bars: 95% intervals, "
        f"{slos[0].metric} at its worst load), coloured by status; the dashed line is the "
        "Pareto frontier. Hover over a point for its setting; click a legend entry to hide or "
        "show a status."
    )
    figs.items.append(Figures([_pareto_figure(table, front, slos[0], objective, pick)]))

    cands = Section("candidates", "Candidates")
    cands.items.append(_candidates_table(table, slos))

    scen = Section("scenario", "Scenario")
    scenario = dict(definition["scenario"])
    scen.p("The scenario every candidate starts from (its knobs then change it).")
    scen.items.append(scenario_table(scenario, "scenario-table", "the scenario"))

    rerun = Section("rerun", "How to re-run")
    command, note = _tune_command(definition, path, rec)
    rerun.p(
        "Save the scenario as scenario.toml (or download it) and run the command: the same "
        "seed gives the same decisions with any executor. Into this folder it resumes from "
        "journal.sqlite (nothing left to run); into a new one it runs the race again."
    )
    rerun.items.append(Code(command, id="command"))
    if note:
        rerun.p(note)
    rerun.items.append(
        Code(toml_writer.scenario(scenario), "scenario.toml", "scenario.toml", "toml")
    )
    return Page(
        title or f"irqlab tune — {path.name or path.resolve().name}",
        "tune",
        str(path),
        lede,
        [recommend, figs, cands, scen, rerun],
    )


def _candidates_table(table: Any, slos: Sequence[Any]) -> Table:
    headers = ["candidate", "setting", "status", "why", "replications", "objective (95% CI)"]
    for s in slos:
        headers += [f"{s.metric} (worst load)", f"margin to {s} (interval)", "worst load"]
    rows = []
    for _, r in table.iterrows():
        c = int(r["candidate"])
        reason = r.get("reason")
        cells = [
            value_cell(c, data_candidate=c, data_key="candidate"),
            Cell(str(r["setting"])),
            value_cell(str(r["status"]), data_candidate=c, data_key="status"),
            Cell("" if missing(reason) else str(reason)),
            value_cell(py(r.get("replications")), data_candidate=c, data_key="replications"),
            _interval_cell(r, "objective", "objective_lo", "objective_hi", c),
        ]
        for s in slos:
            cells.append(value_cell(py(r.get(s.metric)), data_candidate=c, data_key=s.metric))
            cells.append(_interval_cell(r, f"margin[{s}]", f"margin_lo[{s}]", f"margin_hi[{s}]", c))
            cells.append(
                value_cell(
                    py(r.get(f"worst_load[{s}]")), data_candidate=c, data_key=f"worst_load[{s}]"
                )
            )
        rows.append(cells)
    return Table(
        "candidates-table",
        "every candidate, in the search order",
        headers,
        rows,
        note="feasible: meets every SLO with the stated confidence; infeasible: misses one; "
        "worse: costs more than the best feasible one (paired interval); undecided: neither "
        "shown within the replications allowed.",
    )


def _interval_cell(row: Any, key: str, lo: str, hi: str, candidate: int) -> Cell:
    cell = value_cell(py(row.get(key)), data_candidate=candidate, data_key=key)
    low, high = py(row.get(lo)), py(row.get(hi))
    if not missing(row.get(key)) and not missing(low) and not missing(high):
        cell.text = f"{page_number(py(row.get(key)))} ({page_number(low)} to {page_number(high)})"
        cell.attrs["data-lo"], cell.attrs["data-hi"] = exact(low), exact(high)
    return cell


def _pareto_figure(table: Any, front: Any, slo: Any, objective: str, pick: int | None) -> Plot:
    t = table.dropna(subset=["objective", slo.metric])
    data = []
    sign = -1 if slo.upper else 1  # metric = bound − margin (a ceiling), bound + margin (a floor)

    def metric_interval(part: Any) -> tuple[list[Any], list[Any]]:
        lo = part.get(f"margin_lo[{slo}]")
        hi = part.get(f"margin_hi[{slo}]")
        if lo is None or hi is None:
            return [None] * len(part), [None] * len(part)
        ends_a = slo.bound + sign * lo
        ends_b = slo.bound + sign * hi
        top = finite(ends_a.where(ends_a > ends_b, ends_b) - part[slo.metric])
        bottom = finite(part[slo.metric] - ends_a.where(ends_a < ends_b, ends_b))
        return top, bottom

    for status, color in _STATUS_COLORS.items():
        part = t[t["status"] == status]
        if not len(part):
            continue
        top, bottom = metric_interval(part)
        data.append(
            scatter(
                "markers",
                status,
                finite(part["objective"]),
                finite(part[slo.metric]),
                marker={"color": color, "size": 8, "opacity": 0.8},
                error_x=error_bars(
                    finite(part["objective_hi"] - part["objective"]),
                    finite(part["objective"] - part["objective_lo"]),
                    thickness=1,
                    width=0,
                ),
                error_y=error_bars(top, bottom, thickness=1, width=0),
                text=[str(s) for s in part["setting"]],
                customdata=[
                    [int(c), "" if missing(r) else str(r), page_number(py(o)), page_number(py(v))]
                    for c, r, o, v in zip(
                        part["candidate"],
                        part["reason"],
                        part["objective"],
                        part[slo.metric],
                        strict=True,
                    )
                ],
                hovertemplate=(
                    "%{text}<br>candidate %{customdata[0]}<br>"
                    f"{objective} = %{{customdata[2]}}<br>{slo.metric} = %{{customdata[3]}}<br>"
                    "%{customdata[1]}<extra>" + status + "</extra>"
                ),
            )
        )
    if len(front):
        f = front.sort_values("objective")
        x, y = finite(f["objective"]), finite(f[slo.metric])
        dashed = {"color": "black", "dash": "dash", "width": 1}
        data.append(scatter("lines", "Pareto frontier", x, y, line=dashed, hoverinfo="skip"))
    if len(t):
        lo, hi = float(t["objective_lo"].min()), float(t["objective_hi"].max())
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = float(t["objective"].min()), float(t["objective"].max())
        data.append(
            scatter(
                "lines",
                str(slo),
                [lo, hi],
                [slo.bound, slo.bound],
                line={"color": "#d62728", "width": 1},
                hovertemplate=f"{slo}<extra></extra>",
            )
        )
    if pick is not None:
        row = t[t["candidate"] == pick]
        if len(row):
            data.append(
                scatter(
                    "markers",
                    "recommended",
                    finite(row["objective"]),
                    finite(row[slo.metric]),
                    marker={
                        "symbol": "star",
                        "size": 18,
                        "color": "gold",
                        "line": {"color": "black", "width": 1},
                    },
                    text=[str(s) for s in row["setting"]],
                    hovertemplate="recommended: %{text}<extra></extra>",
                )
            )
    layout = {
        "title": {"text": "Every candidate: objective against the first SLO's metric"},
        "xaxis": {"title": {"text": metric_label(objective)}},
        "yaxis": {"title": {"text": metric_label(slo.metric)}},
        "height": 480,
    }
    return plotly_figure("pareto", f"{objective} against {slo.metric}", data, layout)


def _knob_text(value: Any) -> str | None:
    """A knob value as ``--knob`` reads it back (None: it cannot be written in a list)."""
    from irqlab.ops.tune.search import scalar

    if isinstance(value, str):
        if "," in value or ".." in value or not value.strip():
            return None
        return value if scalar(value) == value else toml_writer.string(value)
    return toml_writer.value(value)


def _tune_command(
    definition: Mapping[str, Any], path: Path, rec: Mapping[str, Any]
) -> tuple[str, str]:
    """The ``irqlab tune`` command that runs this tune again, and a note when the candidates
    cannot be given as knobs."""
    from irqlab.ops.tune.search import default_candidates, effective_candidates, knob_candidates

    base = dict(definition["scenario"])
    loads = [float(x) for x in definition["loads"]]
    candidates = [dict(c) for c in definition["candidates"]]
    words = ["irqlab", "tune", "scenario.toml"]
    for s in definition["slos"]:
        words += ["--slo", s]
    note = ""
    knobs: list[tuple[str, list[Any]]] | None = None
    driver = definition.get("driver")
    try:
        same_as_default = (
            effective_candidates(default_candidates(base), base, loads, driver) == candidates
        )
    except ConfigError:
        same_as_default = False
    if not same_as_default:
        keys = list(dict.fromkeys(k for c in candidates for k in c))
        knobs = [(k, list(dict.fromkeys(c[k] for c in candidates if k in c))) for k in keys]
        try:
            expressible = (
                effective_candidates(knob_candidates(knobs), base, loads, driver) == candidates
            )
        except ConfigError:
            expressible = False
        texts = [[_knob_text(v) for v in values] for _, values in knobs]
        if expressible and all(t is not None for vs in texts for t in vs):
            for (k, _), vs in zip(knobs, texts, strict=True):
                words += ["--knob", f"{k}={','.join(t for t in vs if t is not None)}"]
        else:
            note = (
                "Its candidates are not every combination of a few knobs' values (a tune from "
                "Python with its own list?): give them as --knob, or call irqlab.tune with "
                "the candidates listed in tune.json."
            )
    if definition["minimize"] != "cpu.busy":
        words += ["--minimize", definition["minimize"]]
    if loads != [float(base["traffic.rate_pps"])]:
        words += ["--load-range", ",".join(toml_writer.value(x) for x in definition["loads"])]
    if float(definition["confidence"]) != 0.95:
        words += ["--confidence", repr(float(definition["confidence"]))]
    lo, hi = definition["replications"]
    if (lo, hi) != (3, 10):
        words += ["--replications", f"{lo}..{hi}"]
    iface = _iface(rec.get("commands") or [])
    if iface and iface != "IFACE":
        words += ["--iface", iface]
    if driver:
        words += ["--driver", driver]
    words += ["--out", str(path)]
    return shell(words), note


def _iface(commands: Sequence[str]) -> str | None:
    for c in commands:
        m = re.match(r"ethtool -C (\S+)", c) or re.search(r"/sys/class/net/([^/]+)/", c)
        if m:
            return m.group(1)
    return None
