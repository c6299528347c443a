/* Values on the device while a model is lowered.
 *
 * Each value gets a device tensor when its producer runs (or, for a
 * constant, when a node first reads it: uploaded once, and shared by every
 * constant with the same content, shape and dtype). A tensor may be wanted
 * in tile layout (math) and row-major (indices, boundary); both forms are
 * kept once made. An image between convolutions and poolings stays in the
 * flat NHWC form those take, which saves a transpose each way. The memory plan is liveness: a
 * value's tensors are freed as soon as the last node that reads it has run.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/fe_ctx.h"

lmnn_dtype fe_dev_dtype(fe_ctx *c, fe_elem elem) {
    switch (elem) {
    case FE_FLOAT:
    case FE_DOUBLE:
    case FE_FLOAT16:
        return c->float_dtype;
    case FE_BFLOAT16:
        return LMNN_BFLOAT16;
    case FE_UINT32:
    case FE_UINT64:
        return LMNN_UINT32;
    default:
        return LMNN_INT32;
    }
}

static lm_status dev_new(fe_ctx *c, uint32_t *out) {
    if (c->dev_count == c->dev_cap) {
        uint32_t cap = c->dev_cap ? c->dev_cap * 2 : 64;
        fe_dev *d = realloc(c->devs, cap * sizeof *d);
        if (!d) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        c->devs = d;
        c->dev_cap = cap;
    }
    c->devs[c->dev_count] = (fe_dev){.pre = FE_NONE, .owner = FE_NONE};
    *out = c->dev_count++;
    return LM_OK;
}

static void dev_release(fe_ctx *c, uint32_t d) {
    fe_dev *dev = &c->devs[d];
    if (dev->refs && --dev->refs) return;
    if (!(dev->borrowed & FE_VIEW_TILE)) fe_free(dev->tile);
    fe_free(dev->rm);
    if (!(dev->borrowed & FE_VIEW_NHWC)) fe_free(dev->nhwc);
    fe_free(dev->rows);
    dev->tile = dev->rm = dev->nhwc = dev->rows = (lmnn_tensor){0};
    dev->borrowed = 0;
    uint32_t pre = dev->pre;
    dev->pre = FE_NONE;
    if (pre != FE_NONE) dev_release(c, pre);
}

/* Binds value `v` to device entry `d`. */
static void slot_bind(fe_ctx *c, uint32_t v, uint32_t d) {
    c->slots[v].dev = d;
    c->devs[d].refs++;
}

/* Binds value vi to entry d, releasing the one it had; a value nothing
 * will read lets d go at once. */
static void bind_value(fe_ctx *c, uint32_t vi, uint32_t d) {
    if (c->slots[vi].dev != FE_NONE) dev_release(c, c->slots[vi].dev);
    slot_bind(c, vi, d);
    if (!c->slots[vi].remaining && !c->slots[vi].pinned) {
        dev_release(c, d);
        c->slots[vi].dev = FE_NONE;
    }
}

void fe_value_used(fe_ctx *c, uint32_t v) {
    fe_slot *s = &c->slots[v];
    if (s->remaining && --s->remaining == 0 && !s->pinned && s->dev != FE_NONE) {
        dev_release(c, s->dev);
        s->dev = FE_NONE;
    }
}

void fe_values_release_all(fe_ctx *c) {
    fe_cache_release(c);
    for (uint32_t i = 0; i < c->dev_count; i++) {
        /* A view's borrowed tensor is its source entry's to free. */
        if (!(c->devs[i].borrowed & FE_VIEW_TILE)) fe_free(c->devs[i].tile);
        fe_free(c->devs[i].rm);
        if (!(c->devs[i].borrowed & FE_VIEW_NHWC)) fe_free(c->devs[i].nhwc);
        fe_free(c->devs[i].rows);
        c->devs[i] = (fe_dev){.pre = FE_NONE, .owner = FE_NONE};
    }
    for (uint32_t v = 0; v < c->g->value_count; v++)
        c->slots[v].dev = FE_NONE;
}

static bool float_dtype(lmnn_dtype d) {
    return d == LMNN_FLOAT32 || d == LMNN_BFLOAT16 || d == LMNN_BFLOAT8_B;
}

/* bfloat16's largest finite value (0x7F7F). */
#define BF16_MAX 3.38953139e38f

/* A model's constant beyond bfloat16's range (float32's lowest, the usual
 * additive attention mask) would round to an infinity, and then 0 times it,
 * a mask's unmasked entries, is NaN: it becomes the largest finite value of
 * its sign instead, as far from zero as bfloat16 goes. */
static float saturate_bf16(float f) {
    if (f > BF16_MAX && f <= FLT_MAX) return BF16_MAX;
    if (f < -BF16_MAX && f >= -FLT_MAX) return -BF16_MAX;
    return f;
}

