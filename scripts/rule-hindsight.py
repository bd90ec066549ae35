#!/usr/bin/env python3
"""What the simple rule's hindsight margin is worth, from `ttlpred backtest --per-job`.

  scripts/rule-hindsight.py PER_JOB.csv [--limit 0.015]

The simple rule, TTL = min(request, m x q99 of the user's last finished run times), is
scored by the backtest at margins m in {1, 1.5, 2, 3}, and its reference figure is the
tightest m whose kill rate on the scored window is <= limit: a margin chosen on the very
jobs it is scored on. For every split this prints that figure, then the lowest kill rate at
which ttlpred, with one setting also fixed in hindsight, is as tight (mean TTL no longer):
  model        the static calibration's TTL at one level (the static_ttl_<level> columns);
  model+rule   min(that TTL, m x q99) over levels and m in 1 ... 5 (and no cap).
An online method cannot choose its setting in hindsight; where the kill rate needed is
near the limit, no online method that keeps the limit at every split can match the rule's
figure. docs/ACCURACY.md ("The simple rule's margin in hindsight") has the findings.
Needs python3-numpy (scripts/setup.sh installs it)."""
import argparse
import csv

import numpy as np

RULE_MARGINS = [1.0, 1.5, 2.0, 3.0]
CAP_MARGINS = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.5, 4.0, 5.0]


def killed(wall, ttl, req):
    """The kill rate's own rule: ran past its TTL, and its request (if any) let it finish."""
    return (wall > ttl) & ((req <= 0) | (wall <= req))


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{path}: no scored jobs")
    levels = [k for k in rows[0] if k.startswith("static_ttl_")]
    if not levels:
        raise SystemExit(f"{path}: no static_ttl_<level> columns: is it `ttlpred backtest --per-job` output?")
    splits = {}
    for line_no, r in enumerate(rows, start=2):
        try:
            rec = [float(r["wall_s"]), float(r["requested_s"]), float(r["user_q99_s"] or "nan")]
            rec += [float(r[k]) for k in levels]
        except (KeyError, ValueError) as e:
            raise SystemExit(f"{path}:{line_no}: {e}")
        splits.setdefault(r["split"], []).append(rec)
    return levels, {s: np.array(v) for s, v in splits.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("per_job")
    ap.add_argument("--limit", type=float, default=0.015, help="kill-rate limit of the rule's margin (default 1.5%%)")
    a = ap.parse_args()
    levels, splits = read(a.per_job)
    print("split  rule (m in hindsight)       kill rate needed: model  model+rule")
    for split, d in splits.items():
        wall, req, q99, static = d[:, 0], d[:, 1], d[:, 2], d[:, 3:]
        if not (req > 0).any():
            print(f"{split:6} no requests: no simple rule")
            continue
        best = None
        for m in RULE_MARGINS:
            ttl = np.where(np.isnan(q99), req, np.minimum(req, m * q99))
            k = killed(wall, ttl, req).mean()
            if k <= a.limit and (best is None or ttl.mean() < best[2]):
                best = (m, k, ttl.mean())
        if best is None:
            print(f"{split:6} no margin within {a.limit:.2%}")
            continue
        cap = np.where(np.isnan(q99), np.inf, q99)
        need_model, need_both = np.inf, np.inf
        for j in range(static.shape[1]):
            for m in [np.inf] + CAP_MARGINS:
                ttl = static[:, j] if m == np.inf else np.minimum(static[:, j], m * cap)
                if ttl.mean() <= best[2] * (1 + 1e-12):
                    k = killed(wall, ttl, req).mean()
                    need_both = min(need_both, k)
                    if m == np.inf:
                        need_model = min(need_model, k)
        text = lambda k: "never" if k == np.inf else f"{k:.2%}"
        print(f"{split:6} x{best[0]:<4g} {best[1]:6.2%} {best[2] / 3600:7.3f} h        "
              f"{text(need_model):>8} {text(need_both):>11}")


if __name__ == "__main__":
    main()
