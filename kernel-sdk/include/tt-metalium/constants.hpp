// tt-metal's tt-metalium/constants.hpp: tile and face geometry, for kernels
// and hosts alike.
#pragma once

#include <stdint.h>

namespace tt::constants {
constexpr uint32_t TILE_HEIGHT = 32;
constexpr uint32_t TILE_WIDTH = 32;
constexpr uint32_t TILE_HW = TILE_WIDTH * TILE_HEIGHT;
constexpr uint32_t FACE_HEIGHT = 16;
constexpr uint32_t FACE_WIDTH = 16;
constexpr uint32_t FACE_HW = FACE_WIDTH * FACE_HEIGHT;
// Bytes of a block-float tile: the data (1 or 1/2 byte per element) and the
// 64-byte exponent section.
constexpr uint32_t BFLOAT8_B_TILE_HW = TILE_HW + 64;
constexpr uint32_t BFLOAT4_B_TILE_HW = TILE_HW / 2 + 64;
} // namespace tt::constants
