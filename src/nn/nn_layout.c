/* Tensors in and out of the device, and between layouts and dtypes: from_host,
 * to_host, full, to_layout (tilize / untilize on the device) and typecast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"

/* Column blocks of tilize / untilize: at most this many tiles per unit, so a
 * block's two buffered copies stay small next to L1 whatever the width. */
#define ROW_BLOCK_TILES 8

static lm_data_format rm_format(lmnn_dtype dtype) {
    return dtype == LMNN_FLOAT32 ? LM_DATA_FORMAT_FLOAT32 : nn_tile_format(dtype);
}

/* The row-major dtype a tile dtype travels as between host and device. */
static lmnn_dtype rm_dtype_of(lmnn_dtype dtype) {
    return dtype == LMNN_BFLOAT8_B ? LMNN_FLOAT32 : dtype;
}

/* An untilize may give `out` rows of another length than `in`'s (see
 * nn_untilize); a tilize may not. */
static lm_status row_blocks(const char *op, bool untilize, nn_tensor *in, nn_tensor *out) {
    const nn_tensor *rm = untilize ? out : in, *tl = untilize ? in : out;
    nn_tiles g = nn_tiles_of(&in->shape);
    /* The last unit of a row may be narrower; the kernels still move a full
     * unit's pages for it, so no unit wraps around the circular buffers. */
    uint32_t block = g.wt < ROW_BLOCK_TILES ? g.wt : ROW_BLOCK_TILES;
    uint32_t nb = (g.wt + block - 1) / block;
    uint32_t len = nn_tiles_of(&out->shape).w;
    if (len != g.w && (!untilize || (nb > 1 && len % g.w) ||
                       lmnn_shape_volume(&in->shape) != lmnn_shape_volume(&out->shape)))
        return nn_fail(LM_ERR_INTERNAL, op, "untilize: rows of %u cannot become rows of %u", g.w,
                       len);
    nn_key key;
    nn_key_init(&key, untilize ? "untilize" : "tilize");
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(in->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split work;
        nn_program p = {0};
        uint32_t esize = nn_rm_elem_size(rm->dtype);
        uint32_t args[] = {in->memory.type == LM_BUFFER_DRAM, out->memory.type == LM_BUFFER_DRAM,
                           esize};
        uint32_t shape[] = {g.h, g.w, g.ht, g.wt, block, len};
        lm_data_format frm = rm_format(rm->dtype), ftl = nn_tile_format(tl->dtype);
        uint32_t rm_page = 32 * 32 * esize, tl_page = (uint32_t)lm_tile_size(ftl);
        lm_kernel_define def = {"NN_UNTILIZE", NULL}, rdef = {"NN_UNITS_READ", NULL};
        /* The tile side is tile_units.c either way; the row-major side has a
         * kernel per direction. */
        nn_kernel_spec reader = {untilize ? "tile_units.c" : "tilize_reader.c",
                                 LM_PROCESSOR_DM0,
                                 args,
                                 3,
                                 &rdef,
                                 untilize,
                                 false};
        nn_kernel_spec compute = {
            "tilize_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, &def, untilize, false};
        nn_kernel_spec writer = {untilize ? "untilize_writer.c" : "tile_units.c",
                                 LM_PROCESSOR_DM1,
                                 args,
                                 3,
                                 NULL,
                                 0,
                                 false};
        st = nn_split_work(op, in->device, (uint64_t)g.batch * g.ht * nb, &work);
        p.cores = work.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st)
            st = nn_program_cb(op, &p, 0, untilize ? ftl : frm, untilize ? tl_page : rm_page,
                               2 * block);
        if (!st)
            st = nn_program_cb(op, &p, 16, untilize ? frm : ftl, untilize ? rm_page : tl_page,
                               2 * block);
        if (!st) st = nn_program_kernel(op, &p, &reader, NULL);
        if (!st) st = nn_program_kernel(op, &p, &compute, NULL);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &work, shape, 6);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

lm_status nn_tilize(const char *op, nn_tensor *in, nn_tensor *out) {
    return row_blocks(op, false, in, out);
}

lm_status nn_untilize(const char *op, nn_tensor *in, nn_tensor *out) {
    return row_blocks(op, true, in, out);
}

/* ---- host <-> device ---- */

static lm_status check_options(const char *op, const lmnn_tensor_options *o) {
    lm_status st = nn_check_dtype(op, "opts.dtype", o->dtype);
    if (st) return st;
    if (o->layout != LMNN_ROW_MAJOR && o->layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts.layout: unknown layout %d",
                       (int)o->layout);
    /* A shard spec is checked against the shape (nn_check_memory_any). */
    if (nn_memory_is_sharded(&o->memory)) return LM_OK;
    return nn_check_memory(op, &o->memory);
}

/* An interleaved tile tensor from the host's 4-byte elements: tilized on
 * the host (lm_tilize: the same tile formats as the device's tilize) and
 * written as its pages, one write and no program -- what a capture then
 * records for a weight. */
static lm_status from_host_tiles(const char *op, lm_device *device, const lmnn_shape *shape,
                                 const void *data, const lmnn_tensor_options *opts,
                                 lmnn_tensor *out_tensor) {
    lmnn_tensor th;
    nn_tensor *t;
    lm_status st =
        nn_tensor_new_any(op, device, shape, opts->dtype, LMNN_TILE, &opts->memory, &th, &t);
    if (st) return st;
    nn_tiles g = nn_tiles_of(shape);
    lm_data_format format = nn_tile_format(opts->dtype);
    uint64_t rows = (uint64_t)g.batch * g.ht * 32, cols = (uint64_t)g.wt * 32;
    size_t bytes = (size_t)t->pages * lm_tile_size(format);
    float *padded = calloc(rows * cols, sizeof *padded);
    void *tiles = malloc(bytes ? bytes : 1);
    if (!padded || !tiles)
        st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory to tilize the data");
    /* The matrices' rows at the top left of their whole tiles, zeros around
     * (the padding). */
    const uint8_t *src = data;
    for (uint64_t m = 0; !st && m < g.batch; m++)
        for (uint32_t r = 0; r < g.h; r++)
            memcpy(padded + (m * g.ht * 32 + r) * cols, src + ((m * g.h + r) * g.w) * 4,
                   (size_t)g.w * 4);
    if (!st && rows > UINT32_MAX)
        st = nn_fail(LM_ERR_INVALID_ARGUMENT, op, "the tensor has too many tile rows");
    if (!st && (st = lm_tilize(padded, (uint32_t)rows, (uint32_t)cols, format, tiles, bytes)))
        st = nn_fail_call(st, op);
    free(padded);
    if (!st &&
        (st = lm_enqueue_write_buffer(lm_device_command_queue(device, 0), t->buffer, tiles, true)))
        st = nn_fail_call(st, op);
    free(tiles);
    if (st) {
        nn_tensor_discard(th);
        return st;
    }
    *out_tensor = th;
    return LM_OK;
}

/* Whether the whole tiles of `shape` would be mostly padding (a vector, a
 * column) and large: the data is then written as rows and tilized on the
 * device, so that a capture stores the data, not the tiles (a column of
 * 1M floats is 4 MB of rows, 128 MB of tiles). */
static bool sparse_tiles(const lmnn_shape *shape, lmnn_dtype dtype) {
    enum { SPARSE_MIN_BYTES = 1 << 20, SPARSE_RATIO = 4 };
    nn_tiles g = nn_tiles_of(shape);
    uint64_t tiles = (uint64_t)g.batch * g.ht * g.wt * lm_tile_size(nn_tile_format(dtype));
    return tiles >= SPARSE_MIN_BYTES &&
           tiles / SPARSE_RATIO > lmnn_shape_volume(shape) * lmnn_dtype_host_size(dtype);
}

lm_status lmnn_from_host(lm_device *device, const lmnn_shape *shape, const void *data, size_t size,
                         const lmnn_tensor_options *opts, lmnn_tensor *out_tensor) {
    const char *op = "lmnn_from_host";
    char sbuf[128];
    lmnn_tensor_options defaults;
    if (!opts) {
        lmnn_tensor_options_init(&defaults);
        opts = &defaults;
    }
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    if (!shape || !data || !out_tensor)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !shape  ? "shape"
                       : !data ? "data"
                               : "out_tensor");
    lm_status st = check_options(op, opts);
    if (st) return st;
    uint64_t volume = lmnn_shape_volume(shape);
    if (shape->rank > LMNN_MAX_DIMS || !volume)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: expected 0..%d dims of at least 1, given rank %u", LMNN_MAX_DIMS,
                       shape->rank);
    size_t esize = lmnn_dtype_host_size(opts->dtype);
    if (volume > SIZE_MAX / esize || size != volume * esize)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "size: shape %s of %s needs %llu bytes, given %zu",
                       nn_shape_str(shape, sbuf, sizeof sbuf), lmnn_dtype_name(opts->dtype),
                       (unsigned long long)(volume * esize), size);
    bool tile = opts->layout == LMNN_TILE;
    lmnn_dtype rm_dtype = rm_dtype_of(opts->dtype);
    if (!tile && opts->dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "bfloat8_b exists in tile layout only");
    bool sharded = nn_memory_is_sharded(&opts->memory);
    if (sharded && (st = nn_check_memory_any(op, "opts.memory", device, &opts->memory, shape,
                                             opts->layout, NULL)))
        return st;
    if (tile && !sharded && !sparse_tiles(shape, opts->dtype))
        return from_host_tiles(op, device, shape, data, opts, out_tensor);
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor rh, th = {0}, sh = {0};
    nn_tensor *r, *t = NULL, *staged = NULL;
    /* A sharded row-major tensor takes the host's rows directly (the write
     * places each page on its shard); a sharded tile tensor is tilized into
     * an interleaved one first and its pages copied over. */
    st = nn_tensor_new_any(op, device, shape, rm_dtype, LMNN_ROW_MAJOR,
                           tile ? &dram : &opts->memory, &rh, &r);
    if (!st && tile)
        st = nn_tensor_new_any(op, device, shape, opts->dtype, LMNN_TILE, &opts->memory, &th, &t);
    staged = t;
    if (!st && tile && sharded)
        st = nn_tensor_new(op, device, shape, opts->dtype, LMNN_TILE, &dram, &sh, &staged);
    if (st) {
        nn_tensor_discard(rh);
        nn_tensor_discard(th);
        return st;
    }
    const void *image = data;
    uint16_t *half = NULL;
    if (rm_dtype == LMNN_BFLOAT16) {
        half = malloc(volume * sizeof *half);
        if (!half) st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory to convert the data");
        if (!st) st = lm_float_to_bfloat16(data, half, volume);
        image = half;
    }
    if (!st) {
        st = lm_enqueue_write_buffer(lm_device_command_queue(device, 0), r->buffer, image, true);
        if (st) st = nn_fail_call(st, op);
    }
    free(half);
    if (!st && tile) st = nn_tilize(op, r, staged);
    if (!st && sh.id) st = nn_copy_pages(op, staged, t);
    nn_tensor_discard(sh);
    if (st || tile) nn_tensor_discard(rh);
    if (st) {
        nn_tensor_discard(th);
        return st;
    }
    *out_tensor = tile ? th : rh;
    return LM_OK;
}

