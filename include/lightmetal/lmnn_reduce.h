/* lightmetal op library — reductions (ttnn's sum, mean, max, min, var, std,
 * prod, argmax, argmin, and topk at the end).
 *
 * Each reduces a float tensor in tile layout over a set of its dims and
 * returns a new tile tensor: the reduced dims removed, or kept with size 1
 * when opts.keepdim is set. Reducing every dim without keepdim gives a rank-0
 * tensor (one element). The work runs on the device's cores (one program, or
 * two when few outputs have many inputs each: partial results per core first,
 * then their combination); no host data is written, so the ops can be
 * recorded in metal traces and Light Metal captures.
 *
 * Semantics are PyTorch's (torch.sum(a, dims, keepdim) and so on):
 *   sum    the sum of the elements
 *   mean   the sum divided by the number of reduced elements
 *   max    the largest element (NaN when any element is NaN)
 *   min    the smallest element (NaN when any element is NaN)
 *   var    sum((x - mean)^2) / (N - correction), two passes (mean first);
 *          N - correction <= 0 gives Inf or NaN as in PyTorch
 *   std    sqrt(var)
 *   norm   p = 1: sum(|x|); p = 2: sqrt(sum(x^2)); p = INFINITY: max(|x|)
 *   prod   the product of the elements (tiles multiplied element-wise, then
 *          within a tile: not PyTorch's running order, so float32 results
 *          may differ from PyTorch's by a few ulps)
 * The math is float32 on the device (float32 accumulation for every input
 * dtype) with one rounding to the output dtype. Accuracy against a float64
 * reference, float32 tensors: sums and means within about 1e-6 of the sum of
 * |x| over the reduced elements (divided by N for means); max and min exact;
 * var, std and norms within about 1e-6 relative.
 *
 * Tile padding never takes part (max and min see it as absent, mean divides
 * by the logical count) and the output's padding is zero.
 *
 * Errors (lmnn_tensor.h): the input must be a live float tile tensor; dims in
 * range for its rank (-rank .. rank - 1), each at most once; the output
 * dtype, when given, a float dtype.
 */
#ifndef LIGHTMETAL_LMNN_REDUCE_H
#define LIGHTMETAL_LMNN_REDUCE_H

#include "lightmetal/lmnn_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lmnn_reduce_options {
    /* The dims to reduce, either as a list (negative dims count from the end:
     * -1 is the last) or as a bitmask (bit d reduces dim d); not both. Neither
     * (dim_count 0 and dim_mask 0): every dim. */
    int32_t dims[LMNN_MAX_DIMS];
    uint32_t dim_count;
    uint32_t dim_mask;
    bool keepdim;       /* keep reduced dims with size 1 (default false) */
    double correction;  /* var, std: the divisor is N - correction (default 1) */
    lmnn_output output; /* dtype: float dtypes only */
} lmnn_reduce_options;

/* Every dim, no keepdim, correction 1, output like the input. */
void lmnn_reduce_options_init(lmnn_reduce_options *opts);

/* out = the reduction of a over opts' dims. NULL opts: the defaults (every
 * dim, a rank-0 result). */
lm_status lmnn_sum(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_mean(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_max(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_min(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_var(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_std(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_prod(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);

/* The p-norm over opts' dims: p = 1, 2 or INFINITY (other p:
 * LM_ERR_UNSUPPORTED). */
lm_status lmnn_norm(lmnn_tensor a, double p, const lmnn_reduce_options *opts, lmnn_tensor *out);

/* torch.argmax / torch.argmin: the index of the first largest (smallest)
 * element along the one dim opts name (dims with one entry, or a dim_mask
 * with one bit), or, naming no dim, in the flattened tensor (PyTorch's
 * dim=None); keepdim as for the other reductions. A NaN counts as the
 * extreme (the first NaN's index), as in PyTorch; padding never takes part.
 * The result is a tile tensor of dtype uint32 (ttnn's; output.dtype may ask
 * for int32). At most 2^24 elements along the dim (indices are exact float32
 * on the device: LM_ERR_UNSUPPORTED beyond). Composed of several device
 * programs (max, eq, isnan, logical_or, where with indices written on the
 * device, min, typecast); no host data is written.
 * Errors: as above, and more than one dim, or an output dtype other than
 * uint32 or int32. */
lm_status lmnn_argmax(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);
lm_status lmnn_argmin(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out);

typedef struct lmnn_topk_options {
    bool smallest; /* the k smallest instead of the largest (default false) */
} lmnn_topk_options;

void lmnn_topk_options_init(lmnn_topk_options *opts);

/* torch.topk(a, k, dim, largest, sorted=True) (ttnn's topk): the k largest
 * (or smallest) elements along `dim` (negative from the end) and their
 * indices, best first; equal elements in index order (-0 equals +0), NaN
 * above every number, as in PyTorch. *out_values has a's dtype and layout
 * with dims[dim] = k, *out_indices the same shape in int32; both in a's
 * memory config. Any dtype but uint16 and uint8 (int32 and uint32 compare
 * as integers; bfloat8_b compares as the bfloat16 it unpacks to, and the
 * values are packed again, which re-rounds those whose 16-element block
 * changed, as lmnn_data.h's movement does), either layout.
 *
 * One program does the selection, each core some rows, each row streamed
 * through a heap of its k best (rows of any length); a dim other than the
 * last, and tile layout, add a transpose and untilize before and after.
 * Errors: a dim out of range; k not in 1 .. the dim's size, or above 32768
 * (the k best of a row stay in one core's L1); uint16 or uint8. On error
 * nothing is created. */
lm_status lmnn_topk(lmnn_tensor a, uint32_t k, int32_t dim, const lmnn_topk_options *opts,
                    lmnn_tensor *out_values, lmnn_tensor *out_indices);

#ifdef __cplusplus
}
#endif

#endif
