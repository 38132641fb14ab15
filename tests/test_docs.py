"""The documentation matches the program: every scenario key is documented with its default,
and the README's example scenario runs."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

import irqlab
from irqlab.scenario import schema

ROOT = Path(__file__).resolve().parents[1]


def doc_rows() -> dict[str, str]:
    """``{key: documented default}`` from the tables of docs/scenario.md, the fields of
    numbered entries included as ``app.N.core``."""
    rows = {}
    text = (ROOT / "docs" / "scenario.md").read_text()
    for line in text.split("## Keys", 1)[1].splitlines():
        m = re.match(r"\| `([a-z_.N]+)` \| ([^|]+) \|", line)
        if m:
            rows[m.group(1)] = m.group(2).strip()
    return rows


def test_every_key_is_documented_with_its_default():
    rows = doc_rows()
    for key, spec in schema().items():
        assert key in rows, f"{key} missing from docs/scenario.md"
        default = spec["default"]
        documented = rows[key].strip("`")
        if isinstance(default, str):
            assert documented.strip('"') == default, key
            assert documented.startswith('"'), f"{key}: write a string default quoted"
        elif isinstance(default, bool):
            assert documented == ("true" if default else "false"), key
        elif isinstance(default, list):
            assert json.loads(documented) == default, key
        else:
            assert float(documented) == float(default), key


def test_numbered_entries_are_documented_field_by_field():
    rows = doc_rows()
    templated = [k for k, spec in schema().items() if "table" in spec]
    assert "app.N.flows" in templated and "traffic.classes.N.share" in templated
    assert all(k in rows for k in templated)


def test_no_documented_key_is_unknown():
    assert set(doc_rows()) <= set(schema())


def test_the_toml_examples_are_valid_scenarios():
    text = (ROOT / "docs" / "scenario.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        report = irqlab.run(tomllib.loads(block), {"run.duration_ms": 2.0})
        assert report["packets"]["offered"] > 0


@pytest.mark.parametrize(
    "module",
    [
        "irqlab",
        "irqlab.experiments.running",
        "irqlab.scenario",
        "irqlab.formatting",
        "irqlab.toml_writer",
    ],
)
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


#: A path in the repository as the README and docs/ write it: from the repository's root.
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:crates|python|tests|benches|examples|docs|\.cargo|\.ci|\.github)/[\w./-]*\w)"
)
#: A source file of the core as the docs name it for short, from its src/ (`host/polling.rs`),
#: or any path climbing out of docs/ (`../x`).
SHORT_SOURCE = re.compile(r"`((?:[\w-]+/)*[\w-]+\.rs)`")
RELATIVE = re.compile(r"(?<![\w./-])(\.\./[\w./-]*\w)")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: p.name)
def test_every_file_the_docs_cite_exists(doc):
    text = doc.read_text()
    missing = [p for p in REPO_PATH.findall(text) if not (ROOT / p).exists()]
    core = ROOT / "crates" / "irqlab-core"
    for p in SHORT_SOURCE.findall(text):
        if not p.startswith("crates/") and not any(
            (core / d / p).exists() for d in ("src", "tests", "benches")
        ):
            missing.append(p)
    for p in RELATIVE.findall(text):
        target = (doc.parent / p).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            missing.append(p)
    assert not missing, f"{doc.name} cites files that do not exist: {missing}"


def test_the_worked_example_of_numbered_entries_holds_what_its_text_says():
    # docs/scenario.md's example host: a load both cores carry, no loss; at 400 kpps, overload
    text = (ROOT / "docs" / "scenario.md").read_text()
    section = text.split("## Numbered entries", 1)[1]
    example = tomllib.loads(re.findall(r"```toml\n(.*?)```", section, re.S)[0])
    assert "neither is saturated: no loss" in section
    report = irqlab.run(example)
    assert report["loss_ratio"] == 0
    busy = [c["cpu"]["busy"] for c in report["per_core"]]
    assert all(0.6 < b < 0.9 for b in busy), busy
    cheaper = irqlab.run(example, {"app.1.cost_ns": 500})
    assert cheaper["per_core"][1]["cpu"]["busy"] < busy[1] - 0.05
    assert "At 400 kpps the same host is overloaded" in section
    overloaded = irqlab.run(example, {"traffic.rate_pps": 400_000})
    assert 0.6 < overloaded["loss_ratio"] < 0.8
    p = overloaded["packets"]
    assert p["dropped_socket"] > p["dropped_nic"]
