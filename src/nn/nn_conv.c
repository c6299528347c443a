/* Convolution: conv2d and conv_transpose2d as im2col on the device followed
 * by lmnn_linear (see lmnn_conv.h), and the pieces pooling shares with them
 * (nn_conv.h). When the weight and a tile row of patches fit in L1 the two
 * are one program (conv_product) and the patch matrix is never stored. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_conv.h"

/* Column blocks of the patch matrix per unit of work, as tilize's. */
#define IM2COL_BLOCK 32
/* Bytes of L1 the im2col reader may stage input pixels in: a 16x16 patch
 * stem of 224-pixel lines stages 48 lines of 2.6 KiB, a 9x9 convolution of
 * 32 channels packing 8 output pixels a patch row 12 lines of 12 KiB (the
 * circular buffers around it take at most 0.5 MiB of L1). */
#define IM2COL_STAGE_BUDGET (256u << 10)
/* Input lines it may stage whole (conv_im2col_reader.c's STAGE_LINES). */
#define IM2COL_STAGE_LINES 64u
#define POOL_TAPS_BUDGET (512u * 1024u)
/* Column tiles of a depthwise convolution's unit (NN_PATCH_DEPTHWISE). */
#define DEPTHWISE_BLOCK 16
/* Tiles depthwise_compute.c holds in dst at once (float32: 8). */
#define DEPTHWISE_GROUP 8
/* Bytes of L1 a depthwise unit's tilized taps and their weights may take:
 * the more taps at once, the fewer times the sums leave dst. */
#define DEPTHWISE_TAPS_BUDGET (512u * 1024u)
/* Column tiles of a unit of the phase interleave (phase_finish), as
 * tilize's. */
#define PHASE_BLOCK 8
/* Cores per host thread the im2col program uses at most (see fewer_cores). */
#ifndef IM2COL_CORES_PER_THREAD
#define IM2COL_CORES_PER_THREAD 2
#endif

void lmnn_conv2d_options_init(lmnn_conv2d_options *opts) {
    if (!opts) return;
    *opts = (lmnn_conv2d_options){0};
    opts->stride[0] = opts->stride[1] = 1;
    opts->dilation[0] = opts->dilation[1] = 1;
    opts->groups = 1;
    opts->activation_alpha = NAN;
    opts->activation_beta = NAN;
}

/* ---- shared with pooling ---- */

void nn_conv_geom_2d(nn_conv_geom *g) {
    g->sp = 2;
    g->d = g->od = g->kd = 1;
    g->sd = g->dd = g->ud = 1;
    g->pd = 0;
}

lm_status nn_conv_flat_3d(const char *op, lmnn_image_layout layout, const int32_t *dims,
                          int32_t *out_n, int32_t *out_h, int32_t *out_w) {
    *out_n = *out_h = *out_w = 0;
    if (!dims[0] && !dims[1] && !dims[2] && !dims[3]) return LM_OK;
    if (layout != LMNN_NHWC)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "batch_size, input_depth, input_height, input_width: expected input_layout "
                       "NHWC (a flat volume), given NCHW");
    if (dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[3] < 1 ||
        (int64_t)dims[0] * dims[1] > INT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "batch_size, input_depth, input_height, input_width: expected all >= 1 "
                       "(N * D below 2^31), given (%d, %d, %d, %d)",
                       dims[0], dims[1], dims[2], dims[3]);
    *out_n = dims[0] * dims[1];
    *out_h = dims[2];
    *out_w = dims[3];
    return LM_OK;
}

lm_status nn_conv_image_dims(const char *op, const nn_tensor *x, lmnn_image_layout layout,
                             const int32_t *flat, uint32_t *n, uint32_t *c, uint32_t *d,
                             uint32_t *h, uint32_t *w) {
    char s[128];
    if (d) *d = 1;
    if (layout != LMNN_NCHW && layout != LMNN_NHWC)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "input_layout: unknown layout %d", (int)layout);
    if (flat && (flat[0] || flat[1] || flat[2])) {
        if (layout != LMNN_NHWC)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "batch_size, input_height, input_width: expected input_layout NHWC "
                           "(a flat image), given NCHW");
        if (flat[0] < 1 || flat[1] < 1 || flat[2] < 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "batch_size, input_height, input_width: expected all >= 1, given "
                           "(%d, %d, %d)",
                           flat[0], flat[1], flat[2]);
        uint64_t rows = 1, want = (uint64_t)flat[0] * (uint64_t)flat[1] * (uint64_t)flat[2];
        for (uint32_t i = 0; i + 1 < x->shape.rank; i++)
            rows *= x->shape.dims[i];
        uint32_t last = x->shape.rank ? x->shape.dims[x->shape.rank - 1] : 0;
        /* A page per pixel, or per image row ([N * H, W * C]). */
        bool image_rows =
            rows != want && rows * (uint64_t)flat[2] == want && last % (uint32_t)flat[2] == 0;
        if (x->shape.rank < 2 || (rows != want && !image_rows))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "input: shape %s does not hold a flat image of %d x %d x %d pixels "
                           "(expected [..., C] with N * H * W = %llu rows, or [..., W * C] with "
                           "N * H = %llu)",
                           nn_shape_str(&x->shape, s, sizeof s), flat[0], flat[1], flat[2],
                           (unsigned long long)want,
                           (unsigned long long)((uint64_t)flat[0] * (uint64_t)flat[1]));
        *n = (uint32_t)flat[0];
        *h = (uint32_t)flat[1];
        *w = (uint32_t)flat[2];
        *c = image_rows ? last / (uint32_t)flat[2] : last;
        return LM_OK;
    }
    const uint32_t *dim = x->shape.dims;
    if (d && x->shape.rank == 5) {
        *n = dim[0];
        *c = layout == LMNN_NCHW ? dim[1] : dim[4];
        *d = layout == LMNN_NCHW ? dim[2] : dim[1];
        *h = layout == LMNN_NCHW ? dim[3] : dim[2];
        *w = layout == LMNN_NCHW ? dim[4] : dim[3];
        return LM_OK;
    }
    if (x->shape.rank != 4)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "input: expected rank 4 (%s), given shape %s",
                       layout == LMNN_NCHW ? "N, C, H, W" : "N, H, W, C",
                       nn_shape_str(&x->shape, s, sizeof s));
    *n = dim[0];
    *c = layout == LMNN_NCHW ? dim[1] : dim[3];
    *h = layout == LMNN_NCHW ? dim[2] : dim[1];
    *w = layout == LMNN_NCHW ? dim[3] : dim[2];
    return LM_OK;
}

static uint64_t tiles32(uint64_t n) {
    return (n + 31) / 32;
}

/* Frees `t` unless it is `keep` or zero. */
static void drop(lmnn_tensor t, lmnn_tensor keep) {
    if (t.id && t.id != keep.id) lmnn_tensor_free(t);
}

/* Replaces *cur by step's result `next` (freeing *cur unless it is `keep`). */
static lm_status step(const char *op, lm_status st, lmnn_tensor *cur, lmnn_tensor next,
                      lmnn_tensor keep) {
    if (st) return nn_fail_call(st, op);
    drop(*cur, keep);
    *cur = next;
    return LM_OK;
}

lm_status nn_conv_rows(const char *op, lmnn_tensor xh, nn_tensor *x, lmnn_image_layout layout,
                       const int32_t *flat, bool planes, lmnn_tensor *out, nn_tensor **out_t) {
    uint32_t n = 0, c = 0, d = 1, h = 0, w = 0;
    lm_status st = nn_conv_image_dims(op, x, layout, flat, &n, &c, &d, &h, &w);
    if (st) return st;
    h *= d; /* a 3-D image's rows are its images' rows in turn */
    lmnn_tensor cur = xh, next;
    if (x->dtype == LMNN_BFLOAT8_B)
        st = step(op, lmnn_typecast(cur, LMNN_BFLOAT16, &next), &cur, next, xh);
    if (layout == LMNN_NCHW && (c == 1 || planes)) {
        /* One channel: NCHW is NHWC, and a row-major page is an image row
         * (nn_conv_im2col reads a run of pixels with one read). With planes
         * a page is a row of one channel, which the reader interleaves. */
        if (!st && (x->layout == LMNN_TILE || cur.id != xh.id))
            st = step(op, lmnn_to_layout(cur, LMNN_ROW_MAJOR, &next), &cur, next, xh);
    } else if (!st && (x->layout == LMNN_TILE || cur.id != xh.id || layout == LMNN_NCHW)) {
        nn_tensor *t = x;
        if (layout == LMNN_NCHW) {
            /* [N, C, H * W] transposed tile by tile to [N, H * W, C], then
             * on as an NHWC tile image. */
            lmnn_shape chw = LMNN_SHAPE(n, c, h * w);
            if (!st && x->layout == LMNN_ROW_MAJOR)
                st = step(op, lmnn_to_layout(cur, LMNN_TILE, &next), &cur, next, xh);
            if (!st) st = step(op, lmnn_reshape(cur, &chw, NULL, &next), &cur, next, xh);
            if (!st) st = step(op, lmnn_transpose(cur, -1, -2, NULL, &next), &cur, next, xh);
            if (!st) st = nn_get_tensor(op, "input", cur, &t);
        }
        /* A tile image [..., N * H * W, C] untilizes straight into a page
         * per image row, [N * H, W * C], the form the patch reader takes a
         * row of pixels from with one read (a page per pixel costs a read
         * per pixel). */
        nn_tensor *o;
        uint32_t last = t->shape.dims[t->shape.rank - 1];
        if (!st && t->layout == LMNN_TILE && last == c && w > 1 &&
            t->memory.layout == LM_BUFFER_INTERLEAVED &&
            !(st = nn_get_tensor(op, "input", cur, &t))) {
            lmnn_shape rows = LMNN_SHAPE(n * h, w * c);
            st = nn_tensor_new(op, t->device, &rows, t->dtype, LMNN_ROW_MAJOR, &t->memory, &next,
                               &o);
            if (!st && (st = nn_untilize(op, t, o))) nn_tensor_discard(next);
            if (!st) st = step(op, LM_OK, &cur, next, xh);
        } else if (!st) {
            st = step(op, lmnn_to_layout(cur, LMNN_ROW_MAJOR, &next), &cur, next, xh);
        }
    }
    if (!st) st = nn_get_tensor(op, "input", cur, out_t);
    if (st) {
        drop(cur, xh);
        return st;
    }
    *out = cur;
    return LM_OK;
}

/* The simulator runs the cores on the host's threads, and every core the
 * program uses costs a fixed start (its three kernels) whatever its share:
 * beyond a few cores per thread (enough to keep the threads even when the
 * units' costs differ, e.g. at padding) more cores only add that cost.
 * Regroups `split`'s units, in order, over at most that many cores (two
 * per thread measured best on the conv benchmark, against one and four). */
static lm_status fewer_cores(const char *op, lm_device *device, nn_split *split) {
    lm_device_info info;
    lm_status st = lm_device_get_info(device, &info);
    if (st) return nn_fail_call(st, op);
    uint32_t max = (info.num_threads ? info.num_threads : 1) * IM2COL_CORES_PER_THREAD;
    if (split->num_cores <= max) return LM_OK;
    uint32_t units = 0;
    for (uint32_t i = 0; i < split->num_cores; i++)
        units += split->count[i];
    uint32_t base = units / max, extra = units % max, first = 0;
    split->num_cores = max;
    for (uint32_t i = 0; i < max; i++) {
        split->cores[i] = (lm_core){i % info.grid_x, i / info.grid_x};
        split->first[i] = first;
        split->count[i] = base + (i < extra);
        first += split->count[i];
    }
    uint32_t rows = max / info.grid_x, rest = max % info.grid_x;
    split->all.count = 0;
    if (rows)
        split->all.ranges[split->all.count++] =
            (lm_core_range){{0, 0}, {info.grid_x - 1, rows - 1}};
    if (rest) split->all.ranges[split->all.count++] = (lm_core_range){{0, rows}, {rest - 1, rows}};
    return LM_OK;
}

/* ---- staging whole input lines ----
 *
 * When a convolution's image has a page per image row, the reader keeps
 * whole input lines (rows of the image, zero padding beside them) in a ring
 * in L1: each line a unit of 32 patch rows reads is read from the image once,
 * and lines shared with the unit before it not again, instead of a run of
 * each line per output row (the runs are short when output rows are: a
 * packed first layer has 4 or 7 patch rows per output row). The reader
 * copies the patch rows out of the ring with one strided read per output row
 * and kernel row. */

/* Bytes of one staged line: the left padding, the (virtual) W pixels and
 * the right padding the patches read, rounded to 16 (the reader works it
 * out alike). */
static uint64_t staged_line_bytes(const nn_conv_geom *g, uint32_t page) {
    int64_t left = g->pl > 0 ? g->pl : 0, vw = ((int64_t)g->w - 1) * g->uw + 1;
    int64_t last = (int64_t)(g->ow - 1) * g->sw - g->pl + (int64_t)(g->kw - 1) * g->dw;
    int64_t right = last > vw - 1 ? last - (vw - 1) : 0;
    return ((uint64_t)(left + vw + right) * page + 15) / 16 * 16;
}

/* The input line kernel row kr (kz * kh + ky) of output image b reads when
 * its window's top row is y0, or -1 outside the image (as the reader's
 * line_of). */
static int64_t geom_line(const nn_conv_geom *g, uint64_t b, uint32_t kr, int64_t y0) {
    uint32_t kz = kr / g->kh;
    int64_t vy = y0 + (int64_t)(kr - kz * g->kh) * g->dh;
    int64_t vz = (int64_t)(b % g->od) * g->sd - g->pd + (int64_t)kz * g->dd;
    if (vy < 0 || vy > ((int64_t)g->h - 1) * g->uh || vy % g->uh) return -1;
    if (vz < 0 || vz > ((int64_t)g->d - 1) * g->ud || vz % g->ud) return -1;
    return ((int64_t)(b / g->od) * g->d + vz / g->ud) * g->h + vy / g->uh;
}

/* The ring's shape: a 2-D image's line l goes to slot l % lines; a 3-D
 * image's line (its image zz = l / H, its row y = l % H) to slot (zz % zs)
 * * hs + y % hs, lines = zs * hs: no two lines of one unit share a slot
 * when no unit reads lines more than zs images or hs rows apart (the lines
 * of a 3-D unit, KD images apart, would need a ring of more than 2H). */
typedef struct staged_ring {
    uint64_t lines, zs, hs;
} staged_ring;

/* The smallest ring for the m patch rows' units of 32. Which lines a unit
 * reads depends only on where in a batch entry it starts, which repeats
 * after OD * OH * OW / gcd(OD * OH * OW, 32) units: one period is enough. */
static staged_ring staged_ring_of(const nn_conv_geom *g, uint64_t m) {
    uint64_t per_image = (uint64_t)g->oh * g->ow, units = (m + 31) / 32;
    uint64_t per_entry = per_image * g->od;
    uint64_t period = per_entry / nn_gcd(per_entry, 32);
    staged_ring r = {0, 0, 0};
    bool flat = g->sp == 2;
    for (uint64_t u = 0; u < units && u < period; u++) {
        uint64_t row = u * 32, end = row + 32 < m ? row + 32 : m;
        /* The unit's lines (2-D), or its images and rows (3-D). */
        int64_t lo = INT64_MAX, hi = -1, ylo = INT64_MAX, yhi = -1;
        while (row < end) {
            uint64_t b = row / per_image, p = row % per_image, ox = p % g->ow;
            int64_t y0 = (int64_t)(p / g->ow) * g->sh - g->pt;
            for (uint32_t kr = 0; kr < g->kd * g->kh; kr++) {
                int64_t line = geom_line(g, b, kr, y0);
                if (line < 0) continue;
                int64_t at = flat ? line : line / g->h, y = line % g->h;
                lo = at < lo ? at : lo;
                hi = at > hi ? at : hi;
                ylo = y < ylo ? y : ylo;
                yhi = y > yhi ? y : yhi;
            }
            row += g->ow - ox < end - row ? g->ow - ox : end - row;
        }
        if (hi < lo) continue;
        if (flat && (uint64_t)(hi - lo + 1) > r.lines) r.lines = (uint64_t)(hi - lo + 1);
        if (!flat && (uint64_t)(hi - lo + 1) > r.zs) r.zs = (uint64_t)(hi - lo + 1);
        if (!flat && (uint64_t)(yhi - ylo + 1) > r.hs) r.hs = (uint64_t)(yhi - ylo + 1);
    }
    if (!flat) r.lines = r.zs * r.hs;
    return r;
}

