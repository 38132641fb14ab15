"""Instructions per simulated packet of each benchmark row, counted by callgrind.

Wall time moves by a few per cent from run to run and with whatever else the machine does;
instruction counts do not (the same binary and inputs give the same count). This runs each
row of ``run_benchmarks.py`` on 1 M packets through the core's ``run`` example, built with the
``profiling`` profile (release code with line tables), under ``valgrind --tool=callgrind``, and
divides the total by the packets offered. With ``--compare FILE`` it prints the change against
an earlier ``--json`` output::

    python benches/instructions.py --json before.json           # on the old tree
    python benches/instructions.py --compare before.json        # on the new one

Needs valgrind (``apt-get install valgrind``) and cargo; the C reference is counted the same
way when gcc is there.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import run_benchmarks as rb

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "target" / "profiling" / "examples" / "run"
PACKETS = 1_000_000


def rows(n: int) -> dict[str, dict[str, Any]]:
    """Every benchmark row's scenario, by a short name."""
    out = {"ideal": rb.ideal_scenario(n), "napi": rb.napi_scenario(n)}
    names = {
        "irqlab_de": "disable-enable",
        "irqlab_poll": "poll",
        "irqlab_linear": "napi + linear",
        "irqlab_forward": "forwarding",
        "irqlab_app": "app + socket",
        "irqlab_threaded": "threaded NAPI",
        "irqlab_busy_thread": "threaded busy poll",
        "irqlab_rss1": "RSS 1 core",
        "irqlab_rss4": "RSS 4 cores",
        "irqlab_rss16": "RSS 16 cores",
    }
    for key, (_, scenario) in rb.more_scenarios(n).items():
        out[names[key]] = scenario
    return out


def pairs(tree: dict[str, Any], prefix: str = "") -> list[str]:
    """A scenario as the example's ``dotted.key=value`` arguments."""
    out = []
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out += pairs(value, f"{name}.")
        elif isinstance(value, list) and all(isinstance(x, int) for x in value):
            out.append(f"{name}=[{','.join(str(x) for x in value)}]")
        elif isinstance(value, list):
            for i, entry in enumerate(value):
                out += pairs(entry, f"{name}.{i}.")
        elif isinstance(value, bool):
            out.append(f"{name}={'true' if value else 'false'}")
        else:
            out.append(f"{name}={value}")
    return out


def callgrind(command: list[str]) -> tuple[int, str]:
    """Total instructions of ``command`` under callgrind, and its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
            capture_output=True,
            text=True,
            check=True,
        )
        m = re.search(r"^summary:\s+(\d+)", out.read_text(), re.M)
        if m is None:
            m = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
        assert m is not None, done.stderr
        return int(m.group(1)), done.stdout


def count_row(scenario: dict[str, Any]) -> dict[str, float]:
    total, stdout = callgrind([str(EXAMPLE), *pairs(scenario)])
    offered = json.loads(stdout)["packets"]["offered"]
    return {"instructions": total, "offered": offered, "per_packet": total / offered}


def count_c(n: int) -> dict[str, float] | None:
    binary = rb.build_c()
    if binary is None:
        return None
    total, _ = callgrind([str(binary), str(n), str(rb.LOAD), str(rb.BUFFER), str(rb.SEED)])
    return {"instructions": total, "offered": n, "per_packet": total / n}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the counts to this file")
    parser.add_argument("--compare", type=Path, help="an earlier --json output to compare with")
    parser.add_argument("--only", action="append", help="count only this row (repeatable)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instructions: needs valgrind (apt-get install valgrind)")
    build = "cargo build --quiet --profile profiling -p irqlab-core --example run"
    subprocess.run(
        build.split(),
        cwd=ROOT,
        check=True,
    )
    before = json.loads(args.compare.read_text()) if args.compare else {}
    counts: dict[str, Any] = {}
    print("| row | instructions / packet |" + (" before | change |" if before else ""))
    print("|---|---|" + ("---|---|" if before else ""))
    todo = {"C reference": None, **rows(PACKETS)}
    for name, scenario in todo.items():
        if args.only and name not in args.only:
            continue
        c = count_c(PACKETS) if scenario is None else count_row(scenario)
        if c is None:
            continue
        counts[name] = c
        line = f"| {name} | {c['per_packet']:.1f} |"
        if name in before:
            was = before[name]["per_packet"]
            line += f" {was:.1f} | {100 * (c['per_packet'] / was - 1):+.1f} % |"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(counts, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
