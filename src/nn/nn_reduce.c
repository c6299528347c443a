/* Reductions: sum, mean, max, min, var, std and norms over any set of dims.
 *
 * One program shape serves them all (reduce_reader.c, reduce_compute.c): the
 * output is computed in keepdim form -- reduced dims of size 1 -- one output
 * tile per unit of work, from the input tiles that reduce into it. In tile
 * layout a result over the last dim sits in column 0 of its tile, over the
 * second-to-last dim in row 0, which is exactly the keepdim tensor's layout.
 * Without keepdim the shape loses the reduced dims; when that changes the
 * last two dims the elements move to other tile positions, and a second
 * program (reduce_relayout.c) copies them over.
 *
 * When few output tiles each have many inputs (a full reduction, say), the
 * work is cut further: each core reduces a chunk of an output tile's inputs
 * into a float32 partial tile, and a second launch combines the partials.
 *
 * Every shape-dependent number goes to the kernels as a runtime argument, so
 * the kernel binaries depend only on the kind of reduction.
 *
 * prod multiplies tiles element-wise (mul_binary_tile) and reduces within a
 * tile with the engine's LM_REDUCE_PROD, the padding filled with ones.
 *
 * argmax and argmin are composed of other ops (at the end of the file): max,
 * then eq(x, max) or isnan(x) selecting x's index (else n; the indices are
 * written by iota_writer.c) with where, a min reduction of those and a
 * typecast to uint32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"

#define F_SUM 1
#define F_MAX 2
#define F_MIN 3
#define F_PROD 4
#define PRE_ABS 1
#define PRE_SQUARE 2
#define POST_SQRT 1
#define MODE_NONE 0
#define MODE_ROW 1
#define MODE_COL 2
#define MODE_SCALAR 3
#define NEG_INF_BITS 0xff800000u
#define POS_INF_BITS 0x7f800000u
#define ONE_BITS 0x3f800000u

/* What an op asks of the shared program. */
typedef struct reduce_spec {
    const char *name;
    int func, pre, post;
    bool var, mean;
} reduce_spec;

void lmnn_reduce_options_init(lmnn_reduce_options *opts) {
    if (!opts) return;
    *opts = (lmnn_reduce_options){0};
    opts->correction = 1.0;
}

/* ---- dims ---- */

/* red[d] for each dim of a rank-`rank` tensor from opts; errors name `op`. */
static lm_status parse_dims(const char *op, const lmnn_reduce_options *o, uint32_t rank,
                            bool red[LMNN_MAX_DIMS]) {
    memset(red, 0, LMNN_MAX_DIMS * sizeof *red);
    if (o->dim_count && o->dim_mask)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dims and dim_mask: give the dims one way, not both");
    if (o->dim_count > LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dim_count: expected at most %d, given %u",
                       LMNN_MAX_DIMS, o->dim_count);
    if (!o->dim_count && !o->dim_mask) {
        for (uint32_t d = 0; d < rank; d++)
            red[d] = true;
        return LM_OK;
    }
    /* A rank-0 tensor takes dim 0 or -1 as PyTorch does (nothing to reduce). */
    uint32_t span = rank ? rank : 1;
    if (o->dim_mask) {
        if (o->dim_mask >> span)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "dim_mask: 0x%x names dims beyond the tensor's rank %u (expected bits "
                           "0..%u)",
                           o->dim_mask, rank, span - 1);
        for (uint32_t d = 0; d < rank; d++)
            red[d] = o->dim_mask >> d & 1;
        return LM_OK;
    }
    bool seen[LMNN_MAX_DIMS] = {0};
    for (uint32_t i = 0; i < o->dim_count; i++) {
        int32_t d = o->dims[i];
        if (d < -(int32_t)span || d >= (int32_t)span)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "dims: dim %d is out of range for a tensor of rank %u (expected %d..%d)",
                           d, rank, -(int32_t)span, (int32_t)span - 1);
        uint32_t n = (uint32_t)(d < 0 ? d + (int32_t)span : d);
        if (seen[n])
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dims: dim %d appears more than once", d);
        seen[n] = true;
        if (n < rank) red[n] = true;
    }
    return LM_OK;
}

