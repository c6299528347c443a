/* Element-wise unary ops: one program shape (read a tile, run a chain of SFPU
 * calls on it in dst, write it) serves every op; an op is its chain. The
 * public ops share one compute kernel: the chains of all of them in a switch
 * on the op, a runtime arg (all_chains). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

lm_status nn_unary_map(const char *op, nn_tensor *in, lmnn_dtype out_dtype,
                       const lmnn_memory_config *memory, const char *chain, bool zero_pad,
                       lmnn_tensor *out) {
    return nn_unary_map_with(op, in, out_dtype, memory, chain, NULL, 0, zero_pad, NULL, out);
}

static const char *all_chains(void);

lm_status nn_unary_input(const char *op, lmnn_tensor a, nn_tensor **out) {
    /* Sharded or interleaved, either side: the kernels address pages
     * through their accessor words. */
    lm_status st = nn_get_tensor_any(op, "a", a, out);
    if (!st) st = nn_check_layout(op, "a", *out, LMNN_TILE);
    if (!st) st = nn_check_float(op, "a", *out);
    return st;
}

lm_status nn_unary_map_with(const char *op, nn_tensor *in, lmnn_dtype out_dtype,
                            const lmnn_memory_config *memory, const char *chain,
                            const uint32_t *params, uint32_t uop, bool zero_pad,
                            const nn_unary_reader *reader, lmnn_tensor *out) {
    static const uint32_t no_params[NN_UNARY_PARAMS];
    if (!params) params = no_params;
    /* NULL: every public op's chain, the op chosen at run time (the key
     * holds the op instead of the long chain). */
    bool all = !chain;
    if (all) chain = all_chains();
    if (reader && (reader->compile_arg_count > NN_UNARY_READER_ARGS ||
                   reader->arg_count > NN_UNARY_READER_ARGS))
        return nn_fail(LM_ERR_INTERNAL, op, "more than %d reader args", NN_UNARY_READER_ARGS);
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st =
        nn_tensor_new_any(op, in->device, &in->shape, out_dtype, LMNN_TILE, memory, &oh, &o);
    if (st) return st;
    nn_key key;
    nn_key_init(&key, "unary");
    nn_key_u32(&key, all);
    if (all)
        nn_key_u32(&key, uop);
    else
        nn_key_add(&key, chain, strlen(chain) + 1);
    /* Per-core runtime args, set once when the program is built. */
    nn_key_add(&key, params, NN_UNARY_PARAMS * sizeof *params);
    nn_key_u32(&key, zero_pad);
    if (reader) {
        nn_key_add(&key, reader->name, strlen(reader->name) + 1);
        nn_key_u32(&key, reader->compile_arg_count);
        nn_key_add(&key, reader->compile_args, reader->compile_arg_count * sizeof(uint32_t));
        nn_key_u32(&key, reader->arg_count);
        nn_key_add(&key, reader->args, reader->arg_count * sizeof(uint32_t));
        if (reader->extra) nn_key_tensor(&key, reader->extra);
    }
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(in->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(in->dtype), fout = nn_tile_format(out_dtype);
        uint32_t rwords[NN_ACCESSOR_WORDS], wargs[NN_TILE_WRITER_ARGS], nr = 0, nw = 0;
        st = nn_accessor_words(op, in, rwords, &nr);
        if (!st) st = nn_tile_writer_args(op, o, 1, zero_pad, wargs, &nw);
        lm_kernel_define def = {"NN_UNARY_CHAIN", chain[0] ? chain : "(void)0"};
        /* 32-bit dst for float32 and for integers (held raw there). */
        bool fp32 = in->dtype == LMNN_FLOAT32 || out_dtype == LMNN_FLOAT32 ||
                    !nn_dtype_is_float(in->dtype) || !nn_dtype_is_float(out_dtype);
        nn_kernel_spec rspec = {"tile_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        if (reader)
            rspec = (nn_kernel_spec){reader->name,
                                     LM_PROCESSOR_DM0,
                                     reader->compile_args,
                                     reader->compile_arg_count,
                                     NULL,
                                     0,
                                     false};
        nn_kernel_spec compute = {"unary_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, &def, 1, fp32};
        nn_kernel_spec writer = {"tile_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
        lm_kernel rk, ck, wk;
        if (!st) st = nn_split_work(op, in->device, in->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, (uint32_t)lm_tile_size(fin), 2);
        if (!st) st = nn_program_cb(op, &p, 16, fout, (uint32_t)lm_tile_size(fout), 2);
        if (!st && reader && reader->extra)
            st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, reader->extra_page, 1);
        if (!st) st = nn_program_kernel(op, &p, &rspec, &rk);
        if (!st) st = nn_program_kernel(op, &p, &compute, &ck);
        if (!st) st = nn_program_kernel(op, &p, &writer, &wk);
        if (!st)
            st = nn_kernel_split_args(op, &p, rk, &split, reader ? reader->args : rwords,
                                      reader ? reader->arg_count : nr);
        uint32_t cargs[NN_UNARY_PARAMS + 1];
        memcpy(cargs, params, NN_UNARY_PARAMS * sizeof *params);
        cargs[NN_UNARY_PARAMS] = uop;
        if (!st) st = nn_kernel_split_args(op, &p, ck, &split, cargs, NN_UNARY_PARAMS + 1);
        if (!st) st = nn_kernel_split_args(op, &p, wk, &split, wargs, nw);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, o, reader ? reader->extra : NULL};
    if (!st) st = nn_launch(op, prog, tensors, tensors[2] ? 3 : 2);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* ---- the ops ---- */

/* How an op runs: its SFPU chain on dst 0 (dst 1 and up are scratch), with
 * $A and $B standing for the float32 bits of alpha and beta and $D for alpha
 * as an integer (all read from runtime args: expand_chain); and whether
 * f(0) may be nonzero (the writer then zeroes the padding). */
typedef struct unary_def {
    const char *name;
    const char *chain;
    bool nonzero_at_zero;
    double alpha, beta; /* PyTorch's defaults */
} unary_def;

#define CLAMP_CHAIN                                                                                \
    "fill_tile_bitcast(1, $A); binary_max_tile(0, 1, 0); fill_tile_bitcast(1, $B); "               \
    "binary_min_tile(0, 1, 0)"

static const unary_def defs[LMNN_UNARY_OP_COUNT_] = {
    [LMNN_EXP] = {"exp", "exp_tile(0)", true, 0, 0},
    [LMNN_LOG] = {"log", "log_tile(0)", true, 0, 0},
    [LMNN_SQRT] = {"sqrt", "sqrt_tile(0)", false, 0, 0},
    [LMNN_RSQRT] = {"rsqrt", "rsqrt_tile(0)", true, 0, 0},
    [LMNN_RECIPROCAL] = {"reciprocal", "recip_tile(0)", true, 0, 0},
    [LMNN_ABS] = {"abs", "abs_tile(0)", false, 0, 0},
    [LMNN_NEG] = {"neg", "negative_tile(0)", false, 0, 0},
    [LMNN_SQUARE] = {"square", "square_tile(0)", false, 0, 0},
    [LMNN_RELU] = {"relu", "relu_tile(0)", false, 0, 0},
    [LMNN_RELU6] = {"relu6",
                    "relu_tile(0); fill_tile_bitcast(1, 0x40c00000u); binary_min_tile(0, 1, 0)",
                    false, 0, 0},
    [LMNN_GELU] = {"gelu", "gelu_erf_tile(0)", false, 0, 0},
    [LMNN_GELU_TANH] = {"gelu_tanh", "gelu_tile(0)", false, 0, 0},
    [LMNN_SILU] = {"silu", "copy_tile(0, 0, 1); sigmoid_tile(1); mul_binary_tile(0, 1, 0)", false,
                   0, 0},
    [LMNN_SIGMOID] = {"sigmoid", "sigmoid_tile(0)", true, 0, 0},
    [LMNN_TANH] = {"tanh", "tanh_tile(0)", false, 0, 0},
    [LMNN_CLAMP] = {"clamp", CLAMP_CHAIN, true, -INFINITY, INFINITY},
    [LMNN_HARDTANH] = {"hardtanh", CLAMP_CHAIN, true, -1.0, 1.0},
    [LMNN_LOG1P] = {"log1p", "log1p_tile(0)", false, 0, 0},
    [LMNN_EXPM1] = {"expm1", "expm1_tile(0)", false, 0, 0},
    [LMNN_SIGN] = {"sign", "sign_tile(0)", false, 0, 0},
    [LMNN_LEAKY_RELU] = {"leaky_relu", "leaky_relu_tile(0, $A)", false, 0.01, 0},
    [LMNN_ELU] = {"elu", "elu_tile(0, $A)", false, 1.0, 0},
    /* torch's scale 1.0507009873554805 and alpha 1.6732632423543772 in float32 */
    [LMNN_SELU] = {"selu", "selu_tile(0, 0x3f867d5fu, 0x3fd62d7du)", false, 0, 0},
    [LMNN_CELU] = {"celu", "celu_tile(0, $A, 0)", false, 1.0, 0},
    [LMNN_MISH] = {"mish", "mish_tile(0)", false, 0, 0},
    [LMNN_HARDSIGMOID] = {"hardsigmoid", "hardsigmoid_tile(0)", true, 0, 0},
    [LMNN_HARDSWISH] = {"hardswish", "hardswish_tile(0)", false, 0, 0},
    [LMNN_SOFTPLUS] = {"softplus", "softplus_tile(0, $A, 0, $B)", true, 1.0, 20.0},
    [LMNN_SOFTSIGN] = {"softsign", "softsign_tile(0)", false, 0, 0},
    [LMNN_ERF] = {"erf", "erf_tile(0)", false, 0, 0},
    [LMNN_ERFC] = {"erfc", "erfc_tile(0)", true, 0, 0},
    [LMNN_SIN] = {"sin", "sin_tile(0)", false, 0, 0},
    [LMNN_COS] = {"cos", "cos_tile(0)", true, 0, 0},
    [LMNN_TAN] = {"tan", "tan_tile(0)", false, 0, 0},
    [LMNN_ASIN] = {"asin", "asin_tile(0)", false, 0, 0},
    [LMNN_ACOS] = {"acos", "acos_tile(0)", true, 0, 0},
    [LMNN_ATAN] = {"atan", "atan_tile(0)", false, 0, 0},
    [LMNN_SINH] = {"sinh", "sinh_tile(0)", false, 0, 0},
    [LMNN_COSH] = {"cosh", "cosh_tile(0)", true, 0, 0},
    [LMNN_ASINH] = {"asinh", "asinh_tile(0)", false, 0, 0},
    [LMNN_ACOSH] = {"acosh", "acosh_tile(0)", true, 0, 0}, /* NaN at 0 */
    [LMNN_ATANH] = {"atanh", "atanh_tile(0)", false, 0, 0},
    [LMNN_FLOOR] = {"floor", "floor_tile(0)", false, 0, 0},
    [LMNN_CEIL] = {"ceil", "ceil_tile(0)", false, 0, 0},
    [LMNN_ROUND] = {"round", "round_tile(0, $D)", false, 0, 0},
    [LMNN_TRUNC] = {"trunc", "trunc_tile(0)", false, 0, 0},
    [LMNN_FRAC] = {"frac", "frac_tile(0)", false, 0, 0},
    [LMNN_LOGICAL_NOT] = {"logical_not", "logical_not_unary_tile(0)", true, 0, 0},
    [LMNN_ISNAN] = {"isnan", "isnan_tile(0)", false, 0, 0},
    [LMNN_ISINF] = {"isinf", "isinf_tile(0)", false, 0, 0},
    [LMNN_ISFINITE] = {"isfinite", "isfinite_tile(0)", true, 0, 0},
    [LMNN_ISPOSINF] = {"isposinf", "isposinf_tile(0)", false, 0, 0},
    [LMNN_ISNEGINF] = {"isneginf", "isneginf_tile(0)", false, 0, 0},
    [LMNN_EXP2] = {"exp2", "exp2_tile(0)", true, 0, 0},
    [LMNN_LOG2] = {"log2", "log2_tile(0)", true, 0, 0},
    [LMNN_LOG10] = {"log10", "log10_tile(0)", true, 0, 0},
    [LMNN_CBRT] = {"cbrt", "cbrt_tile(0)", false, 0, 0},
    [LMNN_EQZ] = {"eqz", "eqz_tile(0)", true, 0, 0},
    [LMNN_NEZ] = {"nez", "nez_tile(0)", false, 0, 0},
    [LMNN_LTZ] = {"ltz", "ltz_tile(0)", false, 0, 0},
    [LMNN_GTZ] = {"gtz", "gtz_tile(0)", false, 0, 0},
    [LMNN_LEZ] = {"lez", "lez_tile(0)", true, 0, 0},
    [LMNN_GEZ] = {"gez", "gez_tile(0)", true, 0, 0},
    /* Nonzero at 0 for some parameters: the padding is zeroed always. */
    [LMNN_HEAVISIDE] = {"heaviside", "heaviside_tile(0, $A)", true, 0, 0},
    [LMNN_RELU_MAX] = {"relu_max", "relu_max_tile(0, $A)", true, 6.0, 0},
    [LMNN_RELU_MIN] = {"relu_min", "relu_min_tile(0, $A)", true, 0, 0},
    /* NaN at 0 for an alpha of +-Inf or NaN (mul), 0 or NaN (div). */
    [LMNN_MUL_UNARY] = {"mul_unary", "mul_unary_tile(0, $A)", true, 1.0, 0},
    [LMNN_DIV_UNARY] = {"div_unary", "div_unary_tile(0, $A)", true, 1.0, 0},
};

const char *lmnn_unary_op_name(lmnn_unary_op op) {
    return op > LMNN_UNARY_INVALID && op < LMNN_UNARY_OP_COUNT_ ? defs[op].name : "invalid";
}

void lmnn_unary_options_init(lmnn_unary_options *opts, lmnn_unary_op op) {
    if (!opts) return;
    *opts = (lmnn_unary_options){0};
    if (op > LMNN_UNARY_INVALID && op < LMNN_UNARY_OP_COUNT_) {
        opts->alpha = defs[op].alpha;
        opts->beta = defs[op].beta;
    }
}

/* The chain with $A, $B and $D replaced by the compute kernel's runtime
 * parameters nn_param[0..2]: alpha's and beta's float32 bits and alpha as an
 * integer (round's decimals, checked before). Parameters as runtime args
 * keep one compiled kernel per op, whatever their values. */
static size_t expand_chain(const char *chain, char *out, size_t size) {
    size_t n = 0;
    for (const char *c = chain; *c && n + 24 < size; c++) {
        if (c[0] == '$' && c[1] == 'D') {
            n += (size_t)snprintf(out + n, size - n, "(int32_t)nn_param[2]");
            c++;
        } else if (c[0] == '$' && (c[1] == 'A' || c[1] == 'B')) {
            n += (size_t)snprintf(out + n, size - n, "nn_param[%d]", c[1] == 'A' ? 0 : 1);
            c++;
        } else {
            out[n++] = *c;
        }
    }
    out[n] = 0;
    return n;
}

/* The values of nn_param[] for `chain`; those it does not name stay 0, so
 * that they do not split the program cache. */
static void chain_params(const char *chain, double alpha, double beta,
                         uint32_t params[NN_UNARY_PARAMS]) {
    params[0] = strstr(chain, "$A") ? nn_float_bits(alpha) : 0;
    params[1] = strstr(chain, "$B") ? nn_float_bits(beta) : 0;
    params[2] = strstr(chain, "$D") ? (uint32_t)(int32_t)alpha : 0;
}

/* Every op's chain as the cases of a switch on nn_op (unary_compute.c's
 * runtime arg: the lmnn_unary_op), built once. */
static char all_text[16384];
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void build_all_chains(void) {
    size_t n = (size_t)snprintf(all_text, sizeof all_text, "switch (nn_op) {");
    for (int op = 0; op < LMNN_UNARY_OP_COUNT_; op++) {
        if (!defs[op].chain) continue;
        n += (size_t)snprintf(all_text + n, sizeof all_text - n, " case %d: ", op);
        n += expand_chain(defs[op].chain, all_text + n, sizeof all_text - n);
        n += (size_t)snprintf(all_text + n, sizeof all_text - n, "; break;");
    }
    snprintf(all_text + n, sizeof all_text - n, " default: break; }");
}

static const char *all_chains(void) {
    pthread_once(&all_once, build_all_chains);
    return all_text;
}

/* The parameters an op cannot take: an error naming `op` (and `arg`, the
 * argument holding the activation, when fused), or LM_OK. */
static lm_status check_params(const char *op, const char *arg, lmnn_unary_op uop, double alpha,
                              double beta) {
    const char *sep = arg[0] ? ": " : "";
    const char *what = arg[0] ? defs[uop].name : "";
    const char *sp = arg[0] ? " " : "";
    if ((uop == LMNN_CLAMP || uop == LMNN_HARDTANH) && !(alpha <= beta))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s%s%s%smin %g is greater than max %g", arg,
                       sep, what, sp, alpha, beta);
    if ((uop == LMNN_CELU || uop == LMNN_SOFTPLUS) && !(alpha != 0 && alpha == alpha))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s%s%s%s%s: expected a nonzero number, given %g", arg, sep, what, sp,
                       uop == LMNN_CELU ? "alpha" : "beta", alpha);
    if (uop == LMNN_ROUND && !(alpha >= -38 && alpha <= 38 && alpha == floor(alpha)))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s%s%s%sdecimals: expected an integer in -38..38, given %g", arg, sep, what,
                       sp, alpha);
    return LM_OK;
}

