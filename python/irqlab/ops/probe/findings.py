"""What a probe found: each scenario key with its value and source (:class:`Setting`), the
interface's IRQs (:class:`Vector`) and NAPIs (:class:`Napi`), and all of it for one interface
(:class:`Probe`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irqlab.errors import ConfigError
from irqlab.scenario import check_value

if TYPE_CHECKING:
    from irqlab.ops.probe.ineffective import Finding


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
    #: a queue vector named for Rx alone (IFACE-rx-N, virtioK-input.N): Tx completions
    #: interrupt other vectors; None for a non-queue vector
    rx_only: bool | None = None
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
class Napi:
    """A NAPI instance of the interface, as the kernel's netdev family tells it (napi-get,
    queue-get): what ``napi-set`` addresses by its id."""

    id: int
    #: the IRQ napi-get gives (drivers that tell it), and the PID of its thread when it polls
    #: in one (threaded)
    irq: int | None = None
    pid: int | None = None
    #: its own settings, named as netdev.yaml names them: only those napi-get gave
    #: (defer-hard-irqs, gro-flush-timeout, irq-suspend-timeout, threaded)
    settings: dict[str, int] = field(default_factory=dict)
    #: the queues it serves (queue-get), by type
    rx_queues: list[int] = field(default_factory=list)
    tx_queues: list[int] = field(default_factory=list)
    #: when napi-get gives no IRQ: that of its first Rx queue's vector in /proc/interrupts
    vector_irq: int | None = None


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
    #: host settings that take effect only with an application ([[app]]): busy polling, IRQ
    #: suspension. A probe writes no app, so these are written commented out; add them to
    #: :meth:`scenario` with your apps.
    with_apps: dict[str, Setting] = field(default_factory=dict)
    #: every key a value was read for, whether written or not (the tests hold it to PROBED)
    read_keys: set[str] = field(default_factory=set)
    driver_source: str = ""
    #: settings irqlab has no key for: (name, value, what it is, source)
    unmodelled: list[tuple[str, str, str, str]] = field(default_factory=list)
    vectors: list[Vector] = field(default_factory=list)
    other_vectors: list[Vector] = field(default_factory=list)
    #: the interface's NAPIs with their own settings and queues (netlink; empty when the host
    #: did not tell them), and where they were read
    napis: list[Napi] = field(default_factory=list)
    napi_source: str = ""
    #: packets/s and mean bytes per packet received between the samples
    rx_pps: float | None = None
    rx_bytes_per_packet: float | None = None
    interval_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: settings of the host that do nothing, or not what their value says, with the reason
    #: and its source in the kernel or the driver (:mod:`~irqlab.ops.probe.ineffective`)
    ineffective: list[Finding] = field(default_factory=list)

    def set(self, key: str, value: Any, source: str) -> None:
        """Records a value for ``key``, or a note if the schema does not allow it."""
        self._record(self.settings, key, value, source)

    def set_for_apps(self, key: str, value: Any, source: str) -> None:
        """Records a value that takes effect only with an application (:attr:`with_apps`)."""
        self._record(self.with_apps, key, value, source)

    def _record(self, into: dict[str, Setting], key: str, value: Any, source: str) -> None:
        self.read_keys.add(key)
        try:
            into[key] = Setting(key, check_value(key, value), source)
        except ConfigError as e:
            self.notes.append(f"{e} — read from {source}; not written")

    def get(self, key: str, default: Any = None) -> Any:
        """The value written for ``key``, or ``default``."""
        s = self.settings.get(key)
        return default if s is None else s.value

    def scenario(self) -> dict[str, Any]:
        """The scenario as flat dotted keys (what :func:`irqlab.run` and ``--set`` take)."""
        return {k: s.value for k, s in self.settings.items()}

    def toml(self) -> str:
        """The scenario file: every value with its source, notes and observations as comments."""
        from irqlab.ops.probe.render import render_toml

        return render_toml(self)
