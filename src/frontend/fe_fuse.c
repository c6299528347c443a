/* Fusions: chains of nodes one op library call does better.
 *
 *   Conv -> BatchNormalization   the normalisation folded into the weights
 *                                and bias on the host (inference form)
 *   Conv/MatMul -> Add(bias)     the constant bias added by the op
 *   ... -> Relu/Sigmoid/...      the activation applied by the op (also Clip
 *                                with bounds known when compiling, HardSwish,
 *                                Gelu, PyTorch's HardSigmoid, x * Sigmoid(x)
 *                                as SiLU, x * HardSigmoid(x) as HardSwish,
 *                                and GELU spelled out: see gelu_of)
 *   Add/Mul/... -> Relu/...      the activation applied by the element-wise
 *                                op's last library call (a ResNet block's
 *                                Add -> Relu), or by a BatchNormalization
 *                                no convolution took (DenseNet's)
 *   ReduceMean -> Sub -> Pow ... a layer normalization spelled out (see
 *                                fuse_layer_norm): the op library's
 *   Pow -> ReduceMean -> Add ... an RMS normalization spelled out (see
 *                                fuse_rms_norm): the op library's
 *   Reshape -> Instance-         a group normalization spelled out (see
 *   Normalization -> Reshape ... fuse_group_norm): the op library's
 *   Pad -> Conv/AveragePool      the zero padding taken by the reader (see
 *                                fold_pad)
 *   Conv ... -> MaxPool          a max pooling with no padding after a
 *                                convolution's chain: lmnn_conv2d's fused
 *                                pooling (each pooled row the max of its
 *                                window's products as they are made, where
 *                                the library can; else a pooling after it)
 *   Reshape -> Transpose ...     one pass over the elements (a transformer's
 *                                heads split and moved forward, a window
 *                                partition), not tensors of the intermediate
 *                                shapes between them (see fe_regroup.c)
 *
 * A node joins a chain only when it is the single reader of the chain's
 * value and that value is not a graph output, so nothing else sees the
 * intermediate. The head node's lower applies the fe_fusion and writes the
 * chain's last value; the others are marked LMFE_FUSED and never run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

enum {
    FUSE_BIAS = 1u << 0,         /* a following Add of a constant bias */
    FUSE_ACTIVATION = 1u << 1,   /* a following activation (Relu, Sigmoid, ...) */
    FUSE_BATCHNORM = 1u << 2,    /* a following inference BatchNormalization */
    FUSE_AFTER_BINARY = 1u << 3, /* the head is an element-wise op of two or more inputs */
    FUSE_POOL = 1u << 4,         /* a following MaxPool (fe_pool_fusable), after all the rest */
};

/* The ops whose lower applies an fe_fusion, and what it may hold. */
static uint32_t fusable(const char *op_type) {
    if (!strcmp(op_type, "Conv")) return FUSE_BIAS | FUSE_ACTIVATION | FUSE_BATCHNORM | FUSE_POOL;
    if (!strcmp(op_type, "MatMul")) return FUSE_BIAS | FUSE_ACTIVATION;
    /* (A normalization no convolution took, and the instance and group
     * normalizations: their lowers apply it.) */
    if (!strcmp(op_type, "Gemm") || !strcmp(op_type, "BatchNormalization") ||
        !strcmp(op_type, "InstanceNormalization") || !strcmp(op_type, "GroupNormalization"))
        return FUSE_ACTIVATION;
    /* The element-wise ops whose last op library call takes the activation
     * (lower_binary); Mean divides after it. */
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
        if (!strcmp(op_type, binary[i])) return FUSE_ACTIVATION | FUSE_AFTER_BINARY;
    return 0;
}

/* The node that is value v's only reader (a device node), or FE_NONE. */
static uint32_t sole_reader(const fe_ctx *c, const uint32_t *reader, uint32_t v) {
    const fe_value *val = &c->g->values[v];
    if (val->graph_output || val->use_count != 1 || reader[v] == FE_NONE) return FE_NONE;
    return c->plans[reader[v]].placement == LMFE_ON_DEVICE ? reader[v] : FE_NONE;
}

static bool is_const_input(const fe_ctx *c, const fe_node *n, uint32_t i) {
    return i < n->input_count && n->inputs[i] != FE_NONE && c->g->values[n->inputs[i]].konst;
}

static const fe_tensor *const_input(const fe_ctx *c, const fe_node *n, uint32_t i) {
    return is_const_input(c, n, i) ? c->g->values[n->inputs[i]].konst : NULL;
}

/* A float constant of `count` elements in the arena; NULL when out of memory. */
static fe_tensor *float_const(fe_ctx *c, uint32_t rank, const int64_t *dims) {
    fe_tensor *t;
    return fe_const_new(c, FE_FLOAT, rank, dims, &t) ? NULL : t;
}

/* Conv -> BatchNormalization: w' = w * s, b' = (b - mean) * s + beta with
 * s = scale / sqrt(var + eps), per output channel. */
static lm_status fold_batchnorm(fe_ctx *c, const fe_node *conv, const fe_node *bn, fe_fusion *f,
                                bool *out_done) {
    *out_done = false;
    const fe_tensor *w = const_input(c, conv, 1), *b = const_input(c, conv, 2);
    if (!w || (fe_has_in(conv, 2) && !b) || !fe_elem_is_float(w->elem)) return LM_OK;
    for (uint32_t i = 1; i < 5; i++)
        if (!is_const_input(c, bn, i)) return LM_OK;
    for (uint32_t i = 1; i < bn->output_count; i++)
        if (bn->outputs[i] != FE_NONE && c->g->values[bn->outputs[i]].use_count) return LM_OK;
    int64_t training;
    float eps;
    lm_status st = fe_attr_int(c, bn, "training_mode", 0, &training);
    if (!st) st = fe_attr_float(c, bn, "epsilon", 1e-5f, &eps);
    if (st || training) return st;
    int64_t m = w->dims[0];
    const fe_tensor *scale = const_input(c, bn, 1), *beta = const_input(c, bn, 2),
                    *mean = const_input(c, bn, 3), *var = const_input(c, bn, 4);
    if ((int64_t)scale->count != m || (int64_t)beta->count != m || (int64_t)mean->count != m ||
        (int64_t)var->count != m)
        return LM_OK;
    fe_tensor *nw = float_const(c, w->rank, w->dims), *nb = float_const(c, 1, &m);
    if (!nw || !nb) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    uint64_t per = w->count / (uint64_t)m;
    for (int64_t o = 0; o < m; o++) {
        double s = fe_tensor_get_f64(scale, (uint64_t)o) /
                   sqrt(fe_tensor_get_f64(var, (uint64_t)o) + (double)eps);
        for (uint64_t i = 0; i < per; i++) {
            uint64_t k = (uint64_t)o * per + i;
            fe_tensor_set_f64(nw, k, fe_tensor_get_f64(w, k) * s);
        }
        double bias = b ? fe_tensor_get_f64(b, (uint64_t)o) : 0.0;
        fe_tensor_set_f64(nb, (uint64_t)o,
                          (bias - fe_tensor_get_f64(mean, (uint64_t)o)) * s +
                              fe_tensor_get_f64(beta, (uint64_t)o));
    }
    f->weight = nw;
    f->bias = nb;
    *out_done = true;
    return LM_OK;
}

