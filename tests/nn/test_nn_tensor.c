/* Tensors: host round trips in every dtype and layout, on-device tilize,
 * untilize and typecast, full, zero padding, handles and their errors. */
#include "nn_test.h"

static const lmnn_shape *shapes(size_t *n) {
    static lmnn_shape s[8];
    s[0] = LMNN_SHAPE(1);
    s[1] = LMNN_SHAPE(7);
    s[2] = LMNN_SHAPE(3, 5);
    s[3] = LMNN_SHAPE(32, 32);
    s[4] = LMNN_SHAPE(33, 65);
    s[5] = LMNN_SHAPE(2, 3, 40, 70);
    s[6] = lmnn_shape_of(0, NULL);
    s[7] = LMNN_SHAPE(1, 300, 1);
    *n = 8;
    return s;
}

static void test_round_trip_float(void) {
    size_t n;
    const lmnn_shape *s = shapes(&n);
    for (size_t i = 0; i < n; i++) {
        size_t vol = lmnn_shape_volume(&s[i]);
        float *x = nn_rand_floats(vol, -100, 100, i + 1);
        for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
            for (int d = 0; d < 2; d++) {
                lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
                lmnn_tensor t;
                CHECK_OK(nn_upload(&s[i], x, dtype, (lmnn_layout)layout, &t));
                float *y = nn_download(t);
                CHECK(y);
                for (size_t k = 0; k < vol; k++)
                    CHECK(y[k] == (d ? nn_bf16(x[k]) : x[k]));
                if (layout == LMNN_TILE && !d) CHECK(nn_padding_is_zero(t));
                free(y);
                CHECK_OK(lmnn_tensor_free(t));
            }
        }
        free(x);
    }
}

static void test_round_trip_int(void) {
    lmnn_shape s = LMNN_SHAPE(3, 37, 33);
    size_t vol = lmnn_shape_volume(&s);
    uint32_t *x = malloc(vol * 4), *y = malloc(vol * 4);
    uint64_t seed = 7;
    for (size_t k = 0; k < vol; k++)
        x[k] = nn_rand_u32(&seed) * 2654435761u;
    lmnn_dtype dtypes[] = {LMNN_UINT32, LMNN_INT32};
    for (int d = 0; d < 2; d++)
        for (int layout = LMNN_ROW_MAJOR; layout <= LMNN_TILE; layout++) {
            lmnn_tensor_options o;
            lmnn_tensor_options_init(&o);
            o.dtype = dtypes[d];
            o.layout = (lmnn_layout)layout;
            lmnn_tensor t;
            CHECK_OK(lmnn_from_host(nn_dev(), &s, x, vol * 4, &o, &t));
            memset(y, 0, vol * 4);
            CHECK_OK(lmnn_to_host(t, y, vol * 4));
            CHECK(!memcmp(x, y, vol * 4));
            CHECK_OK(lmnn_tensor_free(t));
        }
    /* 16- and 8-bit integers: row-major only. */
    uint16_t h[37], h2[37];
    uint8_t b[37], b2[37];
    for (int k = 0; k < 37; k++) {
        h[k] = (uint16_t)(k * 1777);
        b[k] = (uint8_t)(k * 7);
    }
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.layout = LMNN_ROW_MAJOR;
    o.dtype = LMNN_UINT16;
    lmnn_shape s1 = LMNN_SHAPE(37);
    lmnn_tensor t;
    CHECK_OK(lmnn_from_host(nn_dev(), &s1, h, sizeof h, &o, &t));
    CHECK_OK(lmnn_to_host(t, h2, sizeof h2));
    CHECK(!memcmp(h, h2, sizeof h));
    CHECK_FAILS(lmnn_to_layout(t, LMNN_TILE, &(lmnn_tensor){0}), LM_ERR_INVALID_ARGUMENT,
                "uint16 has no tile layout");
    CHECK_OK(lmnn_tensor_free(t));
    o.dtype = LMNN_UINT8;
    CHECK_OK(lmnn_from_host(nn_dev(), &s1, b, sizeof b, &o, &t));
    CHECK_OK(lmnn_to_host(t, b2, sizeof b2));
    CHECK(!memcmp(b, b2, sizeof b));
    CHECK_OK(lmnn_tensor_free(t));
    free(x);
    free(y);
}

