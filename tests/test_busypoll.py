"""Busy polling, preferred busy polling and IRQ suspension with request/response traffic.

Each rule of the kernel's state machine (net/core/dev.c ``__napi_busy_loop``,
``busy_poll_stop``, ``napi_complete_done``, ``napi_watchdog``; fs/eventpoll.c ``ep_poll``;
Documentation/networking/napi.rst) is a behaviour test on whole runs; then the closed loop's
exact agreement, the busy core, the idle wake-up cost, conservation and determinism, and bad
input.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irqlab
from conftest import assert_conserved

# One core, deterministic costs of the emmerich2015 preset (irq 700 ns, softirq 300 ns,
# poll 500 ns, unmask 33 ns, proto 462 ns); an app answering requests.
BASE = {
    "platform.preset": "emmerich2015",
    "platform.proto_dist": "deterministic",
    "platform.wakeup_ns": 0,
    "traffic.kind": "rr",
    "app": [{"core": 0, "cost_ns": 1000, "cost_dist": "deterministic"}],
    "run.duration_ms": 10,
    "run.warmup_ms": 1,
}
DEFER = {"kernel.napi_defer_hard_irqs": 2, "kernel.gro_flush_timeout_ns": 20_000}
EPOLL_APP = {"app": [{"core": 0, "cost_ns": 1000, "cost_dist": "deterministic", "io": "epoll"}]}


def run(**overrides):
    return irqlab.run({**BASE, **{k.replace("__", "."): v for k, v in overrides.items()}})


def run_d(d: dict):
    return irqlab.run({**BASE, **d})


def without_scenario(rep: dict) -> dict:
    return {k: v for k, v in rep.items() if k != "scenario"}


# ----- the state machine's rules ---------------------------------------------------------------


def test_no_poll_unmasks_the_irq_while_a_busy_poller_owns_the_napi():
    # app 0 busy-polls in epoll_wait for up to 1 ms and rarely gets a request of its own: while
    # it owns the NAPI it polls app 1's packets. Every arrival would raise an IRQ (no ITR) if
    # a poll of the loop re-enabled the vector.
    rep = run_d(
        {
            "rr.rate_rps": 400_000,
            "rr.clients": 8,
            "nic.itr_us": 0,
            "epoll.busy_poll_us": 1000,
            "host.cores": 2,
            "app": [
                {
                    "core": 0,
                    "cost_ns": 1000,
                    "cost_dist": "deterministic",
                    "flows": [0],
                    "io": "epoll",
                },
                {
                    "core": 1,
                    "cost_ns": 1000,
                    "cost_dist": "deterministic",
                    "flows": list(range(1, 8)),
                },
            ],
        }
    )
    b = rep["busy_poll"]
    assert b["packets"] > 4 * b["sessions"], b  # many packets per ownership
    # at most the one IRQ that finds the vector still enabled when the loop takes the NAPI
    assert 0 < b["irqs_while_owned"] <= b["sessions"], b


def test_a_busy_poll_never_processes_more_than_its_budget():
    for budget, want in [(0, 8), (3, 3), (20, 20)]:
        rep = run_d(
            {
                "rr.rate_rps": 600_000,
                "rr.clients": 64,
                "socket.busy_read_us": 100,
                "socket.busy_poll_budget": budget,
                "socket.prefer_busy_poll": True,
                "nic.ring_descriptors": 4096,
                **DEFER,
            }
        )
        b = rep["busy_poll"]
        # the ring often holds more: polls use their whole budget, and never more
        assert b["most_per_poll"] == want, (budget, b)
        assert b["polls"] > 1000
        assert b["packets"] <= want * b["polls"]


def test_epoll_wait_with_a_zero_timeout_never_busy_polls():
    with pytest.warns(irqlab.ConfigWarning, match="never busy-polls"):
        rep = run_d(
            {
                **EPOLL_APP,
                "epoll.timeout_ms": 0,
                "epoll.batch_ns": 200,
                "epoll.busy_poll_us": 50,
            }
        )
    b = rep["busy_poll"]
    assert b["empty_epoll_waits"] > 1000
    assert b["sessions"] == 0 and b["polls"] == 0
    assert rep["cpu_ps"]["busy_poll"] == 0
    assert rep["cpu"]["idle"] < 1e-3  # it spins on epoll_wait instead
    assert rep["transactions_per_s"] > 0


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
def test_preferred_busy_polling_without_deferral_changes_nothing():
    load = {"rr.rate_rps": 600_000, "rr.clients": 64, "socket.busy_read_us": 50}
    for defer in [{}, {"kernel.napi_defer_hard_irqs": 2}, {"kernel.gro_flush_timeout_ns": 20_000}]:
        plain = run_d({**load, **defer})
        prefer = run_d({**load, **defer, "socket.prefer_busy_poll": True})
        assert without_scenario(plain) == without_scenario(prefer), defer
    # with deferral it does change (busy_poll_stop arms the timer instead of re-enabling)
    plain = run_d({**load, **DEFER})
    prefer = run_d({**load, **DEFER, "socket.prefer_busy_poll": True})
    assert without_scenario(plain) != without_scenario(prefer)
    assert prefer["irq_per_s"] < plain["irq_per_s"]


def test_the_watchdog_is_not_re_armed_while_the_napi_is_owned():
    # deferral and a poller that owns the NAPI between requests: the timer is armed only when
    # a loop leaves (busy_poll_stop's completion), never by the polls inside the loop
    rep = run_d(
        {
            "rr.rate_rps": 300_000,
            "rr.clients": 8,
            "socket.busy_read_us": 1000,
            **DEFER,
        }
    )
    b, n = rep["busy_poll"], rep["counts"]
    assert b["polls"] > 2 * b["sessions"]  # polls inside loops, not only the final ones
    assert n["timer_ticks"] <= b["sessions"], (n, b)
    # and the expiries that find the NAPI owned are lost, as napi_watchdog does
    assert b["watchdog_lost"] > 0


def test_the_busy_loop_deadline_uses_the_kernels_clock_granularity():
    # requests 1 ms apart: each loop finds nothing and times out after busy_read_us of
    # 1024 ns units, checked against local_clock() >> 10 (so 50 units: 51.2 to 52.224 us)
    rep = run_d(
        {
            "rr.remote_us": 1000,
            "socket.busy_read_us": 50,
            "platform.busy_iter_ns": 1,
            "platform.poll_ns": 0,
            "platform.unmask_ns": 0,
        }
    )
    b = rep["busy_poll"]
    per_loop_us = rep["cpu_ps"]["busy_poll"] / b["sessions"] / 1e6
    assert 50 * 1.024 < per_loop_us <= 51 * 1.024 + 0.001, per_loop_us


def test_the_softirq_hands_the_napi_to_a_preferring_poller_only_with_deferral():
    heavy = {
        "rr.rate_rps": 3_000_000,
        "rr.clients": 64,
        "nic.ring_descriptors": 4096,
        "socket.busy_read_us": 20,
        "socket.prefer_busy_poll": True,
    }
    assert run_d({**heavy, **DEFER})["busy_poll"]["handovers"] > 0
    with pytest.warns(irqlab.ConfigWarning, match="kernel.napi_defer_hard_irqs"):
        assert run_d(heavy)["busy_poll"]["handovers"] == 0


# ----- IRQ suspension (napi.rst) -----------------------------------------------------------

SUSPEND = {
    **EPOLL_APP,
    **DEFER,
    "epoll.prefer_busy_poll": True,
    "epoll.busy_poll_us": 0,
    "epoll.batch_ns": 300,
    "kernel.irq_suspend_timeout_ns": 2_000_000,
}


def test_irqs_stay_off_while_epoll_wait_keeps_finding_events():
    busy = {"rr.rate_rps": 1_200_000, "rr.clients": 64, "nic.ring_descriptors": 4096}
    suspended = run_d({**SUSPEND, **busy})
    deferred = run_d({**SUSPEND, **busy, "kernel.irq_suspend_timeout_ns": 0})
    assert suspended["busy_poll"]["suspends"] > 100
    assert suspended["irq_per_s"] < 0.05 * max(deferred["irq_per_s"], 1), (
        suspended["irq_per_s"],
        deferred["irq_per_s"],
    )


def test_an_empty_epoll_wait_hands_back_to_deferral():
    # light load: most epoll_waits find nothing and resume IRQs (an immediate softirq poll)
    rep = run_d({**SUSPEND, "rr.remote_us": 200})
    b = rep["busy_poll"]
    assert b["resumes"] > 0.9 * b["suspends"] > 0
    assert rep["irq_per_s"] > 0.9 * rep["transactions_per_s"]  # interrupts deliver again


def test_the_suspend_timeout_restarts_processing_when_the_app_stalls():
    # each request takes the app 3 ms, far beyond a 100 us suspension: the timer polls
    app = {"core": 1, "cost_ns": 3_000_000, "cost_dist": "deterministic", "io": "epoll"}
    stall = {
        **SUSPEND,
        "app": [{**app, "flows": [0, 1, 2, 3]}],
        "host.cores": 2,
        "rr.clients": 4,
        "run.duration_ms": 30,
        "kernel.irq_suspend_timeout_ns": 100_000,
    }
    rep = run_d(stall)
    assert rep["busy_poll"]["suspends"] > 0
    assert rep["counts"]["timer_ticks"] > 0
    assert rep["per_core"][0]["cpu"]["softirq"] > 0  # the softirq processed packets meanwhile


def test_irq_suspension_without_deferral_has_no_effect_and_warns():
    no_defer = {k: v for k, v in SUSPEND.items() if k not in DEFER}
    load = {"rr.clients": 8}
    with pytest.warns(irqlab.ConfigWarning, match="kernel.napi_defer_hard_irqs"):
        on = run_d({**no_defer, **load})
    with pytest.warns(irqlab.ConfigWarning):  # prefer without deferral
        off = run_d({**no_defer, **load, "kernel.irq_suspend_timeout_ns": 0})
    a, b = without_scenario(on), without_scenario(off)
    a["busy_poll"] = {k: v for k, v in a["busy_poll"].items() if k not in ("suspends", "resumes")}
    b["busy_poll"] = {k: v for k, v in b["busy_poll"].items() if k not in ("suspends", "resumes")}
    assert a == b


# ----- what busy polling does to the host --------------------------------------------------


@pytest.mark.parametrize("clients", [1, 4, 32])
def test_a_busy_polling_core_is_busy_whatever_the_load(clients):
    rep = run_d({"rr.clients": clients, "rr.remote_us": 20, "socket.busy_read_us": 50})
    assert rep["cpu"]["idle"] == 0.0
    if clients < 32:  # (32 clients keep the app busy: its socket is never empty)
        assert rep["cpu"]["busy_poll"] > 0


def test_busy_polling_removes_the_wake_up_cost_of_deep_idle_states():
    deep = {"platform.wakeup_ns": 4000, "platform.wakeup_after_us": 20, "rr.remote_us": 30}
    for busy, expect_same in [({}, False), ({"socket.busy_read_us": 50}, True)]:
        shallow = run_d({**deep, **busy, "platform.wakeup_ns": 0})
        sleepy = run_d({**deep, **busy})
        same = sleepy["transactions_per_s"] == shallow["transactions_per_s"]
        assert same == expect_same, (busy, sleepy["transactions_per_s"])
        if not expect_same:
            # the interrupt path pays the exit from the idle state on every request
            lost = 1 / sleepy["transactions_per_s"] - 1 / shallow["transactions_per_s"]
            assert lost == pytest.approx(4e-6, rel=0.05)


def test_one_client_with_one_request_runs_at_one_over_the_sum_of_the_path_costs():
    costs = {
        "platform.irq_ns": 700,
        "platform.mask_ns": 50,
        "platform.softirq_ns": 300,
        "platform.poll_ns": 500,
        "platform.proto_ns": 462,
        "platform.task_wakeup_ns": 150,
        "platform.unmask_ns": 33,
        "platform.ctx_switch_ns": 400,
        "platform.tx_ns": 250,
        "platform.tx_dist": "deterministic",
        "platform.task_wakeup_dist": "deterministic",
        "platform.ctx_switch_dist": "deterministic",
    }
    app_ns, remote_us, response_bytes = 1000, 20, 64
    wire_ns = (response_bytes + 20) * 8 / 10  # at 10 Gbit/s
    period_ns = sum(costs[k] for k in costs if k.endswith("_ns")) + app_ns + wire_ns
    period_ns += remote_us * 1000
    n = 400
    rep = run_d(
        {
            **costs,
            "app": [{"core": 0, "cost_ns": app_ns, "cost_dist": "deterministic"}],
            "rr.remote_us": remote_us,
            "rr.response_bytes": response_bytes,
            "run.warmup_ms": 0.5,
            "run.duration_ms": n * period_ns / 1e6,
        }
    )
    assert rep["rtt_us"]["mean"] == pytest.approx(period_ns / 1000, rel=1e-12)
    assert rep["rtt_us"]["min"] == rep["rtt_us"]["max"]
    assert rep["transactions_per_s"] == pytest.approx(1e9 / period_ns, rel=1e-9)


# ----- conservation, determinism, input ----------------------------------------------------

MECHANISMS = {
    "interrupts": {},
    "deferral": DEFER,
    "busy-read": {"socket.busy_read_us": 50},
    "busy-read-prefer": {"socket.busy_read_us": 50, "socket.prefer_busy_poll": True, **DEFER},
    "epoll": {**EPOLL_APP, "epoll.batch_ns": 200},
    "epoll-busy": {**EPOLL_APP, "epoll.busy_poll_us": 64, "epoll.batch_ns": 200},
    "irq-suspend": SUSPEND,
    "open-loop": {"rr.rate_rps": 400_000, "rr.clients": 16, "socket.busy_read_us": 50},
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_conserves_packets_and_cpu_time_and_is_deterministic(name):
    params = {**MECHANISMS[name], "rr.clients": 8, "platform.proto_dist": "exponential"}
    if name == "open-loop":
        params["rr.clients"] = 16
        params.pop("rr.outstanding", None)
    else:
        params["rr.outstanding"] = 2
    params["rr.remote_dist"] = "exponential"
    a, b = run_d(params), run_d(params)
    assert_conserved(a)
    assert a == b
    assert a["transactions_per_s"] > 0


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("kernel.irq_suspend_timeout_ns", -1, "kernel.irq_suspend_timeout_ns"),
        ("socket.busy_read_us", -5, "socket.busy_read_us"),
        ("epoll.maxevents", 0, "epoll.maxevents"),
        ("socket.busy_poll_budget", 70_000, "socket.busy_poll_budget"),
        ("rr.clients", 0, "rr.clients"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_key(key, value, words):
    with pytest.raises(irqlab.ConfigError) as e:
        run_d({key: value})
    msg = str(e.value)
    assert words in msg and "\n" not in msg


def test_busy_polling_with_no_application_is_an_error():
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({"socket.busy_read_us": 50, "run.duration_ms": 1})
    assert "socket.busy_read_us" in str(e.value) and "app" in str(e.value)
    with pytest.raises(irqlab.ConfigError, match="polling loop"):
        run_d({"scheme": "poll", "socket.busy_read_us": 50})
    with pytest.raises(irqlab.ConfigError, match=r"traffic\.kind"):
        irqlab.run({"traffic.kind": "rr", "run.duration_ms": 1})


def test_settings_that_cannot_take_effect_warn_naming_what_is_missing():
    with pytest.warns(irqlab.ConfigWarning, match="socket.prefer_busy_poll.*kernel.napi_defer"):
        run_d({"socket.busy_read_us": 50, "socket.prefer_busy_poll": True, "run.duration_ms": 1})
    with pytest.warns(irqlab.ConfigWarning, match="irq_suspend_timeout_ns.*epoll.prefer_busy_poll"):
        run_d({**EPOLL_APP, **DEFER, "kernel.irq_suspend_timeout_ns": 1e6, "run.duration_ms": 1})
    with pytest.warns(irqlab.ConfigWarning, match="irq_suspend_timeout_ns.*epoll"):
        run_d({**DEFER, "kernel.irq_suspend_timeout_ns": 1e6, "run.duration_ms": 1})
    with pytest.warns(irqlab.ConfigWarning, match="epoll.busy_poll_us.*timeout_ms = 0"):
        run_d(
            {
                **EPOLL_APP,
                "epoll.timeout_ms": 0,
                "epoll.batch_ns": 100,
                "epoll.busy_poll_us": 50,
                "run.duration_ms": 1,
            }
        )


# random busy-poll scenarios: no panic, packets and CPU time conserved, deterministic
_random = st.fixed_dictionaries(
    {
        "run.seed": st.integers(0, 2**32),
        "run.duration_ms": st.floats(0.2, 3),
        "run.warmup_ms": st.floats(0, 0.5),
        "host.cores": st.integers(1, 2),
        "nic.queues": st.integers(1, 2),
        "nic.itr_us": st.sampled_from([0, 10, 100]),
        "nic.ring_descriptors": st.integers(4, 256),
        "nic.tx_ring_descriptors": st.integers(1, 64),
        "rr.clients": st.integers(1, 16),
        "rr.outstanding": st.integers(1, 4),
        "rr.remote_us": st.floats(0, 50),
        "rr.remote_dist": st.sampled_from(["deterministic", "exponential"]),
        "rr.rate_rps": st.sampled_from([0, 50_000, 500_000]),
        "socket.busy_read_us": st.sampled_from([0, 5, 50]),
        "socket.busy_poll_budget": st.integers(0, 16),
        "socket.prefer_busy_poll": st.booleans(),
        "epoll.busy_poll_us": st.sampled_from([0, 10, 100]),
        "epoll.prefer_busy_poll": st.booleans(),
        "epoll.maxevents": st.integers(1, 8),
        "epoll.batch_ns": st.floats(1, 2000),
        "kernel.irq_suspend_timeout_ns": st.sampled_from([0, 50_000, 2_000_000]),
        "kernel.napi_defer_hard_irqs": st.integers(0, 3),
        "kernel.gro_flush_timeout_ns": st.sampled_from([0, 5_000, 50_000]),
        "kernel.napi_weight": st.integers(1, 64),
        "platform.busy_iter_ns": st.floats(10, 500),
        "platform.proto_dist": st.sampled_from(["deterministic", "exponential"]),
        "io0": st.sampled_from(["recv", "epoll"]),
        "io1": st.sampled_from(["recv", "epoll"]),
        "core1": st.integers(0, 1),
    }
)


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random)
def test_random_busy_poll_scenarios_conserve_and_repeat(p):
    p = dict(p)
    io0, io1, core1 = p.pop("io0"), p.pop("io1"), min(p.pop("core1"), p["host.cores"] - 1)
    clients = p["rr.clients"]
    half = max(1, clients // 2)
    apps = [{"core": 0, "io": io0, "flows": list(range(half)), "cost_dist": "exponential"}]
    if clients > 1:
        apps.append({"core": core1, "io": io1, "flows": list(range(half, clients))})
    params = {**BASE, **p, "app": apps}
    a = irqlab.run(params)
    assert_conserved(a)
    assert a == irqlab.run(params)
