"""A sweep's journal: every finished run and warm-up pilot, committed as it completes.

It is an SQLite database (``DIR/journal.sqlite``). Each result is one transaction keyed by
(point id, replication), so a sweep killed at any instant leaves whole rows only, and a row
can never be written twice. A resumed sweep reads the journal and runs only what is missing;
rows stay on disk and are read a point at a time, so a sweep's memory does not grow with its
runs. The journal also keeps the definition of the sweep that wrote it, so that another sweep
cannot mix its runs in unnoticed.

A damaged journal (a truncated or partly overwritten file) is checked when it is opened. What
can still be read is copied into a new journal and the damaged file is kept beside it as
``journal.sqlite.damaged`` (with a :class:`JournalRecovered` warning); a file with nothing
readable, or that is not a sweep's journal, is refused with a message saying what to do.
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from irqlab.errors import IrqlabError, option
from irqlab.files import regular_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    point_id TEXT NOT NULL,
    replication INTEGER NOT NULL,
    row TEXT NOT NULL,
    PRIMARY KEY (point_id, replication)
);
CREATE TABLE IF NOT EXISTS pilots (
    point_id TEXT PRIMARY KEY,
    result TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
#: The columns of each table, as :data:`SCHEMA` creates them.
TABLES = {
    "runs": ("point_id", "replication", "row"),
    "pilots": ("point_id", "result"),
    "meta": ("key", "value"),
}
#: How long a write waits for another process holding the journal, seconds.
BUSY_TIMEOUT_S = 30


class JournalRecovered(UserWarning):
    """A damaged journal was replaced by what could be read from it."""


class _Damaged(Exception):
    """The file is an SQLite database whose pages cannot all be read."""


def _files(path: Path) -> list[Path]:
    """The journal and SQLite's companions (write-ahead log, shared memory)."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def remove(path: Path) -> None:
    """Deletes a journal and its companion files."""
    for p in _files(path):
        p.unlink(missing_ok=True)


def _problem(path: Path, e: sqlite3.Error) -> IrqlabError:
    """An SQLite error on ``path`` as one line saying what the user can do."""
    text = str(e)
    if "locked" in text or "busy" in text:
        return IrqlabError(
            f"{path}: in use by another process (another sweep writing to this folder?); "
            f"wait for it to finish, or use another {option('--out', 'out=')}"
        )
    if "full" in text:
        return IrqlabError(
            f"{path}: the disk is full; the runs finished so far are kept: free some space "
            "and run the sweep again to resume"
        )
    if "unable to open" in text or "readonly" in text:
        return IrqlabError(f"{path}: cannot open it for writing ({text})")
    return IrqlabError(f"{path}: {text}; run the sweep again to resume")


