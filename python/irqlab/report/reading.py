"""A result's files read without trusting them (a damaged or hostile one is one line naming
it), and the values in them: numpy scalars as Python's, None and NaN alike, a report's dotted
names."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from irqlab.errors import ConfigError
from irqlab.files import read_limited, regular_file


def missing(x: Any) -> bool:
    """None or NaN: a value a table shows as a dash."""
    return x is None or (isinstance(x, numbers.Real) and math.isnan(float(x)))


def py(v: Any) -> Any:
    """A numpy scalar as Python's."""
    if hasattr(v, "item") and not isinstance(v, str):
        return v.item()
    return v


def lookup(tree: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted name of a report (``per_core.1.cpu.busy``); None if absent."""
    node: Any = tree
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit():
            node = node[int(part)]
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return None
    return node


def read_json(path: Path) -> Any:
    """A result's JSON file, read within its size limit; a damaged one is one line."""
    data = read_limited(path, "results")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON ({e})", None) from None


def read_table(path: Path) -> Any:
    """A result's Parquet or CSV table; a damaged one is one line."""
    import pandas as pd

    regular_file(path, "results")  # pyarrow would wait on a pipe through Ctrl-C
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read it ({e})", None) from None
    except Exception as e:  # pyarrow's errors for a damaged file are not OSError/ValueError
        raise ConfigError(f"{path}: cannot read it ({type(e).__name__}: {e})", None) from None
