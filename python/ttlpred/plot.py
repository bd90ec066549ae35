"""matplotlib Displays of the report's figures (docs/python.md, "Plots"; docs/report.md).

Each is built from what ``ttlpred.evaluate`` returns (``from_evaluation``) or from a model and
a trace (``from_model``: it evaluates at several alphas), and drawn with ``plot(ax=None)``,
as scikit-learn's Displays are: the object keeps its numbers (attributes without a trailing
underscore) and, once drawn, ``ax_`` and ``figure_``. The figures follow the report's rules:
bars start at zero, the alpha target is drawn, kill rates read as percentages, and the axis
is the one where the difference shows (a log axis where values span decades).

Needs matplotlib (Debian's python3-matplotlib); importing ``ttlpred`` does not.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _core

__all__ = ["PredictedVsActualDisplay", "RuntimeErrorDisplay", "KillRateDisplay", "CalibrationDisplay"]

# The report's palette (src/report/): ttlpred, the request (static TTL), the target.
OURS, REQUEST, TARGET = "#1f77b4", "#bbbbbb", "#d62728"


def _largest_groups(result: Dict[str, Any], max_groups: int) -> List[Dict[str, Any]]:
    """The evaluation's groups with the most scored jobs first, at most `max_groups` of them."""
    return sorted(result.get("groups", []), key=lambda g: -g["rows_scored"])[:max_groups]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    return ax


def _percent(v: float) -> str:
    """A share as people write it: 0.5 %, 1 %, 1.46 %, 0.01 % (three significant digits)."""
    return f"{100 * v:.3g} %"


def _percent_axis(axis) -> None:
    from matplotlib.ticker import FuncFormatter
    axis.set_major_formatter(FuncFormatter(lambda v, _: _percent(v)))


# A kill rate of 0 has no place on a log axis: such points are drawn hollow at this floor.
_LOG_FLOOR = 1e-4


