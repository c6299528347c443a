/* lmfe_compile_onnx: load, bind, infer, plan, then run the model on the
 * device while Light Metal captures.
 *
 * The binary's named inputs are the graph inputs (row-major, in the boundary
 * format of their element type: float32, int32 or uint32), written by the
 * host at the start; its named outputs are the graph outputs, read at the
 * end. With opts->trace the model in between is one metal trace: run once
 * eagerly before the capture (every program built, every constant
 * uploaded), then captured as a trace and replayed, so a replay of the
 * binary launches it with one command.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/text.h"
#include "frontend/fe_ctx.h"
#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void lmfe_compile_options_init(lmfe_compile_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

void lmfe_report_free(lmfe_report *report) {
    if (!report) return;
    free(report->ops);
    free(report->notes);
    memset(report, 0, sizeof *report);
}

/* ---- the boundary ---- */

static lm_data_format boundary_format(lmnn_dtype d) {
    switch (d) {
    case LMNN_FLOAT32:
        return LM_DATA_FORMAT_FLOAT32;
    case LMNN_BFLOAT16:
        return LM_DATA_FORMAT_FLOAT16_B;
    case LMNN_UINT32:
        return LM_DATA_FORMAT_UINT32;
    default:
        return LM_DATA_FORMAT_INT32;
    }
}

static lm_status name_tensor(lmnn_tensor t, const char *name, lm_buffer_role role,
                             const fe_type *type) {
    lmnn_tensor_info info;
    lm_status st = lmnn_tensor_get_info(t, &info);
    if (st) return st;
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    o.role = role;
    o.format = boundary_format(info.dtype);
    o.rank = (uint32_t)type->rank;
    o.scalar = type->rank == 0;
    for (int32_t d = 0; d < type->rank; d++)
        o.shape[d] = (uint64_t)type->dims[d];
    fe_set_element_type(&o, type->elem);
    return lm_capture_name_buffer_ex(info.buffer, name, &o);
}

/* ---- the per-op summary ---- */

typedef struct summary {
    lmfe_op_summary *rows;
    size_t count, cap;
} summary;

static lm_status summary_add(summary *s, const char *op, lmfe_placement p, double seconds) {
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i].placement == p && strcmp(s->rows[i].op_type, op) == 0) {
            s->rows[i].count++;
            s->rows[i].seconds += seconds;
            return LM_OK;
        }
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        lmfe_op_summary *r = realloc(s->rows, cap * sizeof *r);
        if (!r) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        s->rows = r;
        s->cap = cap;
    }
    s->rows[s->count++] = (lmfe_op_summary){op, p, 1, seconds, 0};
    return LM_OK;
}

/* ---- lowering ---- */

/* Names the launches of node `n` "OpType name" ("OpType #index" when the
 * node has no name) for profiles, in this run and in the binary's replays.
 * Bytes that are not printable UTF-8 become '?' (a label is one line of
 * text, and the file's names need not be valid UTF-8). */
static void node_label(const fe_node *n, char label[LM_MAX_LAUNCH_LABEL + 1]) {
    if (n->name[0])
        snprintf(label, LM_MAX_LAUNCH_LABEL + 1, "%s %s", n->op_type, n->name);
    else
        snprintf(label, LM_MAX_LAUNCH_LABEL + 1, "%s #%u", n->op_type, (unsigned)n->index);
    text_clean(label);
}

static lm_status label_node(fe_ctx *c, const fe_node *n) {
    char label[LM_MAX_LAUNCH_LABEL + 1];
    node_label(n, label);
    return lm_device_set_launch_label(c->device, label);
}

/* Runs every device node; with `timing` records each node's host time. */
static lm_status lower_all(fe_ctx *c, double *node_seconds) {
    fe_graph *g = c->g;
    uint32_t total = 0, done = 0;
    for (uint32_t k = 0; k < g->node_count; k++)
        total += c->plans[k].placement == LMFE_ON_DEVICE;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        if (c->plans[k].placement != LMFE_ON_DEVICE) continue;
        if (c->opts->progress) c->opts->progress(c->opts->progress_user, done, total, n->op_type);
        const fe_op_def *op = fe_op_find(n->op_type);
        c->current = n;
        double t0 = now_s();
        lm_status st = label_node(c, n);
        if (!st) st = op->lower(c, n);
        if (node_seconds) node_seconds[k] += now_s() - t0;
        if (st) return st;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE) fe_value_used(c, n->inputs[i]);
        done++;
    }
    if (c->opts->progress) c->opts->progress(c->opts->progress_user, done, total, NULL);
    c->current = NULL;
    return LM_OK;
}

