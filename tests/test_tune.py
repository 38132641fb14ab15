"""irqlab tune: the setting that meets every SLO at the least CPU, decided by racing with
common random numbers; reproducible for a seed, resumable, and honest when nothing fits."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import irqlab
from irqlab.ops.tune import Slo, commands, knob_candidates, label, parse_knob, parse_range, tune

# the emmerich2015 preset at 1 Mpps (the acceptance case), short runs
EMMERICH_1M = {
    "platform": {"preset": "emmerich2015"},
    "traffic": {"kind": "poisson", "rate_pps": 1e6},
    "run": {"duration_ms": 10, "warmup_ms": 1},
}
P99 = 30.0
SMALL_KNOBS = ["driver.moderation=off,static,ixgbe", "nic.itr_us=10,50,200"]


@pytest.fixture(scope="module")
def acceptance():
    return tune(EMMERICH_1M, [f"latency_us.p99 <= {P99}"], executor="inline")


def test_tune_finds_a_setting_that_meets_the_p99_target_with_fresh_seeds(acceptance):
    assert acceptance.feasible
    pick = acceptance.recommended
    assert pick is not None
    fresh = [
        irqlab.run(EMMERICH_1M, {**pick, "run.duration_ms": 50}, seed=1000 + k)["latency_us"]["p99"]
        for k in range(5)
    ]
    assert max(fresh) <= P99, fresh
    # and it is the cheapest: every other feasible candidate costs at least as much
    t = acceptance.table
    feasible = t[t["status"] == "feasible"]
    assert feasible["objective"].min() == pytest.approx(
        feasible[feasible["setting"] == label(pick)]["objective"].iloc[0]
    )


def test_the_recommendation_is_cheaper_than_the_fastest_setting(acceptance):
    """Meeting the SLO with the least CPU is the point: the winner costs less than `off`
    without deferral (an interrupt per packet), which is the lowest-latency setting."""
    t = acceptance.table.set_index("setting")
    off = t.loc["off netdev_budget=300"]
    best = t[t["status"] == "feasible"]["objective"].min()
    assert best < off["objective"] - 0.1


def test_racing_drops_clear_losers_after_the_first_round(acceptance):
    t = acceptance.table
    out = t[t["status"] == "infeasible"]
    assert len(out) > 0 and (out["replications"] == 3).any()
    assert t["replications"].max() <= 10
    assert acceptance.runs < 0.6 * len(t) * 10  # far fewer runs than every candidate at the most


def test_an_infeasible_target_is_reported_as_infeasible(tmp_path):
    r = tune(
        EMMERICH_1M,
        ["latency_us.p99 <= 0.5"],
        knobs=SMALL_KNOBS,
        executor="inline",
        out=tmp_path,
    )
    assert not r.feasible and r.recommended is None and r.commands == []
    assert set(r.table["status"]) == {"infeasible"}
    text = (tmp_path / "recommendation.md").read_text()
    assert "No setting meets every SLO" in text
    assert "The closest:" in text
    assert json.loads((tmp_path / "recommendation.json").read_text())["feasible"] is False


def test_the_same_seed_gives_the_same_decisions_with_any_executor():
    args = (EMMERICH_1M, ["latency_us.p99 <= 40", "loss_ratio <= 1e-3"])
    a = tune(*args, knobs=SMALL_KNOBS, executor="inline", seed=7)
    b = tune(*args, knobs=SMALL_KNOBS, executor="process", workers=2, seed=7)
    assert a.recommended == b.recommended
    assert a.table.equals(b.table)


def journal_rows(folder: Path) -> int:
    """The runs a tune's journal holds."""
    with sqlite3.connect(folder / "journal.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_a_rerun_resumes_and_a_different_tune_is_refused(tmp_path):
    calls = []
    args = (EMMERICH_1M, ["latency_us.p99 <= 40"])
    first = tune(*args, knobs=SMALL_KNOBS, executor="inline", out=tmp_path)
    assert journal_rows(tmp_path) == first.runs
    # a run the journal lost (a kill before its commit): that run alone is done again
    with sqlite3.connect(tmp_path / "journal.sqlite") as db:
        db.execute("DELETE FROM runs WHERE rowid = (SELECT MAX(rowid) FROM runs)")
    again = tune(
        *args,
        knobs=SMALL_KNOBS,
        executor="inline",
        out=tmp_path,
        progress=lambda d, m: calls.append(d),
    )
    assert len(calls) == 1
    assert again.table.equals(first.table)
    with pytest.raises(irqlab.ConfigError, match="holds a different tune"):
        tune(
            EMMERICH_1M,
            ["latency_us.p99 <= 41"],
            knobs=SMALL_KNOBS,
            executor="inline",
            out=tmp_path,
        )
    tune(
        EMMERICH_1M,
        ["latency_us.p99 <= 41"],
        knobs=SMALL_KNOBS,
        executor="inline",
        out=tmp_path,
        fresh=True,
    )


def test_a_folder_written_before_tunes_kept_a_journal_resumes_from_its_runs_jsonl(tmp_path):
    """Such a folder holds tune.json and runs.jsonl, a run a line ({"c", "l", "r", "m"}): its
    runs move into the journal, the file goes, and nothing runs again but a line cut short."""
    args = (EMMERICH_1M, ["latency_us.p99 <= 40"])
    first = tune(*args, knobs=SMALL_KNOBS, executor="inline", out=tmp_path)
    with sqlite3.connect(tmp_path / "journal.sqlite") as db:
        rows = [json.loads(row) for (row,) in db.execute("SELECT row FROM runs ORDER BY rowid")]
    for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    lines = [json.dumps({"c": r["c"], "l": r["l"], "r": r["r"], "m": r["m"]}) for r in rows]
    assert len(lines) == first.runs
    # as the older tune wrote it, killed while writing its last line
    (tmp_path / "runs.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:10])
    calls = []
    again = tune(
        *args,
        knobs=SMALL_KNOBS,
        executor="inline",
        out=tmp_path,
        progress=lambda d, m: calls.append(d),
    )
    assert len(calls) == 1
    assert again.table.equals(first.table) and again.recommended == first.recommended
    assert not (tmp_path / "runs.jsonl").exists()
    assert journal_rows(tmp_path) == first.runs
    # and once moved, a rerun has nothing left to run
    calls.clear()
    tune(
        *args,
        knobs=SMALL_KNOBS,
        executor="inline",
        out=tmp_path,
        progress=lambda d, m: calls.append(d),
    )
    assert calls == []


def test_a_load_range_must_hold_at_every_load():
    """A setting that meets p99 at 0.2 Mpps but not at 1.9 Mpps (a 20 µs ITR) is not
    recommended over the range: the tune over both loads picks one that meets it at 1.9 Mpps
    alone too (no throttling), though it costs more CPU at the low load."""
    knobs = ["driver.moderation=static", "nic.itr_us=0,20"]
    slo = ["latency_us.p99 <= 35"]
    low = tune(EMMERICH_1M, slo, knobs=knobs, loads=[2e5], executor="inline")
    both = tune(EMMERICH_1M, slo, knobs=knobs, loads=[2e5, 1.9e6], executor="inline")
    high = tune(EMMERICH_1M, slo, knobs=knobs, loads=[1.9e6], executor="inline")
    assert low.recommended == {"driver.moderation": "static", "nic.itr_us": 20}
    assert both.recommended == {"driver.moderation": "static", "nic.itr_us": 0}
    feasible_high = set(high.table[high.table["status"] == "feasible"]["setting"])
    assert label(both.recommended) in feasible_high


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            {"driver.moderation": "static", "nic.itr_us": 24.0},
            ["ethtool -C eth1 adaptive-rx off rx-usecs 24"],
        ),
        ({"driver.moderation": "off"}, ["ethtool -C eth1 adaptive-rx off rx-usecs 0"]),
        (
            {"driver.moderation": "i40e", "kernel.netdev_budget": 600},
            [
                "ethtool -C eth1 adaptive-rx on   # i40e/iavf's dynamic ITR",
                "sysctl -w net.core.netdev_budget=600",
            ],
        ),
        (
            {"kernel.napi_defer_hard_irqs": 2, "kernel.gro_flush_timeout_ns": 20000},
            [
                "echo 2 > /sys/class/net/eth1/napi_defer_hard_irqs",
                "echo 20000 > /sys/class/net/eth1/gro_flush_timeout",
            ],
        ),
        ({"nic.rx_frames": 8}, ["ethtool -C eth1 rx-frames 8"]),
        (
            {"socket.busy_read_us": 50, "kernel.busy_poll_us": 50},
            ["sysctl -w net.core.busy_read=50", "sysctl -w net.core.busy_poll=50"],
        ),
        ({"socket.rcvbuf_bytes": 425984}, ["sysctl -w net.core.rmem_default=425984"]),
        ({"kernel.sched_slice_us": 3}, ["echo 3000 > /sys/kernel/debug/sched/base_slice_ns"]),
        (
            {"kernel.irq_suspend_timeout_ns": 2000000},
            [
                'ynl --family netdev --do napi-set --json \'{"id": NAPI_ID, '
                '"irq-suspend-timeout": 2000000}\'   # each NAPI of eth1 (napi-get lists them)'
            ],
        ),
        (
            {"platform.proto_ns": 300},
            ["# platform.proto_ns = 300 (a model setting: no operator command)"],
        ),
    ],
)
def test_the_recommendation_is_the_commands_an_operator_types(setting, expected):
    params = irqlab.resolve(EMMERICH_1M)
    assert commands(setting, params, "eth1") == expected


