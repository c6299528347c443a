/* Shapes and data movement: Constant, Shape, Size, ConstantOfShape, Range,
 * Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Slice, Gather,
 * GatherElements, Expand, Tile, Split, Pad.
 *
 * Everything that decides a shape must be known at compile time (the
 * `value_inputs` of each op), as a constant or through folding; the data
 * itself moves on the device. With constant inputs each folds on the host.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

static lm_status no_attrs(fe_ctx *c, const fe_node *n) {
    return fe_check_attrs(c, n, (const char *const[]){NULL});
}

/* A constant holding `t`'s elements in a new shape (no copy). */
static lm_status const_view(fe_ctx *c, const fe_node *n, const fe_tensor *t, int32_t rank,
                            const int64_t *dims) {
    fe_tensor *v = fe_arena_alloc(&c->g->arena, sizeof *v);
    if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    *v = *t;
    v->rank = (uint32_t)rank;
    for (int32_t d = 0; d < rank; d++)
        v->dims[d] = dims[d];
    return fe_set_out_const(c, n, 0, v);
}

static lm_status i64_vector(fe_ctx *c, const fe_node *n, const int64_t *vals, int64_t count) {
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_INT64, 1, &count, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, (uint64_t)i, vals[i]);
    return fe_set_out_const(c, n, 0, t);
}

/* The reshape of a value computed at run time: a view of it where the pages
 * keep their order (lmnn_reshape), else the device copies. */
static lm_status lower_reshape_to_out(fe_ctx *c, const fe_node *n) {
    const fe_plan *plan = &c->plans[n - c->g->nodes];
    lmnn_tensor a, r;
    int32_t perm[FE_MAX_RANK];
    lm_status st;
    if (plan->fusion.group_norm) return fe_lower_group_norm(c, n);
    lmnn_shape s =
        fe_shape(c->g->values[n->outputs[0]].type.rank, c->g->values[n->outputs[0]].type.dims);
    /* Held as rows (a Flatten after a row-wise scatter): reshaped from them,
     * a view when they are the new shape. */
    lmnn_tensor rows = fe_in_rows(c, n, 0, NULL);
    if (rows.id && !plan->fusion.step_count && !plan->nhwc_out) {
        if ((st = lmnn_reshape(rows, &s, NULL, &r))) return fe_nn_fail(c, n, st);
        return fe_out_dev(c, n, 0, r);
    }
    /* With transposes fused, or a permutation not yet made: one pass. */
    if (plan->fusion.step_count ||
        (!plan->nhwc_out && !plan->nhwc_rows && fe_in_permuted(c, n, 0, &a, perm)))
        return fe_lower_regroup(c, n);
    bool flat;
    if ((st = fe_in_image(c, n, 0, &a, &flat))) return st;
    /* An image goes to NCHW order and the new shape in one transpose, or,
     * flattened for readers that take its own order, to the new shape. */
    if (flat && plan->nhwc_rows) {
        if ((st = lmnn_reshape(a, &s, NULL, &r))) return fe_nn_fail(c, n, st);
    } else if (flat) {
        const fe_type *x = fe_in_type(c, n, 0);
        if ((st = fe_image_nchw(c, n, a, x->rank, x->dims, &s, &r))) return st;
    } else if ((st = lmnn_reshape(a, &s, NULL, &r))) {
        return fe_nn_fail(c, n, st);
    }
    return fe_out_dev(c, n, 0, r);
}

/* A reshape of a rank-4 value reads it as a flat NHWC image; one to
 * [N, C * H * W] can keep the image's order (FE_ROWS_OUT). */
static uint32_t reshape_images(fe_ctx *c, const fe_node *n) {
    const fe_fusion *f = &c->plans[n - c->g->nodes].fusion;
    if (f->group_norm) return fe_group_norm_images(c, n);
    if (f->step_count) return fe_regroup_images(c, n);
    const fe_type *x = fe_in_type(c, n, 0), *o = &c->g->values[n->outputs[0]].type;
    if (x->rank != 4) return 0;
    bool rows = o->rank == 2 && o->dims[0] == x->dims[0];
    return FE_IMAGE_IN | (rows ? FE_ROWS_OUT : 0);
}

/* Output 0 is input 0 in the shape `dims`: folded or reshaped on the device. */
static lm_status set_reshaped(fe_ctx *c, const fe_node *n, int32_t rank, const int64_t *dims) {
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) return const_view(c, n, k, rank, dims);
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 0)->elem, rank, dims);
}

/* ---- Constant ---- */

static lm_status infer_constant(fe_ctx *c, const fe_node *n) {
    if (n->attr_count != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "expected exactly one value attribute, given %u",
                       n->attr_count);
    const fe_attr *a = &n->attrs[0];
    fe_tensor *t;
    lm_status st;
    if (!strcmp(a->name, "value") && a->type == FE_ATTR_TENSOR && a->t) {
        if (a->t->elem == FE_STRING || !a->t->data)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "string constants are not supported");
        return fe_set_out_const(c, n, 0, a->t);
    }
    if (!strcmp(a->name, "value_float") && a->type == FE_ATTR_FLOAT) {
        if ((st = fe_const_new(c, FE_FLOAT, 0, NULL, &t))) return st;
        fe_tensor_set_f64(t, 0, a->f);
        return fe_set_out_const(c, n, 0, t);
    }
    if (!strcmp(a->name, "value_int") && a->type == FE_ATTR_INT) {
        if ((st = fe_const_new(c, FE_INT64, 0, NULL, &t))) return st;
        fe_tensor_set_i64(t, 0, a->i);
        return fe_set_out_const(c, n, 0, t);
    }
    if (!strcmp(a->name, "value_ints") && a->type == FE_ATTR_INTS)
        return i64_vector(c, n, a->ints, (int64_t)a->count);
    if (!strcmp(a->name, "value_floats") && a->type == FE_ATTR_FLOATS) {
        int64_t count = (int64_t)a->count;
        if ((st = fe_const_new(c, FE_FLOAT, 1, &count, &t))) return st;
        for (size_t i = 0; i < a->count; i++)
            fe_tensor_set_f64(t, i, a->floats[i]);
        return fe_set_out_const(c, n, 0, t);
    }
    return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
}

/* ---- Shape, Size ---- */

static lm_status infer_shape(fe_ctx *c, const fe_node *n) {
    int64_t start, end;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"start", "end", NULL});
    if (!st) st = fe_attr_int(c, n, "start", 0, &start);
    const fe_type *t = fe_in_type(c, n, 0);
    if (!st) st = fe_attr_int(c, n, "end", t->rank, &end);
    if (st) return st;
    int64_t r = t->rank;
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    if (end < start) end = start;
    return i64_vector(c, n, t->dims + start, end - start);
}

static lm_status infer_size(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = no_attrs(c, n);
    if (st) return st;
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_INT64, 0, NULL, &t))) return st;
    fe_tensor_set_i64(t, 0, fe_type_volume(fe_in_type(c, n, 0)));
    return fe_set_out_const(c, n, 0, t);
}

/* ---- ConstantOfShape, Range ---- */

static lm_status infer_constant_of_shape(fe_ctx *c, const fe_node *n) {
    const fe_tensor *shape;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"value", NULL});
    if (!st) st = fe_in_const_required(c, n, 0, &shape);
    if (st) return st;
    if (shape->rank != 1 || shape->count > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be a 1-D shape of at most %d dims",
                       FE_MAX_RANK);
    int64_t dims[FE_MAX_RANK];
    for (uint64_t d = 0; d < shape->count; d++)
        dims[d] = fe_tensor_get_i64(shape, d);
    const fe_attr *v = fe_node_attr(n, "value");
    fe_elem elem = v && v->type == FE_ATTR_TENSOR && v->t ? v->t->elem : FE_FLOAT;
    if (v && (v->type != FE_ATTR_TENSOR || !v->t || v->t->count != 1 || !v->t->data))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute value must be a one-element tensor");
    fe_tensor *t;
    if ((st = fe_const_new(c, elem, (uint32_t)shape->count, dims, &t))) return fe_nn_fail(c, n, st);
    size_t es = fe_elem_size(elem);
    for (uint64_t i = 0; v && i < t->count; i++)
        memcpy((char *)t->data + i * es, v->t->data, es);
    return fe_set_out_const(c, n, 0, t);
}

