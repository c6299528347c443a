/* Reductions and the ops along one axis: ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
 * ReduceLogSumExp, ArgMax, ArgMin, Softmax, LogSoftmax, Hardmax.
 *
 * Each runs as the op library's reductions (lmnn_reduce.h) and softmax
 * (lmnn_norm.h), composed with unary and binary ops where ONNX's op is not
 * one library call (ReduceLogSumExp: max, exp, sum, log). Integer inputs go
 * through float32 like the element-wise ops (exact below 2^24).
 *
 * Opset differences honoured (n->opset):
 *   ReduceSum takes its axes as an input from 13, the other Reduce* from 18
 *   (before: the `axes` attribute); noop_with_empty_axes exists with the
 *   input form.
 *   Softmax, LogSoftmax and Hardmax before 13 coerce the input to 2-D at
 *   `axis` (default 1) and work on the flattened trailing dims; from 13 they
 *   work along the one dim `axis` (default -1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

/* ---- shared: float input and output ---- */

static const fe_elem float_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED};
static const fe_elem numeric_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16,  FE_BFLOAT16, FE_INT32,
                                        FE_INT64, FE_UINT32, FE_UINT64,   FE_INT8,     FE_UINT8,
                                        FE_INT16, FE_UINT16, FE_UNDEFINED};

/* Replaces *t (freeing it when *owned) by r. */
static void take(lmnn_tensor *t, bool *owned, lmnn_tensor r) {
    if (*owned) fe_free(*t);
    *t = r;
    *owned = true;
}

/* ---- Reduce* ---- */

typedef enum red_kind {
    R_SUM,
    R_MEAN,
    R_MAX,
    R_MIN,
    R_PROD,
    R_L1,
    R_L2,
    R_SUM_SQUARE,
    R_LOG_SUM,
    R_LOG_SUM_EXP,
} red_kind;

typedef struct red_desc {
    const char *name;
    red_kind kind;
    int64_t axes_input_opset; /* from this opset on, axes is input 1 */
    bool ints;                /* integer inputs accepted */
} red_desc;

static const red_desc red_ops[] = {
    {"ReduceSum", R_SUM, 13, true},         {"ReduceMean", R_MEAN, 18, false},
    {"ReduceMax", R_MAX, 18, true},         {"ReduceMin", R_MIN, 18, true},
    {"ReduceProd", R_PROD, 18, true},       {"ReduceL1", R_L1, 18, true},
    {"ReduceL2", R_L2, 18, false},          {"ReduceSumSquare", R_SUM_SQUARE, 18, true},
    {"ReduceLogSum", R_LOG_SUM, 18, false}, {"ReduceLogSumExp", R_LOG_SUM_EXP, 18, false},
};

static const red_desc *red_find(const char *name) {
    for (size_t i = 0; i < sizeof red_ops / sizeof red_ops[0]; i++)
        if (strcmp(red_ops[i].name, name) == 0) return &red_ops[i];
    return NULL;
}

/* What a Reduce* node does: the dims (bit mask), keepdims, or a no-op. */
typedef struct red_plan {
    uint32_t mask;
    bool keepdims;
    bool noop;
} red_plan;

static lm_status red_read(fe_ctx *c, const fe_node *n, const red_desc *d, red_plan *p) {
    const fe_type *t = fe_in_type(c, n, 0);
    bool axes_input = n->opset >= d->axes_input_opset;
    int64_t keepdims, noop = 0;
    lm_status st = fe_attr_int(c, n, "keepdims", 1, &keepdims);
    if (!st && axes_input) st = fe_attr_int(c, n, "noop_with_empty_axes", 0, &noop);
    if (st) return st;
    int64_t axes[FE_MAX_RANK];
    size_t count = 0;
    if (axes_input) {
        if (fe_has_in(n, 1)) {
            const fe_tensor *k;
            if ((st = fe_in_const_required(c, n, 1, &k))) return st;
            if (k->rank > 1 || !fe_elem_is_int(k->elem))
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "axes must be a 1-D integer tensor");
            if (k->count > (uint64_t)(t->rank ? t->rank : 1))
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "axes has %llu entries for rank %d",
                               (unsigned long long)k->count, t->rank);
            for (uint64_t i = 0; i < k->count; i++)
                axes[count++] = fe_tensor_get_i64(k, i);
        }
    } else {
        const int64_t *a;
        size_t na;
        if ((st = fe_attr_ints(c, n, "axes", &a, &na))) return st;
        if (na > (size_t)(t->rank ? t->rank : 1))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "axes has %zu entries for rank %d", na,
                           t->rank);
        for (size_t i = 0; i < na; i++)
            axes[count++] = a[i];
    }
    p->keepdims = keepdims != 0;
    p->noop = false;
    p->mask = 0;
    if (count == 0) {
        if (noop)
            p->noop = true;
        else
            p->mask = t->rank ? (1u << t->rank) - 1 : 0;
        return LM_OK;
    }
    for (size_t i = 0; i < count; i++) {
        int32_t ax;
        if ((st = fe_axis(c, n, axes[i], t->rank, &ax))) return st;
        if (p->mask & (1u << ax))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %lld is given twice",
                           (long long)axes[i]);
        p->mask |= 1u << ax;
    }
    return LM_OK;
}

