/* Neural-network ops: MatMul, Gemm, Conv, ConvTranspose, MatMulInteger,
 * ConvInteger, QLinearMatMul and QLinearConv (8-bit operands, exact float32
 * math), MaxPool, MaxUnpool (small tensors), AveragePool,
 * GlobalAveragePool, GlobalMaxPool, BatchNormalization,
 * InstanceNormalization, LayerNormalization, RMSNormalization, LpNormalization, LRN,
 * MeanVarianceNormalization, Dropout, DepthToSpace, SpaceToDepth, Trilu,
 * Einsum (one or two operands).
 *
 * Each lowers onto the op library (lmnn_matmul.h, lmnn_conv.h, lmnn_norm.h,
 * lmnn_reduce.h, lmnn_data.h). Images stay NCHW as ONNX has them; 1-D
 * convolutions and pools run as 2-D ones with H = 1; 3-D ones as
 * lmnn_conv3d and lmnn_max_pool3d / lmnn_avg_pool3d (a pooling the library
 * does not take, as 2-D ones over the depth slices and taps, combined).
 *
 * Convolution weights: a constant weight becomes the op library's prepared
 * matrix on the host ([KH * KW * C, OC], block-diagonal over groups, or a
 * depthwise weight of more than 32 channels as [1, KH * KW, C]; the
 * kernel flipped for ConvTranspose) and is uploaded once per compile (the
 * per-compile cache below, keyed by the weight's value, so a traced compile,
 * which runs the model twice, prepares it once). A weight computed at run
 * time (a graph input) is rearranged on the device by permute and reshape,
 * never read back to the host, so a replay with new inputs computes with
 * them; that needs group = 1.
 *
 * Attributes the op library cannot honour are refused by name and value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* ---- the per-compile cache (fe_ctx.h) ---- */

bool fe_cache_get(fe_ctx *c, uint64_t key, lmnn_tensor *out) {
    for (uint32_t i = 0; i < c->cache_count; i++)
        if (c->cache[i].key == key) {
            *out = c->cache[i].t;
            return true;
        }
    return false;
}

lm_status fe_cache_put(fe_ctx *c, uint64_t key, lmnn_tensor t) {
    if (c->cache_count == c->cache_cap) {
        uint32_t cap = c->cache_cap ? c->cache_cap * 2 : 16;
        fe_cache_entry *e = realloc(c->cache, cap * sizeof *e);
        if (!e) {
            fe_free(t);
            return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        c->cache = e;
        c->cache_cap = cap;
    }
    c->cache[c->cache_count++] = (fe_cache_entry){key, t};
    return LM_OK;
}

lm_status fe_cache_upload(fe_ctx *c, const fe_node *n, uint64_t key, const lmnn_shape *shape,
                          const void *data, size_t size, lmnn_dtype dtype, lmnn_layout layout,
                          lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dtype;
    o.layout = layout;
    float *copy = NULL;
    if (fe_dtype_saturates(dtype) && !(data = fe_saturated(data, size / sizeof(float), &copy)))
        return fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
    lmnn_tensor t;
    lm_status st = lmnn_from_host(c->device, shape, data, size, &o, &t);
    free(copy);
    if (st) return fe_nn_fail(c, n, st);
    if ((st = fe_cache_put(c, key, t))) return st;
    c->weight_bytes += size;
    *out = t;
    return LM_OK;
}

void fe_cache_release(fe_ctx *c) {
    for (uint32_t i = 0; i < c->cache_count; i++)
        fe_free(c->cache[i].t);
    free(c->cache);
    c->cache = NULL;
    c->cache_count = c->cache_cap = 0;
}

/* Cache keys: the kind in the top byte (1 and 2 are fe_ops_reduce.c's). */
enum {
    KEY_CONV_W = 16,
    KEY_CONV_W_FUSED = 17,
    KEY_TRILU = 18,
    KEY_ZERO = 19,
    KEY_CONV_W_EXACT = 22,
    KEY_CONV_W_ZP = 23,
    KEY_CONV_W_PACKED = 25, /* 24 is fe_ops_misc.c's */
    KEY_ROWS_B = 26,
    KEY_CONV_B_PACKED = 27,
    KEY_BFP8_B = 28,
};

static uint64_t key_of(uint32_t kind, uint64_t a) {
    return ((uint64_t)kind << 56) | (a & ((UINT64_C(1) << 56) - 1));
}

/* A float [1, 1] zero, made once per compile (lmnn_where's other value). */
static lm_status zero_scalar(fe_ctx *c, const fe_node *n, lmnn_tensor *out) {
    if (fe_cache_get(c, key_of(KEY_ZERO, 0), out)) return LM_OK;
    float z = 0;
    lmnn_shape s = LMNN_SHAPE(1, 1);
    return fe_cache_upload(c, n, key_of(KEY_ZERO, 0), &s, &z, sizeof z, LMNN_FLOAT32, LMNN_TILE,
                           out);
}

/* ---- shared helpers ---- */

static const fe_elem float_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_UNDEFINED};
static const fe_elem numeric_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16,  FE_BFLOAT16, FE_INT32,
                                        FE_INT64, FE_UINT32, FE_UINT64,   FE_INT8,     FE_UINT8,
                                        FE_INT16, FE_UINT16, FE_UNDEFINED};

static const fe_elem numeric_bool_types[] = {FE_FLOAT, FE_DOUBLE, FE_FLOAT16, FE_BFLOAT16, FE_INT32,
                                             FE_INT64, FE_UINT32, FE_UINT64,  FE_INT8,     FE_UINT8,
                                             FE_INT16, FE_UINT16, FE_BOOL,    FE_UNDEFINED};

static const fe_elem int8_types[] = {FE_UINT8, FE_INT8, FE_UNDEFINED};

/* The largest K (products summed per output) whose integer dot products of
 * 8-bit operands (|a - zp| <= 255) stay exact in float32 math (below 2^24). */
#define EXACT_8BIT_K 258

static void take(lmnn_tensor *t, bool *owned, lmnn_tensor r) {
    if (*owned) fe_free(*t);
    *t = r;
    *owned = true;
}

static const fe_fusion *fusion_of(fe_ctx *c, const fe_node *n) {
    return &c->plans[n - c->g->nodes].fusion;
}

static lm_status same_type_out(fe_ctx *c, const fe_node *n) {
    const fe_type *t = fe_in_type(c, n, 0);
    return fe_set_out_type(c, n, 0, t->elem, t->rank, t->dims);
}

/* Hands the float result of a node that fe_fuse may have extended (bias,
 * activation, a later output) over: the fused steps run first. */
/* With `perm` (not NULL) r is the result's dims before that permutation
 * (fe_out_permuted), a bias and activation being the same either way. */
static lm_status finish_as(fe_ctx *c, const fe_node *n, lmnn_tensor r, bool act_done,
                           bool bias_done, const int32_t *perm) {
    const fe_fusion *f = fusion_of(c, n);
    lm_status st = LM_OK;
    if (f->bias && !bias_done) {
        /* The folded constant bias, with the activation in the same pass. */
        lmnn_tensor b, sum;
        if ((st = fe_aux(c, n, 1, f->bias, LMNN_TILE, &b))) {
            fe_free(r);
            return st;
        }
        lmnn_binary_options o;
        lmnn_binary_options_init(&o);
        if (!act_done) {
            o.activation = f->activation;
            o.activation_alpha = f->act_alpha;
            o.activation_beta = f->act_beta;
            act_done = true;
        }
        st = lmnn_binary(LMNN_BINARY_ADD, r, b, &o, &sum);
        fe_free(r);
        if (st) return fe_nn_fail(c, n, st);
        r = sum;
    }
    if (f->activation != LMNN_UNARY_INVALID && !act_done) {
        lmnn_unary_options o;
        lmnn_unary_options_init(&o, f->activation);
        if (!isnan(f->act_alpha)) o.alpha = f->act_alpha;
        if (!isnan(f->act_beta)) o.beta = f->act_beta;
        lmnn_tensor s;
        st = lmnn_unary(f->activation, r, &o, &s);
        fe_free(r);
        if (st) return fe_nn_fail(c, n, st);
        r = s;
    }
    /* Sent to the fused chain's last value (fe_out_dev). */
    return perm ? fe_out_permuted(c, n, 0, r, perm) : fe_out_from_float(c, n, 0, r);
}

static lm_status finish(fe_ctx *c, const fe_node *n, lmnn_tensor r, bool act_done, bool bias_done) {
    return finish_as(c, n, r, act_done, bias_done, NULL);
}

/* ---- MatMul ---- */

static lm_status matmul_shape(fe_ctx *c, const fe_node *n, const fe_type *a, const fe_type *b,
                              fe_type *out) {
    if (a->rank < 1 || b->rank < 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "MatMul operands must have rank >= 1");
    fe_type a2 = *a, b2 = *b;
    /* 1-D operands: [K] is the row [1, K] on the left, the column [K, 1] on
     * the right; that dim is dropped from the result. */
    if (a->rank == 1) {
        a2.rank = 2;
        a2.dims[0] = 1;
        a2.dims[1] = a->dims[0];
    }
    if (b->rank == 1) {
        b2.rank = 2;
        b2.dims[0] = b->dims[0];
        b2.dims[1] = 1;
    }
    int64_t k1 = a2.dims[a2.rank - 1], k2 = b2.dims[b2.rank - 2];
    if (k1 != k2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "inner dims differ: %lld and %lld", (long long)k1,
                       (long long)k2);
    fe_type ba = a2, bb = b2;
    ba.rank -= 2;
    bb.rank -= 2;
    fe_type batch;
    lm_status st = fe_broadcast(c, n, &ba, &bb, &batch);
    if (st) return st;
    fe_type o = {.elem = a->elem, .rank = batch.rank};
    for (int32_t i = 0; i < batch.rank; i++)
        o.dims[i] = batch.dims[i];
    if (a->rank != 1) o.dims[o.rank++] = a2.dims[a2.rank - 2];
    if (b->rank != 1) o.dims[o.rank++] = b2.dims[b2.rank - 1];
    *out = o;
    return LM_OK;
}

/* ---- grouped-query attention ----
 *
 * LLaMA-family models (grouped-query attention) give each key and value
 * head to G query heads by copying it before the products (HF's repeat_kv):
 * [B, KV, S, D] -> Unsqueeze -> Expand to [B, KV, G, S, D] -> Reshape to
 * [B, KV * G, S, D] (-> a Transpose of the last two dims, for the keys) ->
 * MatMul with [B, KV * G, M, K]. The product broadcasts instead: the other
 * operand viewed as [B, KV, G, M, K] times the [B, KV, 1, S, D] before the
 * Expand, the result viewed back as [B, KV * G, M, N]. The same products,
 * with no copies of the heads. */

/* The producer of value v when it is a node of op `op`, or NULL. */
static const fe_node *made_by(const fe_ctx *c, uint32_t v, const char *op) {
    uint32_t k = v == FE_NONE ? FE_NONE : c->g->values[v].producer;
    return k != FE_NONE && !strcmp(c->g->nodes[k].op_type, op) ? &c->g->nodes[k] : NULL;
}

/* MatMul node n (a: [B, H, M, K]) as the broadcast product above when its
 * b is the heads repeated: *out_done. */
static lm_status grouped_product(fe_ctx *c, const fe_node *n, bool *out_done) {
    *out_done = false;
    const fe_type *a = fe_in_type(c, n, 0), *b = fe_in_type(c, n, 1);
    if (a->rank != 4 || b->rank != 4 || !fe_elem_is_float(a->elem)) return LM_OK;
    const fe_node *t = made_by(c, n->inputs[1], "Transpose");
    const int64_t *perm = NULL;
    size_t count = 0;
    if (t && (fe_attr_ints(c, t, "perm", &perm, &count) || count != 4 || perm[0] != 0 ||
              perm[1] != 1 || perm[2] != 3 || perm[3] != 2))
        return LM_OK;
    bool keys = t != NULL;
    const fe_node *r = made_by(c, keys ? t->inputs[0] : n->inputs[1], "Reshape");
    const fe_node *e = r ? made_by(c, r->inputs[0], "Expand") : NULL;
    if (!e) return LM_OK;
    const fe_type *rep = fe_in_type(c, r, 0), *one = fe_in_type(c, e, 0);
    const fe_type *heads = &c->g->values[r->outputs[0]].type;
    if (rep->rank != 5 || one->rank != 5 || one->dims[2] != 1 || rep->dims[2] < 2 ||
        fe_in_const(c, e, 0))
        return LM_OK;
    for (int32_t d = 0; d < 5; d++)
        if (d != 2 && one->dims[d] != rep->dims[d]) return LM_OK;
    int64_t kv = rep->dims[1], g = rep->dims[2];
    if (heads->dims[0] != rep->dims[0] || heads->dims[1] != kv * g || a->dims[0] != rep->dims[0] ||
        a->dims[1] != kv * g)
        return LM_OK;
    fe_type o;
    lm_status st = matmul_shape(c, n, a, b, &o);
    if (st) return st;
    fe_build bb = {.elem = a->elem}, *bd = &bb;
    fe_x_begin(c, n, &bd->x);
    const fe_node *nd = &bd->x.node;
    fe_node *ra = NULL, *mm = NULL;
    uint32_t a5 = fe_b_node(
        bd, "Reshape", 13,
        (const uint32_t[]){
            nd->inputs[0],
            fe_b_ints(bd, (const int64_t[]){a->dims[0], kv, g, a->dims[2], a->dims[3]}, 5)},
        2, &ra);
    if (ra) ra->name = nd->name; /* each new node's profile label is the node's */
    uint32_t b5 = e->inputs[0];
    if (keys) {
        fe_node *tr = NULL;
        b5 = fe_b_node(bd, "Transpose", 13, &b5, 1, &tr);
        fe_b_ints_attr(bd, tr, "perm", true, (const int64_t[]){0, 1, 2, 4, 3}, 5);
        if (tr) tr->name = nd->name;
    }
    uint32_t p5 = fe_b_node(bd, "MatMul", 13, (const uint32_t[]){a5, b5}, 2, &mm);
    if (mm) mm->name = nd->name;
    uint32_t shape = fe_b_ints(bd, o.dims, 4), out = nd->outputs[0];
    if (!bd->st) bd->st = fe_x_op(&bd->x, "Reshape", p5, shape, &out);
    if (!bd->st) bd->x.nodes[bd->x.count - 1].name = nd->name;
    *out_done = !bd->st;
    return fe_x_end(c, &bd->x, bd->st);
}

static lm_status infer_matmul(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = fe_check_elem(c, n, 0, numeric_types);
    if (!st) st = fe_check_elem(c, n, 1, numeric_types);
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, 0), *b = fe_in_type(c, n, 1);
    if (a->elem != b->elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "A is %s but B is %s", fe_elem_name(a->elem),
                       fe_elem_name(b->elem));
    fe_type o;
    if ((st = matmul_shape(c, n, a, b, &o))) return st;
    if (fe_type_volume(a) == 0 || fe_type_volume(b) == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "empty operands are not supported");
    bool done;
    if ((st = grouped_product(c, n, &done)) || done) return st;
    return fe_set_out_type(c, n, 0, a->elem, o.rank, o.dims);
}

/* `t` (consumed when *owned) reshaped to `rank` dims. */
static lm_status reshape_to(lmnn_tensor *t, bool *owned, uint32_t rank, const uint32_t *dims) {
    lmnn_shape s = lmnn_shape_of(rank, dims);
    lmnn_tensor r;
    lm_status st = lmnn_reshape(*t, &s, NULL, &r);
    if (st) return st;
    take(t, owned, r);
    return LM_OK;
}

/* ---- products of a flattened image (FE_ROWS_IN) ---- */

/* A constant rank-2 right operand: `n` can read input 0's columns in any
 * order (fe_plan.nhwc_rows). */
static bool const_right(fe_ctx *c, const fe_node *n) {
    const fe_tensor *b = fe_in_const(c, n, 1);
    return b && b->rank == 2 && fe_elem_is_float(b->elem) && fe_in_type(c, n, 0)->rank == 2;
}

/* A product with a constant matrix reads channels-last rows held flat
 * (FE_LAST_ALL) as one matrix: the same rows in the same order. */
static bool last_dim_product(fe_ctx *c, const fe_node *n) {
    const fe_tensor *b = fe_in_const(c, n, 1);
    const fe_type *a = fe_in_type(c, n, 0);
    return b && b->rank == 2 && fe_elem_is_float(b->elem) && a->rank >= 3 &&
           fe_elem_is_float(a->elem);
}

static uint32_t matmul_images(fe_ctx *c, const fe_node *n) {
    return const_right(c, n) ? FE_ROWS_IN : last_dim_product(c, n) ? FE_LAST_ALL : 0;
}

static uint32_t gemm_images(fe_ctx *c, const fe_node *n) {
    int64_t trans_a;
    if (fe_attr_int(c, n, "transA", 0, &trans_a) || trans_a) return 0;
    return const_right(c, n) ? FE_ROWS_IN : 0;
}

/* The right operand of the product `n` (input 1), to be used transposed
 * when *out_tb. A constant float matrix is made on the host once per
 * compile as [K, N] whatever trans_b says (a product of a row-major A
 * gathers its rows only with an untransposed B), its K rows permuted to the
 * (h, w, c) order of an [N, C, H, W] image's columns when input 0 holds
 * them so (its producer's fe_plan.nhwc_rows), in the mode's weight dtype
 * (bfloat8_b in the bfp8 mode: bfp8_weight). Other B as they are. */
static lm_status right_operand(fe_ctx *c, const fe_node *n, bool trans_b, lmnn_tensor *out,
                               bool *out_owned, bool *out_tb) {
    uint32_t p = c->g->values[n->inputs[0]].producer;
    bool rows = p != FE_NONE && c->plans[p].nhwc_rows;
    const fe_tensor *b = fe_in_const(c, n, 1);
    *out_tb = trans_b;
    if (!rows && (!trans_b || !b || b->rank != 2 || !fe_elem_is_float(b->elem)))
        return fe_in_dev_float(c, n, 1, out, out_owned);
    *out_owned = false;
    *out_tb = false;
    uint64_t key = key_of(KEY_ROWS_B, (uint64_t)(n - c->g->nodes));
    if (fe_cache_get(c, key, out)) return LM_OK;
    uint64_t k = trans_b ? (uint64_t)b->dims[1] : (uint64_t)b->dims[0];
    uint64_t m = trans_b ? (uint64_t)b->dims[0] : (uint64_t)b->dims[1];
    uint64_t ch = 1, hw = 1;
    if (rows) {
        const fe_type *img = fe_in_type(c, &c->g->nodes[p], 0);
        ch = (uint64_t)img->dims[1], hw = (uint64_t)img->dims[2] * (uint64_t)img->dims[3];
        if (k != ch * hw)
            return fe_fail(c, n, LM_ERR_INTERNAL, "B does not fit the flattened image");
    }
    lmnn_dtype dtype = fe_dev_dtype(c, b->elem);
    if (c->bfp8_weights && fe_elem_is_float(b->elem)) dtype = LMNN_BFLOAT8_B;
    void *data;
    size_t size;
    lm_status st = fe_host_data(b, dtype, c->g->values[n->inputs[1]].name, &data, &size);
    if (st) return fe_nn_fail(c, n, st);
    uint32_t *src = data, *dst = malloc(size);
    if (!dst) {
        free(data);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    /* Row j of [K, N] is B's K index i: with rows, column j = pixel * C +
     * channel of A is ONNX's channel * H * W + pixel. */
    for (uint64_t j = 0; j < k; j++) {
        uint64_t i = rows ? j % ch * hw + j / ch : j;
        if (trans_b) {
            for (uint64_t o = 0; o < m; o++)
                dst[j * m + o] = src[o * k + i];
        } else {
            memcpy(dst + j * m, src + i * m, m * sizeof *dst);
        }
    }
    free(data);
    lmnn_shape s = LMNN_SHAPE((uint32_t)k, (uint32_t)m);
    st = fe_cache_upload(c, n, key, &s, dst, size, dtype, LMNN_TILE, out);
    free(dst);
    return st;
}

/* In the bfp8 mode a product's constant float matrix B (input i, *b its
 * device form) is held as bfloat8_b, as convolution weights are: uploaded
 * so from the host constant (a typecast on the device would run again at
 * every replay) and cached. *b is replaced (freed first when *owned). */
static lm_status bfp8_weight(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *b, bool *owned) {
    const fe_type *t = fe_in_type(c, n, i);
    const fe_tensor *k = fe_in_const(c, n, i);
    lmnn_tensor_info info;
    if (!c->bfp8_weights || !k || !fe_elem_is_float(t->elem) || t->rank < 2 ||
        (!lmnn_tensor_get_info(*b, &info) && info.dtype == LMNN_BFLOAT8_B))
        return LM_OK;
    uint64_t key = key_of(KEY_BFP8_B, (uint64_t)(n - c->g->nodes));
    lmnn_tensor w;
    if (!fe_cache_get(c, key, &w)) {
        void *data;
        size_t size;
        lm_status st =
            fe_host_data(k, LMNN_BFLOAT8_B, c->g->values[n->inputs[i]].name, &data, &size);
        if (st) return fe_nn_fail(c, n, st);
        lmnn_shape s = fe_shape((int32_t)k->rank, k->dims);
        st = fe_cache_upload(c, n, key, &s, data, size, LMNN_BFLOAT8_B, LMNN_TILE, &w);
        free(data);
        if (st) return st;
    }
    if (*owned) fe_free(*b);
    *b = w;
    *owned = false;
    return LM_OK;
}

static lm_status lower_matmul(fe_ctx *c, const fe_node *n) {
    const fe_type *at = fe_in_type(c, n, 0), *bt = fe_in_type(c, n, 1);
    const fe_type *ot = &c->g->values[n->outputs[0]].type;
    lmnn_tensor a, b, r = {0};
    bool ao = false, bo = false;
    /* A float operand held as a permutation not yet made that keeps the
     * last dim, times a matrix: the product of what it was, permuted the
     * same way (fe_out_permuted). */
    int32_t perm[FE_MAX_RANK];
    bool permuted = bt->rank == 2 && at->rank >= 3 && fe_elem_is_float(at->elem) &&
                    fe_in_permuted(c, n, 0, &a, perm) &&
                    fe_perm_keeps_last(perm, (uint32_t)at->rank);
    /* B held as its last two dims swapped, not yet made (keys split from
     * their heads): the product transposes it as it reads. */
    int32_t bperm[FE_MAX_RANK];
    bool b_swapped = at->rank >= 2 && bt->rank >= 2 && fe_elem_is_float(bt->elem) &&
                     fe_in_permuted(c, n, 1, &b, bperm) &&
                     fe_perm_swaps_last(bperm, (uint32_t)bt->rank);
    lm_status st = permuted ? LM_OK : fe_in_dev_float(c, n, 0, &a, &ao);
    if (st) return st;
    bool tb = false; /* (not transposed: right_operand keeps B's form) */
    if (!b_swapped &&
        ((st = right_operand(c, n, false, &b, &bo, &tb)) || (st = bfp8_weight(c, n, 1, &b, &bo)))) {
        if (ao) fe_free(a);
        return st;
    }
    if (at->rank == 1) st = reshape_to(&a, &ao, 2, (const uint32_t[]){1, (uint32_t)at->dims[0]});
    if (!st && bt->rank == 1)
        st = reshape_to(&b, &bo, 2, (const uint32_t[]){(uint32_t)bt->dims[0], 1});
    const fe_fusion *f = fusion_of(c, n);
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.transpose_b = b_swapped;
    /* A fused bias and activation run in the product's last step (before
     * it is stored, or unpacked from rows packed together: lmnn_matmul.h),
     * not as ops on the result; rank-1 operands reshape the result first. */
    bool matrices = at->rank != 1 && bt->rank != 1;
    lmnn_tensor bias = {0};
    if (!st && matrices && f->bias && (st = fe_aux(c, n, 1, f->bias, LMNN_TILE, &bias))) {
        if (ao) fe_free(a);
        if (bo) fe_free(b);
        return st;
    }
    bool act = f->activation != LMNN_UNARY_INVALID && matrices;
    if (act) {
        o.activation = f->activation;
        o.activation_alpha = f->act_alpha;
        o.activation_beta = f->act_beta;
    }
    /* The model's output with nothing after the product: rows in the
     * output's dtype (as lower_gemm). */
    bool rows = matrices && !permuted && fe_out_is_boundary(c, n, 0, &o.output.dtype);
    if (rows) o.output_layout = LMNN_ROW_MAJOR;
    if (!st) st = bias.id ? lmnn_linear(a, b, bias, &o, &r) : lmnn_matmul(a, b, &o, &r);
    if (ao) fe_free(a);
    if (bo) fe_free(b);
    if (!st && (at->rank == 1 || bt->rank == 1)) {
        bool ro = true;
        uint32_t dims[FE_MAX_RANK];
        for (int32_t i = 0; i < ot->rank; i++)
            dims[i] = (uint32_t)ot->dims[i];
        st = reshape_to(&r, &ro, (uint32_t)ot->rank, dims);
    }
    if (st) {
        fe_free(r);
        return fe_nn_fail(c, n, st);
    }
    if (rows) return fe_out_dev(c, n, 0, r);
    return finish_as(c, n, r, act, bias.id != 0, permuted ? perm : NULL);
}

/* ---- MatMulInteger ---- */

/* t - input zi (a zero point), in float32 on the device; a 1-D per-row
 * zero point of A ([M]) is made the column [M, 1]. */
static lm_status sub_zero_point(fe_ctx *c, const fe_node *n, uint32_t zi, bool per_row,
                                lmnn_tensor *t, bool *owned) {
    if (!fe_has_in(n, zi)) return LM_OK;
    lmnn_tensor zp, d;
    bool zo;
    lm_status st = fe_in_dev_float(c, n, zi, &zp, &zo);
    if (st) return st;
    const fe_type *zt = fe_in_type(c, n, zi);
    if (per_row && zt->rank == 1 && zt->dims[0] > 1)
        st = reshape_to(&zp, &zo, 2, (const uint32_t[]){(uint32_t)zt->dims[0], 1});
    if (!st) st = lmnn_binary(LMNN_BINARY_SUB, *t, zp, NULL, &d);
    if (zo) fe_free(zp);
    if (st) return fe_nn_fail(c, n, st);
    take(t, owned, d);
    return LM_OK;
}

/* Inputs A, A's zero point, B, B's zero point of MatMulInteger and
 * QLinearMatMul. */
static const uint32_t *int_mm_inputs(const fe_node *n) {
    static const uint32_t mmi[4] = {0, 2, 1, 3}, qlmm[4] = {0, 2, 3, 5};
    return strcmp(n->op_type, "QLinearMatMul") ? mmi : qlmm;
}

static lm_status infer_matmul_integer(fe_ctx *c, const fe_node *n) {
    bool q = !strcmp(n->op_type, "QLinearMatMul");
    const uint32_t *in = int_mm_inputs(n);
    lm_status st = fe_check_inputs(c, n, q ? 8 : 2, q ? 8 : 4);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    for (uint32_t i = 0; i < 4 && !st; i++)
        st = fe_check_elem(c, n, in[i], int8_types);
    if (q) {
        /* The scales: a's, b's, y's. */
        static const uint32_t scale_in[3] = {1, 4, 6};
        for (uint32_t j = 0; j < 3 && !st; j++)
            st = fe_check_elem(c, n, scale_in[j], float_types);
        if (!st) st = fe_check_elem(c, n, 7, int8_types);
        if (!st && fe_type_volume(fe_in_type(c, n, 6)) != 1)
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "y_scale must be one value");
        if (!st && fe_type_volume(fe_in_type(c, n, 7)) != 1)
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "y_zero_point must be one value");
    }
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, in[0]), *b = fe_in_type(c, n, in[2]);
    fe_type o;
    if ((st = matmul_shape(c, n, a, b, &o))) return st;
    int64_t k = a->dims[a->rank - 1];
    if (k > EXACT_8BIT_K)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "K = %lld is not supported (integer sums are exact up to %d products)",
                       (long long)k, EXACT_8BIT_K);
    if (fe_type_volume(a) == 0 || fe_type_volume(b) == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "empty operands are not supported");
    /* Zero points (and QLinearMatMul's scales): one value, A's per row,
     * B's per column, or anything that broadcasts to the operand. */
    static const uint32_t q_extra[4][2] = {{2, 0}, {5, 1}, {1, 0}, {4, 1}};
    for (uint32_t j = 0; j < (q ? 4u : 2u); j++) {
        uint32_t i = q ? q_extra[j][0] : in[j ? 3 : 1];
        bool is_b = q ? q_extra[j][1] : j == 1;
        const fe_type *z = fe_in_type(c, n, i);
        if (!z || fe_type_volume(z) == 1) continue;
        const fe_type *op = is_b ? b : a;
        int64_t want =
            !is_b ? (op->rank >= 2 ? op->dims[op->rank - 2] : 1) : op->dims[op->rank - 1];
        if (z->rank == 1 && z->dims[0] == want) continue;
        fe_type bc;
        if ((st = fe_broadcast(c, n, op, z, &bc))) return st;
        if (bc.rank != op->rank)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u does not fit its operand", i);
    }
    return fe_set_out_type(c, n, 0, q ? fe_in_type(c, n, 7)->elem : FE_INT32, o.rank, o.dims);
}

