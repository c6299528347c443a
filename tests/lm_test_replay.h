/* Test helper for captures: replay a binary the test just captured. */
#ifndef LM_TEST_REPLAY_H
#define LM_TEST_REPLAY_H

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

static inline void test_replay_run_(const lm_binary *bin, lm_replay **out_r) {
    *out_r = NULL;
    const void *data = NULL;
    uint64_t size = 0;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, out_r));
    CHECK_OK(lm_replay_run(*out_r, NULL, NULL, NULL));
}

/* Opens `bin` for replay and runs it once on a device of its own, leaving
 * the open replay in `r` (close it before freeing the binary); a failure
 * fails the test and returns from it. */
#define REPLAY_RUN(bin, r)                                                                         \
    do {                                                                                           \
        test_replay_run_((bin), &(r));                                                             \
        if (test_current_failed_) return;                                                          \
    } while (0)

#endif
