/* fb_build_vs_cpp and fb_verify_vs_cpp: our FlatBuffers runtime against
 * Debian's C++ FlatBuffers on the same 100,000-command workload, measured in
 * the same run. Ratios are C++ time / our time (higher is better; >= 1.0
 * means we are at least as fast). Each figure is the median of several
 * interleaved repetitions. */
#include "bench.h"
#include "fb_bench.h"
#include "format/lmb.h"

#define REPS 11

static fb_ref entries[FB_BENCH_COMMANDS];

/* The same tables, values and order as fbcpp_build(). */
static const void *build_c(fb_builder *b, size_t *out_size) {
    fb_builder_reset(b);
    for (uint32_t i = 0; i < FB_BENCH_COMMANDS; i++) {
        fb_ref cmd;
        lmb_Command type;
        switch (i % 5) {
        case 0:
            lmb_CreateBuffer_start(b);
            lmb_CreateBuffer_add_address(b, (uint64_t)i << 12);
            lmb_CreateBuffer_add_page_size(b, 2048);
            lmb_CreateBuffer_add_size(b, (uint64_t)i * 4096 + 4096);
            lmb_CreateBuffer_add_buffer_id(b, i);
            lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
            lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
            cmd = lmb_CreateBuffer_end(b);
            type = LMB_Command_CreateBuffer;
            break;
        case 1: {
            lmb_BlobRef ref = {(uint64_t)i * 64, 4096, fb_bench_arg(i, 9)};
            lmb_EnqueueWriteBuffer_start(b);
            lmb_EnqueueWriteBuffer_add_data(b, &ref);
            lmb_EnqueueWriteBuffer_add_buffer_id(b, i - 1);
            lmb_EnqueueWriteBuffer_add_blocking(b, true);
            cmd = lmb_EnqueueWriteBuffer_end(b);
            type = LMB_Command_EnqueueWriteBuffer;
            break;
        }
        case 2: {
            uint32_t args[FB_BENCH_ARGS];
            for (uint32_t k = 0; k < FB_BENCH_ARGS; k++)
                args[k] = fb_bench_arg(i, k);
            fb_ref v = fb_create_vector_u32(b, args, FB_BENCH_ARGS);
            lmb_CoreCoord core = {(uint16_t)(i % 8), (uint16_t)(i / 8 % 8)};
            lmb_SetRuntimeArgs_start(b);
            lmb_SetRuntimeArgs_add_args(b, v);
            lmb_SetRuntimeArgs_add_kernel_id(b, i / 5 + 1);
            lmb_SetRuntimeArgs_add_program_id(b, i / 5);
            lmb_SetRuntimeArgs_add_core(b, &core);
            cmd = lmb_SetRuntimeArgs_end(b);
            type = LMB_Command_SetRuntimeArgs;
            break;
        }
        case 3:
            lmb_EnqueueProgram_start(b);
            lmb_EnqueueProgram_add_program_id(b, i / 5);
            lmb_EnqueueProgram_add_blocking(b, true);
            cmd = lmb_EnqueueProgram_end(b);
            type = LMB_Command_EnqueueProgram;
            break;
        default: {
            uint32_t cargs[FB_BENCH_CARGS];
            for (uint32_t k = 0; k < FB_BENCH_CARGS; k++)
                cargs[k] = fb_bench_arg(i, k + 20);
            lmb_CoreRange range = {{0, 0}, {(uint16_t)(i % 8), 7}};
            fb_ref cores = lmb_vec_CoreRange_create(b, &range, 1);
            fb_ref ca = fb_create_vector_u32(b, cargs, FB_BENCH_CARGS);
            lmb_KernelConfig_start(b);
            lmb_KernelConfig_add_compile_args(b, ca);
            lmb_KernelConfig_add_processor(b, LMB_Processor_Compute);
            lmb_KernelConfig_add_noc(b, LMB_NocIndex_Noc0);
            lmb_KernelConfig_add_math_fidelity(b, LMB_MathFidelity_HiFi4);
            fb_ref cfg = lmb_KernelConfig_end(b);
            fb_ref name = fb_create_string(b, "compute_kernel", 14);
            lmb_CreateKernel_start(b);
            lmb_CreateKernel_add_binary_hash(b, fb_bench_arg(i, 30));
            lmb_CreateKernel_add_name(b, name);
            lmb_CreateKernel_add_config(b, cfg);
            lmb_CreateKernel_add_cores(b, cores);
            lmb_CreateKernel_add_program_id(b, i / 5);
            lmb_CreateKernel_add_kernel_id(b, i);
            cmd = lmb_CreateKernel_end(b);
            type = LMB_Command_CreateKernel;
            break;
        }
        }
        lmb_CommandEntry_start(b);
        lmb_CommandEntry_add_cmd(b, type, cmd);
        entries[i] = lmb_CommandEntry_end(b);
    }
    fb_ref cmds = fb_create_vector_refs(b, entries, FB_BENCH_COMMANDS);
    fb_ref producer = fb_create_string(b, "bench", 5);
    static const uint8_t formats[2] = {LMB_DataFormat_Float16_b, LMB_DataFormat_Bfp8_b};
    fb_ref fv = fb_create_vector(b, formats, 2, 1, 1);
    lmb_SystemDescriptor_start(b);
    lmb_SystemDescriptor_add_dram_bank_size(b, 1ull << 30);
    lmb_SystemDescriptor_add_l1_size(b, 1499136);
    lmb_SystemDescriptor_add_data_formats(b, fv);
    lmb_SystemDescriptor_add_grid_x(b, 8);
    lmb_SystemDescriptor_add_grid_y(b, 8);
    lmb_SystemDescriptor_add_dram_banks(b, 12);
    fb_ref sys = lmb_SystemDescriptor_end(b);
    lmb_Version version = {LMB_FORMAT_MAJOR, 0, 0}, producer_version = {0, 1, 0};
    lmb_Integrity integrity = {LMB_HashAlgorithm_XXH3_64_Pieces, 0};
    lmb_LightMetalBinary_start(b);
    lmb_LightMetalBinary_add_integrity(b, &integrity);
    lmb_LightMetalBinary_add_commands(b, cmds);
    lmb_LightMetalBinary_add_system(b, sys);
    lmb_LightMetalBinary_add_producer(b, producer);
    lmb_LightMetalBinary_add_format_version(b, &version);
    lmb_LightMetalBinary_add_producer_version(b, &producer_version);
    fb_ref root = lmb_LightMetalBinary_end(b);
    return fb_builder_finish(b, root, LMB_FILE_IDENTIFIER, out_size);
}

