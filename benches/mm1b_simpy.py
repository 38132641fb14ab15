"""M/M/1/B queue in SimPy, written the way a researcher typically would.

Reference point for irqlab's benchmarks. Same model as ``mm1b.c``: service mean 1.0, arrival
rate ``load``, B = capacity including the packet in service (an arrival that finds B packets in
the system is dropped). One generator process makes arrivals; each packet is its own process
that queues for a ``simpy.Resource(capacity=1)``.

Usage: ``python benches/mm1b_simpy.py N_PACKETS LOAD B SEED`` (prints one line of JSON).
"""

from __future__ import annotations

import argparse
import json
import random
import time

import simpy


def run(n_packets: int, load: float, B: int, seed: int) -> dict:
    """Simulate ``n_packets`` offered packets; return counts, mean latency and wall-clock rate."""
    if n_packets < 1 or not load > 0 or B < 1:
        raise ValueError("need n_packets >= 1, load > 0, B >= 1")
    rng = random.Random(seed)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    stats = {"offered": 0, "delivered": 0, "dropped": 0, "latency_sum": 0.0}

    def packet(env, server):
        arrived = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(1.0))
        stats["delivered"] += 1
        stats["latency_sum"] += env.now - arrived

    def source(env, server):
        for _ in range(n_packets):
            yield env.timeout(rng.expovariate(load))
            stats["offered"] += 1
            if server.count + len(server.queue) >= B:
                stats["dropped"] += 1
            else:
                env.process(packet(env, server))

    env.process(source(env, server))
    t0 = time.perf_counter()
    env.run()
    wall = time.perf_counter() - t0

    delivered = stats["delivered"]
    return {
        "offered": stats["offered"],
        "delivered": delivered,
        "dropped": stats["dropped"],
        "mean_latency": stats["latency_sum"] / delivered if delivered else 0.0,
        "wall_seconds": wall,
        "packets_per_second": stats["offered"] / wall if wall > 0 else 0.0,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("n_packets", type=int)
    p.add_argument("load", type=float)
    p.add_argument("B", type=int)
    p.add_argument("seed", type=int)
    a = p.parse_args()
    print(json.dumps(run(a.n_packets, a.load, a.B, a.seed)))


if __name__ == "__main__":
    main()
