"""``irqlab probe``: a scenario from a live Linux host.

Reads what the host says about its receive path — the interface's coalescing, rings and
channels (the ``ethtool`` command), the NAPI sysctls and per-device settings, its IRQs with
their affinity and rates (``/proc/interrupts`` sampled twice), the CPUs and the driver — and
writes a scenario with those values, each with a comment naming where it was read. What a host
cannot tell (how long an interrupt or a packet takes) keeps irqlab's default, marked for
calibration.

Everything is read through a root directory, ``/`` on the live host, so a recorded tree of
another host's ``/proc``, ``/sys`` and ethtool outputs probes exactly the same way
(``tests/data/probe``). A file or tool that is missing, unreadable or says something
unexpected becomes a note in the output, never an exception: only an interface that does not
exist is an error. Every value is checked against the schema before it is written, and the
scenario as a whole by the same loader ``irqlab check`` uses.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError, ConfigWarning
from irqlab.scenario import check_value, resolve, schema

#: ethtool's long options whose output the probe reads, and the short flag run for each. A
#: recorded tree holds their output as ``ethtool/IFACE/OPTION``.
ETHTOOL_OPTIONS = {"driver": "-i", "show-coalesce": "-c", "show-ring": "-g", "show-channels": "-l"}

#: The kernel's default ``netdev_budget_usecs`` is 2 jiffies: from it the tick rate can be told.
HZ_OF_DEFAULT_BUDGET_USECS = {2000: 1000, 6666: 300, 8000: 250, 20000: 100}


@dataclass(frozen=True)
class DriverModel:
    """How a driver's ``ethtool -c`` values map to irqlab's NIC and policy."""

    #: rx-usecs is the ITR, a minimum interval between interrupts (Intel), not a timeout
    itr: bool
    #: ``driver.moderation`` of its adaptive mode
    adaptive: str
    #: the rx-usecs value that means "dynamic ITR" (ixgbe: 1), when the driver has one
    dynamic_usecs: int | None = None
    #: ``nic.cause_mode`` of its interrupt logic
    cause_mode: str | None = None
    #: tx-frames-irq is the Tx clean limit per poll (``driver.tx_work_limit``)
    tx_work_limit: bool = False
    #: what the mapping assumes, for the comment
    why: str = ""


DRIVERS: dict[str, DriverModel] = {
    "ixgbe": DriverModel(
        itr=True,
        adaptive="ixgbe",
        dynamic_usecs=1,
        cause_mode="latched",
        tx_work_limit=True,
        why="rx-usecs is the EITR interval: 0 = off, 1 = dynamic ITR, N = N µs",
    ),
    "i40e": DriverModel(
        itr=True,
        adaptive="i40e",
        cause_mode="latched",
        tx_work_limit=True,
        why="rx-usecs is the ITR interval; adaptive-rx runs the driver's adaptive ITR",
    ),
    "iavf": DriverModel(
        itr=True,
        adaptive="i40e",
        cause_mode="latched",
        why="rx-usecs is the ITR interval; adaptive-rx runs i40e's adaptive ITR",
    ),
    "ice": DriverModel(
        itr=True,
        adaptive="dim",
        cause_mode="latched",
        why="rx-usecs is the ITR interval; adaptive-rx runs net_dim (ice's own ITR profiles; "
        "irqlab's dim uses mlx5e's)",
    ),
    "mlx5_core": DriverModel(
        itr=False,
        adaptive="dim",
        cause_mode="armed",
        why="rx-usecs/rx-frames are the CQ moderation period and count; adaptive-rx is net_dim",
    ),
    "virtio_net": DriverModel(
        itr=False,
        adaptive="dim",
        why="rx-usecs/rx-frames are the device's notification coalescing; adaptive-rx is net_dim",
    ),
    "bnxt_en": DriverModel(
        itr=False,
        adaptive="dim",
        why="rx-usecs/rx-frames are the completion ring's coalescing; adaptive-rx is net_dim",
    ),
}
#: Any other driver: ethtool's own meaning of rx-usecs and rx-frames; adaptive is assumed DIM.
GENERIC = DriverModel(
    itr=False,
    adaptive="dim",
    why="ethtool's meaning of rx-usecs/rx-frames; its adaptive mode is assumed to be net_dim",
)


@dataclass
class Setting:
    """One scenario key the probe writes: its value and where it came from."""

    key: str
    value: Any
    source: str


@dataclass
class Vector:
    """An IRQ of the interface, as /proc/interrupts and /proc/irq/N name it."""

    irq: int
    name: str
    #: the queue it serves (the number in its name), None for a non-queue vector
    queue: int | None = None
    #: /proc/irq/N/smp_affinity_list as read, and effective_affinity_list
    affinity: str | None = None
    effective: str | None = None
    #: the irqlab core it is pinned to, and why
    core: int | None = None
    core_source: str = ""
    #: IRQs per second between the two samples; the CPU that took most of them
    rate_per_s: float | None = None
    busiest_cpu: int | None = None


@dataclass
class Probe:
    """What was read from one host about one interface, and the scenario it gives."""

    iface: str
    hostname: str | None = None
    kernel: str | None = None
    driver: str | None = None
    driver_version: str | None = None
    bus: str | None = None
    settings: dict[str, Setting] = field(default_factory=dict)
    driver_source: str = ""
    #: settings irqlab has no key for: (name, value, what it is, source)
    unmodelled: list[tuple[str, str, str, str]] = field(default_factory=list)
    vectors: list[Vector] = field(default_factory=list)
    other_vectors: list[Vector] = field(default_factory=list)
    #: packets/s and mean bytes per packet received between the samples
    rx_pps: float | None = None
    rx_bytes_per_packet: float | None = None
    interval_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def set(self, key: str, value: Any, source: str) -> None:
        """Records a value for ``key``, or a note if the schema does not allow it."""
        try:
            self.settings[key] = Setting(key, check_value(key, value), source)
        except ConfigError as e:
            self.notes.append(f"{e} — read from {source}; not written")

    def get(self, key: str, default: Any = None) -> Any:
        s = self.settings.get(key)
        return default if s is None else s.value

    def scenario(self) -> dict[str, Any]:
        """The scenario as flat dotted keys (what :func:`irqlab.run` and ``--set`` take)."""
        return {k: s.value for k, s in self.settings.items()}

    def toml(self) -> str:
        """The scenario file: every value with its source, notes and observations as comments."""
        return render_toml(self)


# --- reading the host ---------------------------------------------------------------------


class Host:
    """Reads files and runs ethtool, for the live host (root ``/``) or a recorded tree.

    In a recorded tree, ethtool's output is ``ethtool/IFACE/OPTION`` (``show-coalesce``, ...)
    and the second sample of a file is ``FILE.2``.
    """

    def __init__(
        self,
        root: str | Path = "/",
        *,
        ethtool: str | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.root = Path(root)
        self.recorded = self.root.resolve() != Path("/")
        self.ethtool_cmd = ethtool
        self.timeout_s = timeout_s

    def path(self, name: str) -> Path:
        return self.root / name.lstrip("/")

    def read(self, name: str, *, second: bool = False) -> str | None:
        """The text of ``name`` (an absolute path on the host), or None if it cannot be read."""
        if second and self.recorded:
            name += ".2"
        try:
            return self.path(name).read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            return None

    def read_bytes(self, name: str) -> bytes | None:
        try:
            return self.path(name).read_bytes()
        except OSError:
            return None

    def listdir(self, name: str) -> list[str] | None:
        try:
            return sorted(os.listdir(self.path(name)))
        except OSError:
            return None

    def exists(self, name: str) -> bool:
        return self.path(name).exists()

    def readlink(self, name: str) -> str | None:
        try:
            return os.readlink(self.path(name))
        except OSError:
            return None

    def realname(self, name: str) -> Path | None:
        """Where ``name`` leads after its symbolic links, as a path on the host."""
        p = self.path(name)
        if not p.exists():
            return None
        real = p.resolve()
        try:
            return Path("/") / real.relative_to(self.root.resolve())
        except ValueError:
            return None

    def ethtool(self, option: str, iface: str) -> tuple[str | None, str]:
        """ethtool's output for ``--OPTION IFACE`` and a description of its source; None and
        the reason when there is none."""
        flag = ETHTOOL_OPTIONS[option]
        if self.recorded and self.ethtool_cmd is None:
            name = f"/ethtool/{iface}/{option}"
            text = self.read(name)
            if text is None:
                return None, f"no recorded `ethtool {flag} {iface}` ({name})"
            return text, f"ethtool {flag} {iface}"
        cmd = self.ethtool_cmd or "ethtool"
        exe = shutil.which(cmd)
        if exe is None:
            return None, f"`ethtool {flag} {iface}`: {cmd} not found"
        try:
            p = subprocess.run(
                [exe, flag, iface],
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                check=False,
                env={**os.environ, "LC_ALL": "C"},
            )
        except subprocess.TimeoutExpired:
            return None, f"`ethtool {flag} {iface}` did not answer within {self.timeout_s:g} s"
        except OSError as e:
            return None, f"`ethtool {flag} {iface}`: {e.strerror}"
        if p.returncode != 0:
            why = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            return None, f"`ethtool {flag} {iface}` failed: {why}"
        return p.stdout, f"ethtool {flag} {iface}"


# --- parsers (pure functions of text) -----------------------------------------------------


def parse_ethtool(text: str) -> dict[str, str | None]:
    """``ethtool -c/-g/-l/-i`` output as ``{field: value}``, fields lower case, "n/a" as None.

    ``-g`` and ``-l`` list pre-set maximums and current settings under the same names: the
    maximums get the prefix ``max ``. ``Adaptive RX: on  TX: off`` (and ``CQE mode``) gives
    ``adaptive rx`` and ``adaptive tx``. Works on the netlink format (``n/a`` for unsupported
    fields, ethtool ≥ 5.6) and the older ioctl one (zeros).
    """
    out: dict[str, str | None] = {}
    prefix = ""
    for raw in text.splitlines():
        line = raw.strip()
        low = line.lower()
        if not line or " parameters for " in low:
            continue
        if low.startswith("pre-set maximums"):
            prefix = "max "
            continue
        if low.startswith("current hardware settings"):
            prefix = ""
            continue
        pair = re.fullmatch(r"(adaptive|cqe mode) rx:\s*(\S+)\s+tx:\s*(\S+)", low)
        if pair:
            out[f"{pair[1]} rx"] = _na(pair[2])
            out[f"{pair[1]} tx"] = _na(pair[3])
            continue
        if ":" in line:
            key, value = line.split(":", 1)
        else:  # ethtool 6.x prints "tx-aggr-time-usecs" without its colon
            key, _, value = line.partition("\t") if "\t" in line else line.partition(" ")
        out[prefix + key.strip().lower()] = _na(value.strip())
    return out


def _na(value: str) -> str | None:
    return None if value.lower() in ("n/a", "") else value


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        try:
            return int(value, 0)  # 0x... (firmware versions)
        except ValueError:
            return None


def parse_cpulist(text: str) -> list[int]:
    """A kernel CPU list (``0-3,8,10-11``) as CPU numbers; ValueError if it is not one."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            cpus.extend(range(int(lo), int(hi) + 1))
        else:
            cpus.append(int(part))
    return cpus


