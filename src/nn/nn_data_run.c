/* Running data movement: the generic row kernel (kernels/data_rows.c) from a
 * dm_spec, row-major stand-ins for tile tensors, and small shared pieces. */
#include <math.h>
#include <string.h>

#include "nn/nn_data.h"

/* Output chunk limit (bytes of L1 per core). */
#define DM_CHUNK_BYTES (64u * 1024u)
#define DM_IDX_BLOCK 256u /* index entries cached at once: the kernel's IDX_BLOCK */

/* Runtime argument positions: the kernel's DR_*. */
enum {
    DR_FLAGS = 2,
    DR_ESIZE,
    DR_RANK,
    DR_IN_W,
    DR_OUT_W,
    DR_CHUNK,
    DR_NCHUNKS,
    DR_OUT_ROW0,
    DR_OUT_COL0,
    DR_FILL,
    DR_IDX_W,
    DR_STAGE,
    DR_HT,
    DR_WT,
    DR_H,
    DR_W,
    DR_FMT,
    DR_DIMS = 20,
    DR_DIM_WORDS = 9,
};

static void view_of(const nn_tensor *t, bool tiles, uint32_t *rank, uint32_t *dims) {
    const lmnn_shape *s = &t->shape;
    if (!tiles) {
        *rank = s->rank ? s->rank : 1;
        dims[0] = 1;
        for (uint32_t i = 0; i < s->rank; i++)
            dims[i] = s->dims[i];
        return;
    }
    /* a rank below 2 is [1, W] or [1, 1] */
    nn_tiles g = nn_tiles_of(s);
    uint32_t r = s->rank < 2 ? 2 : s->rank;
    for (uint32_t i = 0; i + 2 < r; i++)
        dims[i] = s->dims[i];
    dims[r - 2] = g.ht;
    dims[r - 1] = g.wt;
    dims[r] = 1;
    *rank = r + 1;
}

void dm_spec_init(dm_spec *spec, const nn_tensor *in, const nn_tensor *out, bool tiles) {
    memset(spec, 0, sizeof *spec);
    spec->tiles = tiles;
    view_of(in, tiles, &spec->in_rank, spec->in_dims);
    view_of(out, tiles, &spec->out_rank, spec->out_dims);
    for (uint32_t d = 0; d < DM_MAX_DIMS; d++)
        spec->map[d].src = -1;
}

dm_map dm_identity(int32_t src) {
    return (dm_map){DM_AFFINE, 0, 1, 0, src};
}

static bool unit_runs(const dm_map *m) {
    return (m->kind == DM_AFFINE && m->b == 1) || m->kind == DM_PAD || m->kind == DM_MOD;
}

/* The kernel's flag: stage the whole input page a row's source start is
 * on, shared by the rows that start on the same page. */
#define DR_STAGE_PAGE 128u

/* The input view's strides in elements; dims past its rank (flat
 * reshapes) stay 0. */
static void in_strides(const dm_spec *spec, uint32_t *in_stride) {
    memset(in_stride, 0, DM_MAX_DIMS * sizeof *in_stride);
    in_stride[spec->in_rank - 1] = 1;
    for (int32_t d = (int32_t)spec->in_rank - 2; d >= 0; d--)
        in_stride[d] = in_stride[d + 1] * spec->in_dims[d + 1];
}

uint32_t dm_block_stage(const dm_spec *spec, uint32_t in_w, uint32_t esize, bool *out_page) {
    uint32_t R = spec->out_rank, in_stride[DM_MAX_DIMS];
    const dm_map *last = &spec->map[R - 1];
    uint32_t width = spec->box[R - 1] ? spec->box[R - 1] : spec->out_dims[R - 1];
    uint32_t b2 = spec->block_b2, a2 = spec->block_a2;
    uint64_t reach = (uint64_t)(width / (last->b * b2) - 1) * last->n +
                     (uint64_t)(last->b - 1) * last->a + (uint64_t)(b2 - 1) * a2 + 1;
    in_strides(spec, in_stride);
    /* The furthest a row's source start lies into its page. */
    uint64_t into = 0;
    bool pages = true;
    for (uint32_t d = 0; d + 1 < R && pages; d++) {
        const dm_map *m = &spec->map[d];
        uint32_t box = spec->box[d] ? spec->box[d] : spec->out_dims[d];
        uint64_t is = m->src >= 0 ? in_stride[m->src] : 0;
        pages = m->kind == DM_AFFINE && m->b <= 1;
        if (is % in_w) into += ((uint64_t)m->a + (uint64_t)m->b * (box - 1)) * is;
    }
    *out_page = pages && into + reach <= in_w && (uint64_t)in_w * esize <= DM_STAGE_BYTES;
    if (*out_page) return in_w;
    return reach * esize <= DM_STAGE_BYTES && reach <= 8ull * width ? (uint32_t)reach : 0;
}

