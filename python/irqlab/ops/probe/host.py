"""Reading a host safely: its files, directories and links through a root (``/`` on the live
host, a recorded tree otherwise), and the commands it runs (ethtool), each bounded.

Nothing read is trusted. A file is read only if it is a regular one (a FIFO would block, a
device could act on being opened), up to a bounded prefix; a listing is bounded; a command is
killed when it takes too long or prints too much (:func:`run_bounded`). A path that loops or
cannot be read is recorded in :attr:`Host.problems` and becomes a note, never an exception.
"""

from __future__ import annotations

import errno
import os
import selectors
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from irqlab.errors import ConfigError
from irqlab.formatting import size
from irqlab.ops.probe import limits
from irqlab.ops.probe.netlink import explain, napi_get, parse_napis, parse_queues, queue_get
from irqlab.ops.probe.parsers import integer
from irqlab.ops.probe.text import as_shown, clean
from irqlab.scenario import show_key

T = TypeVar("T")

#: ethtool's long options whose output the probe reads, and the short flag run for each. A
#: recorded tree holds their output as ``ethtool/IFACE/OPTION``.
ETHTOOL_OPTIONS = {
    "driver": "-i",
    "show-coalesce": "-c",
    "show-ring": "-g",
    "show-channels": "-l",
    "show-rxfh-indir": "-x",
}


