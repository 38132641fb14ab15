"""Moderation policies written in Python (``driver.moderation = "python"``).

A policy is an object with the hooks of the built-in ones (docs/policies.md)::

    class MyPolicy:
        def initial(self):                 # optional: the setting at interface up
            return Itr(usecs=50)           # or None: keep the scenario's nic.* settings
        def on_complete(self, s: Sample):  # a NAPI session completed; s: cumulative counters
            return None                    # or Itr(...) / Coalesce(...): a register write

Give it to a run as ``irqlab.run(scenario, policy=MyPolicy)`` (a class, or any callable
returning a policy, is called once per queue vector; an object is used for the first vector and
copied for the others), or name it in the scenario file as ``driver.policy = "module:Class"``
or ``"file.py:Class"`` (a file relative to the scenario's). An exception in a hook stops the run
and is raised from ``irqlab.run`` with its own traceback.

:class:`Linear` is the built-in ``linear`` policy re-implemented here as the worked example:
it gives the same report as ``driver.moderation = "linear"``, bit for bit.

Users import it as :mod:`irqlab.policy`, the module the core's :class:`Itr`, :class:`Coalesce`
and :class:`Sample` name as theirs.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from irqlab.core import Coalesce, Itr, Sample
from irqlab.errors import ConfigError, PolicyError
from irqlab.files import regular_file

__all__ = ["Coalesce", "Itr", "Linear", "Policy", "Sample", "factory", "load", "raised_by_policy"]


class Policy(Protocol):
    """What a moderation policy provides (``initial`` is optional)."""

    def on_complete(self, s: Sample) -> Itr | Coalesce | None: ...


def _round(x: float) -> int:
    """Rust's ``f64::round``: halves away from zero (Python's ``round`` rounds them to even)."""
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def _trunc_div(a: int, b: int) -> int:
    """C's (and Rust's) integer division, truncating toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class _Container:
    """One ring container of :class:`Linear`: its ``itr`` (EITR units, µs × 4), the time of
    its last update and the counters at its last reset."""

    def __init__(self) -> None:
        self.itr = 0
        self.last_update_ps = 0
        self.packets_at_reset = 0


