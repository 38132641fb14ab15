"""The Python package's shape holds: every study keeps the one protocol that `irqlab reproduce`
and `irqlab report` ask."""

from __future__ import annotations

import pytest

from irqlab.studies import STUDIES, Study, study


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_study_provides_the_protocol_under_its_own_name(name):
    s = study(name)
    assert isinstance(s, Study)
    assert name == s.NAME
    assert s.TABLES, "a study has at least one headline table"
    assert all(callable(markdown) for markdown in s.TABLES.values())