/* QLinearMatMul's (QLinearConv's) result from the exact integer product
 * acc (consumed): round(acc * a_scale * b_scale / y_scale) (ties to even) +
 * y_zero_point, saturated to the output's 8-bit range. Scales: A's per row
 * (QLinearMatMul), the weight's per output channel (QLinearConv). */
static lm_status requantize(fe_ctx *c, const fe_node *n, lmnn_tensor acc, lmnn_tensor *out) {
    const fe_type *at = fe_in_type(c, n, 0);
    bool conv = !strcmp(n->op_type, "QLinearConv");
    lmnn_tensor f = acc, t;
    bool fo = true;
    lm_status st = LM_OK;
    static const uint32_t scales[3] = {1, 4, 6};
    for (uint32_t j = 0; j < 3 && !st; j++) {
        lmnn_tensor sc;
        bool so;
        if ((st = fe_in_dev_float(c, n, scales[j], &sc, &so))) break;
        const fe_type *stt = fe_in_type(c, n, scales[j]);
        bool many = stt->rank == 1 && stt->dims[0] > 1;
        if (!conv && j == 0 && at->rank >= 2 && many) {
            /* A's scale per row: a column. */
            st = reshape_to(&sc, &so, 2, (const uint32_t[]){(uint32_t)stt->dims[0], 1});
        } else if (conv && j == 1 && many) {
            /* The weight's scale per output channel: along dim 1. */
            lmnn_tensor_info info;
            uint32_t d[LMNN_MAX_DIMS];
            if (!(st = lmnn_tensor_get_info(f, &info))) {
                for (uint32_t k = 0; k < info.shape.rank; k++)
                    d[k] = k == 1 ? (uint32_t)stt->dims[0] : 1;
                st = reshape_to(&sc, &so, info.shape.rank, d);
            }
        }
        if (!st) st = lmnn_binary(j == 2 ? LMNN_BINARY_DIV : LMNN_BINARY_MUL, f, sc, NULL, &t);
        if (so) fe_free(sc);
        if (!st)
            take(&f, &fo, t);
        else
            st = fe_nn_fail(c, n, st);
    }
    lmnn_tensor zp;
    bool zo;
    if (!st && (st = fe_in_dev_float(c, n, 7, &zp, &zo))) fe_free(f);
    if (st) return st;
    st = fe_quantize_tail(f, zp, fe_in_type(c, n, 7)->elem == FE_UINT8, out);
    if (zo) fe_free(zp);
    return st;
}

/* (A - a_zero_point) @ (B - b_zero_point) in float32 (exact: 8-bit
 * operands, K limited by infer): MatMulInteger's int32 result, or
 * QLinearMatMul's requantized one. */
static lm_status lower_matmul_integer(fe_ctx *c, const fe_node *n) {
    const uint32_t *in = int_mm_inputs(n);
    const fe_type *at = fe_in_type(c, n, in[0]), *bt = fe_in_type(c, n, in[2]);
    const fe_type *ot = &c->g->values[n->outputs[0]].type;
    lmnn_tensor a, b, r = {0};
    bool ao, bo = false;
    lm_status st = fe_in_dev_float(c, n, in[0], &a, &ao);
    if (st) return st;
    if ((st = fe_in_dev_float(c, n, in[2], &b, &bo)) ||
        (st = sub_zero_point(c, n, in[1], at->rank >= 2, &a, &ao)) ||
        (st = sub_zero_point(c, n, in[3], false, &b, &bo)))
        goto out;
    if (at->rank == 1 &&
        (st = reshape_to(&a, &ao, 2, (const uint32_t[]){1, (uint32_t)at->dims[0]})))
        goto fail;
    if (bt->rank == 1 &&
        (st = reshape_to(&b, &bo, 2, (const uint32_t[]){(uint32_t)bt->dims[0], 1})))
        goto fail;
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.fp32_accumulate = LMNN_FP32_ACC_ON;
    o.output.dtype = LMNN_FLOAT32;
    if ((st = lmnn_matmul(a, b, &o, &r))) goto fail;
    if (at->rank == 1 || bt->rank == 1) {
        bool ro = true;
        uint32_t dims[FE_MAX_RANK];
        for (int32_t i = 0; i < ot->rank; i++)
            dims[i] = (uint32_t)ot->dims[i];
        if ((st = reshape_to(&r, &ro, (uint32_t)ot->rank, dims))) {
            r = (lmnn_tensor){0};
            goto fail;
        }
    }
    if (in[2] == 3) {
        lmnn_tensor y = {0};
        st = requantize(c, n, r, &y);
        r = st ? (lmnn_tensor){0} : y;
        if (st) goto fail;
    }
    goto out;
fail:
    st = fe_nn_fail(c, n, st);
out:
    if (ao) fe_free(a);
    if (bo) fe_free(b);
    if (st) {
        fe_free(r);
        return st;
    }
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Gemm ---- */

typedef struct gemm_attrs {
    float alpha, beta;
    int64_t trans_a, trans_b;
} gemm_attrs;

static lm_status gemm_read(fe_ctx *c, const fe_node *n, gemm_attrs *g) {
    lm_status st = fe_attr_float(c, n, "alpha", 1.0f, &g->alpha);
    if (!st) st = fe_attr_float(c, n, "beta", 1.0f, &g->beta);
    if (!st) st = fe_attr_int(c, n, "transA", 0, &g->trans_a);
    if (!st) st = fe_attr_int(c, n, "transB", 0, &g->trans_b);
    return st;
}

static lm_status infer_gemm(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st)
        st = fe_check_attrs(
            c, n, (const char *const[]){"alpha", "beta", "transA", "transB", "broadcast", NULL});
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_check_elem(c, n, i, numeric_types);
    gemm_attrs g;
    if (!st) st = gemm_read(c, n, &g);
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, 0), *b = fe_in_type(c, n, 1);
    if (a->rank != 2 || b->rank != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "A and B must be 2-D (given rank %d and %d)",
                       a->rank, b->rank);
    int64_t m = g.trans_a ? a->dims[1] : a->dims[0], k = g.trans_a ? a->dims[0] : a->dims[1];
    int64_t k2 = g.trans_b ? b->dims[1] : b->dims[0], nn = g.trans_b ? b->dims[0] : b->dims[1];
    if (k != k2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "inner dims differ: %lld and %lld", (long long)k,
                       (long long)k2);
    fe_type o = {.elem = a->elem, .rank = 2, .dims = {m, nn}};
    if (fe_has_in(n, 2)) {
        fe_type bc;
        if ((st = fe_broadcast(c, n, &o, fe_in_type(c, n, 2), &bc))) return st;
        if (bc.rank != 2 || bc.dims[0] != m || bc.dims[1] != nn)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "C does not broadcast to [%lld, %lld]",
                           (long long)m, (long long)nn);
    }
    if (m * nn * k == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "empty operands are not supported");
    return fe_set_out_type(c, n, 0, a->elem, 2, o.dims);
}

static lm_status lower_gemm(fe_ctx *c, const fe_node *n) {
    gemm_attrs g;
    lm_status st = gemm_read(c, n, &g);
    if (st) return st;
    int64_t nn = c->g->values[n->outputs[0]].type.dims[1];
    lmnn_tensor a, b, bias = {0}, r = {0};
    bool ao, bo = false, co = false, act = false, rows = false;
    lmnn_dtype cast;
    if ((st = fe_in_dev_float_rows(c, n, 0, &a, &ao, &cast))) return st;
    bool tb;
    if ((st = right_operand(c, n, g.trans_b != 0, &b, &bo, &tb)) ||
        (st = bfp8_weight(c, n, 1, &b, &bo)))
        goto out;
    bool has_c = fe_has_in(n, 2) && g.beta != 0.0f;
    /* A [N] or [1, N] C with beta 1 is lmnn_linear's bias, added in the
     * matmul's last step; any other C is scaled and added after. */
    const fe_type *ct = has_c ? fe_in_type(c, n, 2) : NULL;
    bool as_bias = has_c && g.beta == 1.0f && g.alpha == 1.0f &&
                   ((ct->rank == 1 && ct->dims[0] == nn) ||
                    (ct->rank == 2 && ct->dims[0] == 1 && ct->dims[1] == nn));
    if (has_c && (st = fe_in_dev_float(c, n, 2, &bias, &co))) goto out;
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.transpose_a = g.trans_a != 0;
    o.transpose_b = tb;
    o.input_dtype = cast;
    const fe_fusion *f = fusion_of(c, n);
    bool whole = !f->bias && (!has_c || as_bias) && g.alpha == 1.0f;
    act = f->activation != LMNN_UNARY_INVALID && whole;
    if (act) {
        o.activation = f->activation;
        o.activation_alpha = f->act_alpha;
        o.activation_beta = f->act_beta;
    }
    /* The model's output, and nothing after the product: given as the
     * binary's output takes it, rows in its dtype (a classifier's logits,
     * with no untilize or typecast of their own). */
    rows = whole && (act || f->activation == LMNN_UNARY_INVALID) &&
           fe_out_is_boundary(c, n, 0, &o.output.dtype);
    if (rows) o.output_layout = LMNN_ROW_MAJOR;
    st = lmnn_linear(a, b, as_bias ? bias : (lmnn_tensor){0}, &o, &r);
    if (!st && g.alpha != 1.0f) {
        lmnn_tensor s;
        if (!(st = lmnn_binary_scalar(LMNN_BINARY_MUL, r, g.alpha, NULL, &s))) {
            fe_free(r);
            r = s;
        }
    }
    if (!st && has_c && !as_bias) {
        lmnn_tensor cs = bias, s;
        bool cso = false;
        if (g.beta != 1.0f) {
            st = lmnn_binary_scalar(LMNN_BINARY_MUL, bias, g.beta, NULL, &cs);
            cso = !st;
        }
        if (!st && !(st = lmnn_binary(LMNN_BINARY_ADD, r, cs, NULL, &s))) {
            fe_free(r);
            r = s;
        }
        if (cso) fe_free(cs);
    }
    if (st) st = fe_nn_fail(c, n, st);
out:
    if (ao) fe_free(a);
    if (bo) fe_free(b);
    if (co) fe_free(bias);
    if (st) {
        fe_free(r);
        return st;
    }
    return rows ? fe_out_dev(c, n, 0, r) : finish(c, n, r, act, false);
}

/* ---- convolution and pooling geometry ---- */

typedef fe_geom geom;

/* The largest kernel size, stride, dilation or pad: far past any image the
 * device holds, and small enough that the geometry's sums cannot overflow. */
#define GEOM_MAX (INT64_C(1) << 24)

static lm_status ints_attr(fe_ctx *c, const fe_node *n, const char *name, int32_t count,
                           int64_t def, int64_t *out) {
    const int64_t *v;
    size_t k;
    lm_status st = fe_attr_ints(c, n, name, &v, &k);
    if (st) return st;
    if (!v) {
        for (int32_t i = 0; i < count; i++)
            out[i] = def;
        return LM_OK;
    }
    if (k != (size_t)count)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s has %zu values for %d spatial dims",
                       name, k, count);
    for (int32_t i = 0; i < count; i++) {
        if (v[i] > GEOM_MAX)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute %s holds %lld (at most %lld)", name,
                           (long long)v[i], (long long)GEOM_MAX);
        out[i] = v[i];
    }
    return LM_OK;
}

typedef enum op_kind { K_CONV, K_CONVT, K_MAXPOOL, K_AVGPOOL } op_kind;

/* Reads the geometry of `n` for an input of type `x` (N, C, spatial...);
 * `wk` gives the kernel from the weight (convolutions), else kernel_shape is
 * required. Computes pads (auto_pad) and output dims. */
static lm_status geom_read(fe_ctx *c, const fe_node *n, op_kind kind, const fe_type *x,
                           const int64_t *wk, geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 5)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input rank %d is not supported (1-D to 3-D "
                       "images, N x C x ...)",
                       x->rank);
    int32_t sp = x->rank - 2;
    g->sp = sp;
    for (int32_t i = 0; i < sp; i++)
        g->in[i] = x->dims[2 + i];
    lm_status st;
    int64_t pads[6];
    const char *auto_pad;
    if ((st = fe_attr_string(c, n, "auto_pad", "NOTSET", &auto_pad))) return st;
    if ((st = ints_attr(c, n, "kernel_shape", sp, -1, g->kernel))) return st;
    for (int32_t i = 0; i < sp; i++) {
        if (wk && g->kernel[i] >= 0 && g->kernel[i] != wk[i])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "kernel_shape does not match the weight");
        if (wk) g->kernel[i] = wk[i];
        if (g->kernel[i] < 1)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "kernel_shape is missing or below 1");
    }
    if ((st = ints_attr(c, n, "strides", sp, 1, g->stride)) ||
        (st = ints_attr(c, n, "dilations", sp, 1, g->dil)) ||
        (st = ints_attr(c, n, "pads", 2 * sp, 0, pads)))
        return st;
    for (int32_t i = 0; i < sp; i++) {
        if (g->stride[i] < 1 || g->dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "strides and dilations must be >= 1 and "
                           "pads >= 0");
        g->pad_b[i] = pads[i];
        g->pad_e[i] = pads[sp + i];
    }
    int64_t ceil_mode = 0;
    if (kind == K_MAXPOOL || kind == K_AVGPOOL) {
        if ((st = fe_attr_int(c, n, "ceil_mode", 0, &ceil_mode))) return st;
        g->ceil_mode = ceil_mode != 0;
    }
    if (kind == K_CONVT) {
        if ((st = ints_attr(c, n, "output_padding", sp, 0, g->out_pad))) return st;
    }
    bool same_upper = !strcmp(auto_pad, "SAME_UPPER"), same_lower = !strcmp(auto_pad, "SAME_LOWER");
    bool valid = !strcmp(auto_pad, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(auto_pad, "NOTSET") != 0)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute auto_pad=%s is not valid", auto_pad);
    for (int32_t i = 0; i < sp; i++) {
        int64_t dk = (g->kernel[i] - 1) * g->dil[i] + 1;
        if (kind == K_CONVT) {
            if (valid)
                g->pad_b[i] = g->pad_e[i] = 0;
            else if (same_upper || same_lower) {
                /* Output = input * stride. */
                int64_t total =
                    g->stride[i] * (g->in[i] - 1) + g->out_pad[i] + dk - g->in[i] * g->stride[i];
                if (total < 0) total = 0;
                g->pad_b[i] = same_upper ? total / 2 : total - total / 2;
                g->pad_e[i] = total - g->pad_b[i];
            }
            g->out[i] =
                g->stride[i] * (g->in[i] - 1) + g->out_pad[i] + dk - g->pad_b[i] - g->pad_e[i];
            continue;
        }
        if (valid) {
            g->pad_b[i] = g->pad_e[i] = 0;
        } else if (same_upper || same_lower) {
            int64_t o = (g->in[i] + g->stride[i] - 1) / g->stride[i];
            int64_t total = (o - 1) * g->stride[i] + dk - g->in[i];
            if (total < 0) total = 0;
            g->pad_b[i] = same_upper ? total / 2 : total - total / 2;
            g->pad_e[i] = total - g->pad_b[i];
        }
        int64_t span = g->in[i] + g->pad_b[i] + g->pad_e[i] - dk;
        if (span < 0)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "the kernel is larger than the padded input");
        int64_t o =
            g->ceil_mode ? (span + g->stride[i] - 1) / g->stride[i] + 1 : span / g->stride[i] + 1;
        /* PyTorch's (and the op library's) rule: the last window must start
         * inside the input or its begin padding. */
        if (g->ceil_mode && (o - 1) * g->stride[i] >= g->in[i] + g->pad_b[i]) o--;
        g->out[i] = o;
    }
    return LM_OK;
}

lm_status fe_geom_read(fe_ctx *c, const fe_node *n, const fe_type *x, const int64_t *kernel,
                       fe_geom *out) {
    const char *op = n->op_type;
    op_kind kind = !strcmp(op, "ConvTranspose") ? K_CONVT
                   : !strcmp(op, "MaxPool")     ? K_MAXPOOL
                   : !strcmp(op, "AveragePool") ? K_AVGPOOL
                                                : K_CONV;
    return geom_read(c, n, kind, x, kernel, out);
}

/* The output type of an image op: [N, oc, out...]. */
static lm_status set_image_out(fe_ctx *c, const fe_node *n, fe_elem elem, const fe_type *x,
                               int64_t oc, const geom *g) {
    int64_t dims[FE_MAX_RANK] = {x->dims[0], oc};
    for (int32_t i = 0; i < g->sp; i++) {
        if (g->out[i] < 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "the output is empty");
        dims[2 + i] = g->out[i];
    }
    return fe_set_out_type(c, n, 0, elem, x->rank, dims);
}

/* The lmnn options' 2-D view of the geometry: 1-D as H = 1. */
static void geom_2d(const geom *g, int32_t stride[2], int32_t pad[4], int32_t dil[2],
                    int32_t kernel[2]) {
    if (g->sp == 1) {
        stride[0] = 1, stride[1] = (int32_t)g->stride[0];
        dil[0] = 1, dil[1] = (int32_t)g->dil[0];
        kernel[0] = 1, kernel[1] = (int32_t)g->kernel[0];
        pad[0] = pad[1] = 0;
        pad[2] = (int32_t)g->pad_b[0];
        pad[3] = (int32_t)g->pad_e[0];
        return;
    }
    int32_t o = g->sp - 2; /* 3-D: the last two dims */
    for (int i = 0; i < 2; i++) {
        stride[i] = (int32_t)g->stride[o + i];
        dil[i] = (int32_t)g->dil[o + i];
        kernel[i] = (int32_t)g->kernel[o + i];
    }
    pad[0] = (int32_t)g->pad_b[o];
    pad[1] = (int32_t)g->pad_e[o];
    pad[2] = (int32_t)g->pad_b[o + 1];
    pad[3] = (int32_t)g->pad_e[o + 1];
}

/* ---- Conv, ConvTranspose ---- */

static bool is_integer_conv(const fe_node *n) {
    return strcmp(n->op_type, "ConvInteger") == 0 || strcmp(n->op_type, "QLinearConv") == 0;
}

/* Where a convolution's operands are (FE_NONE: it has none): Conv and
 * ConvTranspose (X, W, B), ConvInteger (x, w, x_zero_point, w_zero_point),
 * QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B). */
typedef struct conv_in {
    uint32_t x, w, b, xzp, wzp;
    bool integer, quant;
} conv_in;

static conv_in conv_inputs(const fe_node *n) {
    if (!strcmp(n->op_type, "ConvInteger")) return (conv_in){0, 1, FE_NONE, 2, 3, true, false};
    if (!strcmp(n->op_type, "QLinearConv")) return (conv_in){0, 3, 8, 2, 5, true, true};
    return (conv_in){0, 1, 2, FE_NONE, FE_NONE, false, false};
}

static bool has_in(const fe_node *n, uint32_t i) {
    return i != FE_NONE && fe_has_in(n, i);
}

static const char *const conv_attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                         "pads",     "strides",   NULL};
static const char *const convt_attrs[] = {"auto_pad",     "dilations",      "group",
                                          "kernel_shape", "output_padding", "output_shape",
                                          "pads",         "strides",        NULL};

