/* The compute engine's tile ops against a float64 reference, the accuracy
 * bounds documented in sim/tile/tile_engine.h, and bit-identity of the AVX2
 * and portable kernel sets. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "lm_test.h"
#include "sim/tile/tile_engine.h"

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint32_t rng_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static float rng_range(float lo, float hi) {
    return lo + (hi - lo) * ((float)(rng_u32() & 0xffffff) / 16777216.0f);
}

static void fill_random(float *t, float lo, float hi) {
    for (int i = 0; i < TILE_ELEMS; i++)
        t[i] = rng_range(lo, hi);
}

/* Error of `got` against the float64 `want`, in ulps of want's float32 binade
 * (subnormal spacing below FLT_MIN). A correct overflow to Inf counts as 0. */
static double ulp_error(float got, double want) {
    if (fabs(want) >= 0x1.ffffffp127 && isinf(got) && (got > 0) == (want > 0))
        return 0; /* correctly overflowed */
    if (isinf(want) || isinf(got)) return (double)got == want ? 0 : INFINITY;
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want) ? 0 : INFINITY;
    double a = fabs(want);
    int e;
    frexp(a < FLT_MIN ? FLT_MIN : a, &e);
    double ulp = ldexp(1.0, e - 24);
    return fabs((double)got - want) / ulp;
}

static tile_dst dst; /* 64 KiB: keep it off the stack */

/* ---- dst register file ----------------------------------------------------- */

static void test_dst_capacity_and_errors(void) {
    float a[TILE_ELEMS] = {0};
    const lm_status E = LM_ERR_INVALID_ARGUMENT;
    tile_dst_init(&dst, false);
    CHECK_EQ_U64(tile_dst_capacity(&dst), 16);
    CHECK_OK(tile_copy(&dst, 15, a, false));
    CHECK_FAILS(tile_copy(&dst, 16, a, false), E,
                "copy_tile: dst index 16 out of range (16 dst tiles with fp32 accumulation off)");
    tile_dst_init(&dst, true);
    CHECK_EQ_U64(tile_dst_capacity(&dst), 8);
    CHECK_FAILS(tile_matmul(&dst, 8, a, a, false), E,
                "matmul_tiles: dst index 8 out of range (8 dst tiles with fp32 accumulation on)");
    CHECK_FAILS(tile_binary(&dst, 0, TILE_BINARY_INVALID, TILE_BCAST_NONE, a, a, false), E,
                "unknown operation 0");
    CHECK_FAILS(tile_binary(&dst, 0, (tile_binary_op)9, TILE_BCAST_NONE, a, a, false), E,
                "unknown operation 9");
    CHECK_FAILS(tile_binary(&dst, 0, TILE_BINARY_ADD, (tile_bcast)0, a, a, false), E,
                "add_tiles: unknown broadcast type 0");
    CHECK_FAILS(tile_binary(&dst, 9, TILE_BINARY_MUL, TILE_BCAST_ROW, a, a, false), E,
                "mul_tiles: dst index 9");
    CHECK_FAILS(tile_reduce(&dst, 0, (tile_reduce_func)7, TILE_REDUCE_ROW, a, 1), E,
                "reduce_tile: unknown reduce function 7");
    CHECK_FAILS(tile_reduce(&dst, 0, TILE_REDUCE_SUM, (tile_reduce_dim)0, a, 1), E,
                "reduce_tile: unknown reduce dimension 0");
    CHECK_FAILS(tile_reduce(&dst, 8, TILE_REDUCE_SUM, TILE_REDUCE_ROW, a, 1), E,
                "reduce_tile: dst index 8");
    CHECK_FAILS(tile_transpose(&dst, 8, a), E, "transpose_wh_tile: dst index 8");
    CHECK_FAILS(tile_sfpu(&dst, 0, TILE_SFPU_INVALID), E, "sfpu: unknown operation 0");
    CHECK_FAILS(tile_sfpu(&dst, 0, TILE_SFPU_COUNT_), E, "sfpu: unknown operation");
    CHECK_FAILS(tile_sfpu(&dst, 8, TILE_SFPU_GELU), E, "gelu_tile: dst index 8");
    CHECK_FAILS(tile_dst_fill(&dst, 8, 0), E, "fill_tile: dst index 8");
    CHECK_FAILS(tile_dst_fill_raw(&dst, 8, 0), E,
                "fill_tile_int: dst index 8 out of range (8 dst tiles with fp32 accumulation on)");
    CHECK_FAILS(tile_reduce(&dst, 0, TILE_REDUCE_FUNC_COUNT_, TILE_REDUCE_ROW, a, 1), E,
                "reduce_tile: unknown reduce function 5");
    uint8_t out[4096];
    CHECK_FAILS(tile_pack_dst(&dst, 8, LM_DATA_FORMAT_FLOAT32, out), E, "pack_tile: dst index 8");
    CHECK_FAILS(tile_pack_dst(&dst, 0, LM_DATA_FORMAT_INVALID, out), E,
                "pack_tile: unknown data format 0");
    CHECK(strcmp(tile_sfpu_op_name(TILE_SFPU_SIGMOID), "sigmoid") == 0);
    CHECK(strcmp(tile_sfpu_op_name((tile_sfpu_op)99), "invalid") == 0);
}

/* bf16 dst rounds every result once; fp32 dst keeps it; NaNs become canonical. */
static void test_dst_precision_model(void) {
    float a[TILE_ELEMS], b[TILE_ELEMS];
    fill_random(a, -3, 3);
    fill_random(b, -3, 3);
    a[7] = u2f(0xffc00001); /* a NaN with sign and payload */
    tile_dst_init(&dst, true);
    CHECK_OK(tile_binary(&dst, 1, TILE_BINARY_MUL, TILE_BCAST_NONE, a, b, false));
    for (int i = 0; i < TILE_ELEMS; i++)
        if (i != 7) CHECK(dst.reg[1][i] == a[i] * b[i]);
    CHECK_EQ_U64(f2u(dst.reg[1][7]), TILE_CANONICAL_NAN_BITS);
    tile_dst_init(&dst, false);
    CHECK_OK(tile_binary(&dst, 15, TILE_BINARY_MUL, TILE_BCAST_NONE, a, b, false));
    for (int i = 0; i < TILE_ELEMS; i++) {
        if (i == 7) continue;
        uint32_t p = f2u(a[i] * b[i]);
        uint32_t want = (p + 0x7fff + ((p >> 16) & 1)) & 0xffff0000u;
        CHECK_EQ_U64(f2u(dst.reg[15][i]), want);
    }
    CHECK_EQ_U64(f2u(dst.reg[15][7]), TILE_CANONICAL_NAN_BITS);
    /* Packing dst: bf16 dst values are exact in Float16_b. */
    uint16_t packed[TILE_ELEMS];
    CHECK_OK(tile_pack_dst(&dst, 15, LM_DATA_FORMAT_FLOAT16_B, packed));
    float back[TILE_ELEMS];
    tile_unpack(LM_DATA_FORMAT_FLOAT16_B, packed, back);
    CHECK(memcmp(back, dst.reg[15], sizeof back) == 0);
}

static void test_copy_raw_and_float(void) {
    float a[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++)
        a[i] = u2f(rng_u32() ^ (rng_u32() << 16));
    a[0] = u2f(0x7f800123); /* NaN-looking integer */
    tile_dst_init(&dst, false);
    CHECK_OK(tile_copy(&dst, 3, a, true));
    CHECK(memcmp(dst.reg[3], a, sizeof a) == 0);
    CHECK_OK(tile_copy(&dst, 4, a, false));
    CHECK_EQ_U64(f2u(dst.reg[4][0]), TILE_CANONICAL_NAN_BITS);
    uint8_t packed[4096];
    CHECK_OK(tile_pack_dst(&dst, 3, LM_DATA_FORMAT_INT32, packed));
    float back[TILE_ELEMS];
    tile_unpack(LM_DATA_FORMAT_INT32, packed, back);
    CHECK(memcmp(back, a, sizeof a) == 0);
}

/* ---- FPU ------------------------------------------------------------------- */

static double ref_binary(tile_binary_op op, double x, double y) {
    return op == TILE_BINARY_ADD ? x + y : op == TILE_BINARY_SUB ? x - y : x * y;
}

static void test_binary_vs_float64(void) {
    float a[TILE_ELEMS], b[TILE_ELEMS];
    tile_dst_init(&dst, true);
    double worst = 0;
    for (int op = TILE_BINARY_ADD; op <= TILE_BINARY_MUL; op++)
        for (int bc = TILE_BCAST_NONE; bc <= TILE_BCAST_SCALAR; bc++)
            for (int rep = 0; rep < 4; rep++) {
                float scale = rep == 3 ? 1e30f : rep == 2 ? 1e-30f : 100.0f;
                fill_random(a, -scale, scale);
                fill_random(b, -scale, scale);
                a[1] = 0.0f;
                a[2] = -0.0f;
                a[3] = FLT_MAX;
                b[0] = rep == 1 ? 0.0f : b[0];
                CHECK_OK(tile_binary(&dst, 2, (tile_binary_op)op, (tile_bcast)bc, a, b, false));
                for (int r = 0; r < 32; r++)
                    for (int c = 0; c < 32; c++) {
                        int i = r * 32 + c;
                        int bi = bc == TILE_BCAST_ROW      ? c
                                 : bc == TILE_BCAST_COL    ? r * 32
                                 : bc == TILE_BCAST_SCALAR ? 0
                                                           : i;
                        double want = ref_binary((tile_binary_op)op, a[i], b[bi]);
                        if (fabs(want) >= 0x1.ffffffp127) { /* rounds to Inf */
                            CHECK(isinf(dst.reg[2][i]));
                            continue;
                        }
                        double err = ulp_error(dst.reg[2][i], want);
                        if (err > worst) worst = err;
                        CHECK(err <= 0.5);
                    }
            }
    printf("  add/sub/mul max error %.3f ulp\n", worst);
}

/* Reference dst += a x b in float64, with the sum of |terms| for the bound. */
static void ref_matmul(const float *a, const float *b, bool tb, const float *c, double *out,
                       double *out_abs) {
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
            double s = c[i * 32 + j], sa = fabs(s);
            for (int k = 0; k < 32; k++) {
                double p = (double)a[i * 32 + k] * (tb ? b[j * 32 + k] : b[k * 32 + j]);
                s += p;
                sa += fabs(p);
            }
            out[i * 32 + j] = s;
            out_abs[i * 32 + j] = sa;
        }
}

static void test_matmul_vs_float64(void) {
    static float a[TILE_ELEMS], b[TILE_ELEMS], c[TILE_ELEMS];
    static double want[TILE_ELEMS], sabs[TILE_ELEMS];
    double worst = 0;
    for (int rep = 0; rep < 8; rep++) {
        bool tb = rep & 1;
        float scale = rep >= 6 ? 1e15f : 1.0f;
        fill_random(a, -scale, scale);
        fill_random(b, -1, 1);
        fill_random(c, -scale, scale);
        tile_dst_init(&dst, true);
        memcpy(dst.reg[5], c, sizeof c);
        CHECK_OK(tile_matmul(&dst, 5, a, b, tb));
        ref_matmul(a, b, tb, c, want, sabs);
        for (int i = 0; i < TILE_ELEMS; i++) {
            double rel = fabs(dst.reg[5][i] - want[i]) / sabs[i];
            if (rel > worst) worst = rel;
            CHECK(rel <= ldexp(1.0, -19));
        }
    }
    printf("  matmul max error %.3g * sum|terms| (bound 2^-19 = %.3g)\n", worst, ldexp(1.0, -19));
}

/* Two calls accumulate like one K = 64 product; bf16 dst rounds each call. */
static void test_matmul_accumulates(void) {
    static float a[TILE_ELEMS], b[TILE_ELEMS], once[TILE_ELEMS];
    fill_random(a, -1, 1);
    fill_random(b, -1, 1);
    tile_dst_init(&dst, true);
    CHECK_OK(tile_matmul(&dst, 0, a, b, false));
    memcpy(once, dst.reg[0], sizeof once);
    CHECK_OK(tile_matmul(&dst, 0, a, b, false));
    for (int i = 0; i < TILE_ELEMS; i++)
        CHECK(fabs(dst.reg[0][i] - 2.0 * once[i]) <= 1e-5 * (1 + fabs(once[i])));
    /* An Inf times zero gives the canonical NaN, in both dst modes. */
    a[0] = INFINITY;
    memset(b, 0, sizeof b);
    tile_dst_init(&dst, false);
    CHECK_OK(tile_matmul(&dst, 1, a, b, false));
    CHECK_EQ_U64(f2u(dst.reg[1][0]), TILE_CANONICAL_NAN_BITS);
    CHECK(dst.reg[1][32] == 0.0f);
}

