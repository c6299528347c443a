/* Light Metal binary writer: commands stream into a FlatBuffer builder as
 * they are captured; blobs are kept (or borrowed) once each and written after
 * the table area at save time, without being copied into one big buffer. */
#include <stdlib.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/hash.h"
#include "format/lmb.h"

typedef struct lmb_blob {
    const void *data;
    uint64_t size;
    uint64_t hash;
    uint64_t offset; /* within the data region */
    bool owned;
} lmb_blob;

typedef struct lmb_trace {
    uint32_t id;
    lmb_BlobRef ref;
} lmb_trace;

struct lmb_writer {
    fb_builder b;
    fb_ref *commands;
    size_t command_count, command_cap;
    lmb_blob *blobs;
    size_t blob_count, blob_cap;
    uint32_t *blob_index; /* open addressing by hash: blob number + 1, 0 = empty */
    size_t index_cap;
    uint64_t data_size;
    lmb_BlobRef *kernels;
    size_t kernel_count, kernel_cap;
    lmb_trace *traces;
    size_t trace_count, trace_cap;
    fb_ref *names;
    size_t name_count, name_cap;
    bool finished;
    /* The finished file: table area, padding, then blobs and their padding. */
    const uint8_t *table_area;
    size_t table_size;
    file_chunk *chunks;
    size_t chunk_count;
    uint64_t file_size;
};

static const uint8_t lmb_zeros[LMB_DATA_REGION_ALIGN];

/* Grows an array to hold one more element. */
static bool lmb_grow(void **items, size_t *cap, size_t count, size_t elem) {
    if (count < *cap) return true;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *n = realloc(*items, ncap * elem);
    if (!n) return false;
    *items = n;
    *cap = ncap;
    return true;
}

static lm_status lmb_oom(const char *what) {
    return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "lmb_writer: out of memory %s", what);
}

static lm_status lmb_writable(const lmb_writer *w, const char *fn) {
    if (w->finished) return err_set(LM_ERR_INVALID_STATE, "%s: the writer is finished", fn);
    return LM_OK;
}

lm_status lmb_writer_create(lmb_writer **out_writer) {
    *out_writer = NULL;
    lmb_writer *w = calloc(1, sizeof *w);
    if (!w) return lmb_oom("creating a writer");
    fb_builder_init(&w->b);
    fb_builder_reset(&w->b);
    *out_writer = w;
    return LM_OK;
}

void lmb_writer_destroy(lmb_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->blob_count; i++)
        if (w->blobs[i].owned) free((void *)w->blobs[i].data);
    fb_builder_free(&w->b);
    free(w->commands);
    free(w->blobs);
    free(w->blob_index);
    free(w->kernels);
    free(w->traces);
    free(w->names);
    free(w->chunks);
    free(w);
}

fb_builder *lmb_writer_builder(lmb_writer *w) {
    return &w->b;
}

uint32_t lmb_writer_command_count(const lmb_writer *w) {
    return (uint32_t)w->command_count;
}

lm_status lmb_writer_add_command(lmb_writer *w, lmb_Command type, fb_ref table) {
    lm_status st = lmb_writable(w, "lmb_writer_add_command");
    if (st) return st;
    if (fb_builder_status(&w->b)) return fb_builder_status(&w->b);
    if (type == LMB_Command_NONE || (unsigned)type > LMB_Command_COUNT || !table)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer_add_command: command type %u, table %u",
                       (unsigned)type, table);
    if (!lmb_grow((void **)&w->commands, &w->command_cap, w->command_count, sizeof(fb_ref)))
        return lmb_oom("listing commands");
    lmb_CommandEntry_start(&w->b);
    lmb_CommandEntry_add_cmd(&w->b, type, table);
    fb_ref entry = lmb_CommandEntry_end(&w->b);
    if (fb_builder_status(&w->b)) return fb_builder_status(&w->b);
    w->commands[w->command_count++] = entry;
    return LM_OK;
}

