/* `lightmetal info`: a summary of what a binary holds, as text or JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmt.h"
#include "lmt_json.h"
#include "lmt_npy.h"

/* Distinct payloads of the data region: BlobRefs to equal bytes share one
 * offset, so counting distinct (offset, size) pairs counts stored blobs. */
typedef struct info_blobs {
    lmb_BlobRef *refs;
    size_t count, cap;
    bool oom;
} info_blobs;

static void blobs_add(info_blobs *b, lmb_BlobRef r) {
    if (r.size == 0 || b->oom) return;
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        lmb_BlobRef *p = realloc(b->refs, cap * sizeof *p);
        if (!p) {
            b->oom = true;
            return;
        }
        b->refs = p;
        b->cap = cap;
    }
    b->refs[b->count++] = r;
}

static int blob_cmp(const void *pa, const void *pb) {
    const lmb_BlobRef *a = pa, *b = pb;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    return 0;
}

/* Sorts and removes duplicates; returns the total size of the distinct blobs. */
static uint64_t blobs_unique(info_blobs *b) {
    if (b->count == 0) return 0;
    qsort(b->refs, b->count, sizeof b->refs[0], blob_cmp);
    size_t n = 1;
    for (size_t i = 1; i < b->count; i++)
        if (blob_cmp(&b->refs[i], &b->refs[n - 1]) != 0) b->refs[n++] = b->refs[i];
    b->count = n;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += b->refs[i].size;
    return total;
}

static const char *enum_or(const char *enum_name, unsigned v) {
    const char *s = lmb_enum_name(enum_name, v);
    return s ? s : "?";
}

/* Everything info prints, gathered once and printed as text or JSON. */
typedef struct info {
    const char *path;
    uint64_t file_size;
    fb_table root;
    uint64_t per_type[LMB_Command_COUNT + 1];
    uint64_t labelled; /* EnqueuePrograms with a launch label */
    info_blobs blobs;
    uint64_t blob_bytes;
} info;

static void gather(info *in) {
    fb_table root = in->root;
    fb_vec cmds = lmb_LightMetalBinary_commands(root);
    for (uint32_t i = 0; i < cmds.len; i++) {
        fb_table e = fb_vec_table(cmds, i);
        unsigned type = lmb_CommandEntry_cmd_type(e);
        fb_table c = lmb_CommandEntry_cmd(e);
        if (type <= LMB_Command_COUNT) in->per_type[type]++;
        if (type == LMB_Command_EnqueueProgram && lmb_EnqueueProgram_label(c).len) in->labelled++;
        if (type == LMB_Command_EnqueueWriteBuffer)
            blobs_add(&in->blobs, lmb_EnqueueWriteBuffer_data(c));
        else if (type == LMB_Command_CompareToGolden)
            blobs_add(&in->blobs, lmb_CompareToGolden_golden(c));
        else if (type == LMB_Command_WriteDeviceL1)
            blobs_add(&in->blobs, lmb_WriteDeviceL1_data(c));
    }
    fb_vec traces = lmb_LightMetalBinary_traces(root);
    for (uint32_t i = 0; i < traces.len; i++)
        blobs_add(&in->blobs, lmb_TraceDescriptor_data(fb_vec_table(traces, i)));
    fb_vec kernels = lmb_LightMetalBinary_kernel_binaries(root);
    for (uint32_t i = 0; i < kernels.len; i++)
        blobs_add(&in->blobs, lmb_vec_BlobRef_at(kernels, i));
    in->blob_bytes = blobs_unique(&in->blobs);
}

/* One CreateKernel command, as info lists it (next_kernel walks them). */
typedef struct info_kernel {
    uint32_t index, kernel_id, program_id;
    fb_str name;
    const char *processor;
    uint64_t size, hash;
} info_kernel;

static bool next_kernel(fb_table root, uint32_t *pos, info_kernel *out) {
    fb_vec cmds = lmb_LightMetalBinary_commands(root);
    for (; *pos < cmds.len; (*pos)++) {
        fb_table e = fb_vec_table(cmds, *pos);
        if (lmb_CommandEntry_cmd_type(e) != LMB_Command_CreateKernel) continue;
        fb_table c = lmb_CommandEntry_cmd(e);
        out->index = *pos;
        out->kernel_id = lmb_CreateKernel_kernel_id(c);
        out->program_id = lmb_CreateKernel_program_id(c);
        out->name = lmb_CreateKernel_name(c);
        if (!out->name.ptr) out->name = (fb_str){"", 0};
        out->processor =
            enum_or("Processor", lmb_KernelConfig_processor(lmb_CreateKernel_config(c)));
        out->hash = lmb_CreateKernel_binary_hash(c);
        lmb_BlobRef ref;
        out->size = lmb_find_kernel_binary(root, out->hash, &ref) ? ref.size : 0;
        (*pos)++;
        return true;
    }
    return false;
}

