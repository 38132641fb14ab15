"""Mutation testing of the core: `make mutants` holds the whole crate to its bounds, CI tests
the core's changed lines, and the report both use computes the caught share per file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / ".ci" / "mutants_report.py"


def outcome(file: str, line: int, summary: str) -> dict:
    name = f"{file}:{line}:9: replace f -> bool with true"
    return {"scenario": {"Mutant": {"name": name, "file": file}}, "summary": summary}


def write_run(tmp_path: Path, outcomes: list[dict], baseline: str = "Success") -> Path:
    out = tmp_path / "mutants.out"
    out.mkdir()
    doc = {"outcomes": [{"scenario": "Baseline", "summary": baseline}, *outcomes]}
    (out / "outcomes.json").write_text(json.dumps(doc))
    return out


def report(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPORT), str(out), *args], capture_output=True, text=True
    )


def test_the_share_is_caught_over_caught_plus_missed_per_file_and_overall(tmp_path):
    a, b = "src/a.rs", "src/b.rs"
    runs = [outcome(a, k, "CaughtMutant") for k in range(9)]
    runs += [outcome(a, 10, "MissedMutant"), outcome(a, 11, "Unviable"), outcome(a, 12, "Timeout")]
    runs += [outcome(b, 1, "CaughtMutant"), outcome(b, 2, "MissedMutant")]
    r = report(write_run(tmp_path, runs))
    assert r.returncode == 0, r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    # file, caught, missed, timeout, unviable, share, %
    assert rows[a][1:6] == ["9", "1", "1", "1", "90.0"]
    assert rows[b][1:6] == ["1", "1", "0", "0", "50.0"]
    assert rows["all"][1:6] == ["10", "2", "1", "1", "83.3"]


def test_bounds_fail_naming_the_file_and_the_share(tmp_path):
    runs = [outcome("src/a.rs", k, "CaughtMutant") for k in range(9)]
    runs += [outcome("src/a.rs", 9, "MissedMutant"), outcome("src/b.rs", 1, "MissedMutant")]
    runs += [outcome("src/b.rs", 2, "CaughtMutant"), outcome("src/b.rs", 3, "CaughtMutant")]
    out = write_run(tmp_path, runs)
    r = report(out, "--min-total", "90", "--min-file", "80")
    assert r.returncode == 1
    assert "mutants: 84.6 % caught overall < 90 %" in r.stdout
    assert "mutants: src/b.rs 66.7 % < 80 %" in r.stdout
    assert "src/a.rs 90.0 %" not in r.stdout
    assert report(out, "--min-total", "80", "--min-file", "60").returncode == 0


def test_no_missed_lists_every_survivor(tmp_path):
    runs = [outcome("src/a.rs", 1, "CaughtMutant"), outcome("src/a.rs", 2, "MissedMutant")]
    r = report(write_run(tmp_path, runs), "--no-missed")
    assert r.returncode == 1
    assert "1 mutant(s) no test notices" in r.stdout
    assert "src/a.rs:2:9: replace f -> bool with true" in r.stdout
    caught = [outcome("src/a.rs", 1, "CaughtMutant"), outcome("src/a.rs", 2, "Timeout")]
    (tmp_path / "again").mkdir()
    assert report(write_run(tmp_path / "again", caught), "--no-missed").returncode == 0


def test_an_unfinished_run_or_a_failing_baseline_is_one_line_and_exit_2(tmp_path):
    r = report(tmp_path / "nowhere")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no finished run" in r.stderr
    r = report(write_run(tmp_path, [], baseline="Failure"))
    assert r.returncode == 2
    assert "the tests fail without any mutant" in r.stdout


def test_runs_merge_in_order_and_a_later_outcome_replaces_an_earlier_one(tmp_path):
    # as `cargo mutants --iterate` accumulates: the second run re-tests what the first missed
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = write_run(
        tmp_path / "one",
        [outcome("src/a.rs", 1, "CaughtMutant"), outcome("src/a.rs", 2, "MissedMutant")],
    )
    second = write_run(tmp_path / "two", [outcome("src/a.rs", 2, "CaughtMutant")])
    r = report(first, "--no-missed")
    assert r.returncode == 1
    r = report(first, second / "outcomes.json", "--no-missed")
    assert r.returncode == 0, r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    assert rows["all"][1:6] == ["2", "0", "0", "0", "100.0"]
    # the other order: the older outcome is the later one given, and it wins
    assert report(second, first, "--no-missed").returncode == 1


def test_the_list_of_mutants_says_what_counts_and_what_is_not_tested_yet(tmp_path):
    runs = [outcome("src/a.rs", k, "CaughtMutant") for k in range(3)]
    runs.append(outcome("src/gone.rs", 1, "MissedMutant"))
    out = write_run(tmp_path, runs)
    listed = tmp_path / "list.txt"
    names = [outcome("src/a.rs", k, "")["scenario"]["Mutant"]["name"] for k in range(4)]
    listed.write_text("\n".join(names) + "\n")
    r = report(out, "--expect", str(listed), "--no-missed")
    # src/gone.rs is no longer a mutant of the tree; src/a.rs:3 has no outcome yet
    assert r.returncode == 2, r.stdout
    assert "src/gone.rs" not in r.stdout
    assert "mutants: 1 of 4 mutants not tested yet" in r.stdout
    listed.write_text("\n".join(names[:3]) + "\n")
    assert report(out, "--expect", str(listed), "--no-missed").returncode == 0
    r = report(out, "--expect", str(tmp_path / "none.txt"))
    assert r.returncode == 2
    assert "cannot read the list of mutants" in r.stderr


def test_make_and_ci_run_mutation_testing_of_the_core():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^mutants:.*## ", makefile, re.M)
    assert "--min-total 90 --min-file 80" in makefile
    assert "cargo mutants --package irqlab-core" in makefile
    assert ".ci/mutants_diff" in (ROOT / ".ci" / "run").read_text()
    script = (ROOT / ".ci" / "mutants_diff").read_text()
    assert "--in-diff" in script and "--no-missed" in script
    config = (ROOT / ".cargo" / "mutants.toml").read_text()
    assert 'profile = "mutants"' in config
    assert "[profile.mutants]" in (ROOT / "Cargo.toml").read_text()


LEDGER = ROOT / ".ci" / "mutants_ledger.py"


def mutant(line: int, body: str, op: str = "<") -> dict:
    """A mutant of src/a.rs at `line`, its diff with `body` as the mutated line's context."""
    name = f"src/a.rs:{line}:9: replace {op} with <= in f"
    diff = (
        f"--- src/a.rs\n+++ replace {op} with <= in f\n@@ -{line - 1},3 +{line - 1},3 @@\n"
        f" fn f() {{\n-    {body} {op} 1\n+    {body} <= 1\n }}\n"
    )
    return {"name": name, "file": "src/a.rs", "diff": diff}


