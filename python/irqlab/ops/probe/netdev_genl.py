"""The kernel's netdev generic netlink family as pyroute2 messages: ``napi-get`` and
``queue-get`` dumped for one interface.

The attributes, their numbers and types and the commands' numbers are the family's YNL spec,
``Documentation/netlink/specs/netdev.yaml`` in the kernel tree (and the uapi header generated
from it, ``include/uapi/linux/netdev.h``): an attribute set's attributes are numbered from 1 in
the order the spec lists them, the operations likewise (``queue-get`` is the 10th, ``napi-get``
the 11th). pyroute2 (:class:`~pyroute2.netlink.generic.AsyncGenericNetlinkSocket`) resolves the
family, sends the dump and parses the answers; this module only describes the messages, and
hands back plain typed values. It imports pyroute2, so the probe imports it only when it asks a
live kernel (pyroute2 takes a tenth of a second to import).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import struct
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

from pyroute2.netlink import (  # type: ignore[import-untyped]
    NLM_F_DUMP,
    NLM_F_REQUEST,
    genlmsg,
    nla_base_string,
)
from pyroute2.netlink.exceptions import (  # type: ignore[import-untyped]
    NetlinkDecodeError,
    NetlinkError,
)
from pyroute2.netlink.generic import AsyncGenericNetlinkSocket  # type: ignore[import-untyped]

T = TypeVar("T")

#: The family's name and its operations' numbers (netdev.yaml's ``operations``, counted from 1).
FAMILY = "netdev"
CMD_QUEUE_GET = 10
CMD_NAPI_GET = 11


class _uint(nla_base_string):  # type: ignore[misc, unused-ignore]  # pyroute2: untyped
    """netdev.yaml's ``uint`` (the kernel's NLA_UINT): a u32, or a u64 when the value needs
    it. Any other length decodes to None, which the reader drops."""

    def decode(self) -> None:
        nla_base_string.decode(self)
        raw = self["value"]
        self.value = int.from_bytes(raw, sys.byteorder) if len(raw) in (4, 8) else None


class napi_msg(genlmsg):  # type: ignore[misc, unused-ignore]  # pyroute2: untyped
    """netdev.yaml's attribute set ``napi`` (ifindex, id, irq, pid: u32; defer-hard-irqs: u32;
    gro-flush-timeout, irq-suspend-timeout: uint; threaded: u32, the enum napi-threaded)."""

    nla_map = (
        ("NETDEV_A_NAPI_UNSPEC", "none"),
        ("NETDEV_A_NAPI_IFINDEX", "uint32"),
        ("NETDEV_A_NAPI_ID", "uint32"),
        ("NETDEV_A_NAPI_IRQ", "uint32"),
        ("NETDEV_A_NAPI_PID", "uint32"),
        ("NETDEV_A_NAPI_DEFER_HARD_IRQS", "uint32"),
        ("NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT", "uint"),
        ("NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT", "uint"),
        ("NETDEV_A_NAPI_THREADED", "uint32"),
    )
    uint = _uint


class queue_msg(genlmsg):  # type: ignore[misc, unused-ignore]  # pyroute2: untyped
    """netdev.yaml's attribute set ``queue`` (id, ifindex: u32; type: u32, the enum
    queue-type, rx 0 and tx 1; napi-id: u32; dmabuf, io-uring, xsk: not read)."""

    nla_map = (
        ("NETDEV_A_QUEUE_UNSPEC", "none"),
        ("NETDEV_A_QUEUE_ID", "uint32"),
        ("NETDEV_A_QUEUE_IFINDEX", "uint32"),
        ("NETDEV_A_QUEUE_TYPE", "uint32"),
        ("NETDEV_A_QUEUE_NAPI_ID", "uint32"),
        ("NETDEV_A_QUEUE_DMABUF", "none"),
        ("NETDEV_A_QUEUE_IO_URING", "none"),
        ("NETDEV_A_QUEUE_XSK", "none"),
    )


#: Each message's attributes by pyroute2's name → the spec's name.
NAPI_NAMES = {
    name: name.removeprefix("NETDEV_A_NAPI_").lower().replace("_", "-")
    for name, _ in napi_msg.nla_map[1:]
}
QUEUE_NAMES = {
    name: name.removeprefix("NETDEV_A_QUEUE_").lower().replace("_", "-")
    for name, _ in queue_msg.nla_map[1:]
}
#: queue-type's entries, in the spec's order
QUEUE_TYPES = ("rx", "tx")


def attributes(reply: Any, names: dict[str, str]) -> dict[str, int]:
    """A parsed answer's attributes by the spec's names, counts only: an attribute the kernel
    sent with a length its type does not have (pyroute2 then leaves it undecoded) is left out,
    and so is one the spec does not name."""
    item: dict[str, int] = {}
    for name, value in reply.get("attrs", []):
        if name in names and isinstance(value, int) and not isinstance(value, bool):
            item[names[name]] = value
    return item


class _Socket(AsyncGenericNetlinkSocket):  # type: ignore[misc, unused-ignore]  # pyroute2: untyped
    # pyroute2 logs a family it cannot find at ERROR level; the probe says it in a note
    module_err_level = "debug"


async def _dump(
    cmd: int, msg_class: type[Any], names: dict[str, str], ifindex: int, most: int
) -> list[dict[str, int]]:
    sock = _Socket()
    try:
        await sock.bind(FAMILY, msg_class)
        msg = msg_class()
        msg["cmd"] = cmd
        msg["version"] = 1
        ifindex_attr = next(name for name, spec in names.items() if spec == "ifindex")
        msg["attrs"].append([ifindex_attr, ifindex])
        out: list[dict[str, int]] = []
        answer = await sock.nlm_request(
            msg, msg_type=sock.prid, msg_flags=NLM_F_REQUEST | NLM_F_DUMP
        )
        async for reply in answer:
            if len(out) == most:
                raise OSError(errno.E2BIG, f"more than {most}")
            out.append(attributes(reply, names))
        return out
    except NetlinkError as e:
        raise OSError(e.code, str(e.args[1]) if len(e.args) > 1 else str(e)) from None
    except (NetlinkDecodeError, struct.error):
        raise OSError(errno.EBADMSG, "an answer that does not parse") from None
    finally:
        sock.close()


def _run(coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """Runs ``coro`` to its end within ``timeout_s`` (TimeoutError past it), in an event loop
    of its own — on a thread of its own if this one already runs a loop (a notebook)."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout_s)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, bounded()).result()


def napi_get(ifindex: int, timeout_s: float, most: int) -> list[dict[str, int]]:
    """``napi-get`` dumped for ``ifindex``: each NAPI's attributes by the spec's names
    (``id``, ``irq``, ``defer-hard-irqs``, ...; those the kernel gave). OSError if the kernel
    has no such family (ENOENT) or command (EOPNOTSUPP), more than ``most`` NAPIs (E2BIG);
    TimeoutError if it does not answer within ``timeout_s``."""
    return _run(_dump(CMD_NAPI_GET, napi_msg, NAPI_NAMES, ifindex, most), timeout_s)


def queue_get(ifindex: int, timeout_s: float, most: int) -> list[dict[str, int]]:
    """``queue-get`` dumped for ``ifindex``: each queue's ``id``, ``type`` (0 rx, 1 tx) and
    ``napi-id`` (when a NAPI serves it); errors as :func:`napi_get`."""
    return _run(_dump(CMD_QUEUE_GET, queue_msg, QUEUE_NAMES, ifindex, most), timeout_s)
