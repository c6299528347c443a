/* Binary element-wise ops: every op in float32 and bfloat16 over NumPy
 * broadcast patterns against a float64 host reference rounded to the output
 * dtype, scalar forms, fused activations, output dtype and memory, mixed input
 * dtypes, zero padding, the program cache, a multi-core case and the errors. */
#include "nn_test.h"

static const lmnn_binary_op ops[] = {
    LMNN_BINARY_ADD,  LMNN_BINARY_SUB,         LMNN_BINARY_MUL,        LMNN_BINARY_DIV,
    LMNN_BINARY_RSUB, LMNN_BINARY_MAXIMUM,     LMNN_BINARY_MINIMUM,    LMNN_BINARY_EQ,
    LMNN_BINARY_NE,   LMNN_BINARY_LT,          LMNN_BINARY_LE,         LMNN_BINARY_GT,
    LMNN_BINARY_GE,   LMNN_BINARY_LOGICAL_AND, LMNN_BINARY_LOGICAL_OR, LMNN_BINARY_LOGICAL_XOR};
#define NOPS (sizeof ops / sizeof ops[0])

static double ref_op(lmnn_binary_op op, double x, double y) {
    switch (op) {
    case LMNN_BINARY_ADD:
        return x + y;
    case LMNN_BINARY_SUB:
        return x - y;
    case LMNN_BINARY_MUL:
        return x * y;
    case LMNN_BINARY_DIV:
        return x / y;
    case LMNN_BINARY_RSUB:
        return y - x;
    case LMNN_BINARY_MAXIMUM:
        return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    case LMNN_BINARY_EQ:
        return x == y;
    case LMNN_BINARY_NE:
        return x != y;
    case LMNN_BINARY_LT:
        return x < y;
    case LMNN_BINARY_LE:
        return x <= y;
    case LMNN_BINARY_GT:
        return x > y;
    case LMNN_BINARY_GE:
        return x >= y;
    case LMNN_BINARY_LOGICAL_AND:
        return x != 0 && y != 0;
    case LMNN_BINARY_LOGICAL_OR:
        return x != 0 || y != 0;
    case LMNN_BINARY_LOGICAL_XOR:
        return (x != 0) != (y != 0);
    default:
        return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
    }
}

/* A float64 result as the device stores it: float32, then the output dtype
 * (the device's dst holds float32 and the pack rounds once more). */
static double round_to(double r, lmnn_dtype dtype) {
    float f = (float)r;
    return dtype == LMNN_BFLOAT16 ? nn_bf16(f) : f;
}

/* Distance in units in the last place of `dtype` (bfloat16: 2^16 float32
 * ulps); NaN against NaN is 0, NaN against a number is huge. */
static double ulps(float got, double want, lmnn_dtype dtype) {
    float w = (float)want;
    if (isnan(got) || isnan(w)) return isnan(got) && isnan(w) ? 0 : 1e30;
    if (got == w) return 0;
    int32_t a, b;
    memcpy(&a, &got, 4);
    memcpy(&b, &w, 4);
    int64_t oa = a < 0 ? (int64_t)INT32_MIN - a : a, ob = b < 0 ? (int64_t)INT32_MIN - b : b;
    double d = fabs((double)(oa - ob));
    return dtype == LMNN_BFLOAT16 ? d / 65536 : d;
}

/* Index of the element of `in` (aligned to `out`'s rank, dims of 1 repeated)
 * for each element of `out`, in row-major order. */
static size_t *broadcast_index(const lmnn_shape *out, const lmnn_shape *in) {
    size_t n = lmnn_shape_volume(out);
    size_t *map = malloc(n * sizeof *map);
    uint32_t r = out->rank, d[LMNN_MAX_DIMS], idx[LMNN_MAX_DIMS] = {0};
    size_t stride[LMNN_MAX_DIMS], s = 1;
    for (uint32_t k = r; k-- > 0;) {
        d[k] = k + in->rank >= r ? in->dims[k + in->rank - r] : 1;
        stride[k] = d[k] == 1 ? 0 : s;
        s *= d[k];
    }
    for (size_t e = 0; e < n; e++) {
        size_t off = 0;
        for (uint32_t k = 0; k < r; k++)
            off += idx[k] * stride[k];
        map[e] = off;
        for (uint32_t k = r; k-- > 0;) {
            if (++idx[k] < out->dims[k]) break;
            idx[k] = 0;
        }
    }
    return map;
}

static lmnn_shape broadcast_shape(const lmnn_shape *a, const lmnn_shape *b) {
    lmnn_shape o = {a->rank > b->rank ? a->rank : b->rank, {0}};
    for (uint32_t k = 0; k < o.rank; k++) {
        uint32_t x = k + a->rank >= o.rank ? a->dims[k + a->rank - o.rank] : 1;
        uint32_t y = k + b->rank >= o.rank ? b->dims[k + b->rank - o.rank] : 1;
        o.dims[k] = x > y ? x : y;
    }
    return o;
}