/* Channels at most for nn_conv_planes_fit: beyond a tile's rows the
 * transpose to NHWC pads nothing, while the reader's staging costs a read
 * per channel and line. */
#define PLANES_MAX_C 16

/* The ring for convolution g (the reader's runtime args 29, 50 and 51), or
 * none (lines 0) to stage runs of lines instead: whole lines need pages of
 * image rows, no dilation along W and zero fill, and the ring must fit
 * IM2COL_STAGE_LINES and the budget. Patch rows wider than a column block
 * stage too: each block's units copy their columns out of the same lines,
 * which the units of one tile row, in a row, read once. So does a
 * transposed convolution's virtually strided image: its lines are staged
 * with the zeros between the pixels, and the rows between its lines read
 * as padding. */
static staged_ring staged_lines(const nn_conv_geom *g, uint64_t m, uint32_t ppp, uint32_t fill,
                                uint32_t page) {
    staged_ring none = {0, 0, 0};
    if (ppp == 1 || fill != 0 || g->dw != 1) return none;
    /* A fused pooling's units read their lines once per window row, each
     * time pstep rows lower: the ring holds them all, as one kernel of
     * every row between the first's top and the last's bottom would read
     * them. */
    nn_conv_geom all = *g;
    if (g->prow > 1 && g->sp == 2) {
        all.kh = (g->kh - 1) * (uint32_t)g->dh + 1 + (g->prow - 1) * (uint32_t)g->pstep;
        all.dh = 1;
    }
    staged_ring r = staged_ring_of(&all, m);
    if (r.lines == 0 || r.lines > IM2COL_STAGE_LINES ||
        r.lines * staged_line_bytes(g, page) > IM2COL_STAGE_BUDGET)
        return none;
    return r;
}

bool nn_conv_planes_fit(const nn_conv_geom *g, uint32_t esize) {
    uint64_t m = (uint64_t)g->n * g->oh * g->ow;
    nn_conv_geom planes = *g;
    planes.planes = g->c;
    return g->c > 1 && g->c <= PLANES_MAX_C && g->w > 1 &&
           staged_lines(&planes, m, g->w, 0, g->c * esize).lines > 0;
}

/* The patch reader's runtime args (conv_im2col_reader.c's list). */
#define IM2COL_ARGS 54
#define IM2COL_ARG_STEP 49 /* a core's step between units (nn_conv_product) */

/* What the patch reader's program is built from: nn_conv_im2col's, and the
 * gather of nn_conv_product's. */
typedef struct im2col_plan {
    uint64_t m, k, taps;
    bool dw, pooled;
    lmnn_dtype dtype; /* of the patch matrix */
    lmnn_shape shape;
    nn_tiles t;
    uint32_t esize, block, tap_batch, lines;
    lm_data_format frm, fin; /* its rows as gathered, the image's tiles */
    uint64_t stage;          /* bytes of staging (0: none) */
    uint32_t args[IM2COL_ARGS];
} im2col_plan;

/* Plans the patch matrix of `img` in `dtype` (see nn_conv_im2col), in units
 * of whole patch rows when `whole_rows`. */
static lm_status im2col_plan_make(const char *op, nn_tensor *img, const nn_conv_geom *g,
                                  nn_patch_mode mode, uint32_t fill, lmnn_dtype dtype,
                                  uint32_t pixels_per_row, const nn_conv_depthwise *dwo,
                                  bool whole_rows, im2col_plan *pl) {
    if (g->sp != 2 && g->sp != 3) return nn_fail(LM_ERR_INTERNAL, op, "a window of %u dims", g->sp);
    uint64_t m = (uint64_t)g->n * g->oh * g->ow, taps = (uint64_t)g->kd * g->kh * g->kw;
    uint64_t k = mode == NN_PATCH_CONV ? taps * g->c : g->c;
    uint32_t q = pixels_per_row ? pixels_per_row : 1;
    bool dw = mode == NN_PATCH_DEPTHWISE;
    if (q > 1 && (mode == NN_PATCH_CONV || dw || m % q || q * k > 32))
        return nn_fail(LM_ERR_INTERNAL, op, "pooling: %u pixels per row do not fit", q);
    nn_tensor *weights = dwo ? dwo->weights : NULL, *bias = dwo ? dwo->bias : NULL;
    if (dw != (weights != NULL) ||
        (dw &&
         (weights->layout != LMNN_TILE || weights->shape.rank != 3 || weights->shape.dims[0] != 1 ||
          weights->shape.dims[1] != taps || weights->shape.dims[2] != g->c)))
        return nn_fail(LM_ERR_INTERNAL, op, "depthwise: weights do not fit the taps");
    uint64_t bias_n = 1;
    for (uint32_t d = 0; bias && d < bias->shape.rank; d++)
        bias_n *= bias->shape.dims[d];
    if (bias && (bias->layout != LMNN_TILE || bias_n != g->c ||
                 bias->shape.dims[bias->shape.rank - 1] != g->c ||
                 (bias->dtype != LMNN_FLOAT32 && bias->dtype != LMNN_BFLOAT16)))
        return nn_fail(LM_ERR_INTERNAL, op, "depthwise: the bias does not fit the channels");
    lmnn_unary_op act = dwo ? dwo->activation : LMNN_UNARY_INVALID;
    m /= q;
    k *= q;
    /* A page per pixel, or per image row (nn_conv_rows); with planes, per
     * row of one channel. */
    uint32_t planes = g->planes > 1 ? g->planes : 1;
    uint32_t ppp = img->shape.dims[img->shape.rank - 1] * planes / g->c;
    if ((ppp != 1 && ppp != g->w) || (planes > 1 && (planes != g->c || ppp != g->w)))
        return nn_fail(LM_ERR_INTERNAL, op, "input: pages of %u pixels (expected 1 or %u)", ppp,
                       g->w);
    if (m > (1u << 30) || k > (1u << 30) || m * k > ((uint64_t)1 << 36))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "input: the patch matrix (%llu x %llu) is too large", (unsigned long long)m,
                       (unsigned long long)k);
    bool pooled = mode == NN_PATCH_MAX || mode == NN_PATCH_SUM || dw;
    pl->m = m;
    pl->k = k;
    pl->taps = taps;
    pl->dw = dw;
    pl->pooled = pooled;
    pl->shape = LMNN_SHAPE((uint32_t)m, (uint32_t)k);
    pl->dtype = dtype ? dtype : img->dtype;
    nn_tiles t = pl->t = nn_tiles_of(&pl->shape);
    uint32_t esize = pl->esize = nn_rm_elem_size(img->dtype);
    pl->frm = img->dtype == LMNN_FLOAT32 ? LM_DATA_FORMAT_FLOAT32 : nn_tile_format(img->dtype);
    lm_data_format fin = pl->fin = nn_tile_format(img->dtype);
    uint32_t block = whole_rows || t.wt < IM2COL_BLOCK ? t.wt : IM2COL_BLOCK;
    /* Pooling keeps every tap of a unit's tiles in L1 at once: at most
     * POOL_TAPS_BUDGET bytes of them. */
    while (pooled && !dw && block > 1 && taps * block * lm_tile_size(fin) > POOL_TAPS_BUDGET)
        block--;
    /* A depthwise unit's tiles go round L1 in rows, tilized taps, their
     * weights and two of sums. */
    if (dw && block > DEPTHWISE_BLOCK) block = DEPTHWISE_BLOCK;
    /* Taps depthwise_compute.c multiplies into dst between two passes of
     * the sums through L1: as many as the budget holds of their tiles and
     * weights. The reader moves each tap's row of weights to row 0 of a
     * tile, all a row broadcast reads: it is told the bytes of an element
     * (1: bfloat8_b's mantissas, whose exponents lie apart). */
    uint32_t tap_batch = 1, wrow = 0;
    if (dw) {
        uint64_t per_tap =
            (uint64_t)block * (lm_tile_size(fin) + lm_tile_size(nn_tile_format(weights->dtype)));
        uint64_t fit = DEPTHWISE_TAPS_BUDGET / per_tap;
        tap_batch = (uint32_t)(fit < 1 ? 1 : fit < taps ? fit : taps);
        wrow = weights->dtype == LMNN_BFLOAT8_B ? 1 : nn_rm_elem_size(weights->dtype);
    }
    pl->block = block;
    pl->tap_batch = tap_batch;
    staged_ring ring = {0, 0, 0};
    if (mode == NN_PATCH_CONV) ring = staged_lines(g, m, ppp, fill, g->c * esize);
    uint32_t lines = (uint32_t)ring.lines;
    if (planes > 1 && !lines)
        return nn_fail(LM_ERR_INTERNAL, op, "input: an NCHW image whose lines cannot be staged");
    pl->lines = lines;
    /* Its staging of input pixels: the ring of whole lines, else KH lines
     * of the input a unit's 32 output pixels read, when that is small. */
    uint64_t stage = lines
                         ? lines * staged_line_bytes(g, g->c * esize)
                         : (uint64_t)g->kd * g->kh * (31 * (uint64_t)g->sw + g->kw) * g->c * esize;
    pl->stage = mode == NN_PATCH_CONV && stage <= IM2COL_STAGE_BUDGET ? (stage + 15) / 16 * 16 : 0;
    /* tilize_compute.c and tile_units.c take the tile geometry as runtime
     * args 2..6 (nn_layout.c's row blocks); the reader and pool_compute.c
     * the convolution's after it, then the image's buffer, element size and
     * mode; the depth, the unit step (IM2COL_ARG_STEP), the ring's shape
     * (staged_ring) and a fused pooling's rows (nn_conv_geom's prow) last. */
    uint32_t args[IM2COL_ARGS] = {0,
                                  0,
                                  t.h,
                                  t.w,
                                  t.ht,
                                  t.wt,
                                  block,
                                  g->h,
                                  g->w,
                                  g->c,
                                  g->oh,
                                  g->ow,
                                  g->kd * g->kh, /* kernel rows */
                                  g->kw,
                                  (uint32_t)g->sh,
                                  (uint32_t)g->sw,
                                  (uint32_t)g->dh,
                                  (uint32_t)g->dw,
                                  (uint32_t)g->pt,
                                  (uint32_t)g->pl,
                                  (uint32_t)g->uh,
                                  (uint32_t)g->uw,
                                  fill,
                                  img->memory.type == LM_BUFFER_DRAM,
                                  esize,
                                  dw       ? 3
                                  : pooled ? 2
                                           : 0,
                                  mode == NN_PATCH_SUM,
                                  ppp,
                                  q,
                                  lines,
                                  dw && weights->memory.type == LM_BUFFER_DRAM,
                                  planes,
                                  tap_batch,
                                  wrow,
                                  bias != NULL,
                                  bias && bias->memory.type == LM_BUFFER_DRAM,
                                  bias ? nn_rm_elem_size(bias->dtype) : 0,
                                  act == LMNN_UNARY_INVALID ? 0 : (uint32_t)act,
                                  act == LMNN_UNARY_INVALID ? 0 : dwo->params[0],
                                  act == LMNN_UNARY_INVALID ? 0 : dwo->params[1],
                                  act == LMNN_UNARY_INVALID ? 0 : dwo->params[2],
                                  act != LMNN_UNARY_INVALID && nn_unary_in_place(act),
                                  g->d,
                                  g->od,
                                  g->kd,
                                  (uint32_t)g->sd,
                                  (uint32_t)g->dd,
                                  (uint32_t)g->pd,
                                  (uint32_t)g->ud,
                                  0,
                                  (uint32_t)ring.zs,
                                  (uint32_t)ring.hs,
                                  g->prow,
                                  (uint32_t)g->pstep};
    memcpy(pl->args, args, sizeof args);
    return LM_OK;
}

lm_status nn_conv_im2col(const char *op, nn_tensor *img, const nn_conv_geom *g, nn_patch_mode mode,
                         uint32_t fill, lmnn_dtype dtype, uint32_t pixels_per_row,
                         const nn_conv_depthwise *dwo, lmnn_tensor *out) {
    im2col_plan pl;
    lm_status st = im2col_plan_make(op, img, g, mode, fill, dtype, pixels_per_row, dwo, false, &pl);
    if (st) return st;
    /* In DRAM whatever the image's memory: it is KH * KW times the image. */
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor oh;
    nn_tensor *o;
    st = nn_tensor_new(op, img->device, &pl.shape, pl.dtype, LMNN_TILE, &dram, &oh, &o);
    if (st) return st;
    nn_tensor *weights = dwo ? dwo->weights : NULL, *bias = dwo ? dwo->bias : NULL;
    lmnn_unary_op act = dwo ? dwo->activation : LMNN_UNARY_INVALID;
    bool dw = pl.dw, pooled = pl.pooled;
    lm_data_format frm = pl.frm, fin = pl.fin, ftl = nn_tile_format(o->dtype);
    uint32_t block = pl.block, esize = pl.esize, nb = (pl.t.wt + block - 1) / block;
    /* tile_units.c's compile-time args (its buffers); the rest is runtime
     * args (one compiled reader for every convolution and pooling). */
    uint32_t cargs[] = {img->memory.type == LM_BUFFER_DRAM, o->memory.type == LM_BUFFER_DRAM};
    uint32_t *args = pl.args, nargs = IM2COL_ARGS;
    nn_key key;
    nn_key_init(&key, "conv_im2col");
    nn_key_add(&key, cargs, sizeof cargs);
    nn_key_add(&key, args, nargs * sizeof args[0]);
    nn_key_tensor(&key, img);
    nn_key_tensor(&key, o);
    if (dw) nn_key_tensor(&key, weights);
    if (bias) nn_key_tensor(&key, bias);
    nn_program *prog = nn_cache_find(img->device, &key);
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        uint32_t room = block;
        nn_kernel_spec reader = {"conv_im2col_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {
            "tilize_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, false};
        if (pooled)
            compute = (nn_kernel_spec){"pool_compute.c",
                                       LM_PROCESSOR_COMPUTE,
                                       NULL,
                                       0,
                                       NULL,
                                       0,
                                       o->dtype == LMNN_FLOAT32 || img->dtype == LMNN_FLOAT32};
        /* Every activation's chain, chosen at run time (as the matmul's). */
        lm_kernel_define acts[2] = {{"NN_DW_ACT", nn_unary_fused_switch()},
                                    {"NN_DW_ACT_AT", nn_unary_fused_switch_at()}};
        if (dw) compute.name = "depthwise_compute.c", compute.fp32_dest_acc = true;
        if (dw && act != LMNN_UNARY_INVALID) compute.defines = acts, compute.define_count = 2;
        nn_kernel_spec writer = {"tile_units.c", LM_PROCESSOR_DM1, cargs, 2, NULL, 0, false};
        st = nn_split_work(op, img->device, pl.t.ht * nb, &split);
        if (!st) st = fewer_cores(op, img->device, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, img->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, frm, 32 * 32 * esize, 2 * room);
        /* The reader's zeros for padding: a patch row of the block. */
        if (!st && fill == 0) st = nn_program_cb(op, &p, 2, frm, block * 32 * esize, 1);
        /* Its staging of input pixels (im2col_plan_make). */
        if (!st && pl.stage) st = nn_program_cb(op, &p, 3, frm, (uint32_t)pl.stage, 1);
        if (!st && pooled)
            st = nn_program_cb(op, &p, 1, fin, (uint32_t)lm_tile_size(fin),
                               (dw ? pl.tap_batch : (uint32_t)pl.taps) * room);
        if (!st && dw) {
            lm_data_format fw = nn_tile_format(weights->dtype);
            st = nn_program_cb(op, &p, 4, fw, (uint32_t)lm_tile_size(fw), pl.tap_batch * room);
            if (!st)
                st = nn_program_cb(op, &p, 5, LM_DATA_FORMAT_FLOAT32,
                                   (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT32), 2 * room);
        }
        /* The bias's tiles of a unit, and the two masks it is added through
         * (bfloat16: ones, and ones in the rows holding pixels). */
        if (!st && bias) {
            lm_data_format fb = nn_tile_format(bias->dtype);
            st = nn_program_cb(op, &p, 6, fb, (uint32_t)lm_tile_size(fb), room);
            if (!st)
                st = nn_program_cb(op, &p, 7, LM_DATA_FORMAT_FLOAT16_B,
                                   (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B), 2);
        }
        /* Sums on their way to an activation that needs registers beyond
         * their own. */
        if (!st && act != LMNN_UNARY_INVALID && !nn_unary_in_place(act))
            st = nn_program_cb(op, &p, 8, LM_DATA_FORMAT_FLOAT32,
                               (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT32), DEPTHWISE_GROUP);
        if (!st) st = nn_program_cb(op, &p, 16, ftl, (uint32_t)lm_tile_size(ftl), 2 * room);
        if (!st) st = nn_program_kernel(op, &p, &reader, NULL);
        if (!st) st = nn_program_kernel(op, &p, &compute, NULL);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, args + 2, nargs - 2);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, img->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {img, o, dw ? weights : o, bias ? bias : o};
    if (!st) st = nn_launch(op, prog, tensors, bias ? 4 : dw ? 3 : 2);
    if (st) {
        nn_tensor_discard(oh);
        return st;
    }
    *out = oh;
    return LM_OK;
}

