/* Data movement ops: argument checks, output shapes and the map of each op
 * (dm_spec, see nn_data.h), on row-major tensors and, where whole tiles
 * serve, on tile tensors; other tile cases run on row-major stand-ins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_data.h"

/* ---- shared checks ---- */

static lm_status get_input(const char *op, const char *arg, lmnn_tensor h, lmnn_tensor *out,
                           nn_tensor **t) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    return nn_get_tensor(op, arg, h, t);
}

/* Tile tensors of rank >= 2 have tile views (nn_data.h). */
static bool tile_view_ok(const nn_tensor *t) {
    return t->layout == LMNN_TILE && t->shape.rank >= 2;
}

/* A spec mapping every output view dim to the same input view dim. */
static void identity_maps(dm_spec *spec) {
    for (uint32_t d = 0; d < spec->out_rank; d++)
        spec->map[d] = dm_identity((int32_t)d);
}

/* The output of an op on `t`: `shape`, t's dtype and layout, `memory`. */
static dm_out out_like(const nn_tensor *t, const lmnn_shape *shape,
                       const lmnn_memory_config *memory) {
    return (dm_out){*shape, t->dtype, t->layout, *memory};
}

/* Makes the output and runs `spec` (views from in and the output) on it. */
typedef void (*spec_fn)(dm_spec *spec, const void *ctx);
static lm_status run_tiles(const char *op, nn_tensor *t, const dm_out *od, spec_fn fill,
                           const void *ctx, lmnn_tensor *out) {
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st = dm_make(op, t->device, od, &oh, &o);
    if (st) return st;
    dm_spec spec;
    dm_spec_init(&spec, t, o, true);
    fill(&spec, ctx);
    st = dm_run(op, &spec, t, o, NULL, NULL);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* A program over the output's tiles, split over the cores: `reader` (DM0)
 * fills circular buffer 0 for `compute` when there is one (0 to 16), else 16
 * straight away; tile_writer.c stores the tiles. The reader's runtime args
 * are {first, count}, its own `rargs`, then the input's accessor words
 * (common arg 0 the input, 1 the output). The program is cached under `key`
 * (the tensors added here). */
typedef struct tile_program {
    const char *reader, *compute;
    const uint32_t *rargs;
    uint32_t nr;
} tile_program;

static lm_status run_tile_program(const char *op, nn_tensor *t, const dm_out *od, nn_key *key,
                                  const tile_program *tp, lmnn_tensor *out) {
    if (tp->nr > 3 + 2 * LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INTERNAL, op, "%u reader args", tp->nr);
    lmnn_tensor oh;
    nn_tensor *o = NULL;
    lm_status st = dm_make(op, t->device, od, &oh, &o);
    if (st) return st;
    nn_key_tensor(key, t);
    nn_key_tensor(key, o);
    nn_program *prog = nn_cache_find(t->device, key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        lm_data_format f = nn_tile_format(t->dtype);
        uint32_t rargs[3 + 2 * LMNN_MAX_DIMS + NN_ACCESSOR_WORDS], wargs[NN_TILE_WRITER_ARGS];
        uint32_t nr = 0, nw = 0;
        memcpy(rargs, tp->rargs, tp->nr * sizeof *rargs);
        st = nn_accessor_words(op, t, rargs + tp->nr, &nr);
        if (!st) st = nn_tile_writer_args(op, o, 1, false, wargs, &nw);
        nn_kernel_spec reader = {tp->reader, LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {tp->compute, LM_PROCESSOR_COMPUTE,    NULL, 0, NULL,
                                  0,           t->dtype == LMNN_FLOAT32};
        nn_kernel_spec writer = {"tile_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
        lm_kernel rk, ck, wk;
        if (!st) st = nn_split_work(op, t->device, o->pages, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, t->device, &p);
        if (!st && tp->compute) st = nn_program_cb(op, &p, 0, f, (uint32_t)lm_tile_size(f), 2);
        if (!st) st = nn_program_cb(op, &p, 16, f, (uint32_t)lm_tile_size(f), 2);
        if (!st) st = nn_program_kernel(op, &p, &reader, &rk);
        if (!st && tp->compute) st = nn_program_kernel(op, &p, &compute, &ck);
        if (!st) st = nn_program_kernel(op, &p, &writer, &wk);
        if (!st) st = nn_kernel_split_args(op, &p, rk, &split, rargs, tp->nr + nr);
        if (!st && tp->compute) st = nn_kernel_split_args(op, &p, ck, &split, NULL, 0);
        if (!st) st = nn_kernel_split_args(op, &p, wk, &split, wargs, nw);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, t->device, key, &p, &prog);
    }
    nn_tensor *tensors[] = {t, o};
    if (!st) st = nn_launch(op, prog, tensors, 2);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* ---- reshape ---- */

static lm_status reshape_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                            nn_tensor *out) {
    (void)ctx, (void)n;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    identity_maps(&spec);
    spec.flags = DM_FLAT;
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* Tiles in the same order: a page copy. */
static void page_copy(dm_spec *spec, const void *ctx) {
    uint32_t pages = *(const uint32_t *)ctx;
    memset(spec, 0, sizeof *spec);
    spec->tiles = true;
    spec->in_rank = spec->out_rank = 2;
    spec->in_dims[0] = spec->out_dims[0] = pages;
    spec->in_dims[1] = spec->out_dims[1] = 1;
    identity_maps(spec);
}

/* `shape` (one dim may be LMNN_DIM_AUTO) as the shape of t's elements. */
static lm_status reshape_shape(const char *op, const nn_tensor *t, const lmnn_shape *shape,
                               lmnn_shape *out) {
    char s1[128], s2[128];
    if (!shape) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape is NULL");
    if (shape->rank > LMNN_MAX_DIMS)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: rank %u is more than %u", shape->rank,
                       LMNN_MAX_DIMS);
    lmnn_shape s = *shape;
    uint64_t volume = lmnn_shape_volume(&t->shape), known = 1;
    int32_t autod = -1;
    for (uint32_t i = 0; i < s.rank; i++) {
        if (s.dims[i] == LMNN_DIM_AUTO) {
            if (autod >= 0)
                return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                               "shape: dims %d and %u are both LMNN_DIM_AUTO (one at most)", autod,
                               i);
            autod = (int32_t)i;
            continue;
        }
        if (s.dims[i] == 0) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: dim %u is 0", i);
        known *= s.dims[i];
        if (known > volume) break;
    }
    if (autod >= 0 && known <= volume && volume % known == 0)
        s.dims[autod] = (uint32_t)(volume / known);
    if (autod >= 0 ? known > volume || volume % known : known != volume) {
        if (autod >= 0) s.dims[autod] = 0;
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: %s cannot hold the %llu elements of a's shape %s",
                       nn_shape_str(&s, s1, sizeof s1), (unsigned long long)volume,
                       nn_shape_str(&t->shape, s2, sizeof s2));
    }
    *out = s;
    return LM_OK;
}

/* A tile tensor reshaped to `s` keeps its pages in order: the same last dim,
 * and the same second-last dim or both multiples of 32. */
