/* lightmetal op library — data movement (ttnn's data movement ops, PyTorch's
 * semantics).
 *
 * Every op makes a new tensor on the input's device and moves the elements
 * there on the device; nothing goes through the host, so the ops work inside
 * metal traces and Light Metal captures (the index ops read their indices on
 * the device too).
 *
 * Layouts and dtypes. An op takes either layout and returns the input's
 * layout and dtype (tile in, tile out, padding zero), unless said otherwise.
 * Pure movement carries every dtype bit for bit: bfloat16, float32, uint32,
 * int32 in both layouts, uint16 and uint8 (row-major only). bfloat8_b moves
 * whole tiles bit for bit where the op permits it (batch dims, and tile
 * aligned offsets along the last two dims); otherwise it goes through
 * bfloat16 and is packed again, which re-rounds values whose 16-element
 * block (a face row) changed (see lmnn_tensor.h).
 *
 * Costs. Row-major ops move whole runs along the last dim with one NoC
 * transfer per run. Tile tensors move whole tiles where the op permits it
 * (the cases above; a swap of the last two dims moves tiles and transposes
 * each in L1); other tile cases are untilized, moved as row-major and
 * tilized again on the device (three passes). A row-major swap of the last
 * two dims goes through tiles when both are at least 32; other row-major
 * permutes that move the last dim, and gathers along a dim other than the
 * last, move one element per NoC transfer. Simulated, a 1024x1024 float32
 * tensor takes about (row-major / tile): transpose 0.03 / 0.02 s, slice,
 * pad, reshape, repeat, index_select 0.001-0.002 / 0.002-0.02 s, gather along
 * the last dim 0.007 / 0.03 s and along dim 0 0.11 / 0.15 s, a permute moving
 * the last dim of [32, 32, 1024] 0.09 / 0.13 s; upsampling 512x512 by 2:
 * nearest 0.03 / 0.02 s, bilinear 0.13 / 0.15 s.
 *
 * Dims are int32: negative dims count from the end as in PyTorch (-1 is the
 * last). Options: NULL for the defaults; `output` (lmnn_output) sets the
 * output's memory config; its dtype must be zero or the input's (these ops
 * do not convert: use lmnn_typecast).
 *
 * Errors (see lmnn_tensor.h): LM_ERR_INVALID_HANDLE for dead tensors;
 * LM_ERR_INVALID_ARGUMENT naming the argument for bad dims, shapes, indices
 * and options, e.g.
 *   "lmnn_concat: tensors[2]: shape [2, 5, 4] differs from tensors[0]'s
 *    [2, 3, 5] outside dim 1".
 * A failed op creates nothing.
 */
#ifndef LIGHTMETAL_LMNN_DATA_H
#define LIGHTMETAL_LMNN_DATA_H

#include "lightmetal/lmnn_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dim of `shape` left for lmnn_reshape to work out (PyTorch's -1). */
#define LMNN_DIM_AUTO 0xFFFFFFFFu

/* `a`'s elements as a tensor of `shape` without moving them (ttnn's view):
 * a new handle on a's buffer, for shapes that keep a's pages in their order
 * -- row-major with the same last dim; tile layout with the same last dim
 * and the same second-last dim or both multiples of 32 (no padding rows
 * between matrices that were not there before). At most one dim
 * LMNN_DIM_AUTO. The buffer is freed with the last handle on it, whichever
 * goes first; lmnn_tensor_info.shared says another handle is still on it.
 * No op writes its inputs, so a view behaves as a copy would, except that
 * a write to the buffer itself (lm_enqueue_write_buffer) shows in both.
 * LM_ERR_INVALID_ARGUMENT for another volume or a shape that reorders the
 * pages (naming both shapes; lmnn_reshape copies those). No device work. */
lm_status lmnn_view(lmnn_tensor a, const lmnn_shape *shape, lmnn_tensor *out);

/* A copy of `a` in a buffer of its own (ttnn's clone), into output's memory
 * (default a's; output.dtype zero or a's): one page copy on the device. */
lm_status lmnn_clone(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out);

