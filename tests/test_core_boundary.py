"""The typed boundary to the Rust core (irqlab.core): the report a run returns has exactly the
keys and value types of the ``Report`` TypedDict, and a run builds its scenario once."""

from __future__ import annotations

import types
import typing
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from click.testing import CliRunner

import irqlab
from irqlab import core
from irqlab.cli import main
from irqlab.scenario import build

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "napi.toml"
SHORT = {"run.duration_ms": 2.0, "run.warmup_ms": 0.5}
SCHEMES = ["ideal", "irq", "disable-enable", "poll", "napi-poll"]
SCHEMES += ["coalesce-count", "coalesce-time", "hybrid", "napi"]

#: One scenario of each flavour of report: every scheme, several cores and queues, apps (recv
#: and epoll, busy polling, AF_XDP), forwarding, QoS classes, a controller (notes),
#: request/response, and a replayed capture.
FLAVOURS: dict[str, dict[str, Any]] = {
    **{f"scheme {s}": {"scheme": s} for s in SCHEMES},
    "4 cores, 4 queues": {"host.cores": 4, "nic.queues": 4, "traffic.flows": 64},
    "apps": {"app.0.core": 0, "app.1.core": 0, "app.1.io": "epoll", "traffic.flows": 8},
    "busy polling": {"app.0.core": 0, "socket.busy_read_us": 50.0},
    "AF_XDP": {"app.0.core": 0, "app.0.io": "xsk"},
    "forwarding": {"host.forward": True},
    "qos": {"qos.strategy": "ll-rr", "qos.rt_share": 0.2, "app.0.core": 0},
    "traffic classes": {
        "traffic.classes.0.name": "rt",
        "traffic.classes.0.share": 0.2,
        "traffic.classes.1.name": "bulk",
        "traffic.classes.1.share": 0.8,
    },
    "controller": {"adapt.scheme": "aic", "app.0.core": 0},
    "request/response": {"traffic.kind": "rr", "app.0.core": 0},
    "replay": {"traffic.kind": "pcap", "traffic.pcap": str(ROOT / "examples" / "web.pcapng.gz")},
    "veth lab": {
        "host.cores": 2,
        "nic.device": "veth",
        "sender.cost_ns": 2000.0,
        "kernel.threaded_napi": True,
        "kernel.napi_thread_core": 1,
        "app.0.core": 1,
    },
}


def reports() -> Iterator[tuple[str, core.Report]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irqlab.ConfigWarning)
        for name, settings in FLAVOURS.items():
            yield name, irqlab.run({**SHORT, **settings})


def walk(value: Any, hint: Any, where: str, seen: dict[type, set[str]]) -> None:
    """Checks ``value`` against the type ``hint``; records the keys of each TypedDict met."""
    if is_typeddict(hint):
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        hints = get_type_hints(hint)
        extra = set(value) - set(hints)
        assert not extra, f"{where}: keys the type {hint.__name__} lacks: {sorted(extra)}"
        missing = hint.__required_keys__ - set(value)
        assert not missing, f"{where}: required keys of {hint.__name__} missing: {missing}"
        seen.setdefault(hint, set()).update(value)
        for k, v in value.items():
            walk(v, hints[k], f"{where}.{k}", seen)
        return
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in get_args(hint):
            try:
                walk(value, option, where, seen)
                return
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{where}: {value!r} is none of {hint}: {errors}")
    if origin is Literal:
        assert value in get_args(hint), f"{where}: {value!r} is none of {get_args(hint)}"
        return
    if origin is tuple:
        assert isinstance(value, tuple), f"{where}: {type(value).__name__}, not a tuple"
        items = get_args(hint)
        assert len(value) == len(items), where
        for i, (v, item) in enumerate(zip(value, items, strict=True)):
            walk(v, item, f"{where}.{i}", seen)
        return
    if origin is list:
        assert isinstance(value, list), f"{where}: {type(value).__name__}, not a list"
        (item,) = get_args(hint)
        for i, v in enumerate(value):
            walk(v, item, f"{where}.{i}", seen)
        return
    if origin is dict:
        assert isinstance(value, dict), where
        key, item = get_args(hint)
        for k, v in value.items():
            walk(k, key, f"{where} key", seen)
            walk(v, item, f"{where}.{k}", seen)
        return
    if hint is type(None):
        assert value is None, f"{where}: {value!r} is not None"
        return
    # exact scalar types: a float field never holds an int, an int never a bool
    assert type(value) is hint, f"{where}: {value!r} is {type(value).__name__}, not {hint}"


