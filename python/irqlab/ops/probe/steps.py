"""The probe, step by step: the interface, its CPUs, device and driver, ethtool's outputs, the
CPU clock, channels and rings, coalescing, the host settings (sysctls, sysfs, netlink), the tick
rate, the IRQs with their affinity and rates, the RSS table, and last the scenario as a whole
through the loader ``irqlab check`` uses. Each step records what it read on the
:class:`~irqlab.ops.probe.findings.Probe`, with its source, or a note saying why it could not.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, ConfigWarning
from irqlab.ops.probe import ineffective, limits, netlink, settings
from irqlab.ops.probe.findings import Probe, Vector
from irqlab.ops.probe.host import ETHTOOL_OPTIONS, Host
from irqlab.ops.probe.parsers import (
    Interrupts,
    gunzip,
    integer,
    kernel_version,
    parse_cpulist,
    parse_ethtool,
    parse_hz,
    parse_interrupts,
    parse_rss_table,
)
from irqlab.ops.probe.settings import DRIVERS, GENERIC, HZ_OF_DEFAULT_BUDGET_USECS, HostSetting
from irqlab.ops.probe.text import as_shown, clean
from irqlab.scenario import resolve, show_key, spec_of


def interfaces(host: Host) -> list[str]:
    return [n for n in host.listdir("/sys/class/net") or [] if not n.startswith(".")]


def _listing(names: list[str]) -> str:
    shown = ", ".join(show_key(n) for n in names[:16])
    return shown + (f", … ({len(names)} in all)" if len(names) > 16 else "")


def default_interface(host: Host) -> str:
    """The interface of the default route, else the only one with a device behind it."""
    names = interfaces(host)
    if not names:
        raise ConfigError(
            f"no network interfaces in {host.path('/sys/class/net')}"
            + (" (is --root a recorded host?)" if host.recorded else ""),
            None,
        )
    for line in (host.read("/proc/net/route") or "").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 1 and fields[1] == "00000000" and fields[0] in names:
            return fields[0]
    devices = [n for n in names if host.exists(f"/sys/class/net/{n}/device")]
    if devices:
        return devices[0]
    raise ConfigError(
        f"no default route and no interface with a device; name one of: {_listing(names)}",
        None,
    )


def probe(
    iface: str | None = None,
    *,
    root: str | Path = "/",
    interval_s: float = 1.0,
    ethtool: str | None = None,
    timeout_s: float = 5.0,
) -> Probe:
    """Probes ``iface`` (default: the interface of the default route) on the host under
    ``root`` and returns what was read and the scenario it gives.

    ``interval_s`` separates the two samples of /proc/interrupts and of the interface's
    packet counters (0: one sample, no rates). ``ethtool`` is the command to run (default:
    ``ethtool`` on the PATH for the live host, the recorded outputs for a tree), given
    ``timeout_s`` to answer (netlink too). Raises :class:`ConfigError` only if the interface
    cannot be found; anything else missing or damaged is a note in :attr:`Probe.notes`.
    """
    host = Host(root, ethtool=ethtool, timeout_s=timeout_s)
    names = interfaces(host)
    if iface is None:
        iface = default_interface(host)
    elif iface not in names:
        where = f" in {host.root}" if host.recorded else ""
        found = _listing(names) if names else "none"
        raise ConfigError(
            f"no interface '{show_key(iface)}'{where}; interfaces found: {found}", None
        )
    p = Probe(iface=iface, interval_s=interval_s)
    p.hostname = as_shown((host.read("/proc/sys/kernel/hostname") or "").strip(), 255) or None
    p.kernel = as_shown((host.read("/proc/sys/kernel/osrelease") or "").strip(), 255) or None
    p.set("scheme", "napi", "Linux receives through NAPI")
    online = _cpus(host, p)
    _device(host, p)
    ethtool_out = _ethtool(host, p)
    _cpu_clock(host, p, online)
    _channels_and_rings(host, p, ethtool_out)
    _coalescing(p, ethtool_out.get("show-coalesce"))
    _host_settings(host, p)
    tick_rate(host, p)
    _irqs(host, p, online)
    netlink.join_vectors(p.napis, p.vectors)
    _rss(p, ethtool_out.get("show-rxfh-indir"))
    _problems(host, p)
    p.ineffective = ineffective.probe_findings(host, p)
    _validate(p)
    p.notes = [clean(note) for note in p.notes]  # an interface's name may carry anything
    return p


def _problems(host: Host, p: Probe) -> None:
    """A note for each path that could not be read and that no reader reported, but one under
    a path with a note of its own (a looping device link); at most ``MAX_PROBLEM_NOTES``."""
    said = 0
    for name, why in host.problems.items():
        if any(str(parent) in host.problems for parent in Path(name).parents):
            continue
        if said == limits.MAX_PROBLEM_NOTES:
            left = len(host.problems) - said
            p.notes.append(f"… and up to {left} more files that could not be read")
            return
        p.notes.append(f"{as_shown(name, 200)}: {why}")
        said += 1


def _cpus(host: Host, p: Probe) -> list[int]:
    name = "/sys/devices/system/cpu/online"
    text = host.read(name)
    online: list[int] = []
    source = ""
    if text is not None:
        try:
            online = parse_cpulist(text)
            source = f"{name}: {as_shown(text.strip())}"
        except ValueError as e:
            p.notes.append(f"{name}: cannot parse {as_shown(text.strip())!r}: {e}")
    if not online:
        info = host.read("/proc/cpuinfo", limit=limits.MAX_TABLE_BYTES, keep=True) or ""
        found = re.finditer(r"^processor\s*:\s*([0-9]{1,9})", info, re.M)
        online = sorted({int(m[1]) for m in itertools.islice(found, limits.MAX_CPUS)})
        source = f"/proc/cpuinfo: {len(online)} processors"
    if not online:
        p.notes.append("CPU count unknown (no /sys/devices/system/cpu/online, no /proc/cpuinfo)")
        return []
    cores = len(online)
    if cores > 1024:
        p.notes.append(f"{cores} CPUs: irqlab simulates at most 1024 cores; host.cores = 1024")
        online = online[:1024]
    p.set("host.cores", len(online), source)
    return online


def _device(host: Host, p: Probe) -> None:
    """The driver, the bus address and the link speed."""
    base = f"/sys/class/net/{p.iface}"
    link = host.readlink(f"{base}/device/driver")
    if link:
        p.driver = as_shown(os.path.basename(link.rstrip("/"))) or None
        driver_source = f"{base}/device/driver → {p.driver}"
    else:
        uevent = host.read(f"{base}/device/uevent") or ""
        m = re.search(r"^DRIVER=(\S+)", uevent, re.M)
        p.driver = as_shown(m[1]) if m else None
        driver_source = f"{base}/device/uevent: DRIVER={p.driver}"
    device = host.realname(f"{base}/device")
    if p.driver:
        p.driver_source = driver_source
    elif f"{base}/device" in host.problems:
        pass  # a note says what is wrong with it
    elif not host.exists(f"{base}/device"):
        p.notes.append(f"{p.iface} has no device ({base}/device): a virtual interface")
    else:
        p.notes.append(f"{base}/device: no driver link nor uevent; the driver from ethtool -i")
    if device is not None:
        for d in (device, device.parent):
            if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d.name):
                p.bus = d.name
                break
    text = host.read(f"{base}/speed")
    speed = integer(text.strip() if text else None)
    if speed is not None and speed > 0:
        p.set("nic.link_gbps", speed / 1000, f"{base}/speed: {speed} Mb/s")
    else:
        if text is None:
            why = host.failure(f"{base}/speed")
            shown = "unreadable" if why == "not present" else why
        else:
            shown = f"{speed}" if speed is not None else f"{as_shown(text.strip())!r}"
        p.notes.append(f"{base}/speed: {shown} (link speed unknown): nic.link_gbps keeps 10")


@dataclass
class EthtoolOutput:
    """One ethtool command's output, its fields (:func:`parse_ethtool`) and its source."""

    fields: dict[str, str | None]
    source: str
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.fields.get(name)