static bool reshape_keeps_pages(const nn_tensor *t, const lmnn_shape *s) {
    nn_tiles gi = nn_tiles_of(&t->shape), go = nn_tiles_of(s);
    return t->layout == LMNN_TILE && gi.w == go.w &&
           (gi.h == go.h || (gi.h % 32 == 0 && go.h % 32 == 0));
}

/* A tile reshape that keeps the last dim and regroups the rows into
 * matrices of another height (the batch of a product folded into its rows,
 * and back): tile_rows_reader.c makes each output tile from runs of the
 * input's rows, in one program, where row-major stand-ins would take an
 * untilize, a copy and a tilize. Tiles of 2- or 4-byte elements (bfloat8_b
 * shares exponents across a row's blocks). */
static bool regroup_rows_ok(const nn_tensor *t, const lmnn_shape *s) {
    nn_tiles gi = nn_tiles_of(&t->shape), go = nn_tiles_of(s);
    return t->layout == LMNN_TILE && gi.w == go.w && (uint64_t)gi.batch * gi.h < (1ull << 32) &&
           (t->dtype == LMNN_FLOAT32 || t->dtype == LMNN_BFLOAT16 || t->dtype == LMNN_INT32 ||
            t->dtype == LMNN_UINT32);
}

static lm_status regroup_rows(const char *op, nn_tensor *t, const dm_out *od, lmnn_tensor *out) {
    nn_tiles gi = nn_tiles_of(&t->shape), go = nn_tiles_of(&od->shape);
    uint32_t rargs[] = {gi.h, go.h, gi.wt, t->dtype == LMNN_BFLOAT16 ? 2 : 4};
    nn_key key;
    nn_key_init(&key, "regroup_rows");
    tile_program tp = {"tile_rows_reader.c", NULL, rargs, 4};
    return run_tile_program(op, t, od, &key, &tp, out);
}

/* A tile reshape that changes the last dim, in at most RESHAPE_RUNS_MAX
 * pieces: tile_reshape_reader.c reads each output face row from the input's
 * tiles in pieces of consecutive elements, one NoC read each, in one
 * program, where row-major stand-ins take an untilize, a copy and a tilize.
 * Measured on the simulator: a decoder's [2, 1, 32] -> [2, 1, 4, 8] is one
 * launch for three; [128, 1, 4096] -> [128, 1, 64, 64] (65,536 pieces) runs
 * 1.2x faster; at 131,072 pieces ([1024, 1024] -> [512, 2048]) rows, which
 * move whole rows at a time, are 1.6x faster. Tiles of 2- or 4-byte
 * elements. */
#define RESHAPE_RUNS_MAX 65536u

static bool reshape_runs_ok(const nn_tensor *t, const lmnn_shape *s) {
    uint64_t volume = lmnn_shape_volume(&t->shape);
    uint32_t win = t->shape.dims[t->shape.rank - 1], wout = s->dims[s->rank - 1];
    /* Each output row's 16-column pieces, cut again at input face rows. */
    uint64_t runs = volume / (wout ? wout : 1) * ((wout + 15) / 16) +
                    volume / (win ? win : 1) * ((win + 15) / 16);
    return t->layout == LMNN_TILE && t->shape.rank >= 2 && s->rank >= 2 && volume <= UINT32_MAX &&
           runs <= RESHAPE_RUNS_MAX &&
           (t->dtype == LMNN_FLOAT32 || t->dtype == LMNN_BFLOAT16 || t->dtype == LMNN_INT32 ||
            t->dtype == LMNN_UINT32);
}

/* tile_reshape_reader.c over t into od: a reshape, or with `slice` the
 * window of each matrix from row `row0` and column `col0`. */
static lm_status tile_runs(const char *op, nn_tensor *t, const dm_out *od, bool slice,
                           uint32_t row0, uint32_t col0, lmnn_tensor *out) {
    const lmnn_shape *si = &t->shape, *so = &od->shape;
    uint32_t rargs[] = {si->dims[si->rank - 2],
                        si->dims[si->rank - 1],
                        so->dims[so->rank - 2],
                        so->dims[so->rank - 1],
                        t->dtype == LMNN_BFLOAT16 ? 2 : 4,
                        slice,
                        row0,
                        col0};
    nn_key key;
    nn_key_init(&key, "tile_runs");
    nn_key_add(&key, rargs, sizeof rargs); /* a slice's window is not in its shapes */
    tile_program tp = {"tile_reshape_reader.c", NULL, rargs, 8};
    return run_tile_program(op, t, od, &key, &tp, out);
}

/* t's pages, in their order, are those of a tensor of shape `s`: row-major
 * with the same last dim, or as reshape_keeps_pages. */
static bool view_ok(const nn_tensor *t, const lmnn_shape *s) {
    if (t->layout == LMNN_ROW_MAJOR) return nn_tiles_of(&t->shape).w == nn_tiles_of(s).w;
    return reshape_keeps_pages(t, s);
}

lm_status lmnn_view(lmnn_tensor a, const lmnn_shape *shape, lmnn_tensor *out) {
    const char *op = "lmnn_view";
    char s1[128], s2[128];
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    lmnn_shape s;
    if ((st = reshape_shape(op, t, shape, &s))) return st;
    if (!view_ok(t, &s))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "shape: a %s tensor of shape %s holds its elements in other pages than "
                       "a's shape %s (%s; lmnn_reshape copies)",
                       lmnn_layout_name(t->layout), nn_shape_str(&s, s1, sizeof s1),
                       nn_shape_str(&t->shape, s2, sizeof s2),
                       t->layout == LMNN_ROW_MAJOR
                           ? "a view keeps the last dim"
                           : "a view keeps the last dim, and the second-last one or both "
                             "second-last dims are multiples of 32");
    return nn_tensor_view(op, t, &s, out);
}

lm_status lmnn_clone(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out) {
    const char *op = "lmnn_clone";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    dm_out od = out_like(t, &t->shape, &mem);
    uint32_t pages = (uint32_t)t->pages;
    return run_tiles(op, t, &od, page_copy, &pages, out);
}

lm_status lmnn_reshape(lmnn_tensor a, const lmnn_shape *shape, const lmnn_output *output,
                       lmnn_tensor *out) {
    const char *op = "lmnn_reshape";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    lmnn_shape s;
    if ((st = reshape_shape(op, t, shape, &s))) return st;
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    if (view_ok(t, &s) && mem.type == t->memory.type && mem.layout == t->memory.layout)
        return nn_tensor_view(op, t, &s, out);
    dm_out od = out_like(t, &s, &mem);
    uint32_t pages = (uint32_t)t->pages;
    if (reshape_keeps_pages(t, &s)) return run_tiles(op, t, &od, page_copy, &pages, out);
    if (regroup_rows_ok(t, &s)) return regroup_rows(op, t, &od, out);
    if (od.layout == LMNN_TILE && reshape_runs_ok(t, &s))
        return tile_runs(op, t, &od, false, 0, 0, out);
    return dm_run_rm(op, t, &od, reshape_rm, NULL, out);
}

/* ---- permute and transpose ---- */

typedef struct perm_ctx {
    uint32_t perm[LMNN_MAX_DIMS];
    bool swap;
} perm_ctx;

/* Whole tiles: batch dims permuted, the two tile dims kept or swapped (each
 * tile then transposed). */