/* The elements of `a`, in row-major order, in a tensor of `shape` (the same
 * volume; at most one dim LMNN_DIM_AUTO). A view (lmnn_view: no device
 * work, the buffer shared) when the shape keeps a's pages in order and
 * `output` asks for a's memory (NULL does), as ttnn's reshape; otherwise a
 * copy on the device: a page copy when the page order is unchanged (into
 * other memory); a tile tensor of float32,
 * bfloat16, int32 or uint32 that keeps its last dim has its rows regrouped
 * into tiles of the new matrices in one pass ([1, 14, 14, C] to [196, C]);
 * one that changes its last dim in up to 65,536 pieces (a decoder's heads
 * split, [B, 1, D] to [B, 1, H, D / H]) has each output face row read from
 * the input's tiles in one pass; else runs between rows. */
lm_status lmnn_reshape(lmnn_tensor a, const lmnn_shape *shape, const lmnn_output *output,
                       lmnn_tensor *out);

/* out.dims[i] = a.dims[dims[i]]; `dims` a permutation of a's `count` dims.
 * On tile tensors it moves whole tiles when the last two dims stay or swap
 * (each tile transposed in L1); when out's second-last dim is a's last (an
 * attention's keys transposed, [S, H, D] -> [H, D, S]), it keeps a's rows
 * as rows first and then swaps tiles; other permutes go through row-major
 * rows. */
lm_status lmnn_permute(lmnn_tensor a, const int32_t *dims, uint32_t count,
                       const lmnn_output *output, lmnn_tensor *out);

/* lmnn_permute(lmnn_reshape(a, shape), dims, count) in one pass: `count` is
 * shape's rank. A transformer's heads split and moved forward
 * ([S, B, 3 * E] -> [S, B, 3, H, D] -> [3, B, H, S, D]) move each element
 * once instead of through a tensor of the intermediate shape, whose tiles a
 * small second-last dim leaves mostly padding. Errors name
 * "lmnn_permute_reshaped" and the argument, as the two ops do. */
lm_status lmnn_permute_reshaped(lmnn_tensor a, const lmnn_shape *shape, const int32_t *dims,
                                uint32_t count, const lmnn_output *output, lmnn_tensor *out);

/* lmnn_reshape(lmnn_permute_reshaped(a, shape, dims, count), to): `to`
 * holds a's elements. When `to`'s last dim is the permuted shape's, rows
 * stay rows and the one pass writes `to` itself: a window partition's
 * [H/P, P, W/P, P, C] -> [H/P, W/P, P, P, C] -> [H/P * W/P, P * P, C] never
 * makes the middle tensor, whose tiles a small P leaves mostly padding.
 * When a's rows (the dims of `shape` that make its second-last dim) stay
 * together as to's rows and `shape`'s last dim, a multiple of 32, stays
 * last, whole tiles move (an attention's heads split or joined on any batch
 * dims). When `to`'s rows are two or three dims of the permuted shape, and
 * their input window fits in L1 or the inner dim is contiguous in a, each
 * row is read in runs in the same single pass: an NHWC image's
 * depth-to-space ([N, H, W, C, b, b] -> [N, H, b, W, b, C] as rows
 * [N * H * b, W * b * C]) never makes rows of C elements. NULL `to`:
 * lmnn_permute_reshaped. Errors name "lmnn_permute_reshaped_to" and the
 * argument. */
lm_status lmnn_permute_reshaped_to(lmnn_tensor a, const lmnn_shape *shape, const int32_t *dims,
                                   uint32_t count, const lmnn_shape *to, const lmnn_output *output,
                                   lmnn_tensor *out);

/* Swaps dims dim0 and dim1 (a permute). */
lm_status lmnn_transpose(lmnn_tensor a, int32_t dim0, int32_t dim1, const lmnn_output *output,
                         lmnn_tensor *out);

/* The `count` tensors joined along `dim`: same rank, dtype, layout and device,
 * equal dims but `dim`. The output follows tensors[0] (layout, dtype, memory
 * config unless `output` says). */
lm_status lmnn_concat(const lmnn_tensor *tensors, uint32_t count, int32_t dim,
                      const lmnn_output *output, lmnn_tensor *out);

