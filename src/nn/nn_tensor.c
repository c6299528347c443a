/* Tensor objects: handles, geometry, info and the argument checks ops share. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/handle.h"
#include "nn/nn_internal.h"
#include "nn/nn_state.h"

#define NN_TENSOR_TAG 1

static handle_table tensors = HANDLE_TABLE_INIT;

/* ---- small facts ---- */

lmnn_shape lmnn_shape_of(uint32_t rank, const uint32_t *dims) {
    lmnn_shape s = {0};
    s.rank = rank > LMNN_MAX_DIMS ? LMNN_MAX_DIMS : rank;
    for (uint32_t i = 0; i < s.rank && dims; i++)
        s.dims[i] = dims[i];
    return s;
}

uint64_t lmnn_shape_volume(const lmnn_shape *shape) {
    if (!shape || shape->rank > LMNN_MAX_DIMS) return 0;
    uint64_t v = 1;
    for (uint32_t i = 0; i < shape->rank; i++) {
        if (shape->dims[i] == 0 || v > UINT64_MAX / shape->dims[i]) return 0;
        v *= shape->dims[i];
    }
    return v;
}

size_t lmnn_dtype_host_size(lmnn_dtype dtype) {
    switch (dtype) {
    case LMNN_BFLOAT16:
    case LMNN_FLOAT32:
    case LMNN_BFLOAT8_B:
    case LMNN_UINT32:
    case LMNN_INT32:
        return 4;
    case LMNN_UINT16:
        return 2;
    case LMNN_UINT8:
        return 1;
    default:
        return 0;
    }
}

const char *lmnn_dtype_name(lmnn_dtype dtype) {
    static const char *const names[] = {"invalid", "bfloat16", "float32", "bfloat8_b",
                                        "uint32",  "int32",    "uint16",  "uint8"};
    return (unsigned)dtype < sizeof names / sizeof *names ? names[dtype] : "invalid";
}

const char *lmnn_layout_name(lmnn_layout layout) {
    return layout == LMNN_ROW_MAJOR ? "row_major" : layout == LMNN_TILE ? "tile" : "invalid";
}

void lmnn_tensor_options_init(lmnn_tensor_options *opts) {
    if (!opts) return;
    *opts =
        (lmnn_tensor_options){.dtype = LMNN_BFLOAT16,
                              .layout = LMNN_TILE,
                              .memory = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED}};
}

lm_data_format nn_tile_format(lmnn_dtype dtype) {
    switch (dtype) {
    case LMNN_BFLOAT16:
        return LM_DATA_FORMAT_FLOAT16_B;
    case LMNN_FLOAT32:
        return LM_DATA_FORMAT_FLOAT32;
    case LMNN_BFLOAT8_B:
        return LM_DATA_FORMAT_BFP8_B;
    case LMNN_UINT32:
        return LM_DATA_FORMAT_UINT32;
    case LMNN_INT32:
        return LM_DATA_FORMAT_INT32;
    default:
        return LM_DATA_FORMAT_INVALID;
    }
}

uint32_t nn_rm_elem_size(lmnn_dtype dtype) {
    switch (dtype) {
    case LMNN_BFLOAT16:
    case LMNN_UINT16:
        return 2;
    case LMNN_FLOAT32:
    case LMNN_UINT32:
    case LMNN_INT32:
        return 4;
    case LMNN_UINT8:
        return 1;
    default:
        return 0; /* bfloat8_b has no row-major form */
    }
}

bool nn_dtype_is_float(lmnn_dtype dtype) {
    return dtype == LMNN_BFLOAT16 || dtype == LMNN_FLOAT32 || dtype == LMNN_BFLOAT8_B;
}

nn_tiles nn_tiles_of(const lmnn_shape *shape) {
    nn_tiles t = {1, 1, 1, 1, 1};
    uint32_t r = shape->rank;
    if (r >= 1) t.w = shape->dims[r - 1];
    if (r >= 2) t.h = shape->dims[r - 2];
    for (uint32_t i = 0; i + 2 < r; i++)
        t.batch *= shape->dims[i];
    t.ht = (t.h + 31) / 32;
    t.wt = (t.w + 31) / 32;
    return t;
}

const char *nn_shape_str(const lmnn_shape *shape, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < shape->rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%u", i ? ", " : "", shape->dims[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
    return buf;
}