static lm_status conv_geom(fe_ctx *c, const fe_node *n, bool transpose, geom *g, int64_t *oc) {
    const fe_type *x = fe_in_type(c, n, 0), *w = fe_in_type(c, n, conv_inputs(n).w);
    const fe_fusion *f = fusion_of(c, n);
    if (f->weight) w = NULL;
    int32_t wr = f->weight ? (int32_t)f->weight->rank : w->rank;
    const int64_t *wd = f->weight ? f->weight->dims : w->dims;
    if (wr != x->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "W has rank %d but X has rank %d", wr, x->rank);
    lm_status st = geom_read(c, n, transpose ? K_CONVT : K_CONV, x, wd + 2, g);
    if (!st) st = fe_attr_int(c, n, "group", 1, &g->group);
    if (st) return st;
    int64_t ch = x->dims[1];
    if (g->group < 1 || ch % g->group)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "group %lld does not divide the %lld channels",
                       (long long)g->group, (long long)ch);
    if (transpose) {
        if (wd[0] != ch)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "W has %lld input channels, X has %lld",
                           (long long)wd[0], (long long)ch);
        *oc = wd[1] * g->group;
        const int64_t *os;
        size_t osn;
        if ((st = fe_attr_ints(c, n, "output_shape", &os, &osn))) return st;
        if (os) {
            /* output_shape decides the padding: what the full output has
             * beyond it is cut (begin and end as auto_pad says); a shortfall
             * becomes output padding at the end. */
            if (osn != (size_t)g->sp && osn != (size_t)g->sp + 2)
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "output_shape has %zu values", osn);
            const char *ap;
            if ((st = fe_attr_string(c, n, "auto_pad", "NOTSET", &ap))) return st;
            for (int32_t i = 0; i < g->sp; i++) {
                int64_t want = os[osn - (size_t)g->sp + (size_t)i];
                int64_t full = g->stride[i] * (g->in[i] - 1) + g->out_pad[i] +
                               (g->kernel[i] - 1) * g->dil[i] + 1;
                int64_t total = full - want;
                if (total >= 0) {
                    g->pad_b[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
                    g->pad_e[i] = total - g->pad_b[i];
                } else {
                    g->pad_b[i] = g->pad_e[i] = 0;
                    g->out_pad[i] += -total;
                }
                g->out[i] = want;
            }
        }
        for (int32_t i = 0; i < g->sp; i++)
            if (g->out_pad[i] < 0 || (g->out_pad[i] >= g->stride[i] && g->out_pad[i] >= g->dil[i]))
                return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                               "output padding %lld (from output_padding or output_shape) is not "
                               "below the stride or dilation",
                               (long long)g->out_pad[i]);
    } else {
        if (wd[1] * g->group != ch)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "W takes %lld channels per group, X has %lld in %lld groups",
                           (long long)wd[1], (long long)ch, (long long)g->group);
        if (wd[0] % g->group)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "group %lld does not divide W's %lld "
                           "output channels",
                           (long long)g->group, (long long)wd[0]);
        *oc = wd[0];
    }
    return LM_OK;
}

/* A float Conv or ConvTranspose with groups whose weight is known only at
 * run time (a weight the model takes as an input, one being trained): the
 * device's grouped convolution needs its block-diagonal weight matrix at
 * compile time, so the node becomes one convolution of all the channels
 * with the weight made dense on the device, its copies across the groups
 * (Tile) kept only inside their own group (times a constant 0/1 mask).
 * Each output then costs `group` times the products, most of them zero. */
static lm_status conv_dense_groups(fe_ctx *c, const fe_node *n, int64_t group) {
    const fe_type *w = fe_in_type(c, n, 1);
    /* Conv's W is [OC, C / g, ...], ConvTranspose's [C, OC / g, ...]:
     * dim 1 is tiled, and element (i, j) of the dense [W0, W1 * g] is kept
     * when i and j fall in the same group. */
    int64_t rows = w->dims[0], per = w->dims[1], rows_per = rows / group;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    fe_tensor *reps, *mask;
    int64_t mdims[FE_MAX_RANK];
    for (int32_t d = 0; d < w->rank; d++)
        mdims[d] = d == 0 ? rows : d == 1 ? per * group : 1;
    lm_status st = fe_const_new(c, FE_INT64, 1, (const int64_t[]){w->rank}, &reps);
    if (!st) st = fe_const_new(c, w->elem, (uint32_t)w->rank, mdims, &mask);
    uint32_t rv = FE_NONE, mv = FE_NONE, tiled = FE_NONE, dense = FE_NONE;
    if (!st) {
        for (int32_t d = 0; d < w->rank; d++)
            fe_tensor_set_i64(reps, (uint64_t)d, d == 1 ? group : 1);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < per * group; j++)
                fe_tensor_set_f64(mask, (uint64_t)(i * per * group + j),
                                  i / rows_per == j / per ? 1.0 : 0.0);
        st = fe_x_const(&x, reps, "repeats", &rv);
    }
    if (!st) st = fe_x_const(&x, mask, "groups", &mv);
    if (!st) st = fe_x_emit(&x, "Tile", x.node.inputs[1], rv, &tiled);
    if (!st) st = fe_x_emit(&x, "Mul", tiled, mv, &dense);
    if (!st) {
        /* The node itself with the dense weight and one group. */
        fe_node *m = fe_x_node(&x, x.node.op_type, x.node.opset, x.node.input_count, 1);
        fe_attr *attrs = fe_arena_alloc(&c->g->arena, (x.node.attr_count + 1) * sizeof *attrs);
        if (!m || !attrs) {
            st = fe_x_oom();
        } else {
            memcpy(m->inputs, x.node.inputs, x.node.input_count * sizeof *m->inputs);
            m->inputs[1] = dense;
            m->outputs[0] = x.node.outputs[0];
            m->name = x.node.name;
            m->domain = x.node.domain;
            uint32_t k = 0;
            for (uint32_t i = 0; i < x.node.attr_count; i++)
                if (strcmp(x.node.attrs[i].name, "group") != 0) attrs[k++] = x.node.attrs[i];
            m->attrs = attrs;
            m->attr_count = k;
        }
    }
    return fe_x_end(c, &x, st);
}

static lm_status infer_conv_common(fe_ctx *c, const fe_node *n, bool transpose) {
    conv_in ci = conv_inputs(n);
    bool integer = ci.integer;
    lm_status st = fe_check_inputs(c, n, ci.quant ? 8 : 2, ci.quant ? 9 : integer ? 4 : 3);
    if (!st) st = fe_check_attrs(c, n, transpose ? convt_attrs : conv_attrs);
    if (!integer)
        for (uint32_t i = 0; i < 3 && !st; i++)
            st = fe_check_elem(c, n, i, float_types);
    const uint32_t int_in[4] = {ci.x, ci.w, ci.xzp, ci.wzp};
    for (uint32_t i = 0; integer && i < 4 && !st; i++)
        st = fe_check_elem(c, n, int_in[i], int8_types);
    if (ci.quant) {
        static const uint32_t scale_in[3] = {1, 4, 6};
        for (uint32_t j = 0; j < 3 && !st; j++)
            st = fe_check_elem(c, n, scale_in[j], float_types);
        if (!st) st = fe_check_elem(c, n, 7, int8_types);
        if (!st) st = fe_check_elem(c, n, 8, (const fe_elem[]){FE_INT32, FE_UNDEFINED});
        for (uint32_t i = 1; i < 8 && !st; i++)
            if (i != 3 && i != 4 && i != 5 && fe_type_volume(fe_in_type(c, n, i)) != 1)
                st = fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be one value", i);
    }
    geom g;
    int64_t oc;
    if (!st) st = conv_geom(c, n, transpose, &g, &oc);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (integer) {
        const fe_type *xz = has_in(n, ci.xzp) ? fe_in_type(c, n, ci.xzp) : NULL;
        const fe_type *wz = has_in(n, ci.wzp) ? fe_in_type(c, n, ci.wzp) : NULL;
        if (xz && fe_type_volume(xz) != 1)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "x_zero_point must be one value");
        if (wz && fe_type_volume(wz) != 1 && !(wz->rank == 1 && wz->dims[0] == oc))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "w_zero_point must be one value or [%lld]",
                           (long long)oc);
        if (wz && fe_type_volume(wz) != 1 && g.group != 1 &&
            !(fe_in_const(c, n, ci.w) && fe_in_const(c, n, ci.wzp)))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "a per-channel w_zero_point with group %lld needs the weight and the "
                           "zero point as constants",
                           (long long)g.group);
        int64_t taps = x->dims[1] / g.group;
        for (int32_t i = 0; i < g.sp; i++)
            taps *= g.kernel[i];
        if (taps > EXACT_8BIT_K)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "%lld products per output are not supported (integer sums are exact "
                           "up to %d)",
                           (long long)taps, EXACT_8BIT_K);
        if (ci.quant) {
            const fe_type *ws = fe_in_type(c, n, 4);
            if (fe_type_volume(ws) != 1 && !(ws->rank == 1 && ws->dims[0] == oc))
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "w_scale must be one value or [%lld]",
                               (long long)oc);
        }
        if (has_in(n, ci.b)) {
            /* The int32 bias joins the exact sums: known, and small enough. */
            const fe_tensor *bk = fe_in_const(c, n, ci.b);
            const fe_type *b = fe_in_type(c, n, ci.b);
            if (b->rank != 1 || b->dims[0] != oc)
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "B must be [%lld]", (long long)oc);
            int64_t room = (INT64_C(1) << 24) - taps * 65025;
            for (uint64_t i = 0; bk && i < bk->count; i++) {
                int64_t v = fe_tensor_get_i64(bk, i);
                if (v >= room || v <= -room) bk = NULL;
            }
            if (!bk)
                return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                               "B must be a constant below %lld in magnitude (integer sums are "
                               "exact below 2^24)",
                               (long long)room);
        }
    } else if (fe_has_in(n, 2)) {
        const fe_type *b = fe_in_type(c, n, 2);
        if (b->rank != 1 || b->dims[0] != oc)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "B must be [%lld]", (long long)oc);
    }
    if (fe_type_volume(x) == 0) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X is empty");
    if (g.group > 0xffff || (g.sp == 3 && g.kernel[0] > 0xff))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "group %lld or a kernel depth of %lld is not "
                       "supported",
                       (long long)g.group, (long long)g.kernel[0]);
    if (!fe_in_const(c, n, ci.w) && !fusion_of(c, n)->weight && g.group != 1) {
        if (integer)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "group %lld with a weight computed at run time is not supported (the "
                           "weight must be a constant)",
                           (long long)g.group);
        return conv_dense_groups(c, n, g.group);
    }
    fe_elem oe = ci.quant ? fe_in_type(c, n, 7)->elem : integer ? FE_INT32 : x->elem;
    return set_image_out(c, n, oe, x, oc, &g);
}

static lm_status infer_conv(fe_ctx *c, const fe_node *n) {
    return infer_conv_common(c, n, false);
}

static lm_status infer_convt(fe_ctx *c, const fe_node *n) {
    return infer_conv_common(c, n, true);
}

/* The prepared weight matrix [KH * KW * C, OC] (or depthwise [1, KH * KW, C], or a grouped 2-D
 * one's compact form, lmnn_conv2d_prepare_weights') of constant `w`
 * (conv: [OC, C / g, KH, KW]; transpose: [C, OC / g, KH, KW]), 1-D kernels as KH = 1; for a 3-D
 * kernel the depth tap `kd`. Made once per compile; in the mode's float dtype (bfloat8_b weights in
 * the bfp8 mode), or float32 when `exact`; `zp` (one value or one per output channel of a
 * convolution) is subtracted inside the groups, the block-diagonal's zeros
 * staying zero. */
/* The depth tap of a 3-D weight that stands for all of them: its prepared
 * matrix [KD * KH * KW * C, OC] (the 2-D one of the weight with KD and KH as
 * one dim), which lmnn_conv3d takes. Depth taps are below 0xff (infer's
 * limit on a 3-D kernel's depth). */
#define CONV_KD_ALL 0xff

/* Constant weight wk as the op library's 2-D forms take it: a 1-D kernel
 * [OC, C, K] is the 2-D [OC, C, 1, K]. */
static lmnn_shape conv_weight_shape(const fe_tensor *wk) {
    return wk->rank == 4
               ? fe_shape(4, wk->dims)
               : LMNN_SHAPE((uint32_t)wk->dims[0], (uint32_t)wk->dims[1], 1, (uint32_t)wk->dims[2]);
}

/* Grouped weight `w` (of `groups`) whose values `v` are in PyTorch's layout
 * (a 1-D kernel as KH = 1), prepared by the op library in `dtype` and cached under `key`. */
static lm_status grouped_weight(fe_ctx *c, const fe_node *n, uint64_t key, const fe_tensor *w,
                                int64_t groups, const float *v, lmnn_dtype dtype,
                                lmnn_tensor *out) {
    lmnn_shape ws = conv_weight_shape(w);
    uint64_t count = lmnn_shape_volume(&ws);
    float *copy = NULL;
    if (fe_dtype_saturates(dtype) && !(v = fe_saturated(v, count, &copy)))
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.groups = (int32_t)groups;
    o.output.dtype = dtype;
    lm_status st = lmnn_conv2d_prepare_weights_host(c->device, &ws, v, count * sizeof *v, &o, out);
    free(copy);
    lmnn_tensor_info info;
    if (!st && (st = lmnn_tensor_get_info(*out, &info))) fe_free(*out);
    if (st) return fe_nn_fail(c, n, st);
    if ((st = fe_cache_put(c, key, *out))) return st;
    c->weight_bytes += lmnn_shape_volume(&info.shape) * sizeof(float);
    return LM_OK;
}

static lm_status weight_const(fe_ctx *c, const fe_node *n, const fe_tensor *w, bool fused,
                              bool exact, const fe_tensor *zp, bool transpose, int64_t groups,
                              int64_t kd, lmnn_tensor *out) {
    uint32_t vi = n->inputs[conv_inputs(n).w];
    /* A fused weight, or one with a zero point folded in, is the node's own. */
    uint64_t id = fused || zp ? (uint64_t)(n - c->g->nodes) : vi;
    /* One value may serve convolutions of different kinds and groups. */
    uint64_t key =
        key_of(fused   ? KEY_CONV_W_FUSED
               : zp    ? KEY_CONV_W_ZP
               : exact ? KEY_CONV_W_EXACT
                       : KEY_CONV_W,
               (id << 32) | ((uint64_t)groups << 16) | ((uint64_t)transpose << 8) | (uint64_t)kd);
    if (fe_cache_get(c, key, out)) return LM_OK;
    uint64_t d0 = (uint64_t)w->dims[0], d1 = (uint64_t)w->dims[1];
    uint64_t kh = w->rank >= 4 ? (uint64_t)w->dims[w->rank - 2] : 1,
             kw = (uint64_t)w->dims[w->rank - 1];
    uint64_t kdn = w->rank == 5 ? (uint64_t)w->dims[2] : 1, tap = (uint64_t)kd;
    if (kd == CONV_KD_ALL) { /* the depth taps' rows in turn: one tap of kdn * kh rows */
        kh *= kdn;
        kdn = 1;
        tap = 0;
    }
    uint64_t g = (uint64_t)groups;
    uint64_t ch = transpose ? d0 : d1 * g, oc = transpose ? d1 * g : d0;
    uint64_t cg = ch / g, ocg = oc / g, rows = kh * kw * ch;
    /* A depthwise weight of more than a tile of channels takes the op
     * library's depthwise form, [1, KH * KW, C] (lmnn_conv2d_prepare_weights'
     * rule): one tap's weights a row, no block-diagonal zeros. */
    bool depthwise = !transpose && g == ch && oc == ch && ch > 32;
    /* Any other grouped 2-D weight goes to the op library in PyTorch's
     * layout: it stores the block-diagonal matrix's compact form (no tile
     * outside every group). */
    bool grouped = !transpose && !depthwise && g > 1 && w->rank <= 4 && kd == 0;
    if (!depthwise && rows * oc > (UINT64_C(1) << 28))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the weight is too large");
    float *m = calloc(depthwise ? rows : grouped ? d0 * d1 * kh * kw : rows * oc, sizeof *m);
    if (!m) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint64_t a = 0; a < d0; a++)
        for (uint64_t b = 0; b < d1; b++)
            for (uint64_t y = 0; y < kh; y++)
                for (uint64_t x = 0; x < kw; x++) {
                    uint64_t src = (((a * d1 + b) * kdn + tap) * kh + y) * kw + x;
                    double v = fe_tensor_get_f64(w, src);
                    if (zp) v -= fe_tensor_get_f64(zp, zp->count == 1 ? 0 : a);
                    uint64_t ci = transpose ? a : a / ocg * cg + b;
                    uint64_t o = transpose ? a / cg * ocg + b : a;
                    uint64_t ty = transpose ? kh - 1 - y : y, tx = transpose ? kw - 1 - x : x;
                    if (depthwise)
                        m[(y * kw + x) * ch + a] = (float)v;
                    else if (grouped)
                        m[src] = (float)v;
                    else
                        m[((ty * kw + tx) * ch + ci) * oc + o] = (float)v;
                }
    /* Exact (integer) weights stay float32 whatever the mode. */
    lmnn_dtype dtype = exact ? LMNN_FLOAT32 : c->float_dtype;
    lm_status st;
    if (grouped) {
        st = grouped_weight(c, n, key, w, groups, m, dtype, out);
    } else {
        lmnn_shape s = depthwise ? LMNN_SHAPE(1, (uint32_t)(kh * kw), (uint32_t)ch)
                                 : LMNN_SHAPE((uint32_t)rows, (uint32_t)oc);
        st = fe_cache_upload(c, n, key, &s, m, lmnn_shape_volume(&s) * sizeof *m, dtype, LMNN_TILE,
                             out);
    }
    free(m);
    /* A depthwise weight stays in the mode's float dtype: in bfloat8_b its
     * 16-channel blocks would share one exponent (the block-diagonal
     * matrix's blocks hold one weight each), and it is small anyway. */
    if (st || exact || !c->bfp8_weights || depthwise) return st;
    lmnn_tensor b8;
    if ((st = lmnn_typecast(*out, LMNN_BFLOAT8_B, &b8))) return fe_nn_fail(c, n, st);
    c->cache[c->cache_count - 1].t = b8;
    fe_free(*out);
    *out = b8;
    return LM_OK;
}

/* The prepared matrix of a weight computed at run time (group 1), on the
 * device: conv [OC, C, KH, KW] -> permute to [KH, KW, C, OC] -> reshape;
 * transpose [C, OC, KH, KW] -> [KH, KW, C, OC] with the KH * KW taps in
 * reverse order (the flipped kernel). For a 3-D weight, depth tap `kd`. */
static lm_status weight_dev(fe_ctx *c, const fe_node *n, bool transpose, int64_t kd,
                            lmnn_tensor *out) {
    uint32_t wi = conv_inputs(n).w;
    const fe_type *wt = fe_in_type(c, n, wi);
    lmnn_tensor w;
    lm_status st = fe_in_dev(c, n, wi, &w);
    if (st) return st;
    bool owned = false;
    uint32_t d0 = (uint32_t)wt->dims[0], d1 = (uint32_t)wt->dims[1];
    uint32_t kh = wt->rank >= 4 ? (uint32_t)wt->dims[wt->rank - 2] : 1,
             kw = (uint32_t)wt->dims[wt->rank - 1];
    if (wt->rank == 5 && kd == CONV_KD_ALL) {
        kh *= (uint32_t)wt->dims[2]; /* the depth taps' rows in turn */
    } else if (wt->rank == 5) {
        int32_t b[5] = {0, 0, (int32_t)kd, 0, 0}, e[5];
        for (int i = 0; i < 5; i++)
            e[i] = (int32_t)wt->dims[i];
        e[2] = (int32_t)kd + 1;
        lmnn_tensor s;
        if ((st = lmnn_slice(w, b, e, NULL, 5, NULL, &s))) return fe_nn_fail(c, n, st);
        take(&w, &owned, s);
    }
    if ((st = reshape_to(&w, &owned, 4, (const uint32_t[]){d0, d1, kh, kw}))) goto fail;
    lmnn_tensor p;
    const int32_t perm[4] = {2, 3, transpose ? 0 : 1, transpose ? 1 : 0};
    if ((st = lmnn_permute(w, perm, 4, NULL, &p))) goto fail;
    take(&w, &owned, p);
    uint32_t ch = transpose ? d0 : d1, oc = transpose ? d1 : d0;
    if (transpose && kh * kw > 1) {
        if ((st = reshape_to(&w, &owned, 2, (const uint32_t[]){kh * kw, ch * oc}))) goto fail;
        /* The reversed index table ArgMax's select_last_index uses too. */
        uint64_t key = ((uint64_t)1 << 56) | ((uint64_t)((kh * kw) & 0xffffffu) << 32);
        lmnn_tensor rev;
        if (!fe_cache_get(c, key, &rev)) {
            int32_t *idx = malloc((size_t)kh * kw * sizeof *idx);
            if (!idx) {
                st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
                goto fail;
            }
            for (uint32_t i = 0; i < kh * kw; i++)
                idx[i] = (int32_t)(kh * kw - 1 - i);
            lmnn_shape s = LMNN_SHAPE(kh * kw);
            st = fe_cache_upload(c, n, key, &s, idx, (size_t)kh * kw * sizeof *idx, LMNN_INT32,
                                 LMNN_ROW_MAJOR, &rev);
            free(idx);
            if (st) {
                if (owned) fe_free(w);
                return st;
            }
        }
        if ((st = lmnn_index_select(w, 0, rev, NULL, &p))) goto fail;
        take(&w, &owned, p);
    }
    if ((st = reshape_to(&w, &owned, 2, (const uint32_t[]){kh * kw * ch, oc}))) goto fail;
    *out = w;
    return LM_OK;
fail:
    if (owned) fe_free(w);
    return fe_nn_fail(c, n, st);
}

/* The prepared weight for depth tap kd: constant (cached) or made on the
 * device (*owned). ConvInteger's weight is exact float32 minus its zero
 * point (scalar or per output channel, subtracted on the device). */
static lm_status conv_weight(fe_ctx *c, const fe_node *n, const fe_tensor *wk, bool transpose,
                             int64_t groups, int64_t kd, lmnn_tensor *out, bool *owned) {
    const fe_fusion *f = fusion_of(c, n);
    bool integer = is_integer_conv(n);
    lm_status st;
    *owned = false;
    /* A constant zero point is subtracted with a constant weight. */
    uint32_t wzp = conv_inputs(n).wzp;
    const fe_tensor *zp = integer && wk && has_in(n, wzp) ? fe_in_const(c, n, wzp) : NULL;
    if (wk) {
        st = weight_const(c, n, wk, f->weight != NULL, integer, zp, transpose, groups, kd, out);
    } else {
        st = weight_dev(c, n, transpose, kd, out);
        *owned = !st;
        if (!st && integer) {
            lmnn_tensor fl;
            if ((st = lmnn_typecast(*out, LMNN_FLOAT32, &fl)))
                st = fe_nn_fail(c, n, st);
            else
                take(out, owned, fl);
        }
    }
    if (st || !integer || !has_in(n, wzp) || zp) {
        if (st && *owned) fe_free(*out);
        return st;
    }
    lmnn_tensor zd, d;
    bool zo;
    if ((st = fe_in_dev_float(c, n, wzp, &zd, &zo))) {
        if (*owned) fe_free(*out);
        return st;
    }
    /* [OC] (or one value) broadcasts along the matrix's columns (group 1:
     * infer refuses a per-channel one with groups). */
    st = lmnn_binary(LMNN_BINARY_SUB, *out, zd, NULL, &d);
    if (zo) fe_free(zd);
    if (st) {
        if (*owned) fe_free(*out);
        return fe_nn_fail(c, n, st);
    }
    take(out, owned, d);
    return LM_OK;
}

/* The prepared weight and bias of a convolution with options `po`, made
 * once per compile from the host constants: weight `wk` (PyTorch's layout),
 * bias `bk` (NULL: `bias` on the device, or none when that is 0 too) -- no
 * device read, so a capture records only their uploads. A row-major
 * convolution's (the input's dims set) packed for its output pixels per
 * patch row; a transposed one's as the library runs it (by phases: the
 * bias repeated per phase). */
static lm_status packed_operands(fe_ctx *c, const fe_node *n, bool transpose, const fe_tensor *wk,
                                 const fe_tensor *bk, lmnn_tensor bias,
                                 const lmnn_conv2d_options *po, lmnn_tensor *out_w,
                                 lmnn_tensor *out_b) {
    uint64_t wkey = key_of(KEY_CONV_W_PACKED, (uint64_t)(n - c->g->nodes));
    uint64_t bkey = key_of(KEY_CONV_B_PACKED, (uint64_t)(n - c->g->nodes));
    *out_b = bias;
    if (!fe_cache_get(c, wkey, out_w)) {
        void *data;
        size_t size;
        lm_status st =
            fe_host_data(wk, LMNN_FLOAT32, c->g->values[n->inputs[1]].name, &data, &size);
        if (st) return fe_nn_fail(c, n, st);
        lmnn_shape ws = conv_weight_shape(wk);
        lmnn_conv2d_options wo = *po;
        wo.output.dtype = c->bfp8_weights ? LMNN_BFLOAT8_B : c->float_dtype;
        wo.kernel_size[0] = wo.kernel_size[1] = 0; /* the weight's own */
        st = transpose ? lmnn_conv_transpose2d_prepare_weights_host(c->device, &ws, data, size, &wo,
                                                                    out_w)
                       : lmnn_conv2d_prepare_weights_host(c->device, &ws, data, size, &wo, out_w);
        free(data);
        if (!st) st = fe_cache_put(c, wkey, *out_w);
        if (st) return fe_nn_fail(c, n, st);
    }
    if ((!bias.id && !bk) || fe_cache_get(c, bkey, out_b)) return LM_OK;
    lm_status st;
    if (!bk) {
        if (!(st = lmnn_conv2d_prepare_bias(bias, *out_w, out_b)))
            st = fe_cache_put(c, bkey, *out_b);
        return st ? fe_nn_fail(c, n, st) : LM_OK;
    }
    /* The bias once per output pixel the weight computes per patch row:
     * for a convolution, as the library says its weight's form takes it
     * (a fused pooling's columns do not tell). */
    if (!transpose) {
        float *v = malloc((size_t)bk->count * sizeof *v);
        if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint64_t i = 0; i < bk->count; i++)
            v[i] = (float)fe_tensor_get_f64(bk, i);
        lmnn_conv2d_options bo = *po;
        bo.output.dtype = c->float_dtype;
        bo.output.memory = (lmnn_memory_config){0};
        lmnn_shape ws = conv_weight_shape(wk);
        st = lmnn_conv2d_prepare_bias_host(*out_w, &ws, v, (size_t)bk->count * sizeof *v, &bo,
                                           out_b);
        free(v);
        if (!st) st = fe_cache_put(c, bkey, *out_b);
        return st ? fe_nn_fail(c, n, st) : LM_OK;
    }
    lmnn_tensor_info info;
    if ((st = lmnn_tensor_get_info(*out_w, &info))) return fe_nn_fail(c, n, st);
    uint64_t oc = bk->count, cols = info.shape.dims[info.shape.rank - 1];
    if (!oc || cols % oc) return fe_fail(c, n, LM_ERR_INTERNAL, "the bias does not fit the weight");
    float *v = malloc(cols * sizeof *v);
    if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint64_t i = 0; i < cols; i++)
        v[i] = (float)fe_tensor_get_f64(bk, i % oc);
    lmnn_shape bs = LMNN_SHAPE(1, (uint32_t)cols);
    st = fe_cache_upload(c, n, bkey, &bs, v, cols * sizeof *v, c->float_dtype, LMNN_TILE, out_b);
    free(v);
    return st;
}