/* The input's tile index space as dims (size, stride in tiles), each kept or
 * reduced; size-1 dims dropped and neighbours of one kind merged. */
typedef struct tile_dims {
    uint32_t nk, nr;
    uint32_t kept[LMNN_MAX_DIMS][2], red[LMNN_MAX_DIMS][2];
    uint32_t kept_tiles, red_tiles;
} tile_dims;

static void tile_dims_of(const lmnn_shape *s, const bool *red, tile_dims *out) {
    nn_tiles g = nn_tiles_of(s);
    uint32_t r = s->rank, n = 0;
    uint32_t size[LMNN_MAX_DIMS + 2], stride[LMNN_MAX_DIMS + 2];
    bool rd[LMNN_MAX_DIMS + 2];
    for (uint32_t i = 0; i + 2 < r; i++) {
        size[n] = s->dims[i];
        rd[n++] = red[i];
    }
    size[n] = g.ht;
    rd[n++] = r >= 2 && red[r - 2];
    size[n] = g.wt;
    rd[n++] = r >= 1 && red[r - 1];
    uint32_t st = 1;
    for (uint32_t i = n; i-- > 0;) {
        stride[i] = st;
        st *= size[i];
    }
    *out = (tile_dims){0};
    out->kept_tiles = out->red_tiles = 1;
    int last = -1; /* kind of the previous dim kept: 0 kept, 1 reduced */
    for (uint32_t i = 0; i < n; i++) {
        if (size[i] == 1) continue;
        uint32_t(*list)[2] = rd[i] ? out->red : out->kept;
        uint32_t *count = rd[i] ? &out->nr : &out->nk;
        if (last == (int)rd[i] && list[*count - 1][1] == size[i] * stride[i]) {
            list[*count - 1][0] *= size[i];
            list[*count - 1][1] = stride[i];
        } else {
            list[*count][0] = size[i];
            list[*count][1] = stride[i];
            (*count)++;
        }
        last = rd[i];
        if (rd[i])
            out->red_tiles *= size[i];
        else
            out->kept_tiles *= size[i];
    }
}

/* ---- tile relayout ---- */