/* One BufferName entry, as info lists it. */
typedef struct info_name {
    fb_str name;
    const char *role;         /* Input, Output or InputOutput */
    const char *format;       /* a DataFormat name, or NULL when none was recorded */
    const char *element_type; /* an ElementType name, or NULL: the format's own */
    uint32_t buffer_id;
    uint64_t size;
    fb_vec shape; /* empty when none was recorded */
    bool scalar;  /* a rank-0 tensor */
} info_name;

static void named_buffer(fb_table root, fb_table t, info_name *out) {
    out->name = lmb_BufferName_name(t);
    out->role = enum_or("BufferRole", lmb_BufferName_role(t));
    unsigned f = lmb_BufferName_format(t);
    out->format = f ? enum_or("DataFormat", f) : NULL;
    unsigned et = lmb_BufferName_element_type(t);
    out->element_type = et ? enum_or("ElementType", et) : NULL;
    out->buffer_id = lmb_BufferName_buffer_id(t);
    out->size = 0;
    lmt_buffer_size(root, out->buffer_id, &out->size);
    out->shape = lmb_BufferName_shape(t);
    out->scalar = lmb_BufferName_scalar(t);
    /* An empty tensor (a 0 in its shape) has no bytes; its buffer only
     * carries the name. */
    for (uint32_t i = 0; i < out->shape.len; i++)
        if (fb_vec_u32(out->shape, i) == 0) out->size = 0;
}

/* "(32, 32)", "()" for a scalar or "" (no shape). */
#define INFO_SHAPE_TEXT_MAX 256
static void shape_text(const info_name *nb, char *dst, size_t size) {
    fb_vec shape = nb->shape;
    dst[0] = '\0';
    if (shape.len == 0 && !nb->scalar) return;
    uint64_t dims[LMT_NPY_MAX_RANK];
    uint32_t rank = shape.len < LMT_NPY_MAX_RANK ? shape.len : LMT_NPY_MAX_RANK;
    for (uint32_t i = 0; i < rank; i++)
        dims[i] = fb_vec_u32(shape, i);
    lmt_npy_format_shape(rank, dims, dst, size);
}

