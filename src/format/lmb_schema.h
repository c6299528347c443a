/* Typed access to the Light Metal binary: schema/lightmetal.fbs, in C.
 *
 * Why hand-written lists instead of generated code: the tables below are the
 * schema restated as X-macro lists (one line per field: table, name, field
 * id, kind, type argument, required). Everything typed is expanded from those
 * lists — field ids, verifier descriptors, the specialised verifiers of
 * lmb_verify.c, zero-copy readers and builder calls — so within C nothing
 * can disagree. Agreement with the .fbs is
 * enforced by tests/format: they compile the schema with Debian's
 * `flatc --bfbs` and compare every table, field (name, id, type, required),
 * struct (size, alignment, field offsets), enum value and union member with
 * these lists, in both directions, so a field added to one side only fails
 * the build's tests. That keeps the build free of a code generator while
 * still making drift impossible to miss.
 *
 * Conventions: all scalar defaults are zero (the builder omits zero scalars
 * and readers return 0 for absent fields). Readers are valid only on a buffer
 * verified with lmb_verify() (format/lmb.h); they never fail.
 *
 * Names: lmb_<Table>_<field>(t) reads a field, lmb_<Table>_add_<field>(b, v)
 * adds one between lmb_<Table>_start(b) and lmb_<Table>_end(b);
 * lmb_<Struct> is a decoded struct with lmb_<Struct>_read/_write.
 */
#ifndef LM_FORMAT_LMB_SCHEMA_H
#define LM_FORMAT_LMB_SCHEMA_H

#include "format/fb.h"

#define LMB_FILE_IDENTIFIER "LMB1"

/* ------------------------------------------------------------------ enums */

#define LMB_ENUM_BufferType(E) E(BufferType, Invalid, 0) E(BufferType, DRAM, 1) E(BufferType, L1, 2)
#define LMB_ENUM_BufferLayout(E)                                                                   \
    E(BufferLayout, Invalid, 0)                                                                    \
    E(BufferLayout, Interleaved, 1)                                                                \
    E(BufferLayout, HeightSharded, 2)                                                              \
    E(BufferLayout, WidthSharded, 3) E(BufferLayout, BlockSharded, 4)
#define LMB_ENUM_DataFormat(E)                                                                     \
    E(DataFormat, Invalid, 0)                                                                      \
    E(DataFormat, Float32, 1)                                                                      \
    E(DataFormat, Float16_b, 2)                                                                    \
    E(DataFormat, Bfp8_b, 3)                                                                       \
    E(DataFormat, UInt32, 4)                                                                       \
    E(DataFormat, UInt16, 5)                                                                       \
    E(DataFormat, UInt8, 6)                                                                        \
    E(DataFormat, Int32, 7)
#define LMB_ENUM_Processor(E)                                                                      \
    E(Processor, Invalid, 0) E(Processor, DM0, 1) E(Processor, DM1, 2) E(Processor, Compute, 3)
#define LMB_ENUM_NocIndex(E) E(NocIndex, Invalid, 0) E(NocIndex, Noc0, 1) E(NocIndex, Noc1, 2)
#define LMB_ENUM_MathFidelity(E)                                                                   \
    E(MathFidelity, Invalid, 0)                                                                    \
    E(MathFidelity, LoFi, 1)                                                                       \
    E(MathFidelity, HiFi2, 2)                                                                      \
    E(MathFidelity, HiFi3, 3)                                                                      \
    E(MathFidelity, HiFi4, 4)
#define LMB_ENUM_BufferRole(E)                                                                     \
    E(BufferRole, Invalid, 0)                                                                      \
    E(BufferRole, Input, 1) E(BufferRole, Output, 2) E(BufferRole, InputOutput, 3)
#define LMB_ENUM_HashAlgorithm(E) E(HashAlgorithm, Invalid, 0) E(HashAlgorithm, XXH3_64_Pieces, 1)
#define LMB_ENUM_ElementType(E)                                                                    \
    E(ElementType, Invalid, 0)                                                                     \
    E(ElementType, Float64, 1)                                                                     \
    E(ElementType, Float16, 2)                                                                     \
    E(ElementType, Int64, 3)                                                                       \
    E(ElementType, Int16, 4)                                                                       \
    E(ElementType, Int8, 5)                                                                        \
    E(ElementType, UInt16, 6)                                                                      \
    E(ElementType, UInt8, 7) E(ElementType, Bool, 8) E(ElementType, UInt64, 9)

