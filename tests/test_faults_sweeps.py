"""The sweep machinery under faults, run as a user runs it: a subprocess `irqlab sweep`, real
signals, real damaged files, a real Dask scheduler. Each test asserts what the user sees (one
clear line, the exit status, never a traceback), that no process is left behind, and that
what finished is kept: rerunning the command gives the table of an uninterrupted sweep.

Fault classes: sweeps too big to expand; processes orphaned by a killed sweep, and Ctrl-C;
damaged results folders and a different sweep run into one; an axis given twice; a lost Dask
scheduler or worker; a base that is a sweep file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import irqlab
from irqlab.experiments import MAX_POINTS, MAX_RUNS, parse_sweep
from irqlab.experiments.executors import ProcessExecutor

#: Real processes and files, each test seconds long: outside the quick check (-m 'not slow').
pytestmark = pytest.mark.slow

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc, which only Linux has"
)

#: 8 runs of 0.3 s or more each (3 to 12 M packets): a sweep of them is still running when a
#: test acts on its first finished run.
BUSY = (
    "[sweep]\nreplications = 2\nseed = 3\n"
    '[base]\nscheme = "napi"\nrun.duration_ms = 30_000\nrun.warmup_ms = 0\n'
    "[axes]\n'traffic.rate_pps' = {from = 100_000, to = 400_000, step = 100_000}\n"
)
#: 1500 runs of well under a millisecond: the workers mostly wait for work.
IDLE = (
    "[sweep]\nreplications = 1\nseed = 3\n"
    '[base]\nscheme = "ideal"\nrun.duration_ms = 0.01\nrun.warmup_ms = 0\n'
    "[axes]\n'traffic.rate_pps' = {from = 1_000, to = 1_500_000, step = 1_000}\n"
)
#: A small sweep that finishes in a second.
SMALL = (
    "[sweep]\nreplications = 3\nseed = 5\n"
    '[base]\nscheme = "napi"\nrun.duration_ms = 5\nrun.warmup_ms = 1\n'
    "[axes]\n'traffic.rate_pps' = {from = 20_000, to = 240_000, step = 20_000}\n"
)


def write(folder: Path, text: str, name: str = "s.toml") -> Path:
    f = folder / name
    f.write_text(text)
    return f


def cli(*args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`irqlab ARGS` in a subprocess, as a user runs it."""
    cmd = [sys.executable, "-m", "irqlab.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def start(*args: object, stderr: object = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """`irqlab ARGS` in a subprocess of its own session (its own process group)."""
    cmd = [sys.executable, "-m", "irqlab.cli", *map(str, args)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)


def one_clear_line(err: str, *needles: str) -> str:
    """The user saw one line starting ``irqlab:``, containing every needle, no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("irqlab:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def journal_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for_rows(journal: Path, n: int, proc: subprocess.Popen[bytes], limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while journal_rows(journal) < n:
        assert proc.poll() is None, "the sweep ended before it was interrupted"
        assert time.monotonic() < deadline, "the sweep did not start"
        time.sleep(0.02)


def group(pgid: int) -> list[str]:
    """The live processes of a process group, as 'pid command'."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            found.append(f"{entry.name} {cmdline[:100]}")
    return found


def gone(pgid: int, limit: float = 30) -> list[str]:
    """Waits up to ``limit`` seconds for the group to empty; what is left."""
    deadline = time.monotonic() + limit
    while (left := group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """Ends what a test started and left running (its own process group), whatever happened."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def clean_table(sweep_file: Path, folder: Path) -> pd.DataFrame:
    return irqlab.sweep(sweep_file, out=folder, executor="inline")


# --- 4. sweeps too big to expand ------------------------------------------------------------


def _rss_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


@linux_only
def test_a_sweep_of_a_billion_points_is_refused_at_once_in_little_memory(tmp_path):
    f = write(
        tmp_path,
        '[base]\nscheme = "ideal"\n[axes]\n'
        '"traffic.rate_pps" = { from = 1, to = 100_000, step = 1 }\n'
        '"nic.itr_us" = { from = 1, to = 100, step = 1 }\n'
        '"nic.ring_descriptors" = { from = 64, to = 6400, step = 64 }\n',
    )
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as o, err.open("w") as e:
        cmd = [sys.executable, "-m", "irqlab.cli", "sweep", str(f), "--out", str(tmp_path / "r")]
        proc = subprocess.Popen(cmd, stdout=o, stderr=e, start_new_session=True)
    try:
        deadline, peak = time.monotonic() + 60, 0
        while True:
            peak = max(peak, _rss_mb(proc.pid))
            assert peak < 1000, f"the sweep took {peak} MB before it was refused"
            assert time.monotonic() < deadline, "the sweep was not refused within a minute"
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        end_group(proc)
    # MB, the whole life of the process: about 180 MB alone (the imports); once 550 MB in a full
    # run of the suite. Expanding the sweep took 11 GB within 40 s.
    assert usage.ru_maxrss / 1024 < 1000
    assert proc.returncode == 2
    one_clear_line(
        err.read_text(), "1,000,000,000 points", f"at most {MAX_POINTS:,} points per sweep"
    )
    assert not (tmp_path / "r").exists()


def test_runs_are_counted_with_their_replications_and_the_precision_cap(tmp_path):
    n = MAX_RUNS // 50 + 1  # points
    axes = {"traffic.rate_pps": {"from": 1, "to": n, "step": 1}}
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(base={"scheme": "ideal"}, axes=axes, replications=50, executor="inline")
    assert f"{n:,} points × 50 replications" in str(e.value)
    assert f"at most {MAX_RUNS:,} runs" in str(e.value)
    with pytest.raises(irqlab.ConfigError, match=r"sweep\.precision\.max_replications"):
        irqlab.sweep(
            base={"scheme": "ideal"},
            axes=axes,
            replications=2,
            precision={"metrics": ["latency_us.mean"], "max_replications": 100},
            executor="inline",
        )


def test_an_axis_range_of_too_many_values_is_refused_not_overflowed(tmp_path):
    for spec in ("{from = -1e308, to = 1e308, step = 1}", "{from = 0, to = 1e300, step = 1e-300}"):
        f = write(tmp_path, f"[axes]\n'traffic.rate_pps' = {spec}\n")
        with pytest.raises(irqlab.ConfigError, match="values; at most 100,000 per axis"):
            parse_sweep(f)


def test_points_are_computed_on_demand():
    spec = parse_sweep(
        {
            "axes": {
                "traffic.rate_pps": {"from": 1, "to": 100_000, "step": 1},
                "nic.itr_us": {"from": 1, "to": 100, "step": 1},
                "nic.ring_descriptors": {"from": 64, "to": 6400, "step": 64},
            }
        }
    )
    points = spec.points()  # a billion: never expanded
    assert spec.count() == len(points) == 1_000_000_000
    assert points[0]["traffic.rate_pps"] == 1 and points[0]["nic.ring_descriptors"] == 64
    last = points[-1]
    assert (last["traffic.rate_pps"], last["nic.itr_us"], last["nic.ring_descriptors"]) == (
        100_000,
        100,
        6400,
    )
    assert points[101]["nic.itr_us"] == 2 and points[101]["nic.ring_descriptors"] == 128


def _slow_identity(x: int) -> int:
    time.sleep(0.05)
    return x


def test_the_pool_takes_tasks_only_as_workers_free_up():
    taken = []

    def tasks() -> Iterator[int]:
        for i in range(40):
            taken.append(i)
            yield i

    with ProcessExecutor(2) as pool:
        results = pool.imap_unordered(_slow_identity, tasks())
        first = next(results)
        assert len(taken) <= 2 * 2 + 2  # the window, refilled once
        rest = list(results)
    assert sorted(r for _, r in [first, *rest]) == list(range(40))


@linux_only
@pytest.mark.slow
def test_a_sweep_of_the_most_points_runs_in_bounded_memory(tmp_path):
    # 100,000 points: each is checked before anything runs, none is kept expanded
    f = write(
        tmp_path,
        '[sweep]\nreplications = 1\n[base]\nscheme = "ideal"\nrun.duration_ms = 0.01\n'
        "run.warmup_ms = 0\n[axes]\n'traffic.rate_pps' = {from = 1, to = 100_000, step = 1}\n",
    )
    folder = tmp_path / "r"
    proc = start("sweep", f, "--out", folder, "--workers", "2", "--no-progress")
    try:
        peak, deadline = 0, time.monotonic() + 180
        while journal_rows(folder / "journal.sqlite") < 2000:
            peak = max(peak, _rss_mb(proc.pid))
            assert peak < 600, f"the sweep holds {peak} MB"
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        peak = max(peak, _rss_mb(proc.pid))
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        end_group(proc)
    assert peak < 400, f"the sweep holds {peak} MB"
    assert proc.returncode == 130
    one_clear_line(err.decode(), "interrupted")


# --- 5. no orphan processes; Ctrl-C ---------------------------------------------------------


@linux_only
@pytest.mark.parametrize(
    ("load", "executor"), [("busy", "process"), ("idle", "process"), ("busy", "dask")]
)
def test_a_sweep_killed_alone_leaves_no_process_behind(tmp_path, load, executor):
    f = write(tmp_path, BUSY if load == "busy" else IDLE)
    folder = tmp_path / "r"
    args = ("--workers", "2", "--executor", executor, "--no-progress")
    proc = start("sweep", f, "--out", folder, *args)
    try:
        wait_for_rows(folder / "journal.sqlite", 1, proc)
        assert len(group(proc.pid)) >= 3  # the sweep, its forkserver or nannies, its workers
        os.kill(proc.pid, signal.SIGKILL)  # the main process alone
        proc.wait(timeout=30)
        left = gone(proc.pid)
        assert not left, f"left behind: {left}"
    finally:
        end_group(proc)
        proc.stderr.close()


#: A program that keeps two pool workers busy for ten minutes with the start method argv[1];
#: each worker prints its pid when it starts its task.
BUSY_POOL = """
import os, sys, threading, time
from irqlab.experiments.executors import ProcessExecutor


def nap(seconds):
    # one write: two workers' lines must not interleave on the shared pipe
    os.write(1, f"{os.getpid()}\\n".encode())
    time.sleep(seconds)


if __name__ == "__main__":
    pool = ProcessExecutor(2, method=sys.argv[1])
    results = pool.imap_unordered(nap, [600, 600])
    threading.Thread(target=lambda: next(results), daemon=True).start()
    time.sleep(600)
"""


@linux_only
@pytest.mark.parametrize("method", ["forkserver", "spawn", "fork"])
def test_pool_workers_die_with_their_parent_whatever_the_start_method(tmp_path, method):
    program = write(tmp_path, BUSY_POOL, "pool.py")
    cmd = [sys.executable, str(program), method]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        workers = [proc.stdout.readline().strip() for _ in range(2)]  # both running tasks
        assert {line.split()[0] for line in group(proc.pid)} >= set(workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        left = gone(proc.pid)
        assert not left, f"left behind: {left}"
    finally:
        end_group(proc)
        proc.stdout.close()


def children(pid: int) -> list[int]:
    """The pids of the live children of process ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@linux_only
def test_a_killed_pool_worker_ends_the_sweep_clearly_and_it_resumes(tmp_path):
    # as the kernel's out-of-memory killer would: one worker, SIGKILL
    f = write(tmp_path, BUSY)
    folder = tmp_path / "r"
    proc = start("sweep", f, "--out", folder, "--workers", "2", "--no-progress")
    try:
        wait_for_rows(folder / "journal.sqlite", 1, proc)
        # the sweep's children are its forkserver (and resource tracker); theirs, the workers
        workers = [w for c in children(proc.pid) for w in children(c)]
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        left = gone(proc.pid)
    finally:
        end_group(proc)
    assert proc.returncode == 1
    one_clear_line(err.decode(), "a worker process died", "finished so far, kept in", "resume")
    assert not left, f"left behind: {left}"
    assert 1 <= journal_rows(folder / "journal.sqlite") < 8
    resumed = cli("sweep", f, "--out", folder, "--workers", "2", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    runs = pd.read_parquet(folder / "runs.parquet")
    assert sorted(zip(runs["point"], runs["replication"], strict=True)) == [
        (p, r) for p in range(4) for r in range(2)
    ]


@linux_only
@pytest.mark.parametrize(
    ("load", "executor"), [("busy", "process"), ("idle", "process"), ("busy", "dask")]
)
def test_ctrl_c_stops_a_sweep_cleanly_and_keeps_its_runs(tmp_path, load, executor):
    text = BUSY if load == "busy" else IDLE
    f = write(tmp_path, text)
    folder = tmp_path / "r"
    total = 8 if load == "busy" else 1500
    args = ("sweep", f, "--out", folder, "--workers", "2", "--executor", executor)
    proc = start(*args, "--no-progress")
    try:
        wait_for_rows(folder / "journal.sqlite", 1, proc)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        _, err = proc.communicate(timeout=60)
        left = gone(proc.pid)
    finally:
        end_group(proc)
    assert proc.returncode == 130
    one_clear_line(err.decode(), "interrupted", str(folder), "resumes")
    assert not left, f"left behind: {left}"
    kept = journal_rows(folder / "journal.sqlite")
    assert 1 <= kept < total
    resumed = cli(*args[:-2], "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    runs = pd.read_parquet(folder / "runs.parquet")
    pd.testing.assert_frame_equal(runs, clean_table(f, tmp_path / "clean"), check_exact=True)


@linux_only
@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_sigterm_stops_a_sweep_as_ctrl_c_does(tmp_path, command):
    """``kill PID`` (SIGTERM, to the main process only): the workers are released, the
    finished runs kept, one line and status 143; no leaked semaphore is left to the resource
    tracker (it used to warn of five)."""
    folder = tmp_path / "r"
    if command == "sweep":
        args = ("sweep", write(tmp_path, BUSY), "--out", folder, "--workers", "2")
    else:
        args = ("reproduce", "salah2007", "--out", folder, "--workers", "2")
    proc = start(*args, "--no-progress")
    try:
        journals = lambda: sorted(folder.rglob("journal.sqlite"))  # noqa: E731
        deadline = time.monotonic() + 120
        while not (journals() and journal_rows(journals()[0]) >= 1):
            assert proc.poll() is None and time.monotonic() < deadline, "no run finished"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        left = gone(proc.pid)
    finally:
        end_group(proc)
    assert proc.returncode == 143, err.decode()
    assert "leaked" not in err.decode() and "Traceback" not in err.decode(), err.decode()
    assert "irqlab: terminated" in err.decode()
    assert not left, f"left behind: {left}"


# --- 6. damaged results folders; another sweep in the same folder ----------------------------


@pytest.fixture
def finished(tmp_path) -> tuple[Path, Path, pd.DataFrame]:
    """A finished sweep: its file, its folder, its runs table."""
    f = write(tmp_path, SMALL)
    folder = tmp_path / "r"
    return f, folder, clean_table(f, folder)


def _cut(path: Path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_journal_gives_up_what_it_still_holds(finished, damage):
    f, folder, table = finished
    journal = folder / "journal.sqlite"
    if damage == "truncated":
        _cut(journal, 0.6)
    else:
        data = bytearray(journal.read_bytes())
        data[len(data) // 3 : len(data) // 3 + 8000] = os.urandom(8000)
        journal.write_bytes(bytes(data))
    (folder / "runs.parquet").unlink()
    r = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline")
    assert r.returncode == 0, r.stderr
    line = one_clear_line(r.stderr, "warning", "was damaged", "journal.sqlite.damaged")
    recovered = int(line.split("recovered ")[1].split()[0])
    assert 0 < recovered < len(table), line
    assert (folder / "journal.sqlite.damaged").exists()
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "runs.parquet"), table)
    assert journal_rows(journal) == len(table)


def test_a_damaged_row_in_a_sound_journal_runs_again(finished):
    # The file's structure is intact (SQLite's check passes); one row's text is not JSON.
    f, folder, table = finished
    journal = folder / "journal.sqlite"
    data = bytearray(journal.read_bytes())
    at = data.index(b'"latency_us.mean": ') + len(b'"latency_us.mean": ')
    data[at : at + 4] = b"@@@@"
    journal.write_bytes(bytes(data))
    r = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline")
    assert r.returncode == 0, r.stderr
    one_clear_line(r.stderr, "warning", "1 run found damaged there; running again")
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "runs.parquet"), table)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"\x00garbage" * 600, "damaged beyond repair"),
        (b"a sweep of my own\n", "damaged beyond repair"),
        ("foreign", "not a sweep's journal"),
    ],
)
def test_a_journal_that_cannot_be_read_is_named_with_what_to_do(finished, content, needle):
    f, folder, table = finished
    journal = folder / "journal.sqlite"
    journal.unlink()
    if content == "foreign":
        with sqlite3.connect(journal) as db:
            db.execute("CREATE TABLE runs (id INTEGER, payload BLOB)")
    else:
        journal.write_bytes(content)
    r = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline")
    assert r.returncode == 2
    one_clear_line(r.stderr, str(journal), needle, "--fresh")
    fresh = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline", "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "runs.parquet"), table)


def test_a_truncated_runs_table_is_named_and_rewritten_from_the_journal(finished):
    f, folder, table = finished
    _cut(folder / "runs.parquet", 0.5)
    r = cli("rerun", folder, "--point", "1")
    assert r.returncode == 2
    one_clear_line(r.stderr, "runs.parquet: damaged", "rewrites it from the journal")
    again = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline")
    assert again.returncode == 0, again.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(folder / "runs.parquet"), table)
    assert cli("rerun", folder, "--point", "1").returncode == 0


@pytest.mark.parametrize("name", ["summary.parquet", "summary.csv"])
def test_a_damaged_summary_is_named_by_plot(finished, name):
    _, folder, _ = finished
    if name == "summary.csv":
        (folder / "summary.parquet").unlink()
    _cut(folder / name, 0.5)
    r = cli("plot", folder, "--x", "traffic.rate_pps", "--y", "throughput_pps")
    assert r.returncode == 2
    one_clear_line(r.stderr, f"{name}: damaged", "rewrites it from the journal")


def test_a_runs_table_with_a_damaged_page_is_noticed(finished):
    _, folder, _ = finished
    path = folder / "runs.parquet"
    data = bytearray(path.read_bytes())
    data[200:260] = bytes(60)  # inside the first data page
    path.write_bytes(bytes(data))
    r = cli("rerun", folder, "--point", "1")
    assert r.returncode == 2
    one_clear_line(r.stderr, "runs.parquet: damaged")


def test_another_sweep_is_not_run_into_a_folder_that_holds_one(finished, tmp_path):
    f, folder, _ = finished
    before = (folder / "runs.parquet").read_bytes()
    other = write(tmp_path, SMALL.replace('"napi"', '"irq"'), "other.toml")
    r = cli("sweep", other, "--out", folder, "--no-progress", "--executor", "inline")
    assert r.returncode == 2
    one_clear_line(r.stderr, "holds the results of another sweep", '"napi"', '"irq"', "--fresh")
    assert (folder / "runs.parquet").read_bytes() == before
    for args, needle in (
        (("--seed", "6"), "sweep.seed = 5; here sweep.seed = 6"),
        (("--set", "nic.itr_us=20"), "nic.itr_us at its default"),
    ):
        r = cli("sweep", f, "--out", folder, "--no-progress", "--executor", "inline", *args)
        assert r.returncode == 2
        one_clear_line(r.stderr, "another sweep", needle)
    r = cli("sweep", other, "--out", folder, "--no-progress", "--executor", "inline", "--fresh")
    assert r.returncode == 0, r.stderr
    assert set(pd.read_parquet(folder / "runs.parquet")["scheme"]) == {"irq"}


def test_a_folder_written_before_journals_kept_their_sweep_is_still_protected(finished, tmp_path):
    _, folder, _ = finished
    with sqlite3.connect(folder / "journal.sqlite") as db:
        db.execute("DROP TABLE meta")  # as a journal of an earlier irqlab
    other = write(tmp_path, SMALL.replace('"napi"', '"irq"'), "other.toml")
    r = cli("sweep", other, "--out", folder, "--no-progress", "--executor", "inline")
    assert r.returncode == 2
    one_clear_line(r.stderr, "holds the results of another sweep")


def test_more_values_and_replications_continue_the_same_sweep(finished, monkeypatch):
    f, folder, table = finished
    import irqlab.experiments.running as sw

    ran = []

    def counting(task):
        ran.append(task)
        return sw_run(task)

    sw_run = sw.run_replication
    monkeypatch.setattr(sw, "run_replication", counting)
    more = irqlab.sweep(
        f,
        out=folder,
        executor="inline",
        replications=4,
        axes={"traffic.rate_pps": {"from": 20_000, "to": 260_000, "step": 20_000}},
    )
    assert len(ran) == 12 + 4  # a fourth replication of each old point, and a new point
    pd.testing.assert_frame_equal(
        more[more["replication"] < 3].iloc[: len(table)].reset_index(drop=True),
        table[table["point"] < 12].reset_index(drop=True),
    )


# --- 7. the same key twice ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        (
            '[axes]\n"traffic.rate_pps" = [1000, 2000]\ntraffic.rate_pps = [3000]\n',
            "axes",
            "traffic.rate_pps",
        ),
        ("[axes]\n'nic.itr_us' = [0]\n[axes.nic]\nitr_us = [20]\n", "axes", "nic.itr_us"),
        ('[axes]\n"app.0.cost_ns" = [1]\napp."0".cost_ns = [2]\n', "axes", "app.0.cost_ns"),
        ('[base]\n"run.duration_ms" = 1\nrun.duration_ms = 2\n', "base", "run.duration_ms"),
        ("[base]\n'app.0.core' = 0\n[[base.app]]\ncore = 0\n", "base", "app.0.core"),
    ],
)
def test_a_key_given_twice_is_refused_by_name(tmp_path, text, where, key):
    f = write(tmp_path, text)
    with pytest.raises(irqlab.ConfigError) as e:
        parse_sweep(f)
    assert str(e.value).startswith(f"{where}: the key {key} is given twice")


def test_a_key_given_twice_in_the_base_file_is_named_with_the_file(tmp_path):
    write(tmp_path, '"traffic.rate_pps" = 1000\n[traffic]\nrate_pps = 2000\n', "base.toml")
    f = write(tmp_path, '[sweep]\nbase = "base.toml"\n[axes]\nscheme = ["irq", "napi"]\n')
    r = cli("sweep", f, "--out", tmp_path / "r", "--executor", "inline")
    assert r.returncode == 2
    one_clear_line(r.stderr, "base.toml: the key traffic.rate_pps is given twice")


def test_an_axis_given_twice_fails_before_anything_runs(tmp_path):
    f = write(tmp_path, '[axes]\n"traffic.rate_pps" = [1000, 2000]\ntraffic.rate_pps = [3000]\n')
    r = cli("sweep", f, "--out", tmp_path / "r", "--executor", "inline")
    assert r.returncode == 2
    one_clear_line(r.stderr, 'axes: the key traffic.rate_pps is given twice ("traffic.rate_pps"')
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [("axes = 5\n", "axes: must be a table"), ('sweep = "x"\n', "sweep: must be a table")],
)
def test_a_section_that_is_not_a_table_is_named(tmp_path, text, needle):
    r = cli("sweep", write(tmp_path, text), "--out", tmp_path / "r")
    assert r.returncode == 2
    one_clear_line(r.stderr, needle)


# --- 8. Dask: a bad address, a lost scheduler, a lost worker --------------------------------


def test_a_scheduler_that_is_not_an_address_is_one_line(tmp_path):
    f = write(tmp_path, SMALL)
    r = cli("sweep", f, "--out", tmp_path / "r", "--scheduler", "notanaddress", timeout=60)
    assert r.returncode == 2
    one_clear_line(r.stderr, "--scheduler notanaddress: not an address", "tcp://HOST:PORT")


def _dask(log: Path, *args: object) -> subprocess.Popen[bytes]:
    """``dask scheduler|worker ARGS`` in a session of its own, its output in ``log``."""
    cmd = [sys.executable, "-m", "distributed.cli.dask_" + str(args[0]), *map(str, args[1:])]
    with log.open("wb") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=out, start_new_session=True)


@linux_only
@pytest.mark.slow
def test_a_lost_scheduler_ends_the_sweep_clearly_and_any_executor_resumes_it(tmp_path):
    f = write(tmp_path, BUSY)
    folder, address = tmp_path / "r", tmp_path / "scheduler.json"
    scheduler = _dask(
        tmp_path / "scheduler.log",
        "scheduler",
        "--scheduler-file",
        address,
        "--port",
        "0",
        "--no-dashboard",
    )
    worker = proc = None
    try:
        deadline = time.monotonic() + 60
        while not address.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        addr = json.loads(address.read_text())["address"]
        worker = _dask(tmp_path / "worker.log", "worker", addr, "--nthreads", "1", "--no-dashboard")
        proc = start("sweep", f, "--out", folder, "--scheduler", addr, "--no-progress")
        wait_for_rows(folder / "journal.sqlite", 1, proc, limit=120)
        os.killpg(scheduler.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        for started in (scheduler, worker, proc):
            if started is not None:
                end_group(started)
    assert proc.returncode == 1
    one_clear_line(
        err.decode(), f"lost the Dask scheduler at {addr}", "finished so far, kept in", "again"
    )
    kept = journal_rows(folder / "journal.sqlite")
    assert 1 <= kept < 8
    resumed = cli("sweep", f, "--out", folder, "--no-progress", "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    runs = pd.read_parquet(folder / "runs.parquet")
    pd.testing.assert_frame_equal(runs, clean_table(f, tmp_path / "clean"), check_exact=True)


@linux_only
@pytest.mark.slow
def test_a_lost_worker_does_not_stop_a_dask_sweep(tmp_path):
    from distributed import Client, LocalCluster

    f = write(tmp_path, BUSY)
    folder = tmp_path / "r"
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        proc = start("sweep", f, "--out", folder, "--scheduler", cluster.scheduler_address)
        try:
            wait_for_rows(folder / "journal.sqlite", 2, proc)
            pid = next(iter(client.run(os.getpid).values()))
            os.kill(pid, signal.SIGKILL)
            _, err = proc.communicate(timeout=300)
        finally:
            end_group(proc)
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()
    runs = pd.read_parquet(folder / "runs.parquet")
    pd.testing.assert_frame_equal(runs, clean_table(f, tmp_path / "clean"), check_exact=True)


def test_a_local_dask_cluster_logs_only_critical_messages_while_it_runs():
    # A local worker shares the terminal: at Ctrl-C, one whose scheduler closed first logged its
    # failed heartbeat with a traceback (seen once in CI, in the Ctrl-C test above). The sweep
    # says what went wrong itself, so the cluster's own logs, in its workers and here, stay
    # quiet but for critical ones, and this process's levels come back when it closes.
    import logging

    import distributed  # noqa: F401  (its import sets its loggers' levels)

    from irqlab.experiments.executors import DaskExecutor

    names = ["distributed.worker", "distributed.core", "distributed.comm"]
    here = [*names, "distributed.scheduler"]
    before = {n: logging.getLogger(n).getEffectiveLevel() for n in here}
    assert logging.CRITICAL not in before.values()
    ex = DaskExecutor(workers=1)
    try:
        in_workers = dict(
            ex.imap_unordered(
                lambda n: __import__("logging").getLogger(n).getEffectiveLevel(), names
            )
        )
        meanwhile = {n: logging.getLogger(n).getEffectiveLevel() for n in here}
    finally:
        ex.close()
    assert in_workers == dict.fromkeys(names, logging.CRITICAL)
    assert meanwhile == dict.fromkeys(here, logging.CRITICAL)
    assert {n: logging.getLogger(n).getEffectiveLevel() for n in here} == before


# --- 11. a base that is a sweep file --------------------------------------------------------


@pytest.mark.parametrize("base", ["s.toml", "other.toml"])
def test_a_base_that_is_a_sweep_file_is_called_one(tmp_path, base):
    write(tmp_path, SMALL, "other.toml")
    f = write(tmp_path, f'[sweep]\nbase = "{base}"\n[axes]\nscheme = ["irq", "napi"]\n')
    r = cli("sweep", f, "--out", tmp_path / "r")
    assert r.returncode == 2
    one_clear_line(r.stderr, f"sweep.base: {base} is a sweep file, not a scenario")
    with pytest.raises(irqlab.ConfigError, match="is a sweep file, not a scenario"):
        irqlab.sweep(base=tmp_path / "other.toml", axes={"scheme": ["irq"]}, executor="inline")


def test_a_scenario_given_as_a_sweep_is_called_one(tmp_path):
    f = write(tmp_path, 'scheme = "napi"\n[traffic]\nrate_pps = 1000\n', "napi.toml")
    r = cli("sweep", f)
    assert r.returncode == 2
    one_clear_line(r.stderr, "napi.toml is a scenario, not a sweep file")


# --- where the results go: --out ------------------------------------------------------------

#: Two runs of next to nothing.
TINY = (
    '[sweep]\nreplications = 1\n[base]\nscheme = "ideal"\nrun.duration_ms = 0.01\n'
    "[axes]\n'traffic.rate_pps' = [1000, 2000]\n"
)


def test_a_sweeps_out_folder_is_created_with_its_parents(tmp_path):
    folder = tmp_path / "a" / "b" / "c"
    r = cli("sweep", write(tmp_path, TINY), "--out", folder, "--executor", "inline")
    assert r.returncode == 0, r.stderr
    assert len(pd.read_parquet(folder / "runs.parquet")) == 2


def _unwritable(tmp_path: Path, kind: str, request) -> tuple[Path, str]:
    """A --out that cannot hold a sweep's results, and what the error says about it."""
    if kind == "a file":
        return write(tmp_path, "", "taken"), "a file, not a folder"
    if kind == "under a file":
        return write(tmp_path, "", "taken") / "sub", "cannot create the folder"
    if kind == "read-only folder":
        return request.getfixturevalue("read_only_folder"), "cannot write a file in it"
    if kind == "under a read-only folder":
        return request.getfixturevalue("read_only_folder") / "sub", "cannot create the folder"
    if kind == "/proc":
        return Path("/proc/irqlab-sweep"), "cannot create the folder"
    return Path("/proc/self"), "cannot write a file in it"


@pytest.mark.parametrize(
    "kind",
    [
        "a file",
        "under a file",
        "read-only folder",
        "under a read-only folder",
        pytest.param("/proc", marks=linux_only),
        pytest.param("/proc/self", marks=linux_only),
    ],
)
def test_an_out_that_cannot_hold_results_is_named_in_one_line(tmp_path, kind, request):
    out, needle = _unwritable(tmp_path, kind, request)
    r = cli("sweep", write(tmp_path, TINY), "--out", out, "--executor", "inline")
    assert r.returncode == 2
    line = one_clear_line(r.stderr, needle)
    assert str(out) in line


@linux_only
def test_a_figure_that_cannot_be_written_is_named_in_one_line(tmp_path):
    folder = tmp_path / "r"
    made = cli("sweep", write(tmp_path, TINY), "--out", folder, "--executor", "inline")
    assert made.returncode == 0, made.stderr
    r = cli("plot", folder, "--x", "traffic.rate_pps", "--y", "throughput_pps", "-o", "/proc/f.png")
    assert r.returncode == 2
    one_clear_line(r.stderr, "/proc/f.png: cannot write the figure")