@dataclass
class Interrupts:
    """One sample of /proc/interrupts: the CPU of each column and, per IRQ number, its
    counts per column and its action names."""

    cpus: list[int]
    counts: dict[int, list[int]]
    names: dict[int, str]


_TRIGGER = re.compile(r"-(edge|level|fasteoi)$|^(Level|Edge)$")


def parse_interrupts(text: str) -> Interrupts:
    """/proc/interrupts: the header names the CPUs of the columns (only the online ones); a
    numbered line has a count per column, the chip, the hardware IRQ and trigger, and the
    actions' names (comma-separated when shared). Lines that are not numbered IRQs (NMI,
    LOC, ...) are skipped."""
    lines = text.splitlines()
    if not lines:
        return Interrupts([], {}, {})
    cpus = [int(c) for c in re.findall(r"CPU(\d+)", lines[0])]
    counts: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for line in lines[1:]:
        head, _, rest = line.partition(":")
        if not head.strip().isdigit():
            continue
        tokens = rest.split()
        n = 0
        while n < len(cpus) and n < len(tokens) and tokens[n].isdigit():
            n += 1
        tail = tokens[n:]
        # the actions follow the "<hwirq>-edge" (or -level, -fasteoi) token; old kernels
        # joined the chip and trigger ("PCI-MSI-edge"); ARM's GIC writes "27 Level"
        trigger = [i for i, t in enumerate(tail) if _TRIGGER.search(t)]
        name = " ".join(tail[trigger[-1] + 1 :]) if trigger else " ".join(tail[-1:])
        irq = int(head)
        counts[irq] = [int(t) for t in tokens[:n]]
        names[irq] = name
    return Interrupts(cpus, counts, names)


