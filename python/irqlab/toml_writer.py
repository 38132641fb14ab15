"""TOML as irqlab writes it: the scenario files of ``irqlab probe``, the ``scenario.toml`` and
``sweep.toml`` a report offers, the knob values of a tune's command.

One escaping for every string: JSON's escapes, which are TOML's, with every character outside
ASCII escaped as well and DEL (the one control character JSON leaves as it is) as ``\\u007f``,
so that whatever a value holds — a newline, a quote, a bidirectional override read from a
host — reads back as the same string and cannot end a line, a string or a comment early.

    >>> print(document({"scheme": "napi", "traffic": {"rate_pps": 1e5}}), end="")
    scheme = "napi"
    <BLANKLINE>
    [traffic]
    rate_pps = 100000.0
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def string(text: str) -> str:
    """``text`` as a TOML basic string, every character that needs it escaped."""
    # JSON's escapes are TOML's; DEL is the one control character JSON leaves as it is
    return json.dumps(text, ensure_ascii=True).replace("\x7f", "\\u007f")


def key(name: str) -> str:
    """A key as TOML writes it: bare if it can be, else quoted."""
    return name if _BARE_KEY.match(name) else string(name)


def value(v: Any, *, whole: bool = False) -> str:
    """A TOML value: a boolean, number, string or list of them. ``whole``: a float that is a
    whole number is written as an integer (``10`` rather than ``10.0``), as a person writes a
    scenario; numpy scalars are written as Python's."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        x = float(v)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if whole and x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return repr(x)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x, whole=whole) for x in v) + "]"
    raise ValueError(f"no TOML for {v!r}")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list | tuple) and bool(v) and all(isinstance(e, Mapping) for e in v)


def document(tree: Mapping[str, Any], _header: tuple[str, ...] = ()) -> str:
    """A nested dict as a TOML document: its plain keys first, then its tables and arrays of
    tables, each under its header."""
    lines: list[str] = []
    for k, v in tree.items():
        if not isinstance(v, Mapping) and not _is_table_array(v):
            lines.append(f"{key(k)} = {value(v)}")
    for k, v in tree.items():
        path = (*_header, k)
        name = ".".join(key(p) for p in path)
        if isinstance(v, Mapping):
            lines += ["", f"[{name}]", document(v, path).rstrip("\n")]
        elif _is_table_array(v):
            for entry in v:
                lines += ["", f"[[{name}]]", document(entry, path).rstrip("\n")]
    text = "\n".join(line for line in lines).lstrip("\n")
    return re.sub(r"\n{3,}", "\n\n", text) + "\n"


def scenario(flat: Mapping[str, Any]) -> str:
    """A scenario given as flat dotted keys (``nic.queues``, ``app.0.core``) as a file."""
    from irqlab.scenario import unflatten

    return document(unflatten(flat))
