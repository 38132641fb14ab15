#!/usr/bin/env python3
"""Keep a whole-crate mutation run's progress in the repository, so that it can go on elsewhere.

Usage: .ci/mutants_ledger.py save LEDGER LIST RUN ...
       .ci/mutants_ledger.py seed LEDGER LIST OUTDIR HISTORY
       .ci/mutants_ledger.py prune LIST OUTDIR HISTORYDIR

The whole core takes hours to mutate on a small machine, more than one sitting. `make mutants`
keeps a stopped run's outcomes in target/, which a fresh checkout does not have; the ledger
(.ci/mutants-ledger.tsv) carries them in the repository instead.

LIST is `cargo mutants --list --json --diff` of the current tree. An entry is a mutant that was
caught, timed out or was unviable, kept under its identity: its file, what it replaces in which
function, and a hash of its diff's text (the mutated line and the ten around it) without line
numbers. So an entry outlives edits elsewhere in its file that only move it, and stands only
while its code and the code around it are unchanged: a mutant whose code changed is tested
again. A timeout
(the tests hang with the mutant in place) is kept too: its code unchanged, more tests cannot
make it pass, and testing it again costs a whole test timeout. Missed mutants are not kept:
`--iterate` tests them again.

save: adds to LEDGER the caught, timed-out and unviable mutants of the runs (output
  directories, or a history's X.json with its X.mutants beside it; a later run's outcome
  replacing an earlier one) whose diff as the run tested it is still the diff in LIST; entries
  LIST no longer matches are dropped.
seed: writes the ledger's still-valid entries to OUTDIR/caught.txt (timeouts too) and
  OUTDIR/unviable.txt (appending), which `cargo mutants --iterate` then skips, and to HISTORY
  (an outcomes.json for .ci/mutants_report.py, where a timeout stays a timeout).
prune: forgets what earlier runs in target/ say of a mutant whose code changed since they
  tested it (the same name, another diff), or that they tested but cannot tell how: in
  OUTDIR's outcome lists and cargo-mutants' previously_caught.txt, which `--iterate` reads by
  name, and in HISTORYDIR's X.json (with X.mutants beside it), which the report reads by
  name. So a changed mutant is tested again, as the ledger would have it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

KEPT = {"CaughtMutant": "caught", "Unviable": "unviable", "Timeout": "timeout"}
# the list of the previous run's outcomes in which `cargo mutants --iterate` finds each kind
ITERATE_SKIPS = {"caught": "caught.txt", "timeout": "caught.txt", "unviable": "unviable.txt"}


def diff_hash(diff: str) -> str:
    """The diff's text without its headers and line numbers."""
    body = [
        line
        for line in diff.splitlines()
        if not line.startswith(("@@", "--- ", "+++ ")) and line not in ("---", "+++")
    ]
    return hashlib.sha256("\n".join(body).encode()).hexdigest()[:16]


def identity(name: str) -> str:
    """A mutant's name without its line and column: `file: replace … in function`."""
    return re.sub(r"^([^:]+):\d+:\d+: ", r"\1: ", name)


def keys(mutants: dict[str, str]) -> dict[str, str]:
    """Each mutant's ledger key (name -> diff): its identity, its diff's hash, and, for
    mutants alike in both, its place among them (by line)."""
    seen: dict[str, int] = {}
    out = {}
    for name in sorted(mutants, key=_line_order):
        base = f"{identity(name)}\t{diff_hash(mutants[name])}"
        k = seen.get(base, 0)
        seen[base] = k + 1
        out[name] = base if k == 0 else f"{base}\t{k}"
    return out


def _line_order(name: str) -> tuple[str, int, int, str]:
    m = re.match(r"^([^:]+):(\d+):(\d+): ", name)
    return (m[1], int(m[2]), int(m[3]), name) if m else (name, 0, 0, name)


def load_list(path: str) -> dict[str, dict]:
    """The current tree's mutants by name."""
    return {m["name"]: m for m in json.loads(Path(path).read_text())}


def load_ledger(path: str) -> dict[str, str]:
    """key -> outcome ("caught", "timeout" or "unviable"); an absent ledger is empty."""
    ledger: dict[str, str] = {}
    p = Path(path)
    if not p.exists():
        return ledger
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        kind, _, key = line.partition("\t")
        if kind not in KEPT.values() or key.count("\t") not in (1, 2):
            raise ValueError(
                f"{path}:{n}: expected 'caught|timeout|unviable<TAB>mutant<TAB>hash[<TAB>k]'"
            )
        ledger[key] = kind
    return ledger


