/* The op library's shared internals: tensor objects, argument checks, the
 * program cache and the pieces every op builds its device program from.
 *
 * The library sits on the public host API only (lm_* functions): every
 * buffer, program and launch it makes goes through api/, so Light Metal
 * capture records it with no extra code. From base/ it uses the error
 * messages and the handle table.
 *
 * How an op runs (see nn_unary.c for the shortest complete one):
 *   1. check its arguments (nn_get_tensor, nn_check_*), naming the op;
 *   2. create its output tensor(s) (nn_tensor_new);
 *   3. build the cache key from everything that shapes the program
 *      (nn_key_*) and look it up; on a miss build the program (nn_build_*)
 *      and add it;
 *   4. launch it with the buffer addresses of its tensors (nn_launch): the
 *      addresses are every kernel's common runtime arguments, in the order the
 *      op lists its tensors, so a cache hit rewrites only those words.
 * Per-core runtime arguments (the share of work of each core) depend only on
 * the key and are set once, when the program is built.
 */
#ifndef LM_NN_INTERNAL_H
#define LM_NN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lightmetal/nn.h"

/* ---- tensors ---- */

typedef struct nn_tensor {
    lm_device *device; /* NULL once the device closed */
    lm_buffer buffer;
    uint64_t address; /* the buffer's bank-local address */
    lmnn_shape shape, padded;
    lmnn_dtype dtype;
    lmnn_layout layout;
    lmnn_memory_config memory;
    uint64_t pages;
    uint32_t page_size;
    /* The handles on `buffer` (views, nn_tensor_view): NULL while this
     * tensor has never shared it; else one count all of them point to, the
     * buffer freed with the last. Read and changed under the handle lock. */
    uint32_t *sharers;
    bool view; /* made by nn_tensor_view on another tensor's buffer */
} nn_tensor;

/* The tensor behind handle `t`, checked: "<op>: <arg>: ..." errors for a zero,
 * freed or foreign handle or a tensor whose device closed. The object stays
 * valid until the handle is freed (callers of one op run on one thread). */
lm_status nn_get_tensor(const char *op, const char *arg, lmnn_tensor t, nn_tensor **out);

/* A new tensor on `device` with uninitialised contents (the caller's program
 * fills it). Errors name `op`. */
lm_status nn_tensor_new(const char *op, lm_device *device, const lmnn_shape *shape,
                        lmnn_dtype dtype, lmnn_layout layout, const lmnn_memory_config *memory,
                        lmnn_tensor *out_handle, nn_tensor **out_tensor);

/* Frees a tensor the op created, on an error path (never fails). */
void nn_tensor_discard(lmnn_tensor t);

/* A new handle on t's buffer as `shape` (pages in the same order: the
 * caller checks that), the buffer shared until the last handle on it is
 * freed. Errors name `op`. */
lm_status nn_tensor_view(const char *op, nn_tensor *t, const lmnn_shape *shape,
                         lmnn_tensor *out_handle);

/* Gives tensor t (the op's own, just made) another shape of the same pages
 * in the same order: in tile layout the same last two dims and matrix
 * count (e.g. [1, S, C] as [S, C]); the caller checks that. */
void nn_tensor_retag(nn_tensor *t, const lmnn_shape *shape);

/* Tile-layout geometry: the last two dims (1 for missing ones), their tile
 * counts, and the number of matrices (product of the other dims). */
typedef struct nn_tiles {
    uint32_t h, w;   /* logical rows and columns */
    uint32_t ht, wt; /* tiles */
    uint32_t batch;  /* matrices */
} nn_tiles;
nn_tiles nn_tiles_of(const lmnn_shape *shape);

/* lm_data_format of a dtype's tiles (INVALID for uint16/uint8), and the bytes
 * of one element of a row-major tensor. */
lm_data_format nn_tile_format(lmnn_dtype dtype);
uint32_t nn_rm_elem_size(lmnn_dtype dtype);
bool nn_dtype_is_float(lmnn_dtype dtype);

/* "[2, 3, 32]" into buf. */
const char *nn_shape_str(const lmnn_shape *shape, char *buf, size_t size);
bool nn_shape_equal(const lmnn_shape *a, const lmnn_shape *b);

/* ---- argument checks: each records "<op>: <arg>: expected ..., given ..." ---- */
lm_status nn_check_layout(const char *op, const char *arg, const nn_tensor *t, lmnn_layout want);
lm_status nn_check_float(const char *op, const char *arg, const nn_tensor *t);
/* An options' input_dtype: 0 (`own` names the tensor's own dtype in the
 * message, "the input's"), float32 or bfloat16. */
