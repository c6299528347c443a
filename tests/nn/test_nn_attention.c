/* Attention helpers against float64 host references: head splits and
 * concatenation (bit-exact, both layouts), scaled dot-product attention with
 * sequence lengths from 1 to past a tile, masks of several broadcast shapes,
 * causal masking, scale and key transposition, float32 and bfloat16, the
 * errors and the program cache.
 *
 * Attention bounds: the output row is a convex combination of v's rows (the
 * probabilities sum to 1), so errors are measured absolutely against the
 * scale of v (|v| <= 1 here).
 *   float32  scores are 32-long float32 FMA chains (relative error about
 *            D * 2^-24 of sum |q_i k_i|), one more rounding for the scale;
 *            softmax within about 1e-6 absolute (lmnn_norm.h); the second
 *            matmul adds Sk * 2^-24 relative: with scores of order 1 and
 *            Sk <= 128 the total stays a few 1e-7; asserted 1e-5 absolute.
 *   bfloat16 inputs are compared as stored (bfloat16 values), intermediates
 *            are float32, the output rounds once to bfloat16: 2^-9 |out|
 *            plus the float32 error; asserted 2^-8 absolute.
 *   bfloat8_b likewise with the inputs as stored; the output rounds to its
 *            block's step (2^-6 of the block's largest): 2^-7 asserted.
 * Each case prints its PCC and largest absolute and relative errors (relative
 * to max(|want|, 1e-2)). */
#include <string.h>

#include "nn_test.h"

#define SDPA_OP "lmnn_scaled_dot_product_attention"

static float *rand_vals(size_t n, uint64_t seed) {
    return nn_rand_floats(n, -1, 1, seed);
}

/* The values as a tensor of `dtype` stores them. */
static void round_to(float *v, size_t n, lmnn_dtype dtype) {
    if (dtype == LMNN_BFLOAT16)
        for (size_t i = 0; i < n; i++)
            v[i] = nn_bf16(v[i]);
}

/* ---- head splits ---- */

/* [B, S, H*D] -> [B, H, S, D] (or [B, H, D, S]) on the host; the source's
 * last dim is `stride` long with the heads starting at `off`. */
static void split_ref(const float *in, uint32_t b, uint32_t s, uint32_t h, uint32_t d,
                      uint32_t stride, uint32_t off, bool transpose, float *out) {
    for (uint32_t ib = 0; ib < b; ib++)
        for (uint32_t ih = 0; ih < h; ih++)
            for (uint32_t is = 0; is < s; is++)
                for (uint32_t id = 0; id < d; id++) {
                    float x = in[((size_t)ib * s + is) * stride + off + ih * d + id];
                    size_t o = transpose ? (((size_t)ib * h + ih) * d + id) * s + is
                                         : (((size_t)ib * h + ih) * s + is) * d + id;
                    out[o] = x;
                }
}

