/* Matmul and linear: one program shape for every case (see lmnn_matmul.h).
 *
 * The plan. Output matrices are Mt x Nt tiles. When b is one matrix for all
 * (its batch dims are all 1) the batch folds into the rows: one group of
 * batch * Mt tile rows; otherwise each output matrix is a group of Mt rows.
 * Groups are cut into block rows of Mb tiles, the columns into block columns
 * of Nb tiles; a block (Mb x Nb within dst: 16 tiles, 8 with fp32
 * accumulation, one fewer with transpose_a, which needs a spare) accumulates
 * in dst over K blocks of kb tiles that stream through double-buffered
 * circular buffers.
 *
 * Block (i, j) goes to core (j % gx, i % gy) of a gx x gy rectangle at the
 * grid's origin, at step (i / gy, j / gx). Each core reads the A and B blocks
 * of its steps itself, or, with multicast, every core walks the same steps, so
 * a row of cores needs the same A block row at each step, read by one core of
 * the row and multicast to the others, and, when b is shared, a column of
 * cores the same B block column, multicast down it. The senders sit on the
 * diagonal (x = y % gx, y = x % gy) so that the reading spreads over the
 * grid; a core whose block falls past the edge at a step still takes part in
 * the multicasts its row or column needs.
 *
 * Each kernel gets the same runtime args (the geometry, ARG_*), set once per
 * program; the tensors' addresses are the common args: a for the reader; b,
 * out and bias for the writer. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "nn/kernels/nn_kernel.h" /* nn_group_span, as the writer reads B */
#include "nn/nn_internal.h"

enum {
    ARG_MT,   /* tile rows of an output matrix */
    ARG_KT,   /* tiles along K */
    ARG_NT,   /* tile columns of the output */
    ARG_ROWS, /* tile rows of a group */
    ARG_MBG,  /* block rows of a group */
    ARG_NBK,  /* block columns */
    ARG_MBK,  /* block rows in all */
    ARG_MB,   /* block size in tiles: rows, columns, K */
    ARG_NB,
    ARG_KB,
    ARG_GX, /* cores used */
    ARG_GY,
    ARG_SI, /* steps: block rows per core row, block columns per core column */
    ARG_SJ,
    ARG_MLAST,            /* valid rows of a matrix's last tile row (1..32) */
    ARG_NLAST,            /* valid columns of the last tile column */
    ARG_FLAGS,            /* MM_* */
    ARG_OUT_FMT,          /* lm_data_format of the output */
    ARG_SEM,              /* semaphores: a_ready, a_valid, b_ready, b_valid */
    ARG_ND = ARG_SEM + 4, /* batch dims, then (out dim, a stride, b stride) each */
    ARG_DIMS,
    ARG_VX = ARG_DIMS + 3 * (LMNN_MAX_DIMS - 2), /* this core's place in the gx x gy grid */
    ARG_VY,
    ARG_ACT,                                /* the activation's nn_param[0..2] (nn_unary_chain) */
    ARG_ACT_OP = ARG_ACT + NN_UNARY_PARAMS, /* the activation: nn_op */
    ARG_GROUP_C,                            /* nn_mm_groups (c 0: none) */
    ARG_GROUP_CG,
    ARG_GROUP_OCG,
    ARG_RM_LEN, /* MM_RM_OUT: elements per page of the row-major output */
    ARG_POOL,   /* a fused max pooling: rows | column groups << 16 (1 | 1 << 16: none) */
    ARG_MAX
};
_Static_assert(ARG_VX == 41 && ARG_VY == 42, "the matmul kernels read x and y at args 41 and 42");
_Static_assert(ARG_ACT == 43 && ARG_ACT_OP == 46 && ARG_GROUP_C == 47 && ARG_RM_LEN == 50 &&
                   ARG_POOL == 51,
               "matmul_compute.c reads the activation's parameters at args 43..45, the op at 46, "
               "the groups at 47..49, the pooling at 51; matmul_writer.c the row-major output's "
               "pages at 50");

enum {
    MM_MCAST_A = 1,
    MM_MCAST_B = 2,
    MM_BIAS = 4,
    MM_TA = 8,
    MM_TB = 16,
    MM_A_DRAM = 32,
    MM_B_DRAM = 64,
    MM_OUT_DRAM = 128,
    MM_BIAS_DRAM = 256,
    MM_ZERO_PAD = 512,
    MM_KEEP_A = 1024,       /* A's K blocks stay for a core's steps along a row of blocks */
    MM_ACT_IN_PLACE = 2048, /* the activation runs on the block in dst (nn_unary_in_place) */
    MM_KEEP_B = 4096,       /* all of B comes once per core and stays (one column of blocks) */
    MM_RM_OUT = 8192,       /* the output untilized, row-major (a gathered product's) */
    MM_COMPACT_B = 16384,   /* B in the compact form of nn_mm_groups */
};

#define CB_INTERM 0
#define CB_A 1
#define CB_B 2
#define CB_ONES 3
#define CB_BIAS 4
#define CB_AT 5
#define CB_ZEROS 6        /* the writer's zeros for the padding (MM_ZERO_PAD) */
#define ZEROS_BYTES 1024u /* a float32 face */
#define CB_OUT 16
#define CB_PACK 10 /* the output's tiles on their way to being untilized */

/* Circular buffers may take this much of a core's L1. */
#define CB_BUDGET (896u * 1024u)
/* Runtime args a gathering reader may take. */
#define GATHER_ARGS_MAX 64

void lmnn_matmul_options_init(lmnn_matmul_options *opts) {
    if (!opts) return;
    *opts = (lmnn_matmul_options){0};
    opts->activation_alpha = NAN;
    opts->activation_beta = NAN;
}

/* What the checks found and the program needs. */
typedef struct mm_plan {
    nn_tensor *a, *b, *bias;
    lmnn_shape b_shape; /* B's as a matrix (its own, but for a compact one) */
    bool ta, tb;        /* tile-level transposes (tb also for a rank-1 b) */
    bool mcast;
    bool fp32;
    uint32_t m, n, mt, kt, nt;
    lmnn_shape out_shape;
    uint32_t nd, od[LMNN_MAX_DIMS], as[LMNN_MAX_DIMS], bs[LMNN_MAX_DIMS];
    uint64_t matrices; /* output matrices */
    bool b_shared;     /* b has one matrix */
    bool act, act_nonzero;
    bool raw_padding; /* leave the output's padding as the product makes it */
    char chain[512];
    uint32_t act_params[NN_UNARY_PARAMS];
    lmnn_unary_op act_op;
    nn_mm_groups groups; /* c 0: a dense b */
    /* A fused max pooling (nn_mm_gather's pool_*, set before plan(); 0:
     * none, which plan() makes 1 and 1): the output is n_out columns,
     * nt_out tiles, of the n of B. */
    uint32_t pool_rows, pool_groups, n_out, nt_out;
} mm_plan;

/* Cores per host thread a folded grid uses at most (plan_geometry). */
#define MM_CORES_PER_THREAD 4

static uint32_t tiles_of(uint32_t n) {
    return (n + 31) / 32;
}

