/* onnx_generate: greedy text generation with a decoder step compiled by
 * `lightmetal compile`. One binary serves every step: it takes a token and
 * its position for each sequence of the batch and a key/value cache of fixed
 * size, and gives the next token's logits and the cache with the token's
 * keys and values written in. The program feeds the prompt a token at a
 * time, then its own choices, and hands the cache back each step. It links
 * only the replay library and opens the device once for all steps.
 *
 *   lightmetal compile llama_static_cache/model.onnx -o decoder.lmb
 *   onnx_generate decoder.lmb --prompt 3,17,5,9 --prompt 40,2,33,11
 *
 * Usage: onnx_generate MODEL.lmb --prompt IDS [--prompt IDS]... [--tokens N]
 *   MODEL.lmb     a binary with the inputs and outputs below (the zoo's
 *                 llama_static_cache, scripts/make_onnx_zoo.py, compiled)
 *   --prompt IDS  comma-separated token ids, one --prompt per sequence of
 *                 the batch, all of one length
 *   --tokens N    tokens to generate for each sequence (default 8)
 *
 * The binary's interface (by name):
 *   ids, pos                int64 (int32 on the device) [B, 1]: the token
 *                           and its position in the sequence
 *   cache_k, cache_v        float32 [L, B, H, M, D]: M positions of keys and
 *                           values for each of L layers and H heads
 *   logits                  float32 [B, 1, V]
 *   cache_k_out, cache_v_out  the caches with this step's position written
 * The prompt and the tokens generated must fit the cache: prompt length +
 * N - 1 <= M.
 *
 * Prints each sequence's generated tokens ("tokens R: ..."), then the steps'
 * time. Exit status: 0 when it ran, 2 for bad arguments or a binary without
 * that interface, 3 when a replay fails. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lightmetal/lm_replay.h"

#define MAX_BATCH 64
#define MAX_PROMPT 1024

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The named buffer `name`, which must have `role`, `format` and `rank`; 0,
 * or -1 after a message. */
static int find(const lm_replay *r, const char *name, lm_buffer_role role, lm_data_format format,
                uint32_t rank, lm_replay_buffer_info *out) {
    for (uint32_t i = 0; i < lm_replay_buffer_count(r); i++) {
        if (lm_replay_buffer_info_at(r, i, out) != LM_OK || strcmp(out->name, name)) continue;
        if (out->role != role || out->format != format || out->rank != rank) {
            fprintf(stderr,
                    "onnx_generate: the binary's '%s' is not a %s of rank %u in the format "
                    "onnx_generate expects (see its usage)\n",
                    name, role == LM_BUFFER_ROLE_INPUT ? "input" : "output", rank);
            return -1;
        }
        return 0;
    }
    fprintf(stderr,
            "onnx_generate: the binary has no %s named '%s' (not a decoder step: see usage)\n",
            role == LM_BUFFER_ROLE_INPUT ? "input" : "output", name);
    return -1;
}

/* Parses "a,b,c" into ids; the count, or -1 after a message. */
static long parse_prompt(const char *text, long *ids) {
    long n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || (*end != ',' && *end) || n == MAX_PROMPT) {
            fprintf(stderr,
                    "onnx_generate: --prompt takes comma-separated token ids (at most %d), not "
                    "'%s'\n",
                    MAX_PROMPT, text);
            return -1;
        }
        ids[n++] = v;
        if (!*end) return n;
        p = end + 1;
    }
}

/* The binary's decoder interface. */
typedef struct decoder {
    lm_replay_buffer_info ids, pos, ck, cv, logits, ck_out, cv_out;
    uint64_t batch, positions, vocab;
} decoder;

/* Finds the interface and checks that its shapes make one step of one token
 * a sequence; 0, or -1 after a message. */