def parse_hz(config: str) -> int | None:
    m = re.search(r"^CONFIG_HZ=(\d+)$", config, re.M)
    return int(m[1]) if m else None


def _version(release: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m[1]), int(m[2])) if m else None


def parse_interval(text: str) -> float:
    """``1s``, ``500ms``, ``0.5`` (seconds) or ``0`` → seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*", text)
    if not m:
        raise ConfigError(f"--interval {text!r}: expected a duration like 1s, 500ms or 0", None)
    value = float(m[1]) / (1000 if m[2] == "ms" else 1)
    if value > 60:
        raise ConfigError(f"--interval {text!r}: at most 60 s", None)
    return value


# --- the probe ----------------------------------------------------------------------------


def interfaces(host: Host) -> list[str]:
    return [n for n in host.listdir("/sys/class/net") or [] if not n.startswith(".")]


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
        f"no default route and no interface with a device; name one of: {', '.join(names)}",
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
    ``timeout_s`` to answer. Raises :class:`ConfigError` only if the interface cannot be
    found; anything else missing is a note in :attr:`Probe.notes`.
    """
    host = Host(root, ethtool=ethtool, timeout_s=timeout_s)
    names = interfaces(host)
    if iface is None:
        iface = default_interface(host)
    elif iface not in names:
        where = f" in {host.root}" if host.recorded else ""
        found = ", ".join(names) if names else "none"
        raise ConfigError(f"no interface '{iface}'{where}; interfaces found: {found}", None)
    p = Probe(iface=iface, interval_s=interval_s)
    p.hostname = (host.read("/proc/sys/kernel/hostname") or "").strip() or None
    p.kernel = (host.read("/proc/sys/kernel/osrelease") or "").strip() or None
    p.set("scheme", "napi", "Linux receives through NAPI")
    online = _cpus(host, p)
    _device(host, p)
    ethtool_out = _ethtool(host, p)
    _cpu_clock(host, p, online)
    _channels_and_rings(host, p, ethtool_out)
    _coalescing(p, ethtool_out.get("show-coalesce"))
    _sysctls(host, p)
    _irqs(host, p, online)
    _validate(p)
    return p


