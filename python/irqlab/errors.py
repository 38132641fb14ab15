"""Exceptions and warnings irqlab raises. The CLI turns each error into one line on stderr and
a non-zero exit, and each warning into one line on stderr."""

from __future__ import annotations


class IrqlabError(Exception):
    """Base class of irqlab's errors."""


class ConfigError(IrqlabError, ValueError):
    """An invalid scenario or sweep: names the key, the value and what is allowed."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class InternalError(IrqlabError, RuntimeError):
    """A bug in irqlab (the core failed); the message asks for a report."""


class IrqlabWarning(UserWarning):
    """Base class of irqlab's warnings."""


class ConfigWarning(IrqlabWarning):
    """A setting that has no effect in its scenario (or not the one its name says): names the
    key, its value and why. The scenario is valid and runs."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ReplayWarning(IrqlabWarning):
    """A replayed capture (``traffic.kind = "pcap"``) could not be read to the end of the run:
    it changed or became unreadable after the scenario was built. The report covers the
    packets replayed before that; its ``replay.error`` says why."""
