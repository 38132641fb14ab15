"""The analytic models of Salah et al. (2007) (irqlab.analytic): pure mathematics, no simulation.

Each model is checked three ways: against a second, independent computation of the same
quantity (the disable-enable chain against its closed forms, the stable M/D/1/B against the
printed series), against the special cases the paper names (v = μ and r → ∞ give M/M/1/B), and
against the numbers the paper reports for its platform (1/r = 3.73 us, 1/μ = 5.34 us, B = 1024).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from irqlab.analytic import (
    SCHEMES_WITH_MODEL,
    cliff_point,
    curve,
    disable_enable,
    disable_enable_distribution,
    effective_rate,
    effective_rate_printed,
    hybrid,
    md1b,
    md1b_distribution,
    md1b_p0_printed,
    md1b_sojourn_printed,
    mm1b,
    normal,
    p01_compact,
    pure_polling,
    throughput_compact,
    u_ip_printed,
)
from irqlab.errors import ConfigError

# Salah et al. (2007), section 4 (rates in packets/s, times in s)
MU = 1e9 / 5340  # protocol processing, 187 kpps
R = 1e9 / 3730  # ISR
V = 1e9 / (3730 + 500 + 5340)  # first packet of a busy period: ISR + mask + protocol, 104.5 kpps
B = 1024
T_POLL, T_POLL_OH, QUOTA = 20e-6, 1.59e-6, 3

FIGURES = ("p01", "throughput", "loss", "mean_in_system", "mean_latency_s")


def rel(x: float, y: float) -> float:
    return abs(x - y) / abs(y) if y != 0 else abs(x)


# --- disable-enable: the chain of Fig. 2 against its closed forms -----------------------------

# μ = 187 000, v = 104 500: λ = 82 500 makes λ + v − μ exactly 0, i.e. a = b in floating point
MU_INT, V_INT = 187_000.0, 104_500.0
A_EQUALS_B = MU_INT - V_INT
A_EQUALS_1 = MU_INT
RATES = (*(x * MU_INT for x in (0.05, 0.3, 0.9, 1.3, 2.0, 4.0)), A_EQUALS_B, A_EQUALS_1)


@pytest.mark.parametrize("capacity", [1, 2, 32, 1024])
@pytest.mark.parametrize("rate", RATES)
def test_disable_enable_chain_equals_closed_forms(capacity: int, rate: float) -> None:
    assert (rate / MU_INT == rate / (rate + V_INT)) == (rate == A_EQUALS_B)
    chain = disable_enable(rate, MU_INT, V_INT, capacity, method="chain")
    closed = disable_enable(rate, MU_INT, V_INT, capacity, method="closed")
    for name in FIGURES:
        assert rel(getattr(chain, name), getattr(closed, name)) < 1e-9, name
    # state by state too, down to probabilities of 1e-290 (the chain solve is componentwise
    # accurate; probabilities that underflow in one method are left out)
    for p, q in zip(
        disable_enable_distribution(rate, MU_INT, V_INT, capacity, "chain"),
        disable_enable_distribution(rate, MU_INT, V_INT, capacity, "closed"),
        strict=True,
    ):
        big = q > 1e-290
        assert np.all(np.abs(p[big] - q[big]) <= 1e-9 * q[big])
        assert np.all(p[~big] < 1e-280)


def test_a_equals_b_is_the_limit_of_its_neighbourhood() -> None:
    """At λ = μ − v the closed forms take the limit n a^(n−1); it must join its neighbours."""
    rate = A_EQUALS_B
    exact = disable_enable(rate, MU_INT, V_INT, 1024, method="closed")
    for eps in (1e-7, -1e-7):
        near = disable_enable(rate * (1 + eps), MU_INT, V_INT, 1024, method="closed")
        assert rel(near.mean_in_system, exact.mean_in_system) < 1e-5
        assert rel(near.p01, exact.p01) < 1e-5


def printed_denominator(a: float, b: float, big: int) -> float:
    return (b - a) * (1 - a + a * b - a * b**big) - a**2 * (1 - b) * (a * b**big - a**big * b)


def printed_eq7(a: float, b: float, big: int) -> float:
    """p01 exactly as printed in Eq. 7."""
    return (b - a) * (1 - a) * (1 - b) / printed_denominator(a, b, big)


def printed_eq8(rate: float, a: float, b: float, big: int) -> float:
    """γ exactly as printed in Eq. 8."""
    num = (b - a) * (1 - a + a * b - b**big) - a * (1 - b) * (a * b**big - a**big * b)
    return rate * num / printed_denominator(a, b, big)


@pytest.mark.parametrize("load", [0.05, 0.3, 0.9, 1.3, 2.0, 4.0])
def test_compact_eq7_and_eq8_equal_the_chain(load: float) -> None:
    rate = load * MU
    chain = disable_enable(rate, MU, V, 32, method="chain")
    assert rel(p01_compact(rate, MU, V, 32), chain.p01) < 1e-9
    assert rel(throughput_compact(rate, MU, V, 32), chain.throughput) < 1e-9
    # the compact forms as printed in the paper are the same functions (only the derivation
    # before them has typos)
    a, b = rate / MU, rate / (rate + V)
    assert rel(printed_eq7(a, b, 32), chain.p01) < 1e-9
    assert rel(printed_eq8(rate, a, b, 32), chain.throughput) < 1e-9


def test_compact_forms_refuse_their_singular_points() -> None:
    with pytest.raises(ValueError):
        p01_compact(A_EQUALS_B, MU_INT, V_INT, 32)  # a = b
    with pytest.raises(ValueError):
        throughput_compact(MU, MU, V, 32)  # a = 1


@pytest.mark.parametrize("method", ["chain", "closed"])
@pytest.mark.parametrize("load", [0.1, 0.7, 1.0, 1.6])
@pytest.mark.parametrize("capacity", [1, 8, 1024])
def test_disable_enable_with_v_equal_mu_is_mm1b(method: str, load: float, capacity: int) -> None:
    """§3.3.4: if the first packet costs what the others do, the scheme is the ideal queue."""
    rate = load * MU
    de = disable_enable(rate, MU, MU, capacity, method=method)  # type: ignore[arg-type]
    ideal = mm1b(rate, MU, capacity)
    assert rel(de.p01, ideal.p0) < 1e-9
    assert rel(de.throughput, ideal.throughput) < 1e-9
    assert rel(de.loss, ideal.loss) < 1e-9
    assert rel(de.mean_in_system, ideal.mean_in_system) < 1e-9
    assert rel(de.mean_latency_s, ideal.mean_sojourn_s) < 1e-9


def test_disable_enable_throughput_is_conserved() -> None:
    """γ = v Σ p_{n,1} + μ Σ p_{n,0} (departures) equals λ(1 − p_B) (accepted arrivals)."""
    for load in (0.2, 1.0, 3.0):
        de = disable_enable(load * MU, MU, V, B)
        assert rel(de.throughput, load * MU * (1 - de.loss)) < 1e-9


# --- normal interruption ----------------------------------------------------------------------


@pytest.mark.parametrize("load", [0.2, 0.9, 1.5])
def test_normal_without_interrupt_cost_is_mm1b(load: float) -> None:
    """§3.2.4: r → ∞ (1/r = 0) gives μ' = μ and the M/M/1/B queue."""
    rate = load * MU
    ideal = mm1b(rate, MU, B)
    free = normal(rate, MU, math.inf, B)
    assert free.effective_rate == MU
    assert free.throughput == pytest.approx(ideal.throughput, rel=1e-12)
    assert free.cpu_availability == pytest.approx(ideal.p0, rel=1e-12)
    assert free.mean_latency_s == pytest.approx(ideal.mean_sojourn_s, rel=1e-12)
    cheap = normal(rate, MU, 1e15, B)  # 1 fs per interrupt
    assert cheap.throughput == pytest.approx(ideal.throughput, rel=1e-6)
    assert cheap.mean_latency_s == pytest.approx(ideal.mean_sojourn_s, rel=1e-6)