static lm_status infer_range(fe_ctx *c, const fe_node *n) {
    const fe_tensor *k[3];
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st) st = no_attrs(c, n);
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_in_const_required(c, n, i, &k[i]);
    if (st) return st;
    fe_elem e = k[0]->elem;
    double start = fe_tensor_get_f64(k[0], 0), limit = fe_tensor_get_f64(k[1], 0),
           delta = fe_tensor_get_f64(k[2], 0);
    if (delta == 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "delta is zero");
    double steps = ceil((limit - start) / delta);
    int64_t count = steps > 0 ? (int64_t)steps : 0;
    if (count > (INT64_C(1) << 31))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the range is too long");
    fe_tensor *t;
    if ((st = fe_const_new(c, e, 1, &count, &t))) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < count; i++) {
        if (fe_elem_is_float(e))
            fe_tensor_set_f64(t, (uint64_t)i, start + (double)i * delta);
        else
            fe_tensor_set_i64(t, (uint64_t)i,
                              fe_tensor_get_i64(k[0], 0) + i * fe_tensor_get_i64(k[2], 0));
    }
    return fe_set_out_const(c, n, 0, t);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ---- */

static lm_status infer_reshape(fe_ctx *c, const fe_node *n) {
    const fe_tensor *shape;
    int64_t allowzero;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"allowzero", NULL});
    if (!st) st = fe_attr_int(c, n, "allowzero", 0, &allowzero);
    if (!st) st = fe_in_const_required(c, n, 1, &shape);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    if (shape->rank != 1 || shape->count > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "shape must be 1-D with at most %d dims",
                       FE_MAX_RANK);
    int32_t rank = (int32_t)shape->count, infer_at = -1;
    int64_t dims[FE_MAX_RANK], known = 1;
    for (int32_t d = 0; d < rank; d++) {
        int64_t v = fe_tensor_get_i64(shape, (uint64_t)d);
        if (v == 0 && !allowzero) {
            if (d >= in->rank)
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "shape[%d] = 0 copies a missing dim", d);
            v = in->dims[d];
        }
        if (v == -1) {
            if (infer_at >= 0)
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "shape has more than one -1");
            infer_at = d;
            dims[d] = 1;
            continue;
        }
        if (v < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "shape[%d] = %lld", d, (long long)v);
        dims[d] = v;
        known *= v ? v : 1;
    }
    int64_t volume = fe_type_volume(in);
    if (infer_at >= 0) {
        if (!known || volume % known)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "cannot infer the -1 dim of %lld elements",
                           (long long)volume);
        dims[infer_at] = volume / known;
    }
    int64_t out_volume = 1;
    for (int32_t d = 0; d < rank; d++)
        out_volume *= dims[d];
    if (out_volume != volume)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "shape holds %lld elements, the input %lld",
                       (long long)out_volume, (long long)volume);
    return set_reshaped(c, n, rank, dims);
}

static lm_status infer_flatten(fe_ctx *c, const fe_node *n) {
    int64_t axis;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    if (!st) st = fe_attr_int(c, n, "axis", 1, &axis);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    if (axis < 0) axis += in->rank;
    if (axis < 0 || axis > in->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis is out of range for rank %d", in->rank);
    int64_t dims[2] = {1, 1};
    for (int32_t d = 0; d < in->rank; d++)
        dims[d >= axis] *= in->dims[d];
    return set_reshaped(c, n, 2, dims);
}

/* Squeeze/Unsqueeze axes: an attribute before opset 13, input 1 after. */
static lm_status axes_of(fe_ctx *c, const fe_node *n, int64_t *axes, size_t *count, bool *given) {
    const int64_t *a;
    size_t k;
    lm_status st = fe_attr_ints(c, n, "axes", &a, &k);
    if (st) return st;
    *given = a != NULL || fe_has_in(n, 1);
    if (fe_has_in(n, 1)) {
        const fe_tensor *t;
        if ((st = fe_in_const_required(c, n, 1, &t))) return st;
        if (t->count > FE_MAX_RANK * 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "too many axes");
        *count = (size_t)t->count;
        for (size_t i = 0; i < *count; i++)
            axes[i] = fe_tensor_get_i64(t, i);
        return LM_OK;
    }
    if (k > FE_MAX_RANK * 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "too many axes");
    *count = k;
    for (size_t i = 0; i < k; i++)
        axes[i] = a[i];
    return LM_OK;
}

static lm_status infer_squeeze(fe_ctx *c, const fe_node *n) {
    int64_t axes[FE_MAX_RANK * 2];
    size_t count;
    bool given;
    lm_status st = fe_check_inputs(c, n, 1, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axes", NULL});
    if (!st) st = axes_of(c, n, axes, &count, &given);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    bool drop[FE_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
        int32_t a;
        if ((st = fe_axis(c, n, axes[i], in->rank, &a))) return st;
        if (in->dims[a] != 1)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %lld has size %lld, not 1",
                           (long long)axes[i], (long long)in->dims[a]);
        drop[a] = true;
    }
    int64_t dims[FE_MAX_RANK];
    int32_t rank = 0;
    for (int32_t d = 0; d < in->rank; d++)
        if (!(given ? drop[d] : in->dims[d] == 1)) dims[rank++] = in->dims[d];
    return set_reshaped(c, n, rank, dims);
}

static lm_status infer_unsqueeze(fe_ctx *c, const fe_node *n) {
    int64_t axes[FE_MAX_RANK * 2];
    size_t count;
    bool given;
    lm_status st = fe_check_inputs(c, n, 1, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axes", NULL});
    if (!st) st = axes_of(c, n, axes, &count, &given);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    int32_t rank = in->rank + (int32_t)count;
    if (rank > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the result would have rank %d; at most %d", rank,
                       FE_MAX_RANK);
    bool added[FE_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
        int32_t a;
        if ((st = fe_axis(c, n, axes[i], rank, &a))) return st;
        if (added[a]) return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %d is repeated", a);
        added[a] = true;
    }
    int64_t dims[FE_MAX_RANK];
    for (int32_t d = 0, j = 0; d < rank; d++)
        dims[d] = added[d] ? 1 : in->dims[j++];
    return set_reshaped(c, n, rank, dims);
}

/* ---- Transpose ---- */

static lm_status infer_transpose(fe_ctx *c, const fe_node *n) {
    const int64_t *perm;
    size_t count;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"perm", NULL});
    if (!st) st = fe_attr_ints(c, n, "perm", &perm, &count);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    int64_t p[FE_MAX_RANK], dims[FE_MAX_RANK];
    bool seen[FE_MAX_RANK] = {false};
    if (perm && count != (size_t)in->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "perm has %zu entries for rank %d", count,
                       in->rank);
    for (int32_t d = 0; d < in->rank; d++) {
        p[d] = perm ? perm[d] : in->rank - 1 - d;
        if (p[d] < 0 || p[d] >= in->rank || seen[p[d]])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "perm is not a permutation");
        seen[p[d]] = true;
        dims[d] = in->dims[p[d]];
    }
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) {
        fe_tensor *t;
        if ((st = fe_const_new(c, k->elem, k->rank, dims, &t))) return fe_nn_fail(c, n, st);
        size_t es = fe_elem_size(k->elem);
        uint64_t in_stride[FE_MAX_RANK];
        for (int32_t d = in->rank - 1, s = 1; d >= 0; d--) {
            in_stride[d] = (uint64_t)s;
            s *= (int32_t)in->dims[d];
        }
        for (uint64_t i = 0; i < t->count; i++) {
            uint64_t rem = i, off = 0;
            for (int32_t d = in->rank - 1; d >= 0; d--) {
                uint64_t idx = rem % (uint64_t)dims[d];
                rem /= (uint64_t)dims[d];
                off += idx * in_stride[p[d]];
            }
            memcpy((char *)t->data + i * es, (const char *)k->data + off * es, es);
        }
        return fe_set_out_const(c, n, 0, t);
    }
    return fe_set_out_type(c, n, 0, in->elem, in->rank, dims);
}

/* A float rank-4 Transpose between NCHW and NHWC: TO_NHWC for perm
 * (0, 2, 3, 1), TO_NCHW for (0, 3, 1, 2), else NOT_IMAGE. */
