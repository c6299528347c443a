/* Matmul and linear against a float64 host reference: shapes from 1x1 to
 * multi-core sizes, K not a multiple of 32, batch broadcasting, rank-1 a,
 * transposes, bias, fused activations, float32 / bfloat16 / bfloat8_b
 * operands, output dtypes and memory, zero padding, the program cache and the
 * errors.
 *
 * Bounds asserted, per element, with S = sum over k of |a_ik * b_kj| (plus
 * |bias_j|) and w the reference value:
 *   float32 accumulation   |err| <= 1e-5 * S, plus the output rounding
 *                          (2^-23 |w| for float32, 2^-8 |w| for bfloat16)
 *   bfloat16 accumulation  |err| <= (Kt + 1) * 2^-8 * S (dst rounds to
 *                          bfloat16 after every 32 of K), plus 2^-8 |w|
 *   activations            the pre-activation bound times the function's
 *                          slope bound (1 for relu, 1.2 for gelu_tanh, 0.25 for
 *                          sigmoid), plus 2 float32 ulps and the output
 *                          rounding
 * Inputs are compared as stored (downloaded back), so bfloat16 and bfloat8_b
 * rounding of the operands is not counted as error. Each case prints its PCC,
 * largest absolute and relative errors (relative to max(|w|, 1e-3), so
 * cancellation shows as large) and largest |err| / S. */
#include <string.h>

#include "nn_test.h"

/* ---- reference ---- */

typedef struct ref {
    lmnn_shape shape;
    size_t n;
    double *want, *sabs;
} ref;

static void ref_free(ref *r) {
    free(r->want);
    free(r->sabs);
}

static double act_ref(lmnn_unary_op op, double x, double alpha, double beta) {
    switch (op) {
    case LMNN_RELU:
        return x > 0 ? x : 0;
    case LMNN_SIGMOID:
        return 1 / (1 + exp(-x));
    case LMNN_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case LMNN_SILU:
        return x / (1 + exp(-x));
    case LMNN_CLAMP:
        return x < alpha ? alpha : x > beta ? beta : x;
    default:
        return x;
    }
}

/* torch.matmul(a, b) (+ bias, then the activation) in float64. */
static ref reference(const float *a, const lmnn_shape *as, bool ta, const float *b,
                     const lmnn_shape *bs, bool tb, const float *bias, lmnn_unary_op act,
                     double alpha, double beta) {
    ref r = {0};
    uint32_t ar = as->rank, br = bs->rank;
    uint32_t arows = ar >= 2 ? as->dims[ar - 2] : 1, acols = as->dims[ar - 1];
    uint32_t brows = br >= 2 ? bs->dims[br - 2] : 1, bcols = bs->dims[br - 1];
    if (br == 1) tb = true; /* the row [1, K] standing for a column */
    uint32_t m = ta ? acols : arows, k = ta ? arows : acols, n = tb ? brows : bcols;
    uint32_t abr = ar > 2 ? ar - 2 : 0, bbr = br > 2 ? br - 2 : 0, nd = abr > bbr ? abr : bbr;
    uint32_t od[8], ast[8], bst[8];
    size_t astride = 1, bstride = 1, mats = 1;
    for (uint32_t d = nd; d-- > 0;) {
        uint32_t ad = d + abr >= nd ? as->dims[d + abr - nd] : 1;
        uint32_t bd = d + bbr >= nd ? bs->dims[d + bbr - nd] : 1;
        od[d] = ad > bd ? ad : bd;
        ast[d] = ad == 1 ? 0 : (uint32_t)astride;
        bst[d] = bd == 1 ? 0 : (uint32_t)bstride;
        astride *= ad;
        bstride *= bd;
        mats *= od[d];
    }
    r.shape.rank = 0;
    for (uint32_t d = 0; d < nd; d++)
        r.shape.dims[r.shape.rank++] = od[d];
    if (ar >= 2) r.shape.dims[r.shape.rank++] = m;
    if (br >= 2) r.shape.dims[r.shape.rank++] = n;
    r.n = mats * m * n;
    r.want = malloc(r.n * sizeof *r.want);
    r.sabs = malloc(r.n * sizeof *r.sabs);
    for (size_t ob = 0; ob < mats; ob++) {
        size_t ab = 0, bb = 0, rest = ob;
        for (uint32_t d = nd; d-- > 0;) {
            ab += rest % od[d] * ast[d];
            bb += rest % od[d] * bst[d];
            rest /= od[d];
        }
        const float *am = a + ab * arows * acols, *bm = b + bb * brows * bcols;
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t j = 0; j < n; j++) {
                double s = 0, sa = 0;
                for (uint32_t q = 0; q < k; q++) {
                    double x = ta ? am[q * acols + i] : am[i * acols + q];
                    double y = tb ? bm[j * bcols + q] : bm[q * bcols + j];
                    s += x * y;
                    sa += fabs(x * y);
                }
                if (bias) {
                    s += bias[j];
                    sa += fabs(bias[j]);
                }
                size_t at = (ob * m + i) * n + j;
                r.want[at] = act_ref(act, s, alpha, beta);
                r.sabs[at] = sa;
            }
    }
    return r;
}

/* ---- running a case ---- */

typedef struct mm_case {
    const char *name;
    lmnn_shape as, bs;
    lmnn_dtype adt, bdt;
    bool linear, bias_2d; /* lmnn_linear with a bias [N] (or [1, N]) */
    lmnn_matmul_options o;
    /* a given row-major; then whether its rows are to be gathered into the
     * product (1) or tilized first (0) */
    bool a_rm;
    int gathers;
} mm_case;

/* Per-element bound (see the top of the file). */
typedef struct bound {
    double s, w, abs;
} bound;

static bound bound_of(const mm_case *c, lmnn_dtype out, uint32_t kt) {
    bool fp32 = c->o.fp32_accumulate == LMNN_FP32_ACC_ON ||
                (c->o.fp32_accumulate == LMNN_FP32_ACC_DEFAULT &&
                 (c->adt == LMNN_FLOAT32 || c->bdt == LMNN_FLOAT32 || out == LMNN_FLOAT32));
    bound b = {fp32 ? 1e-5 : (kt + 1) * ldexp(1, -8), 0, 0};
    double slope = c->o.activation == LMNN_SIGMOID     ? 0.25
                   : c->o.activation == LMNN_GELU_TANH ? 1.2
                                                       : 1;
    b.s *= slope;
    b.w = out == LMNN_FLOAT32 ? ldexp(1, -23) : ldexp(1, -8);
    if (c->o.activation) b.abs = 1e-30, b.w += ldexp(1, -22);
    return b;
}

