"""Closed-form and numerical models of the receive path, for comparison with simulation.

The models of Salah, El-Badawi and Haidari (2007), "Performance analysis and comparison of
interrupt-handling schemes in gigabit networks", §3 and §5.3:

* ``ideal`` — M/M/1/B (:func:`mm1b`, §3.1);
* normal interruption (:func:`normal`, Eqs. 1-6) and its cliff point (:func:`cliff_point`,
  Eq. 13);
* interrupt disable-enable (:func:`disable_enable`, the Markov chain of Fig. 2, §3.3);
* pure polling (:func:`pure_polling`, Eqs. 9-12) on an M/D/1/B queue (:func:`md1b`);
* the hybrid of disable-enable and pure polling (:func:`hybrid`, §5.3);
* :func:`curve`, a table of one scheme's figures over arrival rates for a scenario.

The RT latency bound of Beifuß et al. (2016), Eqs. (1) and (2) (:func:`t_max`, :func:`b_max`,
module :mod:`irqlab.analytic.beifuss`, with the model of their Fig. 3 as a scenario).

And one model of a host beyond the paper: an application on the core that does protocol
processing, a two-stage tandem under preemptive priority with a ring and a socket
(:func:`tandem`, module :mod:`irqlab.analytic.tandem`).

And the goodput model of Chang et al. (2007), §III: protocol processing, ksoftirqd and an
application on one CPU at a constant rate (module :mod:`irqlab.analytic.chang`).

Only numpy, scipy and pandas are used: the models do not need the simulator.
"""

from irqlab.analytic.beifuss import b_max, t_max
from irqlab.analytic.curves import SCHEMES_WITH_MODEL, curve, model_rates
from irqlab.analytic.disable_enable import (
    DisableEnable,
    disable_enable,
    p01_compact,
    throughput_compact,
)
from irqlab.analytic.disable_enable import distribution as disable_enable_distribution
from irqlab.analytic.hybrid import SWITCH_FRACTION, Hybrid, hybrid, switch_point
from irqlab.analytic.md1b import MD1B, md1b, md1b_p0_printed, md1b_sojourn_printed
from irqlab.analytic.md1b import distribution as md1b_distribution
from irqlab.analytic.mm1b import MM1B, mm1b
from irqlab.analytic.normal import Normal, cliff_point, normal
from irqlab.analytic.polling import (
    Polling,
    effective_rate,
    effective_rate_printed,
    pure_polling,
    u_ip_printed,
)
from irqlab.analytic.tandem import TandemResult, tandem

__all__ = [
    "MD1B",
    "MM1B",
    "SCHEMES_WITH_MODEL",
    "SWITCH_FRACTION",
    "DisableEnable",
    "Hybrid",
    "Normal",
    "Polling",
    "TandemResult",
    "b_max",
    "cliff_point",
    "curve",
    "disable_enable",
    "disable_enable_distribution",
    "effective_rate",
    "effective_rate_printed",
    "hybrid",
    "md1b",
    "md1b_distribution",
    "md1b_p0_printed",
    "md1b_sojourn_printed",
    "mm1b",
    "model_rates",
    "normal",
    "p01_compact",
    "pure_polling",
    "switch_point",
    "t_max",
    "tandem",
    "throughput_compact",
    "u_ip_printed",
]
