/* The payload of a serialized metal trace (TraceDescriptor.data): which
 * kernels the trace's command stream indexes, and the stream itself. In
 * little-endian 32-bit words: magic, version, kernel count, 0; per kernel its
 * ELF's content hash (low, high word; the ELF is in kernel_binaries), its
 * fp32-accumulation flag, the name length in words and the NUL-padded name;
 * then the stream to the end. Used by collect/load and by Light Metal
 * capture/replay alike.
 */
#ifndef LM_FORMAT_LMB_TRACE_H
#define LM_FORMAT_LMB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/lmb.h"

#define LMB_TRACE_NAME_WORDS 16u
#define LMB_TRACE_MAX_KERNELS 65536u

typedef struct lmb_trace_kernel {
    uint64_t elf_hash;
    bool fp32_acc;
    const char *name; /* reading: points into the file, NUL-terminated */
} lmb_trace_kernel;

/* Builds a payload (malloc'ed; the caller frees *out_data). */
lm_status lmb_trace_payload_build(const lmb_trace_kernel *kernels, uint32_t kernel_count,
                                  const uint32_t *stream, size_t words, void **out_data,
                                  size_t *out_size);

/* Reads the payload `ref` of a verified file. *out_kernels is malloc'ed (the
 * caller frees it); *out_stream is a malloc'ed copy of the stream words.
 * Errors: LM_ERR_INVALID_FILE naming what does not hold together. */
lm_status lmb_trace_payload_read(const void *file, fb_table root, lmb_BlobRef ref,
                                 lmb_trace_kernel **out_kernels, uint32_t *out_kernel_count,
                                 uint32_t **out_stream, size_t *out_words);

#endif