lm_status nn_check_input_dtype(const char *op, const char *own, lmnn_dtype dtype);
lm_status nn_check_same_device(const char *op, const char *arg, const nn_tensor *t,
                               const nn_tensor *first);
/* The memory config of an op's output: `given` where set, else the input's
 * (nn_memory_over: else `base`). */
lmnn_memory_config nn_output_memory(const lmnn_memory_config *given, const nn_tensor *input);
lmnn_memory_config nn_memory_over(const lmnn_memory_config *given, lmnn_memory_config base);
lm_status nn_check_memory(const char *op, const lmnn_memory_config *memory);
lm_status nn_check_dtype(const char *op, const char *arg, lmnn_dtype dtype);

/* ---- program cache ---- */

#define NN_KEY_MAX 1024
#define NN_MAX_KERNELS 4

typedef struct nn_key {
    uint8_t bytes[NN_KEY_MAX];
    size_t len;
    bool overflow; /* more than NN_KEY_MAX bytes were added: a library bug */
} nn_key;

void nn_key_init(nn_key *key, const char *op);
void nn_key_add(nn_key *key, const void *data, size_t size);
void nn_key_u32(nn_key *key, uint32_t value);
void nn_key_f64(nn_key *key, double value);
/* Shape, dtype, layout and memory config. */
void nn_key_tensor(nn_key *key, const nn_tensor *t);

/* A device program an op built, as the cache keeps it. */
typedef struct nn_program {
    lm_program program;
    lm_kernel kernels[NN_MAX_KERNELS];
    uint32_t kernel_count;
    lm_core_range_set cores; /* where its kernels run */
} nn_program;

/* The program cached under `key` on `device`, or NULL (counts a hit or a
 * miss). */
nn_program *nn_cache_find(lm_device *device, const nn_key *key);

/* Adds a program built after a miss: on success the cache owns it and
 * *out points at the cached copy; on failure the program is released. */
lm_status nn_cache_add(const char *op, lm_device *device, const nn_key *key, nn_program *program,
                       nn_program **out);

/* The program of the cache's entry `index` (in the order they were added) on
 * `device`, or NULL: for benchmarks that time a cached program's bare
 * launch against the op that launches it. */
nn_program *nn_cache_entry(lm_device *device, size_t index);

/* ---- building programs ---- */

/* An embedded kernel source by file name ("unary_compute.c"); NULL if none. */
const char *nn_kernel_source(const char *name);

typedef struct nn_kernel_spec {
    const char *name; /* embedded kernel file */
    lm_processor processor;
    const uint32_t *compile_args;
    uint32_t compile_arg_count;
    const lm_kernel_define *defines;
    uint32_t define_count;
    bool fp32_dest_acc; /* compute kernels */
} nn_kernel_spec;

/* Starts a program on `device` (prog->cores set by the caller first). */
lm_status nn_program_begin(const char *op, lm_device *device, nn_program *prog);

/* Compiles an embedded kernel onto prog->cores. */
lm_status nn_program_kernel(const char *op, nn_program *prog, const nn_kernel_spec *spec,
                            lm_kernel *out_kernel);

/* A circular buffer index of `pages` pages on prog->cores. */
lm_status nn_program_cb(const char *op, nn_program *prog, uint32_t index, lm_data_format format,
                        uint32_t page_size, uint32_t pages);

/* Releases a program that will not be cached (error paths). */
void nn_program_discard(nn_program *prog);

/* A split of `units` of work over the device grid (row-major), at most
 * NN_CORES_PER_THREAD cores per simulator thread. The cores of the split
 * are listed in order in cores[0 .. split.num_cores): core i gets units
 * [first[i], first[i] + count[i]). */
typedef struct nn_split {
    uint32_t num_cores;
    lm_core cores[1024];
    uint32_t first[1024], count[1024];
    lm_core_range_set all;
} nn_split;
lm_status nn_split_work(const char *op, lm_device *device, uint64_t units, nn_split *out);
/* Cores per host thread nn_split_work uses at most. */
#define NN_CORES_PER_THREAD 4

/* Gives every kernel of `prog` the runtime arguments {first[i], count[i]} on
 * core i of `split` (the shape most kernels here take). */
lm_status nn_program_split_args(const char *op, nn_program *prog, const nn_split *split);

/* As nn_program_split_args, followed by `extra` (the same on every core).
 * Sizes and shapes go here rather than into compile-time args: each distinct
 * compile-time arg list is another kernel to compile. */
#define NN_SPLIT_EXTRA_MAX 200
lm_status nn_program_split_args_with(const char *op, nn_program *prog, const nn_split *split,
                                     const uint32_t *extra, uint32_t extra_count);

