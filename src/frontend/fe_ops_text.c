/* Text features: TfIdfVectorizer over integer token ids.
 *
 * The n-gram pool is fixed when compiling, so the counting runs on the
 * device as tensor math over the run's tokens X ([L] or [B, L]):
 *   E[b, v, i] = (X[b, i] == token v), for each token v the pool's countable
 *   n-grams use (float32 compares: tokens must be exact in float32);
 *   an n-gram (t0, .., tn-1) at distance d = skip + 1 occurs where
 *   E[t0, i] * E[t1, i + d] * .. * E[tn-1, i + (n - 1) d] is 1: its rows of E
 *   gathered (one index_select per place j), sliced by j * d, multiplied and
 *   summed over i, for every skip from 0 to max_skip_count (unigrams once);
 *   the counts [B, K] weighted into the output columns by one matrix
 *   product [K, C] (weights folded in; IDF first turns counts into 0/1).
 * TF ignores weights, IDF gives the weight (1 without weights) of each
 * n-gram present, TFIDF the count times the weight. */
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF };

/* Output columns at most (the weighting matrix is K x C on the device). */
#define TFIDF_MAX_COLUMNS (1 << 16)

typedef struct tfidf {
    int64_t min_n, max_n, max_skip;
    int mode;
    const int64_t *pool, *starts, *columns;
    size_t pool_count, levels, ngrams;
    const float *weights; /* NULL: all 1 */
    int64_t out_cols;
    int64_t batch, length; /* X as [batch, length] */
} tfidf;

/* The n-grams of level l (n = l + 1): *first is the number of the first,
 * *count how many; their tokens start at pool[starts[l]]. */
static void level_span(const tfidf *t, size_t l, size_t *first, size_t *count) {
    size_t k = 0;
    for (size_t i = 0; i < l; i++) {
        size_t end = i + 1 < t->levels ? (size_t)t->starts[i + 1] : t->pool_count;
        k += (end - (size_t)t->starts[i]) / (i + 1);
    }
    size_t end = l + 1 < t->levels ? (size_t)t->starts[l + 1] : t->pool_count;
    *first = k;
    *count = (end - (size_t)t->starts[l]) / (l + 1);
}

/* Whether level l's n-grams can occur in a row: n in [min, max], some in
 * the pool, and a row long enough for one. */
static bool level_counts(const tfidf *t, size_t l) {
    size_t first, count;
    level_span(t, l, &first, &count);
    int64_t n = (int64_t)l + 1;
    return count > 0 && n >= t->min_n && n <= t->max_n && t->length >= n;
}

