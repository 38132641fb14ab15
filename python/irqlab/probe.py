"""``irqlab probe``: its home is now :mod:`irqlab.ops.probe`; this module keeps the old import
path (``from irqlab.probe import probe, PROBED, ...``) working."""

from __future__ import annotations

from irqlab.ops.probe import *  # noqa: F403
from irqlab.ops.probe import __all__ as __all__
