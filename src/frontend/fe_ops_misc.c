/* Ops built from several library calls: EyeLike and the windows (Hann,
 * Hamming, Blackman; folded), OneHot, CumSum, NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss and Det. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

/* ---- EyeLike: only the input's shape matters, so it always folds ---- */

static lm_status infer_eyelike(fe_ctx *c, const fe_node *n) {
    int64_t dtype, k;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"dtype", "k", NULL});
    if (!st) st = fe_attr_int(c, n, "dtype", fe_in_type(c, n, 0)->elem, &dtype);
    if (!st) st = fe_attr_int(c, n, "k", 0, &k);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    if (in->rank != 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be 2-D");
    if (dtype <= 0 || dtype >= FE_ELEM_COUNT_ ||
        (!fe_elem_is_numeric((fe_elem)dtype) && dtype != FE_BOOL))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "dtype %lld is not supported", (long long)dtype);
    fe_tensor *t;
    if ((st = fe_const_new(c, (fe_elem)dtype, 2, in->dims, &t))) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < in->dims[0]; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < in->dims[1]) fe_tensor_set_i64(t, (uint64_t)(i * in->dims[1] + j), 1);
    }
    return fe_set_out_const(c, n, 0, t);
}

/* ---- the windows: their size is a constant, so they always fold ---- */

/* w[i] = sum of a[j] cos(2 pi j i / d) over the window's cosine terms, with
 * d the size (periodic) or one less (symmetric), as ONNX defines them. */
static lm_status infer_window(fe_ctx *c, const fe_node *n) {
    int64_t periodic, dtype;
    const fe_tensor *size;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"periodic", "output_datatype", NULL});
    if (!st) st = fe_attr_int(c, n, "periodic", 1, &periodic);
    if (!st) st = fe_attr_int(c, n, "output_datatype", FE_FLOAT, &dtype);
    if (!st) st = fe_in_const_required(c, n, 0, &size);
    if (st) return st;
    if (size->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "size must be one value");
    int64_t len = fe_tensor_get_i64(size, 0);
    if (len < 1 || len > ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "size %lld (from 1 to 2^24)", (long long)len);
    if (dtype <= 0 || dtype >= FE_ELEM_COUNT_ || !fe_elem_is_numeric((fe_elem)dtype))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "output_datatype %lld is not supported",
                       (long long)dtype);
    double a[3];
    if (!strcmp(n->op_type, "HannWindow"))
        memcpy(a, (double[]){0.5, -0.5, 0}, sizeof a);
    else if (!strcmp(n->op_type, "HammingWindow"))
        memcpy(a, (double[]){25.0 / 46, -21.0 / 46, 0}, sizeof a);
    else
        memcpy(a, (double[]){0.42, -0.5, 0.08}, sizeof a);
    double d = periodic ? (double)len : (double)(len - 1);
    fe_tensor *t;
    if ((st = fe_const_new(c, (fe_elem)dtype, 1, &len, &t))) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < len; i++) {
        double x = d > 0 ? 2 * acos(-1.0) * (double)i / d : 0, w = 0;
        for (int j = 0; j < 3; j++)
            w += a[j] * cos(j * x);
        fe_tensor_set_f64(t, (uint64_t)i, w);
    }
    return fe_set_out_const(c, n, 0, t);
}

/* ---- OneHot ---- */

static lm_status onehot_params(fe_ctx *c, const fe_node *n, int64_t *depth, int32_t *axis) {
    const fe_tensor *d;
    int64_t ax;
    lm_status st = fe_in_const_required(c, n, 1, &d);
    if (!st) st = fe_attr_int(c, n, "axis", -1, &ax);
    if (st) return st;
    if (d->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "depth must hold one value");
    double v = fe_tensor_get_f64(d, 0);
    if (!(v >= 1) || v > (1 << 24))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "depth %g is out of range", v);
    *depth = (int64_t)v;
    return fe_axis(c, n, ax, fe_in_type(c, n, 0)->rank + 1, axis);
}

