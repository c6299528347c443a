/* Shared between the C and C++ halves of the FlatBuffers benchmark: the
 * workload both build (the same tables, field values and order) and the
 * C++ reference entry points. */
#ifndef LM_BENCH_FORMAT_FB_BENCH_H
#define LM_BENCH_FORMAT_FB_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FB_BENCH_COMMANDS 100000
#define FB_BENCH_ARGS 8
#define FB_BENCH_CARGS 4

/* Command i is of kind i % 5: CreateBuffer, EnqueueWriteBuffer,
 * SetRuntimeArgs, EnqueueProgram, CreateKernel. Field values derive from i. */
static inline uint32_t fb_bench_arg(uint32_t i, uint32_t k) {
    return i * 2654435761u + k;
}

/* Builds the workload with the C++ FlatBuffers library; returns the size and
 * the buffer (owned by the C++ side, valid until the next call). */
size_t fbcpp_build(const void **out_buf);

/* Verifies with the generated C++ verifier and reads every field; returns 0
 * when verification failed, else 1 with a checksum of all fields. */
int fbcpp_verify_traverse(const void *buf, size_t size, uint64_t *out_sum);

#ifdef __cplusplus
}
#endif

#endif
