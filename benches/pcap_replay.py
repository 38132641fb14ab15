"""Benchmark trace replay: packets per second of a replayed capture against Poisson traffic,
and peak memory for two capture lengths (memory must not grow with the capture).

Writes header-only pcap captures (64 bytes kept of each frame, as ``tcpdump -s 64`` does: the
frame length comes from the original length, so the replay is the same as of a full capture)
of N packets: 1024 UDP flows, IMIX frame sizes (64, 594, 1518 in 7:4:1), exponential gaps at
1 Mpps with nanosecond timestamps (a Poisson process, so that the synthetic row is the same
traffic). Each row runs in a
fresh process, which reports its wall time and peak resident memory (``VmHWM``):

- ``scan``: one pass over the capture (``irqlab trace-info``'s work, and what building a
  replay's scenario costs);
- ``replay``: ``irqlab.run`` of the scenario, which reads the capture twice: once to check
  and build the scenario (the scan is remembered between the two), once to replay it;
- ``poisson``: the same scenario with ``traffic.kind = "poisson"`` at the capture's rate, sizes
  and flows;
- ``python + irqlab``: the process that imports irqlab and runs nothing, the floor under every
  peak (Python and irqlab; pandas and scipy load only for sweeps and statistics).

Usage: ``python benches/pcap_replay.py [--packets N [N ...]] [--dir DIR] [--keep]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RATE_PPS = 1e6
FLOWS = 1024
SIZES = (64, 594, 1518)
WEIGHTS = (7, 4, 1)
SNAPLEN = 64

SCENARIO = {
    "scheme": "napi",
    "run.seed": 1,
    "run.warmup_ms": 0,
    "platform.irq_ns": 2000,
    "platform.proto_ns": 600,
    "platform.proto_dist": "exponential",
    "nic.ring_descriptors": 1024,
}


def frame(flow: int, size: int) -> bytes:
    """The first ``SNAPLEN`` bytes of an Ethernet/IPv4/UDP frame of ``size`` bytes (FCS
    included) of flow ``flow``."""
    ip_len = size - 18
    eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
    src = bytes([10, (flow >> 8) & 0xFF, flow & 0xFF, 1])
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 17, 0, src, bytes([192, 0, 2, 1]))
    udp = struct.pack("!HHHH", 1024 + flow, 9, ip_len - 20, 0)
    return (eth + ip + udp + bytes(SNAPLEN))[:SNAPLEN]


def write_capture(path: Path, packets: int, seed: int = 1) -> None:
    """A nanosecond pcap of ``packets`` packets, written in chunks (memory does not grow with
    it): exponential gaps of mean 1/``RATE_PPS``, flows uniform, IMIX sizes."""
    rng = random.Random(seed)
    heads = {(f, s): frame(f, s) for f in range(FLOWS) for s in SIZES}
    t_ns = 1_700_000_000 * 10**9
    with path.open("wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, SNAPLEN, 1))
        left = packets
        while left:
            chunk = []
            for _ in range(min(left, 100_000)):
                t_ns += round(rng.expovariate(RATE_PPS) * 1e9)
                size = rng.choices(SIZES, WEIGHTS)[0]
                head = heads[(rng.randrange(FLOWS), size)]
                sec, ns = divmod(t_ns, 10**9)
                chunk.append(struct.pack("<IIII", sec, ns, SNAPLEN, size - 4) + head)
            out.write(b"".join(chunk))
            left -= len(chunk)


CHILD = r"""
import json, sys, time
import irqlab
from irqlab.trace import trace_info
what, path, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
t = time.perf_counter()
if what == "scan":
    packets = trace_info(path)["packets"]
elif what == "nothing":
    packets = 0
else:
    packets = irqlab.run(extra)["packets"]["offered"]
wall = time.perf_counter() - t
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"packets": packets, "wall_s": wall, "peak_rss_mib": hwm / 1024}))
"""


def child(what: str, path: Path, scenario: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, what, str(path), json.dumps(scenario)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packets", type=int, nargs="+", default=[2_000_000, 20_000_000])
    ap.add_argument("--dir", type=Path, default=None, help="where the captures go (a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the captures")
    args = ap.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="irqlab-pcap-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'row':<28}{'packets':>14}{'wall s':>10}{'packets/s':>14}{'peak RSS':>12}")
    floor = child("nothing", folder, {})
    print(f"{'python + irqlab':<28}{'':>14}{'':>10}{'':>14}{floor['peak_rss_mib']:>8.0f} MiB")
    for n in args.packets:
        path = folder / f"bench-{n}.pcap"
        t = time.perf_counter()
        write_capture(path, n)
        size_mb = path.stat().st_size / 1e6
        print(f"# {path.name}: {size_mb:,.0f} MB, written in {time.perf_counter() - t:.0f} s")
        info = json.loads(
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import json,sys; from irqlab.trace import trace_info; "
                    "print(json.dumps(trace_info(sys.argv[1])))",
                    str(path),
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        replay = {**SCENARIO, "traffic.kind": "pcap", "traffic.pcap": str(path)}
        poisson = {
            **SCENARIO,
            "traffic.kind": "poisson",
            "traffic.rate_pps": info["rate_pps"],
            "traffic.sizes": ", ".join(f"{s}:{w}" for s, w in zip(SIZES, WEIGHTS, strict=True)),
            "traffic.flows": FLOWS,
            "run.duration_ms": info["replay_s"] * 1e3,
        }
        for row, what, sc in (
            ("scan", "scan", replay),
            ("replay", "run", replay),
            ("poisson", "run", poisson),
        ):
            r = child(what, path, sc)
            rate = r["packets"] / r["wall_s"] if r["packets"] else 0.0
            print(
                f"{row + f' {n / 1e6:g} M':<28}{r['packets']:>14,}{r['wall_s']:>10.2f}"
                f"{rate / 1e6:>11.2f} M/s{r['peak_rss_mib']:>8.0f} MiB",
                flush=True,
            )
        if not args.keep:
            path.unlink()
    if not args.keep and args.dir is None:
        os.rmdir(folder)


if __name__ == "__main__":
    main()