/* The same for one kernel of the program. */
lm_status nn_kernel_split_args(const char *op, nn_program *prog, lm_kernel kernel,
                               const nn_split *split, const uint32_t *extra, uint32_t extra_count);

/* Runtime-arg words that let a kernel address t's pages wherever they live
 * (lm_tensor_accessor_args: interleaved or sharded; the kernels decode them
 * with nn_accessor_init). Part of the program: the cache key's tensor
 * description covers them. At most NN_ACCESSOR_WORDS. */
#define NN_ACCESSOR_WORDS LM_TENSOR_ACCESSOR_MAX_ARGS
lm_status nn_accessor_words(const char *op, const nn_tensor *t, uint32_t *out_words,
                            uint32_t *out_count);

/* tile_writer.c's runtime args after {first, count} for writing tile tensor
 * `out` (common argument out_arg), zeroing its padding if zero_pad; at most
 * NN_TILE_WRITER_ARGS words. */
#define NN_TILE_WRITER_ARGS (7 + NN_ACCESSOR_WORDS)
lm_status nn_tile_writer_args(const char *op, const nn_tensor *out, uint32_t out_arg, bool zero_pad,
                              uint32_t *out_args, uint32_t *out_count);

/* The greatest common divisor of a and b (a when b is 0). */
static inline uint64_t nn_gcd(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* The bits of v as a float32 (what kernels take float parameters as). */
static inline uint32_t nn_float_bits(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The bit pattern of one element of `dtype` holding v, as a row-major
 * tensor stores it (bfloat16 in the low 16 bits); integers saturate, NaN
 * gives 0. */
uint32_t nn_value_bits(lmnn_dtype dtype, double v);

/* Launches `prog` on command queue 0 without waiting, after setting every
 * kernel's common runtime arguments to the addresses of `tensors` (in order). */
lm_status nn_launch(const char *op, nn_program *prog, nn_tensor *const *tensors, uint32_t count);
/* The same with `extra_count` more common arguments after the addresses
 * (values that change from launch to launch without a new program). */
lm_status nn_launch_with(const char *op, nn_program *prog, nn_tensor *const *tensors,
                         uint32_t count, const uint32_t *extra, uint32_t extra_count);

/* ---- building blocks other ops reuse ---- */

/* out = the unary map of `in`, tile by tile: in is a tile tensor, out a new
 * tile tensor of `shape` `in`'s, dtype out_dtype, in `memory`; `chain` is the
 * compute kernel's SFPU calls on dst 0 ("exp_tile(0)"; "" for a plain copy
 * or float format conversion); zero_pad when f(0) may be nonzero. */
lm_status nn_unary_map(const char *op, nn_tensor *in, lmnn_dtype out_dtype,
                       const lmnn_memory_config *memory, const char *chain, bool zero_pad,
                       lmnn_tensor *out);

/* The SFPU chain of unary op `uop` with parameters alpha and beta, for fusing
 * after other math: it reads and writes dst 0 only (dst 1 and up are
 * scratch), never a circular buffer. The chain does not hold the parameters'
 * values: it names nn_param[0 .. NN_UNARY_PARAMS), which the compute kernel
 * declares as a uint32_t array loaded from its runtime args, and `params`
 * gets the values to put there (so one compiled kernel serves every value;
 * they belong in the program cache key). *nonzero_at_zero tells whether f(0)
 * may be nonzero (the padding then needs zeroing). Errors "<op>: <arg>: ..."
 * for an unknown op, one the engine lacks, or min > max for clamp/hardtanh. */
#define NN_UNARY_PARAMS 3
lm_status nn_unary_chain(const char *op, const char *arg, lmnn_unary_op uop, double alpha,
                         double beta, char *chain, size_t size, uint32_t params[NN_UNARY_PARAMS],
                         bool *out_nonzero_at_zero);

/* Every unary op's fused chain (as nn_unary_chain gives it, with the same
 * nn_param[] names) as the cases of a switch on a uint32_t `nn_op` (the
 * lmnn_unary_op; 0 runs nothing), for a compute kernel that takes the
 * activation as a runtime arg: one compiled kernel for every activation.
 * A static string. */
const char *nn_unary_fused_switch(void);

/* The same for the ops whose chain is one call on dst register 0 (relu,
 * exp, ...), that call made on register `nn_t` (a uint32_t) instead, so a
 * block of results in dst can take the activation where it is; other ops
 * run nothing (nn_unary_in_place tells them apart). A static string. */
const char *nn_unary_fused_switch_at(void);
bool nn_unary_in_place(lmnn_unary_op op);

/* A data movement kernel reading circular buffer 0's tiles for
 * nn_unary_map_with in place of tile_reader.c: compile-time args, and the
 * runtime args after {first, count} (the same on every core). */
#define NN_UNARY_READER_ARGS 16
typedef struct nn_unary_reader {
    const char *name;
    const uint32_t *compile_args;
    uint32_t compile_arg_count;
    const uint32_t *args;
    uint32_t arg_count;
    /* A second tensor the reader reads (common argument 2) into circular
     * buffer 1 (UInt32 pages of `extra_page` bytes, for the compute kernel
     * to read); NULL: none. */
    nn_tensor *extra;
    uint32_t extra_page;
} nn_unary_reader;

/* The input of a unary map: tensor `a` (argument "a" of `op`), which must be
 * a float tensor in tile layout, sharded or interleaved. */
lm_status nn_unary_input(const char *op, lmnn_tensor a, nn_tensor **out);

/* nn_unary_map with the chain's runtime parameters (NN_UNARY_PARAMS values,
 * NULL for none: see nn_unary_chain) and optionally another reader (NULL:
 * tile_reader.c). A NULL chain runs public unary op `uop` (lmnn_unary_op)
 * through the one compute kernel all of them share; `uop` is ignored
 * otherwise. */
lm_status nn_unary_map_with(const char *op, nn_tensor *in, lmnn_dtype out_dtype,
                            const lmnn_memory_config *memory, const char *chain,
                            const uint32_t *params, uint32_t uop, bool zero_pad,
                            const nn_unary_reader *reader, lmnn_tensor *out);

/* lmnn_linear whose result's padding is left as the product makes it
 * instead of zeroed (the zeroing costs a transfer per row of every edge
 * tile, and every tile of a narrow product is one): for a caller that
 * reads only the valid part, e.g. untilizes it. Breaks the zero-padding
 * invariant: never hand the result to a user. */
lm_status nn_linear_raw_padding(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_matmul_options *opts, lmnn_tensor *out);

/* A weight [taps * c, oc] that is block-diagonal over groups (a grouped
 * convolution's prepared matrix: row tap * c + ch and column o are in the
 * same group when ch / cg == o / ocg, and zero otherwise). A tile row of
 * the weight may hold channels of two taps or more (nn_group_mask). With
 * k (its rows, taps * c) the weight is in the compact form instead: a tile
 * tensor [T, 32, 32] of each tile row's tiles from the first to the last
 * that meet a group (nn_group_span), a row after another (nn_group_compact
 * makes it). */
typedef struct nn_mm_groups {
    uint32_t c, cg, ocg;
    uint32_t k; /* 0: the weight is the block-diagonal matrix itself */
} nn_mm_groups;

/* Tiles of the compact form of the [g->k, n] weight that `g` describes. */
uint64_t nn_group_tiles(const nn_mm_groups *g, uint32_t n);

/* The compact form's elements (nn_group_tiles(g, n) tiles, each 32 x 32
 * row-major) from the row-major [g->k, n] matrix `m`, into a new array
 * (NULL when out of host memory; the caller frees it). */
float *nn_group_compact(const nn_mm_groups *g, uint32_t n, const float *m);

/* lmnn_linear (nn_linear_raw_padding with `raw_padding`) by such a weight:
 * the products of the weight's tiles that lie wholly outside the groups are
 * skipped, not made and added as zeros (which costs a grouped convolution
 * as many products as a dense one). */
lm_status nn_linear_grouped(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                            const lmnn_matmul_options *opts, bool raw_padding,
                            const nn_mm_groups *groups, lmnn_tensor *out);

/* A product whose A is never stored: a reader kernel gathers each tile row
 * of A, all of K, row-major into circular buffer NN_MM_CB_ROWS (a page of
 * 32 x 32 elements per K tile) and the matmul's compute tilizes it as it
 * comes (a convolution's patch matrix; see nn_linear_gathered). */
#define NN_MM_CB_ROWS 7
typedef struct nn_mm_gather {
    nn_tensor *source; /* what the reader reads: its common arg 0 */
    lmnn_dtype dtype;  /* A's elements (float32 or bfloat16) */
    uint32_t m, k;     /* A's shape */
    lm_data_format rows_format;
    uint32_t rows_page;    /* bytes of a page of NN_MM_CB_ROWS */
    nn_kernel_spec reader; /* on DM0 */
    const uint32_t *args;  /* its runtime args (also the program's key) */
    uint32_t nargs;
    /* Args each core's are given: its first tile row of A, their count,
     * and the step between them. */
    uint32_t first_arg, count_arg, step_arg;
    uint64_t l1_bytes; /* what `buffers` takes of L1 */
    /* A row-major output instead of tiles (rm_len 0: tiles): rm_shape,
     * holding the [m, n] product's elements in the same order, in pages of
     * rm_len elements (a multiple or a divisor of n); float32 or bfloat16. */
    uint32_t rm_len;
    lmnn_shape rm_shape;
    /* A max pooling fused after the product (0 or 1 and 1: none; see
     * matmul_compute.c's NN_MM_POOL): each output tile row is the max of
     * pool_rows tile rows the reader gathers one after the other, and of
     * pool_groups column groups of B's; the output is pool_n columns, one
     * group's, and the bias (added after the max) pool_n values. */
    uint32_t pool_rows, pool_groups, pool_n;
    /* Makes the reader's own circular buffers (none of the matmul's). */
    lm_status (*buffers)(const char *op, nn_program *prog, const void *ctx);
    const void *ctx;
    /* The operands' names in messages (NULL: "input", "weight"). */
    const char *a_name, *b_name;
} nn_mm_gather;

/* nn_linear_grouped of the gathered A and `weight`, as one program: or
 * LM_OK with out->id 0 when the product does not take that form (all of
 * the weight and a tile row of A in L1, the output's columns in dst; not
 * with transposes or multicast), for the caller to store A instead. */
lm_status nn_linear_gathered(const char *op, const nn_mm_gather *a, lmnn_tensor weight,
                             lmnn_tensor bias, const lmnn_matmul_options *opts, bool raw_padding,
                             const nn_mm_groups *groups, lmnn_tensor *out);

/* Tilize a row-major tensor into `out` (a tile tensor of the same shape), or
 * untilize a tile tensor into a row-major `out`, on the device. `out` of an
 * untilize may also have rows of another length than `in` (same volume):
 * the same elements in the same order, e.g. a convolution's packed output
 * pixels as a page per pixel or per image row; `in`'s rows must then span
 * at most 8 tiles, or `out`'s rows be a multiple of `in`'s. */
lm_status nn_tilize(const char *op, nn_tensor *in, nn_tensor *out);
lm_status nn_untilize(const char *op, nn_tensor *in, nn_tensor *out);

/* Copies tile tensor `in` into tile tensor `out` of the same dtype (float32,
 * bfloat16, uint32 or int32) and volume but another shape: the elements keep
 * their row-major order (a reshape that moves them between tile positions).
 * Volumes of at most 2^32 elements (nn_reduce.c). */
lm_status nn_reshape_tiles(const char *op, nn_tensor *in, nn_tensor *out);

/* ---- sharded tensors (nn_tensor.c, nn_shard.c) ----
 * nn_get_tensor and nn_tensor_new refuse sharded tensors (LM_ERR_UNSUPPORTED,
 * pointing at lmnn_to_memory_config), so an op sees interleaved tensors only
 * unless it opts in with these. */

static inline bool nn_memory_is_sharded(const lmnn_memory_config *m) {
    return m->layout >= LM_BUFFER_HEIGHT_SHARDED && m->layout <= LM_BUFFER_BLOCK_SHARDED;
}

/* As nn_get_tensor, accepting sharded tensors. */
lm_status nn_get_tensor_any(const char *op, const char *arg, lmnn_tensor t, nn_tensor **out);

/* As nn_tensor_new, accepting a sharded memory config (checked against the
 * shape and layout: "<op>: memory.shard...: ..." errors). */
lm_status nn_tensor_new_any(const char *op, lm_device *device, const lmnn_shape *shape,
                            lmnn_dtype dtype, lmnn_layout layout, const lmnn_memory_config *memory,
                            lmnn_tensor *out_handle, nn_tensor **out_tensor);

/* Checks `memory` (interleaved or sharded; messages name it `arg`, e.g.
 * "opts.memory") for a tensor of `shape` in `layout` on `device`; for a
 * sharded one fills *out_pages with the buffer's shard spec in pages (may be
 * NULL). */
lm_status nn_check_memory_any(const char *op, const char *arg, lm_device *device,
                              const lmnn_memory_config *memory, const lmnn_shape *shape,
                              lmnn_layout layout, lm_shard_spec *out_pages);

/* Copies every page of `in` to `out` (same shape, dtype and layout; any
 * memory configs) on the device (nn_shard.c). */
lm_status nn_copy_pages(const char *op, nn_tensor *in, nn_tensor *out);

/* ---- errors ---- */

/* Records "<op>: <message>" and returns `status`. */
lm_status nn_fail(lm_status status, const char *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes "<op>" to the message of a failed lm_* call. */
lm_status nn_fail_call(lm_status status, const char *op);

#endif