static int decoder_find(const lm_replay *r, decoder *d) {
    const lm_buffer_role in = LM_BUFFER_ROLE_INPUT, out = LM_BUFFER_ROLE_OUTPUT;
    const lm_data_format i32 = LM_DATA_FORMAT_INT32, f32 = LM_DATA_FORMAT_FLOAT32;
    if (find(r, "ids", in, i32, 2, &d->ids) || find(r, "pos", in, i32, 2, &d->pos) ||
        find(r, "cache_k", in, f32, 5, &d->ck) || find(r, "cache_v", in, f32, 5, &d->cv) ||
        find(r, "logits", out, f32, 3, &d->logits) ||
        find(r, "cache_k_out", out, f32, 5, &d->ck_out) ||
        find(r, "cache_v_out", out, f32, 5, &d->cv_out))
        return -1;
    d->batch = d->ids.shape[0];
    d->positions = d->ck.shape[3];
    d->vocab = d->logits.shape[2];
    if (d->ids.shape[1] != 1 || d->pos.shape[0] != d->batch || d->pos.shape[1] != 1 ||
        d->ck.shape[1] != d->batch || d->ck.size != d->cv.size || d->ck.size != d->ck_out.size ||
        d->cv.size != d->cv_out.size || d->logits.shape[0] != d->batch || d->logits.shape[1] != 1 ||
        d->vocab == 0) {
        fprintf(stderr, "onnx_generate: the binary's shapes do not make one decoder step of one "
                        "token for each sequence (see usage)\n");
        return -1;
    }
    return 0;
}

/* The steps: the prompts' tokens, then each sequence's most likely next
 * token, into generated[r * tokens + t]. The caches start as zeros (nothing
 * to attend to yet) and each step's outputs are the next one's inputs. */
static lm_status run_steps(lm_replay *replay, const decoder *d, lm_device *dev,
                           long (*prompt)[MAX_PROMPT], long prompt_len, long tokens,
                           long *generated) {
    const uint64_t cache_floats = d->ck.size / sizeof(float), rows = d->batch;
    float *cache = calloc(2 * cache_floats, sizeof(float)), *scores = malloc(d->logits.size);
    int32_t *ids = malloc(d->ids.size), *pos = malloc(d->pos.size);
    lm_status st = LM_OK;
    if (!cache || !scores || !ids || !pos) {
        fprintf(stderr, "onnx_generate: out of memory\n");
        st = LM_ERR_OUT_OF_HOST_MEMORY;
    }
    lm_replay_options opts;
    lm_replay_options_init(&opts);
    opts.check_goldens = false; /* goldens, if any, hold another input's outputs */
    for (long s = 0; st == LM_OK && s < prompt_len + tokens - 1; s++) {
        for (uint64_t r = 0; r < rows; r++) {
            ids[r] =
                (int32_t)(s < prompt_len ? prompt[r][s] : generated[r * tokens + s - prompt_len]);
            pos[r] = (int32_t)s;
        }
        st = lm_replay_set_input(replay, "ids", ids, d->ids.size);
        if (!st) st = lm_replay_set_input(replay, "pos", pos, d->pos.size);
        if (!st) st = lm_replay_set_input(replay, "cache_k", cache, d->ck.size);
        if (!st) st = lm_replay_set_input(replay, "cache_v", cache + cache_floats, d->cv.size);
        if (!st) st = lm_replay_run(replay, dev, &opts, NULL);
        if (!st) st = lm_replay_get_output(replay, "cache_k_out", cache, d->ck.size);
        if (!st) st = lm_replay_get_output(replay, "cache_v_out", cache + cache_floats, d->cv.size);
        if (!st) st = lm_replay_get_output(replay, "logits", scores, d->logits.size);
        if (st) {
            fprintf(stderr, "onnx_generate: step %ld: %s\n", s, lm_last_error());
            break;
        }
        if (s + 1 < prompt_len) continue;
        for (uint64_t r = 0; r < rows; r++) {
            const float *row = scores + r * d->vocab;
            uint64_t best = 0;
            for (uint64_t v = 1; v < d->vocab; v++)
                if (row[v] > row[best]) best = v;
            generated[r * tokens + s + 1 - prompt_len] = (long)best;
        }
    }
    free(cache);
    free(scores);
    free(ids);
    free(pos);
    return st;
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s MODEL.lmb --prompt IDS [--prompt IDS]... [--tokens N]\n", prog);
    return 2;
}

