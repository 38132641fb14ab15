"""Running scenarios: the Python face of the core's one call."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from irqlab import _irqlab
from irqlab.scenario import Overrides, checked, load_scenario


def run(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
) -> dict[str, Any]:
    """Runs one scenario and returns its report as a nested dict.

    ``scenario`` is a TOML path, a nested dict shaped like the file, or a flat dict of dotted
    keys; ``overrides`` are dotted keys applied on top (a dict, ``(key, value)`` pairs or
    ``"key=value"`` strings); ``seed`` overrides ``run.seed``. Raises
    :class:`irqlab.ConfigError` (naming the key or argument) before anything runs if the
    scenario is invalid, and issues a :class:`irqlab.ConfigWarning` for each setting that has
    no effect in it. The report is bit-identical for the same scenario and seed.
    """
    params = load_scenario(scenario, overrides, seed=seed)
    checked(params, stacklevel=2)
    return _irqlab.run(params)


def run_traced(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
) -> tuple[dict[str, Any], dict[str, list]]:
    """Like :func:`run`, plus every packet's arrival and completion time in picoseconds.

    The trace holds ``arrival_ps``, ``accepted`` (False if the ring was full) and ``done_ps``
    (None if dropped or still in flight) per packet, in arrival order. Memory grows with the
    run: for tests and small studies.
    """
    params = load_scenario(scenario, overrides, seed=seed)
    checked(params, stacklevel=2)
    return _irqlab.run_traced(params)