enum { NOT_IMAGE, TO_NHWC, TO_NCHW };
static int image_transpose(fe_ctx *c, const fe_node *n) {
    const int64_t *perm;
    size_t count;
    const fe_type *in = fe_in_type(c, n, 0);
    if (in->rank != 4 || !fe_elem_is_float(in->elem) || fe_attr_ints(c, n, "perm", &perm, &count) ||
        !perm || count != 4 || perm[0] != 0)
        return NOT_IMAGE;
    if (perm[1] == 2 && perm[2] == 3 && perm[3] == 1) return TO_NHWC;
    if (perm[1] == 3 && perm[2] == 1 && perm[3] == 2) return TO_NCHW;
    return NOT_IMAGE;
}

/* An image's NHWC order is what a Transpose to NHWC makes (ConvNeXt's and
 * Swin's blocks move the channels last and back): it reads the image and
 * copies it into its [N, H, W, C] shape, or as it is when its readers take
 * it flat (FE_LAST_OUT), no transpose. One back to NCHW writes its input's
 * elements as the image they already are, from a flat input (FE_LAST_IN)
 * as they come. */
static uint32_t transpose_images(fe_ctx *c, const fe_node *n) {
    int k = image_transpose(c, n);
    return k == TO_NHWC   ? FE_IMAGE_IN | FE_TILES_IN | FE_LAST_OUT
           : k == TO_NCHW ? FE_IMAGE_OUT | FE_LAST_IN
                          : 0;
}

/* A Transpose between NCHW and a channels-last value held flat
 * (fe_plan.last_out, fe_slot.last): [1, 1, N * H * W, C] is both that
 * value and the NCHW value's image, so the image goes over as it is (a
 * view, fe_out_view; a copy when its form differs); an NCHW tensor is
 * permuted into it (TO_NHWC) or out of it (TO_NCHW, when the output is no
 * image). */