#define LMB_ENUMS(X)                                                                               \
    X(BufferType)                                                                                  \
    X(BufferLayout)                                                                                \
    X(DataFormat)                                                                                  \
    X(Processor) X(NocIndex) X(MathFidelity) X(BufferRole) X(HashAlgorithm) X(ElementType)

#define LMB_ENUM_VALUE_(En, name, value) LMB_##En##_##name = value,
#define LMB_ENUM_DECL_(En) typedef enum lmb_##En{LMB_ENUM_##En(LMB_ENUM_VALUE_)} lmb_##En;
LMB_ENUMS(LMB_ENUM_DECL_)
/* Largest value of each enum (the enums are dense, so it is the last one). */
#define LMB_BufferType_MAX LMB_BufferType_L1
#define LMB_BufferLayout_MAX LMB_BufferLayout_BlockSharded
#define LMB_DataFormat_MAX LMB_DataFormat_Int32
#define LMB_Processor_MAX LMB_Processor_Compute
#define LMB_NocIndex_MAX LMB_NocIndex_Noc1
#define LMB_MathFidelity_MAX LMB_MathFidelity_HiFi4
#define LMB_BufferRole_MAX LMB_BufferRole_InputOutput
#define LMB_HashAlgorithm_MAX LMB_HashAlgorithm_XXH3_64_Pieces
#define LMB_ElementType_MAX LMB_ElementType_UInt64

/* Name of an enum value ("DRAM"), or NULL when undefined. */
const char *lmb_enum_name(const char *enum_name, unsigned value);

/* ---------------------------------------------------------------- structs */

/* S(name, size, align) */
#define LMB_STRUCTS(S)                                                                             \
    S(Version, 6, 2)                                                                               \
    S(CoreCoord, 4, 2) S(CoreRange, 8, 2) S(BlobRef, 24, 8) S(CBFormat, 8, 4) S(Integrity, 16, 8)

/* X(struct, field, byte offset, kind, argument); kinds U8 U16 U32 U64 ENUM STRUCT */
#define LMB_STRUCT_Version(X)                                                                      \
    X(Version, major, 0, U16, _) X(Version, minor, 2, U16, _) X(Version, patch, 4, U16, _)
#define LMB_STRUCT_CoreCoord(X) X(CoreCoord, x, 0, U16, _) X(CoreCoord, y, 2, U16, _)
#define LMB_STRUCT_CoreRange(X)                                                                    \
    X(CoreRange, start, 0, STRUCT, CoreCoord) X(CoreRange, end, 4, STRUCT, CoreCoord)
#define LMB_STRUCT_BlobRef(X)                                                                      \
    X(BlobRef, offset, 0, U64, _) X(BlobRef, size, 8, U64, _) X(BlobRef, hash, 16, U64, _)
#define LMB_STRUCT_CBFormat(X)                                                                     \
    X(CBFormat, index, 0, U8, _)                                                                   \
    X(CBFormat, format, 1, ENUM, DataFormat) X(CBFormat, page_size, 4, U32, _)
#define LMB_STRUCT_Integrity(X)                                                                    \
    X(Integrity, algorithm, 0, ENUM, HashAlgorithm) X(Integrity, table_digest, 8, U64, _)

/* Structural checks beyond size and alignment, per struct (NULL: none).
 * BlobRef ranges are checked against the data region (lmb_verify.c). */
bool lmb_blob_ref_check(fb_verifier *v, const uint8_t *p);
#define LMB_STRUCT_CHECK_Version NULL
#define LMB_STRUCT_CHECK_CoreCoord NULL
#define LMB_STRUCT_CHECK_CoreRange NULL
#define LMB_STRUCT_CHECK_BlobRef lmb_blob_ref_check
#define LMB_STRUCT_CHECK_CBFormat NULL
#define LMB_STRUCT_CHECK_Integrity NULL
/* 1 where the check above is not NULL (for use in constant expressions). */
#define LMB_STRUCT_CHECKED_Version 0
#define LMB_STRUCT_CHECKED_CoreCoord 0
#define LMB_STRUCT_CHECKED_CoreRange 0
#define LMB_STRUCT_CHECKED_BlobRef 1
#define LMB_STRUCT_CHECKED_CBFormat 0
#define LMB_STRUCT_CHECKED_Integrity 0

