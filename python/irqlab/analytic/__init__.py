"""Closed-form and numerical models of the receive path, for comparison with simulation."""

from irqlab.analytic.mm1b import MM1B, mm1b

__all__ = ["MM1B", "mm1b"]
