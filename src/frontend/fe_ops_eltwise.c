/* Element-wise ops: unary math and activations, binary math with NumPy
 * broadcasting, comparisons, logic, Where, Cast.
 *
 * On the device every one is an op library call on float tensors:
 * integer and bool inputs are converted to float32 first and the result back
 * to the output's device dtype (exact for integers below 2^24). On the host
 * (constant folding) they compute in double, or int64 for integers, so shape
 * arithmetic is exact.
 */
#include <math.h>
#include <string.h>

#include "frontend/fe_ops.h"

/* ---- host evaluation (constant folding) ---- */

typedef enum bin_kind {
    B_ADD,
    B_SUB,
    B_MUL,
    B_DIV,
    B_POW,
    B_MAX,
    B_MIN,
    B_MOD,  /* Mod with fmod=0: the sign of the divisor (integers) */
    B_FMOD, /* Mod with fmod=1: the sign of the dividend, as C's fmod */
    B_EQ,
    B_LT,
    B_LE,
    B_GT,
    B_GE,
    B_AND,
    B_OR,
    B_XOR,
} bin_kind;

static bool bin_is_compare(bin_kind k) {
    return k >= B_EQ;
}

static double eval_f(bin_kind k, double a, double b) {
    switch (k) {
    case B_ADD:
        return a + b;
    case B_SUB:
        return a - b;
    case B_MUL:
        return a * b;
    case B_DIV:
        return a / b;
    case B_POW:
        return pow(a, b);
    case B_MAX:
        return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
    case B_MIN:
        return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
    case B_MOD:
        return a - floor(a / b) * b;
    case B_FMOD:
        return fmod(a, b);
    case B_EQ:
        return a == b;
    case B_LT:
        return a < b;
    case B_LE:
        return a <= b;
    case B_GT:
        return a > b;
    case B_GE:
        return a >= b;
    case B_AND:
        return a != 0 && b != 0;
    case B_OR:
        return a != 0 || b != 0;
    case B_XOR:
        return (a != 0) != (b != 0);
    }
    return 0;
}

static bool eval_i(bin_kind k, int64_t a, int64_t b, int64_t *out) {
    switch (k) {
    case B_ADD:
        *out = (int64_t)((uint64_t)a + (uint64_t)b);
        return true;
    case B_SUB:
        *out = (int64_t)((uint64_t)a - (uint64_t)b);
        return true;
    case B_MUL:
        *out = (int64_t)((uint64_t)a * (uint64_t)b);
        return true;
    case B_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        *out = a / b;
        return true;
    case B_POW: {
        if (b < 0) return false;
        int64_t r = 1;
        for (int64_t i = 0; i < b && i < 64; i++)
            r = (int64_t)((uint64_t)r * (uint64_t)a);
        *out = r;
        return true;
    }
    case B_MAX:
        *out = a > b ? a : b;
        return true;
    case B_MIN:
        *out = a < b ? a : b;
        return true;
    case B_MOD:
    case B_FMOD:
        if (b == 0) return false;
        *out = b == -1 ? 0 : a % b;
        if (k == B_MOD && *out != 0 && (*out < 0) != (b < 0)) *out += b;
        return true;
    default:
        *out = (int64_t)eval_f(k, (double)a, (double)b);
        return true;
    }
}

/* Output 0 as the constant `in[0] op in[1] op ...` (left to right, each
 * broadcast to `out_type`); with `mean`, that sum divided by `count`. */
static lm_status fold_nary(fe_ctx *c, const fe_node *n, bin_kind k, const fe_tensor *const *in,
                           uint32_t count, bool mean, const fe_type *out_type) {
    fe_tensor *t;
    lm_status st = fe_const_new(c, out_type->elem, (uint32_t)out_type->rank, out_type->dims, &t);
    if (st) return fe_nn_fail(c, n, st);
    bool ints = true;
    for (uint32_t j = 0; j < count; j++)
        ints &= !fe_elem_is_float(in[j]->elem);
    for (uint64_t i = 0; i < t->count; i++) {
        if (ints) {
            int64_t r = fe_tensor_get_i64(in[0], fe_bcast_index(out_type, in[0], i));
            for (uint32_t j = 1; j < count; j++)
                if (!eval_i(k, r, fe_tensor_get_i64(in[j], fe_bcast_index(out_type, in[j], i)), &r))
                    return fe_fail(c, n, LM_ERR_INVALID_FILE,
                                   "integer division by zero (or overflow) in a constant");
            fe_tensor_set_i64(t, i, r);
        } else {
            double r = fe_tensor_get_f64(in[0], fe_bcast_index(out_type, in[0], i));
            for (uint32_t j = 1; j < count; j++)
                r = eval_f(k, r, fe_tensor_get_f64(in[j], fe_bcast_index(out_type, in[j], i)));
            fe_tensor_set_f64(t, i, mean ? r / count : r);
        }
    }
    return fe_set_out_const(c, n, 0, t);
}

static lm_status fold_binary(fe_ctx *c, const fe_node *n, bin_kind k, const fe_tensor *a,
                             const fe_tensor *b, const fe_type *out_type) {
    return fold_nary(c, n, k, (const fe_tensor *const[]){a, b}, 2, false, out_type);
}

/* ---- binary ops ---- */

typedef struct bin_desc {
    const char *name;
    bin_kind kind;
    lmnn_binary_op op;
} bin_desc;

static const bin_desc bin_ops[] = {
    {"Add", B_ADD, LMNN_BINARY_ADD},         {"Sub", B_SUB, LMNN_BINARY_SUB},
    {"Mul", B_MUL, LMNN_BINARY_MUL},         {"Div", B_DIV, LMNN_BINARY_DIV},
    {"Pow", B_POW, LMNN_BINARY_POW},         {"Max", B_MAX, LMNN_BINARY_MAXIMUM},
    {"Min", B_MIN, LMNN_BINARY_MINIMUM},     {"Sum", B_ADD, LMNN_BINARY_ADD},
    {"Mean", B_ADD, LMNN_BINARY_ADD},        {"Equal", B_EQ, LMNN_BINARY_EQ},
    {"Less", B_LT, LMNN_BINARY_LT},          {"LessOrEqual", B_LE, LMNN_BINARY_LE},
    {"Greater", B_GT, LMNN_BINARY_GT},       {"GreaterOrEqual", B_GE, LMNN_BINARY_GE},
    {"And", B_AND, LMNN_BINARY_LOGICAL_AND}, {"Or", B_OR, LMNN_BINARY_LOGICAL_OR},
    {"Xor", B_XOR, LMNN_BINARY_LOGICAL_XOR},
};

static const bin_desc *bin_find(const char *name) {
    for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++)
        if (strcmp(bin_ops[i].name, name) == 0) return &bin_ops[i];
    return NULL;
}