bool fe_mean_over_last_dim(fe_ctx *c, const fe_node *n) {
    red_plan p;
    const fe_type *t = fe_in_type(c, n, 0);
    if (strcmp(n->op_type, "ReduceMean") || !t || t->rank < 1) return false;
    /* red_read's errors are the node's own, reported when it lowers. */
    lm_status st = red_read(c, n, red_find("ReduceMean"), &p);
    if (st) {
        err_clear();
        return false;
    }
    return !p.noop && p.keepdims && p.mask == 1u << (t->rank - 1);
}

lm_status fe_lower_spelled_norm(fe_ctx *c, const fe_node *n, const fe_fusion *f) {
    lmnn_tensor a, w = {0}, b = {0}, r;
    lm_status st = fe_in_dev(c, n, 0, &a);
    if (!st && f->weight) st = fe_aux(c, n, 0, f->weight, LMNN_TILE, &w);
    if (!st && f->bias) st = fe_aux(c, n, 1, f->bias, LMNN_TILE, &b);
    if (st) return st;
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.eps = f->eps;
    o.normalized_dims = 1;
    st = f->rms_norm ? lmnn_rms_norm(a, w, &o, &r) : lmnn_layer_norm(a, w, b, &o, &r);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* Folds a Reduce* of a constant on the host (shape arithmetic such as
 * ReduceProd of a Shape decides later shapes, so it must be known at
 * compile time): double math for floats, int64 for integers (exact). */
static lm_status fold_reduce(fe_ctx *c, const fe_node *n, const red_desc *d, const red_plan *p,
                             const fe_tensor *k, int32_t rank, const int64_t *dims) {
    fe_elem elem = k->elem;
    bool ints = !fe_elem_is_float(elem);
    fe_tensor *o;
    lm_status st = fe_const_new(c, elem, (uint32_t)rank, dims, &o);
    if (st) return fe_nn_fail(c, n, st);
    uint64_t on = o->count;
    double *acc = calloc(on ? on : 1, sizeof *acc), *mx = NULL;
    int64_t *iacc = calloc(on ? on : 1, sizeof *iacc);
    bool *seen = calloc(on ? on : 1, sizeof *seen);
    if (d->kind == R_LOG_SUM_EXP) mx = calloc(on ? on : 1, sizeof *mx);
    if (!acc || !iacc || !seen || (d->kind == R_LOG_SUM_EXP && !mx)) {
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        goto done;
    }
    /* Output index of each input element: the kept dims' coordinates. */
    for (int pass = d->kind == R_LOG_SUM_EXP ? 0 : 1; pass < 2; pass++) {
        for (uint64_t i = 0; i < k->count; i++) {
            uint64_t rem = i, oi = 0, stride = 1;
            for (int32_t dd = (int32_t)k->rank - 1; dd >= 0; dd--) {
                uint64_t dim = (uint64_t)k->dims[dd], coord = rem % dim;
                rem /= dim;
                if (p->mask & (1u << dd)) continue;
                oi += coord * stride;
                stride *= dim;
            }
            double x = fe_tensor_get_f64(k, i);
            int64_t xi = ints ? fe_tensor_get_i64(k, i) : 0;
            bool first = !seen[oi];
            seen[oi] = true;
            if (pass == 0) { /* LogSumExp: the max first */
                mx[oi] = first || x > mx[oi] ? x : mx[oi];
                continue;
            }
            switch (d->kind) {
            case R_SUM:
            case R_MEAN:
            case R_LOG_SUM:
                acc[oi] += x;
                iacc[oi] += xi;
                break;
            case R_MAX:
                if (first || x > acc[oi] || isnan(x)) acc[oi] = x;
                if (first || xi > iacc[oi]) iacc[oi] = xi;
                break;
            case R_MIN:
                if (first || x < acc[oi] || isnan(x)) acc[oi] = x;
                if (first || xi < iacc[oi]) iacc[oi] = xi;
                break;
            case R_PROD:
                acc[oi] = first ? x : acc[oi] * x;
                iacc[oi] = first ? xi : (int64_t)((uint64_t)iacc[oi] * (uint64_t)xi);
                break;
            case R_L1:
                acc[oi] += fabs(x);
                iacc[oi] += xi < 0 ? -xi : xi;
                break;
            case R_L2:
            case R_SUM_SQUARE:
                acc[oi] += x * x;
                iacc[oi] += xi * xi;
                break;
            case R_LOG_SUM_EXP: /* an infinite max shifts nothing (inf - inf is NaN) */
                acc[oi] += exp(x - (isfinite(mx[oi]) ? mx[oi] : 0));
                break;
            }
        }
        if (pass == 0) memset(seen, 0, (on ? on : 1) * sizeof *seen);
    }
    uint64_t per = on ? k->count / on : 0;
    /* Nothing reduced (an empty input): the operation's identity, as ONNX
     * says — 1 for a product, -inf / +inf for a float max / min. */
    if (!per && on) {
        if (ints && (d->kind == R_MAX || d->kind == R_MIN || d->kind == R_MEAN)) {
            st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                         "an integer %s of an empty tensor (nothing to reduce) is not supported",
                         d->kind == R_MEAN  ? "mean"
                         : d->kind == R_MAX ? "max"
                                            : "min");
            goto done;
        }
        for (uint64_t i = 0; i < on; i++) {
            acc[i] = d->kind == R_PROD  ? 1.0
                     : d->kind == R_MAX ? -INFINITY
                     : d->kind == R_MIN ? INFINITY
                                        : 0.0;
            iacc[i] = d->kind == R_PROD;
        }
    }
    for (uint64_t i = 0; i < on; i++) {
        if (ints && d->kind != R_MEAN) {
            fe_tensor_set_i64(o, i, iacc[i]);
            continue;
        }
        double v = acc[i];
        switch (d->kind) {
        case R_MEAN:
            v = (ints ? (double)iacc[i] : v) / (double)per;
            break;
        case R_L2:
            v = sqrt(v);
            break;
        case R_LOG_SUM:
            v = log(v);
            break;
        case R_LOG_SUM_EXP:
            v = (isfinite(mx[i]) ? mx[i] : 0) + log(v);
            break;
        default:
            break;
        }
        fe_tensor_set_f64(o, i, v);
    }
    st = fe_set_out_const(c, n, 0, o);
done:
    free(acc);
    free(iacc);
    free(seen);
    free(mx);
    return st;
}