bool nn_shape_equal(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* ---- errors ---- */

lm_status nn_fail(lm_status status, const char *op, const char *fmt, ...) {
    char msg[ERR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(status, "%s: %s", op, msg);
}

lm_status nn_fail_call(lm_status status, const char *op) {
    return err_prefix(status, "%s", op);
}

/* ---- handles ---- */

static const char *sharding_name(lm_buffer_layout layout) {
    return layout == LM_BUFFER_HEIGHT_SHARDED  ? "height sharded"
           : layout == LM_BUFFER_WIDTH_SHARDED ? "width sharded"
                                               : "block sharded";
}

static lm_status get_tensor(const char *op, const char *arg, lmnn_tensor t, bool sharded_ok,
                            nn_tensor **out) {
    void *obj = NULL;
    handle_table_lock(&tensors);
    handle_check c = handle_get_locked(&tensors, t.id, NN_TENSOR_TAG, &obj);
    handle_table_unlock(&tensors);
    if (c != HANDLE_OK)
        return nn_fail(LM_ERR_INVALID_HANDLE, op, "%s: tensor handle %s", arg,
                       c == HANDLE_NULL ? "is zero (no tensor)" : handle_check_string(c));
    nn_tensor *x = obj;
    if (!x->device)
        return nn_fail(LM_ERR_INVALID_HANDLE, op, "%s: the tensor's device was closed", arg);
    /* The one place ops learn they were given a sharded tensor: their kernels
     * address pages as interleaved. */
    if (!sharded_ok && nn_memory_is_sharded(&x->memory))
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s: expected an interleaved tensor, given a %s one (this op does not take "
                       "sharded tensors yet: convert it with lmnn_to_memory_config)",
                       arg, sharding_name(x->memory.layout));
    *out = x;
    return LM_OK;
}

lm_status nn_get_tensor(const char *op, const char *arg, lmnn_tensor t, nn_tensor **out) {
    return get_tensor(op, arg, t, false, out);
}

lm_status nn_get_tensor_any(const char *op, const char *arg, lmnn_tensor t, nn_tensor **out) {
    return get_tensor(op, arg, t, true, out);
}

static uint64_t tensor_pages(const lmnn_shape *shape, lmnn_layout layout, uint32_t *out_w) {
    nn_tiles g = nn_tiles_of(shape);
    if (layout == LMNN_TILE) return (uint64_t)g.batch * g.ht * g.wt;
    *out_w = g.w;
    return lmnn_shape_volume(shape) / g.w;
}

lm_status nn_check_memory(const char *op, const lmnn_memory_config *m) {
    if (m->type != LM_BUFFER_DRAM && m->type != LM_BUFFER_L1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "memory config: buffer type %d is neither DRAM (1) nor L1 (2)",
                       (int)m->type);
    if (m->layout == LM_BUFFER_INTERLEAVED) return LM_OK;
    if (nn_memory_is_sharded(m))
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "memory config: sharded tensors are not supported yet by this op (give it "
                       "an interleaved config; lmnn_to_memory_config converts tensors)");
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "memory config: unknown buffer layout %d",
                   (int)m->layout);
}