static lm_status infer_onehot(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    int64_t depth;
    int32_t axis;
    if (!st) st = onehot_params(c, n, &depth, &axis);
    if (st) return st;
    const fe_type *idx = fe_in_type(c, n, 0), *values = fe_in_type(c, n, 2);
    if (!fe_elem_is_numeric(idx->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "indices must be numbers");
    if (fe_type_volume(values) != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "values must hold [off, on]");
    if (idx->rank + 1 > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the result would have rank %d", idx->rank + 1);
    int64_t dims[FE_MAX_RANK];
    for (int32_t d = 0, j = 0; d <= idx->rank; d++)
        dims[d] = d == axis ? depth : idx->dims[j++];
    return fe_set_out_type(c, n, 0, values->elem, idx->rank + 1, dims);
}

/* where(idx == arange(depth) along axis, on, off); negative indices count
 * from depth. */
static lm_status lower_onehot(fe_ctx *c, const fe_node *n) {
    int64_t depth;
    int32_t axis;
    lm_status st = onehot_params(c, n, &depth, &axis);
    if (st) return st;
    const fe_type *it = fe_in_type(c, n, 0);
    int32_t rank = it->rank + 1;
    int64_t idims[FE_MAX_RANK], adims[FE_MAX_RANK];
    for (int32_t d = 0, j = 0; d < rank; d++) {
        idims[d] = d == axis ? 1 : it->dims[j++];
        adims[d] = d == axis ? depth : 1;
    }
    fe_tensor *ar;
    if ((st = fe_const_new(c, FE_FLOAT, (uint32_t)rank, adims, &ar))) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < depth; i++)
        fe_tensor_set_f64(ar, (uint64_t)i, (double)i);
    lmnn_tensor idx, arange, v, lt = {0}, add = {0}, fixed = {0}, shaped = {0}, mask = {0};
    lmnn_tensor off = {0}, on = {0}, r = {0};
    bool io = false, vo = false;
    if ((st = fe_in_dev_float(c, n, 0, &idx, &io))) return st;
    if ((st = fe_in_dev_float(c, n, 2, &v, &vo))) {
        if (io) fe_free(idx);
        return st;
    }
    lmnn_shape s = fe_shape(rank, idims), one = LMNN_SHAPE(1);
    int32_t b0 = 0, e0 = 1, b1 = 1, e1 = 2;
    if (!(st = fe_aux_f32(c, n, 0, ar, &arange)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_LT, idx, 0.0, NULL, &lt)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_MUL, lt, (double)depth, NULL, &add)) &&
        !(st = lmnn_binary(LMNN_BINARY_ADD, idx, add, NULL, &fixed)) &&
        !(st = lmnn_reshape(fixed, &s, NULL, &shaped)) &&
        !(st = lmnn_binary(LMNN_BINARY_EQ, shaped, arange, NULL, &mask))) {
        lmnn_tensor flat = {0};
        if (!(st = lmnn_reshape(v, &(lmnn_shape){.rank = 1, .dims = {2}}, NULL, &flat)) &&
            !(st = lmnn_slice(flat, &b0, &e0, NULL, 1, NULL, &off)) &&
            !(st = lmnn_slice(flat, &b1, &e1, NULL, 1, NULL, &on)))
            st = lmnn_where(mask, on, off, &r);
        fe_free(flat);
    }
    (void)one;
    fe_free(lt);
    fe_free(add);
    fe_free(fixed);
    fe_free(shaped);
    fe_free(mask);
    fe_free(off);
    fe_free(on);
    if (io) fe_free(idx);
    if (vo) fe_free(v);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- CumSum: a matmul with a triangle of ones along the axis ---- */