lm_status dm_run(const char *op, const dm_spec *spec, nn_tensor *in, nn_tensor *out,
                 nn_tensor *index, nn_tensor *counter) {
    uint32_t R = spec->out_rank, box[DM_MAX_DIMS], ostride[DM_MAX_DIMS], istride[DM_MAX_DIMS];
    uint32_t in_stride[DM_MAX_DIMS];
    uint64_t rows = 1;
    for (uint32_t d = 0; d < R; d++)
        box[d] = spec->box[d] ? spec->box[d] : spec->out_dims[d];
    ostride[R - 1] = 0;
    for (int32_t d = (int32_t)R - 2, s = 1; d >= 0; d--) {
        ostride[d] = (uint32_t)s;
        s *= (int32_t)spec->out_dims[d];
    }
    in_strides(spec, in_stride);
    for (uint32_t d = 0; d < R; d++)
        istride[d] = spec->map[d].src >= 0 ? in_stride[spec->map[d].src] : 0;
    for (uint32_t d = 0; d + 1 < R; d++)
        rows *= box[d];
    uint32_t out_row0 = 0;
    for (uint32_t d = 0; d + 1 < R; d++)
        out_row0 += spec->box_lo[d] * ostride[d];

    bool tiles = spec->tiles;
    if (lmnn_shape_volume(&in->shape) > UINT32_MAX || lmnn_shape_volume(&out->shape) > UINT32_MAX)
        return nn_fail(
            LM_ERR_UNSUPPORTED, op,
            "tensors of more than 2^32 elements (the kernels count elements in 32 bits)");
    uint32_t esize = tiles ? in->page_size : nn_rm_elem_size(in->dtype);
    uint32_t in_w = tiles             ? 1
                    : spec->in_page_w ? spec->in_page_w
                                      : spec->in_dims[spec->in_rank - 1];
    uint32_t out_w = tiles ? 1 : spec->out_dims[R - 1];
    uint32_t width = box[R - 1];
    uint32_t chunk = tiles ? 1 : DM_CHUNK_BYTES / esize;
    if (chunk > width) chunk = width;
    uint32_t nchunks = (width + chunk - 1) / chunk;
    const dm_map *last = &spec->map[R - 1];
    uint32_t stage = 0, flags = spec->flags;
    if (spec->flags & DM_TRANSPOSE) {
        stage = 1;
    } else if (!tiles && last->kind == DM_BLOCK) {
        bool page;
        stage = dm_block_stage(spec, in_w, esize, &page);
        if (page) flags |= DR_STAGE_PAGE;
    } else if (!tiles && !(spec->flags & DM_FLAT) && !spec->in_page_w && istride[R - 1] == 1 &&
               !unit_runs(last) && (uint64_t)in_w * esize <= DM_STAGE_BYTES) {
        stage = in_w;
    }
    uint32_t idx_w = 0;
    if (index) idx_w = index->shape.rank ? index->shape.dims[index->shape.rank - 1] : 1;
    nn_tiles g = nn_tiles_of(&out->shape);

    uint32_t desc[DR_DIMS + DM_MAX_DIMS * DR_DIM_WORDS] = {0};
    desc[DR_FLAGS] = flags | (in->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
                     (out->memory.type == LM_BUFFER_DRAM ? 2u : 0) |
                     (index && index->memory.type == LM_BUFFER_DRAM ? 4u : 0) | (counter ? 8u : 0);
    desc[DR_ESIZE] = esize;
    desc[DR_RANK] = R;
    desc[DR_IN_W] = in_w;
    desc[DR_OUT_W] = out_w;
    desc[DR_CHUNK] = chunk;
    desc[DR_NCHUNKS] = nchunks;
    desc[DR_OUT_ROW0] = out_row0;
    desc[DR_OUT_COL0] = tiles ? 0 : spec->box_lo[R - 1];
    desc[DR_FILL] = spec->fill_bits;
    desc[DR_IDX_W] = idx_w;
    desc[DR_STAGE] = stage;
    desc[DR_HT] = g.ht;
    desc[DR_WT] = g.wt;
    desc[DR_H] = g.h;
    desc[DR_W] = g.w;
    desc[DR_FMT] = tiles ? (uint32_t)nn_tile_format(out->dtype) : 0;
    for (uint32_t d = 0; d < R; d++) {
        const dm_map *m = &spec->map[d];
        uint32_t *w = &desc[DR_DIMS + d * DR_DIM_WORDS];
        w[0] = box[d];
        w[1] = ostride[d];
        w[2] = m->kind;
        w[3] = m->a;
        w[4] = m->b;
        w[5] = m->n;
        w[6] = istride[d];
        w[7] = m->kind == DM_BLOCK ? spec->block_b2 : 0;
        w[8] = m->kind == DM_BLOCK ? spec->block_a2 : 0;
    }
    uint32_t ndesc = DR_DIMS + R * DR_DIM_WORDS;

    nn_key key;
    nn_key_init(&key, "data_rows");
    nn_key_add(&key, desc + DR_FLAGS, (ndesc - DR_FLAGS) * sizeof *desc);
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    if (index) nn_key_tensor(&key, index);
    nn_program *prog = nn_cache_find(in->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec k = {"data_rows.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, in->device, rows * nchunks, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st)
            st =
                nn_program_cb(op, &p, 16, LM_DATA_FORMAT_UINT32, (chunk * esize + 31) / 32 * 32, 1);
        if (!st && stage)
            st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, (stage * esize + 31) / 32 * 32, 1);
        if (!st && index) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, DM_IDX_BLOCK * 4, 1);
        if (!st) st = nn_program_kernel(op, &p, &k, NULL);
        for (uint32_t i = 0; !st && i < split.num_cores; i++) {
            desc[0] = split.first[i];
            desc[1] = split.count[i];
            st = lm_set_runtime_args(p.program, p.kernels[0], split.cores[i], desc, ndesc);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out, index ? index : out, counter ? counter : out};
    return st ? st : nn_launch(op, prog, tensors, 4);
}

/* ---- tensors ---- */

/* `dim` (negative counts from the end) as 0 .. rank-1. */
lm_status dm_norm_dim(const char *op, const char *arg, int32_t dim, uint32_t rank, uint32_t *out) {
    int32_t r = (int32_t)(rank ? rank : 1);
    if (dim < -r || dim >= r)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected a dim in [%d, %d], given %d", arg,
                       -r, r - 1, dim);
    *out = (uint32_t)(dim < 0 ? dim + r : dim);
    return LM_OK;
}

