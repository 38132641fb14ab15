"""Tracepoints over a window, aggregated in the kernel by bpftrace (:class:`TraceSession`).

One bpftrace script attaches to the receive path's tracepoints and keeps only maps —
``hist()``, ``count()``, ``sum()`` — that are read once, as JSON (``-f json``), when the window
ends: no event crosses to user space. What it records:

- ``hardirq_ns``: each hard IRQ's handler time (``irq:irq_handler_entry`` → ``_exit``), by
  IRQ, with the IRQ's name (from /proc/interrupts);
- ``net_rx``: per CPU, each NET_RX softirq's duration (``irq:softirq_entry`` → ``_exit``,
  ``vec`` 3), its total, the delay from its raise (``irq:softirq_raise``) to its run, and how
  many runs were in ksoftirqd (the current task is ``ksoftirqd/N``) and inline (the others:
  at the end of an interrupt or at ``local_bh_enable``);
- ``napi_poll``: per device, the packets each ``napi_poll`` processed (``napi:napi_poll``,
  ``work``): the polls (the histogram's count), the packets (its exact sum) and the polls
  that used their whole budget;
- ``app_wakeup_us``: when an application's name is given, the delay from its wake-up
  (``sched:sched_wakeup``) to its running (``sched:sched_switch``), in µs.

A histogram is bpftrace's log2 one turned into :func:`histogram`'s form. bpftrace is started
in its own process group, dies with the process that started it (``PR_SET_PDEATHSIG``), and is
killed on any way out of the context (Ctrl-C, an exception); tracefs is mounted at
``/sys/kernel/tracing`` when no tracing directory is, through irqlab's watchdog
(:mod:`irqlab.ops.watchdog`), which unmounts it however the session ends, SIGKILL included.

The probes' own cost is measured, not assumed: the kernel's BPF run-time statistics
(``BPF_ENABLE_STATS``, else ``kernel.bpf_stats_enabled``, put back afterwards) give each
program's ``run_time_ns`` and ``run_cnt`` (``/proc/PID/fdinfo`` of bpftrace's program file
descriptors), read at both ends of the window: ``"overhead"``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from irqlab.errors import ConfigError
from irqlab.ops.watchdog import TRACEFS, MountError, Watchdog, mounted, tracing_mounted

#: The format of distributions.json.
FORMAT = "irqlab-distributions"
FORMAT_VERSION = 1
#: NET_RX_SOFTIRQ in include/linux/interrupt.h.
NET_RX = 3
#: A task's name is at most 15 characters (TASK_COMM_LEN 16 with the NUL).
MAX_COMM = 15
#: The bound on bpftrace's start (parse, verify, attach) and on its final print.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
#: What bpftrace may print at all: the maps are a few kB; more is a fault, cut there.
MAX_OUTPUT_BYTES = 16 << 20

#: Set in bpftrace's environment, it says this on stderr once every probe is attached (its
#: own test suite's signal; bpftrace 0.12 and later).
ATTACHED_NOTICE = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"
#: The probes, in the order of the script (bpftrace loads their programs in that order).
PROBES = (
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_raise",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "napi:napi_poll",
    "sched:sched_wakeup",
    "sched:sched_switch",
)


class TraceError(Exception):
    """Tracing could not be done (no bpftrace, it failed or hung): one line saying why. The
    counters are still recorded."""


def check_app_comm(app_comm: str | None) -> str | None:
    """``app_comm`` if it can be a task's name in the script, else a one-line error."""
    if app_comm is None:
        return None
    if not re.fullmatch(r'[^\x00-\x1f\x7f"\\]{1,15}', app_comm):
        raise ConfigError(
            f"--app-comm {app_comm[:40]!r}: a task's name, 1 to {MAX_COMM} characters, "
            'no control character, " or \\',
            "app_comm",
        )
    return app_comm


def check_cpus(cpus: Iterable[int] | None) -> list[int] | None:
    """``cpus`` sorted, or a one-line error if one is not a CPU number."""
    if cpus is None:
        return None
    found = sorted(set(cpus))
    if not found or not all(isinstance(c, int) and 0 <= c < 8192 for c in found):
        raise ConfigError(f"cpus {found!r}: CPU numbers, 0 to 8191, at least one", "cpus")
    return found