def _group_bars_done(display, ax, x, ylabel: str, title: str):
    """The last steps of a per-group bar chart: group names under the bars, labels, legend; the
    display keeps its axes and figure, as scikit-learn's Displays do."""
    ax.set_xticks(x, display.names, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    display.ax_, display.figure_ = ax, ax.figure
    return display


def _log_points(ax, x, y, zero_in: str, **style) -> None:
    """A line on a log axis whose zero kill rates (in `zero_in`, "x" or "y") are drawn hollow at
    the floor and named in the legend, so that 0 does not read as 0.01 %."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rate = x if zero_in == "x" else y
    zero = rate <= 0
    floored = np.where(zero, _LOG_FLOOR, rate)
    xs, ys = (floored, y) if zero_in == "x" else (x, floored)
    ax.plot(xs, ys, **style)
    if zero.any():
        label = "no job killed (drawn at 0.01 %)"
        ax.plot(xs[zero], ys[zero], linestyle="none", marker=style.get("marker", "o"), markersize=9,
                markerfacecolor="white", markeredgecolor=style.get("color"),
                label=None if label in ax.get_legend_handles_labels()[1] else label)


class PredictedVsActualDisplay:
    """Predicted against actual run time of the scored jobs: a log-log 2-D histogram (shade = log
    job count) with the y = x line, as the report's first figure."""

    def __init__(self, wall_s: Sequence[float], expected_wall_s: Sequence[float]):
        self.wall_s = np.asarray(wall_s, dtype=float)
        self.expected_wall_s = np.asarray(expected_wall_s, dtype=float)

    @classmethod
    def from_evaluation(cls, result: Dict[str, Any], ax=None) -> "PredictedVsActualDisplay":
        jobs = result["per_job"]
        return cls(jobs["wall_s"], jobs["expected_wall_s"]).plot(ax)

    def plot(self, ax=None) -> "PredictedVsActualDisplay":
        ax = _axes(ax)
        keep = np.isfinite(self.wall_s) & np.isfinite(self.expected_wall_s)
        x = np.maximum(self.wall_s[keep], 1.0) / 3600
        y = np.maximum(self.expected_wall_s[keep], 1.0) / 3600
        ax.hexbin(x, y, xscale="log", yscale="log", bins="log", gridsize=40, cmap="Blues", mincnt=1)
        lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
        ax.plot([lo, hi], [lo, hi], color=TARGET, linestyle="--", label="y = x")
        ax.set_xlabel("actual run time (h)")
        ax.set_ylabel("predicted run time (h)")
        ax.set_title("Predicted vs actual run time")
        ax.legend(loc="upper left")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class RuntimeErrorDisplay:
    """RMSE of the prediction next to the request as the prediction (the static TTL), overall
    and for the largest groups; bars from zero."""

    def __init__(self, names: Sequence[str], rmse_hours: Sequence[float], request_rmse_hours: Sequence[float]):
        self.names = list(names)
        self.rmse_hours = np.asarray(rmse_hours, dtype=float)
        self.request_rmse_hours = np.asarray(request_rmse_hours, dtype=float)

    @classmethod
    def from_evaluation(cls, result: Dict[str, Any], max_groups: int = 12, ax=None) -> "RuntimeErrorDisplay":
        rows = [("all jobs", result["rmse_hours"], result["baseline_rmse_hours"])]
        groups = _largest_groups(result, max_groups)
        rows += [(g["name"], g["rmse_hours"], g["baseline_rmse_hours"]) for g in groups]
        return cls(*zip(*rows)).plot(ax)

    def plot(self, ax=None) -> "RuntimeErrorDisplay":
        ax = _axes(ax)
        x = np.arange(len(self.names))
        ax.bar(x - 0.2, self.rmse_hours, width=0.4, color=OURS, label="ttlpred")
        ax.bar(x + 0.2, np.nan_to_num(self.request_rmse_hours), width=0.4, color=REQUEST, label="request as the prediction")
        ax.set_ylim(bottom=0)
        return _group_bars_done(self, ax, x, "RMSE (h)", "Run-time error")


class KillRateDisplay:
    """The safe TTL's kill rate, overall and per group, against the target alpha (a red line);
    bars from zero, percent axis."""

    def __init__(self, names: Sequence[str], kill_rates: Sequence[float], alpha: float,
                 rows: Optional[Sequence[int]] = None):
        self.names = list(names)
        self.kill_rates = np.asarray(kill_rates, dtype=float)
        self.alpha = float(alpha)
        self.rows = list(rows) if rows is not None else None

    @classmethod
    def from_evaluation(cls, result: Dict[str, Any], max_groups: int = 12, ax=None) -> "KillRateDisplay":
        groups = _largest_groups(result, max_groups)
        names = ["all jobs"] + [g["name"] for g in groups]
        rates = [result["kill_rate"]] + [g["kill_rate"] for g in groups]
        rows = [result["rows_scored"]] + [g["rows_scored"] for g in groups]
        return cls(names, rates, result["alpha"], rows).plot(ax)

    def plot(self, ax=None) -> "KillRateDisplay":
        ax = _axes(ax)
        x = np.arange(len(self.names))
        colors = [TARGET if r > 2 * self.alpha else OURS for r in self.kill_rates]
        bars = ax.bar(x, self.kill_rates, color=colors)
        ax.bar_label(bars, labels=[_percent(r) for r in self.kill_rates], padding=2, fontsize=8)
        ax.axhline(self.alpha, color=TARGET, linestyle="--", label=f"target alpha {_percent(self.alpha)}")
        ax.set_ylim(0, max(2.5 * self.alpha, 1.15 * float(np.nanmax(self.kill_rates, initial=0.0))))
        _percent_axis(ax.yaxis)
        return _group_bars_done(self, ax, x, "jobs killed by the safe TTL", "Safe-TTL kill rate")


class CalibrationDisplay:
    """The safe TTL calibrated at several alphas: its kill rate against alpha (log-log, with the
    ideal diagonal), and its mean TTL against its kill rate next to "request x factor", the
    tightness that a kill rate buys. ``plot`` draws both on two axes."""

    def __init__(self, alphas: Sequence[float], kill_rates: Sequence[float], ttl_over_request: Sequence[float],
                 factor_kill_rates: Sequence[float], factors: Sequence[float]):
        self.alphas = np.asarray(alphas, dtype=float)
        self.kill_rates = np.asarray(kill_rates, dtype=float)
        self.ttl_over_request = np.asarray(ttl_over_request, dtype=float)
        self.factors = np.asarray(factors, dtype=float)
        self.factor_kill_rates = np.asarray(factor_kill_rates, dtype=float)

    @classmethod
    def from_model(cls, model: Any, data: Any, split: float = _core.DEFAULT_SPLIT,
                   alphas: Sequence[float] = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2),
                   factors: Sequence[float] = (0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0), axes=None,
                   **evaluate_options: Any) -> "CalibrationDisplay":
        """``model``: a Predictor or a model path (loaded again at each alpha with its options)."""
        from . import Predictor, evaluate
        path = model.path if isinstance(model, Predictor) else str(model)
        options = dict(model._options) if isinstance(model, Predictor) else {}
        kills: List[float] = []
        tight: List[float] = []
        jobs = None
        for a in alphas:
            options["alpha"] = float(a)
            r = evaluate(Predictor(path, **options), data, split, **evaluate_options)
            kills.append(r["kill_rate"])
            tight.append(r["mean_safe_ttl_hours"] / r["mean_requested_ttl_hours"])
            jobs = r["per_job"]
        wall, req = np.asarray(jobs["wall_s"], float), np.asarray(jobs["requested_ttl_s"], float)
        has = req > 0
        factor_kills = [float(np.mean((wall[has] > f * req[has]) & (wall[has] <= req[has]))) for f in factors]
        return cls(alphas, kills, tight, factor_kills, factors).plot(axes)

    def plot(self, axes=None) -> "CalibrationDisplay":
        if axes is None:
            import matplotlib.pyplot as plt
            _, axes = plt.subplots(1, 2, figsize=(11, 4.0))
        left, right = axes
        _log_points(left, self.alphas, self.kill_rates, "y", marker="o", color=OURS, label="safe TTL")
        left.plot(self.alphas, self.alphas, color=TARGET, linestyle="--", label="kill rate = alpha")
        left.set_xscale("log")
        left.set_yscale("log")
        _percent_axis(left.xaxis)
        _percent_axis(left.yaxis)
        left.set_xlabel("alpha (target kill rate)")
        left.set_ylabel("kill rate on the scored jobs")
        left.set_title("Calibration: kill rate against alpha")
        left.legend()
        _log_points(right, self.kill_rates, self.ttl_over_request, "x", marker="o", color=OURS,
                    label="safe TTL at each alpha")
        _log_points(right, self.factor_kill_rates, self.factors, "x", marker="s", color=REQUEST,
                    label="request x factor")
        right.set_xscale("log")
        _percent_axis(right.xaxis)
        right.set_ylim(0, 1.05)
        right.set_xlabel("kill rate")
        right.set_ylabel("mean TTL / mean request")
        right.set_title("Kill rate against TTL tightness")
        right.legend()
        self.axes_, self.figure_ = axes, left.figure
        return self
