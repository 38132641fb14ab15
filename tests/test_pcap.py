"""Trace replay: a capture written here with scapy, its packets known, replayed as the NIC's
arrivals and checked packet by packet (time, frame size, flow, RSS queue) and in the report
(packet count, rate, size distribution); ``irqlab trace-info`` agrees with it; captures that
cannot be replayed are one-line errors naming ``traffic.pcap``."""

from __future__ import annotations

import gzip
import ipaddress
import json
import math
import random
import re
import shlex
import subprocess
import sys
import zlib
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter, PcapWriter

import irqlab
from irqlab.cli import main
from irqlab.trace import trace_info

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: The first packet's timestamp: an ordinary date, in seconds.
T0 = Decimal(1_700_000_000)
#: Microsoft's RSS verification key, the key irqlab's NIC hashes with.
RSS_KEY = bytes.fromhex(
    "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa"
)
QUIET = {"run.warmup_ms": 0, "scheme": "napi"}


def toeplitz(data: bytes) -> int:
    """The Toeplitz hash, bit by bit as the specification draws it."""
    key = int.from_bytes(RSS_KEY, "big")
    width = len(RSS_KEY) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (key >> (width - 32 - (8 * i + b))) & 0xFFFFFFFF
    return h


def test_the_python_toeplitz_matches_a_published_vector():
    # 66.9.149.187:2794 -> 161.142.100.80:1766
    data = bytes([66, 9, 149, 187, 161, 142, 100, 80]) + (2794).to_bytes(2) + (1766).to_bytes(2)
    assert toeplitz(data) == 0x51CCC178


def flows() -> list[Ether]:
    """Twelve flows: IPv4 and IPv6, UDP and TCP, untagged, 802.1Q and QinQ."""
    mac = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
    out = []
    for i in range(12):
        if i % 2:
            l3 = IPv6(src=f"2001:db8::{i + 1:x}", dst="2001:db8:ffff::1")
        else:
            l3 = IP(src=f"198.51.100.{i + 1}", dst="203.0.113.9")
        l4 = UDP(sport=1000 + 7 * i, dport=53) if i % 3 else TCP(sport=40000 + i, dport=443)
        link = Ether(**mac)
        if i % 4 == 1:
            link = link / Dot1Q(vlan=10 + i)
        elif i % 4 == 3:
            link = link / Dot1AD(vlan=100) / Dot1Q(vlan=i)
        out.append(link / l3 / l4)
    return out


def rss_input(p: Ether) -> bytes:
    """What the NIC hashes: source and destination address, then port."""
    ip = p[IP] if IP in p else p[IPv6]
    l4 = p[TCP] if TCP in p else p[UDP]
    addresses = ipaddress.ip_address(ip.src).packed + ipaddress.ip_address(ip.dst).packed
    return addresses + l4.sport.to_bytes(2) + l4.dport.to_bytes(2)


def traffic(n: int, seed: int = 7, step_ns: int = 1000) -> list[tuple[Decimal, Ether, int]]:
    """``n`` packets of random flows and payloads, gaps of ``step_ns`` (and a few longer ones):
    ``(timestamp, packet, flow index)``."""
    rng = random.Random(seed)
    templates = flows()
    t = T0
    out = []
    for k in range(n):
        f = rng.randrange(len(templates))
        payload = rng.choice([0, 6, 100, 512, 1000, 1400])
        p = templates[f] / Raw(bytes(payload))
        gap = step_ns * (50 if k % 97 == 96 else rng.randint(1, 3))
        t += Decimal(gap) / Decimal(10**9)
        p.time = t
        out.append((t, p, f))
    return out


def write(path: Path, packets: list, fmt: str = "pcap") -> Path:
    """Writes a capture: ``pcap`` (µs), ``pcap-ns`` (ns, big-endian), ``pcapng`` (µs), any of
    them gzipped with ``+gz``."""
    kind, _, gz = fmt.partition("+")
    if kind == "pcapng":
        w = PcapNgWriter(str(path))
    elif kind == "pcap-ns":
        w = PcapWriter(str(path), nano=True, endianness=">", linktype=1)
    else:
        w = PcapWriter(str(path), linktype=1)
    for _, p, *_ in packets:
        w.write(p)
    w.close()
    if gz:
        path.write_bytes(gzip.compress(path.read_bytes()))
    return path