/* Node n is op(v, k) or op(k, v) (NumPy broadcasting, opset 7 on) with k a
 * float constant holding one value per element of v's dim `ch` and 1
 * elsewhere, as broadcasting lines it up against v: k, else NULL. */
static const fe_tensor *channel_const(const fe_ctx *c, const fe_node *n, uint32_t v, int32_t ch) {
    if (n->input_count != 2 || n->opset < 7) return NULL;
    uint32_t other = n->inputs[0] == v ? 1 : 0;
    if (n->inputs[1 - other] != v) return NULL;
    const fe_tensor *k = const_input(c, n, other);
    const fe_type *t = &c->g->values[v].type;
    if (!k || !fe_elem_is_float(k->elem) || ch < 0 || ch >= (int32_t)t->rank ||
        (int64_t)k->count != t->dims[ch] || (int32_t)k->rank > (int32_t)t->rank)
        return NULL;
    for (int32_t d = 0; d < (int32_t)k->rank; d++) {
        int32_t td = (int32_t)t->rank - (int32_t)k->rank + d;
        if (k->dims[d] != (td == ch ? t->dims[ch] : 1)) return NULL;
    }
    return k;
}

/* Add(value, constant) where the constant is a bias over the head node's
 * channel dim: the last dim for MatMul, dim 1 of an NC... result for Conv. */
static lm_status fold_bias(fe_ctx *c, const fe_node *head, const fe_node *add, uint32_t from,
                           fe_fusion *f, bool *out_done) {
    *out_done = false;
    const fe_type *out = &c->g->values[from].type;
    if (out->rank < 2) return LM_OK;
    bool conv = strcmp(head->op_type, "Conv") == 0;
    int32_t ch = conv ? 1 : out->rank - 1;
    int64_t n = out->dims[ch];
    const fe_tensor *k = channel_const(c, add, from, ch);
    if (!k) return LM_OK;
    /* The head's own bias input is added in, so its lower reads only this. */
    const fe_tensor *own = f->bias;
    if (!own && conv && fe_has_in(head, 2)) {
        own = const_input(c, head, 2);
        if (!own) return LM_OK;
    }
    if (!conv && strcmp(head->op_type, "MatMul") != 0) return LM_OK;
    fe_tensor *nb = float_const(c, 1, &n);
    if (!nb) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (int64_t i = 0; i < n; i++)
        fe_tensor_set_f64(nb, (uint64_t)i,
                          fe_tensor_get_f64(k, (uint64_t)i) +
                              (own ? fe_tensor_get_f64(own, (uint64_t)i) : 0.0));
    f->bias = nb;
    *out_done = true;
    return LM_OK;
}

/* Whether HardSigmoid node n is PyTorch's (relu6(x + 3) / 6, the op
 * library's): alpha 1/6 and beta 0.5 as float32 attributes. */
static bool pytorch_hardsigmoid(fe_ctx *c, const fe_node *n) {
    float alpha, beta;
    return !fe_attr_float(c, n, "alpha", 0.2f, &alpha) &&
           !fe_attr_float(c, n, "beta", 0.5f, &beta) && alpha == (float)(1.0 / 6.0) && beta == 0.5f;
}

/* Whether Mul or Div node n takes value v times (over) a one-element
 * float constant, and gives v's shape (a constant of a higher rank would
 * broadcast v): *out_s, the constant as the device's dtype holds it (a
 * float32 lowest saturated in the bfloat16 modes, as the Mul's own
 * constant would be: an attention mask's 0 * lowest must stay 0). */
static bool scaled_by(fe_ctx *c, const fe_node *n, uint32_t v, double *out_s) {
    if (fe_in_count(n) != 2) return false;
    uint32_t k = n->inputs[0] == v ? 1 : 0;
    const fe_tensor *s = fe_in_const(c, n, k);
    const fe_type *vt = &c->g->values[v].type, *ot = &c->g->values[n->outputs[0]].type;
    if (n->inputs[1 - k] != v || (k == 0 && n->op_type[0] == 'D') || !s || s->count != 1 ||
        !fe_elem_is_float(s->elem) || ot->rank != vt->rank ||
        memcmp(ot->dims, vt->dims, (size_t)vt->rank * sizeof *vt->dims))
        return false;
    *out_s = fe_saturate_scalar(fe_dev_dtype(c, ot->elem), (float)fe_tensor_get_f64(s, 0));
    return true;
}

