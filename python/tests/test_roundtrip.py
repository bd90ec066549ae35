"""Round trips against the CLI: the same model and trace give the same answers from Python
as from `ttlpred predict` / `ttlpred eval` / `ttlpred train`, whichever way the jobs arrive
(a trace path, a DataFrame from read_trace, a column-mapped pandas.read_csv)."""
import io
import json
import os

import numpy as np
import pandas as pd
import pytest

import ttlpred
from conftest import TRAIN_ARGS, TRAIN_OPTIONS, cli


def cli_predictions(model, data):
    return pd.read_csv(io.StringIO(cli("predict", "--model", model, "--data", data, "--format", "csv")),
                       dtype=str, keep_default_na=False)


def assert_same_as_cli(out, reference):
    """The CLI prints %.1f seconds: Python's doubles must print to the very same text."""
    assert len(out["expected_wall_s"]) == len(reference)
    assert ["%.1f" % v for v in out["expected_wall_s"]] == list(reference["expected_wall_s"])
    assert ["%.1f" % v for v in out["safe_ttl_s"]] == list(reference["safe_ttl_s"])
    assert [str(int(c)) for c in out["capped"]] == list(reference["capped"])


def test_read_trace_matches_the_cli_reader(alice_csv):
    frame = ttlpred.read_trace(alice_csv)
    report = frame.attrs["read_report"]
    assert len(frame) == report["rows"] == 4000
    assert frame.attrs["ttlpred_format"] == "csv"
    assert frame["wall_s"].dtype == np.float64
    assert isinstance(frame["job_type"].dtype, pd.CategoricalDtype)
    raw = pd.read_csv(alice_csv, float_precision="round_trip")
    np.testing.assert_array_equal(frame["wall_s"].to_numpy(), raw["wall_s"].to_numpy(dtype=float))
    users = pd.read_csv(alice_csv, usecols=["user"], dtype=str, keep_default_na=False)["user"]
    assert list(frame["user"].astype(object).fillna("")) == list(users)
    arrays = ttlpred.read_trace(alice_csv, as_frame=False)
    assert set(arrays) == set(frame.columns)
    assert list(arrays["job_type"]) == list(frame["job_type"].astype(object))


def test_predict_equals_cli_predict(alice_csv, alice_model):
    model = ttlpred.Predictor(alice_model)
    from_path = model.predict(alice_csv)
    from_frame = model.predict(ttlpred.read_trace(alice_csv))
    for key in ("expected_wall_s", "safe_ttl_s", "capped"):
        np.testing.assert_array_equal(from_path[key], from_frame[key])  # bit for bit
    assert from_path["expected_wall_s"].dtype == np.float64 and len(from_path["safe_ttl_s"]) == 4000
    assert_same_as_cli(from_frame, cli_predictions(alice_model, alice_csv))


def test_column_mapped_read_csv_equals_cli(alice_csv, alice_model, workdir):
    # An accounting export with its own column names, read by pandas, mapped to the schema.
    raw = pd.read_csv(alice_csv, float_precision="round_trip")
    names = {c: "x_" + c for c in raw.columns}
    export = raw.rename(columns=names)
    mapping = {v: k for k, v in names.items()}
    out = ttlpred.Predictor(alice_model).predict(export, columns=mapping)
    np.testing.assert_array_equal(out["safe_ttl_s"], ttlpred.Predictor(alice_model).predict(alice_csv)["safe_ttl_s"])
    assert_same_as_cli(out, cli_predictions(alice_model, alice_csv))


def test_predict_options_match_cli(alice_csv, alice_model):
    model = ttlpred.Predictor(alice_model, variant="int8-dynamic", alpha=0.05, max_ttl_s=36000)
    out = model.predict(alice_csv)
    ref = pd.read_csv(io.StringIO(cli("predict", "--model", alice_model, "--data", alice_csv, "--variant", "int8-dynamic",
                                      "--alpha", 0.05, "--max-ttl", 36000)), dtype=str, keep_default_na=False)
    assert_same_as_cli(out, ref)
    assert model.metadata()["variant"] == "int8-dynamic"


