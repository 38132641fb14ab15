"""The lab's load: sockperf's server as the receiving application and ``sockperf throughput``
as the paced sender, each in its namespace and pinned to its core; and the per-namespace and
per-thread counters read around a window.

Why sockperf: it paces with ``--mps`` by spinning on the clock between sends (one message per
period, no bursts), it runs for a given time and reports how many messages it sent, and it is
packaged by the distributions. Measured here (Linux 6.18, 2 vCPUs), it keeps 100,000 msg/s to
within 0.01 %; the lab measures the pacing at every point (:func:`pacing`). Its server reads
the socket with blocking ``recvfrom``, one datagram per call: a plain application.

A namespace's UDP counters are its own: they are read as ``/proc/PID/net/snmp`` of a process
inside it, the sender's for what was sent, the receiver's for what arrived and what the full
socket dropped, no command per reading.
"""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.ops.lab.netns import RX_ADDR, LabError, Topology, die_with_parent
from irqlab.ops.measure.counters import parse_snmp

PORT = 11111
#: How long the receiver may take to bind its socket, and the sender to start sending.
START_TIMEOUT_S = 5.0
#: The sender's reported totals after its run, and its exit, are awaited this long.
EXIT_TIMEOUT_S = 5.0
#: The sender's packets are counted every this many seconds in a window, for the pacing.
PACING_SAMPLE_S = 0.05


