"""A window's deltas and rates from two snapshots (:func:`summarize`).

A counter that went backwards between the snapshots (it wrapped, or was reset: a CPU taken
offline and back, a driver reloaded) is not a rate: it is left out (``None``) with a warning
naming it, never turned into a negative or a huge number.
"""

from __future__ import annotations

from typing import Any


def _delta(before: Any, after: Any, what: str, warnings: list[str]) -> int | None:
    if not isinstance(before, int) or not isinstance(after, int):
        return None
    if after < before:
        warnings.append(f"{what} went backwards ({before} → {after}): treated as missing")
        return None
    return after - before


def _rate(delta: int | None, window_s: float) -> float | None:
    return None if delta is None else delta / window_s


def _cpus(snap: dict[str, Any]) -> set[str]:
    cpus = set(snap.get("stat", {})) | set(snap.get("softnet_stat", {}))
    for counts in snap.get("softirqs", {}).values():
        cpus |= set(counts)
    return cpus


def summarize(
    before: dict[str, Any], after: dict[str, Any], window_s: float, user_hz: int
) -> dict[str, Any]:
    """Per CPU: NET_RX and NET_TX softirqs/s, packets processed/s, drops and time_squeeze
    (counts in the window), and the shares of the window spent in softirq, hard IRQ and idle
    (jiffies of ``user_hz`` over the window); per IRQ: its rate in total and per CPU; UDP's
    counters per second; with the interface's counters in both snapshots, its receive rates
    (``iface``). ``warnings``: each counter left out, and why."""
    warnings: list[str] = []
    cpus = []
    for cpu in sorted(_cpus(before) & _cpus(after), key=int):
        row: dict[str, Any] = {"cpu": int(cpu)}
        for name in ("NET_RX", "NET_TX"):
            d = _delta(
                before.get("softirqs", {}).get(name, {}).get(cpu),
                after.get("softirqs", {}).get(name, {}).get(cpu),
                f"/proc/softirqs {name} on CPU {cpu}",
                warnings,
            )
            row[f"{name.lower()}_per_s"] = _rate(d, window_s)
        sn0 = before.get("softnet_stat", {}).get(cpu, {})
        sn1 = after.get("softnet_stat", {}).get(cpu, {})
        for field in ("processed", "dropped", "time_squeeze"):
            d = _delta(
                sn0.get(field), sn1.get(field), f"softnet_stat {field} on CPU {cpu}", warnings
            )
            if field == "processed":
                row["packets_per_s"] = _rate(d, window_s)
            else:
                row[field] = d
        st0 = before.get("stat", {}).get(cpu, {})
        st1 = after.get("stat", {}).get(cpu, {})
        for field in ("softirq", "irq", "idle"):
            d = _delta(st0.get(field), st1.get(field), f"/proc/stat {field} of CPU {cpu}", warnings)
            row[f"{field}_share"] = None if d is None else d / user_hz / window_s
        cpus.append(row)
    irqs = []
    irqs_before = before.get("interrupts", {})
    for irq, entry in sorted(after.get("interrupts", {}).items(), key=lambda kv: int(kv[0])):
        if irq not in irqs_before:
            continue
        per_cpu: dict[str, float | None] = {}
        total = 0.0
        for cpu, count in entry["counts"].items():
            d = _delta(
                irqs_before[irq]["counts"].get(cpu), count, f"IRQ {irq} on CPU {cpu}", warnings
            )
            per_cpu[cpu] = _rate(d, window_s)
            total += per_cpu[cpu] or 0.0
        if total > 0:
            irqs.append(
                {"irq": int(irq), "name": entry["name"], "per_s": total, "per_cpu": per_cpu}
            )
    udp: dict[str, float | None] = {}
    for name, value in after.get("udp", {}).items():
        d = _delta(before.get("udp", {}).get(name), value, f"Udp {name}", warnings)
        udp[f"{name}_per_s"] = _rate(d, window_s)
    out = {"window_s": window_s, "cpus": cpus, "irqs": irqs, "udp": udp, "warnings": warnings}
    i0, i1 = before.get("iface"), after.get("iface")
    if isinstance(i0, dict) and isinstance(i1, dict) and i0.get("name") == i1.get("name"):
        iface: dict[str, Any] = {"name": i1["name"]}
        for name, value in i1.items():
            if name != "name":
                d = _delta(i0.get(name), value, f"{i1['name']} {name}", warnings)
                iface[f"{name}_per_s"] = _rate(d, window_s)
        out["iface"] = iface
    return out


def summarize_trace(d: dict[str, Any]) -> dict[str, Any]:
    """The tracepoints' headline numbers (distributions.json has the whole histograms): per
    CPU, NET_RX runs per second, their mean and p99 duration, the share of the window spent
    in them and the share of runs in ksoftirqd; per NAPI device, polls per second and the
    mean packets per poll; the app's wake-up delay; and what the probes cost."""
    window = d.get("window_s") or 0.0
    cpus = {}
    for cpu, e in d.get("net_rx", {}).items():
        runs = e["runs"]
        n = runs.get("inline", 0) + runs.get("ksoftirqd", 0)
        dur = e["duration_ns"]
        cpus[cpu] = {
            "net_rx_runs_per_s": n / window if window > 0 else None,
            "net_rx_mean_ns": dur.get("mean"),
            "net_rx_p99_ns": dur.get("p99"),
            "net_rx_share": dur["sum"] / (window * 1e9) if window > 0 and "sum" in dur else None,
            "ksoftirqd_runs_share": runs.get("ksoftirqd", 0) / n if n else None,
            "raise_to_run_p99_ns": e["raise_to_run_ns"].get("p99"),
        }
    napi = {
        dev: {
            "polls_per_s": e["polls"] / window if window > 0 else None,
            "packets_per_poll": e["packets"] / e["polls"] if e["polls"] else None,
            "full_budget_share": e["full_budget"] / e["polls"] if e["polls"] else None,
        }
        for dev, e in d.get("napi_poll", {}).items()
    }
    wake = d.get("app_wakeup_us")
    over = d.get("overhead", {})
    return {
        "window_s": window,
        "net_rx": cpus,
        "napi_poll": napi,
        "app_wakeup_us": None
        if wake is None
        else {k: wake.get(k) for k in ("count", "mean", "p50", "p99")},
        "probes_ns_per_event": {
            name: p.get("ns_per_event") for name, p in over.get("probes", {}).items()
        },
        "probes_cpu_share": over.get("cpu_share"),
    }