static void check_heads(uint32_t b, uint32_t s, uint32_t h, uint32_t d, lmnn_dtype dtype,
                        lmnn_layout layout) {
    size_t n = (size_t)b * s * h * d;
    float *x = rand_vals(n, 11 + s), *want = malloc(n * sizeof *want);
    round_to(x, n, dtype);
    split_ref(x, b, s, h, d, h * d, 0, false, want);
    lmnn_shape shape = LMNN_SHAPE(b, s, h * d);
    lmnn_tensor a, sp, back;
    CHECK_OK(nn_upload(&shape, x, dtype, layout, &a));
    CHECK_OK(lmnn_split_heads(a, h, NULL, &sp));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(sp, &info));
    CHECK(info.shape.rank == 4 && info.shape.dims[0] == b && info.shape.dims[1] == h &&
          info.shape.dims[2] == s && info.shape.dims[3] == d);
    CHECK(info.layout == layout && info.dtype == dtype);
    float *got = nn_download(sp);
    CHECK(got && !memcmp(got, want, n * sizeof *got));
    free(got);
    if (layout == LMNN_TILE && dtype == LMNN_FLOAT32) CHECK(nn_padding_is_zero(sp));
    CHECK_OK(lmnn_concat_heads(sp, NULL, &back));
    CHECK_OK(lmnn_tensor_get_info(back, &info));
    CHECK(info.shape.rank == 3 && info.shape.dims[0] == b && info.shape.dims[1] == s &&
          info.shape.dims[2] == h * d);
    got = nn_download(back);
    CHECK(got && !memcmp(got, x, n * sizeof *got));
    free(got);
    /* Sequence first: row is * b + ib of [S*B, H*D] is x's row (ib, is). */
    lmnn_tensor seq;
    CHECK_OK(lmnn_concat_heads_seq_first(sp, NULL, &seq));
    CHECK_OK(lmnn_tensor_get_info(seq, &info));
    CHECK(info.shape.rank == 2 && info.shape.dims[0] == s * b && info.shape.dims[1] == h * d);
    CHECK(info.layout == layout && info.dtype == dtype);
    got = nn_download(seq);
    CHECK(got != NULL);
    bool same = got != NULL;
    for (uint32_t is = 0; is < s && same; is++)
        for (uint32_t ib = 0; ib < b; ib++)
            same = same && !memcmp(got + ((size_t)is * b + ib) * h * d,
                                   x + ((size_t)ib * s + is) * h * d, h * d * sizeof *got);
    CHECK(same);
    if (layout == LMNN_TILE && dtype == LMNN_FLOAT32) CHECK(nn_padding_is_zero(seq));
    free(got);
    lmnn_tensor_free(seq);
    /* Split sequence first: x read as [S, B, H*D] -> [B, H, S, D]; joined
     * back sequence first, x again as [S*B, H*D]. */
    lmnn_shape sbc = LMNN_SHAPE(s, b, h * d);
    lmnn_tensor xs, hs, joined;
    CHECK_OK(nn_upload(&sbc, x, dtype, layout, &xs));
    CHECK_OK(lmnn_split_heads_seq_first(xs, h, NULL, &hs));
    CHECK_OK(lmnn_tensor_get_info(hs, &info));
    CHECK(info.shape.rank == 4 && info.shape.dims[0] == b && info.shape.dims[1] == h &&
          info.shape.dims[2] == s && info.shape.dims[3] == d);
    got = nn_download(hs);
    same = got != NULL;
    for (uint32_t ib = 0; ib < b && same; ib++)
        for (uint32_t ih = 0; ih < h; ih++)
            for (uint32_t is = 0; is < s; is++)
                same = same && !memcmp(got + (((size_t)ib * h + ih) * s + is) * d,
                                       x + ((size_t)is * b + ib) * h * d + ih * d, d * sizeof *got);
    CHECK(same);
    free(got);
    if (layout == LMNN_TILE && dtype == LMNN_FLOAT32) CHECK(nn_padding_is_zero(hs));
    CHECK_OK(lmnn_concat_heads_seq_first(hs, NULL, &joined));
    got = nn_download(joined);
    CHECK(got && !memcmp(got, x, n * sizeof *got));
    free(got);
    lmnn_tensor_free(xs), lmnn_tensor_free(hs), lmnn_tensor_free(joined);
    if (b == 1) { /* one batch entry as [H, S, D] -> [S, H*D] */
        lmnn_shape hsd = LMNN_SHAPE(h, s, d);
        lmnn_tensor one, flat;
        CHECK_OK(lmnn_reshape(sp, &hsd, NULL, &one));
        CHECK_OK(lmnn_concat_heads(one, NULL, &flat));
        CHECK_OK(lmnn_tensor_get_info(flat, &info));
        CHECK(info.shape.rank == 2 && info.shape.dims[0] == s && info.shape.dims[1] == h * d);
        if (layout == LMNN_TILE)
            CHECK(info.padded_shape.dims[0] == (s + 31) / 32 * 32 &&
                  info.padded_shape.dims[1] == (h * d + 31) / 32 * 32);
        got = nn_download(flat);
        CHECK(got && !memcmp(got, x, n * sizeof *got));
        if (layout == LMNN_TILE && dtype == LMNN_FLOAT32) CHECK(nn_padding_is_zero(flat));
        free(got);
        lmnn_tensor_free(one);
        lmnn_tensor_free(flat);
    }
    lmnn_tensor_free(a);
    lmnn_tensor_free(sp);
    lmnn_tensor_free(back);
    free(x);
    free(want);
}

static void test_split_concat_heads(void) {
    check_heads(2, 20, 4, 16, LMNN_FLOAT32, LMNN_TILE);
    check_heads(2, 20, 4, 16, LMNN_BFLOAT16, LMNN_TILE);
    check_heads(2, 20, 4, 16, LMNN_FLOAT32, LMNN_ROW_MAJOR);
    check_heads(1, 1, 1, 1, LMNN_FLOAT32, LMNN_TILE);
    check_heads(3, 45, 2, 32, LMNN_FLOAT32, LMNN_TILE);
    check_heads(1, 7, 3, 5, LMNN_BFLOAT16, LMNN_ROW_MAJOR);
    check_heads(2, 100, 12, 64, LMNN_FLOAT32, LMNN_TILE); /* 24 x 4 x 2 tiles a part */
    check_heads(1, 40, 5, 7, LMNN_BFLOAT16, LMNN_TILE);   /* heads straddle tiles */
}