def test_normal_cpu_availability_and_latency() -> None:
    """Eq. 3 with B large and ρ_IP < 1: V = r/(λ + r) (1 − λ/μ') = 1 − U_ISR − λ/μ; Eq. 6:
    one ISR plus the M/M/1/B sojourn at μ'."""
    rate = 50e3
    m = normal(rate, MU, R, B, method="printed")
    assert m.u_isr == pytest.approx(rate / (rate + R), rel=1e-12)
    assert m.cpu_availability == pytest.approx(1 - rate / (rate + R) - rate / MU, rel=1e-9)
    queue = mm1b(rate, MU * R / (rate + R), B)
    assert m.mean_latency_s == pytest.approx(1 / R + queue.mean_sojourn_s, rel=1e-12)
    # at the cliff the CPU is saturated (Fig. 6b)
    assert normal(cliff_point(MU, R), MU, R, B).cpu_availability < 0.005


def test_normal_chain_solves_the_model_the_equations_approximate() -> None:
    """The chain on (packets, ISR running) keeps Eqs. 1, 3 and 5 (U_ISR exactly; throughput and
    CPU availability within a fraction of a percent away from the cliff) but not Eq. 6: an ISR
    delays every packet queued behind it, so the mean latency is higher than 1/r + E_IP[T]."""
    for rate in (30e3, 60e3, 100e3, 200e3):
        chain, printed = normal(rate, MU, R, B), normal(rate, MU, R, B, method="printed")
        assert chain.u_isr == pytest.approx(rate / (rate + R), rel=1e-9)
        assert chain.throughput == pytest.approx(printed.throughput, rel=2e-3)
        assert chain.cpu_availability == pytest.approx(printed.cpu_availability, abs=2e-3)
    low, printed_low = normal(100e3, MU, R, B), normal(100e3, MU, R, B, method="printed")
    assert low.mean_latency_s > 1.2 * printed_low.mean_latency_s
    # Little: E[T] = E[N]/γ, and the chain's distribution sums to one
    assert low.mean_latency_s == pytest.approx(low.mean_in_system / low.throughput, rel=1e-12)
    with pytest.raises(ValueError, match="method"):
        normal(1e3, MU, R, B, method="exact")  # type: ignore[arg-type]


