#include "sim/tile/tile_engine.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "sim/tile/tile_kern.h"

/* ---- kernel selection ------------------------------------------------------ */

static atomic_bool force_portable_flag;

void tile_force_portable(bool force) {
    atomic_store(&force_portable_flag, force);
}

static const tile_kernels *kernels(void) {
#if defined(TILE_HAVE_AVX2)
    if (!atomic_load_explicit(&force_portable_flag, memory_order_relaxed) &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &tile_kernels_avx2;
#endif
    return &tile_kernels_portable;
}

const char *tile_kernels_name(void) {
    return kernels()->name;
}

/* ---- dst registers --------------------------------------------------------- */

void tile_dst_init(tile_dst *dst, bool fp32_acc) {
    dst->fp32_acc = fp32_acc;
    tile_dst_clear(dst);
}

uint32_t tile_dst_capacity(const tile_dst *dst) {
    return dst->fp32_acc ? TILE_DST_TILES_FP32 : TILE_DST_TILES;
}

void tile_dst_clear(tile_dst *dst) {
    memset(dst->reg, 0, sizeof dst->reg);
    memset(dst->defined, 0, sizeof dst->defined);
}

static void define_all(tile_dst *dst, uint32_t idx) {
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
    memcpy(dst->reg[idx], result, sizeof dst->reg[idx]);
}

/* store() for the ops that write every element. */
static void write_back(tile_dst *dst, uint32_t idx, float *result) {
    store(dst, idx, result);
    define_all(dst, idx);
}

/* ---- FPU ------------------------------------------------------------------- */

lm_status tile_copy(tile_dst *dst, uint32_t idx, const float *a, bool raw) {
    lm_status st = check_index(dst, idx, "copy_tile");
    if (st) return st;
    float t[TILE_ELEMS];
    memcpy(t, a, sizeof t);
    if (raw) {
        memcpy(dst->reg[idx], t, sizeof t);
        define_all(dst, idx);
    } else {
        write_back(dst, idx, t);
    }
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
    float t[TILE_ELEMS];
    kernels()->binary(op, bcast, a, b, t);
    if (acc_to_dest) /* undefined elements hold 0: adding them changes nothing */
        for (int i = 0; i < TILE_ELEMS; i++)
            t[i] = dst->reg[idx][i] + t[i];
    write_back(dst, idx, t);
    return LM_OK;
}

static const char *const dst_binary_names[TILE_DST_BINARY_COUNT_] = {
    [TILE_DST_BINARY_ADD] = "add_binary_tile",   [TILE_DST_BINARY_SUB] = "sub_binary_tile",
    [TILE_DST_BINARY_MUL] = "mul_binary_tile",   [TILE_DST_BINARY_DIV] = "div_binary_tile",
    [TILE_DST_BINARY_RSUB] = "rsub_binary_tile", [TILE_DST_BINARY_MAX] = "binary_max_tile",
    [TILE_DST_BINARY_MIN] = "binary_min_tile"};

const char *tile_dst_binary_name(tile_dst_binary_op op) {
    if (op <= TILE_DST_BINARY_INVALID || op >= TILE_DST_BINARY_COUNT_) return "invalid";
    return dst_binary_names[op];
}

/* One element of a dst binary operation: a single IEEE operation, so the same
 * bits on every host. */
static float dst_binary_elem(tile_dst_binary_op op, float x, float y) {
    switch (op) {
    case TILE_DST_BINARY_ADD:
        return x + y;
    case TILE_DST_BINARY_SUB:
        return x - y;
    case TILE_DST_BINARY_MUL:
        return x * y;
    case TILE_DST_BINARY_DIV:
        return x / y;
    case TILE_DST_BINARY_RSUB:
        return y - x;
    case TILE_DST_BINARY_MAX:
        return x != x || y != y ? NAN : x > y ? x : y;
    default:
        return x != x || y != y ? NAN : x < y ? x : y;
    }
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
    float t[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++)
        t[i] = dst_binary_elem(op, dst->reg[a][i], dst->reg[b][i]);
    write_back(dst, out, t);
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
    const tile_kernels *k = kernels();
    k->matmul(a, b, dst->reg[idx]);
    k->finish(dst->reg[idx], !dst->fp32_acc);
    define_all(dst, idx);
    return LM_OK;
}

/* max that lets a NaN win, so a NaN anywhere in the input shows in the result. */
static float max_nan(float m, float v) {
    return v > m || v != v ? v : m;
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
    memcpy(t, dst->reg[idx], sizeof t);
    uint32_t *defined = dst->defined[idx];
    bool max = func == TILE_REDUCE_MAX;
    /* Result slot (row-major index) of element (r, c) and how many slots. */
    int slots = dim == TILE_REDUCE_SCALAR ? 1 : TILE_DIM;
    for (int s = 0; s < slots; s++) {
        int out = dim == TILE_REDUCE_ROW ? s * TILE_DIM : s;
        uint32_t bit = 1u << (out % TILE_DIM);
        /* An undefined slot holds 0, which is already SUM's identity. */
        float acc = max && !(defined[out / TILE_DIM] & bit) ? -INFINITY : t[out];
        for (int i = 0; i < (dim == TILE_REDUCE_SCALAR ? TILE_ELEMS : TILE_DIM); i++) {
            /* Element i of the group reduced into slot s, row-major order. */
            int e = dim == TILE_REDUCE_ROW   ? s * TILE_DIM + i
                    : dim == TILE_REDUCE_COL ? i * TILE_DIM + s
                                             : i;
            acc = max ? max_nan(acc, a[e] * scaler) : fmaf(a[e], scaler, acc);
        }
        t[out] = acc;
        defined[out / TILE_DIM] |= bit;
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
    float t[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++)
        t[i] = value;
    write_back(dst, idx, t);
    return LM_OK;
}

lm_status tile_dst_fill_raw(tile_dst *dst, uint32_t idx, uint32_t bits) {
    lm_status st = check_index(dst, idx, "fill_tile_int");
    if (st) return st;
    for (int i = 0; i < TILE_ELEMS; i++)
        memcpy(&dst->reg[idx][i], &bits, sizeof bits);
    define_all(dst, idx);
    return LM_OK;
}

/* ---- SFPU ------------------------------------------------------------------ */

static const char *const sfpu_names[TILE_SFPU_COUNT_] = {
    [TILE_SFPU_EXP] = "exp",     [TILE_SFPU_LOG] = "log",         [TILE_SFPU_SQRT] = "sqrt",
    [TILE_SFPU_RSQRT] = "rsqrt", [TILE_SFPU_RECIP] = "recip",     [TILE_SFPU_RELU] = "relu",
    [TILE_SFPU_GELU] = "gelu",   [TILE_SFPU_SIGMOID] = "sigmoid", [TILE_SFPU_TANH] = "tanh",
    [TILE_SFPU_ABS] = "abs",     [TILE_SFPU_NEG] = "neg",         [TILE_SFPU_SQUARE] = "square"};

const char *tile_sfpu_op_name(tile_sfpu_op op) {
    if (op <= TILE_SFPU_INVALID || op >= TILE_SFPU_COUNT_) return "invalid";
    return sfpu_names[op];
}

lm_status tile_sfpu(tile_dst *dst, uint32_t idx, tile_sfpu_op op) {
    if (op <= TILE_SFPU_INVALID || op >= TILE_SFPU_COUNT_)
        return err_set(LM_ERR_INVALID_ARGUMENT, "sfpu: unknown operation %d", (int)op);
    if (idx >= tile_dst_capacity(dst)) {
        char fn[32];
        snprintf(fn, sizeof fn, "%s_tile", sfpu_names[op]);
        return check_index(dst, idx, fn);
    }
    float t[TILE_ELEMS];
    memcpy(t, dst->reg[idx], sizeof t);
    kernels()->sfpu(op, t);
    write_back(dst, idx, t);
    return LM_OK;
}

/* ---- pack ------------------------------------------------------------------ */

lm_status tile_pack_dst(const tile_dst *dst, uint32_t idx, lm_data_format format, void *out) {
    lm_status st = check_index(dst, idx, "pack_tile");
    if (st) return st;
    if (!tile_format_valid(format))
        return err_set(LM_ERR_INVALID_ARGUMENT, "pack_tile: unknown data format %d", (int)format);
    tile_pack(format, dst->reg[idx], out);
    return LM_OK;
}
