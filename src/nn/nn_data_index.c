/* Data movement ops that read indices on the device (index_select, gather,
 * embedding) and upsampling. */
#include <stdio.h>
#include <string.h>

#include "nn/nn_data.h"

#define DM_GATHER_CHUNK_BYTES (16u * 1024u)
#define DM_GATHER_STAGE_BYTES (256u * 1024u)

void lmnn_index_options_init(lmnn_index_options *opts) {
    if (opts) *opts = (lmnn_index_options){{0}, NULL, false};
}

void lmnn_scatter_options_init(lmnn_scatter_options *opts) {
    if (opts) *opts = (lmnn_scatter_options){.row_scale = 1, .index_step = 1};
}

void lmnn_embedding_options_init(lmnn_embedding_options *opts) {
    if (!opts) return;
    opts->layout = LMNN_LAYOUT_INVALID;
    lmnn_index_options_init(&opts->index);
}

void lmnn_upsample_options_init(lmnn_upsample_options *opts) {
    if (opts) *opts = (lmnn_upsample_options){.mode = LMNN_UPSAMPLE_NEAREST};
}

/* The index tensor: live, on a's device, row-major uint32 or int32. */
static lm_status get_index(const char *op, const char *arg, lmnn_tensor h, const nn_tensor *a,
                           nn_tensor **out) {
    nn_tensor *t;
    lm_status st = nn_get_tensor(op, arg, h, &t);
    if (!st && a) st = nn_check_same_device(op, arg, t, a);
    if (st) return st;
    if (t->layout != LMNN_ROW_MAJOR || (t->dtype != LMNN_UINT32 && t->dtype != LMNN_INT32))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: expected a row_major uint32 or int32 tensor, given %s %s", arg,
                       lmnn_layout_name(t->layout), lmnn_dtype_name(t->dtype));
    *out = t;
    return LM_OK;
}

/* The op's end: the output (and the counter when asked for) or nothing. */
static lm_status finish(lm_status st, lmnn_tensor oh, lmnn_tensor *out, lmnn_tensor ch,
                        lmnn_tensor *out_count) {
    if (st) {
        nn_tensor_discard(oh);
        nn_tensor_discard(ch);
        return st;
    }
    *out = oh;
    if (out_count) *out_count = ch;
    return LM_OK;
}

/* ---- index_select ---- */

typedef struct select_ctx {
    uint32_t dim;
    nn_tensor *index, *counter;
    dm_kind kind; /* DM_INDEX or DM_INDEX_WRAP */
} select_ctx;

static lm_status select_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                           nn_tensor *out) {
    (void)n;
    const select_ctx *c = ctx;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    for (uint32_t d = 0; d < spec.out_rank; d++)
        spec.map[d] = dm_identity((int32_t)d);
    spec.map[c->dim] = (dm_map){c->kind, 0, 1, spec.in_dims[c->dim], (int32_t)c->dim};
    return dm_run(op, &spec, ins[0], out, c->index, c->counter);
}

/* The arguments index_select and gather share: options (the defaults in
 * *defaults when NULL), out, a live `a` of rank >= 1, the index tensor and
 * the dim (negative from the end) as *out_dim. */