/* silu's chain as an activation fused after other math: dst 1 gets a copy of
 * dst 0 from dst 0 itself (x + -0 is exactly x), not from circular buffer 0,
 * which then holds some other operand. */
#define SILU_DST_CHAIN                                                                             \
    "fill_tile_bitcast(1, 0x80000000u); add_binary_tile(0, 1, 1); sigmoid_tile(1); "               \
    "mul_binary_tile(0, 1, 0)"

lm_status nn_unary_chain(const char *op, const char *arg, lmnn_unary_op uop, double alpha,
                         double beta, char *chain, size_t size, uint32_t params[NN_UNARY_PARAMS],
                         bool *out_nonzero_at_zero) {
    if (uop <= LMNN_UNARY_INVALID || uop >= LMNN_UNARY_OP_COUNT_)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: unknown unary op %d", arg, (int)uop);
    const unary_def *d = &defs[uop];
    if (!d->chain)
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s: %s is not implemented by this build's compute engine", arg, d->name);
    const char *c = uop == LMNN_SILU ? SILU_DST_CHAIN : d->chain;
    /* A chain that reloads its input from a circular buffer would read the
     * wrong tile after other math: refuse rather than compute garbage. */
    if (strstr(c, "copy_tile"))
        return nn_fail(LM_ERR_UNSUPPORTED, op, "%s: %s cannot be fused after other math yet", arg,
                       d->name);
    lm_status st = check_params(op, arg, uop, alpha, beta);
    if (st) return st;
    expand_chain(c, chain, size);
    chain_params(c, alpha, beta, params);
    *out_nonzero_at_zero = d->nonzero_at_zero;
    return LM_OK;
}

