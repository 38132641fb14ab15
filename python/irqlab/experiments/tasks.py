"""The work a sweep sends to its workers: one replication of one point, or one warm-up pilot.

Tasks are plain dicts and results plain dicts, so any executor can carry them. A task holds
the fully resolved scenario, so its result depends on nothing but the task.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irqlab import core
from irqlab.core import Series
from irqlab.experiments.statistics import mser
from irqlab.ops.policies import hook_errors, resolve_policy
from irqlab.report.flat import encode_list, flatten_report

#: MSER-5 observes batches of this many time buckets.
MSER_BATCH = 5
#: Time buckets of a warm-up pilot: about this many delivered packets per bucket …
PILOT_PACKETS_PER_BUCKET = 20
#: … within these bounds.
PILOT_BUCKETS = (100, 20_000)


#: What a report echoes of its scenario.
_ECHOED = ("scenario", "seed", "replication")


def run_replication(task: dict[str, Any]) -> dict[str, Any]:
    """Runs one replication; returns its row: metrics flattened with dots, then parameters.

    The row's parameters are the core's echo of what actually ran (``scenario`` in the
    report, numbered keys such as ``app.0.core`` included), so the row can be re-run alone.
    Every value is a scalar: lists (``nic.irq_affinity``, ``per_core.0.vectors``) are stored
    as their canonical text, ``"[0, 1]"``.
    """
    params, make = resolve_policy(task["params"])
    with hook_errors():
        report = core.run(params, make)
    # the metrics, without the scenario's echo (and seed and replication: run.seed and
    # run.replication among the parameters)
    row = flatten_report({k: v for k, v in report.items() if k not in _ECHOED})
    for key, value in report["scenario"].items():
        if isinstance(value, list | tuple):
            value = encode_list(value)
        if key in row and row[key] != value:
            raise AssertionError(f"report metric {key!r} clashes with the parameter")
        row[key] = value
    row.update(task["extra"])
    return row


def pilot_buckets(params: dict[str, Any]) -> int:
    """How many time buckets a pilot records: enough packets per bucket to see a mean."""
    seconds = params["run.duration_ms"] / 1e3
    expected = params["traffic.rate_pps"] * seconds
    low, high = PILOT_BUCKETS
    return int(min(high, max(low, expected // PILOT_PACKETS_PER_BUCKET)))


def batch_latency(series: Series, batch: int = MSER_BATCH) -> np.ndarray:
    """Mean latency of the packets delivered in each batch of ``batch`` buckets.

    Batches in which nothing was delivered take the previous batch's value (the first ones,
    the first non-empty value), so the sequence is finite and its shape preserved.
    """
    delivered = np.asarray(series["delivered"], dtype=float)
    lat = np.asarray(series["latency_sum_us"], dtype=float)
    k = len(delivered) // batch
    d = delivered[: k * batch].reshape(k, batch).sum(axis=1)
    s = lat[: k * batch].reshape(k, batch).sum(axis=1)
    out = np.full(k, np.nan)
    np.divide(s, d, out=out, where=d > 0)
    valid = np.flatnonzero(~np.isnan(out))
    if len(valid) == 0:
        return np.zeros(k)
    # forward-fill, then back-fill the leading gap
    idx = np.where(~np.isnan(out), np.arange(k), 0)
    np.maximum.accumulate(idx, out=idx)
    out = out[idx]
    out[: valid[0]] = out[valid[0]]
    return out


def run_pilot(task: dict[str, Any]) -> dict[str, Any]:
    """Finds a point's warm-up by MSER-5 on a pilot run of its replication 0.

    The pilot starts empty, measures from time zero for ``run.duration_ms`` and records the
    mean latency per time bucket; MSER-5 picks the truncation that minimises the marginal
    standard error of the remaining batch means (White 1997; White, Cobb & Spratt 2000), at
    most half the run. The warm-up is the end of the truncated batches, in ms.
    """
    params = dict(task["params"])
    params["run.warmup_ms"] = 0.0
    params["run.replication"] = 0
    buckets = pilot_buckets(params)
    params, make = resolve_policy(params)
    with hook_errors():
        _, series = core.run_series(params, buckets, make)
    # MSER-5 on packet-weighted batch means of 5 buckets: MSER over those means, batch 1.
    z = batch_latency(series, MSER_BATCH)
    result = mser(z, batch=1)
    bucket_ms = series["bucket_ps"] / 1e9
    warmup_ms = result.truncate * MSER_BATCH * bucket_ms
    return {
        "point_id": task["point_id"],
        "warmup_ms": float(math.ceil(warmup_ms * 1e6) / 1e6),  # whole ns, in ms
        "reliable": bool(result.reliable),
        "batches": int(result.batches),
    }
