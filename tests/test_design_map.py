"""The maps of the code in docs/design.md, and every irqlab.* name the docs cite, are in step
with the code: a module added, renamed or removed fails here until the docs say so (the files
the docs cite by path are tests/test_docs.py's)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
#: Every document a reader follows to find code.
DOCS = [ROOT / "README.md", ROOT / "benches" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def map_blocks(section: str) -> dict[str, list[str]]:
    """The entries of the map under `### section`: for each folder line (`a/b/`, not indented),
    the names of its indented lines (`engine.rs`, `host/`)."""
    text = DESIGN.read_text()
    start = text.index(f"### {section}\n")
    block = text[start:].split("```text\n", 1)[1].split("```", 1)[0]
    folders: dict[str, list[str]] = {}
    folder = None
    for line in block.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            folder = line.strip()
            folders[folder] = []
        else:
            assert folder is not None, f"an entry before any folder: {line!r}"
            folders[folder].append(line.split()[0])
    return folders


def on_disk(folder: Path, suffix: str, package_marker: str) -> set[str]:
    """A folder's modules as the map names them: files `x.rs`/`x.py`, and subfolders that are
    modules of their own (they hold `mod.rs`/`__init__.py`) as `x/`."""
    names = {p.name for p in folder.iterdir() if p.is_file() and p.suffix == suffix}
    names |= {f"{p.name}/" for p in folder.iterdir() if (p / package_marker).is_file()}
    return names


def test_the_core_map_lists_every_module_and_nothing_else():
    folders = map_blocks("The core, part by part")
    assert folders, "the map of the core is missing"
    for folder, listed in folders.items():
        path = ROOT / folder
        assert path.is_dir(), f"docs/design.md maps {folder}, which does not exist"
        assert len(listed) == len(set(listed)), f"{folder}: an entry is listed twice"
        exists = on_disk(path, ".rs", "mod.rs")
        assert set(listed) == exists, (
            f"{folder}: in the map but not on disk {sorted(set(listed) - exists)}; "
            f"on disk but not in the map {sorted(exists - set(listed))}"
        )
    # Folders that only hold a part's configuration (kernel/, socket/) are named in the map's
    # text, next to the part they belong to.
    src = ROOT / "crates" / "irqlab-core" / "src"
    text = DESIGN.read_text()
    for sub in src.iterdir():
        if sub.is_dir() and not (sub / "mod.rs").exists():
            assert f"config in {sub.name}/" in text, f"the map does not say where {sub.name}/ is"


def test_the_python_map_lists_every_module_and_nothing_else():
    folders = map_blocks("The Python package")
    assert folders, "the map of the Python package is missing"
    for folder, listed in folders.items():
        path = ROOT / folder
        assert path.is_dir(), f"docs/design.md maps {folder}, which does not exist"
        exists = on_disk(path, ".py", "__init__.py")
        assert set(listed) == exists, (
            f"{folder}: in the map but not on disk {sorted(set(listed) - exists)}; "
            f"on disk but not in the map {sorted(exists - set(listed))}"
        )
    # Every subpackage has its own folder line.
    package = ROOT / "python" / "irqlab"
    for sub in package.iterdir():
        if (sub / "__init__.py").is_file():
            assert f"python/irqlab/{sub.name}/" in folders, f"irqlab.{sub.name} has no map"


#: A dotted name; one that ends in `*` (`irqlab.probe.MAX_*`) is a family and is not checked.
PY_MODULE = re.compile(r"`(irqlab(?:\.\w+)+)(?![\w*])")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_module_a_document_cites_exists(doc):
    stale = []
    for cited in set(PY_MODULE.findall(doc.read_text())):
        # `irqlab.report.flatten_report` names a function: the longest importable prefix
        # must be a module that has the rest as an attribute.
        parts = cited.split(".")
        for n in range(len(parts), 0, -1):
            name = ".".join(parts[:n])
            try:
                found = importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:
                found = False
            if found:
                module = importlib.import_module(name)
                obj = module
                ok = True
                for attr in parts[n:]:
                    if not hasattr(obj, attr):
                        ok = False
                        break
                    obj = getattr(obj, attr)
                if not ok:
                    stale.append(cited)
                break
        else:
            stale.append(cited)
    assert not stale, f"{doc.name} cites Python names that do not exist: {sorted(stale)}"
