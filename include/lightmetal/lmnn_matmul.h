/* lightmetal op library — matrix products (ttnn.matmul, ttnn.linear).
 *
 * lmnn_matmul(a, b) is torch.matmul on tile tensors: the last two dims are
 * the matrices ([..., M, K] @ [..., K, N] -> [..., M, N]) and the dims before
 * them are batch dims that broadcast NumPy-style, e.g.
 *   [2, 3, M, K] @ [K, N]        -> [2, 3, M, N]   (one b for every matrix)
 *   [2, 1, M, K] @ [1, 4, K, N]  -> [2, 4, M, N]
 * Rank-1 operands follow torch where the result needs no reshape: a [K] is
 * the row [1, K] and its dim is dropped from the result ([K] @ [K, N] -> [N],
 * [K] @ [K] -> a rank-0 tensor). A rank-1 b with a matrix a ([M, K] @ [K]),
 * and a rank-1 a with a batched b, are LM_ERR_UNSUPPORTED (give the vector as
 * [K, 1] or [1, K]). K need not be a multiple of 32.
 *
 * lmnn_linear(input, weight, bias) is input @ weight + bias: weight [K, N]
 * (or, with transpose_b, [N, K] as torch.nn.Linear stores it), bias [N] or
 * [1, N] added to every row; a zero bias handle means none.
 *
 * How it runs: the output is cut into blocks of whole tiles that fit the
 * compute engine's dst registers (16 tiles, 8 with fp32 accumulation), each
 * accumulated over K in dst while K streams through in blocks; the blocks are
 * spread over a rectangle of cores, each reading the A row panel and the B
 * column panel its block needs (or, with `multicast`, one core of each row of
 * cores reads the row's A panel and multicasts it along the row, one of each
 * column the B panel down the column). The bias, the activation and the
 * packing to the output dtype follow the last K step. The output's padding
 * is zero whatever the activation or bias. A batch of matrices whose rows
 * leave most of their tiles empty, times one b ([197, 1, 768] @ [768, N]),
 * is multiplied as one matrix of all the rows when that saves more products
 * than the copies in and out cost: the same bits, one more device copy each
 * way (captured like any other).
 *
 * a may also be row-major (float32 or bfloat16): a matrix [M, K] whose B
 * (untransposed) fits L1 whole and whose N fits dst is read a tile row at a
 * time by the product's own program, which tilizes each row as it
 * multiplies it (one launch, no tiles of a stored); any other row-major a
 * is tilized first. The values are those of the tile a either way, and
 * the output (tiles) follows a's memory by default.
 *
 * Accuracy: every 32-long partial dot product is a chain of float32 fused
 * multiply-adds (lm_tile.h); with fp32 accumulation dst keeps float32 between
 * them, without it dst rounds to bfloat16 after each 32 K (as on the chip).
 * The result rounds once to the output dtype.
 *
 * Errors (lmnn_tensor.h): operands must be live float tensors on one
 * device, b (and a bias) in tile layout; inner dims must match
 * ("lmnn_matmul: b: inner dim 4 of shape [4, 7] does not match a's inner dim
 * 5 of shape [3, 5]"); batch dims must broadcast; the output dtype, when
 * given, and input_dtype, float dtypes.
 */
#ifndef LIGHTMETAL_LMNN_MATMUL_H
#define LIGHTMETAL_LMNN_MATMUL_H

#include "lightmetal/lmnn_tensor.h"
#include "lightmetal/lmnn_unary.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lmnn_fp32_accumulate {
    LMNN_FP32_ACC_DEFAULT = 0, /* on when an operand, the bias or the output is float32 */
    LMNN_FP32_ACC_ON = 1,
    LMNN_FP32_ACC_OFF = 2,
} lmnn_fp32_accumulate;

typedef struct lmnn_matmul_options {
    /* Use a's (b's) last two dims swapped: a [..., K, M], b [..., N, K]. Not
     * for rank-1 operands. */
    bool transpose_a, transpose_b;
    lmnn_fp32_accumulate fp32_accumulate;
    /* Share A and B panels between cores by NoC multicast (tt-metal's 2D
     * multicast matmul) instead of each core reading its own. Off by
     * default: on the simulator the cores then wait on one another, which
     * costs more host time than the reads save (1024^3 with float32
     * accumulation on 2 host threads: about 7% slower; 2048 x 1024 x 2048:
     * about 25%). The results are the same bits either way. */
    bool multicast;
    /* A unary op applied to the result before it is stored (LMNN_UNARY_INVALID,
     * zero: none), with its parameters (lmnn_unary_options' alpha and beta; NaN,
     * as lmnn_matmul_options_init sets them, means the op's default). */
    lmnn_unary_op activation;
    double activation_alpha, activation_beta;
    lmnn_output output; /* dtype: float dtypes only; zero: like a (input) */
    /* The dtype a's (input's) values are taken in: 0 (init), its own; or
     * FLOAT32 or BFLOAT16, the values being what lmnn_typecast of a would
     * give (and the output's dtype by default). A row-major a gathered into
     * the product (see above) is rounded as its rows are tilized, with no
     * copy; any other a is typecast first. (A bfloat16 model fed float32
     * rows.) */
    lmnn_dtype input_dtype;
    /* TILE (init; 0 means TILE) or ROW_MAJOR: the product as [..., M, N]
     * rows, in a float32 or bfloat16 output dtype. A row-major a gathered
     * into the product (see above) has its result packed as rows by the
     * same program; any other product is untilized after. (A model's
     * output, wanted as rows.) */
    lmnn_layout output_layout;
} lmnn_matmul_options;

/* No transposes, default accumulation, no activation, output like a. */
void lmnn_matmul_options_init(lmnn_matmul_options *opts);

/* out = a @ b (see above). NULL opts: the defaults. */
lm_status lmnn_matmul(lmnn_tensor a, lmnn_tensor b, const lmnn_matmul_options *opts,
                      lmnn_tensor *out);

/* out = input @ weight + bias (bias (lmnn_tensor){0}: none). NULL opts: the
 * defaults (so weight is [K, N]; set transpose_b for torch's [N, K]). */
lm_status lmnn_linear(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_matmul_options *opts, lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
