"""Hostile inputs: files that are not UTF-8 TOML, outputs that cannot be written, Python
arguments of the wrong type, settings a scheme ignores or that would turn it into another, and
random documents and ``--set`` strings. Whatever arrives, the answer is a valid scenario or
one line naming the key or argument: never a traceback, never a panic."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irqlab
from irqlab.cli import main
from irqlab.experiments import parse_sweep
from irqlab.ops.policies import resolve_policy
from irqlab.scenario import schema, tables

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "napi.toml"
SHORT = {"run.duration_ms": 2, "run.warmup_ms": 0}
SHORT_SETS = ["--set", "run.duration_ms=2", "--set", "run.warmup_ms=0"]


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


#: The ``irqlab`` command as installed beside this Python (else the module).
IRQLAB = Path(sys.executable).with_name("irqlab")


def irqlab_cmd(*args, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The ``irqlab`` command run as a user runs it: a process of its own, its exit status."""
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
    return subprocess.run(
        [*command, *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def one_line_failure(p: subprocess.CompletedProcess[str], *phrases: str) -> str:
    """The process failed as a user error should: status 2, nothing on stdout, one line on
    stderr, no traceback."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("irqlab: error: "), p.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def one_line_error(r, *phrases: str) -> str:
    """The command failed as a user error should: exit 2, one line, no traceback."""
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("irqlab: error: "), lines[0]
    for p in phrases:
        assert p in lines[0], lines[0]
    return lines[0]


# ----- 1. files that are not UTF-8 TOML -------------------------------------------------------


def _unreadable(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path.write_text('scheme = "irq"\n')
    path.chmod(0)
    try:
        path.read_bytes()
    except PermissionError:
        return
    # root reads anything: the file system's answer to everyone else, simulated
    real = Path.open

    def refuse(self: Path, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)


BAD_FILES = {
    "random bytes": (lambda p: p.write_bytes(bytes(range(128, 256)) * 4), "not UTF-8 text"),
    "UTF-16 with a byte-order mark": (
        lambda p: p.write_text('scheme = "irq"\n', encoding="utf-16"),
        "is UTF-16 text; a TOML file must be UTF-8",
    ),
    "UTF-16 without one": (
        lambda p: p.write_bytes('scheme = "irq"\n'.encode("utf-16-le")),
        "contains NUL bytes",
    ),
    "a directory": (lambda p: p.mkdir(), "is a directory, not a TOML file"),
    "a number of 5000 digits": (
        lambda p: p.write_text("[run]\nseed = " + "9" * 5000 + "\n"),
        "a number with more than 4300 digits",
    ),
    "arrays nested 100000 deep": (
        lambda p: p.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n"),
        "nested too deeply",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("command", ["run", "check", "sweep"])
def test_a_file_that_is_not_utf8_toml_is_one_line(tmp_path, command, kind):
    make, phrase = BAD_FILES[kind]
    f = tmp_path / "scenario.toml"
    make(f)
    args = [command, f] + (["--out", tmp_path / "o"] if command == "sweep" else [])
    one_line_error(cli(*args), str(f), phrase)


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_the_python_api_reads_files_the_same_way(tmp_path, kind):
    make, phrase = BAD_FILES[kind]
    f = tmp_path / "scenario.toml"
    make(f)
    for call in (irqlab.run, irqlab.load_scenario, irqlab.resolve):
        with pytest.raises(irqlab.ConfigError) as e:
            call(f)
        assert str(e.value).startswith(f"{f}: ") and phrase in str(e.value)


def test_an_unreadable_file_is_one_line(tmp_path, monkeypatch):
    f = tmp_path / "secret.toml"
    _unreadable(f, monkeypatch)
    for command in ("run", "check"):
        one_line_error(cli(command, f), str(f), "cannot read (Permission denied)")
    with pytest.raises(irqlab.ConfigError, match="cannot read"):
        irqlab.run(f)


def test_an_empty_file_and_a_utf8_byte_order_mark_are_valid(tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_bytes(b"")
    r = cli("check", empty)
    assert r.exit_code == 0 and 'scheme = "napi"' in r.output
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b'\xef\xbb\xbfscheme = "irq"\n')
    r = cli("check", bom)
    assert r.exit_code == 0 and 'scheme = "irq"' in r.output
    assert irqlab.resolve(bom)["scheme"] == "irq"


def test_a_real_process_prints_one_line_for_a_utf16_file(tmp_path):
    f = tmp_path / "windows.toml"
    f.write_text('scheme = "irq"\n', encoding="utf-16")
    line = one_line_failure(irqlab_cmd("run", f))
    assert line == (
        f"irqlab: error: {f}: is UTF-16 text; a TOML file must be UTF-8 "
        "(convert it: iconv -f UTF-16 -t UTF-8)"
    )


@pytest.mark.parametrize(
    ("command", "kind", "phrase"),
    [
        ("check", "random bytes", "not UTF-8 text (byte 0x80 at offset 0)"),
        ("sweep", "a directory", "is a directory, not a TOML file"),
        ("run", "a missing file", "no such file"),
    ],
)
def test_the_command_reads_bad_files_in_one_line(tmp_path, command, kind, phrase):
    f = tmp_path / "input.toml"
    if kind in BAD_FILES:
        BAD_FILES[kind][0](f)
    one_line_failure(irqlab_cmd(command, f), f"irqlab: error: {f}: {phrase}")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system (Windows)")
def test_a_device_that_never_ends_is_refused_at_16_mib():
    phrase = "/dev/zero: longer than 16 MiB, far too long for a scenario or sweep file"
    one_line_error(cli("check", "/dev/zero"), phrase)
    with pytest.raises(irqlab.ConfigError, match=phrase):
        irqlab.run("/dev/zero")


@pytest.mark.skipif(
    not hasattr(os, "mkfifo"), reason="no named pipes (os.mkfifo) on this system (Windows)"
)
def test_a_named_pipe_is_read_as_it_comes(tmp_path):
    """`irqlab check <(make-scenario)`: a pipe is a scenario once its writer has written."""
    fifo = tmp_path / "scenario.fifo"
    os.mkfifo(fifo)
    command = [str(IRQLAB)] if IRQLAB.exists() else [sys.executable, "-m", "irqlab.cli"]
    with subprocess.Popen(
        [*command, "check", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        with fifo.open("w") as writer:  # blocks until the command opens the pipe
            writer.write('scheme = "irq"\n')
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert 'scheme = "irq"' in out.splitlines()


def test_a_sweep_file_naming_a_bad_base_file_is_one_line(tmp_path):
    (tmp_path / "base.toml").write_bytes(b"\xff\xfe\x00")
    f = tmp_path / "sweep.toml"
    f.write_text('[sweep]\nbase = "base.toml"\n')
    one_line_error(cli("sweep", f, "--out", tmp_path / "o"), "base.toml", "UTF-16")


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("[nicc]\n", "unknown key 'nicc'"),
        ("[[bogus]]\n", "unknown key 'bogus'"),
        ("[traffic]\nrate_pps = {}\n", "traffic.rate_pps: expected a value"),
        ('"a\\nb" = 1\n', "unknown key 'a\\nb'"),  # a newline in a key stays one line
    ],
)
def test_tables_the_schema_does_not_know_are_not_silently_dropped(tmp_path, text, phrase):
    f = tmp_path / "s.toml"
    f.write_text(text)
    one_line_error(cli("check", f), phrase)


def test_an_empty_array_of_apps_means_no_apps(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text("app = []\n[[traffic.classes]]\n")
    assert "app.0.core" not in irqlab.resolve(f)
    with_app = {"app": [{"core": 0}]}
    assert "app.0.core" in irqlab.resolve(with_app)
    assert "app.0.core" not in irqlab.resolve(with_app, ["app=[]"])
    r = cli("check", EXAMPLE, "--set", "app.0.core=0", "--set", "app=[]")
    assert r.exit_code == 0 and "app.0" not in r.output


# ----- 2. outputs that cannot be written ------------------------------------------------------


def test_run_out_in_a_missing_directory_is_refused_before_the_run(tmp_path):
    out = tmp_path / "nope" / "r.json"
    line = one_line_failure(irqlab_cmd("run", EXAMPLE, *SHORT_SETS, "--out", out), "--out")
    assert line == (
        f"irqlab: error: --out {out}: the directory {out.parent} does not exist "
        f"(a file's directory is not created: mkdir -p {out.parent})"
    )
    assert not out.parent.exists()


def test_run_out_that_is_a_directory(tmp_path):
    one_line_error(
        cli("run", EXAMPLE, *SHORT_SETS, "--out", tmp_path),
        f"--out {tmp_path}: is a directory; give a file name",
    )


@pytest.mark.skipif(
    not Path("/proc/self").is_dir(),
    reason="no /proc file system on this system (only Linux has one)",
)
def test_run_out_on_a_special_file_system():
    one_line_error(
        cli("run", EXAMPLE, *SHORT_SETS, "--out", "/proc/irqlab-report.json"),
        "--out /proc/irqlab-report.json: cannot create it there (",
    )


def test_run_out_in_a_read_only_directory(read_only_folder):
    one_line_error(
        cli("run", EXAMPLE, *SHORT_SETS, "--out", read_only_folder / "r.json"),
        "cannot create it there (Permission denied)",
    )


@pytest.mark.skipif(
    not Path("/dev/full").exists(),
    reason="no /dev/full on this system (Linux and FreeBSD have it; macOS and Windows do not)",
)
def test_run_out_on_a_full_device_fails_in_one_line():
    one_line_error(
        cli("run", EXAMPLE, *SHORT_SETS, "--format", "json", "--out", "/dev/full"),
        "--out /dev/full: cannot write (No space left on device)",
    )


def test_run_out_is_written_and_replaced_and_nothing_is_left_by_a_failed_run(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    r = cli("run", EXAMPLE, *SHORT_SETS, "--format", "json", "--out", out)
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["scheme"] == "napi"
    fresh = tmp_path / "fresh.json"
    one_line_error(cli("run", EXAMPLE, "--set", "scheme=nappi", "--out", fresh), "nappi")
    assert not fresh.exists()


def test_run_help_says_the_directory_must_exist():
    assert "directory must exist" in cli("run", "--help").output


# ----- 9. Python argument types --------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "phrase"),
    [
        (5, "got int 5"),
        (b"examples/napi.toml", "got bytes"),
        ([("scheme", "irq")], "got list"),
        (3.5, "got float"),
    ],
)
def test_a_scenario_of_the_wrong_type_names_the_argument(scenario, phrase):
    for call in (irqlab.run, irqlab.load_scenario, irqlab.resolve):
        with pytest.raises(irqlab.ConfigError, match=phrase) as e:
            call(scenario)
        assert e.value.key == "scenario"
        assert str(e.value).startswith(
            "scenario: expected a TOML file's path (str or pathlib.Path) or a dict of keys"
        )


def test_toml_text_given_as_a_path_says_what_a_scenario_is():
    with pytest.raises(irqlab.ConfigError, match="not TOML text"):
        irqlab.run('scheme = "irq"')


def test_overrides_as_key_value_strings_mean_what_they_say():
    as_dict = irqlab.resolve(EXAMPLE, {"scheme": "irq", "traffic.rate_pps": 2e5, **SHORT})
    strings = ["scheme=irq", "traffic.rate_pps=2e5", "run.duration_ms=2", "run.warmup_ms=0"]
    assert irqlab.resolve(EXAMPLE, strings) == as_dict
    assert irqlab.resolve(EXAMPLE, [(k, v) for k, v in as_dict.items()]) == as_dict
    assert irqlab.resolve(EXAMPLE, "scheme=irq")["scheme"] == "irq"
    assert irqlab.run(SHORT, ["scheme=irq"])["scheme"] == "irq"


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ([5], 'overrides[0] = 5: expected a "key=value" string or a (key, value) pair'),
        ([("a", 1, 2)], "overrides[0]"),
        (["scheme"], 'overrides[0] "scheme": expected dotted.key=value'),
        (5, "overrides: expected a dict {key: value}"),
        ({5: 1}, "overrides: key 5 is not a string"),
        ([(None, 1)], "overrides: key None is not a string"),
    ],
)
def test_overrides_of_the_wrong_type_name_the_argument(overrides, phrase):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run(SHORT, overrides)
    assert phrase in str(e.value)


@pytest.mark.parametrize("seed", ["7", -1, 2**64, True, 1.5, [1], np.float64(3.0)])
def test_a_seed_of_the_wrong_type_or_range_names_the_argument(seed):
    with pytest.raises(irqlab.ConfigError, match=r"^seed = .*: must be an integer in 0 … ") as e:
        irqlab.run(SHORT, seed=seed)
    assert e.value.key == "seed"


def test_numpy_scalars_and_arrays_are_numbers_and_lists():
    plain = {
        **SHORT,
        "host.cores": 2,
        "nic.queues": 2,
        "nic.irq_affinity": [0, 1],
        "nic.ring_descriptors": 64,
        "traffic.rate_pps": 50_000.0,
        "host.forward": True,
        "traffic.sizes": "imix",
    }
    with_numpy = {
        **SHORT,
        "host.cores": np.int64(2),
        "nic.queues": np.int32(2),
        "nic.irq_affinity": np.array([0, 1]),
        "nic.ring_descriptors": np.uint16(64),
        "traffic.rate_pps": np.float32(50_000.0),
        "host.forward": np.bool_(True),
        "traffic.sizes": np.str_("imix"),
    }
    assert irqlab.resolve(with_numpy) == irqlab.resolve(plain)
    assert irqlab.run(with_numpy, seed=np.int64(3)) == irqlab.run(plain, seed=3)
    listed = {**plain, "nic.irq_affinity": [np.int64(0), np.uint8(1)]}
    assert irqlab.resolve(listed) == irqlab.resolve(plain)
    # what a sweep's axis holds is checked the same way
    runs = irqlab.sweep(
        base={**SHORT, "host.cores": np.int64(1)},
        axes={"nic.ring_descriptors": [np.int64(32), np.uint32(64)]},
        replications=1,
        executor="inline",
    )
    assert sorted(runs["nic.ring_descriptors"]) == [32, 64]


@pytest.mark.parametrize(
    ("argument", "given", "phrase"),
    [
        ("spec", 5, "spec: expected a sweep file's path (str or pathlib.Path)"),
        ("base", 5, "base: expected a scenario file's path (str or pathlib.Path) or a dict"),
        ("axes", ["scheme=irq"], "axes: expected a dict {key: [values] or {from, to"),
        ("out", 5, "out: expected a directory's path (str or pathlib.Path), got int"),
        ("replications", "2", "replications = '2': must be an integer in [1, 65536]"),
    ],
)
def test_sweep_arguments_of_the_wrong_type_name_the_argument(argument, given, phrase):
    kwargs = {"base": SHORT, "replications": 1, argument: given}
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.sweep(executor="inline", **kwargs)
    assert str(e.value).startswith(phrase), str(e.value)
    assert e.value.key == argument


def test_load_results_names_its_argument():
    with pytest.raises(irqlab.ConfigError, match=r"^path: expected a sweep's directory") as e:
        irqlab.load_results(5)
    assert e.value.key == "path"


def test_sweep_takes_numpy_and_paths(tmp_path):
    base = tmp_path / "base.toml"
    base.write_text("[run]\nduration_ms = 2\nwarmup_ms = 0\n")
    runs = irqlab.sweep(
        base=base,
        axes={"traffic.rate_pps": np.array([1e4, 2e4])},
        replications=np.int64(1),
        seed=np.uint64(3),
        warmup=np.float64(0.0),
        out=tmp_path / "sweep",
        executor="inline",
    )
    assert sorted(runs["traffic.rate_pps"]) == [1e4, 2e4]
    again = irqlab.load_results(tmp_path / "sweep", "runs")
    assert sorted(again["traffic.rate_pps"]) == [1e4, 2e4]


def test_paths_are_strings():
    assert irqlab.resolve(Path(EXAMPLE)) == irqlab.resolve(str(EXAMPLE))
    from pathlib import PurePosixPath

    assert irqlab.resolve({"traffic.sizes": PurePosixPath("imix")})["traffic.sizes"] == "imix"


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        (10**400, "traffic.rate_pps = an integer of 401 digits: must be a number in"),
        ({1, 2}, "traffic.rate_pps = {1, 2}: expected a number"),
        (object, "expected a number"),
        (dt.date(2020, 1, 1), "traffic.rate_pps = 2020-01-01: expected a number"),
    ],
)
def test_values_of_no_scenario_type_are_config_errors(value, phrase):
    with pytest.raises(irqlab.ConfigError, match=phrase.replace("{", r"\{").replace("}", r"\}")):
        irqlab.run({"traffic.rate_pps": value})


# ----- 10. settings a scheme ignores, or that make it another ---------------------------------


@pytest.mark.parametrize(
    ("sets", "key", "phrase"),
    [
        (
            ["scheme=coalesce-count", "nic.rx_frames=0"],
            "nic.rx_frames",
            'nic.rx_frames = 0: scheme "coalesce-count" interrupts once nic.rx_frames packets '
            'wait, so it needs at least 1 (1 is scheme "irq"); 0 turns count coalescing off',
        ),
        (
            ["scheme=coalesce-time", "driver.moderation=dim"],
            "driver.moderation",
            'replacing the coalescing of scheme "coalesce-time"',
        ),
        (
            ["scheme=hybrid", "traffic.classes.0.share=0.5", "traffic.classes.1.share=0.5"],
            "traffic.classes",
            "would never be processed",
        ),
        (
            ["scheme=ideal", "kernel.napi_defer_hard_irqs=2", "kernel.gro_flush_timeout_ns=2e4"],
            "kernel.napi_defer_hard_irqs",
            'scheme "ideal" has no interrupt cost',
        ),
    ],
)
def test_a_setting_that_turns_the_scheme_into_another_is_an_error(sets, key, phrase):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run(SHORT, sets)
    assert e.value.key == key and phrase in str(e.value)
    args = [a for s in sets for a in ("--set", s)]
    one_line_error(cli("run", EXAMPLE, *SHORT_SETS, *args), phrase)


def test_the_command_refuses_count_coalescing_that_never_counts():
    line = one_line_failure(
        irqlab_cmd(
            "run",
            EXAMPLE,
            *SHORT_SETS,
            "--set",
            "scheme=coalesce-count",
            "--set",
            "nic.rx_frames=0",
        )
    )
    assert line.startswith('irqlab: error: nic.rx_frames = 0: scheme "coalesce-count" ')


def test_the_ends_of_salahs_coalescing_curves_stay_valid():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irqlab.resolve({"scheme": "coalesce-count", "nic.rx_frames": 1})
        irqlab.resolve({"scheme": "coalesce-time", "nic.rx_usecs": 0})


def test_a_setting_the_scheme_ignores_is_a_warning_naming_the_key():
    with pytest.warns(irqlab.ConfigWarning) as caught:
        params = irqlab.resolve({"scheme": "ideal", "nic.itr_us": 20, "poll.quota": 5})
    assert params["nic.itr_us"] == 20.0  # the scenario is valid and keeps the key
    assert [w.message.key for w in caught] == ["nic.itr_us", "poll.quota"]
    assert str(caught[0].message) == (
        'nic.itr_us = 20.0: has no effect: scheme "ideal" has no interrupts '
        "(an arrival starts protocol processing at no cost)"
    )
    with pytest.warns(irqlab.ConfigWarning, match='scheme "ideal" has no interrupts'):
        irqlab.resolve({"scheme": "ideal", "driver.moderation": "ixgbe"})
    with pytest.warns(irqlab.ConfigWarning, match='driver.moderation = "ixgbe" programs the ITR'):
        irqlab.resolve({"driver.moderation": "ixgbe", "nic.itr_us": 20})


def test_running_warns_as_resolving_does():
    with pytest.warns(irqlab.ConfigWarning) as caught:
        report = irqlab.run({**SHORT, "scheme": "ideal", "nic.itr_us": 20})
    assert [w.message.key for w in caught] == ["nic.itr_us"]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    without = irqlab.run({**SHORT, "scheme": "ideal"})
    assert report.pop("scenario")["nic.itr_us"] == 20.0
    assert without.pop("scenario")["nic.itr_us"] == 0.0
    assert report == without  # the key changed nothing but its echo
    with pytest.warns(irqlab.ConfigWarning, match="poll.quota = 5: has no effect"):
        irqlab.run_traced({**SHORT, "poll.quota": 5})


@pytest.mark.parametrize("scheme", ["disable-enable", "napi-poll", "hybrid"])
def test_a_policy_salahs_loop_never_runs_is_a_warning(scheme):
    """A sweep of scheme × driver.moderation runs every point; these points never adapt."""
    with pytest.warns(irqlab.ConfigWarning) as caught:
        irqlab.resolve({"scheme": scheme, "driver.moderation": "ixgbe"})
    assert [w.message.key for w in caught] == ["driver.moderation"]
    assert str(caught[0].message).startswith(
        f'driver.moderation = "ixgbe": never adapts: scheme "{scheme}" runs Salah\'s polling '
        "loop, which never runs the driver's moderation, so the NIC keeps the policy's initial "
        "setting all run"
    )


def test_the_command_prints_each_warning_once_and_runs():
    p = irqlab_cmd("run", EXAMPLE, *SHORT_SETS, "--set", "scheme=ideal", "--set", "nic.itr_us=20")
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == [
        'irqlab: warning: nic.itr_us = 20.0: has no effect: scheme "ideal" has no interrupts '
        "(an arrival starts protocol processing at no cost)"
    ]
    assert "scheme ideal" in p.stdout  # and the run went on
    r = cli("check", EXAMPLE, "--set", "scheme=napi", "--set", "poll.period_us=10")
    assert r.exit_code == 0 and "irqlab: warning: poll.period_us = 10.0: has no effect" in r.output


@pytest.mark.parametrize("scheme", irqlab.scenario.schema()["scheme"]["choices"])
@pytest.mark.parametrize("preset", irqlab.scenario.schema()["platform.preset"]["choices"])
def test_schemes_presets_and_their_echo_warn_of_nothing(scheme, preset):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        params = irqlab.resolve({"scheme": scheme, "platform.preset": preset})
        # what a run echoes, given back whole (a rerun of a sweep's row)
        assert irqlab.resolve(params) == params
        # keys set to the value they have anyway
        irqlab.resolve({"scheme": scheme, "platform.preset": preset, "nic.itr_us": 0})


def test_a_sweep_crossing_schemes_with_keys_some_ignore_runs_without_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = irqlab.sweep(
            base={**SHORT, "driver.moderation": "ixgbe"},
            axes={"scheme": ["ideal", "napi", "disable-enable"], "nic.itr_us": [0, 20]},
            replications=1,
            executor="inline",
        )
    assert len(runs) == 6


# ----- 12. random documents and --set strings ---------------------------------------------------

PLAIN_KEYS = [k for k, s in schema().items() if "table" not in s]
SECTIONS = sorted({k.split(".")[0] for k in PLAIN_KEYS if "." in k} | set(tables()))
LEAVES = sorted({k.rsplit(".", 1)[-1] for k in schema()})

garbage = st.text(min_size=1, max_size=12)
words = st.sampled_from(SECTIONS + LEAVES + ["0", "1", "N", "classes"]) | garbage
scalars = (
    st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["napi", "ideal", "poll", "fixed", "imix", "64:1, 1518:1", "cbr", "dim"])
    | st.dates()
    | st.times()
    | st.datetimes()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(words, inner, max_size=4),
    max_leaves=12,
)


def _key(k: str) -> str:
    return json.dumps(k, ensure_ascii=False)


def _inline(v) -> str:
    """``v`` as an inline TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dt.datetime | dt.date | dt.time):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + "}"


@st.composite
def documents(draw) -> str:
    """A TOML document over keys of the schema mixed with garbage: top-level values, [tables]
    of values, [[arrays of tables]], dotted keys, and once in a while a broken line."""
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(PLAIN_KEYS) | words)
        lines.append(f"{_key(key)} = {_inline(draw(values))}")
    for section in draw(st.lists(st.sampled_from(SECTIONS) | words, max_size=3, unique=True)):
        if draw(st.booleans()):
            for _ in range(draw(st.integers(0, 2))):
                lines.append(f"[[{_key(section)}]]")
                for leaf, v in draw(st.dictionaries(words, values, max_size=3)).items():
                    lines.append(f"{_key(leaf)} = {_inline(v)}")
        else:
            lines.append(f"[{_key(section)}]")
            for leaf, v in draw(st.dictionaries(words, values, max_size=3)).items():
                lines.append(f"{_key(leaf)} = {_inline(v)}")
    if draw(st.integers(0, 9)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.text(max_size=20)))
    return "\n".join(lines) + "\n"


