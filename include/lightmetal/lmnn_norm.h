/* lightmetal op library — softmax and normalisations (ttnn's softmax,
 * layer_norm, rms_norm, group_norm, batch_norm).
 *
 * Each maps a float tensor in tile layout to a new tile tensor of the same
 * shape, on the device's cores, in one program (no host data: they can be
 * recorded in metal traces and Light Metal captures). The math is float32
 * (float32 accumulation for every input dtype) with one rounding to the
 * output dtype; statistics are two-pass (the mean first, then the mean of the
 * squared deviations), as PyTorch computes them. Tile padding takes no part
 * and the output's padding is zero.
 *
 * Accuracy against a float64 reference, float32 tensors with outputs of order
 * 1: softmax and log_softmax within about 1e-6 absolute; the norms within
 * about 1e-5 absolute. bfloat16 tensors: within the bfloat16 rounding of the
 * output (2^-8 relative) plus the input's own rounding.
 *
 * Optional tensors (weight, bias) are the zero handle {0} when absent.
 * Errors (lmnn_tensor.h): inputs must be live float tile tensors on one
 * device; parameter shapes as each function says.
 */
#ifndef LIGHTMETAL_LMNN_NORM_H
#define LIGHTMETAL_LMNN_NORM_H

#include "lightmetal/lmnn_tensor.h"
#include "lightmetal/lmnn_unary.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lmnn_softmax_options {
    lmnn_output output; /* dtype: float dtypes only */
} lmnn_softmax_options;

void lmnn_softmax_options_init(lmnn_softmax_options *opts);

/* out = exp(a - max) / sum(exp(a - max)) along `dim` (negative dims count
 * from the end), as torch.softmax; log_softmax gives (a - max) -
 * log(sum(exp(a - max))). Subtracting the max keeps exp in range: inputs of
 * any magnitude give finite results. A slice that is all -Inf gives NaN, as in
 * PyTorch. NULL opts: output like a. */
lm_status lmnn_softmax(lmnn_tensor a, int32_t dim, const lmnn_softmax_options *opts,
                       lmnn_tensor *out);
lm_status lmnn_log_softmax(lmnn_tensor a, int32_t dim, const lmnn_softmax_options *opts,
                           lmnn_tensor *out);

typedef struct lmnn_norm_options {
    double eps;               /* added to the variance (default 1e-5, PyTorch's) */
    uint32_t normalized_dims; /* layer_norm, rms_norm: over the last N dims (default 1) */
    bool channels_last;       /* group_norm: a's channels are its last dim (default false) */
    /* An activation applied to each result, in the same program (a
     * GroupNorm's SiLU): LMNN_UNARY_INVALID (0) for none, the default.
     * Parameters as lmnn_binary_options' (NaN: the unary op's defaults). */
    lmnn_unary_op activation;
    double activation_alpha, activation_beta;
    lmnn_output output; /* dtype: float dtypes only */
} lmnn_norm_options;

void lmnn_norm_options_init(lmnn_norm_options *opts);

/* torch.nn.functional.layer_norm over the last opts.normalized_dims dims:
 * (a - mean) / sqrt(var + eps) * weight + bias, var without correction.
 * weight and bias, when given, have the normalized shape (the last N dims of
 * a; leading dims of size 1 allowed) and a float dtype. NULL opts: the
 * defaults. */
lm_status lmnn_layer_norm(lmnn_tensor a, lmnn_tensor weight, lmnn_tensor bias,
                          const lmnn_norm_options *opts, lmnn_tensor *out);

/* RMS norm over the last opts.normalized_dims dims: a / sqrt(mean(a^2) + eps)
 * * weight (torch.nn.functional.rms_norm). weight as for layer_norm. */
lm_status lmnn_rms_norm(lmnn_tensor a, lmnn_tensor weight, const lmnn_norm_options *opts,
                        lmnn_tensor *out);

/* torch.nn.functional.group_norm: a is [N, C, *] (rank 2 or more); the C
 * channels split into num_groups groups of C / num_groups, each normalised
 * over its channels and all of the * dims (per sample); then per-channel
 * weight and bias ([C]: rank-1, or with leading dims of size 1; float32 or
 * bfloat16). num_groups must divide C. opts.normalized_dims is not used.
 *
 * With opts.channels_last, a is [*, L, C] (rank 2 or more) as ttnn.group_norm
 * takes it ([N, 1, H * W, C]): each matrix is one sample of L positions by C
 * channels, normalised per group as above. A convolution's NHWC output goes
 * through it without being transposed to channels first. */
lm_status lmnn_group_norm(lmnn_tensor a, uint32_t num_groups, lmnn_tensor weight, lmnn_tensor bias,
                          const lmnn_norm_options *opts, lmnn_tensor *out);

/* torch.nn.functional.batch_norm in inference (training = False): a is
 * [N, C, *] (rank 2 or more); (a - running_mean) / sqrt(running_var + eps) *
 * weight + bias with the per-channel [C] tensors (as for group_norm)
 * broadcast over N and the * dims. running_mean and running_var are
 * required. opts.normalized_dims is not used. */
lm_status lmnn_batch_norm(lmnn_tensor a, lmnn_tensor running_mean, lmnn_tensor running_var,
                          lmnn_tensor weight, lmnn_tensor bias, const lmnn_norm_options *opts,
                          lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
