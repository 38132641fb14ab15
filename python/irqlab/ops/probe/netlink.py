"""Netlink: each NAPI's settings and the queues each serves, asked of the kernel's netdev
generic netlink family (``napi-get`` and ``queue-get``, Linux 6.8 and later; no privilege
needed), or read from a recording of them.

The family's messages are its YNL spec, ``Documentation/netlink/specs/netdev.yaml`` in the
kernel tree, described for pyroute2 in :mod:`~irqlab.ops.probe.netdev_genl`, which speaks to the
kernel; this module names what is read, bounds it (``MAX_NAPIS``, ``MAX_QUEUES`` and a
deadline, so a kernel that floods or does not answer costs neither) and reads the recordings:
JSON lists with an object per NAPI or queue, attributes named as the spec names them — what
the kernel's own ``ynl --family netdev --dump napi-get --output-json`` prints, and what the
recording script of docs/probe.md writes.
"""

from __future__ import annotations

import errno
import json

from irqlab.ops.probe import limits
from irqlab.ops.probe.findings import Napi, Vector
from irqlab.ops.probe.text import as_shown

#: The attributes of a NAPI in napi-get's answer, by number, named as netdev.yaml names them
#: (and the recordings do).
NAPI_ATTRIBUTES = {
    1: "ifindex",
    2: "id",
    3: "irq",
    4: "pid",
    5: "defer-hard-irqs",
    6: "gro-flush-timeout",
    7: "irq-suspend-timeout",
    8: "threaded",
}
#: The attributes of a queue in queue-get's answer that the probe reads (netdev.yaml).
QUEUE_ATTRIBUTES = ("id", "ifindex", "type", "napi-id")
#: The spec's enums, by the attribute that carries one: a recording may name the value
#: (as ynl prints it) or give its number.
ENUMS = {
    "threaded": ("disabled", "enabled", "busy-poll"),  # napi-threaded
    "type": ("rx", "tx"),  # queue-type
}
#: Each NAPI's own settings (napi-set writes them) and the first Linux whose napi-get gives
#: each: before it, the device's value (sysfs) is every NAPI's.
PER_NAPI_SINCE = {
    "defer-hard-irqs": (6, 13),
    "gro-flush-timeout": (6, 13),
    "irq-suspend-timeout": (6, 13),
    "threaded": (6, 17),
}


def _live(what: str, ifindex: int, timeout_s: float, most: int, limit: str) -> list[dict[str, int]]:
    try:
        from irqlab.ops.probe import netdev_genl
    except ImportError:
        raise OSError(errno.EAFNOSUPPORT, "pyroute2 is not installed") from None
    ask = netdev_genl.napi_get if what == "napi-get" else netdev_genl.queue_get
    try:
        return ask(ifindex, timeout_s, most)
    except OSError as e:
        if e.errno == errno.E2BIG:
            noun = "NAPIs" if what == "napi-get" else "queues"
            raise OSError(errno.E2BIG, f"more than {most} {noun} ({limit})") from None
        raise
    except Exception as e:  # pyroute2 failing otherwise: a note, never a traceback
        raise OSError(errno.EIO, f"pyroute2 failed ({type(e).__name__}: {e})") from None


def napi_get(ifindex: int, timeout_s: float = 5.0) -> list[dict[str, int]]:
    """Each NAPI of interface ``ifindex`` as the kernel's netdev family tells it (``napi-get``,
    no privilege needed): ``{attribute: value}`` named as :data:`NAPI_ATTRIBUTES`. OSError if
    the kernel has no such family or command, or does not answer within ``timeout_s``."""
    return _live("napi-get", ifindex, timeout_s, limits.MAX_NAPIS, "MAX_NAPIS")


def queue_get(ifindex: int, timeout_s: float = 5.0) -> list[dict[str, int]]:
    """Each queue of interface ``ifindex`` (``queue-get``): its ``id``, ``type`` (0 rx, 1 tx)
    and ``napi-id``, the NAPI that serves it (when one does); errors as :func:`napi_get`."""
    return _live("queue-get", ifindex, timeout_s, limits.MAX_QUEUES, "MAX_QUEUES")


def explain(e: OSError) -> str:
    """Why napi-get or queue-get failed, as a note says it."""
    if isinstance(e, TimeoutError):
        return "no answer"
    if e.errno == errno.ENOENT:
        return "the kernel has no netdev family (older than Linux 6.3?)"
    if e.errno == errno.EOPNOTSUPP:
        return "the kernel has no napi-get (older than Linux 6.8?)"
    return (e.strerror or str(e)).lower()


