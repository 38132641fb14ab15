"""What a moderation policy written in Python costs against the built-in ones.

Runs the `emmerich2015` preset (64-byte CBR at 1 Mpps, 1 s simulated) with the built-in
`linear` and its Python twin `irqlab.policy.Linear` (the same report, bit for bit), and with
built-in `static` against a Python policy that never writes (the cost of the crossing alone).
Prints the best of --repeat wall times and the extra cost per hook call.

    python benches/python_policy.py [--repeat 3] [--duration-ms 1000]
"""

from __future__ import annotations

import argparse
import time

import irqlab
from irqlab.policy import Linear


class Nothing:
    """A policy that never writes: what remains is the cost of calling it."""

    def on_complete(self, s: object) -> None:
        return None


def best(repeat: int, **kwargs: object) -> tuple[float, dict]:
    times, report = [], {}
    for _ in range(repeat):
        start = time.perf_counter()
        report = irqlab.run(**kwargs)
        times.append(time.perf_counter() - start)
    return min(times), report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration-ms", type=float, default=1000)
    args = ap.parse_args()
    base = {
        "platform": {"preset": "emmerich2015"},
        "traffic": {"kind": "cbr", "rate_pps": 1e6},
        "run": {"duration_ms": args.duration_ms},
    }
    pairs = [
        ("built-in linear", {"overrides": {"driver.moderation": "linear"}}),
        ("irqlab.policy.Linear", {"policy": Linear}),
        ("built-in static", {}),
        ("Python, never writes", {"policy": Nothing}),
    ]
    rows = [(name, *best(args.repeat, scenario=base, **kw)) for name, kw in pairs]
    print(f"{'policy':24s} {'wall ms':>9s} {'hook calls':>11s} {'extra per call':>15s}")
    for i, (name, wall, report) in enumerate(rows):
        calls = report["counts"]["polls"]
        extra = ""
        if i % 2 == 1:
            builtin = rows[i - 1][1]
            extra = f"{(wall - builtin) / calls * 1e6:.2f} µs"
        print(f"{name:24s} {wall * 1e3:9.1f} {calls:11,d} {extra:>15s}")


if __name__ == "__main__":
    main()
