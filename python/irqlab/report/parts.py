"""The parts every kind of page of ``irqlab report`` uses: cells that carry their exact value,
a mean with its confidence interval, the scenario's table, PNG images and shell commands (its
Plotly figures are :mod:`irqlab.report.charts`)."""

from __future__ import annotations

import base64
import numbers
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.files import read_limited
from irqlab.formatting import exact, page_number
from irqlab.report.page import Cell, Image, Table
from irqlab.report.reading import missing


def value_cell(value: Any, **attrs: Any) -> Cell:
    """A cell showing ``value`` with its exact value in ``data-value`` (``attrs``: more
    ``data-*`` attributes, underscores as dashes)."""
    out = {k.replace("_", "-"): str(v) for k, v in attrs.items()}
    out["data-value"] = exact(value)
    numeric = isinstance(value, numbers.Number) and not isinstance(value, bool)
    return Cell(page_number(value), out, numeric=numeric)


def ci_cell(mean: Any, ci: Any, **attrs: Any) -> Cell:
    """``mean ± half-width`` (the half-width left out when it is missing)."""
    cell = value_cell(mean, **attrs)
    if not missing(ci) and not missing(mean):
        cell.text = mean_ci(mean, ci)
        cell.attrs["data-ci"] = exact(ci)
    return cell


def mean_ci(mean: Any, ci: Any) -> str:
    """``mean ± half-width`` as the tables show it."""
    if missing(ci) or missing(mean):
        return page_number(mean)
    return f"{page_number(mean)} ± {page_number(ci)}"


def scenario_table(
    flat: Mapping[str, Any], table_id: str, caption: str, *, open_: bool = False
) -> Table:
    """Every key of a scenario, its value and, where it differs, the default."""
    from irqlab.scenario import spec_of

    rows = []
    for key, value in flat.items():
        spec = spec_of(key)
        default = spec["default"] if spec else None
        changed = spec is not None and value != default
        cell = value_cell(value, data_key=key)
        cell.strong = changed
        rows.append(
            [
                Cell(key, strong=changed),
                cell,
                Cell(page_number(default) if changed else ""),
            ]
        )
    return Table(
        table_id,
        caption,
        ["key", "value", "default (where it differs)"],
        rows,
        note="Keys set to other than their default are in bold; irqlab keys explains each.",
        open=open_,
    )


def png(path: Path, fig_id: str, caption: str) -> Image:
    """A result's PNG figure, inlined as a data URI."""
    data = read_limited(path, "results")
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ConfigError(f"{path}: not a PNG image", None)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return Image(fig_id, caption, src, alt=caption, wide=width > 2 * max(height, 1))


def shell(words: Sequence[str]) -> str:
    """A command line, each word quoted as a shell needs it."""
    return " ".join(shlex.quote(str(w)) for w in words)