lm_status nn_reshape_tiles(const char *op, nn_tensor *in, nn_tensor *out) {
    nn_tiles gi = nn_tiles_of(&in->shape), go = nn_tiles_of(&out->shape);
    uint32_t esize = nn_rm_elem_size(in->dtype);
    if (in->dtype != out->dtype || esize < 2 || in->dtype == LMNN_UINT16)
        return nn_fail(LM_ERR_INTERNAL, op, "tile reshape of %s to %s", lmnn_dtype_name(in->dtype),
                       lmnn_dtype_name(out->dtype));
    if (lmnn_shape_volume(&in->shape) > UINT32_MAX)
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "a result of more than 2^32 elements cannot change its tile layout yet");
    nn_key key;
    nn_key_init(&key, "reshape_tiles");
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(in->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format f = nn_tile_format(in->dtype);
        uint32_t cargs[] = {esize};
        uint32_t rargs[] = {go.ht,
                            go.wt,
                            go.h,
                            go.w,
                            gi.ht,
                            gi.wt,
                            gi.h,
                            gi.w,
                            in->memory.type == LM_BUFFER_DRAM,
                            out->memory.type == LM_BUFFER_DRAM};
        nn_kernel_spec k = {"reduce_relayout.c", LM_PROCESSOR_DM0, cargs, 1, NULL, 0, false};
        lm_kernel kernel;
        st = nn_split_work(op, in->device, out->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, f, (uint32_t)lm_tile_size(f), 1);
        if (!st) st = nn_program_cb(op, &p, 16, f, (uint32_t)lm_tile_size(f), 1);
        if (!st) st = nn_program_kernel(op, &p, &k, &kernel);
        if (!st) st = nn_kernel_split_args(op, &p, kernel, &split, rargs, 10);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

/* ---- the reduction program ---- */

/* One launch of the reduction program: `in` (tile dims `td`) into `out`. */
typedef struct reduce_launch {
    int mode, func, pre, post;
    bool var, partial, masks, zero_pad;
    uint32_t fill;                /* bits, 0: none */
    uint32_t chunks, chunk;       /* per output tile */
    uint32_t scaler, mean_scaler; /* float32 bits */
    uint32_t var_factor;          /* N / (N - correction) */
} reduce_launch;

static lm_status run_reduce(const char *op, nn_tensor *in, const tile_dims *td,
                            const reduce_launch *L, nn_tensor *out) {
    nn_tiles g = nn_tiles_of(&in->shape), go = nn_tiles_of(&out->shape);
    bool red_h = L->mode == MODE_COL || L->mode == MODE_SCALAR;
    bool red_w = L->mode == MODE_ROW || L->mode == MODE_SCALAR;
    nn_key key;
    nn_key_init(&key, "reduce");
    uint32_t kv[] = {
        (uint32_t)L->mode, (uint32_t)L->func, (uint32_t)L->pre, (uint32_t)L->post, L->var,
        L->partial,        L->masks,          L->zero_pad,      L->fill,           L->chunks,
        L->chunk,          L->scaler,         L->mean_scaler};
    nn_key_add(&key, kv, sizeof kv);
    nn_key_add(&key, td, sizeof *td);
    nn_key_tensor(&key, in);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(in->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(in->dtype), fout = nn_tile_format(out->dtype);
        uint32_t wr_c[] = {out->memory.type == LM_BUFFER_DRAM, 1, L->zero_pad, (uint32_t)fout};
        uint32_t args[64];
        uint32_t n = 0;
        args[n++] = g.ht, args[n++] = g.wt, args[n++] = g.h, args[n++] = g.w;
        args[n++] = L->chunks, args[n++] = L->chunk, args[n++] = td->red_tiles;
        args[n++] = L->scaler, args[n++] = L->mean_scaler, args[n++] = L->var_factor;
        args[n++] = L->fill, args[n++] = L->masks;
        args[n++] = (uint32_t)L->mode, args[n++] = (uint32_t)L->func, args[n++] = (uint32_t)L->pre;
        args[n++] = (uint32_t)L->post, args[n++] = L->var, args[n++] = L->partial;
        args[n++] = red_h, args[n++] = red_w;
        args[n++] = in->memory.type == LM_BUFFER_DRAM, args[n++] = (uint32_t)fin;
        args[n++] = td->nk, args[n++] = td->nr;
        for (uint32_t i = 0; i < td->nk; i++)
            args[n++] = td->kept[i][0], args[n++] = td->kept[i][1];
        for (uint32_t i = 0; i < td->nr; i++)
            args[n++] = td->red[i][0], args[n++] = td->red[i][1];
        /* The writer: units, n = 1, inner = 1, and the output's geometry for
         * zero_pad. */
        uint32_t wargs[] = {1, 1, go.ht, go.wt, go.h, go.w};
        nn_kernel_spec reader = {"reduce_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {"reduce_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, true};
        nn_kernel_spec writer = {"norm_writer.c", LM_PROCESSOR_DM1, wr_c, 4, NULL, 0, false};
        lm_kernel kr, kc, kw;
        uint64_t units = (uint64_t)td->kept_tiles * L->chunks;
        st = nn_split_work(op, in->device, units, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, in->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, (uint32_t)lm_tile_size(fin), 2);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_FLOAT32, 4096, 2);
        if (!st && L->masks) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_FLOAT32, 4096, 3);
        if (!st) st = nn_program_cb(op, &p, 3, LM_DATA_FORMAT_FLOAT32, 4096, 2);
        if (!st && L->var) st = nn_program_cb(op, &p, 4, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 5, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 16, fout, (uint32_t)lm_tile_size(fout), 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &p, &compute, &kc);
        if (!st) st = nn_program_kernel(op, &p, &writer, &kw);
        if (!st) st = nn_kernel_split_args(op, &p, kr, &split, args, n);
        if (!st) st = nn_kernel_split_args(op, &p, kc, &split, args, n);
        if (!st) st = nn_kernel_split_args(op, &p, kw, &split, wargs, 6);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, in->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {in, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

/* Splits the work of `out_tiles` output tiles of `red_tiles` inputs each into
 * chunks when that puts more cores to work: the chunk count per output tile. */
static uint32_t chunk_count(lm_device *device, uint32_t out_tiles, uint32_t red_tiles) {
    lm_device_info info;
    if (lm_device_get_info(device, &info)) return 1;
    uint32_t grid = info.grid_x * info.grid_y;
    if (out_tiles * 4 > grid || red_tiles < 8) return 1;
    uint32_t p = grid / out_tiles;
    if (p > red_tiles / 4) p = red_tiles / 4;
    return p < 2 ? 1 : p;
}

static lm_status reduce_op(const reduce_spec *sp, lmnn_tensor a, const lmnn_reduce_options *opts,
                           lmnn_tensor *out) {
    const char *op = sp->name;
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_reduce_options defaults;
    if (!opts) {
        lmnn_reduce_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (!st) st = nn_check_layout(op, "a", t, LMNN_TILE);
    if (!st) st = nn_check_float(op, "a", t);
    if (st) return st;
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : t->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, t);
    if ((st = nn_check_memory(op, &memory))) return st;
    bool red[LMNN_MAX_DIMS];
    uint32_t rank = t->shape.rank;
    if ((st = parse_dims(op, opts, rank, red))) return st;

    /* Shapes: keepdim form and the result's. */
    lmnn_shape kshape = t->shape, oshape = {0};
    double count = 1;
    for (uint32_t d = 0; d < rank; d++) {
        if (red[d]) {
            count *= t->shape.dims[d];
            kshape.dims[d] = 1;
        } else {
            oshape.dims[oshape.rank++] = t->shape.dims[d];
        }
    }
    if (opts->keepdim) oshape = kshape;
    nn_tiles g = nn_tiles_of(&t->shape), gk = nn_tiles_of(&kshape), go = nn_tiles_of(&oshape);
    bool relayout = gk.batch != go.batch || gk.h != go.h || gk.w != go.w;

    reduce_launch L = {0};
    bool red_h = rank >= 2 && red[rank - 2], red_w = rank >= 1 && red[rank - 1];
    L.mode = red_h && red_w ? MODE_SCALAR : red_w ? MODE_ROW : red_h ? MODE_COL : MODE_NONE;
    L.func = sp->func;
    L.pre = sp->pre;
    L.post = sp->post;
    L.var = sp->var;
    L.chunks = 1;
    bool pad = (red_h && g.h % 32) || (red_w && g.w % 32);
    if (pad && sp->pre != PRE_ABS && sp->func == F_MAX) L.fill = NEG_INF_BITS;
    if (pad && sp->func == F_MIN) L.fill = POS_INF_BITS;
    if (pad && sp->func == F_PROD) L.fill = ONE_BITS; /* the padding multiplies by 1 */
    L.masks = pad && sp->var;
    double divisor = sp->var ? count - opts->correction : sp->mean ? count : 1;
    L.scaler = nn_float_bits(1.0 / divisor);
    L.mean_scaler = nn_float_bits(1.0 / count);
    /* (No mean correction when the divisor is not positive: Inf and NaN come
     * out as PyTorch's.) */
    L.var_factor = divisor > 0 ? nn_float_bits(count / divisor) : 0;
    /* A negative or infinite scaler would turn zero padding into -0 or NaN. */
    L.zero_pad = !(divisor > 0);

    /* Max and min fill padding with infinities, which bfloat8_b cannot hold
     * next to finite values (prod's ones would cost the small values of a
     * face row their precision): reduce a bfloat16 copy. */
    lmnn_tensor wide = {0};
    nn_tensor *src = t;
    if (L.fill && t->dtype == LMNN_BFLOAT8_B) {
        if ((st = nn_unary_map(op, t, LMNN_BFLOAT16, &t->memory, "", false, &wide))) return st;
        nn_get_tensor(op, "a", wide, &src);
    }

    /* The keepdim result (the final one when no relayout), then the result. */
    lmnn_dtype kdtype = relayout && dtype == LMNN_BFLOAT8_B ? LMNN_BFLOAT16 : dtype;
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor kh = {0}, oh = {0}, parth = {0}, rh = {0};
    nn_tensor *k = NULL, *o = NULL, *part = NULL;
    st = nn_tensor_new(op, t->device, relayout ? &kshape : &oshape, kdtype, LMNN_TILE,
                       relayout ? &dram : &memory, &kh, &k);
    tile_dims td;
    tile_dims_of(&src->shape, red, &td);
    uint32_t chunks = L.var ? 1 : chunk_count(t->device, td.kept_tiles, td.red_tiles);
    if (!st && chunks > 1) {
        /* Stage 1: float32 partials, unit u = output tile u / chunks. */
        reduce_launch L1 = L;
        L1.chunk = (td.red_tiles + chunks - 1) / chunks;
        L1.chunks = (td.red_tiles + L1.chunk - 1) / L1.chunk;
        L1.partial = true;
        L1.post = 0;
        L1.zero_pad = false;
        lmnn_shape ps = LMNN_SHAPE(td.kept_tiles * L1.chunks, 32, 32);
        st = nn_tensor_new(op, t->device, &ps, LMNN_FLOAT32, LMNN_TILE, &dram, &parth, &part);
        if (!st) st = run_reduce(op, src, &td, &L1, part);
        /* Stage 2: each output tile combines its chunks' partials. */
        tile_dims t2 = {1,        1, {{td.kept_tiles, L1.chunks}}, {{L1.chunks, 1}}, td.kept_tiles,
                        L1.chunks};
        reduce_launch L2 = L;
        L2.pre = 0;
        L2.fill = 0;
        L2.masks = false;
        L2.chunk = L1.chunks;
        if (!st) st = run_reduce(op, part, &t2, &L2, k);
    } else if (!st) {
        L.chunk = td.red_tiles;
        st = run_reduce(op, src, &td, &L, k);
    }
    if (!st && relayout) {
        st = nn_tensor_new(op, t->device, &oshape, kdtype, LMNN_TILE,
                           kdtype == dtype ? &memory : &dram, &oh, &o);
        if (!st) st = nn_reshape_tiles(op, k, o);
        if (!st && kdtype != dtype) st = nn_unary_map(op, o, dtype, &memory, "", false, &rh);
    }
    nn_tensor_discard(wide);
    nn_tensor_discard(parth);
    if (st) {
        nn_tensor_discard(kh);
        nn_tensor_discard(oh);
        nn_tensor_discard(rh);
        return st;
    }
    if (relayout) {
        nn_tensor_discard(kh);
        if (rh.id) nn_tensor_discard(oh);
        *out = rh.id ? rh : oh;
    } else {
        *out = kh;
    }
    return LM_OK;
}

/* ---- the ops ---- */

#define REDUCE_OP(fn, f, pre, post, var, mean)                                                     \
    lm_status lmnn_##fn(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out) {        \
        static const reduce_spec sp = {"lmnn_" #fn, f, pre, post, var, mean};                      \
        return reduce_op(&sp, a, opts, out);                                                       \
    }
REDUCE_OP(sum, F_SUM, 0, 0, false, false)
REDUCE_OP(mean, F_SUM, 0, 0, false, true)
REDUCE_OP(max, F_MAX, 0, 0, false, false)
REDUCE_OP(min, F_MIN, 0, 0, false, false)
REDUCE_OP(var, F_SUM, 0, 0, true, false)
REDUCE_OP(std, F_SUM, 0, POST_SQRT, true, false)
REDUCE_OP(prod, F_PROD, 0, 0, false, false)
#undef REDUCE_OP

lm_status lmnn_norm(lmnn_tensor a, double p, const lmnn_reduce_options *opts, lmnn_tensor *out) {
    static const reduce_spec l1 = {"lmnn_norm", F_SUM, PRE_ABS, 0, false, false};
    static const reduce_spec l2 = {"lmnn_norm", F_SUM, PRE_SQUARE, POST_SQRT, false, false};
    static const reduce_spec linf = {"lmnn_norm", F_MAX, PRE_ABS, 0, false, false};
    if (p == 1) return reduce_op(&l1, a, opts, out);
    if (p == 2) return reduce_op(&l2, a, opts, out);
    if (isinf(p) && p > 0) return reduce_op(&linf, a, opts, out);
    return nn_fail(LM_ERR_UNSUPPORTED, "lmnn_norm", "p: expected 1, 2 or INFINITY, given %g", p);
}

/* ---- argmax, argmin: composed of the ops above ---- */

/* The one dim of an index reduction: *dim = -1 for every dim (PyTorch's
 * dim=None, the flattened index). */
static lm_status one_dim(const char *op, const lmnn_reduce_options *o, uint32_t rank, int *dim) {
    bool red[LMNN_MAX_DIMS];
    lm_status st = parse_dims(op, o, rank, red);
    if (st) return st;
    *dim = -1;
    if (!o->dim_count && !o->dim_mask) return LM_OK;
    uint32_t n = 0;
    for (uint32_t d = 0; d < rank; d++)
        if (red[d]) *dim = (int)d, n++;
    if (o->dim_count > 1 || n > 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dims: expected one dim (or none for all of them), given %u",
                       o->dim_count ? o->dim_count : n);
    return LM_OK;
}

/* Frees the tensors that are set. */
static void free_all(lmnn_tensor *ts, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (ts[i].id) lmnn_tensor_free(ts[i]);
}

/* The tensor reshaped to one dim (tile layout), for the all-dims forms. */
static lm_status flatten(nn_tensor *t, lmnn_tensor a, lmnn_tensor *out) {
    lmnn_shape s = {1, {(uint32_t)lmnn_shape_volume(&t->shape)}};
    return lmnn_reshape(a, &s, NULL, out);
}

/* The result of an all-dims reduction (a rank-0 tensor) as keepdim asks:
 * rank 0, or every dim of `like` kept as 1. */
static lm_status all_dims_result(const lmnn_shape *like, bool keepdim, lmnn_tensor r,
                                 lmnn_tensor *out) {
    if (!keepdim || like->rank == 0) {
        *out = r;
        return LM_OK;
    }
    lmnn_shape s = *like;
    for (uint32_t d = 0; d < s.rank; d++)
        s.dims[d] = 1;
    lm_status st = lmnn_reshape(r, &s, NULL, out);
    lmnn_tensor_free(r);
    return st;
}

/* A float32 tile tensor [n] holding 0, 1, ..., n - 1 (n <= 2^24), written
 * on the device. */
static lm_status iota(const char *op, lm_device *device, uint32_t n, lmnn_tensor *out) {
    lmnn_shape s = {1, {n}};
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor oh;
    nn_tensor *o;
    lm_status st = nn_tensor_new(op, device, &s, LMNN_FLOAT32, LMNN_TILE, &dram, &oh, &o);
    if (st) return st;
    nn_key key;
    nn_key_init(&key, "iota");
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        uint32_t args[] = {1};
        nn_kernel_spec writer = {"iota_writer.c", LM_PROCESSOR_DM0, args, 1, NULL, 0, false};
        st = nn_split_work(op, device, o->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, device, &p);
        if (!st) st = nn_program_cb(op, &p, 16, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, &n, 1);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, device, &key, &p, &prog);
    }
    if (!st) st = nn_launch(op, prog, &o, 1);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* Indices of the extreme along `dim`: m = max (min) keeping the dim; a
 * candidate is x's index along the dim where x == m or x is NaN (so a NaN
 * wins, as in PyTorch), n elsewhere; the first index is the min of the
 * candidates. Indices are float32 (exact below 2^24) until the typecast. */