class Journal:
    """Finished rows by (point id, replication); pilots by point id; the sweep's definition."""

    def __init__(self, path: Path | None):
        """Opens (or creates) the journal at ``path``; None keeps it in memory (nothing
        survives the process). Use :func:`open_journal` to recover a damaged one."""
        self.path = path
        existed = path is not None and path.exists()
        for f in _files(path) if path is not None else ():
            if os.path.lexists(f):  # SQLite would wait on a pipe through Ctrl-C
                regular_file(
                    f,
                    "journal",
                    f"use another {option('--out', 'out=')}, or "
                    f"{option('--fresh', 'resume=False')} to replace it",
                )
        try:
            self._db = sqlite3.connect(
                ":memory:" if path is None else str(path), timeout=BUSY_TIMEOUT_S
            )
        except sqlite3.Error as e:
            raise _problem(path or Path(":memory:"), e) from None
        try:
            if path is not None:
                # WAL: a commit is durable against a killed process without an fsync per row.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            if existed:
                check = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
                if check != "ok":
                    raise _Damaged(check.strip().splitlines()[-1])
            self._db.executescript(SCHEMA)
            for table, columns in TABLES.items():
                found = tuple(r[1] for r in self._db.execute(f"PRAGMA table_info({table})"))
                if found != columns:
                    raise IrqlabError(
                        f"{path}: not a sweep's journal (its table {table} has the columns "
                        f"{', '.join(found)}); use another {option('--out', 'out=')}, or "
                        f"{option('--fresh', 'resume=False')} to replace it"
                    )
        except sqlite3.DatabaseError as e:
            self._db.close()
            if "not a database" in str(e) or "encrypted" in str(e):
                raise IrqlabError(
                    f"{path}: damaged beyond repair (not an SQLite database); run with "
                    f"{option('--fresh', 'resume=False')} to discard it and start the sweep "
                    f"over, or use another {option('--out', 'out=')}"
                ) from None
            if isinstance(e, sqlite3.OperationalError) and "malformed" not in str(e):
                raise _problem(path or Path(":memory:"), e) from None
            raise _Damaged(str(e)) from None
        except BaseException:
            self._db.close()
            raise
        #: (point id, replication) of the rows found damaged and deleted by :meth:`rows`.
        self.dropped: list[tuple[str, int]] = []

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise _problem(self.path or Path(":memory:"), e) from None

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        try:
            with self._db:
                self._db.execute(sql, args)
        except sqlite3.Error as e:
            raise _problem(self.path or Path(":memory:"), e) from None

    def done(self, point_ids: Iterable[str]) -> dict[str, int]:
        """The finished replications of each of ``point_ids``, as a bit mask (bit r: done)."""
        wanted = set(point_ids)
        masks: dict[str, int] = {}
        try:
            for pid, rep in self._db.execute("SELECT point_id, replication FROM runs"):
                if pid in wanted:
                    masks[pid] = masks.get(pid, 0) | (1 << rep)
        except sqlite3.Error as e:
            raise _problem(self.path or Path(":memory:"), e) from None
        return masks

    def rows(self, point_id: str, count: int) -> list[dict[str, Any]]:
        """The rows of replications 0 … count−1 of a point, in order (those finished).

        A row that is no longer a JSON object (damage the file's structure does not show) is
        deleted and left out, and its key added to :attr:`dropped`, so that it runs again.
        """
        found = self._read(
            "SELECT replication, row FROM runs WHERE point_id = ? AND replication < ? "
            "ORDER BY replication",
            (point_id, count),
        )
        out = []
        for rep, text in found:
            row = _json_object(text)
            if row is None:
                self._write(
                    "DELETE FROM runs WHERE point_id = ? AND replication = ?", (point_id, rep)
                )
                self.dropped.append((point_id, rep))
            else:
                out.append(row)
        return out

    def pilot_ids(self) -> set[str]:
        return {pid for (pid,) in self._read("SELECT point_id FROM pilots")}

    def pilot(self, point_id: str) -> dict[str, Any]:
        (found,) = self._read("SELECT result FROM pilots WHERE point_id = ?", (point_id,))
        pilot = _json_object(found[0])
        if pilot is None:
            self._write("DELETE FROM pilots WHERE point_id = ?", (point_id,))
            raise IrqlabError(
                f"{self.path}: a stored warm-up pilot was damaged and is now dropped; run the "
                "sweep again to resume (the pilot runs again)"
            )
        return pilot

    def add_row(self, point_id: str, replication: int, row: dict[str, Any]) -> None:
        self._write(
            "INSERT OR IGNORE INTO runs VALUES (?, ?, ?)",
            (point_id, replication, json.dumps(row, allow_nan=True)),
        )

    def add_pilot(self, point_id: str, result: dict[str, Any]) -> None:
        self._write("INSERT OR IGNORE INTO pilots VALUES (?, ?)", (point_id, json.dumps(result)))

    def definition(self) -> dict[str, Any] | None:
        """The definition of the sweep that wrote this journal (None: not recorded)."""
        found = self._read("SELECT value FROM meta WHERE key = 'definition'")
        return _json_object(found[0][0]) if found else None

    def set_definition(self, definition: dict[str, Any]) -> None:
        self._write(
            "INSERT OR REPLACE INTO meta VALUES ('definition', ?)",
            (json.dumps(definition, sort_keys=True),),
        )

    def close(self) -> None:
        self._db.close()


