/* Semantic verifier: a valid workload passes; each broken variant fails with
 * a message naming the command index and the field. */
#include <stdlib.h>

#include "format/lmb_semantic.h"
#include "lm_test.h"

/* The memory map the simulator uses (sim/kernel_map.h), as the replay
 * layer will pass it. */
static const lmb_kernel_map test_map = {0x40000000u, 0x00100000u, 0x20000000u, 0x00020000u};

/* A minimal RV32 executable: code at 0x40000000 (R+X), data at 0x20000000 (RW). */
static size_t make_elf(uint8_t *e, uint32_t code_addr, uint32_t data_addr, uint16_t machine) {
    memset(e, 0, 256);
    memcpy(e, "\177ELF", 4);
    e[4] = 1; /* 32-bit */
    e[5] = 1; /* little-endian */
    e[6] = 1;
    fb_wr_u16(e + 16, 2); /* ET_EXEC */
    fb_wr_u16(e + 18, machine);
    fb_wr_u32(e + 20, 1);
    fb_wr_u32(e + 24, code_addr); /* entry */
    fb_wr_u32(e + 28, 52);        /* phoff */
    fb_wr_u16(e + 40, 52);
    fb_wr_u16(e + 42, 32);
    fb_wr_u16(e + 44, 2);
    uint8_t *ph = e + 52;
    fb_wr_u32(ph, 1);
    fb_wr_u32(ph + 4, 128);
    fb_wr_u32(ph + 8, code_addr);
    fb_wr_u32(ph + 16, 64);
    fb_wr_u32(ph + 20, 64);
    fb_wr_u32(ph + 24, 5); /* R+X */
    ph += 32;
    fb_wr_u32(ph, 1);
    fb_wr_u32(ph + 4, 192);
    fb_wr_u32(ph + 8, data_addr);
    fb_wr_u32(ph + 16, 16);
    fb_wr_u32(ph + 20, 4096);
    fb_wr_u32(ph + 24, 6); /* R+W */
    return 256;
}

/* One variant of the workload: everything valid unless `bug` says otherwise. */
enum bug {
    BUG_NONE,
    BUG_UNDEFINED_BUFFER,
    BUG_BUFFER_TWICE,
    BUG_CORE_OUTSIDE_GRID,
    BUG_CB_INDEX,
    BUG_TOO_MANY_ARGS,
    BUG_ELF_MACHINE,
    BUG_ELF_SEGMENT,
    BUG_KERNEL_OF_OTHER_PROGRAM,
    BUG_USE_AFTER_RELEASE,
    BUG_WRITE_TOO_BIG,
    BUG_REPLAY_UNKNOWN_TRACE,
    BUG_GRID,
    BUG_NAME_UNKNOWN_BUFFER,
    BUG_SEMAPHORE_ID,
    BUG_TOO_MANY_RANGES,
    BUG_GOLDEN_TOO_SMALL,
    BUG_BUFFER_BEYOND_BANK,
    BUG_BUFFERS_OVERLAP,
    BUG_L1_IN_RESERVED,
    BUG_QUEUE,
    BUG_GLOBAL_CB_IN_DRAM,
    BUG_GLOBAL_CB_TOO_SMALL,
    BUG_NAME_ROLE,
    BUG_NAME_SHAPE,
    BUG_NAME_SHAPE_OVERFLOW,
    NAME_EMPTY, /* not a bug: an empty tensor names a buffer of any size */
    BUG_NAME_TWICE,
    BUG_DRAM_SHARD_BANK,
    BUG_DRAM_SHARD_OVERLAP,
    BUG_SHARD_NO_SPEC,
    BUG_SHARD_SHAPE,
    BUG_NAME_ELEMENT_TYPE,
    BUG_NAME_ELEMENT_TYPE_UNKNOWN,
    BUG_NAME_ELEMENT_TYPE_NO_FORMAT,
    BUG_NAME_SCALAR_SIZE,
    BUG_NAME_SCALAR_SHAPE,
    BUG_LABEL_LONG,
    BUG_LABEL_LINE_BREAK,
};