/* Integer tile tensors move bit for bit too (4-byte elements). */
static void test_heads_int32(void) {
    uint32_t b = 2, s = 33, h = 3, d = 10;
    size_t n = (size_t)b * s * h * d;
    int32_t *x = malloc(n * sizeof *x), *got = malloc(n * sizeof *got);
    float *xf = malloc(n * sizeof *xf), *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        x[i] = (int32_t)(i * 2654435761u) >> 3;
        xf[i] = (float)i; /* the positions, to build the expected order */
    }
    split_ref(xf, b, s, h, d, h * d, 0, false, want);
    lmnn_shape shape = LMNN_SHAPE(b, s, h * d);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_INT32;
    lmnn_tensor a, sp, back;
    CHECK_OK(lmnn_from_host(nn_dev(), &shape, x, n * sizeof *x, &o, &a));
    CHECK_OK(lmnn_split_heads(a, h, NULL, &sp));
    CHECK_OK(lmnn_to_host(sp, got, n * sizeof *got));
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && got[i] == x[(size_t)want[i]];
    CHECK(ok);
    CHECK_OK(lmnn_concat_heads(sp, NULL, &back));
    CHECK_OK(lmnn_to_host(back, got, n * sizeof *got));
    CHECK(!memcmp(got, x, n * sizeof *got));
    lmnn_tensor_free(a), lmnn_tensor_free(sp), lmnn_tensor_free(back);
    free(x), free(got), free(xf), free(want);
}

/* bfloat8_b has no elements to move one by one: split and concatenation
 * take the permute path (through bfloat16, re-packed); the values match a
 * bfloat16 reference within the bfloat8_b rounding. */
static void test_heads_bfloat8(void) {
    uint32_t b = 2, s = 20, h = 4, d = 16;
    size_t n = (size_t)b * s * h * d;
    float *x = rand_vals(n, 5), *want = malloc(n * sizeof *want);
    lmnn_shape shape = LMNN_SHAPE(b, s, h * d);
    lmnn_tensor a, sp, back;
    CHECK_OK(nn_upload(&shape, x, LMNN_BFLOAT8_B, LMNN_TILE, &a));
    float *stored = nn_download(a);
    CHECK(stored != NULL);
    split_ref(stored, b, s, h, d, h * d, 0, false, want);
    CHECK_OK(lmnn_split_heads(a, h, NULL, &sp));
    float *got = nn_download(sp);
    CHECK(got != NULL);
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++)
        w[i] = want[i];
    /* Re-packing can move a value by a bfloat8_b step of its block (2^-6 of
     * the block's largest, |x| <= 1). */
    CHECK_ERR(nn_compare(got, w, n, 1e-2), 0.999, 1.0 / 32, 0);
    CHECK_OK(lmnn_concat_heads(sp, NULL, &back));
    free(got);
    got = nn_download(back);
    CHECK(got != NULL);
    for (size_t i = 0; i < n; i++)
        w[i] = stored[i];
    CHECK_ERR(nn_compare(got, w, n, 1e-2), 0.999, 1.0 / 32, 0);
    free(got), free(w), free(stored), free(x), free(want);
    lmnn_tensor_free(a), lmnn_tensor_free(sp), lmnn_tensor_free(back);
}

static void check_qkv(uint32_t b, uint32_t s, uint32_t h, uint32_t d, bool tk, lmnn_dtype dtype,
                      lmnn_layout layout, lm_buffer_type memory) {
    size_t n = (size_t)b * s * h * d;
    float *x = rand_vals(3 * n, 21 + s), *want = malloc(n * sizeof *want);
    round_to(x, 3 * n, dtype);
    lmnn_shape shape = LMNN_SHAPE(b, s, 3 * h * d);
    lmnn_tensor a, out[3];
    CHECK_OK(nn_upload(&shape, x, dtype, layout, &a));
    lmnn_split_qkv_options o;
    lmnn_split_qkv_options_init(&o);
    o.num_heads = h;
    o.transpose_key = tk;
    o.output.memory.type = memory;
    CHECK_OK(lmnn_split_query_key_value_and_split_heads(a, &o, &out[0], &out[1], &out[2]));
    for (uint32_t i = 0; i < 3; i++) {
        bool t = tk && i == 1;
        split_ref(x, b, s, h, d, 3 * h * d, i * h * d, t, want);
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(out[i], &info));
        CHECK(info.layout == layout && info.dtype == dtype);
        CHECK(info.memory.type == (memory ? memory : LM_BUFFER_DRAM));
        CHECK(info.shape.rank == 4 && info.shape.dims[1] == h &&
              info.shape.dims[2] == (t ? d : s) && info.shape.dims[3] == (t ? s : d));
        float *got = nn_download(out[i]);
        CHECK(got && !memcmp(got, want, n * sizeof *got));
        free(got);
        if (dtype == LMNN_FLOAT32 && layout == LMNN_TILE) CHECK(nn_padding_is_zero(out[i]));
        lmnn_tensor_free(out[i]);
    }
    lmnn_tensor_free(a);
    free(x);
    free(want);
}

static void test_split_qkv(void) {
    check_qkv(2, 20, 4, 16, false, LMNN_FLOAT32, LMNN_TILE, 0);
    check_qkv(2, 20, 4, 16, true, LMNN_FLOAT32, LMNN_TILE, LM_BUFFER_L1);
    check_qkv(1, 33, 2, 32, true, LMNN_BFLOAT16, LMNN_TILE, 0);
    check_qkv(1, 1, 1, 1, true, LMNN_FLOAT32, LMNN_TILE, 0);
    check_qkv(2, 70, 3, 24, false, LMNN_FLOAT32, LMNN_TILE, 0);
    /* Row-major tensors take the split, reshape and permute path. */
    check_qkv(2, 20, 4, 16, true, LMNN_FLOAT32, LMNN_ROW_MAJOR, 0);
    check_qkv(1, 9, 2, 5, false, LMNN_BFLOAT16, LMNN_ROW_MAJOR, LM_BUFFER_L1);
}