static lm_status infer_reduce(fe_ctx *c, const fe_node *n) {
    const red_desc *d = red_find(n->op_type);
    bool axes_input = n->opset >= d->axes_input_opset;
    lm_status st = fe_check_inputs(c, n, 1, axes_input ? 2 : 1);
    if (!st)
        st = fe_check_attrs(c, n,
                            axes_input
                                ? (const char *const[]){"keepdims", "noop_with_empty_axes", NULL}
                                : (const char *const[]){"axes", "keepdims", NULL});
    if (!st) st = fe_check_elem(c, n, 0, d->ints ? numeric_types : float_types);
    red_plan p;
    if (!st) st = red_read(c, n, d, &p);
    if (st) return st;
    const fe_type *t = fe_in_type(c, n, 0);
    if (p.noop) {
        if (fe_in_const(c, n, 0)) return fe_set_out_const(c, n, 0, fe_in_const(c, n, 0));
        return fe_set_out_type(c, n, 0, t->elem, t->rank, t->dims);
    }
    int64_t dims[FE_MAX_RANK];
    int32_t rank = 0;
    for (int32_t i = 0; i < t->rank; i++) {
        if (!(p.mask & (1u << i)))
            dims[rank++] = t->dims[i];
        else if (p.keepdims)
            dims[rank++] = 1;
    }
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k && k->count <= (1u << 20)) return fold_reduce(c, n, d, &p, k, rank, dims);
    return fe_set_out_type(c, n, 0, t->elem, rank, dims);
}

