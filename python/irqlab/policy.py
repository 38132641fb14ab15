"""Moderation policies written in Python: their home is now :mod:`irqlab.ops.policies`; this
module keeps the old import path (``from irqlab.policy import Itr``, ``driver.policy =
"irqlab.policy:Linear"``) working."""

from __future__ import annotations

from irqlab.ops.policies import (
    Coalesce,
    Itr,
    Linear,
    Policy,
    Sample,
    absolute,
    describe,
    factory,
    hook_errors,
    load,
    raised_by_policy,
    resolve_policy,
)

__all__ = [
    "Coalesce",
    "Itr",
    "Linear",
    "Policy",
    "Sample",
    "absolute",
    "describe",
    "factory",
    "hook_errors",
    "load",
    "raised_by_policy",
    "resolve_policy",
]
