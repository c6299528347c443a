/* lightmetal op library — recurrent cells (PyTorch's LSTMCell and GRUCell
 * after their matrix products).
 *
 * A recurrent layer is a loop of steps, each a product of the state with
 * the recurrent weights and then a dozen element-wise ops on the gates. The
 * cells here are that element-wise part as one program: the gates' sums,
 * activations and the state update, each output tile made from the matching
 * tile of every gate. A step is then two programs (lmnn_linear for
 * h R^T, and the cell) instead of about twenty, and the input's products for
 * every step are one lmnn_linear before the loop.
 *
 * Gates. x_gates (from the input, with every bias that is not inside a
 * gate's activation folded in) and h_gates (from the state) are [B, G * Hg]
 * tile tensors, G = 4 (LSTM) or 3 (GRU) gates in ONNX's order -- LSTM
 * input, output, forget, cell; GRU update, reset, hidden -- where Hg is the
 * hidden size H rounded up to a tile's 32 columns: gate k occupies columns
 * [k * Hg, k * Hg + H), so every gate starts on a tile (for H a multiple of
 * 32 that is simply [B, G * H]). What the columns between hold is ignored.
 * x_gates may also hold every step's gates, [S, B, G * Hg]: the options'
 * `step` picks the matrix a call reads, so one product before the loop
 * serves all steps with no slicing.
 *
 *   LSTM: i, o, f = sigmoid(x + h gates 0, 1, 2), g = tanh(x + h gate 3)
 *         c' = f * c + i * g            h' = o * tanh(c')
 *   GRU (linear_before_reset, PyTorch's form: h_gates' hidden gate holds
 *        h Rh^T + Rbh, the reset applies after the product):
 *         z, r = sigmoid(x + h gates 0, 1)
 *         n = tanh(x gate 2 + r * h gate 2)   h' = n + z * (h - n)
 *
 * Dtypes: float tile tensors (float32, bfloat16, bfloat8_b), which may
 * differ; the math is float32, rounded once to the output dtype (the
 * state's unless the options give one). Outputs have the state's memory
 * config unless the options give one.
 *
 * The sequence's outputs. With `steps_out` set, h' is also written into
 * matrix `step` of that tile tensor ([S, B, H] or any shape whose last two
 * dims are [B, H] and whose matrices number more than `step`): a layer's Y
 * fills as it goes, with no copy per step. The tensor is the caller's and
 * changes in place.
 *
 * Errors (lmnn_tensor.h): LM_ERR_INVALID_HANDLE for dead tensors;
 * LM_ERR_INVALID_ARGUMENT naming the argument for shapes that do not fit,
 * e.g. "lmnn_lstm_cell: x_gates: shape [2, 80] is not [2, 4 * 32] for c's
 * [2, 20] (each gate starts on a tile)", a step outside x_gates or
 * steps_out, and layouts, dtypes or devices that differ. A failed call
 * creates nothing and changes nothing.
 */
#ifndef LIGHTMETAL_LMNN_RNN_H
#define LIGHTMETAL_LMNN_RNN_H

#include "lightmetal/lmnn_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lmnn_rnn_cell_options {
    lmnn_output output; /* the new states (zero: like the state input) */
    /* The matrix of x_gates to read when it holds several steps, and of
     * steps_out to write; 0 otherwise. */
    uint32_t step;
    /* Where h' also goes (see above); a zero handle for nowhere. */
    lmnn_tensor steps_out;
} lmnn_rnn_cell_options;

void lmnn_rnn_cell_options_init(lmnn_rnn_cell_options *opts);

/* One LSTM step: c [B, H] is the cell state; *out_h and *out_c get h' and
 * c' (new tensors). NULL opts: the defaults. */
lm_status lmnn_lstm_cell(lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor c,
                         const lmnn_rnn_cell_options *opts, lmnn_tensor *out_h, lmnn_tensor *out_c);

/* One GRU step: h [B, H] is the state; *out_h gets h' (a new tensor). NULL
 * opts: the defaults. */
lm_status lmnn_gru_cell(lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor h,
                        const lmnn_rnn_cell_options *opts, lmnn_tensor *out_h);

#ifdef __cplusplus
}
#endif

#endif
