"""One self-contained HTML page of a result, to read in a browser and to share.

``irqlab report RESULTS -o report.html`` (and :func:`write_report`) turns any result irqlab
writes into one file that opens offline: a run's JSON report (``irqlab run --format json``), a
sweep folder, a ``tune`` folder, a ``calibrate`` folder or a reproduction folder (``irqlab
reproduce``). Which one is told by its files (:func:`detect`); a folder missing what its kind
needs is a :class:`~irqlab.errors.ConfigError` naming the missing files.

The page holds the scenario (every key), the key metrics, the figures, the tables with their
confidence intervals, and the commands that re-run each result. Figures of sweeps, runs and
tunes are Plotly figures (hover to read a value, click a legend entry to hide its line); the
plotly.js bundle is inlined once (about 5 MB), so nothing is fetched from the network.
Reproductions embed their PNG figures as data URIs. Every number in a table carries its exact
value in ``data-value`` (and ``data-ci`` for a 95% half-width), which is how the browser test
compares the page with the results.

The HTML comes from one Jinja2 template (``irqlab/templates/report.html.j2``) with autoescaping on;
figure specifications are JSON in ``<script type="application/json">`` with ``<``, ``>`` and
``&`` escaped, so no value from a result can end a script or inject markup. Plotly and Jinja2
are imported only when a report is made. Each kind of result has a module of its own that
makes its page (``run_page``, ``sweep_page``, ``tune_page``, ``calibrate_page``,
``reproduction_page``), from
the parts in ``page``.
"""

from __future__ import annotations

from pathlib import Path

from irqlab.errors import ConfigError, option
from irqlab.files import regular_file, write_atomic
from irqlab.report import calibrate_page, reproduction_page, run_page, sweep_page, tune_page
from irqlab.report.page import Code, Facts, Figures, Paragraph, Plot, Table

#: The files each kind of folder needs.
SWEEP_FILES = ("sweep.json", "runs.parquet", "summary.parquet")
TUNE_FILES = ("tune.json", "candidates.csv", "recommendation.json", "pareto.csv")


# --- detecting what RESULTS is -------------------------------------------------------------------


def detect(path: str | Path) -> str:
    """``"run"``, ``"sweep"``, ``"tune"``, ``"calibration"`` or ``"reproduction"``, from what
    ``path`` holds; a :class:`ConfigError` names what is missing from a damaged or unknown
    one."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such file or directory", None)
    if p.is_file():
        if p.suffix.lower() != ".json":
            raise ConfigError(
                f"{p}: not a result irqlab reports on; give a run's JSON report "
                "(irqlab run --format json --out r.json) or a sweep, tune or reproduction folder",
                None,
            )
        return "run"
    if not p.is_dir():
        regular_file(p, "results")  # a pipe or a device: says which
    names = {c.name for c in p.iterdir()}
    if {"calibration.json", "residuals.csv"} & names:
        missing = [f for f in calibrate_page.FILES if f not in names]
        if missing:
            raise ConfigError(
                f"{p}: a calibration folder without {', '.join(missing)} (a calibration that "
                "did not finish: run its command again to finish it)",
                None,
            )
        return "calibration"
    if not {"sweep.json", "runs.parquet", "summary.parquet"} & names and (
        calibrate_page.unfinished(p)
    ):
        raise ConfigError(
            f"{p}: a calibration that did not finish (only its journal): run its command again "
            "to finish it",
            None,
        )
    if {"tune.json", "candidates.csv", "recommendation.json"} & names:
        missing = [f for f in TUNE_FILES if f not in names]
        if missing:
            hint = " (a tune that did not finish: run its command again to finish it)"
            raise ConfigError(
                f"{p}: a tune folder without {', '.join(missing)}"
                + (hint if "tune.json" in names else ""),
                None,
            )
        return "tune"
    if {"sweep.json", "runs.parquet", "summary.parquet", "journal.sqlite"} & names:
        missing = [f for f in SWEEP_FILES if f not in names]
        if "summary.parquet" in missing and "summary.csv" in names:
            missing.remove("summary.parquet")
        if missing:
            raise ConfigError(
                f"{p}: a sweep folder without {', '.join(missing)} (a sweep that did not "
                "finish: run it again to finish it)",
                None,
            )
        return "sweep"
    if "README.md" in names:
        reproduction_page.readme_of(p)  # checks it
        return "reproduction"
    raise ConfigError(
        f"{p}: not an irqlab results folder: no sweep.json (a sweep), tune.json (a tune) or "
        "README.md of `irqlab reproduce` (a reproduction)",
        None,
    )


# --- the page ------------------------------------------------------------------------------


#: The page of each kind of result.
_PAGES = {
    "run": run_page.page,
    "sweep": sweep_page.page,
    "tune": tune_page.page,
    "calibration": calibrate_page.page,
    "reproduction": reproduction_page.page,
}


def render_report(results: str | Path, *, title: str | None = None) -> str:
    """The HTML page of ``results`` (a run's JSON report, a sweep, tune or reproduction
    folder), self-contained: no file or network fetch when it opens."""
    import jinja2

    from irqlab import __version__

    path = Path(results)
    kind = detect(path)
    page = _PAGES[kind](path, title)
    plots = [f for s in page.sections for i in s.items if isinstance(i, Figures) for f in i.figures]
    needs_plotly = any(isinstance(f, Plot) for f in plots)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irqlab", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    return template.render(
        page=page,
        version=__version__,
        plotly_js=_plotly_js() if needs_plotly else "",
        is_table=lambda x: isinstance(x, Table),
        is_code=lambda x: isinstance(x, Code),
        is_figures=lambda x: isinstance(x, Figures),
        is_facts=lambda x: isinstance(x, Facts),
        is_paragraph=lambda x: isinstance(x, Paragraph),
        is_list=lambda x: isinstance(x, list),
    )


def _plotly_js() -> str:
    """The plotly.js bundle the plotly package ships, safe to inline in a <script>."""
    from plotly.offline import get_plotlyjs

    bundle: str = get_plotlyjs()
    return bundle.replace("</script", "<\\/script")


def default_out(results: str | Path) -> Path:
    """``RESULTS/report.html`` for a folder, ``r.html`` beside ``r.json``."""
    p = Path(results)
    return p / "report.html" if p.is_dir() else p.with_suffix(".html")


def write_report(
    results: str | Path, out: str | Path | None = None, *, title: str | None = None
) -> Path:
    """Writes the page of ``results`` to ``out`` (default: :func:`default_out`); returns the
    path written."""
    target = Path(out) if out is not None else default_out(results)
    html = render_report(results, title=title)
    # whole or not at all: a full disk leaves the previous page, not half of a new one
    return write_atomic(target, html, option("--out", "out="))
