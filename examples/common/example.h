/* Small helpers the examples share: error reporting, buffers, circular
 * buffers, kernels from the examples' kernel directories, random data. */
#ifndef LM_EXAMPLE_H
#define LM_EXAMPLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lightmetal.h"

/* Prints what failed (with lightmetal's message) and returns 1; 0 on success. */
static inline int ex_failed(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "%s failed: %s: %s\n", what, lm_status_string(st), lm_last_error());
    return 1;
}

static inline lm_status ex_buffer(lm_device *dev, lm_buffer_type type, uint64_t size,
                                  uint64_t page_size, lm_buffer *out) {
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.type = type;
    cfg.size = size;
    cfg.page_size = page_size;
    return lm_create_buffer(dev, &cfg, out);
}

static inline uint32_t ex_address(lm_buffer b) {
    uint64_t a = 0;
    lm_buffer_address(b, &a);
    return (uint32_t)a;
}

/* A circular buffer of `tiles` tiles of `format` at index `index`. */
static inline lm_status ex_cb(lm_program prog, const lm_core_range_set *cores, uint32_t index,
                              lm_data_format format, uint32_t tiles) {
    lm_circular_buffer_config cfg;
    lm_circular_buffer_config_init(&cfg);
    uint32_t tile = (uint32_t)lm_tile_size(format);
    cfg.total_size = tiles * tile;
    cfg.index_count = 1;
    cfg.indices[0] = (lm_cb_index_config){index, format, tile};
    lm_circular_buffer cb;
    return lm_create_circular_buffer(prog, cores, &cfg, &cb);
}

static inline lm_status ex_kernel(lm_program prog, const char *path, const lm_core_range_set *cores,
                                  lm_processor processor, lm_kernel *out) {
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, processor);
    return lm_create_kernel(prog, path, cores, &cfg, out);
}

/* Deterministic pseudo-random floats in [lo, hi). */
static inline void ex_random(float *out, size_t n, uint32_t seed, float lo, float hi) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        out[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
    }
}

/* Rounds every value to bfloat16, as the device stores it. */
static inline void ex_round_bf16(float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        lm_float_to_bfloat16(&v[i], &h, 1);
        lm_bfloat16_to_float(&h, &v[i], 1);
    }
}

#endif

/* ---- Light Metal capture of an example run (--capture FILE) ---- */

/* The FILE of `--capture FILE` among the arguments, or NULL. Exits with 2 on
 * any other argument. */
static inline const char *ex_capture_path(int argc, char **argv) {
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--capture") && i + 1 < argc && argv[i + 1][0]) {
            path = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--capture FILE]\n", argv[0]);
            exit(2);
        }
    }
    return path;
}

/* Starts recording when `path` is set; returns 1 on failure. */
static inline int ex_capture_begin(lm_device *dev, const char *path) {
    return path && ex_failed(lm_light_metal_begin_capture(dev, NULL), "begin capture");
}

/* Names a buffer and records its current contents as a golden (capturing only). */
static inline int ex_capture_output(lm_command_queue *cq, lm_buffer buffer, const char *name,
                                    const char *path) {
    return path && (ex_failed(lm_capture_name_buffer(buffer, name), "name buffer") ||
                    ex_failed(lm_capture_compare_to_capture(cq, buffer), "record golden"));
}

static inline int ex_capture_input(lm_buffer buffer, const char *name, const char *path) {
    return path && ex_failed(lm_capture_name_buffer(buffer, name), "name buffer");
}

/* Ends the recording and saves it to `path`; returns 1 on failure. */
static inline int ex_capture_end(lm_device *dev, const char *path) {
    if (!path) return 0;
    lm_binary *bin;
    if (ex_failed(lm_light_metal_end_capture(dev, &bin), "end capture")) return 1;
    int bad = ex_failed(lm_binary_save(bin, path), "save capture");
    lm_binary_free(bin);
    if (!bad) printf("captured to %s\n", path);
    return bad;
}
