"""Scenario files: loading TOML, dotted-key overrides, and validation against the schema.

The schema (keys, types, defaults, allowed ranges) lives in the Rust core and is read from it,
so Python and Rust can never disagree about it. Validation happens twice: here, before
anything runs, with messages that name the key, the value and what is allowed; and again in
the core, which trusts nothing it is given. Whatever arrives — a file that is not UTF-8 TOML,
arguments of the wrong type, numpy scalars, ``"key=value"`` strings — ends in a valid
scenario or a :class:`ConfigError` that names the argument or key; the core adds the
settings that have no effect in the scenario, which :func:`resolve` shows as
:class:`ConfigWarning`.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import os
import re
import tomllib
import warnings
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

from irqlab import core
from irqlab.core import KeySpec, ResolvedScenario, Value
from irqlab.core import Scalar as Scalar  # irqlab.scenario.Scalar, as before
from irqlab.errors import ConfigError, ConfigWarning, option

#: What ``overrides`` may be: ``{key: value}``, ``(key, value)`` pairs, ``"key=value"`` strings.
Overrides = Mapping[str, Any] | Iterable[tuple[str, Any] | str] | str | None

#: ``{table}.{index}.{field}``: a field of a numbered entry (``app.0.core``).
_INDEXED = re.compile(r"^(?P<table>[a-z_.]+?)\.(?P<index>0|[1-9][0-9]*)\.(?P<field>[a-z_]+)\Z")

#: How much of a long value or path a message shows.
_SHOWN_CHARS = 64
_SHOWN_ITEMS = 16


@cache
def schema() -> dict[str, KeySpec]:
    """The scenario schema: ``{dotted key: {type, default, allowed, doc, ...}}``, in order.

    Fields of numbered entries appear once, as ``{table}.N.{field}`` (``app.N.core``), with
    ``table``, ``noun`` and ``max_entries``.
    """
    return {p["key"]: p for p in core.schema()}


class EntryTable(TypedDict):
    """A table of numbered entries (``[[app]]``): what an entry is, how many there may be,
    and the schema of each field."""

    noun: str
    max_entries: int
    doc: str
    fields: dict[str, KeySpec]


@cache
def tables() -> dict[str, EntryTable]:
    """The numbered entries: ``{prefix: {noun, max_entries, doc, fields: {name: spec}}}``."""
    out: dict[str, EntryTable] = {}
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


def spec_of(key: str) -> KeySpec | None:
    """The schema entry of ``key`` (``app.3.core`` → the entry of ``app.N.core``), or None."""
    spec = schema().get(key)
    if spec is not None and "table" not in spec:
        return spec
    m = _INDEXED.match(key)
    if m and m["table"] in tables():
        return tables()[m["table"]]["fields"].get(m["field"])
    return None


def _quote(text: str) -> str:
    """``text`` in double quotes, control characters escaped, cut if long."""
    if len(text) > _SHOWN_CHARS:
        head = json.dumps(text[: _SHOWN_CHARS - 16], ensure_ascii=False)[:-1]
        return f'{head}…" ({len(text)} characters)'
    return json.dumps(text, ensure_ascii=False)


def _fmt(value: Any) -> str:
    """A value as a message shows it (as the core does: TOML-like, long values cut)."""
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.1f}"
    if isinstance(value, int) and abs(value) >= 10**_SHOWN_CHARS:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, list | tuple):
        shown = ", ".join(_fmt(v) for v in value[:_SHOWN_ITEMS])
        if len(value) > _SHOWN_ITEMS:
            return f"[{shown}, …] ({len(value)} entries)"
        return f"[{shown}]"
    if isinstance(value, Mapping):
        return "a table"
    text = value.isoformat() if hasattr(value, "isoformat") else repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 16] + "…"


def _printable(text: str) -> str:
    """``text`` with control characters (a newline in a key or file name) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def show_key(text: str) -> str:
    """A key as a message shows it: control characters escaped, cut if long."""
    cut = _printable(text[:_SHOWN_CHARS])
    return cut + (f"… ({len(text)} characters)" if len(text) > _SHOWN_CHARS else "")


