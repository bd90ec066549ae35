#!/usr/bin/env python3
"""ONNX Runtime on exported ttlpred graphs: microseconds per call at each batch size, and
which kernels it ran (from its profile): the peer figures of docs/interop.md.

    scripts/onnxruntime-bench.py [--threads N] [--batches 1,256] [--calls N] GRAPH.onnx...

Each graph is timed in the same run, interleaved round by round (the median of --rounds
rounds), so that their ratio holds on a busy host. Random standardized inputs; categories 0.
Needs onnxruntime (scripts/setup-optional.sh)."""
import argparse
import collections
import json
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
import onnxruntime as ort


def session(path, threads, profile_dir=None):
    o = ort.SessionOptions()
    o.intra_op_num_threads = threads
    o.inter_op_num_threads = 1
    if profile_dir:
        o.enable_profiling = True
        o.profile_file_prefix = os.path.join(profile_dir, "profile")
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])


def feeds(sess, batch, rng):
    f = {}
    for i in sess.get_inputs():
        width = i.shape[1]
        f[i.name] = (rng.standard_normal((batch, width)).astype(np.float32) if i.name == "dense"
                     else np.zeros((batch, width), dtype=np.int64))
    return f


def kernels(path):
    d = tempfile.mkdtemp(prefix="ttlpred-ort-")
    try:
        s = session(path, 1, d)
        s.run(None, feeds(s, 1, np.random.default_rng(1)))
        events = json.load(open(s.end_profiling()))
        return collections.Counter(e["args"]["op_name"] for e in events
                                   if e.get("cat") == "Node" and "op_name" in e.get("args", {}))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,256")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    rng = np.random.default_rng(7)
    sessions = {g: session(g, a.threads) for g in a.graphs}
    print(f"onnxruntime {ort.__version__}, {a.threads} thread(s), median of {a.rounds} rounds")
    for g in a.graphs:
        print(f"{g}: ran {dict(sorted(kernels(g).items()))}")
    for b in batches:
        times = {g: [] for g in a.graphs}
        inputs = {g: feeds(s, b, rng) for g, s in sessions.items()}
        calls = max(10, a.calls // b)
        for _ in range(a.rounds):
            for g, s in sessions.items():
                for _ in range(min(50, calls)):
                    s.run(None, inputs[g])
                t = time.perf_counter()
                for _ in range(calls):
                    s.run(None, inputs[g])
                times[g].append((time.perf_counter() - t) / calls * 1e6)
        base = statistics.median(times[a.graphs[0]])
        for g in a.graphs:
            m = statistics.median(times[g])
            print(f"batch {b:>5}: {g}: {m:10.2f} us per call ({m / b:8.3f} us per job), {base / m:5.2f}x the first graph's speed")


if __name__ == "__main__":
    main()