/* Every op's fused chain (as nn_unary_chain gives it) as the cases of a
 * switch on nn_op, built once; the ops that cannot be fused are left out
 * (nn_unary_chain refuses them). */
static char fused_text[16384];
static pthread_once_t fused_once = PTHREAD_ONCE_INIT;

static void build_fused_chains(void) {
    size_t n = (size_t)snprintf(fused_text, sizeof fused_text, "switch (nn_op) {");
    for (int op = 1; op < LMNN_UNARY_OP_COUNT_; op++) {
        const char *c = op == LMNN_SILU ? SILU_DST_CHAIN : defs[op].chain;
        if (!c || strstr(c, "copy_tile")) continue;
        n += (size_t)snprintf(fused_text + n, sizeof fused_text - n, " case %d: ", op);
        n += expand_chain(c, fused_text + n, sizeof fused_text - n);
        n += (size_t)snprintf(fused_text + n, sizeof fused_text - n, "; break;");
    }
    snprintf(fused_text + n, sizeof fused_text - n, " default: break; }");
}

const char *nn_unary_fused_switch(void) {
    pthread_once(&fused_once, build_fused_chains);
    return fused_text;
}

/* A chain of one call whose first argument is register 0: "name(0" then
 * ")" or ", ...". */
static bool one_call(const char *c) {
    const char *p = c ? strchr(c, '(') : NULL;
    return p && !strchr(c, ';') && p[1] == '0' && (p[2] == ')' || p[2] == ',');
}

