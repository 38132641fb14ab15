"""Runs that would take hours: said so up front, and stopped by Ctrl-C within about a second.

Each interrupt test starts a real process on a scenario of hours, sends it SIGINT about a
second into the run, and asserts what a person at a terminal would see: `irqlab run` exits
with status 130 and one line, the Python API raises ``KeyboardInterrupt``, never a traceback.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import irqlab
from irqlab import _irqlab
from irqlab.cli import main
from irqlab.simulate import LARGE_RUN_PACKETS, expected_packets, large_run_warning

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "napi.toml"

pytestmark = pytest.mark.skipif(
    sys.platform == "win32",
    reason="sends SIGINT and SIGKILL to process groups: POSIX only (not Windows)",
)

#: Generous: a run stops within a slice of simulated time (a millisecond) after the signal
#: is seen, and signals are looked for every 50 ms.
STOP_WITHIN_S = 20
#: Starting Python and importing irqlab can take seconds on a busy machine.
START_WITHIN_S = 120

#: An hour of 10 Mpps on one core: 3.6e10 packets, half an hour or more.
HOURS_ONE_CORE = ["--set", "traffic.rate_pps=1e7", "--set", "run.duration_ms=3.6e6"]
#: The same per core on four cores that do not interact: run core by core.
HOURS_CORE_BY_CORE = [
    *HOURS_ONE_CORE,
    *("--set", "host.cores=4", "--set", "nic.queues=4", "--set", "traffic.flows=64"),
    *("--set", "traffic.rate_pps=4e7"),
]
#: Few packets, but a polling timer every nanosecond: 3.6e12 timer events (hours), and a
#: per-packet trace that stays small.
HOURS_OF_TIMERS = {
    "scheme": "poll",
    "poll.period_us": 0.001,
    "platform.poll_timer_ns": 0,
    "traffic.rate_pps": 1000,
    "run.duration_ms": 3.6e6,
}

#: A shell that starts a command in the background makes it ignore SIGINT, and Python then
#: leaves Ctrl-C ignored; the processes here start with the default disposition, as from a
#: terminal.
SIGINT_DEFAULT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def first_line(proc: subprocess.Popen, stream: str, timeout_s: float) -> bytes:
    """What `proc` wrote to `stream` up to its first newline (and maybe after it), waiting at
    most `timeout_s`."""
    fd = getattr(proc, stream).fileno()
    data = b""
    deadline = time.monotonic() + timeout_s
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


def interrupt(args: list[str], started_marker: str, marker_on: str) -> tuple[int, str, str, float]:
    """Starts `args`, waits for `started_marker` on `marker_on` (stdout or stderr), sends
    SIGINT a second later, and returns (exit status, stdout, stderr, seconds to stop)."""
    with subprocess.Popen(
        [*SIGINT_DEFAULT, *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            before = first_line(proc, marker_on, START_WITHIN_S)
            assert started_marker in before.decode(), (
                f"no {started_marker!r} on {marker_on} within {START_WITHIN_S} s: {before!r}"
            )
            time.sleep(1.0)
            assert proc.poll() is None, "the run ended by itself"
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            try:
                out, err = proc.communicate(timeout=STOP_WITHIN_S)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running {STOP_WITHIN_S} s after SIGINT")
            stopped_after = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    if marker_on == "stdout":
        out = before + out
    else:
        err = before + err
    return proc.returncode, out.decode(), err.decode(), stopped_after


@pytest.mark.parametrize(
    "hours", [HOURS_ONE_CORE, HOURS_CORE_BY_CORE], ids=["one-core", "core-by-core"]
)
def test_ctrl_c_stops_irqlab_run_with_one_line_and_status_130(hours):
    code, out, err, stopped_after = interrupt(
        [sys.executable, "-m", "irqlab.cli", "run", str(EXAMPLE), *hours],
        started_marker="irqlab: warning: about",
        marker_on="stderr",
    )
    assert code == 130, err
    assert stopped_after < STOP_WITHIN_S
    assert "Traceback" not in err
    lines = err.splitlines()
    # said up front how large the run is, and on Ctrl-C one line
    assert len(lines) == 2, err
    assert lines[0].startswith("irqlab: warning: about ") and "packets to simulate" in lines[0]
    assert lines[1] == "irqlab: interrupted"
    assert out == ""


API_SCRIPT = """
import sys
import irqlab
from irqlab import _irqlab

