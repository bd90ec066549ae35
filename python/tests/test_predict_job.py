"""Predictor.predict_job: one job as a broker would ask, from the model's stored history.

The rule it states: a job's history features come from the model's own stored history (the
outcomes up to the end of its training), never from jobs passed before; so its answer is the
table path's for that job alone when the job comes after the training period, and it does not
change with what was asked before."""
import math

import numpy as np
import pandas as pd
import pytest

import ttlpred

FIELDS = {f["name"] for f in ttlpred._core.schema}


def as_job(row):
    """A DataFrame row as {field: value}, unknowns as None, NumPy scalars kept as they come."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items() if k in FIELDS}


@pytest.fixture(scope="module")
def after_training(alice_csv, alice_model):
    """Jobs submitted after the model's last training job, in submit order."""
    frame = pd.read_csv(alice_csv).sort_values("submit_time", kind="stable")
    last = ttlpred.Predictor(alice_model).metadata()["provenance"]["last_train_submit"]
    return frame[frame["submit_time"] > last]


def test_equals_the_table_path_for_a_job_alone(alice_model, after_training):
    p = ttlpred.Predictor(alice_model)
    for i in range(5):
        one = after_training.iloc[[i]]
        want = p.predict(one)
        got = p.predict_job(as_job(one.iloc[0].to_dict()))
        assert got["expected_wall_s"] == want["expected_wall_s"][0]
        assert got["safe_ttl_s"] == want["safe_ttl_s"][0]
        assert got["capped"] == bool(want["capped"][0])


def test_the_answer_does_not_depend_on_what_was_asked_before(alice_model, after_training):
    p = ttlpred.Predictor(alice_model)
    job = as_job(after_training.iloc[3].to_dict())
    first = p.predict_job(job)
    for i in range(20):
        p.predict_job(as_job(after_training.iloc[i].to_dict()))
    p.predict(after_training.iloc[:50])
    assert p.predict_job(job) == first


def test_numpy_scalars_and_ids_read_as_floats(alice_model, after_training):
    p = ttlpred.Predictor(alice_model)
    row = after_training.iloc[0].to_dict()
    plain = p.predict_job(as_job(row))
    typed = {k: (np.float64(v) if isinstance(v, float) else np.int64(v) if isinstance(v, int) else v)
             for k, v in as_job(row).items()}
    assert p.predict_job(typed) == plain


def test_bad_jobs_are_refused_naming_the_field(alice_model):
    p = ttlpred.Predictor(alice_model)
    with pytest.raises(ttlpred.Error, match="'colour' is not a field of the job schema"):
        p.predict_job({"colour": "red"})
    with pytest.raises(ttlpred.Error, match=r"field 'cpu_cores' is -4: a count, amount or time"):
        p.predict_job({"cpu_cores": -4})
    with pytest.raises(ttlpred.Error, match="field 'cpu_cores' is a number, not str"):
        p.predict_job({"cpu_cores": "four"})
    with pytest.raises(ttlpred.Error, match="field 'user' is a category: give text or a number, not list"):
        p.predict_job({"user": ["a"]})
    # Nothing known is still a job: the model's means answer it, within the bounds.
    empty = p.predict_job({})
    assert 60 <= empty["expected_wall_s"] <= empty["safe_ttl_s"]
