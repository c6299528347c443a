/* The optimizers of ONNX's training domain (ai.onnx.preview.training):
 * Adagrad, Momentum and Adam, one update step each.
 *
 * Each is element-wise arithmetic on the tensors it updates, with the
 * learning rate R and the update count T as run-time scalars, so a node is
 * rewritten into the ops that compute it (Mul, Add, Div, Sqrt, Pow, Where,
 * ...), which then fold, fuse and run on the device like any others. The
 * formulas are the ONNX specification's:
 *
 *   Adagrad   r = R / (1 + T * decay_factor)
 *             G' = norm_coefficient * X + G;  H_new = H + G' * G'
 *             X_new = X - r * G' / (Sqrt(H_new) + epsilon)
 *   Momentum  G' = norm_coefficient * X + G;  b = T > 0 ? beta : 1
 *             V_new = alpha * V + b * G'
 *             X_new = X - R * V_new                    (standard)
 *             X_new = X - R * (G' + alpha * V_new)     (nesterov)
 *   Adam      G' = norm_coefficient * X + G
 *             V_new = alpha * V + (1 - alpha) * G'
 *             H_new = beta * H + (1 - beta) * G' * G'
 *             R' = T > 0 ? R * Sqrt(1 - beta^T) / (1 - alpha^T) : R
 *             X_new = (1 - norm_coefficient_post) *
 *                     (X - R' * V_new / (Sqrt(H_new) + epsilon))
 *
 * Inputs are R, T, then the n tensors X, their n gradients G, and their
 * n states (H; V; V then H); outputs the n new X, then the new states. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* ---- building the rewrite ---- */

/* G' = norm_coefficient * X + G (just G without regularization). */
static lm_status regularized(fe_expansion *x, fe_elem e, double norm, uint32_t X, uint32_t G,
                             uint32_t *out) {
    if (norm == 0) {
        *out = G;
        return LM_OK;
    }
    uint32_t k, kx;
    lm_status st = fe_x_float(x, e, norm, &k);
    if (!st) st = fe_x_emit(x, "Mul", k, X, &kx);
    if (!st) st = fe_x_emit(x, "Add", kx, G, out);
    return st;
}

/* a * p + b * q, into *out (FE_NONE: a new value). */
static lm_status blend(fe_expansion *x, uint32_t a, uint32_t p, uint32_t b, uint32_t q,
                       uint32_t *out) {
    uint32_t ap, bq;
    lm_status st = fe_x_emit(x, "Mul", a, p, &ap);
    if (!st) st = fe_x_emit(x, "Mul", b, q, &bq);
    if (!st) st = fe_x_op(x, "Add", ap, bq, out);
    return st;
}

/* ---- checks ---- */

typedef struct optimizer {
    const char *op;
    uint32_t states; /* state tensors per updated tensor: 1 (H or V) or 2 (V, H) */
    const char *const *attrs;
} optimizer;

/* The input and output counts, R a float scalar, T an int64 scalar, and
 * each tensor, gradient and state of one shape and R's element type. */
static lm_status check(fe_ctx *c, const fe_node *n, const optimizer *o, uint32_t *out_count) {
    lm_status st = fe_check_attrs(c, n, o->attrs);
    if (st) return st;
    uint32_t per = 2 + o->states;
    if (n->input_count < 2 + per || (n->input_count - 2) % per)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "%u inputs: expected R, T and %u tensors per updated tensor", n->input_count,
                       per);
    uint32_t count = (n->input_count - 2) / per;
    if (n->output_count != (1 + o->states) * count)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%u outputs for %u updated tensors (expected %u)",
                       n->output_count, count, (1 + o->states) * count);
    for (uint32_t i = 0; i < n->input_count; i++)
        if (!fe_has_in(n, i)) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is missing", i);
    if ((st = fe_check_inputs(c, n, n->input_count, n->input_count))) return st;
    const fe_type *r = fe_in_type(c, n, 0), *t = fe_in_type(c, n, 1);
    if (!fe_elem_is_float(r->elem) || fe_type_volume(r) != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "R must be one float");
    if (t->elem != FE_INT64 || fe_type_volume(t) != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "T must be one int64");
    for (uint32_t k = 0; k < count; k++) {
        const fe_type *xt = fe_in_type(c, n, 2 + k);
        for (uint32_t j = 1; j < per; j++) {
            const fe_type *u = fe_in_type(c, n, 2 + j * count + k);
            bool same = u->elem == xt->elem && u->rank == xt->rank && xt->elem == r->elem;
            for (int32_t d = 0; same && d < u->rank; d++)
                same = u->dims[d] == xt->dims[d];
            if (!same) {
                char a[96], b[96];
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "input %u is %s, but tensor %u it goes with is %s (and R %s)",
                               2 + j * count + k, fe_type_format(u, a, sizeof a), 2 + k,
                               fe_type_format(xt, b, sizeof b), fe_elem_name(r->elem));
            }
        }
    }
    *out_count = count;
    return LM_OK;
}

