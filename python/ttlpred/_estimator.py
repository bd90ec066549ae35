"""``TTLRegressor``: ttlpred as a scikit-learn estimator (docs/python.md, "As a scikit-learn estimator").

Its parameters are every option of ``ttlpred train`` (read from the command's own declaration
through ``_core.train_option_defaults()``, so a new training option is a new parameter with no
edit here) plus the prediction options of ``Predictor``. ``fit`` trains on every job of the
frame it is given (the command's ``--split 1``; the tail of those jobs is still held out for
the safe TTL's calibration, as always) and keeps the model in memory as a model file's bytes,
so the estimator pickles (joblib, multiprocessing) and ``clone`` works. scikit-learn is not
needed to use it; with scikit-learn installed it is a ``BaseEstimator`` and ``RegressorMixin``.

Job data is time-ordered: the history features of a job come from the jobs that finished
before it, so cross-validation must not train on the future (``TimeSeriesSplit``), and the
frame passed to ``predict`` is the jobs to answer, in any order, after those trained on.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Mapping, Optional

import numpy as np

from . import _core
from ._columns import to_table

try:  # scikit-learn is optional: with it the estimator takes part in its machinery
    from sklearn.base import BaseEstimator as _Base, RegressorMixin as _Mixin
    from sklearn.exceptions import NotFittedError
    _BASES: tuple = (_Mixin, _Base)
except ImportError:  # pragma: no cover - exercised where scikit-learn is absent
    _BASES = (object,)

    class NotFittedError(ValueError, AttributeError):
        """The estimator was used before ``fit`` (scikit-learn's exception where it is installed)."""


def _typed(value: Any) -> Any:
    """A default as the command prints it, as the Python value it stands for ("200" -> 200)."""
    if isinstance(value, bool):
        return value
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value


# The training options, spelt with "_", and their defaults. quiet is True here as in ttlpred.train:
# an estimator in a search loop prints nothing unless asked.
_TRAIN_DEFAULTS: Dict[str, Any] = {name: _typed(v) for name, v in _core.train_option_defaults().items()}
_TRAIN_DEFAULTS["quiet"] = True
_PREDICT_DEFAULTS: Dict[str, Any] = {"alpha": _core.DEFAULT_ALPHA, "variant": "auto", "isa": "",
                                     "max_ttl_s": _core.DEFAULT_MAX_TTL_S, "min_seconds": _core.DEFAULT_MIN_SECONDS}
_OTHER_DEFAULTS: Dict[str, Any] = {"columns": None}
_PARAMS: Dict[str, Any] = {**_TRAIN_DEFAULTS, **_PREDICT_DEFAULTS, **_OTHER_DEFAULTS}


class TTLRegressor(*_BASES):  # type: ignore[misc]
    """Expected run time and safe TTL of grid jobs, trained and answered by ttlpred.

    Parameters: every ``ttlpred train`` option without dashes (``hidden="256,256,256"``,
    ``epochs``, ``lr``, ``seed``, ``threads``, ``group_by``, ``at``, ``residual`` ("on"/"off" or
    a bool), ``quantiles``, ``qat``, ...; ``quiet`` defaults to True), the ``Predictor`` options
    ``alpha``, ``variant``, ``isa``, ``max_ttl_s``, ``min_seconds``, and ``columns`` (a mapping
    from the frame's column names to schema fields). ``X`` is a job frame (a DataFrame or a
    dict of arrays) with the schema's fields; ``y``, where given, is the run time in seconds
    and replaces the frame's ``wall_s``.

    Fitted attributes: ``predictor_`` (a ``ttlpred.Predictor``), ``training_report_``.
    """

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(_PARAMS))
        if unknown:
            raise TypeError(f"TTLRegressor got unknown parameters {unknown} (parameters: {', '.join(_PARAMS)})")
        for name, default in _PARAMS.items():
            setattr(self, name, params.get(name, default))

    # scikit-learn reads the parameters from __init__'s signature: every one, keyword-only.
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] +
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default) for name, default in _PARAMS.items()])

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params: Any) -> "TTLRegressor":
        for name, value in params.items():
            if name not in _PARAMS:
                raise ValueError(f"Invalid parameter {name!r} for TTLRegressor (parameters: {', '.join(_PARAMS)})")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        changed = {k: getattr(self, k) for k, d in _PARAMS.items() if getattr(self, k) != d}
        return "TTLRegressor(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    def _more_tags(self) -> Dict[str, Any]:
        # Job frames with named fields, not numeric matrices; y may come inside the frame.
        return {"requires_y": False, "X_types": ["dataframe"], "non_deterministic": False}

    def fit(self, X: Any, y: Optional[Any] = None) -> "TTLRegressor":
        """Trains on every job of ``X`` (``ttlpred train --split 1``) and keeps the model in memory."""
        options = {k: getattr(self, k) for k, d in _TRAIN_DEFAULTS.items() if getattr(self, k) != d or k == "quiet"}
        report = _core.train(to_table(self._with_target(X, y), self.columns), "", 1.0, options)
        from . import Predictor
        self.predictor_ = Predictor.from_bytes(report.pop("model_bytes"), name="TTLRegressor.fit",
                                               **{k: getattr(self, k) for k in _PREDICT_DEFAULTS})
        self.training_report_ = report
        return self

    def predict_frame(self, X: Any) -> Any:
        """Expected wall time, safe TTL (seconds) and ``capped`` per job, as ``ttlpred predict`` gives
        them: a DataFrame on ``X``'s index (a dict of arrays where ``X`` is not a DataFrame)."""
        out = self._fitted().predict(X, self.columns)
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover
            return out
        return pd.DataFrame(out, index=X.index if isinstance(X, pd.DataFrame) else None)

    def predict(self, X: Any) -> np.ndarray:
        """Expected wall time of each job, in seconds."""
        return self._fitted().predict(X, self.columns)["expected_wall_s"]

    def predict_ttl(self, X: Any) -> np.ndarray:
        """Safe TTL of each job, in seconds (at most ``alpha`` of the jobs outlive it)."""
        return self._fitted().predict(X, self.columns)["safe_ttl_s"]

    def score(self, X: Any, y: Optional[Any] = None, sample_weight: Optional[Any] = None) -> float:
        """R^2 of the expected wall times against ``y`` (or the frame's ``wall_s``), jobs with a run time only."""
        truth = np.asarray(y if y is not None else self._column(X, "wall_s"), dtype=float)
        pred = self.predict(X)
        keep = np.isfinite(truth)
        w = np.ones_like(truth) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        t, p, w = truth[keep], pred[keep], w[keep]
        total = np.sum(w * (t - np.average(t, weights=w)) ** 2)
        return float(1.0 - np.sum(w * (t - p) ** 2) / total) if total > 0 else float("nan")

    def _fitted(self):
        if not hasattr(self, "predictor_"):
            raise NotFittedError("This TTLRegressor is not fitted yet: call fit(jobs) first")
        return self.predictor_

    def _column(self, X: Any, field: str) -> Any:
        names = {v: k for k, v in (self.columns or {}).items()}
        return X[names.get(field, field)]

    def _with_target(self, X: Any, y: Optional[Any]) -> Any:
        if y is None:
            return X
        name = {v: k for k, v in (self.columns or {}).items()}.get("wall_s", "wall_s")
        values = np.asarray(y, dtype=float)
        if isinstance(X, Mapping):
            out = dict(X)
            out[name] = values
            return out
        out = X.copy()
        out[name] = values
        return out