static lm_status index_args(const char *op, lmnn_tensor a, int32_t dim, lmnn_tensor index,
                            const lmnn_index_options **opts, lmnn_index_options *defaults,
                            const lmnn_tensor *out, nn_tensor **out_a, nn_tensor **out_index,
                            uint32_t *out_dim) {
    if (!*opts) {
        lmnn_index_options_init(defaults);
        *opts = defaults;
    }
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lm_status st = nn_get_tensor(op, "a", a, out_a);
    if (!st) st = get_index(op, "index", index, *out_a, out_index);
    if (st) return st;
    if (!(*out_a)->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    return dm_norm_dim(op, "dim", dim, (*out_a)->shape.rank, out_dim);
}

lm_status lmnn_index_select(lmnn_tensor a, int32_t dim, lmnn_tensor index,
                            const lmnn_index_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_index_select";
    lmnn_index_options defaults;
    nn_tensor *t, *ix;
    uint32_t d = 0;
    lm_status st = index_args(op, a, dim, index, &opts, &defaults, out, &t, &ix, &d);
    if (st) return st;
    uint64_t len = lmnn_shape_volume(&ix->shape);
    if (len > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "index: %llu entries are too many",
                       (unsigned long long)len);
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, &opts->output, t, &mem))) return st;
    lmnn_shape s = t->shape;
    s.dims[d] = (uint32_t)len;
    dm_out od = {s, t->dtype, t->layout, mem};
    lmnn_tensor oh = {0}, ch = {0};
    nn_tensor *counter = NULL;
    if (opts->out_invalid_count && (st = dm_counter_new(op, t->device, &ch, &counter))) return st;
    const dm_kind kind = opts->negative_from_end ? DM_INDEX_WRAP : DM_INDEX;
    select_ctx c = {d, ix, counter, kind};
    uint32_t r = t->shape.rank;
    if (t->layout == LMNN_TILE && r >= 3 && d < r - 2) {
        /* a batch dim of a tile tensor: whole tiles */
        nn_tensor *o;
        st = dm_make(op, t->device, &od, &oh, &o);
        if (!st) {
            dm_spec spec;
            dm_spec_init(&spec, t, o, true);
            for (uint32_t k = 0; k < spec.out_rank; k++)
                spec.map[k] = dm_identity((int32_t)k);
            spec.map[d] = (dm_map){kind, 0, 1, t->shape.dims[d], (int32_t)d};
            st = dm_run(op, &spec, t, o, ix, counter);
        }
    } else {
        st = dm_run_rm(op, t, &od, select_rm, &c, &oh);
    }
    return finish(st, oh, out, ch, opts->out_invalid_count);
}

/* ---- gather ---- */

lm_status dm_gather_run(const char *op, int32_t dim, nn_tensor *a, nn_tensor *index, nn_tensor *out,
                        nn_tensor *counter, bool wrap) {
    uint32_t R = a->shape.rank, esize = nn_rm_elem_size(a->dtype);
    uint32_t a_w = a->shape.dims[R - 1], out_w = index->shape.dims[R - 1];
    uint32_t chunk = DM_GATHER_CHUNK_BYTES / 4;
    if (chunk > out_w) chunk = out_w;
    uint32_t nchunks = (out_w + chunk - 1) / chunk;
    uint32_t stage =
        (uint32_t)dim == R - 1 && (uint64_t)a_w * esize <= DM_GATHER_STAGE_BYTES ? a_w : 0;
    uint32_t args[11 + 3 * LMNN_MAX_DIMS] = {0};
    args[2] = (a->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
              (out->memory.type == LM_BUFFER_DRAM ? 2u : 0) |
              (index->memory.type == LM_BUFFER_DRAM ? 4u : 0) | (counter ? 8u : 0) |
              (wrap ? 16u : 0);
    args[3] = esize;
    args[4] = R;
    args[5] = (uint32_t)dim;
    args[6] = a_w;
    args[7] = out_w;
    args[8] = chunk;
    args[9] = nchunks;
    args[10] = stage;
    uint64_t rows = 1;
    for (int32_t d = (int32_t)R - 1, s = 1; d >= 0; d--) {
        args[11 + 3 * d] = index->shape.dims[d];
        args[12 + 3 * d] = a->shape.dims[d];
        args[13 + 3 * d] = (uint32_t)s;
        if (d < (int32_t)R - 1) {
            s *= (int32_t)a->shape.dims[d];
            rows *= index->shape.dims[d];
        }
    }
    uint32_t nargs = 11 + 3 * R;
    nn_key key;
    nn_key_init(&key, "gather");
    nn_key_add(&key, args + 2, (nargs - 2) * sizeof *args);
    nn_key_tensor(&key, a);
    nn_key_tensor(&key, index);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(a->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec k = {"data_gather.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, a->device, rows * nchunks, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, a->device, &p);
        if (!st)
            st =
                nn_program_cb(op, &p, 16, LM_DATA_FORMAT_UINT32, (chunk * esize + 31) / 32 * 32, 1);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, chunk * 4, 1);
        if (!st && stage)
            st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, (stage * esize + 31) / 32 * 32, 1);
        if (!st) st = nn_program_kernel(op, &p, &k, NULL);
        for (uint32_t i = 0; !st && i < split.num_cores; i++) {
            args[0] = split.first[i];
            args[1] = split.count[i];
            st = lm_set_runtime_args(p.program, p.kernels[0], split.cores[i], args, nargs);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, a->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {a, out, index, counter ? counter : out};
    return st ? st : nn_launch(op, prog, tensors, 4);
}

typedef struct gather_ctx {
    uint32_t dim;
    nn_tensor *index, *counter;
    bool wrap;
} gather_ctx;

static lm_status gather_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                           nn_tensor *out) {
    (void)n;
    const gather_ctx *c = ctx;
    return dm_gather_run(op, (int32_t)c->dim, ins[0], c->index, out, c->counter, c->wrap);
}

lm_status lmnn_gather(lmnn_tensor a, int32_t dim, lmnn_tensor index, const lmnn_index_options *opts,
                      lmnn_tensor *out) {
    const char *op = "lmnn_gather";
    char s1[128], s2[128];
    lmnn_index_options defaults;
    nn_tensor *t, *ix;
    uint32_t d = 0;
    lm_status st = index_args(op, a, dim, index, &opts, &defaults, out, &t, &ix, &d);
    if (st) return st;
    uint32_t r = t->shape.rank;
    bool fits = ix->shape.rank == r;
    for (uint32_t k = 0; fits && k < r; k++)
        fits = k == d || ix->shape.dims[k] <= t->shape.dims[k];
    if (!fits)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "index: shape %s does not fit a's shape %s (expected the same rank and "
                       "no dim larger than a's but dim %u)",
                       nn_shape_str(&ix->shape, s1, sizeof s1),
                       nn_shape_str(&t->shape, s2, sizeof s2), d);
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, &opts->output, t, &mem))) return st;
    dm_out od = {ix->shape, t->dtype, t->layout, mem};
    lmnn_tensor oh = {0}, ch = {0};
    nn_tensor *counter = NULL;
    if (opts->out_invalid_count && (st = dm_counter_new(op, t->device, &ch, &counter))) return st;
    gather_ctx c = {d, ix, counter, opts->negative_from_end};
    st = dm_run_rm(op, t, &od, gather_rm, &c, &oh);
    return finish(st, oh, out, ch, opts->out_invalid_count);
}