static void test_transpose_exact(void) {
    float a[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++)
        a[i] = (float)i;
    tile_dst_init(&dst, true);
    CHECK_OK(tile_transpose(&dst, 7, a));
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            CHECK(dst.reg[7][c * 32 + r] == a[r * 32 + c]);
}

static void test_reduce(void) {
    static float a[TILE_ELEMS];
    fill_random(a, -10, 0.5f);
    const float s = 0.25f;
    double worst = 0;
    for (int dim = TILE_REDUCE_ROW; dim <= TILE_REDUCE_SCALAR; dim++) {
        tile_dst_init(&dst, true);
        /* Sum accumulates into what dst holds; max into the -Inf fill. */
        CHECK_OK(tile_dst_fill(&dst, 0, 1.0f));
        CHECK_OK(tile_reduce(&dst, 0, TILE_REDUCE_SUM, (tile_reduce_dim)dim, a, s));
        CHECK_OK(tile_dst_fill(&dst, 1, -INFINITY));
        CHECK_OK(tile_reduce(&dst, 1, TILE_REDUCE_MAX, (tile_reduce_dim)dim, a, s));
        int slots = dim == TILE_REDUCE_SCALAR ? 1 : 32;
        for (int k = 0; k < slots; k++) {
            double sum = 1.0, sabs = 1.0, mx = -INFINITY;
            for (int r = 0; r < 32; r++)
                for (int c = 0; c < 32; c++) {
                    bool in = dim == TILE_REDUCE_SCALAR || (dim == TILE_REDUCE_ROW && r == k) ||
                              (dim == TILE_REDUCE_COL && c == k);
                    if (!in) continue;
                    double v = (double)a[r * 32 + c] * s;
                    sum += v;
                    sabs += fabs(v);
                    mx = fmax(mx, v);
                }
            int out = dim == TILE_REDUCE_ROW ? k * 32 : k;
            double rel = fabs(dst.reg[0][out] - sum) / sabs;
            if (rel > worst) worst = rel;
            CHECK(rel <= ldexp(1.0, -19));
            CHECK(dst.reg[1][out] == mx);
        }
        /* Positions that are not results keep their values. */
        CHECK(dst.reg[0][33] == 1.0f && dst.reg[1][33] == -INFINITY);
    }
    /* PROD: the product of the scaled elements in row-major order, from 1 in
     * an undefined slot and from the slot's value in a defined one. */
    static float p[TILE_ELEMS];
    fill_random(p, 0.5f, 1.5f);
    for (int i = 0; i < TILE_ELEMS; i += 7)
        p[i] = -p[i];
    for (int dim = TILE_REDUCE_ROW; dim <= TILE_REDUCE_SCALAR; dim++) {
        tile_dst_init(&dst, true);
        float sc = dim == TILE_REDUCE_SCALAR ? 1.0f : 2.0f; /* no overflow */
        CHECK_OK(tile_reduce(&dst, 0, TILE_REDUCE_PROD, (tile_reduce_dim)dim, p, sc));
        CHECK_OK(tile_dst_fill(&dst, 1, 3.0f));
        CHECK_OK(tile_reduce(&dst, 1, TILE_REDUCE_PROD, (tile_reduce_dim)dim, p, 1.0f));
        int slots = dim == TILE_REDUCE_SCALAR ? 1 : 32;
        for (int k = 0; k < slots; k++) {
            float f0 = 1.0f, f1 = 3.0f;
            for (int i = 0; i < (dim == TILE_REDUCE_SCALAR ? TILE_ELEMS : 32); i++) {
                int e = dim == TILE_REDUCE_ROW   ? k * 32 + i
                        : dim == TILE_REDUCE_COL ? i * 32 + k
                                                 : i;
                f0 = f0 * (p[e] * sc);
                f1 = f1 * p[e];
            }
            int out = dim == TILE_REDUCE_ROW ? k * 32 : k;
            CHECK(dst.reg[0][out] == f0 && dst.reg[1][out] == f1);
        }
        CHECK(dst.reg[1][33] == 3.0f);
    }
    /* A NaN anywhere shows up in a max. */
    a[40] = NAN;
    tile_dst_init(&dst, true);
    CHECK_OK(tile_reduce(&dst, 0, TILE_REDUCE_MAX, TILE_REDUCE_SCALAR, a, 1.0f));
    CHECK_EQ_U64(f2u(dst.reg[0][0]), TILE_CANONICAL_NAN_BITS);
    printf("  reduce sum max error %.3g * sum|terms|\n", worst);
}

/* After a clear, elements are undefined: a MAX reads them as -Inf, SUM and
 * AVG as 0; an element written by any op (including a reduce's own results)
 * is a value like any other; a clear makes them undefined again. */
static void test_reduce_undefined_dst(void) {
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++) {
        a[i] = -1.0f - (float)(i % 37);
        b[i] = -100.0f;
    }
    for (int fp32 = 0; fp32 < 2; fp32++) {
        tile_dst_init(&dst, fp32);
        CHECK_OK(tile_reduce(&dst, 0, TILE_REDUCE_MAX, TILE_REDUCE_ROW, a, 1.0f));
        CHECK_OK(tile_reduce(&dst, 1, TILE_REDUCE_MAX, TILE_REDUCE_COL, a, 1.0f));
        CHECK_OK(tile_reduce(&dst, 2, TILE_REDUCE_MAX, TILE_REDUCE_SCALAR, a, 1.0f));
        CHECK_OK(tile_reduce(&dst, 3, TILE_REDUCE_SUM, TILE_REDUCE_SCALAR, b, 1.0f));
        CHECK_OK(tile_reduce(&dst, 4, TILE_REDUCE_AVG, TILE_REDUCE_SCALAR, b, 1.0f / 1024));
        for (int k = 0; k < 32; k++) {
            float row = -INFINITY, col = -INFINITY;
            for (int j = 0; j < 32; j++) {
                row = fmaxf(row, a[k * 32 + j]);
                col = fmaxf(col, a[j * 32 + k]);
            }
            CHECK(dst.reg[0][k * 32] == row && dst.reg[1][k] == col);
            CHECK(row < 0 && col < 0);
        }
        CHECK(dst.reg[2][0] == -1.0f);
        CHECK(dst.reg[3][0] == -102400.0f && dst.reg[4][0] == -100.0f);
        /* Positions that are not results stay undefined and hold 0. */
        CHECK(dst.reg[0][1] == 0 && dst.reg[1][32] == 0 && dst.reg[2][1] == 0);
        /* A second MAX accumulates into the now defined results. */
        CHECK_OK(tile_reduce(&dst, 2, TILE_REDUCE_MAX, TILE_REDUCE_SCALAR, b, 1.0f));
        CHECK(dst.reg[2][0] == -1.0f);
        /* A MAX COL into dst 0 (ROW results in column 0): (0,0) is defined
         * (-1 beats b's -100), the rest of row 0 was undefined (-Inf). */
        CHECK_OK(tile_reduce(&dst, 0, TILE_REDUCE_MAX, TILE_REDUCE_COL, b, 1.0f));
        CHECK(dst.reg[0][0] == -1.0f && dst.reg[0][1] == -100.0f);
        /* Written elements count as values: a copied tile, a fill. */
        CHECK_OK(tile_copy(&dst, 5, b, false));
        CHECK_OK(tile_reduce(&dst, 5, TILE_REDUCE_MAX, TILE_REDUCE_SCALAR, a, 1.0f));
        CHECK(dst.reg[5][0] == -1.0f && dst.reg[5][1] == -100.0f);
        CHECK_OK(tile_dst_fill(&dst, 6, -0.5f));
        CHECK_OK(tile_reduce(&dst, 6, TILE_REDUCE_MAX, TILE_REDUCE_ROW, a, 1.0f));
        CHECK(dst.reg[6][0] == -0.5f && dst.reg[6][1] == -0.5f);
        CHECK_OK(tile_dst_fill_raw(&dst, 7, 0xffffffffu));
        CHECK(f2u(dst.reg[7][0]) == 0xffffffffu && f2u(dst.reg[7][1023]) == 0xffffffffu);
        /* A clear makes them undefined again. */
        tile_dst_clear(&dst);
        CHECK_OK(tile_reduce(&dst, 6, TILE_REDUCE_MAX, TILE_REDUCE_ROW, b, 1.0f));
        CHECK(dst.reg[6][0] == -100.0f && dst.reg[6][1] == 0);
    }
}

/* ---- SFPU ------------------------------------------------------------------ */

/* 0.5 x (1 + tanh(u)) written as x / (1 + exp(-2u)): the same function without
 * float64's own cancellation for negative x. */
static double ref_gelu_tanh(double x) {
    double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}

#define F32(v) f2u(v) /* a float parameter word */

/* The parameter words the tests give an op: torch's defaults where it has
 * them, other values where those would hide a mistake (alpha 1). */
static void op_params(tile_sfpu_op op, uint32_t *p0, uint32_t *p1) {
    *p0 = *p1 = 0;
    switch (op) {
    case TILE_SFPU_RELU_MAX:
        *p0 = F32(6.0f);
        break;
    case TILE_SFPU_RELU_MIN:
        *p0 = F32(-0.75f);
        break;
    case TILE_SFPU_LEAKY_RELU:
        *p0 = F32(0.01f);
        break;
    case TILE_SFPU_ELU:
        *p0 = F32(1.5f);
        break;
    case TILE_SFPU_SELU:
        *p0 = 0x3f867d5f; /* torch's scale and alpha */
        *p1 = 0x3fd62d7d;
        break;
    case TILE_SFPU_CELU:
        *p0 = F32(0.75f);
        break;
    case TILE_SFPU_HARDTANH:
        *p0 = F32(-1.0f);
        *p1 = F32(1.0f);
        break;
    case TILE_SFPU_SOFTPLUS:
        *p0 = F32(1.0f);
        *p1 = F32(20.0f);
        break;
    case TILE_SFPU_CLAMP:
        *p0 = F32(-2.5f);
        *p1 = F32(3.0f);
        break;
    case TILE_SFPU_POWER:
        *p0 = F32(2.5f);
        break;
    case TILE_SFPU_POWER_ITERATIVE:
        *p0 = 3;
        break;
    case TILE_SFPU_HEAVISIDE:
        *p0 = F32(0.5f);
        break;
    case TILE_SFPU_ADD_UNARY:
    case TILE_SFPU_SUB_UNARY:
    case TILE_SFPU_MUL_UNARY:
    case TILE_SFPU_DIV_UNARY:
    case TILE_SFPU_RSUB_UNARY:
    case TILE_SFPU_UNARY_MAX:
    case TILE_SFPU_UNARY_MIN:
    case TILE_SFPU_UNARY_EQ:
    case TILE_SFPU_UNARY_NE:
    case TILE_SFPU_UNARY_LT:
    case TILE_SFPU_UNARY_LE:
    case TILE_SFPU_UNARY_GT:
    case TILE_SFPU_UNARY_GE:
        *p0 = F32(1.75f);
        break;
    case TILE_SFPU_TYPECAST:
        *p0 = LM_DATA_FORMAT_FLOAT32;
        *p1 = LM_DATA_FORMAT_INT32;
        break;
    default:
        break;
    }
}

/* The op with its test parameters. */
static lm_status run_sfpu(tile_dst *d, uint32_t idx, tile_sfpu_op op) {
    uint32_t p0, p1;
    op_params(op, &p0, &p1);
    return tile_sfpu_param(d, idx, op, p0, p1);
}

/* The float64 value of op(x) with parameters p0, p1 (float parameters as
 * their values); libm is the reference here. */