uint64_t nn_group_tiles(const nn_mm_groups *g, uint32_t n) {
    uint32_t kt = tiles_of(g->k), nt = tiles_of(n), lo, hi;
    uint64_t t = 0;
    for (uint32_t k = 0; k < kt; k++) {
        nn_group_span(k, g->c, g->cg, g->ocg, nt, &lo, &hi);
        t += hi - lo + 1;
    }
    return t;
}

float *nn_group_compact(const nn_mm_groups *g, uint32_t n, const float *m) {
    uint32_t kt = tiles_of(g->k), nt = tiles_of(n), lo, hi;
    float *out = calloc(nn_group_tiles(g, n) * 1024, sizeof *out);
    if (!out) return NULL;
    float *t = out;
    for (uint32_t k = 0; k < kt; k++) {
        nn_group_span(k, g->c, g->cg, g->ocg, nt, &lo, &hi);
        for (uint32_t j = lo; j <= hi; j++, t += 1024)
            for (uint32_t r = 0; r < 32 && k * 32 + r < g->k; r++)
                for (uint32_t q = 0; q < 32 && j * 32 + q < n; q++)
                    t[r * 32 + q] = m[(uint64_t)(k * 32 + r) * n + j * 32 + q];
    }
    return out;
}

/* The batch dims of `s` (all but the last two; none for rank < 3). */
static uint32_t batch_rank(const lmnn_shape *s) {
    return s->rank > 2 ? s->rank - 2 : 0;
}

/* Checks the operands' shapes and works out the result's. */
static lm_status plan_shapes(const char *op, const char *an, const char *bn, mm_plan *p) {
    const lmnn_shape *as = &p->a->shape, *bs = &p->b_shape;
    char s1[128], s2[128];
    if (as->rank == 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected rank >= 1, given a rank-0 tensor",
                       an);
    if (bs->rank == 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected rank >= 1, given a rank-0 tensor",
                       bn);
    if (p->ta && as->rank < 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "transpose_a: expected %s of rank >= 2, given shape %s", an,
                       nn_shape_str(as, s1, sizeof s1));
    if (p->tb && bs->rank < 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "transpose_b: expected %s of rank >= 2, given shape %s", bn,
                       nn_shape_str(bs, s1, sizeof s1));
    if (bs->rank == 1 && as->rank >= 2)
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s: a rank-1 %s (shape %s) with %s of shape %s is not supported; give %s "
                       "as [K, 1]",
                       bn, bn, nn_shape_str(bs, s1, sizeof s1), an, nn_shape_str(as, s2, sizeof s2),
                       bn);
    if (as->rank == 1 && bs->rank > 2)
        return nn_fail(LM_ERR_UNSUPPORTED, op,
                       "%s: a rank-1 %s (shape %s) with a batched %s of shape %s is not "
                       "supported; give %s as [1, K]",
                       an, an, nn_shape_str(as, s1, sizeof s1), bn, nn_shape_str(bs, s2, sizeof s2),
                       an);
    /* The matrices: a rank-1 a is the row [1, K]; a rank-1 b is stored as the
     * row [1, K], i.e. the column it stands for, transposed. */
    uint32_t ar = as->rank, br = bs->rank;
    uint32_t a_rows = ar >= 2 ? as->dims[ar - 2] : 1, a_cols = as->dims[ar - 1];
    uint32_t b_rows = br >= 2 ? bs->dims[br - 2] : 1, b_cols = bs->dims[br - 1];
    if (br == 1) p->tb = true;
    uint32_t m = p->ta ? a_cols : a_rows, ka = p->ta ? a_rows : a_cols;
    uint32_t kb = p->tb ? b_cols : b_rows, n = p->tb ? b_rows : b_cols;
    if (ka != kb)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%s: inner dim %u of shape %s%s does not match %s's inner dim %u of shape "
                       "%s%s",
                       bn, kb, nn_shape_str(bs, s1, sizeof s1),
                       p->tb && br >= 2 ? " (transposed)" : "", an, ka,
                       nn_shape_str(as, s2, sizeof s2), p->ta ? " (transposed)" : "");
    p->m = m;
    p->n = n;
    p->mt = tiles_of(m);
    p->kt = tiles_of(ka);
    p->nt = tiles_of(n);

    /* Batch dims, right-aligned, broadcast NumPy-style. */
    uint32_t abr = batch_rank(as), bbr = batch_rank(bs), nd = abr > bbr ? abr : bbr;
    lmnn_shape *o = &p->out_shape;
    o->rank = 0;
    uint64_t a_stride = 1, b_stride = 1;
    p->matrices = 1;
    p->nd = 0;
    uint32_t od[LMNN_MAX_DIMS], ast[LMNN_MAX_DIMS], bst[LMNN_MAX_DIMS];
    for (uint32_t d = nd; d-- > 0;) { /* innermost first, for the strides */
        uint32_t ad = d + abr >= nd ? as->dims[d + abr - nd] : 1;
        uint32_t bd = d + bbr >= nd ? bs->dims[d + bbr - nd] : 1;
        if (ad != bd && ad != 1 && bd != 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "%s: batch dims of shape %s do not broadcast with %s's shape %s", bn,
                           nn_shape_str(bs, s1, sizeof s1), an, nn_shape_str(as, s2, sizeof s2));
        od[d] = ad > bd ? ad : bd;
        ast[d] = ad == 1 ? 0 : (uint32_t)a_stride;
        bst[d] = bd == 1 ? 0 : (uint32_t)b_stride;
        a_stride *= ad;
        b_stride *= bd;
        p->matrices *= od[d];
    }
    for (uint32_t d = 0; d < nd; d++) {
        o->dims[o->rank++] = od[d];
        if (od[d] == 1) continue; /* size-1 dims change no index */
        p->od[p->nd] = od[d];
        p->as[p->nd] = ast[d];
        p->bs[p->nd] = bst[d];
        p->nd++;
    }
    if (ar >= 2) o->dims[o->rank++] = m;
    if (br >= 2) o->dims[o->rank++] = n;
    p->b_shared = b_stride == 1;
    if (p->matrices * p->mt > UINT32_MAX / 64 || (uint64_t)p->mt * p->kt > UINT32_MAX / 64 ||
        (uint64_t)p->kt * p->nt > UINT32_MAX / 64)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s %s and %s %s: too many tiles", an,
                       nn_shape_str(as, s2, sizeof s2), bn, nn_shape_str(bs, s1, sizeof s1));
    return LM_OK;
}

/* Block sizes, the core rectangle and the steps (see the top of the file). */
typedef struct mm_geometry {
    uint32_t rows, mbg, nbk, mbk, mb, nb, kb, gx, gy, si, sj;
    bool keep_a, keep_b;
    /* The gx x gy grid the kernels see is the device's rectangle (x, y) ->
     * core (x, y), or, folded, laid over the device's cores row by row:
     * (x, y) -> the core numbered y * gx + x. */
    bool folded;
    uint32_t grid_x;
} mm_geometry;