/* ---- embedding ---- */

typedef struct embed_ctx {
    nn_tensor *ids, *counter;
    dm_kind kind;
} embed_ctx;

/* out viewed as [ids volume, D]: row i = weight row ids[i]. */
static lm_status embed_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                          nn_tensor *out) {
    (void)n;
    const embed_ctx *c = ctx;
    nn_tensor *w = ins[0];
    dm_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.in_rank = spec.out_rank = 2;
    spec.in_dims[0] = w->shape.dims[0];
    spec.in_dims[1] = spec.out_dims[1] = w->shape.dims[1];
    spec.out_dims[0] = (uint32_t)lmnn_shape_volume(&c->ids->shape);
    spec.map[0] = (dm_map){c->kind, 0, 1, w->shape.dims[0], 0};
    spec.map[1] = dm_identity(1);
    return dm_run(op, &spec, w, out, c->ids, c->counter);
}

lm_status lmnn_embedding(lmnn_tensor ids, lmnn_tensor weight, const lmnn_embedding_options *opts,
                         lmnn_tensor *out) {
    const char *op = "lmnn_embedding";
    char s1[128];
    lmnn_embedding_options defaults;
    if (!opts) {
        lmnn_embedding_options_init(&defaults);
        opts = &defaults;
    }
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *w, *ix;
    lm_status st = nn_get_tensor(op, "weight", weight, &w);
    if (!st) st = get_index(op, "ids", ids, w, &ix);
    if (st) return st;
    if (w->shape.rank != 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "weight: expected 2 dims [V, D], given %s",
                       nn_shape_str(&w->shape, s1, sizeof s1));
    if (ix->shape.rank >= LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "ids: expected at most %d dims, given %u",
                       LMNN_MAX_DIMS - 1, ix->shape.rank);
    lmnn_layout layout = opts->layout ? opts->layout : w->layout;
    if (layout != LMNN_ROW_MAJOR && layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts.layout: unknown layout %d", (int)layout);
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, &opts->index.output, w, &mem))) return st;
    lmnn_shape s = ix->shape;
    s.dims[s.rank++] = w->shape.dims[1];
    if (layout == LMNN_ROW_MAJOR && w->dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "opts.layout: a bfloat8_b weight gives tile outputs only");
    dm_out od = {s, w->dtype, layout, mem};
    lmnn_tensor oh = {0}, ch = {0};
    nn_tensor *counter = NULL;
    if (opts->index.out_invalid_count && (st = dm_counter_new(op, w->device, &ch, &counter)))
        return st;
    embed_ctx c = {ix, counter, opts->index.negative_from_end ? DM_INDEX_WRAP : DM_INDEX};
    st = dm_run_rm(op, w, &od, embed_rm, &c, &oh);
    return finish(st, oh, out, ch, opts->index.out_invalid_count);
}