/* outs[i] = the i-th consecutive piece of `a` along `dim`, sizes[i] long
 * (PyTorch's split with a list of sizes; they must sum to the dim). On error
 * no outs are created. */
lm_status lmnn_split(lmnn_tensor a, const uint32_t *sizes, uint32_t count, int32_t dim,
                     const lmnn_output *output, lmnn_tensor *outs);

/* PyTorch's chunk: pieces of ceil(n / chunks) along `dim`, the last one
 * smaller; may give fewer than `chunks` (as PyTorch does). `outs` has room
 * for `chunks` tensors; *out_count receives how many were made. */
lm_status lmnn_chunk(lmnn_tensor a, uint32_t chunks, int32_t dim, const lmnn_output *output,
                     lmnn_tensor *outs, uint32_t *out_count);

/* a[begins[0]:ends[0]:steps[0], ...] over all `count` (= a's rank) dims.
 * Negative begins and ends count from the end of the dim; after that
 * 0 <= begin < end <= dim is required (an empty or out-of-range slice is an
 * error, not clamped). steps >= 1; NULL steps: all 1. */
lm_status lmnn_slice(lmnn_tensor a, const int32_t *begins, const int32_t *ends,
                     const int32_t *steps, uint32_t count, const lmnn_output *output,
                     lmnn_tensor *out);

typedef enum lmnn_pad_mode {
    LMNN_PAD_MODE_INVALID = 0,
    LMNN_PAD_CONSTANT = 1,  /* `value` */
    LMNN_PAD_REFLECT = 2,   /* mirror without the edge: pads < the dim */
    LMNN_PAD_REPLICATE = 3, /* the edge element */
    LMNN_PAD_CIRCULAR = 4,  /* wrap around: pads <= the dim */
} lmnn_pad_mode;

typedef struct lmnn_pad_options {
    lmnn_pad_mode mode; /* default CONSTANT */
    double value;       /* CONSTANT: converted to the dtype (integers truncate
                           toward zero and saturate); default 0 */
    lmnn_output output;
} lmnn_pad_options;

void lmnn_pad_options_init(lmnn_pad_options *opts);

/* `a` padded: pads[2*d] elements before and pads[2*d + 1] after dim d, for
 * each of a's `count` dims in dim order (not PyTorch's last-dim-first). */
lm_status lmnn_pad(lmnn_tensor a, const uint32_t *pads, uint32_t count,
                   const lmnn_pad_options *opts, lmnn_tensor *out);

/* PyTorch's Tensor.repeat: `count` >= a's rank repeats; extra leading ones
 * add leading dims; out.dims[i] = dims[i] * repeats[i]. */
lm_status lmnn_repeat(lmnn_tensor a, const uint32_t *repeats, uint32_t count,
                      const lmnn_output *output, lmnn_tensor *out);

/* PyTorch's Tensor.expand (materialised): `shape` has at least a's rank;
 * a's dims (aligned to the right) must equal shape's or be 1. */
lm_status lmnn_expand(lmnn_tensor a, const lmnn_shape *shape, const lmnn_output *output,
                      lmnn_tensor *out);

/* ---- ops that read an index tensor on the device ----
 * Index tensors are row-major uint32 or int32. An index outside [0, n) (n
 * the size of the indexed dim; negative int32 indices included) is not an
 * error -- it is data on the device -- and gives zero: the output row or
 * element it selects is all zero bits. The kernels never read outside a
 * buffer. To learn whether it happened, ask for the count. */
typedef struct lmnn_index_options {
    lmnn_output output;
    /* Not NULL: receives a new uint32 row-major tensor of shape [1] in L1
     * holding the number of output elements zeroed for an out-of-range index
     * (counted on the device; read it with lmnn_to_host). */
    lmnn_tensor *out_invalid_count;
    /* An entry below 0 counts from the end of the indexed dim (-1 the last),
     * as ONNX's Gather and GatherElements take them; one below -n still
     * gives zero. Default false: a negative entry is out of range. */
    bool negative_from_end;
} lmnn_index_options;

void lmnn_index_options_init(lmnn_index_options *opts);

