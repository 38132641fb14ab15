"""A run's report and the results made of runs, shown to a person.

- :class:`Report`: what a run's report holds, key by key (a ``TypedDict``: the type of the dict
  :func:`irqlab.run` returns; defined with the core's other shapes in :mod:`irqlab.core`);
- ``flat``: a report as flat rows for data frames (:func:`flatten_report`, ``per_core.1.…``);
- ``terminal``: the tables ``irqlab run`` prints (:func:`render`);
- ``layout``: tables laid out to the output's width, never cutting a value;
- ``html`` and the pages it makes (``run_page``, ``sweep_page``, ``tune_page``,
  ``reproduction_page``): ``irqlab report``, one self-contained HTML page of any result
  (:func:`write_report`); a page is made of ``page``'s model, built with the cells, tables and
  commands of ``parts`` and the Plotly figures of ``charts``, from the files ``reading`` reads.

The HTML side loads when first asked for (:func:`write_report`, :func:`render_report`,
:func:`detect`, :func:`default_out`), so that printing a run's table does not read it.
"""

from __future__ import annotations

import importlib
from typing import Any

from irqlab.core import Report
from irqlab.formatting import count
from irqlab.report.flat import (
    ENTRY_LABELS,
    decode_list,
    encode_list,
    flatten_report,
    instantiate,
    is_entry_label,
    list_indices,
    template,
)
from irqlab.report.terminal import (
    print_table,
    render,
    render_per_class,
    render_per_core,
    render_table,
)

#: The HTML report's functions, loaded on first use.
_HTML = ("default_out", "detect", "render_report", "write_report")


def __getattr__(name: str) -> Any:
    if name in _HTML:
        value = getattr(importlib.import_module("irqlab.report.html"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ENTRY_LABELS",
    "Report",
    "count",
    "decode_list",
    "default_out",
    "detect",
    "encode_list",
    "flatten_report",
    "instantiate",
    "is_entry_label",
    "list_indices",
    "print_table",
    "render",
    "render_per_class",
    "render_per_core",
    "render_report",
    "render_table",
    "template",
    "write_report",
]
