/* lightmetal — device buffers.
 *
 * A buffer is a range of device memory split into pages. Interleaved buffers
 * spread their pages round-robin over banks, as tt-metal does: page p lives in
 * bank p % num_banks at bank-local address
 *     address + (p / num_banks) * page_stride
 * where page_stride is page_size rounded up to the memory's alignment. DRAM
 * buffers use the DRAM banks; L1 buffers use one bank per worker core, in
 * row-major core order (bank i is core (i % grid_x, i / grid_x)).
 *
 * Allocation is deterministic: the same sequence of calls on devices with the
 * same options yields the same addresses, in every process. DRAM is allocated
 * bottom-up, L1 top-down (circular buffers grow from the bottom of L1).
 *
 * Handles are values. Using a handle after lm_deallocate_buffer() (or after its
 * device closed) fails with LM_ERR_INVALID_HANDLE instead of touching freed
 * memory. Thread-safety: all functions may be called from any thread.
 */
#ifndef LIGHTMETAL_LM_BUFFER_H
#define LIGHTMETAL_LM_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_buffer {
    uint64_t id; /* 0 is never a valid buffer */
} lm_buffer;

typedef enum lm_buffer_type {
    LM_BUFFER_TYPE_INVALID = 0,
    LM_BUFFER_DRAM = 1,
    LM_BUFFER_L1 = 2,
} lm_buffer_type;

typedef enum lm_buffer_layout {
    LM_BUFFER_LAYOUT_INVALID = 0,
    LM_BUFFER_INTERLEAVED = 1, /* page p in bank p % banks */
    /* Sharded, in L1 or DRAM: see lm_shard_spec. */
    LM_BUFFER_HEIGHT_SHARDED = 2,
    LM_BUFFER_WIDTH_SHARDED = 3,
    LM_BUFFER_BLOCK_SHARDED = 4,
} lm_buffer_layout;

/* How a sharded buffer's pages sit on cores (tt-metal's ShardSpec with the
 * shapes in pages). The pages form a tensor_height x tensor_width grid, page
 * p at row p / tensor_width, column p % tensor_width; the grid is cut into
 * shards of shard_height x shard_width pages, and each shard lives on one core
 * of `cores`, its pages one after the other (row-major within the shard) at
 * the buffer's address, the same on every core. In DRAM the "cores" are the
 * banks, bank b at (b, 0) (tt-metal's logical DRAM cores), a shard per bank:
 *   HEIGHT: shard_width = tensor_width; shard i (rows i*shard_height..) on the
 *           i-th core of `cores` (row-major over each range, ranges in order;
 *           column-major with col_major);
 *   WIDTH:  shard_height = tensor_height; shard i (columns i*shard_width..) on
 *           the i-th core, as above;
 *   BLOCK:  `cores` is one rectangle; shard (r, c) on the core at (x0 + c,
 *           y0 + r), or (x0 + r, y0 + c) with col_major.
 * Shards at the edges may be partly empty. At most LM_MAX_SHARDS shards. */
#define LM_MAX_SHARDS 64
typedef struct lm_shard_spec {
    lm_core_range_set cores;
    uint32_t shard_height, shard_width;   /* pages */
    uint32_t tensor_height, tensor_width; /* pages; their product is the page count */
    bool col_major;
} lm_shard_spec;

typedef struct lm_buffer_config {
    lm_buffer_type type;     /* default LM_BUFFER_DRAM */
    lm_buffer_layout layout; /* default LM_BUFFER_INTERLEAVED */
    uint64_t size;           /* bytes; nonzero multiple of page_size */
    uint64_t page_size;      /* bytes per page; nonzero */
    bool at_address;         /* true: allocate exactly at `address` */
    uint64_t address;        /* bank-local address when at_address is set */
    lm_shard_spec shard;     /* sharded layouts only */
} lm_buffer_config;

/* DRAM, interleaved, size and page size 0 (to be set), allocator-chosen address. */
void lm_buffer_config_init(lm_buffer_config *cfg);

/* Allocates a buffer. Errors: LM_ERR_INVALID_ARGUMENT (zero size or page size,
 * size not a multiple of page_size, bad type or layout, a requested address
 * that is misaligned or outside the bank), LM_ERR_OUT_OF_DEVICE_MEMORY (no free
 * range large enough, or the requested range is taken), LM_ERR_INVALID_HANDLE
 * (NULL device). */
lm_status lm_create_buffer(lm_device *device, const lm_buffer_config *cfg, lm_buffer *out_buffer);

/* Frees a buffer's device memory once no queued command still uses it (this
 * waits for those commands). Deallocating twice is LM_ERR_INVALID_HANDLE. */
lm_status lm_deallocate_buffer(lm_buffer buffer);

/* The buffer's bank-local base address. */
lm_status lm_buffer_address(lm_buffer buffer, uint64_t *out_address);

/* The buffer's size in bytes. */
lm_status lm_buffer_size(lm_buffer buffer, uint64_t *out_size);

/* The configuration the buffer was created with (address filled in). */
lm_status lm_buffer_get_config(lm_buffer buffer, lm_buffer_config *out_cfg);

/* How one memory's buffers use it (tt-metal's allocator Statistics), per
 * bank: an interleaved buffer takes the same range in each of the memory's
 * banks (DRAM banks, or one L1 bank per worker core). Circular buffers are
 * not buffers and are not counted. */
typedef struct lm_memory_stats {
    uint32_t banks;
    uint64_t total_allocatable_bytes;  /* a bank's room for buffers */
    uint64_t total_allocated_bytes;    /* taken now */
    uint64_t total_free_bytes;         /* total_allocatable - total_allocated */
    uint64_t largest_free_block_bytes; /* the largest buffer that still fits */
    /* The most taken at once since the device opened or the last
     * lm_device_reset_memory_peak of this memory. */
    uint64_t peak_allocated_bytes;
} lm_memory_stats;

/* The statistics of `type` (LM_BUFFER_DRAM or LM_BUFFER_L1) on `device`.
 * Errors: LM_ERR_INVALID_HANDLE for a NULL device; LM_ERR_INVALID_ARGUMENT
 * for another type or a NULL out_stats. */
lm_status lm_device_get_memory_stats(lm_device *device, lm_buffer_type type,
                                     lm_memory_stats *out_stats);

/* Starts peak_allocated_bytes of `type` again from what is allocated now
 * (e.g. to measure one workload). Errors as lm_device_get_memory_stats. */
lm_status lm_device_reset_memory_peak(lm_device *device, lm_buffer_type type);

/* The compile-time arguments a C++ kernel's TensorAccessorArgs<N> reads to
 * address `buffer` (tt-metal's TensorAccessorArgs(buffer).append_to(...)):
 * writes them to out_args[0 .. *out_count) for the caller to place at index N
 * of the kernel's compile_args: two words for an interleaved buffer (the
 * second is the page size rounded up to the buffer's alignment, what
 * TensorAccessor(args, address) uses as its page size), more for a sharded
 * one, at most LM_TENSOR_ACCESSOR_MAX_ARGS.
 * Errors: LM_ERR_INVALID_ARGUMENT for NULL pointers, a capacity too small
 * (the message says how many are needed) or a page of 4 GiB or more;
 * LM_ERR_INVALID_HANDLE for a released buffer. */
#define LM_TENSOR_ACCESSOR_MAX_ARGS (8 + LM_MAX_SHARDS / 2)
lm_status lm_tensor_accessor_args(lm_buffer buffer, uint32_t *out_args, uint32_t capacity,
                                  uint32_t *out_count);

#ifdef __cplusplus
}
#endif

#endif