def save(ledger_path: str, list_path: str, runs: list[str]) -> int:
    current = load_list(list_path)
    now = keys({name: m["diff"] for name, m in current.items()})
    valid_keys = set(now.values())
    ledger = {k: v for k, v in load_ledger(ledger_path).items() if k in valid_keys}
    for run in runs:
        path = Path(run)
        if path.is_dir():
            path, tested = path / "outcomes.json", path / "mutants.json"
        else:
            tested = path.with_suffix(".mutants")
        # the keys the run's mutants had when it tested them
        then = keys({m["name"]: m["diff"] for m in json.loads(tested.read_text())})
        for o in json.loads(path.read_text())["outcomes"]:
            if o["scenario"] == "Baseline":
                continue
            key = then.get(o["scenario"]["Mutant"]["name"])
            if key is None or key not in valid_keys:
                continue
            kind = KEPT.get(o["summary"])
            if kind is None:
                ledger.pop(key, None)
            else:
                ledger[key] = kind
    lines = [f"{kind}\t{key}" for key, kind in sorted(ledger.items())]
    header = (
        "# .ci/mutants_ledger.py: caught, timed-out or unviable mutants of the core"
        " (name, diff hash)\n"
    )
    Path(ledger_path).write_text(header + "\n".join(lines) + "\n")
    print(f"mutants ledger: {len(ledger)} of {len(current)} mutants caught, timed out or unviable")
    return 0


def seed(ledger_path: str, list_path: str, outdir: str, history: str) -> int:
    current = load_list(list_path)
    ledger = load_ledger(ledger_path)
    now = keys({name: m["diff"] for name, m in current.items()})
    valid = {name: ledger[key] for name, key in now.items() if key in ledger}
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for listing in sorted(set(ITERATE_SKIPS.values())):
        names = [name for name, k in sorted(valid.items()) if ITERATE_SKIPS[k] == listing]
        with (out / listing).open("a") as f:
            f.writelines(name + "\n" for name in names)
    summary = {v: k for k, v in KEPT.items()}
    outcomes = [
        {
            "scenario": {"Mutant": {"name": name, "file": current[name]["file"]}},
            "summary": summary[kind],
        }
        for name, kind in sorted(valid.items())
    ]
    Path(history).parent.mkdir(parents=True, exist_ok=True)
    Path(history).write_text(json.dumps({"outcomes": outcomes}))
    print(
        f"mutants ledger: {len(valid)} of {len(current)} mutants already caught, timed out"
        " or unviable"
    )
    return 0


def prune(list_path: str, outdir: str, history_dir: str) -> int:
    now = {name: diff_hash(m["diff"]) for name, m in load_list(list_path).items()}

    def unchanged(tested_path: Path) -> set[str]:
        """The names a run tested whose diff is still the current one."""
        tested = json.loads(tested_path.read_text())
        return {m["name"] for m in tested if now.get(m["name"]) == diff_hash(m["diff"])}

    dropped = 0
    out = Path(outdir)
    if (out / "mutants.json").exists():
        keep = unchanged(out / "mutants.json")
        for listing in ("caught.txt", "unviable.txt", "timeout.txt", "missed.txt"):
            path = out / listing
            if path.exists():
                names = path.read_text().splitlines()
                kept = [name for name in names if name in keep]
                dropped += len(names) - len(kept)
                path.write_text("".join(name + "\n" for name in kept))
    # cargo-mutants' own list of every name caught since the first --iterate: only names a
    # run on record (this one, or one in the history) tested with their current code stay;
    # the ledger's come back with seed
    previously = out / "previously_caught.txt"
    if previously.exists():
        records = [out / "mutants.json", *sorted(Path(history_dir).glob("*.mutants"))]
        on_record = set().union(*(unchanged(p) for p in records if p.exists()))
        names = previously.read_text().splitlines()
        previously.write_text("".join(name + "\n" for name in names if name in on_record))
    for path in sorted(Path(history_dir).glob("*.json")):
        tested = path.with_suffix(".mutants")
        if not tested.exists():
            continue  # the ledger's: written afresh by seed
        keep = unchanged(tested)
        doc = json.loads(path.read_text())
        outcomes = doc["outcomes"]
        doc["outcomes"] = [
            o
            for o in outcomes
            if o["scenario"] == "Baseline" or o["scenario"]["Mutant"]["name"] in keep
        ]
        dropped += len(outcomes) - len(doc["outcomes"])
        path.write_text(json.dumps(doc))
    if dropped:
        print(f"mutants ledger: {dropped} earlier outcomes dropped: their code changed since")
    return 0


def main(argv: list[str]) -> int:
    try:
        if len(argv) >= 4 and argv[0] == "save":
            return save(argv[1], argv[2], argv[3:])
        if len(argv) == 5 and argv[0] == "seed":
            return seed(*argv[1:])
        if len(argv) == 4 and argv[0] == "prune":
            return prune(*argv[1:])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"mutants ledger: {e}", file=sys.stderr)
        return 2
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