/* ---- attention ---- */

typedef struct sdpa_case {
    uint32_t b, h, sq, sk, d, dv;
    lmnn_dtype dtype;
    uint32_t mask_rank; /* 0: none */
    uint32_t mask_dims[4];
    bool causal, key_transposed;
    double scale; /* NaN: default */
} sdpa_case;

/* softmax(q k^T * scale + mask) v in float64. */
static void sdpa_ref(const sdpa_case *c, const float *q, const float *k, const float *v,
                     const float *mask, double scale, double *out) {
    double *p = malloc(c->sk * sizeof *p);
    uint32_t md[4] = {1, 1, 1, 1};
    for (uint32_t i = 0; i < c->mask_rank; i++)
        md[4 - c->mask_rank + i] = c->mask_dims[i];
    for (uint32_t b = 0; b < c->b; b++)
        for (uint32_t h = 0; h < c->h; h++) {
            size_t bh = (size_t)b * c->h + h;
            for (uint32_t i = 0; i < c->sq; i++) {
                double mx = -INFINITY;
                for (uint32_t j = 0; j < c->sk; j++) {
                    double s = 0;
                    for (uint32_t e = 0; e < c->d; e++) {
                        double kv = c->key_transposed ? k[(bh * c->d + e) * c->sk + j]
                                                      : k[(bh * c->sk + j) * c->d + e];
                        s += (double)q[(bh * c->sq + i) * c->d + e] * kv;
                    }
                    s *= scale;
                    if (mask) {
                        size_t mi =
                            ((((size_t)(md[0] == 1 ? 0 : b) * md[1] + (md[1] == 1 ? 0 : h)) *
                                  md[2] +
                              (md[2] == 1 ? 0 : i)) *
                                 md[3] +
                             (md[3] == 1 ? 0 : j));
                        s += mask[mi];
                    }
                    if (c->causal && j > i) s = -INFINITY;
                    p[j] = s;
                    if (s > mx) mx = s;
                }
                double sum = 0;
                for (uint32_t j = 0; j < c->sk; j++) {
                    p[j] = exp(p[j] - mx);
                    sum += p[j];
                }
                for (uint32_t e = 0; e < c->dv; e++) {
                    double acc = 0;
                    for (uint32_t j = 0; j < c->sk; j++)
                        acc += p[j] / sum * v[(bh * c->sk + j) * c->dv + e];
                    out[(bh * c->sq + i) * c->dv + e] = acc;
                }
            }
        }
    free(p);
}

