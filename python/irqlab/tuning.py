"""Tuning: its home is now :mod:`irqlab.ops.tune`; this module keeps the old import path
(``from irqlab.tuning import tune, Slo, ...``) working."""

from __future__ import annotations

from irqlab.ops.tune import *  # noqa: F403
from irqlab.ops.tune import __all__ as __all__