static lm_status plan_geometry(const char *op, const mm_plan *p, lm_device *device,
                               mm_geometry *g) {
    lm_device_info info;
    lm_status st = lm_device_get_info(device, &info);
    if (st) return nn_fail_call(st, op);
    uint32_t cap = (p->fp32 ? 8 : 16) - (p->ta ? 1 : 0);
    g->rows = p->b_shared ? (uint32_t)p->matrices * p->mt : p->mt;
    uint32_t groups = p->b_shared ? 1 : (uint32_t)p->matrices;
    /* The block in dst: as square as dst allows, then as tall (a B tile,
     * slow to unpack as bfloat8_b weights, serves every row). Measured on the
     * simulator with an 8-tile dst: two such blocks side by side, taking dst
     * in turn with their partial sums parked in float32 between K blocks,
     * unpack a third fewer tiles but run no faster. */
    uint32_t nb = 1;
    while ((nb + 1) * (nb + 1) <= cap)
        nb++;
    if (nb > p->nt) nb = p->nt;
    g->mb = cap / nb < g->rows ? cap / nb : g->rows;
    g->nb = cap / g->mb < p->nt ? cap / g->mb : p->nt;
    uint32_t ta = (uint32_t)lm_tile_size(nn_tile_format(p->a->dtype));
    uint32_t tb = (uint32_t)lm_tile_size(nn_tile_format(p->b->dtype));
    /* The other circular buffers at their largest (blocks of at most 16
     * tiles of at most 4 KiB): output (two blocks), activation, ones, bias. */
    uint64_t fixed = (2 * 16 + 16 + 1 + 2 * 16) * 4096;
    /* K blocks as long as the circular buffers fit, double-buffered. */
    g->kb = p->kt < 8 ? p->kt : 8;
    while (g->kb > 1 &&
           fixed + 2 * g->kb * (g->mb * ta + g->nb * tb) + (p->ta ? g->mb * g->kb * 4096 : 0) >
               CB_BUDGET)
        g->kb--;
    g->mbg = (g->rows + g->mb - 1) / g->mb;
    g->nbk = (p->nt + g->nb - 1) / g->nb;
    g->mbk = groups * g->mbg;
    g->gy = g->mbk < info.grid_y ? g->mbk : info.grid_y;
    g->gx = g->nbk < info.grid_x ? g->nbk : info.grid_x;
    g->grid_x = info.grid_x;
    g->folded = false;
    uint32_t cores = info.grid_x * info.grid_y;
    if (!p->mcast && g->gx * g->gy < cores && g->gx * g->gy < g->mbk * g->nbk) {
        /* A narrow (or short) output leaves most of the rectangle idle: fold
         * the grid over all the cores instead, with the block height that
         * finishes first (the tallest such: each block's B tiles serve all
         * its rows). Multicast needs the rectangle: its rows and columns of
         * cores share panels.
         *
         * A block costs, per K tile, its Mb * Nb tile products and the
         * Mb + Nb tiles it reads. The cores run on the host's threads: the
         * time is the busiest core's blocks or all the blocks spread over
         * the threads, whichever is longer. With few threads, taller blocks
         * win (fewer B panels read and unpacked in all); with a thread per
         * core, the busiest core's share decides. */
        uint32_t threads = info.num_threads ? info.num_threads : 1;
        /* Every core used costs a fixed start (its three kernels) whatever
         * its share, so the fold stops at a few cores per thread: measured
         * on a [12544, 32] x [32, 32] product with 2 threads, 8 cores take
         * 0.70 ms where 64 take 0.80. */
        if (cores > threads * MM_CORES_PER_THREAD) cores = threads * MM_CORES_PER_THREAD;
        uint32_t best = g->mb;
        uint64_t best_cost = UINT64_MAX;
        for (uint32_t mb = g->mb; mb >= 1; mb--) {
            uint64_t blocks = (uint64_t)groups * ((g->rows + mb - 1) / mb) * g->nbk;
            uint64_t block = (uint64_t)mb * g->nb + mb + g->nb;
            uint64_t busiest = (blocks + cores - 1) / cores * block;
            uint64_t spread = (blocks * block + threads - 1) / threads;
            uint64_t cost = busiest > spread ? busiest : spread;
            if (cost < best_cost) best = mb, best_cost = cost;
        }
        g->mb = best;
        g->mbg = (g->rows + g->mb - 1) / g->mb;
        g->mbk = groups * g->mbg;
        g->folded = true;
        g->gx = g->nbk < cores ? g->nbk : cores;
        g->gy = g->mbk < cores / g->gx ? g->mbk : cores / g->gx;
    }
    g->si = (g->mbk + g->gy - 1) / g->gy;
    g->sj = (g->nbk + g->gx - 1) / g->gx;
    /* A core with several steps along a row of blocks reads their A row
     * panel once and keeps it, when it fits (not with multicast, whose rows
     * of cores move in step; not with transpose_a). */
    uint32_t kblocks = (p->kt + g->kb - 1) / g->kb;
    g->keep_a =
        !p->mcast && !p->ta && g->sj > 1 &&
        fixed + (uint64_t)kblocks * g->kb * g->mb * ta + 2 * g->kb * g->nb * tb <= CB_BUDGET;
    /* Likewise a core with several steps down one column of blocks keeps
     * all of one B (instead of reading its panel at every step). */
    g->keep_b = !p->mcast && p->b_shared && g->nbk == 1 && g->si > 1 &&
                fixed + 2 * (uint64_t)g->kb * g->mb * ta + (uint64_t)kblocks * g->kb * g->nb * tb <=
                    CB_BUDGET;
    return LM_OK;
}

/* L1 a gathered product's circular buffers leave to tensors: of all that
 * the runtime does not reserve, and of what is free now (the program is
 * cached, and later tensors, e.g. sharded activations, take L1 too). */
#define GATHER_L1_SPARE (320u * 1024u)
#define GATHER_L1_SPARE_NOW (64u * 1024u)

/* The geometry of a gathered product (nn_linear_gathered): blocks of one
 * tile row and all of K and N, so that each gathered row is tilized once
 * and meets all of B, which each core keeps; the block rows dealt over the
 * folded grid. False when that does not fit (`free`: the bytes of L1 the
 * circular buffers may take at most). */