bool fe_dtype_saturates(lmnn_dtype dtype) {
    return dtype == LMNN_BFLOAT16 || dtype == LMNN_BFLOAT8_B;
}

float fe_saturate_scalar(lmnn_dtype dtype, float f) {
    return fe_dtype_saturates(dtype) ? saturate_bf16(f) : f;
}

const float *fe_saturated(const float *v, size_t count, float **out_copy) {
    *out_copy = NULL;
    size_t i = 0;
    while (i < count && saturate_bf16(v[i]) == v[i])
        i++;
    if (i == count) return v;
    float *copy = malloc(count * sizeof *copy);
    if (!copy) return NULL;
    for (size_t j = 0; j < count; j++)
        copy[j] = saturate_bf16(v[j]);
    *out_copy = copy;
    return copy;
}

lm_status fe_host_data(const fe_tensor *t, lmnn_dtype dtype, const char *name, void **out,
                       size_t *out_size) {
    if (t->elem == FE_STRING || !t->data)
        return err_set(LM_ERR_UNSUPPORTED, "'%s': string tensors are not supported", name);
    size_t n = (size_t)t->count, size = n * 4;
    uint32_t *buf = malloc(size ? size : 4);
    if (!buf) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; i < n; i++) {
        if (float_dtype(dtype)) {
            float f = (float)fe_tensor_get_f64(t, i);
            if (fe_dtype_saturates(dtype)) f = saturate_bf16(f);
            memcpy(&buf[i], &f, 4);
            continue;
        }
        int64_t x = fe_tensor_get_i64(t, i);
        bool fits = dtype == LMNN_UINT32 ? (x >= 0 && x <= (int64_t)UINT32_MAX)
                                         : (x >= INT32_MIN && x <= INT32_MAX);
        if (t->elem == FE_UINT64) fits = (uint64_t)x <= UINT32_MAX;
        if (!fits) {
            free(buf);
            return err_set(LM_ERR_UNSUPPORTED,
                           "'%s' holds %lld at element %zu, beyond the device's 32-bit integers",
                           name, (long long)x, i);
        }
        uint32_t w = (uint32_t)x;
        buf[i] = w;
    }
    *out = buf;
    *out_size = size;
    return LM_OK;
}

/* Whether fe_host_data's `count` words are one value, and enough of them
 * that filling them on the device beats storing them: the value, as
 * lmnn_full takes it, in *out. */
static bool uniform_value(const uint32_t *w, uint64_t count, lmnn_dtype dtype, double *out) {
    enum { FILL_MIN_ELEMENTS = 4096 };
    if (count < FILL_MIN_ELEMENTS) return false;
    for (uint64_t i = 1; i < count; i++)
        if (w[i] != w[0]) return false;
    if (float_dtype(dtype)) {
        float f;
        memcpy(&f, &w[0], sizeof f);
        *out = f;
    } else {
        *out = dtype == LMNN_UINT32 ? (double)w[0] : (double)(int32_t)w[0];
    }
    return true;
}

/* Uploads constant value `vi` (tile layout, device dtype), sharing the
 * device tensor of an equal constant uploaded before. */
static lm_status upload_const(fe_ctx *c, const fe_node *n, uint32_t vi) {
    const fe_value *v = &c->g->values[vi];
    const fe_tensor *t = v->konst;
    if (t->count == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "constant '%s' is empty (a zero dim)", v->name);
    lmnn_dtype dtype = fe_dev_dtype(c, t->elem);
    void *data;
    size_t size;
    lm_status st = fe_host_data(t, dtype, v->name, &data, &size);
    if (st) return fe_nn_fail(c, n, st);
    lmnn_shape shape = fe_shape((int32_t)t->rank, t->dims);
    uint64_t h = hash64(&shape, sizeof shape, hash64(data, size, (uint64_t)dtype));
    for (uint32_t i = 0; i < c->const_count; i++) {
        if (c->consts[i].hash == h && c->consts[i].dev != FE_NONE &&
            c->devs[c->consts[i].dev].tile.id) {
            free(data);
            slot_bind(c, vi, c->consts[i].dev);
            return LM_OK;
        }
    }
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dtype;
    o.layout = LMNN_TILE;
    lmnn_tensor tt;
    double fill;
    bool uniform = uniform_value(data, t->count, dtype, &fill);
    if (uniform)
        st = lmnn_full(c->device, &shape, fill, &o, &tt);
    else
        st = lmnn_from_host(c->device, &shape, data, size, &o, &tt);
    free(data);
    if (st) return fe_nn_fail(c, n, st);
    uint32_t d;
    if ((st = dev_new(c, &d))) {
        fe_free(tt);
        return st;
    }
    c->devs[d].tile = tt;
    if (!uniform) c->weight_bytes += size;
    slot_bind(c, vi, d);
    /* The cache holds its own reference, so an equal constant read later
     * finds the tensor even after this value's last use. */
    c->devs[d].refs++;
    if (c->const_count == c->const_cap) {
        uint32_t cap = c->const_cap ? c->const_cap * 2 : 32;
        fe_const_entry *e = realloc(c->consts, cap * sizeof *e);
        if (!e) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        c->consts = e;
        c->const_cap = cap;
    }
    c->consts[c->const_count++] = (fe_const_entry){h, d};
    return LM_OK;
}