static int shape_eq(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return 0;
    for (uint32_t k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return 0;
    return 1;
}

/* The tile tensor's padding, read raw from its buffer (float32 or bfloat16),
 * is all zero bits. */
static int padding_is_zero(lmnn_tensor tensor) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(tensor, &info) || info.layout != LMNN_TILE) return 0;
    uint32_t es = info.dtype == LMNN_FLOAT32 ? 4 : info.dtype == LMNN_BFLOAT16 ? 2 : 0;
    if (!es) return 0;
    uint64_t size;
    lm_buffer_size(info.buffer, &size);
    uint8_t *raw = malloc(size);
    lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, raw, true);
    uint32_t r = info.shape.rank;
    uint32_t w = r ? info.shape.dims[r - 1] : 1, h = r > 1 ? info.shape.dims[r - 2] : 1;
    uint32_t wt = (w + 31) / 32, ht = (h + 31) / 32;
    uint64_t tiles = size / (1024 * es);
    int ok = 1;
    for (uint64_t t = 0; t < tiles && ok; t++) {
        uint32_t tc = (uint32_t)(t % wt), tr = (uint32_t)(t / wt % ht);
        for (uint32_t i = 0; i < 32 && ok; i++)
            for (uint32_t j = 0; j < 32; j++) {
                if (tr * 32 + i < h && tc * 32 + j < w) continue;
                uint32_t off = ((i / 16) * 2 + j / 16) * 256 + (i % 16) * 16 + j % 16;
                const uint8_t *p = raw + t * 1024 * es + off * es;
                for (uint32_t k = 0; k < es; k++)
                    if (p[k]) ok = 0;
            }
    }
    free(raw);
    return ok;
}

/* Largest errors of an op and dtype over the patterns, for the report. */
typedef struct stats {
    double ulp, abs, rel, pcc;
} stats;

static void stats_add(stats *s, double ulp, nn_err e) {
    if (ulp > s->ulp) s->ulp = ulp;
    if (e.max_abs > s->abs) s->abs = e.max_abs;
    if (e.max_rel > s->rel) s->rel = e.max_rel;
    if (e.pcc < s->pcc) s->pcc = e.pcc;
}

/* Runs `op` on a (shape sa) and b (shape sb) in `dtype` and compares with the
 * reference; *max_ulp gets the largest ulp distance. Returns 0 on a failed
 * call or a nonzero padding. */
static int run_case(lmnn_binary_op op, const lmnn_shape *sa, const lmnn_shape *sb, lmnn_dtype dtype,
                    uint64_t seed, double *max_ulp, nn_err *err) {
    size_t na = lmnn_shape_volume(sa), nb = lmnn_shape_volume(sb);
    float *xa = nn_rand_floats(na, -4, 4, seed), *xb = nn_rand_floats(nb, 0.25f, 4, seed + 100);
    for (size_t i = 0; i < nb; i += 2)
        xb[i] = -xb[i]; /* both signs, never near 0 (div) */
    lmnn_tensor a, b, c;
    int ok = !nn_upload(sa, xa, dtype, LMNN_TILE, &a) && !nn_upload(sb, xb, dtype, LMNN_TILE, &b);
    ok = ok && !lmnn_binary(op, a, b, NULL, &c);
    if (!ok) {
        printf("  %s: %s\n", lmnn_binary_op_name(op), lm_last_error());
        return 0;
    }
    float *va = nn_download(a), *vb = nn_download(b), *vc = nn_download(c);
    lmnn_shape so = broadcast_shape(sa, sb);
    size_t no = lmnn_shape_volume(&so);
    size_t *ma = broadcast_index(&so, sa), *mb = broadcast_index(&so, sb);
    double *want = malloc(no * sizeof *want);
    *max_ulp = 0;
    for (size_t e = 0; e < no; e++) {
        want[e] = round_to(ref_op(op, va[ma[e]], vb[mb[e]]), dtype);
        double u = ulps(vc[e], want[e], dtype);
        if (u > *max_ulp) *max_ulp = u;
    }
    *err = nn_compare(vc, want, no, 1e-30);
    lmnn_tensor_info info;
    ok = !lmnn_tensor_get_info(c, &info) && shape_eq(&info.shape, &so) && padding_is_zero(c);
    free(xa), free(xb), free(va), free(vb), free(vc), free(ma), free(mb), free(want);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c);
    return ok;
}

static const char *dtype_short(lmnn_dtype d) {
    return d == LMNN_FLOAT32 ? "fp32" : d == LMNN_BFLOAT16 ? "bf16" : "bfp8";
}

/* Every op, both dtypes, broadcast patterns on both sides (rows, columns,
 * scalars, outer dims, both inputs broadcasting, 1-element and rank 0):
 * within 1 ulp of the output dtype of the rounded float64 result. */