static double ref_sfpu(tile_sfpu_op op, double x, double p0, double p1) {
    switch (op) {
    case TILE_SFPU_EXP:
        return exp(x);
    case TILE_SFPU_LOG:
        return log(x);
    case TILE_SFPU_SQRT:
        return sqrt(x);
    case TILE_SFPU_RSQRT:
        return 1.0 / sqrt(x);
    case TILE_SFPU_RECIP:
        return 1.0 / x;
    case TILE_SFPU_RELU:
        return x > 0 ? x : 0;
    case TILE_SFPU_GELU:
        return ref_gelu_tanh(x);
    case TILE_SFPU_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case TILE_SFPU_TANH:
        return tanh(x);
    case TILE_SFPU_ABS:
        return fabs(x);
    case TILE_SFPU_NEG:
        return -x;
    case TILE_SFPU_SQUARE:
        return x * x;
    case TILE_SFPU_LOG1P:
        return log1p(x);
    case TILE_SFPU_EXPM1:
        return expm1(x);
    case TILE_SFPU_SIGN:
        return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : NAN;
    case TILE_SFPU_RELU_MAX: /* by comparisons: NaN stays NaN, -0 stays -0 */
        return x > p0 ? p0 : x < 0 ? 0 : x;
    case TILE_SFPU_RELU_MIN:
        return x < p0 ? p0 : x;
    case TILE_SFPU_LEAKY_RELU:
        return x < 0 ? x * p0 : x;
    case TILE_SFPU_ELU:
        return x > 0 ? x : p0 * expm1(x);
    case TILE_SFPU_SELU:
        return p0 * (x > 0 ? x : p1 * expm1(x));
    case TILE_SFPU_CELU:
        return x > 0 ? x : p0 * expm1(x / p0);
    case TILE_SFPU_GELU_ERF:
        return 0.5 * x * erfc(-x / sqrt(2.0));
    case TILE_SFPU_SILU:
        return x / (1.0 + exp(-x));
    case TILE_SFPU_MISH:
        return x * tanh(log1p(exp(x)));
    case TILE_SFPU_HARDSIGMOID:
        return fmin(fmax(x + 3, 0), 6) / 6;
    case TILE_SFPU_HARDSWISH:
        return x * fmin(fmax(x + 3, 0), 6) / 6;
    case TILE_SFPU_HARDTANH:
    case TILE_SFPU_CLAMP:
        return isnan(x) || isnan(p0) || isnan(p1) ? NAN : fmin(fmax(x, p0), p1);
    case TILE_SFPU_SOFTPLUS: /* torch decides in float32 */
        return (float)((float)x * (float)p0) > (float)p1 ? x : log1p(exp(x * p0)) / p0;
    case TILE_SFPU_SOFTSIGN:
        return isinf(x) ? copysign(1, x) : x / (1 + fabs(x));
    case TILE_SFPU_ERF:
        return erf(x);
    case TILE_SFPU_ERFC:
        return erfc(x);
    case TILE_SFPU_SIN:
        return sin(x);
    case TILE_SFPU_COS:
        return cos(x);
    case TILE_SFPU_TAN:
        return tan(x);
    case TILE_SFPU_ASIN:
        return asin(x);
    case TILE_SFPU_ACOS:
        return acos(x);
    case TILE_SFPU_ATAN:
        return atan(x);
    case TILE_SFPU_SINH:
        return sinh(x);
    case TILE_SFPU_COSH:
        return cosh(x);
    case TILE_SFPU_ASINH:
        return asinh(x);
    case TILE_SFPU_ACOSH:
        return acosh(x);
    case TILE_SFPU_ATANH:
        return atanh(x);
    case TILE_SFPU_FLOOR:
        return floor(x);
    case TILE_SFPU_CEIL:
        return ceil(x);
    case TILE_SFPU_ROUND:
        return nearbyint(x); /* decimals 0; other decimals: test_sfpu_exact_ops */
    case TILE_SFPU_TRUNC:
        return trunc(x);
    case TILE_SFPU_FRAC:
        return x - trunc(x);
    case TILE_SFPU_LOGICAL_NOT:
    case TILE_SFPU_EQZ:
        return x == 0;
    case TILE_SFPU_ISNAN:
        return isnan(x) != 0;
    case TILE_SFPU_ISINF:
        return isinf(x) != 0;
    case TILE_SFPU_ISPOSINF:
        return x == INFINITY;
    case TILE_SFPU_ISNEGINF:
        return x == -INFINITY;
    case TILE_SFPU_ISFINITE:
        return isfinite(x) != 0;
    case TILE_SFPU_NEZ:
        return x != 0;
    case TILE_SFPU_LTZ:
        return x < 0;
    case TILE_SFPU_GTZ:
        return x > 0;
    case TILE_SFPU_LEZ:
        return x <= 0;
    case TILE_SFPU_GEZ:
        return x >= 0;
    case TILE_SFPU_EXP2:
        return exp2(x);
    case TILE_SFPU_LOG2:
        return log2(x);
    case TILE_SFPU_LOG10:
        return log10(x);
    case TILE_SFPU_CBRT:
        return cbrt(x);
    case TILE_SFPU_POWER:
    case TILE_SFPU_POWER_ITERATIVE:
        return pow(x, p0);
    case TILE_SFPU_HEAVISIDE:
        return x > 0 ? 1 : x < 0 ? 0 : x == 0 ? p0 : NAN;
    case TILE_SFPU_ADD_UNARY:
        return x + p0;
    case TILE_SFPU_SUB_UNARY:
        return x - p0;
    case TILE_SFPU_MUL_UNARY:
        return x * p0;
    case TILE_SFPU_DIV_UNARY:
        return x / p0;
    case TILE_SFPU_RSUB_UNARY:
        return p0 - x;
    case TILE_SFPU_UNARY_MAX:
        return isnan(x) ? NAN : fmax(x, p0);
    case TILE_SFPU_UNARY_MIN:
        return isnan(x) ? NAN : fmin(x, p0);
    case TILE_SFPU_UNARY_EQ:
        return x == p0;
    case TILE_SFPU_UNARY_NE:
        return x != p0;
    case TILE_SFPU_UNARY_LT:
        return x < p0;
    case TILE_SFPU_UNARY_LE:
        return x <= p0;
    case TILE_SFPU_UNARY_GT:
        return x > p0;
    case TILE_SFPU_UNARY_GE:
        return x >= p0;
    default:
        return NAN;
    }
}

/* A parameter word as the value the reference computes with. */
static double param_value(tile_sfpu_op op, uint32_t w) {
    return op == TILE_SFPU_POWER_ITERATIVE ? (double)w
           : op == TILE_SFPU_ROUND         ? (double)(int32_t)w
                                           : (double)u2f(w);
}

/* Per op: test domain (random inputs in [lo, hi], see sample()), parameters
 * (0, 0: the ones op_params gives) and the bound documented in
 * sim/tile/tile_engine.h, in ulps. */
static const struct sfpu_case {
    tile_sfpu_op op;
    float lo, hi;
    double max_ulp;
    double abs_tol; /* absolute slack for results near 0 */
    uint32_t p0, p1;
} sfpu_cases[] = {
    {TILE_SFPU_EXP, -87.0f, 88.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_EXP, -103.0f, -87.0f, 0.6, 0, 0,
     0}, /* subnormal results: ulps of the subnormal grid */
    {TILE_SFPU_LOG, 1e-45f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG, 0.5f, 2.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SQRT, 0, 3e38f, 0.5, 0, 0, 0},
    {TILE_SFPU_RSQRT, 1e-45f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_RECIP, -1e38f, 1e38f, 0.5, 0, 0, 0},
    {TILE_SFPU_RELU, -1e38f, 1e38f, 0, 0, 0, 0},
    {TILE_SFPU_GELU, -20.0f, 20.0f, 0.6, 0x1p-126, 0, 0},
    {TILE_SFPU_GELU, -4.0f, 4.0f, 0.6, 0x1p-126, 0, 0},
    {TILE_SFPU_GELU, -1e30f, 1e30f, 0.6, 0x1p-126, 0, 0},
    {TILE_SFPU_SIGMOID, -87.0f, 88.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SIGMOID, -103.0f, -87.0f, 0.6, 0, 0, 0}, /* subnormal results */
    {TILE_SFPU_SIGMOID, -8.0f, 8.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_TANH, -20.0f, 20.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_TANH, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ABS, -3e38f, 3e38f, 0, 0, 0, 0},
    {TILE_SFPU_NEG, -3e38f, 3e38f, 0, 0, 0, 0},
    {TILE_SFPU_SQUARE, -1e19f, 1e19f, 0.5, 0, 0, 0},
    {TILE_SFPU_LOG1P, -1.0f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG1P, -0.5f, 0.5f, 0.6, 0, 0, 0},
    {TILE_SFPU_EXPM1, -110.0f, 88.7f, 0.6, 0, 0, 0},
    {TILE_SFPU_EXPM1, -0.5f, 0.5f, 0.6, 0, 0, 0},
    {TILE_SFPU_SIGN, -3e38f, 3e38f, 0, 0, 0, 0},
    {TILE_SFPU_RELU_MAX, -100.0f, 100.0f, 0, 0, 0, 0},
    {TILE_SFPU_RELU_MIN, -100.0f, 100.0f, 0, 0, 0, 0},
    {TILE_SFPU_LEAKY_RELU, -1e30f, 1e30f, 0.5, 0, 0, 0},
    {TILE_SFPU_ELU, -110.0f, 1e30f, 0.6, 0, 0, 0},
    {TILE_SFPU_ELU, -2.0f, 2.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SELU, -110.0f, 1e30f, 0.6, 0, 0, 0},
    {TILE_SFPU_CELU, -110.0f, 1e30f, 0.6, 0, 0, 0},
    {TILE_SFPU_CELU, -2.0f, 2.0f, 0.6, 0, 0xc0200000, 0}, /* alpha -2.5 */
    {TILE_SFPU_GELU_ERF, -20.0f, 20.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_GELU_ERF, -3.0f, 3.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_GELU_ERF, -1e30f, 1e30f, 0.6, 0, 0, 0},
    {TILE_SFPU_SILU, -110.0f, 110.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SILU, -1e30f, 1e30f, 0.6, 0, 0, 0},
    {TILE_SFPU_MISH, -110.0f, 110.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_MISH, -4.0f, 4.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_HARDSIGMOID, -10.0f, 10.0f, 0.501, 0, 0, 0},
    {TILE_SFPU_HARDSWISH, -10.0f, 10.0f, 0.501, 0, 0, 0},
    {TILE_SFPU_HARDTANH, -10.0f, 10.0f, 0, 0, 0, 0},
    {TILE_SFPU_SOFTPLUS, -110.0f, 110.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SOFTPLUS, -10.0f, 10.0f, 0.6, 0, 0xc0000000, 0x40a00000}, /* beta -2, threshold 5 */
    {TILE_SFPU_SOFTPLUS, -10.0f, 10.0f, 0.6, 0, 0x3e800000,
     0x43960000}, /* beta 0.25, threshold 300 */
    {TILE_SFPU_SOFTSIGN, -3e38f, 3e38f, 0.501, 0, 0, 0},
    {TILE_SFPU_ERF, -6.0f, 6.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ERF, -2.5f, 2.5f, 0.6, 0, 0, 0},
    {TILE_SFPU_ERFC, -6.0f, 10.1f, 0.6, 0, 0, 0},
    {TILE_SFPU_ERFC, 1.0f, 4.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SIN, -3.4e38f, 3.4e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_SIN, -10.0f, 10.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_COS, -3.4e38f, 3.4e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_COS, -10.0f, 10.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_TAN, -3.4e38f, 3.4e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_TAN, -10.0f, 10.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ASIN, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ACOS, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ATAN, -3e38f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_ATAN, -3.0f, 3.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SINH, -90.0f, 90.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_SINH, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_COSH, -90.0f, 90.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ASINH, -3e38f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_ASINH, -2.0f, 2.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ACOSH, 1.0f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_ACOSH, 1.0f, 3.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_ATANH, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_FLOOR, -1e8f, 1e8f, 0, 0, 0, 0},
    {TILE_SFPU_CEIL, -1e8f, 1e8f, 0, 0, 0, 0},
    {TILE_SFPU_ROUND, -1e8f, 1e8f, 0, 0, 0, 0},
    {TILE_SFPU_TRUNC, -1e8f, 1e8f, 0, 0, 0, 0},
    {TILE_SFPU_FRAC, -1e8f, 1e8f, 0, 0, 0, 0},
    {TILE_SFPU_CLAMP, -10.0f, 10.0f, 0, 0, 0, 0},
    {TILE_SFPU_EXP2, -150.0f, 128.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_EXP2, -1.0f, 1.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG2, 1e-45f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG2, 0.5f, 2.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG10, 1e-45f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_LOG10, 0.5f, 2.0f, 0.6, 0, 0, 0},
    {TILE_SFPU_CBRT, -3e38f, 3e38f, 0.6, 0, 0, 0},
    {TILE_SFPU_POWER, 0.0f, 1e15f, 0.6, 0, 0, 0},
    {TILE_SFPU_POWER, 0.0f, 4.0f, 0.6, 0, 0xc0e80000, 0},      /* -7.25 */
    {TILE_SFPU_POWER, -100.0f, 100.0f, 0.6, 0, 0xc0400000, 0}, /* -3 */
    {TILE_SFPU_POWER, 0.0f, 3e38f, 0.6, 0, 0x3f000000, 0},     /* 0.5 */
    {TILE_SFPU_POWER_ITERATIVE, -1e12f, 1e12f, 0.6, 0, 0, 0},
    {TILE_SFPU_POWER_ITERATIVE, -2.0f, 2.0f, 0.6, 0, 31, 0},
    {TILE_SFPU_POWER_ITERATIVE, 0.99f, 1.01f, 0.6, 0, 7000, 0},
    {TILE_SFPU_ADD_UNARY, -100.0f, 100.0f, 0.5, 0, 0, 0},
    {TILE_SFPU_SUB_UNARY, -100.0f, 100.0f, 0.5, 0, 0, 0},
    {TILE_SFPU_MUL_UNARY, -1e30f, 1e30f, 0.5, 0, 0, 0},
    {TILE_SFPU_DIV_UNARY, -1e30f, 1e30f, 0.5, 0, 0, 0},
    {TILE_SFPU_RSUB_UNARY, -100.0f, 100.0f, 0.5, 0, 0, 0},
};