lm_status nn_check_memory_any(const char *op, const char *arg, lm_device *device,
                              const lmnn_memory_config *m, const lmnn_shape *shape,
                              lmnn_layout layout, lm_shard_spec *out_pages) {
    char sbuf[128];
    if (m->type != LM_BUFFER_DRAM && m->type != LM_BUFFER_L1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.type: expected LM_BUFFER_DRAM (1) or LM_BUFFER_L1 (2), given %d", arg,
                       (int)m->type);
    if (m->layout == LM_BUFFER_INTERLEAVED) return LM_OK;
    if (!nn_memory_is_sharded(m))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.layout: expected LM_BUFFER_INTERLEAVED or LM_BUFFER_HEIGHT, WIDTH or "
                       "BLOCK_SHARDED, given %d",
                       arg, (int)m->layout);
    if (!shape || shape->rank > LMNN_MAX_DIMS || !lmnn_shape_volume(shape))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: expected 0..%d dims of at least 1 (a sharded tensor's shape)",
                       LMNN_MAX_DIMS);
    const lmnn_shard_spec *s = &m->shard;
    const char *how = sharding_name(m->layout);
    bool tile = layout == LMNN_TILE;
    /* The matrix view of the tensor (ttnn's): rows of the last dim; in tile
     * layout its padded shape. */
    nn_tiles g = nn_tiles_of(shape);
    uint64_t w = tile ? (uint64_t)g.wt * 32 : g.w;
    uint64_t h = tile ? (uint64_t)g.batch * g.ht * 32 : lmnn_shape_volume(shape) / g.w;
    nn_shape_str(shape, sbuf, sizeof sbuf);
    if (s->orientation != LMNN_SHARD_ROW_MAJOR && s->orientation != LMNN_SHARD_COL_MAJOR)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard.orientation: expected LMNN_SHARD_ROW_MAJOR (0) or "
                       "LMNN_SHARD_COL_MAJOR (1), given %d",
                       arg, (int)s->orientation);
    if (!s->height || !s->width)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard: expected a nonzero shard height and width, given %ux%u", arg,
                       s->height, s->width);
    if (tile && (s->height % 32 || s->width % 32))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard: expected a shard height and width in multiples of 32 (whole "
                       "tiles) for a tile tensor, given %ux%u",
                       arg, s->height, s->width);
    if (!tile && m->layout != LM_BUFFER_HEIGHT_SHARDED && s->width != w)
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s.shard.width: a row-major tensor keeps each row of %llu elements in one "
                       "page, so %s shards span whole rows: expected width %llu, given %u (use "
                       "tile layout to shard columns)",
                       arg, (unsigned long long)w, how, (unsigned long long)w, s->width);
    if (m->layout == LM_BUFFER_HEIGHT_SHARDED && s->width != w)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard.width: expected the tensor's %swidth %llu for height sharding "
                       "(%s viewed as %llux%llu), given %u",
                       arg, tile ? "padded " : "", (unsigned long long)w, sbuf,
                       (unsigned long long)h, (unsigned long long)w, s->width);
    if (m->layout == LM_BUFFER_WIDTH_SHARDED && s->height != h)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard.height: expected the tensor's %sheight %llu for width sharding "
                       "(%s viewed as %llux%llu), given %u",
                       arg, tile ? "padded " : "", (unsigned long long)h, sbuf,
                       (unsigned long long)h, (unsigned long long)w, s->height);
    /* In pages: a tile or a row. */
    uint32_t unit = tile ? 32 : 1;
    uint64_t th = h / unit, tw = tile ? w / 32 : 1;
    uint32_t sh = s->height / unit, sw = tile ? s->width / 32 : 1;
    uint64_t rows = (th + sh - 1) / sh, cols = (tw + sw - 1) / sw, shards = rows * cols;
    if (shards > LM_MAX_SHARDS || th > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard: %llu shards of %ux%u for %s viewed as %llux%llu, at most %d", arg,
                       (unsigned long long)shards, s->height, s->width, sbuf, (unsigned long long)h,
                       (unsigned long long)w, LM_MAX_SHARDS);
    lm_device_info info;
    lm_status st = lm_device_get_info(device, &info);
    if (st) return nn_fail_call(st, op);
    bool dram = m->type == LM_BUFFER_DRAM;
    uint32_t gx = dram ? info.dram_banks : info.grid_x, gy = dram ? 1 : info.grid_y;
    if (s->grid.count == 0 || s->grid.count > LM_MAX_CORE_RANGES)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard.grid: expected 1..%d core ranges, given %u", arg,
                       LM_MAX_CORE_RANGES, s->grid.count);
    uint64_t cores = 0;
    for (uint32_t i = 0; i < s->grid.count; i++) {
        lm_core a = s->grid.ranges[i].start, b = s->grid.ranges[i].end;
        if (b.x < a.x || b.y < a.y || b.x >= gx || b.y >= gy)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "%s.shard.grid: range %u (%u,%u)-(%u,%u) is empty or outside the %s "
                           "(0,0)-(%u,%u)",
                           arg, i, a.x, a.y, b.x, b.y,
                           dram ? "DRAM banks, bank b as core (b, 0):" : "worker grid", gx - 1,
                           gy - 1);
        cores += (uint64_t)(b.x - a.x + 1) * (b.y - a.y + 1);
    }
    bool col = s->orientation == LMNN_SHARD_COL_MAJOR;
    if (m->layout == LM_BUFFER_BLOCK_SHARDED) {
        lm_core a = s->grid.ranges[0].start, b = s->grid.ranges[0].end;
        uint64_t need_w = col ? rows : cols, need_h = col ? cols : rows;
        if (s->grid.count != 1 || b.x - a.x + 1 < need_w || b.y - a.y + 1 < need_h) {
            char given[64];
            if (s->grid.count != 1)
                snprintf(given, sizeof given, "%u ranges", s->grid.count);
            else
                snprintf(given, sizeof given, "%ux%u cores", b.x - a.x + 1, b.y - a.y + 1);
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "%s.shard.grid: expected one rectangle of at least %llux%llu cores "
                           "(x by y) for %llu x %llu (rows x columns) block shards of %ux%u in "
                           "%s orientation, given %s",
                           arg, (unsigned long long)need_w, (unsigned long long)need_h,
                           (unsigned long long)rows, (unsigned long long)cols, s->height, s->width,
                           col ? "column-major" : "row-major", given);
        }
    } else if (cores < shards) {
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s.shard.grid: expected at least %llu cores for the %llu %s shards of "
                       "%ux%u (%s viewed as %llux%llu), given %llu",
                       arg, (unsigned long long)shards, (unsigned long long)shards, how, s->height,
                       s->width, sbuf, (unsigned long long)h, (unsigned long long)w,
                       (unsigned long long)cores);
    }
    if (out_pages)
        *out_pages = (lm_shard_spec){.cores = s->grid,
                                     .shard_height = sh,
                                     .shard_width = sw,
                                     .tensor_height = (uint32_t)th,
                                     .tensor_width = (uint32_t)tw,
                                     .col_major = col};
    return LM_OK;
}