/* The circular buffers of the patch reader in a gathered product (its
 * NN_IM2COL_FUSED indices): zeros to copy from, the staging. */
#define FUSED_CB_ZEROS 8
#define FUSED_CB_STAGE 9

static lm_status gather_buffers(const char *op, nn_program *prog, const void *ctx) {
    const im2col_plan *pl = ctx;
    lm_status st = nn_program_cb(op, prog, FUSED_CB_ZEROS, pl->frm, pl->block * 32 * pl->esize, 1);
    if (!st && pl->stage)
        st = nn_program_cb(op, prog, FUSED_CB_STAGE, pl->frm, (uint32_t)pl->stage, 1);
    return st;
}

/* The patch matrix of `img` (NN_PATCH_CONV) in `dtype` (0: img's) times the
 * prepared weight `wp` as nn_linear_grouped makes it, in one program that
 * never stores the patch matrix: each tile row is gathered, tilized (into
 * `dtype`) and multiplied in L1;
 * with `rm_shape` (else NULL) untilized too, as the row-major flat output
 * of that shape (flat_rm_shape). With a fused pooling (g->prow, and
 * `pool_groups` column groups of wp, see conv_pack), each output row the
 * max of its window's, pool_n columns. LM_OK with out->id 0 when the
 * product does not fit that form. */
static lm_status conv_product(const char *op, nn_tensor *img, lmnn_dtype dtype,
                              const nn_conv_geom *g, lmnn_tensor wp, lmnn_tensor bias,
                              const lmnn_matmul_options *mo, bool raw_padding,
                              const nn_mm_groups *groups, const lmnn_shape *rm_shape,
                              uint32_t pool_groups, uint32_t pool_n, lmnn_tensor *out) {
    *out = (lmnn_tensor){0};
    im2col_plan pl;
    lm_status st = im2col_plan_make(op, img, g, NN_PATCH_CONV, 0, dtype, 1, NULL, true, &pl);
    if (st) return st;
    static const lm_kernel_define fused = {"NN_IM2COL_FUSED", "1"};
    nn_mm_gather ga = {
        .source = img,
        .dtype = pl.dtype,
        .m = (uint32_t)pl.m,
        .k = (uint32_t)pl.k,
        .rows_format = pl.frm,
        .rows_page = 32 * 32 * pl.esize,
        .reader = {"conv_im2col_reader.c", LM_PROCESSOR_DM0, NULL, 0, &fused, 1, false},
        .args = pl.args,
        .nargs = IM2COL_ARGS,
        .first_arg = 0,
        .count_arg = 1,
        .step_arg = IM2COL_ARG_STEP,
        .l1_bytes = (uint64_t)pl.block * 32 * pl.esize + pl.stage,
        .buffers = gather_buffers,
        .ctx = &pl,
        .rm_len = rm_shape ? rm_shape->dims[rm_shape->rank - 1] : 0,
        .pool_rows = g->prow,
        .pool_groups = pool_groups,
        .pool_n = pool_n,
    };
    if (rm_shape) ga.rm_shape = *rm_shape;
    st = nn_linear_gathered(op, &ga, wp, bias, mo, raw_padding, groups, out);
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_conv_finish(const char *op, lmnn_tensor y, const nn_conv_geom *g, uint32_t c,
                         lmnn_image_layout layout, bool flat, const lmnn_memory_config *memory,
                         lmnn_tensor *out) {
    lmnn_output last = {0};
    last.memory = *memory;
    lmnn_tensor cur = y, next, none = {0};
    lm_status st = LM_OK;
    /* A 3-D result's n output images are N batch entries of od. */
    uint32_t entries = g->n / g->od, od = g->od;
    if (layout == LMNN_NHWC) {
        lmnn_shape s = flat         ? LMNN_SHAPE(1, 1, g->n * g->oh * g->ow, c)
                       : g->sp == 3 ? LMNN_SHAPE(entries, od, g->oh, g->ow, c)
                                    : LMNN_SHAPE(g->n, g->oh, g->ow, c);
        nn_tensor *t;
        st = nn_get_tensor(op, "output", y, &t);
        if (!st && (flat || g->ow % 32 == 0) && t->memory.type == memory->type &&
            t->memory.layout == memory->layout) {
            /* [N * OH * OW, C] has the same tiles in the same order as the
             * result's shape: only the shape changes (y is ours). */
            nn_tensor_retag(t, &s);
        } else if (!st) {
            st = step(op, lmnn_reshape(cur, &s, &last, &next), &cur, next, none);
        }
    } else {
        lmnn_shape s = g->sp == 3 ? LMNN_SHAPE(entries, c, od, g->oh, g->ow)
                                  : LMNN_SHAPE(g->n, c, g->oh, g->ow);
        if (entries > 1) {
            lmnn_shape b = LMNN_SHAPE(entries, od * g->oh * g->ow, c);
            st = step(op, lmnn_reshape(cur, &b, NULL, &next), &cur, next, none);
        }
        if (!st) st = step(op, lmnn_transpose(cur, -1, -2, NULL, &next), &cur, next, none);
        if (!st) st = step(op, lmnn_reshape(cur, &s, &last, &next), &cur, next, none);
    }
    if (st) {
        drop(cur, none);
        return st;
    }
    *out = cur;
    return LM_OK;
}

lm_status nn_conv_output_layout(const char *op, bool flat, lmnn_layout layout, bool image_rows,
                                lmnn_dtype dtype, bool *out_rm) {
    lmnn_layout l = layout ? layout : LMNN_TILE;
    if (l != LMNN_TILE && l != LMNN_ROW_MAJOR)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "output_layout: unknown layout %d",
                       (int)layout);
    *out_rm = l == LMNN_ROW_MAJOR;
    if (*out_rm && !flat)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_layout: row_major needs flat_output (a flat NHWC image)");
    if (*out_rm && dtype == LMNN_BFLOAT8_B)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_layout: row_major needs a float32 or bfloat16 output, given "
                       "bfloat8_b");
    if (image_rows && !*out_rm)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_image_rows: needs output_layout row_major (pages of a tile "
                       "image are tiles)");
    return LM_OK;
}

/* The row-major flat output's shape: a page per pixel or per image row. */
static lmnn_shape flat_rm_shape(const nn_conv_geom *g, uint32_t c, bool image_rows) {
    return image_rows ? LMNN_SHAPE(g->n * g->oh, g->ow * c)
                      : LMNN_SHAPE(1, 1, g->n * g->oh * g->ow, c);
}

lm_status nn_conv_flat_rm(const char *op, lmnn_tensor y, const nn_conv_geom *g, uint32_t c,
                          bool image_rows, const lmnn_memory_config *memory, lmnn_tensor *out) {
    nn_tensor *t, *o;
    lm_status st = nn_get_tensor(op, "output", y, &t);
    lmnn_shape s = flat_rm_shape(g, c, image_rows);
    if (!st) st = nn_tensor_new(op, t->device, &s, t->dtype, LMNN_ROW_MAJOR, memory, out, &o);
    if (!st && (st = nn_untilize(op, t, o))) nn_tensor_discard(*out);
    lmnn_tensor_free(y);
    return st;
}

/* ---- output pixels packed into patch rows ----
 *
 * A convolution of stride 1 along W computes P neighbouring output pixels
 * from one patch row: it is the convolution with a kernel P - 1 pixels
 * wider, stride P, OW / P output columns and P * OC output channels, whose
 * column p * OC + o holds kernel o moved p pixels right. Its product
 * [N * OH * OW / P, P * OC] is the output's NHWC rows, P to a row. With OC or
 * KH * KW * C far below a multiple of 32 (a first layer: C = 1, OC = 8),
 * that fills the tiles the padding would waste: the matmul, the patch
 * matrix and their tile counts shrink by up to P. */

/* Whether a weight is prepared in the depthwise form (see
 * lmnn_conv2d_prepare_weights): one input channel per group and per output
 * channel, more than one tile of them. With one tile or less the
 * block-diagonal matrix is a single column of tiles and its one product
 * costs no more than the depthwise form's launches. */
static bool depthwise_form(bool transpose, uint32_t groups, uint32_t c, uint32_t oc) {
    return !transpose && groups == c && oc == c && c > 32;
}

/* Output pixels per patch row for geometry g with oc output channels: the
 * P of 1..8 dividing OW that costs least, the smallest of equals; 1 unless
 * stride and dilation along W are 1. The cost counts the tile products
 * (M / P x K' x N' tiles) and the patch rows' reads (M / P x KH), a product
 * as 64 reads (measured on the simulator: about 4.5 us against 0.07). */
static uint32_t pack_factor(const nn_conv_geom *g, uint32_t oc) {
    if (g->sw != 1 || g->dw != 1 || g->uw != 1) return 1;
    uint64_t m = (uint64_t)g->n * g->oh * g->ow, best_cost = 0;
    uint32_t best = 1;
    for (uint32_t p = 1; p <= 8; p++) {
        if (g->ow % p || (uint64_t)p * oc > 256) continue;
        uint64_t cost = 64 * tiles32(m / p) * tiles32((uint64_t)g->kh * (g->kw + p - 1) * g->c) *
                            tiles32((uint64_t)p * oc) +
                        m / p * g->kh;
        if (p == 1 || cost < best_cost) {
            best = p;
            best_cost = cost;
        }
    }
    return best;
}

/* How a prepared matrix lays out its columns: P output pixels per patch
 * row, `step` input pixels apart, each in `groups` column groups: the
 * window columns of a max pooling fused after the product (conv_pool),
 * pixel q of group dx at input pixel q * step + dx of the patch row. Each
 * group is GC = P * OC columns, rounded up to whole tiles when there are
 * more (the product maxes the groups tile by tile); the last group is not
 * rounded, which keeps OC readable from the shape (pack_decode). {1, 1, 1}:
 * the plain matrix; {P, 1, 1}: P output pixels a patch row. */
typedef struct conv_pack {
    uint32_t p, step, groups;
} conv_pack;

/* A max pooling fused after a convolution (lmnn_conv2d_options' pool_*):
 * a kh x kw window, strides sh, sw; kh 0: none. */
typedef struct conv_pool {
    uint32_t kh, kw, sh, sw;
} conv_pool;

static uint32_t pack_group_cols(const conv_pack *pk, uint32_t oc) {
    uint32_t cols = pk->p * oc;
    return pk->groups > 1 ? (cols + 31) / 32 * 32 : cols;
}

/* Taps per kernel row of the packed matrix: the input pixels a patch row
 * reads along W. */
static uint32_t pack_taps(const conv_pack *pk, uint32_t kw) {
    return (pk->p - 1) * pk->step + pk->groups - 1 + kw;
}

static uint64_t pack_rows(const conv_pack *pk, uint32_t kh, uint32_t kw, uint32_t c) {
    return (uint64_t)kh * pack_taps(pk, kw) * c;
}

static uint64_t pack_cols(const conv_pack *pk, uint32_t oc) {
    return (uint64_t)(pk->groups - 1) * pack_group_cols(pk, oc) + (uint64_t)pk->p * oc;
}

/* The packed matrix [pack_rows, pack_cols] of prepared matrix m [KH * KW *
 * C, OC] (malloc'd, zeros where no tap reaches; NULL when out of memory). */
static float *pack_matrix(const float *m, uint32_t kh, uint32_t kw, uint32_t c, uint32_t oc,
                          const conv_pack *pk) {
    uint32_t pw = pack_taps(pk, kw), gc = pack_group_cols(pk, oc);
    uint64_t pcols = pack_cols(pk, oc);
    float *pm = calloc(pack_rows(pk, kh, kw, c) * pcols, sizeof *pm);
    if (!pm) return NULL;
    for (uint32_t y = 0; y < kh; y++)
        for (uint32_t x = 0; x < kw; x++)
            for (uint32_t ci = 0; ci < c; ci++)
                for (uint32_t g = 0; g < pk->groups; g++)
                    for (uint32_t q = 0; q < pk->p; q++) {
                        uint64_t row = (uint64_t)(y * pw + x + q * pk->step + g) * c + ci;
                        memcpy(pm + row * pcols + (uint64_t)g * gc + (uint64_t)q * oc,
                               m + ((uint64_t)(y * kw + x) * c + ci) * oc, oc * sizeof *m);
                    }
    return pm;
}

/* The bias (tile [OC] or [1, OC]) repeated p times as [1, p * OC], on the
 * device. */
static lm_status pack_bias(const char *op, lmnn_tensor bias, uint32_t oc, uint32_t p,
                           lmnn_tensor *out) {
    lmnn_shape row = LMNN_SHAPE(1, oc);
    lmnn_tensor r;
    lm_status st = lmnn_reshape(bias, &row, NULL, &r);
    if (st) return nn_fail_call(st, op);
    uint32_t reps[2] = {1, p};
    st = lmnn_repeat(r, reps, 2, NULL, out);
    lmnn_tensor_free(r);
    return st ? nn_fail_call(st, op) : LM_OK;
}

/* Whether activation `act` (alpha and beta as the options give them, NaN
 * for the default) keeps order, a <= b giving f(a) <= f(b): then it may
 * follow a max, max(f(a), f(b)) being f(max(a, b)), as the bias may. */
static bool keeps_order(lmnn_unary_op act, double alpha) {
    switch (act) {
    case LMNN_UNARY_INVALID:
    case LMNN_RELU:
    case LMNN_RELU6:
    case LMNN_RELU_MAX:
    case LMNN_RELU_MIN:
    case LMNN_SIGMOID:
    case LMNN_TANH:
    case LMNN_HARDTANH:
    case LMNN_CLAMP:
    case LMNN_SELU:
    case LMNN_HARDSIGMOID:
    case LMNN_SOFTSIGN:
        return true;
    case LMNN_LEAKY_RELU:
    case LMNN_ELU:
        return isnan(alpha) || alpha >= 0;
    case LMNN_SOFTPLUS:
    case LMNN_DIV_UNARY:
        return isnan(alpha) || alpha > 0;
    case LMNN_MUL_UNARY:
        return isnan(alpha) || alpha >= 0;
    default:
        return false;
    }
}

/* Whether options o ask for a pooling their product can take (pool_pack
 * says whether the geometry lets it): one group and an activation that
 * keeps order. */
