/* Data movement ops that make a larger tensor from a smaller one: pad,
 * repeat and expand (maps in nn_data.h). */
#include <stdio.h>
#include <string.h>

#include "nn/nn_data.h"

/* ---- pad ---- */

void lmnn_pad_options_init(lmnn_pad_options *opts) {
    if (!opts) return;
    *opts = (lmnn_pad_options){.mode = LMNN_PAD_CONSTANT};
}

typedef struct pad_ctx {
    lmnn_pad_mode mode;
    double value;
    uint32_t before[LMNN_MAX_DIMS], after[LMNN_MAX_DIMS];
} pad_ctx;

static lm_status pad_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t count,
                        nn_tensor *out) {
    (void)count;
    const pad_ctx *c = ctx;
    nn_tensor *in = ins[0];
    dm_spec spec;
    dm_spec_init(&spec, in, out, false);
    for (uint32_t d = 0; d < spec.out_rank; d++) {
        uint32_t n = spec.in_dims[d], b = c->before[d];
        dm_map *m = &spec.map[d];
        m->src = (int32_t)d;
        m->n = n;
        m->a = b;
        if (!b && !c->after[d]) {
            *m = dm_identity((int32_t)d);
        } else if (c->mode == LMNN_PAD_CONSTANT) {
            m->kind = DM_PAD;
        } else if (c->mode == LMNN_PAD_REFLECT) {
            m->kind = DM_REFLECT;
        } else if (c->mode == LMNN_PAD_REPLICATE) {
            m->kind = DM_REPLICATE;
        } else {
            m->kind = DM_MOD;
            m->a = (n - b % n) % n;
        }
    }
    spec.fill_bits = c->mode == LMNN_PAD_CONSTANT ? nn_value_bits(out->dtype, c->value) : 0;
    return dm_run(op, &spec, in, out, NULL, NULL);
}

static const char *pad_mode_name(lmnn_pad_mode m) {
    return m == LMNN_PAD_REFLECT ? "reflect" : m == LMNN_PAD_REPLICATE ? "replicate" : "circular";
}

lm_status lmnn_pad(lmnn_tensor a, const uint32_t *pads, uint32_t count,
                   const lmnn_pad_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_pad";
    lmnn_pad_options defaults;
    if (!opts) {
        lmnn_pad_options_init(&defaults);
        opts = &defaults;
    }
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    uint32_t r = t->shape.rank;
    if (count != r)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "count: expected %u (before, after) pairs (a's rank), given %u", r, count);
    if (r && !pads) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "pads is NULL");
    if (opts->mode < LMNN_PAD_CONSTANT || opts->mode > LMNN_PAD_CIRCULAR)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts.mode: unknown pad mode %d",
                       (int)opts->mode);
    pad_ctx c = {opts->mode, opts->value, {0}, {0}};
    lmnn_shape s = t->shape;
    for (uint32_t d = 0; d < r; d++) {
        uint32_t n = t->shape.dims[d], b = pads[2 * d], e = pads[2 * d + 1];
        uint64_t size = (uint64_t)n + b + e;
        if (size > UINT32_MAX)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "pads: dim %u would be %llu long", d,
                           (unsigned long long)size);
        bool wide = opts->mode == LMNN_PAD_REFLECT    ? b >= n || e >= n
                    : opts->mode == LMNN_PAD_CIRCULAR ? b > n || e > n
                                                      : false;
        if (wide)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "pads[%u], pads[%u]: %s padding of (%u, %u) is wider than dim %u of "
                           "size %u allows (at most %u)",
                           2 * d, 2 * d + 1, pad_mode_name(opts->mode), b, e, d, n,
                           opts->mode == LMNN_PAD_REFLECT ? n - 1 : n);
        c.before[d] = b;
        c.after[d] = e;
        s.dims[d] = (uint32_t)size;
    }
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, &opts->output, t, &mem))) return st;
    dm_out od = {s, t->dtype, t->layout, mem};
    return dm_run_rm(op, t, &od, pad_rm, &c, out);
}

/* ---- repeat and expand: output dim i reads input dim i - lead, broadcast
 * (b = 0) where the input dim is 1, wrapped (MOD) where it repeats ---- */

typedef struct grow_ctx {
    uint32_t lead;               /* output dims without an input dim */
    uint32_t rep[LMNN_MAX_DIMS]; /* per output dim: 1 = as is */
} grow_ctx;

