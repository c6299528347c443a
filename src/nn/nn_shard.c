/* Sharded tensors: lmnn_to_memory_config and the page copy behind it (and
 * behind from_host / to_host / full of sharded tensors).
 *
 * Two tensors of the same shape, dtype and layout have the same pages; only
 * where each page lives differs. One kernel (shard_copy.c) moves pages
 * between any two memory configs: each side is addressed through its buffer's
 * tensor accessor words (lm_tensor_accessor_args), given as runtime args and
 * so part of the cache key; the buffer addresses are the common runtime args,
 * as for every op. */
#include <string.h>

#include "nn/nn_internal.h"

/* Bytes a scratch slot holds, and slots per core: a page longer than a slot
 * moves in pieces, so any row length fits L1. */
#define COPY_CHUNK_MAX 16384u
#define COPY_BATCH 8u

lm_status nn_copy_pages(const char *op, nn_tensor *in, nn_tensor *out) {
    if (in->pages != out->pages || in->page_size != out->page_size)
        return nn_fail(LM_ERR_INTERNAL, op,
                       "page copy between %llu pages of %u bytes and %llu of %u",
                       (unsigned long long)in->pages, in->page_size, (unsigned long long)out->pages,
                       out->page_size);
    if (in->pages > UINT32_MAX)
        return nn_fail(LM_ERR_UNSUPPORTED, op, "a tensor of %llu pages (at most 2^32 - 1)",
                       (unsigned long long)in->pages);
    uint32_t win[LM_TENSOR_ACCESSOR_MAX_ARGS], wout[LM_TENSOR_ACCESSOR_MAX_ARGS], nin = 0, nout = 0;
    lm_status st = lm_tensor_accessor_args(in->buffer, win, LM_TENSOR_ACCESSOR_MAX_ARGS, &nin);
    if (!st) st = lm_tensor_accessor_args(out->buffer, wout, LM_TENSOR_ACCESSOR_MAX_ARGS, &nout);
    if (st) return nn_fail_call(st, op);
    nn_key key;
    nn_key_init(&key, "copy_pages");
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    /* Where the pages live (shard geometry and cores): everything but the
     * addresses, which the launch passes. */
    nn_key_u32(&key, nin);
    nn_key_add(&key, win, nin * sizeof win[0]);
    nn_key_u32(&key, nout);
    nn_key_add(&key, wout, nout * sizeof wout[0]);
    nn_program *prog = nn_cache_find(in->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        uint32_t chunk = in->page_size < COPY_CHUNK_MAX ? in->page_size : COPY_CHUNK_MAX;
        chunk = (chunk + 31) / 32 * 32;
        uint32_t args[5 + 2 * LM_TENSOR_ACCESSOR_MAX_ARGS] = {0, 0, in->page_size, chunk,
                                                              COPY_BATCH};
        memcpy(args + 5, win, nin * sizeof win[0]);
        memcpy(args + 5 + nin, wout, nout * sizeof wout[0]);
        nn_kernel_spec copier = {"shard_copy.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, in->device, in->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, chunk, COPY_BATCH);
        if (!st) st = nn_program_kernel(op, &p, &copier, NULL);
        for (uint32_t i = 0; i < split.num_cores && !st; i++) {
            args[0] = split.first[i];
            args[1] = split.count[i];
            st = lm_set_runtime_args(p.program, p.kernels[0], split.cores[i], args, 5 + nin + nout);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

lm_status lmnn_to_memory_config(lmnn_tensor tensor, const lmnn_memory_config *memory,
                                lmnn_tensor *out_tensor) {
    const char *op = "lmnn_to_memory_config";
    nn_tensor *t;
    lm_status st = nn_get_tensor_any(op, "tensor", tensor, &t);
    if (st) return st;
    if (!memory || !out_tensor)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !memory ? "memory" : "out_tensor");
    lmnn_memory_config m = t->memory;
    if (memory->type) m.type = memory->type;
    if (memory->layout) {
        m.layout = memory->layout;
        m.shard = memory->shard;
    }
    if ((st = nn_check_memory_any(op, "memory", t->device, &m, &t->shape, t->layout, NULL)))
        return st;
    lmnn_tensor oh;
    nn_tensor *o;
    st = nn_tensor_new_any(op, t->device, &t->shape, t->dtype, t->layout, &m, &oh, &o);
    if (st) return st;
    if ((st = nn_copy_pages(op, t, o))) {
        nn_tensor_discard(oh);
        return st;
    }
    *out_tensor = oh;
    return LM_OK;
}

lm_status lmnn_create_sharded_memory_config(lm_device *device, const lmnn_shape *shape,
                                            lmnn_layout layout, lm_buffer_type type,
                                            lm_buffer_layout strategy,
                                            const lm_core_range_set *grid,
                                            lmnn_shard_orientation orientation,
                                            lmnn_memory_config *out_memory) {
    const char *op = "lmnn_create_sharded_memory_config";
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    if (!shape || !grid || !out_memory)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !shape  ? "shape"
                       : !grid ? "grid"
                               : "out_memory");
    if (layout != LMNN_ROW_MAJOR && layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "layout: unknown layout %d", (int)layout);
    lmnn_memory_config m = {.type = type, .layout = strategy};
    if (!nn_memory_is_sharded(&m))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "strategy: expected LM_BUFFER_HEIGHT, WIDTH or BLOCK_SHARDED, given %d",
                       (int)strategy);
    if (shape->rank > LMNN_MAX_DIMS || !lmnn_shape_volume(shape))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: expected 0..%d dims of at least 1, given rank %u", LMNN_MAX_DIMS,
                       shape->rank);
    if (grid->count == 0 || grid->count > LM_MAX_CORE_RANGES)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "grid: expected 1..%d core ranges, given %u",
                       LM_MAX_CORE_RANGES, grid->count);
    uint64_t cores = 0;
    for (uint32_t i = 0; i < grid->count; i++) {
        lm_core a = grid->ranges[i].start, b = grid->ranges[i].end;
        if (b.x < a.x || b.y < a.y)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "grid: range %u (%u,%u)-(%u,%u) is empty",
                           i, a.x, a.y, b.x, b.y);
        cores += (uint64_t)(b.x - a.x + 1) * (b.y - a.y + 1);
    }
    if (strategy == LM_BUFFER_BLOCK_SHARDED && grid->count != 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "grid: expected one rectangle for block sharding, given %u ranges",
                       grid->count);
    /* The matrix view in units of whole pages' rows and columns (tiles, or
     * rows and elements for row-major). */
    bool tile = layout == LMNN_TILE;
    nn_tiles g = nn_tiles_of(shape);
    uint32_t unit = tile ? 32 : 1;
    uint64_t rows = tile ? (uint64_t)g.batch * g.ht : lmnn_shape_volume(shape) / g.w;
    uint64_t cols = tile ? g.wt : g.w;
    uint64_t over_rows = 1, over_cols = 1;
    if (strategy == LM_BUFFER_HEIGHT_SHARDED) over_rows = cores;
    if (strategy == LM_BUFFER_WIDTH_SHARDED) over_cols = cores;
    if (strategy == LM_BUFFER_BLOCK_SHARDED) {
        lm_core a = grid->ranges[0].start, b = grid->ranges[0].end;
        uint64_t gw = b.x - a.x + 1, gh = b.y - a.y + 1;
        bool col = orientation == LMNN_SHARD_COL_MAJOR;
        over_rows = col ? gw : gh;
        over_cols = col ? gh : gw;
    }
    uint64_t sh = (rows + over_rows - 1) / over_rows * unit;
    uint64_t sw = (cols + over_cols - 1) / over_cols * unit;
    if (sh > UINT32_MAX || sw > UINT32_MAX)
        return nn_fail(LM_ERR_UNSUPPORTED, op, "shape: shards of more than 2^32 rows or columns");
    m.shard = (lmnn_shard_spec){
        .grid = *grid, .height = (uint32_t)sh, .width = (uint32_t)sw, .orientation = orientation};
    lm_status st = nn_check_memory_any(op, "result", device, &m, shape, layout, NULL);
    if (st) return st;
    *out_memory = m;
    return LM_OK;
}
