"""Settings that do nothing: each rule of irqlab.ops.probe.ineffective (and the model's own in
the core) warns where the host or the model ignores, refuses or rounds a setting, and is
silent where the setting matters; probe lists what it finds, run warns, tune skips.

The sources are the table's (DRIVER_COALESCING) and the rules' docstrings; each test names
the kernel function its expectation comes from."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

import irqlab
from irqlab.ops.probe import probe, render_toml, summary
from irqlab.ops.probe.ineffective import (
    DRIVER_COALESCING,
    Finding,
    adaptive_findings,
    busy_poll_findings,
    deferral_finding,
    driver_findings,
    jiffy_finding,
)
from irqlab.ops.tune.search import screen_candidates
from irqlab.scenario import resolve

TREES = Path(__file__).resolve().parent / "data" / "probe"
IFACES = {"ixgbe": "enp3s0f0", "i40e": "ens1f0", "mlx5": "enp65s0f0np0", "virtio_net": "ens4"}
SHORT = {"run.duration_ms": 2.0, "run.warmup_ms": 0.5, "traffic.rate_pps": 1e5}


def copy_tree(host: str, tmp_path: Path) -> Path:
    target = tmp_path / host
    shutil.copytree(TREES / host, target, symlinks=True)
    return target


def keys(found: list[Finding]) -> list[str]:
    return [f.key for f in found]


def model_warnings(params: dict) -> list[irqlab.ConfigWarning]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", irqlab.ConfigWarning)
        resolve(params)
    return [w.message for w in said if isinstance(w.message, irqlab.ConfigWarning)]


# --- 1. the driver's coalescing ---------------------------------------------------------------


def test_the_table_has_each_driver_with_its_source_in_the_driver_code():
    for driver in ("virtio_net", "vmxnet3", "ixgbe", "i40e", "ice", "mlx5_core"):
        c = DRIVER_COALESCING[driver]
        assert c.source.startswith("drivers/net/"), driver
        assert "supported_coalesce_params" in c.source, driver
        assert "set_coalesce" in c.source, driver
        assert "rx-usecs" in c.options, driver
        for option, limit in c.limits.items():
            assert option in c.options
            assert limit.why, (driver, option)
            assert limit.step == 1 or limit.step_why, (driver, option)


@pytest.mark.parametrize(
    ("driver", "given", "acts_as"),
    [
        # ixgbe_write_eitr masks rx-usecs << 2 with IXGBE_MAX_EITR (0xFF8): 2 µs steps, down
        ("ixgbe", 5, 4),
        # i40e_set_itr_per_queue keeps ITR_REG_ALIGN(rx-usecs): 2 µs steps, up
        ("i40e", 5, 6),
        # __ice_write_itr writes itr & 0x1FFE: 2 µs steps, down
        ("ice", 5, 4),
    ],
)
def test_an_itr_between_the_hardware_steps_acts_as_the_step_the_driver_writes(
    driver, given, acts_as
):
    static = {"driver.moderation": "static"}
    (f,) = driver_findings(driver, {**static, "nic.itr_us": given})
    assert (f.key, f.value, f.acts_as) == ("nic.itr_us", given, acts_as)
    assert f"acts as {acts_as} µs on {driver}" in f.reason
    assert driver_findings(driver, {**static, "nic.itr_us": acts_as}) == []


@pytest.mark.parametrize(
    ("driver", "key", "value", "limit", "within"),
    [
        ("ixgbe", "nic.itr_us", 1024, "at most 1022", 1022),  # IXGBE_MAX_EITR >> 2
        ("i40e", "nic.itr_us", 8162, "at most 8160", 8160),  # I40E_MAX_ITR
        ("ice", "nic.itr_us", 8162, "at most 8160", 8160),  # ICE_ITR_MAX
        ("mlx5_core", "nic.rx_usecs", 4096, "at most 4095", 4095),  # MLX5_MAX_CQ_PERIOD
        ("mlx5_core", "nic.rx_frames", 65536, "at most 65535", 65535),  # MLX5_MAX_CQ_COUNT
        ("vmxnet3", "nic.rx_usecs", 20000, "at most 10000", 10000),  # RBC 100 … 100000 /s
        ("vmxnet3", "nic.rx_usecs", 5, "10 at least", 10),
        ("vmxnet3", "nic.rx_frames", 129, "at most 128", 128),  # VMXNET3_COAL_STATIC_MAX_DEPTH
    ],
)
def test_a_value_past_the_drivers_limit_is_refused(driver, key, value, limit, within):
    (f,) = driver_findings(driver, {key: value})
    assert f.key == key and f.acts_as is None and f.certain
    assert f"{driver} refuses" in f.reason and limit in f.reason
    assert driver_findings(driver, {key: within}) == []


def test_an_option_the_driver_does_not_take_or_a_key_without_counterpart_cannot_be_set():
    # ixgbe's supported_coalesce_params has no ETHTOOL_COALESCE_RX_MAX_FRAMES
    (f,) = driver_findings("ixgbe", {"nic.rx_frames": 8})
    assert "does not take ethtool -C rx-frames" in f.reason
    assert "ethnl_set_coalesce_validate" in f.reason
    # mlx5's rx-usecs is the CQ period, a timer: no ITR to set
    found = driver_findings("mlx5_core", {"driver.moderation": "static", "nic.itr_us": 20})
    assert keys(found) == ["driver.moderation", "nic.itr_us"]
    # on an Intel driver rx-usecs is the ITR: a timer from the first packet has no counterpart
    assert keys(driver_findings("i40e", {"nic.rx_usecs": 20})) == ["nic.rx_usecs"]
    # rx-usecs 1 is ixgbe's dynamic ITR
    (f,) = driver_findings("ixgbe", {"driver.moderation": "static", "nic.itr_us": 1})
    assert "dynamic ITR" in f.reason
    # what each driver does take
    assert driver_findings("mlx5_core", {"nic.rx_usecs": 8, "nic.rx_frames": 32}) == []
    assert driver_findings("ixgbe", {"driver.tx_work_limit": 256}) == []
    assert driver_findings("mlx5_core", {"driver.dim_mode": "cqe"}) == []
    assert keys(driver_findings("i40e", {"driver.dim_mode": "cqe"})) == ["driver.dim_mode"]
    # a driver the table does not have: no driver rule
    assert driver_findings("e1000e", {"nic.rx_frames": 8}) == []
    assert driver_findings(None, {"nic.rx_frames": 8}) == []


def test_a_moderation_policy_the_driver_does_not_run_cannot_be_set():
    for driver, own in (("ixgbe", "ixgbe"), ("i40e", "i40e"), ("mlx5_core", "dim")):
        assert driver_findings(driver, {"driver.moderation": own}) == []
        assert driver_findings(driver, {"driver.moderation": "off"}) == []
    (f,) = driver_findings("mlx5_core", {"driver.moderation": "i40e"})
    assert 'its own is "dim"' in f.reason
    (f,) = driver_findings("ixgbe", {"driver.moderation": "linear"})
    assert "no mainline driver" in f.reason


def test_virtio_net_takes_coalescing_only_from_a_device_that_offers_it():
    # virtnet_coal_params_supported: without VIRTIO_NET_F_NOTF_COAL (bit 53) only rx-usecs 0
    # and rx-frames 1; the driver negotiates the feature since Linux 6.2
    frames = {"nic.rx_frames": 32}
    (f,) = driver_findings("virtio_net", frames, release=(6, 1))
    assert f.certain and "does not offer VIRTIO_NET_F_NOTF_COAL" in f.reason
    offered = "0" * 53 + "1" + "0" * 10
    assert driver_findings("virtio_net", frames, features=offered) == []
    (f,) = driver_findings("virtio_net", frames, features="0" * 64)
    assert f.certain
    (f,) = driver_findings("virtio_net", frames)  # a newer kernel, the device unknown
    assert not f.certain and "unless the device offers" in f.reason
    assert driver_findings("virtio_net", {"nic.rx_usecs": 0, "nic.rx_frames": 1}) == []
    # adaptive-rx needs VIRTIO_NET_F_VQ_NOTF_COAL (bit 52)
    (f,) = driver_findings("virtio_net", {"driver.moderation": "dim"}, release=(6, 1))
    assert "VIRTIO_NET_F_VQ_NOTF_COAL" in f.reason


def test_vmxnet3_takes_one_coalescing_mode_at_a_time():
    # vmxnet3_set_coalesce: rx-usecs (rate based) with rx-frames or adaptive-rx is -EINVAL
    found = driver_findings("vmxnet3", {"nic.rx_usecs": 50, "nic.rx_frames": 16})
    assert keys(found) == ["nic.rx_usecs"] and "together with rx-frames" in found[0].reason
    assert driver_findings("vmxnet3", {"nic.rx_usecs": 50}) == []


def test_a_probed_host_whose_driver_rounds_its_itr_says_so(tmp_path):
    tree = copy_tree("ixgbe", tmp_path)
    coalesce = tree / "ethtool/enp3s0f0/show-coalesce"
    coalesce.write_text(coalesce.read_text().replace("rx-usecs: 1\n", "rx-usecs: 25\n"))
    p = probe("enp3s0f0", root=tree, interval_s=0)
    assert p.scenario()["nic.itr_us"] == 25  # what the host shows, as read
    (f,) = [f for f in p.ineffective if f.key == "nic.itr_us"]
    assert f.acts_as == 24 and "ixgbe_write_eitr" in f.reason
    text = render_toml(p)
    assert "# Settings that do nothing on this host, or not what their value says:" in text
    assert "# - nic.itr_us = 25: acts as 24 µs on ixgbe" in text
    tables = summary(p)
    assert any("do nothing" in str(getattr(t, "title", "")) for t in tables)


# --- 2. adaptive moderation overriding a static value ---------------------------------------


def test_adaptive_moderation_rewrites_the_static_value_on_the_host_and_in_the_model():
    i40e = probe(IFACES["i40e"], root=TREES / "i40e", interval_s=0)
    (f,) = [f for f in i40e.ineffective if f.key == "nic.itr_us"]
    assert f.value == 50 and "adaptive ITR" in f.reason and "i40e_update_itr" in f.source
    mlx5 = probe(IFACES["mlx5"], root=TREES / "mlx5", interval_s=0)
    found = [f for f in mlx5.ineffective if f.key in ("nic.rx_usecs", "nic.rx_frames")]
    assert [f.value for f in found] == [8, 128]
    assert all("mlx5e_rx_dim_work" in f.source for f in found)
    # ixgbe's dynamic ITR (rx-usecs 1) and virtio's static coalescing: nothing rewritten
    for host in ("ixgbe", "virtio_net"):
        p = probe(IFACES[host], root=TREES / host, interval_s=0)
        assert not [f for f in p.ineffective if f.key.startswith("nic.")], host
    assert adaptive_findings("i40e", {"driver.moderation": "static", "nic.itr_us": 50}) == []
    # the model, for irqlab run (moderation/config.rs itr_warnings)
    (w,) = model_warnings({"driver.moderation": "i40e", "nic.itr_us": 20})
    assert w.key == "nic.itr_us" and "programs the ITR itself" in str(w) and w.acts_as is None
    assert model_warnings({"driver.moderation": "static", "nic.itr_us": 20}) == []


# --- 3. jiffy granularity --------------------------------------------------------------------


def test_a_time_limit_between_ticks_acts_as_whole_jiffies_on_the_host_and_in_the_model():
    # net_rx_action: time_limit = jiffies + usecs_to_jiffies(netdev_budget_usecs), rounded up
    f = jiffy_finding(2000, 250)
    assert f is not None and f.acts_as == 4000 and "1 jiffy at HZ=250" in f.reason
    assert "0 to 4000 µs" in f.reason and "2 jiffies at least" in f.reason
    assert "usecs_to_jiffies" in f.source and "net_rx_action" in f.source
    f = jiffy_finding(9000, 250)
    assert f is not None and f.acts_as == 12000 and "the same way" in f.reason
    for usecs, hz in ((8000, 250), (2000, 1000), (6666, 300), (0, 250), (9000, None)):
        assert jiffy_finding(usecs, hz) is None, (usecs, hz)
    # the model (kernel/config.rs jiffy_warnings): irqlab run warns with the value it acts as
    (w,) = model_warnings({"kernel.hz": 250, "kernel.netdev_budget_usecs": 9000})
    assert (w.key, w.acts_as) == ("kernel.netdev_budget_usecs", "12000")
    assert str(w).startswith("kernel.netdev_budget_usecs = 9000: acts as 12000 us: 3 jiffies")
    assert model_warnings({"kernel.hz": 250, "kernel.netdev_budget_usecs": 8000}) == []
    # the golden scenario that runs 9000 µs at HZ 250 is this case
    golden = tomllib.loads((TREES.parent.parent / "golden" / "scenarios.toml").read_text())
    (w,) = model_warnings(dict(golden["hz250_budget_usecs"]))
    assert w.acts_as == "12000"


def test_a_probed_budget_between_ticks_is_kept_and_said(tmp_path):
    tree = copy_tree("virtio_net", tmp_path)  # HZ 250 from /proc/config.gz
    (tree / "proc/sys/net/core/netdev_budget_usecs").write_text("9000\n")
    p = probe("ens4", root=tree, interval_s=0)
    assert p.scenario()["kernel.netdev_budget_usecs"] == 9000  # acts as 12000, as the host does
    (f,) = [f for f in p.ineffective if f.key == "kernel.netdev_budget_usecs"]
    assert f.acts_as == 12000
    (tree / "proc/sys/net/core/netdev_budget_usecs").write_text("2000\n")
    p = probe("ens4", root=tree, interval_s=0)
    assert p.scenario()["kernel.netdev_budget_usecs"] == 0
    (f,) = [f for f in p.ineffective if f.key == "kernel.netdev_budget_usecs"]
    assert f.acts_as == 4000 and "2 jiffies at least" in f.reason


# --- 4. deferral without a flush timeout --------------------------------------------------


def test_deferral_without_a_flush_timeout_defers_nothing_on_the_host_and_in_the_model(tmp_path):
    # napi_complete_done keeps the IRQ masked only if gro_flush_timeout arms the timer
    f = deferral_finding({"kernel.napi_defer_hard_irqs": 2, "kernel.gro_flush_timeout_ns": 0})
    assert f is not None and "napi_complete_done" in f.source
    assert (
        deferral_finding({"kernel.napi_defer_hard_irqs": 2, "kernel.gro_flush_timeout_ns": 2e4})
        is None
    )
    assert (
        deferral_finding({"kernel.napi_defer_hard_irqs": 0, "kernel.gro_flush_timeout_ns": 0})
        is None
    )
    tree = copy_tree("mlx5", tmp_path)
    (tree / "sys/class/net/enp65s0f0np0/gro_flush_timeout").write_text("0\n")
    p = probe("enp65s0f0np0", root=tree, interval_s=0)
    (f,) = [f for f in p.ineffective if f.key == "kernel.napi_defer_hard_irqs"]
    assert f.value == 2
    assert not [
        f
        for f in probe("enp65s0f0np0", root=TREES / "mlx5", interval_s=0).ineffective
        if f.key == "kernel.napi_defer_hard_irqs"
    ]
    # the model (kernel/config.rs warnings)
    (w,) = model_warnings({"kernel.napi_defer_hard_irqs": 2})
    assert w.key == "kernel.napi_defer_hard_irqs" and "gro_flush_timeout_ns > 0" in str(w)


# --- 5. busy polling with no application that can poll ----------------------------------------


def test_busy_polling_without_an_application_that_polls_does_nothing():
    i40e = probe(IFACES["i40e"], root=TREES / "i40e", interval_s=0)
    found = {
        f.key: f
        for f in i40e.ineffective
        if f.key in ("socket.busy_read_us", "kernel.busy_poll_us")
    }
    assert set(found) == {"socket.busy_read_us", "kernel.busy_poll_us"}
    assert "sock_init_data" in found["socket.busy_read_us"].source
    assert "ep_busy_loop" in found["kernel.busy_poll_us"].source
    ixgbe = probe(IFACES["ixgbe"], root=TREES / "ixgbe", interval_s=0)
    assert not [f for f in ixgbe.ineffective if "busy" in f.key]  # busy_read 0
    assert busy_poll_findings({"socket.busy_read_us": 50}, apps=True) == []
    # the model: no app at all is an error (busy polling runs in an application's thread);
    # apps that do not read with recv, a warning (busypoll.rs io_warnings)
    with pytest.raises(irqlab.ConfigError, match=r"^socket.busy_read_us = 50.0: .* add an app"):
        resolve({"socket.busy_read_us": 50})
    epoll = {"socket.busy_read_us": 50, "app.0.core": 0, "app.0.io": "epoll"}
    (w,) = model_warnings(epoll)
    assert w.key == "socket.busy_read_us" and "no app reads with recv" in str(w)
    assert model_warnings({**epoll, "app.0.io": "recv"}) == []


# --- tune: skipped before racing ---------------------------------------------------------------


def test_tune_skips_the_candidates_a_rule_marks_and_says_why():
    base = resolve(SHORT)
    settings = [
        {"driver.moderation": "static", "nic.itr_us": 4},
        {"driver.moderation": "static", "nic.itr_us": 5},  # ixgbe: acts as 4
        {"driver.moderation": "dim"},  # ixgbe has no net_dim
        {"driver.moderation": "ixgbe", "nic.itr_us": 20},  # the model: ITR ignored
        {"driver.moderation": "ixgbe"},
    ]
    s = screen_candidates(settings, base, [1e5], "ixgbe")
    assert s.candidates == [
        {"driver.moderation": "static", "nic.itr_us": 4},
        {"driver.moderation": "ixgbe"},
    ]
    why = {k.setting: k for k in s.skipped}
    assert set(why) == {"static itr_us=5", "dim", "ixgbe itr_us=20"}
    assert "acts as 4 µs on ixgbe" in why["static itr_us=5"].reason
    assert "ixgbe_write_eitr" in why["static itr_us=5"].source
    assert 'its own is "ixgbe"' in why["dim"].reason
    assert why["ixgbe itr_us=20"].instead == "ixgbe"
    # without a driver only the model's rules apply
    s = screen_candidates(settings, base, [1e5])
    assert len(s.candidates) == 4 and [k.setting for k in s.skipped] == ["ixgbe itr_us=20"]
    # a budget between ticks acts as the next tick's: skipped, as the model warns
    hz = resolve({**SHORT, "kernel.hz": 250})
    s = screen_candidates(
        [{"kernel.netdev_budget_usecs": 8000}, {"kernel.netdev_budget_usecs": 9000}], hz, [1e5]
    )
    assert s.candidates == [{"kernel.netdev_budget_usecs": 8000}]
    assert "acts as 12000 us" in s.skipped[0].reason
    # virtio_net's coalescing depends on the device: raced, and said
    s = screen_candidates([{"nic.rx_frames": 8}], base, [1e5], "virtio_net")
    assert (
        s.candidates == [{"nic.rx_frames": 8}] and "unless the device offers" in s.doubts[0].reason
    )


def test_tune_lists_what_it_skipped_in_the_result_and_the_folder(tmp_path):
    r = irqlab.tune(
        SHORT,
        ["latency_us.p99 <= 500"],
        knobs=["driver.moderation=static,dim", "nic.itr_us=4,5"],
        driver="ixgbe",
        executor="inline",
        max_replications=3,
        out=tmp_path / "t",
    )
    assert r.recommended is not None and r.recommended["nic.itr_us"] == 4
    assert [k.setting for k in r.skipped] == ["static itr_us=5", "dim itr_us=4", "dim itr_us=5"]
    text = (tmp_path / "t" / "recommendation.md").read_text()
    assert "## Skipped before racing: 3 candidates with a setting that does nothing" in text
    assert "- static itr_us=5: nic.itr_us = 5: acts as 4 µs on ixgbe" in text
    rows = list(csv.DictReader((tmp_path / "t" / "skipped.csv").read_text().splitlines()))
    assert [row["setting"] for row in rows] == [k.setting for k in r.skipped]
    assert all(row["source"].startswith("drivers/net/ethernet/intel/ixgbe") for row in rows)
    rec = json.loads((tmp_path / "t" / "recommendation.json").read_text())
    assert [k["setting"] for k in rec["skipped"]] == [k.setting for k in r.skipped]
    assert json.loads((tmp_path / "t" / "tune.json").read_text())["driver"] == "ixgbe"
    with pytest.raises(
        irqlab.ConfigError, match=r"^driver= 'e1000': irqlab knows the coalescing of"
    ):
        irqlab.tune(SHORT, ["latency_us.p99 <= 500"], driver="e1000", executor="inline")


def test_the_cli_skips_with_driver_and_prints_why(tmp_path):
    out = subprocess.run(
        [
            sys.executable, "-m", "irqlab.cli", "tune", "examples/emmerich2015.toml",
            "--set", "traffic.rate_pps=1e6", "--set", "run.duration_ms=5",
            "--slo", "latency_us.p99 <= 400", "--knob", "driver.moderation=static,i40e",
            "--knob", "nic.itr_us=10,11", "--driver", "i40e", "--out", str(tmp_path / "t"),
            "--executor", "inline", "--replications", "2..3",
        ],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "## Skipped before racing" in out.stdout
    assert "- static itr_us=11: nic.itr_us = 11: acts as 12 µs on i40e" in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "tune", "examples/emmerich2015.toml",
         "--slo", "latency_us.p99 < 50", "--driver", "tg3", "--out", str(tmp_path / "u")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("irqlab: error: --driver 'tg3': irqlab knows the coalescing of")
