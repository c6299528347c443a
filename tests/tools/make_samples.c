/* Writes the binaries the CLI tests run on into the directory argv[1]:
 *   valid.lmb      a small workload that passes every check (named buffers,
 *                  a kernel, a trace, a golden); its kernel's code is all
 *                  zeros, an illegal instruction, so running it faults
 *   copy.lmb       no kernels: writes buffer "data" (512 float32 values)
 *                  and compares it with a golden equal to what was written
 *   copy_data.bin  the bytes copy.lmb writes (what --output data= saves)
 *   mismatch.lmb   copy.lmb with a golden that differs in one low mantissa
 *                  bit of element 250 (62.5 -> 62.500488: an exact mismatch,
 *                  but within --tolerance 1e-3,0)
 *   nodevice.lmb   copy.lmb made for 1000 bytes of L1: verifies, but no
 *                  device can be opened for it (replay fails before running)
 *   sample.lmb     the format tests' sample: every table and field, but
 *                  semantically wrong (ids used before definition)
 *   truncated.lmb  valid.lmb cut in half
 *   blobflip.lmb   valid.lmb with one bit of a blob flipped (hash mismatch)
 *   copyflip.lmb   copy.lmb with one bit of its only blob (the data, which
 *                  is also the golden) flipped: refused unless hashes are
 *                  off; then it runs, writes copyflip_data.bin and passes
 *   copyflip_data.bin  copy_data.bin with that bit flipped
 *   badid.lmb      valid.lmb with one bit of the file identifier flipped
 *   empty.lmb      zero bytes
 *   input.bin      2048 bytes for `run --input data=...` (not copy.lmb's data)
 *   short.bin      100 bytes, the wrong size for that input
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "format/lmb.h"
#include "format/sample.h"
#include "sim/kernel_map.h"

/* A minimal RV32 executable: one R+X segment at the kernel code base and one
 * RW segment in hart-local memory, as the semantic verifier accepts. */
static void make_elf(uint8_t e[256]) {
    memset(e, 0, 256);
    memcpy(e, "\177ELF", 4);
    e[4] = 1;               /* ELFCLASS32 */
    e[5] = 1;               /* little-endian */
    e[6] = 1;               /* EV_CURRENT */
    fb_wr_u16(e + 16, 2);   /* ET_EXEC */
    fb_wr_u16(e + 18, 243); /* EM_RISCV */
    fb_wr_u32(e + 20, 1);
    fb_wr_u32(e + 24, KMAP_CODE_BASE); /* entry */
    fb_wr_u32(e + 28, 52);             /* program headers right after the header */
    fb_wr_u16(e + 40, 52);
    fb_wr_u16(e + 42, 32);
    fb_wr_u16(e + 44, 2);
    static const struct {
        uint32_t offset, vaddr, filesz, memsz, flags;
    } seg[2] = {{128, KMAP_CODE_BASE, 64, 64, 5}, {192, KMAP_LOCAL_BASE, 16, 4096, 6}};
    for (int i = 0; i < 2; i++) {
        uint8_t *ph = e + 52 + 32 * i;
        fb_wr_u32(ph, 1); /* PT_LOAD */
        fb_wr_u32(ph + 4, seg[i].offset);
        fb_wr_u32(ph + 8, seg[i].vaddr);
        fb_wr_u32(ph + 16, seg[i].filesz);
        fb_wr_u32(ph + 20, seg[i].memsz);
        fb_wr_u32(ph + 24, seg[i].flags);
    }
}

/* 512 float32 values i / 4, little-endian. */
static void copy_data(uint8_t out[2048]) {
    for (uint32_t i = 0; i < 512; i++) {
        float f = (float)i * 0.25f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        fb_wr_u32(out + 4 * i, bits);
    }
}

enum sample_kind { SAMPLE_VALID, SAMPLE_COPY, SAMPLE_MISMATCH, SAMPLE_NO_DEVICE };

