"""Recording a window (:func:`record`) and the measurement bundle it writes and reads back
(:func:`write_bundle`, :func:`load_bundle`).

A bundle is one directory: ``manifest.json`` (what was recorded, on which kernel, when),
``counters_before.json`` and ``counters_after.json`` (the two snapshots), ``summary.json``
(:func:`~irqlab.ops.measure.summary.summarize`), and when they could be had
``distributions.json`` (the tracepoints, :class:`~irqlab.ops.measure.tracing.TraceSession`)
and ``settings.json`` (the host's settings as ``irqlab probe`` reads them). Reading one back
checks each file's shape, so a damaged, partial or newer bundle is one line naming the file
and what is wrong; the two optional files may be absent (older bundles, no root).
"""

from __future__ import annotations

import datetime
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irqlab import __version__
from irqlab.errors import ConfigError
from irqlab.ops.measure.counters import FILES, snapshot
from irqlab.ops.measure.summary import summarize, summarize_trace
from irqlab.ops.measure.tracing import FORMAT as DISTRIBUTIONS_FORMAT
from irqlab.ops.measure.tracing import TraceError, TraceSession
from irqlab.ops.probe.findings import Probe
from irqlab.ops.probe.host import Host
from irqlab.ops.probe.steps import tick_rate
from irqlab.ops.probe.text import as_shown

FORMAT = "irqlab-measurement"
#: The version of the bundle's format this irqlab writes, and the newest it reads.
FORMAT_VERSION = 1
#: The window's bounds, in seconds.
MIN_SECONDS, MAX_SECONDS = 0.1, 3600.0
TRACING = "not recorded (counters only)"
TRACED = "recorded (distributions.json)"
#: The bundle's files, each with the keys it must have.
BUNDLE_FILES = {
    "manifest.json": ("format", "format_version", "window_s", "cpus", "recorded"),
    "counters_before.json": ("missing",),
    "counters_after.json": ("missing",),
    "summary.json": ("window_s", "cpus", "irqs", "udp", "warnings"),
}
#: The files a bundle has when they could be recorded, each with the keys it must have.
OPTIONAL_FILES = {
    "distributions.json": ("format", "format_version", "net_rx", "napi_poll", "overhead"),
    "settings.json": ("iface", "driver", "settings", "scenario"),
}


class BundleError(ConfigError):
    """A measurement bundle that cannot be read: one line naming the file and what is wrong."""


@dataclass
class Bundle:
    """A measurement bundle: its manifest, the two snapshots and the summary."""

    manifest: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any]
    summary: dict[str, Any]
    #: the tracepoints' distributions (distributions.json), None when not traced
    distributions: dict[str, Any] | None = None
    #: the host's settings as ``irqlab probe`` reads them (settings.json), None if unread
    settings: dict[str, Any] | None = None

    def files(self) -> dict[str, dict[str, Any]]:
        files = {
            "manifest.json": self.manifest,
            "counters_before.json": self.before,
            "counters_after.json": self.after,
            "summary.json": self.summary,
        }
        if self.distributions is not None:
            files["distributions.json"] = self.distributions
        if self.settings is not None:
            files["settings.json"] = self.settings
        return files


def check_seconds(seconds: float) -> float:
    """``seconds`` if it is a window :func:`record` takes, else a one-line error."""
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:  # False for NaN too
        raise ConfigError(
            f"--seconds {seconds:g}: the window is {MIN_SECONDS:g} to {MAX_SECONDS:g} s",
            "seconds",
        )
    return seconds


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


def _hz_of(host: Host, release: str | None) -> tuple[int | None, str | None]:
    """The kernel's tick rate as ``irqlab probe`` finds it (its kernel configuration), and the
    source; None when the host does not say."""
    p = Probe(iface="")
    p.kernel = release
    tick_rate(host, p)
    s = p.settings.get("kernel.hz")
    return (s.value, s.source) if s is not None else (None, None)


