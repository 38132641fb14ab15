"""Benchmark irqlab's speed: simulated packets per wall-clock second.

Runs irqlab's ``ideal`` scheme (an M/M/1/B queue) and ``napi`` scheme, a hand-written C
M/M/1/B simulation (``mm1b.c``, compiled on the fly with ``gcc -O2``) and the same model in SimPy
(``mm1b_simpy.py``), then prints a table, the ratios and whether the speed targets hold.

Usage: ``python benches/run_benchmarks.py [--packets N] [--quick] [--repeat R] [--json OUT]``
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
C_SOURCE = HERE / "mm1b.c"
C_BINARY = HERE / "build" / "mm1b"

LOAD = 0.9  # M/M/1/B offered load (service mean 1 us in irqlab, 1.0 in C and SimPy)
BUFFER = 64  # B, capacity including the packet in service (irqlab: nic.ring_descriptors)
SEED = 1
NAPI_RATE_PPS = 1e6
APP_RATE_PPS = 6e5
#: 64-byte frames at 100 Gbit/s: 1e11 / ((64 + 20) · 8).
LINE_RATE_100G_64B = 1e11 / (84 * 8)

# Targets.
TARGET_VS_SIMPY = 100.0  # irqlab ideal >= 100x SimPy
TARGET_VS_C = 1.0  # irqlab ideal >= C reference
TARGET_NAPI_PPS = 10e6  # irqlab napi >= 10 M packets/s
TARGET_RSS16_COST = 1.3  # 16-core RSS: at most 1.3x the wall time per packet of 1 core


def closed_form_loss(load: float, b: int) -> float:
    """Loss probability of M/M/1/B (PASTA): p_B = (1-rho) rho^B / (1 - rho^(B+1))."""
    if load == 1.0:
        return 1.0 / (b + 1)
    return (1 - load) * load**b / (1 - load ** (b + 1))


# --------------------------------------------------------------------------- machine / versions


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 0


def gcc_version() -> str | None:
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    out = subprocess.run([gcc, "-dumpfullversion"], check=False, capture_output=True, text=True)
    return out.stdout.strip() or None


def simpy_version() -> str | None:
    try:
        import simpy
    except ImportError:
        return None
    return getattr(simpy, "__version__", "unknown")


# --------------------------------------------------------------------------- benchmarks


def build_c() -> Path | None:
    """Compile mm1b.c into build/ if the binary is missing or older than the source."""
    if C_BINARY.exists() and C_BINARY.stat().st_mtime >= C_SOURCE.stat().st_mtime:
        return C_BINARY
    gcc = shutil.which("gcc")
    if gcc is None:
        print("gcc not found: skipping the C reference", file=sys.stderr)
        return None
    C_BINARY.parent.mkdir(parents=True, exist_ok=True)
    cmd = [gcc, "-O2", "-o", str(C_BINARY), str(C_SOURCE), "-lm"]
    print("building:", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"gcc failed, skipping the C reference:\n{out.stderr}", file=sys.stderr)
        return None
    return C_BINARY


def best_of(runs: list[dict]) -> dict:
    """The fastest run, with every run's rate kept alongside."""
    best = max(runs, key=lambda r: r["packets_per_second"])
    return {**best, "all_packets_per_second": [r["packets_per_second"] for r in runs]}


def run_c(binary: Path, n: int) -> dict:
    cmd = [str(binary), str(n), repr(LOAD), str(BUFFER), str(SEED)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    r["loss"] = r["dropped"] / r["offered"]
    return r


def bench_simpy(n: int, repeat: int) -> dict:
    sys.path.insert(0, str(HERE))  # benches/ is not a package
    import mm1b_simpy

    runs = [mm1b_simpy.run(n, LOAD, BUFFER, SEED) for _ in range(repeat)]
    r = best_of(runs)
    r["loss"] = r["dropped"] / r["offered"]
    return r


def ideal_scenario(n: int) -> dict:
    rate = LOAD * 1e9 / 1000  # proto_ns = 1000: service mean 1 us, so load = rate * 1 us
    return {
        "scheme": "ideal",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / rate * 1000},
        "traffic": {"kind": "poisson", "rate_pps": rate},
        "nic": {"ring_descriptors": BUFFER},
        "platform": {"proto_ns": 1000, "proto_dist": "exponential"},
    }


