/* Finished Light Metal binaries (captures and collected traces). */
#include "api/api_binary.h"

#include <stdlib.h>

#include "base/error.h"
#include "lightmetal/lm_version.h"

struct lm_binary {
    lmb_writer *writer;
    void *bytes; /* the whole file, made on first lm_binary_data */
    size_t size;
};

lm_binary *api_binary_wrap(lmb_writer *writer) {
    lm_binary *b = calloc(1, sizeof *b);
    if (!b) {
        lmb_writer_destroy(writer);
        err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        return NULL;
    }
    b->writer = writer;
    return b;
}

void api_binary_header(const lm_device_info *info, lmb_header *hdr) {
    lmb_header_init(hdr);
    hdr->producer = "lightmetal";
    hdr->producer_version =
        (lmb_Version){LM_VERSION_MAJOR, LM_VERSION_MINOR, LM_VERSION_PATCH}; /* the build's */
    hdr->grid_x = (uint16_t)info->grid_x;
    hdr->grid_y = (uint16_t)info->grid_y;
    hdr->l1_size = (uint32_t)info->l1_size;
    hdr->dram_banks = (uint16_t)info->dram_banks;
    hdr->dram_bank_size = info->dram_bank_size;
    /* Options that change results or faults travel with the workload. */
    hdr->num_command_queues = (uint8_t)info->num_command_queues;
    hdr->watchdog_instructions = info->watchdog_instructions;
    hdr->trace_region_size = info->trace_region_size;
    hdr->strict_protocol = info->strict_protocol;
}

lm_status lm_binary_save(const lm_binary *binary, const char *path) {
    if (!binary) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_binary_save: binary is NULL");
    if (!path || !*path) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_binary_save: path is empty");
    lm_status st = lmb_writer_save(binary->writer, path);
    return st ? err_prefix(st, "lm_binary_save") : LM_OK;
}

lm_status lm_binary_data(const lm_binary *binary, const void **out_data, uint64_t *out_size) {
    if (!binary || !out_data || !out_size)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_binary_data: NULL argument");
    lm_binary *b = (lm_binary *)binary; /* the bytes are made once, on demand */
    if (!b->bytes) {
        lm_status st = lmb_writer_to_memory(b->writer, &b->bytes, &b->size);
        if (st) return err_prefix(st, "lm_binary_data");
    }
    *out_data = b->bytes;
    *out_size = b->size;
    return LM_OK;
}

lm_status lm_binary_size(const lm_binary *binary, uint64_t *out_size) {
    if (!binary || !out_size)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_binary_size: NULL argument");
    const file_chunk *chunks;
    size_t count;
    lmb_writer_chunks(binary->writer, &chunks, &count, out_size);
    return LM_OK;
}

void lm_binary_free(lm_binary *binary) {
    if (!binary) return;
    lmb_writer_destroy(binary->writer);
    free(binary->bytes);
    free(binary);
}