def _cpus(host: Host, p: Probe) -> list[int]:
    text = host.read("/sys/devices/system/cpu/online")
    online: list[int] = []
    source = ""
    if text is not None:
        try:
            online = parse_cpulist(text)
            source = f"/sys/devices/system/cpu/online: {text.strip()}"
        except ValueError:
            p.notes.append(f"/sys/devices/system/cpu/online: cannot parse {text.strip()!r}")
    if not online:
        info = host.read("/proc/cpuinfo") or ""
        online = [int(n) for n in re.findall(r"^processor\s*:\s*(\d+)", info, re.M)]
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
    """The driver, the bus address, the link speed and the per-device NAPI settings."""
    base = f"/sys/class/net/{p.iface}"
    link = host.readlink(f"{base}/device/driver")
    if link:
        p.driver = os.path.basename(link)
        driver_source = f"{base}/device/driver → {p.driver}"
    else:
        uevent = host.read(f"{base}/device/uevent") or ""
        m = re.search(r"^DRIVER=(\S+)", uevent, re.M)
        p.driver = m[1] if m else None
        driver_source = f"{base}/device/uevent: DRIVER={p.driver}"
    if p.driver:
        p.driver_source = driver_source
    elif not host.exists(f"{base}/device"):
        p.notes.append(f"{p.iface} has no device ({base}/device): a virtual interface")
    else:
        p.notes.append(f"{base}/device: no driver link nor uevent; the driver from ethtool -i")
    device = host.realname(f"{base}/device")
    if device is not None:
        for d in (device, device.parent):
            if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d.name):
                p.bus = d.name
                break
    speed = _int((host.read(f"{base}/speed") or "").strip() or None)
    if speed is not None and speed > 0:
        p.set("nic.link_gbps", speed / 1000, f"{base}/speed: {speed} Mb/s")
    else:
        shown = "unreadable" if speed is None else f"{speed}"
        p.notes.append(f"{base}/speed: {shown} (link speed unknown): nic.link_gbps keeps 10")
    for name, key, unit in (
        ("napi_defer_hard_irqs", "kernel.napi_defer_hard_irqs", ""),
        ("gro_flush_timeout", "kernel.gro_flush_timeout_ns", " ns"),
    ):
        text = host.read(f"{base}/{name}")
        value = _int(text.strip() if text else None)
        if value is None:
            why = "kernel before 5.7?" if name == "napi_defer_hard_irqs" else "not readable"
            p.notes.append(f"{base}/{name}: not present ({why}); {key} keeps 0")
        else:
            p.set(key, value, f"{base}/{name}: {value}{unit}")
    for name, what in (
        ("threaded", "1: each NAPI polls in a kernel thread of its own"),
        ("irq_suspend_timeout", "ns of IRQ suspension while an app busy-polls"),
    ):
        text = host.read(f"{base}/{name}")
        if text is not None and text.strip():
            p.unmodelled.append((name, text.strip(), what, f"{base}/{name}"))