/* Structural verification of the table area (what the C++ verifier checks;
 * the workload has no data region, so lmb_verify's blob checks are out of
 * scope here), then a read of every field the C++ side reads. */
static int verify_traverse_c(const void *buf, size_t size, uint64_t *out_sum) {
    if (lmb_verify_table_area(buf, size, NULL) != LM_OK) return 0;
    fb_table root = lmb_root(buf);
    uint64_t sum = 0;
    fb_table sys = lmb_LightMetalBinary_system(root);
    sum += lmb_SystemDescriptor_grid_x(sys) + lmb_SystemDescriptor_grid_y(sys) +
           lmb_SystemDescriptor_l1_size(sys) + lmb_SystemDescriptor_dram_banks(sys) +
           lmb_SystemDescriptor_dram_bank_size(sys);
    fb_vec df = lmb_SystemDescriptor_data_formats(sys);
    for (uint32_t k = 0; k < df.len; k++)
        sum += fb_vec_u8(df, k);
    fb_vec cmds = lmb_LightMetalBinary_commands(root);
    for (uint32_t i = 0; i < cmds.len; i++) {
        fb_table e = fb_vec_table(cmds, i);
        lmb_Command type = lmb_CommandEntry_cmd_type(e);
        fb_table c = lmb_CommandEntry_cmd(e);
        sum += type;
        switch (type) {
        case LMB_Command_CreateBuffer:
            sum += lmb_CreateBuffer_buffer_id(c) + lmb_CreateBuffer_type(c) +
                   lmb_CreateBuffer_layout(c) + lmb_CreateBuffer_size(c) +
                   lmb_CreateBuffer_page_size(c) + lmb_CreateBuffer_address(c);
            break;
        case LMB_Command_EnqueueWriteBuffer: {
            lmb_BlobRef d = lmb_EnqueueWriteBuffer_data(c);
            sum += lmb_EnqueueWriteBuffer_cq_id(c) + lmb_EnqueueWriteBuffer_buffer_id(c) +
                   d.offset + d.size + d.hash + lmb_EnqueueWriteBuffer_blocking(c);
            break;
        }
        case LMB_Command_SetRuntimeArgs: {
            lmb_CoreCoord core = lmb_SetRuntimeArgs_core(c);
            sum += lmb_SetRuntimeArgs_program_id(c) + lmb_SetRuntimeArgs_kernel_id(c) + core.x +
                   core.y;
            fb_vec a = lmb_SetRuntimeArgs_args(c);
            for (uint32_t k = 0; k < a.len; k++)
                sum += fb_vec_u32(a, k);
            break;
        }
        case LMB_Command_EnqueueProgram:
            sum += lmb_EnqueueProgram_cq_id(c) + lmb_EnqueueProgram_program_id(c) +
                   lmb_EnqueueProgram_blocking(c);
            break;
        case LMB_Command_CreateKernel: {
            sum += lmb_CreateKernel_kernel_id(c) + lmb_CreateKernel_program_id(c) +
                   lmb_CreateKernel_binary_hash(c);
            fb_vec cores = lmb_CreateKernel_cores(c);
            for (uint32_t k = 0; k < cores.len; k++) {
                lmb_CoreRange r = lmb_vec_CoreRange_at(cores, k);
                sum += r.start.x + r.start.y + r.end.x + r.end.y;
            }
            fb_table cfg = lmb_CreateKernel_config(c);
            sum += lmb_KernelConfig_processor(cfg) + lmb_KernelConfig_noc(cfg) +
                   lmb_KernelConfig_math_fidelity(cfg);
            fb_vec a = lmb_KernelConfig_compile_args(cfg);
            for (uint32_t k = 0; k < a.len; k++)
                sum += fb_vec_u32(a, k);
            fb_str name = lmb_CreateKernel_name(c);
            sum += name.len + (uint8_t)name.ptr[0];
            break;
        }
        default:
            break;
        }
    }
    *out_sum = sum;
    return 1;
}

