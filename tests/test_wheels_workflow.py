"""The release wheels: the workflow that builds them covers every platform we promise, builds one
abi3 wheel per platform, tests each wheel without Rust, and publishes only on a tag; the script
its test jobs run (``.ci/test_wheel.py``, also ``make test-wheel``) hides Rust and runs the
example. The workflow cannot run here; these tests keep it honest."""

from __future__ import annotations

import importlib.util
import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "wheels.yml").read_text())
JOBS = WORKFLOW["jobs"]

#: The wheels the README promises: (libc or OS, architecture).
PLATFORMS = {
    ("manylinux", "x86_64"),
    ("manylinux", "aarch64"),
    ("musllinux", "x86_64"),
    ("musllinux", "aarch64"),
    ("macos", "x86_64"),
    ("macos", "arm64"),
    ("windows", "x64"),
}


def load_script():
    spec = importlib.util.spec_from_file_location("test_wheel", ROOT / ".ci" / "test_wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def steps_using(job: dict, action: str) -> list[dict]:
    return [s for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


def runs(job: dict) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


def test_the_build_matrix_covers_every_promised_platform():
    entries = JOBS["build"]["strategy"]["matrix"]["include"]
    built = set()
    for e in entries:
        family, arch = e["platform"].split("-")
        built.add((family, arch))
        if family in ("manylinux", "musllinux"):
            assert e["runner"].startswith("ubuntu"), e
            assert e["target"] == arch, e
            # auto: the lowest manylinux the action's container gives (manylinux2014)
            assert e["manylinux"] == ("auto" if family == "manylinux" else "musllinux_1_2"), e
        else:
            assert e["runner"].startswith(family), e
            assert "manylinux" not in e, e
    assert built == PLATFORMS
    assert len(entries) == len(PLATFORMS), "one build, so one wheel, per platform"


def test_each_build_makes_one_release_abi3_wheel_with_the_pinned_maturin():
    job = JOBS["build"]
    (build,) = steps_using(job, "PyO3/maturin-action")
    args = build["with"]["args"].split()
    assert "--release" in args and args[args.index("--out") + 1] == "dist"
    # no --interpreter/-i/--find-interpreter: abi3 gives one wheel for every CPython >= 3.11
    assert not {"-i", "--interpreter", "--find-interpreter"} & set(args)
    assert build["with"]["maturin-version"] == "${{ env.MATURIN_VERSION }}"
    pinned = re.search(r"^maturin==(\S+)$", (ROOT / ".ci/constraints.txt").read_text(), re.M)
    assert WORKFLOW["env"]["MATURIN_VERSION"] == f"v{pinned.group(1)}"
    assert any("cp311-abi3" in r for r in runs(job)), "the build checks the wheel's tags"
    (upload,) = steps_using(job, "actions/upload-artifact")
    assert upload["with"]["name"] == "wheel-${{ matrix.platform }}"


def test_the_extension_is_abi3_from_the_oldest_python_we_support():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    crate = tomllib.loads((ROOT / "crates" / "irqlab-py" / "Cargo.toml").read_text())
    assert "abi3-py311" in crate["dependencies"]["pyo3"]["features"]


def test_every_wheel_is_tested_and_each_test_runs_the_wheel_check():
    job = JOBS["test"]
    assert job["needs"] == "build"
    entries = job["strategy"]["matrix"]["include"]
    assert {tuple(e["platform"].split("-")) for e in entries} == PLATFORMS
    (download,) = steps_using(job, "actions/download-artifact")
    assert download["with"] == {"name": "wheel-${{ matrix.platform }}", "path": "dist"}
    commands = runs(job)
    assert commands, "the test job runs .ci/test_wheel.py"
    for command in commands:
        assert ".ci/test_wheel.py --wheel-dir dist --pytest" in command, command
    # One step on the runner, one in a container: between them every entry runs exactly one.
    conditions = sorted(s["if"] for s in job["steps"] if "run" in s)
    assert conditions == ["${{ !matrix.container }}", "${{ matrix.container }}"]
    for e in entries:
        if "container" in e:
            assert (
                e["docker-platform"]
                == {"x86_64": "linux/amd64", "aarch64": "linux/arm64"}[e["platform"].split("-")[1]]
            ), e


def test_no_test_job_has_rust():
    job = JOBS["test"]
    uses = [s.get("uses", "") for s in job["steps"]]
    assert not [u for u in uses if "rust" in u.lower() or "maturin" in u.lower()], uses
    for command in runs(job):
        assert "cargo" not in command and "rustup" not in command and "maturin" not in command


def test_the_oldest_python_is_tested_wherever_the_runner_lets_us_choose():
    entries = JOBS["test"]["strategy"]["matrix"]["include"]
    chosen = {e["platform"] for e in entries if "container" not in e and e["python"] == "3.11"}
    assert chosen == {"manylinux-x86_64", "macos-x86_64", "macos-arm64", "windows-x64"}
    for e in entries:
        if e.get("container", "").startswith("python:"):
            assert e["container"].startswith(f"python:{e['python']}-"), e


def test_a_tag_and_only_a_tag_publishes_every_artifact_by_trusted_publishing():
    on = WORKFLOW.get("on", WORKFLOW.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["tags"] == ["v*"]
    job = JOBS["release"]
    assert job["if"] == "startsWith(github.ref, 'refs/tags/')"
    assert set(job["needs"]) == {"build", "test", "sdist"}
    assert job["permissions"] == {"id-token": "write"}
    (publish,) = steps_using(job, "pypa/gh-action-pypi-publish")
    assert "with" not in publish, "no password or token: trusted publishing"
    (download,) = steps_using(job, "actions/download-artifact")
    assert download["with"] == {"path": "dist", "merge-multiple": True}
    (sdist,) = steps_using(JOBS["sdist"], "PyO3/maturin-action")
    assert sdist["with"]["command"] == "sdist"
    assert WORKFLOW["permissions"] == {"contents": "read"}


def test_every_action_is_pinned_by_a_version_tag():
    for name, job in JOBS.items():
        for s in job["steps"]:
            if "uses" in s:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+(\.\d+){0,2}", s["uses"]), (name, s)


# --- the script the test jobs and `make test-wheel` run ---------------------------------------


def test_the_script_runs_the_readme_example_and_existing_tests():
    script = load_script()
    assert script.EXAMPLE == ROOT / "examples" / "napi.toml" and script.EXAMPLE.exists()
    assert "irqlab run examples/napi.toml" in (ROOT / "README.md").read_text()
    for test in script.PORTABLE_TESTS:
        assert (ROOT / test).exists(), test
    assert "tests/test_golden.py" not in script.PORTABLE_TESTS, "bit-exact only on x86-64 glibc"


def test_the_script_hides_every_rust_tool_from_the_venv(tmp_path):
    script = load_script()
    rust, plain = tmp_path / "cargo-home" / "bin", tmp_path / "bin"
    rust.mkdir(parents=True)
    plain.mkdir()
    (rust / "cargo").write_text("")
    (plain / "python-tools").write_text("")
    venv_dir = tmp_path / "venv"
    environ = {
        "PATH": os.pathsep.join(map(str, [rust, plain, rust])),
        "CARGO_HOME": "x",
        "RUSTUP_TOOLCHAIN": "stable",
        "PIP_CONSTRAINT": "elsewhere.txt",
        "HOME": "/home/me",
    }
    env, dropped = script.rustless_env(venv_dir, True, environ)
    assert dropped == [str(rust)]
    assert env["PATH"].split(os.pathsep) == [str(script.bin_dir(venv_dir)), str(plain)]
    assert "CARGO_HOME" not in env and "RUSTUP_TOOLCHAIN" not in env and env["HOME"] == "/home/me"
    assert env["PIP_CONSTRAINT"] == str(ROOT / ".ci" / "constraints.txt")
    env, _ = script.rustless_env(venv_dir, False, environ)
    assert "PIP_CONSTRAINT" not in env


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("irqlab-0.1.0-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True),
        ("irqlab-0.1.0-cp311-abi3-win_amd64.whl", True),
        ("irqlab-0.1.0-cp312-cp312-win_amd64.whl", False),
    ],
)
def test_the_script_takes_only_an_abi3_wheel(tmp_path, name, ok):
    script = load_script()
    (tmp_path / name).write_bytes(b"")
    if ok:
        assert script.the_wheel(tmp_path).name == name
    else:
        with pytest.raises(SystemExit, match="not an abi3 wheel"):
            script.the_wheel(tmp_path)


@pytest.mark.parametrize(
    ("files", "missing"),
    [
        (["irqlab/__init__.py", "irqlab/py.typed", "irqlab/_irqlab.pyi"], None),
        (["irqlab/__init__.py", "irqlab/_irqlab.pyi"], "irqlab/py.typed"),
        (["irqlab/__init__.py", "irqlab/py.typed"], "irqlab/_irqlab.pyi"),
    ],
)
def test_the_script_takes_only_a_typed_wheel(tmp_path, files, missing):
    import zipfile

    script = load_script()
    wheel = tmp_path / "irqlab-0.1.0-cp311-abi3-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for f in files:
            z.writestr(f, "")
    if missing is None:
        script.check_typed(wheel)
    else:
        with pytest.raises(SystemExit, match=f"lacks {missing}"):
            script.check_typed(wheel)


def test_make_and_ci_run_the_wheel_test():
    assert re.search(r"^test-wheel:.*## ", (ROOT / "Makefile").read_text(), re.M)
    assert "python3 .ci/test_wheel.py --pytest" in (ROOT / ".ci" / "run").read_text()
