/* The shared body of the matmul examples: random bfloat16 A and B, C = A x B
 * on the device with float32 accumulation, compared with a float64 host
 * reference of the same bfloat16 inputs. */
#ifndef LM_EXAMPLE_MATMUL_CHECK_H
#define LM_EXAMPLE_MATMUL_CHECK_H

#include "matmul.h"

/* Tolerance: float32 accumulation of K products (exact in float32 for
 * bfloat16 inputs) errs by at most about K * 2^-24 of sum |a||b|; we allow
 * 2^-16 of sum |a_ik b_kj|, far above that bound and far below a wrong
 * result. Returns the number of values outside it, or -1 on an error. */
static inline int ex_matmul_check(uint32_t m, uint32_t k, uint32_t n, uint32_t grid_x,
                                  uint32_t grid_y, const char *capture) {
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    float *c = malloc(sizeof(float) * m * n);
    uint16_t *ta = malloc(2u * m * k), *tb = malloc(2u * k * n);
    float *tc = malloc(sizeof(float) * m * n);
    if (!a || !b || !c || !ta || !tb || !tc) return -1;
    ex_random(a, (size_t)m * k, 11, -1.0f, 1.0f);
    ex_random(b, (size_t)k * n, 12, -1.0f, 1.0f);
    ex_round_bf16(a, (size_t)m * k);
    ex_round_bf16(b, (size_t)k * n);

    ex_matmul mm = {m / 32,
                    k / 32,
                    n / 32,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT32,
                    false,
                    true,
                    grid_x,
                    grid_y};
    lm_device *dev;
    lm_buffer da, db, dc;
    lm_program prog;
    uint32_t bf16_tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    uint32_t f32_tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT32);
    lm_command_queue *cq;
    if (ex_failed(lm_tilize(a, m, k, LM_DATA_FORMAT_FLOAT16_B, ta, 2u * m * k), "tilize a") ||
        ex_failed(lm_tilize(b, k, n, LM_DATA_FORMAT_FLOAT16_B, tb, 2u * k * n), "tilize b") ||
        ex_failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * m * k, bf16_tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * k * n, bf16_tile, &db), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 4u * m * n, f32_tile, &dc), "buffer c") ||
        ex_failed(ex_matmul_program(dev, &mm, da, db, dc, &prog), "build matmul program"))
        return -1;
    cq = lm_device_command_queue(dev, 0);
    if (ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, db, tb, false), "write b") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "run") ||
        ex_failed(lm_enqueue_read_buffer(cq, dc, tc, true), "read c") ||
        ex_failed(
            lm_untilize(tc, 4u * m * n, LM_DATA_FORMAT_FLOAT32, m, n, c, sizeof(float) * m * n),
            "untilize c") ||
        ex_capture_input(da, "a", capture) || ex_capture_input(db, "b", capture) ||
        ex_capture_output(cq, dc, "c", capture) || ex_capture_end(dev, capture))
        return -1;
    int outside = 0;
    double worst = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (uint32_t q = 0; q < k; q++) {
                ref += (double)a[i * k + q] * b[q * n + j];
                mag += fabs((double)a[i * k + q] * b[q * n + j]);
            }
            double err = fabs(c[i * n + j] - ref);
            if (err > mag * 0x1p-16) outside++;
            if (mag > 0 && err / mag > worst) worst = err / mag;
        }
    printf("%ux%ux%u bfloat16 matmul on %ux%u cores: largest error %.2e of sum |a||b|, "
           "%d values outside tolerance\n",
           m, k, n, grid_x, grid_y, worst, outside);
    lm_release_program(prog);
    if (ex_failed(lm_device_close(dev), "close device")) outside = -1;
    free(a), free(b), free(c), free(ta), free(tb), free(tc);
    return outside;
}

#endif
