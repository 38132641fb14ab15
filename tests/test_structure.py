"""The Python package's shape holds: no module is too long to read, the modules that moved
into rooms are still found under their old names, and every study keeps the one protocol that
`irqlab reproduce` and `irqlab report` ask."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import irqlab
from irqlab.studies import STUDIES, Study, study

PACKAGE = Path(irqlab.__file__).parent
#: The most lines a module of the package may have: past it, split it by concern.
MAX_MODULE_LINES = 800


def test_no_module_of_the_package_is_over_800_lines():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the walk found the package
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in modules
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


#: Where a module moved to, and the names its old import path still gives (the documented ones,
#: and those a scenario or a user's code names: driver.policy = "irqlab.policy:Linear").
MOVED = {
    "irqlab.probe": (
        "irqlab.ops.probe",
        ["probe", "Probe", "Host", "PROBED", "NOT_PROBED", "HOST_SETTINGS", "MAX_CPUS",
         "parse_cpulist", "parse_interrupts", "napi_get", "summary", "write"],
    ),
    "irqlab.tuning": (
        "irqlab.ops.tune",
        ["tune", "Slo", "TuneResult", "commands", "label", "parse_knob", "parse_range",
         "knob_candidates", "summary_text"],
    ),
    "irqlab.policy": (
        "irqlab.ops.policies",
        ["Coalesce", "Itr", "Linear", "Policy", "Sample", "factory", "load", "resolve_policy"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("old", list(MOVED))
def test_a_moved_module_keeps_its_old_import_path(old):
    new, names = MOVED[old]
    was, now = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(was, name) is getattr(now, name), (old, name)
    assert set(was.__all__) >= set(names)


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_study_provides_the_protocol_under_its_own_name(name):
    s = study(name)
    assert isinstance(s, Study)
    assert name == s.NAME
    assert s.TABLES, "a study has at least one headline table"
    assert all(callable(markdown) for markdown in s.TABLES.values())


# --- one typed boundary to the Rust core ------------------------------------------------------
# (imports inside the functions: this part stands alone)


def _package():
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "python" / "irqlab"


def _imports_the_compiled_core(module) -> bool:
    """Whether ``module`` imports ``irqlab._irqlab`` in any spelling (``import irqlab._irqlab``,
    ``from irqlab import _irqlab``, ``from irqlab._irqlab import …``, relative forms); read
    with ast, so that a comment or a string naming it does not count."""
    import ast

    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"), str(module))):
        if isinstance(node, ast.Import):
            if any(a.name.split(".")[-1] == "_irqlab" for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if parts[-1] == "_irqlab" or any(a.name == "_irqlab" for a in node.names):
                return True
    return False


def test_exactly_one_module_imports_the_compiled_core():
    package = _package()
    importers = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if _imports_the_compiled_core(p)
    )
    assert importers == ["core.py"], "reach the core through irqlab.core, its typed boundary"


def test_the_compiled_core_is_typed_for_users():
    import ast

    from irqlab import _irqlab

    package = _package()
    assert (package / "py.typed").is_file()  # PEP 561: the package's annotations are for users
    stub = ast.parse((package / "_irqlab.pyi").read_text(encoding="utf-8"))
    (listed,) = [
        node.value
        for node in stub.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__all__"]
    ]
    # the stub states every name the extension exports (stubtest checks their signatures)
    assert sorted(ast.literal_eval(listed)) == sorted(_irqlab.__all__)