static lm_status build(enum bug bug, void **out, size_t *out_size) {
    lmb_writer *w;
    lm_status st = lmb_writer_create(&w);
    if (st) return st;
    fb_builder *b = lmb_writer_builder(w);
    uint8_t elf[256];
    make_elf(elf, bug == BUG_ELF_SEGMENT ? 0x3ffffff0u : 0x40000000u, 0x20000000u,
             bug == BUG_ELF_MACHINE ? 62 : 243);
    uint64_t hash;
    uint8_t data[4096] = {1};
    lmb_BlobRef ref;
    if ((st = lmb_writer_add_kernel_binary(w, elf, sizeof elf, &hash)) ||
        (st = lmb_writer_add_blob(w, data, bug == BUG_WRITE_TOO_BIG ? 4096 : 2048, true, &ref)))
        goto done;
#define CMD(type, ...)                                                                             \
    do {                                                                                           \
        lmb_##type##_start(b);                                                                     \
        __VA_ARGS__;                                                                               \
        if ((st = lmb_writer_add_command(w, LMB_Command_##type, lmb_##type##_end(b)))) goto done;  \
    } while (0)
    for (uint32_t id = 1; id <= (bug == BUG_BUFFER_TWICE ? 2u : 1u); id++)
        CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, 1);
            lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
            lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
            lmb_CreateBuffer_add_size(b, 2048); lmb_CreateBuffer_add_page_size(b, 1024));
    CMD(EnqueueWriteBuffer,
        lmb_EnqueueWriteBuffer_add_buffer_id(b, bug == BUG_UNDEFINED_BUFFER ? 5 : 1);
        lmb_EnqueueWriteBuffer_add_data(b, &ref));
    CMD(CreateProgram, lmb_CreateProgram_add_program_id(b, 1));
    CMD(CreateProgram, lmb_CreateProgram_add_program_id(b, 2));
    {
        lmb_CoreRange r = {{0, 0}, {bug == BUG_CORE_OUTSIDE_GRID ? 8 : 7, 7}};
        fb_ref cores = lmb_vec_CoreRange_create(b, &r, 1);
        lmb_KernelConfig_start(b);
        lmb_KernelConfig_add_processor(b, LMB_Processor_DM0);
        fb_ref cfg = lmb_KernelConfig_end(b);
        CMD(CreateKernel, lmb_CreateKernel_add_kernel_id(b, 1);
            lmb_CreateKernel_add_program_id(b, 1); lmb_CreateKernel_add_binary_hash(b, hash);
            lmb_CreateKernel_add_cores(b, cores); lmb_CreateKernel_add_config(b, cfg));
    }
    {
        static uint32_t args[342];
        fb_ref v = fb_create_vector_u32(b, args, bug == BUG_TOO_MANY_ARGS ? 342 : 341);
        lmb_CoreCoord core = {3, 4};
        CMD(SetRuntimeArgs,
            lmb_SetRuntimeArgs_add_program_id(b, bug == BUG_KERNEL_OF_OTHER_PROGRAM ? 2 : 1);
            lmb_SetRuntimeArgs_add_kernel_id(b, 1); lmb_SetRuntimeArgs_add_core(b, &core);
            lmb_SetRuntimeArgs_add_args(b, v));
    }
    {
        lmb_CoreRange r = {{0, 0}, {1, 1}};
        lmb_CBFormat fmts[2] = {{0, LMB_DataFormat_Float16_b, 2048},
                                {bug == BUG_CB_INDEX ? 32 : 31, LMB_DataFormat_Float32, 4096}};
        fb_ref cores = lmb_vec_CoreRange_create(b, &r, 1);
        fb_ref fv = lmb_vec_CBFormat_create(b, fmts, 2);
        CMD(CreateCircularBuffer, lmb_CreateCircularBuffer_add_cb_id(b, 1);
            lmb_CreateCircularBuffer_add_program_id(b, 1);
            lmb_CreateCircularBuffer_add_cores(b, cores);
            lmb_CreateCircularBuffer_add_total_size(b, 8192);
            lmb_CreateCircularBuffer_add_formats(b, fv));
    }
    {
        /* A launch label: one line of at most 1024 bytes. */
        char label[1100];
        memset(label, 'a', sizeof label);
        memcpy(label, "Conv /x", 7);
        size_t len = bug == BUG_LABEL_LONG ? 1025 : bug == BUG_LABEL_LINE_BREAK ? 9 : 1024;
        if (bug == BUG_LABEL_LINE_BREAK) label[7] = '\n';
        fb_ref text = fb_create_string(b, label, len);
        CMD(EnqueueProgram, lmb_EnqueueProgram_add_program_id(b, 1);
            lmb_EnqueueProgram_add_label(b, text));
    }
    CMD(BeginTraceCapture, lmb_BeginTraceCapture_add_trace_id(b, 4));
    CMD(EnqueueProgram, lmb_EnqueueProgram_add_program_id(b, 1));
    CMD(EndTraceCapture, lmb_EndTraceCapture_add_trace_id(b, 4));
    CMD(ReplayTrace, lmb_ReplayTrace_add_trace_id(b, bug == BUG_REPLAY_UNKNOWN_TRACE ? 5 : 4));
    CMD(ReleaseProgram, lmb_ReleaseProgram_add_program_id(b, 1));
    if (bug == BUG_USE_AFTER_RELEASE) CMD(EnqueueProgram, lmb_EnqueueProgram_add_program_id(b, 1));
    CMD(FinishQueue, (void)0);
    {
        /* Semaphore ids are per-core indices: 0 is valid, 16 is not. */
        lmb_CoreRange r[17];
        for (uint16_t i = 0; i < 17; i++)
            r[i] = (lmb_CoreRange){{i % 8, i / 8}, {i % 8, i / 8}};
        fb_ref one = lmb_vec_CoreRange_create(b, r, 1);
        CMD(CreateSemaphore, lmb_CreateSemaphore_add_semaphore_id(b, 0);
            lmb_CreateSemaphore_add_program_id(b, 2); lmb_CreateSemaphore_add_cores(b, one));
        fb_ref many = lmb_vec_CoreRange_create(b, r, bug == BUG_TOO_MANY_RANGES ? 17 : 16);
        CMD(CreateSemaphore,
            lmb_CreateSemaphore_add_semaphore_id(b, bug == BUG_SEMAPHORE_ID ? 16 : 1);
            lmb_CreateSemaphore_add_program_id(b, 2); lmb_CreateSemaphore_add_cores(b, many));
    }
    /* Goldens cover their buffer exactly. */
    {
        lmb_BlobRef g = ref;
        if (bug == BUG_GOLDEN_TOO_SMALL) g.size = 1024;
        CMD(CompareToGolden, lmb_CompareToGolden_add_buffer_id(b, 1);
            lmb_CompareToGolden_add_golden(b, &g);
            lmb_CompareToGolden_add_cq_id(b, bug == BUG_QUEUE ? 2 : 1));
    }
    /* Buffer 2 (DRAM) next to buffer 1's page in each bank; buffer 3 (L1)
     * above the reserved area, one 8 KiB page per core. */
    CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, 2);
        lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
        lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
        lmb_CreateBuffer_add_size(b, bug == BUG_BUFFER_BEYOND_BANK ? 12ull << 30 : 1024);
        lmb_CreateBuffer_add_page_size(b, bug == BUG_BUFFER_BEYOND_BANK ? 1 << 20 : 1024);
        lmb_CreateBuffer_add_address(b, bug == BUG_BUFFERS_OVERLAP ? 992 : 1024));
    CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, 3);
        lmb_CreateBuffer_add_type(b, LMB_BufferType_L1);
        lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
        lmb_CreateBuffer_add_size(b, 64 * 8192); lmb_CreateBuffer_add_page_size(b, 8192);
        lmb_CreateBuffer_add_address(b, bug == BUG_L1_IN_RESERVED ? 0x8000 : 0x10000));
    {
        lmb_CoreRange r = {{0, 0}, {1, 1}};
        lmb_CBFormat fmt = {0, LMB_DataFormat_Float32, 4096};
        fb_ref cores = lmb_vec_CoreRange_create(b, &r, 1);
        fb_ref fv = lmb_vec_CBFormat_create(b, &fmt, 1);
        CMD(CreateCircularBuffer, lmb_CreateCircularBuffer_add_cb_id(b, 2);
            lmb_CreateCircularBuffer_add_program_id(b, 2);
            lmb_CreateCircularBuffer_add_cores(b, cores); lmb_CreateCircularBuffer_add_total_size(
                b, bug == BUG_GLOBAL_CB_TOO_SMALL ? 12288 : 8192);
            lmb_CreateCircularBuffer_add_formats(b, fv);
            lmb_CreateCircularBuffer_add_global_buffer_id(b, bug == BUG_GLOBAL_CB_IN_DRAM ? 2 : 3));
    }
    /* Buffer 4: DRAM, height-sharded two pages to a bank over the 12 banks,
     * (b, 0) for bank b, above buffer 2. */
    {
        lmb_CoreRange r = {{0, 0}, {bug == BUG_DRAM_SHARD_BANK ? 12 : 11, 0}};
        fb_ref cores = lmb_vec_CoreRange_create(b, &r, 1);
        lmb_ShardSpec_start(b);
        lmb_ShardSpec_add_cores(b, cores);
        lmb_ShardSpec_add_shard_height(b, 2);
        lmb_ShardSpec_add_shard_width(b, 1);
        lmb_ShardSpec_add_tensor_height(b, bug == BUG_SHARD_SHAPE ? 23 : 24);
        lmb_ShardSpec_add_tensor_width(b, 1);
        fb_ref spec = lmb_ShardSpec_end(b);
        CMD(CreateBuffer, lmb_CreateBuffer_add_buffer_id(b, 4);
            lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
            lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_HeightSharded);
            lmb_CreateBuffer_add_size(b, 24 * 1024); lmb_CreateBuffer_add_page_size(b, 1024);
            lmb_CreateBuffer_add_address(b, bug == BUG_DRAM_SHARD_OVERLAP ? 1536 : 4096);
            if (bug != BUG_SHARD_NO_SPEC) lmb_CreateBuffer_add_shard(b, spec));
    }