/* Input i's device entry (a constant uploaded, a permutation not yet made
 * made now). */
static lm_status entry_of(fe_ctx *c, const fe_node *n, uint32_t i, fe_dev **out) {
    if (!fe_has_in(n, i)) return fe_fail(c, n, LM_ERR_INTERNAL, "input %u is missing", i);
    uint32_t vi = n->inputs[i];
    if (c->slots[vi].dev == FE_NONE) {
        if (!c->g->values[vi].konst)
            return fe_fail(c, n, LM_ERR_INTERNAL, "input %u ('%s') is not on the device", i,
                           c->g->values[vi].name);
        lm_status st = upload_const(c, n, vi);
        if (st) return st;
    }
    fe_dev *d = &c->devs[c->slots[vi].dev];
    if (!d->tile.id && !d->rm.id && !d->nhwc.id && d->pre != FE_NONE) {
        /* A permutation not yet made: made now, for readers of any form. */
        uint32_t rank = (uint32_t)c->g->values[vi].type.rank;
        lm_status st = lmnn_permute(c->devs[d->pre].tile, d->perm, rank, NULL, &d->tile);
        if (st) return fe_nn_fail(c, n, st);
    }
    *out = d;
    return LM_OK;
}

/* entry_of, with a value held as rows given its own shape too. */
static lm_status in_dev_entry(fe_ctx *c, const fe_node *n, uint32_t i, fe_dev **out) {
    lm_status st = entry_of(c, n, i, out);
    fe_dev *d = *out;
    if (!st && !d->tile.id && !d->rm.id && !d->nhwc.id && d->rows.id) {
        const fe_type *t = &c->g->values[n->inputs[i]].type;
        lmnn_shape s = fe_shape(t->rank, t->dims);
        if ((st = lmnn_reshape(d->rows, &s, NULL, &d->tile))) return fe_nn_fail(c, n, st);
    }
    return st;
}

bool fe_image_rank(const fe_type *t) {
    return t->rank >= 3 && t->rank <= 5;
}

int64_t fe_image_pixels(const fe_type *t) {
    int64_t p = 1;
    for (int32_t d = 2; d < t->rank; d++)
        p *= t->dims[d];
    return p;
}