def script(cpus: Sequence[int] | None = None, app_comm: str | None = None) -> str:
    """The bpftrace program: :data:`PROBES` in order, maps only. ``cpus`` restricts the IRQ,
    softirq and NAPI probes to those CPUs; without ``app_comm`` the sched probes do nothing
    but are still attached (so that their order stays :data:`PROBES`').

    Each map operation costs 100 to 200 ns on a VM, and the NET_RX probes run at every
    packet when each send polls one, so they do as few as they can: a slot is reset to 0
    rather than deleted, read once into a variable, and the counts that a histogram already
    has (NET_RX runs, polls) are not kept twice."""
    on = "" if cpus is None else "(" + " || ".join(f"cpu == {c}" for c in cpus) + ")"

    def where(*conds: str) -> str:
        conds = tuple(c for c in (on, *conds) if c)
        return f"/{' && '.join(conds)}/ " if conds else ""

    app = check_app_comm(app_comm)
    wake = f'args->comm == "{app}"' if app else "0"
    run = f'args->next_comm == "{app}"' if app else "0"
    return f"""\
tracepoint:irq:irq_handler_entry {where()}{{ @irq_start[cpu] = nsecs; }}
tracepoint:irq:irq_handler_exit {where()}{{
  $s = @irq_start[cpu];
  if ($s) {{ @hardirq_ns[args->irq] = hist(nsecs - $s); @irq_start[cpu] = 0; }}
}}
tracepoint:irq:softirq_raise {where(f"args->vec == {NET_RX}")}{{
  if (!@raised[cpu]) {{ @raised[cpu] = nsecs; }}
}}
tracepoint:irq:softirq_entry {where(f"args->vec == {NET_RX}")}{{
  $t = nsecs; @net_rx_start[cpu] = $t; $r = @raised[cpu];
  if ($r) {{ @net_rx_raise_ns[cpu] = hist($t - $r); @raised[cpu] = 0; }}
  if (strncmp(comm, "ksoftirqd/", 10) == 0) {{ @net_rx_ksoftirqd[cpu] = count(); }}
}}
tracepoint:irq:softirq_exit {where(f"args->vec == {NET_RX}")}{{
  $s = @net_rx_start[cpu];
  if ($s) {{
    $d = nsecs - $s; @net_rx_ns[cpu] = hist($d); @net_rx_total_ns[cpu] = sum($d);
    @net_rx_start[cpu] = 0;
  }}
}}
tracepoint:napi:napi_poll {where()}{{
  $dev = str(args->dev_name);
  @napi_work[$dev] = hist(args->work); @napi_packets[$dev] = sum(args->work);
  if (args->work == args->budget) {{ @napi_full[$dev] = count(); }}
}}
tracepoint:sched:sched_wakeup /{wake}/ {{ @woken[args->pid] = nsecs; }}
tracepoint:sched:sched_switch /{run}/ {{
  $w = @woken[args->next_pid];
  if ($w) {{
    @app_wakeup_us = hist((nsecs - $w) / 1000); delete(@woken[args->next_pid]);
  }}
}}
END {{ clear(@irq_start); clear(@raised); clear(@net_rx_start); clear(@woken); }}
"""


# -- bpftrace's output -----------------------------------------------------------------------


def histogram(buckets: Any, unit: str, total: int | None = None) -> dict[str, Any]:
    """bpftrace's log2 histogram (``[{"min": lo, "max": hi, "count": n}, …]``; the buckets
    are 0, 1, then [2^k, 2^(k+1)-1]) as ``{"unit", "buckets": {"LOWER": count, …},
    "count", "mean", "p50", "p99"}`` with only the buckets that counted, by lower bound
    ascending. ``mean`` is ``total / count`` when the exact ``total`` is known (and then
    ``"sum"`` is given), else each bucket's count at its middle; ``p50`` and ``p99`` are
    interpolated linearly inside their bucket: estimates, to a bucket's width. Values below 0
    (bpftrace's ``(..., 0)`` bucket) are counted in ``"negative"``."""
    rows: list[tuple[int, int, int]] = []
    negative = 0
    for b in buckets if isinstance(buckets, list) else []:
        if not isinstance(b, dict) or not isinstance(b.get("count"), int):
            continue
        lo, hi, n = b.get("min"), b.get("max"), b["count"]
        if not isinstance(lo, int) or lo < 0:
            negative += n
            continue
        if not isinstance(hi, int) or hi < lo:
            hi = max(2 * lo - 1, lo)
        if n > 0:
            rows.append((lo, hi, n))
    rows.sort()
    count = sum(n for _, _, n in rows)
    out: dict[str, Any] = {
        "unit": unit,
        "buckets": {str(lo): n for lo, _, n in rows},
        "count": count,
    }
    if total is not None:
        out["sum"] = total
    if count:
        if total is not None:
            out["mean"] = total / count
        else:
            out["mean"] = sum(n * (lo + hi) / 2 for lo, hi, n in rows) / count
        out["p50"] = _quantile(rows, count, 0.50)
        out["p99"] = _quantile(rows, count, 0.99)
    else:
        out["mean"] = out["p50"] = out["p99"] = None
    if negative:
        out["negative"] = negative
    return out


