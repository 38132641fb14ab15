"""What a host says, parsed: pure functions of text — ethtool's outputs, CPU lists,
/proc/interrupts, the RSS indirection table, the kernel's configuration and release, a kernel's
integers. Each bounds what it expands (``MAX_CPUS``, ``MAX_IRQS``, ``MAX_RSS_ENTRIES``) and says
what it skipped rather than failing on a damaged text.
"""

from __future__ import annotations

import io
import itertools
import re
import zlib
from dataclasses import dataclass, field

from irqlab.errors import ConfigError
from irqlab.ops.probe import limits
from irqlab.ops.probe.text import as_shown


def parse_ethtool(text: str) -> dict[str, str | None]:
    """``ethtool -c/-g/-l/-i`` output as ``{field: value}``, fields lower case, "n/a" as None.

    ``-g`` and ``-l`` list pre-set maximums and current settings under the same names: the
    maximums get the prefix ``max ``. ``Adaptive RX: on  TX: off`` (and ``CQE mode``) gives
    ``adaptive rx`` and ``adaptive tx``. Works on the netlink format (``n/a`` for unsupported
    fields, ethtool ≥ 5.6) and the older ioctl one (zeros).
    """
    out: dict[str, str | None] = {}
    prefix = ""
    for raw in text.splitlines():
        line = raw.strip()
        low = line.lower()
        if not line or " parameters for " in low:
            continue
        if low.startswith("pre-set maximums"):
            prefix = "max "
            continue
        if low.startswith("current hardware settings"):
            prefix = ""
            continue
        pair = re.fullmatch(r"(adaptive|cqe mode) rx:\s*(\S+)\s+tx:\s*(\S+)", low)
        if pair:
            out[f"{pair[1]} rx"] = _na(pair[2])
            out[f"{pair[1]} tx"] = _na(pair[3])
            continue
        if ":" in line:
            key, value = line.split(":", 1)
        else:  # ethtool 6.x prints "tx-aggr-time-usecs" without its colon
            key, _, value = line.partition("\t") if "\t" in line else line.partition(" ")
        out[prefix + key.strip().lower()] = _na(value.strip())
    return out


def _na(value: str) -> str | None:
    return None if value.lower() in ("n/a", "") else value


def integer(value: str | None) -> int | None:
    """A kernel's integer (decimal, or 0x... in firmware versions); None if ``value`` is not
    one. More than 24 characters is not a kernel's integer (and would not convert to a float)."""
    if value is None or len(value) > 24:
        return None
    try:
        return int(value)
    except ValueError:
        try:
            return int(value, 0)
        except ValueError:
            return None


def _number(text: str, digits: int = 9) -> int:
    """A plain decimal number of at most ``digits`` digits; ValueError if ``text`` is not."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= digits):
        raise ValueError(f"{as_shown(text)!r} is not a number")
    return int(text)


def parse_cpulist(text: str, limit: int = limits.MAX_CPUS) -> list[int]:
    """A kernel CPU list (``0-3,8,10-11``) as CPU numbers, sorted, each once; ValueError if it
    is not one or names more than ``limit`` CPUs."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part.strip():
            continue
        first, dash, last = part.partition("-")
        lo = _number(first)
        hi = _number(last) if dash else lo
        if hi < lo:
            raise ValueError(f"{as_shown(part)!r}: a range that ends before it starts")
        if len(cpus) + hi - lo + 1 > limit:
            raise ValueError(f"more than {limit} CPUs, Linux's most (MAX_CPUS)")
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


@dataclass
class Interrupts:
    """One sample of /proc/interrupts: the CPU of each column and, per IRQ number, its action
    names; its counts per column are parsed when asked (:meth:`counts_of`), as a host of 1024
    CPUs has tens of MB of them."""

    cpus: list[int]
    names: dict[int, str]
    #: each IRQ's count columns, as read
    columns: dict[int, str] = field(default_factory=dict, repr=False)
    #: what was skipped: lines too long, IRQs beyond ``MAX_IRQS``
    problems: list[str] = field(default_factory=list)

    def counts_of(self, irq: int) -> list[int] | None:
        text = self.columns.get(irq)
        return None if text is None else [int(t) for t in text.split()]

    @property
    def counts(self) -> dict[int, list[int]]:
        return {irq: [int(t) for t in text.split()] for irq, text in self.columns.items()}


_TRIGGER = re.compile(r"-(edge|level|fasteoi)$|^(Level|Edge)$")


def _is_count(token: str) -> bool:
    return token.isascii() and token.isdigit() and len(token) <= 20


