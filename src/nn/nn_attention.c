/* Attention helpers (lmnn_attention.h): head splitting and concatenation in
 * one data movement program for tile tensors (attn_heads.c), else reshapes
 * and permutes; scaled dot-product attention as two matmuls around one
 * fused scale-mask-causal softmax (attn_softmax_*.c with norm_writer.c), or,
 * for rows of more than FUSED_MAX_TILES tiles, a scale-and-causal program
 * (attn_causal_reader.c with the unary map's compute and writer), lmnn_add
 * and lmnn_softmax.
 *
 * Every argument is checked before the first op runs, so a later failure can
 * only come from the device (memory): it frees what was made and passes the
 * inner op's message on, prefixed with this helper's name. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

#define SDPA "lmnn_scaled_dot_product_attention"

void lmnn_split_qkv_options_init(lmnn_split_qkv_options *opts) {
    if (opts) *opts = (lmnn_split_qkv_options){0};
}

void lmnn_sdpa_options_init(lmnn_sdpa_options *opts) {
    if (!opts) return;
    *opts = (lmnn_sdpa_options){0};
    opts->scale = NAN;
}

/* An inner op's failure, re-labelled as the helper's. */
static lm_status inner(lm_status st, const char *op) {
    return st ? nn_fail_call(st, op) : LM_OK;
}

static void free_all(lmnn_tensor *t, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        nn_tensor_discard(t[i]);
        t[i] = (lmnn_tensor){0};
    }
}

/* The output options of a movement helper: dtype zero or the input's. */
static lm_status check_output(const char *op, const lmnn_output *output, const nn_tensor *t,
                              lmnn_output *out) {
    *out = output ? *output : (lmnn_output){0};
    if (out->dtype && out->dtype != t->dtype)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected zero or the input's %s, given %s (use "
                       "lmnn_typecast)",
                       lmnn_dtype_name(t->dtype), lmnn_dtype_name(out->dtype));
    lmnn_memory_config m = nn_output_memory(&out->memory, t);
    lm_status st = nn_check_memory(op, &m);
    if (st) return st;
    out->dtype = 0;
    return LM_OK;
}

/* [B, S, H*D] (or [S, B, H*D]) checks shared by split_heads and the QKV
 * split: `parts` is 1 or 3 (the last dim holds that many H*D blocks). */
static lm_status check_heads_input(const char *op, const char *arg, lmnn_tensor a,
                                   uint32_t num_heads, uint32_t parts, bool seq_first,
                                   nn_tensor **out_t) {
    nn_tensor *t = NULL;
    char s[128];
    lm_status st = nn_get_tensor(op, arg, a, &t);
    if (st) return st;
    if (t->shape.rank != 3)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: expected rank 3 [%s, %sH*D], given shape %s", arg,
                       seq_first ? "S, B" : "B, S", parts == 3 ? "3*" : "",
                       nn_shape_str(&t->shape, s, sizeof s));
    if (num_heads == 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "num_heads: expected > 0, given 0");
    uint32_t last = t->shape.dims[2];
    if (last % (parts * num_heads))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: last dim %u of shape %s is not a multiple of %s%u heads", arg, last,
                       nn_shape_str(&t->shape, s, sizeof s), parts == 3 ? "3 x " : "", num_heads);
    *out_t = t;
    return LM_OK;
}

/* Whether attn_heads.c moves `t`'s elements: tile layout with 2- or 4-byte
 * elements (bfloat8_b's shared exponents and row-major tensors take the
 * reshape and permute path). */
static bool heads_kernel_fits(const nn_tensor *t) {
    return t->layout == LMNN_TILE && t->dtype != LMNN_BFLOAT8_B;
}

/* Modes of attn_heads.c. */
enum { HEADS_SPLIT, HEADS_CONCAT, HEADS_CONCAT_SEQ_FIRST, HEADS_SPLIT_SEQ_FIRST };

