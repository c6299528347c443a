/* Random numbers on the device: the distributions (moments, histogram,
 * frequencies, all within 5 standard errors), reproducibility by seed, the
 * same numbers whatever the core count, dropout's mask agreeing with its
 * output, zero padding, and the errors. */
#include <stdio.h>
#include <string.h>

#include "nn_test.h"

#define SEED(s) (&(lmnn_random_options){.seed = (s)})

static float *like_and_draw(lm_status (*draw)(lmnn_tensor, double, double,
                                              const lmnn_random_options *, lmnn_tensor *),
                            const lmnn_shape *s, double p0, double p1, uint32_t seed,
                            lmnn_dtype dtype, lmnn_tensor *out_keep) {
    size_t n = lmnn_shape_volume(s);
    float *zeros = calloc(n, sizeof *zeros);
    lmnn_tensor like, y;
    lm_status st = nn_upload(s, zeros, dtype, LMNN_TILE, &like);
    if (!st && (st = draw(like, p0, p1, SEED(seed), &y))) lmnn_tensor_free(like);
    if (st) {
        fprintf(stderr, "draw failed: %s\n", lm_last_error());
        free(zeros);
        return NULL;
    }
    float *v = nn_download(y);
    lmnn_tensor_free(like);
    if (out_keep)
        *out_keep = y;
    else
        lmnn_tensor_free(y);
    free(zeros);
    return v;
}

/* |got - want| within k standard errors. */
static int near(double got, double want, double se, double k) {
    return fabs(got - want) <= k * se;
}

static void test_uniform(void) {
    lmnn_shape s = LMNN_SHAPE(3, 70, 45); /* padding in both tile dims */
    size_t n = lmnn_shape_volume(&s);
    lmnn_tensor y;
    float *v = like_and_draw(lmnn_uniform, &s, -2, 3, 7, LMNN_FLOAT32, &y);
    CHECK(v != NULL);
    if (!v) return;
    CHECK(nn_padding_is_zero(y));
    lmnn_tensor_free(y);
    double sum = 0, sq = 0;
    uint32_t bins[10] = {0}, outside = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] >= -2 && v[i] < 3)) outside++;
        sum += v[i];
        sq += (double)v[i] * v[i];
        int b = (int)((v[i] + 2) / 5 * 10);
        if (b >= 0 && b < 10) bins[b]++;
    }
    CHECK_EQ_U64(outside, 0);
    double mean = sum / (double)n, var = sq / (double)n - mean * mean;
    CHECK(near(mean, 0.5, sqrt(25.0 / 12 / (double)n), 5));
    CHECK(fabs(var - 25.0 / 12) < 0.1);
    double expect = (double)n / 10, se = sqrt(expect * 0.9);
    for (int b = 0; b < 10; b++)
        CHECK(near(bins[b], expect, se, 5));

    /* A seed gives the same tensor again; another seed another one. */
    float *again = like_and_draw(lmnn_uniform, &s, -2, 3, 7, LMNN_FLOAT32, NULL);
    float *other = like_and_draw(lmnn_uniform, &s, -2, 3, 8, LMNN_FLOAT32, NULL);
    CHECK(again && !memcmp(again, v, n * sizeof *v));
    size_t same = 0;
    for (size_t i = 0; other && i < n; i++)
        same += other[i] == v[i];
    CHECK(other && same < n / 100);
    /* Adjacent elements are not copies of each other (each draws anew). */
    size_t repeats = 0;
    for (size_t i = 1; i < n; i++)
        repeats += v[i] == v[i - 1];
    CHECK(repeats < n / 100);
    free(again);
    free(other);

    /* One core makes every tile: the same numbers. */
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = o.grid_y = 1;
    lm_device *one;
    CHECK_OK(lm_device_open(&o, &one));
    float *zeros = calloc(n, sizeof *zeros);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    lmnn_tensor like1, y1;
    CHECK_OK(lmnn_from_host(one, &s, zeros, n * sizeof *zeros, &to, &like1));
    CHECK_OK(lmnn_uniform(like1, -2, 3, SEED(7), &y1));
    float *v1 = nn_download(y1);
    CHECK(v1 && !memcmp(v1, v, n * sizeof *v));
    free(v1);
    free(zeros);
    lmnn_tensor_free(like1);
    lmnn_tensor_free(y1);
    lm_device_close(one);

    /* low == high: every element is low. */
    float *flat = like_and_draw(lmnn_uniform, &s, 1.5, 1.5, 3, LMNN_FLOAT32, NULL);
    size_t off = 0;
    for (size_t i = 0; flat && i < n; i++)
        off += flat[i] != 1.5f;
    CHECK(flat && off == 0);
    free(flat);
    free(v);
}

