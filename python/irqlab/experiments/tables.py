"""A sweep's tables: the runs table built from its journal, the summary per point, their
files (written atomically, read back checked), and the scenario of any one row."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from irqlab.errors import ConfigError, IrqlabError
from irqlab.experiments.journal import Journal
from irqlab.experiments.spec import SweepSpec, is_parameter
from irqlab.experiments.statistics import summarize
from irqlab.files import regular_file
from irqlab.report.flat import (
    decode_list,
    is_entry_label,
)
from irqlab.scenario import (
    schema,
    spec_of,
    tables,
)
from irqlab.shapes import check_columns, metric_columns

#: Rows turned into a data frame at a time when the runs table is built from the journal.
TABLE_CHUNK = 2_000
#: Columns a sweep adds to each run's row.
BOOKKEEPING = ("point", "replication", "point_id", "warmup.method", "warmup.reliable")


def runs_table(
    spec: SweepSpec, ids: Sequence[str], journal: Journal, targets: Sequence[int]
) -> pd.DataFrame | None:
    """The runs table, read from the journal a point at a time and built in chunks of rows
    (a row as a Python dict takes ~10× its place in a data frame). None if some rows were
    found damaged (:attr:`Journal.dropped`): they must run again first."""
    frames: list[pd.DataFrame] = []
    shapes: dict[tuple[str, ...], None] = {}  # each distinct list of column names, in order
    chunk: list[dict[str, Any]] = []
    for i, pid in enumerate(ids):
        rows = journal.rows(pid, targets[i])
        if journal.dropped:
            return None
        if len(rows) != targets[i]:
            raise IrqlabError(
                f"{journal.path}: runs of point {i} went missing while the sweep ran "
                "(another process discarded the journal?); run the sweep again"
            )
        for r, row in enumerate(rows):
            record = {"point": i, "replication": r, **row}
            shapes.setdefault(tuple(record), None)
            chunk.append(record)
        if len(chunk) >= TABLE_CHUNK:
            frames.append(pd.DataFrame.from_records(chunk))
            chunk = []
    if chunk or not frames:
        frames.append(pd.DataFrame.from_records(chunk))
    names = _merged_order(list(shapes))
    axes = [a.key for a in spec.axes]
    metrics = [c for c in names if c not in BOOKKEEPING and not is_parameter(c)]
    params = sorted((c for c in names if is_parameter(c) and c not in axes), key=_param_order)
    columns = ["point", "replication", *axes, *metrics, *params, *BOOKKEEPING[2:]]
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    del frames
    df = df.reindex(columns=columns)
    for m in metrics:
        if df[m].dtype == object and not _is_text(df[m]):
            # a metric that was None (nothing delivered), or absent (fewer cores), in some row
            df[m] = pd.to_numeric(df[m]).astype("float64")
    return df


def _is_text(column: pd.Series) -> bool:
    """A column of strings (``per_class.0.class``, ``per_core.0.vectors``), NaN where absent."""
    return any(isinstance(v, str) for v in column)


def _merged_order(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every name of ``lists``, each list's order kept: a name new in a later list goes right
    after the name it follows there (``per_core.1.*`` after ``per_core.0.*``)."""
    order: list[str] = []
    known: set[str] = set()
    for names in lists:
        if all(n in known for n in names):
            continue
        pending: dict[str | None, list[str]] = {}
        anchor: str | None = None
        for n in names:
            if n in known:
                anchor = n
            else:
                pending.setdefault(anchor, []).append(n)
        merged = list(pending.get(None, []))
        for n in order:
            merged.append(n)
            merged += pending.get(n, [])
        order = merged
        known.update(names)
    return order


@cache
def _param_order(key: str) -> tuple[int, int, int]:
    """Schema order; a numbered key by its table, then entry, then field."""
    keys = list(schema())
    if key in schema():
        return (keys.index(key), 0, 0)
    spec = spec_of(key)
    if spec is None:
        return (len(keys), 0, 0)
    fields = list(tables()[spec["table"]]["fields"].values())
    index = int(key[len(spec["table"]) + 1 :].split(".", 1)[0])
    return (keys.index(fields[0]["key"]), index, fields.index(spec))