/* The head split (`parts` outputs [B, H, S, D] from [B, S, parts*H*D], or
 * one from sequence-first [S, B, H*D]) or concatenation ([B, S, H*D], or
 * sequence first [S*B, H*D], from [B, H, S, D]) of a tile tensor in one
 * program (attn_heads.c). */
static lm_status heads_tiles(const char *op, nn_tensor *in, uint32_t mode, uint32_t parts,
                             uint32_t heads, const lmnn_memory_config *memory, lmnn_tensor *outs) {
    const uint32_t *dims = in->shape.dims;
    bool splits = mode == HEADS_SPLIT || mode == HEADS_SPLIT_SEQ_FIRST;
    uint32_t d = splits ? dims[2] / (parts * heads) : dims[3];
    lmnn_shape os = mode == HEADS_SPLIT             ? LMNN_SHAPE(dims[0], heads, dims[1], d)
                    : mode == HEADS_SPLIT_SEQ_FIRST ? LMNN_SHAPE(dims[1], heads, dims[0], d)
                    : mode == HEADS_CONCAT          ? LMNN_SHAPE(dims[0], dims[2], heads * d)
                                                    : LMNN_SHAPE(dims[2] * dims[0], heads * d);
    nn_tensor *o[3] = {NULL, NULL, NULL};
    lm_status st = LM_OK;
    for (uint32_t p = 0; p < parts; p++)
        outs[p] = (lmnn_tensor){0};
    for (uint32_t p = 0; p < parts && !st; p++)
        st = nn_tensor_new(op, in->device, &os, in->dtype, LMNN_TILE, memory, &outs[p], &o[p]);
    nn_key key;
    nn_key_init(&key, "attn_heads");
    nn_key_u32(&key, mode);
    nn_key_u32(&key, parts);
    nn_key_u32(&key, heads);
    nn_key_tensor(&key, in);
    if (!st) nn_key_tensor(&key, o[0]);
    nn_program *prog = st ? NULL : nn_cache_find(in->device, &key);
    if (!st && !prog) {
        nn_split split;
        nn_program p = {0};
        nn_tiles gi = nn_tiles_of(&in->shape), go = nn_tiles_of(&os);
        uint32_t per_part = (uint32_t)o[0]->pages;
        lm_data_format f = nn_tile_format(in->dtype);
        nn_kernel_spec k = {"attn_heads.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, in->device, (uint64_t)per_part * parts, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 16, f, (uint32_t)lm_tile_size(f), 1);
        if (!st) st = nn_program_kernel(op, &p, &k, NULL);
        for (uint32_t i = 0; i < split.num_cores && !st; i++) {
            uint32_t args[] = {split.first[i],
                               split.count[i],
                               heads,
                               d,
                               per_part,
                               go.ht,
                               go.wt,
                               go.h,
                               go.w,
                               gi.ht,
                               gi.wt,
                               mode,
                               in->dtype == LMNN_BFLOAT16 ? 2u : 4u,
                               in->memory.type == LM_BUFFER_DRAM,
                               o[0]->memory.type == LM_BUFFER_DRAM,
                               dims[0]};
            st = lm_set_runtime_args(p.program, p.kernels[0], split.cores[i], args, 16);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, o[0], o[1], o[2]};
    if (!st) st = nn_launch(op, prog, tensors, 1 + parts);
    if (st) {
        for (uint32_t i = 0; i < parts; i++) {
            nn_tensor_discard(outs[i]);
            outs[i] = (lmnn_tensor){0};
        }
    }
    return st;
}

/* [B, S, H*D] (or with `seq_first` [S, B, H*D]) -> [B, H, S, D] (or [B,
 * H, D, S] with `transpose`) by a reshape to [B, S, H, D] ([S, B, H, D])
 * and a permute (what heads_tiles cannot move). */
static lm_status heads_of(const char *op, nn_tensor *t, lmnn_tensor a, uint32_t num_heads,
                          bool seq_first, bool transpose, const lmnn_output *output,
                          lmnn_tensor *out) {
    const uint32_t *dims = t->shape.dims;
    lmnn_shape split = LMNN_SHAPE(dims[0], dims[1], num_heads, dims[2] / num_heads);
    static const int32_t perm[] = {0, 2, 1, 3}, perm_t[] = {0, 2, 3, 1}, seq[] = {1, 2, 0, 3};
    lmnn_tensor r = {0};
    lm_status st = inner(lmnn_reshape(a, &split, NULL, &r), op);
    if (!st)
        st = inner(lmnn_permute(r,
                                seq_first   ? seq
                                : transpose ? perm_t
                                            : perm,
                                4, output, out),
                   op);
    nn_tensor_discard(r);
    return st;
}

/* [B, S, H*D] (or with `seq_first` [S, B, H*D]) -> [B, H, S, D]. */
static lm_status split_heads(const char *op, lmnn_tensor a, uint32_t num_heads, bool seq_first,
                             const lmnn_output *output, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t = NULL;
    lmnn_output o;
    lm_status st = check_heads_input(op, "a", a, num_heads, 1, seq_first, &t);
    if (!st) st = check_output(op, output, t, &o);
    if (st) return st;
    if (heads_kernel_fits(t)) {
        lmnn_memory_config memory = nn_output_memory(&o.memory, t);
        return heads_tiles(op, t, seq_first ? HEADS_SPLIT_SEQ_FIRST : HEADS_SPLIT, 1, num_heads,
                           &memory, out);
    }
    return heads_of(op, t, a, num_heads, seq_first, false, &o, out);
}

lm_status lmnn_split_heads(lmnn_tensor a, uint32_t num_heads, const lmnn_output *output,
                           lmnn_tensor *out) {
    return split_heads("lmnn_split_heads", a, num_heads, false, output, out);
}

lm_status lmnn_split_heads_seq_first(lmnn_tensor a, uint32_t num_heads, const lmnn_output *output,
                                     lmnn_tensor *out) {
    return split_heads("lmnn_split_heads_seq_first", a, num_heads, true, output, out);
}

/* [B, H, S, D] (or, not `seq_first`, one batch entry [H, S, D]) -> [B, S,
 * H*D] ([S, H*D]), or with `seq_first` [S*B, H*D]. */
static lm_status concat_heads(const char *op, lmnn_tensor a, bool seq_first,
                              const lmnn_output *output, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *t = NULL;
    lmnn_output o;
    char sb[128];
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (st) return st;
    if (t->shape.rank != 4 && (seq_first || t->shape.rank != 3))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "a: expected rank 4 [B, H, S, D]%s, given shape %s",
                       seq_first ? "" : " or 3 [H, S, D]", nn_shape_str(&t->shape, sb, sizeof sb));
    if ((st = check_output(op, output, t, &o))) return st;
    /* [H, S, D] is one batch entry: the same pages as [1, H, S, D]. */
    bool one = t->shape.rank == 3;
    nn_tensor in = *t;
    if (one) in.shape = LMNN_SHAPE(1, t->shape.dims[0], t->shape.dims[1], t->shape.dims[2]);
    const uint32_t *d = in.shape.dims;
    if ((uint64_t)d[1] * d[3] > UINT32_MAX || (uint64_t)d[2] * d[0] > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: %s of shape %s overflows",
                       (uint64_t)d[1] * d[3] > UINT32_MAX ? "H*D" : "S*B",
                       nn_shape_str(&t->shape, sb, sizeof sb));
    lmnn_shape joined = seq_first ? LMNN_SHAPE(d[2] * d[0], d[1] * d[3])
                        : one     ? LMNN_SHAPE(d[2], d[1] * d[3])
                                  : LMNN_SHAPE(d[0], d[2], d[1] * d[3]);
    if (heads_kernel_fits(t)) {
        lmnn_memory_config memory = nn_output_memory(&o.memory, t);
        uint32_t mode = seq_first ? HEADS_CONCAT_SEQ_FIRST : HEADS_CONCAT;
        if ((st = heads_tiles(op, &in, mode, 1, d[1], &memory, out))) return st;
        nn_tensor *r = NULL;
        if (one && !nn_get_tensor(op, "out", *out, &r)) nn_tensor_retag(r, &joined);
        return LM_OK;
    }
    static const int32_t perm4[] = {0, 2, 1, 3}, perm3[] = {1, 0, 2}, seq[] = {2, 0, 1, 3};
    lmnn_tensor p = {0};
    st = inner(lmnn_permute(a, seq_first ? seq : one ? perm3 : perm4, 4 - one, NULL, &p), op);
    if (!st) st = inner(lmnn_reshape(p, &joined, &o, out), op);
    nn_tensor_discard(p);
    return st;
}

lm_status lmnn_concat_heads(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out) {
    return concat_heads("lmnn_concat_heads", a, false, output, out);
}

lm_status lmnn_concat_heads_seq_first(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out) {
    return concat_heads("lmnn_concat_heads_seq_first", a, true, output, out);
}

lm_status lmnn_split_query_key_value_and_split_heads(lmnn_tensor qkv,
                                                     const lmnn_split_qkv_options *opts,
                                                     lmnn_tensor *out_q, lmnn_tensor *out_k,
                                                     lmnn_tensor *out_v) {
    const char *op = "lmnn_split_query_key_value_and_split_heads";
    if (!out_q || !out_k || !out_v)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !out_q   ? "out_q"
                       : !out_k ? "out_k"
                                : "out_v");
    if (!opts)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts is NULL (num_heads must be given)");
    nn_tensor *t = NULL;
    lmnn_output o;
    lm_status st = check_heads_input(op, "qkv", qkv, opts->num_heads, 3, false, &t);
    if (!st) st = check_output(op, &opts->output, t, &o);
    if (st) return st;
    lmnn_tensor parts[3] = {{0}}, res[3] = {{0}};
    if (heads_kernel_fits(t)) {
        /* One program for the three; a transposed key is one more (a tile
         * transpose). */
        lmnn_memory_config memory = nn_output_memory(&o.memory, t);
        st = heads_tiles(op, t, HEADS_SPLIT, 3, opts->num_heads, &memory, res);
        if (!st && opts->transpose_key) {
            lmnn_tensor kt = {0};
            st = inner(lmnn_transpose(res[1], -2, -1, &o, &kt), op);
            nn_tensor_discard(res[1]);
            res[1] = kt;
        }
    } else {
        uint32_t hd = t->shape.dims[2] / 3;
        uint32_t sizes[3] = {hd, hd, hd};
        st = inner(lmnn_split(qkv, sizes, 3, -1, NULL, parts), op);
        for (uint32_t i = 0; i < 3 && !st; i++) {
            nn_tensor *pt = NULL;
            st = nn_get_tensor(op, "qkv", parts[i], &pt);
            if (!st)
                st = heads_of(op, pt, parts[i], opts->num_heads, false,
                              i == 1 && opts->transpose_key, &o, &res[i]);
        }
    }
    free_all(parts, 3);
    if (st) {
        free_all(res, 3);
        return st;
    }
    *out_q = res[0];
    *out_k = res[1];
    *out_v = res[2];
    return LM_OK;
}

