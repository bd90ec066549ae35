"""TTLRegressor, the scikit-learn estimator: its parameters are the training command's options,
it trains and answers as ttlpred.train and Predictor do, and it pickles; with scikit-learn
installed (scripts/setup.sh) it works in clone, cross_val_score and joblib."""
import pickle
import re

import numpy as np
import pytest

import ttlpred
from ttlpred._estimator import NotFittedError

from conftest import TRAIN_OPTIONS, cli

# The options of `ttlpred train` that are its input and output, not training: the estimator
# takes the frame instead (and --split: fit trains on all of it).
NOT_PARAMETERS = {"data", "out", "format", "map", "config", "help", "split"}
PREDICT_PARAMETERS = {"alpha", "variant", "isa", "max_ttl_s", "min_seconds", "columns"}


@pytest.fixture(scope="module")
def jobs(alice_csv):
    return ttlpred.read_trace(alice_csv)


@pytest.fixture(scope="module")
def fitted(jobs):
    return ttlpred.TTLRegressor(**TRAIN_OPTIONS).fit(jobs.iloc[:3000])


def cli_train_options():
    """The long options `ttlpred train --help` lists, spelt as Python parameters."""
    names = set(re.findall(r"^\s+(?:-[a-z],)?--([a-z0-9-]+)", cli("train", "--help"), re.MULTILINE))
    return {n.replace("-", "_") for n in names} - NOT_PARAMETERS


def test_every_training_option_of_the_cli_is_a_parameter():
    params = ttlpred.TTLRegressor().get_params()
    assert set(params) - PREDICT_PARAMETERS == cli_train_options()
    # Defaults as the command has them (quiet aside: an estimator prints nothing unless asked).
    assert params["hidden"] == "256,256,256" and params["epochs"] == 30 and params["lr"] == 0.002
    assert params["residual"] == "off" and params["quiet"] is True and params["alpha"] == 0.01


def test_parameters_round_trip_and_unknown_ones_are_refused():
    m = ttlpred.TTLRegressor(epochs=3, residual=True)
    assert m.get_params()["epochs"] == 3 and m.set_params(lr=1e-3) is m and m.lr == 1e-3
    assert repr(m) == "TTLRegressor(epochs=3, lr=0.001, residual=True)"
    with pytest.raises(TypeError, match="epoch"):
        ttlpred.TTLRegressor(epoch=3)
    with pytest.raises(ValueError, match="epoch"):
        m.set_params(epoch=3)
    with pytest.raises(NotFittedError):
        ttlpred.TTLRegressor().predict({})


def test_fit_is_train_on_every_job_and_predict_is_the_predictor(jobs, fitted, workdir):
    path = workdir / "estimator-reference.ttlp"
    ttlpred.train(jobs.iloc[:3000], path, split=1.0, **TRAIN_OPTIONS)
    assert fitted.predictor_.model_bytes() == ttlpred.Predictor(path).model_bytes()
    later = jobs.iloc[3000:]
    reference = ttlpred.Predictor(path).predict(later)
    np.testing.assert_array_equal(fitted.predict(later), reference["expected_wall_s"])
    np.testing.assert_array_equal(fitted.predict_ttl(later), reference["safe_ttl_s"])
    frame = fitted.predict_frame(later)
    assert list(frame.index) == list(later.index)
    assert list(frame.columns) == ["expected_wall_s", "safe_ttl_s", "capped"]
    assert fitted.training_report_["fit_rows"] + fitted.training_report_["calibration_rows"] == 3000
    truth, pred = later["wall_s"].to_numpy(), reference["expected_wall_s"]
    r2 = 1 - np.sum((truth - pred) ** 2) / np.sum((truth - truth.mean()) ** 2)
    assert fitted.score(later) == pytest.approx(r2, rel=1e-12)


def test_y_replaces_the_frames_run_times(jobs):
    """fit(X, y) trains on y: the same model as a frame whose wall_s is y."""
    head = jobs.iloc[:1500]
    with_y = ttlpred.TTLRegressor(**TRAIN_OPTIONS).fit(head.drop(columns=["wall_s"]), head["wall_s"] * 2)
    doubled = head.copy()
    doubled["wall_s"] = head["wall_s"] * 2
    in_frame = ttlpred.TTLRegressor(**TRAIN_OPTIONS).fit(doubled)
    assert with_y.predictor_.model_bytes() == in_frame.predictor_.model_bytes()


