"""An application on the core that does protocol processing: a two-stage tandem queue under
preemptive-resume priority.

Packets arrive as a Poisson stream (rate λ). Stage 1 is protocol processing in softirq: one
exponential server (rate μ1 = 1/``proto_s``) with room for ``ring`` packets *including the one
in service* (a packet keeps its Rx descriptor until its protocol processing ends); an arrival
that finds the ring full is dropped ("dropped_nic"). A stage-1 completion offers the packet to
the socket, which holds at most ``socket`` packets: it is enqueued ("delivered" by the kernel)
or dropped ("dropped_socket"). Stage 2 is the application thread: one exponential server (rate
μ2 = 1/``app_s``) that takes the head packet out of the socket, freeing its slot, and processes
it. The application only runs while stage 1 is empty: a stage-1 packet pre-empts it at once, it
keeps its packet and resumes later (memoryless, so resuming and restarting are the same). A free
application takes a packet only while it runs, i.e. once stage 1 is empty.

The host is a Markov chain on (n1, s, a): n1 = 0..ring packets in stage 1, s = 0..socket packets
in the socket, a = 1 while the application holds a packet. The states n1 = 0, a = 0, s > 0 are
vanishing (the application takes a packet at once: a = 1, s − 1), so the generator is built on
the tangible states only, and a transition into a vanishing state lands in its successor
(:func:`generator`). Stage 1 alone is an M/M/1/ring queue whatever the application does.

The mean latencies come from a tagged packet (PASTA: it sees the stationary distribution):

* While the tagged packet is in stage 1, stage 1 is not empty, so the application does not run
  and the socket does not shrink; the n1 packets ahead of it are offered to the socket first.
  Whether it is dropped at the socket is therefore decided at its arrival: it is accepted iff
  s + n1 < socket. Its stage-1 sojourn is n1 + 1 exponential services (Erlang), so
  ``latency_s`` = E[(n1 + 1)/μ1 · 1{accepted}]/P(accepted), summed over the arrival states. The
  socket drop decision is correlated with the sojourn (long queues mean drops): the mean over
  *all* ring-accepted packets, ``latency_all_s`` = E[n1]/(λ(1 − loss_nic)) (Little), differs
  from ``latency_s`` unless socket drops are impossible.
* Its time in the socket and the application depends on the packets that arrived behind it in
  stage 1 (they pre-empt the application): an absorbing chain on (k, b), position k in stage 1
  and b packets behind it (b ≤ ring − k), gives the law of b at its stage-1 completion
  (:func:`behind_distribution`). From then on a chain on (n1, u, h) follows it: n1 packets in
  stage 1, u application services still needed before it leaves (packets ahead of it in the
  socket and the application, plus its own), h = 1 while the application holds a packet. Its
  expected time to absorption ("consumed") solves a linear system (:func:`consume_time`).
  ``app_latency_s`` = E[(T1 + T2) · 1{accepted}]/P(accepted).

Every packet accepted into the socket is consumed, so Little's law gives an independent check:
``app_latency_s`` = ``latency_s`` + (E[s] + E[a])/``throughput_pps``. With unbounded buffers the
figures are the classical ones: stage 1 is M/M/1 (sojourn 1/(μ1 − λ)) and, the server being work
conserving, a packet's consumption time is a delay busy period of the high class started by the
M/G/1 workload it finds plus its own two services, (E[V] + 1/μ1 + 1/μ2)/(1 − λ/μ1) with
E[V] = λE[X²]/(2(1 − ρ)), X = X1 + X2, ρ = λ(1/μ1 + 1/μ2). The tests check all three.

The chains have about 2(ring + 1)(socket + 1) and ring²/2 states: sized for the small buffers of
a socket in packets (ring, socket ≤ a few hundred). Larger ones are refused before anything is
built (:data:`MAX_RING`, and the host chain at most
:data:`~irqlab.analytic.limits.MAX_CHAIN_STATES` states): the tagged packet's absorption
probabilities are a dense matrix of ring²(ring + 1)/2 floats (67 MB at ring = 256, 4.3 GB at
1024), and the 2-D host chain's LU fills in (about 1 GB at 262,144 states).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spl

from irqlab.analytic.limits import MAX_CHAIN_STATES
from irqlab.errors import ConfigError
from irqlab.formatting import memory

#: The largest ring the model takes (see the module's docs).
MAX_RING = 256


@dataclass(frozen=True)
class TandemResult:
    """Steady-state figures of protocol processing and an application sharing one core."""

    offered_pps: float  #: λ, arrivals per second
    throughput_pps: float  #: stage-1 completions accepted into the socket ("delivered"), per s
    app_pps: float  #: application completions per second (= throughput_pps in steady state)
    loss_nic: float  #: P(an arrival finds the ring full) (PASTA)
    loss_socket: float  #: socket drops per offered packet
    cpu_softirq: float  #: P(n1 > 0), CPU share of protocol processing
    cpu_app: float  #: P(n1 = 0, a = 1), CPU share of the application
    cpu_idle: float  #: P(n1 = 0, a = 0) (then the socket is empty)
    mean_ring: float  #: E[n1], packets in stage 1 (the ring)
    mean_socket: float  #: E[s], packets in the socket
    mean_app: float  #: E[a], packets held by the application
    latency_s: float  #: mean arrival → stage-1 end of the packets accepted into the socket
    app_latency_s: float  #: mean arrival → application completion of the packets consumed
    latency_all_s: float  #: E[n1]/(λ(1 − loss_nic)): mean stage-1 sojourn of all ring packets

    @property
    def socket_drop_pps(self) -> float:
        """Socket drops per second."""
        return self.offered_pps * self.loss_socket

    @property
    def loss(self) -> float:
        """Fraction of the offered packets that the application never sees."""
        return self.loss_nic + self.loss_socket


def _check(lam: float, proto_s: float, app_s: float, ring: int, socket: int) -> None:
    for name, value in (("lam", lam), ("proto_s", proto_s), ("app_s", app_s)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a real number, not {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be positive and finite, not {value!r}")
    for name, value in (("ring", ring), ("socket", socket)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer, not {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, not {value!r}")
    _check_size(ring, socket)


def _check_size(ring: int, socket: int | None) -> None:
    """Refuses buffers whose chains are too large to solve (a ConfigError, a ValueError),
    before anything is built; ``socket`` None: only the tagged packet's chain (the ring)."""
    if ring > MAX_RING:
        behind = ring * (ring + 1) // 2
        raise ConfigError(
            f"ring = {ring:,}: the tagged packet's chain has {behind:,} states and a "
            f"{behind:,} × {ring:,} matrix of absorption probabilities "
            f"({memory(behind * ring * 8)}); the tandem model takes a ring of at most "
            f"{MAX_RING} packets"
        )
    if socket is not None and (host := 2 * (ring + 1) * (socket + 1)) > MAX_CHAIN_STATES:
        raise ConfigError(
            f"ring = {ring:,}, socket = {socket:,}: the host chain has about {host:,} states "
            f"(2 (ring + 1)(socket + 1)); the tandem model solves chains of at most "
            f"{MAX_CHAIN_STATES:,} states"
        )