static bool plan_gathered(const mm_plan *p, const nn_mm_gather *ga, const lm_device_info *info,
                          uint64_t free, mm_geometry *g) {
    /* dst holds the output's columns; with a pooling, one product's
     * columns beside the max of those before (matmul_compute.c's
     * pool_step). */
    uint32_t cap = p->fp32 ? 8 : 16,
             cols = p->pool_rows * p->pool_groups > 1 ? p->nt_out + p->nt : p->nt;
    if (p->ta || p->tb || p->mcast || !p->b_shared || p->matrices != 1 || cols > cap) return false;
    uint64_t ta = lm_tile_size(nn_tile_format(p->a->dtype));
    uint64_t tb = lm_tile_size(nn_tile_format(p->b->dtype));
    /* A tile row as gathered and tilized (one each, one a window row of a
     * pooling: the compute tilizes what it multiplies, and a core's
     * kernels take turns on one host
     * thread), all of B, two output blocks, the activation's, the
     * untilize's and two of the bias (six blocks of at most 4 KiB tiles),
     * the ones (three bfloat16 tiles), the zeros. */
    uint64_t l1 = ga->l1_bytes + (uint64_t)p->kt * p->pool_rows * (ga->rows_page + ta) +
                  (uint64_t)p->kt * p->nt * tb + 6 * (uint64_t)p->nt * 4096 + 3 * 2048 +
                  ZEROS_BYTES;
    uint64_t all = info->l1_size - info->l1_unreserved_base;
    if (all < GATHER_L1_SPARE || l1 > all - GATHER_L1_SPARE || free < GATHER_L1_SPARE_NOW ||
        l1 > free - GATHER_L1_SPARE_NOW)
        return false;
    uint32_t threads = info->num_threads ? info->num_threads : 1;
    uint32_t cores = info->grid_x * info->grid_y;
    if (cores > threads * MM_CORES_PER_THREAD) cores = threads * MM_CORES_PER_THREAD;
    *g = (mm_geometry){.rows = p->mt,
                       .mbg = p->mt,
                       .nbk = 1,
                       .mbk = p->mt,
                       .mb = 1,
                       .nb = p->nt,
                       .kb = p->kt,
                       .gx = 1,
                       .sj = 1,
                       .keep_b = true,
                       .folded = true,
                       .grid_x = info->grid_x};
    g->gy = p->mt < cores ? p->mt : cores;
    g->si = (p->mt + g->gy - 1) / g->gy;
    return true;
}

/* The program of plan p with geometry g; with `ga`, A gathered by its
 * reader (nn_linear_gathered) instead of read by matmul_reader.c. */