/* The device tensor of graph output `vi` as its boundary: row-major, in the
 * boundary dtype, a buffer of its own. */
static lm_status output_tensor(fe_ctx *c, uint32_t vi, lmnn_tensor *out) {
    fe_value *v = &c->g->values[vi];
    if (fe_type_volume(&v->type) == 0) return LM_OK; /* read_outputs names a placeholder */
    fe_node pseudo = {
        .name = v->name, .op_type = "output", .domain = "", .inputs = &vi, .input_count = 1};
    /* A buffer of its own, not an input's or another output's. */
    return fe_in_dev_rm_own(c, &pseudo, 0, fe_boundary_dtype(v->type.elem), out);
}

/* The buffer that names an empty graph input or output: a tensor of no
 * elements has no bytes, but the binary still takes or gives it by name. */
static lm_status placeholder(fe_ctx *c, const fe_value *v, const char *name, lm_buffer_role role,
                             lmnn_tensor *out) {
    lmnn_shape shape = fe_shape(1, (const int64_t[]){1});
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = fe_boundary_dtype(v->type.elem);
    o.layout = LMNN_ROW_MAJOR;
    const uint32_t zero = 0;
    lm_status st = lmnn_from_host(c->device, &shape, &zero, sizeof zero, &o, out);
    if (!st && (st = name_tensor(*out, name, role, &v->type))) {
        fe_free(*out);
        *out = (lmnn_tensor){0};
    }
    return st;
}

/* `placeholders`: one per graph input, for the empty ones (freed by the
 * caller after the capture). */
static lm_status create_inputs(fe_ctx *c, bool capture, const fe_tensor *const *golden,
                               lmnn_tensor *placeholders) {
    fe_graph *g = c->g;
    for (uint32_t k = 0; k < g->input_count; k++) {
        uint32_t vi = g->inputs[k];
        fe_value *v = &g->values[vi];
        if (v->empty_input && capture) {
            lm_status st = placeholder(c, v, v->name, LM_BUFFER_ROLE_INPUT, &placeholders[k]);
            if (st) return err_prefix(st, "graph input '%s'", v->name);
        }
        /* Unused inputs too: the binary takes every input the model declares. */
        if (v->konst) continue;
        lmnn_dtype dtype = fe_boundary_dtype(v->type.elem);
        int64_t volume = fe_type_volume(&v->type);
        size_t size = (size_t)volume * 4;
        void *data = NULL;
        lm_status st = LM_OK;
        if (golden[k])
            st = fe_host_data(golden[k], dtype, v->name, &data, &size);
        else if (!(data = calloc(1, size ? size : 4)))
            st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        if (st) return st;
        lmnn_shape shape = fe_shape(v->type.rank, v->type.dims);
        lmnn_tensor_options o;
        lmnn_tensor_options_init(&o);
        o.dtype = dtype;
        o.layout = LMNN_ROW_MAJOR;
        lmnn_tensor t;
        st = lmnn_from_host(c->device, &shape, data, size, &o, &t);
        free(data);
        if (st) return err_prefix(st, "graph input '%s'", v->name);
        if (capture && (st = name_tensor(t, v->name, LM_BUFFER_ROLE_INPUT, &v->type))) {
            fe_free(t);
            return err_prefix(st, "graph input '%s'", v->name);
        }
        if ((st = fe_bind_rm(c, vi, t))) return st;
    }
    if (c->opts->seed_input) {
        /* The run seed: a uint32 scalar the binary takes by name. */
        fe_type scalar = {.elem = FE_UINT32, .rank = 0};
        lmnn_shape shape = fe_shape(0, NULL);
        lmnn_tensor_options o;
        lmnn_tensor_options_init(&o);
        o.dtype = LMNN_UINT32;
        o.layout = LMNN_ROW_MAJOR;
        lm_status st = lmnn_from_host(c->device, &shape, &c->opts->seed_value,
                                      sizeof c->opts->seed_value, &o, &c->run_seed);
        if (!st && capture)
            st = name_tensor(c->run_seed, c->opts->seed_input, LM_BUFFER_ROLE_INPUT, &scalar);
        if (st) return err_prefix(st, "seed input '%s'", c->opts->seed_input);
    }
    return LM_OK;
}