/* ---- upsample ---- */

typedef struct upsample_ctx {
    uint32_t sh, sw;
    lmnn_upsample_mode mode;
    bool bf16_weights;
} upsample_ctx;

static lm_status nearest_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                            nn_tensor *out) {
    (void)n;
    const upsample_ctx *c = ctx;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    spec.map[0] = dm_identity(0);
    spec.map[1] = dm_identity(1);
    spec.map[2] = (dm_map){DM_DIV, 0, c->sh, 0, 2};
    spec.map[3] = (dm_map){DM_DIV, 0, c->sw, 0, 3};
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* Tile upsampling: data_upsample.c gathers, data_bilinear_compute.c weighs
 * (bilinear), tile_writer.c writes. */
static lm_status upsample_tiles(const char *op, const upsample_ctx *c, nn_tensor *in,
                                nn_tensor *out) {
    bool bilinear = c->mode == LMNN_UPSAMPLE_BILINEAR;
    nn_tiles gi = nn_tiles_of(&in->shape), go = nn_tiles_of(&out->shape);
    uint32_t esize = in->page_size / 1024; /* 16- or 32-bit elements */
    uint32_t args[17] = {0};
    /* PyTorch keeps bfloat16 inputs' weights in bfloat16 */
    args[2] = (in->memory.type == LM_BUFFER_DRAM ? 1u : 0) | (bilinear ? 16u : 0) |
              (c->bf16_weights ? 32u : 0);
    args[3] = esize;
    args[4] = gi.h;
    args[5] = gi.w;
    args[6] = go.h;
    args[7] = go.w;
    args[8] = gi.ht;
    args[9] = gi.wt;
    args[10] = go.ht;
    args[11] = go.wt;
    args[12] = c->sh;
    args[13] = c->sw;
    args[14] = in->page_size;
    float scale_h = 1.0f / (float)c->sh, scale_w = 1.0f / (float)c->sw;
    memcpy(&args[15], &scale_h, 4);
    memcpy(&args[16], &scale_w, 4);
    uint32_t nargs = 17;
    nn_key key;
    nn_key_init(&key, "upsample");
    nn_key_add(&key, args + 2, 15 * sizeof *args);
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(in->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(in->dtype), fout = nn_tile_format(out->dtype);
        uint32_t wargs[NN_TILE_WRITER_ARGS], nw = 0;
        st = nn_tile_writer_args(op, out, 1, false, wargs, &nw);
        nn_kernel_spec reader = {"data_upsample.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {
            "data_bilinear_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, true};
        nn_kernel_spec writer = {"tile_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
        lm_kernel rk;
        if (!st) st = nn_split_work(op, in->device, out->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 3, fin, in->page_size, 4);
        if (!st && bilinear) st = nn_program_cb(op, &p, 0, fin, in->page_size, 4);
        if (!st && bilinear) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_FLOAT32, 4096, 4);
        if (!st && bilinear) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_FLOAT32, 4096, 2);
        if (!st) st = nn_program_cb(op, &p, 16, fout, out->page_size, 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &rk);
        if (!st && bilinear) st = nn_program_kernel(op, &p, &compute, NULL);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        /* The writer reads its args after {first, count}; the others ignore
         * them (the reader's own args follow). */
        if (!st) st = nn_program_split_args_with(op, &p, &split, wargs, nw);
        for (uint32_t i = 0; !st && i < split.num_cores; i++) {
            args[0] = split.first[i];
            args[1] = split.count[i];
            st = lm_set_runtime_args(p.program, rk, split.cores[i], args, nargs);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

lm_status lmnn_upsample(lmnn_tensor a, uint32_t scale_h, uint32_t scale_w,
                        const lmnn_upsample_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_upsample";
    char s1[128];
    lmnn_upsample_options defaults;
    if (!opts) {
        lmnn_upsample_options_init(&defaults);
        opts = &defaults;
    }
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    if (t->shape.rank != 4)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected 4 dims [N, C, H, W], given %s",
                       nn_shape_str(&t->shape, s1, sizeof s1));
    if (opts->mode != LMNN_UPSAMPLE_NEAREST && opts->mode != LMNN_UPSAMPLE_BILINEAR)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts.mode: unknown upsample mode %d",
                       (int)opts->mode);
    if (scale_h < 1 || scale_h > 64 || scale_w < 1 || scale_w > 64)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected 1..64, given %u",
                       scale_h < 1 || scale_h > 64 ? "scale_h" : "scale_w",
                       scale_h < 1 || scale_h > 64 ? scale_h : scale_w);
    bool bilinear = opts->mode == LMNN_UPSAMPLE_BILINEAR;
    if (bilinear && (st = nn_check_float(op, "a", t))) return st;
    lmnn_shape s = t->shape;
    if ((uint64_t)s.dims[2] * scale_h > UINT32_MAX || (uint64_t)s.dims[3] * scale_w > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "the output would have dims beyond 32 bits");
    s.dims[2] *= scale_h;
    s.dims[3] *= scale_w;
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, &opts->output, t, &mem))) return st;
    dm_out od = {s, t->dtype, t->layout, mem};
    upsample_ctx c = {scale_h, scale_w, opts->mode, t->dtype == LMNN_BFLOAT16};
    if (!bilinear && t->layout == LMNN_ROW_MAJOR) return dm_run_rm(op, t, &od, nearest_rm, &c, out);
    lmnn_tensor oh = {0}, ih = {0}, uh = {0};
    nn_tensor *o, *it = t, *ut;
    if (t->layout == LMNN_TILE && t->dtype != LMNN_BFLOAT8_B) {
        st = dm_make(op, t->device, &od, &oh, &o);
        if (!st) st = upsample_tiles(op, &c, t, o);
    } else {
        /* bfloat8_b through bfloat16 tiles; row-major (bilinear) through tiles */
        dm_out work = od;
        work.dtype = t->dtype == LMNN_BFLOAT8_B ? LMNN_BFLOAT16 : t->dtype;
        work.layout = LMNN_TILE;
        work.memory = (lmnn_memory_config){.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
        dm_out win = work;
        win.shape = t->shape;
        if (t->layout == LMNN_TILE) {
            st = nn_unary_map(op, t, work.dtype, &work.memory, "", false, &ih);
            if (!st) st = nn_get_tensor(op, "a", ih, &it);
        } else {
            st = dm_make(op, t->device, &win, &ih, &it);
            if (!st) st = nn_tilize(op, t, it);
        }
        if (!st) st = dm_make(op, t->device, &work, &uh, &ut);
        if (!st) st = upsample_tiles(op, &c, it, ut);
        if (!st && od.layout == LMNN_ROW_MAJOR) {
            st = dm_make(op, t->device, &od, &oh, &o);
            if (!st) st = nn_untilize(op, ut, o);
        } else if (!st) {
            st = nn_unary_map(op, ut, od.dtype, &od.memory, "", false, &oh);
        }
        nn_tensor_discard(ih);
        nn_tensor_discard(uh);
    }
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* ---- scatter_rows ----
 *
 * The output starts as a page copy of `a` (every core), then one core
 * (scatter_rows.c) moves each update row into place, in index order. */

#define SR_IDX_BLOCK 512u /* scatter_rows.c's IDX_BLOCK and RUN_BLOCK */
#define SR_RUN_BLOCK 64u

/* t's rows: the product of every dim but the last. */
static uint64_t scatter_rows_of(const nn_tensor *t) {
    return lmnn_shape_volume(&t->shape) /
           (t->shape.dims[t->shape.rank - 1] ? t->shape.dims[t->shape.rank - 1] : 1);
}

/* The tile tensor argument `arg` of scatter_rows: 2-D or more (its rows
 * every dim but the last, matrix by matrix), tiles of 2- or 4-byte
 * elements, at most 2^32 - 1 rows. */
static lm_status rows_matrix(const char *op, const char *arg, lmnn_tensor h, nn_tensor **out) {
    lm_status st = nn_get_tensor(op, arg, h, out);
    if (st) return st;
    const nn_tensor *t = *out;
    if (t->layout != LMNN_TILE || t->shape.rank < 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: expected a tile tensor of 2 dims or more, given %s %s", arg,
                       lmnn_layout_name(t->layout), nn_shape_str(&t->shape, (char[64]){0}, 64));
    if (t->dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: bfloat8_b rows share exponents with their neighbours; typecast to "
                       "bfloat16 first",
                       arg);
    if (scatter_rows_of(t) > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: %llu rows, more than 2^32 - 1", arg,
                       (unsigned long long)scatter_rows_of(t));
    return LM_OK;
}

/* The scatter's mapping of entries to rows (lmnn_scatter_options), as
 * scatter_rows.c takes it. */
typedef struct scatter_map {
    uint32_t dim, scale, step;
    nn_tensor *offsets; /* NULL: none */
} scatter_map;

static lm_status scatter_program(const char *op, nn_tensor *o, nn_tensor *u, nn_tensor *ix,
                                 const scatter_map *map, nn_program **out) {
    uint32_t w[4][NN_ACCESSOR_WORDS], nw[4];
    const nn_tensor *ts[4] = {o, u, ix, map->offsets};
    const int count_t = map->offsets ? 4 : 3;
    lm_status st = LM_OK;
    for (int k = 0; k < count_t && !st; k++)
        st = nn_accessor_words(op, ts[k], w[k], &nw[k]);
    if (st) return st;
    const uint32_t r = o->shape.rank, ur = u->shape.rank;
    const uint32_t esize = o->dtype == LMNN_BFLOAT16 ? 2 : 4, wt = o->padded.dims[r - 1] / 32;
    uint32_t args[11 + 4 * NN_ACCESSOR_WORDS] = {(uint32_t)scatter_rows_of(u),
                                                 (uint32_t)scatter_rows_of(o),
                                                 wt,
                                                 esize,
                                                 map->dim,
                                                 map->scale,
                                                 count_t == 4,
                                                 o->shape.dims[r - 2],
                                                 u->shape.dims[ur - 2],
                                                 map->step,
                                                 ix->page_size / 4};
    uint32_t count = 11;
    nn_key key;
    nn_key_init(&key, "scatter_rows");
    nn_key_add(&key, args, count * sizeof args[0]);
    for (int k = 0; k < count_t; k++) {
        nn_key_tensor(&key, ts[k]);
        nn_key_u32(&key, nw[k]);
        nn_key_add(&key, w[k], nw[k] * sizeof w[k][0]);
    }
    if ((*out = nn_cache_find(o->device, &key))) return LM_OK;
    for (int k = 0; k < count_t; k++) {
        memcpy(args + count, w[k], nw[k] * sizeof w[k][0]);
        count += nw[k];
    }
    nn_split one;
    nn_program p = {0};
    nn_kernel_spec mover = {"scatter_rows.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
    st = nn_split_work(op, o->device, 1, &one);
    p.cores = one.all;
    if (!st) st = nn_program_begin(op, o->device, &p);
    if (!st) st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_INT32, 4 * SR_IDX_BLOCK, 1);
    if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, 32 * esize * SR_RUN_BLOCK, 1);
    if (!st) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_UINT32, 4 * SR_IDX_BLOCK, 1);
    if (!st) st = nn_program_kernel(op, &p, &mover, NULL);
    if (!st && (st = lm_set_runtime_args(p.program, p.kernels[0], one.cores[0], args, count)))
        st = nn_fail_call(st, op);
    if (st) {
        nn_program_discard(&p);
        return st;
    }
    return nn_cache_add(op, o->device, &key, &p, out);
}

