"""A run's report as flat rows, for data frames.

A report is a nested dict. Most of it is one host-wide figure per key; four lists hold one
entry per core, queue vector, traffic class and app (``per_core``, ``per_queue``,
``per_class``, ``per_app``). :func:`flatten_report` turns all of it into flat scalars, the
row of a data frame: ``per_core.1.cpu.busy``; a list of numbers inside an entry
(``per_core.0.vectors``) becomes its canonical text ``"[0, 2]"`` (:func:`encode_list`), so
Parquet and CSV store it and ``groupby`` can use it. :func:`template` and
:func:`instantiate` go between a flattened name and its form with the list indices as ``N``.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, get_args, get_origin, get_type_hints, is_typeddict

if TYPE_CHECKING:
    from irqlab.core import Report

#: The lists of entries in a report, and the fields that name an entry rather than measure
#: it: they are carried into tables as they are and never averaged.
ENTRY_LABELS: dict[str, tuple[str, ...]] = {
    "per_core": ("core", "vectors"),
    "per_queue": ("queue", "core", "flows"),
    "per_class": ("class", "share"),
    "per_app": ("app", "core", "flows"),
}

#: Distributions in a report (a map from a bucket to its count, only the buckets that
#: counted): they are no scalars of a table's row, so a flattened report leaves them out.
DISTRIBUTIONS = frozenset({"packets_per_poll_hist"})

#: A numeric component of a flattened name: an index into a list (``per_core.3.…``).
_INDEX = re.compile(r"(?<=\.)(0|[1-9][0-9]*)(?=\.|$)")
_LABEL = re.compile(r"^(?P<list>per_[a-z_]+)\.(0|[1-9][0-9]*)\.(?P<field>[a-z_]+)$")


def typed_metrics() -> list[str]:
    """Every numeric figure the report's type (:class:`irqlab.core.Report`) declares, as
    templates (``per_core.N.cpu.busy``), in declaration order: those only some scenarios
    produce too (``rtt_us.mean`` with request/response traffic, ``busy_poll.polls``)."""
    from irqlab.core import Report

    out: list[str] = []
    _walk(Report, "", out)
    return out


def _walk(tp: Any, prefix: str, out: list[str]) -> None:
    numbers = (int, float, bool)
    for key, t in get_type_hints(tp).items():
        name = prefix + key
        origin = get_origin(t)
        if is_typeddict(t):
            _walk(t, name + ".", out)
        elif origin is list and is_typeddict(get_args(t)[0]):
            _walk(get_args(t)[0], name + ".N.", out)
        elif origin in (typing.Union, types.UnionType):
            if all(a in numbers for a in get_args(t) if a is not type(None)):
                out.append(name)
        elif t in numbers:
            out.append(name)


def encode_list(values: Iterable[Any]) -> str:
    """The canonical text of a list of scalars in a table: ``[0, 1]`` → ``"[0, 1]"``."""
    return json.dumps(list(values))


def decode_list(text: Any) -> list[Any]:
    """The inverse of :func:`encode_list`; a list (or array) is returned as a list."""
    if isinstance(text, str):
        value = json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"{text!r} is not a list")
        return value
    return [x.item() if hasattr(x, "item") else x for x in text]


def template(name: str) -> str:
    """A flattened name with its list indices as ``N``: ``per_core.3.cpu.busy`` →
    ``per_core.N.cpu.busy`` (``app.0.core`` → ``app.N.core``)."""
    return _INDEX.sub("N", name)


def list_indices(name: str) -> list[int]:
    """The list indices in a flattened name: ``per_core.3.cpu.busy`` → ``[3]``."""
    return [int(i) for i in _INDEX.findall(name)]


def instantiate(name: str, indices: Sequence[int]) -> str:
    """The inverse of :func:`template`: its ``N``s replaced by ``indices`` in order (by 0 when
    they run out)."""
    rest = iter(indices)
    return re.sub(r"(?<=\.)N(?=\.|$)", lambda _: str(next(rest, 0)), name)


def is_entry_label(name: str) -> bool:
    """Whether a flattened name is a field naming an entry (``per_core.0.vectors``)."""
    m = _LABEL.match(name)
    return m is not None and m["field"] in ENTRY_LABELS.get(m["list"], ())


def flatten_report(report: Report | Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The report (or a part of one: a section, an entry, a report without its ``scenario``)
    as flat scalars, names joined with dots.

    ``{"latency_us": {"p99": 1.0}}`` → ``{"latency_us.p99": 1.0}``; a list of entries becomes
    numbered names (``per_core.0.cpu.busy``; an empty one, none); a list of scalars its
    canonical text (``"[0, 1]"``, :func:`encode_list`). The distributions
    (``packets_per_poll_hist``: :data:`DISTRIBUTIONS`) are left out.
    """
    out: dict[str, Any] = {}
    for k, v in report.items():
        name = f"{prefix}{k}"
        if k in DISTRIBUTIONS:
            continue
        if isinstance(v, Mapping):
            out.update(flatten_report(v, f"{name}."))
        elif isinstance(v, list | tuple):
            if v and all(isinstance(e, Mapping) for e in v):
                for i, entry in enumerate(v):
                    out.update(flatten_report(entry, f"{name}.{i}."))
            elif v or not (k in ENTRY_LABELS or str(k).startswith("per_")):
                out[name] = encode_list(v)
        else:
            out[name] = v
    return out
