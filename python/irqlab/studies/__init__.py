"""Reproductions of published studies: each module re-runs one paper's experiments on irqlab's
host model and writes its figures (PNG), their data (CSV) and a table of headline numbers.

``irqlab reproduce NAME --out DIR`` (and :func:`reproduce`) runs one; ``--quick`` gives a
coarse version in under a minute. A study is a module that provides the :class:`Study`
protocol — its name and title, its seed, a full and a quick plan, how it runs its sweeps into
tables, which of them are its headline tables, its figures, its Markdown documents and the body
of its README — and :func:`reproduce` does the rest the same way for every study: the folder,
the plan, the CSV files, the figures, the README's first lines (which ``irqlab report`` reads
to know the study). ``irqlab.studies.common`` holds what the studies share while they run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from irqlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from irqlab.studies.common import Sweeps

#: Study name → module under irqlab.studies.
STUDIES = {
    "salah2007": "irqlab.studies.salah2007",
    "emmerich2015": "irqlab.studies.emmerich2015",
    "chang2007": "irqlab.studies.chang2007",
    "beifuss2016": "irqlab.studies.beifuss2016",
    "busypoll2013": "irqlab.studies.busypoll2013",
    "irq-suspend": "irqlab.studies.irq_suspend",
    "threaded-busypoll": "irqlab.studies.threaded_busypoll",
}


@runtime_checkable
class Study(Protocol):
    """What a study module provides; :func:`reproduce` runs it."""

    #: the name ``irqlab reproduce`` takes (a key of :data:`STUDIES`)
    NAME: str
    #: the paper, in one line: the README's title and what ``irqlab reproduce`` says first
    TITLE: str
    #: the seed of every sweep it runs
    SEED: int
    #: how much it runs: the full reproduction and the quick (coarse) one
    FULL: Any
    QUICK: Any
    #: its headline tables by name, each with the function that writes it as Markdown:
    #: ``irqlab reproduce`` prints them, ``irqlab report`` shows them first
    TABLES: Mapping[str, Callable[[pd.DataFrame], str]]

    def run(self, sweeps: Sweeps, plan: Any) -> dict[str, pd.DataFrame]:
        """Runs its sweeps (``sweeps`` knows the folder, the seed and the executor) and
        returns every table by name; each is written as ``NAME.csv``."""
        ...

    def figures(self, tables: Mapping[str, pd.DataFrame]) -> dict[str, Figure]:
        """Its figures by file name (``fig6.png``)."""
        ...

    def documents(self, tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
        """Its Markdown files beside the CSV ones, by file name (``headline.md``)."""
        ...

    def readme(self, tables: Mapping[str, pd.DataFrame]) -> str:
        """Its README after the title and the line naming the reproduction: what each file
        holds, then the headline tables."""
        ...


def study(name: str) -> Study:
    """The module of study ``name``; a :class:`ConfigError` lists the known ones."""
    if name not in STUDIES:
        known = ", ".join(STUDIES)
        raise ConfigError(f"unknown study '{name}'; known studies: {known}", None)
    module: Any = importlib.import_module(STUDIES[name])
    return module  # type: ignore[no-any-return]


def readme_header(title: str, name: str, quick: bool) -> str:
    """A reproduction's README starts so: its title, then the line ``irqlab report`` reads to
    tell a reproduction (and which study, full or quick) from other folders."""
    kind = "quick (coarse)" if quick else "full"
    return f"# {title}\n\nA {kind} reproduction by `irqlab reproduce {name}`.\n\n"


def reproduce(
    which: str | Study | ModuleType,
    out: str | Path,
    *,
    quick: bool = False,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> dict[str, pd.DataFrame]:
    """Runs a study (its name, or its module) into ``out``; returns its tables by name.

    The study's sweeps go to folders of their own in ``out`` (rerunning resumes them); every
    table is written as ``NAME.csv``, then the figures, the Markdown documents and
    ``README.md``. ``executor``, ``workers``, ``scheduler`` and ``progress`` are
    :func:`irqlab.sweep`'s.
    """
    from irqlab.studies.common import Sweeps

    s: Any = study(which) if isinstance(which, str) else which
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    options = {"executor": executor, "workers": workers, "scheduler": scheduler}
    sweeps = Sweeps(folder, s.SEED, {**options, "progress": progress})
    tables: dict[str, pd.DataFrame] = s.run(sweeps, s.QUICK if quick else s.FULL)
    for name, df in tables.items():
        df.to_csv(folder / f"{name}.csv", index=False)
    for name, figure in s.figures(tables).items():
        figure.savefig(folder / name)
    for name, text in s.documents(tables).items():
        (folder / name).write_text(text, encoding="utf-8")
    readme = readme_header(s.TITLE, s.NAME, quick) + s.readme(tables)
    (folder / "README.md").write_text(readme, encoding="utf-8")
    return tables