static lm_status build(enum sample_kind kind, void **out, size_t *out_size) {
    lmb_writer *w;
    lm_status st = lmb_writer_create(&w);
    if (st) return st;
    fb_builder *b = lmb_writer_builder(w);
    uint8_t elf[256], input[2048], golden[2048], trace[128];
    make_elf(elf);
    copy_data(input);
    for (size_t i = 0; i < sizeof input; i++)
        golden[i] = kind == SAMPLE_VALID ? (uint8_t)(i * 5 + 2) : input[i];
    if (kind == SAMPLE_MISMATCH) golden[1000] ^= 0x80;
    memset(trace, 0xab, sizeof trace);
    uint64_t hash = 0;
    lmb_BlobRef in_ref, golden_ref;
    if ((st = lmb_writer_add_blob(w, input, sizeof input, true, &in_ref)) ||
        (st = lmb_writer_add_blob(w, golden, sizeof golden, true, &golden_ref)))
        goto done;
    if (kind == SAMPLE_VALID && ((st = lmb_writer_add_kernel_binary(w, elf, sizeof elf, &hash)) ||
                                 (st = lmb_writer_add_trace(w, 9, trace, sizeof trace))))
        goto done;
#define CMD(type, ...)                                                                             \
    do {                                                                                           \
        lmb_##type##_start(b);                                                                     \
        __VA_ARGS__;                                                                               \
        if ((st = lmb_writer_add_command(w, LMB_Command_##type, lmb_##type##_end(b)))) goto done;  \
    } while (0)
    if (kind != SAMPLE_VALID) {
        CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, 1);
            lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
            lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
            lmb_CreateBuffer_add_size(b, 2048); lmb_CreateBuffer_add_page_size(b, 1024));
        CMD(EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_add_buffer_id(b, 1);
            lmb_EnqueueWriteBuffer_add_data(b, &in_ref));
        CMD(CompareToGolden, lmb_CompareToGolden_add_buffer_id(b, 1);
            lmb_CompareToGolden_add_golden(b, &golden_ref));
        CMD(FinishQueue, (void)0);
        if ((st = lmb_writer_name_buffer(w, 1, LMB_BufferRole_Input, "data"))) goto done;
        goto header;
    }
    /* Buffers keep their recorded addresses on replay: give them distinct ones. */
    for (uint32_t id = 1; id <= 2; id++)
        CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, id);
            lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
            lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
            lmb_CreateBuffer_add_size(b, 2048); lmb_CreateBuffer_add_page_size(b, 1024);
            lmb_CreateBuffer_add_address(b, (id - 1) * 65536u));
    CMD(EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_add_buffer_id(b, 1);
        lmb_EnqueueWriteBuffer_add_data(b, &in_ref));
    CMD(CreateProgram, lmb_CreateProgram_add_program_id(b, 1));
    {
        lmb_CoreRange r = {{0, 0}, {1, 1}};
        fb_ref cores = lmb_vec_CoreRange_create(b, &r, 1);
        fb_ref name = fb_create_string(b, "reader", 6);
        lmb_KernelConfig_start(b);
        lmb_KernelConfig_add_processor(b, LMB_Processor_DM0);
        fb_ref cfg = lmb_KernelConfig_end(b);
        CMD(CreateKernel, lmb_CreateKernel_add_kernel_id(b, 1);
            lmb_CreateKernel_add_program_id(b, 1); lmb_CreateKernel_add_binary_hash(b, hash);
            lmb_CreateKernel_add_cores(b, cores); lmb_CreateKernel_add_config(b, cfg);
            lmb_CreateKernel_add_name(b, name));
    }
    CMD(EnqueueProgram, lmb_EnqueueProgram_add_program_id(b, 1);
        lmb_EnqueueProgram_add_blocking(b, true));
    CMD(LoadTrace, lmb_LoadTrace_add_trace_id(b, 9));
    CMD(ReplayTrace, lmb_ReplayTrace_add_trace_id(b, 9));
    CMD(EnqueueReadBuffer, lmb_EnqueueReadBuffer_add_buffer_id(b, 2));
    CMD(CompareToGolden, lmb_CompareToGolden_add_buffer_id(b, 2);
        lmb_CompareToGolden_add_golden(b, &golden_ref));
    CMD(FinishQueue, (void)0);
