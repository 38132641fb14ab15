"""``irqlab.html_report``, as earlier versions named the HTML report: now
:mod:`irqlab.report.html` (``irqlab.report.write_report``). Kept so that code calling
``irqlab.html_report.write_report`` works as before."""

from __future__ import annotations

from irqlab.formatting import page_number as number
from irqlab.report.html import default_out, detect, render_report, write_report
from irqlab.toml_writer import document as toml_text

__all__ = ["default_out", "detect", "number", "render_report", "toml_text", "write_report"]