static void test_uniform_bf16(void) {
    lmnn_shape s = LMNN_SHAPE(64, 96);
    size_t n = lmnn_shape_volume(&s);
    float *v = like_and_draw(lmnn_uniform, &s, 0, 1, 11, LMNN_BFLOAT16, NULL);
    CHECK(v != NULL);
    double sum = 0;
    size_t outside = 0;
    for (size_t i = 0; v && i < n; i++) {
        outside += !(v[i] >= 0 && v[i] < 1);
        sum += v[i];
    }
    CHECK_EQ_U64(outside, 0);
    CHECK(near(sum / (double)n, 0.5, sqrt(1.0 / 12 / (double)n), 5));
    free(v);
}

static void test_normal(void) {
    lmnn_shape s = LMNN_SHAPE(8, 64, 64);
    size_t n = lmnn_shape_volume(&s);
    float *v = like_and_draw(lmnn_normal, &s, 1, 2, 5, LMNN_FLOAT32, NULL);
    CHECK(v != NULL);
    if (!v) return;
    double sum = 0, sq = 0;
    size_t in1 = 0, in2 = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += !isfinite(v[i]);
        sum += v[i];
        sq += (double)v[i] * v[i];
        double z = fabs((v[i] - 1) / 2);
        in1 += z < 1;
        in2 += z < 2;
    }
    CHECK_EQ_U64(bad, 0);
    double mean = sum / (double)n, sd = sqrt(sq / (double)n - mean * mean);
    CHECK(near(mean, 1, 2 / sqrt((double)n), 5));
    CHECK(near(sd, 2, 2 / sqrt(2.0 * (double)n), 5));
    /* The shape, not only the moments: 68.27% within one sigma, 95.45% within two. */
    CHECK(near((double)in1 / (double)n, 0.6827, sqrt(0.6827 * 0.3173 / (double)n), 5));
    CHECK(near((double)in2 / (double)n, 0.9545, sqrt(0.9545 * 0.0455 / (double)n), 5));
    free(v);
}

static void test_bernoulli(void) {
    lmnn_shape s = LMNN_SHAPE(3, 40, 100);
    size_t n = lmnn_shape_volume(&s);
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.3f;
    lmnn_tensor pt, y;
    CHECK_OK(nn_upload(&s, p, LMNN_FLOAT32, LMNN_TILE, &pt));
    CHECK_OK(lmnn_bernoulli(pt, SEED(42), &y));
    float *v = nn_download(y);
    CHECK(v != NULL);
    size_t wrong = 0, ones = 0, thirds = 0;
    for (size_t i = 0; v && i < n; i++) {
        wrong +=
            !(v[i] == 0 || v[i] == 1) || (i % 3 == 0 && v[i] != 0) || (i % 3 == 1 && v[i] != 1);
        if (i % 3 == 2) {
            thirds++;
            ones += v[i] == 1;
        }
    }
    CHECK_EQ_U64(wrong, 0);
    CHECK(near((double)ones / (double)thirds, 0.3, sqrt(0.21 / (double)thirds), 5));
    CHECK(nn_padding_is_zero(y));
    free(v);
    free(p);
    lmnn_tensor_free(pt);
    lmnn_tensor_free(y);
}

static void test_dropout(void) {
    lmnn_shape s = LMNN_SHAPE(2, 50, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, 0.5f, 2.0f, 9);
    lmnn_tensor xt, y, m;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &xt));
    CHECK_OK(lmnn_dropout(xt, 0.25, SEED(3), &y, &m));
    float *yv = nn_download(y), *mv = nn_download(m);
    CHECK(yv && mv);
    size_t kept = 0, wrong = 0;
    for (size_t i = 0; yv && mv && i < n; i++) {
        kept += mv[i] == 1;
        float want = mv[i] == 1 ? x[i] * (float)(1 / 0.75) : 0;
        wrong += !(mv[i] == 0 || mv[i] == 1) || fabsf(yv[i] - want) > 1e-6f * fabsf(want);
    }
    CHECK_EQ_U64(wrong, 0);
    CHECK(near((double)kept / (double)n, 0.75, sqrt(0.1875 / (double)n), 5));
    CHECK(nn_padding_is_zero(y) && nn_padding_is_zero(m));
    free(yv);
    free(mv);
    lmnn_tensor_free(y);
    lmnn_tensor_free(m);

    /* Ratio 0 keeps everything unchanged; no mask asked for. */
    CHECK_OK(lmnn_dropout(xt, 0, SEED(3), &y, NULL));
    yv = nn_download(y);
    CHECK(yv && !memcmp(yv, x, n * sizeof *x));
    free(yv);
    lmnn_tensor_free(y);
    lmnn_tensor_free(xt);
    free(x);
}

