/* Indexing by tensors the run gives: GatherND, ScatterND, ScatterElements,
 * Scatter and ReverseSequence.
 *
 * Indices become row numbers of the data seen as a matrix [R, rest]: for an
 * index tuple, a weighted sum of its entries with the row strides (plus a
 * batch's first row); for ScatterElements, an element's own position with
 * the indexed coordinate replaced. They are worked out on the device in
 * float32, exact below 2^24 rows. A gather is then one index_select of
 * whole rows. A scatter without reduction moves the update rows into a
 * copy of the data in index order (lmnn_scatter_rows); with add it is a
 * product with the one-hot matrix of the rows (each update lands where its
 * row number equals the data row's), added to the data; mul, max and min
 * combine one update after another, in index order. */
#include <math.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* ---- GatherND ---- */

typedef struct gnd_geom {
    int64_t batch_dims, k;       /* leading batch dims; index tuple length */
    int64_t m;                   /* index tuples */
    int64_t rows, rest;          /* the data as [rows, rest] */
    int64_t batches;             /* prod of the batch dims */
    int64_t stride[FE_MAX_RANK]; /* row stride of tuple entry j */
    int64_t dim[FE_MAX_RANK];    /* the dim tuple entry j indexes */
} gnd_geom;

static lm_status gnd_geom_of(fe_ctx *c, const fe_node *n, gnd_geom *g) {
    int64_t b;
    lm_status st = fe_attr_int(c, n, "batch_dims", 0, &b);
    if (st) return st;
    const fe_type *d = fe_in_type(c, n, 0), *i = fe_in_type(c, n, 1);
    if (i->elem != FE_INT64 && i->elem != FE_INT32)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "indices must be int32 or int64, given %s",
                       fe_elem_name(i->elem));
    if (d->rank < 1 || i->rank < 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "data and indices must have rank >= 1");
    int64_t k = i->dims[i->rank - 1];
    if (b < 0 || b >= d->rank || b >= i->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "batch_dims=%lld must be below both ranks (%d, %d)", (long long)b, d->rank,
                       i->rank);
    if (k < 1 || k > d->rank - b)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "index tuples of %lld entries for data of rank %d with %lld batch dims",
                       (long long)k, d->rank, (long long)b);
    g->batch_dims = b;
    g->k = k;
    g->batches = 1;
    for (int64_t j = 0; j < b; j++) {
        if (d->dims[j] != i->dims[j])
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "batch dim %lld is %lld in data and %lld in indices", (long long)j,
                           (long long)d->dims[j], (long long)i->dims[j]);
        g->batches *= d->dims[j];
    }
    g->m = 1;
    for (int32_t j = 0; j < i->rank - 1; j++)
        g->m *= i->dims[j];
    g->rows = g->batches;
    g->rest = 1;
    for (int64_t j = b; j < b + k; j++)
        g->rows *= d->dims[j];
    for (int32_t j = (int32_t)(b + k); j < d->rank; j++)
        g->rest *= d->dims[j];
    if (g->rows >= ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "the indexed dims hold %lld rows (at most 2^24: row numbers are computed "
                       "in float32)",
                       (long long)g->rows);
    int64_t s = 1;
    for (int64_t j = k - 1; j >= 0; j--) {
        g->dim[j] = d->dims[b + j];
        g->stride[j] = s;
        s *= d->dims[b + j];
    }
    return LM_OK;
}

lm_status fe_check_const_indices(fe_ctx *c, const fe_node *n, uint32_t i, bool tuples, int64_t k,
                                 int32_t first, const int64_t *dims) {
    const fe_tensor *t = fe_in_const(c, n, i);
    for (uint64_t e = 0; t && e < t->count; e++) {
        int64_t v = fe_tensor_get_i64(t, e), j = (int64_t)(e % (uint64_t)k);
        if (v >= -dims[j] && v < dims[j]) continue;
        if (!tuples)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "element %llu of the indices is %lld, outside dim %d of size %lld",
                           (unsigned long long)e, (long long)v, first, (long long)dims[0]);
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "index tuple %llu: entry %lld is %lld, outside dim %lld of size %lld",
                       (unsigned long long)(e / (uint64_t)k), (long long)j, (long long)v,
                       (long long)(first + j), (long long)dims[j]);
    }
    return LM_OK;
}

static lm_status infer_gathernd(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"batch_dims", NULL});
    gnd_geom g;
    if (!st) st = gnd_geom_of(c, n, &g);
    if (!st) st = fe_check_const_indices(c, n, 1, true, g.k, (int32_t)g.batch_dims, g.dim);
    if (st) return st;
    const fe_type *d = fe_in_type(c, n, 0), *i = fe_in_type(c, n, 1);
    int64_t dims[FE_MAX_RANK];
    int32_t r = 0;
    for (int32_t j = 0; j < i->rank - 1; j++)
        dims[r++] = i->dims[j];
    for (int32_t j = (int32_t)(g.batch_dims + g.k); j < d->rank; j++)
        dims[r++] = d->dims[j];
    if (r > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the output has rank %d (at most %d)", r,
                       FE_MAX_RANK);
    return fe_set_out_type(c, n, 0, d->elem, r, dims);
}

/* *acc += term (term freed; *acc taken over when empty). */
static lm_status acc_add(lmnn_tensor *acc, lmnn_tensor term) {
    if (!acc->id) {
        *acc = term;
        return LM_OK;
    }
    lmnn_tensor sum;
    lm_status st = lmnn_binary(LMNN_BINARY_ADD, *acc, term, NULL, &sum);
    fe_free(term);
    if (st) return st;
    fe_free(*acc);
    *acc = sum;
    return LM_OK;
}