def test_every_flavour_of_report_has_the_keys_and_types_of_the_report_type():
    seen: dict[type, set[str]] = {}
    for name, report in reports():
        walk(report, core.Report, name, seen)
    # and no key of a type is never produced
    for typed, keys in seen.items():
        never = set(get_type_hints(typed)) - keys
        assert not never, f"{typed.__name__}: keys no report produced: {sorted(never)}"
    assert core.ReplayReport in seen and core.BusyPollCounts in seen and core.XskCounts in seen


def test_the_trace_and_series_have_the_keys_and_types_of_their_types():
    seen: dict[type, set[str]] = {}
    _, trace = irqlab.run_traced(SHORT)
    walk(trace, core.PacketTrace, "trace", seen)
    _, series = core.run_series(irqlab.resolve(SHORT), 10)
    walk(series, core.Series, "series", seen)
    assert seen[core.PacketTrace] == set(get_type_hints(core.PacketTrace))


def test_the_schema_entries_have_the_keys_and_types_of_key_spec():
    seen: dict[type, set[str]] = {}
    for spec in core.schema():
        walk(spec, core.KeySpec, spec["key"], seen)
    assert seen[core.KeySpec] == set(get_type_hints(core.KeySpec))


def test_a_capture_scan_has_the_keys_and_types_of_trace_info():
    seen: dict[type, set[str]] = {}
    walk(core.trace_info(str(ROOT / "examples" / "web.pcapng.gz"), 3), core.TraceInfo, "", seen)
    assert seen[core.TraceInfo] == set(get_type_hints(core.TraceInfo))


# --- a run builds its scenario once -----------------------------------------------------------

#: A scenario with two settings that have no effect, in the order the core finds them.
TWO_WARNINGS = ["--set", "scheme=ideal", "--set", "nic.itr_us=20", "--set", "poll.quota=5"]
SAID = [
    'irqlab: warning: nic.itr_us = 20.0: has no effect: scheme "ideal" has no interrupts '
    "(an arrival starts protocol processing at no cost)",
    "irqlab: warning: poll.quota = 5: has no effect: only the polling schemes use it "
    "(poll, napi-poll, hybrid)",
]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Mapping[str, Any]]:
    """The params of every scenario the core builds meanwhile (a run given params, not a
    built scenario, counts as one)."""
    built: list[Mapping[str, Any]] = []
    resolved, run = core.resolved, core._irqlab.run

    def counting_resolved(params: core.Params) -> core.ResolvedScenario:
        built.append(params)
        return resolved(params)

    def counting_run(scenario: Any, policy: Any = None) -> core.Report:
        if not isinstance(scenario, core.ResolvedScenario):
            built.append(scenario)
        return run(scenario, policy)

    monkeypatch.setattr(core, "resolved", counting_resolved)
    monkeypatch.setattr(core._irqlab, "run", counting_run)
    return built


def test_irqlab_run_builds_its_scenario_once_and_says_each_warning_once(builds):
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--set", "run.duration_ms=2", *TWO_WARNINGS])
    assert r.exit_code == 0, r.output
    assert len(builds) == 1
    assert [line for line in r.stderr.splitlines() if "warning" in line] == SAID


def test_a_built_scenario_runs_as_it_is_and_warns_when_built(builds):
    with pytest.warns(irqlab.ConfigWarning) as caught:
        scenario = build({**SHORT, "scheme": "ideal", "nic.itr_us": 20, "poll.quota": 5})
    assert [w.message.key for w in caught] == ["nic.itr_us", "poll.quota"]
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # running it says nothing again
        report = irqlab.run(scenario)
    assert len(builds) == 1
    with pytest.warns(irqlab.ConfigWarning):
        again = irqlab.run({**SHORT, "scheme": "ideal", "nic.itr_us": 20, "poll.quota": 5})
    assert report == again


def test_a_built_scenario_with_a_seed_or_overrides_is_built_again_from_its_params(builds):
    scenario = build(SHORT)
    again = irqlab.run(scenario, {"traffic.rate_pps": 1e5}, seed=7)
    assert len(builds) == 2
    assert again == irqlab.run({**SHORT, "traffic.rate_pps": 1e5}, seed=7)