/* ---- scaled dot-product attention ---- */

/* out = scores * scale with the causal mask applied (scores: a float tile
 * tensor [..., Sq, Sk]); one pass, a new tensor like scores. */
static lm_status scale_causal(const char *op, nn_tensor *in, double scale, bool causal,
                              lmnn_tensor *out) {
    const char *chain = scale != 1.0 ? "mul_unary_tile(0, nn_param[0])" : "";
    uint32_t params[NN_UNARY_PARAMS] = {scale != 1.0 ? nn_float_bits((float)scale) : 0, 0, 0};
    nn_tiles g = nn_tiles_of(&in->shape);
    uint32_t rc[] = {in->memory.type == LM_BUFFER_DRAM, (uint32_t)nn_tile_format(in->dtype)};
    uint32_t ra[] = {causal, g.ht, g.wt, g.h, g.w};
    nn_unary_reader reader = {"attn_causal_reader.c", rc, 2, ra, 5, NULL, 0};
    /* x * s keeps the zero padding zero: no fill in the writer. */
    return nn_unary_map_with(op, in, in->dtype, &in->memory, chain, params, 0, false, &reader, out);
}

/* Score rows of at most this many tiles (Sk <= 2048) take the fused
 * softmax: the row stays in L1 as float32 (256 KiB). Longer rows take the
 * scale, add and lmnn_softmax path. */
