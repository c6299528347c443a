/* Random numbers: RandomUniform, RandomNormal, their Like forms, Bernoulli
 * and Multinomial, drawn on the device (lmnn_uniform, lmnn_normal,
 * lmnn_bernoulli). Never folded: the numbers are the device's.
 *
 * A binary is a fixed recording, so its draws are too: every run of it gives
 * the same numbers. The `seed` attribute picks them; without one, the node's
 * output name does (ONNX leaves that seed to the implementation), so two
 * nodes draw unrelated numbers and recompiling gives the same binary. */
#include <math.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/fe_ops.h"

void fe_random_options(fe_ctx *c, const fe_node *n, lmnn_random_options *out) {
    lmnn_random_options_init(out);
    out->run_seed = c->run_seed;
    /* A float for the generators, an int for Dropout. */
    const fe_attr *a = fe_node_attr(n, "seed");
    const char *name = c->g->values[n->outputs[0]].name;
    if (a && a->type == FE_ATTR_FLOAT)
        out->seed = (uint32_t)hash64(&a->f, sizeof a->f, 0x5eed);
    else if (a && a->type == FE_ATTR_INT)
        out->seed = (uint32_t)hash64(&a->i, sizeof a->i, 0x5eed);
    else
        out->seed = (uint32_t)hash64(name, strlen(name), 0x5eed);
}

/* The output's element type: the dtype attribute, else `def`; the
 * generators give floats only, Bernoulli any number or bool. */
static lm_status out_elem(fe_ctx *c, const fe_node *n, int64_t def, bool any, fe_elem *out) {
    int64_t dtype;
    lm_status st = fe_attr_int(c, n, "dtype", def, &dtype);
    if (st) return st;
    bool ok = dtype > 0 && dtype < FE_ELEM_COUNT_ &&
              (fe_elem_is_float((fe_elem)dtype) ||
               (any && (fe_elem_is_numeric((fe_elem)dtype) || dtype == FE_BOOL)));
    if (!ok)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "dtype %lld (%s) is not supported: expected %s",
                       (long long)dtype, fe_elem_name((fe_elem)dtype),
                       any ? "a number or bool" : "float, double, float16 or bfloat16");
    *out = (fe_elem)dtype;
    return LM_OK;
}

static bool is_normal(const fe_node *n) {
    return !strncmp(n->op_type, "RandomNormal", 12);
}

static lm_status check_range(fe_ctx *c, const fe_node *n, float a, float b) {
    if (is_normal(n) ? !(b >= 0) || !isfinite(a) || !isfinite(b)
                     : !(a <= b) || !isfinite(a) || !isfinite(b))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       is_normal(n) ? "mean %g and scale %g: expected finite values, scale >= 0"
                                    : "low %g and high %g: expected finite values, low <= high",
                       a, b);
    return LM_OK;
}

/* The distribution's two parameters: low and high, or mean and scale. */
static lm_status params(fe_ctx *c, const fe_node *n, float *a, float *b) {
    lm_status st =
        is_normal(n) ? fe_attr_float(c, n, "mean", 0, a) : fe_attr_float(c, n, "low", 0, a);
    if (!st)
        st = is_normal(n) ? fe_attr_float(c, n, "scale", 1, b) : fe_attr_float(c, n, "high", 1, b);
    return st ? st : check_range(c, n, *a, *b);
}

static lm_status infer_random(fe_ctx *c, const fe_node *n) {
    bool like = strstr(n->op_type, "Like") != NULL;
    lm_status st = fe_check_inputs(c, n, like, like);
    const char *const uniform[] = {"dtype", "high", "low", "seed", "shape", NULL};
    const char *const normal[] = {"dtype", "mean", "scale", "seed", "shape", NULL};
    if (!st) st = fe_check_attrs(c, n, is_normal(n) ? normal : uniform);
    if (st) return st;
    if (like && fe_node_attr(n, "shape"))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute shape is not one of %s's", n->op_type);
    float a, b;
    fe_elem elem;
    if ((st = params(c, n, &a, &b))) return st;
    if (like) {
        const fe_type *x = fe_in_type(c, n, 0);
        int64_t def = fe_elem_is_float(x->elem) ? x->elem : FE_FLOAT;
        if ((st = out_elem(c, n, def, false, &elem))) return st;
        return fe_set_out_type(c, n, 0, elem, x->rank, x->dims);
    }
    const int64_t *dims;
    size_t rank;
    if ((st = out_elem(c, n, FE_FLOAT, false, &elem))) return st;
    if ((st = fe_attr_ints(c, n, "shape", &dims, &rank))) return st;
    if (!dims) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute shape is missing");
    if (rank > LMFE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "shape of rank %zu (at most %d)", rank,
                       LMFE_MAX_RANK);
    for (size_t d = 0; d < rank; d++)
        if (dims[d] < 0)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "shape[%zu] is %lld", d, (long long)dims[d]);
    return fe_set_out_type(c, n, 0, elem, (int32_t)rank, dims);
}

static lm_status lower_random(fe_ctx *c, const fe_node *n) {
    const fe_type *y = &c->g->values[n->outputs[0]].type;
    float a, b;
    lm_status st = params(c, n, &a, &b);
    if (st) return st;
    /* Only the shape of a like tensor is read. */
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = fe_dev_dtype(c, FE_FLOAT);
    lmnn_shape s = fe_shape(y->rank, y->dims);
    lmnn_tensor like = {0}, r = {0};
    lmnn_random_options ro;
    fe_random_options(c, n, &ro);
    st = lmnn_full(c->device, &s, 0.0, &o, &like);
    if (!st)
        st = is_normal(n) ? lmnn_normal(like, a, b, &ro, &r) : lmnn_uniform(like, a, b, &ro, &r);
    fe_free(like);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Bernoulli: 1 with the input's probability ---- */

static lm_status infer_bernoulli(fe_ctx *c, const fe_node *n) {
    static const fe_elem floats[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED};
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"dtype", "seed", NULL});
    if (!st) st = fe_check_elem(c, n, 0, floats);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    fe_elem elem;
    if ((st = out_elem(c, n, x->elem, true, &elem))) return st;
    return fe_set_out_type(c, n, 0, elem, x->rank, x->dims);
}

