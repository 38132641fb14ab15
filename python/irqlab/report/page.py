"""What every page of ``irqlab report`` is made of (:class:`Page`, its sections, tables, figures
and code blocks, which the template lays out), and the parts every kind of page uses: cells
that carry their exact value, the scenario's table, Plotly figures made safe to inline, PNG
images, shell commands, and the files of a result read without trusting them."""

from __future__ import annotations

import base64
import json
import math
import numbers
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.files import read_limited, regular_file
from irqlab.formatting import exact, page_number

# --- what the page is made of --------------------------------------------------------------------


@dataclass
class Cell:
    """A table cell: its text, and for numbers the exact value (and 95% half-width)."""

    text: str
    attrs: dict[str, str] = field(default_factory=dict)
    numeric: bool = False
    strong: bool = False


@dataclass
class Table:
    id: str
    caption: str
    headers: list[str]
    rows: list[list[Cell]]
    note: str = ""
    open: bool = True  # shown, or folded in a <details>


@dataclass
class Plot:
    """A Plotly figure: ``spec`` is its JSON (data, layout, config), safe inside <script>."""

    id: str
    caption: str
    spec: str
    wide: bool = False
    kind: str = "plotly"


@dataclass
class Image:
    id: str
    caption: str
    src: str  # a data: URI
    alt: str
    wide: bool = False  # much wider than tall: a row of its own
    kind: str = "image"


@dataclass
class Code:
    """A block of commands or a file, with a download link when ``filename`` is given."""

    text: str
    caption: str = ""
    filename: str = ""
    id: str = ""

    @property
    def is_file(self) -> bool:
        return bool(self.filename)


@dataclass
class Section:
    id: str
    title: str
    items: list[Any] = field(default_factory=list)  # str (a paragraph), Table, Code, list

    def p(self, text: str) -> Section:
        self.items.append(Paragraph(text))
        return self


@dataclass
class Paragraph:
    text: str


@dataclass
class Figures:
    figures: list[Plot | Image]


@dataclass
class Facts:
    """A definition list: (term, description) pairs."""

    pairs: list[tuple[str, str]]


@dataclass
class Page:
    title: str
    kind: str
    source: str
    lede: list[str]
    sections: list[Section]


def missing(x: Any) -> bool:
    """None or NaN: a value a table shows as a dash."""
    return x is None or (isinstance(x, numbers.Real) and math.isnan(float(x)))


def py(v: Any) -> Any:
    """A numpy scalar as Python's."""
    if hasattr(v, "item") and not isinstance(v, str):
        return v.item()
    return v


def lookup(tree: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted name of a report (``per_core.1.cpu.busy``); None if absent."""
    node: Any = tree
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit():
            node = node[int(part)]
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return None
    return node


def read_json(path: Path) -> Any:
    """A result's JSON file, read within its size limit; a damaged one is one line."""
    data = read_limited(path, "results")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON ({e})", None) from None


def read_table(path: Path) -> Any:
    """A result's Parquet or CSV table; a damaged one is one line."""
    import pandas as pd

    regular_file(path, "results")  # pyarrow would wait on a pipe through Ctrl-C
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read it ({e})", None) from None
    except Exception as e:  # pyarrow's errors for a damaged file are not OSError/ValueError
        raise ConfigError(f"{path}: cannot read it ({type(e).__name__}: {e})", None) from None


# --- the common parts -------------------------------------------------------------------------


def metric_label(name: str) -> str:
    """A metric's name as a figure's axis says it."""
    from irqlab.figures import label

    return label(name)


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


def finite(values: Iterable[Any]) -> list[Any]:
    """Values for a figure's JSON: NaN and infinities as null, numpy scalars as Python's."""
    out = []
    for v in values:
        if hasattr(v, "item") and not isinstance(v, str):
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        out.append(v)
    return out


def plotly_figure(
    fig_id: str, caption: str, data: list[dict[str, Any]], layout: dict[str, Any]
) -> Plot:
    """A Plotly figure (checked by plotly's own validators) as escaped JSON."""
    import plotly.graph_objects as go

    base_layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 40, "b": 60},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": "system-ui, sans-serif", "size": 12},
        "hovermode": "closest",
        "legend": {"itemclick": "toggle", "itemdoubleclick": "toggleothers"},
    }
    axis_style = {"gridcolor": "#e5e5e5", "zerolinecolor": "#bbbbbb", "linecolor": "#888888"}
    merged = {**base_layout, **layout}
    for axis in ("xaxis", "yaxis"):
        merged[axis] = {**axis_style, **layout.get(axis, {})}
    fig = go.Figure(data=data, layout=merged).to_plotly_json()  # validated by plotly
    spec = {
        "data": fig["data"],
        "layout": fig["layout"],
        "config": {
            "displaylogo": False,
            "responsive": True,
            "toImageButtonOptions": {"filename": fig_id},
        },
    }
    text = json.dumps(spec, allow_nan=False, default=_json_default)
    # inside <script>: nothing may close it or open a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Plot(fig_id, caption, text)


def _json_default(v: Any) -> Any:
    if hasattr(v, "tolist"):
        return finite(v.tolist()) if isinstance(v.tolist(), list) else v.item()
    raise TypeError(f"{type(v).__name__} is not JSON")


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
