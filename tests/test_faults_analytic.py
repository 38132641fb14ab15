"""Hostile inputs to the analytic models: more rates than a curve takes, rings whose models are
too large to solve, and solvers that fail. Each is refused before anything is built, in one
line naming the size and the limit, with memory bounded; a solver failure is an error naming
the model and the rate, never a row and never exit status 0."""

from __future__ import annotations

import importlib
import resource
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import irqlab
from irqlab.analytic import curve, disable_enable, md1b, mm1b, normal, tandem
from irqlab.analytic.limits import MAX_CAPACITY, MAX_CHAIN_STATES, MAX_RATES
from irqlab.analytic.tandem import behind_distribution, consume_time
from irqlab.cli import main
from irqlab.errors import ConfigError, ModelError

#: Real processes and files, each test seconds long: outside the quick check (-m 'not slow').
pytestmark = pytest.mark.slow

IRQLAB = Path(sys.executable).with_name("irqlab")
#: Address space an ``irqlab analytic`` process may take in these tests: the interpreter,
#: numpy, scipy and BLAS reserve about 1.5 GB; a solve that grew with its chain's fill-in
#: (4.5 GB at a ring of 16,384, before) is stopped by it.
ADDRESS_SPACE = 3 << 30


def analytic(*args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """``irqlab analytic ARGS`` in a process of its own, its address space limited."""
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]

    def cap() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [*command, "analytic", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        preexec_fn=cap,
    )


def one_line_failure(p: subprocess.CompletedProcess[str], *phrases: str) -> str:
    """Status 2, nothing on stdout, one ``irqlab: error:`` line on stderr holding ``phrases``."""
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irqlab: error: "), p.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


# ----- rates ----------------------------------------------------------------------------------


def test_a_hundred_million_rates_are_refused_before_any_is_made():
    one_line_failure(
        analytic("irq", "--rates", "1:1e9:100000000", limit=ADDRESS_SPACE),
        "--rates '1:1e9:100000000': 100,000,000 rates; a curve takes at most 10,000",
    )
    listed = ",".join(["1e5"] * (MAX_RATES + 1))
    line = one_line_failure(analytic("ideal", "--rates", listed), "10,001 rates")
    assert len(line) < 200  # the list is not repeated whole


@pytest.mark.parametrize("rates", ["1:inf:5", "1:1e400:5", "1e5,inf", "1e5,nan"])
def test_rates_that_are_not_finite_are_refused(rates):
    one_line_failure(analytic("ideal", "--rates", rates), f"--rates '{rates}'")