def _quantile(rows: list[tuple[int, int, int]], count: int, q: float) -> float:
    """The ``q`` quantile, interpolated inside its bucket [lo, hi + 1) (exact for a bucket of
    one value)."""
    target = q * count
    seen = 0
    for lo, hi, n in rows:
        if seen + n >= target:
            if hi == lo:
                return float(lo)
            return lo + (hi + 1 - lo) * (target - seen) / n
        seen += n
    return float(rows[-1][1])


def parse_output(text: str) -> dict[str, Any]:
    """bpftrace's ``-f json`` lines as ``{"@map": data}``; a line that is not a JSON object
    with ``type`` and ``data`` (a blank, a message) is skipped."""
    maps: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or record.get("type") not in ("map", "hist", "lhist"):
            continue
        data = record.get("data")
        if isinstance(data, dict):
            maps.update(data)
    return maps


def _ints(value: Any) -> dict[str, int]:
    """A map of counts or sums, keys as text, the entries that are not ints dropped."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int)}


def _by_key(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _sorted(d: dict[str, Any]) -> dict[str, Any]:
    """Keyed by number (an IRQ, a CPU) ascending; any other key after them."""

    def order(key: str) -> tuple[bool, int, str]:
        return (not key.isdigit(), int(key) if key.isdigit() else 0, key)

    return {k: d[k] for k in sorted(d, key=order)}


def distributions(
    maps: dict[str, Any], app_comm: str | None = None, irq_names: dict[str, str] | None = None
) -> dict[str, Any]:
    """The maps :func:`parse_output` read, in distributions.json's form (docs/measure.md).
    Each IRQ's name is ``irq_names``' (/proc/interrupts), else an ``@irq_name`` map's."""
    names = maps.get("@irq_name", {})
    names = {**(names if isinstance(names, dict) else {}), **(irq_names or {})}
    hardirq = {
        irq: {"name": names.get(irq), **histogram(h, "ns")}
        for irq, h in _by_key(maps.get("@hardirq_ns")).items()
    }
    totals = _ints(maps.get("@net_rx_total_ns"))
    in_ksoftirqd = _ints(maps.get("@net_rx_ksoftirqd"))
    durations = _by_key(maps.get("@net_rx_ns"))
    raises = _by_key(maps.get("@net_rx_raise_ns"))
    net_rx = {}
    for cpu in set(durations) | set(in_ksoftirqd) | set(raises):
        duration = histogram(durations.get(cpu), "ns", totals.get(cpu))
        k = in_ksoftirqd.get(cpu, 0)
        net_rx[cpu] = {
            "runs": {"inline": max(duration["count"] - k, 0), "ksoftirqd": k},
            "duration_ns": duration,
            "raise_to_run_ns": histogram(raises.get(cpu), "ns"),
        }
    packets, full = _ints(maps.get("@napi_packets")), _ints(maps.get("@napi_full"))
    work = _by_key(maps.get("@napi_work"))
    napi = {}
    for dev in sorted(work):
        per_poll = histogram(work[dev], "packets", packets.get(dev, 0))
        napi[dev] = {
            "polls": per_poll["count"],
            "packets": per_poll["sum"],
            "full_budget": full.get(dev, 0),
            "packets_per_poll": per_poll,
        }
    wakeup = maps.get("@app_wakeup_us")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "hardirq_ns": _sorted(hardirq),
        "net_rx": _sorted(net_rx),
        "napi_poll": napi,
        "app_comm": app_comm,
        "app_wakeup_us": histogram(wakeup, "us") if app_comm is not None else None,
    }


