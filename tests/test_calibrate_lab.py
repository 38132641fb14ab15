"""A lab's folder as calibration targets: reading it, choosing the fitted rates, the measured
values and their uncertainty, and the comparison of predictions with the lab."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from irqlab.calibration.lab import (
    QUANTITIES,
    LabError,
    compare,
    fit_rates,
    lab_scenario,
    lab_targets,
    load_lab,
    measurements,
)
from irqlab.errors import ConfigError


def _point(threaded: bool, rate: float, repeat: int, **measured: Any) -> dict[str, Any]:
    name = f"{'on' if threaded else 'off'}-r{rate:g}-{repeat}"
    base = {
        "sent_pps": rate,
        "app_pps": rate,
        "socket_drop_ratio": 0.0,
        "net_rx_share": {"0": 0.1, "1": 0.0},
        "ksoftirqd_share": {"0": 0.0, "1": 0.0},
        "napi_thread_share": 0.2 if threaded else None,
        "packets_per_poll": 1.0 if not threaded else None,
        "packets_per_poll_hist": None,
        "app_wakeup_us": None,
    }
    base.update(measured)
    return {
        "name": name,
        "threaded": threaded,
        "rate_pps": rate,
        "repeat": repeat,
        "bundle": f"points/{name}",
        "measured": base,
    }


def _lab(tmp_path: Path, points: list[dict[str, Any]], **over: Any) -> Path:
    tree = {
        "format": "irqlab-lab",
        "format_version": 1,
        "kernel": "6.18.0",
        "hz": 250,
        "cpus": 2,
        "sender_core": 0,
        "app_core": 1,
        "napi_thread_core": 1,
        "size_bytes": 64,
        "seconds": 3.0,
        "settings": {"netdev_budget": 300, "rcvbuf_bytes": 4_194_304, "busy_read_us": 0},
        "pacing": {},
        "repeats": 1,
        "points": points,
    }
    tree.update(over)
    for p in points:
        folder = tmp_path / p["bundle"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "manifest.json").write_text("{}")
    (tmp_path / "lab.json").write_text(json.dumps(tree))
    return tmp_path


RATES = [20_000.0, 50_000.0, 100_000.0, 150_000.0, 200_000.0, 300_000.0]


def _sweep(tmp_path: Path, repeats: int = 1) -> Path:
    points = [
        _point(t, r, k, app_pps=r * (1 - 0.05 * k))
        for t in (False, True)
        for r in RATES
        for k in range(repeats)
    ]
    return _lab(tmp_path, points, repeats=repeats)


def test_a_lab_folder_is_read_with_its_host_and_points(tmp_path: Path) -> None:
    lab = load_lab(_sweep(tmp_path))
    assert lab.rates == RATES
    assert lab.modes == [False, True]
    assert (lab.cpus, lab.sender_core, lab.app_core, lab.hz) == (2, 0, 1, 250)
    assert len(lab.points) == 12
    # lab.json itself names the folder too
    assert load_lab(tmp_path / "lab.json").path == tmp_path


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: (p / "lab.json").unlink(), "not found"),
        (lambda p: (p / "lab.json").write_text("{"), "not JSON"),
        (lambda p: (p / "lab.json").write_text("[]"), "expected a JSON object"),
        (lambda p: _edit(p, format="other"), "not an irqlab lab"),
        (lambda p: _edit(p, format_version=99), "newer irqlab"),
        (lambda p: _edit(p, app_core=5), "'app_core' = 5: not a CPU of 2"),
        (lambda p: _edit(p, points=[]), "no points"),
        (lambda p: _edit(p, cpus="two"), "'cpus' = 'two': expected an integer"),
        (lambda p: (p / "points/off-r20000-0/manifest.json").unlink(), "a partial lab"),
    ],
)
def test_a_damaged_lab_is_one_line_naming_what_is_wrong(
    tmp_path: Path, damage: Any, message: str
) -> None:
    _sweep(tmp_path)
    damage(tmp_path)
    with pytest.raises(LabError) as e:
        load_lab(tmp_path)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert "lab.json" in str(e.value)


def _edit(folder: Path, **over: Any) -> None:
    tree = json.loads((folder / "lab.json").read_text())
    tree.update(over)
    (folder / "lab.json").write_text(json.dumps(tree))


def test_a_point_without_the_senders_rate_is_refused(tmp_path: Path) -> None:
    point = _point(False, 1000.0, 0)
    del point["measured"]["sent_pps"]
    _lab(tmp_path, [point])
    with pytest.raises(LabError, match=r"point 1 \(off-r1000-0\): measured.sent_pps = None"):
        load_lab(tmp_path)


@pytest.mark.parametrize("n", range(1, 12))
def test_fit_rates_are_at_most_half_and_span_the_range(n: int) -> None:
    rates = [float(i) for i in range(n)]
    chosen = fit_rates(rates)
    assert 1 <= len(chosen) <= max(1, n // 2)
    assert chosen == sorted(set(chosen))
    assert chosen[0] == rates[0]
    if n >= 4:
        assert chosen[-1] == rates[-1]  # the fitted rates bracket the predicted ones


def test_the_lab_host_is_a_veth_pair_with_a_sender_and_the_app(tmp_path: Path) -> None:
    s = lab_scenario(load_lab(_sweep(tmp_path)))
    assert s["nic.device"] == "veth"
    assert s["nic.ring_descriptors"] == 256  # VETH_RING_SIZE
    assert s["traffic.kind"] == "cbr"
    assert s["traffic.size_bytes"] == 64 + 42  # UDP, IPv4 and Ethernet headers
    assert (s["sender.core"], s["app.0.core"]) == (0, 1)
    assert s["kernel.hz"] == 250
    assert s["kernel.netdev_budget"] == 300
    assert s["socket.rcvbuf_bytes"] == 2 * 4_194_304  # SO_RCVBUF's request, doubled
    assert s["socket.truesize_bytes"] == 832  # a 64-byte datagram's skb
    assert "socket.busy_read_us" not in s  # 0: off, as the default


def test_measurements_average_the_repeats_and_their_sigma_is_the_spread(tmp_path: Path) -> None:
    lab = load_lab(_sweep(tmp_path, repeats=3))
    ms = {(m.quantity.key, m.cpu, m.threaded, m.rate_pps): m for m in measurements(lab)}
    app = ms[("app_pps", None, False, 100_000.0)]
    assert app.values == [100_000.0, 95_000.0, 90_000.0]
    assert app.mean == pytest.approx(95_000.0)
    assert app.spread == pytest.approx(10_000.0)
    # the s.d. of the mean of the three runs (5000/√3), above the 1 % floor
    assert app.sigma(None) == pytest.approx(5000 / math.sqrt(3))
    # one run: the floor, 1 % of the value
    assert measurements(load_lab(_sweep(tmp_path)))[0].sigma(None) == pytest.approx(200.0)
    # a NAPI thread's share only where NAPI is threaded; packets per poll only where measured
    assert ("napi_thread_share", 1, False, 100_000.0) not in ms
    thread = ms[("napi_thread_share", 1, True, 100_000.0)]  # on the NAPI thread's CPU
    assert thread.metric == "per_core.1.cpu.napi_thread"
    assert ("packets_per_poll", None, True, 100_000.0) not in ms
    # a share per CPU
    assert ms[("net_rx_share", 0, False, 20_000.0)].metric == "per_core.0.cpu.softirq"


def test_a_share_read_from_ticks_is_no_surer_than_their_sampling(tmp_path: Path) -> None:
    lab = load_lab(_sweep(tmp_path))
    share = next(m for m in measurements(lab) if m.quantity.key == "net_rx_share" and m.cpu == 0)
    ticks = 250 * 3.0
    assert share.sigma(ticks) == pytest.approx(math.sqrt(0.1 * 0.9 / ticks))
    zero = next(m for m in measurements(lab) if m.quantity.key == "net_rx_share" and m.cpu == 1)
    assert zero.sigma(ticks) >= 0.01  # a zero share still has an uncertainty


def test_lab_targets_fit_half_the_rates_and_validate_the_others(tmp_path: Path) -> None:
    lab = load_lab(_sweep(tmp_path))
    tree, plan = lab_targets(lab)
    fitted = {e["point"]["traffic.rate_pps"] for e in tree["target"]}
    predicted = {e["point"]["traffic.rate_pps"] for e in tree["validate"]}
    assert fitted == {20_000.0, 150_000.0, 300_000.0}
    assert predicted == set(RATES) - fitted
    assert {e["point"]["kernel.threaded_napi"] for e in tree["target"]} == {False, True}
    threaded = [e["point"] for e in tree["target"] if e["point"]["kernel.threaded_napi"]]
    assert all(p["kernel.napi_thread_core"] == 1 for p in threaded)
    assert all(e["sigma"] > 0 for e in tree["target"] + tree["validate"])
    assert len(tree["target"]) >= len(tree["free"])
    names = [e["name"] for e in tree["target"] + tree["validate"]]
    assert len(set(names)) == len(names) == len(plan)  # the plan joins on the names


def test_fit_rates_may_be_chosen_but_not_more_than_half(tmp_path: Path) -> None:
    lab = load_lab(_sweep(tmp_path))
    tree, _ = lab_targets(lab, fit=[50_000.0, 200_000.0])
    assert {e["point"]["traffic.rate_pps"] for e in tree["target"]} == {50_000.0, 200_000.0}
    with pytest.raises(ConfigError, match="at most half"):
        lab_targets(lab, fit=RATES[:4])
    with pytest.raises(ConfigError, match=r"--fit-rates: 7 is not a rate of the lab \(20000, "):
        lab_targets(lab, fit=[7.0])


def test_a_prediction_is_met_within_its_goal_or_the_spread_of_the_runs() -> None:
    share = next(q for q in QUANTITIES if q.key == "net_rx_share")
    plan = [
        {"name": "a", "role": "validation", "measured": 0.30, "spread": 0.0,
         "goal": share.goal(0.30)},
        {"name": "b", "role": "validation", "measured": 0.30, "spread": 0.12,
         "goal": share.goal(0.30)},
        {"name": "c", "role": "validation", "measured": 0.30, "spread": 0.0,
         "goal": share.goal(0.30)},
    ]  # fmt: skip
    rows = [
        {"name": "a", "predicted": 0.34, "predicted_se": 0.01},  # within 5 points
        {"name": "b", "predicted": 0.40, "predicted_se": 0.01},  # beyond 5, within the spread
        {"name": "c", "predicted": 0.40, "predicted_se": 0.01},  # beyond both
    ]
    out = {r["name"]: r for r in compare(plan, rows)}
    assert out["a"]["met"] and out["b"]["met"] and not out["c"]["met"]
    assert out["b"]["tolerance"] == pytest.approx(0.12)
    assert out["c"]["difference"] == pytest.approx(0.10)
    ppp = next(q for q in QUANTITIES if q.key == "packets_per_poll")
    assert ppp.goal(5.0) == pytest.approx(1.0)  # 20 % of the measured mean


def _manifest(folder: Path, point: str, **fields: Any) -> None:
    (folder / "points" / point / "manifest.json").write_text(json.dumps(fields))


def test_a_point_recorded_on_another_kernel_or_hz_is_refused(tmp_path: Path) -> None:
    _sweep(tmp_path)
    _manifest(tmp_path, "off-r20000-0", kernel="6.18.0", hz=1000)
    with pytest.raises(LabError, match=r"recorded with hz 1000, the lab's is 250") as e:
        load_lab(tmp_path)
    assert "point 1 (off-r20000-0)" in str(e.value) and "\n" not in str(e.value)
    _manifest(tmp_path, "off-r20000-0", kernel="5.15.0", hz=250)
    with pytest.raises(LabError, match=r"recorded with kernel 5.15.0, the lab's is 6.18.0"):
        load_lab(tmp_path)
    (tmp_path / "points" / "off-r20000-0" / "manifest.json").write_text("{")
    with pytest.raises(LabError, match=r"manifest.json is unreadable"):
        load_lab(tmp_path)


# --- a recorded lab, end to end without root -------------------------------------------------

RECORDED = Path(__file__).resolve().parent / "data" / "lab-small"


def test_a_recorded_lab_is_fitted_predicted_compared_and_reported(tmp_path: Path) -> None:
    # tests/data/lab-small: four rates of a lab on Linux 6.18 (2 vCPUs, HZ=250), threaded
    # NAPI off and on, two runs each; fitted at 20153 and 400153/s, the others predicted
    from click.testing import CliRunner

    from irqlab.cli import main

    out = tmp_path / "cal"
    args = ["calibrate", str(RECORDED), "-o", str(out), "--executor", "inline"]
    r = CliRunner().invoke(main, [*args, "--max-evaluations", "8"])
    assert r.exit_code == 0, r.output
    assert "predicted rates against the lab" in r.output
    written = ("lab-targets.toml", "lab-plan.json", "lab-comparison.json", "calibration.json")
    for name in (*written, "lab_predicted_vs_measured.png", "lab-fitted.toml"):
        assert (out / name).is_file(), name
    data = json.loads((out / "lab-comparison.json").read_text())
    rows = data["rows"]
    fitted = {r["rate_pps"] for r in rows if r["role"] == "target"}
    predicted = {r["rate_pps"] for r in rows if r["role"] == "validation"}
    assert fitted == {20153.0, 400153.0} and predicted == {100153.0, 200153.0}
    for row in rows:
        assert len(row["runs"]) == 2  # both runs kept, their range the spread
        assert row["spread"] == pytest.approx(max(row["runs"]) - min(row["runs"]))
        assert row["tolerance"] >= row["spread"] and row["tolerance"] >= row["goal"]
        assert row["met"] == (abs(row["predicted"] - row["measured"]) <= row["tolerance"])
    # every quantity the lab measured is compared, in both modes where it has it
    labels = {(r["quantity"], r["threaded"]) for r in rows}
    assert ("packets_per_poll", False) in labels and ("napi_thread_share", True) in labels
    assert ("app_pps", True) in labels and ("net_rx_share", False) in labels
    # the targets file stands alone: irqlab calibrate runs it again from the journal
    again = CliRunner().invoke(
        main, ["calibrate", str(out / "lab-targets.toml"), "-o", str(out), "--executor",
               "inline", "--max-evaluations", "8"],
    )  # fmt: skip
    assert again.exit_code == 0 and "(0 runs made," in again.output
    # the page: the lab's section with its figure and table
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "predicted against measured at every rate" in html
    assert html.count("data:image/png") >= 2


def test_fit_rates_must_be_the_labs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from irqlab.cli import main

    r = CliRunner().invoke(
        main, ["calibrate", str(RECORDED), "-o", str(tmp_path / "c"), "--fit-rates", "20kpps"]
    )
    assert r.exit_code == 2
    assert r.output.strip() == (
        "irqlab: error: --fit-rates: '20kpps' is not a rate (give packets/s, e.g. "
        "20153,150153 or 20k)"
    )
    r = CliRunner().invoke(
        main, ["calibrate", str(RECORDED), "-o", str(tmp_path / "c"), "--fit-rates", "20k"]
    )
    assert r.exit_code == 2 and "20000 is not a rate of the lab (20153, 100153" in r.output
    r = CliRunner().invoke(main, ["calibrate", str(RECORDED.parent / "no-lab")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "Traceback" not in r.output


def test_a_lab_of_one_rate_cannot_be_fitted_and_says_so(tmp_path: Path) -> None:
    lab = load_lab(_lab(tmp_path, [_point(False, 20_000.0, 0), _point(True, 20_000.0, 0)]))
    with pytest.raises(ConfigError, match="one rate only; a lab to fit needs two at least"):
        lab_targets(lab)


def _traced(threaded: bool, rate: float, repeat: int, sent: float, hist: dict[str, int],
            wake: dict[str, float]) -> dict[str, Any]:  # fmt: skip
    return _point(threaded, rate, repeat, sent_pps=sent, packets_per_poll_hist=hist,
                  app_wakeup_us=wake)  # fmt: skip


def test_traced_points_sum_their_repeats_histograms_and_flag_a_throttled_sender(
    tmp_path: Path,
) -> None:
    from irqlab.calibration.distributions import THROTTLED, traced_points

    wake = {"mean": 4.0, "p50": 3.0, "p99": 10.0}
    lab = load_lab(
        _lab(
            tmp_path,
            [
                _traced(True, 100_000.0, 0, 100_000.0, {"1": 30, "2": 10}, wake),
                _traced(True, 100_000.0, 1, 99_000.0, {"1": 10, "4": 10}, wake),
                _traced(False, 400_000.0, 0, 200_000.0, {"1": 50}, wake),
                _point(False, 20_000.0, 0),  # untraced: no distribution
            ],
            repeats=2,
        )
    )
    points = traced_points(lab)
    assert [(p.threaded, p.rate_pps) for p in points] == [(False, 400_000.0), (True, 100_000.0)]
    off, on = points
    assert on.hist == {1: 40, 2: 10, 4: 10} and len(on.wakeup) == 2
    assert on.sent_pps == 99_500.0 and not on.throttled
    assert off.throttled and off.sent_pps < THROTTLED * off.rate_pps


def test_total_variation_is_zero_for_the_same_shares_and_one_for_disjoint() -> None:
    from irqlab.calibration.distributions import fractions, total_variation

    p = fractions({1: 30, 2: 10})
    assert p == {1: 0.75, 2: 0.25}
    assert total_variation(p, fractions({1: 3, 2: 1})) == 0.0
    assert total_variation(p, fractions({8: 5})) == 1.0
    assert total_variation(p, {1: 0.5, 2: 0.5}) == pytest.approx(0.25)


def test_distributions_are_predicted_at_the_rate_the_traced_sender_achieved(
    tmp_path: Path,
) -> None:
    from irqlab.calibration.distributions import predict_distributions

    wake = {"mean": 4.0, "p50": 3.0, "p99": 10.0}
    lab = load_lab(_lab(tmp_path, [_traced(True, 400_000.0, 0, 220_000.0, {"1": 3, "2": 1}, wake)]))
    seen: list[tuple[dict[str, Any], int]] = []

    def run(scenario: dict[str, Any], seed: int) -> dict[str, Any]:
        seen.append((scenario, seed))
        return {
            "packets_per_poll_hist": {"1": 1, "2": 1},
            "per_app": [{"wakeup_delay_us": {"mean": 2.0 * seed, "p50": 1.0, "p99": 6.0}}],
        }

    rows = predict_distributions(lab, {"platform.proto_ns": 1234.0}, [1, 2], run)
    assert [s for _, s in seen] == [1, 2]
    scenario = seen[0][0]
    assert scenario["traffic.rate_pps"] == 220_000.0  # the achieved rate, not the 400k asked
    assert scenario["kernel.threaded_napi"] is True and scenario["kernel.napi_thread_core"] == 1
    assert scenario["platform.proto_ns"] == 1234.0 and scenario["nic.device"] == "veth"
    (row,) = rows
    ppp = row["packets_per_poll"]
    assert ppp["measured"] == {"1": 0.75, "2": 0.25} and ppp["predicted"] == {"1": 0.5, "2": 0.5}
    assert ppp["total_variation"] == pytest.approx(0.25) and ppp["polls_predicted"] == 4
    assert row["wakeup_us"]["predicted"] == {"mean": 3.0, "p50": 1.0, "p99": 6.0}
    assert row["wakeup_us"]["measured"] == wake and row["throttled"]


def test_a_points_traced_twin_gives_its_distributions_and_is_checked(tmp_path: Path) -> None:
    from irqlab.calibration.distributions import traced_points

    point = _point(True, 100_000.0, 0)
    twin = {"packets_per_poll_hist": {"1": 5, "2": 5}, "sent_pps": 90_000.0,
            "app_wakeup_us": {"mean": 4.0, "p50": 3.0, "p99": 9.0}}  # fmt: skip
    point["traced"] = {"bundle": "points/traced-x", "measured": twin}
    folder = _lab(tmp_path, [point])
    (folder / "points" / "traced-x").mkdir(parents=True)
    (folder / "points" / "traced-x" / "manifest.json").write_text('{"kernel": "6.18.0"}')
    (tp,) = traced_points(load_lab(folder))
    assert tp.hist == {1: 5, 2: 5} and tp.sent_pps == 90_000.0  # the twin's, not the point's
    (folder / "points" / "traced-x" / "manifest.json").write_text('{"kernel": "5.10.0"}')
    with pytest.raises(LabError, match=r"traced: its bundle was recorded with kernel 5\.10\.0"):
        load_lab(folder)
    point["traced"] = {"bundle": "points/traced-x"}
    _lab(tmp_path, [point])
    with pytest.raises(LabError, match="'traced' has no table 'measured'"):
        load_lab(folder)


def test_the_apps_wake_ups_per_packet_are_predicted_at_every_rate_never_fitted(
    tmp_path: Path,
) -> None:
    points = []
    for r in RATES:
        p = _point(False, r, 0)
        p["traced"] = {"measured": {"app_wakeups_per_packet": 20_000.0 / r}}
        points.append(p)
    tree, plan = lab_targets(load_lab(_lab(tmp_path, points)))
    metric = "app_wakeups_per_packet"
    assert not [t for t in tree["target"] if t["metric"] == metric]
    validated = [t for t in tree["validate"] if t["metric"] == metric]
    assert len(validated) == len(RATES)  # the fitted rates too: evidence, not a target
    assert {p["role"] for p in plan if p["quantity"] == metric} == {"validation"}


TRACED = Path(__file__).parent / "data" / "lab-traced"


def test_a_traced_lab_gets_its_distributions_beside_the_fitted_models(tmp_path: Path) -> None:
    # tests/data/lab-traced: three rates of a lab on Linux 6.18 (2 vCPUs), threaded NAPI off and
    # on, each point untraced and then traced (--trace); fitted at 20153 and 250153/s
    from click.testing import CliRunner

    from irqlab.cli import main

    out = tmp_path / "cal"
    args = ["calibrate", str(TRACED), "-o", str(out), "--executor", "inline"]
    r = CliRunner().invoke(main, [*args, "--max-evaluations", "4"])
    assert r.exit_code == 0, r.output
    assert "distributions at the lab's traced points (evidence, no goal)" in r.output
    data = json.loads((out / "lab-distributions.json").read_text())
    rows = {(row["threaded"], row["rate_pps"]): row for row in data["rows"]}
    assert set(rows) == {(t, r) for t in (False, True) for r in (20153.0, 100153.0, 250153.0)}
    for row in rows.values():
        ppp = row["packets_per_poll"]
        assert sum(ppp["measured"].values()) == pytest.approx(1.0)
        assert sum(ppp["predicted"].values()) == pytest.approx(1.0)
        assert 0.0 <= ppp["total_variation"] <= 1.0
        assert row["wakeup_us"]["measured"]["mean"] > 0
    # without threaded NAPI one packet per poll, measured and predicted
    assert rows[(False, 20153.0)]["packets_per_poll"]["total_variation"] == 0.0
    # the wake-ups per packet are predicted at every rate, fitted at none
    comparison = json.loads((out / "lab-comparison.json").read_text())["rows"]
    wakes = [c for c in comparison if c["quantity"] == "app_wakeups_per_packet"]
    assert len(wakes) == 6 and {c["role"] for c in wakes} == {"validation"}
    assert (out / "lab_packets_per_poll.png").stat().st_size > 10_000
    r = CliRunner().invoke(main, ["report", str(out)])
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "s distributions: measured and predicted" in html  # the section's title
    assert html.count("data:image/png") >= 3  # its figure, beside the lab's and the fit's
