/* The contract between kernels and the simulated core: ecall numbers, the
 * reserved L1 layout the dispatcher fills before a launch, and NoC addresses.
 * Included by kernels (through the SDK headers) and by the simulator, so both
 * sides read the same numbers.
 */
#ifndef LM_KERNEL_ABI_H
#define LM_KERNEL_ABI_H

/* ---- ecalls: number in a7, arguments in a0..a6, result in a0 ---- */
#define LM_ECALL_EXIT 1  /* a0: exit code */
#define LM_ECALL_PRINT 2 /* a0: format, a1: argument words, a2: count */
/* NoC and semaphore calls. 16..20 and 24..27 use the NoC and are refused on
 * the compute processor (the chip's compute processors have no NoC access);
 * 21..23 touch only the core's own L1 and are allowed on every processor. */
#define LM_ECALL_NOC_READ 16       /* a0,a1: source NoC address (lo, hi), a2: L1 dst, a3: bytes */
#define LM_ECALL_NOC_WRITE 17      /* a0: L1 src, a1,a2: destination NoC address, a3: bytes */
#define LM_ECALL_NOC_MCAST 18      /* a0: L1 src, a1,a2: multicast address, a3: bytes, a4: dests */
#define LM_ECALL_NOC_BARRIER 19    /* a0: 0 reads, 1 writes (transfers complete at once) */
#define LM_ECALL_SEM_INC 20        /* a0,a1: NoC address of a semaphore, a2: increment */
#define LM_ECALL_SEM_SET 21        /* a0: local L1 address, a1: value */
#define LM_ECALL_SEM_WAIT 22       /* a0: local L1 address, a1: value; blocks until equal */
#define LM_ECALL_SEM_WAIT_MIN 23   /* a0: local L1 address, a1: value; blocks until >= */
#define LM_ECALL_SEM_SET_REMOTE 24 /* a0: L1 src of the value, a1,a2: NoC address */
#define LM_ECALL_SEM_SET_MCAST 25  /* a0: L1 src of the value, a1,a2: multicast, a3: dests */
/* a0,a1: source NoC address, a2: L1 dst, a3: bytes per read, a4: reads,
 * a5: source stride, a6: destination stride (bytes) */
#define LM_ECALL_NOC_READ_STRIDED 26
/* a0: L1 src, a1,a2: destination NoC address, a3: bytes per write, a4:
 * writes, a5: source stride, a6: destination stride (bytes) */
#define LM_ECALL_NOC_WRITE_STRIDED 27
#define LM_ECALL_NOC_FIRST LM_ECALL_NOC_READ
#define LM_ECALL_NOC_LAST LM_ECALL_NOC_WRITE_STRIDED
#define LM_ECALL_CB_RESERVE_BACK 32    /* a0: cb, a1: pages; blocks until free */
#define LM_ECALL_CB_PUSH_BACK 33       /* a0: cb, a1: pages */
#define LM_ECALL_CB_WAIT_FRONT 34      /* a0: cb, a1: pages; blocks until available */
#define LM_ECALL_CB_POP_FRONT 35       /* a0: cb, a1: pages */
#define LM_ECALL_CB_WRITE_PTR 36       /* a0: cb -> a0: L1 address of the back */
#define LM_ECALL_CB_READ_PTR 37        /* a0: cb -> a0: L1 address of the front */
#define LM_ECALL_CB_PAGES_AVAILABLE 38 /* a0: cb, a1: pages -> a0: 1 when available */
#define LM_ECALL_CB_PAGES_FREE 39      /* a0: cb, a1: pages -> a0: 1 when free */
/* Compute engine (compute kernels only: refused on the data movement
 * processors). dst indices, CB ids and tile indices are checked by the engine:
 * misuse is a kernel fault. */
#define LM_ECALL_TILE_REGS_ACQUIRE 64
#define LM_ECALL_TILE_REGS_COMMIT 65
#define LM_ECALL_TILE_REGS_WAIT 66
#define LM_ECALL_TILE_REGS_RELEASE 67
#define LM_ECALL_COPY_TILE 68 /* a0: cb, a1: tile, a2: dst */
/* a0: op | bcast << 8 | dst << 16 | acc_to_dest << 24, a1: cb_a | cb_b << 8,
 * a2: tile a, a3: tile b */