lm_status lmnn_to_host(lmnn_tensor tensor, void *dst, size_t size) {
    const char *op = "lmnn_to_host";
    nn_tensor *t;
    lm_status st = nn_get_tensor_any(op, "tensor", tensor, &t);
    if (st) return st;
    if (!dst) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dst is NULL");
    uint64_t volume = lmnn_shape_volume(&t->shape);
    size_t need = (size_t)volume * lmnn_dtype_host_size(t->dtype);
    if (size < need)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "size: the tensor needs %zu bytes, given %zu",
                       need, size);
    lmnn_tensor rh = {0}, sh = {0};
    nn_tensor *r = t;
    if (t->layout == LMNN_TILE) {
        /* A sharded row-major tensor reads back directly (the read gathers
         * its pages in order); a sharded tile tensor is gathered into an
         * interleaved one to untilize. */
        lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
        nn_tensor *tiles = t;
        if (nn_memory_is_sharded(&t->memory)) {
            st = nn_tensor_new(op, t->device, &t->shape, t->dtype, LMNN_TILE, &dram, &sh, &tiles);
            if (!st) st = nn_copy_pages(op, t, tiles);
        }
        if (!st)
            st = nn_tensor_new(op, t->device, &t->shape, rm_dtype_of(t->dtype), LMNN_ROW_MAJOR,
                               &dram, &rh, &r);
        if (!st) st = nn_untilize(op, tiles, r);
    }
    uint16_t *half = NULL;
    if (!st && r->dtype == LMNN_BFLOAT16) {
        half = malloc(volume * sizeof *half);
        if (!half) st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory to convert the data");
    }
    if (!st) {
        st = lm_enqueue_read_buffer(lm_device_command_queue(t->device, 0), r->buffer,
                                    half ? (void *)half : dst, true);
        if (st) st = nn_fail_call(st, op);
    }
    if (!st && half) st = lm_bfloat16_to_float(half, dst, volume);
    free(half);
    nn_tensor_discard(rh);
    nn_tensor_discard(sh);
    return st;
}