def _ethtool(host: Host, p: Probe) -> dict[str, EthtoolOutput]:
    out: dict[str, EthtoolOutput] = {}
    missing: list[str] = []
    for option in ETHTOOL_OPTIONS:
        text, source = host.ethtool(option, p.iface)
        if text is None:
            missing.append(source)
            continue
        fields = parse_ethtool(text) if option != "show-rxfh-indir" else {}
        out[option] = EthtoolOutput(fields, source, text)
    if len(missing) == len(ETHTOOL_OPTIONS):
        if all(m.startswith("no recorded") for m in missing):
            why = f"no recorded ethtool output (ethtool/{p.iface}/{{driver,show-coalesce,...}})"
        elif all(m.endswith(" not found") for m in missing):
            why = missing[0].split(": ", 1)[1]
        else:  # each failed (or a recording is damaged): say each
            p.notes.extend(missing[:-1])
            why = missing[-1]
        p.notes.append(f"{why}: coalescing, ring sizes and channels unknown (docs/probe.md)")
    else:
        p.notes.extend(missing)
    info = out.get("driver")
    if info:
        if not p.driver and info.get("driver"):
            p.driver = as_shown(info.get("driver") or "")
            p.driver_source = f"ethtool -i {p.iface}"
        version = info.get("version")
        p.driver_version = as_shown(version) if version else None
        bus = info.get("bus-info")
        if not p.bus and bus:
            p.bus = as_shown(bus)
    return out