#define FUSED_MAX_TILES 64

/* out = softmax(scores * scale + mask (+ causal)) along the last dim in one
 * program (attn_softmax_*.c, norm_writer.c); scores float32 [B, H, Sq, Sk],
 * mask NULL or broadcastable to it (checked by the caller). */
static lm_status attn_softmax(const char *op, nn_tensor *in, nn_tensor *mask, double scale,
                              bool causal, lmnn_tensor *out) {
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st =
        nn_tensor_new(op, in->device, &in->shape, in->dtype, LMNN_TILE, &in->memory, &oh, &o);
    if (st) return st;
    nn_key key;
    nn_key_init(&key, "attn_softmax");
    nn_key_f64(&key, scale);
    nn_key_u32(&key, (uint32_t)causal | (uint32_t)(mask != NULL) << 1);
    nn_key_tensor(&key, in);
    if (mask) nn_key_tensor(&key, mask);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(in->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_tiles g = nn_tiles_of(&in->shape);
        uint32_t heads = in->shape.dims[1];
        uint32_t md[4] = {1, 1, 1, 1};
        if (mask)
            for (uint32_t i = 0; i < mask->shape.rank; i++)
                md[4 - mask->shape.rank + i] = mask->shape.dims[i];
        uint32_t rows_one = md[2] == 1, cols_one = md[3] == 1;
        uint32_t bcast = (rows_one && g.h > 1 ? 1u : 0u) | (cols_one && g.w > 1 ? 2u : 0u);
        lm_data_format f = nn_tile_format(in->dtype);
        lm_data_format fm = mask ? nn_tile_format(mask->dtype) : f;
        uint32_t wc[] = {o->memory.type == LM_BUFFER_DRAM, 1, 1, (uint32_t)f};
        uint32_t ra[] = {g.wt,
                         g.ht,
                         g.h,
                         g.w,
                         heads,
                         md[0],
                         md[1],
                         rows_one,
                         cols_one,
                         (md[2] + 31) / 32,
                         (md[3] + 31) / 32,
                         in->memory.type == LM_BUFFER_DRAM,
                         mask && mask->memory.type == LM_BUFFER_DRAM,
                         causal,
                         mask != NULL};
        uint32_t ca[] = {g.wt,   g.ht,  g.w,   scale != 1.0, nn_float_bits((float)scale),
                         !!mask, bcast, causal};
        uint32_t wa[] = {g.wt, 1, g.ht, g.wt, g.h, g.w};
        nn_kernel_spec reader = {
            "attn_softmax_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {
            "attn_softmax_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, true};
        nn_kernel_spec writer = {"norm_writer.c", LM_PROCESSOR_DM1, wc, 4, NULL, 0, false};
        lm_kernel kr, kc, kw;
        st = nn_split_work(op, in->device, in->pages / g.wt, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, f, (uint32_t)lm_tile_size(f), 2);
        if (!st && mask) st = nn_program_cb(op, &p, 1, fm, (uint32_t)lm_tile_size(fm), 2);
        if (!st) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_FLOAT32, 4096, 2);
        for (uint32_t cb = 3; cb <= 7 && !st; cb++)
            st = nn_program_cb(op, &p, cb, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 8, LM_DATA_FORMAT_FLOAT32, 4096, g.wt);
        if (!st) st = nn_program_cb(op, &p, 16, f, (uint32_t)lm_tile_size(f), 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &p, &compute, &kc);
        if (!st) st = nn_program_kernel(op, &p, &writer, &kw);
        for (uint32_t i = 0; i < split.num_cores && !st; i++) {
            uint32_t args[2 + 15];
            args[0] = split.first[i];
            args[1] = split.count[i];
            memcpy(args + 2, ra, sizeof ra);
            st = lm_set_runtime_args(p.program, kr, split.cores[i], args, 17);
            memcpy(args + 2, ca, sizeof ca);
            if (!st) st = lm_set_runtime_args(p.program, kc, split.cores[i], args, 10);
            memcpy(args + 2, wa, sizeof wa);
            if (!st) st = lm_set_runtime_args(p.program, kw, split.cores[i], args, 8);
            if (st) st = nn_fail_call(st, op);
        }
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, o, mask ? mask : in};
    if (!st) st = nn_launch(op, prog, tensors, 3);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* A live float tile tensor of rank 4 on q's device. */
static lm_status check_operand(const char *arg, lmnn_tensor h, const nn_tensor *first,
                               nn_tensor **out) {
    char s[128];
    lm_status st = nn_get_tensor(SDPA, arg, h, out);
    if (!st && first) st = nn_check_same_device(SDPA, arg, *out, first);
    if (!st) st = nn_check_layout(SDPA, arg, *out, LMNN_TILE);
    if (!st) st = nn_check_float(SDPA, arg, *out);
    if (!st && (*out)->shape.rank != 4)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA, "%s: expected rank 4 [B, H, S, D], given %s",
                       arg, nn_shape_str(&(*out)->shape, s, sizeof s));
    return st;
}

