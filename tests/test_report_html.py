"""`irqlab report`: the HTML page of a run, a sweep, a tune and a reproduction, opened in a real
browser (headless Chromium driven by Playwright) from file:// with the network cut off.

Each page must load with no console error, draw every figure, show the results' numbers (each
table cell carries its exact value in data-value; its text is compared with the value formatted
as the page formats it, and the figures' traces with the results' columns), and give commands
that re-run the result exactly (the tests run them).

The browser is the operating system's Chromium (`apt-get install chromium`; .ci/run installs
it), never one Playwright downloads. Without it the browser tests are skipped locally, with the
reason, and fail in CI (CI=true). `IRQLAB_CHROMIUM=/path/to/chrome` picks another binary.

The sweep page's screenshot is written to the test's temporary folder; `make screenshot`
(IRQLAB_REPORT_SCREENSHOT=docs/img/report.png) writes the README's copy.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from irqlab.cli import main
from irqlab.formatting import page_number as number
from irqlab.report import render_report
from irqlab.toml_writer import document as toml_text

ROOT = Path(__file__).resolve().parents[1]
NAPI = ROOT / "examples" / "napi.toml"
EMMERICH = ROOT / "examples" / "emmerich2015.toml"
SCREENSHOT_ENV = "IRQLAB_REPORT_SCREENSHOT"
HOSTILE = '</script><script>window.pwned = 1</script><b>bold</b> & "quotes"'


def invoke(*args: str) -> Any:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r


def ok(*args: str) -> Any:
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    return r


# --- the results, made small -------------------------------------------------------------------


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A folder standing for the user's working directory: results are given to `irqlab
    report` by relative paths, as a user types them (and as the screenshot shows them)."""
    return tmp_path_factory.mktemp("work")


@pytest.fixture(scope="module")
def run_json(work) -> Path:
    """A two-core run with an app, so the per-core, per-queue and per-app tables appear."""
    out = work / "r.json"
    ok(
        "run",
        NAPI,
        "--set",
        "run.duration_ms=20",
        "--set",
        "run.warmup_ms=2",
        "--set",
        "host.cores=2",
        "--set",
        "nic.queues=2",
        "--set",
        "traffic.flows=64",
        "--set",
        "app.0.core=1",
        "--set",
        "app.0.cost_ns=1500",
        "--format",
        "json",
        "--out",
        out,
    )
    return out


SWEEP = """\
# normal interruption against NAPI across the livelock cliff, in small
[sweep]
base = "{base}"
replications = 3
seed = 7
warmup = 2

[base]
run.duration_ms = 10

[axes]
scheme = ["irq", "napi"]
"traffic.rate_pps" = {{ from = 40_000, to = 240_000, step = 40_000 }}
"""


@pytest.fixture(scope="module")
def sweep_dir(work) -> Path:
    (work / "livelock.toml").write_text(SWEEP.format(base=NAPI.as_posix()))
    ok(
        "sweep",
        work / "livelock.toml",
        "--out",
        work / "results" / "livelock",
        "--executor",
        "inline",
        "--no-progress",
    )
    return work / "results" / "livelock"


TUNE_ARGS = [
    "--set",
    "run.duration_ms=5",
    "--set",
    "run.warmup_ms=2",
    "--slo",
    "latency_us.p99 <= 50",
    "--knob",
    "driver.moderation=static,ixgbe",
    "--knob",
    "nic.itr_us=4,20,84",
    "--replications",
    "2..3",
    "--executor",
    "inline",
    "--no-progress",
]


@pytest.fixture(scope="module")
def tune_dir(work) -> Path:
    ok("tune", EMMERICH, *TUNE_ARGS, "--out", work / "results" / "tune")
    return work / "results" / "tune"


def report(work: Path, results: Path, name: str, *extra: str) -> Path:
    """`irqlab report` run from ``work`` on the relative path of ``results``."""
    old = Path.cwd()
    os.chdir(work)
    try:
        out = Path("reports") / f"{name}.html"
        out.parent.mkdir(exist_ok=True)
        r = ok("report", results.relative_to(work), "-o", out, *extra)
        assert r.output.startswith(f"wrote {out} (")
        return work / out
    finally:
        os.chdir(old)