#undef CMD
    if (bug == BUG_NAME_ELEMENT_TYPE_NO_FORMAT) {
        /* Plain bytes hold no element type. */
        lmb_tensor_desc d = {.element_type = LMB_ElementType_Bool};
        if ((st = lmb_writer_name_tensor_as(w, 1, LMB_BufferRole_Output, "out", &d))) goto done;
    } else if ((st = lmb_writer_name_buffer(w, bug == BUG_NAME_UNKNOWN_BUFFER ? 9 : 1,
                                            LMB_BufferRole_Output, "out"))) {
        goto done;
    }
    {
        /* Buffer 3 as a 128x1024 float32 tensor that is float64 outside. */
        uint32_t shape[2] = {128, bug == BUG_NAME_SHAPE ? 1000 : 1024};
        if (bug == NAME_EMPTY) shape[1] = 0;
        if (bug == BUG_NAME_SHAPE_OVERFLOW) shape[0] = shape[1] = UINT32_MAX;
        lmb_ElementType et = bug == BUG_NAME_ELEMENT_TYPE           ? LMB_ElementType_Int64
                             : bug == BUG_NAME_ELEMENT_TYPE_UNKNOWN ? (lmb_ElementType)10
                                                                    : LMB_ElementType_Float64;
        /* A scalar names one element: of this buffer, too few bytes. */
        bool scalar = bug == BUG_NAME_SCALAR_SIZE || bug == BUG_NAME_SCALAR_SHAPE;
        lmb_tensor_desc d = {.format = LMB_DataFormat_Float32,
                             .shape = shape,
                             .rank = bug == BUG_NAME_SCALAR_SIZE ? 0 : 2,
                             .scalar = scalar,
                             .element_type = et};
        if ((st = lmb_writer_name_tensor_as(
                 w, 3, bug == BUG_NAME_ROLE ? LMB_BufferRole_Invalid : LMB_BufferRole_InputOutput,
                 bug == BUG_NAME_TWICE ? "out" : "t", &d)))
            goto done;
    }
    lmb_header hdr;
    lmb_header_init(&hdr);
    hdr.grid_x = bug == BUG_GRID ? 33 : 8;
    hdr.grid_y = 8;
    hdr.l1_size = 1 << 20;
    hdr.dram_banks = 12;
    hdr.dram_bank_size = 1 << 30;
    if ((st = lmb_writer_finish(w, &hdr))) goto done;
    st = lmb_writer_to_memory(w, out, out_size);
