#include "format/lmb_trace.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define PAYLOAD_MAGIC 0x50544d4cu /* "LMTP" */
#define PAYLOAD_VERSION 1u
#define HEADER_WORDS 4u
#define KERNEL_WORDS (4u + LMB_TRACE_NAME_WORDS)

lm_status lmb_trace_payload_build(const lmb_trace_kernel *kernels, uint32_t kernel_count,
                                  const uint32_t *stream, size_t words, void **out_data,
                                  size_t *out_size) {
    size_t total = HEADER_WORDS + (size_t)kernel_count * KERNEL_WORDS + words;
    uint32_t *p = calloc(total, sizeof *p);
    if (!p) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t at = 0;
    p[at++] = PAYLOAD_MAGIC;
    p[at++] = PAYLOAD_VERSION;
    p[at++] = kernel_count;
    p[at++] = 0;
    for (uint32_t i = 0; i < kernel_count; i++) {
        p[at++] = (uint32_t)kernels[i].elf_hash;
        p[at++] = (uint32_t)(kernels[i].elf_hash >> 32);
        p[at++] = kernels[i].fp32_acc;
        p[at++] = LMB_TRACE_NAME_WORDS;
        strncpy((char *)&p[at], kernels[i].name ? kernels[i].name : "",
                LMB_TRACE_NAME_WORDS * 4 - 1);
        at += LMB_TRACE_NAME_WORDS;
    }
    if (words) memcpy(&p[at], stream, words * sizeof *p);
    *out_data = p;
    *out_size = total * sizeof *p;
    return LM_OK;
}

static lm_status bad(const char *what) {
    return err_set(LM_ERR_INVALID_FILE, "serialized trace: %s", what);
}

lm_status lmb_trace_payload_read(const void *file, fb_table root, lmb_BlobRef ref,
                                 lmb_trace_kernel **out_kernels, uint32_t *out_kernel_count,
                                 uint32_t **out_stream, size_t *out_words) {
    const uint8_t *bytes = lmb_blob_data(file, root, ref);
    if (ref.size % 4 || ref.size < HEADER_WORDS * 4) return bad("bad payload size");
    uint64_t n = ref.size / 4;
    uint32_t head[HEADER_WORDS];
    memcpy(head, bytes, sizeof head);
    if (head[0] != PAYLOAD_MAGIC) return bad("bad magic");
    if (head[1] != PAYLOAD_VERSION) return bad("unsupported version");
    if (head[2] > LMB_TRACE_MAX_KERNELS || (n - HEADER_WORDS) / KERNEL_WORDS < head[2])
        return bad("kernel table out of range");
    lmb_trace_kernel *k = calloc(head[2] ? head[2] : 1, sizeof *k);
    if (!k) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    uint64_t at = HEADER_WORDS;
    for (uint32_t i = 0; i < head[2]; i++, at += KERNEL_WORDS) {
        uint32_t w[4];
        memcpy(w, bytes + 4 * at, sizeof w);
        const char *name = (const char *)bytes + 4 * (at + 4);
        if (w[3] != LMB_TRACE_NAME_WORDS || !memchr(name, 0, 4 * LMB_TRACE_NAME_WORDS)) {
            free(k);
            return bad("bad kernel name");
        }
        k[i] = (lmb_trace_kernel){(uint64_t)w[1] << 32 | w[0], w[2] != 0, name};
    }
    size_t words = (size_t)(n - at);
    uint32_t *stream = malloc((words ? words : 1) * sizeof *stream);
    if (!stream) {
        free(k);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    memcpy(stream, bytes + 4 * at, words * sizeof *stream);
    *out_kernels = k;
    *out_kernel_count = head[2];
    *out_stream = stream;
    *out_words = words;
    return LM_OK;
}
