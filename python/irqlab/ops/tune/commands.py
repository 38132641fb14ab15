"""What the operator types: the commands that apply a setting on a Linux host — ``ethtool -C``
for the moderation policy and coalescing, ``sysctl -w`` or a write to sysfs for the kernel's
settings, netlink's ``napi-set`` for a per-NAPI one. The host's settings come from the probe's
table (:data:`irqlab.ops.probe.HOST_SETTINGS`): what the probe reads, these commands write.

A scenario written by ``irqlab probe`` on a host whose kernel has per-NAPI settings (Linux 6.13
and later) carries the NAPI table (:func:`probed_napis` reads it back): then each per-NAPI
setting the NAPIs have is written with ``napi-set``, one command per NAPI by its id — the
kernel's ``ynl`` CLI (``tools/net/ynl/pyynl/cli.py``: ``--family netdev --do napi-set --json``),
attributes named as the family's spec (``Documentation/netlink/specs/netdev.yaml``) names
them — and the others with sysfs, as on an older host.

A vector's own setting (``napi.N.*``) is written for the NAPI that serves Rx queue N: one
``napi-set`` with its attributes (``threaded`` by the spec's enum names: disabled, enabled,
busy-poll), then its thread's core with ``taskset`` and its policy with ``chrt``, addressed by
the thread's name (``napi/IFACE-ID``, which the kernel gives it when threading starts, so that
the commands hold after the napi-set that creates the thread). Without a probed NAPI table the
id is the placeholder ``NAPI_ID`` and the command says which NAPI it means.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab.formatting import plain
from irqlab.ops.probe import settings
from irqlab.ops.probe.settings import HostSetting

#: The adaptive policies an operator can choose, and what each is (for the command's comment).
_ADAPTIVE = {
    "ixgbe-legacy": "ixgbe before 4.15 / the out-of-tree 3.x driver's adaptive ITR",
    "ixgbe": "ixgbe's adaptive ITR (4.15 and later)",
    "i40e": "i40e/iavf's dynamic ITR",
    "dim": "net_dim (mlx5, ice, bnxt, ...)",
    "linear": "the linear ITR patch of Emmerich et al. (2015); not in mainline drivers",
}


@dataclass(frozen=True)
class ProbedNapi:
    """A NAPI of the probed interface: its id (what napi-set addresses), the queues it serves
    as the probe showed them, and the per-NAPI settings its kernel gave for it."""

    id: int
    queues: str
    settings: frozenset[str]


@dataclass(frozen=True)
class ProbedNapis:
    """The NAPI table of a probed scenario: the interface and its NAPIs."""

    iface: str
    napis: tuple[ProbedNapi, ...]


#: The NAPI table's title, header and rows as ``irqlab probe`` writes them
#: (:func:`irqlab.ops.probe.render.napi_comment`).
_TITLE = re.compile(r"# NAPIs of (\S+) \(netlink napi-get")
_HEADER = re.compile(r"#\s+NAPI\s+queues\s+IRQ\s+(\S.*)")
_ROW = re.compile(r"#\s+([0-9]{1,10})\s+(\S+)\s+(\S+)\s+(\S.*)")
#: Bytes of a scenario file read for its NAPI table at most.
_MOST = 16 << 20


def probed_napis(text: str) -> ProbedNapis | None:
    """The NAPI table a scenario written by ``irqlab probe`` carries, or None (a scenario not
    probed, or probed where netlink gave no NAPI)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        title = _TITLE.match(line)
        if title is None:
            continue
        for j in range(i + 1, min(i + 8, len(lines))):
            header = _HEADER.fullmatch(lines[j])
            if header is None:
                continue
            columns = header[1].split()
            napis = []
            for row in lines[j + 1 :]:
                m = _ROW.fullmatch(row)
                if m is None:
                    break
                cells = m[4].split()
                have = {c for c, v in zip(columns, cells, strict=False) if v != "-"}
                napis.append(ProbedNapi(int(m[1]), m[2], frozenset(have)))
            return ProbedNapis(title[1], tuple(napis)) if napis else None
    return None


def probed_napis_of(scenario: object) -> ProbedNapis | None:
    """:func:`probed_napis` of a scenario file (None for a scenario given as a mapping, or a
    file that cannot be read)."""
    if not isinstance(scenario, str | os.PathLike):
        return None
    try:
        with open(Path(scenario), encoding="utf-8", errors="replace") as f:
            return probed_napis(f.read(_MOST))
    except (OSError, ValueError):
        return None


