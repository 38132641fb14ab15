"""A lab point's ``measured`` figures (:func:`measured`), from what was read around its window:
the global counters' summary (:func:`irqlab.ops.measure.summarize`), the namespaces' UDP
counters and the threads' CPU time before and after, and the tracing's distributions when the
point was traced.

- ``sent_pps``: the sending namespace's ``Udp OutDatagrams`` plus ``SndbufErrors`` over the
  window: every datagram the sender sent, those veth dropped with its ring full included
  (``udp_send_skb`` counts a device's drop as a ``SndbufErrors``, and ``sendto`` succeeds);
- ``app_pps``: the receiving namespace's ``Udp InDatagrams`` (what the socket queued for the
  application) over the window;
- ``socket_drop_ratio``: its ``RcvbufErrors`` (the full socket's drops) over the datagrams
  sent;
- ``ring_drop_ratio``: the sending veth's ``tx_dropped`` (the receiving end's 256-entry ring
  was full) over the datagrams sent;
- ``net_rx_share``: each CPU's softirq time in ``/proc/stat`` over the window (all softirqs;
  NET_RX's own during the load). Without ``CONFIG_IRQ_TIME_ACCOUNTING`` it is sampled at each
  tick, and ksoftirqd's softirq work counts in it too;
- ``ksoftirqd_share``: ``ksoftirqd/N``'s run time (``/proc/PID/schedstat``) over the window;
- ``napi_thread_share``: the NAPI threads' run time over the window (null when not threaded);
- ``packets_per_poll``: the mean of ``napi:napi_poll``'s ``work`` when traced; else, without
  threaded NAPI, packets processed (``softnet_stat``) over NET_RX runs (``/proc/softirqs``),
  summed over the CPUs; null when threaded and untraced (the thread's polls raise no softirq);
- ``packets_per_poll_hist``, ``app_wakeup_us``: from the tracing, null without it.
"""

from __future__ import annotations

from typing import Any

from irqlab.ops.lab.netns import RX_DEV as RX_DEVICE


def _delta(before: dict[str, Any], after: dict[str, Any], key: str) -> int:
    a, b = before.get(key), after.get(key)
    if not isinstance(a, int) or not isinstance(b, int) or b < a:
        return 0
    return b - a


def _ns_delta(
    before: dict[str, Any], after: dict[str, Any], name: str, key: str = "schedstat_ns"
) -> int | None:
    a = before.get(key, {}).get(name)
    b = after.get(key, {}).get(name)
    if not isinstance(a, int) or not isinstance(b, int) or b < a:
        return None
    return b - a


def counted_packets_per_poll(summary: dict[str, Any]) -> float | None:
    """Packets processed over NET_RX runs, summed over the CPUs (rates of the same window)."""
    packets = sum(r.get("packets_per_s") or 0.0 for r in summary.get("cpus", []))
    runs = sum(r.get("net_rx_per_s") or 0.0 for r in summary.get("cpus", []))
    return packets / runs if runs > 0 else None


def from_trace(
    distributions: dict[str, Any] | None, device: str = RX_DEVICE
) -> tuple[float | None, dict[str, int] | None, dict[str, float] | None]:
    """Packets per poll of the receiving ``device`` (the mean over the polls that found
    work, and the log2 histogram of all, empty polls in bucket "0") and the app's wake-up
    delay (mean, p50, p99 in µs; ``per_packet``: its wake-ups per packet the device
    received), from the tracing's distributions, where it has them.

    The mean leaves out the empty polls: veth's NAPI is re-polled when a transmit found it
    already scheduled (NAPI_STATE_MISSED), and that poll often finds the ring empty — a
    re-poll irqlab's model does not make; the histogram keeps them, so the share of empty
    polls stays visible."""
    if not distributions:
        return None, None, None
    napi = distributions.get("napi_poll")
    ppp = napi.get(device) if isinstance(napi, dict) else None
    hist_obj = ppp.get("packets_per_poll") if isinstance(ppp, dict) else None
    mean, hist = None, None
    if isinstance(hist_obj, dict) and isinstance(hist_obj.get("buckets"), dict):
        buckets = hist_obj["buckets"]
        hist = {str(k): int(v) for k, v in buckets.items() if isinstance(v, int | float)}
        polls = sum(hist.values()) - hist.get("0", 0)
        packets = ppp.get("packets") if isinstance(ppp, dict) else None
        if isinstance(packets, int | float) and polls > 0:
            mean = float(packets) / polls
    wake = distributions.get("app_wakeup_us")
    wakeup = None
    if isinstance(wake, dict) and isinstance(wake.get("mean"), int | float):
        wakeup = {k: float(wake[k]) for k in ("mean", "p50", "p99") if k in wake}
        packets = ppp.get("packets") if isinstance(ppp, dict) else None
        count = wake.get("count")
        if isinstance(packets, int | float) and packets > 0 and isinstance(count, int | float):
            # the app's wake-ups per packet the device received, over the same window
            wakeup["per_packet"] = float(count) / float(packets)
    return mean, hist, wakeup