/* t's dim `d` (0 batch, 1 heads) equals q's. */
static lm_status check_dim(const char *arg, const nn_tensor *t, const nn_tensor *q, uint32_t d) {
    if (t->shape.dims[d] == q->shape.dims[d]) return LM_OK;
    char s1[128], s2[128];
    return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA, "%s: %s %u differs from q's %u (q %s, %s %s)",
                   arg, d ? "head count" : "batch size", t->shape.dims[d], q->shape.dims[d],
                   nn_shape_str(&q->shape, s1, sizeof s1), arg,
                   nn_shape_str(&t->shape, s2, sizeof s2));
}

lm_status lmnn_scaled_dot_product_attention(lmnn_tensor q, lmnn_tensor k, lmnn_tensor v,
                                            const lmnn_sdpa_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA, "out is NULL");
    lmnn_sdpa_options defaults;
    if (!opts) {
        lmnn_sdpa_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *tq = NULL, *tk = NULL, *tv = NULL, *tm = NULL;
    char s1[128], s2[128];
    lm_status st = check_operand("q", q, NULL, &tq);
    if (!st) st = check_operand("k", k, tq, &tk);
    if (!st) st = check_operand("v", v, tq, &tv);
    for (uint32_t d = 0; d < 2 && !st; d++) {
        st = check_dim("k", tk, tq, d);
        if (!st) st = check_dim("v", tv, tq, d);
    }
    if (st) return st;
    uint32_t sq = tq->shape.dims[2], dq = tq->shape.dims[3];
    uint32_t sk = tk->shape.dims[opts->key_transposed ? 3 : 2];
    uint32_t dk = tk->shape.dims[opts->key_transposed ? 2 : 3];
    if (dk != dq)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA,
                       "k: head size %u of shape %s%s differs from q's %u (q %s)", dk,
                       nn_shape_str(&tk->shape, s1, sizeof s1),
                       opts->key_transposed ? " (transposed: [B, H, D, Sk])" : "", dq,
                       nn_shape_str(&tq->shape, s2, sizeof s2));
    if (tv->shape.dims[2] != sk)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA,
                       "v: sequence length %u of shape %s differs from k's %u (k %s)",
                       tv->shape.dims[2], nn_shape_str(&tv->shape, s1, sizeof s1), sk,
                       nn_shape_str(&tk->shape, s2, sizeof s2));
    if (opts->mask.id) {
        st = nn_get_tensor(SDPA, "mask", opts->mask, &tm);
        if (!st) st = nn_check_same_device(SDPA, "mask", tm, tq);
        if (!st) st = nn_check_layout(SDPA, "mask", tm, LMNN_TILE);
        if (!st) st = nn_check_float(SDPA, "mask", tm);
        if (st) return st;
        const uint32_t want[4] = {tq->shape.dims[0], tq->shape.dims[1], sq, sk};
        bool ok = tm->shape.rank <= 4;
        for (uint32_t i = 0; ok && i < tm->shape.rank; i++) {
            uint32_t md = tm->shape.dims[tm->shape.rank - 1 - i];
            ok = md == 1 || md == want[3 - i];
        }
        if (!ok) {
            lmnn_shape ws = lmnn_shape_of(4, want);
            return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA,
                           "mask: shape %s does not broadcast to the scores' [B, H, Sq, Sk] = %s",
                           nn_shape_str(&tm->shape, s1, sizeof s1),
                           nn_shape_str(&ws, s2, sizeof s2));
        }
    }
    double scale = isnan(opts->scale) ? 1.0 / sqrt((double)dq) : opts->scale;
    if (!isfinite(scale) || !isfinite((float)scale))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA, "scale: expected a finite float, given %g",
                       opts->scale);
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : tq->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, SDPA,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, tq);
    if ((st = nn_check_memory(SDPA, &memory))) return st;

    /* scores (float32) -> softmax(scores * scale + mask (+ causal)) -> @ v:
     * one fused program for rows that fit in L1, else scale (and causal),
     * add and softmax. */
    lmnn_tensor t[5] = {{0}};
    uint32_t n = 0;
    lmnn_matmul_options mo;
    lmnn_matmul_options_init(&mo);
    mo.transpose_b = !opts->key_transposed;
    mo.output.dtype = LMNN_FLOAT32;
    st = inner(lmnn_matmul(q, k, &mo, &t[n]), SDPA);
    nn_tensor *ts = NULL;
    if (!st) st = nn_get_tensor(SDPA, "scores", t[n], &ts);
    if (!st && (sk + 31) / 32 <= FUSED_MAX_TILES) {
        n++;
        st = attn_softmax(SDPA, ts, tm, scale, opts->is_causal, &t[n]);
    } else if (!st) {
        /* The causal -Inf goes in before the scale: a scale <= 0 is applied
         * on its own first. */
        if (scale <= 0) {
            n++;
            st = inner(lmnn_mul_scalar(t[n - 1], scale, &t[n]), SDPA);
            if (!st) st = nn_get_tensor(SDPA, "scores", t[n], &ts);
            scale = 1.0;
        }
        if (!st && (scale != 1.0 || opts->is_causal)) {
            n++;
            st = scale_causal(SDPA, ts, scale, opts->is_causal, &t[n]);
        }
        if (!st && tm) {
            n++;
            st = inner(lmnn_add(t[n - 1], opts->mask, &t[n]), SDPA);
        }
        if (!st) {
            n++;
            st = inner(lmnn_softmax(t[n - 1], -1, NULL, &t[n]), SDPA);
        }
    }
    if (!st) {
        lmnn_matmul_options_init(&mo);
        mo.output.dtype = dtype;
        mo.output.memory = memory;
        st = inner(lmnn_matmul(t[n], v, &mo, out), SDPA);
    }
    free_all(t, 5);
    return st;
}