# --- the browser -------------------------------------------------------------------------------


def chromium() -> str | None:
    return (
        os.environ.get("IRQLAB_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI runs the browser tests (.ci/run installs Chromium)")
    pytest.skip(f"{reason}; install it (apt-get install chromium) to run the browser tests")


@pytest.fixture(scope="module")
def browser():
    path = chromium()
    if path is None:
        _unavailable("no Chromium (chromium or chromium-browser on PATH, or IRQLAB_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install '.[test]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path)
        yield b
        b.close()


class Loaded:
    """A report open in the browser, with what it asked for and what it complained of."""

    def __init__(self, browser: Any, html: Path, height: int = 900) -> None:
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": height})
        self.page = page = self.context.new_page()

        def route(r: Any) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.blocked.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("request", lambda req: self.requests.append(req.url))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.goto(html.as_uri(), wait_until="load")
        page.wait_for_function(
            "() => [...document.querySelectorAll('div.plot')]"
            ".every(d => d.dataset.rendered === 'true')",
            timeout=30_000,
        )

    def check_clean(self, html: Path) -> None:
        """Nothing but the page itself was fetched; nothing was blocked; no error."""
        assert self.blocked == [], f"the page tried to fetch {self.blocked}"
        assert self.requests == [html.as_uri()], self.requests
        assert self.errors == []
        assert self.page.evaluate("() => window.pwned") is None

    def plots(self) -> list[dict[str, Any]]:
        """Every Plotly figure: its id, how many traces it holds and draws, and their data."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('div.plot')].map(d => ({
                id: d.dataset.figure,
                svg: d.querySelectorAll('.main-svg').length,
                drawn: d.querySelectorAll('.trace').length,
                traces: d.data.map(t => ({
                    name: t.name, type: t.type,
                    x: Array.from(t.x || []), y: Array.from(t.y || []),
                    err: t.error_y && t.error_y.array ? Array.from(t.error_y.array) : null,
                })),
            }))"""
        )

    def cells(self, selector: str) -> list[dict[str, str]]:
        """Table cells: their text and data attributes."""
        return self.page.eval_on_selector_all(
            selector, "els => els.map(e => ({text: e.textContent, ...e.dataset}))"
        )

    def text(self, selector: str) -> str:
        return self.page.locator(selector).first.text_content()

    def close(self) -> None:
        self.context.close()


def check_figures(loaded: Loaded, expected: int) -> list[dict[str, Any]]:
    plots = loaded.plots()
    assert len(plots) == expected
    for p in plots:
        assert p["svg"] >= 1, p["id"]
        assert p["traces"] and p["drawn"] >= len(p["traces"]), p["id"]
        assert any(any(v is not None for v in t["y"]) for t in p["traces"]), p["id"]
    return plots


def same(shown: str, value: Any) -> bool:
    """A data-value equals the result's value: exactly, for numbers."""
    if value is None:
        return shown == ""
    if isinstance(value, bool):
        return shown == ("true" if value else "false")
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return shown == "nan"
        return float(shown) == value
    if isinstance(value, list):
        return json.loads(shown) == value
    return shown == str(value)


def dig(tree: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree


# --- a run -------------------------------------------------------------------------------------


def test_run_report_in_the_browser(browser, work, run_json):
    rep = json.loads(run_json.read_text())
    html = report(work, run_json, "run", "--title", HOSTILE)
    loaded = Loaded(browser, html)
    try:
        loaded.check_clean(html)
        assert loaded.page.title() == HOSTILE  # shown as text, not markup
        assert loaded.text("h1") == HOSTILE
        plots = check_figures(loaded, 2)
        latency = next(p for p in plots if p["id"] == "latency")
        by_name = {t["name"]: t for t in latency["traces"]}
        assert by_name["to the end of protocol processing"]["y"] == [
            rep["latency_us"][k] for k in ("mean", "p50", "p90", "p99", "p999", "max")
        ]
        assert by_name["to the application"]["y"][3] == rep["app_latency_us"]["p99"]
        cpu = next(p for p in plots if p["id"] == "cpu")
        assert [t["name"] for t in cpu["traces"]] == ["irq", "softirq", "ksoftirqd", "app", "idle"]
        assert cpu["traces"][1]["x"] == [c["cpu"]["softirq"] for c in rep["per_core"]]

        # every number shown: the key metrics, the per-core/queue/app tables, every metric
        cells = loaded.cells("td[data-key][data-value]")
        seen = {c["key"] for c in cells}
        for key in ("latency_us.p99", "cpu.busy", "throughput_pps", "packets.dropped_nic"):
            assert key in seen
        for key in ("per_core.1.cpu.busy", "per_queue.1.irq_per_s", "per_app.0.consumed"):
            assert key in seen
        assert "per_core.0.counts.softirq_runs" in seen  # the "every metric" table
        scenario = rep["scenario"]
        checked = 0
        for c in cells:
            key = c["key"]
            value = scenario[key] if key in scenario else dig(rep, key)
            assert same(c["value"], value), (key, c["value"], value)
            if not isinstance(value, str):
                assert c["text"] == number(value), (key, c["text"], value)
            checked += 1
        assert checked > 250
        assert {k for k in scenario} <= seen  # every key of the scenario
        assert "irqlab run scenario.toml --format json --out r.json" in loaded.text("#rerun")
    finally:
        loaded.close()


def test_run_report_reruns_the_run(work, run_json, tmp_path):
    """The page's scenario.toml and command give the same report, bit for bit."""
    html = report(work, run_json, "run-rerun")
    toml = scenario_toml_of(html)
    (tmp_path / "scenario.toml").write_text(toml)
    ok("run", tmp_path / "scenario.toml", "--format", "json", "--out", tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads(run_json.read_text())


def scenario_toml_of(html: Path) -> str:
    """The TOML file the page offers, read back from its HTML (unescaped as a browser does)."""
    import html as html_module
    import re

    text = html.read_text()
    m = re.search(r'<pre class="file" id="code-toml"><code>(.*?)</code></pre>', text, re.S)
    assert m, "no TOML block"
    return html_module.unescape(m.group(1))


def command_of(html: Path) -> str:
    import html as html_module
    import re

    text = html.read_text()
    m = re.search(r'<pre class="commands" id="code-command"><code>(.*?)</code></pre>', text, re.S)
    assert m, "no command block"
    return html_module.unescape(m.group(1)).strip()


# --- a sweep -----------------------------------------------------------------------------------


def test_sweep_report_in_the_browser(browser, work, sweep_dir, tmp_path):
    summary = pd.read_parquet(sweep_dir / "summary.parquet").set_index("point")
    html = report(work, sweep_dir, "sweep")
    loaded = Loaded(browser, html, height=1400)
    try:
        loaded.check_clean(html)
        metrics = [
            "throughput_pps",
            "loss_ratio",
            "latency_us.mean",
            "latency_us.p99",
            "cpu.busy",
            "irq_per_s",
        ]
        plots = check_figures(loaded, len(metrics))
        for p, metric in zip(plots, metrics, strict=True):
            assert p["id"] == f"sweep-{metric}"
            assert sorted(t["name"] for t in p["traces"]) == ["irq", "napi"]
            for t in p["traces"]:
                part = summary[summary["scheme"] == t["name"]].sort_values("traffic.rate_pps")
                assert t["x"] == part["traffic.rate_pps"].tolist()
                assert t["y"] == part[metric].tolist(), metric
                assert t["err"] == part[f"{metric}.ci95"].tolist(), metric

        cells = loaded.cells("#summary-table td[data-point]")
        assert len(cells) == len(summary) * (1 + 2 + 1 + len(metrics))
        for c in cells:
            row = summary.loc[int(c["point"])]
            key = c["key"]
            value = int(c["point"]) if key == "point" else row[key]
            value = value.item() if hasattr(value, "item") else value
            assert same(c["value"], value), (c, value)
            if key in metrics:
                ci = row[f"{key}.ci95"]
                assert float(c["ci"]) == ci
                assert c["text"] == f"{number(value)} ± {number(ci)}"
            else:
                assert c["text"] == number(value)

        rerun = loaded.text("#rerun")
        assert "irqlab sweep sweep.toml --out results/livelock" in rerun
        assert "irqlab rerun results/livelock --point 0 --replication 0" in rerun

        # hovering over a point shows its values (and the screenshot the README shows)
        page = loaded.page
        figure = page.locator("#sweep-throughput_pps")
        box = figure.bounding_box()
        assert box["y"] + box["height"] < 1400, "the first figure is not on the first screen"
        point = figure.locator(".scatterlayer .trace .point").nth(4).bounding_box()
        page.mouse.move(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
        label = figure.locator(".hoverlayer .hovertext")
        label.first.wait_for(timeout=5_000)
        row = summary[summary["scheme"] == "irq"].sort_values("traffic.rate_pps").iloc[4]
        shown = f"{number(row['throughput_pps'])} ± {number(row['throughput_pps.ci95'])}"
        assert f"throughput_pps = {shown}" in label.first.text_content()
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), clip=_clip(1280, box["y"] + box["height"] + 12))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get(SCREENSHOT_ENV):
            shutil.copyfile(shot, os.environ[SCREENSHOT_ENV])
    finally:
        loaded.close()


def _clip(width: float, height: float) -> dict[str, float]:
    return {"x": 0, "y": 0, "width": width, "height": height}


def test_sweep_report_reruns_the_sweep(work, sweep_dir, tmp_path):
    """The page's sweep.toml, run into a new folder, gives the same summary."""
    html = report(work, sweep_dir, "sweep-rerun")
    (tmp_path / "sweep.toml").write_text(scenario_toml_of(html))
    words = shlex.split(command_of(html))
    assert words[:3] == ["irqlab", "sweep", "sweep.toml"]
    ok("sweep", tmp_path / "sweep.toml", "--out", tmp_path / "again", "--executor", "inline")
    again = pd.read_parquet(tmp_path / "again" / "summary.parquet")
    pd.testing.assert_frame_equal(again, pd.read_parquet(sweep_dir / "summary.parquet"))


# --- a tune ------------------------------------------------------------------------------------


def test_tune_report_in_the_browser(browser, work, tune_dir):
    table = pd.read_csv(tune_dir / "candidates.csv").set_index("candidate")
    rec = json.loads((tune_dir / "recommendation.json").read_text())
    html = report(work, tune_dir, "tune")
    loaded = Loaded(browser, html)
    try:
        loaded.check_clean(html)
        (pareto,) = check_figures(loaded, 1)
        traces = {t["name"]: t for t in pareto["traces"]}
        for status in set(table["status"]):
            part = table[table["status"] == status].dropna(subset=["objective"])
            assert traces[status]["x"] == part["objective"].tolist()
            assert traces[status]["y"] == part["latency_us.p99"].tolist()
        assert "recommended" in traces and "Pareto frontier" in traces

        text = loaded.text("#recommendation")
        for command in rec["commands"]:
            assert command in text
        cells = loaded.cells("#candidates-table td[data-candidate]")
        assert {int(c["candidate"]) for c in cells} == set(table.index)
        for c in cells:
            row = table.loc[int(c["candidate"])]
            key = c["key"]
            value = int(c["candidate"]) if key == "candidate" else row[key]
            value = value.item() if hasattr(value, "item") else value
            assert same(c["value"], value), (c, value)
            if key == "status":
                continue
            if "lo" in c:  # an interval
                lo_key, hi_key = (
                    ("objective_lo", "objective_hi")
                    if key == "objective"
                    else (
                        key.replace("margin[", "margin_lo["),
                        key.replace("margin[", "margin_hi["),
                    )
                )
                assert float(c["lo"]) == row[lo_key] and float(c["hi"]) == row[hi_key]
                assert (
                    c["text"] == f"{number(value)} ({number(row[lo_key])} to {number(row[hi_key])})"
                )
            else:
                assert c["text"] == number(value)
    finally:
        loaded.close()


def test_tune_report_reruns_the_tune(work, tune_dir, tmp_path):
    """The page's command, with its scenario.toml, into a new folder: the same decisions."""
    html = report(work, tune_dir, "tune-rerun")
    (tmp_path / "scenario.toml").write_text(scenario_toml_of(html))
    words = shlex.split(command_of(html))
    assert words[:3] == ["irqlab", "tune", "scenario.toml"]
    assert words[words.index("--out") + 1] == "results/tune"
    words[2] = str(tmp_path / "scenario.toml")
    words[words.index("--out") + 1] = str(tmp_path / "again")
    ok(*words[1:], "--executor", "inline", "--no-progress")
    for name in ("recommendation.json", "candidates.csv", "pareto.csv"):
        assert (tmp_path / "again" / name).read_text() == (tune_dir / name).read_text(), name


# --- a reproduction ----------------------------------------------------------------------------


def test_reproduction_report_in_the_browser(browser, work, emmerich2015_quick, tmp_path):
    folder = emmerich2015_quick
    html = tmp_path / "emmerich2015.html"
    r = ok("report", folder, "-o", html)
    assert "(reproduction, " in r.output
    loaded = Loaded(browser, html)
    try:
        loaded.check_clean(html)
        assert loaded.plots() == []
        images = loaded.page.eval_on_selector_all(
            "img[data-figure]",
            "els => els.map(e => [e.dataset.figure, e.complete, e.naturalWidth])",
        )
        assert [i[0] for i in images] == ["figure-fig3_5_8", "figure-fig7", "figure-policies"]
        assert all(complete and width > 100 for _, complete, width in images)
        cells = loaded.cells("td[data-table]")
        tables = {c["table"] for c in cells}
        assert tables == {"policies.csv", "pll.csv"}  # curves.csv is too wide, and listed
        frames = {name: pd.read_csv(folder / name) for name in tables}
        for c in cells:
            df = frames[c["table"]]
            value = df[c["key"]].iloc[int(c["row"])]
            value = value.item() if hasattr(value, "item") else value
            assert same(c["value"], value), (c, value)
            ci_col = f"{c['key']}.ci95"
            if ci_col in df.columns:
                ci = df[ci_col].iloc[int(c["row"])]
                assert c["text"] == f"{number(value)} ± {number(ci)}"
            else:
                assert c["text"] == number(value)
        assert len(cells) == sum(len(df) * len(df.columns) for df in frames.values()) - 2 * len(
            frames["pll.csv"]
        )
        assert f"irqlab reproduce emmerich2015 --out {folder} --quick" in loaded.text("#rerun")
    finally:
        loaded.close()


# --- what the command says ---------------------------------------------------------------------


def test_default_output_is_beside_the_results(work, run_json, sweep_dir):
    r = ok("report", run_json)
    assert (work / "r.html").stat().st_size > 1e6
    assert r.output.startswith(f"wrote {work / 'r.html'} (run, ")
    ok("report", sweep_dir)
    assert (sweep_dir / "report.html").exists()


def test_a_reproduction_without_plots_does_not_carry_plotly(emmerich2015_quick, tmp_path):
    ok("report", emmerich2015_quick, "-o", tmp_path / "r.html")
    assert "Plotly" not in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: None, "not an irqlab results folder"),
        (lambda d: (d / "sweep.json").write_text("{}"), "a sweep folder without runs.parquet"),
        (lambda d: (d / "tune.json").write_text("{}"), "a tune folder without candidates.csv"),
        (
            lambda d: (d / "README.md").write_text(
                "# x\n\nA quick (coarse) reproduction by `irqlab reproduce emmerich2015`.\n\n"
                "- `fig7.png`, `pll.csv`: ...\n"
            ),
            "a reproduction folder without fig7.png, pll.csv",
        ),
        (lambda d: (d / "README.md").write_text("# my notes\n"), "not an irqlab results folder"),
    ],
)
def test_damaged_or_unknown_folders_are_one_line(tmp_path, make, message):
    make(tmp_path)
    r = invoke("report", tmp_path)
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and message in r.output, r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "not a run's JSON report"),
        ('{"scheme": "napi"}', "not a run's JSON report"),
    ],
)
def test_a_file_that_is_not_a_run_report_is_one_line(tmp_path, content, message):
    (tmp_path / "r.json").write_text(content)
    r = invoke("report", tmp_path / "r.json")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and message in r.output, r.output


