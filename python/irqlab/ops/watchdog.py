"""The watchdog: a small process that puts the host back when the irqlab command that started
it is gone, however it went (its normal end, an exception, Ctrl-C, SIGTERM, or SIGKILL, which
no handler sees). ``irqlab lab`` and ``irqlab measure`` both use it.

The command starts it first (:class:`Watchdog`, the other end), in a session of its own so
that the terminal's Ctrl-C does not reach it, and holds the write end of a pipe to it. Before
the command creates a namespace, changes a sysctl or mounts tracefs it tells the watchdog, one
JSON line each: ``{"netns": NAME}``, ``{"sysctl": NAME, "old": VALUE}``, ``{"tracefs":
true}``. When the pipe closes — the command ended, or was killed, and the kernel closed its
files — the watchdog undoes everything it was told (:func:`undo`): it kills every process in
the namespaces, deletes them (which removes the veth pair and the threaded NAPI's thread),
writes the sysctls back, last changed first, and unmounts the tracefs it was told of. The
same :func:`undo` is the command's own removal, so there is one way the host is put back.

This file imports nothing from irqlab: it runs as a script (``python -I watchdog.py``), ready
at once and independent of the package's state.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

#: Each command of the removal is bounded.
COMMAND_TIMEOUT_S = 5.0
#: A /proc/sys name the lab may write back: only its knobs, nothing else a pipe could name.
SYSCTLS = (
    "net.core.netdev_budget",
    "net.core.busy_read",
    "net.core.rmem_max",
)
NETNS_PREFIX = "irqlab-"
#: Where tracefs is mounted for the tracing when no tracing directory is mounted.
TRACEFS = "/sys/kernel/tracing"
#: Where bpftrace finds the tracepoints' formats; either one mounted is enough.
TRACING_DIRS = (TRACEFS, "/sys/kernel/debug/tracing")
#: How long the watchdog may take to put the host back after the command lets go of it.
UNDO_TIMEOUT_S = 30.0
PR_SET_PDEATHSIG = 1


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout


def die_with_parent() -> None:
    """In a child before it runs its program: SIGKILL when irqlab's thread that started it
    ends, however it ends (``PR_SET_PDEATHSIG``, kept across exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


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
    (the last changed first), unmounts tracefs if the command mounted it. Idempotent: what is
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
        unmount_tracefs()


def unmount_tracefs() -> None:
    """Unmounts tracefs from :data:`TRACEFS` if it is mounted there; while it is busy (a
    tracing program killed with the command may still be closing its files), again every
    0.1 s for up to :data:`COMMAND_TIMEOUT_S`."""
    deadline = time.monotonic() + COMMAND_TIMEOUT_S
    while mounted(TRACEFS):
        try:
            done = subprocess.run(
                ["umount", TRACEFS], capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return
        if done.returncode == 0 or time.monotonic() > deadline:
            return
        time.sleep(0.1)


def mounted(path: str) -> bool:
    """Whether tracefs (or debugfs) is mounted at ``path``."""
    try:
        mounts = Path("/proc/self/mounts").read_text()
    except OSError:
        return False
    return any(
        len(f) > 2 and f[1] == path and f[2] in ("tracefs", "debugfs")
        for f in (line.split() for line in mounts.splitlines())
    )


def tracing_mounted() -> bool:
    """Whether a tracing directory (:data:`TRACING_DIRS`) is mounted."""
    return any(mounted(d) for d in TRACING_DIRS)


class MountError(Exception):
    """tracefs could not be mounted: the mount's first line of error."""


@dataclass
class Watchdog:
    """The watchdog's other end: what the command is about to create, change or mount, told
    before it does; :meth:`release` puts the host back (the watchdog does it; the command
    itself if the watchdog is gone)."""

    netns: list[str] = field(default_factory=list)
    sysctls: list[tuple[str, str]] = field(default_factory=list)
    #: whether the command mounted tracefs (for its tracing), to be unmounted at the end
    tracefs: bool = False
    proc: subprocess.Popen[bytes] | None = None
    #: Where the same is kept on disk, for the day the command and its watchdog die together
    #: (the lab's: the next lab puts the host back from it); None: not kept.
    state: Path | None = None

    def start(self) -> Self:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", __file__, *([str(self.state)] if self.state else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # the terminal's Ctrl-C is not for it
        )
        return self

    def _keep(self) -> None:
        if self.state is None:
            return
        try:
            self.state.parent.mkdir(parents=True, exist_ok=True)
            kept = {"netns": self.netns, "sysctls": self.sysctls, "tracefs": self.tracefs}
            self.state.write_text(json.dumps(kept))
        except OSError:
            self.state = None  # the watchdog is the guarantee; the file is a second chance

    def _tell(self, record: dict[str, Any]) -> None:
        pipe: IO[bytes] | None = self.proc.stdin if self.proc is not None else None
        if pipe is None:
            return
        try:
            pipe.write((json.dumps(record) + "\n").encode())
            pipe.flush()
        except OSError:
            pass  # the watchdog is gone: release() does the removal itself

    def mount_tracefs(self) -> bool:
        """Mounts tracefs at :data:`TRACEFS` for the tracing when no tracing directory is
        mounted (told to the watchdog first, which unmounts it however the command ends);
        whether it mounted it. :class:`MountError` if the mount fails."""
        if tracing_mounted():
            return False
        self.tracefs = True
        self._keep()
        self._tell({"tracefs": True})
        argv = ["mount", "-t", "tracefs", "nodev", TRACEFS]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                check=False,
                preexec_fn=die_with_parent,
            )
        except FileNotFoundError:
            raise MountError("mount: not found") from None
        except subprocess.TimeoutExpired:
            raise MountError(f"no answer within {COMMAND_TIMEOUT_S:g} s") from None
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
            raise MountError(lines[0][:200])
        return True

    def release(self) -> None:
        """Puts the host back: every process in the namespaces killed, the namespaces deleted,
        the sysctls written back, tracefs unmounted if it was mounted here; waits for the
        watchdog to have done it."""
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                proc.wait(UNDO_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # Again here: idempotent, and what the watchdog did not finish (it was killed too).
        undo(self.netns, self.sysctls, tracefs=self.tracefs)
        if self.state is not None:
            self.state.unlink(missing_ok=True)


def main() -> None:
    """Reads the command's records until the pipe closes, then undoes them; ``argv[1]``: the
    lab's state file, if any, removed once done."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    netns: list[str] = []
    sysctls: list[tuple[str, str]] = []
    tracefs = False
    for line in sys.stdin:  # until the command's end of the pipe closes
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