@pytest.mark.parametrize("calibration", [None, "static", "aci-log"])
def test_evaluate_equals_cli_eval(alice_csv, alice_model, calibration):
    """The default calibration (the service's), and others by eval --calibration's names."""
    flags = () if calibration is None else ("--calibration", calibration)
    ref = json.loads(cli("eval", "--model", alice_model, "--data", alice_csv, "--split", 0.8, "--json", *flags))
    got = ttlpred.evaluate(alice_model, ttlpred.read_trace(alice_csv), split=0.8, calibration=calibration)
    for key in ("rows_scored", "kill_rate", "rmse_hours", "mae_hours", "mean_safe_ttl_hours", "baseline_rmse_hours",
                "variant", "alpha", "kill_rate_above_alpha", "calibration"):
        assert got[key] == ref[key], key
    assert len(got["per_job"]) == ref["rows_scored"]


def test_evaluate_refuses_an_unknown_calibration_by_name(alice_csv, alice_model):
    with pytest.raises(ttlpred.Error, match="nope"):
        ttlpred.evaluate(alice_model, alice_csv, calibration="nope")


def test_python_training_equals_cli_training(alice_csv, alice_model, workdir):
    path = workdir / "from-python.ttlp"
    report = ttlpred.train(ttlpred.read_trace(alice_csv), path, split=0.8, **TRAIN_OPTIONS)
    assert report["fit_rows"] > 0 and report["model"] == str(path)
    ours = ttlpred.Predictor(path).predict(alice_csv)
    theirs = ttlpred.Predictor(alice_model).predict(alice_csv)
    np.testing.assert_array_equal(ours["safe_ttl_s"], theirs["safe_ttl_s"])
    np.testing.assert_array_equal(ours["expected_wall_s"], theirs["expected_wall_s"])


def test_python_residual_training_equals_cli(alice_csv, workdir):
    """residual=True, request_key=True is `train --residual on --request-key on`: the same
    network, base and answers."""
    ours, theirs = workdir / "residual-python.ttlp", workdir / "residual-cli.ttlp"
    ttlpred.train(ttlpred.read_trace(alice_csv), ours, split=0.8, residual=True, request_key=True, **TRAIN_OPTIONS)
    cli("train", "--data", alice_csv, "--out", theirs, "--split", 0.8, "--residual", "on", "--request-key", "on",
        *TRAIN_ARGS)
    a, b = ttlpred.Predictor(ours), ttlpred.Predictor(theirs)
    assert a.metadata()["metrics"]["residual_base"] == b.metadata()["metrics"]["residual_base"] != {}
    np.testing.assert_array_equal(a.predict(alice_csv)["expected_wall_s"], b.predict(alice_csv)["expected_wall_s"])


def test_python_match_time_censored_rates_equal_cli(alice_csv, workdir):
    """at="match", censored_rates=True, system_key=True is `train --at match --censored-rates on
    --system-key on`: the same network, base and answers, and predictions at match time."""
    ours, theirs = workdir / "censored-python.ttlp", workdir / "censored-cli.ttlp"
    ttlpred.train(ttlpred.read_trace(alice_csv), ours, split=0.8, at="match", residual=True, censored_rates=True,
                  system_key=True, **TRAIN_OPTIONS)
    cli("train", "--data", alice_csv, "--out", theirs, "--split", 0.8, "--at", "match", "--residual", "on",
        "--censored-rates", "on", "--system-key", "on", *TRAIN_ARGS)
    a, b = ttlpred.Predictor(ours), ttlpred.Predictor(theirs)
    assert a.metadata()["metrics"]["prediction_time"] == "match"
    assert a.metadata()["metrics"]["residual_base"] == b.metadata()["metrics"]["residual_base"]
    np.testing.assert_array_equal(a.predict(alice_csv)["expected_wall_s"], b.predict(alice_csv)["expected_wall_s"])
    with pytest.raises(Exception, match="match time"):
        ttlpred.train(ttlpred.read_trace(alice_csv), workdir / "x.ttlp", split=0.8, censored_rates=True,
                      **TRAIN_OPTIONS)