static bool variadic(const char *name) {
    return !strcmp(name, "Max") || !strcmp(name, "Min") || !strcmp(name, "Sum") ||
           !strcmp(name, "Mean");
}

/* Operand i's type as it broadcasts. Before opset 7, B broadcast only with
 * attribute broadcast=1, its dims lined up with A's from `axis` (default:
 * A's last dims); that is NumPy broadcasting of B padded with trailing 1s. */
static lm_status operand_type(fe_ctx *c, const fe_node *n, uint32_t i, fe_type *out) {
    *out = *fe_in_type(c, n, i);
    if (i != 1 || n->opset >= 7) return LM_OK;
    int64_t bcast, axis;
    lm_status st = fe_attr_int(c, n, "broadcast", 0, &bcast);
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, 0);
    if (!bcast) {
        bool same = a->rank == out->rank;
        for (int32_t d = 0; same && d < a->rank; d++)
            same = a->dims[d] == out->dims[d];
        if (!same)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "without broadcast=1 (opset %lld) B must have A's shape",
                           (long long)n->opset);
        return LM_OK;
    }
    if (axis == INT64_MIN) return LM_OK; /* lined up at the end: NumPy's rule */
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis > a->rank - out->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %lld does not fit B's rank %d in A's %d",
                       (long long)axis, out->rank, a->rank);
    for (int32_t d = out->rank; d < a->rank - (int32_t)axis; d++)
        out->dims[d] = 1;
    out->rank = a->rank - (int32_t)axis;
    return LM_OK;
}

/* Whether known operand `t` is all `value`: And with all false (Or with all
 * true) gives that whatever the other operand holds (a loop's bound folds
 * so while its other condition is computed at run time). */
static bool absorbs(const fe_tensor *t, bool value) {
    if (!t || !t->data) return false;
    for (uint64_t e = 0; e < t->count; e++)
        if (((const uint8_t *)t->data)[e] != value) return false;
    return true;
}

/* Output 0 as a constant of `out`'s shape, all `value`. */
static lm_status fold_all(fe_ctx *c, const fe_node *n, const fe_type *out, bool value) {
    fe_tensor *r;
    lm_status st = fe_const_new(c, FE_BOOL, (uint32_t)out->rank, out->dims, &r);
    if (st) return fe_nn_fail(c, n, st);
    memset((void *)r->data, value, (size_t)r->count);
    return fe_set_out_const(c, n, 0, r);
}

static lm_status infer_binary(fe_ctx *c, const fe_node *n) {
    const bin_desc *d = bin_find(n->op_type);
    bool var = variadic(n->op_type);
    lm_status st = fe_check_inputs(c, n, var ? 1 : 2, var ? 64 : 2);
    if (!st && n->opset < 7 && !var)
        st = fe_check_attrs(c, n, (const char *const[]){"broadcast", "axis", NULL});
    else if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    uint32_t k = fe_in_count(n);
    fe_type out = *fe_in_type(c, n, 0);
    for (uint32_t i = 0; i < k; i++) {
        fe_type ti;
        if ((st = operand_type(c, n, i, &ti))) return st;
        const fe_type *t = &ti;
        bool logic = d->kind >= B_AND;
        if (logic ? t->elem != FE_BOOL : !fe_elem_is_numeric(t->elem))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s'): element type %s is not supported (expected %s)", i,
                           fe_in(c, n, i)->name, fe_elem_name(t->elem),
                           logic ? "bool" : "a number type");
        if (d->kind != B_POW && t->elem != out.elem)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "input %u ('%s') is %s but input 0 is %s: the types must match", i,
                           fe_in(c, n, i)->name, fe_elem_name(t->elem), fe_elem_name(out.elem));
        if (i && (st = fe_broadcast(c, n, &out, t, &out))) return st;
    }
    out.elem = bin_is_compare(d->kind) ? FE_BOOL : fe_in_type(c, n, 0)->elem;
    if (k == 2 && fe_in_const(c, n, 0) && fe_in_const(c, n, 1) && !var) {
        fe_type tb;
        if ((st = operand_type(c, n, 1, &tb))) return st;
        fe_tensor b = *fe_in_const(c, n, 1);
        b.rank = (uint32_t)tb.rank;
        memcpy(b.dims, tb.dims, sizeof b.dims);
        return fold_binary(c, n, d->kind, fe_in_const(c, n, 0), &b, &out);
    }
    /* Max, Min, Sum and Mean of known inputs (a resize's scale: the least of
     * two ratios of a fixed image size). */
    bool mean = !strcmp(n->op_type, "Mean"), known = var;
    const fe_tensor *in[64];
    for (uint32_t i = 0; known && i < k; i++)
        known = (in[i] = fe_in_const(c, n, i)) != NULL;
    if (known && k == 1 && !mean) return fe_set_out_const(c, n, 0, in[0]);
    if (known && (!mean || fe_elem_is_float(out.elem)))
        return fold_nary(c, n, d->kind, in, k, mean, &out);
    if ((d->kind == B_AND || d->kind == B_OR) && fe_type_is_known(&out))
        for (uint32_t i = 0; i < 2; i++)
            if (absorbs(fe_in_const(c, n, i), d->kind == B_OR))
                return fold_all(c, n, &out, d->kind == B_OR);
    return fe_set_out_type(c, n, 0, out.elem, out.rank, out.dims);
}

/* The arithmetic ops on images (FE_IMAGE_ALL): two inputs or more, float
 * ones, no legacy broadcast. A Pow or Mul heading an RMS normalization
 * spelled out (fe_fusion.rms_norm) works along the last dim: it reads
 * channels-last rows held flat (FE_LAST_ALL). */
static uint32_t binary_images(fe_ctx *c, const fe_node *n) {
    if (c->plans[n - c->g->nodes].fusion.rms_norm) return FE_LAST_ALL;
    const bin_desc *d = bin_find(n->op_type);
    bool arith = d->kind == B_ADD || d->kind == B_SUB || d->kind == B_MUL || d->kind == B_DIV ||
                 d->kind == B_MAX || d->kind == B_MIN;
    return arith && fe_in_count(n) >= 2 && n->attr_count == 0 ? fe_ew_images(c, n) : 0;
}