lm_status fe_image_nchw(fe_ctx *c, const fe_node *n, lmnn_tensor image, int32_t rank,
                        const int64_t *dims, const lmnn_shape *to, lmnn_tensor *out) {
    /* [N * P, C] rows as [N, P, C], transposed tile by tile, reshaped. */
    fe_type t = {.rank = rank};
    memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    uint32_t N = (uint32_t)dims[0], C = (uint32_t)dims[1], P = (uint32_t)fe_image_pixels(&t);
    lmnn_shape rows = LMNN_SHAPE(N, P, C);
    lmnn_tensor a = {0}, b = {0};
    lm_status st = lmnn_reshape(image, &rows, NULL, &a);
    if (!st) st = lmnn_transpose(a, -1, -2, NULL, &b);
    if (!st) st = lmnn_reshape(b, to, NULL, out);
    fe_free(a);
    fe_free(b);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

/* Whether shapes a and b are the same. */
static bool same_shape(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

lm_status fe_image_tiles(fe_ctx *c, const fe_node *n, lmnn_tensor image, const lmnn_shape *to,
                         lmnn_tensor *out, bool *out_owned) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(image, &info);
    if (st) return fe_nn_fail(c, n, st);
    *out_owned = false;
    if (info.layout == LMNN_TILE && same_shape(&info.shape, to)) {
        /* Already so: a reshape would copy it. */
        *out = image;
        return LM_OK;
    }
    if (info.layout == LMNN_TILE) {
        st = lmnn_reshape(image, to, NULL, out);
    } else {
        /* A page per image row: as rows of pixels first, then tiles.
         * Images planned for tile readers come as tiles
         * (fe_plan.nhwc_tiles); this keeps any other right. */
        lmnn_tensor r;
        if (!(st = lmnn_reshape(image, to, NULL, &r))) {
            st = lmnn_to_layout(r, LMNN_TILE, out);
            fe_free(r);
        }
    }
    if (st) return fe_nn_fail(c, n, st);
    *out_owned = true;
    return LM_OK;
}

lm_status fe_reshape_owned(fe_ctx *c, const fe_node *n, lmnn_tensor t, const lmnn_shape *to,
                           lmnn_tensor *out) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(t, &info);
    if (!st && same_shape(&info.shape, to)) {
        *out = t;
        return LM_OK;
    }
    if (!st) st = lmnn_reshape(t, to, NULL, out);
    fe_free(t);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

/* The NCHW tile form of input i, held only as a flat NHWC image. */
static lm_status nchw_of_image(fe_ctx *c, const fe_node *n, uint32_t i, fe_dev *d) {
    const fe_type *t = fe_in_type(c, n, i);
    if (!d->nhwc.id || !fe_image_rank(t))
        return fe_fail(c, n, LM_ERR_INTERNAL, "input %u has no device form", i);
    lmnn_shape s = fe_shape(t->rank, t->dims);
    return fe_image_nchw(c, n, d->nhwc, t->rank, t->dims, &s, &d->tile);
}

/* fe_in_image; with out_cast, fe_in_image_cast. */
static lm_status in_image(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out, bool *out_flat,
                          lmnn_dtype *out_cast) {
    fe_dev *d = NULL;
    lm_status st = in_dev_entry(c, n, i, &d);
    if (st) return st;
    if (out_cast) *out_cast = 0;
    *out_flat = d->nhwc.id != 0;
    if (*out_flat) {
        *out = d->nhwc;
        return LM_OK;
    }
    /* A value held row-major only (a graph input) goes as it is: the
     * convolution and pooling readers take row-major images, so tilizing
     * it would be undone. So does a float32 one for a reader that rounds
     * it to bfloat16 as it tilizes (the typecast would take three
     * launches: tilize, cast, untilize). A 1-D signal only to a
     * convolution (fe_in_image_cast's reader), which views it as [N, C, 1,
     * L]; other readers of rank 3 take tiles. */
    const fe_type *t = fe_in_type(c, n, i);
    if (d->rm.id && !d->tile.id && (t->rank >= 4 || out_cast) && fe_image_rank(t) &&
        fe_elem_is_float(t->elem)) {
        lmnn_tensor_info info;
        lmnn_dtype want = fe_dev_dtype(c, t->elem);
        if (!lmnn_tensor_get_info(d->rm, &info) &&
            (info.dtype == want ||
             (out_cast && info.dtype == LMNN_FLOAT32 && want == LMNN_BFLOAT16))) {
            if (out_cast && info.dtype != want) *out_cast = want;
            *out = d->rm;
            return LM_OK;
        }
    }
    return fe_in_dev(c, n, i, out);
}

lm_status fe_in_image(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out, bool *out_flat) {
    return in_image(c, n, i, out, out_flat, NULL);
}

lm_status fe_in_image_cast(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                           bool *out_flat, lmnn_dtype *out_cast) {
    return in_image(c, n, i, out, out_flat, out_cast);
}

lm_status fe_in_dev(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out) {
    fe_dev *d = NULL;
    lm_status st = in_dev_entry(c, n, i, &d);
    if (st) return st;
    if (!d->tile.id && !d->rm.id) {
        if ((st = nchw_of_image(c, n, i, d))) return st;
    } else if (!d->tile.id) {
        lmnn_tensor t;
        if ((st = lmnn_to_layout(d->rm, LMNN_TILE, &t))) return fe_nn_fail(c, n, st);
        lmnn_dtype want = fe_dev_dtype(c, fe_in_type(c, n, i)->elem);
        lmnn_tensor_info info;
        if (!(st = lmnn_tensor_get_info(t, &info)) && info.dtype != want) {
            lmnn_tensor u;
            st = lmnn_typecast(t, want, &u);
            fe_free(t);
            t = u;
        }
        if (st) return fe_nn_fail(c, n, st);
        d->tile = t;
    }
    *out = d->tile;
    return LM_OK;
}

lmnn_dtype fe_boundary_dtype(fe_elem e) {
    if (e == FE_BFLOAT16) return LMNN_BFLOAT16;
    if (fe_elem_is_float(e)) return LMNN_FLOAT32;
    if (e == FE_UINT32 || e == FE_UINT64) return LMNN_UINT32;
    return LMNN_INT32;
}

/* How many of the graph outputs are value vi. */
static uint32_t output_listings(const fe_ctx *c, uint32_t vi) {
    uint32_t k = 0;
    for (uint32_t j = 0; j < c->g->output_count; j++)
        k += c->g->outputs[j] == vi;
    return k;
}

/* Whether entry d belongs to value vi alone: made by vi's node for it (not
 * an input's or a constant's, which others share), no other value bound
 * to it, and vi one graph output only. */
static bool held_by_only(const fe_ctx *c, uint32_t vi, uint32_t d) {
    if (c->devs[d].owner != vi || output_listings(c, vi) != 1) return false;
    for (uint32_t u = 0; u < c->g->value_count; u++)
        if (u != vi && c->slots[u].dev == d) return false;
    return true;
}

lm_status fe_in_dev_rm_own(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype dtype,
                           lmnn_tensor *out) {
    fe_dev *d = NULL;
    lm_status st = in_dev_entry(c, n, i, &d);
    if (st) return st;
    if (!d->rm.id && !d->tile.id && (st = nchw_of_image(c, n, i, d))) return st;
    lmnn_tensor_info info;
    if (d->rm.id && !(st = lmnn_tensor_get_info(d->rm, &info)) && info.dtype == dtype) {
        /* A node's result only this value holds is handed over: the
         * value's last use. Not a view, nor a tensor a view still reads:
         * the buffer is not this value's alone (an input's, named so). */
        if (!info.view && !info.shared && held_by_only(c, n->inputs[i], (uint32_t)(d - c->devs))) {
            *out = d->rm;
            d->rm = (lmnn_tensor){0};
            return LM_OK;
        }
        st = lmnn_clone(d->rm, NULL, out);
        return st ? fe_nn_fail(c, n, st) : LM_OK;
    }
    /* Untilized straight into the new tensor: one launch, not an untilize
     * and a copy. */
    lmnn_tensor tile, cast = {0};
    if (!st) st = fe_in_dev(c, n, i, &tile);
    if (st) return st;
    if ((st = lmnn_tensor_get_info(tile, &info))) return fe_nn_fail(c, n, st);
    /* Between float dtypes the untilize converts too (a bfloat16 model's
     * float32 output: one launch). */
    bool floats = float_dtype(info.dtype) && float_dtype(dtype);
    if (info.dtype != dtype && !floats && (st = lmnn_typecast(tile, dtype, &cast)))
        return fe_nn_fail(c, n, st);
    st = cast.id ? lmnn_to_layout(cast, LMNN_ROW_MAJOR, out)
                 : lmnn_to_layout_as(tile, LMNN_ROW_MAJOR, dtype, out);
    fe_free(cast);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

lm_status fe_in_dev_rm(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype dtype, lmnn_tensor *out,
                       bool *out_owned) {
    fe_dev *d = NULL;
    lm_status st = in_dev_entry(c, n, i, &d);
    if (st) return st;
    lmnn_tensor_info info;
    if (d->rm.id && !lmnn_tensor_get_info(d->rm, &info) && info.dtype == dtype) {
        *out = d->rm;
        *out_owned = false;
        return LM_OK;
    }
    *out_owned = true;
    return fe_in_dev_rm_own(c, n, i, dtype, out);
}

lm_status fe_in_dev_float(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                          bool *out_owned) {
    lmnn_tensor t;
    lm_status st = fe_in_dev(c, n, i, &t);
    if (st) return st;
    lmnn_tensor_info info;
    if ((st = lmnn_tensor_get_info(t, &info))) return fe_nn_fail(c, n, st);
    if (info.dtype == LMNN_FLOAT32 || info.dtype == LMNN_BFLOAT16) {
        *out = t;
        *out_owned = false;
        return LM_OK;
    }
    /* Integers compute in float32 whatever the mode: exact below 2^24. */
    if ((st = lmnn_typecast(t, LMNN_FLOAT32, out))) return fe_nn_fail(c, n, st);
    *out_owned = true;
    return LM_OK;
}

lm_status fe_in_dev_float_rows(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                               bool *out_owned, lmnn_dtype *out_cast) {
    fe_dev *d = NULL;
    lm_status st = in_dev_entry(c, n, i, &d);
    if (st) return st;
    *out_cast = 0;
    const fe_type *t = fe_in_type(c, n, i);
    lmnn_tensor_info info;
    lmnn_dtype want = fe_dev_dtype(c, t->elem);
    if (d->rm.id && !d->tile.id && fe_elem_is_float(t->elem) &&
        !lmnn_tensor_get_info(d->rm, &info) &&
        (info.dtype == want || (info.dtype == LMNN_FLOAT32 && want == LMNN_BFLOAT16))) {
        if (info.dtype != want) *out_cast = want;
        *out = d->rm;
        *out_owned = false;
        return LM_OK;
    }
    return fe_in_dev_float(c, n, i, out, out_owned);
}

/* The image frame of element-wise node `n` on images (fe_in_ew): *out_b
 * batches of *out_p pixels of C channels. */
static void ew_frame(fe_ctx *c, const fe_node *n, uint32_t *out_b, uint32_t *out_p,
                     uint32_t *out_c) {
    const fe_type *ot = &c->g->values[n->outputs[0]].type;
    const int64_t *o = ot->dims, op = fe_image_pixels(ot);
    bool gated = false;
    for (uint32_t i = 0; i < n->input_count; i++)
        gated |= !fe_in_const(c, n, i) && fe_image_pixels(fe_in_type(c, n, i)) != op;
    bool split = gated && o[0] > 1;
    *out_b = split ? (uint32_t)o[0] : 1;
    *out_p = (uint32_t)(op * (split ? 1 : o[0]));
    *out_c = (uint32_t)o[1];
}

lm_status fe_in_ew(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out, bool *out_owned) {
    if (!c->plans[n - c->g->nodes].nhwc_out) return fe_in_dev_float(c, n, i, out, out_owned);
    uint32_t B, P, C;
    ew_frame(c, n, &B, &P, &C);
    const fe_tensor *k = fe_in_const(c, n, i);
    if (k) {
        /* One value per channel (or one in all): the same elements as a row
         * of them, uploaded once as such. */
        fe_tensor row = *k;
        row.rank = 1;
        row.dims[0] = (int64_t)k->count;
        *out_owned = false;
        return fe_aux(c, n, 0x40 + i, &row, LMNN_TILE, out);
    }
    bool gate =
        fe_image_pixels(fe_in_type(c, n, i)) != fe_image_pixels(&c->g->values[n->outputs[0]].type);
    lmnn_shape s = LMNN_SHAPE(1, B, gate ? 1 : P, C);
    return fe_in_image_tiles(c, n, i, &s, out, out_owned);
}

lm_status fe_in_image_tiles(fe_ctx *c, const fe_node *n, uint32_t i, const lmnn_shape *to,
                            lmnn_tensor *out, bool *out_owned) {
    lmnn_tensor img;
    bool flat;
    lm_status st = fe_in_image(c, n, i, &img, &flat);
    if (st) return st;
    if (!flat) {
        const fe_type *t = fe_in_type(c, n, i);
        if (!fe_image_rank(t) || fe_image_pixels(t) != 1)
            return fe_fail(c, n, LM_ERR_INTERNAL, "input %u is not an image", i);
        /* One pixel per channel: the NCHW order is the image's. */
        if ((st = fe_in_dev(c, n, i, &img))) return st;
    }
    return fe_image_tiles(c, n, img, to, out, out_owned);
}

lm_status fe_out_ew(fe_ctx *c, const fe_node *n, lmnn_tensor t) {
    if (!c->plans[n - c->g->nodes].nhwc_out) return fe_out_from_float(c, n, 0, t);
    uint32_t B, P, C;
    ew_frame(c, n, &B, &P, &C);
    lmnn_shape s = LMNN_SHAPE(1, 1, B * P, C);
    lmnn_tensor flat;
    lm_status st = fe_reshape_owned(c, n, t, &s, &flat);
    return st ? st : fe_out_from_float(c, n, 0, flat);
}

lm_status fe_in_float_as(fe_ctx *c, const fe_node *n, uint32_t i, int32_t rank, const int64_t *dims,
                         lmnn_tensor *out) {
    lmnn_tensor f;
    bool owned = false;
    lmnn_shape s = fe_shape(rank, dims);
    lmnn_tensor rows = fe_in_rows(c, n, i, &s);
    lmnn_tensor_info info;
    if (rows.id && !lmnn_tensor_get_info(rows, &info) &&
        (info.dtype == LMNN_FLOAT32 || info.dtype == LMNN_BFLOAT16)) {
        lm_status st = lmnn_reshape(rows, &s, NULL, out); /* a view: the caller's to free */
        return st ? fe_nn_fail(c, n, st) : LM_OK;
    }
    lm_status st = fe_in_dev_float(c, n, i, &f, &owned);
    if (st) return st;
    st = lmnn_reshape(f, &s, NULL, out);
    if (owned) fe_free(f);
    return st ? fe_nn_fail(c, n, st) : LM_OK;
}

/* *t (consumed) in value vi's device dtype; on failure *t is freed. */
static lm_status to_value_dtype(fe_ctx *c, uint32_t vi, lmnn_tensor *t) {
    lmnn_dtype want = fe_dev_dtype(c, c->g->values[vi].type.elem);
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(*t, &info);
    if (!st && info.dtype != want) {
        lmnn_tensor u;
        st = lmnn_typecast(*t, want, &u);
        fe_free(*t);
        *t = st ? (lmnn_tensor){0} : u;
    }
    return st;
}

/* Output i's value: the fused chain's last for output 0 of a fused node. */
static uint32_t out_index(fe_ctx *c, const fe_node *n, uint32_t i) {
    uint32_t fused = c->plans[n - c->g->nodes].fusion.output;
    if (i == 0 && fused != FE_NONE) return fused;
    return i < n->output_count ? n->outputs[i] : FE_NONE;
}

bool fe_out_is_boundary(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype *out_dtype) {
    uint32_t vi = out_index(c, n, i);
    if (vi == FE_NONE) return false;
    const fe_value *v = &c->g->values[vi];
    if (!v->graph_output || v->use_count != 1 || output_listings(c, vi) != 1 ||
        !fe_elem_is_float(v->type.elem) || (i == 0 && c->plans[n - c->g->nodes].nhwc_out))
        return false;
    *out_dtype = fe_boundary_dtype(v->type.elem);
    return true;
}

lm_status fe_out_dev(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t) {
    uint32_t vi = out_index(c, n, i);
    if (vi == FE_NONE) {
        fe_free(t);
        return LM_OK;
    }
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(t, &info);
    uint32_t d = FE_NONE;
    if (!st) st = dev_new(c, &d);
    if (st) {
        fe_free(t);
        return fe_nn_fail(c, n, st);
    }
    c->devs[d].owner = vi;
    if (i == 0 && c->plans[n - c->g->nodes].nhwc_out)
        c->devs[d].nhwc = t; /* a flat NHWC image, in either layout */
    else if (info.layout == LMNN_TILE)
        c->devs[d].tile = t;
    else
        c->devs[d].rm = t;
    bind_value(c, vi, d);
    return LM_OK;
}

lm_status fe_out_alias(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j) {
    uint32_t vi = out_index(c, n, i);
    if (vi == FE_NONE) return LM_OK;
    fe_dev *d = NULL;
    lm_status st = entry_of(c, n, j, &d); /* any form: the output is the same */
    if (st) return st;
    bind_value(c, vi, (uint32_t)(d - c->devs));
    return LM_OK;
}

/* A new entry for output i's value, *t made the value's dtype, in *out_d;
 * FE_NONE there, *t freed, when nothing reads the output or on failure. */
static lm_status out_entry(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *t,
                           uint32_t *out_d) {
    uint32_t vi = out_index(c, n, i);
    lm_status st = vi == FE_NONE ? LM_OK : to_value_dtype(c, vi, t);
    if (!st && vi != FE_NONE) st = dev_new(c, out_d);
    if (st || vi == FE_NONE) {
        fe_free(*t);
        *out_d = FE_NONE;
        return st ? fe_nn_fail(c, n, st) : LM_OK;
    }
    return LM_OK;
}

lm_status fe_out_rows(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t) {
    uint32_t d;
    lm_status st = out_entry(c, n, i, &t, &d);
    if (st || d == FE_NONE) return st;
    c->devs[d].owner = out_index(c, n, i);
    c->devs[d].rows = t;
    bind_value(c, c->devs[d].owner, d);
    return LM_OK;
}

lmnn_tensor fe_in_rows(fe_ctx *c, const fe_node *n, uint32_t i, const lmnn_shape *shape) {
    lmnn_tensor none = {0};
    if (!fe_has_in(n, i) || c->slots[n->inputs[i]].dev == FE_NONE) return none;
    lmnn_tensor t = c->devs[c->slots[n->inputs[i]].dev].rows;
    lmnn_tensor_info info;
    if (!t.id || lmnn_tensor_get_info(t, &info) || (shape && !same_shape(&info.shape, shape)))
        return none;
    return t;
}

lm_status fe_out_from_float(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t) {
    uint32_t vi = out_index(c, n, i);
    if (vi == FE_NONE) {
        fe_free(t);
        return LM_OK;
    }
    lm_status st = to_value_dtype(c, vi, &t);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, i, t);
}

bool fe_perm_keeps_last(const int32_t *perm, uint32_t rank) {
    return rank >= 2 && perm[rank - 1] == (int32_t)rank - 1;
}

bool fe_perm_swaps_last(const int32_t *perm, uint32_t rank) {
    if (rank < 2 || perm[rank - 1] != (int32_t)rank - 2 || perm[rank - 2] != (int32_t)rank - 1)
        return false;
    for (uint32_t d = 0; d + 2 < rank; d++)
        if (perm[d] != (int32_t)d) return false;
    return true;
}

bool fe_in_permuted(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *pre, int32_t *perm) {
    if (!fe_has_in(n, i) || c->slots[n->inputs[i]].dev == FE_NONE) return false;
    const fe_dev *d = &c->devs[c->slots[n->inputs[i]].dev];
    if (d->pre == FE_NONE || d->borrowed) return false;
    *pre = c->devs[d->pre].tile;
    memcpy(perm, d->perm, sizeof d->perm);
    return true;
}

/* Binds output i's value to a new entry holding entry `pre` (one reference
 * taken) permuted by `perm`. */
static lm_status out_pending(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t pre,
                             const int32_t *perm) {
    uint32_t vi = out_index(c, n, i), d;
    lm_status st = dev_new(c, &d);
    if (st) return fe_nn_fail(c, n, st);
    c->devs[pre].refs++;
    c->devs[d].pre = pre;
    memcpy(c->devs[d].perm, perm, sizeof c->devs[d].perm);
    bind_value(c, vi, d);
    return LM_OK;
}

lm_status fe_out_permuted(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor pre,
                          const int32_t *perm) {
    uint32_t d;
    lm_status st = out_entry(c, n, i, &pre, &d);
    if (st || d == FE_NONE) return st;
    c->devs[d].tile = pre;
    st = out_pending(c, n, i, d, perm);
    if (st) fe_free(pre);
    return st;
}

lm_status fe_out_permute_of(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j,
                            const int32_t *perm) {
    if (out_index(c, n, i) == FE_NONE) return LM_OK;
    uint32_t rank = (uint32_t)fe_in_type(c, n, j)->rank, entry;
    int32_t q[FE_MAX_RANK];
    lmnn_tensor t;
    lm_status st = LM_OK;
    if (fe_has_in(n, j) && c->slots[n->inputs[j]].dev != FE_NONE &&
        c->devs[c->slots[n->inputs[j]].dev].pre != FE_NONE &&
        !c->devs[c->slots[n->inputs[j]].dev].borrowed) {
        /* Itself a permutation not yet made: the two compose. */
        const fe_dev *d = &c->devs[c->slots[n->inputs[j]].dev];
        for (uint32_t k = 0; k < rank; k++)
            q[k] = d->perm[perm[k]];
        entry = d->pre;
    } else {
        memcpy(q, perm, rank * sizeof *q);
        if ((st = fe_in_dev(c, n, j, &t))) return st; /* the tile form `pre` names */
        entry = c->slots[n->inputs[j]].dev;
    }
    if (fe_perm_keeps_last(q, rank) || fe_perm_swaps_last(q, rank))
        return out_pending(c, n, i, entry, q);
    if ((st = lmnn_permute(c->devs[entry].tile, q, rank, NULL, &t))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, i, t);
}

bool fe_out_view(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j, uint32_t as,
                 const lmnn_shape *shape) {
    uint32_t vi = out_index(c, n, i), d;
    if (vi == FE_NONE || !fe_has_in(n, j) || c->slots[n->inputs[j]].dev == FE_NONE) return false;
    uint32_t src = c->slots[n->inputs[j]].dev;
    lmnn_tensor t = as == FE_VIEW_TILE ? c->devs[src].nhwc : c->devs[src].tile;
    lmnn_tensor_info info;
    if (!t.id || lmnn_tensor_get_info(t, &info) || info.layout != LMNN_TILE ||
        !same_shape(&info.shape, shape) ||
        info.dtype != fe_dev_dtype(c, c->g->values[vi].type.elem) || dev_new(c, &d)) {
        err_clear();
        return false;
    }
    c->devs[src].refs++;
    c->devs[d].pre = src;
    c->devs[d].borrowed = as;
    if (as == FE_VIEW_TILE)
        c->devs[d].tile = t;
    else
        c->devs[d].nhwc = t;
    bind_value(c, vi, d);
    return true;
}

lm_status fe_bind_rm(fe_ctx *c, uint32_t v, lmnn_tensor t) {
    uint32_t d;
    lm_status st = dev_new(c, &d);
    if (st) {
        fe_free(t);
        return st;
    }
    c->devs[d].rm = t;
    slot_bind(c, v, d);
    return LM_OK;
}

void fe_release_non_constants(fe_ctx *c) {
    for (uint32_t v = 0; v < c->g->value_count; v++) {
        fe_slot *s = &c->slots[v];
        if (s->dev == FE_NONE) continue;
        dev_release(c, s->dev);
        s->dev = FE_NONE;
    }
    /* What is left is held by the constant cache alone. */
}

/* fe_aux and fe_aux_f32: `kind` keeps their keys apart. */
static lm_status aux_upload(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *t,
                            lmnn_layout layout, lmnn_dtype dtype, uint64_t kind, lmnn_tensor *out) {
    uint64_t key =
        kind << 56 | (uint64_t)(n - c->g->nodes) << 16 | slot << 1 | (layout == LMNN_ROW_MAJOR);
    if (fe_cache_get(c, key, out)) return LM_OK;
    void *data;
    size_t size;
    lm_status st = fe_host_data(t, dtype, t->name ? t->name : "constant", &data, &size);
    if (st) return fe_nn_fail(c, n, st);
    lmnn_shape shape = fe_shape((int32_t)t->rank, t->dims);
    st = fe_cache_upload(c, n, key, &shape, data, size, dtype, layout, out);
    free(data);
    return st;
}

lm_status fe_aux(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *t, lmnn_layout layout,
                 lmnn_tensor *out) {
    /* Kind 0xA0 in the top byte keeps these apart from the ops' own keys. */
    return aux_upload(c, n, slot, t, layout, fe_dev_dtype(c, t->elem), 0xA0, out);
}

lm_status fe_aux_f32(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *t,
                     lmnn_tensor *out) {
    return aux_upload(c, n, slot, t, LMNN_TILE, LMNN_FLOAT32, 0xA1, out);
}
