/* Softmax and normalisations: softmax, log_softmax, layer_norm, rms_norm,
 * group_norm and batch_norm, each one program.
 *
 * softmax (softmax_reader.c, softmax_compute.c) and the statistics norms
 * (norm_reader.c, norm_compute.c) work on groups of tiles that normalise
 * together -- a row of tiles, a column of tiles, the tiles at one position
 * along an outer dim, or consecutive whole matrices -- one group per unit of
 * work, streamed through the core once per pass. A channels-last group_norm
 * (norm_cl_reader.c, norm_cl_compute.c) has its groups side by side in the
 * columns of one matrix: it works on spans of tile columns that hold whole
 * groups and moves statistics between columns and groups by matrix
 * products. batch_norm needs no
 * statistics: norm_batch_*.c stream tiles and the per-channel parameters.
 * Every shape-dependent number is a runtime argument, so kernel binaries
 * depend only on the kind of op. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

void lmnn_softmax_options_init(lmnn_softmax_options *opts) {
    if (opts) *opts = (lmnn_softmax_options){0};
}

void lmnn_norm_options_init(lmnn_norm_options *opts) {
    if (!opts) return;
    *opts = (lmnn_norm_options){0};
    opts->eps = 1e-5;
    opts->normalized_dims = 1;
    opts->activation_alpha = NAN;
    opts->activation_beta = NAN;
}

/* A norm's fused activation (opts.activation): the compute kernels' runtime
 * args for it (nn_param[0..2], then the op; zeros for none) and whether the
 * kernel compiles it in (NN_ACT, nn_kernel.h). */
typedef struct norm_act {
    uint32_t args[NN_UNARY_PARAMS + 1];
    bool on;
} norm_act;
#define NORM_ACT_ARGS (NN_UNARY_PARAMS + 1)

static lm_status norm_activation(const char *op, const lmnn_norm_options *o, norm_act *out) {
    *out = (norm_act){0};
    if (o->activation == LMNN_UNARY_INVALID) return LM_OK;
    lmnn_unary_options u;
    lmnn_unary_options_init(&u, o->activation);
    double alpha = isnan(o->activation_alpha) ? u.alpha : o->activation_alpha;
    double beta = isnan(o->activation_beta) ? u.beta : o->activation_beta;
    char chain[512];
    bool nonzero_at_zero; /* the writers zero the padding anyway */
    lm_status st = nn_unary_chain(op, "opts.activation", o->activation, alpha, beta, chain,
                                  sizeof chain, out->args, &nonzero_at_zero);
    if (st) return st;
    out->args[NN_UNARY_PARAMS] = (uint32_t)o->activation;
    out->on = true;
    return LM_OK;
}

/* The compute kernel's define for `act`, if any, in *def; how many (0, 1). */
static uint32_t act_define(const norm_act *act, lm_kernel_define *def) {
    if (!act->on) return 0;
    *def = (lm_kernel_define){"NN_ACT", nn_unary_fused_switch()};
    return 1;
}

/* Groups of at most this many tiles stay in L1 (as float32 tiles: 512 KiB)
 * between passes: fewer reads and less math per tile. Larger ones stream. */
#define RESIDENT_TILES 128
/* ... and their per-tile weight and bias when these take at most this. */
#define RESIDENT_PARAM_BYTES (384u << 10)
/* Tiles norm_compute.c takes through dst at a time (its BLOCK). */
#define NORM_BLOCK 6
/* Resident groups of at most this many tiles are read once: the input stays
 * in CB 0 for the mean and the deviation pass (next to CB 10's copy). */
#define KEPT_INPUT_TILES 64

/* The input checks every op here shares: a live float tile tensor and a float
 * output dtype; *dtype and *memory the output's. */
