"""The page of a reproduction (``irqlab reproduce``): what its README lists, its figures (its PNG
files, inlined), its tables (the study's headline tables first), and how to run it again."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.files import read_limited
from irqlab.report.page import Code, Figures, Page, Section, Table
from irqlab.report.parts import ci_cell, png, shell, value_cell
from irqlab.report.reading import py, read_table

#: A reproduction's CSV with more columns than this is listed, not shown (a sweep summary).
MAX_TABLE_COLUMNS = 16


# --- a reproduction -------------------------------------------------------------------------


@dataclass
class _Readme:
    title: str
    study: str
    quick: bool
    bullets: list[str]
    files: list[str]  # the files and folders the bullets name, in order


def readme_of(path: Path) -> _Readme:
    """What a reproduction's README says: the study, full or quick, and the files it lists
    (each checked to be there); a README not written by ``irqlab reproduce`` is one line."""
    readme = path / "README.md"
    try:
        text = read_limited(readme, "results").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{readme}: cannot read it ({e})", None) from None
    m = re.search(r"reproduction by `irqlab reproduce ([A-Za-z0-9_-]+)`", text)
    if not m:
        raise ConfigError(
            f"{path}: not an irqlab results folder: its README.md is not one of `irqlab "
            "reproduce`, and there is no sweep.json (a sweep) or tune.json (a tune)",
            None,
        )
    lines = text.splitlines()
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), m.group(1))
    bullets = [ln[2:].strip() for ln in lines if ln.startswith("- ")]
    files = [f for b in bullets for f in re.findall(r"`([^`\s]+)`", b)]
    files = [f for f in files if re.search(r"(\.png|\.csv|\.md|/)$", f)]
    missing = [f for f in files if not _present(path, f)]
    files = [g for f in files for g in _expand(path, f)]
    if missing:
        raise ConfigError(
            f"{path}: a reproduction folder without {', '.join(missing)} (its README.md lists "
            f"them; run `irqlab reproduce {m.group(1)}` again to make them)",
            None,
        )
    quick = "A quick" in text
    return _Readme(title, m.group(1), quick, bullets, files)


def _expand(path: Path, name: str) -> list[str]:
    """A name a README lists (``fig10_*.csv``, ``fig10_*/``) as the names it stands for."""
    if "*" not in name:
        return [name]
    folder = name.endswith("/")
    found = sorted(p for p in path.glob(name.rstrip("/")) if p.is_dir() == folder)
    return [p.name + ("/" if folder else "") for p in found]


def _present(path: Path, name: str) -> bool:
    if "*" in name:
        return bool(_expand(path, name))
    return (path / name).is_dir() if name.endswith("/") else (path / name).is_file()


def _inline(text: str) -> str:
    """A README line as plain text: `code` marks dropped (the template escapes the rest)."""
    return text.replace("`", "")


def page(path: Path, title: str | None) -> Page:
    """The page of the reproduction folder ``path``."""
    readme = readme_of(path)
    lede = [
        f"A {'quick (coarse)' if readme.quick else 'full'} reproduction by irqlab reproduce "
        f"{readme.study}.",
        "Tables show means over replications; a column with a 95% half-width beside it is "
        "shown as mean ± half-width.",
    ]
    what = Section("contents", "What it holds")
    what.items.append([_inline(b) for b in readme.bullets])

    pngs = [f for f in readme.files if f.endswith(".png")]
    pngs += sorted(p.name for p in path.glob("*.png") if p.name not in pngs)
    captions = {f: next((_inline(b) for b in readme.bullets if f"`{f}`" in b), f) for f in pngs}
    figs = Section("figures", "Figures")
    figs.items.append(Figures([png(path / f, f"figure-{Path(f).stem}", captions[f]) for f in pngs]))

    csvs = [f for f in readme.files if f.endswith(".csv")]
    csvs += sorted(p.name for p in path.glob("*.csv") if p.name not in csvs)
    # the study's headline tables first
    headlines = _headline_tables(readme.study)
    csvs.sort(key=lambda f: Path(f).stem not in headlines)
    tables = Section("tables", "Tables")
    listed = []
    for name in csvs:
        df = read_table(path / name)
        if len(df.columns) > MAX_TABLE_COLUMNS:
            listed.append(f"{name}: {len(df)} rows × {len(df.columns)} columns")
            continue
        headline = Path(name).stem in headlines
        tables.items.append(_csv_table(name, df, open_=headline or len(df) <= 25))
    if listed:
        tables.p("Too wide to show here, in the folder: " + "; ".join(listed) + ".")

    rerun = Section("rerun", "How to re-run")
    words = ["irqlab", "reproduce", readme.study, "--out", str(path)]
    if readme.quick:
        words.append("--quick")
    rerun.p(
        "Into this folder, the command reuses every run already there and redraws the "
        "figures; into a new one it runs every sweep again (the same seeds, the same numbers)."
    )
    rerun.items.append(Code(shell(words), id="command"))
    sweeps = sorted(p.name for p in path.iterdir() if (p / "sweep.json").exists())
    if sweeps:
        rerun.p(
            "Each sweep behind the figures is a folder of its own, with a report of its own "
            "and single runs to re-run:"
        )
        rerun.items.append(
            Code(
                "\n".join(
                    shell(["irqlab", "report", str(path / s), "-o", f"{s}.html"]) for s in sweeps
                )
                + "\n"
                + shell(
                    ["irqlab", "rerun", str(path / sweeps[0]), "--point", "0", "--replication", "0"]
                ),
                "",
            )
        )
    return Page(title or readme.title, "reproduction", str(path), lede, [what, figs, tables, rerun])


def _headline_tables(name: str) -> set[str]:
    """The headline tables of study ``name``, as the study names them (none if irqlab has no
    such study: a README of an older or another version)."""
    from irqlab.studies import STUDIES, study

    return set(study(name).TABLES) if name in STUDIES else set()


def _csv_table(name: str, df: Any, *, open_: bool) -> Table:
    """A CSV table; a column ``X.ci95`` beside ``X`` is shown as ``X ± half-width``."""
    columns = [c for c in df.columns if not (c.endswith(".ci95") and c[:-5] in df.columns)]
    rows = []
    for i, (_, r) in enumerate(df.iterrows()):
        cells = []
        for c in columns:
            attrs = {"data_table": name, "data_row": i, "data_key": c}
            if f"{c}.ci95" in df.columns:
                cells.append(ci_cell(py(r[c]), py(r[f"{c}.ci95"]), **attrs))
            else:
                cells.append(value_cell(py(r[c]), **attrs))
        rows.append(cells)
    table_id = "table-" + re.sub(r"[^A-Za-z0-9_-]", "-", Path(name).stem)
    return Table(table_id, name, [str(c) for c in columns], rows, open=open_)