static bool shape_eq(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static size_t volume(const lmnn_shape *s) {
    return (size_t)lmnn_shape_volume(s);
}

/* Runs one case and checks it; *out_t keeps the result when asked for. */
static void run_case(const mm_case *c, uint64_t seed, lmnn_tensor *out_t) {
    size_t na = volume(&c->as), nb = volume(&c->bs);
    float *a = nn_rand_floats(na, -1, 1, seed), *b = nn_rand_floats(nb, -1, 1, seed + 1);
    lmnn_tensor ta, tb, tbias = {0}, tc;
    CHECK_OK(nn_upload(&c->as, a, c->adt, c->a_rm ? LMNN_ROW_MAJOR : LMNN_TILE, &ta));
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = c->bdt;
    CHECK_OK(lmnn_from_host(nn_dev(), &c->bs, b, nb * sizeof(float), &to, &tb));
    float *sa = nn_download(ta), *sb = c->bdt == LMNN_BFLOAT8_B ? NULL : nn_download(tb);
    if (!sb) { /* bfloat8_b has no host form: read it back through float32 */
        lmnn_tensor t32;
        CHECK_OK(lmnn_typecast(tb, LMNN_FLOAT32, &t32));
        sb = nn_download(t32);
        lmnn_tensor_free(t32);
    }
    CHECK(sa && sb);
    uint32_t br = c->bs.rank;
    uint32_t n = c->bs.rank == 1 ? 1 : c->o.transpose_b ? c->bs.dims[br - 2] : c->bs.dims[br - 1];
    float *bias = NULL, *sbias = NULL;
    if (c->linear) {
        bias = nn_rand_floats(n, -1, 1, seed + 2);
        lmnn_shape bsh = c->bias_2d ? LMNN_SHAPE(1, n) : LMNN_SHAPE(n);
        CHECK_OK(nn_upload(&bsh, bias, c->adt, LMNN_TILE, &tbias));
        sbias = nn_download(tbias);
    }
    if (c->a_rm) CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    if (c->linear)
        CHECK_OK(lmnn_linear(ta, tb, tbias, &c->o, &tc));
    else
        CHECK_OK(lmnn_matmul(ta, tb, &c->o, &tc));
    if (c->a_rm) {
        /* The rows gathered into the product, or tilized first. */
        bool ran[2];
        nn_ran_since((const char *const[]){"tilize_reader.c + matmul_compute.c",
                                           "tilize_reader.c + tilize_compute.c"},
                     ran, 2);
        if (ran[0] != (c->gathers == 1) || ran[1] == (c->gathers == 1)) {
            char m[160];
            snprintf(m, sizeof m, "%s: A's rows %s", c->name,
                     ran[0] ? "gathered into the product" : "tilized first");
            test_fail_(__FILE__, __LINE__, m);
        }
    }
    double alpha = isnan(c->o.activation_alpha) ? -INFINITY : c->o.activation_alpha;
    double beta = isnan(c->o.activation_beta) ? INFINITY : c->o.activation_beta;
    ref r = reference(sa, &c->as, c->o.transpose_a, sb, &c->bs, c->o.transpose_b, sbias,
                      c->o.activation, alpha, beta);
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(tc, &info));
    CHECK(shape_eq(&info.shape, &r.shape));
    lmnn_dtype out = info.dtype;
    float *got = nn_download(tc);
    CHECK(got);
    uint32_t ar = c->as.rank;
    uint32_t k = ar == 1            ? c->as.dims[0]
                 : c->o.transpose_a ? c->as.dims[ar - 2]
                                    : c->as.dims[ar - 1];
    bound bd = bound_of(c, out, (k + 31) / 32);
    size_t bad = 0, worst = 0;
    double worst_excess = 0, err_s = 0; /* largest |err| / S */
    for (size_t i = 0; i < r.n; i++) {
        double err = fabs(got[i] - r.want[i]);
        if (r.sabs[i] > 0 && err / r.sabs[i] > err_s) err_s = err / r.sabs[i];
        double tol = bd.s * r.sabs[i] + bd.w * fabs(r.want[i]) + bd.abs;
        if (!(err <= tol)) {
            if (!bad || err - tol > worst_excess) worst_excess = err - tol, worst = i;
            bad++;
        }
    }
    nn_err e = nn_compare(got, r.want, r.n, 1e-3);
    printf("  %-34s %-9s -> %-9s pcc %.7f max_abs %.3g max_rel %.3g max_err/S %.3g\n", c->name,
           lmnn_dtype_name(c->adt), lmnn_dtype_name(out), e.pcc, e.max_abs, e.max_rel, err_s);
    if (bad) {
        char m[256];
        snprintf(m, sizeof m,
                 "%s: %zu elements out of bound; worst at %zu: got %.9g want %.9g S %.3g", c->name,
                 bad, worst, got[worst], r.want[worst], r.sabs[worst]);
        test_fail_(__FILE__, __LINE__, m);
    }
    free(got);
    ref_free(&r);
    free(a), free(b), free(sa), free(sb), free(bias), free(sbias);
    lmnn_tensor_free(ta);
    lmnn_tensor_free(tb);
    lmnn_tensor_free(tbias);
    if (out_t)
        *out_t = tc;
    else
        lmnn_tensor_free(tc);
}

static mm_case mk(const char *name, lmnn_shape as, lmnn_shape bs, lmnn_dtype dt) {
    mm_case c = {name, as, bs, dt, dt, false, false, {0}, false, 0};
    lmnn_matmul_options_init(&c.o);
    return c;
}

/* ---- tests ---- */

static void test_shapes(void) {
    static const uint32_t mkn[][3] = {{1, 1, 1},    {33, 65, 47},   {1, 32, 1},    {5, 7, 3},
                                      {64, 96, 64}, {100, 300, 70}, {32, 1000, 40}};
    for (size_t i = 0; i < sizeof mkn / sizeof mkn[0]; i++)
        for (int d = 0; d < 3; d++) {
            char name[64];
            snprintf(name, sizeof name, "[%u,%u]x[%u,%u]%s", mkn[i][0], mkn[i][1], mkn[i][1],
                     mkn[i][2], d == 2 ? " fp32 acc" : "");
            mm_case c = mk(name, LMNN_SHAPE(mkn[i][0], mkn[i][1]), LMNN_SHAPE(mkn[i][1], mkn[i][2]),
                           d == 0 ? LMNN_FLOAT32 : LMNN_BFLOAT16);
            if (d == 2) c.o.fp32_accumulate = LMNN_FP32_ACC_ON;
            run_case(&c, 10 + i, NULL);
        }
}