static void run_sdpa(const sdpa_case *c, uint64_t seed) {
    size_t nq = (size_t)c->b * c->h * c->sq * c->d, nk = (size_t)c->b * c->h * c->sk * c->d;
    size_t nv = (size_t)c->b * c->h * c->sk * c->dv, no = (size_t)c->b * c->h * c->sq * c->dv;
    float *q = rand_vals(nq, seed), *k = rand_vals(nk, seed + 1), *v = rand_vals(nv, seed + 2);
    round_to(q, nq, c->dtype);
    round_to(k, nk, c->dtype);
    round_to(v, nv, c->dtype);
    float *mask = NULL;
    size_t nm = 1;
    lmnn_tensor tq, tk, tv, tm = {0}, out;
    lmnn_shape sq = LMNN_SHAPE(c->b, c->h, c->sq, c->d);
    lmnn_shape sk = c->key_transposed ? LMNN_SHAPE(c->b, c->h, c->d, c->sk)
                                      : LMNN_SHAPE(c->b, c->h, c->sk, c->d);
    lmnn_shape sv = LMNN_SHAPE(c->b, c->h, c->sk, c->dv);
    CHECK_OK(nn_upload(&sq, q, c->dtype, LMNN_TILE, &tq));
    CHECK_OK(nn_upload(&sk, k, c->dtype, LMNN_TILE, &tk));
    CHECK_OK(nn_upload(&sv, v, c->dtype, LMNN_TILE, &tv));
    if (c->dtype == LMNN_BFLOAT8_B) { /* the reference takes the values as stored */
        float *st[3] = {nn_download(tq), nn_download(tk), nn_download(tv)};
        CHECK(st[0] && st[1] && st[2]);
        free(q), free(k), free(v);
        q = st[0], k = st[1], v = st[2];
    }
    if (c->mask_rank) {
        for (uint32_t i = 0; i < c->mask_rank; i++)
            nm *= c->mask_dims[i];
        mask = nn_rand_floats(nm, -2, 2, seed + 3);
        /* Some keys removed outright (never the first, so no row is empty). */
        for (size_t i = 0; i < nm; i++)
            if (i % 7 == 3 &&
                (c->mask_dims[c->mask_rank - 1] == 1 || i % c->mask_dims[c->mask_rank - 1]))
                mask[i] = -INFINITY;
        /* The mask in the inputs' dtype (bfloat16 holds -Inf too). */
        round_to(mask, nm, c->dtype);
        lmnn_shape sm = lmnn_shape_of(c->mask_rank, c->mask_dims);
        CHECK_OK(nn_upload(&sm, mask, c->dtype, LMNN_TILE, &tm));
    }
    lmnn_sdpa_options o;
    lmnn_sdpa_options_init(&o);
    o.mask = tm;
    o.is_causal = c->causal;
    o.key_transposed = c->key_transposed;
    o.scale = c->scale;
    double scale = isnan(c->scale) ? 1.0 / sqrt((double)c->d) : c->scale;
    CHECK_OK(lmnn_scaled_dot_product_attention(tq, tk, tv, &o, &out));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.shape.rank == 4 && info.shape.dims[2] == c->sq && info.shape.dims[3] == c->dv);
    CHECK(info.dtype == c->dtype);
    double *want = malloc(no * sizeof *want);
    sdpa_ref(c, q, k, v, mask, scale, want);
    float *got = nn_download(out);
    CHECK(got != NULL);
    nn_err e = nn_compare(got, want, no, 1e-2);
    printf("  sdpa %s [%u,%u,%u,%u] k %u v %u mask rank %u causal %d scale %g: pcc %.7f "
           "max_abs %.3g max_rel %.3g\n",
           lmnn_dtype_name(c->dtype), c->b, c->h, c->sq, c->d, c->sk, c->dv, c->mask_rank,
           c->causal, scale, e.pcc, e.max_abs, e.max_rel);
    if (c->dtype == LMNN_FLOAT32) {
        CHECK(nn_padding_is_zero(out));
        CHECK_ERR(e, 0.99999, 1e-5, 0);
    } else if (c->dtype == LMNN_BFLOAT16) {
        CHECK_ERR(e, 0.9999, 1.0 / 256, 0);
    } else { /* bfloat8_b output: half a step, 2^-7 of its block's largest (<= 1) */
        CHECK_ERR(e, 0.9999, 1.0 / 128, 0);
    }
    free(got);
    free(want);
    lmnn_tensor_free(tq);
    lmnn_tensor_free(tk);
    lmnn_tensor_free(tv);
    lmnn_tensor_free(tm);
    lmnn_tensor_free(out);
    free(q), free(k), free(v), free(mask);
}

#define F32 LMNN_FLOAT32
#define BF16 LMNN_BFLOAT16