static lm_status build(const char *op, const mm_plan *p, const mm_geometry *g, nn_tensor *o,
                       const nn_mm_gather *ga, lm_device *device, nn_program *prog) {
    lm_data_format fa = nn_tile_format(p->a->dtype), fb = nn_tile_format(p->b->dtype);
    lm_data_format fo = nn_tile_format(o->dtype);
    lm_data_format facc = p->fp32 ? LM_DATA_FORMAT_FLOAT32 : LM_DATA_FORMAT_FLOAT16_B;
    uint32_t args[ARG_MAX] = {0};
    args[ARG_MT] = p->mt;
    args[ARG_KT] = p->kt;
    args[ARG_NT] = p->nt;
    args[ARG_ROWS] = g->rows;
    args[ARG_MBG] = g->mbg;
    args[ARG_NBK] = g->nbk;
    args[ARG_MBK] = g->mbk;
    args[ARG_MB] = g->mb;
    args[ARG_NB] = g->nb;
    args[ARG_KB] = g->kb;
    args[ARG_GX] = g->gx;
    args[ARG_GY] = g->gy;
    args[ARG_SI] = g->si;
    args[ARG_SJ] = g->sj;
    args[ARG_MLAST] = p->m - 32 * (p->mt - 1);
    args[ARG_NLAST] = p->n_out - 32 * (p->nt_out - 1);
    uint32_t flags = (p->mcast && g->gx > 1 ? MM_MCAST_A : 0) |
                     (p->mcast && g->gy > 1 && p->b_shared ? MM_MCAST_B : 0) |
                     (p->bias ? MM_BIAS : 0) | (p->ta ? MM_TA : 0) | (p->tb ? MM_TB : 0) |
                     (p->a->memory.type == LM_BUFFER_DRAM ? MM_A_DRAM : 0) |
                     (p->b->memory.type == LM_BUFFER_DRAM ? MM_B_DRAM : 0) |
                     (p->groups.k ? MM_COMPACT_B : 0) |
                     (o->memory.type == LM_BUFFER_DRAM ? MM_OUT_DRAM : 0) |
                     (p->bias && p->bias->memory.type == LM_BUFFER_DRAM ? MM_BIAS_DRAM : 0) |
                     ((p->m % 32 || p->n_out % 32) && !p->raw_padding ? MM_ZERO_PAD : 0) |
                     (g->keep_a ? MM_KEEP_A : 0) | (g->keep_b ? MM_KEEP_B : 0) |
                     (ga && ga->rm_len ? MM_RM_OUT : 0) |
                     (p->act && nn_unary_in_place(p->act_op) ? MM_ACT_IN_PLACE : 0);
    args[ARG_FLAGS] = flags;
    args[ARG_OUT_FMT] = (uint32_t)fo;
    args[ARG_ND] = p->nd;
    for (uint32_t i = 0; i < NN_UNARY_PARAMS; i++)
        args[ARG_ACT + i] = p->act_params[i];
    args[ARG_ACT_OP] = (uint32_t)p->act_op;
    args[ARG_GROUP_C] = p->groups.c;
    args[ARG_GROUP_CG] = p->groups.cg;
    args[ARG_GROUP_OCG] = p->groups.ocg;
    args[ARG_RM_LEN] = ga ? ga->rm_len : 0;
    args[ARG_POOL] = p->pool_rows | p->pool_groups << 16;
    for (uint32_t d = 0; d < p->nd; d++) {
        args[ARG_DIMS + 3 * d] = p->od[d];
        args[ARG_DIMS + 3 * d + 1] = p->as[d];
        args[ARG_DIMS + 3 * d + 2] = p->bs[d];
    }
    uint32_t nargs = ARG_MAX;

    lm_kernel_define defs[5];
    uint32_t ndefs = 0;
    /* Every activation's chain, chosen by nn_op at run time: one compiled
     * kernel whatever the activation. */
    if (p->act) {
        defs[ndefs++] = (lm_kernel_define){"NN_MM_ACT", nn_unary_fused_switch()};
        defs[ndefs++] = (lm_kernel_define){"NN_MM_ACT_AT", nn_unary_fused_switch_at()};
    }
    if (p->ta) defs[ndefs++] = (lm_kernel_define){"NN_MM_TA", "1"};
    if (ga) defs[ndefs++] = (lm_kernel_define){"NN_MM_GATHER", "1"};
    if (ga && ga->rm_len) defs[ndefs++] = (lm_kernel_define){"NN_MM_UNTILIZE", "1"};
    if (p->pool_rows > 1 || p->pool_groups > 1)
        defs[ndefs++] = (lm_kernel_define){"NN_MM_POOL", "1"};
    nn_kernel_spec reader = {"matmul_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
    if (ga) reader = ga->reader;
    nn_kernel_spec compute = {
        "matmul_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, defs, ndefs, p->fp32};
    nn_kernel_spec writer = {"matmul_writer.c", LM_PROCESSOR_DM1, NULL, 0, NULL, 0, false};
    uint32_t mb = g->mb, nb = g->nb, kb = g->kb;
    uint32_t used = g->gx * g->gy;
    if (!g->folded) {
        prog->cores = lm_core_range_set_of(0, 0, g->gx - 1, g->gy - 1);
    } else {
        /* Whole rows of the device, then what is left in the next one. */
        uint32_t rows = used / g->grid_x, rest = used % g->grid_x;
        prog->cores = rows ? lm_core_range_set_of(0, 0, g->grid_x - 1, rows - 1)
                           : lm_core_range_set_of(0, 0, rest - 1, 0);
        if (rows && rest) {
            lm_core_range_set last = lm_core_range_set_of(0, rows, rest - 1, rows);
            prog->cores.ranges[prog->cores.count++] = last.ranges[0];
        }
    }
    lm_status st = nn_program_begin(op, device, prog);
    uint32_t kblocks = (p->kt + kb - 1) / kb;
    /* (Gathered rows are tilized by the compute that reads them: one block
     * of A at a time.) */
    uint32_t a_pages = g->keep_a ? kblocks * mb * kb : ga ? mb * kb * p->pool_rows : 2 * mb * kb;
    uint32_t b_pages = g->keep_b ? kblocks * kb * nb : 2 * kb * nb;
    if (!st) st = nn_program_cb(op, prog, CB_A, fa, (uint32_t)lm_tile_size(fa), a_pages);
    if (!st) st = nn_program_cb(op, prog, CB_B, fb, (uint32_t)lm_tile_size(fb), b_pages);
    if (!st && ga)
        st = nn_program_cb(op, prog, NN_MM_CB_ROWS, ga->rows_format, ga->rows_page,
                           kb * p->pool_rows);
    if (!st && ga) st = ga->buffers(op, prog, ga->ctx);
    if (!st && ga && ga->rm_len) {
        /* Tiles packed, then untilized into row-major pages (Mb 1). */
        st = nn_program_cb(op, prog, CB_PACK, fo, (uint32_t)lm_tile_size(fo), nb);
        if (!st)
            st = nn_program_cb(op, prog, CB_OUT, fo, 32 * 32 * nn_rm_elem_size(o->dtype), 2 * nb);
    } else if (!st) {
        st = nn_program_cb(op, prog, CB_OUT, fo, (uint32_t)lm_tile_size(fo), 2 * mb * nb);
    }
    if (!st && p->act)
        st = nn_program_cb(op, prog, CB_INTERM, facc, (uint32_t)lm_tile_size(facc), mb * nb);
    if (!st && p->ta)
        st = nn_program_cb(op, prog, CB_AT, LM_DATA_FORMAT_FLOAT32,
                           (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT32), mb * kb);
    if (!st && (p->m % 32 || p->n_out % 32))
        st = nn_program_cb(op, prog, CB_ZEROS, LM_DATA_FORMAT_FLOAT32, ZEROS_BYTES, 1);
    if (!st && p->bias) {
        lm_data_format fbias = nn_tile_format(p->bias->dtype);
        st = nn_program_cb(op, prog, CB_ONES, LM_DATA_FORMAT_FLOAT16_B,
                           (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B), 3);
        if (!st)
            st = nn_program_cb(op, prog, CB_BIAS, fbias, (uint32_t)lm_tile_size(fbias), 2 * nb);
    }
    for (uint32_t i = 0; i < 4 && !st; i++) {
        uint32_t id;
        st = lm_create_semaphore(prog->program, &prog->cores, 0, &id);
        if (st) st = nn_fail_call(st, op);
        args[ARG_SEM + i] = id;
    }
    if (!st) st = nn_program_kernel(op, prog, &reader, NULL);
    if (!st) st = nn_program_kernel(op, prog, &compute, NULL);
    if (!st) st = nn_program_kernel(op, prog, &writer, NULL);
    /* A gathering reader's own args, each core's rows of A set in them. */
    uint32_t rargs[GATHER_ARGS_MAX];
    if (!st && ga && ga->nargs > GATHER_ARGS_MAX)
        st = nn_fail(LM_ERR_INTERNAL, op, "a gathering reader of %u args", ga->nargs);
    if (!st && ga) memcpy(rargs, ga->args, ga->nargs * sizeof rargs[0]);
    for (uint32_t k = 0; k < prog->kernel_count && !st; k++)
        for (uint32_t y = 0; y < g->gy && !st; y++)
            for (uint32_t x = 0; x < g->gx && !st; x++) {
                uint32_t n = y * g->gx + x;
                lm_core core =
                    g->folded ? (lm_core){n % g->grid_x, n / g->grid_x} : (lm_core){x, y};
                args[ARG_VX] = x;
                args[ARG_VY] = y;
                if (ga && k == 0) {
                    /* Block rows y, y + gy, ... of one tile row each. */
                    rargs[ga->first_arg] = y;
                    rargs[ga->count_arg] = (g->mbk - y + g->gy - 1) / g->gy;
                    rargs[ga->step_arg] = g->gy;
                    st = lm_set_runtime_args(prog->program, prog->kernels[k], core, rargs,
                                             ga->nargs);
                } else {
                    st = lm_set_runtime_args(prog->program, prog->kernels[k], core, args, nargs);
                }
                if (st) st = nn_fail_call(st, op);
            }
    if (st) nn_program_discard(prog);
    return st;
}

/* The common args each program last launched with (by program handle, which
 * is never reused), so that a hit on the same buffers (a model's loop, whose
 * outputs come back at the same addresses) only enqueues: a small
 * direct-mapped table, a miss just sets them again. */
#define MEMO_SLOTS 64
static pthread_mutex_t memo_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t program;
    uint32_t words[4];
} memo[MEMO_SLOTS];

/* Launches a cached program: the reader's common args are a's address, the
 * writer's b's, the output's and the bias's (the compute kernel has none). */
static lm_status launch(const char *op, const nn_program *prog, const mm_plan *p,
                        const nn_tensor *o) {
    uint32_t w[4] = {(uint32_t)p->a->address, (uint32_t)p->b->address, (uint32_t)o->address,
                     p->bias ? (uint32_t)p->bias->address : 0};
    uint64_t id = prog->program.id;
    size_t slot = (size_t)(id % MEMO_SLOTS);
    pthread_mutex_lock(&memo_mutex);
    bool same = memo[slot].program == id && !memcmp(memo[slot].words, w, sizeof w);
    pthread_mutex_unlock(&memo_mutex);
    lm_status st = LM_OK;
    if (!same) {
        st = lm_set_common_runtime_args(prog->program, prog->kernels[0], w, 1);
        if (!st)
            st =
                lm_set_common_runtime_args(prog->program, prog->kernels[2], w + 1, p->bias ? 3 : 2);
        if (st) return nn_fail_call(st, op);
        pthread_mutex_lock(&memo_mutex);
        memo[slot].program = id;
        memcpy(memo[slot].words, w, sizeof w);
        pthread_mutex_unlock(&memo_mutex);
    }
    st = lm_enqueue_program(lm_device_command_queue(p->a->device, 0), prog->program, false);
    return st ? nn_fail_call(st, op) : LM_OK;
}

/* matmul and linear: `an`, `bn` name the operands in messages;
 * `raw_padding`: see nn_linear_raw_padding. */
static lm_status matmul(const char *op, const char *an, const char *bn, lmnn_tensor a,
                        lmnn_tensor b, lmnn_tensor bias, const lmnn_matmul_options *opts,
                        bool raw_padding, const nn_mm_groups *groups, lmnn_tensor *out);

/* A batch of matrices whose rows leave their last tile row part empty, times
 * one b: each matrix's Mt tile rows are multiplied in full, so [197, 1, 768]
 * x [768, N] (a transformer's tokens, sequence first) does 197 tile rows of
 * products for 7 tile rows of data. Repacked as one [batch * M, K] matrix
 * (and the result unpacked) the products shrink to the rows' own tiles, for
 * two copies that move each row of a and of the result once per tile column.
 * Measured on the simulator, a tile product costs about as much as moving
 * PACK_ROWS_PER_PRODUCT such row pieces: repacking pays at [7, 7, 768] x
 * [768, 3072] (1.7x faster) and [197, 1, 768] x [768, 2304] (4x), and loses
 * at [56, 56, 96] x [96, 384] (1.5x slower), where it would save one tile row
 * in eight. The copies are two launches more, each worth about
 * PACK_LAUNCH_ROW_PIECES row pieces: a decoder step's [2, 1, 32] x [32, 32]
 * (one tile product saved) and [2, 1, 256] x [256, 256] run faster as they
 * are, [2, 1, 512] x [512, 512] and [16, 1, 128] x [128, 128] repacked. */
#define PACK_ROWS_PER_PRODUCT 6
#define PACK_LAUNCH_ROW_PIECES 256

static bool pack_pays(const mm_plan *p) {
    if (p->ta || !p->b_shared || p->matrices < 2 || p->raw_padding || p->b_shape.rank < 2 ||
        p->a->shape.rank < 3 || p->m % 32 == 0)
        return false;
    uint64_t rows = p->matrices * p->m, packed = (rows + 31) / 32;
    uint64_t saved = (p->matrices * p->mt - packed) * p->kt * p->nt;
    return saved * PACK_ROWS_PER_PRODUCT > rows * (p->kt + p->nt) + 2 * PACK_LAUNCH_ROW_PIECES;
}

static lm_status matmul_packed(const char *op, const char *an, const char *bn, lmnn_tensor a,
                               lmnn_tensor b, lmnn_tensor bias, const lmnn_matmul_options *opts,
                               const mm_plan *p, lmnn_tensor *out) {
    const lmnn_shape *as = &p->a->shape;
    lmnn_shape flat = LMNN_SHAPE((uint32_t)(p->matrices * p->m), as->dims[as->rank - 1]);
    /* The packed operand and product live in DRAM, whatever memory a is in
     * or the result goes to (a reshape may not keep a sharding). */
    lmnn_output dram = {.memory = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED}};
    lmnn_tensor fa, fr;
    lm_status st = lmnn_reshape(a, &flat, &dram, &fa);
    if (st) return st;
    lmnn_matmul_options inner = *opts;
    inner.output.memory = dram.memory;
    st = matmul(op, an, bn, fa, b, bias, &inner, false, &p->groups, &fr);
    lmnn_tensor_free(fa);
    if (st) return st;
    lmnn_output o = {.memory = opts->output.memory};
    st = lmnn_reshape(fr, &p->out_shape, &o, out);
    lmnn_tensor_free(fr);
    return st;
}