static lm_status lower_transpose_flat(fe_ctx *c, const fe_node *n, int kind) {
    const fe_type *in = fe_in_type(c, n, 0);
    const int64_t *d = in->dims;
    lmnn_shape flat_shape =
        LMNN_SHAPE(1, 1, (uint32_t)(d[0] * d[1] * d[2] * d[3] / (kind == TO_NHWC ? d[1] : d[3])),
                   (uint32_t)(kind == TO_NHWC ? d[1] : d[3]));
    lmnn_tensor a, r = {0};
    bool image = false, owned = false;
    lm_status st = LM_OK;
    if (kind == TO_NHWC) {
        if ((st = fe_in_image(c, n, 0, &a, &image))) return st;
        if (image && fe_out_view(c, n, 0, 0, FE_VIEW_TILE, &flat_shape)) return LM_OK;
        if (image && (st = fe_image_tiles(c, n, a, &flat_shape, &r, &owned))) return st;
        if (image && !owned) {
            st = lmnn_reshape(a, &flat_shape, NULL, &r);
        } else if (!image) {
            lmnn_shape nchw = fe_shape(4, d);
            st = lmnn_permute_reshaped_to(a, &nchw, (const int32_t[]){0, 2, 3, 1}, 4, &flat_shape,
                                          NULL, &r);
        }
    } else {
        if ((st = fe_in_dev(c, n, 0, &a))) return st;
        bool to_image = c->plans[n - c->g->nodes].nhwc_out;
        if (to_image && fe_out_view(c, n, 0, 0, FE_VIEW_NHWC, &flat_shape)) return LM_OK;
        if (to_image) {
            st = lmnn_reshape(a, &flat_shape, NULL, &r);
        } else {
            lmnn_shape nhwc = fe_shape(4, d);
            st = lmnn_permute_reshaped(a, &nhwc, (const int32_t[]){0, 3, 1, 2}, 4, NULL, &r);
        }
    }
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

static lm_status lower_transpose(fe_ctx *c, const fe_node *n) {
    const int64_t *perm;
    size_t count;
    const fe_type *in = fe_in_type(c, n, 0);
    lm_status st = fe_attr_ints(c, n, "perm", &perm, &count);
    if (st) return st;
    int32_t p[FE_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++)
        p[d] = (int32_t)(perm ? perm[d] : in->rank - 1 - d);
    lmnn_tensor a, r;
    int kind = image_transpose(c, n);
    bool flat = false, owned;
    const fe_plan *plan = &c->plans[n - c->g->nodes];
    if (plan->last_out || (kind == TO_NCHW && c->slots[n->inputs[0]].last))
        return lower_transpose_flat(c, n, kind);
    if (kind == TO_NHWC && (st = fe_in_image(c, n, 0, &a, &flat))) return st;
    if (flat) {
        const int64_t *o = c->g->values[n->outputs[0]].type.dims;
        lmnn_shape s = fe_shape(4, o);
        if ((st = fe_image_tiles(c, n, a, &s, &r, &owned))) return st;
        if (!owned && (st = lmnn_reshape(a, &s, NULL, &r))) return fe_nn_fail(c, n, st);
        return fe_out_dev(c, n, 0, r);
    }
    if (kind != TO_NCHW || !c->plans[n - c->g->nodes].nhwc_out)
        return fe_out_permute_of(c, n, 0, 0, p);
    if ((st = fe_in_dev(c, n, 0, &a))) return st;
    lmnn_shape s = LMNN_SHAPE(1, 1, (uint32_t)(in->dims[0] * in->dims[1] * in->dims[2]),
                              (uint32_t)in->dims[3]);
    if ((st = lmnn_reshape(a, &s, NULL, &r))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- Concat ---- */

/* ---- a Concat of slices ----
 *
 * A Concat whose pieces are each a Slice of one value x along the Concat's
 * axis only, or the Neg of one, picks x's positions along that axis in a
 * new order. Along the last axis that is x times a constant matrix of zeros
 * and ones (minus ones for the negated pieces), along the second-last the
 * same matrix times x: one product instead of a launch per piece and the
 * Concat's own (a row of tiles is not cut and pasted by whole tiles). The
 * rotary position embedding's rotate_half ([-x2, x1] of x's halves:
 * LLaMA's, GPT-NeoX's) is the first, as is any reordering of a row's
 * columns; ttnn's rotary embedding multiplies by such a transformation
 * matrix too. torch.roll along the rows of channels-last windows (Swin's
 * shifted windows) is the second. Each result is one product by 1 or -1
 * plus zeros, so finite values come out exact; an infinity in x makes NaN
 * in the other entries of its row (column), as 0 * inf does. Dims of more
 * than PICK_MAX keep the copies, which cost less than the product's work
 * that grows with the square of the dim. Along an axis before those, with
 * no piece negated, the positions are whole tiles and the Concat is a
 * Gather of them (torch.roll along H). */
#define PICK_MAX 256

/* Whether value v is a Slice (*neg: the Neg of one) of a value computed at
 * run time that cuts only axis a; *x is that value and *p the Slice's
 * plan. */
static bool slice_piece(fe_ctx *c, uint32_t v, int32_t a, uint32_t *x, bool *neg,
                        fe_slice_plan *p) {
    const fe_graph *g = c->g;
    uint32_t k = v == FE_NONE ? FE_NONE : g->values[v].producer;
    *neg = k != FE_NONE && !strcmp(g->nodes[k].op_type, "Neg") && g->nodes[k].input_count == 1;
    if (*neg) {
        v = g->nodes[k].inputs[0];
        k = v == FE_NONE ? FE_NONE : g->values[v].producer;
    }
    if (k == FE_NONE || strcmp(g->nodes[k].op_type, "Slice") != 0) return false;
    const fe_node *s = &g->nodes[k];
    if (s->inputs[0] == FE_NONE || fe_in_const(c, s, 0) || fe_slice_read(c, s, p)) return false;
    const fe_type *t = fe_in_type(c, s, 0);
    for (int32_t d = 0; d < t->rank; d++)
        if (d != a &&
            (p->begin[d] != 0 || p->dims[d] != t->dims[d] || p->step[d] != 1 || p->flip[d]))
            return false;
    *x = s->inputs[0];
    return true;
}

/* Concat node n, of type `out` along axis a, as the product or Gather above
 * when it is such a Concat: *out_done. */
static lm_status concat_slices(fe_ctx *c, const fe_node *n, const fe_type *out, int32_t a,
                               bool *out_done) {
    *out_done = false;
    int32_t r = out->rank;
    uint32_t count = fe_in_count(n), x = FE_NONE, xi;
    fe_slice_plan p;
    bool neg, negated = false, product = a >= r - 2;
    if (r < 2 || count < 2 || !fe_elem_is_float(out->elem) || (product && out->dims[a] > PICK_MAX))
        return LM_OK;
    for (uint32_t i = 0; i < count; i++) {
        if (!slice_piece(c, n->inputs[i], a, &xi, &neg, &p) || (x != FE_NONE && xi != x))
            return LM_OK;
        x = xi;
        negated |= neg;
    }
    int64_t from_dim = c->g->values[x].type.dims[a], to_dim = out->dims[a];
    if ((product && from_dim > PICK_MAX) || (!product && negated)) return LM_OK;
    /* The pick: a matrix [from, to] (columns), [to, from] (rows), or the
     * indices. */
    fe_tensor *m;
    const int64_t *dims =
        a == r - 1 ? (const int64_t[]){from_dim, to_dim} : (const int64_t[]){to_dim, from_dim};
    lm_status st = product ? fe_const_new(c, out->elem, 2, dims, &m)
                           : fe_const_new(c, FE_INT64, 1, &to_dim, &m);
    if (st) return fe_nn_fail(c, n, st);
    for (uint64_t i = 0; product && i < m->count; i++)
        fe_tensor_set_f64(m, i, 0.0);
    int64_t to = 0;
    for (uint32_t i = 0; i < count; i++) {
        slice_piece(c, n->inputs[i], a, &xi, &neg, &p);
        int64_t len = p.dims[a];
        for (int64_t j = 0; j < len; j++, to++) {
            int64_t from = p.begin[a] + (p.flip[a] ? len - 1 - j : j) * p.step[a];
            if (!product)
                fe_tensor_set_i64(m, (uint64_t)to, from);
            else
                fe_tensor_set_f64(
                    m, (uint64_t)(a == r - 1 ? from * to_dim + to : to * from_dim + from),
                    neg ? -1.0 : 1.0);
        }
    }
    fe_expansion e;
    fe_x_begin(c, n, &e);
    uint32_t mv, result = n->outputs[0];
    st = fe_x_const(&e, m, "pick", &mv);
    if (!st && product)
        st = a == r - 1 ? fe_x_op(&e, "MatMul", x, mv, &result)
                        : fe_x_op(&e, "MatMul", mv, x, &result);
    if (!st && !product && !(st = fe_x_op(&e, "Gather", x, mv, &result)))
        st = fe_x_int_attr(&e, &e.nodes[e.count - 1], "axis", false, a);
    if (!st) e.nodes[e.count - 1].name = n->name; /* its profile label stays the Concat's */
    *out_done = !st;
    return fe_x_end(c, &e, st);
}

static lm_status infer_concat(fe_ctx *c, const fe_node *n) {
    int64_t axis;
    lm_status st = fe_check_inputs(c, n, 1, 1024);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    if (axis == INT64_MIN) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute axis is missing");
    const fe_type *t0 = fe_in_type(c, n, 0);
    int32_t a;
    if ((st = fe_axis(c, n, axis, t0->rank, &a))) return st;
    fe_type out = *t0;
    out.dims[a] = 0;
    bool all_const = true;
    uint32_t k = fe_in_count(n);
    for (uint32_t i = 0; i < k; i++) {
        const fe_type *t = fe_in_type(c, n, i);
        if (!t) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is empty", i);
        if (t->elem != t0->elem || t->rank != t0->rank)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u's type differs from input 0's", i);
        for (int32_t d = 0; d < t->rank; d++)
            if (d != a && t->dims[d] != t0->dims[d])
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "input %u's dim %d is %lld, input 0's %lld", i, d,
                               (long long)t->dims[d], (long long)t0->dims[d]);
        out.dims[a] += t->dims[a];
        all_const &= fe_in_const(c, n, i) != NULL;
    }
    if (all_const) {
        fe_tensor *t;
        if ((st = fe_const_new(c, out.elem, (uint32_t)out.rank, out.dims, &t)))
            return fe_nn_fail(c, n, st);
        size_t es = fe_elem_size(out.elem);
        uint64_t outer = 1, inner = 1;
        for (int32_t d = 0; d < a; d++)
            outer *= (uint64_t)out.dims[d];
        for (int32_t d = a + 1; d < out.rank; d++)
            inner *= (uint64_t)out.dims[d];
        char *dst = (char *)t->data;
        for (uint64_t o = 0; o < outer; o++)
            for (uint32_t i = 0; i < k; i++) {
                const fe_tensor *src = fe_in_const(c, n, i);
                uint64_t run = (uint64_t)src->dims[a] * inner * es;
                memcpy(dst, (const char *)src->data + o * run, run);
                dst += run;
            }
        return fe_set_out_const(c, n, 0, t);
    }
    bool done;
    if ((st = concat_slices(c, n, &out, a, &done)) || done) return st;
    return fe_set_out_type(c, n, 0, out.elem, out.rank, out.dims);
}

/* Concat's axis, normalized. */
static lm_status concat_axis(fe_ctx *c, const fe_node *n, int32_t *out) {
    int64_t axis;
    lm_status st = fe_attr_int(c, n, "axis", 0, &axis);
    return st ? st : fe_axis(c, n, axis, fe_in_type(c, n, 0)->rank, out);
}

static lm_status lower_concat(fe_ctx *c, const fe_node *n) {
    uint32_t k = fe_in_count(n), m = 0;
    lmnn_tensor *ts = calloc(k, sizeof *ts);
    bool *owned = calloc(k, sizeof *owned);
    if (!ts || !owned) {
        free(ts);
        free(owned);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    int32_t a = 0;
    lm_status st = concat_axis(c, n, &a);
    /* Images (concat_images): the channels are the flat images' last dim. */
    bool images = c->plans[n - c->g->nodes].nhwc_out;
    for (uint32_t i = 0; i < k && !st; i++) {
        const fe_type *t = fe_in_type(c, n, i);
        if (t->dims[a] == 0) continue; /* empty inputs add nothing */
        if (!images) {
            st = fe_in_dev(c, n, i, &ts[m++]);
            continue;
        }
        lmnn_shape s =
            LMNN_SHAPE(1, 1, (uint32_t)(t->dims[0] * fe_image_pixels(t)), (uint32_t)t->dims[1]);
        st = fe_in_image_tiles(c, n, i, &s, &ts[m], &owned[m]);
        m += !st;
    }
    lmnn_tensor r;
    if (!st && m == 1) {
        /* One non-empty input: the output is a copy of it. */
        lmnn_tensor_info info;
        st = lmnn_tensor_get_info(ts[0], &info);
        if (!st) st = lmnn_reshape(ts[0], &info.shape, NULL, &r);
    } else if (!st) {
        st = lmnn_concat(ts, m, images ? 3 : a, NULL, &r);
    }
    for (uint32_t i = 0; i < m; i++)
        if (owned[i]) fe_free(ts[i]);
    free(ts);
    free(owned);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* A Concat of rank-4 or rank-5 float values along the channels, none of
 * them constant, joins flat images (FE_IMAGE_ALL). */
static uint32_t concat_images(fe_ctx *c, const fe_node *n) {
    int32_t a;
    const fe_type *t = fe_in_type(c, n, 0);
    if (!fe_image_rank(t) || !fe_elem_is_float(t->elem) || concat_axis(c, n, &a) || a != 1)
        return 0;
    for (uint32_t i = 0; i < n->input_count; i++)
        if (n->inputs[i] == FE_NONE || fe_in_const(c, n, i)) return 0;
    return FE_IMAGE_ALL;
}

/* ---- Slice ---- */

typedef fe_slice_plan slice_plan;

lm_status fe_slice_read(fe_ctx *c, const fe_node *n, fe_slice_plan *p) {
    const fe_type *in = fe_in_type(c, n, 0);
    int64_t starts[FE_MAX_RANK], ends[FE_MAX_RANK], axes[FE_MAX_RANK], steps[FE_MAX_RANK];
    size_t count = 0;
    lm_status st;
    if (n->opset < 10 && fe_in_count(n) == 1) {
        const int64_t *s, *e, *a;
        size_t ns, ne, na;
        if ((st = fe_attr_ints(c, n, "starts", &s, &ns)) ||
            (st = fe_attr_ints(c, n, "ends", &e, &ne)) ||
            (st = fe_attr_ints(c, n, "axes", &a, &na)))
            return st;
        if (ns != ne || (a && na != ns) || ns > FE_MAX_RANK)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "starts, ends and axes differ in length");
        count = ns;
        for (size_t i = 0; i < count; i++) {
            starts[i] = s[i];
            ends[i] = e[i];
            axes[i] = a ? a[i] : (int64_t)i;
            steps[i] = 1;
        }
    } else {
        const fe_tensor *k[5] = {NULL};
        for (uint32_t i = 1; i < 5; i++)
            if (fe_has_in(n, i) && (st = fe_in_const_required(c, n, i, &k[i]))) return st;
        if (!k[1] || !k[2])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "starts and ends are required");
        count = (size_t)k[1]->count;
        if (k[2]->count != count || (k[3] && k[3]->count != count) ||
            (k[4] && k[4]->count != count) || count > FE_MAX_RANK)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "starts, ends, axes and steps differ in length");
        for (size_t i = 0; i < count; i++) {
            starts[i] = fe_tensor_get_i64(k[1], i);
            ends[i] = fe_tensor_get_i64(k[2], i);
            axes[i] = k[3] ? fe_tensor_get_i64(k[3], i) : (int64_t)i;
            steps[i] = k[4] ? fe_tensor_get_i64(k[4], i) : 1;
        }
    }
    for (int32_t d = 0; d < in->rank; d++) {
        p->begin[d] = 0;
        p->end[d] = (int32_t)in->dims[d];
        p->step[d] = 1;
        p->dims[d] = in->dims[d];
        p->flip[d] = false;
    }
    bool seen[FE_MAX_RANK] = {false};
    for (size_t i = 0; i < count; i++) {
        int32_t a;
        if ((st = fe_axis(c, n, axes[i], in->rank, &a))) return st;
        if (seen[a]) return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %d is repeated", a);
        seen[a] = true;
        int64_t dim = in->dims[a], s = starts[i], e = ends[i], step = steps[i];
        if (step == 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "steps[%zu] is 0", i);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (step < 0) {
            /* Walking down from s to just above e: the same elements taken
             * upwards from the last one, then reversed. */
            s = s < 0 ? -1 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            int64_t len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
            if (step < -INT32_MAX) step = -INT32_MAX;
            p->begin[a] = (int32_t)(len ? s + (len - 1) * step : 0);
            p->end[a] = (int32_t)(len ? s + 1 : 0);
            p->step[a] = (int32_t)-step;
            p->dims[a] = len;
            p->flip[a] = true;
            continue;
        }
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
        int64_t len = e > s ? (e - s + step - 1) / step : 0;
        p->begin[a] = (int32_t)s;
        p->end[a] = (int32_t)(len ? s + (len - 1) * step + 1 : s);
        p->step[a] = (int32_t)(step > INT32_MAX ? INT32_MAX : step);
        p->dims[a] = len;
    }
    return LM_OK;
}

static lm_status infer_slice(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 5);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"starts", "ends", "axes", NULL});
    slice_plan p;
    if (!st) st = fe_slice_read(c, n, &p);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) {
        fe_tensor *t;
        if ((st = fe_const_new(c, k->elem, k->rank, p.dims, &t))) return fe_nn_fail(c, n, st);
        size_t es = fe_elem_size(k->elem);
        for (uint64_t i = 0; i < t->count; i++) {
            uint64_t rem = i, off = 0, stride = 1;
            for (int32_t d = in->rank - 1; d >= 0; d--) {
                uint64_t idx = rem % (uint64_t)p.dims[d];
                rem /= (uint64_t)p.dims[d];
                if (p.flip[d]) idx = (uint64_t)p.dims[d] - 1 - idx;
                off += ((uint64_t)p.begin[d] + idx * (uint64_t)p.step[d]) * stride;
                stride *= (uint64_t)in->dims[d];
            }
            memcpy((char *)t->data + i * es, (const char *)k->data + off * es, es);
        }
        return fe_set_out_const(c, n, 0, t);
    }
    return fe_set_out_type(c, n, 0, in->elem, in->rank, p.dims);
}

