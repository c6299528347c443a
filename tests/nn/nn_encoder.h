/* A small transformer encoder built from the op library, shared by its test
 * (test_nn_transformer.c) and its benchmark (bench_nn_transformer.c), with a
 * plain float64 host reference of the same model.
 *
 *   ids [B, S] (row-major uint32), optional key mask [B, 1, 1, S]
 *   x = embedding(ids, tok [V, E]) + pos [S, E]
 *   per layer:
 *     q, k, v = split_qkv(x @ Wqkv + bqkv, H)            (k transposed)
 *     x = layer_norm(x + concat_heads(sdpa(q, k, v, mask)) @ Wo + bo)
 *     x = layer_norm(x + gelu(x @ W1 + b1) @ W2 + b2)
 *   out = x, row-major [B, S, E]
 * Weights are [in, out] (lmnn_linear's default), float32, fixed by a seed.
 * GELU is the exact form when the build has it, else the tanh form (the
 * reference follows enc_device.gelu).
 * Only nn.h and libc: the benchmark has no test framework. */
#ifndef LM_NN_ENCODER_H
#define LM_NN_ENCODER_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/nn.h"

#define ENC_MAX_LAYERS 4

typedef struct enc_config {
    uint32_t vocab, seq, d_model, heads, d_ff, layers, batch;
} enc_config;

/* One layer's parameters; the same struct holds host arrays or tensors. */
#define ENC_PARAMS(X)                                                                              \
    X(wqkv) X(bqkv) X(wo) X(bo) X(ln1_g) X(ln1_b) X(w1) X(b1) X(w2) X(b2) X(ln2_g) X(ln2_b)

typedef struct enc_host_layer {
#define X(n) float *n;
    ENC_PARAMS(X)
#undef X
} enc_host_layer;

typedef struct enc_host {
    enc_config cfg;
    float *tok, *pos;
    enc_host_layer layer[ENC_MAX_LAYERS];
} enc_host;

typedef struct enc_device_layer {
#define X(n) lmnn_tensor n;
    ENC_PARAMS(X)
#undef X
} enc_device_layer;

typedef struct enc_device {
    enc_config cfg;
    lmnn_unary_op gelu; /* LMNN_GELU or LMNN_GELU_TANH */
    lmnn_tensor tok, pos;
    enc_device_layer layer[ENC_MAX_LAYERS];
} enc_device;