done:
    lmb_writer_destroy(w);
    return st;
}

static lm_status check(enum bug bug) {
    void *d;
    size_t n;
    lm_status st = build(bug, &d, &n);
    if (st) return st;
    st = lmb_verify(d, n, NULL, NULL);
    if (!st) {
        lmb_semantic_options opts;
        lmb_semantic_options_init(&opts);
        opts.kernel_map = test_map;
        opts.memory_map = (lmb_memory_map){32, 16, 0x10000, 2};
        st = lmb_verify_semantics(d, n, &opts, NULL);
    }
    free(d);
    return st;
}

static void test_valid_workload(void) {
    CHECK_OK(check(BUG_NONE));
}

static void test_ids(void) {
    CHECK_FAILS(
        check(BUG_UNDEFINED_BUFFER), LM_ERR_INVALID_FILE,
        "commands[1] (EnqueueWriteBuffer).buffer_id: buffer 5 is used before it is defined");
    CHECK_FAILS(check(BUG_BUFFER_TWICE), LM_ERR_INVALID_FILE,
                "commands[1] (CreateBuffer).buffer_id: buffer 1 is defined twice");
    CHECK_FAILS(check(BUG_KERNEL_OF_OTHER_PROGRAM), LM_ERR_INVALID_FILE,
                "commands[5] (SetRuntimeArgs).kernel_id: kernel 1 belongs to program 1, not 2");
    CHECK_FAILS(check(BUG_USE_AFTER_RELEASE), LM_ERR_INVALID_FILE,
                "commands[13] (EnqueueProgram).program_id: program 1 is used after its release");
    CHECK_FAILS(check(BUG_REPLAY_UNKNOWN_TRACE), LM_ERR_INVALID_FILE,
                "commands[11] (ReplayTrace).trace_id: trace 5 is used before it is defined");
    CHECK_FAILS(check(BUG_NAME_UNKNOWN_BUFFER), LM_ERR_INVALID_FILE,
                "buffer_names[0]: buffer 9 is never created");
}