def test_salah_cliff_point() -> None:
    assert cliff_point(MU, R) == pytest.approx(127_000, abs=500)
    # at the cliff, μ' = λ: the protocol queue is exactly at load 1
    cliff = cliff_point(MU, R)
    assert normal(cliff, MU, R, B).rho == pytest.approx(1.0, rel=1e-12)
    assert cliff_point(MU, math.inf) == MU


def test_salah_normal_throughput_falls_after_the_cliff() -> None:
    """Receive livelock: past the cliff, more offered load means less delivered."""
    cliff = cliff_point(MU, R)
    rates = np.linspace(1.05 * cliff, 600e3, 20)
    throughput = [normal(x, MU, R, B).throughput for x in rates]
    assert np.all(np.diff(throughput) < 0)
    assert throughput[-1] < 0.5 * cliff
    below = normal(0.9 * cliff, MU, R, B)
    assert below.throughput == pytest.approx(0.9 * cliff, rel=1e-9)


def test_salah_disable_enable_reaches_mu() -> None:
    """Fig. 6a: disable-enable saturates at the protocol rate, 187 kpps, not at the cliff."""
    de = disable_enable(600e3, MU, V, B)
    assert de.throughput == pytest.approx(MU, rel=0.01)
    assert de.throughput == pytest.approx(187e3, rel=0.01)


# --- M/D/1/B: the stable method against the printed series ------------------------------------