/* A 1-D signal [N, C, L] held in tiles (*x, owned when *owned) as the flat
 * NHWC image a convolution or pooling reads: [N, L, C], one tile transpose
 * (as [N, C, 1, L] it would cost a copy into that shape, and the library's
 * own transposes into NHWC and back). *x is then owned. */
static lm_status signal_image(lmnn_tensor *x, bool *owned) {
    lmnn_tensor t;
    lm_status st = lmnn_transpose(*x, -1, -2, NULL, &t);
    if (!st) take(x, owned, t);
    return st;
}

/* One 2-D (or 1-D as 2-D) convolution of x (NCHW tile, 4-D) with prepared
 * weight wm. `image`: x is a flat NHWC image of the given N, H, W
 * (fe_in_image), else NULL; `flat_out`: give the result as one
 * (fe_plan.nhwc_out); `rows`: as a row-major one with a page per image row
 * (its readers' fastest form), with the constant weight wm packed for
 * the output pixels the library computes per patch row (made once, for an
 * input of `dims` N, H, W) when `pack`; x's values taken in `cast` (0: its
 * own dtype). */
static lm_status conv2d_call(fe_ctx *c, const fe_node *n, bool transpose, const geom *g,
                             lmnn_tensor x, const uint32_t *image, const uint32_t *dims,
                             bool flat_out, bool rows, const fe_tensor *wk, const fe_tensor *bk,
                             lmnn_tensor wm, lmnn_tensor bias, lmnn_unary_op act,
                             const fe_fusion *f, lmnn_dtype cast, lmnn_tensor *out) {
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_dtype = cast;
    if (image) {
        o.input_layout = LMNN_NHWC;
        o.batch_size = (int32_t)image[0];
        o.input_height = (int32_t)image[1];
        o.input_width = (int32_t)image[2];
    }
    o.flat_output = flat_out;
    int32_t kernel[2];
    geom_2d(g, o.stride, o.padding, o.dilation, kernel);
    o.kernel_size[0] = kernel[0];
    o.kernel_size[1] = kernel[1];
    o.groups = (int32_t)g->group;
    /* (A grouped weight's compact form does not say.) */
    if (!transpose) o.out_channels = (int32_t)c->g->values[n->outputs[0]].type.dims[1];
    if (transpose) {
        int32_t op = (int32_t)g->out_pad[g->sp - 1];
        o.output_padding[0] = g->sp == 1 ? 0 : (int32_t)g->out_pad[g->sp - 2];
        o.output_padding[1] = op;
    }
    if (act != LMNN_UNARY_INVALID) {
        o.activation = act;
        o.activation_alpha = f->act_alpha;
        o.activation_beta = f->act_beta;
    }
    for (int i = 0; i < 2 && !transpose; i++) {
        o.pool_kernel[i] = f->pool_kernel[i];
        o.pool_stride[i] = f->pool_stride[i];
    }
    if (rows) {
        o.output_layout = LMNN_ROW_MAJOR;
        o.output_image_rows = true; /* the readers move a row of pixels at a time */
    }
    if ((rows || transpose || o.pool_kernel[0]) && wk) {
        lmnn_conv2d_options po = o;
        po.batch_size = (int32_t)dims[0];
        po.input_height = (int32_t)dims[1];
        po.input_width = (int32_t)dims[2];
        lm_status st = packed_operands(c, n, transpose, wk, bk, bias, &po, &wm, &bias);
        if (st) return st;
    }
    return transpose ? lmnn_conv_transpose2d(x, wm, bias, &o, out)
                     : lmnn_conv2d(x, wm, bias, &o, out);
}

static lm_status lower_conv_common(fe_ctx *c, const fe_node *n, bool transpose) {
    geom g;
    int64_t oc;
    lm_status st = conv_geom(c, n, transpose, &g, &oc);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0);
    const fe_fusion *f = fusion_of(c, n);
    /* (A fused pooling's output is the chain's: fused bias and activations
     * keep the shape.) */
    const fe_type *ot =
        &c->g->values[f->pool_kernel[0] && f->output != FE_NONE ? f->output : n->outputs[0]].type;
    conv_in ci = conv_inputs(n);
    const fe_tensor *wk = f->weight ? f->weight : fe_in_const(c, n, ci.w);
    lmnn_tensor x, bias = {0}, r = {0};
    bool xo = false, bo = false, integer = is_integer_conv(n), flat_in = false;
    lmnn_dtype cast = 0; /* the dtype x's values are taken in (fe_in_image_cast) */
    if (integer) {
        /* x - x_zero_point in float32 (the padding is then the zero point,
         * as ConvInteger pads). */
        if ((st = fe_in_dev_float(c, n, 0, &x, &xo))) return st;
        if (has_in(n, ci.xzp)) {
            lmnn_tensor zp, d;
            bool zo;
            if ((st = fe_in_dev_float(c, n, ci.xzp, &zp, &zo))) {
                if (xo) fe_free(x);
                return st;
            }
            st = lmnn_binary(LMNN_BINARY_SUB, x, zp, NULL, &d);
            if (zo) fe_free(zp);
            if (st) {
                if (xo) fe_free(x);
                return fe_nn_fail(c, n, st);
            }
            take(&x, &xo, d);
        }
    } else if ((st = g.sp == 3 ? fe_in_image(c, n, 0, &x, &flat_in)
                               : fe_in_image_cast(c, n, 0, &x, &flat_in, &cast))) {
        return st;
    }
    /* The image's N, H, W: a 1-D one is a row (H = 1), as geom_2d has it. */
    const uint32_t image[3] = {(uint32_t)xt->dims[0], (uint32_t)(g.sp == 1 ? 1 : xt->dims[2]),
                               (uint32_t)(g.sp == 1 ? xt->dims[2] : xt->dims[3])};
    bool flat_out = c->plans[n - c->g->nodes].nhwc_out;
    /* A row-major result for readers of images (a bfloat8_b one stays in
     * tiles: bfloat8_b has no row-major form); with a constant weight, its
     * packed form is made from the host constants (packed_operands), and
     * the plain weight and bias are not uploaded. */
    bool rows = flat_out && !transpose && c->float_dtype != LMNN_BFLOAT8_B && g.sp != 3 &&
                !c->plans[n - c->g->nodes].nhwc_tiles;
    const fe_tensor *bk = f->bias                       ? f->bias
                          : !integer && fe_has_in(n, 2) ? fe_in_const(c, n, 2)
                                                        : NULL;
    /* (A fused pooling's weight has a form of its own for any output.) */
    bool pooled = f->pool_kernel[0] && !transpose && g.sp == 2;
    bool host_packed =
        (rows || pooled || (transpose && g.sp != 3)) && wk && !integer && (bk || !fe_has_in(n, 2));
    uint64_t bkey = key_of(KEY_CONV_W_FUSED, ((uint64_t)(n - c->g->nodes) << 32) | 0xffffu);
    if (host_packed) {
        /* packed_operands uploads the weight and bias */
    } else if (f->bias && !fe_cache_get(c, bkey, &bias)) {
        /* The fused bias (a folded batch norm's and/or a following Add's,
         * with the node's own added in): a host constant of the node's own. */
        const fe_tensor *fb = f->bias;
        float *v = malloc((size_t)fb->count * sizeof *v);
        if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint64_t i = 0; i < fb->count; i++)
            v[i] = (float)fe_tensor_get_f64(fb, i);
        lmnn_shape s = LMNN_SHAPE((uint32_t)fb->count);
        st = fe_cache_upload(c, n, bkey, &s, v, (size_t)fb->count * sizeof *v, c->float_dtype,
                             LMNN_TILE, &bias);
        free(v);
        if (st) return st;
    } else if (!integer && !f->bias && fe_has_in(n, 2) && (st = fe_in_dev(c, n, 2, &bias))) {
        if (xo) fe_free(x);
        return st;
    } else if (ci.quant && has_in(n, ci.b)) {
        /* QLinearConv's int32 bias, exact in float32 (infer bounds it). */
        if ((st = fe_in_dev_float(c, n, ci.b, &bias, &bo))) {
            if (xo) fe_free(x);
            return st;
        }
    }
    bool act = f->activation != LMNN_UNARY_INVALID;
    lmnn_tensor_info xi;
    if (g.sp == 1 && !flat_in && !lmnn_tensor_get_info(x, &xi) && xi.layout == LMNN_TILE) {
        if ((st = signal_image(&x, &xo))) {
            if (xo) fe_free(x);
            if (bo) fe_free(bias);
            return fe_nn_fail(c, n, st);
        }
        flat_in = true;
    } else if (g.sp == 1 && !flat_in &&
               (st = reshape_to(&x, &xo, 4,
                                (const uint32_t[]){(uint32_t)xt->dims[0], (uint32_t)xt->dims[1], 1,
                                                   (uint32_t)xt->dims[2]}))) {
        return fe_nn_fail(c, n, st);
    }
    if (g.sp != 3) {
        lmnn_tensor wm = {0};
        bool wo = false;
        if (!host_packed) st = conv_weight(c, n, wk, transpose, g.group, 0, &wm, &wo);
        /* A flat image in gives one out (the library keeps the order); a
         * 1-D result is flat too, [N * OL, OC], two launches from its NCL
         * form (as [N, OL, OC], transposed) where the library's NCHW
         * result [N, OC, 1, OL] would be one matrix of one row per
         * channel to copy out. */
        bool flat_res = flat_in || flat_out || g.sp == 1;
        if (!st) {
            st = conv2d_call(c, n, transpose, &g, x, flat_in ? image : NULL, image, flat_res, rows,
                             host_packed ? wk : NULL, bk, wm, bias, act ? f->activation : 0, f,
                             cast, &r);
            if (st) {
                st = fe_nn_fail(c, n, st);
            } else if (flat_res && !flat_out) {
                lmnn_tensor t = {0};
                lmnn_shape s = fe_shape(ot->rank, ot->dims);
                st = fe_image_nchw(c, n, r, ot->rank, ot->dims, &s, &t);
                fe_free(r);
                r = t;
            }
        }
        if (wo) fe_free(wm);
    } else {
        /* 3-D: one convolution of the whole volume, the kernel's depth taps
         * more rows of its prepared matrix (conv_weight of CONV_KD_ALL). */
        lmnn_tensor wm = {0};
        bool wo = false;
        if (!(st = conv_weight(c, n, wk, transpose, g.group, CONV_KD_ALL, &wm, &wo))) {
            lmnn_conv3d_options o;
            lmnn_conv3d_options_init(&o);
            for (int i = 0; i < 3; i++) {
                o.stride[i] = (int32_t)g.stride[i];
                o.dilation[i] = (int32_t)g.dil[i];
                o.kernel_size[i] = (int32_t)g.kernel[i];
                o.padding[2 * i] = (int32_t)g.pad_b[i];
                o.padding[2 * i + 1] = (int32_t)g.pad_e[i];
                o.output_padding[i] = transpose ? (int32_t)g.out_pad[i] : 0;
            }
            o.groups = (int32_t)g.group;
            if (act) {
                o.activation = f->activation;
                o.activation_alpha = f->act_alpha;
                o.activation_beta = f->act_beta;
            }
            /* Flat NDHWC volumes in and out as planned (fe_layout.c); a
             * row-major one, a page per image row, for readers of images. */
            if (flat_in) {
                o.input_layout = LMNN_NHWC;
                o.batch_size = (int32_t)xt->dims[0];
                o.input_depth = (int32_t)xt->dims[2];
                o.input_height = (int32_t)xt->dims[3];
                o.input_width = (int32_t)xt->dims[4];
            }
            o.flat_output = flat_in || flat_out;
            if (flat_out && c->float_dtype != LMNN_BFLOAT8_B &&
                !c->plans[n - c->g->nodes].nhwc_tiles) {
                o.output_layout = LMNN_ROW_MAJOR;
                o.output_image_rows = true;
            }
            st = transpose ? lmnn_conv_transpose3d(x, wm, bias, &o, &r)
                           : lmnn_conv3d(x, wm, bias, &o, &r);
            if (st) {
                st = fe_nn_fail(c, n, st);
            } else if (flat_in && !flat_out) {
                lmnn_tensor t = {0};
                lmnn_shape s = fe_shape(5, ot->dims);
                st = fe_image_nchw(c, n, r, 5, ot->dims, &s, &t);
                fe_free(r);
                r = t;
            }
        }
        if (wo) fe_free(wm);
    }
    if (xo) fe_free(x);
    if (bo) fe_free(bias);
    if (st) return st;
    if (ci.quant) {
        lmnn_tensor y = {0};
        if ((st = requantize(c, n, r, &y))) return fe_nn_fail(c, n, st);
        r = y;
    }
    return finish(c, n, r, act, true);
}

static lm_status lower_conv(fe_ctx *c, const fe_node *n) {
    return lower_conv_common(c, n, false);
}

/* Whether Conv `n` is a pointwise one: 1x1, stride 1, no padding, not
 * depthwise. The op library reads an image in NHWC tiles as such a
 * convolution's patch matrix, with no patches gathered. */
static bool conv_pointwise(fe_ctx *c, const fe_node *n) {
    geom g;
    int64_t oc;
    if (conv_geom(c, n, false, &g, &oc) || g.sp != 2) return false;
    int64_t ch = fe_in_type(c, n, 0)->dims[1];
    for (int32_t i = 0; i < 2; i++)
        if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad_b[i] || g.pad_e[i]) return false;
    return !(g.group > 1 && g.group == ch && oc == ch);
}

/* A float 2-D or 3-D Conv or ConvTranspose reads and writes flat NHWC
 * images (NDHWC volumes); a pointwise Conv reads its image fastest in
 * tiles. */
static uint32_t conv_images(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    bool conv = !strcmp(n->op_type, "Conv");
    bool ok = (conv || !strcmp(n->op_type, "ConvTranspose")) && fe_image_rank(x) &&
              fe_elem_is_float(x->elem);
    if (!ok) return 0;
    return FE_IMAGE_IN | FE_IMAGE_OUT | (conv && conv_pointwise(c, n) ? FE_TILES_IN : 0);
}

static lm_status lower_convt(fe_ctx *c, const fe_node *n) {
    return lower_conv_common(c, n, true);
}

/* ---- MaxPool, AveragePool ---- */

/* MaxPool's optional second output. */
static bool wants_indices(const fe_node *n) {
    return n->output_count > 1 && n->outputs[1] != FE_NONE;
}

static lm_status pool_read(fe_ctx *c, const fe_node *n, bool is_max, geom *g,
                           int64_t *count_include_pad) {
    const fe_type *x = fe_in_type(c, n, 0);
    lm_status st = geom_read(c, n, is_max ? K_MAXPOOL : K_AVGPOOL, x, NULL, g);
    if (st) return st;
    *count_include_pad = 0;
    if (!is_max) {
        if ((st = fe_attr_int(c, n, "count_include_pad", 0, count_include_pad))) return st;
        for (int32_t i = 0; i < g->sp; i++)
            if (g->dil[i] != 1)
                return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                               "attribute dilations=%lld is not supported for AveragePool",
                               (long long)g->dil[i]);
    }
    /* MaxPool's storage_order orders only the Indices output (pool_indices). */
    return LM_OK;
}

static lm_status infer_pool(fe_ctx *c, const fe_node *n) {
    bool is_max = !strcmp(n->op_type, "MaxPool");
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st = fe_check_attrs(
            c, n,
            is_max ? (const char *const[]){"auto_pad", "ceil_mode", "dilations", "kernel_shape",
                                           "pads", "storage_order", "strides", NULL}
                   : (const char *const[]){"auto_pad", "ceil_mode", "count_include_pad",
                                           "dilations", "kernel_shape", "pads", "strides", NULL});
    if (!st) st = fe_check_elem(c, n, 0, is_max ? numeric_types : float_types);
    if (st) return st;
    geom g;
    int64_t cip;
    if ((st = pool_read(c, n, is_max, &g, &cip))) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if ((st = set_image_out(c, n, x->elem, x, x->dims[1], &g))) return st;
    if (!wants_indices(n)) return LM_OK;
    int64_t order, volume = fe_type_volume(x);
    if ((st = fe_attr_int(c, n, "storage_order", 0, &order))) return st;
    if (order != 0 && order != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute storage_order=%lld is not 0 or 1",
                       (long long)order);
    /* The indices are computed in float32: exact below 2^24. */
    if (volume < 0 || volume > ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "output Indices of an input of %lld elements (at most 2^24)",
                       (long long)volume);
    const fe_type *y = &c->g->values[n->outputs[0]].type;
    return fe_set_out_type(c, n, 1, FE_INT64, y->rank, y->dims);
}

/* out = x sliced to at most [.., h, w] in its last two dims (pooling with
 * explicit padding may give one more window than ONNX's rule). */
static lm_status crop_hw(lmnn_tensor *x, uint32_t h, uint32_t w) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(*x, &info);
    if (st) return st;
    uint32_t r = info.shape.rank;
    if (info.shape.dims[r - 2] <= h && info.shape.dims[r - 1] <= w) return LM_OK;
    int32_t b[LMNN_MAX_DIMS] = {0}, e[LMNN_MAX_DIMS];
    for (uint32_t i = 0; i < r; i++)
        e[i] = (int32_t)info.shape.dims[i];
    if (e[r - 2] > (int32_t)h) e[r - 2] = (int32_t)h;
    if (e[r - 1] > (int32_t)w) e[r - 1] = (int32_t)w;
    lmnn_tensor s;
    if ((st = lmnn_slice(*x, b, e, NULL, r, NULL, &s))) return st;
    fe_free(*x);
    *x = s;
    return LM_OK;
}

enum { KEY_POOL_FACTOR = 20, KEY_POOL_DIVISORS = 29 };

/* lmnn_avg_pool2d (o3 NULL) or lmnn_avg_pool3d of x with `o2` or `o3`,
 * given the divisors its windows may need: made once per node, options and
 * shape, and kept with the weights, so that a trace compile's warm-up makes
 * them and the trace pools without the upload it may not make. */
static lm_status avg_pool(fe_ctx *c, const fe_node *n, lmnn_tensor x, const lmnn_pool2d_options *o2,
                          const lmnn_pool3d_options *o3, lmnn_tensor *out) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(x, &info);
    if (st) return st;
    int64_t k[48];
    size_t m = 0;
    k[m++] = n - c->g->nodes;
    for (uint32_t i = 0; i < info.shape.rank; i++)
        k[m++] = info.shape.dims[i];
    int sp = o3 ? 3 : 2;
    for (int i = 0; i < sp; i++) {
        k[m++] = o3 ? o3->kernel_size[i] : o2->kernel_size[i];
        k[m++] = o3 ? o3->stride[i] : o2->stride[i];
    }
    for (int i = 0; i < 2 * sp; i++)
        k[m++] = o3 ? o3->padding[i] : o2->padding[i];
    k[m++] = o3 ? o3->ceil_mode : o2->ceil_mode;
    k[m++] = o3 ? o3->count_include_pad : o2->count_include_pad;
    k[m++] = o3 ? o3->divisor_override : o2->divisor_override;
    k[m++] = o3 ? (int64_t)o3->input_layout : (int64_t)o2->input_layout;
    k[m++] = o3 ? o3->batch_size : o2->batch_size;
    k[m++] = o3 ? o3->input_depth : 0;
    k[m++] = o3 ? o3->input_height : o2->input_height;
    k[m++] = o3 ? o3->input_width : o2->input_width;
    uint64_t key = key_of(KEY_POOL_DIVISORS, hash64(k, m * sizeof *k, 0));
    lmnn_tensor d;
    if (!fe_cache_get(c, key, &d)) {
        st = o3 ? lmnn_avg_pool3d_divisors(x, o3, &d) : lmnn_avg_pool2d_divisors(x, o2, &d);
        if (st) return st;
        /* None needed is cached too (id 0), so it is asked once. */
        if ((st = fe_cache_put(c, key, d))) {
            fe_free(d);
            return st;
        }
    }
    if (o3) {
        lmnn_pool3d_options q = *o3;
        q.divisors = d;
        return lmnn_avg_pool3d(x, &q, out);
    }
    lmnn_pool2d_options q = *o2;
    q.divisors = d;
    return lmnn_avg_pool2d(x, &q, out);
}

/* One 2-D pooling of x ([N, C, H, W] float tile) with options `o`, giving
 * [N, C, want_h, want_w]. A max kernel of more than 256 taps runs as two
 * passes (max is separable: rows, then columns), which the op library's
 * buffers hold; padding beyond half the kernel (which the library refuses)
 * is added explicitly (-inf for max, zeros for average; for an average that
 * excludes the padding the result is then scaled per output by
 * window / real elements, a host-made map). */