#define LMB_SCTYPE_U8(arg) uint8_t
#define LMB_SCTYPE_U16(arg) uint16_t
#define LMB_SCTYPE_U32(arg) uint32_t
#define LMB_SCTYPE_U64(arg) uint64_t
#define LMB_SCTYPE_ENUM(arg) uint8_t
#define LMB_SCTYPE_STRUCT(arg) lmb_##arg
#define LMB_SMEMBER_(S, f, off, K, arg) LMB_SCTYPE_##K(arg) f;

#define LMB_SREAD_U8(p) (p)[0]
#define LMB_SREAD_U16(p) fb_rd_u16(p)
#define LMB_SREAD_U32(p) fb_rd_u32(p)
#define LMB_SREAD_U64(p) fb_rd_u64(p)
#define LMB_SREAD_ENUM(p) (p)[0]
#define LMB_SREAD_(S, f, off, K, arg) LMB_SREAD2_##K(s.f, p + off, arg);
#define LMB_SREAD2_U8(dst, p, arg) dst = LMB_SREAD_U8(p)
#define LMB_SREAD2_U16(dst, p, arg) dst = LMB_SREAD_U16(p)
#define LMB_SREAD2_U32(dst, p, arg) dst = LMB_SREAD_U32(p)
#define LMB_SREAD2_U64(dst, p, arg) dst = LMB_SREAD_U64(p)
#define LMB_SREAD2_ENUM(dst, p, arg) dst = LMB_SREAD_ENUM(p)
#define LMB_SREAD2_STRUCT(dst, p, arg) dst = lmb_##arg##_read(p)

#define LMB_SWRITE_(S, f, off, K, arg) LMB_SWRITE2_##K(p + off, s->f, arg);
#define LMB_SWRITE2_U8(p, v, arg) (p)[0] = (v)
#define LMB_SWRITE2_U16(p, v, arg) fb_wr_u16(p, v)
#define LMB_SWRITE2_U32(p, v, arg) fb_wr_u32(p, v)
#define LMB_SWRITE2_U64(p, v, arg) fb_wr_u64(p, v)
#define LMB_SWRITE2_ENUM(p, v, arg) (p)[0] = (v)
#define LMB_SWRITE2_STRUCT(p, v, arg) lmb_##arg##_write(p, &(v))

#define LMB_STRUCT_DECL_(S, size, align)                                                           \
    enum { LMB_SIZE_##S = size, LMB_ALIGN_##S = align };                                           \
    typedef struct lmb_##S {                                                                       \
        LMB_STRUCT_##S(LMB_SMEMBER_)                                                               \
    } lmb_##S;                                                                                     \
    static inline lmb_##S lmb_##S##_read(const uint8_t *p) {                                       \
        lmb_##S s;                                                                                 \
        LMB_STRUCT_##S(LMB_SREAD_) return s;                                                       \
    }                                                                                              \
    /* Writes all `size` bytes, padding included (as zeros). */                                    \
    static inline void lmb_##S##_write(uint8_t *p, const lmb_##S *s) {                             \
        memset(p, 0, size);                                                                        \
        LMB_STRUCT_##S(LMB_SWRITE_)                                                                \
    }                                                                                              \
    extern const fb_struct_desc lmb_struct_##S;                                                    \
    static inline lmb_##S lmb_vec_##S##_at(fb_vec v, uint32_t i) {                                 \
        return lmb_##S##_read(fb_vec_struct(v, i, size));                                          \
    }                                                                                              \
    /* Adds a vector of decoded structs. */                                                        \
    static inline fb_ref lmb_vec_##S##_create(fb_builder *b, const lmb_##S *items, size_t n) {     \
        fb_ref ref;                                                                                \
        uint8_t *p = fb_alloc_vector(b, n, size, align, &ref);                                     \
        if (p)                                                                                     \
            for (size_t i = 0; i < n; i++)                                                         \
                lmb_##S##_write(p + i * (size), &items[i]);                                        \
        return ref;                                                                                \
    }
LMB_STRUCTS(LMB_STRUCT_DECL_)

/* ----------------------------------------------------------------- tables */

/* X(table, field, id, kind, argument, required). Kinds: U8 U16 U32 U64 BOOL,
 * ENUM(enum), STRUCT(struct), STRING, TABLE(table), VEC_U32, VEC_ENUM(enum),
 * VEC_STRUCT(struct), VEC_TABLE(table), UNION(union) — a union's value has
 * the listed id and its type field the id before it, as in FlatBuffers. */
