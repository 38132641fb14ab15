"""A sweep's journal: every finished run and warm-up pilot, committed as it completes.

It is an SQLite database (``DIR/journal.sqlite``). Each result is one transaction keyed by
(point id, replication), so a sweep killed at any instant leaves whole rows only, and a row
can never be written twice. A resumed sweep reads the journal and runs only what is missing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

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
"""


class Journal:
    """Finished rows by (point id, replication); pilots by point id."""

    def __init__(self, path: Path | None):
        """``path`` None keeps the journal in memory (nothing survives the process)."""
        self.path = path
        self._db = sqlite3.connect(":memory:" if path is None else str(path))
        if path is not None:
            # WAL: a commit is durable against a killed process without an fsync per row.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def rows(self) -> dict[tuple[str, int], dict[str, Any]]:
        cur = self._db.execute("SELECT point_id, replication, row FROM runs")
        return {(pid, rep): json.loads(row) for pid, rep, row in cur}

    def pilots(self) -> dict[str, dict[str, Any]]:
        cur = self._db.execute("SELECT point_id, result FROM pilots")
        return {pid: json.loads(result) for pid, result in cur}

    def add_row(self, point_id: str, replication: int, row: dict[str, Any]) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?, ?, ?)",
                (point_id, replication, json.dumps(row, allow_nan=True)),
            )

    def add_pilot(self, point_id: str, result: dict[str, Any]) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO pilots VALUES (?, ?)", (point_id, json.dumps(result))
            )

    def close(self) -> None:
        self._db.close()