/* *acc += the node's float constant k (uploaded once, aux slot `slot`). */
static lm_status add_rows_const(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *k,
                                lmnn_tensor *acc) {
    lmnn_tensor o;
    lm_status st = fe_aux_f32(c, n, slot, k, &o);
    if (st) return st;
    lmnn_tensor sum;
    if ((st = lmnn_binary(LMNN_BINARY_ADD, *acc, o, NULL, &sum))) return fe_nn_fail(c, n, st);
    fe_free(*acc);
    *acc = sum;
    return LM_OK;
}

/* Index tuples `t` ([m, k] float; freed here) as row numbers: a new float
 * tensor [m, 1], plus `base` ([m, 1] float, a row per tuple) when given.
 * A negative entry counts from the end of its dim; a tuple with an entry
 * outside its dim ([-dim, dim)) gets row -1, which selects zeros and
 * scatters nothing, rather than landing in another row. Errors name the
 * node. */
static lm_status tuple_rows_of(fe_ctx *c, const fe_node *n, lmnn_tensor t, const gnd_geom *g,
                               const fe_tensor *base, lmnn_tensor *out) {
    lmnn_tensor acc = {0}, bad = {0};
    lm_status st = LM_OK;
    for (int64_t j = 0; j < g->k && !st; j++) {
        /* entry j, made positive (+ dim where negative), times its stride;
         * outside the dim when still below 0 or at dim and past */
        int32_t b[2] = {0, (int32_t)j}, e[2] = {(int32_t)g->m, (int32_t)j + 1};
        double dim = (double)g->dim[j];
        lmnn_tensor col = {0}, neg = {0}, fix = {0}, pos = {0}, term = {0}, lo = {0}, hi = {0};
        lmnn_tensor out_j = {0};
        if (!(st = lmnn_slice(t, b, e, NULL, 2, NULL, &col)) &&
            !(st = lmnn_binary_scalar(LMNN_BINARY_LT, col, 0.0, NULL, &neg)) &&
            !(st = lmnn_binary_scalar(LMNN_BINARY_MUL, neg, dim, NULL, &fix)) &&
            !(st = lmnn_binary(LMNN_BINARY_ADD, col, fix, NULL, &pos)) &&
            !(st = lmnn_binary_scalar(LMNN_BINARY_MUL, pos, (double)g->stride[j], NULL, &term)) &&
            !(st = acc_add(&acc, term)) &&
            !(st = lmnn_binary_scalar(LMNN_BINARY_LT, pos, 0.0, NULL, &lo)) &&
            !(st = lmnn_binary_scalar(LMNN_BINARY_GE, pos, dim, NULL, &hi)) &&
            !(st = lmnn_binary(LMNN_BINARY_ADD, lo, hi, NULL, &out_j)))
            st = acc_add(&bad, out_j);
        lmnn_tensor junk[] = {col, neg, fix, pos, lo, hi};
        for (size_t q = 0; q < sizeof junk / sizeof junk[0]; q++)
            fe_free(junk[q]);
    }
    fe_free(t);
    if (st) st = fe_nn_fail(c, n, st);
    if (!st && g->batch_dims) {
        /* + the batch's first row: tuple m belongs to batch m / (m / batches) */
        fe_tensor *off;
        int64_t dims[2] = {g->m, 1}, per = g->m / g->batches, span = g->rows / g->batches;
        if (!(st = fe_const_new(c, FE_FLOAT, 2, dims, &off))) {
            for (int64_t r = 0; r < g->m; r++)
                fe_tensor_set_f64(off, (uint64_t)r, (double)(r / per * span));
            st = add_rows_const(c, n, 0, off, &acc);
        }
    }
    if (!st && base) st = add_rows_const(c, n, 4, base, &acc);
    if (!st) {
        /* -1 where any entry was outside its dim */
        fe_tensor *k;
        lmnn_tensor minus = {0}, rows;
        if (!(st = fe_const_new(c, FE_FLOAT, 2, (int64_t[]){1, 1}, &k))) {
            fe_tensor_set_f64(k, 0, -1.0);
            st = fe_aux_f32(c, n, 5, k, &minus);
        }
        if (!st && (st = lmnn_where(bad, minus, acc, &rows))) st = fe_nn_fail(c, n, st);
        if (!st) {
            fe_free(acc);
            acc = rows;
        }
    }
    fe_free(bad);
    if (st) {
        fe_free(acc);
        return st;
    }
    *out = acc;
    return LM_OK;
}

/* The same for input i's tuples ([.., k]). */
static lm_status tuple_rows(fe_ctx *c, const fe_node *n, uint32_t i, const gnd_geom *g,
                            lmnn_tensor *out) {
    lmnn_tensor t;
    lm_status st = fe_in_float_as(c, n, i, 2, (int64_t[]){g->m, g->k}, &t);
    return st ? st : tuple_rows_of(c, n, t, g, NULL, out);
}

lm_status fe_rows_index(lmnn_tensor rows, int64_t m, lmnn_tensor *out) {
    lmnn_tensor i32 = {0}, rm = {0};
    lmnn_shape flat = fe_shape(1, &m);
    lm_status st = lmnn_typecast(rows, LMNN_INT32, &i32);
    if (!st) st = lmnn_to_layout(i32, LMNN_ROW_MAJOR, &rm);
    if (!st) st = lmnn_reshape(rm, &flat, NULL, out);
    fe_free(i32);
    fe_free(rm);
    return st;
}

