"""The documentation matches the program: every scenario key is documented with its default,
and the README's example scenario runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irqlab.scenario import schema

ROOT = Path(__file__).resolve().parents[1]


def doc_rows() -> dict[str, str]:
    rows = {}
    text = (ROOT / "docs" / "scenario.md").read_text()
    for line in text.split("## Keys", 1)[1].splitlines():
        m = re.match(r"\| `([a-z_.]+)` \| ([^|]+) \|", line)
        if m:
            rows[m.group(1)] = m.group(2).strip()
    return rows


def test_every_key_is_documented_with_its_default():
    rows = doc_rows()
    for key, spec in schema().items():
        assert key in rows, f"{key} missing from docs/scenario.md"
        default = spec["default"]
        documented = rows[key].strip("`").strip('"')
        if isinstance(default, str):
            assert documented == default, key
        else:
            assert float(documented) == float(default), key


def test_no_documented_key_is_unknown():
    assert set(doc_rows()) <= set(schema())


@pytest.mark.parametrize("module", ["irqlab", "irqlab.experiments", "irqlab.scenario"])
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