def test_pickle_keeps_the_model_and_the_options(jobs, fitted):
    later = jobs.iloc[3000:]
    again = pickle.loads(pickle.dumps(fitted))
    assert again.get_params() == fitted.get_params()
    np.testing.assert_array_equal(again.predict_ttl(later), fitted.predict_ttl(later))
    p = pickle.loads(pickle.dumps(ttlpred.Predictor.from_bytes(fitted.predictor_.model_bytes(), alpha=0.05)))
    assert p.metadata()["alpha"] == 0.05
    with pytest.raises(ttlpred.Error, match="broken bytes"):
        ttlpred.Predictor.from_bytes(fitted.predictor_.model_bytes()[:100], name="broken bytes")


def test_python_train_takes_the_options_the_old_map_lacked(jobs, workdir):
    """ttlpred.train parses the command's declaration: --censored, --ttl-kill-budget ... and bools
    for the on|off options; request_aware_ttl=False is still --no-request-aware-ttl."""
    head = jobs.iloc[:2000]
    report = ttlpred.train(head, workdir / "options.ttlp", split=0.8, censored="on", ttl_kill_budget="cpu-time",
                           request_aware_ttl=False, residual=False, **TRAIN_OPTIONS)
    assert report["fit_rows"] > 0
    with pytest.raises(ttlpred.Error, match="ttl-kill-budget"):
        ttlpred.train(head, workdir / "never.ttlp", ttl_kill_budget="minutes", **TRAIN_OPTIONS)


def test_scikit_learn_clone_cross_validation_and_joblib(jobs, workdir):
    sklearn = pytest.importorskip("sklearn")
    joblib = pytest.importorskip("joblib")
    from sklearn.base import clone
    from sklearn.model_selection import TimeSeriesSplit, cross_val_score
    assert sklearn.__version__
    est = ttlpred.TTLRegressor(**TRAIN_OPTIONS)
    copy = clone(est)
    assert copy.get_params() == est.get_params() and not hasattr(copy, "predictor_")
    # Jobs in submit order: each fold trains on the past and scores the next block.
    ordered = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True).iloc[:3000]
    scores = cross_val_score(est, ordered, ordered["wall_s"], cv=TimeSeriesSplit(n_splits=3),
                             scoring="neg_root_mean_squared_error")
    assert scores.shape == (3,) and np.all(np.isfinite(scores)) and np.all(scores < 0)
    fitted = clone(est).fit(ordered.iloc[:2000])
    path = workdir / "estimator.joblib"
    joblib.dump(fitted, path)
    np.testing.assert_array_equal(joblib.load(path).predict(ordered.iloc[2000:]), fitted.predict(ordered.iloc[2000:]))


def test_scikit_learn_parameter_checks():
    """The checks of check_estimator that apply to an estimator of job frames: its parameters.
    The others feed random numeric matrices (no job fields, no submit order), which a model of
    time-ordered jobs with named fields refuses by design (docs/python.md)."""
    pytest.importorskip("sklearn")
    from sklearn.utils import estimator_checks as checks
    est = ttlpred.TTLRegressor()
    checks.check_parameters_default_constructible("TTLRegressor", est)
    checks.check_get_params_invariance("TTLRegressor", est)
    checks.check_set_params("TTLRegressor", est)
    checks.check_no_attributes_set_in_init("TTLRegressor", est)


def test_the_estimator_example_runs_and_its_model_is_the_clis(alice_csv, workdir):
    """python/examples/estimator.py as docs/python.md shows it: its saved model answers the same
    in `ttlpred predict` as the joblib-loaded estimator."""
    pytest.importorskip("sklearn")
    import os
    import pathlib
    import subprocess
    import sys
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "estimator.py"
    run = workdir / "example"
    run.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, str(example), str(alice_csv)], cwd=run, capture_output=True, text=True,
                          env=dict(os.environ), check=True)
    assert "RMSE h per fold" in done.stdout
    import joblib
    est = joblib.load(run / "kth.joblib")
    rows = cli("predict", "--model", run / "kth-estimator.ttlp", "--data", alice_csv).strip().splitlines()[1:]
    cli_ttl = np.array([float(r.split(",")[2]) for r in rows])
    np.testing.assert_allclose(cli_ttl, est.predict_ttl(ttlpred.read_trace(alice_csv)), atol=0.05)
