"""Every Python snippet of the README and docs/ runs as a user runs it: saved as a plain script
(no ``if __name__ == "__main__":`` guard) and started with ``python script.py``, from a folder
that holds the repository's ``examples/``. A snippet that starts worker processes (a sweep, a
tune) used to start a sweep inside every worker, which re-ran the script."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: Real processes and files, each test seconds long: outside the quick check (-m 'not slow').
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: A stand-in for dask-jobqueue: a SLURM "cluster" that is a local one with threads for workers
#: (no batch system here), at a TCP address as a real one is.
FAKE_JOBQUEUE = """
from distributed import LocalCluster


class SLURMCluster(LocalCluster):
    def __init__(self, cores=1, processes=1, memory=None, walltime=None):
        super().__init__(
            n_workers=0, processes=False, threads_per_worker=cores, protocol="tcp://",
            host="127.0.0.1", dashboard_address=None,
        )

    def scale(self, n=None, jobs=0, **kwargs):
        return super().scale(min(jobs or n, 2))


PBSCluster = SLURMCluster
"""


def snippets() -> list[tuple[str, str]]:
    """``(where, code)`` of every ```python block, where = FILE:LINE."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", m.group(1)))
    return found


SNIPPETS = snippets()


def test_the_docs_have_python_snippets():
    where = {w.split(":")[0] for w, _ in SNIPPETS}
    assert {"README.md", "docs/tune.md", "docs/sweeps.md", "docs/policies.md"} <= where, where


@pytest.mark.parametrize("where,code", SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_a_python_snippet_runs_as_a_plain_script(where, code, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "fakes").mkdir()
    (tmp_path / "fakes" / "dask_jobqueue.py").write_text(textwrap.dedent(FAKE_JOBQUEUE))
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    assert "__main__" not in code  # a plain script, as the docs show it
    p = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**_environ(), "PYTHONPATH": str(tmp_path / "fakes")},
        check=False,
    )
    assert p.returncode == 0, f"{where}\n{p.stderr[-3000:]}"
    # no traceback, no leaked-semaphore or other warning: nothing on stderr at all
    assert p.stderr.strip() == "", f"{where}\n{p.stderr[-3000:]}"


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


PLAIN_SWEEP = """
import irqlab

runs = irqlab.sweep(
    {"base": {"scheme": "irq", "run": {"duration_ms": 2, "warmup_ms": 0}},
     "axes": {"traffic.rate_pps": [1e4, 2e4, 3e4]}},
    replications=2, executor=EXECUTOR, workers=2, out="results/plain",
)
print("rows", len(runs))
"""


@pytest.mark.parametrize("executor", ["process", "dask"])
@pytest.mark.parametrize("how", ["file", "module"])
def test_a_plain_script_sweeps_on_a_pool_of_workers(executor, how, tmp_path):
    """Run as ``python sweep_script.py`` or ``python -m sweep_script``: the workers (a local
    pool's, a local Dask cluster's) never run the script, so it needs no guard."""
    (tmp_path / "sweep_script.py").write_text(PLAIN_SWEEP.replace("EXECUTOR", repr(executor)))
    command = ["sweep_script.py"] if how == "file" else ["-m", "sweep_script"]
    p = subprocess.run(
        [sys.executable, *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**_environ(), "PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == "rows 6", p.stdout  # printed once: no worker ran the script
    assert p.stderr.strip() == "", p.stderr[-3000:]


def test_the_main_module_is_put_back_after_a_sweep():
    """The main module's spec is renamed only while workers start, then restored."""
    import irqlab
    from irqlab.experiments.executors import _workers_skip_main

    main = sys.modules["__main__"]
    before = main.__spec__
    with _workers_skip_main(), _workers_skip_main():
        assert main.__spec__.name == "__main__"
    assert main.__spec__ is before
    irqlab.sweep(
        {
            "base": {"scheme": "irq", "run": {"duration_ms": 1, "warmup_ms": 0}},
            "axes": {"traffic.rate_pps": [1e4, 2e4]},
        },
        replications=1,
        workers=2,
    )
    assert main.__spec__ is before