static void permute_tiles(dm_spec *spec, const void *ctx) {
    const perm_ctx *c = ctx;
    uint32_t r = spec->out_rank - 1;
    for (uint32_t d = 0; d <= r; d++)
        spec->map[d] = dm_identity(d < r ? (int32_t)c->perm[d] : (int32_t)r);
    if (c->swap) spec->flags = DM_TRANSPOSE;
}

/* A float permute that swaps the two tile dims, on the compute engine: the
 * reader takes the output's tiles in order from the input tiles they are
 * made of, the compute kernel transposes each (transpose_wh_tile), the
 * writer stores them. data_rows.c would transpose them in interpreted code,
 * a few times slower. Integers stay there: the compute engine holds them
 * as floats. */
static bool swap_on_compute(const nn_tensor *t, const perm_ctx *c) {
    return c->swap && (t->dtype == LMNN_FLOAT32 || t->dtype == LMNN_BFLOAT16);
}

static lm_status swap_tiles(const char *op, nn_tensor *t, const dm_out *od, const perm_ctx *c,
                            lmnn_tensor *out) {
    uint32_t r = t->shape.rank, dims[LMNN_MAX_DIMS], steps[LMNN_MAX_DIMS], in_steps[LMNN_MAX_DIMS];
    /* The input's dims in tiles and each one's step in its tile index. */
    for (uint32_t d = r, step = 1; d-- > 0;) {
        in_steps[d] = step;
        step *= d + 2 >= r ? (t->shape.dims[d] + 31) / 32 : t->shape.dims[d];
    }
    for (uint32_t d = 0; d < r; d++) {
        uint32_t from = c->perm[d];
        dims[d] = from + 2 >= r ? (t->shape.dims[from] + 31) / 32 : t->shape.dims[from];
        steps[d] = in_steps[from];
    }
    uint32_t rargs[1 + 2 * LMNN_MAX_DIMS];
    rargs[0] = r;
    memcpy(rargs + 1, dims, r * sizeof *dims);
    memcpy(rargs + 1 + r, steps, r * sizeof *steps);
    nn_key key;
    nn_key_init(&key, "permute_swap");
    nn_key_add(&key, c->perm, r * sizeof c->perm[0]);
    tile_program tp = {"permute_tile_reader.c", "transpose_compute.c", rargs, 1 + 2 * r};
    return run_tile_program(op, t, od, &key, &tp, out);
}

/* Whole tiles moved by permute `c`, transposed when it swaps the tile dims. */
static lm_status move_tiles(const char *op, nn_tensor *t, const dm_out *od, const perm_ctx *c,
                            lmnn_tensor *out) {
    if (swap_on_compute(t, c)) return swap_tiles(op, t, od, c, out);
    return run_tiles(op, t, od, permute_tiles, c, out);
}

static lm_status permute_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                            nn_tensor *out) {
    (void)n;
    const perm_ctx *c = ctx;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    for (uint32_t d = 0; d < ins[0]->shape.rank; d++)
        spec.map[d] = dm_identity((int32_t)c->perm[d]);
    if (!ins[0]->shape.rank) spec.map[0] = dm_identity(0);
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* A row-major swap of the last two dims moves every element on its own; in
 * tiles it moves whole tiles and transposes them in L1, which pays for the
 * tilize and untilize around it once both dims fill a tile. */
static lm_status permute_via_tiles(const char *op, nn_tensor *t, const dm_out *od, perm_ctx *c,
                                   lmnn_tensor *out) {
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    dm_out tin = {t->shape, t->dtype, LMNN_TILE, dram}, tout = *od;
    tout.layout = LMNN_TILE;
    tout.memory = dram;
    lmnn_tensor ih = {0}, th = {0}, oh = {0};
    nn_tensor *it, *tt, *o;
    c->swap = true;
    lm_status st = dm_make(op, t->device, &tin, &ih, &it);
    if (!st) st = nn_tilize(op, t, it);
    if (!st) st = move_tiles(op, it, &tout, c, &th);
    if (!st) st = nn_get_tensor(op, "a", th, &tt);
    if (!st) st = dm_make(op, t->device, od, &oh, &o);
    if (!st) st = nn_untilize(op, tt, o);
    nn_tensor_discard(ih);
    nn_tensor_discard(th);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* permute_rm over a row-major view of another shape of the same elements:
 * the strides are the view's, the pages (rows) the tensor's own. */
typedef struct view_perm_ctx {
    lmnn_shape view;
    perm_ctx perm;
    /* The permuted view, when the output has another shape with the same
     * last dim (its rows are the view's); rank 0: the output's own. */
    lmnn_shape out_view;
} view_perm_ctx;

static lm_status view_permute_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                                 nn_tensor *out) {
    (void)n;
    const view_perm_ctx *c = ctx;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    spec.in_rank = c->view.rank;
    memcpy(spec.in_dims, c->view.dims, sizeof c->view.dims[0] * c->view.rank);
    spec.in_page_w = ins[0]->shape.rank ? ins[0]->shape.dims[ins[0]->shape.rank - 1] : 1;
    if (c->out_view.rank) {
        spec.out_rank = c->out_view.rank;
        memcpy(spec.out_dims, c->out_view.dims, sizeof c->out_view.dims[0] * c->out_view.rank);
    }
    for (uint32_t d = 0; d < c->view.rank; d++)
        spec.map[d] = dm_identity((int32_t)c->perm.perm[d]);
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* A tile permute whose output rows run along a dim of the view other than
 * its rows (out's last dim is not the view's last or second-last) but whose
 * output columns are its rows ([S, H, D] -> [H, D, S], an attention's keys
 * transposed): as rows it would move every element on its own. It is a
 * permute that keeps the view's rows as rows (whole runs: [S, H, D] ->
 * [H, S, D]), then a swap of the two tile dims (whole tiles, each
 * transposed in L1). */
static lm_status permute_then_swap(const char *op, nn_tensor *t, const dm_out *od,
                                   const view_perm_ctx *c, lmnn_tensor *out) {
    uint32_t r = c->view.rank;
    view_perm_ctx keep = *c;
    perm_ctx swap = {.swap = true};
    keep.perm.perm[r - 2] = c->perm.perm[r - 1];
    keep.perm.perm[r - 1] = r - 1;
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    dm_out mid = {od->shape, t->dtype, LMNN_TILE, dram};
    mid.shape.dims[r - 2] = od->shape.dims[r - 1];
    mid.shape.dims[r - 1] = od->shape.dims[r - 2];
    for (uint32_t d = 0; d < r; d++)
        swap.perm[d] = d < r - 2 ? d : 2 * r - 3 - d;
    lmnn_tensor mh;
    nn_tensor *m;
    lm_status st = dm_run_rm(op, t, &mid, view_permute_rm, &keep, &mh);
    if (st) return st;
    if (!(st = nn_get_tensor(op, "a", mh, &m))) st = move_tiles(op, m, od, &swap, out);
    nn_tensor_discard(mh);
    return st;
}

/* Whether permute_then_swap serves `c` (a tile tensor's). */
static bool swap_pays(const nn_tensor *t, const view_perm_ctx *c) {
    uint32_t r = c->view.rank;
    return t->layout == LMNN_TILE && t->dtype != LMNN_BFLOAT8_B && r >= 2 &&
           c->perm.perm[r - 2] == r - 1 && c->perm.perm[r - 1] != r - 2;
}

/* `dims` checked as a permutation of `in`'s dims (`whose` names that rank in
 * messages): the map in c->perm, the permuted shape in *out. */
static lm_status perm_of(const char *op, const lmnn_shape *in, const char *whose,
                         const int32_t *dims, uint32_t count, perm_ctx *c, lmnn_shape *out) {
    uint32_t r = in->rank;
    if (count != r)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dims: expected %u dims (%s rank), given %u", r,
                       whose, count);
    if (r && !dims) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dims is NULL");
    bool seen[LMNN_MAX_DIMS] = {false};
    *out = *in;
    c->swap = false;
    for (uint32_t i = 0; i < r; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "dims[%u]", i);
        lm_status st = dm_norm_dim(op, arg, dims[i], r, &c->perm[i]);
        if (st) return st;
        if (seen[c->perm[i]])
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "dims: dim %u appears twice (expected a permutation of 0..%u)",
                           c->perm[i], r - 1);
        seen[c->perm[i]] = true;
        out->dims[i] = in->dims[c->perm[i]];
    }
    return LM_OK;
}