static lm_status tfidf_of(fe_ctx *c, const fe_node *nd, tfidf *t) {
    static const char *const known[] = {
        "max_gram_length", "min_gram_length", "max_skip_count", "mode",    "ngram_counts",
        "ngram_indexes",   "pool_int64s",     "pool_strings",   "weights", NULL};
    static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
    static const fe_elem elems[] = {FE_INT32, FE_INT64, FE_UNDEFINED};
    memset(t, 0, sizeof *t);
    lm_status st = fe_check_inputs(c, nd, 1, 1);
    if (!st) st = fe_check_attrs(c, nd, known);
    if (!st) st = fe_check_elem(c, nd, 0, elems);
    size_t string_count = 0, weight_count = 0;
    if (!st) st = fe_attr_int(c, nd, "min_gram_length", 0, &t->min_n);
    if (!st) st = fe_attr_int(c, nd, "max_gram_length", 0, &t->max_n);
    if (!st) st = fe_attr_int(c, nd, "max_skip_count", 0, &t->max_skip);
    if (!st) st = fe_attr_choice(c, nd, "mode", NULL, modes, &t->mode);
    if (!st) st = fe_attr_ints(c, nd, "ngram_counts", &t->starts, &t->levels);
    if (!st) st = fe_attr_ints(c, nd, "ngram_indexes", &t->columns, &t->ngrams);
    if (!st) st = fe_attr_ints(c, nd, "pool_int64s", &t->pool, &t->pool_count);
    if (!st) st = fe_attr_floats(c, nd, "weights", &t->weights, &weight_count);
    if (st) return st;
    for (uint32_t i = 0; i < nd->attr_count; i++)
        if (!strcmp(nd->attrs[i].name, "pool_strings")) string_count++;
    if (string_count)
        return fe_fail(c, nd, LM_ERR_UNSUPPORTED,
                       "pool_strings: string n-grams are not supported (only pool_int64s)");
    if (t->min_n < 1 || t->max_n < t->min_n)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                       "gram lengths must satisfy 1 <= min_gram_length <= max_gram_length, given "
                       "%lld and %lld",
                       (long long)t->min_n, (long long)t->max_n);
    if (t->max_skip < 0 || t->max_skip > 1024)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE, "max_skip_count=%lld (from 0 to 1024)",
                       (long long)t->max_skip);
    if (!t->pool || !t->starts || !t->columns)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                       "pool_int64s, ngram_counts and ngram_indexes are required");
    /* Each level's start inside the pool, after the one before, with a
     * whole number of n-grams of its length. */
    for (size_t l = 0; l < t->levels; l++) {
        int64_t end = l + 1 < t->levels ? t->starts[l + 1] : (int64_t)t->pool_count;
        if (t->starts[l] < 0 || t->starts[l] > end || end > (int64_t)t->pool_count ||
            (l == 0 && t->starts[0] != 0) || (end - t->starts[l]) % (int64_t)(l + 1))
            return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                           "ngram_counts[%zu]=%lld does not start a whole number of %zu-grams "
                           "in the pool of %zu ids",
                           l, (long long)t->starts[l], l + 1, t->pool_count);
    }
    size_t first, count;
    level_span(t, t->levels ? t->levels - 1 : 0, &first, &count);
    size_t total = t->levels ? first + count : 0;
    if (total != t->ngrams)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                       "ngram_indexes has %zu entries but the pool holds %zu n-grams", t->ngrams,
                       total);
    if (t->weights && weight_count != t->ngrams)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                       "weights has %zu entries but the pool holds %zu n-grams", weight_count,
                       t->ngrams);
    t->out_cols = 0;
    for (size_t k = 0; k < t->ngrams; k++) {
        if (t->columns[k] < 0 || t->columns[k] >= TFIDF_MAX_COLUMNS)
            return fe_fail(c, nd, LM_ERR_UNSUPPORTED, "ngram_indexes[%zu]=%lld (from 0 to %d)", k,
                           (long long)t->columns[k], TFIDF_MAX_COLUMNS - 1);
        for (size_t j = 0; j < k; j++)
            if (t->columns[j] == t->columns[k])
                return fe_fail(c, nd, LM_ERR_INVALID_FILE,
                               "ngram_indexes gives column %lld to n-grams %zu and %zu",
                               (long long)t->columns[k], j, k);
        if (t->columns[k] + 1 > t->out_cols) t->out_cols = t->columns[k] + 1;
    }
    if (t->out_cols == 0)
        return fe_fail(c, nd, LM_ERR_UNSUPPORTED,
                       "the pool is empty: no output columns (zero-size tensors are not "
                       "supported)");
    for (size_t i = 0; i < t->pool_count; i++)
        if (t->pool[i] <= -(1 << 24) || t->pool[i] >= (1 << 24))
            return fe_fail(c, nd, LM_ERR_UNSUPPORTED,
                           "pool id %lld: ids are compared in float32, exact only below 2^24",
                           (long long)t->pool[i]);
    const fe_type *x = fe_in_type(c, nd, 0);
    if (x->rank != 1 && x->rank != 2)
        return fe_fail(c, nd, LM_ERR_INVALID_FILE, "X must be [C] or [N, C], given rank %d",
                       x->rank);
    t->batch = x->rank == 2 ? x->dims[0] : 1;
    t->length = x->dims[x->rank - 1];
    return LM_OK;
}

