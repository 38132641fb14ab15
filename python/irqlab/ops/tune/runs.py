"""A tune's finished runs, kept so that a stopped tune resumes without running one twice.

They live in the folder's journal (``journal.sqlite``), the one sweeps keep
(:class:`irqlab.experiments.journal.Journal`): each run is a row
``{"c": candidate, "l": load, "r": replication, "m": {metric: value}}`` of the point
``"candidate/load"``, committed as it finishes. The folder's ``tune.json`` holds the tune's
definition and its hash, which the journal keeps too: another tune (another scenario, SLOs,
knobs, loads or seed) is refused rather than mixed in.

A folder written before tunes kept a journal holds the same records in ``runs.jsonl``, one a
line: when that tune runs again its runs move into the journal (a line cut short by a kill is
left out, so its run runs again) and ``runs.jsonl`` is removed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irqlab.errors import ConfigError, option
from irqlab.files import own_folder, read_limited, regular_file

if TYPE_CHECKING:
    from irqlab.experiments.journal import Journal

#: A run: (candidate, load, replication), each an index.
Key = tuple[int, int, int]

#: The journal in a tune's folder, and the one-line-per-run file of tunes before it.
JOURNAL = "journal.sqlite"
OLD_RUNS = "runs.jsonl"


def _out() -> str:
    return option("--out", "out=")


def _fresh() -> str:
    return option("--fresh", "fresh=True")


def definition_hash(definition: Mapping[str, Any]) -> str:
    """The hash that tells one tune from another (``tune.json``'s ``hash``)."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()


def _point(key: Key) -> str:
    return f"{key[0]}/{key[1]}"


def _parse(record: Any, needed: set[str]) -> tuple[Key, dict[str, float]] | None:
    """A stored run as (key, metrics); None if it is damaged or lacks a metric in ``needed``
    (that run runs again)."""
    try:
        key = (int(record["c"]), int(record["l"]), int(record["r"]))
        measured = {str(k): float(v) for k, v in record["m"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return (key, measured) if needed <= measured.keys() else None


class TuneRuns:
    """The finished runs of a tune: :attr:`done` maps each run's key to its metrics."""

    def __init__(self, out: Path | None, definition: Mapping[str, Any], fresh: bool) -> None:
        self.done: dict[Key, dict[str, float]] = {}
        self._journal: Journal | None = None
        if out is None:
            return
        # loaded with sweeps' machinery (pandas, scipy) only when a tune has a folder
        from irqlab.experiments import journal as journal_files
        from irqlab.experiments.journal import open_journal

        own_folder(out, "tune", _out())
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"{_out()} {out}: cannot create it ({e.strerror})", "out") from None
        if fresh:
            (out / "tune.json").unlink(missing_ok=True)
            (out / OLD_RUNS).unlink(missing_ok=True)
            journal_files.remove(out / JOURNAL)
        digest = definition_hash(definition)
        _same_tune(out, _stored_hash(out / "tune.json"), digest)
        self._journal = open_journal(out / JOURNAL, "tune")
        try:
            kept = self._journal.definition()
            _same_tune(out, None if kept is None else str(kept.get("hash")), digest)
            _write_definition(out, {"hash": digest, **definition})
            self._journal.set_definition({"hash": digest})
            # the metrics each run must have: the SLOs' (``metric op bound``) and the objective
            needed = {str(x).split()[0] for x in definition["slos"]} | {definition["minimize"]}
            self._adopt(out / OLD_RUNS, needed)
            points = [
                _point((c, li, 0))
                for c in range(len(definition["candidates"]))
                for li in range(len(definition["loads"]))
            ]
            for point, mask in self._journal.done(points).items():
                for row in self._journal.rows(point, mask.bit_length()):
                    found = _parse(row, needed)
                    if found is not None:
                        self.done[found[0]] = found[1]
        except BaseException:
            self.close()
            raise

    def _adopt(self, path: Path, needed: set[str]) -> None:
        """Moves the runs of an older tune's ``runs.jsonl`` into the journal, then removes it."""
        if not os.path.lexists(path):
            return
        regular_file(path, "tune", f"{_fresh()} replaces it")
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                found = _parse(json.loads(line), needed)
            except ValueError:
                continue  # a line cut short by a kill (or edited): that run runs again
            if found is not None:
                self.record(*found)
        path.unlink()

    def record(self, key: Key, metrics: Mapping[str, float]) -> None:
        """Keeps a finished run, in the journal when the tune has a folder."""
        self.done[key] = dict(metrics)
        if self._journal is not None:
            row = {"c": key[0], "l": key[1], "r": key[2], "m": dict(metrics)}
            self._journal.add_row(_point(key), key[2], row)

    def __enter__(self) -> TuneRuns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the journal (the runs recorded so far are kept)."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None


def _same_tune(out: Path, stored: str | None, digest: str) -> None:
    """Refuses to run into ``out`` when it holds the runs of another tune (``stored``)."""
    if stored is not None and stored != digest:
        raise ConfigError(
            f"{out} holds a different tune (other scenario, SLOs, knobs, loads or seed): "
            f"choose another {_out()}, or {_fresh()} to replace it",
            "out",
        )


def _stored_hash(spec: Path) -> str | None:
    """The hash of the tune whose definition ``spec`` (``tune.json``) holds; None if there is
    none; a one-line error if it is damaged."""
    if not os.path.lexists(spec):
        return None
    try:
        old = json.loads(read_limited(spec, "tune"))
        if not isinstance(old, dict):
            raise ValueError("not a JSON object")
    except (ConfigError, ValueError, UnicodeDecodeError):
        raise ConfigError(
            f"{spec}: damaged; run again with {_fresh()} to start over", "out"
        ) from None
    return str(old.get("hash"))


def _write_definition(out: Path, definition: Mapping[str, Any]) -> None:
    try:
        (out / "tune.json").write_text(
            json.dumps(definition, indent=2, default=str) + "\n", encoding="utf-8"
        )
    except OSError as e:
        raise ConfigError(f"{_out()} {out}: cannot write ({e.strerror})", "out") from None
