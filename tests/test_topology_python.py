"""The Python side of the host topology: reports with lists of entries become flat rows and
tables, numbered entries travel through files, rows and re-runs, and `irqlab run` shows the
cores, classes, apps and forwarding only when a host has them."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import irqlab
from irqlab.cli import main
from irqlab.experiments import row_scenario, table_columns
from irqlab.report import (
    decode_list,
    encode_list,
    flatten_report,
    instantiate,
    is_entry_label,
    render,
    render_table,
    template,
)
from irqlab.scenario import flatten, load_scenario

ROOT = Path(__file__).resolve().parents[1]

#: Two cores, two vectors, 64 flows, two classes and an app on core 1.
HOST = {
    "host.cores": 2,
    "nic.queues": 2,
    "traffic.flows": 64,
    "run.duration_ms": 5.0,
    "run.warmup_ms": 1.0,
    "app": [{"core": 1, "cost_ns": 800}],
    "traffic.classes": [{"name": "rt", "share": 0.3}, {"name": "be", "share": 0.7}],
}


def text(renderable) -> str:
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(renderable)
    return out.getvalue()


def rows(table) -> list[tuple[str, ...]]:
    return list(zip(*(c._cells for c in table.columns), strict=True))


# --- flattening a report into a row ---------------------------------------------------------


def test_lists_of_entries_become_numbered_columns_and_lists_of_numbers_text():
    report = {
        "cpu": {"busy": 0.5},
        "per_core": [
            {"core": 0, "vectors": [], "cpu": {"busy": 0.1}},
            {"core": 1, "vectors": [0, 1], "cpu": {"busy": 0.9}},
        ],
        "per_app": [],
    }
    flat = flatten_report(report)
    assert flat == {
        "cpu.busy": 0.5,
        "per_core.0.core": 0,
        "per_core.0.vectors": "[]",
        "per_core.0.cpu.busy": 0.1,
        "per_core.1.core": 1,
        "per_core.1.vectors": "[0, 1]",
        "per_core.1.cpu.busy": 0.9,
    }  # an empty list of entries gives no column at all


def test_a_real_report_flattens_to_scalars_only():
    flat = flatten_report(irqlab.run(HOST))
    assert all(v is None or isinstance(v, bool | int | float | str) for v in flat.values())
    assert flat["per_core.1.vectors"] == "[1]"
    assert flat["per_class.1.class"] == "be"
    assert flat["per_app.0.core"] == 1
    assert flat["scenario.nic.irq_affinity"] == "[]"
    assert 0 < flat["per_core.1.cpu.app"] < 1 and flat["per_core.0.cpu.app"] == 0


def test_list_text_is_canonical_and_reversible():
    assert encode_list([0, 1]) == "[0, 1]" == encode_list((0, 1))
    assert encode_list([]) == "[]"
    assert decode_list("[3, 1, 2]") == [3, 1, 2]
    assert decode_list([1, 2]) == [1, 2]
    with pytest.raises(ValueError, match="not a list"):
        decode_list("5")


def test_templates_name_every_entry_alike():
    assert template("per_core.13.cpu.busy") == "per_core.N.cpu.busy"
    assert template("app.0.core") == "app.N.core"
    assert template("latency_us.p999") == "latency_us.p999"
    assert instantiate("per_class.N.latency_us.p99", [1]) == "per_class.1.latency_us.p99"
    assert is_entry_label("per_core.2.vectors") and is_entry_label("per_class.0.class")
    assert not is_entry_label("per_core.2.cpu.busy") and not is_entry_label("app.0.core")


# --- numbered entries in files and rows -----------------------------------------------------


def test_a_bare_app_table_is_an_app_with_default_fields(tmp_path):
    f = tmp_path / "apps.toml"
    f.write_text("[traffic]\nflows = 2\n[[app]]\n[[app]]\ncost_ns = 10\n")
    flat = load_scenario(f)
    assert flat["app.0.core"] == 0 and flat["app.1.cost_ns"] == 10
    report = irqlab.run(f, {"run.duration_ms": 2.0})
    assert [a["app"] for a in report["per_app"]] == [0, 1]
    assert flatten({"app": [{}, {"core": 1}]}) == {"app.0.core": 0, "app.1.core": 1}


def test_row_scenario_turns_text_back_into_lists_and_skips_absent_entries():
    row = {
        "point": 3,
        "nic.irq_affinity": "[1, 0]",
        "app.0.flows": "[]",
        "app.0.core": 1,
        "app.1.core": math.nan,  # an entry other points have
        "host.forward": True,
        "nic.queues": 2.0,  # an integer that went through a float column
        "per_core.0.vectors": "[1]",  # a metric, not a parameter
    }
    assert row_scenario(row) == {
        "nic.irq_affinity": [1, 0],
        "app.0.flows": [],
        "app.0.core": 1,
        "host.forward": True,
        "nic.queues": 2,
    }


def test_a_row_of_a_topology_run_reruns_to_the_same_report():
    report = irqlab.run(HOST, {"nic.irq_affinity": [1, 0], "app.0.flows": [1, 2, 3]})
    row = {**flatten_report(report), **dict(report["scenario"])}
    row = {k: encode_list(v) if isinstance(v, list) else v for k, v in row.items()}
    assert irqlab.run(row_scenario(row)) == report


def test_table_columns_separate_parameters_labels_and_metrics():
    runs = irqlab.sweep(base=HOST, axes={"nic.irq_affinity": [[0, 1]]}, replications=2,
                        executor="inline")  # fmt: skip
    params, labels, metrics = table_columns(runs)
    assert {"nic.irq_affinity", "app.0.core", "traffic.classes.1.name"} <= set(params)
    assert "run.replication" not in params
    assert {"per_core.1.vectors", "per_class.0.class", "per_app.0.app"} <= set(labels)
    assert {"per_core.1.cpu.busy", "per_class.1.latency_us.p99", "goodput_bps"} <= set(metrics)
    assert not set(metrics) & {"point", "replication", "point_id", "warmup.reliable"}


# --- the run table --------------------------------------------------------------------------


def _readme_table() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n\$ irqlab run examples/napi.toml\n(.*?)```", readme, re.S)
    assert block, "the README's example output"
    return [line.rstrip() for line in block.group(1).strip("\n").splitlines()]


def test_a_one_core_host_prints_exactly_the_readme_table():
    scenario = ROOT / "examples" / "napi.toml"
    report = irqlab.run(scenario)
    printed = text(render(report, irqlab.resolve(scenario)))
    assert [line.rstrip() for line in printed.strip("\n").splitlines()] == _readme_table()


def test_old_reports_without_the_topology_still_render():
    recorded = json.loads((ROOT / "tests/golden/reports/napi_example.json").read_text())
    for key in ("per_core", "per_queue", "per_class", "per_app", "app_latency_us"):
        recorded.pop(key, None)
    groups = [g for g, _, _ in rows(render_table(recorded, recorded["scenario"])) if g]
    assert groups == ["traffic", "packets", "latency", "cpu", "interrupts", "efficiency"]


def test_forwarding_apps_cores_and_classes_appear_when_the_host_has_them():
    forward = irqlab.run(HOST, {"host.forward": True, "traffic.rate_pps": 150_000})
    table = render_table(forward, irqlab.resolve(forward["scenario"]))
    by_metric = {m: v for _, m, v in rows(table)}
    groups = [g for g, _, _ in rows(table) if g]
    assert groups == [
        "traffic", "packets", "forwarding", "latency", "apps", "cpu (mean of 2)",
        "interrupts", "efficiency",
    ]  # fmt: skip
    p = forward["packets"]
    assert p["transmitted"] > 0
    assert by_metric["transmitted"] == f"{p['transmitted']:,}"
    assert by_metric["dropped at Tx ring"] == f"{p['dropped_tx']:,}"
    assert by_metric["consumed"] == f"{p['consumed']:,}"
    # goodput_bps is bytes per second: shown in MB/s
    mb = forward["goodput_bps"] / 1e6
    assert by_metric["goodput"] == f"{mb:.3g} MB/s"
    assert by_metric["app latency p99"].endswith(" µs")
    printed = text(render(forward, irqlab.resolve(forward["scenario"])))
    assert "2 cores, 2 queues" in printed
    core_table = printed.split("per core", 1)[1].split("per traffic class", 1)[0]
    core_lines = [line for line in core_table.splitlines() if re.match(r"^│ [01] ", line)]
    assert len(core_lines) == 2
    c1 = forward["per_core"][1]
    # shares in percent (the header carries the sign), rates in thousands
    assert re.search(rf"│ +{100 * c1['cpu']['app']:.1f} │", core_lines[1])
    assert f"{c1['throughput_pps'] / 1e3:,.1f}" in core_lines[1]
    assert "app %" in core_table and "kpps" in core_table
    class_table = printed.split("per traffic class", 1)[1]
    assert re.search(r"│ rt +│ +0\.3 │", class_table) and re.search(r"│ be +│ +0\.7 │", class_table)


def test_one_core_without_apps_or_classes_has_no_extra_tables():
    report = irqlab.run({"run.duration_ms": 5.0})
    printed = text(render(report, irqlab.resolve({})))
    for word in ("forwarding", "apps", "per core", "per traffic class", "goodput"):
        assert word not in printed


def test_every_axis_type_survives_parquet_and_csv(tmp_path):
    runs = irqlab.sweep(
        base=HOST,
        axes={"host.forward": [False, True], "nic.irq_affinity": [[0, 1], [1, 1]]},
        replications=1,
        executor="inline",
        out=tmp_path,
    )
    again = pd.read_parquet(tmp_path / "runs.parquet")
    pd.testing.assert_frame_equal(again, runs)
    csv = pd.read_csv(tmp_path / "summary.csv")
    assert sorted(set(csv["nic.irq_affinity"])) == ["[0, 1]", "[1, 1]"]
    assert sorted(set(csv["host.forward"])) == [False, True]


def test_a_table_array_given_whole_replaces_its_entries(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        "[[traffic.classes]]\nname = 'a'\n[[traffic.classes]]\nname = 'b'\n"
        "[[traffic.classes]]\nname = 'c'\n"
    )
    two = [{"name": "rt", "share": 0.2}, {"name": "be", "share": 0.8}]
    flat = irqlab.load_scenario(f, [("traffic.classes", two)])
    assert flat["traffic.classes.0.name"] == "rt" and flat["traffic.classes.1.share"] == 0.8
    assert not any(k.startswith("traffic.classes.2.") for k in flat), "the old third entry is gone"
    # and on the command line, as a TOML array of inline tables
    r = CliRunner().invoke(
        main,
        ["check", str(f), "--set", "traffic.classes=[{name='rt', share=0.2}, {name='be'}]"],
    )
    assert r.exit_code == 2, r.output
    assert "traffic.classes.0.share" in r.output and "sum to 0.2" in r.output