/* bfloat8_b: each value within half a unit of its face row's shared scale. */
static void test_bfp8(void) {
    lmnn_shape s = LMNN_SHAPE(45, 70);
    size_t vol = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(vol, -1, 1, 3);
    lmnn_tensor t, f;
    CHECK_OK(nn_upload(&s, x, LMNN_BFLOAT8_B, LMNN_TILE, &t));
    float *y = nn_download(t);
    CHECK(y);
    for (size_t k = 0; k < vol; k++)
        CHECK(fabsf(y[k] - x[k]) <= 1.0f / 64);
    CHECK_FAILS(lmnn_to_layout(t, LMNN_ROW_MAJOR, &f), LM_ERR_INVALID_ARGUMENT,
                "bfloat8_b exists in tile layout only");
    CHECK_OK(lmnn_typecast(t, LMNN_FLOAT32, &f));
    float *z = nn_download(f);
    CHECK(z && !memcmp(y, z, vol * 4));
    CHECK(nn_padding_is_zero(f));
    free(x);
    free(y);
    free(z);
    lmnn_tensor_free(t);
    lmnn_tensor_free(f);
}

/* A tilize on the device zeroes the padding whatever its circular buffers
 * held before (a tilize of nonzero rows first): matrices whose last tile
 * row is partial after whole ones ([300, 80, 20]: each core's units of 32,
 * 32 and 16 rows share buffer slots), one row each ([97, 1, 40]), rows
 * wider than one block of tiles ([5, 40, 300]), and few units. */
static void test_tilize_padding(void) {
    const lmnn_shape shapes[] = {LMNN_SHAPE(300, 80, 20), LMNN_SHAPE(97, 1, 40),
                                 LMNN_SHAPE(5, 40, 300), LMNN_SHAPE(7, 33, 8),
                                 LMNN_SHAPE(2, 64, 64)};
    lmnn_shape dirty_shape = LMNN_SHAPE(64, 64, 64);
    float *ones = nn_rand_floats(lmnn_shape_volume(&dirty_shape), 1, 2, 7);
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        lmnn_tensor d, dt, rm, tl;
        CHECK_OK(nn_upload(&dirty_shape, ones, LMNN_FLOAT32, LMNN_ROW_MAJOR, &d));
        CHECK_OK(lmnn_to_layout(d, LMNN_TILE, &dt));
        size_t vol = lmnn_shape_volume(&shapes[i]);
        float *x = nn_rand_floats(vol, -3, 3, 20 + i);
        CHECK_OK(nn_upload(&shapes[i], x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
        CHECK_OK(lmnn_to_layout(rm, LMNN_TILE, &tl));
        CHECK(nn_padding_is_zero(tl));
        float *y = nn_download(tl);
        CHECK(y && !memcmp(x, y, vol * sizeof *x));
        free(x);
        free(y);
        lmnn_tensor all[] = {d, dt, rm, tl};
        for (size_t k = 0; k < 4; k++)
            CHECK_OK(lmnn_tensor_free(all[k]));
    }
    free(ones);
}

static void test_layout_and_typecast(void) {
    lmnn_shape s = LMNN_SHAPE(2, 50, 90);
    size_t vol = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(vol, -5, 5, 11);
    lmnn_tensor rm, tl, back, cast, cast_rm;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_OK(lmnn_to_layout(rm, LMNN_TILE, &tl));
    CHECK(nn_padding_is_zero(tl));
    CHECK_OK(lmnn_to_layout(tl, LMNN_ROW_MAJOR, &back));
    float *y = nn_download(back);
    CHECK(y && !memcmp(x, y, vol * 4));
    free(y);
    CHECK_OK(lmnn_typecast(tl, LMNN_BFLOAT16, &cast));
    CHECK_OK(lmnn_typecast(rm, LMNN_BFLOAT16, &cast_rm));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(cast_rm, &info));
    CHECK(info.layout == LMNN_ROW_MAJOR && info.dtype == LMNN_BFLOAT16);
    float *a = nn_download(cast), *b = nn_download(cast_rm);
    CHECK(a && b);
    for (size_t k = 0; k < vol; k++)
        CHECK(a[k] == nn_bf16(x[k]) && b[k] == a[k]);
    free(a);
    free(b);
    CHECK_FAILS(lmnn_typecast(tl, LMNN_UINT16, &cast), LM_ERR_UNSUPPORTED,
                "lmnn_typecast: float32 to uint16: conversions between float dtypes, int32 and "
                "uint32 are implemented");
    lmnn_tensor ts[] = {rm, tl, back, cast, cast_rm};
    for (int i = 0; i < 5; i++)
        CHECK_OK(lmnn_tensor_free(ts[i]));
    free(x);
}

