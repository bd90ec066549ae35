#!/usr/bin/env python3
"""Where a model's error above the oracle is, on a synthetic ALICE trace, by what the
job's own production knew at its start.

  scripts/history-excess.py TRACE.csv[.gz] PER_JOB.csv [--at match|submit]

PER_JOB.csv is `ttlpred eval --per-job` of the same trace: its jobs are the scored ones. For each
scored job the script replays the trace (leak-free as the history features are: an outcome counts
from its finish time, docs/features.md) and counts the finished jobs of the same
production *and job type* at the job's prediction time. It prints, per job type and per
count bucket: the model's RMSE, the oracle's (`expected_wall_s`), the bucket's share of
the excess MSE (h^2 over all scored jobs), and the RMSE of one plain estimate, the
(production, job type) work rate times the job's work (seconds per unit of work, the
geometric mean over its finished jobs, times this job's events / input bytes / input
files per host speed), scaled by one least-squares factor per job type. Then the same
estimate blended with the model (least squares per job type on the even-numbered scored
jobs, scored on the odd ones, jobs with at least 5 finished): what a model that used the
estimate as well as a linear fit does would score. docs/ACCURACY.md has the findings.
Needs python3-numpy and python3-pandas (scripts/setup.sh installs both)."""
import argparse
import numpy as np
import pandas as pd

WORK_FIELD = {"MC": "events", "RAW_RECO": "input_bytes", "HYPERLOOP": "input_bytes",
              "USER": "input_files", "MERGE": "input_files", "HL_MERGE": "input_files"}
BUCKETS = [(0, 0), (1, 4), (5, 19), (20, 99), (100, None)]


def replay(t, at):
    """Finished count and work-rate estimate of each job's (production, job type) key."""
    n = len(t)
    submit, waited = t.submit_time.to_numpy(float), t.wait_s.fillna(0).to_numpy(float)
    when = submit + waited if at == "match" else submit
    finish = submit + waited + t.wall_s.to_numpy(float)
    speed = t.host_speed.to_numpy(float)
    work = {f: t[f].to_numpy(float) / speed for f in set(WORK_FIELD.values())}
    wall = np.maximum(t.wall_s.to_numpy(float), 1.0)
    keys = list(zip(t.production_tag.fillna("").to_numpy(), t.job_type.to_numpy()))
    # The key holds the job type, so one work field (the type's) is all a key needs.
    field = [WORK_FIELD.get(ty) for ty in t.job_type.to_numpy()]
    count, rate = {}, {}  # key -> finished jobs; key -> [jobs with known work, sum of log(wall / work)]
    n_at, est = np.zeros(n), np.full(n, np.nan)
    by_finish = np.argsort(finish, kind="stable")
    ptr = 0
    for j in np.lexsort((np.arange(n), when)):
        # An end at or before this job's time; with a run time > 0 that job also started earlier.
        while ptr < n and finish[by_finish[ptr]] <= when[j]:
            i = by_finish[ptr]
            ptr += 1
            if not keys[i][0]:
                continue
            count[keys[i]] = count.get(keys[i], 0) + 1
            if field[i] and work[field[i]][i] > 0:
                a = rate.setdefault(keys[i], [0, 0.0])
                a[0] += 1
                a[1] += np.log(wall[i] / work[field[i]][i])
        if not keys[j][0]:
            continue
        n_at[j] = count.get(keys[j], 0)
        a = rate.get(keys[j])
        if a and work[field[j]][j] > 0:
            est[j] = np.exp(a[1] / a[0]) * work[field[j]][j]
    return n_at, est


def trace_and_per_job_args(doc):
    """TRACE PER_JOB [--at match|submit], the arguments of this script and of
    scripts/cold-start-floor.py."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("per_job")
    ap.add_argument("--at", choices=["match", "submit"], default="match")
    return ap.parse_args()


def main():
    a = trace_and_per_job_args(__doc__)
    cols = ["job_id", "submit_time", "wait_s", "wall_s", "job_type", "production_tag", "events", "input_bytes",
            "input_files", "host_speed", "expected_wall_s"]
    t = pd.read_csv(a.trace, usecols=cols)
    p = pd.read_csv(a.per_job, usecols=["job_id", "expected_wall_s"]).rename(columns={"expected_wall_s": "pred"})
    t = t.merge(p, on="job_id", how="left")
    n_at, est = replay(t, a.at)
    h = 3600.0
    wall, orc, pred, est = t.wall_s.to_numpy(float) / h, t.expected_wall_s.to_numpy(float) / h, t.pred.to_numpy(float) / h, est / h
    jtype = t.job_type.to_numpy()
    scored = np.isfinite(pred)
    total = scored.sum()
    rmse = lambda x, m: np.sqrt(np.mean((x[m] - wall[m]) ** 2))
    print(f"{total} scored jobs; RMSE h: model {rmse(pred, scored):.3f}, oracle {rmse(orc, scored):.3f}")
    print("| job type | finished of (production, type) | jobs | model RMSE h | oracle h | excess h^2 | estimate RMSE h (model there) |")
    print("|---|---|---|---|---|---|---|")
    for ty in WORK_FIELD:
        m_ty = scored & (jtype == ty)
        has = m_ty & np.isfinite(est)
        scale = np.sum(est[has] * wall[has]) / np.sum(est[has] ** 2) if has.any() else np.nan
        for lo, hi in [(None, None)] + BUCKETS:
            m = m_ty if lo is None else m_ty & (n_at >= lo) & (n_at <= (hi if hi is not None else np.inf))
            if not m.any():
                continue
            excess = (np.mean((pred[m] - wall[m]) ** 2) - np.mean((orc[m] - wall[m]) ** 2)) * m.sum() / total
            e = m & np.isfinite(est)
            est_txt = f"{rmse(scale * est, e):.3f} ({rmse(pred, e):.3f})" if e.any() else "-"
            label = "all" if lo is None else f"{lo}-{hi}" if hi is not None else f">= {lo}"
            print(f"| {ty} | {label} | {m.sum()} | {rmse(pred, m):.3f} | {rmse(orc, m):.3f} | {excess:.4f} | {est_txt} |")
    idx = np.arange(len(t))
    fit, check = scored & (idx % 2 == 0), scored & (idx % 2 == 1)
    blend, x = pred.copy(), np.stack([pred, est], 1)
    for ty in WORK_FIELD:
        m = (jtype == ty) & np.isfinite(est) & (n_at >= 5)
        if (m & fit).sum() < 10:
            continue
        coef, *_ = np.linalg.lstsq(x[m & fit], wall[m & fit], rcond=None)
        blend[m & check] = x[m & check] @ coef
    print(f"\nodd-numbered scored jobs: model {rmse(pred, check):.3f} h, model blended with the estimate "
          f"{rmse(blend, check):.3f} h, oracle {rmse(orc, check):.3f} h")


if __name__ == "__main__":
    main()