lm_status nn_check_dtype(const char *op, const char *arg, lmnn_dtype dtype) {
    if (lmnn_dtype_host_size(dtype)) return LM_OK;
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: unknown dtype %d", arg, (int)dtype);
}

static lm_status tensor_new(const char *op, lm_device *device, const lmnn_shape *shape,
                            lmnn_dtype dtype, lmnn_layout layout, const lmnn_memory_config *memory,
                            bool sharded_ok, lmnn_tensor *out_handle, nn_tensor **out_tensor) {
    char sbuf[128];
    if (!shape || shape->rank > LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: rank %u is more than %u",
                       shape ? shape->rank : 0, LMNN_MAX_DIMS);
    uint64_t volume = lmnn_shape_volume(shape);
    if (!volume)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape %s: every dim must be at least 1 (and the volume fit 64 bits)",
                       nn_shape_str(shape, sbuf, sizeof sbuf));
    lm_status st = nn_check_dtype(op, "dtype", dtype);
    if (st) return st;
    if (layout != LMNN_ROW_MAJOR && layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "layout: unknown layout %d", (int)layout);
    if (layout == LMNN_TILE && !nn_tile_format(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dtype %s has no tile layout (row_major only)",
                       lmnn_dtype_name(dtype));
    if (layout == LMNN_ROW_MAJOR && !nn_rm_elem_size(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dtype %s exists in tile layout only",
                       lmnn_dtype_name(dtype));
    lm_shard_spec pages = {0};
    if (sharded_ok && nn_memory_is_sharded(memory)) {
        if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
        st = nn_check_memory_any(op, "memory", device, memory, shape, layout, &pages);
    } else {
        st = nn_check_memory(op, memory);
    }
    if (st) return st;

    nn_tensor *t = calloc(1, sizeof *t);
    if (!t) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for a tensor");
    t->device = device;
    t->shape = *shape;
    t->padded = *shape;
    t->dtype = dtype;
    t->layout = layout;
    t->memory = *memory;
    /* An interleaved tensor has no shard spec (keys and infos compare it). */
    if (!nn_memory_is_sharded(memory)) memset(&t->memory.shard, 0, sizeof t->memory.shard);
    uint32_t w = 1;
    t->pages = tensor_pages(shape, layout, &w);
    if (layout == LMNN_TILE) {
        if (shape->rank >= 1)
            t->padded.dims[shape->rank - 1] = (shape->dims[shape->rank - 1] + 31) / 32 * 32;
        if (shape->rank >= 2)
            t->padded.dims[shape->rank - 2] = (shape->dims[shape->rank - 2] + 31) / 32 * 32;
        t->page_size = (uint32_t)lm_tile_size(nn_tile_format(dtype));
    } else {
        uint64_t row = (uint64_t)w * nn_rm_elem_size(dtype);
        if (row > UINT32_MAX / 2) {
            free(t);
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape %s: a row of %llu bytes is too long",
                           nn_shape_str(shape, sbuf, sizeof sbuf), (unsigned long long)row);
        }
        t->page_size = (uint32_t)row;
    }
    if (t->pages > UINT64_MAX / t->page_size) {
        free(t);
        return nn_fail(LM_ERR_OUT_OF_DEVICE_MEMORY, op, "shape %s does not fit device memory",
                       nn_shape_str(shape, sbuf, sizeof sbuf));
    }
    if ((st = nn_state_attach(op, device))) {
        free(t);
        return st;
    }
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.type = memory->type;
    cfg.layout = memory->layout;
    cfg.shard = pages;
    cfg.page_size = t->page_size;
    cfg.size = t->pages * t->page_size;
    st = lm_create_buffer(device, &cfg, &t->buffer);
    if (!st) st = lm_buffer_address(t->buffer, &t->address);
    if (!st && t->address > UINT32_MAX) {
        st = nn_fail(LM_ERR_UNSUPPORTED, op, "buffer address 0x%llx is beyond 32 bits",
                     (unsigned long long)t->address);
    }
    if (st) {
        if (t->buffer.id) lm_deallocate_buffer(t->buffer);
        free(t);
        return nn_fail_call(st, op);
    }
    uint64_t id = 0;
    handle_table_lock(&tensors);
    st = handle_alloc_locked(&tensors, NN_TENSOR_TAG, t, &id);
    handle_table_unlock(&tensors);
    if (st) {
        lm_deallocate_buffer(t->buffer);
        free(t);
        return nn_fail(st, op, "no memory for a tensor handle");
    }
    out_handle->id = id;
    if (out_tensor) *out_tensor = t;
    return LM_OK;
}