/* Whether plan p reduces float value t over exactly dims 2 and 3 of 4. */
static bool spatial(const fe_type *t, const red_plan *p) {
    return t->rank == 4 && fe_elem_is_float(t->elem) && p->mask == (1u << 2 | 1u << 3);
}

static lm_status lower_reduce(fe_ctx *c, const fe_node *n) {
    const fe_fusion *f = &c->plans[n - c->g->nodes].fusion;
    if (f->layer_norm) return fe_lower_spelled_norm(c, n, f);
    const red_desc *d = red_find(n->op_type);
    red_plan p;
    lm_status st = red_read(c, n, d, &p);
    if (st) return st;
    if (p.noop) return fe_out_alias(c, n, 0, 0);
    lmnn_tensor x, r = {0};
    bool owned, flat = false;
    const fe_type *t = fe_in_type(c, n, 0);
    if (spatial(t, &p) && (st = fe_in_image(c, n, 0, &x, &flat))) return st;
    if (flat) {
        /* A flat image as [1, N, H * W, C]: its pixels reduced, kept as a
         * dim of 1, give [1, N, 1, C], the output's elements in order. */
        lmnn_shape s = LMNN_SHAPE(1, (uint32_t)t->dims[0], (uint32_t)(t->dims[2] * t->dims[3]),
                                  (uint32_t)t->dims[1]);
        if ((st = fe_image_tiles(c, n, x, &s, &x, &owned))) return st;
        p.mask = 1u << 2;
        p.keepdims = true;
    } else if ((st = fe_in_dev_float(c, n, 0, &x, &owned))) {
        return st;
    }
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dim_mask = p.mask;
    o.keepdim = p.keepdims;
    switch (d->kind) {
    case R_SUM:
        st = lmnn_sum(x, &o, &r);
        break;
    case R_MEAN:
        st = lmnn_mean(x, &o, &r);
        break;
    case R_MAX:
        st = lmnn_max(x, &o, &r);
        break;
    case R_MIN:
        st = lmnn_min(x, &o, &r);
        break;
    case R_PROD:
        st = lmnn_prod(x, &o, &r);
        break;
    case R_L1:
        st = lmnn_norm(x, 1.0, &o, &r);
        break;
    case R_L2:
        st = lmnn_norm(x, 2.0, &o, &r);
        break;
    case R_SUM_SQUARE:
        if (!(st = lmnn_square(x, &r))) {
            take(&x, &owned, r);
            st = lmnn_sum(x, &o, &r);
        }
        break;
    case R_LOG_SUM:
        if (!(st = lmnn_sum(x, &o, &r))) {
            take(&x, &owned, r);
            st = lmnn_log(x, &r);
        }
        break;
    case R_LOG_SUM_EXP: {
        /* m + log(sum(exp(x - m))) with m the max over the same dims (kept
         * as size-1 dims to broadcast), so large inputs do not overflow.
         * An infinite max is clamped to the largest finite bfloat16 (also a
         * float32), since inf - inf would be NaN: an all -inf slice then
         * gives log(0) + m = -inf, and one holding +inf gives +inf, as
         * log(sum(exp(x))) does. */
        lmnn_reduce_options ok = o;
        ok.keepdim = true;
        lmnn_tensor m = {0}, e = {0}, s = {0}, mk = {0}, raw = {0};
        const double top = 0x1.fep127;
        if (!(st = lmnn_max(x, &ok, &raw)) && !(st = lmnn_clamp(raw, -top, top, &m)) &&
            !(st = lmnn_binary(LMNN_BINARY_SUB, x, m, NULL, &e))) {
            take(&x, &owned, e);
            if (!(st = lmnn_exp(x, &e))) {
                take(&x, &owned, e);
                if (!(st = lmnn_sum(x, &o, &s))) {
                    take(&x, &owned, s);
                    if (!(st = lmnn_log(x, &s))) {
                        take(&x, &owned, s);
                        /* m in the output's shape. */
                        if (p.keepdims) {
                            mk = m;
                            m = (lmnn_tensor){0};
                        } else {
                            lmnn_tensor_info info;
                            if (!(st = lmnn_tensor_get_info(x, &info)))
                                st = lmnn_reshape(m, &info.shape, NULL, &mk);
                        }
                        if (!st) st = lmnn_binary(LMNN_BINARY_ADD, x, mk, NULL, &r);
                    }
                }
            }
        }
        fe_free(raw);
        fe_free(m);
        fe_free(mk);
        break;
    }
    }
    if (owned) fe_free(x);
    if (!st && flat) {
        const fe_type *out = &c->g->values[n->outputs[0]].type;
        lmnn_shape s = fe_shape(out->rank, out->dims);
        if ((st = fe_reshape_owned(c, n, r, &s, &r))) return st;
    }
    if (st) {
        fe_free(r);
        return fe_nn_fail(c, n, st);
    }
    return fe_out_from_float(c, n, 0, r);
}