static lm_status lower_binary(fe_ctx *c, const fe_node *n) {
    const bin_desc *d = bin_find(n->op_type);
    const fe_fusion *f = &c->plans[n - c->g->nodes].fusion;
    if (f->rms_norm) return fe_lower_spelled_norm(c, n, f);
    uint32_t k = fe_in_count(n);
    lmnn_tensor acc;
    bool acc_owned;
    lm_status st = fe_in_ew(c, n, 0, &acc, &acc_owned);
    if (st) return st;
    if (k == 1) {
        /* Sum/Max/Min/Mean of one input is that input (Mean's divisor is 1). */
        if (acc_owned) return fe_out_from_float(c, n, 0, acc);
        return fe_out_alias(c, n, 0, 0);
    }
    for (uint32_t i = 1; i < k; i++) {
        lmnn_tensor b, r;
        bool b_owned;
        fe_type tb;
        if ((st = operand_type(c, n, i, &tb)) || (st = fe_in_ew(c, n, i, &b, &b_owned))) break;
        if (tb.rank != fe_in_type(c, n, i)->rank) {
            /* The legacy broadcast's trailing 1s. */
            lmnn_shape s = fe_shape(tb.rank, tb.dims);
            lmnn_tensor shaped;
            st = lmnn_reshape(b, &s, NULL, &shaped);
            if (b_owned) fe_free(b);
            if (st) break;
            b = shaped;
            b_owned = true;
        }
        /* A fused activation (fe_fuse) with the last one. */
        lmnn_binary_options o;
        lmnn_binary_options_init(&o);
        if (i == k - 1) {
            o.activation = f->activation;
            o.activation_alpha = f->act_alpha;
            o.activation_beta = f->act_beta;
        }
        st = lmnn_binary(d->op, acc, b, &o, &r);
        if (b_owned) fe_free(b);
        if (acc_owned) fe_free(acc);
        acc_owned = true;
        if (st) return fe_nn_fail(c, n, st);
        acc = r;
    }
    if (st) {
        if (acc_owned) fe_free(acc);
        return fe_nn_fail(c, n, st);
    }
    if (!strcmp(n->op_type, "Mean")) {
        lmnn_tensor r;
        st = lmnn_binary_scalar(LMNN_BINARY_DIV, acc, (double)k, NULL, &r);
        fe_free(acc);
        if (st) return fe_nn_fail(c, n, st);
        acc = r;
    }
    return fe_out_ew(c, n, acc);
}

/* ---- unary ops ---- */

enum { U_FLOAT, U_NUMERIC, U_BOOL };

typedef struct un_desc {
    const char *name;
    lmnn_unary_op op;
    uint8_t domain; /* element types taken: float, any number, bool */
    const char *alpha_attr;
    float alpha_def;
    double (*host)(double);
} un_desc;

static double h_neg(double x) {
    return -x;
}
static double h_abs(double x) {
    return fabs(x);
}
static double h_not(double x) {
    return x == 0;
}
static double h_relu(double x) {
    return x > 0 ? x : 0 * x;
}
static double h_sign(double x) {
    return x > 0 ? 1 : x < 0 ? -1 : x;
}
static double h_recip(double x) {
    return 1 / x;
}
double fe_gelu_value(lmnn_unary_op form, double x) {
    if (form == LMNN_GELU_TANH)
        return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x * 0.7071067811865476));
}
static double h_gelu(double x) {
    return fe_gelu_value(LMNN_GELU, x);
}
static double h_gelu_tanh(double x) {
    return fe_gelu_value(LMNN_GELU_TANH, x);
}

static const un_desc un_ops[] = {
    {"Abs", LMNN_ABS, U_NUMERIC, NULL, 0, h_abs},
    {"Neg", LMNN_NEG, U_NUMERIC, NULL, 0, h_neg},
    {"Sign", LMNN_SIGN, U_NUMERIC, NULL, 0, h_sign},
    {"Relu", LMNN_RELU, U_NUMERIC, NULL, 0, h_relu},
    {"Not", LMNN_LOGICAL_NOT, U_BOOL, NULL, 0, h_not},
    {"Exp", LMNN_EXP, U_FLOAT, NULL, 0, exp},
    {"Log", LMNN_LOG, U_FLOAT, NULL, 0, log},
    {"Sqrt", LMNN_SQRT, U_FLOAT, NULL, 0, sqrt},
    {"Reciprocal", LMNN_RECIPROCAL, U_FLOAT, NULL, 0, h_recip},
    {"Floor", LMNN_FLOOR, U_FLOAT, NULL, 0, floor},
    {"Ceil", LMNN_CEIL, U_FLOAT, NULL, 0, ceil},
    {"Round", LMNN_ROUND, U_FLOAT, NULL, 0, nearbyint},
    {"Sigmoid", LMNN_SIGMOID, U_FLOAT, NULL, 0, NULL},
    {"Tanh", LMNN_TANH, U_FLOAT, NULL, 0, tanh},
    {"Erf", LMNN_ERF, U_FLOAT, NULL, 0, erf},
    {"Sin", LMNN_SIN, U_FLOAT, NULL, 0, sin},
    {"Cos", LMNN_COS, U_FLOAT, NULL, 0, cos},
    {"Tan", LMNN_TAN, U_FLOAT, NULL, 0, tan},
    {"Asin", LMNN_ASIN, U_FLOAT, NULL, 0, asin},
    {"Acos", LMNN_ACOS, U_FLOAT, NULL, 0, acos},
    {"Atan", LMNN_ATAN, U_FLOAT, NULL, 0, atan},
    {"Sinh", LMNN_SINH, U_FLOAT, NULL, 0, sinh},
    {"Cosh", LMNN_COSH, U_FLOAT, NULL, 0, cosh},
    {"Asinh", LMNN_ASINH, U_FLOAT, NULL, 0, asinh},
    {"Acosh", LMNN_ACOSH, U_FLOAT, NULL, 0, acosh},
    {"Atanh", LMNN_ATANH, U_FLOAT, NULL, 0, atanh},
    {"Softplus", LMNN_SOFTPLUS, U_FLOAT, NULL, 0, NULL},
    {"Softsign", LMNN_SOFTSIGN, U_FLOAT, NULL, 0, NULL},
    {"HardSwish", LMNN_HARDSWISH, U_FLOAT, NULL, 0, NULL},
    {"Mish", LMNN_MISH, U_FLOAT, NULL, 0, NULL},
    {"IsNaN", LMNN_ISNAN, U_FLOAT, NULL, 0, NULL},
    {"LeakyRelu", LMNN_LEAKY_RELU, U_FLOAT, "alpha", 0.01f, NULL},
    {"Elu", LMNN_ELU, U_FLOAT, "alpha", 1.0f, NULL},
    {"Celu", LMNN_CELU, U_FLOAT, "alpha", 1.0f, NULL},
    /* The form (attribute approximate) picks the op: gelu_form. */
    {"Gelu", LMNN_GELU, U_FLOAT, NULL, 0, h_gelu},
};

static const un_desc *un_find(const char *name) {
    for (size_t i = 0; i < sizeof un_ops / sizeof un_ops[0]; i++)
        if (strcmp(un_ops[i].name, name) == 0) return &un_ops[i];
    return NULL;
}

