/* Kernel API shared by data movement and compute kernels: arguments, circular
 * buffers, printing. Names follow tt-metal's kernel API.
 *
 * Kernels are C11 or C++17 compiled for RV32IM; each runs on one processor of
 * a core (LM_PROCESSOR, set by the build: LM_PROC_DM0, LM_PROC_DM1 or
 * LM_PROC_COMPUTE) and starts at `void kernel_main(void)`.
 *
 * C++ kernels get tt-metal's C++ forms of the names that differ
 * (get_arg_val<T>, constexpr get_compile_time_arg_val, DPRINT << ...) from
 * lm/common.hpp, included at the end; the C forms below are C-only where the
 * two would clash. Both call the same lm_ functions.
 */
#ifndef LM_KERNEL_COMMON_H
#define LM_KERNEL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "lm_kernel_abi.h"

#ifndef LM_PROCESSOR
#error "LM_PROCESSOR must be defined by the kernel build"
#endif

#ifdef __cplusplus
extern "C" void kernel_main(void);
#else
void kernel_main(void);
#endif

/* ---- ecall plumbing ---- */
static inline uint32_t lm_ecall(uint32_t n, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                uint32_t a4) {
    register uint32_t r0 __asm__("a0") = a0;
    register uint32_t r1 __asm__("a1") = a1;
    register uint32_t r2 __asm__("a2") = a2;
    register uint32_t r3 __asm__("a3") = a3;
    register uint32_t r4 __asm__("a4") = a4;
    register uint32_t r7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r7) : "memory");
    return r0;
}

/* The same with all seven argument registers (its own function so that
 * the many five-argument calls set no registers they do not use). */
static inline uint32_t lm_ecall7(uint32_t n, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                 uint32_t a4, uint32_t a5, uint32_t a6) {
    register uint32_t r0 __asm__("a0") = a0;
    register uint32_t r1 __asm__("a1") = a1;
    register uint32_t r2 __asm__("a2") = a2;
    register uint32_t r3 __asm__("a3") = a3;
    register uint32_t r4 __asm__("a4") = a4;
    register uint32_t r5 __asm__("a5") = a5;
    register uint32_t r6 __asm__("a6") = a6;
    register uint32_t r7 __asm__("a7") = n;
    __asm__ volatile("ecall"
                     : "+r"(r0)
                     : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6), "r"(r7)
                     : "memory");
    return r0;
}

static inline volatile uint32_t *lm_l1_word(uint32_t addr) {
    return (volatile uint32_t *)(uintptr_t)addr;
}

/* ---- arguments ---- */
/* The L1 address of runtime argument i of this processor, and of common
 * argument i. */
static inline uint32_t lm_arg_addr(uint32_t i) {
    return LM_L1_RUNTIME_ARGS + LM_PROCESSOR * LM_RUNTIME_ARGS_STRIDE + 4 * i;
}
static inline uint32_t lm_common_arg_addr(uint32_t i) {
    return LM_L1_COMMON_ARGS + LM_PROCESSOR * LM_RUNTIME_ARGS_STRIDE + 4 * i;
}
#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS 0u
#endif
#ifndef __cplusplus
static inline uint32_t get_arg_val(uint32_t i) {
    return *lm_l1_word(lm_arg_addr(i));
}
static inline uint32_t get_common_arg_val(uint32_t i) {
    return *lm_l1_word(lm_common_arg_addr(i));
}
static const uint32_t lm_compile_time_args_[] = {KERNEL_COMPILE_TIME_ARGS};
#define get_compile_time_arg_val(i) (lm_compile_time_args_[(i)])
#endif

/* This core's logical coordinates. */
static inline uint32_t my_x(void) {
    return lm_l1_word(LM_L1_CORE_INFO)[LM_CORE_INFO_X];
}
static inline uint32_t my_y(void) {
    return lm_l1_word(LM_L1_CORE_INFO)[LM_CORE_INFO_Y];
}

/* ---- circular buffers ---- */
static inline void cb_reserve_back(uint32_t cb, uint32_t pages) {
    lm_ecall(LM_ECALL_CB_RESERVE_BACK, cb, pages, 0, 0, 0);
}
static inline void cb_push_back(uint32_t cb, uint32_t pages) {
    lm_ecall(LM_ECALL_CB_PUSH_BACK, cb, pages, 0, 0, 0);
}
static inline void cb_wait_front(uint32_t cb, uint32_t pages) {
    lm_ecall(LM_ECALL_CB_WAIT_FRONT, cb, pages, 0, 0, 0);
}
static inline void cb_pop_front(uint32_t cb, uint32_t pages) {
    lm_ecall(LM_ECALL_CB_POP_FRONT, cb, pages, 0, 0, 0);
}
static inline uint32_t get_write_ptr(uint32_t cb) {
    return lm_ecall(LM_ECALL_CB_WRITE_PTR, cb, 0, 0, 0, 0);
}
static inline uint32_t get_read_ptr(uint32_t cb) {
    return lm_ecall(LM_ECALL_CB_READ_PTR, cb, 0, 0, 0, 0);
}
static inline bool cb_pages_available_at_front(uint32_t cb, uint32_t pages) {
    return lm_ecall(LM_ECALL_CB_PAGES_AVAILABLE, cb, pages, 0, 0, 0) != 0;
}
static inline bool cb_pages_reservable_at_back(uint32_t cb, uint32_t pages) {
    return lm_ecall(LM_ECALL_CB_PAGES_FREE, cb, pages, 0, 0, 0) != 0;
}
/* Page size of a circular buffer (a tile's size for tile-sized pages). */
static inline uint32_t get_tile_size(uint32_t cb) {
    return lm_l1_word(LM_L1_CB_CONFIG + cb * LM_CB_CONFIG_STRIDE)[2];
}

/* ---- printing ----
 * DPRINT("x=%u at %x\n", x, addr) prints on the host, tagged with the core and
 * processor. Each argument travels as one 32-bit word: %d %i %u %x %X %c %p
 * take it as an integer, %f as float bits (pass DPRINT_FLOAT(v)), %s as the
 * address of a NUL-terminated string. Text without a line break is held
 * until one comes, so a line may be printed in pieces. (C++ kernels: the
 * same call, and tt-metal's `DPRINT << x << ENDL()` and DEVICE_PRINT; there a
 * DPRINT whose format has a {} field prints as DEVICE_PRINT, see
 * lm/print.hpp.) */
static inline void lm_print(const char *fmt, const uint32_t *args, uint32_t count) {
    lm_ecall(LM_ECALL_PRINT, (uint32_t)(uintptr_t)fmt, (uint32_t)(uintptr_t)args, count, 0, 0);
}
#ifndef __cplusplus
#define DPRINT(fmt, ...)                                                                           \
    do {                                                                                           \
        const uint32_t lm_print_args_[] = {0, ##__VA_ARGS__};                                      \
        lm_print((fmt), lm_print_args_ + 1, sizeof lm_print_args_ / sizeof lm_print_args_[0] - 1); \
    } while (0)
#endif

static inline uint32_t DPRINT_FLOAT(float v) {
    union {
        float f;
        uint32_t u;
    } b = {v};
    return b.u;
}

#ifdef __cplusplus
#include "lm/common.hpp"
#endif

#endif
