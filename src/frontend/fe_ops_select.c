/* Ops whose output shape is decided by a tensor's values: NonZero, Unique,
 * Compress and NonMaxSuppression. The binary has fixed shapes, so those
 * values must be known when compiling (constants, or graph inputs given
 * with --const; value_inputs says which). NonZero, Unique and
 * NonMaxSuppression then fold on the host. Compress with a known
 * condition is a gather of fixed rows: it runs on the device when its data
 * is computed at run time, and folds when the data is known too.
 *
 * An empty result is an empty constant (nothing runs for it), except
 * Unique's of an empty input, which is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

/* ---- NonZero ---- */

static lm_status infer_nonzero(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    const fe_tensor *x;
    if (!st) st = fe_in_const_required(c, n, 0, &x);
    if (st) return st;
    if (x->elem == FE_STRING)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "string tensors are not supported");
    uint64_t nnz = 0;
    for (uint64_t i = 0; i < x->count; i++)
        nnz += fe_tensor_get_f64(x, i) != 0;
    /* [rank, nnz]: empty for a scalar (no coordinates) or when nothing is
     * nonzero. */
    int64_t dims[2] = {x->rank, (int64_t)nnz};
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_INT64, 2, dims, &t))) return fe_nn_fail(c, n, st);
    /* Row d holds the d-th coordinate of each nonzero element, in row-major
     * order of the elements. */
    uint64_t k = 0;
    for (uint64_t i = 0; i < x->count; i++) {
        if (fe_tensor_get_f64(x, i) == 0) continue;
        uint64_t rest = i;
        for (int32_t d = (int32_t)x->rank - 1; d >= 0; d--) {
            fe_tensor_set_i64(t, (uint64_t)d * nnz + k, (int64_t)(rest % (uint64_t)x->dims[d]));
            rest /= (uint64_t)x->dims[d];
        }
        k++;
    }
    return fe_set_out_const(c, n, 0, t);
}

/* ---- Unique ---- */

/* The tensor seen as `slices` slices along an axis, each `outer` runs of
 * `inner` elements (`stride` apart: the axis's length times inner). */
typedef struct slices {
    const fe_tensor *x;
    uint64_t count, outer, inner;
    bool ints; /* compare as int64 (exact), else as double */
} slices;

static int compare_slices(const slices *s, uint64_t a, uint64_t b) {
    for (uint64_t o = 0; o < s->outer; o++)
        for (uint64_t i = 0; i < s->inner; i++) {
            uint64_t base = o * s->count * s->inner + i;
            uint64_t ia = base + a * s->inner, ib = base + b * s->inner;
            if (s->ints) {
                int64_t va = fe_tensor_get_i64(s->x, ia), vb = fe_tensor_get_i64(s->x, ib);
                if (va != vb) return va < vb ? -1 : 1;
            } else {
                double va = fe_tensor_get_f64(s->x, ia), vb = fe_tensor_get_f64(s->x, ib);
                if (va != vb) return va < vb ? -1 : 1;
            }
        }
    return 0;
}

/* Merge sort of slice numbers by content, stable, so that equal slices keep
 * their order (the first of a run is the first occurrence). */
static void sort_slices(const slices *s, uint64_t *v, uint64_t *tmp, uint64_t count) {
    if (count < 2) return;
    uint64_t half = count / 2;
    sort_slices(s, v, tmp, half);
    sort_slices(s, v + half, tmp, count - half);
    uint64_t i = 0, j = half, k = 0;
    while (i < half && j < count)
        tmp[k++] = compare_slices(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < half)
        tmp[k++] = v[i++];
    while (j < count)
        tmp[k++] = v[j++];
    memcpy(v, tmp, count * sizeof *v);
}

/* Unique's four results: the distinct slices (`first[g]`, in output order),
 * their count, and for each slice its group (`group`) and each group's size. */
typedef struct unique_result {
    uint64_t *first, *group, *size;
    uint64_t groups;
} unique_result;

