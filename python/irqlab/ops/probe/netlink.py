"""Netlink: each NAPI's settings (Linux 6.13 and later), asked of the kernel's netdev family
with ``napi-get`` (no privilege needed), or read from a recording of it.

The request and its answer are built and parsed here with :mod:`struct` (generic netlink's
header, the controller's family lookup, the dump of NAPIs); an answer is bounded by
``MAX_NAPIS`` and a deadline, so a kernel that floods or does not answer costs neither.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import struct
import sys
import time

from irqlab.ops.probe import limits
from irqlab.ops.probe.text import as_shown

#: Generic netlink's controller and the netdev family's napi-get (include/uapi/linux/
#: genetlink.h, netlink.h, netdev.h).
_NETLINK_GENERIC = 16
_GENL_ID_CTRL = 0x10
_CTRL_CMD_GETFAMILY = 3
_CTRL_ATTR_FAMILY_ID = 1
_CTRL_ATTR_FAMILY_NAME = 2
_NLMSG_ERROR = 2
_NLMSG_DONE = 3
_NLM_F_REQUEST = 1
_NLM_F_DUMP = 0x300
_NETDEV_CMD_NAPI_GET = 11
_NETDEV_A_NAPI_IFINDEX = 1
#: The attributes of a NAPI in napi-get's answer, by number, named as netdev.yaml names them
#: (and the recording script writes them).
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


def _nl_attrs(data: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    i = 0
    while i + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, i)
        if length < 4 or i + length > len(data):
            break
        out[kind & 0x3FFF] = data[i + 4 : i + length]
        i += (length + 3) & ~3
    return out


def _nl_request(family: int, flags: int, seq: int, cmd: int, attrs: bytes) -> bytes:
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    return struct.pack("=IHHII", 16 + len(body), family, _NLM_F_REQUEST | flags, seq, 0) + body


def _nl_answer(s: socket.socket, seq: int, deadline: float, dump: bool) -> list[bytes]:
    """The payloads (after the generic header) of the answer to request ``seq``: one message,
    or a dump's until its end; OSError for the kernel's error, a timeout, or an answer of more
    than ``MAX_NAPIS`` messages."""
    out: list[bytes] = []
    for _ in range(limits.MAX_NAPIS + 64):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(errno.ETIMEDOUT, "no answer")
        s.settimeout(left)
        data = s.recv(1 << 16)
        i = 0
        while i + 16 <= len(data):
            length, kind, _flags, got, _pid = struct.unpack_from("=IHHII", data, i)
            if length < 16 or i + length > len(data):
                break
            payload = data[i + 16 : i + length]
            i += (length + 3) & ~3
            if got != seq:
                continue
            if kind == _NLMSG_ERROR:
                code = -struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else errno.EIO
                if code:
                    raise OSError(code, os.strerror(code))
                return out
            if kind == _NLMSG_DONE:
                return out
            out.append(payload[4:])
            if not dump:
                return out
            if len(out) > limits.MAX_NAPIS:
                raise OSError(errno.E2BIG, f"more than {limits.MAX_NAPIS} NAPIs (MAX_NAPIS)")
    raise OSError(errno.E2BIG, "an answer without end")


def napi_get(ifindex: int, timeout_s: float = 5.0) -> list[dict[str, int]]:
    """Each NAPI of interface ``ifindex`` as the kernel's netdev family tells it (``napi-get``,
    no privilege needed): ``{attribute: value}`` named as :data:`NAPI_ATTRIBUTES`. OSError if
    the kernel has no such family or command, or does not answer within ``timeout_s``."""
    family_af = getattr(socket, "AF_NETLINK", None)
    if family_af is None:
        raise OSError(errno.EAFNOSUPPORT, "no netlink on this system")
    deadline = time.monotonic() + timeout_s
    with socket.socket(family_af, socket.SOCK_RAW, _NETLINK_GENERIC) as s:
        s.bind((0, 0))
        name = b"netdev\0\0"
        attr = struct.pack("=HH", 4 + 7, _CTRL_ATTR_FAMILY_NAME) + name
        s.send(_nl_request(_GENL_ID_CTRL, 0, 1, _CTRL_CMD_GETFAMILY, attr))
        family = None
        for payload in _nl_answer(s, 1, deadline, dump=False):
            raw = _nl_attrs(payload).get(_CTRL_ATTR_FAMILY_ID)
            if raw is not None and len(raw) >= 2:
                family = struct.unpack_from("=H", raw)[0]
        if family is None:
            raise OSError(errno.ENOENT, "no netdev family")
        attr = struct.pack("=HHI", 8, _NETDEV_A_NAPI_IFINDEX, ifindex)
        s.send(_nl_request(family, _NLM_F_DUMP, 2, _NETDEV_CMD_NAPI_GET, attr))
        napis = []
        for payload in _nl_answer(s, 2, deadline, dump=True):
            napi = {}
            for number, raw in _nl_attrs(payload).items():
                if number in NAPI_ATTRIBUTES and len(raw) in (1, 2, 4, 8):
                    napi[NAPI_ATTRIBUTES[number]] = int.from_bytes(raw, sys.byteorder)
            napis.append(napi)
        return napis


def explain(e: OSError) -> str:
    """Why napi-get failed, as a note says it."""
    if isinstance(e, TimeoutError):
        return "no answer"
    if e.errno == errno.ENOENT:
        return "the kernel has no netdev family (older than Linux 6.3?)"
    if e.errno == errno.EOPNOTSUPP:
        return "the kernel has no napi-get (older than Linux 6.8?)"
    return (e.strerror or str(e)).lower()


def parse_napis(text: str) -> list[dict[str, int]]:
    """netlink's napi-get as the recording script writes it (a JSON list with an object per
    NAPI, attributes named as :data:`NAPI_ATTRIBUTES`); ValueError if it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not a JSON list of NAPIs") from None
    if not isinstance(data, list):
        raise ValueError("not a JSON list of NAPIs")
    if len(data) > limits.MAX_NAPIS:
        raise ValueError(f"more than {limits.MAX_NAPIS} NAPIs (MAX_NAPIS)")
    out = []
    for napi in data:
        if not isinstance(napi, dict):
            raise ValueError("an entry is not a JSON object")
        known = {}
        for name in NAPI_ATTRIBUTES.values():
            if name not in napi:
                continue
            value = napi[name]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
                raise ValueError(f"{name} = {as_shown(json.dumps(value))}: not a count")
            known[name] = value
        out.append(known)
    return out