#define LM_ECALL_BINARY_TILES 69
/* a0: cb_a | cb_b << 8, a1: tile a, a2: tile b, a3: dst, a4: transpose b */
#define LM_ECALL_MATMUL_TILES 70
/* a0: func | dim << 8 | dst << 16, a1: cb | cb_scaler << 8, a2: tile, a3: scaler tile */
#define LM_ECALL_REDUCE_TILE 71
#define LM_ECALL_TRANSPOSE_TILE 72 /* a0: cb, a1: tile, a2: dst */
/* a0: op, a1: dst, a2, a3: the op's parameters (float32 bits, unless the op
 * says otherwise; 0 for the ops without) */
#define LM_ECALL_SFPU_TILE 73
/* a0: dst, a1: cb, a2: 0 for the next reserved tile, else 1 + the index of
 * the reserved tile to write (out of order) */
#define LM_ECALL_PACK_TILE 74
#define LM_ECALL_FILL_TILE 75   /* a0: dst, a1: value bits, a2: LM_FILL_FLOAT / LM_FILL_INT */
#define LM_ECALL_DST_ACQUIRE 76 /* acquire_dst: math and pack both own dst */
#define LM_ECALL_DST_RELEASE 77 /* release_dst */
#define LM_ECALL_SFPU_BINARY 78 /* a0: op, a1: dst a, a2: dst b, a3: dst out */
/* a0: cb in, a1: block (tiles), a2: cb out, a3: LM_TILIZE / LM_UNTILIZE */
#define LM_ECALL_TILIZE_BLOCK 79
/* a0: dst cond, a1: dst a, a2: dst b, a3: dst out, a4: LM_WHERE_FLOAT /
 * LM_WHERE_INT32 */
#define LM_ECALL_SFPU_WHERE 80
/* a0: LM_RAND_SEED (a1: seed) or LM_RAND_TILE (a1: dst, a2: from, a3: scale,
 * both float32 bits) */
#define LM_ECALL_RAND 81
#define LM_ECALL_COMPUTE_FIRST LM_ECALL_TILE_REGS_ACQUIRE
#define LM_ECALL_COMPUTE_LAST LM_ECALL_RAND

