/* Public metal trace API: argument validation, then the runtime; and the
 * serialized form of traces (collect / load). */
#include <stdlib.h>
#include <string.h>

#include "api/api_binary.h"
#include "base/error.h"
#include "format/lmb_semantic.h"
#include "sim/kernel_map.h"
#include "lightmetal/lm_trace.h"
#include "runtime/cq.h"
#include "runtime/trace.h"
#include "api/api_capture_hook.h"

static lm_status finish(lm_status st, const char *fn) {
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_begin_trace_capture(lm_command_queue *cq, uint32_t *out_trace_id) {
    const char *fn = "lm_begin_trace_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!out_trace_id) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_trace_id is NULL", fn);
    CAPTURE(rt_cq_device(cq), cap_unsupported,
            "a metal trace capture during a Light Metal capture");
    return finish(rt_trace_begin(cq, out_trace_id), fn);
}

lm_status lm_end_trace_capture(lm_command_queue *cq, uint32_t trace_id) {
    const char *fn = "lm_end_trace_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    return finish(rt_trace_end(cq, trace_id), fn);
}

lm_status lm_replay_trace(lm_command_queue *cq, uint32_t trace_id, bool blocking) {
    const char *fn = "lm_replay_trace";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (rt_trace_capturing(cq))
        return err_set(LM_ERR_INVALID_STATE, "%s: the queue is capturing a trace", fn);
    CAPTURE(rt_cq_device(cq), cap_unsupported,
            "replaying a metal trace during a Light Metal capture");
    return finish(rt_trace_replay(cq, trace_id, blocking), fn);
}

lm_status lm_release_trace(lm_device *device, uint32_t trace_id) {
    const char *fn = "lm_release_trace";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    return finish(rt_trace_release(device, trace_id), fn);
}

/* ---- serializable traces ----
 * The blob is a Light Metal binary with no commands: its system descriptor,
 * the kernels' ELFs in kernel_binaries, and one trace whose data is, in
 * little-endian 32-bit words: magic, version, kernel count, 0; per kernel its
 * ELF hash (low, high), fp32 accumulation flag, name length in words and the
 * NUL-padded name; then the command stream. */

#define TRACE_BLOB_MAGIC 0x50544d4cu /* "LMTP" */
#define TRACE_BLOB_VERSION 1u
#define TRACE_NAME_MAX_WORDS 16u
#define LM_MAX_TRACE_KERNELS 65536u

static lm_status collect(lm_device *dev, uint32_t id, const rt_trace_contents *c, lmb_writer *w) {
    size_t words = 4 + c->words;
    for (uint32_t i = 0; i < c->kernel_count; i++)
        words += 4 + TRACE_NAME_MAX_WORDS;
    uint32_t *p = calloc(words, sizeof *p);
    if (!p) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t at = 0;
    p[at++] = TRACE_BLOB_MAGIC;
    p[at++] = TRACE_BLOB_VERSION;
    p[at++] = c->kernel_count;
    p[at++] = 0;
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < c->kernel_count && !st; i++) {
        const rt_launch_kernel *k = &c->kernels[i];
        uint64_t hash = 0;
        st = lmb_writer_add_kernel_binary(w, k->elf, k->elf_size, &hash);
        p[at++] = (uint32_t)hash;
        p[at++] = (uint32_t)(hash >> 32);
        p[at++] = k->fp32_acc;
        p[at++] = TRACE_NAME_MAX_WORDS;
        strncpy((char *)&p[at], k->name, TRACE_NAME_MAX_WORDS * 4 - 1);
        at += TRACE_NAME_MAX_WORDS;
    }
    memcpy(&p[at], c->stream, c->words * sizeof *p);
    if (!st) st = lmb_writer_add_trace(w, id, p, words * sizeof *p);
    free(p);
    lmb_header hdr;
    api_binary_header(&dev->info, &hdr);
    if (!st) st = lmb_writer_finish(w, &hdr);
    return st;
}

lm_status lm_collect_trace(lm_device *device, uint32_t trace_id, lm_binary **out_blob) {
    const char *fn = "lm_collect_trace";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (!out_blob) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_blob is NULL", fn);
    rt_trace_contents c;
    lm_status st = rt_trace_export(device, trace_id, &c);
    if (st) return finish(st, fn);
    lmb_writer *w;
    st = lmb_writer_create(&w);
    if (!st) st = collect(device, trace_id, &c, w);
    free(c.stream);
    if (st) {
        lmb_writer_destroy(w);
        return finish(st, fn);
    }
    *out_blob = api_binary_wrap(w);
    return *out_blob ? LM_OK : finish(LM_ERR_OUT_OF_HOST_MEMORY, fn);
}

