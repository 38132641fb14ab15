"""The tandem model of protocol processing and an application on one core
(irqlab.analytic.tandem).

Checked against independent computations: the M/M/1/B closed form (stage 1 alone), Little's law,
the classical preemptive-priority results for unbounded buffers, a generator written out by hand
for ring = socket = 1, and a Monte Carlo simulation of the same system with per-packet
timestamps.
"""

from __future__ import annotations

import doctest
import importlib
import math
from collections import deque

import numpy as np
import pytest

from irqlab.analytic import mm1b
from irqlab.analytic.tandem import (
    behind_distribution,
    distribution,
    generator,
    states,
    tandem,
)

# the module (`irqlab.analytic.tandem` as an attribute is the function, as for mm1b)
tandem_module = importlib.import_module("irqlab.analytic.tandem")

# (lam, proto_s, app_s, ring, socket): light, socket-bound, ring-bound, overload, tiny buffers
CASES = [
    (0.2, 1.0, 1.5, 16, 16),
    (0.6, 1.0, 1.25, 4, 3),
    (1.5, 1.0, 0.2, 3, 10),
    (4.0, 1.0, 2.0, 8, 6),
    (0.7, 0.3, 0.9, 1, 1),
    (50_000.0, 5e-6, 30e-6, 64, 8),
]


def rel(x: float, y: float) -> float:
    return abs(x - y) / abs(y)


# --- probabilities and rates ------------------------------------------------------------------


@pytest.mark.parametrize("args", CASES)
def test_distribution_is_a_distribution_without_vanishing_states(args):
    ring, socket = args[3], args[4]
    p = distribution(*args)
    assert p.shape == (ring + 1, socket + 1, 2)
    assert (p >= 0).all()
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert (p[0, 1:, 0] == 0).all()  # n1 = 0, a = 0, s > 0: the app takes a packet at once
    r = tandem(*args)
    assert r.cpu_softirq + r.cpu_app + r.cpu_idle == pytest.approx(1.0, abs=1e-12)
    assert r.cpu_idle == pytest.approx(p[0, 0, 0], abs=0)
    assert 0 <= r.mean_app <= 1 and 0 <= r.mean_socket <= socket and 0 <= r.mean_ring <= ring


@pytest.mark.parametrize("args", CASES)
def test_rates_are_conserved(args):
    lam, proto_s, app_s, _, _ = args
    r = tandem(*args)
    # every packet the ring accepts is delivered or dropped at the socket
    assert lam * (1 - r.loss_nic) == pytest.approx(r.throughput_pps + r.socket_drop_pps, rel=1e-9)
    # what enters the socket leaves it through the application
    assert r.app_pps == pytest.approx(r.throughput_pps, rel=1e-9)
    # stage-1 work: the CPU share of softirq is its throughput times its mean service
    assert r.cpu_softirq == pytest.approx(lam * (1 - r.loss_nic) * proto_s, rel=1e-9)
    assert r.cpu_app == pytest.approx(r.app_pps * app_s, rel=1e-9)
    assert r.mean_app == pytest.approx(r.cpu_app + distribution(*args)[1:, :, 1].sum(), rel=1e-9)


@pytest.mark.parametrize("args", CASES)
def test_the_socket_verdict_is_decided_at_arrival(args):
    """The tagged analysis accepts an arrival into the socket iff n1 < ring and s + n1 < socket
    (the app cannot dequeue while the packet is in stage 1): by PASTA, λ P(that) must be the
    delivered rate of the chain."""
    lam, _, _, ring, socket = args
    p = distribution(*args)
    n1 = np.arange(ring + 1)[:, None, None]
    s = np.arange(socket + 1)[None, :, None]
    accepted = float(np.where((n1 < ring) & (s + n1 < socket), p, 0).sum())
    assert lam * accepted == pytest.approx(tandem(*args).throughput_pps, rel=1e-9)


