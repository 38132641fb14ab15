"""Running a lab sweep (:func:`run_lab`): the host checked, the topology and knobs set, each
point measured into its bundle, and ``OUT/lab.json`` written after every point; the host put
back on every way out.

A point: the sender starts at the point's rate and settles, the window is recorded as by
``irqlab measure`` (global counters before and after) while the namespaces' UDP counters, the
threads' CPU time and the sender's count are read around and in it, and the sender's own
totals are read when it ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.ops.lab.load import PACING_SAMPLE_S, Receiver, Sender, Window, pacing
from irqlab.ops.lab.measured import counts, measured, thread_shares
from irqlab.ops.lab.netns import (
    RX_DEV,
    STATE_DIR,
    Guard,
    LabError,
    Topology,
    allowed_cpus,
    ksoftirqd_pids,
    napi_threads,
    netns_names,
    package_of,
    pin,
    remove_stale,
    restore_stale,
    sysctl_read,
    tasks_named,
)
from irqlab.ops.lab.plan import SETTLE_S, Plan, Point, sender_run_s

FORMAT = "irqlab-lab"
FORMAT_VERSION = 1
PROGRAMS = ("sockperf", "ip", "ethtool", "taskset", "sh")
#: The receiving application's name, whose wake-up delay the tracing records.
RECEIVER_COMM = "sockperf"
#: Why a point without --trace records no tracepoints (bundle's manifest).
UNTRACED = "irqlab lab: counters only (with --trace the point runs once more, traced)"


def trace_session() -> Any:
    """The tracing's session class, or a one-line error if this irqlab has none."""
    try:
        from irqlab.ops.measure import tracing  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        raise ConfigError(
            "--trace: this irqlab records no tracepoints yet (no irqlab.ops.measure.tracing)",
            "trace",
        ) from None
    return tracing.TraceSession


def preflight(plan: Plan, euid: int | None = None) -> None:
    """The lab's needs, each a one-line error: root, and the programs it runs."""
    if (os.geteuid() if euid is None else euid) != 0:
        raise LabError(
            "irqlab lab needs root: it creates network namespaces, a veth pair and sets sysctls"
        )
    for program in PROGRAMS:
        if shutil.which(program) is None:
            raise LabError(f"{program}: not found; install {package_of(program)}")
    if plan.trace:
        trace_session()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def progress_line(point: Point, m: dict[str, Any], c: dict[str, int]) -> str:
    """One line per point: rate, sent, received, drops, each CPU's softirq share."""
    shares = " ".join(f"CPU{cpu} {_pct(s)}" for cpu, s in m["net_rx_share"].items())
    napi = m["napi_thread_share"]
    ppp = m["packets_per_poll"]
    return (
        f"{point.name:>16}: asked {point.rate_pps:>9,.0f}/s  sent {m['sent_pps']:>9,.0f}/s  "
        f"received {m['app_pps']:>9,.0f}/s  socket drops {_pct(m['socket_drop_ratio'])}"
        f" (veth {c['veth_rx_dropped'] + c['veth_tx_dropped']:,})  softirq {shares}"
        + (f"  napi thread {_pct(napi)}" if napi is not None else "")
        + (f"  pkts/poll {ppp:.2f}" if ppp is not None else "")
    )


def _dump(path: Path, data: Any) -> None:
    try:
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    except OSError as e:
        raise ConfigError(f"{path}: cannot be written ({e.strerror or e})", None) from None