#define LMB_TABLE_SystemDescriptor(X)                                                              \
    X(SystemDescriptor, grid_x, 0, U16, _, 0)                                                      \
    X(SystemDescriptor, grid_y, 1, U16, _, 0)                                                      \
    X(SystemDescriptor, l1_size, 2, U32, _, 0)                                                     \
    X(SystemDescriptor, dram_banks, 3, U16, _, 0)                                                  \
    X(SystemDescriptor, dram_bank_size, 4, U64, _, 0)                                              \
    X(SystemDescriptor, data_formats, 5, VEC_ENUM, DataFormat, 0)                                  \
    X(SystemDescriptor, num_command_queues, 6, U8, _, 0)                                           \
    X(SystemDescriptor, watchdog_instructions, 7, U64, _, 0)                                       \
    X(SystemDescriptor, trace_region_size, 8, U64, _, 0)                                           \
    X(SystemDescriptor, strict_protocol, 9, BOOL, _, 0)
#define LMB_TABLE_ShardSpec(X)                                                                     \
    X(ShardSpec, cores, 0, VEC_STRUCT, CoreRange, 1)                                               \
    X(ShardSpec, shard_height, 1, U32, _, 0)                                                       \
    X(ShardSpec, shard_width, 2, U32, _, 0)                                                        \
    X(ShardSpec, tensor_height, 3, U32, _, 0)                                                      \
    X(ShardSpec, tensor_width, 4, U32, _, 0)                                                       \
    X(ShardSpec, col_major, 5, BOOL, _, 0)
#define LMB_TABLE_CreateBuffer(X)                                                                  \
    X(CreateBuffer, buffer_id, 0, U32, _, 0)                                                       \
    X(CreateBuffer, type, 1, ENUM, BufferType, 0)                                                  \
    X(CreateBuffer, layout, 2, ENUM, BufferLayout, 0)                                              \
    X(CreateBuffer, size, 3, U64, _, 0)                                                            \
    X(CreateBuffer, page_size, 4, U64, _, 0)                                                       \
    X(CreateBuffer, address, 5, U64, _, 0)                                                         \
    X(CreateBuffer, shard, 6, TABLE, ShardSpec, 0)
#define LMB_TABLE_DeallocateBuffer(X) X(DeallocateBuffer, buffer_id, 0, U32, _, 0)
#define LMB_TABLE_EnqueueWriteBuffer(X)                                                            \
    X(EnqueueWriteBuffer, cq_id, 0, U8, _, 0)                                                      \
    X(EnqueueWriteBuffer, buffer_id, 1, U32, _, 0)                                                 \
    X(EnqueueWriteBuffer, data, 2, STRUCT, BlobRef, 1)                                             \
    X(EnqueueWriteBuffer, blocking, 3, BOOL, _, 0)                                                 \
    X(EnqueueWriteBuffer, offset, 4, U64, _, 0)                                                    \
    X(EnqueueWriteBuffer, region, 5, BOOL, _, 0)
#define LMB_TABLE_EnqueueReadBuffer(X)                                                             \
    X(EnqueueReadBuffer, cq_id, 0, U8, _, 0)                                                       \
    X(EnqueueReadBuffer, buffer_id, 1, U32, _, 0)                                                  \
    X(EnqueueReadBuffer, blocking, 2, BOOL, _, 0)                                                  \
    X(EnqueueReadBuffer, offset, 3, U64, _, 0)                                                     \
    X(EnqueueReadBuffer, size, 4, U64, _, 0)
#define LMB_TABLE_FinishQueue(X) X(FinishQueue, cq_id, 0, U8, _, 0)
#define LMB_TABLE_CreateProgram(X) X(CreateProgram, program_id, 0, U32, _, 0)
#define LMB_TABLE_ReleaseProgram(X) X(ReleaseProgram, program_id, 0, U32, _, 0)
#define LMB_TABLE_KernelDefine(X)                                                                  \
    X(KernelDefine, name, 0, STRING, _, 1) X(KernelDefine, value, 1, STRING, _, 0)
#define LMB_TABLE_NamedCompileArg(X)                                                               \
    X(NamedCompileArg, name, 0, STRING, _, 1) X(NamedCompileArg, value, 1, U32, _, 0)
