#include "sim/tile/tile_engine.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "sim/tile/tile_kern.h"

/* ---- kernel selection ------------------------------------------------------ */

/* The set tile_force_kernels chose; NULL: the best available. */
static const tile_kernels *_Atomic forced_kernels;

static const tile_kernels *best_kernels(void) {
#if defined(TILE_HAVE_X86)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        if (__builtin_cpu_supports("avx512f")) return &tile_kernels_avx512;
        return &tile_kernels_avx2;
    }
#endif
    return &tile_kernels_portable;
}

static const tile_kernels *kernels(void) {
    const tile_kernels *k = atomic_load_explicit(&forced_kernels, memory_order_relaxed);
    return k ? k : best_kernels();
}

bool tile_force_kernels(const char *name) {
    if (!name) {
        atomic_store(&forced_kernels, NULL);
        return true;
    }
    /* Every set up to the best is available: each needs what the one before
     * it needs and more. */
    const tile_kernels *sets[] = {
        &tile_kernels_portable,
#if defined(TILE_HAVE_X86)
        &tile_kernels_avx2,
        &tile_kernels_avx512
#endif
    };
    const tile_kernels *best = best_kernels();
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (!strcmp(sets[i]->name, name)) {
            atomic_store(&forced_kernels, sets[i]);
            return true;
        }
        if (sets[i] == best) break;
    }
    return false;
}

const char *tile_kernels_name(void) {
    return kernels()->name;
}

/* ---- dst registers --------------------------------------------------------- */

void tile_dst_init(tile_dst *dst, bool fp32_acc) {
    dst->fp32_acc = fp32_acc;
    memset(dst->reg, 0, sizeof dst->reg);
    memset(dst->defined, 0, sizeof dst->defined);
    dst->live = (uint32_t)((1ull << TILE_DST_TILES) - 1);
}

uint32_t tile_dst_capacity(const tile_dst *dst) {
    return dst->fp32_acc ? TILE_DST_TILES_FP32 : TILE_DST_TILES;
}

void tile_dst_clear(tile_dst *dst) {
    dst->live = 0;
}

/* Register idx, zeroed and undefined first if a clear came since its last
 * use. Every access goes through here (or through reg_read). */
static float *reg(tile_dst *dst, uint32_t idx) {
    uint32_t bit = 1u << idx;
    if (!(dst->live & bit)) {
        memset(dst->reg[idx], 0, sizeof dst->reg[idx]);
        memset(dst->defined[idx], 0, sizeof dst->defined[idx]);
        dst->live |= bit;
    }
    return dst->reg[idx];
}

/* Register idx for an op that writes every element (and then calls
 * define_all): a cleared register need not be zeroed first. */
static float *reg_out(tile_dst *dst, uint32_t idx) {
    dst->live |= 1u << idx;
    return dst->reg[idx];
}

/* Register idx for reading only: a tile not touched since the clear reads as
 * the zeros it holds. */
static const float *reg_read(const tile_dst *dst, uint32_t idx) {
    static const float zeros[TILE_ELEMS];
    return dst->live & (1u << idx) ? dst->reg[idx] : zeros;
}

static void define_all(tile_dst *dst, uint32_t idx) {
    reg(dst, idx);
    memset(dst->defined[idx], 0xff, sizeof dst->defined[idx]);
}

static lm_status check_index(const tile_dst *dst, uint32_t idx, const char *fn) {
    if (idx >= tile_dst_capacity(dst))
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: dst index %u out of range (%u dst tiles with fp32 accumulation %s)", fn,
                       idx, tile_dst_capacity(dst), dst->fp32_acc ? "on" : "off");
    return LM_OK;
}

/* Writes a computed tile into dst: canonical NaNs, bf16 rounding if 16-bit.
 * Defines nothing: the caller says which elements the op wrote. */
static void store(tile_dst *dst, uint32_t idx, float *result) {
    kernels()->finish(result, !dst->fp32_acc);
    memcpy(reg(dst, idx), result, sizeof dst->reg[idx]);
}