static void test_sdpa_float32(void) {
    const sdpa_case cases[] = {
        {2, 4, 20, 20, 16, 16, F32, 0, {0}, false, false, NAN},
        {1, 1, 1, 1, 1, 1, F32, 0, {0}, false, false, NAN},
        {1, 2, 33, 45, 40, 24, F32, 0, {0}, false, false, NAN},
        {1, 2, 33, 45, 40, 24, F32, 0, {0}, false, true, 0.3},
        {2, 4, 20, 20, 16, 16, F32, 0, {0}, true, false, NAN},
        {1, 3, 50, 37, 8, 8, F32, 0, {0}, true, false, NAN},
        {2, 4, 20, 20, 16, 16, F32, 2, {20, 20}, false, false, NAN},
        {2, 4, 20, 20, 16, 16, F32, 4, {2, 1, 1, 20}, false, false, NAN},
        {2, 3, 17, 40, 16, 16, F32, 4, {1, 3, 17, 40}, true, false, 1.0},
        {2, 3, 17, 40, 16, 16, F32, 3, {3, 1, 40}, false, true, NAN},
        {2, 4, 128, 96, 64, 64, F32, 0, {0}, true, false, NAN},
        /* A column mask (one value per query), a scalar mask. */
        {2, 3, 17, 40, 16, 16, F32, 4, {2, 1, 17, 1}, false, false, NAN},
        {1, 2, 33, 45, 8, 8, F32, 1, {1}, true, false, NAN},
        /* Scales <= 0: the causal -Inf still removes the keys. */
        {1, 2, 33, 45, 8, 8, F32, 0, {0}, true, false, 0.0},
        {1, 2, 33, 45, 8, 8, F32, 2, {33, 45}, true, false, -0.7},
        /* Rows longer than the fused softmax takes (Sk > 2048): scale,
         * causal, mask and softmax as separate programs. */
        {1, 2, 40, 2100, 16, 8, F32, 2, {1, 2100}, true, false, NAN},
        {1, 1, 8, 2100, 16, 8, F32, 4, {1, 1, 8, 2100}, true, false, -0.5},
        {1, 1, 8, 2100, 16, 8, F32, 0, {0}, false, true, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_sdpa(&cases[i], 100 + 10 * i);
}

static void test_sdpa_bfloat16_bfloat8(void) {
    const sdpa_case cases[] = {
        {2, 4, 20, 20, 16, 16, BF16, 0, {0}, false, false, NAN},
        {1, 2, 33, 45, 40, 24, BF16, 0, {0}, true, false, NAN},
        {2, 4, 20, 20, 16, 16, BF16, 4, {2, 1, 1, 20}, false, true, NAN},
        {2, 4, 20, 20, 16, 16, LMNN_BFLOAT8_B, 0, {0}, true, false, NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_sdpa(&cases[i], 300 + 10 * i);
}

/* Output options: a float32 result in L1 from bfloat16 inputs (no output
 * rounding to bfloat16: within the float32 bound of the stored inputs). */
static void test_sdpa_output(void) {
    sdpa_case c = {2, 2, 20, 30, 16, 16, BF16, 0, {0}, true, false, NAN};
    size_t nq = 2 * 2 * 20 * 16, nk = 2 * 2 * 30 * 16, no = nq;
    float *q = rand_vals(nq, 41), *k = rand_vals(nk, 42), *v = rand_vals(nk, 43);
    round_to(q, nq, BF16), round_to(k, nk, BF16), round_to(v, nk, BF16);
    lmnn_shape sq = LMNN_SHAPE(2, 2, 20, 16), sk = LMNN_SHAPE(2, 2, 30, 16);
    lmnn_tensor tq, tk, tv, out;
    CHECK_OK(nn_upload(&sq, q, BF16, LMNN_TILE, &tq));
    CHECK_OK(nn_upload(&sk, k, BF16, LMNN_TILE, &tk));
    CHECK_OK(nn_upload(&sk, v, BF16, LMNN_TILE, &tv));
    lmnn_sdpa_options o;
    lmnn_sdpa_options_init(&o);
    o.is_causal = true;
    o.output.dtype = F32;
    o.output.memory.type = LM_BUFFER_L1;
    CHECK_OK(lmnn_scaled_dot_product_attention(tq, tk, tv, &o, &out));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.dtype == F32 && info.memory.type == LM_BUFFER_L1);
    double *want = malloc(no * sizeof *want);
    sdpa_ref(&c, q, k, v, NULL, 0.25, want);
    float *got = nn_download(out);
    CHECK(got != NULL);
    nn_err e = nn_compare(got, want, no, 1e-2);
    printf("  sdpa bfloat16 -> float32 in L1: pcc %.7f max_abs %.3g\n", e.pcc, e.max_abs);
    CHECK_ERR(e, 0.99999, 1e-5, 0);
    CHECK(nn_padding_is_zero(out));
    free(got), free(want), free(q), free(k), free(v);
    lmnn_tensor_free(tq), lmnn_tensor_free(tk), lmnn_tensor_free(tv), lmnn_tensor_free(out);
}

/* An all-masked row gives NaN there (as PyTorch) and leaves the other rows. */
static void test_sdpa_empty_row(void) {
    float q[2 * 4], k[3 * 4], v[3 * 2], mask[2 * 3] = {0, 0, 0, -INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < 8; i++)
        q[i] = (float)i / 8;
    for (int i = 0; i < 12; i++)
        k[i] = (float)(i % 5) / 5;
    for (int i = 0; i < 6; i++)
        v[i] = (float)i;
    lmnn_shape sq = LMNN_SHAPE(1, 1, 2, 4), sk = LMNN_SHAPE(1, 1, 3, 4),
               sv = LMNN_SHAPE(1, 1, 3, 2), sm = LMNN_SHAPE(2, 3);
    lmnn_tensor tq, tk, tv, tm, out;
    CHECK_OK(nn_upload(&sq, q, F32, LMNN_TILE, &tq));
    CHECK_OK(nn_upload(&sk, k, F32, LMNN_TILE, &tk));
    CHECK_OK(nn_upload(&sv, v, F32, LMNN_TILE, &tv));
    CHECK_OK(nn_upload(&sm, mask, F32, LMNN_TILE, &tm));
    lmnn_sdpa_options o;
    lmnn_sdpa_options_init(&o);
    o.mask = tm;
    CHECK_OK(lmnn_scaled_dot_product_attention(tq, tk, tv, &o, &out));
    float got[4];
    CHECK_OK(lmnn_to_host(out, got, sizeof got));
    CHECK(!isnan(got[0]) && !isnan(got[1]) && isnan(got[2]) && isnan(got[3]));
    lmnn_tensor_free(tq), lmnn_tensor_free(tk), lmnn_tensor_free(tv), lmnn_tensor_free(tm);
    lmnn_tensor_free(out);
}

/* A second call with the same shapes builds nothing. */
static void test_sdpa_cache(void) {
    lm_device *dev = nn_dev();
    uint32_t n = 2 * 4 * 20 * 16;
    float *x = rand_vals(n, 7);
    lmnn_shape s = LMNN_SHAPE(2, 4, 20, 16), sm = LMNN_SHAPE(20, 20);
    lmnn_tensor t, m, out;
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &t));
    CHECK_OK(nn_upload(&sm, x, F32, LMNN_TILE, &m));
    lmnn_sdpa_options o;
    lmnn_sdpa_options_init(&o);
    o.mask = m;
    o.is_causal = true;
    CHECK_OK(lmnn_scaled_dot_product_attention(t, t, t, &o, &out));
    lmnn_tensor_free(out);
    lmnn_program_cache_stats a, b;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &a));
    CHECK_OK(lmnn_scaled_dot_product_attention(t, t, t, &o, &out));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &b));
    CHECK_EQ_U64(b.misses, a.misses);
    CHECK_EQ_U64(b.hits - a.hits, 3); /* matmul, the fused softmax, matmul */
    lmnn_tensor_free(out);
    lmnn_tensor sp, back;
    lmnn_shape s3 = LMNN_SHAPE(2, 20, 64);
    lmnn_tensor_free(t);
    CHECK_OK(nn_upload(&s3, x, F32, LMNN_TILE, &t));
    CHECK_OK(lmnn_split_heads(t, 4, NULL, &sp));
    CHECK_OK(lmnn_concat_heads(sp, NULL, &back));
    lmnn_tensor_free(sp), lmnn_tensor_free(back);
    CHECK_OK(lmnn_program_cache_get_stats(dev, &a));
    CHECK_OK(lmnn_split_heads(t, 4, NULL, &sp));
    CHECK_OK(lmnn_concat_heads(sp, NULL, &back));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &b));
    CHECK_EQ_U64(b.misses, a.misses);
    lmnn_tensor_free(sp), lmnn_tensor_free(back);
    lmnn_tensor_free(t), lmnn_tensor_free(m);
    free(x);
}