static bool lmb_index_grow(lmb_writer *w) {
    size_t cap = w->index_cap ? w->index_cap * 2 : 256;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return false;
    for (size_t i = 0; i < w->blob_count; i++) {
        size_t h = (size_t)w->blobs[i].hash & (cap - 1);
        while (idx[h])
            h = (h + 1) & (cap - 1);
        idx[h] = (uint32_t)i + 1;
    }
    free(w->blob_index);
    w->blob_index = idx;
    w->index_cap = cap;
    return true;
}

static lmb_BlobRef lmb_ref_of(const lmb_blob *b) {
    lmb_BlobRef r = {b->offset, b->size, b->hash};
    return r;
}

/* Finds or stores a blob; *out_new tells whether it was stored now. */
static lm_status lmb_store_blob(lmb_writer *w, const void *data, uint64_t size, bool copy,
                                lmb_BlobRef *out_ref, bool *out_new) {
    *out_new = false;
    if (size && !data) return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer: blob data is NULL");
    if (size > SIZE_MAX) return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer: blob too large");
    uint64_t hash = hash64(data, (size_t)size, 0);
    if (w->index_cap) {
        for (size_t h = (size_t)hash & (w->index_cap - 1); w->blob_index[h];
             h = (h + 1) & (w->index_cap - 1)) {
            const lmb_blob *b = &w->blobs[w->blob_index[h] - 1];
            /* Equal hashes are not proof: compare the bytes. */
            if (b->hash == hash && b->size == size && (!size || !memcmp(b->data, data, size))) {
                *out_ref = lmb_ref_of(b);
                return LM_OK;
            }
        }
    }
    if ((w->blob_count + 1) * 2 > w->index_cap && !lmb_index_grow(w))
        return lmb_oom("indexing blobs");
    if (!lmb_grow((void **)&w->blobs, &w->blob_cap, w->blob_count, sizeof(lmb_blob)))
        return lmb_oom("listing blobs");
    uint64_t offset, end;
    if (!ck_align_up_u64(w->data_size, LMB_BLOB_ALIGN, &offset) || !ck_add_u64(offset, size, &end))
        return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer: data region overflows");
    lmb_blob *b = &w->blobs[w->blob_count];
    b->data = data;
    b->owned = false;
    if (copy && size) {
        void *c = malloc((size_t)size);
        if (!c) return lmb_oom("copying a blob");
        memcpy(c, data, (size_t)size);
        b->data = c;
        b->owned = true;
    }
    b->size = size;
    b->hash = hash;
    b->offset = offset;
    w->data_size = end;
    size_t h = (size_t)hash & (w->index_cap - 1);
    while (w->blob_index[h])
        h = (h + 1) & (w->index_cap - 1);
    w->blob_index[h] = (uint32_t)w->blob_count + 1;
    w->blob_count++;
    *out_ref = lmb_ref_of(b);
    *out_new = true;
    return LM_OK;
}

lm_status lmb_writer_add_blob(lmb_writer *w, const void *data, uint64_t size, bool copy,
                              lmb_BlobRef *out_ref) {
    lm_status st = lmb_writable(w, "lmb_writer_add_blob");
    if (st) return st;
    bool fresh;
    return lmb_store_blob(w, data, size, copy, out_ref, &fresh);
}

lm_status lmb_writer_add_kernel_binary(lmb_writer *w, const void *elf, uint64_t size,
                                       uint64_t *out_hash) {
    lm_status st = lmb_writable(w, "lmb_writer_add_kernel_binary");
    if (st) return st;
    lmb_BlobRef ref;
    bool fresh;
    st = lmb_store_blob(w, elf, size, true, &ref, &fresh);
    if (st) return st;
    *out_hash = ref.hash;
    for (size_t i = 0; i < w->kernel_count; i++) {
        if (w->kernels[i].hash != ref.hash) continue;
        if (w->kernels[i].offset == ref.offset) return LM_OK; /* the same ELF again */
        /* Two different ELFs with one 64-bit hash: the list is keyed by hash. */
        return err_set(LM_ERR_UNSUPPORTED,
                       "lmb_writer_add_kernel_binary: two different ELFs share hash %016llx",
                       (unsigned long long)ref.hash);
    }
    if (!lmb_grow((void **)&w->kernels, &w->kernel_cap, w->kernel_count, sizeof(lmb_BlobRef)))
        return lmb_oom("listing kernel binaries");
    w->kernels[w->kernel_count++] = ref;
    return LM_OK;
}