#define LMB_TABLE_KernelConfig(X)                                                                  \
    X(KernelConfig, processor, 0, ENUM, Processor, 0)                                              \
    X(KernelConfig, noc, 1, ENUM, NocIndex, 0)                                                     \
    X(KernelConfig, math_fidelity, 2, ENUM, MathFidelity, 0)                                       \
    X(KernelConfig, fp32_dest_acc_en, 3, BOOL, _, 0)                                               \
    X(KernelConfig, math_approx_mode, 4, BOOL, _, 0)                                               \
    X(KernelConfig, compile_args, 5, VEC_U32, _, 0)                                                \
    X(KernelConfig, defines, 6, VEC_TABLE, KernelDefine, 0)                                        \
    X(KernelConfig, named_compile_args, 7, VEC_TABLE, NamedCompileArg, 0)
#define LMB_TABLE_CreateKernel(X)                                                                  \
    X(CreateKernel, kernel_id, 0, U32, _, 0)                                                       \
    X(CreateKernel, program_id, 1, U32, _, 0)                                                      \
    X(CreateKernel, binary_hash, 2, U64, _, 0)                                                     \
    X(CreateKernel, cores, 3, VEC_STRUCT, CoreRange, 1)                                            \
    X(CreateKernel, config, 4, TABLE, KernelConfig, 1)                                             \
    X(CreateKernel, name, 5, STRING, _, 0)                                                         \
    X(CreateKernel, source, 6, STRING, _, 0)
#define LMB_TABLE_SetRuntimeArgs(X)                                                                \
    X(SetRuntimeArgs, program_id, 0, U32, _, 0)                                                    \
    X(SetRuntimeArgs, kernel_id, 1, U32, _, 0)                                                     \
    X(SetRuntimeArgs, core, 2, STRUCT, CoreCoord, 1)                                               \
    X(SetRuntimeArgs, args, 3, VEC_U32, _, 0)
#define LMB_TABLE_CoreArgs(X)                                                                      \
    X(CoreArgs, core, 0, STRUCT, CoreCoord, 1) X(CoreArgs, args, 1, VEC_U32, _, 0)
#define LMB_TABLE_SetRuntimeArgsMulti(X)                                                           \
    X(SetRuntimeArgsMulti, program_id, 0, U32, _, 0)                                               \
    X(SetRuntimeArgsMulti, kernel_id, 1, U32, _, 0)                                                \
    X(SetRuntimeArgsMulti, per_core, 2, VEC_TABLE, CoreArgs, 1)
#define LMB_TABLE_SetCommonRuntimeArgs(X)                                                          \
    X(SetCommonRuntimeArgs, program_id, 0, U32, _, 0)                                              \
    X(SetCommonRuntimeArgs, kernel_id, 1, U32, _, 0)                                               \
    X(SetCommonRuntimeArgs, args, 2, VEC_U32, _, 0)
#define LMB_TABLE_CreateCircularBuffer(X)                                                          \
    X(CreateCircularBuffer, cb_id, 0, U32, _, 0)                                                   \
    X(CreateCircularBuffer, program_id, 1, U32, _, 0)                                              \
    X(CreateCircularBuffer, cores, 2, VEC_STRUCT, CoreRange, 1)                                    \
    X(CreateCircularBuffer, total_size, 3, U32, _, 0)                                              \
    X(CreateCircularBuffer, formats, 4, VEC_STRUCT, CBFormat, 1)                                   \
    X(CreateCircularBuffer, global_buffer_id, 5, U32, _, 0)
#define LMB_TABLE_CreateSemaphore(X)                                                               \
    X(CreateSemaphore, semaphore_id, 0, U32, _, 0)                                                 \
    X(CreateSemaphore, program_id, 1, U32, _, 0)                                                   \
    X(CreateSemaphore, cores, 2, VEC_STRUCT, CoreRange, 1)                                         \
    X(CreateSemaphore, initial_value, 3, U32, _, 0)
#define LMB_TABLE_EnqueueProgram(X)                                                                \
    X(EnqueueProgram, cq_id, 0, U8, _, 0)                                                          \
    X(EnqueueProgram, program_id, 1, U32, _, 0)                                                    \
    X(EnqueueProgram, blocking, 2, BOOL, _, 0)                                                     \
    X(EnqueueProgram, label, 3, STRING, _, 0)
#define LMB_TABLE_BeginTraceCapture(X)                                                             \
    X(BeginTraceCapture, cq_id, 0, U8, _, 0) X(BeginTraceCapture, trace_id, 1, U32, _, 0)
#define LMB_TABLE_EndTraceCapture(X)                                                               \
    X(EndTraceCapture, cq_id, 0, U8, _, 0) X(EndTraceCapture, trace_id, 1, U32, _, 0)