static void test_broadcast_patterns(void) {
    static lmnn_shape pat[18][2];
    lmnn_shape big = LMNN_SHAPE(2, 3, 45, 70);
    int np = 0;
#define PAT(x, y) (pat[np][0] = (x), pat[np][1] = (y), np++)
    PAT(big, LMNN_SHAPE(70));
    PAT(big, LMNN_SHAPE(45, 1));
    PAT(big, LMNN_SHAPE(1, 1));
    PAT(big, LMNN_SHAPE(3, 1, 70));
    PAT(big, LMNN_SHAPE(2, 1, 1, 1));
    PAT(big, big);
    PAT(big, LMNN_SHAPE(3, 45, 70));
    PAT(LMNN_SHAPE(2, 1, 45, 70), big);
    PAT(LMNN_SHAPE(1), LMNN_SHAPE(1));
    PAT(LMNN_SHAPE(70), big);
    PAT(LMNN_SHAPE(45, 1), big);
    PAT(LMNN_SHAPE(1), LMNN_SHAPE(45, 70));
    PAT(LMNN_SHAPE(45, 1), LMNN_SHAPE(1, 70));
    PAT(LMNN_SHAPE(3, 1, 70), LMNN_SHAPE(2, 1, 45, 1));
    PAT(lmnn_shape_of(0, NULL), LMNN_SHAPE(5, 33));
    PAT(lmnn_shape_of(0, NULL), lmnn_shape_of(0, NULL));
    PAT(LMNN_SHAPE(2, 1, 3, 1, 40, 33), LMNN_SHAPE(2, 3, 1, 1, 33));
#undef PAT
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        for (size_t o = 0; o < NOPS; o++) {
            stats st = {0, 0, 0, 1};
            for (int p = 0; p < np; p++) {
                double u = 0;
                nn_err e = {0, 0, 0, 0};
                int ok = run_case(ops[o], &pat[p][0], &pat[p][1], dtype, (uint64_t)(p * 31 + o + 1),
                                  &u, &e);
                if (!ok || u > 1)
                    printf("  %s %s pattern %d: ok %d, %.0f ulp\n", lmnn_binary_op_name(ops[o]),
                           dtype_short(dtype), p, ok, u);
                CHECK(ok);
                CHECK(u <= 1);
                stats_add(&st, u, e);
            }
            printf("  %-8s %s  max %.0f ulp  max abs %.3g  max rel %.3g  pcc %.8f\n",
                   lmnn_binary_op_name(ops[o]), dtype_short(dtype), st.ulp, st.abs, st.rel, st.pcc);
        }
    }
}

/* IEEE specials: x / 0, 0 / 0, infinities, NaN in maximum and minimum, signed
 * zeros, through the plain and the broadcast paths. */
static void test_specials(void) {
    float x[10] = {0, 1, -1, 0, INFINITY, -INFINITY, NAN, 2, -0.0f, 3};
    float y[10] = {0, 0, -0.0f, -0.0f, INFINITY, 1, 1, NAN, 5, -INFINITY};
    lmnn_shape s = LMNN_SHAPE(10);
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        lmnn_tensor a, b, a1;
        CHECK_OK(nn_upload(&s, x, dtype, LMNN_TILE, &a));
        CHECK_OK(nn_upload(&s, y, dtype, LMNN_TILE, &b));
        for (size_t o = 0; o < NOPS; o++) {
            lmnn_tensor c;
            CHECK_OK(lmnn_binary(ops[o], a, b, NULL, &c));
            float *v = nn_download(c);
            CHECK(v);
            for (int i = 0; i < 10; i++) {
                double want = round_to(ref_op(ops[o], x[i], y[i]), dtype);
                CHECK(ulps(v[i], want, dtype) == 0);
                if (want == 0 && !signbit(v[i]) != !signbit(want))
                    printf("  %s %s: %g op %g = %g, want %g\n", lmnn_binary_op_name(ops[o]),
                           dtype_short(dtype), x[i], y[i], v[i], want);
                if (want == 0) CHECK(!signbit(v[i]) == !signbit(want));
            }
            free(v);
            lmnn_tensor_free(c);
        }
        /* A broadcast -0 keeps its sign through the expansion into dst. */
        float m0 = -0.0f;
        lmnn_shape one = LMNN_SHAPE(1, 1);
        CHECK_OK(nn_upload(&one, &m0, dtype, LMNN_TILE, &a1));
        lmnn_tensor q;
        CHECK_OK(lmnn_div(b, a1, &q)); /* y / -0 */
        float *v = nn_download(q);
        CHECK(v);
        for (int i = 0; i < 10; i++)
            CHECK(ulps(v[i], round_to((double)y[i] / -0.0, dtype), dtype) == 0);
        free(v);
        lmnn_tensor_free(q);
        lmnn_tensor_free(a1);
        lmnn_tensor_free(a);
        lmnn_tensor_free(b);
    }
}

/* a (op) s and, for rsub, s - a; s = 0.3 is not a bfloat16, so it must reach
 * the math as float32. A repeat is a cache hit; another value is another
 * program, same results otherwise. */