static lm_status find_unique(const slices *s, bool sorted, unique_result *r) {
    uint64_t k = s->count;
    uint64_t *order = malloc(k * sizeof *order), *tmp = malloc(k * sizeof *tmp);
    r->first = malloc(k * sizeof *r->first);
    r->group = malloc(k * sizeof *r->group);
    r->size = calloc(k, sizeof *r->size);
    if (!order || !tmp || !r->first || !r->group || !r->size) {
        free(order);
        free(tmp);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (uint64_t i = 0; i < k; i++)
        order[i] = i;
    sort_slices(s, order, tmp, k);
    /* Runs of equal slices, in sorted order: rank[i] numbers the run of
     * order[i]. */
    r->groups = 0;
    for (uint64_t i = 0; i < k; i++) {
        if (i == 0 || compare_slices(s, order[i - 1], order[i]) != 0)
            r->first[r->groups++] = order[i];
        r->group[order[i]] = r->groups - 1;
    }
    if (!sorted) {
        /* Groups in the order their first slices come: renumber. */
        uint64_t *renum = tmp, g = 0;
        for (uint64_t i = 0; i < r->groups; i++)
            renum[i] = UINT64_MAX;
        for (uint64_t i = 0; i < k; i++)
            if (renum[r->group[i]] == UINT64_MAX) {
                renum[r->group[i]] = g;
                r->first[g++] = i;
            }
        for (uint64_t i = 0; i < k; i++)
            r->group[i] = renum[r->group[i]];
    }
    for (uint64_t i = 0; i < k; i++)
        r->size[r->group[i]]++;
    free(order);
    free(tmp);
    return LM_OK;
}

static lm_status int_vector(fe_ctx *c, const fe_node *n, uint32_t out, const uint64_t *v,
                            uint64_t count) {
    int64_t dims[1] = {(int64_t)count};
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_INT64, 1, dims, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (uint64_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, i, (int64_t)v[i]);
    return fe_set_out_const(c, n, out, t);
}

static lm_status infer_unique(fe_ctx *c, const fe_node *n) {
    static const char *const known[] = {"axis", "sorted", NULL};
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, known);
    const fe_tensor *x;
    if (!st) st = fe_in_const_required(c, n, 0, &x);
    int64_t sorted, axis;
    if (!st) st = fe_attr_int(c, n, "sorted", 1, &sorted);
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    if (x->elem == FE_STRING)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "string tensors are not supported");
    if (x->count == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "an input with no elements is not supported");
    slices s = {.x = x, .outer = 1, .inner = 1, .ints = !fe_elem_is_float(x->elem)};
    int32_t a = -1;
    if (axis == INT64_MIN) {
        s.count = x->count; /* the flattened input */
    } else {
        if ((st = fe_axis(c, n, axis, (int32_t)x->rank, &a))) return st;
        s.count = (uint64_t)x->dims[a];
        for (int32_t d = 0; d < a; d++)
            s.outer *= (uint64_t)x->dims[d];
        for (uint32_t d = (uint32_t)a + 1; d < x->rank; d++)
            s.inner *= (uint64_t)x->dims[d];
    }
    unique_result r = {0};
    st = find_unique(&s, sorted != 0, &r);
    /* Y: the first slice of each group, along the axis (or flat). */
    int64_t dims[FE_MAX_RANK] = {(int64_t)r.groups};
    uint32_t rank = 1;
    if (a >= 0) {
        rank = x->rank;
        memcpy(dims, x->dims, rank * sizeof *dims);
        dims[a] = (int64_t)r.groups;
    }
    fe_tensor *y = NULL;
    if (!st && (st = fe_const_new(c, x->elem, rank, dims, &y))) st = fe_nn_fail(c, n, st);
    if (!st) {
        size_t es = fe_elem_size(x->elem);
        char *dst = (char *)y->data;
        for (uint64_t o = 0; o < s.outer; o++)
            for (uint64_t g = 0; g < r.groups; g++) {
                memcpy(dst, (const char *)x->data + ((o * s.count + r.first[g]) * s.inner) * es,
                       s.inner * es);
                dst += s.inner * es;
            }
        st = fe_set_out_const(c, n, 0, y);
    }
    if (!st && n->output_count > 1) st = int_vector(c, n, 1, r.first, r.groups);
    if (!st && n->output_count > 2) st = int_vector(c, n, 2, r.group, s.count);
    if (!st && n->output_count > 3) st = int_vector(c, n, 3, r.size, r.groups);
    free(r.first);
    free(r.group);
    free(r.size);
    return st;
}

/* ---- Compress ---- */

typedef struct compress_geom {
    int32_t axis;   /* -1: the flattened input */
    int64_t length; /* the axis's length (or the element count) */
    int64_t *keep;  /* the positions kept, in order (arena) */
    int64_t kept;
} compress_geom;