static lm_status lower_gathernd(fe_ctx *c, const fe_node *n) {
    gnd_geom g;
    lm_status st = gnd_geom_of(c, n, &g);
    if (st) return st;
    lmnn_tensor d, d2 = {0}, rows = {0}, r = {0}, y;
    if ((st = fe_in_dev(c, n, 0, &d))) return st;
    lmnn_shape matrix = fe_shape(2, (int64_t[]){g.rows, g.rest});
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    lmnn_shape so = fe_shape(o->rank, o->dims);
    lmnn_tensor fr;
    if ((st = tuple_rows(c, n, 1, &g, &fr))) return st;
    if (!(st = fe_rows_index(fr, g.m, &rows)) && !(st = lmnn_reshape(d, &matrix, NULL, &d2)) &&
        !(st = lmnn_index_select(d2, 0, rows, NULL, &r)))
        st = lmnn_reshape(r, &so, NULL, &y);
    fe_free(fr);
    fe_free(d2);
    fe_free(rows);
    fe_free(r);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

/* ---- scatters ---- */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

/* Updates combined one after another (mul, max, min): at most this many,
 * each a few launches. */
enum { SCATTER_SERIAL_MAX = 4096 };

static lm_status read_reduction(fe_ctx *c, const fe_node *n, reduction *out) {
    static const char *const names[] = {"none", "add", "mul", "max", "min", NULL};
    int r = 0;
    lm_status st = fe_attr_choice(c, n, "reduction", "none", names, &r);
    if (!st) *out = (reduction)r;
    return st;
}

/* The sizes a scatter of m updates into `rows` rows (elements, for
 * ScatterElements: `what`) takes: row numbers are computed in float32,
 * exact below 2^24; a reduction runs over every (update, row) pair, a
 * replacement moves only the updates. */
static lm_status scatter_limits(fe_ctx *c, const fe_node *n, int64_t rows, int64_t m,
                                const char *what) {
    reduction red = RED_NONE;
    lm_status st = read_reduction(c, n, &red);
    if (st) return st;
    if (rows >= ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "%lld updates into %lld %s (at most 2^24 %s)",
                       (long long)m, (long long)rows, what, what);
    if (red != RED_NONE && rows * m > ((int64_t)1 << 26))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld updates into %lld %s with a reduction (at most 2^26 pairs of them)",
                       (long long)m, (long long)rows, what);
    return LM_OK;
}

/* A host table uploaded once: [rows, cols] float with element (i, j) =
 * i + j (an arange along whichever dim is longer than 1). */
static lm_status arange_table(fe_ctx *c, const fe_node *n, uint32_t slot, int64_t rows,
                              int64_t cols, lmnn_tensor *out) {
    fe_tensor *t;
    int64_t dims[2] = {rows, cols};
    lm_status st = fe_const_new(c, FE_FLOAT, 2, dims, &t);
    if (st) return st;
    for (int64_t i = 0; i < rows * cols; i++)
        fe_tensor_set_f64(t, (uint64_t)i, (double)i);
    return fe_aux_f32(c, n, slot, t, out);
}

/* Where a scatter's M updates go: float row numbers ([M, 1], `rows`), or
 * for a replacement an int32 row-major index of M entries that
 * lmnn_scatter_rows maps to rows itself (`index`, with index_dim, row_scale
 * and `offsets` as lmnn_scatter_options has them), which spares the
 * launches of the arithmetic (every index_step-th element of `index` an
 * entry). `offsets` is borrowed (a node's constant, fe_aux), `index` owned
 * when index_owned, `rows` owned. */
typedef struct scatter_to {
    lmnn_tensor rows, index, offsets;
    bool index_owned;
    uint32_t index_dim, row_scale, index_step;
} scatter_to;

static void scatter_to_free(scatter_to *to) {
    fe_free(to->rows);
    if (to->index_owned) fe_free(to->index);
}

/* data [N, rest] with updates [M, rest] put where `to` says, combined by
 * `red`: a new tensor in *out. */