def _cpu_clock(host: Host, p: Probe, online: list[int]) -> None:
    cpu = online[0] if online else 0
    base = f"/sys/devices/system/cpu/cpu{cpu}/cpufreq"
    for name, what in (("cpuinfo_max_freq", "maximum"), ("base_frequency", "base")):
        khz = integer((host.read(f"{base}/{name}") or "").strip() or None)
        if khz:
            p.set("platform.cpu_ghz", round(khz / 1e6, 3), f"{base}/{name}: {khz} kHz ({what})")
            return
    info = host.read("/proc/cpuinfo", limit=limits.MAX_TABLE_BYTES, keep=True) or ""
    found = re.finditer(r"^cpu MHz\s*:\s*([0-9]{1,9}(?:\.[0-9]{1,9})?)\s*$", info, re.M)
    mhz = [float(m[1]) for m in itertools.islice(found, limits.MAX_CPUS)]
    if mhz:
        ghz = round(sum(mhz) / len(mhz) / 1000, 3)
        p.set("platform.cpu_ghz", ghz, f"/proc/cpuinfo: cpu MHz {sum(mhz) / len(mhz):.0f} (mean)")
        return
    p.notes.append("CPU clock unknown (no cpufreq, no 'cpu MHz' in /proc/cpuinfo)")


def _channels_and_rings(host: Host, p: Probe, eth: dict[str, EthtoolOutput]) -> None:
    ch = eth.get("show-channels")
    if ch:
        combined, rx = integer(ch.get("combined")) or 0, integer(ch.get("rx")) or 0
        if combined + rx > 0:
            parts = [f"Combined {combined}"] + ([f"RX {rx}"] if rx else [])
            p.set("nic.queues", combined + rx, f"{ch.source}: {', '.join(parts)}")
    if "nic.queues" not in p.settings:
        queues = [
            q for q in host.listdir(f"/sys/class/net/{p.iface}/queues") or [] if q[:3] == "rx-"
        ]
        if queues:
            p.set("nic.queues", len(queues), f"/sys/class/net/{p.iface}/queues: {len(queues)} rx-N")
    ring = eth.get("show-ring")
    if ring:
        for field_, key in (("rx", "nic.ring_descriptors"), ("tx", "nic.tx_ring_descriptors")):
            value = integer(ring.get(field_))
            if value:
                top = integer(ring.get(f"max {field_}"))
                most = f" (max {top})" if top else ""
                p.set(key, value, f"{ring.source}: {field_.upper()} {value}{most}")


