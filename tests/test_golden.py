"""Golden reports: fixed scenarios and seeds whose reports must not move.

``tests/golden/scenarios.toml`` lists the scenarios; ``tests/golden/reports/<name>.json`` holds
each report as recorded. Every value recorded there must come back exactly (floats compared as
their exact binary value). Reports may gain new fields; a recorded value that moves is a change
of the model, and the commit that moves it says why and re-records with::

    python tests/test_golden.py --update [NAME ...]
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import irqlab

HERE = Path(__file__).resolve().parent / "golden"
SCENARIOS: dict[str, dict[str, Any]] = tomllib.loads((HERE / "scenarios.toml").read_text())


def report_path(name: str) -> Path:
    return HERE / "reports" / f"{name}.json"


def differences(recorded: Any, now: Any, path: str = "") -> list[str]:
    """Where ``now`` does not reproduce ``recorded`` (fields only in ``now`` are fine)."""
    if isinstance(recorded, dict):
        if not isinstance(now, dict):
            return [f"{path}: was an object, now {now!r}"]
        out: list[str] = []
        for k, v in recorded.items():
            if k not in now:
                out.append(f"{path}.{k}: missing")
            else:
                out += differences(v, now[k], f"{path}.{k}")
        return out
    if isinstance(recorded, list):
        if not isinstance(now, list) or len(now) != len(recorded):
            return [f"{path}: was {recorded!r}, now {now!r}"]
        out = []
        for i, (a, b) in enumerate(zip(recorded, now, strict=True)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    if type(recorded) is not type(now) or recorded != now:
        return [f"{path}: was {recorded!r}, now {now!r}"]
    return []


def test_every_scenario_has_a_recorded_report():
    recorded = {p.stem for p in (HERE / "reports").glob("*.json")}
    assert recorded == set(SCENARIOS)
    assert len(SCENARIOS) >= 20


def test_the_differences_helper_sees_a_moved_value():
    assert differences({"a": {"b": 1.0}}, {"a": {"b": 1.0, "c": 2}}) == []
    assert differences({"a": {"b": 1.0}}, {"a": {"b": 1.0000000000000002}}) != []
    assert differences({"a": [1, 2]}, {"a": [1]}) != []
    assert differences({"a": 1}, {"a": 1.0}) != [], "an int that became a float moved"


# hz250_budget_usecs sets a time limit between ticks on purpose: the model runs it as the
# whole jiffies it rounds up to, as the kernel does, and says so (test_ineffective.py)
@pytest.mark.filterwarnings(
    r"ignore:kernel\.netdev_budget_usecs = 9000. acts as 12000 us:irqlab.ConfigWarning"
)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_report_is_reproduced_exactly(name):
    recorded = json.loads(report_path(name).read_text())
    now = json.loads(json.dumps(irqlab.run(SCENARIOS[name])))
    diff = differences(recorded, now)
    assert not diff, f"{name}: {len(diff)} recorded values moved:\n" + "\n".join(diff[:40])


def update(names: list[str]) -> None:
    (HERE / "reports").mkdir(exist_ok=True)
    for name in names or sorted(SCENARIOS):
        report = irqlab.run(SCENARIOS[name])
        report_path(name).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        print(f"recorded {name}")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"]:
        sys.exit(__doc__)
    update(sys.argv[2:])