@pytest.mark.parametrize("capacity", range(5, 21, 3))
@pytest.mark.parametrize("load", [0.3, 0.8, 1.0, 1.5])
def test_md1b_stable_equals_printed_at_small_b(capacity: int, load: float) -> None:
    rate = load * 1e5
    stable = md1b(rate, 1e5, capacity)
    # the alternating series already loses ~7 digits to cancellation at B = 20
    assert md1b_p0_printed(rate, 1e5, capacity) == pytest.approx(stable.p0, rel=1e-6)
    assert md1b_sojourn_printed(rate, 1e5, capacity) == pytest.approx(
        stable.mean_sojourn_s, rel=1e-6
    )


def test_md1b_printed_series_fails_at_b_1024_and_the_stable_one_does_not() -> None:
    for load in (0.3, 0.9, 1.5):
        rate = load * 1e5
        printed = md1b_p0_printed(rate, 1e5, B)
        stable = md1b(rate, 1e5, B)
        assert not (math.isfinite(printed) and printed == pytest.approx(stable.p0, rel=1e-3))
        assert math.isfinite(stable.p0) and math.isfinite(stable.mean_sojourn_s)


@pytest.mark.parametrize("load", [0.01, 0.3, 0.9, 1.0, 1.5, 4.0, 50.0])
def test_md1b_stable_at_b_1024(load: float) -> None:
    service = 150e3
    rate = load * service
    p = md1b_distribution(load, B)
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # p_B from positive terms agrees with 1 − 1/(π_0 + ρ) (Gross & Harris)
    assert p[-1] == pytest.approx(1.0 - p[:-1].sum(), abs=1e-12)
    m = md1b(rate, service, B)
    assert rel(m.throughput, service * (1 - m.p0)) < 1e-9
    assert rel(m.throughput, rate * (1 - m.loss)) < 1e-9


def test_md1b_small_cases_and_pollaczek_khinchine() -> None:
    # M/D/1/1 is an Erlang loss system: p0 = 1/(1 + ρ)
    assert md1b(0.5, 1.0, 1).p0 == pytest.approx(1 / 1.5, rel=1e-14)
    # a large buffer at ρ < 1 behaves as M/D/1: E[N] = ρ + ρ²/(2(1 − ρ))
    for rho in (0.3, 0.5, 0.8):
        m = md1b(rho, 1.0, B)
        assert m.mean_in_system == pytest.approx(rho + rho**2 / (2 * (1 - rho)), rel=1e-9)
        assert m.p0 == pytest.approx(1 - rho, rel=1e-9)


@pytest.mark.parametrize("capacity", [32, 1024])
@pytest.mark.parametrize("rho", [0.3, 0.6, 0.9])
def test_md1b_holds_fewer_than_mm1b(capacity: int, rho: float) -> None:
    """Deterministic service halves the queueing term of exponential service."""
    assert md1b(rho, 1.0, capacity).mean_in_system < mm1b(rho, 1.0, capacity).mean_in_system


# --- pure polling --------------------------------------------------------------------------


def test_salah_polling_rate_is_the_quota_per_period() -> None:
    assert effective_rate(MU, T_POLL, T_POLL_OH, QUOTA) == pytest.approx(150e3, rel=1e-12)
    assert pure_polling(600e3, MU, T_POLL, T_POLL_OH, QUOTA, B).throughput == pytest.approx(
        150e3, rel=1e-9
    )


def test_printed_eq9_jumps_at_its_boundary_and_the_corrected_one_does_not() -> None:
    mu = 1e6
    quota = 10
    # Q/μ = T_v at T_poll = 12 us, T_PollOH = 2 us
    below = dict(service_rate=mu * (1 - 1e-9), period_s=12e-6, overhead_s=2e-6, quota=quota)
    above = dict(service_rate=mu * (1 + 1e-9), period_s=12e-6, overhead_s=2e-6, quota=quota)
    assert rel(effective_rate(**below), effective_rate(**above)) < 1e-6  # type: ignore[arg-type]
    jump = rel(effective_rate_printed(**below), effective_rate_printed(**above))  # type: ignore[arg-type]
    assert jump > 0.1


