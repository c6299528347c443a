/* Linear quantization: QuantizeLinear, DequantizeLinear and
 * DynamicQuantizeLinear, and the rounding step every quantizing op shares
 * (fe_quantize_tail, also QLinearMatMul's and QLinearConv's).
 *
 * 8-bit integers are exact in float32, so each op is float math on the
 * device: divide or multiply by the scale (one value, or one per slice
 * along `axis`), round half to even, add the zero point, saturate. */
#include <string.h>

#include "frontend/fe_ops.h"

lm_status fe_quantize_tail(lmnn_tensor x, lmnn_tensor zp, bool u8, lmnn_tensor *out) {
    lmnn_tensor r = {0}, s = {0};
    lm_status st = lmnn_round(x, 0, &r);
    fe_free(x);
    if (!st && zp.id) st = lmnn_binary(LMNN_BINARY_ADD, r, zp, NULL, &s);
    if (!st) st = lmnn_clamp(s.id ? s : r, u8 ? 0 : -128, u8 ? 255 : 127, out);
    fe_free(r);
    fe_free(s);
    return st;
}

static const fe_elem float_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED};
static const fe_elem int8_types[] = {FE_UINT8, FE_INT8, FE_UNDEFINED};

/* The scale and zero point (inputs 1 and 2) fit x (input 0): one value
 * each, or 1-D along `axis` (opset 13). */
static lm_status check_qparams(fe_ctx *c, const fe_node *n, int32_t *axis) {
    const fe_type *x = fe_in_type(c, n, 0), *s = fe_in_type(c, n, 1);
    int64_t a;
    lm_status st = fe_attr_int(c, n, "axis", 1, &a);
    if (st) return st;
    *axis = -1;
    if (s->rank > 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "the scale must be a scalar or 1-D");
    if (s->rank == 1 && s->dims[0] > 1) {
        if ((st = fe_axis(c, n, a, x->rank, axis))) return st;
        if (s->dims[0] != x->dims[*axis])
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "the scale has %lld values for dim %d of %lld", (long long)s->dims[0],
                           *axis, (long long)x->dims[*axis]);
    }
    if (fe_has_in(n, 2)) {
        const fe_type *z = fe_in_type(c, n, 2);
        if (fe_type_volume(z) != fe_type_volume(s))
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "the zero point has %lld values, the scale %lld",
                           (long long)fe_type_volume(z), (long long)fe_type_volume(s));
    }
    return LM_OK;
}

/* Input i (a scale or zero point) as a float tensor that broadcasts along
 * `axis` of a rank-`rank` tensor (axis < 0: a scalar). Owned. */
static lm_status qparam(fe_ctx *c, const fe_node *n, uint32_t i, int32_t axis, int32_t rank,
                        lmnn_tensor *out) {
    int64_t dims[FE_MAX_RANK], len = fe_type_volume(fe_in_type(c, n, i));
    int32_t r = axis < 0 ? 1 : rank;
    for (int32_t d = 0; d < r; d++)
        dims[d] = d == axis ? len : 1;
    return fe_in_float_as(c, n, i, r, dims, out);
}

/* The scale and the zero point (zp.id 0 when not given), then x, all as
 * float tensors the caller frees; errors name the node. */
static lm_status qinputs(fe_ctx *c, const fe_node *n, int32_t axis, lmnn_tensor *x, bool *x_owned,
                         lmnn_tensor *sc, lmnn_tensor *zp) {
    int32_t rank = fe_in_type(c, n, 0)->rank;
    *sc = *zp = (lmnn_tensor){0};
    lm_status st = qparam(c, n, 1, axis, rank, sc);
    if (!st && fe_has_in(n, 2)) st = qparam(c, n, 2, axis, rank, zp);
    if (!st) st = fe_in_dev_float(c, n, 0, x, x_owned);
    if (st) {
        fe_free(*sc);
        fe_free(*zp);
    }
    return st;
}

/* ---- QuantizeLinear ---- */

static lm_status infer_quantize(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", "saturate", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (!st) st = fe_check_elem(c, n, 1, float_types);
    if (!st && fe_has_in(n, 2)) st = fe_check_elem(c, n, 2, int8_types);
    int32_t axis;
    if (!st) st = check_qparams(c, n, &axis);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    fe_elem e = fe_has_in(n, 2) ? fe_in_type(c, n, 2)->elem : FE_UINT8;
    return fe_set_out_type(c, n, 0, e, x->rank, x->dims);
}

static lm_status lower_quantize(fe_ctx *c, const fe_node *n) {
    int32_t axis;
    lm_status st = check_qparams(c, n, &axis);
    if (st) return st;
    bool u8 = !fe_has_in(n, 2) || fe_in_type(c, n, 2)->elem == FE_UINT8;
    lmnn_tensor xf, sc, zp, q, y;
    bool xo = false;
    if ((st = qinputs(c, n, axis, &xf, &xo, &sc, &zp))) return st;
    if (!(st = lmnn_binary(LMNN_BINARY_DIV, xf, sc, NULL, &q)))
        st = fe_quantize_tail(q, zp, u8, &y);
    if (xo) fe_free(xf);
    fe_free(sc);
    fe_free(zp);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, y);
}