def _sent(before: dict[str, Any], after: dict[str, Any]) -> int:
    b, a = before.get("tx_udp", {}), after.get("tx_udp", {})
    return _delta(b, a, "OutDatagrams") + _delta(b, a, "SndbufErrors")


def measured(
    summary: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
    window_s: float,
    *,
    threaded: bool,
    distributions: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The point's ``measured`` dict (the lab's output format, ``lab.json``)."""
    sent = _sent(before, after)
    received = _delta(before.get("rx_udp", {}), after.get("rx_udp", {}), "InDatagrams")
    drops = _delta(before.get("rx_udp", {}), after.get("rx_udp", {}), "RcvbufErrors")
    window_ns = window_s * 1e9
    net_rx_share = {
        str(row["cpu"]): row["softirq_share"]
        for row in summary.get("cpus", [])
        if row.get("softirq_share") is not None
    }
    ksoftirqd: dict[str, float] = {}
    napi_ns: int | None = None
    for name in before.get("schedstat_ns", {}):
        ran = _ns_delta(before, after, name)
        if ran is None:
            continue
        if name.startswith("ksoftirqd/"):
            ksoftirqd[name.split("/", 1)[1]] = ran / window_ns
        elif name.startswith("napi/"):
            napi_ns = (napi_ns or 0) + ran
    ppp, hist, wakeup = from_trace(distributions)
    if ppp is None and not threaded:
        ppp = counted_packets_per_poll(summary)
    return {
        "sent_pps": sent / window_s,
        "app_pps": received / window_s,
        "socket_drop_ratio": drops / sent if sent else 0.0,
        "ring_drop_ratio": _delta(before.get("tx_dev", {}), after.get("tx_dev", {}), "tx_dropped")
        / sent
        if sent
        else 0.0,
        "net_rx_share": net_rx_share,
        "ksoftirqd_share": dict(sorted(ksoftirqd.items(), key=lambda kv: int(kv[0]))),
        "napi_thread_share": napi_ns / window_ns if threaded and napi_ns is not None else None,
        "packets_per_poll": ppp,
        "packets_per_poll_hist": hist,
        "app_wakeup_us": wakeup,
        "app_wakeups_per_packet": wakeup.get("per_packet") if wakeup else None,
    }


def counts(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """The window's counts besides the rates: datagrams sent, received, dropped by the full
    socket, and dropped by the veth (``veth_tx_dropped``: the receiving end's 256-entry ring
    was full; ``veth_rx_dropped``: dropped on reception)."""
    return {
        "sent": _sent(before, after),
        "received": _delta(before.get("rx_udp", {}), after.get("rx_udp", {}), "InDatagrams"),
        "socket_drops": _delta(before.get("rx_udp", {}), after.get("rx_udp", {}), "RcvbufErrors"),
        "veth_tx_dropped": _delta(before.get("tx_dev", {}), after.get("tx_dev", {}), "tx_dropped"),
        "veth_rx_dropped": _delta(before.get("rx_dev", {}), after.get("rx_dev", {}), "rx_dropped"),
    }


def thread_shares(
    before: dict[str, Any], after: dict[str, Any], window_s: float, key: str = "schedstat_ns"
) -> dict[str, float]:
    """Each watched task's share of the window (schedstat) on a CPU (``schedstat_ns``) or
    runnable and waiting for one (``schedwait_ns``): ksoftirqd/N, the NAPI threads, the
    receiver, the sender (which spins between sends, so it is always on a CPU or waiting)."""
    shares = {}
    for name in before.get(key, {}):
        ns = _ns_delta(before, after, name, key)
        if ns is not None:
            shares[name] = ns / (window_s * 1e9)
    return shares