static inline uint32_t enc_rand_(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

/* n floats uniform in [c - r, c + r). */
static inline float *enc_rand_floats_(size_t n, float c, float r, uint64_t *s) {
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = c + r * (2.0f * (float)(enc_rand_(s) & 0xffffff) / 16777216.0f - 1.0f);
    return v;
}

/* Sizes of each parameter: rows (1 for vectors) and columns. */
static inline void enc_param_dims_(const enc_config *c, int which, uint32_t *rows, uint32_t *cols) {
    uint32_t e = c->d_model, f = c->d_ff;
    static const uint8_t vec[] = {0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1};
    uint32_t r[] = {e, 1, e, 1, 1, 1, e, 1, f, 1, 1, 1};
    uint32_t k[] = {3 * e, 3 * e, e, e, e, e, f, f, e, e, e, e};
    *rows = vec[which] ? 1 : r[which];
    *cols = k[which];
}

/* Random weights: matrices uniform within 1/sqrt(fan-in), biases within 0.1,
 * layer-norm gains around 1 and shifts around 0; embeddings within 1. */
static inline void enc_host_init(enc_host *h, const enc_config *cfg, uint64_t seed) {
    memset(h, 0, sizeof *h);
    h->cfg = *cfg;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    h->tok = enc_rand_floats_((size_t)cfg->vocab * cfg->d_model, 0, 1, &s);
    h->pos = enc_rand_floats_((size_t)cfg->seq * cfg->d_model, 0, 0.5f, &s);
    for (uint32_t l = 0; l < cfg->layers; l++) {
        float **p = (float **)&h->layer[l];
        for (int i = 0; i < 12; i++) {
            uint32_t rows, cols;
            enc_param_dims_(cfg, i, &rows, &cols);
            bool gain = i == 4 || i == 10, vec = rows == 1;
            float r = vec ? (gain ? 0.2f : 0.1f) : 1.0f / sqrtf((float)rows);
            p[i] = enc_rand_floats_((size_t)rows * cols, gain ? 1.0f : 0.0f, r, &s);
        }
    }
}

static inline void enc_host_free(enc_host *h) {
    free(h->tok);
    free(h->pos);
    for (uint32_t l = 0; l < h->cfg.layers; l++) {
        float **p = (float **)&h->layer[l];
        for (int i = 0; i < 12; i++)
            free(p[i]);
    }
}

static inline lm_status enc_upload_(lm_device *dev, const float *v, lmnn_shape s, lmnn_layout l,
                                    lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = l;
    return lmnn_from_host(dev, &s, v, lmnn_shape_volume(&s) * sizeof(float), &o, out);
}

/* The exact GELU when this build can fuse it after a linear (as the model
 * uses it), else the tanh form. */
static inline lmnn_unary_op enc_pick_gelu(lm_device *dev) {
    float x[1] = {0.5f};
    lmnn_tensor t, g;
    lmnn_unary_op op = LMNN_GELU_TANH;
    if (enc_upload_(dev, x, LMNN_SHAPE(1, 1), LMNN_TILE, &t)) return op;
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.activation = LMNN_GELU;
    if (lmnn_linear(t, t, (lmnn_tensor){0}, &o, &g) == LM_OK) {
        op = LMNN_GELU;
        lmnn_tensor_free(g);
    }
    lmnn_tensor_free(t);
    return op;
}

/* The model's parameters on `dev` (tile layout; the token table row-major,
 * as lmnn_embedding prefers it). */
static inline lm_status enc_device_init(lm_device *dev, const enc_host *h, enc_device *d) {
    memset(d, 0, sizeof *d);
    d->cfg = h->cfg;
    d->gelu = enc_pick_gelu(dev);
    const enc_config *c = &h->cfg;
    lm_status st =
        enc_upload_(dev, h->tok, LMNN_SHAPE(c->vocab, c->d_model), LMNN_ROW_MAJOR, &d->tok);
    if (!st) st = enc_upload_(dev, h->pos, LMNN_SHAPE(c->seq, c->d_model), LMNN_TILE, &d->pos);
    for (uint32_t l = 0; l < c->layers && !st; l++) {
        float *const *p = (float *const *)&h->layer[l];
        lmnn_tensor *t = (lmnn_tensor *)&d->layer[l];
        for (int i = 0; i < 12 && !st; i++) {
            uint32_t rows, cols;
            enc_param_dims_(c, i, &rows, &cols);
            lmnn_shape s = rows == 1 ? LMNN_SHAPE(cols) : LMNN_SHAPE(rows, cols);
            st = enc_upload_(dev, p[i], s, LMNN_TILE, &t[i]);
        }
    }
    return st;
}

static inline void enc_device_free(enc_device *d) {
    lmnn_tensor_free(d->tok);
    lmnn_tensor_free(d->pos);
    for (uint32_t l = 0; l < d->cfg.layers; l++) {
        lmnn_tensor *t = (lmnn_tensor *)&d->layer[l];
        for (int i = 0; i < 12; i++)
            lmnn_tensor_free(t[i]);
    }
}

/* out = the model on ids (row-major uint32 [B, S]) with the additive
 * attention mask `mask` ({0}: none; tile, or row-major to be tilized in the
 * step): a new row-major float32 tensor [B, S, E]. Every op is enqueued without waiting; the
 * intermediates are freed as soon as they are used (their buffers come back in the same order on
 * every call, so repeated calls reuse the same addresses). */
static inline lm_status enc_forward(const enc_device *d, lmnn_tensor ids, lmnn_tensor mask,
                                    lmnn_tensor *out) {
    const enc_config *c = &d->cfg;
    lmnn_tensor x = {0}, t[8];
    lmnn_embedding_options eo;
    lmnn_embedding_options_init(&eo);
    eo.layout = LMNN_TILE;
    memset(t, 0, sizeof t);
    lm_status st = lmnn_embedding(ids, d->tok, &eo, &t[0]);
    if (!st) st = lmnn_add(t[0], d->pos, &x);
    lmnn_tensor_free(t[0]);
    t[0] = (lmnn_tensor){0};
    lmnn_split_qkv_options so;
    lmnn_split_qkv_options_init(&so);
    so.num_heads = c->heads;
    so.transpose_key = true;
    lmnn_sdpa_options ao;
    lmnn_sdpa_options_init(&ao);
    ao.key_transposed = true;
    ao.mask = mask;
    /* A row-major mask (a model input that new data is written into) is
     * tilized here, inside the step. */
    lmnn_tensor mask_tile = {0};
    lmnn_tensor_info mi;
    if (!st && mask.id && !lmnn_tensor_get_info(mask, &mi) && mi.layout == LMNN_ROW_MAJOR) {
        st = lmnn_to_layout(mask, LMNN_TILE, &mask_tile);
        ao.mask = mask_tile;
    }
    lmnn_matmul_options act;
    lmnn_matmul_options_init(&act);
    act.activation = d->gelu;
    for (uint32_t l = 0; l < c->layers && !st; l++) {
        const enc_device_layer *w = &d->layer[l];
        lmnn_tensor x1 = {0};
        /* t: 0 qkv, 1 q, 2 k, 3 v, 4 attention, 5 heads joined, 6 projected, 7 sum */
        st = lmnn_linear(x, w->wqkv, w->bqkv, NULL, &t[0]);
        if (!st) st = lmnn_split_query_key_value_and_split_heads(t[0], &so, &t[1], &t[2], &t[3]);
        if (!st) st = lmnn_scaled_dot_product_attention(t[1], t[2], t[3], &ao, &t[4]);
        if (!st) st = lmnn_concat_heads(t[4], NULL, &t[5]);
        if (!st) st = lmnn_linear(t[5], w->wo, w->bo, NULL, &t[6]);
        if (!st) st = lmnn_add(x, t[6], &t[7]);
        if (!st) st = lmnn_layer_norm(t[7], w->ln1_g, w->ln1_b, NULL, &x1);
        for (int i = 0; i < 8; i++) {
            lmnn_tensor_free(t[i]);
            t[i] = (lmnn_tensor){0};
        }
        lmnn_tensor_free(x);
        x = x1;
        /* t: 0 hidden, 1 back to E, 2 sum */
        if (!st) st = lmnn_linear(x, w->w1, w->b1, &act, &t[0]);
        if (!st) st = lmnn_linear(t[0], w->w2, w->b2, NULL, &t[1]);
        if (!st) st = lmnn_add(x, t[1], &t[2]);
        x1 = (lmnn_tensor){0};
        if (!st) st = lmnn_layer_norm(t[2], w->ln2_g, w->ln2_b, NULL, &x1);
        for (int i = 0; i < 3; i++) {
            lmnn_tensor_free(t[i]);
            t[i] = (lmnn_tensor){0};
        }
        lmnn_tensor_free(x);
        x = x1;
    }
    if (!st) st = lmnn_to_layout(x, LMNN_ROW_MAJOR, out);
    lmnn_tensor_free(x);
    lmnn_tensor_free(mask_tile);
    return st;
}

/* ---- the float64 reference ---- */

static inline double enc_gelu_ref_(lmnn_unary_op op, double x) {
    if (op == LMNN_GELU) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

/* y[n, cols] = x[n, k] @ w[k, cols] + b. */
static inline void enc_linear_ref_(const double *x, size_t n, uint32_t k, const float *w,
                                   const float *b, uint32_t cols, double *y) {
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < cols; j++) {
            double acc = b[j];
            for (uint32_t e = 0; e < k; e++)
                acc += x[i * k + e] * w[(size_t)e * cols + j];
            y[i * cols + j] = acc;
        }
}

/* x[i] = layer_norm(x[i] + r[i]) over rows of e. */
static inline void enc_add_norm_ref_(double *x, const double *r, size_t n, uint32_t e,
                                     const float *g, const float *b) {
    for (size_t i = 0; i < n; i++) {
        double *row = x + i * e, mean = 0, var = 0;
        for (uint32_t j = 0; j < e; j++) {
            row[j] += r[i * e + j];
            mean += row[j];
        }
        mean /= e;
        for (uint32_t j = 0; j < e; j++)
            var += (row[j] - mean) * (row[j] - mean);
        var /= e;
        double inv = 1 / sqrt(var + 1e-5);
        for (uint32_t j = 0; j < e; j++)
            row[j] = (row[j] - mean) * inv * g[j] + b[j];
    }
}

/* The model in float64 on the host: out [B, S, E]; `lengths` (NULL: none)
 * the number of keys each batch element attends to (the others masked). */
static inline void enc_reference(const enc_host *h, lmnn_unary_op gelu, const uint32_t *ids,
                                 const uint32_t *lengths, double *out) {
    const enc_config *c = &h->cfg;
    uint32_t e = c->d_model, s = c->seq, hd = e / c->heads, f = c->d_ff;
    size_t n = (size_t)c->batch * s;
    double *x = out, *qkv = malloc(n * 3 * e * sizeof *qkv), *att = malloc(n * e * sizeof *att);
    double *proj = malloc(n * (f > e ? f : e) * sizeof *proj), *hid = malloc(n * f * sizeof *hid);
    double *p = malloc(s * sizeof *p);
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < e; j++)
            x[i * e + j] = (double)h->tok[(size_t)ids[i] * e + j] + h->pos[(i % s) * e + j];
    double scale = 1 / sqrt((double)hd);
    for (uint32_t l = 0; l < c->layers; l++) {
        const enc_host_layer *w = &h->layer[l];
        enc_linear_ref_(x, n, e, w->wqkv, w->bqkv, 3 * e, qkv);
        for (uint32_t b = 0; b < c->batch; b++)
            for (uint32_t hh = 0; hh < c->heads; hh++)
                for (uint32_t i = 0; i < s; i++) {
                    const double *q = qkv + ((size_t)b * s + i) * 3 * e + hh * hd;
                    double mx = -INFINITY, sum = 0;
                    for (uint32_t j = 0; j < s; j++) {
                        const double *k = qkv + ((size_t)b * s + j) * 3 * e + e + hh * hd;
                        double dot = 0;
                        for (uint32_t d = 0; d < hd; d++)
                            dot += q[d] * k[d];
                        p[j] = lengths && j >= lengths[b] ? -INFINITY : dot * scale;
                        if (p[j] > mx) mx = p[j];
                    }
                    for (uint32_t j = 0; j < s; j++)
                        sum += p[j] = exp(p[j] - mx);
                    for (uint32_t d = 0; d < hd; d++) {
                        double acc = 0;
                        for (uint32_t j = 0; j < s; j++)
                            acc +=
                                p[j] / sum * qkv[((size_t)b * s + j) * 3 * e + 2 * e + hh * hd + d];
                        att[((size_t)b * s + i) * e + hh * hd + d] = acc;
                    }
                }
        enc_linear_ref_(att, n, e, w->wo, w->bo, e, proj);
        enc_add_norm_ref_(x, proj, n, e, w->ln1_g, w->ln1_b);
        enc_linear_ref_(x, n, e, w->w1, w->b1, f, hid);
        for (size_t i = 0; i < n * f; i++)
            hid[i] = enc_gelu_ref_(gelu, hid[i]);
        enc_linear_ref_(hid, n, f, w->w2, w->b2, e, proj);
        enc_add_norm_ref_(x, proj, n, e, w->ln2_g, w->ln2_b);
    }
    free(qkv), free(att), free(proj), free(hid), free(p);
}

#endif