/* Whether whole tiles serve permute `c` of t (the two tile dims kept, or
 * swapped when each tile can be transposed); sets c->swap. */
static bool permute_moves_tiles(const nn_tensor *t, perm_ctx *c) {
    if (!tile_view_ok(t)) return false;
    uint32_t r = t->shape.rank;
    bool keep = c->perm[r - 2] == r - 2 && c->perm[r - 1] == r - 1;
    c->swap = c->perm[r - 2] == r - 1 && c->perm[r - 1] == r - 2;
    return keep || (c->swap && t->dtype != LMNN_BFLOAT8_B);
}

lm_status lmnn_permute(lmnn_tensor a, const int32_t *dims, uint32_t count,
                       const lmnn_output *output, lmnn_tensor *out) {
    const char *op = "lmnn_permute";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    uint32_t r = t->shape.rank;
    perm_ctx c;
    lmnn_shape s;
    if ((st = perm_of(op, &t->shape, "a's", dims, count, &c, &s))) return st;
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    dm_out od = out_like(t, &s, &mem);
    if (permute_moves_tiles(t, &c)) return move_tiles(op, t, &od, &c, out);
    view_perm_ctx vc = {t->shape, c, {0}};
    if (swap_pays(t, &vc)) return permute_then_swap(op, t, &od, &vc, out);
    if (t->layout == LMNN_ROW_MAJOR && r >= 2 && c.perm[r - 2] == r - 1 && c.perm[r - 1] == r - 2 &&
        nn_tile_format(t->dtype) && t->shape.dims[r - 1] >= 32 && t->shape.dims[r - 2] >= 32)
        return permute_via_tiles(op, t, &od, &c, out);
    return dm_run_rm(op, t, &od, permute_rm, &c, out);
}

/* The atoms of view v (from `hi` down) whose product is exactly `size`:
 * their first index in *lo. False when no run of them makes it. */
static bool atoms_of(const uint32_t *v, uint32_t hi, uint32_t size, uint32_t *lo) {
    uint64_t prod = 1;
    uint32_t i = hi;
    while (i > 0 && prod < size)
        prod *= v[--i];
    *lo = i;
    return prod == size;
}

/* A permute of view c->view (of t's elements) to shape `to` that moves
 * whole tiles: t's rows (the atoms of its second-last dim) stay together as
 * to's rows, and the view's last atom, a multiple of 32, stays last. Then
 * every tile of `to` is one of t's (an attention's heads split or joined
 * on any batch dims). Sets `spec`'s views and maps to tile views of each
 * side: the rows as one dim of row tiles, the last atom in units of 32
 * columns. */
static bool regroup_tiles(const nn_tensor *t, const view_perm_ctx *c, const lmnn_shape *to,
                          dm_spec *spec) {
    uint32_t n = c->view.rank, r = t->shape.rank, u[LMNN_MAX_DIMS];
    const uint32_t *v = c->view.dims, *p = c->perm.perm;
    if (!tile_view_ok(t) || to->rank < 2 || n < 1 || v[n - 1] % 32 || p[n - 1] != n - 1)
        return false;
    for (uint32_t d = 0; d < n; d++)
        u[d] = v[p[d]];
    uint32_t in_cols, in_rows, out_cols, out_rows;
    if (!atoms_of(v, n, t->shape.dims[r - 1], &in_cols) ||
        !atoms_of(v, in_cols, t->shape.dims[r - 2], &in_rows) ||
        !atoms_of(u, n, to->dims[to->rank - 1], &out_cols) ||
        !atoms_of(u, out_cols, to->dims[to->rank - 2], &out_rows) ||
        out_cols - out_rows != in_cols - in_rows)
        return false;
    for (uint32_t d = out_rows; d < out_cols; d++)
        if (p[d] != in_rows + (d - out_rows)) return false;
    /* Tile views: row atoms as one dim of row tiles, the last atom in tiles. */
    uint32_t at[LMNN_MAX_DIMS], k = 0; /* each view atom's tile dim */
    for (uint32_t i = 0; i < n; i++) {
        if (i > in_rows && i < in_cols) {
            at[i] = at[i - 1];
            continue;
        }
        at[i] = k;
        spec->in_dims[k++] = i == in_rows && in_rows < in_cols ? (t->shape.dims[r - 2] + 31) / 32
                                                               : (i == n - 1 ? v[i] / 32 : v[i]);
    }
    spec->in_dims[k] = 1;
    spec->in_rank = k + 1;
    uint32_t m = 0;
    for (uint32_t d = 0; d < n; d++) {
        if (d > out_rows && d < out_cols) continue;
        spec->out_dims[m] = spec->in_dims[at[p[d]]];
        spec->map[m++] = dm_identity((int32_t)at[p[d]]);
    }
    spec->out_dims[m] = 1;
    spec->map[m] = dm_identity((int32_t)k);
    spec->out_rank = m + 1;
    return true;
}

/* A permute whose output rows are each two or three dims of the permuted
 * view: an NHWC image's depth-to-space, [N, H, W, b, b * C] -> [N, H, b,
 * W, b * C] as rows [N * H * b, W * b * C] (DCR), or [N, H, W, C, b, b] ->
 * [N, H, b, W, b, C] (CRD, PyTorch's PixelShuffle). As a permute to rows
 * of the last dim and a reshape it makes a row per b * C or C elements and
 * then joins them; here each output row is read through one BLOCK map,
 * from a staged window of the input (or as runs of the inner dim), in one
 * pass. The ctx holds the views and maps (the input view's dims with
 * neighbours that stay neighbours merged, and dims of 1 dropped). */
typedef struct block_ctx {
    uint32_t in_rank, in_dims[LMNN_MAX_DIMS];
    uint32_t out_rank, out_dims[LMNN_MAX_DIMS];
    dm_map map[LMNN_MAX_DIMS];
    uint32_t b2, a2; /* the BLOCK map's inner dim */
} block_ctx;

