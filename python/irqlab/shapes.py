"""The shape of the files irqlab writes, checked when they are read back.

A result is a folder of files anyone can open and edit: a run's JSON report, a sweep's
``sweep.json`` and tables, a tune's JSON and CSV files. Before a page or a figure is made of
one, its shape is checked here, so that a field changed by hand (a number that became text, a
group that became a list, a ``null``, a row of ``NaN``) is one :class:`ConfigError` naming the
file, the field and what it should hold, instead of a failure deep in the code that uses it.

Shapes are small values: :data:`NUMBER`, :class:`Obj` (an object whose known fields have
shapes of their own), :class:`ListOf`, :class:`MapOf`, :class:`Either`. A run's report is
checked against the shape of a report the core makes now (:func:`report_shape`), so that a
field the core adds is known without a list to keep up to date here.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from irqlab.errors import ConfigError

if TYPE_CHECKING:
    from irqlab.core import Report


class _Bad(Exception):
    """Where a value differs from its shape, and what was expected there."""

    def __init__(self, where: str, expected: str, value: Any) -> None:
        super().__init__(where)
        self.where, self.expected, self.value = where, expected, value


@dataclass(frozen=True)
class Kind:
    """A scalar: ``test`` says whether a value is one; ``name`` what it is, in words."""

    name: str
    test: Any

    def check(self, value: Any, where: str) -> None:
        if not self.test(value):
            raise _Bad(where, self.name, value)


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _is_integer(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


NUMBER = Kind("a number", _is_number)
NUMBER_OR_NULL = Kind("a number or null", lambda v: v is None or _is_number(v))
INTEGER = Kind("an integer", _is_integer)
COUNT = Kind("an integer >= 1", lambda v: _is_integer(v) and v >= 1)
TEXT = Kind("text", lambda v: isinstance(v, str))
SCALAR = Kind("a number, text or true/false", lambda v: isinstance(v, str | bool) or _is_number(v))
ANY = Kind("anything", lambda v: True)
NULL = Kind("null", lambda v: v is None)


@dataclass(frozen=True)
class Obj:
    """An object (a JSON ``{}``) whose ``fields`` have the given shapes; ``required`` ones
    must be there; any other field has the shape ``other``."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    other: Any = ANY
    name: str = "an object {...}"

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, Mapping):
            raise _Bad(where, self.name, value)
        for key in sorted(self.required - set(value)):
            raise _Bad(_join(where, key), "a value (it is missing)", _MISSING)
        for key, v in value.items():
            shape = self.fields.get(key, self.other)
            shape.check(v, _join(where, str(key)))


@dataclass(frozen=True)
class ListOf:
    """A list whose every entry has the shape ``entry``; at least ``least`` entries."""

    entry: Any
    least: int = 0

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, list | tuple):
            raise _Bad(where, "a list [...]", value)
        if len(value) < self.least:
            raise _Bad(where, f"a list of at least {self.least} entries", value)
        for i, v in enumerate(value):
            self.entry.check(v, f"{where}[{i}]")

    @property
    def name(self) -> str:
        return "a list [...]"


@dataclass(frozen=True)
class MapOf:
    """An object mapping text keys to values of the shape ``value``."""

    value: Any
    name: str = "an object {...}"

    def check(self, v: Any, where: str) -> None:
        if not isinstance(v, Mapping):
            raise _Bad(where, self.name, v)
        for key, x in v.items():
            if not isinstance(key, str):
                raise _Bad(where, "an object with text keys", v)
            self.value.check(x, _join(where, key))


@dataclass(frozen=True)
class Either:
    """One of ``shapes``."""

    shapes: tuple[Any, ...]

    @property
    def name(self) -> str:
        names: list[str] = [s.name for s in self.shapes]
        return ", ".join(names[:-1]) + " or " + names[-1]

    def check(self, value: Any, where: str) -> None:
        for s in self.shapes:
            try:
                s.check(value, where)
                return
            except _Bad as e:
                if e.where != where:  # the right kind, wrong inside: that is the problem
                    raise
        raise _Bad(where, self.name, value)