def test_salah_polling_cpu_availability() -> None:
    """§3.4.2: polling keeps U_PollOH + Q/(μ T_poll) busy at overload and leaves the rest."""
    overload = pure_polling(600e3, MU, T_POLL, T_POLL_OH, QUOTA, B)
    expected = 1 - (1.59 + 3 * 5.34) / 20
    assert overload.cpu_availability == pytest.approx(expected, abs=1e-9)
    assert overload.cpu_availability == pytest.approx(0.12, abs=0.005)
    assert overload.u_ip == pytest.approx(
        u_ip_printed(600e3, MU, T_POLL, T_POLL_OH, QUOTA), rel=1e-9
    )
    for rate in np.linspace(1e3, 600e3, 25):
        assert pure_polling(rate, MU, T_POLL, T_POLL_OH, QUOTA, B).cpu_availability > 0.1


def test_salah_polling_with_quota_4_runs_at_full_speed() -> None:
    """§5.2, Fig. 10e: with Q = 4 the quota never binds and applications starve at high load."""
    overload = pure_polling(600e3, MU, T_POLL, T_POLL_OH, 4, B)
    assert overload.cpu_availability <= 0.01
    assert overload.effective_rate == pytest.approx(MU * (1 - T_POLL_OH / T_POLL), rel=1e-12)


def test_polling_light_load_and_empty_wait() -> None:
    rate = 20e3
    period = pure_polling(rate, MU, T_POLL, T_POLL_OH, QUOTA, B, empty_wait="period")
    half = pure_polling(rate, MU, T_POLL, T_POLL_OH, QUOTA, B)
    assert half.empty_wait == "half-period", "the mean residual time is the default"
    assert period.u_ip == pytest.approx(u_ip_printed(rate, MU, T_POLL, T_POLL_OH, QUOTA))
    queue = md1b(rate, 150e3, B)  # Eq. 12: the M/D/1/B sojourn, then the wait for a poll
    assert period.mean_latency_s == pytest.approx(
        queue.mean_sojourn_s + queue.p0 * T_POLL, rel=1e-12
    )
    assert period.mean_latency_s - half.mean_latency_s == pytest.approx(
        period.p0 * T_POLL / 2, rel=1e-12
    )
    with pytest.raises(ValueError):
        pure_polling(rate, MU, T_POLL, T_POLL_OH, QUOTA, B, empty_wait="never")  # type: ignore[arg-type]


# --- hybrid ---------------------------------------------------------------------------------


def test_hybrid_switches_just_before_the_cliff() -> None:
    args = (MU, R, V, T_POLL, T_POLL_OH, QUOTA, B)
    low = hybrid(100e3, *args)
    assert low.switch_rate == pytest.approx(0.95 * cliff_point(MU, R), rel=1e-12)
    assert 120e3 < low.switch_rate < 121e3  # the paper's 120 kpps for a 127 kpps cliff
    assert low.mode == "disable-enable"
    assert low.throughput == disable_enable(100e3, MU, V, B).throughput
    high = hybrid(300e3, *args)
    assert high.mode == "poll"
    assert (
        high.cpu_availability
        == pure_polling(300e3, MU, T_POLL, T_POLL_OH, QUOTA, B).cpu_availability
    )
    assert hybrid(110e3, *args, switch_rate=110e3).mode == "poll"  # at the switch: polling
    assert hybrid(109.9e3, *args, switch_rate=110e3).mode == "disable-enable"


# --- curves ---------------------------------------------------------------------------------