static lm_status cumsum_axis(fe_ctx *c, const fe_node *n, int32_t *axis) {
    const fe_tensor *a;
    lm_status st = fe_in_const_required(c, n, 1, &a);
    if (st) return st;
    if (a->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis must hold one value");
    return fe_axis(c, n, fe_tensor_get_i64(a, 0), fe_in_type(c, n, 0)->rank, axis);
}

/* CumSum of a known input (positions counted from a constant mask): int64
 * sums exact, float ones in double. */
static lm_status fold_cumsum(fe_ctx *c, const fe_node *n, const fe_tensor *k, int32_t axis) {
    int64_t exclusive, reverse;
    lm_status st = fe_attr_int(c, n, "exclusive", 0, &exclusive);
    if (!st) st = fe_attr_int(c, n, "reverse", 0, &reverse);
    fe_tensor *o;
    if (!st) st = fe_const_new(c, k->elem, k->rank, k->dims, &o);
    if (st) return st;
    uint64_t len = (uint64_t)k->dims[axis], inner = 1;
    for (uint32_t d = (uint32_t)axis + 1; d < k->rank; d++)
        inner *= (uint64_t)k->dims[d];
    bool ints = fe_elem_is_int(k->elem);
    for (uint64_t lane = 0; len && lane < k->count / len; lane++) {
        uint64_t first = lane / inner * len * inner + lane % inner;
        int64_t si = 0;
        double sf = 0;
        for (uint64_t j = 0; j < len; j++) {
            uint64_t e = first + (reverse ? len - 1 - j : j) * inner;
            if (exclusive) ints ? fe_tensor_set_i64(o, e, si) : fe_tensor_set_f64(o, e, sf);
            if (ints)
                si = (int64_t)((uint64_t)si + (uint64_t)fe_tensor_get_i64(k, e));
            else
                sf += fe_tensor_get_f64(k, e);
            if (!exclusive) ints ? fe_tensor_set_i64(o, e, si) : fe_tensor_set_f64(o, e, sf);
        }
    }
    return fe_set_out_const(c, n, 0, o);
}

static lm_status infer_cumsum(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"exclusive", "reverse", NULL});
    int32_t axis;
    if (!st) st = cumsum_axis(c, n, &axis);
    if (st) return st;
    const fe_type *t = fe_in_type(c, n, 0);
    if (!fe_elem_is_numeric(t->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "element type %s is not supported",
                       fe_elem_name(t->elem));
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) return fold_cumsum(c, n, k, axis);
    if (t->dims[axis] > FE_CUMSUM_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "an axis of %lld elements is too long (at most %lld: the sums are "
                       "float32, exact for integers below that)",
                       (long long)t->dims[axis], (long long)FE_CUMSUM_MAX);
    return fe_set_out_type(c, n, 0, t->elem, t->rank, t->dims);
}

/* The square matrix of side `len` that multiplies a row into its prefix
 * sums: y[j] = sum over i of x[i] * m[i][j]. */
static lm_status prefix_matrix(fe_ctx *c, int64_t len, bool reverse, bool exclusive,
                               fe_tensor **out) {
    lm_status st = fe_const_new(c, FE_FLOAT, 2, (const int64_t[]){len, len}, out);
    for (int64_t i = 0; !st && i < len; i++)
        for (int64_t j = 0; j < len; j++) {
            bool in = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
            fe_tensor_set_f64(*out, (uint64_t)(i * len + j), in);
        }
    return st;
}

/* Rows this long or shorter are summed by one product with the square
 * matrix (CUMSUM_DIRECT^2 floats in the binary at most); longer ones in
 * blocks of CUMSUM_BLOCK. */
#define CUMSUM_DIRECT 256
#define CUMSUM_BLOCK 32

/* The prefix sums (inclusive or exclusive, from the front or the back)
 * along the last dim of float tile tensor x of shape s, a new tensor. A
 * long row is cut into blocks of CUMSUM_BLOCK: each block's own sums (one
 * product by the block's matrix), plus the exclusive sums of the block
 * totals before it, made the same way (so any length, a few launches a
 * level). fe_aux slots: 0 the block's matrix, 1 the last level's. */
