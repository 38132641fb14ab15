"""Benchmark start-up: the wall time of the quick ``irqlab`` commands, each a whole process.

A command line called in loops and shell scripts is as fast as its start-up: the interpreter,
then what ``import irqlab`` and the command import. Each row is a fresh process (stdout and
stderr discarded), run ``--runs`` times after one untimed run that warms the page cache; the
table shows the median, the fastest and the slowest, and the target, and the median CPU time
(user + system) the process took. The rows:

- ``python``: the interpreter alone (``python -c pass``), the floor under every row;
- ``import irqlab``: ``python -c "import irqlab"``;
- ``irqlab --help``, ``irqlab keys``, ``irqlab check``: the quick commands, on
  ``examples/napi.toml``;
- ``irqlab run``: the same scenario cut to 1 ms of simulated time (with no warm-up), so the
  run itself takes about a millisecond and the row measures what surrounds it.

The ``irqlab`` script next to this interpreter is used (as a user's shell finds it), else
``python -m irqlab.cli``. The median wall time is the figure compared with the target. On a
machine shared with other work the wall times spread and grow with its load while the CPU
times stay put: start-up is one thread, so on an idle machine its wall time is its CPU time
and a little more.

Usage: ``python benches/startup.py [--runs N] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "napi.toml"
TINY = ("--set", "run.duration_ms=1", "--set", "run.warmup_ms=0")


def irqlab_command() -> list[str]:
    """The ``irqlab`` entry point installed beside this interpreter, else ``-m irqlab.cli``."""
    script = Path(sys.executable).with_name("irqlab")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "irqlab.cli"]


def rows() -> list[tuple[str, list[str], float | None]]:
    """(name, command, target in seconds or None)."""
    irqlab = irqlab_command()
    return [
        ("python", [sys.executable, "-c", "pass"], None),
        ("import irqlab", [sys.executable, "-c", "import irqlab"], 0.25),
        ("irqlab --help", [*irqlab, "--help"], 0.3),
        ("irqlab keys", [*irqlab, "keys"], 0.3),
        ("irqlab check", [*irqlab, "check", str(SCENARIO)], 0.3),
        ("irqlab run (1 ms)", [*irqlab, "run", str(SCENARIO), *TINY], 0.4),
    ]


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of ``command``, from start to exit; a failing
    command stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode().strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per row (default 7)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    table = rows()
    wall: dict[str, list[float]] = {name: [] for name, _, _ in table}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in table}
    for _, command, _ in table:
        timed(command)  # warm the page cache
    for _ in range(args.runs):  # round by round, so a change in the machine's load hits all rows
        for name, command, _ in table:
            w, c = timed(command)
            wall[name].append(w)
            cpu[name].append(c)

    head = f"{'command':<20} {'median s':>9} {'fastest':>8} {'slowest':>8} {'target':>7}"
    print(f"{head}       {'cpu s':>6}")
    results = []
    for name, _, target in table:
        median = statistics.median(wall[name])
        verdict = "" if target is None else ("ok" if median < target else "OVER")
        shown = "" if target is None else f"< {target:g}"
        print(
            f"{name:<20} {median:9.3f} {min(wall[name]):8.3f} {max(wall[name]):8.3f} "
            f"{shown:>7} {verdict:<4}  {statistics.median(cpu[name]):6.3f}"
        )
        results.append(
            {
                "command": name,
                "median_s": median,
                "wall_s": wall[name],
                "cpu_s": cpu[name],
                "target_s": target,
            }
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"({args.runs} runs each; Python {sys.version.split()[0]}; load average {load})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
