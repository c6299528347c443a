/* A tiny test harness: each test binary is a list of test functions.
 *
 *   static void test_something(void) { CHECK(1 + 1 == 2); }
 *   int main(void) { TEST_RUN(test_something); return test_summary(); }
 *
 * Every test prints "PASS name" or "FAIL name: file:line: what"; the binary
 * exits nonzero when any test failed. A failed CHECK returns from the test
 * function, so put cleanup that must happen on failure before the checks or
 * accept the leak in a failing test.
 */
#ifndef LM_TEST_H
#define LM_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lm_status.h"

static int test_failures_;
static int test_count_;
static int test_current_failed_;

static inline void test_fail_(const char *file, int line, const char *what) {
    if (!test_current_failed_) printf("  %s:%d: %s\n", file, line, what);
    test_current_failed_ = 1;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_fail_(__FILE__, __LINE__, "CHECK(" #cond ") failed");                             \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                           \
        if (a_ != b_) {                                                                            \
            char m_[256];                                                                          \
            snprintf(m_, sizeof m_, "%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, a_, b_);          \
            test_fail_(__FILE__, __LINE__, m_);                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Checks a call's status; on mismatch prints both statuses and lm_last_error(). */
#define CHECK_STATUS(expr, expected)                                                               \
    do {                                                                                           \
        lm_status got_ = (expr);                                                                   \
        if (got_ != (expected)) {                                                                  \
            char m_[1400];                                                                         \
            snprintf(m_, sizeof m_, "%s gave %s, expected %s (last error: %s)", #expr,             \
                     lm_status_string(got_), lm_status_string(expected), lm_last_error());         \
            test_fail_(__FILE__, __LINE__, m_);                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, LM_OK)

/* Checks that lm_last_error() contains `needle`. */
#define CHECK_ERROR_HAS(needle)                                                                    \
    do {                                                                                           \
        if (!strstr(lm_last_error(), (needle))) {                                                  \
            char m_[1400];                                                                         \
            snprintf(m_, sizeof m_, "last error \"%s\" lacks \"%s\"", lm_last_error(), (needle));  \
            test_fail_(__FILE__, __LINE__, m_);                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Checks a call fails with `expected` and a message containing `needle`. */
#define CHECK_FAILS(expr, expected, needle)                                                        \
    do {                                                                                           \
        CHECK_STATUS(expr, expected);                                                              \
        CHECK_ERROR_HAS(needle);                                                                   \
    } while (0)

#define TEST_RUN(fn)                                                                               \
    do {                                                                                           \
        test_current_failed_ = 0;                                                                  \
        test_count_++;                                                                             \
        fn();                                                                                      \
        printf("%s %s\n", test_current_failed_ ? "FAIL" : "PASS", #fn);                            \
        fflush(stdout);                                                                            \
        test_failures_ += test_current_failed_;                                                    \
    } while (0)

static inline int test_summary(void) {
    printf("%d of %d tests passed\n", test_count_ - test_failures_, test_count_);
    return test_failures_ ? 1 : 0;
}

#endif
