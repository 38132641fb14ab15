#!/usr/bin/env python3
"""The wheel a user of a release gets, tested as that user: installed into a fresh virtual
environment whose PATH has no ``cargo`` or ``rustc``, from wheels only, then the README's example
and a portable subset of the tests run against it.

    python3 .ci/test_wheel.py [--pytest]                      # build the wheel here, then test it
    python .ci/test_wheel.py --wheel-dir dist --pytest        # test a wheel built elsewhere (CI)

Without ``--wheel-dir`` it builds the wheel with maturin (pinned in ``.ci/constraints.txt``,
installed into its own environment under ``build/test-wheel/``) into the cargo target directory
``target/``, so a rebuild is incremental. That local wheel is tagged with the manylinux version
this machine's glibc allows (maturin checks the symbols); the release wheels are built by
``.github/workflows/wheels.yml`` in the manylinux2014 and musllinux_1_2 containers, and that
workflow's test jobs run this script on each of them with ``--wheel-dir``.

Dependencies come with the exact CI versions of ``.ci/constraints.txt`` and ``--only-binary
:all:``: nothing may be compiled, by Rust or by C. ``--no-constraints`` lets pip choose (for a
platform where a CI version has no wheel) and ``--system-site-packages`` lets the venv see the
distribution's packages (musllinux aarch64 takes Alpine's matplotlib: matplotlib publishes no
wheel for it).

The subset of tests (``PORTABLE_TESTS``) leaves out the golden reports and the printed example
table: those hold bit for bit only where libm agrees with the x86-64 glibc that recorded them
(docs/design.md, "Determinism and random streams").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "test-wheel"
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
EXAMPLE = ROOT / "examples" / "napi.toml"
RUST_TOOLS = ("cargo", "rustc", "rustup")
# Variables that could point a build at a Rust toolchain.
RUST_VARIABLES = ("CARGO", "CARGO_HOME", "RUSTC", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN")
# Tests that do not depend on the platform's libm, nor on the test extras beyond pytest and
# hypothesis (conftest.py imports it).
PORTABLE_TESTS = (
    "tests/test_errors.py",
    "tests/test_cli.py",
    "tests/test_determinism.py",
    "tests/test_schemes.py",
    "tests/test_policy_python.py",
)
TEST_REQUIREMENTS = ("pytest", "hypothesis")


def step(title: str) -> None:
    print(f"== wheel: {title}", flush=True)


def run(
    cmd: list[str | Path],
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    capture: bool = False,
    echo: bool = True,
) -> str:
    """Runs ``cmd``; its output is returned when ``capture`` (and shown if ``echo``)."""
    shown = (str(c).split("\n")[0] + (" …" if "\n" in str(c) else "") for c in cmd)
    print("$", " ".join(shown), flush=True)
    done = subprocess.run(
        [str(c) for c in cmd],
        env=env,
        cwd=cwd,
        check=False,
        text=True,
        encoding="utf-8",
        stdout=subprocess.PIPE if capture else None,
    )
    if capture and echo and done.stdout:
        print(done.stdout, end="" if done.stdout.endswith("\n") else "\n", flush=True)
    if done.returncode != 0:
        sys.exit(f"test-wheel: exit status {done.returncode} from {Path(str(cmd[0])).name}")
    return done.stdout or ""


def bin_dir(env_dir: Path) -> Path:
    return env_dir / ("Scripts" if os.name == "nt" else "bin")


def executable(env_dir: Path, name: str) -> Path:
    return bin_dir(env_dir) / (f"{name}.exe" if os.name == "nt" else name)


def has_rust(directory: str) -> bool:
    suffixes = ("", ".exe") if os.name == "nt" else ("",)
    return any((Path(directory) / f"{t}{s}").is_file() for t in RUST_TOOLS for s in suffixes)


def build_wheel(out: Path) -> Path:
    """The Linux (or this platform's) wheel, built with the pinned maturin into ``out``."""
    step("build (maturin, release profile, into target/)")
    if shutil.which("cargo") is None:
        sys.exit("test-wheel: building the wheel needs cargo (https://rustup.rs)")
    tools = WORK / "maturin-env"
    if not executable(tools, "python").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(tools)
    env = {**os.environ, "PIP_CONSTRAINT": str(CONSTRAINTS)}
    pip = [executable(tools, "python"), "-m", "pip", "install", "--quiet"]
    run([*pip, "--disable-pip-version-check", "--only-binary", ":all:", "maturin"], env=env)
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    run(
        [
            executable(tools, "maturin"),
            "build",
            "--release",
            "--locked",
            "--out",
            out,
            "--interpreter",
            sys.executable,
        ],
        cwd=ROOT,
    )
    print(f"built in {time.monotonic() - started:.0f} s", flush=True)
    return the_wheel(out)


def the_wheel(directory: Path) -> Path:
    """The one irqlab wheel in ``directory``, checked to be abi3 for CPython ≥ 3.11."""
    wheels = sorted(directory.glob("irqlab-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"test-wheel: expected one irqlab wheel in {directory}, found {len(wheels)}")
    wheel = wheels[0]
    _, _, python, abi, platform = wheel.stem.split("-")
    if (python, abi) != ("cp311", "abi3"):
        sys.exit(f"test-wheel: {wheel.name} is not an abi3 wheel for CPython ≥ 3.11")
    print(f"wheel: {wheel.name} ({platform})", flush=True)
    return wheel


#: What makes the installed package typed for a user's type checker: the PEP 561 marker, and the
#: compiled core's signatures.
TYPED_FILES = ("irqlab/py.typed", "irqlab/_irqlab.pyi")


def check_typed(wheel: Path) -> None:
    """The wheel ships :data:`TYPED_FILES`."""
    with zipfile.ZipFile(wheel) as z:
        missing = [f for f in TYPED_FILES if f not in z.namelist()]
    if missing:
        sys.exit(f"test-wheel: {wheel.name} lacks {', '.join(missing)}")
    print(f"typed: {', '.join(TYPED_FILES)}", flush=True)


def fresh_venv(env_dir: Path, system_site_packages: bool) -> None:
    step(f"fresh venv ({'with' if system_site_packages else 'without'} system site-packages)")
    builder = venv.EnvBuilder(with_pip=True, clear=True, system_site_packages=system_site_packages)
    builder.create(env_dir)


def rustless_env(
    env_dir: Path, constraints: bool, environ: dict[str, str]
) -> tuple[dict[str, str], list[str]]:
    """The environment to run the venv ``env_dir`` in: its bin first, then ``environ``'s PATH
    without the directories that hold a Rust tool (also returned), and no Rust variables."""
    path = environ.get("PATH", "").split(os.pathsep)
    dropped = list(dict.fromkeys(d for d in path if d and has_rust(d)))
    kept = [d for d in path if d and d not in dropped]
    env = {k: v for k, v in environ.items() if k not in RUST_VARIABLES and k != "PYTHONHOME"}
    env.update(PATH=os.pathsep.join([str(bin_dir(env_dir)), *kept]), VIRTUAL_ENV=str(env_dir))
    # Output is read through a pipe, which on Windows is otherwise in the ANSI code page.
    env["PYTHONIOENCODING"] = "utf-8"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if constraints:
        env["PIP_CONSTRAINT"] = str(CONSTRAINTS)
    else:
        env.pop("PIP_CONSTRAINT", None)
    return env, dropped


def check_no_rust(python: Path, env: dict[str, str], cwd: Path) -> None:
    step("no Rust on the PATH")
    code = (
        "import shutil, sys\n"
        f"found = {{t: shutil.which(t) for t in {RUST_TOOLS!r}}}\n"
        "print(found)\n"
        "sys.exit(any(found.values()))\n"
    )
    run([python, "-c", code], env=env, cwd=cwd, capture=True)


def install(python: Path, wheel: Path, env: dict[str, str], cwd: Path, pytest: bool) -> None:
    step("install the wheel and its dependencies, from wheels only")
    pip = [python, "-m", "pip", "install", "--quiet", "--only-binary", ":all:"]
    run([*pip, wheel, *(TEST_REQUIREMENTS if pytest else ())], env=env, cwd=cwd)
    run([python, "-m", "pip", "list"], env=env, cwd=cwd)


def check_import(python: Path, env_dir: Path, env: dict[str, str], cwd: Path) -> None:
    step("import irqlab from the venv")
    code = (
        "import sys, irqlab, irqlab._irqlab as ext\n"
        "print(sys.version.split()[0], irqlab.__version__, ext.__file__)\n"
        "from pathlib import Path\n"
        f"assert Path(ext.__file__).resolve().is_relative_to(Path({str(env_dir)!r}).resolve())\n"
        "r = irqlab.run({'scheme': 'irq', 'traffic': {'rate_pps': 50_000}}, seed=3)\n"
        "assert r['packets']['offered'] > 0 and r['throughput_pps'] > 0, r['packets']\n"
        "print('irqlab.run: offered', r['packets']['offered'], 'packets')\n"
    )
    run([python, "-c", code], env=env, cwd=cwd, capture=True)


def check_example(irqlab: Path, env: dict[str, str], cwd: Path) -> None:
    step(f"irqlab run {EXAMPLE.relative_to(ROOT).as_posix()}")
    run([irqlab, "--version"], env=env, cwd=cwd)
    table = run([irqlab, "run", EXAMPLE], env=env, cwd=cwd, capture=True)
    assert "irqlab run — scheme napi, seed 1" in table, "the example's table"
    out = run(
        [irqlab, "run", EXAMPLE, "--format", "json"], env=env, cwd=cwd, capture=True, echo=False
    )
    report = json.loads(out)
    packets = report["packets"]
    assert packets["offered"] > 0 and packets["delivered"] > 0, packets
    assert report["throughput_pps"] > 0, report["throughput_pps"]
    print(f"report: offered {packets['offered']} delivered {packets['delivered']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel-dir", type=Path, help="test the wheel in this directory")
    parser.add_argument("--pytest", action="store_true", help="also run PORTABLE_TESTS")
    parser.add_argument("--no-constraints", action="store_true", help="let pip choose versions")
    parser.add_argument("--system-site-packages", action="store_true")
    parser.add_argument(
        "--build-only", type=Path, metavar="DIR", help="build the wheel into DIR; test nothing"
    )
    args = parser.parse_args()
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8")  # the example's table, on any console

    if args.build_only:
        wheel = build_wheel(args.build_only.resolve())
        check_typed(wheel)
        print(f"wheel: {wheel} (pip install it; no Rust needed)", flush=True)
        return
    started = time.monotonic()
    wheel = the_wheel(args.wheel_dir.resolve()) if args.wheel_dir else build_wheel(WORK / "dist")
    check_typed(wheel)
    env_dir = WORK / "venv"
    fresh_venv(env_dir, args.system_site_packages)
    env, dropped = rustless_env(env_dir, not args.no_constraints, dict(os.environ))
    for d in dropped:
        print(f"PATH without {d} (it holds a Rust tool)", flush=True)
    python = executable(env_dir, "python")
    # Away from the source tree, so that only the installed package can be imported.
    cwd = WORK
    check_no_rust(python, env, cwd)
    install(python, wheel, env, cwd, args.pytest)
    check_import(python, env_dir, env, cwd)
    check_example(executable(env_dir, "irqlab"), env, cwd)
    if args.pytest:
        step("a portable subset of the tests, against the installed wheel")
        run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PORTABLE_TESTS],
            env=env,
            cwd=ROOT,
        )
    print(f"test-wheel: {wheel.name} passed in {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