def _why(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "a symbolic link loop"
    if e.errno == errno.EACCES or e.errno == errno.EPERM:
        return "not readable (permission denied)"
    return f"not readable ({(e.strerror or type(e).__name__).lower()})"


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return f"{what}, not a file: not read"
    return "not a regular file: not read"


class Host:
    """Reads files and runs ethtool, for the live host (root ``/``) or a recorded tree.

    In a recorded tree, ethtool's output is ``ethtool/IFACE/OPTION`` (``show-coalesce``, ...),
    netlink's per-NAPI settings ``netlink/IFACE/napi-get`` and its queues
    ``netlink/IFACE/queue-get``, and the second sample of a file is ``FILE.2``. Nothing read is
    trusted: a file is read only if it is a regular one (a FIFO would block), up to a bounded
    prefix; a listing is bounded; a path that loops or cannot be read is recorded in
    :attr:`problems` (and becomes a note), never an exception.
    """

    def __init__(
        self,
        root: str | Path = "/",
        *,
        ethtool: str | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.root = Path(root)
        try:
            self.real_root = self.root.resolve()
        except (OSError, RuntimeError, ValueError) as e:  # a loop of symbolic links
            raise ConfigError(
                f"root {show_key(str(root))}: cannot be resolved ({e})", None
            ) from None
        self.recorded = self.real_root != Path("/")
        self.ethtool_cmd = ethtool
        self.timeout_s = timeout_s
        #: what went wrong reading a path that exists, by path: a note each unless a reader
        #: made its own (:meth:`failure`)
        self.problems: dict[str, str] = {}
        self._kept: dict[str, str | None] = {}

    def path(self, name: str) -> Path:
        return self.root / name.lstrip("/")

    def failure(self, name: str) -> str:
        """Why ``name`` gave nothing: "not present", or what was wrong with it (which the
        caller now reports, so it is no longer in :attr:`problems`)."""
        return self.problems.pop(name, "not present")

    def read(
        self,
        name: str,
        *,
        second: bool = False,
        limit: int = limits.MAX_FILE_BYTES,
        keep: bool = False,
    ) -> str | None:
        """The text of ``name`` (an absolute path on the host; at most ``limit`` bytes), or
        None if it cannot be read. ``keep``: read once, for a file that does not change
        between readers (/proc/cpuinfo, large on a large host)."""
        if second and self.recorded:
            name += ".2"
        if keep and name in self._kept:
            return self._kept[name]
        data = self.read_bytes(name, limit=limit)
        text = None if data is None else clean(data.decode("utf-8", errors="replace"))
        if keep:
            self._kept[name] = text
        return text

    def read_bytes(
        self, name: str, *, limit: int = limits.MAX_FILE_BYTES
    ) -> bytes | bytearray | None:
        """The bytes of ``name``, at most ``limit`` of them, if it is a regular file: anything
        else is not even opened (a FIFO would block, a device could act on being opened)."""
        path = self.path(name)
        try:
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                self.problems[name] = _kind(mode)
                return None
            flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        except ValueError:  # a NUL in the path
            self.problems[name] = "not a path"
            return None
        data = bytearray()
        try:
            mode = os.fstat(fd).st_mode  # what was opened, should the path have changed
            if not stat.S_ISREG(mode):
                self.problems[name] = _kind(mode)
                return None
            while len(data) <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        finally:
            os.close(fd)
        if len(data) > limit:
            which = "MAX_TABLE_BYTES" if limit == limits.MAX_TABLE_BYTES else "MAX_FILE_BYTES"
            self.problems[name] = (
                f"larger than {size(limit)} ({which}): only its first {size(limit)} read"
            )
            del data[limit:]
        return data

    def _attempt(
        self, name: str, read: Callable[[], T], quiet: Callable[[OSError], bool] = lambda e: False
    ) -> T | None:
        """``read()`` of ``name``; None if ``name`` does not exist, is not a path, or cannot be
        read — which is recorded in :attr:`problems` unless ``quiet`` says it is no problem."""
        try:
            return read()
        except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: a NUL in it
            return None
        except OSError as e:
            if not quiet(e):
                self.problems[name] = _why(e)
            return None

    def listdir(self, name: str) -> list[str] | None:
        """The entries of directory ``name`` (at most ``MAX_DIR_ENTRIES``), sorted."""

        def entries() -> list[str]:
            names: list[str] = []
            with os.scandir(self.path(name)) as found:
                for entry in found:
                    if len(names) == limits.MAX_DIR_ENTRIES:
                        self.problems[name] = (
                            f"more than {limits.MAX_DIR_ENTRIES} entries (MAX_DIR_ENTRIES): the "
                            f"first {limits.MAX_DIR_ENTRIES} read"
                        )
                        break
                    names.append(entry.name)
            return sorted(names)

        return self._attempt(name, entries)

    def exists(self, name: str) -> bool:
        try:
            return self.path(name).exists()
        except (OSError, ValueError):
            return False

    def readlink(self, name: str) -> str | None:
        """Where the symbolic link ``name`` points; None if it is not one."""
        target = self._attempt(
            name,
            lambda: os.readlink(self.path(name)),
            quiet=lambda e: e.errno == errno.EINVAL,  # EINVAL: not a symbolic link
        )
        return None if target is None else clean(target)

    def realname(self, name: str) -> Path | None:
        """Where ``name`` leads after its symbolic links, as a path on the host."""
        p = self.path(name)
        try:
            os.stat(p)
            real = p.resolve()
        except (FileNotFoundError, NotADirectoryError):
            if os.path.islink(p):
                self.problems[name] = "a symbolic link to nothing"
            return None
        except RuntimeError:  # Python 3.11's resolve() reports a loop so
            self.problems[name] = "a symbolic link loop"
            return None
        except OSError as e:
            self.problems[name] = _why(e)
            return None
        except ValueError:
            return None
        try:
            return Path("/") / real.relative_to(self.real_root)
        except ValueError:
            return None

    def ethtool(self, option: str, iface: str) -> tuple[str | None, str]:
        """ethtool's output for ``--OPTION IFACE`` and a description of its source; None and
        the reason when there is none."""
        flag = ETHTOOL_OPTIONS[option]
        if self.recorded and self.ethtool_cmd is None:
            name = f"/ethtool/{iface}/{option}"
            text = self.read(name)
            if text is None:
                why = self.failure(name)
                if why == "not present":
                    return None, f"no recorded `ethtool {flag} {iface}` ({name})"
                return None, f"{name}: {why}"
            return text, f"ethtool {flag} {iface}"
        cmd = self.ethtool_cmd or "ethtool"
        exe = shutil.which(cmd)
        if exe is None:
            return None, f"`ethtool {flag} {iface}`: {cmd} not found"
        try:
            status, out, err = run_bounded(
                [exe, flag, iface], self.timeout_s, limits.MAX_OUTPUT_BYTES
            )
        except OSError as e:
            return None, f"`ethtool {flag} {iface}`: {(e.strerror or str(e)).lower()}"
        if status == "timeout":
            return None, f"`ethtool {flag} {iface}` did not answer within {self.timeout_s:g} s"
        if status == "too long":
            return None, (
                f"`ethtool {flag} {iface}` printed more than "
                f"{size(limits.MAX_OUTPUT_BYTES)}: ignored"
            )
        if status != 0:
            lines = clean(err.decode("utf-8", errors="replace")).strip().splitlines()
            why = as_shown(lines[-1], 200) if lines else f"exit status {status}"
            return None, f"`ethtool {flag} {iface}` failed: {why}"
        return clean(out.decode("utf-8", errors="replace")), f"ethtool {flag} {iface}"

    def napis(self, iface: str) -> tuple[list[dict[str, int]] | None, str]:
        """Each NAPI of ``iface`` with its netlink attributes (``napi-get``) and the source;
        None and the reason when there are none."""
        return self._netlink(iface, "napi-get", parse_napis, napi_get)

    def queues(self, iface: str) -> tuple[list[dict[str, int]] | None, str]:
        """Each queue of ``iface`` with the NAPI that serves it (``queue-get``) and the
        source; None and the reason when there are none."""
        return self._netlink(iface, "queue-get", parse_queues, queue_get)

    def _netlink(
        self,
        iface: str,
        what: str,
        parse: Callable[[str], list[dict[str, int]]],
        ask: Callable[[int, float], list[dict[str, int]]],
    ) -> tuple[list[dict[str, int]] | None, str]:
        """netlink's ``what`` of ``iface``: recorded as ``netlink/IFACE/WHAT``, or asked of the
        kernel's netdev family (through pyroute2) by the interface's ifindex."""
        if self.recorded:
            # a damaged recording is a note of its own (:attr:`problems`), needed or not
            name = f"/netlink/{iface}/{what}"
            text = self.read(name)
            if text is None:
                why = self.problems.get(name)
                return None, f"{name}: {why}" if why else f"no recorded netlink {what} ({name})"
            try:
                return parse(text), f"netlink {what} {iface}"
            except ValueError as e:
                self.problems[name] = str(e)
                return None, f"{name}: {e}"
        ifindex = integer((self.read(f"/sys/class/net/{iface}/ifindex") or "").strip() or None)
        if ifindex is None or not 0 < ifindex < 1 << 31:
            return None, f"/sys/class/net/{iface}/ifindex unreadable: no netlink {what}"
        try:
            return ask(ifindex, self.timeout_s), f"netlink {what} {iface}"
        except OSError as e:
            return None, f"netlink {what} {iface}: {explain(e)}"


def run_bounded(argv: list[str], timeout_s: float, limit: int) -> tuple[int | str, bytes, bytes]:
    """Runs ``argv`` with no input; its exit status, or "timeout" or "too long" when it was
    killed for taking more than ``timeout_s`` or printing more than ``limit`` bytes, and what
    it printed on stdout and stderr. A command that hangs or floods costs neither time nor
    memory beyond those bounds, and Ctrl-C stops it."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LC_ALL": "C"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    deadline = time.monotonic() + timeout_s
    status: int | str | None = None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map() and status is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    status = "timeout"
                    break
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    bufs[key.fd] += chunk
                    if len(bufs[key.fd]) > limit:
                        status = "too long"
                        break
        if status is None:
            try:
                status = proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                status = "timeout"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return status, bytes(bufs[out_fd]), bytes(bufs[err_fd])