def _rss(p: Probe, rss: EthtoolOutput | None) -> None:
    """ethtool -x → nic.rss_table_size; a table irqlab would not fill alike is a note."""
    if rss is None:
        return
    try:
        table = parse_rss_table(rss.text)
    except ValueError as e:
        p.notes.append(f"{rss.source}: {e}; nic.rss_table_size keeps its default")
        return
    p.set("nic.rss_table_size", len(table), f"{rss.source}: {len(table)} entries")
    queues = p.get("nic.queues")
    if queues and any(q != i % queues for i, q in enumerate(table)):
        p.notes.append(
            f"{rss.source}: the indirection table is not entry i → queue i mod {queues}, as "
            "irqlab fills it: its size is written, not how it spreads the flows"
        )


def _coalescing(p: Probe, c: EthtoolOutput | None) -> None:
    """ethtool -c → the ITR or coalescing of the NIC and the driver's moderation policy."""
    model = DRIVERS.get(p.driver or "", GENERIC)
    if p.driver and p.driver not in DRIVERS:
        p.notes.append(f"driver {p.driver}: no mapping of its own; {GENERIC.why}")
    if model.cause_mode:
        p.set("nic.cause_mode", model.cause_mode, f"{p.driver}'s interrupt logic")
    if c is None:
        return
    src = c.source
    adaptive = c.get("adaptive rx") == "on"
    rx_usecs, rx_frames = integer(c.get("rx-usecs")), integer(c.get("rx-frames"))
    label = f"{p.driver}: {model.why}" if p.driver else model.why
    if model.itr:
        dynamic = model.dynamic_usecs is not None and rx_usecs == model.dynamic_usecs
        if dynamic:
            policy = model.adaptive
            if p.driver == "ixgbe" and (kernel_version(p.kernel) or (99, 0)) < (4, 15):
                policy = "ixgbe-legacy"
                p.set("driver.legacy_bulk_rate", 12000, f"ixgbe before Linux 4.15 ({p.kernel})")
            p.set("driver.moderation", policy, f"{src}: rx-usecs {rx_usecs} — {label}")
        elif adaptive:
            p.set("driver.moderation", model.adaptive, f"{src}: Adaptive RX on — {label}")
            if rx_usecs is not None:
                p.set(
                    "nic.itr_us", rx_usecs, f"{src}: rx-usecs {rx_usecs} (the policy rewrites it)"
                )
        elif rx_usecs:
            p.set("driver.moderation", "static", f"{src}: Adaptive RX off — {label}")
            p.set("nic.itr_us", rx_usecs, f"{src}: rx-usecs {rx_usecs}")
        elif rx_usecs == 0:
            p.set("driver.moderation", "off", f"{src}: rx-usecs 0 — {label}")
        high = integer(c.get("rx-usecs-high"))
        if high:
            what = "µs; the vector's interrupt rate limit"
            p.unmodelled.append(("rx-usecs-high", str(high), what, src))
    else:
        if rx_usecs is not None:
            p.set("nic.rx_usecs", rx_usecs, f"{src}: rx-usecs {rx_usecs}")
        if rx_frames is not None:
            p.set("nic.rx_frames", rx_frames, f"{src}: rx-frames {rx_frames}")
        if adaptive:
            p.set("driver.moderation", model.adaptive, f"{src}: Adaptive RX on — {label}")
            cqe = c.get("cqe mode rx")
            if cqe in ("on", "off"):
                mode = "cqe" if cqe == "on" else "eqe"
                p.set("driver.dim_mode", mode, f"{src}: CQE mode RX {cqe}")
        else:
            shown = as_shown(c.get("adaptive rx") or "n/a")
            p.set("driver.moderation", "off", f"{src}: Adaptive RX {shown} — {label}")
            if c.get("cqe mode rx") == "on":
                p.notes.append(
                    f"{src}: CQE mode RX on without adaptive-rx: a static timer restarted by "
                    "each packet is not modelled (irqlab's timer starts at the first packet)"
                )
    tx_limit = integer(c.get("tx-frames-irq"))
    if model.tx_work_limit and tx_limit:
        p.set("driver.tx_work_limit", tx_limit, f"{src}: tx-frames-irq {tx_limit} (Tx work limit)")


