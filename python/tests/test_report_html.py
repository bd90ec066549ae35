"""report.html of `ttlpred report`, `backtest --out` and `simulate --out`: a self-contained
page (inline SVG, no scripts, no network) whose every chart is labelled (title, axis titles
with units, legend, marks); rendered in headless Chromium where it is installed (a
screenshot, and the SVG elements counted in the rendered page)."""
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import cli

CHARTS = ["Predicted vs actual run time", "Run-time error by", "Calibration: kill rate against alpha",
          "Kill rate against TTL tightness", "Safe-TTL kill rate by", "Serving latency per engine variant"]
METHODS = ["static", "rolling", "aci", "aci-capped", "multi-aci", "mondrian"]
# Each page's charts in order: (title, axis titles, legend entries).
PAGES = {
    "report": [(title, [], []) for title in CHARTS],
    "backtest": [
        ("Kill rate per 3-day window", ["window start, since the first scored job (days)", "kill rate (%)"],
         METHODS + ["target alpha 1%"]),
        ("Kill rate per split", ["kill rate (%)"], METHODS),
        ("Run-time error per split", ["RMSE (h)"], ["ttlpred prediction", "static TTL (request)"]),
    ],
    "simulate": [
        ("Utilization per hour", ["time since the first simulated submit (h)", "utilization (%)"], ["busy cores / cores"]),
        ("Queue length per hour", ["queue length (jobs)"], ["waiting jobs"]),
        ("Wasted core-hours per hour", ["waste (core-h)"], ["wasted core-hours"]),
    ],
}


@pytest.fixture(scope="module")
def report_html(workdir, alice_csv, alice_model):
    out = workdir / "report"
    printed = cli("report", "--model", alice_model, "--data", alice_csv, "--out", out, "--bench-seconds", 0.02)
    assert "6 charts" in printed
    return out / "report.html"


@pytest.fixture(scope="module")
def backtest_html(workdir, alice_csv):
    out = workdir / "backtest"
    cli("backtest", "--data", alice_csv, "--splits", "0.6,0.8", "--epochs", 1, "--window-days", 3,
        "--min-window-rows", 50, "--out", out)
    return out / "report.html"


@pytest.fixture(scope="module")
def simulate_html(workdir, alice_csv):
    out = workdir / "simulate"
    cli("simulate", "--data", alice_csv, "--scheduler", "jalien", "--ttl", "static", "--out", out)
    return out / "report.html"


@pytest.fixture(params=list(PAGES))
def page(request):
    return request.param, request.getfixturevalue(f"{request.param}_html")


def svgs(html):
    return re.findall(r"<svg.*?</svg>", html, flags=re.S)


def texts(svg):
    return [t.replace("&amp;", "&") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def marks(svg):
    """Bars and dots, and the points of every line (an hourly series is one line of many points)."""
    points = sum(len(p.split()) for p in re.findall(r'<polyline[^>]*points="([^"]*)"', svg))
    return len(re.findall(r"<rect|<circle", svg)) + points


def test_page_is_self_contained(page):
    html = page[1].read_text()
    assert "<script" not in html.lower()
    assert re.findall(r"(?:src|href)=", html) == []  # no external resource of any kind
    assert re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", html).count("http") == 0


def test_every_chart_is_present_and_labelled(page):
    name, path = page
    charts = svgs(path.read_text())
    assert len(charts) == len(PAGES[name])
    for svg, (title, axes, legend) in zip(charts, PAGES[name]):
        words = texts(svg)
        assert any(t.startswith(title) for t in words), title
        assert any("(" in t and t.endswith(")") for t in words), f"{title}: no axis title with a unit"
        for axis in axes:
            assert axis in words, f"{title}: no axis title {axis!r}"
        for entry in legend:
            assert entry in words, f"{title}: no legend entry {entry!r}"
        assert marks(svg) > 3, f"{title}: no marks"
        assert "<title>" in svg


def test_report_density_chart_says_what_the_diagonal_is(report_html):
    density = svgs(report_html.read_text())[0]
    assert "perfect prediction" in density and "(s)" in density


def test_backtest_windows_are_drawn(backtest_html):
    window_chart = svgs(backtest_html.read_text())[0]
    # A line per method over the windows (4000 jobs over ~6 days: at least two 3-day windows each).
    assert len(re.findall(r"<polyline", window_chart)) >= len(METHODS)


def test_chromium_renders_every_chart(page, workdir):
    name, path = page
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        pytest.skip("chromium not installed (Debian package chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             f"--user-data-dir={workdir / 'chromium-profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", path.as_uri()], check=True, capture_output=True, text=True,
                         timeout=120).stdout
    charts = len(PAGES[name])
    assert len(re.findall(r"<svg\b", dom)) == charts
    assert len(re.findall(r"<figcaption>", dom)) == charts
    shot = workdir / f"{name}.png"
    subprocess.run(flags + [f"--screenshot={shot}", f"--window-size=900,{600 * charts + 600}", path.as_uri()],
                   check=True, capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 15_000 * charts  # drawn charts, not a blank page
    keep = pathlib.Path(path).with_name("report.png")
    keep.write_bytes(data)  # beside the page, for a person to look at


def test_pipeline_writes_the_same_charts(workdir):
    out = workdir / "pipeline"
    cli("pipeline", "--out", out, "--jobs", 3000, "--epochs", 1, "--no-finetune", "--bench-seconds", 0.01)
    html = (out / "report.html").read_text()
    charts = svgs(html)
    assert len(charts) == len(CHARTS)
    for svg, title in zip(charts, CHARTS):
        assert re.search(r">" + re.escape(title), svg), title
    assert "<script" not in html.lower()
    latency = charts[-1]
    assert ">fp32-fused<" in latency and ">int8-static<" in latency  # every variant of the pipeline's table


def test_a_trace_without_groups_names_its_bars_over_all_jobs(workdir, alice_csv):
    """The per-group charts on a trace with no job type, queue or partition (KTH-SP2 is one):
    one bar each, titled over all jobs, the RMSE bar from zero (its axis once started near the
    bar's own height, which hid ttlpred's bar)."""
    import pandas as pd
    trace, model, out = workdir / "ungrouped.csv", workdir / "ungrouped.ttlp", workdir / "ungrouped-report"
    pd.read_csv(alice_csv)[["job_id", "submit_time", "wait_s", "wall_s", "requested_ttl_s", "cpu_cores"]].to_csv(
        trace, index=False)
    cli("train", "--data", trace, "--out", model, "--hidden", "32,32", "--epochs", 1, "--quiet")
    cli("report", "--model", model, "--data", trace, "--out", out, "--bench-seconds", 0.01)
    html = (out / "report.html").read_text()
    assert "Run-time error over all jobs" in html and "Safe-TTL kill rate over all jobs" in html
    assert "by all jobs" not in html and "per all jobs" not in html
    assert "the trace has no group column" in html
    error_chart = next(s for s in svgs(html) if "Run-time error over all jobs" in s)
    assert "0" in texts(error_chart)  # the value axis starts at zero