/* store() for the ops that write every element. */
static void write_back(tile_dst *dst, uint32_t idx, float *result) {
    store(dst, idx, result);
    define_all(dst, idx);
}

/* The end of an op that wrote every element of register idx in place: the
 * same bits as write_back without the copy through a temporary. */
static void finish_in_place(tile_dst *dst, uint32_t idx) {
    kernels()->finish(dst->reg[idx], !dst->fp32_acc);
    define_all(dst, idx);
}

/* ---- FPU ------------------------------------------------------------------- */

lm_status tile_copy(tile_dst *dst, uint32_t idx, const float *a, bool raw) {
    lm_status st = check_index(dst, idx, "copy_tile");
    if (st) return st;
    /* `a` is an unpacked operand, never a dst register. */
    memcpy(reg_out(dst, idx), a, sizeof dst->reg[idx]);
    if (raw)
        define_all(dst, idx);
    else
        finish_in_place(dst, idx);
    return LM_OK;
}

static const char *const binary_names[TILE_BINARY_COUNT_] = {[TILE_BINARY_ADD] = "add_tiles",
                                                             [TILE_BINARY_SUB] = "sub_tiles",
                                                             [TILE_BINARY_MUL] = "mul_tiles"};

lm_status tile_binary(tile_dst *dst, uint32_t idx, tile_binary_op op, tile_bcast bcast,
                      const float *a, const float *b, bool acc_to_dest) {
    if (op <= TILE_BINARY_INVALID || op >= TILE_BINARY_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "eltwise binary: unknown operation %d", (int)op);
    const char *fn = binary_names[op];
    if (bcast <= TILE_BCAST_INVALID || bcast >= TILE_BCAST_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: unknown broadcast type %d", fn, (int)bcast);
    lm_status st = check_index(dst, idx, fn);
    if (st) return st;
    /* The operands are unpacked tiles, never dst registers: the result goes
     * straight into the register, finished on the way. Accumulating, the
     * undefined elements hold 0: adding them changes nothing. */
    float *d = acc_to_dest ? reg(dst, idx) : reg_out(dst, idx);
    kernels()->binary(op, bcast, a, b, d, acc_to_dest, !dst->fp32_acc);
    define_all(dst, idx);
    return LM_OK;
}

static const char *const dst_binary_names[TILE_DST_BINARY_COUNT_] = {
    [TILE_DST_BINARY_ADD] = "add_binary_tile",
    [TILE_DST_BINARY_SUB] = "sub_binary_tile",
    [TILE_DST_BINARY_MUL] = "mul_binary_tile",
    [TILE_DST_BINARY_DIV] = "div_binary_tile",
    [TILE_DST_BINARY_RSUB] = "rsub_binary_tile",
    [TILE_DST_BINARY_MAX] = "binary_max_tile",
    [TILE_DST_BINARY_MIN] = "binary_min_tile",
    [TILE_DST_BINARY_POWER] = "power_binary_tile",
    [TILE_DST_BINARY_EQ] = "eq_binary_tile",
    [TILE_DST_BINARY_NE] = "ne_binary_tile",
    [TILE_DST_BINARY_LT] = "lt_binary_tile",
    [TILE_DST_BINARY_LE] = "le_binary_tile",
    [TILE_DST_BINARY_GT] = "gt_binary_tile",
    [TILE_DST_BINARY_GE] = "ge_binary_tile",
    [TILE_DST_BINARY_LOGICAL_AND] = "logical_and_binary_tile",
    [TILE_DST_BINARY_LOGICAL_OR] = "logical_or_binary_tile",
    [TILE_DST_BINARY_LOGICAL_XOR] = "logical_xor_binary_tile",
    [TILE_DST_BINARY_ATAN2] = "atan2_binary_tile",
    [TILE_DST_BINARY_FMOD] = "fmod_binary_tile",
    [TILE_DST_BINARY_REMAINDER] = "remainder_binary_tile",
};

const char *tile_dst_binary_name(tile_dst_binary_op op) {
    if (op <= TILE_DST_BINARY_INVALID || op >= TILE_DST_BINARY_COUNT_) return "invalid";
    return dst_binary_names[op];
}

lm_status tile_dst_binary(tile_dst *dst, tile_dst_binary_op op, uint32_t a, uint32_t b,
                          uint32_t out) {
    if (op <= TILE_DST_BINARY_INVALID || op >= TILE_DST_BINARY_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "binary SFPU: unknown operation %d", (int)op);
    const char *fn = dst_binary_names[op];
    lm_status st = check_index(dst, a, fn);
    if (!st) st = check_index(dst, b, fn);
    if (!st) st = check_index(dst, out, fn);
    if (st) return st;
    if (out != a && out != b) { /* the kernels take unaliased buffers */
        const float *ra = reg_read(dst, a), *rb = reg_read(dst, b);
        kernels()->dst_binary(op, ra, rb, reg_out(dst, out));
        finish_in_place(dst, out);
        return LM_OK;
    }
    float t[TILE_ELEMS];
    kernels()->dst_binary(op, reg_read(dst, a), reg_read(dst, b), t);
    write_back(dst, out, t);
    return LM_OK;
}

lm_status tile_where(tile_dst *dst, uint32_t cond, uint32_t a, uint32_t b, uint32_t out, bool raw) {
    const char *fn = raw ? "where_int32_tile" : "where_tile";
    lm_status st = check_index(dst, cond, fn);
    if (!st) st = check_index(dst, a, fn);
    if (!st) st = check_index(dst, b, fn);
    if (!st) st = check_index(dst, out, fn);
    if (st) return st;
    /* The condition is read as what the tile holds: a float (NaN counts as
     * true, -0 as false) or, raw, a 32-bit integer. */
    float t[TILE_ELEMS];
    const float *rc = reg_read(dst, cond), *ra = reg_read(dst, a), *rb = reg_read(dst, b);
    for (int i = 0; i < TILE_ELEMS; i++) {
        float c = rc[i];
        uint32_t cb;
        memcpy(&cb, &c, sizeof cb);
        bool take_a = raw ? cb != 0 : c != 0.0f;
        t[i] = take_a ? ra[i] : rb[i];
    }
    if (raw) {
        memcpy(reg(dst, out), t, sizeof t);
        define_all(dst, out);
    } else {
        write_back(dst, out, t);
    }
    return LM_OK;
}

static void transpose(const float *a, float *out) {
    for (int r = 0; r < TILE_DIM; r++)
        for (int c = 0; c < TILE_DIM; c++)
            out[c * TILE_DIM + r] = a[r * TILE_DIM + c];
}

lm_status tile_matmul(tile_dst *dst, uint32_t idx, const float *a, const float *b,
                      bool transpose_b) {
    lm_status st = check_index(dst, idx, "matmul_tiles");
    if (st) return st;
    float bt[TILE_ELEMS];
    if (transpose_b) {
        transpose(b, bt);
        b = bt;
    }
    /* In place: the hottest op skips the copies through a temporary. */
    kernels()->matmul(a, b, reg(dst, idx), !dst->fp32_acc);
    define_all(dst, idx);
    return LM_OK;
}

lm_status tile_reduce(tile_dst *dst, uint32_t idx, tile_reduce_func func, tile_reduce_dim dim,
                      const float *a, float scaler) {
    const char *fn = "reduce_tile";
    if (func <= TILE_REDUCE_FUNC_INVALID || func >= TILE_REDUCE_FUNC_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: unknown reduce function %d", fn, (int)func);
    if (dim <= TILE_REDUCE_DIM_INVALID || dim >= TILE_REDUCE_DIM_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: unknown reduce dimension %d", fn, (int)dim);
    lm_status st = check_index(dst, idx, fn);
    if (st) return st;
    float t[TILE_ELEMS];
    memcpy(t, reg(dst, idx), sizeof t);
    uint32_t *defined = dst->defined[idx];
    /* Result slot s is element (s, 0) for ROW, (0, s) for COL and SCALAR. */
    int slots = dim == TILE_REDUCE_SCALAR ? 1 : TILE_DIM;
    int step = dim == TILE_REDUCE_ROW ? TILE_DIM : 1;
    float acc[TILE_DIM];
    for (int s = 0; s < slots; s++) {
        int out = s * step;
        /* An undefined slot holds 0, which is already SUM's identity; MAX and
         * PROD start from theirs. */
        bool def = defined[out / TILE_DIM] >> (out % TILE_DIM) & 1;
        acc[s] = def                        ? t[out]
                 : func == TILE_REDUCE_MAX  ? -INFINITY
                 : func == TILE_REDUCE_PROD ? 1.0f
                                            : 0.0f;
    }
    kernels()->reduce(func, dim, a, scaler, acc);
    for (int s = 0; s < slots; s++) {
        int out = s * step;
        t[out] = acc[s];
        defined[out / TILE_DIM] |= 1u << (out % TILE_DIM);
    }
    store(dst, idx, t);
    return LM_OK;
}

lm_status tile_transpose(tile_dst *dst, uint32_t idx, const float *a) {
    lm_status st = check_index(dst, idx, "transpose_wh_tile");
    if (st) return st;
    float t[TILE_ELEMS];
    transpose(a, t);
    write_back(dst, idx, t);
    return LM_OK;
}

lm_status tile_dst_fill(tile_dst *dst, uint32_t idx, float value) {
    lm_status st = check_index(dst, idx, "fill_tile");
    if (st) return st;
    float *d = reg_out(dst, idx);
    for (int i = 0; i < TILE_ELEMS; i++)
        d[i] = value;
    finish_in_place(dst, idx);
    return LM_OK;
}

/* splitmix64: a full-period 64-bit sequence whose outputs pass the usual
 * statistical batteries; one multiply-xorshift step per draw. */
static uint64_t rand_next(tile_rand *r) {
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void tile_rand_seed(tile_rand *r, uint32_t seed) {
    /* Nearby seeds (a seed plus a tile number) start far apart. */
    r->state = seed;
    r->state = rand_next(r);
}

/* The bfloat16 next to bfloat16 `end` on the side of `from`. */
static float bf16_toward(float end, float from) {
    uint32_t b;
    memcpy(&b, &end, sizeof b);
    if (end == 0)
        b = from < 0 ? 0x80010000u : 0x00010000u;
    else
        b += (from < end) == (end > 0) ? -0x10000u : 0x10000u; /* smaller or larger magnitude */
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

lm_status tile_dst_rand(tile_dst *dst, uint32_t idx, tile_rand *r, float from, float scale) {
    lm_status st = check_index(dst, idx, "rand_tile");
    if (st) return st;
    float *d = reg_out(dst, idx);
    float end = from + scale;
    for (int i = 0; i < TILE_ELEMS; i++) {
        float u = (float)(rand_next(r) >> 40) * 0x1p-24f;
        float v = from + u * scale;
        /* Rounding may reach the far end of the range, which is open. */
        d[i] = v == end && scale != 0 ? nextafterf(end, from) : v;
    }
    finish_in_place(dst, idx);
    /* So may the rounding to bfloat16: a value there steps back inside. */
    for (int i = 0; !dst->fp32_acc && i < TILE_ELEMS; i++)
        if (scale > 0 ? d[i] >= end : scale < 0 && d[i] <= end) d[i] = bf16_toward(d[i], from);
    return LM_OK;
}

lm_status tile_dst_fill_raw(tile_dst *dst, uint32_t idx, uint32_t bits) {
    lm_status st = check_index(dst, idx, "fill_tile_int");
    if (st) return st;
    float *d = reg(dst, idx);
    for (int i = 0; i < TILE_ELEMS; i++)
        memcpy(&d[i], &bits, sizeof bits);
    define_all(dst, idx);
    return LM_OK;
}

/* ---- SFPU ------------------------------------------------------------------ */

/* How an op reads its parameter words. */
enum { P_NONE, P_F32, P_I32, P_U32 };

static const struct sfpu_desc {
    const char *name; /* the kernel API's name less "_tile" */
    uint8_t params;   /* how many of p0, p1 it reads */
    uint8_t kind;     /* how it reads them */
} sfpu_ops[TILE_SFPU_COUNT_] = {
    [TILE_SFPU_EXP] = {"exp", 0, P_NONE},
    [TILE_SFPU_LOG] = {"log", 0, P_NONE},
    [TILE_SFPU_SQRT] = {"sqrt", 0, P_NONE},
    [TILE_SFPU_RSQRT] = {"rsqrt", 0, P_NONE},
    [TILE_SFPU_RECIP] = {"recip", 0, P_NONE},
    [TILE_SFPU_RELU] = {"relu", 0, P_NONE},
    [TILE_SFPU_GELU] = {"gelu", 0, P_NONE},
    [TILE_SFPU_SIGMOID] = {"sigmoid", 0, P_NONE},
    [TILE_SFPU_TANH] = {"tanh", 0, P_NONE},
    [TILE_SFPU_ABS] = {"abs", 0, P_NONE},
    [TILE_SFPU_NEG] = {"neg", 0, P_NONE},
    [TILE_SFPU_SQUARE] = {"square", 0, P_NONE},
    [TILE_SFPU_LOG1P] = {"log1p", 0, P_NONE},
    [TILE_SFPU_EXPM1] = {"expm1", 0, P_NONE},
    [TILE_SFPU_SIGN] = {"sign", 0, P_NONE},
    [TILE_SFPU_RELU_MAX] = {"relu_max", 1, P_F32},
    [TILE_SFPU_RELU_MIN] = {"relu_min", 1, P_F32},
    [TILE_SFPU_LEAKY_RELU] = {"leaky_relu", 1, P_F32},
    [TILE_SFPU_ELU] = {"elu", 1, P_F32},
    [TILE_SFPU_SELU] = {"selu", 2, P_F32},
    [TILE_SFPU_CELU] = {"celu", 1, P_F32},
    [TILE_SFPU_GELU_ERF] = {"gelu_erf", 0, P_NONE},
    [TILE_SFPU_SILU] = {"silu", 0, P_NONE},
    [TILE_SFPU_MISH] = {"mish", 0, P_NONE},
    [TILE_SFPU_HARDSIGMOID] = {"hardsigmoid", 0, P_NONE},
    [TILE_SFPU_HARDSWISH] = {"hardswish", 0, P_NONE},
    [TILE_SFPU_HARDTANH] = {"hardtanh", 2, P_F32},
    [TILE_SFPU_SOFTPLUS] = {"softplus", 2, P_F32},
    [TILE_SFPU_SOFTSIGN] = {"softsign", 0, P_NONE},
    [TILE_SFPU_ERF] = {"erf", 0, P_NONE},
    [TILE_SFPU_ERFC] = {"erfc", 0, P_NONE},
    [TILE_SFPU_SIN] = {"sin", 0, P_NONE},
    [TILE_SFPU_COS] = {"cos", 0, P_NONE},
    [TILE_SFPU_TAN] = {"tan", 0, P_NONE},
    [TILE_SFPU_ASIN] = {"asin", 0, P_NONE},
    [TILE_SFPU_ACOS] = {"acos", 0, P_NONE},
    [TILE_SFPU_ATAN] = {"atan", 0, P_NONE},
    [TILE_SFPU_SINH] = {"sinh", 0, P_NONE},
    [TILE_SFPU_COSH] = {"cosh", 0, P_NONE},
    [TILE_SFPU_ASINH] = {"asinh", 0, P_NONE},
    [TILE_SFPU_ACOSH] = {"acosh", 0, P_NONE},
    [TILE_SFPU_ATANH] = {"atanh", 0, P_NONE},
    [TILE_SFPU_FLOOR] = {"floor", 0, P_NONE},
    [TILE_SFPU_CEIL] = {"ceil", 0, P_NONE},
    [TILE_SFPU_ROUND] = {"round", 1, P_I32},
    [TILE_SFPU_TRUNC] = {"trunc", 0, P_NONE},
    [TILE_SFPU_FRAC] = {"frac", 0, P_NONE},
    [TILE_SFPU_CLAMP] = {"clamp", 2, P_F32},
    [TILE_SFPU_LOGICAL_NOT] = {"logical_not_unary", 0, P_NONE},
    [TILE_SFPU_ISNAN] = {"isnan", 0, P_NONE},
    [TILE_SFPU_ISINF] = {"isinf", 0, P_NONE},
    [TILE_SFPU_ISPOSINF] = {"isposinf", 0, P_NONE},
    [TILE_SFPU_ISNEGINF] = {"isneginf", 0, P_NONE},
    [TILE_SFPU_ISFINITE] = {"isfinite", 0, P_NONE},
    [TILE_SFPU_EQZ] = {"eqz", 0, P_NONE},
    [TILE_SFPU_NEZ] = {"nez", 0, P_NONE},
    [TILE_SFPU_LTZ] = {"ltz", 0, P_NONE},
    [TILE_SFPU_GTZ] = {"gtz", 0, P_NONE},
    [TILE_SFPU_LEZ] = {"lez", 0, P_NONE},
    [TILE_SFPU_GEZ] = {"gez", 0, P_NONE},
    [TILE_SFPU_EXP2] = {"exp2", 0, P_NONE},
    [TILE_SFPU_LOG2] = {"log2", 0, P_NONE},
    [TILE_SFPU_LOG10] = {"log10", 0, P_NONE},
    [TILE_SFPU_CBRT] = {"cbrt", 0, P_NONE},
    [TILE_SFPU_POWER] = {"power", 1, P_F32},
    [TILE_SFPU_POWER_ITERATIVE] = {"power_iterative", 1, P_U32},
    [TILE_SFPU_HEAVISIDE] = {"heaviside", 1, P_F32},
    [TILE_SFPU_ADD_UNARY] = {"add_unary", 1, P_F32},
    [TILE_SFPU_SUB_UNARY] = {"sub_unary", 1, P_F32},
    [TILE_SFPU_MUL_UNARY] = {"mul_unary", 1, P_F32},
    [TILE_SFPU_DIV_UNARY] = {"div_unary", 1, P_F32},
    [TILE_SFPU_RSUB_UNARY] = {"rsub_unary", 1, P_F32},
    [TILE_SFPU_UNARY_MAX] = {"unary_max", 1, P_F32},
    [TILE_SFPU_UNARY_MIN] = {"unary_min", 1, P_F32},
    [TILE_SFPU_UNARY_EQ] = {"unary_eq", 1, P_F32},
    [TILE_SFPU_UNARY_NE] = {"unary_ne", 1, P_F32},
    [TILE_SFPU_UNARY_LT] = {"unary_lt", 1, P_F32},
    [TILE_SFPU_UNARY_LE] = {"unary_le", 1, P_F32},
    [TILE_SFPU_UNARY_GT] = {"unary_gt", 1, P_F32},
    [TILE_SFPU_UNARY_GE] = {"unary_ge", 1, P_F32},
    [TILE_SFPU_TYPECAST] = {"typecast", 2, P_U32},
};

const char *tile_sfpu_op_name(tile_sfpu_op op) {
    if (op <= TILE_SFPU_INVALID || op >= TILE_SFPU_COUNT_) return "invalid";
    return sfpu_ops[op].name;
}

uint32_t tile_sfpu_op_params(tile_sfpu_op op) {
    if (op <= TILE_SFPU_INVALID || op >= TILE_SFPU_COUNT_) return 0;
    return sfpu_ops[op].params;
}

/* A parameter word as the value the op computes with (exactly). */
static double param_value(uint8_t kind, uint32_t w) {
    float f;
    memcpy(&f, &w, sizeof f);
    return kind == P_F32 ? (double)f : kind == P_I32 ? (double)(int32_t)w : (double)w;
}

static bool is_float_format(uint32_t f) {
    return f == LM_DATA_FORMAT_FLOAT32 || f == LM_DATA_FORMAT_FLOAT16_B ||
           f == LM_DATA_FORMAT_BFP8_B;
}

static bool is_int_format(uint32_t f) {
    return f == LM_DATA_FORMAT_INT32 || f == LM_DATA_FORMAT_UINT32;
}

/* The parameters the op cannot work with; the message names the call. */
static lm_status check_params(tile_sfpu_op op, const char *fn, double p0, double p1, uint32_t w0,
                              uint32_t w1) {
    const lm_status E = LM_ERR_INVALID_ARGUMENT;
    switch (op) {
    case TILE_SFPU_HARDTANH:
        if (!(p0 <= p1))
            return err_set(E, "%s: min %g must not be above max %g (and neither may be NaN)", fn,
                           p0, p1);
        break;
    case TILE_SFPU_SOFTPLUS:
        if (p0 == 0 || p0 != p0) return err_set(E, "%s: beta %g must be a nonzero number", fn, p0);
        break;
    case TILE_SFPU_CELU:
        if (p0 == 0 || p0 != p0) return err_set(E, "%s: alpha %g must be a nonzero number", fn, p0);
        break;
    case TILE_SFPU_ROUND:
        if (p0 < -38 || p0 > 38)
            return err_set(E, "%s: decimals %d out of range (-38..38 for float32)", fn,
                           (int32_t)w0);
        break;
    case TILE_SFPU_TYPECAST:
        if (!(is_float_format(w0) || is_int_format(w0)) ||
            !(is_float_format(w1) || is_int_format(w1)))
            return err_set(E,
                           "%s: no cast from data format %u to %u (Float32, Float16_b, Bfp8_b, "
                           "UInt32 and Int32 are %u..%u)",
                           fn, w0, w1, LM_DATA_FORMAT_FLOAT32, LM_DATA_FORMAT_INT32);
        break;
    default:
        break;
    }
    return LM_OK;
}

lm_status tile_sfpu_param(tile_dst *dst, uint32_t idx, tile_sfpu_op op, uint32_t p0, uint32_t p1) {
    if (op <= TILE_SFPU_INVALID || op >= TILE_SFPU_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "sfpu: unknown operation %d", (int)op);
    const struct sfpu_desc *d = &sfpu_ops[op];
    char fn[40];
    snprintf(fn, sizeof fn, "%s_tile", d->name);
    lm_status st = check_index(dst, idx, fn);
    if (st) return st;
    double v0 = d->params > 0 ? param_value(d->kind, p0) : 0.0;
    double v1 = d->params > 1 ? param_value(d->kind, p1) : 0.0;
    if ((st = check_params(op, fn, v0, v1, p0, p1))) return st;
    bool raw_out = false;
    if (op == TILE_SFPU_TYPECAST) {
        raw_out = is_int_format(p1);
        /* A float result held in 16-bit dst ends as bfloat16: round to it
         * once, from the exact input, rather than twice. */
        if (!raw_out && !dst->fp32_acc) v1 = LM_DATA_FORMAT_FLOAT16_B;
    }
    /* In place: a register not touched since the clear is zeroed first, the
     * zeros it reads as. */
    kernels()->sfpu(op, v0, v1, reg(dst, idx));
    if (raw_out)
        define_all(dst, idx);
    else
        finish_in_place(dst, idx);
    return LM_OK;
}

lm_status tile_sfpu(tile_dst *dst, uint32_t idx, tile_sfpu_op op) {
    return tile_sfpu_param(dst, idx, op, 0, 0);
}

/* ---- pack ------------------------------------------------------------------ */

lm_status tile_pack_dst(const tile_dst *dst, uint32_t idx, lm_data_format format, void *out) {
    lm_status st = check_index(dst, idx, "pack_tile");
    if (st) return st;
    if (!tile_format_valid(format))
        return err_set(LM_ERR_INVALID_ARGUMENT, "pack_tile: unknown data format %d", (int)format);
    tile_pack(format, reg_read(dst, idx), out);
    return LM_OK;
}