static lm_status pool2d(fe_ctx *c, const fe_node *n, bool is_max, const lmnn_pool2d_options *o,
                        uint32_t want_h, uint32_t want_w, lmnn_tensor x, lmnn_tensor *out) {
    lm_status st;
    int32_t kh = o->kernel_size[0], kw = o->kernel_size[1];
    if (is_max && kh > 1 && kw > 1 && kh * kw > 256) {
        lmnn_pool2d_options rows = *o, cols = *o;
        rows.kernel_size[1] = 1, rows.stride[1] = 1, rows.dilation[1] = 1;
        rows.padding[2] = rows.padding[3] = 0;
        cols.kernel_size[0] = 1, cols.stride[0] = 1, cols.dilation[0] = 1;
        cols.padding[0] = cols.padding[1] = 0;
        lmnn_tensor t;
        lmnn_tensor_info info;
        if ((st = lmnn_tensor_get_info(x, &info))) return st;
        if ((st = pool2d(c, n, true, &rows, want_h, info.shape.dims[3], x, &t))) return st;
        st = pool2d(c, n, true, &cols, want_h, want_w, t, out);
        fe_free(t);
        return st;
    }
    bool wide = false;
    for (int i = 0; i < 4; i++) {
        int32_t dk = (o->kernel_size[i / 2] - 1) * o->dilation[i / 2] + 1;
        wide |= o->padding[i] * 2 > dk;
    }
    if (!wide) {
        if ((st = is_max ? lmnn_max_pool2d(x, o, out) : avg_pool(c, n, x, o, NULL, out))) return st;
        if ((st = crop_hw(out, want_h, want_w))) fe_free(*out);
        return st;
    }
    lmnn_tensor_info info;
    if ((st = lmnn_tensor_get_info(x, &info))) return st;
    uint32_t H = info.shape.dims[2], W = info.shape.dims[3];
    const uint32_t pads[8] = {0,
                              0,
                              0,
                              0,
                              (uint32_t)o->padding[0],
                              (uint32_t)o->padding[1],
                              (uint32_t)o->padding[2],
                              (uint32_t)o->padding[3]};
    lmnn_pad_options po;
    lmnn_pad_options_init(&po);
    po.value = is_max ? -INFINITY : 0.0;
    lmnn_tensor xp, r;
    if ((st = lmnn_pad(x, pads, 4, &po, &xp))) return st;
    lmnn_pool2d_options q = *o;
    memset(q.padding, 0, sizeof q.padding);
    q.count_include_pad = true;
    st = is_max ? lmnn_max_pool2d(xp, &q, &r) : avg_pool(c, n, xp, &q, NULL, &r);
    fe_free(xp);
    if (!st) st = crop_hw(&r, want_h, want_w);
    if (st || is_max || o->count_include_pad) {
        if (st)
            fe_free(r);
        else
            *out = r;
        return st;
    }
    uint64_t key = key_of(KEY_POOL_FACTOR, (uint64_t)(n - c->g->nodes));
    lmnn_tensor f;
    if (!fe_cache_get(c, key, &f)) {
        float *m = malloc((size_t)want_h * want_w * sizeof *m);
        if (!m) {
            fe_free(r);
            return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        int64_t hp = (int64_t)H + o->padding[0] + o->padding[1],
                wp = (int64_t)W + o->padding[2] + o->padding[3];
        int32_t sh = o->stride[0] ? o->stride[0] : kh, sw = o->stride[1] ? o->stride[1] : kw;
        for (uint32_t i = 0; i < want_h; i++)
            for (uint32_t j = 0; j < want_w; j++) {
                int64_t hs = (int64_t)i * sh, ws = (int64_t)j * sw;
                int64_t he = hs + kh < hp ? hs + kh : hp, we = ws + kw < wp ? ws + kw : wp;
                int64_t rh0 = hs > o->padding[0] ? hs : o->padding[0],
                        rh1 = he < o->padding[0] + (int64_t)H ? he : o->padding[0] + (int64_t)H;
                int64_t rw0 = ws > o->padding[2] ? ws : o->padding[2],
                        rw1 = we < o->padding[2] + (int64_t)W ? we : o->padding[2] + (int64_t)W;
                int64_t real = (rh1 > rh0 ? rh1 - rh0 : 0) * (rw1 > rw0 ? rw1 - rw0 : 0);
                m[(size_t)i * want_w + j] =
                    real ? (float)((double)((he - hs) * (we - ws)) / (double)real) : NAN;
            }
        lmnn_shape s = LMNN_SHAPE(1, 1, want_h, want_w);
        st = fe_cache_upload(c, n, key, &s, m, (size_t)want_h * want_w * sizeof *m, LMNN_FLOAT32,
                             LMNN_TILE, &f);
        free(m);
        if (st) {
            fe_free(r);
            return st;
        }
    }
    st = lmnn_binary(LMNN_BINARY_MUL, r, f, NULL, out);
    fe_free(r);
    return st;
}

/* Hands flat NHWC image `r` (consumed) over as output 0 in NCHW order. */
static lm_status nchw_out(fe_ctx *c, const fe_node *n, lmnn_tensor r) {
    lmnn_tensor t;
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    lmnn_shape s = fe_shape(o->rank, o->dims);
    lm_status st = fe_image_nchw(c, n, r, o->rank, o->dims, &s, &t);
    fe_free(r);
    return st ? st : fe_out_from_float(c, n, 0, t);
}

/* The pooling options of a MaxPool or AveragePool node. */
static lm_status pool_options(fe_ctx *c, const fe_node *n, geom *g, lmnn_pool2d_options *o) {
    int64_t cip;
    lm_status st = pool_read(c, n, !strcmp(n->op_type, "MaxPool"), g, &cip);
    if (st) return st;
    lmnn_pool2d_options_init(o);
    geom_2d(g, o->stride, o->padding, o->dilation, o->kernel_size);
    o->ceil_mode = g->ceil_mode;
    o->count_include_pad = cip != 0;
    return LM_OK;
}

/* Pool taps at most in one gather (as pool2d's max; the library keeps a
 * unit's taps in L1 at once). */
#define POOL_TAPS_MAX 256

/* Whether 3-D pooling `g` is one lmnn_max_pool3d or lmnn_avg_pool3d:
 * padding at most half the kernel, at most POOL_TAPS_MAX taps. Its output
 * size is then ONNX's (pool_direct says why). */
static bool pool3d_fits(const geom *g) {
    if (g->kernel[0] * g->kernel[1] * g->kernel[2] > POOL_TAPS_MAX) return false;
    for (int i = 0; i < 3; i++) {
        int64_t half = (g->dil[i] * (g->kernel[i] - 1) + 1) / 2;
        if (g->pad_b[i] > half || g->pad_e[i] > half) return false;
    }
    return true;
}

/* The 3-D pooling `g` (2-D parts in `o`) of x (a [N, C, D, H, W] float
 * tile, or with `flat_in` the flat NDHWC volume) as one lmnn_max_pool3d or
 * lmnn_avg_pool3d (pool3d_fits), flat with `flat_out` (in image rows with
 * `rows`); else *out stays 0 for the per-slice form. */
static lm_status pool3d(fe_ctx *c, const fe_node *n, bool is_max, const geom *g,
                        const lmnn_pool2d_options *o, lmnn_tensor x, bool flat_in, bool flat_out,
                        bool rows, lmnn_tensor *out) {
    *out = (lmnn_tensor){0};
    if (!pool3d_fits(g)) return LM_OK;
    lmnn_pool3d_options p;
    lmnn_pool3d_options_init(&p);
    for (int i = 0; i < 3; i++) {
        p.kernel_size[i] = (int32_t)g->kernel[i];
        p.stride[i] = (int32_t)g->stride[i];
        p.dilation[i] = (int32_t)g->dil[i];
        p.padding[2 * i] = (int32_t)g->pad_b[i];
        p.padding[2 * i + 1] = (int32_t)g->pad_e[i];
    }
    p.ceil_mode = o->ceil_mode;
    p.count_include_pad = o->count_include_pad;
    const fe_type *xt = fe_in_type(c, n, 0);
    if (flat_in) {
        p.input_layout = LMNN_NHWC;
        p.batch_size = (int32_t)xt->dims[0];
        p.input_depth = (int32_t)xt->dims[2];
        p.input_height = (int32_t)xt->dims[3];
        p.input_width = (int32_t)xt->dims[4];
    }
    p.flat_output = flat_in || flat_out;
    if (rows) {
        p.output_layout = LMNN_ROW_MAJOR;
        p.output_image_rows = true;
    }
    return is_max ? lmnn_max_pool3d(x, &p, out) : avg_pool(c, n, x, NULL, &p, out);
}

/* A float 2-D or 3-D pooling the op library runs in one call with ONNX's output
 * size (pool2d's direct path: no wide padding, no two-pass max) reads and
 * writes flat NHWC images. Ceil mode too: the library sizes its output by
 * PyTorch's rule, which geom_read applies to ONNX's (the last window starts
 * inside the input or its begin padding), and clips a window hanging past
 * the end the same way (GoogLeNet's and SqueezeNet's max pools). */
static bool pool_direct(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    geom g;
    lmnn_pool2d_options o;
    if (!fe_image_rank(x) || !fe_elem_is_float(x->elem) || pool_options(c, n, &g, &o)) return false;
    if (x->rank == 5) return pool3d_fits(&g);
    int32_t kh = o.kernel_size[0], kw = o.kernel_size[1];
    bool wide = !strcmp(n->op_type, "MaxPool") && kh > 1 && kw > 1 && kh * kw > 256;
    for (int i = 0; i < 4; i++)
        wide |= o.padding[i] * 2 > (o.kernel_size[i / 2] - 1) * o.dilation[i / 2] + 1;
    return !wide;
}

bool fe_pool_fusable(fe_ctx *c, const fe_node *n, int32_t *kernel, int32_t *stride) {
    const fe_type *x = fe_in_type(c, n, 0);
    geom g;
    lmnn_pool2d_options o;
    if (strcmp(n->op_type, "MaxPool") || wants_indices(n) || !x || x->rank != 4 ||
        !fe_elem_is_float(x->elem) || pool_options(c, n, &g, &o))
        return false;
    const fe_type *y = &c->g->values[n->outputs[0]].type;
    for (int i = 0; i < 2; i++) {
        int64_t in = x->dims[2 + i], k = o.kernel_size[i], s = o.stride[i];
        if (o.dilation[i] != 1 || o.padding[2 * i] || o.padding[2 * i + 1] || in < k ||
            y->dims[2 + i] != (in - k) / s + 1)
            return false;
        kernel[i] = (int32_t)k;
        stride[i] = (int32_t)s;
    }
    return true;
}

static uint32_t pool_images(fe_ctx *c, const fe_node *n) {
    /* pool_indices compares the output with the input's windows in NCHW. */
    return pool_direct(c, n) && !wants_indices(n) ? FE_IMAGE_IN | FE_IMAGE_OUT : 0;
}

/* MaxPool's Indices of output y (NCHW float tile, x's rank) over input x:
 * for each kernel tap in row-major order, the input's window values at that
 * tap (x padded with -inf, sliced with the strides) compared with y; the
 * first tap that equals it gives the position, the input element's index
 * flattened over the whole tensor (spatial dims in row-major order, or
 * column-major for storage_order 1). Host tables give each tap's spatial
 * position per output and each (n, c)'s offset; the sum is float32 in
 * every dtype mode. */
static lm_status pool_indices(fe_ctx *c, const fe_node *n, const geom *g, lmnn_tensor x,
                              lmnn_tensor y, lmnn_tensor *out) {
    int64_t order;
    lm_status st = fe_attr_int(c, n, "storage_order", 0, &order);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0);
    int32_t rank = xt->rank, sp = g->sp;
    int64_t outs = 1, taps = 1, in_sp = 1;
    uint32_t pads[2 * FE_MAX_RANK] = {0};
    for (int32_t d = 0; d < sp; d++) {
        outs *= g->out[d];
        taps *= g->kernel[d];
        in_sp *= g->in[d];
        /* ceil_mode's last window may reach past the end padding. */
        int64_t need = (g->out[d] - 1) * g->stride[d] + (g->kernel[d] - 1) * g->dil[d] + 1;
        int64_t have = g->in[d] + g->pad_b[d] + g->pad_e[d];
        pads[2 * (2 + d)] = (uint32_t)g->pad_b[d];
        pads[2 * (2 + d) + 1] = (uint32_t)(g->pad_e[d] + (need > have ? need - have : 0));
    }
    /* Offsets (n C + c) * spatial volume, [N, C, 1, ...]. */
    int64_t odims[FE_MAX_RANK], pdims[FE_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        odims[d] = d < 2 ? xt->dims[d] : 1;
        pdims[d] = d < 2 ? 1 : g->out[d - 2];
    }
    fe_tensor *off_t;
    if ((st = fe_const_new(c, FE_FLOAT, (uint32_t)rank, odims, &off_t)))
        return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < odims[0] * odims[1]; i++)
        fe_tensor_set_f64(off_t, (uint64_t)i, (double)(i * in_sp));
    lmnn_pad_options po;
    lmnn_pad_options_init(&po);
    po.value = -INFINITY;
    /* left: 1 where no tap has matched yet (y's shape and dtype). The sum
     * starts from the float32 offsets instead (an op's output takes its
     * first input's dtype: in the bf16 modes y's would round positions). */
    lmnn_tensor xp = {0}, acc = {0}, left = {0}, off;
    lmnn_tensor_info yi;
    lmnn_tensor_options ones;
    lmnn_tensor_options_init(&ones);
    if ((st = fe_aux_f32(c, n, 0, off_t, &off))) return st;
    if (!(st = lmnn_tensor_get_info(y, &yi))) ones.dtype = yi.dtype;
    if (st || (st = lmnn_full(c->device, &yi.shape, 1.0, &ones, &left)) ||
        (st = lmnn_pad(x, pads, (uint32_t)rank, &po, &xp))) {
        fe_free(left);
        return fe_nn_fail(c, n, st);
    }
    bool labeled = false; /* fe_aux_f32's errors name the node already */
    for (int64_t t = 0; t < taps && !st; t++) {
        /* Tap t's kernel offsets, then its window values and positions. */
        int64_t k[3], rem = t;
        for (int32_t d = sp - 1; d >= 0; d--) {
            k[d] = rem % g->kernel[d];
            rem /= g->kernel[d];
        }
        int32_t b[FE_MAX_RANK] = {0}, e[FE_MAX_RANK], step[FE_MAX_RANK];
        for (int32_t d = 0; d < rank; d++) {
            bool s = d >= 2;
            b[d] = s ? (int32_t)(k[d - 2] * g->dil[d - 2]) : 0;
            step[d] = s ? (int32_t)g->stride[d - 2] : 1;
            e[d] = s ? b[d] + (int32_t)((g->out[d - 2] - 1) * g->stride[d - 2]) + 1
                     : (int32_t)xt->dims[d];
        }
        fe_tensor *pos_t;
        if ((st = fe_const_new(c, FE_FLOAT, (uint32_t)rank, pdims, &pos_t))) break;
        for (int64_t o = 0; o < outs; o++) {
            int64_t orem = o, at = 0, scale = 1, coord[3];
            bool inside = true;
            for (int32_t d = sp - 1; d >= 0; d--) {
                int64_t od = orem % g->out[d];
                orem /= g->out[d];
                coord[d] = od * g->stride[d] + k[d] * g->dil[d] - g->pad_b[d];
                inside &= coord[d] >= 0 && coord[d] < g->in[d];
            }
            for (int32_t j = 0; j < sp; j++) {
                /* row-major: the last spatial dim fastest; column-major: the first */
                int32_t d = order ? j : sp - 1 - j;
                at += coord[d] * scale;
                scale *= g->in[d];
            }
            fe_tensor_set_f64(pos_t, (uint64_t)o, inside ? (double)at : 0.0);
        }
        lmnn_tensor pos, v = {0}, eq = {0}, hit = {0}, add = {0}, sum, rest;
        if ((st = fe_aux_f32(c, n, 1 + (uint32_t)t, pos_t, &pos))) {
            labeled = true;
            break;
        }
        if (!(st = lmnn_slice(xp, b, e, step, (uint32_t)rank, NULL, &v)) &&
            !(st = lmnn_binary(LMNN_BINARY_EQ, v, y, NULL, &eq)) &&
            !(st = lmnn_binary(LMNN_BINARY_MUL, eq, left, NULL, &hit)) &&
            !(st = lmnn_binary(LMNN_BINARY_MUL, pos, hit, NULL, &add)) &&
            !(st = lmnn_binary(LMNN_BINARY_ADD, acc.id ? acc : off, add, NULL, &sum))) {
            fe_free(acc);
            acc = sum;
            if (!(st = lmnn_binary(LMNN_BINARY_SUB, left, hit, NULL, &rest))) {
                fe_free(left);
                left = rest;
            }
        }
        fe_free(v);
        fe_free(eq);
        fe_free(hit);
        fe_free(add);
    }
    fe_free(xp);
    fe_free(left);
    if (st) {
        fe_free(acc);
        return labeled ? st : fe_nn_fail(c, n, st);
    }
    *out = acc;
    return LM_OK;
}

static lm_status lower_pool(fe_ctx *c, const fe_node *n) {
    bool is_max = !strcmp(n->op_type, "MaxPool");
    geom g;
    lmnn_pool2d_options o;
    lm_status st = pool_options(c, n, &g, &o);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0), *ot = &c->g->values[n->outputs[0]].type;
    lmnn_tensor x, r = {0};
    bool xo, own_msg = false, flat_in;
    uint32_t N = (uint32_t)xt->dims[0], C = (uint32_t)xt->dims[1];
    uint32_t oh = g.sp == 1 ? 1 : (uint32_t)ot->dims[ot->rank - 2],
             ow = (uint32_t)ot->dims[ot->rank - 1];
    if (pool_direct(c, n) && !wants_indices(n)) {
        /* One call, NHWC in and/or out as planned (fe_layout.c). */
        if ((st = fe_in_image(c, n, 0, &x, &flat_in))) return st;
        xo = false;
        if (g.sp == 1 && !flat_in) {
            if ((st = signal_image(&x, &xo))) return fe_nn_fail(c, n, st);
            flat_in = true;
        }
        if (flat_in) {
            /* A 1-D image is a row (H = 1), as geom_2d has it. */
            o.input_layout = LMNN_NHWC;
            o.batch_size = (int32_t)N;
            o.input_height = (int32_t)(g.sp == 1 ? 1 : xt->dims[2]);
            o.input_width = (int32_t)(g.sp == 1 ? xt->dims[2] : xt->dims[3]);
        }
        /* A flat image in gives one out (the library keeps the order). */
        bool flat_out = c->plans[n - c->g->nodes].nhwc_out;
        o.flat_output = flat_in || flat_out;
        /* For readers of images, as a convolution's (conv2d_call). */
        bool rows =
            flat_out && c->float_dtype != LMNN_BFLOAT8_B && !c->plans[n - c->g->nodes].nhwc_tiles;
        if (rows) {
            o.output_layout = LMNN_ROW_MAJOR;
            o.output_image_rows = true;
        }
        if (g.sp == 3)
            st = pool3d(c, n, is_max, &g, &o, x, flat_in, flat_out, rows, &r);
        else
            st = is_max ? lmnn_max_pool2d(x, &o, &r) : avg_pool(c, n, x, &o, NULL, &r);
        if (xo) fe_free(x);
        if (st) return fe_nn_fail(c, n, st);
        if (!r.id) return fe_fail(c, n, LM_ERR_INTERNAL, "the pooling does not fit one call");
        return flat_out || !flat_in ? fe_out_from_float(c, n, 0, r) : nchw_out(c, n, r);
    }
    if ((st = fe_in_dev_float(c, n, 0, &x, &xo))) return st;
    if (g.sp == 1) st = reshape_to(&x, &xo, 4, (const uint32_t[]){N, C, 1, (uint32_t)xt->dims[2]});
    if (!st && g.sp != 3) {
        st = pool2d(c, n, is_max, &o, oh, ow, x, &r);
    } else if (!st && (st = pool3d(c, n, is_max, &g, &o, x, false, false, false, &r)) == LM_OK &&
               r.id) {
        /* One 3-D pooling of the volume. */
    } else if (!st) {
        /* 3-D: each output depth pools the 2-D slices of its depth taps and
         * combines them: the max, or the sum of the slices' averages over
         * the depth divisor (the window's depth clipped to the padded input
         * when the padding counts, else its real taps). */
        uint32_t H = (uint32_t)xt->dims[3], W = (uint32_t)xt->dims[4];
        int64_t od_n = g.out[0], id_n = g.in[0];
        lmnn_tensor *slices = calloc((size_t)od_n, sizeof *slices);
        if (!slices) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (int64_t od = 0; !st && od < od_n; od++) {
            lmnn_tensor acc = {0};
            int64_t taps = 0;
            for (int64_t kd = 0; !st && kd < g.kernel[0]; kd++) {
                int64_t id = od * g.stride[0] + kd * g.dil[0] - g.pad_b[0];
                if (id < 0 || id >= id_n) continue;
                int32_t b[5] = {0, 0, (int32_t)id, 0, 0},
                        e[5] = {(int32_t)N, (int32_t)C, (int32_t)id + 1, (int32_t)H, (int32_t)W};
                lmnn_tensor xs, xs4, y;
                if ((st = lmnn_slice(x, b, e, NULL, 5, NULL, &xs))) break;
                lmnn_shape s4 = LMNN_SHAPE(N, C, H, W);
                st = lmnn_reshape(xs, &s4, NULL, &xs4);
                fe_free(xs);
                if (st) break;
                st = pool2d(c, n, is_max, &o, oh, ow, xs4, &y);
                fe_free(xs4);
                if (st) break;
                if (!taps++)
                    acc = y;
                else {
                    lmnn_tensor s2;
                    st = lmnn_binary(is_max ? LMNN_BINARY_MAXIMUM : LMNN_BINARY_ADD, acc, y, NULL,
                                     &s2);
                    fe_free(acc);
                    fe_free(y);
                    acc = s2;
                }
            }
            if (!st && !taps) {
                /* Only with ceil_mode and depth padding; PyTorch has no such window. */
                st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                             "a window entirely in the depth padding is not supported");
                own_msg = true;
            }
            if (!st && !is_max) {
                int64_t ds = od * g.stride[0], dp = id_n + g.pad_b[0] + g.pad_e[0];
                int64_t div =
                    o.count_include_pad ? (ds + g.kernel[0] < dp ? g.kernel[0] : dp - ds) : taps;
                if (div != 1) {
                    lmnn_tensor s2;
                    st = lmnn_binary_scalar(LMNN_BINARY_DIV, acc, (double)div, NULL, &s2);
                    fe_free(acc);
                    acc = s2;
                }
            }
            if (!st) {
                lmnn_shape s5 = LMNN_SHAPE(N, C, 1, oh, ow);
                st = lmnn_reshape(acc, &s5, NULL, &slices[od]);
            }
            fe_free(acc);
        }
        if (!st) st = lmnn_concat(slices, (uint32_t)od_n, 2, NULL, &r);
        for (int64_t i = 0; slices && i < od_n; i++)
            fe_free(slices[i]);
        free(slices);
    }
    if (!st && g.sp == 1) st = reshape_to(&r, (bool[]){true}, 3, (const uint32_t[]){N, C, ow});
    if (st) {
        if (xo) fe_free(x);
        fe_free(r);
        return own_msg ? st : fe_nn_fail(c, n, st);
    }
    if (is_max && wants_indices(n)) {
        lmnn_tensor idx, x_nd = x;
        bool nd_owned = false;
        /* x in its own rank again (1-D pooling ran as 2-D). */
        if (g.sp == 1)
            st = reshape_to(&x_nd, &nd_owned, 3, (const uint32_t[]){N, C, (uint32_t)xt->dims[2]});
        if (!st) st = pool_indices(c, n, &g, x_nd, r, &idx);
        if (nd_owned) fe_free(x_nd);
        if (!st) st = fe_out_from_float(c, n, 1, idx);
        if (st) {
            if (xo) fe_free(x);
            fe_free(r);
            return st;
        }
    }
    if (xo) fe_free(x);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- MaxUnpool ---- */

/* Elements of the [inputs, outputs] selection MaxUnpool builds at most. */
#define UNPOOL_MAX_PAIRS (UINT64_C(1) << 22)

enum { KEY_UNPOOL_IOTA = 24 };

/* The unpooled shape from the attributes (`base`: what the indices
 * address) and the output's (`dims`: output_shape when given, the base then
 * padded with zeros at the end of each spatial dim, as ONNX's reference). */
static lm_status unpool_shape(fe_ctx *c, const fe_node *n, int64_t *base, int64_t *dims) {
    const fe_type *x = fe_in_type(c, n, 0);
    geom g;
    lm_status st = geom_read(c, n, K_CONVT, x, NULL, &g);
    if (st) return st;
    base[0] = dims[0] = x->dims[0];
    base[1] = dims[1] = x->dims[1];
    for (int32_t i = 0; i < g.sp; i++) {
        /* (in - 1) * stride + kernel - pads (no dilation, no output padding). */
        base[2 + i] = (g.in[i] - 1) * g.stride[i] + g.kernel[i] - g.pad_b[i] - g.pad_e[i];
        if (base[2 + i] < 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "the output is empty");
        dims[2 + i] = base[2 + i];
    }
    if (!fe_has_in(n, 2)) return LM_OK;
    const fe_tensor *k;
    if ((st = fe_in_const_required(c, n, 2, &k))) return st;
    if (k->rank != 1 || (int64_t)k->count != x->rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "output_shape must have %d values", x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        dims[d] = fe_tensor_get_i64(k, (uint64_t)d);
        if (dims[d] < base[d] || (d < 2 && dims[d] != base[d]))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "output_shape[%d] = %lld below the unpooled size %lld is not supported",
                           d, (long long)dims[d], (long long)base[d]);
    }
    return LM_OK;
}

static lm_status infer_maxunpool(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){"kernel_shape", "pads", "strides", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (!st) st = fe_check_elem(c, n, 1, (const fe_elem[]){FE_INT64, FE_UNDEFINED});
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *ix = fe_in_type(c, n, 1);
    if (ix->rank != x->rank) return fe_fail(c, n, LM_ERR_INVALID_FILE, "I must have X's shape");
    for (int32_t d = 0; d < x->rank; d++)
        if (ix->dims[d] != x->dims[d])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "I must have X's shape");
    int64_t base[FE_MAX_RANK], dims[FE_MAX_RANK];
    if ((st = unpool_shape(c, n, base, dims))) return st;
    fe_type o = {.elem = x->elem, .rank = x->rank};
    for (int32_t d = 0; d < x->rank; d++)
        o.dims[d] = base[d];
    int64_t vin = fe_type_volume(x), vout = fe_type_volume(&o);
    if (vin <= 0 || vout <= 0 || vout >= (INT64_C(1) << 24) ||
        (uint64_t)vin * (uint64_t)vout > UNPOOL_MAX_PAIRS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld inputs into %lld outputs are beyond this compiler's MaxUnpool (at "
                       "most %llu pairs)",
                       (long long)vin, (long long)vout, (unsigned long long)UNPOOL_MAX_PAIRS);
    return fe_set_out_type(c, n, 0, x->elem, x->rank, dims);
}

/* out[p] = the x whose index (into the flattened output) is p, else 0: a
 * selection [inputs, outputs] = (I == iota), where(selection, x, 0) summed
 * over the inputs (exact; NaN and Inf stay where they land). */