static lm_status check_unary_input(fe_ctx *c, const fe_node *n, int domain) {
    const fe_type *t = fe_in_type(c, n, 0);
    bool ok = domain == U_BOOL      ? t->elem == FE_BOOL
              : domain == U_NUMERIC ? fe_elem_is_numeric(t->elem)
                                    : fe_elem_is_float(t->elem);
    if (!ok)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input 0 ('%s'): element type %s is not supported",
                       fe_in(c, n, 0)->name, fe_elem_name(t->elem));
    return LM_OK;
}

/* Output 0 of the same type as input 0 (optionally of element type `elem`),
 * folded with `host` when the input is known. */
static lm_status infer_same(fe_ctx *c, const fe_node *n, fe_elem elem, double (*host)(double)) {
    const fe_type *t = fe_in_type(c, n, 0);
    if (elem == FE_UNDEFINED) elem = t->elem;
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k && host) {
        fe_tensor *o;
        lm_status st = fe_const_new(c, elem, k->rank, k->dims, &o);
        if (st) return fe_nn_fail(c, n, st);
        bool ints = fe_elem_is_int(elem) || elem == FE_BOOL;
        for (uint64_t i = 0; i < o->count; i++) {
            if (ints && host != h_not)
                fe_tensor_set_i64(o, i, (int64_t)host((double)fe_tensor_get_i64(k, i)));
            else
                fe_tensor_set_f64(o, i, host(fe_tensor_get_f64(k, i)));
        }
        return fe_set_out_const(c, n, 0, o);
    }
    return fe_set_out_type(c, n, 0, elem, t->rank, t->dims);
}

lm_status fe_gelu_form(fe_ctx *c, const fe_node *n, lmnn_unary_op *out) {
    static const char *const forms[] = {"none", "tanh", NULL};
    int form;
    lm_status st = fe_attr_choice(c, n, "approximate", "none", forms, &form);
    if (!st) *out = form ? LMNN_GELU_TANH : LMNN_GELU;
    return st;
}

static lm_status infer_unary(fe_ctx *c, const fe_node *n) {
    const un_desc *d = un_find(n->op_type);
    bool gelu = d->op == LMNN_GELU;
    const char *known[] = {gelu ? "approximate" : d->alpha_attr, NULL};
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, known);
    if (!st) st = check_unary_input(c, n, d->domain);
    lmnn_unary_op op = d->op;
    if (!st && gelu) st = fe_gelu_form(c, n, &op);
    if (st) return st;
    return infer_same(c, n, FE_UNDEFINED, op == LMNN_GELU_TANH ? h_gelu_tanh : d->host);
}

static lm_status lower_unary(fe_ctx *c, const fe_node *n) {
    const un_desc *d = un_find(n->op_type);
    lmnn_unary_op op = d->op;
    if (op == LMNN_GELU) {
        lm_status st = fe_gelu_form(c, n, &op);
        if (st) return st;
    }
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, op);
    if (d->alpha_attr) {
        float a;
        lm_status st = fe_attr_float(c, n, d->alpha_attr, d->alpha_def, &a);
        if (st) return st;
        o.alpha = a;
    }
    if (d->op == LMNN_SOFTPLUS) o.beta = INFINITY; /* ONNX's softplus has no threshold */
    lmnn_tensor a, r;
    bool owned;
    lm_status st = fe_in_ew(c, n, 0, &a, &owned);
    if (st) return st;
    st = lmnn_unary(op, a, &o, &r);
    if (owned) fe_free(a);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_ew(c, n, r);
}

/* The unary ops that give floats run on images (FE_IMAGE_ALL). */
static uint32_t unary_images(fe_ctx *c, const fe_node *n) {
    return un_find(n->op_type)->domain != U_BOOL ? fe_ew_images(c, n) : 0;
}

/* ---- activations made of several library ops ---- */

/* out = op(a, s) on a float tensor, consuming `a` when `owned`. */
static lm_status scalar_step(fe_ctx *c, const fe_node *n, lmnn_binary_op op, lmnn_tensor *a,
                             bool *owned, double s, lmnn_unary_op act, double act_a, double act_b) {
    lmnn_binary_options o;
    lmnn_binary_options_init(&o);
    o.activation = act;
    if (act != LMNN_UNARY_INVALID) {
        o.activation_alpha = act_a;
        o.activation_beta = act_b;
    }
    lmnn_tensor r;
    lm_status st = lmnn_binary_scalar(op, *a, s, &o, &r);
    if (*owned) fe_free(*a);
    if (st) return fe_nn_fail(c, n, st);
    *a = r;
    *owned = true;
    return LM_OK;
}

static lm_status infer_float_act(fe_ctx *c, const fe_node *n, const char *const *attrs) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, attrs);
    if (!st) st = check_unary_input(c, n, U_FLOAT);
    if (st) return st;
    return infer_same(c, n, FE_UNDEFINED, NULL);
}

static lm_status infer_hardsigmoid(fe_ctx *c, const fe_node *n) {
    return infer_float_act(c, n, (const char *const[]){"alpha", "beta", NULL});
}

/* max(0, min(1, alpha x + beta)) */
static lm_status lower_hardsigmoid(fe_ctx *c, const fe_node *n) {
    float alpha, beta;
    lm_status st = fe_attr_float(c, n, "alpha", 0.2f, &alpha);
    if (!st) st = fe_attr_float(c, n, "beta", 0.5f, &beta);
    lmnn_tensor a;
    bool owned;
    if (!st) st = fe_in_ew(c, n, 0, &a, &owned);
    if (st) return st;
    if ((st = scalar_step(c, n, LMNN_BINARY_MUL, &a, &owned, alpha, LMNN_UNARY_INVALID, 0, 0)) ||
        (st = scalar_step(c, n, LMNN_BINARY_ADD, &a, &owned, beta, LMNN_CLAMP, 0.0, 1.0)))
        return st;
    return fe_out_ew(c, n, a);
}

static lm_status infer_selu(fe_ctx *c, const fe_node *n) {
    return infer_float_act(c, n, (const char *const[]){"alpha", "gamma", NULL});
}

/* gamma * elu(x, alpha) */
static lm_status lower_selu(fe_ctx *c, const fe_node *n) {
    float alpha, gamma;
    lm_status st = fe_attr_float(c, n, "alpha", 1.67326319217681884765625f, &alpha);
    if (!st) st = fe_attr_float(c, n, "gamma", 1.05070102214813232421875f, &gamma);
    lmnn_tensor a, r;
    bool owned;
    if (!st) st = fe_in_dev_float(c, n, 0, &a, &owned);
    if (st) return st;
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, LMNN_ELU);
    o.alpha = alpha;
    st = lmnn_unary(LMNN_ELU, a, &o, &r);
    if (owned) fe_free(a);
    if (st) return fe_nn_fail(c, n, st);
    owned = true;
    if ((st = scalar_step(c, n, LMNN_BINARY_MUL, &r, &owned, gamma, LMNN_UNARY_INVALID, 0, 0)))
        return st;
    return fe_out_from_float(c, n, 0, r);
}

