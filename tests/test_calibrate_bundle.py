"""Measurement bundles of any host as calibration targets: the scenario they are compared with,
the rate each was recorded at, the quantities taken from them, and the one-line warnings and
errors when bundles and scenario are not of one host.

The bundles here are copies of the committed traced bundle (tests/data/measure/loopback-bundle,
Linux 6.18, virtio_net on eth0) with their summaries edited: a host under load at a known rate,
with the NIC's IRQ counted, is what a test of the mapping needs and what a machine whose only
traffic stays in its own namespaces cannot record on its NIC."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irqlab.calibration.bundle import (
    QUANTITIES,
    bundle_targets,
    is_bundle,
    load_bundles,
    probed_host,
)
from irqlab.cli import main
from irqlab.errors import ConfigError, ConfigWarning
from irqlab.ops.measure import snapshot, summarize
from irqlab.ops.probe.host import Host

RECORDED = Path(__file__).parent / "data" / "measure" / "loopback-bundle"
#: the IRQ of eth0's one queue vector in the recorded bundle's settings.json
IRQ = 38


def _bundle(tmp_path: Path, name: str, rate: float, **over: Any) -> Path:
    """A copy of the recorded bundle as if eth0 had received ``rate`` packets/s, its queue's
    IRQ firing at a tenth of that on CPU 1, CPU 1 spending ``rate`` × 2 µs in softirq."""
    out = tmp_path / name
    shutil.copytree(RECORDED, out)
    s = json.loads((out / "summary.json").read_text())
    s["iface"] = {"name": "eth0", "rx_packets_per_s": rate, "rx_dropped_per_s": 0.0}
    s["irqs"].append(
        {"irq": IRQ, "name": "virtio2-input.0", "per_s": rate / 10, "per_cpu": {"1": rate / 10}}
    )
    s["cpus"][1]["softirq_share"] = min(1.0, rate * 2e-6)
    s["traced"]["napi_poll"]["eth0"] = {"polls_per_s": rate / 10, "packets_per_poll": 10.0}
    s.update(over.pop("summary", {}))
    (out / "summary.json").write_text(json.dumps(s))
    m = json.loads((out / "manifest.json").read_text())
    m.update(over)
    (out / "manifest.json").write_text(json.dumps(m))
    return out


def _scenario_text() -> str:
    text = json.loads((RECORDED / "settings.json").read_text())["scenario"]
    assert isinstance(text, str)
    return text


def test_a_measure_bundle_is_recognised_by_its_manifest(tmp_path: Path) -> None:
    assert is_bundle(RECORDED)
    assert not is_bundle(tmp_path)  # no manifest
    (tmp_path / "manifest.json").write_text('{"format": "irqlab-lab"}')
    assert not is_bundle(tmp_path)


def test_the_probed_scenarios_header_names_its_kernel_interface_and_driver() -> None:
    host = probed_host(_scenario_text())
    assert (host.kernel, host.iface, host.driver) == ("6.18.44-fc-v657", "eth0", "virtio_net")
    assert host.hz == 250  # [kernel] hz
    assert probed_host('scheme = "napi"\n').kernel is None  # not written by probe: unknown


def test_each_bundle_is_a_point_at_the_rate_its_interface_received(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "low", 20_000.0)
    b = _bundle(tmp_path, "high", 80_000.0)
    bs = load_bundles([a, b])
    assert [x.rate_pps for x in bs.bundles] == [20_000.0, 80_000.0]
    assert bs.bundles[0].rate_source == "rx_packets of eth0"
    m = bs.bundles[1].measured
    assert m["irq_per_s"] == {"0": 8_000.0}  # queue 0's vector is IRQ 38
    assert m["softirq_share"]["1"] == pytest.approx(0.16)
    assert m["packets_per_poll"] == 10.0  # eth0's polls, not the loopback's
    assert "irq_share" not in m  # this kernel samples no hard-IRQ time: zero everywhere
    assert "app_pps" not in m  # no datagram received


def test_without_the_interfaces_counters_the_rate_is_softnets_processed(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    s = json.loads((a / "summary.json").read_text())
    del s["iface"]
    (a / "summary.json").write_text(json.dumps(s))
    b = load_bundles([a]).bundles[0]
    assert b.rate_source.startswith("softnet_stat")
    assert b.rate_pps == pytest.approx(sum(c["packets_per_s"] for c in s["cpus"]))


def test_bundles_fit_half_their_rates_and_predict_the_others(tmp_path: Path) -> None:
    paths = [_bundle(tmp_path, f"r{r}", float(r)) for r in (10_000, 20_000, 40_000, 80_000)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # same host throughout: no warning
        bs = load_bundles(paths)
    tree, plan = bundle_targets(bs)
    fitted = {t["point"]["traffic.rate_pps"] for t in tree["target"]}
    predicted = {t["point"]["traffic.rate_pps"] for t in tree["validate"]}
    assert fitted == {10_000.0, 80_000.0} and predicted == {20_000.0, 40_000.0}
    assert set(tree["free"]) == {"platform.proto_ns", "platform.irq_ns", "platform.poll_ns"}
    assert tree["calibrate"]["base"] == "bundle-host.toml"
    metrics = {t["metric"] for t in tree["target"]}
    assert {"per_core.1.cpu.softirq", "per_queue.0.irq_per_s", "packets_per_poll"} <= metrics
    assert {p["name"] for p in plan} == {t["name"] for t in tree["target"] + tree["validate"]}
    assert {q.key for q in QUANTITIES} >= {p["quantity"] for p in plan}


def test_few_targets_fit_as_many_costs_and_say_which_are_left(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    s = json.loads((a / "summary.json").read_text())
    s["irqs"] = [i for i in s["irqs"] if i["irq"] != IRQ]
    del s["traced"]
    (a / "summary.json").write_text(json.dumps(s))
    bs = load_bundles([a])
    with pytest.warns(ConfigWarning, match="left at the scenario's value: platform.poll_ns"):
        tree, _ = bundle_targets(bs)
    assert len(tree["free"]) == len(tree["target"]) == 2  # two CPUs' softirq shares


@pytest.mark.parametrize(
    ("key", "value"), [("kernel", "6.1.0-13-amd64"), ("driver", "ixgbe"), ("hz", 1000)]
)
def test_a_bundle_of_another_kernel_driver_or_hz_than_the_scenario_is_a_warning(
    tmp_path: Path, key: str, value: Any
) -> None:
    b = _bundle(tmp_path, "b", 20_000.0, **{key: value})
    with pytest.warns(ConfigWarning) as seen:
        load_bundles([b])
    lines = [str(w.message) for w in seen]
    assert any(f"recorded with {key} {value}" in x and "\n" not in x for x in lines), lines


def test_bundles_of_different_kernels_do_not_make_one_fit(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    b = _bundle(tmp_path, "b", 40_000.0, kernel="6.1.0")
    with pytest.raises(ConfigError, match=r"recorded with kernel 6\.1\.0.*different hosts"):
        load_bundles([a, b])


def test_two_bundles_at_one_rate_are_refused(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    b = _bundle(tmp_path, "b", 20_000.0)
    with pytest.raises(ConfigError, match="the same rate"):
        load_bundles([a, b])


def test_a_bundle_without_a_probed_scenario_asks_for_one(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    (a / "settings.json").unlink()
    with pytest.raises(ConfigError, match="--scenario FILE"):
        load_bundles([a])
    scenario = tmp_path / "host.toml"
    scenario.write_text(_scenario_text())
    bs = load_bundles([a], scenario)
    assert bs.scenario["nic.queues"] == 1 and bs.scenario_source == str(scenario)


def test_a_bundle_recorded_idle_is_refused(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 0.0)
    s = json.loads((a / "summary.json").read_text())
    for c in s["cpus"]:
        c["packets_per_s"] = 0.0
    (a / "summary.json").write_text(json.dumps(s))
    with pytest.raises(ConfigError, match="received nothing"):
        load_bundles([a])


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, ["calibrate", *args])


def test_calibrate_fits_bundles_predicts_and_reports(tmp_path: Path) -> None:
    paths = [str(_bundle(tmp_path, f"r{r}", float(r))) for r in (10_000, 40_000)]
    out = tmp_path / "cal"
    r = _cli(*paths, "-o", str(out), "--executor", "inline", "--max-evaluations", "6")
    assert r.exit_code == 0, r.output
    assert "predicted rates against the bundles" in r.output
    for name in ("bundle-targets.toml", "bundle-host.toml", "bundle-plan.json",
                 "bundle-comparison.json", "bundle_predicted_vs_measured.png",
                 "host-fitted.toml"):  # fmt: skip
        assert (out / name).is_file(), name
    rows = json.loads((out / "bundle-comparison.json").read_text())["rows"]
    assert {r["role"] for r in rows} == {"target", "validation"}
    for row in rows:
        assert row["met"] == (abs(row["predicted"] - row["measured"]) <= row["tolerance"])
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 0, r.output
    assert (
        "The measurement bundles: predicted against measured" in (out / "report.html").read_text()
    )


def test_bad_bundle_arguments_are_one_line_errors(tmp_path: Path) -> None:
    a = _bundle(tmp_path, "a", 20_000.0)
    (tmp_path / "plain").mkdir()
    r = _cli(str(a), str(tmp_path / "plain"), "-o", str(tmp_path / "o1"))
    assert r.exit_code != 0 and "not a measurement bundle" in r.output
    (a / "summary.json").unlink()
    r = _cli(str(a), "-o", str(tmp_path / "o2"))
    assert r.exit_code != 0 and "summary.json: missing (a partial bundle)" in r.output
    targets = Path(__file__).parent.parent / "examples" / "calibrate_beifuss2016.toml"
    r = _cli(str(targets), "--scenario", str(targets), "-o", str(tmp_path / "o3"))
    assert r.exit_code != 0 and "--scenario: only with measurement bundles" in r.output
    for res in (r,):
        assert "Traceback" not in res.output


def test_measure_reads_the_interfaces_receive_counters(tmp_path: Path) -> None:
    stats = tmp_path / "sys" / "class" / "net" / "eth0" / "statistics"
    stats.mkdir(parents=True)
    for name, value in (("rx_packets", 1000), ("rx_bytes", 64000), ("rx_dropped", 3)):
        (stats / name).write_text(f"{value}\n")
    before = snapshot(Host(tmp_path), "eth0")
    assert before["iface"] == {"name": "eth0", "rx_packets": 1000, "rx_bytes": 64000,
                               "rx_dropped": 3}  # fmt: skip
    (stats / "rx_packets").write_text("3000\n")
    after = snapshot(Host(tmp_path), "eth0")
    s = summarize(before, after, 2.0, 100)
    assert s["iface"]["rx_packets_per_s"] == 1000.0 and s["iface"]["rx_dropped_per_s"] == 0.0
    assert "iface" not in snapshot(Host(tmp_path), "../etc")  # not an interface's name
    assert "iface" not in snapshot(Host(tmp_path))