#define LMB_TABLE_LoadTrace(X) X(LoadTrace, cq_id, 0, U8, _, 0) X(LoadTrace, trace_id, 1, U32, _, 0)
#define LMB_TABLE_ReplayTrace(X)                                                                   \
    X(ReplayTrace, cq_id, 0, U8, _, 0)                                                             \
    X(ReplayTrace, trace_id, 1, U32, _, 0)                                                         \
    X(ReplayTrace, blocking, 2, BOOL, _, 0)
#define LMB_TABLE_ReleaseTrace(X) X(ReleaseTrace, trace_id, 0, U32, _, 0)
#define LMB_TABLE_CompareToGolden(X)                                                               \
    X(CompareToGolden, cq_id, 0, U8, _, 0)                                                         \
    X(CompareToGolden, buffer_id, 1, U32, _, 0)                                                    \
    X(CompareToGolden, golden, 2, STRUCT, BlobRef, 1)
#define LMB_TABLE_WriteDeviceL1(X)                                                                 \
    X(WriteDeviceL1, cq_id, 0, U8, _, 0)                                                           \
    X(WriteDeviceL1, core, 1, STRUCT, CoreCoord, 1)                                                \
    X(WriteDeviceL1, address, 2, U64, _, 0)                                                        \
    X(WriteDeviceL1, data, 3, STRUCT, BlobRef, 1)
#define LMB_TABLE_EnqueueRecordEvent(X)                                                            \
    X(EnqueueRecordEvent, cq_id, 0, U8, _, 0) X(EnqueueRecordEvent, event_id, 1, U32, _, 0)
#define LMB_TABLE_EnqueueWaitForEvent(X)                                                           \
    X(EnqueueWaitForEvent, cq_id, 0, U8, _, 0) X(EnqueueWaitForEvent, event_id, 1, U32, _, 0)
#define LMB_TABLE_EventSynchronize(X) X(EventSynchronize, event_id, 0, U32, _, 0)
#define LMB_TABLE_UpdateCircularBuffer(X)                                                          \
    X(UpdateCircularBuffer, cb_id, 0, U32, _, 0)                                                   \
    X(UpdateCircularBuffer, program_id, 1, U32, _, 0)                                              \
    X(UpdateCircularBuffer, total_size, 2, U32, _, 0)                                              \
    X(UpdateCircularBuffer, formats, 3, VEC_STRUCT, CBFormat, 1)                                   \
    X(UpdateCircularBuffer, global_buffer_id, 4, U32, _, 0)
#define LMB_TABLE_CommandEntry(X) X(CommandEntry, cmd, 1, UNION, Command, 1)
#define LMB_TABLE_TraceDescriptor(X)                                                               \
    X(TraceDescriptor, trace_id, 0, U32, _, 0) X(TraceDescriptor, data, 1, STRUCT, BlobRef, 1)
#define LMB_TABLE_BufferName(X)                                                                    \
    X(BufferName, buffer_id, 0, U32, _, 0)                                                         \
    X(BufferName, role, 1, ENUM, BufferRole, 0)                                                    \
    X(BufferName, name, 2, STRING, _, 1)                                                           \
    X(BufferName, format, 3, ENUM, DataFormat, 0)                                                  \
    X(BufferName, shape, 4, VEC_U32, _, 0)                                                         \
    X(BufferName, element_type, 5, ENUM, ElementType, 0)                                           \
    X(BufferName, scalar, 6, BOOL, _, 0)
#define LMB_TABLE_LightMetalBinary(X)                                                              \
    X(LightMetalBinary, format_version, 0, STRUCT, Version, 1)                                     \
    X(LightMetalBinary, producer, 1, STRING, _, 0)                                                 \
    X(LightMetalBinary, producer_version, 2, STRUCT, Version, 0)                                   \
    X(LightMetalBinary, system, 3, TABLE, SystemDescriptor, 1)                                     \
    X(LightMetalBinary, commands, 4, VEC_TABLE, CommandEntry, 1)                                   \
    X(LightMetalBinary, traces, 5, VEC_TABLE, TraceDescriptor, 0)                                  \
    X(LightMetalBinary, kernel_binaries, 6, VEC_STRUCT, BlobRef, 0)                                \
    X(LightMetalBinary, buffer_names, 7, VEC_TABLE, BufferName, 0)                                 \
    X(LightMetalBinary, data_offset, 8, U64, _, 0)                                                 \
    X(LightMetalBinary, data_size, 9, U64, _, 0)                                                   \
    X(LightMetalBinary, integrity, 10, STRUCT, Integrity, 1)

