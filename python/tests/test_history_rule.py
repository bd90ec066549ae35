"""Predictor.predict's history rule (docs/features.md, "History when predicting"): a job after
the training period is answered from the model's stored history plus the frame's later jobs
that ended before it, so the same job gets the same answer alone or in a larger frame that
adds no job ending before it, training-period jobs included; a frame that begins with the
model's training jobs is replayed from its start, as `ttlpred eval` scores it."""
import numpy as np
import pandas as pd
import pytest

import ttlpred


@pytest.fixture(scope="module")
def frame(alice_csv):
    return pd.read_csv(alice_csv).sort_values("submit_time", kind="stable").reset_index(drop=True)


def test_a_later_job_answers_the_same_alone_or_beside_training_period_jobs(alice_model, frame):
    p = ttlpred.Predictor(alice_model)
    last = p.metadata()["provenance"]["last_train_submit"]
    assert frame["submit_time"].iloc[-5:].min() > last
    alone = p.predict(frame.tail(5))
    # 500 jobs from the middle of the training period before them: their outcomes are in the
    # model's stored history already, so they change nothing for the later jobs.
    beside = p.predict(pd.concat([frame.iloc[1000:1500], frame.tail(5)]))
    for key in ("expected_wall_s", "safe_ttl_s"):
        np.testing.assert_array_equal(beside[key][-5:], alone[key])
    # Each of the five alone, too: none of them ended before another was submitted here.
    for i in range(5):
        one = p.predict(frame.iloc[[len(frame) - 5 + i]])
        assert one["expected_wall_s"][0] == alone["expected_wall_s"][i]