static lm_status lower_bernoulli(fe_ctx *c, const fe_node *n) {
    lmnn_tensor p, r;
    bool owned;
    lm_status st = fe_in_dev_float(c, n, 0, &p, &owned);
    if (st) return st;
    lmnn_random_options ro;
    fe_random_options(c, n, &ro);
    st = lmnn_bernoulli(p, &ro, &r);
    if (owned) fe_free(p);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Multinomial: sample_size class indices per row of log-probabilities ---- */

#define MULTINOMIAL_MAX_SAMPLES (1 << 20)

static lm_status infer_multinomial(fe_ctx *c, const fe_node *n) {
    static const fe_elem floats[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED};
    int64_t dtype, samples;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"dtype", "sample_size", "seed", NULL});
    if (!st) st = fe_check_elem(c, n, 0, floats);
    if (!st) st = fe_attr_int(c, n, "dtype", FE_INT32, &dtype);
    if (!st) st = fe_attr_int(c, n, "sample_size", 1, &samples);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "input must be 2-D (batch, classes), given rank %d", (int)x->rank);
    if (x->dims[1] < 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input has no classes");
    if (dtype != FE_INT32 && dtype != FE_INT64)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "dtype %lld: expected int32 (6) or int64 (7)",
                       (long long)dtype);
    if (samples < 1 || samples > MULTINOMIAL_MAX_SAMPLES)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "sample_size %lld (from 1 to %d)",
                       (long long)samples, MULTINOMIAL_MAX_SAMPLES);
    int64_t dims[2] = {x->dims[0], samples};
    return fe_set_out_type(c, n, 0, (fe_elem)dtype, 2, dims);
}

/* The class of a draw u is how many entries of the row's cumulative
 * distribution (softmax, then a product with an upper triangle of ones) lie
 * below u; rounding may leave the last entry under 1, hence the clamp. */
static lm_status lower_multinomial(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t batch = x->dims[0], classes = x->dims[1];
    int64_t samples = c->g->values[n->outputs[0]].type.dims[1];
    int64_t tdims[2] = {classes, classes};
    fe_tensor *tri;
    lm_status st = fe_const_new(c, FE_FLOAT, 2, tdims, &tri);
    if (st) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < classes; i++)
        for (int64_t j = i; j < classes; j++)
            fe_tensor_set_f64(tri, (uint64_t)(i * classes + j), 1);
    lmnn_tensor xs, m, p = {0}, cdf = {0}, like = {0}, u = {0}, cdf3 = {0}, u3 = {0}, below = {0},
                       count = {0}, r = {0};
    bool owned = false;
    if ((st = fe_in_dev_float(c, n, 0, &xs, &owned))) return st;
    lmnn_matmul_options mo;
    lmnn_matmul_options_init(&mo);
    mo.fp32_accumulate = LMNN_FP32_ACC_ON;
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = fe_dev_dtype(c, FE_FLOAT);
    lmnn_shape us = fe_shape(2, (int64_t[]){batch, samples});
    lmnn_shape c3 = fe_shape(3, (int64_t[]){batch, 1, classes});
    lmnn_shape u3s = fe_shape(3, (int64_t[]){batch, samples, 1});
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dims[0] = -1;
    ro.dim_count = 1;
    lmnn_random_options rando;
    fe_random_options(c, n, &rando);
    if (!(st = fe_aux(c, n, 0, tri, LMNN_TILE, &m)) && !(st = lmnn_softmax(xs, -1, NULL, &p)) &&
        !(st = lmnn_matmul(p, m, &mo, &cdf)) && !(st = lmnn_full(c->device, &us, 0, &to, &like)) &&
        !(st = lmnn_uniform(like, 0, 1, &rando, &u)) &&
        !(st = lmnn_reshape(cdf, &c3, NULL, &cdf3)) && !(st = lmnn_reshape(u, &u3s, NULL, &u3)) &&
        !(st = lmnn_lt(cdf3, u3, &below)) && !(st = lmnn_sum(below, &ro, &count)))
        st = lmnn_clamp(count, 0, (double)(classes - 1), &r);
    lmnn_tensor made[] = {p, cdf, like, u, cdf3, u3, below, count};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
        fe_free(made[i]);
    if (owned) fe_free(xs);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

bool fe_draws_random(fe_ctx *c, const fe_node *n) {
    if (n->domain[0]) return false;
    if (!strcmp(n->op_type, "Dropout")) return fe_dropout_drops(c, n, NULL);
    for (size_t i = 0; i < fe_ops_random_count; i++)
        if (!strcmp(n->op_type, fe_ops_random[i].op_type)) return true;
    return false;
}

const fe_op_def fe_ops_random[] = {
    {"RandomUniform", infer_random, lower_random, 0, NULL},
    {"RandomNormal", infer_random, lower_random, 0, NULL},
    {"RandomUniformLike", infer_random, lower_random, 0, NULL},
    {"RandomNormalLike", infer_random, lower_random, 0, NULL},
    {"Bernoulli", infer_bernoulli, lower_bernoulli, 0, NULL},
    {"Multinomial", infer_multinomial, lower_multinomial, 0, NULL},
};
const size_t fe_ops_random_count = sizeof fe_ops_random / sizeof fe_ops_random[0];