/* The members of union Command, with their type values. */
#define LMB_UNION_Command(M)                                                                       \
    M(Command, CreateBuffer, 1)                                                                    \
    M(Command, DeallocateBuffer, 2)                                                                \
    M(Command, EnqueueWriteBuffer, 3)                                                              \
    M(Command, EnqueueReadBuffer, 4)                                                               \
    M(Command, FinishQueue, 5)                                                                     \
    M(Command, CreateProgram, 6)                                                                   \
    M(Command, ReleaseProgram, 7)                                                                  \
    M(Command, CreateKernel, 8)                                                                    \
    M(Command, SetRuntimeArgs, 9)                                                                  \
    M(Command, SetRuntimeArgsMulti, 10)                                                            \
    M(Command, SetCommonRuntimeArgs, 11)                                                           \
    M(Command, CreateCircularBuffer, 12)                                                           \
    M(Command, CreateSemaphore, 13)                                                                \
    M(Command, EnqueueProgram, 14)                                                                 \
    M(Command, BeginTraceCapture, 15)                                                              \
    M(Command, EndTraceCapture, 16)                                                                \
    M(Command, LoadTrace, 17)                                                                      \
    M(Command, ReplayTrace, 18)                                                                    \
    M(Command, ReleaseTrace, 19)                                                                   \
    M(Command, CompareToGolden, 20)                                                                \
    M(Command, WriteDeviceL1, 21)                                                                  \
    M(Command, EnqueueRecordEvent, 22)                                                             \
    M(Command, EnqueueWaitForEvent, 23)                                                            \
    M(Command, EventSynchronize, 24)                                                               \
    M(Command, UpdateCircularBuffer, 25)
#define LMB_UNIONS(U) U(Command)
#define LMB_Command_COUNT 25

/* clang-format off */
#define LMB_TABLES(T) \
    T(SystemDescriptor) \
    T(ShardSpec) \
    T(CreateBuffer) \
    T(DeallocateBuffer) \
    T(EnqueueWriteBuffer) \
    T(EnqueueReadBuffer) \
    T(FinishQueue) \
    T(CreateProgram) \
    T(ReleaseProgram) \
    T(KernelDefine) \
    T(NamedCompileArg) \
    T(KernelConfig) \
    T(CreateKernel) \
    T(SetRuntimeArgs) \
    T(CoreArgs) \
    T(SetRuntimeArgsMulti) \
    T(SetCommonRuntimeArgs) \
    T(CreateCircularBuffer) \
    T(CreateSemaphore) \
    T(EnqueueProgram) \
    T(BeginTraceCapture) \
    T(EndTraceCapture) \
    T(LoadTrace) \
    T(ReplayTrace) \
    T(ReleaseTrace) \
    T(CompareToGolden) \
    T(WriteDeviceL1) \
    T(EnqueueRecordEvent) \
    T(EnqueueWaitForEvent) \
    T(EventSynchronize) \
    T(UpdateCircularBuffer) \
    T(CommandEntry) \
    T(TraceDescriptor) \
    T(BufferName) \
    T(LightMetalBinary)
/* clang-format on */

#define LMB_UNION_TYPE_(U, name, value) LMB_##U##_##name = value,
typedef enum lmb_Command { LMB_Command_NONE = 0, LMB_UNION_Command(LMB_UNION_TYPE_) } lmb_Command;

/* Member names of union Command: lmb_Command_names[type - 1]. */
extern const char *const lmb_Command_names[LMB_Command_COUNT];

/* Name of a Command type ("CreateBuffer"), or NULL when undefined. */
const char *lmb_command_name(unsigned type);

/* Per-kind expansions of one table field into its reader and builder call. */
#define LMB_ACCESS_(T, f, id, K, arg, req) LMB_ACC_##K(T, f, id, arg)
#define LMB_ACC_SCALAR_(T, f, id, ctype, get, add)                                                 \
    static inline ctype lmb_##T##_##f(fb_table t) {                                                \
        return (ctype)get(t, id);                                                                  \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, ctype v) {                                 \
        add(b, id, v);                                                                             \
    }