static lm_status infer_thresholded_relu(fe_ctx *c, const fe_node *n) {
    return infer_float_act(c, n, (const char *const[]){"alpha", NULL});
}

/* x > alpha ? x : 0, as x * (x - alpha > 0): the difference of two floats
 * is positive exactly when the first is larger. */
static lm_status lower_thresholded_relu(fe_ctx *c, const fe_node *n) {
    float alpha;
    lm_status st = fe_attr_float(c, n, "alpha", 1.0f, &alpha);
    lmnn_tensor x, m, r;
    bool owned, m_owned = false;
    if (!st) st = fe_in_dev_float(c, n, 0, &x, &owned);
    if (st) return st;
    m = x;
    st = scalar_step(c, n, LMNN_BINARY_SUB, &m, &m_owned, alpha, LMNN_GTZ, NAN, NAN);
    if (!st) {
        st = lmnn_binary(LMNN_BINARY_MUL, x, m, NULL, &r);
        fe_free(m);
        if (st) st = fe_nn_fail(c, n, st);
    }
    if (owned) fe_free(x);
    if (st) return st;
    return fe_out_from_float(c, n, 0, r);
}

static lm_status infer_shrink(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"lambd", "bias", NULL});
    if (!st) st = check_unary_input(c, n, U_NUMERIC);
    if (st) return st;
    return infer_same(c, n, FE_UNDEFINED, NULL);
}

/* x < -lambd ? x + bias : x > lambd ? x - bias : 0 */
static lm_status lower_shrink(fe_ctx *c, const fe_node *n) {
    float lambd, bias;
    lm_status st = fe_attr_float(c, n, "lambd", 0.5f, &lambd);
    if (!st) st = fe_attr_float(c, n, "bias", 0.0f, &bias);
    lmnn_tensor x, lo = {0}, hi = {0}, plus = {0}, minus = {0}, zero = {0}, t = {0}, r = {0};
    bool owned;
    if (!st) st = fe_in_dev_float(c, n, 0, &x, &owned);
    if (st) return st;
    bool f = false;
    lo = x;
    hi = x;
    plus = x;
    minus = x;
    zero = x;
    bool lo_o = false, hi_o = false, p_o = false, m_o = false, z_o = false;
    if (!(st = scalar_step(c, n, LMNN_BINARY_LT, &lo, &lo_o, -lambd, LMNN_UNARY_INVALID, 0, 0)) &&
        !(st = scalar_step(c, n, LMNN_BINARY_GT, &hi, &hi_o, lambd, LMNN_UNARY_INVALID, 0, 0)) &&
        !(st = scalar_step(c, n, LMNN_BINARY_ADD, &plus, &p_o, bias, LMNN_UNARY_INVALID, 0, 0)) &&
        !(st = scalar_step(c, n, LMNN_BINARY_SUB, &minus, &m_o, bias, LMNN_UNARY_INVALID, 0, 0)) &&
        !(st = scalar_step(c, n, LMNN_BINARY_MUL, &zero, &z_o, 0.0, LMNN_UNARY_INVALID, 0, 0))) {
        if ((st = lmnn_where(hi, minus, zero, &t)) || (st = lmnn_where(lo, plus, t, &r)))
            st = fe_nn_fail(c, n, st);
    }
    (void)f;
    if (lo_o) fe_free(lo);
    if (hi_o) fe_free(hi);
    if (p_o) fe_free(plus);
    if (m_o) fe_free(minus);
    if (z_o) fe_free(zero);
    fe_free(t);
    if (owned) fe_free(x);
    if (st) return st;
    return fe_out_from_float(c, n, 0, r);
}

static lm_status infer_isinf(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st =
            fe_check_attrs(c, n, (const char *const[]){"detect_negative", "detect_positive", NULL});
    if (!st) st = check_unary_input(c, n, U_FLOAT);
    if (st) return st;
    return infer_same(c, n, FE_BOOL, NULL);
}

static lm_status lower_isinf(fe_ctx *c, const fe_node *n) {
    int64_t neg, pos;
    lm_status st = fe_attr_int(c, n, "detect_negative", 1, &neg);
    if (!st) st = fe_attr_int(c, n, "detect_positive", 1, &pos);
    if (st) return st;
    lmnn_unary_op op = neg && pos ? LMNN_ISINF : neg ? LMNN_ISNEGINF : LMNN_ISPOSINF;
    lmnn_tensor a, r;
    if ((st = fe_in_dev(c, n, 0, &a))) return st;
    if (!neg && !pos)
        st = lmnn_binary_scalar(LMNN_BINARY_MUL, a, 0.0, NULL, &r);
    else
        st = lmnn_unary(op, a, NULL, &r);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

static lm_status infer_isnan(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = check_unary_input(c, n, U_FLOAT);
    if (st) return st;
    return infer_same(c, n, FE_BOOL, NULL);
}

/* Clip(x, min, max): min and max optional inputs (opset 11+) or attributes. */
static lm_status infer_clip(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"min", "max", NULL});
    if (!st) st = check_unary_input(c, n, U_NUMERIC);
    for (uint32_t i = 1; !st && i < 3; i++) {
        const fe_type *t = fe_in_type(c, n, i);
        if (t && fe_type_volume(t) != 1)
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be a scalar", i);
        else if (t && t->elem != fe_in_type(c, n, 0)->elem)
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be %s like input 0", i,
                         fe_elem_name(fe_in_type(c, n, 0)->elem));
    }
    if (st) return st;
    /* Known input and bounds (a size kept at least 1): folded. */
    const fe_tensor *k = fe_in_const(c, n, 0);
    float amin, amax;
    if ((st = fe_attr_float(c, n, "min", -INFINITY, &amin)) ||
        (st = fe_attr_float(c, n, "max", INFINITY, &amax)))
        return st;
    bool known = k != NULL;
    for (uint32_t i = 1; known && i < 3; i++)
        known = !fe_has_in(n, i) || fe_in_const(c, n, i);
    if (!known) return infer_same(c, n, FE_UNDEFINED, NULL);
    fe_tensor *o;
    if ((st = fe_const_new(c, k->elem, k->rank, k->dims, &o))) return fe_nn_fail(c, n, st);
    const fe_tensor *lo = fe_has_in(n, 1) ? fe_in_const(c, n, 1) : NULL;
    const fe_tensor *hi = fe_has_in(n, 2) ? fe_in_const(c, n, 2) : NULL;
    if (fe_elem_is_int(k->elem)) {
        int64_t l = lo ? fe_tensor_get_i64(lo, 0) : INT64_MIN;
        int64_t h = hi ? fe_tensor_get_i64(hi, 0) : INT64_MAX;
        for (uint64_t i = 0; i < o->count; i++) {
            int64_t v = fe_tensor_get_i64(k, i);
            fe_tensor_set_i64(o, i, v < l ? l : v > h ? h : v);
        }
    } else {
        double l = lo ? fe_tensor_get_f64(lo, 0) : amin, h = hi ? fe_tensor_get_f64(hi, 0) : amax;
        for (uint64_t i = 0; i < o->count; i++) {
            double v = fe_tensor_get_f64(k, i); /* NaN stays NaN */
            fe_tensor_set_f64(o, i, v < l ? l : v > h ? h : v);
        }
    }
    return fe_set_out_const(c, n, 0, o);
}

