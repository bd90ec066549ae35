#!/usr/bin/env python3
"""Python's prediction paths timed in one run, against the engine's own serving path:
Predictor.predict_job (one job, a dict), Predictor.predict on a one-row DataFrame and on a
one-row Table, and `ttlpred bench --serving`'s whole raw-job-to-safe-TTL path for the same
model and trace (the peer the Python call is judged against).

    PYTHONPATH=build/python python3 python/bench/bench_predict_job.py MODEL TRACE.csv [--calls N] [--variant V]

Prints microseconds per call (median of 5 rounds) and each path's ratio to predict_job."""
import argparse
import math
import statistics
import subprocess
import sys
import time
import warnings

import pandas as pd

import ttlpred


def timed(fn, calls, rounds=5):
    for _ in range(min(calls, 200)):
        fn()
    per = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        per.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(per)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("trace")
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--variant", default="auto", help="the engine variant (auto: the one the model was made for)")
    ap.add_argument("--ttlpred", default="build/ttlpred")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    p = ttlpred.Predictor(a.model, variant=a.variant)
    fields = {f["name"] for f in ttlpred._core.schema}
    frame = pd.read_csv(a.trace)
    one = frame.iloc[[len(frame) - 1]]
    job = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in one.iloc[0].to_dict().items() if k in fields}
    table = ttlpred.to_table(one)
    rows = {
        "predict_job(dict)": timed(lambda: p.predict_job(job), a.calls),
        "predict(one-row Table)": timed(lambda: p.predict(table), a.calls // 5),
        "predict(one-row DataFrame)": timed(lambda: p.predict(one), max(50, a.calls // 50)),
    }
    base = rows["predict_job(dict)"]
    print(f"model {a.model}, variant {p.metadata()['variant']}, one job of {a.trace}")
    for name, us in rows.items():
        print(f"{name:28s} {us:9.2f} us a call  {us / base:6.2f}x predict_job")
    serving = subprocess.run([a.ttlpred, "bench", "--serving", a.trace, "--model", a.model, "--variants",
                              p.metadata()["variant"]], capture_output=True, text=True)
    if serving.returncode == 0:
        whole = [line.split() for line in serving.stdout.splitlines() if " whole " in line]
        if whole:
            us = float(whole[0][3])
            print(f"{'engine serving path (C++)':28s} {us:9.2f} us a call  {us / base:6.2f}x predict_job "
                  f"(ttlpred bench --serving, same model and variant)")
    else:
        print(f"ttlpred bench --serving failed: {serving.stderr.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