static lm_status fold_activation(fe_ctx *c, const fe_node *act, uint32_t cur, fe_fusion *f,
                                 bool *out_done) {
    *out_done = false;
    lm_status st = LM_OK;
    if (!strcmp(act->op_type, "Relu") && act->attr_count == 0) {
        f->activation = LMNN_RELU;
    } else if (!strcmp(act->op_type, "Sigmoid") && act->attr_count == 0) {
        f->activation = LMNN_SIGMOID;
    } else if (!strcmp(act->op_type, "Tanh") && act->attr_count == 0) {
        f->activation = LMNN_TANH;
    } else if (!strcmp(act->op_type, "LeakyRelu")) {
        float alpha;
        if ((st = fe_attr_float(c, act, "alpha", 0.01f, &alpha))) return st;
        f->activation = LMNN_LEAKY_RELU;
        f->act_alpha = alpha;
    } else if (!strcmp(act->op_type, "Gelu")) {
        if ((st = fe_gelu_form(c, act, &f->activation))) return st;
    } else if ((!strcmp(act->op_type, "Mul") || !strcmp(act->op_type, "Div")) &&
               scaled_by(c, act, cur, &f->act_alpha)) {
        /* A scale (attention's scores by sqrt(d)) as the result is stored. */
        f->activation = act->op_type[0] == 'M' ? LMNN_MUL_UNARY : LMNN_DIV_UNARY;
    } else if (!strcmp(act->op_type, "HardSwish") && act->attr_count == 0) {
        f->activation = LMNN_HARDSWISH;
    } else if (!strcmp(act->op_type, "HardSigmoid") && pytorch_hardsigmoid(c, act)) {
        f->activation = LMNN_HARDSIGMOID;
    } else if (!strcmp(act->op_type, "Clip")) {
        /* Bounds known when compiling (attributes before opset 11, constant
         * inputs since): a clamp, as the Clip itself would lower (ReLU6's
         * usual form). A bound computed at run time keeps the Clip. */
        float amin, amax;
        if ((st = fe_attr_float(c, act, "min", -INFINITY, &amin)) ||
            (st = fe_attr_float(c, act, "max", INFINITY, &amax)))
            return st;
        double bound[2] = {amin, amax};
        for (uint32_t i = 1; i < 3 && i < act->input_count; i++) {
            if (act->inputs[i] == FE_NONE) continue;
            const fe_tensor *k = fe_in_const(c, act, i);
            if (!k) return LM_OK;
            bound[i - 1] = fe_tensor_get_f64(k, 0);
        }
        f->activation = LMNN_CLAMP;
        f->act_alpha = bound[0];
        f->act_beta = bound[1];
    } else {
        return LM_OK;
    }
    *out_done = true;
    return LM_OK;
}

/* x * Sigmoid(x) (SiLU) or x * HardSigmoid(x) (HardSwish before opset 14,
 * with PyTorch's HardSigmoid), as exporters write them: value v read by
 * exactly the gate and a Mul of v and the gate's output, which nothing else
 * reads, all on the device. The two nodes in *out_gate and *out_mul, the
 * activation they make in *out_act. */
static bool gated_of(fe_ctx *c, uint32_t v, uint32_t *out_gate, uint32_t *out_mul,
                     lmnn_unary_op *out_act) {
    const fe_graph *g = c->g;
    if (g->values[v].graph_output || g->values[v].use_count != 2) return false;
    uint32_t gate = FE_NONE, mul = FE_NONE;
    lmnn_unary_op act = LMNN_UNARY_INVALID;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        bool reads = false;
        for (uint32_t i = 0; i < n->input_count; i++)
            reads |= n->inputs[i] == v;
        if (!reads) continue;
        if (c->plans[k].placement != LMFE_ON_DEVICE) return false;
        lmnn_unary_op made = !strcmp(n->op_type, "Sigmoid") && n->attr_count == 0 ? LMNN_SILU
                             : !strcmp(n->op_type, "HardSigmoid") && pytorch_hardsigmoid(c, n)
                                 ? LMNN_HARDSWISH
                                 : LMNN_UNARY_INVALID;
        if (gate == FE_NONE && made != LMNN_UNARY_INVALID) {
            gate = k;
            act = made;
        } else if (!strcmp(n->op_type, "Mul") && n->input_count == 2 && mul == FE_NONE) {
            mul = k;
        } else {
            return false;
        }
    }
    if (gate == FE_NONE || mul == FE_NONE) return false;
    uint32_t s = g->nodes[gate].outputs[0];
    const uint32_t *in = g->nodes[mul].inputs;
    if (g->values[s].graph_output || g->values[s].use_count != 1 ||
        !((in[0] == v && in[1] == s) || (in[0] == s && in[1] == v)))
        return false;
    *out_gate = gate;
    *out_mul = mul;
    *out_act = act;
    return true;
}

/* The device node of op `op` that is value v's only reader, or FE_NONE. */
static uint32_t sole_op(const fe_ctx *c, const uint32_t *reader, uint32_t v, const char *op) {
    uint32_t r = sole_reader(c, reader, v);
    return r != FE_NONE && !strcmp(c->g->nodes[r].op_type, op) ? r : FE_NONE;
}

/* Input i of n as a one-element float constant. */
static bool const_scalar(const fe_ctx *c, const fe_node *n, uint32_t i, double *out) {
    const fe_tensor *t = const_input(c, n, i);
    if (!t || t->count != 1 || !fe_elem_is_float(t->elem)) return false;
    *out = fe_tensor_get_f64(t, 0);
    return true;
}

/* Node k's inputs are a and b, in that order. */
static bool reads2(const fe_graph *g, uint32_t k, uint32_t a, uint32_t b) {
    const fe_node *n = &g->nodes[k];
    return n->input_count == 2 && n->inputs[0] == a && n->inputs[1] == b;
}

/* Node k is op(v, constant [size]) or op(constant [size], v): its constant. */
static const fe_tensor *const_row(const fe_ctx *c, uint32_t k, uint32_t v, int64_t size) {
    const fe_node *n = &c->g->nodes[k];
    if (n->input_count != 2) return NULL;
    uint32_t other = n->inputs[0] == v ? 1 : n->inputs[1] == v ? 0 : 2;
    const fe_tensor *t = other < 2 ? const_input(c, n, other) : NULL;
    return t && t->rank == 1 && t->dims[0] == size && fe_elem_is_float(t->elem) ? t : NULL;
}

/* ---- GELU spelled out ----
 * Exporters before opset 20 write GELU as element-wise ops on one-element
 * constants: 0.5 * x * (1 + erf(x / sqrt(2))), or the tanh form
 * 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), with the
 * operands in any order and the constants in several spellings (x / 1.414
 * or x * 0.7071, Pow(x, 3) or x * x * x, the 0.5 first or last). Rather
 * than list spellings, gelu_of collects the nodes that read x, and then
 * their readers, while each reads only x, such nodes and one-element
 * constants with an op it can evaluate; when the nodes so far are read by
 * nothing else but through the last one, it evaluates them in float64 at
 * sample points and compares with both forms. A test that cannot tell them
 * apart would be a wrong answer: they differ by up to 2e-4 near |x| = 2,
 * the tolerance is 1e-6 and the exporters' float32 constants err by 1e-7. */

enum { GELU_NODES = 12, GELU_POINTS = 12, GELU_GAP = 32 };
typedef enum sop { S_ADD, S_SUB, S_MUL, S_DIV, S_POW, S_ERF, S_TANH, S_SQRT, S_NEG, S_NONE } sop;

static sop scalar_op(const char *op) {
    static const char *const names[S_NONE] = {"Add", "Sub",  "Mul",  "Div", "Pow",
                                              "Erf", "Tanh", "Sqrt", "Neg"};
    for (int i = 0; i < S_NONE; i++)
        if (!strcmp(op, names[i])) return (sop)i;
    return S_NONE;
}