#undef CMD
    if ((st = lmb_writer_name_buffer(w, 1, LMB_BufferRole_Input, "in")) ||
        (st = lmb_writer_name_buffer(w, 2, LMB_BufferRole_Output, "out")))
        goto done;
header:;
    lmb_header hdr;
    lmb_header_init(&hdr);
    hdr.producer = "lightmetal-tests";
    hdr.grid_x = 8;
    hdr.grid_y = 8;
    hdr.l1_size = kind == SAMPLE_NO_DEVICE ? 1000 : 1499136;
    hdr.dram_banks = 12;
    hdr.dram_bank_size = 1u << 30;
    if ((st = lmb_writer_finish(w, &hdr))) goto done;
    st = lmb_writer_to_memory(w, out, out_size);
done:
    lmb_writer_destroy(w);
    return st;
}

static int save(const char *dir, const char *name, const void *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    file_chunk chunk = {data, size};
    if (file_save_atomic(path, &chunk, 1)) {
        fprintf(stderr, "make_samples: %s\n", lm_last_error());
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_samples DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    void *valid, *copy_ok, *mismatch, *nodevice, *sample;
    size_t valid_size, copy_size, mismatch_size, nodevice_size, sample_size;
    if (build(SAMPLE_VALID, &valid, &valid_size) || build(SAMPLE_COPY, &copy_ok, &copy_size) ||
        build(SAMPLE_MISMATCH, &mismatch, &mismatch_size) ||
        build(SAMPLE_NO_DEVICE, &nodevice, &nodevice_size) || sample_build(&sample, &sample_size)) {
        fprintf(stderr, "make_samples: %s\n", lm_last_error());
        return 1;
    }
    int bad = save(dir, "valid.lmb", valid, valid_size);
    bad |= save(dir, "copy.lmb", copy_ok, copy_size);
    bad |= save(dir, "mismatch.lmb", mismatch, mismatch_size);
    bad |= save(dir, "nodevice.lmb", nodevice, nodevice_size);
    bad |= save(dir, "sample.lmb", sample, sample_size);
    bad |= save(dir, "truncated.lmb", valid, valid_size / 2);
    bad |= save(dir, "empty.lmb", "", 0);
    uint8_t data[2048];
    copy_data(data);
    bad |= save(dir, "copy_data.bin", data, sizeof data);
    uint8_t other[2048];
    memset(other, 0x5a, sizeof other);
    bad |= save(dir, "input.bin", other, sizeof other);
    bad |= save(dir, "short.bin", other, 100);
    uint8_t *copy = malloc(valid_size);
    if (!copy) return 1;
    /* The first blob starts the data region. */
    uint64_t data_offset = lmb_LightMetalBinary_data_offset(lmb_root(valid));
    memcpy(copy, valid, valid_size);
    copy[data_offset + 100] ^= 0x04;
    bad |= save(dir, "blobflip.lmb", copy, valid_size);
    memcpy(copy, valid, valid_size);
    copy[5] ^= 0x01;
    bad |= save(dir, "badid.lmb", copy, valid_size);
    free(copy);
    /* copy.lmb stores its data once (the golden is the same bytes). */
    if (!(copy = malloc(copy_size))) return 1;
    memcpy(copy, copy_ok, copy_size);
    data_offset = lmb_LightMetalBinary_data_offset(lmb_root(copy_ok));
    copy[data_offset + 100] ^= 0x04;
    bad |= save(dir, "copyflip.lmb", copy, copy_size);
    data[100] ^= 0x04;
    bad |= save(dir, "copyflip_data.bin", data, sizeof data);
    free(copy);
    free(valid);
    free(copy_ok);
    free(mismatch);
    free(nodevice);
    free(sample);
    return bad;
}