def napi_scenario(n: int) -> dict:
    return {
        "scheme": "napi",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / NAPI_RATE_PPS * 1000},
        "traffic": {"kind": "poisson", "rate_pps": NAPI_RATE_PPS},
        "nic": {"ring_descriptors": 1024},
        "platform": {
            "irq_ns": 2000,
            "irq_dist": "exponential",
            "proto_ns": 600,
            "proto_dist": "exponential",
        },
    }


def more_scenarios(n: int) -> dict[str, tuple[str, dict]]:
    """Other parts of the model at the speed they run: Salah's polling loop (disable-enable,
    pure polling) and an adaptive ITR policy on the emmerich2015 platform."""

    def salah(scheme: str, rate: float) -> dict:
        return {
            "scheme": scheme,
            "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / rate * 1000},
            "traffic": {"kind": "poisson", "rate_pps": rate},
            "platform": {"preset": "salah2007"},
        }

    linear = {
        "scheme": "napi",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / 1e6 * 1000},
        "traffic": {"kind": "cbr", "rate_pps": 1e6},
        "platform": {"preset": "emmerich2015"},
        "driver": {"moderation": "linear"},
    }
    forwarding = {
        "scheme": "napi",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / 1e6 * 1000},
        "host": {"forward": True},
        "traffic": {"kind": "cbr", "rate_pps": 1e6},
        "platform": {"preset": "emmerich2015"},
        "driver": {"moderation": "ixgbe"},
    }
    app = {
        "scheme": "napi",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / APP_RATE_PPS * 1000},
        "traffic": {"kind": "poisson", "rate_pps": APP_RATE_PPS},
        "nic": {"itr_us": 20},
        "platform": {
            "irq_ns": 2000,
            "proto_ns": 600,
            "ctx_switch_ns": 1000,
            "task_wakeup_ns": 500,
        },
        "app": [{"core": 0, "cost_ns": 500, "cost_dist": "exponential"}],
    }
    # threaded NAPI: the IRQ on core 0, the NAPI thread beside the app on core 1
    threaded = {
        **app,
        "host": {"cores": 2},
        "nic": {"itr_us": 20, "queues": 1},
        "kernel": {"threaded_napi": True, "napi_thread_core": 1},
        "app": [{"core": 1, "cost_ns": 500, "cost_dist": "exponential", "flows": [0]}],
    }
    # threaded busy polling: the NAPI thread spins on core 1, the app on core 0
    busy_thread = {
        **threaded,
        "kernel": {},
        "napi": [{"threaded": "busy-poll", "thread_core": 1, "thread_policy": "fifo"}],
        "app": [{"core": 0, "cost_ns": 500, "cost_dist": "exponential"}],
    }
    return {
        "irqlab_de": ("irqlab disable-enable (150 kpps)", salah("disable-enable", 1.5e5)),
        "irqlab_poll": ("irqlab poll (150 kpps)", salah("poll", 1.5e5)),
        "irqlab_linear": ("irqlab napi + linear ITR (1 Mpps)", linear),
        "irqlab_forward": ("irqlab forwarding, ixgbe ITR (1 Mpps)", forwarding),
        "irqlab_app": ("irqlab app + socket (600 kpps)", app),
        "irqlab_threaded": ("irqlab threaded NAPI + app (600 kpps)", threaded),
        "irqlab_busy_thread": ("irqlab threaded busy poll + app (600 kpps)", busy_thread),
        "irqlab_rss1": ("irqlab RSS, 1 core (9.3 Mpps)", rss_scenario(n, 1)),
        "irqlab_rss4": ("irqlab RSS, 4 cores (37.2 Mpps)", rss_scenario(n, 4)),
        "irqlab_rss16": ("irqlab RSS, 16 cores (148.8 Mpps)", rss_scenario(n, 16)),
    }


def rss_scenario(n: int, cores: int) -> dict:
    """64-byte frames at 100 GbE line rate (148.8 Mpps) spread by RSS over 16 cores: each core
    takes 9.3 Mpps. The 1- and 4-core rows give each core the same load, so that the three
    cost the same per packet but for what more cores add."""
    rate = LINE_RATE_100G_64B / 16 * cores
    return {
        "scheme": "napi",
        "run": {"seed": SEED, "warmup_ms": 0, "duration_ms": n / rate * 1000},
        "host": {"cores": cores},
        "traffic": {"kind": "poisson", "rate_pps": rate, "flows": 4096},
        "nic": {"queues": cores, "itr_us": 20},
        "platform": {
            "irq_ns": 1000,
            "irq_dist": "deterministic",
            "proto_ns": 70,
            "proto_dist": "exponential",
            "poll_ns": 200,
            "softirq_ns": 100,
        },
    }