static double scalar_eval(sop op, double a, double b) {
    switch (op) {
    case S_ADD:
        return a + b;
    case S_SUB:
        return a - b;
    case S_MUL:
        return a * b;
    case S_DIV:
        return a / b;
    case S_POW:
        return pow(a, b);
    case S_ERF:
        return erf(a);
    case S_TANH:
        return tanh(a);
    case S_SQRT:
        return sqrt(a);
    case S_NEG:
        return -a;
    case S_NONE:
        break;
    }
    return NAN;
}

/* Whether float64 values f(pts) are GELU's, in the erf form or the tanh one. */
static lmnn_unary_op gelu_form_of(const double *pts, const double *f) {
    bool erf_form = true, tanh_form = true;
    for (int p = 0; p < GELU_POINTS; p++) {
        double tol = 1e-6 * (1 + fabs(pts[p]));
        erf_form &= fabs(f[p] - fe_gelu_value(LMNN_GELU, pts[p])) <= tol;
        tanh_form &= fabs(f[p] - fe_gelu_value(LMNN_GELU_TANH, pts[p])) <= tol;
    }
    return erf_form ? LMNN_GELU : tanh_form ? LMNN_GELU_TANH : LMNN_UNARY_INVALID;
}

/* GELU of value x spelled out, all on the device (see above): its nodes
 * into nodes[0 .. *out_count), its form in *out_act, the value it makes in
 * *out_value. The value must have x's type. */
static bool gelu_of(fe_ctx *c, uint32_t x, uint32_t *nodes, uint32_t *out_count,
                    lmnn_unary_op *out_act, uint32_t *out_value) {
    static const double pts[GELU_POINTS] = {-6.5,    -3,   -2, -1.25, -0.5, -0.0625,
                                            0.03125, 0.75, 1,  2.125, 3.5,  7};
    const fe_graph *g = c->g;
    const fe_value *xv = &g->values[x];
    /* Both forms read x at least twice (the scale and the product). */
    if (xv->graph_output || xv->use_count < 2 || xv->use_count > 5 ||
        !fe_elem_is_float(xv->type.elem))
        return false;
    uint32_t vals[GELU_NODES + 1] = {x}, reads[GELU_NODES + 1] = {0}, n = 0;
    double f[GELU_NODES + 1][GELU_POINTS];
    memcpy(f[0], pts, sizeof pts);
    uint32_t last = xv->producer == FE_NONE ? 0 : xv->producer;
    for (uint32_t k = last + 1; k < g->node_count && k <= last + GELU_GAP; k++) {
        const fe_node *nd = &g->nodes[k];
        int slot[2] = {-1, -1};
        double konst[2] = {0, 0};
        bool touches = false;
        for (uint32_t i = 0; i < nd->input_count && i < 2; i++)
            for (uint32_t j = 0; j <= n; j++)
                if (nd->inputs[i] == vals[j]) slot[i] = (int)j, touches = true;
        if (!touches) continue;
        sop op = scalar_op(nd->op_type);
        uint32_t arity = op <= S_POW ? 2 : 1;
        if (op == S_NONE || n == GELU_NODES || c->plans[k].placement != LMFE_ON_DEVICE ||
            nd->input_count != arity || nd->output_count != 1 || nd->attr_count ||
            nd->outputs[0] == FE_NONE)
            return false;
        for (uint32_t i = 0; i < arity; i++)
            if (slot[i] < 0 && !const_scalar(c, nd, i, &konst[i])) return false;
        for (uint32_t i = 0; i < arity; i++)
            if (slot[i] >= 0) reads[slot[i]]++;
        n++;
        nodes[n - 1] = k;
        vals[n] = nd->outputs[0];
        for (int p = 0; p < GELU_POINTS; p++)
            f[n][p] = scalar_eval(op, slot[0] >= 0 ? f[slot[0]][p] : konst[0],
                                  arity == 2 && slot[1] >= 0 ? f[slot[1]][p] : konst[1]);
        last = k;
        /* Closed: everything before the last value is read here only. */
        bool closed = true;
        for (uint32_t j = 0; j < n; j++)
            closed &= !g->values[vals[j]].graph_output && reads[j] == g->values[vals[j]].use_count;
        const fe_type *yt = &g->values[vals[n]].type;
        if (!closed || yt->elem != xv->type.elem || yt->rank != xv->type.rank ||
            memcmp(yt->dims, xv->type.dims, (size_t)yt->rank * sizeof *yt->dims))
            continue;
        /* (x * (1 + erf(...)) is closed too, before its * 0.5.) */
        lmnn_unary_op act = gelu_form_of(pts, f[n]);
        if (act == LMNN_UNARY_INVALID) continue;
        *out_count = n;
        *out_act = act;
        *out_value = vals[n];
        return true;
    }
    return false;
}

/* The Add of value v's only reader when it adds a scalar constant epsilon
 * (>= 0, into *out_eps) to v, either way round; else FE_NONE. */
static uint32_t add_eps(const fe_ctx *c, const uint32_t *reader, uint32_t v, double *out_eps) {
    uint32_t add = sole_op(c, reader, v, "Add");
    if (add == FE_NONE) return FE_NONE;
    const fe_node *an = &c->g->nodes[add];
    bool ok =
        an->inputs[0] == v ? const_scalar(c, an, 1, out_eps) : const_scalar(c, an, 0, out_eps);
    return ok && *out_eps >= 0 ? add : FE_NONE;
}

/* Records a normalization spelled out on its head node k: fusion f with
 * epsilon eps, ending in value `output`; the chain's other nodes fused.
 * True. */
static bool record_norm(fe_ctx *c, uint32_t k, fe_fusion *f, double eps, const uint32_t *chain,
                        uint32_t count, uint32_t output) {
    for (uint32_t i = 0; i < count; i++)
        c->plans[chain[i]].placement = LMFE_FUSED;
    f->eps = eps;
    f->output = output;
    c->plans[k].fusion = *f;
    return true;
}

/* The layer normalization exporters spell out before opset 17, from
 * ReduceMean node k over x's last dim:
 *   m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2));
 *   y = Div(d, Sqrt(Add(v, eps))); then Mul(y, gamma), Add(., beta)
 * (each optional, constants of the dim's size), every value but the last
 * read only inside the chain. Records it on k (fe_fusion.layer_norm) and
 * marks the rest fused. */
