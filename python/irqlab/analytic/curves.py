"""Analytic curves for a scenario: the figures of Salah et al. (2007) for one scheme over a range
of arrival rates, as a table to set beside simulated sweeps.

The scenario's parameters map onto the models' as follows (times in the scenario's units):

    1/r      = platform.irq_ns                                        (ISR, §3.2)
    1/μ      = platform.proto_ns + platform.proto_ns_per_byte × size  (protocol processing)
    1/v      = platform.irq_ns + platform.mask_ns + 1/μ               (first packet, §3.3)
    B        = nic.ring_descriptors
    T_poll   = poll.period_us,  T_PollOH = platform.poll_timer_ns,  Q = poll.quota   (§3.4)
    switch   = hybrid.switch_pps (0: 0.95 × the cliff point of Eq. 13)              (§5.3)

with size = ``mean_size_bytes`` if given, else the scenario's mean frame size
(traffic.size_bytes, or the mean of its traffic.sizes table).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
from scipy.sparse.linalg import MatrixRankWarning

from irqlab.analytic.disable_enable import Method, disable_enable
from irqlab.analytic.hybrid import hybrid
from irqlab.analytic.limits import MAX_RATES, check_capacity
from irqlab.analytic.mm1b import mm1b
from irqlab.analytic.normal import NormalMethod, normal
from irqlab.analytic.polling import EmptyWait, pure_polling
from irqlab.errors import ConfigError, IrqlabError, ModelError

#: schemes that :func:`curve` can model; the two coalescing schemes only when they reduce to
#: normal interruption (nic.rx_frames <= 1, nic.rx_usecs = 0), as the paper notes (§4)
SCHEMES_WITH_MODEL = (
    "ideal",
    "irq",
    "disable-enable",
    "poll",
    "hybrid",
    "coalesce-count",
    "coalesce-time",
)

COLUMNS = (
    "scheme",
    "rate_pps",
    "throughput_pps",
    "cpu_availability",
    "latency_us",
    "loss_ratio",
    "rho",
)

#: one row's figures: throughput (pps), CPU availability, mean latency (s), loss, ρ
Figures = tuple[float, float, float, float, float]


def _models_listed() -> str:
    return (
        "ideal, irq, disable-enable, poll, hybrid, coalesce-count (only with nic.rx_frames <= 1)"
        " and coalesce-time (only with nic.rx_usecs = 0)"
    )


def _no_model(scheme: str, why: str = "") -> ConfigError:
    reason = f" ({why})" if why else ""
    return ConfigError(
        f"scheme {scheme!r} has no analytic model{reason}; schemes with a model: "
        + _models_listed(),
        key="scheme",
    )


def _get(params: Mapping[str, Any], key: str) -> Any:
    try:
        return params[key]
    except KeyError:
        raise ConfigError(f"{key}: missing from the scenario", key=key) from None


def model_rates(
    params: Mapping[str, Any], mean_size_bytes: float | None = None
) -> tuple[float, float, float]:
    """(μ, r, v) per second, the models' rates, from a resolved scenario's costs in ns."""
    if mean_size_bytes is not None:
        size = mean_size_bytes
    elif params.get("traffic.sizes", "fixed") == "fixed":
        size = float(_get(params, "traffic.size_bytes"))
    else:
        from irqlab.scenario import mean_frame_bytes

        size = mean_frame_bytes(dict(params))
    irq_ns = float(_get(params, "platform.irq_ns"))
    proto_ns = float(_get(params, "platform.proto_ns"))
    proto_ns += float(_get(params, "platform.proto_ns_per_byte")) * size
    if proto_ns <= 0:
        raise ConfigError(
            "platform.proto_ns: the models need a positive protocol cost per packet "
            f"(proto_ns + proto_ns_per_byte × size = {proto_ns:g} ns)",
            key="platform.proto_ns",
        )
    mu = 1e9 / proto_ns
    r = 1e9 / irq_ns if irq_ns > 0 else float("inf")
    first_ns = irq_ns + float(_get(params, "platform.mask_ns")) + proto_ns
    return mu, r, 1e9 / first_ns


def _polling(params: Mapping[str, Any]) -> tuple[float, float, int]:
    """(T_poll, T_PollOH, Q) in seconds, seconds, packets."""
    period = float(_get(params, "poll.period_us")) * 1e-6
    overhead = float(_get(params, "platform.poll_timer_ns")) * 1e-9
    quota = int(_get(params, "poll.quota"))
    if not 0 <= overhead < period:
        raise ConfigError(
            f"poll.period_us: the model needs a polling period ({period * 1e6:g} us) longer "
            f"than the poll overhead platform.poll_timer_ns ({overhead * 1e9:g} ns)",
            key="poll.period_us",
        )
    if quota < 1:
        raise ConfigError(f"poll.quota: must be at least 1, not {quota}", key="poll.quota")
    return period, overhead, quota


def _model(
    scheme: str,
    params: Mapping[str, Any],
    mean_size_bytes: float | None,
    empty_wait: EmptyWait,
    method: Method,
    normal_method: NormalMethod = "chain",
) -> Callable[[float], Figures]:
    """The function rate → figures of ``scheme``; raises ConfigError if there is no model."""
    if scheme == "coalesce-count" and int(_get(params, "nic.rx_frames")) > 1:
        raise _no_model(scheme, f"nic.rx_frames = {params['nic.rx_frames']} > 1")
    if scheme == "coalesce-time" and float(_get(params, "nic.rx_usecs")) != 0:
        raise _no_model(scheme, f"nic.rx_usecs = {params['nic.rx_usecs']} > 0")
    if scheme not in SCHEMES_WITH_MODEL:
        raise _no_model(scheme)
    mu, r, v = model_rates(params, mean_size_bytes)
    capacity = int(_get(params, "nic.ring_descriptors"))
    _check_size(scheme, capacity, method, normal_method)

    if scheme == "ideal":

        def ideal(rate: float) -> Figures:
            m = mm1b(rate, mu, capacity)
            return m.throughput, m.p0, m.mean_sojourn_s, m.loss, rate / mu

        return ideal

    if scheme in ("irq", "coalesce-count", "coalesce-time"):

        def irq(rate: float) -> Figures:
            m = normal(rate, mu, r, capacity, normal_method)
            return m.throughput, m.cpu_availability, m.mean_latency_s, m.loss, m.rho

        return irq

    if scheme == "disable-enable":

        def dis_en(rate: float) -> Figures:
            m = disable_enable(rate, mu, v, capacity, method)
            return m.throughput, m.cpu_availability, m.mean_latency_s, m.loss, m.rho

        return dis_en

    period, overhead, quota = _polling(params)
    if scheme == "poll":

        def poll(rate: float) -> Figures:
            m = pure_polling(rate, mu, period, overhead, quota, capacity, empty_wait)
            return m.throughput, m.cpu_availability, m.mean_latency_s, m.loss, m.rho

        return poll

    switch = float(_get(params, "hybrid.switch_pps"))

    def hyb(rate: float) -> Figures:
        m = hybrid(
            rate,
            mu,
            r,
            v,
            period,
            overhead,
            quota,
            capacity,
            switch_rate=switch if switch > 0 else None,
            empty_wait=empty_wait,
            method=method,
        )
        return m.throughput, m.cpu_availability, m.mean_latency_s, m.loss, m.rho

    return hyb


def _check_size(scheme: str, capacity: int, method: Method, normal_method: NormalMethod) -> None:
    """Refuses a ring whose model is too large to solve (:mod:`irqlab.analytic.limits`),
    before any rate is solved: the size is ``scheme``'s, named as the scenario names it."""
    if scheme in ("irq", "coalesce-count", "coalesce-time"):
        chain = normal_method == "chain"
        per_packet, extra = (2, 2) if chain else (1, 1)
    elif scheme in ("disable-enable", "hybrid"):
        chain = method == "chain"
        per_packet, extra = (2, 1) if chain else (1, 1)
    else:
        chain, per_packet, extra = False, 1, 1
    check_capacity(
        capacity,
        f"the {scheme} model",
        per_packet,
        extra,
        chain=chain,
        key="nic.ring_descriptors",
    )