static lm_status lower_maxunpool(fe_ctx *c, const fe_node *n) {
    const fe_type *xt = fe_in_type(c, n, 0), *ot = &c->g->values[n->outputs[0]].type;
    int64_t base[FE_MAX_RANK], dims[FE_MAX_RANK];
    lm_status st = unpool_shape(c, n, base, dims);
    if (st) return st;
    fe_type bt = {.elem = xt->elem, .rank = xt->rank};
    for (int32_t d = 0; d < xt->rank; d++)
        bt.dims[d] = base[d];
    uint32_t vin = (uint32_t)fe_type_volume(xt), vout = (uint32_t)fe_type_volume(&bt);
    lmnn_tensor iota, zero, x, ix, sel = {0}, w = {0}, r = {0};
    uint64_t key = key_of(KEY_UNPOOL_IOTA, vout);
    if (!fe_cache_get(c, key, &iota)) {
        float *v = malloc((size_t)vout * sizeof *v);
        if (!v) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint32_t i = 0; i < vout; i++)
            v[i] = (float)i;
        lmnn_shape s = LMNN_SHAPE(1, vout);
        st = fe_cache_upload(c, n, key, &s, v, (size_t)vout * sizeof *v, LMNN_FLOAT32, LMNN_TILE,
                             &iota);
        free(v);
        if (st) return st;
    }
    if ((st = zero_scalar(c, n, &zero))) return st;
    bool xo, io;
    if ((st = fe_in_dev_float(c, n, 0, &x, &xo))) return st;
    if ((st = fe_in_dev_float(c, n, 1, &ix, &io))) {
        if (xo) fe_free(x);
        return st;
    }
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dims[0] = 0;
    ro.dim_count = 1;
    if (!(st = reshape_to(&x, &xo, 2, (const uint32_t[]){vin, 1})) &&
        !(st = reshape_to(&ix, &io, 2, (const uint32_t[]){vin, 1})) &&
        !(st = lmnn_binary(LMNN_BINARY_EQ, ix, iota, NULL, &sel)) &&
        !(st = lmnn_where(sel, x, zero, &w)) && !(st = lmnn_sum(w, &ro, &r))) {
        bool ro_owned = true;
        uint32_t bd[FE_MAX_RANK], pads[2 * FE_MAX_RANK] = {0};
        bool pad = false;
        for (int32_t d = 0; d < ot->rank; d++) {
            bd[d] = (uint32_t)base[d];
            pads[2 * d + 1] = (uint32_t)(ot->dims[d] - base[d]);
            pad |= pads[2 * d + 1] != 0;
        }
        if ((st = reshape_to(&r, &ro_owned, (uint32_t)ot->rank, bd))) {
            r = (lmnn_tensor){0};
        } else if (pad) {
            lmnn_tensor p;
            if (!(st = lmnn_pad(r, pads, (uint32_t)ot->rank, NULL, &p))) take(&r, &ro_owned, p);
        }
    }
    if (xo) fe_free(x);
    if (io) fe_free(ix);
    fe_free(sel);
    fe_free(w);
    if (st) {
        fe_free(r);
        return fe_nn_fail(c, n, st);
    }
    return fe_out_from_float(c, n, 0, r);
}

/* ---- GlobalAveragePool, GlobalMaxPool ---- */

static lm_status infer_global_pool(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 3)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be N x C x ..., given rank %d",
                       x->rank);
    if (fe_type_volume(x) == 0) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X is empty");
    int64_t dims[FE_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        dims[i] = i < 2 ? x->dims[i] : 1;
    return fe_set_out_type(c, n, 0, x->elem, x->rank, dims);
}

static lm_status lower_global_pool(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    lmnn_tensor a, r;
    bool flat = false, owned = false;
    bool is_max = !strcmp(n->op_type, "GlobalMaxPool");
    lm_status st = x->rank == 4 ? fe_in_image(c, n, 0, &a, &flat) : LM_OK;
    if (!st && flat) {
        lmnn_shape s = LMNN_SHAPE(1, (uint32_t)x->dims[0], (uint32_t)(x->dims[2] * x->dims[3]),
                                  (uint32_t)x->dims[1]);
        st = fe_image_tiles(c, n, a, &s, &a, &owned);
    } else if (!st) {
        st = fe_in_dev(c, n, 0, &a);
    }
    if (st) return st;
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    if (flat)
        o.dim_mask = 1u << 2; /* [1, N, H * W, C]'s pixels */
    else
        for (int32_t i = 2; i < x->rank; i++)
            o.dim_mask |= 1u << i;
    o.keepdim = true;
    st = is_max ? lmnn_max(a, &o, &r) : lmnn_mean(a, &o, &r);
    if (owned) fe_free(a);
    if (st) return fe_nn_fail(c, n, st);
    /* [1, N, 1, C] holds [N, C, 1, 1]'s elements in order either way: the
     * flat image [1, 1, N, C] when planned (fe_plan.nhwc_out), else the
     * NCHW value. */
    if (flat || c->plans[n - c->g->nodes].nhwc_out) {
        lmnn_shape s = c->plans[n - c->g->nodes].nhwc_out
                           ? LMNN_SHAPE(1, 1, (uint32_t)x->dims[0], (uint32_t)x->dims[1])
                           : LMNN_SHAPE((uint32_t)x->dims[0], (uint32_t)x->dims[1], 1, 1);
        if ((st = fe_reshape_owned(c, n, r, &s, &r))) return st;
    }
    return finish(c, n, r, false, false);
}

/* A rank-4 global pool reads images (tiles best) and writes one. */
static uint32_t global_pool_images(fe_ctx *c, const fe_node *n) {
    return fe_in_type(c, n, 0)->rank == 4 ? FE_IMAGE_IN | FE_IMAGE_OUT | FE_TILES_IN : 0;
}

/* ---- BatchNormalization ---- */

static lm_status infer_batchnorm(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 5, 5);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"epsilon", "momentum", "training_mode", "spatial",
                                                  "is_test", "consumed_inputs", NULL});
    for (uint32_t i = 0; i < 5 && !st; i++)
        st = fe_check_elem(c, n, i, float_types);
    int64_t training, spatial, is_test;
    if (!st) st = fe_attr_int(c, n, "training_mode", 0, &training);
    if (!st) st = fe_attr_int(c, n, "spatial", 1, &spatial);
    if (!st) st = fe_attr_int(c, n, "is_test", 1, &is_test);
    if (st) return st;
    if (training != 0 && training != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute training_mode=%lld is not 0 or 1",
                       (long long)training);
    if (!spatial) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute spatial=0 is not supported");
    if (!is_test)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "attribute is_test=0 is not supported (before opset 14; later opsets "
                       "say training_mode=1)");
    /* Training mode (opset 14 on) may give the updated running mean and
     * variance; the older saved statistics are not computed. */
    for (uint32_t i = 1; i < n->output_count; i++)
        if (n->outputs[i] != FE_NONE && (!training || i > 2))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "output %u (a training statistic) is not supported%s", i,
                           training ? "" : " without training_mode=1");
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be N x C x ...");
    for (uint32_t i = 1; i < 5; i++) {
        const fe_type *p = fe_in_type(c, n, i);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be [%lld]", i,
                           (long long)x->dims[1]);
    }
    if ((st = same_type_out(c, n))) return st;
    for (uint32_t i = 1; i < 3 && i < n->output_count; i++)
        if (n->outputs[i] != FE_NONE) {
            const fe_type *m = fe_in_type(c, n, 2 + i);
            if ((st = fe_set_out_type(c, n, i, m->elem, m->rank, m->dims))) return st;
        }
    return LM_OK;
}

/* Training mode: the batch's own mean and (biased) variance over every dim
 * but the channels normalise X; the running statistics move towards them,
 * running = input * momentum + batch * (1 - momentum). */
static lm_status lower_batchnorm_training(fe_ctx *c, const fe_node *n, lmnn_tensor *t,
                                          const lmnn_norm_options *o) {
    float momentum;
    lm_status st = fe_attr_float(c, n, "momentum", 0.9f, &momentum);
    if (st) return st;
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dim_mask = ~(uint32_t)2 & ((1u << fe_in_type(c, n, 0)->rank) - 1);
    ro.correction = 0;
    lmnn_tensor stat[2] = {{0}, {0}}, y = {0};
    if (!(st = lmnn_mean(t[0], &ro, &stat[0])) && !(st = lmnn_var(t[0], &ro, &stat[1])))
        st = lmnn_batch_norm(t[0], stat[0], stat[1], t[1], t[2], o, &y);
    bool labeled = false; /* fe_out_dev's errors name the node already */
    for (uint32_t i = 1; i < 3 && !st; i++) {
        if (i >= n->output_count || n->outputs[i] == FE_NONE) continue;
        lmnn_tensor kept = {0}, moved = {0}, run;
        if (!(st = lmnn_mul_scalar(t[2 + i], momentum, &kept)) &&
            !(st = lmnn_mul_scalar(stat[i - 1], 1.0 - (double)momentum, &moved)) &&
            !(st = lmnn_add(kept, moved, &run)))
            labeled = (st = fe_out_dev(c, n, i, run)) != LM_OK;
        fe_free(kept);
        fe_free(moved);
    }
    fe_free(stat[0]);
    fe_free(stat[1]);
    if (st) {
        fe_free(y);
        return labeled ? st : fe_nn_fail(c, n, st);
    }
    return finish(c, n, y, false, false);
}

/* Inference BatchNormalization with constant parameters on a rank-4 float
 * value: a value per channel times it and one added, so it runs on images
 * (FE_IMAGE_ALL; batchnorm_on_image). */
static uint32_t batchnorm_images(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t training;
    if (x->rank != 4 || !fe_elem_is_float(x->elem) ||
        fe_attr_int(c, n, "training_mode", 0, &training) || training)
        return 0;
    for (uint32_t i = 1; i < 5; i++) {
        const fe_tensor *k = fe_in_const(c, n, i);
        if (!k || (int64_t)k->count != x->dims[1]) return 0;
    }
    for (uint32_t i = 1; i < n->output_count; i++)
        if (n->outputs[i] != FE_NONE && c->g->values[n->outputs[i]].use_count) return 0;
    return FE_IMAGE_ALL;
}

/* y = x * s + t per channel, s = scale / sqrt(var + eps), t = beta - mean *
 * s (the host's double math, as a convolution's folded normalization), on
 * the flat image x; a fused activation with the addition. */
static lm_status batchnorm_on_image(fe_ctx *c, const fe_node *n, float eps) {
    int64_t ch = fe_in_type(c, n, 0)->dims[1];
    fe_tensor *rows[2];
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < 2 && !st; i++)
        st = fe_const_new(c, FE_FLOAT, 1, &ch, &rows[i]);
    if (st) return fe_nn_fail(c, n, st);
    const fe_tensor *scale = fe_in_const(c, n, 1), *beta = fe_in_const(c, n, 2),
                    *mean = fe_in_const(c, n, 3), *var = fe_in_const(c, n, 4);
    for (uint64_t k = 0; k < (uint64_t)ch; k++) {
        double sk = fe_tensor_get_f64(scale, k) / sqrt(fe_tensor_get_f64(var, k) + (double)eps);
        fe_tensor_set_f64(rows[0], k, sk);
        fe_tensor_set_f64(rows[1], k, fe_tensor_get_f64(beta, k) - fe_tensor_get_f64(mean, k) * sk);
    }
    lmnn_tensor x, sd, td, y = {0}, r;
    bool owned;
    if ((st = fe_aux(c, n, 0, rows[0], LMNN_TILE, &sd)) ||
        (st = fe_aux(c, n, 1, rows[1], LMNN_TILE, &td)) || (st = fe_in_ew(c, n, 0, &x, &owned)))
        return st;
    const fe_fusion *f = fusion_of(c, n);
    lmnn_binary_options o;
    lmnn_binary_options_init(&o);
    o.activation = f->activation;
    o.activation_alpha = f->act_alpha;
    o.activation_beta = f->act_beta;
    st = lmnn_mul(x, sd, &y);
    if (owned) fe_free(x);
    if (!st) st = lmnn_binary(LMNN_BINARY_ADD, y, td, &o, &r);
    fe_free(y);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_ew(c, n, r);
}

static lm_status lower_batchnorm(fe_ctx *c, const fe_node *n) {
    float eps;
    int64_t training;
    lm_status st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps);
    if (!st) st = fe_attr_int(c, n, "training_mode", 0, &training);
    if (st) return st;
    if (c->plans[n - c->g->nodes].nhwc_out) return batchnorm_on_image(c, n, eps);
    lmnn_tensor t[5], r;
    for (uint32_t i = 0; i < 5; i++)
        if ((st = fe_in_dev(c, n, i, &t[i]))) return st;
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.eps = eps;
    if (training) return lower_batchnorm_training(c, n, t, &o);
    const fe_fusion *f = fusion_of(c, n);
    o.activation = f->activation;
    o.activation_alpha = f->act_alpha;
    o.activation_beta = f->act_beta;
    if ((st = lmnn_batch_norm(t[0], t[3], t[4], t[1], t[2], &o, &r))) return fe_nn_fail(c, n, st);
    return finish(c, n, r, true, false);
}

/* ---- group normalizations: InstanceNormalization, GroupNormalization
 * and the spelled-out chain (fe_fuse.c) ---- */

uint32_t fe_group_norm_images(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    return x->rank == 4 && fe_elem_is_float(x->elem) ? FE_IMAGE_ALL | FE_TILES_IN : 0;
}

/* lmnn_group_norm of node n's input 0 in `groups` groups with per-channel
 * w and b (zero handles when absent) and the node's activation in the same
 * program (the one step fe_fuse adds to these nodes; the chain's affine
 * maps are in w and b), as its output 0. On images (fe_plan.nhwc_out: the input comes as
 * one, FE_IMAGE_ALL) it normalizes the flat NHWC image as it is, channels
 * last ([1, N, H * W, C]), and hands one over. */
static lm_status group_norm_call(fe_ctx *c, const fe_node *n, uint32_t groups, lmnn_tensor w,
                                 lmnn_tensor b, float eps) {
    const fe_type *xt = fe_in_type(c, n, 0);
    lmnn_tensor x, r;
    bool flat = c->plans[n - c->g->nodes].nhwc_out, owned = false;
    uint32_t N = flat ? (uint32_t)xt->dims[0] : 0, C = flat ? (uint32_t)xt->dims[1] : 0,
             P = flat ? (uint32_t)(xt->dims[2] * xt->dims[3]) : 0;
    lmnn_shape s = LMNN_SHAPE(1, N, P, C);
    lm_status st = flat ? fe_in_image_tiles(c, n, 0, &s, &x, &owned) : fe_in_dev(c, n, 0, &x);
    if (st) return st;
    const fe_fusion *f = fusion_of(c, n);
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.eps = eps;
    o.channels_last = flat;
    o.activation = f->activation;
    o.activation_alpha = f->act_alpha;
    o.activation_beta = f->act_beta;
    st = lmnn_group_norm(x, groups, w, b, &o, &r);
    if (owned) fe_free(x);
    if (st) return fe_nn_fail(c, n, st);
    lmnn_shape rows = LMNN_SHAPE(1, 1, N * P, C);
    if (flat && (st = fe_reshape_owned(c, n, r, &rows, &r))) return st;
    return finish(c, n, r, true, true);
}

/* ---- InstanceNormalization ---- */

static lm_status infer_instancenorm(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"epsilon", NULL});
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_check_elem(c, n, i, float_types);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 3) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be N x C x D1 x ...");
    for (uint32_t i = 1; i < 3; i++) {
        const fe_type *p = fe_in_type(c, n, i);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be [%lld]", i,
                           (long long)x->dims[1]);
    }
    return same_type_out(c, n);
}

static lm_status lower_instancenorm(fe_ctx *c, const fe_node *n) {
    float eps;
    lm_status st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps);
    if (st) return st;
    lmnn_tensor s, b;
    if ((st = fe_in_dev(c, n, 1, &s)) || (st = fe_in_dev(c, n, 2, &b))) return st;
    /* Instance norm is group norm with one channel per group. */
    return group_norm_call(c, n, (uint32_t)fe_in_type(c, n, 0)->dims[1], s, b, eps);
}

/* ---- GroupNormalization ---- */

/* Opsets 18 to 20 give scale and bias per group ([G]), 21 per channel ([C],
 * as PyTorch's GroupNorm). */
static bool groupnorm_per_group(const fe_node *n) {
    return n->opset < 21;
}

static lm_status groupnorm_groups(fe_ctx *c, const fe_node *n, int64_t *out) {
    lm_status st = fe_attr_int(c, n, "num_groups", INT64_MIN, out);
    if (st) return st;
    if (*out == INT64_MIN)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute num_groups is missing");
    return LM_OK;
}

static lm_status infer_groupnorm(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"epsilon", "num_groups", "stash_type", NULL});
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_check_elem(c, n, i, float_types);
    int64_t groups, stash;
    if (!st) st = groupnorm_groups(c, n, &groups);
    if (!st) st = fe_attr_int(c, n, "stash_type", 1, &stash);
    if (st) return st;
    if (stash != 1)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "stash_type=%lld is not supported (the statistics are float32: 1)",
                       (long long)stash);
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be N x C x D1 x ...");
    int64_t ch = x->dims[1];
    if (groups < 1 || ch % groups)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "num_groups=%lld must be positive and divide the %lld channels",
                       (long long)groups, (long long)ch);
    int64_t want = groupnorm_per_group(n) ? groups : ch;
    for (uint32_t i = 1; i < 3; i++) {
        const fe_type *p = fe_in_type(c, n, i);
        if (p->rank != 1 || p->dims[0] != want)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be [%lld] (one value per %s)",
                           i, (long long)want, groupnorm_per_group(n) ? "group" : "channel");
    }
    return same_type_out(c, n);
}

/* Input i of GroupNormalization n as one value per channel: as it is (opset
 * 21), else each group's value repeated over its C / G channels (on the
 * host for a constant, else on the device: [G, 1] times ones [1, C / G]). */
static lm_status groupnorm_param(fe_ctx *c, const fe_node *n, uint32_t i, int64_t groups,
                                 lmnn_tensor *out, bool *out_owned) {
    *out_owned = false;
    if (!groupnorm_per_group(n)) return fe_in_dev(c, n, i, out);
    int64_t ch = fe_in_type(c, n, 0)->dims[1], per = ch / groups;
    const fe_tensor *k = fe_in_const(c, n, i);
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_FLOAT, k ? 1 : 2, k ? &ch : (const int64_t[]){1, per}, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (uint64_t j = 0; j < t->count; j++)
        fe_tensor_set_f64(t, j, k ? fe_tensor_get_f64(k, j / (uint64_t)per) : 1.0);
    if (k) return fe_aux(c, n, i - 1, t, LMNN_TILE, out);
    lmnn_tensor v, ones, col, wide;
    if ((st = fe_in_dev(c, n, i, &v)) || (st = fe_aux(c, n, i - 1, t, LMNN_TILE, &ones))) return st;
    lmnn_shape cs = LMNN_SHAPE((uint32_t)groups, 1), flat = LMNN_SHAPE((uint32_t)ch);
    if ((st = lmnn_reshape(v, &cs, NULL, &col))) return fe_nn_fail(c, n, st);
    st = lmnn_binary(LMNN_BINARY_MUL, col, ones, NULL, &wide);
    fe_free(col);
    if (st) return fe_nn_fail(c, n, st);
    st = lmnn_reshape(wide, &flat, NULL, out);
    fe_free(wide);
    if (st) return fe_nn_fail(c, n, st);
    *out_owned = true;
    return LM_OK;
}

static lm_status lower_groupnorm(fe_ctx *c, const fe_node *n) {
    float eps;
    int64_t groups;
    lm_status st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps);
    if (!st) st = groupnorm_groups(c, n, &groups);
    if (st) return st;
    lmnn_tensor s = {0}, b = {0};
    bool so = false, bo = false;
    if (!(st = groupnorm_param(c, n, 1, groups, &s, &so)))
        st = groupnorm_param(c, n, 2, groups, &b, &bo);
    if (!st) st = group_norm_call(c, n, (uint32_t)groups, s, b, eps);
    if (so) fe_free(s);
    if (bo) fe_free(b);
    return st;
}

lm_status fe_lower_group_norm(fe_ctx *c, const fe_node *n) {
    const fe_fusion *f = fusion_of(c, n);
    lmnn_tensor w, b;
    lm_status st = fe_aux(c, n, 0, f->weight, LMNN_TILE, &w);
    if (!st) st = fe_aux(c, n, 1, f->bias, LMNN_TILE, &b);
    return st ? st : group_norm_call(c, n, f->group_norm, w, b, f->eps);
}

/* ---- LayerNormalization, RMSNormalization ----
 * RMSNormalization (opset 23) is LayerNormalization without the mean, the
 * bias and the statistics outputs: X / sqrt(mean(X^2) + epsilon) * scale
 * over the dims from axis on. */

static bool is_rms(const fe_node *n) {
    return !strcmp(n->op_type, "RMSNormalization");
}

static lm_status infer_layernorm(fe_ctx *c, const fe_node *n) {
    bool rms = is_rms(n);
    lm_status st = fe_check_inputs(c, n, 2, rms ? 2 : 3);
    if (!st && rms && n->output_count > 1)
        st = fe_fail(c, n, LM_ERR_INVALID_FILE,
                     "RMSNormalization has one output (Y); the node lists %u", n->output_count);
    if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){"axis", "epsilon", "stash_type", NULL});
    for (uint32_t i = 0; i < 3 && !st; i++)
        st = fe_check_elem(c, n, i, float_types);
    int64_t axis, stash;
    if (!st) st = fe_attr_int(c, n, "axis", -1, &axis);
    if (!st) st = fe_attr_int(c, n, "stash_type", 1, &stash);
    const fe_type *x = fe_in_type(c, n, 0);
    int32_t ax;
    if (!st) st = fe_axis(c, n, axis, x->rank, &ax);
    if (st) return st;
    /* stash_type names the statistics' precision: float32 (1) is what the
     * op library computes in; a lower one would only lose accuracy. */
    if (stash != 1)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute stash_type=%lld is not supported",
                       (long long)stash);
    for (uint32_t i = 1; i < 3; i++) {
        const fe_type *p = fe_in_type(c, n, i);
        if (!p) continue;
        fe_type bc;
        if ((st = fe_broadcast(c, n, x, p, &bc))) return st;
        if (bc.rank != x->rank || p->rank > x->rank - ax)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u must have X's trailing shape from axis %d", i, ax);
    }
    if ((st = same_type_out(c, n))) return st;
    int64_t dims[FE_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        dims[i] = i < ax ? x->dims[i] : 1;
    /* Mean and InvStdDev are optional outputs (PyTorch's export has Y
     * alone). */
    for (uint32_t i = 1; i < 3 && i < n->output_count && !st; i++)
        st = fe_set_out_type(c, n, i, FE_FLOAT, x->rank, dims);
    return st;
}

/* Over the last dim alone, without the statistics (whose shapes follow
 * X's), it reads channels-last rows held flat (FE_LAST_ALL). */
static uint32_t layernorm_images(fe_ctx *c, const fe_node *n) {
    int64_t axis;
    const fe_type *x = fe_in_type(c, n, 0);
    if (fe_attr_int(c, n, "axis", -1, &axis) || (axis != -1 && axis != x->rank - 1)) return 0;
    for (uint32_t i = 1; i < n->output_count; i++)
        if (n->outputs[i] != FE_NONE) return 0;
    return FE_LAST_ALL;
}

/* Input i of a normalization over X's dims from ax on (scale or bias), as
 * the op library takes it: of the normalized shape. One that broadcasts to
 * it ([1, D] for [T, D]) is expanded into a tensor the caller owns
 * (*out_owned). */
static lm_status norm_param(fe_ctx *c, const fe_node *n, uint32_t i, int32_t ax, lmnn_tensor *out,
                            bool *out_owned) {
    *out_owned = false;
    lm_status st = fe_in_dev(c, n, i, out);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *p = fe_in_type(c, n, i);
    bool whole = true;
    for (int32_t d = 0; d < p->rank; d++)
        whole &= p->dims[p->rank - 1 - d] == x->dims[x->rank - 1 - d];
    if (whole && p->rank == x->rank - ax) return LM_OK;
    lmnn_shape s = fe_shape(x->rank - ax, x->dims + ax);
    lmnn_tensor e;
    if ((st = lmnn_expand(*out, &s, NULL, &e))) return fe_nn_fail(c, n, st);
    *out = e;
    *out_owned = true;
    return LM_OK;
}

