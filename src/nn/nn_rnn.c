/* Recurrent cells (lmnn_rnn.h): one program per step.
 *
 * rnn_cell_reader.c reads, for each tile of the [B, H] state, the matching
 * tile of every gate of x_gates and h_gates (gate k of tile (r, c) is tile
 * (r, k * wt + c): the gates start on tiles) and the state's tile;
 * rnn_cell_compute.c keeps every intermediate in float32 dst registers and
 * packs h' (and c'); rnn_cell_writer.c writes them, h' also into the
 * sequence's output when asked.
 *
 * The step is a common runtime argument, like the tensors' addresses, so
 * every step of a layer launches the one cached program.
 */
#include <string.h>

#include "nn/nn_internal.h"

enum { CELL_LSTM, CELL_GRU };

/* Common arguments: the tensors, in this order, then x_gates' matrix and
 * steps_out's. */
enum { ARG_X, ARG_H_GATES, ARG_STATE, ARG_OUT_H, ARG_OUT_C, ARG_STEPS, ARG_TENSORS };

typedef struct cell {
    const char *name;
    int kind;
    uint32_t gates;
    nn_tensor *x, *hg, *state, *steps;
    uint32_t step;
    lmnn_dtype dtype;
    lmnn_memory_config memory;
} cell;

void lmnn_rnn_cell_options_init(lmnn_rnn_cell_options *opts) {
    if (opts) *opts = (lmnn_rnn_cell_options){{0}, 0, {0}};
}

static lm_status get_input(const cell *c, const char *arg, lmnn_tensor t, nn_tensor **out) {
    lm_status st = nn_get_tensor(c->name, arg, t, out);
    if (!st) st = nn_check_layout(c->name, arg, *out, LMNN_TILE);
    if (!st) st = nn_check_float(c->name, arg, *out);
    if (!st && c->x && *out != c->x) st = nn_check_same_device(c->name, arg, *out, c->x);
    return st;
}

/* `t` is of rank `rank` and ends in [rows, cols]. */
static bool shaped(const nn_tensor *t, uint32_t rank, uint32_t rows, uint64_t cols) {
    const lmnn_shape *s = &t->shape;
    return s->rank == rank && s->dims[rank - 2] == rows && s->dims[rank - 1] == cols;
}

static lm_status check(cell *c, lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor state,
                       const char *state_arg, const lmnn_rnn_cell_options *o) {
    lm_status st = get_input(c, "x_gates", x_gates, &c->x);
    if (!st) st = get_input(c, "h_gates", h_gates, &c->hg);
    if (!st) st = get_input(c, state_arg, state, &c->state);
    if (st) return st;
    char sb[128], gb[128];
    nn_shape_str(&c->state->shape, sb, sizeof sb);
    if (c->state->shape.rank != 2)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name, "%s: expected [B, H], given shape %s",
                       state_arg, sb);
    uint32_t b = c->state->shape.dims[0], h = c->state->shape.dims[1];
    uint64_t width = c->gates * (((uint64_t)h + 31) / 32 * 32);
    if (!shaped(c->hg, 2, b, width)) {
        nn_shape_str(&c->hg->shape, gb, sizeof gb);
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "h_gates: shape %s is not [%u, %u * %u] for %s's %s (each gate starts on "
                       "a tile)",
                       gb, b, c->gates, h + (32 - h % 32) % 32, state_arg, sb);
    }
    nn_shape_str(&c->x->shape, gb, sizeof gb);
    if (!shaped(c->x, 2, b, width) && !shaped(c->x, 3, b, width))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "x_gates: shape %s is not [%u, %u * %u] or [S, %u, %u * %u] for %s's %s "
                       "(each gate starts on a tile)",
                       gb, b, c->gates, h + (32 - h % 32) % 32, b, c->gates, h + (32 - h % 32) % 32,
                       state_arg, sb);
    c->step = o->step;
    if (c->x->shape.rank == 3 && o->step >= c->x->shape.dims[0])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "step: %u is outside x_gates' %u steps (shape %s)", o->step,
                       c->x->shape.dims[0], gb);
    c->dtype = o->output.dtype ? o->output.dtype : c->state->dtype;
    if ((st = nn_check_dtype(c->name, "output.dtype", c->dtype))) return st;
    if (!nn_dtype_is_float(c->dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(c->dtype));
    c->memory = nn_output_memory(&o->output.memory, c->state);
    if ((st = nn_check_memory(c->name, &c->memory))) return st;
    if (!o->steps_out.id) return LM_OK;
    if ((st = get_input(c, "steps_out", o->steps_out, &c->steps))) return st;
    if (c->steps == c->x || c->steps == c->hg || c->steps == c->state)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "steps_out: is also an input (the cell reads its inputs as it writes)");
    nn_tiles g = nn_tiles_of(&c->steps->shape);
    nn_shape_str(&c->steps->shape, gb, sizeof gb);
    if (c->steps->shape.rank < 2 || g.h != b || g.w != h)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "steps_out: shape %s does not end in %s's [%u, %u]", gb, state_arg, b, h);
    if (o->step >= g.batch)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "step: %u is outside steps_out's %u matrices (shape %s)", o->step, g.batch,
                       gb);
    if (c->steps->dtype != c->dtype)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c->name,
                       "steps_out: dtype %s differs from the new state's %s",
                       lmnn_dtype_name(c->steps->dtype), lmnn_dtype_name(c->dtype));
    return LM_OK;
}

