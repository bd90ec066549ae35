#!/usr/bin/env python3
"""Runs an exported ttlpred graph in ONNX Runtime or OpenVINO on the inputs of CASES.json and
compares with ttlpred's own outputs there ("t"). Prints the largest relative difference;
exits 1 when it is above the tolerance (default 1e-5), 77 when the runtime is not installed
(a skip). FLOOR (default 0) is the least denominator of the relative difference: t is a
standardized target, so a floor of 1 measures int8 rounding against one standard deviation
rather than against outputs that happen to lie near zero.

With a sixth argument `int8`, also checks that the runtime runs the graph as int8:
- ONNX Runtime: from its profile of the run, every Gemm and MatMul it executed is an integer
  kernel (QGemm, MatMulInteger, QLinearMatMul, MatMulIntegerToFloat), none a float one;
- OpenVINO: in the CPU plugin's compiled graph (its runtime model), every FullyConnected and
  MatMul runs at an integer precision (u8/i8), none at f32/bf16/f16.

OpenVINO is asked for f32 inference: on a host with AVX-512 BF16 or AMX its CPU plugin would
otherwise run the float parts (the whole fp32 graph, the int8 graph's biases and the
category tables) in bf16, which is a choice of the runtime's user, not of the graph.

usage: runtime_check.py onnxruntime|openvino MODEL.onnx CASES.json [TOLERANCE [FLOOR [int8]]]"""
import collections
import json
import shutil
import sys
import tempfile

runtime = sys.argv[1]
if runtime not in ("onnxruntime", "openvino"):
    sys.exit(f"runtime_check.py: unknown runtime {runtime!r} (onnxruntime or openvino)")
try:
    import numpy as np
    if runtime == "onnxruntime":
        import onnxruntime as ort
    else:
        import openvino as ov
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

model, cases = sys.argv[2], json.load(open(sys.argv[3]))
tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-5
floor = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
int8 = len(sys.argv) > 6 and sys.argv[6] == "int8"
dense = np.array(cases["dense"], dtype=np.float32)
categories = np.array(cases["categories"], dtype=np.int64)


def run_onnxruntime():
    """The output column and, with int8, the float products ONNX Runtime ran (and the integer ones)."""
    options = ort.SessionOptions()
    options.enable_profiling = int8
    if int8:
        profile_dir = tempfile.mkdtemp(prefix="ttlpred-ort-")
        options.profile_file_prefix = profile_dir + "/profile"
    sess = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feeds = {"dense": dense}
    if any(i.name == "categories" for i in sess.get_inputs()):
        feeds["categories"] = categories
    got = sess.run(["t"], feeds)[0][:, 0]
    if not int8:
        return f"onnxruntime {ort.__version__}", got, None
    profile = sess.end_profiling()
    ran = collections.Counter(e["args"]["op_name"] for e in json.load(open(profile))
                              if e.get("cat") == "Node" and "op_name" in e.get("args", {}))
    shutil.rmtree(profile_dir, ignore_errors=True)
    print(f"onnxruntime ran: {dict(sorted(ran.items()))}")
    integer = {"QGemm", "MatMulInteger", "QLinearMatMul", "MatMulIntegerToFloat", "DynamicQuantizeMatMul"}
    products = {op: ("int" if op in integer else "float") for op in ran
                if op in integer or op in ("Gemm", "MatMul", "FusedGemm", "FusedMatMul")}
    return f"onnxruntime {ort.__version__}", got, products


def run_openvino():
    """The output column and, with int8, each product node's runtime precision."""
    core = ov.Core()
    compiled = core.compile_model(core.read_model(model), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})
    feeds = {"dense": dense}
    if any("categories" in i.get_names() for i in compiled.inputs):
        feeds["categories"] = categories
    got = compiled.create_infer_request().infer(feeds)[compiled.output("t")][:, 0]
    if not int8:
        return f"openvino {ov.__version__}", got, None
    products = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        layer = info["layerType"].astype(str)
        if layer in ("FullyConnected", "MatMul", "Gemm"):
            precision = info["runtimePrecision"].astype(str).lower()
            products[f"{op.get_friendly_name()} ({layer} {precision})"] = "int" if precision in ("u8", "i8") else "float"
    print(f"openvino ran: {sorted(products)}")
    return f"openvino {ov.__version__}", got, products


name, got, products = run_onnxruntime() if runtime == "onnxruntime" else run_openvino()
got = got.astype(np.float64)
want = np.array(cases["t"], dtype=np.float64)
rel = np.abs(got - want) / np.maximum(np.abs(want), max(floor, 1e-30))
print(f"{name}: {len(want)} rows, max relative difference {rel.max():.3g} (floor {floor:g}), "
      f"max absolute {np.abs(got - want).max():.3g}")
ok = rel.max() <= tol
if int8:
    floating = [p for p, kind in products.items() if kind == "float"]
    if floating or not any(kind == "int" for kind in products.values()):
        print(f"not int8: float products {floating}, integer ones {[p for p, k in products.items() if k == 'int']}")
        ok = False
sys.exit(0 if ok else 1)