/* Random input in [lo, hi]: uniform for half the samples, log-uniform in
 * magnitude for the rest so small magnitudes are covered too. */
static float sample(float lo, float hi) {
    if (rng_u32() & 1) return rng_range(lo, hi);
    float mag = fmaxf(fabsf(lo), fabsf(hi));
    float tiny = lo > 0 ? lo : 1e-30f;
    float x = expf(rng_range(logf(tiny), logf(mag))); /* test-side input only */
    if (lo < 0 && (rng_u32() & 1)) x = -x;
    return fminf(fmaxf(x, lo), hi);
}

static void test_sfpu_accuracy(void) {
    static float in[TILE_ELEMS];
    double worst[TILE_SFPU_COUNT_] = {0};
    for (size_t ci = 0; ci < sizeof sfpu_cases / sizeof sfpu_cases[0]; ci++) {
        const struct sfpu_case *sc = &sfpu_cases[ci];
        for (int rep = 0; rep < 30; rep++) {
            for (int i = 0; i < TILE_ELEMS; i++)
                in[i] = sample(sc->lo, sc->hi);
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], in, sizeof in);
            uint32_t p0 = sc->p0, p1 = sc->p1;
            if (!p0 && !p1) op_params(sc->op, &p0, &p1);
            CHECK_OK(tile_sfpu_param(&dst, 0, sc->op, p0, p1));
            double v0 = param_value(sc->op, p0), v1 = param_value(sc->op, p1);
            for (int i = 0; i < TILE_ELEMS; i++) {
                double want = ref_sfpu(sc->op, in[i], v0, v1);
                float got = dst.reg[0][i];
                if (fabs(got - want) <= sc->abs_tol) continue;
                double err = ulp_error(got, want);
                if (err > worst[sc->op]) worst[sc->op] = err;
                if (err > sc->max_ulp) {
                    char m[200];
                    snprintf(m, sizeof m, "%s(%a) = %a, want %a: %.2f ulp > %.2f",
                             tile_sfpu_op_name(sc->op), in[i], got, want, err, sc->max_ulp);
                    test_fail_(__FILE__, __LINE__, m);
                    return;
                }
            }
        }
    }
    for (int op = 1; op < TILE_SFPU_COUNT_; op++)
        if (op != TILE_SFPU_TYPECAST && !(op >= TILE_SFPU_LOGICAL_NOT && op <= TILE_SFPU_GEZ) &&
            !(op >= TILE_SFPU_UNARY_MAX && op <= TILE_SFPU_UNARY_GE))
            printf("  %-16s max error %.4f ulp\n", tile_sfpu_op_name((tile_sfpu_op)op), worst[op]);
}

/* Every 16381st float32 bit pattern through the transcendental ops. */
static void test_sfpu_sweep(void) {
    static const tile_sfpu_op ops[] = {TILE_SFPU_EXP,
                                       TILE_SFPU_LOG,
                                       TILE_SFPU_RSQRT,
                                       TILE_SFPU_SIGMOID,
                                       TILE_SFPU_TANH,
                                       TILE_SFPU_GELU,
                                       TILE_SFPU_LOG1P,
                                       TILE_SFPU_EXPM1,
                                       TILE_SFPU_ELU,
                                       TILE_SFPU_SELU,
                                       TILE_SFPU_CELU,
                                       TILE_SFPU_GELU_ERF,
                                       TILE_SFPU_SILU,
                                       TILE_SFPU_MISH,
                                       TILE_SFPU_SOFTPLUS,
                                       TILE_SFPU_SOFTSIGN,
                                       TILE_SFPU_ERF,
                                       TILE_SFPU_ERFC,
                                       TILE_SFPU_SIN,
                                       TILE_SFPU_COS,
                                       TILE_SFPU_TAN,
                                       TILE_SFPU_ASIN,
                                       TILE_SFPU_ACOS,
                                       TILE_SFPU_ATAN,
                                       TILE_SFPU_SINH,
                                       TILE_SFPU_COSH,
                                       TILE_SFPU_ASINH,
                                       TILE_SFPU_ACOSH,
                                       TILE_SFPU_ATANH,
                                       TILE_SFPU_EXP2,
                                       TILE_SFPU_LOG2,
                                       TILE_SFPU_LOG10,
                                       TILE_SFPU_CBRT,
                                       TILE_SFPU_POWER,
                                       TILE_SFPU_POWER_ITERATIVE,
                                       TILE_SFPU_HARDSWISH,
                                       TILE_SFPU_HARDSIGMOID};
    static float in[TILE_ELEMS];
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        tile_sfpu_op op = ops[oi];
        double worst = 0;
        uint64_t u = 0;
        uint32_t p0, p1;
        op_params(op, &p0, &p1);
        double v0 = param_value(op, p0), v1 = param_value(op, p1);
        while (u < 0x100000000ull) {
            for (int i = 0; i < TILE_ELEMS; i++, u += 16381)
                in[i] = u2f((uint32_t)u);
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], in, sizeof in);
            CHECK_OK(run_sfpu(&dst, 0, op));
            for (int i = 0; i < TILE_ELEMS; i++) {
                float x = in[i];
                if (isnan(x)) continue;
                if ((op == TILE_SFPU_EXP || op == TILE_SFPU_SIGMOID) && x < -103.0f) continue;
                double want = ref_sfpu(op, x, v0, v1);
                if (op == TILE_SFPU_GELU && fabs(dst.reg[0][i] - want) <= 0x1p-126) continue;
                double err = ulp_error(dst.reg[0][i], want);
                if (err > worst) worst = err;
                if (err > 0.6) {
                    char m[200];
                    snprintf(m, sizeof m, "%s(%a) = %a, want %a: %.2f ulp", tile_sfpu_op_name(op),
                             x, dst.reg[0][i], want, err);
                    test_fail_(__FILE__, __LINE__, m);
                    return;
                }
            }
        }
        printf("  sweep %-16s max error %.4f ulp\n", tile_sfpu_op_name(op), worst);
    }
}

/* log near 1 is accurate in absolute terms too (no cancellation). */
static void test_log_near_one(void) {
    static float in[TILE_ELEMS];
    for (int i = 0; i < TILE_ELEMS; i++)
        in[i] = u2f(f2u(1.0f) + (uint32_t)i - 512);
    tile_dst_init(&dst, true);
    memcpy(dst.reg[0], in, sizeof in);
    CHECK_OK(tile_sfpu(&dst, 0, TILE_SFPU_LOG));
    for (int i = 0; i < TILE_ELEMS; i++)
        CHECK(ulp_error(dst.reg[0][i], log(in[i])) <= 2.0);
}