# --- the host chain on (n1, s, a) --------------------------------------------------------------


def _settle(n1: np.ndarray, s: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, ...]:
    """The tangible state a (possibly vanishing) state leads to: with stage 1 empty, a free
    application takes the head packet of a non-empty socket at once."""
    take = (n1 == 0) & (a == 0) & (s > 0)
    return n1, s - take, a | take


def states(ring: int, socket: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n1, s, a of the tangible states, in the order of :func:`generator`'s rows.

    >>> n1, s, a = states(1, 1)
    >>> list(zip(n1.tolist(), s.tolist(), a.tolist()))
    [(0, 0, 0), (0, 0, 1), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)]
    """
    grid = np.meshgrid(np.arange(ring + 1), np.arange(socket + 1), np.arange(2), indexing="ij")
    n1, s, a = (x.ravel() for x in grid)
    tangible = ~((n1 == 0) & (a == 0) & (s > 0))
    return n1[tangible], s[tangible], a[tangible]


def _lookup(ring: int, socket: int, n1: np.ndarray, s: np.ndarray, a: np.ndarray) -> np.ndarray:
    """(n1, s, a) → row of the tangible state; −1 for the vanishing ones."""
    index = np.full((ring + 1, socket + 1, 2), -1, dtype=np.int64)
    index[n1, s, a] = np.arange(len(n1))
    return index


def _generator(
    n1: np.ndarray, s: np.ndarray, a: np.ndarray, index: np.ndarray, rates: tuple[float, ...]
) -> sp.csr_array:
    lam, mu1, mu2 = rates
    ring, socket = index.shape[0] - 1, index.shape[1] - 1
    i = np.arange(len(n1))
    rows, cols, vals = [], [], []

    def add(mask: np.ndarray, rate: float, dest: tuple[np.ndarray, ...]) -> None:
        to = index[_settle(*dest)]
        rows.append(i[mask])
        cols.append(to)
        vals.append(np.full(int(mask.sum()), rate))

    up = n1 < ring  # an arrival joins stage 1 (else dropped at the ring: no change)
    add(up, lam, (n1[up] + 1, s[up], a[up]))
    done = n1 > 0  # stage-1 completion: into the socket if it has room, else dropped
    add(done, mu1, (n1[done] - 1, np.minimum(s[done] + 1, socket), a[done]))
    app = (n1 == 0) & (a == 1)  # the application runs and completes its packet
    add(app, mu2, (n1[app], s[app], np.zeros_like(a[app])))
    size = len(n1)
    q = sp.coo_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size)
    ).tocsr()
    return (q - sp.diags_array(np.asarray(q.sum(axis=1)).ravel())).tocsr()


def generator(lam: float, proto_s: float, app_s: float, ring: int, socket: int) -> sp.csr_array:
    """The generator of the host chain on the tangible states of :func:`states`.

    Arrivals (λ) join stage 1 if n1 < ring; a stage-1 completion (μ1, n1 > 0) moves the packet
    into the socket, or drops it if s = socket; the application completes (μ2) only when n1 = 0
    and a = 1. A transition into a vanishing state (n1 = 0, a = 0, s > 0) lands in
    (0, s − 1, 1).

    >>> q = generator(1.0, 0.5, 0.25, 1, 1).toarray()
    >>> q[3].tolist()  # (1, 0, 0): its completion lands in (0, 1, 0), i.e. (0, 0, 1)
    [0.0, 2.0, 0.0, -2.0, 0.0, 0.0, 0.0]
    """
    _check(lam, proto_s, app_s, ring, socket)
    n1, s, a = states(ring, socket)
    index = _lookup(ring, socket, n1, s, a)
    return _generator(n1, s, a, index, (lam, 1.0 / proto_s, 1.0 / app_s))


def _stationary(q: sp.csr_array, scale: float) -> np.ndarray:
    a = q.T.tolil()
    a[0, :] = 1.0  # replace one balance equation by the normalisation
    rhs = np.zeros(q.shape[0])
    rhs[0] = 1.0
    pi = np.clip(spl.spsolve(a.tocsc(), rhs), 0.0, None)
    pi /= pi.sum()
    residual = np.abs(pi @ q).max()
    if not residual < 1e-9 * scale:
        raise ArithmeticError(f"tandem chain not solved (residual {residual:.2e})")
    solved: np.ndarray = pi
    return solved


def distribution(lam: float, proto_s: float, app_s: float, ring: int, socket: int) -> np.ndarray:
    """P(n1, s, a) as an array of shape (ring + 1, socket + 1, 2); 0 on vanishing states.

    >>> p = distribution(1.0, 0.5, 0.25, 4, 4)
    >>> p.shape, round(float(p.sum()), 12), float(p[0, 2, 0])
    ((5, 5, 2), 1.0, 0.0)
    """
    _check(lam, proto_s, app_s, ring, socket)
    n1, s, a = states(ring, socket)
    index = _lookup(ring, socket, n1, s, a)
    rates = (lam, 1.0 / proto_s, 1.0 / app_s)
    pi = _stationary(_generator(n1, s, a, index, rates), max(rates))
    p = np.zeros((ring + 1, socket + 1, 2))
    p[n1, s, a] = pi
    return p


# --- the tagged packet -----------------------------------------------------------------------


def behind_distribution(lam: float, proto_s: float, ring: int) -> np.ndarray:
    """P[k − 1, b]: the probability that b packets are behind a packet when its protocol
    processing ends, given that it joined stage 1 at position k (k − 1 packets ahead).

    An absorbing chain on (k, b), b ≤ ring − k: an arrival (λ) adds one behind if the ring has
    room, a completion (μ1) moves the packet up; at k = 1 a completion absorbs in b.

    >>> behind_distribution(1.0, 1.0, 3)  # λ = μ1: each step is a fair coin
    array([[0.5  , 0.25 , 0.25 ],
           [0.25 , 0.375, 0.375],
           [0.25 , 0.375, 0.375]])
    """
    _check_size(ring, None)
    mu1 = 1.0 / proto_s
    kk, bb = np.meshgrid(np.arange(1, ring + 1), np.arange(ring), indexing="ij")
    keep = kk + bb <= ring
    k, b = kk[keep], bb[keep]
    index = np.full((ring + 2, ring + 1), -1, dtype=np.int64)
    index[k, b] = np.arange(len(k))
    room = k + b < ring
    up = index[k[room], b[room] + 1]
    move = k > 1
    ahead = index[k[move] - 1, b[move]]
    rows = np.concatenate([np.flatnonzero(room), np.flatnonzero(move)])
    cols = np.concatenate([up, ahead])
    vals = np.concatenate([np.full(len(up), lam), np.full(len(ahead), mu1)])
    transient = sp.coo_array((vals, (rows, cols)), shape=(len(k), len(k)))
    out = lam * room + mu1
    system = (sp.diags_array(out) - transient).tocsc()
    last = np.flatnonzero(k == 1)
    absorb = np.zeros((len(k), ring))
    absorb[last, b[last]] = mu1
    x = spl.spsolve(system, absorb).reshape(len(k), ring)
    absorbed: np.ndarray = np.clip(x[index[np.arange(1, ring + 1), 0]], 0.0, None)
    return absorbed


def consume_time(lam: float, proto_s: float, app_s: float, ring: int, socket: int) -> np.ndarray:
    """T[n1, u, h]: the mean time until a packet in the socket or the application is consumed.

    n1 = 0..ring packets in stage 1 (they pre-empt the application), u = 1..socket + 1
    application services still needed before the packet leaves (the packets ahead of it in the
    socket and the application, plus its own), h = 1 while the application holds a packet. The
    state n1 = 0, h = 0 is vanishing: the free application takes a packet (h = 1, same u). Index
    ``T[n1, u - 1, h]``; the entries of vanishing states hold their successor's value.

    >>> t = consume_time(1.0, 1.0, 1.0, 1, 1)  # one service, pre-empted by up to 1 packet
    >>> float(t[0, 0, 1])  # (1 + λ/μ1)/μ2
    2.0
    """
    _check_size(ring, socket)
    mu1, mu2 = 1.0 / proto_s, 1.0 / app_s
    top = socket + 1
    grid = np.meshgrid(np.arange(ring + 1), np.arange(1, top + 1), np.arange(2), indexing="ij")
    n1, u, h = (x.ravel() for x in grid)
    tangible = ~((n1 == 0) & (h == 0))
    n1, u, h = n1[tangible], u[tangible], h[tangible]
    index = np.full((ring + 1, top + 1, 2), -1, dtype=np.int64)
    index[n1, u, h] = np.arange(len(n1))
    rows, cols, vals = [], [], []

    def add(mask: np.ndarray, rate: float, dn1: np.ndarray, du: np.ndarray, dh: np.ndarray) -> None:
        dh = dh | (dn1 == 0)  # settle: with stage 1 empty the application holds a packet
        rows.append(np.flatnonzero(mask))
        cols.append(index[dn1, du, dh])
        vals.append(np.full(int(mask.sum()), rate))

    up = n1 < ring
    add(up, lam, n1[up] + 1, u[up], h[up])
    down = n1 > 0
    add(down, mu1, n1[down] - 1, u[down], h[down])
    # the application completes a packet; u = 1 means it was the tagged one: absorbed
    app = (n1 == 0) & (h == 1) & (u > 1)
    add(app, mu2, n1[app], u[app] - 1, np.zeros_like(h[app]))
    out = lam * up + mu1 * down + mu2 * ((n1 == 0) & (h == 1))
    size = len(n1)
    moves = sp.coo_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size)
    )
    time = spl.spsolve((sp.diags_array(out) - moves).tocsc(), np.ones(size))
    full = np.empty((ring + 1, top, 2))
    full[n1, u - 1, h] = time
    full[0, :, 0] = full[0, :, 1]
    return full


# --- the model ---------------------------------------------------------------------------------


def tandem(lam: float, proto_s: float, app_s: float, ring: int, socket: int) -> TandemResult:
    """Protocol processing (mean ``proto_s`` s, ``ring`` packets) and an application (mean
    ``app_s`` s per packet, reading a socket of ``socket`` packets) on one core, at ``lam``
    packets per second.

    >>> r = tandem(lam=50_000, proto_s=5e-6, app_s=10e-6, ring=64, socket=64)
    >>> print(f"{r.throughput_pps:.1f} {r.cpu_softirq:.3f} {r.cpu_app:.3f} {r.cpu_idle:.3f}")
    50000.0 0.250 0.500 0.250
    >>> print(f"{r.latency_s * 1e6:.3f} us, {r.app_latency_s * 1e6:.3f} us")
    6.667 us, 66.667 us
    >>> r = tandem(lam=50_000, proto_s=5e-6, app_s=30e-6, ring=64, socket=8)  # app too slow
    >>> print(f"{r.app_pps:.0f} {r.loss_socket:.3f} {r.cpu_app:.3f} {r.latency_s * 1e6:.3f} us")
    24908 0.502 0.747 5.737 us
    """
    _check(lam, proto_s, app_s, ring, socket)
    mu1, mu2 = 1.0 / proto_s, 1.0 / app_s
    p = distribution(lam, proto_s, app_s, ring, socket)
    n1 = np.arange(ring + 1)[:, None, None]
    s = np.arange(socket + 1)[None, :, None]
    a = np.arange(2)[None, None, :]

    busy = p[1:].sum()
    throughput = mu1 * float(p[1:, :-1].sum())
    socket_drops = mu1 * float(p[1:, -1].sum())
    app_pps = mu2 * float(p[0, :, 1].sum())
    loss_nic = float(p[-1].sum())
    mean_ring = float((n1 * p).sum())

    # the tagged packet: accepted by the ring (n1 < ring) and the socket (s + n1 < socket)
    accepted = np.broadcast_to((n1 < ring) & (s + n1 < socket), p.shape)
    w = np.where(accepted, p, 0.0)
    p_accept = float(w.sum())
    stage1 = float((w * (n1 + 1)).sum()) / mu1  # E[T1 · 1{accepted}]
    # E[T2 · 1{accepted}]: it enters the socket behind s0 + m0 packets (those it found in the
    # socket and ahead of it in stage 1), with the app holding a0 and b packets behind it
    where = np.nonzero(accepted & (p > 0))
    m0, s0, a0 = where  # the state it found; it joined stage 1 at position m0 + 1
    behind = behind_distribution(lam, proto_s, ring)[m0]  # rows: arrival states; cols: b
    t = consume_time(lam, proto_s, app_s, ring, socket)
    b = np.arange(ring)[None, :]
    u = (s0 + m0 + a0)[:, None]  # u − 1 in consume_time's index: services needed, minus one
    stage2 = float((p[where] * (behind * t[b, u, a0[:, None]]).sum(axis=1)).sum())

    accepted_pps = lam * (1.0 - loss_nic)
    return TandemResult(
        offered_pps=float(lam),
        throughput_pps=throughput,
        app_pps=app_pps,
        loss_nic=loss_nic,
        loss_socket=socket_drops / lam,
        cpu_softirq=float(busy),
        cpu_app=float(p[0, :, 1].sum()),
        cpu_idle=float(p[0, 0, 0]),
        mean_ring=mean_ring,
        mean_socket=float((s * p).sum()),
        mean_app=float((a * p).sum()),
        latency_s=stage1 / p_accept if p_accept > 0 else math.nan,
        app_latency_s=(stage1 + stage2) / p_accept if p_accept > 0 else math.nan,
        latency_all_s=mean_ring / accepted_pps,
    )
