"""A lab's sweep (``irqlab lab``'s output folder) as calibration targets, and the comparison of
its measurements with the fitted model's predictions.

The lab measured the local kernel at a list of rates, with threaded NAPI off and on, perhaps
several times. :func:`load_lab` reads the folder (one line naming what is wrong with a damaged
one); :func:`lab_targets` builds a targets file from it: the lab's host as a scenario (a veth
device fed by a sending thread, the receiving app, the kernel's settings as the lab set them),
the costs free, the measurements at about half of the rates as targets and those at the other
rates as validation points — so that the fit predicts the rates it never saw. Each measured
quantity maps to one metric of the model (:data:`QUANTITIES`), with the goal the prediction is
held to: :func:`compare` says, per validation point, whether it is met — within the goal, or
within the spread of the repeated lab runs where that is wider.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError

#: The lab folder's description, and the format this irqlab reads.
LAB_FILE = "lab.json"
LAB_FORMAT = "irqlab-lab"
LAB_FORMAT_VERSION = 1
#: Bytes a UDP payload carries on the wire besides itself: UDP, IPv4 and Ethernet headers.
HEADERS_BYTES = 8 + 20 + 14
#: The rows of a veth device's ring (drivers/net/veth.c: VETH_RING_SIZE).
VETH_RING = 256
#: What the receiving socket charges for a small datagram sent through a veth pair (its skb's
#: truesize): measured on Linux 6.18 as /proc/net/udp's rx_queue over 100 unread datagrams of
#: 64 bytes (83200 bytes); a payload up to SMALL_PAYLOAD shares its kmalloc bucket.
SMALL_TRUESIZE = 832
SMALL_PAYLOAD = 64


@dataclass(frozen=True)
class Quantity:
    """A measured quantity, the model's metric for it (``{c}``: a CPU), and the goal a
    prediction is held to: within ``absolute`` (in the metric's unit) or ``relative``."""

    key: str
    metric: str
    label: str
    absolute: float = 0.0
    relative: float = 0.0
    per_cpu: bool = False
    #: measured on the NAPI thread's CPU (``{c}``: the lab's napi_thread_core)
    on_napi_core: bool = False
    #: measured by the point's traced twin (``irqlab lab --trace``) alone
    traced: bool = False
    #: fitted at the fit's rates (else predicted at every rate: evidence only)
    fit: bool = True
    #: σ of one measurement at least: relative to the value, and absolute
    floor_relative: float = 0.0
    floor_absolute: float = 0.0

    def goal(self, measured: float) -> float:
        return max(self.absolute, self.relative * abs(measured))

    def goal_text(self) -> str:
        if self.relative:
            return f"{self.relative:.0%}"
        return f"{self.absolute * 100:g} points"


#: What the lab measures and the model predicts, with the issue's goals: packets per poll
#: within 20 %, NET_RX softirq share within 5 points, socket drops within 5 points, the app's
#: throughput within 5 %.
QUANTITIES: tuple[Quantity, ...] = (
    Quantity("app_pps", "per_app.0.consumed_pps", "app throughput (packets/s)", relative=0.05,
             floor_relative=0.01, floor_absolute=100.0),
    Quantity("sent_pps", "offered_pps", "sender's rate (packets/s)", relative=0.05,
             floor_relative=0.01, floor_absolute=100.0),
    Quantity("packets_per_poll", "packets_per_poll", "packets per poll (mean)", relative=0.20,
             floor_relative=0.05, floor_absolute=0.05),
    Quantity("net_rx_share", "per_core.{c}.cpu.softirq", "NET_RX softirq share of CPU {c}",
             absolute=0.05, per_cpu=True, floor_absolute=0.01),
    Quantity("ksoftirqd_share", "per_core.{c}.cpu.ksoftirqd", "ksoftirqd share of CPU {c}",
             absolute=0.05, per_cpu=True, floor_absolute=0.01),
    Quantity("napi_thread_share", "per_core.{c}.cpu.napi_thread",
             "NAPI thread's share of CPU {c}", absolute=0.05, on_napi_core=True,
             floor_absolute=0.01),
    Quantity("socket_drop_ratio", "socket_drop_ratio", "socket drop ratio", absolute=0.05,
             floor_absolute=0.005),
    Quantity("ring_drop_ratio", "ring_drop_ratio", "veth ring drop ratio", absolute=0.05,
             floor_absolute=0.005),
    # evidence only: fitting it moves ctx_switch_ns to 6 µs and worsens the other predictions
    # (docs/calibrate.md, "From a lab")
    Quantity("app_wakeups_per_packet", "app_wakeups_per_packet",
             "app's wake-ups per packet (traced)", absolute=0.10, floor_absolute=0.02,
             traced=True, fit=False),
)  # fmt: skip

#: The costs fitted by default: (key, min, max, log).
FREE: tuple[tuple[str, float, float, bool], ...] = (
    ("sender.cost_ns", 300.0, 30_000.0, True),
    ("platform.proto_ns", 100.0, 20_000.0, True),
    ("platform.poll_ns", 0.0, 5_000.0, False),
    ("app.0.cost_ns", 100.0, 30_000.0, True),
    ("platform.task_wakeup_ns", 0.0, 10_000.0, False),
    ("platform.ctx_switch_ns", 0.0, 10_000.0, False),
    ("platform.skb_free_ns", 10.0, 3_000.0, True),
)


class LabError(ConfigError):
    """A lab folder that cannot be read: one line naming the file and what is wrong."""


@dataclass
class LabPoint:
    """One point of the sweep, as measured."""

    name: str
    threaded: bool
    rate_pps: float
    repeat: int
    measured: dict[str, Any]
    #: the point's traced twin (``irqlab lab --trace``): its bundle and what it measured
    traced: dict[str, Any] | None = None


@dataclass
class Lab:
    """A lab's sweep: its host, its settings, its points."""

    path: Path
    kernel: str | None
    hz: int | None
    cpus: int
    sender_core: int
    app_core: int
    napi_thread_core: int
    size_bytes: int
    seconds: float
    settings: dict[str, Any]
    points: list[LabPoint] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return sorted({p.rate_pps for p in self.points})

    @property
    def modes(self) -> list[bool]:
        return sorted({p.threaded for p in self.points})


def _lab_error(where: str, what: str) -> LabError:
    return LabError(f"{where}: {what}", LAB_FILE)


def _field(tree: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in tree:
        raise _lab_error(where, f"no '{key}'")
    value = tree[key]
    if isinstance(value, bool) and kind is not bool:
        raise _lab_error(where, f"'{key}' = {value!r}: expected a number")
    if not isinstance(value, kind):
        raise _lab_error(where, f"'{key}' = {value!r}: expected {_kind_text(kind)}")
    return value


def _kind_text(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    names.update({dict: "a table", list: "a list"})
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def load_lab(path: str | Path) -> Lab:
    """Reads a lab's folder (or its lab.json). A missing or damaged lab.json, a newer format,
    a point without its bundle or without a measured value the comparison needs: one line
    naming the file and what is wrong."""
    path = Path(path)
    folder = path.parent if path.name == LAB_FILE else path
    file = folder / LAB_FILE
    shown = str(file)
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise _lab_error(
            shown, "not found: a lab's folder holds lab.json (irqlab lab -o DIR)"
        ) from None
    except OSError as e:
        raise _lab_error(shown, f"cannot read it ({e.strerror or e})") from None
    try:
        tree = json.loads(text)
    except json.JSONDecodeError as e:
        raise _lab_error(shown, f"not JSON (line {e.lineno}: {e.msg}): damaged?") from None
    if not isinstance(tree, dict):
        raise _lab_error(shown, "not a lab's description (expected a JSON object)")
    if tree.get("format") != LAB_FORMAT:
        raise _lab_error(shown, f"format {tree.get('format')!r}: not an irqlab lab")
    version = _field(tree, "format_version", int, shown)
    if version > LAB_FORMAT_VERSION:
        raise _lab_error(
            shown,
            f"format_version {version}: written by a newer irqlab (this one reads "
            f"{LAB_FORMAT_VERSION}); upgrade irqlab",
        )
    kernel = tree.get("kernel")
    hz = tree.get("hz")
    if hz is not None and (isinstance(hz, bool) or not isinstance(hz, int) or hz <= 0):
        raise _lab_error(shown, f"'hz' = {hz!r}: expected a positive integer or null")
    lab = Lab(
        path=folder,
        kernel=kernel if isinstance(kernel, str) else None,
        hz=hz,
        cpus=_field(tree, "cpus", int, shown),
        sender_core=_field(tree, "sender_core", int, shown),
        app_core=_field(tree, "app_core", int, shown),
        napi_thread_core=_field(tree, "napi_thread_core", int, shown),
        size_bytes=_field(tree, "size_bytes", int, shown),
        seconds=float(_field(tree, "seconds", (int, float), shown)),
        settings=dict(_field(tree, "settings", dict, shown)),
    )
    for core_key in ("sender_core", "app_core", "napi_thread_core"):
        if not 0 <= getattr(lab, core_key) < lab.cpus:
            raise _lab_error(
                shown, f"'{core_key}' = {getattr(lab, core_key)}: not a CPU of {lab.cpus}"
            )
    points = _field(tree, "points", list, shown)
    if not points:
        raise _lab_error(shown, "no points: the sweep measured nothing")
    for i, raw in enumerate(points):
        lab.points.append(_point(raw, i, shown, folder, lab))
    return lab


def _point(raw: Any, i: int, shown: str, folder: Path, lab: Lab) -> LabPoint:
    where = f"{shown}: point {i + 1}"
    if not isinstance(raw, dict):
        raise _lab_error(where, "expected a JSON object")
    name = _field(raw, "name", str, where)
    where = f"{shown}: point {i + 1} ({name})"
    rate = float(_field(raw, "rate_pps", (int, float), where))
    if not rate > 0:
        raise _lab_error(where, f"rate_pps = {rate:g}: must be positive")
    measured = _field(raw, "measured", dict, where)
    for q in ("sent_pps", "app_pps"):
        value = measured.get(q)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise _lab_error(where, f"measured.{q} = {value!r}: expected a number ≥ 0")
    bundle = raw.get("bundle")
    if isinstance(bundle, str):
        _same_host(folder / bundle / "manifest.json", where, lab)
    return LabPoint(
        name=name,
        threaded=bool(_field(raw, "threaded", bool, where)),
        rate_pps=rate,
        repeat=int(raw.get("repeat", 0)),
        measured=measured,
        traced=_traced(raw.get("traced"), where, folder, lab),
    )


def _traced(raw: Any, where: str, folder: Path, lab: Lab) -> dict[str, Any] | None:
    """A point's traced twin, checked like the point: its bundle there and of the lab's host,
    its measured values a table."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("measured"), dict):
        raise _lab_error(where, "'traced' has no table 'measured' (damaged?)")
    bundle = raw.get("bundle")
    if isinstance(bundle, str):
        _same_host(folder / bundle / "manifest.json", f"{where} traced", lab)
    return raw


def _same_host(manifest: Path, where: str, lab: Lab) -> None:
    """A point's bundle is there and was recorded on the lab's kernel at its HZ; else one
    line naming the point and what differs."""
    bundle = manifest.parent.relative_to(manifest.parents[2])
    try:
        tree = json.loads(manifest.read_text())
    except FileNotFoundError:
        missing = f"its bundle {bundle}/manifest.json is missing: a partial lab?"
        raise _lab_error(where, missing) from None
    except (OSError, json.JSONDecodeError) as e:
        unreadable = f"its bundle {bundle}/manifest.json is unreadable ({e})"
        raise _lab_error(where, unreadable) from None
    if not isinstance(tree, dict):
        raise _lab_error(where, f"its bundle {bundle}/manifest.json is not a manifest")
    for key, want in (("kernel", lab.kernel), ("hz", lab.hz)):
        got = tree.get(key)
        if want is not None and got is not None and got != want:
            raise _lab_error(
                where,
                f"its bundle was recorded with {key} {got}, the lab's is {want}: points of "
                "different hosts or kernels do not make one lab",
            )


def lab_scenario(lab: Lab) -> dict[str, Any]:
    """The lab's host as flat scenario keys: two namespaces joined by a veth pair, a sending
    thread pacing UDP at a constant rate on its core, the app reading the socket on its own;
    threaded NAPI is a point's key."""
    rcvbuf = lab.settings.get("rcvbuf_bytes")
    kept = lab.settings.get("rcvbuf_kernel_bytes")
    out: dict[str, Any] = {
        "scheme": "napi",
        "run.duration_ms": 200,
        "run.warmup_ms": 20,
        "host.cores": lab.cpus,
        "nic.device": "veth",
        "nic.ring_descriptors": VETH_RING,
        "traffic.kind": "cbr",
        "traffic.size_bytes": lab.size_bytes + HEADERS_BYTES,
        "sender.core": lab.sender_core,
        "sender.cost_ns": 2000.0,
        "app.0.core": lab.app_core,
        "app.0.cost_ns": 2000.0,
        "app.0.cost_dist": "deterministic",
    }
    if lab.hz is not None:
        out["kernel.hz"] = lab.hz
    budget = lab.settings.get("netdev_budget")
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
        out["kernel.netdev_budget"] = budget
    if isinstance(kept, int) and not isinstance(kept, bool) and kept > 0:
        out["socket.rcvbuf_bytes"] = kept  # as the kernel keeps it
    elif isinstance(rcvbuf, int) and not isinstance(rcvbuf, bool) and rcvbuf > 0:
        out["socket.rcvbuf_bytes"] = 2 * rcvbuf  # SO_RCVBUF's request, doubled by the kernel
    if lab.size_bytes <= SMALL_PAYLOAD:
        out["socket.truesize_bytes"] = SMALL_TRUESIZE
    busy = lab.settings.get("busy_read_us")
    if isinstance(busy, int | float) and not isinstance(busy, bool) and busy > 0:
        out["socket.busy_read_us"] = float(busy)
    return out


def fit_rates(rates: Sequence[float]) -> list[float]:
    """The rates a fit uses: half of them (rounded down), spread over the range with both ends,
    so that the others are predicted between fitted rates rather than beyond them."""
    n = len(rates)
    k = max(1, n // 2)
    if k == 1:
        return [rates[0]]
    picked = sorted({math.floor(i * (n - 1) / (k - 1) + 0.5) for i in range(k)})
    return [rates[i] for i in picked]


@dataclass
class Measurement:
    """One quantity at one (threaded, rate): the repeats' mean, their spread, the σ a fit
    gives it, and the goal its prediction is held to."""

    quantity: Quantity
    cpu: int | None
    threaded: bool
    rate_pps: float
    values: list[float]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def spread(self) -> float:
        """max − min over the repeated runs (0 with one run)."""
        return max(self.values) - min(self.values)

    def sigma(self, ticks: float | None) -> float:
        """One s.d. of the mean: the repeats' own where there are several; at least the
        quantity's floor and, for a CPU share read from ticks, the sampling error of ``ticks``
        samples."""
        q = self.quantity
        m = self.mean
        s = max(q.floor_absolute, q.floor_relative * abs(m))
        n = len(self.values)
        if n > 1:
            var = sum((v - m) ** 2 for v in self.values) / (n - 1)
            s = max(s, math.sqrt(var / n))
        if ticks and q.per_cpu:
            p = min(1.0, max(0.0, m))
            s = max(s, math.sqrt(max(p * (1 - p), 1.0 / ticks) / ticks))
        return s

    @property
    def metric(self) -> str:
        return self.quantity.metric.replace("{c}", str(self.cpu))

    @property
    def name(self) -> str:
        label = self.quantity.label.replace("{c}", str(self.cpu))
        mode = "threaded" if self.threaded else "softirq"
        return f"{label} · {mode} · {self.rate_pps:g}/s"


def measurements(lab: Lab) -> list[Measurement]:
    """Every quantity the lab measured, per (threaded, rate) over the repeats: the ones a point
    does not have (no NAPI thread without threaded NAPI; packets per poll of a NAPI thread
    without tracing) are left out."""
    groups: dict[tuple[str, int | None, bool, float], Measurement] = {}
    for p in lab.points:
        for q in QUANTITIES:
            if q.traced:
                raw = p.traced["measured"].get(q.key) if p.traced is not None else None
            else:
                raw = p.measured.get(q.key)
            if q.per_cpu:
                if not isinstance(raw, dict):
                    continue
                items: list[tuple[int | None, Any]] = [(int(c), v) for c, v in raw.items()]
            elif q.on_napi_core:
                items = [(lab.napi_thread_core, raw)]
            else:
                items = [(None, raw)]
            for cpu, v in items:
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    continue
                key = (q.key, cpu, p.threaded, p.rate_pps)
                if key not in groups:
                    groups[key] = Measurement(q, cpu, p.threaded, p.rate_pps, [])
                groups[key].values.append(float(v))
    return list(groups.values())


def lab_targets(
    lab: Lab, *, fit: Sequence[float] | None = None, seeds: Sequence[int] = (1, 2)
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A targets file (as a dict) fitting :data:`FREE` to the measurements at the rates ``fit``
    (default :func:`fit_rates`) and validating at the others; and the plan: per entry its
    quantity, CPU, threaded, rate, spread and goal, which :func:`compare` joins to the
    calibration's rows by the entry's name."""
    rates = lab.rates
    if len(rates) < 2:
        raise ConfigError(
            f"{lab.path / LAB_FILE}: one rate only; a lab to fit needs two at least (half "
            "fitted, the rest predicted): irqlab lab --rates R1,R2,...",
            "rates",
        )
    chosen = list(fit) if fit is not None else fit_rates(rates)
    for r in chosen:
        if r not in rates:
            shown = ", ".join(f"{x:g}" for x in rates)
            raise ConfigError(f"--fit-rates: {r:g} is not a rate of the lab ({shown})", "fit")
    if len(chosen) * 2 > len(rates):
        raise ConfigError(
            f"--fit-rates: {len(chosen)} of the lab's {len(rates)} rates: fit on at most half, "
            "so that the rest are predicted",
            "fit",
        )
    ticks = (lab.hz or 0) * lab.seconds * _repeats(lab) or None
    targets: list[dict[str, Any]] = []
    validate: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    for m in measurements(lab):
        sigma = m.sigma(ticks)
        entry = {
            "name": m.name,
            "point": _point_keys(lab, m),
            "metric": m.metric,
            "value": m.mean,
            "sigma": sigma,
        }
        role = "target" if m.rate_pps in chosen and m.quantity.fit else "validation"
        (targets if role == "target" else validate).append(entry)
        plan.append(
            {
                "name": m.name,
                "role": role,
                "quantity": m.quantity.key,
                "label": m.quantity.label.replace("{c}", str(m.cpu)),
                "cpu": m.cpu,
                "threaded": m.threaded,
                "rate_pps": m.rate_pps,
                "measured": m.mean,
                "runs": m.values,
                "spread": m.spread,
                "goal": m.quantity.goal(m.mean),
                "goal_text": m.quantity.goal_text(),
            }
        )
    free = {key: {"min": lo, "max": hi, "log": log} for key, lo, hi, log in FREE}
    tree: dict[str, Any] = {
        "calibrate": {"name": "lab-fitted", "seeds": list(seeds)},
        "base": lab_scenario(lab),
        "free": free,
        "target": targets,
        "validate": validate,
    }
    return tree, plan


def _point_keys(lab: Lab, m: Measurement) -> dict[str, Any]:
    """A measurement's scenario point: its rate, and threaded NAPI with its thread's core."""
    point: dict[str, Any] = {"traffic.rate_pps": m.rate_pps, "kernel.threaded_napi": m.threaded}
    if m.threaded:
        point["kernel.napi_thread_core"] = lab.napi_thread_core
    return point


def _repeats(lab: Lab) -> int:
    counts: dict[tuple[bool, float], int] = {}
    for p in lab.points:
        counts[(p.threaded, p.rate_pps)] = counts.get((p.threaded, p.rate_pps), 0) + 1
    return min(counts.values()) if counts else 1


def compare(
    plan: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The plan's entries with the calibration's prediction and standard error, the difference,
    the tolerance (the goal, or the repeats' spread where that is wider) and whether it is met."""
    by_name = {r["name"]: r for r in rows}
    out = []
    for entry in plan:
        row = by_name.get(entry["name"])
        if row is None:
            continue
        predicted = float(row["predicted"])
        diff = predicted - float(entry["measured"])
        tolerance = max(float(entry["goal"]), float(entry["spread"]))
        out.append(
            {
                **entry,
                "predicted": predicted,
                "predicted_se": float(row["predicted_se"]),
                "difference": diff,
                "tolerance": tolerance,
                "met": bool(abs(diff) <= tolerance),
            }
        )
    return out


#: The files a lab's calibration writes besides the calibration's own.
LAB_FILES = ("lab-targets.toml", "lab-comparison.json", "lab_predicted_vs_measured.png")


def comparison_figure(rows: Sequence[Mapping[str, Any]], title: str) -> Any:
    """Predicted against measured at every rate, one panel per quantity: the measured mean with
    the repeats' range (filled: fitted, hollow: predicted only), the prediction as a line with
    ±2 standard errors over the seeds as a band; blue: NET_RX in softirq, orange: threaded NAPI."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import EngFormatter, MaxNLocator

    labels = list(dict.fromkeys(r["label"] for r in rows))
    cols = min(3, len(labels)) or 1
    n_rows = max(1, math.ceil(len(labels) / cols))
    fig = Figure(figsize=(4.4 * cols, 3.4 * n_rows), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    for ax, label in zip(axes.flat, labels, strict=False):
        for threaded, color in ((False, "tab:blue"), (True, "tab:orange")):
            part = sorted(
                (r for r in rows if r["label"] == label and r["threaded"] == threaded),
                key=lambda r: r["rate_pps"],
            )
            if not part:
                continue
            x = [r["rate_pps"] for r in part]
            y = [r["predicted"] for r in part]
            band = [2 * r["predicted_se"] for r in part]
            mode = "threaded" if threaded else "softirq"
            ax.plot(x, y, color=color, lw=1.2, label=f"{mode}: predicted")
            low = [a - b for a, b in zip(y, band, strict=True)]
            high = [a + b for a, b in zip(y, band, strict=True)]
            ax.fill_between(x, low, high, color=color, alpha=0.2, lw=0)
            for role, face in (("target", color), ("validation", "white")):
                pts = [r for r in part if r["role"] == role]
                if not pts:
                    continue
                mean = [r["measured"] for r in pts]
                lo = [r["measured"] - min(r["runs"]) for r in pts]
                hi = [max(r["runs"]) - r["measured"] for r in pts]
                ax.errorbar(
                    [r["rate_pps"] for r in pts], mean, yerr=[lo, hi], fmt="o", ms=5,
                    mfc=face, mec=color, ecolor=color, capsize=2, lw=1,
                    label=f"{mode}: measured ({'fitted' if role == 'target' else 'predicted'})",
                )  # fmt: skip
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("offered rate (packets/s)")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(labels) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    return fig


def comparison_text(rows: Sequence[Mapping[str, Any]], against: str = "the lab") -> str:
    """Per quantity: how many predicted (not fitted) points meet their tolerance, and the worst."""
    lines = [f"predicted rates against {against} (tolerance: the goal, or the repeats' spread):"]
    valid = [r for r in rows if r["role"] == "validation"]
    if not valid:
        lines.append("  nothing predicted: every rate was fitted (measure at more loads)")
    for label in dict.fromkeys(r["label"] for r in valid):
        part = [r for r in valid if r["label"] == label]
        met = sum(1 for r in part if r["met"])
        worst = max(part, key=lambda r: abs(r["difference"]) / (r["tolerance"] or 1.0))
        lines.append(
            f"  {label}: {met}/{len(part)} within {part[0]['goal_text']}; worst "
            f"{'threaded' if worst['threaded'] else 'softirq'} at {worst['rate_pps']:g}/s: "
            f"measured {worst['measured']:.4g}, predicted {worst['predicted']:.4g}"
        )
    return "\n".join(lines) + "\n"


def write_comparison(
    out: Path, rows: Sequence[Mapping[str, Any]], lab: Lab
) -> tuple[str, list[str]]:
    """Joins the calibration's rows to the lab's plan (``out``/lab-plan.json), writes
    lab-comparison.json and the figure; returns the summary text and the files written."""
    title = f"the lab on {lab.kernel or 'this kernel'}: measured against predicted"
    meta = {"lab": str(lab.path), "kernel": lab.kernel, "hz": lab.hz}
    return write_plan_comparison(out, rows, "lab", title, meta, "the lab")


def write_plan_comparison(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    prefix: str,
    title: str,
    meta: Mapping[str, Any],
    against: str,
) -> tuple[str, list[str]]:
    """Joins the calibration's rows to the plan (``out``/PREFIX-plan.json), writes
    PREFIX-comparison.json and PREFIX_predicted_vs_measured.png; returns the summary text and
    the files written."""
    from irqlab.files import write_atomic

    plan = json.loads((out / f"{prefix}-plan.json").read_text())
    table = compare(plan, rows)
    data = {"kind": f"{prefix}-comparison", **meta, "rows": table}
    name = f"{prefix}-comparison.json"
    write_atomic(out / name, json.dumps(data, indent=1) + "\n", "--out")
    figure = f"{prefix}_predicted_vs_measured.png"
    save_figure(comparison_figure(table, title), out / figure)
    return comparison_text(table, against), [name, figure]


def save_figure(fig: Any, path: Path) -> None:
    """Writes ``fig`` as a PNG at ``path``; one line naming the folder if it cannot."""
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise ConfigError(
            f"--out {path.parent}: cannot write the figure ({e.strerror or e})", "out"
        ) from None
