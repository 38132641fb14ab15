"""What a host wrote, made safe to show: a value read from a host may carry anything (control
characters, line separators, bidirectional overrides), and goes into comments, notes and a
terminal only through these."""

from __future__ import annotations

import re

from irqlab.ops.probe.limits import SHOWN_CHARS

#: Characters a value read from a host may not carry into a comment, a note or a terminal:
#: control characters (but tab and newline), line separators and bidirectional overrides.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


#: The same characters, each to U+FFFD, for str.translate (which, unlike re.sub, keeps the
#: time and memory of 32 MiB of control characters linear).
_UNPRINTABLE_MAP = dict.fromkeys((c for c in range(0x2070) if _UNPRINTABLE.match(chr(c))), "\ufffd")


def clean(text: str) -> str:
    """``text`` with every unprintable character replaced by U+FFFD."""
    return text.translate(_UNPRINTABLE_MAP) if _UNPRINTABLE.search(text) else text


def one_line(text: str) -> str:
    """``text`` as one line a comment can hold (a host's values may carry anything)."""
    return " ".join(clean(text).split())


def as_shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """A value read from a host as a comment or note shows it: one line, cut if long."""
    line = one_line(text)
    return line if len(line) <= limit else line[: limit - 1] + f"… ({len(line)} characters)"