static void test_limits(void) {
    CHECK_FAILS(
        check(BUG_CORE_OUTSIDE_GRID), LM_ERR_INVALID_FILE,
        "commands[4] (CreateKernel).cores[0]: core range (0,0)-(8,7) is outside the 8x8 grid");
    CHECK_FAILS(check(BUG_CB_INDEX), LM_ERR_INVALID_FILE,
                "commands[6] (CreateCircularBuffer).formats[1]: CB index 32 (must be < 32)");
    CHECK_FAILS(check(BUG_TOO_MANY_ARGS), LM_ERR_INVALID_FILE,
                "commands[5] (SetRuntimeArgs).args: 342 runtime args (limit 341)");
    CHECK_FAILS(check(BUG_WRITE_TOO_BIG), LM_ERR_INVALID_FILE,
                "commands[1] (EnqueueWriteBuffer).data: 4096 bytes for buffer 1 of 2048 bytes");
    CHECK_FAILS(check(BUG_GRID), LM_ERR_INVALID_FILE, "system: grid 33x8");
    CHECK_FAILS(check(BUG_SEMAPHORE_ID), LM_ERR_INVALID_FILE,
                "commands[15] (CreateSemaphore).semaphore_id: semaphore 16 is beyond the 16 "
                "semaphores of a core");
    CHECK_FAILS(check(BUG_TOO_MANY_RANGES), LM_ERR_INVALID_FILE,
                "commands[15] (CreateSemaphore).cores: 17 core ranges (at most 16)");
    CHECK_FAILS(check(BUG_LABEL_LONG), LM_ERR_INVALID_FILE,
                "commands[7] (EnqueueProgram).label: the label is longer than 1024 bytes");
    CHECK_FAILS(check(BUG_LABEL_LINE_BREAK), LM_ERR_INVALID_FILE,
                "commands[7] (EnqueueProgram).label: the label is not one line of printable "
                "UTF-8 (a control character or a malformed byte)");
}

