"""Moderation policies written in Python (driver.moderation = "python"): the same hooks as the
built-in ones, a re-implementation of `linear` that matches the built-in bit for bit, and a
user's exception surfacing as itself, with its traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import traceback

import pytest

import irqlab
from irqlab.policy import Coalesce, Itr, Linear, Sample

EMMERICH = {
    "platform": {"preset": "emmerich2015"},
    "traffic": {"kind": "cbr", "rate_pps": 1e6},
    "run": {"duration_ms": 30},
}


def without_scenario(report: dict) -> dict:
    report = dict(report)
    report.pop("scenario")
    return report


@pytest.mark.parametrize(
    ("overrides", "python_linear"),
    [
        ({}, Linear),
        ({"traffic.kind": "poisson", "traffic.rate_pps": 3e5}, Linear),
        ({"traffic.kind": "poisson", "traffic.rate_pps": 1.9e6}, Linear),
        # the Tx container takes part: every packet is forwarded
        ({"host.forward": True, "traffic.rate_pps": 6e5}, Linear),
        # four cores, a vector each: run core by core, a policy per vector
        (
            {
                "host.cores": 4,
                "nic.queues": 4,
                "traffic.flows": 64,
                "traffic.kind": "poisson",
                "traffic.rate_pps": 2e6,
            },
            Linear,
        ),
        # the patch's own parameters and its nsec-only bug
        (
            {
                "driver.linear_rate_max": 50_000,
                "driver.linear_rate_min": 4000,
                "driver.linear_pps_max": 1e6,
                "driver.linear_min_update_us": 20,
                "driver.linear_elapsed": "nsec-only",
                "traffic.kind": "poisson",
            },
            lambda: Linear(50_000, 4000, 1e6, 20, nsec_only=True),
        ),
    ],
    ids=["cbr-1M", "poisson-300k", "poisson-1.9M", "forwarding", "4-cores", "parameters"],
)
def test_python_linear_gives_the_report_of_the_builtin_bit_for_bit(overrides, python_linear):
    builtin = irqlab.run(EMMERICH, {**overrides, "driver.moderation": "linear"})
    # the Python twin takes the linear_* settings as its own arguments
    theirs = {k: v for k, v in overrides.items() if not k.startswith("driver.linear_")}
    python = irqlab.run(EMMERICH, theirs, policy=python_linear)
    assert builtin["counts"]["moderation_writes"] > 0, "the policy must act for this to test it"
    assert without_scenario(python) == without_scenario(builtin)
    assert python["scenario"]["driver.moderation"] == "python"


def test_the_python_policy_is_what_runs():
    """A policy that throttles hard gives far fewer interrupts than one that never throttles."""

    class Never:
        def initial(self):
            return Itr(usecs=0)

        def on_complete(self, s):
            return None

    class Hard:
        def initial(self):
            return Itr(usecs=500)

        def on_complete(self, s):
            return None

    scenario = {**EMMERICH, "traffic": {"kind": "poisson", "rate_pps": 2e5}}
    never = irqlab.run(scenario, policy=Never)["irq_per_s"]
    hard = irqlab.run(scenario, policy=Hard)["irq_per_s"]
    assert hard <= 2000 * 1.01  # at most one interrupt per 500 µs
    assert never > 20 * hard


def test_hooks_see_cumulative_counters_and_time():
    seen: list[Sample] = []

    class Recorder:
        def on_complete(self, s):
            seen.append(s)

    r = irqlab.run(EMMERICH, {"run.warmup_ms": 0}, policy=Recorder)
    # every poll that completed below its weight (a poll at the end may still run)
    assert r["counts"]["polls"] - 1 <= len(seen) <= r["counts"]["polls"]
    times = [s.now_ps for s in seen]
    assert times == sorted(times) and times[-1] <= 30e9
    packets = [s.packets for s in seen]
    assert packets == sorted(packets)
    assert 0 <= r["packets"]["delivered"] - packets[-1] < 64
    assert all(s.bytes == 60 * s.packets for s in seen)  # 64-byte frames, skb->len = 60
    assert r["counts"]["irqs"] - 1 <= seen[-1].events <= r["counts"]["irqs"]


def test_coalesce_writes_program_the_nic():
    class EveryEight:
        def initial(self):
            return Coalesce(usecs=1000, frames=8)

        def on_complete(self, s):
            return None

    r = irqlab.run(
        {**EMMERICH, "scheme": "coalesce-count", "traffic": {"kind": "cbr", "rate_pps": 1e5}},
        {"nic.rx_frames": 1},
        policy=EveryEight,
    )
    assert r["packets_per_poll"] == pytest.approx(8, rel=0.01)


def test_an_object_serves_the_first_vector_and_copies_the_others():
    class Counting:
        def __init__(self):
            self.calls = 0

        def on_complete(self, s):
            self.calls += 1

    mine = Counting()
    r = irqlab.run(EMMERICH, {"host.cores": 2, "nic.queues": 2, "traffic.flows": 16}, policy=mine)
    assert 0 < mine.calls < r["counts"]["polls"]


class Boom(Exception):
    pass


def explode(s):
    raise Boom(f"at {s.packets} packets")


def test_an_exception_in_on_complete_is_raised_as_itself_with_its_traceback():
    class Faulty:
        def on_complete(self, s):
            if s.packets > 500:
                explode(s)

    with pytest.raises(Boom, match="packets") as info:
        irqlab.run({**EMMERICH, "run": {"duration_ms": 10_000}}, policy=Faulty)
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames[-2:] == ["on_complete", "explode"]
    assert any("on_complete()" in n and "simulated time" in n for n in info.value.__notes__)


@pytest.mark.parametrize("where", ["initial", "constructor"])
def test_an_exception_making_a_policy_stops_the_run_before_it_starts(where):
    class Faulty:
        def __init__(self):
            if where == "constructor":
                raise Boom("constructor")

        def initial(self):
            raise Boom("initial")

        def on_complete(self, s):
            raise AssertionError("must not be called")

    with pytest.raises(Boom, match=where):
        irqlab.run(EMMERICH, policy=Faulty)


@pytest.mark.parametrize(
    ("returned", "match"),
    [(50, "on_complete\\(\\) returned 50"), ("itr", "returned 'itr'")],
)
def test_a_wrong_return_is_a_type_error_naming_the_hook(returned, match):
    class Wrong:
        def on_complete(self, s):
            return returned

    with pytest.raises(TypeError, match=match):
        irqlab.run(EMMERICH, policy=Wrong)


@pytest.mark.parametrize("bad", [5, "linear", [Linear]])
def test_a_policy_argument_that_is_no_policy_is_a_config_error(bad):
    with pytest.raises(irqlab.ConfigError, match="policy") as info:
        irqlab.run(EMMERICH, policy=bad)
    assert info.value.key == "policy"


def test_python_moderation_without_a_policy_is_a_config_error_naming_driver_policy():
    with pytest.raises(irqlab.ConfigError, match=r'driver\.policy = "module:Class"') as info:
        irqlab.run(EMMERICH, {"driver.moderation": "python"})
    assert info.value.key == "driver.policy"


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("nothing", "expected"),
        ("no_such_module_here:X", "No module named"),
        ("irqlab.policy:NoSuchClass", "has no NoSuchClass"),
        ("missing.py:X", "no file"),
    ],
)
def test_a_bad_driver_policy_is_a_config_error(spec, match):
    with pytest.raises(irqlab.ConfigError, match=match) as info:
        irqlab.run(EMMERICH, {"driver.moderation": "python", "driver.policy": spec})
    assert info.value.key == "driver.policy"


def test_itr_and_coalesce_refuse_impossible_intervals():
    with pytest.raises(ValueError, match="usecs"):
        Itr(usecs=-1)
    with pytest.raises(ValueError, match="usecs"):
        Coalesce(usecs=float("nan"))
    assert Itr(usecs=12.5) == Itr(usecs=12.5) and Itr(usecs=12.5) != Itr(usecs=13)


POLICY_FILE = """
from irqlab.policy import Itr

