"""The lab's watchdog: a small process that puts the host back when the lab is gone, however it
went (its normal end, an exception, Ctrl-C, SIGTERM, or SIGKILL, which no handler sees).

The lab starts it first (:class:`Guard`), in a session of its own so that the terminal's Ctrl-C
does not reach it, and holds the write end of a pipe to it. Before the lab creates a namespace
or changes a sysctl it tells the watchdog, one JSON line each: ``{"netns": NAME}``,
``{"sysctl": NAME, "old": VALUE}``, ``{"tracefs": true}`` (it mounts tracefs for its
tracing). When the pipe closes — the lab ended, or was killed, and the kernel closed its
files — the watchdog undoes everything it was told (:func:`undo`): it kills every process in
the namespaces, deletes them (which removes the veth pair and the threaded NAPI's thread),
writes the sysctls back, last changed first, and unmounts the tracefs it was told of. The
same :func:`undo` is the lab's own removal, so there is one way the host is put back.

This file imports nothing from irqlab: it runs as a script (``python -I watchdog.py``), ready
at once and independent of the package's state.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable

#: Each command of the removal is bounded.
COMMAND_TIMEOUT_S = 5.0
#: A /proc/sys name the lab may write back: only its knobs, nothing else a pipe could name.
SYSCTLS = (
    "net.core.netdev_budget",
    "net.core.busy_read",
    "net.core.rmem_max",
)
NETNS_PREFIX = "irqlab-"
#: Where the lab mounts tracefs for its tracing when nothing is mounted there.
TRACEFS = "/sys/kernel/tracing"


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout


def sysctl_path(name: str) -> str:
    return "/proc/sys/" + name.replace(".", "/")


def kill_netns_processes(netns: str) -> int:
    """SIGKILL to every process in ``netns``; how many there were."""
    pids = [int(p) for p in _run(["ip", "netns", "pids", netns]).split() if p.isdigit()]
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


def undo(
    netns: list[str],
    sysctls: list[tuple[str, str]],
    note: Callable[[str], None] | None = None,
    tracefs: bool = False,
) -> None:
    """Kills the processes of each namespace, deletes the namespaces, writes the sysctls back
    (the last changed first), unmounts tracefs if the lab mounted it. Idempotent: what is
    already gone is skipped."""
    for name in netns:
        if not name.startswith(NETNS_PREFIX):
            continue
        kill_netns_processes(name)
    for name in netns:
        if name.startswith(NETNS_PREFIX):
            _run(["ip", "netns", "del", name])
    for name, old in reversed(sysctls):
        if name not in SYSCTLS:
            continue
        try:
            with open(sysctl_path(name), "w") as f:
                f.write(old)
        except OSError as e:
            if note is not None:
                note(f"could not restore {name} = {old}: {e.strerror or e}")
    if tracefs:
        _run(["umount", TRACEFS])


def main() -> None:
    """Reads the lab's records until the pipe closes, then undoes them; ``argv[1]``: the lab's
    state file, removed once done."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    netns: list[str] = []
    sysctls: list[tuple[str, str]] = []
    tracefs = False
    for line in sys.stdin:  # until the lab's end of the pipe closes
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("tracefs") is True:
            tracefs = True
        if isinstance(record.get("netns"), str) and record["netns"] not in netns:
            netns.append(record["netns"])
        name, old = record.get("sysctl"), record.get("old")
        # the first value told is the host's
        if isinstance(name, str) and isinstance(old, str) and name not in dict(sysctls):
            sysctls.append((name, old))
    undo(
        netns,
        sysctls,
        note=lambda text: print(f"irqlab lab: {text}", file=sys.stderr),
        tracefs=tracefs,
    )
    # the lab's state file: what it kept for the day both die, now done
    if len(sys.argv) > 1 and re.fullmatch(r"lab-[0-9]{1,10}\.json", os.path.basename(sys.argv[1])):
        with contextlib.suppress(OSError):
            os.unlink(sys.argv[1])


if __name__ == "__main__":
    main()