static void grow_maps(dm_spec *spec, const grow_ctx *c, uint32_t in_rank) {
    for (uint32_t d = 0; d < spec->out_rank; d++) {
        dm_map *m = &spec->map[d];
        if (d < c->lead) {
            *m = (dm_map){DM_AFFINE, 0, 0, 0, -1};
            continue;
        }
        int32_t src = (int32_t)(d - c->lead);
        uint32_t n = spec->in_dims[src];
        uint32_t rep = d < c->lead + in_rank ? c->rep[d] : 1;
        if (rep == 1)
            *m = dm_identity(src);
        else if (n == 1)
            *m = (dm_map){DM_AFFINE, 0, 0, 0, src};
        else
            *m = (dm_map){DM_MOD, 0, 1, n, src};
    }
}

static lm_status grow_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t count,
                         nn_tensor *out) {
    (void)count;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    /* a scalar is [1] */
    grow_maps(&spec, ctx, spec.in_rank);
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* Whole tiles serve it when the last two dims grow only by whole tiles. */
static lm_status grow(const char *op, nn_tensor *t, const lmnn_shape *s, const grow_ctx *c,
                      const lmnn_memory_config *mem, lmnn_tensor *out) {
    dm_out od = {*s, t->dtype, t->layout, *mem};
    uint32_t r = t->shape.rank;
    bool tiles = t->layout == LMNN_TILE && r >= 2;
    for (uint32_t d = r - 2; tiles && d < r; d++)
        if (c->rep[c->lead + d] != 1 && t->shape.dims[d] % 32) tiles = false;
    if (!tiles) return dm_run_rm(op, t, &od, grow_rm, c, out);
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st = dm_make(op, t->device, &od, &oh, &o);
    if (st) return st;
    dm_spec spec;
    dm_spec_init(&spec, t, o, true);
    grow_maps(&spec, c, r); /* the tile view's last dim: identity */
    st = dm_run(op, &spec, t, o, NULL, NULL);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

lm_status lmnn_repeat(lmnn_tensor a, const uint32_t *repeats, uint32_t count,
                      const lmnn_output *output, lmnn_tensor *out) {
    const char *op = "lmnn_repeat";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    uint32_t r = t->shape.rank;
    if (count < r || count > LMNN_MAX_DIMS || (count && !repeats))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "repeats: expected %u to %u repeats (at least a's rank), given %u%s", r,
                       LMNN_MAX_DIMS, count, count && !repeats ? " and NULL" : "");
    grow_ctx c = {count - r, {0}};
    lmnn_shape s = {count, {0}};
    for (uint32_t d = 0; d < count; d++) {
        uint64_t n = d < c.lead ? 1 : t->shape.dims[d - c.lead];
        if (!repeats[d])
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "repeats[%u] is 0 (no empty dims)", d);
        if (n * repeats[d] > UINT32_MAX)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "repeats[%u]: dim %u would be %llu long", d,
                           d, (unsigned long long)(n * repeats[d]));
        c.rep[d] = repeats[d];
        s.dims[d] = (uint32_t)(n * repeats[d]);
    }
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    if (!count) s = (lmnn_shape){0, {0}};
    return grow(op, t, &s, &c, &mem, out);
}

lm_status lmnn_expand(lmnn_tensor a, const lmnn_shape *shape, const lmnn_output *output,
                      lmnn_tensor *out) {
    const char *op = "lmnn_expand";
    char s1[128], s2[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    if (!shape) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape is NULL");
    uint32_t r = t->shape.rank;
    if (shape->rank < r || shape->rank > LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: expected %u to %u dims (at least a's rank), given %u", r,
                       LMNN_MAX_DIMS, shape->rank);
    grow_ctx c = {shape->rank - r, {0}};
    for (uint32_t d = 0; d < shape->rank; d++) {
        uint32_t want = shape->dims[d], n = d < c.lead ? 1 : t->shape.dims[d - c.lead];
        if (!want) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: dim %u is 0", d);
        if (n != want && n != 1)
            return nn_fail(
                LM_ERR_INVALID_ARGUMENT, op,
                "shape: %s does not expand a's shape %s (dim %u: %u is neither %u nor 1)",
                nn_shape_str(shape, s1, sizeof s1), nn_shape_str(&t->shape, s2, sizeof s2), d, n,
                want);
        c.rep[d] = n == want ? 1 : want;
    }
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    return grow(op, t, shape, &c, &mem, out);
}