/* ---- DequantizeLinear ---- */

static lm_status infer_dequantize(fe_ctx *c, const fe_node *n) {
    static const fe_elem ints[] = {FE_UINT8, FE_INT8, FE_INT32, FE_UNDEFINED};
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", NULL});
    if (!st) st = fe_check_elem(c, n, 0, ints);
    if (!st) st = fe_check_elem(c, n, 1, float_types);
    if (!st && fe_has_in(n, 2) && fe_in_type(c, n, 2)->elem != fe_in_type(c, n, 0)->elem)
        st = fe_fail(c, n, LM_ERR_INVALID_FILE, "the zero point must have x's element type");
    int32_t axis;
    if (!st) st = check_qparams(c, n, &axis);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 1)->elem, x->rank, x->dims);
}

static lm_status lower_dequantize(fe_ctx *c, const fe_node *n) {
    int32_t axis;
    lm_status st = check_qparams(c, n, &axis);
    if (st) return st;
    lmnn_tensor xf, sc, zp, d = {0}, y;
    bool xo = false;
    if ((st = qinputs(c, n, axis, &xf, &xo, &sc, &zp))) return st;
    if (!(zp.id && (st = lmnn_binary(LMNN_BINARY_SUB, xf, zp, NULL, &d))))
        st = lmnn_binary(LMNN_BINARY_MUL, d.id ? d : xf, sc, NULL, &y);
    if (xo) fe_free(xf);
    fe_free(sc);
    fe_free(zp);
    fe_free(d);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, y);
}

/* ---- DynamicQuantizeLinear ---- */

static lm_status infer_dynamic_quantize(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (st) return st;
    if (n->output_count != 3)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%u outputs (3 expected)", n->output_count);
    const fe_type *x = fe_in_type(c, n, 0);
    if (!(st = fe_set_out_type(c, n, 0, FE_UINT8, x->rank, x->dims)) &&
        !(st = fe_set_out_type(c, n, 1, FE_FLOAT, 0, NULL)))
        st = fe_set_out_type(c, n, 2, FE_UINT8, 0, NULL);
    return st;
}

/* y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point =
 * saturate(round(-min(0, min x) / y_scale)), y = saturate(round(x /
 * y_scale) + y_zero_point). */
static lm_status lower_dynamic_quantize(fe_ctx *c, const fe_node *n) {
    lmnn_tensor x, hi = {0}, lo = {0}, hi0 = {0}, lo0 = {0}, range = {0}, scale = {0};
    lmnn_tensor nlo = {0}, zq = {0}, zp = {0}, q = {0}, y = {0};
    bool xo = false;
    lm_status st = fe_in_dev_float(c, n, 0, &x, &xo);
    if (st) return st;
    if (!(st = lmnn_max(x, NULL, &hi)) && !(st = lmnn_min(x, NULL, &lo)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_MAXIMUM, hi, 0.0, NULL, &hi0)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_MINIMUM, lo, 0.0, NULL, &lo0)) &&
        !(st = lmnn_binary(LMNN_BINARY_SUB, hi0, lo0, NULL, &range)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_DIV, range, 255.0, NULL, &scale)) &&
        !(st = lmnn_binary(LMNN_BINARY_DIV, lo0, scale, NULL, &nlo)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_RSUB, nlo, 0.0, NULL, &zq)) &&
        !(st = fe_quantize_tail(zq, (lmnn_tensor){0}, true, &zp))) {
        zq = (lmnn_tensor){0};
        if (!(st = lmnn_binary(LMNN_BINARY_DIV, x, scale, NULL, &q))) {
            st = fe_quantize_tail(q, zp, true, &y);
            q = (lmnn_tensor){0};
        }
    }
    if (xo) fe_free(x);
    lmnn_tensor junk[] = {hi, lo, hi0, lo0, range, nlo, zq, q};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        fe_free(junk[i]);
    if (st) {
        fe_free(scale);
        fe_free(zp);
        fe_free(y);
        return fe_nn_fail(c, n, st);
    }
    if ((st = fe_out_from_float(c, n, 0, y))) {
        fe_free(scale);
        fe_free(zp);
        return st;
    }
    if ((st = fe_out_from_float(c, n, 1, scale))) {
        fe_free(zp);
        return st;
    }
    return fe_out_from_float(c, n, 2, zp);
}

const fe_op_def fe_ops_quant[] = {
    {"QuantizeLinear", infer_quantize, lower_quantize, 0, NULL},
    {"DequantizeLinear", infer_dequantize, lower_dequantize, 0, NULL},
    {"DynamicQuantizeLinear", infer_dynamic_quantize, lower_dynamic_quantize, 0, NULL},
};
const size_t fe_ops_quant_count = sizeof fe_ops_quant / sizeof fe_ops_quant[0];
