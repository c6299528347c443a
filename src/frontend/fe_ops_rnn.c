/* The recurrent ops: RNN, GRU and LSTM (opsets 7 to 14).
 *
 * Shapes are static, so a sequence is unrolled at compile time: one matrix
 * product gives every step's input part (X W^T plus the biases that can be
 * folded in) for a direction at once, then each step is a product with the
 * recurrence weights and the element-wise gate math of ONNX's equations,
 * all op library calls (for PyTorch's forms of LSTM and GRU, one fused cell
 * per step: see cell_fits). Forward, reverse and bidirectional; batch-major
 * layout (opset 14); initial states, peepholes, clip, LSTM's input_forget,
 * GRU's linear_before_reset and every activation ONNX lists. With
 * sequence_lens given at run time, the steps past a sequence's length
 * leave its state alone and write zeros to Y (a mask per step); a reverse
 * direction runs forwards over each sequence reversed within its length,
 * and reverses its Y back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

typedef enum { KIND_RNN, KIND_GRU, KIND_LSTM } rnn_kind;

typedef enum { ACT_UNARY, ACT_AFFINE, ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_THRESHOLDED } act_kind;

typedef struct rnn_act {
    act_kind kind;
    lmnn_unary_op op; /* ACT_UNARY */
    double alpha, beta;
    const char *name; /* ONNX's */
} rnn_act;

/* ONNX's activation names for these ops, what each takes and its defaults. */
typedef struct act_def {
    const char *name;
    act_kind kind;
    lmnn_unary_op op;
    bool alpha, beta;
    double def_alpha, def_beta;
} act_def;

static const act_def act_defs[] = {
    {"Relu", ACT_UNARY, LMNN_RELU, false, false, 0, 0},
    {"Tanh", ACT_UNARY, LMNN_TANH, false, false, 0, 0},
    {"Sigmoid", ACT_UNARY, LMNN_SIGMOID, false, false, 0, 0},
    {"LeakyRelu", ACT_UNARY, LMNN_LEAKY_RELU, true, false, 0.01, 0},
    {"Elu", ACT_UNARY, LMNN_ELU, true, false, 1.0, 0},
    {"Softsign", ACT_UNARY, LMNN_SOFTSIGN, false, false, 0, 0},
    {"Softplus", ACT_UNARY, LMNN_SOFTPLUS, false, false, 0, 0},
    {"Affine", ACT_AFFINE, LMNN_UNARY_INVALID, true, true, 1.0, 0.0},
    {"ScaledTanh", ACT_SCALED_TANH, LMNN_UNARY_INVALID, true, true, 1.0, 1.0},
    {"HardSigmoid", ACT_HARD_SIGMOID, LMNN_UNARY_INVALID, true, true, 0.2, 0.5},
    {"ThresholdedRelu", ACT_THRESHOLDED, LMNN_UNARY_INVALID, true, false, 1.0, 0},
};

typedef struct rnn_params {
    rnn_kind kind;
    uint32_t gates, acts; /* per direction: 1, 3, 4 gates; 1, 2, 3 activations */
    uint32_t dirs;
    bool reverse; /* direction "reverse" (bidirectional: the second one is) */
    bool batch_major;
    bool has_clip, input_forget, linear_before_reset;
    double clip;
    int64_t seq, batch, input, hidden;
    rnn_act act[2][3];
} rnn_params;

static rnn_kind kind_of(const fe_node *n) {
    return !strcmp(n->op_type, "LSTM")  ? KIND_LSTM
           : !strcmp(n->op_type, "GRU") ? KIND_GRU
                                        : KIND_RNN;
}

/* The activations: the attribute's names (consumed per direction), their
 * alphas and betas consumed in order by the activations that take them. */
static lm_status read_acts(fe_ctx *c, const fe_node *n, rnn_params *p) {
    static const char *const defaults[3][3] = {
        {"Tanh", NULL, NULL}, {"Sigmoid", "Tanh", NULL}, {"Sigmoid", "Tanh", "Tanh"}};
    const fe_attr *a = NULL;
    for (uint32_t i = 0; i < n->attr_count; i++)
        if (!strcmp(n->attrs[i].name, "activations")) a = &n->attrs[i];
    const float *alphas, *betas;
    size_t na, nb, ia = 0, ib = 0;
    lm_status st = fe_attr_floats(c, n, "activation_alpha", &alphas, &na);
    if (!st) st = fe_attr_floats(c, n, "activation_beta", &betas, &nb);
    if (st) return st;
    uint32_t want = p->acts * p->dirs;
    if (a && a->type != FE_ATTR_STRINGS)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute activations is not a list of strings");
    if (a && a->count != want)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "activations has %zu names, %u expected",
                       a->count, want);
    for (uint32_t i = 0; i < want; i++) {
        const char *name = a ? a->strings[i] : defaults[p->kind][i % p->acts];
        const act_def *d = NULL;
        for (size_t k = 0; k < sizeof act_defs / sizeof act_defs[0]; k++)
            if (!strcmp(name, act_defs[k].name)) d = &act_defs[k];
        if (!d) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "activation %s is not supported", name);
        rnn_act *r = &p->act[i / p->acts][i % p->acts];
        *r = (rnn_act){d->kind, d->op, d->def_alpha, d->def_beta, d->name};
        if (d->alpha && ia < na) r->alpha = alphas[ia++];
        if (d->beta && ib < nb) r->beta = betas[ib++];
    }
    return LM_OK;
}

/* Checks input i's shape is `dims` (rank `rank`), when it is given. */
static lm_status check_shape(fe_ctx *c, const fe_node *n, uint32_t i, const char *what,
                             int32_t rank, const int64_t *dims) {
    if (!fe_has_in(n, i)) return LM_OK;
    const fe_type *t = fe_in_type(c, n, i);
    bool ok = t->rank == rank;
    for (int32_t d = 0; ok && d < rank; d++)
        ok = t->dims[d] == dims[d];
    if (ok) return LM_OK;
    char want[96];
    size_t k = 0;
    for (int32_t d = 0; d < rank; d++)
        k +=
            (size_t)snprintf(want + k, sizeof want - k, "%s%lld", d ? "x" : "", (long long)dims[d]);
    return fe_fail(c, n, LM_ERR_INVALID_FILE, "%s must be %s", what, want);
}

static lm_status rnn_params_of(fe_ctx *c, const fe_node *n, rnn_params *p) {
    memset(p, 0, sizeof *p);
    p->kind = kind_of(n);
    p->gates = p->kind == KIND_LSTM ? 4 : p->kind == KIND_GRU ? 3 : 1;
    p->acts = p->kind == KIND_LSTM ? 3 : p->kind == KIND_GRU ? 2 : 1;
    int dir = 0;
    int64_t hidden, layout = 0, forget = 0, lbr = 0;
    float clip;
    lm_status st =
        fe_attr_choice(c, n, "direction", "forward",
                       (const char *const[]){"forward", "reverse", "bidirectional", NULL}, &dir);
    if (!st) st = fe_attr_int(c, n, "hidden_size", 0, &hidden);
    if (!st) st = fe_attr_int(c, n, "layout", 0, &layout);
    if (!st) st = fe_attr_float(c, n, "clip", NAN, &clip);
    if (!st && p->kind == KIND_LSTM) st = fe_attr_int(c, n, "input_forget", 0, &forget);
    if (!st && p->kind == KIND_GRU) st = fe_attr_int(c, n, "linear_before_reset", 0, &lbr);
    if (st) return st;
    p->dirs = dir == 2 ? 2 : 1;
    p->reverse = dir == 1;
    if (layout != 0 && layout != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute layout=%lld is not 0 or 1",
                       (long long)layout);
    p->batch_major = layout == 1;
    p->has_clip = !isnan(clip);
    p->clip = clip;
    if (p->has_clip && !(clip > 0))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute clip=%g is not positive", clip);
    p->input_forget = forget != 0;
    p->linear_before_reset = lbr != 0;

    const fe_type *x = fe_in_type(c, n, 0), *r = fe_in_type(c, n, 2);
    if (x->rank != 3) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be 3-D");
    p->seq = x->dims[p->batch_major ? 1 : 0];
    p->batch = x->dims[p->batch_major ? 0 : 1];
    p->input = x->dims[2];
    if (r->rank != 3) return fe_fail(c, n, LM_ERR_INVALID_FILE, "R must be 3-D");
    p->hidden = hidden ? hidden : r->dims[2];
    if (p->hidden < 1 || p->hidden > (1 << 16) || p->seq < 1 || p->seq > 4096 || p->batch < 1 ||
        p->input < 1)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "sequence %lld, batch %lld, input %lld, hidden %lld: each must be >= 1 "
                       "(sequences of at most 4096 steps, hidden sizes of at most 65536)",
                       (long long)p->seq, (long long)p->batch, (long long)p->input,
                       (long long)p->hidden);
    int64_t D = p->dirs, G = p->gates, H = p->hidden, B = p->batch;
    int64_t state[3] = {p->batch_major ? B : D, p->batch_major ? D : B, H};
    if ((st = check_shape(c, n, 1, "W", 3, (int64_t[]){D, G * H, p->input})) ||
        (st = check_shape(c, n, 2, "R", 3, (int64_t[]){D, G * H, H})) ||
        (st = check_shape(c, n, 3, "B", 2, (int64_t[]){D, 2 * G * H})) ||
        (st = check_shape(c, n, 4, "sequence_lens", 1, (int64_t[]){B})) ||
        (st = check_shape(c, n, 5, "initial_h", 3, state)) ||
        (p->kind == KIND_LSTM && (st = check_shape(c, n, 6, "initial_c", 3, state))) ||
        (p->kind == KIND_LSTM && (st = check_shape(c, n, 7, "P", 2, (int64_t[]){D, 3 * H}))))
        return st;
    return read_acts(c, n, p);
}

