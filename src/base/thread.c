#define _GNU_SOURCE /* SCHED_BATCH */
#include "base/thread.h"

#include <pthread.h>
#include <sched.h>

void thread_mark_batch(void) {
#ifdef SCHED_BATCH
    /* Needs no privilege; a failure only loses the hint. */
    struct sched_param param = {0};
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
#endif
}