def frame(p: Ether) -> int:
    """The frame the NIC receives: the captured bytes and an FCS, at least 64."""
    return max(len(bytes(p)) + 4, 64)


def offsets_ps(packets: list, unit: Decimal) -> list[int]:
    """Each packet's offset from the first, ps, at the capture's timestamp unit."""
    ts = [(t / unit).to_integral_value(rounding="ROUND_FLOOR") * unit for t, *_ in packets]
    return [int((t - ts[0]) * 10**12) for t in ts]


def scenario(path: Path, **more) -> dict:
    return {**QUIET, "traffic.kind": "pcap", "traffic.pcap": str(path), **more}


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[Path, list]:
    packets = traffic(3000)
    return write(tmp_path_factory.mktemp("pcap") / "mix.pcap", packets, "pcap-ns"), packets


def test_a_replay_reproduces_the_capture_packet_by_packet(capture):
    path, packets = capture
    report, trace = irqlab.run_traced(scenario(path, **{"nic.queues": 4, "host.cores": 2}))
    n = len(packets)
    assert trace["arrival_ps"] == offsets_ps(packets, Decimal("1e-9"))
    assert trace["size_bytes"] == [frame(p) for _, p, _ in packets]
    # one flow id per 5-tuple, numbered in order of first appearance
    first: dict[int, int] = {}
    for (_, _, f), fid in zip(packets, trace["flow"], strict=True):
        assert first.setdefault(f, fid) == fid
    assert sorted(first.values()) == list(range(len(first)))
    # RSS: the Toeplitz hash of the real tuple, through a 128-entry table over 4 queues
    for (_, p, _), q in zip(packets, trace["queue"], strict=True):
        assert q == toeplitz(rss_input(p)) % 128 % 4
    assert len(set(trace["queue"])) > 1
    # the report: every packet, at the capture's rate, with its sizes
    replay_s = report["measured_s"]
    span_s = float(packets[-1][0] - packets[0][0])
    assert replay_s == pytest.approx(span_s * n / (n - 1), rel=1e-12)
    assert report["packets"]["offered"] == n
    assert report["offered_pps"] == pytest.approx(n / replay_s, rel=1e-12)
    sizes = sorted(frame(p) for _, p, _ in packets)
    fb = report["frame_bytes"]
    assert fb["mean"] == pytest.approx(sum(sizes) / n)
    assert (fb["min"], fb["max"]) == (sizes[0], sizes[-1])
    for q, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        assert fb[key] == sizes[math.ceil(q * n) - 1]
    assert report["offered_gbps"] == pytest.approx(sum(sizes) * 8 / replay_s / 1e9)
    assert report["replay"] == {"packets": n, "passes": 1, "reordered": 0, "error": None}
    assert sum(q["offered"] for q in report["per_queue"]) == n
    assert sum(q["flows"] for q in report["per_queue"]) == len(first)
    # the rate and the length are resolved in the report's scenario
    assert report["scenario"]["traffic.rate_pps"] == pytest.approx(report["offered_pps"])
    assert report["scenario"]["run.duration_ms"] == pytest.approx(replay_s * 1e3)


@pytest.mark.parametrize("fmt", ["pcap", "pcapng", "pcap-ns", "pcapng+gz", "pcap-ns+gz"])
def test_every_format_replays_the_same_arrivals(tmp_path, fmt):
    packets = traffic(400, seed=3)  # µs timestamps: every format holds them exactly
    path = write(tmp_path / "t.cap", packets, fmt)
    report, trace = irqlab.run_traced(scenario(path))
    assert trace["arrival_ps"] == offsets_ps(packets, Decimal("1e-6"))
    assert trace["size_bytes"] == [frame(p) for _, p, _ in packets]
    assert report["packets"]["offered"] == len(packets)
    info = trace_info(path)
    assert info["format"].startswith("pcapng" if "pcapng" in fmt else "pcap")
    assert info["format"].endswith("(gzip)") == fmt.endswith("+gz")