def run_irqlab(irqlab, scenario: dict) -> dict:
    t0 = time.perf_counter()
    res = irqlab.run(scenario)
    wall = time.perf_counter() - t0
    pk = res["packets"]
    offered = pk["offered"]
    run = {"offered": offered, "wall_seconds": wall, "packets_per_second": offered / wall}
    dropped = pk.get("dropped_nic", pk.get("dropped"))
    if dropped is not None and offered:
        run["dropped"] = dropped
        run["loss"] = dropped / offered
    return run


def bench_rounds(jobs: dict[str, Callable[[], dict]], repeat: int) -> dict[str, dict]:
    """Best of `repeat` rounds, each round running every job once in turn: a machine whose
    speed drifts (frequency scaling, a noisy neighbour) then slows every row alike, and the
    ratios between rows stay fair."""
    runs: dict[str, list[dict]] = {key: [] for key in jobs}
    for r in range(repeat):
        print(f"round {r + 1}/{repeat}", file=sys.stderr, flush=True)
        for key, job in jobs.items():
            runs[key].append(job())
    return {key: best_of(v) for key, v in runs.items()}


# --------------------------------------------------------------------------- report


def fmt_rate(pps: float | None) -> str:
    return "n/a" if pps is None else f"{pps / 1e6:10.3f} M/s"


def ratio(a: dict | None, b: dict | None) -> float | None:
    if a is None or b is None:
        return None
    return a["packets_per_second"] / b["packets_per_second"]


def verdict(ok: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "n/a"}[ok]