/* A float attribute widened to double (NAN: required, so absent stays NAN). */
static lm_status attr_float(fe_ctx *c, const fe_node *n, const char *name, double def,
                            double *out) {
    float f;
    lm_status st = fe_attr_float(c, n, name, (float)def, &f);
    *out = f;
    return st;
}

/* ---- the rewrites ---- */

/* T as R's element type (a new value). */
static lm_status t_float(fe_expansion *x, fe_elem e, uint32_t *out) {
    fe_node *cast;
    lm_status st = fe_x_value(x, "t", out);
    if (!st && !(cast = fe_x_node(x, "Cast", 13, 1, 1))) st = fe_x_oom();
    if (st) return st;
    cast->inputs[0] = x->node.inputs[1];
    cast->outputs[0] = *out;
    return fe_x_int_attr(x, cast, "to", false, e);
}

/* T > 0 (a new bool value). */
static lm_status t_positive(fe_expansion *x, uint32_t *out) {
    uint32_t zero;
    lm_status st = fe_x_scalar(x, FE_INT64, 0, "zero", &zero);
    if (!st) st = fe_x_emit(x, "Greater", x->node.inputs[1], zero, out);
    return st;
}

static lm_status infer_adagrad(fe_ctx *c, const fe_node *n) {
    static const char *const attrs[] = {"decay_factor", "epsilon", "norm_coefficient", NULL};
    const optimizer o = {"Adagrad", 1, attrs};
    uint32_t count;
    double decay, eps, norm;
    lm_status st = check(c, n, &o, &count);
    if (!st) st = attr_float(c, n, "decay_factor", 0.0, &decay);
    if (!st) st = attr_float(c, n, "epsilon", 1e-6, &eps);
    if (!st) st = attr_float(c, n, "norm_coefficient", 0.0, &norm);
    if (st) return st;
    fe_elem e = fe_in_type(c, n, 0)->elem;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    /* r = R / (1 + T * decay_factor) */
    uint32_t t, kdecay, td, one, den, r, keps;
    st = t_float(&x, e, &t);
    if (!st) st = fe_x_float(&x, e, decay, &kdecay);
    if (!st) st = fe_x_float(&x, e, 1.0, &one);
    if (!st) st = fe_x_float(&x, e, eps, &keps);
    if (!st) st = fe_x_emit(&x, "Mul", t, kdecay, &td);
    if (!st) st = fe_x_emit(&x, "Add", one, td, &den);
    if (!st) st = fe_x_emit(&x, "Div", n->inputs[0], den, &r);
    for (uint32_t k = 0; !st && k < count; k++) {
        uint32_t X = n->inputs[2 + k], G = n->inputs[2 + count + k],
                 H = n->inputs[2 + 2 * count + k];
        uint32_t g, gg, h_new = n->outputs[count + k], root, ada, rg, step;
        st = regularized(&x, e, norm, X, G, &g);
        if (!st) st = fe_x_emit(&x, "Mul", g, g, &gg);
        if (!st) st = fe_x_op(&x, "Add", H, gg, &h_new);
        if (!st) st = fe_x_emit(&x, "Sqrt", h_new, FE_NONE, &root);
        if (!st) st = fe_x_emit(&x, "Add", root, keps, &ada);
        if (!st) st = fe_x_emit(&x, "Mul", r, g, &rg);
        if (!st) st = fe_x_emit(&x, "Div", rg, ada, &step);
        uint32_t x_new = n->outputs[k];
        if (!st) st = fe_x_op(&x, "Sub", X, step, &x_new);
    }
    return fe_x_end(c, &x, st);
}

