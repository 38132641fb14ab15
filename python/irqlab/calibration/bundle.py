"""Measurement bundles of a host (``irqlab measure``'s output) as calibration targets.

A bundle is one window on a live host: its counters (per-CPU softirq time, each IRQ's rate,
UDP's counters, the interface's receive rate), perhaps its tracepoints (packets per
``napi_poll``), and the host's settings as ``irqlab probe`` read them, with the scenario it
writes. :func:`load_bundles` reads one or more bundles and the scenario they are compared with
(``--scenario FILE``, else the one in the first bundle's settings.json), warning in one line
when a bundle was recorded on another kernel, driver or tick rate than the scenario was
probed on, and refusing bundles of different hosts together. :func:`bundle_targets` turns
them into a targets file: the scenario as the base, each bundle a point at the rate the
interface received, the platform's costs free, half of the bundles fitted (spread over the
rates, both ends) and the others predicted — the lab's plan (:mod:`irqlab.calibration.lab`)
for any host.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab.calibration.lab import Measurement, Quantity, fit_rates
from irqlab.errors import ConfigError, ConfigWarning

#: What a bundle measures and the model predicts, with the goals of the lab's comparison
#: (shares within 5 points, rates within 5 %, packets per poll within 20 %).
QUANTITIES: tuple[Quantity, ...] = (
    Quantity("softirq_share", "per_core.{c}.cpu.softirq", "softirq share of CPU {c}",
             absolute=0.05, per_cpu=True, floor_absolute=0.01),
    Quantity("irq_share", "per_core.{c}.cpu.irq", "hard-IRQ share of CPU {c}",
             absolute=0.05, per_cpu=True, floor_absolute=0.01),
    Quantity("irq_per_s", "per_queue.{c}.irq_per_s", "IRQs/s of queue {c}", relative=0.05,
             floor_relative=0.02, floor_absolute=10.0),
    Quantity("packets_per_poll", "packets_per_poll", "packets per poll (mean)", relative=0.20,
             floor_relative=0.05, floor_absolute=0.05),
    Quantity("app_pps", "per_app.0.consumed_pps", "app throughput (packets/s)", relative=0.05,
             floor_relative=0.01, floor_absolute=100.0),
    Quantity("socket_drop_ratio", "socket_drop_ratio", "socket drop ratio", absolute=0.05,
             floor_absolute=0.005),
)  # fmt: skip

#: The costs fitted, in the order they are freed when the targets are few: (key, min, max,
#: log). The IRQ's cost not on a veth device (it has no IRQ), the app's only with an app
#: whose rate was measured. (A lab's sending thread is fitted from its own rate: the lab's
#: folder, not its bundles, is the calibration of a lab.)
FREE: tuple[tuple[str, float, float, bool], ...] = (
    ("platform.proto_ns", 100.0, 20_000.0, True),
    ("platform.irq_ns", 100.0, 20_000.0, True),
    ("app.0.cost_ns", 100.0, 30_000.0, True),
    ("platform.poll_ns", 0.0, 5_000.0, False),
)
#: Each candidate's run, unless the scenario sets its own.
RUN = {"run.duration_ms": 200, "run.warmup_ms": 20}

#: The header ``irqlab probe`` writes at the top of a scenario (ops/probe/render.py).
_PROBED = re.compile(
    r"probed from .*?\(Linux (?P<kernel>[^)\s]+)\), interface (?P<iface>\S+?),?(?:\s|$)"
    r"(?:driver (?P<driver>\S+))?"
)


@dataclass
class HostId:
    """What a scenario or a bundle says about the host it came from (None: it does not say)."""

    kernel: str | None = None
    driver: str | None = None
    iface: str | None = None
    hz: int | None = None


@dataclass
class MeasuredBundle:
    """One bundle: where it is, the rate its interface received, and what it measured."""

    path: Path
    rate_pps: float
    #: where the rate was read ("rx_packets of IFACE", or softnet_stat's processed)
    rate_source: str
    window_s: float
    hz: int | None
    measured: dict[str, Any]


@dataclass
class BundleSet:
    """Bundles of one host and the scenario they are compared with."""

    bundles: list[MeasuredBundle]
    scenario: dict[str, Any]
    #: the scenario file's text (written beside the targets), and where it came from
    scenario_text: str
    scenario_source: str
    host: HostId

    @property
    def rates(self) -> list[float]:
        return sorted(b.rate_pps for b in self.bundles)


def is_bundle(path: Path) -> bool:
    """Whether ``path`` is a measurement bundle's folder (its manifest says so)."""
    from irqlab.ops.measure.bundle import FORMAT

    try:
        tree = json.loads((path / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(tree, dict) and tree.get("format") == FORMAT


def probed_host(text: str) -> HostId:
    """The kernel, interface and driver a scenario written by ``irqlab probe`` names in its
    header (its leading comment lines); nothing for a scenario written otherwise."""
    head = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        head.append(line.lstrip("#").strip())
    m = _PROBED.search(" ".join(head))
    if m is None:
        return HostId()
    hz = re.search(r"^\s*hz\s*=\s*([0-9]+)", _section(text, "kernel"), re.M)
    return HostId(m["kernel"], m["driver"], m["iface"], int(hz[1]) if hz else None)


def _section(text: str, name: str) -> str:
    m = re.search(rf"^\[{re.escape(name)}\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    return m[1] if m else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _measured(path: Path, bundle: Any, vectors: Sequence[Mapping[str, Any]]) -> MeasuredBundle:
    """A bundle's quantities (:data:`QUANTITIES`, those it has) and its rate."""
    summary = bundle.summary
    shown = str(path)
    iface = summary.get("iface")
    rate = _number(iface.get("rx_packets_per_s")) if isinstance(iface, dict) else None
    if rate is not None and rate > 0:
        source = f"rx_packets of {iface['name']}"
    else:
        processed = [_number(c.get("packets_per_s")) for c in summary["cpus"]]
        rate = sum(p for p in processed if p is not None)
        source = "softnet_stat's processed, all CPUs"
    if not rate > 0:
        raise ConfigError(
            f"bundle {shown}: the host received nothing in its window (no rx_packets, no "
            "softnet_stat processed): a bundle to fit is recorded under load",
            None,
        )
    measured: dict[str, Any] = {}
    for field in ("softirq_share", "irq_share"):
        shares = {}
        for row in summary["cpus"]:
            v = _number(row.get(field))
            if v is not None and isinstance(row.get("cpu"), int):
                shares[str(row["cpu"])] = v
        # a kernel that never samples hard-IRQ time in ticks reads 0 everywhere: not a target
        if shares and (field == "softirq_share" or any(shares.values())):
            measured[field] = shares
    by_irq = {e.get("irq"): _number(e.get("per_s")) for e in summary["irqs"]}
    irqs = {}
    for vector in vectors:
        queue, rate_of = vector.get("queue"), by_irq.get(vector.get("irq"))
        if isinstance(queue, int) and rate_of is not None:
            irqs[str(queue)] = rate_of
    if irqs:
        measured["irq_per_s"] = irqs
    traced = summary.get("traced")
    name = _bundle_host(bundle).iface
    if isinstance(traced, dict) and isinstance(traced.get("napi_poll"), dict) and name:
        napi = traced["napi_poll"].get(name)
        if isinstance(napi, dict) and _number(napi.get("packets_per_poll")) is not None:
            measured["packets_per_poll"] = float(napi["packets_per_poll"])
    udp = summary.get("udp") or {}
    got, lost = _number(udp.get("InDatagrams_per_s")), _number(udp.get("RcvbufErrors_per_s"))
    if got is not None and got > 0:
        measured["app_pps"] = got
        if lost is not None:
            measured["socket_drop_ratio"] = lost / (got + lost)
    hz = bundle.manifest.get("hz")
    return MeasuredBundle(
        path=path,
        rate_pps=rate,
        rate_source=source,
        window_s=float(bundle.manifest["window_s"]),
        hz=hz if isinstance(hz, int) and not isinstance(hz, bool) else None,
        measured=measured,
    )


def load_bundles(paths: Sequence[Path], scenario: Path | None = None) -> BundleSet:
    """The bundles at ``paths`` and the scenario to fit (``scenario``, else the one ``irqlab
    probe`` wrote into the first bundle's settings.json). One line for each problem: a damaged
    or partial bundle, bundles of different kernels, drivers or interfaces (an error), a
    bundle recorded on another kernel, driver or HZ than the scenario was probed on (a
    warning: the fit is then of another host), no scenario at all (an error)."""
    from irqlab.experiments.spec import flat_table
    from irqlab.ops.measure import load_bundle
    from irqlab.scenario import load_toml

    loaded = [(Path(p), load_bundle(p)) for p in paths]
    first_path, first = loaded[0]
    ids = [(p, _bundle_host(b)) for p, b in loaded]
    for p, bid in ids[1:]:
        for key in ("kernel", "driver", "iface", "hz"):
            a, b = getattr(ids[0][1], key), getattr(bid, key)
            if a is not None and b is not None and a != b:
                raise ConfigError(
                    f"bundle {p}: recorded with {key} {b}, bundle {first_path} with {a}: "
                    "bundles of different hosts, kernels or interfaces do not make one fit",
                    None,
                )
    if scenario is not None:
        try:
            text = scenario.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"--scenario {scenario}: {e.strerror or e}", "scenario") from None
        source = str(scenario)
        flat = flat_table(load_toml(scenario), str(scenario))
    else:
        settings = first.settings
        found = settings.get("scenario") if settings else None
        if not isinstance(found, str):
            raise ConfigError(
                f"bundle {first_path}: no probed scenario in it (settings.json is recorded "
                "with root and an interface); give one: --scenario FILE (irqlab probe IFACE "
                "-o FILE)",
                "scenario",
            )
        import tomllib

        text = found
        try:
            tree = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(
                f"bundle {first_path}: settings.json's scenario is not TOML ({e}): damaged?",
                None,
            ) from None
        source = f"{first_path}/settings.json"
        flat = flat_table(tree, source)
    host = probed_host(text)
    if "kernel.hz" in flat and isinstance(flat["kernel.hz"], int):
        host.hz = flat["kernel.hz"]
    for p, bid in ids:
        for key in ("kernel", "driver", "iface", "hz"):
            a, b = getattr(host, key), getattr(bid, key)
            if a is not None and b is not None and str(a) != str(b):
                warnings.warn(
                    f"bundle {p} was recorded with {key} {b}, the scenario ({source}) is of "
                    f"{key} {a}: the fit describes neither host exactly",
                    ConfigWarning,
                    stacklevel=2,
                )
    vectors = (first.settings or {}).get("vectors") or []
    bundles = [_measured(p, b, vectors) for p, b in loaded]
    seen: dict[float, Path] = {}
    for b in bundles:
        if b.rate_pps in seen:
            raise ConfigError(
                f"bundle {b.path}: the same rate ({b.rate_pps:g}/s) as bundle "
                f"{seen[b.rate_pps]}: give bundles of different loads",
                None,
            )
        seen[b.rate_pps] = b.path
    return BundleSet(bundles, flat, text, source, host)


def _applies(key: str, scenario: Mapping[str, Any], has_app: bool) -> bool:
    """Whether cost ``key`` has anything to do in ``scenario``."""
    if key == "platform.irq_ns":
        return bool(scenario.get("nic.device", "hw") != "veth")
    if key == "app.0.cost_ns":
        return has_app
    return True


def _bundle_host(bundle: Any) -> HostId:
    m, s = bundle.manifest, bundle.settings or {}
    hz = m.get("hz")
    return HostId(
        kernel=m.get("kernel") if isinstance(m.get("kernel"), str) else None,
        driver=(m.get("driver") or s.get("driver")) or None,
        iface=(m.get("iface") or s.get("iface")) or None,
        hz=hz if isinstance(hz, int) and not isinstance(hz, bool) else None,
    )


def bundle_targets(
    bs: BundleSet, *, seeds: Sequence[int] = (1, 2)
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A targets file (as a dict; its base the scenario file ``bundle-host.toml`` written
    beside it) fitting :data:`FREE` to the bundles at :func:`fit_rates` of their rates and
    predicting the others; and the plan :func:`irqlab.calibration.lab.compare` joins to the
    calibration's rows."""
    rates = bs.rates
    chosen = fit_rates(rates)
    has_app = any(k.startswith("app.0.") for k in bs.scenario) and any(
        "app_pps" in b.measured for b in bs.bundles
    )
    threaded = bool(bs.scenario.get("kernel.threaded_napi", False))
    targets: list[dict[str, Any]] = []
    validate: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    for b in sorted(bs.bundles, key=lambda b: b.rate_pps):
        ticks = (b.hz or 0) * b.window_s or None
        for q in QUANTITIES:
            raw = b.measured.get(q.key)
            if raw is None or (q.key in ("app_pps", "socket_drop_ratio") and not has_app):
                continue
            items = list(raw.items()) if isinstance(raw, dict) else [(None, raw)]
            for index, value in items:
                m = Measurement(q, None if index is None else int(index), threaded,
                                b.rate_pps, [float(value)])  # fmt: skip
                role = "target" if b.rate_pps in chosen else "validation"
                name = f"{m.name.rsplit(' · ', 1)[0]} · {b.path.name}"
                entry = {
                    "name": name,
                    "point": {"traffic.rate_pps": round(b.rate_pps, 3)},
                    "metric": m.metric,
                    "value": m.mean,
                    "sigma": m.sigma(ticks),
                }
                (targets if role == "target" else validate).append(entry)
                plan.append(
                    {
                        "name": name,
                        "role": role,
                        "quantity": q.key,
                        "label": q.label.replace("{c}", str(index)),
                        "cpu": m.cpu,
                        "threaded": threaded,
                        "rate_pps": b.rate_pps,
                        "rate_source": b.rate_source,
                        "bundle": str(b.path),
                        "measured": m.mean,
                        "runs": m.values,
                        "spread": 0.0,
                        "goal": q.goal(m.mean),
                        "goal_text": q.goal_text(),
                    }
                )
    if not targets:
        raise ConfigError(
            f"bundle {bs.bundles[0].path}: nothing the model predicts was measured (no softirq "
            "share, IRQ rate or packets per poll)",
            None,
        )
    free_rows = [row for row in FREE if _applies(row[0], bs.scenario, has_app)]
    if len(free_rows) > len(targets):
        kept = [row[0] for row in free_rows[len(targets) :]]
        warnings.warn(
            f"{len(targets)} target(s) fit as many costs at most; left at the scenario's "
            f"value: {', '.join(kept)} (measure at more loads, or trace, to fit more)",
            ConfigWarning,
            stacklevel=2,
        )
        free_rows = free_rows[: len(targets)]
    free = {key: {"min": lo, "max": hi, "log": log} for key, lo, hi, log in free_rows}
    run = {k: v for k, v in RUN.items() if k not in bs.scenario}
    tree: dict[str, Any] = {
        "calibrate": {"name": "host-fitted", "seeds": list(seeds), "base": "bundle-host.toml"},
        "base": run,
        "free": free,
        "target": targets,
        "validate": validate,
    }
    return tree, plan
