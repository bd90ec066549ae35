#!/usr/bin/env python3
"""Builds an MLP the way a model trained elsewhere arrives: with the onnx Python helper API
(MatMul + Add layers as PyTorch's exporter writes them without Gemm fusion, LeakyRelu,
Gather embeddings and one Concat), sized from a ttlpred sidecar's encoder.

usage: make_helper_mlp.py SIDECAR.json OUT.onnx EXPECT.json

EXPECT.json gets a few encoded inputs and the network's output on them computed with numpy
(float64), so the importing side can check it runs the same network."""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

side = json.load(open(sys.argv[1]))
dense_w = side["graph"]["dense_width"]
cards = [len(c["vocabulary"]) + 1 for c in side["encoder"]["categories"]]  # + the unknown bucket
rng = np.random.default_rng(7)
emb_dim, hidden = 3, [16, 8]

inits, nodes, concat_in = [], [], ["dense"]
for i, card in enumerate(cards):
    inits.append(numpy_helper.from_array(np.array(i, dtype=np.int64), f"col{i}"))
    inits.append(numpy_helper.from_array(rng.normal(0, 0.5, (card, emb_dim)).astype(np.float32), f"emb{i}"))
    nodes.append(helper.make_node("Gather", ["categories", f"col{i}"], [f"cat{i}"], name=f"take_col{i}", axis=1))
    nodes.append(helper.make_node("Gather", [f"emb{i}", f"cat{i}"], [f"e{i}"], name=f"embed{i}", axis=0))
    concat_in.append(f"e{i}")
nodes.append(helper.make_node("Concat", concat_in, ["x"], name="concat", axis=1))

widths = [dense_w + emb_dim * len(cards)] + hidden + [1]
x, weights = "x", []
for l in range(len(widths) - 1):
    w = (rng.normal(0, 1, (widths[l], widths[l + 1])) / np.sqrt(widths[l])).astype(np.float32)
    b = rng.normal(0, 0.1, widths[l + 1]).astype(np.float32)
    weights.append((w, b))
    inits += [numpy_helper.from_array(w, f"W{l}"), numpy_helper.from_array(b, f"b{l}")]
    nodes.append(helper.make_node("MatMul", [x, f"W{l}"], [f"mm{l}"], name=f"matmul{l}"))
    last = l == len(widths) - 2
    nodes.append(helper.make_node("Add", [f"mm{l}", f"b{l}"], ["y" if last else f"z{l}"], name=f"bias{l}"))
    if not last:
        nodes.append(helper.make_node("LeakyRelu", [f"z{l}"], [f"h{l}"], name=f"act{l}", alpha=0.01))
        x = f"h{l}"

inputs = [helper.make_tensor_value_info("dense", TensorProto.FLOAT, ["batch", dense_w])]
if cards:
    inputs.append(helper.make_tensor_value_info("categories", TensorProto.INT64, ["batch", len(cards)]))
graph = helper.make_graph(nodes, "helper_mlp", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1])], inits)
model = helper.make_model(graph, producer_name="onnx-helper-test", opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, sys.argv[2])

# Expected outputs on a few inputs, in float64.
dense = rng.normal(0, 1, (5, dense_w))
cats = np.stack([rng.integers(0, c, 5) for c in cards], axis=1) if cards else np.zeros((5, 0), dtype=np.int64)
embs = [np.array(onnx.numpy_helper.to_array(next(t for t in inits if t.name == f"emb{i}")), dtype=np.float64)[cats[:, i]]
        for i in range(len(cards))]
h = np.concatenate([dense] + embs, axis=1)
for l, (w, b) in enumerate(weights):
    h = h @ w.astype(np.float64) + b.astype(np.float64)
    if l < len(weights) - 1:
        h = np.where(h > 0, h, 0.01 * h)
json.dump({"dense": dense.tolist(), "categories": cats.tolist(), "t": h[:, 0].tolist()}, open(sys.argv[3], "w"))