lm_status lmb_writer_add_trace(lmb_writer *w, uint32_t trace_id, const void *data, uint64_t size) {
    lm_status st = lmb_writable(w, "lmb_writer_add_trace");
    if (st) return st;
    for (size_t i = 0; i < w->trace_count; i++)
        if (w->traces[i].id == trace_id)
            return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer_add_trace: trace %u added twice",
                           trace_id);
    if (!lmb_grow((void **)&w->traces, &w->trace_cap, w->trace_count, sizeof(lmb_trace)))
        return lmb_oom("listing traces");
    lmb_trace *t = &w->traces[w->trace_count];
    bool fresh;
    st = lmb_store_blob(w, data, size, true, &t->ref, &fresh);
    if (st) return st;
    t->id = trace_id;
    w->trace_count++;
    return LM_OK;
}

lm_status lmb_writer_name_buffer(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                 const char *name) {
    return lmb_writer_name_tensor(w, buffer_id, role, name, LMB_DataFormat_Invalid, NULL, 0);
}

lm_status lmb_writer_name_tensor(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                 const char *name, lmb_DataFormat format, const uint32_t *shape,
                                 uint32_t rank) {
    lmb_tensor_desc d = {.format = format, .shape = shape, .rank = rank};
    return lmb_writer_name_tensor_as(w, buffer_id, role, name, &d);
}

lm_status lmb_writer_name_tensor_as(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                    const char *name, const lmb_tensor_desc *desc) {
    lm_status st = lmb_writable(w, "lmb_writer_name_buffer");
    if (st) return st;
    if (!name) return err_set(LM_ERR_INVALID_ARGUMENT, "lmb_writer_name_buffer: name is NULL");
    if (!lmb_grow((void **)&w->names, &w->name_cap, w->name_count, sizeof(fb_ref)))
        return lmb_oom("listing buffer names");
    fb_ref s = fb_create_string(&w->b, name, strlen(name));
    fb_ref dims = desc->rank ? fb_create_vector(&w->b, desc->shape, desc->rank, 4, 4) : 0;
    lmb_BufferName_start(&w->b);
    lmb_BufferName_add_buffer_id(&w->b, buffer_id);
    lmb_BufferName_add_role(&w->b, role);
    lmb_BufferName_add_name(&w->b, s);
    lmb_BufferName_add_format(&w->b, desc->format);
    lmb_BufferName_add_shape(&w->b, dims);
    lmb_BufferName_add_element_type(&w->b, desc->element_type);
    lmb_BufferName_add_scalar(&w->b, desc->scalar);
    fb_ref t = lmb_BufferName_end(&w->b);
    if (fb_builder_status(&w->b)) return fb_builder_status(&w->b);
    w->names[w->name_count++] = t;
    return LM_OK;
}

void lmb_header_init(lmb_header *hdr) {
    memset(hdr, 0, sizeof *hdr);
    hdr->producer = "lightmetal";
    hdr->num_command_queues = 2;
}

static int lmb_cmp_trace(const void *a, const void *b) {
    uint32_t x = ((const lmb_trace *)a)->id, y = ((const lmb_trace *)b)->id;
    return (x > y) - (x < y);
}

static int lmb_cmp_kernel(const void *a, const void *b) {
    uint64_t x = ((const lmb_BlobRef *)a)->hash, y = ((const lmb_BlobRef *)b)->hash;
    return (x > y) - (x < y);
}