/* A row-major tensor's page width (its last dim). */
static uint32_t page_w(const nn_tensor *t) {
    return t->shape.rank ? t->shape.dims[t->shape.rank - 1] : 1;
}

/* The row kernel's spec of `b` on a row-major input of pages of in_w. */
static void block_spec(const block_ctx *b, uint32_t in_w, dm_spec *spec) {
    memset(spec, 0, sizeof *spec);
    spec->in_rank = b->in_rank;
    memcpy(spec->in_dims, b->in_dims, sizeof b->in_dims[0] * b->in_rank);
    spec->in_page_w = in_w;
    spec->out_rank = b->out_rank;
    memcpy(spec->out_dims, b->out_dims, sizeof b->out_dims[0] * b->out_rank);
    memcpy(spec->map, b->map, sizeof b->map[0] * b->out_rank);
    spec->block_b2 = b->b2;
    spec->block_a2 = b->a2;
}

static bool block_rows(const nn_tensor *t, const view_perm_ctx *c, const lmnn_shape *to,
                       block_ctx *b) {
    const uint32_t *v = c->view.dims, *p = c->perm.perm;
    uint32_t n = c->view.rank, esize = nn_rm_elem_size(t->dtype);
    if (!to || !to->rank || t->dtype == LMNN_BFLOAT8_B) return false;
    /* Output dims (of size > 1) grouped into runs of consecutive input dims;
     * first[g] each group's first input dim, size[g] its elements. */
    uint32_t groups = 0, first[LMNN_MAX_DIMS], size[LMNN_MAX_DIMS], last_in = 0;
    for (uint32_t d = 0; d < n; d++) {
        if (v[p[d]] == 1) continue;
        bool joins = groups && p[d] > last_in;
        for (uint32_t i = last_in + 1; joins && i < p[d]; i++)
            joins = v[i] == 1; /* only dims of 1 between */
        if (joins) {
            size[groups - 1] *= v[p[d]];
        } else {
            first[groups] = p[d];
            size[groups++] = v[p[d]];
        }
        last_in = p[d];
    }
    /* The last k groups (2 or 3) make to's rows. */
    uint32_t width = to->dims[to->rank - 1], k = 0;
    uint64_t prod = 1;
    while (k < 3 && k < groups && prod < width)
        prod *= size[groups - ++k];
    if (k < 2 || prod != width) return false;
    /* The input view: the groups in input order; in_of[g] group g's place. */
    uint32_t in_of[LMNN_MAX_DIMS], stride[LMNN_MAX_DIMS];
    for (uint32_t g = 0; g < groups; g++) {
        in_of[g] = 0;
        for (uint32_t h = 0; h < groups; h++)
            in_of[g] += first[h] < first[g];
    }
    b->in_rank = groups;
    for (uint32_t g = 0; g < groups; g++)
        b->in_dims[in_of[g]] = size[g];
    stride[groups - 1] = 1;
    for (uint32_t i = groups - 1; i > 0; i--)
        stride[i - 1] = stride[i] * b->in_dims[i];
    /* Digits (q, r, r2) of a row: with two groups r is a dim of 1. */
    uint32_t gq = groups - k, g2 = groups - 1;
    dm_map m = {DM_BLOCK, 0, 1, stride[in_of[gq]], (int32_t)groups - 1};
    b->b2 = size[g2];
    b->a2 = stride[in_of[g2]];
    if (k == 3) {
        m.b = size[groups - 2];
        m.a = stride[in_of[groups - 2]];
    }
    b->out_rank = gq + 1;
    for (uint32_t g = 0; g < gq; g++) {
        b->out_dims[g] = size[g];
        b->map[g] = dm_identity((int32_t)in_of[g]);
    }
    b->out_dims[gq] = width;
    b->map[gq] = m;
    /* Worth it when the window stages, or the inner runs are whole reads. */
    dm_spec spec;
    bool page;
    block_spec(b, page_w(t), &spec);
    return dm_block_stage(&spec, page_w(t), esize, &page) || (b->a2 == 1 && b->b2 * esize >= 64);
}

static lm_status block_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                          nn_tensor *out) {
    (void)n;
    dm_spec spec;
    block_spec(ctx, page_w(ins[0]), &spec);
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* lmnn_reshape(t, to) of permute result `r` (consumed) when `to` is set. */
static lm_status reshaped_to(lmnn_tensor r, const lmnn_shape *to, const lmnn_output *output,
                             lmnn_tensor *out) {
    if (!to) {
        *out = r;
        return LM_OK;
    }
    lm_status st = lmnn_reshape(r, to, output, out);
    lmnn_tensor_free(r);
    return st;
}

lm_status lmnn_permute_reshaped(lmnn_tensor a, const lmnn_shape *shape, const int32_t *dims,
                                uint32_t count, const lmnn_output *output, lmnn_tensor *out) {
    return lmnn_permute_reshaped_to(a, shape, dims, count, NULL, output, out);
}

lm_status lmnn_permute_reshaped_to(lmnn_tensor a, const lmnn_shape *shape, const int32_t *dims,
                                   uint32_t count, const lmnn_shape *to, const lmnn_output *output,
                                   lmnn_tensor *out) {
    const char *op = to ? "lmnn_permute_reshaped_to" : "lmnn_permute_reshaped";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    view_perm_ctx c = {.out_view = {0}};
    lmnn_shape s, final;
    if ((st = reshape_shape(op, t, shape, &c.view))) return st;
    if ((st = perm_of(op, &c.view, "the shape's", dims, count, &c.perm, &s))) return st;
    if (to) {
        char s1[128], s2[128];
        if (to->rank > LMNN_MAX_DIMS)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "to: rank %u is more than %u", to->rank,
                           LMNN_MAX_DIMS);
        if (lmnn_shape_volume(to) != lmnn_shape_volume(&t->shape))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "to: %s does not hold the %llu elements of a's shape %s",
                           nn_shape_str(to, s1, sizeof s1),
                           (unsigned long long)lmnn_shape_volume(&t->shape),
                           nn_shape_str(&t->shape, s2, sizeof s2));
    }
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    bool moves = false;
    for (uint32_t d = 0; d < c.view.rank; d++)
        moves |= c.perm.perm[d] != d;
    if (!moves) return lmnn_reshape(a, to ? to : &c.view, output, out); /* nothing to permute */
    /* Two cheap steps stay two: a reshape that keeps the tiles' order, then
     * a permute of whole tiles. */
    if (reshape_keeps_pages(t, &c.view)) {
        nn_tensor view = *t;
        view.shape = c.view;
        perm_ctx probe = c.perm;
        if (permute_moves_tiles(&view, &probe)) {
            lmnn_tensor r, p;
            if ((st = lmnn_reshape(a, &c.view, NULL, &r))) return st;
            st = lmnn_permute(r, dims, count, to ? NULL : output, &p);
            lmnn_tensor_free(r);
            return st ? st : reshaped_to(p, to, output, out);
        }
    }
    /* Whole tiles where the rows stay together. */
    const lmnn_shape *shape_out = to ? to : &s;
    dm_spec spec;
    dm_spec_init(&spec, t, t, true); /* both views are replaced */
    if (regroup_tiles(t, &c, shape_out, &spec)) {
        dm_out od = out_like(t, shape_out, &mem);
        lmnn_tensor oh;
        nn_tensor *o = NULL;
        if ((st = dm_make(op, t->device, &od, &oh, &o))) return st;
        if ((st = dm_run(op, &spec, t, o, NULL, NULL))) {
            nn_tensor_discard(oh);
            return st;
        }
        *out = oh;
        return LM_OK;
    }
    bool swap = swap_pays(t, &c);
    block_ctx bc;
    if (!swap && block_rows(t, &c, to, &bc)) {
        dm_out od = out_like(t, to, &mem);
        return dm_run_rm(op, t, &od, block_rm, &bc, out);
    }
    /* Rows that stay rows go straight to `to`: the pass writes its rows in
     * order, and both shapes' rows are the same elements. */
    bool rows = !swap && to && to->rank && to->dims[to->rank - 1] == s.dims[s.rank - 1];
    if (rows) c.out_view = s;
    final = rows ? *to : s;
    dm_out od = out_like(t, &final, &mem);
    lmnn_tensor r;
    if (swap) {
        if ((st = permute_then_swap(op, t, &od, &c, &r))) return st;
    } else if ((st = dm_run_rm(op, t, &od, view_permute_rm, &c, &r))) {
        return st;
    }
    return reshaped_to(r, rows ? NULL : to, output, out);
}