static lm_status arg_along(const char *op, bool is_max, lmnn_tensor x, const lmnn_shape *shape,
                           uint32_t dim, bool keepdim, const lmnn_output *output,
                           lmnn_tensor *out) {
    uint32_t n = shape->dims[dim];
    lmnn_tensor tmp[8] = {{0}};
    enum { M, EQ, NAN_, COND, IDX, BIG, CAND, R };
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dims[0] = (int32_t)dim;
    ro.dim_count = 1;
    ro.keepdim = true;
    lm_status st = is_max ? lmnn_max(x, &ro, &tmp[M]) : lmnn_min(x, &ro, &tmp[M]);
    if (!st) st = lmnn_eq(x, tmp[M], &tmp[EQ]);
    if (!st) st = lmnn_isnan(x, &tmp[NAN_]);
    if (!st) st = lmnn_logical_or(tmp[EQ], tmp[NAN_], &tmp[COND]);
    lmnn_tensor_info info;
    memset(&info, 0, sizeof info);
    if (!st) st = lmnn_tensor_get_info(x, &info);
    lmnn_tensor flat = {0};
    if (!st) st = iota(op, info.device, n, &flat);
    if (!st) {
        lmnn_shape is = *shape;
        for (uint32_t d = 0; d < is.rank; d++)
            is.dims[d] = d == dim ? n : 1;
        st = lmnn_reshape(flat, &is, NULL, &tmp[IDX]);
        lmnn_tensor_free(flat);
    }
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    to.layout = LMNN_TILE;
    lmnn_shape one = {1, {1}};
    if (!st) st = lmnn_full(info.device, &one, (double)n, &to, &tmp[BIG]);
    if (!st) st = lmnn_where(tmp[COND], tmp[IDX], tmp[BIG], &tmp[CAND]);
    ro.keepdim = keepdim;
    ro.output.memory = output->memory;
    if (!st) st = lmnn_min(tmp[CAND], &ro, &tmp[R]);
    if (!st) st = lmnn_typecast(tmp[R], output->dtype, out);
    free_all(tmp, 8);
    return st;
}

