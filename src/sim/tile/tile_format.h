/* Tile data formats: conversion between memory tiles and the working form.
 *
 * The working form of a tile (what the compute engine's source and dst
 * registers hold) is 1024 floats, row-major (element (r, c) at r * 32 + c).
 * Memory tiles use the face layout and formats described in
 * include/lightmetal/lm_tile.h. Integer formats travel through the working form
 * as raw 32-bit patterns stored in the float slots; only copies and packs are
 * meaningful for them.
 *
 * Every function is pure, uses integer operations only (so the bits are the
 * same on every host) and never fails on any byte content: each bit pattern of
 * a memory tile decodes to some float. Callers validate the format first
 * (tile_format_valid); an invalid format leaves the output untouched.
 */
#ifndef LM_SIM_TILE_FORMAT_H
#define LM_SIM_TILE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_tile.h"

#define TILE_DIM 32
#define TILE_FACE_DIM 16
#define TILE_ELEMS 1024
#define TILE_BFP8_EXP_BYTES 64

/* The quiet NaN every computed NaN is turned into, so results never depend on
 * which NaN a host's FPU happens to produce. */
#define TILE_CANONICAL_NAN_BITS 0x7fc00000u

bool tile_format_valid(lm_data_format format);

/* Bytes of one tile, 0 for an invalid format. */
size_t tile_format_size(lm_data_format format);

/* float32 bits -> bfloat16 bits, round to nearest even, NaN kept as a quiet NaN. */
static inline uint16_t tile_bf16_from_bits(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/* Offset, in elements, of row-major element (r, c) inside a face-layout tile. */
static inline uint32_t tile_face_offset(uint32_t r, uint32_t c) {
    return ((r / TILE_FACE_DIM) * 2 + c / TILE_FACE_DIM) * 256 + (r % TILE_FACE_DIM) * 16 +
           c % TILE_FACE_DIM;
}

/* Memory tile in `format` -> working form (the "unpack" to source registers). */
void tile_unpack(lm_data_format format, const void *src, float *out);

/* Working form -> memory tile in `format` (the "pack" from dst). */
void tile_pack(lm_data_format format, const float *in, void *dst);

/* Row-major rows x cols matrix of 4-byte elements <-> tiles in row-major tile
 * order, as lm_tilize / lm_untilize. rows and cols are multiples of 32 and the
 * buffers are large enough (the caller checked). */
void tile_tilize(const void *src, uint32_t rows, uint32_t cols, lm_data_format format, void *dst);
void tile_untilize(const void *src, lm_data_format format, uint32_t rows, uint32_t cols, void *dst);

#endif
