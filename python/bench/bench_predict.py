"""Throughput of Predictor.predict on 100 000 jobs: from a pandas DataFrame (column
conversion + the C++ batch) against the C++ batch path alone (a Table already in C++ form,
which is what `ttlpred predict` runs after reading its file). The goal: the DataFrame path
within 20% of the C++ one. A benchmark, not a test: timings on shared machines vary.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/bench_predict.py [--jobs 100000] [--repeat 5]
"""
import argparse
import os
import subprocess
import tempfile
import time

import ttlpred


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bin", default=os.environ.get("TTLPRED_BIN", "build/ttlpred"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        trace, model = os.path.join(d, "jobs.csv"), os.path.join(d, "m.ttlp")
        subprocess.run([args.bin, "generate", "--jobs", str(args.jobs), "--seed", "5", "--out", trace], check=True,
                       capture_output=True)
        subprocess.run([args.bin, "train", "--data", trace, "--out", model, "--epochs", "1", "--quiet"], check=True,
                       capture_output=True)
        predictor = ttlpred.Predictor(model)
        frame = ttlpred.read_trace(trace)
        table = ttlpred.to_table(frame)
        native = best_of(lambda: predictor.predict(table), args.repeat)
        from_frame = best_of(lambda: predictor.predict(frame), args.repeat)
        convert = best_of(lambda: ttlpred.to_table(frame), args.repeat)
        n = len(frame)
        print(f"{n} jobs, best of {args.repeat}")
        print(f"C++ batch path (Table):        {native * 1e3:8.1f} ms  {n / native:12,.0f} jobs/s")
        print(f"Predictor.predict(DataFrame):  {from_frame * 1e3:8.1f} ms  {n / from_frame:12,.0f} jobs/s"
              f"  ({from_frame / native * 100 - 100:+.1f}%)")
        print(f"  of which DataFrame -> Table: {convert * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