print("running", flush=True)
try:
    {call}({params!r})
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    # the interpreter and the module are fine afterwards
    assert irqlab.run({{"run.duration_ms": 1}})["packets"]["offered"] > 0
    sys.exit(0)
print("ran to its end")
sys.exit(1)
"""


@pytest.mark.parametrize(
    ("call", "params"),
    [
        ("irqlab.run", {"traffic.rate_pps": 1e7, "run.duration_ms": 3.6e6}),
        ("irqlab.run_traced", HOURS_OF_TIMERS),
        # a sweep's warm-up detection runs this in its workers
        (
            "(lambda p: _irqlab.run_series(p, 1000))",
            {"traffic.rate_pps": 1e7, "run.duration_ms": 3.6e6},
        ),
    ],
    ids=["run", "run_traced", "run_series"],
)
def test_ctrl_c_raises_keyboard_interrupt_from_the_python_api(call, params):
    code, out, err, stopped_after = interrupt(
        [sys.executable, "-c", API_SCRIPT.format(call=call, params=params)],
        started_marker="running",
        marker_on="stdout",
    )
    assert out.splitlines() == ["running", "KeyboardInterrupt"], (out, err)
    assert code == 0, err
    assert stopped_after < STOP_WITHIN_S
    assert "Traceback" not in err


def test_a_panic_in_a_run_becomes_an_internal_error_not_a_crash():
    # the run path catches panics as the guard does
    with pytest.raises(irqlab.InternalError, match="this is a bug"):
        _irqlab._panic_for_test(in_run=True)
    assert irqlab.run({"run.duration_ms": 1})["packets"]["offered"] > 0


def huge(rate_pps: float, duration_ms: float) -> dict:
    return {"traffic.rate_pps": rate_pps, "run.warmup_ms": 0.0, "run.duration_ms": duration_ms}


def test_the_estimate_is_rate_times_simulated_time():
    assert expected_packets(huge(1e5, 100)) == pytest.approx(1e4)
    assert expected_packets({**huge(1e5, 100), "run.warmup_ms": 10}) == pytest.approx(1.1e4)


def test_a_warning_only_above_the_threshold():
    assert LARGE_RUN_PACKETS == 1e9
    assert large_run_warning(huge(1e6, 1e6)) is None  # exactly 1e9
    w = large_run_warning(huge(1e6, 1.5e6))
    assert w is not None and w.startswith("about 1.5e9 packets to simulate")
    assert "(1,000,000 pps for 1,500 s)" in w
    assert "1-2.5 min at 10-25 M packets/s; Ctrl-C stops the run" in w
    w = large_run_warning(huge(1e9, 3.6e6))
    assert w.startswith("about 3.6e12 packets to simulate (1,000,000,000 pps for 3,600 s): ")
    assert "1.7-4.2 days" in w


def test_check_and_run_say_it_on_stderr_in_one_line():
    args = [str(EXAMPLE), *HOURS_ONE_CORE]
    r = CliRunner().invoke(main, ["check", *args])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == [
        "irqlab: warning: about 3.6e10 packets to simulate (10,000,000 pps for 3,600.02 s): "
        "24-60 min at 10-25 M packets/s; Ctrl-C stops the run"
    ]
    assert "traffic.rate_pps = 10000000" in r.stdout
    # bursty traffic of the same mean rate: the same estimate
    onoff = ["--set", "traffic.kind=pareto-onoff", "--set", "traffic.line_rate_gbps=100"]
    r = CliRunner().invoke(main, ["check", *args, *onoff])
    assert r.exit_code == 0, r.output
    assert "about 3.6e10 packets" in r.stderr
    # an ordinary scenario: nothing on stderr
    for cmd in (["check"], ["run", "--set", "run.duration_ms=5"]):
        r = CliRunner().invoke(main, [*cmd, str(EXAMPLE)])
        assert r.exit_code == 0, r.output
        assert r.stderr == ""