static lm_status infer_momentum(fe_ctx *c, const fe_node *n) {
    static const char *const attrs[] = {"alpha", "beta", "mode", "norm_coefficient", NULL};
    const optimizer o = {"Momentum", 1, attrs};
    uint32_t count;
    double alpha, beta, norm;
    int mode;
    lm_status st = check(c, n, &o, &count);
    if (!st) st = attr_float(c, n, "alpha", NAN, &alpha);
    if (!st) st = attr_float(c, n, "beta", NAN, &beta);
    if (!st) st = attr_float(c, n, "norm_coefficient", NAN, &norm);
    if (!st)
        st = fe_attr_choice(c, n, "mode", NULL, (const char *const[]){"standard", "nesterov", NULL},
                            &mode);
    if (st) return st;
    if (isnan(alpha) || isnan(beta) || isnan(norm))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "attributes alpha, beta and norm_coefficient are required");
    fe_elem e = fe_in_type(c, n, 0)->elem;
    bool nesterov = mode == 1;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    /* beta_adjusted = T > 0 ? beta : 1 */
    uint32_t pos, kbeta, one, kalpha, b;
    st = t_positive(&x, &pos);
    if (!st) st = fe_x_float(&x, e, beta, &kbeta);
    if (!st) st = fe_x_float(&x, e, 1.0, &one);
    if (!st) st = fe_x_float(&x, e, alpha, &kalpha);
    fe_node *w = st ? NULL : fe_x_node(&x, "Where", 16, 3, 1);
    if (!st && !w) st = fe_x_oom();
    if (!st && !(st = fe_x_value(&x, "beta_adjusted", &b))) {
        w->inputs[0] = pos;
        w->inputs[1] = kbeta;
        w->inputs[2] = one;
        w->outputs[0] = b;
    }
    for (uint32_t k = 0; !st && k < count; k++) {
        uint32_t X = n->inputs[2 + k], G = n->inputs[2 + count + k],
                 V = n->inputs[2 + 2 * count + k];
        uint32_t g, v_new = n->outputs[count + k], dir, step, x_new = n->outputs[k];
        st = regularized(&x, e, norm, X, G, &g);
        if (!st) st = blend(&x, kalpha, V, b, g, &v_new);
        dir = v_new;
        if (!st && nesterov) {
            uint32_t av;
            st = fe_x_emit(&x, "Mul", kalpha, v_new, &av);
            if (!st) st = fe_x_emit(&x, "Add", g, av, &dir);
        }
        if (!st) st = fe_x_emit(&x, "Mul", n->inputs[0], dir, &step);
        if (!st) st = fe_x_op(&x, "Sub", X, step, &x_new);
    }
    return fe_x_end(c, &x, st);
}