/* The output's memory config; its dtype must be unset or `t`'s. */
lm_status dm_out_memory(const char *op, const lmnn_output *output, const nn_tensor *t,
                        lmnn_memory_config *out) {
    if (output && output->dtype && output->dtype != t->dtype)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected %s (the input's; data movement does not convert), "
                       "given %s",
                       lmnn_dtype_name(t->dtype), lmnn_dtype_name(output->dtype));
    *out = nn_output_memory(output ? &output->memory : NULL, t);
    return nn_check_memory(op, out);
}

lm_status dm_make(const char *op, lm_device *device, const dm_out *out, lmnn_tensor *out_handle,
                  nn_tensor **out_tensor) {
    return nn_tensor_new(op, device, &out->shape, out->dtype, out->layout, &out->memory, out_handle,
                         out_tensor);
}

lm_status dm_counter_new(const char *op, lm_device *device, lmnn_tensor *out_handle,
                         nn_tensor **out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_UINT32;
    o.layout = LMNN_ROW_MAJOR;
    o.memory.type = LM_BUFFER_L1;
    lmnn_shape one = LMNN_SHAPE(1);
    lm_status st = lmnn_full(device, &one, 0, &o, out_handle);
    if (st) return nn_fail_call(st, op);
    return nn_get_tensor(op, "counter", *out_handle, out);
}