def commands(
    setting: Mapping[str, Any],
    params: Mapping[str, Any],
    iface: str = "IFACE",
    napis: ProbedNapis | None = None,
) -> list[str]:
    """The commands that apply ``setting`` on a Linux host (``params``: the whole scenario;
    ``napis``: the probed host's NAPIs, for napi-set where each has the setting)."""
    out: list[str] = []
    coalesce: list[str] = []
    moderation = setting.get("driver.moderation", params.get("driver.moderation"))
    if "driver.moderation" in setting or "nic.itr_us" in setting:
        if moderation == "static":
            itr = setting.get("nic.itr_us", params.get("nic.itr_us"))
            coalesce += ["adaptive-rx off", f"rx-usecs {plain(itr)}"]
        elif moderation == "off":
            coalesce += ["adaptive-rx off", "rx-usecs 0"]
        elif moderation in _ADAPTIVE:
            coalesce += ["adaptive-rx on"]
    if "nic.rx_usecs" in setting:
        coalesce.append(f"rx-usecs {plain(setting['nic.rx_usecs'])}")
    if "nic.rx_frames" in setting:
        coalesce.append(f"rx-frames {plain(setting['nic.rx_frames'])}")
    if coalesce:
        note = f"   # {_ADAPTIVE[moderation]}" if moderation in _ADAPTIVE else ""
        out.append(f"ethtool -C {iface} {' '.join(coalesce)}{note}")
    written = {"driver.moderation", "nic.itr_us", "nic.rx_usecs", "nic.rx_frames"}
    # the host's own settings, as the probe reads them (one table for both directions)
    per_napi: dict[str, int] = {}
    at = 0
    for host in settings.HOST_SETTINGS:
        if host.key is not None and host.key in setting:
            if napis and host.napi and all(host.napi in n.settings for n in napis.napis):
                if not per_napi:
                    at = len(out)  # napi-set where the first per-NAPI setting would be
                per_napi[host.napi] = _host_value(host, setting[host.key])
            else:
                out.append(_host_command(host, setting[host.key], iface))
            written.add(host.key)
    if napis and per_napi:
        out[at:at] = _napi_set(napis.napis, per_napi, iface)
    out += _per_vector(setting, napis, iface, written)
    for key, value in setting.items():
        if key not in written:
            out.append(f"# {key} = {plain(value)} (a model setting: no operator command)")
    return out


#: A vector's own settings (``napi.N.<field>``) that napi-set writes, by their netdev.yaml name.
_NAPI_SET = {
    "defer_hard_irqs": "defer-hard-irqs",
    "gro_flush_timeout_ns": "gro-flush-timeout",
    "irq_suspend_timeout_ns": "irq-suspend-timeout",
    "threaded": "threaded",
}
#: ``napi.N.threaded`` as the spec's enum napi-threaded names it.
_THREADED = {"off": "disabled", "on": "enabled", "busy-poll": "busy-poll"}
#: ``napi.N.thread_policy`` as chrt sets it (SCHED_FIFO at the priority of the patch set's
#: experiments, ``chrt -f 50``; SCHED_OTHER).
_CHRT = {"fifo": "chrt -f -p 50", "fair": "chrt -o -p 0"}
_VECTOR_KEY = re.compile(r"napi\.([0-9]{1,4})\.([a-z_]+)")
#: A field left to the device's value.
_DEVICE = (-1, -1.0, "device")


def _per_vector(
    setting: Mapping[str, Any], napis: ProbedNapis | None, iface: str, written: set[str]
) -> list[str]:
    """The commands for the vectors' own settings in ``setting`` (``napi.N.*``)."""
    by_vector: dict[int, dict[str, Any]] = {}
    for key, value in setting.items():
        m = _VECTOR_KEY.fullmatch(key)
        if m is None:
            continue
        written.add(key)
        by_vector.setdefault(int(m[1]), {})[m[2]] = value
    out: list[str] = []
    for v, fields in sorted(by_vector.items()):
        napi = next(
            (n for n in (napis.napis if napis else ()) if f"rx-{v}" in n.queues.split(",")),
            None,
        )
        ident: int | str = napi.id if napi else "NAPI_ID"
        note = f"   # {iface} rx-{v}" + ("" if napi else " (napi-get lists its id)")
        attrs: dict[str, Any] = {}
        for field, value in fields.items():
            if field not in _NAPI_SET:
                continue
            if value in _DEVICE and not isinstance(value, bool):
                out.append(
                    f"# napi.{v}.{field} = {plain(value)}: the device's value, nothing to set"
                )
            elif field == "threaded":
                attrs["threaded"] = _THREADED[str(value)]
            else:
                attrs[_NAPI_SET[field]] = round(float(value))
        if attrs:
            body = json.dumps({"id": ident, **attrs})
            out.append(f"ynl --family netdev --do napi-set --json '{body}'{note}")
        thread = f"$(pgrep -x napi/{iface}-{ident})"
        core = fields.get("thread_core")
        if core is not None and core not in _DEVICE:
            out.append(f"taskset -pc {plain(core)} {thread}{note}")
        policy = fields.get("thread_policy")
        if policy in _CHRT:
            out.append(f"{_CHRT[str(policy)]} {thread}{note}")
    return out


def _napi_set(napis: Sequence[ProbedNapi], values: Mapping[str, int], iface: str) -> list[str]:
    """napi-set for each NAPI, by its id: the kernel's ynl CLI and the spec's attributes."""
    return [
        f"ynl --family netdev --do napi-set --json '{json.dumps({'id': n.id, **values})}'"
        f"   # {iface} {n.queues}"
        for n in napis
    ]


def _host_value(host: HostSetting, value: Any) -> int:
    """``value`` (in the key's unit) as the host takes it: a count, or 0 and 1 for a switch."""
    if isinstance(value, bool) or host.boolean:
        return 1 if value else 0
    return round(float(value) / host.scale)


def _host_command(host: HostSetting, value: Any, iface: str) -> str:
    """The command that writes one of the host's settings (``value`` in the key's unit)."""
    if host.scale != 1.0 and isinstance(value, int | float) and not isinstance(value, bool):
        value = round(value / host.scale)
    shown = ("1" if value else "0") if host.boolean else plain(value)
    path = host.path
    if path is None:  # netlink only (per NAPI): each of the device's NAPIs
        return (
            f'ynl --family netdev --do napi-set --json \'{{"id": NAPI_ID, '
            f'"{host.napi}": {shown}}}\'   # each NAPI of {iface} (napi-get lists them)'
        )
    if path.startswith("/proc/sys/"):
        return f"sysctl -w {path.removeprefix('/proc/sys/').replace('/', '.')}={shown}"
    return f"echo {shown} > {path.replace('{iface}', iface)}"
