"""Running scenarios: the Python face of the core's one call.

A run can be stopped at any time by a signal: Ctrl-C (SIGINT) raises ``KeyboardInterrupt``
from :func:`run` within about a second, however long the run would have taken (the core looks
for signals between slices of the run, every 50 ms of wall time). Nothing is reported then.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from typing import Any

from irqlab import core
from irqlab.core import PacketTrace, PolicyMaker, Report, ResolvedScenario
from irqlab.errors import ReplayWarning
from irqlab.ops.policies import hook_errors, resolve_policy
from irqlab.scenario import Overrides, built, load_scenario, override_items

#: A run of more packets than this is large enough to be said so before it starts (``irqlab
#: run`` and ``irqlab check``): a minute or more of wall time (docs/scenario.md, "Long runs").
LARGE_RUN_PACKETS = 1e9
#: Packets simulated per second of wall time, slow and fast: the range of the benchmarks' rows
#: (benches/README.md: 12-24 M/s on one machine core), for telling how long a large run takes.
PACKETS_PER_S = (10e6, 25e6)

#: What :func:`run` takes as its scenario.
ScenarioLike = str | os.PathLike[str] | Mapping[str, Any] | ResolvedScenario | None


def run(
    scenario: ScenarioLike = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
    policy: Any = None,
) -> Report:
    """Runs one scenario and returns its report as a nested dict.

    ``scenario`` is a TOML path, a nested dict shaped like the file, a flat dict of dotted
    keys, or a scenario built already (:func:`irqlab.scenario.build`: it runs as it is, not
    built again); ``overrides`` are dotted keys applied on top (a dict, ``(key, value)``
    pairs or ``"key=value"`` strings); ``seed`` overrides ``run.seed``. ``policy`` runs the
    scenario with a moderation policy written in Python (``driver.moderation = "python"``;
    :mod:`irqlab.policy`): a class, a callable making one, or a policy object. Raises
    :class:`irqlab.ConfigError` (naming the key or argument) before anything runs if the
    scenario is invalid, ``KeyboardInterrupt`` within about a second of Ctrl-C, and what a
    Python policy raised, with its traceback; issues a :class:`irqlab.ConfigWarning` for each
    setting that has no effect in it, and a :class:`irqlab.errors.ReplayWarning` if a replayed
    capture could not be read to the run's end. The report is bit-identical for the same
    scenario and seed.
    """
    ready, make = _ready(scenario, overrides, seed, policy)
    with hook_errors():
        report = core.run(ready, make)
    return _replayed(report)


def run_traced(
    scenario: ScenarioLike = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
    policy: Any = None,
) -> tuple[Report, PacketTrace]:
    """Like :func:`run`, plus every packet's arrival and completion time in picoseconds.

    The trace holds ``arrival_ps``, ``accepted`` (False if the ring was full), ``done_ps``
    (None if dropped or still in flight), ``size_bytes`` (the frame), ``flow``, ``queue``
    (the vector RSS steered it to) and ``class`` (its traffic class's index) per packet, in
    arrival order. Memory grows with the run:
    for tests and small studies.
    """
    ready, make = _ready(scenario, overrides, seed, policy)
    with hook_errors():
        report, trace = core.run_traced(ready, make)
    return _replayed(report), trace


def _ready(
    scenario: ScenarioLike, overrides: Overrides, seed: int | None, policy: Any
) -> tuple[ResolvedScenario, PolicyMaker | None]:
    """The scenario of a run, built once (its warnings issued at the caller of the run), and
    the maker of its Python policy. A scenario built already runs as it is, unless overrides,
    a seed or a policy change it: then its params are the base of a new one."""
    if isinstance(scenario, ResolvedScenario):
        if seed is None and not override_items(overrides):
            params, make = resolve_policy(scenario.params, policy)
            if policy is None or params == scenario.params:
                return scenario, make
        scenario = scenario.params
    params, make = resolve_policy(load_scenario(scenario, overrides, seed=seed), policy)
    # built ← _ready ← run ← its caller
    return built(params, stacklevel=3), make


def _replayed(report: Report) -> Report:
    """``report``, with a :class:`ReplayWarning` if its replay stopped before the run's end."""
    replay = report.get("replay")
    if replay is not None and (error := replay["error"]):
        warnings.warn(ReplayWarning(f"traffic.pcap: {error}"), stacklevel=3)
    return report


def simulated_seconds(params: Mapping[str, Any]) -> float:
    """The simulated time of a resolved scenario's run, s: warm-up and measured window.

    >>> simulated_seconds({"run.warmup_ms": 10, "run.duration_ms": 90})
    0.1
    """
    return float((params["run.warmup_ms"] + params["run.duration_ms"]) / 1e3)


def expected_packets(params: Mapping[str, Any]) -> float:
    """Packets a resolved scenario (:func:`irqlab.scenario.resolve`) offers from time zero to
    its end: ``traffic.rate_pps`` × (warm-up + duration). ON/OFF traffic is calibrated to that
    mean rate, so the estimate holds for every ``traffic.kind``.

    >>> expected_packets({"traffic.rate_pps": 1e5, "run.warmup_ms": 10, "run.duration_ms": 90})
    10000.0
    """
    return float(params["traffic.rate_pps"] * simulated_seconds(params))


def _short(x: float) -> str:
    """Two significant digits, exponents written short: ``"24"``, ``"1.5"``, ``"3.6e10"``,
    ``"1,500"`` (no exponent below 10^4)."""
    if x >= 100:
        return f"{x:,.0f}" if x < 1e4 else re.sub(r"e\+0*", "e", f"{x:.2g}")
    return f"{x:.2g}"


def _wall(low_s: float, high_s: float) -> str:
    """A range of wall times in one unit: ``"50-67 s"``, ``"24-60 min"``, ``"2.1-2.8 days"``."""
    for unit, per in (("s", 1), ("min", 60), ("h", 3600)):
        if high_s < 100 * per:
            return f"{_short(low_s / per)}-{_short(high_s / per)} {unit}"
    return f"{_short(low_s / 86400)}-{_short(high_s / 86400)} days"


def large_run_warning(params: Mapping[str, Any]) -> str | None:
    """One line saying how large a resolved scenario's run is, if it comes to more than
    :data:`LARGE_RUN_PACKETS` packets; else None. An hour of 10 Mpps gives
    ``about 3.6e10 packets to simulate (10,000,000 pps for 3,600 s): 24-60 min at 10-25 M
    packets/s; Ctrl-C stops the run``.
    """
    packets = expected_packets(params)
    if packets <= LARGE_RUN_PACKETS:
        return None
    slow, fast = PACKETS_PER_S
    seconds = simulated_seconds(params)
    rate = params["traffic.rate_pps"]
    wall = _wall(packets / fast, packets / slow)
    speed = f"{slow / 1e6:.0f}-{fast / 1e6:.0f} M packets/s"
    return (
        f"about {_short(packets)} packets to simulate ({rate:,.0f} pps for {seconds:,.6g} s): "
        f"{wall} at {speed}; Ctrl-C stops the run"
    )
