/* Shared by the op library's tests: a device, tensors from host arrays,
 * deterministic random data and error measures against host references. */
#ifndef LM_NN_TEST_H
#define LM_NN_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/nn.h"
#include "lm_test.h"

static lm_device *nn_test_device_;

/* The device every test of a binary shares (opened on first use). */
static inline lm_device *nn_dev(void) {
    if (!nn_test_device_ && lm_device_open(NULL, &nn_test_device_)) {
        fprintf(stderr, "cannot open a device: %s\n", lm_last_error());
        exit(1);
    }
    return nn_test_device_;
}

static inline void nn_dev_close(void) {
    lm_device_close(nn_test_device_);
    nn_test_device_ = NULL;
}

/* xorshift: the same numbers on every host. */
static inline uint32_t nn_rand_u32(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

/* n floats uniform in [lo, hi). */
static inline float *nn_rand_floats(size_t n, float lo, float hi, uint64_t seed) {
    float *v = malloc(n * sizeof *v);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * (float)(nn_rand_u32(&s) & 0xffffff) / 16777216.0f;
    return v;
}

/* Rounds to bfloat16 (nearest even), as the device stores it. */
static inline float nn_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return x;
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

typedef struct nn_err {
    double pcc, max_abs, max_rel;
    size_t worst; /* index of the largest absolute error */
} nn_err;

/* Pearson correlation and the largest absolute and relative errors of got
 * against want (relative to max(|want|, floor)). NaNs must sit at the same
 * places, and infinities be equal, or the result is pcc = -1. */
static inline nn_err nn_compare(const float *got, const double *want, size_t n, double floor) {
    nn_err e = {0, 0, 0, 0};
    double sg = 0, sw = 0, sgg = 0, sww = 0, sgw = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (isnan(w) || isnan(g) || isinf(w) || isinf(g)) {
            if (!(isnan(w) && isnan(g)) && g != w) {
                e.pcc = -1;
                e.worst = i;
                e.max_abs = INFINITY;
                return e;
            }
            continue;
        }
        double d = fabs(g - w), r = d / fmax(fabs(w), floor);
        if (d > e.max_abs) {
            e.max_abs = d;
            e.worst = i;
        }
        if (r > e.max_rel) e.max_rel = r;
        sg += g, sw += w, sgg += g * g, sww += w * w, sgw += g * w;
        m++;
    }
    if (m == 0) {
        e.pcc = 1;
        return e;
    }
    double cov = sgw - sg * sw / (double)m, vg = sgg - sg * sg / (double)m,
           vw = sww - sw * sw / (double)m;
    /* Constant data has no correlation to measure: the error bounds decide. */
    e.pcc = vg <= 0 || vw <= 0 ? 1 : cov / sqrt(vg * vw);
    return e;
}

/* Checks an error measure against bounds, printing the measure on failure. */
#define CHECK_ERR(e, min_pcc, abs_tol, rel_tol)                                                    \
    do {                                                                                           \
        nn_err e_ = (e);                                                                           \
        if (!(e_.pcc >= (min_pcc) && (e_.max_abs <= (abs_tol) || e_.max_rel <= (rel_tol)))) {      \
            char m_[256];                                                                          \
            snprintf(m_, sizeof m_, "pcc %.6f max_abs %.3g max_rel %.3g (at %zu)", e_.pcc,         \
                     e_.max_abs, e_.max_rel, e_.worst);                                            \
            test_fail_(__FILE__, __LINE__, m_);                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* A float tensor of `shape` from host data. */
static inline lm_status nn_upload(const lmnn_shape *shape, const float *data, lmnn_dtype dtype,
                                  lmnn_layout layout, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dtype;
    o.layout = layout;
    return lmnn_from_host(nn_dev(), shape, data, lmnn_shape_volume(shape) * sizeof(float), &o, out);
}

/* The tensor's elements as floats (malloc'ed), or NULL on error. */
static inline float *nn_download(lmnn_tensor t) {
    size_t size;
    if (lmnn_tensor_host_size(t, &size)) return NULL;
    float *v = malloc(size ? size : 1);
    if (v && lmnn_to_host(t, v, size)) {
        free(v);
        return NULL;
    }
    return v;
}

/* Whether tensors a and b hold the same host bytes (lmnn_to_host's), bit
 * for bit. */
static inline bool nn_same_bits(lmnn_tensor a, lmnn_tensor b) {
    size_t na = 0, nb = 0;
    if (lmnn_tensor_host_size(a, &na) || lmnn_tensor_host_size(b, &nb) || na != nb) return false;
    float *ga = nn_download(a), *gb = nn_download(b);
    bool same = ga && gb && !memcmp(ga, gb, na);
    free(ga);
    free(gb);
    return same;
}

/* A float32 tile tensor of `shape` holding `data`, height-sharded in L1 on
 * cores (0, 0) and (1, 0): 32-row shards `width` columns wide (the padded
 * last dim). For ops that must refuse sharded inputs. */
static inline lm_status nn_upload_sharded(const lmnn_shape *shape, const float *data,
                                          uint32_t width, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.memory = (lmnn_memory_config){.type = LM_BUFFER_L1, .layout = LM_BUFFER_HEIGHT_SHARDED};
    o.memory.shard.grid = lm_core_range_set_of(0, 0, 1, 0);
    o.memory.shard.height = 32;
    o.memory.shard.width = width;
    return lmnn_from_host(nn_dev(), shape, data, lmnn_shape_volume(shape) * sizeof *data, &o, out);
}

/* The bytes allocated in the test device's DRAM and L1 (1; 0 when the
 * device cannot say): a call that fails, or whose outputs are freed, must
 * leave them as they were. */
static inline int nn_memory_now(uint64_t *dram, uint64_t *l1) {
    lm_memory_stats m;
    if (lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &m)) return 0;
    *dram = m.total_allocated_bytes;
    if (lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &m)) return 0;
    *l1 = m.total_allocated_bytes;
    return 1;
}