def test_behind_distribution_rows_are_distributions():
    x = behind_distribution(0.8, 1.0, 12)
    assert x.shape == (12, 12)
    np.testing.assert_allclose(x.sum(axis=1), 1.0, atol=1e-12)
    # the packet that joins at position k leaves at most ring − 1 behind, and with a full ring
    # (k = ring) it starts with none behind but leaves with the same law as k = ring − 1
    np.testing.assert_allclose(x[-1], x[-2], atol=1e-12)
    assert x[0, 0] == pytest.approx(1 / (1 + 0.8))  # k = 1: no arrival before its service ends


# --- stage 1 is M/M/1/ring --------------------------------------------------------------------


@pytest.mark.parametrize("args", CASES)
def test_stage_one_is_mm1b_whatever_the_socket(args):
    lam, proto_s, _, ring, _ = args
    r = tandem(*args)
    q = mm1b(lam, 1 / proto_s, ring)
    assert r.loss_nic == pytest.approx(q.loss, rel=1e-9, abs=1e-15)
    assert r.mean_ring == pytest.approx(q.mean_in_system, rel=1e-9)
    assert r.cpu_softirq == pytest.approx(q.utilisation, rel=1e-9)
    assert r.latency_all_s == pytest.approx(q.mean_sojourn_s, rel=1e-9)


@pytest.mark.parametrize("lam", [0.1, 0.3, 0.5])
def test_without_socket_drops_latency_is_littles(lam):
    # a fast app and a huge socket at moderate load: socket drops are vanishingly rare (the
    # socket still fills during long stage-1 busy periods, when the app cannot run: at λ = 0.9
    # a 64-packet socket drops 0.5%)
    args = (lam, 1.0, 0.05, 6, 128)
    r = tandem(*args)
    assert r.loss_socket < 1e-14
    assert r.loss_nic == pytest.approx(mm1b(lam, 1.0, 6).loss, rel=1e-9)
    assert r.latency_s == pytest.approx(r.latency_all_s, rel=1e-9)


def test_socket_drops_select_the_short_stage_one_sojourns():
    # packets that find a long ring are the ones the socket refuses: latency_s < latency_all_s
    r = tandem(0.6, 1.0, 1.25, 4, 3)
    assert r.loss_socket > 0.3
    assert r.latency_s < 0.8 * r.latency_all_s


# --- the tagged-packet latencies --------------------------------------------------------------


@pytest.mark.parametrize("args", CASES)
def test_app_latency_obeys_littles_law(args):
    """Every packet accepted into the socket is consumed: the time from socket entry to app
    completion is (E[s] + E[a])/throughput, computed from the stationary distribution, while
    app_latency_s comes from the tagged-packet chains."""
    r = tandem(*args)
    little = r.latency_s + (r.mean_socket + r.mean_app) / r.throughput_pps
    assert r.app_latency_s == pytest.approx(little, rel=1e-8)


@pytest.mark.parametrize(("lam", "proto_s", "app_s"), [(0.2, 1.0, 1.5), (0.4, 0.5, 1.0)])
def test_large_buffers_give_the_preemptive_priority_results(lam, proto_s, app_s):
    """Unbounded buffers: stage 1 is M/M/1; the (work-conserving) core consumes a packet after
    the M/G/1 workload V it finds, its own two services and the stage-1 work arriving meanwhile:
    E[T] = (E[V] + E[X])/(1 − ρ1), E[V] = λE[X²]/(2(1 − ρ)), X = X1 + X2 (a low-priority
    customer of preemptive-resume M/G/1 whose high-priority work is the others' stage 1)."""
    mu1 = 1 / proto_s
    rho1, rho = lam / mu1, lam * (proto_s + app_s)
    assert rho < 0.61
    mean_x = proto_s + app_s
    mean_x2 = 2 * proto_s**2 + 2 * app_s**2 + 2 * proto_s * app_s
    workload = lam * mean_x2 / (2 * (1 - rho))
    r = tandem(lam, proto_s, app_s, 64, 64)
    assert r.latency_s == pytest.approx(1 / (mu1 - lam), rel=1e-8)
    assert r.app_latency_s == pytest.approx((workload + mean_x) / (1 - rho1), rel=1e-8)
    assert r.cpu_app == pytest.approx(lam * app_s, rel=1e-8)