def host_hz(host: Host | None = None) -> int | None:
    """This host's tick rate (CONFIG_HZ), None when its kernel configuration does not say."""
    host = Host(Path("/")) if host is None else host
    release = host.read("/proc/sys/kernel/osrelease")
    return _hz_of(host, release.strip() if release else None)[0]


def tracing_reason(why: str | None = None) -> str:
    """Why this window records no tracepoints, in one line: not root, else ``why``."""
    if os.geteuid() != 0:
        return "not root (tracepoints need root)"
    return why or "not asked for"


def host_settings(host: Host, iface: str | None = None) -> tuple[dict[str, Any] | None, str]:
    """The host's settings for ``iface`` (default: the interface of the default route) as
    ``irqlab probe`` reads them, with the scenario it writes (``"scenario"``), and where
    they came from; None and why when there is no such interface."""
    from irqlab.ops.probe.steps import probe

    try:
        p = probe(iface, root=host.root, interval_s=0)
    except ConfigError as e:
        return None, str(e)
    return {
        "iface": p.iface,
        "driver": p.driver,
        "driver_version": p.driver_version,
        "bus": p.bus,
        "kernel": p.kernel,
        "settings": {k: {"value": s.value, "source": s.source} for k, s in p.settings.items()},
        "with_apps": {k: {"value": s.value, "source": s.source} for k, s in p.with_apps.items()},
        "unmodelled": [
            {"name": n, "value": v, "what": w, "source": src} for n, v, w, src in p.unmodelled
        ],
        "vectors": [
            {"irq": v.irq, "name": v.name, "queue": v.queue, "affinity": v.affinity}
            for v in p.vectors
        ],
        "notes": p.notes,
        "scenario": p.toml(),
    }, f"irqlab probe {p.iface}"


def record(
    host: Host,
    seconds: float,
    *,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    now: Callable[[], str] = _now,
    trace: TraceSession | None = None,
    untraced: str | None = None,
    settings: bool = True,
    iface: str | None = None,
) -> Bundle:
    """Reads every counter, waits ``seconds`` (Ctrl-C ends the window early, and the bundle
    covers the shorter window), reads them again, and summarizes the window.

    With ``trace`` (a :class:`TraceSession` the caller's ``with`` closes, started here unless
    the caller started it earlier), its tracepoints cover the window too; if tracing fails
    the counters are still recorded and the manifest says why (``untraced`` says why when no
    ``trace`` is given). ``settings``: also read the host's settings for ``iface`` as
    ``irqlab probe`` does."""
    check_seconds(seconds)
    # the settings first, outside the window: they name the interface whose counters it reads
    probed, probed_from = host_settings(host, iface) if settings else (None, "not asked for")
    counted = probed["iface"] if probed else iface
    reason = tracing_reason(untraced)
    if trace is not None:
        try:
            if not trace.started:
                trace.start()
            reason = f"root and {trace.version()}: tracepoints aggregated in the kernel"
        except TraceError as e:
            reason, trace = str(e), None
    release = host.read("/proc/sys/kernel/osrelease")
    kernel = as_shown(release.strip(), 255) if release else None
    hz, hz_source = _hz_of(host, kernel)
    user_hz = os.sysconf("SC_CLK_TCK")
    start_wall = now()
    before = snapshot(host, counted)
    start = clock()
    interrupted = False
    try:
        (sleep or time.sleep)(seconds)
    except KeyboardInterrupt:
        interrupted = True
    window = clock() - start
    after = snapshot(host, counted)
    end_wall = now()
    distributions = None
    if trace is not None:
        try:
            distributions = trace.stop()
        except TraceError as e:
            reason = str(e)
    summary = summarize(before, after, window, user_hz) if window > 0 else None
    if summary is None:
        summary = {"window_s": window, "cpus": [], "irqs": [], "udp": {}, "warnings": []}
        summary["warnings"].append("the window was empty: no rates")
    if distributions is not None:
        summary["traced"] = summarize_trace(distributions)
    missing = {**before["missing"], **after["missing"]}
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "irqlab_version": __version__,
        "kernel": kernel,
        "hz": hz,
        "hz_source": hz_source,
        "user_hz": user_hz,
        "cpus": len(summary["cpus"]),
        "host": "recorded tree" if host.recorded else "live",
        "start": start_wall,
        "end": end_wall,
        "window_s": window,
        "requested_s": seconds,
        "interrupted": interrupted,
        "recorded": [name for name in FILES.values() if name not in missing],
        "missing": missing,
        "tracing": TRACED if distributions is not None else TRACING,
        "tracing_reason": reason,
        "iface": probed["iface"] if probed else iface,
        "driver": probed["driver"] if probed else None,
        "settings": "settings.json" if probed else None,
        "settings_reason": probed_from,
    }
    return Bundle(manifest, before, after, summary, distributions, probed)