static lm_status prefix_sums(fe_ctx *c, const fe_node *n, lmnn_tensor x, lmnn_shape s, bool reverse,
                             bool exclusive, lmnn_tensor *out) {
    uint32_t rank = s.rank, len = s.dims[rank - 1];
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.fp32_accumulate = LMNN_FP32_ACC_ON;
    fe_tensor *tri;
    lmnn_tensor m;
    lm_status st;
    if (len <= CUMSUM_DIRECT) {
        if (!(st = prefix_matrix(c, len, reverse, exclusive, &tri)) &&
            !(st = fe_aux(c, n, 1, tri, LMNN_TILE, &m)) && (st = lmnn_matmul(x, m, &o, out)))
            st = fe_nn_fail(c, n, st);
        return st;
    }
    if (rank == LMNN_MAX_DIMS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "a run of %u entries along a dim of a rank-%u tensor is too long (its "
                       "blocks would need one more dim)",
                       len, rank);
    uint32_t blocks = (len + CUMSUM_BLOCK - 1) / CUMSUM_BLOCK, whole = blocks * CUMSUM_BLOCK;
    lmnn_shape bs = s, ts = s, os;
    bs.dims[rank - 1] = ts.dims[rank - 1] = blocks;
    bs.dims[rank] = CUMSUM_BLOCK;
    bs.rank = rank + 1;
    os = bs;
    os.dims[rank] = 1;
    /* x in whole blocks, [..., blocks, CUMSUM_BLOCK]: zeros after the row
     * add nothing either way. */
    lmnn_tensor t = {0}, inb = {0}, tot = {0}, off = {0}, u = {0};
    if (whole != len) {
        uint32_t pads[2 * LMNN_MAX_DIMS] = {0};
        pads[2 * rank - 1] = whole - len;
        lmnn_pad_options po;
        lmnn_pad_options_init(&po);
        if ((st = lmnn_pad(x, pads, rank, &po, &t))) return fe_nn_fail(c, n, st);
        if ((st = fe_reshape_owned(c, n, t, &bs, &t))) return st;
    } else if ((st = lmnn_reshape(x, &bs, NULL, &t))) {
        return fe_nn_fail(c, n, st);
    }
    /* Each block's inclusive sums: its total at its end (from the back, at
     * its start). */
    if (!(st = prefix_matrix(c, CUMSUM_BLOCK, reverse, false, &tri)) &&
        !(st = fe_aux(c, n, 0, tri, LMNN_TILE, &m)) && (st = lmnn_matmul(t, m, &o, &inb)))
        st = fe_nn_fail(c, n, st);
    int32_t begins[LMNN_MAX_DIMS] = {0}, ends[LMNN_MAX_DIMS];
    for (uint32_t d = 0; d < bs.rank; d++)
        ends[d] = (int32_t)bs.dims[d];
    begins[rank] = reverse ? 0 : CUMSUM_BLOCK - 1;
    ends[rank] = begins[rank] + 1;
    if (!st && (st = lmnn_slice(inb, begins, ends, NULL, bs.rank, NULL, &tot)))
        st = fe_nn_fail(c, n, st);
    if (!st && !(st = fe_reshape_owned(c, n, tot, &ts, &tot)))
        st = prefix_sums(c, n, tot, ts, reverse, true, &off);
    if (!st) st = fe_reshape_owned(c, n, off, &os, &off);
    if (!st && (st = lmnn_binary(LMNN_BINARY_ADD, inb, off, NULL, &u))) st = fe_nn_fail(c, n, st);
    if (!st && exclusive) {
        fe_free(inb);
        inb = u;
        u = (lmnn_tensor){0};
        if ((st = lmnn_binary(LMNN_BINARY_SUB, inb, t, NULL, &u))) st = fe_nn_fail(c, n, st);
    }
    fe_free(t);
    fe_free(inb);
    fe_free(tot);
    fe_free(off);
    lmnn_shape ws = s;
    ws.dims[rank - 1] = whole;
    if (!st) st = fe_reshape_owned(c, n, u, &ws, &u);
    if (st || whole == len) {
        if (st) fe_free(u);
        *out = u;
        return st;
    }
    for (uint32_t d = 0; d < rank; d++)
        ends[d] = (int32_t)s.dims[d];
    st = lmnn_slice(u, begins, ends, NULL, rank, NULL, out);
    fe_free(u);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

static lm_status lower_cumsum(fe_ctx *c, const fe_node *n) {
    int64_t exclusive, reverse;
    int32_t axis;
    lm_status st = fe_attr_int(c, n, "exclusive", 0, &exclusive);
    if (!st) st = fe_attr_int(c, n, "reverse", 0, &reverse);
    if (!st) st = cumsum_axis(c, n, &axis);
    if (st) return st;
    const fe_type *t = fe_in_type(c, n, 0);
    int32_t rank = t->rank, perm[FE_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        perm[d] = d;
    perm[axis] = rank - 1;
    perm[rank - 1] = axis;
    lmnn_shape s = fe_shape((uint32_t)rank, t->dims);
    s.dims[axis] = (uint32_t)t->dims[rank - 1];
    s.dims[rank - 1] = (uint32_t)t->dims[axis];
    lmnn_tensor x, moved = {0}, sums = {0}, r = {0};
    bool xo = false;
    if ((st = fe_in_dev_float(c, n, 0, &x, &xo))) return st;
    bool swap = axis != rank - 1;
    if (swap && (st = lmnn_permute(x, perm, (uint32_t)rank, NULL, &moved)))
        st = fe_nn_fail(c, n, st);
    if (!st) st = prefix_sums(c, n, swap ? moved : x, s, reverse, exclusive, &sums);
    if (!st && swap && (st = lmnn_permute(sums, perm, (uint32_t)rank, NULL, &r)))
        st = fe_nn_fail(c, n, st);
    if (!st && !swap) {
        r = sums;
        sums = (lmnn_tensor){0};
    }
    fe_free(sums);
    fe_free(moved);
    if (xo) fe_free(x);
    if (st) return st;
    return fe_out_from_float(c, n, 0, r);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

typedef enum { RED_NONE, RED_SUM, RED_MEAN } reduction;

static lm_status loss_params(fe_ctx *c, const fe_node *n, reduction *red, bool *has_ii,
                             int64_t *ii) {
    const char *r;
    lm_status st = fe_attr_string(c, n, "reduction", "mean", &r);
    if (st) return st;
    if (!strcmp(r, "none"))
        *red = RED_NONE;
    else if (!strcmp(r, "sum"))
        *red = RED_SUM;
    else if (!strcmp(r, "mean"))
        *red = RED_MEAN;
    else
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "reduction '%s' is not none, sum or mean", r);
    *has_ii = fe_node_attr(n, "ignore_index") != NULL;
    return fe_attr_int(c, n, "ignore_index", 0, ii);
}

static lm_status infer_loss(fe_ctx *c, const fe_node *n) {
    bool sce = !strcmp(n->op_type, "SoftmaxCrossEntropyLoss");
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"reduction", "ignore_index", NULL});
    reduction red;
    bool has_ii;
    int64_t ii;
    if (!st) st = loss_params(c, n, &red, &has_ii, &ii);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *t = fe_in_type(c, n, 1);
    if (!fe_elem_is_float(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input must be a float type, given %s",
                       fe_elem_name(x->elem));
    if (t->elem != FE_INT32 && t->elem != FE_INT64)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "target must be int32 or int64");
    if (x->rank < 2 || t->rank != x->rank - 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be [N, C, ...] and target [N, ...]");
    for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d] != x->dims[d ? d + 1 : 0])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "target's shape does not match the input's");
    const fe_type *w = fe_in_type(c, n, 2);
    if (w && (w->rank != 1 || w->dims[0] != x->dims[1] || w->elem != x->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "weight must be 1-D of the %lld classes",
                       (long long)x->dims[1]);
    if (red == RED_NONE)
        st = fe_set_out_type(c, n, 0, x->elem, t->rank, t->dims);
    else
        st = fe_set_out_type(c, n, 0, x->elem, 0, NULL);
    if (!st && sce && n->output_count > 1) st = fe_set_out_type(c, n, 1, x->elem, x->rank, x->dims);
    return st;
}

