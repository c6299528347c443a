#!/usr/bin/python3
"""Builds small ONNX test cases for the NN and reduction ops in the layout of
ONNX's node tests (DIR/<case>/model.onnx, test_data_set_0/input_*.pb,
output_*.pb), with expected outputs from PyTorch or NumPy.

They cover what the node tests do not: the opset < 13 forms of Softmax,
LogSoftmax and Hardmax (2-D coercion at axis) and of the Reduce* ops (axes
as an attribute), constant (initializer) weights with groups, 1-D and
transposed convolutions, LpNormalization, LayerNormalization's extra
outputs, Resize against PyTorch's interpolate, and refusals. Cases named
refuse_* must be refused with the text
in their expect.txt, cases named invalid_* must fail as invalid models with
that text; trace_* cases compile with a metal trace.

Usage: make_nn_cases.py OUTDIR
"""
import os
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
# The exporter's advice about batch sizes other than 1 does not apply to
# these fixed-shape cases.
warnings.filterwarnings("ignore", category=UserWarning)
rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def write_case(name, nodes, inputs, outputs, opset, inits=(), expect=None, domains=(),
               atol=None):
    """inputs: [(name, array)], outputs: [(name, array or (elem, shape))];
    atol: the case's absolute tolerance when ONNX's 1e-7 is below the float32
    rounding of its sums (written to atol.txt)."""
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
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] +
                              [helper.make_opsetid(d, v) for d, v in domains])
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
    if atol is not None:
        with open(os.path.join(d, "atol.txt"), "w") as f:
            f.write(repr(atol))


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

# Y alone, as PyTorch exports it at opset 17 (Mean and InvStdDev are optional).
write_case("layernorm_y_only",
           [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=1)],
           [("x", xl), ("s", sc), ("b", bi)],
           [("y", ((xl - mean) * inv * sc + bi).astype(np.float32))], 17)

# A causal mask as PyTorch exports it: Trilu of a bool constant (folded on
# the host), then Where; and Trilu of a bool computed at run time.
xm = f32(2, 5, 5)
causal = np.tril(np.ones((5, 5), bool))
write_case("trilu_bool_constant_mask",
           [helper.make_node("Trilu", ["ones"], ["mask"], upper=0),
            helper.make_node("Where", ["mask", "x", "fill"], ["y"])],
           [("x", xm)], [("y", np.where(causal, xm, np.float32(-1e9)).astype(np.float32))], 14,
           inits=[("ones", np.ones((5, 5), bool)), ("fill", np.array(-1e9, np.float32))])
bm = rng.standard_normal((3, 4, 6)) > 0
write_case("trilu_bool_upper_k",
           [helper.make_node("Trilu", ["x", "k"], ["y"], upper=1)],
           [("x", bm)], [("y", np.triu(bm, 2))], 14, inits=[("k", np.array(2, np.int64))])

# Refusals: never a silent wrong answer.
write_case("refuse_conv_unknown_attribute",
           [helper.make_node("Conv", ["x", "w"], ["y"], foo=1)],
           [("x", xi)], [("y", (TensorProto.FLOAT, [1, 3, 6, 8]))], 13, inits=[("w", w2)],
           expect="attribute 'foo' is not supported")
write_case("refuse_batchnorm_saved_statistics",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                             ["y", "rm", "rv", "sm"], is_test=1)],
           [("x", xi)], [("y", (TensorProto.FLOAT, [1, 4, 7, 9])),
                         ("rm", (TensorProto.FLOAT, [4])), ("rv", (TensorProto.FLOAT, [4])),
                         ("sm", (TensorProto.FLOAT, [4]))], 7,
           inits=[("s", f32(4)), ("b", f32(4)), ("m", f32(4)), ("v", np.ones(4, np.float32))],
           expect="output 1 (a training statistic) is not supported without training_mode=1")
write_case("refuse_lpnorm_p3",
           [helper.make_node("LpNormalization", ["x"], ["y"], p=3)],
           [("x", x)], [("y", (TensorProto.FLOAT, [2, 3, 4]))], 13,
           expect="attribute p=3 is not supported")

# Einsum: matmul-like equations, implicit outputs, outer products, sums.
for i, (eq, shapes) in enumerate((("bij,bkj->bik", ((2, 3, 4), (2, 5, 4))),
                                  ("ij,jk", ((3, 4), (4, 5))),
                                  ("i,j->ij", ((3,), (4,))),
                                  ("ij,jk->k", ((3, 4), (4, 5))),
                                  ("abc,cd->dba", ((2, 3, 4), (4, 5))),
                                  ("ijk->kj", ((2, 3, 4),)))):
    ops = [f32(*sh) for sh in shapes]
    names = ["a", "b"][:len(ops)]
    write_case("einsum_%d" % i, [helper.make_node("Einsum", names, ["y"], equation=eq)],
               list(zip(names, ops)), [("y", np.einsum(eq, *ops).astype(np.float32))], 12)

# 3-D ConvTranspose as 2-D ones over the depth taps, constant weights.
x3 = f32(1, 2, 3, 4, 5)
w3 = f32(2, 3, 3, 2, 3)
b3 = f32(3)
y = torch.nn.functional.conv_transpose3d(t(x3), t(w3), t(b3), stride=(2, 1, 2), padding=(1, 0, 1),
                                         output_padding=(1, 0, 1)).numpy()
write_case("convtranspose3d_const",
           [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 1, 2],
                             pads=[1, 0, 1, 1, 0, 1], output_padding=[1, 0, 1])],
           [("x", x3)], [("y", y)], 11, inits=[("w", w3), ("b", b3)])

# Reductions of constants fold on the host: ReduceProd of a Shape decides a
# Reshape; float and integer constants reduce in every kind.
write_case("reduce_fold_shape",
           [helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
            helper.make_node("Reshape", ["x", "p"], ["y"])],
           [("x", x)], [("y", x.reshape(-1))], 13)
cst = f32(3, 4)
xs = f32(3)
kinds = (("ReduceSum", lambda a: a.sum(1)), ("ReduceMean", lambda a: a.mean(1)),
         ("ReduceMax", lambda a: a.max(1)), ("ReduceMin", lambda a: a.min(1)),
         ("ReduceProd", lambda a: a.prod(1)), ("ReduceL1", lambda a: np.abs(a).sum(1)),
         ("ReduceL2", lambda a: np.sqrt((a * a).sum(1))),
         ("ReduceSumSquare", lambda a: (a * a).sum(1)),
         ("ReduceLogSum", lambda a: np.log(np.abs(a).sum(1))),
         ("ReduceLogSumExp", lambda a: np.log(np.exp(a).sum(1))))
for op, fn in kinds:
    c_in = np.abs(cst) if op == "ReduceLogSum" else cst
    # ReduceSum takes its axes as an input from opset 13.
    red = helper.make_node(op, ["c", "ax"], ["r"], keepdims=0) if op == "ReduceSum" else \
        helper.make_node(op, ["c"], ["r"], axes=[1], keepdims=0)
    write_case("reduce_fold_%s" % op.lower(), [red, helper.make_node("Add", ["x", "r"], ["y"])],
               [("x", xs)], [("y", (xs + fn(c_in)).astype(np.float32))], 13,
               inits=[("c", c_in), ("ax", np.array([1], np.int64))])
write_case("reduce_fold_int_prod",
           [helper.make_node("ReduceProd", ["c"], ["y"], axes=[0], keepdims=1)],
           [], [("y", np.array([[40000, 6]], np.int64))], 13,
           inits=[("c", np.array([[200, 2], [200, 3]], np.int64))])

# Einsum with ellipses (of different ranks) and diagonals.
for i, (eq, shapes) in enumerate((("...ij,...jk->...ik", ((2, 3, 4, 5), (3, 5, 6))),
                                  ("ii->i", ((4, 4),)),
                                  ("ii", ((4, 4),)),
                                  ("bii,bjj->bij", ((2, 3, 3), (2, 4, 4))),
                                  ("...i,...i->...", ((2, 3, 5), (2, 3, 5))),
                                  ("i...->...", ((3, 2, 4),)))):
    ops = [f32(*sh) for sh in shapes]
    names = ["a", "b"][:len(ops)]
    write_case("einsum_ellipsis_diag_%d" % i,
               [helper.make_node("Einsum", names, ["y"], equation=eq)],
               list(zip(names, ops)), [("y", np.asarray(np.einsum(eq, *ops), np.float32))], 12)

# Traced compiles of the ops that upload tables of their own (the warm-up run
# makes them; the trace may upload nothing).
xa = rng.integers(0, 3, (3, 5)).astype(np.float32)  # ties
write_case("trace_argmax_last",
           [helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0, select_last_index=1)],
           [("x", xa)], [("y", (4 - np.argmax(xa[:, ::-1], axis=1)).astype(np.int64))], 13)
h = np.zeros_like(xa)
h[np.arange(3), xa.argmax(1)] = 1
write_case("trace_hardmax", [helper.make_node("Hardmax", ["x"], ["y"], axis=-1)],
           [("x", xa)], [("y", h)], 13)
xt = f32(2, 4, 5)
write_case("trace_trilu", [helper.make_node("Trilu", ["x", "k"], ["y"], upper=0)],
           [("x", xt)], [("y", np.tril(xt, -1))], 14, inits=[("k", np.array(-1, np.int64))])
xp2 = f32(1, 2, 5, 6)
y = torch.nn.functional.avg_pool2d(t(np.pad(xp2, ((0, 0), (0, 0), (2, 2), (2, 2)))), 3, 1).numpy()
cnt = torch.nn.functional.avg_pool2d(t(np.pad(np.ones_like(xp2), ((0, 0), (0, 0), (2, 2), (2, 2)))),
                                     3, 1).numpy()
write_case("trace_avgpool_wide_pads_exclude",
           [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[2, 2, 2, 2])],
           [("x", xp2)], [("y", (y / cnt).astype(np.float32))], 11)
ad = f32(2, 3, 3)
write_case("trace_einsum_diag", [helper.make_node("Einsum", ["a"], ["y"], equation="bii->bi")],
           [("a", ad)], [("y", np.einsum("bii->bi", ad))], 12)
wtd = f32(2, 3, 3, 3)
xtd = f32(1, 2, 4, 4)
y = torch.nn.functional.conv_transpose2d(t(xtd), t(wtd), stride=2).numpy()
write_case("trace_convtranspose_weight_input",
           [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
           [("x", xtd), ("w", wtd)], [("y", y)], 11)

# Chains the fusion pass merges into Conv and MatMul (a folded batch norm,
# a constant bias Add, an activation), in the shapes that take other paths:
# 3-D and 1-D convolutions, a 1-D MatMul operand, grouped weights.
x5 = f32(1, 2, 4, 5, 6)
w5 = f32(3, 2, 2, 3, 3)
bn = [f32(3), f32(3), f32(3), np.abs(f32(3)) + 0.5]
yc = torch.nn.functional.conv3d(t(x5), t(w5), padding=1)
yb = torch.nn.functional.batch_norm(yc, t(bn[2]), t(bn[3]), t(bn[0]), t(bn[1]), eps=1e-5)
write_case("fused_conv3d_bn_relu",
           [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
            helper.make_node("Relu", ["n"], ["y"])],
           [("x", x5)], [("y", torch.relu(yb).numpy())], 13,
           inits=[("w", w5), ("s", bn[0]), ("b", bn[1]), ("m", bn[2]), ("v", bn[3])])
cb = f32(1, 5, 1)
yc = torch.nn.functional.conv1d(t(x1), t(w1), stride=2, padding=1) + t(cb)
write_case("fused_conv1d_add_sigmoid",
           [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2], pads=[1, 1]),
            helper.make_node("Add", ["c", "cb"], ["a"]),
            helper.make_node("Sigmoid", ["a"], ["y"])],
           [("x", x1)], [("y", torch.sigmoid(yc).numpy())], 13, inits=[("w", w1), ("cb", cb)])
yc = torch.nn.functional.conv2d(t(xi), t(w), t(b), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                groups=2)
write_case("trace_fused_conv_groups_relu",
           [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2, strides=[2, 1],
                             pads=[1, 2, 1, 2], dilations=[1, 2]),
            helper.make_node("Relu", ["c"], ["y"])],
           [("x", xi)], [("y", torch.relu(yc).numpy())], 13, inits=[("w", w), ("b", b)])
mv, mw, mb = f32(3), f32(3, 4), f32(4)
write_case("fused_matmul_1d_add_relu",
           [helper.make_node("MatMul", ["a", "w"], ["m"]),
            helper.make_node("Add", ["m", "bb"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"])],
           [("a", mv)], [("y", np.maximum(mv @ mw + mb, 0).astype(np.float32))], 13,
           inits=[("w", mw), ("bb", mb)])

# MatMulInteger and ConvInteger: 8-bit operands, zero points per row /
# column / output channel given at run time, int32 results.
qa = rng.integers(0, 256, (2, 4, 5)).astype(np.uint8)
qb = rng.integers(0, 256, (5, 3)).astype(np.uint8)
qaz = rng.integers(0, 256, (4,)).astype(np.uint8)
qbz = rng.integers(0, 256, (3,)).astype(np.uint8)
ref = np.matmul(qa.astype(np.int32) - qaz.astype(np.int32)[:, None],
                qb.astype(np.int32) - qbz.astype(np.int32))
write_case("matmulinteger_zero_points",
           [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
           [("a", qa), ("b", qb), ("az", qaz), ("bz", qbz)], [("y", ref.astype(np.int32))], 10)
qx = rng.integers(-128, 128, (1, 4, 6, 7)).astype(np.int8)
qw = rng.integers(-128, 128, (6, 2, 3, 3)).astype(np.int8)
qxz = np.array(3, np.int8)
qwz = rng.integers(-5, 5, (6,)).astype(np.int8)
ref = torch.nn.functional.conv2d(t(qx.astype(np.float64) - 3),
                                 t(qw.astype(np.float64) - qwz[:, None, None, None]),
                                 padding=1, stride=(1, 2), groups=2).numpy()
write_case("convinteger_const_weight_groups",
           [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2,
                             pads=[1, 1, 1, 1], strides=[1, 2])],
           [("x", qx), ("xz", qxz)], [("y", ref.astype(np.int32))], 10,
           inits=[("w", qw), ("wz", qwz)])
qw1 = rng.integers(-128, 128, (5, 4, 2, 2)).astype(np.int8)
qwz1 = rng.integers(-5, 5, (5,)).astype(np.int8)
ref = torch.nn.functional.conv2d(t(qx.astype(np.float64) - 3),
                                 t(qw1.astype(np.float64) - qwz1[:, None, None, None])).numpy()
write_case("convinteger_runtime_weight_zero_points",
           [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"])],
           [("x", qx), ("w", qw1), ("xz", qxz), ("wz", qwz1)], [("y", ref.astype(np.int32))], 10)
# (ten zero points: the test gives vectors of up to 8 as constants)
write_case("refuse_convinteger_runtime_zero_point_groups",
           [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2)],
           [("x", qx), ("xz", qxz), ("wz", np.zeros(10, np.int8))],
           [("y", (TensorProto.INT32, [1, 10, 4, 5]))], 10,
           inits=[("w", np.zeros((10, 2, 3, 3), np.int8))],
           expect="needs the weight and the zero point as constants")

# LRN with an even window (ONNX's asymmetric one) on a 3-D input.
xl3 = f32(2, 6, 7)
size, alpha, beta, bias = 4, 0.3, 0.6, 1.5
sq = np.zeros_like(xl3)
for ch in range(6):
    lo, hi = max(0, ch - (size - 1) // 2), min(5, ch + (size - 1 + 1) // 2)
    sq[:, ch] = (xl3[:, lo:hi + 1] ** 2).sum(axis=1)
write_case("lrn_even_size_3d",
           [helper.make_node("LRN", ["x"], ["y"], size=size, alpha=alpha, beta=beta, bias=bias)],
           [("x", xl3)], [("y", (xl3 / (bias + alpha / size * sq) ** beta).astype(np.float32))],
           13)

# QLinearMatMul: per-row and per-column scales and zero points, int8 output
# that saturates.
qa = rng.integers(-128, 128, (3, 6)).astype(np.int8)
qb = rng.integers(-128, 128, (6, 4)).astype(np.int8)
a_s = (rng.random(3) * 0.05 + 0.01).astype(np.float32)
b_s = (rng.random(4) * 0.05 + 0.01).astype(np.float32)
y_s = np.array([0.02], np.float32)
a_z = rng.integers(-3, 3, (3,)).astype(np.int8)
b_z = rng.integers(-3, 3, (4,)).astype(np.int8)
y_z = np.array([5], np.int8)
acc = (qa.astype(np.float64) - a_z[:, None]) @ (qb.astype(np.float64) - b_z)
yq = np.clip(np.rint(acc * a_s.astype(np.float64)[:, None] * b_s / y_s[0]) + 5, -128, 127)
write_case("qlinearmatmul_per_row_col_int8",
           [helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                             ["y"])],
           [("a", qa), ("b", qb)], [("y", yq.astype(np.int8))], 10,
           inits=[("as", a_s), ("az", a_z), ("bs", b_s), ("bz", b_z), ("ys", y_s), ("yz", y_z)])

# Edge shapes and attribute combinations.
xi32 = rng.integers(-50, 50, (7,)).astype(np.int32)
write_case("edge_argmin_int_rank1_to_scalar",
           [helper.make_node("ArgMin", ["x"], ["y"], axis=0, keepdims=0)],
           [("x", xi32)], [("y", np.array(np.argmin(xi32), np.int64))], 13)
write_case("edge_reducemean_all_to_scalar",
           [helper.make_node("ReduceMean", ["x"], ["y"], keepdims=0)],
           [("x", x)], [("y", np.array(x.mean(), np.float32))], 13)
x4 = f32(3, 2, 4, 5)
write_case("edge_softmax13_axis0", [helper.make_node("Softmax", ["x"], ["y"], axis=0)],
           [("x", x4)], [("y", torch.softmax(t(x4), 0).numpy())], 13)
xm = f32(1, 2, 9, 10)
y = torch.nn.functional.max_pool2d(t(xm), 3, stride=2, padding=1, dilation=2, ceil_mode=True)
write_case("edge_maxpool_ceil_dilation",
           [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                             pads=[1, 1, 1, 1], dilations=[2, 2], ceil_mode=1)],
           [("x", xm)], [("y", y.numpy())], 12)
# SAME_UPPER, stride 2: 9 -> 5 (total pad 2: 1, 1), 10 -> 5 (total 1: 0, 1).
xp = np.pad(xm, ((0, 0), (0, 0), (1, 1), (0, 1)), constant_values=-np.inf)
y = torch.nn.functional.max_pool2d(t(xp), 3, stride=2)
write_case("edge_maxpool_same_upper_stride2",
           [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                             auto_pad="SAME_UPPER")],
           [("x", xm)], [("y", y.numpy())], 12)
xp0 = np.pad(xm, ((0, 0), (0, 0), (1, 1), (1, 0)))
y = torch.nn.functional.avg_pool2d(t(xp0), 3, stride=2)
write_case("edge_avgpool_same_lower_include_pad",
           [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                             auto_pad="SAME_LOWER", count_include_pad=1)],
           [("x", xm)], [("y", y.numpy())], 12)
ga, gb = f32(2, 3), f32(3, 4)
write_case("edge_gemm_scalar_c_beta0",
           [helper.make_node("Gemm", ["a", "b", "c"], ["y"], beta=0.0)],
           [("a", ga), ("b", gb), ("c", np.array(np.inf, np.float32))], [("y", ga @ gb)], 13)
write_case("edge_gemm_scalar_c",
           [helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=2.0, beta=0.5)],
           [("a", ga), ("b", gb), ("c", np.array(3.0, np.float32))],
           [("y", 2 * ga @ gb + 1.5)], 13)
x1d = f32(2, 3, 9)
write_case("edge_globalmaxpool_1d", [helper.make_node("GlobalMaxPool", ["x"], ["y"])],
           [("x", x1d)], [("y", x1d.max(axis=2, keepdims=True))], 13)
s3, b3 = f32(3), f32(3)
write_case("edge_instancenorm_1d",
           [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
           [("x", x1d), ("s", s3), ("b", b3)],
           [("y", torch.nn.functional.instance_norm(t(x1d), weight=t(s3), bias=t(b3),
                                                    eps=1e-3).numpy())], 13)
x5b = f32(2, 3, 2, 3, 4)
m5, v5 = f32(3), np.abs(f32(3)) + 0.1
write_case("edge_batchnorm_5d",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
           [("x", x5b), ("s", s3), ("b", b3), ("m", m5), ("v", v5)],
           [("y", torch.nn.functional.batch_norm(t(x5b), t(m5), t(v5), t(s3), t(b3),
                                                 eps=1e-5).numpy())], 15)
xd = f32(1, 18, 2, 3)
write_case("edge_depthtospace_crd_block3",
           [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, mode="CRD")],
           [("x", xd)], [("y", torch.nn.functional.pixel_shuffle(t(xd), 3).numpy())], 13)
xc = f32(1, 2, 9, 8)
wc = f32(3, 2, 3, 3)
# SAME_UPPER with dilation 2, stride 1: total pad 4 (2, 2).
y = torch.nn.functional.conv2d(t(xc), t(wc), padding=2, dilation=2)
write_case("edge_conv_same_upper_dilated",
           [helper.make_node("Conv", ["x", "w"], ["y"], dilations=[2, 2], auto_pad="SAME_UPPER")],
           [("x", xc)], [("y", y.numpy())], 11, inits=[("w", wc)])
y = torch.nn.functional.conv2d(t(xc), t(wc), stride=2)
write_case("edge_conv_valid_stride2",
           [helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="VALID")],
           [("x", xc)], [("y", y.numpy())], 11, inits=[("w", wc)])
wt2 = f32(2, 3, 3, 3)
# output_shape 8 x 9 from 4 x 4, stride 2: full 9 x 9 -> cut 1 row (SAME_UPPER: at the end).
yf = torch.nn.functional.conv_transpose2d(t(xtd), t(wt2), stride=2).numpy()
write_case("edge_convtranspose_output_shape_same_upper",
           [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                             output_shape=[8, 9], auto_pad="SAME_UPPER")],
           [("x", xtd)], [("y", yf[:, :, :8, :9])], 11, inits=[("w", wt2)])

# MaxUnpool: indices into the whole flattened output (ONNX's), from
# PyTorch's per-plane ones; with pads, and an output_shape padded at the end.
xu = f32(2, 3, 6, 8)
pooled, idx = torch.nn.functional.max_pool2d(t(xu), 2, stride=2, return_indices=True)
plane = (np.arange(6).reshape(2, 3, 1, 1) * 6 * 8).astype(np.int64)
write_case("maxunpool_batch_channels",
           [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2],
                             strides=[2, 2])],
           [("x", pooled.numpy()), ("i", idx.numpy() + plane)],
           [("y", torch.nn.functional.max_unpool2d(pooled, idx, 2, stride=2).numpy())], 11)
un = torch.nn.functional.max_unpool2d(pooled, idx, 2, stride=2).numpy()
write_case("maxunpool_output_shape",
           [helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2],
                             strides=[2, 2])],
           [("x", pooled.numpy()), ("i", idx.numpy() + plane)],
           [("y", np.pad(un, ((0, 0), (0, 0), (0, 1), (0, 2))))], 11,
           inits=[("s", np.array([2, 3, 7, 10], np.int64))])

# QLinearConv: per-channel weight scales, an int32 bias, uint8 output.
qx = rng.integers(0, 256, (1, 4, 6, 7)).astype(np.uint8)
qw = rng.integers(0, 256, (6, 2, 3, 3)).astype(np.uint8)
xs_, xz_ = np.array(0.02, np.float32), np.array(120, np.uint8)
ws_ = (rng.random(6) * 0.02 + 0.005).astype(np.float32)
wz_ = np.array([128], np.uint8)
ys_, yz_ = np.array(0.15, np.float32), np.array(100, np.uint8)
qbias = rng.integers(-2000, 2000, (6,)).astype(np.int32)
acc = torch.nn.functional.conv2d(t(qx.astype(np.float64) - 120), t(qw.astype(np.float64) - 128),
                                 t(qbias.astype(np.float64)), padding=1, groups=2).numpy()
yq = np.clip(np.rint(acc * (0.02 * ws_.astype(np.float64))[None, :, None, None] /
                     np.float64(ys_)) + 100, 0, 255)
write_case("qlinearconv_per_channel_bias_groups",
           [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                             ["y"], group=2, pads=[1, 1, 1, 1])],
           [("x", qx)], [("y", yq.astype(np.uint8))], 10,
           inits=[("xs", xs_), ("xz", xz_), ("w", qw), ("ws", ws_), ("wz", wz_), ("ys", ys_),
                  ("yz", yz_), ("b", qbias)])

# Image chains: convolutions and poolings that hand each other flat NHWC
# images (fe_layout.c), next to readers that need NCHW (an Add, a ceil-mode
# pooling, a global pooling, a graph output) and a value two convolutions read.
F = torch.nn.functional
xq = f32(2, 3, 13, 11)
w1, b1 = f32(8, 3, 3, 3) / 5, f32(8)  # weights ~ 1 / sqrt(fan in): values stay near 1
w2, w3 = f32(8, 4, 3, 3) / 6, f32(8, 8, 1, 1) / 3
w4, w5 = f32(4, 8, 2, 2) / 6, f32(4, 8, 1, 1) / 3
p1 = F.max_pool2d(torch.relu(F.conv2d(t(xq), t(w1), t(b1), padding=1)), 3, 2, padding=1)
c2 = F.conv2d(p1, t(w2), padding=1, groups=2)
a1 = F.conv2d(c2, t(w3)) + c2
padded = F.pad(a1, (0, 1, 0, 1))
p2 = F.avg_pool2d(padded, 2, 2) / F.avg_pool2d(F.pad(torch.ones_like(a1), (0, 1, 0, 1)), 2, 2)
c4 = F.conv2d(p2, t(w4))
write_case("image_chain",
           [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"]),
            helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["p1", "w2"], ["c2"], group=2, pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["c2", "w3"], ["c3"]),
            helper.make_node("Add", ["c3", "c2"], ["a1"]),
            helper.make_node("AveragePool", ["a1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2],
                             pads=[0, 0, 1, 1], count_include_pad=0),
            helper.make_node("Conv", ["p2", "w4"], ["c4"]),
            helper.make_node("MaxPool", ["c4"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                             ceil_mode=1),
            helper.make_node("Conv", ["p1", "w5"], ["c5"]),
            helper.make_node("GlobalAveragePool", ["c5"], ["z"])],
           [("x", xq)],
           [("y", F.max_pool2d(c4, 2, ceil_mode=True).numpy()),
            ("z", F.adaptive_avg_pool2d(F.conv2d(p1, t(w5)), 1).numpy())], 13,
           inits=[("w1", w1), ("b1", b1), ("w2", w2), ("w3", w3), ("w4", w4), ("w5", w5)])
# A batch of one through two image nodes, traced.
xo = f32(1, 2, 9, 9)
wo = f32(3, 2, 3, 3)
write_case("trace_image_pair",
           [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]),
            helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
           [("x", xo)], [("y", F.max_pool2d(F.conv2d(t(xo), t(wo), stride=2), 2).numpy())], 13,
           inits=[("w", wo)])
# Reshapes read images: a Flatten at axis 2 and a Reshape, each transposing
# the NHWC image once into its own shape.
xr = f32(3, 4, 7, 5)
wr = f32(6, 4, 3, 3) / 6
cr = F.conv2d(t(xr), t(wr), padding=1)
pr = F.max_pool2d(cr, 2, 2)
write_case("image_reshapes",
           [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Flatten", ["c"], ["y"], axis=2),
            helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Reshape", ["p", "s"], ["z"])],
           [("x", xr)], [("y", cr.reshape(3 * 6, 35).numpy()),
                         ("z", pr.reshape(3, 2, 18).numpy())], 13,
           inits=[("w", wr), ("s", np.array([3, 2, 18], np.int64))])
# Flattened images feeding matrix products keep NHWC order, the products'
# constant weights permuted instead (fe_plan.nhwc_rows): a Gemm with transB
# and a bias then a Relu, a MatMul, a Reshape to [N, -1] into a Gemm without
# transB, a Flatten that an Add also reads (which needs ONNX's order), and
# one of a convolution's fused Relu.
xf = f32(3, 2, 6, 5)
wf = f32(4, 2, 3, 3) / 4
g1, gb = f32(7, 4 * 3 * 2) / 5, f32(7)
m1 = f32(4 * 6 * 5, 5) / 10
g2 = f32(4 * 6 * 5, 3) / 10
cf = F.conv2d(t(xf), t(wf), padding=1)
pf = F.max_pool2d(cf, 2, 2)
ff = cf.reshape(3, -1)
write_case("image_flatten_products",
           [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Flatten", ["p"], ["pf"]),
            helper.make_node("Gemm", ["pf", "g1", "gb"], ["g"], transB=1),
            helper.make_node("Relu", ["g"], ["y"]),
            helper.make_node("Flatten", ["c"], ["cf"]),
            helper.make_node("MatMul", ["cf", "m1"], ["z"]),
            helper.make_node("Conv", ["x", "w"], ["c2"], pads=[1, 1, 1, 1]),
            helper.make_node("Reshape", ["c2", "s"], ["r2"]),
            helper.make_node("Gemm", ["r2", "g2"], ["v"]),
            helper.make_node("Flatten", ["c2"], ["f2"]),
            helper.make_node("Gemm", ["f2", "g2"], ["v2"]),
            helper.make_node("Add", ["f2", "f2"], ["u"]),
            helper.make_node("Conv", ["x", "w"], ["c3"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c3"], ["r3"]),
            helper.make_node("Flatten", ["r3"], ["f3"]),
            helper.make_node("Gemm", ["f3", "g2"], ["t"])],
           [("x", xf)],
           [("y", torch.relu(pf.reshape(3, -1) @ t(g1).T + t(gb)).numpy()),
            ("z", (ff @ t(m1)).numpy()),
            ("v", (ff @ t(g2)).numpy()),
            ("v2", (ff @ t(g2)).numpy()),
            ("u", (ff + ff).numpy()),
            ("t", (torch.relu(ff) @ t(g2)).numpy())], 13,
           inits=[("w", wf), ("g1", g1), ("gb", gb), ("m1", m1), ("g2", g2),
                  ("s", np.array([3, -1], np.int64))])


# Resize against torch.nn.functional.interpolate: the modes PyTorch's
# exporter emits (sizes and scales as constants), up and down at once, and
# Upsample-9 (nearest by the floor of x / scale). Inputs in [0.5, 1.5]:
# cubic weights are partly negative, and around zero their sums would cancel
# to values that float32 cannot give to rtol 1e-3 in any order of adding.
xr = rng.uniform(0.5, 1.5, (2, 3, 5, 7)).astype(np.float32)
resize_cases = (
    ("resize_bilinear_half_pixel", "linear", "half_pixel", (9, 4),
     F.interpolate(t(xr), size=(9, 4), mode="bilinear", align_corners=False)),
    ("resize_bilinear_align_corners", "linear", "align_corners", (3, 11),
     F.interpolate(t(xr), size=(3, 11), mode="bilinear", align_corners=True)),
    ("resize_bicubic_half_pixel", "cubic", "half_pixel", (8, 10),
     F.interpolate(t(xr), size=(8, 10), mode="bicubic", align_corners=False)),
    ("resize_bicubic_align_corners", "cubic", "align_corners", (4, 13),
     F.interpolate(t(xr), size=(4, 13), mode="bicubic", align_corners=True)),
    ("resize_nearest_sizes", "nearest", "asymmetric", (7, 3),
     F.interpolate(t(xr), size=(7, 3), mode="nearest")),
)
for name, mode, coord, hw, want in resize_cases:
    attrs = dict(mode=mode, coordinate_transformation_mode=coord)
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    write_case(name,
               [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)],
               [("x", xr)], [("y", want.numpy())], 13,
               inits=[("sizes", np.array([2, 3, hw[0], hw[1]], np.int64))])
xv = rng.uniform(0.5, 1.5, (1, 2, 3, 4, 5)).astype(np.float32)
write_case("resize_trilinear_scales",
           [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
           [("x", xv)],
           [("y", F.interpolate(t(xv), scale_factor=(2, 1.5, 0.5), mode="trilinear",
                                align_corners=False, recompute_scale_factor=False).numpy())],
           13, inits=[("scales", np.array([1, 1, 2, 1.5, 0.5], np.float32))])
write_case("upsample9_nearest",
           [helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")],
           [("x", xr)], [("y", F.interpolate(t(xr), scale_factor=(2, 3), mode="nearest").numpy())],
           9, inits=[("scales", np.array([1, 1, 2, 3], np.float32))])


# The recurrent ops against torch.nn's, as PyTorch's exporter writes them
# (weights as initializers, GRU with linear_before_reset, batch_first as
# Transposes around the op), and ONNX's sequence_lens against NumPy.
def write_torch_case(name, module, args, input_names, output_names):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    module.eval()
    torch.onnx.export(module, args, os.path.join(d, "model.onnx"), input_names=input_names,
                      output_names=output_names, opset_version=14)
    with torch.no_grad():
        got = module(*args)
    def flatten(v):
        out = []
        for g in v:
            out.extend(g if isinstance(g, tuple) else (g,))
        return out
    flat = flatten(got if isinstance(got, tuple) else (got,))
    for i, (n, a) in enumerate(zip(input_names, flatten(args))):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a.numpy(), n).SerializeToString())
    for i, (n, a) in enumerate(zip(output_names, flat)):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a.numpy(), n).SerializeToString())


torch.manual_seed(3)
write_torch_case("lstm_torch_bidirectional_2_layers",
                 torch.nn.LSTM(5, 7, num_layers=2, bidirectional=True),
                 (t(f32(6, 3, 5)), (t(f32(4, 3, 7)), t(f32(4, 3, 7)))),
                 ["x", "h0", "c0"], ["y", "hn", "cn"])
write_torch_case("gru_torch_batch_first", torch.nn.GRU(4, 6, batch_first=True),
                 (t(f32(2, 5, 4)),), ["x"], ["y", "hn"])
write_torch_case("rnn_torch_relu_bidirectional",
                 torch.nn.RNN(3, 4, nonlinearity="relu", bidirectional=True),
                 (t(f32(4, 2, 3)),), ["x"], ["y", "hn"])

# RNN with sequence_lens given at run time (9 of them: the harness makes
# shorter integer vectors constants): a sequence's steps past its length
# leave its state alone and give zeros in Y.
xs, ws, rs, bs = f32(4, 9, 3), f32(1, 5, 3), f32(1, 5, 5), f32(1, 10)
lens = np.array([4, 2, 1, 3, 4, 4, 2, 1, 3], np.int32)
h = np.zeros((9, 5), np.float32)
ys = np.zeros((4, 1, 9, 5), np.float32)
for step in range(4):
    hn = np.tanh(xs[step] @ ws[0].T + h @ rs[0].T + bs[0, :5] + bs[0, 5:])
    live = (step < lens)[:, None]
    h = np.where(live, hn, h)
    ys[step, 0] = np.where(live, hn, 0)
write_case("rnn_runtime_sequence_lens",
           [helper.make_node("RNN", ["x", "w", "r", "b", "lens"], ["y", "yh"], hidden_size=5)],
           [("x", xs), ("w", ws), ("r", rs), ("b", bs), ("lens", lens)],
           [("y", ys), ("yh", h[None].astype(np.float32))], 14)
# The same bidirectionally: the reverse direction runs each sequence from
# its own last step down.
wb, rb, bb = f32(2, 5, 3), f32(2, 5, 5), f32(2, 10)
yb = np.zeros((4, 2, 9, 5), np.float32)
hb = np.zeros((2, 9, 5), np.float32)
for d in range(2):
    for b in range(9):
        h = np.zeros(5, np.float32)
        steps = range(lens[b]) if d == 0 else range(lens[b] - 1, -1, -1)
        for step in steps:
            h = np.tanh(xs[step, b] @ wb[d].T + h @ rb[d].T + bb[d, :5] + bb[d, 5:])
            yb[step, d, b] = h
        hb[d, b] = h
write_case("rnn_bidirectional_runtime_sequence_lens",
           [helper.make_node("RNN", ["x", "w", "r", "b", "lens"], ["y", "yh"], hidden_size=5,
                             direction="bidirectional")],
           [("x", xs), ("w", wb), ("r", rb), ("b", bb), ("lens", lens)],
           [("y", yb), ("yh", hb)], 14)

# GatherND with negative indices and a batch dim, against NumPy; the
# indices a run-time input (more than the harness makes constants).
gd = f32(2, 3, 4, 5)
gi = np.stack([rng.integers(-3, 3, (2, 6)), rng.integers(-4, 4, (2, 6))], -1).astype(np.int64)
gy = np.stack([gd[b][gi[b, :, 0], gi[b, :, 1]] for b in range(2)])
write_case("gathernd_batch_negative",
           [helper.make_node("GatherND", ["d", "i"], ["y"], batch_dims=1)],
           [("d", gd), ("i", gi)], [("y", gy)], 13)

# The scatters against NumPy, indices at run time (more than the harness
# makes constants): ScatterND replacing and multiplying (duplicates in
# order), ScatterElements along the last axis with negative indices and
# indices smaller than the data in another dim, adding duplicates.
sd = f32(5, 4, 3)
si = np.array([[4], [0], [-2], [1], [0], [4], [2], [3], [1]], np.int64)
su = f32(9, 4, 3)
for red in ("none", "mul"):
    want = sd.copy()
    rows = [r if r >= 0 else r + 5 for r in si[:, 0]]
    if red == "none":
        rows, upd = rows[:4], su[:4]
    else:
        upd = su
    for r, u in zip(rows, upd):
        want[r] = u if red == "none" else want[r] * u
    write_case("scatternd_%s" % red,
               [helper.make_node("ScatterND", ["d", "i", "u"], ["y"],
                                 **({} if red == "none" else {"reduction": red}))],
               [("d", sd), ("i", si[:len(rows)].copy()), ("u", upd)], [("y", want)], 16)
ed = f32(3, 4, 6)
ei = rng.integers(-6, 6, (2, 4, 5)).astype(np.int64)
eu = f32(2, 4, 5)
ew = ed.copy()
for a in range(2):
    for b in range(4):
        for k in range(5):
            ew[a, b, ei[a, b, k] % 6] += eu[a, b, k]
write_case("scatter_elements_add_negative",
           [helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=-1, reduction="add")],
           [("d", ed), ("i", ei), ("u", eu)], [("y", ew)], 16)
# A graph network's message sum (PyTorch's scatter_add along the nodes):
# more updates along the axis than the data has rows, several into one row.
# Its own generator, so that the cases after it keep their data.
mrng = np.random.default_rng(11)
md = np.zeros((4, 3), np.float32)
mi = np.repeat(mrng.integers(0, 4, (7, 1)), 3, axis=1).astype(np.int64)
mu = mrng.standard_normal((7, 3)).astype(np.float32)
mw = md.copy()
np.add.at(mw, (mi[:, 0],), mu)
write_case("scatter_elements_add_more_updates_than_rows",
           [helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=0, reduction="add")],
           [("d", md), ("i", mi), ("u", mu)], [("y", mw)], 16)
write_case("invalid_scatter_elements_wider_than_data",
           [helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=0)],
           [("d", md), ("i", np.zeros((2, 4), np.int64)), ("u", np.ones((2, 4), np.float32))],
           [("y", (TensorProto.FLOAT, [4, 3]))], 16,
           expect="indices and updates must have one shape, of the data's rank and, but along "
                  "axis 0, no larger in any dim")

# QuantizeLinear to int8 per channel (ties to even, saturation), then
# DequantizeLinear back, against NumPy; x a run-time input.
qx = np.concatenate([np.array([0.25, 0.75, -0.25, 1.25, 300.0, -300.0], np.float32),
                     f32(30) * 20]).reshape(2, 3, 6)
qs = np.array([0.5, 0.25, 2.0], np.float32)
qz = np.array([3, -5, 0], np.int8)
qq = np.clip(np.round(qx / qs[None, :, None]) + qz[None, :, None], -128, 127).astype(np.int8)
qd = ((qq.astype(np.float32) - qz[None, :, None]) * qs[None, :, None]).astype(np.float32)
write_case("quantize_dequantize_int8_axis",
           [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], axis=1)],
           [("x", qx)], [("q", qq), ("d", qd)], 13, inits=[("s", qs), ("z", qz)])

# TopK with ties (the lower index first), largest and smallest, against a
# stable NumPy sort; X a run-time input.
tx = rng.integers(-4, 5, (3, 10, 4)).astype(np.float32)
for largest in (1, 0):
    order = np.argsort(-tx if largest else tx, axis=1, kind="stable")[:, :6, :]
    write_case("topk_ties_%s" % ("largest" if largest else "smallest"),
               [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
               [("x", tx)],
               [("v", np.take_along_axis(tx, order, 1)), ("i", order.astype(np.int64))], 11,
               inits=[("k", np.array([6], np.int64))])
write_case("topk_k_zero",
           [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
           [("x", tx)], [("v", np.zeros((3, 0, 4), np.float32)),
                         ("i", np.zeros((3, 0, 4), np.int64))],
           11, inits=[("k", np.array([0], np.int64))])

# ReverseSequence of rank 3, time-major, lengths at run time, against NumPy.
rx = f32(6, 9, 4)
rl = np.array([6, 1, 3, 0, 5, 2, 6, 4, 1], np.int64)
ry = rx.copy()
for b, n in enumerate(rl):
    ry[:n, b] = rx[:n, b][::-1]
write_case("reverse_sequence_rank3",
           [helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=0, batch_axis=1)],
           [("x", rx), ("l", rl)], [("y", ry)], 10)

# DFT against NumPy's FFT: opset 20's axis input with zero padding
# (complex), truncation with a onesided real transform, and opset 17's
# inverse along an inner axis.
dc = f32(2, 6, 5, 2)
want = np.fft.fft(dc[..., 0] + 1j * dc[..., 1], n=8, axis=1)
write_case("dft20_complex_pad",
           [helper.make_node("DFT", ["x", "n", "a"], ["y"])],
           [("x", dc)], [("y", np.stack([want.real, want.imag], -1).astype(np.float32))], 20,
           inits=[("n", np.array(8, np.int64)), ("a", np.array(1, np.int64))])
dr = f32(3, 9, 1)
want = np.fft.rfft(dr[:, :6, 0], axis=1)
write_case("dft20_real_onesided_truncate",
           [helper.make_node("DFT", ["x", "n"], ["y"], onesided=1)],
           [("x", dr)], [("y", np.stack([want.real, want.imag], -1).astype(np.float32))], 20,
           inits=[("n", np.array(6, np.int64))])
di = f32(2, 4, 6, 2)
want = np.fft.ifft(di[..., 0] + 1j * di[..., 1], axis=2)
write_case("dft17_inverse_axis2",
           [helper.make_node("DFT", ["x"], ["y"], axis=2, inverse=1)],
           [("x", di)], [("y", np.stack([want.real, want.imag], -1).astype(np.float32))], 17)
write_case("refuse_dft_onesided_inverse",
           [helper.make_node("DFT", ["x"], ["y"], axis=1, inverse=1, onesided=1)],
           [("x", dr)], [("y", (TensorProto.FLOAT, (3, 5, 2)))], 17,
           expect="onesided=1 with inverse=1")


def stft_np(x, step, frame, window, onesided):
    """x complex [B, T]: [B, frames, bins, 2]."""
    frames = (x.shape[1] - frame) // step + 1
    fr = np.stack([x[:, f * step:f * step + frame] * window for f in range(frames)], 1)
    s = np.fft.fft(fr, axis=-1)[..., :frame // 2 + 1 if onesided else frame]
    return np.stack([s.real, s.imag], -1).astype(np.float32)


# A log-mel spectrogram as an audio front end builds it: STFT with a Hann
# window (a folded constant), power, MelWeightMatrix, log; against NumPy.
sig = f32(2, 400)
hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(32) / 32)).astype(np.float32)
spec = stft_np(sig.astype(np.float64), 10, 32, hann, True)
power = (spec.astype(np.float64) ** 2).sum(-1)


def mel_np(mels, n, rate, lo, hi):
    """ONNX's MelWeightMatrix construction, in NumPy."""
    pts = np.arange(mels + 2) * ((2595 * np.log10(1 + hi / 700) - 2595 * np.log10(1 + lo / 700))
                                 / (mels + 2)) + 2595 * np.log10(1 + lo / 700)
    pts = np.floor((n + 1) * (700 * (10 ** (pts / 2595) - 1)) / rate).astype(int)
    m = np.zeros((n // 2 + 1, mels))
    for i in range(mels):
        a, b, c = pts[i], pts[i + 1], pts[i + 2]
        for j in range(a, b + 1):
            m[j, i] = 1.0 if b == a else (j - a) / (b - a)
        for j in range(b, c):
            m[j, i] = (c - j) / (c - b)
    return m


mel = mel_np(8, 32, 16000, 125.0, 7600.0)
write_case("log_mel_spectrogram",
           [helper.make_node("Unsqueeze", ["sig", "ax"], ["s3"]),
            helper.make_node("HannWindow", ["wl"], ["win"]),
            helper.make_node("STFT", ["s3", "step", "win"], ["spec"]),
            helper.make_node("ReduceSumSquare", ["spec", "last"], ["pow"], keepdims=0),
            helper.make_node("MelWeightMatrix", ["nm", "wl", "sr", "lo", "hi"], ["mel"]),
            helper.make_node("MatMul", ["pow", "mel"], ["mp"]),
            helper.make_node("Add", ["mp", "eps"], ["mpe"]),
            helper.make_node("Log", ["mpe"], ["y"])],
           [("sig", sig)], [("y", np.log(power @ mel + 1e-6).astype(np.float32))], 18,
           inits=[("ax", np.array([2], np.int64)), ("wl", np.array(32, np.int64)),
                  ("step", np.array(10, np.int64)), ("last", np.array([3], np.int64)),
                  ("nm", np.array(8, np.int64)), ("sr", np.array(16000, np.int64)),
                  ("lo", np.array(125.0, np.float32)), ("hi", np.array(7600.0, np.float32)),
                  ("eps", np.array(1e-6, np.float32))])

# STFT of a complex signal, two-sided, frame_length and no window; and an
# odd dft_length MelWeightMatrix (its top point one past the last bin).
sc = f32(1, 50, 2)
write_case("stft_complex_twosided",
           [helper.make_node("STFT", ["x", "step", "", "len"], ["y"], onesided=0)],
           [("x", sc)], [("y", stft_np(sc[..., 0] + 1j * sc[..., 1], 7, 12, 1.0, False))], 17,
           inits=[("step", np.array(7, np.int64)), ("len", np.array(12, np.int64))])
write_case("mel_weight_matrix_odd",
           [helper.make_node("MelWeightMatrix", ["nm", "n", "sr", "lo", "hi"], ["y"])],
           [], [("y", mel_np(10, 31, 16000, 100.0, 8000.0).astype(np.float32))], 17,
           inits=[("nm", np.array(10, np.int64)), ("n", np.array(31, np.int64)),
                  ("sr", np.array(16000, np.int64)), ("lo", np.array(100.0, np.float32)),
                  ("hi", np.array(8000.0, np.float32))])

# GridSample against PyTorch's grid_sample: every mode, padding rule and
# corner alignment, with grid points up to 30% outside the image (opset 16's
# mode names; two cases with opset 20's).
gx = f32(2, 3, 5, 6)
gg = (rng.uniform(-1.3, 1.3, (2, 4, 7, 2))).astype(np.float32)
for mode in ("bilinear", "nearest", "bicubic"):
    for pad in ("zeros", "border", "reflection"):
        for align in (0, 1):
            want = torch.nn.functional.grid_sample(t(gx), t(gg), mode=mode, padding_mode=pad,
                                                   align_corners=bool(align)).numpy()
            write_case("gridsample_%s_%s_%d" % (mode, pad, align),
                       [helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                                         padding_mode=pad, align_corners=align)],
                       [("x", gx), ("g", gg)], [("y", want)], 16)
for mode, name in (("bilinear", "linear"), ("bicubic", "cubic")):
    want = torch.nn.functional.grid_sample(t(gx), t(gg), mode=mode, padding_mode="reflection",
                                           align_corners=False).numpy()
    write_case("gridsample20_%s" % name,
               [helper.make_node("GridSample", ["x", "g"], ["y"], mode=name,
                                 padding_mode="reflection")],
               [("x", gx), ("g", gg)], [("y", want)], 20)

# One channel and many images, as an optical flow network looks up its
# correlation volume (RAFT's): the samples stay dense tiles, and the
# positions, 1280, fill whole tile rows.
gx1 = f32(40, 1, 8, 10)
gg1 = (rng.uniform(-1.2, 1.2, (40, 4, 8, 2))).astype(np.float32)
want = torch.nn.functional.grid_sample(t(gx1), t(gg1), mode="bilinear", padding_mode="zeros",
                                       align_corners=True).numpy()
write_case("gridsample_one_channel",
           [helper.make_node("GridSample", ["x", "g"], ["y"], align_corners=1)],
           [("x", gx1), ("g", gg1)], [("y", want)], 16)

# Row numbers and positions past 256, which bfloat16 cannot hold: every
# case also runs in the bf16 and bfp8 modes, whose tables must stay float32.
ld = f32(1000, 4)
li = np.array([[999], [257], [3], [771], [-2]], np.int64)
lu = f32(5, 4)
lw = ld.copy()
lw[li[:, 0] % 1000] = lu
write_case("scatternd_rows_past_256",
           [helper.make_node("ScatterND", ["d", "i", "u"], ["y"])],
           [("d", ld), ("i", li), ("u", lu)], [("y", lw)], 13)
lx = f32(300, 2, 3)
ll = np.array([300, 271], np.int64)
ly = lx.copy()
for b, n in enumerate(ll):
    ly[:n, b] = lx[:n, b][::-1]
write_case("reverse_sequence_steps_past_256",
           [helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=0, batch_axis=1)],
           [("x", lx), ("l", ll)], [("y", ly)], 10)
oi = np.array([299, 257, 3, -1], np.int64)
write_case("onehot_depth_300",
           [helper.make_node("OneHot", ["i", "depth", "v"], ["y"])],
           [("i", oi)], [("y", np.eye(300, dtype=np.float32)[oi % 300])], 11,
           inits=[("depth", np.array(300, np.int64)), ("v", np.array([0, 1], np.float32))])
# 300 distinct values that bfloat16 holds exactly, the largest placed past
# index 256.
tv = np.concatenate([np.arange(256), 256 + 2 * np.arange(44)]).astype(np.float32)
tk = np.stack([rng.permutation(tv) for _ in range(2)])
for row in tk:
    at = int(np.argmax(row))
    row[[at, 281]] = row[[281, at]]
order = np.argsort(-tk, axis=1, kind="stable")[:, :3]
write_case("topk_axis_300",
           [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
           [("x", tk)], [("v", np.take_along_axis(tk, order, 1)), ("i", order.astype(np.int64))],
           11, inits=[("k", np.array([3], np.int64))])

# Training-mode BatchNormalization (the batch's own statistics, biased
# variance, running mean moved by momentum; the running variance output
# left out), its Y through a fused Relu, against NumPy on [N, C, L].
bx = f32(3, 5, 7) * 2 + 1
bs, bb, bm, bv = f32(5), f32(5), f32(5), np.abs(f32(5)) + 0.5
mean, var = bx.mean(axis=(0, 2)), bx.var(axis=(0, 2))
by = (bx - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-3) * bs[None, :, None] \
    + bb[None, :, None]
write_case("batchnorm_training_relu",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", ""],
                             training_mode=1, momentum=0.8, epsilon=1e-3),
            helper.make_node("Relu", ["y"], ["r"])],
           [("x", bx)], [("r", np.maximum(by, 0).astype(np.float32)),
                         ("rm", (bm * 0.8 + mean * 0.2).astype(np.float32))], 15,
           inits=[("s", bs), ("b", bb), ("m", bm), ("v", bv)])


# MaxPool's Indices against PyTorch's return_indices (which counts within
# each (n, c) plane: ONNX adds (n C + c) times the plane's size): 1-D, 2-D
# with padding, dilation and ceil_mode, 3-D, and storage_order 1.
def pool_case(name, x, torch_pool, attrs, storage_order=0):
    y, i = torch_pool(t(x))
    y, i = y.numpy(), i.numpy().astype(np.int64)
    plane = int(np.prod(x.shape[2:]))
    if storage_order:
        h, w = i // x.shape[3], i % x.shape[3]
        i = w * x.shape[2] + h
    off = (np.arange(x.shape[0])[:, None] * x.shape[1] + np.arange(x.shape[1])[None, :]) * plane
    i = i + off.reshape(off.shape + (1,) * (x.ndim - 2))
    if storage_order:
        attrs = dict(attrs, storage_order=1)
    write_case(name, [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)],
               [("x", x)], [("y", y), ("i", i)], 12)


F = torch.nn.functional
px = f32(2, 3, 9, 11)
pool_case("maxpool_indices_2d_pad_stride", px,
          lambda a: F.max_pool2d(a, 3, 2, 1, return_indices=True),
          dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
pool_case("maxpool_indices_2d_dilation_ceil", px,
          lambda a: F.max_pool2d(a, 2, 2, 0, 2, ceil_mode=True, return_indices=True),
          dict(kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 2], ceil_mode=1))
pool_case("maxpool_indices_2d_storage_order", px,
          lambda a: F.max_pool2d(a, [2, 3], [2, 2], return_indices=True),
          dict(kernel_shape=[2, 3], strides=[2, 2]), storage_order=1)
pool_case("maxpool_indices_1d", f32(2, 3, 17),
          lambda a: F.max_pool1d(a, 4, 3, 2, return_indices=True),
          dict(kernel_shape=[4], strides=[3], pads=[2, 2]))
pool_case("maxpool_indices_3d", f32(1, 2, 5, 6, 7),
          lambda a: F.max_pool3d(a, 2, 2, return_indices=True),
          dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2]))
# MaxPool's Indices feeding MaxUnpool (a SegNet-style encoder and decoder
# pair) against PyTorch. Even sizes: ONNX decodes the indices against the
# unpooled size the kernel and strides give, PyTorch against output_size.
# Distinct values that bfloat16 holds exactly, so the bf16 modes see no ties.
px = ((rng.permutation(480) - 240) / 16).astype(np.float32).reshape(2, 3, 8, 10)
uy, ui = F.max_pool2d(t(px), 2, 2, return_indices=True)
write_case("maxpool_maxunpool_pair",
           [helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Relu", ["p"], ["r"]),
            helper.make_node("MaxUnpool", ["r", "i", "shape"], ["y"], kernel_shape=[2, 2],
                             strides=[2, 2])],
           [("x", px)], [("y", F.max_unpool2d(F.relu(uy), ui, 2, 2).numpy())],
           12, inits=[("shape", np.array([2, 3, 8, 10], np.int64))])


# RoiAlign against a NumPy transcription of the Mask R-CNN sampling rules:
# RoIs across two images, partly outside the image and under a pixel,
# spatial_scale 0.5; both coordinate modes, avg and max. With ratio 0 each
# bin takes ceil(bin size) samples per axis, that size computed in float32
# as ONNX Runtime does (a float64 size could round to the other side of a
# whole number).
def roi_align_np(x, rois, bidx, oh, ow, ratio, scale, half_pixel, take_max):
    n, ch, h, w = x.shape
    out = np.zeros((len(rois), ch, oh, ow), np.float64)
    off = 0.5 if half_pixel else 0.0
    s32, off32 = np.float32(scale), np.float32(off)
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bw, bh = rw / ow, rh / oh
        gh = gw = ratio
        if ratio == 0:
            c = rois[r].astype(np.float32)
            rw32 = (c[2] * s32 - off32) - (c[0] * s32 - off32)
            rh32 = (c[3] * s32 - off32) - (c[1] * s32 - off32)
            if not half_pixel:
                rw32, rh32 = max(rw32, np.float32(1)), max(rh32, np.float32(1))
            gw = int(np.ceil(rw32 / np.float32(ow)))
            gh = int(np.ceil(rh32 / np.float32(oh)))
        b = bidx[r] + n if bidx[r] < 0 else bidx[r]
        if not 0 <= b < n:
            continue
        img = x[b].astype(np.float64)
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    for ix in range(gw):
                        yy = sy + ph * bh + (iy + 0.5) * bh / gh
                        xx = sx + pw * bw + (ix + 0.5) * bw / gw
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            vals.append(np.zeros(ch))
                            continue
                        yy, xx = max(yy, 0.0), max(xx, 0.0)
                        yl, xl = int(yy), int(xx)
                        if yl >= h - 1:
                            yl = yh = h - 1
                            yy = float(yl)
                        else:
                            yh = yl + 1
                        if xl >= w - 1:
                            xl = xh = w - 1
                            xx = float(xl)
                        else:
                            xh = xl + 1
                        ly, lx = yy - yl, xx - xl
                        parts = [(1 - ly) * (1 - lx) * img[:, yl, xl], (1 - ly) * lx * img[:, yl, xh],
                                 ly * (1 - lx) * img[:, yh, xl], ly * lx * img[:, yh, xh]]
                        vals.append(np.max(parts, 0) if take_max else np.sum(parts, 0))
                if take_max:
                    out[r, :, ph, pw] = np.max(vals, 0)
                else:  # ONNX divides by max(grid_h * grid_w, 1), also when no sample exists
                    out[r, :, ph, pw] = np.sum(vals, 0) / max(gh * gw, 1) if vals else 0
    return out.astype(np.float32)


rx = f32(2, 3, 12, 15)
rr = np.array([[0, 0, 20, 16], [3.3, 5.1, 9.7, 8.2], [-6, -4, 12, 30], [10, 10, 10.4, 10.3],
               [24, 18, 40, 30]], np.float32)
rb = np.array([0, 1, 1, 0, 1], np.int64)
for coord, mode in (("half_pixel", "avg"), ("output_half_pixel", "avg"), ("half_pixel", "max")):
    write_case("roialign_%s_%s" % (coord, mode),
               [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=3,
                                 output_width=4, sampling_ratio=2, spatial_scale=0.5, mode=mode,
                                 coordinate_transformation_mode=coord)],
               [("x", rx), ("rois", rr), ("b", rb)],
               [("y", roi_align_np(rx, rr, rb, 3, 4, 2, 0.5, coord == "half_pixel",
                                   mode == "max"))], 16)
# The adaptive grid (sampling_ratio 0, the default): the RoIs above, one
# many times the image (15 x 15 samples a bin, most of them outside), one
# whose bins are 2.01 pixels (3 samples, just over half a pixel apart), one
# backwards (no samples: zeros), one a point, and batch indices -1 (the
# last image) and 2 (none: zeros).
ra = np.concatenate([rr, np.array([[-40, -30, 80, 60], [1, 2, 17.08, 20.09], [20, 16, 6, 2],
                                   [7, 7, 7, 7], [2, 3, 22, 19], [2, 3, 22, 19]], np.float32)])
rab = np.concatenate([rb, np.array([0, 1, 0, 1, -1, 2], np.int64)])
for coord in ("half_pixel", "output_half_pixel"):
    write_case("roialign_adaptive_%s" % coord,
               [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=3,
                                 output_width=4, spatial_scale=0.5,
                                 coordinate_transformation_mode=coord)],
               [("x", rx), ("rois", ra), ("b", rab)],
               [("y", roi_align_np(rx, ra, rab, 3, 4, 0, 0.5, coord == "half_pixel", False))], 16)
# Opset 10's node: output_half_pixel, one image, one channel, 7 x 7 bins.
write_case("roialign10_adaptive",
           [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=7,
                             output_width=7)],
           [("x", rx[:1, :1]), ("rois", ra * 0.5), ("b", np.zeros(len(ra), np.int64))],
           [("y", roi_align_np(rx[:1, :1], ra * 0.5, np.zeros(len(ra), np.int64), 7, 7, 0, 1.0,
                               False, False))], 10)
write_case("refuse_roialign_adaptive_max",
           [helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=3,
                             output_width=4, mode="max")],
           [("x", rx), ("rois", rr), ("b", rb)], [("y", (TensorProto.FLOAT, [5, 3, 3, 4]))], 16,
           expect="mode=max with sampling_ratio=0 (a sample grid that depends on each RoI's size "
                  "at run time) is not supported")

# Det against NumPy: a batch of 5 x 5 matrices, one singular (two equal
# rows), one with a
# zero on the diagonal (pivoting), a permutation (det -1), and 1 x 1.
dm = f32(2, 3, 5, 5)
dm[0, 1, 4] = dm[0, 1, 2]  # two equal rows: det exactly 0
dm[1, 0] = np.eye(5, dtype=np.float32)[[1, 0, 2, 4, 3]]  # two swaps: det 1
dm[1, 2, 0, 0] = 0.0
write_case("det_batched_pivoting", [helper.make_node("Det", ["x"], ["y"])], [("x", dm)],
           [("y", np.linalg.det(dm.astype(np.float64)).astype(np.float32))], 11)
d1 = f32(4, 1, 1)
write_case("det_1x1", [helper.make_node("Det", ["x"], ["y"])], [("x", d1)],
           [("y", d1[:, 0, 0].copy())], 11)

# Shapes decided by constants: Compress with a constant condition gathers
# run-time data on the device (along an axis, and flattened with a condition
# shorter than the data); NonZero of a constant mask feeds a Gather of
# run-time data (x[:, mask]); Unique folds, its inverse indices gathering
# run-time rows.
cx = f32(2, 5, 3)
cond = np.array([True, False, True, True, False])
write_case("compress_axis_runtime_data",
           [helper.make_node("Compress", ["x", "c"], ["y0"], axis=1),
            helper.make_node("Relu", ["y0"], ["y"])],
           [("x", cx)], [("y", np.maximum(np.compress(cond, cx, axis=1), 0))], 11,
           inits=[("c", cond)])
cond_flat = np.array([False, True, True, False, False, True, False, True, True])
write_case("compress_flat_short_condition",
           [helper.make_node("Compress", ["x", "c"], ["y"])],
           [("x", cx)], [("y", np.compress(cond_flat, cx))], 11, inits=[("c", cond_flat)])
mask = np.array([0, 1, 1, 0, 0, 1], np.float32)
nx = f32(3, 6)
write_case("nonzero_mask_gather",
           [helper.make_node("NonZero", ["m"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "ax"], ["idx"]),
            helper.make_node("Gather", ["x", "idx"], ["y"], axis=1)],
           [("x", nx)], [("y", nx[:, mask != 0])], 13,
           inits=[("m", mask), ("ax", np.array([0], np.int64))])
uv = np.array([7, -2, 7, 3, -2, 7, 9], np.int64)
uy, ui, uinv, uc = np.unique(uv, return_index=True, return_inverse=True, return_counts=True)
ut = f32(4, 3)
write_case("unique_inverse_gather",
           [helper.make_node("Unique", ["v"], ["u", "first", "inv", "counts"]),
            helper.make_node("Gather", ["t", "inv"], ["rows"], axis=0),
            helper.make_node("Cast", ["counts"], ["cf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["rows", "cf_col"], ["y"]),
            helper.make_node("Gather", ["cf", "inv"], ["cf_rows"], axis=0),
            helper.make_node("Unsqueeze", ["cf_rows", "ax"], ["cf_col"])],
           [("t", ut)], [("y", ut[uinv] * uc[uinv].astype(np.float32)[:, None]),
                         ("u", uy), ("first", ui)], 13,
           inits=[("v", uv), ("ax", np.array([1], np.int64))])
write_case("refuse_compress_runtime_condition",
           [helper.make_node("Greater", ["x", "zero"], ["c"]),
            helper.make_node("Compress", ["x", "c"], ["y"])],
           [("x", f32(6))], [("y", (TensorProto.FLOAT, [3]))], 11,
           inits=[("zero", np.zeros(1, np.float32))],
           expect="input 1 ('c') is known only at run time, and with it how many slices are "
                  "kept: compile with --pad-dynamic (options: pad_dynamic) for an output of a "
                  "slice per entry of the condition, the unused ones padding, or with "
                  "--graph-outputs (options: outputs) up to values before this node")
# Empty tensors (a 0 dim) are known constants with no elements: an empty
# graph input still is one of the binary's inputs, empty outputs are named
# with their shapes, and ops that meet one fold (Concat skips it).
ex, ee = f32(2, 3), np.zeros((0, 3), np.float32)
write_case("empty_tensors",
           [helper.make_node("Concat", ["e", "x"], ["cat"], axis=0),
            helper.make_node("Relu", ["cat"], ["y"]),
            helper.make_node("Compress", ["x", "none"], ["picked"], axis=0),
            helper.make_node("Trilu", ["picked"], ["lower"], upper=0),
            helper.make_node("NonZero", ["zeros"], ["nz"]),
            helper.make_node("Slice", ["x", "st", "en"], ["cut"]),
            helper.make_node("Concat", ["cut", "x", "lower"], ["y2"], axis=0)],
           [("x", ex), ("e", ee)],
           [("y", np.maximum(ex, 0)), ("lower", np.zeros((0, 3), np.float32)),
            ("nz", np.zeros((1, 0), np.int64)), ("cut", np.zeros((0, 3), np.float32)),
            ("y2", ex)], 14,
           inits=[("none", np.zeros(2, bool)), ("zeros", np.zeros(5, np.float32)),
                  ("st", np.array([4], np.int64)), ("en", np.array([9], np.int64))])
# Reducing nothing gives the operation's identity (ONNX 18's rule).
write_case("reduce_empty_identities",
           [helper.make_node("ReduceSum", ["e"], ["sum"], axes=[0], keepdims=0),
            helper.make_node("ReduceProd", ["e"], ["prod"], axes=[0], keepdims=0),
            helper.make_node("ReduceMax", ["e"], ["max"], axes=[0], keepdims=1),
            helper.make_node("ReduceMin", ["e"], ["min"], axes=[0], keepdims=0),
            helper.make_node("ReduceLogSumExp", ["e"], ["lse"], axes=[0], keepdims=0),
            helper.make_node("Add", ["sum", "x0"], ["y"])],
           [("e", ee), ("x0", ex[0])],
           [("y", ex[0]), ("prod", np.ones(3, np.float32)),
            ("max", np.full((1, 3), -np.inf, np.float32)), ("min", np.full(3, np.inf, np.float32)),
            ("lse", np.full(3, -np.inf, np.float32))], 11)
write_case("refuse_reduce_empty_int_max",
           [helper.make_node("ReduceMax", ["e"], ["y"], axes=[0], keepdims=0)],
           [("e", np.zeros((0, 3), np.int32))], [("y", (TensorProto.INT32, [3]))], 11,
           expect="an integer max of an empty tensor (nothing to reduce) is not supported")
write_case("refuse_nonzero_runtime_input",
           [helper.make_node("NonZero", ["x"], ["y"])],
           [("x", f32(4))], [("y", (TensorProto.INT64, [1, 4]))], 13,
           expect="input 0 ('x') is known only at run time, and with it how many elements are "
                  "nonzero: compile with --pad-dynamic (options: pad_dynamic) for an output of a "
                  "column per element, the unused ones -1, or give it with --const x=FILE")


def tfidf_np(x, mode, min_n, max_n, max_skip, starts, columns, pool, weights=None):
    """TfIdfVectorizer written out from the operator's definition."""
    rows = np.atleast_2d(x)
    grams = []
    for lvl, start in enumerate(starts):
        end = starts[lvl + 1] if lvl + 1 < len(starts) else len(pool)
        grams += [tuple(pool[i:i + lvl + 1]) for i in range(start, end, lvl + 1)]
    out = np.zeros((rows.shape[0], max(columns) + 1), np.float32)
    for b, row in enumerate(rows):
        for k, g in enumerate(grams):
            n = len(g)
            if not min_n <= n <= max_n:
                continue
            freq = 0
            for d in ([1] if n == 1 else range(1, max_skip + 2)):
                for i in range(len(row) - (n - 1) * d):
                    freq += all(row[i + j * d] == g[j] for j in range(n))
            w = 1.0 if weights is None else weights[k]
            out[b, columns[k]] = {"TF": freq, "IDF": w if freq else 0.0, "TFIDF": freq * w}[mode]
    return out if np.ndim(x) == 2 else out[0]


# TfIdfVectorizer beyond ONNX's data (which is TF only, up to bigrams):
# TFIDF with weights and trigrams at skips 0..2 over a batch of int64 rows,
# IDF over int32 tokens.
tx = rng.integers(1, 5, size=(3, 14)).astype(np.int64)
tpool = [2, 4, 1, 2, 3, 3, 1, 2, 3, 2, 2, 2]
tcols = [5, 0, 3, 1, 4, 2]
tw = [0.5, 2.0, 1.5, 0.25, 3.0, 1.0]
write_case("tfidf_tfidf_trigrams_weights",
           [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1,
                             max_gram_length=3, max_skip_count=2, ngram_counts=[0, 2, 6],
                             ngram_indexes=tcols, pool_int64s=tpool, weights=tw)],
           [("x", tx)], [("y", tfidf_np(tx, "TFIDF", 1, 3, 2, [0, 2, 6], tcols, tpool, tw))], 9)
ix = rng.integers(0, 6, size=(20,)).astype(np.int32)
ipool = [0, 1, 2, 3, 4, 5, 5, 5]
write_case("tfidf_idf_int32_bigrams",
           [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="IDF", min_gram_length=2,
                             max_gram_length=2, max_skip_count=1, ngram_counts=[0, 0],
                             ngram_indexes=[3, 1, 0, 2], pool_int64s=ipool,
                             weights=[0.5, 2.0, 4.0, 8.0])],
           [("x", ix)],
           [("y", tfidf_np(ix, "IDF", 2, 2, 1, [0, 0], [3, 1, 0, 2], ipool,
                           [0.5, 2.0, 4.0, 8.0]))], 9)
write_case("refuse_tfidf_pool_strings",
           [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1,
                             max_gram_length=1, max_skip_count=0, ngram_counts=[0],
                             ngram_indexes=[0], pool_strings=["a"])],
           [("x", ix)], [("y", (TensorProto.FLOAT, [1]))], 9,
           expect="pool_strings: string n-grams are not supported (only pool_int64s)")


# Control flow, inlined at compile time. If: the condition folds from the
# input's shape, the branch reads outside values (x, w). Loop: a trip count
# of 6 but the body's condition (iteration < 3) stops it after 4
# iterations; the carried value and a scan output on run-time data; an If
# inside the body picks by the iteration number. Scan: two states, one input
# scanned in reverse along axis 1, an output stacked along axis 1.
def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
cfx, cfw = f32(4, 3), f32(4, 3)
then_g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"])], "then", [],
                           [vi("t", F, [4, 3])])
else_g = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["e"])], "else", [],
                           [vi("e", F, [4, 3])])
write_case("if_shape_condition_outer_values",
           [helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
            helper.make_node("Greater", ["n", "two"], ["c"]),
            helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Relu", ["y0"], ["y"])],
           [("x", cfx), ("w", cfw)], [("y", np.maximum(cfx * cfw, 0))], 13,
           inits=[("zero", np.array(0, np.int64)), ("two", np.array(2, np.int64))])

lx = f32(2, 3)
inner_then = helper.make_graph([helper.make_node("Add", ["v_in", "half"], ["u"])], "even", [],
                               [vi("u", F, [2, 3])])
inner_else = helper.make_graph([helper.make_node("Neg", ["v_in"], ["u2"])], "odd", [],
                               [vi("u2", F, [2, 3])])
body = helper.make_graph(
    [helper.make_node("Mod", ["i", "two_b"], ["r"]),
     helper.make_node("Equal", ["r", "zero_b"], ["even"]),
     helper.make_node("If", ["even"], ["v_next"], then_branch=inner_then,
                      else_branch=inner_else),
     helper.make_node("Less", ["i", "three_b"], ["c_out"]),
     helper.make_node("Mul", ["v_next", "x_outer"], ["scan_el"])],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [2, 3])],
    [vi("c_out", B, []), vi("v_next", F, [2, 3]), vi("scan_el", F, [2, 3])],
    [numpy_helper.from_array(np.array(2, np.int64), "two_b"),
     numpy_helper.from_array(np.array(0, np.int64), "zero_b"),
     numpy_helper.from_array(np.array(3, np.int64), "three_b"),
     numpy_helper.from_array(np.float32(0.5), "half")])
v, pieces = np.zeros((2, 3), np.float32), []
for i in range(6):
    v = v + np.float32(0.5) if i % 2 == 0 else -v
    pieces.append(v * lx)
    if not i < 3:
        break
write_case("loop_condition_folds_nested_if",
           [helper.make_node("Identity", ["x"], ["x_outer"]),
            helper.make_node("Loop", ["m", "", "v0"], ["v_final", "stack"], body=body)],
           [("x", lx)], [("v_final", v), ("stack", np.stack(pieces))], 13,
           inits=[("m", np.array(6, np.int64)), ("v0", np.zeros((2, 3), np.float32))])

sx = f32(2, 5, 3)
scan_body = helper.make_graph(
    [helper.make_node("Add", ["acc", "el"], ["acc_next"]),
     helper.make_node("Mul", ["prod", "el"], ["prod_next"]),
     helper.make_node("Sub", ["acc_next", "prod_next"], ["out_el"])],
    "scan_body", [vi("acc", F, [2, 3]), vi("prod", F, [2, 3]), vi("el", F, [2, 3])],
    [vi("acc_next", F, [2, 3]), vi("prod_next", F, [2, 3]), vi("out_el", F, [2, 3])])
acc, prod, outs = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32), []
for t in reversed(range(5)):
    acc = acc + sx[:, t]
    prod = prod * sx[:, t]
    outs.append(acc - prod)
write_case("scan_reverse_input_axis1",
           [helper.make_node("Scan", ["a0", "p0", "x"], ["acc", "prod", "ys"], body=scan_body,
                             num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                             scan_output_axes=[1])],
           [("x", sx)], [("acc", acc), ("prod", prod), ("ys", np.stack(outs, axis=1))], 11,
           inits=[("a0", np.zeros((2, 3), np.float32)), ("p0", np.ones((2, 3), np.float32))])

# If on a condition computed at run time: both branches run, a Where picks
# (once with a positive sum, once with a negative one); branches whose
# outputs differ in shape are refused.
rt_then = helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "then", [],
                            [vi("a", F, [3])])
rt_else = helper.make_graph([helper.make_node("Neg", ["x"], ["b"])], "else", [],
                            [vi("b", F, [3])])
for tag, rx in (("positive", np.array([1.5, -0.5, 2.0], np.float32)),
                ("negative", np.array([-1.5, 0.5, -2.0], np.float32))):
    write_case("if_runtime_condition_%s" % tag,
               [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                helper.make_node("Greater", ["s", "zero"], ["c"]),
                helper.make_node("If", ["c"], ["y"], then_branch=rt_then, else_branch=rt_else)],
               [("x", rx)], [("y", np.maximum(rx, 0) if rx.sum() > 0 else -rx)], 11,
               inits=[("zero", np.float32(0))])
rt_wide = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["w"], axis=0)], "else", [],
                            [vi("w", F, [6])])
write_case("refuse_if_runtime_condition_shapes_differ",
           [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=rt_then, else_branch=rt_wide)],
           [("x", f32(3))], [("y", (F, [3]))], 11, inits=[("zero", np.float32(0))],
           expect="output 0 is float[3] in then_branch and float[6] in else_branch")
rt_body = helper.make_graph(
    [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
     helper.make_node("Less", ["s", "ten"], ["c_out"]),
     helper.make_node("Add", ["v_in", "v_in"], ["v_next"])],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
    [vi("c_out", B, []), vi("v_next", F, [3])],
    [numpy_helper.from_array(np.float32(10), "ten")])

# Loop on a condition computed at run time: every iteration the trip count
# allows runs, masked (once stopping after two iterations, once running all
# four). As PyTorch exports a while loop: no trip count (the largest int64),
# a counter in the carried values and its bound in the condition, which
# folds to false after 5 iterations; once stopping early, once at the bound.
def loop_ref(x, trips):
    v, cond, i = x, True, 0
    while i < trips and cond:
        cond = v.sum() < 10
        v = v + v
        i += 1
    return v


for tag, lxv in (("stops", np.array([1.0, 2.0, 0.5], np.float32)),
                 ("all", np.array([0.1, -0.2, 0.05], np.float32))):
    write_case("loop_runtime_condition_%s" % tag,
               [helper.make_node("Loop", ["m", "", "x"], ["y"], body=rt_body)],
               [("x", lxv)], [("y", loop_ref(lxv, 4))], 13,
               inits=[("m", np.array(4, np.int64))])
while_body = helper.make_graph(
    [helper.make_node("Add", ["k_in", "one"], ["k_next"]),
     helper.make_node("Less", ["k_next", "five"], ["below"]),
     helper.make_node("Mul", ["v_in", "v_in"], ["sq"]),
     helper.make_node("ReduceSum", ["sq"], ["ss"], keepdims=0),
     helper.make_node("Greater", ["ss", "tol"], ["far"]),
     helper.make_node("And", ["below", "far"], ["c_out"]),
     helper.make_node("Mul", ["v_in", "half"], ["v_next"])],
    "while", [vi("i", I64, []), vi("c_in", B, []), vi("k_in", I64, []), vi("v_in", F, [3])],
    [vi("c_out", B, []), vi("k_next", I64, []), vi("v_next", F, [3])],
    [numpy_helper.from_array(np.array(1, np.int64), "one"),
     numpy_helper.from_array(np.array(5, np.int64), "five"),
     numpy_helper.from_array(np.float32(0.5), "half")])


def while_ref(x, tol):
    v, k = x, 0
    cond = (x * x).sum() > tol
    while cond:
        k += 1
        cond = k < 5 and (v * v).sum() > tol
        v = v * np.float32(0.5)
    return np.array(k, np.int64), v


wx = np.array([1.0, -2.0, 0.5], np.float32)
for tag, tol in (("stops", 0.5), ("bound", 0.0)):
    k, v = while_ref(wx, np.float32(tol))
    write_case("loop_while_runtime_condition_%s" % tag,
               [helper.make_node("Mul", ["x", "x"], ["x2"]),
                helper.make_node("ReduceSum", ["x2"], ["s0"], keepdims=0),
                helper.make_node("Greater", ["s0", "tol"], ["c0"]),
                helper.make_node("Loop", ["", "c0", "k0", "x"], ["k", "y"], body=while_body)],
               [("x", wx), ("tol", np.float32(tol))], [("k", k), ("y", v)], 13,
               inits=[("k0", np.array(0, np.int64))])
grow_body = helper.make_graph(
    [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
     helper.make_node("Less", ["s", "ten"], ["c_out"]),
     helper.make_node("Concat", ["v_in", "v_in"], ["v_next"], axis=0)],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, None)],
    [vi("c_out", B, []), vi("v_next", F, None)],
    [numpy_helper.from_array(np.float32(10), "ten")])
write_case("refuse_loop_runtime_condition_shape_grows",
           [helper.make_node("Loop", ["m", "", "x"], ["y"], body=grow_body)],
           [("x", f32(3))], [("y", (F, ["n"]))], 13, inits=[("m", np.array(4, np.int64))],
           expect="which needs carried value 0 to keep its shape: iteration 1 made it "
                  "float[12] from float[6]")
seq_rt_body = helper.make_graph(
    [helper.make_node("SequenceInsert", ["s_in", "x"], ["s_next"]),
     helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0),
     helper.make_node("Less", ["t", "ten"], ["c_out"])],
    "body", [vi("i", I64, []), vi("c_in", B, []),
             helper.make_tensor_sequence_value_info("s_in", F, [3])],
    [vi("c_out", B, []), helper.make_tensor_sequence_value_info("s_next", F, [3])],
    [numpy_helper.from_array(np.float32(10), "ten")])
write_case("refuse_loop_runtime_condition_sequence",
           [helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
            helper.make_node("Loop", ["m", "", "s0"], ["s"], body=seq_rt_body),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
           [("x", f32(3))], [("y", (F, ["n"]))], 13, inits=[("m", np.array(4, np.int64))],
           expect="and carried value 0 is a sequence, whose length would depend on the run")
scan_rt_body = helper.make_graph(
    [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
     helper.make_node("Less", ["s", "ten"], ["c_out"]),
     helper.make_node("Add", ["v_in", "v_in"], ["v_next"]),
     helper.make_node("Identity", ["v_in"], ["piece"])],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
    [vi("c_out", B, []), vi("v_next", F, [3]), vi("piece", F, [3])],
    [numpy_helper.from_array(np.float32(10), "ten")])
write_case("refuse_loop_runtime_condition_scan_output",
           [helper.make_node("Loop", ["m", "", "x"], ["y", "pieces"], body=scan_rt_body)],
           [("x", f32(3))], [("y", (F, [3])), ("pieces", (F, ["n", 3]))], 13,
           inits=[("m", np.array(4, np.int64))],
           expect="is computed at run time and the loop has scan output 0, whose length would "
                  "depend on the run: compile with --pad-dynamic")


# With pad_dynamic: one row per iteration unrolled, NaN (floats), -1 (ints)
# in the rows of iterations that did not run. Once stopping after two
# iterations, once running all four; a second, int64 scan output (the
# iteration number); and the loop as PyTorch exports a while loop (no trip
# count, the bound in the condition).
def scan_ref(x, trips):
    v, cond, rows, its = x, True, [], []
    for i in range(trips):
        if not cond:
            rows.append(np.full(3, np.nan, np.float32))
            its.append(-1)
            continue
        rows.append(v)
        its.append(i)
        cond = v.sum() < 10
        v = v + v
    return v, np.stack(rows), np.array(its, np.int64)


scan_rt2_body = helper.make_graph(
    [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
     helper.make_node("Less", ["s", "ten"], ["c_out"]),
     helper.make_node("Add", ["v_in", "v_in"], ["v_next"]),
     helper.make_node("Identity", ["v_in"], ["piece"]),
     helper.make_node("Identity", ["i"], ["it"])],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
    [vi("c_out", B, []), vi("v_next", F, [3]), vi("piece", F, [3]), vi("it", I64, [])],
    [numpy_helper.from_array(np.float32(10), "ten")])
for tag, lxv in (("stops", np.array([1.0, 2.0, 0.5], np.float32)),
                 ("all", np.array([0.1, -0.2, 0.05], np.float32))):
    last, rows, its = scan_ref(lxv, 4)
    write_case("padded_loop_scan_output_%s" % tag,
               [helper.make_node("Loop", ["m", "", "x"], ["y", "pieces", "its"],
                                 body=scan_rt2_body)],
               [("x", lxv)], [("y", last), ("pieces", rows), ("its", its)], 13,
               inits=[("m", np.array(4, np.int64))])
write_case("refuse_padded_loop_scan_output_read",
           [helper.make_node("Loop", ["m", "", "x"], ["y", "pieces"], body=scan_rt_body),
            helper.make_node("ReduceSum", ["pieces"], ["total"], keepdims=0)],
           [("x", np.array([1.0, 2.0, 0.5], np.float32))], [("y", (F, [3])), ("total", (F, []))], 13,
           inits=[("m", np.array(4, np.int64))],
           expect="scan output 0 is padded (the rows of iterations that did not run NaN, -1 or "
                  "false), so it must be a graph output no node reads; node '(unnamed)' "
                  "(ReduceSum) reads it")

# Sequences, lists of tensor values while compiling: split run-time data
# into a sequence (keepdims=0 squeezes the axis), erase and insert at known
# positions, read one back, stack them all along a new last axis, and count
# them; then a Loop that grows a sequence from SequenceEmpty one tensor per
# iteration, concatenated at the end.
qx = f32(4, 3)
qy = f32(3)
items = [qx[i] for i in range(4)]
del items[1]
items.insert(0, np.maximum(qy, 0))
write_case("sequence_split_edit_read",
           [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
            helper.make_node("SequenceErase", ["s", "one"], ["s1"]),
            helper.make_node("Relu", ["y"], ["ry"]),
            helper.make_node("SequenceInsert", ["s1", "ry", "zero"], ["s2"]),
            helper.make_node("SequenceAt", ["s2", "minus_one"], ["last"]),
            helper.make_node("ConcatFromSequence", ["s2"], ["stacked"], axis=-1, new_axis=1),
            helper.make_node("SequenceLength", ["s2"], ["count"])],
           [("x", qx), ("y", qy)],
           [("last", items[-1]), ("stacked", np.stack(items, axis=-1)),
            ("count", np.array(len(items), np.int64))], 13,
           inits=[("one", np.array(1, np.int64)), ("zero", np.array(0, np.int64)),
                  ("minus_one", np.array(-1, np.int64))])
seq_body = helper.make_graph(
    [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
     helper.make_node("Mul", ["x", "fi"], ["scaled"]),
     helper.make_node("SequenceInsert", ["s_in", "scaled"], ["s_out"]),
     helper.make_node("Identity", ["c_in"], ["c_out"])],
    "body", [vi("i", I64, []), vi("c_in", B, []),
             helper.make_tensor_sequence_value_info("s_in", F, [2])],
    [vi("c_out", B, []), helper.make_tensor_sequence_value_info("s_out", F, [2])])
lqx = f32(2)
write_case("sequence_grown_in_loop",
           [helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
            helper.make_node("Loop", ["m", "", "s0"], ["s"], body=seq_body),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
           [("x", lqx)], [("y", np.concatenate([lqx * i for i in range(3)]))], 13,
           inits=[("m", np.array(3, np.int64))])
write_case("refuse_sequence_into_tensor_op",
           [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"])],
           [("x", f32(3))], [("y", (F, [3]))], 13,
           expect="input 0 ('s') is a sequence; Relu takes tensors")
write_case("refuse_sequence_position_at_run_time",
           [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
            helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
            helper.make_node("Cast", ["m"], ["p"], to=TensorProto.INT64),
            helper.make_node("SequenceAt", ["s", "p"], ["y"])],
           [("x", f32(3))], [("y", (F, [3]))], 13,
           expect="input 1 ('p') decides the output shape")
write_case("refuse_concat_empty_sequence",
           [helper.make_node("SequenceEmpty", [], ["s"]),
            helper.make_node("ConcatFromSequence", ["s"], ["y0"], axis=0),
            helper.make_node("Add", ["y0", "x"], ["y"])],
           [("x", f32(3))], [("y", (F, [3]))], 13,
           expect="the sequence is empty: there is nothing to concatenate")

# An If whose condition is computed at run time and whose branches make
# sequences: a Where per tensor picks, then the sequence is read back.
sq_then = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                             helper.make_node("SequenceConstruct", ["r", "x"], ["s_then"])],
                            "then", [], [helper.make_tensor_sequence_value_info("s_then", F, [3])])
sq_else = helper.make_graph([helper.make_node("Neg", ["x"], ["n"]),
                             helper.make_node("SequenceConstruct", ["x", "n"], ["s_else"])],
                            "else", [], [helper.make_tensor_sequence_value_info("s_else", F, [3])])
for tag, rx in (("positive", np.array([1.5, -0.5, 2.0], np.float32)),
                ("negative", np.array([-1.5, 0.5, -2.0], np.float32))):
    pair = [np.maximum(rx, 0), rx] if rx.sum() > 0 else [rx, -rx]
    write_case("if_runtime_condition_sequence_%s" % tag,
               [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                helper.make_node("Greater", ["s", "zero"], ["c"]),
                helper.make_node("If", ["c"], ["seq"], then_branch=sq_then, else_branch=sq_else),
                helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)],
               [("x", rx)], [("y", np.concatenate(pair))], 13,
               inits=[("zero", np.float32(0))])
sq_short = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["s_short"])],
                             "else", [], [helper.make_tensor_sequence_value_info("s_short", F, [3])])
write_case("refuse_if_runtime_condition_sequence_lengths_differ",
           [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["seq"], then_branch=sq_then, else_branch=sq_short),
            helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)],
           [("x", f32(3))], [("y", (F, [6]))], 13, inits=[("zero", np.float32(0))],
           expect="output 0 is a sequence of 2 tensors in then_branch and a sequence of 1 "
                  "tensor in else_branch")

# Optionals inside a graph: Optional wraps a run-time tensor, HasElement
# folds, GetElement reads it back.
ox = f32(4)
write_case("optional_wrap_read",
           [helper.make_node("Optional", ["x"], ["o"]),
            helper.make_node("OptionalHasElement", ["o"], ["has"]),
            helper.make_node("OptionalGetElement", ["o"], ["got"]),
            helper.make_node("Relu", ["got"], ["y"])],
           [("x", ox)], [("y", np.maximum(ox, 0)), ("has", np.array(True))], 15)

# The training domain's optimizers, rewritten into element-wise ops, against
# NumPy transcriptions of ONNX's formulas: two tensors each, regularization,
# Adagrad's decay, Nesterov momentum after the first step, Adam's bias
# correction (T > 0) and post-update regularization.
TRAIN = [("ai.onnx.preview.training", 1)]
tr_x = [f32(3), f32(2, 2)]
tr_g = [f32(3), f32(2, 2)]
tr_s = [np.abs(f32(3)), np.abs(f32(2, 2))]
tr_v = [f32(3), f32(2, 2)]
R, T = np.array(0.1, np.float32), np.array(3, np.int64)


def tr_inputs(*groups):
    names, vals = [], []
    for gname, arrs in groups:
        for i, a in enumerate(arrs):
            names.append("%s%d" % (gname, i))
            vals.append(("%s%d" % (gname, i), a))
    return names, vals


names, vals = tr_inputs(("X", tr_x), ("G", tr_g), ("H", tr_s))
outs = []
r = 0.1 / (1 + 3 * 0.5)
for x0, g0, h0 in zip(tr_x, tr_g, tr_s):
    gr = 0.01 * x0 + g0
    hn = h0 + gr * gr
    outs.append((x0 - r * gr / (np.sqrt(hn) + 1e-6), hn))
write_case("adagrad_two_tensors",
           [helper.make_node("Adagrad", ["R", "T"] + names,
                             ["X0n", "X1n", "H0n", "H1n"], domain="ai.onnx.preview.training",
                             decay_factor=0.5, norm_coefficient=0.01)],
           [("R", R), ("T", T)] + vals,
           [("X0n", outs[0][0].astype(np.float32)), ("X1n", outs[1][0].astype(np.float32)),
            ("H0n", outs[0][1].astype(np.float32)), ("H1n", outs[1][1].astype(np.float32))],
           13, domains=TRAIN)
names, vals = tr_inputs(("X", tr_x), ("G", tr_g), ("V", tr_v))
outs = []
for x0, g0, v0 in zip(tr_x, tr_g, tr_v):
    gr = 0.02 * x0 + g0
    vn = 0.9 * v0 + 0.7 * gr
    outs.append((x0 - 0.1 * (gr + 0.9 * vn), vn))
write_case("momentum_nesterov_two_tensors",
           [helper.make_node("Momentum", ["R", "T"] + names,
                             ["X0n", "X1n", "V0n", "V1n"], domain="ai.onnx.preview.training",
                             alpha=0.9, beta=0.7, mode="nesterov", norm_coefficient=0.02)],
           [("R", R), ("T", T)] + vals,
           [("X0n", outs[0][0].astype(np.float32)), ("X1n", outs[1][0].astype(np.float32)),
            ("V0n", outs[0][1].astype(np.float32)), ("V1n", outs[1][1].astype(np.float32))],
           13, domains=TRAIN)
names, vals = tr_inputs(("X", tr_x), ("G", tr_g), ("V", tr_v), ("H", tr_s))
outs = []
ra = 0.1 * np.sqrt(1 - 0.99 ** 3) / (1 - 0.8 ** 3)
for x0, g0, v0, h0 in zip(tr_x, tr_g, tr_v, tr_s):
    gr = 0.01 * x0 + g0
    vn = 0.8 * v0 + 0.2 * gr
    hn = 0.99 * h0 + 0.01 * gr * gr
    outs.append(((1 - 0.05) * (x0 - ra * vn / (np.sqrt(hn) + 1e-3)), vn, hn))
write_case("adam_bias_corrected_two_tensors",
           [helper.make_node("Adam", ["R", "T"] + names,
                             ["X0n", "X1n", "V0n", "V1n", "H0n", "H1n"],
                             domain="ai.onnx.preview.training", alpha=0.8, beta=0.99,
                             epsilon=1e-3, norm_coefficient=0.01, norm_coefficient_post=0.05)],
           [("R", R), ("T", T)] + vals,
           [("X0n", outs[0][0].astype(np.float32)), ("X1n", outs[1][0].astype(np.float32)),
            ("V0n", outs[0][1].astype(np.float32)), ("V1n", outs[1][1].astype(np.float32)),
            ("H0n", outs[0][2].astype(np.float32)), ("H1n", outs[1][2].astype(np.float32))],
           13, domains=TRAIN)

# Opset 8's batched Scan: each batch entry scanned on its own (here in
# reverse), the results stacked along the batch again; sequence_lens must
# give every entry the whole sequence.
s8x = f32(3, 4, 2)
s8_init = f32(3, 2)
s8_body = helper.make_graph(
    [helper.make_node("Add", ["acc", "el"], ["acc_next"]),
     helper.make_node("Mul", ["acc_next", "el"], ["out_el"])],
    "body", [vi("acc", F, [2]), vi("el", F, [2])],
    [vi("acc_next", F, [2]), vi("out_el", F, [2])])
s8_final, s8_outs = [], []
for b in range(3):
    acc, outs_b = s8_init[b].copy(), []
    for t in reversed(range(4)):  # scan outputs are appended in iteration order
        acc = acc + s8x[b, t]
        outs_b.append(acc * s8x[b, t])
    s8_final.append(acc)
    s8_outs.append(np.stack(outs_b))
write_case("scan8_batched_reverse",
           [helper.make_node("Scan", ["lens", "init", "x"], ["final", "stack"], body=s8_body,
                             num_scan_inputs=1, directions=[1])],
           [("init", s8_init), ("x", s8x)],
           [("final", np.stack(s8_final)), ("stack", np.stack(s8_outs))], 8,
           inits=[("lens", np.array([4, 4, 4], np.int32))])
write_case("refuse_scan8_short_sequence",
           [helper.make_node("Scan", ["lens", "init", "x"], ["final", "stack"], body=s8_body,
                             num_scan_inputs=1)],
           [("init", s8_init), ("x", s8x)], [("final", (F, [3, 2])), ("stack", (F, [3, 4, 2]))],
           8, inits=[("lens", np.array([4, 2, 4], np.int32))],
           expect="sequence_lens must give every batch entry the whole sequence (4 steps); entry 1 "
                  "has 2")

# NonMaxSuppression of known boxes and scores folds on the host (the count
# of selected boxes decides the output's shape); here two classes, corner
# boxes in either diagonal order, and a score threshold, the selection then
# gathering run-time features. Boxes computed at run time are refused.
def nms_np(boxes, scores, max_out, iou_thr, score_thr):
    def corners(b):
        return np.array([min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])])

    def iou(a, b):
        a, b = corners(a), corners(b)
        aa, ab = (a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])
        if aa <= 0 or ab <= 0:
            return 0.0
        h = min(a[2], b[2]) - max(a[0], b[0])
        w = min(a[3], b[3]) - max(a[1], b[1])
        if h <= 0 or w <= 0:
            return 0.0
        return h * w / (aa + ab - h * w)
    out = []
    for b in range(boxes.shape[0]):
        for k in range(scores.shape[1]):
            order = sorted([i for i in range(boxes.shape[1]) if scores[b, k, i] > score_thr],
                           key=lambda i: (-scores[b, k, i], i))
            kept = []
            for i in order:
                if len(kept) == max_out:
                    break
                if all(iou(boxes[b, i], boxes[b, j]) <= iou_thr for j in kept):
                    kept.append(i)
            out += [[b, k, i] for i in kept]
    return np.array(out, np.int64).reshape(-1, 3)


nb = rng.uniform(0, 10, (1, 12, 4)).astype(np.float32)
ns = rng.uniform(0, 1, (1, 2, 12)).astype(np.float32)
sel = nms_np(nb.astype(np.float64), ns, 4, 0.3, 0.2)
feat = f32(12, 3)
write_case("nms_select_then_gather",
           [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "sthr"], ["sel"]),
            helper.make_node("Gather", ["sel", "col"], ["idx"], axis=1),
            helper.make_node("Gather", ["feat", "idx"], ["y"], axis=0)],
           [("feat", feat)], [("sel", sel), ("y", feat[sel[:, 2]])], 11,
           inits=[("boxes", nb), ("scores", ns), ("m", np.array([4], np.int64)),
                  ("iou", np.array([0.3], np.float32)), ("sthr", np.array([0.2], np.float32)),
                  ("col", np.array(2, np.int64))])
write_case("refuse_nms_runtime_boxes",
           [helper.make_node("Relu", ["b"], ["boxes"]),
            helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"])],
           [("b", nb)], [("sel", (TensorProto.INT64, [1, 3]))], 11,
           inits=[("scores", ns), ("m", np.array([3], np.int64))],
           expect="input 0 ('boxes') is known only at run time, and with it how many boxes are "
                  "selected: compile with --pad-dynamic")

# LpPool and GlobalLpPool against PyTorch's lp_pool (which pads nothing:
# the padded case pads with zeros first, which add nothing to the sum).
lr = np.random.default_rng(11)  # its own: the cases above keep their data
xl = lr.standard_normal((2, 3, 9, 10)).astype(np.float32)
for p_, k, st_ in ((2, 3, 2), (3, 2, 1), (1, 3, 3)):
    y = torch.nn.functional.lp_pool2d(torch.from_numpy(np.abs(xl)), p_, k, stride=st_).numpy()
    write_case("lppool_p%d_k%d_s%d" % (p_, k, st_),
               [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[k, k], strides=[st_, st_],
                                 p=p_)],
               [("x", xl)], [("y", y)], 11)
y = torch.nn.functional.lp_pool2d(torch.from_numpy(np.abs(np.pad(xl, ((0, 0), (0, 0), (1, 1), (1, 1))))), 2, 3,
                                  stride=2).numpy()
write_case("lppool_pads",
           [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                             pads=[1, 1, 1, 1])],
           [("x", xl)], [("y", y)], 11)
x1 = lr.standard_normal((2, 4, 12)).astype(np.float32)
y = torch.nn.functional.lp_pool1d(torch.from_numpy(np.abs(x1)), 2, 4, stride=4).numpy()
write_case("lppool_1d",
           [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[4], strides=[4])],
           [("x", x1)], [("y", y)], 11)
for p_ in (1, 2, 3):
    y = (np.abs(xl.astype(np.float64)) ** p_).sum(axis=(2, 3), keepdims=True) ** (1.0 / p_)
    write_case("global_lppool_p%d" % p_,
               [helper.make_node("GlobalLpPool", ["x"], ["y"], p=p_)],
               [("x", xl)], [("y", y.astype(np.float32))], 2)
write_case("refuse_lppool_p0",
           [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=0)],
           [("x", xl)], [("y", (TensorProto.FLOAT, [2, 3, 8, 9]))], 11,
           expect="p=0 (from 1 to 64)")

# MaxRoiPool against a NumPy transcription of Fast R-CNN's RoI pooling (the
# bins' bounds in float32 as the reference implementations compute them; an
# empty bin is 0). The RoIs are a run-time input: inside, partly outside,
# reversed corners (a one-pixel RoI), and on the other image.
def roipool_np(x, rois, ph, pw, scale):
    f = np.float32
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), np.float32)
    H, W = x.shape[2], x.shape[3]
    for r, roi in enumerate(rois):
        b = int(roi[0])
        # Half away from zero (exact in float64 for these float32 values).
        sw, sh, ew, eh = [int(np.sign(v) * np.floor(abs(float(v)) + 0.5))
                          for v in (roi[1:] * f(scale)).astype(np.float32)]
        bh = f(max(eh - sh + 1, 1)) / f(ph)
        bw = f(max(ew - sw + 1, 1)) / f(pw)
        for i in range(ph):
            hs = min(max(int(np.floor(f(i) * bh)) + sh, 0), H)
            he = min(max(int(np.ceil(f(i + 1) * bh)) + sh, 0), H)
            for j in range(pw):
                ws = min(max(int(np.floor(f(j) * bw)) + sw, 0), W)
                we = min(max(int(np.ceil(f(j + 1) * bw)) + sw, 0), W)
                if he > hs and we > ws:
                    out[r, :, i, j] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


rr = np.random.default_rng(12)  # its own: the cases above keep their data
xr = rr.standard_normal((2, 3, 12, 10)).astype(np.float32)
rois = np.array([[0, 2, 3, 13, 17], [1, 0, 0, 19, 23], [1, -6, -4, 5, 7],
                 [0, 9, 9, 3, 2], [1, 15, 20, 30, 31], [0, 5, 1, 6, 22],
                 [1, 3.4, 4.6, 12.5, 17.5]], np.float32)
for (ph, pw), sc in (((3, 2), 0.5), ((4, 4), 0.5), ((1, 1), 0.5), ((2, 5), 0.25)):
    write_case("maxroipool_%dx%d_s%g" % (ph, pw, sc),
               [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[ph, pw],
                                 spatial_scale=sc)],
               [("x", xr), ("rois", rois)], [("y", roipool_np(xr, rois, ph, pw, sc))], 1)
r1 = np.array([[0, 1, 1, 8, 10], [1, 0, 2, 9, 11], [0, 4, 0, 4, 0], [1, 2.5, -0.5, 7.5, 6.5]],
              np.float32)
write_case("maxroipool_scale1",
           [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[3, 3])],
           [("x", xr), ("rois", r1)], [("y", roipool_np(xr, r1, 3, 3, 1.0))], 1)
write_case("refuse_maxroipool_too_big",
           [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[64, 64])],
           [("x", rr.standard_normal((1, 256, 64, 64)).astype(np.float32)),
            ("rois", np.zeros((64, 5), np.float32))],
           [("y", (TensorProto.FLOAT, [64, 256, 64, 64]))], 1,
           expect="need 4294967296 masked elements (at most 67108864)")

# Gradient (ai.onnx.preview.training) against PyTorch's autograd: a y of
# several elements is differentiated as their sum.
TRAIN = [("ai.onnx.preview.training", 1)]
gr_ = np.random.default_rng(13)  # its own: the cases above keep their data


def g32(*shape):
    return gr_.standard_normal(shape).astype(np.float32)


def torch_grads(fn, arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.sum().backward()
    return out.detach().numpy(), [t_.grad.numpy() for t_ in ts]


def weighted_sum(terms, y="y"):
    """Nodes making y = the sum over (value, weight) of sum(value * weight)
    (weight None: the value is a scalar already)."""
    nodes, parts = [], []
    for i, (v, w) in enumerate(terms):
        if w is None:
            parts.append(v)
            continue
        nodes += [helper.make_node("Mul", [v, w], ["ws_p%d" % i]),
                  helper.make_node("ReduceSum", ["ws_p%d" % i], ["ws_s%d" % i], keepdims=0)]
        parts.append("ws_s%d" % i)
    return nodes + [helper.make_node("Sum", parts, [y])]


def grad_node(xs, zs, y, outs, inputs=None):
    return helper.make_node("Gradient", inputs or xs + zs, outs, domain="ai.onnx.preview.training",
                            xs=xs, zs=zs, y=y) if zs else \
        helper.make_node("Gradient", inputs or xs, outs, domain="ai.onnx.preview.training",
                         xs=xs, y=y)


# An MLP's loss: Gemm (transB), Relu, MatMul, LogSoftmax, a mean over the
# batch of the picked log-probabilities; d loss / d weights and biases, the
# weights being initializers.
xm, w1, b1, w2, b2 = g32(6, 4), g32(5, 4), g32(5), g32(5, 3), g32(3)
pick = np.eye(3, dtype=np.float32)[gr_.integers(0, 3, 6)]
loss, grads = torch_grads(
    lambda W1, B1, W2, B2: -(torch.log_softmax(torch.relu(torch.from_numpy(xm) @ W1.T + B1) @ W2
                                               + B2, 1) * torch.from_numpy(pick)).sum(1).mean(), [w1, b1, w2, b2])
write_case("gradient_mlp_loss",
           [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["m"]),
            helper.make_node("Add", ["m", "b2"], ["logits"]),
            helper.make_node("LogSoftmax", ["logits"], ["lp"], axis=1),
            helper.make_node("Mul", ["lp", "pick"], ["picked"]),
            helper.make_node("ReduceSum", ["picked"], ["per"], axes=[1], keepdims=0),
            helper.make_node("ReduceMean", ["per"], ["mean"], keepdims=0),
            helper.make_node("Neg", ["mean"], ["loss"]),
            grad_node(["w1", "b1", "w2", "b2"], ["x"], "loss", ["dw1", "db1", "dw2", "db2"])],
           [("x", xm)], [("loss", loss), ("dw1", grads[0]), ("db1", grads[1]),
                         ("dw2", grads[2]), ("db2", grads[3])], 12,
           inits=[("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("pick", pick)], domains=TRAIN)

# Element-wise ops with broadcasting, and a y of many elements.
ea, eb, ec = np.abs(g32(2, 3, 4)) + 0.1, np.abs(g32(3, 1)) + 0.5, g32(4)
_, grads = torch_grads(
    lambda A, B, C: torch.tanh(A * B + C) + torch.sigmoid(A / B) - torch.exp(C * 0.5)
    + torch.log(B) * torch.sqrt(B) + torch.abs(A) ** 2 - A.pow(B), [ea, eb, ec])
write_case("gradient_eltwise_broadcast",
           [helper.make_node("Mul", ["a", "b"], ["ab"]),
            helper.make_node("Add", ["ab", "c"], ["abc"]),
            helper.make_node("Tanh", ["abc"], ["t1"]),
            helper.make_node("Div", ["a", "b"], ["q"]),
            helper.make_node("Sigmoid", ["q"], ["t2"]),
            helper.make_node("Mul", ["c", "half"], ["ch"]),
            helper.make_node("Exp", ["ch"], ["t3"]),
            helper.make_node("Log", ["b"], ["lb"]),
            helper.make_node("Sqrt", ["b"], ["sb"]),
            helper.make_node("Mul", ["lb", "sb"], ["t4"]),
            helper.make_node("Abs", ["a"], ["aa"]),
            helper.make_node("Pow", ["aa", "two"], ["t5"]),
            helper.make_node("Pow", ["a", "b"], ["t6"]),
            helper.make_node("Add", ["t1", "t2"], ["s1"]),
            helper.make_node("Sub", ["s1", "t3"], ["s2"]),
            helper.make_node("Sum", ["s2", "t4", "t5"], ["s3"]),
            helper.make_node("Sub", ["s3", "t6"], ["y64"]),
            helper.make_node("Cast", ["y64"], ["y"], to=TensorProto.DOUBLE),
            grad_node(["a", "b", "c"], [], "y", ["da", "db", "dc"])],
           [("a", ea), ("b", eb), ("c", ec)],
           [("da", grads[0]), ("db", grads[1]), ("dc", grads[2])], 13,
           inits=[("half", np.array(0.5, np.float32)), ("two", np.array(2, np.float32))],
           domains=TRAIN)

# Shapes: batched MatMul broadcasting a 2-D weight, Transpose, Reshape,
# Softmax, ReduceSum over an axis; the gradient taken at values other than
# the graph's own (the forward ops are recomputed on them), one x unused.
ma, mw = g32(2, 4, 3), g32(3, 5)
ma2, mw2 = g32(2, 4, 3), g32(3, 5)
_, grads = torch_grads(
    lambda A, W: torch.softmax((A @ W).permute(0, 2, 1).reshape(2, 20), 1).sum(1, keepdim=True)
    * (A @ W).sum(), [ma2, mw2])
ym = (torch.softmax(torch.from_numpy(ma @ mw).permute(0, 2, 1).reshape(2, 20), 1)
      .sum(1, keepdim=True) * float((ma @ mw).sum())).numpy()
write_case("gradient_matmul_shapes_other_values",
           [helper.make_node("MatMul", ["a", "w"], ["aw"]),
            helper.make_node("Transpose", ["aw"], ["awt"], perm=[0, 2, 1]),
            helper.make_node("Reshape", ["awt", "shape"], ["flat"]),
            helper.make_node("Softmax", ["flat"], ["sm"], axis=1),
            helper.make_node("ReduceSum", ["sm", "ax1"], ["rs"]),
            helper.make_node("ReduceSum", ["aw"], ["tot"], keepdims=0),
            helper.make_node("Mul", ["rs", "tot"], ["y"]),
            grad_node(["a", "w", "u"], [], "y", ["da", "dw", "du"], ["a2", "w2", "u"])],
           [("a", ma), ("w", mw), ("a2", ma2), ("w2", mw2), ("u", g32(3))],
           [("y", ym), ("da", grads[0]), ("dw", grads[1]),
            ("du", np.zeros(3, np.float32))], 13,
           inits=[("shape", np.array([2, 20], np.int64)), ("ax1", np.array([1], np.int64))],
           domains=TRAIN)
write_case("refuse_gradient_through_gridsample",
           [helper.make_node("GridSample", ["x", "grid"], ["y"]),
            grad_node(["x"], ["grid"], "y", ["dx"])],
           [("x", g32(1, 1, 4, 4)),
            ("grid", np.linspace(-0.9, 0.9, 18, dtype=np.float32).reshape(1, 3, 3, 2)
             + 0 * g32(1, 1, 3, 3)[0, 0, 0, 0])],  # (the draws of the case it replaced)
           [("dx", (TensorProto.FLOAT, [1, 1, 4, 4]))], 16, domains=TRAIN,
           expect="(GridSample): Gradient: y depends on this node, whose gradient is not "
                  "supported")
write_case("refuse_gradient_other_type",
           [helper.make_node("Relu", ["x"], ["y"]),
            grad_node(["x"], [], "y", ["dx"], ["x2"])],
           [("x", g32(2, 3)), ("x2", g32(3, 2))],
           [("y", (TensorProto.FLOAT, [2, 3])), ("dx", (TensorProto.FLOAT, [2, 3]))], 13,
           domains=TRAIN,
           expect="input 0 is float[3, 2], but 'x' is float[2, 3]")
# Second order: the gradient of a gradient (d/da of 3a^2), with the nodes
# listed before the ops they differentiate.
a2 = g32(5)
write_case("gradient_second_order",
           [grad_node(["a"], [], "d1", ["d2"]),
            grad_node(["a"], [], "y", ["d1"]),
            helper.make_node("Mul", ["a", "a"], ["aa"]),
            helper.make_node("Mul", ["aa", "a"], ["y"])],
           [("a", a2)], [("d1", 3 * a2 * a2), ("d2", 6 * a2)], 13, domains=TRAIN)

# LpPool's opset-18 attributes, dilations and ceil_mode, against a NumPy
# transcription (with padding and a last window reaching past it).
def lppool_np(x, p, k, s, d, pads, ceil):
    sp = x.ndim - 2
    outs = []
    for i in range(sp):
        span = x.shape[2 + i] + pads[i] + pads[sp + i] - ((k[i] - 1) * d[i] + 1)
        o = (span + s[i] - 1) // s[i] + 1 if ceil else span // s[i] + 1
        if ceil and (o - 1) * s[i] >= x.shape[2 + i] + pads[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs), np.float64)
    for idx in np.ndindex(*outs):
        acc = np.zeros(x.shape[:2])
        for taps in np.ndindex(*k):
            at = [idx[i] * s[i] - pads[i] + taps[i] * d[i] for i in range(sp)]
            if all(0 <= at[i] < x.shape[2 + i] for i in range(sp)):
                acc += np.abs(x[(slice(None), slice(None)) + tuple(at)].astype(np.float64)) ** p
        y[(slice(None), slice(None)) + idx] = acc ** (1.0 / p)
    return y.astype(np.float32)


l18 = np.random.default_rng(14)  # its own: the cases above keep their data
xq = l18.standard_normal((2, 3, 9, 11)).astype(np.float32)
for name, p_, k, s_, d, pads, ceil in (
        ("lppool18_dilations", 2, [2, 3], [1, 2], [2, 2], [0, 0, 0, 0], 0),
        ("lppool18_ceil_pads", 3, [3, 3], [2, 2], [1, 1], [1, 0, 1, 1], 1),
        ("lppool18_dilations_ceil", 1, [2, 2], [3, 2], [3, 2], [1, 1, 0, 1], 1)):
    write_case(name, [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=k, strides=s_,
                                       dilations=d, pads=pads, ceil_mode=ceil, p=p_)],
               [("x", xq)], [("y", lppool_np(xq, p_, k, s_, d, pads, ceil))], 18)
x1q = l18.standard_normal((1, 2, 10)).astype(np.float32)
write_case("lppool18_1d_ceil", [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3],
                                                 strides=[3], ceil_mode=1, p=2)],
           [("x", x1q)], [("y", lppool_np(x1q, 2, [3], [3], [1], [0, 0], 1))], 18)
x3q = l18.standard_normal((1, 2, 5, 6, 7)).astype(np.float32)
write_case("lppool18_3d", [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 3, 2],
                                            strides=[1, 2, 2], dilations=[2, 1, 2],
                                            pads=[0, 1, 1, 1, 0, 1], ceil_mode=1, p=2)],
           [("x", x3q)],
           [("y", lppool_np(x3q, 2, [2, 3, 2], [1, 2, 2], [2, 1, 2], [0, 1, 1, 1, 0, 1], 1))], 18)

# A whole training step in one model: the MLP's loss, its Gradient, and a
# Momentum update of the weights, against PyTorch's SGD with momentum (its
# velocity given, so the step is the second: T = 1).
vel = {n: g32(*a.shape) * 0.1 for n, a in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))}
params = {n: torch.tensor(a, requires_grad=True) for n, a in (("w1", w1), ("b1", b1), ("w2", w2),
                                                              ("b2", b2))}
sgd = torch.optim.SGD(params.values(), lr=0.05, momentum=0.9)
ls = -(torch.log_softmax(torch.relu(torch.from_numpy(xm) @ params["w1"].T + params["b1"])
                         @ params["w2"] + params["b2"], 1) * torch.from_numpy(pick)).sum(1).mean()
ls.backward()
for n_, p_ in params.items():
    sgd.state[p_]["momentum_buffer"] = torch.from_numpy(vel[n_].copy())
sgd.step()
PN = ["w1", "b1", "w2", "b2"]
write_case("gradient_momentum_train_step",
           [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"]),
            helper.make_node("LogSoftmax", ["logits"], ["lp"], axis=1),
            helper.make_node("Mul", ["lp", "pick"], ["picked"]),
            helper.make_node("ReduceSum", ["picked", "one"], ["per"], keepdims=0),
            helper.make_node("ReduceMean", ["per"], ["mean"], keepdims=0),
            helper.make_node("Neg", ["mean"], ["loss"]),
            grad_node(PN, ["x", "pick"], "loss", ["g_" + n for n in PN]),
            helper.make_node("Momentum", ["lr", "step"] + PN + ["g_" + n for n in PN] +
                             ["v_" + n for n in PN], [n + "_new" for n in PN] +
                             ["v_" + n + "_new" for n in PN], domain="ai.onnx.preview.training",
                             alpha=0.9, beta=1.0, mode="standard", norm_coefficient=0.0)],
           [("x", xm), ("pick", pick), ("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)] +
           [("v_" + n, vel[n]) for n in PN] +
           [("lr", np.array(0.05, np.float32)), ("step", np.array(1, np.int64))],
           [("loss", np.array(ls.item(), np.float32))] +
           [(n + "_new", params[n].detach().numpy()) for n in PN] +
           [("v_" + n + "_new", sgd.state[params[n]]["momentum_buffer"].numpy()) for n in PN],
           13, inits=[("one", np.array([1], np.int64))], domains=TRAIN)

# Resize with antialias (opset 18) against a NumPy transcription of ONNX's
# reference rules: the linear or cubic filter stretched by 1 / scale when an
# axis shrinks, its taps the nearest input indices (edge padded), weights
# normalised; checked against PyTorch's antialiased bilinear below.
def aa_coeffs(mode, ratio, scale, a=-0.75):
    scale = min(scale, 1.0)
    if mode == "linear":
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, 2 - start) - ratio) * scale
        c = np.clip(1 - np.abs(args), 0, 1)
    else:
        start = int(np.floor(-2 / scale) + 1)

        def k(x):
            x = abs(x)
            if x <= 1:
                return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
            if x < 2:
                return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
            return 0.0
        c = np.array([k(scale * (i - ratio)) for i in range(start, 2 - start)])
    return c / c.sum()


def aa_resize_axis(x, axis, out_len, scale, mode, coord, excl, a=-0.75):
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    n_in = x.shape[-1]
    y = np.zeros(x.shape[:-1] + (out_len,))
    for o in range(out_len):
        if coord == "half_pixel":
            xo = (o + 0.5) / scale - 0.5
        elif coord == "align_corners":
            xo = 0.0 if out_len == 1 else o * (n_in - 1) / (scale * n_in - 1)
        else:  # asymmetric
            xo = o / scale
        ratio = 1.0 if float(xo).is_integer() else xo - np.floor(xo)
        c = aa_coeffs(mode, ratio, scale, a)
        nt = len(c)
        pad = int(np.ceil(nt / 2))
        idx = sorted(sorted(range(n_in + 2 * pad), key=lambda i: (abs(xo + pad - i), i))[:nt])
        idx = np.array(idx) - pad
        if excl:
            c = np.where((idx < 0) | (idx >= n_in), 0, c)
            c = c / c.sum()
        y[..., o] = (x[..., np.clip(idx, 0, n_in - 1)] * c).sum(-1)
    return np.moveaxis(y, -1, axis)


aa = np.random.default_rng(15)  # its own: the cases above keep their data
xa = aa.standard_normal((1, 2, 17, 23)).astype(np.float32)
for name, mode, sizes, coord, excl in (
        ("resize18_antialias_linear_half", "linear", [1, 2, 7, 9], "half_pixel", 0),
        ("resize18_antialias_cubic_half", "cubic", [1, 2, 6, 11], "half_pixel", 0),
        ("resize18_antialias_cubic_excl_asym", "cubic", [1, 2, 5, 4], "asymmetric", 1),
        ("resize18_antialias_linear_up_down", "linear", [1, 2, 30, 8], "align_corners", 0)):
    y = xa
    for ax in (2, 3):
        s_ = sizes[ax] / xa.shape[ax]
        if s_ < 1:
            y = aa_resize_axis(y, ax, sizes[ax], s_, mode, coord, excl)
        elif s_ > 1:
            # Growing, the filter is the plain one: PyTorch's align_corners bilinear.
            y = torch.nn.functional.interpolate(torch.from_numpy(np.asarray(y, np.float32)),
                                                size=(sizes[2], y.shape[3]), mode="bilinear",
                                                align_corners=True).numpy()
    write_case(name, [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode,
                                       antialias=1, coordinate_transformation_mode=coord,
                                       exclude_outside=excl)],
               [("x", xa)], [("y", np.asarray(y, np.float32))], 18,
               inits=[("sizes", np.array(sizes, np.int64))])

# GridSample on 5-D inputs (opset 20: volumetric linear and nearest) against
# PyTorch's grid_sample. Nearest's points sit within 0.3 pixel of a pixel's
# centre, so the bfloat16 modes' coarser grid picks the same pixels.
g5 = np.random.default_rng(16)  # its own: the cases above keep their data
x5 = g5.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
grid5 = g5.uniform(-1.3, 1.3, (2, 3, 4, 2, 3)).astype(np.float32)
near5 = g5.integers(-1, 8, (2, 3, 4, 2, 3)) + g5.uniform(-0.3, 0.3, (2, 3, 4, 2, 3))
for mode, tmode in (("linear", "bilinear"), ("nearest", "nearest")):
    for pad in ("zeros", "border", "reflection"):
        for align in (0, 1):
            if mode == "nearest":
                size = np.array([6, 5, 4])  # x, y, z
                grid5 = (2 * near5 / (size - 1) - 1 if align else (2 * near5 + 1) / size - 1)
                grid5 = grid5.astype(np.float32)
            y = torch.nn.functional.grid_sample(torch.from_numpy(x5), torch.from_numpy(grid5),
                                                mode=tmode, padding_mode=pad,
                                                align_corners=bool(align)).numpy()
            write_case("gridsample5d_%s_%s_%d" % (mode, pad, align),
                       [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                                         padding_mode=pad, align_corners=align)],
                       [("x", x5), ("grid", grid5)], [("y", y)], 20)
write_case("refuse_gridsample5d_cubic",
           [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="cubic")],
           [("x", x5), ("grid", grid5)], [("y", (TensorProto.FLOAT, [2, 3, 3, 4, 2]))], 20,
           expect="cubic sampling of a 5-D input is not supported")

# More ops with a gradient: Split (one output's gradient missing, zeros),
# Erf, LeakyRelu, Concat, Where, Clip (opset 13 bounds), Expand and Mean.
ga_, gb_, gbias = g32(2, 7), g32(2, 6), g32(6)


def more_ops(A, B, bias):
    s1, s2, _ = A.split([2, 4, 1], 1)
    c = torch.cat([torch.nn.functional.leaky_relu(s1, 0.2), torch.erf(s2)], 1)
    w = torch.where(A[:, :6] > 0.3, c, B)
    k = torch.clamp(w, -0.5, 0.8)
    return (k + bias.expand(2, 6)) / 2


ym, grads = torch_grads(more_ops, [ga_, gb_, gbias])
write_case("gradient_more_ops",
           [helper.make_node("Split", ["a", "parts"], ["s1", "s2", "s3"], axis=1),
            helper.make_node("LeakyRelu", ["s1"], ["l"], alpha=0.2),
            helper.make_node("Erf", ["s2"], ["e"]),
            helper.make_node("Concat", ["l", "e"], ["c"], axis=1),
            helper.make_node("Slice", ["a", "zero", "six", "one"], ["a6"]),
            helper.make_node("Greater", ["a6", "thr"], ["cond"]),
            helper.make_node("Where", ["cond", "c", "b"], ["w"]),
            helper.make_node("Clip", ["w", "lo", "hi"], ["k"]),
            helper.make_node("Expand", ["bias", "shape"], ["bx"]),
            helper.make_node("Mean", ["k", "bx"], ["y"]),
            grad_node(["a", "b", "bias"], [], "y", ["da", "db", "dbias"])],
           [("a", ga_), ("b", gb_), ("bias", gbias)],
           [("y", ym), ("da", grads[0]), ("db", grads[1]), ("dbias", grads[2])], 13,
           inits=[("parts", np.array([2, 4, 1], np.int64)), ("zero", np.array([0], np.int64)),
                  ("six", np.array([6], np.int64)), ("one", np.array([1], np.int64)),
                  ("thr", np.array(0.3, np.float32)), ("lo", np.array(-0.5, np.float32)),
                  ("hi", np.array(0.8, np.float32)), ("shape", np.array([2, 6], np.int64))],
           domains=TRAIN)

# A small CNN's training loss: Conv (stride 2, padding), Relu, Conv
# (dilation 2), GlobalAveragePool, Gemm, LogSoftmax; the gradients of both
# convolutions' weights and biases and of the input; and a grouped Conv's
# input gradient with SAME_UPPER padding (its weight a constant, as the
# device's grouped convolution takes).
cx, cw1, cb1, cw2, cb2, cfc = (g32(3, 2, 9, 8), g32(4, 2, 3, 3) * 0.5, g32(4), g32(5, 4, 2, 2) * 0.5,
                               g32(5), g32(3, 5))
cpick = np.eye(3, dtype=np.float32)[gr_.integers(0, 3, 3)]


def cnn_loss(X, W1, B1, W2, B2):
    h = torch.relu(torch.nn.functional.conv2d(X, W1, B1, stride=2, padding=1))
    h = torch.nn.functional.conv2d(h, W2, B2, dilation=2, padding=1)
    logits = h.mean((2, 3)) @ torch.from_numpy(cfc).T
    return -(torch.log_softmax(logits, 1) * torch.from_numpy(cpick)).sum(1).mean()


closs, grads = torch_grads(cnn_loss, [cx, cw1, cb1, cw2, cb2])
write_case("gradient_cnn_loss",
           [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"]),
            helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], dilations=[2, 2],
                             pads=[1, 1, 1, 1]),
            helper.make_node("GlobalAveragePool", ["c2"], ["gp"]),
            helper.make_node("Flatten", ["gp"], ["f"]),
            helper.make_node("Gemm", ["f", "fc"], ["logits"], transB=1),
            helper.make_node("LogSoftmax", ["logits"], ["lp"], axis=1),
            helper.make_node("Mul", ["lp", "pick"], ["picked"]),
            helper.make_node("ReduceSum", ["picked", "one"], ["per"], keepdims=0),
            helper.make_node("ReduceMean", ["per"], ["mean"], keepdims=0),
            helper.make_node("Neg", ["mean"], ["loss"]),
            grad_node(["x", "w1", "b1", "w2", "b2"], [], "loss",
                      ["dx", "dw1", "db1", "dw2", "db2"])],
           [("x", cx), ("w1", cw1), ("b1", cb1), ("w2", cw2), ("b2", cb2)],
           [("loss", np.array(closs, np.float32))] +
           [(n, gd) for n, gd in zip(["dx", "dw1", "db1", "dw2", "db2"], grads)], 13,
           inits=[("fc", cfc), ("pick", cpick), ("one", np.array([1], np.int64))], domains=TRAIN)
gx_, gw_ = g32(2, 4, 7, 6), g32(6, 2, 3, 2)
_, grads = torch_grads(
    lambda X: torch.nn.functional.conv2d(torch.nn.functional.pad(X, (0, 0, 1, 1)),
                                         torch.from_numpy(gw_), groups=2, stride=2) ** 2, [gx_])
write_case("gradient_grouped_conv_same",
           [helper.make_node("Conv", ["x", "w"], ["c"], group=2, strides=[2, 2],
                             auto_pad="SAME_UPPER"),
            helper.make_node("Mul", ["c", "c"], ["y"]),
            grad_node(["x"], ["w"], "y", ["dx"])],
           [("x", gx_)], [("dx", grads[0])], 13, inits=[("w", gw_)], domains=TRAIN)
# A grouped Conv's weight: two groups with SAME_UPPER padding and strides;
# depthwise with dilation.
_, grads = torch_grads(
    lambda W: torch.nn.functional.conv2d(torch.nn.functional.pad(torch.from_numpy(gx_), (0, 0, 1, 1)), W, groups=2, stride=2) ** 2,
    [gw_])
write_case("gradient_grouped_conv_weight",
           [helper.make_node("Conv", ["x", "w"], ["y"], group=2, strides=[2, 2],
                             auto_pad="SAME_UPPER"),
            helper.make_node("Mul", ["y", "y"], ["y2"]),
            grad_node(["w"], ["x"], "y2", ["dw"])],
           [("x", gx_), ("w", gw_)], [("dw", grads[0])], 13, domains=TRAIN)
dwx, dww, dwb = g32(2, 4, 9, 8), g32(4, 1, 3, 3), g32(4)
_, grads = torch_grads(
    lambda X, W, B: torch.tanh(torch.nn.functional.conv2d(X, W, B, padding=2, dilation=2, groups=4)), [dwx, dww, dwb])
write_case("gradient_depthwise_conv",
           [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=4, pads=[2, 2, 2, 2],
                             dilations=[2, 2]),
            helper.make_node("Tanh", ["c"], ["y"]),
            grad_node(["x", "w", "b"], [], "y", ["dx", "dw", "db"])],
           [("x", dwx), ("w", dww), ("b", dwb)],
           [("dx", grads[0]), ("dw", grads[1]), ("db", grads[2])], 13, domains=TRAIN)

# Gradient through pooling, normalization, indexing and the remaining
# element-wise ops, against PyTorch's autograd (NumPy where PyTorch has no
# such op).
gp_ = np.random.default_rng(15)  # its own: the cases above keep their data


def p32(*shape):
    return gp_.standard_normal(shape).astype(np.float32)


F_ = torch.nn.functional
# Overlapping windows with padding; values on a grid of halves, so windows
# hold equal maxima, which go to the first (PyTorch's pick).
mx = (np.round(p32(2, 3, 9, 8) * 2) / 2).astype(np.float32)
mw = p32(2, 3, 5, 4)
_, grads = torch_grads(lambda X: F_.max_pool2d(torch.relu(X), 3, 2, 1) * torch.from_numpy(mw),
                       [mx])
write_case("gradient_maxpool_overlap_ties",
           [helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Mul", ["p", "w"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", mx)], [("dx", grads[0])], 13, inits=[("w", mw)], domains=TRAIN)
mx2 = p32(2, 2, 8, 9)
mw2 = p32(*F_.max_pool2d(torch.from_numpy(mx2), (3, 2), (2, 2), (1, 1), (1, 2),
                          ceil_mode=True).shape)
y2, grads = torch_grads(
    lambda X: F_.max_pool2d(X, (3, 2), (2, 2), (1, 1), (1, 2), ceil_mode=True)
    * torch.from_numpy(mw2), [mx2])
write_case("gradient_maxpool_dilation_ceil",
           [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 2], strides=[2, 2],
                             pads=[1, 1, 1, 1], dilations=[1, 2], ceil_mode=1),
            helper.make_node("Mul", ["p", "w"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", mx2)], [("dx", grads[0])], 13, inits=[("w", mw2)], domains=TRAIN)
m1, m3 = p32(2, 3, 10), p32(1, 2, 4, 6, 5)
_, grads = torch_grads(lambda A, B: F_.max_pool1d(A, 3, 3, ceil_mode=True).sum() * 2
                       + (F_.max_pool3d(B, 2, 2) ** 2).sum(), [m1, m3])
write_case("gradient_maxpool_1d_3d",
           [helper.make_node("MaxPool", ["a"], ["pa"], kernel_shape=[3], strides=[3],
                             ceil_mode=1),
            helper.make_node("ReduceSum", ["pa"], ["sa"], keepdims=0),
            helper.make_node("MaxPool", ["b"], ["pb"], kernel_shape=[2, 2, 2],
                             strides=[2, 2, 2]),
            helper.make_node("Mul", ["pb", "pb"], ["qb"]),
            helper.make_node("ReduceSum", ["qb"], ["sb"], keepdims=0),
            helper.make_node("Mul", ["sa", "two"], ["sa2"]),
            helper.make_node("Add", ["sa2", "sb"], ["y"]),
            grad_node(["a", "b"], [], "y", ["da", "db"])],
           [("a", m1), ("b", m3)], [("da", grads[0]), ("db", grads[1])], 13,
           inits=[("two", np.array(2, np.float32))], domains=TRAIN)
ax_ = p32(2, 3, 9, 7)
for cip in (0, 1):
    aw = p32(2, 3, 5, 4)
    _, grads = torch_grads(
        lambda X: F_.avg_pool2d(X, 3, 2, 1, ceil_mode=True, count_include_pad=bool(cip))
        * torch.from_numpy(aw), [ax_])
    write_case("gradient_avgpool_ceil_cip%d" % cip,
               [helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[3, 3],
                                 strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                                 count_include_pad=cip),
                helper.make_node("Mul", ["p", "w"], ["y"]),
                grad_node(["x"], [], "y", ["dx"])],
               [("x", ax_)], [("dx", grads[0])], 13, inits=[("w", aw)], domains=TRAIN)

# BatchNormalization with the running statistics (each differentiated too)
# and in training mode (the batch's own).
bx, bs, bb, bm = p32(3, 4, 5, 5), p32(4), p32(4), p32(4)
bv = (np.abs(p32(4)) + 0.5).astype(np.float32)
bw = p32(3, 4, 5, 5)
# The variance's gradient sums g (x - mean): g mostly of x - mean's sign
# keeps that sum clear of cancellation, which bfloat16 would blur.
bwi = ((bx - bm[:, None, None]) * 0.3 + 0.05 * bw).astype(np.float32)
_, grads = torch_grads(
    lambda X, S, B, M, V: ((X - M[:, None, None]) / torch.sqrt(V[:, None, None] + 1e-3)
                           * S[:, None, None] + B[:, None, None]) * torch.from_numpy(bwi),
    [bx, bs, bb, bm, bv])
write_case("gradient_batchnorm_inference",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"],
                             epsilon=1e-3),
            helper.make_node("Mul", ["n", "w"], ["y"]),
            grad_node(["x", "s", "b", "m", "v"], [], "y", ["dx", "ds", "db", "dm", "dv"])],
           [("x", bx), ("s", bs), ("b", bb), ("m", bm), ("v", bv)],
           [(n_, gd) for n_, gd in zip(["dx", "ds", "db", "dm", "dv"], grads)], 15,
           inits=[("w", bwi)], domains=TRAIN)
_, grads = torch_grads(
    lambda X, S, B: F_.batch_norm(X, None, None, S, B, training=True, eps=1e-5)
    * torch.from_numpy(bw), [bx, bs, bb])
write_case("gradient_batchnorm_training",
           [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"],
                             training_mode=1),
            helper.make_node("Mul", ["n", "w"], ["y"]),
            grad_node(["x", "s", "b"], ["m", "v"], "y", ["dx", "ds", "db"])],
           [("x", bx), ("s", bs), ("b", bb), ("m", bm), ("v", bv)],
           [(n_, gd) for n_, gd in zip(["dx", "ds", "db"], grads)], 15,
           inits=[("w", bw)], domains=TRAIN)

# LayerNormalization over the last two dims, the bias broadcast from the
# last; InstanceNormalization.
lx, ls, lb, lw = p32(2, 3, 4, 5), p32(4, 5), p32(5), p32(2, 3, 4, 5)


def layer_norm_t(X, S, B):
    mu = X.mean((2, 3), keepdim=True)
    var = ((X - mu) ** 2).mean((2, 3), keepdim=True)
    return ((X - mu) / torch.sqrt(var + 1e-5) * S + B) * torch.from_numpy(lw)


_, grads = torch_grads(layer_norm_t, [lx, ls, lb])
write_case("gradient_layernorm",
           [helper.make_node("LayerNormalization", ["x", "s", "b"], ["n"], axis=-2),
            helper.make_node("Mul", ["n", "w"], ["y"]),
            grad_node(["x", "s", "b"], [], "y", ["dx", "ds", "db"])],
           [("x", lx), ("s", ls), ("b", lb)],
           [(n_, gd) for n_, gd in zip(["dx", "ds", "db"], grads)], 17,
           inits=[("w", lw)], domains=TRAIN)
ix, is_, ib, iw = p32(2, 3, 4, 4), p32(3), p32(3), p32(2, 3, 4, 4)
_, grads = torch_grads(lambda X, S, B: F_.instance_norm(X, weight=S, bias=B, eps=1e-4)
                       * torch.from_numpy(iw), [ix, is_, ib])
write_case("gradient_instancenorm",
           [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["n"], epsilon=1e-4),
            helper.make_node("Mul", ["n", "w"], ["y"]),
            grad_node(["x", "s", "b"], [], "y", ["dx", "ds", "db"])],
           [("x", ix), ("s", is_), ("b", ib)],
           [(n_, gd) for n_, gd in zip(["dx", "ds", "db"], grads)], 13,
           inits=[("w", iw)], domains=TRAIN)

# Gather as an embedding (indices repeated and negative), Gather along a
# middle axis with int32 indices, GatherElements.
ge, gm, gel = p32(6, 4), p32(3, 5, 2), p32(3, 4)
gi = np.array([[0, 2, 5], [2, -1, 0]], np.int64)
gj = np.array([4, 1, 1, -5], np.int32)
gk = np.array([[0, 3, 3], [1, 1, 2], [-1, 0, 0]], np.int64)
gw1, gw2, gw3 = p32(2, 3, 4), p32(3, 4, 2), p32(3, 3)
_, grads = torch_grads(
    lambda E, M, L: (E[torch.from_numpy(gi % 6)] * torch.from_numpy(gw1)).sum()
    + (M[:, torch.from_numpy((gj % 5).astype(np.int64))] * torch.from_numpy(gw2)).sum()
    + (torch.gather(L, 1, torch.from_numpy(gk % 4)) * torch.from_numpy(gw3)).sum(),
    [ge, gm, gel])
write_case("gradient_gather",
           [helper.make_node("Gather", ["e", "i"], ["ge"]),
            helper.make_node("Mul", ["ge", "w1"], ["p1"]),
            helper.make_node("ReduceSum", ["p1"], ["s1"], keepdims=0),
            helper.make_node("Gather", ["m", "j"], ["gm"], axis=1),
            helper.make_node("Mul", ["gm", "w2"], ["p2"]),
            helper.make_node("ReduceSum", ["p2"], ["s2"], keepdims=0),
            helper.make_node("GatherElements", ["l", "k"], ["gl"], axis=1),
            helper.make_node("Mul", ["gl", "w3"], ["p3"]),
            helper.make_node("ReduceSum", ["p3"], ["s3"], keepdims=0),
            helper.make_node("Sum", ["s1", "s2", "s3"], ["y"]),
            grad_node(["e", "m", "l"], ["i", "j", "k"], "y", ["de", "dm", "dl"])],
           [("e", ge), ("m", gm), ("l", gel), ("i", gi), ("j", gj), ("k", gk)],
           [("de", grads[0]), ("dm", grads[1]), ("dl", grads[2])], 13,
           inits=[("w1", gw1), ("w2", gw2), ("w3", gw3)], domains=TRAIN)

# Slice with steps up and down and ends past the dim, Pad, Tile, and Max
# and Min with ties (shared evenly, as PyTorch's maximum does).
sx = p32(5, 8, 6)
sl = (slice(1, 5, 2), slice(7, 0, -3), slice(0, 6, 4))
sw = p32(*sx[sl].shape)
sdx = np.zeros_like(sx)
sdx[sl] = sw
write_case("gradient_slice_steps",
           [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
            helper.make_node("Mul", ["s", "w"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", sx)], [("dx", sdx)], 13,
           inits=[("w", sw), ("st", np.array([1, -1, 0], np.int64)),
                  ("en", np.array([5, 0, 100], np.int64)), ("ax", np.array([0, 1, 2], np.int64)),
                  ("sp", np.array([2, -3, 4], np.int64))], domains=TRAIN)
ta_ = np.round(p32(2, 3)).astype(np.float32)
tb_ = np.round(p32(3)).astype(np.float32)
tc_ = np.round(p32(2, 1)).astype(np.float32)
tw_ = p32(4, 12)
_, grads = torch_grads(
    lambda A, B, C: (torch.maximum(torch.maximum(A, B), C) * 2 - torch.minimum(A, B)).sum()
    + (F_.pad(A, (2, 1, 1, 0)).repeat(1, 2) * torch.from_numpy(tw_[:3, :12])).sum(),
    [ta_, tb_, tc_])
write_case("gradient_pad_tile_max_min",
           [helper.make_node("Max", ["a", "b", "c"], ["mx"]),
            helper.make_node("Min", ["a", "b"], ["mn"]),
            helper.make_node("Mul", ["mx", "two"], ["mx2"]),
            helper.make_node("Sub", ["mx2", "mn"], ["d"]),
            helper.make_node("ReduceSum", ["d"], ["s1"], keepdims=0),
            helper.make_node("Pad", ["a", "pads"], ["pa"]),
            helper.make_node("Tile", ["pa", "reps"], ["tl"]),
            helper.make_node("Mul", ["tl", "w"], ["p"]),
            helper.make_node("ReduceSum", ["p"], ["s2"], keepdims=0),
            helper.make_node("Add", ["s1", "s2"], ["y"]),
            grad_node(["a", "b", "c"], [], "y", ["da", "db", "dc"])],
           [("a", ta_), ("b", tb_), ("c", tc_)],
           [("da", grads[0]), ("db", grads[1]), ("dc", grads[2])], 13,
           inits=[("two", np.array(2, np.float32)), ("pads", np.array([1, 2, 0, 1], np.int64)),
                  ("reps", np.array([1, 2], np.int64)), ("w", tw_[:3, :12])], domains=TRAIN)
ex = p32(3, 7)
_, grads = torch_grads(
    lambda X: 1 / (X.abs() + 0.5) + F_.softplus(X) + F_.softsign(X) + torch.sin(X) * torch.cos(X)
    + F_.elu(X, 0.7) + torch.clamp(X * 0.3 + 0.4, 0, 1) + torch.floor(X), [ex])
write_case("gradient_eltwise_more",
           [helper.make_node("Abs", ["x"], ["ab"]),
            helper.make_node("Add", ["ab", "half"], ["ah"]),
            helper.make_node("Reciprocal", ["ah"], ["t1"]),
            helper.make_node("Softplus", ["x"], ["t2"]),
            helper.make_node("Softsign", ["x"], ["t3"]),
            helper.make_node("Sin", ["x"], ["sn"]),
            helper.make_node("Cos", ["x"], ["cs"]),
            helper.make_node("Mul", ["sn", "cs"], ["t4"]),
            helper.make_node("Elu", ["x"], ["t5"], alpha=0.7),
            helper.make_node("HardSigmoid", ["x"], ["t6"], alpha=0.3, beta=0.4),
            helper.make_node("Floor", ["x"], ["t7"]),
            helper.make_node("Dropout", ["x"], ["t8"]),
            helper.make_node("Sum", ["t1", "t2", "t3", "t4", "t5", "t6", "t7"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", ex)], [("dx", grads[0])], 13, inits=[("half", np.array(0.5, np.float32))],
           domains=TRAIN)

# The other reductions (axes as an attribute and, at opset 18, as an
# input; Max and Min with ties, shared evenly as PyTorch's amax does) and
# GlobalMaxPool (the first maximum, as max pooling picks).
rx = (np.round(p32(3, 4, 5) * 2) / 2).astype(np.float32)
rp = (np.abs(p32(3, 4, 5)) + 0.2).astype(np.float32)
_, grads = torch_grads(
    lambda X, P: (X ** 2).sum(1).sum() * 0.5 + X.abs().sum((0, 2)).sum()
    + torch.sqrt((X ** 2).sum(2)).sum() + torch.logsumexp(X, 1).sum()
    + torch.log(P.sum(0)).sum() + X.amax((1, 2)).sum() * 3 - X.amin(0).sum(), [rx, rp])
write_case("gradient_reductions",
           [helper.make_node("ReduceSumSquare", ["x"], ["r1"], axes=[1], keepdims=0),
            helper.make_node("ReduceL1", ["x"], ["r2"], axes=[0, 2], keepdims=1),
            helper.make_node("ReduceL2", ["x"], ["r3"], axes=[2], keepdims=0),
            helper.make_node("ReduceLogSumExp", ["x"], ["r4"], axes=[1], keepdims=0),
            helper.make_node("ReduceLogSum", ["p"], ["r5"], axes=[0], keepdims=0),
            helper.make_node("ReduceMax", ["x"], ["r6"], axes=[1, 2], keepdims=1),
            helper.make_node("ReduceMin", ["x"], ["r7"], axes=[0], keepdims=0),
            helper.make_node("ReduceSum", ["r1"], ["s1"], keepdims=0),
            helper.make_node("ReduceSum", ["r2"], ["s2"], keepdims=0),
            helper.make_node("ReduceSum", ["r3"], ["s3"], keepdims=0),
            helper.make_node("ReduceSum", ["r4"], ["s4"], keepdims=0),
            helper.make_node("ReduceSum", ["r5"], ["s5"], keepdims=0),
            helper.make_node("ReduceSum", ["r6"], ["s6"], keepdims=0),
            helper.make_node("ReduceSum", ["r7"], ["s7"], keepdims=0),
            helper.make_node("Mul", ["s1", "half"], ["t1"]),
            helper.make_node("Mul", ["s6", "three"], ["t6"]),
            helper.make_node("Sum", ["t1", "s2", "s3", "s4", "s5", "t6"], ["u"]),
            helper.make_node("Sub", ["u", "s7"], ["y"]),
            grad_node(["x", "p"], [], "y", ["dx", "dp"])],
           [("x", rx), ("p", rp)], [("dx", grads[0]), ("dp", grads[1])], 13,
           inits=[("half", np.array(0.5, np.float32)), ("three", np.array(3, np.float32))],
           domains=TRAIN)
_, grads = torch_grads(lambda X: X.amax(1, keepdim=True) * 2, [rx])
write_case("gradient_reducemax_opset18",
           [helper.make_node("ReduceMax", ["x", "ax"], ["m"]),
            helper.make_node("Mul", ["m", "two"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", rx)], [("dx", grads[0])], 18,
           inits=[("ax", np.array([1], np.int64)), ("two", np.array(2, np.float32))],
           domains=TRAIN)
gmx = (np.round(p32(2, 3, 4, 5)) ).astype(np.float32)
gmw = p32(2, 3, 1, 1)
_, grads = torch_grads(lambda X: F_.adaptive_max_pool2d(X, 1) * torch.from_numpy(gmw), [gmx])
write_case("gradient_globalmaxpool_ties",
           [helper.make_node("GlobalMaxPool", ["x"], ["m"]),
            helper.make_node("Mul", ["m", "w"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", gmx)], [("dx", grads[0])], 13, inits=[("w", gmw)], domains=TRAIN)

# Grouped Conv and ConvTranspose whose weight is a graph input (made dense
# on the device).
rgx, rgw, rgb = p32(2, 6, 7, 8), p32(9, 2, 3, 2), p32(9)
write_case("conv_groups_runtime_weight",
           [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=3, strides=[2, 1],
                             pads=[1, 0, 1, 1])],
           [("x", rgx), ("w", rgw), ("b", rgb)],
           [("y", F_.conv2d(F_.pad(torch.from_numpy(rgx), (0, 1, 1, 1)), torch.from_numpy(rgw),
                            torch.from_numpy(rgb), stride=(2, 1), groups=3).numpy())], 13)
rtx, rtw = p32(1, 4, 5, 5), p32(4, 3, 3, 3)
write_case("convtranspose_groups_runtime_weight",
           [helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=2, strides=[2, 2],
                             output_padding=[1, 0])],
           [("x", rtx), ("w", rtw)],
           [("y", F_.conv_transpose2d(torch.from_numpy(rtx), torch.from_numpy(rtw), stride=2,
                                      output_padding=(1, 0), groups=2).numpy())], 13)
rdx, rdw = p32(1, 5, 6, 6, 4), p32(5, 1, 2, 3, 2)
write_case("conv3d_depthwise_runtime_weight",
           [helper.make_node("Conv", ["x", "w"], ["y"], group=5)],
           [("x", rdx), ("w", rdw)],
           [("y", F_.conv3d(torch.from_numpy(rdx), torch.from_numpy(rdw), groups=5).numpy())], 13)

# Gradients still refused, each naming its node.
# Pad in the other modes: each padded element's gradient goes to the
# element it copies.
pdx = p32(2, 3, 5, 6)
for pmode, tmode in (("reflect", "reflect"), ("edge", "replicate"), ("wrap", "circular")):
    pw = p32(2, 3, 5 + 2 + 3, 6 + 4 + 1)
    _, grads = torch_grads(lambda X: F_.pad(X, (4, 1, 2, 3), mode=tmode) * torch.from_numpy(pw),
                           [pdx])
    write_case("gradient_pad_" + pmode,
               [helper.make_node("Pad", ["x", "pads"], ["p"], mode=pmode),
                helper.make_node("Mul", ["p", "w"], ["y"]),
                grad_node(["x"], [], "y", ["dx"])],
               [("x", pdx)], [("dx", grads[0])], 19,
               inits=[("pads", np.array([0, 0, 2, 4, 0, 0, 3, 1], np.int64)), ("w", pw)],
               domains=TRAIN)
# Dropout in training mode: the gradient passes where the mask kept an
# element, times 1 / (1 - ratio). The draws are the device's, so the cases
# check themselves with exact math (ratio 0.5: a scale of 2): with y's
# gradient 1, dx is 2 where kept and 0 where dropped, so y - dx * x and
# dx * (dx - 2) are zero only if the gradient's mask is the forward's draw
# and is a mask at all.
dr_ = np.random.default_rng(18)  # its own: the cases after these keep their data
p32(3, 4), p32(3, 4), p32(4)  # the draws of the refusals these cases replaced


def d32(*shape):
    return dr_.standard_normal(shape).astype(np.float32)


ddx = d32(4, 12)
drop_checks = [helper.make_node("Mul", ["dx", "x"], ["dxx"]),
               helper.make_node("Sub", ["y", "dxx"], ["same"]),
               helper.make_node("Sub", ["dx", "two"], ["dx2"]),
               helper.make_node("Mul", ["dx", "dx2"], ["binary"])]
drop_inits = [("ratio", np.array(0.5, np.float32)), ("train", np.array(True)),
              ("two", np.array(2, np.float32))]
zeros = np.zeros((4, 12), np.float32)
write_case("gradient_dropout_training",
           [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])] + drop_checks,
           [("x", ddx)], [("same", zeros), ("binary", zeros)], 13, inits=drop_inits,
           domains=TRAIN)
# The mask an output of the model too; the gradient of a weighted sum.
dw = d32(4, 12)
write_case("gradient_dropout_training_mask_output",
           [helper.make_node("Dropout", ["x", "ratio", "train"], ["d", "mask"], seed=5),
            helper.make_node("Mul", ["d", "w"], ["y"]),
            grad_node(["x"], ["w"], "y", ["dx"]),
            helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["m", "w"], ["mw"]),
            helper.make_node("Mul", ["mw", "two"], ["want"]),
            helper.make_node("Sub", ["dx", "want"], ["off"])],
           [("x", ddx), ("w", dw)], [("off", zeros)], 13, inits=drop_inits, domains=TRAIN)
# At other values than x's own (the forward recomputed, with its own draw).
write_case("gradient_dropout_training_at",
           [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"]),
            helper.make_node("Identity", ["x"], ["x2"]),
            grad_node(["x"], [], "y", ["dx"], inputs=["x2"]),
            helper.make_node("Sub", ["dx", "two"], ["dx2"]),
            helper.make_node("Mul", ["dx", "dx2"], ["binary"])],
           [("x", ddx)], [("binary", zeros)], 13, inits=drop_inits, domains=TRAIN)
# LayerNormalization's three outputs on the path: Y, Mean and InvStdDev
# (over the last two dims), each weighted into one loss.
lnx, lns, lnb = d32(3, 4, 5), d32(4, 5), d32(4, 5)
lw1, lw2, lw3 = d32(3, 4, 5), d32(3, 1, 1), d32(3, 1, 1)


def ln_loss(X, S, B):
    mean = X.mean((1, 2), keepdim=True)
    inv = 1 / torch.sqrt(X.var((1, 2), unbiased=False, keepdim=True) + 1e-5)
    y = (X - mean) * inv * S + B
    return ((y * torch.from_numpy(lw1)).sum() + (mean * torch.from_numpy(lw2)).sum() +
            (inv * torch.from_numpy(lw3)).sum())


_, grads = torch_grads(ln_loss, [lnx, lns, lnb])
write_case("gradient_layernorm_mean_invstd",
           [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=1)]
           + weighted_sum([("y", "w1"), ("mean", "w2"), ("inv", "w3")], "l")
           + [grad_node(["x", "s", "b"], [], "l", ["dx", "ds", "db"])],
           [("x", lnx), ("s", lns), ("b", lnb)], [("dx", grads[0]), ("ds", grads[1]),
                                                  ("db", grads[2])], 17,
           inits=[("w1", lw1), ("w2", lw2), ("w3", lw3)], domains=TRAIN)
# Only the Mean output on the path (Y's gradient missing).
_, grads = torch_grads(lambda X: (X.mean(-1, keepdim=True) * torch.from_numpy(lw2[:, :, 0])).sum(),
                       [lnx[:, 0, :4]])
write_case("gradient_layernorm_mean_only",
           [helper.make_node("LayerNormalization", ["x", "s"], ["y", "mean"]),
            helper.make_node("Mul", ["mean", "w"], ["a"]),
            grad_node(["x"], ["s"], "a", ["dx"])],
           [("x", lnx[:, 0, :4].copy()), ("s", lns[0, :4].copy())], [("dx", grads[0])], 17,
           inits=[("w", lw2[:, :, 0].copy())], domains=TRAIN)
# A strided slice of a long dim: its placement matrix would be too large, so
# its gradient gets zeros between the elements instead.
lsx = p32(2, 9000)
lsw = p32(2, 2250)
lsd = np.zeros_like(lsx)
lsd[:, 3:9000:4] = lsw
write_case("gradient_slice_long_dim",
           [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
            helper.make_node("Mul", ["s", "w"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", lsx)], [("dx", lsd)], 13,
           inits=[("w", lsw), ("st", np.array([3], np.int64)), ("en", np.array([9000], np.int64)),
                  ("ax", np.array([1], np.int64)), ("sp", np.array([4], np.int64))],
           domains=TRAIN)
write_case("refuse_gradient_maxpool_taps",
           [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[65, 65]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", p32(1, 1, 66, 66))], [("dx", (TensorProto.FLOAT, [1, 1, 66, 66]))], 13,
           domains=TRAIN,
           expect="(MaxPool): Gradient: MaxPool's gradient takes each kernel tap apart: 4225 "
                  "taps (at most 4096)")
# A reduction of no axis (noop_with_empty_axes): each element its own.
nx_ = p32(2, 3)
write_case("gradient_reducemax_noop",
           [helper.make_node("ReduceMax", ["x"], ["m"], noop_with_empty_axes=1),
            helper.make_node("Mul", ["m", "m"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", nx_)], [("dx", 2 * nx_)], 18, domains=TRAIN)

# ConvTranspose: the input's gradient a convolution with the same weights,
# the weight's (two groups, then one) and the bias's.
ctx_, ctw_, ctb_ = p32(2, 4, 5, 6), p32(4, 3, 3, 2), p32(6)


def convt_t(X, W, B):
    return F_.conv_transpose2d(X, W, B, stride=2, padding=(1, 0), output_padding=(1, 1), groups=2,
                               dilation=(1, 2))


ctm = p32(*convt_t(torch.from_numpy(ctx_), torch.from_numpy(ctw_), torch.from_numpy(ctb_)).shape)
_, grads = torch_grads(lambda X, W, B: convt_t(X, W, B) * torch.from_numpy(ctm),
                       [ctx_, ctw_, ctb_])
write_case("gradient_convtranspose_groups",
           [helper.make_node("ConvTranspose", ["x", "w", "b"], ["c"], group=2, strides=[2, 2],
                             pads=[1, 0, 1, 0], output_padding=[1, 1], dilations=[1, 2]),
            helper.make_node("Mul", ["c", "m"], ["y"]),
            grad_node(["x", "w", "b"], [], "y", ["dx", "dw", "db"])],
           [("x", ctx_), ("w", ctw_), ("b", ctb_)],
           [("dx", grads[0]), ("dw", grads[1]), ("db", grads[2])], 13, inits=[("m", ctm)],
           domains=TRAIN)
c1x, c1w = p32(2, 3, 7), p32(3, 2, 4)
_, grads = torch_grads(lambda X, W: torch.tanh(F_.conv_transpose1d(X, W, stride=3, padding=1)),
                       [c1x, c1w])
write_case("gradient_convtranspose_1d",
           [helper.make_node("ConvTranspose", ["x", "w"], ["c"], strides=[3], pads=[1, 1]),
            helper.make_node("Tanh", ["c"], ["y"]),
            grad_node(["x", "w"], [], "y", ["dx", "dw"])],
           [("x", c1x), ("w", c1w)], [("dx", grads[0]), ("dw", grads[1])], 13, domains=TRAIN)

# Resize: nearest upsampling, bilinear both ways, bicubic, and an
# antialiased downscale, against PyTorch's interpolate.
zx = p32(2, 3, 5, 6)
resize_cases = (
    ("nearest_up", dict(scale_factor=2, mode="nearest"),
     dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
     [1, 1, 2, 2]),
    ("linear_half_pixel", dict(scale_factor=(1.5, 2), mode="bilinear", align_corners=False),
     dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), [1, 1, 1.5, 2]),
    ("linear_align_corners", dict(size=(9, 4), mode="bilinear", align_corners=True),
     dict(mode="linear", coordinate_transformation_mode="align_corners"), None),
    ("cubic", dict(size=(8, 11), mode="bicubic", align_corners=False),
     dict(mode="cubic", coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75), None),
    ("antialias_down", dict(size=(3, 4), mode="bilinear", antialias=True, align_corners=False),
     dict(mode="linear", coordinate_transformation_mode="half_pixel", antialias=1,
          exclude_outside=1), None))
for rname, targs, oattrs, scales in resize_cases:
    yr = F_.interpolate(torch.from_numpy(zx), **targs)
    rw = p32(*yr.shape)
    _, grads = torch_grads(lambda X: F_.interpolate(X, **targs) * torch.from_numpy(rw), [zx])
    ins = ["x", "", "scales"] if scales else ["x", "", "", "sizes"]
    inits = [("scales", np.array(scales, np.float32))] if scales else \
        [("sizes", np.array(yr.shape, np.int64))]
    write_case("gradient_resize_" + rname,
               [helper.make_node("Resize", ins, ["r"], **oattrs),
                helper.make_node("Mul", ["r", "w"], ["y"]),
                grad_node(["x"], [], "y", ["dx"])],
               [("x", zx)], [("dx", grads[0])], 18, inits=inits + [("w", rw)], domains=TRAIN)
# DepthToSpace (both modes) and SpaceToDepth.
dsx = p32(2, 8, 3, 4)
dsw1, dsw2 = p32(2, 2, 6, 8), p32(2, 2, 6, 8)
_, grads = torch_grads(
    lambda X: (F_.pixel_shuffle(X, 2) * torch.from_numpy(dsw1)).sum()
    + (X.reshape(2, 2, 2, 2, 3, 4).permute(0, 3, 4, 1, 5, 2).reshape(2, 2, 6, 8)
       * torch.from_numpy(dsw2)).sum()
    + (F_.pixel_unshuffle(F_.pixel_shuffle(X, 2), 2) ** 2).sum(), [dsx])
write_case("gradient_depth_space",
           [helper.make_node("DepthToSpace", ["x"], ["a"], blocksize=2, mode="CRD"),
            helper.make_node("DepthToSpace", ["x"], ["b"], blocksize=2, mode="DCR"),
            helper.make_node("SpaceToDepth", ["a"], ["c"], blocksize=2),
            helper.make_node("Mul", ["a", "w1"], ["p1"]),
            helper.make_node("Mul", ["b", "w2"], ["p2"]),
            helper.make_node("Mul", ["c", "c"], ["p3"]),
            helper.make_node("ReduceSum", ["p1"], ["s1"], keepdims=0),
            helper.make_node("ReduceSum", ["p2"], ["s2"], keepdims=0),
            helper.make_node("ReduceSum", ["p3"], ["s3"], keepdims=0),
            helper.make_node("Sum", ["s1", "s2", "s3"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", dsx)], [("dx", grads[0])], 13, inits=[("w1", dsw1), ("w2", dsw2)],
           domains=TRAIN)

# More activations, the inverse trigonometric and hyperbolic functions,
# PRelu (its slope too), CumSum and Trilu.
ax2 = p32(3, 8)
au = (np.tanh(p32(3, 8)) * 0.9).astype(np.float32)      # inside (-1, 1)
ag = (np.abs(p32(3, 8)) + 1.2).astype(np.float32)        # above 1
slope = p32(8) * 0.3
ax2[0, :4] = [-3.0, 3.0, 0.5, -0.5]                      # HardSwish's ends
_, grads = torch_grads(
    lambda X, U, V, S: F_.hardswish(X) + F_.selu(X) + F_.celu(X, 0.8) + F_.mish(X) + torch.tan(U) + torch.sinh(X) * torch.cosh(U)
    + torch.atan(X) + torch.atanh(U) + torch.asin(U) + torch.acos(U) * 3 + torch.asinh(X)
    + torch.acosh(V) + F_.prelu(X, S) + F_.threshold(X, 0.4, 0.0)
    + torch.where(X > 0.4, X, torch.zeros_like(X)) * 0
    + torch.cumsum(X, 1).flip(0).cumsum(0) + torch.triu(X, 1) * 5, [ax2, au, ag, slope])
names_ = ["hs", "se", "ce", "mi", "ta", "sh", "ch", "at", "ath", "as", "ac", "ash",
          "ach", "pr", "tr", "cs", "tu"]
write_case("gradient_activations",
           [helper.make_node("HardSwish", ["x"], ["hs"]),
            helper.make_node("Selu", ["x"], ["se"]),
            helper.make_node("Celu", ["x"], ["ce"], alpha=0.8),
            helper.make_node("Mish", ["x"], ["mi"]),
            helper.make_node("Tan", ["u"], ["ta"]),
            helper.make_node("Sinh", ["x"], ["sh0"]),
            helper.make_node("Cosh", ["u"], ["ch0"]),
            helper.make_node("Mul", ["sh0", "ch0"], ["sh"]),
            helper.make_node("Identity", ["zero"], ["ch"]),
            helper.make_node("Atan", ["x"], ["at"]),
            helper.make_node("Atanh", ["u"], ["ath"]),
            helper.make_node("Asin", ["u"], ["as"]),
            helper.make_node("Acos", ["u"], ["ac0"]),
            helper.make_node("Mul", ["ac0", "three"], ["ac"]),
            helper.make_node("Asinh", ["x"], ["ash"]),
            helper.make_node("Acosh", ["v"], ["ach"]),
            helper.make_node("PRelu", ["x", "s"], ["pr"]),
            helper.make_node("ThresholdedRelu", ["x"], ["tr"], alpha=0.4),
            helper.make_node("CumSum", ["x", "one"], ["cs0"]),
            helper.make_node("CumSum", ["cs0", "zero_i"], ["cs"], reverse=1),
            helper.make_node("Trilu", ["x", "one"], ["tu0"], upper=1),
            helper.make_node("Mul", ["tu0", "five"], ["tu"]),
            helper.make_node("Sum", names_, ["y"]),
            grad_node(["x", "u", "v", "s"], [], "y", ["dx", "du", "dv", "ds"])],
           [("x", ax2), ("u", au), ("v", ag), ("s", slope)],
           [("dx", grads[0]), ("du", grads[1]), ("dv", grads[2]), ("ds", grads[3])], 18,
           inits=[("two", np.array(2, np.float32)), ("three", np.array(3, np.float32)),
                  ("five", np.array(5, np.float32)), ("zero", np.array(0, np.float32)),
                  ("one", np.array(1, np.int64)), ("zero_i", np.array(0, np.int64))],
           domains=TRAIN)

# The recurrent ops in a model with Gradient run as their equations, so the
# gradient goes through them: against PyTorch's autograd on ONNX's
# equations (gate orders i, o, f, c and z, r, h).
def onnx_rnn_t(kind, X, W, R, B, h0, c0=None, P=None, direction="forward", lbr=0, clip=None,
               act=torch.tanh, layout=0, lens=None):
    if layout:
        X = X.transpose(0, 1)
    S, H = X.shape[0], R.shape[2]
    dirs = 2 if direction == "bidirectional" else 1
    ys, hs, cs = [], [], []
    cl = (lambda v: torch.clamp(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(dirs):
        h = h0[:, d] if layout else h0[d]
        c = None if c0 is None else (c0[:, d] if layout else c0[d])
        wb, rb = B[d][:W.shape[1]], B[d][W.shape[1]:]
        out = [None] * S
        order = range(S - 1, -1, -1) if (direction == "reverse" or d == 1) else range(S)
        for t in order:
            hp, cp = h, c
            xw = X[t] @ W[d].T + wb
            hr = h @ R[d].T
            if kind == "LSTM":
                g = xw + hr + rb
                gi, go, gf, gc = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
                if P is not None:
                    gi = gi + P[d][:H] * c
                    gf = gf + P[d][2 * H:] * c
                i, f = torch.sigmoid(cl(gi)), torch.sigmoid(cl(gf))
                c = f * c + i * torch.tanh(cl(gc))
                if P is not None:
                    go = go + P[d][H:2 * H] * c
                h = torch.sigmoid(cl(go)) * torch.tanh(c)
            elif kind == "GRU":
                z = torch.sigmoid(cl(xw[:, :H] + hr[:, :H] + rb[:H]))
                r = torch.sigmoid(cl(xw[:, H:2 * H] + hr[:, H:2 * H] + rb[H:2 * H]))
                if lbr:
                    cand = torch.tanh(cl(xw[:, 2 * H:] + r * (hr[:, 2 * H:] + rb[2 * H:])))
                else:
                    cand = torch.tanh(cl(xw[:, 2 * H:] + (r * h) @ R[d][2 * H:].T + rb[2 * H:]))
                h = (1 - z) * cand + z * h
            else:
                h = act(cl(xw + hr + rb))
            out[t] = h
            if lens is not None:
                # Past its length a sequence keeps its state and gives zeros
                # (a reverse direction, walked from the end, then starts
                # from the initial state at its last real step).
                live = torch.from_numpy(t < lens)[:, None]
                out[t] = torch.where(live, h, torch.zeros_like(h))
                h = torch.where(live, h, hp)
                c = torch.where(live, c, cp) if c is not None else None
        ys.append(torch.stack(out))
        hs.append(h)
        cs.append(c)
    Y = torch.stack(ys, 1)
    Yh = torch.stack(hs, 0)
    Yc = torch.stack(cs, 0) if kind == "LSTM" else None
    if layout:
        Y, Yh = Y.permute(2, 0, 1, 3), Yh.transpose(0, 1)
        Yc = Yc.transpose(0, 1) if Yc is not None else None
    return Y, Yh, Yc


rr_ = np.random.default_rng(16)


def r32(*shape):
    return (rr_.standard_normal(shape) * 0.5).astype(np.float32)


S_, B_, I_, H_ = 4, 2, 3, 5
lx, lw, lr, lb = r32(S_, B_, I_), r32(2, 4 * H_, I_), r32(2, 4 * H_, H_), r32(2, 8 * H_)
lh0, lc0, lp = r32(2, B_, H_), r32(2, B_, H_), r32(2, 3 * H_)
lm1, lm2, lm3 = r32(S_, 2, B_, H_), r32(2, B_, H_), r32(2, B_, H_)
_, grads = torch_grads(
    lambda X, W, R, B, h0, c0, P: sum(
        (o * torch.from_numpy(m)).sum() for o, m in
        zip(onnx_rnn_t("LSTM", X, W, R, B, h0, c0, P, "bidirectional"), (lm1, lm2, lm3))),
    [lx, lw, lr, lb, lh0, lc0, lp])
# (torch_grads sums its output: a scalar here.)
write_case("gradient_lstm_bidirectional",
           [helper.make_node("LSTM", ["x", "w", "r", "b", "", "h0", "c0", "p"], ["y", "yh", "yc"],
                             hidden_size=H_, direction="bidirectional"),
            helper.make_node("Mul", ["y", "m1"], ["t1"]),
            helper.make_node("Mul", ["yh", "m2"], ["t2"]),
            helper.make_node("Mul", ["yc", "m3"], ["t3"]),
            helper.make_node("ReduceSum", ["t1"], ["s1"], keepdims=0),
            helper.make_node("ReduceSum", ["t2"], ["s2"], keepdims=0),
            helper.make_node("ReduceSum", ["t3"], ["s3"], keepdims=0),
            helper.make_node("Sum", ["s1", "s2", "s3"], ["y_"]),
            grad_node(["x", "w", "r", "b", "h0", "c0", "p"], [], "y_",
                      ["dx", "dw", "dr", "db", "dh0", "dc0", "dp"])],
           [("x", lx), ("w", lw), ("r", lr), ("b", lb), ("h0", lh0), ("c0", lc0), ("p", lp)],
           [(n_, gd) for n_, gd in zip(["dx", "dw", "dr", "db", "dh0", "dc0", "dp"], grads)], 14,
           inits=[("m1", lm1), ("m2", lm2), ("m3", lm3)], domains=TRAIN)
gx2, gw2_, gr2, gb2, gh2 = r32(B_, S_, I_), r32(2, 3 * H_, I_), r32(2, 3 * H_, H_), r32(2, 6 * H_), \
    r32(B_, 2, H_)
gm2 = r32(B_, S_, 2, H_)
for lbr_ in (0, 1):
    _, grads = torch_grads(
        lambda X, W, R, B, h0: (onnx_rnn_t("GRU", X, W, R, B, h0, direction="bidirectional",
                                           lbr=lbr_, layout=1)[0] * torch.from_numpy(gm2)).sum(),
        [gx2, gw2_, gr2, gb2, gh2])
    write_case("gradient_gru_batch_major_lbr%d" % lbr_,
               [helper.make_node("GRU", ["x", "w", "r", "b", "", "h0"], ["y"], hidden_size=H_,
                                 direction="bidirectional", linear_before_reset=lbr_, layout=1),
                helper.make_node("Mul", ["y", "m"], ["t"]),
                helper.make_node("ReduceSum", ["t"], ["y_"], keepdims=0),
                grad_node(["x", "w", "r", "b", "h0"], [], "y_", ["dx", "dw", "dr", "db", "dh0"])],
               [("x", gx2), ("w", gw2_), ("r", gr2), ("b", gb2), ("h0", gh2)],
               [(n_, gd) for n_, gd in zip(["dx", "dw", "dr", "db", "dh0"], grads)], 14,
               inits=[("m", gm2)], domains=TRAIN)
rx3, rw3, rr3, rb3 = r32(S_, B_, I_), r32(1, H_, I_), r32(1, H_, H_), r32(1, 2 * H_)
rm3 = r32(S_, 1, B_, H_)
_, grads = torch_grads(
    lambda X, W, R, B: (onnx_rnn_t("RNN", X, W, R, B, torch.zeros(1, B_, H_), direction="reverse",
                                   clip=0.6, act=torch.relu)[0] * torch.from_numpy(rm3)).sum(),
    [rx3, rw3, rr3, rb3])
write_case("gradient_rnn_reverse_relu_clip",
           [helper.make_node("RNN", ["x", "w", "r", "b"], ["y"], hidden_size=H_,
                             direction="reverse", activations=["Relu"], clip=0.6),
            helper.make_node("Mul", ["y", "m"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["y_"], keepdims=0),
            grad_node(["x", "w", "r", "b"], [], "y_", ["dx", "dw", "dr", "db"])],
           [("x", rx3), ("w", rw3), ("r", rr3), ("b", rb3)],
           [(n_, gd) for n_, gd in zip(["dx", "dw", "dr", "db"], grads)], 14,
           inits=[("m", rm3)], domains=TRAIN)
# sequence_lens under Gradient: past its length a sequence keeps its state
# and gives zeros, in the equations the op runs as there. The reference
# first checked against the fused lowering (no Gradient): a bidirectional
# LSTM with initial states, lengths 4 and 2.
lens_ = np.array([4, 2], np.int32)
Yl, Yhl, Ycl = (o.numpy() for o in onnx_rnn_t(
    "LSTM", *(torch.from_numpy(a) for a in (lx, lw, lr, lb, lh0, lc0, lp)),
    direction="bidirectional", lens=lens_))
write_case("lstm_bidirectional_lens_reference",
           [helper.make_node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0", "p"],
                             ["y", "yh", "yc"], hidden_size=H_, direction="bidirectional")],
           [("x", lx), ("w", lw), ("r", lr), ("b", lb), ("lens", lens_), ("h0", lh0),
            ("c0", lc0), ("p", lp)], [("y", Yl), ("yh", Yhl), ("yc", Ycl)], 14)
_, grads = torch_grads(
    lambda X, W, R, B, h0, c0, P: sum(
        (o * torch.from_numpy(m)).sum() for o, m in
        zip(onnx_rnn_t("LSTM", X, W, R, B, h0, c0, P, "bidirectional", lens=lens_),
            (lm1, lm2, lm3))),
    [lx, lw, lr, lb, lh0, lc0, lp])
write_case("gradient_lstm_bidirectional_lens",
           [helper.make_node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0", "p"],
                             ["y", "yh", "yc"], hidden_size=H_, direction="bidirectional")]
           + weighted_sum([("y", "m1"), ("yh", "m2"), ("yc", "m3")], "y_")
           + [grad_node(["x", "w", "r", "b", "h0", "c0", "p"], ["lens"], "y_",
                        ["dx", "dw", "dr", "db", "dh0", "dc0", "dp"])],
           [("x", lx), ("w", lw), ("r", lr), ("b", lb), ("lens", lens_), ("h0", lh0),
            ("c0", lc0), ("p", lp)],
           [(n_, gd) for n_, gd in zip(["dx", "dw", "dr", "db", "dh0", "dc0", "dp"], grads)], 14,
           inits=[("m1", lm1), ("m2", lm2), ("m3", lm3)], domains=TRAIN)
# A reverse RNN (lengths 3 and 1) and a bidirectional batch-major GRU
# (lengths 2 and 4).
_, grads = torch_grads(
    lambda X, W, R: (onnx_rnn_t("RNN", X, W, R, torch.zeros(1, 2 * H_), torch.zeros(1, B_, H_),
                                direction="reverse", lens=np.array([3, 1]))[0] *
                     torch.from_numpy(rm3)).sum(), [rx3, rw3, rr3])
write_case("gradient_rnn_reverse_lens",
           [helper.make_node("RNN", ["x", "w", "r", "", "lens"], ["y"], hidden_size=H_,
                             direction="reverse"),
            helper.make_node("Mul", ["y", "m"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["y_"], keepdims=0),
            grad_node(["x", "w", "r"], ["lens"], "y_", ["dx", "dw", "dr"])],
           [("x", rx3), ("w", rw3), ("r", rr3), ("lens", np.array([3, 1], np.int32))],
           [(n_, gd) for n_, gd in zip(["dx", "dw", "dr"], grads)], 14,
           inits=[("m", rm3)], domains=TRAIN)
_, grads = torch_grads(
    lambda X, W, R, B, h0: (onnx_rnn_t("GRU", X, W, R, B, h0, direction="bidirectional",
                                       layout=1, lens=np.array([2, 4]))[0] *
                            torch.from_numpy(gm2)).sum(),
    [gx2, gw2_, gr2, gb2, gh2])
write_case("gradient_gru_batch_major_lens",
           [helper.make_node("GRU", ["x", "w", "r", "b", "lens", "h0"], ["y"], hidden_size=H_,
                             direction="bidirectional", layout=1),
            helper.make_node("Mul", ["y", "m"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["y_"], keepdims=0),
            grad_node(["x", "w", "r", "b", "h0"], ["lens"], "y_", ["dx", "dw", "dr", "db", "dh0"])],
           [("x", gx2), ("w", gw2_), ("r", gr2), ("b", gb2), ("lens", np.array([2, 4], np.int32)),
            ("h0", gh2)],
           [(n_, gd) for n_, gd in zip(["dx", "dw", "dr", "db", "dh0"], grads)], 14,
           inits=[("m", gm2)], domains=TRAIN)

# Einsum: batched products, a transpose, a label summed within one operand,
# an ellipsis.
ea_, eb_, ec_ = p32(2, 3, 4), p32(2, 4, 5), p32(3, 2, 6)
ew1, ew2, ew3 = p32(2, 3, 5), p32(2, 3), p32(6, 2)
_, grads = torch_grads(
    lambda A, B, C: (torch.einsum("bij,bjk->bik", A, B) * torch.from_numpy(ew1)).sum()
    + (torch.einsum("bij->bi", A) * torch.from_numpy(ew2)).sum()
    + (torch.einsum("...ij->...ji", C) ** 2).sum() + (torch.einsum("ijk->kj", C)
                                                       * torch.from_numpy(ew3)).sum(),
    [ea_, eb_, ec_])
write_case("gradient_einsum",
           [helper.make_node("Einsum", ["a", "b"], ["e1"], equation="bij,bjk->bik"),
            helper.make_node("Einsum", ["a"], ["e2"], equation="bij->bi"),
            helper.make_node("Einsum", ["c"], ["e3"], equation="...ij->...ji"),
            helper.make_node("Einsum", ["c"], ["e4"], equation="ijk->kj")]
           + weighted_sum([("e1", "w1"), ("e2", "w2"), ("e3", "e3"), ("e4", "w3")])
           + [grad_node(["a", "b", "c"], [], "y", ["da", "db", "dc"])],
           [("a", ea_), ("b", eb_), ("c", ec_)],
           [("da", grads[0]), ("db", grads[1]), ("dc", grads[2])], 12,
           inits=[("w1", ew1), ("w2", ew2), ("w3", ew3)], domains=TRAIN)
# TopK's values (largest and smallest, along a middle axis).
tkx = p32(3, 7, 4)
tkw1, tkw2 = p32(3, 3, 4), p32(3, 7, 2)
_, grads = torch_grads(
    lambda X: (torch.topk(X, 3, 1).values * torch.from_numpy(tkw1)).sum()
    + (torch.topk(X, 2, 2, largest=False).values * torch.from_numpy(tkw2)).sum(), [tkx])
write_case("gradient_topk",
           [helper.make_node("TopK", ["x", "k3"], ["v1", "i1"], axis=1),
            helper.make_node("TopK", ["x", "k2"], ["v2", "i2"], axis=-1, largest=0),
            helper.make_node("Mul", ["v1", "w1"], ["p1"]),
            helper.make_node("Mul", ["v2", "w2"], ["p2"]),
            helper.make_node("ReduceSum", ["p1"], ["s1"], keepdims=0),
            helper.make_node("ReduceSum", ["p2"], ["s2"], keepdims=0),
            helper.make_node("Add", ["s1", "s2"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", tkx)], [("dx", grads[0])], 13,
           inits=[("w1", tkw1), ("w2", tkw2), ("k3", np.array([3], np.int64)),
                  ("k2", np.array([2], np.int64))], domains=TRAIN)
write_case("refuse_gradient_pad_reflect_too_wide",
           [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect"),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", p32(2, 3))], [("dx", (TensorProto.FLOAT, [2, 3]))], 13,
           inits=[("pads", np.array([0, 0, 0, 5], np.int64))], domains=TRAIN,
           expect="(Pad): reflect padding of (0, 5) is wider than dim 1 of size 3 allows (at "
                  "most 2)")
# A grouped Conv's and ConvTranspose's weight stored as initializers (the
# grouped convolutions then run with them as constants; the weight's
# gradient is one product per kernel tap).
iw_x, iw_w, iw_b = p32(2, 6, 7, 8), p32(9, 2, 3, 2), p32(9)
itx, itw = p32(2, 4, 5, 5), p32(4, 3, 2, 3)
# (y linear in the ConvTranspose's weight: the bfloat8_b weights of the
# bfp8 mode then do not enter its gradient.)
itm = p32(2, 6, 10, 11)
_, grads = torch_grads(
    lambda W, B, TW: (torch.tanh(F_.conv2d(torch.from_numpy(iw_x), W, B, stride=(2, 1),
                                           padding=(1, 0), dilation=(1, 2), groups=3))).sum()
    + (F_.conv_transpose2d(torch.from_numpy(itx), TW, stride=2, groups=2)
       * torch.from_numpy(itm)).sum(),
    [iw_w, iw_b, itw])
write_case("gradient_grouped_weights_initializers",
           [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=3, strides=[2, 1],
                             pads=[1, 0, 1, 0], dilations=[1, 2]),
            helper.make_node("Tanh", ["c"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["s1"], keepdims=0),
            helper.make_node("ConvTranspose", ["tx", "tw"], ["ct"], group=2, strides=[2, 2]),
            helper.make_node("Mul", ["ct", "m"], ["q"]),
            helper.make_node("ReduceSum", ["q"], ["s2"], keepdims=0),
            helper.make_node("Add", ["s1", "s2"], ["y"]),
            grad_node(["w", "b", "tw"], ["x", "tx"], "y", ["dw", "db", "dtw"])],
           [("x", iw_x), ("tx", itx)], [("dw", grads[0]), ("db", grads[1]), ("dtw", grads[2])], 13,
           inits=[("w", iw_w), ("b", iw_b), ("tw", itw), ("m", itm)], domains=TRAIN)

# The losses a training graph ends in: SoftmaxCrossEntropyLoss and
# NegativeLogLikelihoodLoss, with and without class weights and
# ignore_index, each reduction, and a K-dimensional case.
lx_ = p32(4, 5)
lx3 = p32(2, 3, 4, 2)
lt_ = np.array([1, 0, 4, 2], np.int64)
lt3 = np.array([[[0, 2], [1, 1], [2, 0], [1, 2]], [[2, 2], [0, 1], [1, 0], [0, 0]]], np.int64)
lw_ = (np.abs(p32(5)) + 0.2).astype(np.float32)
lw3 = (np.abs(p32(3)) + 0.2).astype(np.float32)
lg_ = p32(4)
lossc = [
    ("sce_mean", "SoftmaxCrossEntropyLoss", lx_, lt_, None, {}, "mean"),
    ("sce_weight_ignore", "SoftmaxCrossEntropyLoss", lx_, lt_, lw_, {"ignore_index": 0}, "mean"),
    ("sce_none_kd", "SoftmaxCrossEntropyLoss", lx3, lt3, lw3, {}, "none"),
    ("nll_sum_ignore", "NegativeLogLikelihoodLoss", lx_, lt_, None, {"ignore_index": 4}, "sum"),
    ("nll_mean_weight_kd", "NegativeLogLikelihoodLoss", lx3, lt3, lw3, {"ignore_index": 1},
     "mean"),
]
# With class weights, their gradient too (PyTorch's losses do not
# differentiate their weights: the loss written out, checked against them).
def loss_written(X, T, W, op, ii, red):
    lp = F_.log_softmax(X, 1) if op[0] == "S" else X
    picked = lp.gather(1, T.clamp(0, X.shape[1] - 1).unsqueeze(1)).squeeze(1)
    wp = W[T.clamp(0, X.shape[1] - 1)] * (T != ii)
    out = -wp * picked
    return out if red == "none" else out.sum() if red == "sum" else out.sum() / wp.sum()


for lname, lop, X_, T_, W_, kw, red_ in lossc:
    def loss_t(X, W=None):
        f = F_.cross_entropy if lop[0] == "S" else F_.nll_loss
        args = dict(weight=None if W is None else W.detach(), reduction=red_)
        if "ignore_index" in kw:
            args["ignore_index"] = kw["ignore_index"]
        out = f(X, torch.from_numpy(T_), **args)
        if W is not None:
            mine = loss_written(X, torch.from_numpy(T_), W, lop, kw.get("ignore_index", -100),
                                red_)
            assert torch.allclose(mine, out, atol=1e-6), lname
            out = mine
        return out * torch.from_numpy(p32(*out.shape)) if red_ == "none" else out
    gp_state = gp_.bit_generator.state
    _, grads = torch_grads(loss_t, [X_] if W_ is None else [X_, W_])
    gp_.bit_generator.state = gp_state
    mw_ = p32(*T_.shape) if red_ == "none" else None
    nodes = [helper.make_node(lop, ["x", "t"] + (["w"] if W_ is not None else []), ["l"],
                              reduction=red_, **kw)]
    if red_ == "none":
        nodes += [helper.make_node("Mul", ["l", "m"], ["lm"]),
                  helper.make_node("ReduceSum", ["lm"], ["y"], keepdims=0)]
    else:
        nodes += [helper.make_node("Identity", ["l"], ["y"])]
    if W_ is None:
        nodes += [grad_node(["x"], ["t"], "y", ["dx"])]
        ins, outs = [("x", X_), ("t", T_)], [("dx", grads[0])]
    else:
        nodes += [grad_node(["x", "w"], ["t"], "y", ["dx", "dw"])]
        ins, outs = [("x", X_), ("w", W_), ("t", T_)], [("dx", grads[0]), ("dw", grads[1])]
    inits = [("m", mw_)] if mw_ is not None else []
    write_case("gradient_loss_" + lname, nodes, ins, outs, 13, inits=inits, domains=TRAIN)
# An LSTM beside a Gradient, but not on its y's path: it keeps its fused
# lowering (and its sequence_lens), and both outputs are right.
olx, olw, olr = r32(S_, B_, I_), r32(1, 4 * H_, I_), r32(1, 4 * H_, H_)
ola = r32(3)
oly = onnx_rnn_t("LSTM", torch.from_numpy(olx), torch.from_numpy(olw), torch.from_numpy(olr),
                 torch.zeros(1, 8 * H_), torch.zeros(1, B_, H_), torch.zeros(1, B_, H_))[0]
oly = oly.numpy().copy()
oly[3:, :, 1] = 0  # the second sequence is 3 steps long
write_case("gradient_beside_lstm_with_lens",
           [helper.make_node("LSTM", ["x", "w", "r", "", "lens"], ["y"], hidden_size=H_),
            helper.make_node("Mul", ["a", "a"], ["aa"]),
            grad_node(["a"], [], "aa", ["da"])],
           [("x", olx), ("w", olw), ("r", olr), ("lens", np.array([4, 3], np.int32)),
            ("a", ola)], [("y", oly), ("da", 2 * ola)], 14, domains=TRAIN)

# NonMaxSuppression on boxes computed at run time, compiled with
# pad_dynamic: the output has every row the op could select (batch x
# classes x min(max_output_boxes_per_class, boxes)), the selected ones in
# ONNX's order, then rows of -1. Integer corners and scores k/64 keep the
# bf16 modes' selection exact; the IoU threshold is chosen far from every
# pair's IoU so that their rounding cannot change a decision.
nm_ = np.random.default_rng(17)


def nms_padded(boxes, scores, max_out, iou_thr, score_thr, center=False):
    b = boxes.astype(np.float64)
    if center:
        b = np.stack([b[..., 1] - b[..., 3] / 2, b[..., 0] - b[..., 2] / 2,
                      b[..., 1] + b[..., 3] / 2, b[..., 0] + b[..., 2] / 2], -1)
    sel = nms_np(b, scores, max_out, iou_thr, score_thr)
    rows = boxes.shape[0] * scores.shape[1] * min(max_out, boxes.shape[1])
    out = np.full((rows, 3), -1, np.int64)
    out[:len(sel)] = sel
    return out


def nms_ious(boxes):
    ious = []
    for b in range(boxes.shape[0]):
        c = np.concatenate([np.minimum(boxes[b, :, :2], boxes[b, :, 2:]),
                            np.maximum(boxes[b, :, :2], boxes[b, :, 2:])], 1)
        for i in range(len(c)):
            for j in range(i):
                h = min(c[i, 2], c[j, 2]) - max(c[i, 0], c[j, 0])
                w = min(c[i, 3], c[j, 3]) - max(c[i, 1], c[j, 1])
                if h > 0 and w > 0:
                    ai = (c[i, 2] - c[i, 0]) * (c[i, 3] - c[i, 1])
                    aj = (c[j, 2] - c[j, 0]) * (c[j, 3] - c[j, 1])
                    ious.append(h * w / (ai + aj - h * w))
    return np.array(ious)


def nms_threshold(boxes, near):
    """The IoU threshold nearest `near` at least 0.04 from every pair's IoU."""
    ious = nms_ious(boxes)
    for d in np.arange(0, 0.3, 0.01):
        for t in (near + d, near - d):
            if np.all(np.abs(ious - t) > 0.04):
                return np.float32(t)
    raise ValueError("no threshold")


def nms_data(batches, classes, count, span=24):
    lo = nm_.integers(0, 40, (batches, count, 2))
    size = nm_.integers(2, span, (batches, count, 2))
    boxes = np.concatenate([lo, lo + size], -1).astype(np.float32)
    flip = nm_.random((batches, count)) < 0.3  # some given by the other diagonal
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = np.stack([nm_.permutation(np.arange(1, count + 1))
                       for _ in range(batches * classes)]).reshape(batches, classes, count)
    return boxes, (scores / 64.0).astype(np.float32)


# Two batch entries, three classes; boxes through a Relu (computed at run
# time); a score threshold that leaves some classes short.
nmb, nms_s = nms_data(2, 3, 14)
thr = nms_threshold(nmb, 0.3)
write_case("padded_nms_runtime_boxes",
           [helper.make_node("Relu", ["b"], ["boxes"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s", "m", "iou", "sthr"], ["sel"])],
           [("b", nmb), ("s", nms_s)],
           [("sel", nms_padded(nmb, nms_s, 6, thr, 0.14))], 11,
           inits=[("m", np.array([6], np.int64)), ("iou", np.array([thr], np.float32)),
                  ("sthr", np.array([0.14], np.float32))])
# Center-point boxes, no score threshold, max_output_boxes_per_class above
# the box count (every box a round), scores computed at run time.
cb, cs = nms_data(1, 2, 9)
cc = np.concatenate([(cb[..., 1::-1] + cb[..., 3:1:-1]) / 2,
                     np.abs(cb[..., 3:1:-1] - cb[..., 1::-1])], -1).astype(np.float32)
write_case("padded_nms_center_runtime_scores",
           [helper.make_node("Identity", ["s0"], ["s"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s", "m", "iou"], ["sel"],
                             center_point_box=1)],
           [("boxes", cc), ("s0", cs)],
           [("sel", nms_padded(cc, cs, 100, nms_threshold(cb, 0.5), -np.inf, center=True))], 11,
           inits=[("m", np.array([100], np.int64)),
                  ("iou", np.array([nms_threshold(cb, 0.5)], np.float32))])
# A detector's post-processing on the padded selection: the selected box
# indices (a Gather of column 2, padded like the rows), then the boxes they
# pick (a Gather of padded indices: padding, NaN, where they were padding).
nsel = nms_padded(nmb, nms_s, 6, thr, 0.14)  # classes left short: rows of -1
nidx = nsel[:, 2]
npick = np.where(nidx[:, None] < 0, np.nan, nmb[0][np.maximum(nidx, 0)]).astype(np.float32)
assert (nidx < 0).any()
write_case("padded_nms_then_gathers",
           [helper.make_node("NonMaxSuppression", ["boxes", "s", "m", "iou", "sthr"], ["sel"]),
            helper.make_node("Gather", ["sel", "col"], ["idx"], axis=1),
            helper.make_node("Gather", ["b0", "idx"], ["picked"], axis=0)],
           [("boxes", nmb), ("s", nms_s)], [("idx", nidx), ("picked", npick)], 11,
           inits=[("m", np.array([6], np.int64)), ("iou", np.array([thr], np.float32)),
                  ("sthr", np.array([0.14], np.float32)), ("col", np.array(2, np.int64)),
                  ("b0", nmb[0])])
write_case("refuse_padded_nms_read",
           [helper.make_node("NonMaxSuppression", ["boxes", "s", "m"], ["sel"]),
            helper.make_node("Tile", ["sel", "reps"], ["both"], name="both")],
           [("boxes", nmb), ("s", nms_s)], [("both", (TensorProto.INT64, [60, 3]))], 11,
           inits=[("m", np.array([5], np.int64)), ("reps", np.array([2, 1], np.int64))],
           expect="node 'both' (Tile): input 0 ('sel') is padded (its entries past the "
                  "results along dim 0 are padding: NaN, -1 or false by type), and Tile is "
                  "not among the ops that keep padding apart ('lightmetal compile --help' lists "
                  "them)")
# Many picks from one run-time table: 100 clusters of 3 boxes (IoUs within a
# cluster 0.68 and 0.82, none across), so each cluster keeps one and the
# output ring of the packing turns over; max_output_boxes_per_class above
# the box count. Class 0's scores are distinct (exact in bfloat16), class
# 1's tie often (-0 and +0 among them) and hold NaNs, which never take part.
nk_ = np.random.default_rng(19)  # its own: the cases around keep their data
corner = np.array([[0, 0], [1, 0], [0, 1]], np.float32)
grid = np.array([[q // 10 * 24, q % 10 * 24] for q in range(100)], np.float32)
lo = (grid[:, None, :] + corner[None, :, :]).reshape(300, 2)
many = np.concatenate([lo, lo + 10], 1)[nk_.permutation(300)][None]
distinct = np.array([(128 + k % 128) * 2.0 ** (k // 128 - 10) for k in range(300)])
ties = nk_.choice(np.array([-0.0, 0.0, 0.5, -1.0, np.nan]), 300)
many_s = np.stack([nk_.permutation(distinct), ties]).astype(np.float32)[None]
write_case("padded_nms_many_picks",
           [helper.make_node("Relu", ["b"], ["boxes"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s", "m", "iou"], ["sel"])],
           [("b", many), ("s", many_s)],
           [("sel", nms_padded(many, many_s, 6000, 0.5, -np.inf))], 11,
           inits=[("m", np.array([6000], np.int64)), ("iou", np.array([0.5], np.float32))])
# No max_output_boxes_per_class: nothing is selected, whatever the boxes.
write_case("nms_runtime_boxes_no_max",
           [helper.make_node("Relu", ["b"], ["boxes"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s"], ["sel"])],
           [("b", nmb), ("s", nms_s)], [("sel", np.zeros((0, 3), np.int64))], 11)

# LRN: the window's sum of squares is a product with a band along the
# channels, so its gradient goes back through the band's transpose. The
# forward written with ONNX's window (floor((size - 1) / 2) channels
# before, the rest after: asymmetric for an even size), PyTorch's autograd
# the reference.


def lrn_t(X, size, alpha, beta, bias):
    lo = (size - 1) // 2
    sq = (X * X).movedim(1, -1)
    sq = F_.pad(sq, (lo, size - 1 - lo))
    s = sq.unfold(-1, size, 1).sum(-1).movedim(-1, 1)
    return X / (bias + alpha / size * s) ** beta


for lname, lshape, lsize, lab in (("4d_size3", (2, 6, 3, 4), 3, (0.3, 0.75, 1.0)),
                                  ("3d_size4", (2, 7, 5), 4, (0.5, 0.6, 2.0)),
                                  ("4d_size5_channels3", (1, 3, 4, 4), 5, (1e-2, 0.9, 0.5))):
    lx_ = p32(*lshape)
    lwt = p32(*lshape)
    _, grads = torch_grads(lambda X: lrn_t(X, lsize, *lab) * torch.from_numpy(lwt), [lx_])
    write_case("gradient_lrn_" + lname,
               [helper.make_node("LRN", ["x"], ["l"], size=lsize, alpha=lab[0], beta=lab[1],
                                 bias=lab[2]),
                helper.make_node("Mul", ["l", "w"], ["y"]),
                grad_node(["x"], ["w"], "y", ["dx"])],
               [("x", lx_), ("w", lwt)], [("dx", grads[0])], 13, domains=TRAIN)
# LpNormalization (p 1 and 2) and MeanVarianceNormalization against
# PyTorch's autograd.
for lp_, lax_ in ((2, 1), (1, -1)):
    lpx = p32(3, 4, 5)
    lpw = p32(3, 4, 5)
    _, grads = torch_grads(
        lambda X: X / X.abs().pow(lp_).sum(lax_, keepdim=True).pow(1.0 / lp_) *
        torch.from_numpy(lpw), [lpx])
    write_case("gradient_lpnorm_p%d" % lp_,
               [helper.make_node("LpNormalization", ["x"], ["l"], axis=lax_, p=lp_),
                helper.make_node("Mul", ["l", "w"], ["y"]),
                grad_node(["x"], ["w"], "y", ["dx"])],
               [("x", lpx), ("w", lpw)], [("dx", grads[0])], 13, domains=TRAIN)
mvx, mvw = p32(2, 3, 4, 5), p32(2, 3, 4, 5)
for maxes in ((0, 2, 3), (1,)):
    def mvn_t(X, axes=maxes):
        mu = X.mean(axes, keepdim=True)
        return (X - mu) / torch.sqrt(((X - mu) ** 2).mean(axes, keepdim=True) + 1e-9)
    _, grads = torch_grads(lambda X: mvn_t(X) * torch.from_numpy(mvw), [mvx])
    write_case("gradient_mvn_axes" + "".join(map(str, maxes)),
               [helper.make_node("MeanVarianceNormalization", ["x"], ["l"], axes=list(maxes)),
                helper.make_node("Mul", ["l", "w"], ["y"]),
                grad_node(["x"], ["w"], "y", ["dx"])],
               [("x", mvx), ("w", mvw)], [("dx", grads[0])], 13, domains=TRAIN)
# Einsum operands with a repeated label (a diagonal): the gradient over the
# distinct labels, put back on the diagonal.
da_, db_, dc_, dd_ = p32(4, 4), p32(3, 3, 5), p32(5, 2), p32(3, 2, 3)
dw1, dw3, dw4 = p32(4), p32(3, 2), p32(2)
_, grads = torch_grads(
    lambda A, B, C, D: (torch.einsum("ii->i", A) * torch.from_numpy(dw1)).sum()
    + 3 * torch.einsum("ii->", A)
    + (torch.einsum("iij,jk->ik", B, C) * torch.from_numpy(dw3)).sum()
    + (torch.einsum("iji->j", D) * torch.from_numpy(dw4)).sum(),
    [da_, db_, dc_, dd_])
write_case("gradient_einsum_diagonal",
           [helper.make_node("Einsum", ["a"], ["e1"], equation="ii->i"),
            helper.make_node("Einsum", ["a"], ["e2"], equation="ii->"),
            helper.make_node("Einsum", ["b", "c"], ["e3"], equation="iij,jk->ik"),
            helper.make_node("Einsum", ["d"], ["e4"], equation="iji->j"),
            helper.make_node("Mul", ["e2", "three"], ["p2"])]
           + weighted_sum([("e1", "w1"), ("p2", None), ("e3", "w3"), ("e4", "w4")])
           + [grad_node(["a", "b", "c", "d"], [], "y", ["da", "db", "dc", "dd"])],
           [("a", da_), ("b", db_), ("c", dc_), ("d", dd_)],
           [(n_, gd) for n_, gd in zip(["da", "db", "dc", "dd"], grads)], 12,
           inits=[("w1", dw1), ("three", np.float32(3)), ("w3", dw3), ("w4", dw4)],
           domains=TRAIN)
# TopK with k over 64 (the k best of each row in one heap).
tkv = np.concatenate([np.arange(256), 256 + 2 * np.arange(44)])  # exact in bfloat16
tkx = np.stack([nm_.permutation(tkv) for _ in range(2)]).astype(np.float32) / 8
tki = np.argsort(-tkx, axis=1, kind="stable")[:, :100]
write_case("topk_k100",
           [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
           [("x", tkx)], [("v", np.take_along_axis(tkx, tki, 1)), ("i", tki.astype(np.int64))], 11,
           inits=[("k", np.array([100], np.int64))])
# The padded forms' limits: NMS's overlap table (batch x boxes x boxes) and
# packing table ((batch x classes)^2 x K), each at most 2^26 entries; a
# masked loop's scan output of a type with no padding value.
write_case("refuse_padded_nms_overlap_table",
           [helper.make_node("NonMaxSuppression", ["boxes", "s", "m"], ["sel"])],
           [("boxes", np.zeros((2, 8193, 4), np.float32)),
            ("s", np.zeros((2, 1, 8193), np.float32))],
           [("sel", (TensorProto.INT64, [2, 3]))], 11, inits=[("m", np.array([1], np.int64))],
           expect="with run-time boxes, 2 batch entries of 8193 boxes make a table of overlaps "
                  "over 134217728 entries (batch entries x boxes x boxes; more boxes are compared "
                  "by blocks for one batch entry of one class only, given 2 x 1): compile with "
                  "--graph-outputs")
# More boxes than a whole table of overlaps takes (12000: 144M pairs), one
# batch entry and class: compared a block at a time, each block's boxes
# against the boxes kept from earlier blocks, then among themselves.
# Against greedy NMS in float64, with an IoU threshold 1e-5 from every
# pair's IoU; two limits on the picks: 150 (fewer than are kept) and every
# box (rows of -1 after the picks). Selections depend on the scores' and
# the IoUs' precision, so the case is float32 only (_fp32).
def nms_greedy(c, scores, max_out, iou_thr, score_thr):
    """c: [n, 4] corners (y1, x1, y2, x2), float64; one class."""
    area = (c[:, 2] - c[:, 0]) * (c[:, 3] - c[:, 1])
    order = sorted(np.nonzero(scores > score_thr)[0], key=lambda i: (-scores[i], i))
    out, gone = [], np.zeros(len(c), bool)
    for i in order:
        if gone[i]:
            continue
        out.append(i)
        if len(out) == max_out:
            break
        h = np.minimum(c[i, 2], c[:, 2]) - np.maximum(c[i, 0], c[:, 0])
        w = np.minimum(c[i, 3], c[:, 3]) - np.maximum(c[i, 1], c[:, 1])
        inter = np.where((h > 0) & (w > 0), h * w, 0.0)
        iou = inter / (area[i] + area - inter)
        gone |= (iou > iou_thr) & (area > 0) & (area[i] > 0)
    return out


nbk = np.random.default_rng(23)
nbk_n = 12000
nbk_lo = nbk.integers(0, 350, (nbk_n, 2))
nbk_boxes = np.concatenate([nbk_lo, nbk_lo + nbk.integers(4, 41, (nbk_n, 2))], 1).astype(np.float64)
nbk_s = ((nbk.permutation(nbk_n) + 1) / 16384.0).astype(np.float32)
nbk_area = (nbk_boxes[:, 2] - nbk_boxes[:, 0]) * (nbk_boxes[:, 3] - nbk_boxes[:, 1])
nbk_ious = []
for r in range(0, nbk_n, 500):
    c = nbk_boxes[r:r + 500, None, :]
    h = np.minimum(c[..., 2], nbk_boxes[None, :, 2]) - np.maximum(c[..., 0], nbk_boxes[None, :, 0])
    w = np.minimum(c[..., 3], nbk_boxes[None, :, 3]) - np.maximum(c[..., 1], nbk_boxes[None, :, 1])
    inter = np.where((h > 0) & (w > 0), h * w, 0.0)
    iou = inter / (nbk_area[r:r + 500, None] + nbk_area[None, :] - inter)
    nbk_ious.append(np.unique(iou[(iou > 0.4) & (iou < 0.6)]))
nbk_ious = np.unique(np.concatenate(nbk_ious))
nbk_thr = next(t for t in np.arange(0.5, 0.6, 1e-4)
               if np.abs(nbk_ious - np.float32(t)).min() > 1e-5)
nbk_thr = np.float32(nbk_thr)


def nbk_rows(max_out):
    kept = nms_greedy(nbk_boxes, nbk_s, max_out, float(nbk_thr), 0.1)
    out = np.full((min(max_out, nbk_n), 3), -1, np.int64)
    out[:len(kept), 0] = out[:len(kept), 1] = 0
    out[:len(kept), 2] = kept
    return out


write_case("padded_nms_blocked_fp32",
           [helper.make_node("Identity", ["b"], ["boxes"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s", "m150", "iou", "sthr"], ["top"]),
            helper.make_node("NonMaxSuppression", ["boxes", "s", "mall", "iou", "sthr"], ["all"])],
           [("b", nbk_boxes.astype(np.float32)[None]), ("s", nbk_s[None, None])],
           [("top", nbk_rows(150)), ("all", nbk_rows(nbk_n))], 11,
           inits=[("m150", np.array([150], np.int64)), ("mall", np.array([nbk_n], np.int64)),
                  ("iou", np.array([nbk_thr], np.float32)), ("sthr", np.array([0.1], np.float32))])
# More boxes than TopK sorts at once (36000: two rounds) and than the pairs
# allow when every selected box is read, with no limit on the picks (as
# torchvision exports its NMS); the model reads the first 100 picks (a Slice
# after the index column), so only those are kept and compared: exact
# against greedy NMS in float64 (every IoU of a kept box at least 1e-5 from
# the threshold). Read whole, 50000 boxes are refused by their pairs.
nsl = np.random.default_rng(29)
nsl_n = 36000
nsl_lo = nsl.integers(0, 700, (nsl_n, 2))
nsl_boxes = np.concatenate([nsl_lo, nsl_lo + nsl.integers(4, 41, (nsl_n, 2))], 1).astype(np.float64)
nsl_s = ((nsl.permutation(nsl_n) + 1) / 65536.0).astype(np.float32)


def nsl_margin(thr):
    """The closest any IoU of the first 100 kept boxes comes to thr."""
    kept = nms_greedy(nsl_boxes, nsl_s, 100, thr, 0.05)
    c = nsl_boxes
    area = (c[:, 2] - c[:, 0]) * (c[:, 3] - c[:, 1])
    worst = np.inf
    for i in kept:
        h = np.minimum(c[i, 2], c[:, 2]) - np.maximum(c[i, 0], c[:, 0])
        w = np.minimum(c[i, 3], c[:, 3]) - np.maximum(c[i, 1], c[:, 1])
        inter = np.where((h > 0) & (w > 0), h * w, 0.0)
        worst = min(worst, np.abs(inter / (area[i] + area - inter) - thr).min())
    return kept, worst


nsl_thr = next(t for t in np.arange(0.3, 0.4, 1e-3).astype(np.float32)
               if nsl_margin(float(t))[1] > 1e-5)
nsl_kept = np.array(nsl_margin(float(nsl_thr))[0], np.int64)
assert len(nsl_kept) == 100
nsl_nodes = [helper.make_node("NonMaxSuppression", ["b", "s", "m", "iou", "sthr"], ["sel"]),
             helper.make_node("Gather", ["sel", "col"], ["idx2"], axis=1),
             helper.make_node("Squeeze", ["idx2", "one"], ["idx"]),
             helper.make_node("Slice", ["idx", "zero", "hundred"], ["first"]),
             helper.make_node("Gather", ["b0", "first"], ["picked"], axis=0)]
nsl_inits = [("m", np.array([2 ** 63 - 1], np.int64)), ("iou", np.array([nsl_thr], np.float32)),
             ("sthr", np.array([0.05], np.float32)), ("col", np.array([2], np.int64)),
             ("one", np.array([1], np.int64)), ("zero", np.array([0], np.int64)),
             ("hundred", np.array([100], np.int64)), ("b0", nsl_boxes.astype(np.float32))]
write_case("padded_nms_sliced_fp32", nsl_nodes,
           [("b", nsl_boxes.astype(np.float32)[None]), ("s", nsl_s[None, None])],
           [("first", nsl_kept), ("picked", nsl_boxes[nsl_kept].astype(np.float32))], 11,
           inits=nsl_inits)
write_case("refuse_padded_nms_pairs", nsl_nodes[:1],
           [("b", np.zeros((1, 50000, 4), np.float32)), ("s", np.zeros((1, 1, 50000), np.float32))],
           [("sel", (TensorProto.INT64, [50000, 3]))], 11, inits=nsl_inits[:3],
           expect="with run-time boxes, 50000 boxes of which the model reads the first 50000 "
                  "selected compare ")
# TopK's rounds meeting inside a tie: 33000 boxes, scores equal in threes;
# the best 32766 one box (each suppresses the rest: one kept), the next
# three (positions 32766 to 32768, across the first round's end) and the
# rest apart, so every one of them is kept, in score order and then index
# order. The model reads the first 300 picks (of at most 235).
nsr = np.random.default_rng(31)
nsr_n, nsr_top = 33000, 32766
nsr_rank = nsr.permutation(nsr_n)  # box i's place in score order
nsr_s = ((nsr_n - nsr_rank // 3) / 65536.0).astype(np.float32)
nsr_apart = np.array([[100 + 20 * (q // 30), 100 + 20 * (q % 30)] for q in range(nsr_n - nsr_top)])
nsr_lo = np.zeros((nsr_n, 2))
nsr_lo[nsr_rank >= nsr_top] = nsr_apart[nsr_rank[nsr_rank >= nsr_top] - nsr_top]
nsr_boxes = np.concatenate([nsr_lo, nsr_lo + 10], 1)
nsr_kept = np.array(nms_greedy(nsr_boxes, nsr_s, 300, 0.5, 0.0), np.int64)
assert len(nsr_kept) == nsr_n - nsr_top + 1
nsr_first = np.full(300, -1, np.int64)
nsr_first[:len(nsr_kept)] = nsr_kept
write_case("padded_nms_sort_rounds_fp32", nsl_nodes[:4],
           [("b", nsr_boxes.astype(np.float32)[None]), ("s", nsr_s[None, None])],
           [("first", nsr_first)], 11,
           inits=nsl_inits[:2] + [("sthr", np.array([0.0], np.float32))] + nsl_inits[3:5] +
           [("zero", np.array([0], np.int64)), ("hundred", np.array([300], np.int64))])
# The first 20 picks read, and how many there are (Size of the selection,
# data): the count reads the record of picks whole, so every kept box is
# kept, not only the first 20.
nbk_all = nbk_rows(nbk_n)
nbk_count = int((nbk_all[:, 0] >= 0).sum())
write_case("padded_nms_sliced_counted_fp32",
           [helper.make_node("NonMaxSuppression", ["b", "s", "mall", "iou", "sthr"], ["sel"]),
            helper.make_node("Slice", ["sel", "zero", "twenty"], ["first"]),
            helper.make_node("Size", ["sel"], ["elements"])],
           [("b", nbk_boxes.astype(np.float32)[None]), ("s", nbk_s[None, None])],
           [("first", nbk_all[:20]), ("elements", np.array(3 * nbk_count, np.int64))], 11,
           inits=[("mall", np.array([nbk_n], np.int64)), ("iou", np.array([nbk_thr], np.float32)),
                  ("sthr", np.array([0.1], np.float32)), ("zero", np.array([0], np.int64)),
                  ("twenty", np.array([20], np.int64))])
# A detector's per-level selection as torchvision exports it (RetinaNet,
# FCOS): the scores above a threshold (GatherND of the NonZero), their
# places (a second NonZero, split and squeezed), k = min(K, how many) and
# the places of the best k. Read as a TopK of the scores masked (the padded
# selection is then never made). Scores in steps of 1/64 (ties in index
# order), with NaN and infinities; `a` selects more than K = 300, `b`
# fewer (the rest padding). `a` comes as [250, 80] and is flattened (as
# torchvision flattens [1, anchors, classes]): the threshold then reads
# that, stored in full tiles.
tsl = np.random.default_rng(41)
tsl_a = (tsl.integers(0, 64, 20000) / 64).astype(np.float32)
tsl_a[[7, 700, 7000]] = [np.nan, np.inf, -np.inf]
tsl_b = np.where(tsl.random(20000) < 0.01, tsl_a, np.float32(0.25)).astype(np.float32)


def tsl_nodes(x):
    p = x + "_"
    return [helper.make_node("Greater", [x, "thr"], [p + "keep"]),
            helper.make_node("NonZero", [p + "keep"], [p + "nz"]),
            helper.make_node("Transpose", [p + "nz"], [p + "nzt"], perm=[1, 0]),
            helper.make_node("GatherND", [x, p + "nzt"], [p + "sel"]),
            helper.make_node("NonZero", [p + "keep"], [p + "nz2"]),
            helper.make_node("Transpose", [p + "nz2"], [p + "nzt2"], perm=[1, 0]),
            helper.make_node("Split", [p + "nzt2", "one"], [p + "col"], axis=1),
            helper.make_node("Squeeze", [p + "col", "one"], [p + "idx"]),
            helper.make_node("Shape", [p + "idx"], [p + "shape"]),
            helper.make_node("Gather", [p + "shape", "zero0"], [p + "n"], axis=0),
            helper.make_node("Unsqueeze", [p + "n", "zero"], [p + "n1"]),
            helper.make_node("Concat", ["cap", p + "n1"], [p + "both"], axis=0),
            helper.make_node("ReduceMin", [p + "both"], [p + "k0"], keepdims=0),
            helper.make_node("Reshape", [p + "k0", "one"], [p + "k"]),
            helper.make_node("TopK", [p + "sel", p + "k"], [x + "_v", p + "i"]),
            helper.make_node("Gather", [p + "idx", p + "i"], [x + "_pos"], axis=0)]


def tsl_best(x, k=300):
    sel = np.nonzero(x > 0.5)[0]
    order = sel[np.argsort(-x[sel], kind="stable")][:k]
    v = np.full(k, np.nan, np.float32)
    pos = np.full(k, -1, np.int64)
    v[:len(order)], pos[:len(order)] = x[order], order
    return v, pos


assert (tsl_a > 0.5).sum() > 300 and 0 < (tsl_b > 0.5).sum() < 300
write_case("padded_topk_of_selection_fp32",
           [helper.make_node("Reshape", ["a2", "flat"], ["a"])] + tsl_nodes("a") + tsl_nodes("b"),
           [("a2", tsl_a.reshape(250, 80)), ("b", tsl_b)],
           [("a_v", tsl_best(tsl_a)[0]), ("a_pos", tsl_best(tsl_a)[1]),
            ("b_v", tsl_best(tsl_b)[0]), ("b_pos", tsl_best(tsl_b)[1])], 13,
           inits=[("thr", np.array(0.5, np.float32)), ("one", np.array([1], np.int64)),
                  ("zero", np.array([0], np.int64)), ("zero0", np.array(0, np.int64)),
                  ("cap", np.array([300], np.int64)), ("flat", np.array([-1], np.int64))])
# Many groups: 2 batch entries x 500 classes of 8 boxes with no area (they
# overlap nothing, so every class keeps all 8, in score order with ties to
# the lower box).
few_s = (nk_.integers(0, 4, (2, 500, 8)) / 4).astype(np.float32)
write_case("padded_nms_many_classes",
           [helper.make_node("NonMaxSuppression", ["boxes", "s", "m"], ["sel"])],
           [("boxes", np.zeros((2, 8, 4), np.float32)), ("s", few_s)],
           [("sel", nms_padded(np.zeros((2, 8, 4), np.float32), few_s, 8, 0.0, -np.inf))], 11,
           inits=[("m", np.array([8], np.int64))])
scan_u8_body = helper.make_graph(
    [helper.make_node("ReduceSum", ["v_in"], ["s"], keepdims=0),
     helper.make_node("Less", ["s", "ten"], ["c_out"]),
     helper.make_node("Add", ["v_in", "v_in"], ["v_next"]),
     helper.make_node("Cast", ["v_in"], ["piece"], to=TensorProto.UINT8)],
    "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [3])],
    [vi("c_out", B, []), vi("v_next", F, [3]), vi("piece", TensorProto.UINT8, [3])],
    [numpy_helper.from_array(np.float32(10), "ten")])
write_case("refuse_padded_loop_scan_output_uint8",
           [helper.make_node("Loop", ["m", "", "x"], ["y", "pieces"], body=scan_u8_body)],
           [("x", np.array([1.0, 2.0, 0.5], np.float32))],
           [("y", (F, [3])), ("pieces", (TensorProto.UINT8, ["n", 3]))], 13,
           inits=[("m", np.array(4, np.int64))],
           expect="scan output 0 ('pieces') is padded, which needs its declared element type to "
                  "be a float, a signed integer or bool (given uint8)")


# TopK (lmnn_topk): k = 300 of 400 along a middle axis (values exact in
# bfloat16); int64 values above 2^24 that float32 would merge, the
# smallest; NaN above every number (PyTorch's order), +-inf, and -0 tying
# with +0 in index order, largest and smallest. The reference sorts by
# (NaN, value, index) with NumPy.
tk_ = np.random.default_rng(20)  # its own: the cases above keep their data
tk_vals = np.array([(128 + j % 128) * 2.0 ** (j // 128 - 9) for j in range(400)])
tk_x = np.stack([np.stack([tk_.permutation(tk_vals) for _ in range(3)], 1)
                 for _ in range(2)]).astype(np.float32)


def topk_np(x, k, axis, largest):
    x = np.moveaxis(x, axis, -1)
    flat = x.reshape(-1, x.shape[-1])
    idx = np.empty((flat.shape[0], k), np.int64)
    for r, row in enumerate(flat):
        nan = np.isnan(row) if row.dtype.kind == "f" else np.zeros(row.shape, bool)
        val = np.where(nan, 0, row).astype(np.float64) if row.dtype.kind == "f" else row
        pos = np.arange(len(row))
        # lexsort: the last key is the primary one.
        order = (np.lexsort((pos, -val, ~nan)) if largest else np.lexsort((pos, val, nan)))
        idx[r] = order[:k]
    vals = np.take_along_axis(flat, idx, 1)
    shape = x.shape[:-1] + (k,)
    return (np.moveaxis(vals.reshape(shape), -1, axis),
            np.moveaxis(idx.reshape(shape), -1, axis))


v300, i300 = topk_np(tk_x, 300, 1, True)
write_case("topk_k300_middle_axis",
           [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
           [("x", tk_x)], [("v", v300), ("i", i300)], 11,
           inits=[("k", np.array([300], np.int64))])
tk_int = (2 ** 24 + tk_.integers(-6, 7, (3, 50))).astype(np.int64)
tk_int[1, ::5] = -(2 ** 30)
vi, ii = topk_np(tk_int, 7, 1, False)
write_case("topk_int64_smallest",
           [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=0)],
           [("x", tk_int)], [("v", vi), ("i", ii)], 11,
           inits=[("k", np.array([7], np.int64))])
tk_nan = tk_.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0]),
                    (4, 12)).astype(np.float32)
for largest in (1, 0):
    vn, inn = topk_np(tk_nan, 5, 1, largest)
    write_case("topk_nan_inf_zeros_%s" % ("largest" if largest else "smallest"),
               [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
               [("x", tk_nan)], [("v", vn), ("i", inn)], 11,
               inits=[("k", np.array([5], np.int64))])

# Depthwise convolutions of more than 32 channels (the op library's
# depthwise form: each tap's patch matrix times its weights), with the
# activations that fuse into them: Clip with constant bounds (ReLU6),
# x * Sigmoid(x) (SiLU), HardSwish; in a chain of convolutions kept as NHWC
# images; and a 3-D one (per depth tap). PyTorch the reference.
dw_ = np.random.default_rng(21)  # its own: the cases above keep their data


def tn(a):
    return torch.from_numpy(a)


def d32(*shape):
    return dw_.standard_normal(shape).astype(np.float32)


dwx, dww, dwb = d32(2, 48, 11, 13), d32(48, 1, 3, 3), d32(48)
write_case("depthwise_conv_48_relu6",
           [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=48, strides=[2, 2],
                             pads=[1, 1, 1, 1]),
            helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
           [("x", dwx)],
           [("y", F_.relu6(F_.conv2d(tn(dwx), tn(dww), tn(dwb), stride=2, padding=1,
                                     groups=48)).numpy())], 13,
           inits=[("w", dww), ("b", dwb), ("lo", np.array(0, np.float32)),
                  ("hi", np.array(6, np.float32))])
dsx, dsw = d32(1, 40, 12, 10), d32(40, 1, 5, 3)
write_case("depthwise_conv_40_silu_dilated",
           [helper.make_node("Conv", ["x", "w"], ["c"], group=40, pads=[2, 2, 2, 2],
                             dilations=[1, 2]),
            helper.make_node("Sigmoid", ["c"], ["s"]),
            helper.make_node("Mul", ["s", "c"], ["y"])],
           [("x", dsx)],
           [("y", F_.silu(F_.conv2d(tn(dsx), tn(dsw), padding=2, dilation=(1, 2),
                                    groups=40)).numpy())], 13, inits=[("w", dsw)])
# Weights scaled by their fan-in, so values stay near 1 (bfloat16 rounds
# each product's sum relative to its largest terms).
dhx, dh1, dh2, dh3 = d32(1, 16, 9, 9), d32(64, 16, 1, 1) / 4, d32(64, 1, 3, 3) / 3, d32(24, 64, 1, 1) / 8
dhb = d32(64)
dh_ref = F_.conv2d(F_.hardswish(F_.conv2d(F_.conv2d(tn(dhx), tn(dh1)), tn(dh2), tn(dhb), padding=1,
                                          groups=64)), tn(dh3))
write_case("depthwise_conv_64_hardswish_chain",
           [helper.make_node("Conv", ["x", "w1"], ["a"]),
            helper.make_node("Conv", ["a", "w2", "b2"], ["c"], group=64, pads=[1, 1, 1, 1]),
            helper.make_node("HardSwish", ["c"], ["h"]),
            helper.make_node("Conv", ["h", "w3"], ["y"])],
           [("x", dhx)], [("y", dh_ref.numpy())], 14,
           inits=[("w1", dh1), ("w2", dh2), ("b2", dhb), ("w3", dh3)])
d3x, d3w = d32(1, 40, 4, 6, 6), d32(40, 1, 3, 3, 3)
write_case("conv3d_depthwise_40",
           [helper.make_node("Conv", ["x", "w"], ["y"], group=40, pads=[1, 1, 1, 1, 1, 1])],
           [("x", d3x)], [("y", F_.conv3d(tn(d3x), tn(d3w), padding=1, groups=40).numpy())], 13,
           inits=[("w", d3w)])

# Layer normalization spelled out as exporters write it before opset 17
# (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, then Mul gamma
# and Add beta), which fuses into one layer norm; and near misses that must
# not fuse (over another dim; an intermediate that is a graph output), all
# against PyTorch.
ln_ = np.random.default_rng(22)  # its own: the cases above keep their data


def ln_nodes(axes, affine, opset18=False):
    mean = (lambda i, o: helper.make_node("ReduceMean", [i, "axes"], [o])) if opset18 else \
        (lambda i, o: helper.make_node("ReduceMean", [i], [o], axes=axes))
    nodes = [mean("x", "m"), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["p"]), mean("p", "v"),
             helper.make_node("Add", ["v", "eps"], ["e"]), helper.make_node("Sqrt", ["e"], ["s"]),
             helper.make_node("Div", ["d", "s"], ["n" if affine else "y"])]
    if affine:
        nodes += [helper.make_node("Mul", ["n", "g"], ["gn"]),
                  helper.make_node("Add", ["gn", "b"], ["y"])]
    return nodes


lnx, lng, lnb = (ln_.standard_normal((2, 5, 24)).astype(np.float32) * 3 + 1,
                 ln_.standard_normal(24).astype(np.float32),
                 ln_.standard_normal(24).astype(np.float32))
write_case("layernorm_spelled_out_affine", ln_nodes([-1], True), [("x", lnx)],
           [("y", F_.layer_norm(torch.from_numpy(lnx), (24,), torch.from_numpy(lng),
                                torch.from_numpy(lnb), 1e-5).numpy())], 13,
           inits=[("two", np.array(2, np.float32)), ("eps", np.array(1e-5, np.float32)),
                  ("g", lng), ("b", lnb)])
write_case("layernorm_spelled_out_opset18", ln_nodes(None, False, True), [("x", lnx)],
           [("y", F_.layer_norm(torch.from_numpy(lnx), (24,), eps=1e-6).numpy())], 18,
           inits=[("two", np.array(2, np.float32)), ("eps", np.array(1e-6, np.float32)),
                  ("axes", np.array([2], np.int64))])
lnm = lnx - lnx.mean(1, keepdims=True)
write_case("layernorm_spelled_out_other_dim", ln_nodes([1], False), [("x", lnx)],
           [("y", (lnm / np.sqrt((lnm * lnm).mean(1, keepdims=True) + 1e-5)).astype(np.float32))],
           13, inits=[("two", np.array(2, np.float32)), ("eps", np.array(1e-5, np.float32))])
lnd = lnx - lnx.mean(2, keepdims=True)
write_case("layernorm_spelled_out_middle_output", ln_nodes([-1], False), [("x", lnx)],
           [("y", F_.layer_norm(torch.from_numpy(lnx), (24,), eps=1e-5).numpy()),
            ("d", lnd.astype(np.float32))], 13,
           inits=[("two", np.array(2, np.float32)), ("eps", np.array(1e-5, np.float32))])

# Element-wise ops on NHWC images (fe_layout.c): a residual block's Add ->
# Relu between convolutions; a squeeze-and-excitation gate (GlobalAveragePool,
# 1x1 convolutions, PyTorch's HardSigmoid) multiplying the image at batch 3
# (the gate broadcast per image) and a per-channel constant added; unary ops,
# scalar and per-channel constants on either side, an image added to itself
# and a global max pool of the result; and near misses that must stay NCHW
# (a graph input in the Add, an element-wise result that is a graph output).
# expect.txt: the compile's layout note, so the images are checked to flow.
im_ = np.random.default_rng(23)  # its own: the cases above keep their data


def i32(*shape, scale=1.0):
    return (im_.standard_normal(shape) * scale).astype(np.float32)


# (Weights scaled so the outputs stay near 1: the bfloat8_b mode's check
# is per element.)
rbx, rb0, rb1, rb2, rb3 = (i32(2, 3, 10, 12), i32(8, 3, 3, 3, scale=0.15), i32(8, 8, 3, 3, scale=0.1),
                           i32(8, 8, 3, 3, scale=0.1), i32(5, 8, 1, 1, scale=0.2))
rbb = i32(8)
rb_a = F_.conv2d(tn(rbx), tn(rb0), padding=1)
rb_h = F_.conv2d(F_.relu(F_.conv2d(rb_a, tn(rb1), tn(rbb), padding=1)), tn(rb2), padding=1)
write_case("image_residual_block",
           [helper.make_node("Conv", ["x", "w0"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["a", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"]),
            helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c2", "a"], ["s"]),
            helper.make_node("Relu", ["s"], ["r"]),
            helper.make_node("Conv", ["r", "w3"], ["y"])],
           [("x", rbx)], [("y", F_.conv2d(F_.relu(rb_h + rb_a), tn(rb3)).numpy())], 13,
           inits=[("w0", rb0), ("w1", rb1), ("b1", rbb), ("w2", rb2), ("w3", rb3)],
           expect="layout: 4 results")
sex, se0, se1, se2, se3 = (i32(3, 4, 7, 9), i32(16, 4, 3, 3, scale=0.4), i32(4, 16, 1, 1, scale=0.3),
                           i32(16, 4, 1, 1, scale=0.5), i32(6, 16, 1, 1, scale=0.3))
seb1, seb2, sec = i32(4), i32(16), i32(16, 1, 1)
se_a = F_.conv2d(tn(sex), tn(se0), padding=1)
se_g = F_.hardsigmoid(F_.conv2d(F_.relu(F_.conv2d(se_a.mean((2, 3), keepdim=True), tn(se1),
                                                  tn(seb1))), tn(se2), tn(seb2)))
write_case("image_se_gate_batch3",
           [helper.make_node("Conv", ["x", "w0"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("GlobalAveragePool", ["a"], ["p"]),
            helper.make_node("Conv", ["p", "w1", "b1"], ["q"]),
            helper.make_node("Relu", ["q"], ["qr"]),
            helper.make_node("Conv", ["qr", "w2", "b2"], ["e"]),
            helper.make_node("HardSigmoid", ["e"], ["g"], alpha=1.0 / 6),
            helper.make_node("Mul", ["a", "g"], ["m"]),
            helper.make_node("Add", ["m", "c"], ["s"]),
            helper.make_node("Conv", ["s", "w3"], ["y"])],
           [("x", sex)], [("y", F_.conv2d(se_a * se_g + tn(sec), tn(se3)).numpy())], 13,
           inits=[("w0", se0), ("w1", se1), ("b1", seb1), ("w2", se2), ("b2", seb2), ("c", sec),
                  ("w3", se3)],
           expect="layout: 6 results")
ucx, ucw, ucc = i32(1, 2, 9, 6), i32(12, 2, 3, 3, scale=0.5), i32(1, 12, 1, 1)
uc_a = F_.conv2d(tn(ucx), tn(ucw), stride=(1, 2))
uc_s = torch.sigmoid(tn(ucc) - uc_a * 0.5)
uc_l = F_.leaky_relu(uc_s + uc_s, 0.3)
uc_h = torch.clamp(0.2 * uc_l + 0.5, 0, 1)
write_case("image_unary_chain_constants",
           [helper.make_node("Conv", ["x", "w"], ["a"], strides=[1, 2]),
            helper.make_node("Mul", ["a", "half"], ["m"]),
            helper.make_node("Sub", ["c", "m"], ["d"]),
            helper.make_node("Sigmoid", ["d"], ["s"]),
            helper.make_node("Add", ["s", "s"], ["t"]),
            helper.make_node("LeakyRelu", ["t"], ["l"], alpha=0.3),
            helper.make_node("HardSigmoid", ["l"], ["h"]),
            helper.make_node("Max", ["h", "l", "a"], ["u"]),
            helper.make_node("GlobalMaxPool", ["u"], ["y"])],
           [("x", ucx)],
           [("y", torch.maximum(torch.maximum(uc_h, uc_l), uc_a).amax((2, 3), keepdim=True)
             .numpy())], 13,
           inits=[("w", ucw), ("half", np.array(0.5, np.float32)), ("c", ucc)],
           expect="layout: 6 results")
nmx, nmw, nmv = i32(1, 6, 5, 7), i32(6, 6, 3, 3, scale=0.3), i32(4, 6, 1, 1, scale=0.4)
nm_a = F_.conv2d(tn(nmx), tn(nmw), padding=1)
nm_s = nm_a + tn(nmx)
nm_r = torch.relu(nm_a)
write_case("image_ew_near_misses",
           [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["a", "x"], ["s"]),
            helper.make_node("Conv", ["s", "v"], ["y"]),
            helper.make_node("Abs", ["a"], ["b"]),
            helper.make_node("Sub", ["b", "a"], ["r2"])],
           [("x", nmx)],
           [("y", F_.conv2d(nm_s, tn(nmv)).numpy()), ("r2", (nm_a.abs() - nm_a).numpy())], 13,
           inits=[("w", nmw), ("v", nmv)])
# A fire module (SqueezeNet's): a 1x1 squeeze, then 1x1 and 3x3 expands
# whose results a Concat of channels joins as images, and a max pool after;
# a Concat that also takes a graph input stays NCHW.
fmx, fms, fm1, fm3, fmv = (i32(2, 5, 9, 11), i32(6, 5, 1, 1, scale=0.4), i32(7, 6, 1, 1, scale=0.4),
                           i32(9, 6, 3, 3, scale=0.2), i32(3, 16, 1, 1, scale=0.3))
fm_s = F_.relu(F_.conv2d(tn(fmx), tn(fms)))
fm_c = torch.cat([F_.relu(F_.conv2d(fm_s, tn(fm1))), F_.relu(F_.conv2d(fm_s, tn(fm3), padding=1))], 1)
write_case("image_concat_fire",
           [helper.make_node("Conv", ["x", "ws"], ["s0"]),
            helper.make_node("Relu", ["s0"], ["s"]),
            helper.make_node("Conv", ["s", "w1"], ["e1"]),
            helper.make_node("Relu", ["e1"], ["r1"]),
            helper.make_node("Conv", ["s", "w3"], ["e3"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["e3"], ["r3"]),
            helper.make_node("Concat", ["r1", "r3"], ["c"], axis=1),
            helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
            helper.make_node("Conv", ["p", "v"], ["y"]),
            helper.make_node("Concat", ["s", "x"], ["z"], axis=-3)],
           [("x", fmx)],
           [("y", F_.conv2d(F_.max_pool2d(fm_c, 3, 2), tn(fmv)).numpy()),
            ("z", torch.cat([fm_s, tn(fmx)], 1).numpy())], 13,
           inits=[("ws", fms), ("w1", fm1), ("w3", fm3), ("v", fmv)],
           expect="layout: 4 results")
# A dense block (DenseNet's): BatchNormalization -> Relu before each
# convolution, the features joined by a Concat of channels, all as images;
# and a BatchNormalization -> Relu of a graph input (NCHW), both against
# PyTorch.
dbx, db0, db1, db2 = (i32(2, 3, 8, 10), i32(6, 3, 3, 3, scale=0.3), i32(4, 6, 3, 3, scale=0.2),
                      i32(5, 10, 1, 1, scale=0.3))


def bn_params(ch):
    return (im_.uniform(0.5, 1.5, ch).astype(np.float32), i32(ch), i32(ch),
            im_.uniform(0.5, 2.0, ch).astype(np.float32))


bn1, bn2, bn3 = bn_params(6), bn_params(10), bn_params(3)


def bn_ref(x, p):
    return F_.batch_norm(x, tn(p[2]), tn(p[3]), tn(p[0]), tn(p[1]), False, 0.0, 1e-5)


# The dense block's reference is computed in float64: its outputs sum about
# 150 products of up to 3 in size, so float32 rounds them by a few 1e-7
# whatever computes them (PyTorch's own float32 result differs from machine
# to machine), and an output that cancels to near 0 fails ONNX's atol of
# 1e-7 against any float32 reference. The case compares at atol 1e-6.
def bn_ref64(x, p):
    return F_.batch_norm(x, *(tn(p[i]).double() for i in (2, 3, 0, 1)), False, 0.0, 1e-5)


db_a = F_.conv2d(tn(dbx).double(), tn(db0).double(), padding=1)
db_b = F_.conv2d(F_.relu(bn_ref64(db_a, bn1)), tn(db1).double(), padding=1)
db_y = F_.conv2d(F_.relu(bn_ref64(torch.cat([db_a, db_b], 1), bn2)), tn(db2).double()).float()
bn_inits = []
for tag, p in (("1", bn1), ("2", bn2), ("3", bn3)):
    bn_inits += [("g" + tag, p[0]), ("be" + tag, p[1]), ("m" + tag, p[2]), ("v" + tag, p[3])]


def bn_node(x, tag, y):
    return helper.make_node("BatchNormalization", [x, "g" + tag, "be" + tag, "m" + tag, "v" + tag],
                            [y])


write_case("image_dense_block",
           [helper.make_node("Conv", ["x", "w0"], ["a"], pads=[1, 1, 1, 1]),
            bn_node("a", "1", "n1"), helper.make_node("Relu", ["n1"], ["r1"]),
            helper.make_node("Conv", ["r1", "w1"], ["b"], pads=[1, 1, 1, 1]),
            helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
            bn_node("c", "2", "n2"), helper.make_node("Relu", ["n2"], ["r2"]),
            helper.make_node("Conv", ["r2", "w2"], ["y"]),
            bn_node("x", "3", "n3"), helper.make_node("Relu", ["n3"], ["z"])],
           [("x", dbx)],
           [("y", db_y.numpy()), ("z", F_.relu(bn_ref(tn(dbx), bn3)).numpy())], 13,
           inits=[("w0", db0), ("w1", db1), ("w2", db2)] + bn_inits,
           expect="layout: 5 results", atol=1e-6)
# HardSwish as exporters write it before opset 14: x * HardSigmoid(x) with
# PyTorch's HardSigmoid, fused into the convolution before it; with other
# HardSigmoid parameters it stays apart (and still runs on images).
hsx, hsw, hsv = i32(1, 4, 7, 7), i32(8, 4, 3, 3, scale=0.5), i32(3, 8, 1, 1, scale=0.4)
hs_a = F_.conv2d(tn(hsx), tn(hsw), padding=1)
for alpha, name in ((1.0 / 6, "pytorch"), (0.25, "other")):
    hs_g = torch.clamp(hs_a * np.float32(alpha) + 0.5, 0, 1)
    write_case("image_hardswish_opset13_" + name,
               [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
                helper.make_node("HardSigmoid", ["a"], ["g"], alpha=alpha),
                helper.make_node("Mul", ["a", "g"], ["h"]),
                helper.make_node("Conv", ["h", "v"], ["y"])],
               [("x", hsx)], [("y", F_.conv2d(hs_a * hs_g, tn(hsv)).numpy())], 13,
               inits=[("w", hsw), ("v", hsv)],
               expect="layout: %d results" % (1 if name == "pytorch" else 3))
# Reductions over H and W read images (a mean over the pixels before a
# classifier, as MnasNet and ShuffleNet end): ReduceMean without keepdims
# into a Gemm, ReduceMax and ReduceLogSumExp keeping dims, ReduceSum with
# its axes an input (opset 18, negative axes).
rdx, rdw, rdf = i32(3, 4, 6, 5), i32(10, 4, 3, 3, scale=0.3), i32(7, 10, scale=0.3)
rd_a = F_.conv2d(tn(rdx), tn(rdw), padding=1)
write_case("image_reduce_spatial",
           [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("ReduceMean", ["a"], ["m"], axes=[2, 3], keepdims=0),
            helper.make_node("Gemm", ["m", "f"], ["y"], transB=1),
            helper.make_node("ReduceMax", ["a"], ["mx"], axes=[3, 2]),
            helper.make_node("ReduceLogSumExp", ["a"], ["lse"], axes=[2, 3])],
           [("x", rdx)],
           [("y", (rd_a.mean((2, 3)) @ tn(rdf).T).numpy()),
            ("mx", rd_a.amax((2, 3), keepdim=True).numpy()),
            ("lse", torch.logsumexp(rd_a, (2, 3), keepdim=True).numpy())], 13,
           inits=[("w", rdw), ("f", rdf)], expect="layout: 1 results")
write_case("image_reduce_sum_axes_input",
           [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=0)],
           [("x", rdx)], [("y", rd_a.sum((2, 3)).numpy())], 18,
           inits=[("w", rdw), ("axes", np.array([-1, -2], np.int64))],
           expect="layout: 1 results")
# Long element-wise chains: one from a convolution into another stays
# images throughout (31 results); one whose end is a graph output stays
# NCHW throughout, its start included (the plan withdraws images along
# the whole chain).
lcx, lcw1, lcw2, lcv = (i32(1, 3, 6, 6), i32(5, 3, 3, 3, scale=0.4), i32(4, 3, 3, 3, scale=0.4),
                        i32(2, 5, 1, 1, scale=0.4))
lc_nodes = [helper.make_node("Conv", ["x", "w1"], ["a0"], pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["x", "w2"], ["b0"], pads=[1, 1, 1, 1])]
for i in range(30):
    lc_nodes += [helper.make_node("Neg", ["a%d" % i], ["a%d" % (i + 1)]),
                 helper.make_node("Neg", ["b%d" % i], ["b%d" % (i + 1) if i < 29 else "z"])]
lc_nodes.append(helper.make_node("Conv", ["a30", "v"], ["y"]))
write_case("image_long_chains", lc_nodes, [("x", lcx)],
           [("y", F_.conv2d(F_.conv2d(tn(lcx), tn(lcw1), padding=1), tn(lcv)).numpy()),
            ("z", F_.conv2d(tn(lcx), tn(lcw2), padding=1).numpy())], 13,
           inits=[("w1", lcw1), ("w2", lcw2), ("v", lcv)], expect="layout: 31 results")
# Resize between convolutions runs on images (a U-Net's or a feature
# pyramid's upsampling): nearest x2 by scales, and bilinear to sizes added
# to a lateral convolution's result, each then convolved; PyTorch's
# interpolate the reference.
rzx, rzw, rzl, rzv = (i32(2, 3, 5, 7), i32(6, 3, 3, 3, scale=0.4), i32(6, 3, 1, 1, scale=0.4),
                      i32(4, 6, 3, 3, scale=0.2))
rz_a = F_.conv2d(tn(rzx), tn(rzw), stride=2, padding=1)  # 3 x 4
rz_up = F_.interpolate(rz_a, scale_factor=2, mode="nearest")
rz_bl = F_.interpolate(rz_a, size=(5, 7), mode="bilinear", align_corners=False)
rz_lat = F_.conv2d(tn(rzx), tn(rzl))
write_case("image_resize_pyramid",
           [helper.make_node("Conv", ["x", "w"], ["a"], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Resize", ["a", "", "sc"], ["u"], mode="nearest"),
            helper.make_node("Conv", ["u", "v"], ["y"], pads=[1, 1, 1, 1]),
            helper.make_node("Resize", ["a", "", "", "sz"], ["b"], mode="linear"),
            helper.make_node("Conv", ["x", "l"], ["lat"]),
            helper.make_node("Add", ["b", "lat"], ["s"]),
            helper.make_node("Conv", ["s", "v"], ["z"], pads=[1, 1, 1, 1])],
           [("x", rzx)],
           [("y", F_.conv2d(rz_up, tn(rzv), padding=1).numpy()),
            ("z", F_.conv2d(rz_bl + rz_lat, tn(rzv), padding=1).numpy())], 13,
           inits=[("w", rzw), ("v", rzv), ("l", rzl),
                  ("sc", np.array([1, 1, 2, 2], np.float32)),
                  ("sz", np.array([2, 6, 5, 7], np.int64))],
           expect="layout: 5 results")
# Broadcasts an image cannot take stay NCHW and right: a spatial attention
# map ([N, 1, H, W], CBAM's) times the features, a constant per image
# ([N, 1, 1, 1]) added, a [1, C, 1, 1] value computed at run time for a
# batch of 2.
bmx, bmw, bmv = i32(2, 3, 5, 6), i32(4, 3, 3, 3, scale=0.4), i32(2, 4, 1, 1, scale=0.4)
bmk, bmc = i32(2, 1, 1, 1), i32(1, 4, 1, 1)
bm_a = F_.conv2d(tn(bmx), tn(bmw), padding=1)
bm_m = bm_a * torch.sigmoid(bm_a.mean(1, keepdim=True))
bm_g = torch.relu(tn(bmc) * 2)
write_case("image_broadcast_near_misses",
           [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
            helper.make_node("ReduceMean", ["a"], ["sm"], axes=[1]),
            helper.make_node("Sigmoid", ["sm"], ["sp"]),
            helper.make_node("Mul", ["a", "sp"], ["m"]),
            helper.make_node("Add", ["m", "k"], ["mk"]),
            helper.make_node("Conv", ["mk", "v"], ["y"]),
            helper.make_node("Conv", ["x", "w"], ["b"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c", "c"], ["c2"]),
            helper.make_node("Relu", ["c2"], ["g"]),
            helper.make_node("Mul", ["b", "g"], ["bg"]),
            helper.make_node("Conv", ["bg", "v"], ["z"])],
           [("x", bmx), ("c", bmc)],
           [("y", F_.conv2d(bm_m + tn(bmk), tn(bmv)).numpy()),
            ("z", F_.conv2d(bm_a * bm_g, tn(bmv)).numpy())], 13,
           inits=[("w", bmw), ("v", bmv), ("k", bmk)])
# A ConvNeXt block: depthwise 7x7, Transpose to NHWC, LayerNormalization
# over the channels, two MatMuls with a Relu between, Transpose back,
# residual Add. Both Transposes are the image's own order: the first
# copies the image into its shape, the second hands its input over as an
# image, so the Add and the convolution after it stay NHWC.
cnx, cnw0, cnd = i32(2, 3, 9, 8), i32(40, 3, 2, 2, scale=0.4), i32(40, 1, 7, 7, scale=0.15)
cng, cnb = (im_.uniform(0.5, 1.5, 40).astype(np.float32), i32(40))
cn1, cn1b, cn2, cnv = (i32(40, 64, scale=0.15), i32(64), i32(64, 40, scale=0.12),
                       i32(5, 40, 1, 1, scale=0.2))
cn_a = F_.conv2d(tn(cnx), tn(cnw0), stride=2)
cn_h = F_.layer_norm(F_.conv2d(cn_a, tn(cnd), padding=3, groups=40).permute(0, 2, 3, 1), (40,),
                     tn(cng), tn(cnb), 1e-6)
cn_m = (torch.relu(cn_h @ tn(cn1) + tn(cn1b)) @ tn(cn2)).permute(0, 3, 1, 2)
write_case("image_convnext_block",
           [helper.make_node("Conv", ["x", "w0"], ["a"], strides=[2, 2]),
            helper.make_node("Conv", ["a", "dw"], ["d"], group=40, pads=[3, 3, 3, 3]),
            helper.make_node("Transpose", ["d"], ["t"], perm=[0, 2, 3, 1]),
            helper.make_node("LayerNormalization", ["t", "g", "b"], ["ln"], axis=-1,
                             epsilon=1e-6),
            helper.make_node("MatMul", ["ln", "m1"], ["h1"]),
            helper.make_node("Add", ["h1", "m1b"], ["h1b"]),
            helper.make_node("Relu", ["h1b"], ["r"]),
            helper.make_node("MatMul", ["r", "m2"], ["h2"]),
            helper.make_node("Transpose", ["h2"], ["back"], perm=[0, 3, 1, 2]),
            helper.make_node("Add", ["a", "back"], ["s"]),
            helper.make_node("Conv", ["s", "v"], ["y"])],
           [("x", cnx)], [("y", F_.conv2d(cn_a + cn_m, tn(cnv)).numpy())], 17,
           inits=[("w0", cnw0), ("dw", cnd), ("g", cng), ("b", cnb), ("m1", cn1), ("m1b", cn1b),
                  ("m2", cn2), ("v", cnv)],
           expect="layout: 4 results")


# A transformer block on [S, B, E], sequence first, as ViT's and Swin's
# attention export it: the projections are [S, B, E] x [E, N] (matrices of
# B rows each, multiplied as one of S * B rows), the keys are transposed
# [S, H, D] -> [H, D, S], the bias and GELU fuse into the product, and the
# mask is built from shapes alone (zeros, a block filled by slices:
# ScatterND), so it folds.
class SeqFirstBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(64, 4)
        self.fc = torch.nn.Linear(64, 96)

    def forward(self, x):
        s = x.shape[0]
        mask = x.new_zeros((s, s))
        mask[s // 2:, :s // 2] = -100.0
        a, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return torch.nn.functional.gelu(self.fc(a + x))


torch.manual_seed(29)
write_torch_case("transformer_seq_first_block", SeqFirstBlock(),
                 (torch.from_numpy(f32(40, 2, 64)),), ["x"], ["y"])


# Negative pads remove elements (ONNX's crops, as PyTorch's F.pad with
# negative padding exports them): the crops come off, then the pads go on,
# against NumPy; x a run-time input. Its own generator, so the cases above
# keep their data.
crng = np.random.default_rng(13)
cx = crng.standard_normal((2, 3, 7, 6)).astype(np.float32)


def crop_then_pad(a, pads, mode, value=0.0):
    r = a.ndim
    sl = tuple(slice(max(-pads[d], 0), a.shape[d] - max(-pads[d + r], 0)) for d in range(r))
    width = [(max(pads[d], 0), max(pads[d + r], 0)) for d in range(r)]
    np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect", "wrap": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(a[sl], width, mode=np_mode, **kw).astype(np.float32)


for mode, pads in (("constant", [0, 0, -2, 1, 0, -1, 3, -2]),  # crop and pad on one dim
                   ("edge", [0, -1, 2, -1, 0, 0, -3, 2]),
                   ("reflect", [0, 0, -2, 3, 0, 0, -3, 0]),  # crop H, reflect-pad W
                   ("wrap", [0, -1, 0, 0, 0, 0, 0, -4])):
    pa = np.array(pads, np.int64)
    write_case("pad_negative_%s" % mode,
               [helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode=mode)],
               [("x", cx)], [("y", crop_then_pad(cx, pads, mode, 0.5))], 18,
               inits=[("pads", pa), ("v", np.array(0.5, np.float32))])
write_case("pad_negative_only_crops",
           [helper.make_node("Pad", ["x", "pads"], ["y"])],
           [("x", cx)], [("y", cx[:, :, 1:6, 2:])], 13,
           inits=[("pads", np.array([0, 0, -1, -2, 0, 0, -1, 0], np.int64))])
write_case("refuse_pad_reflect_crop_and_pad_one_dim",
           [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
           [("x", cx)], [("y", (TensorProto.FLOAT, [2, 3, 7, 6]))], 13,
           inits=[("pads", np.array([0, 0, 0, -1, 0, 0, 0, 1], np.int64))],
           expect="mode 'reflect' with pads (-1, 1) of dim 3, one side cropped and the other "
                  "padded (ONNX does not say which comes first)")
write_case("refuse_pad_crops_everything",
           [helper.make_node("Pad", ["x", "pads"], ["y"])],
           [("x", cx)], [("y", (TensorProto.FLOAT, [2, 3, 2, 6]))], 13,
           inits=[("pads", np.array([0, 0, -4, 0, 0, 0, -3, 0], np.int64))],
           expect="pads (-4, -3) of dim 2 remove all of its 7 elements (an empty tensor)")
write_case("invalid_pad_crops_more_than_the_dim",
           [helper.make_node("Pad", ["x", "pads"], ["y"])],
           [("x", cx)], [("y", (TensorProto.FLOAT, [2, 3, 1, 6]))], 13,
           inits=[("pads", np.array([0, 0, -5, 0, 0, 0, -3, 0], np.int64))],
           expect="pads (-5, -3) of dim 2 remove more than its 7 elements")
write_case("refuse_gradient_through_negative_pads",
           [helper.make_node("Pad", ["x", "pads"], ["y"]),
            grad_node(["x"], [], "y", ["dx"])],
           [("x", cx)], [("dx", (TensorProto.FLOAT, [2, 3, 7, 6]))], 18, domains=TRAIN,
           inits=[("pads", np.array([0, 0, -1, 0, 0, 0, 0, 2], np.int64))],
           expect="(Pad): Gradient: the gradient of a Pad with negative pads is not supported")

# Constant indices outside their dim: invalid models, for every indexing op
# (on the device such an index would select zeros or change nothing).
ix = crng.standard_normal((4, 3)).astype(np.float32)
for name, node, inits, shape, want in (
        ("gather", helper.make_node("Gather", ["x", "i"], ["y"], axis=1),
         [("i", np.array([0, -4, 2], np.int64))], [4, 3],
         "element 1 of the indices is -4, outside dim 1 of size 3"),
        ("gather_elements", helper.make_node("GatherElements", ["x", "i"], ["y"]),
         [("i", np.array([[0, 3], [4, 1]], np.int64))], [2, 2],
         "element 2 of the indices is 4, outside dim 0 of size 4"),
        ("gathernd", helper.make_node("GatherND", ["x", "i"], ["y"]),
         [("i", np.array([[1, 2], [3, 3]], np.int64))], [2],
         "index tuple 1: entry 1 is 3, outside dim 1 of size 3"),
        ("scatter_elements", helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                                              reduction="add"),
         [("i", np.array([[0, 1, -4]], np.int64)), ("u", np.ones((1, 3), np.float32))], [4, 3],
         "element 2 of the indices is -4, outside dim 1 of size 3")):
    write_case("invalid_%s_index_outside_dim" % name, [node], [("x", ix)],
               [("y", (TensorProto.FLOAT, shape))], 16, inits=inits, expect=want)

# Values no device holds are refused when the shapes are known, before any
# allocation: a graph input, and a node's output.


def redeclare(case, dims):
    """Declares the case's input 0 and output 0 with `dims`: far larger than
    its test data, which no compile that refuses them reaches."""
    path = os.path.join(OUT, case, "model.onnx")
    model = onnx.load(path)
    for v in (model.graph.input[0], model.graph.output[0]):
        for d, size in enumerate(dims):
            v.type.tensor_type.shape.dim[d].dim_value = size
    onnx.save(model, path)


write_case("refuse_input_larger_than_dram",
           [helper.make_node("Relu", ["x"], ["y"])],
           [("x", np.zeros((1, 1), np.float32))], [("y", (TensorProto.FLOAT, [1, 1]))], 13,
           expect="graph input 'x' float[3221225472, 2] would take 24.0 GiB, more than the "
                  "device's 12.0 GiB of DRAM")
redeclare("refuse_input_larger_than_dram", [3221225472, 2])
write_case("refuse_output_larger_than_dram",
           [helper.make_node("Expand", ["x", "shape"], ["y"])],
           [("x", np.zeros((1,), np.float32))], [("y", (TensorProto.FLOAT, [1 << 32]))], 13,
           inits=[("shape", np.array([1 << 32], np.int64))],
           expect="output 0 ('y') float[4294967296] would take 16.0 GiB, more than the device's "
                  "12.0 GiB of DRAM")
# Convolution geometry past any image: refused, not summed into an overflow.
write_case("refuse_conv_pads_past_any_image",
           [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1 << 40, 0, 0, 0])],
           [("x", np.zeros((1, 1, 5, 5), np.float32))], [("y", (TensorProto.FLOAT, [1, 1, 3, 3]))],
           13, inits=[("w", np.ones((1, 1, 3, 3), np.float32))],
           expect="attribute pads holds 1099511627776 (at most 16777216)")
# Top and bottom padding wider than the kernel: windows wholly in the
# padding, against PyTorch.
cpx = crng.standard_normal((2, 3, 6, 7)).astype(np.float32)
cpw = crng.standard_normal((4, 3, 3, 3)).astype(np.float32)
write_case("conv_padding_wider_than_the_kernel",
           [helper.make_node("Conv", ["x", "w"], ["y"], pads=[5, 0, 6, 1])],
           [("x", cpx)],
           [("y", torch.nn.functional.conv2d(
               torch.nn.functional.pad(torch.from_numpy(cpx), (0, 1, 5, 6)),
               torch.from_numpy(cpw)).numpy())], 13,
           inits=[("w", cpw)], atol=1e-5)
write_case("refuse_folded_constant_larger_than_dram",
           [helper.make_node("ConstantOfShape", ["s"], ["c"]),
            helper.make_node("Add", ["x", "c"], ["y"])],
           [("x", np.zeros((1, 1), np.float32))], [("y", (TensorProto.FLOAT, [1 << 31, 8]))], 13,
           inits=[("s", np.array([1 << 31, 8], np.int64))],
           expect="(ConstantOfShape): a folded constant of 17179869184 elements would take 64.0 "
                  "GiB, more than the device's 12.0 GiB of DRAM")
# A bool holds 1 byte on the host and 4 on the device and at the binary's edge.
write_case("refuse_bool_input_larger_than_dram",
           [helper.make_node("Not", ["x"], ["y"])],
           [("x", np.zeros((1, 1), np.bool_))], [("y", (TensorProto.BOOL, [1, 1]))], 13,
           expect="graph input 'x' bool[3, 2147483648] would take 24.0 GiB, more than the "
                  "device's 12.0 GiB of DRAM")
redeclare("refuse_bool_input_larger_than_dram", [3, 2147483648])
# An opset-6 broadcast axis past every rank (it overflowed when added to
# B's rank).
write_case("invalid_add_broadcast_axis_past_the_rank",
           [helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=(1 << 63) - 1)],
           [("a", np.zeros((2, 3), np.float32)), ("b", np.zeros((1, 3), np.float32))],
           [("y", (TensorProto.FLOAT, [2, 3]))], 6,
           expect="axis 9223372036854775807 does not fit B's rank 2 in A's 2")
# Split of a constant folds: a part of a constant shape decides an Expand's
# output (PyTorch's repeat_interleave exports that), and the parts of a
# constant weight, two runs each, feed the device.
srng = np.random.default_rng(17)
spx = srng.standard_normal((2, 2, 3)).astype(np.float32)
spw = srng.standard_normal((2, 5, 3)).astype(np.float32)
write_case("split_of_constants",
           [helper.make_node("Split", ["shape", "parts"], ["head", "tail"], axis=0),
            helper.make_node("Expand", ["x", "tail"], ["wide"]),
            helper.make_node("Split", ["w", "wparts"], ["w0", "w1"], axis=1),
            helper.make_node("Add", ["x", "w0"], ["y0"]),
            helper.make_node("ReduceSum", ["w1", "axes"], ["y1"], keepdims=0)],
           [("x", spx)],
           [("wide", np.broadcast_to(spx, (4, 2, 2, 3)).copy()), ("y0", spx + spw[:, :2]),
            ("y1", spw[:, 2:].sum(1))], 13,
           inits=[("shape", np.array([7, 4, 2, 2, 3], np.int64)),
                  ("parts", np.array([1, 4], np.int64)), ("w", spw),
                  ("wparts", np.array([2, 3], np.int64)), ("axes", np.array([1], np.int64))],
           atol=1e-6)
# Parts whose int64 sum wraps around to the dim: refused at the first part
# past it, before the sum overflows.
write_case("invalid_split_parts_past_the_dim",
           [helper.make_node("Split", ["x", "parts"], ["a", "b", "c", "d"], axis=1)],
           [("x", np.zeros((2, 5), np.float32))],
           [(o, (TensorProto.FLOAT, [2, 1])) for o in "abcd"], 13,
           inits=[("parts", np.array([1 << 62] * 3 + [(1 << 62) + 5], np.int64))],
           expect="split[0] is 4611686018427387904: with the parts before it, more than the "
                  "dim, 5")
# A chunk longer than the axis is one part, the whole axis (its part count
# overflowed when worked out as (dim + chunk - 1) / chunk).
stx = srng.standard_normal((4, 3)).astype(np.float32)
write_case("split_to_sequence_chunk_past_the_dim",
           [helper.make_node("SplitToSequence", ["x", "chunk"], ["s"], axis=0),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
           [("x", stx)], [("y", stx)], 13,
           inits=[("chunk", np.array((1 << 63) - 1, np.int64))])
# ScatterElements whose indices hold one value along the dims after the
# axis (an Expand of a value with 1s there, or such a constant) moves whole
# rows: a key/value cache written at each sequence's position, an add into
# rows that the element form would refuse (2^35 pairs of elements), and an
# Expand along a dim after the axis that does not qualify.
def scatter_elements_np(data, idx, upd, axis, add=False):
    out = data.copy()
    for pos in np.ndindex(*idx.shape):
        to = list(pos)
        to[axis] = idx[pos] % data.shape[axis]
        if add:
            out[tuple(to)] += upd[pos]
        else:
            out[tuple(to)] = upd[pos]
    return out


kv = srng.standard_normal((2, 2, 16, 8)).astype(np.float32)
kvu = srng.standard_normal((2, 2, 1, 8)).astype(np.float32)
kvpos = np.array([5, 9], np.int64).reshape(2, 1, 1, 1)
write_case("scatter_elements_rows_cache_update",
           [helper.make_node("Expand", ["pos", "shape"], ["at"]),
            helper.make_node("ScatterElements", ["cache", "at", "new"], ["y"], axis=2)],
           [("cache", kv), ("pos", kvpos), ("new", kvu)],
           [("y", scatter_elements_np(kv, np.broadcast_to(kvpos, (2, 2, 1, 8)), kvu, 2))], 16,
           inits=[("shape", np.array([2, 2, 1, 8], np.int64))])
rad = srng.standard_normal((64, 4096)).astype(np.float32)
radu = srng.standard_normal((32, 4096)).astype(np.float32)
radi = srng.integers(-64, 64, (32, 1)).astype(np.int64)
write_case("scatter_elements_rows_add",
           [helper.make_node("Expand", ["i", "shape"], ["at"]),
            helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], axis=0,
                             reduction="add")],
           [("x", rad), ("i", radi), ("u", radu)],
           [("y", scatter_elements_np(rad, np.broadcast_to(radi, (32, 4096)), radu, 0, True))],
           16, inits=[("shape", np.array([32, 4096], np.int64))], atol=1e-5)
rci = np.repeat(np.array([[3], [0], [3]], np.int64), 5, 1)
rcx = srng.standard_normal((4, 5)).astype(np.float32)
rcu = srng.standard_normal((3, 5)).astype(np.float32)
write_case("scatter_elements_rows_constant_indices",
           [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
           [("x", rcx), ("u", rcu)], [("y", scatter_elements_np(rcx, rci, rcu, 0))], 16,
           inits=[("i", rci)])
nqi = np.array([[1, 0, 2, 2]], np.int64)
nqx = srng.standard_normal((3, 3, 4)).astype(np.float32)
nqu = srng.standard_normal((2, 3, 4)).astype(np.float32)
write_case("scatter_elements_expanded_not_rows",
           [helper.make_node("Expand", ["i", "shape"], ["at"]),
            helper.make_node("ScatterElements", ["x", "at", "u"], ["y"], axis=1)],
           [("x", nqx), ("i", nqi), ("u", nqu)],
           [("y", scatter_elements_np(nqx, np.broadcast_to(nqi, (2, 3, 4)), nqu, 1))], 16,
           inits=[("shape", np.array([2, 3, 4], np.int64))])
# RMSNormalization (opset 23): over the last dim, over the dims from axis
# 1 with a scale of that shape, and one whose scale broadcasts along the
# normalized dims (so does a LayerNormalization's scale and bias); a node
# listing a second output is invalid.
rrng = np.random.default_rng(23)


def rms_np(x, scale, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt((x64 * x64).mean(axes, keepdims=True) + eps) * scale).astype(np.float32)


rmx = rrng.standard_normal((2, 5, 24)).astype(np.float32) * 3 + 1
rms = rrng.standard_normal(24).astype(np.float32)
write_case("rms_normalization_last_dim",
           [helper.make_node("RMSNormalization", ["x", "s"], ["y"], epsilon=1e-6)],
           [("x", rmx)], [("y", rms_np(rmx, rms, -1, 1e-6))], 23, inits=[("s", rms)])
rmx2 = rrng.standard_normal((3, 4, 6)).astype(np.float32)
rms2 = rrng.standard_normal((4, 6)).astype(np.float32)
write_case("rms_normalization_axis1",
           [helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=1)],
           [("x", rmx2), ("s", rms2)], [("y", rms_np(rmx2, rms2, 1, 1e-5))], 23)
rms3 = rrng.standard_normal((1, 6)).astype(np.float32)
write_case("rms_normalization_scale_broadcast",
           [helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-2)],
           [("x", rmx2)], [("y", rms_np(rmx2, rms3, -2, 1e-5))], 23, inits=[("s", rms3)])
lnb3 = rrng.standard_normal(6).astype(np.float32)
lnx3 = rmx2.astype(np.float64)
lnc3 = lnx3 - lnx3.mean((1, 2), keepdims=True)
write_case("layernorm_scale_bias_broadcast",
           [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=1)],
           [("x", rmx2)],
           [("y", (lnc3 / np.sqrt((lnc3 * lnc3).mean((1, 2), keepdims=True) + 1e-5) * rms3 +
                   lnb3).astype(np.float32))], 17, inits=[("s", rms3), ("b", lnb3)])
write_case("invalid_rms_normalization_two_outputs",
           [helper.make_node("RMSNormalization", ["x", "s"], ["y", "m"])],
           [("x", rmx)], [("y", rmx), ("m", (TensorProto.FLOAT, [2, 5, 1]))], 23,
           inits=[("s", rms)],
           expect="RMSNormalization has one output (Y); the node lists 2")
# Run-time indices outside their dim: a tuple with one selects zeros and
# scatters nothing, where the row arithmetic used to land it in a
# neighbouring row ((0, 3) of dims (4, 3) is row 3, which is (1, 0)).
orng = np.random.default_rng(29)
odata = orng.standard_normal((4, 3, 5)).astype(np.float32)
oidx = np.array([[1, 2], [0, 3], [2, -4], [3, -1]], np.int64)
oupd = orng.standard_normal((4, 5)).astype(np.float32)


def inside(t, dims):
    return all(-d <= v < d for v, d in zip(t, dims))


write_case("gathernd_runtime_index_outside_dim",
           [helper.make_node("GatherND", ["x", "i"], ["y"])], [("x", odata), ("i", oidx)],
           [("y", np.stack([odata[tuple(t)] if inside(t, (4, 3)) else np.zeros(5, np.float32)
                            for t in oidx]))], 13)
osc = odata.copy()
for t, u in zip(oidx, oupd):
    if inside(t, (4, 3)):
        osc[tuple(t)] = u
write_case("scatternd_runtime_index_outside_dim",
           [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
           [("x", odata), ("i", oidx), ("u", oupd)], [("y", osc)], 13)
oex = orng.standard_normal((3, 4)).astype(np.float32)
oei = np.array([[0, 4, -5, 2]], np.int64)
oeu = orng.standard_normal((1, 4)).astype(np.float32)
oey = oex.copy()
for j in range(4):
    if -4 <= oei[0, j] < 4:
        oey[0, oei[0, j]] += oeu[0, j]
write_case("scatter_elements_add_runtime_index_outside_dim",
           [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction="add")],
           [("x", oex), ("i", oei), ("u", oeu)], [("y", oey)], 16)

# NonZero and Compress of values known only at run time, compiled with
# pad_dynamic: NonZero gives a column per element, the nonzero elements'
# coordinates first (row-major order), then -1; Compress a slice per entry
# of the condition, the kept ones first, then NaN, -1 or false by type.
prng = np.random.default_rng(23)  # its own: the cases above keep their data


def nonzero_padded(x):
    out = np.full((x.ndim, x.size), -1, np.int64)
    nz = np.array(np.nonzero(x), np.int64).reshape(x.ndim, -1)
    out[:, :nz.shape[1]] = nz
    return out


def compress_padded(x, cond, axis, pad):
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = np.take(x, np.arange(len(cond)), axis=axis)
    kept = np.compress(cond, x, axis=axis)
    out = np.full(x.shape, pad, x.dtype)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(0, kept.shape[axis])
    out[tuple(idx)] = kept
    return out


pnx = prng.standard_normal((3, 4, 5)).astype(np.float32)
pnx[0, 1, 2] = np.nan  # NaN is not zero
pnx[2, 0, 0] = -0.0
write_case("padded_nonzero_runtime",
           [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["y"])],
           [("x", pnx)], [("y", nonzero_padded(np.maximum(np.nan_to_num(pnx, nan=1.0), 0)))],
           13)
pni = np.array([[0, 3, 0, -2], [0, 0, 5, 0], [7, 0, 0, 0]], np.int32)
write_case("padded_nonzero_int_input", [helper.make_node("NonZero", ["x"], ["y"])],
           [("x", pni)], [("y", nonzero_padded(pni))], 13)
pnb = prng.standard_normal(9).astype(np.float32)
write_case("padded_nonzero_bool_none_kept",
           [helper.make_node("Greater", ["x", "big"], ["b"]),
            helper.make_node("NonZero", ["b"], ["y"])],
           [("x", pnb)], [("y", nonzero_padded(pnb > 100))], 13,
           inits=[("big", np.array(100, np.float32))])
pcx = prng.standard_normal((3, 6, 2)).astype(np.float32)
pcc = np.array([0.5, -1, 2, -3, 0.1], np.float32)
write_case("padded_compress_runtime_condition_axis1",
           [helper.make_node("Greater", ["c", "zero"], ["cb"]),
            helper.make_node("Compress", ["x", "cb"], ["y"], axis=1)],
           [("x", pcx), ("c", pcc)], [("y", compress_padded(pcx, pcc > 0, 1, np.nan))], 13,
           inits=[("zero", np.array(0, np.float32))])
pfx = (np.arange(10, dtype=np.int64).reshape(2, 5) * 7 - 20)
pfc = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 1], bool)
write_case("padded_compress_flattened_int64", [helper.make_node("Compress", ["x", "c"], ["y"])],
           [("x", pfx), ("c", pfc)], [("y", compress_padded(pfx, pfc, None, -1))], 13)
pbx = prng.random((4, 3)) > 0.5
pbc = np.array([0, 1, 1, 0], bool)
write_case("padded_compress_bool_data_axis0",
           [helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
           [("x", pbx), ("c", pbc)], [("y", compress_padded(pbx, pbc, 0, False))], 13)
write_case("refuse_nonzero_runtime",
           [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["y"])],
           [("x", pnx)], [("y", (TensorProto.INT64, [3, 60]))], 13,
           expect="input 0 ('r') is known only at run time, and with it how many elements are "
                  "nonzero: compile with --pad-dynamic")
write_case("refuse_padded_nonzero_read",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Tile", ["n", "reps"], ["y"], name="reader")],
           [("x", pni)], [("y", (TensorProto.INT64, [2, 24]))], 13,
           inits=[("reps", np.array([1, 2], np.int64))],
           expect="node 'reader' (Tile): input 0 ('n') is padded (its entries past the results "
                  "along dim 1 are padding: NaN, -1 or false by type), and Tile is not among "
                  "the ops that keep padding apart ('lightmetal compile --help' lists them): "
                  "make it a graph output, or read it in the program that reads the binary's "
                  "outputs")
# PyTorch's exports: torch.nonzero (NonZero, then Transpose: a row per
# element) and x[mask] (then GatherND: the kept values, then NaN).
pmx = prng.standard_normal((3, 5)).astype(np.float32)
pnzt = nonzero_padded(pmx > 0.5).T.copy()
write_case("padded_nonzero_transposed",
           [helper.make_node("Greater", ["x", "half"], ["m"]),
            helper.make_node("NonZero", ["m"], ["n"]),
            helper.make_node("Transpose", ["n"], ["y"], perm=[1, 0])],
           [("x", pmx)], [("y", pnzt)], 13, inits=[("half", np.array(0.5, np.float32))])
pms = np.full(15, np.nan, np.float32)
pms[:int((pmx > 0.5).sum())] = pmx[pmx > 0.5]
write_case("padded_masked_select",
           [helper.make_node("Greater", ["x", "half"], ["m"]),
            helper.make_node("NonZero", ["m"], ["n"]),
            helper.make_node("Transpose", ["n"], ["t"], perm=[1, 0]),
            helper.make_node("GatherND", ["x", "t"], ["y"])],
           [("x", pmx)], [("y", pms)], 13, inits=[("half", np.array(0.5, np.float32))])
# Compress's padded output read by a Gather along another dim: still
# padded along the compressed one.
pcg = compress_padded(pcx, pcc > 0, 1, np.nan)[:, :, 1]
write_case("padded_compress_then_gather",
           [helper.make_node("Greater", ["c", "zero"], ["cb"]),
            helper.make_node("Compress", ["x", "cb"], ["k"], axis=1),
            helper.make_node("Gather", ["k", "one"], ["y"], axis=2)],
           [("x", pcx), ("c", pcc)], [("y", pcg)], 13,
           inits=[("zero", np.array(0, np.float32)), ("one", np.array(1, np.int64))])
write_case("refuse_padded_gather_along_padded_dim",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Gather", ["n", "zero"], ["y"], axis=1, name="g")],
           [("x", pni)], [("y", (TensorProto.INT64, [2]))], 13,
           inits=[("zero", np.array(0, np.int64))],
           expect="node 'g' (Gather): input 0 ('n') is padded along dim 1, the axis it gathers "
                  "along: gather along another dim, or in the program that reads the output")
write_case("refuse_padded_compress_uint8",
           [helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
           [("x", np.arange(8, dtype=np.uint8).reshape(4, 2)), ("c", pbc)],
           [("y", (TensorProto.UINT8, [4, 2]))], 13,
           expect="its output is padded, which needs the data's element type to be a float, a "
                  "signed integer or bool (given uint8)")

# Unique of values known only at run time, compiled with pad_dynamic (the
# flattened input): Y, indices and counts get an entry per element, the
# groups' first, then padding (NaN, -1 or false; -1); inverse_indices its
# exact size. NaNs make one group, as NumPy's unique.


def unique_padded(x, sorted_):
    flat = x.reshape(-1)
    u, idx, inv, cnt = np.unique(flat, return_index=True, return_inverse=True,
                                 return_counts=True)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        u, idx, cnt, inv = u[order], idx[order], cnt[order], rank[inv]
    pad = np.nan if x.dtype.kind == "f" else (False if x.dtype == bool else -1)
    y = np.full(flat.size, pad, x.dtype)
    y[:len(u)] = u
    first = np.full(flat.size, -1, np.int64)
    first[:len(idx)] = idx
    counts = np.full(flat.size, -1, np.int64)
    counts[:len(cnt)] = cnt
    return [("y", y), ("first", first), ("inverse", inv.astype(np.int64)), ("counts", counts)]


puf = (prng.integers(0, 5, (3, 4)) * 0.5).astype(np.float32)
for s_ in (1, 0):
    write_case("padded_unique_runtime_sorted%d" % s_,
               [helper.make_node("Relu", ["x"], ["r"]),
                helper.make_node("Unique", ["r"], ["y", "first", "inverse", "counts"],
                                 sorted=s_)],
               [("x", puf)], unique_padded(puf, s_), 13)
pun = np.array([2, np.nan, 1, 2, np.nan, -0.0, 0.0, 1], np.float32)
write_case("padded_unique_nan_and_signed_zero",
           [helper.make_node("Identity", ["x"], ["xi"]),
            helper.make_node("Unique", ["xi"], ["y", "first", "inverse", "counts"])],
           [("x", pun)], unique_padded(pun, 1), 13)
pui = prng.integers(-3, 3, (11,)).astype(np.int64)
write_case("padded_unique_int64_axis0_y_and_inverse",
           [helper.make_node("Unique", ["x"], ["y", "", "inverse"], axis=0, sorted=0)],
           [("x", pui)], [unique_padded(pui, 0)[0], unique_padded(pui, 0)[2]], 13)
pub = np.array([[True, False], [True, True]])
write_case("padded_unique_bool",
           [helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"], sorted=0)],
           [("x", pub)], unique_padded(pub, 0), 13)
# inverse_indices has its exact size: a node may read it.
write_case("padded_unique_inverse_read",
           [helper.make_node("Unique", ["x"], ["y", "", "inverse"]),
            helper.make_node("Cast", ["inverse"], ["inv_f"], to=TensorProto.FLOAT)],
           [("x", pui)], [unique_padded(pui, 1)[0],
                          ("inv_f", unique_padded(pui, 1)[2][1].astype(np.float32))], 13)
write_case("refuse_unique_runtime",
           [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Unique", ["r"], ["y"])],
           [("x", puf)], [("y", (TensorProto.FLOAT, [12]))], 13,
           expect="input 0 ('r') is known only at run time, and with it how many distinct values "
                  "there are: compile with --pad-dynamic")
write_case("refuse_padded_unique_axis_2d",
           [helper.make_node("Unique", ["x"], ["y"], axis=1)],
           [("x", puf)], [("y", (TensorProto.FLOAT, [3, 4]))], 13,
           expect="with run-time values, Unique along an axis of a 2-D input is not supported")
# Counts read by an element-wise op: -1 stays the padding.
pucn = unique_padded(pui, 1)[3][1]
write_case("padded_unique_counts_negated",
           [helper.make_node("Unique", ["x"], ["y", "", "", "counts"]),
            helper.make_node("Neg", ["counts"], ["z"], name="neg")],
           [("x", pui)], [("z", np.where(pucn >= 0, -pucn, -1))], 13)
# Readers that keep padding apart by leaving the padded dim whole:
# PyTorch's torch.where(mask) (NonZero, Transpose, Split, Squeeze) and
# nonzero().squeeze(1) feeding index_select (Unsqueeze and Slice too).
pwm = prng.standard_normal((3, 4)).astype(np.float32)
pwr, pwc = np.where(pwm > 0.5)
pw_rows = np.full(12, -1, np.int64)
pw_rows[:len(pwr)] = pwr
pw_cols = np.full(12, -1, np.int64)
pw_cols[:len(pwc)] = pwc
write_case("padded_torch_where",
           [helper.make_node("Greater", ["x", "half"], ["m"]),
            helper.make_node("NonZero", ["m"], ["n"]),
            helper.make_node("Transpose", ["n"], ["t"], perm=[1, 0]),
            helper.make_node("Split", ["t"], ["r1", "c1"], axis=1),
            helper.make_node("Squeeze", ["r1", "one"], ["rows"]),
            helper.make_node("Squeeze", ["c1", "one"], ["cols"])],
           [("x", pwm)], [("rows", pw_rows), ("cols", pw_cols)], 13,
           inits=[("half", np.array(0.5, np.float32)), ("one", np.array([1], np.int64))])
pv = prng.standard_normal(7).astype(np.float32)
pfeat = prng.standard_normal((7, 3)).astype(np.float32)
pk = np.nonzero(pv > 0.2)[0]
psel = np.full((1, 7, 3), np.nan, np.float32)
psel[0, :len(pk)] = pfeat[pk]
write_case("padded_nonzero_squeeze_slice_index_select",
           [helper.make_node("Greater", ["v", "lim"], ["m"]),
            helper.make_node("NonZero", ["m"], ["n"]),
            helper.make_node("Transpose", ["n"], ["t"], perm=[1, 0]),
            helper.make_node("Slice", ["t", "z", "big", "ax1"], ["s"]),
            helper.make_node("Squeeze", ["s", "ax1"], ["idx"]),
            helper.make_node("Gather", ["feat", "idx"], ["g"], axis=0),
            helper.make_node("Unsqueeze", ["g", "z"], ["y"])],
           [("v", pv), ("feat", pfeat)], [("y", psel)], 13,
           inits=[("lim", np.array(0.2, np.float32)), ("z", np.array([0], np.int64)),
                  ("big", np.array([100], np.int64)), ("ax1", np.array([1], np.int64))])
# A slice from the front of the padded dim keeps the results first.
write_case("padded_slice_into_padded_dim",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Slice", ["n", "z", "two", "one"], ["y"], name="cut")],
           [("x", pni)], [("y", nonzero_padded(pni)[:, :2].copy())], 13,
           inits=[("z", np.array([0], np.int64)), ("two", np.array([2], np.int64)),
                  ("one", np.array([1], np.int64))])
write_case("refuse_padded_split_padded_dim",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Split", ["n"], ["a", "b"], axis=1, name="halves")],
           [("x", pni)], [("a", (TensorProto.INT64, [2, 6])), ("b", (TensorProto.INT64, [2, 6]))],
           13, expect="node 'halves' (Split): input 0 ('n') is padded along dim 1, which it "
                      "splits")
write_case("refuse_padded_unsqueeze_too_many_dims",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Unsqueeze", ["n", "axes"], ["y"], name="up")],
           [("x", pni)], [("y", (TensorProto.INT64, [2, 12]))], 13,
           inits=[("axes", np.arange(7, dtype=np.int64))],
           expect="node 'up' (Unsqueeze): the result would have rank 9; at most 8")
write_case("refuse_padded_gather_result_rank_9",
           [helper.make_node("NonZero", ["x"], ["n"]),
            helper.make_node("Gather", ["table", "n"], ["y"], axis=7, name="wide")],
           [("x", pni[:2, :3].copy())], [("y", (TensorProto.FLOAT, [2, 6]))], 13,
           inits=[("table", np.zeros((1, 1, 1, 1, 1, 1, 1, 4), np.float32))],
           expect="node 'wide' (Gather): the result would have rank 9")

# Computing from padded values (pad_dynamic): element-wise ops, reductions,
# matrix products and the Softmax-like ops. Along the padded dim the
# padding takes no part (a sum of x[mask] is the sum of the selected
# values, a mean divides by their number); along other dims each result is
# its entries', and padding stays where the entries were padding.
pq = np.random.default_rng(29)  # its own: the cases above keep their data


def padded_to(v, length, pad, axis=0):
    """v padded with `pad` to `length` entries along `axis`."""
    shape = list(v.shape)
    shape[axis] = length
    out = np.full(shape, pad, v.dtype)
    idx = [slice(None)] * v.ndim
    idx[axis] = slice(0, v.shape[axis])
    out[tuple(idx)] = v
    return out


def masked_select_nodes(x, out, lim="lim"):
    """PyTorch's export of x[x > lim]: NonZero, Transpose, GatherND."""
    return [helper.make_node("Greater", [x, lim], [out + "_m"]),
            helper.make_node("NonZero", [out + "_m"], [out + "_n"]),
            helper.make_node("Transpose", [out + "_n"], [out + "_t"], perm=[1, 0]),
            helper.make_node("GatherND", [x, out + "_t"], [out])]


pqx = pq.standard_normal((4, 6)).astype(np.float32)
pqs = pqx[pqx > 0.3]
pq_lim = [("lim", np.array(0.3, np.float32))]
write_case("padded_masked_reductions",
           masked_select_nodes("x", "s") +
           [helper.make_node("ReduceSum", ["s"], ["sum"], keepdims=0),
            helper.make_node("ReduceMean", ["s"], ["mean"], keepdims=0),
            helper.make_node("ReduceMax", ["s"], ["max"], keepdims=0),
            helper.make_node("ReduceMin", ["s"], ["min"], keepdims=1),
            helper.make_node("ReduceProd", ["s"], ["prod"], keepdims=0),
            helper.make_node("ReduceL2", ["s"], ["l2"], keepdims=0),
            helper.make_node("ReduceLogSumExp", ["s"], ["lse"], keepdims=0),
            helper.make_node("ArgMax", ["s"], ["amax"], axis=0, keepdims=0),
            helper.make_node("ArgMin", ["s"], ["amin"], axis=0, keepdims=1)],
           [("x", pqx)],
           [("sum", np.array(pqs.sum(), np.float32)), ("mean", np.array(pqs.mean(), np.float32)),
            ("max", np.array(pqs.max(), np.float32)), ("min", np.array([pqs.min()], np.float32)),
            ("prod", np.array(pqs.prod(), np.float32)),
            ("l2", np.array(np.sqrt((pqs * pqs).sum()), np.float32)),
            ("lse", np.array(np.log(np.exp(pqs).sum()), np.float32)),
            ("amax", np.array(pqs.argmax(), np.int64)),
            ("amin", np.array([pqs.argmin()], np.int64))], 13, inits=pq_lim)
pq_pos = pqs > 1.0
write_case("padded_masked_eltwise",
           masked_select_nodes("x", "s") +
           [helper.make_node("Mul", ["s", "two"], ["s2"]),
            helper.make_node("Add", ["s2", "one"], ["lin"]),
            helper.make_node("Greater", ["s", "one"], ["pos"]),
            helper.make_node("Cast", ["pos"], ["pos_i"], to=TensorProto.INT64),
            helper.make_node("ReduceSum", ["pos_i"], ["count"], keepdims=0),
            helper.make_node("Mul", ["s", "ten"], ["s10"]),
            helper.make_node("Cast", ["s10"], ["tenths"], to=TensorProto.INT32),
            helper.make_node("Where", ["pos", "s", "zero"], ["big"]),
            helper.make_node("Clip", ["s", "zero", "one"], ["clipped"])],
           [("x", pqx)],
           [("lin", padded_to(pqs * 2 + 1, 24, np.nan)), ("pos", padded_to(pq_pos, 24, False)),
            ("count", np.array(pq_pos.sum(), np.int64)),
            ("tenths", padded_to((pqs * 10).astype(np.int32), 24, -1)),
            ("big", padded_to(np.where(pq_pos, pqs, 0).astype(np.float32), 24, np.nan)),
            ("clipped", padded_to(np.clip(pqs, 0, 1), 24, np.nan))], 13,
           inits=pq_lim + [("two", np.array(2, np.float32)), ("one", np.array(1, np.float32)),
                           ("ten", np.array(10, np.float32)), ("zero", np.array(0, np.float32))])
# Rows kept by a run-time condition (Compress along 0) through a linear
# layer: each padded row stays padding; along the rows the padding is left
# out.
pqr = pq.standard_normal((6, 4)).astype(np.float32)
pqc = np.array([0.4, -1, 0.2, 0.7, -0.3, 0.9], np.float32)
pqw = pq.standard_normal((4, 3)).astype(np.float32)
pqb = pq.standard_normal(3).astype(np.float32)
pq_rows = pqr[pqc > 0]
pq_m = pq_rows @ pqw
pq_sm = np.exp(pq_m - pq_m.max(1, keepdims=True))
pq_sm /= pq_sm.sum(1, keepdims=True)
write_case("padded_compress_rows_matmul",
           [helper.make_node("Greater", ["c", "zero"], ["cb"]),
            helper.make_node("Compress", ["x", "cb"], ["k"], axis=0),
            helper.make_node("MatMul", ["k", "w"], ["m"]),
            helper.make_node("Gemm", ["k", "w", "bias"], ["g"]),
            helper.make_node("Softmax", ["m"], ["sm"], axis=1),
            helper.make_node("ArgMax", ["m"], ["am"], axis=1, keepdims=0),
            helper.make_node("ReduceSum", ["m", "ax1"], ["rs"], keepdims=1),
            helper.make_node("ReduceMean", ["k"], ["col_mean"], axes=[0], keepdims=1),
            helper.make_node("ReduceMean", ["k"], ["all_mean"], keepdims=0)],
           [("x", pqr), ("c", pqc)],
           [("m", padded_to(pq_m, 6, np.nan)), ("g", padded_to(pq_m + pqb, 6, np.nan)),
            ("sm", padded_to(pq_sm.astype(np.float32), 6, np.nan)),
            ("am", padded_to(pq_m.argmax(1), 6, -1)),
            ("rs", padded_to(pq_m.sum(1, keepdims=True), 6, np.nan)),
            ("col_mean", pq_rows.mean(0, keepdims=True)),
            ("all_mean", np.array(pq_rows.mean(), np.float32))], 13,
           inits=[("zero", np.array(0, np.float32)), ("w", pqw), ("bias", pqb),
                  ("ax1", np.array([1], np.int64))])
# Reshapes that keep the padded dim whole, and a reduction over the others.
pqf = pq.standard_normal((5, 2, 3)).astype(np.float32)
pqfc = np.array([1, 0, 1, 1, 0], bool)
pq_kept = pqf[pqfc]
write_case("padded_compress_flatten_reshape",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("Flatten", ["k"], ["flat"], axis=1),
            helper.make_node("Reshape", ["flat", "shape"], ["y"]),
            helper.make_node("ReduceMax", ["k"], ["top"], axes=[1, 2], keepdims=0)],
           [("x", pqf), ("c", pqfc)],
           [("y", padded_to(pq_kept.reshape(3, 3, 2), 5, np.nan)),
            ("top", padded_to(pq_kept.max((1, 2)), 5, np.nan))], 13,
           inits=[("shape", np.array([5, 3, 2], np.int64))])
# A padded batch of images through ops that work entry by entry (Mask
# R-CNN's mask head on its selected regions): convolutions, a batch norm,
# pooling, a Pad and a Resize of the other dims, an instance norm; and
# torchvision's mask_prob[arange(len(x)), labels], whose arange is as long
# as the padded batch and so padded alike.
pbi_rng = np.random.default_rng(61)  # its own: the cases below keep their data
pqi = pbi_rng.standard_normal((5, 3, 6, 6)).astype(np.float32)
pqic = np.array([0.5, -1, 0.3, 0.8, -0.2], np.float32)
pqi_w = (pbi_rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
pqi_b = pbi_rng.standard_normal(4).astype(np.float32)
pqi_bn = [pbi_rng.uniform(0.5, 1.5, 4).astype(np.float32), pbi_rng.standard_normal(4).astype(np.float32),
          pbi_rng.standard_normal(4).astype(np.float32), pbi_rng.uniform(0.5, 1.5, 4).astype(np.float32)]
pqi_tw = (pbi_rng.standard_normal((4, 2, 2, 2)) * 0.3).astype(np.float32)
pqi_is = pbi_rng.uniform(0.5, 1.5, 4).astype(np.float32)
pqi_ib = pbi_rng.standard_normal(4).astype(np.float32)
with torch.no_grad():
    tt = torch.from_numpy
    pqi_k = tt(pqi[pqic > 0])
    pqi_c = torch.nn.functional.conv2d(pqi_k, tt(pqi_w), tt(pqi_b), padding=1)
    pqi_c = torch.nn.functional.batch_norm(pqi_c, tt(pqi_bn[2]), tt(pqi_bn[3]), tt(pqi_bn[0]),
                                           tt(pqi_bn[1]), eps=1e-5).relu()
    pqi_p = torch.nn.functional.max_pool2d(pqi_c, 2)
    pqi_p = torch.nn.functional.pad(pqi_p, (1, 1, 1, 1))
    pqi_r = torch.nn.functional.interpolate(pqi_p, scale_factor=2, mode="nearest")
    pqi_y = torch.nn.functional.instance_norm(pqi_r, weight=tt(pqi_is), bias=tt(pqi_ib), eps=1e-5)
    pqi_g = torch.nn.functional.conv_transpose2d(pqi_c, tt(pqi_tw), stride=2).mean((2, 3),
                                                                                   keepdim=True)
    pqi_red = pqi_k.mean((2, 3))
pqi_red = pqi_red.numpy()
write_case("padded_compress_images",
           [helper.make_node("Greater", ["c", "zero"], ["cb"]),
            helper.make_node("Compress", ["x", "cb"], ["k"], axis=0),
            helper.make_node("Conv", ["k", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["conv", "bn_s", "bn_b", "bn_m", "bn_v"],
                             ["bn"]),
            helper.make_node("Relu", ["bn"], ["relu"]),
            helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Pad", ["pool", "pads"], ["padded"]),
            helper.make_node("Resize", ["padded", "", "scales"], ["big"], mode="nearest"),
            helper.make_node("InstanceNormalization", ["big", "in_s", "in_b"], ["y"]),
            helper.make_node("ConvTranspose", ["relu", "tw"], ["up"], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["up"], ["g"]),
            # mask_prob[arange(len(k)), labels] as torchvision exports it
            helper.make_node("ReduceMean", ["k"], ["red"], axes=[2, 3], keepdims=0),
            helper.make_node("ArgMax", ["red"], ["lab"], axis=1, keepdims=0),
            helper.make_node("Shape", ["k"], ["ks"]),
            helper.make_node("Gather", ["ks", "zero_i"], ["n"], axis=0),
            helper.make_node("Range", ["zero_i", "n", "one_i"], ["ar"]),
            helper.make_node("Mul", ["ar", "three"], ["row"]),
            helper.make_node("Add", ["row", "lab"], ["flat_idx"]),
            helper.make_node("Reshape", ["red", "minus1"], ["red_flat"]),
            helper.make_node("Gather", ["red_flat", "flat_idx"], ["picked"], axis=0)],
           [("x", pqi), ("c", pqic)],
           [("y", padded_to(pqi_y.numpy(), 5, np.nan)), ("g", padded_to(pqi_g.numpy(), 5, np.nan)),
            ("picked", padded_to(pqi_red.max(1), 5, np.nan))], 13,
           inits=[("zero", np.array(0, np.float32)), ("w", pqi_w), ("b", pqi_b),
                  ("bn_s", pqi_bn[0]), ("bn_b", pqi_bn[1]), ("bn_m", pqi_bn[2]),
                  ("bn_v", pqi_bn[3]), ("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
                  ("scales", np.array([1, 1, 2, 2], np.float32)), ("in_s", pqi_is),
                  ("in_b", pqi_ib), ("tw", pqi_tw), ("zero_i", np.array(0, np.int64)),
                  ("one_i", np.array(1, np.int64)), ("three", np.array(3, np.int64)),
                  ("minus1", np.array([-1], np.int64))], atol=1e-5)
# ... and what works across the batch is refused, naming it.
for tag, node, inits_, expect in [
        ("pad", helper.make_node("Pad", ["k", "pads"], ["y"]),
         [("pads", np.array([1, 0, 0, 0, 0, 0, 0, 0], np.int64))],
         "Pad keeps padding apart when its input 0 is padded along dim 0 (a batch, entry by "
         "entry), but it pads dim 0"),
        ("pad_after", helper.make_node("Pad", ["k", "pads"], ["y"]),
         [("pads", np.array([0, 0, 0, 0, 2, 0, 0, 0], np.int64))],
         "is padded along dim 0, which it pads (from 5 entries to 7)"),
        ("resize", helper.make_node("Resize", ["k", "", "scales"], ["y"], mode="nearest"),
         [("scales", np.array([2, 1, 1, 1], np.float32))],
         "is padded along dim 0, which it resizes (from 5 entries to 10)"),
        ("mvn", helper.make_node("MeanVarianceNormalization", ["k"], ["y"]), [],
         "but it normalizes along dim 0")]:
    write_case("refuse_padded_batch_" + tag,
               [helper.make_node("Greater", ["c", "zero"], ["cb"]),
                helper.make_node("Compress", ["x", "cb"], ["k"], axis=0), node],
               [("x", pqi), ("c", pqic)], [("y", (F, ["n", 3, 6, 6]))], 13,
               inits=[("zero", np.array(0, np.float32))] + inits_, expect=expect)
# Along the padded dim: softmax and running sums over the selected values.
pq_e = np.exp(pqs - pqs.max())
pq_cs = np.cumsum(pqs).astype(np.float32)
write_case("padded_masked_softmax_cumsum",
           masked_select_nodes("x", "s") +
           [helper.make_node("Softmax", ["s"], ["sm"], axis=0),
            helper.make_node("LogSoftmax", ["s"], ["lsm"], axis=0),
            helper.make_node("CumSum", ["s", "ax0"], ["cs"]),
            helper.make_node("CumSum", ["s", "ax0"], ["csr"], reverse=1),
            helper.make_node("CumSum", ["s", "ax0"], ["cse"], exclusive=1)],
           [("x", pqx)],
           [("sm", padded_to((pq_e / pq_e.sum()).astype(np.float32), 24, np.nan)),
            ("lsm", padded_to((pqs - pqs.max() - np.log(pq_e.sum())).astype(np.float32), 24,
                              np.nan)),
            ("cs", padded_to(pq_cs, 24, np.nan)),
            ("csr", padded_to(np.cumsum(pqs[::-1])[::-1].astype(np.float32), 24, np.nan)),
            ("cse", padded_to(np.concatenate([[0], pq_cs[:-1]]).astype(np.float32), 24,
                              np.nan))], 13,
           inits=pq_lim + [("ax0", np.array(0, np.int64))])
# Two values selected with the same mask meet entry for entry.
pqy = pq.standard_normal((4, 6)).astype(np.float32)
write_case("padded_two_selects_one_mask",
           masked_select_nodes("x", "s") +
           [helper.make_node("GatherND", ["y", "s_t"], ["sy"]),
            helper.make_node("Mul", ["s", "sy"], ["prod"]),
            helper.make_node("ReduceSum", ["prod"], ["dot"], keepdims=0)],
           [("x", pqx), ("y", pqy)],
           [("prod", padded_to(pqs * pqy[pqx > 0.3], 24, np.nan)),
            ("dot", np.array((pqs * pqy[pqx > 0.3]).sum(), np.float32))], 13, inits=pq_lim)
# A detector's selection reduced: the largest batch, class and box index
# picked (opset 11: axes an attribute).
pq_nms = nms_padded(nmb, nms_s, 5, 0.5, 0.0)
write_case("padded_nms_reduce_max",
           [helper.make_node("NonMaxSuppression", ["boxes", "s", "m", "iou", "thr"], ["sel"]),
            helper.make_node("ReduceMax", ["sel"], ["top"], axes=[0], keepdims=0)],
           [("boxes", nmb), ("s", nms_s)],
           [("top", pq_nms[pq_nms[:, 0] >= 0].max(0))], 11,
           inits=[("m", np.array([5], np.int64)), ("iou", np.array([0.5], np.float32)),
                  ("thr", np.array([0.0], np.float32))])
write_case("refuse_padded_meets_full_dim",
           masked_select_nodes("x", "s") + [helper.make_node("Add", ["s", "ramp"], ["y"],
                                                             name="ramp_add")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24]))], 13,
           inits=pq_lim + [("ramp", np.arange(24, dtype=np.float32))],
           expect="node 'ramp_add' (Add): input 0 ('s') is padded along dim 0, and input 1 "
                  "('ramp') has 24 entries along it (only a value of one entry there, or one "
                  "padded by the same op, may meet padding)")
write_case("refuse_padded_two_masks",
           masked_select_nodes("x", "a") + masked_select_nodes("y", "b") +
           [helper.make_node("Add", ["a", "b"], ["z"], name="mix")],
           [("x", pqx), ("y", pqy)], [("z", (TensorProto.FLOAT, [24]))], 13, inits=pq_lim,
           expect="node 'mix' (Add): inputs 0 ('a') and 1 ('b') are padded by different ops "
                  "(their results may not line up)")
write_case("refuse_padded_argmax_last_index",
           masked_select_nodes("x", "s") +
           [helper.make_node("ArgMax", ["s"], ["am"], axis=0, select_last_index=1, name="last")],
           [("x", pqx)], [("am", (TensorProto.INT64, [1]))], 13, inits=pq_lim,
           expect="node 'last' (ArgMax): input 0 ('s') is padded along dim 0, the axis it works "
                  "along, where with select_last_index a result tied with the padding's "
                  "stand-in would lose to it")
# A reshape that merges the padded dim with the dims after it (boxes
# [N, C, 4] as [N * C, 4]): padded along the merged dim, each record entry
# repeated; merging it with a dim before it is refused.
pq_rows = pqr[pqc > 0]
write_case("padded_reshape_merges",
           [helper.make_node("Greater", ["c", "zero"], ["m"]),
            helper.make_node("Compress", ["x", "m"], ["k"], axis=0),
            helper.make_node("Reshape", ["k", "shape"], ["y"]),
            helper.make_node("ReduceSum", ["y"], ["ysum"], keepdims=0)],
           [("x", pqr), ("c", pqc)],
           [("y", padded_to(pq_rows.reshape(-1), 24, np.nan)),
            ("ysum", np.array(pq_rows.sum(), np.float32))], 13,
           inits=[("shape", np.array([24], np.int64)), ("zero", np.array(0, np.float32))],
           atol=1e-5)
write_case("refuse_padded_reshape_merges",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 0]),
            helper.make_node("Reshape", ["kt", "shape"], ["y"], name="merge")],
           [("x", pqr), ("c", pqfc[:1].repeat(6))], [("y", (TensorProto.FLOAT, [24]))], 13,
           inits=[("shape", np.array([24], np.int64))],
           expect="node 'merge' (Reshape): input 0 ('kt') is padded along dim 1, which it merges "
                  "with dims before it or splits (a reshape must keep that dim whole, or merge it "
                  "with the dims after it)")
write_case("refuse_padded_matmul_contracted",
           masked_select_nodes("x", "s") + [helper.make_node("MatMul", ["s", "w"], ["y"],
                                                             name="mm")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [3]))], 13,
           inits=pq_lim + [("w", np.ones((24, 3), np.float32))],
           expect="node 'mm' (MatMul): input 0 ('s') is padded along dim 0: a matrix product "
                  "keeps padding apart only in the rows (or batch dims) of its first input")
write_case("refuse_padded_cast_uint8",
           masked_select_nodes("x", "s") + [helper.make_node("Cast", ["s"], ["y"],
                                                             to=TensorProto.UINT8, name="u8")],
           [("x", pqx)], [("y", (TensorProto.UINT8, [24]))], 13, inits=pq_lim,
           expect="node 'u8' (Cast): its output is padded, which needs the result's element "
                  "type to be a float, a signed integer or bool (given uint8)")
# Nothing selected: a sum of no values is 0, a mean NaN, a max -inf, an
# ArgMax 0, a softmax all padding.
write_case("padded_masked_none_selected",
           masked_select_nodes("x", "s", "big") +
           [helper.make_node("ReduceSum", ["s"], ["sum"], keepdims=0),
            helper.make_node("ReduceMean", ["s"], ["mean"], keepdims=0),
            helper.make_node("ReduceMax", ["s"], ["max"], keepdims=0),
            helper.make_node("ArgMax", ["s"], ["am"], axis=0, keepdims=0),
            helper.make_node("Softmax", ["s"], ["sm"], axis=0),
            helper.make_node("ReduceLogSumExp", ["s"], ["lse"], keepdims=0)],
           [("x", pqx)],
           [("sum", np.array(0, np.float32)), ("mean", np.array(np.nan, np.float32)),
            ("max", np.array(-np.inf, np.float32)), ("am", np.array(0, np.int64)),
            ("sm", np.full(24, np.nan, np.float32)), ("lse", np.array(-np.inf, np.float32))], 13,
           inits=[("big", np.array(100, np.float32))])
# LogSumExp of infinities, on the device and folded: log(sum(exp(x))) is
# -inf for a row of -inf and +inf for a row holding +inf (the max it is
# shifted by must not make inf - inf).
lse_x = np.array([[-np.inf, -np.inf, -np.inf], [1, np.inf, 2], [1, 2, 3], [-np.inf, 0, 1]],
                 np.float32)
with np.errstate(divide="ignore"):
    lse_want = np.log(np.exp(lse_x.astype(np.float64)).sum(1)).astype(np.float32)
write_case("reduce_log_sum_exp_infinite",
           [helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=0),
            helper.make_node("ReduceLogSumExp", ["k"], ["yk"], axes=[1], keepdims=0)],
           [("x", lse_x)], [("y", lse_want), ("yk", lse_want)], 13, inits=[("k", lse_x)])
# Indices kept by a run-time Compress may hold -1 (the last entry): where
# the result is padding is the Compress's own record, not the value -1.
pq_idx = np.array([2, -1, 0, -1, 1], np.int64)
pq_keep = np.array([True, True, False, True, False])
pq_tab = np.array([10, 20, 30, 40], np.float32)
write_case("padded_compress_kept_minus_one_index",
           [helper.make_node("Compress", ["idx", "keep"], ["k"], axis=0),
            helper.make_node("Gather", ["tab", "k"], ["y"], axis=0)],
           [("idx", pq_idx), ("keep", pq_keep)],
           [("y", padded_to(pq_tab[pq_idx[pq_keep]], 5, np.nan))], 13, inits=[("tab", pq_tab)])

# A detector's post-processing as torchvision writes it, all on padded
# values: boxes scoring above a threshold (torch.where, then indexing),
# small ones removed (a mask of the padded boxes, NonZero of it), NMS of
# what is left, the best few kept (a slice from the front) and gathered.
# Also TopK of the kept scores.
pd_r = np.random.default_rng(31)
pd_xy = pd_r.uniform(0, 40, (16, 2)).astype(np.float32)
pd_wh = pd_r.uniform(0.5, 12, (16, 2)).astype(np.float32)
pd_boxes = np.concatenate([pd_xy, pd_xy + pd_wh], 1)
pd_boxes[3] = pd_boxes[5] + 0.5  # two close pairs for NMS to suppress
pd_boxes[9] = pd_boxes[2] - 0.25
pd_scores = pd_r.uniform(0, 1, 16).astype(np.float32)
pd_scores[[3, 9]] = [0.97, 0.95]
for pd_thr in (0.3, 0.9):
    pd_keep = pd_scores > pd_thr
    pd_b1, pd_s1 = pd_boxes[pd_keep], pd_scores[pd_keep]
    pd_ok = ((pd_b1[:, 2] - pd_b1[:, 0]) >= 2) & ((pd_b1[:, 3] - pd_b1[:, 1]) >= 2)
    pd_b2, pd_s2 = pd_b1[pd_ok], pd_s1[pd_ok]
    pd_sel = nms_np(pd_b2[None].astype(np.float64), pd_s2[None, None], 16, 0.5, -np.inf)
    pd_top = pd_sel[:5, 2]
    pd_k3 = np.argsort(-pd_s1, kind="stable")[:3]
    write_case("padded_detector_postprocess_thr%g" % pd_thr,
               [helper.make_node("Greater", ["scores", "thr"], ["keep"]),
                helper.make_node("NonZero", ["keep"], ["nz"]),
                helper.make_node("Squeeze", ["nz", "ax0"], ["inds"]),
                helper.make_node("Gather", ["boxes", "inds"], ["b1"], axis=0),
                helper.make_node("Gather", ["scores", "inds"], ["s1"], axis=0),
                helper.make_node("Slice", ["b1", "c0", "c1", "ax1"], ["x0"]),
                helper.make_node("Slice", ["b1", "c1", "c2", "ax1"], ["y0"]),
                helper.make_node("Slice", ["b1", "c2", "c3", "ax1"], ["x1"]),
                helper.make_node("Slice", ["b1", "c3", "c4", "ax1"], ["y1"]),
                helper.make_node("Sub", ["x1", "x0"], ["w"]),
                helper.make_node("Sub", ["y1", "y0"], ["h"]),
                helper.make_node("GreaterOrEqual", ["w", "min_size"], ["w_ok"]),
                helper.make_node("GreaterOrEqual", ["h", "min_size"], ["h_ok"]),
                helper.make_node("And", ["w_ok", "h_ok"], ["ok2"]),
                helper.make_node("Squeeze", ["ok2", "ax1"], ["ok"]),
                helper.make_node("NonZero", ["ok"], ["nz2"]),
                helper.make_node("Squeeze", ["nz2", "ax0"], ["k2"]),
                helper.make_node("Gather", ["b1", "k2"], ["b2"], axis=0),
                helper.make_node("Gather", ["s1", "k2"], ["s2"], axis=0),
                helper.make_node("Unsqueeze", ["b2", "ax0"], ["bb"]),
                helper.make_node("Unsqueeze", ["s2", "ax01"], ["ss"]),
                helper.make_node("NonMaxSuppression", ["bb", "ss", "max_out", "iou"], ["sel"]),
                helper.make_node("Gather", ["sel", "two"], ["idx"], axis=1),
                helper.make_node("Slice", ["idx", "c0", "c5", "ax0"], ["top"]),
                helper.make_node("Gather", ["b2", "top"], ["out_boxes"], axis=0),
                helper.make_node("Gather", ["s2", "top"], ["out_scores"], axis=0),
                helper.make_node("TopK", ["s1", "k3"], ["best", "best_at"], axis=0)],
               [("boxes", pd_boxes), ("scores", pd_scores)],
               [("out_boxes", padded_to(pd_b2[pd_top], 5, np.nan)),
                ("out_scores", padded_to(pd_s2[pd_top], 5, np.nan)),
                ("best", padded_to(pd_s1[pd_k3], 3, np.nan)),
                ("best_at", padded_to(pd_k3.astype(np.int64), 3, -1))], 13,
               inits=[("thr", np.array(pd_thr, np.float32)), ("min_size", np.array(2, np.float32)),
                      ("ax0", np.array([0], np.int64)), ("ax1", np.array([1], np.int64)),
                      ("ax01", np.array([0, 1], np.int64)), ("two", np.array(2, np.int64)),
                      ("max_out", np.array([16], np.int64)), ("iou", np.array([0.5], np.float32)),
                      ("k3", np.array([3], np.int64))] +
               [("c%d" % i, np.array([i], np.int64)) for i in range(6)])
# s[s > 1] of a selection s = x[x > lim]: NonZero of a padded mask (its
# padding never selected), then GatherND of padded data with padded
# indices; and a front slice of the selection (s[1:4]).
pq_ss = pqs[pqs > 1]
write_case("padded_select_of_selection",
           masked_select_nodes("x", "s") + masked_select_nodes("s", "ss", "one") +
           [helper.make_node("Slice", ["s", "c1", "c4", "c0"], ["mid"]),
            helper.make_node("ReduceSum", ["ss"], ["ss_sum"], keepdims=0)],
           [("x", pqx)],
           [("ss", padded_to(pq_ss, 24, np.nan)),
            ("mid", padded_to(pqs[1:4], 3, np.nan)),
            ("ss_sum", np.array(pq_ss.sum(), np.float32))], 13,
           inits=pq_lim + [("one", np.array(1, np.float32)), ("c0", np.array([0], np.int64)),
                           ("c1", np.array([1], np.int64)), ("c4", np.array([4], np.int64))])
write_case("refuse_padded_slice_from_end",
           masked_select_nodes("x", "s") + [helper.make_node("Slice", ["s", "m2", "big", "c0"],
                                                             ["y"], name="tail")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [2]))], 13,
           inits=pq_lim + [("m2", np.array([-2], np.int64)), ("big", np.array([99], np.int64)),
                           ("c0", np.array([0], np.int64))],
           expect="node 'tail' (Slice): input 0 ('s') is padded along dim 0, which it slices "
                  "from the end (only the run knows where the results end: a slice of that dim "
                  "must count from its front, with a start and an end >= 0 and a step >= 1)")
write_case("refuse_padded_slice_backwards",
           masked_select_nodes("x", "s") +
           [helper.make_node("Slice", ["s", "big", "m99", "c0", "m1"], ["y"], name="rev")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24]))], 13,
           inits=pq_lim + [("m99", np.array([-99], np.int64)), ("big", np.array([99], np.int64)),
                           ("c0", np.array([0], np.int64)), ("m1", np.array([-1], np.int64))],
           expect="node 'rev' (Slice): input 0 ('s') is padded along dim 0, which it slices "
                  "backwards")
write_case("refuse_padded_nms_boxes_only",
           [helper.make_node("Compress", ["boxes", "keep"], ["b"], axis=1),
            helper.make_node("NonMaxSuppression", ["b", "s", "m"], ["sel"], name="nms")],
           [("boxes", nmb), ("keep", np.ones(14, bool)), ("s", nms_s)],
           [("sel", (TensorProto.INT64, [30, 3]))], 11,
           inits=[("m", np.array([5], np.int64))],
           expect="node 'nms' (NonMaxSuppression): input 0 ('b') is padded along dim 1: "
                  "NonMaxSuppression reads padded values only when its scores input is padded "
                  "(along dim 2), and its boxes, if padded, by the same op along dim 1")
write_case("refuse_padded_compress_known_condition",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("Compress", ["k", "fixed"], ["y"], axis=0, name="again")],
           [("x", pqr), ("c", pqc > 0)], [("y", (TensorProto.FLOAT, [2, 4]))], 13,
           inits=[("fixed", np.array([1, 0, 1], bool))],
           expect="node 'again' (Compress): input 0 ('k') is padded along dim 0: Compress reads "
                  "padded values only when its condition is padded (along dim 0), and its data, "
                  "if padded, by the same op along its axis")
write_case("refuse_padded_gather_two_padded_dims",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("NonZero", ["c"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "c0"], ["idx"]),
            helper.make_node("Gather", ["k", "idx"], ["y"], axis=1, name="cols")],
           [("x", pqr), ("c", pqc > 0)], [("y", (TensorProto.FLOAT, [6, 6]))], 13,
           inits=[("c0", np.array([0], np.int64))],
           expect="node 'cols' (Gather): both its inputs are padded, the data along dim 0 and "
                  "not along the axis it gathers along (1), which would leave the result padded "
                  "along two dims")
# Detections as one table: torch.cat([boxes, scores[:, None]], 1) of a
# selection; joining along the padded dim is refused.
pq_cat = np.concatenate([pd_b1, pd_s1[:, None]], 1)
write_case("padded_concat_selected_columns",
           [helper.make_node("Greater", ["scores", "thr"], ["keep"]),
            helper.make_node("NonZero", ["keep"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "ax0"], ["inds"]),
            helper.make_node("Gather", ["boxes", "inds"], ["b1"], axis=0),
            helper.make_node("Gather", ["scores", "inds"], ["s1"], axis=0),
            helper.make_node("Unsqueeze", ["s1", "ax1"], ["s1c"]),
            helper.make_node("Concat", ["b1", "s1c"], ["y"], axis=1)],
           [("boxes", pd_boxes), ("scores", pd_scores)], [("y", padded_to(pq_cat, 16, np.nan))],
           13, inits=[("thr", np.array(pd_thr, np.float32)), ("ax0", np.array([0], np.int64)),
                      ("ax1", np.array([1], np.int64))])
# Joining along the padded dim: each part's results in turn, then the
# padding; parts of different selections, or not padded; a reduction of the
# result counts its results only. Per-class selections joined for one NMS:
# the boxes and the scores joined alike (one order for both).
pq_t = pqx[pqx > -0.5]
pq_fixed = np.array([7, 8, 9], np.float32)
pq_y = np.concatenate([pqs, pq_fixed, pq_t])
pc_boxes = pq.uniform(0, 10, (16, 4)).astype(np.float32)
pc_sc = pq.uniform(0, 1, (16, 3)).astype(np.float32)
pc_nodes = []
for j in range(3):
    pc_nodes += [helper.make_node("Gather", ["sc", "j%d" % j], ["s%d" % j], axis=1),
                 helper.make_node("Greater", ["s%d" % j, "thr"], ["k%d" % j]),
                 helper.make_node("NonZero", ["k%d" % j], ["n%d" % j]),
                 helper.make_node("Squeeze", ["n%d" % j, "ax0"], ["i%d" % j]),
                 helper.make_node("Gather", ["boxes", "i%d" % j], ["b%d" % j], axis=0),
                 helper.make_node("Gather", ["s%d" % j, "i%d" % j], ["ss%d" % j], axis=0)]
write_case("padded_concat_along_padded_dim",
           masked_select_nodes("x", "s") + masked_select_nodes("x", "t", "lim2") + pc_nodes +
           [helper.make_node("Concat", ["s", "fixed", "t"], ["y"], axis=0),
            helper.make_node("ReduceSum", ["y"], ["ysum"], keepdims=0),
            helper.make_node("Concat", ["b0", "b1", "b2"], ["allb"], axis=0),
            helper.make_node("Concat", ["ss0", "ss1", "ss2"], ["alls"], axis=0)],
           [("x", pqx), ("boxes", pc_boxes), ("sc", pc_sc)],
           [("y", padded_to(pq_y, 51, np.nan)), ("ysum", np.array(pq_y.sum(), np.float32)),
            ("allb", padded_to(np.concatenate([pc_boxes[pc_sc[:, j] > 0.6] for j in range(3)]),
                               48, np.nan)),
            ("alls", padded_to(np.concatenate([pc_sc[pc_sc[:, j] > 0.6, j] for j in range(3)]),
                               48, np.nan))], 13,
           inits=pq_lim + [("lim2", np.array(-0.5, np.float32)), ("fixed", pq_fixed),
                           ("thr", np.array(0.6, np.float32)), ("ax0", np.array([0], np.int64))] +
           [("j%d" % j, np.array(j, np.int64)) for j in range(3)], atol=1e-5)
# torch.full_like / zeros_like / expand_as of a padded value (torchvision's
# per-class labels, joined with the boxes and shifted apart by class as
# batched_nms does): a ConstantOfShape or Expand to its Shape is padded
# alike, so the labels line up with the boxes they were made for.
pc_counts = [int((pc_sc[:, j] > 0.6).sum()) for j in range(3)]
pc_labels = np.concatenate([np.full(pc_counts[j], j + 1, np.int64) for j in range(3)])
pc_allb = np.concatenate([pc_boxes[pc_sc[:, j] > 0.6] for j in range(3)])
write_case("padded_full_like",
           pc_nodes +
           [helper.make_node("Shape", ["ss%d" % j], ["sh%d" % j]) for j in range(3)] +
           [helper.make_node("ConstantOfShape", ["sh%d" % j], ["lab%d" % j],
                             value=numpy_helper.from_array(np.array([j + 1], np.int64)))
            for j in range(3)] +
           [helper.make_node("Concat", ["b0", "b1", "b2"], ["allb"], axis=0),
            helper.make_node("Concat", ["lab0", "lab1", "lab2"], ["labels"], axis=0),
            helper.make_node("Cast", ["labels"], ["lf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["lf", "hundred"], ["off"]),
            helper.make_node("Unsqueeze", ["off", "ax1"], ["off2"]),
            helper.make_node("Add", ["allb", "off2"], ["shifted"]),
            helper.make_node("Expand", ["half", "sh0"], ["halves"]),
            helper.make_node("Add", ["ss0", "halves"], ["ss0h"])],
           [("boxes", pc_boxes), ("sc", pc_sc)],
           [("lab0", padded_to(pc_labels[:pc_counts[0]], 16, -1)),
            ("labels", padded_to(pc_labels, 48, -1)),
            ("shifted", padded_to(pc_allb + 100 * pc_labels[:, None].astype(np.float32), 48,
                                  np.nan)),
            ("ss0h", padded_to(pc_sc[pc_sc[:, 0] > 0.6, 0] + 0.5, 16, np.nan))], 13,
           inits=[("thr", np.array(0.6, np.float32)), ("ax0", np.array([0], np.int64)),
                  ("ax1", np.array([1], np.int64)), ("hundred", np.array(100, np.float32)),
                  ("half", np.array([0.5], np.float32))] +
           [("j%d" % j, np.array(j, np.int64)) for j in range(3)], atol=1e-5)
# A two-stage detector's box head over its padded proposals (torchvision's
# MultiScaleRoIAlign and Faster R-CNN's roi_heads, exported): the
# proposals through a one-input Concat and an If on their element count
# (a run-time condition, numel() == 0); the batch indices and the pooled
# result's zeros made from their size (Shape, Gather, Unsqueeze, Concat,
# ConstantOfShape: padded alike); RoiAlign of them; the pooled rows
# scattered into the zeros by indices from a selection over them (Expand
# of the indices, ScatterElements into padded data); x.shape[1] of a
# padded x known when compiling (an exporter's conditional Squeeze); a
# linear layer, and its [N, 3] reshaped to [N * 3].
rp_x = pq.standard_normal((1, 2, 8, 8)).astype(np.float32)
rp_boxes = np.array([[0, 0, 4, 4], [1, 2, 7, 6], [2.5, 1, 5, 7.5], [0, 3, 8, 8], [3, 3, 6, 5],
                     [1, 1, 2, 2]], np.float32)
rp_sc = np.array([0.9, 0.1, 0.6, 0.8, 0.2, 0.7], np.float32)
rp_keep = rp_sc > 0.5
rp_rois = rp_boxes[rp_keep]
rp_pooled = roi_align_np(rp_x, rp_rois, np.zeros(len(rp_rois), np.int64), 2, 2, 2, 1.0, True,
                         False).reshape(len(rp_rois), 8)
rp_w = pq.standard_normal((8, 3)).astype(np.float32)
rp_then = helper.make_graph([helper.make_node("Squeeze", ["q", "ax1"], ["qs"])], "then", [],
                            [helper.make_tensor_value_info("qs", TensorProto.INT64, None)])
rp_else = helper.make_graph([helper.make_node("Identity", ["q"], ["qi"])], "else", [],
                            [helper.make_tensor_value_info("qi", TensorProto.INT64, None)])
rp_none = helper.make_graph([helper.make_node("Constant", [], ["nothing"],
                                              value=numpy_helper.from_array(
                                                  np.zeros((0, 4), np.float32)))],
                            "then", [],
                            [helper.make_tensor_value_info("nothing", TensorProto.FLOAT, None)])
rp_some = helper.make_graph([helper.make_node("Identity", ["rois1"], ["kept"])], "else", [],
                            [helper.make_tensor_value_info("kept", TensorProto.FLOAT, None)])
write_case("padded_roi_pool",
           [helper.make_node("Greater", ["scores", "thr"], ["m"]),
            helper.make_node("NonZero", ["m"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "ax0"], ["idx"]),
            helper.make_node("Gather", ["boxes", "idx"], ["rois"], axis=0),
            helper.make_node("Concat", ["rois"], ["rois1"], axis=0),
            helper.make_node("Shape", ["rois1"], ["sh1"]),
            helper.make_node("ReduceProd", ["sh1"], ["numel"], keepdims=0),
            helper.make_node("Equal", ["numel", "zero_i"], ["empty"]),
            helper.make_node("If", ["empty"], ["rois2"], then_branch=rp_none,
                             else_branch=rp_some),
            helper.make_node("Shape", ["rois2"], ["sh2"]),
            helper.make_node("Gather", ["sh2", "zero_i"], ["n2"], axis=0),
            helper.make_node("Unsqueeze", ["n2", "ax0"], ["n2v"]),
            helper.make_node("ConstantOfShape", ["n2v"], ["bidx"],
                             value=numpy_helper.from_array(np.array([0], np.int64))),
            helper.make_node("Concat", ["n2v", "eight"], ["zshape"], axis=0),
            helper.make_node("ConstantOfShape", ["zshape"], ["zeros"],
                             value=numpy_helper.from_array(np.array([0], np.float32))),
            helper.make_node("RoiAlign", ["x", "rois2", "bidx"], ["pooled"], output_height=2,
                             output_width=2, sampling_ratio=2, spatial_scale=1.0),
            helper.make_node("Concat", ["n2v", "minus1"], ["fshape"], axis=0),
            helper.make_node("Reshape", ["pooled", "fshape"], ["flat"]),
            helper.make_node("ReduceSum", ["flat", "ax1"], ["rs"], keepdims=0),
            helper.make_node("Greater", ["rs", "low"], ["m2"]),
            helper.make_node("NonZero", ["m2"], ["nz2"]),
            helper.make_node("Squeeze", ["nz2", "ax0"], ["j"]),
            helper.make_node("Gather", ["flat", "j"], ["upd"], axis=0),
            helper.make_node("Unsqueeze", ["j", "ax1"], ["j2"]),
            helper.make_node("Expand", ["j2", "eshape"], ["ind"]),
            helper.make_node("ScatterElements", ["zeros", "ind", "upd"], ["out"], axis=0),
            helper.make_node("MatMul", ["out", "w"], ["lin"]),
            helper.make_node("Reshape", ["lin", "minus1"], ["lin_flat"]),
            helper.make_node("Unsqueeze", ["idx", "ax1"], ["q"]),
            helper.make_node("Shape", ["q"], ["qsh"]),
            helper.make_node("Gather", ["qsh", "one_i"], ["qdim"], axis=0),
            helper.make_node("Equal", ["qdim", "one_i"], ["is_one"]),
            helper.make_node("If", ["is_one"], ["sq"], then_branch=rp_then, else_branch=rp_else)],
           [("x", rp_x), ("boxes", rp_boxes), ("scores", rp_sc)],
           [("out", padded_to(rp_pooled, 6, np.nan)),
            ("lin_flat", padded_to((rp_pooled @ rp_w).reshape(-1), 18, np.nan)),
            ("sq", padded_to(np.nonzero(rp_keep)[0].astype(np.int64), 6, -1))], 16,
           inits=[("thr", np.array(0.5, np.float32)), ("ax0", np.array([0], np.int64)),
                  ("ax1", np.array([1], np.int64)), ("zero_i", np.array(0, np.int64)),
                  ("one_i", np.array(1, np.int64)), ("eight", np.array([8], np.int64)),
                  ("minus1", np.array([-1], np.int64)), ("low", np.array(-1e9, np.float32)),
                  ("eshape", np.array([6, 8], np.int64)), ("w", rp_w)], atol=1e-5)
write_case("refuse_padded_roialign_image",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("RoiAlign", ["k", "rois", "bidx"], ["y"], name="pool")],
           [("x", rp_x.repeat(3, 0)), ("c", np.array([True, False, True]))],
           [("y", (TensorProto.FLOAT, [2, 2, 1, 1]))], 16,
           inits=[("rois", rp_boxes[:2]), ("bidx", np.zeros(2, np.int64))],
           expect="node 'pool' (RoiAlign): input 0 ('k') is padded along dim 0: RoiAlign keeps "
                  "padding apart when its regions (rois, batch_indices) are padded along dim 0 "
                  "by the same op, and its image is not")
write_case("refuse_padded_expand_padded_dim",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("Expand", ["k", "shape"], ["y"], name="wide")],
           [("x", pqr[:1]), ("c", np.array([True]))], [("y", (TensorProto.FLOAT, [3, 4]))], 13,
           inits=[("shape", np.array([3, 4], np.int64))],
           expect="node 'wide' (Expand): input 0 ('k') is padded along dim 0, which it would "
                  "broadcast to 3 entries (only other dims may be broadcast)")
write_case("refuse_padded_scatter_data_other_axis",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0),
            helper.make_node("ScatterElements", ["k", "at", "v"], ["y"], axis=1, name="put")],
           [("x", pqr), ("c", pqc > 0)], [("y", (TensorProto.FLOAT, [6, 4]))], 13,
           inits=[("at", np.zeros((6, 1), np.int64)), ("v", np.ones((6, 1), np.float32))],
           expect="node 'put' (ScatterElements): input 0 ('k') is padded along dim 0: "
                  "ScatterElements keeps padding apart when its indices are padded (along any "
                  "dim) and its updates, if padded, by the same op along the same dim; its data, "
                  "if padded, along the dim of its axis")
write_case("refuse_padded_concat_two_padded_dims",
           [helper.make_node("Compress", ["x", "c"], ["k"], axis=0)] +
           masked_select_nodes("x", "s") +
           [helper.make_node("Unsqueeze", ["s", "ax0"], ["row"]),
            helper.make_node("Slice", ["row", "c0", "c4", "ax1"], ["row4"]),
            helper.make_node("Concat", ["k", "row4"], ["y"], axis=0, name="cat")],
           [("x", pqr), ("c", pqc > 0)], [("y", (TensorProto.FLOAT, [7, 4]))], 13,
           inits=pq_lim + [("ax0", np.array([0], np.int64)), ("ax1", np.array([1], np.int64)),
                           ("c0", np.array([0], np.int64)), ("c4", np.array([4], np.int64))],
           expect="node 'cat' (Concat): input 0 ('k') is padded along dim 0, the axis it joins "
                  "along, and input 1 ('row4') along dim 1: the result would be padded along two "
                  "dims")
# A long CumSum (blocks of 32 summed, their totals summed the same way, two
# levels) along a dim that is not the last, in each direction, inclusive
# and exclusive; small integers, so every sum is exact.
cs_x = pq.integers(-4, 5, (1000, 3)).astype(np.float32)
cs_f = np.cumsum(cs_x, 0)
cs_r = np.cumsum(cs_x[::-1], 0)[::-1]
write_case("cumsum_long",
           [helper.make_node("CumSum", ["x", "ax"], ["f"]),
            helper.make_node("CumSum", ["x", "ax"], ["fe"], exclusive=1),
            helper.make_node("CumSum", ["x", "ax"], ["r"], reverse=1),
            helper.make_node("CumSum", ["x", "ax"], ["re"], reverse=1, exclusive=1)],
           [("x", cs_x)],
           [("f", cs_f), ("fe", cs_f - cs_x), ("r", np.ascontiguousarray(cs_r)),
            ("re", np.ascontiguousarray(cs_r - cs_x))], 14,
           inits=[("ax", np.array(0, np.int64))])
# Long selections: a mask of 6000 entries (NonZero's positions a CumSum of
# that length, in blocks), then joined with itself along the padded dim.
# Multiples of 1/64 below 4 and a threshold of 0.25: the same selection in
# bfloat16.
pq_long = (np.round(np.clip(pq.standard_normal(6000), -3.9, 3.9) * 64) / 64).astype(np.float32)
pq_ls = pq_long[pq_long > 0.25]
write_case("padded_long_selection",
           masked_select_nodes("x", "s") + [helper.make_node("Concat", ["s", "s"], ["y"], axis=0),
                                            helper.make_node("ReduceSum", ["y"], ["ysum"],
                                                             keepdims=0)],
           [("x", pq_long)], [("y", padded_to(np.concatenate([pq_ls, pq_ls]), 12000, np.nan)),
                              ("ysum", np.array(2 * pq_ls.sum(dtype=np.float64), np.float32))],
           13, inits=[("lim", np.array(0.25, np.float32))], atol=1e-3)
# An If whose condition is computed at run time from a selection's count
# (torchvision's batched_nms: no boxes, an empty result): a branch empty
# along the padded dim gives all padding; branches padded by the same op
# give a Where, padded alike.
def if_padded_nodes(then_nodes, then_out, else_nodes, else_out, name="pick"):
    tg = helper.make_graph(then_nodes, "then", [],
                           [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                            for o in then_out])
    eg = helper.make_graph(else_nodes, "else", [],
                           [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                            for o in else_out])
    return (masked_select_nodes("x", "s") +
            [helper.make_node("Size", ["s"], ["count"]),
             helper.make_node("Equal", ["count", "zero_i"], ["none"]),
             helper.make_node("If", ["none"], ["y", "y2"], then_branch=tg, else_branch=eg,
                              name=name)])
pif_then = [helper.make_node("Constant", [], ["nothing"],
                             value=numpy_helper.from_array(np.zeros(0, np.float32))),
            helper.make_node("Mul", ["s", "two"], ["s2"])]
pif_else = [helper.make_node("Mul", ["s", "two"], ["d"]),
            helper.make_node("Mul", ["s", "three"], ["s3"])]
pif_inits = pq_lim + [("zero_i", np.array(0, np.int64)), ("two", np.array(2, np.float32)),
                      ("three", np.array(3, np.float32))]
for tag, xin in (("", pqx), ("_none_selected", np.minimum(pqx, 0.25))):
    sel = xin[xin > 0.3]
    write_case("padded_if_empty_branch" + tag,
               if_padded_nodes(pif_then, ["nothing", "s2"], pif_else, ["d", "s3"]),
               [("x", xin)],
               [("y", padded_to(sel * 2, 24, np.nan)),
                ("y2", padded_to(sel * (2 if len(sel) == 0 else 3), 24, np.nan))], 13,
               inits=pif_inits)
write_case("refuse_padded_if_unpadded_branch",
           if_padded_nodes([helper.make_node("Mul", ["s", "two"], ["a"]),
                            helper.make_node("Mul", ["s", "two"], ["b"])], ["a", "b"],
                           [helper.make_node("Identity", ["ones"], ["c"]),
                            helper.make_node("Mul", ["s", "three"], ["e"])], ["c", "e"]),
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24])), ("y2", (TensorProto.FLOAT, [24]))],
           13, inits=pif_inits + [("ones", np.ones(24, np.float32))],
           expect="node 'pick' (If): the condition ('none') is computed at run time, so each "
                  "output is picked between the branches, but output 0 is float[24] padded in "
                  "then_branch and float[24] in else_branch (padded values are picked from values "
                  "padded by the same op, or from values empty along the padded dim)")
write_case("refuse_padded_concat_with_unpadded",
           masked_select_nodes("x", "s") +
           [helper.make_node("Unsqueeze", ["s", "ax1"], ["s2"]),
            helper.make_node("Concat", ["s2", "col"], ["y"], axis=1, name="cat")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24, 2]))], 13,
           inits=pq_lim + [("ax1", np.array([1], np.int64)), ("col", np.ones((24, 1), np.float32))],
           expect="node 'cat' (Concat): input 0 ('s2') is padded along dim 0 and input 1 ('col') is "
                  "not: Concat keeps padding apart when every input is padded by the same op along "
                  "the same dim, and it joins along another")
# What an op computes from padding is put back to padding only where it is
# needed: at the binary's outputs, also after ops that move entries whole.
# Indices computed from padding may point anywhere (here idx where it is
# >= 0, its results, and 2^30 in its padding): a gather of them reads zero
# out of range, and its result's padding is put back like any other.
pq_nz = np.nonzero(pqx.reshape(-1) > 0.3)[0]
pq_tab2 = np.arange(24, dtype=np.float32) * 10
write_case("padded_dirty_paths",
           masked_select_nodes("x", "s") +
           [helper.make_node("Mul", ["s", "two"], ["s2"]),
            helper.make_node("Unsqueeze", ["s2", "ax1"], ["col"]),
            helper.make_node("Slice", ["s2", "c0", "c4", "c0"], ["head"]),
            helper.make_node("Concat", ["col", "col"], ["pair"], axis=1),
            helper.make_node("NonZero", ["xm"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "c0"], ["idx"]),
            helper.make_node("Less", ["idx", "zero_i"], ["neg"]),
            helper.make_node("Where", ["neg", "far", "idx"], ["idx0"]),
            helper.make_node("Gather", ["tab", "idx0"], ["looked"], axis=0),
            helper.make_node("TopK", ["s", "k3"], ["best", "best_at"], axis=0),
            helper.make_node("Gather", ["s", "best_at"], ["best_again"], axis=0)],
           [("x", pqx), ("xm", (pqx.reshape(-1) > 0.3))],
           [("col", padded_to((pqs * 2)[:, None], 24, np.nan)),
            ("head", padded_to((pqs * 2)[:4], 4, np.nan)),
            ("pair", padded_to(np.stack([pqs * 2, pqs * 2], 1), 24, np.nan)),
            ("looked", padded_to(pq_tab2[pq_nz], 24, np.nan)),
            ("best_again", np.sort(pqs)[::-1][:3].copy())], 13,
           inits=pq_lim + [("two", np.array(2, np.float32)), ("ax1", np.array([1], np.int64)),
                           ("c0", np.array([0], np.int64)), ("c4", np.array([4], np.int64)),
                           ("zero_i", np.array(0, np.int64)),
                           ("far", np.array(1 << 30, np.int64)), ("tab", pq_tab2),
                           ("k3", np.array([3], np.int64))])
# Unsigned values computed from padded ones have no padding value, yet
# reducing along the padded dim needs none: the sum and the max of the
# selected values as uint8.
pq_u8 = (pqs * 10).astype(np.uint8)
write_case("padded_uint8_reduced",
           masked_select_nodes("x", "s") +
           [helper.make_node("Mul", ["s", "ten"], ["s10"]),
            helper.make_node("Cast", ["s10"], ["u"], to=TensorProto.UINT8),
            helper.make_node("ReduceSum", ["u"], ["total"], keepdims=0),
            helper.make_node("ReduceMin", ["u"], ["least"], keepdims=0)],
           [("x", pqx)],
           [("total", np.array(pq_u8.astype(np.uint64).sum() % 256, np.uint8)),
            ("least", np.array(pq_u8.min(), np.uint8))], 13,
           inits=pq_lim + [("ten", np.array(10, np.float32))])
# Writing at selected places: out[idx] = v (ScatterND) and scatter_
# (ScatterElements) with padded indices and updates write the results only.
pq_at = np.nonzero(pqx.reshape(-1) > 0.3)[0]
pq_nd = np.zeros((4, 6), np.float32)
pq_nd[pqx > 0.3] = pqs * 3
pq_el = np.full((2, 24), -1, np.float32)
pq_el[1, pq_at] = pqs
write_case("padded_scatter_selected",
           masked_select_nodes("x", "s") +
           [helper.make_node("Mul", ["s", "three"], ["v"]),
            helper.make_node("ScatterND", ["zeros", "s_t", "v"], ["nd"]),
            helper.make_node("Reshape", ["x", "flat"], ["xf"])] +
           masked_select_nodes("xf", "f") +
           [helper.make_node("Squeeze", ["f_t", "c1"], ["at1"]),
            helper.make_node("Unsqueeze", ["at1", "c0"], ["at_row"]),
            helper.make_node("Unsqueeze", ["f", "c0"], ["f_row"]),
            helper.make_node("ScatterElements", ["minus", "at_row", "f_row"], ["el_row"], axis=1),
            helper.make_node("Concat", ["minus", "el_row"], ["el"], axis=0)],
           [("x", pqx)], [("nd", pq_nd), ("el", pq_el)], 13,
           inits=pq_lim + [("three", np.array(3, np.float32)),
                           ("zeros", np.zeros((4, 6), np.float32)),
                           ("minus", np.full((1, 24), -1, np.float32)),
                           ("flat", np.array([24], np.int64)),
                           ("c0", np.array([0], np.int64)), ("c1", np.array([1], np.int64))])
# torchvision's MultiScaleRoIAlign puts each level's pooled regions back in
# place: result[idx] = pooled, exported as a ScatterElements whose indices
# are idx viewed [-1, 1, 1, 1] and expanded to the pooled shape. With idx
# selected at run time (padded), the indices reach the scatter masked
# (a Where over the expanded ones), still one value per row: whole rows
# move.
pq_feat = pq.standard_normal((6, 3, 2, 2)).astype(np.float32)
pq_keep = np.nonzero(pqx.reshape(-1)[:6] > 0.3)[0]
pq_put = np.zeros((6, 3, 2, 2), np.float32)
pq_put[pq_keep] = pq_feat[pq_keep] * 2
write_case("padded_scatter_rows_expanded",
           [helper.make_node("Reshape", ["x", "flat"], ["xf"]),
            helper.make_node("Slice", ["xf", "c0", "c6"], ["x6"]),
            helper.make_node("Greater", ["x6", "lim"], ["m"]),
            helper.make_node("NonZero", ["m"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "c0"], ["idx"]),
            helper.make_node("Gather", ["feat", "idx"], ["picked"], axis=0),
            helper.make_node("Mul", ["picked", "two"], ["pooled"]),
            helper.make_node("Reshape", ["idx", "col4"], ["idx4"]),
            helper.make_node("Shape", ["pooled"], ["shp"]),
            helper.make_node("Expand", ["idx4", "shp"], ["at"]),
            helper.make_node("ScatterElements", ["zeros", "at", "pooled"], ["put"], axis=0)],
           [("x", pqx)], [("put", pq_put)], 13,
           inits=pq_lim + [("flat", np.array([24], np.int64)), ("c0", np.array([0], np.int64)),
                           ("c6", np.array([6], np.int64)), ("two", np.array(2, np.float32)),
                           ("feat", pq_feat), ("col4", np.array([-1, 1, 1, 1], np.int64)),
                           ("zeros", np.zeros((6, 3, 2, 2), np.float32))])
# A scatter of whole rows hands its result over as the rows it scattered
# ([6, 3 * 5 * 5]): the next scatter and a Flatten read them as they are,
# a Cast to the same type passes them on, and a graph output (and the Add)
# reads [6, 3, 5, 5] made from them.
sr = np.random.default_rng(43)
sr_base = sr.standard_normal((6, 3, 5, 5)).astype(np.float32)
sr_u1, sr_u2 = (sr.standard_normal((2, 3, 5, 5)).astype(np.float32) for _ in range(2))
sr_w = sr.standard_normal((75, 4)).astype(np.float32)
sr_i1, sr_i2 = np.array([4, 1]), np.array([1, 5])
sr_a = sr_base.copy()
sr_a[sr_i1] = sr_u1
sr_b = sr_a.copy()
sr_b[sr_i2] = sr_u2
write_case("scatter_rows_held",
           [helper.make_node("ScatterElements", ["x", "i1", "u1"], ["a"], axis=0),
            helper.make_node("Cast", ["a"], ["a32"], to=TensorProto.FLOAT),
            helper.make_node("ScatterElements", ["a32", "i2", "u2"], ["b"], axis=0),
            helper.make_node("Flatten", ["b"], ["flat"], axis=1),
            helper.make_node("MatMul", ["flat", "w"], ["y"]),
            helper.make_node("Add", ["a", "b"], ["ab"])],
           [("x", sr_base), ("u1", sr_u1), ("u2", sr_u2)],
           [("y", sr_b.reshape(6, 75) @ sr_w), ("b", sr_b), ("ab", sr_a + sr_b)], 13,
           inits=[("i1", np.broadcast_to(sr_i1[:, None, None, None], (2, 3, 5, 5)).copy()),
                  ("i2", np.broadcast_to(sr_i2[:, None, None, None], (2, 3, 5, 5)).copy()),
                  ("w", sr_w)], atol=1e-5)
write_case("refuse_padded_scatter_updates_only",
           masked_select_nodes("x", "s") +
           [helper.make_node("ScatterND", ["zeros", "at", "s"], ["y"], name="put")],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24]))], 13,
           inits=pq_lim + [("zeros", np.zeros(24, np.float32)),
                           ("at", np.arange(24, dtype=np.int64)[:, None])],
           expect="node 'put' (ScatterND): input 2 ('s') is padded along dim 0: ScatterND keeps "
                  "padding apart when its indices are padded (before their last dim) and its "
                  "updates, if padded, by the same op along the same dim; its data, if padded, "
                  "along the dim the index tuples' first entry picks (0)")
# Shape of a padded value: where it only decides shapes (an exporter's
# Reshape of v to [len(idx)] before out[idx] = v) it is the padded size;
# where it is data (torch's var: the sum of squares over len(s) - 1) it is
# the run's number of results. Two NonZeros of one mask (b[k] and s[k]
# exported apart) pad alike, so their results may meet.
pq_var = pqs.astype(np.float64).var(ddof=1)
write_case("padded_shape_as_data_or_shape",
           masked_select_nodes("xf", "s") +
           [helper.make_node("ReduceMean", ["s"], ["mean"], keepdims=0),
            helper.make_node("Sub", ["s", "mean"], ["dev"]),
            helper.make_node("Mul", ["dev", "dev"], ["sq"]),
            helper.make_node("ReduceSum", ["sq"], ["ssq"], keepdims=0),
            helper.make_node("Shape", ["s"], ["len"]),
            helper.make_node("ReduceProd", ["len"], ["n"], keepdims=0),
            helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
            helper.make_node("Sub", ["nf", "one"], ["n1"]),
            helper.make_node("Div", ["ssq", "n1"], ["var"]),
            helper.make_node("Size", ["s"], ["size"]),
            helper.make_node("NonZero", ["s_m"], ["nz"]),
            helper.make_node("Squeeze", ["nz", "c0"], ["idx"]),
            helper.make_node("Shape", ["idx"], ["idx_len"]),
            helper.make_node("Reshape", ["s", "idx_len"], ["v"]),
            helper.make_node("Transpose", ["nz"], ["nz_t"], perm=[1, 0]),
            helper.make_node("ScatterND", ["zeros", "nz_t", "v"], ["put"]),
            helper.make_node("GatherND", ["xf", "nz_t"], ["again"]),
            helper.make_node("Unsqueeze", ["again", "c1"], ["again_c"]),
            helper.make_node("Unsqueeze", ["v", "c1"], ["v_c"]),
            helper.make_node("Concat", ["v_c", "again_c"], ["both"], axis=1)],
           [("xf", pqx.reshape(-1))],
           [("var", np.array(pq_var, np.float32)), ("size", np.array(len(pqs), np.int64)),
            ("put", np.where(pqx.reshape(-1) > 0.3, pqx.reshape(-1), 0).astype(np.float32)),
            ("both", padded_to(np.stack([pqs, pqs], 1), 24, np.nan))], 13,
           inits=pq_lim + [("one", np.array(1, np.float32)), ("c0", np.array([0], np.int64)),
                           ("c1", np.array([1], np.int64)),
                           ("zeros", np.zeros(24, np.float32))])
write_case("refuse_padded_shape_as_both",
           masked_select_nodes("x", "s") +
           [helper.make_node("Shape", ["s"], ["len"], name="len"),
            helper.make_node("Reshape", ["s", "len"], ["y"]),
            helper.make_node("Cast", ["len"], ["n"], to=TensorProto.FLOAT)],
           [("x", pqx)], [("y", (TensorProto.FLOAT, [24])), ("n", (TensorProto.FLOAT, [1]))], 13,
           inits=pq_lim,
           expect="node 'len' (Shape): input 0 ('s') is padded along dim 0, and its result is "
                  "used both as a shape (where it is the padded size, fixed when compiling) and "
                  "as data (where it is the run's number of results)")

# Einsum of more than two operands, contracted in pairs, the smallest result
# first: a chain (whose greedy order is not the equation's), a bilinear
# form, an outer product, ellipses, diagonals, a scalar, labels summed
# within one operand.
ez_ = np.random.default_rng(41)


def e32(*shape):
    return ez_.standard_normal(shape).astype(np.float32)


for i, (eq, shapes) in enumerate((("bij,bjk,ik->bi", ((3, 4, 5), (3, 5, 6), (4, 6))),
                                  ("ij,jk,kl,lm->im", ((5, 40), (40, 30), (30, 2), (2, 3))),
                                  ("i,j,k->ijk", ((3,), (4,), (5,))),
                                  ("...ij,...jk,...kl->...il", ((2, 3, 4, 5), (3, 5, 6), (6, 2))),
                                  ("ii,ij,j->i", ((4, 4), (4, 5), (5,))),
                                  ("i,i,i", ((7,), (7,), (7,))),
                                  ("ab,bc,cd->a", ((3, 4), (4, 5), (5, 6))),
                                  ("bi,bij,bjk,bk->b", ((2, 3), (2, 3, 4), (2, 4, 5), (2, 5))),
                                  ("ab,cd,ac,bd->", ((3, 4), (5, 6), (3, 5), (4, 6))))):
    ops = [e32(*sh) for sh in shapes]
    names = ["a", "b", "c", "d"][:len(ops)]
    write_case("einsum_operands_%d" % i, [helper.make_node("Einsum", names, ["y"], equation=eq)],
               list(zip(names, ops)),
               [("y", np.asarray(np.einsum(eq, *[o.astype(np.float64) for o in ops]), np.float32))],
               12)
e17 = [("x%d" % i, e32(2)) for i in range(17)]
write_case("refuse_einsum_17_operands",
           [helper.make_node("Einsum", [n_ for n_, _ in e17], ["y"], equation=",".join(["i"] * 17),
                             name="e17")],
           e17, [("y", (TensorProto.FLOAT, []))], 12,
           expect="node 'e17' (Einsum): 17 operands: more than 16 are not supported")
write_case("invalid_einsum_operand_types",
           [helper.make_node("Einsum", ["a", "b", "c"], ["y"], equation="i,i,i->i", name="mixed")],
           [("a", e32(3)), ("b", e32(3)), ("c", np.arange(3, dtype=np.int32))],
           [("y", (TensorProto.FLOAT, [3]))], 12,
           expect="node 'mixed' (Einsum): the operands' element types differ (operand 2's from "
                  "operand 0's)")
# The gradients of a three-operand Einsum: each the Einsum of the incoming
# gradient and the two other operands.
ga_, gb_, gc_, gw_ = e32(3, 4, 5), e32(3, 5, 6), e32(4, 6), e32(3, 4)
_, grads = torch_grads(
    lambda A, B, C: (torch.einsum("bij,bjk,ik->bi", A, B, C) * torch.from_numpy(gw_)).sum(),
    [ga_, gb_, gc_])
write_case("gradient_einsum_three_operands",
           [helper.make_node("Einsum", ["a", "b", "c"], ["e"], equation="bij,bjk,ik->bi")]
           + weighted_sum([("e", "w")])
           + [grad_node(["a", "b", "c"], [], "y", ["da", "db", "dc"])],
           [("a", ga_), ("b", gb_), ("c", gc_)],
           [("da", grads[0]), ("db", grads[1]), ("dc", grads[2])], 12,
           inits=[("w", gw_)], domains=TRAIN)
# An equation every pairing of which makes an intermediate of more than 8
# dims (each operand and the output have at most 8).
e_wide = ["dojin", "fcegdjah", "lgicnapb", "delbcjm", "hngmolcf"]
write_case("refuse_einsum_wide_intermediate",
           [helper.make_node("Einsum", ["a", "b", "c", "d", "e"], ["y"],
                             equation=",".join(e_wide) + "->ejhdbgo", name="wide")],
           [(n_, e32(*[2] * len(s_))) for n_, s_ in zip("abcde", e_wide)],
           [("y", (TensorProto.FLOAT, [2] * 7))], 12,
           expect="node 'wide' (Einsum): contracting the operands in pairs makes a tensor of more "
                  "than 8 dims")
# Einsum operands broadcast along labels of size 1 (as NumPy's einsum and
# PyTorch's): batch dims, ellipses, a contracted label; the gradient of a
# broadcast operand summed over the label.
for i, (eq, shapes) in enumerate((("...ij,...jk->...ik", ((1, 3, 4), (5, 4, 6))),
                                  ("bij,bjk->bik", ((1, 2, 3), (4, 3, 5))),
                                  ("ij,jk", ((2, 1), (3, 4))),
                                  ("bi,bi,b->bi", ((1, 4), (3, 4), (3,))),
                                  ("...i,i->...", ((2, 1, 5), (5,))))):
    ops = [e32(*sh) for sh in shapes]
    names = ["a", "b", "c"][:len(ops)]
    write_case("einsum_broadcast_%d" % i, [helper.make_node("Einsum", names, ["y"], equation=eq)],
               list(zip(names, ops)),
               [("y", np.asarray(np.einsum(eq, *[o.astype(np.float64) for o in ops]), np.float32))],
               12)
write_case("invalid_einsum_sizes",
           [helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk", name="sizes")],
           [("a", e32(2, 3)), ("b", e32(4, 5))], [("y", (TensorProto.FLOAT, [2, 5]))], 12,
           expect="node 'sizes' (Einsum): equation ij,jk: subscript j is 3 and 4 long")
write_case("invalid_einsum_diagonal_sizes",
           [helper.make_node("Einsum", ["a"], ["y"], equation="ii->i", name="diag")],
           [("a", e32(1, 4))], [("y", (TensorProto.FLOAT, [4]))], 12,
           expect="node 'diag' (Einsum): equation ii->i: subscript i repeats in operand 0 with "
                  "sizes 1 and 4")
gb1_, gb2_, gbw_ = e32(1, 2, 3), e32(4, 3, 5), e32(4, 2, 5)
_, grads = torch_grads(
    lambda A, B: (torch.einsum("bij,bjk->bik", A, B) * torch.from_numpy(gbw_)).sum(), [gb1_, gb2_])
write_case("gradient_einsum_broadcast",
           [helper.make_node("Einsum", ["a", "b"], ["e"], equation="bij,bjk->bik")]
           + weighted_sum([("e", "w")])
           + [grad_node(["a", "b"], [], "y", ["da", "db"])],
           [("a", gb1_), ("b", gb2_)], [("da", grads[0]), ("db", grads[1])], 12,
           inits=[("w", gbw_)], domains=TRAIN)