/* Buffers must fit the descriptor's banks where they were recorded, never
 * overlap one alive at the same time, and be written and compared whole. */
static void test_buffers(void) {
    CHECK_FAILS(check(BUG_GOLDEN_TOO_SMALL), LM_ERR_INVALID_FILE,
                "commands[16] (CompareToGolden).golden: 1024 bytes for buffer 1 of 2048 bytes");
    CHECK_FAILS(check(BUG_BUFFER_BEYOND_BANK), LM_ERR_INVALID_FILE,
                "commands[17] (CreateBuffer).size: DRAM buffer of 12884901888 bytes in pages of "
                "1048576 at 0x400 does not fit [0x0, 0x40000000) of its 12 banks");
    CHECK_FAILS(check(BUG_BUFFERS_OVERLAP), LM_ERR_INVALID_FILE,
                "commands[17] (CreateBuffer).address: DRAM buffer 2 at [0x3e0, 0x7e0) of each bank "
                "overlaps buffer 1 at [0x0, 0x400), which is still alive");
    CHECK_FAILS(check(BUG_L1_IN_RESERVED), LM_ERR_INVALID_FILE,
                "commands[18] (CreateBuffer).size: L1 buffer of 524288 bytes in pages of 8192 at "
                "0x8000 does not fit [0x10000, 0x100000) of its 64 banks");
    CHECK_FAILS(check(BUG_QUEUE), LM_ERR_INVALID_FILE,
                "commands[16] (CompareToGolden).cq_id: command queue 2 (the device has 2)");
    CHECK_FAILS(check(BUG_GLOBAL_CB_IN_DRAM), LM_ERR_INVALID_FILE,
                "commands[19] (CreateCircularBuffer).global_buffer_id: buffer 2 is in DRAM");
    CHECK_FAILS(check(BUG_GLOBAL_CB_TOO_SMALL), LM_ERR_INVALID_FILE,
                "buffer 3 holds 8192 bytes per core, the circular buffer needs 12288");
}

static void test_shards(void) {
    CHECK_FAILS(check(BUG_DRAM_SHARD_BANK), LM_ERR_INVALID_FILE,
                "commands[20] (CreateBuffer).shard: shard.cores range 0 (0,0)-(12,0) is empty or "
                "outside the 12x1 grid");
    /* A shard's room in each bank: two pages from 0x600 reach into buffer 2. */
    CHECK_FAILS(check(BUG_DRAM_SHARD_OVERLAP), LM_ERR_INVALID_FILE,
                "commands[20] (CreateBuffer).address: DRAM buffer 4 at [0x600, 0xe00) of each bank "
                "overlaps buffer 2 at [0x400, 0x800), which is still alive");
    CHECK_FAILS(check(BUG_SHARD_NO_SPEC), LM_ERR_INVALID_FILE,
                "commands[20] (CreateBuffer).shard: no shard spec");
    CHECK_FAILS(check(BUG_SHARD_SHAPE), LM_ERR_INVALID_FILE,
                "shard.tensor_height x tensor_width = 23x1 pages, the buffer has 24");
}