/* ---- layout and dtype ---- */

/* The arguments every layout change takes: the live tensor (*out_t), an
 * output and a known layout. */
static lm_status layout_args(const char *op, lmnn_tensor tensor, lmnn_layout layout,
                             const lmnn_tensor *out_tensor, nn_tensor **out_t) {
    lm_status st = nn_get_tensor(op, "tensor", tensor, out_t);
    if (st) return st;
    if (!out_tensor) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_tensor is NULL");
    if (layout != LMNN_ROW_MAJOR && layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "layout: unknown layout %d", (int)layout);
    return LM_OK;
}

/* t tilized or untilized (into the other layout) into a new tensor of
 * `dtype`: the program gives each side its own format, so float dtypes
 * convert as the rows move. */
static lm_status move_rows(const char *op, nn_tensor *t, lmnn_layout layout, lmnn_dtype dtype,
                           lmnn_tensor *out_tensor) {
    lmnn_tensor oh;
    nn_tensor *o;
    lm_status st = nn_tensor_new(op, t->device, &t->shape, dtype, layout, &t->memory, &oh, &o);
    if (st) return st;
    st = layout == LMNN_TILE ? nn_tilize(op, t, o) : nn_untilize(op, t, o);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out_tensor = oh;
    return LM_OK;
}