lm_status lmnn_transpose(lmnn_tensor a, int32_t dim0, int32_t dim1, const lmnn_output *output,
                         lmnn_tensor *out) {
    const char *op = "lmnn_transpose";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    uint32_t r = t->shape.rank, d0 = 0, d1 = 0;
    if ((st = dm_norm_dim(op, "dim0", dim0, r, &d0)) ||
        (st = dm_norm_dim(op, "dim1", dim1, r, &d1)))
        return st;
    int32_t perm[LMNN_MAX_DIMS];
    for (uint32_t i = 0; i < r; i++)
        perm[i] = (int32_t)i;
    if (r) {
        perm[d0] = (int32_t)d1;
        perm[d1] = (int32_t)d0;
    }
    return lmnn_permute(a, perm, r, output, out);
}

/* ---- slice, split, chunk ---- */

typedef struct slice_ctx {
    uint32_t begin[LMNN_MAX_DIMS], step[LMNN_MAX_DIMS];
    bool pad; /* whole tiles: the edge tiles hold input beyond the slice */
} slice_ctx;

static lm_status slice_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                          nn_tensor *out) {
    (void)n;
    const slice_ctx *c = ctx;
    dm_spec spec;
    dm_spec_init(&spec, ins[0], out, false);
    for (uint32_t d = 0; d < spec.out_rank; d++)
        spec.map[d] = (dm_map){DM_AFFINE, c->begin[d], c->step[d], 0, (int32_t)d};
    return dm_run(op, &spec, ins[0], out, NULL, NULL);
}

/* Whole tiles serve a slice of shape `s` whose last two dims start on a
 * tile and step 1. Its edge tiles need their padding zeroed again only where
 * the slice ends inside a tile of the input short of the input's end (the
 * input's own padding is zero): a [S, 1, 3C] tensor cut into three [S, 1, C]
 * at multiples of 32 moves its tiles as they are. */
static bool slice_tiles_ok(const nn_tensor *t, const lmnn_shape *s, slice_ctx *c) {
    if (!tile_view_ok(t)) return false;
    uint32_t r = t->shape.rank;
    c->pad = false;
    for (uint32_t d = r - 2; d < r; d++) {
        if (c->begin[d] % 32 || c->step[d] != 1) return false;
        uint32_t end = c->begin[d] + s->dims[d];
        if (end % 32 && end != t->shape.dims[d]) c->pad = true;
    }
    return true;
}

/* A slice of the last two dims alone (every other dim whole), stepping 1:
 * each matrix's window read as runs (tile_runs), in up to
 * RESHAPE_RUNS_MAX pieces (two per output face row at most): a rotary
 * embedding's halves of [B, H, T, D]. */
static bool slice_runs_ok(const nn_tensor *t, const lmnn_shape *s, const slice_ctx *c) {
    uint32_t r = t->shape.rank;
    if (t->layout != LMNN_TILE || r < 2 ||
        !(t->dtype == LMNN_FLOAT32 || t->dtype == LMNN_BFLOAT16 || t->dtype == LMNN_INT32 ||
          t->dtype == LMNN_UINT32))
        return false;
    for (uint32_t d = 0; d < r; d++)
        if (c->step[d] != 1 || (d + 2 < r && s->dims[d] != t->shape.dims[d])) return false;
    uint64_t pieces = lmnn_shape_volume(s) / s->dims[r - 1] * 2 * ((s->dims[r - 1] + 15) / 16);
    return pieces <= RESHAPE_RUNS_MAX;
}

static void slice_tiles(dm_spec *spec, const void *ctx) {
    const slice_ctx *c = ctx;
    uint32_t r = spec->out_rank - 1;
    for (uint32_t d = 0; d < r - 2; d++)
        spec->map[d] = (dm_map){DM_AFFINE, c->begin[d], c->step[d], 0, (int32_t)d};
    spec->map[r - 2] = (dm_map){DM_AFFINE, c->begin[r - 2] / 32, 1, 0, (int32_t)(r - 2)};
    spec->map[r - 1] = (dm_map){DM_AFFINE, c->begin[r - 1] / 32, 1, 0, (int32_t)(r - 1)};
    spec->map[r] = dm_identity((int32_t)r);
    if (c->pad) spec->flags = DM_ZERO_PAD;
}

lm_status lmnn_slice(lmnn_tensor a, const int32_t *begins, const int32_t *ends,
                     const int32_t *steps, uint32_t count, const lmnn_output *output,
                     lmnn_tensor *out) {
    const char *op = "lmnn_slice";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, out, &t);
    if (st) return st;
    uint32_t r = t->shape.rank;
    if (count != r)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "count: expected %u begins and ends (a's rank), given %u", r, count);
    if (r && (!begins || !ends))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL", !begins ? "begins" : "ends");
    slice_ctx c;
    lmnn_shape s = t->shape;
    for (uint32_t d = 0; d < r; d++) {
        int64_t n = t->shape.dims[d], b = begins[d], e = ends[d], k = steps ? steps[d] : 1;
        if (k < 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "steps[%u]: expected >= 1, given %lld", d,
                           (long long)k);
        if (b < -n || b >= n)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "begins[%u]: %lld is out of range for dim %u of size %lld", d,
                           (long long)b, d, (long long)n);
        if (e < -n || e > n)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "ends[%u]: %lld is out of range for dim %u of size %lld", d,
                           (long long)e, d, (long long)n);
        if (b < 0) b += n;
        if (e < 0) e += n;
        if (e <= b)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "dim %u: the slice [%lld, %lld) is empty (tensors have no empty dims)",
                           d, (long long)b, (long long)e);
        c.begin[d] = (uint32_t)b;
        c.step[d] = (uint32_t)k;
        s.dims[d] = (uint32_t)((e - b + k - 1) / k);
    }
    lmnn_memory_config mem;
    if ((st = dm_out_memory(op, output, t, &mem))) return st;
    dm_out od = out_like(t, &s, &mem);
    if (slice_tiles_ok(t, &s, &c)) return run_tiles(op, t, &od, slice_tiles, &c, out);
    if (od.layout == LMNN_TILE && slice_runs_ok(t, &s, &c))
        return tile_runs(op, t, &od, true, c.begin[r - 2], c.begin[r - 1], out);
    return dm_run_rm(op, t, &od, slice_rm, &c, out);
}

