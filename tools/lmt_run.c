/* `lightmetal run`: replay a binary, feed inputs, save outputs, summarise.
 *
 * The file is mapped and handed to lm_replay_open, which verifies it; the
 * tool then reads buffer names and sizes from the same (now verified)
 * mapping. The replay API has no progress callback, so on a terminal the
 * tool prints one "replaying ..." status line on stderr while the replay
 * runs and erases it before the summary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lightmetal/lm_replay.h"
#include "lmt.h"
#include "lmt_json.h"

/* One --input or --output: NAME=PATH (the name copied, the path pointing
 * into argv). */
typedef struct run_binding {
    const char *name;
    const char *path;
    void *data; /* input bytes, read before the run */
    size_t size;
} run_binding;

typedef struct run_args {
    const char *path;
    lm_replay_options opts;
    bool json;
    run_binding *inputs, *outputs;
    size_t input_count, output_count;
} run_args;

static bool parse_binding(const char *opt, const char *text, run_binding *out) {
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || eq[1] == '\0') {
        lmt_error("run", "%s: '%s' is not NAME=PATH", opt, text);
        return false;
    }
    size_t n = (size_t)(eq - text);
    char *name = malloc(n + 1);
    if (!name) {
        lmt_error("run", "out of memory");
        return false;
    }
    memcpy(name, text, n);
    name[n] = '\0';
    out->name = name;
    out->path = eq + 1;
    return true;
}

/* Returns -1 to go on, or the exit code. */
static int parse_run_args(int argc, char **argv, run_args *ra) {
    lmt_args a;
    lmt_args_init(&a, "run", argc, argv);
    for (lmt_arg_kind k; (k = lmt_args_next(&a)) != LMT_ARG_END;) {
        const char *v;
        if (k == LMT_ARG_POSITIONAL) {
            if (ra->path) {
                lmt_error("run", "unexpected argument '%s' (one FILE only)", a.value);
                return LMT_EXIT_INVALID;
            }
            ra->path = a.value;
        } else if (lmt_args_is_help(&a)) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            lmt_print_help("run");
            return LMT_EXIT_OK;
        } else if (!strcmp(a.opt, "--json")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ra->json = true;
        } else if (!strcmp(a.opt, "--loop")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_u32("run", "--loop", v, 1, UINT32_MAX, &ra->opts.loops))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--threads")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_u32("run", "--threads", v, 1, 1024, &ra->opts.num_threads))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--tolerance")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_tolerance("run", "--tolerance", v, &ra->opts.atol, &ra->opts.rtol))
                return LMT_EXIT_INVALID;
            ra->opts.tolerance = true;
        } else if (!strcmp(a.opt, "--input") || !strcmp(a.opt, "--output")) {
            bool in = !strcmp(a.opt, "--input");
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            /* At most argc bindings of each kind: the arrays were sized so. */
            run_binding *b = in ? &ra->inputs[ra->input_count++] : &ra->outputs[ra->output_count++];
            if (!parse_binding(in ? "--input" : "--output", v, b)) return LMT_EXIT_INVALID;
        } else {
            lmt_args_unknown(&a);
            return LMT_EXIT_INVALID;
        }
    }
    if (!ra->path) {
        lmt_error("run", "missing FILE (see 'lightmetal run --help')");
        return LMT_EXIT_INVALID;
    }
    return -1;
}

/* Exit code of a replay status (the message is lm_last_error()). */
static int exit_code(lm_status st) {
    switch (st) {
    case LM_OK:
        return LMT_EXIT_OK;
    case LM_ERR_MISMATCH:
        return LMT_EXIT_MISMATCH;
    case LM_ERR_DEVICE_FAULT:
        return LMT_EXIT_FAULT;
    default:
        return LMT_EXIT_INVALID;
    }
}

/* The size of the buffer an --output names (lm_replay_get_output wants it). */
static bool output_size(fb_table root, const run_binding *b, uint64_t *out_size) {
    uint32_t id;
    lmb_BufferRole role;
    if (!lmt_find_named_buffer(root, b->name, &id, &role) || !lmt_buffer_size(root, id, out_size)) {
        lmt_error("run", "--output: the binary has no buffer named '%s' (see 'lightmetal info')",
                  b->name);
        return false;
    }
    return true;
}

/* The replay checks each input's name and size against the file. */
static int feed_inputs(lm_replay *r, run_args *ra) {
    for (size_t i = 0; i < ra->input_count; i++) {
        run_binding *b = &ra->inputs[i];
        lm_status st = file_read_all(b->path, &b->data, &b->size);
        if (!st) st = lm_replay_set_input(r, b->name, b->data, b->size);
        if (st) {
            lmt_error("run", "--input %s: %s", b->name, lm_last_error());
            return exit_code(st);
        }
    }
    return -1;
}

static int save_outputs(lm_replay *r, fb_table root, const run_args *ra) {
    for (size_t i = 0; i < ra->output_count; i++) {
        const run_binding *b = &ra->outputs[i];
        uint64_t size;
        if (!output_size(root, b, &size)) return LMT_EXIT_INVALID;
        if (size > SIZE_MAX) {
            lmt_error("run", "--output %s: %" PRIu64 " bytes do not fit in memory", b->name, size);
            return LMT_EXIT_INVALID;
        }
        void *data = malloc(size ? (size_t)size : 1);
        if (!data) {
            lmt_error("run", "--output %s: out of memory for %" PRIu64 " bytes", b->name, size);
            return LMT_EXIT_INVALID;
        }
        lm_status st = lm_replay_get_output(r, b->name, data, size);
        if (!st) {
            file_chunk chunk = {data, (size_t)size};
            st = file_save_atomic(b->path, &chunk, 1);
        }
        free(data);
        if (st) {
            lmt_error("run", "--output %s: %s", b->name, lm_last_error());
            return exit_code(st);
        }
    }
    return -1;
}