static lm_status tensor_free(const char *op, lmnn_tensor handle, bool quiet) {
    void *obj = NULL;
    handle_table_lock(&tensors);
    handle_check c = handle_get_locked(&tensors, handle.id, NN_TENSOR_TAG, &obj);
    if (c != HANDLE_OK) {
        handle_table_unlock(&tensors);
        if (quiet) return LM_OK;
        return nn_fail(LM_ERR_INVALID_HANDLE, op, "tensor handle %s", handle_check_string(c));
    }
    handle_free_locked(&tensors, handle.id);
    nn_tensor *t = obj;
    /* The buffer goes with the last handle on it. */
    bool last = !t->sharers || --*t->sharers == 0;
    if (last) free(t->sharers);
    handle_table_unlock(&tensors);
    lm_status st = last && t->device ? lm_deallocate_buffer(t->buffer) : LM_OK;
    free(t);
    return st && !quiet ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_tensor_new(const char *op, lm_device *device, const lmnn_shape *shape,
                        lmnn_dtype dtype, lmnn_layout layout, const lmnn_memory_config *memory,
                        lmnn_tensor *out_handle, nn_tensor **out_tensor) {
    return tensor_new(op, device, shape, dtype, layout, memory, false, out_handle, out_tensor);
}

lm_status nn_tensor_new_any(const char *op, lm_device *device, const lmnn_shape *shape,
                            lmnn_dtype dtype, lmnn_layout layout, const lmnn_memory_config *memory,
                            lmnn_tensor *out_handle, nn_tensor **out_tensor) {
    return tensor_new(op, device, shape, dtype, layout, memory, true, out_handle, out_tensor);
}

lm_status nn_tensor_view(const char *op, nn_tensor *t, const lmnn_shape *shape,
                         lmnn_tensor *out_handle) {
    nn_tensor *v = malloc(sizeof *v);
    uint32_t *count = t->sharers ? NULL : malloc(sizeof *count);
    if (!v || (!t->sharers && !count)) {
        free(v);
        free(count);
        return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for a tensor");
    }
    *v = *t;
    v->view = true;
    nn_tensor_retag(v, shape);
    uint64_t id = 0;
    handle_table_lock(&tensors);
    lm_status st = handle_alloc_locked(&tensors, NN_TENSOR_TAG, v, &id);
    if (!st) {
        if (!t->sharers) {
            *count = 1;
            t->sharers = count;
            count = NULL;
        }
        ++*t->sharers;
        v->sharers = t->sharers;
    }
    handle_table_unlock(&tensors);
    free(count);
    if (st) {
        free(v);
        return nn_fail(st, op, "no memory for a tensor handle");
    }
    out_handle->id = id;
    return LM_OK;
}

void nn_tensor_discard(lmnn_tensor t) {
    if (t.id) tensor_free("nn_tensor_discard", t, true);
}

lm_status lmnn_tensor_free(lmnn_tensor tensor) {
    if (!tensor.id) return LM_OK;
    return tensor_free("lmnn_tensor_free", tensor, false);
}

void nn_tensor_orphan_all(lm_device *device) {
    handle_table_lock(&tensors);
    for (uint32_t i = 0; i < tensors.count; i++) {
        handle_slot *s = &tensors.slots[i];
        if (s->object && s->type == NN_TENSOR_TAG) {
            nn_tensor *t = s->object;
            if (t->device == device) t->device = NULL;
        }
    }
    handle_table_unlock(&tensors);
}

lm_status lmnn_tensor_get_info(lmnn_tensor tensor, lmnn_tensor_info *out_info) {
    const char *op = "lmnn_tensor_get_info";
    if (!out_info) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_info is NULL");
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor_any(op, "tensor", tensor, &t);
    if (st) return st;
    *out_info = (lmnn_tensor_info){.device = t->device,
                                   .shape = t->shape,
                                   .padded_shape = t->padded,
                                   .dtype = t->dtype,
                                   .layout = t->layout,
                                   .memory = t->memory,
                                   .buffer = t->buffer,
                                   .view = t->view};
    handle_table_lock(&tensors);
    out_info->shared = t->sharers && *t->sharers > 1;
    handle_table_unlock(&tensors);
    return LM_OK;
}

lm_status lmnn_tensor_host_size(lmnn_tensor tensor, size_t *out_size) {
    const char *op = "lmnn_tensor_host_size";
    if (!out_size) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_size is NULL");
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor_any(op, "tensor", tensor, &t);
    if (st) return st;
    *out_size = (size_t)(lmnn_shape_volume(&t->shape) * lmnn_dtype_host_size(t->dtype));
    return LM_OK;
}

/* The dtypes a row-major tensor needs to carry an element type, for
 * messages (lmb_element_type_fits restated in lmnn dtypes). */
static const char *dtypes_for_element_type(lm_element_type et) {
    switch (et) {
    case LM_ELEMENT_TYPE_FLOAT64:
    case LM_ELEMENT_TYPE_FLOAT16:
        return "float32";
    case LM_ELEMENT_TYPE_INT64:
    case LM_ELEMENT_TYPE_INT16:
    case LM_ELEMENT_TYPE_INT8:
        return "int32";
    case LM_ELEMENT_TYPE_UINT64:
        return "uint32";
    default:
        return "int32 or uint32";
    }
}

static lm_status capture_name(const char *op, lmnn_tensor tensor, const char *name,
                              lm_element_type element_type) {
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor_any(op, "tensor", tensor, &t);
    if (st) return st;
    /* A row-major tensor is its logical elements in order, so the name carries
     * the shape and element format: a replay tool can then take and give
     * tensor files (.npy). Tile tensors are named as plain bytes. */
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    lm_data_format f = t->dtype == LMNN_FLOAT32 ? LM_DATA_FORMAT_FLOAT32 : nn_tile_format(t->dtype);
    if (t->layout == LMNN_ROW_MAJOR && f) {
        o.format = f;
        o.rank = t->shape.rank;
        o.scalar = t->shape.rank == 0;
        for (uint32_t i = 0; i < o.rank; i++)
            o.shape[i] = t->shape.dims[i];
    }
    if (element_type != LM_ELEMENT_TYPE_AS_FORMAT) {
        if ((unsigned)element_type > LM_ELEMENT_TYPE_UINT64)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "element type %d is not a lm_element_type",
                           (int)element_type);
        if (t->layout != LMNN_ROW_MAJOR || !lm_element_type_fits(element_type, o.format))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "element type %s needs a row-major %s tensor, given %s %s",
                           lm_element_type_name(element_type),
                           dtypes_for_element_type(element_type), lmnn_layout_name(t->layout),
                           lmnn_dtype_name(t->dtype));
        o.element_type = element_type;
    }
    st = lm_capture_name_buffer_ex(t->buffer, name, &o);
    if (st && (t->view || t->sharers)) {
        /* The likely cause: a reshape that kept the pages is a view. */
        char was[512];
        err_copy(was, sizeof was);
        return nn_fail(st, op,
                       "%s (the tensor shares its buffer with another, a view made by "
                       "lmnn_view or lmnn_reshape: name an lmnn_clone of it)",
                       was);
    }
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status lmnn_capture_name(lmnn_tensor tensor, const char *name) {
    return capture_name("lmnn_capture_name", tensor, name, LM_ELEMENT_TYPE_AS_FORMAT);
}