static bool fuse_layer_norm(fe_ctx *c, const uint32_t *reader, uint32_t k) {
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[k];
    if (!fe_mean_over_last_dim(c, n)) return false;
    uint32_t x = n->inputs[0], m = n->outputs[0];
    const fe_type *xt = &g->values[x].type;
    if (!fe_elem_is_float(xt->elem)) return false;
    uint32_t sub = sole_op(c, reader, m, "Sub");
    if (sub == FE_NONE || !reads2(g, sub, x, m)) return false;
    uint32_t d = g->nodes[sub].outputs[0];
    if (g->values[d].graph_output || g->values[d].use_count != 2) return false;
    /* d's two readers: Pow(d, 2) and Div(d, ...). */
    uint32_t pow = FE_NONE, div = FE_NONE;
    for (uint32_t j = 0; j < g->node_count; j++) {
        const fe_node *r = &g->nodes[j];
        if (r->input_count < 1 || r->inputs[0] != d || c->plans[j].placement != LMFE_ON_DEVICE)
            continue;
        if (!strcmp(r->op_type, "Pow")) pow = j;
        if (!strcmp(r->op_type, "Div")) div = j;
    }
    double two, eps;
    if (pow == FE_NONE || div == FE_NONE || !const_scalar(c, &g->nodes[pow], 1, &two) || two != 2)
        return false;
    uint32_t mean2 = sole_op(c, reader, g->nodes[pow].outputs[0], "ReduceMean");
    if (mean2 == FE_NONE || !fe_mean_over_last_dim(c, &g->nodes[mean2])) return false;
    uint32_t add = add_eps(c, reader, g->nodes[mean2].outputs[0], &eps);
    if (add == FE_NONE) return false;
    uint32_t sqrt = sole_op(c, reader, g->nodes[add].outputs[0], "Sqrt");
    if (sqrt == FE_NONE || sole_reader(c, reader, g->nodes[sqrt].outputs[0]) != div ||
        !reads2(g, div, d, g->nodes[sqrt].outputs[0]))
        return false;
    uint32_t chain[9] = {sub, pow, mean2, add, sqrt, div}, count = 6;
    uint32_t cur = g->nodes[div].outputs[0], next;
    fe_fusion f = c->plans[k].fusion;
    int64_t size = xt->dims[xt->rank - 1];
    if ((next = sole_op(c, reader, cur, "Mul")) != FE_NONE &&
        (f.weight = const_row(c, next, cur, size))) {
        chain[count++] = next;
        cur = g->nodes[next].outputs[0];
        if ((next = sole_op(c, reader, cur, "Add")) != FE_NONE &&
            (f.bias = const_row(c, next, cur, size))) {
            chain[count++] = next;
            cur = g->nodes[next].outputs[0];
        }
    }
    f.layer_norm = true;
    return record_norm(c, k, &f, eps, chain, count, cur);
}

/* The RMS normalization exporters spell out (LLaMA's and T5's: ONNX has no
 * op for it before opset 23), from node k, Pow(x, 2) or Mul(x, x):
 *   v = ReduceMean(k) over x's last dim; s = Sqrt(Add(v, eps));
 *   y = Mul(x, Div(1, s)), Mul(x, Reciprocal(s)) or Div(x, s);
 *   then Mul(y, gamma) when gamma is a constant of the dim's size, with
 *   perhaps a Cast to x's type between (each Mul either way round), every value but the last read
 * only inside the chain. Records it on k (fe_fusion.rms_norm) and marks the rest fused. */
static bool fuse_rms_norm(fe_ctx *c, const uint32_t *reader, uint32_t k) {
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[k];
    double two, eps, one;
    bool pow = !strcmp(n->op_type, "Pow") && n->input_count == 2 && const_scalar(c, n, 1, &two) &&
               two == 2;
    if (!pow && !(!strcmp(n->op_type, "Mul") && reads2(g, k, n->inputs[0], n->inputs[0])))
        return false;
    uint32_t x = n->inputs[0];
    const fe_type *xt = &g->values[x].type;
    /* (A Pow by a [1, 1, 1] two would broadcast x to more dims.) */
    if (!fe_elem_is_float(xt->elem) || xt->rank < 1 ||
        g->values[n->outputs[0]].type.rank != xt->rank)
        return false;
    uint32_t mean = sole_op(c, reader, n->outputs[0], "ReduceMean");
    if (mean == FE_NONE || !fe_mean_over_last_dim(c, &g->nodes[mean])) return false;
    uint32_t add = add_eps(c, reader, g->nodes[mean].outputs[0], &eps);
    uint32_t sqrt = add == FE_NONE ? FE_NONE : sole_op(c, reader, g->nodes[add].outputs[0], "Sqrt");
    if (sqrt == FE_NONE) return false;
    uint32_t s = g->nodes[sqrt].outputs[0], chain[7] = {mean, add, sqrt}, count = 3;
    uint32_t next = sole_reader(c, reader, s);
    if (next == FE_NONE) return false;
    const fe_node *nn = &g->nodes[next];
    chain[count++] = next;
    uint32_t cur = nn->outputs[0];
    if (!(!strcmp(nn->op_type, "Div") && reads2(g, next, x, s))) {
        bool inverse = !strcmp(nn->op_type, "Reciprocal") ||
                       (!strcmp(nn->op_type, "Div") && nn->input_count == 2 && nn->inputs[1] == s &&
                        const_scalar(c, nn, 0, &one) && one == 1);
        uint32_t mul = inverse ? sole_op(c, reader, cur, "Mul") : FE_NONE;
        if (mul == FE_NONE || !(reads2(g, mul, x, cur) || reads2(g, mul, cur, x))) return false;
        chain[count++] = mul;
        cur = g->nodes[mul].outputs[0];
    }
    /* Hugging Face's LLaMA casts back to the input's type before the
     * weight: a Cast to the type the value has is nothing. */
    uint32_t cast = sole_op(c, reader, cur, "Cast"), at = cur;
    if (cast != FE_NONE && g->values[g->nodes[cast].outputs[0]].type.elem == xt->elem)
        at = g->nodes[cast].outputs[0];
    fe_fusion f = c->plans[k].fusion;
    if ((next = sole_op(c, reader, at, "Mul")) != FE_NONE &&
        (f.weight = const_row(c, next, at, xt->dims[xt->rank - 1]))) {
        if (at != cur) chain[count++] = cast;
        chain[count++] = next;
        cur = g->nodes[next].outputs[0];
    }
    f.rms_norm = true;
    return record_norm(c, k, &f, eps, chain, count, cur);
}

