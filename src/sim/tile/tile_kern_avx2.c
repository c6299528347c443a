/* The kernels compiled with AVX2 and FMA enabled (this file only; the engine
 * calls them after checking the CPU), plus a hand-blocked matmul. */
#include <immintrin.h>

#include "sim/tile/tile_kern.h"

/* tk_finish on eight values: bf16 rounding (when `keep` is 0xffff0000, else
 * nothing), then the canonical NaN. */
static inline __m256 finish8(__m256 v, __m256i keep, __m256i half, __m256i odd) {
    __m256i u = _mm256_castps_si256(v);
    __m256i r = _mm256_add_epi32(u, half);
    r = _mm256_add_epi32(r, _mm256_and_si256(_mm256_srli_epi32(u, 16), odd));
    r = _mm256_and_si256(r, keep);
    __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32((int)TILE_CANONICAL_NAN_BITS), nan);
    return _mm256_castsi256_ps(r);
}

/* acc += a x b, then tk_finish. A 4-row x 16-column block of acc stays in
 * eight registers while k runs 0..31 in order, so each element sees the same
 * fused multiply-adds in the same order as the portable loop; the finish is
 * applied to the registers before they are stored. */
static void tk_matmul(const float *restrict a, const float *restrict b, float *restrict acc,
                      bool round_bf16) {
    __m256i keep = _mm256_set1_epi32(round_bf16 ? (int)0xffff0000u : -1);
    __m256i half = _mm256_set1_epi32(round_bf16 ? 0x7fff : 0);
    __m256i odd = _mm256_set1_epi32(round_bf16 ? 1 : 0);
    for (int i = 0; i < TILE_DIM; i += 4)
        for (int j = 0; j < TILE_DIM; j += 16) {
            float *c = acc + i * TILE_DIM + j;
            __m256 c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
            __m256 c10 = _mm256_loadu_ps(c + 32), c11 = _mm256_loadu_ps(c + 40);
            __m256 c20 = _mm256_loadu_ps(c + 64), c21 = _mm256_loadu_ps(c + 72);
            __m256 c30 = _mm256_loadu_ps(c + 96), c31 = _mm256_loadu_ps(c + 104);
            const float *ar = a + i * TILE_DIM;
            for (int k = 0; k < TILE_DIM; k++) {
                __m256 b0 = _mm256_loadu_ps(b + k * TILE_DIM + j);
                __m256 b1 = _mm256_loadu_ps(b + k * TILE_DIM + j + 8);
                __m256 a0 = _mm256_broadcast_ss(ar + k);
                __m256 a1 = _mm256_broadcast_ss(ar + 32 + k);
                __m256 a2 = _mm256_broadcast_ss(ar + 64 + k);
                __m256 a3 = _mm256_broadcast_ss(ar + 96 + k);
                c00 = _mm256_fmadd_ps(a0, b0, c00);
                c01 = _mm256_fmadd_ps(a0, b1, c01);
                c10 = _mm256_fmadd_ps(a1, b0, c10);
                c11 = _mm256_fmadd_ps(a1, b1, c11);
                c20 = _mm256_fmadd_ps(a2, b0, c20);
                c21 = _mm256_fmadd_ps(a2, b1, c21);
                c30 = _mm256_fmadd_ps(a3, b0, c30);
                c31 = _mm256_fmadd_ps(a3, b1, c31);
            }
            c00 = finish8(c00, keep, half, odd);
            c01 = finish8(c01, keep, half, odd);
            c10 = finish8(c10, keep, half, odd);
            c11 = finish8(c11, keep, half, odd);
            c20 = finish8(c20, keep, half, odd);
            c21 = finish8(c21, keep, half, odd);
            c30 = finish8(c30, keep, half, odd);
            c31 = finish8(c31, keep, half, odd);
            _mm256_storeu_ps(c, c00);
            _mm256_storeu_ps(c + 8, c01);
            _mm256_storeu_ps(c + 32, c10);
            _mm256_storeu_ps(c + 40, c11);
            _mm256_storeu_ps(c + 64, c20);
            _mm256_storeu_ps(c + 72, c21);
            _mm256_storeu_ps(c + 96, c30);
            _mm256_storeu_ps(c + 104, c31);
        }
}

#define TILE_KERN_OWN_MATMUL
#define TILE_KERN_TABLE tile_kernels_avx2
#define TILE_KERN_NAME "avx2"
#include "sim/tile/tile_kern_body.h"