/* Checks b, the bias and the options against p->a (set) and plans the
 * product in *p: the output's dtype to *out_dtype. */
static lm_status plan(const char *op, const char *an, const char *bn, lmnn_tensor b,
                      lmnn_tensor bias, const lmnn_matmul_options *opts, bool raw_padding,
                      const nn_mm_groups *groups, mm_plan *p, lmnn_dtype *out_dtype) {
    lm_status st = nn_get_tensor(op, bn, b, &p->b);
    if (!st) st = nn_check_same_device(op, bn, p->b, p->a);
    if (!st) st = nn_check_layout(op, bn, p->b, LMNN_TILE);
    if (!st) st = nn_check_float(op, bn, p->b);
    if (!st && bias.id) {
        st = nn_get_tensor(op, "bias", bias, &p->bias);
        if (!st) st = nn_check_same_device(op, "bias", p->bias, p->a);
        if (!st) st = nn_check_layout(op, "bias", p->bias, LMNN_TILE);
        if (!st) st = nn_check_float(op, "bias", p->bias);
    }
    if (st) return st;
    if (opts->fp32_accumulate > LMNN_FP32_ACC_OFF)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "fp32_accumulate: unknown value %d",
                       (int)opts->fp32_accumulate);
    if (opts->activation != LMNN_UNARY_INVALID) {
        lmnn_unary_options uo;
        lmnn_unary_options_init(&uo, opts->activation);
        if (!isnan(opts->activation_alpha)) uo.alpha = opts->activation_alpha;
        if (!isnan(opts->activation_beta)) uo.beta = opts->activation_beta;
        st = nn_unary_chain(op, "activation", opts->activation, uo.alpha, uo.beta, p->chain,
                            sizeof p->chain, p->act_params, &p->act_nonzero);
        if (st) return st;
        p->act = true;
        p->act_op = opts->activation;
    }
    p->raw_padding = raw_padding;
    p->ta = opts->transpose_a;
    p->tb = opts->transpose_b;
    p->mcast = opts->multicast;
    p->b_shape = p->b->shape;
    const nn_mm_groups *gr = groups && groups->c ? groups : NULL;
    if (gr && gr->k) {
        /* A compact B: the matrix it stands for (its tile count is checked
         * below, once the structure is). */
        if (!gr->cg || !gr->ocg)
            return nn_fail(LM_ERR_INTERNAL, op, "weight: not block-diagonal over groups");
        p->b_shape = LMNN_SHAPE(gr->k, gr->c / gr->cg * gr->ocg);
    }
    if ((st = plan_shapes(op, an, bn, p))) return st;
    if (gr) {
        /* (The conv's own weight: a wrong structure is an internal error.) */
        const lmnn_shape *bs = &p->b->shape;
        if (p->tb || p->ta || !gr->cg || !gr->ocg || gr->c % gr->cg || p->n % gr->ocg ||
            p->n / gr->ocg != gr->c / gr->cg ||
            (gr->k && (bs->rank != 3 || bs->dims[1] != 32 || bs->dims[2] != 32 ||
                       bs->dims[0] != nn_group_tiles(gr, p->n))))
            return nn_fail(LM_ERR_INTERNAL, op, "weight: not block-diagonal over groups");
        p->groups = *gr;
    }
    if (p->pool_rows > 1 || p->pool_groups > 1) {
        /* (The convolution's own product: a wrong structure is an internal
         * error.) */
        uint32_t pg = p->pool_groups;
        if (!p->pool_rows || !pg || p->nt % pg || tiles_of(p->n_out) != p->nt / pg || p->groups.c ||
            p->ta || p->tb || p->matrices != 1)
            return nn_fail(LM_ERR_INTERNAL, op,
                           "a fused pooling of %u rows and %u groups of %u columns does not fit "
                           "the product's %u columns",
                           p->pool_rows, pg, p->n_out, p->n);
        p->nt_out = p->nt / pg;
        p->out_shape = LMNN_SHAPE(p->m, p->n_out);
    } else {
        p->pool_rows = p->pool_groups = 1;
        p->n_out = p->n;
        p->nt_out = p->nt;
    }
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : p->a->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    if (p->bias) {
        const lmnn_shape *s = &p->bias->shape;
        bool ok = (s->rank == 1 && s->dims[0] == p->n_out) ||
                  (s->rank == 2 && s->dims[0] == 1 && s->dims[1] == p->n_out);
        char sb[128];
        if (!ok)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "bias: expected shape [%u] or [1, %u], given %s", p->n_out, p->n_out,
                           nn_shape_str(s, sb, sizeof sb));
    }
    p->fp32 = opts->fp32_accumulate == LMNN_FP32_ACC_ON ||
              (opts->fp32_accumulate == LMNN_FP32_ACC_DEFAULT &&
               (p->a->dtype == LMNN_FLOAT32 || p->b->dtype == LMNN_FLOAT32 ||
                dtype == LMNN_FLOAT32 || (p->bias && p->bias->dtype == LMNN_FLOAT32)));
    *out_dtype = dtype;
    return LM_OK;
}

