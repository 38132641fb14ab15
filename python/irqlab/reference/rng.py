"""The random streams (``rng.rs``, rand_xoshiro): SplitMix64 to expand a seed, xoshiro256++
with its jumps, the ziggurat for exponential variates, and one stream per component of a run
(its id part of the result contract), so that the reference draws the core's numbers."""

from __future__ import annotations

import math

from irqlab.reference.units import MASK64

__all__ = [
    "ARRIVALS",
    "CTX_SWITCH_COST",
    "FLOWS",
    "IRQ_COST",
    "MASK_COST",
    "N_STREAMS",
    "POLL_COST",
    "PROTO_COST",
    "SIZES",
    "SOFTIRQ_COST",
    "UNMASK_COST",
    "ZIG_F",
    "ZIG_R",
    "ZIG_V",
    "ZIG_X",
    "SplitMix64",
    "Stream",
    "Xoshiro256PlusPlus",
    "streams",
]


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK64


class SplitMix64:
    """rand_xoshiro's ``SplitMix64``, used to expand a ``u64`` seed."""

    def __init__(self, seed: int) -> None:
        self.x = seed & MASK64

    def next_u64(self) -> int:
        self.x = (self.x + 0x9E3779B97F4A7C15) & MASK64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


class Xoshiro256PlusPlus:
    """rand_xoshiro 0.8.1's ``Xoshiro256PlusPlus``."""

    JUMP = (0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C)
    LONG_JUMP = (0x76E15D3EFEFDCBBF, 0xC5004E441C522FB3, 0x77710069854EE241, 0x39109BB02ACBE635)

    def __init__(self, state: list[int]) -> None:
        if not any(state):
            # rand_xoshiro's zero_seed_fallback: the first words of SplitMix64(0).
            sm = SplitMix64(0)
            state = [sm.next_u64() for _ in range(4)]
        self.s = list(state)

    @classmethod
    def seed_from_u64(cls, seed: int) -> Xoshiro256PlusPlus:
        """``from_rng(SplitMix64(seed))``: 32 seed bytes filled by four little-endian words and
        read back as four little-endian words, i.e. the first four SplitMix64 outputs."""
        sm = SplitMix64(seed)
        return cls([sm.next_u64() for _ in range(4)])

    def clone(self) -> Xoshiro256PlusPlus:
        return Xoshiro256PlusPlus(self.s)

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[0] + s[3]) & MASK64, 23) + s[0]) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def _jump_with(self, table: tuple[int, int, int, int]) -> None:
        acc = [0, 0, 0, 0]
        for word in table:
            for b in range(64):
                if word & (1 << b):
                    for i in range(4):
                        acc[i] ^= self.s[i]
                self.next_u64()
        self.s = acc

    def jump(self) -> None:
        """Equivalent to 2**128 calls of ``next_u64``."""
        self._jump_with(self.JUMP)

    def long_jump(self) -> None:
        """Equivalent to 2**192 calls of ``next_u64``."""
        self._jump_with(self.LONG_JUMP)


# The ziggurat of exp(-x) (Marsaglia & Tsang 2000) with 256 strips, as rng.rs builds it.
ZIG_R = 7.69711747013105  # start of the tail
ZIG_V = 0.003949659822581557  # area of each strip


def _ziggurat_tables() -> tuple[list[float], list[float]]:
    """Strip ``i`` spans ``[0, x[i]]`` with ``f[i] = exp(-x[i])``; ``x[0] = V e^R`` (the base
    strip), ``x[1] = R``, ``x[i+1] = -ln(exp(-x[i]) + V / x[i])``, ``x[256] = 0``."""
    x = [0.0] * 257
    x[0] = ZIG_V * math.exp(ZIG_R)
    x[1] = ZIG_R
    for i in range(1, 255):
        x[i + 1] = -math.log(math.exp(-x[i]) + ZIG_V / x[i])
    x[256] = 0.0
    f = [math.exp(-xi) for xi in x]
    return x, f


ZIG_X, ZIG_F = _ziggurat_tables()


class Stream:
    """One component's random stream (``rng::Stream``)."""

    def __init__(self, rng: Xoshiro256PlusPlus) -> None:
        self.rng = rng

    def next_u64(self) -> int:
        return self.rng.next_u64()

    def uniform(self) -> float:
        """A double in [0, 1): the top 53 bits of the next output."""
        return (self.rng.next_u64() >> 11) * (1.0 / (1 << 53))

    def exp1(self) -> float:
        """A standard exponential variate by the ziggurat: the low 8 bits of one draw choose
        the strip, the top 53 the position in it; the wedge and tail cases (about 1.1%) draw
        further uniforms from the same stream."""
        while True:
            bits = self.rng.next_u64()
            i = bits & 0xFF
            x = (bits >> 11) * (1.0 / (1 << 53)) * ZIG_X[i]
            if x < ZIG_X[i + 1]:
                return x
            if i == 0:
                # The base strip's tail beyond R is R + Exp(1) (memorylessness).
                return ZIG_R - math.log(1.0 - self.uniform())
            if ZIG_F[i] + (ZIG_F[i + 1] - ZIG_F[i]) * self.uniform() < math.exp(-x):
                return x

    def exponential(self, mean: float) -> float:
        return self.exp1() * mean


# Stream ids (rng::StreamId): part of the result contract.
ARRIVALS, SIZES, IRQ_COST, PROTO_COST, POLL_COST = 0, 1, 2, 3, 4
SOFTIRQ_COST, MASK_COST, UNMASK_COST, CTX_SWITCH_COST = 5, 6, 7, 8
FLOWS = 11
N_STREAMS = 12


def streams(seed: int, replication: int) -> list[Stream]:
    """All streams of a run: base ``seed_from_u64(seed)``, ``replication`` long jumps on, then
    stream ``k`` starts ``k`` jumps further."""
    base = Xoshiro256PlusPlus.seed_from_u64(seed)
    for _ in range(replication):
        base.long_jump()
    out = []
    for _ in range(N_STREAMS):
        out.append(Stream(base.clone()))
        base.jump()
    return out
