"""Reproductions of published studies: each module re-runs one paper's experiments on irqlab's
host model and writes its figures (PNG), their data (CSV) and a table of headline numbers.

``irqlab reproduce NAME --out DIR`` runs one; ``--quick`` gives a coarse version in under a
minute. Every module exposes ``TITLE``, ``reproduce(out, *, quick, executor, workers,
scheduler, progress) -> dict[str, pandas.DataFrame]`` and writes ``DIR/README.md`` describing
what it made; ``irqlab.studies.common`` holds what they share.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from irqlab.errors import ConfigError

#: Study name → module under irqlab.studies.
STUDIES = {
    "salah2007": "irqlab.studies.salah2007",
    "emmerich2015": "irqlab.studies.emmerich2015",
    "chang2007": "irqlab.studies.chang2007",
    "beifuss2016": "irqlab.studies.beifuss2016",
    "busypoll2013": "irqlab.studies.busypoll2013",
    "irq-suspend": "irqlab.studies.irq_suspend",
}


def study(name: str) -> ModuleType:
    """The module of study ``name``; a :class:`ConfigError` lists the known ones."""
    if name not in STUDIES:
        known = ", ".join(STUDIES)
        raise ConfigError(f"unknown study '{name}'; known studies: {known}", None)
    return importlib.import_module(STUDIES[name])
