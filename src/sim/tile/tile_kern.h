/* Kernel sets behind the tile engine: the same arithmetic compiled for three
 * targets. tile_kern_body.h holds the element-wise and SFPU kernels once
 * (their scalar math in tile_kern_math.h); it is compiled plainly (portable),
 * with AVX2+FMA and with AVX-512F enabled, and every compilation performs the
 * identical sequence of IEEE operations per element, so they give identical
 * bits. Only matmul has hand-written AVX2 and AVX-512 versions, which keep
 * the portable version's order of fused multiply-adds.
 *
 * Kernels trust their arguments (the engine validated them); output buffers do
 * not alias inputs.
 */
#ifndef LM_SIM_TILE_KERN_H
#define LM_SIM_TILE_KERN_H

#include <stdbool.h>

#include "sim/tile/tile_engine.h"

typedef struct tile_kernels {
    const char *name;
    /* out = a (op) b with b broadcast -- with `acc`, out += a (op) b --, then
     * the finish below; out (a dst register) aliases neither input. */
    void (*binary)(tile_binary_op op, tile_bcast bcast, const float *a, const float *b, float *out,
                   bool acc, bool round_bf16);
    /* acc += a x b, fma over k = 0..31 in order for each element, then the
     * finish below. */
    void (*matmul)(const float *a, const float *b, float *acc, bool round_bf16);
    /* t = f(t) element-wise; p0, p1: the op's parameters as exact values
     * (float32 values, or integers for the integer parameters). */
    void (*sfpu)(tile_sfpu_op op, double p0, double p1, float *t);
    /* out = a (op) b element-wise. */
    void (*dst_binary)(tile_dst_binary_op op, const float *a, const float *b, float *out);
    /* Reduces a (times scaler) into the result slots acc (32 for ROW and
     * COL, 1 for SCALAR), each starting from its value in acc: fma for SUM
     * and AVG, a NaN-keeping max for MAX, acc * (a * scaler) for PROD. Each
     * slot takes its elements in row-major order. */
    void (*reduce)(tile_reduce_func func, tile_reduce_dim dim, const float *a, float scaler,
                   float *acc);
    /* The end of every op that writes dst: canonical NaN, optional bf16 round. */
    void (*finish)(float *t, bool round_bf16);
} tile_kernels;

extern const tile_kernels tile_kernels_portable;
#if defined(TILE_HAVE_X86)
extern const tile_kernels tile_kernels_avx2;
extern const tile_kernels tile_kernels_avx512;
#endif

#endif