static void test_batched(void) {
    mm_case cs[] = {
        mk("[2,3,40,50]x[50,20]", LMNN_SHAPE(2, 3, 40, 50), LMNN_SHAPE(50, 20), LMNN_FLOAT32),
        mk("[2,1,33,40]x[1,4,40,17]", LMNN_SHAPE(2, 1, 33, 40), LMNN_SHAPE(1, 4, 40, 17),
           LMNN_FLOAT32),
        mk("[3,40,50]x[3,50,20]", LMNN_SHAPE(3, 40, 50), LMNN_SHAPE(3, 50, 20), LMNN_BFLOAT16),
        mk("[2,3,10,20]x[3,20,30]", LMNN_SHAPE(2, 3, 10, 20), LMNN_SHAPE(3, 20, 30), LMNN_FLOAT32),
        mk("[1,33,40]x[3,40,17]", LMNN_SHAPE(1, 33, 40), LMNN_SHAPE(3, 40, 17), LMNN_FLOAT32),
        mk("[4,1,1,5,6]x[3,6,7]", LMNN_SHAPE(4, 1, 1, 5, 6), LMNN_SHAPE(3, 6, 7), LMNN_FLOAT32),
        mk("[2,1,3,1,70,40]x[1,2,1,4,40,50]", LMNN_SHAPE(2, 1, 3, 1, 70, 40),
           LMNN_SHAPE(1, 2, 1, 4, 40, 50), LMNN_BFLOAT16),
        mk("[70]x[70,45] (rank-1 a)", LMNN_SHAPE(70), LMNN_SHAPE(70, 45), LMNN_FLOAT32),
        mk("[70]x[70] (dot)", LMNN_SHAPE(70), LMNN_SHAPE(70), LMNN_FLOAT32),
        mk("[1,1]x[1,1,1]", LMNN_SHAPE(1, 1), LMNN_SHAPE(1, 1, 1), LMNN_FLOAT32),
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        run_case(&cs[i], 100 + i, NULL);
}

static void test_transposes(void) {
    mm_case cs[] = {
        mk("[50,33]^T x [50,47]", LMNN_SHAPE(50, 33), LMNN_SHAPE(50, 47), LMNN_FLOAT32),
        mk("[33,50] x [47,50]^T", LMNN_SHAPE(33, 50), LMNN_SHAPE(47, 50), LMNN_FLOAT32),
        mk("[50,33]^T x [47,50]^T", LMNN_SHAPE(50, 33), LMNN_SHAPE(47, 50), LMNN_BFLOAT16),
        mk("[2,70,65]^T x [2,47,70]^T", LMNN_SHAPE(2, 70, 65), LMNN_SHAPE(2, 47, 70), LMNN_FLOAT32),
        mk("[2,3,33,90] x [100,90]^T", LMNN_SHAPE(2, 3, 33, 90), LMNN_SHAPE(100, 90),
           LMNN_BFLOAT16),
        mk("[300,200]^T x [300,160]", LMNN_SHAPE(300, 200), LMNN_SHAPE(300, 160), LMNN_BFLOAT16),
    };
    cs[0].o.transpose_a = true;
    cs[1].o.transpose_b = true;
    cs[2].o.transpose_a = cs[2].o.transpose_b = true;
    cs[3].o.transpose_a = cs[3].o.transpose_b = true;
    cs[4].o.transpose_b = true;
    cs[5].o.transpose_a = true;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        run_case(&cs[i], 200 + i, NULL);
}

/* A row-major a: a matrix whose product fits the gathered form (all of K
 * and B in L1, N in dst, no transposes) reads and tilizes its rows in the
 * product's own program; other shapes are tilized first. Either way the
 * values are the tile a's (the same bounds); the output follows a's
 * memory. */
static void test_row_major_a(void) {
    struct {
        mm_case c;
        bool linear, tb, ta, relu;
        int gathers;
    } cs[] = {
        {mk("rm [1,784]x[784,10]+[10] (a CNN's fc)", LMNN_SHAPE(1, 784), LMNN_SHAPE(784, 10),
            LMNN_FLOAT32),
         true, false, false, false, 1},
        {mk("rm [70,65]x[65,47] relu", LMNN_SHAPE(70, 65), LMNN_SHAPE(65, 47), LMNN_FLOAT32), false,
         false, false, true, 1},
        /* more tile rows than cores: each core takes every gy-th */
        {mk("rm [600,65]x[65,47]+[47]", LMNN_SHAPE(600, 65), LMNN_SHAPE(65, 47), LMNN_FLOAT32),
         true, false, false, false, 1},
        {mk("rm bf16 [64,96]x[96,200]+[200]", LMNN_SHAPE(64, 96), LMNN_SHAPE(96, 200),
            LMNN_BFLOAT16),
         true, false, false, false, 1},
        {mk("rm [33,65]x[47,65]^T+[47]", LMNN_SHAPE(33, 65), LMNN_SHAPE(47, 65), LMNN_FLOAT32),
         true, true, false, false, 0},
        {mk("rm [65,33]^T x[65,47]", LMNN_SHAPE(65, 33), LMNN_SHAPE(65, 47), LMNN_FLOAT32), false,
         false, true, false, 0},
        {mk("rm [2,33,65]x[65,47] (batched)", LMNN_SHAPE(2, 33, 65), LMNN_SHAPE(65, 47),
            LMNN_FLOAT32),
         false, false, false, false, 0},
        {mk("rm [40,64]x[64,300] (N past dst)", LMNN_SHAPE(40, 64), LMNN_SHAPE(64, 300),
            LMNN_FLOAT32),
         false, false, false, false, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        mm_case c = cs[i].c;
        c.linear = cs[i].linear;
        c.o.transpose_b = cs[i].tb;
        c.o.transpose_a = cs[i].ta;
        if (cs[i].relu) c.o.activation = LMNN_RELU;
        c.a_rm = true;
        c.gathers = cs[i].gathers;
        run_case(&c, 900 + i, NULL);
    }
    /* a bfloat16 a and a float32 b; the output in L1 as a is. */
    mm_case c = mk("rm bf16 a, f32 b", LMNN_SHAPE(40, 96), LMNN_SHAPE(96, 64), LMNN_BFLOAT16);
    c.bdt = LMNN_FLOAT32;
    c.a_rm = true;
    c.gathers = 1;
    run_case(&c, 950, NULL);
    lmnn_shape as = LMNN_SHAPE(40, 96), bs = LMNN_SHAPE(96, 64);
    float *v = nn_rand_floats(96 * 64, -1, 1, 951);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    to.layout = LMNN_ROW_MAJOR;
    to.memory = (lmnn_memory_config){.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor a, b, y;
    CHECK_OK(lmnn_from_host(nn_dev(), &as, v, 40 * 96 * sizeof *v, &to, &a));
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(lmnn_matmul(a, b, NULL, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(info.memory.type == LM_BUFFER_L1 && info.layout == LMNN_TILE);
    lmnn_tensor_free(y);
    /* Errors name the operands as for a tile a. */
    lmnn_shape bad = LMNN_SHAPE(95, 64);
    lmnn_tensor b2;
    CHECK_OK(nn_upload(&bad, v, LMNN_FLOAT32, LMNN_TILE, &b2));
    CHECK_FAILS(lmnn_matmul(a, b2, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: inner dim 95 of shape [95, 64] does not match a's inner dim 96 "
                "of shape [40, 96]");
    CHECK_FAILS(lmnn_linear(a, b2, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: weight: inner dim 95 of shape [95, 64] does not match input's "
                "inner dim 96 of shape [40, 96]");
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(b2);
    free(v);
}

/* lmnn_linear of a float32 a (`as`, in `layout`) with input_dtype bfloat16
 * against a typecast to bfloat16 first: the same dtype and bits; `gathers`:
 * whether a's rows went into the product (no typecast program ran). */
static void run_cast_case(const char *name, lmnn_shape as, lmnn_shape bs, lmnn_layout layout,
                          bool gathers) {
    size_t na = volume(&as), nb = volume(&bs);
    float *a = nn_rand_floats(na, -1, 1, 41 + na), *b = nn_rand_floats(nb, -1, 1, 43 + nb);
    lmnn_tensor ta, tb, tc, y1, y2;
    CHECK_OK(nn_upload(&as, a, LMNN_FLOAT32, layout, &ta));
    CHECK_OK(nn_upload(&bs, b, LMNN_FLOAT32, LMNN_TILE, &tb));
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.input_dtype = LMNN_BFLOAT16;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_linear(ta, tb, (lmnn_tensor){0}, &o, &y1));
    bool ran[2];
    nn_ran_since((const char *const[]){"unary_compute.c", "tilize_reader.c + matmul_compute.c"},
                 ran, 2);
    CHECK_OK(lmnn_typecast(ta, LMNN_BFLOAT16, &tc));
    o.input_dtype = 0;
    CHECK_OK(lmnn_linear(tc, tb, (lmnn_tensor){0}, &o, &y2));
    lmnn_tensor_info i1, i2;
    CHECK_OK(lmnn_tensor_get_info(y1, &i1));
    CHECK_OK(lmnn_tensor_get_info(y2, &i2));
    bool same = nn_same_bits(y1, y2);
    printf("  %-40s %s, %s\n", name, ran[1] ? "rows rounded as gathered" : "typecast first",
           same ? "the typecast a's bits" : "DIFFERENT bits");
    free(a), free(b);
    lmnn_tensor_free(ta), lmnn_tensor_free(tb), lmnn_tensor_free(tc);
    lmnn_tensor_free(y1), lmnn_tensor_free(y2);
    CHECK(i1.dtype == LMNN_BFLOAT16 && i2.dtype == LMNN_BFLOAT16);
    CHECK(same);
    CHECK(ran[1] == gathers && ran[0] != gathers);
}

/* input_dtype: a taken as bfloat16, rounded as its rows are gathered (a
 * row-major a the product reads itself), else typecast first; its errors. */
static void test_input_dtype(void) {
    run_cast_case("row-major [40,200] gathered", LMNN_SHAPE(40, 200), LMNN_SHAPE(200, 24),
                  LMNN_ROW_MAJOR, true);
    run_cast_case("row-major [600,65] gathered", LMNN_SHAPE(600, 65), LMNN_SHAPE(65, 47),
                  LMNN_ROW_MAJOR, true);
    run_cast_case("row-major [40,64]x[64,300] tilized", LMNN_SHAPE(40, 64), LMNN_SHAPE(64, 300),
                  LMNN_ROW_MAJOR, false);
    run_cast_case("tile [70,65]", LMNN_SHAPE(70, 65), LMNN_SHAPE(65, 47), LMNN_TILE, false);
    lmnn_shape s = LMNN_SHAPE(4, 4);
    float v[16] = {0};
    lmnn_tensor a, out;
    CHECK_OK(nn_upload(&s, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.input_dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_matmul(a, a, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: input_dtype: expected 0 (a's own), float32 or bfloat16, given "
                "int32");
    o.input_dtype = LMNN_BFLOAT8_B;
    CHECK_FAILS(lmnn_linear(a, a, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: input_dtype: expected 0 (input's own), float32 or bfloat16, given "
                "bfloat8_b");
    o.input_dtype = (lmnn_dtype)77;
    CHECK_FAILS(lmnn_matmul(a, a, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: input_dtype: expected 0 (a's own), float32 or bfloat16, given "
                "invalid");
    lmnn_tensor_free(a);
}

/* lmnn_linear with output_layout ROW_MAJOR (a of `as` in `layout` and
 * `dtype`, relu, a bias) against the tile product: the same bits in
 * [M, N] rows, in the output dtype `out` (0: a's); `packed`: the gathered
 * product packed the rows itself (no untilize ran). */
static void run_rows_case(const char *name, lmnn_shape as, lmnn_shape bs, lmnn_layout layout,
                          lmnn_dtype dtype, lmnn_dtype out, bool packed) {
    size_t na = volume(&as), nb = volume(&bs);
    uint32_t n = bs.dims[1];
    float *a = nn_rand_floats(na, -1, 1, 61 + na), *b = nn_rand_floats(nb, -1, 1, 67 + nb);
    lmnn_shape cs = LMNN_SHAPE(n);
    lmnn_tensor ta, tb, tc, y1, y2;
    CHECK_OK(nn_upload(&as, a, dtype, layout, &ta));
    CHECK_OK(nn_upload(&bs, b, LMNN_FLOAT32, LMNN_TILE, &tb));
    CHECK_OK(nn_upload(&cs, b, LMNN_FLOAT32, LMNN_TILE, &tc));
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.activation = LMNN_RELU;
    o.output.dtype = out;
    o.output_layout = LMNN_ROW_MAJOR;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_linear(ta, tb, tc, &o, &y1));
    bool ran[2];
    nn_ran_since((const char *const[]){"untilize_writer.c", "tilize_reader.c + matmul_compute.c"},
                 ran, 2);
    o.output_layout = 0;
    CHECK_OK(lmnn_linear(ta, tb, tc, &o, &y2));
    lmnn_tensor_info i1, i2;
    CHECK_OK(lmnn_tensor_get_info(y1, &i1));
    CHECK_OK(lmnn_tensor_get_info(y2, &i2));
    bool same = nn_same_bits(y1, y2);
    printf("  %-44s %s, %s\n", name, ran[0] ? "untilized after" : "rows packed by the product",
           same ? "the tile product's bits" : "DIFFERENT bits");
    CHECK(same);
    CHECK(i1.layout == LMNN_ROW_MAJOR && i2.layout == LMNN_TILE && i1.dtype == i2.dtype);
    CHECK(i1.shape.rank == 2 && i1.shape.dims[0] == as.dims[0] && i1.shape.dims[1] == n);
    CHECK(ran[0] != packed && ran[1] == (layout == LMNN_ROW_MAJOR && packed));
    free(a), free(b);
    lmnn_tensor_free(ta), lmnn_tensor_free(tb), lmnn_tensor_free(tc);
    lmnn_tensor_free(y1), lmnn_tensor_free(y2);
}

/* output_layout ROW_MAJOR: rows packed by a gathered product, else
 * untilized after; its errors. */
static void test_row_major_out(void) {
    run_rows_case("rm [1,576]x[576,10] (a CNN's fc)", LMNN_SHAPE(1, 576), LMNN_SHAPE(576, 10),
                  LMNN_ROW_MAJOR, LMNN_FLOAT32, 0, true);
    run_rows_case("rm [600,65]x[65,47]", LMNN_SHAPE(600, 65), LMNN_SHAPE(65, 47), LMNN_ROW_MAJOR,
                  LMNN_FLOAT32, 0, true);
    run_rows_case("rm bf16 [64,96]x[96,40], float32 out", LMNN_SHAPE(64, 96), LMNN_SHAPE(96, 40),
                  LMNN_ROW_MAJOR, LMNN_BFLOAT16, LMNN_FLOAT32, true);
    run_rows_case("rm [40,64]x[64,300] (N past dst)", LMNN_SHAPE(40, 64), LMNN_SHAPE(64, 300),
                  LMNN_ROW_MAJOR, LMNN_FLOAT32, 0, false);
    run_rows_case("tile [70,65]x[65,47], bf16 out", LMNN_SHAPE(70, 65), LMNN_SHAPE(65, 47),
                  LMNN_TILE, LMNN_FLOAT32, LMNN_BFLOAT16, false);
    lmnn_shape s = LMNN_SHAPE(4, 4);
    float v[16] = {0};
    lmnn_tensor a, out;
    CHECK_OK(nn_upload(&s, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &a));
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.output_layout = (lmnn_layout)7;
    CHECK_FAILS(lmnn_matmul(a, a, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: output_layout: unknown layout 7");
    o.output_layout = LMNN_ROW_MAJOR;
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_FAILS(lmnn_linear(a, a, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: output_layout: row_major needs a float32 or bfloat16 output, given "
                "bfloat8_b");
    o.output.dtype = 0;
    CHECK_FAILS(lmnn_matmul((lmnn_tensor){0}, a, &o, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_matmul: a");
    lmnn_tensor_free(a);
}

static void test_linear(void) {
    mm_case cs[] = {
        mk("linear [3,33,65]x[65,47]+[47]", LMNN_SHAPE(3, 33, 65), LMNN_SHAPE(65, 47),
           LMNN_FLOAT32),
        mk("linear [33,65]x[47,65]^T+[1,47]", LMNN_SHAPE(33, 65), LMNN_SHAPE(47, 65), LMNN_FLOAT32),
        mk("linear [65]x[65,47]+[47]", LMNN_SHAPE(65), LMNN_SHAPE(65, 47), LMNN_FLOAT32),
        mk("linear [100,300]x[200,300]^T+[200]", LMNN_SHAPE(100, 300), LMNN_SHAPE(200, 300),
           LMNN_BFLOAT16),
        mk("linear [64,64]x[64,64]+[64]", LMNN_SHAPE(64, 64), LMNN_SHAPE(64, 64), LMNN_BFLOAT16),
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        cs[i].linear = true;
        cs[i].bias_2d = i == 1;
        cs[i].o.transpose_b = i == 1 || i == 3;
        run_case(&cs[i], 300 + i, NULL);
    }
}

static void test_activations(void) {
    lmnn_unary_op ops[] = {LMNN_RELU, LMNN_GELU_TANH, LMNN_SIGMOID, LMNN_SILU, LMNN_CLAMP};
    const char *names[] = {"relu", "gelu_tanh", "sigmoid", "silu", "clamp(-0.5, 0.25)"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int d = 0; d < 2; d++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s [33,65]x[65,47]", names[i], d ? "+bias" : "");
            mm_case c =
                mk(name, LMNN_SHAPE(33, 65), LMNN_SHAPE(65, 47), d ? LMNN_BFLOAT16 : LMNN_FLOAT32);
            c.linear = d;
            c.o.activation = ops[i];
            if (ops[i] == LMNN_CLAMP) c.o.activation_alpha = -0.5, c.o.activation_beta = 0.25;
            if (d) c.o.fp32_accumulate = LMNN_FP32_ACC_ON;
            run_case(&c, 400 + i, NULL);
        }
    /* Blocks of two subblocks with partial sums parked between K blocks
     * (float32 accumulation, 8 tiles of dst), edge blocks, bias and
     * activation. */
    mm_case big = mk("gelu_tanh+bias [100,300]x[300,230]", LMNN_SHAPE(100, 300),
                     LMNN_SHAPE(300, 230), LMNN_FLOAT32);
    big.linear = true;
    big.o.activation = LMNN_GELU_TANH;
    run_case(&big, 440, NULL);
    /* An fp32 output keeps its padding zero through bias and activation
     * (sigmoid(0) = 0.5), batched too. */
    mm_case c = mk("sigmoid+bias [2,33,65]x[65,47]", LMNN_SHAPE(2, 33, 65), LMNN_SHAPE(65, 47),
                   LMNN_FLOAT32);
    c.linear = true;
    c.o.activation = LMNN_SIGMOID;
    lmnn_tensor t;
    run_case(&c, 450, &t);
    CHECK(nn_padding_is_zero(t));
    lmnn_tensor_free(t);
}

static void test_padding(void) {
    static const uint32_t mkn[][3] = {{1, 1, 1}, {33, 65, 47}, {40, 20, 70}};
    for (size_t i = 0; i < 3; i++)
        for (int l = 0; l < 2; l++) {
            mm_case c = mk(l ? "padding, linear" : "padding", LMNN_SHAPE(mkn[i][0], mkn[i][1]),
                           LMNN_SHAPE(mkn[i][1], mkn[i][2]), LMNN_FLOAT32);
            c.linear = l;
            lmnn_tensor t;
            run_case(&c, 500 + i, &t);
            CHECK(nn_padding_is_zero(t));
            lmnn_tensor_free(t);
        }
}

/* Multi-core sizes: both multicasts, blocks of two subblocks over the whole
 * K, K streamed in blocks, and more blocks than cores (steps where some cores
 * only pass multicasts on). */
static void test_large(void) {
    mm_case cs[] = {
        mk("[512,1024]x[1024,768]", LMNN_SHAPE(512, 1024), LMNN_SHAPE(1024, 768), LMNN_BFLOAT16),
        mk("[512,1024]x[1024,768] fp32 acc", LMNN_SHAPE(512, 1024), LMNN_SHAPE(1024, 768),
           LMNN_BFLOAT16),
        mk("[64,4096]x[4096,128] fp32 acc", LMNN_SHAPE(64, 4096), LMNN_SHAPE(4096, 128),
           LMNN_BFLOAT16),
        mk("[1150,64]x[64,1130]", LMNN_SHAPE(1150, 64), LMNN_SHAPE(64, 1130), LMNN_BFLOAT16),
        mk("[300,256]x[256,600] fp32", LMNN_SHAPE(300, 256), LMNN_SHAPE(256, 600), LMNN_FLOAT32),
    };
    cs[1].o.fp32_accumulate = LMNN_FP32_ACC_ON;
    cs[2].o.fp32_accumulate = LMNN_FP32_ACC_ON;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        run_case(&cs[i], 600 + i, NULL);
}

/* Tall products of one column of blocks, more block rows than cores: each
 * core reads B once and keeps it over its steps (K in one block, in two
 * blocks, and with a bias and bfloat16). */
static void test_tall(void) {
    mm_case cs[] = {
        mk("[4100,200]x[200,40] fp32", LMNN_SHAPE(4100, 200), LMNN_SHAPE(200, 40), LMNN_FLOAT32),
        mk("[2500,300]x[300,64]+[64] fp32", LMNN_SHAPE(2500, 300), LMNN_SHAPE(300, 64),
           LMNN_FLOAT32),
        mk("[9000,96]x[96,20]+[20] bf16", LMNN_SHAPE(9000, 96), LMNN_SHAPE(96, 20), LMNN_BFLOAT16),
    };
    cs[1].linear = cs[2].linear = true;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        run_case(&cs[i], 650 + i, NULL);
}

static void test_dtypes(void) {
    mm_case cs[] = {
        mk("bf16 x bfp8 weights", LMNN_SHAPE(64, 96), LMNN_SHAPE(96, 80), LMNN_BFLOAT16),
        mk("fp32 x bfp8 weights", LMNN_SHAPE(33, 200), LMNN_SHAPE(200, 70), LMNN_FLOAT32),
        mk("bf16 in, fp32 out", LMNN_SHAPE(40, 100), LMNN_SHAPE(100, 50), LMNN_BFLOAT16),
        mk("fp32 in, bf16 out", LMNN_SHAPE(40, 100), LMNN_SHAPE(100, 50), LMNN_FLOAT32),
        mk("bf16 in, bfp8 out", LMNN_SHAPE(40, 100), LMNN_SHAPE(100, 50), LMNN_BFLOAT16),
        mk("bf16 x fp32", LMNN_SHAPE(40, 100), LMNN_SHAPE(100, 50), LMNN_BFLOAT16),
    };
    cs[0].bdt = cs[1].bdt = LMNN_BFLOAT8_B;
    cs[2].o.output.dtype = LMNN_FLOAT32;
    cs[3].o.output.dtype = LMNN_BFLOAT16;
    cs[4].o.output.dtype = LMNN_BFLOAT8_B;
    cs[5].bdt = LMNN_FLOAT32;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (i == 4) continue; /* checked below with its own bound */
        run_case(&cs[i], 700 + i, NULL);
    }
    /* bfloat8_b output: within its 7-bit mantissa of the block's largest. */
    lmnn_tensor t;
    mm_case c = cs[4];
    c.o.output.dtype = LMNN_FLOAT32;
    run_case(&c, 704, &t);
    float *want = nn_download(t);
    lmnn_tensor_free(t);
    size_t na = 40 * 100, nb = 100 * 50;
    float *a = nn_rand_floats(na, -1, 1, 704), *b = nn_rand_floats(nb, -1, 1, 705);
    lmnn_tensor ta, tb, tc, t32;
    CHECK_OK(nn_upload(&c.as, a, LMNN_BFLOAT16, LMNN_TILE, &ta));
    CHECK_OK(nn_upload(&c.bs, b, LMNN_BFLOAT16, LMNN_TILE, &tb));
    CHECK_OK(lmnn_matmul(ta, tb, &cs[4].o, &tc));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(tc, &info));
    CHECK(info.dtype == LMNN_BFLOAT8_B);
    CHECK_OK(lmnn_typecast(tc, LMNN_FLOAT32, &t32));
    float *got = nn_download(t32);
    double wmax = 0;
    for (size_t i = 0; i < 40 * 50; i++)
        wmax = fmax(wmax, fabs(want[i]));
    for (size_t i = 0; i < 40 * 50; i++)
        CHECK(fabs(got[i] - want[i]) <= wmax * ldexp(1, -6));
    free(a), free(b), free(got), free(want);
    lmnn_tensor_free(ta);
    lmnn_tensor_free(tb);
    lmnn_tensor_free(tc);
    lmnn_tensor_free(t32);
}

static void test_memory(void) {
    mm_case c = mk("L1 output", LMNN_SHAPE(64, 96), LMNN_SHAPE(96, 64), LMNN_FLOAT32);
    c.o.output.memory.type = LM_BUFFER_L1;
    lmnn_tensor t;
    run_case(&c, 800, &t);
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(t, &info));
    CHECK(info.memory.type == LM_BUFFER_L1);
    lmnn_tensor_free(t);
    /* L1 operands. */
    float *x = nn_rand_floats(64 * 96, -1, 1, 801);
    lmnn_shape s = LMNN_SHAPE(64, 96), st = LMNN_SHAPE(96, 64);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.memory.type = LM_BUFFER_L1;
    lmnn_tensor a, b, out1, out2;
    CHECK_OK(lmnn_from_host(nn_dev(), &s, x, 64 * 96 * 4, &o, &a));
    CHECK_OK(lmnn_from_host(nn_dev(), &st, x, 64 * 96 * 4, &o, &b));
    CHECK_OK(lmnn_matmul(a, b, NULL, &out1));
    lmnn_tensor ad, bd;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &ad));
    CHECK_OK(nn_upload(&st, x, LMNN_FLOAT32, LMNN_TILE, &bd));
    CHECK_OK(lmnn_matmul(ad, bd, NULL, &out2));
    float *y1 = nn_download(out1), *y2 = nn_download(out2);
    CHECK(y1 && y2 && !memcmp(y1, y2, 64 * 64 * 4));
    free(x), free(y1), free(y2);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(ad), lmnn_tensor_free(bd);
    lmnn_tensor_free(out1), lmnn_tensor_free(out2);
}

/* A batch of matrices with few rows times one b runs as one matrix of all
 * the rows (repacked, then unpacked): the reference bounds with bias, an
 * activation, a transposed b, b with batch dims of 1 and bfloat16; the same
 * bits as the product of the rows packed by hand, whose program the packed
 * call already built (a cache hit); an L1 output stays in L1. A batch whose
 * matrices nearly fill their tiles keeps the batched path and agrees too. */
static void test_packed(void) {
    mm_case cs[] = {
        mk("[40,1,70]x[70,90] packed", LMNN_SHAPE(40, 1, 70), LMNN_SHAPE(70, 90), LMNN_FLOAT32),
        mk("linear gelu [6,5,2,65]x[47,65]^T", LMNN_SHAPE(6, 5, 2, 65), LMNN_SHAPE(47, 65),
           LMNN_BFLOAT16),
        mk("[7,7,200]x[1,200,300] packed", LMNN_SHAPE(7, 7, 200), LMNN_SHAPE(1, 200, 300),
           LMNN_FLOAT32),
        mk("[6,40,64]x[64,64] batched", LMNN_SHAPE(6, 40, 64), LMNN_SHAPE(64, 64), LMNN_FLOAT32),
    };
    cs[1].linear = true;
    cs[1].o.transpose_b = true;
    cs[1].o.activation = LMNN_GELU_TANH;
    cs[2].o.output.memory.type = LM_BUFFER_L1;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        lmnn_tensor t;
        run_case(&cs[i], 1000 + i, &t);
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(t, &info));
        CHECK(info.memory.type == (i == 2 ? LM_BUFFER_L1 : LM_BUFFER_DRAM));
        if (i == 0) {
            /* The rows packed by hand: [40, 70] x [70, 90]. */
            float *a = nn_rand_floats(40 * 70, -1, 1, 1000),
                  *b = nn_rand_floats(70 * 90, -1, 1, 1001);
            lmnn_shape as = LMNN_SHAPE(40, 70), bs = LMNN_SHAPE(70, 90);
            lmnn_tensor ta, tb, tc;
            CHECK_OK(nn_upload(&as, a, LMNN_FLOAT32, LMNN_TILE, &ta));
            CHECK_OK(nn_upload(&bs, b, LMNN_FLOAT32, LMNN_TILE, &tb));
            lmnn_program_cache_stats s1, s2;
            CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &s1));
            CHECK_OK(lmnn_matmul(ta, tb, NULL, &tc));
            CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &s2));
            CHECK_EQ_U64(s2.hits, s1.hits + 1);
            CHECK_EQ_U64(s2.misses, s1.misses);
            float *want = nn_download(tc), *got = nn_download(t);
            CHECK(want && got && !memcmp(want, got, 40 * 90 * sizeof(float)));
            free(a), free(b), free(want), free(got);
            lmnn_tensor_free(ta), lmnn_tensor_free(tb), lmnn_tensor_free(tc);
        }
        lmnn_tensor_free(t);
    }
}

/* The second call with the same shapes and options is a cache hit with the
 * same bits; other options build another program. */
static void test_cache(void) {
    lm_device *dev = nn_dev();
    lmnn_shape s = LMNN_SHAPE(64, 96), st = LMNN_SHAPE(96, 64);
    float *x = nn_rand_floats(64 * 96, -1, 1, 900);
    lmnn_tensor a, b, c1, c2, c3;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&st, x, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(lmnn_matmul(a, b, NULL, &c1));
    lmnn_program_cache_stats s1, s2, s3;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    CHECK_OK(lmnn_matmul(a, b, NULL, &c2));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s2));
    CHECK_EQ_U64(s2.hits, s1.hits + 1);
    CHECK_EQ_U64(s2.misses, s1.misses);
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.activation = LMNN_RELU;
    CHECK_OK(lmnn_matmul(a, b, &o, &c3));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s3));
    CHECK_EQ_U64(s3.misses, s2.misses + 1);
    float *y1 = nn_download(c1), *y2 = nn_download(c2);
    CHECK(y1 && y2 && !memcmp(y1, y2, 64 * 64 * 4));
    /* A hit on other buffers reads those. */
    lmnn_tensor a2, c4;
    for (size_t i = 0; i < 64 * 96; i++)
        x[i] = -x[i];
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a2));
    CHECK_OK(lmnn_matmul(a2, b, NULL, &c4));
    float *y4 = nn_download(c4);
    CHECK(y4);
    for (size_t i = 0; i < 64 * 64; i++)
        CHECK(y4[i] == -y1[i]);
    free(x), free(y1), free(y2), free(y4);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(a2);
    lmnn_tensor_free(c1), lmnn_tensor_free(c2), lmnn_tensor_free(c3), lmnn_tensor_free(c4);
}

