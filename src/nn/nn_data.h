/* Data movement ops, shared between nn_data*.c: a movement is described as a
 * map from a box of the output to the input (a dm_spec) and run by the
 * generic kernel kernels/data_rows.c (see there for the meaning of each map
 * kind); ops on tile tensors that whole tiles cannot serve run on row-major
 * stand-ins (dm_via_rm). */
#ifndef LM_NN_DATA_H
#define LM_NN_DATA_H

#include "nn/nn_internal.h"

#define DM_MAX_DIMS 10 /* LMNN_MAX_DIMS and the tile view's extra dim, and one spare */
#define DM_STAGE_BYTES (256u * 1024u) /* the largest source window staged in L1 */

typedef enum dm_kind {
    DM_AFFINE = 0, /* s = a + b*o */
    DM_DIV = 1,    /* s = a + o / b */
    DM_MOD = 2,    /* s = (a + o) % n */
    DM_PAD = 3,    /* s = o - a, fill outside [0, n) */
    DM_REFLECT = 4,
    DM_REPLICATE = 5,
    DM_INDEX = 6, /* s = index[a + b*o], zero (counted) when >= n */
    /* s = (o / (b*b2))*n + (o / b2 % b)*a + (o % b2)*a2: the last box dim
     * only, three dims of the output's rows in one (sizes any, b and b2,
     * steps n, a and a2 in input elements; b2 and a2 are the spec's
     * block_b2 and block_a2), whole multiples of b*b2 long; its src the
     * input view's last dim. */
    DM_BLOCK = 7,
    DM_INDEX_WRAP = 8, /* DM_INDEX with an entry below 0 counted from n */
} dm_kind;

/* Flags of a spec (the kernel's; it adds the memory ones itself). */
#define DM_TRANSPOSE 16u /* tile views: transpose each tile */
#define DM_ZERO_PAD 32u  /* tile views: zero the padding of the output's edge tiles */
#define DM_FLAT 64u      /* row-major reshape: the output's flat range of the input */

typedef struct dm_map {
    uint32_t kind, a, b, n;
    int32_t src; /* the input view dim the index moves along, -1 for none */
} dm_map;

/* Views: a row-major tensor is its shape; a tile tensor of shape
 * [..., H, W] (rank >= 2) is the array of its tiles [..., Ht, Wt, 1]. */
typedef struct dm_spec {
    bool tiles;
    uint32_t in_rank, in_dims[DM_MAX_DIMS];
    uint32_t out_rank, out_dims[DM_MAX_DIMS]; /* the whole output view */
    uint32_t box_lo[DM_MAX_DIMS];             /* where the box starts in the output */
    uint32_t box[DM_MAX_DIMS];                /* its extent; 0: the output's */
    dm_map map[DM_MAX_DIMS];                  /* per box dim, of the box index */
    uint32_t flags, fill_bits;
    uint32_t block_b2, block_a2; /* a DM_BLOCK last map's inner dim */
    /* Row-major input read through a view of another shape (in_dims): its
     * pages' width, the tensor's last dim (0: in_dims' last). */
    uint32_t in_page_w;
} dm_spec;

/* A spec whose views are `in`'s and `out`'s (tile views when `tiles`), every
 * map unset (AFFINE 0, 0 from no dim): the caller fills the maps. */
void dm_spec_init(dm_spec *spec, const nn_tensor *in, const nn_tensor *out, bool tiles);

/* The identity map from output view dim to input view dim `src`. */
dm_map dm_identity(int32_t src);

/* How a row-major spec whose last map is DM_BLOCK stages its input, from
 * the input's page width in_w and element size: the window a row reads
 * (the elements from the row's source start to the last it takes), or,
 * when every row's window lies inside the page its start is on, that
 * whole page (*out_page), shared by the rows that start on it (the output
 * rows of a depth-to-space of an image all read their input row so). A
 * window more than 8 times its row's width is not staged per row, nor one
 * over DM_STAGE_BYTES: 0. */
uint32_t dm_block_stage(const dm_spec *spec, uint32_t in_w, uint32_t esize, bool *out_page);

/* Runs `spec`: out's box <- in (and index, for DM_INDEX maps). With counter
 * (an L1 uint32 tensor), adds the number of elements zeroed for a bad index
 * to its first element. */
lm_status dm_run(const char *op, const dm_spec *spec, nn_tensor *in, nn_tensor *out,
                 nn_tensor *index, nn_tensor *counter);

/* How an op runs on row-major tensors: `ins` (count of them) to `out`. */
typedef lm_status (*dm_rm_fn)(const char *op, const void *ctx, nn_tensor *const *ins,
                              uint32_t count, nn_tensor *out);

/* `dim` (negative counts from the end) as 0 .. rank-1 (a scalar has one
 * dim here); errors name `arg`. */
lm_status dm_norm_dim(const char *op, const char *arg, int32_t dim, uint32_t rank, uint32_t *out);

/* The output's memory config from `output` (NULL: t's); its dtype must be
 * unset or t's. */
lm_status dm_out_memory(const char *op, const lmnn_output *output, const nn_tensor *t,
                        lmnn_memory_config *out);

/* What an op makes: shape, dtype, layout and memory config. */
typedef struct dm_out {
    lmnn_shape shape;
    lmnn_dtype dtype;
    lmnn_layout layout;
    lmnn_memory_config memory;
} dm_out;

/* Runs an op on row-major stand-ins of its inputs: tile inputs are untilized
 * (bfloat8_b through bfloat16) into temporary tensors (row-major inputs are
 * used as they are), `fn` writes a row-major result, which becomes the new
 * tensor `out` describes (tilized, and packed to bfloat8_b, on the device). */
lm_status dm_via_rm(const char *op, nn_tensor *const *ins, uint32_t count, const dm_out *out,
                    dm_rm_fn fn, const void *ctx, lmnn_tensor *out_handle);

/* Runs `fn` directly when `in` and the output are row-major, else through
 * dm_via_rm; makes the output tensor. */
lm_status dm_run_rm(const char *op, nn_tensor *in, const dm_out *out, dm_rm_fn fn, const void *ctx,
                    lmnn_tensor *out_handle);

/* The tensor `out` describes, made on `device`. */
lm_status dm_make(const char *op, lm_device *device, const dm_out *out, lmnn_tensor *out_handle,
                  nn_tensor **out_tensor);

/* A row-major copy of tile tensor `t` in DRAM (bfloat8_b as bfloat16). */
lm_status dm_untilized(const char *op, nn_tensor *t, lmnn_tensor *out_handle, nn_tensor **out);

/* The counter tensor of the index options: a zeroed uint32 [1] in L1. */
lm_status dm_counter_new(const char *op, lm_device *device, lmnn_tensor *out_handle,
                         nn_tensor **out);

/* Upsampling and gather (nn_data_index.c). */
lm_status dm_gather_run(const char *op, int32_t dim, nn_tensor *a, nn_tensor *index, nn_tensor *out,
                        nn_tensor *counter, bool wrap);

#endif
