#include "runtime/trace_blob.h"

#include <stdlib.h>

#include "base/error.h"
#include "format/lmb_trace.h"

lm_status trace_blob_load(lm_command_queue *cq, const void *file, uint32_t file_id,
                          uint32_t *out_trace_id) {
    fb_table root = lmb_root(file);
    lmb_BlobRef ref;
    if (!lmb_find_trace(root, file_id, &ref))
        return err_set(LM_ERR_INVALID_FILE, "trace %u is not in the file", file_id);
    lmb_trace_kernel *k = NULL;
    uint32_t n = 0;
    rt_trace_contents c = {0};
    lm_status st = lmb_trace_payload_read(file, root, ref, &k, &n, &c.stream, &c.words);
    rt_launch_kernel *kernels = st ? NULL : calloc(n ? n : 1, sizeof *kernels);
    if (!st && !kernels) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < n && !st; i++) {
        lmb_BlobRef elf;
        if (!lmb_find_kernel_binary(root, k[i].elf_hash, &elf))
            st =
                err_set(LM_ERR_INVALID_FILE, "trace %u: kernel %u's binary is missing", file_id, i);
        else
            kernels[i] = (rt_launch_kernel){
                NULL, k[i].name, k[i].fp32_acc, lmb_blob_data(file, root, elf), elf.size, elf.hash};
    }
    c.kernels = kernels;
    c.kernel_count = n;
    if (!st) st = rt_trace_import(cq, &c, out_trace_id);
    free(kernels);
    free(k);
    free(c.stream);
    return st;
}