# -- the probes' cost ------------------------------------------------------------------------


def read_prog_stats(pid: int) -> list[dict[str, int]]:
    """The BPF tracepoint programs (``prog_type`` 5) that process ``pid`` holds, from
    ``/proc/PID/fdinfo``, by ``prog_id`` ascending (the order they were loaded): each with
    ``prog_id``, ``run_time_ns`` and ``run_cnt``."""
    progs = []
    base = Path(f"/proc/{pid}/fdinfo")
    try:
        fds = list(base.iterdir())
    except OSError:
        return []
    for fd in fds:
        try:
            text = fd.read_text()
        except OSError:
            continue
        fields = dict(re.findall(r"^(\w+):\s+(\S+)$", text, re.MULTILINE))
        if fields.get("prog_type") != "5" or "run_time_ns" not in fields:
            continue
        try:
            progs.append({k: int(fields[k]) for k in ("prog_id", "run_time_ns", "run_cnt")})
        except (KeyError, ValueError):
            continue
    return sorted(progs, key=lambda p: p["prog_id"])


def _cpu_seconds(pid: int) -> float | None:
    """User and system time of ``pid`` so far (/proc/PID/stat), in seconds."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


def overhead(
    before: list[dict[str, int]],
    after: list[dict[str, int]],
    window_s: float,
    cpus: int,
    *,
    stats: str,
    bpftrace_cpu_s: float | None = None,
) -> dict[str, Any]:
    """Each probe's events, run time and ns per event over the window (the deltas of
    :func:`read_prog_stats` taken at its two ends, matched to :data:`PROBES` by load order),
    and the share of all CPUs' time the probes took."""
    start = {p["prog_id"]: p for p in before}
    probes: dict[str, Any] = {}
    total = 0
    named = len(after) == len(PROBES)
    for i, p in enumerate(after):
        p0 = start.get(p["prog_id"], {"run_time_ns": 0, "run_cnt": 0})
        ns, n = p["run_time_ns"] - p0["run_time_ns"], p["run_cnt"] - p0["run_cnt"]
        total += ns
        name = PROBES[i] if named else f"program {p['prog_id']}"
        probes[name] = {"events": n, "run_time_ns": ns, "ns_per_event": ns / n if n else None}
    return {
        "source": stats,
        "window_s": window_s,
        "cpus": cpus,
        "probes": probes,
        "run_time_ns": total,
        "cpu_share": total / (window_s * 1e9 * cpus) if window_s > 0 and cpus else None,
        "bpftrace_cpu_s": bpftrace_cpu_s,
        "note": "the BPF programs' run time only: each event's tracepoint dispatch is not "
        "in it; compare the load's packets/s with and without tracing for the whole cost",
    }


#: bpf(2)'s number where irqlab knows it; BPF_ENABLE_STATS is command 32, BPF_STATS_RUN_TIME 0.
_SYS_BPF = {"x86_64": 321, "aarch64": 280}
_BPF_ENABLE_STATS = 32


def _enable_stats_fd() -> int | None:
    """A file descriptor that keeps the kernel's BPF run-time statistics on while it is open
    (the kernel drops it when this process ends, however it ends); None where it cannot."""
    nr = _SYS_BPF.get(platform.machine())
    if nr is None:
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        attr = ctypes.create_string_buffer(8)  # enable_stats.type = BPF_STATS_RUN_TIME (0)
        fd = int(libc.syscall(nr, _BPF_ENABLE_STATS, attr, 8))
    except (OSError, AttributeError):
        return None
    return fd if fd >= 0 else None


# -- the session -----------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In bpftrace's child, before exec: SIGKILL when irqlab ends (PR_SET_PDEATHSIG)."""
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # irqlab ended before the prctl
        os._exit(1)


def _irq_names() -> dict[str, str]:
    """Each IRQ's name as /proc/interrupts gives it (its handlers' names): the probes do not
    copy it, which would cost a string copy per interrupt."""
    from irqlab.ops.probe.parsers import parse_interrupts

    try:
        text = Path("/proc/interrupts").read_text()
    except OSError:
        return {}
    return {str(irq): name for irq, name in parse_interrupts(text).names.items()}


