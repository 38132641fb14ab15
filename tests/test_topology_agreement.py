"""Agreement of the host topology with models it must reduce to.

1. Cores with their own vectors are independent one-core hosts. Uniform flow popularity thins
   the Poisson arrivals into independent Poisson streams, one per queue; a core whose vectors
   receive `flows_i` of the `F` flows sees Poisson traffic of rate λ·flows_i/F and shares
   nothing with the other cores. Each of its per-core metrics must therefore have the
   distribution of the same metric of a one-core host at that rate.
2. An app on the core that does protocol processing, with `ideal` interrupts and exponential
   costs, is the tandem Markov chain of `irqlab.analytic.tandem`.

How "agree" is asserted. Each comparison is a Welch-style check: the replications' means differ
by no more than the combined Student-t half-width, sqrt(h_a² + h_b²) (Welch's statistic,
compared with the quantile of n − 1 degrees of freedom, which is slightly conservative). The
level of each comparison is Bonferroni-corrected so that the whole family holds at 99%: a
correct simulator fails one of these tests about 1% of the time at most, and the seeds are
fixed, so the outcome is reproducible. Each test also shows that the check has power: the
model a wrong implementation would follow (the wrong rate, a socket one packet larger or
smaller, ...) is rejected by the same samples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irqlab
from conftest import SALAH, confidence_interval
from irqlab.analytic.tandem import tandem

FAMILY = 0.99  # family-wise confidence of each test's agreement assertions


def check(a: list[float], b: list[float] | float, level: float) -> tuple[bool, str]:
    """Whether the mean of ``a`` agrees with that of ``b`` (replications, or an exact model
    value) at ``level``: |difference| within the combined confidence half-width."""
    ma, ha = confidence_interval(a, level)
    if isinstance(b, list):
        mb, hb = confidence_interval(b, level)
    else:
        mb, hb = float(b), 0.0
    half = math.hypot(ha, hb)
    return abs(ma - mb) <= half, f"{ma:.6g} vs {mb:.6g} (allowed ± {half:.3g})"


# --- 1. cores with their own vectors are one-core hosts --------------------------------------

CORES = 4
FLOWS = 1024
# Salah's costs: a one-core host at 80 kpps is ~59% busy; 320 kpps over four cores puts every
# core at 55-65% busy, where interrupts, polls, batching and queueing all show.
LAM = 320_000.0
REPLICATIONS = 15
RUN = {"run.duration_ms": 1000.0, "run.warmup_ms": 20.0}
PER_CORE = {
    "throughput_pps": lambda r: r["throughput_pps"],
    "latency_us.mean": lambda r: r["latency_us"]["mean"],
    "latency_us.p99": lambda r: r["latency_us"]["p99"],
    "cpu.busy": lambda r: r["cpu"]["busy"],
    "cpu.irq": lambda r: r["cpu"]["irq"],
    "cpu.softirq": lambda r: r["cpu"]["softirq"],
    "irq_per_s": lambda r: r["irq_per_s"],
    "polls_per_s": lambda r: r["polls_per_s"],
    "packets_per_poll": lambda r: r["packets_per_poll"],
}
# Bonferroni over the 4 cores × 9 metrics
CORE_LEVEL = 1 - (1 - FAMILY) / (CORES * len(PER_CORE))


def one_core(rate: float, seed: int) -> dict[str, list[float]]:
    """The per-core metrics of a one-core host at ``rate``, over the replications."""
    base = {**SALAH, **RUN, "scheme": "napi", "traffic.rate_pps": rate, "run.seed": seed}
    reps = [irqlab.run({**base, "run.replication": r}) for r in range(REPLICATIONS)]
    return {name: [f(r) for r in reps] for name, f in PER_CORE.items()}


@pytest.fixture(scope="module")
def multicore() -> dict:
    base = {
        **SALAH,
        **RUN,
        "scheme": "napi",
        "host.cores": CORES,
        "nic.queues": CORES,
        "traffic.kind": "poisson",
        "traffic.flows": FLOWS,
        "traffic.flow_zipf_s": 0.0,
        "traffic.rate_pps": LAM,
        "run.seed": 1,
    }
    reps = [irqlab.run({**base, "run.replication": r}) for r in range(REPLICATIONS)]
    flows = [
        sum(reps[0]["per_queue"][q]["flows"] for q in reps[0]["per_core"][c]["vectors"])
        for c in range(CORES)
    ]
    samples = [
        {name: [f(r["per_core"][c]) for r in reps] for name, f in PER_CORE.items()}
        for c in range(CORES)
    ]
    return {"reps": reps, "flows": flows, "samples": samples}


def test_cores_with_their_own_vectors_behave_like_one_core_hosts(multicore):
    flows, samples = multicore["flows"], multicore["samples"]
    assert sum(flows) == FLOWS
    assert len(set(flows)) > 1, "RSS spreads the flows unevenly: the rates differ per core"
    for rep in multicore["reps"]:
        assert [c["vectors"] for c in rep["per_core"]] == [[c] for c in range(CORES)]
        assert rep["counts"]["ksoftirqd_wakeups"] == 0

    misses = []
    for c in range(CORES):
        rate = LAM * flows[c] / FLOWS
        # independent of the four-core runs: another seed
        ref = one_core(rate, seed=2)
        busy = float(np.mean(samples[c]["cpu.busy"]))
        assert 0.5 < busy < 0.7, f"core {c} is {busy:.0%} busy: not an informative load"
        assert float(np.mean(samples[c]["packets_per_poll"])) > 1.2  # NAPI batches
        for name in PER_CORE:
            ok, text = check(samples[c][name], ref[name], CORE_LEVEL)
            if not ok:
                misses.append(f"core {c} ({flows[c]} flows, {rate:.0f} pps) {name}: {text}")
            # informative: the throughput is resolved to 1%, the CPU shares to 0.01
            if name == "throughput_pps":
                assert confidence_interval(samples[c][name], 0.95)[1] < 0.01 * rate
            if name.startswith("cpu."):
                assert confidence_interval(samples[c][name], 0.95)[1] < 0.01
    assert not misses, "\n".join(misses)


def test_the_per_core_comparison_rejects_the_wrong_rate(multicore):
    """Power: the most unequal core compared with a one-core host at the mean rate λ/N (as if
    RSS spread the flows evenly), or at λ (as if one core took everything), is rejected."""
    flows, samples = multicore["flows"], multicore["samples"]
    c = max(range(CORES), key=lambda i: abs(flows[i] - FLOWS / CORES))
    assert abs(flows[c] - FLOWS / CORES) >= 8  # ≥ 3% off the mean rate
    even = one_core(LAM / CORES, seed=3)
    rejected = {name for name in PER_CORE if not check(samples[c][name], even[name], CORE_LEVEL)[0]}
    # (under NAPI the IRQ rate and its CPU share hardly change with the load: no power there)
    rate_driven = {"throughput_pps", "cpu.busy", "cpu.softirq"}
    assert rate_driven <= rejected, f"core {c} ({flows[c]} flows): rejected only {rejected}"
    everything = one_core(LAM, seed=4)
    rejected = {
        name for name in PER_CORE if not check(samples[c][name], everything[name], CORE_LEVEL)[0]
    }
    assert rate_driven <= rejected and len(rejected) >= 7, rejected


# --- 2. an app on the protocol core is the tandem chain --------------------------------------

PROTO_NS = 2000.0  # μ1 = 500 kpps
APP_NS = 5000.0  # μ2 = 200 kpps
RING = 8
TRUESIZE = 2304  # ixgbe's skb truesize at the standard MTU (socket/config.rs: truesize_of_frame)
RCVBUF = 3 * TRUESIZE
# The socket's capacity in packets. socket.rs `enqueue` refuses a packet only when the memory
# already charged exceeds the buffer (`rmem > rcvbuf`, checked before adding), so it accepts at
# rmem = 0, 2304, 4608 and 6912 ≤ 6912 and refuses the fifth (9216 > 6912): K = 3 + 1 = 4.
# That holds only if reading releases the charge at once: `dequeue` returns the deficit when it
# reaches rcvbuf/4 = 1728 < 2304, i.e. at every read, so rmem = 2304 × packets in the socket.
# The app takes its packet out of the socket when it starts on it (host/socket.rs `app_next`), so
# the packet it holds is the chain's `a`, not one of the socket's K.
K = RCVBUF // TRUESIZE + 1
assert RCVBUF // 4 < TRUESIZE and K == 4
TANDEM = {
    "scheme": "ideal",
    "traffic.kind": "poisson",
    "traffic.size_bytes": 64,
    "platform.proto_ns": PROTO_NS,
    "platform.proto_dist": "exponential",
    "platform.proto_ns_per_byte": 0.0,
    "platform.irq_ns": 0.0,
    "platform.poll_ns": 0.0,
    "platform.softirq_ns": 0.0,
    "platform.unmask_ns": 0.0,
    "platform.mask_ns": 0.0,
    "platform.ctx_switch_ns": 0.0,
    "platform.task_wakeup_ns": 0.0,
    "platform.wakeup_ns": 0.0,
    "nic.ring_descriptors": RING,
    "socket.rcvbuf_bytes": RCVBUF,
    "app.0.core": 0,
    "app.0.cost_ns": APP_NS,
    "app.0.cost_dist": "exponential",
    # Keep ksoftirqd out: it would run protocol processing at the thread level, shared with
    # the app, which the chain does not model. A zero-cost restart of handle_softirqs is the
    # same as going on; only the 2 ms window could still hand over (not at these loads).
    "kernel.max_softirq_restart": 1000,
    "run.seed": 2026,
    "run.duration_ms": 300.0,
    # the ring (8) and the socket (4) forget the empty start within tens of µs
    "run.warmup_ms": 5.0,
}
TANDEM_REPLICATIONS = 15
# light (few socket drops), app-bound (a third of the packets dropped at the socket), and
# ring-bound (ρ1 = 0.7: ~2% lost at the NIC; the app starves, most are dropped at the socket)
LOADS = (80_000.0, 170_000.0, 350_000.0)
TANDEM_METRICS = {
    "throughput_pps": (lambda r: r["throughput_pps"], lambda m: m.throughput_pps),
    "loss at the NIC": (
        lambda r: r["packets"]["dropped_nic"] / r["packets"]["offered"],
        lambda m: m.loss_nic,
    ),
    "loss at the socket": (
        lambda r: r["packets"]["dropped_socket"] / r["packets"]["offered"],
        lambda m: m.loss_socket,
    ),
    "latency_us.mean": (lambda r: r["latency_us"]["mean"], lambda m: m.latency_s * 1e6),
    "app_latency_us.mean": (
        lambda r: r["app_latency_us"]["mean"],
        lambda m: m.app_latency_s * 1e6,
    ),
    "cpu.softirq": (lambda r: r["cpu"]["softirq"], lambda m: m.cpu_softirq),
    "cpu.app": (lambda r: r["cpu"]["app"], lambda m: m.cpu_app),
}
TANDEM_LEVEL = 1 - (1 - FAMILY) / (len(LOADS) * len(TANDEM_METRICS))
RARE = 1e-5  # a model value this small is not resolved by the runs: must not be seen either


def model(lam: float, proto_ns: float = PROTO_NS, socket: int = K):
    return tandem(lam, proto_ns * 1e-9, APP_NS * 1e-9, RING, socket)


@pytest.fixture(scope="module")
def tandem_runs() -> dict[float, list[dict]]:
    return {
        lam: [
            irqlab.run({**TANDEM, "traffic.rate_pps": lam, "run.replication": r})
            for r in range(TANDEM_REPLICATIONS)
        ]
        for lam in LOADS
    }


def agreement(reps: list[dict], m, names=TANDEM_METRICS) -> dict[str, tuple[bool, str]]:
    out = {}
    for name in names:
        sim, expected = TANDEM_METRICS[name]
        samples = [sim(r) for r in reps]
        value = expected(m)
        if value < RARE:
            mean = float(np.mean(samples))
            out[name] = (mean < 10 * RARE, f"{mean:.3g}, model {value:.3g} (unresolved)")
        else:
            out[name] = check(samples, value, TANDEM_LEVEL)
    return out


def test_an_app_on_the_protocol_core_agrees_with_the_tandem_chain(tandem_runs):
    misses = []
    for lam, reps in tandem_runs.items():
        for r in reps:
            assert r["counts"]["ksoftirqd_wakeups"] == 0
            assert r["cpu"]["ksoftirqd"] == 0 and r["cpu"]["irq"] == 0
            assert r["per_app"][0]["in_socket"] <= K
        for name, (ok, text) in agreement(reps, model(lam)).items():
            if not ok:
                misses.append(f"{lam:.0f} pps, {name}: {text}")
    assert not misses, "\n".join(misses)

    # The loads are the regimes they are meant to be.
    light, app_bound, ring_bound = (model(lam) for lam in LOADS)
    assert 0.01 < light.loss_socket < 0.1 and light.loss_nic < RARE
    assert app_bound.loss_socket > 0.3
    assert ring_bound.loss_nic > 0.01 and ring_bound.loss_socket > 0.5


def test_the_tandem_comparison_rejects_a_socket_one_packet_off_and_the_wrong_costs(
    tandem_runs,
):
    """Power: with the same runs, the chain of a socket of K − 1 or K + 1 packets is rejected
    by the app latency at every load, and by the socket loss where the socket decides it (at
    the ring-bound load the starved app's throughput is set by the idle time of protocol
    processing: 80.9%, 80.6%, 80.4% socket loss for K = 3, 4, 5); a 5% error in the rate or in
    the protocol cost is rejected by the throughput or the softirq share."""
    for lam, reps in tandem_runs.items():
        for socket in (K - 1, K + 1):
            names = ["app_latency_us.mean", "loss at the socket"]
            result = agreement(reps, model(lam, socket=socket), names)
            assert not result["app_latency_us.mean"][0], (lam, socket, result)
            if lam < LOADS[-1]:
                assert not result["loss at the socket"][0], (lam, socket, result)
        wrong_rate = agreement(reps, model(1.05 * lam), ["throughput_pps", "cpu.softirq"])
        assert not all(ok for ok, _ in wrong_rate.values()), (lam, wrong_rate)
        wrong_cost = agreement(reps, model(lam, proto_ns=1.05 * PROTO_NS), ["cpu.softirq"])
        assert not wrong_cost["cpu.softirq"][0], (lam, wrong_cost)