def _parse(
    text: str, names: tuple[str, ...], what: str, most: int, limit: str
) -> list[dict[str, int]]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError(f"not a JSON list of {what}") from None
    if not isinstance(data, list):
        raise ValueError(f"not a JSON list of {what}")
    if len(data) > most:
        raise ValueError(f"more than {most} {what} ({limit})")
    out = []
    for item in data:
        if not isinstance(item, dict):
            raise ValueError("an entry is not a JSON object")
        known = {}
        for name in names:
            if name not in item:
                continue
            value = item[name]
            if name in ENUMS and isinstance(value, str) and value in ENUMS[name]:
                value = ENUMS[name].index(value)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
                raise ValueError(f"{name} = {as_shown(json.dumps(value))}: not a count")
            known[name] = value
        out.append(known)
    return out


def parse_napis(text: str) -> list[dict[str, int]]:
    """netlink's napi-get as recorded (a JSON list with an object per NAPI, attributes named
    as :data:`NAPI_ATTRIBUTES`; ``threaded`` its number or its name); ValueError if it is not
    one."""
    names = tuple(NAPI_ATTRIBUTES.values())
    return _parse(text, names, "NAPIs", limits.MAX_NAPIS, "MAX_NAPIS")


def parse_queues(text: str) -> list[dict[str, int]]:
    """netlink's queue-get as recorded (a JSON list with an object per queue: ``id``, ``type``
    — ``rx`` or ``tx``, or 0 or 1 — and ``napi-id``); ValueError if it is not one."""
    return _parse(text, QUEUE_ATTRIBUTES, "queues", limits.MAX_QUEUES, "MAX_QUEUES")


# --- what the answers say: the NAPI table, and what sysfs stands in for ----------------------


def napi_table(napis: list[dict[str, int]], queues: list[dict[str, int]] | None) -> list[Napi]:
    """The NAPIs of napi-get with the queues queue-get says each serves, in queue order (a
    NAPI that serves no queue last, by id); a NAPI without an id, or one repeated, is left
    out."""
    by_id: dict[int, Napi] = {}
    for n in napis:
        if "id" in n and n["id"] not in by_id:
            own = {name: n[name] for name in PER_NAPI_SINCE if name in n}
            by_id[n["id"]] = Napi(id=n["id"], irq=n.get("irq"), pid=n.get("pid"), settings=own)
    for q in queues or []:
        napi = by_id.get(q.get("napi-id", -1))
        if napi is not None and "id" in q and q.get("type") in (0, 1):
            (napi.rx_queues if q["type"] == 0 else napi.tx_queues).append(q["id"])
    for napi in by_id.values():
        napi.rx_queues.sort()
        napi.tx_queues.sort()

    def order(napi: Napi) -> tuple[int, int, int]:
        first = min(napi.rx_queues or napi.tx_queues or [-1])
        return (first < 0, first, napi.id)

    return sorted(by_id.values(), key=order)


def join_vectors(napis: list[Napi], vectors: list[Vector]) -> None:
    """Gives each NAPI without an IRQ of its own (napi-get has none for some drivers) the IRQ
    of its first Rx queue's vector in /proc/interrupts."""
    by_queue = {v.queue: v.irq for v in vectors if v.queue is not None}
    for napi in napis:
        if napi.irq is None:
            found = [by_queue[q] for q in napi.rx_queues if q in by_queue]
            napi.vector_irq = found[0] if found else None


def fallback_notes(
    napis: list[dict[str, int]] | None,
    source: str,
    kernel: str | None,
    release: tuple[int, int] | None,
    from_files: list[str],
) -> list[str]:
    """What a note says of the per-NAPI settings read from the device's sysfs file instead
    (``from_files``): a kernel older than the attribute, whose NAPIs all have the device's
    value; or netlink did not answer, or answered without it."""
    if napis == []:  # a device without NAPIs: its values are those its NAPIs will get
        return []
    missing = [a for a in from_files if not any(a in n for n in napis or [])]
    older: dict[tuple[int, int], list[str]] = {}
    unknown: list[str] = []
    for a in missing:
        since = PER_NAPI_SINCE[a]
        if release is not None and release < since:
            older.setdefault(since, []).append(a)
        else:
            unknown.append(a)
    notes = []
    if older:
        parts = [f"{', '.join(names)} (Linux {x}.{y} and later)" for (x, y), names in older.items()]
        notes.append(
            f"Linux {kernel} has no per-NAPI {' nor '.join(parts)}: each NAPI has the "
            "device's value, read from sysfs"
        )
    if unknown:
        names = ", ".join(unknown)
        what = f"no NAPI has {names}" if napis else f"each NAPI's {names} unknown"
        notes.append(f"{source}: {what}: the device's values read from sysfs instead")
    return notes
