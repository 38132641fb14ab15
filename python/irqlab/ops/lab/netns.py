"""The lab's host side: its commands (each bounded in time, each child killed with irqlab), its
end of the watchdog that puts the host back (:class:`Guard`), the sysctls it changes, and the
topology (:class:`Topology`): two network namespaces joined by a veth pair.

::

    irqlab-PID-tx                          irqlab-PID-rx
    sockperf tp (sender core)              sockperf server (app core)
    veth0 198.18.0.1/30  ───── veth ─────  veth1 198.18.0.2/30
    TSO, GSO off                           GRO on: veth1's NAPI polls; threaded or not

The addresses are in 198.18.0.0/15, the range set aside for benchmarks (RFC 2544), and exist
only inside the two namespaces: no packet of the lab leaves them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.ops import watchdog
from irqlab.ops.watchdog import die_with_parent

TX_ADDR, RX_ADDR, PREFIX_LEN = "198.18.0.1", "198.18.0.2", 30
TX_DEV, RX_DEV = "veth0", "veth1"
#: A setup or removal command's bound.
COMMAND_TIMEOUT_S = 10.0
NETNS_RE = re.compile(r"irqlab-([0-9]{1,10})-(tx|rx)")
#: Each running lab's namespaces and the sysctls' old values (``lab-PID.json``).
STATE_DIR = Path("/run/irqlab")
STATE_RE = re.compile(r"lab-([0-9]{1,10})\.json")


class LabError(ConfigError):
    """The lab cannot run or set up on this host: one line saying what and why."""


def run(argv: list[str], timeout_s: float = COMMAND_TIMEOUT_S) -> str:
    """Runs ``argv`` to its end within ``timeout_s`` and returns its output; a failure is one
    line naming the command and its first line of error."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            preexec_fn=die_with_parent,
        )
    except FileNotFoundError:
        raise LabError(f"{argv[0]}: not found (install it: {package_of(argv[0])})") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"{' '.join(argv)}: no answer within {timeout_s:g} s") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        raise LabError(f"{' '.join(argv)}: {why}")
    return done.stdout


#: The Debian/Ubuntu package of each program the lab runs.
PACKAGES = {
    "sockperf": "sockperf",
    "ip": "iproute2",
    "ethtool": "ethtool",
    "taskset": "util-linux",
    "sh": "dash",
}


def package_of(program: str) -> str:
    return f"the package {PACKAGES.get(program, program)}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def netns_names(pid: int) -> tuple[str, str]:
    """The sending and receiving namespaces of the lab run by ``pid``."""
    return f"irqlab-{pid}-tx", f"irqlab-{pid}-rx"


def list_netns() -> list[str]:
    return [line.split()[0] for line in run(["ip", "netns", "list"]).splitlines() if line.strip()]


def stale_netns(names: list[str], alive: Callable[[int], bool] = pid_alive) -> list[str]:
    """The lab's namespaces among ``names`` whose irqlab is gone."""
    found = [(n, NETNS_RE.fullmatch(n)) for n in names]
    return [n for n, m in found if m is not None and not alive(int(m[1]))]


def other_labs(
    names: list[str], alive: Callable[[int], bool] = pid_alive, me: int | None = None
) -> list[int]:
    """The pids of the other labs running, by their namespaces among ``names``."""
    me = os.getpid() if me is None else me
    pids = {int(m[1]) for m in map(NETNS_RE.fullmatch, names) if m is not None}
    return sorted(pid for pid in pids if pid != me and alive(pid))


def restore_stale(
    echo: Callable[[str], None],
    state_dir: Path = STATE_DIR,
    alive: Callable[[int], bool] = pid_alive,
) -> list[int]:
    """Puts back what a lab kept in ``state_dir`` when it and its watchdog are both gone
    (namespaces, sysctls), saying so in one line each; the pids of those labs."""
    done: list[int] = []
    try:
        entries = sorted(state_dir.iterdir())[:100]
    except OSError:
        return done
    for path in entries:
        m = STATE_RE.fullmatch(path.name)
        if m is None or alive(int(m[1])):
            continue
        try:
            state = json.loads(path.read_text())
            netns = [n for n in state["netns"] if isinstance(n, str)]
            sysctls = [(str(n), str(v)) for n, v in state["sysctls"]]
            tracefs = state.get("tracefs") is True
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        watchdog.undo(netns, sysctls, tracefs=tracefs)
        path.unlink(missing_ok=True)
        done.append(int(m[1]))
        if sysctls:
            echo(
                f"restored what a lab that is gone (irqlab pid {m[1]}) had set: "
                + ", ".join(f"{n} = {v}" for n, v in sysctls)
            )
    return done


def remove_stale(echo: Callable[[str], None]) -> list[str]:
    """Removes the namespaces of labs whose irqlab is gone (their processes first), saying so
    in one line; refuses, in one line, to start beside another lab that runs (the sysctls it
    sets are the host's, one value for both)."""
    names = list_netns()
    running = other_labs(names)
    if running:
        raise LabError(
            f"another irqlab lab is running (pid {', '.join(map(str, running))}): one at a "
            "time, as the sysctls a lab sets are the host's"
        )
    stale = stale_netns(names)
    if stale:
        watchdog.undo(stale, [])
        pids = sorted({NETNS_RE.fullmatch(n)[1] for n in stale})  # type: ignore[index]
        echo(
            f"removed {len(stale)} namespace(s) left by a lab that is gone "
            f"(irqlab pid {', '.join(pids)}): {', '.join(stale)}"
        )
    return stale


def sysctl_read(name: str) -> str:
    try:
        return Path(watchdog.sysctl_path(name)).read_text().strip()
    except OSError as e:
        raise LabError(f"{name}: cannot be read ({e.strerror or e})") from None


