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
    "module", ["irqlab", "irqlab.experiments", "irqlab.scenario", "irqlab.html_report"]
)
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