lm_status lmb_writer_finish(lmb_writer *w, const lmb_header *hdr) {
    lm_status st = lmb_writable(w, "lmb_writer_finish");
    if (st) return st;
    fb_builder *b = &w->b;
    if (w->trace_count) qsort(w->traces, w->trace_count, sizeof *w->traces, lmb_cmp_trace);
    if (w->kernel_count) qsort(w->kernels, w->kernel_count, sizeof *w->kernels, lmb_cmp_kernel);

    fb_ref *trace_refs = malloc((w->trace_count ? w->trace_count : 1) * sizeof *trace_refs);
    if (!trace_refs) return lmb_oom("listing traces");
    for (size_t i = 0; i < w->trace_count; i++) {
        lmb_TraceDescriptor_start(b);
        lmb_TraceDescriptor_add_trace_id(b, w->traces[i].id);
        lmb_TraceDescriptor_add_data(b, &w->traces[i].ref);
        trace_refs[i] = lmb_TraceDescriptor_end(b);
    }
    fb_ref traces = w->trace_count ? fb_create_vector_refs(b, trace_refs, w->trace_count) : 0;
    free(trace_refs);
    fb_ref kernels = w->kernel_count ? lmb_vec_BlobRef_create(b, w->kernels, w->kernel_count) : 0;
    fb_ref names = w->name_count ? fb_create_vector_refs(b, w->names, w->name_count) : 0;
    fb_ref commands = fb_create_vector_refs(b, w->commands, w->command_count);
    fb_ref producer = hdr->producer ? fb_create_string(b, hdr->producer, strlen(hdr->producer)) : 0;
    fb_ref formats = hdr->data_format_count
                         ? fb_create_vector(b, hdr->data_formats, hdr->data_format_count, 1, 1)
                         : 0;
    lmb_SystemDescriptor_start(b);
    lmb_SystemDescriptor_add_dram_bank_size(b, hdr->dram_bank_size);
    lmb_SystemDescriptor_add_l1_size(b, hdr->l1_size);
    lmb_SystemDescriptor_add_grid_x(b, hdr->grid_x);
    lmb_SystemDescriptor_add_grid_y(b, hdr->grid_y);
    lmb_SystemDescriptor_add_dram_banks(b, hdr->dram_banks);
    lmb_SystemDescriptor_add_data_formats(b, formats);
    lmb_SystemDescriptor_add_num_command_queues(b, hdr->num_command_queues);
    lmb_SystemDescriptor_add_watchdog_instructions(b, hdr->watchdog_instructions);
    lmb_SystemDescriptor_add_trace_region_size(b, hdr->trace_region_size);
    lmb_SystemDescriptor_add_strict_protocol(b, hdr->strict_protocol);
    fb_ref system = lmb_SystemDescriptor_end(b);

    /* The table area's size is known only once it is finished, yet the root
     * stores data_offset. Both u64 fields are always present (8 bytes each),
     * so the size does not depend on their values: write placeholders, then
     * patch them in the finished buffer. */
    lmb_Version version = {LMB_FORMAT_MAJOR, LMB_FORMAT_MINOR, 0};
    lmb_Integrity integrity = {LMB_HashAlgorithm_XXH3_64_Pieces, 0};
    lmb_LightMetalBinary_start(b);
    lmb_LightMetalBinary_add_integrity(b, &integrity);
    fb_add_u64(b, LMB_ID_LightMetalBinary_data_offset, ~0ull);
    fb_add_u64(b, LMB_ID_LightMetalBinary_data_size, ~0ull);
    lmb_LightMetalBinary_add_format_version(b, &version);
    lmb_LightMetalBinary_add_producer_version(b, &hdr->producer_version);
    lmb_LightMetalBinary_add_producer(b, producer);
    lmb_LightMetalBinary_add_system(b, system);
    lmb_LightMetalBinary_add_commands(b, commands);
    lmb_LightMetalBinary_add_traces(b, traces);
    lmb_LightMetalBinary_add_kernel_binaries(b, kernels);
    lmb_LightMetalBinary_add_buffer_names(b, names);
    fb_ref root = lmb_LightMetalBinary_end(b);
    size_t size;
    const void *buf = fb_builder_finish(b, root, LMB_FILE_IDENTIFIER, &size);
    if (!buf) return fb_builder_status(b);

    uint64_t data_offset = 0;
    if (w->data_size && !ck_align_up_u64(size, LMB_DATA_REGION_ALIGN, &data_offset))
        return err_set(LM_ERR_INTERNAL, "lmb_writer_finish: size overflow");
    uint8_t *rt = (uint8_t *)buf + fb_rd_u32(buf);
    fb_wr_u64(rt + fb_field_offset(rt, LMB_ID_LightMetalBinary_data_offset), data_offset);
    fb_wr_u64(rt + fb_field_offset(rt, LMB_ID_LightMetalBinary_data_size), w->data_size);
    /* The digest covers the padding up to the data region too: seal the
     * table area as it will be in the file. */
    uint8_t *digest = rt + fb_field_offset(rt, LMB_ID_LightMetalBinary_integrity) + 8;
    hash64_state h;
    hash64_begin(&h, 0);
    hash64_update(&h, buf, size);
    if (w->data_size) hash64_update(&h, lmb_zeros, (size_t)(data_offset - size));
    fb_wr_u64(digest, hash64_end(&h));

    size_t max_chunks = 2 + 2 * w->blob_count;
    w->chunks = malloc(max_chunks * sizeof *w->chunks);
    if (!w->chunks) return lmb_oom("listing file pieces");
    w->table_area = buf;
    w->table_size = size;
    size_t n = 0;
    w->chunks[n++] = (file_chunk){buf, size};
    uint64_t pos = size;
    if (w->data_size) {
        w->chunks[n++] = (file_chunk){lmb_zeros, (size_t)(data_offset - size)};
        pos = data_offset;
    }
    for (size_t i = 0; i < w->blob_count; i++) {
        const lmb_blob *bl = &w->blobs[i];
        uint64_t at = data_offset + bl->offset;
        if (at > pos) w->chunks[n++] = (file_chunk){lmb_zeros, (size_t)(at - pos)};
        if (bl->size) w->chunks[n++] = (file_chunk){bl->data, (size_t)bl->size};
        pos = at + bl->size;
    }
    w->chunk_count = n;
    w->file_size = pos;
    w->finished = true;
    return LM_OK;
}

