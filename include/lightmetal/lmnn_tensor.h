/* lightmetal op library — tensors on the device.
 *
 * A tensor is a device buffer plus what it means: a shape of up to
 * LMNN_MAX_DIMS dims, an element type (dtype), a layout and a memory config.
 *
 * Layouts (as ttnn's):
 *   LMNN_ROW_MAJOR  elements in row-major order, one page per row of the last
 *                   dim; no padding.
 *   LMNN_TILE       the last two dims are padded up to multiples of 32 (the
 *                   padded shape) and stored as 32x32 tiles (lm_tile.h's face
 *                   layout), tiles of each matrix in row-major order, matrices
 *                   one after the other; one page per tile. The padding is
 *                   always zero on the device and never reaches the user:
 *                   every op writes zeros there and ops that would read it
 *                   (reductions, softmax, matmul) treat it as absent.
 *
 * dtypes and the element type of host data (lmnn_from_host, lmnn_to_host):
 *   BFLOAT16, FLOAT32, BFLOAT8_B  float (bfloat8_b exists in tile layout only)
 *   UINT32, INT32                 uint32_t, int32_t
 *   UINT16, UINT8                 uint16_t, uint8_t (row-major storage and
 *                                 data movement only; typecast to compute)
 *
 * Ordering: every op enqueues its device work on command queue 0 without
 * waiting; lmnn_to_host waits for it. Results never depend on thread count.
 *
 * Thread-safety: tensor handles may be used from any thread, but the ops on
 * one device must be called from one thread at a time (they share the
 * device's command queue 0 and program cache).
 *
 * Errors: every function returns lm_status and leaves a message naming the
 * function, the argument and the expected versus given value in
 * lm_last_error(), e.g.
 *   "lmnn_add: b: shape [3, 5] does not broadcast with a's shape [3, 4]".
 * LM_ERR_INVALID_HANDLE for a zero, freed or foreign tensor handle or a
 * tensor whose device was closed; LM_ERR_INVALID_ARGUMENT for shapes, dtypes,
 * layouts and options out of an op's domain; LM_ERR_UNSUPPORTED for valid
 * requests the library does not implement yet. A failed op creates nothing
 * and leaves its inputs and the device as they were.
 */
#ifndef LIGHTMETAL_LMNN_TENSOR_H
#define LIGHTMETAL_LMNN_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_buffer.h"
#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_device.h"
#include "lightmetal/lm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LMNN_MAX_DIMS 8

typedef struct lmnn_tensor {
    uint64_t id; /* 0 is never a valid tensor (use it for "none") */
} lmnn_tensor;

typedef enum lmnn_dtype {
    LMNN_DTYPE_INVALID = 0,
    LMNN_BFLOAT16 = 1,
    LMNN_FLOAT32 = 2,
    LMNN_BFLOAT8_B = 3,
    LMNN_UINT32 = 4,
    LMNN_INT32 = 5,
    LMNN_UINT16 = 6,
    LMNN_UINT8 = 7,
} lmnn_dtype;

typedef enum lmnn_layout {
    LMNN_LAYOUT_INVALID = 0,
    LMNN_ROW_MAJOR = 1,
    LMNN_TILE = 2,
} lmnn_layout;

/* The order in which shards take the cores of a shard grid (ttnn's
 * ShardOrientation). */
typedef enum lmnn_shard_orientation {
    LMNN_SHARD_ROW_MAJOR = 0, /* along each range's rows first (the default) */
    LMNN_SHARD_COL_MAJOR = 1, /* down each range's columns first */
} lmnn_shard_orientation;