static lm_status compress_geom_of(fe_ctx *c, const fe_node *n, compress_geom *g) {
    static const char *const known[] = {"axis", NULL};
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, known);
    const fe_tensor *cond;
    if (!st) st = fe_in_const_required(c, n, 1, &cond);
    int64_t axis;
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (cond->rank != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "condition must be 1-D, given rank %u",
                       cond->rank);
    g->axis = -1;
    g->length = fe_type_volume(x);
    if (axis != INT64_MIN) {
        if ((st = fe_axis(c, n, axis, x->rank, &g->axis))) return st;
        g->length = x->dims[g->axis];
    }
    /* A condition shorter than the axis drops what it does not reach;
     * longer, its extra entries would select nothing there is. */
    if ((int64_t)cond->count > g->length)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "condition has %llu entries but the %s has %lld",
                       (unsigned long long)cond->count, g->axis < 0 ? "flattened input" : "axis",
                       (long long)g->length);
    g->keep = fe_arena_alloc(&c->g->arena, (cond->count ? cond->count : 1) * sizeof *g->keep);
    if (!g->keep) return fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
    g->kept = 0;
    for (uint64_t i = 0; i < cond->count; i++)
        if (fe_tensor_get_f64(cond, i) != 0) g->keep[g->kept++] = (int64_t)i;
    return LM_OK; /* kept may be 0: an empty result */
}

static lm_status infer_compress(fe_ctx *c, const fe_node *n) {
    compress_geom g;
    lm_status st = compress_geom_of(c, n, &g);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t dims[FE_MAX_RANK] = {g.kept};
    int32_t rank = 1;
    if (g.axis >= 0) {
        rank = x->rank;
        memcpy(dims, x->dims, (size_t)rank * sizeof *dims);
        dims[g.axis] = g.kept;
    }
    const fe_tensor *kx = fe_in_const(c, n, 0);
    if (!kx) return fe_set_out_type(c, n, 0, x->elem, rank, dims);
    /* Known data: the kept slices, copied. */
    fe_tensor *t;
    if ((st = fe_const_new(c, kx->elem, (uint32_t)rank, dims, &t))) return fe_nn_fail(c, n, st);
    uint64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < g.axis; d++)
        outer *= (uint64_t)x->dims[d];
    for (int32_t d = g.axis + 1; g.axis >= 0 && d < x->rank; d++)
        inner *= (uint64_t)x->dims[d];
    size_t es = fe_elem_size(kx->elem);
    char *dst = (char *)t->data;
    for (uint64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < g.kept; k++) {
            uint64_t at = (o * (uint64_t)g.length + (uint64_t)g.keep[k]) * inner;
            memcpy(dst, (const char *)kx->data + at * es, inner * es);
            dst += inner * es;
        }
    return fe_set_out_const(c, n, 0, t);
}

/* Run-time data: the kept positions as a row-major index table, then one
 * index_select along the axis (of the flattened data without one). */
static lm_status lower_compress(fe_ctx *c, const fe_node *n) {
    compress_geom g;
    lm_status st = compress_geom_of(c, n, &g);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    fe_tensor *table;
    int64_t kept = g.kept;
    if ((st = fe_const_new(c, FE_INT64, 1, &kept, &table))) return fe_nn_fail(c, n, st);
    for (int64_t k = 0; k < kept; k++)
        fe_tensor_set_i64(table, (uint64_t)k, g.keep[k]);
    lmnn_tensor d, idx, flat = {0}, r;
    if ((st = fe_aux(c, n, 0, table, LMNN_ROW_MAJOR, &idx))) return st;
    if ((st = fe_in_dev(c, n, 0, &d))) return st;
    int32_t axis = g.axis;
    if (axis < 0) {
        int64_t count = fe_type_volume(x);
        lmnn_shape s1 = fe_shape(1, &count);
        if ((st = lmnn_reshape(d, &s1, NULL, &flat))) return fe_nn_fail(c, n, st);
        d = flat;
        axis = 0;
    }
    st = lmnn_index_select(d, axis, idx, NULL, &r);
    fe_free(flat);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- NonMaxSuppression ---- */

/* Box `i` of batch b as corners (y1 <= y2, x1 <= x2). */
static void nms_box(const fe_tensor *boxes, int64_t n, int64_t b, int64_t i, bool center,
                    double out[4]) {
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = fe_tensor_get_f64(boxes, (uint64_t)((b * n + i) * 4 + k));
    if (center) { /* [x_center, y_center, width, height] */
        out[0] = v[1] - v[3] / 2;
        out[1] = v[0] - v[2] / 2;
        out[2] = v[1] + v[3] / 2;
        out[3] = v[0] + v[2] / 2;
    } else { /* [y1, x1, y2, x2], either diagonal */
        out[0] = v[0] < v[2] ? v[0] : v[2];
        out[1] = v[1] < v[3] ? v[1] : v[3];
        out[2] = v[0] < v[2] ? v[2] : v[0];
        out[3] = v[1] < v[3] ? v[3] : v[1];
    }
}

static double nms_iou(const double a[4], const double b[4]) {
    double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0 || area_b <= 0) return 0;
    double h = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
    double w = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
    if (h <= 0 || w <= 0) return 0;
    return h * w / (area_a + area_b - h * w);
}