def sysctl_write(name: str, value: str) -> None:
    try:
        Path(watchdog.sysctl_path(name)).write_text(value)
    except OSError as e:
        raise LabError(f"{name} = {value}: cannot be set ({e.strerror or e})") from None


class Guard(watchdog.Watchdog):
    """The watchdog's other end for the lab: the namespaces it creates and the sysctls it
    changes, each told before it does (:class:`~irqlab.ops.watchdog.Watchdog`); ``state`` keeps
    the same on disk for the day irqlab and its watchdog die together: the next lab puts the
    host back from it (:func:`restore_stale`)."""

    def add_netns(self, name: str) -> None:
        self.netns.append(name)
        self._keep()
        self._tell({"netns": name})

    def mount_tracefs(self) -> bool:
        """As :meth:`Watchdog.mount_tracefs`, a failure one line (:class:`LabError`)."""
        try:
            return super().mount_tracefs()
        except watchdog.MountError as e:
            raise LabError(f"mount -t tracefs nodev {watchdog.TRACEFS}: {e}") from None

    def set_sysctl(self, name: str, value: str) -> str:
        """Sets ``name`` to ``value`` (the old value told to the watchdog first); the old
        value."""
        old = sysctl_read(name)
        if name not in (n for n, _ in self.sysctls):
            self.sysctls.append((name, old))
            self._keep()
            self._tell({"sysctl": name, "old": old})
        if old != value:
            sysctl_write(name, value)
        return old


@dataclass
class Topology:
    """The two namespaces and their veth pair."""

    tx: str
    rx: str

    def exec_rx(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.rx, *argv]

    def exec_tx(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.tx, *argv]

    def create(self, guard: Guard) -> dict[str, Any]:
        """Creates the namespaces (each told to ``guard`` first), the veth pair, its addresses,
        GRO on at the receiver and TSO/GSO off at the sender; the offloads as ethtool shows
        them."""
        for name in (self.tx, self.rx):
            guard.add_netns(name)
            run(["ip", "netns", "add", name])
        run(
            [
                "ip", "-n", self.tx, "link", "add", TX_DEV, "type", "veth",
                "peer", "name", RX_DEV, "netns", self.rx,
            ]
        )  # fmt: skip
        run(["ip", "-n", self.tx, "addr", "add", f"{TX_ADDR}/{PREFIX_LEN}", "dev", TX_DEV])
        run(["ip", "-n", self.rx, "addr", "add", f"{RX_ADDR}/{PREFIX_LEN}", "dev", RX_DEV])
        for ns, dev in ((self.tx, TX_DEV), (self.rx, RX_DEV)):
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            run(["ip", "-n", ns, "link", "set", dev, "up"])
        run(self.exec_rx("ethtool", "-K", RX_DEV, "gro", "on"))
        run(self.exec_tx("ethtool", "-K", TX_DEV, "tso", "off", "gso", "off"))
        rx = parse_features(run(self.exec_rx("ethtool", "-k", RX_DEV)))
        tx = parse_features(run(self.exec_tx("ethtool", "-k", TX_DEV)))
        return {
            "gro": rx.get("generic-receive-offload") == "on",
            "sender_tso": tx.get("tcp-segmentation-offload") == "on",
            "sender_gso": tx.get("generic-segmentation-offload") == "on",
        }

    def set_threaded(self, on: bool) -> None:
        """Threaded NAPI of the receiving veth, written inside its namespace (sysfs shows a
        namespace's own devices)."""
        run(self.exec_rx("sh", "-c", f"echo {int(on)} > /sys/class/net/{RX_DEV}/threaded"))

    def threaded(self) -> bool:
        return run(self.exec_rx("cat", f"/sys/class/net/{RX_DEV}/threaded")).strip() == "1"

    def rmem_max(self) -> int:
        """``net.core.rmem_max`` as the receiving namespace sees it: recent kernels keep it per
        namespace, a new one taking the host's value, read-only inside it."""
        return int(run(self.exec_rx("cat", watchdog.sysctl_path("net.core.rmem_max"))))


def parse_features(text: str) -> dict[str, str]:
    """``ethtool -k``: each feature's state (``on``, ``off``, ``off [fixed]`` as ``off``)."""
    features = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if sep and rest.split():
            features[name.strip()] = rest.split()[0]
    return features


def tasks_named(match: Callable[[str], bool], proc: Path = Path("/proc")) -> dict[int, str]:
    """Every task (process or kernel thread) whose name ``match`` accepts, by pid."""
    found = {}
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            comm = Path(entry.path, "comm").read_text().strip()
        except OSError:
            continue
        if match(comm):
            found[int(entry.name)] = comm
    return found


def ksoftirqd_pids() -> dict[int, int]:
    """Each CPU's ksoftirqd thread, by CPU."""
    found = tasks_named(lambda c: re.fullmatch(r"ksoftirqd/[0-9]+", c) is not None)
    return {int(comm.split("/")[1]): pid for pid, comm in found.items()}


def napi_threads(before: set[int], timeout_s: float = 2.0) -> dict[int, str]:
    """The NAPI threads of the receiving veth (``napi/veth1-ID``) that were not there
    (``before``): those that threaded NAPI just made."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = {
            pid: comm
            for pid, comm in tasks_named(lambda c: c.startswith(f"napi/{RX_DEV}-")).items()
            if pid not in before
        }
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def pin(pid: int, core: int) -> None:
    run(["taskset", "-p", "-c", str(core), str(pid)])


def allowed_cpus(pid: int) -> str | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
    return m[1] if m else None