static bool pool_fuses(const lmnn_conv2d_options *o) {
    return o->pool_kernel[0] > 0 && o->groups == 1 &&
           keeps_order(o->activation, o->activation_alpha);
}

/* Whether one pooled output pixel a patch row fits dst: B's columns, one
 * column group per window column, and one group's beside them (8 float32
 * tiles; see matmul_compute.c's pool_step). */
static bool pool_fits_dst(uint32_t p, uint32_t oc, const conv_pool *pl) {
    return tiles32((uint64_t)p * oc) * (1 + pl->kw) <= 8;
}

/* The options' pooling (checked by nn_conv_run; kh 0: none). */
static conv_pool pool_of(const lmnn_conv2d_options *o) {
    if (o->pool_kernel[0] < 1 || o->pool_kernel[1] < 1) return (conv_pool){0, 0, 0, 0};
    uint32_t kh = (uint32_t)o->pool_kernel[0], kw = (uint32_t)o->pool_kernel[1];
    return (conv_pool){kh, kw, o->pool_stride[0] > 0 ? (uint32_t)o->pool_stride[0] : kh,
                       o->pool_stride[1] > 0 ? (uint32_t)o->pool_stride[1] : kw};
}

/* The packing of convolution g (oc output channels) with pooling `pl`
 * fused after its product, when the geometry lets it: stride and dilation
 * 1 along W, and pool_fits_dst. Its P, of 1..max_p (8 for a row-major
 * output, whose order is the pixels'; 1 for tiles) dividing the pooled
 * width, weighed as pack_factor weighs, with KH window rows of patch rows
 * each. */
static bool pool_pack(const nn_conv_geom *g, uint32_t oc, const conv_pool *pl, uint32_t max_p,
                      conv_pack *out) {
    if (g->sw != 1 || g->dw != 1 || g->uw != 1 || g->sp != 2 || g->oh < pl->kh || g->ow < pl->kw)
        return false;
    uint32_t poh = (g->oh - pl->kh) / pl->sh + 1, pow = (g->ow - pl->kw) / pl->sw + 1;
    uint64_t m = (uint64_t)g->n * poh * pow, best_cost = 0;
    bool found = false;
    for (uint32_t p = 1; p <= max_p; p++) {
        conv_pack pk = {p, pl->sw, pl->kw};
        uint64_t gt = tiles32((uint64_t)p * oc);
        if (pow % p || (uint64_t)p * oc > 256 || !pool_fits_dst(p, oc, pl)) continue;
        uint64_t cost = pl->kh * (64 * tiles32(m / p) *
                                      tiles32(pack_rows(&pk, g->kh, g->kw, g->c)) * gt * pl->kw +
                                  m / p * g->kh);
        if (!found || cost < best_cost) {
            *out = pk;
            best_cost = cost;
            found = true;
        }
    }
    return found;
}

/* The form of the matrix lmnn_conv2d multiplies by with these options for
 * a kh x kw kernel from c to oc channels, as prepare() makes it: pooled
 * (pool_pack) or packed (pack_factor) when they ask for a row-major flat
 * output of a flat input of known dims (the geometry nn_conv_run works
 * out, the same way); pooled with one output pixel a patch row when they
 * fuse a pooling into a tile output; else plain. */
static conv_pack opts_form(const lmnn_conv2d_options *o, uint32_t c, uint32_t kh, uint32_t kw,
                           uint32_t oc) {
    conv_pack plain = {1, 1, 1};
    if (!o || o->groups != 1 || o->stride[1] != 1 || o->dilation[1] != 1) return plain;
    conv_pool pl = pool_of(o);
    if (o->output_layout != LMNN_ROW_MAJOR || !o->flat_output)
        return pool_fuses(o) && pool_fits_dst(1, oc, &pl) ? (conv_pack){1, pl.sw, pl.kw} : plain;
    if (o->batch_size < 1 || o->input_height < 1 || o->input_width < 1 || o->stride[0] < 1 ||
        o->dilation[0] < 1)
        return plain;
    for (int i = 0; i < 4; i++)
        if (o->padding[i] < 0) return plain;
    int64_t eh = (int64_t)o->dilation[0] * (kh - 1) + 1;
    int64_t oh = ((int64_t)o->input_height + o->padding[0] + o->padding[1] - eh) / o->stride[0] + 1;
    int64_t ow = (int64_t)o->input_width + o->padding[2] + o->padding[3] - kw + 1;
    if (oh < 1 || ow < 1 || oh > (1 << 24) || ow > (1 << 24)) return plain;
    nn_conv_geom g = {.n = (uint32_t)o->batch_size,
                      .h = (uint32_t)o->input_height,
                      .w = (uint32_t)o->input_width,
                      .c = c,
                      .oh = (uint32_t)oh,
                      .ow = (uint32_t)ow,
                      .kh = kh,
                      .kw = kw,
                      .sw = 1,
                      .dw = 1,
                      .uw = 1};
    nn_conv_geom_2d(&g);
    conv_pack pk;
    if (pool_fuses(o) && pool_pack(&g, oc, &pl, 8, &pk)) return pk;
    return (conv_pack){pack_factor(&g, oc), 1, 1};
}

/* ---- transposed convolutions by phases ----
 *
 * A transposed convolution of stride s (dilation 1, one group) puts tap k
 * of input row i on row o' = s * i + k of its output, counted before the
 * top padding is cut off. The rows of one phase r = o' mod s take only the
 * taps k = r + s * j (j >= 0), each from input row o' div s - j. So every
 * phase is a convolution of the input itself, of T = ceil(K / s) taps (tap
 * t takes j = T - 1 - t; taps past K are zero), and all of them together
 * one convolution with s * OC output channels, phase after phase, whose
 * results interleave into the output. The usual form -- the input with
 * s - 1 zeros between its pixels, convolved by the flipped kernel -- sends
 * s times as many patches (s^2 in 2-D), mostly zeros, through the patch
 * matrix and its product. */

/* Strides above this do not run by phases: the phase matrix has SH * SW
 * times the output channels. */
#define PHASE_MAX_STRIDE 64

/* Whether lmnn_conv_transpose2d with options `o` and a kh x kw kernel runs
 * by phases, and their taps (*out_th x *out_tw): a stride above 1 (at most
 * PHASE_MAX_STRIDE), dilation 1, one group and fewer taps than the
 * kernel's (a kernel no larger than its stride, 1x1 at stride 2, skips
 * nothing by phases). */
static bool phase_taps(const lmnn_conv2d_options *o, uint32_t kh, uint32_t kw, uint32_t *out_th,
                       uint32_t *out_tw) {
    if (!o || o->groups != 1 || o->dilation[0] != 1 || o->dilation[1] != 1 || o->stride[0] < 1 ||
        o->stride[1] < 1 || o->stride[0] > PHASE_MAX_STRIDE || o->stride[1] > PHASE_MAX_STRIDE)
        return false;
    *out_th = (uint32_t)(((uint64_t)kh + (uint32_t)o->stride[0] - 1) / (uint32_t)o->stride[0]);
    *out_tw = (uint32_t)(((uint64_t)kw + (uint32_t)o->stride[1] - 1) / (uint32_t)o->stride[1]);
    return (uint64_t)*out_th * *out_tw < (uint64_t)kh * kw;
}

/* The phase matrix [TH * TW * C, SH * SW * OC] (rows tap-major as a
 * convolution's, columns phase (rh, rw) after phase) of the flipped matrix
 * m [KH * KW * C, OC] of a transposed convolution of stride (sh, sw)
 * (malloc'd; NULL when out of memory). */
static float *phase_matrix(const float *m, uint32_t kh, uint32_t kw, uint32_t c, uint32_t oc,
                           uint32_t sh, uint32_t sw) {
    uint32_t th = (kh + sh - 1) / sh, tw = (kw + sw - 1) / sw;
    uint64_t cols = (uint64_t)sh * sw * oc;
    float *pm = calloc((uint64_t)th * tw * c * cols, sizeof *pm);
    if (!pm) return NULL;
    for (uint32_t ty = 0; ty < th; ty++)
        for (uint32_t tx = 0; tx < tw; tx++)
            for (uint32_t rh = 0; rh < sh; rh++)
                for (uint32_t rw = 0; rw < sw; rw++) {
                    /* The kernel tap phase (rh, rw) takes at this tap; m's
                     * rows hold the kernel flipped. */
                    uint64_t ky = rh + (uint64_t)sh * (th - 1 - ty),
                             kx = rw + (uint64_t)sw * (tw - 1 - tx);
                    if (ky >= kh || kx >= kw) continue;
                    const float *from = m + ((kh - 1 - ky) * kw + (kw - 1 - kx)) * c * oc;
                    float *to = pm + (uint64_t)(ty * tw + tx) * c * cols + (rh * sw + rw) * oc;
                    for (uint32_t ci = 0; ci < c; ci++)
                        memcpy(to + ci * cols, from + (uint64_t)ci * oc, oc * sizeof *m);
                }
    return pm;
}

/* The convolution computing transposed convolution g's phases (its
 * options `o`, TH x TW taps) on the input as it is: its output rows Y are
 * those whose phases hold g's output rows, o' = oh + pt in [SH * Y0, SH *
 * (Y0 + OH')), Y0 = pt / SH; the first output row is then o' = pt, crop[0]
 * = pt - SH * Y0 rows into the interleaved result; likewise along W. */
static void phase_geom(const nn_conv_geom *g, const lmnn_conv2d_options *o, uint32_t th,
                       uint32_t tw, nn_conv_geom *out, uint32_t *crop) {
    int64_t pad[2] = {o->padding[0], o->padding[2]}, taps[2] = {th, tw}, len[2] = {g->oh, g->ow};
    int64_t first[2], count[2];
    for (int i = 0; i < 2; i++) {
        int64_t s = o->stride[i], y0 = pad[i] / s, y1 = (pad[i] + len[i] - 1) / s;
        count[i] = y1 - y0 + 1;
        first[i] = taps[i] - 1 - y0; /* top padding; negative crops */
        crop[i] = (uint32_t)(pad[i] - s * y0);
    }
    *out = (nn_conv_geom){.n = g->n,
                          .h = g->h,
                          .w = g->w,
                          .c = g->c,
                          .oh = (uint32_t)count[0],
                          .ow = (uint32_t)count[1],
                          .kh = th,
                          .kw = tw,
                          .sh = 1,
                          .sw = 1,
                          .dh = 1,
                          .dw = 1,
                          .pt = (int32_t)first[0],
                          .pl = (int32_t)first[1],
                          .uh = 1,
                          .uw = 1};
    nn_conv_geom_2d(out);
}

/* The output of transposed convolution g from y, the product of its phase
 * convolution gp ([N * OH' * OW', SH * SW * OC] tiles, freed): untilized
 * into a page per row of gp, then its phases interleaved into the output's
 * pixels as they are tilized (kernels/phase_tile_reader.c: per output row
 * and column phase one strided read, `crop` rows and columns in), then the
 * form the options ask for. */
static lm_status phase_finish(const char *op, lmnn_tensor y, const nn_conv_geom *g,
                              const nn_conv_geom *gp, uint32_t oc, const lmnn_conv2d_options *o,
                              const uint32_t *crop, lmnn_dtype dtype, bool rm_out,
                              const lmnn_memory_config *memory, lmnn_tensor *out) {
    uint32_t sh = (uint32_t)o->stride[0], sw = (uint32_t)o->stride[1];
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_shape rs = LMNN_SHAPE(gp->n * gp->oh, gp->ow * sh * sw * oc);
    lmnn_shape zs = LMNN_SHAPE(g->n * g->oh * g->ow, oc);
    lmnn_tensor r = {0}, z = {0};
    nn_tensor *yt, *rt, *zt = NULL;
    lm_status st = nn_get_tensor(op, "output", y, &yt);
    if (!st) st = nn_tensor_new(op, yt->device, &rs, yt->dtype, LMNN_ROW_MAJOR, &dram, &r, &rt);
    if (!st && (st = nn_untilize(op, yt, rt))) nn_tensor_discard(r);
    lmnn_tensor_free(y);
    if (st) return st;
    /* The tiles in the output's dtype (tilize packs bfloat8_b too). */
    st = nn_tensor_new(op, rt->device, &zs, dtype, LMNN_TILE, &dram, &z, &zt);
    nn_tiles t = nn_tiles_of(&zs);
    uint32_t block = t.wt < PHASE_BLOCK ? t.wt : PHASE_BLOCK, room = block;
    uint32_t esize = nn_rm_elem_size(rt->dtype);
    uint32_t args[16 + NN_ACCESSOR_WORDS] = {t.h, t.w, t.ht,  t.wt,  block,   gp->oh,  gp->ow,
                                             sh,  sw,  g->oh, g->ow, crop[0], crop[1], esize};
    uint32_t nargs = 14, words;
    if (!st && !(st = nn_accessor_words(op, rt, args + nargs, &words))) nargs += words;
    uint32_t cargs[] = {rt->memory.type == LM_BUFFER_DRAM,
                        zt ? zt->memory.type == LM_BUFFER_DRAM : 0};
    nn_key key;
    nn_key_init(&key, "phase_tiles");
    nn_key_add(&key, args, nargs * sizeof *args);
    nn_key_tensor(&key, rt);
    if (!st) nn_key_tensor(&key, zt);
    nn_program *prog = st ? NULL : nn_cache_find(rt->device, &key);
    if (!st && !prog) {
        lm_data_format frm =
            rt->dtype == LMNN_FLOAT32 ? LM_DATA_FORMAT_FLOAT32 : nn_tile_format(rt->dtype);
        lm_data_format ftl = nn_tile_format(dtype);
        nn_kernel_spec reader = {"phase_tile_reader.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        nn_kernel_spec compute = {
            "tilize_compute.c", LM_PROCESSOR_COMPUTE, NULL, 0, NULL, 0, false};
        nn_kernel_spec writer = {"tile_units.c", LM_PROCESSOR_DM1, cargs, 2, NULL, 0, false};
        nn_split split;
        nn_program p = {0};
        st = nn_split_work(op, rt->device, t.batch * t.ht * ((t.wt + block - 1) / block), &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, rt->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, frm, 32 * 32 * esize, 2 * room);
        if (!st) st = nn_program_cb(op, &p, 16, ftl, (uint32_t)lm_tile_size(ftl), 2 * room);
        if (!st) st = nn_program_kernel(op, &p, &reader, NULL);
        if (!st) st = nn_program_kernel(op, &p, &compute, NULL);
        if (!st) st = nn_program_kernel(op, &p, &writer, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, args, nargs);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, rt->device, &key, &p, &prog);
    }
    if (!st) st = nn_launch(op, prog, (nn_tensor *const[]){rt, zt}, 2);
    lmnn_tensor_free(r);
    if (st) {
        if (z.id) lmnn_tensor_free(z);
        return st;
    }
    if (rm_out) return nn_conv_flat_rm(op, z, g, oc, o->output_image_rows, memory, out);
    bool flat = o->flat_output;
    return nn_conv_finish(op, z, g, oc, flat ? LMNN_NHWC : o->input_layout, flat, memory, out);
}

/* ---- weights ---- */

/* The prepared matrix of a weight of shape `ws` (see
 * lmnn_conv2d_prepare_weights) whose float32 values `src` holds (NULL: read
 * them from `weight`), as a new tile tensor on `device`: packed in form
 * `pk`, or (a transposed convolution, stride[0] * stride[1] > 1) the phase
 * matrix of that stride, or (`compact`, groups > 1) the block-diagonal
 * matrix's compact form when that leaves tiles out. */