static lm_status lower_layernorm(fe_ctx *c, const fe_node *n) {
    int64_t axis;
    float eps;
    lm_status st = fe_attr_int(c, n, "axis", -1, &axis);
    if (!st) st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps);
    const fe_type *x = fe_in_type(c, n, 0);
    int32_t ax;
    if (!st) st = fe_axis(c, n, axis, x->rank, &ax);
    if (st) return st;
    lmnn_tensor a, w = {0}, b = {0}, r;
    bool w_owned = false, b_owned = false;
    if (!(st = fe_in_dev(c, n, 0, &a)) && !(st = norm_param(c, n, 1, ax, &w, &w_owned)) &&
        fe_has_in(n, 2))
        st = norm_param(c, n, 2, ax, &b, &b_owned);
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.eps = eps;
    o.normalized_dims = (uint32_t)(x->rank - ax);
    if (!st && (st = is_rms(n) ? lmnn_rms_norm(a, w, &o, &r) : lmnn_layer_norm(a, w, b, &o, &r)))
        st = fe_nn_fail(c, n, st);
    if (w_owned) fe_free(w);
    if (b_owned) fe_free(b);
    if (st) return st;
    bool want_mean = n->output_count > 1 && n->outputs[1] != FE_NONE;
    bool want_inv = n->output_count > 2 && n->outputs[2] != FE_NONE;
    if (want_mean || want_inv) {
        /* The statistics over the normalised dims, kept as size-1 dims:
         * Mean, and InvStdDev = 1 / sqrt(var + epsilon) (no correction). */
        lmnn_reduce_options ro;
        lmnn_reduce_options_init(&ro);
        for (int32_t i = ax; i < x->rank; i++)
            ro.dim_mask |= 1u << i;
        ro.keepdim = true;
        ro.correction = 0;
        lmnn_tensor m, v, ve, inv;
        if (want_mean) {
            if ((st = lmnn_mean(a, &ro, &m))) goto fail;
            if ((st = fe_out_from_float(c, n, 1, m))) {
                fe_free(r);
                return st;
            }
        }
        if (want_inv) {
            if ((st = lmnn_var(a, &ro, &v))) goto fail;
            st = lmnn_binary_scalar(LMNN_BINARY_ADD, v, eps, NULL, &ve);
            fe_free(v);
            if (st) goto fail;
            st = lmnn_rsqrt(ve, &inv);
            fe_free(ve);
            if (st) goto fail;
            if ((st = fe_out_from_float(c, n, 2, inv))) {
                fe_free(r);
                return st;
            }
        }
    }
    return fe_out_dev(c, n, 0, r);
fail:
    fe_free(r);
    return fe_nn_fail(c, n, st);
}

/* ---- LRN ---- */

lm_status fe_lrn_read(fe_ctx *c, const fe_node *n, float *alpha, float *beta, float *bias,
                      int64_t *size) {
    lm_status st = fe_attr_float(c, n, "alpha", 1e-4f, alpha);
    if (!st) st = fe_attr_float(c, n, "beta", 0.75f, beta);
    if (!st) st = fe_attr_float(c, n, "bias", 1.0f, bias);
    if (!st) st = fe_attr_int(c, n, "size", 0, size);
    if (!st && *size < 1) st = fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute size is missing");
    return st;
}

static lm_status infer_lrn(fe_ctx *c, const fe_node *n) {
    float alpha, beta, bias;
    int64_t size;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){"alpha", "beta", "bias", "size", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (!st) st = fe_lrn_read(c, n, &alpha, &beta, &bias, &size);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 3) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be N x C x D1 x ...");
    if (size > 0xffff || fe_type_volume(x) == 0 || fe_type_volume(x) / x->dims[0] > UINT32_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "this input size or window is not supported");
    return same_type_out(c, n);
}

/* x / (bias + alpha / size * sum of x^2 over the channel window)^beta, the
 * window [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]: the sum as
 * an average pooling of x^2 viewed as [N, 1, C, rest] (padding counted, so
 * times size it is the sum). */
static lm_status lower_lrn(fe_ctx *c, const fe_node *n) {
    float alpha, beta, bias;
    int64_t size;
    lm_status st = fe_lrn_read(c, n, &alpha, &beta, &bias, &size);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0);
    uint32_t N = (uint32_t)xt->dims[0], C = (uint32_t)xt->dims[1], rest = 1;
    for (int32_t i = 2; i < xt->rank; i++)
        rest *= (uint32_t)xt->dims[i];
    lmnn_tensor x, sq = {0}, p = {0}, d = {0}, r = {0};
    bool so = true; /* sq is this function's */
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    lmnn_pool2d_options o;
    lmnn_pool2d_options_init(&o);
    o.kernel_size[0] = (int32_t)size;
    o.kernel_size[1] = 1;
    o.stride[0] = o.stride[1] = 1;
    o.padding[0] = (int32_t)((size - 1) / 2);
    o.padding[1] = (int32_t)(size - 1 - (size - 1) / 2);
    o.count_include_pad = true;
    if (!(st = lmnn_square(x, &sq)) &&
        !(st = reshape_to(&sq, &so, 4, (const uint32_t[]){N, 1, C, rest})) &&
        !(st = pool2d(c, n, false, &o, C, rest, sq, &p))) {
        /* (bias + alpha / size * size * mean)^beta as exp(beta * log(.)). */
        lmnn_tensor t1, t2, t3;
        if (!(st = lmnn_binary_scalar(LMNN_BINARY_MUL, p, alpha, NULL, &t1))) {
            st = lmnn_binary_scalar(LMNN_BINARY_ADD, t1, bias, NULL, &t2);
            fe_free(t1);
            if (!st) {
                st = lmnn_log(t2, &t3);
                fe_free(t2);
                if (!st) {
                    st = lmnn_binary_scalar(LMNN_BINARY_MUL, t3, beta, NULL, &t1);
                    fe_free(t3);
                    if (!st) {
                        st = lmnn_exp(t1, &t2);
                        fe_free(t1);
                        if (!st) {
                            lmnn_shape s = fe_shape(xt->rank, xt->dims);
                            st = lmnn_reshape(t2, &s, NULL, &d);
                            fe_free(t2);
                        }
                    }
                }
            }
        }
    }
    if (!st) st = lmnn_binary(LMNN_BINARY_DIV, x, d, NULL, &r);
    fe_free(sq);
    fe_free(p);
    fe_free(d);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- LpNormalization, MeanVarianceNormalization ---- */

static lm_status infer_lpnorm(fe_ctx *c, const fe_node *n) {
    int64_t axis, p;
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", "p", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    if (!st) st = fe_attr_int(c, n, "axis", -1, &axis);
    if (!st) st = fe_attr_int(c, n, "p", 2, &p);
    int32_t ax;
    if (!st) st = fe_axis(c, n, axis, fe_in_type(c, n, 0)->rank, &ax);
    if (st) return st;
    if (p != 1 && p != 2)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute p=%lld is not supported", (long long)p);
    return same_type_out(c, n);
}

static lm_status lower_lpnorm(fe_ctx *c, const fe_node *n) {
    int64_t axis, p;
    lm_status st = fe_attr_int(c, n, "axis", -1, &axis);
    if (!st) st = fe_attr_int(c, n, "p", 2, &p);
    int32_t ax;
    if (!st) st = fe_axis(c, n, axis, fe_in_type(c, n, 0)->rank, &ax);
    if (st) return st;
    lmnn_tensor x, nrm, r;
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = ax;
    o.dim_count = 1;
    o.keepdim = true;
    if ((st = lmnn_norm(x, (double)p, &o, &nrm))) return fe_nn_fail(c, n, st);
    st = lmnn_binary(LMNN_BINARY_DIV, x, nrm, NULL, &r);
    fe_free(nrm);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

lm_status fe_mvn_axes(fe_ctx *c, const fe_node *n, uint32_t *mask) {
    const int64_t *axes;
    size_t count;
    const fe_type *x = fe_in_type(c, n, 0);
    lm_status st = fe_attr_ints(c, n, "axes", &axes, &count);
    if (st) return st;
    static const int64_t def[] = {0, 2, 3};
    if (!axes) {
        axes = def;
        count = 3;
    }
    *mask = 0;
    for (size_t i = 0; i < count; i++) {
        int32_t ax;
        if ((st = fe_axis(c, n, axes[i], x->rank, &ax))) return st;
        *mask |= 1u << ax;
    }
    return LM_OK;
}

static lm_status infer_mvn(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axes", NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    uint32_t mask;
    if (!st) st = fe_mvn_axes(c, n, &mask);
    if (st) return st;
    return same_type_out(c, n);
}

/* (x - mean) / sqrt(mean((x - mean)^2) + 1e-9), ONNX's function body. */
static lm_status lower_mvn(fe_ctx *c, const fe_node *n) {
    uint32_t mask;
    lm_status st = fe_mvn_axes(c, n, &mask);
    if (st) return st;
    lmnn_tensor x, m = {0}, d = {0}, sq = {0}, v = {0}, ve = {0}, sd = {0}, r = {0};
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dim_mask = mask;
    o.keepdim = true;
    if (!(st = lmnn_mean(x, &o, &m)) && !(st = lmnn_binary(LMNN_BINARY_SUB, x, m, NULL, &d)) &&
        !(st = lmnn_square(d, &sq)) && !(st = lmnn_mean(sq, &o, &v)) &&
        !(st = lmnn_binary_scalar(LMNN_BINARY_ADD, v, 1e-9, NULL, &ve)) &&
        !(st = lmnn_sqrt(ve, &sd)))
        st = lmnn_binary(LMNN_BINARY_DIV, d, sd, NULL, &r);
    fe_free(m);
    fe_free(d);
    fe_free(sq);
    fe_free(v);
    fe_free(ve);
    fe_free(sd);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- LpPool, GlobalLpPool: (sum over the window of |x|^p)^(1/p) ----
 * Rewritten as Abs, the p-th power, the sum over each window, then the
 * p-th root. The window sums are a depthwise convolution with a kernel of
 * ones (which has dilations; zero padding adds nothing, and ceil_mode's
 * last window, which may reach past the padding, gets more of it), the
 * global sum a ReduceSum. */

/* v^e: a product for 2, nothing for 1, else Pow. */
static lm_status lp_power(fe_expansion *x, fe_elem elem, uint32_t v, double e, uint32_t *out) {
    if (e == 1) {
        *out = v;
        return LM_OK;
    }
    if (e == 2) return fe_x_emit(x, "Mul", v, v, out);
    if (e == 0.5) return fe_x_emit(x, "Sqrt", v, FE_NONE, out);
    uint32_t k;
    lm_status st = fe_x_float(x, elem, e, &k);
    return st ? st : fe_x_emit(x, "Pow", v, k, out);
}

/* An INTS attribute of `count` values. */
static fe_attr lp_ints(fe_ctx *c, const char *name, const int64_t *v, int32_t count) {
    int64_t *ints = fe_arena_alloc(&c->g->arena, (size_t)count * sizeof *ints);
    if (ints) memcpy(ints, v, (size_t)count * sizeof *v);
    return (fe_attr){.name = name, .type = FE_ATTR_INTS, .ints = ints, .count = (size_t)count};
}

/* The window sums of `v` (N, C, spatial...): a depthwise Conv with a ones
 * kernel and the pool's geometry, its end padding grown to ceil_mode's
 * last window. */
static lm_status lp_window_sums(fe_expansion *x, const fe_type *in, const geom *g, uint32_t v,
                                uint32_t *out) {
    fe_ctx *c = x->c;
    int64_t wdims[2 + 3] = {in->dims[1], 1}, pads[6];
    for (int32_t i = 0; i < g->sp; i++) {
        wdims[2 + i] = g->kernel[i];
        int64_t reach = (g->out[i] - 1) * g->stride[i] + (g->kernel[i] - 1) * g->dil[i] + 1;
        int64_t past = reach - (g->in[i] + g->pad_b[i] + g->pad_e[i]);
        pads[i] = g->pad_b[i];
        pads[g->sp + i] = g->pad_e[i] + (past > 0 ? past : 0);
    }
    fe_tensor *ones;
    uint32_t w;
    lm_status st = fe_const_new(c, in->elem, (uint32_t)(2 + g->sp), wdims, &ones);
    if (st) return fe_nn_fail(c, &x->node, st);
    for (uint64_t i = 0; i < ones->count; i++)
        fe_tensor_set_f64(ones, i, 1.0);
    if ((st = fe_x_const(x, ones, "ones", &w)) || (st = fe_x_emit(x, "Conv", v, w, out))) return st;
    fe_node *conv = &x->nodes[x->count - 1];
    fe_attr *attrs = fe_arena_alloc(&c->g->arena, 5 * sizeof *attrs);
    if (!attrs) return fe_x_oom();
    attrs[0] = lp_ints(c, "kernel_shape", g->kernel, g->sp);
    attrs[1] = lp_ints(c, "strides", g->stride, g->sp);
    attrs[2] = lp_ints(c, "dilations", g->dil, g->sp);
    attrs[3] = lp_ints(c, "pads", pads, 2 * g->sp);
    attrs[4] = (fe_attr){.name = "group", .type = FE_ATTR_INT, .i = in->dims[1]};
    for (int i = 0; i < 4; i++)
        if (!attrs[i].ints) return fe_x_oom();
    conv->attrs = attrs;
    conv->attr_count = 5;
    return LM_OK;
}

static lm_status infer_lppool(fe_ctx *c, const fe_node *n) {
    bool global = !strcmp(n->op_type, "GlobalLpPool");
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st = fe_check_attrs(c, n,
                            global ? (const char *const[]){"p", NULL}
                                   : (const char *const[]){"auto_pad", "ceil_mode", "dilations",
                                                           "kernel_shape", "p", "pads", "strides",
                                                           NULL});
    if (!st) st = fe_check_elem(c, n, 0, float_types);
    int64_t p;
    if (!st) st = fe_attr_int(c, n, "p", 2, &p);
    if (st) return st;
    if (p < 1 || p > 64)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "p=%lld (from 1 to 64)", (long long)p);
    const fe_type *in = fe_in_type(c, n, 0);
    if (in->rank < 3)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be (N, C, spatial...), given rank %d",
                       (int)in->rank);
    geom g;
    if (!global) {
        const int64_t *k;
        size_t kn;
        if ((st = fe_attr_ints(c, n, "kernel_shape", &k, &kn))) return st;
        if (!k) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute kernel_shape is missing");
        if ((st = geom_read(c, n, K_AVGPOOL, in, NULL, &g))) return st;
    }
    fe_elem e = in->elem;
    fe_type type = *in;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    uint32_t a, ap, sums, y = x.node.outputs[0];
    st = fe_x_emit(&x, "Abs", x.node.inputs[0], FE_NONE, &a);
    if (!st) st = lp_power(&x, e, a, (double)p, &ap);
    if (!st && global) {
        int64_t axes[FE_MAX_RANK];
        for (int32_t d = 2; d < type.rank; d++)
            axes[d - 2] = d;
        fe_tensor *t;
        uint32_t ax;
        if ((st = fe_const_new(c, FE_INT64, 1, (const int64_t[]){type.rank - 2}, &t)))
            st = fe_nn_fail(c, n, st);
        for (int32_t d = 0; !st && d < type.rank - 2; d++)
            fe_tensor_set_i64(t, (uint64_t)d, axes[d]);
        if (!st) st = fe_x_const(&x, t, "axes", &ax);
        if (!st) st = fe_x_emit(&x, "ReduceSum", ap, ax, &sums);
    } else if (!st) {
        st = lp_window_sums(&x, &type, &g, ap, &sums);
    }
    uint32_t root = FE_NONE;
    if (!st) st = lp_power(&x, e, sums, 1.0 / (double)p, &root);
    if (!st) st = fe_x_identity(&x, root, y);
    return fe_x_end(c, &x, st);
}

/* ---- Dropout ---- */

/* Whether the node drops (training mode with a nonzero ratio), and the
 * ratio. */
static lm_status dropout_mode(fe_ctx *c, const fe_node *n, bool *out_drops, double *out_ratio) {
    *out_drops = false;
    *out_ratio = 0;
    int64_t is_test = 1;
    lm_status st;
    if (n->opset < 7 && (st = fe_attr_int(c, n, "is_test", 0, &is_test))) return st;
    bool training = !is_test;
    if (fe_has_in(n, 2)) {
        const fe_tensor *k = fe_in_const(c, n, 2);
        if (!k)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "training_mode computed at run time is not supported (give it as a "
                           "constant)");
        training = fe_tensor_get_i64(k, 0) != 0;
    }
    double ratio = 0.5;
    if (n->opset < 12) {
        float r;
        if ((st = fe_attr_float(c, n, "ratio", 0.5f, &r))) return st;
        ratio = r;
    } else if (fe_has_in(n, 1)) {
        const fe_tensor *k = fe_in_const(c, n, 1);
        if (!k && training)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "training mode with a ratio computed at run time is not supported");
        if (k) ratio = fe_tensor_get_f64(k, 0);
    }
    if (training && !(ratio >= 0 && ratio < 1))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "ratio %g: expected a value in [0, 1)", ratio);
    /* Training mode with ratio 0 is the identity too (the mask all true). */
    *out_drops = training && ratio != 0;
    *out_ratio = ratio;
    return LM_OK;
}

bool fe_dropout_drops(fe_ctx *c, const fe_node *n, double *out_ratio) {
    bool drops = false;
    double ratio = 0;
    char saved[ERR_MESSAGE_MAX];
    err_copy(saved, sizeof saved); /* asking leaves no error behind */
    lm_status st = dropout_mode(c, n, &drops, &ratio);
    if (st) err_set(LM_ERR_INTERNAL, "%s", saved);
    if (out_ratio) *out_ratio = ratio;
    return !st && drops;
}

static lm_status infer_dropout(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"seed", "ratio", "is_test", NULL});
    bool drops = false;
    double ratio = 0;
    if (!st) st = dropout_mode(c, n, &drops, &ratio);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    bool mask = n->output_count > 1 && n->outputs[1] != FE_NONE;
    if (drops) {
        /* Drawn on the device (lmnn_dropout), even for a constant input. */
        if ((st = fe_check_elem(c, n, 0, float_types))) return st;
        st = fe_set_out_type(c, n, 0, x->elem, x->rank, x->dims);
        if (!st && mask) st = fe_set_out_type(c, n, 1, FE_BOOL, x->rank, x->dims);
        return st;
    }
    const fe_tensor *k = fe_in_const(c, n, 0);
    if (k)
        st = fe_set_out_const(c, n, 0, k);
    else
        st = fe_set_out_type(c, n, 0, x->elem, x->rank, x->dims);
    if (!st && mask) {
        /* Nothing dropped: the mask is all true. */
        fe_tensor *m;
        if ((st = fe_const_new(c, FE_BOOL, (uint32_t)x->rank, x->dims, &m)))
            return fe_nn_fail(c, n, st);
        memset((void *)m->data, 1, (size_t)m->count);
        st = fe_set_out_const(c, n, 1, m);
    }
    return st;
}

static lm_status lower_dropout(fe_ctx *c, const fe_node *n) {
    bool drops = false;
    double ratio = 0;
    lm_status st = dropout_mode(c, n, &drops, &ratio);
    if (st) return st;
    if (!drops) return fe_out_alias(c, n, 0, 0);
    bool mask = n->output_count > 1 && n->outputs[1] != FE_NONE;
    lmnn_tensor x, y = {0}, m = {0};
    if ((st = fe_in_dev(c, n, 0, &x))) return st;
    lmnn_random_options ro;
    fe_random_options(c, n, &ro);
    st = lmnn_dropout(x, ratio, &ro, &y, mask ? &m : NULL);
    if (st) return fe_nn_fail(c, n, st);
    st = fe_out_dev(c, n, 0, y);
    if (mask) st = st ? (fe_free(m), st) : fe_out_from_float(c, n, 1, m);
    return st;
}

/* ---- DepthToSpace, SpaceToDepth ---- */

static lm_status infer_d2s(fe_ctx *c, const fe_node *n) {
    bool d2s = !strcmp(n->op_type, "DepthToSpace");
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st)
        st = fe_check_attrs(c, n,
                            d2s ? (const char *const[]){"blocksize", "mode", NULL}
                                : (const char *const[]){"blocksize", NULL});
    int64_t b;
    const char *mode = "DCR";
    if (!st) st = fe_attr_int(c, n, "blocksize", 0, &b);
    if (!st && d2s) st = fe_attr_string(c, n, "mode", "DCR", &mode);
    if (st) return st;
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute mode=%s is not valid", mode);
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank != 4) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must be 4-D");
    if (b < 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "blocksize must be >= 1");
    int64_t dims[4] = {x->dims[0], 0, 0, 0};
    if (d2s) {
        if (x->dims[1] % (b * b))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "channels do not divide by blocksize^2");
        dims[1] = x->dims[1] / (b * b);
        dims[2] = x->dims[2] * b;
        dims[3] = x->dims[3] * b;
    } else {
        if (x->dims[2] % b || x->dims[3] % b)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "H and W do not divide by blocksize");
        dims[1] = x->dims[1] * b * b;
        dims[2] = x->dims[2] / b;
        dims[3] = x->dims[3] / b;
    }
    return fe_set_out_type(c, n, 0, x->elem, 4, dims);
}

/* One pass of the op library's permute from x's elements, seen as six dims,
 * to the output's shape. Both ops read an image as one (FE_IMAGE_IN) and
 * write one for readers of images ([N * OH, OW * OC] rows): an NHWC pixel's
 * channels are (i, j, c) for DCR and SpaceToDepth, (c, i, j) for CRD
 * (PyTorch's PixelShuffle), and pixel (h * b + i, w * b + j) the one they
 * go to or come from. Each output row is then two or three dims of the
 * permuted view, which the permute reads in runs from a window of the
 * input (lmnn_permute_reshaped_to) instead of a row per pixel. */
static lm_status lower_d2s(fe_ctx *c, const fe_node *n) {
    bool d2s = !strcmp(n->op_type, "DepthToSpace");
    int64_t bs;
    const char *mode = "DCR";
    lm_status st = fe_attr_int(c, n, "blocksize", 0, &bs);
    if (!st && d2s) st = fe_attr_string(c, n, "mode", "DCR", &mode);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *o = &c->g->values[n->outputs[0]].type;
    uint32_t N = (uint32_t)x->dims[0], C = (uint32_t)x->dims[1], H = (uint32_t)x->dims[2],
             W = (uint32_t)x->dims[3], b = (uint32_t)bs, oc = C / (b * b);
    uint32_t OC = (uint32_t)o->dims[1], OH = (uint32_t)o->dims[2], OW = (uint32_t)o->dims[3];
    bool in_img, out_img = c->plans[n - c->g->nodes].nhwc_out;
    lmnn_tensor a, y;
    if ((st = fe_in_image(c, n, 0, &a, &in_img))) return st;
    /* kind: DCR, CRD, SpaceToDepth; the six dims by kind and input form */
    int kind = !d2s ? 2 : strcmp(mode, "DCR") ? 1 : 0;
    const lmnn_shape six[3][2] = {
        {LMNN_SHAPE(N, b, b, oc, H, W), LMNN_SHAPE(N, H, W, b, b, oc)},
        {LMNN_SHAPE(N, oc, b, b, H, W), LMNN_SHAPE(N, H, W, oc, b, b)},
        {LMNN_SHAPE(N, C, H / b, b, W / b, b), LMNN_SHAPE(N, H / b, b, W / b, b, C)},
    };
    /* [kind][input an image][output an image] */
    static const int32_t perms[3][2][2][6] = {
        {{{0, 3, 4, 1, 5, 2}, {0, 4, 1, 5, 2, 3}}, {{0, 5, 1, 3, 2, 4}, {0, 1, 3, 2, 4, 5}}},
        {{{0, 1, 4, 2, 5, 3}, {0, 4, 2, 5, 3, 1}}, {{0, 3, 1, 4, 2, 5}, {0, 1, 4, 2, 5, 3}}},
        {{{0, 3, 5, 1, 2, 4}, {0, 2, 4, 3, 5, 1}}, {{0, 2, 4, 5, 1, 3}, {0, 1, 3, 2, 4, 5}}},
    };
    lmnn_shape to = out_img ? LMNN_SHAPE(N * OH, OW * OC) : LMNN_SHAPE(N, OC, OH, OW);
    if ((st = lmnn_permute_reshaped_to(a, &six[kind][in_img], perms[kind][in_img][out_img], 6, &to,
                                       NULL, &y)))
        return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

/* Both move a float image's pixels as they are. */
static uint32_t d2s_images(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    return x->rank == 4 && fe_elem_is_float(x->elem) ? FE_IMAGE_IN | FE_IMAGE_OUT : 0;
}

/* ---- Trilu ---- */

static lm_status trilu_k(fe_ctx *c, const fe_node *n, int64_t *k) {
    *k = 0;
    if (!fe_has_in(n, 1)) return LM_OK;
    const fe_tensor *t;
    lm_status st = fe_in_const_required(c, n, 1, &t);
    if (st) return st;
    if (t->count != 1 || !fe_elem_is_int(t->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "k must be one integer");
    *k = fe_tensor_get_i64(t, 0);
    return LM_OK;
}

static bool trilu_keeps(int64_t row, int64_t col, int64_t k, bool upper) {
    return upper ? col - row >= k : col - row <= k;
}

/* A known input's triangle, on the host, for any element type (a causal
 * mask is often a Trilu of a bool constant). */
static lm_status fold_trilu(fe_ctx *c, const fe_node *n, const fe_tensor *x, int64_t k,
                            bool upper) {
    fe_tensor *r;
    lm_status st = fe_const_new(c, x->elem, x->rank, x->dims, &r);
    if (st) return fe_nn_fail(c, n, st);
    size_t esize = fe_elem_size(x->elem);
    uint64_t rows = (uint64_t)x->dims[x->rank - 2], cols = (uint64_t)x->dims[x->rank - 1];
    for (uint64_t e = 0; e < x->count; e++)
        if (trilu_keeps((int64_t)(e / cols % rows), (int64_t)(e % cols), k, upper))
            memcpy((char *)r->data + e * esize, (const char *)x->data + e * esize, esize);
    return fe_set_out_const(c, n, 0, r);
}

static lm_status infer_trilu(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"upper", NULL});
    int64_t k, upper;
    if (!st) st = trilu_k(c, n, &k);
    if (!st) st = fe_attr_int(c, n, "upper", 1, &upper);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (x->rank < 2) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input must have rank >= 2");
    const fe_tensor *known = fe_in_const(c, n, 0);
    if (known && known->data) return fold_trilu(c, n, known, k, upper != 0);
    if ((st = fe_check_elem(c, n, 0, numeric_bool_types))) return st;
    return same_type_out(c, n);
}