set_values = (
    st.sampled_from(["", "[]", "[0, 1]", "{}", "inf", "nan", "-0", "1e999", "true", "napi"])
    | st.builds(_inline, values)
    | st.text(max_size=30)
    | st.integers().map(str)
)
set_strings = st.builds(
    lambda k, v, eq: f"{k}{eq}{v}",
    st.sampled_from([*PLAIN_KEYS, "app.0.core", "traffic.classes.1.share", "app", "nic"]) | words,
    set_values,
    st.sampled_from(["=", "=", " = ", ""]),
)

FUZZ = settings(
    max_examples=int(os.environ.get("IRQLAB_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _resolve_or_config_error(scenario, overrides=()) -> dict | None:
    """The scenario as ``irqlab check`` accepts it (resolved, and its Python policy found when
    ``driver.moderation = "python"``), or None after a one-line ConfigError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irqlab.ConfigWarning)
        try:
            resolved = irqlab.resolve(scenario, overrides)
            resolve_policy(resolved)
            return resolved
        except irqlab.ConfigError as e:
            assert "\n" not in str(e), str(e)
            return None


@FUZZ
@given(documents())
def test_any_document_is_a_scenario_or_a_config_error(tmp_path, text):
    f = tmp_path / "fuzz.toml"
    f.write_text(text, encoding="utf-8", errors="surrogatepass")
    _resolve_or_config_error(f)


@FUZZ
@given(st.dictionaries(st.sampled_from(PLAIN_KEYS) | words, values, max_size=6))
def test_any_dict_is_a_scenario_or_a_config_error(tree):
    _resolve_or_config_error(tree)


@FUZZ
@given(st.binary(max_size=64))
def test_any_bytes_are_a_scenario_or_a_config_error(tmp_path, data):
    f = tmp_path / "fuzz.toml"
    f.write_bytes(data)
    _resolve_or_config_error(f)


@FUZZ
@given(st.lists(set_strings, min_size=1, max_size=3))
def test_any_set_string_is_a_scenario_or_one_line(tmp_path, sets):
    empty = tmp_path / "empty.toml"
    empty.touch()
    args = [a for s in sets for a in ("--set", s)]
    r = CliRunner().invoke(main, ["check", str(empty), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), (sets, r.exception)
    if r.exit_code != 0:
        one_line_error(r)
    _resolve_or_config_error(None, sets)


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(
    max_examples=int(os.environ.get("IRQLAB_FUZZ_RUNS", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(st.lists(set_strings, min_size=1, max_size=4))
def test_any_valid_scenario_runs(sets):
    """Valid scenarios reach the engine: a short run ends in a report, never a panic."""
    params = _resolve_or_config_error(None, sets)
    if params is None:
        return
    short = {**params, "run.duration_ms": 0.01, "run.warmup_ms": 0.0}
    report = irqlab.run(short)
    assert report["packets"]["offered"] >= 0


def _in_range(spec: dict) -> st.SearchStrategy:
    """Values a key's type allows, its extremes included: what gets past the per-key check and
    reaches the core's checks between keys."""
    typ = spec["type"]
    if typ == "bool":
        return st.booleans()
    if typ == "str":
        return st.sampled_from(spec["choices"])
    if typ == "text":
        return st.sampled_from(["fixed", "imix", "salah2007", "", "rt", "64:1, 65535:0"]) | st.text(
            max_size=12
        )
    if typ == "int_list":
        return st.lists(st.integers(spec["min"], min(spec["max"], 8)), max_size=4)
    if typ == "int" and "choices" in spec:
        return st.sampled_from(spec["choices"])
    if typ == "int":
        lo, hi = spec["min"], spec["max"]
        return st.sampled_from([lo, hi]) | st.integers(lo, min(hi, lo + 8))
    lo, hi = spec["min"], spec["max"]
    edge = [
        x
        for x in (lo, hi, lo + 1e-9, 5e-324)
        if lo < x <= hi or (x == lo and not spec.get("min_exclusive"))
    ]
    return st.sampled_from(edge or [hi]) | st.floats(lo, min(hi, lo + 100), exclude_min=True)


#: Keys whose extremes make a run long (or a test slow) rather than wrong: kept small.
BOUNDED = {
    "run.duration_ms": st.floats(0.001, 0.05),
    "run.warmup_ms": st.floats(0, 0.01),
    "traffic.rate_pps": st.floats(0.001, 5e6),
    "traffic.flows": st.integers(1, 5000),
    "host.cores": st.integers(1, 8),
    "nic.queues": st.integers(1, 8),
}


@st.composite
def in_range_scenarios(draw) -> dict:
    keys = draw(st.lists(st.sampled_from(PLAIN_KEYS), max_size=12, unique=True))
    out = {k: draw(BOUNDED.get(k, _in_range(schema()[k]))) for k in keys}
    for table, spec in tables().items():
        for i in range(draw(st.integers(0, 2))):
            for field in draw(st.lists(st.sampled_from(sorted(spec["fields"])), max_size=3)):
                out[f"{table}.{i}.{field}"] = draw(_in_range(spec["fields"][field]))
    out.update({k: draw(v) for k, v in BOUNDED.items() if k not in out or k.startswith("run.")})
    return out


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(
    max_examples=int(os.environ.get("IRQLAB_FUZZ_RUNS", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(in_range_scenarios())
def test_any_scenario_of_in_range_values_builds_or_names_a_key_and_runs(params):
    """Every value in its range, combined at random: the core's checks between keys answer
    with a ConfigError naming a key, and what they accept runs to a report."""
    resolved = _resolve_or_config_error(params)
    if resolved is not None:
        assert irqlab.run(resolved)["packets"]["offered"] >= 0


#: A sweep file's shape, with anything in its places.
ranges = st.dictionaries(st.sampled_from(["from", "to", "step", "num", "log", "x"]), values)
sweep_documents = st.fixed_dictionaries(
    {},
    optional={
        "sweep": values
        | st.dictionaries(
            st.sampled_from(["base", "replications", "seed", "warmup", "out", "precision"]) | words,
            values
            | st.sampled_from(["auto", "napi.toml", "missing.toml"])
            | st.dictionaries(
                st.sampled_from(["metrics", "relative", "confidence", "max_replications"]) | words,
                values | st.sampled_from(["throughput_pps", ["latency_us.mean"]]),
                max_size=4,
            ),
            max_size=4,
        ),
        "base": values | st.dictionaries(st.sampled_from(PLAIN_KEYS) | words, values, max_size=3),
        "axes": values
        | st.dictionaries(
            st.sampled_from(PLAIN_KEYS) | words,
            values | ranges | st.lists(values, max_size=4),
            max_size=3,
        ),
    },
)


@FUZZ
@given(sweep_documents)
def test_any_sweep_document_is_a_sweep_or_a_config_error(monkeypatch, tree):
    """What ``irqlab sweep`` reads before it runs anything: the sweep's points, or one line."""
    monkeypatch.chdir(ROOT / "examples")  # where sweep.base = "napi.toml" is
    try:
        spec = parse_sweep(tree)
    except irqlab.ConfigError as e:
        assert "\n" not in str(e) and "\r" not in str(e), str(e)
        return
    for point in spec.points()[:4]:
        _resolve_or_config_error(point)