/* opts' mapping, checked against t (the data) and m (the updates' rows). */
static lm_status scatter_map_of(const char *op, const lmnn_scatter_options *opts,
                                const nn_tensor *t, uint32_t m, scatter_map *out) {
    *out = (scatter_map){opts->index_dim, opts->row_scale, opts->index_step, NULL};
    if (!opts->index_dim) {
        if (opts->row_scale != 1 || opts->offsets.id)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "row_scale %u and offsets map entries along a dim: index_dim is 0",
                           opts->row_scale);
        return LM_OK;
    }
    if (opts->index_dim > INT32_MAX || !opts->row_scale)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "index_dim %u and row_scale %u: expected 1 to 2^31 - 1 and at least 1",
                       opts->index_dim, opts->row_scale);
    if (!opts->offsets.id) return LM_OK;
    char s[64];
    lm_status st = get_index(op, "offsets", opts->offsets, t, &out->offsets);
    if (!st && (lmnn_shape_volume(&out->offsets->shape) != m || out->offsets->pages > 1))
        st = nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                     "offsets: expected %u entries (a row of updates each) in one row, given %s", m,
                     nn_shape_str(&out->offsets->shape, s, sizeof s));
    return st;
}

lm_status lmnn_scatter_rows(lmnn_tensor a, lmnn_tensor index, lmnn_tensor updates,
                            const lmnn_scatter_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_scatter_rows";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_scatter_options defaults;
    lmnn_scatter_options_init(&defaults);
    if (!opts) opts = &defaults;
    nn_tensor *t, *u, *ix;
    lm_status st = rows_matrix(op, "a", a, &t);
    if (!st) st = rows_matrix(op, "updates", updates, &u);
    if (!st) st = nn_check_same_device(op, "updates", u, t);
    if (!st) st = get_index(op, "index", index, t, &ix);
    if (st) return st;
    char sa[64], su[64];
    const uint32_t w = t->shape.dims[t->shape.rank - 1], m = (uint32_t)scatter_rows_of(u);
    if (u->dtype != t->dtype || u->shape.dims[u->shape.rank - 1] != w)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "updates: expected %s rows of a's width %u, given %s %s",
                       lmnn_dtype_name(t->dtype), w, lmnn_dtype_name(u->dtype),
                       nn_shape_str(&u->shape, su, sizeof su));
    const uint32_t step = opts->index_step;
    if (!step) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "index_step 0: expected at least 1");
    if (lmnn_shape_volume(&ix->shape) != (uint64_t)m * step)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "index: expected %llu elements (%u rows of updates, an entry every %u), "
                       "given %s",
                       (unsigned long long)m * step, m, step,
                       nn_shape_str(&ix->shape, sa, sizeof sa));
    scatter_map map;
    if ((st = scatter_map_of(op, opts, t, m, &map))) return st;
    const lmnn_output *output = &opts->output;
    if (output->dtype && output->dtype != t->dtype)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "output: dtype %s, expected a's %s",
                       lmnn_dtype_name(output->dtype), lmnn_dtype_name(t->dtype));
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    dm_out od = {t->shape, t->dtype, LMNN_TILE, mem};
    lmnn_tensor oh = {0};
    nn_tensor *o;
    nn_program *prog = NULL;
    if ((st = dm_make(op, t->device, &od, &oh, &o))) return st;
    st = nn_copy_pages(op, t, o);
    if (!st && m) st = scatter_program(op, o, u, ix, &map, &prog);
    nn_tensor *tensors[] = {o, u, ix, map.offsets};
    if (!st && prog) st = nn_launch(op, prog, tensors, map.offsets ? 4 : 3);
    return finish(st, oh, out, (lmnn_tensor){0}, NULL);
}