typedef struct loss_tensors {
    lmnn_tensor mask, safe_f, safe_i, safe_rm, idx, picked, w, wflat, wt, loss, denom;
} loss_tensors;

static void loss_free(loss_tensors *t) {
    lmnn_tensor *all = &t->mask;
    for (size_t i = 0; i < sizeof *t / sizeof *all; i++)
        fe_free(all[i]);
}

/* loss[n, d...] = -logp[n, target, d...] * weight[target], 0 where target is
 * ignore_index; then reduced. `logp` is [N, C, d...] float on the device. */
static lm_status nll(fe_ctx *c, const fe_node *n, lmnn_tensor logp, lmnn_tensor *out) {
    reduction red;
    bool has_ii;
    int64_t ii;
    lm_status st = loss_params(c, n, &red, &has_ii, &ii);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *tt = fe_in_type(c, n, 1);
    loss_tensors t = {0};
    lmnn_tensor target;
    bool to = false;
    if ((st = fe_in_dev_float(c, n, 1, &target, &to))) return st;
    int64_t udims[FE_MAX_RANK];
    for (int32_t d = 0, j = 0; d < x->rank; d++)
        udims[d] = d == 1 ? 1 : tt->dims[j++];
    lmnn_shape us = fe_shape(x->rank, udims), ts = fe_shape(tt->rank, tt->dims);
    int64_t count = fe_type_volume(tt);
    lmnn_shape flat = fe_shape(1, &count);
    /* The mask of counted positions, and targets made safe to index with. */
    if (has_ii) {
        st = lmnn_binary_scalar(LMNN_BINARY_NE, target, (double)ii, NULL, &t.mask);
    } else {
        lmnn_tensor_options o;
        lmnn_tensor_options_init(&o);
        o.dtype = LMNN_FLOAT32;
        st = lmnn_full(c->device, &ts, 1.0, &o, &t.mask);
    }
    if (!st) st = lmnn_binary(LMNN_BINARY_MUL, target, t.mask, NULL, &t.safe_f);
    if (!st) st = lmnn_typecast(t.safe_f, LMNN_INT32, &t.safe_i);
    if (!st) st = lmnn_to_layout(t.safe_i, LMNN_ROW_MAJOR, &t.safe_rm);
    if (!st) st = lmnn_reshape(t.safe_rm, &us, NULL, &t.idx);
    lmnn_tensor g = {0}, gs = {0};
    if (!st) st = lmnn_gather(logp, 1, t.idx, NULL, &g);
    if (!st) st = lmnn_reshape(g, &ts, NULL, &gs);
    fe_free(g);
    if (!st) st = lmnn_binary(LMNN_BINARY_MUL, gs, t.mask, NULL, &t.picked);
    fe_free(gs);
    /* Per-position weights (times the mask). */
    lmnn_tensor wm = t.mask;
    if (!st && fe_has_in(n, 2)) {
        lmnn_tensor w, idx_flat = {0}, sel = {0};
        if (!(st = fe_in_dev(c, n, 2, &w)) &&
            !(st = lmnn_reshape(t.safe_rm, &flat, NULL, &idx_flat)) &&
            !(st = lmnn_index_select(w, 0, idx_flat, NULL, &sel)) &&
            !(st = lmnn_reshape(sel, &ts, NULL, &t.wt)))
            st = lmnn_binary(LMNN_BINARY_MUL, t.wt, t.mask, NULL, &t.w);
        fe_free(idx_flat);
        fe_free(sel);
        wm = t.w;
    }
    /* loss = -picked * w */
    if (!st) st = lmnn_binary(LMNN_BINARY_MUL, t.picked, wm, NULL, &t.wflat);
    if (!st) st = lmnn_neg(t.wflat, &t.loss);
    if (!st && red == RED_NONE) {
        *out = t.loss;
        t.loss = (lmnn_tensor){0};
    } else if (!st) {
        lmnn_tensor sum = {0};
        st = lmnn_sum(t.loss, NULL, &sum);
        if (!st && red == RED_MEAN) {
            if (!(st = lmnn_sum(wm, NULL, &t.denom)))
                st = lmnn_binary(LMNN_BINARY_DIV, sum, t.denom, NULL, out);
            fe_free(sum);
        } else if (!st) {
            *out = sum;
        }
    }
    loss_free(&t);
    if (to) fe_free(target);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

static lm_status lower_nll(fe_ctx *c, const fe_node *n) {
    lmnn_tensor x, r;
    lm_status st = fe_in_dev(c, n, 0, &x);
    if (!st) st = nll(c, n, x, &r);
    if (st) return st;
    return fe_out_dev(c, n, 0, r);
}

static lm_status lower_sce(fe_ctx *c, const fe_node *n) {
    lmnn_tensor x, logp, r;
    lm_status st = fe_in_dev(c, n, 0, &x);
    if (st) return st;
    if ((st = lmnn_log_softmax(x, 1, NULL, &logp))) return fe_nn_fail(c, n, st);
    if ((st = nll(c, n, logp, &r))) {
        fe_free(logp);
        return st;
    }
    if ((st = fe_out_dev(c, n, 0, r))) {
        fe_free(logp);
        return st;
    }
    return fe_out_dev(c, n, 1, logp);
}

/* ---- Det: LU elimination with partial pivoting, on the device ----
 * Over a batch of M x M matrices at once, each of the M steps full-size
 * element-wise ops (no per-matrix work on the host): the pivot row is the
 * largest |a| at or below the diagonal (ArgMax), swapped in with one-hot
 * row masks (each swap flips the sign), the pivot multiplied into the
 * determinant, and the rows below reduced by it. A zero pivot (a singular
 * matrix) gives 0; division by it is avoided. */

#define DET_MAX 64 /* each step is a dozen launches */

static lm_status infer_det(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st)
        st = fe_check_elem(
            c, n, 0, (const fe_elem[]){FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED});
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be [*, M, M] (square matrices)");
    if (x->dims[x->rank - 1] > DET_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "matrices of %lld x %lld (at most %d x %d)",
                       (long long)x->dims[x->rank - 1], (long long)x->dims[x->rank - 1], DET_MAX,
                       DET_MAX);
    return fe_set_out_type(c, n, 0, x->elem, x->rank - 2, x->dims);
}