/* PyTorch's index_select: out = a with dim `dim` replaced by the entries of
 * `index` (any shape; its elements in row-major order), out.dims[dim] =
 * index's volume. */
lm_status lmnn_index_select(lmnn_tensor a, int32_t dim, lmnn_tensor index,
                            const lmnn_index_options *opts, lmnn_tensor *out);

/* PyTorch's gather: out has index's shape; out[i][j][k] = a[index[i][j][k]][j][k]
 * for dim 0 (and so on). index has a's rank and index.dims[d] <= a.dims[d]
 * for d != dim. Along the last dim each output row moves at once; along
 * another dim each element is its own NoC transfer. */
lm_status lmnn_gather(lmnn_tensor a, int32_t dim, lmnn_tensor index, const lmnn_index_options *opts,
                      lmnn_tensor *out);

/* Where lmnn_scatter_rows sends update row i: by default to row index[i].
 * With index_dim > 0 an entry counts along a dim of that size, from its end
 * when below 0 (ONNX's indices), and one outside [-index_dim, index_dim)
 * sends nothing; the entry v (made positive) then names row v * row_scale +
 * offsets[i]: the row of a [.., index_dim, ..] position whose other
 * coordinates give offsets[i] (a ScatterElements of whole rows). offsets,
 * when given, is a row-major int32 or uint32 tensor of M entries in one row,
 * on a's device. */
typedef struct lmnn_scatter_options {
    lmnn_output output;  /* memory (default a's); dtype zero or a's */
    uint32_t index_dim;  /* 0 (default): an entry is a row number itself */
    uint32_t row_scale;  /* with index_dim: rows per step along that dim (default 1) */
    lmnn_tensor offsets; /* with index_dim: per-entry rows added (default none) */
    /* Entry i is element i * index_step of index, in row-major order
     * (default 1): index holds M * index_step elements, in any shape (the
     * first of each row of a ScatterElements' [M, W] indices, read where
     * they are). */
    uint32_t index_step;
} lmnn_scatter_options;

void lmnn_scatter_options_init(lmnn_scatter_options *opts);

/* Weighted row gather (bilinear and trilinear sampling: RoiAlign's and
 * GridSample's taps): out[g, :] = the sum over taps t of weights[t, g] *
 * a[index[t, g], :]. a is a row-major float32 or bfloat16 tensor [rows, C];
 * index a row-major int32 or uint32 tensor [T, G] of 1 to
 * LMNN_GATHER_TAPS_MAX taps, weights a row-major float32 tensor of the
 * same shape, all on one device. out is a new tile tensor [G, C] of a's
 * dtype (output: memory, default a's; its dtype unset or a's). The sums are
 * float32, in tap order, rounded once to out's dtype. An int32 entry below
 * 0 counts from the end of a's rows (-1 the last), as ONNX's Gather does;
 * one outside [-rows, rows) (a uint32 one outside [0, rows)) reads zeros,
 * whatever its weight. Errors as lmnn_index_select's. */
#define LMNN_GATHER_TAPS_MAX 64u
lm_status lmnn_gather_rows_weighted(lmnn_tensor a, lmnn_tensor index, lmnn_tensor weights,
                                    const lmnn_output *output, lmnn_tensor *out);

/* Row scatter (ONNX ScatterND over whole rows, PyTorch's index_copy_ along
 * dim 0, a key/value cache's update): out = a copy of `a` with row r(i)
 * replaced by row i of `updates`, for i in order, so of several entries that
 * name one row the last one's row stays; r(i) is index[i], or as opts maps
 * it. a and updates are tile tensors of one dtype (float32, bfloat16, int32
 * or uint32; bfloat8_b shares exponents between rows: typecast it) and one
 * last dim W, of 2 dims or more: their rows are every dim but the last, in
 * order ([B, H, T, W] has B * H * T rows, whatever T), N of a's and M of
 * updates'; out has a's shape. index is a row-major int32 or uint32 tensor
 * of M entries (times opts->index_step). A row outside [0, N)
 * changes nothing (the sums are checked, never wrapped). NULL opts: the
 * defaults. The copy runs on every core, the rows move on one. */