/* The pieces of `a` along `dim`, `sizes` long. */
static lm_status split_pieces(const char *op, nn_tensor *t, uint32_t dim, const uint32_t *sizes,
                              uint32_t count, const lmnn_output *output, lmnn_tensor *outs) {
    lmnn_memory_config mem;
    lm_status st = dm_out_memory(op, output, t, &mem);
    if (st) return st;
    for (uint32_t i = 0; i < count; i++)
        outs[i].id = 0;
    slice_ctx c;
    for (uint32_t d = 0; d < LMNN_MAX_DIMS; d++) {
        c.begin[d] = 0;
        c.step[d] = 1;
    }
    /* Tile pieces that whole tiles cannot serve share one row-major copy. */
    lmnn_tensor rm_h = {0};
    nn_tensor *rm = NULL;
    for (uint32_t i = 0; i < count && !st; i++) {
        lmnn_shape s = t->shape;
        s.dims[dim] = sizes[i];
        dm_out od = out_like(t, &s, &mem);
        if (t->layout == LMNN_ROW_MAJOR) {
            st = dm_run_rm(op, t, &od, slice_rm, &c, &outs[i]);
        } else if (slice_tiles_ok(t, &s, &c)) {
            st = run_tiles(op, t, &od, slice_tiles, &c, &outs[i]);
        } else {
            if (!rm) st = dm_untilized(op, t, &rm_h, &rm);
            if (!st) st = dm_via_rm(op, &rm, 1, &od, slice_rm, &c, &outs[i]);
        }
        c.begin[dim] += sizes[i];
    }
    nn_tensor_discard(rm_h);
    if (st)
        for (uint32_t i = 0; i < count; i++) {
            nn_tensor_discard(outs[i]);
            outs[i].id = 0;
        }
    return st;
}

lm_status lmnn_split(lmnn_tensor a, const uint32_t *sizes, uint32_t count, int32_t dim,
                     const lmnn_output *output, lmnn_tensor *outs) {
    const char *op = "lmnn_split";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, outs, &t);
    if (st) return st;
    if (!t->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    if (!t->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    uint32_t d = 0;
    if ((st = dm_norm_dim(op, "dim", dim, t->shape.rank, &d))) return st;
    if (!sizes || !count)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "sizes: expected at least one size");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!sizes[i])
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "sizes[%u] is 0 (no empty pieces)", i);
        sum += sizes[i];
    }
    uint32_t n = t->shape.dims[d];
    if (sum != n)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "sizes: they sum to %llu, expected %u (dim %u of a)",
                       (unsigned long long)sum, n, d);
    return split_pieces(op, t, d, sizes, count, output, outs);
}

lm_status lmnn_chunk(lmnn_tensor a, uint32_t chunks, int32_t dim, const lmnn_output *output,
                     lmnn_tensor *outs, uint32_t *out_count) {
    const char *op = "lmnn_chunk";
    nn_tensor *t = NULL;
    lm_status st = get_input(op, "a", a, outs, &t);
    if (st) return st;
    if (!out_count) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_count is NULL");
    if (!t->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    if (!t->shape.rank)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "a: expected at least 1 dim, given a scalar");
    uint32_t d = 0;
    if ((st = dm_norm_dim(op, "dim", dim, t->shape.rank, &d))) return st;
    if (!chunks) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "chunks: expected >= 1, given 0");
    uint32_t n = t->shape.dims[d];
    uint32_t size = (n + chunks - 1) / chunks, count = (n + size - 1) / size;
    uint32_t *list = malloc(count * sizeof *list);
    if (!list) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for %u sizes", count);
    for (uint32_t i = 0; i < count; i++)
        list[i] = i + 1 < count ? size : n - size * (count - 1);
    st = split_pieces(op, t, d, list, count, output, outs);
    free(list);
    if (!st) *out_count = count;
    return st;
}

/* ---- concat ---- */

typedef struct concat_ctx {
    uint32_t dim;
} concat_ctx;

/* Each input into its box of the output. */
static lm_status concat_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t n,
                           nn_tensor *out) {
    const concat_ctx *c = ctx;
    uint32_t offset = 0;
    for (uint32_t i = 0; i < n; i++) {
        dm_spec spec;
        dm_spec_init(&spec, ins[i], out, false);
        identity_maps(&spec);
        for (uint32_t d = 0; d < spec.out_rank; d++)
            spec.box[d] = spec.in_dims[d];
        spec.box_lo[c->dim] = offset;
        offset += ins[i]->shape.dims[c->dim];
        lm_status st = dm_run(op, &spec, ins[i], out, NULL, NULL);
        if (st) return st;
    }
    return LM_OK;
}

/* Whole tiles serve a concat along a batch dim, or along one of the last two
 * when every input but the last fills its tiles there. */
static bool concat_tiles_ok(nn_tensor *const *ins, uint32_t n, uint32_t dim) {
    if (!tile_view_ok(ins[0])) return false;
    uint32_t r = ins[0]->shape.rank;
    if (dim < r - 2) return true;
    for (uint32_t i = 0; i + 1 < n; i++)
        if (ins[i]->shape.dims[dim] % 32) return false;
    return true;
}

static lm_status concat_tiles(const char *op, nn_tensor *const *ins, uint32_t n, uint32_t dim,
                              nn_tensor *out) {
    uint32_t r = ins[0]->shape.rank, offset = 0;
    for (uint32_t i = 0; i < n; i++) {
        dm_spec spec;
        dm_spec_init(&spec, ins[i], out, true);
        identity_maps(&spec);
        for (uint32_t d = 0; d < spec.out_rank; d++)
            spec.box[d] = spec.in_dims[d];
        spec.box_lo[dim] = dim < r - 2 ? offset : offset / 32;
        offset += ins[i]->shape.dims[dim];
        lm_status st = dm_run(op, &spec, ins[i], out, NULL, NULL);
        if (st) return st;
    }
    return LM_OK;
}

/* Inputs at most for concat_runs (its runtime args hold each one's). */
enum { CONCAT_RUNS_MAX = 16 };

/* Whether a concatenation along the last or second-last dim of tile
 * tensors moves column or row runs of tiles (concat_runs): interleaved
 * inputs and output (`memory`) of 2- or 4-byte elements (bfloat8_b's
 * blocks share exponents across a face row's columns). */
static bool concat_runs_ok(nn_tensor *const *ins, uint32_t n, uint32_t dim,
                           const lmnn_memory_config *memory) {
    uint32_t r = ins[0]->shape.rank;
    if (n > CONCAT_RUNS_MAX || r < 2 || dim + 2 < r || !tile_view_ok(ins[0]) ||
        memory->layout != LM_BUFFER_INTERLEAVED)
        return false;
    uint32_t esize = nn_rm_elem_size(ins[0]->dtype);
    if (ins[0]->dtype == LMNN_BFLOAT8_B || (esize != 2 && esize != 4)) return false;
    for (uint32_t i = 0; i < n; i++)
        if (ins[i]->memory.layout != LM_BUFFER_INTERLEAVED) return false;
    return true;
}