static void print_summary(const run_args *ra, lm_status st, const lm_replay_report *rep) {
    if (ra->json) {
        lmt_json j;
        lmt_json_init(&j, stdout);
        lmt_json_begin_object(&j, NULL);
        lmt_json_cstr(&j, "file", ra->path);
        lmt_json_cstr(&j, "result", st == LM_OK ? "ok" : "mismatch");
        lmt_json_u64(&j, "loops", ra->opts.loops);
        lmt_json_u64(&j, "commands", rep->commands);
        lmt_json_u64(&j, "programs", rep->programs);
        lmt_json_u64(&j, "bytes_written", rep->bytes_written);
        lmt_json_u64(&j, "bytes_read", rep->bytes_read);
        lmt_json_u64(&j, "goldens_checked", rep->goldens_checked);
        lmt_json_u64(&j, "goldens_failed", rep->goldens_failed);
        if (ra->opts.tolerance) {
            lmt_json_double(&j, "max_abs_error", rep->max_abs_error);
            lmt_json_double(&j, "max_rel_error", rep->max_rel_error);
        }
        if (rep->goldens_failed) lmt_json_u64(&j, "first_mismatch", rep->first_mismatch);
        lmt_json_double(&j, "seconds", rep->seconds);
        lmt_json_end_object(&j);
        return;
    }
    printf("%s: %s\n", ra->path, st == LM_OK ? "ok" : "golden mismatch");
    printf("  loops:       %u\n", (unsigned)ra->opts.loops);
    printf("  commands:    %" PRIu64 "\n", rep->commands);
    printf("  programs:    %" PRIu64 "\n", rep->programs);
    printf("  bytes moved: %" PRIu64 " written, %" PRIu64 " read\n", rep->bytes_written,
           rep->bytes_read);
    printf("  goldens:     %u checked, %u failed\n", (unsigned)rep->goldens_checked,
           (unsigned)rep->goldens_failed);
    if (ra->opts.tolerance)
        printf("  max error:   %.3g abs, %.3g rel\n", rep->max_abs_error, rep->max_rel_error);
    if (rep->goldens_failed) printf("  first mismatch at %" PRIu64 "\n", rep->first_mismatch);
    printf("  time:        %.3f s\n", rep->seconds);
}

static int run_replay(run_args *ra) {
    file_mapping map = {NULL, 0};
    lm_replay *r = NULL;
    int rc;
    lm_status st = file_map(ra->path, &map);
    if (st) {
        lmt_error("run", "%s", lm_last_error());
        return LMT_EXIT_INVALID;
    }
    static const uint8_t empty[8];
    const void *data = map.data ? map.data : empty;
    st = lm_replay_open(data, map.size, &r);
    if (st) {
        lmt_error("run", "%s: %s", ra->path, lm_last_error());
        rc = exit_code(st);
        goto done;
    }
    fb_table root = lmb_root(data); /* verified by lm_replay_open */
    if ((rc = feed_inputs(r, ra)) >= 0) goto done;
    /* Unknown output names fail before the replay spends any time. */
    for (size_t i = 0; i < ra->output_count; i++) {
        uint64_t size;
        if (!output_size(root, &ra->outputs[i], &size)) {
            rc = LMT_EXIT_INVALID;
            goto done;
        }
    }

    bool tty = isatty(fileno(stderr));
    if (tty) {
        fprintf(stderr, "replaying %s (%u loop%s)...", ra->path, (unsigned)ra->opts.loops,
                ra->opts.loops == 1 ? "" : "s");
        fflush(stderr);
    }
    lm_replay_report rep;
    memset(&rep, 0, sizeof rep);
    st = lm_replay_run(r, NULL, &ra->opts, &rep);
    if (tty) fputs("\r\033[K", stderr);
    if (st != LM_OK && st != LM_ERR_MISMATCH) {
        lmt_error("run", "%s: %s", ra->path, lm_last_error());
        rc = exit_code(st);
        goto done;
    }
    if (st == LM_ERR_MISMATCH) {
        /* The replay stops at the first mismatch, before the named buffers
         * are read back, so there are no outputs to save. */
        print_summary(ra, st, &rep);
        lmt_error("run", "%s: %s%s", ra->path, lm_last_error(),
                  ra->output_count ? " (outputs not saved)" : "");
        rc = LMT_EXIT_MISMATCH;
        goto done;
    }
    if ((rc = save_outputs(r, root, ra)) >= 0) goto done;
    print_summary(ra, st, &rep);
    rc = LMT_EXIT_OK;
done:
    if (r) lm_replay_close(r);
    file_unmap(&map);
    return rc;
}

int lmt_cmd_run(int argc, char **argv) {
    run_args ra;
    memset(&ra, 0, sizeof ra);
    lm_replay_options_init(&ra.opts);
    size_t n = argc > 0 ? (size_t)argc : 1;
    ra.inputs = calloc(n, sizeof *ra.inputs);
    ra.outputs = calloc(n, sizeof *ra.outputs);
    int rc;
    if (!ra.inputs || !ra.outputs) {
        lmt_error("run", "out of memory");
        rc = LMT_EXIT_INVALID;
    } else if ((rc = parse_run_args(argc, argv, &ra)) < 0) {
        rc = run_replay(&ra);
    }
    for (size_t i = 0; i < ra.input_count; i++) {
        free((void *)ra.inputs[i].name);
        free(ra.inputs[i].data);
    }
    for (size_t i = 0; i < ra.output_count; i++)
        free((void *)ra.outputs[i].name);
    free(ra.inputs);
    free(ra.outputs);
    return rc;
}