/* How a sharded tensor is cut (ttnn's ShardSpec). The tensor is viewed as a
 * matrix [volume / last dim, last dim] (in tile layout its padded shape:
 * [product of the other dims x padded height, padded width]) and cut into
 * shards of height x width elements, each on one core of `grid`:
 *   HEIGHT_SHARDED  width = the matrix width; shard i (rows i*height ...) on
 *                   the i-th core of grid (ranges in order, each row-major,
 *                   or column-major with LMNN_SHARD_COL_MAJOR);
 *   WIDTH_SHARDED   height = the matrix height; shard i (columns i*width ...)
 *                   on the i-th core;
 *   BLOCK_SHARDED   grid is one rectangle; shard (r, c) on core (x0 + c,
 *                   y0 + r), or (x0 + r, y0 + c) column-major.
 * Tile tensors: height and width are multiples of 32. Row-major tensors keep
 * a whole row per page, so their shard width is the row (the last dim).
 * Shards at the bottom and right edges may be partly empty; at most
 * LM_MAX_SHARDS shards. In L1 the grid names worker cores; in DRAM it names
 * banks, bank b as core (b, 0). */
typedef struct lmnn_shard_spec {
    lm_core_range_set grid;
    uint32_t height, width; /* elements */
    lmnn_shard_orientation orientation;
} lmnn_shard_spec;

/* Where a tensor's buffer lives (ttnn's MemoryConfig). Zero-initialised means
 * "the default": for a new tensor DRAM interleaved, for an op's output the
 * same as its first input. Sharded tensors are taken by lmnn_from_host,
 * lmnn_full, lmnn_to_memory_config, lmnn_to_host, the unary and binary ops
 * (lmnn_unary.h, lmnn_binary.h: inputs and outputs) and lmnn_tensor_get_info,
 * lmnn_tensor_host_size, lmnn_capture_name, lmnn_tensor_free; other ops
 * refuse them with LM_ERR_UNSUPPORTED (convert with lmnn_to_memory_config). */
typedef struct lmnn_memory_config {
    lm_buffer_type type;     /* LM_BUFFER_DRAM or LM_BUFFER_L1 */
    lm_buffer_layout layout; /* LM_BUFFER_INTERLEAVED or LM_BUFFER_*_SHARDED */
    lmnn_shard_spec shard;   /* sharded layouts only (ignored for interleaved) */
} lmnn_memory_config;

typedef struct lmnn_shape {
    uint32_t rank; /* 0 (a scalar: one element) .. LMNN_MAX_DIMS */
    uint32_t dims[LMNN_MAX_DIMS];
} lmnn_shape;

/* A shape from a list of dims: LMNN_SHAPE(2, 3, 32). */
#define LMNN_SHAPE(...)                                                                            \
    lmnn_shape_of((uint32_t)(sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)),                \
                  (const uint32_t[]){__VA_ARGS__})

/* The shape with `rank` dims from `dims` (rank is clamped to LMNN_MAX_DIMS;
 * lmnn functions refuse a shape with a zero dim or more elements than fit in
 * device memory). */
lmnn_shape lmnn_shape_of(uint32_t rank, const uint32_t *dims);

/* Elements of a shape (1 for rank 0); 0 when a dim is 0 or the product
 * overflows 64 bits. */
uint64_t lmnn_shape_volume(const lmnn_shape *shape);

/* Bytes of one element of `dtype` in host memory (see the table above); 0 for
 * an invalid dtype. */
size_t lmnn_dtype_host_size(lmnn_dtype dtype);

/* Stable short name ("bfloat16", "row_major", ...); "invalid" when unknown. */
const char *lmnn_dtype_name(lmnn_dtype dtype);
const char *lmnn_layout_name(lmnn_layout layout);

/* The output of an op: zero-initialised means "like the op's first input". */
typedef struct lmnn_output {
    lmnn_dtype dtype;
    lmnn_memory_config memory;
} lmnn_output;

/* How a tensor is created. Start from lmnn_tensor_options_init. */
typedef struct lmnn_tensor_options {
    lmnn_dtype dtype;          /* default BFLOAT16 */
    lmnn_layout layout;        /* default TILE */
    lmnn_memory_config memory; /* default DRAM interleaved */
} lmnn_tensor_options;

void lmnn_tensor_options_init(lmnn_tensor_options *opts);

