/* Random numbers: unary maps whose chain draws from the compute engine's
 * generator (rand_tile). Each tile restarts the generator from the seed and
 * the tile's place in the tensor (nn_tile), so the numbers do not depend on
 * which core made which tile, and two ops given one seed draw alike. The
 * seed is nn_param[2], mixed with the run seed when there is one (read by
 * random_reader.c into circular buffer 1); the other two parameters are the
 * op's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

#define SEED_TILE "rand_tile_init(nn_param[2] + nn_tile * 0x9E3779B9u); "
#define RUN_SEED_TILE                                                                              \
    "cb_wait_front(1, 1); "                                                                        \
    "rand_tile_init((nn_param[2] ^ *(volatile uint32_t *)get_read_ptr(1)) + "                      \
    "nn_tile * 0x9E3779B9u); "

/* from + u * scale, u in [0, 1). */
#define UNIFORM_CHAIN "rand_tile(0, nn_param[0], nn_param[1])"
/* sqrt(-2 ln(1 - u1)) * cos(2 pi u2) * stddev + mean: 1 - u1 is in (0, 1],
 * so the log is finite. */
#define NORMAL_CHAIN                                                                               \
    "rand_tile(0, 0x3f800000u, 0xbf800000u); log_tile(0); mul_unary_tile(0, 0xc0000000u); "        \
    "sqrt_tile(0); rand_tile(1, 0, 0x40c90fdbu); cos_tile(1); mul_binary_tile(0, 1, 0); "          \
    "mul_unary_tile(0, nn_param[1]); add_unary_tile(0, nn_param[0])"
/* dst 0 holds p: u < p. */
#define BERNOULLI_CHAIN "rand_tile(1, 0, 0x3f800000u); lt_binary_tile(1, 0, 0)"
/* dst 0 holds x: x * (u >= ratio) * scale; the mask alone is u >= ratio. */
#define DROPOUT_CHAIN                                                                              \
    "rand_tile(1, 0, 0x3f800000u); unary_ge_tile(1, nn_param[0]); mul_binary_tile(0, 1, 0); "      \
    "mul_unary_tile(0, nn_param[1])"
#define MASK_CHAIN "rand_tile(0, 0, 0x3f800000u); unary_ge_tile(0, nn_param[0])"

void lmnn_random_options_init(lmnn_random_options *opts) {
    if (opts) *opts = (lmnn_random_options){0};
}

/* The run seed's reader: the input's accessor words, then the seed's. */
static lm_status seed_reader(const char *name, nn_tensor *in, lmnn_tensor handle,
                             nn_unary_reader *r, uint32_t args[NN_UNARY_READER_ARGS],
                             uint32_t *page) {
    nn_tensor *s;
    lm_status st = nn_get_tensor_any(name, "opts.run_seed", handle, &s);
    if (st) return st;
    if ((s->dtype != LMNN_UINT32 && s->dtype != LMNN_INT32) || lmnn_shape_volume(&s->shape) != 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "opts.run_seed: expected a uint32 or int32 tensor of one element, given %s "
                       "of %llu",
                       lmnn_dtype_name(s->dtype), (unsigned long long)lmnn_shape_volume(&s->shape));
    if (s->device != in->device)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "opts.run_seed: on another device than the input");
    uint32_t wi[NN_ACCESSOR_WORDS], ws[NN_ACCESSOR_WORDS], nin = 0, ns = 0;
    if ((st = nn_accessor_words(name, in, wi, &nin)) || (st = nn_accessor_words(name, s, ws, &ns)))
        return st;
    if (nin + ns > NN_UNARY_READER_ARGS)
        return nn_fail(LM_ERR_UNSUPPORTED, name,
                       "a run seed with an input sharded over this many cores");
    memcpy(args, wi, nin * sizeof *wi);
    memcpy(args + nin, ws, ns * sizeof *ws);
    *page = s->page_size;
    *r = (nn_unary_reader){"random_reader.c", page, 1, args, nin + ns, s, 32};
    return LM_OK;
}

static lm_status run(const char *name, lmnn_tensor a, const char *body, double p0, double p1,
                     const lmnn_random_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, name, "out is NULL");
    lmnn_random_options defaults;
    if (!opts) {
        lmnn_random_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *t = NULL;
    lm_status st = nn_unary_input(name, a, &t);
    if (st) return st;
    nn_unary_reader reader;
    uint32_t args[NN_UNARY_READER_ARGS], page;
    bool seeded = opts->run_seed.id != 0;
    if (seeded && (st = seed_reader(name, t, opts->run_seed, &reader, args, &page))) return st;
    char chain[640];
    snprintf(chain, sizeof chain, "%s%s", seeded ? RUN_SEED_TILE : SEED_TILE, body);
    uint32_t params[NN_UNARY_PARAMS] = {nn_float_bits(p0), nn_float_bits(p1), opts->seed};
    lmnn_memory_config memory = nn_output_memory(NULL, t);
    /* The draws are nonzero in the padding too: the writer zeroes it. */
    return nn_unary_map_with(name, t, t->dtype, &memory, chain, params, 0, true,
                             seeded ? &reader : NULL, out);
}

lm_status lmnn_uniform(lmnn_tensor like, double low, double high, const lmnn_random_options *opts,
                       lmnn_tensor *out) {
    const char *name = "lmnn_uniform";
    if (!isfinite(low) || !isfinite(high) || !(low <= high))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "low and high: expected finite low <= high, given %g and %g", low, high);
    return run(name, like, UNIFORM_CHAIN, low, high - low, opts, out);
}

lm_status lmnn_normal(lmnn_tensor like, double mean, double stddev, const lmnn_random_options *opts,
                      lmnn_tensor *out) {
    const char *name = "lmnn_normal";
    if (!isfinite(mean) || !isfinite(stddev) || !(stddev >= 0))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name,
                       "mean and stddev: expected finite values and stddev >= 0, given %g and %g",
                       mean, stddev);
    return run(name, like, NORMAL_CHAIN, mean, stddev, opts, out);
}

lm_status lmnn_bernoulli(lmnn_tensor p, const lmnn_random_options *opts, lmnn_tensor *out) {
    return run("lmnn_bernoulli", p, BERNOULLI_CHAIN, 0, 0, opts, out);
}

lm_status lmnn_dropout(lmnn_tensor a, double ratio, const lmnn_random_options *opts,
                       lmnn_tensor *out, lmnn_tensor *out_mask) {
    const char *name = "lmnn_dropout";
    if (!(ratio >= 0 && ratio < 1))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, name, "ratio: expected a value in [0, 1), given %g",
                       ratio);
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, name, "out is NULL");
    lmnn_tensor y = {0}, m = {0};
    lm_status st = run(name, a, DROPOUT_CHAIN, ratio, 1.0 / (1.0 - ratio), opts, &y);
    if (!st && out_mask) st = run(name, a, MASK_CHAIN, ratio, 0, opts, &m);
    if (st) {
        if (y.id) lmnn_tensor_free(y);
        return st;
    }
    *out = y;
    if (out_mask) *out_mask = m;
    return LM_OK;
}
