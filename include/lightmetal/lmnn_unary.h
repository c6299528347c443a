/* lightmetal op library — element-wise unary operations (ttnn's unary ops).
 *
 * Each maps a float tensor in tile layout to a new tensor of the same shape,
 * element by element, on every core of the device (the compute engine's SFPU:
 * results are the same bits on every host). The math is float32 with one
 * rounding to the output dtype; see docs/nn.md for each op's accuracy. The
 * padding of the output stays zero whatever f(0) is.
 *
 * Errors (lmnn_tensor.h): the input must be a live float tile tensor; the
 * output dtype, when given, a float dtype.
 */
#ifndef LIGHTMETAL_LMNN_UNARY_H
#define LIGHTMETAL_LMNN_UNARY_H

#include "lightmetal/lmnn_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lmnn_unary_op {
    LMNN_UNARY_INVALID = 0,
    LMNN_EXP,
    LMNN_LOG,
    LMNN_SQRT,
    LMNN_RSQRT,
    LMNN_RECIPROCAL,
    LMNN_ABS,
    LMNN_NEG,
    LMNN_SQUARE,
    LMNN_RELU,
    LMNN_RELU6,
    LMNN_GELU,      /* exact: x * Phi(x) */
    LMNN_GELU_TANH, /* tanh approximation */
    LMNN_SILU,
    LMNN_SIGMOID,
    LMNN_TANH,
    LMNN_CLAMP,    /* alpha = min, beta = max (default -Inf, +Inf) */
    LMNN_HARDTANH, /* alpha = min, beta = max (default -1, 1) */
    LMNN_UNARY_OP_COUNT_
} lmnn_unary_op;

typedef struct lmnn_unary_options {
    /* The op's parameters, as PyTorch names them in the comments above;
     * lmnn_unary_options_init sets PyTorch's defaults. */
    double alpha, beta;
    lmnn_output output; /* dtype: float dtypes only */
} lmnn_unary_options;

void lmnn_unary_options_init(lmnn_unary_options *opts, lmnn_unary_op op);

/* Short name of an op ("exp", "gelu_tanh", ...); "invalid" when unknown. */
const char *lmnn_unary_op_name(lmnn_unary_op op);

/* out = op(a). NULL opts: the op's defaults. */
lm_status lmnn_unary(lmnn_unary_op op, lmnn_tensor a, const lmnn_unary_options *opts,
                     lmnn_tensor *out);

/* The ops by name, with default parameters and output. */
lm_status lmnn_exp(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_log(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_sqrt(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_rsqrt(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_reciprocal(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_abs(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_neg(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_square(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_relu(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_relu6(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_gelu(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_silu(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_sigmoid(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_tanh(lmnn_tensor a, lmnn_tensor *out);
/* Parameterised ones. */
lm_status lmnn_clamp(lmnn_tensor a, double min, double max, lmnn_tensor *out);
lm_status lmnn_hardtanh(lmnn_tensor a, double min, double max, lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