class Linear:
    """The ``linear`` ITR policy (Emmerich et al.'s patch for ixgbe), step by step as the
    driver computes it: the interrupt rate falls linearly with the packet rate, from
    ``rate_max`` at no load to ``rate_min`` at ``pps_max``; the EITR is the larger interval of
    the Rx and the Tx container. The arguments are the ``driver.linear_*`` keys."""

    #: IXGBE_20K_ITR, the vector's initial EITR (50 µs); and the EITR's interval field.
    INITIAL_ITR = 200
    MAX_EITR = 0xFF8

    def __init__(
        self,
        rate_max: float = 100_000,
        rate_min: float = 8000,
        pps_max: float = 2.1e6,
        min_update_us: float = 50,
        nsec_only: bool = False,
    ) -> None:
        self.rate_max = max(_round(rate_max), 0)
        self.rate_min = max(_round(rate_min), 0)
        self.ppms_max = max(_round(pps_max / 1000), 1)
        self.min_update_ps = _round(min_update_us * 1_000_000)
        self.nsec_only = nsec_only
        self.itr = self.INITIAL_ITR
        self.rx = _Container()
        self.tx = _Container()

    def _interval(self, itr: int) -> Itr:
        return Itr(usecs=(itr & self.MAX_EITR) / 4)

    def initial(self) -> Itr:
        return self._interval(self.INITIAL_ITR)

    def _rate(self, ppms: int) -> int:
        ppms = min(ppms, self.ppms_max)
        span = self.rate_max - self.rate_min
        return self.rate_max - _trunc_div(ppms * span, self.ppms_max)

    def _update(self, c: _Container, packets_total: int, now_ps: int) -> None:
        packets = max(packets_total - c.packets_at_reset, 0)
        if packets == 0:
            return
        dt_ps = now_ps - c.last_update_ps
        if dt_ps < self.min_update_ps:
            return
        dt_ns = dt_ps // 1000
        if self.nsec_only:
            dt_ns %= 1_000_000_000
        if dt_ns == 0:
            return
        rate = self._rate(packets * 1_000_000 // dt_ns)
        if rate != c.itr:
            c.itr = min(4_000_000 // max(rate, 1), 0xFFFF)
        c.packets_at_reset = packets_total
        c.last_update_ps = now_ps

    def on_complete(self, s: Sample) -> Itr | None:
        self._update(self.tx, s.tx_packets, s.now_ps)
        self._update(self.rx, s.packets, s.now_ps)
        new = max(self.rx.itr, self.tx.itr)
        if new == self.itr:
            return None
        self.itr = new
        return self._interval(new)


def raised_by_policy(e: BaseException) -> bool:
    """Whether ``e`` came out of a Python moderation policy's hook (the run notes it so)."""
    return any("the moderation policy" in n for n in getattr(e, "__notes__", ()))


def _where(e: BaseException) -> str:
    """Where ``e`` was raised: ``policies/halve.py, line 9`` (the innermost Python frame;
    for a syntax error, the line that does not parse)."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{e.filename}, line {e.lineno}"
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return ""
    return f"{frames[-1].filename}, line {frames[-1].lineno}"


def _raised(e: BaseException) -> str:
    """``e`` as the user wrote it, on one line: ``ZeroDivisionError: division by zero``,
    ``SystemExit(0)``, ``SyntaxError: invalid syntax``."""
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r})"
    text = e.msg if isinstance(e, SyntaxError) else str(e)
    text = " ".join(str(text).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def describe(e: BaseException) -> str:
    """One line saying which hook of the moderation policy raised ``e``, what, where and when:
    ``the moderation policy's on_complete() raised ZeroDivisionError: division by zero
    (halve.py, line 9; at 1234.5 µs of simulated time)``."""
    hook, when = "the moderation policy", ""
    for n in getattr(e, "__notes__", ()):
        if m := re.match(r"raised by the moderation policy's (\S+) (.*)$", n):
            hook, when = f"the moderation policy's {m[1]}", m[2]
        elif "making the moderation policy" in n:
            hook = "the moderation policy's constructor"
    where = "; ".join(w for w in (_where(e), when) if w)
    return f"{hook} raised {_raised(e)}" + (f" ({where})" if where else "")


@contextlib.contextmanager
def hook_errors() -> Iterator[None]:
    """Around a run with a Python policy: a hook that raises ``SystemExit`` (or any other
    exception that is not an :class:`Exception`) would end the caller's program, with its
    status and no report; it becomes a :class:`PolicyError` naming the hook, the file and the
    line. ``KeyboardInterrupt`` stays Ctrl-C, and an :class:`Exception` is raised as itself
    (docs/policies.md, "Errors")."""
    try:
        yield
    except (Exception, KeyboardInterrupt):
        raise
    except BaseException as e:
        if not raised_by_policy(e):
            raise
        raise PolicyError(
            f"{describe(e)}: a policy cannot end the run's program; raise an exception to "
            "stop the run"
        ) from e


def factory(policy: Any) -> Callable[[], Any]:
    """The per-vector maker of a policy given to :func:`irqlab.run`: a class or a callable is
    called once per vector; an object (with ``on_complete``) serves the first vector and deep
    copies of it the others. Raises :class:`ConfigError` naming ``policy`` for anything else."""
    if isinstance(policy, type):
        if not callable(getattr(policy, "on_complete", None)):
            raise ConfigError(
                f"policy = {policy.__name__}: the class has no on_complete(sample) method",
                "policy",
            )
        return policy
    if callable(getattr(policy, "on_complete", None)):
        given = [policy]

        def make() -> Any:
            return given.pop() if given else copy.deepcopy(policy)

        return make
    if callable(policy):
        return cast("Callable[[], Any]", policy)
    raise ConfigError(
        f"policy = {policy!r}: expected a policy class, a callable making one, or an object "
        "with an on_complete(sample) method",
        "policy",
    )


def load(spec: str, base: Path | None = None) -> type:
    """The class named by ``driver.policy``: ``"module:Class"`` (an importable module) or
    ``"path/file.py:Class"`` (relative to ``base``, else to the working directory; a scenario
    file's own relative path is made absolute when it is loaded, see :func:`absolute`)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise ConfigError(
            f'driver.policy = "{spec}": expected "module:Class" or "file.py:Class"',
            "driver.policy",
        )
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_absolute() and base is not None:
                path = base / path
            if not os.path.lexists(path):
                raise ConfigError(f'driver.policy = "{spec}": no file {path}', "driver.policy")
            try:  # a pipe would block the import: refused from its metadata
                regular_file(path, "the policy file", "a policy is a Python file")
            except ConfigError as e:
                raise ConfigError(f'driver.policy = "{spec}": {e}', "driver.policy") from None
            unit = importlib.util.spec_from_file_location(f"irqlab_policy_{path.stem}", path)
            if unit is None or unit.loader is None:
                raise ConfigError(f'driver.policy = "{spec}": cannot load {path}', "driver.policy")
            module = importlib.util.module_from_spec(unit)
            sys.modules[unit.name] = module
            try:
                unit.loader.exec_module(module)
            except BaseException:
                del sys.modules[unit.name]
                raise
        else:
            module = importlib.import_module(where)
    except (ConfigError, KeyboardInterrupt):
        raise
    except ImportError as e:
        where_ = "" if e.name and e.name in where else f" ({_where(e)})"
        raise ConfigError(f'driver.policy = "{spec}": {e}{where_}', "driver.policy") from None
    except BaseException as e:  # the module's own code failed or ended: SyntaxError, SystemExit…
        raise ConfigError(
            f'driver.policy = "{spec}": importing it raised {_raised(e)} ({_where(e)})',
            "driver.policy",
        ) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise ConfigError(f'driver.policy = "{spec}": {where} has no {name}', "driver.policy")
    return cast(type, cls)


def absolute(spec: str, base: Path) -> str:
    """``driver.policy`` from a scenario file in ``base``: a relative ``file.py`` made absolute,
    so that the scenario runs the same from any directory (and in a sweep's workers)."""
    where, sep, name = spec.rpartition(":")
    if sep and where.endswith(".py") and not Path(where).is_absolute():
        return f"{(base / where).resolve()}:{name}"
    return spec


def resolve_policy(
    params: Mapping[str, Any], policy: Any = None
) -> tuple[dict[str, Any], Callable[[], Any] | None]:
    """The scenario's parameters and the per-vector maker for a run: ``policy`` given to the
    run makes it a ``python`` run; otherwise ``driver.moderation = "python"`` needs
    ``driver.policy``."""
    params = dict(params)
    if policy is not None:
        params["driver.moderation"] = "python"
        return params, factory(policy)
    if params.get("driver.moderation") != "python":
        return params, None
    spec = params.get("driver.policy", "")
    if not spec:
        raise ConfigError(
            'driver.moderation = "python" needs a policy: set driver.policy = "module:Class" '
            "(or pass policy=... to irqlab.run)",
            "driver.policy",
        )
    return params, factory(load(spec))
