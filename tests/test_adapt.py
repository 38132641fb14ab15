"""The receive-load controllers (``adapt.scheme``) on the ``chang2007`` platform: packets, socket
and application conserved, CPU time accounted, runs deterministic, for every scheme; bad
settings refused before the run with one line naming the key."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import irqlab
from irqlab.cli import main
from irqlab.studies.chang2007 import app, traffic

SCHEMES = ["none", "qapolling", "aic", "rhip", "rhip-noksd"]


def scenario(adapt: str, size: int, **extra) -> dict:
    return {
        "platform.preset": "chang2007",
        "scheme": "napi",
        "traffic.kind": "poisson",
        **traffic(size),
        **app(),
        "adapt.scheme": adapt,
        **({} if adapt == "none" else {"adapt.interval_ms": 5.0}),
        "run.warmup_ms": 7.0,
        "run.duration_ms": 60.0,
        "run.seed": 13,
        **extra,
    }


def conserved(r: dict) -> None:
    p = r["packets"]
    assert p["offered"] + p["in_flight_at_warmup"] == (
        p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["dropped_tx"] + p["in_flight"]
    )
    assert p["offered"] + p["in_host_at_warmup"] == (
        p["consumed"]
        + p["transmitted"]
        + p["to_stack"]
        + p["dropped_nic"]
        + p["dropped_socket"]
        + p["dropped_tx"]
        + p["in_flight"]
        + p["in_socket"]
        + p["in_app"]
        + p["in_tx_ring"]
    )
    ps = r["cpu_ps"]
    assert sum(v for k, v in ps.items() if k != "measured") == ps["measured"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [64, 512, 1500])
def test_packets_and_cpu_time_are_conserved(scheme, size):
    r = irqlab.run(scenario(scheme, size))
    conserved(r)
    assert r["packets"]["consumed"] > 0


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_same_seed_gives_the_same_report(scheme):
    a = irqlab.run(scenario(scheme, 1024))
    b = irqlab.run(scenario(scheme, 1024))
    assert a == b
    c = irqlab.run(scenario(scheme, 1024, **{"run.seed": 14}))
    assert c["packets"] != a["packets"]


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"adapt.buflow": 0.9}, "adapt.buflow"),
        ({"adapt.bufupper": 1.5}, "adapt.bufupper"),
        ({"adapt.alpha": 1.0}, "adapt.alpha"),
        ({"adapt.scheme": "rhip", "driver.moderation": "dim"}, "driver.moderation"),
        ({"adapt.scheme": "aic", "scheme": "irq"}, "adapt.scheme"),
        ({"adapt.scheme": "fast"}, "adapt.scheme"),
        ({"adapt.budget_min": 400}, "adapt.budget_min"),
        ({"kernel.ksoftirqd_policy": "nice"}, "kernel.ksoftirqd_policy"),
        ({"kernel.net_rx_action": "2.4"}, "kernel.net_rx_action"),
    ],
)
def test_bad_settings_are_refused_naming_the_key(extra, key):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run(scenario("qapolling", 512, **extra))
    assert e.value.key == key
    assert "\n" not in str(e.value)
    assert key in str(e.value)


def test_controller_settings_without_a_controller_warn():
    with pytest.warns(irqlab.ConfigWarning, match="adapt.buflow"):
        irqlab.run(scenario("none", 512, **{"adapt.buflow": 0.1, "run.duration_ms": 5.0}))


def test_the_cli_reports_a_bad_key_in_one_line(tmp_path):
    from click.testing import CliRunner

    from irqlab.cli import main

    f = tmp_path / "s.toml"
    f.write_text('[adapt]\nscheme = "rhip"\nbufupper = 2\n')
    r = CliRunner().invoke(main, ["run", str(f)])
    assert r.exit_code != 0
    assert "adapt.bufupper" in r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("adapt", SCHEMES)
def test_every_result_of_a_controller_says_it_depends_on_irqlab_choices(adapt, tmp_path):
    """The paper leaves rules open (QAPolling's update, the unit of RHIP's "+500"): a report
    of a controller says so in `notes`, the JSON and the table of ``irqlab run`` carry it; a
    run without a controller has no note."""
    s = scenario(adapt, 1024, **{"run.duration_ms": 10.0})
    notes = irqlab.run(s).get("notes", [])
    f = tmp_path / "s.toml"
    lines = [f"{k} = {json.dumps(v)}" for k, v in s.items() if k != "app"]
    for entry in s["app"]:
        lines += ["[[app]]", *(f"{k} = {json.dumps(v)}" for k, v in entry.items())]
    f.write_text("\n".join(lines) + "\n")
    if adapt == "none":
        assert notes == []
    else:
        assert len(notes) == 1
        assert "irqlab" in notes[0] and "depend" in notes[0]
        assert f'"{adapt}"' in notes[0] or adapt.startswith("rhip")
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["run", str(f), "--format", "json", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text()).get("notes", []) == notes
    table = CliRunner().invoke(main, ["run", str(f)], terminal_width=400)
    assert table.exit_code == 0, table.output
    assert ("note: " in table.output) == (adapt != "none")