static lm_status read_outputs(fe_ctx *c, lmnn_tensor *outs, bool capture, bool golden) {
    fe_graph *g = c->g;
    lm_command_queue *cq = lm_device_command_queue(c->device, 0);
    for (uint32_t k = 0; k < g->output_count; k++) {
        fe_value *v = &g->values[g->outputs[k]];
        const char *name = fe_output_name(g, k);
        lm_status st;
        if (!outs[k].id) { /* empty */
            if (capture && (st = placeholder(c, v, name, LM_BUFFER_ROLE_OUTPUT, &outs[k])))
                return err_prefix(st, "graph output '%s'", name);
            continue;
        }
        if (capture && (st = name_tensor(outs[k], name, LM_BUFFER_ROLE_OUTPUT, &v->type)))
            return err_prefix(st, "graph output '%s'", name);
        size_t size;
        if ((st = lmnn_tensor_host_size(outs[k], &size))) return st;
        void *buf = malloc(size ? size : 1);
        if (!buf) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        st = lmnn_to_host(outs[k], buf, size);
        free(buf);
        if (st) return st;
        if (capture && golden) {
            lmnn_tensor_info info;
            if ((st = lmnn_tensor_get_info(outs[k], &info))) return st;
            if ((st = lm_capture_compare_to_capture(cq, info.buffer))) return st;
        }
    }
    return LM_OK;
}

/* One run of the model: inputs, nodes, outputs (into `outs`, one per graph
 * output, which the caller frees: after the capture ends, so the binary's
 * outputs stay allocated to its end). Inside a capture unless `capture` is
 * false (the warm-up of a trace compile). */
static lm_status run_model(fe_ctx *c, bool capture, const fe_tensor *const *golden,
                           double *node_seconds, lmnn_tensor *ins, lmnn_tensor *outs) {
    fe_graph *g = c->g;
    lm_command_queue *cq = lm_device_command_queue(c->device, 0);
    fe_plan_reset_uses(c);
    lm_status st = lm_device_set_launch_label(c->device, "input");
    if (!st) st = create_inputs(c, capture, golden, ins);
    uint32_t trace_id = 0;
    c->traced = false;
    bool tracing = capture && c->opts->trace;
    if (!st && tracing) st = lm_begin_trace_capture(cq, &trace_id);
    if (!st) st = lower_all(c, node_seconds);
    if (!st) st = lm_device_set_launch_label(c->device, "output");
    for (uint32_t k = 0; !st && k < g->output_count; k++) {
        st = output_tensor(c, g->outputs[k], &outs[k]);
        if (st) err_prefix(st, "graph output '%s'", fe_output_name(g, k));
    }
    lm_status st3 = lm_device_set_launch_label(c->device, NULL);
    if (!st) st = st3;
    if (tracing) {
        lm_status st2 = lm_end_trace_capture(cq, trace_id);
        if (st2 == LM_ERR_OUT_OF_DEVICE_MEMORY && !st)
            err_prefix(st2, "the model's trace is larger than the device's trace region: compile "
                            "with a larger --trace-region (options: trace_region_size, or a "
                            "device opened with a larger lm_device_options.trace_region_size)");
        if (!st2) {
            c->trace_id = trace_id;
            c->traced = true;
        }
        if (!st) st = st2;
        if (!st) st = lm_replay_trace(cq, trace_id, false);
    }
    if (!st) st = read_outputs(c, outs, capture, golden != NULL && c->opts->golden_input_count);
    fe_free(c->run_seed);
    c->run_seed = (lmnn_tensor){0};
    return st;
}