static lm_status prepare(const char *op, lm_device *device, bool transpose, const lmnn_shape *ws,
                         const float *src, lmnn_tensor weight, int32_t groups, lmnn_dtype dtype,
                         const lmnn_memory_config *memory, const conv_pack *pk,
                         const uint32_t *stride, bool compact, lmnn_tensor *out) {
    char s[128];
    lm_status st;
    if (ws->rank != 4)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "weight: expected rank 4 (%s), given shape %s",
                       transpose ? "C, OC / groups, KH, KW" : "OC, C / groups, KH, KW",
                       nn_shape_str(ws, s, sizeof s));
    if (groups < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "groups: expected >= 1, given %d", groups);
    const uint32_t *d = ws->dims;
    uint32_t g = (uint32_t)groups, kh = d[2], kw = d[3];
    uint32_t c, oc;
    if (transpose) {
        c = d[0];
        oc = d[1] * g;
        if (c % g)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: input channels %u (dim 0 of shape %s) are not a multiple of "
                           "groups %u",
                           c, nn_shape_str(ws, s, sizeof s), g);
    } else {
        oc = d[0];
        c = d[1] * g;
        if (oc % g)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: output channels %u (dim 0 of shape %s) are not a multiple of "
                           "groups %u",
                           oc, nn_shape_str(ws, s, sizeof s), g);
    }
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = dtype;
    to.layout = LMNN_TILE;
    to.memory = *memory;
    if ((st = nn_check_memory(op, &to.memory))) return st;
    uint64_t vol = lmnn_shape_volume(ws), rows = (uint64_t)kh * kw * c;
    if (depthwise_form(transpose, g, c, oc)) {
        /* [1, KH * KW, C]: tap t's row holds every channel's weight there
         * (the weight is [C, 1, KH, KW]), 32 taps a tile row. bfloat16 for
         * bfloat8_b: its blocks would share exponents across 16 channels. */
        if (to.dtype == LMNN_BFLOAT8_B) to.dtype = LMNN_BFLOAT16;
        float *read = src ? NULL : malloc(vol * sizeof *read), *m = malloc(vol * sizeof *m);
        if ((!src && !read) || !m)
            st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory for the weight");
        else if (!src && (st = lmnn_to_host(weight, read, vol * sizeof *read)))
            st = nn_fail_call(st, op);
        if (!st) {
            if (!src) src = read;
            for (uint32_t ci = 0; ci < c; ci++)
                for (uint32_t t = 0; t < kh * kw; t++)
                    m[(uint64_t)t * c + ci] = src[(uint64_t)ci * kh * kw + t];
            lmnn_shape ms = LMNN_SHAPE(1, kh * kw, c);
            if ((st = lmnn_from_host(device, &ms, m, vol * sizeof *m, &to, out)))
                st = nn_fail_call(st, op);
        }
        free(read);
        free(m);
        return st;
    }
    if (rows * oc > ((uint64_t)1 << 32))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "weight: shape %s is too large",
                       nn_shape_str(ws, s, sizeof s));
    float *read = src ? NULL : malloc(vol * sizeof *read), *m = calloc(rows * oc, sizeof *m);
    if ((!src && !read) || !m)
        st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory for the weight");
    if (!st && !src) {
        if ((st = lmnn_to_host(weight, read, vol * sizeof *read)))
            st = nn_fail_call(st, op);
        else
            src = read;
    }
    if (!st) {
        uint32_t cg = c / g, ocg = oc / g;
        for (uint32_t a = 0; a < d[0]; a++)
            for (uint32_t b = 0; b < d[1]; b++)
                for (uint32_t y = 0; y < kh; y++)
                    for (uint32_t x = 0; x < kw; x++) {
                        float v = src[((a * d[1] + b) * kh + y) * kw + x];
                        /* conv: a = oc, b = channel within the group;
                         * transpose: a = c, b = oc within the group, and
                         * the kernel flips. */
                        uint32_t ci = transpose ? a : a / ocg * cg + b;
                        uint32_t o = transpose ? a / cg * ocg + b : a;
                        uint32_t ty = transpose ? kh - 1 - y : y, tx = transpose ? kw - 1 - x : x;
                        m[((uint64_t)(ty * kw + tx) * c + ci) * oc + o] = v;
                    }
        lmnn_shape ms = LMNN_SHAPE((uint32_t)rows, oc);
        float *pm = m;
        if (pk->p > 1 || pk->groups > 1) {
            if (pack_rows(pk, kh, kw, c) * pack_cols(pk, oc) > ((uint64_t)1 << 32)) {
                free(read);
                free(m);
                return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "weight: shape %s is too large",
                               nn_shape_str(ws, s, sizeof s));
            }
            pm = pack_matrix(m, kh, kw, c, oc, pk);
            ms = LMNN_SHAPE((uint32_t)pack_rows(pk, kh, kw, c), (uint32_t)pack_cols(pk, oc));
        } else if (stride[0] * stride[1] > 1) {
            uint32_t sh = stride[0], sw = stride[1];
            uint64_t prows = (uint64_t)((kh + sh - 1) / sh) * ((kw + sw - 1) / sw) * c;
            if (prows * sh * sw * oc > ((uint64_t)1 << 32)) {
                free(read);
                free(m);
                return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                               "weight: shape %s is too large for its phase matrix at stride "
                               "(%u, %u)",
                               nn_shape_str(ws, s, sizeof s), sh, sw);
            }
            pm = phase_matrix(m, kh, kw, c, oc, sh, sw);
            ms = LMNN_SHAPE((uint32_t)prows, sh * sw * oc);
        } else if (compact && g > 1) {
            nn_mm_groups grp = {c, c / g, oc / g, (uint32_t)rows};
            uint64_t t = nn_group_tiles(&grp, oc);
            if (t < (rows + 31) / 32 * ((oc + 31) / 32)) {
                pm = nn_group_compact(&grp, oc, m);
                ms = LMNN_SHAPE((uint32_t)t, 32, 32);
            }
        }
        if (!pm)
            st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory for the weight");
        else if ((st = lmnn_from_host(device, &ms, pm, lmnn_shape_volume(&ms) * sizeof *m, &to,
                                      out)))
            st = nn_fail_call(st, op);
        if (pm != m) free(pm);
    }
    free(read);
    free(m);
    return st;
}

/* Whether a weight whose values are `from`'s may be prepared packed in
 * `to`: bfloat8_b shares an exponent along 16 values of a row, and packing
 * regroups rows, so bfloat8_b values put into bfloat8_b again would be
 * rounded twice (they stay plain); exact values (float32 from the host, a
 * float32 or bfloat16 weight) are rounded once, as packed. */
static bool packs(lmnn_dtype from, lmnn_dtype to) {
    return from != LMNN_BFLOAT8_B || to != LMNN_BFLOAT8_B;
}

/* A prepared matrix of shape `ws` ([KH * KW * C, OC]) in the form `opts`
 * run with (opts_form; the plain form: a copy). Its float32 values are
 * `src` (NULL: read them from `weight`, of `w_dtype`). */
static lm_status repack(const char *op, lm_device *device, const lmnn_shape *ws, const float *src,
                        lmnn_tensor weight, lmnn_dtype w_dtype, lmnn_dtype dtype,
                        const lmnn_memory_config *memory, const lmnn_conv2d_options *opts,
                        lmnn_tensor *out) {
    char s[128];
    int32_t kh = opts ? opts->kernel_size[0] : 0, kw = opts ? opts->kernel_size[1] : 0;
    if (kh < 1 || kw < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: expected (KH, KW) >= 1 with a prepared weight (shape %s), "
                       "given (%d, %d)",
                       nn_shape_str(ws, s, sizeof s), kh, kw);
    uint32_t rows = ws->dims[0], oc = ws->dims[1];
    if (rows % ((uint32_t)kh * (uint32_t)kw))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: %u rows are not KH %d * KW %d * C (shape %s)", rows, kh, kw,
                       nn_shape_str(ws, s, sizeof s));
    uint32_t c = rows / ((uint32_t)kh * (uint32_t)kw);
    conv_pack pk = {1, 1, 1};
    if (packs(w_dtype, dtype)) pk = opts_form(opts, c, (uint32_t)kh, (uint32_t)kw, oc);
    bool plain = pk.p == 1 && pk.groups == 1;
    uint64_t vol = (uint64_t)rows * oc;
    float *read = src ? NULL : malloc(vol * sizeof *read), *pm = NULL;
    lm_status st = src || read ? LM_OK : nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory");
    if (!st && !src) {
        if ((st = lmnn_to_host(weight, read, vol * sizeof *read)))
            st = nn_fail_call(st, op);
        else
            src = read;
    }
    if (!st && !(pm = plain ? (float *)(uintptr_t)src
                            : pack_matrix(src, (uint32_t)kh, (uint32_t)kw, c, oc, &pk)))
        st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory");
    if (!st) {
        lmnn_tensor_options to;
        lmnn_tensor_options_init(&to);
        to.dtype = dtype;
        to.layout = LMNN_TILE;
        to.memory = *memory;
        lmnn_shape ms = LMNN_SHAPE((uint32_t)pack_rows(&pk, (uint32_t)kh, (uint32_t)kw, c),
                                   (uint32_t)pack_cols(&pk, oc));
        st = nn_check_memory(op, &to.memory);
        if (!st &&
            (st = lmnn_from_host(device, &ms, pm, lmnn_shape_volume(&ms) * sizeof *pm, &to, out)))
            st = nn_fail_call(st, op);
    }
    if (pm != src) free(pm);
    free(read);
    return st;
}

/* lmnn_conv2d_prepare_weights of a weight of shape `ws`: its float32 values
 * `src`, or (NULL) those of `weight`, whose dtype and memory (`w_dtype`,
 * `w_memory`) the result takes unless opts->output says otherwise. */
static lm_status prepare_conv2d(const char *op, lm_device *device, const lmnn_shape *ws,
                                const float *src, lmnn_tensor weight, lmnn_dtype w_dtype,
                                const lmnn_memory_config *w_memory, const lmnn_conv2d_options *opts,
                                lmnn_tensor *out) {
    lmnn_dtype dtype = opts && opts->output.dtype ? opts->output.dtype : w_dtype;
    lmnn_memory_config memory = nn_memory_over(opts ? &opts->output.memory : NULL, *w_memory);
    if (ws->rank == 2)
        return repack(op, device, ws, src, weight, w_dtype, dtype, &memory, opts, out);
    conv_pack pk = {1, 1, 1};
    if (ws->rank == 4 && (!opts || opts->groups == 1) && packs(w_dtype, dtype))
        pk = opts_form(opts, ws->dims[1], ws->dims[2], ws->dims[3], ws->dims[0]);
    return prepare(op, device, false, ws, src, weight, opts ? opts->groups : 1, dtype, &memory, &pk,
                   (const uint32_t[]){1, 1}, true, out);
}

lm_status lmnn_conv2d_prepare_weights(lmnn_tensor weight, const lmnn_conv2d_options *opts,
                                      lmnn_tensor *out) {
    const char *op = "lmnn_conv2d_prepare_weights";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *w;
    lm_status st = nn_get_tensor(op, "weight", weight, &w);
    if (!st) st = nn_check_float(op, "weight", w);
    if (!st && w->shape.rank == 2 && w->layout != LMNN_TILE)
        st = nn_check_layout(op, "weight", w, LMNN_TILE);
    if (st) return st;
    return prepare_conv2d(op, w->device, &w->shape, NULL, weight, w->dtype, &w->memory, opts, out);
}

lm_status nn_conv_check_host_weight(const char *op, lm_device *device, const lmnn_shape *shape,
                                    const float *data, size_t size, const lmnn_tensor *out,
                                    uint32_t rank, bool matrix, const char *expected) {
    char s[128];
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    if (!shape || !data || !out)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !shape  ? "shape"
                       : !data ? "data"
                               : "out");
    if ((shape->rank != rank && !(matrix && shape->rank == 2)) || !lmnn_shape_volume(shape))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: expected %s, given %s", expected,
                       nn_shape_str(shape, s, sizeof s));
    if (size != lmnn_shape_volume(shape) * sizeof(float))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "size: shape %s of float32 needs %llu bytes, given %zu",
                       nn_shape_str(shape, s, sizeof s),
                       (unsigned long long)(lmnn_shape_volume(shape) * sizeof(float)), size);
    return LM_OK;
}

lm_status lmnn_conv2d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                           const float *data, size_t size,
                                           const lmnn_conv2d_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_conv2d_prepare_weights_host";
    lm_status st =
        nn_conv_check_host_weight(op, device, shape, data, size, out, 4, true,
                                  "[OC, C / groups, KH, KW] or a prepared [KH * KW * C, OC]");
    if (st) return st;
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    return prepare_conv2d(op, device, shape, data, (lmnn_tensor){0}, LMNN_FLOAT32, &dram, opts,
                          out);
}

lm_status lmnn_conv2d_prepare_bias(lmnn_tensor bias, lmnn_tensor prepared_weight,
                                   lmnn_tensor *out) {
    const char *op = "lmnn_conv2d_prepare_bias";
    char s1[128], s2[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *b, *w;
    lm_status st = nn_get_tensor(op, "bias", bias, &b);
    if (!st) st = nn_check_float(op, "bias", b);
    if (!st) st = nn_get_tensor(op, "prepared_weight", prepared_weight, &w);
    if (!st) st = nn_check_same_device(op, "prepared_weight", w, b);
    if (st) return st;
    const lmnn_shape *bs = &b->shape;
    uint32_t oc = bs->rank == 1 ? bs->dims[0] : bs->rank == 2 && bs->dims[0] == 1 ? bs->dims[1] : 0;
    /* The weight's columns: P * OC for a packed matrix, OC otherwise (a
     * compact grouped form [T, 32, 32] does not say: the bias's). */
    bool compact = w->shape.rank == 3 && w->shape.dims[0] > 1 && w->shape.dims[1] == 32 &&
                   w->shape.dims[2] == 32;
    uint32_t cols = w->shape.rank == 2   ? w->shape.dims[1]
                    : compact            ? oc
                    : w->shape.rank == 3 ? w->shape.dims[2] /* depthwise */
                    : w->shape.rank == 4 ? w->shape.dims[0]
                                         : 0;
    /* Only a matrix may be packed (P > 1); the other forms take [OC]. */
    if (!oc || !cols || cols % oc || (w->shape.rank != 2 && cols != oc))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "bias: shape %s does not fit prepared_weight of shape %s (expected [OC] "
                       "or [1, OC]: its output channels, or for a packed matrix a divisor of "
                       "its columns)",
                       nn_shape_str(bs, s1, sizeof s1), nn_shape_str(&w->shape, s2, sizeof s2));
    uint32_t p = w->shape.rank == 2 ? cols / oc : 1;
    float *v = malloc((size_t)oc * p * sizeof *v);
    if (!v) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory");
    if ((st = lmnn_to_host(bias, v, (size_t)oc * sizeof *v))) st = nn_fail_call(st, op);
    for (uint32_t q = 1; !st && q < p; q++)
        memcpy(v + (size_t)q * oc, v, oc * sizeof *v);
    if (!st) {
        lmnn_tensor_options to;
        lmnn_tensor_options_init(&to);
        to.dtype = b->dtype;
        to.layout = LMNN_TILE;
        to.memory = b->memory;
        lmnn_shape ps = LMNN_SHAPE(1, p * oc);
        if ((st = lmnn_from_host(b->device, &ps, v, (size_t)p * oc * sizeof *v, &to, out)))
            st = nn_fail_call(st, op);
    }
    free(v);
    return st;
}

