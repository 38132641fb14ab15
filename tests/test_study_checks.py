"""`irqlab calibrate` on the studies' targets files that fit nothing new: emmerich2015's fit
gives back the built-in preset it runs on (its calibration is the preset), and the files of
the studies that fit nothing (salah2007: the paper's own parameters; irq_suspend: another
study's platform) are checks whose every validation point holds within 3σ."""

from __future__ import annotations

from importlib import resources

import pytest

from irqlab import core
from irqlab.calibration import calibrate

pytestmark = pytest.mark.slow


def _file(study: str) -> str:
    return str(resources.files("irqlab.studies").joinpath(f"{study}.targets.toml"))


def test_the_emmerich2015_fit_gives_back_the_built_in_preset():
    result = calibrate(_file("emmerich2015"), executor="inline")
    preset = core.resolve({"platform.preset": "emmerich2015"})
    assert result.parameters, "emmerich2015 fits its costs"
    for p in result.parameters:
        assert p.identifiable, p.key
        assert abs(p.value - preset[p.key]) <= 2 * p.sigma, (p.key, p.value, p.sigma)
    assert not result.poor, result.poor_reasons


@pytest.mark.parametrize("study", ["salah2007", "irq_suspend"])
def test_a_study_that_fits_nothing_meets_its_validation_points(study):
    result = calibrate(_file(study), executor="inline")
    assert result.parameters == []
    assert result.rows, "every such file has validation points"
    for row in result.rows:
        assert row["role"] == "validation"
        assert abs(row["normalised"]) <= 3, row


def test_irq_suspend_runs_on_the_platform_busypoll2013_fitted():
    from irqlab.studies import irq_suspend
    from irqlab.studies.common import preset, targets

    fitted = preset("irqlab.studies.busypoll2013")
    assert fitted and all(irq_suspend.BASE[k] == v for k, v in fitted.items())
    base = targets("irqlab.studies.irq_suspend")["base"]
    assert all(base[k] == v for k, v in fitted.items()), "its check runs on the same platform"