def test_a_damaged_table_is_one_line(work, sweep_dir, tmp_path):
    broken = tmp_path / "sweep"
    shutil.copytree(sweep_dir, broken)
    (broken / "summary.parquet").write_bytes(b"not parquet")
    r = invoke("report", broken, "-o", tmp_path / "x.html")
    assert r.exit_code == 2 and "summary.parquet: cannot read it" in r.output, r.output
    r = invoke("report", tmp_path / "missing")
    assert r.exit_code == 2 and "no such file or directory" in r.output


def test_toml_text_reads_back():
    tree = {
        "scheme": "napi",
        "odd": 'a "quoted"\\ line\nwith\ttabs and \x7f and é',
        "run": {"seed": 1, "duration_ms": 0.1, "warmup_ms": 1e-9},
        "nic": {"irq_affinity": [0, 1], "empty": [], "on": True},
        "x": {"inf": math.inf, "big": 1e300},
        "app": [{"core": 0, "flows": [1, 2]}, {"core": 1}],
        "traffic": {"rate_pps": 5e4, "classes": [{"share": 0.5}, {"share": 0.5}]},
        "axes": {"traffic.rate_pps": [1, 2], "nic.irq_affinity": [[0, 1], [1, 1]]},
    }
    assert tomllib.loads(toml_text(tree)) == tree