def write_bundle(bundle: Bundle, out: Path) -> None:
    """Writes ``bundle`` into the directory ``out`` (made if absent), replacing an earlier
    bundle's files there, the optional ones it does not have removed."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        files = bundle.files()
        for name, data in files.items():
            (out / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        for name in OPTIONAL_FILES:  # an earlier bundle's, which this one does not have
            if name not in files:
                (out / name).unlink(missing_ok=True)
    except OSError as e:
        raise ConfigError(f"{out}: cannot write the bundle ({e.strerror or e})", None) from None


def load_bundle(path: str | Path) -> Bundle:
    """The bundle in directory ``path``; :class:`BundleError` naming the file and what is wrong
    if it is missing, damaged, partial, or of a newer format."""
    path = Path(path)
    if not path.is_dir():
        raise BundleError(f"bundle {path}: not a directory", None)
    data: dict[str, dict[str, Any]] = {}
    for name, keys in {**BUNDLE_FILES, **OPTIONAL_FILES}.items():
        where = path / name
        try:
            text = where.read_text(encoding="utf-8")
        except FileNotFoundError:
            if name in OPTIONAL_FILES:
                continue
            raise BundleError(f"{where}: missing (a partial bundle)", None) from None
        except (OSError, UnicodeDecodeError) as e:
            raise BundleError(f"{where}: cannot be read ({e})", None) from None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise BundleError(
                f"{where}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})", None
            ) from None
        if not isinstance(value, dict):
            raise BundleError(f"{where}: expected a JSON object", None)
        absent = [k for k in keys if k not in value]
        if absent:
            raise BundleError(f"{where}: no {', '.join(absent)} (a damaged bundle)", None)
        if name == "manifest.json":
            if value["format"] != FORMAT:
                raise BundleError(
                    f"{where}: format {as_shown(str(value['format']), 64)!r}, expected {FORMAT!r}",
                    None,
                )
            version = value["format_version"]
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise BundleError(f"{where}: format_version {version!r} is not a version", None)
            if version > FORMAT_VERSION:
                raise BundleError(
                    f"{where}: format version {version} is newer than this irqlab reads "
                    f"(up to {FORMAT_VERSION}): upgrade irqlab",
                    None,
                )
        if name == "summary.json" and not isinstance(value["cpus"], list):
            raise BundleError(f"{where}: cpus is not a list (a damaged bundle)", None)
        if name == "distributions.json":
            if value["format"] != DISTRIBUTIONS_FORMAT:
                raise BundleError(
                    f"{where}: format {as_shown(str(value['format']), 64)!r}, "
                    f"expected {DISTRIBUTIONS_FORMAT!r}",
                    None,
                )
            if not isinstance(value["format_version"], int) or value["format_version"] > 1:
                raise BundleError(
                    f"{where}: format version {value['format_version']!r} is not one this "
                    "irqlab reads (1)",
                    None,
                )
            for key in ("net_rx", "napi_poll", "overhead"):
                if not isinstance(value[key], dict):
                    raise BundleError(f"{where}: {key} is not an object (a damaged bundle)", None)
        data[name] = value
    return Bundle(
        data["manifest.json"],
        data["counters_before.json"],
        data["counters_after.json"],
        data["summary.json"],
        data.get("distributions.json"),
        data.get("settings.json"),
    )