def _napi_value(
    p: Probe, napis: list[dict[str, int]], source: str, attr: str
) -> tuple[int, str] | None:
    """The value of ``attr`` every NAPI has, or most of them (with a note: irqlab has one
    value for all vectors), and its source; None if no NAPI has it."""
    values = Counter(n[attr] for n in napis if attr in n)
    if not values:
        return None
    value, count = values.most_common(1)[0]
    total = sum(values.values())
    if len(values) > 1:
        spread = ", ".join(f"{v} on {c}" for v, c in itertools.islice(values.most_common(), 8))
        p.notes.append(
            f"{source}: {attr} differs between the NAPIs ({spread}); irqlab has one value for "
            f"every vector: the most common, {value}, is written (each NAPI's in the NAPI table)"
        )
        return value, f"{source}: {attr} {value} on {count} of {total} NAPIs"
    where = f"on all {total} NAPIs" if total > 1 else "on its one NAPI"
    return value, f"{source}: {attr} {value} {where}"


def _host_settings(host: Host, p: Probe) -> None:
    """Each setting of :data:`HOST_SETTINGS`: from netlink's per-NAPI attribute if the host
    has it, else from its file, else from the kernel release (a feature it predates)."""
    napis, napi_source = host.napis(p.iface)
    if napis == []:
        napi_source += ": no NAPI"
    release = kernel_version(p.kernel)
    _napis(host, p, napis, napi_source)
    for s in settings.HOST_SETTINGS:
        name = s.key or (s.path or s.napi or "").rsplit("/", 1)[-1]
        keeps = f"{s.key} keeps its default" if s.key else "not read"
        found = _napi_value(p, napis, napi_source, s.napi) if napis and s.napi else None
        older = s.since is not None and release is not None and release < s.since
        since = f"Linux {s.since[0]}.{s.since[1]} and later" if s.since else ""
        if found is not None:
            raw, source = found
        elif s.path:
            path = s.path.format(iface=p.iface)
            text = host.read(path)
            if text is None:
                why = host.failure(path)
                if why == "not present" and older and s.before is not None:
                    _host_value(p, s, name, s.before, f"Linux {p.kernel}: none ({since})")
                elif why == "not present" and older:
                    p.notes.append(f"{path}: Linux {p.kernel} has none ({since}); {keeps}")
                elif why == "not present" and s.key:
                    absent = f" ({s.absent})" if s.absent else ""
                    p.notes.append(f"{path}: not present{absent}; {keeps}")
                elif why != "not present":
                    p.notes.append(f"{path}: {why}; {keeps}")
                continue
            read = integer(text.strip() or None)
            if read is None:
                p.notes.append(f"{path}: {as_shown(text.strip())!r} is not an integer; {keeps}")
                continue
            raw = read
            source = f"{path}: {raw}{s.unit}"
        elif older and s.before is not None:
            _host_value(p, s, name, s.before, f"Linux {p.kernel}: none ({since})")
            continue
        else:
            if s.key:
                p.notes.append(
                    f"{s.napi}: per NAPI, only netlink's napi-get has it ({napi_source}); {keeps}"
                )
            continue
        if s.boolean:
            if raw not in (0, 1):
                p.notes.append(f"{source}: a mode irqlab does not model; {keeps}")
                continue
            _host_value(p, s, name, bool(raw), source)
            continue
        _host_value(p, s, name, raw * s.scale if s.scale != 1 else raw, source)
    # a per-NAPI setting read from the device's file instead: say so
    from_files = []
    for s in settings.HOST_SETTINGS:
        got = p.settings.get(s.key or "") or p.with_apps.get(s.key or "")
        if s.napi and s.path and got and got.source.startswith(s.path.format(iface=p.iface)):
            from_files.append(s.napi)
    p.notes += netlink.fallback_notes(napis, napi_source, p.kernel, release, from_files)


def _napis(host: Host, p: Probe, napis: list[dict[str, int]] | None, source: str) -> None:
    """The NAPI table: each NAPI's own settings and the queues it serves (queue-get)."""
    if not napis:
        return
    queues, queue_source = host.queues(p.iface)
    if queues is None:
        p.notes.append(f"{queue_source}: which queues each NAPI serves is unknown")
    p.napis = netlink.napi_table(napis, queues)
    p.napi_source = source if queues is None else f"netlink napi-get, queue-get {p.iface}"