static void print_json(const info *in) {
    fb_table root = in->root;
    lmt_json j;
    lmt_json_init(&j, stdout);
    lmt_json_begin_object(&j, NULL);
    lmt_json_cstr(&j, "file", in->path);
    lmb_Version v = lmb_LightMetalBinary_format_version(root);
    char ver[32];
    snprintf(ver, sizeof ver, "%u.%u.%u", v.major, v.minor, v.patch);
    lmt_json_cstr(&j, "format_version", ver);
    fb_str producer = lmb_LightMetalBinary_producer(root);
    lmt_json_string(&j, "producer", producer.ptr ? producer.ptr : "", producer.len);
    v = lmb_LightMetalBinary_producer_version(root);
    snprintf(ver, sizeof ver, "%u.%u.%u", v.major, v.minor, v.patch);
    lmt_json_cstr(&j, "producer_version", ver);
    lmt_json_cstr(&j, "reader_version", LMT_VERSION_STRING);

    fb_table sys = lmb_LightMetalBinary_system(root);
    lmt_json_begin_object(&j, "system");
    lmt_json_u64(&j, "grid_x", lmb_SystemDescriptor_grid_x(sys));
    lmt_json_u64(&j, "grid_y", lmb_SystemDescriptor_grid_y(sys));
    lmt_json_u64(&j, "l1_size", lmb_SystemDescriptor_l1_size(sys));
    lmt_json_u64(&j, "dram_banks", lmb_SystemDescriptor_dram_banks(sys));
    lmt_json_u64(&j, "dram_bank_size", lmb_SystemDescriptor_dram_bank_size(sys));
    fb_vec fmts = lmb_SystemDescriptor_data_formats(sys);
    lmt_json_begin_array(&j, "data_formats");
    for (uint32_t i = 0; i < fmts.len; i++)
        lmt_json_cstr(&j, NULL, enum_or("DataFormat", fb_vec_u8(fmts, i)));
    lmt_json_end_array(&j);
    lmt_json_end_object(&j);

    lmt_json_begin_object(&j, "sizes");
    lmt_json_u64(&j, "file", in->file_size);
    lmt_json_u64(&j, "data_offset", lmb_LightMetalBinary_data_offset(root));
    lmt_json_u64(&j, "data_size", lmb_LightMetalBinary_data_size(root));
    lmt_json_end_object(&j);

    lmt_json_u64(&j, "commands", lmb_LightMetalBinary_commands(root).len);
    lmt_json_begin_object(&j, "commands_per_type");
    for (unsigned t = 1; t <= LMB_Command_COUNT; t++)
        if (in->per_type[t]) lmt_json_u64(&j, lmb_command_name(t), in->per_type[t]);
    lmt_json_end_object(&j);
    lmt_json_u64(&j, "labelled_launches", in->labelled);

    lmt_json_begin_array(&j, "kernels");
    info_kernel k;
    for (uint32_t pos = 0; next_kernel(root, &pos, &k);) {
        char hash[24];
        snprintf(hash, sizeof hash, "0x%016" PRIx64, k.hash);
        lmt_json_begin_object(&j, NULL);
        lmt_json_u64(&j, "command", k.index);
        lmt_json_u64(&j, "kernel_id", k.kernel_id);
        lmt_json_u64(&j, "program_id", k.program_id);
        lmt_json_string(&j, "name", k.name.ptr, k.name.len);
        lmt_json_cstr(&j, "processor", k.processor);
        lmt_json_u64(&j, "size", k.size);
        lmt_json_cstr(&j, "hash", hash);
        lmt_json_end_object(&j);
    }
    lmt_json_end_array(&j);

    lmt_json_begin_object(&j, "blobs");
    lmt_json_u64(&j, "count", in->blobs.count);
    lmt_json_u64(&j, "bytes", in->blob_bytes);
    lmt_json_u64(&j, "kernel_binaries", lmb_LightMetalBinary_kernel_binaries(root).len);
    lmt_json_end_object(&j);

    fb_vec traces = lmb_LightMetalBinary_traces(root);
    lmt_json_begin_array(&j, "traces");
    for (uint32_t i = 0; i < traces.len; i++) {
        fb_table t = fb_vec_table(traces, i);
        lmt_json_begin_object(&j, NULL);
        lmt_json_u64(&j, "trace_id", lmb_TraceDescriptor_trace_id(t));
        lmt_json_u64(&j, "size", lmb_TraceDescriptor_data(t).size);
        lmt_json_end_object(&j);
    }
    lmt_json_end_array(&j);

    fb_vec names = lmb_LightMetalBinary_buffer_names(root);
    lmt_json_begin_array(&j, "named_buffers");
    for (uint32_t i = 0; i < names.len; i++) {
        info_name nb;
        named_buffer(root, fb_vec_table(names, i), &nb);
        lmt_json_begin_object(&j, NULL);
        lmt_json_string(&j, "name", nb.name.ptr, nb.name.len);
        lmt_json_cstr(&j, "role", nb.role);
        lmt_json_u64(&j, "buffer_id", nb.buffer_id);
        lmt_json_u64(&j, "size", nb.size);
        lmt_json_cstr(&j, "format", nb.format ? nb.format : "none");
        if (nb.element_type) lmt_json_cstr(&j, "element_type", nb.element_type);
        if (nb.scalar) lmt_json_bool(&j, "scalar", true);
        lmt_json_begin_array(&j, "shape");
        for (uint32_t d = 0; d < nb.shape.len; d++)
            lmt_json_u64(&j, NULL, fb_vec_u32(nb.shape, d));
        lmt_json_end_array(&j);
        lmt_json_end_object(&j);
    }
    lmt_json_end_array(&j);
    lmt_json_end_object(&j);
}