def table_columns(runs: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """A runs table's columns by role: parameters (but ``run.replication``), labels (fields that
    name an entry, like ``per_core.0.vectors``, and other text) and metrics (the rest)."""
    params = [c for c in runs.columns if is_parameter(c) and c != "run.replication"]
    skip = {*BOOKKEEPING, "run.replication", *params}
    labels: list[str] = []
    metrics: list[str] = []
    for c in runs.columns:
        if c in skip:
            continue
        numeric = pd.api.types.is_numeric_dtype(runs[c]) and not pd.api.types.is_bool_dtype(runs[c])
        (metrics if numeric and not is_entry_label(c) else labels).append(c)
    return params, labels, metrics


def summary_table(runs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per point: parameters, entry labels, ``n``, and per metric its mean, std, CI
    and precision."""
    params, labels, metrics = table_columns(runs)
    return summarize(runs, [*params, *labels], metrics, confidence)


def write_results(runs: pd.DataFrame, out: Path) -> None:
    """``runs.parquet``, ``summary.parquet`` and ``summary.csv`` in ``out``, each replaced
    atomically (a reader never sees half a file); the Parquet pages carry checksums, so that
    :func:`load_results` notices a damaged one."""
    summary = summary_table(runs)
    tmp = out / "runs.parquet.tmp"
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, df in (("runs.parquet", runs), ("summary.parquet", summary)):
            tmp = out / (name + ".tmp")
            df.to_parquet(tmp, index=False, write_page_checksum=True)
            os.replace(tmp, out / name)
        tmp = out / "summary.csv.tmp"
        summary.to_csv(tmp, index=False)
        os.replace(tmp, out / "summary.csv")
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise IrqlabError(
            f"{tmp}: cannot write it ({e.strerror or e}); every run is kept in the journal: "
            "run the sweep again to write the tables"
        ) from None


def load_results(path: str | os.PathLike[str], kind: str = "summary") -> pd.DataFrame:
    """A sweep's ``summary`` or ``runs`` table from its directory (or a .parquet/.csv file).

    A missing or damaged table is a :class:`ConfigError` that says how to get it back: the
    sweep's journal rewrites it when the sweep is run again into its folder.
    """
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            "path: expected a sweep's directory or a .parquet or .csv file (str or "
            f"pathlib.Path), got {type(path).__name__}",
            "path",
        )
    p = Path(path)
    in_folder = p.is_dir()
    if in_folder:
        for candidate in (p / f"{kind}.parquet", p / f"{kind}.csv"):
            if candidate.exists():
                p = candidate
                break
        else:
            if (p / "journal.sqlite").exists():
                raise ConfigError(
                    f"{path}: no {kind} table yet (the sweep has not finished); run the sweep "
                    "into it again: it resumes, then writes the tables",
                    None,
                )
            raise ConfigError(f"{path}: no {kind}.parquet or {kind}.csv (not a sweep?)", None)
    if not p.exists():
        raise ConfigError(f"{p}: no such file", None)
    regular_file(p, "results")  # pyarrow would wait on a pipe through Ctrl-C
    suffix = p.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        hint = ""
        if suffix == ".toml":  # the sweep or scenario file itself, not what it wrote
            hint = "; a TOML file is a sweep or scenario, not its results: give the folder "
            hint += "the sweep wrote (its --out, sweep.out, else results/<file name>)"
        raise ConfigError(f"{p}: expected a sweep's folder, a .parquet or a .csv file{hint}", None)
    import pyarrow

    try:
        if suffix == ".csv" and in_folder and not _ends_a_line(p):
            raise ValueError("it stops in the middle of a line: truncated")
        if suffix == ".parquet":
            table = pd.read_parquet(p, page_checksum_verification=True)
        else:
            table = pd.read_csv(p)
    except (OSError, ValueError, pyarrow.ArrowException) as e:
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
        reason = re.sub(r"^Could not open Parquet input source '.*?': ", "", reason)
        reason = reason.split(". ")[0].rstrip(".")
        if (p.parent / "journal.sqlite").exists():
            remedy = (
                f"running the sweep into {p.parent} again rewrites it from the journal "
                "(nothing runs again)"
            )
        else:
            remedy = "run the sweep again to write it"
        raise ConfigError(
            f"{p}: damaged or not a {suffix[1:]} table ({reason}); {remedy}", None
        ) from None
    # a table edited by hand: the columns that name rows are there and hold whole numbers,
    # the metrics numbers
    if in_folder:
        for column in ("point", "n" if kind == "summary" else "replication"):
            if column not in table.columns:
                raise ConfigError(f"{p}: no column {column!r} (changed by hand, or damaged?)", None)
    return check_columns(
        table,
        p,
        integers=("point", "n", "replication"),
        numbers_=metric_columns(list(table.columns)),
        least={"point": 0, "n": 1, "replication": 0},
    )


def _ends_a_line(path: Path) -> bool:
    """Whether a file ends with a newline, as every table a sweep writes does."""
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True  # empty: pandas says so
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def row_scenario(row: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario of one row of a runs table: exactly what ran, ready for :func:`irqlab.run`.

    Every parameter column becomes its scenario value again: ``"[0, 1]"`` a list, numpy
    scalars Python ones. A numbered key that is empty (NaN) in this row belongs to an entry
    other points have and this one does not, and is left out.
    """
    out: dict[str, Any] = {}
    for key, value in row.items():
        spec = spec_of(key)
        if spec is None:
            continue
        if hasattr(value, "item") and not isinstance(value, str):  # numpy scalar → Python
            value = value.item()
        if isinstance(value, float) and value != value and "table" in spec:
            continue
        typ = spec["type"]
        try:
            if typ == "int_list":
                value = decode_list(value)
            elif typ == "bool":
                value = bool(value)
            elif typ == "int":
                value = int(value)
            elif typ == "float":
                value = float(value)
            elif isinstance(value, float) and value != value:
                value = ""  # an empty text cell of a CSV file reads as NaN
        except (ValueError, TypeError, OverflowError):  # a table edited by hand
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "…"
            raise ConfigError(
                f"column {key!r} = {shown}: expected {_TYPE_WORDS.get(typ, typ)}", key
            ) from None
        out[key] = value
    return out


#: A scenario key's type, as a row's error says it.
_TYPE_WORDS = {
    "int_list": "a list of integers, e.g. [0, 1]",
    "int": "an integer",
    "float": "a number",
}