/* Whether the layout plan may take node n (a Transpose between NCHW and
 * NHWC) for images: its op's own answer (fe_layout.c plans after this). */
static bool takes_images(fe_ctx *c, const fe_node *n) {
    const fe_op_def *def = fe_op_find(n->op_type);
    return def && def->images && def->images(c, n);
}

/* Whether Reshape node k keeps the last two dims (a view of the same tiles)
 * and is read by a Transpose that keeps the last dim but moves the one
 * before (the rows of each matrix: not a permutation of whole tiles,
 * which the chain makes as well as anyone): then the reshape
 * heads no pass, the transpose stays a permutation not yet made, and a
 * reshape after it heads its own (heads joined from the [B, KV, G, S, D]
 * of a grouped-query product, fe_ops_nn.c). */
static bool view_then_kept_last(fe_ctx *c, const uint32_t *reader, uint32_t k) {
    const fe_node *n = &c->g->nodes[k];
    const fe_type *in = fe_in_type(c, n, 0), *out = &c->g->values[n->outputs[0]].type;
    uint32_t r = sole_reader(c, reader, n->outputs[0]);
    if (in->rank < 2 || out->rank < 2 || in->dims[in->rank - 1] != out->dims[out->rank - 1] ||
        in->dims[in->rank - 2] != out->dims[out->rank - 2] || r == FE_NONE ||
        strcmp(c->g->nodes[r].op_type, "Transpose") != 0)
        return false;
    const int64_t *perm;
    size_t count;
    return !fe_attr_ints(c, &c->g->nodes[r], "perm", &perm, &count) && perm &&
           count == (size_t)out->rank && perm[count - 1] == out->rank - 1 &&
           perm[count - 2] != out->rank - 2;
}

/* Reshape node k -> Transposes and Reshapes, each the sole reader of the
 * last (up to FE_REGROUP_STEPS): recorded on k while they still make one
 * pass (fe_regroup.c). */
static bool fuse_regroup(fe_ctx *c, const uint32_t *reader, uint32_t k) {
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[k];
    if (strcmp(n->op_type, "Reshape")) return false;
    fe_fusion f = c->plans[k].fusion;
    if (view_then_kept_last(c, reader, k)) return false;
    uint32_t v = n->outputs[0], count = 0;
    while (count < FE_REGROUP_STEPS) {
        uint32_t r = sole_reader(c, reader, v);
        if (r == FE_NONE) break;
        const fe_node *rn = &g->nodes[r];
        bool t = !strcmp(rn->op_type, "Transpose");
        /* A transpose to or from NHWC is left to the layout plan when it
         * may read an image: not right after the head, whose plain reshape
         * makes none (GPT's keys, [B, S, H, D] to [B, H, D, S], look like
         * NCHW to NHWC). */
        if ((!t && strcmp(rn->op_type, "Reshape")) || rn->inputs[0] != v ||
            (t && count && takes_images(c, rn)))
            break;
        f.steps[count] = r;
        if (!fe_regroup_fits(c, n, f.steps, count + 1)) break;
        v = rn->outputs[0];
        count++;
    }
    if (!count) return false;
    f.step_count = count;
    f.output = v;
    c->plans[k].fusion = f;
    for (uint32_t i = 0; i < count; i++)
        c->plans[f.steps[i]].placement = LMFE_FUSED;
    return true;
}

/* Pad node k (constant zeros around H and W of an [N, C, H, W] value, or
 * around L of an [N, C, L] one) read only by a Conv or an AveragePool
 * (counting the padding, without ceil_mode): its pads move into the
 * reader's, which then reads the Pad's input (an exporter's explicit
 * padding, TensorFlow's and torchvision Inception's, a causal 1-D
 * convolution's left padding). The padded copy is never made, and an image
 * stays an image for the reader. */
static lm_status fold_pad(fe_ctx *c, const uint32_t *reader, uint32_t k, bool *out_done) {
    *out_done = false;
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[k];
    uint32_t pads[2 * FE_MAX_RANK], crops[2 * FE_MAX_RANK];
    lmnn_pad_options po;
    /* [N, C, H, W] or [N, C, L]: sp spatial dims. */
    int32_t rank = n->input_count ? fe_in_type(c, n, 0)->rank : 0, sp = rank - 2;
    if (strcmp(n->op_type, "Pad") || !n->output_count || n->outputs[0] == FE_NONE ||
        (rank != 3 && rank != 4) || fe_pad_read(c, n, pads, crops, &po) ||
        po.mode != LMNN_PAD_CONSTANT || po.value != 0 || pads[0] || pads[1] || pads[2] || pads[3])
        return LM_OK;
    for (int i = 0; i < 2 * rank; i++)
        if (crops[i]) return LM_OK;
    uint32_t v = n->outputs[0], r = sole_reader(c, reader, v);
    if (r == FE_NONE) return LM_OK;
    fe_node *rn = &g->nodes[r];
    bool pool = !strcmp(rn->op_type, "AveragePool");
    if ((!pool && strcmp(rn->op_type, "Conv")) || rn->inputs[0] != v) return LM_OK;
    for (uint32_t i = 1; i < rn->input_count; i++)
        if (rn->inputs[i] == v) return LM_OK;
    const char *auto_pad;
    const int64_t *own;
    size_t count;
    int64_t include = 1, ceil_mode = 0;
    if (fe_attr_string(c, rn, "auto_pad", "NOTSET", &auto_pad) || strcmp(auto_pad, "NOTSET") ||
        fe_attr_ints(c, rn, "pads", &own, &count) || (own && count != (size_t)(2 * sp)) ||
        (pool && (fe_attr_int(c, rn, "count_include_pad", 0, &include) ||
                  fe_attr_int(c, rn, "ceil_mode", 0, &ceil_mode))))
        return LM_OK;
    bool own_pads = false;
    for (int32_t i = 0; own && i < 2 * sp; i++)
        own_pads |= own[i] != 0;
    /* The reader's own padding counted as zeros too, or none of it. */
    if (pool && (ceil_mode || (!include && own_pads))) return LM_OK;
    fe_attr *attrs = fe_arena_alloc(&g->arena, (rn->attr_count + 2) * sizeof *attrs);
    int64_t *sum = fe_arena_alloc(&g->arena, (size_t)(2 * sp) * sizeof *sum);
    if (!attrs || !sum) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    /* ONNX's pads: the spatial dims' begins, then their ends; the Pad's
     * per dim. */
    for (int32_t d = 0; d < sp; d++) {
        sum[d] = (own ? own[d] : 0) + pads[2 * (d + 2)];
        sum[d + sp] = (own ? own[d + sp] : 0) + pads[2 * (d + 2) + 1];
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < rn->attr_count; i++)
        if (strcmp(rn->attrs[i].name, "pads") && strcmp(rn->attrs[i].name, "count_include_pad"))
            attrs[m++] = rn->attrs[i];
    attrs[m++] =
        (fe_attr){.name = "pads", .type = FE_ATTR_INTS, .ints = sum, .count = (size_t)(2 * sp)};
    if (pool) attrs[m++] = (fe_attr){.name = "count_include_pad", .type = FE_ATTR_INT, .i = 1};
    rn->attrs = attrs;
    rn->attr_count = m;
    /* The reader takes the Pad's place as the input's reader (the Pad
     * reads nothing any more: the layout plan must not see it read the
     * input in NCHW). */
    rn->inputs[0] = n->inputs[0];
    g->nodes[k].inputs[0] = FE_NONE;
    g->values[v].use_count--;
    c->plans[k].placement = LMFE_FUSED;
    *out_done = true;
    return LM_OK;
}