def test_ranges_and_slos_parse_as_documented():
    assert parse_range("k", "0..100:25") == [0, 25, 50, 75, 100]
    assert parse_range("k", "1..4") == [1, 2, 3, 4]
    assert parse_range("k", "0.0..1.0") == pytest.approx([i / 8 for i in range(9)])
    assert parse_range("k", "static,dim") == ["static", "dim"]
    assert parse_knob("nic.itr_us=2e1,5e1") == ("nic.itr_us", [20.0, 50.0])
    s = Slo.parse("latency_us.p99<=50")
    assert (s.metric, s.op, s.bound, s.upper) == ("latency_us.p99", "<=", 50.0, True)
    assert Slo.parse("throughput_pps >= 1e6").margin(1.1e6) == pytest.approx(1e5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: Slo.parse("latency <== 5"), "expected 'METRIC <= VALUE'"),
        (lambda: Slo.parse("latency_us.p99 <= fast"), "is not a number"),
        (lambda: parse_range("nic.itr_us", "10..5"), "backwards"),
        (lambda: parse_range("nic.itr_us", "0..10:0"), "step must be positive"),
        (lambda: parse_knob("nic.itr_us"), "expected KEY=RANGE"),
        (
            lambda: knob_candidates([("a", list(range(100))), ("b", list(range(100)))]),
            "10,000 candidates",
        ),
        (
            lambda: tune(EMMERICH_1M, ["latency_us.p98 <= 5"], knobs=SMALL_KNOBS),
            "did you mean latency_us.p99",
        ),
        (lambda: tune(EMMERICH_1M, ["latency_us.p99 <= 5"], knobs=["nic.itr_us=-5"]), "nic.itr_us"),
        (lambda: tune(EMMERICH_1M, []), "at least one SLO"),
        (
            lambda: tune({**EMMERICH_1M, "scheme": "poll"}, ["latency_us.p99 <= 5"]),
            r"give knobs=\[KEY=RANGE, \.\.\.\]",
        ),
    ],
)
def test_bad_input_is_a_config_error_that_says_what_is_wrong(call, match):
    with pytest.raises(irqlab.ConfigError, match=match):
        call()