lm_status lmnn_conv2d_prepare_bias_host(lmnn_tensor prepared_weight, const lmnn_shape *weight_shape,
                                        const float *data, size_t size,
                                        const lmnn_conv2d_options *opts, lmnn_tensor *out) {
    const char *op = "lmnn_conv2d_prepare_bias_host";
    char s1[128], s2[128], s3[128];
    if (!weight_shape || !data || !out)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s is NULL",
                       !weight_shape ? "weight_shape"
                       : !data       ? "data"
                                     : "out");
    nn_tensor *w;
    lm_status st = nn_get_tensor(op, "prepared_weight", prepared_weight, &w);
    if (st) return st;
    if (weight_shape->rank != 4 || !lmnn_shape_volume(weight_shape))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight_shape: expected [OC, C / groups, KH, KW], given %s",
                       nn_shape_str(weight_shape, s1, sizeof s1));
    const uint32_t *d = weight_shape->dims;
    uint32_t oc = d[0], c = d[1] * (opts && opts->groups > 0 ? (uint32_t)opts->groups : 1);
    if (size != (uint64_t)oc * sizeof(float))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "size: %u output channels (shape %s) need %llu bytes, given %zu", oc,
                       nn_shape_str(weight_shape, s1, sizeof s1),
                       (unsigned long long)oc * sizeof(float), size);
    /* The form prepare_conv2d gave the weight, and the shape it has then:
     * the depthwise form, or a matrix (packed for one group only). */
    conv_pack pk = {1, 1, 1};
    uint32_t g = opts && opts->groups > 0 ? (uint32_t)opts->groups : 1;
    bool dw = depthwise_form(false, g, c, oc);
    if (g == 1) pk = opts_form(opts, c, d[2], d[3], oc);
    /* (A bfloat8_b weight prepared from bfloat8_b values stays plain:
     * packs().) */
    if (w->dtype == LMNN_BFLOAT8_B && w->shape.rank == 2 && w->shape.dims[0] == d[2] * d[3] * c &&
        w->shape.dims[1] == oc)
        pk = (conv_pack){1, 1, 1};
    lmnn_shape ms =
        dw ? LMNN_SHAPE(1, d[2] * d[3], c)
           : LMNN_SHAPE((uint32_t)pack_rows(&pk, d[2], d[3], c), (uint32_t)pack_cols(&pk, oc));
    /* With groups, the block-diagonal matrix's compact form when it leaves
     * tiles out (the matrix itself is taken too). */
    if (g > 1 && !dw && oc % g == 0 && c % g == 0) {
        nn_mm_groups grp = {c, c / g, oc / g, ms.dims[0]};
        uint64_t t = nn_group_tiles(&grp, oc);
        if (t < (uint64_t)((ms.dims[0] + 31) / 32) * ((oc + 31) / 32) &&
            (w->shape.rank != 2 || w->shape.dims[0] != ms.dims[0] || w->shape.dims[1] != oc))
            ms = LMNN_SHAPE((uint32_t)t, 32, 32);
    }
    if (w->shape.rank != ms.rank || memcmp(w->shape.dims, ms.dims, ms.rank * sizeof ms.dims[0]))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "prepared_weight: shape %s is not what these options make of a weight of "
                       "shape %s (%s)",
                       nn_shape_str(&w->shape, s1, sizeof s1),
                       nn_shape_str(weight_shape, s2, sizeof s2), nn_shape_str(&ms, s3, sizeof s3));
    float *v = malloc((size_t)oc * pk.p * sizeof *v);
    if (!v) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory");
    for (uint32_t q = 0; q < pk.p; q++)
        memcpy(v + (size_t)q * oc, data, oc * sizeof *v);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = opts && opts->output.dtype ? opts->output.dtype : LMNN_FLOAT32;
    to.layout = LMNN_TILE;
    to.memory = nn_memory_over(
        opts ? &opts->output.memory : NULL,
        (lmnn_memory_config){.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED});
    lmnn_shape ps = LMNN_SHAPE(1, pk.p * oc);
    if (!(st = nn_check_memory(op, &to.memory)) &&
        (st = lmnn_from_host(w->device, &ps, v, (size_t)pk.p * oc * sizeof *v, &to, out)))
        st = nn_fail_call(st, op);
    free(v);
    return st;
}

/* lmnn_conv_transpose2d_prepare_weights of a weight of shape `ws`: the
 * phase matrix when the options run by phases, else the flipped one. */
static lm_status prepare_transpose(const char *op, lm_device *device, const lmnn_shape *ws,
                                   const float *src, lmnn_tensor weight, lmnn_dtype dtype,
                                   const lmnn_memory_config *memory,
                                   const lmnn_conv2d_options *opts, lmnn_tensor *out) {
    uint32_t stride[2] = {1, 1}, th, tw;
    if (ws->rank == 4 && phase_taps(opts, ws->dims[2], ws->dims[3], &th, &tw))
        stride[0] = (uint32_t)opts->stride[0], stride[1] = (uint32_t)opts->stride[1];
    return prepare(op, device, true, ws, src, weight, opts ? opts->groups : 1, dtype, memory,
                   &(conv_pack){1, 1, 1}, stride, false, out);
}

lm_status lmnn_conv_transpose2d_prepare_weights(lmnn_tensor weight, const lmnn_conv2d_options *opts,
                                                lmnn_tensor *out) {
    const char *op = "lmnn_conv_transpose2d_prepare_weights";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *w;
    lm_status st = nn_get_tensor(op, "weight", weight, &w);
    if (!st) st = nn_check_float(op, "weight", w);
    if (st) return st;
    lmnn_dtype dtype = opts && opts->output.dtype ? opts->output.dtype : w->dtype;
    lmnn_memory_config memory = nn_output_memory(opts ? &opts->output.memory : NULL, w);
    return prepare_transpose(op, w->device, &w->shape, NULL, weight, dtype, &memory, opts, out);
}

lm_status lmnn_conv_transpose2d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                                     const float *data, size_t size,
                                                     const lmnn_conv2d_options *opts,
                                                     lmnn_tensor *out) {
    const char *op = "lmnn_conv_transpose2d_prepare_weights_host";
    lm_status st = nn_conv_check_host_weight(op, device, shape, data, size, out, 4, false,
                                             "[C, OC / groups, KH, KW]");
    if (st) return st;
    lmnn_dtype dtype = opts && opts->output.dtype ? opts->output.dtype : LMNN_FLOAT32;
    lmnn_memory_config memory = nn_memory_over(
        opts ? &opts->output.memory : NULL,
        (lmnn_memory_config){.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED});
    return prepare_transpose(op, device, shape, data, (lmnn_tensor){0}, dtype, &memory, opts, out);
}

lm_status nn_conv_prepare_host(const char *op, lm_device *device, bool transpose,
                               const lmnn_shape *ws, const float *src, int32_t groups,
                               lmnn_dtype dtype, const lmnn_memory_config *memory,
                               lmnn_tensor *out) {
    return prepare(op, device, transpose, ws, src, (lmnn_tensor){0}, groups, dtype, memory,
                   &(conv_pack){1, 1, 1}, (const uint32_t[]){1, 1}, false, out);
}

/* ---- the ops ---- */

/* The options' activation as lmnn_unary takes it (*out_uo: its own
 * defaults where alpha or beta is NaN), its nn_unary_chain parameters, and
 * whether f(0) may be nonzero (exactly, for a clamp: whether its range
 * leaves out 0). "<op>: activation: ..." errors. */
static lm_status conv_activation(const char *op, const lmnn_conv2d_options *opts,
                                 lmnn_unary_options *out_uo, uint32_t params[NN_UNARY_PARAMS],
                                 bool *out_nonzero) {
    lmnn_unary_options_init(out_uo, opts->activation);
    if (!isnan(opts->activation_alpha)) out_uo->alpha = opts->activation_alpha;
    if (!isnan(opts->activation_beta)) out_uo->beta = opts->activation_beta;
    char chain[512];
    lm_status st = nn_unary_chain(op, "activation", opts->activation, out_uo->alpha, out_uo->beta,
                                  chain, sizeof chain, params, out_nonzero);
    if (!st && (opts->activation == LMNN_CLAMP || opts->activation == LMNN_HARDTANH))
        *out_nonzero = !(out_uo->alpha <= 0 && out_uo->beta >= 0);
    return st;
}

/* The depthwise convolution (depthwise_form) of image rows `img` by
 * prepared weight wp ([1, KH * KW, C]): each tap's [M, C] patch matrix
 * times its row of weights, products and their sum over the taps in
 * float32 as the patches are gathered (NN_PATCH_DEPTHWISE: neither patches
 * nor products are stored), then the bias and the activation, rounded once
 * to `dtype`. *out is [M, C], M = N * OH * OW, in tiles. One launch, whatever
 * the channels and taps, that also adds the bias and applies the activation
 * unless the padding would not stay zero through them (an activation with
 * f(0) != 0; a bfloat8_b bias): those then follow the float32 sums in a
 * second, which writes into `memory` when not NULL (else nn_conv_finish
 * moves the result). */
static lm_status depthwise(const char *op, nn_tensor *img, const nn_conv_geom *g, lmnn_tensor wp,
                           lmnn_tensor bias, const lmnn_conv2d_options *opts, lmnn_dtype dtype,
                           const lmnn_memory_config *memory, lmnn_tensor *out) {
    lmnn_tensor sum = {0};
    nn_conv_depthwise dwo = {.activation = LMNN_UNARY_INVALID};
    lm_status st = nn_get_tensor(op, "weight", wp, &dwo.weights);
    if (!st && bias.id) st = nn_get_tensor(op, "bias", bias, &dwo.bias);
    if (st) return st;
    /* The bias and the activation join the sums before they are stored
     * when the padding stays zero through them (nn_conv_depthwise). */
    bool fused = true;
    lmnn_unary_options uo = {0};
    if (opts->activation != LMNN_UNARY_INVALID) {
        bool nonzero;
        if ((st = conv_activation(op, opts, &uo, dwo.params, &nonzero))) return st;
        fused = !nonzero;
        dwo.activation = opts->activation;
    }
    const nn_tensor *b = dwo.bias;
    if (b && (b->layout != LMNN_TILE || b->memory.layout != LM_BUFFER_INTERLEAVED ||
              (b->dtype != LMNN_FLOAT32 && b->dtype != LMNN_BFLOAT16)))
        fused = false;
    if (fused) return nn_conv_im2col(op, img, g, NN_PATCH_DEPTHWISE, 0, dtype, 1, &dwo, out);
    /* Else the float32 sums, then the rest as its own operation. */
    dwo.bias = NULL, dwo.activation = LMNN_UNARY_INVALID;
    st = nn_conv_im2col(op, img, g, NN_PATCH_DEPTHWISE, 0, LMNN_FLOAT32, 1, &dwo, &sum);
    if (!st && bias.id) {
        lmnn_binary_options add;
        lmnn_binary_options_init(&add);
        add.output.dtype = dtype;
        if (memory) add.output.memory = *memory;
        add.activation = opts->activation;
        add.activation_alpha = opts->activation_alpha;
        add.activation_beta = opts->activation_beta;
        if ((st = lmnn_binary(LMNN_BINARY_ADD, sum, bias, &add, out))) st = nn_fail_call(st, op);
    } else if (!st) {
        uo.output.dtype = dtype;
        if (memory) uo.output.memory = *memory;
        if ((st = lmnn_unary(opts->activation, sum, &uo, out))) st = nn_fail_call(st, op);
    }
    lmnn_tensor_free(sum);
    return st;
}

/* Whether image x of convolution g is its own patch matrix: a 1x1 kernel of
 * stride 1 without padding, over a float32 or bfloat16 NHWC (or flat) image
 * in interleaved tiles whose rows are the pixels in order, [..., M, C] with
 * M a whole number of tile rows or nothing before it. */
static bool pointwise_tiles(const nn_tensor *x, const nn_conv_geom *g,
                            const lmnn_conv2d_options *opts, const int32_t *flat_in) {
    if (g->kh != 1 || g->kw != 1 || g->sh != 1 || g->sw != 1 || g->pt || g->pl || g->oh != g->h ||
        g->ow != g->w || g->planes > 1 || g->kd != 1 || g->sd != 1 || g->pd || g->od != g->d)
        return false;
    bool flat = flat_in[0] || flat_in[1] || flat_in[2];
    if (x->layout != LMNN_TILE || (x->dtype != LMNN_FLOAT32 && x->dtype != LMNN_BFLOAT16) ||
        x->memory.layout != LM_BUFFER_INTERLEAVED || (!flat && opts->input_layout != LMNN_NHWC))
        return false;
    const lmnn_shape *s = &x->shape;
    if (s->rank < 2 || s->dims[s->rank - 1] != g->c) return false;
    uint64_t lead = 1, rows = s->dims[s->rank - 2];
    for (uint32_t d = 0; d + 2 < s->rank; d++)
        lead *= s->dims[d];
    return lead * rows == (uint64_t)g->n * g->h * g->w && (lead == 1 || rows % 32 == 0);
}

static lm_status check_pair(const char *op, const char *arg, const int32_t *v, int32_t min) {
    for (int i = 0; i < 2; i++)
        if (v[i] < min)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%s: expected (h, w) >= %d, given (%d, %d)",
                           arg, min, v[0], v[1]);
    return LM_OK;
}

/* Checks a grouped weight's compact form `w` ([T, 32, 32], see
 * lmnn_conv2d_prepare_weights) against the call: groups g > 1, a KH x KW
 * kernel over c input channels and `out_channels` (*oc), whose matrix's
 * compact form has T tiles. */
static lm_status compact_weight(const char *op, const nn_tensor *w, bool transpose, uint32_t c,
                                uint32_t kh, uint32_t kw, uint32_t g, int32_t out_channels,
                                uint32_t *oc) {
    char s1[128];
    nn_shape_str(&w->shape, s1, sizeof s1);
    if (transpose || g < 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: shape %s is a compact grouped weight, which only a convolution "
                       "of groups > 1 takes (given groups %u%s)",
                       s1, g, transpose ? ", transposed" : "");
    if (out_channels < 1 || (uint32_t)out_channels % g)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "out_channels: expected a multiple of groups %u with a compact grouped "
                       "weight (shape %s), given %d",
                       g, s1, out_channels);
    uint64_t rows = (uint64_t)kh * kw * c;
    nn_mm_groups grp = {c, c / g, (uint32_t)out_channels / g, (uint32_t)rows};
    uint64_t t = rows > UINT32_MAX ? 0 : nn_group_tiles(&grp, (uint32_t)out_channels);
    if (t != w->shape.dims[0])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: shape %s is not the compact form of a %u x %u kernel over %u "
                       "channels in %u groups to %d outputs (which has %llu tiles)",
                       s1, kh, kw, c, g, out_channels, (unsigned long long)t);
    if (w->layout != LMNN_TILE) return nn_check_layout(op, "weight", w, LMNN_TILE);
    *oc = (uint32_t)out_channels;
    return LM_OK;
}

/* The channels of weight `w` in PyTorch's layout (dim 0 and 1, any
 * kernel): its input channels must be the input's c, and a convolution's
 * output channels (*oc) divide by the groups g. */
static lm_status weight_channels(const char *op, bool transpose, const nn_tensor *w,
                                 const nn_tensor *x, uint32_t c, uint32_t g, uint32_t *oc) {
    char s1[128], s2[128];
    const uint32_t *d = w->shape.dims;
    uint32_t wc = transpose ? d[0] : d[1] * g;
    *oc = transpose ? d[1] * g : d[0];
    if (wc != c)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: shape %s expects %u input channels (%s), given input shape %s",
                       nn_shape_str(&w->shape, s1, sizeof s1), wc,
                       transpose ? "dim 0" : "dim 1 * groups",
                       nn_shape_str(&x->shape, s2, sizeof s2));
    if (!transpose && *oc % g)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: output channels %u (dim 0 of shape %s) are not a multiple of "
                       "groups %u",
                       *oc, nn_shape_str(&w->shape, s1, sizeof s1), g);
    return LM_OK;
}

/* The kernel of a 3-D convolution's weight `w` (*kd x *kh x *kw) and its
 * output channels: rank 5 in PyTorch's layout, or prepared for the kernel
 * the options give, as a matrix [KD * KH * KW * C, OC] or in the depthwise
 * form [1, KD * KH * KW, C]; *ws4: the weight's shape with KD and KH as
 * one dim (rank 5), the form the 2-D preparation takes. */