static lm_status scatter_rows(fe_ctx *c, const fe_node *n, lmnn_tensor data, const scatter_to *to,
                              lmnn_tensor upd, int64_t N, int64_t M, int64_t rest, reduction red,
                              lmnn_tensor *out) {
    lm_status st;
    lmnn_tensor rows = to->rows;
    if (red == RED_NONE) {
        /* Rows replaced in index order: one device op moves them. */
        lmnn_tensor idx = {0}, d = data, u = upd, d16 = {0}, u16 = {0};
        lmnn_tensor_info di, ui;
        if ((st = lmnn_tensor_get_info(data, &di)) || (st = lmnn_tensor_get_info(upd, &ui)))
            return st;
        if (di.dtype == LMNN_BFLOAT8_B && !(st = lmnn_typecast(data, LMNN_BFLOAT16, &d16)))
            d = d16, di.dtype = LMNN_BFLOAT16;
        if (!st && ui.dtype != di.dtype && !(st = lmnn_typecast(upd, di.dtype, &u16))) u = u16;
        lmnn_scatter_options so;
        lmnn_scatter_options_init(&so);
        if (to->index.id) {
            so.index_dim = to->index_dim;
            so.row_scale = to->row_scale;
            so.index_step = to->index_step;
            so.offsets = to->offsets;
        } else if (!st) {
            st = fe_rows_index(rows, M, &idx);
        }
        if (!st) st = lmnn_scatter_rows(d, to->index.id ? to->index : idx, u, &so, out);
        fe_free(idx);
        fe_free(d16);
        fe_free(u16);
        return st;
    }
    if (red == RED_ADD) {
        /* oh [M, N]: update m lands on row n; oh^T upd sums what lands. */
        lmnn_tensor cols, oh = {0}, s = {0};
        lmnn_matmul_options mo;
        lmnn_matmul_options_init(&mo);
        mo.transpose_a = true;
        if (!(st = arange_table(c, n, 1, 1, N, &cols)) &&
            !(st = lmnn_binary(LMNN_BINARY_EQ, rows, cols, NULL, &oh)) &&
            !(st = lmnn_matmul(oh, upd, &mo, &s)))
            st = lmnn_binary(LMNN_BINARY_ADD, data, s, NULL, out);
        fe_free(oh);
        fe_free(s);
        return st;
    }
    if (M > SCATTER_SERIAL_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld updates with a reduction other than add (at most %d: each is its own "
                       "few launches)",
                       (long long)M, SCATTER_SERIAL_MAX);
    lmnn_tensor col, cur = {0};
    if ((st = arange_table(c, n, 3, N, 1, &col)) ||
        (st = lmnn_reshape(data, &(lmnn_shape){.rank = 2, .dims = {(uint32_t)N, (uint32_t)rest}},
                           NULL, &cur)))
        return st;
    for (int64_t m = 0; m < M && !st; m++) {
        /* cur += (row == r_m) * (combine(cur, upd_m) - cur) */
        int32_t rb[2] = {(int32_t)m, 0}, re[2] = {(int32_t)m + 1, 1};
        int32_t ub[2] = {(int32_t)m, 0}, ue[2] = {(int32_t)m + 1, (int32_t)rest};
        lmnn_tensor r = {0}, oh = {0}, u = {0}, comb = {0}, d = {0}, od = {0}, next;
        lmnn_binary_op op = red == RED_MUL   ? LMNN_BINARY_MUL
                            : red == RED_MAX ? LMNN_BINARY_MAXIMUM
                                             : LMNN_BINARY_MINIMUM;
        if (!(st = lmnn_slice(rows, rb, re, NULL, 2, NULL, &r)) &&
            !(st = lmnn_binary(LMNN_BINARY_EQ, col, r, NULL, &oh)) &&
            !(st = lmnn_slice(upd, ub, ue, NULL, 2, NULL, &u)) &&
            !(st = lmnn_binary(op, cur, u, NULL, &comb)) &&
            !(st = lmnn_binary(LMNN_BINARY_SUB, comb, cur, NULL, &d)) &&
            !(st = lmnn_binary(LMNN_BINARY_MUL, oh, d, NULL, &od)) &&
            !(st = lmnn_binary(LMNN_BINARY_ADD, cur, od, NULL, &next))) {
            fe_free(cur);
            cur = next;
        }
        fe_free(r);
        fe_free(oh);
        fe_free(u);
        fe_free(comb);
        fe_free(d);
        fe_free(od);
    }
    if (st) {
        fe_free(cur);
        return st;
    }
    *out = cur;
    return LM_OK;
}

static lm_status scatter_check_elems(fe_ctx *c, const fe_node *n) {
    const fe_type *d = fe_in_type(c, n, 0), *i = fe_in_type(c, n, 1), *u = fe_in_type(c, n, 2);
    if (i->elem != FE_INT64 && i->elem != FE_INT32)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "indices must be int32 or int64, given %s",
                       fe_elem_name(i->elem));
    if (u->elem != d->elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "updates are %s, data %s", fe_elem_name(u->elem),
                       fe_elem_name(d->elem));
    if (!fe_elem_is_numeric(d->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "data must be a number tensor");
    return LM_OK;
}

/* ScatterND: data [N, rest] (N the first k dims), updates [M, rest]. */
static lm_status scatternd_geom(fe_ctx *c, const fe_node *n, gnd_geom *g) {
    const fe_type *d = fe_in_type(c, n, 0), *i = fe_in_type(c, n, 1), *u = fe_in_type(c, n, 2);
    memset(g, 0, sizeof *g);
    lm_status st = scatter_check_elems(c, n);
    if (st) return st;
    if (d->rank < 1 || i->rank < 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "data and indices must have rank >= 1");
    g->k = i->dims[i->rank - 1];
    if (g->k < 1 || g->k > d->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "index tuples of %lld entries for data of rank %d", (long long)g->k,
                       d->rank);
    /* updates = indices.shape[:-1] + data.shape[k:] */
    bool ok = u->rank == i->rank - 1 + d->rank - (int32_t)g->k;
    for (int32_t j = 0; ok && j < i->rank - 1; j++)
        ok = u->dims[j] == i->dims[j];
    for (int32_t j = 0; ok && j < d->rank - (int32_t)g->k; j++)
        ok = u->dims[i->rank - 1 + j] == d->dims[g->k + j];
    if (!ok)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "updates must have the shape of indices without its last dim, then the "
                       "data's dims past the first %lld",
                       (long long)g->k);
    g->batches = 1;
    g->m = 1;
    for (int32_t j = 0; j < i->rank - 1; j++)
        g->m *= i->dims[j];
    g->rows = 1;
    g->rest = 1;
    for (int32_t j = 0; j < d->rank; j++)
        *(j < g->k ? &g->rows : &g->rest) *= d->dims[j];
    int64_t s = 1;
    for (int64_t j = g->k - 1; j >= 0; j--) {
        g->dim[j] = d->dims[j];
        g->stride[j] = s;
        s *= d->dims[j];
    }
    return scatter_limits(c, n, g->rows, g->m, "rows");
}

static lm_status infer_scatter_common(fe_ctx *c, const fe_node *n, bool nd) {
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st)
        st = fe_check_attrs(c, n,
                            nd ? (const char *const[]){"reduction", NULL}
                               : (const char *const[]){"axis", "reduction", NULL});
    reduction red = RED_NONE;
    if (!st) st = read_reduction(c, n, &red);
    if (st) return st;
    const fe_type *d = fe_in_type(c, n, 0);
    return fe_set_out_type(c, n, 0, d->elem, d->rank, d->dims);
}

/* One update combined into what the data holds. */
static double combine_f(reduction red, double a, double b) {
    switch (red) {
    case RED_ADD:
        return a + b;
    case RED_MUL:
        return a * b;
    case RED_MAX:
        return a != a || b != b ? NAN : a > b ? a : b;
    case RED_MIN:
        return a != a || b != b ? NAN : a < b ? a : b;
    default:
        return b;
    }
}