/* The reader's or writer's accessor words of `t` at args[*n], its start
 * index (counting {first, count}) into args[slot]. */
static lm_status words(const cell *c, const nn_tensor *t, uint32_t *args, uint32_t slot,
                       uint32_t *n) {
    uint32_t k = 0;
    args[slot] = 2 + *n;
    lm_status st = nn_accessor_words(c->name, t, args + *n, &k);
    *n += k;
    return st;
}

static lm_status build(const cell *c, nn_tensor *oh, nn_tensor *oc, nn_program **out) {
    nn_tiles g = nn_tiles_of(&c->state->shape);
    bool lstm = c->kind == CELL_LSTM, zero_pad = g.w % 32 != 0;
    nn_key key;
    nn_key_init(&key, "rnn_cell");
    nn_key_u32(&key, (uint32_t)c->kind);
    nn_key_tensor(&key, c->x);
    nn_key_tensor(&key, c->hg);
    nn_key_tensor(&key, c->state);
    nn_key_tensor(&key, oh);
    if (oc) nn_key_tensor(&key, oc);
    nn_key_u32(&key, c->steps != NULL);
    if (c->steps) nn_key_tensor(&key, c->steps);
    lm_device *device = c->x->device;
    if ((*out = nn_cache_find(device, &key))) return LM_OK;

    uint32_t rargs[2 + 3 + 3 * NN_ACCESSOR_WORDS] = {g.ht, g.wt}, rn = 5;
    lm_status st = words(c, c->x, rargs, 2, &rn);
    if (!st) st = words(c, c->hg, rargs, 3, &rn);
    if (!st) st = words(c, c->state, rargs, 4, &rn);
    uint32_t wargs[10 + 3 * NN_ACCESSOR_WORDS] = {g.ht,
                                                  g.wt,
                                                  g.h,
                                                  g.w,
                                                  zero_pad,
                                                  (uint32_t)nn_tile_format(c->dtype),
                                                  (uint32_t)nn_tile_format(c->dtype)};
    uint32_t wn = 10;
    if (!st) st = words(c, oh, wargs, 7, &wn);
    if (!st && oc) st = words(c, oc, wargs, 8, &wn);
    if (!st && c->steps) st = words(c, c->steps, wargs, 9, &wn);
    if (st) return st;

    uint32_t rcargs[] = {c->gates}, ccargs[] = {(uint32_t)c->kind};
    uint32_t wcargs[] = {lstm, c->steps != NULL};
    nn_kernel_spec reader = {"rnn_cell_reader.c", LM_PROCESSOR_DM0, rcargs, 1, NULL, 0, false};
    nn_kernel_spec compute = {"rnn_cell_compute.c", LM_PROCESSOR_COMPUTE, ccargs, 1, NULL, 0, true};
    nn_kernel_spec writer = {"rnn_cell_writer.c", LM_PROCESSOR_DM1, wcargs, 2, NULL, 0, false};
    nn_split split;
    nn_program p = {0};
    lm_kernel rk, ck, wk;
    lm_data_format fx = nn_tile_format(c->x->dtype), fh = nn_tile_format(c->hg->dtype);
    lm_data_format fs = nn_tile_format(c->state->dtype), fo = nn_tile_format(c->dtype);
    st = nn_split_work(c->name, device, (uint64_t)g.ht * g.wt, &split);
    p.cores = split.all;
    if (!st) st = nn_program_begin(c->name, device, &p);
    if (!st) st = nn_program_cb(c->name, &p, 0, fx, (uint32_t)lm_tile_size(fx), 2 * c->gates);
    if (!st) st = nn_program_cb(c->name, &p, 1, fh, (uint32_t)lm_tile_size(fh), 2 * c->gates);
    if (!st) st = nn_program_cb(c->name, &p, 2, fs, (uint32_t)lm_tile_size(fs), 2);
    if (!st) st = nn_program_cb(c->name, &p, 16, fo, (uint32_t)lm_tile_size(fo), 2);
    if (!st && lstm) st = nn_program_cb(c->name, &p, 17, fo, (uint32_t)lm_tile_size(fo), 2);
    if (!st) st = nn_program_kernel(c->name, &p, &reader, &rk);
    if (!st) st = nn_program_kernel(c->name, &p, &compute, &ck);
    if (!st) st = nn_program_kernel(c->name, &p, &writer, &wk);
    if (!st) st = nn_kernel_split_args(c->name, &p, rk, &split, rargs, rn);
    if (!st) st = nn_kernel_split_args(c->name, &p, ck, &split, NULL, 0);
    if (!st) st = nn_kernel_split_args(c->name, &p, wk, &split, wargs, wn);
    if (st) {
        nn_program_discard(&p);
        return st;
    }
    return nn_cache_add(c->name, device, &key, &p, out);
}