def test_the_cli_prints_the_commands_and_writes_the_folder(tmp_path):
    out = subprocess.run(
        [
            sys.executable, "-m", "irqlab.cli", "tune", "examples/emmerich2015.toml",
            "--set", "traffic.rate_pps=1e6", "--set", "run.duration_ms=10",
            "--slo", "latency_us.p99 <= 40", "--knob", "driver.moderation=static",
            "--knob", "nic.itr_us=10,50,200", "--iface", "eth0", "--out", str(tmp_path / "t"),
            "--executor", "inline",
        ],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ethtool -C eth0 adaptive-rx off rx-usecs 10" in out.stdout
    for name in ("recommendation.md", "candidates.csv", "pareto.csv", "pareto.png", "tune.json"):
        assert (tmp_path / "t" / name).stat().st_size > 0
    assert journal_rows(tmp_path / "t") > 0
    bad = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "tune", "examples/emmerich2015.toml",
         "--slo", "p99 < 5", "--out", str(tmp_path / "u")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith(
        "irqlab: error: --slo 'p99 < 5': metric 'p99' is not in irqlab's report"
    )
    assert "Traceback" not in bad.stderr


def test_every_setting_the_probe_reads_has_the_command_that_writes_it():
    """One table, both directions: what probe reads from a host, tune's recommendation can
    write back (none is "a model setting")."""
    from irqlab.ops.probe import HOST_SETTINGS

    params = irqlab.resolve(EMMERICH_1M)
    for host in HOST_SETTINGS:
        if host.key is None:
            continue
        (line,) = commands({host.key: 7}, params, "eth1")
        assert "no operator command" not in line, (host.key, line)
        assert line.startswith(("sysctl -w ", "echo ", "ynl ")), line


def test_threaded_napi_is_written_as_the_switch_the_host_reads():
    params = irqlab.resolve(EMMERICH_1M)
    assert commands({"kernel.threaded_napi": True}, params, "eth1") == [
        "echo 1 > /sys/class/net/eth1/threaded"
    ]
    assert commands({"kernel.threaded_napi": False}, params, "eth1") == [
        "echo 0 > /sys/class/net/eth1/threaded"
    ]


# --- per-NAPI commands on the probe's recorded hosts ------------------------------------------

TREES = Path(__file__).resolve().parent / "data" / "probe"
DEFERRAL = {"kernel.napi_defer_hard_irqs": 2, "kernel.gro_flush_timeout_ns": 20000}


def probed_file(host: str, iface: str, tmp_path: Path) -> Path:
    from irqlab.ops.probe import probe

    out = tmp_path / f"{host}.toml"
    out.write_text(probe(iface, root=TREES / host).toml())
    return out


def test_a_probed_6_14_host_gets_napi_set_for_each_napi(tmp_path):
    from irqlab.ops.tune.commands import probed_napis

    path = probed_file("ice", "ens785f0", tmp_path)
    napis = probed_napis(path.read_text())
    assert napis is not None and napis.iface == "ens785f0"
    assert [(n.id, n.queues) for n in napis.napis] == [
        (8193 + k, f"rx-{k},tx-{k}") for k in range(4)
    ]
    # 6.14 gives defer-hard-irqs, gro-flush-timeout and irq-suspend-timeout per NAPI, not
    # threaded (6.17): napi-set for the first three, one command per NAPI, sysfs for threaded
    assert napis.napis[0].settings == {
        "defer-hard-irqs",
        "gro-flush-timeout",
        "irq-suspend-timeout",
    }
    params = irqlab.resolve(path)
    setting = {**DEFERRAL, "kernel.threaded_napi": True, "kernel.netdev_budget": 600}
    assert commands(setting, params, "ens785f0", napis) == [
        "sysctl -w net.core.netdev_budget=600",
        *(
            "ynl --family netdev --do napi-set --json "
            f'\'{{"id": {8193 + k}, "defer-hard-irqs": 2, "gro-flush-timeout": 20000}}\''
            f"   # ens785f0 rx-{k},tx-{k}"
            for k in range(4)
        ),
        "echo 1 > /sys/class/net/ens785f0/threaded",
    ]
    # IRQ suspension has no file: napi-set with each NAPI's id, not a placeholder
    (first, *_) = commands({"kernel.irq_suspend_timeout_ns": 2e6}, params, "ens785f0", napis)
    assert first == (
        "ynl --family netdev --do napi-set --json "
        '\'{"id": 8193, "irq-suspend-timeout": 2000000}\'   # ens785f0 rx-0,tx-0'
    )


def test_a_probed_6_18_host_sets_threaded_per_napi_too(tmp_path):
    from irqlab.ops.tune.commands import probed_napis

    path = probed_file("virtio_net_618", "eth0", tmp_path)
    napis = probed_napis(path.read_text())
    assert napis is not None
    params = irqlab.resolve(path)
    assert commands({**DEFERRAL, "kernel.threaded_napi": True}, params, "eth0", napis) == [
        'ynl --family netdev --do napi-set --json \'{"id": 257, "defer-hard-irqs": 2, '
        '"gro-flush-timeout": 20000, "threaded": 1}\'   # eth0 rx-0'
    ]


def test_an_older_probed_host_gets_sysfs_commands(tmp_path):
    from irqlab.ops.tune.commands import probed_napis, probed_napis_of

    path = probed_file("bnxt_en", "enp1s0f0np0", tmp_path)
    assert probed_napis(path.read_text()) is None  # no netdev family: no NAPI table
    assert probed_napis_of(path) is None
    assert probed_napis_of(Path("examples/emmerich2015.toml")) is None  # not probed
    assert probed_napis_of(tmp_path / "missing.toml") is None
    params = irqlab.resolve(path)
    assert commands(DEFERRAL, params, "enp1s0f0np0", probed_napis_of(path)) == [
        "echo 2 > /sys/class/net/enp1s0f0np0/napi_defer_hard_irqs",
        "echo 20000 > /sys/class/net/enp1s0f0np0/gro_flush_timeout",
    ]


def test_tune_on_a_probed_file_prints_napi_set_on_its_interface(tmp_path):
    path = probed_file("ice", "ens785f0", tmp_path)
    result = tune(
        path,
        ["latency_us.p99 <= 10000"],
        knobs=["kernel.napi_defer_hard_irqs=2", "kernel.gro_flush_timeout_ns=20000"],
        overrides={"run.duration_ms": 2, "run.warmup_ms": 0, "traffic.rate_pps": 50_000},
        min_replications=2,
        max_replications=2,
        executor="inline",
    )
    assert result.feasible
    assert [c.split("'")[1] for c in result.commands] == [
        f'{{"id": {8193 + k}, "defer-hard-irqs": 2, "gro-flush-timeout": 20000}}' for k in range(4)
    ]
    assert all(c.endswith(f"# ens785f0 rx-{k},tx-{k}") for k, c in enumerate(result.commands))
    # an interface named on the command line wins over the probed one
    again = tune(
        path,
        ["latency_us.p99 <= 10000"],
        knobs=["kernel.napi_defer_hard_irqs=2", "kernel.gro_flush_timeout_ns=20000"],
        overrides={"run.duration_ms": 2, "run.warmup_ms": 0, "traffic.rate_pps": 50_000},
        min_replications=2,
        max_replications=2,
        executor="inline",
        iface="eth9",
    )
    assert again.commands[0].endswith("# eth9 rx-0,tx-0")


def test_a_napi_table_edited_by_hand_is_read_as_far_as_it_goes():
    from irqlab.ops.tune.commands import probed_napis

    text = (
        "# NAPIs of eth1 (netlink napi-get, queue-get eth1):\n"
        "# Each NAPI's own settings ...\n"
        "#   NAPI  queues  IRQ  defer-hard-irqs  gro-flush-timeout  irq-suspend-timeout  threaded\n"
        "#     10  rx-0     30  0  0  0  -\n"
        "#     11  rx-1     31  0  -  0  -\n"
        "# not a row\n"
        "#     12  rx-2     32  0  0  0  -\n"
    )
    napis = probed_napis(text)
    assert napis is not None
    assert [(n.id, sorted(n.settings)) for n in napis.napis] == [
        (10, ["defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout"]),
        (11, ["defer-hard-irqs", "irq-suspend-timeout"]),
    ]
    # a setting one NAPI lacks is not napi-set on any: sysfs for all
    params = irqlab.resolve(EMMERICH_1M)
    assert commands(DEFERRAL, params, "eth1", napis) == [
        'ynl --family netdev --do napi-set --json \'{"id": 10, "defer-hard-irqs": 2}\''
        "   # eth1 rx-0",
        'ynl --family netdev --do napi-set --json \'{"id": 11, "defer-hard-irqs": 2}\''
        "   # eth1 rx-1",
        "echo 20000 > /sys/class/net/eth1/gro_flush_timeout",
    ]
    assert probed_napis("# NAPIs of eth1 (netlink napi-get eth1):\nscheme = 'napi'\n") is None


def test_a_vectors_own_settings_become_napi_set_taskset_and_chrt_for_its_napi(tmp_path):
    from irqlab.ops.tune.commands import probed_napis

    path = probed_file("ice", "ens785f0", tmp_path)
    napis = probed_napis(path.read_text())
    params = irqlab.resolve(path)
    setting = {
        "napi.2.threaded": "busy-poll",
        "napi.2.thread_core": 3,
        "napi.2.thread_policy": "fifo",
        "napi.0.defer_hard_irqs": 100,
        "napi.0.gro_flush_timeout_ns": 15000,
    }
    # the NAPI serving rx-N, by its id; the thread by the name the kernel gives it
    assert commands(setting, params, "ens785f0", napis) == [
        'ynl --family netdev --do napi-set --json \'{"id": 8193, "defer-hard-irqs": 100, '
        '"gro-flush-timeout": 15000}\'   # ens785f0 rx-0',
        'ynl --family netdev --do napi-set --json \'{"id": 8195, "threaded": "busy-poll"}\''
        "   # ens785f0 rx-2",
        "taskset -pc 3 $(pgrep -x napi/ens785f0-8195)   # ens785f0 rx-2",
        "chrt -f -p 50 $(pgrep -x napi/ens785f0-8195)   # ens785f0 rx-2",
    ]
    # without a probed table: the placeholder id, saying which NAPI it means
    assert commands({"napi.1.threaded": "on"}, params, "eth1") == [
        'ynl --family netdev --do napi-set --json \'{"id": "NAPI_ID", "threaded": "enabled"}\''
        "   # eth1 rx-1 (napi-get lists its id)"
    ]
    # a field left to the device writes nothing
    assert commands({"napi.1.defer_hard_irqs": -1}, params, "eth1") == [
        "# napi.1.defer_hard_irqs = -1: the device's value, nothing to set"
    ]