static int64_t combine_i(reduction red, int64_t a, int64_t b) {
    switch (red) {
    case RED_ADD:
        return (int64_t)((uint64_t)a + (uint64_t)b);
    case RED_MUL:
        return (int64_t)((uint64_t)a * (uint64_t)b);
    case RED_MAX:
        return a > b ? a : b;
    case RED_MIN:
        return a < b ? a : b;
    default:
        return b;
    }
}

/* A scatter's fold starts from a copy of its constant data (input 0). */
static lm_status fold_start(fe_ctx *c, const fe_node *n, fe_tensor **out) {
    const fe_tensor *d = fe_in_const(c, n, 0);
    lm_status st = fe_const_new(c, d->elem, d->rank, d->dims, out);
    if (!st) memcpy((void *)(*out)->data, d->data, (size_t)d->count * fe_elem_size(d->elem));
    return st;
}

/* Element `to` of o combined by `red` with element `from` of u. */
static void fold_combine(fe_tensor *o, uint64_t to, const fe_tensor *u, uint64_t from,
                         reduction red) {
    if (fe_elem_is_float(o->elem))
        fe_tensor_set_f64(o, to,
                          combine_f(red, fe_tensor_get_f64(o, to), fe_tensor_get_f64(u, from)));
    else
        fe_tensor_set_i64(o, to,
                          combine_i(red, fe_tensor_get_i64(o, to), fe_tensor_get_i64(u, from)));
}

/* ScatterND of constants, on the host (exporters build attention masks and
 * padded index tables this way from shapes alone). */
static lm_status fold_scatternd(fe_ctx *c, const fe_node *n, const gnd_geom *g, reduction red) {
    const fe_tensor *idx = fe_in_const(c, n, 1), *u = fe_in_const(c, n, 2);
    fe_tensor *o;
    lm_status st = fold_start(c, n, &o);
    if (st) return st;
    for (int64_t m = 0; m < g->m; m++) {
        int64_t row = 0;
        for (int64_t j = 0; j < g->k; j++) {
            int64_t v = fe_tensor_get_i64(idx, (uint64_t)(m * g->k + j));
            row += (v < 0 ? v + g->dim[j] : v) * g->stride[j];
        }
        for (int64_t e = 0; e < g->rest; e++)
            fold_combine(o, (uint64_t)(row * g->rest + e), u, (uint64_t)(m * g->rest + e), red);
    }
    return fe_set_out_const(c, n, 0, o);
}

static lm_status infer_scatternd(fe_ctx *c, const fe_node *n) {
    lm_status st = infer_scatter_common(c, n, true);
    gnd_geom g;
    if (!st) st = scatternd_geom(c, n, &g);
    if (!st) st = fe_check_const_indices(c, n, 1, true, g.k, 0, g.dim);
    reduction red = RED_NONE;
    if (!st) st = read_reduction(c, n, &red);
    if (st || !fe_in_const(c, n, 0) || !fe_in_const(c, n, 1) || !fe_in_const(c, n, 2)) return st;
    return fold_scatternd(c, n, &g, red);
}

/* Input 1 ([m, rest] seen so; of a row's entries the first stands for
 * all) as the scatter's int32 row-major index: the form held so, read in
 * place (every rest-th element an entry: `to`'s index_step). */
static lm_status index_entries(fe_ctx *c, const fe_node *n, int64_t rest, scatter_to *to) {
    to->index_step = (uint32_t)rest;
    return fe_in_dev_rm(c, n, 1, LMNN_INT32, &to->index, &to->index_owned);
}

/* Data (input 0, as [N, rest]) with updates (input 2, as [M, rest]) put
 * where `to` says (its tensors freed here), as output 0. */
static lm_status scatter_out(fe_ctx *c, const fe_node *n, scatter_to *to, int64_t N, int64_t M,
                             int64_t rest, reduction red) {
    lmnn_tensor data = {0}, upd = {0}, y = {0};
    const fe_type *d = fe_in_type(c, n, 0), *u = fe_in_type(c, n, 2);
    lm_status st;
    if (red == RED_NONE && to->index.id && d->rank >= 2 && u->rank >= 2 &&
        d->dims[d->rank - 1] == rest && u->dims[u->rank - 1] == rest) {
        /* Rows as wide as the last dim: the scatter takes the tensors as they
         * are held, every dim but the last its rows (no copy into [N, rest]
         * and back), in their own dtype. */
        lmnn_tensor_info info;
        if ((st = fe_in_dev(c, n, 0, &data)) || (st = fe_in_dev(c, n, 2, &upd))) {
            scatter_to_free(to);
            return st;
        }
        if (!lmnn_tensor_get_info(data, &info) && info.dtype != LMNN_BFLOAT8_B) {
            st = scatter_rows(c, n, data, to, upd, N, M, rest, red, &y);
            scatter_to_free(to);
            return st ? fe_nn_fail(c, n, st) : fe_out_dev(c, n, 0, y);
        }
        data = upd = (lmnn_tensor){0}; /* borrowed: bfloat8_b goes as below */
    }
    st = fe_in_float_as(c, n, 0, 2, (int64_t[]){N, rest}, &data);
    if (!st) st = fe_in_float_as(c, n, 2, 2, (int64_t[]){M, rest}, &upd);
    if (!st && (st = scatter_rows(c, n, data, to, upd, N, M, rest, red, &y)))
        st = fe_nn_fail(c, n, st);
    fe_free(data);
    fe_free(upd);
    scatter_to_free(to);
    if (st) return st;
    /* Held as the rows it was scattered in: a reader of rows (the next
     * scatter, a Flatten) takes them, any other the value's own shape. */
    return fe_out_rows(c, n, 0, y);
}