static lm_status lower_clip(fe_ctx *c, const fe_node *n) {
    float amin, amax;
    lm_status st = fe_attr_float(c, n, "min", -INFINITY, &amin);
    if (!st) st = fe_attr_float(c, n, "max", INFINITY, &amax);
    if (st) return st;
    double lo = amin, hi = amax;
    lmnn_tensor x, bounds[2] = {{0}, {0}};
    bool owned;
    if ((st = fe_in_dev_float(c, n, 0, &x, &owned))) return st;
    for (uint32_t i = 1; i < 3; i++) {
        if (!fe_has_in(n, i)) continue;
        const fe_tensor *k = fe_in_const(c, n, i);
        if (k) {
            if (i == 1)
                lo = fe_tensor_get_f64(k, 0);
            else
                hi = fe_tensor_get_f64(k, 0);
            continue;
        }
        bool bo;
        if ((st = fe_in_dev_float(c, n, i, &bounds[i - 1], &bo))) break;
    }
    lmnn_tensor r = x;
    bool r_owned = owned;
    if (!st && !bounds[0].id && !bounds[1].id) {
        lmnn_unary_options o;
        lmnn_unary_options_init(&o, LMNN_CLAMP);
        o.alpha = lo;
        o.beta = hi;
        lmnn_tensor t;
        st = lmnn_unary(LMNN_CLAMP, x, &o, &t);
        if (st)
            st = fe_nn_fail(c, n, st);
        else {
            if (r_owned) fe_free(r);
            r = t;
            r_owned = true;
        }
    } else if (!st) {
        /* Run-time bounds: max with min, then min with max (NaN bounds propagate). */
        for (uint32_t i = 0; i < 2 && !st; i++) {
            lmnn_tensor t;
            if (bounds[i].id)
                st = lmnn_binary(i ? LMNN_BINARY_MINIMUM : LMNN_BINARY_MAXIMUM, r, bounds[i], NULL,
                                 &t);
            else if (i ? hi < INFINITY : lo > -INFINITY)
                st = lmnn_binary_scalar(i ? LMNN_BINARY_MINIMUM : LMNN_BINARY_MAXIMUM, r,
                                        i ? hi : lo, NULL, &t);
            else
                continue;
            if (st)
                st = fe_nn_fail(c, n, st);
            else {
                if (r_owned) fe_free(r);
                r = t;
                r_owned = true;
            }
        }
    }
    /* Integer bounds came through float; integer x did too (owned). */
    if (st) {
        if (r_owned) fe_free(r);
        return st;
    }
    if (!r_owned) return fe_out_alias(c, n, 0, 0);
    return fe_out_from_float(c, n, 0, r);
}

/* The slope's type as it broadcasts to x: NumPy's rule, or (the form older
 * exporters write) one slope per channel, a 1-D slope of x's dim 1. */
static void prelu_slope_type(fe_ctx *c, const fe_node *n, fe_type *out) {
    const fe_type *x = fe_in_type(c, n, 0);
    *out = *fe_in_type(c, n, 1);
    if (out->rank == 1 && x->rank > 2 && out->dims[0] == x->dims[1] &&
        out->dims[0] != x->dims[x->rank - 1]) {
        out->rank = x->rank - 1;
        for (int32_t d = 1; d < out->rank; d++)
            out->dims[d] = 1;
    }
}

/* PRelu(x, slope) = max(x, 0) + slope * min(x, 0) */
static lm_status infer_prelu(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = check_unary_input(c, n, U_FLOAT);
    fe_type out, slope;
    prelu_slope_type(c, n, &slope);
    if (!st) st = fe_broadcast(c, n, fe_in_type(c, n, 0), &slope, &out);
    if (st) return st;
    if (out.rank != fe_in_type(c, n, 0)->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "slope must broadcast to x's shape");
    return infer_same(c, n, FE_UNDEFINED, NULL);
}

static lm_status lower_prelu(fe_ctx *c, const fe_node *n) {
    lmnn_tensor x, slope, neg = {0}, scaled = {0}, r = {0}, shaped = {0};
    lm_status st = fe_in_dev(c, n, 0, &x);
    if (!st) st = fe_in_dev(c, n, 1, &slope);
    if (st) return st;
    fe_type ts;
    prelu_slope_type(c, n, &ts);
    if (ts.rank != fe_in_type(c, n, 1)->rank) {
        lmnn_shape s = fe_shape(ts.rank, ts.dims);
        if ((st = lmnn_reshape(slope, &s, NULL, &shaped))) return fe_nn_fail(c, n, st);
        slope = shaped;
    }
    lmnn_binary_options o;
    lmnn_binary_options_init(&o);
    if (!(st = lmnn_binary_scalar(LMNN_BINARY_MINIMUM, x, 0.0, NULL, &neg)) &&
        !(st = lmnn_binary(LMNN_BINARY_MUL, neg, slope, NULL, &scaled))) {
        lmnn_tensor pos;
        if (!(st = lmnn_relu(x, &pos))) {
            st = lmnn_binary(LMNN_BINARY_ADD, pos, scaled, NULL, &r);
            fe_free(pos);
        }
    }
    fe_free(neg);
    fe_free(scaled);
    fe_free(shaped);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- Mod, BitShift: integer math through float32 ----
 * With |x|, |y| < 2^24 the float32 quotient is within half an ulp of the
 * true one, so its floor (or trunc) is the integer quotient and
 * x - q * y is exact: the integer results are exact in that range. */

static lm_status infer_int_binary(fe_ctx *c, const fe_node *n, const char *const *attrs,
                                  bool ints_only) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, attrs);
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, 0), *b = fe_in_type(c, n, 1);
    if (a->elem != b->elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "inputs are %s and %s: the types must match",
                       fe_elem_name(a->elem), fe_elem_name(b->elem));
    if (ints_only ? !fe_elem_is_int(a->elem) : !fe_elem_is_numeric(a->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "element type %s is not supported",
                       fe_elem_name(a->elem));
    fe_type out;
    if ((st = fe_broadcast(c, n, a, b, &out))) return st;
    return fe_set_out_type(c, n, 0, a->elem, out.rank, out.dims);
}

