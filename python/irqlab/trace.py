"""Captures to replay: what ``irqlab trace-info`` says about one before it is replayed.

A scenario replays a capture with ``traffic.kind = "pcap"`` and ``traffic.pcap = PATH``
(docs/traffic.md, "Replaying a capture"). Before that, a user wants to know what the capture
holds: how many packets over how long (the replay's default length), at what rate, of what
sizes, in how many flows, with what gaps. :func:`trace_info` reads the capture once, streaming,
through the same reader the replay uses (so a capture it reads is a capture irqlab replays,
and one it refuses gets the same one-line reason), and :func:`render` makes tables of it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from irqlab import core
from irqlab.files import regular_file
from irqlab.formatting import seconds, short
from irqlab.scenario import _path

#: The link types the replay reads, by number (https://www.tcpdump.org/linktypes.html).
LINK_TYPES = {
    1: "Ethernet",
    101: "raw IP",
    113: "Linux cooked v1",
    228: "raw IPv4",
    229: "raw IPv6",
    276: "Linux cooked v2",
}

#: Frame-size ranges of the RMON etherStats counters (RFC 2819), bytes: how switches and NICs
#: count sizes; the last collects frames beyond the standard maximum.
SIZE_RANGES = ((64, 64), (65, 127), (128, 255), (256, 511), (512, 1023), (1024, 1518))


def _percentile(sizes: list[tuple[int, int]], packets: int, per_mille: int) -> int:
    """The smallest size with at least ``per_mille``/1000 of the frames at or below it (as
    the report's ``frame_bytes`` does)."""
    rank = max(1, -(-packets * per_mille // 1000))
    seen = 0
    for size, n in sizes:
        seen += n
        if seen >= rank:
            return size
    return sizes[-1][0]


def trace_info(path: str | os.PathLike[str], top: int = 5) -> dict[str, Any]:
    """What the capture at ``path`` holds, as a JSON-able dict.

    ``packets``; ``duration_s`` (first to last packet) and ``replay_s`` (one pass of a replay:
    the duration and a mean gap, the length of a run that does not set ``run.duration_ms``);
    ``rate_pps`` and ``rate_gbps`` (frames, FCS included, over ``replay_s``: the rate a replay
    offers at ``traffic.speedup = 1``); ``frame_bytes`` (mean, min, percentiles, max) and
    ``size_ranges`` (frames per RMON range); ``flows`` and ``top_flows``; the largest
    ``gaps``; the capture's ``format``, ``link_types`` and ``snaplen``; ``ipv4``, ``ipv6``,
    ``other`` (not IP), ``tcp``, ``udp``, ``cut`` (fewer bytes kept than the packet had: the
    frame length still comes from the original length) and ``reordered`` (timestamps before
    the previous packet's, replayed at its time). Raises :class:`irqlab.ConfigError` naming
    the file when it cannot be replayed.
    """
    p = _path(path, "capture")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        from irqlab.errors import ConfigError

        raise ConfigError(f"top = {top!r}: must be an integer >= 0", "top")
    # the reader waits on a pipe without looking at Ctrl-C: refuse one before it opens it
    regular_file(
        p, "capture", "it is read from a file (gzip-compressed or not): save it to one first"
    )
    raw = core.trace_info(str(p), top)
    packets = raw["packets"]
    sizes = [(int(b), int(n)) for b, n in raw["sizes"]]
    replay_s = raw["period_ps"] / 1e12
    ranges: list[dict[str, Any]] = [
        {"bytes": f"{lo}" if lo == hi else f"{lo}-{hi}", "frames": 0} for lo, hi in SIZE_RANGES
    ]
    ranges.append({"bytes": ">1518", "frames": 0})
    for size, n in sizes:
        i = next((i for i, (_, hi) in enumerate(SIZE_RANGES) if size <= hi), len(SIZE_RANGES))
        ranges[i]["frames"] += n
    return {
        "path": str(p),
        "format": raw["format"] + (" (gzip)" if raw["compressed"] else ""),
        "link_types": [f"{lt} ({LINK_TYPES.get(lt, 'unknown')})" for lt in raw["link_types"]],
        "snaplen": raw["snaplen"],
        "packets": packets,
        "first_s": raw["first_ps"] / 1e12,
        "duration_s": raw["span_ps"] / 1e12,
        "replay_s": replay_s,
        "rate_pps": packets / replay_s if replay_s > 0 else None,
        "rate_gbps": raw["frame_bytes"] * 8 / replay_s / 1e9 if replay_s > 0 else None,
        "frame_bytes": {
            "mean": raw["frame_bytes"] / packets,
            "min": sizes[0][0],
            "p50": _percentile(sizes, packets, 500),
            "p90": _percentile(sizes, packets, 900),
            "p99": _percentile(sizes, packets, 990),
            "max": sizes[-1][0],
        },
        "size_ranges": [r for r in ranges if r["frames"]],
        "flows": raw["flows"],
        "top_flows": [
            {"flow": fid, "tuple": text, "packets": n, "share": n / packets, "rss_hash": h}
            for fid, text, n, h in raw["top_flows"]
        ],
        "gaps": [{"gap_s": g / 1e12, "packet": int(i)} for g, i in raw["gaps"]],
        **{k: raw[k] for k in ("ipv4", "ipv6", "other", "tcp", "udp", "cut", "reordered")},
    }


def render(info: Mapping[str, Any]) -> Any:
    """Tables of :func:`trace_info`'s answer: the capture, its sizes, its flows and gaps."""
    from rich.console import Group
    from rich.table import Table

    from irqlab.report.layout import fit

    n = info["packets"]
    t = Table(title=f"irqlab trace-info — {info['path']}", show_header=False)
    t.add_column("what")
    t.add_column("value", justify="right")
    rate = "—" if info["rate_pps"] is None else f"{short(info['rate_pps'], 4)} pps"
    gbps = "—" if info["rate_gbps"] is None else f"{info['rate_gbps']:.4g} Gbit/s"
    share = lambda k: f"{short(info[k], 4)} ({100 * info[k] / n:.1f} %)"  # noqa: E731
    rows = [
        ("format", info["format"]),
        ("link type", ", ".join(info["link_types"])),
        ("snap length", f"{info['snaplen']:,} bytes" if info["snaplen"] else "—"),
        ("packets", f"{n:,}"),
        ("duration (first to last)", seconds(info["duration_s"])),
        ("one replay pass (+ a mean gap)", seconds(info["replay_s"])),
        ("rate", rate),
        ("frames (FCS included)", gbps),
        ("flows (5-tuples)", f"{info['flows']:,}"),
        ("IPv4 / IPv6 / not IP", f"{info['ipv4']:,} / {info['ipv6']:,} / {info['other']:,}"),
        ("TCP / UDP", f"{info['tcp']:,} / {info['udp']:,}"),
    ]
    if info["cut"]:
        rows.append(("cut by the snap length", share("cut")))
    if info["reordered"]:
        rows.append(("timestamps going back", share("reordered")))
    for what, value in rows:
        t.add_row(what, value)

    fb = info["frame_bytes"]
    sizes = Table(title="frame sizes, bytes", show_header=True, header_style="bold")
    for c in ("mean", "min", "p50", "p90", "p99", "max"):
        sizes.add_column(c, justify="right")
    sizes.add_row(f"{fb['mean']:.1f}", *(f"{fb[c]:,}" for c in ("min", "p50", "p90", "p99", "max")))
    ranges = Table(title="frames by size (RMON ranges)", show_header=True, header_style="bold")
    ranges.add_column("bytes")
    ranges.add_column("frames", justify="right")
    ranges.add_column("share", justify="right")
    for r in info["size_ranges"]:
        ranges.add_row(r["bytes"], f"{r['frames']:,}", f"{100 * r['frames'] / n:.1f} %")

    parts: list[Any] = [t, sizes, ranges]
    if info["top_flows"]:
        flows = Table(title="largest flows", show_header=True, header_style="bold")
        flows.add_column("flow", justify="right")
        flows.add_column("5-tuple")
        flows.add_column("packets", justify="right")
        flows.add_column("share", justify="right")
        for f in info["top_flows"]:
            flows.add_row(
                str(f["flow"]), f["tuple"], f"{f['packets']:,}", f"{100 * f['share']:.1f} %"
            )
        parts.append(flows)
    if info["gaps"]:
        gaps = Table(title="largest gaps", show_header=True, header_style="bold")
        gaps.add_column("gap", justify="right")
        gaps.add_column("before packet (from 0)", justify="right")
        for g in info["gaps"]:
            gaps.add_row(seconds(g["gap_s"]), f"{g['packet']:,}")
        parts.append(gaps)
    return Group(*(fit(p) for p in parts))