def plain(value: Any) -> Any:
    """A value as Python's own types: numpy scalars and arrays become Python numbers, bools
    and lists, ``pathlib.Path`` and other path objects strings, tuples lists; anything else is
    returned as it is (and rejected by :func:`check_value`)."""
    if isinstance(value, bool | str | int | float) and type(value) in (bool, str, int, float):
        return value
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy scalar or array
        value = value.tolist()
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        return path if isinstance(path, str) else value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"traffic": {"rate_pps": 1}}`` → ``{"traffic.rate_pps": 1}``. Dotted keys pass through;
    an array of tables (``[[app]]``) becomes numbered keys (``app.0.core``)."""
    out: dict[str, Any] = {}
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            if spec_of(key) is not None:  # a table where a value belongs: check_value says so
                out[key] = v
                continue
            if not v and not _is_section(key):  # an empty [table] the schema does not know
                raise _unknown(key)
            out.update(flatten(v, f"{key}."))
        elif isinstance(v, list | tuple) and key in tables() and not v:
            continue  # app = []: no entries
        elif isinstance(v, list | tuple) and v and all(isinstance(x, Mapping) for x in v):
            for i, entry in enumerate(v):
                fields = flatten(entry, f"{key}.{i}.")
                if not fields:  # a bare [[app]]: every field its default
                    if key not in tables():
                        raise _unknown(key)
                    first = next(iter(tables()[key]["fields"].values()))
                    fields = {f"{key}.{i}.{first['field']}": first["default"]}
                out.update(fields)
        else:
            out[key] = v
    return out


def _is_section(name: str) -> bool:
    """Whether ``name`` is a table of the schema (``nic``, ``traffic``, ``app``, ``app.0``)."""
    m = re.fullmatch(r"(?P<table>.+)\.(0|[1-9][0-9]*)", name)
    if m and m["table"] in tables():
        return True
    return name in tables() or any(k.startswith(name + ".") for k in schema())


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
        return ConfigError(f"unknown key '{show_key(key)}'{hint}", key)
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
    return ConfigError(f"unknown key '{show_key(key)}'{hint}", key)


def check_key(key: Any) -> KeySpec:
    """The schema entry of ``key``, or a :class:`ConfigError` saying it is no key (with the
    closest one)."""
    if not isinstance(key, str):
        raise ConfigError(
            f"key {_fmt(key)}: keys are strings, dotted names like 'traffic.rate_pps'", None
        )
    spec = spec_of(key)
    if spec is None:
        raise _unknown(key)
    return spec


def check_value(key: str, value: Any) -> Value:
    """Checks one value against the schema; returns it normalised (ints kept for float keys,
    lists as lists, numpy scalars and paths as Python numbers and strings)."""
    spec = check_key(key)
    value = plain(value)
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
    try:
        x = float(value)
    except OverflowError:  # an integer beyond any float
        raise bad(f"must be {allowed}") from None
    low_ok = x > spec["min"] if spec.get("min_exclusive") else x >= spec["min"]
    if not math.isfinite(x) or not low_ok or x > spec["max"]:
        raise bad(f"must be {allowed}")
    return value


def parse_override(text: str, where: str = "--set") -> tuple[str, Value]:
    """Parses ``dotted.key=value`` (``--set``, or a string among a Python call's overrides);
    the value is read as one TOML value, else taken as a string."""
    if not isinstance(text, str):
        raise ConfigError(f"{where} {_fmt(text)}: expected a string dotted.key=value", None)
    if "=" not in text:
        raise ConfigError(f"{where} {_quote(text)}: expected dotted.key=value", None)
    key, raw = (s.strip() for s in text.split("=", 1))
    if not key:
        raise ConfigError(f"{where} {_quote(text)}: the key is empty", None)
    try:
        doc = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        value: Any = raw
    except (ValueError, RecursionError) as e:  # a number of thousands of digits, deep nesting
        raise ConfigError(f"{where} {_quote(text)}: {_toml_limit(e)}", key) from None
    else:
        if list(doc) != ["v"]:  # "1\nscheme = 'irq'": more than one value
            raise ConfigError(f"{where} {_quote(text)}: the value must be one TOML value", key)
        value = doc["v"]
    return key, value


def _policy_paths(tree: dict[str, Any], here: Path) -> dict[str, Any]:
    """A file's ``driver.policy = "file.py:Class"`` and ``traffic.pcap = "capture.pcap"``
    made absolute (a relative file is the file's neighbour), in a scenario and in a sweep
    file's ``[base]``."""
    from irqlab.ops.policies import absolute

    def fixed(key: str, value: str) -> str:
        if key == "policy":
            return absolute(value, here)
        return str((here / value).resolve()) if value else value

    for table in (tree, tree.get("base")):
        if not isinstance(table, dict):
            continue
        for section, key in (("driver", "policy"), ("traffic", "pcap")):
            node = table.get(section)
            if isinstance(node, dict) and isinstance(node.get(key), str):
                node[key] = fixed(key, node[key])
            if isinstance(table.get(f"{section}.{key}"), str):
                table[f"{section}.{key}"] = fixed(key, table[f"{section}.{key}"])
    return tree


def _toml_limit(e: BaseException) -> str:
    """What a TOML document exceeded, from the exception tomllib let through."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if "digits" in str(e):
        return "a number with more than 4300 digits"
    return f"not valid TOML ({e})"


#: Byte-order marks of the encodings a TOML file must not be in.
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


#: The longest file read as a scenario or sweep: far beyond any real one, so that a device
#: that never ends (``/dev/zero``) is refused instead of filling the memory.
MAX_FILE_BYTES = 16 << 20


def _path(path: Any, what: str) -> Path:
    """``path`` (a str or path object) as a Path, or a ConfigError naming ``what``."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise ConfigError(
            f"{what}: expected a file path (str or pathlib.Path), got {type(path).__name__}",
            what,
        )
    if not path:
        raise ConfigError(f"{what}: the path is empty", what)
    if "\0" in path:
        raise ConfigError(f"{what}: the path {_quote(path)} contains a NUL character", what)
    return Path(path)


#: How a packet capture starts: pcap's magic in either byte order, µs and ns; pcapng's
#: section header; gzip's magic (a compressed capture, as ``traffic.pcap`` takes them).
_CAPTURES = (
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\xc3\xd4",
    b"\x4d\x3c\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
    b"\x0a\x0d\x0d\x0a",
    b"\x1f\x8b",
)


def _folder(path: Path) -> str:
    """What a folder given as a TOML file holds, if irqlab wrote it: the command that reads
    it."""
    for marker, what in (
        ("sweep.json", "a sweep's results"),
        ("runs.parquet", "a sweep's results"),
        ("tune.json", "a tune's results"),
    ):
        if (path / marker).is_file():
            reads = option(f"irqlab report {_printable(str(path))}", "irqlab.load_results")
            return f" (it holds {what}: {reads} reads them)"
    return ""


def _json(text: str, shown: str) -> str:
    """What to say of JSON given as TOML (a run's report, ``irqlab run --format json``, or
    other JSON); empty if ``text`` is not JSON."""
    if not text.lstrip().startswith(("{", "[")):
        return ""
    try:
        value = json.loads(text)
    except ValueError:
        return ""
    if isinstance(value, Mapping) and "scheme" in value and "latency_us" in value:
        page = option(f"; irqlab report {shown} makes a page of it", "")
        return (
            f"{shown}: is a run's JSON report, not a TOML scenario (its 'scenario' holds the "
            f"keys that ran{page})"
        )
    return f"{shown}: is JSON, not TOML; a scenario or sweep file is TOML"


def load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a TOML file, turning I/O, encoding and syntax errors into :class:`ConfigError`.

    The file must be TOML in UTF-8 (a UTF-8 byte-order mark is allowed); an empty file is an
    empty document.
    """
    p = _path(path, "scenario")
    shown = _printable(str(p))
    try:
        with p.open("rb") as fh:  # a pipe (<(…)) is read as it comes, a device up to the limit
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raw = str(path)
        hint = (
            " (a scenario is a file's path or a dict of keys, not TOML text)"
            if "=" in raw or "\n" in raw
            else ""
        )
        raise ConfigError(f"{shown}: no such file{hint}", None) from None
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a directory, not a TOML file{_folder(p)}", None) from None
    except OSError as e:
        raise ConfigError(f"{shown}: cannot read ({e.strerror or e})", None) from None
    if data.startswith(_CAPTURES):
        raise ConfigError(
            f"{shown}: is a packet capture (pcap or pcapng, maybe gzipped), not a TOML file; "
            f'replay it with traffic.kind = "pcap" and traffic.pcap = "{shown}" '
            f"({option(f'irqlab trace-info {shown}', 'irqlab trace-info')} tells what it holds)",
            None,
        )
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(
            f"{shown}: longer than {MAX_FILE_BYTES >> 20} MiB, far too long for a scenario or "
            "sweep file (is it the right file?)",
            None,
        )
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise ConfigError(
                f"{shown}: is {encoding} text; a TOML file must be UTF-8 "
                f"(convert it: iconv -f {encoding} -t UTF-8)",
                None,
            )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{shown}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
            "a scenario is a TOML file in UTF-8",
            None,
        ) from None
    if "\0" in text:
        raise ConfigError(
            f"{shown}: contains NUL bytes, so it is not a text file (UTF-16 without a "
            "byte-order mark?); a scenario is a TOML file in UTF-8",
            None,
        )
    try:
        return _policy_paths(tomllib.loads(text), p.parent)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(_json(text, shown) or f"{shown}: not valid TOML: {e}", None) from None
    except (ValueError, RecursionError) as e:
        raise ConfigError(f"{shown}: {_toml_limit(e)}", None) from None


def load_scenario(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
) -> dict[str, Value]:
    """Builds a flat, validated scenario from a file or dict plus dotted-key overrides.

    ``scenario`` is None, a TOML file's path (str or ``pathlib.Path``), or a dict shaped like
    the file or of dotted keys. ``overrides`` is a dict ``{dotted key: value}``, a list of
    ``(key, value)`` pairs or of ``"key=value"`` strings (read as ``--set`` reads them), or
    one such string. Values may be numpy scalars and arrays. Anything else raises
    :class:`ConfigError` naming the argument. Returns only the keys given (the core fills in
    defaults); see :func:`resolve` for all.
    """
    if scenario is None:
        tree: Mapping[str, Any] = {}
    elif isinstance(scenario, str | os.PathLike):
        tree = load_toml(scenario)
        if isinstance(tree.get("sweep"), Mapping) or isinstance(tree.get("axes"), Mapping):
            shown = _printable(os.fspath(scenario))
            how = option(f"irqlab sweep {shown}", f"irqlab.sweep({os.fspath(scenario)!r})")
            raise ConfigError(
                f"{shown} is a sweep file ([sweep], [base], [axes]), not a scenario: {how} runs it",
                "scenario",
            )
    elif isinstance(scenario, Mapping):
        tree = scenario
    else:
        raise ConfigError(
            "scenario: expected a TOML file's path (str or pathlib.Path) or a dict of keys, "
            f"got {type(scenario).__name__} {_fmt(scenario)}",
            "scenario",
        )
    flat = flatten(tree)
    for key, value in override_items(overrides):
        # a table or an array of tables given whole (--set 'traffic.classes=[{...}, {...}]')
        # replaces the entries of that table; an empty array (--set 'app=[]') removes them
        value = plain(value) if not isinstance(value, Mapping) else value
        if isinstance(value, Mapping) or (
            isinstance(value, list | tuple)
            and (value or key in tables())
            and all(isinstance(v, Mapping) for v in value)
        ):
            if isinstance(value, list | tuple):
                flat = {k: v for k, v in flat.items() if not k.startswith(f"{key}.")}
            flat.update(flatten({key: value}))
        else:
            flat[key] = value
    if seed is not None:
        flat["run.seed"] = _seed(seed)
    return {key: check_value(key, value) for key, value in flat.items()}


def override_items(overrides: Any) -> list[tuple[str, Any]]:
    """``overrides`` as ``(key, value)`` pairs (see :func:`load_scenario`)."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [parse_override(overrides, "overrides")]
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
    elif isinstance(overrides, Iterable) and not isinstance(overrides, bytes | bytearray):
        items = []
        for i, item in enumerate(overrides):
            if isinstance(item, str):
                items.append(parse_override(item, f"overrides[{i}]"))
            elif isinstance(item, list | tuple) and len(item) == 2:
                items.append((item[0], item[1]))
            else:
                raise ConfigError(
                    f'overrides[{i}] = {_fmt(item)}: expected a "key=value" string or a '
                    "(key, value) pair",
                    "overrides",
                )
    else:
        raise ConfigError(
            f"overrides: expected a dict {{key: value}}, a list of (key, value) pairs or of "
            f'"key=value" strings, got {type(overrides).__name__} {_fmt(overrides)}',
            "overrides",
        )
    for key, _ in items:
        if not isinstance(key, str):
            raise ConfigError(
                f"overrides: key {_fmt(key)} is not a string; keys are dotted names like "
                "'traffic.rate_pps'",
                "overrides",
            )
    return items


#: ``run.seed``'s range.
_SEED_MAX = 2**64 - 1


def _seed(seed: Any) -> int:
    """The ``seed`` argument, checked: an integer in 0 … 2^64 − 1 (numpy integers too)."""
    value = plain(seed)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _SEED_MAX:
        raise ConfigError(
            f"seed = {_fmt(value)}: must be an integer in 0 … {_SEED_MAX} (it sets run.seed)",
            "seed",
        )
    return value


def build(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
) -> ResolvedScenario:
    """The scenario built by the core, once: validated, every key resolved (its ``params``),
    ready for :func:`irqlab.run` to run as it is.

    Each setting that has no effect in the scenario is shown as a
    :class:`irqlab.ConfigWarning` naming the key, here and not again when it runs.
    """
    return built(load_scenario(scenario, overrides, seed=seed), stacklevel=2)


def resolve(
    scenario: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Overrides = (),
    *,
    seed: int | None = None,
) -> dict[str, Value]:
    """Every key of the scenario with its value, defaults filled in, validated by the core.

    Each setting that has no effect in the scenario (an ITR with scheme ``ideal``, a polling
    period with ``napi``, …) is shown as a :class:`irqlab.ConfigWarning` naming the key.
    """
    return built(load_scenario(scenario, overrides, seed=seed), stacklevel=2).params


def built(params: Mapping[str, Value], *, stacklevel: int = 1) -> ResolvedScenario:
    """The core's build of ``params`` (as :func:`load_scenario` returns them), issuing a
    :class:`irqlab.ConfigWarning` for each setting that has no effect in the scenario, at
    ``stacklevel`` as seen from the caller."""
    scenario = core.resolved(params)
    acting = dict(scenario.acting)
    for key, message in scenario.warnings:
        warnings.warn(ConfigWarning(message, key, acting.get(key)), stacklevel=stacklevel + 1)
    return scenario


def checked(params: Mapping[str, Value], *, stacklevel: int = 1) -> dict[str, Value]:
    """:func:`built`'s resolved params."""
    return built(params, stacklevel=stacklevel + 1).params


def frame_sizes(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
) -> list[tuple[int, float]]:
    """The scenario's frame sizes as ``[(bytes, probability), ...]`` (one pair if fixed)."""
    return [(int(b), float(p)) for b, p in core.frame_sizes(load_scenario(scenario, overrides))]


def mean_frame_bytes(
    scenario: str | Path | Mapping[str, Any] | None = None,
    overrides: Iterable[tuple[str, Any]] | Mapping[str, Any] = (),
) -> float:
    """Mean frame size of the scenario, bytes: ``traffic.size_bytes`` or the table's mean.

    >>> mean_frame_bytes({"traffic": {"sizes": "64:1, 1518:1"}})
    791.0
    """
    return sum(b * p for b, p in frame_sizes(scenario, overrides))