static void test_scalar(void) {
    lmnn_shape s = LMNN_SHAPE(3, 45, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -4, 4, 9);
    double *want = malloc(n * sizeof *want);
    typedef lm_status (*scalar_fn)(lmnn_tensor, double, lmnn_tensor *);
    static const scalar_fn fns[NOPS] = {lmnn_add_scalar,    lmnn_sub_scalar,  lmnn_mul_scalar,
                                        lmnn_div_scalar,    lmnn_rsub_scalar, lmnn_maximum_scalar,
                                        lmnn_minimum_scalar};
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        lmnn_tensor a;
        CHECK_OK(nn_upload(&s, x, dtype, LMNN_TILE, &a));
        float *va = nn_download(a);
        for (size_t o = 0; o < NOPS; o++) {
            double sv = 0.3;
            lmnn_tensor c;
            /* The comparison and logical ops have no by-name scalar form. */
            CHECK_OK(fns[o] ? fns[o](a, sv, &c) : lmnn_binary_scalar(ops[o], a, sv, NULL, &c));
            float *v = nn_download(c);
            CHECK(v);
            double u = 0;
            for (size_t i = 0; i < n; i++) {
                want[i] = round_to(ref_op(ops[o], va[i], (float)sv), dtype);
                double k = ulps(v[i], want[i], dtype);
                if (k > u) u = k;
            }
            nn_err e = nn_compare(v, want, n, 1e-30);
            printf("  %-8s_scalar %s  max %.0f ulp  max abs %.3g  max rel %.3g  pcc %.8f\n",
                   lmnn_binary_op_name(ops[o]), dtype_short(dtype), u, e.max_abs, e.max_rel, e.pcc);
            CHECK(u <= 1);
            CHECK(padding_is_zero(c));
            free(v);
            lmnn_tensor_free(c);
        }
        /* Cache: the same scalar hits; another builds a program. */
        lmnn_program_cache_stats s1, s2;
        lmnn_tensor c1, c2;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &s1));
        CHECK_OK(lmnn_add_scalar(a, 0.3, &c1));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &s2));
        CHECK_EQ_U64(s2.hits, s1.hits + 1);
        CHECK_OK(lmnn_add_scalar(a, -2.5, &c2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &s1));
        CHECK_EQ_U64(s1.misses, s2.misses + 1);
        float *v = nn_download(c2);
        CHECK(v);
        for (size_t i = 0; i < n; i++)
            CHECK(v[i] == (float)round_to((double)va[i] - 2.5, dtype));
        free(v);
        free(va);
        lmnn_tensor_free(c1);
        lmnn_tensor_free(c2);
        lmnn_tensor_free(a);
    }
    free(x);
    free(want);
}

static double ref_act(lmnn_unary_op act, double x, double lo, double hi) {
    switch (act) {
    case LMNN_RELU:
        return x > 0 ? x : 0;
    case LMNN_SIGMOID:
        return 1 / (1 + exp(-x));
    case LMNN_SILU:
        return x / (1 + exp(-x));
    case LMNN_EXP:
        return exp(x);
    case LMNN_TANH:
        return tanh(x);
    default: /* clamp, hardtanh */
        return x < lo ? lo : x > hi ? hi : x;
    }
}

/* A fused activation runs on the float32 result: relu and clamps exactly,
 * the transcendental ones within their SFPU accuracy; f(0) != 0 (sigmoid)
 * leaves the padding zero. */
static void test_activation(void) {
    struct {
        lmnn_binary_op op;
        lmnn_unary_op act;
        double alpha, beta; /* NaN: the defaults */
        double lo, hi;      /* what the reference clamps to */
        int bcast;          /* b is a column */
    } cases[] = {
        {LMNN_BINARY_ADD, LMNN_RELU, NAN, NAN, 0, 0, 1},
        {LMNN_BINARY_MUL, LMNN_SIGMOID, NAN, NAN, 0, 0, 0},
        {LMNN_BINARY_SUB, LMNN_SILU, NAN, NAN, 0, 0, 1},
        {LMNN_BINARY_ADD, LMNN_EXP, NAN, NAN, 0, 0, 0},
        {LMNN_BINARY_MAXIMUM, LMNN_TANH, NAN, NAN, 0, 0, 1},
        {LMNN_BINARY_DIV, LMNN_CLAMP, -0.5, 0.75, -0.5, 0.75, 1},
        {LMNN_BINARY_SUB, LMNN_HARDTANH, NAN, NAN, -1, 1, 0},
    };
    lmnn_shape sa = LMNN_SHAPE(2, 45, 70), sb_col = LMNN_SHAPE(45, 1);
    size_t n = lmnn_shape_volume(&sa);
    float *xa = nn_rand_floats(n, -2, 2, 21), *xb = nn_rand_floats(n, 0.25f, 2, 22);
    double *want = malloc(n * sizeof *want);
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const lmnn_shape *sb = cases[k].bcast ? &sb_col : &sa;
            lmnn_tensor a, b, c;
            CHECK_OK(nn_upload(&sa, xa, dtype, LMNN_TILE, &a));
            CHECK_OK(nn_upload(sb, xb, dtype, LMNN_TILE, &b));
            lmnn_binary_options o;
            lmnn_binary_options_init(&o);
            o.activation = cases[k].act;
            o.activation_alpha = cases[k].alpha;
            o.activation_beta = cases[k].beta;
            CHECK_OK(lmnn_binary(cases[k].op, a, b, &o, &c));
            float *va = nn_download(a), *vb = nn_download(b), *vc = nn_download(c);
            size_t *mb = broadcast_index(&sa, sb);
            for (size_t i = 0; i < n; i++) {
                float r = (float)ref_op(cases[k].op, va[i], vb[mb[i]]); /* dst: float32 */
                want[i] = round_to(ref_act(cases[k].act, r, cases[k].lo, cases[k].hi), dtype);
            }
            nn_err e = nn_compare(vc, want, n, 1e-30);
            printf("  %-8s + %-8s %s  max abs %.3g  max rel %.3g  pcc %.8f\n",
                   lmnn_binary_op_name(cases[k].op), lmnn_unary_op_name(cases[k].act),
                   dtype_short(dtype), e.max_abs, e.max_rel, e.pcc);
            if (d)
                CHECK_ERR(e, 0.9999, 1e-30, 1.0 / 256);
            else
                CHECK_ERR(e, 0.999999, 1e-7, 2e-6);
            CHECK(padding_is_zero(c));
            free(va), free(vb), free(vc), free(mb);
            lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c);
        }
    }
    free(xa), free(xb), free(want);
}