int main(void) {
    fb_builder b;
    fb_builder_init(&b);
    double build_c_ms[REPS], build_cpp_ms[REPS], verify_c_ms[REPS], verify_cpp_ms[REPS];
    size_t c_size = 0, cpp_size = 0;
    uint64_t sum_c = 0, sum_cpp = 0, sum_cross_c = 0, sum_cross_cpp = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        const void *cbuf = build_c(&b, &c_size);
        double t1 = bench_now();
        const void *cppbuf;
        cpp_size = fbcpp_build(&cppbuf);
        double t2 = bench_now();
        if (!cbuf || !verify_traverse_c(cbuf, c_size, &sum_c))
            bench_die("fb_bench: our buffer failed our verifier");
        double t3 = bench_now();
        if (!fbcpp_verify_traverse(cppbuf, cpp_size, &sum_cpp)) {
            fprintf(stderr, "fb_bench: C++ buffer failed the C++ verifier\n");
            return 1;
        }
        double t4 = bench_now();
        build_c_ms[r] = (t1 - t0) * 1e3;
        build_cpp_ms[r] = (t2 - t1) * 1e3;
        verify_c_ms[r] = (t3 - t2) * 1e3;
        verify_cpp_ms[r] = (t4 - t3) * 1e3;
        /* Each side must accept and read the other's buffer identically. */
        if (r == 0 && (!fbcpp_verify_traverse(cbuf, c_size, &sum_cross_cpp) ||
                       !verify_traverse_c(cppbuf, cpp_size, &sum_cross_c) ||
                       sum_cross_cpp != sum_c || sum_cross_c != sum_c || sum_cpp != sum_c)) {
            fprintf(stderr, "fb_bench: C and C++ disagree on the workload\n");
            return 1;
        }
    }
    double bc = bench_median(build_c_ms, REPS), bcpp = bench_median(build_cpp_ms, REPS);
    double vc = bench_median(verify_c_ms, REPS), vcpp = bench_median(verify_cpp_ms, REPS);
    bench_report("fb_build_c_ms", bc);
    bench_report("fb_build_cpp_ms", bcpp);
    bench_report("fb_build_vs_cpp", bcpp / bc);
    bench_report("fb_verify_c_ms", vc);
    bench_report("fb_verify_cpp_ms", vcpp);
    bench_report("fb_verify_vs_cpp", vcpp / vc);
    bench_report("fb_bench_bytes_c", (double)c_size);
    bench_report("fb_bench_bytes_cpp", (double)cpp_size);
    fb_builder_free(&b);
    return 0;
}
