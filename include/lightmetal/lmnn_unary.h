/* lightmetal op library — element-wise unary operations (ttnn's unary ops).
 *
 * Each maps a float tensor in tile layout to a new tensor of the same shape,
 * element by element, on the device's cores (the compute engine's SFPU:
 * results are the same bits on every host). The math is float32 with one
 * rounding to the output dtype; see docs/nn.md for each op's accuracy. The
 * padding of the output stays zero whatever f(0) is.
 *
 * Errors (lmnn_tensor.h): the input must be a live float tile tensor; the
 * output dtype, when given, a float dtype; parameters as the op allows
 * (LM_ERR_INVALID_ARGUMENT: clamp's min above max, celu's alpha or softplus'
 * beta zero or NaN, round's decimals not an integer in -38..38).
 *
 * Domains as PyTorch: outside it the result is NaN (sqrt, log, asin, acos,
 * acosh, atanh of out-of-range values), or +-Inf at poles (log(0),
 * atanh(+-1)).
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
    LMNN_GELU,      /* exact: x * Phi(x), the erf form */
    LMNN_GELU_TANH, /* tanh approximation */
    LMNN_SILU,
    LMNN_SIGMOID,
    LMNN_TANH,
    LMNN_CLAMP,    /* alpha = min, beta = max (default -Inf, +Inf) */
    LMNN_HARDTANH, /* alpha = min, beta = max (default -1, 1) */
    LMNN_LOG1P,
    LMNN_EXPM1,
    LMNN_SIGN,        /* -1, 0 or 1 (0 for both zeros, NaN stays NaN) */
    LMNN_LEAKY_RELU,  /* alpha = negative_slope (default 0.01) */
    LMNN_ELU,         /* alpha (default 1) */
    LMNN_SELU,        /* torch's fixed scale and alpha */
    LMNN_CELU,        /* alpha (default 1; nonzero) */
    LMNN_MISH,        /* x tanh(softplus(x)) */
    LMNN_HARDSIGMOID, /* relu6(x + 3) / 6 */
    LMNN_HARDSWISH,   /* x relu6(x + 3) / 6 */
    LMNN_SOFTPLUS,    /* alpha = beta (default 1; nonzero), beta = threshold (default 20) */
    LMNN_SOFTSIGN,    /* x / (1 + |x|) */
    LMNN_ERF,
    LMNN_ERFC,
    LMNN_SIN,
    LMNN_COS,
    LMNN_TAN,
    LMNN_ASIN,
    LMNN_ACOS,
    LMNN_ATAN,
    LMNN_SINH,
    LMNN_COSH,
    LMNN_ASINH,
    LMNN_ACOSH,
    LMNN_ATANH,
    LMNN_FLOOR,
    LMNN_CEIL,
    LMNN_ROUND, /* alpha = decimals (default 0; an integer in -38..38); ties to even */
    LMNN_TRUNC,
    LMNN_FRAC, /* x - trunc(x) */
    /* Predicates: 1.0 or 0.0. */
    LMNN_LOGICAL_NOT, /* x == 0 (NaN is nonzero) */
    LMNN_ISNAN,
    LMNN_ISINF,
    LMNN_ISFINITE,
    LMNN_ISPOSINF,
    LMNN_ISNEGINF,
    LMNN_EXP2,
    LMNN_LOG2,
    LMNN_LOG10,
    LMNN_CBRT,
    /* Comparisons with zero (ttnn's eqz ... gez): 1.0 or 0.0, -0 counting
     * as 0, NaN giving 0 except in nez. */
    LMNN_EQZ,
    LMNN_NEZ,
    LMNN_LTZ,
    LMNN_GTZ,
    LMNN_LEZ,
    LMNN_GEZ,
    LMNN_HEAVISIDE, /* alpha = the value at 0 (torch.heaviside's values; default 0) */
    LMNN_RELU_MAX,  /* min(max(x, 0), alpha) (alpha default 6) */
    LMNN_RELU_MIN,  /* max(x, alpha) (alpha default 0) */
    /* x * alpha and x / alpha (a division, not a product with 1 / alpha),
     * alpha rounded to float32 (default 1): ttnn's MUL_UNARY_SFPU and
     * DIV_UNARY_SFPU, mostly to be fused after another op (attention's
     * scores scaled as the product that makes them is stored). The same
     * values as lmnn_mul_scalar and lmnn_div_scalar. */
    LMNN_MUL_UNARY,
    LMNN_DIV_UNARY,
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
lm_status lmnn_log1p(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_expm1(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_sign(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_selu(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_mish(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_hardsigmoid(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_hardswish(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_softsign(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_erf(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_erfc(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_sin(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_cos(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_tan(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_asin(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_acos(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_atan(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_sinh(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_cosh(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_asinh(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_acosh(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_atanh(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_floor(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_ceil(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_trunc(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_frac(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_logical_not(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_isnan(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_isinf(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_isfinite(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_isposinf(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_isneginf(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_exp2(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_log2(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_log10(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_cbrt(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_eqz(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_nez(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_ltz(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_gtz(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_lez(lmnn_tensor a, lmnn_tensor *out);
lm_status lmnn_gez(lmnn_tensor a, lmnn_tensor *out);
/* Parameterised ones (PyTorch's parameter names). */
lm_status lmnn_leaky_relu(lmnn_tensor a, double negative_slope, lmnn_tensor *out);
lm_status lmnn_elu(lmnn_tensor a, double alpha, lmnn_tensor *out);
lm_status lmnn_celu(lmnn_tensor a, double alpha, lmnn_tensor *out);
lm_status lmnn_softplus(lmnn_tensor a, double beta, double threshold, lmnn_tensor *out);
lm_status lmnn_round(lmnn_tensor a, int decimals, lmnn_tensor *out);
lm_status lmnn_heaviside(lmnn_tensor a, double value, lmnn_tensor *out);
lm_status lmnn_relu_max(lmnn_tensor a, double upper, lmnn_tensor *out);
lm_status lmnn_relu_min(lmnn_tensor a, double lower, lmnn_tensor *out);
lm_status lmnn_clamp(lmnn_tensor a, double min, double max, lmnn_tensor *out);
lm_status lmnn_hardtanh(lmnn_tensor a, double min, double max, lmnn_tensor *out);

/* ---- random numbers (ttnn's uniform, bernoulli and dropout) ----
 * Drawn on the device by the compute engine's generator (rand_tile), 24
 * random bits per draw. The numbers depend only on the seed (and the run
 * seed's value) and on each element's place in the tensor, not on how the
 * work is split across cores: a seed gives the same tensor every time, on
 * any host, and two calls given one seed draw the same numbers (so a
 * dropout's mask is the one its output used). Distinct seeds give unrelated
 * numbers.
 *
 * The input must be a live float tile tensor; the result has its shape and
 * dtype. Errors as the unary ops, and LM_ERR_INVALID_ARGUMENT for low above
 * high or either not finite, stddev negative or not finite, a ratio outside
 * [0, 1), a run seed that is not a live int32 or uint32 tensor of one
 * element (on the input's device). */

/* How the numbers are chosen. Start from lmnn_random_options_init. */
typedef struct lmnn_random_options {
    uint32_t seed; /* default 0 */
    /* A uint32 or int32 tensor of one element (any layout), or {0} (the
     * default) for none. Its value is read on the device at each launch and
     * mixed into `seed`: a captured workload replayed with new contents in
     * that buffer (a named input) draws new numbers, with no new capture. */
    lmnn_tensor run_seed;
} lmnn_random_options;

void lmnn_random_options_init(lmnn_random_options *opts);

/* Uniform in [low, high); like's values are not read. NULL opts: the
 * defaults, for these four. */
lm_status lmnn_uniform(lmnn_tensor like, double low, double high, const lmnn_random_options *opts,
                       lmnn_tensor *out);
/* Normal with `mean` and `stddev` (Box-Muller: two draws per element);
 * like's values are not read. */
lm_status lmnn_normal(lmnn_tensor like, double mean, double stddev, const lmnn_random_options *opts,
                      lmnn_tensor *out);
/* 1 where a uniform draw in [0, 1) is below p's element (the probability of
 * a 1), else 0. */
lm_status lmnn_bernoulli(lmnn_tensor p, const lmnn_random_options *opts, lmnn_tensor *out);
/* Each element of `a` kept with probability 1 - ratio and scaled by
 * 1 / (1 - ratio), else 0; *out_mask, when out_mask is not NULL, 1 where
 * kept and 0 elsewhere (a's dtype). */
lm_status lmnn_dropout(lmnn_tensor a, double ratio, const lmnn_random_options *opts,
                       lmnn_tensor *out, lmnn_tensor *out_mask);

#ifdef __cplusplus
}
#endif

#endif