/* ---- unrolled into ops, for Gradient ---- */

/* An op whose output a Gradient node differentiates is rewritten into its
 * equations, step by step, as ops that have gradients (MatMul, Slice, the
 * activations, ...): the backward pass then goes through it like through
 * any other ops. The expansion is built with sticky errors, as fe_grad.c's
 * rules are. */
typedef fe_build unroll;

/* Element i of v along `axis`, the axis dropped. */
static uint32_t u_pick(unroll *u, uint32_t v, int64_t axis, int64_t i) {
    fe_node *n = NULL;
    uint32_t at = fe_b_const(u, FE_INT64, 0, NULL, (double)i);
    uint32_t r = fe_b_node(u, "Gather", 13, (const uint32_t[]){v, at}, 2, &n);
    if (axis) fe_b_ints_attr(u, n, "axis", false, &axis, 1);
    return r;
}

/* clip(v), when the op clips. */
static uint32_t u_clip(unroll *u, const rnn_params *p, uint32_t v) {
    if (!p->has_clip) return v;
    uint32_t in[3] = {v, fe_b_scalar(u, -p->clip), fe_b_scalar(u, p->clip)};
    return fe_b_node(u, "Clip", 13, in, 3, NULL);
}

/* Activation a of clip(v): ONNX's formulas in ops with a gradient. */
static uint32_t u_act(unroll *u, const rnn_params *p, const rnn_act *a, uint32_t v) {
    v = u_clip(u, p, v);
    switch (a->kind) {
    case ACT_AFFINE:
        return fe_b_op(u, "Add", fe_b_op(u, "Mul", v, fe_b_scalar(u, a->alpha)),
                       fe_b_scalar(u, a->beta));
    case ACT_SCALED_TANH:
        return fe_b_op(u, "Mul",
                       fe_b_op(u, "Tanh", fe_b_op(u, "Mul", v, fe_b_scalar(u, a->beta)), FE_NONE),
                       fe_b_scalar(u, a->alpha));
    case ACT_HARD_SIGMOID: {
        uint32_t t = fe_b_op(u, "Add", fe_b_op(u, "Mul", v, fe_b_scalar(u, a->alpha)),
                             fe_b_scalar(u, a->beta));
        return fe_b_node(u, "Clip", 13,
                         (const uint32_t[]){t, fe_b_scalar(u, 0.0), fe_b_scalar(u, 1.0)}, 3, NULL);
    }
    case ACT_THRESHOLDED:
        return fe_b_where(u, fe_b_op(u, "Greater", v, fe_b_scalar(u, a->alpha)), v,
                          fe_b_scalar(u, 0.0));
    case ACT_UNARY:
        break;
    }
    if (a->op == LMNN_LEAKY_RELU || a->op == LMNN_ELU) {
        uint32_t below = a->op == LMNN_ELU
                             ? fe_b_op(u, "Sub", fe_b_op(u, "Exp", v, FE_NONE), fe_b_scalar(u, 1.0))
                             : v;
        return fe_b_where(u, fe_b_op(u, "Greater", v, fe_b_scalar(u, 0.0)), v,
                          fe_b_op(u, "Mul", below, fe_b_scalar(u, a->alpha)));
    }
    return fe_b_op(u, a->name, v, FE_NONE);
}

/* One direction: the steps from initial state h (and c) through x's
 * rows (reversed for the reverse direction), each step's h kept in
 * steps[t]; the last h and c in *h, *cell. */