bool nn_unary_in_place(lmnn_unary_op op) {
    return op > LMNN_UNARY_INVALID && op < LMNN_UNARY_OP_COUNT_ && op != LMNN_SILU &&
           one_call(defs[op].chain);
}

static char at_text[16384];
static pthread_once_t at_once = PTHREAD_ONCE_INIT;

static void build_at_chains(void) {
    size_t n = (size_t)snprintf(at_text, sizeof at_text, "switch (nn_op) {");
    for (int op = 1; op < LMNN_UNARY_OP_COUNT_; op++) {
        if (!nn_unary_in_place((lmnn_unary_op)op)) continue;
        char chain[256];
        expand_chain(defs[op].chain, chain, sizeof chain);
        const char *paren = strchr(chain, '(');
        n += (size_t)snprintf(at_text + n, sizeof at_text - n, " case %d: %.*s(nn_t%s; break;", op,
                              (int)(paren - chain), chain, paren + 2);
    }
    snprintf(at_text + n, sizeof at_text - n, " default: break; }");
}

const char *nn_unary_fused_switch_at(void) {
    pthread_once(&at_once, build_at_chains);
    return at_text;
}

lm_status lmnn_unary(lmnn_unary_op op, lmnn_tensor a, const lmnn_unary_options *opts,
                     lmnn_tensor *out) {
    char name[64];
    if (op <= LMNN_UNARY_INVALID || op >= LMNN_UNARY_OP_COUNT_)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, "lmnn_unary", "op: unknown unary op %d", (int)op);
    snprintf(name, sizeof name, "lmnn_%s", defs[op].name);
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, name, "out is NULL");
    lmnn_unary_options defaults;
    if (!opts) {
        lmnn_unary_options_init(&defaults, op);
        opts = &defaults;
    }
    nn_tensor *t = NULL;
    lm_status st = nn_unary_input(name, a, &t);
    if (st) return st;
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : t->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    if (!defs[op].chain)
        return nn_fail(LM_ERR_UNSUPPORTED, name, "not implemented by this build's compute engine");
    st = check_params(name, "", op, opts->alpha, opts->beta);
    if (st) return st;
    uint32_t params[NN_UNARY_PARAMS];
    chain_params(defs[op].chain, opts->alpha, opts->beta, params);
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, t);
    return nn_unary_map_with(name, t, dtype, &memory, NULL, params, (uint32_t)op,
                             defs[op].nonzero_at_zero, NULL, out);
}