def main() -> int:
    p = argparse.ArgumentParser(description="irqlab speed benchmark (simulated packets/s)")
    p.add_argument("--packets", type=int, help="packets for irqlab and C (default 10 M)")
    p.add_argument("--simpy-packets", type=int, help="packets for SimPy (default 200 k)")
    p.add_argument("--quick", action="store_true", help="1 M packets (SimPy 50 k)")
    p.add_argument("--repeat", type=int, default=3, help="best-of-R for irqlab and C (default 3)")
    p.add_argument("--simpy-repeat", type=int, default=1, help="best-of-R for SimPy (default 1)")
    p.add_argument("--no-simpy", action="store_true", help="skip the SimPy run")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the numbers as JSON")
    a = p.parse_args()

    n = a.packets or (1_000_000 if a.quick else 10_000_000)
    n_simpy = a.simpy_packets or (50_000 if a.quick else 200_000)
    repeat = max(1, a.repeat)

    try:
        import irqlab
    except ImportError as e:
        irqlab = None
        print(
            f"NOTE: cannot import irqlab ({e}).\n"
            "      Install it first from the repository root: `pip install .`\n"
            "      Running the C and SimPy references only.\n",
            flush=True,
        )

    machine = {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "os": platform.platform(),
    }
    versions = {
        "python": platform.python_version(),
        "irqlab": getattr(irqlab, "__version__", "unknown") if irqlab else None,
        "simpy": simpy_version(),
        "gcc": gcc_version(),
    }
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['os']}")
    print("versions: " + ", ".join(f"{k} {v or 'n/a'}" for k, v in versions.items()))
    print(
        f"M/M/1/B: load {LOAD}, B = {BUFFER}, closed-form loss {closed_form_loss(LOAD, BUFFER):.3e}"
    )
    print(f"packets: {n:,} (irqlab, C; best of {repeat}), {n_simpy:,} (SimPy)\n", flush=True)

    results: dict[str, dict | None] = {"irqlab_ideal": None, "irqlab_napi": None}
    results.update(dict.fromkeys(more_scenarios(n)))
    results["c_mm1b"] = None
    jobs: dict[str, Callable[[], dict]] = {}
    if irqlab is not None:
        scenarios = {
            "irqlab_ideal": ideal_scenario(n),
            "irqlab_napi": napi_scenario(n),
            **{key: scenario for key, (_, scenario) in more_scenarios(n).items()},
        }
        for key, scenario in scenarios.items():
            jobs[key] = functools.partial(run_irqlab, irqlab, scenario)
    binary = build_c()
    if binary:
        jobs["c_mm1b"] = functools.partial(run_c, binary, n)
    results.update(bench_rounds(jobs, repeat))
    if a.no_simpy:
        results["simpy_mm1b"] = None
    elif versions["simpy"] is None:
        print("SimPy is not installed (pip install simpy): skipping it", file=sys.stderr)
        results["simpy_mm1b"] = None
    else:
        results["simpy_mm1b"] = bench_simpy(n_simpy, max(1, a.simpy_repeat))

    labels = {
        "irqlab_ideal": "irqlab ideal (M/M/1/B)",
        "irqlab_napi": "irqlab napi (Poisson 1 Mpps)",
        **{key: label for key, (label, _) in more_scenarios(n).items()},
        "c_mm1b": "C reference M/M/1/B (gcc -O2)",
        "simpy_mm1b": "SimPy M/M/1/B",
    }
    print(f"{'benchmark':<40}{'packets':>14}{'wall s':>10}{'packets/s':>16}{'loss':>12}")
    for key, label in labels.items():
        r = results[key]
        if r is None:
            print(f"{label:<40}{'skipped':>14}")
            continue
        loss = f"{r['loss']:.3e}" if "loss" in r else "-"
        print(
            f"{label:<40}{r['offered']:>14,}{r['wall_seconds']:>10.3f}"
            f"{fmt_rate(r['packets_per_second']):>16}{loss:>12}"
        )

    ideal, napi = results["irqlab_ideal"], results["irqlab_napi"]
    r_simpy = ratio(ideal, results["simpy_mm1b"])
    r_c = ratio(ideal, results["c_mm1b"])
    # wall time per packet of 16 cores over that of 1 core (the inverse ratio of the rates)
    r_rss = ratio(results.get("irqlab_rss1"), results.get("irqlab_rss16"))
    targets = {
        "ideal_vs_simpy": None if r_simpy is None else r_simpy >= TARGET_VS_SIMPY,
        "ideal_vs_c": None if r_c is None else r_c >= TARGET_VS_C,
        "napi_pps": None if napi is None else napi["packets_per_second"] >= TARGET_NAPI_PPS,
        "rss16_cost": None if r_rss is None else r_rss <= TARGET_RSS16_COST,
    }

    def show(x: float | None) -> str:
        return "n/a" if x is None else f"{x:,.1f}x"

    print()
    print(f"irqlab ideal / SimPy: {show(r_simpy)}")
    print(f"irqlab ideal / C:     {show(r_c)}")
    print(f"16-core RSS cost per packet / 1 core: {'n/a' if r_rss is None else f'{r_rss:.2f}x'}")
    print()
    napi_rate = fmt_rate(napi["packets_per_second"]).strip() if napi else "n/a"
    print("targets:")
    for label, ok, extra in [
        (f"irqlab ideal >= {TARGET_VS_SIMPY:.0f}x SimPy", targets["ideal_vs_simpy"], show(r_simpy)),
        ("irqlab ideal >= C reference", targets["ideal_vs_c"], show(r_c)),
        (f"irqlab napi >= {TARGET_NAPI_PPS / 1e6:.0f} M packets/s", targets["napi_pps"], napi_rate),
        (
            f"16-core RSS <= {TARGET_RSS16_COST}x 1 core/pkt",
            targets["rss16_cost"],
            "n/a" if r_rss is None else f"{r_rss:.2f}x",
        ),
    ]:
        print(f"  {label:<32}{verdict(ok):<6}({extra})")

    if a.json:
        out = {
            "machine": machine,
            "versions": versions,
            "params": {
                "load": LOAD,
                "B": BUFFER,
                "seed": SEED,
                "packets": n,
                "simpy_packets": n_simpy,
                "repeat": repeat,
                "closed_form_loss": closed_form_loss(LOAD, BUFFER),
            },
            "results": results,
            "ratios": {
                "ideal_over_simpy": r_simpy,
                "ideal_over_c": r_c,
                "rss16_cost_per_packet_over_1_core": r_rss,
            },
            "targets": targets,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(out, indent=2) + "\n")
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
