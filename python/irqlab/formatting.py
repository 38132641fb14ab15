"""Numbers as irqlab prints them: one set of formatters for the terminal tables, the HTML
report, the commands ``irqlab tune`` writes, the probe's comments and the studies' tables.

Each keeps the exact text its output has always had (the golden and CLI tests hold them):

- :func:`short` — a metric in a terminal table: 3 significant digits, whole above 1,000;
- :func:`significant` and :func:`si` — significant digits never in exponent form, with an SI
  prefix (``187k``), for the sweep and analytic tables; :func:`axis_value` an axis value;
- :func:`percent`, :func:`percent_bare`, :func:`kilo`, :func:`mbps` — shares and rates;
- :func:`page_number` and :func:`exact` — a value on the HTML page, and exactly (``repr``);
- :func:`plain` — a setting as an operator types it (``24``, not ``24.0``);
- :func:`compact` — a value in a figure's legend or message (``10``, ``1e+06``);
- :func:`whole` — a rate rounded to a whole number with thousands separators;
- :func:`with_unit` — a value scaled to a unit, with its 95% half-width;
- :func:`seconds`, :func:`size` — a duration with its unit, a size in KiB or MiB;
- :func:`memory` — bytes in decimal units (``2.1 GB``), as a size estimate says them;
- :func:`count` — a number and its noun (``1 run``, ``2 runs``).

None, NaN and missing values print as a dash (``—``) wherever a table shows them.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

DASH = "—"


def count(n: int, noun: str) -> str:
    """``n`` and its noun, singular for one: ``count(1, "queue")`` → ``"1 queue"``,
    ``count(4, "queue")`` → ``"4 queues"``."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"


def short(x: Any, digits: int = 3) -> str:
    """A metric as a terminal table shows it: ``digits`` significant digits, integers and
    values from 1,000 up whole with thousands separators, None as a dash.

    >>> short(0.00421), short(15.4321), short(187312.4), short(20134), short(None)
    ('0.00421', '15.4', '187,312', '20,134', '—')
    """
    if x is None:
        return DASH
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def percent(x: float | None) -> str:
    """A share as a percentage with its sign: ``0.1234`` → ``12.3 %``."""
    return DASH if x is None else f"{100 * x:.1f} %"


def percent_bare(x: float | None) -> str:
    """A share in percent, one decimal, without the sign (a header carries it)."""
    return DASH if x is None else f"{100 * x:.1f}"


def kilo(x: float | None) -> str:
    """A rate in thousands, one decimal: ``480513.0`` → ``480.5``."""
    return DASH if x is None else f"{x / 1e3:,.1f}"


def mbps(bytes_per_s: float | None) -> str:
    """Bytes per second as MB/s (10^6 bytes)."""
    return DASH if bytes_per_s is None else f"{short(bytes_per_s / 1e6)} MB/s"


def whole(x: float | None) -> str:
    """A rate rounded to a whole number with thousands separators: ``1495200.4`` →
    ``1,495,200``."""
    return DASH if x is None else f"{x:,.0f}"


def significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, never in exponent notation."""
    if x == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, places):.{max(places, 0)}f}"


def si(x: float, digits: int = 3) -> str:
    """Significant digits with an SI prefix: 187312.4 → 187k, 0.00421 → 0.00421.

    >>> si(187312.4), si(0.00421), si(2.5e6), si(float("nan"))
    ('187k', '0.00421', '2.50M', '—')
    """
    if x != x:
        return DASH
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return significant(x / div, digits) + suffix
    return significant(x, digits)


def axis_value(value: Any) -> str:
    """An axis value in a sweep's table: text as it is, true/false, numbers with SI
    prefixes."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    return si(value)


def page_number(x: Any) -> str:
    """A value as the HTML page shows it: integers with thousands separators, other numbers
    to four significant digits (whole above 10,000), NaN and None as a dash, text as it is.

    >>> page_number(100675.0), page_number(15.43219), page_number(0.70612), page_number(20134)
    ('100,675', '15.43', '0.7061', '20,134')
    >>> page_number(float("nan"))
    '—'
    """
    if x is None:
        return DASH
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return "true" if x else "false"
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}"
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return DASH
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == 0:
            return "0"
        if 1e4 <= abs(v) < 1e15:
            return f"{v:,.0f}"
        return f"{v:.4g}"
    if isinstance(x, list | tuple):
        return json.dumps(list(x))
    return str(x)


def exact(x: Any) -> str:
    """A value exactly, for a page's ``data-value``: ``repr`` of a float (it reads back bit for
    bit)."""
    if x is None:
        return ""
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return "true" if x else "false"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        return repr(float(x))
    if isinstance(x, list | tuple):
        return json.dumps(list(x))
    return str(x)


def plain(v: Any) -> str:
    """A setting as an operator types it: a whole float without its ``.0``."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def compact(value: Any) -> str:
    """A value as a person writes it in a legend or a message: a float in its shortest general
    form (``10`` rather than ``10.0``, ``1e+06`` for a million), anything else as ``str`` gives
    it (NaN too).

    >>> compact(10.0), compact(1e6), compact(0.25), compact("napi"), compact(7)
    ('10', '1e+06', '0.25', 'napi', '7')
    """
    is_float = isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
    if is_float and not math.isnan(value):
        return f"{value:g}"
    return str(value)


def with_unit(x: float | None, unit: str, ci: float | None = None) -> str:
    """``x`` in ``unit`` (Mpps, k/s, µs or %: scaled and rounded for it), with `` ± ci`` when
    the half-width is known: ``with_unit(1.5e6, "Mpps", 2e4)`` → ``1.50 ± 0.02 Mpps``."""
    if x is None or not math.isfinite(x):
        return DASH
    scale, digits = {
        "Mpps": (1e-6, 2),
        "k/s": (1e-3, 1),
        "µs": (1.0, 1),
        "%": (100.0, 0),
    }[unit]
    text = f"{x * scale:.{digits}f}"
    if ci is not None and math.isfinite(ci) and ci > 0:
        text += f" ± {ci * scale:.{digits}f}"
    return f"{text} {unit}"


def seconds(s: float) -> str:
    """A duration in the largest unit that keeps it at least 1 (s, ms, µs, ns), four digits."""
    for unit, per in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= per or unit == "ns":
            return f"{s / per:.4g} {unit}"
    return f"{s} s"  # pragma: no cover


def size(n: int) -> str:
    """A size in bytes as whole MiB, else whole KiB."""
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def memory(n: float) -> str:
    """``n`` bytes in decimal units, one decimal from a megabyte up: ``2.1 GB``, ``640 kB``."""
    for unit, per in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= per:
            return f"{n / per:.1f} {unit}"
    return f"{n / 1e3:.0f} kB"