/* Operation codes of the compute ecalls (the engine's own numbering). */
#define LM_BINARY_ADD 1
#define LM_BINARY_SUB 2
#define LM_BINARY_MUL 3
#define LM_BCAST_NONE 1
#define LM_BCAST_ROW 2
#define LM_BCAST_COL 3
#define LM_BCAST_SCALAR 4
#define LM_REDUCE_SUM 1
#define LM_REDUCE_MAX 2
#define LM_REDUCE_AVG 3  /* computed as SUM: the scaler tile carries the 1/N */
#define LM_REDUCE_PROD 4 /* product (lightmetal's own; tt-metal has none) */
#define LM_REDUCE_ROW 1
#define LM_REDUCE_COL 2
#define LM_REDUCE_SCALAR 3
#define LM_SFPU_EXP 1
#define LM_SFPU_LOG 2
#define LM_SFPU_SQRT 3
#define LM_SFPU_RSQRT 4
#define LM_SFPU_RECIP 5
#define LM_SFPU_RELU 6
#define LM_SFPU_GELU 7
#define LM_SFPU_SIGMOID 8
#define LM_SFPU_TANH 9
#define LM_SFPU_ABS 10
#define LM_SFPU_NEG 11
#define LM_SFPU_SQUARE 12
#define LM_SFPU_LOG1P 13
#define LM_SFPU_EXPM1 14
#define LM_SFPU_SIGN 15
#define LM_SFPU_RELU_MAX 16   /* a2: upper */
#define LM_SFPU_RELU_MIN 17   /* a2: lower */
#define LM_SFPU_LEAKY_RELU 18 /* a2: slope */
#define LM_SFPU_ELU 19        /* a2: alpha */
#define LM_SFPU_SELU 20       /* a2: scale, a3: alpha */
#define LM_SFPU_CELU 21       /* a2: alpha */
#define LM_SFPU_GELU_ERF 22
#define LM_SFPU_SILU 23
#define LM_SFPU_MISH 24
#define LM_SFPU_HARDSIGMOID 25
#define LM_SFPU_HARDSWISH 26
#define LM_SFPU_HARDTANH 27 /* a2: min, a3: max */
#define LM_SFPU_SOFTPLUS 28 /* a2: beta, a3: threshold */
#define LM_SFPU_SOFTSIGN 29
#define LM_SFPU_ERF 30
#define LM_SFPU_ERFC 31
#define LM_SFPU_SIN 32
#define LM_SFPU_COS 33
#define LM_SFPU_TAN 34
#define LM_SFPU_ASIN 35
#define LM_SFPU_ACOS 36
#define LM_SFPU_ATAN 37
#define LM_SFPU_SINH 38
#define LM_SFPU_COSH 39
#define LM_SFPU_ASINH 40
#define LM_SFPU_ACOSH 41
#define LM_SFPU_ATANH 42
#define LM_SFPU_FLOOR 43
#define LM_SFPU_CEIL 44
#define LM_SFPU_ROUND 45 /* a2: decimals (int32) */
#define LM_SFPU_TRUNC 46
#define LM_SFPU_FRAC 47
#define LM_SFPU_CLAMP 48 /* a2: min, a3: max */
#define LM_SFPU_LOGICAL_NOT 49
#define LM_SFPU_ISNAN 50
#define LM_SFPU_ISINF 51
#define LM_SFPU_ISPOSINF 52
#define LM_SFPU_ISNEGINF 53
#define LM_SFPU_ISFINITE 54
#define LM_SFPU_EQZ 55
#define LM_SFPU_NEZ 56
#define LM_SFPU_LTZ 57
#define LM_SFPU_GTZ 58
#define LM_SFPU_LEZ 59
#define LM_SFPU_GEZ 60
#define LM_SFPU_EXP2 61
#define LM_SFPU_LOG2 62
#define LM_SFPU_LOG10 63
#define LM_SFPU_CBRT 64
#define LM_SFPU_POWER 65           /* a2: exponent */
#define LM_SFPU_POWER_ITERATIVE 66 /* a2: exponent (uint32) */
#define LM_SFPU_HEAVISIDE 67       /* a2: value at 0 */
#define LM_SFPU_ADD_UNARY 68       /* a2: scalar (likewise to UNARY_GE) */
#define LM_SFPU_SUB_UNARY 69
#define LM_SFPU_MUL_UNARY 70
#define LM_SFPU_DIV_UNARY 71
#define LM_SFPU_RSUB_UNARY 72
#define LM_SFPU_UNARY_MAX 73
#define LM_SFPU_UNARY_MIN 74
#define LM_SFPU_UNARY_EQ 75
#define LM_SFPU_UNARY_NE 76
#define LM_SFPU_UNARY_LT 77
#define LM_SFPU_UNARY_LE 78
#define LM_SFPU_UNARY_GT 79
#define LM_SFPU_UNARY_GE 80
#define LM_SFPU_TYPECAST 81  /* a2: in, a3: out (LM_DF_* numbers) */
#define LM_SFPU_BINARY_ADD 1 /* dst-to-dst: out = a op b */
#define LM_SFPU_BINARY_SUB 2
#define LM_SFPU_BINARY_MUL 3
#define LM_SFPU_BINARY_DIV 4
#define LM_SFPU_BINARY_RSUB 5 /* b - a */
#define LM_SFPU_BINARY_MAX 6
#define LM_SFPU_BINARY_MIN 7
#define LM_SFPU_BINARY_POWER 8
#define LM_SFPU_BINARY_EQ 9
#define LM_SFPU_BINARY_NE 10
#define LM_SFPU_BINARY_LT 11
#define LM_SFPU_BINARY_LE 12
#define LM_SFPU_BINARY_GT 13
#define LM_SFPU_BINARY_GE 14
#define LM_SFPU_BINARY_LOGICAL_AND 15
#define LM_SFPU_BINARY_LOGICAL_OR 16
#define LM_SFPU_BINARY_LOGICAL_XOR 17
#define LM_SFPU_BINARY_ATAN2 18
#define LM_SFPU_BINARY_FMOD 19
#define LM_SFPU_BINARY_REMAINDER 20
#define LM_WHERE_FLOAT 1 /* where_tile: the tiles hold floats */
#define LM_WHERE_INT32 2 /* where_int32_tile: raw 32-bit integers */
#define LM_TILIZE 1
#define LM_UNTILIZE 2
#define LM_FILL_FLOAT 1 /* the value is float32 bits, rounded like any result */
#define LM_FILL_INT 2   /* the value is a raw 32-bit integer, stored untouched */
#define LM_RAND_SEED 1  /* rand_tile_init */
#define LM_RAND_TILE 2  /* rand_tile */