lm_status lmnn_to_layout(lmnn_tensor tensor, lmnn_layout layout, lmnn_tensor *out_tensor) {
    const char *op = "lmnn_to_layout";
    nn_tensor *t;
    lm_status st = layout_args(op, tensor, layout, out_tensor, &t);
    if (st) return st;
    if (layout == LMNN_TILE && t->layout == LMNN_TILE)
        return nn_unary_map(op, t, t->dtype, &t->memory, "", false, out_tensor);
    if (layout == LMNN_ROW_MAJOR && t->layout == LMNN_ROW_MAJOR) {
        /* A copy: through tiles, for want of a row-major copy kernel. */
        lmnn_tensor tiled;
        st = lmnn_to_layout(tensor, LMNN_TILE, &tiled);
        if (st) return st;
        st = lmnn_to_layout(tiled, LMNN_ROW_MAJOR, out_tensor);
        lmnn_tensor_free(tiled);
        return st;
    }
    return move_rows(op, t, layout, t->dtype, out_tensor);
}

lm_status lmnn_to_layout_as(lmnn_tensor tensor, lmnn_layout layout, lmnn_dtype dtype,
                            lmnn_tensor *out_tensor) {
    const char *op = "lmnn_to_layout_as";
    nn_tensor *t;
    lm_status st = layout_args(op, tensor, layout, out_tensor, &t);
    if (st) return st;
    if (!dtype || dtype == t->dtype) return lmnn_to_layout(tensor, layout, out_tensor);
    /* The packer converts between float formats as it moves the rows; an
     * integer is no float's bits. */
    bool rows_dtype = dtype == LMNN_FLOAT32 || dtype == LMNN_BFLOAT16;
    if (!nn_dtype_is_float(t->dtype) ||
        !(rows_dtype || (dtype == LMNN_BFLOAT8_B && layout == LMNN_TILE)))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dtype: %s %s to %s in %s layout: expected float32 or bfloat16 (or "
                       "bfloat8_b as tiles) from a float tensor; lmnn_typecast converts others",
                       lmnn_dtype_name(t->dtype), t->layout == LMNN_TILE ? "tiles" : "rows",
                       lmnn_dtype_name(dtype), layout == LMNN_TILE ? "tile" : "row-major");
    if (layout == t->layout) return lmnn_typecast(tensor, dtype, out_tensor);
    return move_rows(op, t, layout, dtype, out_tensor);
}