/* Multicast of the A and B panels: the reference bounds, and the same bits
 * as without (blocks accumulate in the same order either way). Covers both
 * multicasts, A only (batched b), steps where a core only relays, transposes,
 * bias and activation. */
static void test_multicast(void) {
    mm_case cs[] = {
        mk("mcast [512,1024]x[1024,768]", LMNN_SHAPE(512, 1024), LMNN_SHAPE(1024, 768),
           LMNN_BFLOAT16),
        mk("mcast [512,1024]x[1024,768] fp32 acc", LMNN_SHAPE(512, 1024), LMNN_SHAPE(1024, 768),
           LMNN_BFLOAT16),
        mk("mcast [1150,64]x[64,1130]", LMNN_SHAPE(1150, 64), LMNN_SHAPE(64, 1130), LMNN_BFLOAT16),
        mk("mcast [2,1,33,40]x[1,4,40,17]", LMNN_SHAPE(2, 1, 33, 40), LMNN_SHAPE(1, 4, 40, 17),
           LMNN_FLOAT32),
        mk("mcast [2,3,200,90] x [300,90]^T", LMNN_SHAPE(2, 3, 200, 90), LMNN_SHAPE(300, 90),
           LMNN_BFLOAT16),
        mk("mcast [300,200]^T x [300,260]", LMNN_SHAPE(300, 200), LMNN_SHAPE(300, 260),
           LMNN_FLOAT32),
        mk("mcast linear gelu [100,300]x[300,230]", LMNN_SHAPE(100, 300), LMNN_SHAPE(300, 230),
           LMNN_FLOAT32),
    };
    cs[1].o.fp32_accumulate = LMNN_FP32_ACC_ON;
    cs[4].o.transpose_b = true;
    cs[5].o.transpose_a = true;
    cs[6].linear = true;
    cs[6].o.activation = LMNN_GELU_TANH;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        lmnn_tensor with, without;
        cs[i].o.multicast = true;
        run_case(&cs[i], 650 + i, &with);
        cs[i].o.multicast = false;
        run_case(&cs[i], 650 + i, &without);
        float *y1 = nn_download(with), *y2 = nn_download(without);
        size_t n;
        CHECK_OK(lmnn_tensor_host_size(with, &n));
        CHECK(y1 && y2 && !memcmp(y1, y2, n));
        free(y1), free(y2);
        lmnn_tensor_free(with);
        lmnn_tensor_free(without);
    }
}

