/* lightmetal op library — attention helpers (ttnn.transformer's role).
 *
 * The pieces of a multi-head attention block, with the shapes ttnn and
 * PyTorch give them (B batch, S sequence, H heads, D head size):
 *
 *   lmnn_split_heads         [B, S, H*D] -> [B, H, S, D]
 *   lmnn_split_heads_seq_first
 *                            [S, B, H*D] -> [B, H, S, D] (PyTorch's
 *                            sequence-first attention)
 *   lmnn_split_query_key_value_and_split_heads
 *                            [B, S, 3*H*D] -> q, v [B, H, S, D] and k
 *                            [B, H, S, D] (or [B, H, D, S] transposed, ready
 *                            for q @ k)
 *   lmnn_concat_heads        [B, H, S, D] -> [B, S, H*D] (or [H, S, D] ->
 *                            [S, H*D])
 *   lmnn_concat_heads_seq_first
 *                            [B, H, S, D] -> [S*B, H*D] (PyTorch's
 *                            sequence-first attention, rows flattened)
 *   lmnn_scaled_dot_product_attention
 *                            softmax(q @ k^T * scale + mask) @ v
 *
 * How they run: the head helpers move a tile tensor (float32, bfloat16,
 * uint32, int32) in one program of their own, which assembles each output
 * tile from runs of the input's tiles (the QKV split makes all three outputs
 * in it; a transposed key adds one tile transpose); row-major and bfloat8_b
 * tensors go through lmnn_reshape and lmnn_permute (lmnn_split first for
 * QKV). Attention is three programs: q @ k^T (lmnn_matmul, float32 scores),
 * one fused softmax(scores * scale + mask (+ causal)) that keeps each row of
 * scores in L1, and probabilities @ v (lmnn_matmul); with more than 2048
 * keys the middle one becomes a scale-and-causal program, lmnn_add for a
 * mask and lmnn_softmax.
 * All work stays on the device, so the helpers run inside metal traces and
 * Light Metal captures, and after a first call every program they launch is
 * a program-cache hit.
 *
 * Layouts and dtypes. The head helpers are pure data movement: either layout,
 * every dtype the data movement ops carry (lmnn_data.h), bit for bit; the
 * output has the input's layout and dtype. Attention takes float tile tensors
 * (dtypes may differ); its intermediate scores and probabilities are float32
 * whatever the inputs (one rounding to the output dtype at the end), so
 * bfloat16 inputs lose only their own rounding and the output's.
 *
 * Sequence lengths need not be multiples of 32: the tile padding never
 * enters a softmax (lmnn_softmax treats it as absent) and masks are read only
 * inside the logical [Sq, Sk] region.
 *
 * Errors (lmnn_tensor.h): LM_ERR_INVALID_HANDLE for dead tensors;
 * LM_ERR_INVALID_ARGUMENT naming the argument for ranks, head counts and
 * shapes that do not fit, e.g.
 *   "lmnn_scaled_dot_product_attention: k: head count 3 differs from q's 4 (q
 *    [2, 4, 20, 16], k [2, 3, 20, 16])".
 * A failed call creates nothing and frees every intermediate it made.
 */
#ifndef LIGHTMETAL_LMNN_ATTENTION_H
#define LIGHTMETAL_LMNN_ATTENTION_H

#include "lightmetal/lmnn_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a [B, S, H*D] (rank 3) -> [B, H, S, D]; num_heads must divide the last dim.
 * `output` (NULL: the defaults) sets the memory config; its dtype must be zero
 * or a's. */
lm_status lmnn_split_heads(lmnn_tensor a, uint32_t num_heads, const lmnn_output *output,
                           lmnn_tensor *out);

/* a [S, B, H*D] (rank 3, sequence first, as PyTorch's MultiheadAttention
 * takes it without batch_first) -> [B, H, S, D]; otherwise as
 * lmnn_split_heads. */
lm_status lmnn_split_heads_seq_first(lmnn_tensor a, uint32_t num_heads, const lmnn_output *output,
                                     lmnn_tensor *out);

/* a [B, H, S, D] (rank 4) -> [B, S, H*D], the inverse of lmnn_split_heads;
 * a [H, S, D] (rank 3, one batch entry) -> [S, H*D]. */
lm_status lmnn_concat_heads(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out);

/* a [B, H, S, D] (rank 4) -> [S*B, H*D]: row s*B + b holds the heads of
 * batch entry b at position s, as PyTorch's sequence-first
 * MultiheadAttention joins them ([S, B, H*D]) before its output
 * projection, flattened so that no row is padded. `output` as for
 * lmnn_concat_heads. */
lm_status lmnn_concat_heads_seq_first(lmnn_tensor a, const lmnn_output *output, lmnn_tensor *out);

typedef struct lmnn_split_qkv_options {
    uint32_t num_heads; /* H (required, > 0) */
    bool transpose_key; /* k as [B, H, D, S] (for a plain q @ k) */
    lmnn_output output; /* memory config of q, k and v; dtype zero or the input's */
} lmnn_split_qkv_options;

/* H = 0 (must be set), no transposed key, default output. */
void lmnn_split_qkv_options_init(lmnn_split_qkv_options *opts);

/* qkv [B, S, 3*H*D] (rank 3; the last dim q, then k, then v, each H heads of
 * D, as a fused QKV linear produces it) -> q, k, v as lmnn_split_heads gives
 * them (k transposed on request). On error none of the three is created. */
lm_status lmnn_split_query_key_value_and_split_heads(lmnn_tensor qkv,
                                                     const lmnn_split_qkv_options *opts,
                                                     lmnn_tensor *out_q, lmnn_tensor *out_k,
                                                     lmnn_tensor *out_v);

typedef struct lmnn_sdpa_options {
    /* An additive float mask (tile layout, any float dtype) broadcastable to
     * [B, H, Sq, Sk] NumPy-style (e.g. [Sq, Sk], [B, 1, 1, Sk], [1, H, Sq,
     * Sk]): -Inf (or a large negative value) removes a key. {0}: none. */
    lmnn_tensor mask;
    /* Query i sees keys j <= i only (PyTorch's is_causal: the top-left
     * aligned lower triangle). With a mask too, both apply. A row whose keys
     * are all masked gives NaN, as in PyTorch. */
    bool is_causal;
    /* Multiplies q @ k^T (before the mask is added); NaN (what
     * lmnn_sdpa_options_init sets): 1/sqrt(D). Must be finite. */
    double scale;
    /* k is given transposed, [B, H, D, Sk] (as
     * lmnn_split_query_key_value_and_split_heads makes it with
     * transpose_key). */
    bool key_transposed;
    lmnn_output output; /* dtype: float dtypes only; zero: like q */
} lmnn_sdpa_options;

/* No mask, not causal, scale 1/sqrt(D), k not transposed, output like q. */
void lmnn_sdpa_options_init(lmnn_sdpa_options *opts);

/* out = softmax(q @ k^T * scale + mask) @ v along the keys:
 *   q [B, H, Sq, D], k [B, H, Sk, D] (or [B, H, D, Sk]), v [B, H, Sk, Dv]
 *   -> out [B, H, Sq, Dv].
 * All rank 4 with equal B and H (no broadcasting between q, k and v), live
 * float tile tensors on one device. The scores and probabilities are
 * float32; masks are added after the scale, so any finite scale (0 and
 * negative ones too) keeps masked keys out. NULL opts: the defaults. */
lm_status lmnn_scaled_dot_product_attention(lmnn_tensor q, lmnn_tensor k, lmnn_tensor v,
                                            const lmnn_sdpa_options *opts, lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
