/* Writing a trace into a Light Metal file (see trace_blob.h). Apart from
 * trace_blob.c so that a replay-only program links no file writer. */
#include <stdlib.h>

#include "base/error.h"
#include "format/lmb_trace.h"
#include "runtime/trace_blob.h"

lm_status trace_blob_add(lmb_writer *w, uint32_t file_id, const rt_trace_contents *c) {
    lmb_trace_kernel *k = calloc(c->kernel_count ? c->kernel_count : 1, sizeof *k);
    if (!k) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < c->kernel_count && !st; i++) {
        k[i] = (lmb_trace_kernel){0, c->kernels[i].fp32_acc, c->kernels[i].name};
        st = lmb_writer_add_kernel_binary(w, c->kernels[i].elf, c->kernels[i].elf_size,
                                          &k[i].elf_hash);
    }
    void *payload = NULL;
    size_t size = 0;
    if (!st) st = lmb_trace_payload_build(k, c->kernel_count, c->stream, c->words, &payload, &size);
    if (!st) st = lmb_writer_add_trace(w, file_id, payload, size);
    free(payload);
    free(k);
    return st;
}