static lm_status run(cell *c, lmnn_tensor *out_h, lmnn_tensor *out_c) {
    lmnn_tensor hh = {0}, ch = {0};
    nn_tensor *oh = NULL, *oc = NULL;
    lm_device *device = c->x->device;
    lm_status st =
        nn_tensor_new(c->name, device, &c->state->shape, c->dtype, LMNN_TILE, &c->memory, &hh, &oh);
    if (!st && out_c)
        st = nn_tensor_new(c->name, device, &c->state->shape, c->dtype, LMNN_TILE, &c->memory, &ch,
                           &oc);
    nn_program *prog = NULL;
    if (!st) st = build(c, oh, oc, &prog);
    if (!st) {
        /* Every kernel sees the same common arguments; the slots a cell has
         * no tensor for repeat h'. */
        nn_tensor *t[ARG_TENSORS] = {c->x, c->hg,        c->state,
                                     oh,   oc ? oc : oh, c->steps ? c->steps : oh};
        uint32_t steps[2] = {c->x->shape.rank == 3 ? c->step : 0, c->step};
        st = nn_launch_with(c->name, prog, t, ARG_TENSORS, steps, 2);
    }
    if (st) {
        nn_tensor_discard(hh);
        if (ch.id) nn_tensor_discard(ch);
        return st;
    }
    *out_h = hh;
    if (out_c) *out_c = ch;
    return LM_OK;
}

static lm_status cell_call(int kind, lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor state,
                           const lmnn_rnn_cell_options *opts, lmnn_tensor *out_h,
                           lmnn_tensor *out_c) {
    cell c = {.name = kind == CELL_LSTM ? "lmnn_lstm_cell" : "lmnn_gru_cell",
              .kind = kind,
              .gates = kind == CELL_LSTM ? 4 : 3};
    if (!out_h) return nn_fail(LM_ERR_INVALID_ARGUMENT, c.name, "out_h is NULL");
    if (kind == CELL_LSTM && !out_c)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, c.name, "out_c is NULL");
    lmnn_rnn_cell_options defaults;
    if (!opts) {
        lmnn_rnn_cell_options_init(&defaults);
        opts = &defaults;
    }
    lm_status st = check(&c, x_gates, h_gates, state, kind == CELL_LSTM ? "c" : "h", opts);
    return st ? st : run(&c, out_h, out_c);
}

lm_status lmnn_lstm_cell(lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor c,
                         const lmnn_rnn_cell_options *opts, lmnn_tensor *out_h,
                         lmnn_tensor *out_c) {
    return cell_call(CELL_LSTM, x_gates, h_gates, c, opts, out_h, out_c);
}

lm_status lmnn_gru_cell(lmnn_tensor x_gates, lmnn_tensor h_gates, lmnn_tensor h,
                        const lmnn_rnn_cell_options *opts, lmnn_tensor *out_h) {
    return cell_call(CELL_GRU, x_gates, h_gates, h, opts, out_h, NULL);
}