static void test_errors(void) {
    lm_device *dev = nn_dev();
    float x[4096] = {0};
    lmnn_tensor q, k3, kd, kb, v, vs, m, mbad, rm, i32, out = {0}, o3;
    lmnn_shape sq = LMNN_SHAPE(2, 4, 20, 16);
    CHECK_OK(nn_upload(&sq, x, F32, LMNN_TILE, &q));
    lmnn_shape s = LMNN_SHAPE(2, 3, 20, 16);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &k3));
    s = LMNN_SHAPE(2, 4, 20, 8);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &kd));
    s = LMNN_SHAPE(1, 4, 20, 16);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &kb));
    CHECK_OK(nn_upload(&sq, x, F32, LMNN_TILE, &v));
    s = LMNN_SHAPE(2, 4, 21, 16);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &vs));
    s = LMNN_SHAPE(20, 20);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &m));
    s = LMNN_SHAPE(3, 1, 20);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &mbad));
    CHECK_OK(nn_upload(&sq, x, F32, LMNN_ROW_MAJOR, &rm));
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_INT32;
    CHECK_OK(lmnn_from_host(dev, &sq, x, 2 * 4 * 20 * 16 * 4, &to, &i32));
    s = LMNN_SHAPE(2, 20, 64);
    CHECK_OK(nn_upload(&s, x, F32, LMNN_TILE, &o3));

    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, k3, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP
                ": k: head count 3 differs from q's 4 (q [2, 4, 20, 16], k [2, 3, 20, 16])");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, kb, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": k: batch size 1 differs from q's 2");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, kd, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": k: head size 8 of shape [2, 4, 20, 8] differs from q's 16");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, vs, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": v: sequence length 21 of shape [2, 4, 21, 16] differs from k's 20");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, k3, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": v: head count 3 differs from q's 4");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(o3, q, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": q: expected rank 4 [B, H, S, D], given [2, 20, 64]");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, rm, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": k:");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, i32, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": v:");
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": out is NULL");
    lmnn_sdpa_options o;
    lmnn_sdpa_options_init(&o);
    o.mask = mbad;
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, &o, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": mask: shape [3, 1, 20] does not broadcast to the scores' [B, H, Sq, Sk] "
                        "= [2, 4, 20, 20]");
    o.mask = rm;
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, &o, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": mask:");
    o.mask = m;
    o.scale = INFINITY;
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, &o, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": scale: expected a finite float, given inf");
    o.scale = NAN;
    o.key_transposed = true; /* k [2, 4, 20, 16] read as [B, H, D=20, Sk=16] */
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, &o, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": k: head size 20 of shape [2, 4, 20, 16] (transposed: [B, H, D, Sk]) "
                        "differs from q's 16");
    o.key_transposed = false;
    o.output.dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, v, &o, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": output.dtype: expected a float dtype, given int32");
    CHECK(out.id == 0);

    CHECK_FAILS(
        lmnn_split_heads(o3, 5, NULL, &out), LM_ERR_INVALID_ARGUMENT,
        "lmnn_split_heads: a: last dim 64 of shape [2, 20, 64] is not a multiple of 5 heads");
    CHECK_FAILS(lmnn_split_heads(o3, 0, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads: num_heads: expected > 0, given 0");
    CHECK_FAILS(lmnn_split_heads(q, 4, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads: a: expected rank 3 [B, S, H*D], given shape [2, 4, 20, 16]");
    lmnn_output oo = {.dtype = LMNN_BFLOAT16};
    CHECK_FAILS(lmnn_split_heads(o3, 4, &oo, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads: output.dtype: expected zero or the input's float32, given "
                "bfloat16");
    oo = (lmnn_output){.memory = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_HEIGHT_SHARDED}};
    CHECK_FAILS(lmnn_split_heads(o3, 4, &oo, &out), LM_ERR_UNSUPPORTED,
                "lmnn_split_heads: memory config: sharded tensors are not supported yet");
    lmnn_shape s2 = LMNN_SHAPE(20, 64);
    lmnn_tensor t2;
    CHECK_OK(nn_upload(&s2, x, F32, LMNN_TILE, &t2));
    CHECK_FAILS(lmnn_concat_heads(t2, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_concat_heads: a: expected rank 4 [B, H, S, D] or 3 [H, S, D], given shape "
                "[20, 64]");
    CHECK_FAILS(lmnn_split_heads_seq_first(t2, 4, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads_seq_first: a: expected rank 3 [S, B, H*D], given shape "
                "[20, 64]");
    CHECK_FAILS(lmnn_split_heads_seq_first(o3, 5, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads_seq_first: a: last dim 64 of shape [2, 20, 64] is not a "
                "multiple of 5 heads");
    CHECK_FAILS(lmnn_split_heads_seq_first(o3, 4, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_heads_seq_first: out is NULL");
    CHECK_FAILS(
        lmnn_concat_heads_seq_first(t2, NULL, &out), LM_ERR_INVALID_ARGUMENT,
        "lmnn_concat_heads_seq_first: a: expected rank 4 [B, H, S, D], given shape [20, 64]");
    CHECK_FAILS(lmnn_concat_heads_seq_first(q, &oo, &out), LM_ERR_UNSUPPORTED,
                "lmnn_concat_heads_seq_first: memory config: sharded tensors are not supported "
                "yet");
    CHECK_FAILS(lmnn_concat_heads_seq_first(q, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_concat_heads_seq_first: out is NULL");
    lmnn_tensor_free(t2);
    lmnn_tensor oq, ok, ov;
    lmnn_split_qkv_options so;
    lmnn_split_qkv_options_init(&so);
    so.num_heads = 4;
    CHECK_FAILS(lmnn_split_query_key_value_and_split_heads(o3, &so, &oq, &ok, &ov),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_split_query_key_value_and_split_heads: qkv: last dim 64 of shape [2, 20, 64] "
                "is not a multiple of 3 x 4 heads");
    CHECK_FAILS(lmnn_split_query_key_value_and_split_heads(o3, NULL, &oq, &ok, &ov),
                LM_ERR_INVALID_ARGUMENT, "opts is NULL");

    /* Dead tensors. */
    lmnn_tensor dead;
    CHECK_OK(nn_upload(&sq, x, F32, LMNN_TILE, &dead));
    lmnn_tensor_free(dead);
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, q, dead, NULL, &out), LM_ERR_INVALID_HANDLE,
                SDPA_OP ": v: tensor handle");
    CHECK_FAILS(lmnn_split_heads(dead, 4, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_split_heads: a: tensor handle");
    CHECK_FAILS(lmnn_concat_heads((lmnn_tensor){0}, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_concat_heads: a: tensor handle");
    CHECK_FAILS(lmnn_concat_heads_seq_first(dead, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_concat_heads_seq_first: a: tensor handle");
    CHECK_FAILS(lmnn_split_heads_seq_first(dead, 4, NULL, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_split_heads_seq_first: a: tensor handle");

    /* A tensor on another device. */
    lm_device *dev2;
    CHECK_OK(lm_device_open(NULL, &dev2));
    lmnn_tensor other;
    lmnn_tensor_options_init(&to);
    to.dtype = F32;
    CHECK_OK(lmnn_from_host(dev2, &sq, x, 2 * 4 * 20 * 16 * 4, &to, &other));
    CHECK_FAILS(lmnn_scaled_dot_product_attention(q, other, v, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                SDPA_OP ": k:");
    lmnn_tensor_free(other);
    CHECK_OK(lm_device_close(dev2));

    /* The device still works. */
    CHECK_OK(lmnn_scaled_dot_product_attention(q, q, v, NULL, &out));
    float *got = nn_download(out);
    CHECK(got != NULL);
    free(got);
    lmnn_tensor all[] = {q, k3, kd, kb, v, vs, m, mbad, rm, i32, o3, out};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        lmnn_tensor_free(all[i]);
}

int main(void) {
    TEST_RUN(test_split_concat_heads);
    TEST_RUN(test_heads_int32);
    TEST_RUN(test_heads_bfloat8);
    TEST_RUN(test_split_qkv);
    TEST_RUN(test_sdpa_float32);
    TEST_RUN(test_sdpa_bfloat16_bfloat8);
    TEST_RUN(test_sdpa_output);
    TEST_RUN(test_sdpa_empty_row);
    TEST_RUN(test_sdpa_cache);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
