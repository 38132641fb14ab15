"""Running scenarios: the Python face of the core's one call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from irqlab import _irqlab
from irqlab.scenario import load_scenario


def run(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
    *,
    seed: int | None = None,
) -> dict[str, Any]:
    """Runs one scenario and returns its report as a nested dict.

    ``scenario`` is a TOML path, a nested dict shaped like the file, or a flat dict of dotted
    keys; ``overrides`` are dotted keys applied on top; ``seed`` overrides ``run.seed``.
    Raises :class:`irqlab.ConfigError` (naming the key) before anything runs if the scenario is
    invalid. The report is bit-identical for the same scenario and seed.
    """
    params = load_scenario(scenario, overrides, seed=seed)
    return _irqlab.run(params)


def run_traced(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
    *,
    seed: int | None = None,
) -> tuple[dict[str, Any], dict[str, list]]:
    """Like :func:`run`, plus every packet's arrival and completion time in picoseconds.

    The trace holds ``arrival_ps``, ``accepted`` (False if the ring was full) and ``done_ps``
    (None if dropped or still in flight) per packet, in arrival order. Memory grows with the
    run: for tests and small studies.
    """
    params = load_scenario(scenario, overrides, seed=seed)
    return _irqlab.run_traced(params)