def open_journal(path: Path | None) -> Journal:
    """The journal at ``path``; a damaged one is first replaced by what can be read from it."""
    try:
        return Journal(path)
    except _Damaged as e:
        assert path is not None
        reason = str(e)
    runs, pilots = _salvage(path)
    warnings.warn(
        f"{path} was damaged ({reason}): recovered {runs} finished run(s) and {pilots} warm-up "
        f"pilot(s) from it, kept the damaged file as {path.name}.damaged; what was lost runs "
        "again",
        JournalRecovered,
        stacklevel=2,
    )
    return Journal(path)


def _readable(
    db: sqlite3.Connection, table: str, columns: str, bound: int
) -> Iterator[tuple[Any, ...]]:
    """Every row of ``table`` that can still be read, in rowid order, skipping damaged pages.

    Rows are read in order until a damaged page stops the scan; the scan then resumes after
    the last row read, skipping ahead by doubling steps until it reaches readable pages again
    (or passes ``bound``, a rowid no row can have).
    """
    after, skip = 0, 1
    while after <= bound:
        try:
            query = f"SELECT rowid, {columns} FROM {table} WHERE rowid > ? ORDER BY rowid"
            for rowid, *values in db.execute(query, (after,)):
                after, skip = rowid, 1
                yield tuple(values)
            return
        except sqlite3.DatabaseError:
            after += skip
            skip *= 2


def _salvage(path: Path) -> tuple[int, int]:
    """Copies what can be read of the damaged journal at ``path`` into a new one, which takes
    its place; the damaged files get the suffix ``.damaged``. Returns (runs, pilots) copied."""
    fresh = path.with_name(path.name + ".recovering")
    remove(fresh)
    bound = max(path.stat().st_size, 1 << 20)  # a row takes more than a byte
    copied = {"runs": 0, "pilots": 0}
    try:
        src = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
        # Read a truncated file as far as it goes (SQLite otherwise refuses a file shorter
        # than its header says), and never write to it.
        src.execute("PRAGMA writable_schema=ON")
        src.execute("PRAGMA query_only=ON")
        dst = sqlite3.connect(str(fresh))
        try:
            dst.executescript(SCHEMA)
            for table, columns in TABLES.items():
                try:
                    rows = list(_readable(src, table, ", ".join(columns), bound))
                except sqlite3.DatabaseError:  # the table itself cannot be found
                    continue
                for values in rows:
                    if table != "meta" and not _plausible(table, values):
                        continue
                    marks = ", ".join("?" * len(values))
                    dst.execute(f"INSERT OR IGNORE INTO {table} VALUES ({marks})", values)
                    copied[table] = copied.get(table, 0) + 1
            dst.commit()
        finally:
            dst.close()
            src.close()
    except sqlite3.Error as e:
        remove(fresh)
        raise IrqlabError(
            f"{path}: damaged, and nothing could be recovered from it ({e}); run with "
            f"{option('--fresh', 'resume=False')} to discard it and start the sweep over"
        ) from None
    for old in _files(path):
        if old.exists():
            os.replace(old, old.with_name(old.name.replace(path.name, path.name + ".damaged")))
    os.replace(fresh, path)
    return copied["runs"], copied["pilots"]


def _json_object(text: Any) -> dict[str, Any] | None:
    """``text`` as the JSON object it should be; None if it is not one (damaged)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _plausible(table: str, values: tuple[Any, ...]) -> bool:
    """Whether a row read from a damaged journal is whole: its key typed as written, its
    payload a JSON object."""
    if not isinstance(values[0], str):
        return False
    if table == "runs" and not (isinstance(values[1], int) and 0 <= values[1] < 1 << 16):
        return False
    return _json_object(values[-1]) is not None
