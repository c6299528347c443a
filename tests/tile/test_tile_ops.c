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
                "reduce_tile: unknown reduce function 4");
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

static double ref_sfpu(tile_sfpu_op op, double x) {
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
    default:
        return NAN;
    }
}

/* Per op: test domain (random inputs in [lo, hi], see sample()) and the bound
 * documented in sim/tile/tile_engine.h, in ulps. */
static const struct sfpu_case {
    tile_sfpu_op op;
    float lo, hi;
    double max_ulp;
    double abs_tol; /* absolute slack for results near 0 */
} sfpu_cases[] = {
    {TILE_SFPU_EXP, -87.0f, 88.0f, 0.6, 0},
    {TILE_SFPU_EXP, -103.0f, -87.0f, 0.6, 0}, /* subnormal results: ulps of the subnormal grid */
    {TILE_SFPU_LOG, 1e-45f, 3e38f, 0.6, 0},
    {TILE_SFPU_LOG, 0.5f, 2.0f, 0.6, 0},
    {TILE_SFPU_SQRT, 0, 3e38f, 0.5, 0},
    {TILE_SFPU_RSQRT, 1e-45f, 3e38f, 0.6, 0},
    {TILE_SFPU_RECIP, -1e38f, 1e38f, 0.5, 0},
    {TILE_SFPU_RELU, -1e38f, 1e38f, 0, 0},
    {TILE_SFPU_GELU, -20.0f, 20.0f, 0.6, 0x1p-126},
    {TILE_SFPU_GELU, -4.0f, 4.0f, 0.6, 0x1p-126},
    {TILE_SFPU_GELU, -1e30f, 1e30f, 0.6, 0x1p-126},
    {TILE_SFPU_SIGMOID, -87.0f, 88.0f, 0.6, 0},
    {TILE_SFPU_SIGMOID, -103.0f, -87.0f, 0.6, 0}, /* subnormal results */
    {TILE_SFPU_SIGMOID, -8.0f, 8.0f, 0.6, 0},
    {TILE_SFPU_TANH, -20.0f, 20.0f, 0.6, 0},
    {TILE_SFPU_TANH, -1.0f, 1.0f, 0.6, 0},
    {TILE_SFPU_ABS, -3e38f, 3e38f, 0, 0},
    {TILE_SFPU_NEG, -3e38f, 3e38f, 0, 0},
    {TILE_SFPU_SQUARE, -1e19f, 1e19f, 0.5, 0},
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
            CHECK_OK(tile_sfpu(&dst, 0, sc->op));
            for (int i = 0; i < TILE_ELEMS; i++) {
                double want = ref_sfpu(sc->op, in[i]);
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
        printf("  %-8s max error %.3f ulp\n", tile_sfpu_op_name((tile_sfpu_op)op), worst[op]);
}

/* Every 16381st float32 bit pattern through the transcendental ops. */
static void test_sfpu_sweep(void) {
    static const tile_sfpu_op ops[] = {TILE_SFPU_EXP,     TILE_SFPU_LOG,  TILE_SFPU_RSQRT,
                                       TILE_SFPU_SIGMOID, TILE_SFPU_TANH, TILE_SFPU_GELU};
    static float in[TILE_ELEMS];
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        tile_sfpu_op op = ops[oi];
        double worst = 0;
        uint64_t u = 0;
        while (u < 0x100000000ull) {
            for (int i = 0; i < TILE_ELEMS; i++, u += 16381)
                in[i] = u2f((uint32_t)u);
            tile_dst_init(&dst, true);
            memcpy(dst.reg[0], in, sizeof in);
            CHECK_OK(tile_sfpu(&dst, 0, op));
            for (int i = 0; i < TILE_ELEMS; i++) {
                float x = in[i];
                if (isnan(x)) continue;
                if ((op == TILE_SFPU_EXP || op == TILE_SFPU_SIGMOID) && x < -103.0f) continue;
                double want = ref_sfpu(op, x);
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
        printf("  sweep %-8s max error %.3f ulp\n", tile_sfpu_op_name(op), worst);
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
    /* Every op maps NaN to the canonical NaN. */
    for (int op = 1; op < TILE_SFPU_COUNT_; op++) {
        tile_dst_init(&dst, true);
        dst.reg[0][0] = u2f(0xffc12345);
        CHECK_OK(tile_sfpu(&dst, 0, (tile_sfpu_op)op));
        CHECK_EQ_U64(f2u(dst.reg[0][0]), TILE_CANONICAL_NAN_BITS);
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
        (void)tile_sfpu(d, (uint32_t)(2 + op % 6), (tile_sfpu_op)op);
    }
}

static void test_avx2_matches_portable(void) {
    static tile_dst d1, d2;
    static float a[TILE_ELEMS], b[TILE_ELEMS];
    tile_force_portable(false);
    printf("  kernels in use: %s\n", tile_kernels_name());
    for (int rep = 0; rep < 40; rep++) {
        bool fp32 = rep & 1;
        if (rep < 20) {
            fill_mixed(a);
            fill_mixed(b);
        } else {
            fill_random(a, -2, 2);
            fill_random(b, -2, 2);
        }
        /* Compare the state after every single op, not only at the end. */
        for (int op = 1; op < TILE_SFPU_COUNT_; op++) {
            tile_dst_init(&d1, fp32);
            tile_dst_init(&d2, fp32);
            memcpy(d1.reg[0], a, sizeof a);
            memcpy(d2.reg[0], a, sizeof a);
            tile_force_portable(true);
            CHECK_OK(tile_sfpu(&d1, 0, (tile_sfpu_op)op));
            tile_force_portable(false);
            CHECK_OK(tile_sfpu(&d2, 0, (tile_sfpu_op)op));
            if (memcmp(d1.reg[0], d2.reg[0], sizeof a) != 0) {
                for (int i = 0; i < TILE_ELEMS; i++)
                    if (f2u(d1.reg[0][i]) != f2u(d2.reg[0][i])) {
                        char m[200];
                        snprintf(m, sizeof m, "%s(%a): portable %a, simd %a",
                                 tile_sfpu_op_name((tile_sfpu_op)op), a[i], d1.reg[0][i],
                                 d2.reg[0][i]);
                        test_fail_(__FILE__, __LINE__, m);
                        return;
                    }
            }
        }
        tile_dst_init(&d1, fp32);
        tile_dst_init(&d2, fp32);
        tile_force_portable(true);
        run_all_ops(&d1, a, b);
        tile_force_portable(false);
        run_all_ops(&d2, a, b);
        CHECK(memcmp(d1.reg, d2.reg, sizeof d1.reg) == 0);
    }
    tile_force_portable(false);
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
#define GOLDEN_HASH 0x0b8d2a9c242db2f9ull

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
    TEST_RUN(test_fmaf_correctly_rounded);
    TEST_RUN(test_avx2_matches_portable);
    TEST_RUN(test_repeatable);
    TEST_RUN(test_threads_match_serial);
    TEST_RUN(test_golden_bits);
    return test_summary();
}
