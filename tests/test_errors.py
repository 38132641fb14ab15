"""Errors at the Python/Rust boundary: the core validates again and never lets a panic out."""

from __future__ import annotations

import pytest

import irqlab
from irqlab import _irqlab


def test_core_rejects_what_python_would_have_caught():
    # bypass the Python validation: the core's own check names the key
    with pytest.raises(irqlab.ConfigError) as e:
        _irqlab.run({"nic.ring_descriptors": 0})
    assert e.value.key == "nic.ring_descriptors"
    assert str(e.value) == "nic.ring_descriptors = 0: must be an integer in 1 … 1048576"
    with pytest.raises(irqlab.ConfigError) as e:
        _irqlab.run({"no.such_key": 1})
    assert e.value.key == "no.such_key"
    with pytest.raises(irqlab.ConfigError, match="expected a number"):
        _irqlab.run({"traffic.rate_pps": [1, 2]})
    with pytest.raises(irqlab.ConfigError, match="integer too large"):
        _irqlab.run({"run.seed": 2**200})
    with pytest.raises(irqlab.ConfigError, match=r"run\.seed = -1"):
        _irqlab.run({"run.seed": -1})


def test_a_panic_in_the_core_becomes_an_internal_error_not_a_crash():
    with pytest.raises(irqlab.InternalError, match="deliberate test panic") as e:
        _irqlab._panic_for_test()
    assert "this is a bug" in str(e.value)
    # the interpreter and the module are fine afterwards
    assert irqlab.run({"run.duration_ms": 1})["packets"]["offered"] > 0


def test_python_api_errors_name_the_key():
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({"traffic": {"rate_pps": "fast"}})
    assert e.value.key == "traffic.rate_pps"
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run({"traffic": {"rate_ps": 5}})
    assert "did you mean 'traffic.rate_pps'" in str(e.value)