/* A linear layer captured with Light Metal after its program was cached (the
 * capture snapshots it, and a hit on unchanged buffers sets no arguments)
 * replays on a fresh device to the same bits. */
static void test_capture_replay(void) {
    lm_device *dev = nn_dev();
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lmnn_shape sa = LMNN_SHAPE(64, 96), sw = LMNN_SHAPE(80, 96), sbias = LMNN_SHAPE(80);
    float *x = nn_rand_floats(64 * 96, -1, 1, 1000), *w = nn_rand_floats(80 * 96, -1, 1, 1001);
    float *bv = nn_rand_floats(80, -1, 1, 1002);
    lmnn_tensor a, wt, bias, y0, y1, y2;
    CHECK_OK(nn_upload(&sa, x, LMNN_BFLOAT16, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&sw, w, LMNN_BFLOAT16, LMNN_TILE, &wt));
    CHECK_OK(nn_upload(&sbias, bv, LMNN_BFLOAT16, LMNN_TILE, &bias));
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.transpose_b = true;
    o.activation = LMNN_RELU;
    CHECK_OK(lmnn_linear(a, wt, bias, &o, &y0));
    CHECK_OK(lmnn_linear(a, wt, bias, &o, &y1)); /* cached, y1's address set */
    CHECK_OK(lmnn_tensor_free(y0));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lmnn_linear(a, wt, bias, &o, &y2));
    CHECK_OK(lmnn_capture_name(y2, "y"));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y2, &info));
    CHECK_OK(lm_capture_compare_to_capture(cq, info.buffer));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    uint64_t size;
    CHECK_OK(lm_buffer_size(info.buffer, &size));
    uint8_t *want = malloc(size), *got = malloc(size);
    CHECK_OK(lm_enqueue_read_buffer(cq, info.buffer, want, true));
    const void *data;
    uint64_t bytes;
    CHECK_OK(lm_binary_data(bin, &data, &bytes));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, bytes, &r));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, size));
    CHECK(!memcmp(got, want, size));
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x), free(w), free(bv), free(want), free(got);
    lmnn_tensor ts[] = {a, wt, bias, y1, y2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
}