@dataclass
class EthtoolOutput:
    """One ethtool command's fields (:func:`parse_ethtool`) and how they were obtained."""

    fields: dict[str, str | None]
    source: str

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
        out[option] = EthtoolOutput(parse_ethtool(text), source)
    if len(missing) == len(ETHTOOL_OPTIONS):
        if host.recorded and host.ethtool_cmd is None:
            why = f"no recorded ethtool output (ethtool/{p.iface}/{{driver,show-coalesce,...}})"
        elif all(m.endswith(" not found") for m in missing):
            why = missing[0].split(": ", 1)[1]
        else:
            why = missing[0]
        p.notes.append(f"{why}: coalescing, ring sizes and channels unknown (docs/probe.md)")
    else:
        p.notes.extend(missing)
    info = out.get("driver")
    if info:
        if not p.driver and info.get("driver"):
            p.driver = info.get("driver")
            p.driver_source = f"ethtool -i {p.iface}"
        p.driver_version = info.get("version")
        if not p.bus and info.get("bus-info"):
            p.bus = info["bus-info"]
    return out


def _cpu_clock(host: Host, p: Probe, online: list[int]) -> None:
    cpu = online[0] if online else 0
    base = f"/sys/devices/system/cpu/cpu{cpu}/cpufreq"
    for name, what in (("cpuinfo_max_freq", "maximum"), ("base_frequency", "base")):
        khz = _int((host.read(f"{base}/{name}") or "").strip() or None)
        if khz:
            p.set("platform.cpu_ghz", round(khz / 1e6, 3), f"{base}/{name}: {khz} kHz ({what})")
            return
    info = host.read("/proc/cpuinfo") or ""
    mhz = [float(x) for x in re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", info, re.M)]
    if mhz:
        ghz = round(sum(mhz) / len(mhz) / 1000, 3)
        p.set("platform.cpu_ghz", ghz, f"/proc/cpuinfo: cpu MHz {sum(mhz) / len(mhz):.0f} (mean)")
        return
    p.notes.append("CPU clock unknown (no cpufreq, no 'cpu MHz' in /proc/cpuinfo)")


def _channels_and_rings(host: Host, p: Probe, eth: dict[str, EthtoolOutput]) -> None:
    ch = eth.get("show-channels")
    if ch:
        combined, rx = _int(ch.get("combined")) or 0, _int(ch.get("rx")) or 0
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
            value = _int(ring.get(field_))
            if value:
                top = _int(ring.get(f"max {field_}"))
                most = f" (max {top})" if top else ""
                p.set(key, value, f"{ring.source}: {field_.upper()} {value}{most}")


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
    rx_usecs, rx_frames = _int(c.get("rx-usecs")), _int(c.get("rx-frames"))
    label = f"{p.driver}: {model.why}" if p.driver else model.why
    if model.itr:
        dynamic = model.dynamic_usecs is not None and rx_usecs == model.dynamic_usecs
        if dynamic:
            policy = model.adaptive
            if p.driver == "ixgbe" and (_version(p.kernel) or (99, 0)) < (4, 15):
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
        high = _int(c.get("rx-usecs-high"))
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
            off_src = f"{src}: Adaptive RX {c.get('adaptive rx') or 'n/a'} — {label}"
            p.set("driver.moderation", "off", off_src)
            if c.get("cqe mode rx") == "on":
                p.notes.append(
                    f"{src}: CQE mode RX on without adaptive-rx: a static timer restarted by "
                    "each packet is not modelled (irqlab's timer starts at the first packet)"
                )
    tx_limit = _int(c.get("tx-frames-irq"))
    if model.tx_work_limit and tx_limit:
        p.set("driver.tx_work_limit", tx_limit, f"{src}: tx-frames-irq {tx_limit} (Tx work limit)")


def _sysctls(host: Host, p: Probe) -> None:
    core = "/proc/sys/net/core"
    for name, key in (
        ("netdev_budget", "kernel.netdev_budget"),
        ("netdev_budget_usecs", "kernel.netdev_budget_usecs"),
        ("rmem_default", "socket.rcvbuf_bytes"),
    ):
        value = _int((host.read(f"{core}/{name}") or "").strip() or None)
        if value is None:
            p.notes.append(f"{core}/{name}: not present; {key} keeps its default")
        else:
            p.set(key, value, f"{core}/{name}: {value}")
    for name, what in (
        ("busy_read", "µs a blocking read busy-polls the device queue"),
        ("busy_poll", "µs poll() and select() busy-poll"),
    ):
        text = host.read(f"{core}/{name}")
        if text is None:
            p.notes.append(f"{core}/{name}: not present (kernel without busy polling?)")
        else:
            p.unmodelled.append((f"net.core.{name}", text.strip(), what, f"{core}/{name}"))
    _hz(host, p)


def _hz(host: Host, p: Probe) -> None:
    release = p.kernel or ""
    hz, source = None, ""
    config = host.read(f"/boot/config-{release}") if release else None
    if config is not None:
        hz, source = parse_hz(config), f"/boot/config-{release}"
    if hz is None:
        packed = host.read_bytes("/proc/config.gz")
        if packed is not None:
            try:
                hz, source = parse_hz(gzip.decompress(packed).decode()), "/proc/config.gz"
            except (OSError, EOFError, UnicodeDecodeError):
                p.notes.append("/proc/config.gz: not a gzip file")
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
    text = host.read("/proc/interrupts", second=second)
    stats = f"/sys/class/net/{p.iface}/statistics"
    packets = _int((host.read(f"{stats}/rx_packets", second=second) or "").strip() or None)
    octets = _int((host.read(f"{stats}/rx_bytes", second=second) or "").strip() or None)
    return (parse_interrupts(text) if text is not None else None), packets, octets


def _irqs(host: Host, p: Probe, online: list[int]) -> None:
    first, pk1, by1 = _sample(host, p, second=False)
    if first is None:
        p.notes.append("/proc/interrupts: not readable; IRQs, affinity and rates unknown")
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
            p.notes.append("/proc/interrupts: no second sample; no IRQ rates")
    if pk1 is not None and pk2 is not None and elapsed > 0:
        p.rx_pps = max(pk2 - pk1, 0) / elapsed
        if by1 is not None and by2 is not None and pk2 > pk1:
            p.rx_bytes_per_packet = (by2 - by1) / (pk2 - pk1)
    queue, other = _find_vectors(host, p, first)
    for v in queue + other:
        _rate(v, first, second, elapsed)
        _affinity(host, v, online)
    queue.sort(key=lambda v: (v.queue, v.irq))
    p.vectors, p.other_vectors = queue, other
    _pin(p, online)


def _find_vectors(host: Host, p: Probe, ints: Interrupts) -> tuple[list[Vector], list[Vector]]:
    """The interface's queue vectors (by their names, as the drivers write them) and its
    device's other vectors (the PCI device's msi_irqs that are not queue vectors)."""
    iface = re.escape(p.iface)
    patterns = [
        # ixgbe, igb, bnxt: IFACE-TxRx-N; i40e, ice, iavf: DRIVER-IFACE-TxRx-N; separate
        # vectors IFACE-rx-N; bnx2x IFACE-fp-N
        rf"(?:[\w.]+-)?{iface}-(?:TxRx|RxTx|rx|Rx|fp)-(\d+)",
    ]
    device = host.realname(f"/sys/class/net/{p.iface}/device")
    if p.bus:
        patterns.append(rf"mlx5_comp(\d+)@pci:{re.escape(p.bus)}")
    if device is not None and device.name.startswith("virtio"):
        patterns.append(rf"{re.escape(device.name)}-input\.(\d+)")
    compiled = [re.compile(pat) for pat in patterns]
    msi: set[int] = set()
    if device is not None:
        for d in (device, device.parent):
            listed = host.listdir(f"{d}/msi_irqs")
            if listed is not None:
                msi = {int(n) for n in listed if n.isdigit()}
                break
    queue: list[Vector] = []
    other: list[Vector] = []
    for irq, names in ints.names.items():
        index = None
        for action in names.split(", "):
            for pat in compiled:
                m = pat.fullmatch(action)
                if m:
                    index = int(m[1])
                    break
            if index is not None:
                break
        if index is not None:
            queue.append(Vector(irq=irq, name=names, queue=index))
        elif irq in msi:
            other.append(Vector(irq=irq, name=names))
    return queue, other


def _rate(v: Vector, first: Interrupts, second: Interrupts | None, elapsed: float) -> None:
    if second is None or elapsed <= 0 or v.irq not in second.counts:
        return
    a, b = first.counts[v.irq], second.counts[v.irq]
    if len(a) != len(b):
        return
    deltas = [max(y - x, 0) for x, y in zip(a, b, strict=True)]
    v.rate_per_s = sum(deltas) / elapsed
    if sum(deltas) > 0 and len(first.cpus) == len(deltas):
        v.busiest_cpu = first.cpus[deltas.index(max(deltas))]


def _affinity(host: Host, v: Vector, online: list[int]) -> None:
    base = f"/proc/irq/{v.irq}"
    v.affinity = (host.read(f"{base}/smp_affinity_list") or "").strip() or None
    v.effective = (host.read(f"{base}/effective_affinity_list") or "").strip() or None
    choices: list[tuple[str | None, str]] = [
        (v.effective, f"{base}/effective_affinity_list"),
        (v.affinity, f"{base}/smp_affinity_list"),
    ]
    for text, source in choices:
        if not text:
            continue
        try:
            cpus = [c for c in parse_cpulist(text) if c in online]
        except ValueError:
            continue
        if len(cpus) == 1:
            v.core, v.core_source = online.index(cpus[0]), f"{source}: {text}"
            return
        if cpus and v.busiest_cpu in cpus:
            v.core = online.index(v.busiest_cpu)
            v.core_source = f"{source}: {text}; most of its IRQs on CPU {v.busiest_cpu}"
            return
        if cpus:
            v.core, v.core_source = online.index(cpus[0]), f"{source}: {text}; the first"
            return


def _pin(p: Probe, online: list[int]) -> None:
    """nic.queues and nic.irq_affinity from the queue vectors found."""
    found = p.vectors
    if not found:
        if p.driver:
            p.notes.append(
                f"no queue vectors of {p.iface} in /proc/interrupts: "
                "nic.irq_affinity left empty (vector i on core i mod host.cores)"
            )
        return
    if "nic.queues" not in p.settings:
        p.set("nic.queues", len(found), f"/proc/interrupts: {len(found)} queue vectors")
    queues = p.get("nic.queues")
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
    rejects in combination with the others is dropped with a note."""
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
        # a value the scenario would ignore (an ITR under an adaptive policy) is not a setting
        ignored = [w.message for w in said if isinstance(w.message, ConfigWarning)]
        for w in ignored:
            if w.key in p.settings:
                s = p.settings.pop(w.key)
                p.notes.append(f"{w} — read from {s.source}; not written")
        if not any(w.key in p.settings for w in ignored):
            return


# --- the scenario file --------------------------------------------------------------------

#: Sections of the written file, in order, and what each says first.
SECTIONS = {
    "host": None,
    "nic": None,
    "driver": None,
    "kernel": None,
    "socket": "the socket buffer apps get by default (only [[app]] entries use it)",
    "platform": None,
}


def _section(key: str) -> str:
    """The table a key is written in: ``nic.queues`` → ``nic``; top-level keys → ``""``."""
    return key.split(".", 1)[0] if "." in key else ""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _comment(text: str, width: int = 98) -> list[str]:
    """``text`` as ``#`` lines of at most ``width`` characters."""
    words, lines, line = text.split(), [], "#"
    for w in words:
        if len(line) + 1 + len(w) > width and line != "#":
            lines.append(line)
            line = "#  "
        line += " " + w
    lines.append(line)
    return lines


def _rate_text(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def render_toml(p: Probe) -> str:
    where = f"host {p.hostname}" if p.hostname else "this host"
    kernel = f" (Linux {p.kernel})" if p.kernel else ""
    driver = f", driver {p.driver}" + (f" {p.driver_version}" if p.driver_version else "")
    out = _comment(
        f"irqlab scenario probed from {where}{kernel}, interface {p.iface}"
        f"{driver if p.driver else ''}, by `irqlab probe`. Each value names where it was "
        "read; the costs under [platform] cannot be read from a host: they are irqlab's "
        "defaults, to calibrate (docs/probe.md)."
    )
    if p.notes:
        out += ["#", "# Notes:"]
        for note in p.notes:
            out += [
                ("# - " + line[2:]) if i == 0 else line for i, line in enumerate(_comment(note))
            ]
    out.append("")
    by_section: dict[str, list[Setting]] = {}
    for s in p.settings.values():
        if "." not in s.key:
            out.append(f"{s.key} = {_toml_value(s.value)}  # {s.source}")
        else:
            by_section.setdefault(s.key.split(".", 1)[0], []).append(s)
    out += ["", *_traffic_comment(p)]
    platform_defaults = [
        (key, spec)
        for key, spec in schema().items()
        if key.startswith("platform.") and key not in ("platform.preset", "platform.cpu_ghz")
    ]
    for section, intro in SECTIONS.items():
        rows = by_section.pop(section, [])
        extra = _section_extra(p, section)
        if not rows and not extra and section != "platform":
            continue
        out += ["", f"[{section}]"]
        if intro:
            out += _comment(intro)
        for s in rows:
            out.append(f"{s.key.split('.', 1)[1]} = {_toml_value(s.value)}  # {s.source}")
            if s.key == "nic.irq_affinity":
                out += _vector_comment(p)
        out += extra
        if section == "platform":
            out += _comment(
                "Costs: irqlab's defaults (Salah et al. 2007's Pentium 4) — calibrate them "
                "against this host (docs/probe.md), or delete them and set preset = "
                '"emmerich2015" for a 3.3 GHz Xeon forwarding 64 B frames.'
            )
            for key, spec in platform_defaults:
                value = _toml_value(spec["default"])
                out.append(f"{key.split('.', 1)[1]} = {value}  # default — calibrate")
    for section, rows in by_section.items():  # any other section the mapping may add
        out += ["", f"[{section}]"]
        out += [f"{s.key.split('.', 1)[1]} = {_toml_value(s.value)}  # {s.source}" for s in rows]
    return "\n".join(out) + "\n"


def _traffic_comment(p: Probe) -> list[str]:
    text = (
        "[traffic] is the workload, not the host: not probed, so irqlab's default (Poisson "
        "arrivals, 100 kpps of 64 B frames, one flow) applies until you set it."
    )
    if p.rx_pps is not None:
        size = (
            f", {p.rx_bytes_per_packet:,.0f} B per packet on average"
            if p.rx_bytes_per_packet
            else ""
        )
        text += (
            f" Observed on {p.iface} over {p.interval_s:g} s: {p.rx_pps:,.0f} packets/s "
            f"received{size} (statistics/rx_packets, rx_bytes)."
        )
    return _comment(text)


def _section_extra(p: Probe, section: str) -> list[str]:
    if section == "kernel" and p.unmodelled:
        lines = ["# Read, but not modelled yet (irqlab has no key for these):"]
        for name, value, what, source in p.unmodelled:
            lines.append(f"#   {name} = {value}  ({what}; {source})")
        return lines
    if section == "driver" and p.driver:
        version = f", version {p.driver_version}" if p.driver_version else ""
        return [f"# the driver: {p.driver}{version} ({p.driver_source})"]
    return []


def _vector_comment(p: Probe) -> list[str]:
    rate = f"IRQs/s over {p.interval_s:g} s" if p.interval_s else "IRQs/s"
    lines = [f"#   vector  IRQ  core  affinity  {rate:>18}  name"]
    for i, v in enumerate(p.vectors):
        lines.append(
            f"#   {i:>6}  {v.irq:>3}  {'' if v.core is None else v.core:>4}  "
            f"{v.affinity or '?':>8}  {_rate_text(v.rate_per_s):>18}  {v.name}"
        )
    for v in p.other_vectors:
        lines.append(
            f"#   {'other':>6}  {v.irq:>3}  {'':>4}  {v.affinity or '?':>8}  "
            f"{_rate_text(v.rate_per_s):>18}  {v.name}"
        )
    return lines


# --- the summary `irqlab probe` prints ------------------------------------------------------


def summary(p: Probe) -> list[Any]:
    """Rich tables for a person: the values written and their sources, the vectors with their
    observed rates, and the notes."""
    from rich.table import Table

    title = f"irqlab probe — {p.iface}" + (f" ({p.driver})" if p.driver else "")
    if p.hostname:
        title += f" on {p.hostname}"
    t = Table(title=title, title_justify="left", show_header=True, header_style="bold")
    t.add_column("key", no_wrap=True)
    t.add_column("value", justify="right", overflow="fold", max_width=24)
    t.add_column("source", overflow="fold")
    order = {name: i for i, name in enumerate(["", *SECTIONS])}
    for s in sorted(p.settings.values(), key=lambda s: order.get(_section(s.key), len(order))):
        t.add_row(s.key, _toml_value(s.value), s.source.rstrip(":"))
    if p.rx_pps is not None:
        t.add_row("(observed)", f"{p.rx_pps:,.0f} pps", f"{p.iface} received, not written")
    for name, value, what, source in p.unmodelled:
        t.add_row(f"({name})", value, f"{source} ({what}); not modelled yet")
    out: list[Any] = [t]
    if p.vectors or p.other_vectors:
        rate = f"IRQs/s ({p.interval_s:g} s)" if p.interval_s else "IRQs/s"
        v = Table(show_header=True, header_style="bold")
        for name, justify in (
            ("vector", "right"),
            ("IRQ", "right"),
            ("name", "left"),
            ("affinity", "right"),
            ("core", "right"),
            (rate, "right"),
            ("busiest CPU", "right"),
        ):
            v.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for i, vec in enumerate(p.vectors):
            v.add_row(*_vector_row(str(i), vec))
        for vec in p.other_vectors:
            v.add_row(*_vector_row("other", vec))
        out.append(v)
    return out


def _vector_row(label: str, v: Vector) -> list[str]:
    return [
        label,
        str(v.irq),
        v.name,
        v.affinity or "?",
        "" if v.core is None or v.queue is None else str(v.core),
        _rate_text(v.rate_per_s),
        "" if v.busiest_cpu is None else str(v.busiest_cpu),
    ]


def write(p: Probe, out: Path, *, force: bool = False) -> None:
    """Writes the scenario to ``out``; refuses to replace a file unless ``force``."""
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; --force to overwrite it", None)
    try:
        out.write_text(p.toml(), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{out}: cannot write ({e.strerror})", None) from None
