"""Per-NAPI settings (``[[napi]]``, ``napi.N.*``): a value of one NAPI overrides the
device-wide ``kernel.*`` value for that vector alone, from a scenario file, as an override,
and as a sweep's axis."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import irqlab
from irqlab.cli import main

#: Two cores, a vector on each, deterministic costs; no deferral for the device.
HOST = """
scheme = "napi"
[run]
duration_ms = 5.0
warmup_ms = 0.0
[host]
cores = 2
[nic]
queues = 2
irq_affinity = [0, 1]
[traffic]
kind = "cbr"
rate_pps = 200_000
flows = 64
[platform]
irq_dist = "deterministic"
proto_dist = "deterministic"
poll_timer_dist = "deterministic"
"""

#: A bare entry for vector 0 (the device's values), vector 1's own deferral.
VECTOR_1 = """
[[napi]]
[[napi]]
defer_hard_irqs = 2
gro_flush_timeout_ns = 20_000
"""


def _scenario(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "host.toml"
    f.write_text(text)
    return f


def test_a_napi_entry_defers_its_vector_only(tmp_path):
    base = irqlab.run(_scenario(tmp_path, HOST))
    r = irqlab.run(_scenario(tmp_path, HOST + VECTOR_1))
    q0, q1 = r["per_queue"]
    assert q1["counts"]["timer_ticks"] > 0
    assert q1["irq_per_s"] < base["per_queue"][1]["irq_per_s"] / 10
    assert q0 == base["per_queue"][0]
    # a per-NAPI 0 under a device-wide value: vector 1 as with no deferral at all
    off = irqlab.run(
        _scenario(tmp_path, HOST),
        {
            "kernel.napi_defer_hard_irqs": 2,
            "kernel.gro_flush_timeout_ns": 20_000,
            "napi.0.defer_hard_irqs": -1,
            "napi.1.gro_flush_timeout_ns": 0,
        },
    )
    assert off["per_queue"][0]["counts"]["timer_ticks"] > 0
    assert off["per_queue"][1] == base["per_queue"][1]


def test_a_napi_entry_past_the_last_vector_is_a_one_line_error(tmp_path):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run(_scenario(tmp_path, HOST + VECTOR_1 + '[[napi]]\nthreaded = "off"\n'))
    msg = str(e.value)
    assert "napi.2.threaded" in msg and "vectors 0 … 1" in msg, msg
    assert "\n" not in msg


def test_a_sweep_over_a_napi_setting(tmp_path):
    _scenario(tmp_path, HOST + VECTOR_1)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        '[sweep]\nbase = "host.toml"\nreplications = 1\nwarmup = 0\nout = "out"\n'
        '[axes]\n"napi.1.gro_flush_timeout_ns" = [0, 20_000]\n'
    )
    done = CliRunner().invoke(main, ["sweep", str(sweep), "--executor", "inline"])
    assert done.exit_code == 0, done.output
    rows = pd.read_csv(tmp_path / "out" / "summary.csv")
    rows = rows.set_index("napi.1.gro_flush_timeout_ns")
    # vector 1's deferral leaves its vector's interrupts to the timer: half of the host's go
    assert rows.loc[20_000, "irq_per_s"] < 0.6 * rows.loc[0, "irq_per_s"]