def test_a_tune_that_found_nothing_lists_the_closest(work, tmp_path):
    out = tmp_path / "tune"
    args = [a for a in TUNE_ARGS if a not in ("latency_us.p99 <= 50",)]
    args[args.index("--slo") + 1 : args.index("--slo") + 1] = ["latency_us.p99 <= 0.001"]
    ok("tune", EMMERICH, *args, "--out", out)
    html = render_report(out)
    assert "No candidate meets every SLO. The closest" in html
    assert html.count("<dt>") == 4  # the four candidates, closest first


def test_a_reproduction_folder_is_read_from_its_readme(tmp_path):
    """Files the README names by pattern, a headline table with intervals, figures."""
    from matplotlib.figure import Figure

    (tmp_path / "README.md").write_text(
        "# A study\n\nA full reproduction by `irqlab reproduce salah2007`.\n\n"
        "- `fig6.png`: a <figure> & more.\n- `fig10_*.csv`: the parameter sweeps.\n"
        "- `headline.csv`, `headline.md`: the headline numbers.\n"
    )
    fig = Figure(figsize=(8, 2))
    fig.subplots().plot([1, 2], [3, 4])
    fig.savefig(tmp_path / "fig6.png")
    pd.DataFrame({"rate": [1.0, 2.0], "x": [3.0, 4.0]}).to_csv(tmp_path / "fig10_Q.csv")
    headline = pd.DataFrame(
        {"quantity": ["cliff"], "simulation": [126.4321], "simulation.ci95": [0.2411]}
    )
    headline.to_csv(tmp_path / "headline.csv", index=False)
    (tmp_path / "headline.md").write_text("| quantity |\n")
    html = render_report(tmp_path)
    assert "<h1>A study</h1>" in html
    assert "a &lt;figure&gt; &amp; more." in html
    assert 'class="wide"' in html  # a figure four times as wide as tall spans the page
    assert "126.4 ± 0.2411" in html and 'data-ci="0.2411"' in html
    assert "table-fig10_Q" in html
    assert "irqlab reproduce salah2007 --out" in html and "--quick" not in html
    (tmp_path / "fig10_Q.csv").unlink()
    r = invoke("report", tmp_path)
    assert r.exit_code == 2 and "a reproduction folder without fig10_*.csv" in r.output