def simulate(
    lam: float, proto_s: float, app_s: float, ring: int, socket: int, events: int, seed: int
) -> dict[str, float]:
    """The same system, packet by packet (uniformised Gillespie: events at the constant rate
    λ + μ1 + μ2, the ones that cannot happen are void)."""
    mu1, mu2 = 1 / proto_s, 1 / app_s
    total = lam + mu1 + mu2
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1 / total, events).tolist()
    kinds = (rng.random(events) * total).tolist()
    stage1: deque[float] = deque()  # arrival times, FIFO
    sock: deque[float] = deque()
    app: float | None = None  # arrival time of the packet the app holds
    t = 0.0
    arrivals = nic = dropped = accepted = consumed = 0
    stage1_time = app_time = 0.0
    for gap, kind in zip(gaps, kinds, strict=True):
        t += gap
        if kind < lam:
            arrivals += 1
            if len(stage1) < ring:
                stage1.append(t)
            else:
                nic += 1
        elif kind < lam + mu1:
            if not stage1:
                continue
            born = stage1.popleft()
            if len(sock) < socket:
                sock.append(born)
                accepted += 1
                stage1_time += t - born
            else:
                dropped += 1
            if not stage1 and app is None and sock:
                app = sock.popleft()
        elif not stage1 and app is not None:
            consumed += 1
            app_time += t - app
            app = sock.popleft() if sock else None
    return {
        "loss_nic": nic / arrivals,
        "loss_socket": dropped / arrivals,
        "throughput_pps": accepted / t,
        "latency_s": stage1_time / accepted,
        "app_latency_s": app_time / consumed,
    }


@pytest.mark.parametrize(
    ("args", "seed"), [((0.6, 1.0, 1.25, 4, 3), 1), ((1.5, 1.0, 0.2, 3, 10), 2)]
)
def test_monte_carlo_agrees(args, seed):
    r = tandem(*args)
    m = simulate(*args, events=1_000_000, seed=seed)
    for key, value in m.items():
        assert value == pytest.approx(getattr(r, key), rel=0.03), key
    # the naive Little latency over all ring packets is measurably not the delivered one
    assert rel(m["latency_s"], r.latency_all_s) > 0.1 or r.loss_socket < 0.01


# --- the vanishing-state rule, by hand --------------------------------------------------------


def test_ring_one_socket_one_by_hand():
    lam, mu1, mu2 = 0.7, 1 / 0.3, 1 / 0.9
    order = [(0, 0, 0), (0, 0, 1), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)]
    at = {x: i for i, x in enumerate(order)}
    moves = {
        (0, 0, 0): [((1, 0, 0), lam)],
        (0, 0, 1): [((1, 0, 1), lam), ((0, 0, 0), mu2)],
        (0, 1, 1): [((1, 1, 1), lam), ((0, 0, 1), mu2)],  # done; takes the socket's packet
        (1, 0, 0): [((0, 0, 1), mu1)],  # into the socket, and straight to the free app
        (1, 0, 1): [((0, 1, 1), mu1)],
        (1, 1, 0): [((0, 0, 1), mu1)],  # dropped at the socket; the app takes the other one
        (1, 1, 1): [((0, 1, 1), mu1)],  # dropped at the socket
    }
    q = np.zeros((7, 7))
    for src, outs in moves.items():
        for dst, rate in outs:
            q[at[src], at[dst]] += rate
    q -= np.diag(q.sum(axis=1))
    assert list(zip(*(x.tolist() for x in states(1, 1)), strict=True)) == order
    np.testing.assert_allclose(generator(lam, 0.3, 0.9, 1, 1).toarray(), q, atol=1e-12)

    a = q.T.copy()
    a[0] = 1.0
    pi = np.linalg.solve(a, np.eye(7)[0])
    p = dict(zip(order, pi, strict=True))
    got = distribution(lam, 0.3, 0.9, 1, 1)
    for (n1, s, app), value in p.items():
        assert got[n1, s, app] == pytest.approx(value, abs=1e-12)
    assert p[(1, 1, 0)] == pytest.approx(0, abs=1e-12)  # unreachable with ring = 1

    r = tandem(lam, 0.3, 0.9, 1, 1)
    assert r.throughput_pps == pytest.approx(mu1 * (p[(1, 0, 0)] + p[(1, 0, 1)]), rel=1e-12)
    assert r.socket_drop_pps == pytest.approx(mu1 * p[(1, 1, 1)], rel=1e-12)
    assert r.loss_nic == pytest.approx(p[(1, 0, 0)] + p[(1, 0, 1)] + p[(1, 1, 1)], rel=1e-12)
    # ring = 1: stage 1 is always exactly one service
    assert r.latency_s == pytest.approx(0.3, rel=1e-12)
    # accepted arrivals find (0,0,0) or (0,0,1); one app service, pre-empted by at most one
    # packet per arrival (ring = 1), lasts (1 + λ/μ1)/μ2; behind a held packet it takes two
    one = (1 + lam / mu1) / mu2
    w0, w1 = p[(0, 0, 0)], p[(0, 0, 1)]
    assert r.app_latency_s == pytest.approx(0.3 + one * (w0 + 2 * w1) / (w0 + w1), rel=1e-10)


