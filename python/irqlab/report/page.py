"""What every page of ``irqlab report`` is made of: :class:`Page`, its sections, tables,
figures and code blocks, which the template lays out. The parts every kind of page builds from
them are in :mod:`irqlab.report.parts`, a result's files are read by
:mod:`irqlab.report.reading`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