SCENARIO = {
    "scheme": "irq",
    "traffic.size_bytes": 64,
    "platform.irq_ns": 3730.0,
    "platform.proto_ns": 5340.0,
    "platform.proto_ns_per_byte": 0.0,
    "platform.mask_ns": 500.0,
    "platform.poll_timer_ns": 1590.0,
    "nic.ring_descriptors": 1024,
    "nic.rx_frames": 0,
    "nic.rx_usecs": 0.0,
    "poll.period_us": 20.0,
    "poll.quota": 3,
    "hybrid.switch_pps": 0.0,
}
COLUMNS = [
    "scheme",
    "rate_pps",
    "throughput_pps",
    "cpu_availability",
    "latency_us",
    "loss_ratio",
    "rho",
]


@pytest.mark.parametrize("scheme", SCHEMES_WITH_MODEL)
def test_curve_columns_and_rows(scheme: str) -> None:
    rates = [10e3, 100e3, 300e3]
    table = curve(scheme, SCENARIO, rates)
    assert list(table.columns) == COLUMNS
    assert list(table["rate_pps"]) == rates
    assert set(table["scheme"]) == {scheme}
    assert np.all(np.isfinite(table.drop(columns="scheme").to_numpy(dtype=float)))
    assert np.all((table["cpu_availability"] >= 0) & (table["cpu_availability"] <= 1))


def test_curve_values_are_the_models() -> None:
    irq = curve("irq", SCENARIO, [200e3]).iloc[0]
    model = normal(200e3, MU, R, B)
    assert irq["throughput_pps"] == model.throughput
    assert irq["latency_us"] == pytest.approx(model.mean_latency_s * 1e6, rel=1e-15)
    assert irq["rho"] == model.rho
    # 1/v = irq + mask + proto
    dis_en = curve("disable-enable", SCENARIO, [150e3]).iloc[0]
    assert dis_en["latency_us"] == pytest.approx(
        disable_enable(150e3, MU, V, B).mean_latency_s * 1e6, rel=1e-12
    )
    poll = curve("poll", SCENARIO, [50e3], empty_wait="half-period").iloc[0]
    direct = pure_polling(50e3, MU, T_POLL, T_POLL_OH, QUOTA, B, empty_wait="half-period")
    assert poll["latency_us"] == pytest.approx(direct.mean_latency_s * 1e6, rel=1e-15)
    # the per-byte cost and mean_size_bytes make 1/μ: 5340 ns = 4340 + 1000 B × 1 ns/B
    sized = {**SCENARIO, "platform.proto_ns": 4340.0, "platform.proto_ns_per_byte": 1.0}
    ideal = curve("ideal", sized, [100e3], mean_size_bytes=1000).iloc[0]
    assert ideal["rho"] == pytest.approx(100e3 / MU, rel=1e-12)
    # coalescing with τ ≤ 1 or T = 0 is normal interruption (§4)
    count = curve("coalesce-count", {**SCENARIO, "nic.rx_frames": 1}, [200e3])
    assert count["throughput_pps"].iloc[0] == model.throughput


def test_curve_hybrid_switch_from_the_scenario() -> None:
    auto = curve("hybrid", SCENARIO, [115e3]).iloc[0]
    fixed = curve("hybrid", {**SCENARIO, "hybrid.switch_pps": 110e3}, [115e3]).iloc[0]
    assert auto["throughput_pps"] == pytest.approx(115e3, rel=1e-9)  # disable-enable
    assert fixed["rho"] == pytest.approx(115e3 / 150e3, rel=1e-12)  # polling, μ' = Q/T_poll


@pytest.mark.parametrize(
    ("scheme", "params"),
    [
        ("napi", SCENARIO),
        ("napi-poll", SCENARIO),
        ("coalesce-count", {**SCENARIO, "nic.rx_frames": 8}),
        ("coalesce-time", {**SCENARIO, "nic.rx_usecs": 50.0}),
    ],
)
def test_curve_without_a_model_names_the_scheme(scheme: str, params: dict) -> None:
    with pytest.raises(ConfigError) as info:
        curve(scheme, params, [1e3])
    assert info.value.key == "scheme"
    message = str(info.value)
    assert repr(scheme) in message
    for known in ("ideal", "irq", "disable-enable", "poll", "hybrid"):
        assert known in message


