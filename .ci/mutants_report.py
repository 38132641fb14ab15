#!/usr/bin/env python3
"""What a cargo-mutants run caught, per source file and overall, from its outcomes.json.

Usage: .ci/mutants_report.py [RUN ...] [--expect LIST] [--min-total PCT] [--min-file PCT]
       [--no-missed]

A RUN is an output directory (mutants.out) or an outcomes.json. Several runs are merged in
the order given, a later outcome of a mutant replacing an earlier one: that is how the runs of
`cargo mutants --iterate` (each testing what the ones before did not catch) add up to one
figure. With --expect (the output of `cargo mutants --list`), only the mutants listed count,
and a listed mutant without an outcome means the run is not finished.

Caught share = caught / (caught + missed): a mutant that does not build (unviable) tells
nothing, and one that makes the tests hang (timeout) did not pass them. Exits 1 if a bound is
not met, or with --no-missed if any mutant was missed (each one listed), 2 if the run did not
finish or its baseline failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

COLUMNS = ("caught", "missed", "timeout", "unviable")
OUTCOME = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "runs", nargs="*", default=["mutants.out"], help="output directories or outcomes.json"
    )
    ap.add_argument("--expect", help="`cargo mutants --list` output: the mutants that count")
    ap.add_argument("--min-total", type=float, default=0.0, help="least caught share, %%")
    ap.add_argument("--min-file", type=float, default=0.0, help="least share in every file, %%")
    ap.add_argument("--no-missed", action="store_true", help="fail on any missed mutant")
    args = ap.parse_args(argv)
    latest: dict[str, tuple[str, str]] = {}
    for i, run in enumerate(args.runs):
        path = Path(run)
        if path.is_dir():
            path = path / "outcomes.json"
        try:
            outcomes = json.loads(path.read_text())["outcomes"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"mutants: no finished run in {path}: {e}", file=sys.stderr)
            return 2
        for o in outcomes:
            scenario = o["scenario"]
            if scenario == "Baseline":
                if o["summary"] != "Success" and i == len(args.runs) - 1:
                    print(f"mutants: the tests fail without any mutant ({o['summary']})")
                    return 2
                continue
            mutant = scenario["Mutant"]
            kind = OUTCOME.get(o["summary"])
            if kind is None:
                print(f"mutants: unknown outcome {o['summary']!r} of {mutant['name']}")
                return 2
            latest[mutant["name"]] = (mutant["file"], kind)
    untested = 0
    if args.expect:
        try:
            expected = [line for line in Path(args.expect).read_text().splitlines() if line]
        except (OSError, UnicodeDecodeError) as e:
            print(f"mutants: cannot read the list of mutants {args.expect}: {e}", file=sys.stderr)
            return 2
        untested = sum(name not in latest for name in expected)
        wanted = set(expected)
        latest = {name: v for name, v in latest.items() if name in wanted}
    per_file: dict[str, Counter[str]] = defaultdict(Counter)
    missed: list[str] = []
    for name, (file, kind) in latest.items():
        per_file[file][kind] += 1
        if kind == "missed":
            missed.append(name)
    total: Counter[str] = Counter()
    low: list[str] = []
    width = max((len(f) for f in per_file), default=4)
    print(f"{'file':<{width}} " + " ".join(f"{c:>8}" for c in COLUMNS) + "   caught")
    for file in sorted(per_file):
        n = per_file[file]
        total.update(n)
        share = caught_share(n)
        print(f"{file:<{width}} " + " ".join(f"{n[c]:>8}" for c in COLUMNS) + f"  {fmt(share)}")
        if share is not None and share < args.min_file:
            low.append(f"{file} {share:.1f} % < {args.min_file:g} %")
    share = caught_share(total)
    print(f"{'all':<{width}} " + " ".join(f"{total[c]:>8}" for c in COLUMNS) + f"  {fmt(share)}")
    failed = False
    if share is not None and share < args.min_total:
        print(f"mutants: {share:.1f} % caught overall < {args.min_total:g} %")
        failed = True
    for line in low:
        print(f"mutants: {line}")
        failed = True
    if args.no_missed and missed:
        print(f"mutants: {len(missed)} mutant(s) no test notices; cover them with a test:")
        for name in missed:
            print(f"  {name}")
        failed = True
    if untested:
        print(
            f"mutants: {untested} of {untested + len(latest)} mutants not tested yet:"
            " the run was stopped; run again to go on"
        )
        return 2
    return 1 if failed else 0


def caught_share(n: Counter[str]) -> float | None:
    viable = n["caught"] + n["missed"]
    return 100.0 * n["caught"] / viable if viable else None


def fmt(share: float | None) -> str:
    return "     -" if share is None else f"{share:5.1f} %"


if __name__ == "__main__":
    sys.exit(main())