static void u_direction(unroll *u, const rnn_params *p, uint32_t d, uint32_t *steps, uint32_t *h,
                        uint32_t *cell) {
    const fe_node *n = &u->x.node;
    int64_t H = p->hidden, GH = p->gates * H, S = p->seq;
    int64_t seq_axis = p->batch_major ? 1 : 0;
    const rnn_act *A = p->act[d];
    uint32_t rt = fe_b_op(u, "Transpose", u_pick(u, n->inputs[2], 0, d), FE_NONE);
    uint32_t xw = fe_b_op(u, "MatMul", n->inputs[0],
                          fe_b_op(u, "Transpose", u_pick(u, n->inputs[1], 0, d), FE_NONE));
    uint32_t rb = FE_NONE;
    if (fe_has_in(n, 3)) {
        uint32_t b = u_pick(u, n->inputs[3], 0, d);
        xw = fe_b_op(u, "Add", xw, fe_b_slice(u, b, 0, 0, GH));
        rb = fe_b_slice(u, b, 0, GH, 2 * GH);
    }
    uint32_t pi = FE_NONE, po = FE_NONE, pf = FE_NONE;
    if (p->kind == KIND_LSTM && fe_has_in(n, 7)) {
        uint32_t pd = u_pick(u, n->inputs[7], 0, d);
        pi = fe_b_slice(u, pd, 0, 0, H);
        po = fe_b_slice(u, pd, 0, H, 2 * H);
        pf = fe_b_slice(u, pd, 0, 2 * H, 3 * H);
    }
    bool rev = p->reverse || d == 1;
    /* With sequence_lens, a sequence's steps from its length on keep its
     * state and give zeros; walking a reverse direction from the last step
     * down, its first real step then starts from the initial state, as
     * running over the sequence reversed within its length does. */
    uint32_t lens = fe_has_in(n, 4) ? n->inputs[4] : FE_NONE, zeros = FE_NONE;
    fe_elem lens_elem = lens == FE_NONE ? FE_INT32 : u->x.c->g->values[lens].type.elem;
    if (lens != FE_NONE) zeros = fe_b_const(u, u->elem, 2, (const int64_t[]){p->batch, H}, 0.0);
    for (int64_t k = 0; k < S && !u->st; k++) {
        int64_t t = rev ? S - 1 - k : k;
        uint32_t h_prev = *h, c_prev = *cell;
        uint32_t xt = u_pick(u, xw, seq_axis, t), hr = fe_b_op(u, "MatMul", *h, rt);
        if (p->kind == KIND_GRU) {
            /* z and r from both parts; the candidate's recurrent part is
             * (r h) Rh + Rbh, or r (h Rh + Rbh) with linear_before_reset. */
            uint32_t gz[2], rbh = rb == FE_NONE ? FE_NONE : fe_b_slice(u, rb, 0, 2 * H, 3 * H);
            for (int64_t q = 0; q < 2; q++) {
                uint32_t v = fe_b_op(u, "Add", fe_b_slice(u, xt, 1, q * H, (q + 1) * H),
                                     fe_b_slice(u, hr, 1, q * H, (q + 1) * H));
                if (rb != FE_NONE)
                    v = fe_b_op(u, "Add", v, fe_b_slice(u, rb, 0, q * H, (q + 1) * H));
                gz[q] = u_act(u, p, &A[0], v);
            }
            uint32_t rec;
            if (p->linear_before_reset) {
                rec = fe_b_slice(u, hr, 1, 2 * H, 3 * H);
                if (rbh != FE_NONE) rec = fe_b_op(u, "Add", rec, rbh);
                rec = fe_b_op(u, "Mul", gz[1], rec);
            } else {
                rec = fe_b_op(u, "MatMul", fe_b_op(u, "Mul", gz[1], *h),
                              fe_b_slice(u, rt, 1, 2 * H, 3 * H));
                if (rbh != FE_NONE) rec = fe_b_op(u, "Add", rec, rbh);
            }
            uint32_t cand =
                u_act(u, p, &A[1], fe_b_op(u, "Add", fe_b_slice(u, xt, 1, 2 * H, 3 * H), rec));
            *h = fe_b_op(u, "Add",
                         fe_b_op(u, "Mul", fe_b_op(u, "Sub", fe_b_scalar(u, 1.0), gz[0]), cand),
                         fe_b_op(u, "Mul", gz[0], *h));
        } else {
            uint32_t g = fe_b_op(u, "Add", xt, hr);
            if (rb != FE_NONE) g = fe_b_op(u, "Add", g, rb);
            if (p->kind == KIND_RNN) {
                *h = u_act(u, p, &A[0], g);
            } else {
                /* ONNX's gate order: i, o, f, c. */
                uint32_t gi = fe_b_slice(u, g, 1, 0, H), go = fe_b_slice(u, g, 1, H, 2 * H);
                uint32_t gf = fe_b_slice(u, g, 1, 2 * H, 3 * H),
                         gc = fe_b_slice(u, g, 1, 3 * H, 4 * H);
                if (pi != FE_NONE) {
                    gi = fe_b_op(u, "Add", gi, fe_b_op(u, "Mul", pi, *cell));
                    gf = fe_b_op(u, "Add", gf, fe_b_op(u, "Mul", pf, *cell));
                }
                uint32_t i = u_act(u, p, &A[0], gi);
                uint32_t f = p->input_forget ? fe_b_op(u, "Sub", fe_b_scalar(u, 1.0), i)
                                             : u_act(u, p, &A[0], gf);
                *cell = fe_b_op(u, "Add", fe_b_op(u, "Mul", f, *cell),
                                fe_b_op(u, "Mul", i, u_act(u, p, &A[1], gc)));
                if (po != FE_NONE) go = fe_b_op(u, "Add", go, fe_b_op(u, "Mul", po, *cell));
                uint32_t o = u_act(u, p, &A[0], go);
                /* h's activation takes the cell unclipped */
                rnn_params noclip = *p;
                noclip.has_clip = false;
                *h = fe_b_op(u, "Mul", o, u_act(u, &noclip, &A[2], *cell));
            }
        }
        steps[t] = *h;
        if (lens != FE_NONE) {
            uint32_t live = fe_b_unsqueeze(
                u, fe_b_op(u, "Less", fe_b_const(u, lens_elem, 0, NULL, (double)t), lens), 1);
            steps[t] = fe_b_where(u, live, *h, zeros);
            *h = fe_b_where(u, live, *h, h_prev);
            if (c_prev != FE_NONE) *cell = fe_b_where(u, live, *cell, c_prev);
        }
    }
}

static lm_status rnn_unroll(fe_ctx *c, const fe_node *n, const rnn_params *p) {
    unroll U = {.elem = fe_in_type(c, n, 0)->elem}, *u = &U;
    fe_x_begin(c, n, &u->x);
    const fe_node *nd = &u->x.node;
    int64_t S = p->seq;
    bool bm = p->batch_major;
    uint32_t *steps = malloc((size_t)S * sizeof *steps);
    if (!steps) u->st = fe_x_oom();
    uint32_t y[2], yh[2], yc[2];
    for (uint32_t d = 0; d < p->dirs && !u->st; d++) {
        uint32_t h = fe_has_in(nd, 5)
                         ? u_pick(u, nd->inputs[5], bm ? 1 : 0, d)
                         : fe_b_const(u, u->elem, 2, (const int64_t[]){p->batch, p->hidden}, 0.0);
        uint32_t cell = FE_NONE;
        if (p->kind == KIND_LSTM)
            cell = fe_has_in(nd, 6)
                       ? u_pick(u, nd->inputs[6], bm ? 1 : 0, d)
                       : fe_b_const(u, u->elem, 2, (const int64_t[]){p->batch, p->hidden}, 0.0);
        u_direction(u, p, d, steps, &h, &cell);
        /* Y: [S, D, B, H], or [B, S, D, H] batch-major. */
        for (int64_t t = 0; t < S; t++)
            steps[t] = fe_b_unsqueeze(u, fe_b_unsqueeze(u, steps[t], bm ? 1 : 0), bm ? 2 : 1);
        y[d] = fe_b_concat(u, steps, (uint32_t)S, bm ? 1 : 0);
        yh[d] = fe_b_unsqueeze(u, h, bm ? 1 : 0);
        yc[d] = cell == FE_NONE ? FE_NONE : fe_b_unsqueeze(u, cell, bm ? 1 : 0);
    }
    free(steps);
    uint32_t outs[3] = {fe_b_concat(u, y, p->dirs, bm ? 2 : 1),
                        fe_b_concat(u, yh, p->dirs, bm ? 1 : 0),
                        p->kind == KIND_LSTM ? fe_b_concat(u, yc, p->dirs, bm ? 1 : 0) : FE_NONE};
    for (uint32_t i = 0; i < nd->output_count && !u->st; i++)
        if (nd->outputs[i] != FE_NONE) u->st = fe_x_identity(&u->x, outs[i], nd->outputs[i]);
    return fe_x_end(c, &u->x, u->st);
}

/* Whether node n feeds the y of a Gradient node (whose gradient then goes
 * through it, so it runs as its equations): a walk from each y back
 * through the producers, which come before their readers (the graph is
 * sorted, and the loader makes y an implicit input of its Gradient), so
 * nothing before n needs a look. Unknown (a node outside the graph's
 * array, or out of memory) counts as feeding one. */