def _solve(scheme: str, model: Callable[[float], Figures], rate: float) -> Figures:
    """``model`` at ``rate``; a solver that fails, warns of its numbers (an overflow, a
    singular matrix) or gives undefined figures is a :class:`ModelError` naming the scheme
    and the rate, never a row."""
    where = f"the {scheme} model at {rate:g} packets/s"
    try:
        with warnings.catch_warnings():
            # numerical warnings (not, say, a library's deprecation notice)
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("error", MatrixRankWarning)
            figures = model(rate)
    except IrqlabError:
        raise
    except (ArithmeticError, ValueError, RuntimeError, MemoryError, Warning) as e:
        what = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise ModelError(f"{where} cannot be solved ({what})") from e
    if any(math.isnan(x) for x in figures):
        raise ModelError(f"{where} cannot be solved (its figures are undefined: {figures})")
    return figures


def curve(
    scheme: str,
    params: Mapping[str, Any],
    rates: Sequence[float],
    *,
    mean_size_bytes: float | None = None,
    empty_wait: EmptyWait = "half-period",
    method: Method = "chain",
    normal_method: NormalMethod = "chain",
) -> pd.DataFrame:
    """One row per arrival rate (packets/s) with the model's figures for ``scheme``.

    ``params`` is a resolved scenario, a flat mapping of dotted keys. Columns: scheme, rate_pps,
    throughput_pps, cpu_availability (fraction of the CPU left to applications), latency_us
    (mean), loss_ratio, rho (the protocol load λ/μ' the model uses). ``empty_wait`` applies to
    pure polling (and the hybrid's polling side), ``method`` to disable-enable,
    ``normal_method`` to normal interruption (``"printed"``: Eqs. 1-6 as printed). Raises
    :class:`irqlab.errors.ConfigError` for a scheme without a model (key ``"scheme"``), more
    than :data:`~irqlab.analytic.limits.MAX_RATES` rates (``"rates"``) or a ring whose model
    is too large to solve (``"nic.ring_descriptors"``, :mod:`irqlab.analytic.limits`), before
    solving anything; :class:`irqlab.errors.ModelError` if the model cannot be solved at a
    rate.
    """
    if len(rates) > MAX_RATES:
        raise ConfigError(
            f"rates: {len(rates):,} arrival rates; a curve takes at most {MAX_RATES:,}", "rates"
        )
    model = _model(scheme, params, mean_size_bytes, empty_wait, method, normal_method)
    rows = []
    for rate in rates:
        throughput, available, latency_s, loss, rho = _solve(scheme, model, float(rate))
        rows.append((scheme, float(rate), throughput, available, latency_s * 1e6, loss, rho))
    return pd.DataFrame(rows, columns=list(COLUMNS))