/* The seed input's name is new to the model, and the model draws. */
static lm_status check_seed_input(fe_ctx *c) {
    const char *name = c->opts->seed_input;
    if (!name) return LM_OK;
    if (!name[0]) return err_set(LM_ERR_INVALID_ARGUMENT, "opts->seed_input is empty");
    fe_graph *g = c->g;
    for (uint32_t k = 0; k < g->input_count; k++)
        if (!strcmp(g->values[g->inputs[k]].name, name))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "opts->seed_input: '%s' is already one of the model's inputs", name);
    for (uint32_t k = 0; k < g->output_count; k++)
        if (!strcmp(fe_output_name(g, k), name))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "opts->seed_input: '%s' is already one of the model's outputs", name);
    for (uint32_t k = 0; k < g->node_count; k++)
        if (c->plans[k].placement == LMFE_ON_DEVICE && fe_draws_random(c, &g->nodes[k]))
            return LM_OK;
    return err_set(LM_ERR_INVALID_ARGUMENT,
                   "opts->seed_input: the model draws no random numbers, so '%s' would change "
                   "nothing",
                   name);
}

/* ---- the entry point ---- */

static void compile_cleanup(fe_ctx *c) {
    if (c->device) fe_values_release_all(c);
    free(c->devs);
    free(c->nms_waiting);
    free(c->consts);
    free(c->slots);
    free(c->plans);
}

/* ---- the memory the model takes ----
 *
 * Measured, not estimated: the device's own allocation peak over the run,
 * above what the device held before (the caller's buffers, a previous
 * compile's), in DRAM and L1 buffers of all banks. It counts what the ops
 * allocate for themselves too (prepared weights, scratch), which an estimate
 * from tensor shapes cannot know. */

static const lm_buffer_type memories[] = {LM_BUFFER_DRAM, LM_BUFFER_L1};

static lm_status memory_begin(fe_ctx *c, uint64_t base[2]) {
    lm_status st = LM_OK;
    for (int m = 0; m < 2 && !st; m++) {
        lm_memory_stats ms;
        st = lm_device_get_memory_stats(c->device, memories[m], &ms);
        if (!st) st = lm_device_reset_memory_peak(c->device, memories[m]);
        base[m] = st ? 0 : ms.total_allocated_bytes;
    }
    return st;
}

static lm_status memory_end(fe_ctx *c, const uint64_t base[2]) {
    c->peak_device_bytes = 0;
    for (int m = 0; m < 2; m++) {
        lm_memory_stats ms;
        lm_status st = lm_device_get_memory_stats(c->device, memories[m], &ms);
        if (st) return st;
        c->peak_device_bytes += (ms.peak_allocated_bytes - base[m]) * ms.banks;
    }
    return LM_OK;
}

/* The DRAM of `device`, or of the device a compile opens (the defaults). */
static lm_status device_dram(lm_device *device, uint64_t *out_bytes) {
    uint64_t banks, bank_size;
    if (device) {
        lm_device_info info;
        lm_status st = lm_device_get_info(device, &info);
        if (st) return st;
        banks = info.dram_banks;
        bank_size = info.dram_bank_size;
    } else {
        lm_device_options o;
        lm_device_options_init(&o);
        banks = o.dram_banks;
        bank_size = o.dram_bank_size;
    }
    *out_bytes = banks * bank_size;
    return LM_OK;
}

/* The device time of the run profiled (see lmfe_compile_onnx), by op type:
 * each launch label's first word is its node's op type (label_node). */
static void add_device_time(summary *s, const lm_profile_entry *e, size_t n, lmfe_report *r) {
    for (size_t i = 0; i < n; i++) {
        r->device_seconds += e[i].seconds;
        size_t len = strcspn(e[i].label, " ");
        for (size_t k = 0; k < s->count; k++) {
            lmfe_op_summary *row = &s->rows[k];
            if (row->placement == LMFE_ON_DEVICE && strlen(row->op_type) == len &&
                !memcmp(row->op_type, e[i].label, len)) {
                row->device_seconds += e[i].seconds;
                break;
            }
        }
    }
}

/* The profile of the run just made (queue 0 finished first: the
 * frontend enqueues there only). */