/* Whether slice `p` of a rank-`rank` value of dims `dims` cuts its last dim
 * only, forwards. */
static bool slices_last_dim(const slice_plan *p, int32_t rank, const int64_t *dims) {
    for (int32_t d = 0; d < rank; d++)
        if (p->flip[d] ||
            (d < rank - 1 && (p->begin[d] != 0 || p->end[d] != dims[d] || p->step[d] != 1)))
            return false;
    return rank >= 2;
}

static lm_status lower_slice(fe_ctx *c, const fe_node *n) {
    slice_plan p;
    lm_status st = fe_slice_read(c, n, &p);
    lmnn_tensor a, r;
    const fe_type *in = fe_in_type(c, n, 0);
    int32_t rank = in->rank, perm[FE_MAX_RANK];
    if (!st && slices_last_dim(&p, rank, in->dims) && fe_in_permuted(c, n, 0, &a, perm) &&
        fe_perm_keeps_last(perm, (uint32_t)rank)) {
        /* A permutation not yet made that keeps the last dim: the same cut
         * of what it was, permuted the same way (fe_out_permuted). */
        int32_t b[FE_MAX_RANK], e[FE_MAX_RANK], s[FE_MAX_RANK];
        for (int32_t d = 0; d < rank; d++) {
            b[perm[d]] = p.begin[d];
            e[perm[d]] = (int32_t)(d < rank - 1 ? in->dims[d] : p.end[d]);
            s[perm[d]] = p.step[d];
        }
        if ((st = lmnn_slice(a, b, e, s, (uint32_t)rank, NULL, &r))) return fe_nn_fail(c, n, st);
        return fe_out_permuted(c, n, 0, r, perm);
    }
    if (!st) st = fe_in_dev(c, n, 0, &a);
    if (st) return st;
    if ((st = lmnn_slice(a, p.begin, p.end, p.step, (uint32_t)rank, NULL, &r)))
        return fe_nn_fail(c, n, st);
    for (int32_t d = 0; d < rank; d++) {
        if (!p.flip[d] || p.dims[d] < 2) continue;
        /* Reversed along d: an index table [len-1, ..., 0]. */
        fe_tensor *rev;
        lmnn_tensor idx, t;
        if ((st = fe_const_new(c, FE_INT32, 1, &p.dims[d], &rev))) break;
        for (int64_t i = 0; i < p.dims[d]; i++)
            fe_tensor_set_i64(rev, (uint64_t)i, p.dims[d] - 1 - i);
        if ((st = fe_aux(c, n, (uint32_t)d, rev, LMNN_ROW_MAJOR, &idx))) break;
        st = lmnn_index_select(r, d, idx, NULL, &t);
        fe_free(r);
        r = (lmnn_tensor){0};
        if (st) return fe_nn_fail(c, n, st);
        r = t;
    }
    if (st) {
        fe_free(r);
        return st;
    }
    return fe_out_dev(c, n, 0, r);
}

/* ---- Gather, GatherElements ---- */

/* Gather's and GatherElements' common checks: (data, indices) with an
 * integer index type, the axis normalised into *out_axis. */
static lm_status gather_args(fe_ctx *c, const fe_node *n, int32_t *out_axis) {
    int64_t axis;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    if (!st) st = fe_attr_int(c, n, "axis", 0, &axis);
    if (st) return st;
    const fe_type *idx = fe_in_type(c, n, 1);
    if (idx->elem != FE_INT64 && idx->elem != FE_INT32)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "indices must be int32 or int64, given %s",
                       fe_elem_name(idx->elem));
    return fe_axis(c, n, axis, fe_in_type(c, n, 0)->rank, out_axis);
}

