/* The kernels compiled with AVX-512F (and AVX2, FMA) enabled (this file
 * only; the engine calls them after checking the CPU), plus a hand-blocked
 * matmul twice as wide as tile_kern_avx2.c's. */
#include <immintrin.h>

#include "sim/tile/tile_kern.h"

/* tk_finish on sixteen values: bf16 rounding (when `keep` is 0xffff0000,
 * else nothing), then the canonical NaN. */
static inline __m512 finish16(__m512 v, __m512i keep, __m512i half, __m512i odd) {
    __m512i u = _mm512_castps_si512(v);
    __m512i r = _mm512_add_epi32(u, half);
    r = _mm512_add_epi32(r, _mm512_and_si512(_mm512_srli_epi32(u, 16), odd));
    r = _mm512_and_si512(r, keep);
    __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32((int)TILE_CANONICAL_NAN_BITS));
    return _mm512_castsi512_ps(r);
}

/* Rows of acc a block keeps in registers: two accumulators each (a whole
 * row of 32), sixteen in all, with room left for B's row and a broadcast. */
#define TK_BLOCK_ROWS 8

/* acc += a x b, then tk_finish. A block of TK_BLOCK_ROWS whole rows of acc
 * stays in registers while k runs 0..31 in order, so each element sees the
 * same fused multiply-adds in the same order as the portable loop; the
 * finish is applied to the registers before they are stored. */
static void tk_matmul(const float *restrict a, const float *restrict b, float *restrict acc,
                      bool round_bf16) {
    __m512i keep = _mm512_set1_epi32(round_bf16 ? (int)0xffff0000u : -1);
    __m512i half = _mm512_set1_epi32(round_bf16 ? 0x7fff : 0);
    __m512i odd = _mm512_set1_epi32(round_bf16 ? 1 : 0);
    for (int i = 0; i < TILE_DIM; i += TK_BLOCK_ROWS) {
        float *c = acc + i * TILE_DIM;
        const float *ar = a + i * TILE_DIM;
        __m512 lo[TK_BLOCK_ROWS], hi[TK_BLOCK_ROWS];
        for (int q = 0; q < TK_BLOCK_ROWS; q++) {
            lo[q] = _mm512_loadu_ps(c + q * TILE_DIM);
            hi[q] = _mm512_loadu_ps(c + q * TILE_DIM + 16);
        }
        for (int k = 0; k < TILE_DIM; k++) {
            __m512 b0 = _mm512_loadu_ps(b + k * TILE_DIM);
            __m512 b1 = _mm512_loadu_ps(b + k * TILE_DIM + 16);
            for (int q = 0; q < TK_BLOCK_ROWS; q++) {
                __m512 av = _mm512_set1_ps(ar[q * TILE_DIM + k]);
                lo[q] = _mm512_fmadd_ps(av, b0, lo[q]);
                hi[q] = _mm512_fmadd_ps(av, b1, hi[q]);
            }
        }
        for (int q = 0; q < TK_BLOCK_ROWS; q++) {
            _mm512_storeu_ps(c + q * TILE_DIM, finish16(lo[q], keep, half, odd));
            _mm512_storeu_ps(c + q * TILE_DIM + 16, finish16(hi[q], keep, half, odd));
        }
    }
}

#define TILE_KERN_OWN_MATMUL
#define TILE_KERN_TABLE tile_kernels_avx512
#define TILE_KERN_NAME "avx512"
#include "sim/tile/tile_kern_body.h"
