/* Building and launching an op's device program from embedded kernels. */
#include <string.h>

#include "nn/nn_internal.h"
#include "nn/nn_kernels.h"

/* Defines an op may give one kernel. */
#define NN_MAX_DEFINES 8

const char *nn_kernel_source(const char *name) {
    for (size_t i = 0; i < nn_kernel_count; i++)
        if (!strcmp(nn_kernels[i].name, name)) return nn_kernels[i].source;
    return NULL;
}

lm_status nn_program_begin(const char *op, lm_device *device, nn_program *prog) {
    prog->kernel_count = 0;
    lm_status st = lm_create_program(device, &prog->program);
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_program_kernel(const char *op, nn_program *prog, const nn_kernel_spec *spec,
                            lm_kernel *out_kernel) {
    const char *source = nn_kernel_source(spec->name);
    if (!source) return nn_fail(LM_ERR_INTERNAL, op, "no embedded kernel '%s'", spec->name);
    if (prog->kernel_count == NN_MAX_KERNELS)
        return nn_fail(LM_ERR_INTERNAL, op, "more than %d kernels in one program", NN_MAX_KERNELS);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, spec->processor);
    cfg.compile_args = spec->compile_args;
    cfg.compile_arg_count = spec->compile_arg_count;
    /* Data movement kernels get NN_DM: nn_kernel.h then gives them its NoC
     * helpers (compute kernels have no NoC). */
    lm_kernel_define defs[NN_MAX_DEFINES + 1];
    if (spec->define_count > NN_MAX_DEFINES)
        return nn_fail(LM_ERR_INTERNAL, op, "more than %d defines for one kernel", NN_MAX_DEFINES);
    for (uint32_t i = 0; i < spec->define_count; i++)
        defs[i] = spec->defines[i];
    uint32_t ndefs = spec->define_count;
    if (spec->processor != LM_PROCESSOR_COMPUTE) defs[ndefs++] = (lm_kernel_define){"NN_DM", NULL};
    cfg.defines = ndefs ? defs : NULL;
    cfg.define_count = ndefs;
    cfg.fp32_dest_acc_en = spec->fp32_dest_acc;
    cfg.language = LM_KERNEL_LANGUAGE_C;
    lm_kernel k;
    lm_status st =
        lm_create_kernel_from_string(prog->program, spec->name, source, &prog->cores, &cfg, &k);
    if (st) return nn_fail_call(st, op);
    prog->kernels[prog->kernel_count++] = k;
    if (out_kernel) *out_kernel = k;
    return LM_OK;
}

lm_status nn_program_cb(const char *op, nn_program *prog, uint32_t index, lm_data_format format,
                        uint32_t page_size, uint32_t pages) {
    lm_circular_buffer_config cfg;
    lm_circular_buffer_config_init(&cfg);
    cfg.total_size = page_size * pages;
    cfg.index_count = 1;
    cfg.indices[0] = (lm_cb_index_config){index, format, page_size};
    lm_circular_buffer cb;
    lm_status st = lm_create_circular_buffer(prog->program, &prog->cores, &cfg, &cb);
    return st ? nn_fail_call(st, op) : LM_OK;
}

void nn_program_discard(nn_program *prog) {
    if (prog->program.id) lm_release_program(prog->program);
    prog->program.id = 0;
}

lm_status nn_split_work(const char *op, lm_device *device, uint64_t units, nn_split *out) {
    lm_device_info info;
    lm_status st = lm_device_get_info(device, &info);
    if (st) return nn_fail_call(st, op);
    if (units == 0 || units > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "%llu units of work cannot be split",
                       (unsigned long long)units);
    /* The simulator runs the cores on the host's threads, and every core a
     * program uses costs a fixed start (its kernels) whatever its share:
     * beyond a few cores per thread (enough to keep the threads even) more
     * only add that cost. */
    uint32_t grid = info.grid_x * info.grid_y, threads = info.num_threads ? info.num_threads : 1;
    if (grid > threads * NN_CORES_PER_THREAD) grid = threads * NN_CORES_PER_THREAD;
    uint32_t n = units < grid ? (uint32_t)units : grid;
    uint32_t base = (uint32_t)(units / n), extra = (uint32_t)(units % n), first = 0;
    out->num_cores = n;
    for (uint32_t i = 0; i < n; i++) {
        out->cores[i] = (lm_core){i % info.grid_x, i / info.grid_x};
        out->first[i] = first;
        out->count[i] = base + (i < extra);
        first += out->count[i];
    }
    /* The used cores as rectangles: full rows, then the partial last row. */
    uint32_t rows = n / info.grid_x, rest = n % info.grid_x;
    out->all.count = 0;
    if (rows)
        out->all.ranges[out->all.count++] = (lm_core_range){{0, 0}, {info.grid_x - 1, rows - 1}};
    if (rest) out->all.ranges[out->all.count++] = (lm_core_range){{0, rows}, {rest - 1, rows}};
    return LM_OK;
}