/* A reduction of a rank-4 float value over its H and W (a mean over the
 * pixels before a classifier) reads a flat image. */
static uint32_t reduce_images(fe_ctx *c, const fe_node *n) {
    const red_desc *d = red_find(n->op_type);
    red_plan p;
    if (!d || red_read(c, n, d, &p) || p.noop || !spatial(fe_in_type(c, n, 0), &p)) return 0;
    return c->plans[n - c->g->nodes].fusion.layer_norm ? 0 : FE_IMAGE_IN | FE_TILES_IN;
}

/* A layer normalization spelled out after a ReduceMean (fe_fusion.layer_norm)
 * works along the last dim: it reads channels-last rows held flat
 * (FE_LAST_ALL); any other reduction, images as above. */
static uint32_t reduce_forms(fe_ctx *c, const fe_node *n) {
    if (c->plans[n - c->g->nodes].fusion.layer_norm) return FE_LAST_ALL;
    return reduce_images(c, n);
}

/* ---- ArgMax, ArgMin ---- */

static lm_status infer_arg(fe_ctx *c, const fe_node *n) {
    int64_t axis, keepdims, last;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"axis", "keepdims", "select_last_index", NULL});
    if (!st) st = fe_check_elem(c, n, 0, numeric_types);
    if (!st) st = fe_attr_int(c, n, "axis", 0, &axis);
    if (!st) st = fe_attr_int(c, n, "keepdims", 1, &keepdims);
    if (!st) st = fe_attr_int(c, n, "select_last_index", 0, &last);
    const fe_type *t = fe_in_type(c, n, 0);
    int32_t ax;
    if (!st) st = fe_axis(c, n, axis, t->rank, &ax);
    if (st) return st;
    if (t->rank == 0 || fe_type_volume(t) == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "ArgMax/ArgMin of a %s tensor is not supported",
                       t->rank == 0 ? "rank-0" : "empty");
    if (t->dims[ax] > (INT64_C(1) << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "more than 2^24 elements along the axis are not supported");
    int64_t dims[FE_MAX_RANK];
    int32_t rank = 0;
    for (int32_t i = 0; i < t->rank; i++) {
        if (i != ax)
            dims[rank++] = t->dims[i];
        else if (keepdims)
            dims[rank++] = 1;
    }
    return fe_set_out_type(c, n, 0, FE_INT64, rank, dims);
}

static uint64_t cache_key(uint32_t kind, uint32_t a, uint32_t b, uint32_t cc) {
    return ((uint64_t)kind << 56) | ((uint64_t)(a & 0xffffffu) << 32) |
           ((uint64_t)(b & 0xffffu) << 16) | (cc & 0xffffu);
}

/* A row-major int32 index tensor [len] holding len-1 .. 0 (a flip along a dim
 * by lmnn_index_select), made once per compile. */
static lm_status reverse_index(fe_ctx *c, const fe_node *n, uint32_t len, lmnn_tensor *out) {
    uint64_t key = cache_key(1, len, 0, 0);
    if (fe_cache_get(c, key, out)) return LM_OK;
    int32_t *idx = malloc((size_t)len * sizeof *idx);
    if (!idx) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < len; i++)
        idx[i] = (int32_t)(len - 1 - i);
    lmnn_shape s = LMNN_SHAPE(len);
    lm_status st = fe_cache_upload(c, n, key, &s, idx, (size_t)len * sizeof *idx, LMNN_INT32,
                                   LMNN_ROW_MAJOR, out);
    free(idx);
    return st;
}