def ledger(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LEDGER), *map(str, args)], capture_output=True, text=True
    )


def test_the_ledger_keeps_caught_mutants_that_only_moved_and_drops_changed_ones(tmp_path):
    # a run tested four mutants: one caught, one unviable, one missed, one timed out
    run = tmp_path / "run" / "mutants.out"
    run.mkdir(parents=True)
    tested = [mutant(10, "x"), mutant(20, "y"), mutant(30, "z"), mutant(40, "w")]
    (run / "mutants.json").write_text(json.dumps(tested))
    summaries = ["CaughtMutant", "Unviable", "MissedMutant", "Timeout"]
    outcomes = [{"scenario": "Baseline", "summary": "Success"}] + [
        {"scenario": {"Mutant": {"name": m["name"], "file": m["file"]}}, "summary": s}
        for m, s in zip(tested, summaries, strict=True)
    ]
    (run / "outcomes.json").write_text(json.dumps({"outcomes": outcomes}))
    # since then, lines were added above all four, and the second one's code changed
    now = [mutant(15, "x"), mutant(25, "y + 1"), mutant(35, "z"), mutant(45, "w")]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(now))
    book = tmp_path / "ledger.tsv"
    r = ledger("save", book, listed, run)
    assert r.returncode == 0, r.stderr
    assert "2 of 4 mutants caught, timed out or unviable" in r.stdout
    out = tmp_path / "seeded"
    r = ledger("seed", book, listed, out, tmp_path / "history" / "00.json")
    assert r.returncode == 0, r.stderr
    # the moved ones are skipped under their new names (`--iterate` skips what caught.txt
    # lists, so the timeout goes there too); the changed and the missed are tested again
    assert (out / "caught.txt").read_text() == now[0]["name"] + "\n" + now[3]["name"] + "\n"
    assert (out / "unviable.txt").read_text() == ""
    history = json.loads((tmp_path / "history" / "00.json").read_text())["outcomes"]
    assert [(o["scenario"]["Mutant"]["name"], o["summary"]) for o in history] == [
        (now[0]["name"], "CaughtMutant"),
        (now[3]["name"], "Timeout"),
    ]


