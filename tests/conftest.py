"""Shared helpers for irqlab's tests."""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from scipy import stats

# In CI, property tests explore a fixed set of examples so that a run can be reproduced.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The Ctrl-C tests press Ctrl-C as a terminal does, on an irqlab whose SIGINT has the default
# disposition. A shell starts a background job (`nohup pytest &`, some CI runners) with SIGINT
# ignored, and an ignored signal stays ignored across exec, so every irqlab the tests start
# would ignore it too (and rightly: a background job is not to die of the terminal's Ctrl-C).
# A handler is not inherited: with one here, the children get the default disposition back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Salah et al. (2007), section 4: 1/r = 3.73 us, 1/mu = 5.34 us, B = 1024.
SALAH = {
    "platform.irq_ns": 3730,
    "platform.irq_dist": "exponential",
    "platform.proto_ns": 5340,
    "platform.proto_dist": "exponential",
    "nic.ring_descriptors": 1024,
}


def salah_cliff_pps() -> float:
    """Salah Eq. 13: the saturation (cliff) point of normal interruption."""
    r, mu = 1e9 / SALAH["platform.irq_ns"], 1e9 / SALAH["platform.proto_ns"]
    return r / 2 * (math.sqrt(1 + 4 * mu / r) - 1)


def confidence_interval(samples: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and Student-t half-width of a set of replications."""
    x = np.asarray(list(samples), dtype=float)
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean()), float(half)


def reproduce_quick(study: str, folder: Path, expect: str) -> Path:
    """Runs `irqlab reproduce STUDY --quick` into ``folder`` through the CLI; checks it exits 0
    and prints ``expect``."""
    from click.testing import CliRunner

    from irqlab.cli import main

    r = CliRunner().invoke(
        main, ["reproduce", study, "--quick", "--out", str(folder), "--no-progress"]
    )
    assert r.exit_code == 0, r.output
    assert expect in r.output
    return folder


@pytest.fixture(scope="session")
def emmerich2015_quick(tmp_path_factory) -> Path:
    """`irqlab reproduce emmerich2015 --quick`, run once per session (about 10 s) for the tests
    that read it: do not change its files."""
    return reproduce_quick(
        "emmerich2015", tmp_path_factory.mktemp("emmerich2015"), "| load (Mpps) | policy |"
    )


def is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="session")
def beifuss2016_quick(tmp_path_factory) -> Path:
    """`irqlab reproduce beifuss2016 --quick`, run once per session (about 30 s) for the tests
    that read it: do not change its files."""
    return reproduce_quick(
        "beifuss2016", tmp_path_factory.mktemp("beifuss2016"), "| quantity | paper | irqlab |"
    )


def assert_conserved(rep: dict) -> None:
    """The receive path's packets and every CPU picosecond of the window are accounted for."""
    p = rep["packets"]
    left = p["offered"] + p["in_flight_at_warmup"]
    right = p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["in_flight"]
    assert left == right, p
    c = rep["cpu_ps"]
    assert (
        c["irq"] + c["softirq"] + c["ksoftirqd"] + c["app"] + c["busy_poll"] + c["idle"]
        == c["measured"]
    ), c
    share = rep["cpu"]
    assert abs(share["busy"] + share["idle"] - 1) < 1e-12
    assert rep["counts"]["polled_packets"] >= 0


#: A sysfs folder: sysfs refuses new files and folders to every user, root included.
SYSFS_FOLDER = Path("/sys/kernel")


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder this user cannot create anything in: one without write permission, or, for root
    (whom permission bits do not bind), a sysfs folder."""
    if getattr(os, "geteuid", lambda: 1)() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        yield ro
        ro.chmod(0o700)
    elif SYSFS_FOLDER.is_dir():
        yield SYSFS_FOLDER
    else:
        pytest.skip(
            "root is not bound by permission bits, and this system has no sysfs folder to "
            "stand for a read-only one: run the tests as a normal user"
        )