static lm_status lower_scatternd(fe_ctx *c, const fe_node *n) {
    gnd_geom g;
    reduction red = RED_NONE;
    scatter_to to = {0};
    lm_status st = scatternd_geom(c, n, &g);
    if (!st) st = read_reduction(c, n, &red);
    if (st) return st;
    if (red == RED_NONE && g.k == 1) {
        /* One entry per tuple: the scatter counts it along the dim itself. */
        to.index_dim = (uint32_t)g.dim[0];
        to.row_scale = (uint32_t)g.stride[0];
        st = index_entries(c, n, 1, &to);
    } else {
        st = tuple_rows(c, n, 1, &g, &to.rows);
    }
    return st ? st : scatter_out(c, n, &to, g.rows, g.m, g.rest, red);
}

/* ScatterElements and Scatter: updates and indices of one shape, each
 * element put at its own position with coordinate `axis` replaced. Along
 * `axis` there may be more updates than the data has places (a reduction
 * adds several into one); in every other dim a position must exist.
 *
 * Where the indices are known to hold one value along every dim after the
 * axis, and those dims are the data's whole, each index picks a whole row
 * of the data seen as [rows, rest] (rest the product of those dims), and
 * the scatter moves rows: PyTorch's `x.scatter(d, i[..., None].expand(...),
 * src)`, a key/value cache written at a position, and a constant that does
 * so. Otherwise every element is its own row (rest 1). */
typedef struct elem_geom {
    int32_t axis;
    int32_t row_dims; /* dims 0 .. row_dims - 1 number the rows */
    int64_t rows, m, rest;
} elem_geom;

/* Whether value v (of the indices' rank `rank`, v's dims aligned to the
 * right) is known to hold one value along dims axis + 1 .. : each such dim
 * is 1 in v, or v is a constant that does, an Expand of such a value, or an
 * element-wise result of such values (the mask a padded reader puts in
 * front of indices: Where(valid, indices, out of range)). */
static bool uniform_past(fe_ctx *c, uint32_t v, int32_t rank, int32_t axis, int depth) {
    if (v == FE_NONE || depth > 8) return false;
    const fe_value *val = &c->g->values[v];
    const fe_type *t = &val->type;
    int64_t rest = 1;
    for (int32_t j = axis + 1; j < rank; j++) {
        int32_t tj = j - (rank - t->rank);
        if (tj >= 0) rest *= t->dims[tj];
    }
    if (rest == 1) return true;
    if (t->rank > rank) return false;
    if (val->konst) {
        const fe_tensor *k = val->konst;
        uint64_t run = (uint64_t)rest;
        for (uint64_t e = 0; e < k->count; e++)
            if (fe_tensor_get_i64(k, e) != fe_tensor_get_i64(k, e - e % run)) return false;
        return true;
    }
    if (val->producer == FE_NONE) return false;
    const fe_node *p = &c->g->nodes[val->producer];
    if (p->domain[0] && strcmp(p->domain, "ai.onnx")) return false;
    if (!strcmp(p->op_type, "Expand"))
        return p->input_count >= 1 && uniform_past(c, p->inputs[0], rank, axis, depth + 1);
    bool eltwise = false;
    for (size_t k = 0; k < fe_ops_eltwise_count && !eltwise; k++)
        eltwise = !strcmp(fe_ops_eltwise[k].op_type, p->op_type);
    if (!eltwise || p->input_count < 1) return false;
    for (uint32_t i = 0; i < p->input_count; i++)
        if (!uniform_past(c, p->inputs[i], rank, axis, depth + 1)) return false;
    return true;
}

/* Whether input 1 is known to hold one value along dims axis + 1 .. . */
static bool indices_constant_past(fe_ctx *c, const fe_node *n, int32_t axis) {
    return uniform_past(c, n->inputs[1], fe_in_type(c, n, 1)->rank, axis, 0);
}

static lm_status elements_geom(fe_ctx *c, const fe_node *n, elem_geom *g) {
    const fe_type *d = fe_in_type(c, n, 0), *i = fe_in_type(c, n, 1), *u = fe_in_type(c, n, 2);
    int64_t a;
    lm_status st = scatter_check_elems(c, n);
    if (!st) st = fe_attr_int(c, n, "axis", 0, &a);
    if (!st) st = fe_axis(c, n, a, d->rank, &g->axis);
    if (st) return st;
    const int32_t axis = g->axis;
    bool ok = i->rank == d->rank && u->rank == d->rank, whole = true;
    for (int32_t j = 0; ok && j < d->rank; j++) {
        int64_t idim = n->index_rows && j > axis ? u->dims[j] : i->dims[j];
        ok = idim == u->dims[j] && (j == axis || idim <= d->dims[j]) &&
             (!n->index_rows || j <= axis || i->dims[j] == 1);
        whole &= j <= axis || idim == d->dims[j];
    }
    if (!ok)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "indices and updates must have one shape, of the data's rank and, but "
                       "along axis %d, no larger in any dim",
                       (int)axis);
    g->row_dims =
        whole && (n->index_rows || indices_constant_past(c, n, axis)) ? axis + 1 : d->rank;
    g->rows = g->m = g->rest = 1;
    for (int32_t j = 0; j < d->rank; j++) {
        *(j < g->row_dims ? &g->rows : &g->rest) *= d->dims[j];
        if (j < g->row_dims) g->m *= i->dims[j];
    }
    return scatter_limits(c, n, g->rows, g->m, g->rest > 1 ? "rows" : "elements");
}

/* ScatterElements of constants, on the host (PyTorch's index_copy writes
 * a shape this way). The indices were checked against the axis. */