/* Runs plan p into a new tensor of `dtype` (A gathered by `ga`'s reader
 * when not NULL, with geometry *gg). */
static lm_status run(const char *op, const mm_plan *p, const lmnn_matmul_options *opts,
                     lmnn_dtype dtype, const nn_mm_gather *ga, const mm_geometry *gg,
                     lmnn_tensor *out) {
    lmnn_tensor oh;
    nn_tensor *o;
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, p->a);
    bool rm = ga && ga->rm_len;
    lm_status st = nn_tensor_new(op, p->a->device, rm ? &ga->rm_shape : &p->out_shape, dtype,
                                 rm ? LMNN_ROW_MAJOR : LMNN_TILE, &memory, &oh, &o);
    if (st) return st;
    nn_key key;
    nn_key_init(&key, ga ? "matmul_gathered" : "matmul");
    nn_key_u32(&key, (uint32_t)p->ta | (uint32_t)p->tb << 1 | (uint32_t)p->fp32 << 2 |
                         (uint32_t)(p->bias != NULL) << 3 | (uint32_t)p->act << 4 |
                         (uint32_t)p->mcast << 5 | (uint32_t)p->raw_padding << 6);
    nn_key_add(&key, &p->groups, sizeof p->groups); /* runtime args */
    nn_key_u32(&key, (uint32_t)p->act_op);
    nn_key_add(&key, p->act_params, sizeof p->act_params); /* runtime args */
    nn_key_tensor(&key, p->a);
    nn_key_tensor(&key, p->b);
    nn_key_tensor(&key, o);
    if (p->bias) nn_key_tensor(&key, p->bias);
    if (ga) {
        nn_key_u32(&key, ga->rm_len);
        nn_key_u32(&key, p->pool_rows | p->pool_groups << 16);
        nn_key_add(&key, ga->args, ga->nargs * sizeof ga->args[0]);
        nn_key_tensor(&key, ga->source);
    }
    nn_program *prog = nn_cache_find(p->a->device, &key);
    if (!prog) {
        mm_geometry g = {0};
        nn_program np = {0};
        if (gg)
            g = *gg;
        else
            st = plan_geometry(op, p, p->a->device, &g);
        if (!st) st = build(op, p, &g, o, ga, p->a->device, &np);
        if (!st) st = nn_cache_add(op, p->a->device, &key, &np, &prog);
    }
    if (!st) st = launch(op, prog, p, o);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

static lm_status no_buffers(const char *op, nn_program *prog, const void *ctx) {
    (void)op, (void)prog, (void)ctx;
    return LM_OK;
}

/* A row-major A (at, handle a) gathered into the product's program: a
 * matrix [M, K] in interleaved pages of a row each, each tile row read and
 * tilized (into opts->input_dtype when set) where it is multiplied
 * (tilize_reader.c with NN_TILIZE_GATHER, the whole of K a unit), when the
 * product takes that form (nn_linear_gathered); else LM_OK with out->id 0.
 * `rows_out`: the product packed as row-major [M, N] rows. The output's
 * memory follows A's, as for a tile A. */
static lm_status gather_rows(const char *op, const char *an, const char *bn, nn_tensor *at,
                             lmnn_tensor b, lmnn_tensor bias, const lmnn_matmul_options *opts,
                             bool raw_padding, const nn_mm_groups *groups, bool rows_out,
                             lmnn_tensor *out) {
    const lmnn_shape *s = &at->shape;
    *out = (lmnn_tensor){0};
    uint32_t esize = nn_rm_elem_size(at->dtype);
    nn_tensor *bt = NULL;
    if (rows_out && nn_get_tensor(op, bn, b, &bt)) return LM_OK; /* refused by the product */
    if (s->rank == 2 && !opts->transpose_a && at->memory.layout == LM_BUFFER_INTERLEAVED &&
        at->page_size == s->dims[1] * esize) {
        uint32_t m = s->dims[0], k = s->dims[1];
        uint32_t ht = (m + 31) / 32, wt = (k + 31) / 32;
        /* first tile row, count, h, w, ht, wt, block (all of K), step */
        uint32_t args[8] = {0, 0, m, k, ht, wt, wt, 1};
        uint32_t cargs[3] = {at->memory.type == LM_BUFFER_DRAM, 0, esize};
        static const lm_kernel_define gather = {"NN_TILIZE_GATHER", "1"};
        nn_mm_gather ga = {
            .source = at,
            .dtype = opts->input_dtype ? opts->input_dtype : at->dtype,
            .m = m,
            .k = k,
            .rows_format =
                at->dtype == LMNN_FLOAT32 ? LM_DATA_FORMAT_FLOAT32 : nn_tile_format(at->dtype),
            .rows_page = 32 * 32 * esize,
            .reader = {"tilize_reader.c", LM_PROCESSOR_DM0, cargs, 3, &gather, 1, false},
            .args = args,
            .nargs = 8,
            .first_arg = 0,
            .count_arg = 1,
            .step_arg = 7,
            .buffers = no_buffers,
            .a_name = an,
            .b_name = bn,
        };
        if (rows_out) {
            ga.rm_len = bt->shape.dims[bt->shape.rank - 1];
            ga.rm_shape = LMNN_SHAPE(m, ga.rm_len);
        }
        lmnn_matmul_options o = *opts;
        o.output.memory = nn_output_memory(&opts->output.memory, at);
        return nn_linear_gathered(op, &ga, b, bias, &o, raw_padding, groups, out);
    }
    return LM_OK;
}

/* matmul of a row-major A (at, handle a): gathered into the product
 * (gather_rows) when it takes that form, else tilized first. */
static lm_status matmul_rows(const char *op, const char *an, const char *bn, lmnn_tensor a,
                             nn_tensor *at, lmnn_tensor b, lmnn_tensor bias,
                             const lmnn_matmul_options *opts, bool raw_padding,
                             const nn_mm_groups *groups, lmnn_tensor *out) {
    lm_status st = gather_rows(op, an, bn, at, b, bias, opts, raw_padding, groups, false, out);
    if (st || out->id) return st;
    lmnn_tensor tiled;
    if ((st = lmnn_to_layout(a, LMNN_TILE, &tiled))) return nn_fail_call(st, op);
    st = matmul(op, an, bn, tiled, b, bias, opts, raw_padding, groups, out);
    lmnn_tensor_free(tiled);
    return st;
}