static lm_status infer_tfidf(fe_ctx *c, const fe_node *n) {
    tfidf t;
    lm_status st = tfidf_of(c, n, &t);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t dims[2] = {t.batch, t.out_cols};
    int32_t rank = x->rank;
    const int64_t *od = rank == 2 ? dims : dims + 1;
    bool any = false;
    for (size_t l = 0; l < t.levels; l++)
        any |= level_counts(&t, l);
    if (any) return fe_set_out_type(c, n, 0, FE_FLOAT, rank, od);
    /* Nothing can be counted (no n-gram of a counted length, or rows too
     * short): zeros, whatever the tokens. */
    fe_tensor *z;
    if ((st = fe_const_new(c, FE_FLOAT, (uint32_t)rank, od, &z))) return fe_nn_fail(c, n, st);
    return fe_set_out_const(c, n, 0, z);
}

/* A constant table made for this node (arena memory). */
static lm_status table(fe_ctx *c, const fe_node *n, fe_elem elem, int64_t rows, int64_t cols,
                       fe_tensor **out) {
    int64_t dims[2] = {rows, cols};
    lm_status st = fe_const_new(c, elem, cols ? 2 : 1, dims, out);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

/* The tokens of the countable levels' n-grams, each once: vocab[0..*count). */
static size_t vocabulary(const tfidf *t, int64_t *vocab) {
    size_t v = 0;
    for (size_t l = 0; l < t->levels; l++) {
        if (!level_counts(t, l)) continue;
        size_t first, count;
        level_span(t, l, &first, &count);
        for (size_t i = 0; i < count * (l + 1); i++) {
            int64_t id = t->pool[(size_t)t->starts[l] + i];
            size_t j = 0;
            while (j < v && vocab[j] != id)
                j++;
            if (j == v) vocab[v++] = id;
        }
    }
    return v;
}

static size_t vocab_index(const int64_t *vocab, size_t v, int64_t id) {
    size_t j = 0;
    while (j < v && vocab[j] != id)
        j++;
    return j;
}

static lm_status lower_tfidf(fe_ctx *c, const fe_node *n) {
    tfidf t;
    lm_status st = tfidf_of(c, n, &t);
    if (st) return st;
    int64_t *vocab = malloc((t.pool_count ? t.pool_count : 1) * sizeof *vocab);
    fe_work *w = calloc(1, sizeof *w);
    if (!vocab || !w) {
        free(vocab);
        free(w);
        return fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
    }
    size_t v = vocabulary(&t, vocab);
    /* E [B, V, L]: which tokens of the row are vocabulary token v. */
    fe_tensor *vt;
    lmnn_tensor vd, xf = {0};
    uint32_t slot = 0;
    st = table(c, n, FE_FLOAT, (int64_t)v, 1, &vt);
    for (size_t j = 0; !st && j < v; j++)
        fe_tensor_set_f64(vt, j, (double)vocab[j]);
    if (!st) st = fe_aux_f32(c, n, slot++, vt, &vd);
    int64_t xd[3] = {t.batch, 1, t.length};
    if (!st) st = fe_in_float_as(c, n, 0, 3, xd, &xf);
    if (!st) fe_work_keep(w, LM_OK, &xf);
    lmnn_tensor e = st ? (lmnn_tensor){0} : fe_work_binary(w, LMNN_BINARY_EQ, xf, vd);
    lmnn_tensor acc = {0};
    for (size_t l = 0; !st && !w->st && l < t.levels; l++) {
        if (!level_counts(&t, l)) continue;
        size_t first, count, len = l + 1;
        level_span(&t, l, &first, &count);
        const int64_t *grams = t.pool + t.starts[l];
        /* rows[j]: E's rows of the j-th token of each n-gram, [B, K, L]. */
        lmnn_tensor rows[8] = {{0}};
        if (len > 8) {
            st = fe_fail(c, n, LM_ERR_UNSUPPORTED, "%zu-grams (at most 8-grams)", len);
            break;
        }
        for (size_t j = 0; !st && j < len; j++) {
            fe_tensor *it;
            lmnn_tensor idx;
            if ((st = table(c, n, FE_INT64, (int64_t)count, 0, &it))) break;
            for (size_t k = 0; k < count; k++)
                fe_tensor_set_i64(it, k, (int64_t)vocab_index(vocab, v, grams[k * len + j]));
            if ((st = fe_aux(c, n, slot++, it, LMNN_ROW_MAJOR, &idx))) break;
            lmnn_tensor r = {0};
            rows[j] = fe_work_keep(w, lmnn_index_select(e, 1, idx, NULL, &r), &r);
        }
        if (st) break;
        /* counts [B, K]: summed over the positions, for each distance. */
        lmnn_reduce_options ro;
        lmnn_reduce_options_init(&ro);
        ro.dims[0] = -1;
        ro.dim_count = 1;
        lmnn_tensor counts = {0};
        int64_t distances = len == 1 ? 1 : t.max_skip + 1;
        for (int64_t d = 1; d <= distances && !w->st; d++) {
            int64_t span = t.length - (int64_t)(len - 1) * d;
            if (span <= 0) break;
            lmnn_tensor prod = {0};
            for (size_t j = 0; j < len; j++) {
                int32_t b[3] = {0, 0, (int32_t)((int64_t)j * d)};
                int32_t en[3] = {(int32_t)t.batch, (int32_t)count,
                                 (int32_t)((int64_t)j * d + span)};
                lmnn_tensor part = len == 1 ? rows[0] : fe_work_slice(w, rows[j], b, en, 3);
                prod = j ? fe_work_binary(w, LMNN_BINARY_MUL, prod, part) : part;
            }
            lmnn_tensor sum = {0};
            if (!w->st) sum = fe_work_keep(w, lmnn_sum(prod, &ro, &sum), &sum);
            counts = counts.id ? fe_work_binary(w, LMNN_BINARY_ADD, counts, sum) : sum;
        }
        if (t.mode == TFIDF_IDF) counts = fe_work_scalar(w, LMNN_BINARY_GT, counts, 0.0);
        /* Into the output columns, weighted. */
        fe_tensor *mt;
        lmnn_tensor md;
        if ((st = table(c, n, FE_FLOAT, (int64_t)count, t.out_cols, &mt))) break;
        for (size_t k = 0; k < count; k++) {
            double wk = t.weights && t.mode != TFIDF_TF ? t.weights[first + k] : 1.0;
            fe_tensor_set_f64(mt, k * (uint64_t)t.out_cols + (uint64_t)t.columns[first + k], wk);
        }
        if ((st = fe_aux_f32(c, n, slot++, mt, &md))) break;
        lmnn_tensor y = {0};
        if (!w->st) y = fe_work_keep(w, lmnn_matmul(counts, md, NULL, &y), &y);
        acc = acc.id ? fe_work_binary(w, LMNN_BINARY_ADD, acc, y) : y;
    }
    lmnn_tensor out = {0};
    bool labeled = st != LM_OK;
    if (!st) st = w->st;
    if (!st) {
        const fe_type *o = &c->g->values[n->outputs[0]].type;
        lmnn_shape s = fe_shape(o->rank, o->dims);
        st = lmnn_reshape(acc, &s, NULL, &out);
    }
    fe_work_release(w, 0);
    free(w);
    free(vocab);
    if (st) return labeled ? st : fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, out);
}

const fe_op_def fe_ops_text[] = {
    {"TfIdfVectorizer", infer_tfidf, lower_tfidf, 0, NULL},
};
const size_t fe_ops_text_count = sizeof fe_ops_text / sizeof fe_ops_text[0];
