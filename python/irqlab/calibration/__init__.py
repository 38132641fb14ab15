"""Calibration: the free parameters of a scenario (any numeric keys, usually the platform's
costs) fitted to measured values, with uncertainties, identifiability and residuals.

``irqlab calibrate TARGETS.toml`` (and :func:`calibrate`) reads a targets file — the base
scenario, the free parameters with their bounds, the targets (a scenario point, a metric, a
measured value and its uncertainty) and validation points (measured, not fitted) — and fits
with :func:`scipy.optimize.least_squares` (bounded, 'trf') on the normalised residuals. Every
candidate runs every point at the same seeds (common random numbers), so a finite difference
is a difference of the model, not of its noise; the candidates of one Jacobian run in one batch
on the executor, and every finished run is kept in the folder's journal, keyed by its full
scenario: a calibration resumes after a kill by replaying its deterministic optimiser.

The package: :mod:`~irqlab.calibration.spec` (the targets file, parsed and checked),
:mod:`~irqlab.calibration.model` (candidates evaluated in batches, the journal),
:mod:`~irqlab.calibration.fit` (:func:`calibrate`), :mod:`~irqlab.calibration.analysis`
(uncertainty, identifiability, the profile, the fit's quality) and
:mod:`~irqlab.calibration.result` (:class:`Calibration` and the files it writes). docs/calibrate.md
is the user's page.
"""

from __future__ import annotations

from irqlab.calibration.fit import calibrate
from irqlab.calibration.result import Calibration, Parameter, summary_text, write_outputs
from irqlab.calibration.spec import Entry, Free, TargetsSpec, parse_targets

__all__ = [
    "Calibration",
    "Entry",
    "Free",
    "Parameter",
    "TargetsSpec",
    "calibrate",
    "parse_targets",
    "summary_text",
    "write_outputs",
]
