"""Statistics for sweeps: confidence intervals, relative precision, stopping, warm-up deletion.

A sweep runs each simulation point several times with independent seeds (replications). The
replications of one point are independent, identically distributed samples of each metric, so
the classic Student-t interval applies to their mean:

- :func:`t_halfwidth` is the half-width ``t_{(1+c)/2, n-1} · s / √n`` of that interval;
- :func:`summarize` turns the runs table (one row per point × replication) into one row per
  point with, for every metric ``M``, its mean ``M``, sample standard deviation ``M.std``,
  half-width ``M.ci95`` (see :func:`ci_column`) and relative precision ``M.rel`` =
  half-width / |mean|;
- :func:`precision_met` and :func:`replications_needed` drive sequential stopping: keep adding
  replications until the half-width is at most ``relative`` · |mean|. The estimate
  ``n* = ⌈n · (hw / (relative · |mean|))²⌉`` assumes the standard deviation and the t quantile
  stay roughly as they are, which is why it is re-evaluated after each batch of replications.

Within one run, the first part of a time series is biased by the initial (empty) state.
:func:`mser` finds how much of it to delete with the Marginal Standard Error Rule: K. P. White,
"An effective truncation heuristic for bias reduction in simulation output", Simulation 69(6),
1997. Applied to batch means of 5 observations it is MSER-5 (K. P. White, M. J. Cobb and
S. C. Spratt, "A comparison of five steady-state truncation heuristics for simulation",
Proceedings of the 2000 Winter Simulation Conference).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = [
    "MserResult",
    "ci_column",
    "mser",
    "precision_met",
    "replications_needed",
    "summarize",
    "t_halfwidth",
]

# Columns of the runs table that identify a row rather than measure something.
_ID_COLUMNS = ("point", "replication")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def _finite_values(values: Any) -> np.ndarray:
    """``values`` as a flat float64 array without its NaNs (``None`` counts as NaN)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    return x[~np.isnan(x)]