static lm_status lower_arg(fe_ctx *c, const fe_node *n) {
    bool is_max = strcmp(n->op_type, "ArgMax") == 0;
    int64_t axis, keepdims, last;
    const fe_type *t = fe_in_type(c, n, 0);
    int32_t ax;
    lm_status st = fe_attr_int(c, n, "axis", 0, &axis);
    if (!st) st = fe_attr_int(c, n, "keepdims", 1, &keepdims);
    if (!st) st = fe_attr_int(c, n, "select_last_index", 0, &last);
    if (!st) st = fe_axis(c, n, axis, t->rank, &ax);
    if (st) return st;
    lmnn_tensor x, r = {0};
    bool owned;
    if ((st = fe_in_dev_float(c, n, 0, &x, &owned))) return st;
    uint32_t len = (uint32_t)t->dims[ax];
    if (last && len > 1) {
        /* The last extreme is the first one of the input flipped along the
         * axis: index = len - 1 - argmax(flipped). */
        lmnn_tensor rev, f;
        if (!(st = reverse_index(c, n, len, &rev)) &&
            !(st = lmnn_index_select(x, ax, rev, NULL, &f)))
            take(&x, &owned, f);
        if (st) {
            if (owned) fe_free(x);
            return fe_nn_fail(c, n, st);
        }
    }
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = ax;
    o.dim_count = 1;
    o.keepdim = keepdims != 0;
    bool flip = last && len > 1;
    if (!flip) o.output.dtype = LMNN_INT32;
    st = is_max ? lmnn_argmax(x, &o, &r) : lmnn_argmin(x, &o, &r);
    if (owned) fe_free(x);
    if (st) return fe_nn_fail(c, n, st);
    if (flip) {
        lmnn_tensor f, g, h;
        st = lmnn_typecast(r, LMNN_FLOAT32, &f);
        fe_free(r);
        if (st) return fe_nn_fail(c, n, st);
        st = lmnn_binary_scalar(LMNN_BINARY_RSUB, f, (double)(len - 1), NULL, &g);
        fe_free(f);
        if (st) return fe_nn_fail(c, n, st);
        st = lmnn_typecast(g, LMNN_INT32, &h);
        fe_free(g);
        if (st) return fe_nn_fail(c, n, st);
        r = h;
    }
    return fe_out_dev(c, n, 0, r);
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

/* The dim the op works along and, before opset 13, the 2-D shape the input
 * is coerced to (coerce true). */
typedef struct axis_plan {
    int32_t axis;
    bool coerce;
    int64_t outer, inner;
} axis_plan;

static lm_status axis_read(fe_ctx *c, const fe_node *n, axis_plan *p) {
    const fe_type *t = fe_in_type(c, n, 0);
    bool old = n->opset < 13;
    int64_t axis;
    lm_status st = fe_attr_int(c, n, "axis", old ? 1 : -1, &axis);
    if (st) return st;
    if ((st = fe_axis(c, n, axis, t->rank ? t->rank : 1, &p->axis))) return st;
    p->coerce = false;
    p->outer = p->inner = 1;
    if (old) {
        for (int32_t i = 0; i < t->rank; i++) {
            if (i < p->axis)
                p->outer *= t->dims[i];
            else
                p->inner *= t->dims[i];
        }
        /* Along the last dim the 2-D form is the op itself. */
        p->coerce = p->axis != t->rank - 1;
    }
    return LM_OK;
}

bool fe_reduce_dims(fe_ctx *c, const fe_node *n, uint32_t *out_mask, bool *out_keepdims,
                    lm_status *out_st) {
    const fe_type *t = fe_in_type(c, n, 0);
    const red_desc *d = red_find(n->op_type);
    bool arg = !strcmp(n->op_type, "ArgMax") || !strcmp(n->op_type, "ArgMin");
    bool softmax = !strcmp(n->op_type, "Softmax") || !strcmp(n->op_type, "LogSoftmax") ||
                   !strcmp(n->op_type, "Hardmax");
    *out_st = LM_OK;
    *out_mask = 0;
    *out_keepdims = true;
    if ((!d && !arg && !softmax) || !t || t->rank < 0) return false;
    if (d) {
        red_plan p;
        if ((*out_st = red_read(c, n, d, &p))) return true;
        *out_mask = p.noop ? 0 : p.mask;
        *out_keepdims = p.keepdims || p.noop;
    } else if (arg) {
        int64_t axis, keepdims;
        int32_t ax;
        if (!(*out_st = fe_attr_int(c, n, "axis", 0, &axis)) &&
            !(*out_st = fe_attr_int(c, n, "keepdims", 1, &keepdims)) &&
            !(*out_st = fe_axis(c, n, axis, t->rank, &ax))) {
            *out_mask = 1u << ax;
            *out_keepdims = keepdims != 0;
        }
    } else {
        axis_plan p;
        if ((*out_st = axis_read(c, n, &p))) return true;
        /* Before opset 13 the op works on the dims from the axis on, as one. */
        *out_mask = n->opset < 13 ? (1u << t->rank) - (1u << p.axis) : 1u << p.axis;
    }
    return true;
}

static lm_status infer_softmax(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    axis_plan p;
    if (!st) st = axis_read(c, n, &p);
    if (st) return st;
    const fe_type *t = fe_in_type(c, n, 0);
    if (t->rank == 0 || fe_type_volume(t) == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "a %s input is not supported",
                       t->rank == 0 ? "rank-0" : "empty");
    return fe_set_out_type(c, n, 0, t->elem, t->rank, t->dims);
}

/* The one-hot of the first maximum along `dim` of x (float tile): 1.0 where
 * x's index along dim is argmax's. */
static lm_status hardmax(fe_ctx *c, const fe_node *n, lmnn_tensor x, int32_t dim,
                         lmnn_tensor *out) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(x, &info);
    if (st) return st;
    uint32_t rank = info.shape.rank, len = info.shape.dims[dim];
    /* iota [1, .., len, .., 1] as float, once per compile. */
    uint64_t key = cache_key(2, len, (uint32_t)dim, rank);
    lmnn_tensor iota;
    if (!fe_cache_get(c, key, &iota)) {
        float *v = malloc((size_t)len * sizeof *v);
        if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint32_t i = 0; i < len; i++)
            v[i] = (float)i;
        lmnn_shape s = {.rank = rank};
        for (uint32_t d = 0; d < rank; d++)
            s.dims[d] = (int32_t)d == dim ? len : 1;
        st = fe_cache_upload(c, n, key, &s, v, (size_t)len * sizeof *v, LMNN_FLOAT32, LMNN_TILE,
                             &iota);
        free(v);
        if (st) return st;
    }
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = dim;
    o.dim_count = 1;
    o.keepdim = true;
    lmnn_tensor am, amf;
    if ((st = lmnn_argmax(x, &o, &am))) return st;
    st = lmnn_typecast(am, LMNN_FLOAT32, &amf);
    fe_free(am);
    if (st) return st;
    lmnn_binary_options bo;
    lmnn_binary_options_init(&bo);
    bo.output.dtype = info.dtype;
    st = lmnn_binary(LMNN_BINARY_EQ, iota, amf, &bo, out);
    fe_free(amf);
    return st;
}