# --- monotonicity -----------------------------------------------------------------------------


def test_more_load_more_loss_and_receive_livelock():
    rs = [tandem(lam, 1.0, 1.25, 8, 6) for lam in np.linspace(0.05, 5.0, 25)]
    nic = np.array([r.loss_nic for r in rs])
    total = np.array([r.loss for r in rs])
    app = np.array([r.app_pps for r in rs])
    assert (np.diff(nic) > 0).all()
    assert (np.diff(total) > 0).all()
    # the app only runs when stage 1 is empty: past its peak its throughput falls with the load
    assert app[-1] < 0.05 * app.max()


def test_bigger_socket_fewer_socket_drops():
    drops = [tandem(0.6, 1.0, 1.25, 8, s).loss_socket for s in range(1, 16)]
    assert (np.diff(drops) < 0).all()
    assert tandem(0.6, 1.0, 1.25, 8, 1).loss_nic == pytest.approx(
        tandem(0.6, 1.0, 1.25, 8, 15).loss_nic, rel=1e-12
    )


def test_slower_app_more_socket_drops_less_app_throughput():
    rs = [tandem(0.6, 1.0, app_s, 8, 6) for app_s in (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)]
    drops = np.array([r.loss_socket for r in rs])
    app = np.array([r.app_pps for r in rs])
    assert (np.diff(drops) > 0).all()
    assert (np.diff(app) < 0).all()


# --- arguments and examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lam": 0.0}, "lam"),
        ({"lam": -1.0}, "lam"),
        ({"lam": math.nan}, "lam"),
        ({"lam": math.inf}, "lam"),
        ({"proto_s": 0.0}, "proto_s"),
        ({"proto_s": -1e-6}, "proto_s"),
        ({"app_s": 0.0}, "app_s"),
        ({"app_s": "1"}, "app_s"),
        ({"ring": 0}, "ring"),
        ({"ring": 2.5}, "ring"),
        ({"ring": True}, "ring"),
        ({"socket": 0}, "socket"),
        ({"socket": -3}, "socket"),
        ({"socket": 4.0}, "socket"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, name):
    args = {"lam": 1.0, "proto_s": 0.5, "app_s": 0.5, "ring": 4, "socket": 4} | kwargs
    with pytest.raises(ValueError, match=rf"^{name} "):
        tandem(**args)


def test_numpy_integers_are_buffers():
    a = tandem(1.0, 0.5, 0.5, np.int64(4), np.int32(4))
    assert a == tandem(1.0, 0.5, 0.5, 4, 4)


def test_docstring_examples_hold():
    result = doctest.testmod(tandem_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
