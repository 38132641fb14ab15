"""`irqlab probe`: recorded hosts (ixgbe, i40e, mlx5, virtio_net, a host without the
interface) give exactly the scenario their files say, absent data gives notes and never an
exception, the scenario written passes `irqlab check` and runs — and on this machine too."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import irqlab
from irqlab.cli import main
from irqlab.ops.probe import (
    HOST_SETTINGS,
    NOT_PROBED,
    PROBED,
    Host,
    Probe,
    napi_get,
    parse_cpulist,
    parse_ethtool,
    parse_interrupts,
    parse_interval,
    parse_napis,
    parse_queues,
    parse_rss_table,
    probe,
    queue_get,
    summary,
)
from irqlab.ops.probe.netlink import fallback_notes, napi_table
from irqlab.ops.probe.parsers import kernel_version
from irqlab.ops.probe.settings import _NO_COUNTERPART
from irqlab.ops.probe.steps import _validate
from irqlab.scenario import flatten, resolve, schema

TREES = Path(__file__).resolve().parent / "data" / "probe"
SHORT = {"run.duration_ms": 2.0, "run.warmup_ms": 0.5}

#: The platform costs no host can tell: every probed scenario leaves them to the defaults.
NOT_WRITTEN = {"platform.irq_ns", "platform.proto_ns", "traffic.rate_pps", "run.duration_ms"}

# What each recorded host's files say, key by key (see tests/data/probe/HOST).
EXPECTED = {
    # Ubuntu 20.04 (5.4, HZ 250), 8 CPUs, an 82599 at 10G: ixgbe's dynamic ITR (rx-usecs 1),
    # ethtool 5.4's ioctl format (zeros, no n/a), no napi_defer_hard_irqs yet (kernel 5.4)
    "ixgbe": {
        "iface": "enp3s0f0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 8,
            "nic.link_gbps": 10.0,
            "nic.queues": 8,
            "nic.ring_descriptors": 512,
            "nic.tx_ring_descriptors": 512,
            "nic.cause_mode": "latched",
            "nic.irq_affinity": [0, 1, 2, 3, 4, 5, 6, 7],
            "driver.moderation": "ixgbe",
            "driver.tx_work_limit": 256,
            "kernel.gro_flush_timeout_ns": 0,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 8000,
            "kernel.hz": 250,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "kernel.irq_suspend_timeout_ns": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 3.0,
            "nic.tx_irq": True,
            "nic.rss_table_size": 128,
        },
        "with_apps": {},
        "driver": "ixgbe",
        "bus": "0000:03:00.0",
        "vectors": [(125 + q, f"enp3s0f0-TxRx-{q}") for q in range(8)],
        "rates": [21040, 20110, 22872, 19877, 20350, 21999, 20460, 19310],
        "others": [(133, "enp3s0f0")],
        "rx_pps": 812_334,
        "bytes_per_packet": 60,
        "unmodelled": {},
        "notes": [
            "napi_defer_hard_irqs: not present",
            "base_slice_ns: Linux 5.4.0-150-generic has none (Linux 6.6 and later)",
            # a kernel before per-NAPI settings: each NAPI has the device's, sysfs says it
            "Linux 5.4.0-150-generic has no per-NAPI gro-flush-timeout (Linux 6.13 and later)",
        ],
    },
    # RHEL 9 (5.14, HZ 1000), 16 CPUs, an XL710 at 40G with 12 of 16 channels: adaptive ITR on
    # at 50 µs, ethtool 6.2's netlink format (n/a), two vectors left to the kernel's choice of
    # CPU (effective_affinity_list), busy polling on, tuned budgets
    "i40e": {
        "iface": "ens1f0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 16,
            "nic.link_gbps": 40.0,
            "nic.queues": 12,
            "nic.ring_descriptors": 1024,
            "nic.tx_ring_descriptors": 1024,
            "nic.cause_mode": "latched",
            "nic.irq_affinity": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14],
            "driver.moderation": "i40e",
            "driver.tx_work_limit": 256,
            "kernel.napi_defer_hard_irqs": 0,
            "kernel.gro_flush_timeout_ns": 0,
            "kernel.netdev_budget": 600,
            "kernel.netdev_budget_usecs": 4000,
            "kernel.hz": 1000,
            "kernel.threaded_napi": False,
            "kernel.irq_suspend_timeout_ns": 0,
            "socket.rcvbuf_bytes": 262144,
            "platform.cpu_ghz": 3.4,
            "nic.tx_irq": True,
            "nic.rss_table_size": 512,
        },
        # busy polling is on: it needs an app, so it is written commented out
        "with_apps": {"socket.busy_read_us": 50, "kernel.busy_poll_us": 50},
        "driver": "i40e",
        "bus": "0000:3b:00.0",
        "vectors": [(141 + k, f"i40e-ens1f0-TxRx-{k}") for k in range(12)],
        "rates": [7935, 8012, 7990, 8001, 7960, 8100, 7899, 8050, 7911, 8020, 7988, 8003],
        "others": [(140, "i40e-0000:3b:00.0:misc")],
        "rx_pps": 1_201_000,
        "bytes_per_packet": 1448,
        "unmodelled": {},
        # the policy programs the ITR itself: what ethtool shows is a note, not a setting
        "notes": [
            "base_slice_ns: Linux 5.14",
            "Linux 5.14.0-427.13.1.el9_4.x86_64 has no per-NAPI defer-hard-irqs",
            "nic.itr_us = 50.0: has no effect",
        ],
    },
    # Ubuntu 24.04 (6.8), 8 CPUs, a ConnectX-5 at 100G: DIM in CQE mode, CQ moderation 8 µs /
    # 128 frames, software IRQ coalescing on (2 deferrals of 20 µs), the second port's
    # vectors in /proc/interrupts, HZ told by netdev_budget_usecs alone
    "mlx5": {
        "iface": "enp65s0f0np0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 8,
            "nic.queues": 8,
            "nic.ring_descriptors": 1024,
            "nic.tx_ring_descriptors": 1024,
            "nic.cause_mode": "armed",
            "nic.irq_affinity": [0, 1, 2, 3, 4, 5, 6, 7],
            "driver.moderation": "dim",
            "driver.dim_mode": "cqe",
            "kernel.napi_defer_hard_irqs": 2,
            "kernel.gro_flush_timeout_ns": 20000,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 2000,
            "kernel.hz": 1000,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "kernel.irq_suspend_timeout_ns": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 3.2,
            "nic.tx_irq": True,
            "nic.rss_table_size": 256,
        },
        "with_apps": {},
        "driver": "mlx5_core",
        "bus": "0000:41:00.0",
        "vectors": [(61 + k, f"mlx5_comp{k}@pci:0000:41:00.0") for k in range(8)],
        "rates": [3845, 3801, 3912, 3777, 3866, 3820, 3840, 3799],
        "others": [(60, "mlx5_async0@pci:0000:41:00.0")],
        "rx_pps": 2_000_000,
        "bytes_per_packet": 1500,
        "unmodelled": {},
        # DIM programs the CQ moderation, and the link speed matters only to forwarding and
        # the Intel policies: notes, not settings
        "notes": [
            "base_slice_ns: not present (debugfs, readable by root)",
            "Linux 6.8.0-45-generic has no per-NAPI defer-hard-irqs",
            "nic.rx_usecs = 8.0: has no effect",
            "nic.rx_frames = 128: has no effect",
            "nic.link_gbps = 100.0: has no effect",
        ],
    },
    # a cloud VM (Debian 12, 6.1, HZ 250 in /proc/config.gz), 4 vCPUs, virtio_net with 4 queue
    # pairs: no link speed, no cpufreq, a single sample of /proc/interrupts
    "virtio_net": {
        "iface": "ens4",
        "scenario": {
            "scheme": "napi",
            "host.cores": 4,
            "nic.queues": 4,
            "nic.ring_descriptors": 256,
            "nic.tx_ring_descriptors": 256,
            "nic.rx_usecs": 0,
            "nic.rx_frames": 1,
            "nic.irq_affinity": [0, 1, 2, 3],
            "driver.moderation": "off",
            "kernel.napi_defer_hard_irqs": 0,
            "kernel.gro_flush_timeout_ns": 0,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 8000,
            "kernel.hz": 250,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "kernel.irq_suspend_timeout_ns": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 2.2,
        },
        "with_apps": {},
        "driver": "virtio_net",
        "bus": "0000:00:04.0",
        "vectors": [(28 + 2 * k, f"virtio1-input.{k}") for k in range(4)],
        "rates": [None] * 4,
        "others": [(27, "virtio1-config")]
        + [(29 + 2 * k, f"virtio1-output.{k}") for k in range(4)],
        "rx_pps": None,
        "bytes_per_packet": None,
        "unmodelled": {},
        # virtio's input vectors serve Rx alone: a Tx interrupt, which matters only to a
        # host that forwards, is a note
        "notes": [
            "speed: -1",
            "no recorded `ethtool -x ens4`",
            "base_slice_ns: Linux 6.1.0-25-cloud-amd64 has none",
            "Linux 6.1.0-25-cloud-amd64 has no per-NAPI defer-hard-irqs",
            "no second sample",
            "nic.tx_irq = false: has no effect",
        ],
    },
    # Ubuntu 25.04 (6.14, HZ 1000), 8 CPUs, an E810 at 25G with 4 channels and a static ITR of
    # 20 µs; netlink's napi-get and queue-get recorded: queue 3 serves a latency-critical app
    # with its own deferral and IRQ suspension (napi-set), the other NAPIs keep the device's
    # 0s; no per-NAPI threaded before 6.17, so that one is the device's (sysfs)
    "ice": {
        "iface": "ens785f0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 8,
            "nic.queues": 4,
            "nic.ring_descriptors": 2048,
            "nic.tx_ring_descriptors": 2048,
            "nic.cause_mode": "latched",
            "nic.itr_us": 20,
            "nic.irq_affinity": [0, 1, 2, 3],
            "driver.moderation": "static",
            "kernel.napi_defer_hard_irqs": 0,
            "kernel.gro_flush_timeout_ns": 0,
            "kernel.irq_suspend_timeout_ns": 0,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 2000,
            "kernel.hz": 1000,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 3.5,
            "nic.tx_irq": True,
            "nic.rss_table_size": 2048,
        },
        "with_apps": {},
        "driver": "ice",
        "bus": "0000:17:00.0",
        "vectors": [(151 + k, f"ice-ens785f0-TxRx-{k}") for k in range(4)],
        "rates": [40210, 39877, 41002, 1200],
        "others": [(150, "ice-0000:17:00.0:misc")],
        "rx_pps": 420_000,
        "bytes_per_packet": 256,
        "unmodelled": {},
        # the NAPIs disagree: the most common value is written, each NAPI's is in the table
        "notes": [
            "defer-hard-irqs differs between the NAPIs (0 on 3, 100 on 1)",
            "gro-flush-timeout differs between the NAPIs (0 on 3, 200000 on 1)",
            "irq-suspend-timeout differs between the NAPIs (0 on 3, 20000000 on 1)",
            "base_slice_ns: not present",
            "Linux 6.14.0-15-generic has no per-NAPI threaded (Linux 6.17 and later)",
            "nic.link_gbps = 25.0: has no effect",
        ],
    },
    # the machine these tests were written on, recorded by the script of docs/probe.md: a VM on
    # Linux 6.18 (HZ 250), 2 vCPUs, virtio_net with one queue pair, idle; napi-get gives every
    # per-NAPI setting but no IRQ (virtio_net sets none), queue-get ties rx-0 to the NAPI
    "virtio_net_618": {
        "iface": "eth0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 2,
            "nic.queues": 1,
            "nic.ring_descriptors": 256,
            "nic.tx_ring_descriptors": 256,
            "nic.rx_usecs": 0,
            "nic.rx_frames": 1,
            "nic.irq_affinity": [1],
            "driver.moderation": "off",
            "kernel.napi_defer_hard_irqs": 0,
            "kernel.gro_flush_timeout_ns": 0,
            "kernel.irq_suspend_timeout_ns": 0,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 8000,
            "kernel.hz": 250,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 2.596,
        },
        "with_apps": {},
        "driver": "virtio_net",
        "bus": "0000:00:03.0",
        "vectors": [(38, "virtio2-input.0")],
        "rates": [0.0],
        "others": [(37, "virtio2-config"), (39, "virtio2-output.0")],
        "rx_pps": 0,
        "bytes_per_packet": None,
        "unmodelled": {},
        "notes": [
            "speed: -1",
            "base_slice_ns: not present",
            "ethtool -x eth0: no indirection table",
            "nic.tx_irq = false: has no effect",
        ],
    },
    # Ubuntu 22.04 (5.15, HZ 250), 4 CPUs, a BCM57414 at 25G with 4 channels, static
    # coalescing (10 µs, 15 frames) and software IRQ coalescing on: a kernel without the netdev
    # family, so every NAPI setting is the device's, from sysfs, and there is no NAPI table
    "bnxt_en": {
        "iface": "enp1s0f0np0",
        "scenario": {
            "scheme": "napi",
            "host.cores": 4,
            "nic.queues": 4,
            "nic.ring_descriptors": 511,
            "nic.tx_ring_descriptors": 511,
            "nic.rx_usecs": 10,
            "nic.rx_frames": 15,
            "nic.irq_affinity": [0, 1, 2, 3],
            "driver.moderation": "off",
            "kernel.napi_defer_hard_irqs": 2,
            "kernel.gro_flush_timeout_ns": 20000,
            "kernel.irq_suspend_timeout_ns": 0,
            "kernel.netdev_budget": 300,
            "kernel.netdev_budget_usecs": 8000,
            "kernel.hz": 250,
            "kernel.threaded_napi": False,
            "kernel.busy_poll_us": 0,
            "socket.rcvbuf_bytes": 212992,
            "socket.busy_read_us": 0,
            "platform.cpu_ghz": 4.8,
            "nic.tx_irq": True,
            "nic.rss_table_size": 128,
        },
        "with_apps": {},
        "driver": "bnxt_en",
        "bus": "0000:01:00.0",
        "vectors": [(130 + k, f"enp1s0f0np0-TxRx-{k}") for k in range(4)],
        "rates": [12000] * 4,
        "others": [],
        "rx_pps": 48_000,
        "bytes_per_packet": 1200,
        "unmodelled": {},
        "notes": [
            "base_slice_ns: Linux 5.15.0-105-generic has none",
            "Linux 5.15.0-105-generic has no per-NAPI defer-hard-irqs, gro-flush-timeout (Linux "
            "6.13 and later) nor threaded (Linux 6.17 and later): each NAPI has the device's "
            "value, read from sysfs",
            "nic.link_gbps = 25.0: has no effect",
        ],
    },
}


def probe_tree(host: str, **kwargs):
    return probe(EXPECTED[host]["iface"], root=TREES / host, **kwargs)


@pytest.mark.parametrize("host", list(EXPECTED))
def test_every_field_of_a_recorded_host_is_parsed(host):
    want = EXPECTED[host]
    p = probe_tree(host)
    assert p.scenario() == want["scenario"]
    assert {k: s.value for k, s in p.with_apps.items()} == want["with_apps"]
    assert p.driver == want["driver"]
    assert p.bus == want["bus"]
    assert [(v.irq, v.name) for v in p.vectors] == want["vectors"]
    assert [v.queue for v in p.vectors] == list(range(len(want["vectors"])))
    assert [v.rate_per_s for v in p.vectors] == want["rates"]
    assert [(v.irq, v.name) for v in p.other_vectors] == want["others"]
    if want["rx_pps"] is None:
        assert p.rx_pps is None and p.rx_bytes_per_packet is None
    else:
        assert p.rx_pps == pytest.approx(want["rx_pps"])
        assert p.rx_bytes_per_packet == pytest.approx(want["bytes_per_packet"])
    assert {name: value for name, value, _, _ in p.unmodelled} == want["unmodelled"]
    assert len(p.notes) == len(want["notes"]), p.notes
    for fragment, note in zip(want["notes"], p.notes, strict=True):
        assert fragment in note


def test_each_recorded_host_names_its_system():
    hosts = {h: probe_tree(h) for h in EXPECTED}
    assert (hosts["ixgbe"].hostname, hosts["ixgbe"].kernel) == ("fw1", "5.4.0-150-generic")
    assert hosts["i40e"].kernel == "5.14.0-427.13.1.el9_4.x86_64"
    assert hosts["mlx5"].driver_version == "6.8.0-45-generic"
    assert hosts["virtio_net"].driver_version == "1.0.0"
    # the driver from its sysfs link, or from the device's uevent when the recording has none
    assert hosts["ixgbe"].driver_source.endswith("device/driver → ixgbe")
    assert hosts["i40e"].driver_source.endswith("device/uevent: DRIVER=i40e")
    # the tick rate: a kernel config, /proc/config.gz, or the default netdev_budget_usecs
    assert hosts["ixgbe"].settings["kernel.hz"].source.startswith("/boot/config-5.4.0-150")
    assert hosts["virtio_net"].settings["kernel.hz"].source.startswith("/proc/config.gz")
    assert hosts["mlx5"].settings["kernel.hz"].source == (
        "inferred: netdev_budget_usecs 2000 is the default 2 jiffies at HZ=1000"
    )


def test_affinity_follows_the_effective_cpu_where_the_mask_allows_many():
    p = probe_tree("i40e")
    v10, v11 = p.vectors[10], p.vectors[11]
    assert (v10.affinity, v10.effective, v10.core) == ("0-15", "13", 13)
    assert (v11.affinity, v11.effective, v11.core) == ("0-15", "14", 14)
    assert v10.busiest_cpu == 13
    assert "effective_affinity_list" in v10.core_source


@pytest.mark.parametrize("host", list(EXPECTED))
def test_the_file_says_what_the_probe_read_with_a_source_for_each_value(host):
    p = probe_tree(host)
    text = p.toml()
    data = tomllib.loads(text)
    flat = flatten(data)
    written = {k: v for k, v in flat.items() if not k.startswith("platform.") or k.endswith("ghz")}
    assert written == p.scenario()
    for line in text.splitlines():
        if line and not line.startswith(("#", "[")):
            assert "  # " in line, f"no source for: {line}"
    # every cost is there, at its default, marked for calibration
    costs = [line for line in text.splitlines() if "# default — calibrate" in line]
    assert "irq_ns = 3730  # default — calibrate" in costs
    assert "proto_ns = 5340  # default — calibrate" in costs
    platform = [k for k in schema() if k.startswith("platform.")]
    assert len(costs) == len(platform) - 2  # all but platform.preset and platform.cpu_ghz
    # the observed IRQ rates are in the comments next to the affinity
    for v in p.vectors:
        assert v.name in text
    assert not NOT_WRITTEN & set(p.scenario())


def test_busy_polling_is_written_ready_for_an_app_and_busy_polls_with_one(tmp_path):
    # i40e's host busy-polls (busy_read = busy_poll = 50): an app's thread does, and a probe
    # writes no app, so both are written commented out in their sections, with their sources
    text = probe_tree("i40e").toml()
    socket_line = "# busy_read_us = 50  # /proc/sys/net/core/busy_read: 50 — takes effect with an"
    kernel_line = "# busy_poll_us = 50  # /proc/sys/net/core/busy_poll: 50 — takes effect with an"
    assert socket_line in text.split("\n[socket]\n")[1].split("\n[")[0]
    assert kernel_line in text.split("\n[kernel]\n")[1].split("\n[")[0]
    assert "net.core.busy_read =" not in text and "net.core.busy_poll =" not in text
    # uncommented, with an app, the file passes `irqlab check` and the app busy-polls
    ready = text.replace("\n# busy_read_us = ", "\nbusy_read_us = ")
    ready = ready.replace("\n# busy_poll_us = ", "\nbusy_poll_us = ")
    out = tmp_path / "host.toml"
    out.write_text(ready + "\n[[app]]\ncore = 0\nflows = [0]\n")
    check = CliRunner().invoke(main, ["check", str(out)])
    assert check.exit_code == 0, check.output
    assert flatten(tomllib.loads(out.read_text()))["socket.busy_read_us"] == 50
    with pytest.warns(irqlab.ConfigWarning, match="kernel.busy_poll_us = 50.0: has no effect"):
        report = irqlab.run(out, SHORT)
    assert report["busy_poll"]["sessions"] > 0
    # a host that does not busy-poll (0) has the keys written as they are
    assert {
        k: probe_tree("mlx5").get(k) for k in ("socket.busy_read_us", "kernel.busy_poll_us")
    } == {
        "socket.busy_read_us": 0,
        "kernel.busy_poll_us": 0,
    }


@pytest.mark.parametrize("host", [*EXPECTED, "no_interface"])
def test_the_written_scenario_passes_irqlab_check_and_runs(host, tmp_path):
    iface = EXPECTED[host]["iface"] if host in EXPECTED else "lo"
    out = tmp_path / f"{host}.toml"
    r = CliRunner().invoke(main, ["probe", iface, "--root", str(TREES / host), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.output
    check = CliRunner().invoke(main, ["check", str(out)])
    assert check.exit_code == 0, check.output
    assert "kernel.netdev_budget = " in check.output
    if host == "mlx5":  # once in a process of its own, as a person runs it
        p = subprocess.run(
            [sys.executable, "-m", "irqlab.cli", "check", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert p.returncode == 0, p.stderr
        assert p.stdout == check.output
    report = irqlab.run(out, SHORT)
    assert report["packets"]["offered"] > 0
    assert report["scheme"] == "napi"


# --- every key, or why not ------------------------------------------------------------------


def test_every_scenario_key_is_probed_or_said_to_have_no_host_counterpart():
    # a key added to irqlab fails here until the probe reads it (PROBED, HOST_SETTINGS) or
    # says why no host has it (NOT_PROBED): a probed host's setting is never silently dropped
    keys = set(schema())
    assert not set(PROBED) & set(NOT_PROBED)
    assert set(PROBED) | set(NOT_PROBED) == keys, {
        "neither": sorted(keys - set(PROBED) - set(NOT_PROBED)),
        "no such key": sorted((set(PROBED) | set(NOT_PROBED)) - keys),
    }
    listed = [key for _, group in _NO_COUNTERPART for key in group]
    assert len(listed) == len(set(listed)), "a key is in two groups of reasons"
    assert all(PROBED.values()) and all(NOT_PROBED.values())
    # busy polling and IRQ suspension are among the keys read, with their host sources
    assert PROBED["socket.busy_read_us"] == "/proc/sys/net/core/busy_read"
    assert PROBED["kernel.busy_poll_us"] == "/proc/sys/net/core/busy_poll"
    assert "irq-suspend-timeout" in PROBED["kernel.irq_suspend_timeout_ns"]


def declared_keys_variants(tmp_path: Path) -> list[Probe]:
    """The recorded hosts, and the variants that reach the keys read only in some cases."""
    probes = [probe_tree(host) for host in EXPECTED]
    old = copy_tree("ixgbe", tmp_path / "old")  # ixgbe before 4.15: the legacy dynamic ITR
    (old / "proc/sys/kernel/osrelease").write_text("4.4.0-210-generic\n")
    probes.append(probe("enp3s0f0", root=old))
    slice_ = copy_tree("mlx5", tmp_path / "slice")  # root can read the scheduler's base slice
    (slice_ / "sys/kernel/debug/sched").mkdir(parents=True)
    (slice_ / "sys/kernel/debug/sched/base_slice_ns").write_text("3000000\n")
    probes.append(probe("enp65s0f0np0", root=slice_))
    return probes


def test_the_probe_reads_every_key_it_declares_and_no_other(tmp_path):
    read = set().union(*(p.read_keys for p in declared_keys_variants(tmp_path)))
    assert read == set(PROBED), {
        "declared, never read": sorted(set(PROBED) - read),
        "read, not declared": sorted(read - set(PROBED)),
    }


def test_the_schedulers_base_slice_is_read_where_root_can(tmp_path):
    p = declared_keys_variants(tmp_path)[-1]
    assert p.get("kernel.sched_slice_us") == 3000.0
    assert p.settings["kernel.sched_slice_us"].source == (
        "/sys/kernel/debug/sched/base_slice_ns: 3000000 ns"
    )


NAPIS_613 = [
    # 8 NAPIs of a 6.13 mlx5: netlink's values differ from the device's sysfs files (a
    # per-NAPI setting leaves those alone), and one NAPI has a gro-flush-timeout of its own
    {
        "id": 8193 + k,
        "ifindex": 4,
        "irq": 61 + k,
        "defer-hard-irqs": 5,
        "gro-flush-timeout": 50000 if k == 3 else 200000,
        "irq-suspend-timeout": 20000000,
        "threaded": 0,
    }
    for k in range(8)
]


def test_per_napi_settings_come_from_netlink_where_the_kernel_has_them(tmp_path):
    tree = copy_tree("mlx5", tmp_path)
    (tree / "proc/sys/kernel/osrelease").write_text("6.13.7-generic\n")
    (tree / "netlink/enp65s0f0np0").mkdir(parents=True)
    (tree / "netlink/enp65s0f0np0/napi-get").write_text(json.dumps(NAPIS_613))
    p = probe("enp65s0f0np0", root=tree)
    assert p.get("kernel.napi_defer_hard_irqs") == 5  # sysfs says 2: netlink wins
    assert p.settings["kernel.napi_defer_hard_irqs"].source == (
        "netlink napi-get enp65s0f0np0: defer-hard-irqs 5 on all 8 NAPIs"
    )
    assert p.get("kernel.gro_flush_timeout_ns") == 200000
    assert any(
        "gro-flush-timeout differs between the NAPIs (200000 on 7, 50000 on 1)" in n
        and "the most common, 200000, is written" in n
        for n in p.notes
    ), p.notes
    # IRQ suspension works through an app's epoll_wait: written commented out, ready for one
    suspend = p.with_apps["kernel.irq_suspend_timeout_ns"]
    assert suspend.value == 20000000
    assert "# irq_suspend_timeout_ns = 20000000  # netlink napi-get" in p.toml()
    assert p.get("kernel.threaded_napi") is False
    assert p.settings["kernel.threaded_napi"].source == (
        "netlink napi-get enp65s0f0np0: threaded 0 on all 8 NAPIs"
    )
    resolve(p.scenario())
    # a 6.13 host recorded without its napi-get: IRQ suspension is unknown, and says so
    (tree / "netlink/enp65s0f0np0/napi-get").unlink()
    p = probe("enp65s0f0np0", root=tree)
    assert "kernel.irq_suspend_timeout_ns" not in p.scenario()
    assert p.get("kernel.napi_defer_hard_irqs") == 2  # the sysfs file, then
    assert any(
        n.startswith("irq-suspend-timeout: per NAPI, only netlink's napi-get has it (no recorded")
        for n in p.notes
    ), p.notes


def test_each_napi_its_settings_queues_and_irq_on_a_6_14_host():
    # ice: napi-get gives each NAPI's id, IRQ and own settings; queue-get which queues it serves
    p = probe_tree("ice")
    assert [(n.id, n.rx_queues, n.tx_queues, n.irq) for n in p.napis] == [
        (8193 + k, [k], [k], 151 + k) for k in range(4)
    ]
    assert [n.settings for n in p.napis] == [
        {"defer-hard-irqs": 0, "gro-flush-timeout": 0, "irq-suspend-timeout": 0}
    ] * 3 + [{"defer-hard-irqs": 100, "gro-flush-timeout": 200000, "irq-suspend-timeout": 20000000}]
    assert p.napi_source == "netlink napi-get, queue-get ens785f0"
    # the scenario keeps one value per key (the most common), with a note that they differ
    assert p.settings["kernel.napi_defer_hard_irqs"].source == (
        "netlink napi-get ens785f0: defer-hard-irqs 0 on 3 of 4 NAPIs"
    )
    assert any("(each NAPI's in the NAPI table)" in n for n in p.notes), p.notes
    # threaded is per NAPI from 6.17 on: on 6.14 it is the device's, from sysfs, and said so
    assert p.settings["kernel.threaded_napi"].source == "/sys/class/net/ens785f0/threaded: 0"
    # the file: the NAPI table under [kernel], each NAPI's own values, aligned
    text = p.toml()
    kernel = text.split("\n[kernel]\n")[1].split("\n\n")[0]
    assert "# NAPIs of ens785f0 (netlink napi-get, queue-get ens785f0):" in kernel
    lines = kernel.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("#   NAPI"))) :]
    columns = ["irq-suspend-timeout", "threaded", "pid"]
    assert [line.split() for line in table] == [
        ["#", "NAPI", "queues", "IRQ", "defer-hard-irqs", "gro-flush-timeout", *columns],
        ["#", "8193", "rx-0,tx-0", "151", "0", "0", "0", "-", "-"],
        ["#", "8194", "rx-1,tx-1", "152", "0", "0", "0", "-", "-"],
        ["#", "8195", "rx-2,tx-2", "153", "0", "0", "0", "-", "-"],
        ["#", "8196", "rx-3,tx-3", "154", "100", "200000", "20000000", "-", "-"],
    ]
    assert len({len(line) for line in table}) == 1  # a column per value, right-aligned
    # and the summary shows the same table
    from rich.console import Console

    console = Console(record=True, width=200)
    for part in summary(p):
        console.print(part)
    shown = console.export_text()
    assert "NAPIs of ens785f0" in shown
    assert re.search(r"8196 .* rx-3,tx-3 .* 154 .* 100 .* 200000 .* 20000000", shown)


def test_a_napi_without_an_irq_of_its_own_gets_its_queues_vector():
    # virtio_net on 6.18 (this machine, recorded): napi-get gives no IRQ; queue-get ties rx-0
    # to NAPI 257, whose vector in /proc/interrupts is virtio2-input.0 (IRQ 38)
    p = probe_tree("virtio_net_618")
    (napi,) = p.napis
    assert (napi.id, napi.irq, napi.vector_irq, napi.rx_queues, napi.tx_queues) == (
        257,
        None,
        38,
        [0],
        [],
    )
    assert napi.settings == {
        "defer-hard-irqs": 0,
        "gro-flush-timeout": 0,
        "irq-suspend-timeout": 0,
        "threaded": 0,
    }
    # every per-NAPI setting from netlink: no note that sysfs stood in
    assert not [n for n in p.notes if "per-NAPI" in n or "sysfs instead" in n], p.notes
    assert (
        p.settings["kernel.threaded_napi"].source
        == "netlink napi-get eth0: threaded 0 on its one NAPI"
    )
    row = [line for line in p.toml().splitlines() if line.startswith("#    257")]
    assert [x.split() for x in row] == [["#", "257", "rx-0", "(38)", "0", "0", "0", "0", "-"]]


def test_an_older_host_reads_sysfs_and_says_so():
    # bnxt_en on 5.15: no netdev family; each NAPI has the device's values, from sysfs
    p = probe_tree("bnxt_en")
    assert p.napis == [] and p.napi_source == ""
    assert p.settings["kernel.napi_defer_hard_irqs"].source == (
        "/sys/class/net/enp1s0f0np0/napi_defer_hard_irqs: 2"
    )
    assert p.settings["kernel.gro_flush_timeout_ns"].source == (
        "/sys/class/net/enp1s0f0np0/gro_flush_timeout: 20000 ns"
    )
    assert "# NAPIs of" not in p.toml()


def test_sysfs_standing_in_for_netlink_is_a_note_naming_why(tmp_path, monkeypatch):
    # 1. a kernel new enough, recorded with a napi-get that has no settings (as 6.8 to 6.12
    #    answer): the device's values, and a note saying the NAPIs had none
    tree = copy_tree("ice", tmp_path)
    napis = json.loads((tree / "netlink/ens785f0/napi-get").read_text())
    (tree / "netlink/ens785f0/napi-get").write_text(
        json.dumps([{"id": n["id"], "ifindex": 3, "irq": n["irq"]} for n in napis])
    )
    p = probe("ens785f0", root=tree)
    assert p.settings["kernel.gro_flush_timeout_ns"].source == (
        "/sys/class/net/ens785f0/gro_flush_timeout: 0 ns"
    )
    assert (
        "netlink napi-get ens785f0: no NAPI has defer-hard-irqs, gro-flush-timeout: the device's "
        "values read from sysfs instead"
    ) in p.notes
    assert [n.settings for n in p.napis] == [{}] * 4  # the table still maps queues and IRQs
    # 2. napi-get recorded without queue-get: the NAPIs without their queues, and a note
    (tree / "netlink/ens785f0/queue-get").unlink()
    p = probe("ens785f0", root=tree)
    assert [n.rx_queues for n in p.napis] == [[]] * 4
    assert any(n.endswith("which queues each NAPI serves is unknown") for n in p.notes)
    # 3. a live kernel without the netdev family: the note says so, and what sysfs gave
    if MINE is None:
        return
    import irqlab.ops.probe.host as host_module

    def no_family(ifindex: int, timeout_s: float = 5.0) -> list[dict[str, int]]:
        raise OSError(errno.ENOENT, "No such file or directory")

    monkeypatch.setattr(host_module, "napi_get", no_family)
    p = probe(MINE, interval_s=0)
    assert p.napis == []
    release = kernel_version(p.kernel)
    if release is not None and release >= (6, 17):
        assert any(
            n.startswith(f"netlink napi-get {MINE}: the kernel has no netdev family")
            and "each NAPI's defer-hard-irqs, gro-flush-timeout, threaded unknown: the "
            "device's values read from sysfs instead"
            in n
            for n in p.notes
        ), p.notes


def test_the_fallback_note_by_case():
    files = ["defer-hard-irqs", "gro-flush-timeout", "threaded"]
    older = fallback_notes(None, "x", "6.8.0", (6, 8), files)
    assert older == [
        "Linux 6.8.0 has no per-NAPI defer-hard-irqs, gro-flush-timeout (Linux 6.13 and later) "
        "nor threaded (Linux 6.17 and later): each NAPI has the device's value, read from sysfs"
    ]
    # 6.14 answers with the settings but not threaded, 6.18 with all of them
    have = [{"id": 1, "defer-hard-irqs": 0, "gro-flush-timeout": 0}]
    assert fallback_notes(have, "x", "6.14", (6, 14), files) == [
        "Linux 6.14 has no per-NAPI threaded (Linux 6.17 and later): each NAPI has the "
        "device's value, read from sysfs"
    ]
    assert fallback_notes([{**have[0], "threaded": 0}], "x", "6.18", (6, 18), files) == []
    # no answer from a kernel that should have given one; a device without NAPIs says nothing
    assert fallback_notes(None, "netlink napi-get eth0: no answer", "6.18", (6, 18), files) == [
        "netlink napi-get eth0: no answer: each NAPI's defer-hard-irqs, gro-flush-timeout, "
        "threaded unknown: the device's values read from sysfs instead"
    ]
    assert fallback_notes([], "x", "6.18", (6, 18), files) == []


def test_recordings_of_napi_get_and_queue_get_as_ynl_prints_them():
    # ynl --output-json names an enum's value; the recording script of the docs gives numbers
    napis = parse_napis('[{"id": 9, "threaded": "enabled", "pid": 812}, {"id": 10, "threaded": 0}]')
    assert napis == [{"id": 9, "threaded": 1, "pid": 812}, {"id": 10, "threaded": 0}]
    queues = parse_queues(
        '[{"id": 0, "type": "rx", "napi-id": 9}, {"id": 0, "type": 1, "napi-id": 10},'
        ' {"id": 1, "type": "tx"}]'
    )
    assert queues == [
        {"id": 0, "type": 0, "napi-id": 9},
        {"id": 0, "type": 1, "napi-id": 10},
        {"id": 1, "type": 1},
    ]
    table = napi_table(napis, queues)
    assert [(n.id, n.rx_queues, n.tx_queues, n.pid) for n in table] == [
        (9, [0], [], 812),
        (10, [], [0], None),
    ]
    for bad in ('[{"type": "both"}]', '[{"napi-id": -1}]', "{}", '[{"id": true}]'):
        with pytest.raises(ValueError):
            parse_queues(bad)


def test_the_rss_table_is_read_and_one_irqlab_would_not_fill_alike_is_a_note(tmp_path):
    assert parse_rss_table((TREES / "ixgbe/ethtool/enp3s0f0/show-rxfh-indir").read_text()) == [
        i % 8 for i in range(128)
    ]
    tree = copy_tree("ixgbe", tmp_path)
    path = tree / "ethtool/enp3s0f0/show-rxfh-indir"
    # `ethtool -X enp3s0f0 weight 1 1 1 1 0 0 0 0`: half the queues take no flow
    path.write_text(re.sub(r"(?m)^( +\d+:) .*$", r"\1 0 1 2 3 0 1 2 3", path.read_text()))
    p = probe("enp3s0f0", root=tree)
    assert p.get("nic.rss_table_size") == 128
    assert any("not entry i → queue i mod 8, as irqlab fills it" in n for n in p.notes)


def test_threaded_napi_is_read_as_a_switch_and_a_mode_irqlab_lacks_is_a_note(tmp_path):
    # /sys/class/net/IFACE/threaded: 0 and 1 are kernel.threaded_napi's false and true; netlink's
    # per-NAPI "threaded" 2 (busy-poll, Linux 6.19) is a mode irqlab does not model yet
    (threaded,) = [s for s in HOST_SETTINGS if s.path and s.path.endswith("/threaded")]
    assert threaded.key == "kernel.threaded_napi"
    assert probe_tree("mlx5").get("kernel.threaded_napi") is False
    tree = copy_tree("mlx5", tmp_path)
    (tree / "sys/class/net/enp65s0f0np0/threaded").write_text("1\n")
    p = probe("enp65s0f0np0", root=tree)
    assert p.settings["kernel.threaded_napi"].value is True
    assert p.settings["kernel.threaded_napi"].source == "/sys/class/net/enp65s0f0np0/threaded: 1"
    assert "threaded_napi = true" in p.toml()
    assert p.unmodelled == []
    (tree / "sys/class/net/enp65s0f0np0/threaded").write_text("2\n")
    p = probe("enp65s0f0np0", root=tree)
    assert "kernel.threaded_napi" not in p.settings
    assert any(
        n.startswith("/sys/class/net/enp65s0f0np0/threaded: 2: a mode irqlab does not model")
        for n in p.notes
    ), p.notes
    # a kernel before 5.12 has no threaded NAPI: false, without a note
    (tree / "sys/class/net/enp65s0f0np0/threaded").unlink()
    (tree / "proc/sys/kernel/osrelease").write_text("5.4.0-150-generic\n")
    p = probe("enp65s0f0np0", root=tree)
    assert p.get("kernel.threaded_napi") is False
    assert not [n for n in p.notes if "threaded" in n], p.notes


def test_a_host_without_the_interface_is_one_clear_error():
    tree = TREES / "no_interface"
    with pytest.raises(irqlab.ConfigError, match="no interface 'eth0'") as e:
        probe("eth0", root=tree)
    assert str(e.value).endswith("interfaces found: docker0, lo")
    # no default route through a device, none with a device: name one
    with pytest.raises(irqlab.ConfigError, match="name one of: docker0, lo"):
        probe(root=tree)
    r = CliRunner().invoke(main, ["probe", "eth0", "--root", str(tree)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"irqlab: error: no interface 'eth0' in {tree}; interfaces found: docker0, lo"
    ]


def test_absent_files_and_tools_are_notes_not_exceptions():
    # an arm64 box: no ethtool output, no cpufreq nor 'cpu MHz', no busy-poll sysctls, no
    # netdev_budget_usecs, no kernel config, one sample of /proc/interrupts; lo has no device
    p = probe("lo", root=TREES / "no_interface")
    assert p.scenario() == {
        "scheme": "napi",
        "host.cores": 2,
        "nic.queues": 1,
        "kernel.napi_defer_hard_irqs": 0,
        "kernel.gro_flush_timeout_ns": 0,
        "kernel.netdev_budget": 300,
        "kernel.irq_suspend_timeout_ns": 0,  # Linux 6.6 has no IRQ suspension
        "socket.rcvbuf_bytes": 180224,
    }
    assert p.driver is None and p.vectors == [] and p.unmodelled == []
    for fragment in (
        "lo has no device",
        "/sys/class/net/lo/speed: unreadable",
        "no recorded ethtool output",
        "CPU clock unknown",
        "netdev_budget_usecs: not present",
        "busy_read: not present",
        "busy_poll: not present",
        "base_slice_ns: not present",
        "threaded: not present (a device without NAPI?)",
        "Linux 6.6.31-v8+ has no per-NAPI defer-hard-irqs, gro-flush-timeout",
        "kernel tick rate unknown",
        "no second sample",
    ):
        assert any(fragment in n for n in p.notes), (fragment, p.notes)
    assert len(p.notes) == 12
    # the notes head the file
    text = p.toml()
    assert "# Notes:\n# - lo has no device" in text
    resolve(p.scenario())


def test_the_default_interface_is_the_one_of_the_default_route():
    for host, want in EXPECTED.items():
        assert probe(root=TREES / host).iface == want["iface"]


def copy_tree(host: str, tmp_path: Path) -> Path:
    target = tmp_path / host
    shutil.copytree(TREES / host, target, symlinks=True)
    return target


def test_a_value_irqlab_cannot_take_is_a_note_and_is_not_written(tmp_path):
    tree = copy_tree("ixgbe", tmp_path)
    (tree / "proc/sys/net/core/netdev_budget").write_text("0\n")
    (tree / "proc/sys/net/core/netdev_budget_usecs").write_text("2000\n")  # < 2 jiffies at 250
    (tree / "proc/irq/125/smp_affinity_list").write_text("garbage\n")
    (tree / "proc/irq/125/effective_affinity_list").unlink()
    p = probe("enp3s0f0", root=tree)
    assert "kernel.netdev_budget" not in p.scenario()
    assert any(n.startswith("kernel.netdev_budget = 0: must be an integer") for n in p.notes)
    assert p.scenario()["kernel.netdev_budget_usecs"] == 0
    assert any("under 2 jiffies (8000 µs)" in n for n in p.notes)
    assert "nic.irq_affinity" not in p.scenario()
    assert any("affinity is unreadable" in n for n in p.notes)
    resolve(p.scenario())


def test_a_combination_the_core_rejects_is_dropped_with_a_note():
    p = Probe(iface="eth0")
    p.set("host.cores", 2, "test")
    p.set("nic.queues", 2, "test")
    p.set("nic.irq_affinity", [0, 5], "test")
    _validate(p)
    assert "nic.irq_affinity" not in p.scenario()
    assert "vector 1 is pinned to core 5" in p.notes[-1]


def test_ixgbe_before_4_15_gets_the_legacy_dynamic_itr(tmp_path):
    tree = copy_tree("ixgbe", tmp_path)
    (tree / "proc/sys/kernel/osrelease").write_text("4.4.0-210-generic\n")
    p = probe("enp3s0f0", root=tree)
    assert p.get("driver.moderation") == "ixgbe-legacy"
    assert p.get("driver.legacy_bulk_rate") == 12000


@pytest.mark.parametrize(
    ("coalesce", "want"),
    [
        ("rx-usecs: 0\n", {"driver.moderation": "off"}),
        ("rx-usecs: 20\n", {"driver.moderation": "static", "nic.itr_us": 20}),
    ],
)
def test_ixgbe_rx_usecs_is_its_itr(tmp_path, coalesce, want):
    tree = copy_tree("ixgbe", tmp_path)
    path = tree / "ethtool/enp3s0f0/show-coalesce"
    path.write_text(path.read_text().replace("rx-usecs: 1\n", coalesce))
    p = probe("enp3s0f0", root=tree)
    assert {k: p.get(k) for k in want} == want
    assert "nic.itr_us" in p.scenario() or "nic.itr_us" not in want


def fake_ethtool(tmp_path: Path, host: str, body: str | None = None) -> Path:
    """An `ethtool` that prints the recorded output of HOST (or runs ``body``)."""
    recorded = TREES / host / "ethtool" / EXPECTED[host]["iface"]
    script = tmp_path / "ethtool"
    script.write_text(
        "#!/bin/sh\n"
        + (
            body
            or f'case "$1" in\n  -i) cat "{recorded}/driver";;\n'
            f'  -c) cat "{recorded}/show-coalesce";;\n  -g) cat "{recorded}/show-ring";;\n'
            f'  -l) cat "{recorded}/show-channels";;\n  -x) cat "{recorded}/show-rxfh-indir";;\n'
            "  *) exit 1;;\nesac\n"
        )
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.skipif(
    os.name != "posix",
    reason="a shell script stands in for ethtool: needs a POSIX shell (not Windows)",
)
def test_the_ethtool_command_is_run_and_parsed_as_its_recording(tmp_path):
    script = fake_ethtool(tmp_path, "mlx5")
    p = probe_tree("mlx5", ethtool=str(script))
    assert p.scenario() == EXPECTED["mlx5"]["scenario"]


@pytest.mark.skipif(
    os.name != "posix",
    reason="a shell script stands in for ethtool: needs a POSIX shell (not Windows)",
)
def test_an_ethtool_that_fails_or_hangs_is_a_note(tmp_path):
    failing = fake_ethtool(
        tmp_path, "mlx5", 'echo "netlink error: Operation not supported" >&2\nexit 76\n'
    )
    host = Host(TREES / "mlx5", ethtool=str(failing))
    text, why = host.ethtool("show-coalesce", "enp65s0f0np0")
    assert text is None
    assert why == "`ethtool -c enp65s0f0np0` failed: netlink error: Operation not supported"
    hanging = tmp_path / "slow" / "ethtool"
    hanging.parent.mkdir()
    hanging.write_text("#!/bin/sh\nexec sleep 10\n")
    hanging.chmod(0o755)
    host = Host(TREES / "mlx5", ethtool=str(hanging), timeout_s=0.3)
    assert host.ethtool("show-ring", "x") == (None, "`ethtool -g x` did not answer within 0.3 s")
    p = probe_tree("mlx5", ethtool=str(tmp_path / "nowhere" / "ethtool"))
    assert any("not found: coalescing, ring sizes and channels unknown" in n for n in p.notes)
    assert "driver.moderation" not in p.scenario()
    assert p.get("nic.queues") == 8  # from /sys/class/net/IFACE/queues instead


def test_ethtool_parser_reads_both_output_formats():
    ioctl = (TREES / "ixgbe/ethtool/enp3s0f0/show-coalesce").read_text()
    netlink = (TREES / "i40e/ethtool/ens1f0/show-coalesce").read_text()
    old, new = parse_ethtool(ioctl), parse_ethtool(netlink)
    assert (old["adaptive rx"], old["rx-usecs"], old["tx-frames-irq"]) == ("off", "1", "256")
    assert (new["adaptive rx"], new["rx-usecs"], new["rx-frames"]) == ("on", "50", None)
    assert new["cqe mode rx"] is None and new["tx-aggr-time-usecs"] is None
    ring = parse_ethtool((TREES / "mlx5/ethtool/enp65s0f0np0/show-ring").read_text())
    assert (ring["max rx"], ring["rx"], ring["rx mini"], ring["tcp data split"]) == (
        "8192",
        "1024",
        None,
        "off",
    )
    info = parse_ethtool((TREES / "virtio_net/ethtool/ens4/driver").read_text())
    assert info["bus-info"] == "0000:00:04.0" and info["firmware-version"] is None


def test_interrupts_parser_reads_old_new_and_arm_formats():
    old = parse_interrupts(
        "           CPU0       CPU1       \n"
        "  45:    1000000          3   PCI-MSI-edge      eth0-TxRx-0\n"
        "  46:          7          0   IO-APIC-fasteoi   uhci_hcd:usb3, eth1\n"
        " NMI:          0          0   Non-maskable interrupts\n"
    )
    assert old.cpus == [0, 1]
    assert old.counts == {45: [1000000, 3], 46: [7, 0]}
    assert old.names == {45: "eth0-TxRx-0", 46: "uhci_hcd:usb3, eth1"}
    arm = parse_interrupts((TREES / "no_interface/proc/interrupts").read_text())
    assert arm.names[23] == "mmc1, mmc0" and arm.counts[11] == [1873310, 1730145]
    # offline CPUs have no column: the header names the CPU of each
    gap = parse_interrupts(
        "      CPU0       CPU2\n 30:   5   9   PCI-MSIX-0000:00:03.0  1-edge  x\n"
    )
    assert gap.cpus == [0, 2] and gap.counts[30] == [5, 9]


def test_small_parsers():
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_interval("1s") == 1.0
    assert parse_interval("250ms") == 0.25
    assert parse_interval("0") == 0.0
    for bad in ("fast", "-1s", "2h", "120s"):
        with pytest.raises(irqlab.ConfigError, match="--interval"):
            parse_interval(bad)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_cli_prints_the_scenario_and_the_summary(tmp_path):
    r = CliRunner().invoke(main, ["probe", "--root", str(TREES / "mlx5")])
    assert r.exit_code == 0, r.output
    # CliRunner mixes stdout and stderr: the TOML comes first, then the tables
    text = r.output.split("irqlab probe — ")[0]
    assert flatten(tomllib.loads(text))["driver.moderation"] == "dim"
    assert "enp65s0f0np0 (mlx5_core) on cache7" in r.output
    assert "mlx5_comp7@pci:0000:41:00.0" in r.output
    assert "3,799" in r.output  # the observed rate of vector 7


def test_cli_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "host.toml"
    out.write_text("# mine\n")
    tree = str(TREES / "ixgbe")
    r = invoke("probe", "--root", tree, "--out", str(out))
    assert r.exit_code == 2
    assert r.output.strip() == f"irqlab: error: {out} exists; --force to overwrite it"
    assert out.read_text() == "# mine\n"
    r = invoke("probe", "--root", tree, "--out", str(out), "--force")
    assert r.exit_code == 0, r.output
    assert '\n[driver]\nmoderation = "ixgbe"  # ethtool -c enp3s0f0' in out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{tmp}/no/such/dir/h.toml"], "h.toml: no directory"),
        (["--out", "{tmp}", "--force"], "cannot write (Is a directory)"),
        (["--interval", "soon"], "--interval 'soon': expected a duration"),
        (["--root", "{tmp}/nowhere"], "nowhere: no such directory"),
        (["--root", "{tmp}"], "no network interfaces in"),
        (["wlan9"], "no interface 'wlan9' in"),
    ],
)
def test_cli_user_errors_are_one_line(tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    root = [] if "--root" in args else ["--root", str(TREES / "virtio_net")]
    r = invoke("probe", *root, *args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("irqlab: error: ") and message in lines[0]


# --- this machine -------------------------------------------------------------------------


def this_machines_interface() -> str | None:
    """An interface of this machine, one with a device behind it if there is one."""
    base = Path("/sys/class/net")
    if not base.is_dir():
        return None
    names = sorted(os.listdir(base))
    devices = [n for n in names if (base / n / "device").exists()]
    return (devices or names or [None])[0]


MINE = this_machines_interface()


@pytest.mark.skipif(MINE is None, reason="not a Linux host: no /sys/class/net")
def test_probe_on_this_machine(tmp_path):
    p = probe(MINE, interval_s=0.2)
    scenario = p.scenario()
    assert scenario["host.cores"] == min(os.cpu_count() or 1, 1024)
    assert scenario["kernel.netdev_budget"] >= 1
    resolve(scenario)
    report = irqlab.run(scenario, SHORT)
    assert report["packets"]["offered"] > 0
    # and through the command line, as a person would run it, then `irqlab check`
    out = tmp_path / "mine.toml"
    cmd = [sys.executable, "-m", "irqlab.cli", "probe", MINE, "--interval", "0.2", "--out"]
    r = subprocess.run([*cmd, str(out)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert f"wrote {out}" in r.stdout
    check = CliRunner().invoke(main, ["check", str(out)])
    assert check.exit_code == 0, check.output


@pytest.mark.skipif(MINE is None, reason="not a Linux host: no /sys/class/net")
def test_netlink_napi_get_on_this_machine():
    ifindex = int(Path(f"/sys/class/net/{MINE}/ifindex").read_text())
    try:
        napis = napi_get(ifindex, timeout_s=5.0)
    except OSError as e:  # a kernel before napi-get, or no netlink in a sandbox
        pytest.skip(f"netlink napi-get: {e}")
    assert all(n.get("ifindex") == ifindex and "id" in n for n in napis)
    # queue-get: each queue a NAPI serves names one napi-get listed
    queues = queue_get(ifindex, timeout_s=5.0)
    assert queues and all(q.get("ifindex") == ifindex and q["type"] in (0, 1) for q in queues)
    ids = {n["id"] for n in napis}
    assert {q["napi-id"] for q in queues if "napi-id" in q} <= ids
    release = kernel_version(Path("/proc/sys/kernel/osrelease").read_text())
    if release is not None and release >= (6, 17):  # every per-NAPI setting, threaded too
        for n in napis:
            assert {"defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout"} <= set(n)
            assert "threaded" in n


DOC = (Path(__file__).resolve().parents[1] / "docs" / "probe.md").read_text()


def test_the_docs_name_only_keys_that_exist_and_every_key_probed():
    named = set(re.findall(r"`((?:host|nic|driver|kernel|socket|platform)\.[a-z_]+)`", DOC))
    assert {"nic.irq_affinity", "kernel.hz", "driver.moderation"} <= named
    assert named <= set(schema()), named - set(schema())
    table = DOC.split("## What is read, and which key it sets")[1].split("\n\n", 3)[2]
    in_table = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", table)) | {"scheme"}
    assert set(PROBED) <= in_table, set(PROBED) - in_table


@pytest.mark.skipif(
    MINE is None or shutil.which("bash") is None,
    reason="runs the docs' recording script: needs Linux's /sys/class/net and bash",
)
def test_the_recording_script_of_the_docs_records_what_the_probe_reads(tmp_path):
    script = re.search(r"### Recording a host.*?```bash\n(.*?)```", DOC, re.S)
    assert script is not None
    recorded = tmp_path / "recorded"
    env = {**os.environ, "IF": MINE, "R": str(recorded), "INTERVAL": "0.2"}
    r = subprocess.run(
        ["bash", "-c", script[1]], env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    assert (recorded / "proc/interrupts.2").is_file()
    live = probe(MINE, interval_s=0.2).scenario()
    again = probe(MINE, root=recorded, interval_s=0.2).scenario()
    # the same scenario, but for a clock read from /proc/cpuinfo, which moves on some hosts
    assert {k: v for k, v in again.items() if k != "platform.cpu_ghz"} == {
        k: v for k, v in live.items() if k != "platform.cpu_ghz"
    }
    assert ("platform.cpu_ghz" in again) == ("platform.cpu_ghz" in live)