/* The float32 tile tensor's padding, read raw from its buffer, is all zero
 * (NaN is not; -0 is, as lmnn_neg leaves it). */
static inline int nn_padding_is_zero(lmnn_tensor t) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info) || info.layout != LMNN_TILE || info.dtype != LMNN_FLOAT32)
        return 0;
    uint64_t size;
    lm_buffer_size(info.buffer, &size);
    float *raw = malloc(size), *rm = malloc(size);
    lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, raw, true);
    uint32_t r = info.shape.rank;
    uint32_t w = r ? info.shape.dims[r - 1] : 1, h = r > 1 ? info.shape.dims[r - 2] : 1;
    uint32_t wp = (w + 31) / 32 * 32, hp = (h + 31) / 32 * 32;
    uint64_t mats = size / 4 / ((uint64_t)wp * hp);
    int ok = 1;
    for (uint64_t m = 0; m < mats && ok; m++) {
        lm_untilize(raw + m * wp * hp, (size_t)wp * hp * 4, LM_DATA_FORMAT_FLOAT32, hp, wp, rm,
                    (size_t)wp * hp * 4);
        for (uint32_t i = 0; i < hp && ok; i++)
            for (uint32_t j = 0; j < wp; j++)
                if ((i >= h || j >= w) && rm[i * wp + j] != 0) ok = 0;
    }
    free(raw);
    free(rm);
    return ok;
}

/* v as a tensor of `dtype` stores it (bfloat16 rounded to nearest even;
 * others as they are), malloc'd. */
static inline float *nn_rounded(const float *v, size_t n, lmnn_dtype dtype) {
    float *r = malloc(n * sizeof *r);
    for (size_t i = 0; r && i < n; i++)
        r[i] = dtype == LMNN_BFLOAT16 ? nn_bf16(v[i]) : v[i];
    return r;
}

/* [n, c, sp] -> [n, sp, c], malloc'd: NCHW -> NHWC with sp = H * W, NCDHW
 * -> NDHWC with sp = D * H * W; the reverse with c and sp swapped. */
static inline float *nn_channels_last(const float *v, uint32_t n, uint32_t c, size_t sp) {
    float *r = malloc((size_t)n * c * sp * sizeof *r);
    for (uint32_t i = 0; r && i < n; i++)
        for (uint32_t j = 0; j < c; j++)
            for (size_t p = 0; p < sp; p++)
                r[((size_t)i * sp + p) * c + j] = v[((size_t)i * c + j) * sp + p];
    return r;
}

/* Whether a program with kernel kernels[i] ran (out[i], of `count`) since
 * lm_device_set_profiling(true); turns profiling off. */
static inline void nn_ran_since(const char *const *kernels, bool *out, size_t count) {
    lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
    CHECK_OK(lm_device_get_program_profile(nn_dev(), &e, &n));
    for (size_t j = 0; j < count; j++) {
        out[j] = false;
        for (size_t i = 0; i < n; i++)
            out[j] |= strstr(e[i].program, kernels[j]) != NULL;
    }
    lm_profile_program_free(e);
    CHECK_OK(lm_device_set_profiling(nn_dev(), false));
}

/* Whether `out` has shape `es`, layout `el` and dtype `dt` (and with
 * `dram` lies in DRAM); else fails naming both. */
static inline bool nn_output_is(const char *name, lmnn_tensor out, const lmnn_shape *es,
                                lmnn_layout el, lmnn_dtype dt, bool dram) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(out, &info)) {
        test_fail_(__FILE__, __LINE__, lm_last_error());
        return false;
    }
    if (info.shape.rank != es->rank ||
        memcmp(info.shape.dims, es->dims, sizeof(uint32_t) * es->rank)) {
        char m[256], *p = m, *end = m + sizeof m;
        p += snprintf(p, (size_t)(end - p), "%s: output shape [", name);
        for (uint32_t i = 0; i < info.shape.rank && p < end; i++)
            p += snprintf(p, (size_t)(end - p), i ? ", %u" : "%u", info.shape.dims[i]);
        if (p < end) p += snprintf(p, (size_t)(end - p), "], expected [");
        for (uint32_t i = 0; i < es->rank && p < end; i++)
            p += snprintf(p, (size_t)(end - p), i ? ", %u" : "%u", es->dims[i]);
        if (p < end) snprintf(p, (size_t)(end - p), "]");
        test_fail_(__FILE__, __LINE__, m);
        return false;
    }
    if (info.layout != el || info.dtype != dt || (dram && info.memory.type != LM_BUFFER_DRAM)) {
        char m[256];
        snprintf(m, sizeof m, "%s: output %s %s in memory %d, expected %s %s%s", name,
                 info.layout == LMNN_ROW_MAJOR ? "row-major" : "tile", lmnn_dtype_name(info.dtype),
                 (int)info.memory.type, el == LMNN_ROW_MAJOR ? "row-major" : "tile",
                 lmnn_dtype_name(dt), dram ? " in DRAM" : "");
        test_fail_(__FILE__, __LINE__, m);
        return false;
    }
    return true;
}

#endif
