#include "sample.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/hash.h"

#define SAMPLE_BLOB_SIZE 4096
#define SAMPLE_ELF_SIZE 1000

static const char sample_source[] = "void kernel_main(void) {}";

void sample_blob(uint8_t *out, size_t size) {
    for (size_t i = 0; i < size; i++)
        out[i] = (uint8_t)(i * 7 + 3);
}

static void sample_elf(uint8_t *out, uint8_t salt) {
    for (size_t i = 0; i < SAMPLE_ELF_SIZE; i++)
        out[i] = (uint8_t)(i ^ salt);
}

lm_status sample_build(void **out_data, size_t *out_size) {
    lmb_writer *w;
    lm_status st = lmb_writer_create(&w);
    if (st) return st;
    fb_builder *b = lmb_writer_builder(w);
    uint8_t blob[SAMPLE_BLOB_SIZE], elf_a[SAMPLE_ELF_SIZE], elf_b[SAMPLE_ELF_SIZE];
    sample_blob(blob, sizeof blob);
    sample_elf(elf_a, 0x11);
    sample_elf(elf_b, 0x22);
    uint64_t hash_a, hash_b;
    lmb_BlobRef data;
    if ((st = lmb_writer_add_kernel_binary(w, elf_a, sizeof elf_a, &hash_a)) ||
        (st = lmb_writer_add_kernel_binary(w, elf_b, sizeof elf_b, &hash_b)) ||
        (st = lmb_writer_add_kernel_binary(w, elf_a, sizeof elf_a, &hash_a)) ||
        (st = lmb_writer_add_blob(w, blob, sizeof blob, true, &data)))
        goto done;
#define ADD(type, ref)                                                                             \
    do {                                                                                           \
        fb_ref r_ = (ref);                                                                         \
        if ((st = lmb_writer_add_command(w, LMB_Command_##type, r_))) goto done;                   \
    } while (0)
    /* 0 */
    lmb_CreateBuffer_start(b);
    lmb_CreateBuffer_add_buffer_id(b, 7);
    lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
    lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
    lmb_CreateBuffer_add_size(b, 65536);
    lmb_CreateBuffer_add_page_size(b, 2048);
    lmb_CreateBuffer_add_address(b, 0x100000000ull);
    ADD(CreateBuffer, lmb_CreateBuffer_end(b));
    /* 1 */
    lmb_DeallocateBuffer_start(b);
    lmb_DeallocateBuffer_add_buffer_id(b, 9);
    ADD(DeallocateBuffer, lmb_DeallocateBuffer_end(b));
    /* 2 */
    lmb_EnqueueWriteBuffer_start(b);
    lmb_EnqueueWriteBuffer_add_cq_id(b, 1);
    lmb_EnqueueWriteBuffer_add_buffer_id(b, 7);
    lmb_EnqueueWriteBuffer_add_data(b, &data);
    lmb_EnqueueWriteBuffer_add_blocking(b, true);
    ADD(EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_end(b));
    /* 3 */
    lmb_EnqueueReadBuffer_start(b);
    lmb_EnqueueReadBuffer_add_cq_id(b, 1);
    lmb_EnqueueReadBuffer_add_buffer_id(b, 7);
    lmb_EnqueueReadBuffer_add_blocking(b, true);
    ADD(EnqueueReadBuffer, lmb_EnqueueReadBuffer_end(b));
    /* 4 */
    lmb_FinishQueue_start(b);
    lmb_FinishQueue_add_cq_id(b, 1);
    ADD(FinishQueue, lmb_FinishQueue_end(b));
    /* 5, 6 */
    lmb_CreateProgram_start(b);
    lmb_CreateProgram_add_program_id(b, 3);
    ADD(CreateProgram, lmb_CreateProgram_end(b));
    lmb_ReleaseProgram_start(b);
    lmb_ReleaseProgram_add_program_id(b, 4);
    ADD(ReleaseProgram, lmb_ReleaseProgram_end(b));
    /* 7 */
    {
        lmb_CoreRange cores[2] = {{{0, 0}, {7, 7}}, {{1, 2}, {3, 4}}};
        uint32_t cargs[3] = {1, 2, 3};
        fb_ref vcores = lmb_vec_CoreRange_create(b, cores, 2);
        fb_ref vargs = fb_create_vector_u32(b, cargs, 3);
        fb_ref name = fb_create_string(b, "reader", 6);
        fb_ref src = fb_create_string(b, sample_source, sizeof sample_source - 1);
        lmb_KernelConfig_start(b);
        lmb_KernelConfig_add_processor(b, LMB_Processor_Compute);
        lmb_KernelConfig_add_noc(b, LMB_NocIndex_Noc1);
        lmb_KernelConfig_add_math_fidelity(b, LMB_MathFidelity_HiFi4);
        lmb_KernelConfig_add_fp32_dest_acc_en(b, true);
        lmb_KernelConfig_add_math_approx_mode(b, true);
        lmb_KernelConfig_add_compile_args(b, vargs);
        fb_ref cfg = lmb_KernelConfig_end(b);
        lmb_CreateKernel_start(b);
        lmb_CreateKernel_add_kernel_id(b, 11);
        lmb_CreateKernel_add_program_id(b, 3);
        lmb_CreateKernel_add_binary_hash(b, hash_a);
        lmb_CreateKernel_add_cores(b, vcores);
        lmb_CreateKernel_add_config(b, cfg);
        lmb_CreateKernel_add_name(b, name);
        lmb_CreateKernel_add_source(b, src);
        ADD(CreateKernel, lmb_CreateKernel_end(b));
    }
    /* 8 */
    {
        uint32_t args[3] = {10, 20, 30};
        fb_ref v = fb_create_vector_u32(b, args, 3);
        lmb_CoreCoord core = {2, 5};
        lmb_SetRuntimeArgs_start(b);
        lmb_SetRuntimeArgs_add_program_id(b, 3);
        lmb_SetRuntimeArgs_add_kernel_id(b, 11);
        lmb_SetRuntimeArgs_add_core(b, &core);
        lmb_SetRuntimeArgs_add_args(b, v);
        ADD(SetRuntimeArgs, lmb_SetRuntimeArgs_end(b));
    }
    /* 9 */
    {
        uint32_t a1[1] = {1}, a2[2] = {2, 3};
        lmb_CoreCoord c1 = {1, 1}, c2 = {2, 2};
        fb_ref v1 = fb_create_vector_u32(b, a1, 1);
        lmb_CoreArgs_start(b);
        lmb_CoreArgs_add_core(b, &c1);
        lmb_CoreArgs_add_args(b, v1);
        fb_ref t[2];
        t[0] = lmb_CoreArgs_end(b);
        fb_ref v2 = fb_create_vector_u32(b, a2, 2);
        lmb_CoreArgs_start(b);
        lmb_CoreArgs_add_core(b, &c2);
        lmb_CoreArgs_add_args(b, v2);
        t[1] = lmb_CoreArgs_end(b);
        fb_ref per = fb_create_vector_refs(b, t, 2);
        lmb_SetRuntimeArgsMulti_start(b);
        lmb_SetRuntimeArgsMulti_add_program_id(b, 3);
        lmb_SetRuntimeArgsMulti_add_kernel_id(b, 11);
        lmb_SetRuntimeArgsMulti_add_per_core(b, per);
        ADD(SetRuntimeArgsMulti, lmb_SetRuntimeArgsMulti_end(b));
    }
    /* 10 */
    {
        uint32_t args[2] = {99, 100};
        fb_ref v = fb_create_vector_u32(b, args, 2);
        lmb_SetCommonRuntimeArgs_start(b);
        lmb_SetCommonRuntimeArgs_add_program_id(b, 3);
        lmb_SetCommonRuntimeArgs_add_kernel_id(b, 11);
        lmb_SetCommonRuntimeArgs_add_args(b, v);
        ADD(SetCommonRuntimeArgs, lmb_SetCommonRuntimeArgs_end(b));
    }
    /* 11 */
    {
        lmb_CoreRange cores[1] = {{{0, 0}, {1, 1}}};
        lmb_CBFormat fmts[2] = {{0, LMB_DataFormat_Float16_b, 2048},
                                {16, LMB_DataFormat_Float32, 4096}};
        fb_ref vc = lmb_vec_CoreRange_create(b, cores, 1);
        fb_ref vf = lmb_vec_CBFormat_create(b, fmts, 2);
        lmb_CreateCircularBuffer_start(b);
        lmb_CreateCircularBuffer_add_cb_id(b, 5);
        lmb_CreateCircularBuffer_add_program_id(b, 3);
        lmb_CreateCircularBuffer_add_cores(b, vc);
        lmb_CreateCircularBuffer_add_total_size(b, 8192);
        lmb_CreateCircularBuffer_add_formats(b, vf);
        ADD(CreateCircularBuffer, lmb_CreateCircularBuffer_end(b));
    }
    /* 12 */
    {
        lmb_CoreRange cores[1] = {{{0, 0}, {0, 0}}};
        fb_ref vc = lmb_vec_CoreRange_create(b, cores, 1);
        lmb_CreateSemaphore_start(b);
        lmb_CreateSemaphore_add_semaphore_id(b, 6);
        lmb_CreateSemaphore_add_program_id(b, 3);
        lmb_CreateSemaphore_add_cores(b, vc);
        lmb_CreateSemaphore_add_initial_value(b, 42);
        ADD(CreateSemaphore, lmb_CreateSemaphore_end(b));
    }
    /* 13 */
    fb_ref label = fb_create_string(b, "MatMul /layer/mm", 16);
    lmb_EnqueueProgram_start(b);
    lmb_EnqueueProgram_add_program_id(b, 3);
    lmb_EnqueueProgram_add_blocking(b, true);
    lmb_EnqueueProgram_add_label(b, label);
    ADD(EnqueueProgram, lmb_EnqueueProgram_end(b));
    /* 14 .. 18 */
    lmb_BeginTraceCapture_start(b);
    lmb_BeginTraceCapture_add_cq_id(b, 2);
    lmb_BeginTraceCapture_add_trace_id(b, 77);
    ADD(BeginTraceCapture, lmb_BeginTraceCapture_end(b));
    lmb_EndTraceCapture_start(b);
    lmb_EndTraceCapture_add_cq_id(b, 2);
    lmb_EndTraceCapture_add_trace_id(b, 77);
    ADD(EndTraceCapture, lmb_EndTraceCapture_end(b));
    lmb_LoadTrace_start(b);
    lmb_LoadTrace_add_cq_id(b, 2);
    lmb_LoadTrace_add_trace_id(b, 78);
    ADD(LoadTrace, lmb_LoadTrace_end(b));
    lmb_ReplayTrace_start(b);
    lmb_ReplayTrace_add_cq_id(b, 2);
    lmb_ReplayTrace_add_trace_id(b, 78);
    lmb_ReplayTrace_add_blocking(b, true);
    ADD(ReplayTrace, lmb_ReplayTrace_end(b));
    lmb_ReleaseTrace_start(b);
    lmb_ReleaseTrace_add_trace_id(b, 78);
    ADD(ReleaseTrace, lmb_ReleaseTrace_end(b));
    /* 19: golden = the same bytes as the write, so the same blob */
    {
        lmb_BlobRef golden;
        if ((st = lmb_writer_add_blob(w, blob, sizeof blob, false, &golden))) goto done;
        lmb_CompareToGolden_start(b);
        lmb_CompareToGolden_add_cq_id(b, 1);
        lmb_CompareToGolden_add_buffer_id(b, 7);
        lmb_CompareToGolden_add_golden(b, &golden);
        ADD(CompareToGolden, lmb_CompareToGolden_end(b));
    }
#undef ADD
    {
        uint8_t t78[100], t77[64];
        memset(t78, 0x78, sizeof t78);
        memset(t77, 0x77, sizeof t77);
        if ((st = lmb_writer_add_trace(w, 78, t78, sizeof t78)) ||
            (st = lmb_writer_add_trace(w, 77, t77, sizeof t77)) ||
            (st = lmb_writer_name_buffer(w, 7, LMB_BufferRole_Input, "input0")) ||
            (st = lmb_writer_name_buffer(w, 8, LMB_BufferRole_Output, "output0")))
            goto done;
    }
    {
        static const uint8_t formats[3] = {LMB_DataFormat_Float32, LMB_DataFormat_Float16_b,
                                           LMB_DataFormat_Bfp8_b};
        lmb_header hdr;
        lmb_header_init(&hdr);
        hdr.producer = "test-producer";
        hdr.producer_version = (lmb_Version){1, 2, 3};
        hdr.grid_x = 8;
        hdr.grid_y = 8;
        hdr.l1_size = 1499136;
        hdr.dram_banks = 12;
        hdr.dram_bank_size = 1ull << 30;
        hdr.data_formats = formats;
        hdr.data_format_count = 3;
        if ((st = lmb_writer_finish(w, &hdr))) goto done;
    }
    st = lmb_writer_to_memory(w, out_data, out_size);
done:
    lmb_writer_destroy(w);
    return st;
}

/* ------------------------------------------------------------------ check */

static char sample_msg[256];

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(sample_msg, sizeof sample_msg, "%s:%d: %s", __FILE__, __LINE__, #cond);       \
            return sample_msg;                                                                     \
        }                                                                                          \
    } while (0)

static bool str_is(fb_str s, const char *want) {
    return s.ptr && s.len == strlen(want) && !memcmp(s.ptr, want, s.len);
}

static fb_table cmd(fb_vec cmds, uint32_t i, lmb_Command type) {
    fb_table e = fb_vec_table(cmds, i);
    return lmb_CommandEntry_cmd_type(e) == type ? lmb_CommandEntry_cmd(e) : NULL;
}

const char *sample_check(const void *file, bool check_blobs) {
    fb_table r = lmb_root(file);
    lmb_Version v = lmb_LightMetalBinary_format_version(r);
    EXPECT(v.major == LMB_FORMAT_MAJOR && v.minor == LMB_FORMAT_MINOR && v.patch == 0);
    EXPECT(str_is(lmb_LightMetalBinary_producer(r), "test-producer"));
    lmb_Version pv = lmb_LightMetalBinary_producer_version(r);
    EXPECT(pv.major == 1 && pv.minor == 2 && pv.patch == 3);
    fb_table sys = lmb_LightMetalBinary_system(r);
    EXPECT(sys && lmb_SystemDescriptor_grid_x(sys) == 8 && lmb_SystemDescriptor_grid_y(sys) == 8);
    EXPECT(lmb_SystemDescriptor_l1_size(sys) == 1499136);
    EXPECT(lmb_SystemDescriptor_dram_banks(sys) == 12);
    EXPECT(lmb_SystemDescriptor_dram_bank_size(sys) == 1ull << 30);
    fb_vec df = lmb_SystemDescriptor_data_formats(sys);
    EXPECT(df.len == 3 && fb_vec_u8(df, 0) == LMB_DataFormat_Float32 &&
           fb_vec_u8(df, 1) == LMB_DataFormat_Float16_b &&
           fb_vec_u8(df, 2) == LMB_DataFormat_Bfp8_b);

    fb_vec kb = lmb_LightMetalBinary_kernel_binaries(r);
    EXPECT(kb.len == 2);
    lmb_BlobRef k0 = lmb_vec_BlobRef_at(kb, 0), k1 = lmb_vec_BlobRef_at(kb, 1);
    EXPECT(k0.hash < k1.hash && k0.size == SAMPLE_ELF_SIZE && k1.size == SAMPLE_ELF_SIZE);
    uint8_t elf_a[SAMPLE_ELF_SIZE];
    sample_elf(elf_a, 0x11);
    uint64_t hash_a = hash64(elf_a, sizeof elf_a, 0);
    lmb_BlobRef ka;
    EXPECT(lmb_find_kernel_binary(r, hash_a, &ka));
    EXPECT(!lmb_find_kernel_binary(r, hash_a ^ 1, &ka) || ka.hash == hash_a);
    if (check_blobs) EXPECT(!memcmp(lmb_blob_data(file, r, ka), elf_a, sizeof elf_a));

    fb_vec cmds = lmb_LightMetalBinary_commands(r);
    EXPECT(cmds.len == 20);
    fb_table t;
    EXPECT((t = cmd(cmds, 0, LMB_Command_CreateBuffer)));
    EXPECT(lmb_CreateBuffer_buffer_id(t) == 7 && lmb_CreateBuffer_type(t) == LMB_BufferType_DRAM);
    EXPECT(lmb_CreateBuffer_layout(t) == LMB_BufferLayout_Interleaved);
    EXPECT(lmb_CreateBuffer_size(t) == 65536 && lmb_CreateBuffer_page_size(t) == 2048);
    EXPECT(lmb_CreateBuffer_address(t) == 0x100000000ull);
    EXPECT((t = cmd(cmds, 1, LMB_Command_DeallocateBuffer)) &&
           lmb_DeallocateBuffer_buffer_id(t) == 9);
    EXPECT((t = cmd(cmds, 2, LMB_Command_EnqueueWriteBuffer)));
    EXPECT(lmb_EnqueueWriteBuffer_cq_id(t) == 1 && lmb_EnqueueWriteBuffer_buffer_id(t) == 7);
    EXPECT(lmb_EnqueueWriteBuffer_blocking(t) && lmb_EnqueueWriteBuffer_has_data(t));
    lmb_BlobRef data = lmb_EnqueueWriteBuffer_data(t);
    EXPECT(data.size == SAMPLE_BLOB_SIZE && data.offset % LMB_BLOB_ALIGN == 0);
    if (check_blobs) {
        uint8_t blob[SAMPLE_BLOB_SIZE];
        sample_blob(blob, sizeof blob);
        EXPECT(!memcmp(lmb_blob_data(file, r, data), blob, sizeof blob));
        EXPECT(hash64(blob, sizeof blob, 0) == data.hash);
    }
    EXPECT((t = cmd(cmds, 3, LMB_Command_EnqueueReadBuffer)));
    EXPECT(lmb_EnqueueReadBuffer_cq_id(t) == 1 && lmb_EnqueueReadBuffer_buffer_id(t) == 7 &&
           lmb_EnqueueReadBuffer_blocking(t));
    EXPECT((t = cmd(cmds, 4, LMB_Command_FinishQueue)) && lmb_FinishQueue_cq_id(t) == 1);
    EXPECT((t = cmd(cmds, 5, LMB_Command_CreateProgram)) && lmb_CreateProgram_program_id(t) == 3);
    EXPECT((t = cmd(cmds, 6, LMB_Command_ReleaseProgram)) && lmb_ReleaseProgram_program_id(t) == 4);
    EXPECT((t = cmd(cmds, 7, LMB_Command_CreateKernel)));
    EXPECT(lmb_CreateKernel_kernel_id(t) == 11 && lmb_CreateKernel_program_id(t) == 3);
    EXPECT(lmb_CreateKernel_binary_hash(t) == hash_a);
    fb_vec cores = lmb_CreateKernel_cores(t);
    EXPECT(cores.len == 2);
    lmb_CoreRange c0 = lmb_vec_CoreRange_at(cores, 0), c1 = lmb_vec_CoreRange_at(cores, 1);
    EXPECT(c0.start.x == 0 && c0.start.y == 0 && c0.end.x == 7 && c0.end.y == 7);
    EXPECT(c1.start.x == 1 && c1.start.y == 2 && c1.end.x == 3 && c1.end.y == 4);
    fb_table cfg = lmb_CreateKernel_config(t);
    EXPECT(cfg && lmb_KernelConfig_processor(cfg) == LMB_Processor_Compute);
    EXPECT(lmb_KernelConfig_noc(cfg) == LMB_NocIndex_Noc1);
    EXPECT(lmb_KernelConfig_math_fidelity(cfg) == LMB_MathFidelity_HiFi4);
    EXPECT(lmb_KernelConfig_fp32_dest_acc_en(cfg) && lmb_KernelConfig_math_approx_mode(cfg));
    fb_vec ca = lmb_KernelConfig_compile_args(cfg);
    EXPECT(ca.len == 3 && fb_vec_u32(ca, 0) == 1 && fb_vec_u32(ca, 1) == 2 &&
           fb_vec_u32(ca, 2) == 3);
    EXPECT(str_is(lmb_CreateKernel_name(t), "reader"));
    EXPECT(str_is(lmb_CreateKernel_source(t), sample_source));
    EXPECT((t = cmd(cmds, 8, LMB_Command_SetRuntimeArgs)));
    EXPECT(lmb_SetRuntimeArgs_program_id(t) == 3 && lmb_SetRuntimeArgs_kernel_id(t) == 11);
    lmb_CoreCoord core = lmb_SetRuntimeArgs_core(t);
    EXPECT(core.x == 2 && core.y == 5);
    fb_vec args = lmb_SetRuntimeArgs_args(t);
    EXPECT(args.len == 3 && fb_vec_u32(args, 0) == 10 && fb_vec_u32(args, 2) == 30);
    EXPECT((t = cmd(cmds, 9, LMB_Command_SetRuntimeArgsMulti)));
    EXPECT(lmb_SetRuntimeArgsMulti_program_id(t) == 3 &&
           lmb_SetRuntimeArgsMulti_kernel_id(t) == 11);
    fb_vec per = lmb_SetRuntimeArgsMulti_per_core(t);
    EXPECT(per.len == 2);
    fb_table p1 = fb_vec_table(per, 1);
    EXPECT(lmb_CoreArgs_core(p1).x == 2 && lmb_CoreArgs_core(p1).y == 2);
    EXPECT(lmb_CoreArgs_args(p1).len == 2 && fb_vec_u32(lmb_CoreArgs_args(p1), 1) == 3);
    EXPECT(lmb_CoreArgs_core(fb_vec_table(per, 0)).x == 1);
    EXPECT((t = cmd(cmds, 10, LMB_Command_SetCommonRuntimeArgs)));
    EXPECT(lmb_SetCommonRuntimeArgs_program_id(t) == 3 &&
           lmb_SetCommonRuntimeArgs_kernel_id(t) == 11);
    args = lmb_SetCommonRuntimeArgs_args(t);
    EXPECT(args.len == 2 && fb_vec_u32(args, 0) == 99 && fb_vec_u32(args, 1) == 100);
    EXPECT((t = cmd(cmds, 11, LMB_Command_CreateCircularBuffer)));
    EXPECT(lmb_CreateCircularBuffer_cb_id(t) == 5 && lmb_CreateCircularBuffer_program_id(t) == 3);
    EXPECT(lmb_CreateCircularBuffer_total_size(t) == 8192);
    EXPECT(lmb_CreateCircularBuffer_cores(t).len == 1);
    fb_vec fm = lmb_CreateCircularBuffer_formats(t);
    EXPECT(fm.len == 2);
    lmb_CBFormat f1 = lmb_vec_CBFormat_at(fm, 1);
    EXPECT(f1.index == 16 && f1.format == LMB_DataFormat_Float32 && f1.page_size == 4096);
    EXPECT((t = cmd(cmds, 12, LMB_Command_CreateSemaphore)));
    EXPECT(lmb_CreateSemaphore_semaphore_id(t) == 6 && lmb_CreateSemaphore_program_id(t) == 3);
    EXPECT(lmb_CreateSemaphore_initial_value(t) == 42 && lmb_CreateSemaphore_cores(t).len == 1);
    EXPECT((t = cmd(cmds, 13, LMB_Command_EnqueueProgram)));
    EXPECT(lmb_EnqueueProgram_cq_id(t) == 0 && lmb_EnqueueProgram_program_id(t) == 3 &&
           lmb_EnqueueProgram_blocking(t));
    fb_str label = lmb_EnqueueProgram_label(t);
    EXPECT(label.len == 16 && !memcmp(label.ptr, "MatMul /layer/mm", 16));
    EXPECT((t = cmd(cmds, 14, LMB_Command_BeginTraceCapture)));
    EXPECT(lmb_BeginTraceCapture_cq_id(t) == 2 && lmb_BeginTraceCapture_trace_id(t) == 77);
    EXPECT((t = cmd(cmds, 15, LMB_Command_EndTraceCapture)));
    EXPECT(lmb_EndTraceCapture_cq_id(t) == 2 && lmb_EndTraceCapture_trace_id(t) == 77);
    EXPECT((t = cmd(cmds, 16, LMB_Command_LoadTrace)));
    EXPECT(lmb_LoadTrace_cq_id(t) == 2 && lmb_LoadTrace_trace_id(t) == 78);
    EXPECT((t = cmd(cmds, 17, LMB_Command_ReplayTrace)));
    EXPECT(lmb_ReplayTrace_cq_id(t) == 2 && lmb_ReplayTrace_trace_id(t) == 78 &&
           lmb_ReplayTrace_blocking(t));
    EXPECT((t = cmd(cmds, 18, LMB_Command_ReleaseTrace)) && lmb_ReleaseTrace_trace_id(t) == 78);
    EXPECT((t = cmd(cmds, 19, LMB_Command_CompareToGolden)));
    EXPECT(lmb_CompareToGolden_cq_id(t) == 1 && lmb_CompareToGolden_buffer_id(t) == 7);
    lmb_BlobRef golden = lmb_CompareToGolden_golden(t);
    EXPECT(golden.offset == data.offset && golden.size == data.size && golden.hash == data.hash);

    fb_vec traces = lmb_LightMetalBinary_traces(r);
    EXPECT(traces.len == 2);
    EXPECT(lmb_TraceDescriptor_trace_id(fb_vec_table(traces, 0)) == 77);
    EXPECT(lmb_TraceDescriptor_trace_id(fb_vec_table(traces, 1)) == 78);
    lmb_BlobRef tr;
    EXPECT(lmb_find_trace(r, 78, &tr) && tr.size == 100);
    EXPECT(!lmb_find_trace(r, 79, &tr));
    if (check_blobs) EXPECT(lmb_blob_data(file, r, tr)[99] == 0x78);

    fb_vec names = lmb_LightMetalBinary_buffer_names(r);
    EXPECT(names.len == 2);
    fb_table n1 = fb_vec_table(names, 1);
    EXPECT(lmb_BufferName_buffer_id(n1) == 8 && lmb_BufferName_role(n1) == LMB_BufferRole_Output);
    EXPECT(str_is(lmb_BufferName_name(n1), "output0"));
    EXPECT(str_is(lmb_BufferName_name(fb_vec_table(names, 0)), "input0"));
    return NULL;
}
