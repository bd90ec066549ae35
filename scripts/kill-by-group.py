#!/usr/bin/env python3
"""The kill rate of a `ttlpred backtest --per-job` file per group of the trace's own columns.

  scripts/kill-by-group.py TRACE PER_JOB.csv [PER_JOB.csv ...] [--method aci-capped]
                           [--min-jobs 1000] [--alpha 0.01] [--json]

The per-job file lists each scored job's split, submit time, run time, request and the safe
TTL of every method, but not the trace's other columns; this joins it back to TRACE, read with
the product's own readers (`ttlpred.read_trace`: any format `backtest` reads; the Python
package on PYTHONPATH, e.g. build/python), and prints, for every group column the trace has
(job_type, queue, partition, user, group), the groups with at least --min-jobs scored jobs and
their kill rates, worst first: the per-group check of the per-job safe TTL (no job type, queue
or partition with >= 1 000 scored jobs above 2 alpha). A job is killed when it ran longer than
the method's TTL and not longer than its request (the kill rate's own definition,
train/metrics.hpp).

The join: the scored jobs of each split are a contiguous run of the trace's eligible jobs
(run time > 0, request > 0 where the trace has requests) in submit order, the order the
backtest scores them; each run is found by its submit times and run times. A file that does
not match TRACE is an error naming the split."""
import argparse
import collections
import csv
import json
import sys

import numpy as np

import ttlpred

GROUP_COLUMNS = ("job_type", "queue", "partition", "user", "group")


def eligible_jobs(path):
    """The trace's eligible jobs in submit order: (submit s, run s, {column: value})."""
    t = ttlpred.read_trace(path)
    ok = t["wall_s"].to_numpy() > 0
    if "requested_ttl_s" in t and (t["requested_ttl_s"] > 0).any():
        ok &= t["requested_ttl_s"].to_numpy() > 0
    t = t[ok].sort_values("submit_time", kind="stable")
    columns = [c for c in GROUP_COLUMNS if c in t]
    values = {c: t[c].astype(object).where(t[c].notna(), "(none)").astype(str).to_numpy() for c in columns}
    submit, run = t["submit_time"].to_numpy(np.float64), t["wall_s"].to_numpy(np.float64)
    return [(submit[i], run[i], {c: values[c][i] for c in columns}) for i in range(len(t))]


def joined(jobs, per_job_path):
    """(job's groups, killed) for every row of the per-job file, by split run."""
    where = collections.defaultdict(list)
    for i, (submit, run, _) in enumerate(jobs):
        where[(submit, run)].append(i)
    with open(per_job_path) as f:
        rows = list(csv.DictReader(f))
    by_split = collections.OrderedDict()
    for r in rows:
        by_split.setdefault(r["split"], []).append(r)
    out = []
    for split, run_rows in by_split.items():
        keys = [(float(r["submit_s"]), float(r["wall_s"])) for r in run_rows]
        first = next((i for i in where[keys[0]]
                      if i + len(keys) <= len(jobs) and all((jobs[i + k][0], jobs[i + k][1]) == keys[k] for k in range(len(keys)))),
                     None)
        if first is None:
            sys.exit(f"{per_job_path}: split {split}: its scored jobs are not a run of {len(keys)} eligible jobs of the trace")
        out.extend((jobs[first + k][2], r) for k, r in enumerate(run_rows))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("per_job", nargs="+")
    ap.add_argument("--method", default="aci-capped", help="the ttl_<method> column to score")
    ap.add_argument("--min-jobs", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=0.01, help="groups above 2 alpha are flagged")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    jobs = eligible_jobs(a.trace)
    column = "ttl_" + a.method
    report = []
    for path in a.per_job:
        rows = joined(jobs, path)
        if rows and column not in rows[0][1]:
            sys.exit(f"{path}: no column {column} (methods in the file: "
                     + ", ".join(c[4:] for c in rows[0][1] if c.startswith("ttl_")) + ")")
        counts = collections.defaultdict(lambda: [0, 0])
        total = [0, 0]
        for groups, r in rows:
            wall, ttl, req = float(r["wall_s"]), float(r[column]), float(r["requested_s"])
            killed = wall > ttl and not wall > req
            total[0] += 1
            total[1] += killed
            for col, value in groups.items():
                counts[(col, value)][0] += 1
                counts[(col, value)][1] += killed
        groups = sorted(({"column": col, "value": value, "jobs": n, "kill_rate": k / n}
                         for (col, value), (n, k) in counts.items() if n >= a.min_jobs),
                        key=lambda g: (g["column"], -g["kill_rate"]))
        report.append({"file": path, "jobs": total[0], "kill_rate": total[1] / max(total[0], 1), "groups": groups,
                       "above_2_alpha": [g for g in groups if g["kill_rate"] > 2 * a.alpha]})
    if a.json:
        print(json.dumps(report))
        return
    for f in report:
        print(f"{f['file']}: {f['jobs']} scored, kill rate {100 * f['kill_rate']:.2f} %, "
              f"{len(f['above_2_alpha'])} group(s) with >= {a.min_jobs} jobs above 2 alpha")
        for g in f["groups"]:
            flag = "  <- above 2 alpha" if g["kill_rate"] > 2 * a.alpha else ""
            print(f"  {g['column']}={g['value']}: {100 * g['kill_rate']:.2f} % of {g['jobs']}{flag}")


if __name__ == "__main__":
    main()