/* Output dtype and memory from the options; mixed input dtypes (the output
 * takes the first input's unless given). */
static void test_dtypes(void) {
    lmnn_shape sa = LMNN_SHAPE(3, 40, 70), sb = LMNN_SHAPE(70);
    size_t n = lmnn_shape_volume(&sa), nb = 70;
    float *xa = nn_rand_floats(n, -4, 4, 31), *xb = nn_rand_floats(nb, -4, 4, 32);
    double *want = malloc(n * sizeof *want);
    size_t *mb = broadcast_index(&sa, &sb);
    struct {
        lmnn_dtype da, db, dout_given, dout;
        lm_buffer_type mem;
    } cases[] = {
        {LMNN_BFLOAT16, LMNN_BFLOAT16, LMNN_FLOAT32, LMNN_FLOAT32, 0},
        {LMNN_FLOAT32, LMNN_FLOAT32, LMNN_BFLOAT16, LMNN_BFLOAT16, LM_BUFFER_L1},
        {LMNN_FLOAT32, LMNN_BFLOAT16, 0, LMNN_FLOAT32, 0},
        {LMNN_BFLOAT16, LMNN_FLOAT32, 0, LMNN_BFLOAT16, LM_BUFFER_L1},
        {LMNN_BFLOAT8_B, LMNN_FLOAT32, LMNN_FLOAT32, LMNN_FLOAT32, 0},
        {LMNN_FLOAT32, LMNN_BFLOAT8_B, 0, LMNN_FLOAT32, 0},
        {LMNN_FLOAT32, LMNN_FLOAT32, LMNN_BFLOAT8_B, LMNN_BFLOAT8_B, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        lmnn_tensor a, b, c;
        CHECK_OK(nn_upload(&sa, xa, cases[k].da, LMNN_TILE, &a));
        CHECK_OK(nn_upload(&sb, xb, cases[k].db, LMNN_TILE, &b));
        lmnn_binary_options o;
        lmnn_binary_options_init(&o);
        o.output.dtype = cases[k].dout_given;
        o.output.memory.type = cases[k].mem;
        CHECK_OK(lmnn_binary(LMNN_BINARY_MUL, a, b, &o, &c));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(c, &info));
        CHECK(info.dtype == cases[k].dout);
        CHECK(info.memory.type == (cases[k].mem ? cases[k].mem : LM_BUFFER_DRAM));
        float *va = nn_download(a), *vb = nn_download(b), *vc = nn_download(c);
        double u = 0, amax = 0;
        for (size_t i = 0; i < n; i++) {
            double r = (double)va[i] * vb[mb[i]];
            want[i] = cases[k].dout == LMNN_BFLOAT8_B ? (float)r : round_to(r, cases[k].dout);
            amax = fmax(amax, fabs(want[i]));
            double q = ulps(vc[i], want[i], cases[k].dout);
            if (q > u) u = q;
        }
        nn_err e = nn_compare(vc, want, n, 1e-30);
        printf("  mul %s x %s -> %s  max abs %.3g  max rel %.3g  pcc %.8f\n",
               dtype_short(cases[k].da), dtype_short(cases[k].db), dtype_short(cases[k].dout),
               e.max_abs, e.max_rel, e.pcc);
        if (cases[k].dout == LMNN_BFLOAT8_B)
            CHECK_ERR(e, 0.9999, amax / 64, 0); /* a 7-bit mantissa shared by 16 values */
        else
            CHECK(u <= 1);
        if (cases[k].dout == LMNN_BFLOAT8_B) { /* look at the padding through float32 */
            lmnn_tensor wide;
            CHECK_OK(lmnn_typecast(c, LMNN_FLOAT32, &wide));
            CHECK(padding_is_zero(wide));
            lmnn_tensor_free(wide);
        } else {
            CHECK(padding_is_zero(c));
        }
        free(va), free(vb), free(vc);
        lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c);
    }
    free(xa), free(xb), free(want), free(mb);
}

/* 512 output tiles over the 64 cores, a row broadcast and a plain case. */
static void test_multi_core(void) {
    lmnn_shape sa = LMNN_SHAPE(4, 256, 512), sr = LMNN_SHAPE(512);
    size_t n = lmnn_shape_volume(&sa);
    float *xa = nn_rand_floats(n, -4, 4, 41), *xb = nn_rand_floats(n, -4, 4, 42);
    lmnn_tensor a, b, r, c1, c2;
    CHECK_OK(nn_upload(&sa, xa, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&sa, xb, LMNN_BFLOAT16, LMNN_TILE, &b));
    CHECK_OK(nn_upload(&sr, xb, LMNN_FLOAT32, LMNN_TILE, &r));
    CHECK_OK(lmnn_sub(a, r, &c1));
    CHECK_OK(lmnn_div(b, a, &c2)); /* bf16 / fp32 -> bf16 */
    float *v1 = nn_download(c1), *v2 = nn_download(c2), *vb = nn_download(b);
    CHECK(v1 && v2 && vb);
    for (size_t i = 0; i < n; i++) {
        CHECK(v1[i] == (float)((double)xa[i] - xb[i % 512]));
        CHECK(ulps(v2[i], round_to((double)vb[i] / xa[i], LMNN_BFLOAT16), LMNN_BFLOAT16) <= 1);
    }
    free(xa), free(xb), free(v1), free(v2), free(vb);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(r);
    lmnn_tensor_free(c1), lmnn_tensor_free(c2);
}