lm_status lmnn_scatter_rows(lmnn_tensor a, lmnn_tensor index, lmnn_tensor updates,
                            const lmnn_scatter_options *opts, lmnn_tensor *out);

typedef struct lmnn_embedding_options {
    /* Layout of the output: default the weight's. */
    lmnn_layout layout;
    lmnn_index_options index; /* output (memory, dtype zero or the weight's), count */
} lmnn_embedding_options;

void lmnn_embedding_options_init(lmnn_embedding_options *opts);

/* out[..., :] = weight[ids[...], :]: ids (row-major uint32/int32, any shape)
 * with weight [V, D] gives ids.shape + [D]. A row-major weight is gathered
 * row by row (one NoC read per row); a tile weight is untilized first on
 * every call, so keep large tables row-major. */
lm_status lmnn_embedding(lmnn_tensor ids, lmnn_tensor weight, const lmnn_embedding_options *opts,
                         lmnn_tensor *out);

typedef enum lmnn_upsample_mode {
    LMNN_UPSAMPLE_MODE_INVALID = 0,
    LMNN_UPSAMPLE_NEAREST = 1,
    LMNN_UPSAMPLE_BILINEAR = 2, /* align_corners = false; float dtypes */
} lmnn_upsample_mode;

typedef struct lmnn_upsample_options {
    lmnn_upsample_mode mode; /* default NEAREST */
    lmnn_output output;
} lmnn_upsample_options;

void lmnn_upsample_options_init(lmnn_upsample_options *opts);

/* a [N, C, H, W] (rank 4) scaled by integer factors to [N, C, H*scale_h,
 * W*scale_w], as torch.nn.functional.interpolate(scale_factor=...) does:
 * NEAREST picks a[h / scale_h][w / scale_w] (pure movement, every dtype);
 * BILINEAR (float dtypes, both layouts; row-major goes through tiles) takes
 * PyTorch's source coordinates and weights, computed in float32 on the
 * compute engine and rounded once to the output dtype. Scales 1..64. */
lm_status lmnn_upsample(lmnn_tensor a, uint32_t scale_h, uint32_t scale_w,
                        const lmnn_upsample_options *opts, lmnn_tensor *out);

/* ---- selection ---- */

typedef struct lmnn_nms_options {
    /* The most boxes one (batch entry, class) keeps, at least 1; default
     * UINT32_MAX (as many as there are boxes). */
    uint32_t max_per_class;
    /* Only scores above it take part (NaN scores never); default -INFINITY. */
    double score_threshold;
    /* The output's; fields left zero are DRAM interleaved's. Sharded is
     * refused (LM_ERR_UNSUPPORTED). */
    lmnn_memory_config memory;
} lmnn_nms_options;

void lmnn_nms_options_init(lmnn_nms_options *opts);

/* Greedy non-maximum suppression, given which boxes overlap (ONNX's
 * NonMaxSuppression, torchvision's batched_nms, once their IoU test is made
 * into a table). scores is [B, C, N] (batch entries, classes, boxes) and
 * overlaps [B, N, N]: overlaps[b][i][j] nonzero (neither +0 nor -0) when box
 * j must go once box i is kept. Float tensors, any dtype and layout.
 *
 * For each batch entry b and class c on its own: of the boxes i with
 * scores[b][c][i] above the threshold, the highest score (ties: the lower
 * index; -0 and +0 tie) is kept, and it and every box its row of overlaps
 * marks leave; again until max_per_class are kept or none remain. Scores
 * compare exactly in their dtype, as integers (bfloat8_b through bfloat16).
 *
 * *out is a new int32 row-major tensor [B * C * K, 3], K = min(max_per_class,
 * N): the kept boxes as rows (b, c, i), batch entries in order, then
 * classes, then boxes in the order kept, from row 0; every row after the
 * last kept box is (-1, -1, -1). Two programs (the selection on the cores,
 * a group each; the packing on one), so the cost grows with the boxes
 * compared, not with K launches. N at most 65536. */
lm_status lmnn_nms(lmnn_tensor scores, lmnn_tensor overlaps, const lmnn_nms_options *opts,
                   lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