def _host_value(p: Probe, s: HostSetting, name: str, value: Any, source: str) -> None:
    if s.key is None:
        p.unmodelled.append((name, str(value), s.what, source))
    elif s.needs_app and value:
        p.set_for_apps(s.key, value, source)
    else:
        p.set(s.key, value, source)


def tick_rate(host: Host, p: Probe) -> None:
    """Sets `kernel.hz` from the kernel configuration (or infers it from a default budget),
    with its source; a note when the host does not say (also read by `irqlab measure`)."""
    release = p.kernel or ""
    hz, source = None, ""
    plain_release = re.fullmatch(r"[\w.+~-]+", release) is not None  # no "/" to leave the tree
    config = host.read(f"/boot/config-{release}") if release and plain_release else None
    if config is not None:
        hz, source = parse_hz(config), f"/boot/config-{release}"
    if hz is None:
        packed = host.read_bytes("/proc/config.gz")
        if packed is not None:
            try:
                text = gunzip(packed).decode("utf-8", errors="replace")
                hz, source = parse_hz(text), "/proc/config.gz"
            except ValueError as e:
                p.notes.append(f"/proc/config.gz: {e}")
    if hz is None:
        usecs = p.get("kernel.netdev_budget_usecs")
        if usecs in HZ_OF_DEFAULT_BUDGET_USECS:
            hz = HZ_OF_DEFAULT_BUDGET_USECS[usecs]
            source = f"inferred: netdev_budget_usecs {usecs} is the default 2 jiffies at HZ={hz}"
    if hz is None:
        p.notes.append("kernel tick rate unknown (no kernel config): kernel.hz keeps 1000")
    else:
        p.set(
            "kernel.hz",
            hz,
            source if source.startswith("inferred") else f"{source}: CONFIG_HZ={hz}",
        )
    usecs = p.get("kernel.netdev_budget_usecs")
    jiffy_us = 1_000_000 // p.get("kernel.hz", 1000)
    if usecs is not None and 0 < usecs < 2 * jiffy_us:
        s = p.settings["kernel.netdev_budget_usecs"]
        p.notes.append(
            f"netdev_budget_usecs {usecs} is under 2 jiffies ({2 * jiffy_us} µs), irqlab's "
            "minimum: written as 0 (2 jiffies)"
        )
        p.set("kernel.netdev_budget_usecs", 0, s.source + " → 0 (2 jiffies)")


def _sample(host: Host, p: Probe, second: bool) -> tuple[Interrupts | None, int | None, int | None]:
    text = host.read("/proc/interrupts", second=second, limit=limits.MAX_TABLE_BYTES)
    stats = f"/sys/class/net/{p.iface}/statistics"
    packets = integer((host.read(f"{stats}/rx_packets", second=second) or "").strip() or None)
    octets = integer((host.read(f"{stats}/rx_bytes", second=second) or "").strip() or None)
    if text is None:
        return None, packets, octets
    ints = parse_interrupts(text)
    del text
    for problem in ints.problems:
        p.notes.append(f"/proc/interrupts: {problem}")
    return ints, packets, octets


def _irqs(host: Host, p: Probe, online: list[int]) -> None:
    first, pk1, by1 = _sample(host, p, second=False)
    if first is None:
        why = host.failure("/proc/interrupts")
        why = "not readable" if why == "not present" else why
        p.notes.append(f"/proc/interrupts: {why}; IRQs, affinity and rates unknown")
        return
    second = None
    pk2 = by2 = None
    elapsed = p.interval_s
    if p.interval_s > 0:
        start = time.monotonic()
        if not host.recorded:
            time.sleep(p.interval_s)
        second, pk2, by2 = _sample(host, p, second=True)
        if not host.recorded:
            elapsed = time.monotonic() - start
        if second is None:
            name = "/proc/interrupts" + (".2" if host.recorded else "")
            why = host.failure(name)
            why = "no second sample" if why == "not present" else f"second sample {why}"
            p.notes.append(f"/proc/interrupts: {why}; no IRQ rates")
    if pk1 is not None and pk2 is not None and elapsed > 0:
        p.rx_pps = max(pk2 - pk1, 0) / elapsed
        if by1 is not None and by2 is not None and pk2 > pk1:
            p.rx_bytes_per_packet = (by2 - by1) / (pk2 - pk1)
    queue, other = _find_vectors(host, p, first)
    cores = {cpu: core for core, cpu in enumerate(online)}
    for v in queue + other:
        _rate(v, first, second, elapsed)
        _affinity(host, v, cores)
    queue.sort(key=lambda v: (v.queue, v.irq))
    p.vectors, p.other_vectors = queue, other
    _pin(p, online)