_MISSING = object()


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _got(value: Any) -> str:
    """What a value is, in words, with the value when it is short."""
    if value is _MISSING:
        return "nothing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "an object {...}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "…"
    if isinstance(value, str):
        return f"text {text}"
    return text


def check(value: Any, shape: Any, source: str | Path) -> Any:
    """``value`` if it has ``shape``; else a :class:`ConfigError` naming ``source`` (the
    file), the field and what it should hold."""
    try:
        shape.check(value, "")
    except _Bad as e:
        what = f"field {e.where}" if e.where else "the file"
        raise ConfigError(
            f"{source}: {what}: expected {e.expected}, got {_got(e.value)} (changed by hand, "
            "or damaged?)",
            e.where or None,
        ) from None
    return value


# --- a run's report --------------------------------------------------------------------------

#: The values a scenario's key takes: a scalar, or a list of them (``nic.irq_affinity``).
SCENARIO_VALUE = Either((SCALAR, ListOf(SCALAR)))


@dataclass(frozen=True)
class Scenario(MapOf):
    """A scenario as flat dotted keys: values of :data:`SCENARIO_VALUE`, and no key inside
    another's value (``nic.itr_us`` and ``nic.itr_us.x``): it would have no TOML."""

    value: Any = SCENARIO_VALUE
    name: str = "a scenario (an object {key: value})"

    def check(self, v: Any, where: str) -> None:
        super().check(v, where)
        keys = set(v)
        for key in v:
            parts = key.split(".")
            for i in range(1, len(parts)):
                if ".".join(parts[:i]) in keys:
                    inner = ".".join(parts[:i])
                    raise _Bad(
                        _join(where, key), f"no key inside {inner!r}, which has a value", v[key]
                    )


SCENARIO = Scenario()