static void test_sfpu_specials(void) {
    static const struct {
        tile_sfpu_op op;
        float in;
        uint32_t out;
    } cases[] = {
        {TILE_SFPU_EXP, INFINITY, 0x7f800000},
        {TILE_SFPU_EXP, -INFINITY, 0},
        {TILE_SFPU_EXP, 0.0f, 0x3f800000},
        {TILE_SFPU_EXP, -0.0f, 0x3f800000},
        {TILE_SFPU_EXP, 89.0f, 0x7f800000},
        {TILE_SFPU_EXP, -110.0f, 0},
        {TILE_SFPU_LOG, 0.0f, 0xff800000},
        {TILE_SFPU_LOG, -0.0f, 0xff800000},
        {TILE_SFPU_LOG, -1.0f, 0x7fc00000},
        {TILE_SFPU_LOG, INFINITY, 0x7f800000},
        {TILE_SFPU_LOG, 1.0f, 0},
        {TILE_SFPU_LOG, -INFINITY, 0x7fc00000},
        {TILE_SFPU_SQRT, -1.0f, 0x7fc00000},
        {TILE_SFPU_SQRT, -0.0f, 0x80000000},
        {TILE_SFPU_SQRT, INFINITY, 0x7f800000},
        {TILE_SFPU_RSQRT, 0.0f, 0x7f800000},
        {TILE_SFPU_RSQRT, INFINITY, 0},
        {TILE_SFPU_RSQRT, -4.0f, 0x7fc00000},
        {TILE_SFPU_RECIP, 0.0f, 0x7f800000},
        {TILE_SFPU_RECIP, -0.0f, 0xff800000},
        {TILE_SFPU_RECIP, INFINITY, 0},
        {TILE_SFPU_RELU, -0.0f, 0},
        {TILE_SFPU_RELU, -INFINITY, 0},
        {TILE_SFPU_RELU, NAN, 0x7fc00000},
        {TILE_SFPU_SIGMOID, -INFINITY, 0},
        {TILE_SFPU_SIGMOID, INFINITY, 0x3f800000},
        {TILE_SFPU_SIGMOID, 0.0f, 0x3f000000},
        {TILE_SFPU_TANH, INFINITY, 0x3f800000},
        {TILE_SFPU_TANH, -INFINITY, 0xbf800000},
        {TILE_SFPU_TANH, -0.0f, 0x80000000},
        {TILE_SFPU_GELU, -INFINITY, 0x80000000},
        {TILE_SFPU_GELU, INFINITY, 0x7f800000},
        {TILE_SFPU_GELU, 0.0f, 0},
        {TILE_SFPU_GELU, -1e30f, 0x80000000},
        {TILE_SFPU_ABS, -INFINITY, 0x7f800000},
        {TILE_SFPU_NEG, 0.0f, 0x80000000},
        {TILE_SFPU_SQUARE, 1e20f, 0x7f800000},
        {TILE_SFPU_SQUARE, -0.0f, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tile_dst_init(&dst, true);
        dst.reg[0][0] = cases[i].in;
        CHECK_OK(tile_sfpu(&dst, 0, cases[i].op));
        if (f2u(dst.reg[0][0]) != cases[i].out) {
            char m[160];
            snprintf(m, sizeof m, "%s(%a) gave bits 0x%08x, want 0x%08x",
                     tile_sfpu_op_name(cases[i].op), cases[i].in, f2u(dst.reg[0][0]), cases[i].out);
            test_fail_(__FILE__, __LINE__, m);
            return;
        }
    }
    /* Every op maps NaN to the canonical NaN, except the predicates (NaN is
     * nonzero, unordered and not finite) and the cast to Int32 (0). */
    for (int op = 1; op < TILE_SFPU_COUNT_; op++) {
        tile_dst_init(&dst, true);
        dst.reg[0][0] = u2f(0xffc12345);
        CHECK_OK(run_sfpu(&dst, 0, (tile_sfpu_op)op));
        uint32_t want = TILE_CANONICAL_NAN_BITS;
        if (op == TILE_SFPU_ISNAN || op == TILE_SFPU_NEZ || op == TILE_SFPU_UNARY_NE)
            want = 0x3f800000;
        else if ((op >= TILE_SFPU_LOGICAL_NOT && op <= TILE_SFPU_GEZ) ||
                 (op >= TILE_SFPU_UNARY_EQ && op <= TILE_SFPU_UNARY_GE) || op == TILE_SFPU_TYPECAST)
            want = 0;
        if (f2u(dst.reg[0][0]) != want) {
            char m[120];
            snprintf(m, sizeof m, "%s(NaN) gave bits 0x%08x, want 0x%08x",
                     tile_sfpu_op_name((tile_sfpu_op)op), f2u(dst.reg[0][0]), want);
            test_fail_(__FILE__, __LINE__, m);
        }
    }
}

/* The new ops' specials, with parameters: limits, signed zeros, poles. */
static void test_sfpu_specials_params(void) {
    const float inf = INFINITY;
    static const struct {
        tile_sfpu_op op;
        uint32_t p0, p1;
        float in;
        uint32_t out;
    } cases[] = {
        {TILE_SFPU_LOG1P, 0, 0, -1.0f, 0xff800000},
        {TILE_SFPU_LOG1P, 0, 0, -2.0f, 0x7fc00000},
        {TILE_SFPU_LOG1P, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_LOG1P, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_LOG1P, 0, 0, 1e-45f, 0x00000001},
        {TILE_SFPU_EXPM1, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_EXPM1, 0, 0, -INFINITY, 0xbf800000},
        {TILE_SFPU_EXPM1, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_EXPM1, 0, 0, 89.0f, 0x7f800000},
        {TILE_SFPU_SIGN, 0, 0, -0.0f, 0},
        {TILE_SFPU_SIGN, 0, 0, -1e-45f, 0xbf800000},
        {TILE_SFPU_SIGN, 0, 0, INFINITY, 0x3f800000},
        {TILE_SFPU_RELU_MAX, 0x40c00000, 0, 7.0f, 0x40c00000}, /* relu6 */
        {TILE_SFPU_RELU_MAX, 0x40c00000, 0, -7.0f, 0},
        {TILE_SFPU_RELU_MAX, 0x40c00000, 0, 5.5f, 0x40b00000},
        {TILE_SFPU_RELU_MIN, 0x3f800000, 0, -7.0f, 0x3f800000},
        {TILE_SFPU_LEAKY_RELU, 0x3dcccccd, 0, -0.0f, 0x80000000},
        {TILE_SFPU_ELU, 0x3f800000, 0, -INFINITY, 0xbf800000},
        {TILE_SFPU_ELU, 0x3f800000, 0, -0.0f, 0x80000000},
        {TILE_SFPU_SELU, 0x3f867d5f, 0x3fd62d7d, INFINITY, 0x7f800000},
        {TILE_SFPU_CELU, 0x40000000, 0, -INFINITY, 0xc0000000},
        {TILE_SFPU_GELU_ERF, 0, 0, -INFINITY, 0x80000000},
        {TILE_SFPU_GELU_ERF, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_GELU_ERF, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_GELU_ERF, 0, 0, -30.0f, 0x80000000},
        {TILE_SFPU_SILU, 0, 0, -INFINITY, 0x80000000},
        {TILE_SFPU_SILU, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_MISH, 0, 0, -INFINITY, 0x80000000},
        {TILE_SFPU_MISH, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_HARDSIGMOID, 0, 0, -3.0f, 0},
        {TILE_SFPU_HARDSIGMOID, 0, 0, 0.0f, 0x3f000000},
        {TILE_SFPU_HARDSWISH, 0, 0, -INFINITY, 0x80000000},
        {TILE_SFPU_HARDSWISH, 0, 0, -5.0f, 0x80000000},
        {TILE_SFPU_HARDSWISH, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_HARDTANH, 0xbf800000, 0x3f800000, -INFINITY, 0xbf800000},
        {TILE_SFPU_SOFTPLUS, 0x3f800000, 0x41a00000, 20.5f, 0x41a40000}, /* above threshold: x */
        {TILE_SFPU_SOFTPLUS, 0x3f800000, 0x41a00000, -INFINITY, 0},
        {TILE_SFPU_SOFTPLUS, 0x3f800000, 0x41a00000, INFINITY, 0x7f800000},
        {TILE_SFPU_SOFTPLUS, 0x3f800000, 0x41a00000, 0.0f, 0x3f317218}, /* log 2 */
        {TILE_SFPU_SOFTSIGN, 0, 0, -INFINITY, 0xbf800000},
        {TILE_SFPU_ERF, 0, 0, INFINITY, 0x3f800000},
        {TILE_SFPU_ERF, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_ERF, 0, 0, -INFINITY, 0xbf800000},
        {TILE_SFPU_ERFC, 0, 0, -INFINITY, 0x40000000},
        {TILE_SFPU_ERFC, 0, 0, INFINITY, 0},
        {TILE_SFPU_ERFC, 0, 0, 11.0f, 0},
        {TILE_SFPU_SIN, 0, 0, INFINITY, 0x7fc00000},
        {TILE_SFPU_SIN, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_COS, 0, 0, -INFINITY, 0x7fc00000},
        {TILE_SFPU_COS, 0, 0, -0.0f, 0x3f800000},
        {TILE_SFPU_TAN, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_TAN, 0, 0, 0x1.921fb6p+0f, 0xcbae8a4a}, /* float(pi/2): -22877332 */
        {TILE_SFPU_ASIN, 0, 0, 1.0f, 0x3fc90fdb},
        {TILE_SFPU_ASIN, 0, 0, -1.0f, 0xbfc90fdb},
        {TILE_SFPU_ASIN, 0, 0, 1.0000001f, 0x7fc00000},
        {TILE_SFPU_ACOS, 0, 0, -1.0f, 0x40490fdb},
        {TILE_SFPU_ACOS, 0, 0, 1.0f, 0},
        {TILE_SFPU_ACOS, 0, 0, -1.0000001f, 0x7fc00000},
        {TILE_SFPU_ATAN, 0, 0, INFINITY, 0x3fc90fdb},
        {TILE_SFPU_ATAN, 0, 0, -INFINITY, 0xbfc90fdb},
        {TILE_SFPU_ATAN, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_SINH, 0, 0, -INFINITY, 0xff800000},
        {TILE_SFPU_SINH, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_SINH, 0, 0, 89.5f, 0x7f800000},
        {TILE_SFPU_SINH, 0, 0, 89.4f, 0x7f7bf0c0},
        {TILE_SFPU_COSH, 0, 0, -INFINITY, 0x7f800000},
        {TILE_SFPU_COSH, 0, 0, 0.0f, 0x3f800000},
        {TILE_SFPU_ASINH, 0, 0, -INFINITY, 0xff800000},
        {TILE_SFPU_ASINH, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_ACOSH, 0, 0, 1.0f, 0},
        {TILE_SFPU_ACOSH, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_ACOSH, 0, 0, 0.999f, 0x7fc00000},
        {TILE_SFPU_ACOSH, 0, 0, -5.0f, 0x7fc00000},
        {TILE_SFPU_ATANH, 0, 0, 1.0f, 0x7f800000},
        {TILE_SFPU_ATANH, 0, 0, -1.0f, 0xff800000},
        {TILE_SFPU_ATANH, 0, 0, -1.5f, 0x7fc00000},
        {TILE_SFPU_ATANH, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_FLOOR, 0, 0, -0.5f, 0xbf800000},
        {TILE_SFPU_FLOOR, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_CEIL, 0, 0, -0.5f, 0x80000000},
        {TILE_SFPU_CEIL, 0, 0, 0.25f, 0x3f800000},
        {TILE_SFPU_ROUND, 0, 0, 2.5f, 0x40000000},
        {TILE_SFPU_ROUND, 0, 0, -0.5f, 0x80000000},
        {TILE_SFPU_ROUND, 0, 0, 3.5f, 0x40800000},
        {TILE_SFPU_ROUND, 0, 0, -INFINITY, 0xff800000},
        {TILE_SFPU_TRUNC, 0, 0, -0.75f, 0x80000000},
        {TILE_SFPU_TRUNC, 0, 0, 8388607.5f, 0x4afffffe},
        {TILE_SFPU_FRAC, 0, 0, -1.25f, 0xbe800000},
        {TILE_SFPU_FRAC, 0, 0, -2.0f, 0},
        {TILE_SFPU_FRAC, 0, 0, INFINITY, 0x7fc00000},
        {TILE_SFPU_CLAMP, 0x40000000, 0x3f800000, -5.0f, 0x3f800000}, /* min > max: max */
        {TILE_SFPU_CLAMP, 0x7fc00000, 0x3f800000, 0.5f, 0x7fc00000},  /* NaN bound */
        {TILE_SFPU_LOGICAL_NOT, 0, 0, -0.0f, 0x3f800000},
        {TILE_SFPU_ISINF, 0, 0, -INFINITY, 0x3f800000},
        {TILE_SFPU_ISPOSINF, 0, 0, -INFINITY, 0},
        {TILE_SFPU_ISNEGINF, 0, 0, -INFINITY, 0x3f800000},
        {TILE_SFPU_ISFINITE, 0, 0, FLT_MAX, 0x3f800000},
        {TILE_SFPU_ISFINITE, 0, 0, INFINITY, 0},
        {TILE_SFPU_EQZ, 0, 0, -0.0f, 0x3f800000},
        {TILE_SFPU_LTZ, 0, 0, -0.0f, 0},
        {TILE_SFPU_GEZ, 0, 0, -0.0f, 0x3f800000},
        {TILE_SFPU_EXP2, 0, 0, -149.0f, 0x00000001},
        {TILE_SFPU_EXP2, 0, 0, 128.0f, 0x7f800000},
        {TILE_SFPU_EXP2, 0, 0, 127.0f, 0x7f000000},
        {TILE_SFPU_EXP2, 0, 0, -INFINITY, 0},
        {TILE_SFPU_LOG2, 0, 0, 1e-45f, 0xc3150000}, /* -149 */
        {TILE_SFPU_LOG2, 0, 0, 0x1p-126f, 0xc2fc0000},
        {TILE_SFPU_LOG2, 0, 0, 0.0f, 0xff800000},
        {TILE_SFPU_LOG2, 0, 0, -1.0f, 0x7fc00000},
        {TILE_SFPU_LOG10, 0, 0, 1e10f, 0x41200000},
        {TILE_SFPU_LOG10, 0, 0, 1000.0f, 0x40400000},
        {TILE_SFPU_LOG10, 0, 0, INFINITY, 0x7f800000},
        {TILE_SFPU_CBRT, 0, 0, -27.0f, 0xc0400000},
        {TILE_SFPU_CBRT, 0, 0, -0.0f, 0x80000000},
        {TILE_SFPU_CBRT, 0, 0, -INFINITY, 0xff800000},
        {TILE_SFPU_CBRT, 0, 0, 1e-45f, 0x26a14518},
        {TILE_SFPU_POWER, 0x3f000000, 0, -4.0f, 0x7fc00000}, /* negative ^ 0.5 */
        {TILE_SFPU_POWER, 0x3f000000, 0, -INFINITY, 0x7f800000},
        {TILE_SFPU_POWER, 0x40400000, 0, -2.0f, 0xc1000000}, /* (-2)^3 */
        {TILE_SFPU_POWER, 0x40400000, 0, -0.0f, 0x80000000},
        {TILE_SFPU_POWER, 0xc0400000, 0, -0.0f, 0xff800000}, /* (-0)^-3 */
        {TILE_SFPU_POWER, 0xc0000000, 0, -0.0f, 0x7f800000}, /* (-0)^-2 */
        {TILE_SFPU_POWER, 0, 0, NAN, 0x3f800000},            /* x^0 */
        {TILE_SFPU_POWER, 0x7fc00000, 0, 1.0f, 0x3f800000},  /* 1^NaN */
        {TILE_SFPU_POWER, 0x7f800000, 0, -1.0f, 0x3f800000}, /* (-1)^Inf */
        {TILE_SFPU_POWER, 0x7f800000, 0, 0.5f, 0},
        {TILE_SFPU_POWER, 0xff800000, 0, 0.5f, 0x7f800000},
        {TILE_SFPU_POWER, 0x40000000, 0, 3.0f, 0x41100000},
        {TILE_SFPU_POWER_ITERATIVE, 0, 0, 0.0f, 0x3f800000},
        {TILE_SFPU_POWER_ITERATIVE, 16777217, 0, -1.0f, 0xbf800000}, /* odd beyond 2^24 */
        {TILE_SFPU_POWER_ITERATIVE, 4294967295u, 0, -1.0f, 0xbf800000},
        {TILE_SFPU_POWER_ITERATIVE, 2, 0, -3.0f, 0x41100000},
        {TILE_SFPU_POWER_ITERATIVE, 129, 0, 2.0f, 0x7f800000},
        {TILE_SFPU_HEAVISIDE, 0x3f000000, 0, -0.0f, 0x3f000000},
        {TILE_SFPU_HEAVISIDE, 0x3f000000, 0, -INFINITY, 0},
        {TILE_SFPU_DIV_UNARY, 0, 0, 1.0f, 0x7f800000},
        {TILE_SFPU_RSUB_UNARY, 0x3f800000, 0, 1.0f, 0},
        {TILE_SFPU_UNARY_MAX, 0x7fc00000, 0, 1.0f, 0x7fc00000},
        {TILE_SFPU_UNARY_MIN, 0xff800000, 0, 1.0f, 0xff800000},
        {TILE_SFPU_UNARY_EQ, 0x80000000, 0, 0.0f, 0x3f800000},
        {TILE_SFPU_UNARY_NE, 0x7fc00000, 0, 0.0f, 0x3f800000},
        {TILE_SFPU_UNARY_LE, 0x3f800000, 0, 1.0f, 0x3f800000},
        {TILE_SFPU_UNARY_LT, 0x3f800000, 0, 1.0f, 0},
    };
    (void)inf;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tile_dst_init(&dst, true);
        dst.reg[0][0] = cases[i].in;
        CHECK_OK(tile_sfpu_param(&dst, 0, cases[i].op, cases[i].p0, cases[i].p1));
        if (f2u(dst.reg[0][0]) != cases[i].out) {
            char m[200];
            snprintf(m, sizeof m, "%s(%a; 0x%08x, 0x%08x) gave bits 0x%08x, want 0x%08x",
                     tile_sfpu_op_name(cases[i].op), cases[i].in, cases[i].p0, cases[i].p1,
                     f2u(dst.reg[0][0]), cases[i].out);
            test_fail_(__FILE__, __LINE__, m);
        }
    }
}