/* where(mask, x, 0) with the host-made 0/1 mask of the last two dims
 * (upper: column - row >= k; lower: column - row <= k). */
static lm_status lower_trilu(fe_ctx *c, const fe_node *n) {
    int64_t k, upper;
    lm_status st = trilu_k(c, n, &k);
    if (!st) st = fe_attr_int(c, n, "upper", 1, &upper);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0);
    uint32_t rows = (uint32_t)xt->dims[xt->rank - 2], cols = (uint32_t)xt->dims[xt->rank - 1];
    lmnn_tensor mask, zero;
    uint64_t key = key_of(KEY_TRILU, (uint64_t)(n - c->g->nodes));
    if (!fe_cache_get(c, key, &mask)) {
        float *m = malloc((size_t)rows * cols * sizeof *m);
        if (!m) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t j = 0; j < cols; j++) {
                m[(size_t)i * cols + j] = trilu_keeps(i, j, k, upper != 0) ? 1.0f : 0.0f;
            }
        lmnn_shape s = LMNN_SHAPE(rows, cols);
        st = fe_cache_upload(c, n, key, &s, m, (size_t)rows * cols * sizeof *m, LMNN_FLOAT32,
                             LMNN_TILE, &mask);
        free(m);
        if (st) return st;
    }
    if ((st = zero_scalar(c, n, &zero))) return st;
    lmnn_tensor x, r;
    bool owned;
    if ((st = fe_in_dev_float(c, n, 0, &x, &owned))) return st;
    st = lmnn_where(mask, x, zero, &r);
    if (owned) fe_free(x);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_from_float(c, n, 0, r);
}

/* ---- Einsum ---- */

typedef fe_einsum einsum_eq;

lm_status fe_einsum_read(fe_ctx *c, const fe_node *n, fe_einsum *e) {
    const char *eq;
    lm_status st = fe_attr_string(c, n, "equation", NULL, &eq);
    if (st) return st;
    if (!eq) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute equation is missing");
    memset(e, 0, sizeof *e);
    for (int i = 0; i < 128; i++)
        e->size[i] = -1;
    /* raw[0..count-1]: the operands, raw[FE_EINSUM_MAX_OPERANDS]: the
     * output; '.' marks an ellipsis. */
    enum { OUT = FE_EINSUM_MAX_OPERANDS };
    char raw[OUT + 1][FE_MAX_RANK + 2];
    uint32_t len[OUT + 1], part = 0, k = fe_in_count(n);
    memset(raw, 0, sizeof raw);
    memset(len, 0, sizeof len);
    bool arrow = false;
    for (const char *p = eq; *p; p++) {
        char ch = *p;
        if (ch == ' ') continue;
        if (ch == ',' && !arrow) {
            if (part + 1 >= OUT)
                return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                               "attribute equation=%s: more than %d operands are not supported", eq,
                               FE_EINSUM_MAX_OPERANDS);
            part++;
            continue;
        }
        if (ch == '-' && p[1] == '>' && !arrow) {
            arrow = true;
            e->count = part + 1;
            part = OUT;
            p++;
            continue;
        }
        bool dots = ch == '.' && p[1] == '.' && p[2] == '.';
        if (dots) {
            if (strchr(raw[part], '.'))
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "attribute equation=%s: two ellipses "
                               "in one term",
                               eq);
            p += 2;
        } else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute equation=%s is not valid", eq);
        }
        if (len[part] > FE_MAX_RANK)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "attribute equation=%s: more than %d subscripts in a term", eq,
                           FE_MAX_RANK);
        raw[part][len[part]++] = dots ? '.' : ch;
    }
    if (!arrow) e->count = part + 1;
    if (e->count != k)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "equation %s names %u operands, given %u", eq,
                       e->count, k);
    /* The dims each operand's ellipsis covers; the most of them. */
    int32_t er[FE_EINSUM_MAX_OPERANDS] = {0}, ell = 0;
    for (uint32_t i = 0; i < e->count; i++) {
        const fe_type *t = fe_in_type(c, n, i);
        bool has = strchr(raw[i], '.') != NULL;
        int32_t letters = (int32_t)len[i] - (has ? 1 : 0);
        er[i] = t->rank - letters;
        if (er[i] < 0 || (!has && er[i] != 0))
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "equation %s gives operand %u %d subscripts, it has rank %d", eq, i,
                           letters, t->rank);
        if (er[i] > ell) ell = er[i];
    }
    for (uint32_t i = 0; i < e->count; i++) {
        uint32_t o = 0;
        for (uint32_t j = 0; j < len[i]; j++) {
            if (raw[i][j] != '.') {
                e->in[i][o++] = raw[i][j];
                continue;
            }
            for (int32_t d = 0; d < er[i]; d++)
                e->in[i][o++] = (char)('0' + ell - er[i] + d);
        }
        /* A label repeated within an operand has one size there; across
         * operands a size of 1 broadcasts (as NumPy's einsum). */
        const fe_type *t = fe_in_type(c, n, i);
        for (int32_t d = 0; d < t->rank; d++) {
            char lab = e->in[i][d], shown = lab >= 'A' ? lab : '.';
            const char *first = memchr(e->in[i], lab, (size_t)d);
            if (first && t->dims[first - e->in[i]] != t->dims[d])
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "equation %s: subscript %c repeats in operand %u with sizes %lld "
                               "and %lld",
                               eq, shown, i, (long long)t->dims[first - e->in[i]],
                               (long long)t->dims[d]);
            int64_t *sz = &e->size[(int)lab];
            if (*sz > 1 && t->dims[d] != 1 && *sz != t->dims[d])
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "equation %s: subscript %c is %lld and %lld long", eq, shown,
                               (long long)*sz, (long long)t->dims[d]);
            if (*sz <= 1) *sz = t->dims[d];
        }
    }
    uint32_t o = 0;
    if (arrow) {
        for (uint32_t j = 0; j < len[OUT]; j++) {
            if (raw[OUT][j] == '.') {
                for (int32_t d = 0; d < ell && o < FE_MAX_RANK; d++)
                    e->out[o++] = (char)('0' + d);
                continue;
            }
            if (o >= FE_MAX_RANK || strchr(e->out, raw[OUT][j]))
                return fe_fail(c, n, LM_ERR_INVALID_FILE,
                               "equation %s: output subscript %c repeats", eq, raw[OUT][j]);
            e->out[o++] = raw[OUT][j];
        }
    } else {
        /* Implicit output: the ellipsis dims, then the letters written once,
         * in alphabetical order. */
        for (int32_t d = 0; d < ell; d++)
            e->out[o++] = (char)('0' + d);
        for (int ch = 'A'; ch <= 'z'; ch++) {
            if (e->size[ch] < 0) continue;
            int uses = 0;
            for (uint32_t i = 0; i < e->count; i++)
                for (const char *q = e->in[i]; *q; q++)
                    uses += *q == ch;
            if (uses != 1) continue;
            if (o >= FE_MAX_RANK)
                return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the output has too many dims");
            e->out[o++] = (char)ch;
        }
    }
    for (const char *p = e->out; *p; p++)
        if (e->size[(int)*p] < 0)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "equation %s: output subscript %c is not an input's", eq, *p);
    return LM_OK;
}

static lm_status infer_einsum(fe_ctx *c, const fe_node *n) {
    uint32_t k = fe_in_count(n);
    if (k > FE_EINSUM_MAX_OPERANDS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "%u operands: more than %d are not supported", k,
                       FE_EINSUM_MAX_OPERANDS);
    /* Every operand is required. */
    lm_status st = fe_check_inputs(c, n, k ? k : 1, FE_EINSUM_MAX_OPERANDS);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"equation", NULL});
    for (uint32_t i = 0; i < k && !st; i++)
        st = fe_check_elem(c, n, i, numeric_types);
    einsum_eq e;
    if (!st) st = fe_einsum_read(c, n, &e);
    if (st) return st;
    const fe_type *a = fe_in_type(c, n, 0);
    for (uint32_t i = 1; i < e.count; i++)
        if (fe_in_type(c, n, i)->elem != a->elem)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "the operands' element types differ (operand %u's from operand 0's)", i);
    for (uint32_t i = 0; i < e.count; i++)
        if (fe_type_volume(fe_in_type(c, n, i)) == 0)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "empty operands are not supported");
    int64_t dims[FE_MAX_RANK];
    int32_t rank = (int32_t)strlen(e.out);
    for (int32_t d = 0; d < rank; d++)
        dims[d] = e.size[(int)e.out[d]];
    return fe_set_out_type(c, n, 0, a->elem, rank, dims);
}

/* t (letters `have`, consumed when *owned) summed over the letters not in
 * `keep`: *have loses them. */
static lm_status einsum_sum_out(lmnn_tensor *t, bool *owned, char *have, const char *keep) {
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    char rest[FE_MAX_RANK + 1] = "";
    uint32_t r = 0;
    for (uint32_t d = 0; have[d]; d++) {
        if (strchr(keep, have[d]))
            rest[r++] = have[d];
        else
            o.dim_mask |= 1u << d;
    }
    if (!o.dim_mask) return LM_OK;
    lmnn_tensor s;
    lm_status st = lmnn_sum(*t, &o, &s);
    if (st) return st;
    take(t, owned, s);
    memcpy(have, rest, sizeof rest);
    return LM_OK;
}

/* t (letters `have`) permuted to the letter order `want` (the same set). */
static lm_status einsum_permute(lmnn_tensor *t, bool *owned, const char *have, const char *want) {
    uint32_t r = (uint32_t)strlen(want);
    int32_t perm[FE_MAX_RANK];
    bool same = true;
    for (uint32_t d = 0; d < r; d++) {
        perm[d] = (int32_t)(strchr(have, want[d]) - have);
        same &= perm[d] == (int32_t)d;
    }
    if (same || r < 2) return LM_OK;
    lmnn_tensor p;
    lm_status st = lmnn_permute(*t, perm, r, NULL, &p);
    if (st) return st;
    take(t, owned, p);
    return LM_OK;
}

enum { KEY_EINSUM_EYE = 21 };

/* Takes the diagonal of every label operand `op` repeats (t's dims p < q
 * with one label): where(eye over p and q, t, 0) summed over q. *have
 * loses the repeats. */
static lm_status einsum_diagonals(fe_ctx *c, const fe_node *n, uint32_t op, lmnn_tensor *t,
                                  bool *owned, char *have) {
    lm_status st = LM_OK;
    for (uint32_t q = 1; have[q];) {
        const char *first = memchr(have, have[q], q);
        if (!first) {
            q++;
            continue;
        }
        uint32_t p = (uint32_t)(first - have), r = (uint32_t)strlen(have);
        lmnn_tensor_info info;
        if ((st = lmnn_tensor_get_info(*t, &info))) return fe_nn_fail(c, n, st);
        uint32_t len = info.shape.dims[p];
        uint64_t key = key_of(KEY_EINSUM_EYE, ((uint64_t)(n - c->g->nodes) << 16) | (op << 12) |
                                                  (p << 8) | (q << 4) | r);
        lmnn_tensor eye, zero, w, s;
        if (!fe_cache_get(c, key, &eye)) {
            float *m = calloc((size_t)len * len, sizeof *m);
            if (!m) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
            for (uint32_t i = 0; i < len; i++)
                m[(size_t)i * len + i] = 1.0f;
            lmnn_shape sh = {.rank = r};
            for (uint32_t d = 0; d < r; d++)
                sh.dims[d] = d == p || d == q ? len : 1;
            st = fe_cache_upload(c, n, key, &sh, m, (size_t)len * len * sizeof *m, LMNN_FLOAT32,
                                 LMNN_TILE, &eye);
            free(m);
            if (st) return st;
        }
        if ((st = zero_scalar(c, n, &zero))) return st;
        if ((st = lmnn_where(eye, *t, zero, &w))) return fe_nn_fail(c, n, st);
        lmnn_reduce_options o;
        lmnn_reduce_options_init(&o);
        o.dims[0] = (int32_t)q;
        o.dim_count = 1;
        st = lmnn_sum(w, &o, &s);
        fe_free(w);
        if (st) return fe_nn_fail(c, n, st);
        take(t, owned, s);
        memmove(have + q, have + q + 1, r - q);
    }
    return LM_OK;
}

/* Operand t (its type ty, labels `labels`; consumed when *owned) repeated
 * along its dims of 1 whose label another operand gives a greater size. */
static lm_status einsum_broadcast(const fe_einsum *e, const fe_type *ty, const char *labels,
                                  lmnn_tensor *t, bool *owned) {
    uint32_t reps[FE_MAX_RANK];
    bool any = false;
    for (int32_t d = 0; d < ty->rank; d++) {
        int64_t size = e->size[(int)labels[d]];
        reps[d] = ty->dims[d] == 1 && size > 1 ? (uint32_t)size : 1;
        any |= reps[d] > 1;
    }
    if (!any) return LM_OK;
    lmnn_tensor r;
    lm_status st = lmnn_repeat(*t, reps, (uint32_t)ty->rank, NULL, &r);
    if (st) return st;
    take(t, owned, r);
    return LM_OK;
}

/* Operands a and b (letters ha, hb; each consumed when owned) contracted
 * into *out (letters *hr: batch, then a's own, then b's own), keeping the
 * letters `need` names: each operand's letters that neither `need` nor the
 * other names are summed first; then A becomes [batch, M, K] and B [batch,
 * K, N] (batch: letters in both and `need`; K: in both, not `need`) for one
 * batched matmul, whose [batch, M, N] result is reshaped to the letters. */
static lm_status einsum_pair(const fe_einsum *e, lmnn_tensor *ta, bool *oa, char *ha,
                             lmnn_tensor *tb, bool *ob, char *hb, const char *need,
                             lmnn_tensor *out, char *hr) {
    lmnn_tensor *t[2] = {ta, tb};
    bool *owned[2] = {oa, ob};
    char *have[2] = {ha, hb};
    lm_status st;
    for (uint32_t i = 0; i < 2; i++) {
        char keep[(FE_EINSUM_MAX_OPERANDS + 2) * FE_MAX_RANK + 2];
        snprintf(keep, sizeof keep, "%s%s", need, have[1 - i]);
        if ((st = einsum_sum_out(t[i], owned[i], have[i], keep))) return st;
    }
    char batch[FE_MAX_RANK + 1] = "", am[FE_MAX_RANK + 1] = "", bn[FE_MAX_RANK + 1] = "",
                             k[FE_MAX_RANK + 1] = "";
    uint32_t nb = 0, nm = 0, nn = 0, nk = 0;
    uint64_t vb = 1, vm = 1, vn = 1, vk = 1;
    for (uint32_t d = 0; ha[d]; d++) {
        char ch = ha[d];
        bool in_b = strchr(hb, ch) != NULL, kept = strchr(need, ch) != NULL;
        uint64_t sz = (uint64_t)e->size[(int)ch];
        if (in_b && kept)
            batch[nb++] = ch, vb *= sz;
        else if (in_b)
            k[nk++] = ch, vk *= sz;
        else
            am[nm++] = ch, vm *= sz;
    }
    for (uint32_t d = 0; hb[d]; d++)
        if (!strchr(ha, hb[d])) bn[nn++] = hb[d], vn *= (uint64_t)e->size[(int)hb[d]];
    char wa[3 * FE_MAX_RANK + 1], wb[3 * FE_MAX_RANK + 1]; /* room for the format checker */
    snprintf(wa, sizeof wa, "%s%s%s", batch, am, k);
    snprintf(wb, sizeof wb, "%s%s%s", batch, k, bn);
    if ((st = einsum_permute(ta, oa, ha, wa)) || (st = einsum_permute(tb, ob, hb, wb)) ||
        (st =
             reshape_to(ta, oa, 3, (const uint32_t[]){(uint32_t)vb, (uint32_t)vm, (uint32_t)vk})) ||
        (st = reshape_to(tb, ob, 3, (const uint32_t[]){(uint32_t)vb, (uint32_t)vk, (uint32_t)vn})))
        return st;
    if ((st = lmnn_matmul(*ta, *tb, NULL, out))) return st;
    char got[3 * FE_MAX_RANK + 1];
    snprintf(got, sizeof got, "%s%s%s", batch, am, bn);
    uint32_t gd[FE_MAX_RANK], gr = (uint32_t)strlen(got);
    for (uint32_t d = 0; d < gr; d++)
        gd[d] = (uint32_t)e->size[(int)got[d]];
    bool rowned = true;
    if ((st = reshape_to(out, &rowned, gr, gd))) {
        fe_free(*out);
        return st;
    }
    memcpy(hr, got, gr + 1);
    return LM_OK;
}

/* The letters operands i and j of the live ones keep when contracted: those
 * of either that the output or another live operand names (in `need`, which
 * gets those names), their count in *out_rank and the elements they span
 * (as a double: a product of sizes may pass any integer). */
static double einsum_pair_volume(const fe_einsum *e, char have[][FE_MAX_RANK + 1], const bool *live,
                                 uint32_t i, uint32_t j, char *need, size_t need_size,
                                 uint32_t *out_rank) {
    size_t at = (size_t)snprintf(need, need_size, "%s", e->out);
    for (uint32_t o = 0; o < e->count; o++)
        if (live[o] && o != i && o != j)
            at += (size_t)snprintf(need + at, need_size - at, "%s", have[o]);
    char seen[128] = {0};
    double vol = 1;
    uint32_t rank = 0;
    const char *terms[2] = {have[i], have[j]};
    for (uint32_t t = 0; t < 2; t++)
        for (const char *q = terms[t]; *q; q++)
            if (!seen[(int)*q] && strchr(need, *q)) {
                seen[(int)*q] = 1;
                vol *= (double)e->size[(int)*q];
                rank++;
            }
    *out_rank = rank;
    return vol;
}

/* One operand: diagonals, sums, then a permute. More: each operand's
 * broadcast dims repeated and its diagonals taken, then pairs contracted (einsum_pair) until one is
 * left, each time the pair whose result is smallest (the first such): a chain of products keeps its
 * intermediates small whatever the equation's order. The last is permuted to the output's order. */
static lm_status lower_einsum(fe_ctx *c, const fe_node *n) {
    einsum_eq e;
    lm_status st = fe_einsum_read(c, n, &e);
    if (st) return st;
    lmnn_tensor t[FE_EINSUM_MAX_OPERANDS] = {{0}};
    bool owned[FE_EINSUM_MAX_OPERANDS] = {false}, live[FE_EINSUM_MAX_OPERANDS] = {false};
    char have[FE_EINSUM_MAX_OPERANDS][FE_MAX_RANK + 1];
    uint32_t last = 0;
    for (uint32_t i = 0; i < e.count && !st; i++) {
        st = fe_in_dev_float(c, n, i, &t[i], &owned[i]);
        memcpy(have[i], e.in[i], sizeof have[i]);
        live[i] = !st;
    }
    for (uint32_t i = 0; i < e.count && !st; i++)
        if ((st = einsum_broadcast(&e, fe_in_type(c, n, i), have[i], &t[i], &owned[i])))
            st = fe_nn_fail(c, n, st);
    for (uint32_t i = 0; i < e.count && !st; i++)
        st = einsum_diagonals(c, n, i, &t[i], &owned[i], have[i]);
    if (st) goto out;
    for (uint32_t left = e.count; left > 1; left--) {
        char need[(FE_EINSUM_MAX_OPERANDS + 1) * FE_MAX_RANK + 1];
        double best = 0;
        uint32_t bi = 0, bj = 0;
        for (uint32_t i = 0; i < e.count; i++)
            for (uint32_t j = i + 1; live[i] && j < e.count; j++) {
                uint32_t rank;
                double v = live[j]
                               ? einsum_pair_volume(&e, have, live, i, j, need, sizeof need, &rank)
                               : 0;
                if (live[j] && rank <= FE_MAX_RANK && (!bj || v < best)) {
                    best = v;
                    bi = i;
                    bj = j;
                }
            }
        if (!bj) {
            st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                         "contracting the operands in pairs makes a tensor of more than %d dims",
                         FE_MAX_RANK);
            goto out;
        }
        if (best > (double)UINT32_MAX) {
            st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                         "contracting the operands in pairs makes a tensor of %.0f elements (at "
                         "most %u)",
                         best, UINT32_MAX);
            goto out;
        }
        uint32_t rank;
        einsum_pair_volume(&e, have, live, bi, bj, need, sizeof need, &rank);
        lmnn_tensor r;
        if ((st = einsum_pair(&e, &t[bi], &owned[bi], have[bi], &t[bj], &owned[bj], have[bj], need,
                              &r, have[bi])))
            goto fail;
        if (owned[bi]) fe_free(t[bi]);
        if (owned[bj]) fe_free(t[bj]);
        t[bi] = r;
        owned[bi] = true;
        owned[bj] = live[bj] = false;
    }
    while (!live[last])
        last++;
    if ((st = einsum_sum_out(&t[last], &owned[last], have[last], e.out)) ||
        (st = einsum_permute(&t[last], &owned[last], have[last], e.out)))
        goto fail;
    goto out;
fail:
    st = fe_nn_fail(c, n, st);
out:
    if (!st && !owned[last]) {
        /* The input itself (one operand, nothing to do). */
        for (uint32_t i = 0; i < e.count; i++)
            if (owned[i]) fe_free(t[i]);
        return fe_out_alias(c, n, 0, 0);
    }
    for (uint32_t i = 0; i < e.count; i++)
        if (owned[i] && (st || i != last)) fe_free(t[i]);
    if (st) return st;
    return fe_out_from_float(c, n, 0, t[last]);
}

const fe_op_def fe_ops_nn[] = {
    {"MatMul", infer_matmul, lower_matmul, 0, matmul_images},
    {"Gemm", infer_gemm, lower_gemm, 0, gemm_images},
    {"MatMulInteger", infer_matmul_integer, lower_matmul_integer, 0, NULL},
    {"QLinearMatMul", infer_matmul_integer, lower_matmul_integer, 0, NULL},
    {"Conv", infer_conv, lower_conv, 0, conv_images},
    {"ConvTranspose", infer_convt, lower_convt, 0, conv_images},
    {"ConvInteger", infer_conv, lower_conv, 0, NULL},
    {"QLinearConv", infer_conv, lower_conv, 0, NULL},
    {"MaxPool", infer_pool, lower_pool, 0, pool_images},
    {"AveragePool", infer_pool, lower_pool, 0, pool_images},
    {"MaxUnpool", infer_maxunpool, lower_maxunpool, 4u, NULL},
    {"GlobalAveragePool", infer_global_pool, lower_global_pool, 0, global_pool_images},
    {"LpPool", infer_lppool, NULL, 0, NULL},
    {"GlobalLpPool", infer_lppool, NULL, 0, NULL},
    {"GlobalMaxPool", infer_global_pool, lower_global_pool, 0, global_pool_images},
    {"BatchNormalization", infer_batchnorm, lower_batchnorm, 0, batchnorm_images},
    {"InstanceNormalization", infer_instancenorm, lower_instancenorm, 0, fe_group_norm_images},
    {"GroupNormalization", infer_groupnorm, lower_groupnorm, 0, fe_group_norm_images},
    {"LayerNormalization", infer_layernorm, lower_layernorm, 0, layernorm_images},
    {"RMSNormalization", infer_layernorm, lower_layernorm, 0, layernorm_images},
    {"LpNormalization", infer_lpnorm, lower_lpnorm, 0, NULL},
    {"LRN", infer_lrn, lower_lrn, 0, NULL},
    {"MeanVarianceNormalization", infer_mvn, lower_mvn, 0, NULL},
    {"Dropout", infer_dropout, lower_dropout, 6u, NULL},
    {"DepthToSpace", infer_d2s, lower_d2s, 0, d2s_images},
    {"SpaceToDepth", infer_d2s, lower_d2s, 0, d2s_images},
    {"Trilu", infer_trilu, lower_trilu, 2u, NULL},
    {"Einsum", infer_einsum, lower_einsum, 0, NULL},
};
const size_t fe_ops_nn_count = sizeof fe_ops_nn / sizeof fe_ops_nn[0];