/* The product in row-major rows (output_layout ROW_MAJOR): packed so by
 * the gathered product's own program when a is row-major and gathered,
 * else the tile product untilized. */
static lm_status matmul_to_rows(const char *op, const char *an, const char *bn, lmnn_tensor a,
                                lmnn_tensor b, lmnn_tensor bias, const lmnn_matmul_options *opts,
                                bool raw_padding, const nn_mm_groups *groups, lmnn_tensor *out) {
    lmnn_matmul_options o = *opts;
    o.output_layout = LMNN_TILE;
    nn_tensor *at;
    lm_status st = nn_get_tensor(op, an, a, &at);
    if (st) return st;
    lmnn_dtype dtype = opts->output.dtype  ? opts->output.dtype
                       : opts->input_dtype ? opts->input_dtype
                                           : at->dtype;
    if (dtype != LMNN_FLOAT32 && dtype != LMNN_BFLOAT16)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_layout: row_major needs a float32 or bfloat16 output, given %s",
                       lmnn_dtype_name(dtype));
    if (at->layout == LMNN_ROW_MAJOR && nn_dtype_is_float(at->dtype) &&
        ((st = gather_rows(op, an, bn, at, b, bias, &o, raw_padding, groups, true, out)) ||
         out->id))
        return st;
    lmnn_tensor t;
    if ((st = matmul(op, an, bn, a, b, bias, &o, raw_padding, groups, &t))) return st;
    st = lmnn_to_layout(t, LMNN_ROW_MAJOR, out);
    lmnn_tensor_free(t);
    return st ? nn_fail_call(st, op) : LM_OK;
}

static lm_status matmul(const char *op, const char *an, const char *bn, lmnn_tensor a,
                        lmnn_tensor b, lmnn_tensor bias, const lmnn_matmul_options *opts,
                        bool raw_padding, const nn_mm_groups *groups, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_matmul_options defaults;
    if (!opts) {
        lmnn_matmul_options_init(&defaults);
        opts = &defaults;
    }
    if (opts->output_layout == LMNN_ROW_MAJOR)
        return matmul_to_rows(op, an, bn, a, b, bias, opts, raw_padding, groups, out);
    if (opts->output_layout && opts->output_layout != LMNN_TILE)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "output_layout: unknown layout %d",
                       (int)opts->output_layout);
    mm_plan p = {0};
    lmnn_dtype dtype;
    lm_status st = nn_get_tensor(op, an, a, &p.a);
    if (!st) st = nn_check_float(op, an, p.a);
    lmnn_dtype cast = opts->input_dtype;
    char own[32];
    snprintf(own, sizeof own, "%s's own", an);
    if (!st && (st = nn_check_input_dtype(op, own, cast))) return st;
    if (!st && p.a->layout == LMNN_ROW_MAJOR)
        return matmul_rows(op, an, bn, a, p.a, b, bias, opts, raw_padding, groups, out);
    if (!st && cast && cast != p.a->dtype) {
        /* A tile a is typecast first (a row-major one is rounded as its
         * rows are tilized: matmul_rows). */
        lmnn_tensor t;
        if ((st = lmnn_typecast(a, cast, &t))) return nn_fail_call(st, op);
        lmnn_matmul_options o = *opts;
        o.input_dtype = 0;
        st = matmul(op, an, bn, t, b, bias, &o, raw_padding, groups, out);
        lmnn_tensor_free(t);
        return st;
    }
    if (!st) st = nn_check_layout(op, an, p.a, LMNN_TILE);
    if (!st) st = plan(op, an, bn, b, bias, opts, raw_padding, groups, &p, &dtype);
    if (st) return st;
    if (pack_pays(&p)) return matmul_packed(op, an, bn, a, b, bias, opts, &p, out);
    return run(op, &p, opts, dtype, NULL, NULL, out);
}

lm_status nn_linear_gathered(const char *op, const nn_mm_gather *ga, lmnn_tensor weight,
                             lmnn_tensor bias, const lmnn_matmul_options *opts, bool raw_padding,
                             const nn_mm_groups *groups, lmnn_tensor *out) {
    *out = (lmnn_tensor){0};
    /* A as the tensor it would be: [m, k] tiles in DRAM, where the patch
     * matrix goes (the output's memory follows it by default). */
    nn_tensor a = {.device = ga->source->device,
                   .address = ga->source->address,
                   .shape = LMNN_SHAPE(ga->m, ga->k),
                   .dtype = ga->dtype,
                   .layout = LMNN_TILE,
                   .memory = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED}};
    mm_plan p = {
        .a = &a, .pool_rows = ga->pool_rows, .pool_groups = ga->pool_groups, .n_out = ga->pool_n};
    lmnn_dtype dtype;
    lm_device_info info;
    mm_geometry g;
    lm_memory_stats l1;
    lm_status st = plan(op, ga->a_name ? ga->a_name : "input", ga->b_name ? ga->b_name : "weight",
                        weight, bias, opts, raw_padding, groups, &p, &dtype);
    if (!st && (st = lm_device_get_info(a.device, &info))) st = nn_fail_call(st, op);
    /* Buffers take L1 from the top: what is left below them, the largest
     * free block, is where circular buffers go. */
    if (!st && (st = lm_device_get_memory_stats(a.device, LM_BUFFER_L1, &l1)))
        st = nn_fail_call(st, op);
    if (st) return st;
    /* A row-major output: of a dtype with a row-major form, in pages of
     * whole rows or rows of whole pages. */
    bool rm_ok = !ga->rm_len || ((dtype == LMNN_FLOAT32 || dtype == LMNN_BFLOAT16) &&
                                 (ga->rm_len % p.n_out == 0 || p.n_out % ga->rm_len == 0));
    if (!rm_ok || !plan_gathered(&p, ga, &info, l1.largest_free_block_bytes, &g)) return LM_OK;
    return run(op, &p, opts, dtype, ga, &g, out);
}

lm_status lmnn_matmul(lmnn_tensor a, lmnn_tensor b, const lmnn_matmul_options *opts,
                      lmnn_tensor *out) {
    return matmul("lmnn_matmul", "a", "b", a, b, (lmnn_tensor){0}, opts, false, NULL, out);
}

lm_status lmnn_linear(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_matmul_options *opts, lmnn_tensor *out) {
    return matmul("lmnn_linear", "input", "weight", input, weight, bias, opts, false, NULL, out);
}

lm_status nn_linear_raw_padding(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_matmul_options *opts, lmnn_tensor *out) {
    return matmul("lmnn_linear", "input", "weight", input, weight, bias, opts, true, NULL, out);
}

lm_status nn_linear_grouped(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                            const lmnn_matmul_options *opts, bool raw_padding,
                            const nn_mm_groups *groups, lmnn_tensor *out) {
    return matmul("lmnn_linear", "input", "weight", input, weight, bias, opts, raw_padding, groups,
                  out);
}
