"""The Plotly figures a page of ``irqlab report`` shows: traces and their error bars, the
values made JSON (NaN and infinities as null), and the figure checked by plotly's validators and
escaped to be inlined in a ``<script>``."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from irqlab.report.page import Plot


def metric_label(name: str) -> str:
    """A metric's name as a figure's axis says it."""
    from irqlab.figures import label

    return label(name)


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


def scatter(mode: str, name: str, x: list[Any], y: list[Any], **attrs: Any) -> dict[str, Any]:
    """A Plotly scatter trace: its ``mode`` (``lines``, ``markers``, ``lines+markers``), name
    and points, then any other of the trace's attributes (``line``, ``marker``, ``error_y``…)."""
    return {"type": "scatter", "mode": mode, "name": name, "x": x, "y": y, **attrs}


def error_bars(plus: list[Any], minus: list[Any] | None = None, **style: Any) -> dict[str, Any]:
    """A trace's error bars, ``plus`` above (and ``minus`` below, when they differ)."""
    if minus is None:
        return {"type": "data", "array": plus, **style}
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, **style}


def _json_default(v: Any) -> Any:
    if hasattr(v, "tolist"):
        return finite(v.tolist()) if isinstance(v.tolist(), list) else v.item()
    raise TypeError(f"{type(v).__name__} is not JSON")