static lm_status check_input(const char *op, lmnn_tensor a, const lmnn_output *output,
                             nn_tensor **out_t, lmnn_dtype *dtype, lmnn_memory_config *memory) {
    nn_tensor *t = NULL;
    lm_status st = nn_get_tensor(op, "a", a, &t);
    if (!st) st = nn_check_layout(op, "a", t, LMNN_TILE);
    if (!st) st = nn_check_float(op, "a", t);
    if (st) return st;
    *dtype = output->dtype ? output->dtype : t->dtype;
    if (!nn_dtype_is_float(*dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(*dtype));
    *memory = nn_output_memory(&output->memory, t);
    if ((st = nn_check_memory(op, memory))) return st;
    *out_t = t;
    return LM_OK;
}

/* The writer every op here uses: groups of n tiles `inner` apart, the
 * output's padding zeroed, up to `block` tiles (CB 16's pages; the computes
 * here push one tile at a time) under one barrier. */
static lm_status add_writer(const char *op, nn_program *p, const nn_split *split, nn_tensor *o,
                            uint32_t out_arg, uint32_t n, uint32_t inner, uint32_t block) {
    nn_tiles g = nn_tiles_of(&o->shape);
    uint32_t c[] = {o->memory.type == LM_BUFFER_DRAM, out_arg, 1,
                    (uint32_t)nn_tile_format(o->dtype), block};
    uint32_t r[] = {n, inner, g.ht, g.wt, g.h, g.w};
    nn_kernel_spec spec = {"norm_writer.c", LM_PROCESSOR_DM1, c, 5, NULL, 0, false};
    lm_kernel k;
    lm_status st = nn_program_kernel(op, p, &spec, &k);
    return st ? st : nn_kernel_split_args(op, p, k, split, r, 6);
}

/* A float32 or bfloat16 copy of a bfloat8_b tensor (for kernels that write
 * -Inf into its tiles or move single elements); `t` itself otherwise. */
static lm_status widen(const char *op, nn_tensor *t, lmnn_tensor *tmp, nn_tensor **out) {
    *out = t;
    if (t->dtype != LMNN_BFLOAT8_B) return LM_OK;
    lm_status st = nn_unary_map(op, t, LMNN_BFLOAT16, &t->memory, "", false, tmp);
    return st ? st : nn_get_tensor(op, "a", *tmp, out);
}

/* ---- softmax ---- */

static lm_status softmax_op(const char *op, bool log, lmnn_tensor a, int32_t dim,
                            const lmnn_softmax_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_softmax_options defaults;
    if (!opts) {
        lmnn_softmax_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL;
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    lm_status st = check_input(op, a, &opts->output, &t, &dtype, &memory);
    if (st) return st;
    int32_t rank = (int32_t)t->shape.rank, span = rank ? rank : 1;
    if (dim < -span || dim >= span)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dim: dim %d is out of range for a tensor of rank %d (expected %d..%d)", dim,
                       rank, -span, span - 1);
    uint32_t d = (uint32_t)(dim < 0 ? dim + span : dim);
    nn_tiles g = nn_tiles_of(&t->shape);
    /* mode 1: the last dim (rank 0 too); 2: dim -2; 0: an outer dim. */
    uint32_t mode, n, inner;
    if ((int32_t)d >= rank - 1) {
        mode = 1, n = g.wt, inner = 1;
    } else if ((int32_t)d == rank - 2) {
        mode = 2, n = g.ht, inner = g.wt;
    } else {
        mode = 0, n = t->shape.dims[d], inner = g.ht * g.wt;
        for (int32_t i = (int32_t)d + 1; i < rank - 2; i++)
            inner *= t->shape.dims[i];
    }
    bool fill_rows = mode == 2 && g.h % 32, fill_cols = mode == 1 && g.w % 32;
    uint32_t resident = n <= RESIDENT_TILES;
    lmnn_tensor wide = {0}, oh;
    nn_tensor *src = t, *o;
    if (fill_rows || fill_cols) {
        if ((st = widen(op, t, &wide, &src))) return st;
    }
    st = nn_tensor_new(op, t->device, &t->shape, dtype, LMNN_TILE, &memory, &oh, &o);
    if (st) {
        nn_tensor_discard(wide);
        return st;
    }
    nn_key key;
    nn_key_init(&key, "softmax");
    nn_key_u32(&key, log);
    nn_key_u32(&key, d);
    nn_key_tensor(&key, src);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(t->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(src->dtype), fout = nn_tile_format(dtype);
        uint32_t rc[] = {src->memory.type == LM_BUFFER_DRAM, (uint32_t)fin, fill_rows, fill_cols,
                         resident};
        uint32_t cc[] = {mode, log, resident};
        uint32_t args[] = {n, inner, g.ht, g.wt, g.h, g.w};
        nn_kernel_spec reader = {"softmax_reader.c", LM_PROCESSOR_DM0, rc, 5, NULL, 0, false};
        nn_kernel_spec compute = {"softmax_compute.c", LM_PROCESSOR_COMPUTE, cc, 3, NULL, 0, true};
        lm_kernel kr, kc;
        st = nn_split_work(op, t->device, src->pages / n, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, t->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, (uint32_t)lm_tile_size(fin), 2);
        for (uint32_t cb = 1; cb <= 5 && !st; cb++)
            st = nn_program_cb(op, &p, cb, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st && resident) st = nn_program_cb(op, &p, 6, LM_DATA_FORMAT_FLOAT32, 4096, n);
        if (!st)
            st = nn_program_cb(op, &p, 16, fout, (uint32_t)lm_tile_size(fout), resident ? 8 : 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &p, &compute, &kc);
        if (!st) st = nn_kernel_split_args(op, &p, kr, &split, args, 6);
        if (!st) st = nn_kernel_split_args(op, &p, kc, &split, args, 6);
        if (!st) st = add_writer(op, &p, &split, o, 1, n, inner, resident ? NORM_BLOCK : 2);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, t->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {src, o};
    if (!st) st = nn_launch(op, prog, tensors, 2);
    nn_tensor_discard(wide);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

lm_status lmnn_softmax(lmnn_tensor a, int32_t dim, const lmnn_softmax_options *opts,
                       lmnn_tensor *out) {
    return softmax_op("lmnn_softmax", false, a, dim, opts, out);
}

lm_status lmnn_log_softmax(lmnn_tensor a, int32_t dim, const lmnn_softmax_options *opts,
                           lmnn_tensor *out) {
    return softmax_op("lmnn_log_softmax", true, a, dim, opts, out);
}

/* ---- parameters ---- */

/* The shape without its leading dims of size 1. */
static lmnn_shape strip_ones(const lmnn_shape *s) {
    uint32_t i = 0;
    while (i < s->rank && s->dims[i] == 1)
        i++;
    return lmnn_shape_of(s->rank - i, s->dims + i);
}

/* An optional parameter tensor: zero handle -> NULL; else live, tile, float
 * (bfloat16 or float32 when `elements` -- its elements are read one by one),
 * on a's device, of shape `want` up to leading ones. */
static lm_status check_param(const char *op, const char *arg, lmnn_tensor h, const nn_tensor *a,
                             const lmnn_shape *want, const char *what, bool elements,
                             nn_tensor **out) {
    char s1[128], s2[128];
    *out = NULL;
    if (!h.id) return LM_OK;
    nn_tensor *p = NULL;
    lm_status st = nn_get_tensor(op, arg, h, &p);
    if (!st) st = nn_check_same_device(op, arg, p, a);
    if (!st) st = nn_check_layout(op, arg, p, LMNN_TILE);
    if (!st) st = nn_check_float(op, arg, p);
    if (st) return st;
    if (elements && p->dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: expected bfloat16 or float32 (per-channel values), given bfloat8_b",
                       arg);
    lmnn_shape ps = strip_ones(&p->shape), ws = strip_ones(want);
    if (!nn_shape_equal(&ps, &ws))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected shape %s (%s), given %s", arg,
                       nn_shape_str(want, s1, sizeof s1), what,
                       nn_shape_str(&p->shape, s2, sizeof s2));
    *out = p;
    return LM_OK;
}

/* ---- layer_norm, rms_norm, group_norm ---- */

typedef struct norm_plan {
    uint32_t mode; /* 1 rows, 3 whole groups */
    bool rms, masks, red_h;
    uint32_t n, groups;    /* tiles per group, groups */
    double count;          /* elements per group */
    uint32_t wmode, bmode; /* 0 none, 1 tile, 2 per channel */
    uint32_t g_per_sample, channels, tiles_per_channel;
} norm_plan;

static lm_status run_norm(const char *op, nn_tensor *x, nn_tensor *w, nn_tensor *b,
                          const norm_plan *P, double eps, const norm_act *act, lmnn_dtype dtype,
                          const lmnn_memory_config *memory, lmnn_tensor *out) {
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st = nn_tensor_new(op, x->device, &x->shape, dtype, LMNN_TILE, memory, &oh, &o);
    if (st) return st;
    nn_tiles g = nn_tiles_of(&x->shape);
    uint32_t resident = P->n <= RESIDENT_TILES;
    /* Per-tile weight and bias stay in L1 too when they fit next to it. */
    uint64_t wb_bytes = (w && P->wmode == 1 ? lm_tile_size(nn_tile_format(w->dtype)) : 0) +
                        (b && P->bmode == 1 ? lm_tile_size(nn_tile_format(b->dtype)) : 0);
    uint32_t params_resident = resident && P->n * wb_bytes <= RESIDENT_PARAM_BYTES;
    uint32_t x_kept = resident && P->n <= KEPT_INPUT_TILES;
    /* Per-tile parameters of mode 1 in an element format: only row 0 read. */
    uint32_t prow = (P->mode == 1 && P->wmode == 1 && w && w->dtype != LMNN_BFLOAT8_B) |
                    (P->mode == 1 && P->bmode == 1 && b && b->dtype != LMNN_BFLOAT8_B) << 1;
    uint32_t args[] = {P->n,
                       g.ht,
                       g.wt,
                       g.h,
                       g.w,
                       nn_float_bits(1.0 / P->count),
                       P->g_per_sample,
                       P->channels,
                       P->tiles_per_channel,
                       nn_float_bits(eps),
                       act->args[0],
                       act->args[1],
                       act->args[2],
                       act->args[3]};
    nn_key key;
    nn_key_init(&key, "norm");
    uint32_t kv[] = {P->mode, P->rms, P->masks, P->red_h, P->wmode, P->bmode};
    nn_key_add(&key, kv, sizeof kv);
    nn_key_add(&key, args, sizeof args);
    nn_key_u32(&key, params_resident);
    nn_key_tensor(&key, x);
    if (w) nn_key_tensor(&key, w);
    if (b) nn_key_tensor(&key, b);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(x->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(x->dtype), fout = nn_tile_format(dtype);
        lm_data_format fw = w ? nn_tile_format(w->dtype) : LM_DATA_FORMAT_FLOAT32;
        lm_data_format fb = b ? nn_tile_format(b->dtype) : LM_DATA_FORMAT_FLOAT32;
        uint32_t rc[] = {x->memory.type == LM_BUFFER_DRAM,
                         !P->rms,
                         P->masks,
                         P->red_h,
                         P->wmode,
                         w && w->memory.type == LM_BUFFER_DRAM,
                         w ? nn_rm_elem_size(w->dtype) : 0,
                         P->bmode,
                         b && b->memory.type == LM_BUFFER_DRAM,
                         b ? nn_rm_elem_size(b->dtype) : 0,
                         resident,
                         params_resident,
                         x_kept,
                         prow};
        uint32_t cc[] = {P->mode,  P->rms,   P->masks,        P->red_h, P->wmode,
                         P->bmode, resident, params_resident, x_kept};
        lm_kernel_define def;
        nn_kernel_spec reader = {"norm_reader.c", LM_PROCESSOR_DM0, rc, 14, NULL, 0, false};
        nn_kernel_spec compute = {
            "norm_compute.c", LM_PROCESSOR_COMPUTE, cc, 9, &def, act_define(act, &def), true};
        lm_kernel kr, kc;
        st = nn_split_work(op, x->device, P->groups, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, x->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, (uint32_t)lm_tile_size(fin), x_kept ? P->n : 2);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st && P->masks) st = nn_program_cb(op, &p, 3, LM_DATA_FORMAT_FLOAT32, 4096, 3);
        if (!st) st = nn_program_cb(op, &p, 4, LM_DATA_FORMAT_FLOAT32, 4096, 2);
        uint32_t wpages = params_resident && P->wmode == 1 ? P->n : 2;
        uint32_t bpages = params_resident && P->bmode == 1 ? P->n : 2;
        if (!st && w) st = nn_program_cb(op, &p, 5, fw, (uint32_t)lm_tile_size(fw), wpages);
        if (!st && b) st = nn_program_cb(op, &p, 6, fb, (uint32_t)lm_tile_size(fb), bpages);
        for (uint32_t cb = 7; cb <= 9 && !st; cb++)
            st = nn_program_cb(op, &p, cb, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st && resident) st = nn_program_cb(op, &p, 10, LM_DATA_FORMAT_FLOAT32, 4096, P->n);
        if (!st && resident && (w || b))
            st = nn_program_cb(op, &p, 11, LM_DATA_FORMAT_FLOAT32, 4096, NORM_BLOCK);
        if (!st)
            st = nn_program_cb(op, &p, 16, fout, (uint32_t)lm_tile_size(fout),
                               resident ? NORM_BLOCK : 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &p, &compute, &kc);
        if (!st) st = nn_kernel_split_args(op, &p, kr, &split, args, 10);
        if (!st) st = nn_kernel_split_args(op, &p, kc, &split, args, 10 + NORM_ACT_ARGS);
        if (!st) st = add_writer(op, &p, &split, o, 3, P->n, 1, resident ? NORM_BLOCK : 2);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, x->device, &key, &p, &prog);
    }
    /* Absent parameters pass address 0 (never read). */
    nn_tensor none = {0};
    nn_tensor *tensors[] = {x, w ? w : &none, b ? b : &none, o};
    if (!st) st = nn_launch(op, prog, tensors, 4);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

static lm_status layer_or_rms(const char *op, bool rms, lmnn_tensor a, lmnn_tensor weight,
                              lmnn_tensor bias, const lmnn_norm_options *opts, lmnn_tensor *out) {
    char s1[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_norm_options defaults;
    if (!opts) {
        lmnn_norm_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL, *w = NULL, *b = NULL;
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    lm_status st = check_input(op, a, &opts->output, &t, &dtype, &memory);
    if (st) return st;
    uint32_t rank = t->shape.rank, nd = opts->normalized_dims;
    if (nd < 1 || nd > rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "opts.normalized_dims: expected 1..%u (a has rank %u), given %u", rank, rank,
                       nd);
    if (!(opts->eps >= 0) || isinf(opts->eps))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "opts.eps: expected a finite value >= 0, given %g", opts->eps);
    lmnn_shape norm = lmnn_shape_of(nd, t->shape.dims + rank - nd);
    char what[192];
    snprintf(what, sizeof what, "the last %u dims of a's shape %s", nd,
             nn_shape_str(&t->shape, s1, sizeof s1));
    if ((st = check_param(op, "weight", weight, t, &norm, what, false, &w))) return st;
    if ((st = check_param(op, "bias", bias, t, &norm, what, false, &b))) return st;
    nn_tiles g = nn_tiles_of(&t->shape);
    norm_plan P = {0};
    P.rms = rms;
    P.mode = nd == 1 ? 1 : 3;
    P.red_h = nd >= 2;
    P.n = nd == 1
              ? g.wt
              : (uint32_t)(t->pages / (lmnn_shape_volume(&t->shape) / lmnn_shape_volume(&norm)));
    P.groups = (uint32_t)(t->pages / P.n);
    P.count = (double)lmnn_shape_volume(&norm);
    P.masks = !rms && (g.w % 32 || (P.red_h && g.h % 32));
    P.wmode = w ? 1 : 0;
    P.bmode = b ? 1 : 0;
    P.g_per_sample = P.channels = P.tiles_per_channel = 1;
    norm_act act;
    if ((st = norm_activation(op, opts, &act))) return st;
    return run_norm(op, t, w, b, &P, opts->eps, &act, dtype, &memory, out);
}

lm_status lmnn_layer_norm(lmnn_tensor a, lmnn_tensor weight, lmnn_tensor bias,
                          const lmnn_norm_options *opts, lmnn_tensor *out) {
    return layer_or_rms("lmnn_layer_norm", false, a, weight, bias, opts, out);
}

lm_status lmnn_rms_norm(lmnn_tensor a, lmnn_tensor weight, const lmnn_norm_options *opts,
                        lmnn_tensor *out) {
    return layer_or_rms("lmnn_rms_norm", true, a, weight, (lmnn_tensor){0}, opts, out);
}

/* The checks group_norm and batch_norm share: a is [N, C, *] (or, channels
 * last, [*, L, C]); eps. */
static lm_status check_nc(const char *op, const nn_tensor *t, const lmnn_norm_options *opts) {
    char s1[128];
    if (t->shape.rank < 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "a: expected shape %s (rank 2 or more), given %s",
                       opts->channels_last ? "[*, L, C]" : "[N, C, *]",
                       nn_shape_str(&t->shape, s1, sizeof s1));
    if (!(opts->eps >= 0) || isinf(opts->eps))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "opts.eps: expected a finite value >= 0, given %g", opts->eps);
    return LM_OK;
}

/* Tiles norm_cl_compute.c takes through dst at a time (its BLOCK). */
#define CL_BLOCK 6
/* Group maps channels-last spans keep in L1 at most (float32 tiles: 256
 * KiB): groups of C / num_groups channels whose pattern across tile columns
 * repeats only after more tiles than this go through channels first. */
#define CL_MAX_MAPS 64u

/* Channels-last group norm on t's matrices (norm_cl_*.c): each one sample,
 * its rows positions and its columns the channels. Units of work are spans
 * of s tile columns holding whole groups; the writer takes the same work as
 * columns of tiles. */
static lm_status group_norm_cl(const char *op, nn_tensor *t, uint32_t cg, nn_tensor *w,
                               nn_tensor *b, double eps, const norm_act *act, lmnn_dtype dtype,
                               const lmnn_memory_config *memory, lmnn_tensor *out) {
    nn_tiles g = nn_tiles_of(&t->shape);
    uint32_t s = cg / (uint32_t)nn_gcd(cg, 32);
    if (s > g.wt) s = g.wt;
    uint32_t maps = cg % 32 ? s : 1, nq = (g.wt + s - 1) / s;
    uint64_t samples = t->pages / ((uint64_t)g.ht * g.wt);
    bool masks = g.h % 32 != 0;
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st = nn_tensor_new(op, t->device, &t->shape, dtype, LMNN_TILE, memory, &oh, &o);
    if (st) return st;
    uint32_t args[] = {g.ht,
                       g.wt,
                       g.h,
                       s,
                       cg,
                       nn_float_bits(1.0 / ((double)cg * g.h)),
                       nn_float_bits(eps),
                       nq,
                       act->args[0],
                       act->args[1],
                       act->args[2],
                       act->args[3]};
    nn_key key;
    nn_key_init(&key, "norm_cl");
    nn_key_add(&key, args, sizeof args);
    nn_key_u32(&key, (w != NULL) | (b != NULL) << 1);
    nn_key_tensor(&key, t);
    if (w) nn_key_tensor(&key, w);
    if (b) nn_key_tensor(&key, b);
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(t->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format fin = nn_tile_format(t->dtype), fout = nn_tile_format(dtype);
        uint32_t rc[] = {
            t->memory.type == LM_BUFFER_DRAM,  w != NULL, w && w->memory.type == LM_BUFFER_DRAM,
            w ? nn_rm_elem_size(w->dtype) : 0, b != NULL, b && b->memory.type == LM_BUFFER_DRAM,
            b ? nn_rm_elem_size(b->dtype) : 0, masks};
        uint32_t cc[] = {w != NULL, b != NULL, masks};
        lm_kernel_define def;
        nn_kernel_spec reader = {"norm_cl_reader.c", LM_PROCESSOR_DM0, rc, 8, NULL, 0, false};
        nn_kernel_spec compute = {
            "norm_cl_compute.c", LM_PROCESSOR_COMPUTE, cc, 3, &def, act_define(act, &def), true};
        lm_kernel kr, kc;
        st = nn_split_work(op, t->device, samples * nq, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, t->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, fin, (uint32_t)lm_tile_size(fin), 2 * CL_BLOCK);
        /* 1 scaler, 2 ones, 4 and 10 column sums, 8 GM, 9 a column's
         * mean, 11 GSQ and GD, 12 group statistics, 13 a column's, 14 its
         * scale and shift: float32 tiles. */
        static const uint8_t cbs[][2] = {{1, 1},  {2, 1},  {4, 2},  {8, 1},  {9, 1},
                                         {10, 2}, {11, 2}, {12, 2}, {13, 2}, {14, 2}};
        for (size_t i = 0; i < sizeof cbs / sizeof cbs[0] && !st; i++)
            st = nn_program_cb(op, &p, cbs[i][0], LM_DATA_FORMAT_FLOAT32, 4096, cbs[i][1]);
        if (!st && masks) st = nn_program_cb(op, &p, 3, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &p, 7, LM_DATA_FORMAT_FLOAT32, 4096, maps);
        lm_data_format fw = w ? nn_tile_format(w->dtype) : LM_DATA_FORMAT_FLOAT32;
        lm_data_format fb = b ? nn_tile_format(b->dtype) : LM_DATA_FORMAT_FLOAT32;
        if (!st && w) st = nn_program_cb(op, &p, 5, fw, (uint32_t)lm_tile_size(fw), 2);
        if (!st && b) st = nn_program_cb(op, &p, 6, fb, (uint32_t)lm_tile_size(fb), 2);
        if (!st) st = nn_program_cb(op, &p, 16, fout, (uint32_t)lm_tile_size(fout), 2 * CL_BLOCK);
        if (!st) st = nn_program_kernel(op, &p, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &p, &compute, &kc);
        if (!st) st = nn_kernel_split_args(op, &p, kr, &split, args, 8);
        if (!st) st = nn_kernel_split_args(op, &p, kc, &split, args, 8 + NORM_ACT_ARGS);
        /* The writer's units are the spans' columns: span u starts at
         * column (u / nq) * Wt + (u % nq) * s of the [samples * Wt] columns. */
        for (uint32_t i = 0; i < split.num_cores; i++) {
            uint64_t u0 = split.first[i], u1 = u0 + split.count[i];
            uint64_t c0 = u0 / nq * g.wt + (u0 % nq) * s, c1 = u1 / nq * g.wt + (u1 % nq) * s;
            split.first[i] = (uint32_t)c0;
            split.count[i] = (uint32_t)(c1 - c0);
        }
        if (!st) st = add_writer(op, &p, &split, o, 3, g.ht, g.wt, CL_BLOCK);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, t->device, &key, &p, &prog);
    }
    nn_tensor none = {0};
    nn_tensor *tensors[] = {t, w ? w : &none, b ? b : &none, o};
    if (!st) st = nn_launch(op, prog, tensors, 4);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* Channels-last group norm whose group maps would not fit: a's last two
 * dims swapped, the channels-first norm over [samples, C, L], swapped back. */
static lm_status group_norm_cl_swapped(lmnn_tensor a, nn_tensor *t, uint32_t num_groups,
                                       lmnn_tensor weight, lmnn_tensor bias,
                                       const lmnn_norm_options *opts, lmnn_tensor *out) {
    uint32_t rank = t->shape.rank, L = t->shape.dims[rank - 2], C = t->shape.dims[rank - 1];
    int32_t swap[LMNN_MAX_DIMS];
    for (uint32_t i = 0; i < rank; i++)
        swap[i] = (int32_t)i;
    swap[rank - 2] = (int32_t)rank - 1;
    swap[rank - 1] = (int32_t)rank - 2;
    lmnn_shape flat =
        LMNN_SHAPE((uint32_t)(lmnn_shape_volume(&t->shape) / ((uint64_t)L * C)), C, L);
    lmnn_shape back = t->shape;
    back.dims[rank - 2] = C;
    back.dims[rank - 1] = L;
    lmnn_norm_options o = *opts;
    o.channels_last = false;
    lmnn_tensor cf = {0}, cf3 = {0}, y3 = {0}, y = {0};
    lm_status st = lmnn_permute(a, swap, rank, NULL, &cf);
    if (!st) st = lmnn_reshape(cf, &flat, NULL, &cf3);
    if (!st) st = lmnn_group_norm(cf3, num_groups, weight, bias, &o, &y3);
    if (!st) st = lmnn_reshape(y3, &back, NULL, &y);
    if (!st) st = lmnn_permute(y, swap, rank, &opts->output, out);
    lmnn_tensor tmp[] = {cf, cf3, y3, y};
    for (size_t i = 0; i < 4; i++)
        if (tmp[i].id) lmnn_tensor_free(tmp[i]);
    return st;
}

lm_status lmnn_group_norm(lmnn_tensor a, uint32_t num_groups, lmnn_tensor weight, lmnn_tensor bias,
                          const lmnn_norm_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_group_norm";
    char s1[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_norm_options defaults;
    if (!opts) {
        lmnn_norm_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL, *w = NULL, *b = NULL;
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    lm_status st = check_input(op, a, &opts->output, &t, &dtype, &memory);
    if (!st) st = check_nc(op, t, opts);
    if (st) return st;
    uint32_t C = t->shape.dims[opts->channels_last ? t->shape.rank - 1 : 1];
    if (num_groups == 0 || C % num_groups)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "num_groups: expected a divisor of the %u channels of a %s, given %u", C,
                       nn_shape_str(&t->shape, s1, sizeof s1), num_groups);
    lmnn_shape cs = LMNN_SHAPE(C);
    const char *what = "one value per channel";
    if ((st = check_param(op, "weight", weight, t, &cs, what, true, &w))) return st;
    if ((st = check_param(op, "bias", bias, t, &cs, what, true, &b))) return st;
    norm_act act;
    if ((st = norm_activation(op, opts, &act))) return st;
    if (opts->channels_last) {
        uint32_t cg = C / num_groups;
        if (cg % 32 && cg / (uint32_t)nn_gcd(cg, 32) > CL_MAX_MAPS)
            return group_norm_cl_swapped(a, t, num_groups, weight, bias, opts, out);
        return group_norm_cl(op, t, cg, w, b, opts->eps, &act, dtype, &memory, out);
    }

    /* Channels must be whole matrices: [N, C] and [N, C, L] go through
     * [N, C, 1, 1] and [N, C, 1, L]. */
    lmnn_tensor xh = {0}, yh = {0}, wide = {0};
    nn_tensor *x = t, *y;
    lmnn_dtype ydtype = dtype;
    lmnn_memory_config ymem = memory;
    bool reshape = t->shape.rank < 4;
    if (reshape) {
        lmnn_shape s4 =
            LMNN_SHAPE(t->shape.dims[0], C, 1, t->shape.rank == 3 ? t->shape.dims[2] : 1);
        lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
        nn_tensor *src = NULL;
        st = widen(op, t, &wide, &src);
        if (!st) st = nn_tensor_new(op, t->device, &s4, src->dtype, LMNN_TILE, &dram, &xh, &x);
        if (!st) st = nn_reshape_tiles(op, src, x);
        ydtype = dtype == LMNN_BFLOAT8_B ? LMNN_BFLOAT16 : dtype;
        ymem = dram;
        nn_tensor_discard(wide);
        if (st) {
            nn_tensor_discard(xh);
            return st;
        }
    }
    nn_tiles g = nn_tiles_of(&x->shape);
    uint32_t spatial = 1;
    for (uint32_t i = 2; i + 2 < x->shape.rank; i++)
        spatial *= x->shape.dims[i];
    norm_plan P = {0};
    P.mode = 3;
    P.red_h = true;
    P.tiles_per_channel = spatial * g.ht * g.wt;
    P.channels = C / num_groups;
    P.g_per_sample = num_groups;
    P.n = P.channels * P.tiles_per_channel;
    P.groups = (uint32_t)(x->pages / P.n);
    P.count = (double)P.channels * spatial * g.h * g.w;
    P.masks = g.w % 32 || g.h % 32;
    P.wmode = w ? 2 : 0;
    P.bmode = b ? 2 : 0;
    st = run_norm(op, x, w, b, &P, opts->eps, &act, ydtype, &ymem, &yh);
    if (!reshape) {
        if (!st) *out = yh;
        return st;
    }
    lmnn_tensor rh = {0}, fh = {0};
    nn_tensor *r = NULL;
    if (!st) st = nn_get_tensor(op, "out", yh, &y);
    if (!st)
        st = nn_tensor_new(op, t->device, &t->shape, ydtype, LMNN_TILE,
                           ydtype == dtype ? &memory : &ymem, &rh, &r);
    if (!st) st = nn_reshape_tiles(op, y, r);
    if (!st && ydtype != dtype) st = nn_unary_map(op, r, dtype, &memory, "", false, &fh);
    nn_tensor_discard(xh);
    nn_tensor_discard(yh);
    if (st) {
        nn_tensor_discard(rh);
        nn_tensor_discard(fh);
        return st;
    }
    if (fh.id) nn_tensor_discard(rh);
    *out = fh.id ? fh : rh;
    return LM_OK;
}

/* ---- batch_norm ---- */

lm_status lmnn_batch_norm(lmnn_tensor a, lmnn_tensor running_mean, lmnn_tensor running_var,
                          lmnn_tensor weight, lmnn_tensor bias, const lmnn_norm_options *opts,
                          lmnn_tensor *out) {
    const char *op = "lmnn_batch_norm";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_norm_options defaults;
    if (!opts) {
        lmnn_norm_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL, *p[4] = {0};
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    lm_status st = check_input(op, a, &opts->output, &t, &dtype, &memory);
    if (!st) st = check_nc(op, t, opts);
    if (st) return st;
    if (!running_mean.id || !running_var.id)
        return nn_fail(LM_ERR_INVALID_HANDLE, op,
                       "%s: tensor handle is zero (inference needs the running statistics)",
                       !running_mean.id ? "running_mean" : "running_var");
    uint32_t C = t->shape.dims[1];
    lmnn_shape cs = LMNN_SHAPE(C);
    const char *what = "one value per channel";
    const char *names[4] = {"running_mean", "running_var", "weight", "bias"};
    lmnn_tensor hs[4] = {running_mean, running_var, weight, bias};
    for (int i = 0; i < 4; i++)
        if ((st = check_param(op, names[i], hs[i], t, &cs, what, true, &p[i]))) return st;
    norm_act act;
    if ((st = norm_activation(op, opts, &act))) return st;

    nn_tiles g = nn_tiles_of(&t->shape);
    uint32_t rank = t->shape.rank, mode = rank == 2 ? 1 : rank == 3 ? 2 : 3;
    uint32_t spatial = 1;
    for (uint32_t i = 2; i + 2 < rank; i++)
        spatial *= t->shape.dims[i];
    uint32_t tpc = spatial * g.ht * g.wt;
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    st = nn_tensor_new(op, t->device, &t->shape, dtype, LMNN_TILE, &memory, &oh, &o);
    if (st) return st;
    uint32_t args[] = {g.ht,        g.wt,        tpc,         C,          nn_float_bits(opts->eps),
                       act.args[0], act.args[1], act.args[2], act.args[3]};
    nn_key key;
    nn_key_init(&key, "batch_norm");
    nn_key_add(&key, args, sizeof args);
    nn_key_tensor(&key, t);
    for (int i = 0; i < 4; i++) {
        nn_key_u32(&key, p[i] != NULL);
        if (p[i]) nn_key_tensor(&key, p[i]);
    }
    nn_key_tensor(&key, o);
    nn_program *prog = nn_cache_find(t->device, &key);
    if (!prog) {
        nn_split split;
        nn_program pr = {0};
        lm_data_format fin = nn_tile_format(t->dtype), fout = nn_tile_format(dtype);
        uint32_t rc[12] = {t->memory.type == LM_BUFFER_DRAM, mode, p[2] != NULL, p[3] != NULL};
        for (int i = 0; i < 4; i++) {
            rc[4 + 2 * i] = p[i] && p[i]->memory.type == LM_BUFFER_DRAM;
            rc[5 + 2 * i] = p[i] ? nn_rm_elem_size(p[i]->dtype) : 0;
        }
        uint32_t cc[] = {mode, p[2] != NULL, p[3] != NULL};
        nn_kernel_spec reader = {"norm_batch_reader.c", LM_PROCESSOR_DM0, rc, 12, NULL, 0, false};
        lm_kernel_define def;
        nn_kernel_spec compute = {"norm_batch_compute.c",
                                  LM_PROCESSOR_COMPUTE,
                                  cc,
                                  3,
                                  &def,
                                  act_define(&act, &def),
                                  true};
        lm_kernel kr, kc;
        st = nn_split_work(op, t->device, t->pages, &split);
        pr.cores = split.all;
        if (!st) st = nn_program_begin(op, t->device, &pr);
        if (!st) st = nn_program_cb(op, &pr, 0, fin, (uint32_t)lm_tile_size(fin), 2);
        if (!st) st = nn_program_cb(op, &pr, 2, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        for (int i = 0; i < 4 && !st; i++)
            if (p[i]) {
                lm_data_format f = nn_tile_format(p[i]->dtype);
                st = nn_program_cb(op, &pr, 3 + (uint32_t)i, f, (uint32_t)lm_tile_size(f), 1);
            }
        for (uint32_t cb = 7; cb <= 9 && !st; cb++)
            st = nn_program_cb(op, &pr, cb, LM_DATA_FORMAT_FLOAT32, 4096, 1);
        if (!st) st = nn_program_cb(op, &pr, 16, fout, (uint32_t)lm_tile_size(fout), 2);
        if (!st) st = nn_program_kernel(op, &pr, &reader, &kr);
        if (!st) st = nn_program_kernel(op, &pr, &compute, &kc);
        if (!st) st = nn_kernel_split_args(op, &pr, kr, &split, args, 4);
        if (!st) st = nn_kernel_split_args(op, &pr, kc, &split, args, 5 + NORM_ACT_ARGS);
        if (!st) st = add_writer(op, &pr, &split, o, 5, 1, 1, 2);
        if (st) nn_program_discard(&pr);
        if (!st) st = nn_cache_add(op, t->device, &key, &pr, &prog);
    }
    nn_tensor none = {0};
    nn_tensor *tensors[] = {t, p[0], p[1], p[2] ? p[2] : &none, p[3] ? p[3] : &none, o};
    if (!st) st = nn_launch(op, prog, tensors, 6);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}