/* Creates a tensor of `shape` on `device` from `data`: lmnn_shape_volume
 * elements of the dtype's host element type, row-major, `size` bytes exactly.
 * An interleaved tile tensor is tilized on the host and written as its tiles
 * (one write, no program: what a capture records for a weight), unless its
 * tiles would be large and mostly padding (a column or a row vector: 1 MiB
 * of tiles or more, over 4 times the data); then, as for any other tile
 * tensor, the rows are written and the tilize (and the bfloat8_b packing)
 * runs on the device, so that a capture stores the data. NULL opts: the
 * defaults. */
lm_status lmnn_from_host(lm_device *device, const lmnn_shape *shape, const void *data, size_t size,
                         const lmnn_tensor_options *opts, lmnn_tensor *out_tensor);

/* A tensor of `shape` with every element `value` (converted to the dtype;
 * integer dtypes truncate toward zero), filled on the device. */
lm_status lmnn_full(lm_device *device, const lmnn_shape *shape, double value,
                    const lmnn_tensor_options *opts, lmnn_tensor *out_tensor);

/* Waits for the tensor's pending work and copies its logical elements,
 * row-major, in the dtype's host element type, to `dst` (`size` bytes, at
 * least the tensor's; see lmnn_tensor_host_size). Tile tensors are untilized
 * (and bfloat8_b converted) on the device first. */
lm_status lmnn_to_host(lmnn_tensor tensor, void *dst, size_t size);

/* The tensor in `layout`, as a new tensor (tilize or untilize on the device).
 * bfloat8_b has no row-major form: untilizing it is LM_ERR_INVALID_ARGUMENT.
 * The same layout gives a copy. */
lm_status lmnn_to_layout(lmnn_tensor tensor, lmnn_layout layout, lmnn_tensor *out_tensor);

/* lmnn_to_layout into `dtype` (ttnn.to_layout's dtype; 0: the tensor's):
 * a float tensor tilized or untilized into float32 or bfloat16 (or
 * tilized into bfloat8_b) in the same launch, with the values
 * lmnn_typecast gives. The same layout: lmnn_typecast. Other dtypes:
 * LM_ERR_INVALID_ARGUMENT (lmnn_typecast converts them). */
lm_status lmnn_to_layout_as(lmnn_tensor tensor, lmnn_layout layout, lmnn_dtype dtype,
                            lmnn_tensor *out_tensor);

/* The tensor converted to `dtype` on the device, as a new tensor in the same
 * layout (tile layout for bfloat8_b). Between the float dtypes, int32 and
 * uint32 (others: LM_ERR_UNSUPPORTED). Float to integer truncates toward zero
 * (torch) and saturates at the integer's range (-Inf and values below it give
 * the minimum, +Inf and values above it the maximum; negatives give 0 for
 * uint32); NaN becomes 0. Integer to float rounds to nearest even. int32 and
 * uint32 reinterpret each other's bits, as two's complement. */
lm_status lmnn_typecast(lmnn_tensor tensor, lmnn_dtype dtype, lmnn_tensor *out_tensor);

/* A sharded memory config that spreads a tensor of `shape` in `layout` evenly
 * over `grid` (ttnn.create_sharded_memory_config): `strategy` is
 * LM_BUFFER_HEIGHT_SHARDED (rows over every core of grid), WIDTH_SHARDED
 * (columns) or BLOCK_SHARDED (grid is one rectangle: rows over its height and
 * columns over its width, or the other way round column-major), in whole
 * tiles for tile layout. The shard shape is the smallest that covers the
 * tensor with one shard per core (edge shards may be partly empty and cores
 * left over). Errors as lmnn_to_memory_config's checks of the result, plus
 * LM_ERR_INVALID_ARGUMENT for NULL pointers or a strategy that is not a
 * sharded layout. */
lm_status lmnn_create_sharded_memory_config(lm_device *device, const lmnn_shape *shape,
                                            lmnn_layout layout, lm_buffer_type type,
                                            lm_buffer_layout strategy,
                                            const lm_core_range_set *grid,
                                            lmnn_shard_orientation orientation,
                                            lmnn_memory_config *out_memory);