static lm_status lower_softmax(fe_ctx *c, const fe_node *n) {
    const fe_type *t = fe_in_type(c, n, 0);
    axis_plan p;
    lm_status st = axis_read(c, n, &p);
    if (st) return st;
    lmnn_tensor x, r = {0};
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    bool owned = false;
    int32_t dim = p.axis;
    if (p.coerce) {
        lmnn_shape s = LMNN_SHAPE((uint32_t)p.outer, (uint32_t)p.inner);
        lmnn_tensor f;
        if ((st = lmnn_reshape(x, &s, NULL, &f))) return fe_nn_fail(c, n, st);
        take(&x, &owned, f);
        dim = 1;
    }
    if (!strcmp(n->op_type, "Softmax"))
        st = lmnn_softmax(x, dim, NULL, &r);
    else if (!strcmp(n->op_type, "LogSoftmax"))
        st = lmnn_log_softmax(x, dim, NULL, &r);
    else
        st = hardmax(c, n, x, dim, &r);
    if (owned) fe_free(x);
    if (!st && p.coerce) {
        lmnn_shape s = fe_shape(t->rank, t->dims);
        lmnn_tensor f;
        st = lmnn_reshape(r, &s, NULL, &f);
        fe_free(r);
        r = f;
    }
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

#define RED(name)                                                                                  \
    { name, infer_reduce, lower_reduce, 2u, reduce_forms }

/* ---- TopK ----
 *
 * lmnn_topk: one program selecting each row's k best (ties to the lower
 * index, as ONNX orders them; NaN above every number, as PyTorch), sorted
 * either way. Integers compare as integers. */

enum { TOPK_MAX = 32768 }; /* lmnn_topk's: the k best of a row stay in L1 */

static lm_status topk_args(fe_ctx *c, const fe_node *n, int32_t *axis, int64_t *k, bool *largest) {
    int64_t a, l, sorted;
    lm_status st = fe_attr_int(c, n, "axis", -1, &a);
    if (!st) st = fe_attr_int(c, n, "largest", 1, &l);
    if (!st) st = fe_attr_int(c, n, "sorted", 1, &sorted);
    const fe_type *x = fe_in_type(c, n, 0);
    if (!st) st = fe_axis(c, n, a, x->rank, axis);
    if (st) return st;
    *largest = l != 0;
    if (n->opset < 10) {
        if ((st = fe_attr_int(c, n, "k", -1, k))) return st;
    } else {
        const fe_tensor *kt;
        if ((st = fe_in_const_required(c, n, 1, &kt))) return st;
        if (kt->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "K must be one value");
        *k = fe_tensor_get_i64(kt, 0);
    }
    int64_t dim = x->dims[*axis];
    if (*k < 0 || *k > dim)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "k = %lld for a dim of %lld", (long long)*k,
                       (long long)dim);
    /* k = 0: both outputs are empty, constants that need no lowering. */
    if (*k > TOPK_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "k = %lld (at most %d: the k best of a row stay in one core's L1)",
                       (long long)*k, TOPK_MAX);
    return LM_OK;
}