static void print_text(const info *in) {
    fb_table root = in->root;
    lmb_Version v = lmb_LightMetalBinary_format_version(root);
    printf("file:           %s (%" PRIu64 " bytes)\n", in->path, in->file_size);
    printf("format version: %u.%u.%u\n", v.major, v.minor, v.patch);
    fb_str producer = lmb_LightMetalBinary_producer(root);
    v = lmb_LightMetalBinary_producer_version(root);
    printf("producer:       %.*s %u.%u.%u\n", (int)producer.len, producer.ptr ? producer.ptr : "",
           v.major, v.minor, v.patch);
    printf("read by:        lightmetal %s (binary format %d.%d)\n", LMT_VERSION_STRING,
           LMB_FORMAT_MAJOR, LMB_FORMAT_MINOR);
    fb_table sys = lmb_LightMetalBinary_system(root);
    printf("system:         grid %ux%u, L1 %u bytes, DRAM %u banks x %" PRIu64 " bytes",
           lmb_SystemDescriptor_grid_x(sys), lmb_SystemDescriptor_grid_y(sys),
           lmb_SystemDescriptor_l1_size(sys), lmb_SystemDescriptor_dram_banks(sys),
           lmb_SystemDescriptor_dram_bank_size(sys));
    /* (0: a binary from before the field, replayed with the default.) */
    if (lmb_SystemDescriptor_trace_region_size(sys))
        printf(", trace region %" PRIu64 " bytes", lmb_SystemDescriptor_trace_region_size(sys));
    printf("\n");
    fb_vec fmts = lmb_SystemDescriptor_data_formats(sys);
    printf("data formats:  ");
    for (uint32_t i = 0; i < fmts.len; i++)
        printf(" %s", enum_or("DataFormat", fb_vec_u8(fmts, i)));
    printf("%s\n", fmts.len ? "" : " (none)");
    printf("sizes:          table area %" PRIu64 " bytes (padded), data region %" PRIu64 " bytes\n",
           lmb_LightMetalBinary_data_offset(root), lmb_LightMetalBinary_data_size(root));

    printf("commands:       %u\n", (unsigned)lmb_LightMetalBinary_commands(root).len);
    for (unsigned t = 1; t <= LMB_Command_COUNT; t++)
        if (in->per_type[t]) printf("  %-22s %" PRIu64 "\n", lmb_command_name(t), in->per_type[t]);
    if (in->per_type[LMB_Command_EnqueueProgram])
        printf("launch labels:  %" PRIu64 " of %" PRIu64
               " EnqueuePrograms (lightmetal run --profile "
               "times the launches by label)\n",
               in->labelled, in->per_type[LMB_Command_EnqueueProgram]);

    printf("kernels:\n");
    info_kernel k;
    uint32_t count = 0;
    for (uint32_t pos = 0; next_kernel(root, &pos, &k); count++)
        printf("  [%u] %-16.*s %-8s %8" PRIu64 " bytes  hash 0x%016" PRIx64 "\n", k.kernel_id,
               (int)k.name.len, k.name.ptr, k.processor, k.size, k.hash);
    if (!count) printf("  (none)\n");

    printf("blobs:          %zu distinct, %" PRIu64 " bytes (%u kernel binaries)\n",
           in->blobs.count, in->blob_bytes,
           (unsigned)lmb_LightMetalBinary_kernel_binaries(root).len);

    fb_vec traces = lmb_LightMetalBinary_traces(root);
    printf("traces:         %u\n", (unsigned)traces.len);
    for (uint32_t i = 0; i < traces.len; i++) {
        fb_table t = fb_vec_table(traces, i);
        printf("  trace %u: %" PRIu64 " bytes\n", lmb_TraceDescriptor_trace_id(t),
               lmb_TraceDescriptor_data(t).size);
    }

    fb_vec names = lmb_LightMetalBinary_buffer_names(root);
    printf("named buffers:  %u\n", (unsigned)names.len);
    for (uint32_t i = 0; i < names.len; i++) {
        info_name nb;
        named_buffer(root, fb_vec_table(names, i), &nb);
        char shape[INFO_SHAPE_TEXT_MAX];
        shape_text(&nb, shape, sizeof shape);
        /* "Int64 stored as Int32" when the element type is not the format's. */
        printf("  %-16.*s %-11s %10" PRIu64 " bytes  %s%s%s%s%s  (buffer %u)\n", (int)nb.name.len,
               nb.name.ptr, nb.role, nb.size, nb.element_type ? nb.element_type : "",
               nb.element_type ? " stored as " : "", nb.format ? nb.format : "no format",
               shape[0] ? ", shape " : "", shape, nb.buffer_id);
    }
}

int lmt_cmd_info(int argc, char **argv) {
    const char *path;
    bool json;
    int rc = lmt_parse_file_args("info", argc, argv, true, &path, &json);
    if (rc >= 0) return rc;
    lmt_file f;
    if ((rc = lmt_file_open("info", path, LMT_CHECK_MEANING, &f))) return rc;
    info in;
    memset(&in, 0, sizeof in);
    in.path = path;
    in.file_size = f.size;
    in.root = f.root;
    gather(&in);
    if (in.blobs.oom) {
        lmt_error("info", "out of memory");
        rc = LMT_EXIT_INVALID;
    } else if (json) {
        print_json(&in);
    } else {
        print_text(&in);
    }
    free(in.blobs.refs);
    lmt_file_close(&f);
    return rc;
}