static lm_status weight_3d(const char *op, bool transpose, const nn_tensor *w, const nn_tensor *x,
                           uint32_t c, uint32_t g, const lmnn_conv2d_options *opts,
                           const nn_conv_depth *dp, uint32_t *kd, uint32_t *kh, uint32_t *kw,
                           uint32_t *oc, lmnn_shape *ws4) {
    char s1[128];
    const uint32_t *d = w->shape.dims;
    if (w->shape.rank == 5) {
        *kd = d[2], *kh = d[3], *kw = d[4];
        lm_status st = weight_channels(op, transpose, w, x, c, g, oc);
        if (st) return st;
        if ((dp->kd && dp->kd != *kd) ||
            (opts->kernel_size[0] && (uint32_t)opts->kernel_size[0] != *kh) ||
            (opts->kernel_size[1] && (uint32_t)opts->kernel_size[1] != *kw))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "kernel_size: (%u, %d, %d) does not match the weight's shape %s", dp->kd,
                           opts->kernel_size[0], opts->kernel_size[1],
                           nn_shape_str(&w->shape, s1, sizeof s1));
        *ws4 = LMNN_SHAPE(d[0], d[1], d[2] * d[3], d[4]);
        return LM_OK;
    }
    bool matrix = w->shape.rank == 2, depthwise = w->shape.rank == 3 && d[0] == 1;
    if (!matrix && !depthwise)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: expected rank 5 (%s), a prepared [KD * KH * KW * C, OC] or a "
                       "prepared depthwise [1, KD * KH * KW, C], given shape %s",
                       transpose ? "C, OC / groups, KD, KH, KW" : "OC, C / groups, KD, KH, KW",
                       nn_shape_str(&w->shape, s1, sizeof s1));
    if (!dp->kd || !opts->kernel_size[0] || !opts->kernel_size[1])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: expected (KD, KH, KW) >= 1 with a prepared weight (shape "
                       "%s), given (%u, %d, %d)",
                       nn_shape_str(&w->shape, s1, sizeof s1), dp->kd, opts->kernel_size[0],
                       opts->kernel_size[1]);
    *kd = dp->kd, *kh = (uint32_t)opts->kernel_size[0], *kw = (uint32_t)opts->kernel_size[1];
    uint64_t taps = (uint64_t)*kd * *kh * *kw;
    if (depthwise && (transpose || g != c || d[1] != taps || d[2] != c))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: shape %s is not a prepared depthwise weight for these options "
                       "(expected [1, KD * KH * KW, C] = [1, %llu, %u], groups = C, not "
                       "transposed)",
                       nn_shape_str(&w->shape, s1, sizeof s1), (unsigned long long)taps, c);
    if (matrix && d[0] != taps * c)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: expected a prepared weight of %llu rows (KD %u * KH %u * KW %u * "
                       "C %u), given shape %s",
                       (unsigned long long)(taps * c), *kd, *kh, *kw, c,
                       nn_shape_str(&w->shape, s1, sizeof s1));
    *oc = matrix ? d[1] : c;
    if (w->layout != LMNN_TILE) return nn_check_layout(op, "weight", w, LMNN_TILE);
    *ws4 = w->shape;
    return LM_OK;
}

/* The depth of 3-D window g: n batch entries of d images each, a kernel of
 * kd depth taps; dp's stride, dilation and padding (for a transposed
 * convolution, a stride-1 window over the images with stride - 1 empty ones
 * between them, padded by the kernel's reach minus the padding). */
static lm_status depth_geom(const char *op, bool transpose, const nn_conv_depth *dp, uint32_t n,
                            uint32_t d, uint32_t kd, nn_conv_geom *g) {
    int64_t ed = (int64_t)dp->dilation * (kd - 1) + 1;
    int64_t pads = (int64_t)dp->pad_front + dp->pad_back, od;
    if (!transpose) {
        if (ed > (int64_t)d + pads)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "kernel_size: the dilated kernel's depth (%lld) is larger than the "
                           "padded input's (%lld)",
                           (long long)ed, (long long)d + pads);
        od = ((int64_t)d + pads - ed) / dp->stride + 1;
        g->sd = dp->stride;
        g->pd = dp->pad_front;
        g->ud = 1;
    } else {
        od = ((int64_t)d - 1) * dp->stride - pads + ed + dp->output_padding;
        if (od < 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: the output would be empty (depth %lld)", (long long)od);
        g->sd = 1;
        g->ud = dp->stride;
        g->pd = (int32_t)(ed - 1) - dp->pad_front;
    }
    if ((uint64_t)od * n > (1u << 30))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "input: the output (%u batch entries of depth %lld) is too large", n,
                       (long long)od);
    g->sp = 3;
    g->d = d;
    g->od = (uint32_t)od;
    g->kd = kd;
    g->dd = dp->dilation;
    g->n = n * (uint32_t)od;
    return LM_OK;
}

/* Whether matrix shape d ([rows, cols]) is a pooled form (pool_pack's, of
 * any P) for a kh x kw kernel of c channels and pooling pl: its P read from
 * the rows, its OC from the columns (which grow with OC: the last group is
 * not rounded). */
static bool pack_decode(const uint32_t *d, uint32_t kh, uint32_t kw, uint32_t c,
                        const conv_pool *pl, conv_pack *out, uint32_t *out_oc) {
    uint64_t khc = (uint64_t)kh * c, least = (uint64_t)kw + pl->kw - 1;
    if (d[0] % khc || d[0] / khc < least || (d[0] / khc - least) % pl->sw) return false;
    uint64_t p = (d[0] / khc - least) / pl->sw + 1;
    if (p > 8) return false;
    conv_pack pk = {(uint32_t)p, pl->sw, pl->kw};
    for (uint32_t oc = 1; oc * p <= 256; oc++) {
        uint64_t cols = pack_cols(&pk, oc);
        if (cols > d[1]) break;
        if (cols == d[1]) {
            *out = pk;
            *out_oc = oc;
            return true;
        }
    }
    return false;
}

/* Convolution gm with options o and then lmnn_max_pool2d of pooling pl,
 * for a pooling the product does not take: the pooling reads the
 * convolution's result in the form o asks for and gives its own in it. */