/* A run seed: its value, read on the device, picks the numbers; 0 draws
 * as no run seed does. */
static void test_run_seed(void) {
    lmnn_shape s = LMNN_SHAPE(40, 50), one = LMNN_SHAPE(1);
    size_t n = lmnn_shape_volume(&s);
    float *zeros = calloc(n, sizeof *zeros);
    lmnn_tensor like, seeds[3], y;
    CHECK_OK(nn_upload(&s, zeros, LMNN_FLOAT32, LMNN_TILE, &like));
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_UINT32;
    to.layout = LMNN_ROW_MAJOR;
    const uint32_t values[3] = {5, 6, 0};
    for (int i = 0; i < 3; i++)
        CHECK_OK(lmnn_from_host(nn_dev(), &one, &values[i], 4, &to, &seeds[i]));
    float *v[5];
    for (int i = 0; i < 5; i++) {
        lmnn_random_options o;
        lmnn_random_options_init(&o);
        o.seed = 9;
        o.run_seed = i < 3 ? seeds[i] : i == 3 ? seeds[0] : (lmnn_tensor){0};
        CHECK_OK(lmnn_uniform(like, 0, 1, &o, &y));
        v[i] = nn_download(y);
        lmnn_tensor_free(y);
    }
    size_t same01 = 0;
    for (size_t i = 0; i < n; i++)
        same01 += v[0][i] == v[1][i];
    CHECK(same01 < n / 100);                      /* another run seed, other numbers */
    CHECK(!memcmp(v[0], v[3], n * sizeof *v[0])); /* the same one, the same numbers */
    CHECK(!memcmp(v[2], v[4], n * sizeof *v[0])); /* 0: as without a run seed */
    for (int i = 0; i < 5; i++)
        free(v[i]);

    /* The run seed's errors. */
    lmnn_random_options o;
    lmnn_random_options_init(&o);
    o.run_seed = like;
    CHECK_FAILS(lmnn_uniform(like, 0, 1, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_uniform: opts.run_seed: expected a uint32 or int32 tensor of one element, "
                "given float32 of 2000");
    o.run_seed = (lmnn_tensor){12345};
    CHECK_FAILS(lmnn_uniform(like, 0, 1, &o, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_uniform: opts.run_seed");
    for (int i = 0; i < 3; i++)
        lmnn_tensor_free(seeds[i]);
    lmnn_tensor_free(like);
    free(zeros);
}

static void test_errors(void) {
    lmnn_shape s = LMNN_SHAPE(4, 4);
    float x[16] = {0};
    lmnn_tensor a, rm, y;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_uniform(a, 2, 1, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_uniform: low and high: expected finite low <= high, given 2 and 1");
    CHECK_FAILS(lmnn_uniform(a, 0, INFINITY, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_uniform: low and high: expected finite low <= high, given 0 and inf");
    CHECK_FAILS(lmnn_normal(a, 0, -1, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_normal: mean and stddev: expected finite values and stddev >= 0, given 0 "
                "and -1");
    CHECK_FAILS(lmnn_normal(a, NAN, 1, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_normal: mean and stddev: expected finite values and stddev >= 0, given nan");
    CHECK_FAILS(lmnn_dropout(a, 1, 0, &y, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_dropout: ratio: expected a value in [0, 1), given 1");
    CHECK_FAILS(lmnn_dropout(a, -0.5, 0, &y, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_dropout: ratio: expected a value in [0, 1), given -0.5");
    CHECK_FAILS(lmnn_dropout(a, 0.5, 0, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_dropout: out is NULL");
    CHECK_FAILS(lmnn_bernoulli(rm, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_bernoulli: a: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_uniform(a, 0, 1, 0, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_uniform: out is NULL");
    uint32_t ints[16] = {0};
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_INT32;
    lmnn_tensor it;
    CHECK_OK(lmnn_from_host(nn_dev(), &s, ints, sizeof ints, &to, &it));
    CHECK_FAILS(lmnn_normal(it, 0, 1, 0, &y), LM_ERR_INVALID_ARGUMENT, "lmnn_normal: a: ");
    CHECK_FAILS(lmnn_bernoulli((lmnn_tensor){0}, 0, &y), LM_ERR_INVALID_HANDLE, "lmnn_bernoulli");
    lmnn_tensor_free(it);
    lmnn_tensor_free(a);
    lmnn_tensor_free(rm);
}

int main(void) {
    TEST_RUN(test_uniform);
    TEST_RUN(test_uniform_bf16);
    TEST_RUN(test_normal);
    TEST_RUN(test_bernoulli);
    TEST_RUN(test_dropout);
    TEST_RUN(test_run_seed);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