/* A single-node activation (fold_activation) after shape-only node k
 * (Reshape, Flatten, Squeeze, Unsqueeze) that reads value `cur`: an
 * element-wise map commutes with them, so it is folded into f and node k
 * reshapes the mapped value into the activation's own result instead. A
 * grouped-query attention's scores (a view of the broadcast product) are
 * scaled so. The activation's node is marked fused; `cur` stays. */
static lm_status fold_through_shape(fe_ctx *c, uint32_t *reader, uint32_t k, uint32_t cur,
                                    fe_fusion *f, bool *out_done) {
    *out_done = false;
    fe_graph *g = c->g;
    fe_node *n = &g->nodes[k];
    static const char *const shape_only[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
    bool shape = false;
    for (size_t i = 0; i < sizeof shape_only / sizeof *shape_only; i++)
        shape |= !strcmp(n->op_type, shape_only[i]);
    if (!shape || !n->input_count || n->inputs[0] != cur || n->output_count != 1) return LM_OK;
    uint32_t r = n->outputs[0], a = sole_reader(c, reader, r);
    if (a == FE_NONE || g->nodes[a].output_count != 1) return LM_OK;
    fe_node *an = &g->nodes[a];
    uint32_t d = an->outputs[0];
    const fe_type *rt = &g->values[r].type, *dt = &g->values[d].type;
    if (rt->elem != dt->elem) return LM_OK;
    lm_status st = fold_activation(c, an, r, f, out_done);
    if (st || !*out_done) return st;
    /* k now makes d; r, which only the activation read, is left unmade. */
    n->outputs[0] = d;
    g->values[d].producer = k;
    for (uint32_t i = 0; i < an->input_count; i++)
        if (an->inputs[i] == r) an->inputs[i] = FE_NONE;
    g->values[r].use_count = 0;
    g->values[r].producer = FE_NONE;
    reader[r] = FE_NONE;
    c->plans[a].placement = LMFE_FUSED;
    return LM_OK;
}

/* The activation after value *cur, if any (x * Sigmoid(x) and its kin,
 * GELU spelled out, or a single node fold_activation takes, also past a
 * shape-only node: fold_through_shape): recorded in f, its nodes marked
 * fused, *cur moved on to its result. */
static lm_status fuse_activation(fe_ctx *c, uint32_t *reader, fe_fusion *f, uint32_t *cur) {
    fe_graph *g = c->g;
    uint32_t sig, mul, gelu[GELU_NODES], count = 0, next;
    lmnn_unary_op gated;
    bool done;
    if (gated_of(c, *cur, &sig, &mul, &gated)) {
        f->activation = gated;
        c->plans[sig].placement = c->plans[mul].placement = LMFE_FUSED;
        *cur = g->nodes[mul].outputs[0];
    } else if (gelu_of(c, *cur, gelu, &count, &gated, &next)) {
        f->activation = gated;
        for (uint32_t i = 0; i < count; i++)
            c->plans[gelu[i]].placement = LMFE_FUSED;
        *cur = next;
    } else if ((next = sole_reader(c, reader, *cur)) != FE_NONE) {
        lm_status st = fold_activation(c, &g->nodes[next], *cur, f, &done);
        if (st) return st;
        if (done) {
            c->plans[next].placement = LMFE_FUSED;
            *cur = g->nodes[next].outputs[0];
        } else {
            return fold_through_shape(c, reader, next, *cur, f, &done);
        }
    }
    return LM_OK;
}

/* The group normalization exporters spell out before opset 18 (PyTorch's
 * GroupNorm), from Reshape node k:
 *   r = Reshape(x, [N, G, L]); i = InstanceNormalization(r, s, b);
 *   y = Reshape(i, x's shape); then Mul(y, gamma), Add(., beta)
 * with x [N, C, ...] a value computed at run time, s and b constants [G],
 * gamma and beta (each optional) constants of one value per channel, and
 * an activation after them (fuse_activation). The affine maps fold into
 * one per channel: weight s[g] gamma, bias b[g] gamma + beta (PyTorch's s
 * and b are ones and zeros: gamma and beta as they are). Recorded on k
 * (fe_fusion.group_norm), the rest marked fused: the op library normalizes
 * x's groups where they are, with no reshaped copies. */
static lm_status fuse_group_norm(fe_ctx *c, uint32_t *reader, uint32_t k, bool *out_done) {
    *out_done = false;
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[k];
    if (strcmp(n->op_type, "Reshape") || n->input_count < 1 || n->inputs[0] == FE_NONE)
        return LM_OK;
    uint32_t x = n->inputs[0], r = n->outputs[0];
    const fe_type *xt = &g->values[x].type, *rt = &g->values[r].type;
    if (g->values[x].konst || !fe_elem_is_float(xt->elem) || xt->rank < 3 || rt->rank != 3 ||
        rt->dims[0] != xt->dims[0])
        return LM_OK;
    int64_t C = xt->dims[1], G = rt->dims[1];
    if (G < 1 || C < G || C % G || C > UINT32_MAX) return LM_OK;
    uint32_t in = sole_op(c, reader, r, "InstanceNormalization");
    if (in == FE_NONE || g->nodes[in].inputs[0] != r) return LM_OK;
    const fe_node *inn = &g->nodes[in];
    const fe_tensor *s = const_input(c, inn, 1), *b = const_input(c, inn, 2);
    if (!s || !b || (int64_t)s->count != G || (int64_t)b->count != G ||
        !fe_elem_is_float(s->elem) || !fe_elem_is_float(b->elem))
        return LM_OK;
    uint32_t back = sole_op(c, reader, inn->outputs[0], "Reshape");
    if (back == FE_NONE || g->nodes[back].inputs[0] != inn->outputs[0]) return LM_OK;
    uint32_t cur = g->nodes[back].outputs[0], next;
    const fe_type *yt = &g->values[cur].type;
    if (yt->rank != xt->rank || memcmp(yt->dims, xt->dims, xt->rank * sizeof *xt->dims))
        return LM_OK;
    float eps;
    lm_status st = fe_attr_float(c, inn, "epsilon", 1e-5f, &eps);
    /* An epsilon the op library refuses stays with its node, which the
     * error then names. */
    if (st || !(eps >= 0) || isinf(eps)) return st;
    uint32_t chain[4] = {in, back}, count = 2;
    const fe_tensor *gamma = NULL, *beta = NULL;
    if ((next = sole_op(c, reader, cur, "Mul")) != FE_NONE &&
        (gamma = channel_const(c, &g->nodes[next], cur, 1))) {
        chain[count++] = next;
        cur = g->nodes[next].outputs[0];
    }
    if ((next = sole_op(c, reader, cur, "Add")) != FE_NONE &&
        (beta = channel_const(c, &g->nodes[next], cur, 1))) {
        chain[count++] = next;
        cur = g->nodes[next].outputs[0];
    }
    fe_tensor *w = float_const(c, 1, &C), *bias = float_const(c, 1, &C);
    if (!w || !bias) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (int64_t ch = 0; ch < C; ch++) {
        uint64_t gi = (uint64_t)(ch / (C / G));
        double gm = gamma ? fe_tensor_get_f64(gamma, (uint64_t)ch) : 1.0;
        fe_tensor_set_f64(w, (uint64_t)ch, fe_tensor_get_f64(s, gi) * gm);
        fe_tensor_set_f64(bias, (uint64_t)ch,
                          fe_tensor_get_f64(b, gi) * gm +
                              (beta ? fe_tensor_get_f64(beta, (uint64_t)ch) : 0.0));
    }
    for (uint32_t i = 0; i < count; i++)
        c->plans[chain[i]].placement = LMFE_FUSED;
    fe_fusion f = c->plans[k].fusion;
    if ((st = fuse_activation(c, reader, &f, &cur))) return st;
    f.group_norm = (uint32_t)G;
    f.weight = w;
    f.bias = bias;
    f.eps = eps;
    f.output = cur;
    c->plans[k].fusion = f;
    *out_done = true;
    return LM_OK;
}

lm_status fe_fuse(fe_ctx *c) {
    fe_graph *g = c->g;
    uint32_t *reader = malloc((g->value_count ? g->value_count : 1) * sizeof *reader);
    if (!reader) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t v = 0; v < g->value_count; v++)
        reader[v] = FE_NONE;
    for (uint32_t k = 0; k < g->node_count; k++)
        for (uint32_t i = 0; i < g->nodes[k].input_count; i++)
            if (g->nodes[k].inputs[i] != FE_NONE) reader[g->nodes[k].inputs[i]] = k;
    lm_status st = LM_OK;
    for (uint32_t k = 0; !st && k < g->node_count; k++) {
        bool done;
        uint32_t in = g->nodes[k].input_count ? g->nodes[k].inputs[0] : FE_NONE;
        if (c->plans[k].placement == LMFE_ON_DEVICE && !(st = fold_pad(c, reader, k, &done)) &&
            done)
            reader[in] = reader[g->nodes[k].outputs[0]];
    }
    for (uint32_t k = 0; !st && k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        bool done;
        if (c->plans[k].placement == LMFE_ON_DEVICE &&
            ((st = fuse_group_norm(c, reader, k, &done)) || done || fuse_layer_norm(c, reader, k) ||
             fuse_rms_norm(c, reader, k) || fuse_regroup(c, reader, k)))
            continue;
        uint32_t fuse = fusable(n->op_type);
        if (c->plans[k].placement != LMFE_ON_DEVICE || !fuse || !n->output_count ||
            n->outputs[0] == FE_NONE || !fe_elem_is_float(g->values[n->outputs[0]].type.elem) ||
            ((fuse & FUSE_AFTER_BINARY) && fe_in_count(n) < 2))
            continue;
        fe_fusion f = c->plans[k].fusion;
        uint32_t cur = n->outputs[0], next;
        /* Only float math folds: an integer MatMul keeps its own rounding. */
        if ((fuse & FUSE_BATCHNORM) && (next = sole_reader(c, reader, cur)) != FE_NONE &&
            !strcmp(g->nodes[next].op_type, "BatchNormalization")) {
            if ((st = fold_batchnorm(c, n, &g->nodes[next], &f, &done))) break;
            if (done) {
                c->plans[next].placement = LMFE_FUSED;
                cur = g->nodes[next].outputs[0];
            }
        }
        if ((fuse & FUSE_BIAS) && (next = sole_reader(c, reader, cur)) != FE_NONE &&
            !strcmp(g->nodes[next].op_type, "Add")) {
            if ((st = fold_bias(c, n, &g->nodes[next], cur, &f, &done))) break;
            if (done) {
                c->plans[next].placement = LMFE_FUSED;
                cur = g->nodes[next].outputs[0];
            }
        }
        if ((fuse & FUSE_ACTIVATION) && (st = fuse_activation(c, reader, &f, &cur))) break;
        if ((fuse & FUSE_POOL) && (next = sole_reader(c, reader, cur)) != FE_NONE &&
            c->plans[next].placement == LMFE_ON_DEVICE &&
            fe_pool_fusable(c, &g->nodes[next], f.pool_kernel, f.pool_stride)) {
            c->plans[next].placement = LMFE_FUSED;
            cur = g->nodes[next].outputs[0];
        }
        /* (fe_pool_fusable writes f's window even when it says no: f is
         * kept only when something was fused, an activation maybe past a
         * shape-only node, cur then unmoved.) */
        if (cur != n->outputs[0]) {
            f.output = cur;
            c->plans[k].fusion = f;
        } else if (f.activation != c->plans[k].fusion.activation) {
            c->plans[k].fusion.activation = f.activation;
            c->plans[k].fusion.act_alpha = f.act_alpha;
            c->plans[k].fusion.act_beta = f.act_beta;
        }
    }
    free(reader);
    return st;
}