/* ---- reserved L1 (below the device's l1_unreserved_base) ---- */
/* Core information written by the dispatcher before every launch. */
#define LM_L1_CORE_INFO 0x0000u
#define LM_CORE_INFO_X 0 /* word offsets: this core's logical x */
#define LM_CORE_INFO_Y 1 /* this core's logical y */
#define LM_CORE_INFO_GRID_X 2
#define LM_CORE_INFO_GRID_Y 3
#define LM_CORE_INFO_DRAM_BANKS 4
#define LM_CORE_INFO_DRAM_ALIGN 5 /* page stride alignment in DRAM */
#define LM_CORE_INFO_L1_ALIGN 6   /* page stride alignment in L1 */
/* Semaphores: LM_MAX_SEMAPHORES words, each in its own 16-byte slot. */
#define LM_L1_SEMAPHORES 0x0100u
#define LM_SEMAPHORE_STRIDE 16u
#define LM_MAX_SEMAPHORES 16u
/* Circular buffer configuration: LM_MAX_CBS slots of LM_CB_CONFIG_WORDS words
 * {fifo address, fifo size, page size, number of pages, data format};
 * size 0 = unused. */
#define LM_L1_CB_CONFIG 0x0200u
#define LM_CB_CONFIG_STRIDE 32u
#define LM_CB_CONFIG_WORDS 5u
/* Runtime arguments: one block per processor, then the common ones. */
#define LM_L1_RUNTIME_ARGS 0x0600u
#define LM_RUNTIME_ARGS_STRIDE 0x0600u /* room for LM_KERNEL_MAX_ARGS words */
#define LM_L1_COMMON_ARGS 0x1800u
#define LM_KERNEL_MAX_ARGS 341u
#define LM_L1_RESERVED_END 0x10000u

/* Processors of a core, as kernels are compiled for them (LM_PROCESSOR). */
#define LM_PROC_DM0 0
#define LM_PROC_DM1 1
#define LM_PROC_COMPUTE 2
#define LM_NUM_PROCESSORS 3

#define LM_MAX_CBS 32u

/* Tensor accessor arguments (TensorAccessorArgs in C++ kernels), as the host's
 * lm_tensor_accessor_args appends them: the marker | flags; the page size
 * rounded up to the buffer's alignment (tt-metal's AlignedPageSize, which the
 * two-argument TensorAccessor uses); for a sharded buffer then layout
 * (LM_TA_HEIGHT/WIDTH/BLOCK), shard height and width, tensor width (pages),
 * shards across, shard count, and the shards' cores two to a word (x | y << 8
 * in each half, shard 2i in the low half; a DRAM shard's "core" is
 * (bank, 0)). */
#define LM_TA_MAGIC 0x7A500000u
#define LM_TA_MAGIC_MASK 0xFFF00000u
#define LM_TA_DRAM 0x1u    /* the buffer is in DRAM (else in L1) */
#define LM_TA_SHARDED 0x2u /* the buffer is sharded: the geometry follows */
#define LM_TA_FLAG_MASK 0x3u
#define LM_TA_HEIGHT 2u /* the layouts, as lm_buffer_layout numbers them */
#define LM_TA_WIDTH 3u
#define LM_TA_BLOCK 4u
#define LM_TA_PAGE_WORDS 2u  /* the words of an interleaved buffer */
#define LM_TA_SHARD_WORDS 8u /* words before the cores */
#define LM_MAX_SHARDS_IN_ARGS 64u

/* Data formats, as a circular buffer's configuration gives them (the numbers
 * of lm_data_format). */
#define LM_DF_FLOAT32 1u
#define LM_DF_FLOAT16_B 2u
#define LM_DF_BFP8_B 3u
#define LM_DF_UINT32 4u
#define LM_DF_INT32 5u

/* ---- NoC addresses (64 bits) ----
 * unicast:   bits 0..35 local address, 36..41 x, 42..47 y
 * multicast: bits 0..35 local address, 36..41 end x, 42..47 end y,
 *            48..53 start x, 54..59 start y (an inclusive rectangle)
 * Worker cores have NoC coordinates equal to their logical ones; DRAM bank b
 * is at (b, LM_NOC_DRAM_Y), its local address the bank-local address. */
#define LM_NOC_ADDR_BITS 36
#define LM_NOC_COORD_BITS 6
#define LM_NOC_COORD_MASK 0x3Fu
#define LM_NOC_DRAM_Y 63u

#endif
