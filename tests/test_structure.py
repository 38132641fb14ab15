"""The Python package's shape holds: every study keeps the one protocol that `irqlab reproduce`
and `irqlab report` ask."""

from __future__ import annotations

import pytest

from irqlab.studies import STUDIES, Study, study


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