static lm_status infer_gather(fe_ctx *c, const fe_node *n) {
    int32_t a;
    lm_status st = gather_args(c, n, &a);
    if (st) return st;
    const fe_type *data = fe_in_type(c, n, 0), *idx = fe_in_type(c, n, 1);
    int32_t rank = data->rank - 1 + idx->rank;
    if (rank > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the result would have rank %d", rank);
    int64_t dims[FE_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < a; d++)
        dims[r++] = data->dims[d];
    for (int32_t d = 0; d < idx->rank; d++)
        dims[r++] = idx->dims[d];
    for (int32_t d = a + 1; d < data->rank; d++)
        dims[r++] = data->dims[d];
    if ((st = fe_check_const_indices(c, n, 1, false, 1, a, &data->dims[a]))) return st;
    const fe_tensor *kd = fe_in_const(c, n, 0), *ki = fe_in_const(c, n, 1);
    if (kd && ki) {
        fe_tensor *t;
        if ((st = fe_const_new(c, kd->elem, (uint32_t)rank, dims, &t))) return fe_nn_fail(c, n, st);
        size_t es = fe_elem_size(kd->elem);
        uint64_t outer = 1, inner = 1;
        for (int32_t d = 0; d < a; d++)
            outer *= (uint64_t)data->dims[d];
        for (int32_t d = a + 1; d < data->rank; d++)
            inner *= (uint64_t)data->dims[d];
        char *dst = (char *)t->data;
        for (uint64_t o = 0; o < outer; o++)
            for (uint64_t j = 0; j < ki->count; j++) {
                int64_t v = fe_tensor_get_i64(ki, j);
                if (v < 0) v += data->dims[a];
                memcpy(dst,
                       (const char *)kd->data +
                           (o * (uint64_t)data->dims[a] + (uint64_t)v) * inner * es,
                       inner * es);
                dst += inner * es;
            }
        return fe_set_out_const(c, n, 0, t);
    }
    return fe_set_out_type(c, n, 0, data->elem, rank, dims);
}

/* Input `i` as a row-major int32 index tensor (any shape: the gathers read
 * its elements in order), borrowed unless *owned. Negative entries stay
 * as they are: the gathers count them from the end of the dim
 * (lmnn_index_options.negative_from_end). */
static lm_status row_major_indices(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                                   bool *owned) {
    return fe_in_dev_rm(c, n, i, LMNN_INT32, out, owned);
}

/* Gather along axis 0 of a constant table ([V, D]: an embedding's, a rotary
 * cache's cos and sin): the table is uploaded row-major once and each
 * index's row moves in one launch, the table never untilized on a run. */
static bool gathers_table(fe_ctx *c, const fe_node *n, int32_t axis) {
    const fe_tensor *k = fe_in_const(c, n, 0);
    return axis == 0 && k && k->rank == 2 && fe_dev_dtype(c, k->elem) != LMNN_BFLOAT8_B &&
           fe_in_type(c, n, 1)->rank < LMNN_MAX_DIMS;
}

/* Whether constant indices `k` into a dim of `dim` are one run first,
 * first + 1, ... (negative ones counted from the end): *out_first. */
static bool index_run(const fe_tensor *k, int64_t dim, int64_t *out_first) {
    for (uint64_t j = 0; j < k->count; j++) {
        int64_t v = fe_tensor_get_i64(k, j);
        if (v < 0) v += dim;
        if (j == 0) *out_first = v;
        if (v != *out_first + (int64_t)j) return false;
    }
    return k->count > 0;
}

/* Gather node n along axis a with constant indices that are one run (a
 * decoder's layer picked from a stacked cache): a slice, whole tiles when
 * the axis is before the last two, where the index select moves rows. */
static lm_status gather_run(fe_ctx *c, const fe_node *n, int32_t a, int64_t first) {
    const fe_type *data = fe_in_type(c, n, 0), *o = &c->g->values[n->outputs[0]].type;
    int32_t b[FE_MAX_RANK], e[FE_MAX_RANK], s[FE_MAX_RANK];
    for (int32_t d = 0; d < data->rank; d++) {
        b[d] = 0;
        e[d] = (int32_t)data->dims[d];
        s[d] = 1;
    }
    b[a] = (int32_t)first;
    e[a] = (int32_t)(first + (int64_t)fe_in_const(c, n, 1)->count);
    lmnn_tensor d, r;
    lm_status st = fe_in_dev(c, n, 0, &d);
    if (st) return st;
    if ((st = lmnn_slice(d, b, e, s, (uint32_t)data->rank, NULL, &r))) return fe_nn_fail(c, n, st);
    lmnn_shape so = fe_shape(o->rank, o->dims);
    return (st = fe_reshape_owned(c, n, r, &so, &r)) ? st : fe_out_dev(c, n, 0, r);
}

static lm_status lower_gather(fe_ctx *c, const fe_node *n) {
    int64_t axis, first;
    lm_status st = fe_attr_int(c, n, "axis", 0, &axis);
    const fe_type *data = fe_in_type(c, n, 0);
    int32_t a;
    if (!st) st = fe_axis(c, n, axis, data->rank, &a);
    lmnn_tensor d, idx, r = {0};
    bool owned = false, table = !st && gathers_table(c, n, a);
    const fe_tensor *ki = fe_in_const(c, n, 1);
    if (!st && !table && ki && index_run(ki, data->dims[a], &first))
        return gather_run(c, n, a, first);
    if (!st) {
        st = table ? fe_aux(c, n, 0, fe_in_const(c, n, 0), LMNN_ROW_MAJOR, &d)
                   : fe_in_dev(c, n, 0, &d);
    }
    if (!st) st = row_major_indices(c, n, 1, &idx, &owned);
    if (st) return st;
    if (table) {
        lmnn_embedding_options eo;
        lmnn_embedding_options_init(&eo);
        eo.index.negative_from_end = true;
        st = lmnn_embedding(idx, d, &eo, &r);
        if (owned) fe_free(idx);
        return st ? fe_nn_fail(c, n, st) : fe_out_dev(c, n, 0, r);
    }
    lmnn_index_options io;
    lmnn_index_options_init(&io);
    io.negative_from_end = true;
    st = lmnn_index_select(d, a, idx, &io, &r);
    if (owned) fe_free(idx);
    if (st) return fe_nn_fail(c, n, st);
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    lmnn_shape so = fe_shape(o->rank, o->dims);
    lmnn_tensor shaped;
    st = lmnn_reshape(r, &so, NULL, &shaped);
    fe_free(r);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, shaped);
}

static lm_status infer_gather_elements(fe_ctx *c, const fe_node *n) {
    int32_t a;
    lm_status st = gather_args(c, n, &a);
    if (st) return st;
    const fe_type *data = fe_in_type(c, n, 0), *idx = fe_in_type(c, n, 1);
    if (idx->rank != data->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "indices must have the data's rank");
    if ((st = fe_check_const_indices(c, n, 1, false, 1, a, &data->dims[a]))) return st;
    return fe_set_out_type(c, n, 0, data->elem, idx->rank, idx->dims);
}