def test_python_piecewise_bins_equal_cli(alice_csv, workdir):
    """piecewise_bins=6 is `train --piecewise-bins 6`: the same network and answers; a model
    without them answers differently (the bins reach the network); one bin is refused."""
    ours, theirs = workdir / "bins-python.ttlp", workdir / "bins-cli.ttlp"
    ttlpred.train(ttlpred.read_trace(alice_csv), ours, split=0.8, piecewise_bins=6, **TRAIN_OPTIONS)
    cli("train", "--data", alice_csv, "--out", theirs, "--split", 0.8, "--piecewise-bins", 6, *TRAIN_ARGS)
    a = ttlpred.Predictor(ours).predict(alice_csv)["expected_wall_s"]
    np.testing.assert_array_equal(a, ttlpred.Predictor(theirs).predict(alice_csv)["expected_wall_s"])
    plain = workdir / "bins-none.ttlp"
    ttlpred.train(ttlpred.read_trace(alice_csv), plain, split=0.8, **TRAIN_OPTIONS)
    assert not np.array_equal(a, ttlpred.Predictor(plain).predict(alice_csv)["expected_wall_s"])
    with pytest.raises(ttlpred.Error, match="piecewise-bins"):
        ttlpred.train(ttlpred.read_trace(alice_csv), workdir / "x.ttlp", split=0.8, piecewise_bins=1,
                      **TRAIN_OPTIONS)


def test_metadata_names_the_training(alice_model):
    meta = ttlpred.Predictor(alice_model).metadata()
    assert meta["provenance"]["trace_format"] == "csv"
    assert meta["provenance"]["split"] == 0.8
    assert meta["variant"] == meta["made_for_variant"] == "fp32-fused"
    assert meta["config"]["hidden"] == [32, 32]
    assert 0 < meta["provenance"]["train_rows"] < 4000


def test_kth_round_trip(kth, workdir):
    """The notebook of docs/python.md on KTH-SP2: read, train, predict, kill rate = the CLI's."""
    jobs = ttlpred.read_trace(kth)
    path = workdir / "kth.ttlp"
    ttlpred.train(jobs, path, split=0.8, **TRAIN_OPTIONS)
    model = ttlpred.Predictor(path)
    result = ttlpred.evaluate(model, jobs, split=0.8)
    ref = json.loads(cli("eval", "--model", path, "--data", kth, "--split", 0.8, "--json"))
    assert result["kill_rate"] == ref["kill_rate"] and result["rmse_hours"] == ref["rmse_hours"]
    assert_same_as_cli(model.predict(jobs), cli_predictions(path, kth))


def test_one_train_option_reaches_every_way_in(alice_csv, alice_model, workdir):
    """--validation-fraction is one declaration beside the trainer's field: the flag, the config
    file, the TTLPRED_TRAIN_* variable and Python's keyword all train the same model with it, and
    a value past its check is refused by name."""
    paths = {way: workdir / f"vf-{way}.ttlp" for way in ("python", "flag", "config", "env")}
    ttlpred.train(ttlpred.read_trace(alice_csv), paths["python"], split=0.8, validation_fraction=0.3,
                  **TRAIN_OPTIONS)
    cli("train", "--data", alice_csv, "--out", paths["flag"], "--validation-fraction", 0.3, *TRAIN_ARGS)
    config = workdir / "vf.toml"
    config.write_text("validation-fraction = 0.3\n")
    cli("train", "--config", config, "--data", alice_csv, "--out", paths["config"], *TRAIN_ARGS)
    cli("train", "--data", alice_csv, "--out", paths["env"], *TRAIN_ARGS,
        env={**os.environ, "TTLPRED_TRAIN_VALIDATION_FRACTION": "0.3"})
    answers = [ttlpred.Predictor(p).predict(alice_csv)["expected_wall_s"] for p in paths.values()]
    for other in answers[1:]:
        np.testing.assert_array_equal(other, answers[0])
    for p in paths.values():
        assert ttlpred.Predictor(p).metadata()["config"]["validation_fraction"] == pytest.approx(0.3)
    assert ttlpred.Predictor(alice_model).metadata()["config"]["validation_fraction"] == pytest.approx(0.1)
    assert not np.array_equal(answers[0], ttlpred.Predictor(alice_model).predict(alice_csv)["expected_wall_s"])
    with pytest.raises(ttlpred.Error, match="validation-fraction"):
        ttlpred.train(ttlpred.read_trace(alice_csv), workdir / "x.ttlp", split=0.8, validation_fraction=0.95,
                      **TRAIN_OPTIONS)
