/* Scheduling hints for the threads that stand in for the device.
 *
 * The dispatcher and the simulator's threads do the device's work, which
 * a program waits for anyway; the program's own threads do the host's,
 * which keeps the device fed. When the host has more runnable threads than
 * CPUs, a device thread that wakes (a command queued, a launch begun) should
 * not take the CPU from the host thread that woke it. */
#ifndef LM_BASE_THREAD_H
#define LM_BASE_THREAD_H

/* Marks the calling thread as batch work: waking it does not preempt a
 * running thread (Linux's SCHED_BATCH); it still gets its fair share of the
 * CPUs. Does nothing where there is no such policy, or when refused.
 * Call it from the thread itself, at its start. */
void thread_mark_batch(void);

#endif