/* ---- weighted row gather ---- */

/* L1 the tilized taps of one unit may take (circular buffer 3). */
#define GW_TAPS_BYTES (512u * 1024u)

lm_status lmnn_gather_rows_weighted(lmnn_tensor a, lmnn_tensor index, lmnn_tensor weights,
                                    const lmnn_output *output, lmnn_tensor *out) {
    const char *op = "lmnn_gather_rows_weighted";
    char s1[128], s2[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t, *ix, *w;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (!st) st = get_index(op, "index", index, t, &ix);
    if (!st) st = nn_get_tensor(op, "weights", weights, &w);
    if (!st) st = nn_check_same_device(op, "weights", w, t);
    if (st) return st;
    if (t->layout != LMNN_ROW_MAJOR || t->shape.rank != 2 ||
        (t->dtype != LMNN_FLOAT32 && t->dtype != LMNN_BFLOAT16))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "a: expected a row_major float32 or bfloat16 tensor of 2 dims, given %s "
                       "%s %s",
                       lmnn_layout_name(t->layout), lmnn_dtype_name(t->dtype),
                       nn_shape_str(&t->shape, s1, sizeof s1));
    if (ix->shape.rank != 2 || ix->shape.dims[0] < 1 || ix->shape.dims[0] > LMNN_GATHER_TAPS_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "index: expected [taps, rows] with 1 to %u taps, given %s",
                       LMNN_GATHER_TAPS_MAX, nn_shape_str(&ix->shape, s1, sizeof s1));
    if (w->layout != LMNN_ROW_MAJOR || w->dtype != LMNN_FLOAT32 || w->shape.rank != 2 ||
        w->shape.dims[0] != ix->shape.dims[0] || w->shape.dims[1] != ix->shape.dims[1])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weights: expected a row_major float32 tensor of index's shape %s, given "
                       "%s %s %s",
                       nn_shape_str(&ix->shape, s1, sizeof s1), lmnn_layout_name(w->layout),
                       lmnn_dtype_name(w->dtype), nn_shape_str(&w->shape, s2, sizeof s2));
    if (output && output->dtype && output->dtype != t->dtype)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "output: dtype %s, expected a's %s",
                       lmnn_dtype_name(output->dtype), lmnn_dtype_name(t->dtype));
    uint32_t rows = t->shape.dims[0], cols = t->shape.dims[1];
    uint32_t taps = ix->shape.dims[0], g = ix->shape.dims[1];
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    dm_out od = {LMNN_SHAPE(g, cols), t->dtype, LMNN_TILE, mem};
    lmnn_tensor oh = {0};
    nn_tensor *o;
    if ((st = dm_make(op, t->device, &od, &oh, &o))) return st;
    if (!g || !cols || !rows) return finish(LM_OK, oh, out, (lmnn_tensor){0}, NULL);
    /* Each unit a block of 32 rows by `group` column tiles, a divisor of
     * the row's tiles (so no unit wraps a circular buffer), as many as dst
     * holds in float32 and the taps' tiles leave L1 for. */
    uint32_t esize = nn_rm_elem_size(t->dtype), tile = 1024 * esize, wt = (cols + 31) / 32;
    uint32_t group = 8;
    while (group > 1 && (wt % group || (uint64_t)taps * group * tile > GW_TAPS_BYTES))
        group--;
    uint32_t groups = wt / group;
    uint64_t units = (uint64_t)((g + 31) / 32) * groups;
    uint32_t args[10] = {0};
    args[2] = (t->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
              (ix->memory.type == LM_BUFFER_DRAM ? 2u : 0) |
              (w->memory.type == LM_BUFFER_DRAM ? 4u : 0) | (ix->dtype == LMNN_UINT32 ? 8u : 0);
    args[3] = esize;
    args[4] = rows;
    args[5] = cols;
    args[6] = g;
    args[7] = taps;
    args[8] = group;
    args[9] = groups;
    nn_key key;
    nn_key_init(&key, "gather_rows_weighted");
    nn_key_add(&key, args + 2, 8 * sizeof *args);
    nn_key_tensor(&key, t);
    nn_key_tensor(&key, ix);
    nn_key_tensor(&key, w);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(t->device, &key);
    if (!prog) {
        nn_split split, tiles;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(t->dtype), fout = nn_tile_format(o->dtype);
        uint32_t wargs[NN_TILE_WRITER_ARGS], nw = 0;
        /* (a negative weight times a zero column past the last makes -0) */
        st = nn_tile_writer_args(op, o, 3, cols % 32 != 0, wargs, &nw);
        nn_kernel_spec reader = {
            "gather_weighted_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {
            "gather_weighted_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, true};
        nn_kernel_spec writer = {"tile_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
        lm_kernel rk = {0}, ck = {0}, wk = {0};
        if (!st) st = nn_split_work(op, t->device, units, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, t->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, tile, 2 * group);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_FLOAT32, 4096, taps);
        if (!st) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 3, fin, tile, taps * group);
        if (!st) st = nn_program_cb(op, &p, 16, fout, o->page_size, 2 * group);
        if (!st) st = nn_program_kernel(op, &p, &reader, &rk);
        if (!st) st = nn_program_kernel(op, &p, &compute, &ck);
        if (!st) st = nn_program_kernel(op, &p, &writer, &wk);
        /* The writer counts tiles, the others units. */
        tiles = split;
        for (uint32_t i = 0; i < split.num_cores; i++) {
            tiles.first[i] = split.first[i] * group;
            tiles.count[i] = split.count[i] * group;
        }
        if (!st) st = nn_kernel_split_args(op, &p, wk, &tiles, wargs, nw);
        for (uint32_t i = 0; !st && i < split.num_cores; i++) {
            args[0] = split.first[i];
            args[1] = split.count[i];
            st = lm_set_runtime_args(p.program, rk, split.cores[i], args, 10);
            if (!st) st = lm_set_runtime_args(p.program, ck, split.cores[i], args, 10);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, t->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {t, ix, w, o};
    if (!st) st = nn_launch(op, prog, tensors, 4);
    return finish(st, oh, out, (lmnn_tensor){0}, NULL);
}