def _first_error(stderr: str) -> str:
    """bpftrace's first line that says why it stopped (not its RLIMIT_MEMLOCK notice)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    useful = [ln for ln in lines if "RLIMIT_MEMLOCK" not in ln]
    line = (useful or lines or ["no message"])[0]
    return line[:200]


class TraceSession:
    """bpftrace attached to the receive path's tracepoints over a window.

    ``with TraceSession(app_comm="sockperf") as t: t.start(); …; d = t.stop()`` — ``start``
    returns once every probe is attached (:class:`TraceError` if bpftrace is missing, fails,
    or takes more than ``start_timeout_s``); ``stop`` returns :func:`distributions` with
    ``"window_s"``, ``"tool"`` and ``"overhead"``. Leaving the context always kills bpftrace
    (if still running), puts the BPF statistics back, and unmounts tracefs if it mounted it;
    if the process is killed instead, bpftrace dies with it and the watchdog the session
    mounted tracefs through unmounts it.
    """

    def __init__(
        self,
        cpus: Iterable[int] | None = None,
        app_comm: str | None = None,
        *,
        bpftrace: str | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.cpus = check_cpus(cpus)
        self.app_comm = check_app_comm(app_comm)
        self.bpftrace = bpftrace or shutil.which("bpftrace")
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.mounted = False
        #: The watchdog tracefs was mounted through (None while it was not mounted here).
        self.watchdog: Watchdog | None = None
        self.notes: list[str] = []
        self._stats_fd: int | None = None
        self._old_sysctl: str | None = None
        self._stats = ""
        self._out = bytearray()
        self._err = bytearray()
        self._t0 = 0.0
        self._progs0: list[dict[str, int]] = []
        self._cpu0: float | None = None

    def __enter__(self) -> TraceSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has been called (a session starts once)."""
        return self.proc is not None

    def start(self) -> None:
        """Starts bpftrace and returns once its probes are attached."""
        if self.proc is not None:
            raise TraceError("tracing already started")
        if os.geteuid() != 0:
            raise TraceError("not root (tracepoints need root)")
        if self.bpftrace is None:
            raise TraceError("bpftrace not found (install it: apt-get install bpftrace)")
        try:
            self._mount()
            self._enable_stats()
            self.proc = subprocess.Popen(
                [self.bpftrace, "-f", "json", "-e", script(self.cpus, self.app_comm)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                env={**os.environ, "LC_ALL": "C", ATTACHED_NOTICE: "1"},
            )
            self._wait_attached()
        except BaseException:
            self.close()
            raise
        self._t0 = time.monotonic()
        self._progs0 = read_prog_stats(self.proc.pid)
        self._cpu0 = _cpu_seconds(self.proc.pid)

    def _mount(self) -> None:
        """Mounts tracefs when no tracing directory is mounted, through a watchdog that
        unmounts it however irqlab ends (SIGKILL too)."""
        if tracing_mounted():
            return
        self.watchdog = Watchdog().start()
        try:
            self.mounted = self.watchdog.mount_tracefs()
        except MountError as e:
            raise TraceError(f"cannot mount tracefs at {TRACEFS}: {e}") from None

    def _enable_stats(self) -> None:
        self._stats_fd = _enable_stats_fd()
        if self._stats_fd is not None:
            self._stats = "BPF_ENABLE_STATS (run_time_ns, run_cnt of each program)"
            return
        sysctl = Path("/proc/sys/kernel/bpf_stats_enabled")
        try:
            self._old_sysctl = sysctl.read_text().strip()
            sysctl.write_text("1")
            self._stats = "kernel.bpf_stats_enabled (run_time_ns, run_cnt of each program)"
        except OSError:
            self._old_sysctl = None
            self._stats = "not available (no BPF run-time statistics)"

    def _attached(self) -> bool:
        """bpftrace's probes are all attached: it said so on stderr (``ATTACHED_NOTICE``),
        or, where it does not, it announced them (``attached_probes``, which it prints
        *before* attaching) and holds a program and a perf event for each."""
        assert self.proc is not None
        if ATTACHED_NOTICE.encode() in self._err:
            return True
        if b'"attached_probes"' not in self._out:
            return False
        if len(read_prog_stats(self.proc.pid)) < len(PROBES):
            return False
        try:
            links = [os.readlink(p) for p in Path(f"/proc/{self.proc.pid}/fd").iterdir()]
        except OSError:
            return False
        return sum(link == "anon_inode:[perf_event]" for link in links) >= len(PROBES)

    def _wait_attached(self) -> None:
        """Reads bpftrace's output until its probes are attached (:meth:`_attached`)."""
        assert self.proc is not None and self.proc.stdout and self.proc.stderr
        deadline = time.monotonic() + self.start_timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ, self._out)
            sel.register(self.proc.stderr, selectors.EVENT_READ, self._err)
            while not self._attached():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TraceError(
                        f"bpftrace did not attach its probes within {self.start_timeout_s:g} s"
                    )
                if not sel.get_map():
                    break
                for key, _ in sel.select(min(left, 0.05)):
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        key.data.extend(chunk)
                    else:
                        sel.unregister(key.fileobj)
                if len(self._out) + len(self._err) > MAX_OUTPUT_BYTES:
                    raise TraceError("bpftrace printed too much before attaching")
        if not self._attached():
            self.proc.wait(timeout=STOP_TIMEOUT_S)
            raise TraceError(
                f"bpftrace failed (exit {self.proc.returncode}): "
                f"{_first_error(self._err.decode(errors='replace'))}"
            )

    def stop(self) -> dict[str, Any]:
        """Ends the window: reads the probes' cost, has bpftrace print its maps, and returns
        the distributions with ``"overhead"``."""
        if self.proc is None or self.proc.poll() is not None:
            raise TraceError("tracing is not running (bpftrace ended early)")
        window = time.monotonic() - self._t0
        progs = read_prog_stats(self.proc.pid)
        cpu1 = _cpu_seconds(self.proc.pid)
        self._drain_after_sigint()
        text = self._out.decode(errors="replace")
        maps = parse_output(text)
        result = distributions(maps, self.app_comm, _irq_names())
        result["window_s"] = window
        result["cpus"] = self.cpus
        result["tool"] = self.version()
        result["overhead"] = overhead(
            self._progs0,
            progs,
            window,
            os.cpu_count() or 1,
            stats=self._stats,
            bpftrace_cpu_s=None if cpu1 is None or self._cpu0 is None else cpu1 - self._cpu0,
        )
        return result

    def _drain_after_sigint(self) -> None:
        """Sends bpftrace SIGINT and reads what it prints until it ends. bpftrace (0.17 here)
        now and then misses a SIGINT and polls on: while it has printed nothing, the signal is
        sent again each second; bounded by ``STOP_TIMEOUT_S``."""
        assert self.proc is not None and self.proc.stdout and self.proc.stderr
        deadline = time.monotonic() + STOP_TIMEOUT_S
        printed = len(self._out)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ, self._out)
            sel.register(self.proc.stderr, selectors.EVENT_READ, self._err)
            while sel.get_map():
                if len(self._out) == printed:
                    self.proc.send_signal(signal.SIGINT)
                left = deadline - time.monotonic()
                if left <= 0 or len(self._out) + len(self._err) > MAX_OUTPUT_BYTES:
                    self._kill()
                    raise TraceError(f"bpftrace did not print its maps within {STOP_TIMEOUT_S:g} s")
                for key, _ in sel.select(min(left, 1.0)):
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        key.data.extend(chunk)
                    else:
                        sel.unregister(key.fileobj)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
        self._kill()  # reaps it, or kills it if it lingers; closes the pipes

    def version(self) -> str:
        """``bpftrace vX.Y.Z``, as it says."""
        if self.bpftrace is None:
            return "bpftrace"
        try:
            r = subprocess.run(
                [self.bpftrace, "--version"], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return "bpftrace"
        return r.stdout.strip()[:64] or "bpftrace"

    def _kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()

    def close(self) -> None:
        """Kills bpftrace if it still runs, puts the statistics switch back, and unmounts
        tracefs if :meth:`start` mounted it. Safe to call more than once."""
        try:
            self._kill()
        finally:
            if self._stats_fd is not None:
                os.close(self._stats_fd)
                self._stats_fd = None
            if self._old_sysctl is not None:
                with contextlib.suppress(OSError):
                    Path("/proc/sys/kernel/bpf_stats_enabled").write_text(self._old_sysctl)
                self._old_sysctl = None
            if self.watchdog is not None:
                self.watchdog.release()  # unmounts tracefs if mounted here
                self.watchdog = None
            if self.mounted and mounted(TRACEFS):
                self.notes.append(f"tracefs left mounted at {TRACEFS}")
            self.mounted = False
