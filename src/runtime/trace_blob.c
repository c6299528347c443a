#include "runtime/trace_blob.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/hash.h"
#include "format/lmb_trace.h"

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Hashes each distinct kernel ELF the trace's `n` kernels name, once: the
 * trace may hold the only reference to a kernel, and a file changed after
 * it was written must be refused before anything runs. */
static lm_status check_kernels(const void *file, fb_table root, uint32_t file_id,
                               const lmb_trace_kernel *k, uint32_t n) {
    uint64_t *hashes = malloc((n ? n : 1) * sizeof *hashes);
    if (!hashes) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < n; i++)
        hashes[i] = k[i].elf_hash;
    qsort(hashes, n, sizeof *hashes, compare_u64);
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < n && !st; i++) {
        lmb_BlobRef elf;
        if ((i && hashes[i] == hashes[i - 1]) || !lmb_find_kernel_binary(root, hashes[i], &elf))
            continue; /* a missing one is refused as the trace loads */
        uint64_t got = hash64(lmb_blob_data(file, root, elf), (size_t)elf.size, 0);
        if (got != elf.hash)
            st = err_set(LM_ERR_INVALID_FILE,
                         "blob-hash-mismatch: trace %u: a kernel ELF of %llu bytes hashes to "
                         "%016llx, the file says %016llx",
                         file_id, (unsigned long long)elf.size, (unsigned long long)got,
                         (unsigned long long)elf.hash);
    }
    free(hashes);
    return st;
}

lm_status trace_blob_load(lm_command_queue *cq, const void *file, uint32_t file_id,
                          bool check_hashes, uint32_t *out_trace_id) {
    fb_table root = lmb_root(file);
    lmb_BlobRef ref;
    if (!lmb_find_trace(root, file_id, &ref))
        return err_set(LM_ERR_INVALID_FILE, "trace %u is not in the file", file_id);
    lmb_trace_kernel *k = NULL;
    uint32_t n = 0;
    rt_trace_contents c = {0};
    lm_status st = lmb_trace_payload_read(file, root, ref, &k, &n, &c.stream, &c.words);
    if (!st && check_hashes) st = check_kernels(file, root, file_id, k, n);
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