static lm_status take_profile(fe_ctx *c, lm_profile_entry **out, size_t *out_count) {
    lm_status st = lm_finish(lm_device_command_queue(c->device, 0));
    return st ? st : lm_device_get_profile(c->device, out, out_count);
}

/* Whether node n's lowering launched a program in the run profiled: a
 * node that launched nothing (a reshape that kept the pages, so a view of
 * its input; a transpose its reader applies) did no device work. */
static bool launched(const fe_node *n, const lm_profile_entry *e, size_t count) {
    char label[LM_MAX_LAUNCH_LABEL + 1];
    node_label(n, label);
    for (size_t i = 0; i < count; i++)
        if (e[i].launches && !strcmp(e[i].label, label)) return true;
    return false;
}

static lm_status report_fill(fe_ctx *c, const double *node_seconds, double seconds,
                             const lm_profile_entry *profile, size_t profile_count,
                             lmfe_report *r) {
    summary s = {0};
    lm_status st = LM_OK;
    memset(r, 0, sizeof *r);
    for (uint32_t k = 0; !st && k < c->g->node_count; k++) {
        const fe_node *n = &c->g->nodes[k];
        /* The registry's name, which outlives the graph (every node of a
         * compiled model has a registered op). */
        const fe_op_def *op = fe_op_find(n->op_type);
        lmfe_placement p = c->plans[k].placement;
        if (p == LMFE_ON_DEVICE && !launched(n, profile, profile_count)) p = LMFE_VIEW;
        st = summary_add(&s, op ? op->op_type : "?", p, node_seconds[k]);
        r->nodes++;
        r->device_nodes += p == LMFE_ON_DEVICE;
        r->lowered_nodes += c->plans[k].lowered_precision;
    }
    if (st) {
        free(s.rows);
        return st;
    }
    add_device_time(&s, profile, profile_count, r);
    r->ops = s.rows;
    r->op_count = s.count;
    r->weight_bytes = c->weight_bytes;
    r->peak_device_bytes = c->peak_device_bytes;
    r->seconds = seconds;
    return fe_report_notes(c, r);
}

