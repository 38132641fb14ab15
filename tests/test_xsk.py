"""AF_XDP apps (``app.N.io = "xsk"``) seen from Python: the report's ``xsk`` counts follow the
kernel's rules (need_wakeup: ``net/xdp/xsk.c`` ``__xsk_recvmsg``, ice's
``ice_clean_rx_irq_zc``; a nonblocking busy poll's budget: ``sk_busy_loop(sk, 1)``), packets
and CPU time are conserved, bad settings are one-line errors naming their key and settings
without effect warn. The rules in full are ``crates/irqlab-core/tests/xsk.rs``'s."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import irqlab
from conftest import assert_conserved
from irqlab.cli import main
from irqlab.scenario import schema

# Two cores: the IRQ and softirq on core 0, an XSK app on core 1 reading the only flow at
# 1000 ns a packet; deterministic costs; 100 kpps CBR for 3 ms after 1 ms of warm-up.
BASE = {
    "host.cores": 2,
    "traffic.kind": "cbr",
    "traffic.rate_pps": 100_000,
    "platform.proto_dist": "deterministic",
    "platform.irq_dist": "deterministic",
    "run.duration_ms": 3,
    "run.warmup_ms": 1,
    "app": [{"core": 1, "flows": [0], "io": "xsk", "cost_ns": 1000, "cost_dist": "deterministic"}],
}
BUSY_POLL = {"socket.busy_read_us": 50}


def run(**settings: object) -> dict[str, Any]:
    return irqlab.run({**BASE, **{k.replace("__", "."): v for k, v in settings.items()}})


def with_app(**fields: object) -> dict[str, object]:
    return {"app": [{**BASE["app"][0], **fields}]}  # type: ignore[index]


def test_the_keys_are_in_the_schema_with_their_defaults():
    keys = schema()
    assert keys["app.N.xsk_ring"]["default"] == 2048
    assert keys["app.N.need_wakeup"]["default"] is True
    assert keys["app.N.xsk_poll_core"]["default"] == -1
    assert keys["platform.xdp_ns"]["default"] == 50.0
    assert "xsk" in keys["app.N.io"]["choices"]


def test_with_need_wakeup_and_irq_delivery_the_app_never_calls_recvfrom():
    rep = run()
    x = rep["xsk"]
    assert x["recvfroms"] == 0 and x["empty_checks"] > 5_000, x
    assert rep["packets"]["consumed"] == rep["packets"]["offered"]
    assert_conserved(rep)


def test_without_need_wakeup_every_empty_check_is_a_recvfrom():
    rep = irqlab.run({**BASE, **with_app(need_wakeup=False)})
    x = rep["xsk"]
    assert x["recvfroms"] == x["empty_checks"] > 5_000, x


def test_a_busy_poll_of_an_xsk_never_processes_more_than_its_budget():
    # overloaded: every nonblocking busy poll takes exactly its budget
    rep = irqlab.run(
        {
            **BASE,
            **BUSY_POLL,
            **with_app(cost_ns=200),
            "traffic.rate_pps": 5e6,
            "socket.busy_poll_budget": 4,
            "socket.prefer_busy_poll": True,
            "kernel.napi_defer_hard_irqs": 2,
            "kernel.gro_flush_timeout_ns": 20_000,
            "run.warmup_ms": 2,
            "run.duration_ms": 1,
        }
    )
    bp = rep["busy_poll"]
    assert bp["most_per_poll"] == 4, bp
    assert abs(bp["packets"] - 4 * bp["polls"]) <= 4, bp
    assert bp["sessions"] == rep["xsk"]["recvfroms"]
    assert rep["packets"]["dropped_nic"] > 0


def test_a_full_xsk_ring_drops_as_the_apps_socket_drops_and_a_socket_buffer_does_not():
    load = {
        **BASE,
        "scheme": "ideal",
        "platform.proto_ns": 100,
        "traffic.kind": "poisson",
        "socket.rcvbuf_bytes": 2304,
        "run.duration_ms": 10,
    }
    rep = irqlab.run({**load, **with_app(cost_ns=5000)})
    assert rep["packets"]["dropped_socket"] == 0
    rep = irqlab.run({**load, **with_app(cost_ns=5000, xsk_ring=2)})
    dropped = rep["packets"]["dropped_socket"]
    assert dropped > 10 and rep["xsk"]["rx_ring_full"] == dropped
    assert rep["per_app"][0]["dropped_socket"] == dropped
    assert_conserved(rep)


def test_a_run_repeats_itself():
    settings = {**BASE, **BUSY_POLL, "traffic.kind": "poisson"}
    assert irqlab.run(settings) == irqlab.run(settings)


@pytest.mark.parametrize(
    ("settings", "key", "words"),
    [
        (with_app(xsk_ring=3), "app.0.xsk_ring", "power of two"),
        (with_app(xsk_ring=0), "app.0.xsk_ring", "power of two"),
        ({**BUSY_POLL, **with_app(xsk_poll_core=7)}, "app.0.xsk_poll_core", "host.cores = 2"),
        (with_app(xsk_poll_core=1), "app.0.xsk_poll_core", "socket.busy_read_us"),
        (
            {"host.cores": 1, "nic.queues": 2, "traffic.flows": 8, "app": [{"io": "xsk"}]},
            "app.0.io",
            "one queue",
        ),
    ],
)
def test_bad_xsk_settings_are_one_line_errors_naming_the_key(settings, key, words):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({**BASE, **settings})
    msg = str(e.value)
    assert msg.startswith(key) and words in msg and "\n" not in msg, msg


def test_the_cli_reports_a_bad_xsk_setting_in_one_line(tmp_path):
    scenario = tmp_path / "xsk.toml"
    scenario.write_text('[[app]]\ncore = 0\nio = "xsk"\nxsk_ring = 1000\n')
    out = CliRunner().invoke(main, ["run", str(scenario)])
    assert out.exit_code != 0
    assert "Traceback" not in out.output
    lines = [line for line in out.output.splitlines() if "xsk_ring" in line]
    assert len(lines) == 1 and "power of two" in lines[0], out.output


def test_xsk_settings_of_a_socket_app_have_no_effect_and_warn():
    with pytest.warns(irqlab.ConfigWarning, match=r"app\.0\.xsk_ring.*app\.0\.io = \"xsk\""):
        irqlab.run({**BASE, **with_app(io="recv", xsk_ring=4096)})
    with pytest.warns(irqlab.ConfigWarning, match=r"app\.0\.rcvbuf_bytes.*no socket buffer"):
        run(**with_app(rcvbuf_bytes=4096))
