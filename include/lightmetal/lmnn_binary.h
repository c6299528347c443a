/* lightmetal op library — element-wise binary operations with broadcasting
 * (ttnn's binary ops).
 *
 * out = a (op) b element by element, with NumPy's broadcasting: the shapes are
 * aligned at their last dims, a missing dim counts as 1 and a dim of 1 repeats
 * along the other operand's; any other pair of dims must be equal. The output
 * has the broadcast shape (the larger rank). So a [2, 3, 45, 70] tensor
 * combines with [70] (a row), [45, 1] (a column), [1, 1] (a scalar),
 * [3, 1, 70], [2, 1, 1, 1] or [2, 3, 45, 70], on either side.
 *
 * Inputs: live tensors in tile layout with float dtypes (bfloat16, float32,
 * bfloat8_b) on one device; their dtypes may differ. The output is a new tile
 * tensor with the first input's dtype and memory config unless the options
 * say otherwise (a float dtype).
 *
 * Math: the compute engine's dst holds float32, so each element is computed
 * from the exact input values in float32 and rounded once more to the output
 * dtype. add, sub, rsub, mul and div are IEEE float32 operations (correctly
 * rounded; x / 0 = +-Inf, 0 / 0 = NaN), maximum and minimum are exact and
 * return NaN when either input is NaN. A fused activation (options) runs on the
 * float32 result before that last rounding. Results are the same bits on every
 * host. The padding of the output stays zero.
 *
 * The scalar forms compute out = a (op) s with s rounded to float32; rsub is
 * s - a. A program is built per (op, shapes, dtypes, memory, scalar value):
 * a new scalar value costs a program build but no kernel compile.
 *
 * Errors (lmnn_tensor.h): LM_ERR_INVALID_HANDLE for a zero, freed or foreign
 * tensor or one whose device closed; LM_ERR_INVALID_ARGUMENT for an unknown
 * op, a NULL out, row-major or integer inputs, inputs on different devices,
 * shapes that do not broadcast ("lmnn_add: b: shape [3, 5] does not broadcast
 * with a's shape [3, 4]"), a non-float output dtype or a bad activation.
 * A failed op creates nothing.
 */
#ifndef LIGHTMETAL_LMNN_BINARY_H
#define LIGHTMETAL_LMNN_BINARY_H

#include "lightmetal/lmnn_tensor.h"
#include "lightmetal/lmnn_unary.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lmnn_binary_op {
    LMNN_BINARY_INVALID = 0,
    LMNN_BINARY_ADD,     /* a + b */
    LMNN_BINARY_SUB,     /* a - b */
    LMNN_BINARY_MUL,     /* a * b */
    LMNN_BINARY_DIV,     /* a / b */
    LMNN_BINARY_RSUB,    /* b - a */
    LMNN_BINARY_MAXIMUM, /* max(a, b) */
    LMNN_BINARY_MINIMUM, /* min(a, b) */
    /* Comparisons and logical ops give 1.0 or 0.0 (logical ops read nonzero
     * as true, NaN included); pow is a^b as torch.pow (0^0 = 1, a negative
     * base with an integer exponent keeps its sign rule, with any other
     * exponent gives NaN; 0 to a negative power is +Inf). */
    LMNN_BINARY_EQ,
    LMNN_BINARY_NE,
    LMNN_BINARY_LT,
    LMNN_BINARY_LE,
    LMNN_BINARY_GT,
    LMNN_BINARY_GE,
    LMNN_BINARY_LOGICAL_AND,
    LMNN_BINARY_LOGICAL_OR,
    LMNN_BINARY_LOGICAL_XOR,
    LMNN_BINARY_POW,
    LMNN_BINARY_OP_COUNT_
} lmnn_binary_op;

typedef struct lmnn_binary_options {
    lmnn_output output; /* dtype: float dtypes only */
    /* An activation applied to each result (ttnn's fused activations):
     * LMNN_UNARY_INVALID (0) for none. Its parameters as lmnn_unary_options'
     * alpha and beta; NaN (what lmnn_binary_options_init sets) means the
     * unary op's defaults. */
    lmnn_unary_op activation;
    double activation_alpha, activation_beta;
} lmnn_binary_options;

void lmnn_binary_options_init(lmnn_binary_options *opts);

/* Short name of an op, as ttnn's ("add", "maximum", "logical_and", ...);
 * "invalid" when unknown. */
const char *lmnn_binary_op_name(lmnn_binary_op op);

/* out = a (op) b with broadcasting. NULL opts: the defaults. */
lm_status lmnn_binary(lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b,
                      const lmnn_binary_options *opts, lmnn_tensor *out);

/* out = a (op) s (for RSUB: s - a). NULL opts: the defaults. */
lm_status lmnn_binary_scalar(lmnn_binary_op op, lmnn_tensor a, double s,
                             const lmnn_binary_options *opts, lmnn_tensor *out);

/* The ops by name, with default options. */
lm_status lmnn_add(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_sub(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_mul(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_div(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_rsub(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_maximum(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_minimum(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_eq(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_ne(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_lt(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_le(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_gt(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_ge(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_logical_and(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_logical_or(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_logical_xor(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);
lm_status lmnn_pow(lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);

/* Scalar forms. */
lm_status lmnn_add_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_sub_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_mul_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_div_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_rsub_scalar(lmnn_tensor a, double s, lmnn_tensor *out); /* s - a */
lm_status lmnn_maximum_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_minimum_scalar(lmnn_tensor a, double s, lmnn_tensor *out);
lm_status lmnn_pow_scalar(lmnn_tensor a, double exponent, lmnn_tensor *out); /* a^exponent */

/* out = cond != 0 ? a : b element-wise (torch.where; a NaN condition is
 * true), the three broadcasting together as NumPy does; cond, a and b are
 * float tile tensors, the output has a's dtype and memory config. The chosen
 * value is copied exactly (in float32; then rounded to the output dtype). */
lm_status lmnn_where(lmnn_tensor cond, lmnn_tensor a, lmnn_tensor b, lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
