"""Time and rounding as the core has them (``time.rs``, ``dist::round_ps`` in ``dist.rs``):
integer picoseconds, and the two roundings a float takes on its way to them."""

from __future__ import annotations

import math

__all__ = [
    "MASK64",
    "PS_PER_MS",
    "PS_PER_NS",
    "PS_PER_S",
    "PS_PER_US",
    "from_units",
    "round_half_away",
    "round_ps",
]

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000

MASK64 = (1 << 64) - 1


def round_half_away(x: float) -> int:
    """Rust's ``f64::round`` for a non-negative finite ``x``: nearest integer, ties away from 0.

    Computed exactly (``x - floor(x)`` is exact in binary floating point). Note that
    ``floor(x + 0.5)`` is *not* the same: it rounds 0.49999999999999994 up, and for odd integers
    above 2**52 the sum ``x + 0.5`` itself rounds.
    """
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def from_units(value: float, unit_ps: int) -> int:
    """``SimDuration::from_units``: a quantity of ``unit_ps`` picoseconds, rounded to 1 ps."""
    return round_half_away(float(value) * float(unit_ps))


def round_ps(x: float) -> int:
    """``dist::round_ps``: ``(x + 0.5) as i64 as u64``, a truncation, i.e. ``floor(x + 0.5)``
    for the non-negative ``x`` it is given (ties up; the core rounds variates this way, on
    purpose). Rust's ``as`` saturates: NaN gives 0, +inf and huge values ``i64::MAX`` (this
    happens for absurdly low rates, whose mean gap overflows to infinity)."""
    y = x + 0.5
    if math.isnan(y):
        return 0
    if y >= 2.0**63:
        return 2**63 - 1
    return max(int(y), -(2**63)) & MASK64
