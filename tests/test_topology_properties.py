"""Properties of any host topology: several cores and queue vectors (with or without an IRQ
affinity list), flows with uniform or Zipf popularity, traffic classes, apps on any core
(default or explicit flow lists), forwarding through Tx rings, the NAPI-model schemes.

- Every packet is somewhere: both conservation laws of metrics.rs hold exactly, every core's
  CPU time adds up to the measured window, and the per-queue, per-class, per-core and per-app
  breakdowns add up to the report's totals.
- The same topology gives the same bytes, in this process and in another one that reads it
  from a TOML file (arrays of tables and lists) through the CLI.
- A topology the core cannot build is refused before anything runs, by the Python API and the
  CLI alike, with one line naming the key.

The examples are derandomized (a fixed seed per test), so a run is reproducible.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import irqlab

SCHEMES = ["ideal", "irq", "napi", "coalesce-count", "coalesce-time"]
DIST = st.sampled_from(["deterministic", "exponential"])
COST = st.one_of(st.just(0.0), st.floats(1, 20_000))
COSTS = ["irq", "proto", "poll", "softirq", "mask", "unmask", "ctx_switch", "task_wakeup"]
COSTS += ["tx", "tx_clean"]
PATH = ["offered", "delivered", "dropped_nic", "dropped_socket", "dropped_tx", "in_flight"]
CPU = ["irq", "softirq", "ksoftirqd", "app", "idle"]


@st.composite
def topologies(draw) -> dict[str, Any]:
    """A random valid-looking host as flat dotted keys (numbered entries included)."""
    cores = draw(st.integers(1, 4))
    queues = draw(st.integers(1, 6))
    flows = draw(st.integers(1, 500))
    forward = draw(st.booleans())
    p: dict[str, Any] = {
        "scheme": draw(st.sampled_from(SCHEMES)),
        "run.seed": draw(st.integers(0, 2**63 - 1)),  # TOML integers are 64-bit signed
        "run.replication": draw(st.integers(0, 50)),
        "run.duration_ms": draw(st.floats(0.05, 3)),
        "run.warmup_ms": draw(st.one_of(st.just(0.0), st.floats(0, 1))),
        "host.cores": cores,
        "host.forward": forward,
        "nic.queues": queues,
        "nic.ring_descriptors": draw(st.integers(1, 256)),
        "nic.tx_ring_descriptors": draw(st.integers(1 if forward else 0, 64)),
        "nic.tx_irq": draw(st.booleans()),
        "nic.link_gbps": draw(st.floats(0.01, 40)),  # slow links fill the Tx rings
        "nic.itr_us": draw(st.one_of(st.just(0.0), st.floats(0, 50))),
        "traffic.kind": draw(st.sampled_from(["poisson", "cbr", "pareto-onoff"])),
        "traffic.rate_pps": draw(st.floats(1_000, 2_000_000)),  # up to overload
        "traffic.sizes": draw(st.sampled_from(["fixed", "imix", "64:1, 1518:1"])),
        "traffic.flows": flows,
        "traffic.flow_zipf_s": draw(st.one_of(st.just(0.0), st.floats(0.1, 3))),
        "socket.rcvbuf_bytes": draw(st.integers(2304, 60_000)),
        "kernel.napi_weight": draw(st.integers(1, 64)),
        "kernel.netdev_budget": draw(st.integers(1, 300)),
        "kernel.max_softirq_restart": draw(st.integers(1, 10)),
        "kernel.sched_slice_us": draw(st.one_of(st.just(0.0), st.floats(1, 2000))),
    }
    for cost in COSTS:
        p[f"platform.{cost}_ns"] = draw(COST)
        p[f"platform.{cost}_dist"] = draw(DIST)
    if draw(st.booleans()):
        p["nic.irq_affinity"] = draw(st.lists(st.integers(0, cores - 1), min_size=queues,
                                              max_size=queues))  # fmt: skip
    classes = draw(st.integers(0, 3))
    if classes:
        weights = draw(st.lists(st.integers(0, 5), min_size=classes, max_size=classes))
        total = sum(weights)  # all 0: equal shares
        for i, w in enumerate(weights):
            p[f"traffic.classes.{i}.share"] = w / total if total else 0.0
            if draw(st.booleans()):
                p[f"traffic.classes.{i}.name"] = f"k{i}"
    taken: set[int] = set()
    for a in range(draw(st.integers(0, 3))):
        p[f"app.{a}.core"] = draw(st.integers(0, cores - 1))
        p[f"app.{a}.cost_ns"] = draw(COST)
        p[f"app.{a}.cost_dist"] = draw(DIST)
        if draw(st.booleans()):
            p[f"app.{a}.rcvbuf_bytes"] = draw(st.integers(2304, 30_000))
        wanted = draw(st.lists(st.integers(0, flows - 1), max_size=5, unique=True))
        mine = [f for f in wanted if f not in taken]  # explicit lists are disjoint
        taken.update(mine)
        p[f"app.{a}.flows"] = mine  # [] = the default: flows RSS steers to its core
    return p


def run_or_reject(params: dict[str, Any]) -> dict:
    """The report, or the example is discarded if the core refuses the combination (an app
    whose core gets no flow from RSS, ...)."""
    try:
        return irqlab.run(params)
    except irqlab.ConfigError:
        assume(False)
        raise  # unreachable: assume(False) stops the example


def window_ps(duration_ms: float) -> int:
    """The measured window as the core computes it: rounded to the nearest picosecond, ties
    away from zero (`SimDuration::from_ms`)."""
    return math.floor(duration_ms * 1e9 + 0.5)


# random topologies set keys some schemes ignore (nic.tx_irq with ideal): warned, and valid
@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(topologies())
def test_every_packet_is_somewhere_in_any_topology(params):
    rep = run_or_reject(params)
    p = rep["packets"]
    # the receive path
    assert p["offered"] + p["in_flight_at_warmup"] == (
        p["delivered"] + p["dropped_nic"] + p["dropped_socket"] + p["dropped_tx"] + p["in_flight"]
    ), p
    # the whole host
    assert p["offered"] + p["in_host_at_warmup"] == (
        p["consumed"] + p["transmitted"] + p["to_stack"] + p["dropped_nic"] + p["dropped_socket"]
        + p["dropped_tx"] + p["in_flight"] + p["in_socket"] + p["in_app"] + p["in_tx_ring"]
    ), p  # fmt: skip
    if not params.get("host.forward"):
        assert p["transmitted"] == p["dropped_tx"] == p["in_tx_ring"] == 0
    if not any(k.startswith("app.") for k in params):
        assert p["consumed"] == p["dropped_socket"] == p["in_socket"] == p["in_app"] == 0

    # CPU time: every core accounts for the whole window, the host for cores × window
    cores = params["host.cores"]
    window = window_ps(params["run.duration_ms"])
    assert len(rep["per_core"]) == cores
    for core in rep["per_core"]:
        c = core["cpu_ps"]
        assert c["measured"] == window, (core["core"], c)
        assert sum(c[k] for k in CPU) == window, (core["core"], c)
    c = rep["cpu_ps"]
    assert c["measured"] == cores * window
    assert sum(c[k] for k in CPU) == c["measured"]
    for k in CPU:
        assert sum(core["cpu_ps"][k] for core in rep["per_core"]) == c[k], k

    # the breakdowns add up to the totals
    assert len(rep["per_queue"]) == params["nic.queues"]
    assert sum(q["flows"] for q in rep["per_queue"]) == params["traffic.flows"]
    for part in ("per_queue", "per_class", "per_core"):
        for k in PATH:
            assert sum(x[k] for x in rep[part]) == p[k], (part, k)
    assert sum(x["consumed"] for x in rep["per_class"]) == p["consumed"]
    assert sum(q["in_tx_ring"] for q in rep["per_queue"]) == p["in_tx_ring"]
    for k in ("consumed", "dropped_socket", "in_socket", "in_app"):
        assert sum(a[k] for a in rep["per_app"]) == p[k], k
    assert sorted(v for core in rep["per_core"] for v in core["vectors"]) == list(
        range(params["nic.queues"])
    )


# --- the same topology, the same bytes --------------------------------------------------------

ENTRY = re.compile(r"(app|traffic\.classes)\.(\d+)\.(\w+)")


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)  # repr round-trips a float exactly; TOML reads "1e-05" and "5.0"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def to_toml(flat: dict[str, Any]) -> str:
    """A scenario file for flat dotted keys: plain keys under their table, numbered entries as
    arrays of tables ([[app]], [[traffic.classes]])."""
    top: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    entries: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in flat.items():
        if m := ENTRY.fullmatch(key):
            entries.setdefault(m[1], {}).setdefault(int(m[2]), {})[m[3]] = value
        elif "." in key:
            table, field = key.rsplit(".", 1)
            tables.setdefault(table, {})[field] = value
        else:
            top[key] = value
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
    for table, fields in tables.items():
        lines += ["", f"[{table}]", *(f"{k} = {toml_value(v)}" for k, v in fields.items())]
    for name, items in entries.items():
        for i in range(len(items)):
            lines += ["", f"[[{name}]]"]
            lines += [f"{k} = {toml_value(v)}" for k, v in items[i].items()]
    return "\n".join(lines) + "\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irqlab.cli", *args], capture_output=True, text=True, check=False
    )


def test_the_toml_writer_writes_arrays_of_tables_and_lists(tmp_path):
    flat = {
        "scheme": "napi",
        "run.seed": 3,
        "nic.irq_affinity": [1, 0],
        "platform.proto_ns_per_byte": 1e-05,
        "traffic.classes.0.share": 0.25,
        "traffic.classes.1.share": 0.75,
        "app.0.core": 1,
        "app.0.flows": [3, 4],
        "app.1.flows": [],
    }
    text = to_toml(flat)
    assert "[[app]]\ncore = 1\nflows = [3, 4]\n" in text
    assert "[[traffic.classes]]\nshare = 0.25\n" in text
    f = tmp_path / "t.toml"
    f.write_text(text)
    assert irqlab.load_scenario(f) == irqlab.load_scenario(flat)


@pytest.mark.filterwarnings("ignore::irqlab.ConfigWarning")
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])  # fmt: skip
@given(topologies())
def test_same_topology_same_bytes(tmp_path, params):
    first = json.dumps(run_or_reject(params), indent=2)
    assert json.dumps(irqlab.run(params), indent=2) == first
    f = tmp_path / "topology.toml"
    f.write_text(to_toml(params), encoding="utf-8")
    p = cli("run", str(f), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert p.stdout == first + "\n"


# --- bad topologies ---------------------------------------------------------------------------

BAD = {
    "a vector pinned to a missing core": (
        {"host.cores": 2, "nic.queues": 2, "nic.irq_affinity": [0, 2]},
        "nic.irq_affinity",
    ),
    "class shares summing to 0.6": (
        {"traffic.classes.0.share": 0.3, "traffic.classes.1.share": 0.3},
        "traffic.classes.0.share",
    ),
    "an app on a missing core": ({"host.cores": 2, "app.0.core": 2}, "app.0.core"),
    "an app reading no flow": (
        # one vector, on core 0: RSS steers nothing to core 1
        {"host.cores": 2, "nic.queues": 1, "traffic.flows": 8, "app.0.core": 1},
        "app.0.flows",
    ),
    "a receive buffer smaller than one packet": (
        {"socket.rcvbuf_bytes": 2303, "app.0.core": 0},
        "socket.rcvbuf_bytes",
    ),
    "an app's receive buffer smaller than one packet": (
        {"app.0.core": 0, "app.0.rcvbuf_bytes": 1000},
        "app.0.rcvbuf_bytes",
    ),
    "zero cores": ({"host.cores": 0}, "host.cores"),
    "zero queues": ({"nic.queues": 0}, "nic.queues"),
}


@pytest.mark.parametrize(("params", "key"), BAD.values(), ids=BAD.keys())
def test_bad_topologies_get_one_line_errors_naming_the_key(tmp_path, params, key):
    with pytest.raises(irqlab.ConfigError) as e:
        irqlab.run(params)
    assert e.value.key == key
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{key} = "), message

    f = tmp_path / "bad.toml"
    f.write_text(to_toml(params), encoding="utf-8")
    p = cli("run", str(f))
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert p.stdout == ""
    assert p.stderr.splitlines() == [f"irqlab: error: {message}"], p.stderr
