"""Ingress QoS from Python and the command line: the per-class figures in the JSON, the table
and sweeps; bad QoS settings as one-line errors naming the key; the strategies' outcomes
conserved per class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import irqlab
from irqlab.cli import main
from irqlab.errors import ConfigError
from irqlab.report import render
from irqlab.studies.beifuss2016 import BASE

SHORT = {"run.duration_ms": 10.0, "run.warmup_ms": 1.0}


def router(strategy: str, rate_pps: float, **more) -> dict:
    return {**BASE, **SHORT, "qos.strategy": strategy, "traffic.rate_pps": rate_pps, **more}


def text(renderable) -> str:
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(renderable)
    return console.export_text()


def test_per_class_json_has_offered_delivered_drops_by_place_and_latency():
    report = irqlab.run(router("ll-wfq", 2.2e6))
    classes = {c["class"]: c for c in report["per_class"]}
    assert set(classes) == {"be", "rt"}
    for c in classes.values():
        for key in ("offered", "delivered", "dropped_nic", "dropped_socket", "dropped_tx"):
            assert isinstance(c[key], int), key
        for key in ("mean", "p50", "p90", "p99", "p999", "max"):
            assert key in c["latency_us"], key
    assert classes["rt"]["dropped_nic"] == 0 and classes["be"]["dropped_nic"] > 0
    assert sum(c["offered"] for c in classes.values()) == report["packets"]["offered"]


def test_per_class_table_shows_mean_percentiles_and_drops_by_place():
    report = irqlab.run(router("ll-wfq", 2.2e6))
    printed = text(render(report, irqlab.resolve(report["scenario"])))
    table = printed.split("per traffic class", 1)[1]
    for header in ("mean µs", "p50 µs", "p99 µs", "drops"):
        assert header in table, header
    be = next(line for line in table.splitlines() if line.startswith("│ be "))
    dropped = next(c for c in report["per_class"] if c["class"] == "be")["dropped_nic"]
    assert f"nic {dropped:,}" in be


def test_sweeps_carry_per_class_columns(tmp_path):
    runs = irqlab.sweep(
        base=router("ll-rr", 1e6),
        axes={"qos.rt_share": [0.2, 0.6]},
        replications=2,
        executor="inline",
        out=tmp_path / "s",
    )
    for col in ("per_class.1.latency_us.mean", "per_class.0.dropped_nic", "per_class.1.class"):
        assert col in runs, col
    assert set(runs["per_class.1.class"]) == {"rt"}
    summary = irqlab.summarize(runs)
    assert "per_class.1.latency_us.p99.ci95" in summary


@pytest.mark.parametrize(
    ("setting", "key", "says"),
    [
        ("qos.ring_budgets=[0, 4]", "qos.ring_budgets", "each in 1"),
        ("qos.rt_share=1.2", "qos.rt_share", "[0, 1]"),
        ("qos.strategy=wfq", "qos.strategy", '"ll-wfq"'),
        ("nic.queues=1", None, "two queue vectors"),
    ],
)
def test_bad_qos_settings_are_one_line_cli_errors(tmp_path, setting, key, says):
    scenario = tmp_path / "s.toml"
    scenario.write_text("")
    strategy = "rr" if setting.startswith("nic") else "ll-rr"
    args = [
        "run",
        str(scenario),
        "--set",
        "platform.preset=beifuss2016",
        "--set",
        f"qos.strategy={strategy}",
    ]
    args += ["--set", setting, "--set", "run.duration_ms=1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("irqlab: error: ")
    assert says in lines[0]
    assert (key or setting.split("=")[0]) in lines[0]
    assert "Traceback" not in r.output


def test_bad_qos_settings_raise_config_error_naming_the_key():
    with pytest.raises(ConfigError) as e:
        irqlab.run({"qos.strategy": "rr", "host.cores": 2})
    assert e.value.key == "host.cores"
    assert "nic.irq_affinity = [0, 0]" in str(e.value)


def test_the_json_of_a_qos_run_resolves_its_classes(tmp_path: Path):
    out = tmp_path / "r.json"
    scenario = tmp_path / "s.toml"
    scenario.write_text('[qos]\nstrategy = "sq"\nrt_share = 0.25\n')
    args = ["run", str(scenario), "--format", "json", "--set", "run.duration_ms=5"]
    r = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    s = report["scenario"]
    assert (s["traffic.classes.0.name"], s["traffic.classes.1.name"]) == ("be", "rt")
    assert s["traffic.classes.1.share"] == 0.25
    # the resolved scenario runs again to the same report
    again = irqlab.run(s)
    assert again["per_class"] == report["per_class"]
