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
    counters per second. ``warnings``: each counter left out, and why."""
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
    return {"window_s": window_s, "cpus": cpus, "irqs": irqs, "udp": udp, "warnings": warnings}