def parse_interrupts(text: str) -> Interrupts:
    """/proc/interrupts: the header names the CPUs of the columns (only the online ones); a
    numbered line has a count per column, the chip, the hardware IRQ and trigger, and the
    actions' names (comma-separated when shared). Lines that are not numbered IRQs (NMI,
    LOC, ...) are skipped, and so is a line longer than its counts and a name can make (with a
    problem said); at most ``MAX_CPUS`` columns and ``MAX_IRQS`` IRQs are read."""
    end = text.find("\n")
    end = len(text) if end < 0 else end
    header = text[: min(end, limits.MAX_CPUS * 24)]
    found = re.finditer(r"CPU([0-9]{1,9})", header)
    cpus = [int(m[1]) for m in itertools.islice(found, limits.MAX_CPUS)]
    names: dict[int, str] = {}
    columns: dict[int, str] = {}
    problems: list[str] = []
    width = 24 * len(cpus) + 4096
    skipped = lines = 0
    while end < len(text):
        lines += 1
        if lines > limits.MAX_IRQS + 4096:  # the lines not IRQs (NMI, LOC, ...) are a few dozen
            problems.append(f"more than {limits.MAX_IRQS + 4096} lines: the rest not read")
            break
        start = end + 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > width:  # measured before it is copied: a line may be the whole file
            skipped += 1
            continue
        line = text[start:end]
        head, _, rest = line.partition(":")
        head = head.strip()
        if not (head.isascii() and head.isdigit() and len(head) <= 9):
            continue
        if len(names) == limits.MAX_IRQS:
            problems.append(
                f"more than {limits.MAX_IRQS} IRQs (MAX_IRQS): the first {limits.MAX_IRQS} read"
            )
            break
        parts = rest.split(None, len(cpus))
        n = 0
        while n < len(cpus) and n < len(parts) and _is_count(parts[n]):
            n += 1
        tail = parts[n : len(cpus)]
        if len(parts) > len(cpus):
            tail += parts[len(cpus)].split()
        # the actions follow the "<hwirq>-edge" (or -level, -fasteoi) token; old kernels
        # joined the chip and trigger ("PCI-MSI-edge"); ARM's GIC writes "27 Level"
        trigger = [i for i, t in enumerate(tail) if _TRIGGER.search(t)]
        name = " ".join(tail[trigger[-1] + 1 :]) if trigger else " ".join(tail[-1:])
        irq = int(head)
        columns[irq] = " ".join(parts[:n])
        names[irq] = name
    if skipped:
        problems.append(f"{skipped} lines longer than {width} characters skipped")
    return Interrupts(cpus, names, columns, problems)


def parse_rss_table(text: str) -> list[int]:
    """``ethtool -x``: the queue of each entry of the RSS indirection table, in order;
    ValueError if there is no table or it has more than ``MAX_RSS_ENTRIES`` entries."""
    entries: list[int] = []
    started = False
    for line in io.StringIO(text):
        low = line.strip().lower()
        if low.startswith("rx flow hash indirection table"):
            started = True
            continue
        if not started:
            continue
        row = re.fullmatch(r"[0-9]{1,9}:((?:\s+[0-9]{1,9})*)\s*", low)
        if row is None:
            if entries:
                break  # "RSS hash key:" follows the table
            continue
        for m in re.finditer(r"[0-9]+", row[1]):
            if len(entries) == limits.MAX_RSS_ENTRIES:
                raise ValueError(f"more than {limits.MAX_RSS_ENTRIES} entries (MAX_RSS_ENTRIES)")
            entries.append(int(m[0]))
    if not entries:
        raise ValueError("no indirection table")
    return entries


def parse_hz(config: str) -> int | None:
    """``CONFIG_HZ`` of a kernel configuration; None if it has none."""
    m = re.search(r"^CONFIG_HZ=([0-9]{1,9})$", config, re.M)
    return int(m[1]) if m else None


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """A kernel release's (major, minor): ``6.8.0-45-generic`` → ``(6, 8)``."""
    m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})", release or "")
    return (int(m[1]), int(m[2])) if m else None


def gunzip(data: bytes | bytearray, limit: int = limits.MAX_CONFIG_BYTES) -> bytes:
    """The first ``limit`` bytes ``data`` decompresses to (a gzip bomb costs no more);
    ValueError if it is not gzip."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data, limit)
    except zlib.error:
        raise ValueError("not a gzip file") from None


def parse_interval(text: str) -> float:
    """``1s``, ``500ms``, ``0.5`` (seconds) or ``0`` → seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*", text)
    if not m:
        raise ConfigError(f"--interval {text!r}: expected a duration like 1s, 500ms or 0", None)
    value = float(m[1]) / (1000 if m[2] == "ms" else 1)
    if value > 60:
        raise ConfigError(f"--interval {text!r}: at most 60 s", None)
    return value