/* The second run with the same shapes is a cache hit with the same bits. */
static void test_cache(void) {
    lm_device *dev = nn_dev();
    lmnn_shape sa = LMNN_SHAPE(2, 33, 65), sb = LMNN_SHAPE(33, 1);
    float *x = nn_rand_floats(2 * 33 * 65, -1, 1, 51);
    lmnn_tensor a, b, c, d;
    CHECK_OK(nn_upload(&sa, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&sb, x, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(lmnn_maximum(a, b, &c));
    lmnn_program_cache_stats s1, s2;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    CHECK_OK(lmnn_maximum(a, b, &d));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s2));
    CHECK_EQ_U64(s2.hits, s1.hits + 1);
    CHECK_EQ_U64(s2.misses, s1.misses);
    CHECK_EQ_U64(s2.entries, s1.entries);
    float *y = nn_download(c), *z = nn_download(d);
    CHECK(y && z && !memcmp(y, z, 2 * 33 * 65 * 4));
    free(x), free(y), free(z);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c), lmnn_tensor_free(d);
}

/* torch.pow: integer and fractional exponents, negative bases (NaN unless
 * the exponent is an integer), zeros, with broadcasting both ways and the
 * scalar-exponent form. */
static double ref_pow(double x, double y) {
    return pow(x, y);
}

static void pow_case(const lmnn_shape *sa, const lmnn_shape *sb, lmnn_dtype dtype, uint64_t seed,
                     stats *st) {
    size_t na = lmnn_shape_volume(sa), nb = lmnn_shape_volume(sb);
    float *xa = nn_rand_floats(na, -4, 4, seed), *xb = nn_rand_floats(nb, -3, 3, seed + 1);
    for (size_t i = 0; i < nb; i += 2)
        xb[i] = (float)(int)xb[i]; /* integer exponents half the time */
    for (size_t i = 0; i < na; i += 7)
        xa[i] = 0;
    lmnn_tensor a, b, c;
    CHECK_OK(nn_upload(sa, xa, dtype, LMNN_TILE, &a));
    CHECK_OK(nn_upload(sb, xb, dtype, LMNN_TILE, &b));
    CHECK_OK(lmnn_pow(a, b, &c));
    float *va = nn_download(a), *vb = nn_download(b), *vc = nn_download(c);
    lmnn_shape so = broadcast_shape(sa, sb);
    size_t no = lmnn_shape_volume(&so);
    size_t *ma = broadcast_index(&so, sa), *mb = broadcast_index(&so, sb);
    double *want = malloc(no * sizeof *want), max_ulp = 0;
    for (size_t e = 0; e < no; e++) {
        want[e] = round_to(ref_pow(va[ma[e]], vb[mb[e]]), dtype);
        double u = ulps(vc[e], want[e], dtype);
        if (u > max_ulp) max_ulp = u;
    }
    nn_err err = nn_compare(vc, want, no, 1e-30);
    stats_add(st, max_ulp, err);
    CHECK(max_ulp <= 1);
    CHECK(padding_is_zero(c));
    free(xa), free(xb), free(va), free(vb), free(vc), free(ma), free(mb), free(want);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c);
}

static void test_pow(void) {
    lmnn_shape big = LMNN_SHAPE(2, 3, 45, 70);
    lmnn_shape pats[][2] = {{big, big},
                            {big, LMNN_SHAPE(70)},
                            {big, LMNN_SHAPE(45, 1)},
                            {LMNN_SHAPE(1, 1), big},
                            {LMNN_SHAPE(3, 1, 70), LMNN_SHAPE(2, 1, 45, 1)},
                            {LMNN_SHAPE(1), LMNN_SHAPE(1)}};
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        stats st = {0, 0, 0, 1};
        for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
            pow_case(&pats[p][0], &pats[p][1], dtype, 40 + p, &st);
            if (test_current_failed_) {
                printf("  pow %s pattern %zu\n", dtype_short(dtype), p);
                return;
            }
        }
        printf("  %-8s %s  max %.0f ulp  max abs %.3g  max rel %.3g  pcc %.8f\n", "pow",
               dtype_short(dtype), st.ulp, st.abs, st.rel, st.pcc);
    }
    /* Specials and the scalar exponent. */
    float x[12] = {-2, -2, -8, 0, 0, 0, -0.0f, 2, INFINITY, NAN, 1, -1};
    float y[12] = {3, 0.5f, 1.0f / 3, 0, -1, 2, -3, -INFINITY, -1, 0, NAN, INFINITY};
    lmnn_shape s = LMNN_SHAPE(12);
    lmnn_tensor a, b, c;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s, y, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(lmnn_pow(a, b, &c));
    float *v = nn_download(c);
    CHECK(v);
    for (int i = 0; i < 12; i++) {
        double want = round_to(pow(x[i], y[i]), LMNN_FLOAT32);
        if (ulps(v[i], want, LMNN_FLOAT32) != 0)
            printf("  pow(%g, %g) = %g, want %g\n", x[i], y[i], v[i], want);
        CHECK(ulps(v[i], want, LMNN_FLOAT32) == 0);
    }
    free(v);
    lmnn_tensor_free(c);
    double exps[] = {2, 3, -1, 0.5, 0};
    for (size_t k = 0; k < sizeof exps / sizeof *exps; k++) {
        CHECK_OK(lmnn_pow_scalar(a, exps[k], &c));
        v = nn_download(c);
        CHECK(v);
        for (int i = 0; i < 12; i++)
            CHECK(ulps(v[i], round_to(pow(x[i], exps[k]), LMNN_FLOAT32), LMNN_FLOAT32) <= 1);
        CHECK(padding_is_zero(c));
        free(v);
        lmnn_tensor_free(c);
    }
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
}