def test_a_later_miss_takes_a_mutant_out_of_the_ledger_and_a_bad_ledger_is_one_line(tmp_path):
    m = mutant(10, "x")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([m]))
    book = tmp_path / "ledger.tsv"
    runs = []
    for k, summary in enumerate(["CaughtMutant", "MissedMutant"]):
        run = tmp_path / f"run{k}"
        run.mkdir()
        (run / "mutants.json").write_text(json.dumps([m]))
        doc = {"outcomes": [{"scenario": {"Mutant": {"name": m["name"]}}, "summary": summary}]}
        (run / "outcomes.json").write_text(json.dumps(doc))
        runs.append(run)
    assert "1 of 1 mutants" in ledger("save", book, listed, runs[0]).stdout
    assert "0 of 1 mutants" in ledger("save", book, listed, runs[1]).stdout
    book.write_text("caught only-one-field\n")
    r = ledger("seed", book, listed, tmp_path / "o", tmp_path / "h.json")
    assert r.returncode == 2
    assert r.stderr.startswith("mutants ledger: ") and "ledger.tsv:1:" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_prune_forgets_earlier_outcomes_of_mutants_whose_code_changed_under_the_same_name(tmp_path):
    # an earlier run (now in target/) caught x and y; since then y's code changed on its own
    # line, so its name is the same and its diff is not: `--iterate` and the report, which go
    # by name, would count the old outcome
    tested = [mutant(10, "x"), mutant(20, "y")]
    out = tmp_path / "mutants.out"
    out.mkdir()
    (out / "mutants.json").write_text(json.dumps(tested))
    (out / "caught.txt").write_text("".join(m["name"] + "\n" for m in tested))
    (out / "unviable.txt").write_text("")
    # cargo-mutants' own list of all caught so far, by name; z was caught by a run not on
    # record (or seeded from the ledger, which seed does again)
    z = mutant(30, "z")["name"]
    (out / "previously_caught.txt").write_text(f"{tested[0]['name']}\n{tested[1]['name']}\n{z}\n")
    history = tmp_path / "history"
    history.mkdir()
    (history / "20260101-000000.mutants").write_text(json.dumps(tested))
    outcomes = [{"scenario": "Baseline", "summary": "Success"}] + [
        {"scenario": {"Mutant": {"name": m["name"], "file": m["file"]}}, "summary": "CaughtMutant"}
        for m in tested
    ]
    (history / "20260101-000000.json").write_text(json.dumps({"outcomes": outcomes}))
    # the ledger's history has no .mutants beside it: prune leaves it to seed
    (history / "00-ledger.json").write_text(json.dumps({"outcomes": outcomes[1:]}))
    now = [mutant(10, "x"), mutant(20, "y + 1")]
    assert now[1]["name"] == tested[1]["name"]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(now))
    r = ledger("prune", listed, out, history)
    assert r.returncode == 0, r.stderr
    assert "2 earlier outcomes dropped" in r.stdout
    assert (out / "caught.txt").read_text() == now[0]["name"] + "\n"
    assert (out / "previously_caught.txt").read_text() == now[0]["name"] + "\n"
    kept = json.loads((history / "20260101-000000.json").read_text())["outcomes"]
    assert [
        o["scenario"] if o["scenario"] == "Baseline" else o["scenario"]["Mutant"]["name"]
        for o in kept
    ] == [
        "Baseline",
        now[0]["name"],
    ]
    assert len(json.loads((history / "00-ledger.json").read_text())["outcomes"]) == 2
    # nothing changed: nothing dropped, nothing said
    r = ledger("prune", listed, out, history)
    assert r.returncode == 0 and r.stdout == ""
