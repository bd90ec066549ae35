#!/usr/bin/env python3
"""How close a model's first guesses are to what a job's own record can tell, on a
synthetic ALICE trace.

  scripts/cold-start-floor.py TRACE.csv[.gz] PER_JOB.csv [--at match|submit]

PER_JOB.csv is `ttlpred eval --per-job` of the same trace. A *cold* job is a scored job whose
(production, job type) had no finished job at its prediction time (the replay of
scripts/history-excess.py, leak-free like the history features). For each job type the
script fits one gradient-boosted regressor of the run time on three columns of the record
alone, the requested TTL, the job's work (events, or input bytes, or input files) and the
host speed, on the jobs before the first scored one, and reports, for the cold jobs:
  - the model's excess over the oracle (`expected_wall_s`), h^2 per job and its share of
    the whole trace's excess MSE (h^2 over all scored jobs), as history-excess.py;
  - the same for that regressor: a first guess that knows the record but not the new
    production's own draw (its cost per event or per GB). The record cannot tell more than
    the draw's spread allows, so this is close to a floor for any first guess;
  - per requested-TTL band, both, so that a clamped TTL (which says nothing of the cost)
    stands apart.
The excess of a prediction p over the oracle is mean((p - expected_wall_s)^2): the noise
around the oracle is the same for both. docs/ACCURACY.md has the findings. Needs
python3-numpy, python3-pandas (scripts/setup.sh) and python3-sklearn
(scripts/peers-setup.sh): an analysis script, not part of ttlpred."""
import importlib.util
import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

WORK_FIELD = {"MC": "events", "RAW_RECO": "input_bytes", "HYPERLOOP": "input_bytes"}


def history_excess():
    """scripts/history-excess.py as a module (its replay and its arguments)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("history_excess", os.path.join(here, "history-excess.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    helper = history_excess()
    a = helper.trace_and_per_job_args(__doc__)
    t = pd.read_csv(a.trace)
    p = pd.read_csv(a.per_job, usecols=["job_id", "expected_wall_s"]).rename(columns={"expected_wall_s": "pred"})
    t = t.merge(p, on="job_id", how="left")
    finished, _ = helper.replay(t, a.at)
    h = 3600.0
    pred, oracle, wall = t.pred.to_numpy(float) / h, t.expected_wall_s.to_numpy(float) / h, t.wall_s.to_numpy(float) / h
    scored = np.isfinite(pred)
    total = scored.sum()
    first_scored = np.argmax(scored) if scored.any() else len(t)
    before = np.arange(len(t)) < first_scored
    request = t.requested_ttl_s.to_numpy(float)
    excess = lambda x, m: float(np.mean((x[m] - oracle[m]) ** 2))
    print(f"{total} scored jobs; excess = mean squared distance from the oracle, h^2 per job (share of the trace's excess MSE)")
    print("| job type | TTL band s | cold jobs | model | record-only regressor |")
    print("|---|---|---|---|---|")
    for ty, field in WORK_FIELD.items():
        of_type = (t.job_type == ty).to_numpy()
        cold = of_type & scored & (finished == 0)
        fit = of_type & before
        if cold.sum() == 0 or fit.sum() < 100:
            continue
        x = np.stack([request, np.log(np.maximum(t[field].to_numpy(float), 1.0)), t.host_speed.to_numpy(float)], 1)
        reg = HistGradientBoostingRegressor(max_iter=400, learning_rate=0.1, max_leaf_nodes=63, random_state=1)
        reg.fit(x[fit], wall[fit])
        guess = reg.predict(x)
        values = np.unique(request[cold])
        bands = [("all", cold)]
        if len(values) > 1:
            top = values.max()
            bands += [(f"< {top:.0f}", cold & (request < top)), (f"= {top:.0f} (the type's largest)", cold & (request == top))]
        for name, m in bands:
            if not m.any():
                continue
            share = m.sum() / total
            em, eg = excess(pred, m), excess(guess, m)
            print(f"| {ty} | {name} | {m.sum()} | {em:.3f} ({em * share:.4f}) | {eg:.3f} ({eg * share:.4f}) |")


if __name__ == "__main__":
    main()