def read_text(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def udp_of(pid: int) -> dict[str, int]:
    """The UDP counters of the network namespace of process ``pid``."""
    text = read_text(f"/proc/{pid}/net/snmp")
    return parse_snmp(text) if text else {}


def sent_of(udp: dict[str, int]) -> int | None:
    """The datagrams the sending application handed to UDP: ``OutDatagrams`` plus
    ``SndbufErrors``. A datagram the device drops (veth's ring full: ``NET_XMIT_DROP``) is
    counted in ``SndbufErrors`` instead of ``OutDatagrams`` while ``sendto`` reports success
    (``udp_send_skb``), so the sum is what the sender sent."""
    if "OutDatagrams" not in udp:
        return None
    return udp["OutDatagrams"] + udp.get("SndbufErrors", 0)


def netdev_of(pid: int, dev: str) -> dict[str, int]:
    """``dev``'s packet counters in the namespace of ``pid`` (``/proc/PID/net/dev``)."""
    text = read_text(f"/proc/{pid}/net/dev") or ""
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if sep and name.strip() == dev:
            cols = [int(c) for c in rest.split() if c.isdigit()]
            if len(cols) >= 12:
                return {
                    "rx_packets": cols[1],
                    "rx_dropped": cols[3],
                    "tx_packets": cols[9],
                    "tx_dropped": cols[11],
                }
    return {}


def schedstat(pid: int) -> tuple[int, int] | None:
    """The time task ``pid`` has run on a CPU and has waited for one while runnable, in ns
    (``/proc/PID/schedstat``'s first two fields)."""
    fields = (read_text(f"/proc/{pid}/schedstat") or "").split()
    if len(fields) < 2 or not (fields[0].isdigit() and fields[1].isdigit()):
        return None
    return int(fields[0]), int(fields[1])


def _udp_bound(pid: int, port: int) -> bool:
    text = read_text(f"/proc/{pid}/net/udp") or ""
    want = f"{port:04X}"
    return any(
        line.split()[1].endswith(f":{want}") for line in text.splitlines()[1:] if line.split()
    )


@dataclass
class Receiver:
    """``sockperf server`` in the receiving namespace, pinned to the app's core."""

    topology: Topology
    core: int
    rcvbuf_bytes: int
    proc: subprocess.Popen[bytes] | None = None

    def argv(self) -> list[str]:
        return self.topology.exec_rx(
            "taskset", "-c", str(self.core),
            "sockperf", "server", "-i", RX_ADDR, "-p", str(PORT),
            "--buffer-size", str(self.rcvbuf_bytes), "--dontwarmup",
        )  # fmt: skip

    def start(self) -> int:
        """Starts it and waits for its socket; its pid."""
        self.proc = subprocess.Popen(
            self.argv(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        # its socket, seen from inside its namespace once `ip netns exec` became sockperf
        while not (
            (read_text(f"/proc/{self.proc.pid}/comm") or "").strip() == "sockperf"
            and _udp_bound(self.proc.pid, PORT)
        ):
            if self.proc.poll() is not None:
                raise LabError(
                    f"sockperf server exited at start (status {self.proc.returncode}): "
                    f"{' '.join(self.argv())}"
                )
            if time.monotonic() > deadline:
                raise LabError(f"sockperf server: no socket on port {PORT} after 5 s")
            time.sleep(0.02)
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(EXIT_TIMEOUT_S)


SENT_RE = re.compile(r"Total of ([0-9]+) messages sent in ([0-9.]+) sec")
RATE_RE = re.compile(r"Message Rate is ([0-9.]+) \[msg/sec\]")


def parse_sender(text: str) -> dict[str, float]:
    """sockperf throughput's totals: messages sent, over how long, and its rate."""
    found: dict[str, float] = {}
    if m := SENT_RE.search(text):
        found["messages"], found["seconds"] = float(m[1]), float(m[2])
    if m := RATE_RE.search(text):
        found["rate_pps"] = float(m[1])
    return found


@dataclass
class Sender:
    """``sockperf throughput`` in the sending namespace, pinned to the sender's core, at
    ``rate_pps`` for ``run_s`` whole seconds."""

    topology: Topology
    core: int
    size_bytes: int
    rate_pps: float
    run_s: int
    proc: subprocess.Popen[str] | None = None
    lines: list[str] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    _reader: threading.Thread | None = None

    def argv(self) -> list[str]:
        return self.topology.exec_tx(
            "taskset", "-c", str(self.core),
            "sockperf", "throughput", "-i", RX_ADDR, "-p", str(PORT),
            "-m", str(self.size_bytes), "--mps", str(round(self.rate_pps)),
            "-t", str(self.run_s), "--dontwarmup",
        )  # fmt: skip

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if len(self.lines) < 1000:
                self.lines.append(line)
            if "Starting test" in line:
                self.started.set()

    def start(self) -> int:
        """Starts it and waits until it sends; its pid."""
        self.proc = subprocess.Popen(
            self.argv(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=die_with_parent,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self.started.wait(START_TIMEOUT_S):
            self.stop()
            raise LabError(
                f"sockperf throughput did not start sending within {START_TIMEOUT_S:g} s: "
                + (" ".join(self.lines[-1:]).strip() or "no output")
            )
        return self.proc.pid

    def finish(self) -> dict[str, float]:
        """Waits for its end; its totals."""
        assert self.proc is not None
        try:
            self.proc.wait(self.run_s + EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.stop()
            raise LabError(f"sockperf throughput ran past its {self.run_s} s") from None
        self._close()
        totals = parse_sender("".join(self.lines))
        if self.proc.returncode != 0 or "messages" not in totals:
            raise LabError(
                f"sockperf throughput failed (status {self.proc.returncode}): "
                + (" ".join(self.lines[-2:]).strip() or "no output")
            )
        return totals

    def _close(self) -> None:
        if self._reader is not None:
            self._reader.join(EXIT_TIMEOUT_S)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(EXIT_TIMEOUT_S)
        self._close()


@dataclass
class Window:
    """What a point reads around its window besides the global counters: the namespaces' UDP
    and veth counters, each watched thread's CPU time, and the sender's count every
    :data:`PACING_SAMPLE_S` for its pacing. ``stopped``: the Ctrl-C or SIGTERM that ended the
    window early, to be raised again once the global counters are read."""

    sender_pid: int
    receiver_pid: int
    threads: dict[str, int]
    clock: Callable[[], float] = time.monotonic
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    samples: list[tuple[float, int]] = field(default_factory=list)
    window_s: float = 0.0
    stopped: KeyboardInterrupt | None = None

    def read(self) -> dict[str, Any]:
        sched = {name: schedstat(pid) for name, pid in self.threads.items()}
        # the receiving end first: a datagram is sent before it is received, so that the
        # sending end's counts, read after, are never below the receiving end's
        rx_udp = udp_of(self.receiver_pid)
        rx_dev = netdev_of(self.receiver_pid, "veth1")
        return {
            "tx_udp": udp_of(self.sender_pid),
            "rx_udp": rx_udp,
            "rx_dev": rx_dev,
            "tx_dev": netdev_of(self.sender_pid, "veth0"),
            "schedstat_ns": {name: s and s[0] for name, s in sched.items()},
            "schedwait_ns": {name: s and s[1] for name, s in sched.items()},
        }

    def sleep(self, seconds: float) -> None:
        """The window: counters read, ``seconds`` with the sender's count sampled, read
        again."""
        start = self.clock()
        self.before = self.read()
        try:
            end = start + seconds
            while (now := self.clock()) < end:
                out = sent_of(udp_of(self.sender_pid))
                if out is not None:
                    self.samples.append((now, out))
                time.sleep(min(PACING_SAMPLE_S, max(0.0, end - now)))
        except KeyboardInterrupt as e:
            self.stopped = e
        self.after = self.read()
        self.window_s = self.clock() - start


def pacing(samples: list[tuple[float, int]], requested_pps: float) -> dict[str, float | int | None]:
    """How well the sender kept its rate in the window: the achieved rate over the sampled
    span, its error against the request, and the spread of the rate from one sample interval
    to the next (coefficient of variation; the sampling's own jitter included)."""
    if len(samples) < 2:
        return {"achieved_pps": None, "error": None, "interval_cv": None, "intervals": 0}
    (t0, c0), (t1, c1) = samples[0], samples[-1]
    achieved = (c1 - c0) / (t1 - t0) if t1 > t0 else None
    rates = [
        (b - a) / (tb - ta) for (ta, a), (tb, b) in itertools.pairwise(samples) if tb - ta > 1e-4
    ]
    cv = None
    if len(rates) >= 2:
        mean = sum(rates) / len(rates)
        var = sum((r - mean) ** 2 for r in rates) / (len(rates) - 1)
        cv = math.sqrt(var) / mean if mean > 0 else None
    return {
        "achieved_pps": achieved,
        "error": None if achieved is None else achieved / requested_pps - 1,
        "interval_cv": cv,
        "intervals": len(rates),
    }