/* The exact ops against their definitions bit for bit, on random values of
 * every magnitude and on the edges: rounding (torch.round's decimals with
 * torch's float32 steps), comparisons, scalar arithmetic, predicates. */
static float torch_round(float x, int d) {
    float p = (float)pow(10.0, d < 0 ? -d : d);
    return d == 0 ? nearbyintf(x) : d > 0 ? nearbyintf(x * p) / p : nearbyintf(x / p) * p;
}

static void fill_mixed(float *t);

static void test_sfpu_exact_ops(void) {
    static float in[TILE_ELEMS];
    static const int decimals[] = {0, 1, 2, 3, -1, -2, 5, 10, 22, 23, 30, 38, -38, -10};
    for (int rep = 0; rep < 16; rep++) {
        fill_mixed(in);
        for (int i = 0; i < 64; i++)
            in[i] = (float)(i - 32) * 0.25f + (rep & 1 ? 0.125f : 0.0f); /* ties */
        for (size_t k = 0; k < sizeof decimals / sizeof decimals[0]; k++) {
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], in, sizeof in);
            CHECK_OK(tile_sfpu_param(&dst, 0, TILE_SFPU_ROUND, (uint32_t)decimals[k], 0));
            for (int i = 0; i < TILE_ELEMS; i++) {
                float want = torch_round(in[i], decimals[k]);
                if (f2u(dst.reg[0][i]) != f2u(want) && !(isnan(want) && isnan(dst.reg[0][i]))) {
                    char m[160];
                    snprintf(m, sizeof m, "round(%a, %d) = %a, want %a", in[i], decimals[k],
                             dst.reg[0][i], want);
                    test_fail_(__FILE__, __LINE__, m);
                    return;
                }
            }
        }
        static const tile_sfpu_op exact[] = {
            TILE_SFPU_FLOOR,     TILE_SFPU_CEIL,        TILE_SFPU_TRUNC,      TILE_SFPU_FRAC,
            TILE_SFPU_SIGN,      TILE_SFPU_RELU_MAX,    TILE_SFPU_RELU_MIN,   TILE_SFPU_CLAMP,
            TILE_SFPU_HARDTANH,  TILE_SFPU_LOGICAL_NOT, TILE_SFPU_ISNAN,      TILE_SFPU_ISINF,
            TILE_SFPU_ISPOSINF,  TILE_SFPU_ISNEGINF,    TILE_SFPU_ISFINITE,   TILE_SFPU_EQZ,
            TILE_SFPU_NEZ,       TILE_SFPU_LTZ,         TILE_SFPU_GTZ,        TILE_SFPU_LEZ,
            TILE_SFPU_GEZ,       TILE_SFPU_HEAVISIDE,   TILE_SFPU_ADD_UNARY,  TILE_SFPU_SUB_UNARY,
            TILE_SFPU_MUL_UNARY, TILE_SFPU_DIV_UNARY,   TILE_SFPU_RSUB_UNARY, TILE_SFPU_UNARY_MAX,
            TILE_SFPU_UNARY_MIN, TILE_SFPU_UNARY_EQ,    TILE_SFPU_UNARY_NE,   TILE_SFPU_UNARY_LT,
            TILE_SFPU_UNARY_LE,  TILE_SFPU_UNARY_GT,    TILE_SFPU_UNARY_GE,   TILE_SFPU_LEAKY_RELU,
        };
        for (size_t k = 0; k < sizeof exact / sizeof exact[0]; k++) {
            tile_sfpu_op op = exact[k];
            uint32_t p0, p1;
            op_params(op, &p0, &p1);
            if (rep & 2 && op >= TILE_SFPU_ADD_UNARY) p0 = f2u(in[rep]); /* any scalar */
            double v0 = param_value(op, p0), v1 = param_value(op, p1);
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], in, sizeof in);
            CHECK_OK(tile_sfpu_param(&dst, 0, op, p0, p1));
            for (int i = 0; i < TILE_ELEMS; i++) {
                /* the single float32 operations round the exact value once */
                float want = (float)ref_sfpu(op, in[i], v0, v1);
                if (op == TILE_SFPU_FRAC) want = in[i] - truncf(in[i]);
                if (op == TILE_SFPU_UNARY_MAX || op == TILE_SFPU_UNARY_MIN)
                    if (isnan(v0)) want = NAN;
                if (f2u(dst.reg[0][i]) != f2u(want) && !(isnan(want) && isnan(dst.reg[0][i]))) {
                    char m[160];
                    snprintf(m, sizeof m, "%s(%a; %a) = %a, want %a", tile_sfpu_op_name(op), in[i],
                             v0, dst.reg[0][i], want);
                    test_fail_(__FILE__, __LINE__, m);
                    return;
                }
            }
        }
    }
}

/* Parameters an op cannot take fault, naming the call; dst is untouched. */
static void test_sfpu_param_errors(void) {
    const lm_status E = LM_ERR_INVALID_ARGUMENT;
    tile_dst_init(&dst, false);
    dst.reg[3][0] = 1.5f;
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_HARDTANH, F32(2.0f), F32(1.0f)), E,
                "hardtanh_tile: min 2 must not be above max 1");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_HARDTANH, F32(NAN), F32(1.0f)), E,
                "hardtanh_tile: min nan");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_SOFTPLUS, F32(0.0f), F32(20.0f)), E,
                "softplus_tile: beta 0 must be a nonzero number");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_CELU, F32(-0.0f), 0), E,
                "celu_tile: alpha -0 must be a nonzero number");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_ROUND, 39, 0), E,
                "round_tile: decimals 39 out of range (-38..38 for float32)");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_ROUND, (uint32_t)-40, 0), E,
                "round_tile: decimals -40 out of range");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_TYPECAST, LM_DATA_FORMAT_FLOAT32, 9), E,
                "typecast_tile: no cast from data format 1 to 9");
    CHECK_FAILS(tile_sfpu_param(&dst, 3, TILE_SFPU_TYPECAST, 0, LM_DATA_FORMAT_INT32), E,
                "typecast_tile: no cast from data format 0 to 5");
    CHECK_FAILS(tile_sfpu_param(&dst, 16, TILE_SFPU_ERF, 0, 0), E,
                "erf_tile: dst index 16 out of range");
    CHECK_FAILS(tile_sfpu_param(&dst, 0, (tile_sfpu_op)200, 0, 0), E,
                "sfpu: unknown operation 200");
    CHECK(dst.reg[3][0] == 1.5f);
    CHECK_EQ_U64(tile_sfpu_op_params(TILE_SFPU_SELU), 2);
    CHECK_EQ_U64(tile_sfpu_op_params(TILE_SFPU_EXP), 0);
    CHECK_EQ_U64(tile_sfpu_op_params(TILE_SFPU_ROUND), 1);
    CHECK_EQ_U64(tile_sfpu_op_params(TILE_SFPU_COUNT_), 0);
    CHECK(strcmp(tile_sfpu_op_name(TILE_SFPU_LOGICAL_NOT), "logical_not_unary") == 0);
    CHECK(strcmp(tile_sfpu_op_name(TILE_SFPU_POWER_ITERATIVE), "power_iterative") == 0);
    CHECK(strcmp(tile_dst_binary_name(TILE_DST_BINARY_REMAINDER), "remainder_binary_tile") == 0);
    CHECK(strcmp(tile_dst_binary_name(TILE_DST_BINARY_COUNT_), "invalid") == 0);
    CHECK_FAILS(tile_dst_binary(&dst, (tile_dst_binary_op)21, 0, 1, 2), E,
                "binary SFPU: unknown operation 21");
    CHECK_FAILS(tile_dst_binary(&dst, TILE_DST_BINARY_ATAN2, 0, 16, 2), E,
                "atan2_binary_tile: dst index 16 out of range");
    CHECK_FAILS(tile_where(&dst, 0, 1, 2, 16, false), E, "where_tile: dst index 16 out of range");
    CHECK_FAILS(tile_where(&dst, 16, 1, 2, 3, true), E, "where_int32_tile: dst index 16");
}

/* typecast_tile: truncation and saturation to integers (NaN -> 0), rounding
 * to nearest from integers, to bfloat16 once where the result is bfloat16,
 * integers held raw in either dst mode. */