def _shape_of(value: Any) -> Any:
    """The shape of a value of a report the core made: numbers may be null (not measured)."""
    if isinstance(value, Mapping):
        return Obj({k: _shape_of(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        if value and all(isinstance(e, Mapping) for e in value):
            merged: dict[str, Any] = {}
            for e in value:
                merged.update(e)
            return ListOf(_shape_of(merged))
        if value and all(_is_number(e) for e in value):
            return ListOf(NUMBER)
        return ListOf(ANY)
    if isinstance(value, str):
        return TEXT
    if isinstance(value, bool):
        return Kind("true or false", lambda v: isinstance(v, bool))
    return NUMBER_OR_NULL


@cache
def report_shape() -> Obj:
    """The shape of a run's report (``irqlab run --format json``): that of a report the core
    makes now of a tiny scenario with every list of entries filled, and the fields a page
    needs as they are."""
    from irqlab import core

    sample = core.run(
        {
            "run.duration_ms": 0.01,
            "run.warmup_ms": 0.0,
            "traffic.rate_pps": 1e6,
            "app.0.core": 0,
            "host.forward": True,
        }
    )
    shape = _shape_of({k: v for k, v in sample.items() if k != "scenario"})
    fields = dict(shape.fields)
    fields.update(
        scheme=TEXT, seed=INTEGER, replication=INTEGER, measured_s=NUMBER, scenario=SCENARIO
    )
    return Obj(fields, frozenset(), ANY, "a run's report (an object {...})")


def check_report(report: Any, source: str | Path) -> Report:
    """``report`` (a run's JSON report, read from ``source``) if its fields have their
    shapes; else a :class:`ConfigError` naming the field. (A field may be missing: a report
    edited by hand, or of an older irqlab.)"""
    return cast("Report", check(report, report_shape(), source))


# --- a sweep's definition and tables -----------------------------------------------------------

SWEEP_DEFINITION = Obj(
    {
        "base": SCENARIO,
        "axes": MapOf(ListOf(SCENARIO_VALUE, least=1)),
        "replications": COUNT,
        "seed": Either((INTEGER, NULL)),
        "warmup": Either((NUMBER, Kind('"auto"', lambda v: v == "auto"), NULL)),
        "precision": Either(
            (
                NULL,
                Obj(
                    {
                        "metrics": ListOf(TEXT, least=1),
                        "relative": NUMBER,
                        "confidence": NUMBER,
                        "max_replications": COUNT,
                    },
                    frozenset({"metrics", "relative", "confidence", "max_replications"}),
                ),
            )
        ),
    },
    frozenset({"base", "axes", "replications"}),
    name="a sweep's definition (an object {...})",
)


def check_columns(
    table: Any,
    source: str | Path,
    integers: Iterable[str] = (),
    numbers_: Iterable[str] = (),
    least: Mapping[str, int] | None = None,
) -> Any:
    """``table`` (a DataFrame read from ``source``) if each of ``integers`` holds whole
    numbers in every row (no empty cell: they identify the rows) and each of ``numbers_`` is
    numeric (empty cells allowed: not measured); ``least`` gives columns' smallest values.
    Columns that are not there are not checked (what needs them says so)."""
    import pandas as pd

    least = dict(least or {})
    for col in integers:
        if col not in table.columns:
            continue
        values = pd.to_numeric(table[col], errors="coerce")
        bad = values.isna() | (values != values.round()) | ~values.map(_finite)
        if col in least:
            bad |= values < least[col]
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            floor = f" >= {least[col]}" if col in least else ""
            raise ConfigError(
                f"{source}: row {i + 1}, column {col!r}: expected an integer{floor} in every row, "
                f"got {_got(_plain(table[col].iloc[i]))} (changed by hand, or damaged?)",
                col,
            )
    for col in numbers_:
        if col not in table.columns:
            continue
        column = table[col]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            continue
        values = pd.to_numeric(column, errors="coerce")
        bad = values.isna() & column.notna()
        i = int(bad.to_numpy().nonzero()[0][0]) if bad.any() else 0
        raise ConfigError(
            f"{source}: row {i + 1}, column {col!r}: expected a number, got "
            f"{_got(_plain(column.iloc[i]))} (changed by hand, or damaged?)",
            col,
        )
    return table


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _plain(v: Any) -> Any:
    if hasattr(v, "item") and not isinstance(v, str):
        return v.item()
    return v


def metric_columns(columns: Sequence[str]) -> list[str]:
    """The columns of a sweep's table that hold measured numbers: the metrics and their
    spreads (``M``, ``M.std``, ``M.ci95``, ``M.rel``), not the entries' names."""
    from irqlab.experiments import metric_templates
    from irqlab.report import is_entry_label, template

    known = set(metric_templates())
    out = []
    for c in columns:
        head, _, suffix = c.rpartition(".")
        name = head if suffix in ("std", "ci95", "rel") else c
        if template(name) in known and not is_entry_label(name):
            out.append(c)
    return out


# --- a tune's definition and recommendation ----------------------------------------------------

TUNE_DEFINITION = Obj(
    {
        "scenario": SCENARIO,
        "slos": ListOf(TEXT, least=1),
        "minimize": TEXT,
        "candidates": ListOf(SCENARIO),
        "loads": ListOf(NUMBER, least=1),
        "confidence": NUMBER,
        "replications": Kind(
            "[least, most] replications (two integers)",
            lambda v: isinstance(v, list) and len(v) == 2 and all(_is_integer(x) for x in v),
        ),
    },
    frozenset({"scenario", "slos", "minimize", "candidates", "loads", "confidence"})
    | {"replications"},
    name="a tune's definition (an object {...})",
)
TUNE_RECOMMENDATION = Obj(
    {
        "feasible": Kind("true or false", lambda v: isinstance(v, bool)),
        "recommended": Either((NULL, SCENARIO)),
        "commands": ListOf(TEXT),
        "runs": Either((NULL, INTEGER)),
    },
    frozenset({"feasible"}),
    name="a tune's recommendation (an object {...})",
)