lm_status lmnn_capture_name_as(lmnn_tensor tensor, const char *name, lm_element_type element_type) {
    return capture_name("lmnn_capture_name_as", tensor, name, element_type);
}

/* ---- checks ---- */

lm_status nn_check_layout(const char *op, const char *arg, const nn_tensor *t, lmnn_layout want) {
    if (t->layout == want) return LM_OK;
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected layout %s, given %s", arg,
                   lmnn_layout_name(want), lmnn_layout_name(t->layout));
}

lm_status nn_check_float(const char *op, const char *arg, const nn_tensor *t) {
    if (nn_dtype_is_float(t->dtype)) return LM_OK;
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                   "%s: expected a float dtype (bfloat16, float32, bfloat8_b), given %s", arg,
                   lmnn_dtype_name(t->dtype));
}

lm_status nn_check_input_dtype(const char *op, const char *own, lmnn_dtype dtype) {
    if (!dtype || dtype == LMNN_FLOAT32 || dtype == LMNN_BFLOAT16) return LM_OK;
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                   "input_dtype: expected 0 (%s), float32 or bfloat16, given %s", own,
                   lmnn_dtype_name(dtype));
}

lm_status nn_check_same_device(const char *op, const char *arg, const nn_tensor *t,
                               const nn_tensor *first) {
    if (t->device == first->device) return LM_OK;
    return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                   "%s: the tensor is on another device than the op's first input", arg);
}