#define UNARY_BY_NAME(fn, op)                                                                      \
    lm_status lmnn_##fn(lmnn_tensor a, lmnn_tensor *out) {                                         \
        return lmnn_unary(op, a, NULL, out);                                                       \
    }
UNARY_BY_NAME(exp, LMNN_EXP)
UNARY_BY_NAME(log, LMNN_LOG)
UNARY_BY_NAME(sqrt, LMNN_SQRT)
UNARY_BY_NAME(rsqrt, LMNN_RSQRT)
UNARY_BY_NAME(reciprocal, LMNN_RECIPROCAL)
UNARY_BY_NAME(abs, LMNN_ABS)
UNARY_BY_NAME(neg, LMNN_NEG)
UNARY_BY_NAME(square, LMNN_SQUARE)
UNARY_BY_NAME(relu, LMNN_RELU)
UNARY_BY_NAME(relu6, LMNN_RELU6)
UNARY_BY_NAME(gelu, LMNN_GELU)
UNARY_BY_NAME(silu, LMNN_SILU)
UNARY_BY_NAME(sigmoid, LMNN_SIGMOID)
UNARY_BY_NAME(tanh, LMNN_TANH)
UNARY_BY_NAME(log1p, LMNN_LOG1P)
UNARY_BY_NAME(expm1, LMNN_EXPM1)
UNARY_BY_NAME(sign, LMNN_SIGN)
UNARY_BY_NAME(selu, LMNN_SELU)
UNARY_BY_NAME(mish, LMNN_MISH)
UNARY_BY_NAME(hardsigmoid, LMNN_HARDSIGMOID)
UNARY_BY_NAME(hardswish, LMNN_HARDSWISH)
UNARY_BY_NAME(softsign, LMNN_SOFTSIGN)
UNARY_BY_NAME(erf, LMNN_ERF)
UNARY_BY_NAME(erfc, LMNN_ERFC)
UNARY_BY_NAME(sin, LMNN_SIN)
UNARY_BY_NAME(cos, LMNN_COS)
UNARY_BY_NAME(tan, LMNN_TAN)
UNARY_BY_NAME(asin, LMNN_ASIN)
UNARY_BY_NAME(acos, LMNN_ACOS)
UNARY_BY_NAME(atan, LMNN_ATAN)
UNARY_BY_NAME(sinh, LMNN_SINH)
UNARY_BY_NAME(cosh, LMNN_COSH)
UNARY_BY_NAME(asinh, LMNN_ASINH)
UNARY_BY_NAME(acosh, LMNN_ACOSH)
UNARY_BY_NAME(atanh, LMNN_ATANH)
UNARY_BY_NAME(floor, LMNN_FLOOR)
UNARY_BY_NAME(ceil, LMNN_CEIL)
UNARY_BY_NAME(trunc, LMNN_TRUNC)
UNARY_BY_NAME(frac, LMNN_FRAC)
UNARY_BY_NAME(logical_not, LMNN_LOGICAL_NOT)
UNARY_BY_NAME(isnan, LMNN_ISNAN)
UNARY_BY_NAME(isinf, LMNN_ISINF)
UNARY_BY_NAME(isfinite, LMNN_ISFINITE)
UNARY_BY_NAME(isposinf, LMNN_ISPOSINF)
UNARY_BY_NAME(isneginf, LMNN_ISNEGINF)
UNARY_BY_NAME(exp2, LMNN_EXP2)
UNARY_BY_NAME(log2, LMNN_LOG2)
UNARY_BY_NAME(log10, LMNN_LOG10)
UNARY_BY_NAME(cbrt, LMNN_CBRT)
UNARY_BY_NAME(eqz, LMNN_EQZ)
UNARY_BY_NAME(nez, LMNN_NEZ)
UNARY_BY_NAME(ltz, LMNN_LTZ)
UNARY_BY_NAME(gtz, LMNN_GTZ)
UNARY_BY_NAME(lez, LMNN_LEZ)
UNARY_BY_NAME(gez, LMNN_GEZ)
#undef UNARY_BY_NAME

