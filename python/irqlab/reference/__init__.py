"""A pure-Python reference simulator of irqlab's host receive-path model: a test oracle.

This package re-implements, slowly and plainly, exactly the model of the Rust core
(``crates/irqlab-core``): the same random streams, the same integer-picosecond time, the same
event order and the same decisions of the NIC interrupt logic, the CPU priority server, NAPI,
``net_rx_action``, ``handle_softirqs`` and ksoftirqd. It mirrors the core decision by decision
(function names follow ``host/``, ``nic/``, ``cpu.rs`` and ``kernel.rs``), so that for any
scenario :func:`simulate` gives the same per-packet outcomes, to the picosecond, and the same
report as :func:`irqlab.run_traced`. It exists to be read and to check the fast engine against;
it is far too slow for studies (dozens of times slower than the core).

Only the configuration is taken from the core: :func:`irqlab.resolve` validates a scenario and
fills in the defaults. Everything from there on (unit conversion, the random numbers, the run,
the report) is computed here.

    >>> from irqlab import reference, run_traced
    >>> scenario = {"scheme": "napi", "run.duration_ms": 1.0, "run.warmup_ms": 0.2}
    >>> reference.simulate(scenario) == run_traced(scenario)
    True

Its parts, as the core's: :mod:`~irqlab.reference.units` (integer time and rounding),
:mod:`~irqlab.reference.rng` (the random streams), :mod:`~irqlab.reference.config` (the
scenario in integer time), :mod:`~irqlab.reference.parts` (traffic, NIC, CPU, kernel),
:mod:`~irqlab.reference.metrics` (the report) and :mod:`~irqlab.reference.sim` (one run).
"""

from __future__ import annotations

from irqlab.reference import config, metrics, parts, rng, sim, units
from irqlab.reference.config import *  # noqa: F403
from irqlab.reference.metrics import *  # noqa: F403
from irqlab.reference.parts import *  # noqa: F403
from irqlab.reference.rng import *  # noqa: F403
from irqlab.reference.sim import *  # noqa: F403
from irqlab.reference.units import *  # noqa: F403

__all__: list[str] = []
__all__ += units.__all__
__all__ += rng.__all__
__all__ += config.__all__
__all__ += parts.__all__
__all__ += metrics.__all__
__all__ += sim.__all__