def pacing_summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The sender's pacing over the sweep: per point, sockperf's own rate over its run and the
    rate counted in the window, each against the request. The pacer's own error shows where
    nothing was dropped (``*_without_drops``); at overload without threaded NAPI the softirq
    on the sender's core holds the sender back, a property of the host, not of the pacer."""

    def rel(value: float | None, requested: float) -> float | None:
        return None if value is None else value / requested - 1

    rows = {}
    for p in points:
        c = p["counts"]
        rows[p["name"]] = {
            "requested_pps": p["rate_pps"],
            "sockperf_pps": p["sender"].get("rate_pps"),
            "sockperf_error": rel(p["sender"].get("rate_pps"), p["rate_pps"]),
            "window_pps": p["pacing"]["achieved_pps"],
            "window_error": p["pacing"]["error"],
            "interval_cv": p["pacing"]["interval_cv"],
            "drops": c["socket_drops"] + c["veth_rx_dropped"] + c["veth_tx_dropped"],
        }

    def worst(key: str, clean: bool) -> float | None:
        values = [
            abs(r[key])
            for r in rows.values()
            if r[key] is not None and (r["drops"] == 0 or not clean)
        ]
        return max(values, default=None)

    cvs = sorted(r["interval_cv"] for r in rows.values() if r["interval_cv"] is not None)
    return {
        "tool": "sockperf throughput --mps: spins on the clock between sends, one message a period",
        "sample_s": PACING_SAMPLE_S,
        "points": rows,
        "max_abs_sockperf_error": worst("sockperf_error", False),
        "max_abs_sockperf_error_without_drops": worst("sockperf_error", True),
        "max_abs_window_error_without_drops": worst("window_error", True),
        "median_interval_cv": cvs[len(cvs) // 2] if cvs else None,
    }


def _threaded_napi(topology: Topology, threaded: bool, core: int) -> dict[int, str]:
    """Threaded NAPI of the receiving veth on or off; when on, its new threads (by pid), each
    pinned to ``core``."""
    napi: dict[int, str] = {}
    if threaded:
        existing = set(tasks_named(lambda c: c.startswith(f"napi/{RX_DEV}-")))
        topology.set_threaded(True)
        napi = napi_threads(existing)
        if not napi:
            raise LabError(f"threaded NAPI on {RX_DEV}: no napi/{RX_DEV}-N thread appeared")
        for pid in napi:
            pin(pid, core)
            if allowed_cpus(pid) != str(core):
                raise LabError(f"napi thread {pid}: not pinned to CPU {core}")
    else:
        topology.set_threaded(False)
    if topology.threaded() != threaded:
        raise LabError(f"/sys/class/net/{RX_DEV}/threaded did not become {int(threaded)}")
    return napi


def _measure_point(
    plan: Plan,
    point: Point,
    topology: Topology,
    threads: dict[str, int],
    out: Path,
    trace: Any,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One point: the sender started and settled, the window recorded, the sender's totals
    read; its entry of ``lab.json`` and its bundle's manifest."""
    from irqlab.ops.measure import record, write_bundle
    from irqlab.ops.probe import Host

    sender = Sender(
        topology, plan.sender_core, plan.size_bytes, point.rate_pps, sender_run_s(plan.seconds)
    )
    with contextlib.ExitStack() as stack:
        session = None
        if trace is not None:
            # attached before the sender starts: bpftrace takes seconds to attach, and the
            # sender's run is timed for the window alone
            session = stack.enter_context(trace(cpus=None, app_comm=RECEIVER_COMM))
            session.start()
        stack.callback(sender.stop)
        sender_pid = sender.start()
        time.sleep(SETTLE_S)
        window = Window(sender_pid, threads["receiver"], {**threads, "sender": sender_pid})
        bundle = record(
            Host(Path("/")),
            plan.seconds,
            sleep=window.sleep,
            trace=session,
            settings=False,
            untraced=UNTRACED,
        )
        distributions = bundle.distributions
        if window.stopped is not None:
            raise window.stopped
        totals = sender.finish()
    name = name or point.name
    where = out / "points" / name
    write_bundle(bundle, where)
    _dump(where / "lab_window.json", {
        "window_s": window.window_s,
        "before": window.before,
        "after": window.after,
        "pacing_samples": window.samples,
    })  # fmt: skip
    if distributions is not None:
        _dump(where / "distributions.json", distributions)
    entry = {
        "name": name,
        "threaded": point.threaded,
        "rate_pps": point.rate_pps,
        "repeat": point.repeat,
        "bundle": f"points/{name}",
        "measured": measured(
            bundle.summary,
            window.before,
            window.after,
            window.window_s,
            threaded=point.threaded,
            distributions=distributions,
        ),
        "counts": counts(window.before, window.after),
        "window_s": window.window_s,
        "sender": totals,
        "threads_share": thread_shares(window.before, window.after, window.window_s),
        "threads_wait_share": thread_shares(
            window.before, window.after, window.window_s, "schedwait_ns"
        ),
        "pacing": pacing(window.samples, point.rate_pps),
    }
    return entry, bundle.manifest


def _traced_run(
    plan: Plan,
    point: Point,
    topology: Topology,
    threads: dict[str, int],
    out: Path,
    trace: Any,
) -> dict[str, Any]:
    """The point once more, traced: its bundle and what it measured (the distributions only
    tracing shows, at the load the probes leave)."""
    name = f"traced-{point.name}"
    entry, _ = _measure_point(plan, point, topology, threads, out, trace, name=name)
    return {"bundle": entry["bundle"], "measured": entry["measured"], "counts": entry["counts"]}


def tracing_cost(points: list[dict[str, Any]], threaded: bool) -> dict[str, Any] | None:
    """What tracing costs the load: at the mode's top rate, the sender's and the app's
    packets/s untraced and traced (None without a traced run there)."""
    mine = [p for p in points if p["threaded"] == threaded and "traced" in p]
    if not mine:
        return None
    rate = max(p["rate_pps"] for p in mine)
    top = next(p for p in mine if p["rate_pps"] == rate)  # its first run
    keys = ("sent_pps", "app_pps")
    return {
        "threaded": threaded,
        "rate_pps": top["rate_pps"],
        "untraced": {k: top["measured"][k] for k in keys},
        "traced": {k: top["traced"]["measured"][k] for k in keys},
        "untraced_bundle": top["bundle"],
        "traced_bundle": top["traced"]["bundle"],
    }


def tracing_cost_line(cost: dict[str, Any]) -> str:
    """The tracing's cost in one line: packets/s without and with the probes."""
    u, t = cost["untraced"], cost["traced"]
    mode = "threaded" if cost["threaded"] else "softirq"
    return (
        f"tracing's cost ({mode}, asked {cost['rate_pps']:,.0f}/s): sent {u['sent_pps']:,.0f}/s "
        f"untraced, {t['sent_pps']:,.0f}/s traced; received {u['app_pps']:,.0f}/s and "
        f"{t['app_pps']:,.0f}/s"
    )


def run_lab(plan: Plan, out: Path, echo: Callable[[str], None]) -> dict[str, Any]:
    """Runs the sweep of ``plan``, writes ``out`` and says one line per point through
    ``echo``; the lab's record (``lab.json``). The host is put back however it ends."""
    preflight(plan)
    remove_stale(echo)
    try:
        (out / "points").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot be made ({e.strerror or e})", "out") from None
    trace = trace_session() if plan.trace else None
    restore_stale(echo)
    guard = Guard(state=STATE_DIR / f"lab-{os.getpid()}.json").start()
    receiver: Receiver | None = None
    started = time.monotonic()
    try:
        if trace is not None:
            guard.mount_tracefs()  # the watchdog unmounts it, even after SIGKILL
        guard.set_sysctl("net.core.netdev_budget", str(plan.netdev_budget))
        guard.set_sysctl("net.core.busy_read", str(plan.busy_read_us))
        # rmem_max before the namespaces: a new namespace takes the host's (read-only in it)
        if plan.rcvbuf_bytes > int(sysctl_read("net.core.rmem_max")):
            guard.set_sysctl("net.core.rmem_max", str(plan.rcvbuf_bytes))
        topology = Topology(*netns_names(os.getpid()))
        offloads = topology.create(guard)
        if not offloads["gro"]:
            raise LabError(f"ethtool -K {RX_DEV} gro on: GRO stays off, veth would not use NAPI")
        rmem_max = topology.rmem_max()
        receiver = Receiver(topology, plan.app_core, plan.rcvbuf_bytes)
        receiver_pid = receiver.start()
        ksoftirqd = ksoftirqd_pids()
        lab: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "kernel": platform.release(),
            "hz": None,
            "cpus": os.cpu_count() or len(plan.cpus),
            "sender_core": plan.sender_core,
            "app_core": plan.app_core,
            "napi_thread_core": plan.napi_thread_core,
            "size_bytes": plan.size_bytes,
            "seconds": plan.seconds,
            "settings": {
                "netdev_budget": plan.netdev_budget,
                "rcvbuf_bytes": plan.rcvbuf_bytes,
                # SO_RCVBUF as the kernel keeps it: twice the request, capped by rmem_max
                "rcvbuf_kernel_bytes": 2 * min(plan.rcvbuf_bytes, rmem_max),
                "busy_read_us": plan.busy_read_us,
                "gro": offloads["gro"],
                "sender_tso": offloads["sender_tso"],
                "sender_gso": offloads["sender_gso"],
                "device": "veth",
                "receiver": "sockperf server (blocking recvfrom)",
            },
            "pacing": {},
            "points": [],
            "repeats": plan.repeats,
        }
        for threaded in plan.threaded:
            napi = _threaded_napi(topology, threaded, plan.napi_thread_core)
            threads = {f"ksoftirqd/{cpu}": pid for cpu, pid in ksoftirqd.items()}
            threads |= {comm: pid for pid, comm in napi.items()}
            threads["receiver"] = receiver_pid
            for point in (p for p in plan.points() if p.threaded == threaded):
                entry, manifest = _measure_point(plan, point, topology, threads, out, None)
                if trace is not None:
                    entry["traced"] = _traced_run(plan, point, topology, threads, out, trace)
                lab["hz"] = manifest.get("hz")
                lab["cpus"] = manifest.get("cpus") or lab["cpus"]
                lab["kernel"] = manifest.get("kernel") or lab["kernel"]
                lab["points"].append(entry)
                lab["pacing"] = pacing_summary(lab["points"])
                lab["wall_s"] = time.monotonic() - started
                _dump(out / "lab.json", lab)
                echo(progress_line(point, entry["measured"], entry["counts"]))
                if "traced" in entry:
                    t = entry["traced"]
                    echo("  traced: " + progress_line(point, t["measured"], t["counts"]).strip())
            cost = tracing_cost(lab["points"], threaded)
            if cost is not None:
                lab.setdefault("tracing_overhead", []).append(cost)
                _dump(out / "lab.json", lab)
                echo(tracing_cost_line(cost))
        return lab
    finally:
        if receiver is not None:
            with contextlib.suppress(Exception):  # the removal below kills what is left
                receiver.stop()
        guard.release()