static lm_status fold_scatter_elements(fe_ctx *c, const fe_node *n, int32_t axis, reduction red) {
    const fe_tensor *d = fe_in_const(c, n, 0), *idx = fe_in_const(c, n, 1);
    const fe_tensor *u = fe_in_const(c, n, 2);
    fe_tensor *o;
    lm_status st = fold_start(c, n, &o);
    if (st) return st;
    for (uint64_t e = 0; e < idx->count; e++) {
        /* e's coordinates in the indices, axis' replaced, as a data offset */
        uint64_t rem = e, to = 0, stride = 1;
        for (int32_t j = idx->rank - 1; j >= 0; j--) {
            int64_t coord = (int64_t)(rem % (uint64_t)idx->dims[j]);
            rem /= (uint64_t)idx->dims[j];
            if (j == axis) {
                coord = fe_tensor_get_i64(idx, e);
                if (coord < 0) coord += d->dims[j];
            }
            to += (uint64_t)coord * stride;
            stride *= (uint64_t)d->dims[j];
        }
        fold_combine(o, to, u, e, red);
    }
    return fe_set_out_const(c, n, 0, o);
}

/* A ScatterElements of whole rows whose indices an Expand spread from one
 * per row (idx[:, None, None, None].expand(...)) reads them before the
 * Expand (index_rows), which then has no reader: its copy as large as the
 * updates is never made. */
static lm_status read_rows_before_expand(fe_ctx *c, const fe_node *n, const elem_geom *g) {
    uint32_t p = c->g->values[n->inputs[1]].producer;
    if (n->index_rows || g->rest == 1 || fe_in_const(c, n, 1) || p == FE_NONE) return LM_OK;
    const fe_node *e = &c->g->nodes[p];
    if (strcmp(e->op_type, "Expand") || (e->domain[0] && strcmp(e->domain, "ai.onnx")) ||
        e->input_count != 2)
        return LM_OK;
    const fe_type *src = &c->g->values[e->inputs[0]].type, *it = fe_in_type(c, n, 1);
    if (src->rank != it->rank) return LM_OK;
    for (int32_t j = 0; j < it->rank; j++)
        if (j < g->row_dims ? src->dims[j] != it->dims[j] : src->dims[j] != 1) return LM_OK;
    uint32_t from = e->inputs[0];
    fe_build b = {.elem = FE_FLOAT};
    fe_x_begin(c, n, &b.x);
    fe_node *m = fe_b_copy_node(&b);
    if (m) {
        m->inputs[1] = from;
        m->index_rows = true;
    }
    return fe_x_end(c, &b.x, b.st);
}

static lm_status infer_scatter_elements(fe_ctx *c, const fe_node *n) {
    lm_status st = infer_scatter_common(c, n, false);
    elem_geom g;
    reduction red = RED_NONE;
    if (!st) st = elements_geom(c, n, &g);
    if (!st && g.row_dims < fe_in_type(c, n, 0)->rank) {
        st = read_rows_before_expand(c, n, &g);
        if (st || c->expanded) return st;
    }
    if (!st)
        st = fe_check_const_indices(c, n, 1, false, 1, g.axis, &fe_in_type(c, n, 0)->dims[g.axis]);
    if (!st) st = read_reduction(c, n, &red);
    if (st || !fe_in_const(c, n, 0) || !fe_in_const(c, n, 1) || !fe_in_const(c, n, 2)) return st;
    return fold_scatter_elements(c, n, g.axis, red);
}

static lm_status lower_scatter_elements(fe_ctx *c, const fe_node *n) {
    elem_geom eg;
    reduction red = RED_NONE;
    lm_status st = elements_geom(c, n, &eg);
    if (!st) st = read_reduction(c, n, &red);
    if (st) return st;
    const fe_type *d = fe_in_type(c, n, 0), *it = fe_in_type(c, n, 1);
    const int32_t axis = eg.axis;
    /* An update's row: its position's part (known now) plus its index (made
     * positive) times the axis' row stride. */
    int64_t stride[FE_MAX_RANK], s = 1;
    for (int32_t j = eg.row_dims - 1; j >= 0; j--) {
        stride[j] = s;
        s *= d->dims[j];
    }
    fe_tensor *base;
    int64_t bd[2] = {eg.m, 1};
    bool offset = false;
    /* (A replacement's offsets: int32 [m], one page for the scatter.) */
    if ((st = fe_const_new(c, red == RED_NONE ? FE_INT32 : FE_FLOAT, red == RED_NONE ? 1 : 2, bd,
                           &base)))
        return fe_nn_fail(c, n, st);
    for (int64_t e = 0; e < eg.m; e++) {
        int64_t rem = e, at = 0;
        for (int32_t j = eg.row_dims - 1; j >= 0; j--) {
            int64_t coord = rem % it->dims[j];
            rem /= it->dims[j];
            if (j != axis) at += coord * stride[j];
        }
        fe_tensor_set_f64(base, (uint64_t)e, (double)at);
        offset |= at != 0;
    }
    scatter_to to = {.index_dim = (uint32_t)d->dims[axis], .row_scale = (uint32_t)stride[axis]};
    if (red == RED_NONE) {
        /* The scatter adds the positions' rows itself. */
        st = index_entries(c, n, n->index_rows ? 1 : eg.rest, &to);
        if (!st && offset) st = fe_aux(c, n, 4, base, LMNN_ROW_MAJOR, &to.offsets);
        if (st) {
            scatter_to_free(&to);
            return st;
        }
        return scatter_out(c, n, &to, eg.rows, eg.m, eg.rest, red);
    }
    gnd_geom g = {.k = 1, .m = eg.m, .rows = eg.rows, .rest = 1, .batches = 1};
    g.dim[0] = d->dims[axis];
    g.stride[0] = stride[axis];
    /* The indices as [m, rest]; of a row's, the first stands for all. */
    lmnn_tensor t, first = {0};
    int64_t per_row = n->index_rows ? 1 : eg.rest;
    if ((st = fe_in_float_as(c, n, 1, 2, (int64_t[]){eg.m, per_row}, &t))) return st;
    if (per_row > 1) {
        st = lmnn_slice(t, (int32_t[]){0, 0}, (int32_t[]){(int32_t)eg.m, 1}, NULL, 2, NULL, &first);
        fe_free(t);
        if (st) return fe_nn_fail(c, n, st);
        t = first;
    }
    if ((st = tuple_rows_of(c, n, t, &g, offset ? base : NULL, &to.rows))) return st;
    return scatter_out(c, n, &to, eg.rows, eg.m, eg.rest, red);
}