static lm_status lower_gather_elements(fe_ctx *c, const fe_node *n) {
    int64_t axis;
    lm_status st = fe_attr_int(c, n, "axis", 0, &axis);
    const fe_type *data = fe_in_type(c, n, 0);
    int32_t a;
    if (!st) st = fe_axis(c, n, axis, data->rank, &a);
    lmnn_tensor d, idx, r;
    bool owned = false;
    if (!st) st = fe_in_dev(c, n, 0, &d);
    if (!st) st = row_major_indices(c, n, 1, &idx, &owned);
    if (st) return st;
    lmnn_index_options io;
    lmnn_index_options_init(&io);
    io.negative_from_end = true;
    st = lmnn_gather(d, a, idx, &io, &r);
    if (owned) fe_free(idx);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- Expand, Tile ---- */

/* A constant expanded to at most this many elements is folded (the index
 * and mask tensors exporters build from shapes, e.g. a shifted-window
 * attention's); a larger one is a broadcast on the device rather than a
 * weight stored in the binary. */
#define FE_EXPAND_FOLD_MAX (UINT64_C(1) << 20)

static lm_status infer_expand(fe_ctx *c, const fe_node *n) {
    const fe_tensor *shape;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = no_attrs(c, n);
    if (!st) st = fe_in_const_required(c, n, 1, &shape);
    if (st) return st;
    if (shape->rank != 1 || shape->count > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "shape must be 1-D with at most %d dims",
                       FE_MAX_RANK);
    fe_type want = {.elem = fe_in_type(c, n, 0)->elem, .rank = (int32_t)shape->count}, out;
    for (uint64_t d = 0; d < shape->count; d++)
        want.dims[d] = fe_tensor_get_i64(shape, d);
    if ((st = fe_broadcast(c, n, fe_in_type(c, n, 0), &want, &out))) return st;
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (!k || (uint64_t)fe_type_volume(&out) > FE_EXPAND_FOLD_MAX)
        return fe_set_out_type(c, n, 0, out.elem, out.rank, out.dims);
    fe_tensor *t;
    if ((st = fe_const_new(c, out.elem, (uint32_t)out.rank, out.dims, &t))) return st;
    size_t es = fe_elem_size(out.elem);
    for (uint64_t i = 0; i < t->count; i++)
        memcpy((char *)t->data + i * es, (const char *)k->data + fe_bcast_index(&out, k, i) * es,
               es);
    return fe_set_out_const(c, n, 0, t);
}

static lm_status lower_expand(fe_ctx *c, const fe_node *n) {
    const fe_type *o = &c->g->values[n->outputs[0]].type, *in = fe_in_type(c, n, 0);
    lmnn_tensor a, r;
    lm_status st = fe_in_dev(c, n, 0, &a);
    if (st) return st;
    if (fe_type_volume(o) == fe_type_volume(in) && o->rank == in->rank)
        return fe_out_alias(c, n, 0, 0);
    lmnn_shape s = fe_shape(o->rank, o->dims);
    if ((st = lmnn_expand(a, &s, NULL, &r))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

static lm_status infer_tile(fe_ctx *c, const fe_node *n) {
    const fe_tensor *rep;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = no_attrs(c, n);
    if (!st) st = fe_in_const_required(c, n, 1, &rep);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    if (rep->count != (uint64_t)in->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "repeats has %llu entries for rank %d",
                       (unsigned long long)rep->count, in->rank);
    int64_t dims[FE_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t r = fe_tensor_get_i64(rep, (uint64_t)d);
        if (r < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "repeats[%d] is negative", d);
        dims[d] = in->dims[d] * r;
    }
    const fe_tensor *k = fe_in_const(c, n, 0);
    fe_type out = {.elem = in->elem, .rank = in->rank};
    memcpy(out.dims, dims, sizeof dims);
    if (!k || (uint64_t)fe_type_volume(&out) > FE_EXPAND_FOLD_MAX)
        return fe_set_out_type(c, n, 0, in->elem, in->rank, dims);
    /* A known input (up to Expand's limit, the rest a copy on the device):
     * folded, each element from its place modulo the input's dims. */
    fe_tensor *t;
    if ((st = fe_const_new(c, k->elem, k->rank, dims, &t))) return fe_nn_fail(c, n, st);
    size_t es = fe_elem_size(k->elem);
    for (uint64_t i = 0; i < t->count; i++) {
        uint64_t rem = i, off = 0, stride = 1;
        for (int32_t d = in->rank - 1; d >= 0; d--) {
            off += rem % (uint64_t)dims[d] % (uint64_t)in->dims[d] * stride;
            rem /= (uint64_t)dims[d];
            stride *= (uint64_t)in->dims[d];
        }
        memcpy((char *)t->data + i * es, (const char *)k->data + off * es, es);
    }
    return fe_set_out_const(c, n, 0, t);
}

static lm_status lower_tile(fe_ctx *c, const fe_node *n) {
    const fe_tensor *rep = fe_in_const(c, n, 1);
    uint32_t r[FE_MAX_RANK];
    for (uint64_t d = 0; d < rep->count; d++)
        r[d] = (uint32_t)fe_tensor_get_i64(rep, d);
    lmnn_tensor a, o;
    lm_status st = fe_in_dev(c, n, 0, &a);
    if (st) return st;
    if ((st = lmnn_repeat(a, r, (uint32_t)rep->count, NULL, &o))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, o);
}

/* ---- Split ---- */

static lm_status split_sizes(fe_ctx *c, const fe_node *n, int32_t *axis, int64_t *sizes) {
    int64_t ax, num;
    lm_status st = fe_attr_int(c, n, "axis", 0, &ax);
    if (!st) st = fe_attr_int(c, n, "num_outputs", 0, &num);
    const fe_type *in = fe_in_type(c, n, 0);
    if (!st) st = fe_axis(c, n, ax, in->rank, axis);
    if (st) return st;
    uint32_t k = n->output_count;
    if (k == 0 || k > 1024) return fe_fail(c, n, LM_ERR_INVALID_FILE, "no outputs");
    const int64_t *attr;
    size_t count;
    if ((st = fe_attr_ints(c, n, "split", &attr, &count))) return st;
    const fe_tensor *t = NULL;
    if (fe_has_in(n, 1) && (st = fe_in_const_required(c, n, 1, &t))) return st;
    int64_t dim = in->dims[*axis], total = 0;
    if (attr || t) {
        size_t m = t ? (size_t)t->count : count;
        if (m != k)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "split has %zu entries for %u outputs", m, k);
        for (uint32_t i = 0; i < k; i++) {
            sizes[i] = t ? fe_tensor_get_i64(t, i) : attr[i];
            if (sizes[i] < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "split[%u] is negative", i);
            if (sizes[i] > dim - total) /* checked before the sum, which could overflow */
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "split[%u] is %lld: with the parts before it, more than the dim, "
                               "%lld",
                               i, (long long)sizes[i], (long long)dim);
            total += sizes[i];
        }
        if (total != dim)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "split sums to %lld, the dim is %lld",
                           (long long)total, (long long)dim);
        return LM_OK;
    }
    /* Equal parts, the last one smaller when the dim does not divide. */
    int64_t part = (dim + k - 1) / k;
    for (uint32_t i = 0; i < k; i++) {
        sizes[i] = dim - total < part ? dim - total : part;
        total += sizes[i];
    }
    return LM_OK;
}

static lm_status infer_split(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", "split", "num_outputs", NULL});
    if (st) return st;
    int32_t a;
    int64_t *sizes = calloc(n->output_count ? n->output_count : 1, sizeof *sizes);
    if (!sizes) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    st = split_sizes(c, n, &a, sizes);
    const fe_type *in = fe_in_type(c, n, 0);
    const fe_tensor *k = fe_in_const(c, n, 0);
    /* A constant splits when compiling: each part is `outer` runs of
     * sizes[i] slices of `inner` bytes, at its offset along the axis. */
    uint64_t outer = 1, inner = fe_elem_size(in->elem), offset = 0;
    for (int32_t d = 0; d < in->rank; d++)
        if (d < a)
            outer *= (uint64_t)in->dims[d];
        else if (d > a)
            inner *= (uint64_t)in->dims[d];
    for (uint32_t i = 0; !st && i < n->output_count; i++) {
        int64_t dims[FE_MAX_RANK];
        memcpy(dims, in->dims, sizeof dims);
        dims[a] = sizes[i];
        if (!k) {
            st = fe_set_out_type(c, n, i, in->elem, in->rank, dims);
            continue;
        }
        fe_tensor *t;
        if ((st = fe_const_new(c, k->elem, k->rank, dims, &t))) break;
        uint64_t run = (uint64_t)sizes[i] * inner, dim = (uint64_t)in->dims[a];
        for (uint64_t o = 0; o < outer && run; o++)
            memcpy((char *)t->data + o * run, (const char *)k->data + (o * dim + offset) * inner,
                   run);
        offset += (uint64_t)sizes[i];
        st = fe_set_out_const(c, n, i, t);
    }
    free(sizes);
    return st;
}

static lm_status lower_split(fe_ctx *c, const fe_node *n) {
    uint32_t k = n->output_count;
    int64_t *sizes = calloc(k, sizeof *sizes);
    uint32_t *s32 = calloc(k, sizeof *s32);
    lmnn_tensor *outs = calloc(k, sizeof *outs);
    lm_status st =
        sizes && s32 && outs ? LM_OK : err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    int32_t a = 0;
    lmnn_tensor in;
    if (!st) st = split_sizes(c, n, &a, sizes);
    if (!st) st = fe_in_dev(c, n, 0, &in);
    for (uint32_t i = 0; !st && i < k; i++) {
        if (!sizes[i]) st = fe_fail(c, n, LM_ERR_UNSUPPORTED, "output %u would be empty", i);
        s32[i] = (uint32_t)sizes[i];
    }
    if (!st && k == 1) {
        st = fe_out_alias(c, n, 0, 0);
    } else if (!st) {
        if ((st = lmnn_split(in, s32, k, a, NULL, outs))) st = fe_nn_fail(c, n, st);
        for (uint32_t i = 0; !st && i < k; i++)
            st = fe_out_dev(c, n, i, outs[i]);
    }
    free(sizes);
    free(s32);
    free(outs);
    return st;
}