/* The tensor in memory config `memory` (ttnn.to_memory_config), as a new
 * tensor of the same shape, dtype and layout: interleaved to sharded, sharded
 * to interleaved, one sharding to another, DRAM to L1 and back. A page copy
 * on the device; bit-exact. Zero fields of `memory` mean the input's: type 0
 * keeps the buffer type, layout 0 keeps the layout and its shard spec.
 * Errors: LM_ERR_INVALID_ARGUMENT for a shard spec that does not fit the
 * tensor or the device (see lmnn_shard_spec; the message names the field). */
lm_status lmnn_to_memory_config(lmnn_tensor tensor, const lmnn_memory_config *memory,
                                lmnn_tensor *out_tensor);

/* Frees the handle, and the tensor's device memory (after its pending work)
 * unless a view still uses it (lmnn_view: the last handle on a buffer frees
 * it). Freeing the zero handle is a no-op; freeing twice is
 * LM_ERR_INVALID_HANDLE. */
lm_status lmnn_tensor_free(lmnn_tensor tensor);

typedef struct lmnn_tensor_info {
    lm_device *device;
    lmnn_shape shape;        /* logical */
    lmnn_shape padded_shape; /* tile layout: last two dims rounded up to 32 */
    lmnn_dtype dtype;
    lmnn_layout layout;
    lmnn_memory_config memory; /* with its shard spec when sharded (else zero) */
    lm_buffer buffer;          /* the tensor's (and its views'): do not deallocate */
    /* This tensor is a view (lmnn_view, lmnn_reshape) of a buffer made for
     * another tensor, which may be gone by now. */
    bool view;
    /* Another live tensor is on the same buffer (a view of this one, or
     * the one this is a view of): a write to the buffer shows in both. */
    bool shared;
} lmnn_tensor_info;

lm_status lmnn_tensor_get_info(lmnn_tensor tensor, lmnn_tensor_info *out_info);

/* Bytes lmnn_to_host writes for this tensor. */
lm_status lmnn_tensor_host_size(lmnn_tensor tensor, size_t *out_size);

/* Names the tensor's buffer in a Light Metal capture (lm_capture_name_buffer_ex),
 * so a replay can set it as an input or read it as an output. A row-major
 * tensor of float32, bfloat16, uint32 or int32 is named with its shape and
 * element format (its buffer holds exactly its elements, row-major); other
 * tensors as plain bytes. A model's inputs are best created row-major and
 * tilized by lmnn_to_layout inside the capture, its outputs made row-major
 * before they are read. Errors as lm_capture_name_buffer_ex. */
lm_status lmnn_capture_name(lmnn_tensor tensor, const char *name);

/* The same, recording that the tensor is `element_type` outside the device
 * (lm_element_type): a model's int64 input held as int32, its bool output as
 * int32, a float64 or float16 tensor as float32. The tensor must be row-major
 * with a dtype whose format holds the element type — float32 for FLOAT64 and
 * FLOAT16, int32 for INT64, INT16 and INT8, uint32 for UINT64, int32 or
 * uint32 for UINT16, UINT8 and BOOL — else LM_ERR_INVALID_ARGUMENT naming
 * both. LM_ELEMENT_TYPE_AS_FORMAT is lmnn_capture_name. Other errors as
 * lm_capture_name_buffer_ex. */
lm_status lmnn_capture_name_as(lmnn_tensor tensor, const char *name, lm_element_type element_type);

/* ---- program cache ----
 * Each op builds its device program once per (op, attributes, shapes, dtypes,
 * layouts, memory configs) and afterwards only updates the buffer addresses
 * it passes as runtime arguments. The cache belongs to the device and is
 * emptied when the device closes. */
typedef struct lmnn_program_cache_stats {
    uint64_t hits, misses;
    uint64_t entries; /* programs held now */
} lmnn_program_cache_stats;

lm_status lmnn_program_cache_get_stats(lm_device *device, lmnn_program_cache_stats *out_stats);

/* Releases every cached program of the device (the counters stay). */
lm_status lmnn_program_cache_clear(lm_device *device);

#ifdef __cplusplus
}
#endif

#endif