static lm_status conv_then_pool(const char *op, lmnn_tensor input, lmnn_tensor weight,
                                lmnn_tensor bias, const lmnn_conv2d_options *o,
                                const nn_conv_geom *gm, const conv_pool *pl, lmnn_tensor *out) {
    lmnn_conv2d_options co = *o;
    co.pool_kernel[0] = co.pool_kernel[1] = co.pool_stride[0] = co.pool_stride[1] = 0;
    lmnn_tensor y;
    lm_status st = nn_conv_run(op, false, input, weight, bias, &co, NULL, &y);
    if (st) return st;
    lmnn_pool2d_options po;
    lmnn_pool2d_options_init(&po);
    po.kernel_size[0] = (int32_t)pl->kh;
    po.kernel_size[1] = (int32_t)pl->kw;
    po.stride[0] = (int32_t)pl->sh;
    po.stride[1] = (int32_t)pl->sw;
    po.input_layout = o->flat_output ? LMNN_NHWC : o->input_layout;
    if (o->flat_output) {
        po.batch_size = (int32_t)gm->n;
        po.input_height = (int32_t)gm->oh;
        po.input_width = (int32_t)gm->ow;
        po.flat_output = true;
        po.output_layout = o->output_layout;
        po.output_image_rows = o->output_image_rows;
    }
    po.output = o->output;
    st = lmnn_max_pool2d(y, &po, out);
    lmnn_tensor_free(y);
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_conv_run(const char *op, bool transpose, lmnn_tensor input, lmnn_tensor weight,
                      lmnn_tensor bias, const lmnn_conv2d_options *opts, const nn_conv_depth *dp,
                      lmnn_tensor *out) {
    char s1[128];
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_conv2d_options defaults;
    if (!opts) {
        lmnn_conv2d_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *x, *w, *b = NULL;
    lm_status st = nn_get_tensor(op, "input", input, &x);
    if (!st) st = nn_check_float(op, "input", x);
    if (!st) st = nn_get_tensor(op, "weight", weight, &w);
    if (!st) st = nn_check_same_device(op, "weight", w, x);
    if (!st) st = nn_check_float(op, "weight", w);
    if (!st && bias.id) {
        st = nn_get_tensor(op, "bias", bias, &b);
        if (!st) st = nn_check_same_device(op, "bias", b, x);
        if (!st) st = nn_check_float(op, "bias", b);
    }
    uint32_t n = 0, c = 0, id = 1, h = 0, wd = 0;
    const int32_t flat_in[3] = {opts->batch_size, opts->input_height, opts->input_width};
    bool flat3 = dp && dp->depth; /* a flat volume: N * D images of the 2-D options */
    if (!st && dp && !flat3 && x->shape.rank != 5)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "input: expected rank 5 (%s), given shape %s",
                       opts->input_layout == LMNN_NHWC ? "N, D, H, W, C" : "N, C, D, H, W",
                       nn_shape_str(&x->shape, s1, sizeof s1));
    if (!st)
        st = nn_conv_image_dims(op, x, opts->input_layout, flat_in, &n, &c, dp ? &id : NULL, &h,
                                &wd);
    if (!st && flat3) {
        id = dp->depth;
        n /= id;
    }
    if (!st) st = check_pair(op, "stride", opts->stride, 1);
    if (!st) st = check_pair(op, "dilation", opts->dilation, 1);
    if (!st) st = check_pair(op, "output_padding", opts->output_padding, 0);
    if (!st) st = check_pair(op, "kernel_size", opts->kernel_size, 0);
    if (st) return st;
    /* The patches' dtype where they are tilized here (0: the image's). */
    lmnn_dtype in_dtype = opts->input_dtype == x->dtype ? 0 : opts->input_dtype;
    if ((st = nn_check_input_dtype(op, "the input's", in_dtype))) return st;
    /* A max pooling after it (pool_of; fused below where it can be). */
    const int32_t *pk = opts->pool_kernel, *ps = opts->pool_stride;
    if (pk[0] < 0 || pk[1] < 0 || (pk[0] > 0) != (pk[1] > 0))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "pool_kernel: expected (KH, KW) >= 1, or (0, 0) for no pooling, given (%d, "
                       "%d)",
                       pk[0], pk[1]);
    if (ps[0] < 0 || ps[1] < 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "pool_stride: expected >= 1, or 0 for the kernel's, given (%d, %d)", ps[0],
                       ps[1]);
    conv_pool pool = pool_of(opts);
    if (pool.kh && (transpose || dp))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "pool_kernel: only lmnn_conv2d fuses a pooling, given (%d, %d)", pk[0],
                       pk[1]);
    for (int i = 0; i < 4; i++)
        if (opts->padding[i] < 0)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: expected [top, bottom, left, right] >= 0, given [%d, %d, %d, "
                           "%d]",
                           opts->padding[0], opts->padding[1], opts->padding[2], opts->padding[3]);
    if (opts->groups < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "groups: expected >= 1, given %d",
                       opts->groups);
    uint32_t g = (uint32_t)opts->groups;
    if (c % g)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "groups: input channels %u (shape %s) are not a multiple of groups %u", c,
                       nn_shape_str(&x->shape, s1, sizeof s1), g);
    if (!transpose && (opts->output_padding[0] || opts->output_padding[1]))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_padding: expected (0, 0) (conv_transpose2d only), given (%d, %d)",
                       opts->output_padding[0], opts->output_padding[1]);
    /* The weight: PyTorch's layout or prepared (packed, by phases or
     * neither). */
    uint32_t kd = 1, kh = 0, kw = 0, oc = 0, pack = 1, th = 0, tw = 0;
    bool phases = false;
    /* A prepared weight in a pooled form (pack_decode), its form. */
    bool pooled_w = false;
    conv_pack wform = {1, 1, 1};
    /* Prepared: a matrix, the depthwise form [1, KH * KW, C] or a grouped
     * matrix's compact form [T, 32, 32] (T > 1). */
    bool compact = w->shape.rank == 3 && w->shape.dims[0] > 1 && w->shape.dims[1] == 32 &&
                   w->shape.dims[2] == 32;
    bool prepared = w->shape.rank == 2 || (w->shape.rank == 3 && w->shape.dims[0] == 1) || compact;
    const uint32_t *d = w->shape.dims;
    lmnn_shape ws = w->shape; /* as prepare() takes it */
    if (dp) {
        if ((st = weight_3d(op, transpose, w, x, c, g, opts, dp, &kd, &kh, &kw, &oc, &ws)))
            return st;
    } else if (prepared && (!opts->kernel_size[0] || !opts->kernel_size[1])) {
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: expected (KH, KW) >= 1 with a prepared weight (shape %s), "
                       "given (%d, %d)",
                       nn_shape_str(&w->shape, s1, sizeof s1), opts->kernel_size[0],
                       opts->kernel_size[1]);
    } else if (compact) {
        kh = (uint32_t)opts->kernel_size[0];
        kw = (uint32_t)opts->kernel_size[1];
        if ((st = compact_weight(op, w, transpose, c, kh, kw, g, opts->out_channels, &oc)))
            return st;
    } else if (prepared && w->shape.rank == 3) {
        kh = (uint32_t)opts->kernel_size[0];
        kw = (uint32_t)opts->kernel_size[1];
        oc = c;
        if (transpose || g != c || d[0] != 1 || d[1] != kh * kw || d[2] != c)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: shape %s is not a prepared depthwise weight for these "
                           "options (expected [1, KH * KW, C] = [1, %u, %u], groups = C, not "
                           "transposed)",
                           nn_shape_str(&w->shape, s1, sizeof s1), kh * kw, c);
        if (w->layout != LMNN_TILE) return nn_check_layout(op, "weight", w, LMNN_TILE);
    } else if (prepared) {
        kh = (uint32_t)opts->kernel_size[0];
        kw = (uint32_t)opts->kernel_size[1];
        oc = d[1];
        /* Packed for `pack` output pixels per patch row (see pack_factor):
         * KW + pack - 1 taps a row, pack * OC columns; or a transposed
         * convolution's phase matrix, TH * TW taps, SH * SW * OC columns. */
        uint64_t khc = (uint64_t)kh * c, phs = (uint64_t)opts->stride[0] * opts->stride[1];
        bool by_phases = transpose && phase_taps(opts, kh, kw, &th, &tw);
        if (pool.kh && pack_decode(d, kh, kw, c, &pool, &wform, &oc)) {
            pooled_w = true;
            pack = wform.p;
        } else if (by_phases && d[0] == (uint64_t)th * tw * c && d[1] % phs == 0) {
            phases = true;
            oc = (uint32_t)(d[1] / phs);
        } else if (d[0] % khc == 0 && d[0] / khc > kw && d[1] % (d[0] / khc - kw + 1) == 0) {
            pack = (uint32_t)(d[0] / khc - kw + 1);
            oc = d[1] / pack;
        } else if ((uint64_t)kh * kw * c != d[0] && by_phases) {
            /* These options run by phases: say so, with the phase form. */
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: expected a prepared weight of %llu rows (KH %u * KW %u * C "
                           "%u), or by phases at stride (%d, %d) %llu rows (TH %u * TW %u * C %u) "
                           "and %llu columns per output channel, given shape %s",
                           (unsigned long long)kh * kw * c, kh, kw, c, opts->stride[0],
                           opts->stride[1], (unsigned long long)th * tw * c, th, tw, c,
                           (unsigned long long)phs, nn_shape_str(&w->shape, s1, sizeof s1));
        } else if ((uint64_t)kh * kw * c != d[0]) {
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: expected a prepared weight of %llu rows (KH %u * KW %u * C "
                           "%u), given shape %s",
                           (unsigned long long)kh * kw * c, kh, kw, c,
                           nn_shape_str(&w->shape, s1, sizeof s1));
        }
        if (w->layout != LMNN_TILE) return nn_check_layout(op, "weight", w, LMNN_TILE);
    } else if (w->shape.rank == 4) {
        kh = d[2];
        kw = d[3];
        if ((st = weight_channels(op, transpose, w, x, c, g, &oc))) return st;
        if ((opts->kernel_size[0] && (uint32_t)opts->kernel_size[0] != kh) ||
            (opts->kernel_size[1] && (uint32_t)opts->kernel_size[1] != kw))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "kernel_size: (%d, %d) does not match the weight's shape %s",
                           opts->kernel_size[0], opts->kernel_size[1],
                           nn_shape_str(&w->shape, s1, sizeof s1));
        phases = transpose && phase_taps(opts, kh, kw, &th, &tw);
    } else {
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: expected rank 4 (%s), a prepared [KH * KW * C, OC], a prepared "
                       "depthwise [1, KH * KW, C] or a compact grouped [T, 32, 32], given shape "
                       "%s",
                       transpose ? "C, OC / groups, KH, KW" : "OC, C / groups, KH, KW",
                       nn_shape_str(&w->shape, s1, sizeof s1));
    }
    /* (A prepared weight's columns are checked here.) */
    if (oc % g)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "groups: the weight's %u output channels (shape %s) are not a multiple of "
                       "groups %u",
                       oc, nn_shape_str(&w->shape, s1, sizeof s1), g);
    if (opts->out_channels && (opts->out_channels < 0 || (uint32_t)opts->out_channels != oc))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "out_channels: given %d, but the weight (shape %s) has %u output channels",
                       opts->out_channels, nn_shape_str(&w->shape, s1, sizeof s1), oc);
    /* The bias: [OC] or [1, OC], or prepared for the output pixels per
     * patch row (checked below, once they are known). */
    uint32_t bias_n = 0;
    if (b) {
        const lmnn_shape *bs = &b->shape;
        bias_n = bs->rank == 1 ? bs->dims[0] : bs->rank == 2 && bs->dims[0] == 1 ? bs->dims[1] : 0;
        if (!bias_n || bias_n % oc)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "bias: expected shape [%u] or [1, %u], given %s", oc, oc,
                           nn_shape_str(bs, s1, sizeof s1));
    }
    /* The window. */
    nn_conv_geom gm = {.n = n, .h = h, .w = wd, .c = c, .kh = kh, .kw = kw};
    nn_conv_geom_2d(&gm);
    if (dp && (st = depth_geom(op, transpose, dp, n, id, kd, &gm))) return st;
    int64_t ph = (int64_t)opts->padding[0] + opts->padding[1],
            pw = (int64_t)opts->padding[2] + opts->padding[3];
    int64_t eh = (int64_t)opts->dilation[0] * (kh - 1) + 1,
            ew = (int64_t)opts->dilation[1] * (kw - 1) + 1;
    int64_t oh, ow;
    if (!transpose) {
        if (eh > (int64_t)h + ph || ew > (int64_t)wd + pw)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "kernel_size: the dilated kernel (%lld x %lld) is larger than the "
                           "padded input (%lld x %lld)",
                           (long long)eh, (long long)ew, (long long)h + ph, (long long)wd + pw);
        oh = ((int64_t)h + ph - eh) / opts->stride[0] + 1;
        ow = ((int64_t)wd + pw - ew) / opts->stride[1] + 1;
        gm.sh = opts->stride[0];
        gm.sw = opts->stride[1];
        gm.pt = opts->padding[0];
        gm.pl = opts->padding[2];
        gm.uh = gm.uw = 1;
    } else {
        for (int i = 0; i < 2; i++) {
            int32_t lim = opts->stride[i] > opts->dilation[i] ? opts->stride[i] : opts->dilation[i];
            if (opts->output_padding[i] >= lim)
                return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                               "output_padding: expected below max(stride, dilation) = %d along "
                               "%s, given %d",
                               lim, i ? "w" : "h", opts->output_padding[i]);
        }
        oh = ((int64_t)h - 1) * opts->stride[0] - ph + eh - 1 + opts->output_padding[0] + 1;
        ow = ((int64_t)wd - 1) * opts->stride[1] - pw + ew - 1 + opts->output_padding[1] + 1;
        if (oh < 1 || ow < 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: the output would be empty (%lld x %lld)", (long long)oh,
                           (long long)ow);
        /* A stride-1 convolution of the input with stride - 1 zeros between
         * its pixels, padded by the kernel's reach minus the padding. */
        gm.sh = gm.sw = 1;
        gm.uh = opts->stride[0];
        gm.uw = opts->stride[1];
        gm.pt = (int32_t)(eh - 1) - opts->padding[0];
        gm.pl = (int32_t)(ew - 1) - opts->padding[2];
    }
    if (oh > (1 << 24) || ow > (1 << 24))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "input: the output (%lld x %lld) is too large",
                       (long long)oh, (long long)ow);
    gm.oh = (uint32_t)oh;
    gm.ow = (uint32_t)ow;
    gm.dh = opts->dilation[0];
    gm.dw = opts->dilation[1];
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : in_dtype ? in_dtype : x->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, x);
    if ((st = nn_check_memory(op, &memory))) return st;
    bool flat = opts->flat_output, rm_out;
    if ((st = nn_conv_output_layout(op, flat, opts->output_layout, opts->output_image_rows, dtype,
                                    &rm_out)))
        return st;
    if (opts->fp32_accumulate > LMNN_FP32_ACC_OFF)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "fp32_accumulate: unknown value %d",
                       (int)opts->fp32_accumulate);
    if (opts->activation != LMNN_UNARY_INVALID) {
        lmnn_unary_options uo;
        uint32_t params[NN_UNARY_PARAMS];
        bool nz;
        if ((st = conv_activation(op, opts, &uo, params, &nz))) return st;
    }

    /* The pooling: fused into the product (its output rows gathered once
     * per window row, its window columns the weight's column groups:
     * pool_pack), else after it. */
    conv_pack form = {1, 1, 1};
    bool pooled = false;
    nn_conv_geom go = gm; /* the output's image: the pooling's */
    if (pool.kh) {
        if (gm.oh < pool.kh || gm.ow < pool.kw)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "pool_kernel: (%u, %u) is larger than the convolution's output (%u x "
                           "%u)",
                           pool.kh, pool.kw, gm.oh, gm.ow);
        go.oh = (gm.oh - pool.kh) / pool.sh + 1;
        go.ow = (gm.ow - pool.kw) / pool.sw + 1;
        pooled = pool_fuses(opts) && !transpose && (prepared || w->dtype != LMNN_BFLOAT8_B) &&
                 pool_pack(&gm, oc, &pool, rm_out ? 8 : 1, &form);
        char take[64] = "do not fuse it";
        if (pooled) snprintf(take, sizeof take, "take %u", form.p);
        if (pooled_w && (!pooled || form.p != wform.p))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "weight: shape %s is prepared for a pooling fused into the product, "
                           "%u output pixels per patch row, and these options %s (prepare it with "
                           "the options of this call)",
                           nn_shape_str(&w->shape, s1, sizeof s1), wform.p, take);
        /* (A weight prepared without the pooling runs without it.) */
        if (!pooled || (prepared && !pooled_w))
            return conv_then_pool(op, input, weight, bias, opts, &gm, &pool, out);
        pack = form.p;
    }
    /* Output pixels per patch row (a row-major result only: the product's
     * tiles are not the output's); a prepared weight says how many. */
    if (!pooled && !prepared && rm_out && !transpose && g == 1 && w->dtype != LMNN_BFLOAT8_B && !dp)
        pack = pack_factor(&gm, oc);
    if (!pooled && prepared && pack > 1 && (!rm_out || transpose || pack != pack_factor(&gm, oc)))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: shape %s is prepared for %u output pixels per patch row, and "
                       "these options take %u (prepare it with the options of this call)",
                       nn_shape_str(&w->shape, s1, sizeof s1), pack,
                       rm_out && !transpose ? pack_factor(&gm, oc) : 1);
    /* Columns per output channel: output pixels per patch row, or phases. */
    uint32_t reps = phases ? (uint32_t)(opts->stride[0] * opts->stride[1]) : pack;
    if (b && bias_n != oc && bias_n != reps * oc)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "bias: shape %s is prepared for %u %s, and these options take %u "
                       "(expected [%u] or [1, %u]; prepare it with the options of this call)",
                       nn_shape_str(&b->shape, s1, sizeof s1), bias_n / oc,
                       phases ? "phases" : "output pixels per patch row", reps, oc, oc);
    nn_conv_geom gp = gm;
    uint32_t crop[2] = {0, 0};
    if (phases) phase_geom(&gm, opts, th, tw, &gp, crop);
    if (pooled) {
        /* Window row 0's output rows; the reader moves down pstep rows for
         * each next one. */
        gp.oh = go.oh;
        gp.ow = go.ow / pack;
        gp.sh = gm.sh * (int32_t)pool.sh;
        gp.sw = (int32_t)(pack * pool.sw);
        gp.kw = pack_taps(&form, kw);
        gp.prow = pool.kh;
        gp.pstep = gm.sh;
    } else if (pack > 1) {
        form.p = pack;
        gp.kw = kw + pack - 1;
        gp.sw = (int32_t)pack;
        gp.ow = gm.ow / pack;
    }

    /* Run: weight matrix, bias in tiles, image rows, patches, product. */
    lmnn_tensor wp = weight, bt = bias, rows = {0}, patches = {0}, y = {0};
    nn_tensor *img;
    uint32_t phase_stride[2] = {phases ? (uint32_t)opts->stride[0] : 1,
                                phases ? (uint32_t)opts->stride[1] : 1};
    if (!prepared)
        st = prepare(op, w->device, transpose, &ws, NULL, weight, opts->groups, w->dtype,
                     &w->memory, &form, phase_stride, false, &wp);
    if (!st && b && b->layout != LMNN_TILE) {
        st = lmnn_to_layout(bias, LMNN_TILE, &bt);
        if (st) st = nn_fail_call(st, op);
    }
    if (!st && b && reps > 1 && bias_n == oc) {
        lmnn_tensor pb;
        st = pack_bias(op, bt, oc, reps, &pb);
        if (!st) {
            drop(bt, bias);
            bt = pb;
        }
    }
    /* A prepared block-diagonal matrix still runs as one product. */
    bool dw =
        (w->shape.rank == 3 && !compact) || (!prepared && depthwise_form(transpose, g, c, oc));
    /* An NCHW image of few channels is read as it is (its transpose to
     * NHWC tiles would be mostly padding). */
    uint32_t esize = nn_rm_elem_size(x->dtype == LMNN_FLOAT32 ? LMNN_FLOAT32 : LMNN_BFLOAT16);
    bool planes = opts->input_layout == LMNN_NCHW && !dw &&
                  x->memory.layout == LM_BUFFER_INTERLEAVED && nn_conv_planes_fit(&gp, esize);
    if (planes) gp.planes = c;
    /* A 1x1 convolution of stride 1 reads each pixel's channels as they
     * are: an image already in NHWC tiles, pixel after pixel, is its own
     * patch matrix. */
    bool direct = !st && !dw && (!transpose || phases) && pack == 1 && !pooled &&
                  pointwise_tiles(x, &gp, opts, flat_in);
    /* Those two tilize no patches here: another input dtype is a typecast
     * first. */
    lmnn_tensor xin = input, cast = {0};
    if (!st && in_dtype && (direct || dw)) {
        if ((st = lmnn_typecast(input, in_dtype, &cast)))
            st = nn_fail_call(st, op);
        else if (!(st = nn_get_tensor(op, "input", cast, &x)))
            xin = cast, in_dtype = 0;
    }
    if (direct) patches = xin;
    if (!st && !direct)
        st = nn_conv_rows(op, xin, x, opts->input_layout, flat_in, planes, &rows, &img);
    if (!st && direct) {
        /* The product comes in the input's shape ([N, H, W, OC], [1, 1, M,
         * OC]...): the same tiles as [M, OC], the form what follows takes. */
    } else if (!st && dw) {
        st = depthwise(op, img, &gm, wp, bt, opts, dtype,
                       opts->input_layout == LMNN_NHWC || flat ? &memory : NULL, &y);
    }
    bool rm_direct = false; /* y is the row-major flat output already */
    bool unfused = false;
    if (!st && !y.id) {
        lmnn_matmul_options mo;
        lmnn_matmul_options_init(&mo);
        /* float32 accumulation unless asked otherwise: K is KH * KW * C,
         * long enough for bfloat16 partial sums to lose bits (ttnn's conv
         * users ask for it as a rule). */
        mo.fp32_accumulate = opts->fp32_accumulate == LMNN_FP32_ACC_DEFAULT ? LMNN_FP32_ACC_ON
                                                                            : opts->fp32_accumulate;
        mo.activation = opts->activation;
        mo.activation_alpha = opts->activation_alpha;
        mo.activation_beta = opts->activation_beta;
        /* By phases the product is row-major, to be interleaved
         * (phase_finish; bfloat8_b has no row-major form). */
        mo.output.dtype = phases && dtype == LMNN_BFLOAT8_B ? LMNN_BFLOAT16 : dtype;
        if ((opts->input_layout == LMNN_NHWC || flat) && !phases)
            mo.output.memory = memory; /* see nn_conv_finish */
        /* A row-major result is untilized: its padding is never read. A
         * block-diagonal weight skips the tiles outside the groups. */
        nn_mm_groups grp = {0};
        if (g > 1 && pack == 1) grp = (nn_mm_groups){c, c / g, oc / g, compact ? kh * kw * c : 0};
        bool raw = rm_out || phases;
        /* The patch matrix gathered as the product goes (a row-major flat
         * output untilized there too), else stored. */
        lmnn_shape rms = flat_rm_shape(&go, oc, opts->output_image_rows);
        if (!direct)
            st = conv_product(op, img, in_dtype, &gp, wp, bt, &mo, raw, &grp,
                              rm_out && !phases ? &rms : NULL, pooled ? pool.kw : 1,
                              pooled ? pack * oc : 0, &y);
        rm_direct = y.id && rm_out && !phases;
        /* A pooled product that does not fit L1 here: the pooling after
         * the convolution instead (below). */
        unfused = pooled && !st && !y.id;
        if (!st && !y.id && !direct && !unfused)
            st = nn_conv_im2col(op, img, &gp, NN_PATCH_CONV, 0, in_dtype, 1, NULL, &patches);
        if (!st && !y.id && !unfused) {
            st = nn_linear_grouped(patches, wp, bt, &mo, raw, &grp, &y);
            if (st) st = nn_fail_call(st, op);
        }
        nn_tensor *yt;
        if (!st && direct && !(st = nn_get_tensor(op, "output", y, &yt))) {
            lmnn_shape flat2 = LMNN_SHAPE(gp.n * gp.oh * gp.ow, reps * oc);
            if (!phases) flat2 = LMNN_SHAPE(gm.n * gm.oh * gm.ow, oc);
            nn_tensor_retag(yt, &flat2);
        }
    }
    drop(wp, weight);
    drop(bt, bias);
    drop(rows, xin);
    drop(patches, xin);
    drop(cast, input);
    if (unfused && prepared)
        return nn_fail(LM_ERR_OUT_OF_DEVICE_MEMORY, op,
                       "weight: prepared for a pooling fused into the product, which does not "
                       "fit in L1 here (prepare it without pool_kernel)");
    if (unfused) return conv_then_pool(op, input, weight, bias, opts, &gm, &pool, out);
    if (!st && phases)
        return phase_finish(op, y, &gm, &gp, oc, opts, crop, dtype, rm_out, &memory, out);
    if (!st && rm_direct) {
        *out = y;
        return LM_OK;
    }
    if (!st && rm_out)
        return nn_conv_flat_rm(op, y, &go, oc, opts->output_image_rows, &memory, out);
    if (!st)
        st = nn_conv_finish(op, y, &go, oc, flat ? LMNN_NHWC : opts->input_layout, flat, &memory,
                            out);
    return st;
}

lm_status lmnn_conv2d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_conv2d_options *opts, lmnn_tensor *out) {
    return nn_conv_run("lmnn_conv2d", false, input, weight, bias, opts, NULL, out);
}

lm_status lmnn_conv_transpose2d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_conv2d_options *opts, lmnn_tensor *out) {
    return nn_conv_run("lmnn_conv_transpose2d", true, input, weight, bias, opts, NULL, out);
}
