"""Khawaja, "Add support to do threaded napi busy poll" (netdev cover letter, net-next v8–v10,
2025): an AF_XDP client and server (``xsk_rr``) exchange UDP packets at a fixed rate, the
client spends a fixed application delay after each reply, and the round trip is compared under
four ways of polling the one NIC queue — interrupts only, ``SO_BUSY_POLL`` inline,
``SO_BUSY_POLL`` from a thread on a core of its own, and NAPI threaded busy polling
(``threaded = busy-poll``, merged into net-next in November 2025). The letter's whole table
(:data:`LETTER`, p5/p50/p95/p99 in ns, five experiments × four configurations) and its seven
observations are here as data, with their source (:data:`SOURCE`).

How it is modelled (irqlab simulates one host's receive path; each choice is ours):

- **One side at a time.** Both hosts run the same configuration. The client's side: the
  replies arrive at the packet rate with fixed spacing (``traffic.kind = "cbr"``: the client
  sends open-loop at a fixed period, so its replies come back at that period; the period
  is ``xsk_rr``'s, 10 ns longer than asked, :data:`SEND_OVERSHOOT_NS`), on one queue,
  to one AF_XDP app (``app.0.io = "xsk"``) whose per-packet work is the letter's delay plus
  :data:`APP_NS` (reading the descriptor, refilling the fill ring, checking the 400-byte
  payload with ``-v``, the two clock reads of ``record_recv``), deterministic: ``xsk_rr``'s
  delay is a spin on the clock after each reply. ``xsk_rr`` takes the RTT when its receiving
  thread has read the reply, before the delay, so the client's latency is the app latency
  (NIC arrival to the end of the app's work) less the delay. The server's side: the same
  configuration and packet rate with no delay (it replies inline). Its Tx of the reply is in
  the constant below.
- **The round trip** = ``WIRE`` + client latency + server latency, percentile by percentile
  (exact when either side's latency is constant, as at most points here; otherwise it takes
  the two sides' tails together, an upper bound). ``WIRE`` is everything irqlab does not
  simulate: both NICs and the wire, both Tx paths, the server's reply. It is the study's one
  calibrated number, fitted to one cell of the letter (:data:`CALIBRATION`: interrupts only,
  12 Kpkt/s + 0 µs, p50): ``WIRE`` = the letter's 13.1 µs less irqlab's client and server p50
  there. Every other cell is evidence, and the table says which is which.
- **The configurations** (:func:`configuration`, per the letter's script): one queue
  (``ethtool -L rx 1``, ring 1024), ``rx-usecs 0`` and adaptive moderation off
  (``nic.itr_us = 0``, a static policy), the IRQ on core 2 and the app on core 3 (its poller
  thread, ``-t``, on core 4), so the host has five cores. Interrupts only: no deferral, no
  busy polling. ``SO_BUSYPOLL``: ``busy_read = 400``, ``napi_defer_hard_irqs = 100``,
  ``gro_flush_timeout = 15 µs``, and ``SO_PREFER_BUSY_POLL`` (the letter's v5 changelog:
  "Updated experiment data with 'SO_PREFER_BUSY_POLL' usage"); the app's thread, finding its
  ring empty, calls ``recvfrom`` (one nonblocking busy poll). Separate: the same, with the
  ``recvfrom`` loop in a second thread on core 4 (``app.0.xsk_poll_core``) while the app's
  thread only reads the ring. NAPI threaded: no ``busy_read``, deferral as above, the NAPI's
  thread in ``busy-poll`` mode pinned to the IRQ's core 2 at ``SCHED_FIFO`` (``chrt -f 50``);
  the app never calls ``recvfrom`` (``-n``). The script also writes ``gro_flush_timeout`` for
  interrupts only, where it does nothing (no deferral, and no GRO on the XDP path); irqlab
  warns of a setting without effect, so that configuration leaves it out. ``xsk_rr``'s Rx ring
  has 4096 descriptors (``UMEM_QLEN``); its frames carry 400 bytes of UDP payload (``-B 400``):
  446 bytes on the wire with the FCS. The tool as posted binds in copy mode; irqlab's XSK is
  zero-copy (the copy is not charged). Without ``-t`` or ``-n`` it calls ``recvfrom`` on every
  empty read, which without busy polling does nothing and costs what irqlab's check of the
  ring costs.
- **The platform** is ``busypoll2013`` as that study's calibration fitted it, as for the other
  study of today's busy polling (``irq-suspend``): the only platform fitted to a busy-polled
  round trip (the interrupt path, a busy poller's costs and the contention between the two);
  none has been fitted to a 2025 host, and this study fits none, so every difference between
  the configurations is the mechanism's, on costs fitted elsewhere. Deep C-states are off
  (``platform.wakeup_after_us = 1e9``, as busypoll2013's "C-states off" rows): the letter does
  not say, but its first row (interrupts 13.1 µs, threaded 13.0 µs) leaves no room for a
  10.7 µs exit from idle on every interrupt.

What the letter's numbers are: per the ``xsk_rr`` posted with the series (RFC, 20 Mar 2025,
``print_percentile``), its "pX" is the mean of the fastest X % of the samples, in 100 ns
buckets, over one second; irqlab's are percentiles. The two agree where the latency barely
varies, as in almost every cell of the letter (p5 to p99 within 0.2–1.3 µs).

The observations become :func:`conclusions` (statement, whether the letter's own table bears
it out under the check, whether irqlab does). Where one speaks of application processing,
irqlab's experiment is compared with the same packet rate without a delay (a point it runs for
the server anyway), so that the difference is the delay's alone; the letter's table has one
row without a delay, 12 Kpkt/s + 0 µs, and is checked against it. Those irqlab does not
reproduce say NO, and docs/busy-polling.md says by which mechanism it differs.

**Until the core has the AF_XDP app and threaded busy polling** (``app.N.io = "xsk"``,
``app.N.xsk_poll_core``, ``napi.N.threaded = "busy-poll"``, ``napi.N.thread_core``,
``napi.N.thread_policy``), :func:`configuration` maps the configurations to stand-ins
(:data:`STAND_INS`): a blocking ``recv`` app instead of the XSK app, device-wide threaded NAPI
woken by the IRQ instead of busy polling, and for the separate poller a NAPI thread on core 4.
Their numbers are not the reproduction; the README says so when they ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from irqlab.studies.common import SweepPlan, Sweeps, markdown_table, preset

NAME = "threaded-busypoll"
TITLE = (
    "Threaded NAPI busy polling (netdev cover letter, 2025): xsk_rr round trips under "
    "interrupts, SO_BUSYPOLL and threaded busy polling"
)
SEED = 2025

SOURCE = (
    'Samiullah Khawaja, "[PATCH net-next v8 0/2] Add support to do threaded napi busy poll", '
    "netdev, 29 Aug 2025, <20250829011607.396650-1-skhawaja@google.com>; the same table in "
    "v10, 28 Oct 2025, <20251028203007.575686-1-skhawaja@google.com>"
)

#: The configurations, in the letter's column order.
CONFIGURATIONS = ("interrupts", "so-busypoll", "so-busypoll-separate", "threaded-busypoll")
LABELS = {
    "interrupts": "interrupts",
    "so-busypoll": "SO_BUSYPOLL",
    "so-busypoll-separate": "SO_BUSYPOLL (separate)",
    "threaded-busypoll": "NAPI threaded",
}
COLORS = {
    "interrupts": "black",
    "so-busypoll": "tab:orange",
    "so-busypoll-separate": "tab:green",
    "threaded-busypoll": "tab:blue",
}


class Experiment(NamedTuple):
    """One of the letter's rows: the packet rate and the client's delay after each reply."""

    rate_pps: float
    delay_us: float

    @property
    def label(self) -> str:
        return f"{self.rate_pps / 1e3:g} Kpkt/s + {self.delay_us:g} µs"


#: The letter's experiments, in its order.
EXPERIMENTS = (
    Experiment(12_000.0, 0.0),
    Experiment(32_000.0, 30.0),
    Experiment(125_000.0, 6.0),
    Experiment(12_000.0, 78.0),
    Experiment(25_000.0, 38.0),
)
#: The letter's percentiles ("pX": see the module's doc).
PERCENTILES = ("p5", "p50", "p95", "p99")
#: The letter's table: experiment → configuration → RTT (p5, p50, p95, p99) in ns.
LETTER: dict[Experiment, dict[str, tuple[int, int, int, int]]] = {
    EXPERIMENTS[0]: {
        "interrupts": (12700, 13100, 13200, 13200),
        "so-busypoll": (12900, 13600, 13800, 13800),
        "so-busypoll-separate": (13300, 14100, 14400, 14400),
        "threaded-busypoll": (12800, 13000, 13000, 13000),
    },
    EXPERIMENTS[1]: {
        "interrupts": (19900, 21100, 21200, 21200),
        "so-busypoll": (16600, 17000, 17100, 17100),
        "so-busypoll-separate": (13100, 13700, 14000, 14000),
        "threaded-busypoll": (12800, 13000, 13000, 13000),
    },
    EXPERIMENTS[2]: {
        "interrupts": (14600, 15400, 15600, 15600),
        "so-busypoll": (17100, 17400, 17600, 17600),
        "so-busypoll-separate": (13300, 13800, 14000, 14000),
        "threaded-busypoll": (12900, 13100, 13100, 13100),
    },
    EXPERIMENTS[3]: {
        "interrupts": (14100, 14300, 14300, 14300),
        "so-busypoll": (16700, 17100, 17200, 17200),
        "so-busypoll-separate": (13200, 13900, 14200, 14200),
        "threaded-busypoll": (12600, 12800, 12800, 12800),
    },
    EXPERIMENTS[4]: {
        "interrupts": (19900, 21000, 21100, 21100),
        "so-busypoll": (16600, 17100, 17100, 17100),
        "so-busypoll-separate": (13000, 13800, 14100, 14100),
        "threaded-busypoll": (12700, 12900, 12900, 12900),
    },
}
#: The letter's observations, in its order and words.
OBSERVATIONS = (
    "Here without application processing all the approaches give the same latency within "
    "1usecs range and NAPI threaded gives minimum latency.",
    "With application processing the latency increases by 3-4usecs when doing inline polling.",
    "Using a dedicated core to drive napi polling keeps the latency same even with application "
    "processing. This is observed both in userspace and threaded napi (in kernel).",
    "Using napi threaded polling in kernel gives lower latency by 1-2usecs as compared to "
    "userspace driven polling in separate core.",
    "Even on a dedicated core, SO_BUSYPOLL adds around 1-2usecs of latency. This is because it "
    "doesn't continuously busy poll until events are ready. Instead, it returns after polling "
    "only once, requiring the process to re-invoke the syscall for each poll, which requires a "
    "new enter/leave kernel cycle and the setup/teardown of the busy poll for every single poll "
    "attempt.",
    "With application processing userspace will get the packet from recv ring and spend some "
    "time doing application processing and then do napi polling. While application processing "
    "is happening a dedicated core doing napi polling can pull the packet of the NAPI RX queue "
    "and populate the AF_XDP recv ring. This means that when the application thread is done "
    "with application processing it has new packets ready to recv and process in recv ring.",
    "Napi threaded busy polling in the kernel with a dedicated core gives the consistent P5-P99 "
    "latency.",
)

#: The one calibrated number: the cell the constant ``WIRE`` is fitted to.
CALIBRATION = ("interrupts", EXPERIMENTS[0], "p50")

#: The script's cores: the IRQ (and the threaded poller) on 2, the app on 3, ``-t``'s poller
#: on 4 (``taskset -c 3-5`` gives each of the app's threads a core).
IRQ_CORE, APP_CORE, POLL_CORE = 2, 3, 4
CORES = 5
#: The app's own work per packet besides the delay (ns; our choice, see the module's doc).
APP_NS = 100.0
#: ``-B 400``: 400 bytes of UDP payload, + UDP, IPv4 and Ethernet headers and the FCS.
FRAME_BYTES = 400 + 8 + 20 + 14 + 4

BASE: dict[str, Any] = {
    # the busypoll2013 platform as that study's calibration fitted it, deep C-states off
    **preset("irqlab.studies.busypoll2013"),
    "platform.wakeup_after_us": 1e9,
    "scheme": "napi",
    "host.cores": CORES,
    "nic.queues": 1,
    "nic.ring_descriptors": 1024,
    "nic.irq_affinity": [IRQ_CORE],
    "nic.itr_us": 0,
    "driver.moderation": "static",
    "traffic.kind": "cbr",
    "traffic.size_bytes": FRAME_BYTES,
    "traffic.flows": 1,
    "app": [{"core": APP_CORE, "cost_ns": APP_NS, "cost_dist": "deterministic", "flows": [0]}],
}

#: The script's SO_BUSYPOLL settings (``busy_read`` 400, deferral 100 × 15 µs) and the
#: tool's SO_PREFER_BUSY_POLL.
_BUSY_POLL = {
    "socket.busy_read_us": 400,
    "socket.prefer_busy_poll": True,
    "kernel.napi_defer_hard_irqs": 100,
    "kernel.gro_flush_timeout_ns": 15_000,
}

# ---------------------------------------------------------------------------------------------
# STAND-INS. True while the core lacks the AF_XDP app and threaded busy polling; then False, and
# configuration() below is the only place that changes. tests/test_study_threaded_busypoll.py
# fails while this is True on a core that has the keys.
STAND_INS = False


def configuration(name: str) -> dict[str, Any]:
    """The scenario keys of configuration ``name`` over :data:`BASE` (the one place that maps
    the letter's configurations to keys)."""
    xsk = {"app.0.io": "xsk", "app.0.xsk_ring": 4096}
    keys: dict[str, dict[str, Any]] = {
        "interrupts": {**xsk, "socket.busy_read_us": 0, "kernel.napi_defer_hard_irqs": 0},
        "so-busypoll": {**xsk, **_BUSY_POLL},
        "so-busypoll-separate": {**xsk, **_BUSY_POLL, "app.0.xsk_poll_core": POLL_CORE},
        "threaded-busypoll": {
            **xsk,
            "socket.busy_read_us": 0,
            "kernel.napi_defer_hard_irqs": 100,
            "kernel.gro_flush_timeout_ns": 15_000,
            "napi.0.threaded": "busy-poll",
            "napi.0.thread_core": IRQ_CORE,
            "napi.0.thread_policy": "fifo",
        },
    }
    if STAND_INS:
        # a blocking recv app; threaded NAPI woken by the IRQ (no busy polling), on the IRQ's
        # core for threaded busy polling and on core 4 for the separate poller
        threads = {"app.0.io": "recv", "kernel.threaded_napi": True}
        keys = {
            "interrupts": {"app.0.io": "recv", "kernel.napi_defer_hard_irqs": 0},
            "so-busypoll": {"app.0.io": "recv", **_BUSY_POLL},
            "so-busypoll-separate": {**threads, "kernel.napi_thread_core": POLL_CORE},
            "threaded-busypoll": {**threads, "kernel.napi_thread_core": IRQ_CORE},
        }
    return keys[name]


# ---------------------------------------------------------------------------------------------

#: Each packet rate's sweep: the server's side (no delay) and the client's delays at that rate.
RATES = tuple(dict.fromkeys(e.rate_pps for e in EXPERIMENTS))
#: ``xsk_rr``'s sending thread polls the clock and sends at the first turn of its loop at or
#: after each period (``now - prev >= period``, then ``prev = now``), so the spacing is the
#: period and part of a turn: irqlab adds this much (our choice: about half a clock read).
#: Without it a period that is a whole number of a poll loop's turns (8 µs, 40 µs) would land
#: every reply at the same point of the loop, and a busy poller's latency would be that one
#: point's, anywhere within a turn.
SEND_OVERSHOOT_NS = 10.0


def sent_pps(rate: float) -> float:
    """The rate ``xsk_rr`` sends at when asked for ``rate`` (:data:`SEND_OVERSHOOT_NS`)."""
    return 1e9 / (1e9 / rate + SEND_OVERSHOOT_NS)


FULL = SweepPlan(duration_ms=500.0, warmup_ms=10.0, replications=1)
QUICK = SweepPlan(duration_ms=50.0, warmup_ms=5.0, replications=1)


def _delays(rate: float) -> list[float]:
    return [0.0, *(e.delay_us for e in EXPERIMENTS if e.rate_pps == rate and e.delay_us > 0)]


def _sweep(name: str, rate: float) -> str:
    return f"{name}-{rate / 1e3:g}k"


def run(sweeps: Sweeps, plan: SweepPlan) -> dict[str, pd.DataFrame]:
    """Every sweep point (``runs``), each side's latency (``sides``), the letter's table
    (``letter``), the calibration, the headline table and the letter's observations."""
    parts = []
    for name in CONFIGURATIONS:
        for rate in RATES:
            costs = [APP_NS + 1e3 * d for d in _delays(rate)]
            base = {**BASE, **configuration(name), "traffic.rate_pps": sent_pps(rate)}
            df = sweeps.planned(_sweep(name, rate), base, {"app.0.cost_ns": costs}, plan)
            df.insert(0, "configuration", name)
            df.insert(1, "rate_pps", rate)
            parts.append(df)
    runs = pd.concat(parts, ignore_index=True)
    s = sides(runs)
    wire = wire_us(s)
    table = headline_table(s, wire)
    return {
        "runs": runs,
        "sides": s,
        "letter": letter_table(),
        "calibration": calibration_table(s, wire),
        "headline": table,
        "conclusions": conclusions(table),
    }


def figures(tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
    return {"rtt.png": plot(tables["headline"])}


def documents(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    return {}


def letter_table() -> pd.DataFrame:
    """The letter's table, a row per experiment and configuration, RTTs in ns."""
    rows = [
        {
            "experiment": e.label,
            "rate_pps": e.rate_pps,
            "delay_us": e.delay_us,
            "configuration": name,
            **{f"rtt_{p}_ns": v for p, v in zip(PERCENTILES, LETTER[e][name], strict=True)},
        }
        for e in EXPERIMENTS
        for name in CONFIGURATIONS
    ]
    return pd.DataFrame(rows)


def sides(runs: pd.DataFrame) -> pd.DataFrame:
    """One host's receive latency per configuration, packet rate and delay, in µs: from the
    reply's arrival at the NIC to the app having read it (the app latency less the delay)."""
    out = pd.DataFrame(
        {
            "configuration": runs["configuration"],
            "rate_pps": runs["rate_pps"],
            "delay_us": ((runs["app.0.cost_ns"] - APP_NS) / 1e3).round(6),
        }
    )
    for q in ("min", "p50", "p99", "max"):
        out[f"latency_{q}_us"] = runs[f"app_latency_us.{q}"] - out["delay_us"]
    out["cores"] = runs["cpu.busy"] * CORES
    for role, core in (("irq", IRQ_CORE), ("app", APP_CORE), ("poll", POLL_CORE)):
        out[f"{role}_core_busy"] = runs[f"per_core.{core}.cpu.busy"]
    out["irq_per_s"] = runs["irq_per_s"]
    out["loss_ratio"] = runs["loss_ratio"]
    return out


def _side(s: pd.DataFrame, name: str, rate: float, delay_us: float) -> pd.Series:
    at = s[(s["configuration"] == name) & (s["rate_pps"] == rate) & (s["delay_us"] == delay_us)]
    return at.iloc[0]


def wire_us(s: pd.DataFrame) -> float:
    """The constant of the round trip (µs) that makes irqlab's calibration cell the letter's."""
    name, e, q = CALIBRATION
    letter = LETTER[e][name][PERCENTILES.index(q)] / 1e3
    client = _side(s, name, e.rate_pps, e.delay_us)[f"latency_{q}_us"]
    server = _side(s, name, e.rate_pps, 0.0)[f"latency_{q}_us"]
    return float(letter - client - server)


def calibration_table(s: pd.DataFrame, wire: float) -> pd.DataFrame:
    name, e, q = CALIBRATION
    return pd.DataFrame(
        [
            {
                "configuration": name,
                "experiment": e.label,
                "percentile": q,
                "letter_us": LETTER[e][name][PERCENTILES.index(q)] / 1e3,
                "client_us": _side(s, name, e.rate_pps, e.delay_us)[f"latency_{q}_us"],
                "server_us": _side(s, name, e.rate_pps, 0.0)[f"latency_{q}_us"],
                "wire_us": wire,
            }
        ]
    )


def headline_table(s: pd.DataFrame, wire: float) -> pd.DataFrame:
    """The letter's p50 and p99 beside irqlab's round trips, per experiment and
    configuration; ``role`` marks the calibrated cell."""
    rows = []
    for e in EXPERIMENTS:
        for name in CONFIGURATIONS:
            client = _side(s, name, e.rate_pps, e.delay_us)
            server = _side(s, name, e.rate_pps, 0.0)
            letter = dict(zip(PERCENTILES, LETTER[e][name], strict=True))
            rtt = {
                q: wire + client[f"latency_{q}_us"] + server[f"latency_{q}_us"]
                for q in ("min", "p50", "p99")
            }
            rows.append(
                {
                    "experiment": e.label,
                    "rate_pps": e.rate_pps,
                    "delay_us": e.delay_us,
                    "configuration": name,
                    "letter_p5_us": letter["p5"] / 1e3,
                    "letter_p50_us": letter["p50"] / 1e3,
                    "letter_p99_us": letter["p99"] / 1e3,
                    "irqlab_min_us": rtt["min"],
                    "irqlab_p50_us": rtt["p50"],
                    "irqlab_p99_us": rtt["p99"],
                    "irqlab_alone_p50_us": wire + 2 * server["latency_p50_us"],
                    "client_p50_us": client["latency_p50_us"],
                    "server_p50_us": server["latency_p50_us"],
                    "client_cores": client["cores"],
                    "loss_ratio": client["loss_ratio"],
                    "role": "calibrated (p50)" if (name, e) == CALIBRATION[:2] else "evidence",
                }
            )
    return pd.DataFrame(rows)


# The checks of the observations, each a tolerance the letter's own table meets (its numbers
# are rounded to 100 ns and its words to whole µs):
#: "within 1usecs range" (the letter's own p50s at 12 Kpkt/s + 0 µs span 1.1 µs)
SAME_US = 1.5
#: "increases by 3-4usecs" (the letter: 3.4–3.8 µs)
RISE_US = (2.5, 4.5)
#: "keeps the latency same" (the letter: within 0.4 µs)
KEEP_US = 0.5
#: "lower latency by 1-2usecs" (the letter: 0.7–1.1 µs at p50); observation 5 ("adds around
#: 1-2usecs ... because it ... returns after polling only once") is checked for its cause, that
#: the recvfrom loop is slower than the kernel's, the size being observation 4's
GAIN_US = (0.5, 2.5)
#: the dedicated core pulls packets while the app works: its advantage over inline polling
#: grows with application processing (the letter: by 3.4 µs or more)
GROWTH_US = 1.0
#: "consistent P5-P99 latency" (the letter: 0.2 µs)
CONSISTENT_US = 0.5

#: A source of round trips: (configuration, experiment, "p50" | "p99" | "spread") → µs.
Get = Callable[[str, Experiment], Mapping[str, float]]


def letter_view(name: str, e: Experiment) -> dict[str, float]:
    """The letter's p50, p99 and spread (p99 − p5), µs, and the p50 without application
    processing: its only such row, 12 Kpkt/s + 0 µs."""
    p5, p50, _p95, p99 = LETTER[e][name]
    alone = LETTER[EXPERIMENTS[0]][name][1]
    return {"p50": p50 / 1e3, "p99": p99 / 1e3, "spread": (p99 - p5) / 1e3, "alone": alone / 1e3}


def irqlab_view(table: pd.DataFrame) -> Get:
    """irqlab's p50, p99 and spread (p99 − min: the nearest to p5 a report gives), µs, and
    the p50 without application processing: at the same packet rate, so that a difference is
    the delay's alone."""

    def get(name: str, e: Experiment) -> dict[str, float]:
        r = table[(table["configuration"] == name) & (table["experiment"] == e.label)].iloc[0]
        return {
            "p50": float(r["irqlab_p50_us"]),
            "p99": float(r["irqlab_p99_us"]),
            "spread": float(r["irqlab_p99_us"] - r["irqlab_min_us"]),
            "alone": float(r["irqlab_alone_p50_us"]),
        }

    return get


def _checks(get: Get) -> list[tuple[str, str, bool]]:
    """Each observation's statement as a check on a source of round trips."""
    idle, busy = EXPERIMENTS[0], EXPERIMENTS[1:]
    sep, thr, inl = "so-busypoll-separate", "threaded-busypoll", "so-busypoll"
    p50 = {name: get(name, idle)["p50"] for name in CONFIGURATIONS}

    def rise(name: str, e: Experiment) -> float:  # with application processing
        return get(name, e)["p50"] - get(name, e)["alone"]

    def gap(name: str, e: Experiment, q: str = "p50") -> float:
        return get(name, e)[q] - get(thr, e)[q]

    def advantage(name: str, e: Experiment, q: str = "p50") -> float:  # over inline polling
        return get(inl, e)[q] - get(name, e)[q]

    def between(x: float, bounds: tuple[float, float]) -> bool:
        return bounds[0] <= x <= bounds[1]

    spread = {(n, e): get(n, e)["spread"] for n in CONFIGURATIONS for e in EXPERIMENTS}
    return [
        (
            "1",
            "without application processing (12 Kpkt/s + 0 µs) the four configurations' p50 "
            "lie within about 1 µs",
            max(p50.values()) - min(p50.values()) <= SAME_US,
        ),
        (
            "1",
            "without application processing NAPI threaded busy polling has the lowest p50",
            min(p50, key=lambda n: p50[n]) == thr,
        ),
        (
            "2",
            "with application processing inline SO_BUSYPOLL's p50 rises by 3–4 µs over none, "
            "in every experiment with a delay",
            all(between(rise(inl, e), RISE_US) for e in busy),
        ),
        (
            "3",
            "a core dedicated to polling keeps its p50 without application processing (within "
            "0.5 µs) with it, in user space (SO_BUSYPOLL separate) and in the kernel (NAPI "
            "threaded)",
            all(abs(rise(n, e)) <= KEEP_US for n in (sep, thr) for e in busy),
        ),
        (
            "4",
            "NAPI threaded busy polling's p50 is 1–2 µs below SO_BUSYPOLL's on a separate "
            "core, in every experiment",
            all(between(gap(sep, e), GAIN_US) for e in EXPERIMENTS),
        ),
        (
            "5",
            "even on a dedicated core SO_BUSYPOLL, which polls once per recvfrom, adds latency "
            "to NAPI threaded busy polling's, at p50 and p99, in every experiment (how much: 4)",
            all(gap(sep, e, q) > 0 for e in EXPERIMENTS for q in ("p50", "p99")),
        ),
        (
            "6",
            "with application processing a dedicated core fills the XSK ring while the app "
            "works: both dedicated-core configurations gain 1 µs or more on inline SO_BUSYPOLL "
            "over what they gain without it, in every experiment with a delay",
            all(
                advantage(n, e) - advantage(n, e, "alone") >= GROWTH_US
                for n in (sep, thr)
                for e in busy
            ),
        ),
        (
            "7",
            "NAPI threaded busy polling gives the most consistent latency: the least spread "
            "from p5 to p99 (irqlab: from its minimum) of the four, at most 0.5 µs, in every "
            "experiment",
            all(
                spread[thr, e] <= CONSISTENT_US
                and all(spread[thr, e] <= spread[n, e] for n in CONFIGURATIONS)
                for e in EXPERIMENTS
            ),
        ),
    ]


def conclusions(table: pd.DataFrame) -> pd.DataFrame:
    """The letter's observations as statements, each checked on the letter's own table
    (``letter``) and on irqlab's round trips (``holds``)."""
    theirs = _checks(letter_view)
    ours = _checks(irqlab_view(table))
    rows = [
        {"observation": n, "statement": text, "letter": bool(a), "holds": bool(b)}
        for (n, text, a), (_, _, b) in zip(theirs, ours, strict=True)
    ]
    return pd.DataFrame(rows)


def _us(x: float) -> str:
    return f"{x:.1f}"


def headline_markdown(table: pd.DataFrame) -> str:
    columns = [
        "experiment",
        "configuration",
        "letter p50 (µs)",
        "irqlab p50 (µs)",
        "letter p99 (µs)",
        "irqlab p99 (µs)",
        "irqlab cores",
        "",
    ]
    rows = [
        f"{r.experiment} | {LABELS[r.configuration]} | {_us(r.letter_p50_us)} "
        f"| {_us(r.irqlab_p50_us)} | {_us(r.letter_p99_us)} | {_us(r.irqlab_p99_us)} "
        f"| {r.client_cores:.2f} | {r.role}"
        for r in table.itertuples(index=False)
    ]
    return markdown_table(columns, rows)


def conclusions_markdown(c: pd.DataFrame) -> str:
    rows = [
        [r.observation, r.statement, "yes" if r.letter else "NO", "yes" if r.holds else "NO"]
        for r in c.itertuples(index=False)
    ]
    return markdown_table(["#", "the letter's observation", "its table", "irqlab"], rows)


#: The headline tables: printed by `irqlab reproduce`, first in its report.
TABLES = {"headline": headline_markdown, "conclusions": conclusions_markdown}


def plot(table: pd.DataFrame) -> Figure:
    """p50 (top) and p99 (bottom) per configuration, one panel per experiment: the letter's
    bars beside irqlab's."""
    fig = Figure(figsize=(12, 5.5), layout="constrained")
    axes = fig.subplots(2, len(EXPERIMENTS), sharey="row", squeeze=False)
    x = range(len(CONFIGURATIONS))
    for col, e in enumerate(EXPERIMENTS):
        d = (
            table[table["experiment"] == e.label]
            .set_index("configuration")
            .loc[list(CONFIGURATIONS)]
        )
        for row, q in enumerate(("p50", "p99")):
            ax = axes[row][col]
            ax.bar([i - 0.2 for i in x], d[f"letter_{q}_us"], width=0.4, color="lightgray",
                   edgecolor="gray")  # fmt: skip
            ax.bar([i + 0.2 for i in x], d[f"irqlab_{q}_us"], width=0.4,
                   color=[COLORS[n] for n in CONFIGURATIONS])  # fmt: skip
            for i, name in enumerate(CONFIGURATIONS):
                if q == CALIBRATION[2] and (name, e) == CALIBRATION[:2]:
                    ax.annotate("calibrated", (i + 0.2, d.loc[name, f"irqlab_{q}_us"]),
                                fontsize=7, ha="center", xytext=(0, 3),
                                textcoords="offset points")  # fmt: skip
            ax.set_xticks(list(x), ["IRQ", "BP", "BP sep.", "threaded"], fontsize=7)
            ax.grid(alpha=0.3, axis="y")
            if row == 0:
                ax.set_title(e.label, fontsize=9)
            if col == 0:
                ax.set_ylabel(f"round trip {q} (µs)")
    irqlab = Patch(facecolor="white", edgecolor="black", label="irqlab (colour: configuration)")
    letter = Patch(facecolor="lightgray", edgecolor="gray", label="letter")
    axes[0][0].legend(handles=[letter, irqlab], fontsize=7, loc="lower left")
    fig.suptitle(
        "xsk_rr round trips: the letter (gray) and irqlab (IRQ = interrupts, BP = SO_BUSYPOLL "
        "inline, BP sep. = on its own core, threaded = NAPI threaded busy polling)",
        fontsize=9,
    )
    return fig


def readme(tables: Mapping[str, pd.DataFrame]) -> str:
    cal = tables["calibration"].iloc[0]
    stand_ins = (
        '**Provisional: this core has neither the AF_XDP app (`app.N.io = "xsk"`, '
        '`app.N.xsk_poll_core`) nor threaded busy polling (`napi.N.threaded = "busy-poll"`), '
        "so these numbers come from stand-ins (a blocking `recv` app; threaded NAPI woken by "
        "the IRQ) and are not the reproduction.**"
        "\n\n"
        if STAND_INS
        else ""
    )
    return (
        stand_ins + f"Source: {SOURCE}.\n\n"
        "- `rtt.png`: p50 and p99 round trips per configuration and experiment, the letter's "
        "beside irqlab's.\n"
        "- `headline.csv`, `conclusions.csv`: the tables below; `letter.csv`: the letter's "
        "whole table (p5/p50/p95/p99, ns); `sides.csv`: each host's receive latency; "
        "`calibration.csv`: the one calibrated number; `runs.csv`: every sweep point.\n"
        "- one folder per configuration and packet rate: the sweeps (rerunning resumes them).\n\n"
        f"Round trip = {cal.wire_us:.2f} µs (both NICs, the wire, both Tx paths, the server's "
        f"reply: calibrated on {LABELS[cal.configuration]}, {cal.experiment}, {cal.percentile}: "
        f"the letter's {cal.letter_us:.1f} µs less irqlab's client {cal.client_us:.2f} µs and "
        f"server {cal.server_us:.2f} µs) + the client's and the server's receive latency. "
        "Every other number is evidence. The letter's pX is xsk_rr's mean of the fastest X % "
        "of the samples; irqlab's is a percentile. irqlab cores: the client host's busy "
        "cores.\n\n"
        + headline_markdown(tables["headline"])
        + "\n"
        + conclusions_markdown(tables["conclusions"])
    )