static void test_typecast(void) {
    enum {
        F32F = LM_DATA_FORMAT_FLOAT32,
        BF16 = LM_DATA_FORMAT_FLOAT16_B,
        BFP8 = LM_DATA_FORMAT_BFP8_B,
        I32 = LM_DATA_FORMAT_INT32,
        U32 = LM_DATA_FORMAT_UINT32
    };
    static const struct {
        uint32_t in, out;
        uint32_t x, want;
    } cases[] = {
        {F32F, I32, 0x3fffffff, 1},           /* 1.99999988 */
        {F32F, I32, 0xbfffffff, 0xffffffffu}, /* -1.99999988 -> -1 */
        {F32F, I32, 0x4f000000, 0x7fffffff},  /* 2^31 saturates */
        {F32F, I32, 0xcf000000, 0x80000000},  /* -2^31 exactly */
        {F32F, I32, 0xff800000, 0x80000000},
        {F32F, I32, 0x7fc00000, 0},
        {F32F, I32, 0x4effffff, 2147483520},
        {F32F, U32, 0xbf7fffff, 0},           /* -0.99999994 -> 0 */
        {F32F, U32, 0xc0000000, 0},           /* negative saturates at 0 */
        {F32F, U32, 0x4f800000, 0xffffffffu}, /* 2^32 */
        {F32F, U32, 0x4f7fffff, 0xffffff00u},
        {BF16, I32, 0x42f60000, 123},
        {BFP8, U32, 0x43800000, 256},
        {I32, F32F, 16777217, 0x4b800000}, /* ties to even */
        {I32, F32F, 16777219, 0x4b800002},
        {I32, F32F, 0x80000000, 0xcf000000},
        {I32, F32F, 0xffffffffu, 0xbf800000},
        {U32, F32F, 0xffffffffu, 0x4f800000},
        {I32, BF16, 0x01010001, 0x4b810000}, /* rounded once: just above the tie, up */
        {I32, BF16, 0x01010000, 0x4b800000}, /* a tie: to even, down */
        {I32, BF16, 0x01030000, 0x4b820000}, /* a tie: to even, up */
        {U32, BFP8, 0xffffffffu, 0x4f800000},
        {I32, U32, 0xfffffffeu, 0xfffffffeu}, /* integers keep their bits */
        {U32, I32, 0x80000001u, 0x80000001u},
        {F32F, BF16, 0x3f808000, 0x3f800000}, /* tie to even */
        {F32F, BF16, 0x3f818000, 0x3f820000},
        {F32F, BF16, 0x7f7fffff, 0x7f800000}, /* rounds to Inf */
        {F32F, BF16, 0x00008001, 0x00010000}, /* subnormal */
        {BF16, F32F, 0x40490000, 0x40490000},
        {F32F, F32F, 0x3f800001, 0x3f800001},
    };
    for (int fp32 = 1; fp32 >= 0; fp32--)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            bool to_int = cases[i].out == I32 || cases[i].out == U32;
            /* 16-bit dst: float results end as bfloat16, rounded once */
            uint32_t want = cases[i].want;
            if (!fp32 && !to_int) {
                uint32_t x = cases[i].x;
                if (cases[i].in == I32 || cases[i].in == U32) {
                    double v = cases[i].in == I32 ? (double)(int32_t)x : (double)x;
                    /* the nearer bfloat16 neighbour of v (near float(v)) */
                    uint32_t b = f2u((float)v);
                    double lo = u2f(b & 0xffff0000u), hi = u2f((b & 0xffff0000u) + 0x10000u);
                    double dl = fabs(v - lo), dh = fabs(v - hi);
                    uint32_t lb = f2u((float)lo), hb = f2u((float)hi);
                    want = dl < dh ? lb : dh < dl ? hb : (lb >> 16) & 1 ? hb : lb;
                } else {
                    want = (want + 0x7fffu + ((want >> 16) & 1u)) & 0xffff0000u;
                }
            }
            tile_dst_init(&dst, fp32);
            uint32_t x = cases[i].x;
            for (int e = 0; e < TILE_ELEMS; e++)
                memcpy(&dst.reg[1][e], &x, 4);
            CHECK_OK(tile_sfpu_param(&dst, 1, TILE_SFPU_TYPECAST, cases[i].in, cases[i].out));
            if (f2u(dst.reg[1][5]) != want) {
                char m[160];
                snprintf(
                    m, sizeof m, "typecast %u -> %u (%s dst) of 0x%08x gave 0x%08x, want 0x%08x",
                    cases[i].in, cases[i].out, fp32 ? "fp32" : "bf16", x, f2u(dst.reg[1][5]), want);
                test_fail_(__FILE__, __LINE__, m);
            }
        }
    /* Random integers through float and back: as C's conversions. */
    tile_dst_init(&dst, true);
    for (int i = 0; i < TILE_ELEMS; i++) {
        int32_t v = (int32_t)(rng_u32() % 33554432u) - 16777216;
        memcpy(&dst.reg[0][i], &v, 4);
    }
    static float keep[TILE_ELEMS];
    memcpy(keep, dst.reg[0], sizeof keep);
    CHECK_OK(tile_sfpu_param(&dst, 0, TILE_SFPU_TYPECAST, I32, F32F));
    for (int i = 0; i < TILE_ELEMS; i++) {
        int32_t v;
        memcpy(&v, &keep[i], 4);
        CHECK(dst.reg[0][i] == (float)v);
    }
    CHECK_OK(tile_sfpu_param(&dst, 0, TILE_SFPU_TYPECAST, F32F, I32));
    for (int i = 0; i < TILE_ELEMS; i++) {
        int32_t v, w;
        memcpy(&v, &keep[i], 4);
        memcpy(&w, &dst.reg[0][i], 4);
        CHECK(w == (int32_t)(float)v);
    }
}

/* ---- dst-to-dst binary SFPU ------------------------------------------------ */

static double ref_dst_binary(tile_dst_binary_op op, float x, float y) {
    switch (op) {
    case TILE_DST_BINARY_POWER:
        return pow(x, y);
    case TILE_DST_BINARY_EQ:
        return x == y;
    case TILE_DST_BINARY_NE:
        return x != y;
    case TILE_DST_BINARY_LT:
        return x < y;
    case TILE_DST_BINARY_LE:
        return x <= y;
    case TILE_DST_BINARY_GT:
        return x > y;
    case TILE_DST_BINARY_GE:
        return x >= y;
    case TILE_DST_BINARY_LOGICAL_AND:
        return x != 0 && y != 0;
    case TILE_DST_BINARY_LOGICAL_OR:
        return x != 0 || y != 0;
    case TILE_DST_BINARY_LOGICAL_XOR:
        return (x != 0) != (y != 0);
    case TILE_DST_BINARY_ATAN2:
        return atan2(x, y);
    case TILE_DST_BINARY_FMOD:
        return fmodf(x, y);
    case TILE_DST_BINARY_REMAINDER: { /* torch's definition */
        float m = fmodf(x, y);
        return m != 0 && (y < 0) != (m < 0) ? m + y : m;
    }
    default:
        return NAN;
    }
}

/* power and atan2 within 0.6 ulp of libm's float64 results; the others
 * exact, on random and edge operands (negative bases with integer exponents,
 * zeros, infinities, subnormals). */
static void test_dst_binary_new_ops(void) {
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    double worst[TILE_DST_BINARY_COUNT_] = {0};
    for (int rep = 0; rep < 60; rep++) {
        if (rep % 3 == 0) {
            fill_mixed(a);
            fill_mixed(b);
        } else {
            for (int i = 0; i < TILE_ELEMS; i++) {
                a[i] = sample(-100.0f, 100.0f);
                b[i] = rep % 3 == 1 ? sample(-40.0f, 40.0f) : (float)((int)(rng_u32() % 41) - 20);
            }
        }
        for (int i = 0; i < 8; i++) /* equal pairs for the comparisons */
            b[i * 9] = a[i * 9];
        for (int op = TILE_DST_BINARY_POWER; op < TILE_DST_BINARY_COUNT_; op++) {
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], a, sizeof a);
            memcpy(dst.reg[1], b, sizeof b);
            CHECK_OK(tile_dst_binary(&dst, (tile_dst_binary_op)op, 0, 1, 2));
            bool approx = op == TILE_DST_BINARY_POWER || op == TILE_DST_BINARY_ATAN2;
            for (int i = 0; i < TILE_ELEMS; i++) {
                double want = ref_dst_binary((tile_dst_binary_op)op, a[i], b[i]);
                float got = dst.reg[2][i];
                double err = approx ? ulp_error(got, want)
                             : f2u(got) == f2u((float)want) || (isnan(got) && isnan(want))
                                 ? 0
                                 : INFINITY;
                if (err > worst[op]) worst[op] = err;
                if (err > (approx ? 0.6 : 0)) {
                    char m[200];
                    snprintf(m, sizeof m, "%s(%a, %a) = %a, want %a",
                             tile_dst_binary_name((tile_dst_binary_op)op), a[i], b[i], got, want);
                    test_fail_(__FILE__, __LINE__, m);
                    return;
                }
            }
        }
    }
    printf("  power_binary max error %.4f ulp, atan2_binary %.4f ulp\n",
           worst[TILE_DST_BINARY_POWER], worst[TILE_DST_BINARY_ATAN2]);
    /* atan2's signed zeros and infinities, as C */
    static const struct {
        float y, x;
        uint32_t out;
    } at[] = {
        {0.0f, -0.0f, 0x40490fdb},        {-0.0f, -0.0f, 0xc0490fdb},
        {-0.0f, 0.0f, 0x80000000},        {0.0f, -1.0f, 0x40490fdb},
        {1.0f, 0.0f, 0x3fc90fdb},         {-1.0f, -0.0f, 0xbfc90fdb},
        {INFINITY, INFINITY, 0x3f490fdb}, {-INFINITY, -INFINITY, 0xc016cbe4},
        {1.0f, -INFINITY, 0x40490fdb},    {-1.0f, INFINITY, 0x80000000},
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        tile_dst_init(&dst, true);
        dst.reg[0][0] = at[i].y;
        dst.reg[1][0] = at[i].x;
        CHECK_OK(tile_dst_binary(&dst, TILE_DST_BINARY_ATAN2, 0, 1, 0));
        CHECK_EQ_U64(f2u(dst.reg[0][0]), at[i].out);
    }
}

/* where_tile: NaN conditions are true, -0 false; the raw form moves integer
 * bits (NaN-looking ones too) untouched, also in 16-bit dst. */
static void test_where(void) {
    for (int fp32 = 0; fp32 < 2; fp32++) {
        tile_dst_init(&dst, fp32);
        for (int i = 0; i < TILE_ELEMS; i++) {
            dst.reg[0][i] = i % 4 == 0 ? 0.0f : i % 4 == 1 ? -0.0f : i % 4 == 2 ? NAN : -2.0f;
            dst.reg[1][i] = (float)(i % 128); /* exact in bfloat16 too */
            dst.reg[2][i] = -(float)(i % 64) - 0.5f;
            uint32_t ia = 0x7f800001u + (uint32_t)i, ib = (uint32_t)i * 3u;
            memcpy(&dst.reg[3][i], &ia, 4);
            memcpy(&dst.reg[4][i], &ib, 4);
        }
        CHECK_OK(tile_where(&dst, 0, 1, 2, 5, false));
        CHECK_OK(tile_where(&dst, 4, 3, 1, 6, true));  /* integer condition: nonzero bits */
        CHECK_OK(tile_where(&dst, 0, 1, 2, 0, false)); /* out = cond */
        for (int i = 0; i < TILE_ELEMS; i++) {
            float want = i % 4 < 2 ? -(float)(i % 64) - 0.5f : (float)(i % 128);
            CHECK(dst.reg[5][i] == want && dst.reg[0][i] == want);
            uint32_t got;
            memcpy(&got, &dst.reg[6][i], 4);
            CHECK_EQ_U64(got, i == 0 ? f2u(dst.reg[1][0]) : 0x7f800001u + (uint32_t)i);
        }
    }
}

/* ---- fmaf ------------------------------------------------------------------ */

/* fma(a, b, c) for floats by a route independent of fmaf: a * b is exact in
 * float64; the float64 sum is rounded to odd (TwoSum gives the exact error),
 * and rounding that to float32 is then correct (53 >= 24 + 2 bits). */
static float ref_fmaf(float a, float b, float c) {
    double p = (double)a * b, cd = c;
    double s = p + cd;
    if (!isfinite(s)) return (float)s;
    double bb = s - p;
    double err = (p - (s - bb)) + (cd - bb);
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    if (err != 0 && !(bits & 1)) bits += (err > 0) == (s > 0) ? 1 : (uint64_t)-1;
    memcpy(&s, &bits, sizeof s);
    return (float)s;
}

/* matmul and reduce rely on fmaf being correctly rounded (C11 F.10.10.1), in
 * hardware or in libm; check it on this host, near-ties included. */
static void test_fmaf_correctly_rounded(void) {
    for (int i = 0; i < 200000; i++) {
        float a = u2f((rng_u32() & 0x807fffffu) | (uint32_t)(100 + rng_u32() % 56) << 23);
        float b = u2f((rng_u32() & 0x807fffffu) | (uint32_t)(100 + rng_u32() % 56) << 23);
        float c = (rng_u32() & 1) ? -(a * b) : u2f(rng_u32() ^ (rng_u32() << 16));
        if (i % 3 == 0) c = u2f(f2u(a * b) ^ 1u); /* a neighbour of the product */
        float want = ref_fmaf(a, b, c), got = fmaf(a, b, c);
        if (isnan(want)) {
            CHECK(isnan(got));
            continue;
        }
        CHECK_EQ_U64(f2u(got), f2u(want));
    }
}

/* ---- AVX2 vs portable ------------------------------------------------------ */

