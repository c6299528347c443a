/* The RV32IM interpreter: rv_run and rv_run_switch (contract in rv_hart.h).
 * The loop itself is in rv_run_impl.h, instantiated once per dispatch style
 * so that both styles share every line of instruction semantics. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/kernel_map.h"
#include "sim/rv32/rv_hart.h"
#include "sim/rv32/rv_insn.h"

#if defined(__GNUC__)
#define RV_LIKELY(c) __builtin_expect(!!(c), 1)
#define RV_UNLIKELY(c) __builtin_expect(!!(c), 0)
#define RV_HAVE_COMPUTED_GOTO 1
#else
#define RV_LIKELY(c) (c)
#define RV_UNLIKELY(c) (c)
#define RV_HAVE_COMPUTED_GOTO 0
#endif

/* Guest memory is little-endian; on a little-endian host these vanish. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static inline uint16_t rv_le16(uint16_t v) {
    return __builtin_bswap16(v);
}
static inline uint32_t rv_le32(uint32_t v) {
    return __builtin_bswap32(v);
}
#else
static inline uint16_t rv_le16(uint16_t v) {
    return v;
}
static inline uint32_t rv_le32(uint32_t v) {
    return v;
}
#endif

static inline uint32_t rv_le32_at(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return rv_le32(v);
}

/* Arithmetic right shift; C leaves >> of a negative value to the compiler,
 * so spell it out (compilers turn this into one sar). */
static inline uint32_t rv_sra(uint32_t v, uint32_t s) {
    return v & 0x80000000u ? ~(~v >> s) : v >> s;
}

static inline uint32_t rv_high(uint64_t product) {
    return (uint32_t)(product >> 32);
}

/* Division by zero and INT_MIN / -1 do not trap in RISC-V: they give the
 * results the ISA specifies, which C would leave undefined. */
static inline uint32_t rv_div(uint32_t a, uint32_t b) {
    if (b == 0) return UINT32_MAX;
    if (a == 0x80000000u && b == UINT32_MAX) return a;
    return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint32_t rv_rem(uint32_t a, uint32_t b) {
    if (b == 0) return a;
    if (a == 0x80000000u && b == UINT32_MAX) return 0;
    return (uint32_t)((int32_t)a % (int32_t)b);
}

/* Branch condition by funct3, for the rare branch whose target is not code. */
static int rv_branch_taken(uint32_t funct3, uint32_t a, uint32_t b) {
    switch (funct3) {
    case 0:
        return a == b;
    case 1:
        return a != b;
    case 4:
        return (int32_t)a < (int32_t)b;
    case 5:
        return (int32_t)a >= (int32_t)b;
    case 6:
        return a < b;
    default:
        return a >= b;
    }
}

#define RV_IMPL_NAME rv_run_switch
#define RV_IMPL_GOTO 0
#include "sim/rv32/rv_run_impl.h"
#undef RV_IMPL_NAME
#undef RV_IMPL_GOTO

#if RV_HAVE_COMPUTED_GOTO
#define RV_IMPL_NAME rv_run
#define RV_IMPL_GOTO 1
#include "sim/rv32/rv_run_impl.h"
#undef RV_IMPL_NAME
#undef RV_IMPL_GOTO
#else
rv_stop rv_run(rv_hart *hart, uint64_t budget, rv_ecall_fn ecall, void *ctx) {
    return rv_run_switch(hart, budget, ecall, ctx);
}
#endif
