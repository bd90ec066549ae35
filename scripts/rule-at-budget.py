#!/usr/bin/env python3
"""Each safe-TTL method of `ttlpred backtest --per-job` against the simple rule at its budget.

  scripts/rule-at-budget.py PER_JOB.csv [--alpha 0.01] [--limit 0.015] [--json]

For every split window and every method column (ttl_<method>) this prints the method's kill
rate and mean TTL (x the mean request), and the simple rule's tightest mean TTL, TTL =
min(request, m x q99 of the user's last finished run times; the request where the user has no
q99), over m = 0.50 ... 8.00 in steps of 0.05 chosen in hindsight on the window, among the
margins whose kill rate is within max(alpha, the method's own kill rate): the comparison the
per-job safe-TTL acceptance asks for. A method "holds" a window when its kill rate is <= limit
and its mean TTL is no longer than that rule's. Needs python3-numpy (scripts/setup.sh)."""
import argparse
import csv
import json

import numpy as np


def killed(wall, ttl, req):
    return (wall > ttl) & ((req <= 0) | (wall <= req))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("per_job")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--limit", type=float, default=0.015)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.per_job, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{a.per_job}: no scored jobs")
    methods = [k[4:] for k in rows[0] if k.startswith("ttl_")]
    if not methods:
        raise SystemExit(f"{a.per_job}: no ttl_<method> columns: is it `ttlpred backtest --per-job` output?")
    splits = {}
    for r in rows:
        splits.setdefault(r["split"], []).append(r)
    margins = np.round(np.arange(0.5, 8.0001, 0.05), 2)
    out = []
    for split, rs in splits.items():
        col = lambda k: np.array([float(r[k]) if r[k] not in ("", "nan") else np.nan for r in rs])
        wall, req, q99 = col("wall_s"), col("requested_s"), col("user_q99_s")
        has_q = np.isfinite(q99) & (q99 > 0)
        mean_req = float(np.mean(np.where(req > 0, req, np.nan)))
        frontier = []
        for m in margins:
            ttl = np.where(has_q, np.where(req > 0, np.minimum(req, m * q99), m * q99), req)
            frontier.append((float(m), float(np.mean(killed(wall, ttl, req))), float(np.mean(ttl))))
        for method in methods:
            ttl = col("ttl_" + method)
            kill = float(np.mean(killed(wall, ttl, req)))
            budget = max(a.alpha, kill)
            ok = [t for _, k, t in frontier if k <= budget + 1e-12]
            rule = min(ok) if ok else float("nan")
            mean = float(np.mean(ttl))
            out.append({"split": split, "method": method, "kill_rate": kill, "ttl_x_request": mean / mean_req,
                        "rule_ttl_x_request": rule / mean_req, "holds": bool(kill <= a.limit and mean <= rule + 1e-9)})
    if a.json:
        print(json.dumps(out))
        return
    for o in out:
        print(f"{o['split']} {o['method']:12s} kill {100 * o['kill_rate']:5.2f}%  TTL {o['ttl_x_request']:.3f}x  "
              f"rule at max(alpha, kill) {o['rule_ttl_x_request']:.3f}x  {'holds' if o['holds'] else 'short'}")
    for method in methods:
        held = sum(o["holds"] for o in out if o["method"] == method)
        print(f"{method}: holds {held} of {len(splits)} windows")


if __name__ == "__main__":
    main()
