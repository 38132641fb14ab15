"""Tables laid out to the width of the output, never cutting a value.

rich fits a table that is too wide by shrinking its columns, and a column narrower than its
longest word ends that word in "…": piped into a file or a pager (80 columns), a per-core table
printed ``186…`` for 186.4 kpps and ``throu…`` for a header. :func:`fit` wraps a table so that
no cell is ever cut:

- a table that fits is printed as it is;
- one that fits with its headers over two lines (``p99`` over ``µs``) is printed so;
- one too wide even so is printed as several tables, each repeating the columns that name a
  row (the core, the class), so every value is printed whole, on one line, and found by its
  row;
- a column too wide for the output on its own wraps its cells at their spaces
  (``1,495,200`` over ``pps``), never inside a number.

A column named as prose (descriptions, sources) wraps rather than splitting the table, and only
such a column made with ``overflow="fold"`` (paths) is broken inside a word, as rich folds it;
numbers are never in such a column.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

from rich.measure import Measurement
from rich.padding import Padding

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table

#: The narrowest a folding column of prose is made: a path folds over lines of this many
#: characters.
FOLD_MIN = 12


class Fitted:
    """A table that prints whole values at any width (module docstring); ``keep`` is how many
    of its first columns name a row and are repeated in each part of a split table; ``prose``
    names the columns of text (not values) that wrap freely rather than split the table."""

    def __init__(self, table: Table, keep: int = 1, prose: Collection[str] = ()) -> None:
        self.table = table
        self.keep = keep
        self.prose = prose

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from parts(self.table, console, options.max_width, self.keep, self.prose)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)


def fit(table: Table, keep: int = 1, prose: Collection[str] = ()) -> Fitted:
    """``table``, printed whole at the output's width (:class:`Fitted`)."""
    return Fitted(table, keep, prose)


#: The widths of a column, in :func:`spans`: each cell broken at every space (``NARROW``),
#: the header broken at its spaces and every other cell on one line (``CELLS``), everything on
#: one line (``WIDE``).
NARROW, CELLS, WIDE = 0, 1, 2


def spans(
    table: Table, console: Console, options: ConsoleOptions, prose: Collection[str] = ()
) -> list[tuple[int, int, int]]:
    """Each column's ``NARROW``, ``CELLS`` and ``WIDE`` widths, padding included. A ``no_wrap``
    column is always one line; a column of ``prose`` wraps freely, and if it folds (``overflow
    = "fold"``: paths) it is as narrow as ``FOLD_MIN`` too."""
    left, right = _padding(table)
    wide = options.update(width=1 << 16, no_wrap=False)
    out = []
    for column in table.columns:
        header = Measurement.get(console, wide, column.header) if table.show_header else None
        lo, hi = (header.minimum, header.maximum) if header else (1, 1)
        mid = lo
        for cell in column.cells:
            m = Measurement.get(console, wide, cell)
            lo, mid, hi = max(lo, m.minimum), max(mid, m.maximum), max(hi, m.maximum)
        if column.no_wrap:
            lo = mid = hi
        elif column.header in prose:
            mid = lo
            if column.overflow == "fold":
                lo = mid = min(lo, FOLD_MIN)
        if column.width is not None:
            lo = mid = hi = column.width
        if column.max_width is not None:
            lo, mid, hi = (min(w, column.max_width) for w in (lo, mid, hi))
        if column.min_width is not None:
            lo, mid, hi = (max(w, column.min_width) for w in (lo, mid, hi))
        out.append((lo + left + right, mid + left + right, hi + left + right))
    return out


def width(
    table: Table, columns: Sequence[int], span: Sequence[tuple[int, int, int]], tier: int
) -> int:
    """The width of a table of ``columns`` of ``table``, each at its ``tier`` width."""
    rules = 0
    if table.box:
        rules = len(columns) + 1 if table.show_edge else max(len(columns) - 1, 0)
    return sum(span[c][tier] for c in columns) + rules


def min_width(table: Table, console: Console) -> int:
    """The narrowest ``table`` can be printed in one piece without cutting a word."""
    span = spans(table, console, console.options)
    return width(table, range(len(table.columns)), span, NARROW)


def parts(
    table: Table, console: Console, max_width: int, keep: int = 1, prose: Collection[str] = ()
) -> Iterator[Table]:
    """``table`` as one or more tables no wider than ``max_width`` (module docstring)."""
    span = spans(table, console, console.options, prose)
    every = list(range(len(table.columns)))
    if width(table, every, span, WIDE) <= max_width:
        yield table
        return
    if width(table, every, span, CELLS) <= max_width:
        yield _sized(table, every, span, max_width)
        return
    keys, rest = every[:keep], every[keep:]
    if (
        rest
        and width(table, [*keys, max(rest, key=lambda c: span[c][NARROW])], span, NARROW)
        > max_width
    ):
        keys, rest = [], every  # the naming columns leave no room: split without them
    groups: list[list[int]] = [[]]
    for c in rest:
        if groups[-1] and width(table, [*keys, *groups[-1], c], span, CELLS) > max_width:
            groups.append([])
        groups[-1].append(c)
    for i, group in enumerate(groups):
        part = _sized(table, keys + group, span, max_width)
        if i > 0:
            part.title = None
        if i < len(groups) - 1:
            part.caption = None
        yield part


def _padding(table: Table) -> tuple[int, int]:
    _, right, _, left = Padding.unpack(table.padding)
    return left, right


def _sized(
    table: Table, columns: list[int], span: Sequence[tuple[int, int, int]], max_width: int
) -> Table:
    """A copy of ``table`` with only ``columns``, each given a width that fits ``max_width``:
    every column its widest tier that lets the table fit, the room left shared in proportion
    to what each lacks of its ``WIDE`` width."""
    left, right = _padding(table)
    out = copy.copy(table)
    out.columns = []
    if width(table, columns, span, WIDE) <= max_width:
        tier = WIDE
    elif width(table, columns, span, CELLS) <= max_width:
        tier = CELLS
    else:
        tier = NARROW
    room = max(max_width - width(table, columns, span, tier), 0)
    lack = sum(span[c][WIDE] - span[c][tier] for c in columns)
    for i, c in enumerate(columns):
        column = table.columns[c]
        width_of = column.width
        if tier != WIDE:
            given = span[c][tier] + (room * (span[c][WIDE] - span[c][tier]) // lack if lack else 0)
            width_of = max(given - left - right, 1)
        out.columns.append(
            dataclasses.replace(column, _index=i, _cells=list(column.cells), width=width_of)
        )
    out.rows = list(table.rows)
    return out
