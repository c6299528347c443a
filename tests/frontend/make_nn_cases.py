#!/usr/bin/python3
"""Builds small ONNX test cases for the NN and reduction ops in the layout of
ONNX's node tests (DIR/<case>/model.onnx, test_data_set_0/input_*.pb,
output_*.pb), with expected outputs from PyTorch or NumPy.

They cover what the node tests do not: the opset < 13 forms of Softmax,
LogSoftmax and Hardmax (2-D coercion at axis) and of the Reduce* ops (axes
as an attribute), constant (initializer) weights with groups, 1-D and
transposed convolutions, LpNormalization, LayerNormalization's extra
outputs, and refusals. Cases named refuse_* must be refused with the text
in their expect.txt; trace_* cases compile with a metal trace.

Usage: make_nn_cases.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def write_case(name, nodes, inputs, outputs, opset, inits=(), expect=None):
    """inputs: [(name, array)], outputs: [(name, array or (elem, shape))]."""
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    vi = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype],
                                        list(a.shape)) for n, a in inputs]
    vo = []
    for n, a in outputs:
        if isinstance(a, tuple):
            vo.append(helper.make_tensor_value_info(n, a[0], list(a[1])))
        else:
            vo.append(helper.make_tensor_value_info(
                n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape)))
    graph = helper.make_graph(nodes, name, vi, vo,
                              [numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        if isinstance(a, tuple):
            continue
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    if expect is not None:
        with open(os.path.join(d, "expect.txt"), "w") as f:
            f.write(expect)


def t(a):
    return torch.from_numpy(a)


# Softmax family before opset 13: coerced to 2-D at axis.
x = f32(2, 3, 4)
for op, fn in (("Softmax", torch.softmax), ("LogSoftmax", torch.log_softmax)):
    for axis in (0, 1, 2):
        y = fn(t(x).reshape(int(np.prod(x.shape[:axis])), -1), 1).reshape(x.shape).numpy()
        write_case("%s_opset11_axis%d" % (op.lower(), axis),
                   [helper.make_node(op, ["x"], ["y"], axis=axis)], [("x", x)], [("y", y)], 11)
y = torch.softmax(t(x).reshape(2, 12), 1).reshape(x.shape).numpy()
write_case("softmax_opset11_default_axis", [helper.make_node("Softmax", ["x"], ["y"])],
           [("x", x)], [("y", y)], 11)
x2 = x.reshape(2, 12)
h = np.zeros_like(x2)
h[np.arange(2), x2.argmax(1)] = 1
write_case("hardmax_opset11_axis1", [helper.make_node("Hardmax", ["x"], ["y"], axis=1)],
           [("x", x)], [("y", h.reshape(x.shape))], 11)

# Reduce* with the axes attribute (ReduceSum before 13).
write_case("reducesum_opset11_axes_attr",
           [helper.make_node("ReduceSum", ["x"], ["y"], axes=[0, 2], keepdims=0)],
           [("x", x)], [("y", x.sum(axis=(0, 2)))], 11)
write_case("reducelogsumexp_opset13_large",
           [helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[-1], keepdims=1)],
           [("x", x * 100)],
           [("y", torch.logsumexp(t(x * 100), -1, keepdim=True).numpy())], 13)

# LpNormalization.
for p in (1, 2):
    nrm = np.linalg.norm(x, ord=p, axis=1, keepdims=True) if p == 2 else \
        np.abs(x).sum(axis=1, keepdims=True)
    write_case("lpnormalization_p%d_axis1" % p,
               [helper.make_node("LpNormalization", ["x"], ["y"], axis=1, p=p)],
               [("x", x)], [("y", (x / nrm).astype(np.float32))], 13)

# Convolutions with constant weights (initializers).
xi = f32(1, 4, 7, 9)
w = f32(6, 2, 3, 3)
b = f32(6)
y = torch.nn.functional.conv2d(t(xi), t(w), t(b), stride=(2, 1), padding=(1, 2),
                               dilation=(1, 2), groups=2).numpy()
write_case("trace_conv_const_groups",
           [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1],
                             pads=[1, 2, 1, 2], dilations=[1, 2], kernel_shape=[3, 3])],
           [("x", xi)], [("y", y)], 13, inits=[("w", w), ("b", b)])
write_case("conv_const_groups",
           [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1],
                             pads=[1, 2, 1, 2], dilations=[1, 2])],
           [("x", xi)], [("y", y)], 13, inits=[("w", w), ("b", b)])
# SAME_LOWER with stride 2: input 7 -> output 4, total padding 2 (1, 1);
# width 9 -> 5, total 2. Asymmetric split checked with kernel 2.
w2 = f32(3, 4, 2, 2)
xp = np.pad(xi, ((0, 0), (0, 0), (1, 0), (1, 0)))
y = torch.nn.functional.conv2d(t(xp), t(w2), stride=2).numpy()
write_case("conv_const_same_lower",
           [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_LOWER")],
           [("x", xi)], [("y", y)], 11, inits=[("w", w2)])
x1 = f32(2, 3, 10)
w1 = f32(5, 3, 3)
y = torch.nn.functional.conv1d(t(x1), t(w1), stride=2, padding=1).numpy()
write_case("conv1d_const",
           [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2], pads=[1, 1])],
           [("x", x1)], [("y", y)], 11, inits=[("w", w1)])
wt = f32(4, 3, 3, 3)
y = torch.nn.functional.conv_transpose2d(t(xi), t(wt), stride=2, padding=1, output_padding=1,
                                         groups=2).numpy()
write_case("convtranspose_const_groups",
           [helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=2, strides=[2, 2],
                             pads=[1, 1, 1, 1], output_padding=[1, 1])],
           [("x", xi)], [("y", y)], 11, inits=[("w", wt)])

# MatMul with 1-D operands and batch broadcasting.
a = f32(3)
bb = f32(2, 3, 4)
write_case("matmul_1d_left", [helper.make_node("MatMul", ["a", "b"], ["y"])],
           [("a", a), ("b", bb)], [("y", np.matmul(a, bb))], 13)
a2 = f32(2, 1, 5, 3)
write_case("matmul_1d_right_batch", [helper.make_node("MatMul", ["a", "b"], ["y"])],
           [("a", a2), ("b", a)], [("y", np.matmul(a2, a))], 13)
a3, b3 = f32(2, 1, 5, 3), f32(4, 3, 2)
write_case("matmul_broadcast_batch", [helper.make_node("MatMul", ["a", "b"], ["y"])],
           [("a", a3), ("b", b3)], [("y", np.matmul(a3, b3))], 13)

# Gemm: transposes, alpha, beta and a matrix C.
ga, gb, gc = f32(4, 3), f32(5, 4), f32(3, 1)
write_case("gemm_transA_transB_alpha_beta_column_c",
           [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5,
                             beta=2.0)],
           [("a", ga), ("b", gb), ("c", gc)], [("y", 0.5 * ga.T @ gb.T + 2.0 * gc)], 13)

# LayerNormalization with its Mean and InvStdDev outputs.
xl = f32(2, 3, 8)
sc, bi = f32(3, 8), f32(3, 8)
mean = xl.mean(axis=(1, 2), keepdims=True)
var = xl.var(axis=(1, 2), keepdims=True)
inv = 1 / np.sqrt(var + 1e-5)
write_case("layernorm_axis1_stats",
           [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "i"], axis=1)],
           [("x", xl), ("s", sc), ("b", bi)],
           [("y", ((xl - mean) * inv * sc + bi).astype(np.float32)),
            ("m", mean.astype(np.float32)), ("i", inv.astype(np.float32))], 17)

# Refusals: never a silent wrong answer.
write_case("refuse_conv_unknown_attribute",
           [helper.make_node("Conv", ["x", "w"], ["y"], foo=1)],
           [("x", xi)], [("y", (TensorProto.FLOAT, [1, 3, 6, 8]))], 13, inits=[("w", w2)],
           expect="attribute 'foo' is not supported")
write_case("refuse_maxpool_indices",
           [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
           [("x", xi)], [("y", (TensorProto.FLOAT, [1, 4, 3, 4])),
                         ("i", (TensorProto.INT64, [1, 4, 3, 4]))], 13,
           expect="output Indices is not supported")
write_case("refuse_batchnorm_training",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                             training_mode=1)],
           [("x", xi)], [("y", (TensorProto.FLOAT, [1, 4, 7, 9]))], 15,
           inits=[("s", f32(4)), ("b", f32(4)), ("m", f32(4)), ("v", np.ones(4, np.float32))],
           expect="attribute training_mode=1 is not supported")
write_case("refuse_lpnorm_p3",
           [helper.make_node("LpNormalization", ["x"], ["y"], p=3)],
           [("x", x)], [("y", (TensorProto.FLOAT, [2, 3, 4]))], 13,
           expect="attribute p=3 is not supported")