/* ---- ReverseSequence ----
 *
 * out[t, b] = in[len_b - 1 - t, b] for t < len_b, else in[t, b]: a gather
 * along the time axis with that index table, made on the device from the
 * run's lengths. */

static lm_status reverse_axes(fe_ctx *c, const fe_node *n, int32_t *time, int32_t *batch) {
    int64_t t, b;
    lm_status st = fe_attr_int(c, n, "time_axis", 0, &t);
    if (!st) st = fe_attr_int(c, n, "batch_axis", 1, &b);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *l = fe_in_type(c, n, 1);
    if (x->rank < 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must have rank >= 2");
    if ((t != 0 && t != 1) || (b != 0 && b != 1) || t == b)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "time_axis=%lld and batch_axis=%lld must be 0 and 1, one each", (long long)t,
                       (long long)b);
    if (l->elem != FE_INT64 && l->elem != FE_INT32)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "sequence_lens must be int32 or int64");
    if (l->rank != 1 || l->dims[0] != x->dims[b])
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "sequence_lens must be [%lld]",
                       (long long)x->dims[b]);
    *time = (int32_t)t;
    *batch = (int32_t)b;
    return LM_OK;
}

static lm_status infer_reverse_sequence(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"time_axis", "batch_axis", NULL});
    int32_t t = 0, b = 1;
    if (!st) st = reverse_axes(c, n, &t, &b);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    return fe_set_out_type(c, n, 0, x->elem, x->rank, x->dims);
}

lm_status fe_reverse_sequences(fe_ctx *c, const fe_node *n, uint32_t slot, lmnn_tensor data,
                               int32_t rank, const int64_t *dims, int32_t time, lmnn_tensor lens,
                               lmnn_tensor *out) {
    int64_t T = dims[time];
    int64_t td[2] = {time ? 1 : T, time ? T : 1};
    fe_tensor *pos;
    lm_status st = fe_const_new(c, FE_FLOAT, 2, td, &pos);
    if (st) return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < T; i++)
        fe_tensor_set_f64(pos, (uint64_t)i, (double)i);
    lmnn_tensor p, inside = {0}, back = {0}, flip = {0}, idx = {0}, i32 = {0}, r = {0};
    lmnn_tensor full = {0}, rm = {0};
    if ((st = fe_aux_f32(c, n, slot, pos, &p))) return st;
    uint32_t tail[FE_MAX_RANK];
    int64_t xd[FE_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        xd[d] = d < 2 ? dims[d] : 1;
        tail[d] = d < 2 ? 1 : (uint32_t)dims[d];
    }
    lmnn_shape shaped = fe_shape(rank, xd);
    /* idx = t < len ? len - 1 - t : t */
    if (!(st = lmnn_binary(LMNN_BINARY_LT, p, lens, NULL, &inside)) &&
        !(st = lmnn_binary(LMNN_BINARY_SUB, lens, p, NULL, &back)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_SUB, back, 1.0, NULL, &flip)) &&
        !(st = lmnn_where(inside, flip, p, &idx)) && !(st = lmnn_typecast(idx, LMNN_INT32, &i32)) &&
        !(st = lmnn_reshape(i32, &shaped, NULL, &r)) &&
        !(st = lmnn_repeat(r, tail, (uint32_t)rank, NULL, &full)) &&
        !(st = lmnn_to_layout(full, LMNN_ROW_MAJOR, &rm)))
        st = lmnn_gather(data, time, rm, NULL, out);
    lmnn_tensor junk[] = {inside, back, flip, idx, i32, r, full, rm};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        fe_free(junk[i]);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

static lm_status lower_reverse_sequence(fe_ctx *c, const fe_node *n) {
    int32_t time = 0, batch = 1;
    lm_status st = reverse_axes(c, n, &time, &batch);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t B = x->dims[batch], ld[2] = {time ? B : 1, time ? 1 : B};
    lmnn_tensor data, lens, y;
    if ((st = fe_in_dev(c, n, 0, &data)) || (st = fe_in_float_as(c, n, 1, 2, ld, &lens))) return st;
    st = fe_reverse_sequences(c, n, 0, data, x->rank, x->dims, time, lens, &y);
    fe_free(lens);
    return st ? st : fe_out_dev(c, n, 0, y);
}

const fe_op_def fe_ops_index[] = {
    {"GatherND", infer_gathernd, lower_gathernd, 0, NULL},
    {"ScatterND", infer_scatternd, lower_scatternd, 0, NULL},
    {"ScatterElements", infer_scatter_elements, lower_scatter_elements, 0, NULL},
    {"Scatter", infer_scatter_elements, lower_scatter_elements, 0, NULL},
    {"ReverseSequence", infer_reverse_sequence, lower_reverse_sequence, 0, NULL},
};
const size_t fe_ops_index_count = sizeof fe_ops_index / sizeof fe_ops_index[0];
