"""The files a user names, checked before anything opens them.

Opening a named pipe (FIFO) blocks until another process writes to it, and reading a device
such as ``/dev/zero`` never ends. Readers in C and Rust (pyarrow, SQLite, the capture reader)
do not look at Ctrl-C while they wait, so a pipe given as a capture or as a results table
would hang for ever. :func:`regular_file` refuses everything but a regular file (after
symbolic links), at once and in one line naming the argument, from its metadata alone: a
``stat`` never blocks. :func:`read_limited` reads such a file, up to a size no real one of its
kind reaches, so that a damaged or wrong file cannot fill the memory.

A scenario or sweep file may still come from a pipe (``irqlab run <(…)``): it is read once,
by Python, which Ctrl-C interrupts, and up to :data:`irqlab.scenario.MAX_FILE_BYTES`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from irqlab.errors import ConfigError

#: The largest JSON file of a result read whole: a run's report with many cores and classes
#: is a few hundred kB, a tune's definition a few MB.
MAX_JSON_BYTES = 64 << 20


def _kind(mode: int) -> str | None:
    """What a file that is not a regular one is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"  # pragma: no cover (a door, a whiteout…)


def regular_file(path: str | os.PathLike[str], what: str, why: str = "") -> Path:
    """``path`` as a Path if it names a regular file (symbolic links followed), else a
    :class:`ConfigError` naming ``what`` (``"capture"``, ``"traffic.pcap"``,
    ``"results"``…), the path and what it is instead; ``why`` says what reads it
    (``"irqlab reads a capture from a file: save it to one first"``)."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise ConfigError(f"{what} {p}: no such file", what) from None
    except NotADirectoryError:
        raise ConfigError(f"{what} {p}: no such file (a part of it is a file)", what) from None
    except OSError as e:
        raise ConfigError(f"{what} {p}: cannot read it ({e.strerror or e})", what) from None
    kind = _kind(mode)
    if kind == "a directory":
        raise ConfigError(f"{what} {p}: is a directory, not a file", what)
    if kind is not None:
        why = f"; {why}" if why else ""
        raise ConfigError(f"{what} {p}: is {kind}, not a regular file{why}", what)
    return p


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` exists as a regular file (symbolic links followed); never blocks."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_limited(path: str | os.PathLike[str], what: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (:func:`regular_file`), at most ``limit``: a
    longer one is a :class:`ConfigError` naming ``what`` (it is not the file it should be)."""
    p = regular_file(path, what)
    try:
        with p.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise ConfigError(f"{what} {p}: cannot read it ({e.strerror or e})", what) from None
    if len(data) > limit:
        raise ConfigError(
            f"{what} {p}: longer than {limit >> 20} MiB, far too long for what irqlab writes "
            "there (is it the right file?)",
            what,
        )
    return data


def write_atomic(path: str | os.PathLike[str], text: str, what: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` whole or not at all: into a temporary file beside
    it, renamed over it when complete, so that a full disk or a kill leaves the previous file
    (or none), never half a page. A device or a pipe (``-o /dev/stdout``) is written as it
    is. Errors are a :class:`ConfigError` naming ``what`` and the path."""
    p = Path(path)
    if os.path.lexists(p) and not is_regular(p):
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"{what} {p}: cannot write it ({e.strerror or e})", what) from None
        return p
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise ConfigError(f"{what} {p}: cannot write it ({e.strerror or e})", what) from None
    return p


#: What :func:`writable_folder` writes to see that a folder takes files: a few SQLite pages.
PROBE_BYTES = 64 << 10


def writable_folder(path: str | os.PathLike[str], what: str) -> Path:
    """``path``, a folder made if needed, in which a file of :data:`PROBE_BYTES` could just be
    written (and was removed): a read-only folder or a full disk is one line naming ``what``
    before a command says it starts, not an error after. A path that is a file is left to
    the command (it says so)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        return p
    probe = p / f".irqlab-probe-{os.getpid()}"
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"{what} {p}: cannot create the folder ({e.strerror or e})", what
        ) from None
    try:
        try:
            with probe.open("wb") as fh:
                fh.write(bytes(PROBE_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            with contextlib.suppress(OSError):
                probe.unlink(missing_ok=True)
    except OSError as e:
        raise ConfigError(
            f"{what} {p}: cannot write a file in it ({e.strerror or e})", what
        ) from None
    return p


#: The files each kind of result folder holds; any one of them not in the other kind's list
#: tells which kind a folder is (each keeps its runs in a journal.sqlite).
RESULT_FILES = {
    "sweep": ("sweep.json", "journal.sqlite", "runs.parquet", "summary.parquet"),
    "tune": ("tune.json", "runs.jsonl", "candidates.csv", "recommendation.json", "journal.sqlite"),
    "calibration": ("calibration.json", "residuals.csv", "journal.sqlite"),
}


def own_folder(path: str | os.PathLike[str], kind: str, what: str) -> None:
    """Refuses to write a ``kind`` (``"sweep"``, ``"tune"``, ``"calibration"``) into a folder
    holding another kind of result: each writes files of the same names (``runs.*``,
    ``report.html``) and a report shows one of them only."""
    p = Path(path)
    if not p.is_dir():
        return
    for other, names in RESULT_FILES.items():
        found = [n for n in names if other != kind and os.path.lexists(p / n)]
        if any(n not in RESULT_FILES[kind] for n in found):
            raise ConfigError(
                f"{what} {p}: holds a {other}'s results ({', '.join(found)}); a {kind} writes "
                f"into a folder of its own: choose another {what}",
                what,
            )
