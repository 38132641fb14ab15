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