/* lmnn_to_layout_as: a tilize or untilize into another float dtype gives
 * the bits of lmnn_to_layout and lmnn_typecast (of the tiles), in one launch,
 * over a padded shape with NaN, infinities, a bfloat16 tie and a value
 * that rounds past bfloat16's largest; its refusals. */
static void test_to_layout_as(void) {
    lmnn_shape s = LMNN_SHAPE(3, 37, 70);
    size_t vol = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(vol, -5, 5, 17);
    x[1] = NAN, x[2] = -INFINITY, x[3] = 1.00390625f, x[4] = 3.3999e38f;
    lmnn_tensor rm, tl, tl16, t8;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &tl));
    CHECK_OK(lmnn_typecast(tl, LMNN_BFLOAT16, &tl16));
    CHECK_OK(lmnn_typecast(tl, LMNN_BFLOAT8_B, &t8));
    static const struct {
        int from; /* rm, tl, tl16, t8 */
        lmnn_layout layout;
        lmnn_dtype dtype;
    } cases[] = {
        {0, LMNN_TILE, LMNN_BFLOAT16},      {0, LMNN_TILE, LMNN_BFLOAT8_B},
        {1, LMNN_ROW_MAJOR, LMNN_BFLOAT16}, {2, LMNN_ROW_MAJOR, LMNN_FLOAT32},
        {3, LMNN_ROW_MAJOR, LMNN_FLOAT32},  {3, LMNN_ROW_MAJOR, LMNN_BFLOAT16},
    };
    lmnn_tensor src[4] = {rm, tl, tl16, t8};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lmnn_tensor a, c, b;
        lmnn_tensor from = src[cases[i].from];
        CHECK_OK(lm_device_set_profiling(nn_dev(), true));
        CHECK_OK(lmnn_to_layout_as(from, cases[i].layout, cases[i].dtype, &a));
        bool ran[1] = {true};
        nn_ran_since((const char *const[]){"unary_compute.c"}, ran, 1);
        CHECK(!ran[0]); /* no typecast program */
        /* The reference: a typecast while in tile layout. */
        if (cases[i].from == 0) {
            CHECK_OK(lmnn_to_layout(from, cases[i].layout, &c));
            CHECK_OK(lmnn_typecast(c, cases[i].dtype, &b));
        } else {
            CHECK_OK(lmnn_typecast(from, cases[i].dtype, &c));
            CHECK_OK(lmnn_to_layout(c, cases[i].layout, &b));
        }
        lmnn_tensor_info ia, ib;
        CHECK_OK(lmnn_tensor_get_info(a, &ia));
        CHECK_OK(lmnn_tensor_get_info(b, &ib));
        CHECK(ia.layout == cases[i].layout && ia.dtype == cases[i].dtype);
        CHECK(nn_same_bits(a, b));
        lmnn_tensor_free(a), lmnn_tensor_free(b), lmnn_tensor_free(c);
    }
    lmnn_tensor out, same;
    /* Its own dtype or 0: lmnn_to_layout; the same layout: a typecast. */
    CHECK_OK(lmnn_to_layout_as(rm, LMNN_TILE, 0, &same));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(same, &info));
    CHECK(info.layout == LMNN_TILE && info.dtype == LMNN_FLOAT32);
    lmnn_tensor_free(same);
    CHECK_OK(lmnn_to_layout_as(rm, LMNN_ROW_MAJOR, LMNN_BFLOAT16, &same));
    CHECK_OK(lmnn_tensor_get_info(same, &info));
    CHECK(info.layout == LMNN_ROW_MAJOR && info.dtype == LMNN_BFLOAT16);
    lmnn_tensor_free(same);
    CHECK_FAILS(lmnn_to_layout_as(rm, LMNN_ROW_MAJOR, LMNN_INT32, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_layout_as: dtype: float32 rows to int32 in row-major layout: expected "
                "float32 or bfloat16 (or bfloat8_b as tiles) from a float tensor; lmnn_typecast "
                "converts others");
    CHECK_FAILS(lmnn_to_layout_as(tl, LMNN_ROW_MAJOR, LMNN_BFLOAT8_B, &out),
                LM_ERR_INVALID_ARGUMENT, "float32 tiles to bfloat8_b in row-major layout");
    CHECK_FAILS(lmnn_to_layout_as(rm, (lmnn_layout)9, LMNN_BFLOAT16, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_layout_as: layout: unknown layout 9");
    CHECK_FAILS(lmnn_to_layout_as(rm, LMNN_TILE, LMNN_BFLOAT16, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_layout_as: out_tensor is NULL");
    CHECK_FAILS(lmnn_to_layout_as((lmnn_tensor){0}, LMNN_TILE, LMNN_BFLOAT16, &out),
                LM_ERR_INVALID_HANDLE, "lmnn_to_layout_as: tensor");
    lmnn_tensor ints;
    int32_t iv[6] = {1, 2, 3, 4, 5, 6};
    lmnn_shape is = LMNN_SHAPE(2, 3);
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_INT32;
    io.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(nn_dev(), &is, iv, sizeof iv, &io, &ints));
    CHECK_FAILS(lmnn_to_layout_as(ints, LMNN_TILE, LMNN_FLOAT32, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_to_layout_as: dtype: int32 rows to float32 in tile layout");
    lmnn_tensor ts[] = {rm, tl, tl16, t8, ints};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        lmnn_tensor_free(ts[i]);
    free(x);
}

/* float -> int as torch's .to(int32): toward zero, saturating here, NaN 0. */
static int32_t ref_f2i(double v) {
    return isnan(v)             ? 0
           : v >= 2147483647.0  ? INT32_MAX
           : v <= -2147483648.0 ? INT32_MIN
                                : (int32_t)v;
}
static uint32_t ref_f2u(double v) {
    return isnan(v) || v <= 0 ? 0 : v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

/* Float <-> int32 / uint32 in tile and row-major layout, over padded shapes
 * on many cores, with NaN, infinities and out-of-range values. */
static void test_typecast_int(void) {
    lmnn_shape s = LMNN_SHAPE(3, 65, 300); /* 3 x 3 x 10 tiles, padded */
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -1000, 1000, 17);
    static const float specials[] = {NAN,    INFINITY, -INFINITY, 3e9f,  -3e9f, 5e9f, 2147483520.0f,
                                     -0.99f, 0.99f,    -1.5f,     -0.0f, 2.5f,  -2.5f};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++)
        x[i * 101] = specials[i];
    int32_t *gi = malloc(n * 4);
    uint32_t *gu = malloc(n * 4);
    float *gf = malloc(n * 4);
    for (int d = 0; d < 2; d++) {
        lmnn_dtype fd = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        for (int rm = 0; rm < 2; rm++) {
            lmnn_tensor a, ti, tu, back;
            CHECK_OK(nn_upload(&s, x, fd, rm ? LMNN_ROW_MAJOR : LMNN_TILE, &a));
            CHECK_OK(lmnn_typecast(a, LMNN_INT32, &ti));
            CHECK_OK(lmnn_typecast(a, LMNN_UINT32, &tu));
            CHECK_OK(lmnn_to_host(ti, gi, n * 4));
            CHECK_OK(lmnn_to_host(tu, gu, n * 4));
            size_t bad_i = 0, bad_u = 0;
            for (size_t k = 0; k < n; k++) {
                double v = d ? nn_bf16(x[k]) : x[k];
                bad_i += gi[k] != ref_f2i(v);
                bad_u += gu[k] != ref_f2u(v);
            }
            CHECK(bad_i == 0 && bad_u == 0);
            /* And back: integers to the float dtype, rounded to nearest; the
             * padding (0 -> 0 both ways) stays zero. */
            CHECK_OK(lmnn_typecast(ti, fd, &back));
            lmnn_tensor_info info;
            CHECK_OK(lmnn_tensor_get_info(back, &info));
            CHECK(info.dtype == fd && info.layout == (rm ? LMNN_ROW_MAJOR : LMNN_TILE));
            CHECK_OK(lmnn_to_host(back, gf, n * 4));
            size_t bad_f = 0;
            for (size_t k = 0; k < n; k++) {
                float w = (float)gi[k];
                if (d) w = nn_bf16((float)(double)gi[k]);
                bad_f += gf[k] != w;
            }
            CHECK(bad_f == 0);
            if (!rm && !d) CHECK(nn_padding_is_zero(back));
            lmnn_tensor_free(back);
            CHECK_OK(lmnn_typecast(tu, LMNN_FLOAT32, &back));
            CHECK_OK(lmnn_to_host(back, gf, n * 4));
            bad_f = 0;
            for (size_t k = 0; k < n; k++)
                bad_f += gf[k] != (float)gu[k];
            CHECK(bad_f == 0);
            lmnn_tensor_free(back);
            lmnn_tensor_free(a);
            lmnn_tensor_free(ti);
            lmnn_tensor_free(tu);
            if (test_current_failed_) {
                printf("  %s, %s\n", d ? "bf16" : "fp32", rm ? "row-major" : "tile");
                goto out;
            }
        }
    }
    /* Integers beyond float precision round to nearest even; int32 <-> uint32
     * keep the bits. */
    {
        int32_t iv[6] = {16777217, -16777219, INT32_MAX, INT32_MIN, -1, 0};
        lmnn_shape s6 = LMNN_SHAPE(6);
        lmnn_tensor_options o;
        lmnn_tensor_options_init(&o);
        o.dtype = LMNN_INT32;
        lmnn_tensor ti, tf, tb, tu;
        CHECK_OK(lmnn_from_host(nn_dev(), &s6, iv, sizeof iv, &o, &ti));
        CHECK_OK(lmnn_typecast(ti, LMNN_FLOAT32, &tf));
        CHECK_OK(lmnn_typecast(ti, LMNN_BFLOAT16, &tb));
        CHECK_OK(lmnn_typecast(ti, LMNN_UINT32, &tu));
        float f[6], b[6];
        uint32_t u[6];
        CHECK_OK(lmnn_to_host(tf, f, sizeof f));
        CHECK_OK(lmnn_to_host(tb, b, sizeof b));
        CHECK_OK(lmnn_to_host(tu, u, sizeof u));
        for (int k = 0; k < 6; k++) {
            CHECK(f[k] == (float)iv[k]);
            CHECK(b[k] == nn_bf16((float)(double)iv[k]));
            CHECK(u[k] == (uint32_t)iv[k]);
        }
        CHECK(f[0] == 16777216.0f && f[1] == -16777220.0f);
        /* bfloat8_b to int32 (its values are exact in float32). */
        float bx[64];
        for (int k = 0; k < 64; k++)
            bx[k] = (float)(k - 32) * 0.75f;
        lmnn_shape s64 = LMNN_SHAPE(2, 32);
        lmnn_tensor b8, b8i;
        CHECK_OK(nn_upload(&s64, bx, LMNN_BFLOAT8_B, LMNN_TILE, &b8));
        CHECK_OK(lmnn_typecast(b8, LMNN_INT32, &b8i));
        int32_t bi[64];
        CHECK_OK(lmnn_to_host(b8i, bi, sizeof bi));
        for (int k = 0; k < 64; k++)
            CHECK(bi[k] == (int32_t)bx[k]);
        lmnn_tensor_free(b8);
        lmnn_tensor_free(b8i);
        lmnn_tensor ts[] = {ti, tf, tb, tu};
        for (int k = 0; k < 4; k++)
            lmnn_tensor_free(ts[k]);
    }
out:
    free(x);
    free(gi);
    free(gu);
    free(gf);
}

static void test_full(void) {
    lmnn_shape s = LMNN_SHAPE(3, 33, 47);
    size_t vol = lmnn_shape_volume(&s);
    float *y = malloc(vol * 4);
    struct {
        lmnn_dtype dtype;
        lmnn_layout layout;
        double value;
        float want;
    } cases[] = {
        {LMNN_FLOAT32, LMNN_TILE, 1.25, 1.25f},
        {LMNN_FLOAT32, LMNN_ROW_MAJOR, -3.5, -3.5f},
        {LMNN_BFLOAT16, LMNN_TILE, 1.001, nn_bf16(1.001f)},
        {LMNN_BFLOAT8_B, LMNN_TILE, 0.5, 0.5f},
        {LMNN_BFLOAT16, LMNN_ROW_MAJOR, 7, 7.0f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lmnn_tensor_options o;
        lmnn_tensor_options_init(&o);
        o.dtype = cases[c].dtype;
        o.layout = cases[c].layout;
        lmnn_tensor t;
        CHECK_OK(lmnn_full(nn_dev(), &s, cases[c].value, &o, &t));
        CHECK_OK(lmnn_to_host(t, y, vol * 4));
        for (size_t k = 0; k < vol; k++) {
            CHECK(y[k] == cases[c].want);
        }
        if (o.dtype == LMNN_FLOAT32 && o.layout == LMNN_TILE) CHECK(nn_padding_is_zero(t));
        CHECK_OK(lmnn_tensor_free(t));
    }
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_INT32;
    int32_t iv[3 * 33 * 47];
    lmnn_tensor t;
    CHECK_OK(lmnn_full(nn_dev(), &s, -7.9, &o, &t));
    CHECK_OK(lmnn_to_host(t, iv, sizeof iv));
    for (size_t k = 0; k < vol; k++)
        CHECK(iv[k] == -7);
    CHECK_OK(lmnn_tensor_free(t));
    free(y);
}

static void test_errors(void) {
    lm_device *dev = nn_dev();
    lmnn_shape s = LMNN_SHAPE(4, 4);
    float x[16] = {0};
    lmnn_tensor t, u;
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    CHECK_FAILS(lmnn_from_host(NULL, &s, x, sizeof x, &o, &t), LM_ERR_INVALID_HANDLE,
                "lmnn_from_host: device is NULL");
    CHECK_FAILS(lmnn_from_host(dev, &s, NULL, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "data is NULL");
    CHECK_FAILS(lmnn_from_host(dev, &s, x, 60, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "size: shape [4, 4] of bfloat16 needs 64 bytes, given 60");
    lmnn_shape zero = LMNN_SHAPE(4, 0);
    CHECK_FAILS(lmnn_from_host(dev, &zero, x, 0, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "shape: expected 0..8 dims of at least 1");
    lmnn_shape big = s;
    big.rank = 9;
    CHECK_FAILS(lmnn_from_host(dev, &big, x, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "given rank 9");
    o.dtype = (lmnn_dtype)42;
    CHECK_FAILS(lmnn_from_host(dev, &s, x, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "opts.dtype: unknown dtype 42");
    lmnn_tensor_options_init(&o);
    o.layout = (lmnn_layout)9;
    CHECK_FAILS(lmnn_from_host(dev, &s, x, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "opts.layout: unknown layout 9");
    lmnn_tensor_options_init(&o);
    o.memory.layout = LM_BUFFER_HEIGHT_SHARDED; /* with no shard spec */
    CHECK_FAILS(lmnn_from_host(dev, &s, x, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "opts.memory.shard: expected a nonzero shard height and width, given 0x0");
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_BFLOAT8_B;
    o.layout = LMNN_ROW_MAJOR;
    CHECK_FAILS(lmnn_from_host(dev, &s, x, sizeof x, &o, &t), LM_ERR_INVALID_ARGUMENT,
                "bfloat8_b exists in tile layout only");
    /* Stale and zero handles. */
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &t));
    CHECK_OK(lmnn_tensor_free(t));
    CHECK_FAILS(lmnn_tensor_free(t), LM_ERR_INVALID_HANDLE,
                "lmnn_tensor_free: tensor handle is stale");
    CHECK_FAILS(lmnn_to_host(t, x, sizeof x), LM_ERR_INVALID_HANDLE,
                "lmnn_to_host: tensor: tensor handle is stale");
    CHECK_FAILS(lmnn_exp(t, &u), LM_ERR_INVALID_HANDLE, "lmnn_exp: a: tensor handle is stale");
    CHECK_FAILS(lmnn_exp((lmnn_tensor){0}, &u), LM_ERR_INVALID_HANDLE, "is zero (no tensor)");
    CHECK_OK(lmnn_tensor_free((lmnn_tensor){0}));
    /* Too small a destination. */
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &t));
    CHECK_FAILS(lmnn_to_host(t, x, 63), LM_ERR_INVALID_ARGUMENT,
                "the tensor needs 64 bytes, given 63");
    CHECK_OK(lmnn_tensor_free(t));
}

/* Tensors outlive their device as handles that say so. */
static void test_device_close(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    lmnn_shape s = LMNN_SHAPE(40, 40);
    float x[1600] = {0}, y[1600];
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    lmnn_tensor t, u;
    CHECK_OK(lmnn_from_host(dev, &s, x, sizeof x, &o, &t));
    CHECK_OK(lmnn_exp(t, &u));
    lmnn_program_cache_stats st;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &st));
    CHECK(st.entries >= 1 && st.misses >= 1); /* exp's (the upload tilizes on the host) */
    CHECK_OK(lm_device_close(dev));
    CHECK_FAILS(lmnn_to_host(u, y, sizeof y), LM_ERR_INVALID_HANDLE,
                "the tensor's device was closed");
    CHECK_OK(lmnn_tensor_free(t));
    CHECK_OK(lmnn_tensor_free(u));
}

/* The second run of an op with the same shapes is a cache hit. */
static void test_cache(void) {
    lm_device *dev = nn_dev();
    lmnn_shape s = LMNN_SHAPE(64, 96);
    float *x = nn_rand_floats(64 * 96, -1, 1, 5);
    lmnn_tensor a, b, c;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_exp(a, &b));
    lmnn_program_cache_stats s1, s2;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    CHECK_OK(lmnn_exp(a, &c));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s2));
    CHECK_EQ_U64(s2.hits, s1.hits + 1);
    CHECK_EQ_U64(s2.misses, s1.misses);
    float *y = nn_download(b), *z = nn_download(c);
    CHECK(y && z && !memcmp(y, z, 64 * 96 * 4));
    CHECK_OK(lmnn_program_cache_clear(dev));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &s1));
    CHECK_EQ_U64(s1.entries, 0);
    free(x);
    free(y);
    free(z);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
    lmnn_tensor_free(c);
}

int main(void) {
    TEST_RUN(test_round_trip_float);
    TEST_RUN(test_round_trip_int);
    TEST_RUN(test_bfp8);
    TEST_RUN(test_layout_and_typecast);
    TEST_RUN(test_tilize_padding);
    TEST_RUN(test_to_layout_as);
    TEST_RUN(test_typecast_int);
    TEST_RUN(test_full);
    TEST_RUN(test_errors);
    TEST_RUN(test_device_close);
    TEST_RUN(test_cache);
    nn_dev_close();
    return test_summary();
}