static bool feeds_gradient(const fe_ctx *c, const fe_node *n) {
    const fe_graph *g = c->g;
    if (n < g->nodes || n >= g->nodes + g->node_count) return true;
    uint32_t k = (uint32_t)(n - g->nodes);
    uint8_t *seen = calloc(g->value_count, 1);
    uint32_t *stack = malloc((size_t)g->value_count * sizeof *stack);
    bool found = !seen || !stack;
    for (uint32_t j = k + 1; j < g->node_count && !found; j++) {
        const fe_node *gn = &g->nodes[j];
        if (strcmp(gn->op_type, "Gradient") != 0 || strcmp(gn->domain, FE_TRAINING_DOMAIN) != 0)
            continue;
        uint32_t top = 0;
        for (uint32_t i = 0; i < gn->implicit_count; i++)
            if (!seen[gn->implicit[i]]) {
                seen[gn->implicit[i]] = 1;
                stack[top++] = gn->implicit[i];
            }
        while (top && !found) {
            uint32_t p = g->values[stack[--top]].producer;
            if (p == FE_NONE || p < k) continue;
            found = p == k;
            fe_node_push_operands(&g->nodes[p], seen, stack, &top);
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* ---- inference ---- */

static lm_status infer_rnn(fe_ctx *c, const fe_node *n) {
    rnn_kind kind = kind_of(n);
    lm_status st = fe_check_inputs(c, n, 3, kind == KIND_LSTM ? 8 : 6);
    /* The attributes all three take, and the one each adds. */
    const char *known[] = {
        "activation_alpha", "activation_beta", "activations", "clip", "direction",
        "hidden_size",      "layout",          NULL,          NULL};
    known[7] = kind == KIND_LSTM ? "input_forget" : kind == KIND_GRU ? "linear_before_reset" : NULL;
    if (!st) st = fe_check_attrs(c, n, known);
    rnn_params p;
    if (!st) st = rnn_params_of(c, n, &p);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (!fe_elem_is_float(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X must be a float tensor");
    if (feeds_gradient(c, n)) return rnn_unroll(c, n, &p);
    int64_t D = p.dirs, S = p.seq, B = p.batch, H = p.hidden;
    int64_t y[4] = {S, D, B, H}, yb[4] = {B, S, D, H}, h[3] = {D, B, H}, hb[3] = {B, D, H};
    uint32_t outs = kind == KIND_LSTM ? 3 : 2;
    if (n->output_count > outs)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%u outputs (at most %u)", n->output_count, outs);
    for (uint32_t i = 0; i < n->output_count && !st; i++) {
        if (n->outputs[i] == FE_NONE) continue;
        st = i == 0 ? fe_set_out_type(c, n, 0, x->elem, 4, p.batch_major ? yb : y)
                    : fe_set_out_type(c, n, i, x->elem, 3, p.batch_major ? hb : h);
    }
    return st;
}

/* ---- lowering ---- */

/* Tensors of one step or one direction, freed together; a tensor that must
 * outlive them is taken out with keep(). */
enum { POOL_MAX = 96 };
typedef struct pool {
    lmnn_tensor t[POOL_MAX];
    uint32_t n;
} pool;

static lmnn_tensor *slot(pool *p) {
    if (p->n == POOL_MAX) return NULL;
    p->t[p->n] = (lmnn_tensor){0};
    return &p->t[p->n++];
}

static void pool_free(pool *p) {
    for (uint32_t i = 0; i < p->n; i++)
        fe_free(p->t[i]);
    p->n = 0;
}

/* Takes t out of the pool: the caller frees it. */
static lmnn_tensor keep(pool *p, lmnn_tensor t) {
    for (uint32_t i = 0; i < p->n; i++)
        if (p->t[i].id == t.id) p->t[i] = (lmnn_tensor){0};
    return t;
}

#define POOL_FULL err_set(LM_ERR_INTERNAL, "recurrent op: too many temporaries")

static lm_status bin(pool *p, lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out) {
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lm_status st = lmnn_binary(op, a, b, NULL, s);
    if (!st) *out = *s;
    return st;
}

static lm_status scal(pool *p, lmnn_binary_op op, lmnn_tensor a, double v, lmnn_tensor *out) {
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lm_status st = lmnn_binary_scalar(op, a, v, NULL, s);
    if (!st) *out = *s;
    return st;
}

static lm_status un(pool *p, lmnn_unary_op op, double alpha, double beta, lmnn_tensor a,
                    lmnn_tensor *out) {
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, op);
    if (!isnan(alpha)) o.alpha = alpha;
    if (!isnan(beta)) o.beta = beta;
    lm_status st = lmnn_unary(op, a, &o, s);
    if (!st) *out = *s;
    return st;
}

/* a[..., lo:hi] along dim `dim` of a rank-`rank` tensor of dims `dims`. */
static lm_status cut(pool *p, lmnn_tensor a, uint32_t rank, const int64_t *dims, uint32_t dim,
                     int64_t lo, int64_t hi, lmnn_tensor *out) {
    int32_t b[4] = {0}, e[4];
    for (uint32_t d = 0; d < rank; d++)
        e[d] = (int32_t)dims[d];
    b[dim] = (int32_t)lo;
    e[dim] = (int32_t)hi;
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lm_status st = lmnn_slice(a, b, e, NULL, rank, NULL, s);
    if (!st) *out = *s;
    return st;
}

static lm_status shape_to(pool *p, lmnn_tensor a, uint32_t rank, const int64_t *dims,
                          lmnn_tensor *out) {
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lmnn_shape sh = fe_shape((int32_t)rank, dims);
    lm_status st = lmnn_reshape(a, &sh, NULL, s);
    if (!st) *out = *s;
    return st;
}

/* a @ w^T (+ bias when nonzero). */
static lm_status times_t(pool *p, lmnn_tensor a, lmnn_tensor w, lmnn_tensor bias,
                         lmnn_tensor *out) {
    lmnn_tensor *s = slot(p);
    if (!s) return POOL_FULL;
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.transpose_b = true;
    lm_status st = lmnn_linear(a, w, bias, &o, s);
    if (!st) *out = *s;
    return st;
}

/* act(x), with the clip first when the node has one. */
static lm_status activate(pool *p, const rnn_params *rp, const rnn_act *a, lmnn_tensor x,
                          lmnn_tensor *out) {
    lm_status st = LM_OK;
    if (rp->has_clip && (st = un(p, LMNN_CLAMP, -rp->clip, rp->clip, x, &x))) return st;
    switch (a->kind) {
    case ACT_UNARY:
        if (a->op == LMNN_LEAKY_RELU || a->op == LMNN_ELU)
            return un(p, a->op, a->alpha, NAN, x, out);
        return un(p, a->op, NAN, NAN, x, out);
    case ACT_AFFINE:
        if ((st = scal(p, LMNN_BINARY_MUL, x, a->alpha, &x))) return st;
        return scal(p, LMNN_BINARY_ADD, x, a->beta, out);
    case ACT_SCALED_TANH:
        if ((st = scal(p, LMNN_BINARY_MUL, x, a->beta, &x)) ||
            (st = un(p, LMNN_TANH, NAN, NAN, x, &x)))
            return st;
        return scal(p, LMNN_BINARY_MUL, x, a->alpha, out);
    case ACT_HARD_SIGMOID:
        if ((st = scal(p, LMNN_BINARY_MUL, x, a->alpha, &x)) ||
            (st = scal(p, LMNN_BINARY_ADD, x, a->beta, &x)))
            return st;
        return un(p, LMNN_CLAMP, 0.0, 1.0, x, out);
    case ACT_THRESHOLDED: {
        lmnn_tensor m;
        if ((st = scal(p, LMNN_BINARY_GT, x, a->alpha, &m))) return st;
        return bin(p, LMNN_BINARY_MUL, x, m, out);
    }
    }
    return err_set(LM_ERR_INTERNAL, "unknown activation");
}

/* One direction's weights, the step's input part and its states. */
typedef struct dir_state {
    lmnn_tensor xw;         /* [S * B, G * H]: X W^T + folded biases */
    lmnn_tensor r;          /* [G * H, H] */
    lmnn_tensor rbh;        /* GRU with linear_before_reset: Rbh [H], else 0 */
    lmnn_tensor pi, po, pf; /* LSTM peepholes [H], or 0 */
    lmnn_tensor h, c;       /* the states [B, H], owned */
} dir_state;

/* Input i's direction d as a tensor of `rank` dims `dims` (the input is
 * [D, ...] or, batch-major states, [B, D, H]). */
static lm_status input_dir(fe_ctx *c, const fe_node *n, pool *p, uint32_t i, uint32_t d,
                           bool batch_major_state, uint32_t rank, const int64_t *dims,
                           lmnn_tensor *out) {
    lmnn_tensor a;
    lm_status st = fe_in_dev(c, n, i, &a);
    if (st) return st;
    const fe_type *t = fe_in_type(c, n, i);
    if (batch_major_state) {
        if ((st = cut(p, a, 3, t->dims, 1, d, d + 1, &a))) return st;
    } else if ((st = cut(p, a, (uint32_t)t->rank, t->dims, 0, d, d + 1, &a))) {
        return st;
    }
    return shape_to(p, a, rank, dims, out);
}

/* A new tile tensor of zeros, DRAM interleaved, of like's device and dtype. */
static lm_status zeros_like(lmnn_tensor like, uint32_t rank, const int64_t *dims,
                            lmnn_tensor *out) {
    lmnn_tensor_info i;
    lm_status st = lmnn_tensor_get_info(like, &i);
    if (st) return st;
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = i.dtype;
    lmnn_shape sh = fe_shape((int32_t)rank, dims);
    return lmnn_full(i.device, &sh, 0.0, &o, out);
}

/* t, [G * H] or [G * H, cols], with each gate's H rows padded with zeros
 * to Hg (lmnn_rnn.h's gate layout); t itself when H is Hg. */
static lm_status pad_gates(pool *p, const rnn_params *rp, lmnn_tensor t, int64_t cols,
                           lmnn_tensor *out) {
    int64_t G = rp->gates, H = rp->hidden, Hg = (H + 31) / 32 * 32;
    if (H == Hg) {
        *out = t;
        return LM_OK;
    }
    uint32_t rank = cols ? 3 : 2, pads[6] = {0, 0, 0, (uint32_t)(Hg - H), 0, 0};
    lmnn_tensor split, *padded = slot(p);
    if (!padded) return POOL_FULL;
    lm_status st = shape_to(p, t, rank, (int64_t[]){G, H, cols}, &split);
    if (!st) st = lmnn_pad(split, pads, rank, NULL, padded);
    if (!st)
        st = cols ? shape_to(p, *padded, 2, (int64_t[]){G * Hg, cols}, out)
                  : shape_to(p, *padded, 1, (int64_t[]){G * Hg}, out);
    return st;
}

/* Direction d's states s->h and s->c (an LSTM's) from the inputs given,
 * else zeros like s->xw. */
static lm_status initial_states(fe_ctx *c, const fe_node *n, const rnn_params *rp, uint32_t d,
                                pool *keep_pool, dir_state *s) {
    lm_status st;
    int64_t bh[2] = {rp->batch, rp->hidden};
    for (int k = 0; k < (rp->kind == KIND_LSTM ? 2 : 1); k++) {
        uint32_t in = k ? 6 : 5;
        lmnn_tensor *dst = k ? &s->c : &s->h;
        if (fe_has_in(n, in)) {
            lmnn_tensor t;
            if ((st = input_dir(c, n, keep_pool, in, d, rp->batch_major, 2, bh, &t))) return st;
            *dst = keep(keep_pool, t);
        } else if ((st = zeros_like(s->xw, 2, bh, dst))) {
            return st;
        }
    }
    return LM_OK;
}

/* The fused cells' weights made on the host when W, R and B are
 * constants (the usual case: a trained model's initializers): direction
 * d's W [G * Hg, I] and R [G * Hg, H] with each gate's rows padded to Hg,
 * and the biases folded as setup_dir folds them on the device (*bias for
 * the input's product, *rbh for a GRU's h product; zero handles without
 * B), each uploaded once per compile (fe_aux) instead of being cut,
 * padded and added by device programs at every run. False, with nothing
 * made, when any of them is computed at run time. */
static lm_status const_cell_weights(fe_ctx *c, const fe_node *n, const rnn_params *rp, uint32_t d,
                                    lmnn_tensor *w, lmnn_tensor *r, lmnn_tensor *bias,
                                    lmnn_tensor *rbh, bool *out_done) {
    *out_done = false;
    const fe_tensor *k[3] = {fe_in_const(c, n, 1), fe_in_const(c, n, 2),
                             fe_has_in(n, 3) ? fe_in_const(c, n, 3) : NULL};
    if (!k[0] || !k[1] || (fe_has_in(n, 3) && !k[2])) return LM_OK;
    int64_t G = rp->gates, H = rp->hidden, Hg = (H + 31) / 32 * 32;
    int64_t cols[2] = {rp->input, H};
    lm_status st = LM_OK;
    for (uint32_t m = 0; m < 2 && !st; m++) {
        fe_tensor *t;
        int64_t dims[2] = {G * Hg, cols[m]};
        if ((st = fe_const_new(c, k[m]->elem, 2, dims, &t))) break;
        for (int64_t row = 0; row < G * Hg; row++)
            for (int64_t i = 0; i < cols[m]; i++) {
                int64_t g = row / Hg, j = row % Hg;
                double v =
                    j < H ? fe_tensor_get_f64(k[m], (uint64_t)(((d * G + g) * H + j) * cols[m] + i))
                          : 0.0;
                fe_tensor_set_f64(t, (uint64_t)(row * cols[m] + i), v);
            }
        st = fe_aux(c, n, 100 + 4 * d + m, t, LMNN_TILE, m ? r : w);
    }
    *bias = *rbh = (lmnn_tensor){0};
    for (uint32_t m = 0; k[2] && m < (rp->kind == KIND_GRU ? 2u : 1u) && !st; m++) {
        /* m 0: Wb + Rb (a GRU's hidden gate: Wbh alone); m 1: a GRU's Rbh. */
        fe_tensor *t;
        int64_t dims[1] = {G * Hg};
        if ((st = fe_const_new(c, k[2]->elem, 1, dims, &t))) break;
        for (int64_t row = 0; row < G * Hg; row++) {
            int64_t g = row / Hg, j = row % Hg, at = 2 * G * H * d + g * H + j;
            bool h_gate = rp->kind == KIND_GRU && g == 2;
            double wb = fe_tensor_get_f64(k[2], (uint64_t)at);
            double rb = fe_tensor_get_f64(k[2], (uint64_t)(at + G * H));
            double v = j >= H ? 0.0 : m ? (h_gate ? rb : 0.0) : h_gate ? wb : wb + rb;
            fe_tensor_set_f64(t, (uint64_t)row, (double)(float)v);
        }
        st = fe_aux(c, n, 100 + 4 * d + 2 + m, t, LMNN_TILE, m ? rbh : bias);
    }
    *out_done = !st;
    return st;
}

/* Direction d's weights and states. `x` is [S * B, I], or with `cell`
 * (lmnn_lstm_cell/lmnn_gru_cell's gate layout) [S, B, I], and s->xw then
 * [S, B, G * Hg], s->r [G * Hg, H] and, for a GRU, s->rbh the h product's
 * bias [G * Hg] (Rbh in the hidden gate). */
static lm_status setup_dir(fe_ctx *c, const fe_node *n, const rnn_params *rp, uint32_t d,
                           lmnn_tensor x2, bool cell, pool *keep_pool, dir_state *s) {
    int64_t G = rp->gates, H = rp->hidden;
    lmnn_tensor w, bias = {0};
    bool made = false;
    lm_status st = cell ? const_cell_weights(c, n, rp, d, &w, &s->r, &bias, &s->rbh, &made) : LM_OK;
    if (st) return st;
    if (made) {
        if ((st = times_t(keep_pool, x2, w, bias, &s->xw))) return st;
        return initial_states(c, n, rp, d, keep_pool, s);
    }
    if ((st = input_dir(c, n, keep_pool, 1, d, false, 2, (int64_t[]){G * H, rp->input}, &w)) ||
        (st = input_dir(c, n, keep_pool, 2, d, false, 2, (int64_t[]){G * H, H}, &s->r)))
        return st;
    if (cell && ((st = pad_gates(keep_pool, rp, w, rp->input, &w)) ||
                 (st = pad_gates(keep_pool, rp, s->r, H, &s->r))))
        return st;
    if (fe_has_in(n, 3)) {
        lmnn_tensor b, wb, rb;
        int64_t bd[1] = {2 * G * H};
        if ((st = input_dir(c, n, keep_pool, 3, d, false, 1, bd, &b)) ||
            (st = cut(keep_pool, b, 1, bd, 0, 0, G * H, &wb)) ||
            (st = cut(keep_pool, b, 1, bd, 0, G * H, 2 * G * H, &rb)))
            return st;
        if (rp->kind == KIND_GRU && rp->linear_before_reset) {
            /* Rbh stays inside r * (H Rh^T + Rbh): only Rbz and Rbr fold. */
            lmnn_tensor rzr, wzr, wh, sum;
            int64_t gd[1] = {G * H};
            if ((st = cut(keep_pool, rb, 1, gd, 0, 0, 2 * H, &rzr)) ||
                (st = cut(keep_pool, rb, 1, gd, 0, 2 * H, 3 * H, &s->rbh)) ||
                (st = cut(keep_pool, wb, 1, gd, 0, 0, 2 * H, &wzr)) ||
                (st = cut(keep_pool, wb, 1, gd, 0, 2 * H, 3 * H, &wh)) ||
                (st = bin(keep_pool, LMNN_BINARY_ADD, wzr, rzr, &sum)))
                return st;
            lmnn_tensor *cat = slot(keep_pool);
            if (!cat) return POOL_FULL;
            if ((st = lmnn_concat((lmnn_tensor[]){sum, wh}, 2, 0, NULL, cat))) return st;
            bias = *cat;
            if (cell) {
                /* The h product's bias: 0 for z and r, Rbh for h. */
                lmnn_tensor zeros, *hb = slot(keep_pool);
                if (!hb) return POOL_FULL;
                if ((st = zeros_like(s->rbh, 1, (int64_t[]){2 * H}, &zeros))) return st;
                st = lmnn_concat((lmnn_tensor[]){zeros, s->rbh}, 2, 0, NULL, hb);
                fe_free(zeros);
                if (st || (st = pad_gates(keep_pool, rp, *hb, 0, &s->rbh))) return st;
            }
        } else if ((st = bin(keep_pool, LMNN_BINARY_ADD, wb, rb, &bias))) {
            return st;
        }
        if (cell && (st = pad_gates(keep_pool, rp, bias, 0, &bias))) return st;
    }
    if ((st = times_t(keep_pool, x2, w, bias, &s->xw))) return st;
    if (rp->kind == KIND_LSTM && fe_has_in(n, 7)) {
        lmnn_tensor pp;
        int64_t pd[1] = {3 * H}, row[2] = {1, H};
        if ((st = input_dir(c, n, keep_pool, 7, d, false, 1, pd, &pp))) return st;
        lmnn_tensor *dst[3] = {&s->pi, &s->po, &s->pf};
        for (int k = 0; k < 3; k++) {
            lmnn_tensor piece;
            if ((st = cut(keep_pool, pp, 1, pd, 0, k * H, (k + 1) * H, &piece)) ||
                (st = shape_to(keep_pool, piece, 2, row, dst[k])))
                return st;
        }
    }
    return initial_states(c, n, rp, d, keep_pool, s);
}

/* x [B, GH]'s gate k as [B, H]. */
static lm_status gate(pool *p, const rnn_params *rp, lmnn_tensor x, uint32_t k, lmnn_tensor *out) {
    int64_t dims[2] = {rp->batch, rp->gates * rp->hidden};
    return cut(p, x, 2, dims, 1, (int64_t)k * rp->hidden, (int64_t)(k + 1) * rp->hidden, out);
}

/* One step of direction d at time t: new h (and c) into *out_h, *out_c
 * (in pool p). */
static lm_status step(pool *p, const rnn_params *rp, const dir_state *s, const rnn_act *act,
                      int64_t t, lmnn_tensor *out_h, lmnn_tensor *out_c) {
    int64_t B = rp->batch, G = rp->gates, H = rp->hidden;
    int64_t xd[2] = {rp->seq * B, G * H};
    lmnn_tensor xt, hr, pre;
    lm_status st = cut(p, s->xw, 2, xd, 0, t * B, (t + 1) * B, &xt);
    if (!st) st = times_t(p, s->h, s->r, (lmnn_tensor){0}, &hr);
    if (st) return st;
    switch (rp->kind) {
    case KIND_RNN:
        if ((st = bin(p, LMNN_BINARY_ADD, xt, hr, &pre))) return st;
        return activate(p, rp, &act[0], pre, out_h);
    case KIND_GRU: {
        lmnn_tensor xz, xr, xh, hz, hrr, hh, z, r, h, a, b;
        if ((st = gate(p, rp, xt, 0, &xz)) || (st = gate(p, rp, xt, 1, &xr)) ||
            (st = gate(p, rp, xt, 2, &xh)) || (st = gate(p, rp, hr, 0, &hz)) ||
            (st = gate(p, rp, hr, 1, &hrr)) || (st = bin(p, LMNN_BINARY_ADD, xz, hz, &z)) ||
            (st = activate(p, rp, &act[0], z, &z)) || (st = bin(p, LMNN_BINARY_ADD, xr, hrr, &r)) ||
            (st = activate(p, rp, &act[0], r, &r)))
            return st;
        if (rp->linear_before_reset) {
            /* h = g(xh + r * (H Rh^T + Rbh)) */
            if ((st = gate(p, rp, hr, 2, &hh))) return st;
            if (s->rbh.id && (st = bin(p, LMNN_BINARY_ADD, hh, s->rbh, &hh))) return st;
            if ((st = bin(p, LMNN_BINARY_MUL, r, hh, &hh))) return st;
        } else {
            /* h = g(xh + (r * H) Rh^T) */
            lmnn_tensor rh, rw;
            int64_t rd[2] = {G * H, H};
            if ((st = bin(p, LMNN_BINARY_MUL, r, s->h, &rh)) ||
                (st = cut(p, s->r, 2, rd, 0, 2 * H, 3 * H, &rw)) ||
                (st = times_t(p, rh, rw, (lmnn_tensor){0}, &hh)))
                return st;
        }
        if ((st = bin(p, LMNN_BINARY_ADD, xh, hh, &h)) || (st = activate(p, rp, &act[1], h, &h)))
            return st;
        /* H' = (1 - z) h + z H = h - z h + z H */
        if ((st = bin(p, LMNN_BINARY_MUL, z, h, &a)) || (st = bin(p, LMNN_BINARY_SUB, h, a, &a)) ||
            (st = bin(p, LMNN_BINARY_MUL, z, s->h, &b)))
            return st;
        return bin(p, LMNN_BINARY_ADD, a, b, out_h);
    }
    case KIND_LSTM: {
        lmnn_tensor g4[4], i, o, f, cc, cn, a, b, hc;
        if ((st = bin(p, LMNN_BINARY_ADD, xt, hr, &pre))) return st;
        for (uint32_t k = 0; k < 4; k++)
            if ((st = gate(p, rp, pre, k, &g4[k]))) return st;
        /* Gates in ONNX's order: i, o, f, c. */
        i = g4[0];
        if (s->pi.id && (st = bin(p, LMNN_BINARY_MUL, s->pi, s->c, &a))) return st;
        if (s->pi.id && (st = bin(p, LMNN_BINARY_ADD, i, a, &i))) return st;
        if ((st = activate(p, rp, &act[0], i, &i))) return st;
        if (rp->input_forget) {
            if ((st = scal(p, LMNN_BINARY_RSUB, i, 1.0, &f))) return st;
        } else {
            f = g4[2];
            if (s->pf.id && (st = bin(p, LMNN_BINARY_MUL, s->pf, s->c, &a))) return st;
            if (s->pf.id && (st = bin(p, LMNN_BINARY_ADD, f, a, &f))) return st;
            if ((st = activate(p, rp, &act[0], f, &f))) return st;
        }
        if ((st = activate(p, rp, &act[1], g4[3], &cc)) ||
            (st = bin(p, LMNN_BINARY_MUL, f, s->c, &a)) ||
            (st = bin(p, LMNN_BINARY_MUL, i, cc, &b)) || (st = bin(p, LMNN_BINARY_ADD, a, b, &cn)))
            return st;
        o = g4[1];
        if (s->po.id && (st = bin(p, LMNN_BINARY_MUL, s->po, cn, &a))) return st;
        if (s->po.id && (st = bin(p, LMNN_BINARY_ADD, o, a, &o))) return st;
        if ((st = activate(p, rp, &act[0], o, &o))) return st;
        /* h's input is the cell state itself: the clip is for the gates. */
        rnn_params noclip = *rp;
        noclip.has_clip = false;
        if ((st = activate(p, &noclip, &act[2], cn, &hc))) return st;
        *out_c = cn;
        return bin(p, LMNN_BINARY_MUL, o, hc, out_h);
    }
    }
    return err_set(LM_ERR_INTERNAL, "unknown recurrent op");
}

/* new = mask * new + (1 - mask) * old = old + mask * (new - old) */
static lm_status masked(pool *p, lmnn_tensor mask, lmnn_tensor old, lmnn_tensor nu,
                        lmnn_tensor *out) {
    lmnn_tensor d;
    lm_status st = bin(p, LMNN_BINARY_SUB, nu, old, &d);
    if (!st) st = bin(p, LMNN_BINARY_MUL, mask, d, &d);
    if (!st) st = bin(p, LMNN_BINARY_ADD, old, d, out);
    return st;
}

static void dir_free(dir_state *s) {
    fe_free(s->h);
    fe_free(s->c);
    s->h = s->c = (lmnn_tensor){0};
}

/* Runs direction d, its steps in reverse order when asked: its steps'
 * outputs into ys[t] ([B, H] each, owned), its final states into s. */
static lm_status run_dir(fe_ctx *c, const fe_node *n, const rnn_params *rp, uint32_t d,
                         lmnn_tensor x2, bool reverse, lmnn_tensor lens, lmnn_tensor *ys,
                         dir_state *s) {
    pool dp = {.n = 0}, sp = {.n = 0};
    memset(s, 0, sizeof *s);
    lm_status st = setup_dir(c, n, rp, d, x2, false, &dp, s);
    int64_t bh[2] = {rp->batch, rp->hidden}, b1[2] = {rp->batch, 1};
    for (int64_t k = 0; !st && k < rp->seq; k++) {
        int64_t t = reverse ? rp->seq - 1 - k : k;
        lmnn_tensor h, cn = {0}, mask = {0};
        st = step(&sp, rp, s, rp->act[d], t, &h, &cn);
        if (!st && lens.id) {
            /* Steps past a sequence's length keep its state; Y gets 0. */
            lmnn_tensor m, y;
            if (!(st = scal(&sp, LMNN_BINARY_GT, lens, (double)t, &m)) &&
                !(st = shape_to(&sp, m, 2, b1, &mask)) &&
                !(st = bin(&sp, LMNN_BINARY_MUL, mask, h, &y)))
                ys[t] = keep(&sp, y);
            if (!st) st = masked(&sp, mask, s->h, h, &h);
            if (!st && cn.id) st = masked(&sp, mask, s->c, cn, &cn);
        } else if (!st) {
            lmnn_tensor y;
            st = shape_to(&sp, h, 2, bh, &y); /* a view Y keeps of h */
            if (!st) ys[t] = keep(&sp, y);
        }
        if (!st) {
            fe_free(s->h);
            s->h = keep(&sp, h);
            if (cn.id) {
                fe_free(s->c);
                s->c = keep(&sp, cn);
            }
        }
        pool_free(&sp);
    }
    pool_free(&sp);
    pool_free(&dp);
    if (st) dir_free(s);
    return st;
}

/* ---- the fused cells ----
 * An LSTM with ONNX's default activations, or a GRU with
 * linear_before_reset (PyTorch's forms), without clip, peepholes,
 * input_forget or run-time sequence lengths, runs each step as one product
 * h R^T and one lmnn_lstm_cell or lmnn_gru_cell, which also writes h' into
 * the direction's Y: two programs a step instead of about twenty. */

static bool cell_fits(const fe_node *n, const rnn_params *rp, lmnn_tensor lens) {
    if (lens.id || rp->has_clip || rp->input_forget || rp->kind == KIND_RNN ||
        (rp->kind == KIND_GRU && !rp->linear_before_reset) ||
        (rp->kind == KIND_LSTM && fe_has_in(n, 7)))
        return false;
    for (uint32_t d = 0; d < rp->dirs; d++)
        for (uint32_t a = 0; a < rp->acts; a++)
            if (rp->act[d][a].kind != ACT_UNARY ||
                rp->act[d][a].op != (a == 0 ? LMNN_SIGMOID : LMNN_TANH))
                return false;
    return true;
}

/* Runs direction d with the fused cells: its final states into s and, when
 * `y` is not NULL, its steps' outputs into *y, a new [S, B, H] tensor. */
static lm_status run_dir_cell(fe_ctx *c, const fe_node *n, const rnn_params *rp, uint32_t d,
                              lmnn_tensor x3, bool reverse, lmnn_tensor *y, dir_state *s) {
    pool dp = {.n = 0}, sp = {.n = 0};
    memset(s, 0, sizeof *s);
    lm_status st = setup_dir(c, n, rp, d, x3, true, &dp, s);
    lmnn_rnn_cell_options o;
    lmnn_rnn_cell_options_init(&o);
    if (y) *y = (lmnn_tensor){0};
    if (!st && y) {
        st = zeros_like(rp->kind == KIND_LSTM ? s->c : s->h, 3,
                        (int64_t[]){rp->seq, rp->batch, rp->hidden}, y);
        o.steps_out = st ? (lmnn_tensor){0} : *y;
    }
    for (int64_t k = 0; !st && k < rp->seq; k++) {
        lmnn_tensor hg, h, cn = {0};
        o.step = (uint32_t)(reverse ? rp->seq - 1 - k : k);
        st = times_t(&sp, s->h, s->r, s->rbh, &hg);
        if (!st)
            st = rp->kind == KIND_LSTM ? lmnn_lstm_cell(s->xw, hg, s->c, &o, &h, &cn)
                                       : lmnn_gru_cell(s->xw, hg, s->h, &o, &h);
        pool_free(&sp);
        if (st) break;
        fe_free(s->h);
        s->h = h;
        if (cn.id) {
            fe_free(s->c);
            s->c = cn;
        }
    }
    pool_free(&dp);
    if (st) {
        dir_free(s);
        if (y) fe_free(*y);
    }
    return st;
}

/* Y [S, D, B, H] as the node's layout gives it: itself, or batch-major
 * [B, S, D, H] (a new tensor; y is freed). */
static lm_status y_layout(const rnn_params *rp, lmnn_tensor y, lmnn_tensor *out) {
    if (!rp->batch_major) {
        *out = y;
        return LM_OK;
    }
    lm_status st = lmnn_permute(y, (int32_t[]){2, 0, 1, 3}, 4, NULL, out);
    fe_free(y);
    return st;
}

/* Y [S, D, B, H] (batch-major [B, S, D, H]) from the directions' [S, B, H]
 * outputs; `ys` stay the caller's. */
static lm_status stack_y(const rnn_params *rp, const lmnn_tensor *ys, lmnn_tensor *out) {
    lmnn_shape one = fe_shape(4, (int64_t[]){rp->seq, 1, rp->batch, rp->hidden});
    lmnn_tensor parts[2] = {{0}, {0}}, y = {0};
    lm_status st = LM_OK;
    for (uint32_t d = 0; d < rp->dirs && !st; d++)
        st = lmnn_reshape(ys[d], &one, NULL, &parts[d]);
    if (!st && rp->dirs == 2) st = lmnn_concat(parts, 2, 1, NULL, &y);
    if (rp->dirs == 2) {
        fe_free(parts[0]);
        fe_free(parts[1]);
    } else {
        y = parts[0];
    }
    return st ? st : y_layout(rp, y, out);
}

/* The directions' [B, H] states `v` (D of them) as a new [D, B, H]
 * tensor, or [B, D, H] batch-major; `v` stays the caller's. */
static lm_status stack_states(const rnn_params *rp, const lmnn_tensor *v, bool batch_major,
                              lmnn_tensor *out) {
    int64_t one[3] = {1, rp->batch, rp->hidden}, onem[3] = {rp->batch, 1, rp->hidden};
    lmnn_shape sh = fe_shape(3, batch_major ? onem : one);
    lmnn_tensor parts[2] = {{0}, {0}};
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < rp->dirs && !st; i++)
        st = lmnn_reshape(v[i], &sh, NULL, &parts[i]);
    if (!st && rp->dirs == 1) {
        *out = parts[0];
        return LM_OK;
    }
    if (!st) st = lmnn_concat(parts, 2, batch_major ? 1 : 0, NULL, out);
    fe_free(parts[0]);
    fe_free(parts[1]);
    return st;
}

/* Y [S, D, B, H] (batch-major [B, S, D, H]) from the steps' outputs ys
 * (direction d's step t at d * S + t). */
static lm_status gather_y(const rnn_params *rp, const lmnn_tensor *ys, lmnn_tensor *out) {
    int64_t S = rp->seq, D = rp->dirs, B = rp->batch, H = rp->hidden;
    lmnn_tensor *steps = calloc((size_t)S, sizeof *steps), y = {0};
    if (!steps) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lmnn_shape one = fe_shape(4, (int64_t[]){1, D, B, H});
    lm_status st = LM_OK;
    for (int64_t t = 0; t < S && !st; t++) {
        lmnn_tensor per[2] = {ys[t], D == 2 ? ys[S + t] : (lmnn_tensor){0}}, dbh;
        st = stack_states(rp, per, false, &dbh);
        if (!st) st = lmnn_reshape(dbh, &one, NULL, &steps[t]);
        if (!st) fe_free(dbh);
    }
    if (!st)
        st = S == 1 ? lmnn_reshape(steps[0], &one, NULL, &y)
                    : lmnn_concat(steps, (uint32_t)S, 0, NULL, &y);
    for (int64_t t = 0; t < S; t++)
        fe_free(steps[t]);
    free(steps);
    return st ? st : y_layout(rp, y, out);
}

/* A direction's step outputs ys[0..S) ([B, H] each) with each sequence's
 * first len steps reversed (fe_reverse_sequences), in place. */
static lm_status reverse_steps(fe_ctx *c, const fe_node *n, const rnn_params *rp,
                               lmnn_tensor lens_row, lmnn_tensor *ys) {
    int64_t S = rp->seq, B = rp->batch, H = rp->hidden, dims[3] = {S, B, H};
    lmnn_tensor *one = calloc((size_t)S, sizeof *one), all = {0}, rev = {0};
    if (!one) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lmnn_shape row = fe_shape(3, (int64_t[]){1, B, H}), bh = fe_shape(2, (int64_t[]){B, H});
    lm_status st = LM_OK;
    for (int64_t t = 0; t < S && !st; t++)
        st = lmnn_reshape(ys[t], &row, NULL, &one[t]);
    if (!st)
        st = S == 1 ? lmnn_reshape(one[0], &row, NULL, &all)
                    : lmnn_concat(one, (uint32_t)S, 0, NULL, &all);
    if (st) st = fe_nn_fail(c, n, st);
    if (!st) st = fe_reverse_sequences(c, n, 1, all, 3, dims, 0, lens_row, &rev);
    for (int64_t t = 0; t < S && !st; t++) {
        int32_t b[3] = {(int32_t)t, 0, 0}, e[3] = {(int32_t)t + 1, (int32_t)B, (int32_t)H};
        lmnn_tensor piece, flat;
        if ((st = lmnn_slice(rev, b, e, NULL, 3, NULL, &piece))) {
            st = fe_nn_fail(c, n, st);
            break;
        }
        st = lmnn_reshape(piece, &bh, NULL, &flat);
        fe_free(piece);
        if (st) {
            st = fe_nn_fail(c, n, st);
            break;
        }
        fe_free(ys[t]);
        ys[t] = flat;
    }
    for (int64_t t = 0; t < S; t++)
        fe_free(one[t]);
    free(one);
    fe_free(all);
    fe_free(rev);
    return st;
}

/* Outputs Y_h and Y_c [D, B, H] (batch-major [B, D, H]) from the final
 * states. */
static lm_status out_states(fe_ctx *c, const fe_node *n, const rnn_params *rp,
                            const dir_state *ds) {
    lm_status st = LM_OK;
    for (uint32_t i = 1; i < n->output_count && !st; i++) {
        if (n->outputs[i] == FE_NONE) continue;
        lmnn_tensor r, per[2] = {i == 1 ? ds[0].h : ds[0].c, i == 1 ? ds[1].h : ds[1].c};
        st = stack_states(rp, per, rp->batch_major, &r);
        if (!st) st = fe_out_dev(c, n, i, r);
    }
    return st;
}

static lm_status lower_rnn(fe_ctx *c, const fe_node *n) {
    rnn_params rp;
    lm_status st = rnn_params_of(c, n, &rp);
    if (st) return st;
    int64_t S = rp.seq, B = rp.batch, D = rp.dirs;
    lmnn_tensor x, xt = {0}, x2 = {0}, lens = {0};
    bool lens_owned = false;
    lmnn_tensor *ys = NULL;
    dir_state ds[2];
    memset(ds, 0, sizeof ds);
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    if (rp.batch_major && (st = lmnn_permute(x, (int32_t[]){1, 0, 2}, 3, NULL, &xt))) goto out;
    lmnn_shape rows = fe_shape(2, (int64_t[]){S * B, rp.input});
    if ((st = lmnn_reshape(xt.id ? xt : x, &rows, NULL, &x2))) goto out;
    if (fe_has_in(n, 4)) {
        const fe_tensor *k = fe_in_const(c, n, 4);
        bool full = k != NULL;
        for (uint64_t i = 0; k && i < k->count; i++)
            full &= fe_tensor_get_i64(k, i) == S;
        if (!full && (st = fe_in_dev_float(c, n, 4, &lens, &lens_owned))) goto out;
    }
    if (cell_fits(n, &rp, lens)) {
        lmnn_tensor yd[2] = {{0}, {0}};
        bool want_y = n->outputs[0] != FE_NONE;
        for (uint32_t d = 0; d < rp.dirs && !st; d++)
            st = run_dir_cell(c, n, &rp, d, xt.id ? xt : x, rp.reverse || d == 1,
                              want_y ? &yd[d] : NULL, &ds[d]);
        lmnn_tensor y;
        if (!st && want_y && !(st = stack_y(&rp, yd, &y))) st = fe_out_dev(c, n, 0, y);
        fe_free(yd[0]);
        fe_free(yd[1]);
        if (!st) st = out_states(c, n, &rp, ds);
        goto out;
    }
    ys = calloc((size_t)(S * D), sizeof *ys);
    if (!ys) {
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        goto out;
    }
    for (uint32_t d = 0; d < rp.dirs && !st; d++) {
        bool reverse = rp.reverse || d == 1;
        lmnn_tensor *yd = ys + (size_t)d * (size_t)S;
        if (!reverse || !lens.id) {
            st = run_dir(c, n, &rp, d, x2, reverse, lens, yd, &ds[d]);
            continue;
        }
        /* Sequences of their own lengths, backwards: each reversed within
         * its length, run forwards (masked past it), and Y reversed back. */
        lmnn_tensor lens_row = {0}, xr = {0}, xr2 = {0};
        int64_t xdims[3] = {S, B, rp.input};
        lmnn_shape lr = fe_shape(2, (int64_t[]){1, B});
        if ((st = lmnn_reshape(lens, &lr, NULL, &lens_row))) {
            st = fe_nn_fail(c, n, st);
        } else if (!(st = fe_reverse_sequences(c, n, 1, xt.id ? xt : x, 3, xdims, 0, lens_row,
                                               &xr))) {
            if ((st = lmnn_reshape(xr, &rows, NULL, &xr2)))
                st = fe_nn_fail(c, n, st);
            else if (!(st = run_dir(c, n, &rp, d, xr2, false, lens, yd, &ds[d])))
                st = reverse_steps(c, n, &rp, lens_row, yd);
        }
        fe_free(lens_row);
        fe_free(xr);
        fe_free(xr2);
    }
    lmnn_tensor y;
    if (!st && n->outputs[0] != FE_NONE && !(st = gather_y(&rp, ys, &y)))
        st = fe_out_dev(c, n, 0, y);
    if (!st) st = out_states(c, n, &rp, ds);
out:
    if (ys)
        for (int64_t i = 0; i < S * D; i++)
            fe_free(ys[i]);
    free(ys);
    dir_free(&ds[0]);
    dir_free(&ds[1]);
    if (lens_owned) fe_free(lens);
    fe_free(x2);
    fe_free(xt);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

const fe_op_def fe_ops_rnn[] = {
    /* Input 4 (sequence_lens) decides whether a reverse direction can run. */
    {"RNN", infer_rnn, lower_rnn, 0, NULL},
    {"GRU", infer_rnn, lower_rnn, 0, NULL},
    {"LSTM", infer_rnn, lower_rnn, 0, NULL},
};
const size_t fe_ops_rnn_count = sizeof fe_ops_rnn / sizeof fe_ops_rnn[0];