/* Inputs mixing random values of every magnitude with edge values. */
static void fill_mixed(float *t) {
    static const float edges[] = {0.0f,      -0.0f,   1.0f,     -1.0f,      INFINITY,
                                  -INFINITY, NAN,     FLT_MAX,  -FLT_MAX,   FLT_MIN,
                                  1e-45f,    -1e-45f, 88.72f,   -103.9f,    0.55f,
                                  -0.55f,    1e-20f,  3.0e-39f, 1.4142135f, 0.70710677f};
    for (int i = 0; i < TILE_ELEMS; i++) {
        uint32_t k = rng_u32() % 4;
        if (k == 0)
            t[i] = edges[rng_u32() % (sizeof edges / sizeof edges[0])];
        else if (k == 1)
            t[i] = u2f(rng_u32() ^ (rng_u32() << 16)); /* any bit pattern */
        else
            t[i] = rng_range(-30, 30);
    }
}

/* Runs every op once with the current kernel set into dst registers of `d`. */
static void run_all_ops(tile_dst *d, const float *a, const float *b) {
    int n = 0;
    for (int op = TILE_BINARY_ADD; op <= TILE_BINARY_MUL; op++)
        for (int bc = TILE_BCAST_NONE; bc <= TILE_BCAST_SCALAR; bc++)
            (void)tile_binary(d, (uint32_t)(n++ % 8), (tile_binary_op)op, (tile_bcast)bc, a, b,
                              false);
    memcpy(d->reg[0], b, sizeof d->reg[0]);
    (void)tile_matmul(d, 0, a, b, false);
    memcpy(d->reg[1], a, sizeof d->reg[1]);
    (void)tile_matmul(d, 1, a, b, true);
    for (int op = 1; op < TILE_SFPU_COUNT_; op++) {
        memcpy(d->reg[2 + op % 6], a, sizeof d->reg[0]);
        (void)run_sfpu(d, (uint32_t)(2 + op % 6), (tile_sfpu_op)op);
    }
    /* typecast both ways, float to float, and a round with decimals */
    static const uint32_t casts[][2] = {
        {LM_DATA_FORMAT_FLOAT32, LM_DATA_FORMAT_UINT32},
        {LM_DATA_FORMAT_INT32, LM_DATA_FORMAT_FLOAT32},
        {LM_DATA_FORMAT_UINT32, LM_DATA_FORMAT_FLOAT16_B},
        {LM_DATA_FORMAT_FLOAT32, LM_DATA_FORMAT_BFP8_B},
    };
    for (int c = 0; c < 4; c++) {
        memcpy(d->reg[c], c & 1 ? b : a, sizeof d->reg[0]);
        (void)tile_sfpu_param(d, (uint32_t)c, TILE_SFPU_TYPECAST, casts[c][0], casts[c][1]);
    }
    memcpy(d->reg[4], a, sizeof d->reg[0]);
    (void)tile_sfpu_param(d, 4, TILE_SFPU_ROUND, 2, 0);
    for (int op = 1; op < TILE_DST_BINARY_COUNT_; op++) {
        memcpy(d->reg[5], a, sizeof d->reg[0]);
        memcpy(d->reg[6], b, sizeof d->reg[0]);
        (void)tile_dst_binary(d, (tile_dst_binary_op)op, 5, 6, (uint32_t)(op % 5));
    }
    (void)tile_where(d, 6, 5, 4, 7, false);
    (void)tile_where(d, 6, 5, 4, 3, true);
}

/* Every op of kernel set `name` against the portable set, the state after
 * each single op compared, not only at the end. */
static void simd_matches_portable(const char *name) {
    static tile_dst d1, d2;
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    for (int rep = 0; rep < 40; rep++) {
        bool fp32 = rep & 1;
        if (rep < 20) {
            fill_mixed(a);
            fill_mixed(b);
        } else {
            fill_random(a, -2, 2);
            fill_random(b, -2, 2);
        }
        for (int op = 1; op < TILE_SFPU_COUNT_; op++) {
            tile_dst_init(&d1, fp32);
            tile_dst_init(&d2, fp32);
            memcpy(d1.reg[0], a, sizeof a);
            memcpy(d2.reg[0], a, sizeof a);
            CHECK(tile_force_kernels("portable"));
            CHECK_OK(run_sfpu(&d1, 0, (tile_sfpu_op)op));
            CHECK(tile_force_kernels(name));
            CHECK_OK(run_sfpu(&d2, 0, (tile_sfpu_op)op));
            if (memcmp(d1.reg[0], d2.reg[0], sizeof a) != 0) {
                for (int i = 0; i < TILE_ELEMS; i++)
                    if (f2u(d1.reg[0][i]) != f2u(d2.reg[0][i])) {
                        char m[200];
                        snprintf(m, sizeof m, "%s(%a): portable %a, %s %a",
                                 tile_sfpu_op_name((tile_sfpu_op)op), a[i], d1.reg[0][i], name,
                                 d2.reg[0][i]);
                        test_fail_(__FILE__, __LINE__, m);
                        tile_force_kernels(NULL);
                        return;
                    }
            }
        }
        /* Matmuls on their own (run_all_ops' later ops overwrite theirs),
         * accumulating onto a nonzero dst, plain and with B transposed;
         * then the identity times values halfway between two bfloat16s
         * (bf16 rounding's ties, both ways). */
        static float eye[TILE_ELEMS], ties[TILE_ELEMS];
        for (int i = 0; i < TILE_ELEMS; i++) {
            eye[i] = i / TILE_DIM == i % TILE_DIM ? 1.0f : 0.0f;
            ties[i] = u2f((f2u(b[i]) & 0xffff0000u) | 0x8000u);
        }
        for (int t = 0; t < 3; t++) {
            const float *x = t < 2 ? a : eye, *y = t < 2 ? b : ties;
            tile_dst_init(&d1, fp32);
            tile_dst_init(&d2, fp32);
            memcpy(d1.reg[0], t < 2 ? b : eye, sizeof b);
            memcpy(d2.reg[0], t < 2 ? b : eye, sizeof b);
            CHECK(tile_force_kernels("portable"));
            CHECK_OK(tile_matmul(&d1, 0, x, y, t == 1));
            CHECK(tile_force_kernels(name));
            CHECK_OK(tile_matmul(&d2, 0, x, y, t == 1));
            CHECK(memcmp(d1.reg[0], d2.reg[0], sizeof a) == 0);
        }
        tile_dst_init(&d1, fp32);
        tile_dst_init(&d2, fp32);
        CHECK(tile_force_kernels("portable"));
        run_all_ops(&d1, a, b);
        CHECK(tile_force_kernels(name));
        run_all_ops(&d2, a, b);
        CHECK(memcmp(d1.reg, d2.reg, sizeof d1.reg) == 0);
    }
    tile_force_kernels(NULL);
}

static void test_simd_matches_portable(void) {
    printf("  kernels in use: %s\n", tile_kernels_name());
    static const char *const sets[] = {"avx2", "avx512"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        if (!tile_force_kernels(sets[i])) {
            printf("  kernels %s: not available here\n", sets[i]);
            continue;
        }
        CHECK(!strcmp(tile_kernels_name(), sets[i]));
        simd_matches_portable(sets[i]);
    }
    /* A set nobody has changes nothing; NULL goes back to the best. */
    const char *best = tile_kernels_name();
    CHECK(!tile_force_kernels("avx1024"));
    CHECK(!strcmp(tile_kernels_name(), best));
    CHECK(tile_force_kernels("portable"));
    CHECK(!strcmp(tile_kernels_name(), "portable"));
    CHECK(tile_force_kernels(NULL));
    CHECK(!strcmp(tile_kernels_name(), best));
}

/* Results do not depend on run or on history: the same inputs twice give the
 * same bits. */
static void test_repeatable(void) {
    static tile_dst d1, d2;
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    fill_mixed(a);
    fill_mixed(b);
    tile_dst_init(&d1, false);
    tile_dst_init(&d2, false);
    run_all_ops(&d1, a, b);
    run_all_ops(&d2, a, b);
    CHECK(memcmp(d1.reg, d2.reg, sizeof d1.reg) == 0);
}

/* Several threads running the same ops at once get the serial bits. */
enum { THREADS = 4 };
static float thr_a[TILE_ELEMS], thr_b[TILE_ELEMS];
static tile_dst thr_dst[THREADS];

static void *thread_body(void *arg) {
    tile_dst *d = arg;
    for (int rep = 0; rep < 3; rep++) {
        tile_dst_init(d, false);
        run_all_ops(d, thr_a, thr_b);
    }
    return NULL;
}

static void test_threads_match_serial(void) {
    static tile_dst serial;
    fill_mixed(thr_a);
    fill_mixed(thr_b);
    tile_dst_init(&serial, false);
    run_all_ops(&serial, thr_a, thr_b);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, thread_body, &thr_dst[i]) == 0);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        CHECK(memcmp(thr_dst[i].reg, serial.reg, sizeof serial.reg) == 0);
}

/* The bits of every op on fixed inputs, hashed and compared with a recorded
 * value: any host, compiler or kernel set must reproduce them (this is what
 * replaying a recorded workload elsewhere relies on). */
#define GOLDEN_HASH 0xa3ca73289b771522ull

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Inputs made with exact operations only, so that they are the same bits
 * whatever the compiler does with the test's own arithmetic (contraction). */
static void fill_exact(float *t) {
    static const float edges[] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,
                                  FLT_MAX, FLT_MIN, 1e-45f,   88.72f,    -103.9f};
    for (int i = 0; i < TILE_ELEMS; i++) {
        uint32_t k = rng_u32() % 4;
        if (k == 0)
            t[i] = edges[rng_u32() % (sizeof edges / sizeof edges[0])];
        else if (k == 1)
            t[i] = u2f(rng_u32() ^ (rng_u32() << 16));
        else
            t[i] = (float)((int32_t)(rng_u32() % 61440) - 30720) / 1024.0f;
    }
}

static void test_golden_bits(void) {
    static tile_dst d;
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    static uint8_t packed[4096];
    uint64_t saved = rng_state;
    rng_state = 0x0123456789abcdefull;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int rep = 0; rep < 4; rep++) {
        fill_exact(a);
        fill_exact(b);
        tile_dst_init(&d, rep & 1);
        run_all_ops(&d, a, b);
        (void)tile_reduce(&d, 0, TILE_REDUCE_SUM, TILE_REDUCE_COL, a, 0.5f);
        (void)tile_reduce(&d, 1, TILE_REDUCE_MAX, TILE_REDUCE_ROW, b, 2.0f);
        h = fnv1a(h, d.reg, sizeof d.reg);
        for (int f = LM_DATA_FORMAT_FLOAT32; f <= LM_DATA_FORMAT_BFP8_B; f++) {
            CHECK_OK(tile_pack_dst(&d, 2, (lm_data_format)f, packed));
            h = fnv1a(h, packed, tile_format_size((lm_data_format)f));
        }
    }
    rng_state = saved;
    if (h != GOLDEN_HASH) {
        char m[100];
        snprintf(m, sizeof m, "hash 0x%016llx, recorded 0x%016llx", (unsigned long long)h,
                 (unsigned long long)GOLDEN_HASH);
        test_fail_(__FILE__, __LINE__, m);
    }
}

int main(void) {
    TEST_RUN(test_dst_capacity_and_errors);
    TEST_RUN(test_dst_precision_model);
    TEST_RUN(test_copy_raw_and_float);
    TEST_RUN(test_binary_vs_float64);
    TEST_RUN(test_matmul_vs_float64);
    TEST_RUN(test_matmul_accumulates);
    TEST_RUN(test_transpose_exact);
    TEST_RUN(test_reduce);
    TEST_RUN(test_reduce_undefined_dst);
    TEST_RUN(test_sfpu_accuracy);
    TEST_RUN(test_sfpu_sweep);
    TEST_RUN(test_log_near_one);
    TEST_RUN(test_sfpu_specials);
    TEST_RUN(test_sfpu_specials_params);
    TEST_RUN(test_sfpu_exact_ops);
    TEST_RUN(test_sfpu_param_errors);
    TEST_RUN(test_typecast);
    TEST_RUN(test_dst_binary_new_ops);
    TEST_RUN(test_where);
    TEST_RUN(test_fmaf_correctly_rounded);
    TEST_RUN(test_simd_matches_portable);
    TEST_RUN(test_repeatable);
    TEST_RUN(test_threads_match_serial);
    TEST_RUN(test_golden_bits);
    return test_summary();
}
