"""Exceptions irqlab raises. The CLI turns each into one line on stderr and a non-zero exit."""

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