void lmb_writer_chunks(const lmb_writer *w, const file_chunk **out_chunks, size_t *out_count,
                       uint64_t *out_size) {
    *out_chunks = w->chunks;
    *out_count = w->finished ? w->chunk_count : 0;
    *out_size = w->finished ? w->file_size : 0;
}

lm_status lmb_writer_save(const lmb_writer *w, const char *path) {
    if (!w->finished) return err_set(LM_ERR_INVALID_STATE, "lmb_writer_save: not finished");
    return file_save_atomic(path, w->chunks, w->chunk_count);
}

lm_status lmb_writer_to_memory(const lmb_writer *w, void **out_data, size_t *out_size) {
    *out_data = NULL;
    *out_size = 0;
    if (!w->finished) return err_set(LM_ERR_INVALID_STATE, "lmb_writer_to_memory: not finished");
    if (w->file_size > SIZE_MAX)
        return err_set(LM_ERR_UNSUPPORTED, "lmb_writer_to_memory: too big");
    uint8_t *out = malloc(w->file_size ? (size_t)w->file_size : 1);
    if (!out) return lmb_oom("copying the file");
    size_t at = 0;
    for (size_t i = 0; i < w->chunk_count; i++) {
        memcpy(out + at, w->chunks[i].data, w->chunks[i].size);
        at += w->chunks[i].size;
    }
    *out_data = out;
    *out_size = at;
    return LM_OK;
}