def test_curve_takes_the_mean_frame_of_a_size_table() -> None:
    """With traffic.sizes a table, 1/μ uses its mean frame (557 B → 5.99 µs: μ ≈ 166.9 kpps)."""
    import irqlab

    params = irqlab.resolve({"platform.preset": "salah2007", "traffic.sizes": "salah2007"})
    saturated = curve("ideal", params, [1e6]).iloc[0]
    assert saturated["throughput_pps"] == pytest.approx(1e9 / (5250 + 556.95 / 0.748), rel=1e-6)


def _exact_stationary(q) -> list:
    """π Q = 0, Σπ = 1 in rational arithmetic, on the float generator's off-diagonal rates
    (each taken exactly, the diagonal their exact negated sum)."""
    from fractions import Fraction

    q = q.tocoo()
    n = q.shape[0]
    a = [[Fraction(0)] * n for _ in range(n)]  # Qᵀ, one row replaced by the normalisation
    for i, j, v in zip(q.row, q.col, q.data, strict=True):
        if i != j:
            a[j][i] += Fraction(v)
            a[i][i] -= Fraction(v)
    a[0] = [Fraction(1)] * n
    rhs = [Fraction(0)] * n
    rhs[0] = Fraction(1)
    for c in range(n):
        p = next(r for r in range(c, n) if a[r][c] != 0)
        a[c], a[p], rhs[c], rhs[p] = a[p], a[c], rhs[p], rhs[c]
        for r in range(c + 1, n):
            if a[r][c] != 0:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c], strict=True)]
                rhs[r] -= f * rhs[c]
    pi = [Fraction(0)] * n
    for r in reversed(range(n)):
        pi[r] = (rhs[r] - sum(a[r][k] * pi[k] for k in range(r + 1, n))) / a[r][r]
    return pi


@pytest.mark.parametrize("rate", [5e4, 2e5, 6e5, 1e7])
def test_the_normal_chain_is_accurate_to_the_smallest_probability(rate: float) -> None:
    """Past the cliff the idle state (the CPU availability) is improbable, 1e-20 to 1e-57 at
    B = 32: the banded solve gets it to full relative precision (a solve with the
    normalisation row first left it at the 1e-17 noise of the probable states)."""
    from irqlab.analytic.normal import generator

    b = 32
    exact = _exact_stationary(generator(rate, MU, R, b))
    m = normal(rate, MU, R, b)
    assert m.cpu_availability == pytest.approx(float(exact[0]), rel=1e-9, abs=0)
    assert m.loss == pytest.approx(float(exact[-2] + exact[-1]), rel=1e-9, abs=0)


@pytest.mark.parametrize("rho", [0.01, 0.3, 0.99, 1.5, 50.0, 499.0])
def test_md1b_recursion_skips_only_terms_that_are_zero(rho: float) -> None:
    """The departure recursion sums only the ā_k that are not 0 in float64 (a few hundred
    past ρ): the distribution is the full B²/2 sum's to rounding."""
    import importlib

    from scipy import stats

    module = importlib.import_module("irqlab.analytic.md1b")
    big = 2048
    tail = stats.poisson.sf(np.arange(big, dtype=float), rho)
    assert rho > 100 or tail[-1] == 0.0  # the small loads do skip terms
    pi = np.zeros(big)
    pi[0] = 1.0
    for j in range(big - 1):
        pi[j + 1] = (pi[0] * tail[j] + float(np.dot(pi[1 : j + 1], tail[j:0:-1]))) / np.exp(-rho)
        if pi[j + 1] > 1e100:
            pi /= pi[j + 1]
    full = pi / pi.sum()
    fast = module.departure_distribution(rho, big)
    significant = full > 1e-250
    assert np.allclose(fast[significant], full[significant], rtol=1e-12, atol=0)
    assert np.all(fast[~significant] < 1e-240)