/* Host column [1, M, 1] with `on` where the row index r satisfies the
 * relation with k (-1: r < k, 0: r == k, 1: r > k, 2: r >= k, 3: r itself). */
static lm_status det_column(fe_ctx *c, const fe_node *n, uint32_t slot, int64_t m, int64_t k,
                            int rel, lmnn_tensor *out) {
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_FLOAT, 3, (int64_t[]){1, m, 1}, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (int64_t r = 0; r < m; r++) {
        double v = rel == 0 ? r == k : rel == 1 ? r > k : rel == 2 ? r >= k : (double)r;
        fe_tensor_set_f64(t, (uint64_t)r, v);
    }
    return fe_aux_f32(c, n, slot, t, out);
}

static lm_status lower_det(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t m = x->dims[x->rank - 1], b = 1;
    for (int32_t d = 0; d < x->rank - 2; d++)
        b *= x->dims[d];
    lmnn_tensor a, rows;
    lm_status st = fe_in_float_as(c, n, 0, 3, (int64_t[]){b, m, m}, &a);
    if (st) return st;
    if ((st = det_column(c, n, 0, m, 0, 3, &rows))) {
        fe_free(a);
        return st;
    }
    fe_work *w = calloc(1, sizeof *w);
    if (!w) {
        fe_free(a);
        return fe_fail(c, n, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    /* a and det (the product so far) are the loop's own, off the list. */
    lmnn_tensor det = {0}, t = {0};
    bool labeled = false; /* det_column's errors name the node already */
    lmnn_reduce_options arg, sum;
    lmnn_reduce_options_init(&arg);
    arg.dims[0] = 1;
    arg.dim_count = 1;
    arg.keepdim = true;
    sum = arg;
    arg.output.dtype = LMNN_INT32;
    for (int64_t k = 0; k < m && !w->st; k++) {
        uint32_t mark = w->count;
        lmnn_tensor ek, ge, below = {0};
        if ((w->st = det_column(c, n, 1 + 3 * (uint32_t)k, m, k, 0, &ek)) ||
            (w->st = det_column(c, n, 2 + 3 * (uint32_t)k, m, k, 2, &ge)) ||
            (k + 1 < m && (w->st = det_column(c, n, 3 + 3 * (uint32_t)k, m, k, 1, &below)))) {
            labeled = true;
            break;
        }
        int32_t cb[3] = {0, 0, (int32_t)k}, ce[3] = {(int32_t)b, (int32_t)m, (int32_t)k + 1};
        int32_t rb[3] = {0, (int32_t)k, 0}, re[3] = {(int32_t)b, (int32_t)k + 1, (int32_t)m};
        /* |column k| at or below the diagonal, -1 above: its ArgMax. */
        lmnn_tensor col = fe_work_slice(w, a, cb, ce, 3);
        lmnn_tensor masked =
            fe_work_binary(w, LMNN_BINARY_ADD,
                           fe_work_binary(w, LMNN_BINARY_MUL, fe_work_unary(w, lmnn_abs, col), ge),
                           fe_work_scalar(w, LMNN_BINARY_SUB, ge, 1.0));
        lmnn_tensor p = w->st ? t : fe_work_keep(w, lmnn_argmax(masked, &arg, &t), &t);
        lmnn_tensor pf = w->st ? t : fe_work_keep(w, lmnn_typecast(p, LMNN_FLOAT32, &t), &t);
        lmnn_tensor ep = fe_work_binary(w, LMNN_BINARY_EQ, rows, pf);
        /* Rows k and p swapped with 0/1 masks, every element one nonzero
         * term so the swap is exact: a keep + ek row_p + (ep - ek ep) row_k. */
        lmnn_tensor row_k = fe_work_slice(w, a, rb, re, 3);
        lmnn_tensor row_p =
            w->st ? t
                  : fe_work_keep(w, lmnn_sum(fe_work_binary(w, LMNN_BINARY_MUL, a, ep), &sum, &t),
                                 &t);
        lmnn_tensor epx =
            fe_work_binary(w, LMNN_BINARY_MUL, ep, fe_work_scalar(w, LMNN_BINARY_RSUB, ek, 1.0));
        lmnn_tensor keep =
            fe_work_binary(w, LMNN_BINARY_SUB, fe_work_scalar(w, LMNN_BINARY_RSUB, ek, 1.0), epx);
        lmnn_tensor swapped = fe_work_binary(
            w, LMNN_BINARY_ADD,
            fe_work_binary(w, LMNN_BINARY_ADD, fe_work_binary(w, LMNN_BINARY_MUL, a, keep),
                           fe_work_binary(w, LMNN_BINARY_MUL, ek, row_p)),
            fe_work_binary(w, LMNN_BINARY_MUL, epx, row_k));
        /* The sign: -1 when p != k. */
        lmnn_tensor sign =
            fe_work_scalar(w, LMNN_BINARY_RSUB,
                           fe_work_scalar(w, LMNN_BINARY_MUL,
                                          fe_work_scalar(w, LMNN_BINARY_NE, pf, (double)k), 2.0),
                           1.0);
        int32_t pb[3] = {0, (int32_t)k, (int32_t)k},
                pe[3] = {(int32_t)b, (int32_t)k + 1, (int32_t)k + 1};
        lmnn_tensor pivot = fe_work_slice(w, swapped, pb, pe, 3);
        lmnn_tensor step = fe_work_binary(w, LMNN_BINARY_MUL, pivot, sign);
        lmnn_tensor next_det = det.id ? fe_work_binary(w, LMNN_BINARY_MUL, det, step) : step;
        lmnn_tensor next_a = swapped;
        if (k + 1 < m) {
            /* Rows below: minus (a_rk / pivot) times the pivot row. */
            lmnn_tensor safe = fe_work_binary(w, LMNN_BINARY_ADD, pivot,
                                              fe_work_scalar(w, LMNN_BINARY_EQ, pivot, 0.0));
            lmnn_tensor f = fe_work_binary(
                w, LMNN_BINARY_MUL,
                fe_work_binary(w, LMNN_BINARY_DIV, fe_work_slice(w, swapped, cb, ce, 3), safe),
                below);
            next_a = fe_work_binary(
                w, LMNN_BINARY_SUB, swapped,
                fe_work_binary(w, LMNN_BINARY_MUL, f, fe_work_slice(w, swapped, rb, re, 3)));
        }
        if (w->st) break;
        /* The step's matrix and product move off the list; the rest of the
         * step, and the previous matrix and product, are freed. */
        for (uint32_t i = mark; i < w->count; i++)
            if (w->made[i].id == next_a.id || w->made[i].id == next_det.id)
                w->made[i] = (lmnn_tensor){0};
        fe_work_release(w, mark);
        fe_free(a);
        fe_free(det);
        a = next_a;
        det = next_det;
    }
    lmnn_tensor out = {0};
    if (!w->st) {
        lmnn_shape s = fe_shape(x->rank - 2, x->dims);
        w->st = lmnn_reshape(det, &s, NULL, &out);
    }
    st = w->st;
    fe_work_release(w, 0);
    free(w);
    fe_free(a);
    fe_free(det);
    if (st) return labeled ? st : fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, out);
}

const fe_op_def fe_ops_misc[] = {
    {"EyeLike", infer_eyelike, NULL, 0, NULL},
    {"Det", infer_det, lower_det, 0, NULL},
    {"HannWindow", infer_window, NULL, 1u << 0, NULL},
    {"HammingWindow", infer_window, NULL, 1u << 0, NULL},
    {"BlackmanWindow", infer_window, NULL, 1u << 0, NULL},
    {"OneHot", infer_onehot, lower_onehot, 1u << 1, NULL},
    {"CumSum", infer_cumsum, lower_cumsum, 1u << 1, NULL},
    {"NegativeLogLikelihoodLoss", infer_loss, lower_nll, 0, NULL},
    {"SoftmaxCrossEntropyLoss", infer_loss, lower_sce, 0, NULL},
};
const size_t fe_ops_misc_count = sizeof fe_ops_misc / sizeof fe_ops_misc[0];