/* ---- row-major stand-ins ---- */

lm_status dm_untilized(const char *op, nn_tensor *t, lmnn_tensor *h, nn_tensor **rm) {
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor wide = {0};
    nn_tensor *src = t, *w;
    lm_status st = LM_OK;
    if (t->dtype == LMNN_BFLOAT8_B) {
        st = nn_unary_map(op, t, LMNN_BFLOAT16, &dram, "", false, &wide);
        if (!st) st = nn_get_tensor(op, "a", wide, &w);
        if (st) return st;
        src = w;
    }
    st = nn_tensor_new(op, t->device, &t->shape, src->dtype, LMNN_ROW_MAJOR, &dram, h, rm);
    if (!st) st = nn_untilize(op, src, *rm);
    nn_tensor_discard(wide);
    if (st) {
        nn_tensor_discard(*h);
        h->id = 0;
    }
    return st;
}

lm_status dm_via_rm(const char *op, nn_tensor *const *ins, uint32_t count, const dm_out *out,
                    dm_rm_fn fn, const void *ctx, lmnn_tensor *out_handle) {
    enum { MAX_INS = 64 };
    lmnn_tensor temps[MAX_INS + 2] = {{0}}, result = {0};
    nn_tensor *rm_ins[MAX_INS];
    lm_device *device = ins[0]->device;
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lm_status st = LM_OK;
    if (count > MAX_INS)
        return nn_fail(LM_ERR_UNSUPPORTED, op, "more than %d tile tensors at once", MAX_INS);
    for (uint32_t i = 0; i < count && !st; i++) {
        rm_ins[i] = ins[i];
        if (ins[i]->layout == LMNN_TILE) st = dm_untilized(op, ins[i], &temps[i], &rm_ins[i]);
    }
    nn_tensor *rm_out, *tl;
    if (!st && out->layout == LMNN_ROW_MAJOR) {
        st = dm_make(op, device, out, &result, &rm_out);
        if (!st) st = fn(op, ctx, rm_ins, count, rm_out);
    } else if (!st) {
        dm_out work = *out;
        work.dtype = out->dtype == LMNN_BFLOAT8_B ? LMNN_BFLOAT16 : out->dtype;
        work.layout = LMNN_ROW_MAJOR;
        work.memory = dram;
        st = dm_make(op, device, &work, &temps[count], &rm_out);
        if (!st) st = fn(op, ctx, rm_ins, count, rm_out);
        if (!st && work.dtype == out->dtype) {
            st = dm_make(op, device, out, &result, &tl);
            if (!st) st = nn_tilize(op, rm_out, tl);
        } else if (!st) {
            /* bfloat8_b: tilize as bfloat16, then pack */
            work.layout = LMNN_TILE;
            st = dm_make(op, device, &work, &temps[count + 1], &tl);
            if (!st) st = nn_tilize(op, rm_out, tl);
            if (!st) st = nn_unary_map(op, tl, out->dtype, &out->memory, "", false, &result);
        }
    }
    for (uint32_t i = 0; i < count + 2; i++)
        nn_tensor_discard(temps[i]);
    if (st) {
        nn_tensor_discard(result);
        return st;
    }
    *out_handle = result;
    return LM_OK;
}

lm_status dm_run_rm(const char *op, nn_tensor *in, const dm_out *out, dm_rm_fn fn, const void *ctx,
                    lmnn_tensor *out_handle) {
    if (in->layout == LMNN_TILE || out->layout == LMNN_TILE)
        return dm_via_rm(op, &in, 1, out, fn, ctx, out_handle);
    lmnn_tensor h;
    nn_tensor *o = NULL;
    lm_status st = dm_make(op, in->device, out, &h, &o);
    if (!st) st = fn(op, ctx, &in, 1, o);
    if (st) {
        nn_tensor_discard(h);
        return st;
    }
    *out_handle = h;
    return LM_OK;
}