static lm_status infer_topk(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, n->opset < 10 ? 1 : 2, n->opset < 10 ? 1 : 2);
    if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){"axis", "k", "largest", "sorted", NULL});
    int32_t axis;
    int64_t k;
    bool largest;
    if (!st) st = topk_args(c, n, &axis, &k, &largest);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (!fe_elem_is_numeric(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X must be a number tensor");
    int64_t dims[FE_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = k;
    if (n->output_count != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%u outputs (2 expected)", n->output_count);
    st = fe_set_out_type(c, n, 0, x->elem, x->rank, dims);
    if (!st) st = fe_set_out_type(c, n, 1, FE_INT64, x->rank, dims);
    return st;
}

static lm_status lower_topk(fe_ctx *c, const fe_node *n) {
    int32_t axis;
    int64_t k;
    bool largest;
    lm_status st = topk_args(c, n, &axis, &k, &largest);
    if (st) return st;
    lmnn_tensor x, v, i;
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    lmnn_topk_options o;
    lmnn_topk_options_init(&o);
    o.smallest = !largest;
    if ((st = lmnn_topk(x, (uint32_t)k, axis, &o, &v, &i))) return fe_nn_fail(c, n, st);
    if ((st = fe_out_dev(c, n, 0, v))) {
        fe_free(i);
        return st;
    }
    return fe_out_dev(c, n, 1, i);
}

const fe_op_def fe_ops_reduce[] = {
    RED("ReduceSum"),
    RED("ReduceMean"),
    RED("ReduceMax"),
    RED("ReduceMin"),
    RED("ReduceProd"),
    RED("ReduceL1"),
    RED("ReduceL2"),
    RED("ReduceSumSquare"),
    RED("ReduceLogSum"),
    RED("ReduceLogSumExp"),
    {"ArgMax", infer_arg, lower_arg, 0, NULL},
    {"ArgMin", infer_arg, lower_arg, 0, NULL},
    {"Softmax", infer_softmax, lower_softmax, 0, NULL},
    {"LogSoftmax", infer_softmax, lower_softmax, 0, NULL},
    {"Hardmax", infer_softmax, lower_softmax, 0, NULL},
    /* Input 1 (K) decides the output's shape. */
    {"TopK", infer_topk, lower_topk, 1u << 1, NULL},
};
const size_t fe_ops_reduce_count = sizeof fe_ops_reduce / sizeof fe_ops_reduce[0];
