#!/usr/bin/env python3
"""ONNX Runtime and OpenVINO on exported ttlpred graphs: microseconds per call at each batch
size, and which kernels each ran: the peer figures of docs/interop.md.

    scripts/runtime-bench.py [--runtimes onnxruntime,openvino] [--threads N] [--batches 1,256]
                             [--calls N] [--rounds N] GRAPH.onnx...

Every (runtime, graph) pair is timed in the same run, interleaved round by round (the median
of --rounds rounds), so that their ratios hold on a busy host; ratios are against the first
pair. Random standardized inputs; categories 0. OpenVINO is asked for f32 inference (the
check's setting: tests/interop/runtime_check.py) and a latency hint. Needs the runtimes named
(scripts/setup-optional.sh installs both)."""
import argparse
import collections
import json
import os
import shutil
import statistics
import tempfile
import time

import numpy as np


def feeds(widths, batch, rng):
    return {name: (rng.standard_normal((batch, w)).astype(np.float32) if name == "dense"
                   else np.zeros((batch, w), dtype=np.int64)) for name, w in widths.items()}


class OnnxRuntime:
    def __init__(self, path, threads):
        import onnxruntime as ort
        self.ort, self.path, self.threads = ort, path, threads
        self.sess = self._session(None)
        self.widths = {i.name: i.shape[1] for i in self.sess.get_inputs()}
        self.version = f"onnxruntime {ort.__version__}"

    def _session(self, profile_dir):
        o = self.ort.SessionOptions()
        o.intra_op_num_threads = self.threads
        o.inter_op_num_threads = 1
        if profile_dir:
            o.enable_profiling = True
            o.profile_file_prefix = os.path.join(profile_dir, "profile")
        return self.ort.InferenceSession(self.path, o, providers=["CPUExecutionProvider"])

    def run(self, inputs):
        self.sess.run(None, inputs)

    def kernels(self):
        d = tempfile.mkdtemp(prefix="ttlpred-ort-")
        try:
            s = self._session(d)
            s.run(None, feeds(self.widths, 1, np.random.default_rng(1)))
            events = json.load(open(s.end_profiling()))
            return dict(collections.Counter(e["args"]["op_name"] for e in events
                                            if e.get("cat") == "Node" and "op_name" in e.get("args", {})))
        finally:
            shutil.rmtree(d, ignore_errors=True)


class OpenVino:
    def __init__(self, path, threads):
        import openvino as ov
        core = ov.Core()
        self.compiled = core.compile_model(core.read_model(path), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"})
        self.request = self.compiled.create_infer_request()
        self.widths = {i.get_any_name(): i.get_partial_shape()[1].get_length() for i in self.compiled.inputs}
        self.version = f"openvino {ov.__version__.split('-')[0]}"

    def run(self, inputs):
        self.request.infer(inputs)

    def kernels(self):
        ran = collections.Counter()
        for op in self.compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            layer = info["layerType"].astype(str)
            if layer not in ("Const", "Input", "Output"):
                ran[f"{layer} {info['runtimePrecision'].astype(str)}"] += 1
        return dict(ran)


RUNTIMES = {"onnxruntime": OnnxRuntime, "openvino": OpenVino}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--runtimes", default="onnxruntime,openvino")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,256")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    names = a.runtimes.split(",")
    for n in names:
        if n not in RUNTIMES:
            ap.error(f"--runtimes: unknown runtime {n!r} (onnxruntime, openvino)")
    batches = [int(b) for b in a.batches.split(",")]
    rng = np.random.default_rng(7)
    pairs = {(n, g): RUNTIMES[n](g, a.threads) for n in names for g in a.graphs}
    print(f"{', '.join(sorted({p.version for p in pairs.values()}))}; {a.threads} thread(s), median of {a.rounds} rounds")
    for (n, g), p in pairs.items():
        print(f"{n} {g}: ran {dict(sorted(p.kernels().items()))}")
    for b in batches:
        times = {k: [] for k in pairs}
        inputs = {k: feeds(p.widths, b, rng) for k, p in pairs.items()}
        calls = max(10, a.calls // b)
        for _ in range(a.rounds):
            for k, p in pairs.items():
                for _ in range(min(50, calls)):
                    p.run(inputs[k])
                t = time.perf_counter()
                for _ in range(calls):
                    p.run(inputs[k])
                times[k].append((time.perf_counter() - t) / calls * 1e6)
        base = statistics.median(times[next(iter(pairs))])
        for (n, g) in pairs:
            m = statistics.median(times[(n, g)])
            print(f"batch {b:>5}: {n:<11} {g}: {m:10.2f} us per call ({m / b:8.3f} us per job), "
                  f"{base / m:5.2f}x the first pair's speed")


if __name__ == "__main__":
    main()