/* The concatenation of tile tensors `ins` along the last dim (or, with
 * `rows`, the second-last) into `out`, each output tile assembled from the
 * column (row) runs that land in it (kernels/concat_runs.c): every element
 * read once, no pass through row-major. */
static lm_status concat_runs(const char *op, nn_tensor *const *ins, uint32_t n, nn_tensor *out,
                             bool rows) {
    nn_tiles t = nn_tiles_of(&out->shape);
    uint32_t dim = out->shape.rank - (rows ? 2 : 1);
    uint64_t units = (uint64_t)t.batch * t.ht * t.wt;
    uint32_t tile = (uint32_t)lm_tile_size(nn_tile_format(out->dtype));
    uint32_t args[7 + CONCAT_RUNS_MAX * 4] = {
        tile, nn_rm_elem_size(out->dtype), t.ht, t.wt, out->memory.type == LM_BUFFER_DRAM, rows, n};
    uint32_t nargs = 7, off = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t extent = ins[i]->shape.dims[dim];
        args[nargs++] = extent;
        args[nargs++] = off;
        args[nargs++] = (extent + 31) / 32;
        args[nargs++] = ins[i]->memory.type == LM_BUFFER_DRAM;
        off += extent;
    }
    nn_key key;
    nn_key_init(&key, "concat_runs");
    nn_key_add(&key, args, nargs * sizeof *args);
    nn_key_tensor(&key, out);
    for (uint32_t i = 0; i < n; i++)
        nn_key_tensor(&key, ins[i]);
    nn_program *prog = nn_cache_find(out->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec k = {"concat_runs.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        st = nn_split_work(op, out->device, units, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, out->device, &p);
        if (!st) st = nn_program_cb(op, &p, 16, LM_DATA_FORMAT_UINT32, tile, 1);
        if (!st) st = nn_program_kernel(op, &p, &k, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, args, nargs);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, out->device, &key, &p, &prog);
    }
    nn_tensor *tensors[1 + CONCAT_RUNS_MAX] = {out};
    for (uint32_t i = 0; i < n; i++)
        tensors[1 + i] = ins[i];
    return st ? st : nn_launch(op, prog, tensors, 1 + n);
}

/* The most tile tensors one concatenation through row-major takes
 * (dm_via_rm's limit); more are concatenated a group at a time, then the
 * groups' results. */
enum { CONCAT_GROUP = 64 };

static lm_status concat_groups(const lmnn_tensor *tensors, uint32_t count, int32_t dim,
                               const lmnn_output *output, lmnn_tensor *out) {
    uint32_t groups = (count + CONCAT_GROUP - 1) / CONCAT_GROUP;
    lmnn_tensor *parts = calloc(groups, sizeof *parts);
    if (!parts)
        return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, "lmnn_concat", "no memory for %u groups", groups);
    lm_status st = LM_OK;
    for (uint32_t g = 0; g < groups && !st; g++) {
        uint32_t n =
            count - g * CONCAT_GROUP < CONCAT_GROUP ? count - g * CONCAT_GROUP : CONCAT_GROUP;
        st = lmnn_concat(tensors + g * CONCAT_GROUP, n, dim, NULL, &parts[g]);
    }
    if (!st) st = lmnn_concat(parts, groups, dim, output, out);
    for (uint32_t g = 0; g < groups; g++)
        lmnn_tensor_free(parts[g]);
    free(parts);
    return st;
}

lm_status lmnn_concat(const lmnn_tensor *tensors, uint32_t count, int32_t dim,
                      const lmnn_output *output, lmnn_tensor *out) {
    const char *op = "lmnn_concat";
    char s1[128], s2[128], arg[32];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    if (!tensors || !count)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "tensors: expected at least one tensor");
    nn_tensor **ts = calloc(count, sizeof *ts);
    if (!ts) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for %u tensors", count);
    lm_status st = LM_OK;
    uint32_t d = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < count && !st; i++) {
        snprintf(arg, sizeof arg, "tensors[%u]", i);
        st = nn_get_tensor(op, arg, tensors[i], &ts[i]);
        if (st) break;
        nn_tensor *t = ts[i], *t0 = ts[0];
        if (i == 0) {
            if (!t->shape.rank)
                st = nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                             "tensors[0]: expected at least 1 dim, given a scalar");
            if (!st) st = dm_norm_dim(op, "dim", dim, t->shape.rank, &d);
        } else if ((st = nn_check_same_device(op, arg, t, t0))) {
        } else if (t->dtype != t0->dtype || t->layout != t0->layout) {
            st = nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                         "%s: expected %s %s as tensors[0], given %s %s", arg,
                         lmnn_layout_name(t0->layout), lmnn_dtype_name(t0->dtype),
                         lmnn_layout_name(t->layout), lmnn_dtype_name(t->dtype));
        } else {
            bool same = t->shape.rank == t0->shape.rank;
            for (uint32_t k = 0; same && k < t->shape.rank; k++)
                same = k == d || t->shape.dims[k] == t0->shape.dims[k];
            if (!same)
                st = nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                             "%s: shape %s differs from tensors[0]'s %s outside dim %u", arg,
                             nn_shape_str(&t->shape, s1, sizeof s1),
                             nn_shape_str(&t0->shape, s2, sizeof s2), d);
        }
        if (!st) total += t->shape.dims[d];
    }
    lmnn_memory_config mem;
    if (!st) st = dm_out_memory(op, output, ts[0], &mem);
    if (!st && total > UINT32_MAX)
        st = nn_fail(LM_ERR_INVALID_ARGUMENT, op, "dim %u would be %llu long", d,
                     (unsigned long long)total);
    if (!st) {
        lmnn_shape s = ts[0]->shape;
        s.dims[d] = (uint32_t)total;
        dm_out od = out_like(ts[0], &s, &mem);
        concat_ctx c = {d};
        bool runs = !concat_tiles_ok(ts, count, d) && concat_runs_ok(ts, count, d, &mem);
        if (ts[0]->layout == LMNN_TILE && !concat_tiles_ok(ts, count, d) && !runs &&
            count > CONCAT_GROUP) {
            st = concat_groups(tensors, count, (int32_t)d, output, out);
        } else if (ts[0]->layout == LMNN_TILE && !concat_tiles_ok(ts, count, d) && !runs) {
            st = dm_via_rm(op, ts, count, &od, concat_rm, &c, out);
        } else {
            lmnn_tensor oh;
            nn_tensor *o = NULL;
            st = dm_make(op, ts[0]->device, &od, &oh, &o);
            if (!st)
                st = ts[0]->layout == LMNN_ROW_MAJOR ? concat_rm(op, &c, ts, count, o)
                     : runs ? concat_runs(op, ts, count, o, d + 2 == ts[0]->shape.rank)
                            : concat_tiles(op, ts, count, d, o);
            if (st)
                nn_tensor_discard(oh);
            else
                *out = oh;
        }
    }
    free(ts);
    return st;
}