static lm_status arg_reduce(const char *op, bool is_max, lmnn_tensor a,
                            const lmnn_reduce_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_reduce_options defaults;
    if (!opts) {
        lmnn_reduce_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (!st) st = nn_check_layout(op, "a", t, LMNN_TILE);
    if (!st) st = nn_check_float(op, "a", t);
    if (st) return st;
    lmnn_output output = opts->output;
    if (!output.dtype) output.dtype = LMNN_UINT32;
    if (output.dtype != LMNN_UINT32 && output.dtype != LMNN_INT32)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected uint32 or int32, given %s",
                       lmnn_dtype_name(output.dtype));
    lmnn_memory_config memory = nn_output_memory(&output.memory, t);
    if ((st = nn_check_memory(op, &memory))) return st;
    output.memory = memory;
    int dim;
    if ((st = one_dim(op, opts, t->shape.rank, &dim))) return st;
    uint64_t n = dim >= 0 ? t->shape.dims[dim] : lmnn_shape_volume(&t->shape);
    if (n > (1u << 24))
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "a: %llu elements to choose from; at most 2^24 (indices are exact float32 "
                       "on the device)",
                       (unsigned long long)n);
    if (dim >= 0)
        return arg_along(op, is_max, a, &t->shape, (uint32_t)dim, opts->keepdim, &output, out);
    lmnn_shape like = t->shape;
    lmnn_tensor flat = {0}, r = {0};
    st = flatten(t, a, &flat);
    lmnn_shape fs = {1, {(uint32_t)n}};
    if (!st) st = arg_along(op, is_max, flat, &fs, 0, false, &output, &r);
    if (flat.id) lmnn_tensor_free(flat);
    if (st) return st;
    return all_dims_result(&like, opts->keepdim, r, out);
}

lm_status lmnn_argmax(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out) {
    return arg_reduce("lmnn_argmax", true, a, opts, out);
}

lm_status lmnn_argmin(lmnn_tensor a, const lmnn_reduce_options *opts, lmnn_tensor *out) {
    return arg_reduce("lmnn_argmin", false, a, opts, out);
}