/* where(cond, a, b) over three-way broadcasts: the chosen value exactly,
 * zero and -0 conditions false, NaN true; padding zero. */
static void where_case(const lmnn_shape *sc, const lmnn_shape *sa, const lmnn_shape *sb,
                       lmnn_dtype dtype, uint64_t seed) {
    size_t nc = lmnn_shape_volume(sc), na = lmnn_shape_volume(sa), nb = lmnn_shape_volume(sb);
    float *xc = nn_rand_floats(nc, -1.5f, 1.5f, seed);
    float *xa = nn_rand_floats(na, -4, 4, seed + 1), *xb = nn_rand_floats(nb, -4, 4, seed + 2);
    for (size_t i = 0; i < nc; i++) /* -1, 0, 1, some -0 and NaN */
        xc[i] = i % 11 == 5 ? NAN : i % 13 == 3 ? -0.0f : (float)(int)xc[i];
    lmnn_tensor c, a, b, o;
    CHECK_OK(nn_upload(sc, xc, dtype, LMNN_TILE, &c));
    CHECK_OK(nn_upload(sa, xa, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(sb, xb, dtype, LMNN_TILE, &b));
    CHECK_OK(lmnn_where(c, a, b, &o));
    lmnn_shape s1 = broadcast_shape(sc, sa), so = broadcast_shape(&s1, sb);
    size_t no = lmnn_shape_volume(&so);
    size_t *mc = broadcast_index(&so, sc), *ma = broadcast_index(&so, sa),
           *mb = broadcast_index(&so, sb);
    float *vb = nn_download(b), *vo = nn_download(o);
    CHECK(vb && vo);
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(o, &info));
    CHECK(shape_eq(&info.shape, &so) && info.dtype == LMNN_FLOAT32); /* a's dtype */
    size_t bad = 0;
    for (size_t e = 0; e < no; e++) {
        float cv = dtype == LMNN_BFLOAT16 ? nn_bf16(xc[mc[e]]) : xc[mc[e]];
        float want = cv != 0 ? xa[ma[e]] : vb[mb[e]];
        if (memcmp(&want, &vo[e], 4)) bad++;
    }
    CHECK(bad == 0);
    CHECK(padding_is_zero(o));
    free(xc), free(xa), free(xb), free(vb), free(vo), free(mc), free(ma), free(mb);
    lmnn_tensor_free(c), lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(o);
}

static void test_where(void) {
    lmnn_shape big = LMNN_SHAPE(2, 3, 45, 70);
    lmnn_shape pats[][3] = {
        {big, big, big},
        {LMNN_SHAPE(45, 1), big, LMNN_SHAPE(70)},
        {big, LMNN_SHAPE(1, 1), LMNN_SHAPE(3, 1, 70)},
        {LMNN_SHAPE(1), LMNN_SHAPE(45, 70), LMNN_SHAPE(45, 1)},
        {LMNN_SHAPE(2, 1, 1, 70), LMNN_SHAPE(3, 45, 1), LMNN_SHAPE(2, 1, 45, 70)},
        {LMNN_SHAPE(1, 1), LMNN_SHAPE(1), LMNN_SHAPE(1, 1, 1)},
        {LMNN_SHAPE(4, 100, 333), LMNN_SHAPE(4, 100, 333), LMNN_SHAPE(4, 100, 333)},
    };
    for (int d = 0; d < 2; d++)
        for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
            where_case(&pats[p][0], &pats[p][1], &pats[p][2], d ? LMNN_BFLOAT16 : LMNN_FLOAT32,
                       70 + p);
            if (test_current_failed_) {
                printf("  where pattern %zu, cond %s\n", p, d ? "bf16" : "fp32");
                return;
            }
        }
}