static void test_errors(void) {
    lm_device *dev = nn_dev();
    float x[64 * 64] = {0};
    lmnn_shape s35 = LMNN_SHAPE(3, 5), s47 = LMNN_SHAPE(4, 7), s57 = LMNN_SHAPE(5, 7);
    lmnn_tensor a, b, c, out;
    CHECK_OK(nn_upload(&s35, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s47, x, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(nn_upload(&s57, x, LMNN_FLOAT32, LMNN_TILE, &c));
    CHECK_FAILS(lmnn_matmul(a, b, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: inner dim 4 of shape [4, 7] does not match a's inner dim 5 of "
                "shape [3, 5]");
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.transpose_b = true;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "b: inner dim 7 of shape [5, 7] (transposed) does not match a's inner dim 5");
    CHECK_FAILS(lmnn_linear(a, b, (lmnn_tensor){0}, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: weight: inner dim 4 of shape [4, 7] does not match input's inner "
                "dim 5 of shape [3, 5]");
    CHECK_FAILS(lmnn_matmul(a, c, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_matmul: out is NULL");
    /* Batch dims that do not broadcast. */
    lmnn_shape s2 = LMNN_SHAPE(2, 3, 5), s3 = LMNN_SHAPE(3, 5, 7);
    lmnn_tensor a2, b3;
    CHECK_OK(nn_upload(&s2, x, LMNN_FLOAT32, LMNN_TILE, &a2));
    CHECK_OK(nn_upload(&s3, x, LMNN_FLOAT32, LMNN_TILE, &b3));
    CHECK_FAILS(lmnn_matmul(a2, b3, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: batch dims of shape [3, 5, 7] do not broadcast with a's shape "
                "[2, 3, 5]");
    /* Layout and dtype. */
    lmnn_tensor rm, iu;
    CHECK_OK(nn_upload(&s35, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_matmul(a, rm, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: expected layout tile, given row_major");
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_UINT32;
    uint32_t u[35] = {0};
    CHECK_OK(lmnn_from_host(dev, &s57, u, sizeof u, &to, &iu));
    CHECK_FAILS(lmnn_matmul(a, iu, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: expected a float dtype (bfloat16, float32, bfloat8_b), given "
                "uint32");
    /* Options. */
    lmnn_matmul_options_init(&o);
    o.output.dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: output.dtype: expected a float dtype, given int32");
    lmnn_matmul_options_init(&o);
    o.fp32_accumulate = (lmnn_fp32_accumulate)7;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: fp32_accumulate: unknown value 7");
    lmnn_matmul_options_init(&o);
    o.activation = (lmnn_unary_op)99;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: activation: unknown unary op 99");
    o.activation = LMNN_CELU;
    o.activation_alpha = 0;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: activation: celu alpha: expected a nonzero number, given 0");
    o.activation = LMNN_CLAMP;
    o.activation_alpha = 2;
    o.activation_beta = 1;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "activation: clamp min 2 is greater than max 1");
    lmnn_matmul_options_init(&o);
    o.output.memory.layout = LM_BUFFER_HEIGHT_SHARDED;
    CHECK_FAILS(lmnn_matmul(a, c, &o, &out), LM_ERR_UNSUPPORTED, "sharded tensors");
    /* Ranks. */
    lmnn_shape s5 = LMNN_SHAPE(5), s0 = lmnn_shape_of(0, NULL);
    lmnn_tensor v5, sc;
    CHECK_OK(nn_upload(&s5, x, LMNN_FLOAT32, LMNN_TILE, &v5));
    CHECK_OK(nn_upload(&s0, x, LMNN_FLOAT32, LMNN_TILE, &sc));
    CHECK_FAILS(lmnn_matmul(sc, c, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: a: expected rank >= 1, given a rank-0 tensor");
    CHECK_FAILS(lmnn_matmul(a, v5, NULL, &out), LM_ERR_UNSUPPORTED,
                "lmnn_matmul: b: a rank-1 b (shape [5]) with a of shape [3, 5] is not supported; "
                "give b as [K, 1]");
    CHECK_FAILS(lmnn_matmul(v5, b3, NULL, &out), LM_ERR_UNSUPPORTED,
                "a: a rank-1 a (shape [5]) with a batched b of shape [3, 5, 7] is not supported");
    lmnn_matmul_options_init(&o);
    o.transpose_a = true;
    CHECK_FAILS(lmnn_matmul(v5, c, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: transpose_a: expected a of rank >= 2, given shape [5]");
    /* Bias. */
    lmnn_shape s71 = LMNN_SHAPE(7, 1), s17 = LMNN_SHAPE(1, 7), s7 = LMNN_SHAPE(7);
    lmnn_tensor bad_bias, bias17, bias7, rm_bias;
    CHECK_OK(nn_upload(&s71, x, LMNN_FLOAT32, LMNN_TILE, &bad_bias));
    CHECK_OK(nn_upload(&s17, x, LMNN_FLOAT32, LMNN_TILE, &bias17));
    CHECK_OK(nn_upload(&s7, x, LMNN_FLOAT32, LMNN_TILE, &bias7));
    CHECK_OK(nn_upload(&s7, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm_bias));
    CHECK_FAILS(lmnn_linear(a, c, bad_bias, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: bias: expected shape [7] or [1, 7], given [7, 1]");
    CHECK_FAILS(lmnn_linear(a, c, a, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: bias: expected shape [7] or [1, 7], given [3, 5]");
    CHECK_FAILS(lmnn_linear(a, c, rm_bias, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: bias: expected layout tile, given row_major");
    /* Freed tensors and tensors of another device. */
    lmnn_tensor dead;
    CHECK_OK(nn_upload(&s57, x, LMNN_FLOAT32, LMNN_TILE, &dead));
    CHECK_OK(lmnn_tensor_free(dead));
    CHECK_FAILS(lmnn_matmul(a, dead, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_matmul: b: tensor handle is stale");
    CHECK_FAILS(lmnn_matmul((lmnn_tensor){0}, c, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_matmul: a: tensor handle is zero");
    CHECK_FAILS(lmnn_linear(a, c, dead, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_linear: bias: tensor handle is stale");
    lm_device *other;
    CHECK_OK(lm_device_open(NULL, &other));
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    lmnn_tensor foreign;
    CHECK_OK(lmnn_from_host(other, &s57, x, 35 * 4, &to, &foreign));
    CHECK_FAILS(lmnn_matmul(a, foreign, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_matmul: b: the tensor is on another device than the op's first input");
    CHECK_FAILS(lmnn_linear(a, c, foreign, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_linear: bias: the tensor is on another device");
    lmnn_tensor_free(foreign);
    lm_device_close(other);
    /* Errors build nothing, and the device still works. */
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));
    CHECK_FAILS(lmnn_matmul(a, b, NULL, &out), LM_ERR_INVALID_ARGUMENT, "inner dim");
    CHECK_FAILS(lmnn_linear(a, c, bad_bias, NULL, &out), LM_ERR_INVALID_ARGUMENT, "bias");
    CHECK_OK(lmnn_program_cache_get_stats(dev, &after));
    CHECK_EQ_U64(after.entries, before.entries);
    CHECK_EQ_U64(after.misses, before.misses);
    CHECK_OK(lmnn_linear(a, c, bias17, NULL, &out));
    float *y = nn_download(out);
    CHECK(y);
    for (int i = 0; i < 21; i++)
        CHECK(y[i] == 0);
    free(y);
    lmnn_tensor_free(out);
    lmnn_tensor ts[] = {a, b, c, a2, b3, rm, iu, v5, sc, bad_bias, bias17, bias7, rm_bias};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
}

int main(void) {
    TEST_RUN(test_shapes);
    TEST_RUN(test_batched);
    TEST_RUN(test_transposes);
    TEST_RUN(test_linear);
    TEST_RUN(test_row_major_a);
    TEST_RUN(test_input_dtype);
    TEST_RUN(test_row_major_out);
    TEST_RUN(test_activations);
    TEST_RUN(test_padding);
    TEST_RUN(test_dtypes);
    TEST_RUN(test_memory);
    TEST_RUN(test_cache);
    TEST_RUN(test_packed);
    TEST_RUN(test_large);
    TEST_RUN(test_tall);
    TEST_RUN(test_multicast);
    TEST_RUN(test_capture_replay);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
