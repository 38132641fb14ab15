"""Experiments: sweeps of a base scenario over axes, with replications, statistics, and
resumable output.

A sweep file is TOML::

    [sweep]
    base = "napi.toml"          # a scenario file (relative to this file); [base] adds to it
    replications = 10           # per point (independent random streams, see below)
    seed = 1                    # the sweep seed: run.seed of every run
    warmup = "auto"             # MSER-5 on a pilot run; or a number of ms; default: the base's
    out = "results/napi"        # default output directory

    [sweep.precision]           # optional: add replications until every metric is precise
    metrics = ["latency_us.mean", "throughput_pps"]
    relative = 0.01             # CI half-width ≤ 1% of the mean …
    confidence = 0.95           # … at 95%
    max_replications = 100

    [base]                      # scenario keys, as in a scenario file
    run.duration_ms = 100

    [axes]                      # the points are the product of the axes, in this order
    scheme = ["irq", "napi"]
    "traffic.rate_pps" = { from = 20_000, to = 300_000, step = 20_000 }
    # or { from = 1e4, to = 1e6, num = 13, log = true }
    "nic.irq_affinity" = [[0, 1], [1, 1]]   # a list-valued key: a list of lists
    "app.0.cost_ns" = [500, 1000]           # a field of a numbered entry ([[app]])

Replication ``r`` of every point runs with ``run.seed`` = the sweep seed and
``run.replication`` = ``r``: the core derives its random streams from the pair, so
replications never overlap, and replication ``r`` of every scheme and load sees the same
arrival stream (common random numbers).

A run's row is flat scalars: the report flattened with dots (``per_core.1.cpu.busy``,
:func:`irqlab.report.flatten_report`), then every parameter the core echoed, numbered keys
included (``app.0.core``). Lists (``nic.irq_affinity``, ``per_core.0.vectors``) are stored as
their canonical text ``"[0, 1]"``, which :func:`row_scenario` turns back into lists. The
columns of a table are those of its rows: a 4-core sweep has ``per_core.3.*``.

The package's modules:

- ``spec``: the sweep file parsed and checked (:func:`parse_sweep`, :class:`SweepSpec`);
- ``running``: :func:`sweep` and :func:`execute`, in rounds, resumable;
- ``tables``: the runs and summary tables, written and read back (:func:`load_results`,
  :func:`row_scenario`);
- ``tasks``: the work a worker does (one replication, one warm-up pilot);
- ``executors``: where the work runs (this process, a local pool, Dask);
- ``journal``: every finished run, committed as it completes (a sweep resumes from it, and a
  tune too);
- ``statistics``: confidence intervals, sequential stopping, MSER-5.
"""

from __future__ import annotations

from irqlab.experiments.running import execute, progress_bar, resolve_points, sweep
from irqlab.experiments.spec import (
    MAX_AXIS_VALUES,
    MAX_POINTS,
    MAX_REPLICATIONS,
    MAX_RUNS,
    Axis,
    Points,
    Precision,
    SweepSpec,
    entry_counts,
    is_parameter,
    metric_problem,
    metric_templates,
    parse_axes,
    parse_precision,
    parse_sweep,
    parse_warmup,
)
from irqlab.experiments.tables import (
    load_results,
    row_scenario,
    summary_table,
    table_columns,
    write_results,
)

__all__ = [
    "MAX_AXIS_VALUES",
    "MAX_POINTS",
    "MAX_REPLICATIONS",
    "MAX_RUNS",
    "Axis",
    "Points",
    "Precision",
    "SweepSpec",
    "entry_counts",
    "execute",
    "is_parameter",
    "load_results",
    "metric_problem",
    "metric_templates",
    "parse_axes",
    "parse_precision",
    "parse_sweep",
    "parse_warmup",
    "progress_bar",
    "resolve_points",
    "row_scenario",
    "summary_table",
    "sweep",
    "table_columns",
    "write_results",
]
