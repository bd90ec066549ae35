#!/usr/bin/env python3
"""Runs an exported ttlpred graph in ONNX Runtime on the inputs of CASES.json and compares
with ttlpred's own outputs there ("t"). Prints the largest relative difference; exits 1 when
it is above the tolerance (default 1e-5), 77 when onnxruntime is not installed (a skip).
FLOOR (default 0) is the least denominator of the relative difference: t is a standardized
target, so a floor of 1 measures int8 rounding against one standard deviation rather than
against outputs that happen to lie near zero.

With a fifth argument `int8`, also checks that ONNX Runtime runs the graph as int8: from its
profile of the run, every Gemm and MatMul it executed is an integer kernel (QGemm,
MatMulInteger, QLinearMatMul, MatMulIntegerToFloat), none a float one.

usage: onnxruntime_check.py MODEL.onnx CASES.json [TOLERANCE [FLOOR [int8]]]"""
import collections
import json
import shutil
import sys
import tempfile

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

cases = json.load(open(sys.argv[2]))
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
floor = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
int8 = len(sys.argv) > 5 and sys.argv[5] == "int8"
options = ort.SessionOptions()
options.enable_profiling = int8
if int8:
    profile_dir = tempfile.mkdtemp(prefix="ttlpred-ort-")
    options.profile_file_prefix = profile_dir + "/profile"
sess = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
feeds = {"dense": np.array(cases["dense"], dtype=np.float32)}
if any(i.name == "categories" for i in sess.get_inputs()):
    feeds["categories"] = np.array(cases["categories"], dtype=np.int64)
got = sess.run(["t"], feeds)[0][:, 0].astype(np.float64)
want = np.array(cases["t"], dtype=np.float64)
rel = np.abs(got - want) / np.maximum(np.abs(want), max(floor, 1e-30))
print(f"onnxruntime {ort.__version__}: {len(want)} rows, max relative difference {rel.max():.3g} (floor {floor:g}), "
      f"max absolute {np.abs(got - want).max():.3g}")
ok = rel.max() <= tol
if int8:
    profile = sess.end_profiling()
    ran = collections.Counter(e["args"]["op_name"] for e in json.load(open(profile))
                              if e.get("cat") == "Node" and "op_name" in e.get("args", {}))
    shutil.rmtree(profile_dir, ignore_errors=True)
    integer = {"QGemm", "MatMulInteger", "QLinearMatMul", "MatMulIntegerToFloat", "DynamicQuantizeMatMul"}
    floating = {op: n for op, n in ran.items() if op in ("Gemm", "MatMul", "FusedGemm", "FusedMatMul")}
    print(f"onnxruntime ran: {dict(sorted(ran.items()))}")
    if floating or not any(op in integer for op in ran):
        print(f"not int8: float products {floating}, integer ones {[op for op in ran if op in integer]}")
        ok = False
sys.exit(0 if ok else 1)
