"""What pip is told: ranges for users, exact versions for CI, and lower bounds that are the ones
`make test-lower-bounds` tests."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(path: Path) -> dict[str, str]:
    """``name == version`` lines of a constraints file."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            r = Requirement(line)
            (spec,) = r.specifier
            assert spec.operator == "==", line
            out[canonicalize_name(r.name)] = spec.version
    return out


def requirements() -> list[Requirement]:
    extras = PROJECT["optional-dependencies"].values()
    return [Requirement(x) for x in PROJECT["dependencies"] + [x for e in extras for x in e]]


def test_dependencies_are_ranges_not_pins():
    # an exact pin would force a downgrade of the user's own numpy or pandas
    for r in requirements():
        assert r.specifier, f"{r}: give a lower bound"
        assert all(s.operator not in ("==", "===") for s in r.specifier), f"{r}: a pin"


def test_runtime_lower_bounds_are_the_tested_ones():
    lower = pins(ROOT / ".ci" / "lower-bounds.txt")
    for r in map(Requirement, PROJECT["dependencies"]):
        (floor,) = [s.version for s in r.specifier if s.operator == ">="]
        assert Version(lower[canonicalize_name(r.name)]) == Version(floor), r
        assert r.specifier.contains(floor)


def test_ci_versions_lie_in_the_ranges_and_cover_every_dependency():
    ci = pins(ROOT / ".ci" / "constraints.txt")
    for r in requirements():
        name = canonicalize_name(r.name)
        assert name in ci, f"{name} has no CI version"
        assert r.specifier.contains(ci[name]), f"CI's {name}=={ci[name]} is outside {r}"


def test_ci_installs_with_the_constraints():
    assert 'PIP_CONSTRAINT="$PWD/.ci/constraints.txt"' in (ROOT / ".ci" / "run").read_text()