lm_status lmnn_typecast(lmnn_tensor tensor, lmnn_dtype dtype, lmnn_tensor *out_tensor) {
    const char *op = "lmnn_typecast";
    nn_tensor *t;
    lm_status st = nn_get_tensor(op, "tensor", tensor, &t);
    if (st) return st;
    if (!out_tensor) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_tensor is NULL");
    if ((st = nn_check_dtype(op, "dtype", dtype))) return st;
    /* The compute engine casts between its float formats and 32-bit
     * integers (typecast_tile): float to integer truncates toward zero and
     * saturates, NaN giving 0; integer to float rounds to nearest; int32 and
     * uint32 reinterpret each other's bits (two's complement, as torch). */
    bool fin = nn_dtype_is_float(t->dtype), fout = nn_dtype_is_float(dtype);
    bool iin = t->dtype == LMNN_INT32 || t->dtype == LMNN_UINT32;
    bool iout = dtype == LMNN_INT32 || dtype == LMNN_UINT32;
    if (!(fin || iin) || !(fout || iout))
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s to %s: conversions between float dtypes, int32 and uint32 are "
                       "implemented",
                       lmnn_dtype_name(t->dtype), lmnn_dtype_name(dtype));
    if (t->layout == LMNN_TILE) {
        char chain[64] = "";
        if (iin || iout)
            snprintf(chain, sizeof chain, "typecast_tile(0, %uu, %uu)",
                     (unsigned)nn_tile_format(t->dtype), (unsigned)nn_tile_format(dtype));
        return nn_unary_map(op, t, dtype, &t->memory, chain, false, out_tensor);
    }
    if (dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "bfloat8_b exists in tile layout only (the tensor is row-major)");
    /* Row-major: through tiles. */
    lmnn_tensor tiled, cast;
    st = lmnn_to_layout(tensor, LMNN_TILE, &tiled);
    if (st) return st;
    st = lmnn_typecast(tiled, dtype, &cast);
    lmnn_tensor_free(tiled);
    if (st) return st;
    st = lmnn_to_layout(cast, LMNN_ROW_MAJOR, out_tensor);
    lmnn_tensor_free(cast);
    return st;
}

/* ---- full ---- */

lm_status lmnn_full(lm_device *device, const lmnn_shape *shape, double value,
                    const lmnn_tensor_options *opts, lmnn_tensor *out_tensor) {
    const char *op = "lmnn_full";
    lmnn_tensor_options o;
    if (opts)
        o = *opts;
    else
        lmnn_tensor_options_init(&o);
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    if (!shape || !out_tensor)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL", !shape ? "shape" : "out_tensor");
    lm_status st = check_options(op, &o);
    if (st) return st;
    if (nn_memory_is_sharded(&o.memory)) {
        /* Filled interleaved, then its pages copied to the shards. */
        lmnn_memory_config want = o.memory;
        if ((st = nn_check_memory_any(op, "opts.memory", device, &want, shape, o.layout, NULL)))
            return st;
        lmnn_tensor flat;
        o.memory = (lmnn_memory_config){.type = want.type, .layout = LM_BUFFER_INTERLEAVED};
        if ((st = lmnn_full(device, shape, value, &o, &flat))) return st;
        st = lmnn_to_memory_config(flat, &want, out_tensor);
        lmnn_tensor_free(flat);
        return st;
    }
    if (o.dtype == LMNN_BFLOAT8_B && o.layout == LMNN_TILE) {
        lmnn_tensor wide;
        o.dtype = LMNN_BFLOAT16;
        if ((st = lmnn_full(device, shape, value, &o, &wide))) return st;
        st = lmnn_typecast(wide, LMNN_BFLOAT8_B, out_tensor);
        lmnn_tensor_free(wide);
        return st;
    }
    lmnn_tensor oh;
    nn_tensor *t;
    st = nn_tensor_new(op, device, shape, o.dtype, o.layout, &o.memory, &oh, &t);
    if (st) return st;
    bool tile = o.layout == LMNN_TILE;
    nn_tiles g = nn_tiles_of(shape);
    uint32_t bits = nn_value_bits(o.dtype, value);
    if (tile && o.dtype == LMNN_BFLOAT16) bits <<= 16; /* a tile stores float32 bits' top half */
    uint32_t fmt = tile ? (uint32_t)nn_tile_format(o.dtype) : nn_rm_elem_size(o.dtype);
    uint32_t args[] = {t->memory.type == LM_BUFFER_DRAM, tile, fmt};
    uint32_t extra[] = {bits, g.ht, g.wt, g.h, g.w};
    nn_key key;
    nn_key_init(&key, "full");
    nn_key_u32(&key, bits);
    nn_key_tensor(&key, t);
    nn_program *prog = nn_cache_find(device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec writer = {"fill_writer.c", LM_PROCESSOR_DM0, args, 3, NULL, 0, false};
        lm_data_format cbf = tile ? nn_tile_format(o.dtype) : LM_DATA_FORMAT_UINT32;
        uint32_t page = (t->page_size + 15) / 16 * 16;
        st = nn_split_work(op, device, t->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, device, &p);
        if (!st) st = nn_program_cb(op, &p, 16, cbf, page, 1);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, extra, 5);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, device, &key, &p, &prog);
    }
    if (!st) st = nn_launch(op, prog, &t, 1);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out_tensor = oh;
    return LM_OK;
}