def test_speedup_scales_time_and_loop_repeats_the_capture(tmp_path):
    packets = traffic(200, seed=5)
    path = write(tmp_path / "s.pcap", packets)
    offsets = offsets_ps(packets, Decimal("1e-6"))
    n = len(packets)
    period = offsets[-1] + round(offsets[-1] / (n - 1))
    speed = 10
    report, trace = irqlab.run_traced(
        scenario(path, **{"traffic.speedup": speed, "traffic.loop": 3})
    )
    expect = [math.floor((o + k * period) / speed + 0.5) for k in range(3) for o in offsets]
    assert trace["arrival_ps"] == expect
    assert trace["size_bytes"] == [frame(p) for _, p, _ in packets] * 3
    assert report["packets"]["offered"] == 3 * n
    assert report["measured_s"] == pytest.approx(3 * period / speed / 1e12, rel=1e-12)
    assert report["replay"]["passes"] == 3
    base = irqlab.run(scenario(path))
    assert report["offered_pps"] == pytest.approx(speed * base["offered_pps"], rel=1e-8)
    # endlessly, for a run of a given length
    r = irqlab.run(scenario(path, **{"traffic.loop": 0, "run.duration_ms": 50}))
    passes = range(50 * 10**9 // period + 1)
    assert r["packets"]["offered"] == sum(
        o + k * period < 50 * 10**9 for k in passes for o in offsets
    )
    # a given duration shorter than the capture replays its beginning
    r, trace = irqlab.run_traced(scenario(path, **{"run.duration_ms": offsets[99] / 1e9}))
    assert r["packets"]["offered"] == 99


def test_same_capture_and_seed_give_identical_reports(capture):
    path, _ = capture
    s = scenario(
        path,
        **{
            "nic.queues": 2,
            "traffic.classes": [{"name": "a", "share": 0.3}, {"name": "b", "share": 0.7}],
        },
    )
    one = json.dumps(irqlab.run(s, seed=11), sort_keys=True)
    assert json.dumps(irqlab.run(s, seed=11), sort_keys=True) == one


def test_packets_that_are_not_ip_go_to_queue_0_one_flow_per_mac_pair(tmp_path):
    mac = "02:00:00:00:00:0"
    packets = []
    t = T0
    for k in range(30):
        if k % 3:
            p = Ether(src=f"{mac}{k % 2 + 1}", dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="192.0.2.1")
        else:
            p = Ether() / IP(src="192.0.2.7", dst="192.0.2.8") / UDP(sport=5000 + k, dport=9)
        t += Decimal("0.00001")
        p.time = t
        packets.append((t, p))
    path = write(tmp_path / "arp.pcap", packets)
    _, trace = irqlab.run_traced(scenario(path, **{"nic.queues": 8}))
    arp = [
        (f, q) for k, (f, q) in enumerate(zip(trace["flow"], trace["queue"], strict=True)) if k % 3
    ]
    assert {q for _, q in arp} == {0}
    assert len({f for f, _ in arp}) == 2
    assert trace_info(path)["other"] == 20


def test_trace_info_tells_what_the_replay_offers(capture):
    path, packets = capture
    info = trace_info(path)
    report = irqlab.run(scenario(path))
    assert info["packets"] == len(packets) == report["packets"]["offered"]
    assert info["rate_pps"] == pytest.approx(report["offered_pps"], rel=1e-12)
    assert info["rate_gbps"] == pytest.approx(report["offered_gbps"], rel=1e-12)
    assert info["replay_s"] == pytest.approx(report["measured_s"], rel=1e-12)
    assert info["frame_bytes"] == {
        **report["frame_bytes"],
        "mean": pytest.approx(report["frame_bytes"]["mean"]),
    }
    assert info["flows"] == len({f for *_, f in packets})
    assert info["ipv4"] + info["ipv6"] == len(packets)
    assert info["tcp"] + info["udp"] == len(packets)
    assert info["first_s"] == pytest.approx(float(packets[0][0]))
    # the largest gaps: the 50 µs ones
    assert [g["gap_s"] for g in info["gaps"]] == [pytest.approx(50e-6)] * 5
    assert info["top_flows"][0]["packets"] == max(
        sum(1 for *_, f in packets if f == g) for g in range(12)
    )
    r = CliRunner().invoke(main, ["trace-info", str(path), "--format", "json", "--top", "2"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["packets"] == len(packets)
    assert len(json.loads(r.output)["top_flows"]) == 2
    r = CliRunner().invoke(main, ["trace-info", str(path)])
    assert r.exit_code == 0, r.output
    assert f"{len(packets):,}" in r.output and "largest gaps" in r.output


def test_settings_a_replay_ignores_are_warnings(capture):
    path, _ = capture
    with pytest.warns(irqlab.ConfigWarning, match=r"traffic\.flows = 64: has no effect"):
        irqlab.resolve(scenario(path, **{"traffic.flows": 64}))
    with pytest.warns(irqlab.ConfigWarning, match=r"traffic\.sizes"):
        irqlab.resolve(scenario(path, **{"traffic.sizes": "imix"}))
    with pytest.warns(irqlab.ConfigWarning, match=r"traffic\.speedup = 2.0: has no effect"):
        irqlab.resolve({"traffic.speedup": 2.0})
    # the resolved scenario runs again as it is, silently
    resolved = irqlab.resolve(scenario(path))
    assert irqlab.resolve(resolved) == resolved


def test_a_scenario_file_names_its_capture_relative_to_itself(tmp_path, monkeypatch):
    packets = traffic(50)
    (tmp_path / "caps").mkdir()
    write(tmp_path / "caps" / "c.pcap", packets)
    toml = tmp_path / "caps" / "replay.toml"
    toml.write_text('[traffic]\nkind = "pcap"\npcap = "c.pcap"\n[run]\nwarmup_ms = 0\n')
    monkeypatch.chdir(tmp_path)
    assert irqlab.run(toml)["packets"]["offered"] == 50


def _pcap_bytes(packets: list) -> bytes:
    import io

    buf = io.BytesIO()
    w = PcapWriter(buf, linktype=1)
    for _, p, *_ in packets:
        w.write(p)
    w.flush()
    return buf.getvalue()


BAD = {
    "cut.pcap": (lambda good: good[:-10], "cut short in the middle of a packet record after 9"),
    "garbage-length.pcap": (
        lambda good: good[:32] + (2**31).to_bytes(4, "little") + good[36:],
        "corrupt: packet record 1 claims 2147483648 captured bytes",
    ),
    "no-packets.pcap": (lambda good: good[:24], "holds no packets (an empty pcap capture)"),
    "empty.pcap": (lambda good: b"", "is empty: not a capture"),
    "notes.txt": (lambda good: b"hello", "not a pcap or pcapng capture (it starts with bytes"),
    "wifi.pcap": (
        lambda good: good[:20] + (105).to_bytes(4, "little") + good[24:],
        "link type 105 is not supported",
    ),
    "cut.pcap.gz": (
        lambda good: gzip.compress(good)[:-30],
        "the gzip stream is damaged or cut short",
    ),
    # an original length whose frame (+ 4 bytes of FCS) is 2^32: not a 64-byte frame
    "wrapping-length.pcap": (
        lambda good: good[:36] + (0xFFFF_FFFC).to_bytes(4, "little") + good[40:],
        "packet 1 is a 4294967296-byte frame, and irqlab's frames are at most 65535 bytes",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_capture_that_cannot_be_replayed_is_one_line_naming_the_key(tmp_path, name):
    make, why = BAD[name]
    good = _pcap_bytes(traffic(10))
    path = tmp_path / name
    path.write_bytes(make(good))
    with pytest.raises(irqlab.ConfigError, match=r"^traffic\.pcap = ") as e:
        irqlab.run(scenario(path))
    assert e.value.key == "traffic.pcap"
    assert why in str(e.value)
    assert "\n" not in str(e.value)
    for args in (
        [
            "run",
            str(Path(__file__).parent.parent / "examples" / "napi.toml"),
            "--set",
            "traffic.kind=pcap",
            "--set",
            f"traffic.pcap={path}",
        ],
        ["trace-info", str(path)],
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("irqlab: error: ") and why in lines[0]


def test_a_missing_or_absent_capture_is_named(tmp_path):
    with pytest.raises(
        irqlab.ConfigError,
        match=r'traffic\.pcap = "": traffic\.kind = "pcap" replays a capture: give its file',
    ):
        irqlab.run({"traffic.kind": "pcap"})
    with pytest.raises(irqlab.ConfigError, match="no such file"):
        irqlab.run(scenario(tmp_path / "nothing.pcap"))
    with pytest.raises(irqlab.ConfigError, match="is a directory"):
        trace_info(tmp_path)


def test_a_packet_stamped_before_the_first_replays_at_its_time_and_is_counted(tmp_path):
    # the second packet 2 µs before the first, the fourth 1 µs before the third
    packets = traffic(5)
    packets[1][1].time = packets[0][0] - Decimal("0.000002")
    packets[3][1].time = packets[2][0] - Decimal("0.000001")
    path = write(tmp_path / "back.pcap", packets)
    assert trace_info(path)["reordered"] == 2
    report, trace = irqlab.run_traced(scenario(path))
    # replayed at the previous packet's time: the first's, the third's
    at = offsets_ps([packets[0], packets[2], packets[4]], Decimal("1e-6"))
    assert trace["arrival_ps"] == [at[0], at[0], at[1], at[1], at[2]]
    assert report["replay"]["reordered"] == 2
    assert report["packets"]["offered"] == 5


def readme_replay() -> tuple[str, str, list[list[str]]]:
    """The README's replay example: the section's text, its ``replay.toml`` and its commands,
    each split as a shell splits it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Replaying a capture\n", 1)[1].split("\n## ", 1)[0]
    toml = re.search(r"```toml\n(.*?)```", section, re.S)
    sh = re.search(r"```sh\n(.*?)```", section, re.S)
    assert toml and sh, "the README's replay example"
    commands = [shlex.split(line, comments=True) for line in sh.group(1).splitlines()]
    return section, toml.group(1), [c for c in commands if c]


def test_the_readmes_replay_example_runs_as_written_and_its_numbers_hold():
    section, toml, commands = readme_replay()
    assert toml == (EXAMPLES / "replay.toml").read_text(encoding="utf-8")
    assert len(commands) == 3 and all(c[0] == "irqlab" for c in commands), commands
    irqlab_exe = Path(sys.executable).with_name("irqlab")
    command = [str(irqlab_exe)] if irqlab_exe.exists() else [sys.executable, "-m", "irqlab.cli"]
    for c in commands:
        p = subprocess.run(
            [*command, *c[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
        )
        assert p.returncode == 0 and p.stderr == "", (c, p.stderr)
        assert "3,000" in p.stdout if c[1] == "trace-info" else "pcap" in p.stdout, p.stdout
    # the numbers the README gives: the capture's, and the replay's at ten times its speed
    info = trace_info(EXAMPLES / "web.pcapng.gz")
    kpps = round(info["rate_pps"] / 1000)
    ms = round(info["duration_s"] * 1000)
    assert f"{info['packets']:,} packets ({ms} ms, {kpps} kpps)" in section
    assert f"{info['flows']} flows" in section
    report = irqlab.run(EXAMPLES / "replay.toml")
    assert report["replay"] == {"packets": 3000, "passes": 1, "reordered": 0, "error": None}
    replayed = round(report["offered_pps"] / 1000)
    assert f"{replayed} kpps: ten times the capture's {kpps} kpps" in section


def test_the_example_capture_is_what_its_script_writes(tmp_path):
    """``python examples/web_capture.py OUT`` writes the shipped capture again: the same
    packets byte for byte, and the same gzip file where zlib is zlib itself (zlib-ng
    compresses the same bytes differently)."""
    out = tmp_path / "web.pcapng.gz"
    p = subprocess.run(
        [sys.executable, str(EXAMPLES / "web_capture.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    shipped = (EXAMPLES / "web.pcapng.gz").read_bytes()
    assert len(shipped) < 100_000
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(shipped)
    if "ng" not in zlib.ZLIB_RUNTIME_VERSION:
        assert out.read_bytes() == shipped
    info = trace_info(out)
    assert info["packets"] == 3000 and info["reordered"] == 0 and info["cut"] == 0
    # a web server's mix: mostly small frames, a share of full-size ones, both families
    sizes = {r["bytes"]: r["frames"] for r in info["size_ranges"]}
    assert sizes["65-127"] > 1500 and sizes["1024-1518"] > 300
    assert info["ipv4"] > info["ipv6"] > 300