lmnn_memory_config nn_memory_over(const lmnn_memory_config *given, lmnn_memory_config base) {
    lmnn_memory_config m = base;
    if (given && given->type) m.type = given->type;
    if (given && given->layout) {
        m.layout = given->layout;
        m.shard = given->shard; /* the layout and its shard spec go together */
    }
    return m;
}

lmnn_memory_config nn_output_memory(const lmnn_memory_config *given, const nn_tensor *input) {
    return nn_memory_over(given, input->memory);
}

uint32_t nn_value_bits(lmnn_dtype dtype, double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    switch (dtype) {
    case LMNN_BFLOAT16: {
        uint16_t h;
        lm_float_to_bfloat16(&f, &h, 1);
        return h;
    }
    case LMNN_INT32:
        return isnan(v)             ? 0
               : v >= 2147483647.0  ? 0x7fffffffu
               : v <= -2147483648.0 ? 0x80000000u
                                    : (uint32_t)(int32_t)v;
    case LMNN_UINT32:
        return isnan(v) || v <= 0 ? 0 : v >= 4294967295.0 ? 0xffffffffu : (uint32_t)v;
    case LMNN_UINT16:
        return isnan(v) || v <= 0 ? 0 : v >= 65535.0 ? 0xffffu : (uint32_t)v;
    case LMNN_UINT8:
        return isnan(v) || v <= 0 ? 0 : v >= 255.0 ? 0xffu : (uint32_t)v;
    default:
        return u;
    }
}

void nn_tensor_retag(nn_tensor *t, const lmnn_shape *shape) {
    t->shape = t->padded = *shape;
    if (t->layout != LMNN_TILE) return;
    uint32_t r = shape->rank;
    if (r >= 1) t->padded.dims[r - 1] = (shape->dims[r - 1] + 31) / 32 * 32;
    if (r >= 2) t->padded.dims[r - 2] = (shape->dims[r - 2] + 31) / 32 * 32;
}
