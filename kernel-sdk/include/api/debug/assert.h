/* tt-metal's api/debug/assert.h, for C and C++ kernels.
 *
 * ASSERT(condition) and ASSERT(condition, "message") check the condition, as
 * tt-metal does with its watcher enabled; ASSERT_TYPE(condition, type) is
 * ASSERT with one of the watcher's assert kinds, which changes nothing here.
 * A failed assert stops the kernel at once instead of hanging it for the
 * watcher to find: the line
 *     ASSERT failed: <condition> (<file>:<line>)[: message]
 * goes to the device's print callback, then the kernel faults (an ebreak,
 * which the launch reports with the core, processor and kernel name). The
 * condition is compiled and evaluated in every build, so it must name only
 * what the kernel can see.
 */
#ifndef LM_DEBUG_ASSERT_H
#define LM_DEBUG_ASSERT_H

#include "lm_kernel_common.h"

/* The kernel's last act: the message, then a fault. */
__attribute__((noreturn, cold, noinline)) static inline void
lm_assert_failed(const char *condition, const char *file, uint32_t line, const char *message) {
    const uint32_t args[] = {(uint32_t)(uintptr_t)condition, (uint32_t)(uintptr_t)file, line,
                             (uint32_t)(uintptr_t)message};
    if (message && *message)
        lm_print("ASSERT failed: %s (%s:%u): %s\n", args, 4);
    else
        lm_print("ASSERT failed: %s (%s:%u)\n", args, 3);
    for (;;)
        __asm__ volatile("ebreak");
}

/* ASSERT(c) and ASSERT(c, "m") both reach LM_ASSERT_ with a message and
 * something for the `...` (C before C23 wants at least one argument there). */
#define LM_ASSERT_(condition, message, ...)                                                        \
    do {                                                                                           \
        if (!(condition)) lm_assert_failed(#condition, __FILE__, __LINE__, message);               \
    } while (0)
#define ASSERT(...) LM_ASSERT_(__VA_ARGS__, "", "")
#define ASSERT_TYPE(condition, type) LM_ASSERT_(condition, "", "")

#define ASSERT_ENABLED 1
#define WATCHER_ASSERT_ENABLED 0
#define LIGHTWEIGHT_ASSERT_ENABLED 0

#endif
