"""ttlpred.plot: each Display drawn with matplotlib's Agg backend and checked for what it must
show (bars from zero, the alpha line, percent ticks, log axes, the y = x line) and saved as a
PNG; not a pixel golden."""
import numpy as np
import pytest

import ttlpred

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ttlpred import plot  # noqa: E402


@pytest.fixture(scope="module")
def result(alice_model, alice_csv):
    return ttlpred.evaluate(alice_model, alice_csv, split=0.8)


def saved_png(display, workdir, name):
    path = workdir / f"{name}.png"
    display.figure_.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    plt.close(display.figure_)


def test_kill_rate_display_draws_alpha_from_zero_in_percent(result, workdir):
    d = plot.KillRateDisplay.from_evaluation(result)
    assert d.names[0] == "all jobs" and d.kill_rates[0] == result["kill_rate"]
    assert d.names[1:] == [g["name"] for g in sorted(result["groups"], key=lambda g: -g["rows_scored"])][:12]
    assert d.ax_.get_ylim()[0] == 0
    lines = [l for l in d.ax_.get_lines() if l.get_linestyle() == "--"]
    assert len(lines) == 1 and lines[0].get_ydata()[0] == pytest.approx(0.01)
    d.figure_.canvas.draw()
    assert any(t.get_text().endswith(" %") for t in d.ax_.get_yticklabels())
    assert "1 %" in d.ax_.get_legend().get_texts()[0].get_text()
    saved_png(d, workdir, "kill-rate")


def test_runtime_error_display_shows_our_bar_next_to_the_request(result, workdir):
    d = plot.RuntimeErrorDisplay.from_evaluation(result)
    assert d.rmse_hours[0] == result["rmse_hours"] and d.request_rmse_hours[0] == result["baseline_rmse_hours"]
    assert d.ax_.get_ylim()[0] == 0
    heights = [p.get_height() for p in d.ax_.patches]
    assert heights[0] == pytest.approx(result["rmse_hours"]) and min(heights) >= 0
    saved_png(d, workdir, "runtime-error")


def test_predicted_vs_actual_is_log_log_with_the_diagonal(result, workdir):
    d = plot.PredictedVsActualDisplay.from_evaluation(result)
    assert d.ax_.get_xscale() == d.ax_.get_yscale() == "log"
    diagonal = d.ax_.get_lines()[0]
    np.testing.assert_array_equal(diagonal.get_xdata(), diagonal.get_ydata())
    assert len(d.wall_s) == result["rows_scored"]
    saved_png(d, workdir, "predicted-vs-actual")


def test_calibration_display_evaluates_each_alpha(alice_model, alice_csv, workdir):
    alphas = (0.01, 0.05, 0.2)
    d = plot.CalibrationDisplay.from_model(alice_model, alice_csv, alphas=alphas)
    for a, k in zip(alphas, d.kill_rates):
        assert k == ttlpred.evaluate(ttlpred.Predictor(alice_model, alpha=a), alice_csv)["kill_rate"]
    assert np.all(np.diff(d.ttl_over_request) <= 1e-12)  # a larger alpha never loosens the TTL
    left, right = d.axes_
    assert left.get_xscale() == left.get_yscale() == "log" and right.get_ylim()[0] == 0
    saved_png(d, workdir, "calibration")
