# The compiled core's Python face (crates/irqlab-py/src): what it exports, with its types.
# Checked against the built extension by `python -m mypy.stubtest irqlab._irqlab` (make lint,
# .ci/run). Only irqlab.core imports the extension; the shapes of what it returns (Report,
# PacketTrace, ...) are TypedDicts defined there.

from collections.abc import Callable
from os import PathLike
from typing import ClassVar, final

from irqlab.core import KeySpec, PacketTrace, Policy, Report, Series, TraceInfo, Value

__all__ = [
    "Coalesce",
    "Itr",
    "ResolvedScenario",
    "Sample",
    "__version__",
    "_panic_for_test",
    "frame_sizes",
    "run",
    "run_series",
    "run_traced",
    "schema",
    "trace_info",
]

__version__: str

@final
class ResolvedScenario:
    """A scenario built by the core once: validated, every key resolved, its warnings found."""

    def __new__(cls, params: dict[str, Value]) -> ResolvedScenario: ...
    @property
    def params(self) -> dict[str, Value]: ...
    @property
    def warnings(self) -> list[tuple[str, str]]: ...
    @property
    def acting(self) -> list[tuple[str, str]]: ...

def run(
    scenario: ResolvedScenario | dict[str, Value], policy: Callable[[], Policy] | None = None
) -> Report: ...
def run_traced(
    scenario: ResolvedScenario | dict[str, Value], policy: Callable[[], Policy] | None = None
) -> tuple[Report, PacketTrace]: ...
def run_series(
    scenario: ResolvedScenario | dict[str, Value],
    buckets: int,
    policy: Callable[[], Policy] | None = None,
) -> tuple[Report, Series]: ...
def schema() -> list[KeySpec]: ...
def frame_sizes(params: dict[str, Value]) -> list[tuple[int, float]]: ...
def trace_info(path: str | PathLike[str], top: int) -> TraceInfo: ...
def _panic_for_test(in_run: bool = False) -> None: ...

# A Python moderation policy's view and its register writes (irqlab.policy).

@final
class Sample:
    def __new__(
        cls,
        now_ps: int,
        jiffies: int = 0,
        packets: int = 0,
        bytes: int = 0,
        events: int = 0,
        tx_packets: int = 0,
        tx_bytes: int = 0,
    ) -> Sample: ...
    @property
    def now_ps(self) -> int: ...
    @property
    def jiffies(self) -> int: ...
    @property
    def packets(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def tx_packets(self) -> int: ...
    @property
    def tx_bytes(self) -> int: ...

@final
class Itr:
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, usecs: float) -> Itr: ...
    def __eq__(self, value: object, /) -> bool: ...
    @property
    def usecs(self) -> float: ...

@final
class Coalesce:
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, usecs: float, frames: int = 0, restart: bool = False) -> Coalesce: ...
    def __eq__(self, value: object, /) -> bool: ...
    @property
    def usecs(self) -> float: ...
    @property
    def frames(self) -> int: ...
    @property
    def restart(self) -> bool: ...
