"""Exceptions and warnings irqlab raises. The CLI turns each error into one line on stderr and
a non-zero exit, and each warning into one line on stderr.

An error names what the caller wrote: ``--out`` to a command line, ``out=`` to a Python call.
The CLI says it is the caller (:func:`command_line`); a message names an option through
:func:`option`, with both spellings."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

_on_command_line = contextvars.ContextVar("irqlab_on_command_line", default=False)


@contextlib.contextmanager
def command_line() -> Iterator[None]:
    """Errors raised meanwhile (in this thread or task) speak to a command line."""
    token = _on_command_line.set(True)
    try:
        yield
    finally:
        _on_command_line.reset(token)


def option(flag: str, argument: str) -> str:
    """``flag`` (``--fresh``) for the command line, else ``argument`` (``fresh=True``)."""
    return flag if _on_command_line.get() else argument


class IrqlabError(Exception):
    """Base class of irqlab's errors."""


class ConfigError(IrqlabError, ValueError):
    """An invalid scenario or sweep: names the key, the value and what is allowed."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a batch system's time limit) stops a command as Ctrl-C does: runs in
    progress are stopped, finished ones kept, workers released."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class InternalError(IrqlabError, RuntimeError):
    """A bug in irqlab (the core failed); the message asks for a report."""


class PolicyError(IrqlabError, RuntimeError):
    """A Python moderation policy's hook raised ``SystemExit`` (or another exception that is
    not an :class:`Exception`, Ctrl-C's ``KeyboardInterrupt`` aside), which would end the
    caller's program with no report. Names the hook, the policy's file and line; its
    ``__cause__`` is what the hook raised."""


class ModelError(IrqlabError, ArithmeticError):
    """An analytic model could not be solved (its solver failed, or its figures came out
    undefined): names the model, the arrival rate and what failed. A curve with such a row is
    not returned."""


class IrqlabWarning(UserWarning):
    """Base class of irqlab's warnings."""


class ConfigWarning(IrqlabWarning):
    """A setting that has no effect in its scenario (or not the one its name says): names the
    key, its value and why. The scenario is valid and runs. ``acts_as`` is None when the
    setting has no effect at all, else the value it acts as (a time the kernel rounds up to
    whole jiffies): a caller that drops the settings without effect keeps these."""

    def __init__(self, message: str, key: str | None = None, acts_as: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.acts_as = acts_as


class ReplayWarning(IrqlabWarning):
    """A replayed capture (``traffic.kind = "pcap"``) could not be read to the end of the run:
    it changed or became unreadable after the scenario was built. The report covers the
    packets replayed before that; its ``replay.error`` says why."""