def _mean_halfwidth(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """Mean and Student-t half-width of NaN-free ``x``; NaN for what ``n`` cannot support."""
    n = x.size
    if n == 0:
        return math.nan, math.nan
    if np.all(x == x[0]):
        # Exact: a computed mean of equal values can differ from them in the last bit.
        return float(x[0]), (0.0 if n >= 2 else math.nan)
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan
    s = float(x.std(ddof=1))
    return mean, float(_st.t.ppf((1.0 + confidence) / 2.0, n - 1)) * s / math.sqrt(n)


def t_halfwidth(values: Any, confidence: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval for the mean of ``values``.

    ``t_{(1+c)/2, n-1} · s / √n`` with ``s`` the sample standard deviation (ddof=1). NaNs are
    ignored; fewer than 2 values give ``nan``; all-equal values give exactly ``0.0``.
    """
    _check_confidence(confidence)
    return _mean_halfwidth(_finite_values(values), confidence)[1]


def ci_column(metric: str, confidence: float = 0.95) -> str:
    """Name of the half-width column of ``metric``: ``M.ci95`` at 0.95, ``M.ci99`` at 0.99."""
    return f"{metric}.ci{round(confidence * 100)}"


def _default_metrics(runs: pd.DataFrame, params: Sequence[str]) -> list[str]:
    """Numeric, non-boolean columns that are neither identifiers nor parameters."""
    skip = {*_ID_COLUMNS, *params}
    return [
        c
        for c in runs.columns
        if c not in skip
        and pd.api.types.is_numeric_dtype(runs[c])
        and not pd.api.types.is_bool_dtype(runs[c])
    ]


def _as_float(column: pd.Series) -> np.ndarray:
    """A metric column as float64, ``None``/``NA`` becoming NaN (integers average to floats)."""
    if not pd.api.types.is_numeric_dtype(column):
        column = pd.to_numeric(column, errors="raise")
    values: np.ndarray = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return values


def _reduce(ufunc: np.ufunc, a: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per-group reduction of the rows of ``a``, groups being the runs beginning at ``starts``."""
    if starts.size == 0:
        return np.zeros((0, a.shape[1]), dtype=np.float64)
    return ufunc.reduceat(a, starts, axis=0)


def summarize(
    runs: pd.DataFrame,
    params: Sequence[str],
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per point: its parameters and, per metric, mean, std, half-width, precision.

    ``runs`` has one row per (point, replication) and a ``point`` column. The result is sorted
    by ``point`` and has the columns ``point``, ``*params`` (taken from the point's first row),
    ``point_id`` (if ``runs`` has it), ``n`` (rows of the point), then for each metric ``M``:
    ``M`` (mean of the non-NaN values), ``M.std`` (ddof=1, NaN below 2 values),
    ``ci_column(M, confidence)`` (:func:`t_halfwidth`) and ``M.rel`` (half-width / |mean|,
    NaN when the mean is 0 or NaN).

    ``metrics`` defaults to every numeric, non-boolean column that is not ``point``,
    ``replication`` or a parameter; pass it explicitly when ``runs`` also holds numeric
    parameter columns that are not in ``params`` (``run.seed``, for instance).

    All points and metrics are reduced at once: rows are sorted by point and each statistic is
    one ``reduceat`` over the whole (rows × metrics) matrix.
    """
    _check_confidence(confidence)
    params = list(params)
    metric_names = list(metrics) if metrics is not None else _default_metrics(runs, params)
    missing = [c for c in ["point", *params, *metric_names] if c not in runs.columns]
    if missing:
        raise KeyError(f"summarize: runs has no column(s) {missing}")
    overlap = sorted(set(params) & set(metric_names))
    if overlap:
        raise ValueError(f"summarize: column(s) {overlap} cannot be both parameter and metric")

    point = runs["point"].to_numpy()
    order = np.argsort(point, kind="stable")
    sorted_points = point[order]
    is_start = np.ones(sorted_points.size, dtype=bool)
    is_start[1:] = sorted_points[1:] != sorted_points[:-1]
    starts = np.flatnonzero(is_start)
    sizes = np.diff(np.append(starts, sorted_points.size))
    first = order[starts]  # positional index of each point's first row

    if metric_names:
        x = np.column_stack([_as_float(runs[m]) for m in metric_names])[order]
    else:
        x = np.zeros((len(runs), 0), dtype=np.float64)
    present = ~np.isnan(x)

    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        count = _reduce(np.add, present.astype(np.float64), starts)
        total = _reduce(np.add, np.where(present, x, 0.0), starts)
        mean = np.where(count > 0, total / count, np.nan)
        # Two passes (deviations from the group mean) keep the variance accurate.
        dev = np.where(present, x - np.repeat(mean, sizes, axis=0), 0.0)
        ss = _reduce(np.add, dev * dev, starts)
        std = np.where(count >= 2, np.sqrt(ss / (count - 1.0)), np.nan)
        lo = _reduce(np.minimum, np.where(present, x, np.inf), starts)
        hi = _reduce(np.maximum, np.where(present, x, -np.inf), starts)
        equal = (count > 0) & (lo == hi)
        mean = np.where(equal, lo, mean)
        std = np.where(equal & (count >= 2), 0.0, std)

        tq = np.full(count.shape, np.nan)
        enough = count >= 2
        # Few distinct sample sizes: one quantile each rather than one per (point, metric).
        sizes_seen, which = np.unique(count[enough], return_inverse=True)
        tq[enough] = _st.t.ppf((1.0 + confidence) / 2.0, sizes_seen - 1.0)[which]
        hw = np.where(enough, tq * std / np.sqrt(np.where(enough, count, 1.0)), np.nan)
        rel = np.where((mean != 0) & ~np.isnan(mean), hw / np.abs(mean), np.nan)

    columns: dict[str, Any] = {"point": sorted_points[starts]}
    for p in params:
        columns[p] = runs[p].iloc[first].reset_index(drop=True)
    if "point_id" in runs.columns:
        columns["point_id"] = runs["point_id"].iloc[first].reset_index(drop=True)
    columns["n"] = sizes.astype(np.int64)
    for j, m in enumerate(metric_names):
        columns[m] = mean[:, j]
        columns[f"{m}.std"] = std[:, j]
        columns[ci_column(m, confidence)] = hw[:, j]
        columns[f"{m}.rel"] = rel[:, j]
    return pd.DataFrame(columns)


def replications_needed(values: Any, relative: float, confidence: float = 0.95) -> int:
    """Total replications for the half-width to reach ``relative`` · |mean| (at least ``n``).

    ``n* = ⌈n · (hw / (relative · |mean|))²⌉`` from the current ``n`` values (NaNs ignored):
    the half-width shrinks like ``1/√n`` if the standard deviation stays put. Returns ``n``
    when the precision is already met (including hw = mean = 0). When it cannot be reached or
    estimated (mean 0 with hw > 0, fewer than 2 values) it returns ``sys.maxsize``: callers
    cap the result at their own budget.
    """
    _check_confidence(confidence)
    if not relative > 0:
        raise ValueError(f"relative must be > 0, got {relative!r}")
    x = _finite_values(values)
    n = x.size
    mean, hw = _mean_halfwidth(x, confidence)
    if math.isnan(mean) or math.isnan(hw):
        return sys.maxsize
    if hw == 0.0:
        return n
    if mean == 0.0:
        return sys.maxsize
    target = n * (hw / (relative * abs(mean))) ** 2
    if not math.isfinite(target) or target >= sys.maxsize:
        return sys.maxsize
    # Rounding first keeps 160.00000000000003 from becoming 161.
    return max(n, math.ceil(round(target, 9)))


def precision_met(values: Any, relative: float, confidence: float = 0.95) -> bool:
    """Whether ``n ≥ 2`` and the half-width is at most ``relative`` · |mean| (NaNs ignored)."""
    _check_confidence(confidence)
    x = _finite_values(values)
    if x.size < 2:
        return False
    mean, hw = _mean_halfwidth(x, confidence)
    return bool(hw <= relative * abs(mean))


@dataclass(frozen=True)
class MserResult:
    """Outcome of :func:`mser`.

    ``truncate`` raw observations (``d * batch``) should be deleted from the start of the
    series; ``batches`` is the number ``k`` of batch means; ``d`` the optimal truncation in
    batches; ``statistic[d]`` is MSER(d) for d = 0..k-1 (NaN for d ≥ k-1, where it is
    undefined). ``reliable`` is False when the minimum lies at the end of the searched first
    half: the run is then too short to trust the truncation; run longer.
    """

    truncate: int
    batches: int
    d: int
    statistic: np.ndarray
    reliable: bool


def mser(series: Any, batch: int = 5) -> MserResult:
    """Warm-up to delete from ``series`` by the Marginal Standard Error Rule (MSER-``batch``).

    The series is cut into ``k = len(series) // batch`` batch means ``Z_1..Z_k`` (an incomplete
    trailing batch is dropped). Deleting the first ``d`` of them leaves ``k - d`` means with
    mean ``Z̄(d)``; the rule picks the ``d`` minimising

        MSER(d) = (1 / (k - d)²) · Σ_{j=d+1..k} (Z_j - Z̄(d))²,

    i.e. the squared standard error of the truncated mean, over ``d = 0..k//2`` (ties go to the
    smaller ``d``). Deleting biased early data lowers the sum; deleting good data raises the
    ``1/(k-d)²`` factor. All ``d`` are evaluated in O(k) from sums taken from the end.

    ``series`` must be finite (drop or fill empty time buckets first) and hold at least two
    batches; ``batch`` must be ≥ 1.
    """
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"mser: batch must be an integer >= 1, got {batch!r}")
    x = np.asarray(series, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("mser: series must be finite")
    k = x.size // batch
    if k < 2:
        raise ValueError(
            f"mser: need at least 2 batches of {batch} observations, got {x.size} observations"
        )
    z = x[: k * batch].reshape(k, batch).mean(axis=1)
    z = z - z.mean()  # shifting does not change MSER(d); centring limits cancellation below
    # tail_sum[d] = Σ_{j≥d} z_j and tail_sq[d] = Σ_{j≥d} z_j² (0-based), for d = 0..k-1.
    tail_sum = np.cumsum(z[::-1])[::-1]
    tail_sq = np.cumsum((z * z)[::-1])[::-1]
    m = np.arange(k, 0, -1, dtype=np.float64)  # k - d
    sse = np.maximum(tail_sq - tail_sum * tail_sum / m, 0.0)
    statistic = sse / (m * m)
    statistic[k - 1 :] = np.nan  # one batch left: no spread to measure
    last = min(k // 2, k - 2)
    d = int(np.argmin(statistic[: last + 1]))
    return MserResult(
        truncate=d * batch,
        batches=k,
        d=d,
        statistic=statistic,
        reliable=d < k // 2,
    )