def _find_vectors(host: Host, p: Probe, ints: Interrupts) -> tuple[list[Vector], list[Vector]]:
    """The interface's queue vectors (by their names, as the drivers write them) and its
    device's other vectors (the PCI device's msi_irqs that are not queue vectors)."""
    iface = re.escape(p.iface)
    # (pattern, whether its vectors serve Rx alone)
    patterns: list[tuple[str, bool]] = [
        # ixgbe, igb, bnxt: IFACE-TxRx-N; i40e, ice, iavf: DRIVER-IFACE-TxRx-N; bnx2x IFACE-fp-N
        (rf"(?:[\w.]+-)?{iface}-(?:TxRx|RxTx|fp)-(\d{{1,9}})", False),
        # separate Rx vectors: IFACE-rx-N
        (rf"(?:[\w.]+-)?{iface}-(?:rx|Rx)-(\d{{1,9}})", True),
    ]
    device = host.realname(f"/sys/class/net/{p.iface}/device")
    if p.bus:
        patterns.append((rf"mlx5_comp(\d{{1,9}})@pci:{re.escape(p.bus)}", False))
    if device is not None and device.name.startswith("virtio"):
        patterns.append((rf"{re.escape(device.name)}-input\.(\d{{1,9}})", True))
    compiled = [(re.compile(pat), rx_only) for pat, rx_only in patterns]
    msi: set[int] = set()
    if device is not None:
        for d in (device, device.parent):
            listed = host.listdir(f"{d}/msi_irqs")
            if listed is not None:
                msi = {int(n) for n in listed if n.isascii() and n.isdigit() and len(n) <= 9}
                break
    queue: list[Vector] = []
    other: list[Vector] = []
    dropped = 0
    for irq, names in ints.names.items():
        found: tuple[int, bool] | None = None
        for action in names.split(", "):
            for pat, rx_only in compiled:
                m = pat.fullmatch(action)
                if m:
                    found = (int(m[1]), rx_only)
                    break
            if found is not None:
                break
        if found is not None:
            if len(queue) < limits.MAX_VECTORS:
                queue.append(Vector(irq=irq, name=names, queue=found[0], rx_only=found[1]))
            else:
                dropped += 1
        elif irq in msi:
            if len(other) < limits.MAX_VECTORS:
                other.append(Vector(irq=irq, name=names))
            else:
                dropped += 1
    if dropped:
        p.notes.append(
            f"/proc/interrupts: {dropped} vectors of {p.iface} beyond {limits.MAX_VECTORS} queue "
            f"vectors and {limits.MAX_VECTORS} others (MAX_VECTORS) not read"
        )
    return queue, other


def _rate(v: Vector, first: Interrupts, second: Interrupts | None, elapsed: float) -> None:
    if second is None or elapsed <= 0:
        return
    a, b = first.counts_of(v.irq), second.counts_of(v.irq)
    if a is None or b is None or len(a) != len(b):
        return
    deltas = [max(y - x, 0) for x, y in zip(a, b, strict=True)]
    v.rate_per_s = sum(deltas) / elapsed
    if sum(deltas) > 0 and len(first.cpus) == len(deltas):
        v.busiest_cpu = first.cpus[deltas.index(max(deltas))]