/* Checks the prompts against the binary, runs the steps on a device opened
 * once, prints the tokens; the exit status. */
static int generate(lm_replay *replay, long (*prompt)[MAX_PROMPT], uint32_t rows, long prompt_len,
                    long tokens) {
    decoder d;
    if (decoder_find(replay, &d)) return 2;
    if (rows != d.batch) {
        fprintf(stderr, "onnx_generate: %u prompts for a binary compiled for a batch of %llu\n",
                rows, (unsigned long long)d.batch);
        return 2;
    }
    if ((uint64_t)(prompt_len + tokens - 1) > d.positions) {
        fprintf(stderr,
                "onnx_generate: %ld prompt tokens and %ld generated need %ld positions; the "
                "cache holds %llu\n",
                prompt_len, tokens, prompt_len + tokens - 1, (unsigned long long)d.positions);
        return 2;
    }
    for (uint32_t r = 0; r < rows; r++)
        for (long t = 0; t < prompt_len; t++)
            if ((uint64_t)prompt[r][t] >= d.vocab) {
                fprintf(stderr,
                        "onnx_generate: token %ld of prompt %u is %ld; the vocabulary is "
                        "0..%llu\n",
                        t, r, prompt[r][t], (unsigned long long)d.vocab - 1);
                return 2;
            }
    long *generated = malloc((size_t)rows * (size_t)tokens * sizeof *generated);
    lm_device_options dopts;
    lm_device_options_init(&dopts);
    lm_device *dev = NULL;
    if (!generated || lm_device_open(&dopts, &dev) != LM_OK) {
        fprintf(stderr, "onnx_generate: %s\n", generated ? lm_last_error() : "out of memory");
        free(generated);
        return 3;
    }
    double t0 = now_s();
    lm_status st = run_steps(replay, &d, dev, prompt, prompt_len, tokens, generated);
    double seconds = now_s() - t0;
    lm_device_close(dev);
    if (st == LM_OK) {
        for (uint32_t r = 0; r < rows; r++) {
            printf("tokens %u:", r);
            for (long t = 0; t < tokens; t++)
                printf(" %ld", generated[r * tokens + t]);
            printf("\n");
        }
        long steps = prompt_len + tokens - 1;
        printf("%ld steps of %u sequences in %.3f s (%.2f ms a step)\n", steps, rows, seconds,
               1e3 * seconds / (double)steps);
    }
    free(generated);
    return st == LM_OK ? 0 : 3;
}

int main(int argc, char **argv) {
    const char *model = NULL;
    static long prompt[MAX_BATCH][MAX_PROMPT];
    long prompt_len = -1, tokens = 8;
    uint32_t rows = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--prompt") && i + 1 < argc) {
            if (rows == MAX_BATCH) {
                fprintf(stderr, "onnx_generate: at most %d prompts\n", MAX_BATCH);
                return 2;
            }
            long n = parse_prompt(argv[++i], prompt[rows]);
            if (n < 0) return 2;
            if (prompt_len >= 0 && n != prompt_len) {
                fprintf(stderr,
                        "onnx_generate: prompts of %ld and %ld tokens: the batch steps together, "
                        "so every prompt needs the same length\n",
                        prompt_len, n);
                return 2;
            }
            prompt_len = n;
            rows++;
        } else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) {
            char *end;
            errno = 0;
            tokens = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || tokens < 1 || tokens > MAX_PROMPT) {
                fprintf(stderr, "onnx_generate: --tokens takes 1..%d, not '%s'\n", MAX_PROMPT,
                        argv[i]);
                return 2;
            }
        } else if (argv[i][0] != '-' && !model) {
            model = argv[i];
        } else {
            return usage(argv[0]);
        }
    }
    if (!model || rows == 0) return usage(argv[0]);
    lm_replay *replay;
    if (lm_replay_open_file(model, &replay) != LM_OK) {
        fprintf(stderr, "onnx_generate: %s\n", lm_last_error());
        return 2;
    }
    int rc = generate(replay, prompt, rows, prompt_len, tokens);
    lm_replay_close(replay);
    return rc;
}