lm_status nn_program_split_args(const char *op, nn_program *prog, const nn_split *split) {
    return nn_program_split_args_with(op, prog, split, NULL, 0);
}

lm_status nn_program_split_args_with(const char *op, nn_program *prog, const nn_split *split,
                                     const uint32_t *extra, uint32_t extra_count) {
    lm_status st = LM_OK;
    for (uint32_t k = 0; k < prog->kernel_count && !st; k++)
        st = nn_kernel_split_args(op, prog, prog->kernels[k], split, extra, extra_count);
    return st;
}

lm_status nn_kernel_split_args(const char *op, nn_program *prog, lm_kernel kernel,
                               const nn_split *split, const uint32_t *extra, uint32_t extra_count) {
    uint32_t args[2 + NN_SPLIT_EXTRA_MAX];
    if (extra_count > NN_SPLIT_EXTRA_MAX)
        return nn_fail(LM_ERR_INTERNAL, op, "%u extra runtime args, at most %u", extra_count,
                       NN_SPLIT_EXTRA_MAX);
    if (extra_count) memcpy(args + 2, extra, extra_count * sizeof *extra);
    for (uint32_t i = 0; i < split->num_cores; i++) {
        args[0] = split->first[i];
        args[1] = split->count[i];
        lm_status st =
            lm_set_runtime_args(prog->program, kernel, split->cores[i], args, 2 + extra_count);
        if (st) return nn_fail_call(st, op);
    }
    return LM_OK;
}

lm_status nn_launch(const char *op, nn_program *prog, nn_tensor *const *tensors, uint32_t count) {
    return nn_launch_with(op, prog, tensors, count, NULL, 0);
}

lm_status nn_launch_with(const char *op, nn_program *prog, nn_tensor *const *tensors,
                         uint32_t count, const uint32_t *extra, uint32_t extra_count) {
    uint32_t addrs[16];
    if (count + extra_count > 16)
        return nn_fail(LM_ERR_INTERNAL, op, "more than 16 common arguments in one launch");
    for (uint32_t i = 0; i < count; i++)
        addrs[i] = (uint32_t)tensors[i]->address;
    for (uint32_t i = 0; i < extra_count; i++)
        addrs[count + i] = extra[i];
    lm_status st = LM_OK;
    for (uint32_t k = 0; k < prog->kernel_count && !st; k++)
        st =
            lm_set_common_runtime_args(prog->program, prog->kernels[k], addrs, count + extra_count);
    lm_device *device = tensors[0]->device;
    if (!st) st = lm_enqueue_program(lm_device_command_queue(device, 0), prog->program, false);
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_accessor_words(const char *op, const nn_tensor *t, uint32_t *out_words,
                            uint32_t *out_count) {
    lm_status st = lm_tensor_accessor_args(t->buffer, out_words, NN_ACCESSOR_WORDS, out_count);
    return st ? nn_fail_call(st, op) : LM_OK;
}

lm_status nn_tile_writer_args(const char *op, const nn_tensor *out, uint32_t out_arg, bool zero_pad,
                              uint32_t *out_args, uint32_t *out_count) {
    nn_tiles g = nn_tiles_of(&out->shape);
    uint32_t head[] = {
        g.ht, g.wt, g.h, g.w, out_arg, zero_pad, (uint32_t)nn_tile_format(out->dtype)};
    memcpy(out_args, head, sizeof head);
    uint32_t n = 0;
    lm_status st = nn_accessor_words(op, out, out_args + 7, &n);
    *out_count = 7 + n;
    return st;
}
