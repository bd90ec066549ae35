"""`ttlpred report --out DIR`: a self-contained report.html (inline SVG, no scripts, no
network) whose every chart is labelled; rendered in headless Chromium where it is installed
(a screenshot, and the SVG elements counted in the rendered page)."""
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import cli

CHARTS = ["Predicted vs actual run time", "Run-time error by", "Calibration: kill rate against alpha",
          "Kill rate against TTL tightness", "Safe-TTL kill rate by", "Serving latency per engine variant"]


@pytest.fixture(scope="module")
def report_html(workdir, alice_csv, alice_model):
    out = workdir / "report"
    printed = cli("report", "--model", alice_model, "--data", alice_csv, "--out", out, "--bench-seconds", 0.02)
    assert "6 charts" in printed
    return out / "report.html"


def svgs(html):
    return re.findall(r"<svg.*?</svg>", html, flags=re.S)


def test_report_is_self_contained(report_html):
    html = report_html.read_text()
    assert "<script" not in html.lower()
    assert re.findall(r"(?:src|href)=", html) == []  # no external resource of any kind
    assert re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", html).count("http") == 0


def test_every_chart_is_present_and_labelled(report_html):
    charts = svgs(report_html.read_text())
    assert len(charts) == len(CHARTS)
    for svg, title in zip(charts, CHARTS):
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
        assert any(t.startswith(title) for t in texts), title
        assert any("(" in t and t.endswith(")") for t in texts), f"{title}: no axis title with a unit"
        assert len(re.findall(r"<rect|<polyline|<circle", svg)) > 3, f"{title}: no marks"
        assert "<title>" in svg
    density = charts[0]
    assert "perfect prediction" in density and "(s)" in density


def test_chromium_renders_every_chart(report_html, workdir):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        pytest.skip("chromium not installed (Debian package chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             f"--user-data-dir={workdir / 'chromium-profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", report_html.as_uri()], check=True, capture_output=True, text=True,
                         timeout=120).stdout
    assert len(re.findall(r"<svg\b", dom)) == len(CHARTS)
    assert len(re.findall(r"<figcaption>", dom)) == len(CHARTS)
    shot = workdir / "report.png"
    subprocess.run(flags + [f"--screenshot={shot}", "--window-size=900,3600", report_html.as_uri()], check=True,
                   capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 50_000  # six drawn charts, not a blank page
    keep = pathlib.Path(report_html).with_name("report.png")
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