typedef struct nms_candidate {
    double score;
    int64_t index;
} nms_candidate;

/* Higher scores first; equal scores in box order. */
static int nms_order(const void *pa, const void *pb) {
    const nms_candidate *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* An optional scalar input's value, or `def`. */
static lm_status nms_scalar(fe_ctx *c, const fe_node *n, uint32_t i, double def, double *out) {
    *out = def;
    if (!fe_has_in(n, i)) return LM_OK;
    const fe_tensor *t;
    lm_status st = fe_in_const_required(c, n, i, &t);
    if (st) return st;
    if (t->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be one value", i);
    *out = fe_tensor_get_f64(t, 0);
    return LM_OK;
}

/* Greedy selection per batch entry and class, on the host: the boxes and
 * scores decide how many indices come out, so they must be known. */
static lm_status infer_nms(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 5);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"center_point_box", NULL});
    const fe_tensor *boxes = NULL, *scores = NULL;
    if (!st) st = fe_in_const_required(c, n, 0, &boxes);
    if (!st) st = fe_in_const_required(c, n, 1, &scores);
    int64_t center;
    double max_out, iou_max, score_min;
    if (!st) st = fe_attr_int(c, n, "center_point_box", 0, &center);
    if (!st) st = nms_scalar(c, n, 2, 0, &max_out);
    if (!st) st = nms_scalar(c, n, 3, 0, &iou_max);
    if (!st) st = nms_scalar(c, n, 4, -INFINITY, &score_min);
    if (st) return st;
    if (center != 0 && center != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "center_point_box must be 0 or 1, given %lld",
                       (long long)center);
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
        scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]");
    if (!fe_elem_is_float(boxes->elem) || !fe_elem_is_float(scores->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "boxes and scores must be float");
    int64_t batches = boxes->dims[0], count = boxes->dims[1], classes = scores->dims[1];
    uint64_t per_class = max_out < 0               ? 0
                         : max_out > (double)count ? (uint64_t)count
                                                   : (uint64_t)max_out;
    uint64_t cap = (uint64_t)(batches * classes) * per_class;
    nms_candidate *cand = malloc((size_t)(count ? count : 1) * sizeof *cand);
    double(*corners)[4] = malloc((size_t)(count ? count : 1) * sizeof *corners);
    int64_t *picked = malloc((size_t)(cap ? cap : 1) * 3 * sizeof *picked);
    if (!cand || !corners || !picked) {
        st = fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
        goto done;
    }
    uint64_t total = 0;
    for (int64_t b = 0; b < batches; b++) {
        for (int64_t i = 0; i < count; i++)
            nms_box(boxes, count, b, i, center == 1, corners[i]);
        for (int64_t k = 0; k < classes; k++) {
            int64_t m = 0;
            for (int64_t i = 0; i < count; i++) {
                double sc = fe_tensor_get_f64(scores, (uint64_t)((b * classes + k) * count + i));
                if (sc > score_min) cand[m++] = (nms_candidate){sc, i};
            }
            qsort(cand, (size_t)m, sizeof *cand, nms_order);
            uint64_t kept = 0, first = total;
            for (int64_t j = 0; j < m && kept < per_class; j++) {
                bool keep = true;
                for (uint64_t q = first; keep && q < total; q++)
                    keep = nms_iou(corners[cand[j].index], corners[picked[3 * q + 2]]) <= iou_max;
                if (!keep) continue;
                picked[3 * total] = b;
                picked[3 * total + 1] = k;
                picked[3 * total + 2] = cand[j].index;
                total++;
                kept++;
            }
        }
    }
    int64_t dims[2] = {(int64_t)total, 3};
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_INT64, 2, dims, &t))) goto done;
    for (uint64_t i = 0; i < 3 * total; i++)
        fe_tensor_set_i64(t, i, picked[i]);
    st = fe_set_out_const(c, n, 0, t);
done:
    free(cand);
    free(corners);
    free(picked);
    return st;
}

const fe_op_def fe_ops_select[] = {
    {"NonZero", infer_nonzero, NULL, 1u << 0, NULL},
    {"Unique", infer_unique, NULL, 1u << 0, NULL},
    {"Compress", infer_compress, lower_compress, 1u << 1, NULL},
    {"NonMaxSuppression", infer_nms, NULL, 0x1fu, NULL},
};
const size_t fe_ops_select_count = sizeof fe_ops_select / sizeof fe_ops_select[0];