def test_a_curve_takes_10000_rates_and_no_more():
    params = irqlab.resolve({"scheme": "ideal"})
    assert len(curve("ideal", params, [1e5] * MAX_RATES)) == MAX_RATES == 10_000
    with pytest.raises(ConfigError, match=r"^rates: 10,001 arrival rates; .* at most 10,000"):
        curve("ideal", params, [1e5] * (MAX_RATES + 1))
    r = CliRunner().invoke(main, ["analytic", "ideal", "--rates", "1:1e6:10000", "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert len(r.output.splitlines()) == 1 + MAX_RATES


# ----- model sizes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "states", "more"),
    [
        ("irq", "2,097,154", []),
        ("coalesce-time", "2,097,154", ["--set", "nic.rx_usecs=0"]),
        ("disable-enable", "2,097,153", []),
        ("hybrid", "2,097,153", []),
    ],
)
def test_the_largest_ring_is_refused_naming_its_chain_and_the_limit(scheme, states, more):
    """nic.ring_descriptors = 1048576, its documented maximum, grew the irq chain's solve to
    12.9 GB: now it is refused at once, before the chain is built."""
    sets = ["--set", "nic.ring_descriptors=1048576", *more]
    line = one_line_failure(
        analytic(scheme, *sets, limit=ADDRESS_SPACE),
        "nic.ring_descriptors = 1048576: ",
        f"is a Markov chain of {states} states (about 2.1 GB to solve, per rate)",
        "at most 262,144 states, a buffer of at most 131,071 packets here",
        "irqlab run",
    )
    assert f"the {scheme} model" in line


@pytest.mark.parametrize("scheme", ["irq", "disable-enable", "hybrid"])
def test_a_chain_of_262144_states_is_solved_in_bounded_memory_and_one_more_refused(scheme):
    # 2B + 2 (irq) or 2B + 1 states: B = 131,071 is the largest ring either takes
    ok = analytic(
        scheme,
        "--set",
        "nic.ring_descriptors=131071",
        "--rates",
        "1e5",
        "--format",
        "csv",
        limit=ADDRESS_SPACE,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert ok.stdout.startswith("scheme,rate_pps,") and len(ok.stdout.splitlines()) == 2
    one_line_failure(
        analytic(scheme, "--set", "nic.ring_descriptors=131072", "--rates", "1e5"),
        "nic.ring_descriptors = 131072: ",
        "states",
    )


@pytest.mark.parametrize("scheme", ["ideal", "poll"])
def test_models_without_a_chain_take_the_largest_ring(scheme):
    p = analytic(
        scheme,
        "--set",
        "nic.ring_descriptors=1048576",
        "--rates",
        "1e5",
        "--format",
        "csv",
        limit=ADDRESS_SPACE,
    )
    assert p.returncode == 0 and p.stderr == "", p.stderr[-2000:]
    assert len(p.stdout.splitlines()) == 2


def test_every_solver_refuses_a_model_too_large_before_building_it():
    """The Python functions refuse as the command does, naming the argument: a ConfigError,
    which is the ValueError they raise for other bad arguments."""
    b = MAX_CHAIN_STATES // 2  # 131,072: one state too many for the chains
    cases = [
        (lambda: normal(1e5, 2e5, 2e5, b), "capacity = 131,072: the normal-interruption"),
        (lambda: disable_enable(1e5, 2e5, 1e5, b), "capacity = 131,072: the disable-enable"),
        (lambda: md1b(1e5, 2e5, MAX_CAPACITY + 1), "capacity = 1,048,577: the M/D/1/B queue"),
        (lambda: mm1b(1e5, 2e5, MAX_CAPACITY + 1), "capacity = 1,048,577: the M/M/1/B queue"),
        (lambda: normal(1e5, 2e5, np.inf, MAX_CAPACITY + 1), "the normal-interruption"),
        (lambda: tandem(5e4, 5e-6, 1e-5, 257, 4), "ring = 257: the tagged packet's chain"),
        (lambda: tandem(5e4, 5e-6, 1e-5, 256, 510), "ring = 256, socket = 510: the host"),
        (lambda: behind_distribution(1.0, 1.0, 10**6), "ring = 1,000,000"),
        (lambda: consume_time(1.0, 1.0, 1.0, 10, 10**6), "socket = 1,000,000"),
    ]
    for call, words in cases:
        with pytest.raises(ConfigError, match="at most") as e:
            call()
        assert isinstance(e.value, ValueError)
        assert words in str(e.value), str(e.value)
    # the largest accepted
    assert normal(1e5, 2e5, 2e5, b - 1).capacity == b - 1
    assert disable_enable(1e5, 2e5, 1e5, b - 1, method="closed").capacity == b - 1
    assert mm1b(1e5, 2e5, MAX_CAPACITY).capacity == MAX_CAPACITY
    assert tandem(5e4, 5e-6, 1e-5, 8, 509).offered_pps == 5e4  # 2 (8 + 1)(509 + 1) states


# ----- solver failures ------------------------------------------------------------------------


def test_a_model_that_cannot_be_solved_is_an_error_naming_the_model_and_the_rate():
    one_line_failure(
        analytic("poll", "--rates", "1e5,1e9"),
        "the poll model at 1e+09 packets/s cannot be solved",
        "M/D/1/B: load 6666.67 too high (at most 500)",
    )
    one_line_failure(
        analytic("irq", "--rates", "1e300"),
        "the irq model at 1e+300 packets/s cannot be solved (ZeroDivisionError",
    )
    params = irqlab.resolve({"scheme": "hybrid"})
    with pytest.raises(ModelError, match=r"^the hybrid model at 1e\+09 packets/s") as e:
        curve("hybrid", params, [1e5, 1e9])
    assert isinstance(e.value, irqlab.IrqlabError) and isinstance(e.value, ArithmeticError)


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (RuntimeError("SUPERLU_MALLOC fails in intCalloc()"), "(RuntimeError: SUPERLU_MALLOC"),
        (MemoryError(), "(MemoryError)"),
        ("warning", "(RuntimeWarning: Matrix is exactly singular)"),
        ("nan", "(its figures are undefined"),
    ],
    ids=["superlu", "memory", "warning", "nan"],
)
def test_a_solver_failure_never_exits_0(monkeypatch, failure, said):
    """A sparse solver that fails (SuperLU out of memory), warns (a singular matrix) or
    returns NaN: the command fails in one line naming the model and the rate."""
    # the module (the package exports its function under the same name)
    normal_module = importlib.import_module("irqlab.analytic.normal")

    def broken(*args):
        if isinstance(failure, BaseException):
            raise failure
        if failure == "warning":
            warnings.warn("Matrix is exactly singular", RuntimeWarning, stacklevel=1)
        return normal_module.Normal(*([float("nan")] * 12))

    monkeypatch.setattr(normal_module, "_chain", broken)
    r = CliRunner().invoke(main, ["analytic", "irq", "--rates", "1e4,2e4"])
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("irqlab: error: the irq model at 10000 packets/s cannot be solved")
    assert said in lines[0], lines[0]
