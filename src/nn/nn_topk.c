/* The k best along a dim (lmnn_topk, lmnn_reduce.h): kernels/topk_rows.c
 * on the row-major rows of the last dim; another dim is transposed last
 * first, a tile tensor untilized, and both results are brought back the
 * same way. */
#include "nn/nn_data.h"

/* The most elements kept per row: a row's heap and results sit in L1. */
#define TOPK_MAX_K 32768u
/* Bytes of a row read at once. */
#define TOPK_CHUNK_BYTES 16384u

void lmnn_topk_options_init(lmnn_topk_options *opts) {
    if (opts) *opts = (lmnn_topk_options){false};
}

/* topk_rows.c's element kinds. */
static uint32_t topk_kind(lmnn_dtype dtype) {
    switch (dtype) {
    case LMNN_BFLOAT16:
        return 1;
    case LMNN_INT32:
        return 2;
    case LMNN_UINT32:
        return 3;
    default:
        return 0; /* float32 */
    }
}

/* vals, pos = the k best of each row of row-major x (along its last dim). */
static lm_status run_rows(const char *op, nn_tensor *x, nn_tensor *vals, nn_tensor *pos, uint32_t k,
                          bool smallest) {
    uint32_t N = x->shape.dims[x->shape.rank - 1];
    uint32_t es = nn_rm_elem_size(x->dtype), chunk = TOPK_CHUNK_BYTES / es;
    if (chunk > N) chunk = N;
    uint64_t rows = lmnn_shape_volume(&x->shape) / N;
    uint32_t args[7] = {0,
                        0,
                        (x->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
                            (vals->memory.type == LM_BUFFER_DRAM ? 2u : 0) |
                            (pos->memory.type == LM_BUFFER_DRAM ? 4u : 0) | (smallest ? 8u : 0),
                        N,
                        k,
                        topk_kind(x->dtype),
                        chunk};
    nn_key key;
    nn_key_init(&key, "topk_rows");
    nn_key_add(&key, args + 2, sizeof args - 2 * sizeof *args);
    nn_key_tensor(&key, x);
    nn_key_tensor(&key, vals);
    nn_key_tensor(&key, pos);
    nn_program *prog = nn_cache_find(x->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec spec = {"topk_rows.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, x->device, rows, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, x->device, &p);
        if (!st)
            st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, (chunk * es + 31) / 32 * 32, 1);
        for (uint32_t cb = 1; cb <= 3 && !st; cb++)
            st = nn_program_cb(op, &p, cb, LM_DATA_FORMAT_UINT32, k * 4, 1);
        if (!st) st = nn_program_cb(op, &p, 4, LM_DATA_FORMAT_UINT32, (k * es + 31) / 32 * 32, 1);
        if (!st) st = nn_program_cb(op, &p, 5, LM_DATA_FORMAT_UINT32, k * 4, 1);
        if (!st) st = nn_program_kernel(op, &p, &spec, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, args + 2, 5);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, x->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {x, vals, pos};
    return st ? st : nn_launch(op, prog, tensors, 3);
}

/* Replaces *cur (a temporary: freed) by `next` when the step worked. */
static lm_status take(lm_status st, lmnn_tensor *cur, lmnn_tensor next) {
    if (st) return st;
    nn_tensor_discard(*cur);
    *cur = next;
    return LM_OK;
}

/* A row-major result `r` (consumed) brought back to a's form: a's layout,
 * `dtype`, dim `d` where the rows' last dim is, a's memory config. */
static lm_status restore(const char *op, lmnn_tensor r, const nn_tensor *a, lmnn_dtype dtype,
                         uint32_t d, lmnn_tensor *out) {
    uint32_t last = a->shape.rank - 1;
    lmnn_tensor next = {0};
    lm_status st = LM_OK;
    if (a->layout == LMNN_TILE) st = take(lmnn_to_layout(r, LMNN_TILE, &next), &r, next);
    if (!st && dtype == LMNN_BFLOAT8_B) st = take(lmnn_typecast(r, dtype, &next), &r, next);
    lmnn_output here = {0, a->memory};
    if (!st && d != last)
        st = take(lmnn_transpose(r, (int32_t)d, (int32_t)last, &here, &next), &r, next);
    else if (!st && a->memory.type != LM_BUFFER_DRAM)
        st = take(lmnn_to_memory_config(r, &a->memory, &next), &r, next);
    if (st) {
        nn_tensor_discard(r);
        return st;
    }
    *out = r;
    return LM_OK;
}

lm_status lmnn_topk(lmnn_tensor a, uint32_t k, int32_t dim, const lmnn_topk_options *opts,
                    lmnn_tensor *out_values, lmnn_tensor *out_indices) {
    const char *op = "lmnn_topk";
    lmnn_topk_options defaults;
    if (!opts) {
        lmnn_topk_options_init(&defaults);
        opts = &defaults;
    }
    if (!out_values || !out_indices)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_values or out_indices is NULL");
    nn_tensor *t;
    uint32_t d = 0;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    if (t->dtype == LMNN_UINT16 || t->dtype == LMNN_UINT8)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "a: expected bfloat16, float32, bfloat8_b, int32 or uint32, given %s",
                       lmnn_dtype_name(t->dtype));
    if (!t->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    if ((st = dm_norm_dim(op, "dim", dim, t->shape.rank, &d))) return st;
    uint32_t n = t->shape.dims[d], last = t->shape.rank - 1;
    if ((k == 0 || k > n) && n <= TOPK_MAX_K)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "k: expected 1 .. %u (the size of dim %u), given %u", n, d, k);
    if (k == 0 || k > TOPK_MAX_K)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "k: expected 1 .. %u (the k best of a row stay in one core's L1; dim %u "
                       "has %u), given %u",
                       TOPK_MAX_K, d, n, k);
    /* Row-major rows along the last dim, in DRAM. */
    lmnn_tensor xt = {0}, xr = {0}, vh = {0}, ph = {0}, v = {0}, p = {0};
    nn_tensor *x = t, *vals, *pos;
    lmnn_output dram = {0, {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED}};
    if (d != last) {
        st = lmnn_transpose(a, (int32_t)d, (int32_t)last, &dram, &xt);
        if (!st) st = nn_get_tensor(op, "a", xt, &x);
    }
    if (!st && x->layout == LMNN_TILE) st = dm_untilized(op, x, &xr, &x);
    lmnn_shape s = x->shape;
    s.dims[last] = k;
    if (!st)
        st = nn_tensor_new(op, t->device, &s, x->dtype, LMNN_ROW_MAJOR, &dram.memory, &vh, &vals);
    if (!st)
        st = nn_tensor_new(op, t->device, &s, LMNN_INT32, LMNN_ROW_MAJOR, &dram.memory, &ph, &pos);
    if (!st) st = run_rows(op, x, vals, pos, k, opts->smallest);
    nn_tensor_discard(xt);
    nn_tensor_discard(xr);
    if (!st) {
        st = restore(op, vh, t, t->dtype, d, &v);
        vh = (lmnn_tensor){0};
    }
    if (!st) {
        st = restore(op, ph, t, LMNN_INT32, d, &p);
        ph = (lmnn_tensor){0};
    }
    nn_tensor_discard(vh);
    nn_tensor_discard(ph);
    if (st) {
        nn_tensor_discard(v);
        return st;
    }
    *out_values = v;
    *out_indices = p;
    return LM_OK;
}