static void test_errors(void) {
    lm_device *dev = nn_dev();
    float x[64] = {0};
    lmnn_shape s34 = LMNN_SHAPE(3, 4), s35 = LMNN_SHAPE(3, 5);
    lmnn_tensor a, b, rm, u, freed, other, c = {0};
    CHECK_OK(nn_upload(&s34, x, LMNN_BFLOAT16, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s35, x, LMNN_BFLOAT16, LMNN_TILE, &b));
    CHECK_OK(nn_upload(&s34, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_UINT32;
    CHECK_OK(lmnn_from_host(dev, &s34, x, 12 * 4, &io, &u));
    CHECK_OK(nn_upload(&s34, x, LMNN_BFLOAT16, LMNN_TILE, &freed));
    CHECK_OK(lmnn_tensor_free(freed));

    CHECK_FAILS(lmnn_add(a, b, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: b: shape [3, 5] does not broadcast with a's shape [3, 4]");
    CHECK_FAILS(lmnn_sub_scalar(rm, 1, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_sub_scalar: a: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_mul(a, rm, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_mul: b: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_div(u, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_div: a: expected a float dtype (bfloat16, float32, bfloat8_b), given uint32");
    CHECK_FAILS(lmnn_maximum(a, freed, &c), LM_ERR_INVALID_HANDLE,
                "lmnn_maximum: b: tensor handle is stale");
    CHECK_FAILS(lmnn_minimum((lmnn_tensor){0}, a, &c), LM_ERR_INVALID_HANDLE,
                "lmnn_minimum: a: tensor handle is zero (no tensor)");
    CHECK_FAILS(lmnn_pow(u, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_pow: a: expected a float dtype (bfloat16, float32, bfloat8_b), given uint32");
    CHECK_FAILS(lmnn_pow_scalar(rm, 2, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_pow_scalar: a: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_where(rm, a, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_where: cond: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_where(a, a, freed, &c), LM_ERR_INVALID_HANDLE,
                "lmnn_where: b: tensor handle is stale");
    CHECK_FAILS(lmnn_where(u, a, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_where: cond: expected a float dtype");
    CHECK_FAILS(lmnn_add(a, a, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_add: out is NULL");
    CHECK_FAILS(lmnn_add_scalar(a, 1, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add_scalar: out is NULL");
    CHECK_FAILS(lmnn_binary((lmnn_binary_op)99, a, a, NULL, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_binary: op: unknown binary op 99");
    CHECK_FAILS(lmnn_binary_scalar(LMNN_BINARY_INVALID, a, 1, NULL, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_binary_scalar: op: unknown binary op 0");

    lmnn_binary_options o;
    lmnn_binary_options_init(&o);
    o.output.dtype = LMNN_UINT32;
    CHECK_FAILS(lmnn_binary(LMNN_BINARY_ADD, a, a, &o, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: output.dtype: expected a float dtype, given uint32");
    lmnn_binary_options_init(&o);
    o.output.memory.type = (lm_buffer_type)7;
    CHECK_FAILS(lmnn_binary(LMNN_BINARY_ADD, a, a, &o, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: memory config: buffer type 7");
    lmnn_binary_options_init(&o);
    o.activation = LMNN_SOFTPLUS;
    o.activation_alpha = 0;
    CHECK_FAILS(lmnn_binary(LMNN_BINARY_ADD, a, a, &o, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: activation: softplus beta: expected a nonzero number, given 0");
    o.activation_alpha = NAN;
    o.activation = (lmnn_unary_op)77;
    CHECK_FAILS(lmnn_binary(LMNN_BINARY_ADD, a, a, &o, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: activation: unknown unary op 77");
    o.activation = LMNN_CLAMP;
    o.activation_alpha = 2;
    o.activation_beta = 1;
    CHECK_FAILS(lmnn_binary_scalar(LMNN_BINARY_MUL, a, 2, &o, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_mul_scalar: activation: clamp min 2 is greater than max 1");

    CHECK_FAILS(lmnn_pow(a, b, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_pow: b: shape [3, 5] does not broadcast with a's shape [3, 4]");
    CHECK_FAILS(lmnn_pow_scalar(a, 2, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_pow_scalar: out is NULL");
    CHECK_FAILS(lmnn_where(a, a, a, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_where: out is NULL");
    CHECK_FAILS(lmnn_where(a, a, b, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_where: b: shape [3, 5] does not broadcast with the shape [3, 4] of the "
                "inputs before it");
    CHECK_FAILS(lmnn_where(a, b, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_where: a: shape [3, 5] does not broadcast with cond's shape [3, 4]");

    /* Tensors on two devices. */
    lm_device *dev2;
    CHECK_OK(lm_device_open(NULL, &dev2));
    lmnn_tensor_options fo;
    lmnn_tensor_options_init(&fo);
    CHECK_OK(lmnn_from_host(dev2, &s34, x, 12 * 4, &fo, &other));
    CHECK_FAILS(lmnn_add(a, other, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_add: b: the tensor is on another device than the op's first input");
    CHECK_FAILS(lmnn_rsub(other, a, &c), LM_ERR_INVALID_ARGUMENT,
                "lmnn_rsub: b: the tensor is on another device than the op's first input");
    lm_device_close(dev2);
    CHECK_FAILS(lmnn_add(other, a, &c), LM_ERR_INVALID_HANDLE,
                "lmnn_add: a: the tensor's device was closed");
    lmnn_tensor_free(other);
    CHECK(c.id == 0);

    /* The device still works. */
    CHECK_OK(lmnn_add(a, a, &c));
    float *v = nn_download(c);
    CHECK(v && v[0] == 0);
    free(v);
    lmnn_tensor_free(c);
    lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(rm), lmnn_tensor_free(u);
}

int main(void) {
    TEST_RUN(test_broadcast_patterns);
    TEST_RUN(test_specials);
    TEST_RUN(test_scalar);
    TEST_RUN(test_activation);
    TEST_RUN(test_dtypes);
    TEST_RUN(test_multi_core);
    TEST_RUN(test_cache);
    TEST_RUN(test_pow);
    TEST_RUN(test_where);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