class Fixed:
    def initial(self):
        return Itr(usecs=100)

    def on_complete(self, s):
        {body}
"""


def write_scenario(tmp_path, body="return None"):
    (tmp_path / "policies").mkdir(parents=True)
    (tmp_path / "policies" / "mine.py").write_text(POLICY_FILE.format(body=body))
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(
        textwrap.dedent(
            """
            [platform]
            preset = "emmerich2015"
            [traffic]
            rate_pps = 2e5
            [run]
            duration_ms = 20
            [driver]
            moderation = "python"
            policy = "policies/mine.py:Fixed"
            """
        )
    )
    return scenario


def test_a_scenario_file_names_its_policy_relative_to_itself(tmp_path, monkeypatch):
    scenario = write_scenario(tmp_path)
    monkeypatch.chdir("/")
    r = irqlab.run(scenario)
    assert r["irq_per_s"] <= 10_000 * 1.01  # one per 100 µs at most


def test_the_cli_runs_a_policy_file_and_reports_its_exception_as_the_users(tmp_path):
    scenario = write_scenario(tmp_path)
    ok = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "run", str(scenario), "--format", "json"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert ok.returncode == 0, ok.stderr
    bad = write_scenario(tmp_path / "bad", body="return 1 / 0")
    out = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "run", str(bad)], capture_output=True, text=True
    )
    assert out.returncode == 2
    first = out.stderr.splitlines()[0]
    assert first.startswith(
        "irqlab: error: the moderation policy's on_complete() raised ZeroDivisionError: "
        "division by zero ("
    )
    assert "mine.py, line 9; at " in first and first.endswith(" µs of simulated time)")
    assert "mine.py" in out.stderr and "return 1 / 0" in out.stderr  # the user's frame
    assert "irqlab/" not in out.stderr.replace(str(tmp_path), "")  # none of irqlab's own


def test_a_sweep_runs_a_policy_file_in_its_workers(tmp_path):
    write_scenario(tmp_path)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        textwrap.dedent(
            """
            [sweep]
            base = "scenario.toml"
            replications = 1
            [axes]
            "traffic.rate_pps" = [1e5, 2e5]
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "sweep", str(sweep), "--out", str(tmp_path / "res")],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    runs = irqlab.load_results(tmp_path / "res")
    assert len(runs) == 2
    assert (runs["irq_per_s"] <= 10_000 * 1.01).all()
    assert (runs["driver.moderation"] == "python").all()


def test_check_imports_the_policy_a_scenario_names(tmp_path):
    scenario = write_scenario(tmp_path)
    scenario.write_text(scenario.read_text().replace("mine.py:Fixed", "mine.py:Missing"))
    out = subprocess.run(
        [sys.executable, "-m", "irqlab.cli", "check", str(scenario)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.startswith("irqlab: error: driver.policy = ")
    assert out.stderr.strip().endswith("has no Missing")