#define LMB_ACC_U8(T, f, id, arg) LMB_ACC_SCALAR_(T, f, id, uint8_t, fb_get_u8, fb_add_u8)
#define LMB_ACC_U16(T, f, id, arg) LMB_ACC_SCALAR_(T, f, id, uint16_t, fb_get_u16, fb_add_u16)
#define LMB_ACC_U32(T, f, id, arg) LMB_ACC_SCALAR_(T, f, id, uint32_t, fb_get_u32, fb_add_u32)
#define LMB_ACC_U64(T, f, id, arg) LMB_ACC_SCALAR_(T, f, id, uint64_t, fb_get_u64, fb_add_u64)
#define LMB_ACC_BOOL(T, f, id, arg)                                                                \
    static inline bool lmb_##T##_##f(fb_table t) {                                                 \
        return fb_get_bool(t, id);                                                                 \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, bool v) {                                  \
        fb_add_u8(b, id, v ? 1 : 0);                                                               \
    }
#define LMB_ACC_ENUM(T, f, id, arg)                                                                \
    static inline lmb_##arg lmb_##T##_##f(fb_table t) {                                            \
        return (lmb_##arg)fb_get_u8(t, id);                                                        \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, lmb_##arg v) {                             \
        fb_add_u8(b, id, (uint8_t)v);                                                              \
    }
#define LMB_ACC_STRUCT(T, f, id, arg)                                                              \
    static inline bool lmb_##T##_has_##f(fb_table t) {                                             \
        return fb_field_offset(t, id) != 0;                                                        \
    }                                                                                              \
    /* An absent struct reads as all zeros. */                                                     \
    static inline lmb_##arg lmb_##T##_##f(fb_table t) {                                            \
        const uint8_t *p = fb_get_struct(t, id);                                                   \
        if (p) return lmb_##arg##_read(p);                                                         \
        lmb_##arg z;                                                                               \
        memset(&z, 0, sizeof z);                                                                   \
        return z;                                                                                  \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, const lmb_##arg *v) {                      \
        uint8_t bytes[LMB_SIZE_##arg];                                                             \
        lmb_##arg##_write(bytes, v);                                                               \
        fb_add_struct(b, id, bytes, LMB_SIZE_##arg, LMB_ALIGN_##arg);                              \
    }
#define LMB_ACC_REF_(T, f, id, rtype, get)                                                         \
    static inline rtype lmb_##T##_##f(fb_table t) {                                                \
        return get(t, id);                                                                         \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, fb_ref r) {                                \
        fb_add_ref(b, id, r);                                                                      \
    }
#define LMB_ACC_STRING(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_str, fb_get_str)
#define LMB_ACC_TABLE(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_table, fb_get_table)
#define LMB_ACC_VEC_U32(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_vec, fb_get_vec)
#define LMB_ACC_VEC_ENUM(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_vec, fb_get_vec)
#define LMB_ACC_VEC_STRUCT(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_vec, fb_get_vec)
#define LMB_ACC_VEC_TABLE(T, f, id, arg) LMB_ACC_REF_(T, f, id, fb_vec, fb_get_vec)
#define LMB_ACC_UNION(T, f, id, arg)                                                               \
    static inline lmb_##arg lmb_##T##_##f##_type(fb_table t) {                                     \
        return (lmb_##arg)fb_get_u8(t, (id)-1);                                                    \
    }                                                                                              \
    static inline fb_table lmb_##T##_##f(fb_table t) {                                             \
        return fb_get_table(t, id);                                                                \
    }                                                                                              \
    static inline void lmb_##T##_add_##f(fb_builder *b, lmb_##arg type, fb_ref r) {                \
        fb_add_u8(b, (id)-1, (uint8_t)type);                                                       \
        fb_add_ref(b, id, r);                                                                      \
    }

/* Field ids, readers and builder calls, expanded per field. */
#define LMB_FIELD_ID_(T, f, id, K, arg, req) LMB_ID_##T##_##f = id,
#define LMB_TABLE_DECL_(T)                                                                         \
    enum { LMB_TABLE_##T(LMB_FIELD_ID_) };                                                         \
    extern const fb_table_desc lmb_desc_##T;                                                       \
    static inline void lmb_##T##_start(fb_builder *b) {                                            \
        fb_start_table(b);                                                                         \
    }                                                                                              \
    static inline fb_ref lmb_##T##_end(fb_builder *b) {                                            \
        return fb_end_table(b);                                                                    \
    }                                                                                              \
    LMB_TABLE_##T(LMB_ACCESS_)
LMB_TABLES(LMB_TABLE_DECL_)

#endif
