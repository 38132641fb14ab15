"""Tuning: the setting an operator can change that meets every SLO at the least cost.

``irqlab tune`` (and :func:`tune`) answers the reverse of ``irqlab run``: given a scenario (the
load and the platform), service-level objectives such as ``latency_us.p99 <= 50``, and an
objective to minimise (``cpu.busy`` by default), it finds among the settings an operator
controls — the driver's moderation policy, the ITR, coalescing, software IRQ deferral, the
NAPI budget — the one that meets every SLO at the lowest objective, at the scenario's load or
at every load of a range.

"Meets" is a statistical decision. Every candidate runs with the same seeds (common random
numbers: the same arrivals and costs for every setting), replication after replication, in
rounds. After each round a candidate whose SLO interval lies wholly on the wrong side of a
target is eliminated; one that meets every SLO is *feasible*; a feasible or undecided candidate
whose objective is worse than the best feasible one's, by a paired interval that excludes zero,
is eliminated too. Replications go to the candidates still in the race, up to
``max_replications``. The decisions depend only on the runs' results, which depend only on the
seed: the same seed gives the same recommendation, with any executor.

This is racing (Maron & Moore's Hoeffding races; Birattari et al.'s F-Race): the search space
is a modest, discrete set of values operators actually type, each evaluation is noisy, and the
question is a constrained decision with a stated confidence. General optimisers (Optuna's TPE,
scikit-optimize's Gaussian processes) model a noisy objective but treat each evaluation as
final and have no notion of "meets the SLO at 95 %"; scipy's interval functions are used for
the decisions instead (:mod:`scipy.stats`, Student's *t*).

The package: :mod:`~irqlab.ops.tune.search` (SLOs, knobs, candidates, metrics),
:mod:`~irqlab.ops.tune.race` (:func:`tune` and the decisions), :mod:`~irqlab.ops.tune.runs` (the
finished runs, kept in the folder's journal so a tune resumes), :mod:`~irqlab.ops.tune.commands`
(what the operator types) and :mod:`~irqlab.ops.tune.result` (:class:`TuneResult` and the
folder's files).
"""

from __future__ import annotations

from irqlab.ops.tune.commands import commands
from irqlab.ops.tune.race import Candidate, tune
from irqlab.ops.tune.result import TuneResult, closest, pareto, summary_text, write_outputs
from irqlab.ops.tune.search import (
    DEFAULT_BUDGETS,
    DEFAULT_DEFER,
    DEFAULT_ITR_US,
    DEFAULT_OBJECTIVE,
    DEFAULT_POLICIES,
    EXAMPLE_METRICS,
    MAX_CANDIDATES,
    MAX_REPLICATIONS,
    MIN_REPLICATIONS,
    Slo,
    check_metrics,
    default_candidates,
    is_number,
    knob_candidates,
    label,
    parse_knob,
    parse_range,
)

__all__ = [
    "DEFAULT_BUDGETS",
    "DEFAULT_DEFER",
    "DEFAULT_ITR_US",
    "DEFAULT_OBJECTIVE",
    "DEFAULT_POLICIES",
    "EXAMPLE_METRICS",
    "MAX_CANDIDATES",
    "MAX_REPLICATIONS",
    "MIN_REPLICATIONS",
    "Candidate",
    "Slo",
    "TuneResult",
    "check_metrics",
    "closest",
    "commands",
    "default_candidates",
    "is_number",
    "knob_candidates",
    "label",
    "pareto",
    "parse_knob",
    "parse_range",
    "summary_text",
    "tune",
    "write_outputs",
]