static lm_status infer_mod(fe_ctx *c, const fe_node *n) {
    int64_t fmod;
    lm_status st = infer_int_binary(c, n, (const char *const[]){"fmod", NULL}, false);
    if (!st) st = fe_attr_int(c, n, "fmod", 0, &fmod);
    if (st) return st;
    if (!fmod && fe_elem_is_float(fe_in_type(c, n, 0)->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "fmod=0 is defined for integers only");
    const fe_tensor *a = fe_in_const(c, n, 0), *b = fe_in_const(c, n, 1);
    if (!a || !b) return LM_OK;
    /* Known operands (an iteration number, a shape): folded. */
    const fe_value *o = &c->g->values[n->outputs[0]];
    return fold_binary(c, n, fmod ? B_FMOD : B_MOD, a, b, &o->type);
}

/* x - round_fn(x / y) * y over float tensors (consumed: none). */
static lm_status mod_like(fe_ctx *c, const fe_node *n, lmnn_tensor x, lmnn_tensor y,
                          lmnn_unary_op round_fn, lmnn_tensor *out) {
    lmnn_tensor q = {0}, qi = {0}, p = {0};
    lm_status st = lmnn_binary(LMNN_BINARY_DIV, x, y, NULL, &q);
    if (!st) st = lmnn_unary(round_fn, q, NULL, &qi);
    if (!st) st = lmnn_binary(LMNN_BINARY_MUL, qi, y, NULL, &p);
    if (!st) st = lmnn_binary(LMNN_BINARY_SUB, x, p, NULL, out);
    fe_free(q);
    fe_free(qi);
    fe_free(p);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

static lm_status lower_mod(fe_ctx *c, const fe_node *n) {
    int64_t fmod;
    lm_status st = fe_attr_int(c, n, "fmod", 0, &fmod);
    lmnn_tensor x, y, r;
    bool xo = false, yo = false;
    if (!st) st = fe_in_dev_float(c, n, 0, &x, &xo);
    if (!st) st = fe_in_dev_float(c, n, 1, &y, &yo);
    if (!st) st = mod_like(c, n, x, y, fmod ? LMNN_TRUNC : LMNN_FLOOR, &r);
    if (xo) fe_free(x);
    if (yo) fe_free(y);
    if (st) return st;
    return fe_out_from_float(c, n, 0, r);
}

static lm_status infer_bitshift(fe_ctx *c, const fe_node *n) {
    const char *dir;
    lm_status st = infer_int_binary(c, n, (const char *const[]){"direction", NULL}, true);
    if (!st) st = fe_attr_string(c, n, "direction", NULL, &dir);
    if (st) return st;
    fe_elem e = fe_in_type(c, n, 0)->elem;
    if (e != FE_UINT8 && e != FE_UINT16 && e != FE_UINT32 && e != FE_UINT64)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "BitShift takes unsigned integers, given %s",
                       fe_elem_name(e));
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "direction must be LEFT or RIGHT");
    return LM_OK;
}

/* x * 2^y or floor(x / 2^y), with 2^y made exact by rounding the power. */
static lm_status lower_bitshift(fe_ctx *c, const fe_node *n) {
    const char *dir;
    lm_status st = fe_attr_string(c, n, "direction", "LEFT", &dir);
    lmnn_tensor x, y, two = {0}, pw = {0}, p = {0}, q = {0}, r = {0};
    bool xo = false, yo = false;
    if (!st) st = fe_in_dev_float(c, n, 0, &x, &xo);
    if (!st) st = fe_in_dev_float(c, n, 1, &y, &yo);
    if (st) return st;
    lmnn_tensor_info yi;
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    if (!(st = lmnn_tensor_get_info(y, &yi))) {
        o.dtype = yi.dtype;
        st = lmnn_full(c->device, &yi.shape, 2.0, &o, &two);
    }
    if (!st) st = lmnn_binary(LMNN_BINARY_POW, two, y, NULL, &pw);
    if (!st) st = lmnn_unary(LMNN_ROUND, pw, NULL, &p);
    if (!st && !strcmp(dir, "LEFT"))
        st = lmnn_binary(LMNN_BINARY_MUL, x, p, NULL, &r);
    else if (!st) {
        if (!(st = lmnn_binary(LMNN_BINARY_DIV, x, p, NULL, &q))) st = lmnn_floor(q, &r);
    }
    fe_free(two);
    fe_free(pw);
    fe_free(p);
    fe_free(q);
    if (xo) fe_free(x);
    if (yo) fe_free(y);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Where ---- */

static lm_status infer_where(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    const fe_type *cond = fe_in_type(c, n, 0), *a = fe_in_type(c, n, 1), *b = fe_in_type(c, n, 2);
    if (cond->elem != FE_BOOL)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "condition must be bool, given %s",
                       fe_elem_name(cond->elem));
    if (a->elem != b->elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "X is %s but Y is %s: the types must match",
                       fe_elem_name(a->elem), fe_elem_name(b->elem));
    if (!fe_elem_is_numeric(a->elem) && a->elem != FE_BOOL)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "element type %s is not supported",
                       fe_elem_name(a->elem));
    fe_type out;
    if ((st = fe_broadcast(c, n, cond, a, &out)) || (st = fe_broadcast(c, n, &out, b, &out)))
        return st;
    out.elem = a->elem;
    const fe_tensor *kc = fe_in_const(c, n, 0), *ka = fe_in_const(c, n, 1),
                    *kb = fe_in_const(c, n, 2);
    if (kc && ka && kb) {
        fe_tensor *t;
        if ((st = fe_const_new(c, out.elem, (uint32_t)out.rank, out.dims, &t)))
            return fe_nn_fail(c, n, st);
        bool ints = !fe_elem_is_float(out.elem);
        for (uint64_t i = 0; i < t->count; i++) {
            const fe_tensor *src = fe_tensor_get_i64(kc, fe_bcast_index(&out, kc, i)) ? ka : kb;
            uint64_t j = fe_bcast_index(&out, src, i);
            if (ints)
                fe_tensor_set_i64(t, i, fe_tensor_get_i64(src, j));
            else
                fe_tensor_set_f64(t, i, fe_tensor_get_f64(src, j));
        }
        return fe_set_out_const(c, n, 0, t);
    }
    return fe_set_out_type(c, n, 0, out.elem, out.rank, out.dims);
}