static lm_status infer_adam(fe_ctx *c, const fe_node *n) {
    static const char *const attrs[] = {
        "alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post", NULL};
    const optimizer o = {"Adam", 2, attrs};
    uint32_t count;
    double alpha, beta, eps, norm, post;
    lm_status st = check(c, n, &o, &count);
    if (!st) st = attr_float(c, n, "alpha", 0.9, &alpha);
    if (!st) st = attr_float(c, n, "beta", 0.999, &beta);
    if (!st) st = attr_float(c, n, "epsilon", 1e-6, &eps);
    if (!st) st = attr_float(c, n, "norm_coefficient", 0.0, &norm);
    if (!st) st = attr_float(c, n, "norm_coefficient_post", 0.0, &post);
    if (st) return st;
    fe_elem e = fe_in_type(c, n, 0)->elem;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    /* R' = T > 0 ? R * Sqrt(1 - beta^T) / (1 - alpha^T) : R */
    uint32_t t, pos, one, ka, kb, ka1, kb1, keps, kpost, at, bt, a1, b1, rb, num, radj = FE_NONE;
    st = t_float(&x, e, &t);
    if (!st) st = t_positive(&x, &pos);
    if (!st) st = fe_x_float(&x, e, 1.0, &one);
    if (!st) st = fe_x_float(&x, e, alpha, &ka);
    if (!st) st = fe_x_float(&x, e, beta, &kb);
    if (!st) st = fe_x_float(&x, e, 1.0 - alpha, &ka1);
    if (!st) st = fe_x_float(&x, e, 1.0 - beta, &kb1);
    if (!st) st = fe_x_float(&x, e, eps, &keps);
    if (!st) st = fe_x_float(&x, e, 1.0 - post, &kpost);
    if (!st) st = fe_x_emit(&x, "Pow", ka, t, &at);
    if (!st) st = fe_x_emit(&x, "Pow", kb, t, &bt);
    if (!st) st = fe_x_emit(&x, "Sub", one, at, &a1);
    if (!st) st = fe_x_emit(&x, "Sub", one, bt, &b1);
    if (!st) st = fe_x_emit(&x, "Sqrt", b1, FE_NONE, &rb);
    if (!st) st = fe_x_emit(&x, "Mul", n->inputs[0], rb, &num);
    uint32_t adjusted;
    if (!st) st = fe_x_emit(&x, "Div", num, a1, &adjusted);
    fe_node *w = st ? NULL : fe_x_node(&x, "Where", 16, 3, 1);
    if (!st && !w) st = fe_x_oom();
    if (!st && !(st = fe_x_value(&x, "r_adjusted", &radj))) {
        w->inputs[0] = pos;
        w->inputs[1] = adjusted;
        w->inputs[2] = n->inputs[0];
        w->outputs[0] = radj;
    }
    for (uint32_t k = 0; !st && k < count; k++) {
        uint32_t X = n->inputs[2 + k], G = n->inputs[2 + count + k],
                 V = n->inputs[2 + 2 * count + k], H = n->inputs[2 + 3 * count + k];
        uint32_t g, gg, v_new = n->outputs[count + k], h_new = n->outputs[2 * count + k];
        uint32_t root, den, ratio, step, moved, x_new = n->outputs[k];
        st = regularized(&x, e, norm, X, G, &g);
        if (!st) st = blend(&x, ka, V, ka1, g, &v_new);
        if (!st) st = fe_x_emit(&x, "Mul", g, g, &gg);
        if (!st) st = blend(&x, kb, H, kb1, gg, &h_new);
        if (!st) st = fe_x_emit(&x, "Sqrt", h_new, FE_NONE, &root);
        if (!st) st = fe_x_emit(&x, "Add", root, keps, &den);
        if (!st) st = fe_x_emit(&x, "Div", v_new, den, &ratio);
        if (!st) st = fe_x_emit(&x, "Mul", radj, ratio, &step);
        if (!st) st = fe_x_emit(&x, "Sub", X, step, &moved);
        if (!st) st = fe_x_op(&x, "Mul", kpost, moved, &x_new);
    }
    return fe_x_end(c, &x, st);
}

/* Named with their domain, as lmfe_supported_op lists them. */
#define TRAINING_OP(name) FE_TRAINING_DOMAIN "." name

const fe_op_def fe_ops_training[] = {
    {TRAINING_OP("Adagrad"), infer_adagrad, NULL, 0, NULL},
    {TRAINING_OP("Momentum"), infer_momentum, NULL, 0, NULL},
    {TRAINING_OP("Adam"), infer_adam, NULL, 0, NULL},
    {TRAINING_OP("Gradient"), fe_infer_gradient, NULL, 0, NULL},
};
const size_t fe_ops_training_count = sizeof fe_ops_training / sizeof fe_ops_training[0];

const fe_op_def *fe_op_find_training(const char *op_type) {
    const size_t skip = sizeof FE_TRAINING_DOMAIN; /* the domain and its dot */
    for (size_t i = 0; i < fe_ops_training_count; i++)
        if (!strcmp(fe_ops_training[i].op_type + skip, op_type)) return &fe_ops_training[i];
    return NULL;
}
