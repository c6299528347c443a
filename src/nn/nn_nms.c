/* Non-maximum suppression's greedy selection (lmnn_nms, lmnn_data.h): two
 * programs, kernels/nms_select.c over the (batch entry, class) groups on
 * every core, then kernels/nms_pack.c on one core to put the groups' picks
 * one after another. Two launches, however many boxes are taken. */
#include <float.h>
#include <math.h>

#include "nn/nn_data.h"

/* Boxes a group may hold: its keys, boxes and one row sit in L1 at once. */
#define NMS_MAX_BOXES 65536u
/* Output rows nms_pack.c writes from one ring before draining it (its SLOTS). */
#define NMS_PACK_SLOTS 64u

void lmnn_nms_options_init(lmnn_nms_options *opts) {
    if (opts) *opts = (lmnn_nms_options){UINT32_MAX, -INFINITY, {0}};
}

/* The order-preserving key nms_select.c compares (see there). */
static uint32_t order_key(uint32_t bits) {
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/* The key a score of `dtype` (float32 or bfloat16) must be above to be
 * above `v`: that of the largest value of the dtype not above v. */
static uint32_t threshold_key(lmnn_dtype dtype, double v) {
    if (isnan(v)) return UINT32_MAX; /* no score is above NaN */
    float f;
    if (v >= (double)INFINITY)
        f = INFINITY;
    else if (v > FLT_MAX)
        f = FLT_MAX;
    else if (v < -FLT_MAX) /* -inf, or a finite value no float reaches down to */
        f = -INFINITY;
    else if ((double)(f = (float)v) > v)
        f = nextafterf(f, -INFINITY);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (bits == 0x80000000u) bits = 0; /* -0: the kernel reads every zero as +0 */
    if (dtype == LMNN_BFLOAT16 && (bits & 0xffffu)) {
        /* Rounded toward -inf: a positive loses its low half, a negative
         * grows in magnitude (past the largest, into -inf). */
        bits = (bits & 0x80000000u ? (bits >> 16) + 1 : bits >> 16) << 16;
    }
    return order_key(bits);
}

/* nms_select.c: picks[g] = [count, boxes...] for every group g. */
static lm_status run_select(const char *op, nn_tensor *scores, nn_tensor *over, nn_tensor *picks,
                            uint32_t groups, uint32_t C, uint32_t K, uint32_t threshold) {
    uint32_t N = scores->shape.dims[2];
    uint32_t es = nn_rm_elem_size(scores->dtype), eo = nn_rm_elem_size(over->dtype);
    uint32_t args[9] = {0,
                        0,
                        (scores->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
                            (over->memory.type == LM_BUFFER_DRAM ? 2u : 0) |
                            (picks->memory.type == LM_BUFFER_DRAM ? 4u : 0),
                        N,
                        C,
                        K,
                        es,
                        eo,
                        threshold};
    nn_key key;
    nn_key_init(&key, "nms_select");
    nn_key_add(&key, args + 2, sizeof args - 2 * sizeof *args);
    nn_key_tensor(&key, scores);
    nn_key_tensor(&key, over);
    nn_key_tensor(&key, picks);
    nn_program *prog = nn_cache_find(scores->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split split;
        nn_program p = {0};
        nn_kernel_spec k = {"nms_select.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        uint32_t row = N * (es > eo ? es : eo);
        st = nn_split_work(op, scores->device, groups, &split);
        p.cores = split.all;
        if (!st) st = nn_program_begin(op, scores->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, N * 4, 1);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, N * 4, 1);
        if (!st) st = nn_program_cb(op, &p, 2, LM_DATA_FORMAT_UINT32, (row + 31) / 32 * 32, 1);
        if (!st) st = nn_program_cb(op, &p, 3, LM_DATA_FORMAT_UINT32, (K + 1) * 4, 1);
        if (!st) st = nn_program_kernel(op, &p, &k, NULL);
        if (!st) st = nn_program_split_args_with(op, &p, &split, args + 2, 7);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, scores->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {scores, over, picks};
    return st ? st : nn_launch(op, prog, tensors, 3);
}

/* nms_pack.c: the picks as rows (b, c, box) of out, then rows of -1. */
static lm_status run_pack(const char *op, nn_tensor *picks, nn_tensor *out, uint32_t groups,
                          uint32_t C, uint32_t K) {
    uint32_t args[5] = {(picks->memory.type == LM_BUFFER_DRAM ? 1u : 0) |
                            (out->memory.type == LM_BUFFER_DRAM ? 2u : 0),
                        groups, C, K, out->shape.dims[0]};
    nn_key key;
    nn_key_init(&key, "nms_pack");
    nn_key_add(&key, args, sizeof args);
    nn_key_tensor(&key, picks);
    nn_key_tensor(&key, out);
    nn_program *prog = nn_cache_find(out->device, &key);
    lm_status st = LM_OK;
    if (!prog) {
        nn_split one;
        nn_program p = {0};
        nn_kernel_spec k = {"nms_pack.c", LM_PROCESSOR_DM0, NULL, 0, NULL, 0, false};
        lm_kernel kernel = {0};
        st = nn_split_work(op, out->device, 1, &one);
        p.cores = one.all;
        if (!st) st = nn_program_begin(op, out->device, &p);
        if (!st) st = nn_program_cb(op, &p, 0, LM_DATA_FORMAT_UINT32, (K + 1) * 4, 1);
        if (!st) st = nn_program_cb(op, &p, 1, LM_DATA_FORMAT_UINT32, NMS_PACK_SLOTS * 12, 1);
        if (!st) st = nn_program_kernel(op, &p, &k, &kernel);
        if (!st && (st = lm_set_runtime_args(p.program, kernel, one.cores[0], args, 5)))
            st = nn_fail_call(st, op);
        if (st) nn_program_discard(&p);
        if (!st) st = nn_cache_add(op, out->device, &key, &p, &prog);
    }
    nn_tensor *tensors[] = {picks, out};
    return st ? st : nn_launch(op, prog, tensors, 2);
}

/* The checks of lmnn_nms: live float tensors of matching shapes. */
static lm_status nms_args(const char *op, lmnn_tensor scores, lmnn_tensor overlaps,
                          const lmnn_nms_options *opts, nn_tensor **out_s, nn_tensor **out_o) {
    char s1[128], s2[128];
    lm_status st = nn_get_tensor(op, "scores", scores, out_s);
    if (!st) st = nn_get_tensor(op, "overlaps", overlaps, out_o);
    if (!st) st = nn_check_float(op, "scores", *out_s);
    if (!st) st = nn_check_float(op, "overlaps", *out_o);
    if (!st) st = nn_check_same_device(op, "overlaps", *out_o, *out_s);
    if (st) return st;
    const lmnn_shape *s = &(*out_s)->shape, *o = &(*out_o)->shape;
    if (s->rank != 3 || s->dims[0] == 0 || s->dims[1] == 0 || s->dims[2] == 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "scores: expected [batch, classes, boxes], none 0, given %s",
                       nn_shape_str(s, s1, sizeof s1));
    if (o->rank != 3 || o->dims[0] != s->dims[0] || o->dims[1] != s->dims[2] ||
        o->dims[2] != s->dims[2])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "overlaps: expected [batch, boxes, boxes] = [%u, %u, %u] (scores %s), "
                       "given %s",
                       s->dims[0], s->dims[2], s->dims[2], nn_shape_str(s, s1, sizeof s1),
                       nn_shape_str(o, s2, sizeof s2));
    if (s->dims[2] > NMS_MAX_BOXES)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "scores: %u boxes, more than the %u a core holds at once", s->dims[2],
                       NMS_MAX_BOXES);
    if (opts->max_per_class == 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "opts.max_per_class: expected at least 1 (an empty selection needs no "
                       "op)");
    return LM_OK;
}

typedef struct nms_ctx {
    uint32_t groups, C, K;
    double score_threshold;
} nms_ctx;

/* On row-major scores and overlaps (dm_via_rm's stand-ins): the picks, then
 * the output. */
static lm_status nms_rm(const char *op, const void *ctx, nn_tensor *const *ins, uint32_t count,
                        nn_tensor *out) {
    (void)count;
    const nms_ctx *c = ctx;
    lmnn_memory_config dram = {.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_shape shape = LMNN_SHAPE(c->groups, c->K + 1);
    lmnn_tensor ph;
    nn_tensor *picks;
    lm_status st =
        nn_tensor_new(op, out->device, &shape, LMNN_INT32, LMNN_ROW_MAJOR, &dram, &ph, &picks);
    if (st) return st;
    /* The key in the stand-in's dtype (bfloat16 for bfloat8_b). */
    uint32_t threshold = threshold_key(ins[0]->dtype, c->score_threshold);
    st = run_select(op, ins[0], ins[1], picks, c->groups, c->C, c->K, threshold);
    if (!st) st = run_pack(op, picks, out, c->groups, c->C, c->K);
    nn_tensor_discard(ph);
    return st;
}

lm_status lmnn_nms(lmnn_tensor scores, lmnn_tensor overlaps, const lmnn_nms_options *opts,
                   lmnn_tensor *out) {
    const char *op = "lmnn_nms";
    lmnn_nms_options defaults;
    if (!opts) {
        lmnn_nms_options_init(&defaults);
        opts = &defaults;
    }
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    nn_tensor *s, *o;
    lm_status st = nms_args(op, scores, overlaps, opts, &s, &o);
    if (st) return st;
    uint32_t B = s->shape.dims[0], C = s->shape.dims[1], N = s->shape.dims[2];
    uint32_t K = opts->max_per_class < N ? opts->max_per_class : N;
    uint64_t groups = (uint64_t)B * C, rows = groups * K;
    if (groups > UINT32_MAX || rows > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "%llu batch entries x classes of %u picks each are too many rows",
                       (unsigned long long)groups, K);
    /* The fields left zero from DRAM interleaved (not the inputs', which
     * may be tiles in L1 while this is a list of rows). */
    lmnn_memory_config mem =
        nn_memory_over(&opts->memory, (lmnn_memory_config){.type = LM_BUFFER_DRAM,
                                                           .layout = LM_BUFFER_INTERLEAVED});
    if ((st = nn_check_memory(op, &mem))) return st;
    dm_out od = {LMNN_SHAPE((uint32_t)rows, 3), LMNN_INT32, LMNN_ROW_MAJOR, mem};
    nms_ctx c = {(uint32_t)groups, C, K, opts->score_threshold};
    nn_tensor *ins[] = {s, o};
    return dm_via_rm(op, ins, 2, &od, nms_rm, &c, out);
}
