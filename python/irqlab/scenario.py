"""Scenario files: loading TOML, dotted-key overrides, and validation against the schema.

The schema (keys, types, defaults, allowed ranges) lives in the Rust core and is read from it,
so Python and Rust can never disagree about it. Validation happens twice: here, before
anything runs, with messages that name the key, the value and what is allowed; and again in
the core, which trusts nothing it is given.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from irqlab import _irqlab
from irqlab.errors import ConfigError

Scalar = bool | int | float | str
#: A scenario value: a scalar, or a list of scalars (``nic.irq_affinity = [0, 0, 1]``).
Value = Scalar | list[Scalar]

#: ``{table}.{index}.{field}``: a field of a numbered entry (``app.0.core``).
_INDEXED = re.compile(r"^(?P<table>[a-z_.]+?)\.(?P<index>0|[1-9][0-9]*)\.(?P<field>[a-z_]+)$")


@cache
def schema() -> dict[str, dict[str, Any]]:
    """The scenario schema: ``{dotted key: {type, default, allowed, doc, ...}}``, in order.

    Fields of numbered entries appear once, as ``{table}.N.{field}`` (``app.N.core``), with
    ``table``, ``noun`` and ``max_entries``.
    """
    return {p["key"]: p for p in _irqlab.schema()}


@cache
def tables() -> dict[str, dict[str, Any]]:
    """The numbered entries: ``{prefix: {noun, max_entries, doc, fields: {name: spec}}}``."""
    out: dict[str, dict[str, Any]] = {}
    for spec in schema().values():
        if "table" in spec:
            t = out.setdefault(
                spec["table"],
                {
                    "noun": spec["noun"],
                    "max_entries": spec["max_entries"],
                    "doc": spec["table_doc"],
                    "fields": {},
                },
            )
            t["fields"][spec["field"]] = spec
    return out


def spec_of(key: str) -> dict[str, Any] | None:
    """The schema entry of ``key`` (``app.3.core`` → the entry of ``app.N.core``), or None."""
    spec = schema().get(key)
    if spec is not None and "table" not in spec:
        return spec
    m = _INDEXED.match(key)
    if m and m["table"] in tables():
        return tables()[m["table"]]["fields"].get(m["field"])
    return None


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value)


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"traffic": {"rate_pps": 1}}`` → ``{"traffic.rate_pps": 1}``. Dotted keys pass through;
    an array of tables (``[[app]]``) becomes numbered keys (``app.0.core``)."""
    out: dict[str, Any] = {}
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, f"{key}."))
        elif isinstance(v, list | tuple) and v and all(isinstance(x, Mapping) for x in v):
            for i, entry in enumerate(v):
                fields = flatten(entry, f"{key}.{i}.")
                if not fields and key in tables():  # a bare [[app]]: every field its default
                    first = next(iter(tables()[key]["fields"].values()))
                    fields = {f"{key}.{i}.{first['field']}": first["default"]}
                out.update(fields)
        else:
            out[key] = v
    return out


def unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`flatten` (numbered keys become arrays of tables)."""
    tree: dict[str, Any] = {}
    entries: dict[str, dict[int, dict[str, Any]]] = {}
    for key, v in flat.items():
        m = _INDEXED.match(key)
        if m and m["table"] in tables():
            entries.setdefault(m["table"], {}).setdefault(int(m["index"]), {})[m["field"]] = v
            continue
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = v
    for table, by_index in entries.items():
        node = tree
        *parents, leaf = table.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = [by_index[i] for i in sorted(by_index)]
    return tree


def _unknown(key: str) -> ConfigError:
    m = _INDEXED.match(key)
    if m and m["table"] in tables():
        t = tables()[m["table"]]
        fields = list(t["fields"])
        close = difflib.get_close_matches(m["field"], fields, n=1, cutoff=0.6)
        if close:
            hint = f" (did you mean '{m['table']}.{m['index']}.{close[0]}'?)"
        else:
            hint = f"; fields of {m['table']} are: {', '.join(fields)}"
        return ConfigError(f"unknown key '{key}'{hint}", key)
    keys = [k for k, s in schema().items() if "table" not in s]
    close = difflib.get_close_matches(key, keys, n=1, cutoff=0.75)
    if close:
        hint = f" (did you mean '{close[0]}'?)"
    else:
        section = key.split(".")[0]
        in_section = [k for k in keys if k.startswith(section + ".")]
        if in_section:
            hint = f"; keys of [{section}] are: {', '.join(in_section)}"
        else:
            tops = list(dict.fromkeys([k.split(".")[0] for k in keys] + list(tables())))
            hint = f"; top-level keys and sections are: {', '.join(tops)}"
    return ConfigError(f"unknown key '{key}'{hint}", key)


def check_value(key: str, value: Any) -> Value:
    """Checks one value against the schema; returns it normalised (ints kept for float keys,
    lists as lists)."""
    spec = spec_of(key)
    if spec is None:
        raise _unknown(key)
    m = _INDEXED.match(key)
    if m and m["table"] in tables():
        limit = tables()[m["table"]]["max_entries"]
        if int(m["index"]) >= limit:
            raise ConfigError(
                f"{key}: at most {limit} entries of {m['table']} (N = 0 … {limit - 1})", key
            )
    typ = spec["type"]
    allowed = spec["allowed"]

    def bad(msg: str) -> ConfigError:
        return ConfigError(f"{key} = {_fmt(value)}: {msg}", key)

    if isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a value ({allowed}), got a table", key)
    if typ == "int_list":
        if not isinstance(value, list | tuple):
            raise bad("expected a list of integers")
        if len(value) > spec["max_len"]:
            raise bad(f"must be {allowed}")
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int):
                raise bad("expected a list of integers")
            if not spec["min"] <= item <= spec["max"]:
                raise bad(f"must be {allowed}")
        return list(value)
    if isinstance(value, list | tuple):
        raise ConfigError(f"{key}: expected a single value ({allowed}), got a list", key)
    if typ == "bool":
        if not isinstance(value, bool):
            raise bad("expected true or false")
        return value
    if typ in ("str", "text"):
        if not isinstance(value, str):
            raise bad("expected a string")
        if typ == "str" and value not in spec["choices"]:
            raise bad(f"must be {allowed}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad("expected an integer" if typ == "int" else "expected a number")
    if typ == "int":
        if not isinstance(value, int):
            raise bad("expected an integer")
        ok = value in spec["choices"] if "choices" in spec else spec["min"] <= value <= spec["max"]
        if not ok:
            raise bad(f"must be {allowed}")
        return value
    x = float(value)
    low_ok = x > spec["min"] if spec.get("min_exclusive") else x >= spec["min"]
    if not math.isfinite(x) or not low_ok or x > spec["max"]:
        raise bad(f"must be {allowed}")
    return value


def parse_override(text: str) -> tuple[str, Value]:
    """Parses ``--set dotted.key=value``; the value is read as TOML, else taken as a string."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected dotted.key=value", None)
    key, raw = (s.strip() for s in text.split("=", 1))
    if not key:
        raise ConfigError(f"--set {text!r}: the key is empty", None)
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def _policy_paths(tree: dict[str, Any], here: Path) -> dict[str, Any]:
    """A file's ``driver.policy = "file.py:Class"`` made absolute (a relative file is the
    file's neighbour), in a scenario and in a sweep file's ``[base]``."""
    from irqlab.policy import absolute

    for table in (tree, tree.get("base")):
        if not isinstance(table, dict):
            continue
        driver = table.get("driver")
        if isinstance(driver, dict) and isinstance(driver.get("policy"), str):
            driver["policy"] = absolute(driver["policy"], here)
        if isinstance(table.get("driver.policy"), str):
            table["driver.policy"] = absolute(table["driver.policy"], here)
    return tree


def load_toml(path: str | Path) -> dict[str, Any]:
    """Reads a TOML file, turning I/O and syntax errors into :class:`ConfigError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such file", None) from None
    except OSError as e:
        raise ConfigError(f"{p}: cannot read ({e.strerror})", None) from None
    try:
        return _policy_paths(tomllib.loads(text), p.parent)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}", None) from None


def load_scenario(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
    *,
    seed: int | None = None,
) -> dict[str, Value]:
    """Builds a flat, validated scenario from a file or dict plus dotted-key overrides.

    Returns only the keys given (the core fills in defaults); see :func:`resolve` for all.
    """
    if scenario is None:
        tree: Mapping[str, Any] = {}
    elif isinstance(scenario, str | Path):
        tree = load_toml(scenario)
    else:
        tree = scenario
    flat = flatten(tree)
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    for key, value in items:
        # a table or an array of tables given whole (--set 'traffic.classes=[{...}, {...}]')
        # replaces the entries of that table
        if isinstance(value, Mapping) or (
            isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value)
        ):
            if isinstance(value, list | tuple):
                flat = {k: v for k, v in flat.items() if not k.startswith(f"{key}.")}
            flat.update(flatten({key: value}))
        else:
            flat[key] = value
    if seed is not None:
        flat["run.seed"] = seed
    return {key: check_value(key, value) for key, value in flat.items()}


def resolve(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
    *,
    seed: int | None = None,
) -> dict[str, Value]:
    """Every key of the scenario with its value, defaults filled in, validated by the core."""
    return dict(_irqlab.resolve(load_scenario(scenario, overrides, seed=seed)))


def frame_sizes(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
) -> list[tuple[int, float]]:
    """The scenario's frame sizes as ``[(bytes, probability), ...]`` (one pair if fixed)."""
    return [(int(b), float(p)) for b, p in _irqlab.frame_sizes(load_scenario(scenario, overrides))]


def mean_frame_bytes(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
) -> float:
    """Mean frame size of the scenario, bytes: ``traffic.size_bytes`` or the table's mean.

    >>> mean_frame_bytes({"traffic": {"sizes": "64:1, 1518:1"}})
    791.0
    """
    return sum(b * p for b, p in frame_sizes(scenario, overrides))