static lm_status lower_where(fe_ctx *c, const fe_node *n) {
    lmnn_tensor t[3], r;
    bool owned[3] = {false, false, false};
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_in_dev_float(c, n, i, &t[i], &owned[i]);
    if (!st && (st = lmnn_where(t[0], t[1], t[2], &r))) st = fe_nn_fail(c, n, st);
    for (uint32_t i = 0; i < 3; i++)
        if (owned[i]) fe_free(t[i]);
    if (st) return st;
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Cast ---- */

static lm_status infer_cast(fe_ctx *c, const fe_node *n, fe_elem to) {
    const fe_type *t = fe_in_type(c, n, 0);
    if (!fe_elem_is_numeric(to) && to != FE_BOOL)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "casting to %s is not supported",
                       to > 0 && to < FE_ELEM_COUNT_ ? fe_elem_name(to) : "an unknown type");
    if (!fe_elem_is_numeric(t->elem) && t->elem != FE_BOOL)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "casting from %s is not supported",
                       fe_elem_name(t->elem));
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) {
        fe_tensor *o;
        lm_status st = fe_const_new(c, to, k->rank, k->dims, &o);
        if (st) return fe_nn_fail(c, n, st);
        for (uint64_t i = 0; i < o->count; i++) {
            if (fe_elem_is_float(k->elem) && !fe_elem_is_float(to) && to != FE_BOOL) {
                double v = fe_tensor_get_f64(k, i);
                fe_tensor_set_i64(o, i, isfinite(v) ? (int64_t)v : 0);
            } else if (fe_elem_is_float(k->elem) || fe_elem_is_float(to)) {
                fe_tensor_set_f64(o, i, fe_tensor_get_f64(k, i));
            } else {
                fe_tensor_set_i64(o, i, fe_tensor_get_i64(k, i));
            }
        }
        return fe_set_out_const(c, n, 0, o);
    }
    return fe_set_out_type(c, n, 0, to, t->rank, t->dims);
}

static lm_status infer_cast_to(fe_ctx *c, const fe_node *n) {
    int64_t to, sat;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"to", "saturate", NULL});
    if (!st) st = fe_attr_int(c, n, "to", -1, &to);
    if (!st) st = fe_attr_int(c, n, "saturate", 1, &sat);
    if (st) return st;
    if (to < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute 'to' is missing");
    return infer_cast(c, n, to < FE_ELEM_COUNT_ ? (fe_elem)to : FE_UNDEFINED);
}

static lm_status infer_castlike(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"saturate", NULL});
    if (st) return st;
    return infer_cast(c, n, fe_in_type(c, n, 1)->elem);
}

static lm_status lower_cast(fe_ctx *c, const fe_node *n) {
    fe_elem from = fe_in_type(c, n, 0)->elem, to = c->g->values[n->outputs[0]].type.elem;
    lmnn_tensor a, r, rows = fe_in_rows(c, n, 0, NULL);
    lmnn_tensor_info info;
    /* A value held as rows, cast to what it is already: as it is held. */
    if (rows.id && to != FE_BOOL && !lmnn_tensor_get_info(rows, &info) &&
        info.dtype == fe_dev_dtype(c, to))
        return fe_out_alias(c, n, 0, 0);
    lm_status st = fe_in_dev(c, n, 0, &a);
    if (st) return st;
    if (to == FE_BOOL && from != FE_BOOL) {
        /* Nonzero is true: through float (integers below 2^24 exactly; a
         * larger one is nonzero in float too). */
        lmnn_tensor f;
        bool owned;
        if ((st = fe_in_dev_float(c, n, 0, &f, &owned))) return st;
        st = lmnn_unary(LMNN_NEZ, f, NULL, &r);
        if (owned) fe_free(f);
        if (st) return fe_nn_fail(c, n, st);
        return fe_out_from_float(c, n, 0, r);
    }
    lmnn_dtype want = fe_dev_dtype(c, to);
    if ((st = lmnn_tensor_get_info(a, &info))) return fe_nn_fail(c, n, st);
    if (info.dtype == want) return fe_out_alias(c, n, 0, 0);
    if ((st = lmnn_typecast(a, want, &r))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- Identity ---- */

static lm_status infer_identity(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    const fe_value *v = fe_in(c, n, 0);
    if (v->is_seq) return fe_set_out_like(c, n, 0, v);
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k) return fe_set_out_const(c, n, 0, k);
    const fe_type *t = fe_in_type(c, n, 0);
    return fe_set_out_type(c, n, 0, t->elem, t->rank, t->dims);
}

static lm_status lower_identity(fe_ctx *c, const fe_node *n) {
    return fe_out_alias(c, n, 0, 0);
}

#define BIN(name)                                                                                  \
    { name, infer_binary, lower_binary, 0, binary_images }
#define UN(name)                                                                                   \
    { name, infer_unary, lower_unary, 0, unary_images }

const fe_op_def fe_ops_eltwise[] = {
    BIN("Add"),
    BIN("Sub"),
    BIN("Mul"),
    BIN("Div"),
    BIN("Pow"),
    BIN("Max"),
    BIN("Min"),
    BIN("Sum"),
    BIN("Mean"),
    BIN("Equal"),
    BIN("Less"),
    BIN("LessOrEqual"),
    BIN("Greater"),
    BIN("GreaterOrEqual"),
    BIN("And"),
    BIN("Or"),
    BIN("Xor"),
    UN("Abs"),
    UN("Neg"),
    UN("Sign"),
    UN("Relu"),
    UN("Not"),
    UN("Exp"),
    UN("Log"),
    UN("Sqrt"),
    UN("Reciprocal"),
    UN("Floor"),
    UN("Ceil"),
    UN("Round"),
    UN("Sigmoid"),
    UN("Tanh"),
    UN("Erf"),
    UN("Sin"),
    UN("Cos"),
    UN("Tan"),
    UN("Asin"),
    UN("Acos"),
    UN("Atan"),
    UN("Sinh"),
    UN("Cosh"),
    UN("Asinh"),
    UN("Acosh"),
    UN("Atanh"),
    UN("Softplus"),
    UN("Softsign"),
    UN("HardSwish"),
    UN("Mish"),
    UN("LeakyRelu"),
    UN("Elu"),
    UN("Celu"),
    UN("Gelu"),
    {"IsNaN", infer_isnan, lower_unary, 0, NULL},
    {"IsInf", infer_isinf, lower_isinf, 0, NULL},
    {"HardSigmoid", infer_hardsigmoid, lower_hardsigmoid, 0, fe_ew_images},
    {"Selu", infer_selu, lower_selu, 0, NULL},
    {"ThresholdedRelu", infer_thresholded_relu, lower_thresholded_relu, 0, NULL},
    {"Shrink", infer_shrink, lower_shrink, 0, NULL},
    {"Clip", infer_clip, lower_clip, 0, NULL},
    {"PRelu", infer_prelu, lower_prelu, 0, NULL},
    {"Where", infer_where, lower_where, 0, NULL},
    {"Mod", infer_mod, lower_mod, 0, NULL},
    {"BitShift", infer_bitshift, lower_bitshift, 0, NULL},
    {"Cast", infer_cast_to, lower_cast, 0, NULL},
    {"CastLike", infer_castlike, lower_cast, 0, NULL},
    {"Identity", infer_identity, lower_identity, 0, NULL},
};
const size_t fe_ops_eltwise_count = sizeof fe_ops_eltwise / sizeof fe_ops_eltwise[0];