/* An op with its alpha (and beta) given. */
static lm_status with_params(lmnn_unary_op op, lmnn_tensor a, double alpha, double beta,
                             lmnn_tensor *out) {
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, op);
    o.alpha = alpha;
    o.beta = beta;
    return lmnn_unary(op, a, &o, out);
}

lm_status lmnn_leaky_relu(lmnn_tensor a, double negative_slope, lmnn_tensor *out) {
    return with_params(LMNN_LEAKY_RELU, a, negative_slope, 0, out);
}

lm_status lmnn_elu(lmnn_tensor a, double alpha, lmnn_tensor *out) {
    return with_params(LMNN_ELU, a, alpha, 0, out);
}

lm_status lmnn_celu(lmnn_tensor a, double alpha, lmnn_tensor *out) {
    return with_params(LMNN_CELU, a, alpha, 0, out);
}

lm_status lmnn_softplus(lmnn_tensor a, double beta, double threshold, lmnn_tensor *out) {
    return with_params(LMNN_SOFTPLUS, a, beta, threshold, out);
}

lm_status lmnn_round(lmnn_tensor a, int decimals, lmnn_tensor *out) {
    return with_params(LMNN_ROUND, a, decimals, 0, out);
}

lm_status lmnn_heaviside(lmnn_tensor a, double value, lmnn_tensor *out) {
    return with_params(LMNN_HEAVISIDE, a, value, 0, out);
}

lm_status lmnn_relu_max(lmnn_tensor a, double upper, lmnn_tensor *out) {
    return with_params(LMNN_RELU_MAX, a, upper, 0, out);
}

lm_status lmnn_relu_min(lmnn_tensor a, double lower, lmnn_tensor *out) {
    return with_params(LMNN_RELU_MIN, a, lower, 0, out);
}

lm_status lmnn_clamp(lmnn_tensor a, double min, double max, lmnn_tensor *out) {
    return with_params(LMNN_CLAMP, a, min, max, out);
}

lm_status lmnn_hardtanh(lmnn_tensor a, double min, double max, lmnn_tensor *out) {
    return with_params(LMNN_HARDTANH, a, min, max, out);
}
