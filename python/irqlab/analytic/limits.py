"""How large a model the analytic solvers take, checked before anything is built.

The models' state spaces grow with the buffer B (``nic.ring_descriptors``, up to 1,048,576 in a
scenario): the M/M/1/B and M/D/1/B distributions have B + 1 states, a few arrays of B floats
(M/D/1/B at B = 1,048,576: 5 s and 80 MB per rate); the Markov chains of normal interruption
(2B + 2 states) and disable-enable (2B + 1) are solved by a banded sparse LU of about a
kilobyte per state (0.5 to 2 s and 200 to 300 MB per rate at 262,144 states). So a chain is
refused past :data:`MAX_CHAIN_STATES` and any model past :data:`MAX_CAPACITY`, naming its size
and the limit, rather than let a solve run the machine out of memory part way; a larger ring is
simulated (``irqlab run``). A curve takes at most :data:`MAX_RATES` rates, as a sweep takes at
most so many points.
"""

from __future__ import annotations

from irqlab.errors import ConfigError
from irqlab.formatting import memory

#: The largest buffer (packets, B) a model takes: the largest ring a scenario has.
MAX_CAPACITY = 1 << 20
#: The most states of a Markov chain the analytic models solve (a ring of 131,071).
MAX_CHAIN_STATES = 1 << 18
#: The most arrival rates in one curve.
MAX_RATES = 10_000
#: Memory a chain's solve takes per state (the generator, its transpose and the banded LU
#: factors; measured 0.7 to 1 KB), bytes: what the size estimate of a refusal says.
CHAIN_BYTES_PER_STATE = 1024


def check_capacity(
    capacity: int,
    model: str,
    per_packet: int,
    extra: int,
    *,
    chain: bool,
    key: str | None = None,
    name: str = "capacity",
) -> None:
    """Refuses ``model``, of ``per_packet`` × B + ``extra`` states for a buffer of B =
    ``capacity`` packets, if it is a Markov chain of more than :data:`MAX_CHAIN_STATES` states
    or the buffer holds more than :data:`MAX_CAPACITY`: a :class:`ConfigError` (a ValueError)
    naming ``key`` (a scenario's key) or else ``name`` (an argument), the model's size and
    the limit."""
    states = per_packet * capacity + extra
    if capacity <= MAX_CAPACITY and (not chain or states <= MAX_CHAIN_STATES):
        return
    where = f"{key} = {capacity}" if key else f"{name} = {capacity:,}"
    if chain:
        size = (
            f"{model} is a Markov chain of {states:,} states (about "
            f"{memory(states * CHAIN_BYTES_PER_STATE)} to solve, per rate)"
        )
        most = (MAX_CHAIN_STATES - extra) // per_packet
        limit = (
            f"the analytic models solve chains of at most {MAX_CHAIN_STATES:,} states, "
            f"a buffer of at most {most:,} packets here"
        )
    else:
        size = f"{model} has {states:,} states"
        limit = f"the analytic models take a buffer of at most {MAX_CAPACITY:,} packets"
    advice = ": simulate a larger ring with `irqlab run`" if key else ""
    raise ConfigError(f"{where}: {size}; {limit}{advice}", key)