def _affinity(host: Host, v: Vector, cores: dict[int, int]) -> None:
    """The core of vector ``v`` (``cores``: the irqlab core of each online CPU)."""
    base = f"/proc/irq/{v.irq}"
    v.affinity = as_shown((host.read(f"{base}/smp_affinity_list") or "").strip()) or None
    v.effective = as_shown((host.read(f"{base}/effective_affinity_list") or "").strip()) or None
    choices: list[tuple[str | None, str]] = [
        (v.effective, f"{base}/effective_affinity_list"),
        (v.affinity, f"{base}/smp_affinity_list"),
    ]
    for text, source in choices:
        if not text:
            continue
        try:
            cpus = [c for c in parse_cpulist(text) if c in cores]
        except ValueError:
            continue
        if len(cpus) == 1:
            v.core, v.core_source = cores[cpus[0]], f"{source}: {text}"
            return
        if cpus and v.busiest_cpu in cpus:
            v.core = cores[v.busiest_cpu]
            v.core_source = f"{source}: {text}; most of its IRQs on CPU {v.busiest_cpu}"
            return
        if cpus:
            v.core, v.core_source = cores[cpus[0]], f"{source}: {text}; the first"
            return


def _pin(p: Probe, online: list[int]) -> None:
    """nic.queues, nic.irq_affinity and nic.tx_irq from the queue vectors found."""
    found = p.vectors
    if not found:
        if p.driver:
            p.notes.append(
                f"no queue vectors of {p.iface} in /proc/interrupts: "
                "nic.irq_affinity left empty (vector i on core i mod host.cores)"
            )
        return
    kinds = {v.rx_only for v in found}
    if len(kinds) == 1:
        rx_only = kinds.pop()
        what = (
            "serve Rx alone: a Tx completion interrupts another vector"
            if rx_only
            else ("serve Rx and Tx: a Tx completion interrupts them")
        )
        p.set(
            "nic.tx_irq",
            not rx_only,
            f"/proc/interrupts: the queue vectors ({found[0].name}) {what}",
        )
    else:
        p.notes.append(
            "/proc/interrupts: some queue vectors serve Rx and Tx, some Rx alone; nic.tx_irq "
            "keeps its default"
        )
    if "nic.queues" not in p.settings:
        p.set("nic.queues", len(found), f"/proc/interrupts: {len(found)} queue vectors")
    queues = p.get("nic.queues")
    if queues is None:
        return
    if len(found) != queues:
        p.notes.append(
            f"{len(found)} queue vectors in /proc/interrupts for nic.queues = {queues}"
            + ("; the first ones are pinned" if len(found) > queues else "")
        )
    if len(found) < queues or not online:
        return
    used = found[:queues]
    if any(v.core is None for v in used):
        p.notes.append("an IRQ's affinity is unreadable: nic.irq_affinity left empty")
        return
    p.set(
        "nic.irq_affinity",
        [v.core for v in used],
        "/proc/irq/N/effective_affinity_list, else smp_affinity_list:",
    )


def _validate(p: Probe) -> None:
    """The scenario as a whole through the loader `irqlab check` uses; a value the core
    rejects in combination with the others is dropped with a note, and so is a value the
    scenario would ignore — silently if it is irqlab's default anyway (a TxRx vector's Tx
    interrupt on a host that does not forward)."""
    for _ in range(len(p.settings) + 1):
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", ConfigWarning)
                resolve(p.scenario())
        except ConfigError as e:
            if e.key is None or e.key not in p.settings:
                raise
            s = p.settings.pop(e.key)
            p.notes.append(f"{e} — read from {s.source}; not written")
            continue
        # a value the scenario would ignore (an ITR under an adaptive policy) is not a setting;
        # one that acts as another (a time rounded to jiffies) is kept, as the host has it
        ignored = [
            w.message
            for w in said
            if isinstance(w.message, ConfigWarning) and w.message.acts_as is None
        ]
        for w in ignored:
            if w.key in p.settings:
                s = p.settings.pop(w.key)
                spec = spec_of(w.key)
                if spec is None or s.value != spec["default"]:
                    p.notes.append(f"{w} — read from {s.source}; not written")
        if not any(w.key in p.settings for w in ignored):
            return