static lm_status blob_error(const char *what) {
    return err_set(LM_ERR_INVALID_FILE, "not a serialized trace: %s", what);
}

/* Reads the payload of a verified blob into `c` (kernels point into `data`). */
static lm_status parse_payload(const void *data, fb_table root, rt_launch_kernel *kernels,
                               rt_trace_contents *c) {
    fb_vec traces = lmb_LightMetalBinary_traces(root);
    if (traces.len != 1) return blob_error("it must hold exactly one trace");
    lmb_BlobRef ref = lmb_TraceDescriptor_data(fb_vec_table(traces, 0));
    const uint8_t *bytes = lmb_blob_data(data, root, ref);
    if (ref.size % 4 || ref.size < 16) return blob_error("bad payload size");
    size_t n = ref.size / 4, at = 4;
    uint32_t head[4];
    memcpy(head, bytes, sizeof head);
    if (head[0] != TRACE_BLOB_MAGIC) return blob_error("bad payload magic");
    if (head[1] != TRACE_BLOB_VERSION) return blob_error("unsupported payload version");
    if (head[2] > LM_MAX_TRACE_KERNELS) return blob_error("too many kernels");
    for (uint32_t i = 0; i < head[2]; i++) {
        uint32_t k[4];
        if (n - at < 4) return blob_error("kernel table truncated");
        memcpy(k, bytes + 4 * at, sizeof k);
        at += 4;
        if (k[3] != TRACE_NAME_MAX_WORDS || n - at < k[3]) return blob_error("bad kernel name");
        const char *name = (const char *)bytes + 4 * at;
        if (!memchr(name, 0, 4 * k[3])) return blob_error("kernel name not terminated");
        at += k[3];
        lmb_BlobRef elf;
        if (!lmb_find_kernel_binary(root, (uint64_t)k[1] << 32 | k[0], &elf))
            return blob_error("a kernel binary is missing");
        kernels[i] =
            (rt_launch_kernel){NULL, name, k[2] != 0, lmb_blob_data(data, root, elf), elf.size};
    }
    c->kernel_count = head[2];
    c->kernels = kernels;
    c->words = n - at;
    c->stream = malloc((c->words ? c->words : 1) * sizeof *c->stream);
    if (!c->stream) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    memcpy(c->stream, bytes + 4 * at, c->words * 4);
    return LM_OK;
}

lm_status lm_load_trace(lm_command_queue *cq, const void *data, uint64_t size,
                        uint32_t *out_trace_id) {
    const char *fn = "lm_load_trace";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!data || !out_trace_id)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: data and out_trace_id must not be NULL", fn);
    lmb_verify_options vo;
    lmb_verify_options_init(&vo);
    vo.check_blob_hashes = true; /* blobs are small; catch every flipped bit */
    lm_status st = lmb_verify(data, size, &vo, NULL);
    lmb_semantic_options so;
    lmb_semantic_options_init(&so);
    so.kernel_map =
        (lmb_kernel_map){KMAP_CODE_BASE, KMAP_CODE_SIZE, KMAP_LOCAL_BASE, KMAP_LOCAL_SIZE};
    if (!st) st = lmb_verify_semantics(data, size, &so);
    if (st) return finish(st, fn);
    fb_table root = lmb_root(data);
    fb_table sys = lmb_LightMetalBinary_system(root);
    const lm_device_info *i = &rt_cq_device(cq)->info;
    if (i->grid_x != lmb_SystemDescriptor_grid_x(sys) ||
        i->grid_y != lmb_SystemDescriptor_grid_y(sys) ||
        i->l1_size != lmb_SystemDescriptor_l1_size(sys) ||
        i->dram_banks != lmb_SystemDescriptor_dram_banks(sys) ||
        i->dram_bank_size < lmb_SystemDescriptor_dram_bank_size(sys))
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: the trace was made for a %ux%u device with %u B of L1 and %u DRAM "
                       "banks, not this %ux%u one with %llu B and %u banks",
                       fn, lmb_SystemDescriptor_grid_x(sys), lmb_SystemDescriptor_grid_y(sys),
                       lmb_SystemDescriptor_l1_size(sys), lmb_SystemDescriptor_dram_banks(sys),
                       i->grid_x, i->grid_y, (unsigned long long)i->l1_size, i->dram_banks);
    rt_launch_kernel *kernels = calloc(LM_MAX_TRACE_KERNELS, sizeof *kernels);
    rt_trace_contents c = {0};
    if (!kernels) return finish(err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"), fn);
    st = parse_payload(data, root, kernels, &c);
    if (!st) st = rt_trace_import(cq, &c, out_trace_id);
    free(c.stream);
    free(kernels);
    return finish(st, fn);
}