static void test_names(void) {
    CHECK_FAILS(check(BUG_NAME_ROLE), LM_ERR_INVALID_FILE,
                "buffer_names[1]: role 0 is not Input, Output or InputOutput");
    CHECK_FAILS(check(BUG_NAME_SHAPE), LM_ERR_INVALID_FILE,
                "buffer_names[1]: shape and format give 512000 bytes, the buffer has 524288");
    CHECK_FAILS(check(BUG_NAME_SHAPE_OVERFLOW), LM_ERR_INVALID_FILE,
                "buffer_names[1]: the shape overflows at dimension 1");
    CHECK_OK(check(NAME_EMPTY));
    CHECK_FAILS(check(BUG_NAME_SCALAR_SIZE), LM_ERR_INVALID_FILE,
                "buffer_names[1]: a scalar of Float32 is 4 bytes, the buffer has 524288");
    CHECK_FAILS(check(BUG_NAME_SCALAR_SHAPE), LM_ERR_INVALID_FILE,
                "buffer_names[1]: a scalar has no shape, the name records rank 2");
    CHECK_FAILS(check(BUG_NAME_TWICE), LM_ERR_INVALID_FILE,
                "buffer_names[1]: name \"out\" is used twice");
    /* Element types: only the pairs the schema lists; unknown values are a
     * structural error. */
    CHECK_FAILS(check(BUG_NAME_ELEMENT_TYPE), LM_ERR_INVALID_FILE,
                "invalid binary: buffer_names[1]: element type Int64 needs data format Int32, "
                "the name records Float32");
    CHECK_FAILS(check(BUG_NAME_ELEMENT_TYPE_NO_FORMAT), LM_ERR_INVALID_FILE,
                "buffer_names[0]: element type Bool needs data format Int32 or UInt32, the name "
                "records none");
    CHECK_FAILS(check(BUG_NAME_ELEMENT_TYPE_UNKNOWN), LM_ERR_INVALID_FILE,
                "buffer_names[1].element_type: value 10 (largest defined 9)");
}

static void test_kernel_elfs(void) {
    CHECK_FAILS(check(BUG_ELF_MACHINE), LM_ERR_INVALID_FILE,
                "kernel_binaries[0]: not a RISC-V ELF (e_machine 62)");
    CHECK_FAILS(check(BUG_ELF_SEGMENT), LM_ERR_INVALID_FILE,
                "kernel_binaries[0]: segment 0: code [0x3ffffff0, +0x40) outside [0x40000000");
    uint8_t e[256];
    make_elf(e, 0x40000000u, 0x20000000u, 243);
    CHECK_OK(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"));
    CHECK_FAILS(lmb_check_kernel_elf(e, 40, &test_map, "k"), LM_ERR_INVALID_FILE, "k: not an ELF");
    fb_wr_u16(e + 44, 200); /* program headers past the end */
    CHECK_FAILS(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"), LM_ERR_INVALID_FILE,
                "program headers [52, +6400) outside the 256-byte file");
    make_elf(e, 0x40000000u, 0x20000000u, 243);
    fb_wr_u32(e + 52 + 4, 250); /* code bytes past the end */
    CHECK_FAILS(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"), LM_ERR_INVALID_FILE,
                "segment 0: file bytes [250, +64) outside the file");
    make_elf(e, 0x40000000u, 0x20000000u, 243);
    fb_wr_u32(e + 24, 0x40001000u);
    CHECK_FAILS(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"), LM_ERR_INVALID_FILE,
                "entry point 0x40001000 is not in an executable segment");
    make_elf(e, 0x40000000u, 0x2001f800u, 243); /* 4 KiB of data, 2 KiB past the end */
    CHECK_FAILS(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"), LM_ERR_INVALID_FILE,
                "segment 1: writable [0x2001f800, +0x1000) outside");
    e[4] = 2;
    CHECK_FAILS(lmb_check_kernel_elf(e, sizeof e, &test_map, "k"), LM_ERR_INVALID_FILE, "32-bit");
}

int main(void) {
    TEST_RUN(test_valid_workload);
    TEST_RUN(test_ids);
    TEST_RUN(test_limits);
    TEST_RUN(test_buffers);
    TEST_RUN(test_shards);
    TEST_RUN(test_names);
    TEST_RUN(test_kernel_elfs);
    return test_summary();
}