lm_status lmfe_compile_onnx(const char *path, const lmfe_compile_options *opts,
                            lm_binary **out_binary, lmfe_report *out_report) {
    static const char fn[] = "lmfe_compile_onnx";
    if (!path) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (!out_binary) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_binary is NULL", fn);
    *out_binary = NULL;
    if (out_report) memset(out_report, 0, sizeof *out_report);
    lmfe_compile_options defaults;
    lmfe_compile_options_init(&defaults);
    if (!opts) opts = &defaults;
    if ((unsigned)opts->dtype > LMFE_DTYPE_BFP8)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: opts->dtype: expected 0..2, given %d", fn,
                       (int)opts->dtype);
    /* Each list: a count needs its array. */
    const struct {
        const char *name;
        const void *array;
        size_t count;
    } lists[] = {{"input_shapes", opts->input_shapes, opts->input_shape_count},
                 {"dims", opts->dims, opts->dim_count},
                 {"constants", opts->constants, opts->constant_count},
                 {"golden_inputs", opts->golden_inputs, opts->golden_input_count},
                 {"sequence_lengths", opts->sequence_lengths, opts->sequence_length_count},
                 {"absent_inputs", opts->absent_inputs, opts->absent_input_count},
                 {"outputs", opts->outputs, opts->output_count}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (lists[i].count && !lists[i].array)
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s: opts->%s is NULL with a count of %zu", fn,
                           lists[i].name, lists[i].count);
    double t0 = now_s();
    fe_graph *g;
    lm_status st = fe_onnx_load(path, &g);
    if (st) return err_prefix(st, "%s", fn);
    fe_ctx c = {.g = g, .opts = opts};
    c.float_dtype = opts->dtype == LMFE_DTYPE_FP32 ? LMNN_FLOAT32 : LMNN_BFLOAT16;
    c.bfp8_weights = opts->dtype == LMFE_DTYPE_BFP8;
    const fe_tensor **golden = NULL;
    double *node_seconds = NULL;
    lm_device *own = NULL;
    lm_binary *binary = NULL;
    bool capturing = false;
    lmnn_tensor *outs = NULL, *ins = NULL;

    st = fe_graph_cut(g, opts->outputs, opts->output_count);
    if (!st) st = device_dram(opts->device, &c.dram_bytes);
    if (!st) st = fe_plan_init(&c);
    if (!st) st = fe_bind_inputs(&c, &golden);
    if (!st) st = fe_infer_graph(&c);
    if (!st) st = fe_plan_graph(&c);
    if (!st) st = check_seed_input(&c);
    /* Sized now: sequences have become their tensors (more inputs and
     * outputs than the file lists). */
    if (!st && (!(node_seconds = calloc(g->node_count + 1, sizeof *node_seconds)) ||
                !(outs = calloc(g->output_count ? g->output_count : 1, sizeof *outs)) ||
                !(ins = calloc(g->input_count ? g->input_count : 1, sizeof *ins))))
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (!st && opts->trace_region_size && (opts->device || !opts->trace))
        st = err_set(LM_ERR_INVALID_ARGUMENT,
                     "opts->trace_region_size is the trace region of the device a traced "
                     "compile opens: %s",
                     opts->device ? "open opts->device with lm_device_options.trace_region_size"
                                  : "set opts->trace too");
    if (!st && !opts->device) {
        lm_device_options dopts;
        lm_device_options_init(&dopts);
        if (opts->trace_region_size) dopts.trace_region_size = opts->trace_region_size;
        st = lm_device_open(&dopts, &own);
        if (st && opts->trace_region_size) err_prefix(st, "opts->trace_region_size");
    }
    c.device = opts->device ? opts->device : own;
    uint64_t memory_base[2];
    if (!st) st = memory_begin(&c, memory_base);
    /* The device time of each op comes from the run that executes the
     * programs one by one: the warm-up of a trace compile, else the
     * captured run. */
    lm_profile_entry *profile = NULL;
    size_t profile_count = 0;
    if (!st) st = lm_device_set_profiling(c.device, true);
    if (!st && opts->trace) {
        /* The warm-up: every program built and every constant uploaded
         * before the trace, which may do neither. */
        st = run_model(&c, false, golden, NULL, ins, outs);
        if (!st) st = take_profile(&c, &profile, &profile_count);
        for (uint32_t k = 0; k < g->output_count; k++)
            fe_free(outs[k]);
        memset(outs, 0, g->output_count * sizeof *outs);
        if (!st) fe_release_non_constants(&c);
    }
    if (!st) st = lm_light_metal_begin_capture(c.device, NULL);
    capturing = !st;
    if (!st) st = run_model(&c, true, golden, node_seconds, ins, outs);
    if (!st && !opts->trace) st = take_profile(&c, &profile, &profile_count);
    if (!st) st = memory_end(&c, memory_base);
    if (capturing) {
        lm_status st2 = lm_light_metal_end_capture(c.device, &binary);
        if (!st) st = st2;
    }
    /* The trace holds the memory of the tensors freed while it was captured
     * (a replay writes there): released after the capture, so the caller's
     * device is left as it was. */
    if (c.traced) {
        lm_finish(lm_device_command_queue(c.device, 0));
        lm_status st2 = lm_release_trace(c.device, c.trace_id);
        if (!st) st = st2;
    }
    for (uint32_t k = 0; outs && k < g->output_count; k++)
        fe_free(outs[k]);
    for (uint32_t k = 0; ins && k < g->input_count; k++)
        fe_free(ins[k]);
    free(outs);
    free(ins);
    if (!st && out_report)
        st = report_fill(&c, node_seconds, now_s() - t0, profile, profile_count, out_report);
    lm_profile_free(profile);
    if (c.device) lm_device_set_profiling(c.device, false);
    compile_cleanup(&c);
    if (own) {
        lm_status st2 = lm_device_close(own);
        if (!st) st = st2;
    }
    free(node_seconds);
    free(golden);
    fe_graph_free(g);
    if (st) {
        lm_binary_free(binary);
        if (out_report) lmfe_report_free(out_report);
        return err_prefix(st, "%s: %s", fn, path);
    }
    *out_binary = binary;
    return LM_OK;
}