/* ---- Pad ---- */

lm_status fe_pad_read(fe_ctx *c, const fe_node *n, uint32_t *pads, uint32_t *crops,
                      lmnn_pad_options *o) {
    const fe_type *in = fe_in_type(c, n, 0);
    const char *mode;
    lm_status st = fe_attr_string(c, n, "mode", "constant", &mode);
    if (st) return st;
    lmnn_pad_options_init(o);
    if (!strcmp(mode, "constant"))
        o->mode = LMNN_PAD_CONSTANT;
    else if (!strcmp(mode, "reflect"))
        o->mode = LMNN_PAD_REFLECT;
    else if (!strcmp(mode, "edge"))
        o->mode = LMNN_PAD_REPLICATE;
    else if (!strcmp(mode, "wrap"))
        o->mode = LMNN_PAD_CIRCULAR;
    else
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    int64_t raw[2 * FE_MAX_RANK], axes[FE_MAX_RANK];
    size_t count;
    if (n->opset < 11) {
        const int64_t *p;
        float value;
        if ((st = fe_attr_ints(c, n, "pads", &p, &count)) ||
            (st = fe_attr_float(c, n, "value", 0.0f, &value)))
            return st;
        if (count != 2 * (size_t)in->rank)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "pads has %zu entries for rank %d", count,
                           in->rank);
        memcpy(raw, p, count * sizeof *p);
        o->value = value;
    } else {
        const fe_tensor *p, *v = NULL, *ax = NULL;
        if ((st = fe_in_const_required(c, n, 1, &p))) return st;
        if (fe_has_in(n, 2) && (st = fe_in_const_required(c, n, 2, &v))) return st;
        if (fe_has_in(n, 3) && (st = fe_in_const_required(c, n, 3, &ax))) return st;
        count = (size_t)p->count;
        if (count > 2 * FE_MAX_RANK) return fe_fail(c, n, LM_ERR_INVALID_FILE, "too many pads");
        for (size_t i = 0; i < count; i++)
            raw[i] = fe_tensor_get_i64(p, i);
        if (v && v->count) o->value = fe_tensor_get_f64(v, 0);
        if (ax) {
            if (ax->count * 2 != count)
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "pads has %zu entries for %llu axes",
                               count, (unsigned long long)ax->count);
            for (uint64_t i = 0; i < ax->count; i++)
                axes[i] = fe_tensor_get_i64(ax, i);
        } else if (count != 2 * (size_t)in->rank) {
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "pads has %zu entries for rank %d", count,
                           in->rank);
        }
        if (ax) {
            int64_t full[2 * FE_MAX_RANK] = {0};
            size_t m = count / 2;
            for (size_t i = 0; i < m; i++) {
                int32_t a;
                if ((st = fe_axis(c, n, axes[i], in->rank, &a))) return st;
                full[a] = raw[i];
                full[a + in->rank] = raw[i + m];
            }
            count = 2 * (size_t)in->rank;
            memcpy(raw, full, sizeof full);
        }
    }
    /* ONNX lists all begins, then all ends; the library pairs them per dim.
     * A negative pad removes elements: the crops come off first, then the
     * pads go on. The order decides the values only where a reflect or wrap
     * pad reaches across a dim that the other side crops, which ONNX leaves
     * open, so that is refused. */
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t b = raw[d], e = raw[d + in->rank], dim = in->dims[d];
        /* (Clamped past the dim: -INT64_MIN does not exist.) */
        int64_t cb = b >= 0 ? 0 : b < -dim ? dim + 1 : -b;
        int64_t ce = e >= 0 ? 0 : e < -dim ? dim + 1 : -e;
        if (cb + ce > dim)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "pads (%lld, %lld) of dim %d remove more than its %lld elements",
                           (long long)b, (long long)e, d, (long long)dim);
        if (cb + ce == dim && (cb || ce))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "pads (%lld, %lld) of dim %d remove all of its %lld elements (an empty "
                           "tensor)",
                           (long long)b, (long long)e, d, (long long)dim);
        if (b > INT32_MAX || e > INT32_MAX)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "pads (%lld, %lld) of dim %d are too large",
                           (long long)b, (long long)e, d);
        if ((cb || ce) && (b > 0 || e > 0) &&
            (o->mode == LMNN_PAD_REFLECT || o->mode == LMNN_PAD_CIRCULAR))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "mode '%s' with pads (%lld, %lld) of dim %d, one side cropped and the "
                           "other padded (ONNX does not say which comes first)",
                           mode, (long long)b, (long long)e, d);
        pads[2 * d] = b > 0 ? (uint32_t)b : 0;
        pads[2 * d + 1] = e > 0 ? (uint32_t)e : 0;
        crops[2 * d] = (uint32_t)cb;
        crops[2 * d + 1] = (uint32_t)ce;
    }
    return LM_OK;
}

static lm_status infer_pad(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 4);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"mode", "pads", "value", NULL});
    uint32_t pads[2 * FE_MAX_RANK], crops[2 * FE_MAX_RANK];
    lmnn_pad_options o;
    if (!st) st = fe_pad_read(c, n, pads, crops, &o);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    int64_t dims[FE_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++)
        dims[d] = in->dims[d] - crops[2 * d] - crops[2 * d + 1] + pads[2 * d] + pads[2 * d + 1];
    return fe_set_out_type(c, n, 0, in->elem, in->rank, dims);
}

static lm_status lower_pad(fe_ctx *c, const fe_node *n) {
    uint32_t pads[2 * FE_MAX_RANK], crops[2 * FE_MAX_RANK];
    lmnn_pad_options o;
    lm_status st = fe_pad_read(c, n, pads, crops, &o);
    lmnn_tensor a, cropped = {0}, r;
    if (!st) st = fe_in_dev(c, n, 0, &a);
    if (st) return st;
    const fe_type *in = fe_in_type(c, n, 0);
    int32_t begins[FE_MAX_RANK], ends[FE_MAX_RANK];
    bool crop = false;
    for (int32_t d = 0; d < in->rank; d++) {
        begins[d] = (int32_t)crops[2 * d];
        ends[d] = (int32_t)(in->dims[d] - crops[2 * d + 1]);
        crop |= crops[2 * d] || crops[2 * d + 1];
    }
    bool pad = false;
    for (int32_t i = 0; i < 2 * in->rank; i++)
        pad |= pads[i] != 0;
    if (crop && (st = lmnn_slice(a, begins, ends, NULL, (uint32_t)in->rank, NULL, &cropped)))
        return fe_nn_fail(c, n, st);
    if (crop && !pad) return fe_out_dev(c, n, 0, cropped);
    st = lmnn_pad(crop ? cropped : a, pads, (uint32_t)in->rank, &o, &r);
    fe_free(cropped);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

const fe_op_def fe_ops_shape[] = {
    {"Constant", infer_constant, NULL, 0, NULL},
    {"Shape", infer_shape, NULL, 0, NULL},
    {"Size", infer_size, NULL, 0, NULL},
    {"ConstantOfShape", infer_constant_of_shape, NULL, 1u << 0, NULL},
    {"Range", infer_range, NULL, 7u, NULL},
    {"Reshape", infer_reshape, lower_reshape_to_out, 1u << 1, reshape_images},
    {"Flatten", infer_flatten, lower_reshape_to_out, 0, reshape_images},
    {"Squeeze", infer_squeeze, lower_reshape_to_out, 1u << 1, reshape_images},
    {"Unsqueeze", infer_unsqueeze, lower_reshape_to_out, 1u << 1, reshape_images},
    {"Transpose", infer_transpose, lower_transpose, 0, transpose_images},
    {"Concat", infer_concat, lower_concat, 0, concat_images},
    {"Slice", infer_slice, lower_slice, 0x1eu, NULL},
    {"Gather", infer_gather, lower_gather, 0, NULL},
    {"GatherElements", infer_gather_elements, lower_gather_elements, 0, NULL},
    {"Expand", infer_expand, lower_expand, 1u << 1, NULL},
    {"Tile", infer_tile, lower_tile, 1u << 1, NULL},
    {"Split", infer_split, lower_split, 1u << 1, NULL},
    {"Pad", infer_pad, lower_pad, 0xeu, NULL},
};
const size_t fe_ops_shape_count = sizeof fe_ops_shape / sizeof fe_ops_shape[0];
