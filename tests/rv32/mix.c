/* A C program mixing what compiled kernels do: globals in data and bss,
 * packed (unaligned) structure fields, signed and unsigned narrow loads,
 * switch jump tables, calls through function pointers, 64-bit products and
 * 32-bit division. It is built twice: for the simulated core (entry _start)
 * and natively into the test binary, which compares the two results. */
#include <stdint.h>

uint32_t mix_main(uint32_t seed);

struct __attribute__((packed)) mix_rec {
    uint8_t tag;
    int16_t delta;
    uint32_t value;
    int8_t small;
};

static struct mix_rec mix_recs[37];
static int32_t mix_table[16] = {3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, -7, 9, 3};
static uint32_t mix_counter = 11;

static uint32_t mix_step(uint32_t x) {
    return x * 1103515245u + 12345u;
}
static uint32_t mix_rotl(uint32_t x) {
    return x << 7 | x >> 25;
}
static uint32_t mix_neg(uint32_t x) {
    return 0u - x;
}

static uint32_t mix_classify(uint32_t v) {
    switch (v % 9) {
    case 0:
        return v >> 3;
    case 1:
        return v * 7;
    case 2:
        return v ^ 0x5a5a5a5au;
    case 3:
        return (uint32_t)((int32_t)v >> 5);
    case 4:
        return v + mix_counter++;
    case 5:
        return v / 13u;
    case 6:
        return (uint32_t)((int32_t)v / -7);
    case 7:
        return (uint32_t)((int32_t)v % 11);
    default:
        return ~v;
    }
}

uint32_t mix_main(uint32_t seed) {
    static uint32_t (*const fns[3])(uint32_t) = {mix_step, mix_rotl, mix_neg};
    uint32_t h = seed;
    for (int i = 0; i < 37; i++) {
        h = mix_step(h);
        mix_recs[i].tag = (uint8_t)h;
        mix_recs[i].delta = (int16_t)(h >> 8);
        mix_recs[i].value = h ^ (uint32_t)i;
        mix_recs[i].small = (int8_t)(h >> 24);
    }
    uint64_t acc = 0;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 37; i++) {
            const struct mix_rec *r = &mix_recs[(i * 7 + round) % 37];
            int32_t d = r->delta + r->small + mix_table[r->tag & 15];
            uint32_t v = mix_classify(r->value + (uint32_t)d);
            v = fns[v % 3](v);
            acc += (uint64_t)v * (uint32_t)(d | 1);
            acc ^= acc >> 29;
        }
        mix_recs[round % 37].value += (uint32_t)acc;
    }
    return (uint32_t)acc ^ (uint32_t)(acc >> 32) ^ mix_counter;
}

#if defined(__riscv)
uint32_t _start(uint32_t seed);
uint32_t _start(uint32_t seed) {
    return mix_main(seed);
}
#endif
