/* `lightmetal run`: replay a binary, feed inputs, save outputs, summarise.
 *
 * The file is mapped and handed to lm_replay_open, which verifies it; names,
 * sizes, formats and shapes of the named buffers come from the replay
 * (lm_replay_buffer_info_at). Inputs and outputs are raw bytes, or NumPy
 * .npy files when the path ends in ".npy" (lmt_npy.h): the buffer's
 * recorded format and shape decide the dtype and shape. A buffer whose
 * element type differs from its storage format (an int64 tensor held as
 * int32) takes and gives .npy arrays of the element type, converted here at
 * the boundary (range-checked on the way in); raw files stay in the storage
 * format.
 *
 * Outputs are saved after a run that passed and after a golden mismatch (so
 * the wrong result can be inspected), never after any other failure: the
 * replay reads nothing back then.
 *
 * The replay API has no progress callback, so on a terminal the tool prints
 * one "replaying ..." status line on stderr while the replay runs and erases
 * it before the summary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "lightmetal/lm_replay.h"
#include "lmt.h"
#include "lmt_json.h"
#include "lmt_npy.h"

/* One --input or --output: NAME=PATH (the name copied, the path pointing
 * into argv). */
typedef struct run_binding {
    const char *name;
    const char *path;
    bool npy;         /* PATH ends in ".npy" */
    void *file;       /* an input's whole file, read before the run */
    void *converted;  /* an input converted to its storage format, or NULL */
    const void *data; /* an input's data: the file, or the array inside a .npy */
    uint64_t size;
} run_binding;

typedef struct run_args {
    const char *path;
    lm_replay_options opts;
    bool json;
    run_binding *inputs, *outputs;
    size_t input_count, output_count;
} run_args;

static bool ends_with_npy(const char *path) {
    size_t n = strlen(path);
    if (n < 4) return false;
    const char *e = path + n - 4;
    return e[0] == '.' && (e[1] | 0x20) == 'n' && (e[2] | 0x20) == 'p' && (e[3] | 0x20) == 'y';
}

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
    out->npy = ends_with_npy(out->path);
    return true;
}

/* Returns -1 to go on, or the exit code. */
static int parse_run_args(int argc, char **argv, run_args *ra) {
    lmt_args a;
    lmt_args_init(&a, "run", argc, argv);
    bool no_goldens = false, tolerance = false;
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
        } else if (!strcmp(a.opt, "--profile")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ra->opts.profile = true;
        } else if (!strcmp(a.opt, "--no-goldens")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            no_goldens = true;
            ra->opts.check_goldens = false;
        } else if (!strcmp(a.opt, "--no-verify-hashes")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ra->opts.check_blob_hashes = false;
        } else if (!strcmp(a.opt, "--loop")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_u32("run", "--loop", v, 1, UINT32_MAX, &ra->opts.loops))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--threads")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_u32("run", "--threads", v, 1, 1024, &ra->opts.num_threads))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--strict-protocol")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ra->opts.strict_protocol = true;
        } else if (!strcmp(a.opt, "--watchdog")) {
            if (!lmt_args_value(&a, &v) || !lmt_parse_u64("run", "--watchdog", v, 1, UINT64_MAX,
                                                          &ra->opts.watchdog_instructions))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--tolerance")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_tolerance("run", "--tolerance", v, &ra->opts.atol, &ra->opts.rtol))
                return LMT_EXIT_INVALID;
            ra->opts.tolerance = tolerance = true;
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
    if (no_goldens && tolerance) {
        lmt_error("run", "--tolerance compares goldens, --no-goldens skips them: give one");
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

/* ------------------------------------------------------------ named buffers */

/* Finds the named buffer a binding refers to; reports it missing. */
static bool find_buffer(lm_replay *r, const char *opt, const char *name,
                        lm_replay_buffer_info *out) {
    uint32_t n = lm_replay_buffer_count(r);
    for (uint32_t i = 0; i < n; i++) {
        lm_replay_buffer_info bi;
        if (lm_replay_buffer_info_at(r, i, &bi) == LM_OK && !strcmp(bi.name, name)) {
            *out = bi;
            return true;
        }
    }
    lmt_error("run", "%s %s: the binary has no buffer named '%s' (see 'lightmetal info')", opt,
              name, name);
    return false;
}

/* A named buffer as a .npy array: its dtype and shape. */
typedef struct run_layout {
    lmt_npy_dtype dtype;      /* the storage format's dtype */
    lmt_npy_dtype elem_dtype; /* the element type's, when it differs; else INVALID */
    bool typed;               /* false: plain bytes, any dtype of the right byte size fits */
    bool shaped;              /* the capture recorded a shape (or a scalar) */
    uint32_t rank;
    uint64_t shape[LM_MAX_TENSOR_RANK];
    char shape_text[LM_MAX_TENSOR_RANK * 22 + 8];
} run_layout;

/* The dtype of a format: bfloat16 travels as its uint16 bit patterns,
 * block floats (BFP8_B) and unformatted buffers as bytes. */
static lmt_npy_dtype dtype_of_format(lm_data_format f) {
    switch (f) {
    case LM_DATA_FORMAT_FLOAT32:
        return LMT_NPY_F4;
    case LM_DATA_FORMAT_FLOAT16_B:
        return LMT_NPY_U2;
    case LM_DATA_FORMAT_UINT32:
        return LMT_NPY_U4;
    case LM_DATA_FORMAT_INT32:
        return LMT_NPY_I4;
    default:
        return LMT_NPY_U1;
    }
}

/* The dtype of an element type other than the format's own. */
static lmt_npy_dtype dtype_of_element_type(lm_element_type t) {
    switch (t) {
    case LM_ELEMENT_TYPE_FLOAT64:
        return LMT_NPY_F8;
    case LM_ELEMENT_TYPE_FLOAT16:
        return LMT_NPY_F2;
    case LM_ELEMENT_TYPE_INT64:
        return LMT_NPY_I8;
    case LM_ELEMENT_TYPE_INT16:
        return LMT_NPY_I2;
    case LM_ELEMENT_TYPE_INT8:
        return LMT_NPY_I1;
    case LM_ELEMENT_TYPE_UINT16:
        return LMT_NPY_U2;
    case LM_ELEMENT_TYPE_UINT8:
        return LMT_NPY_U1;
    case LM_ELEMENT_TYPE_BOOL:
        return LMT_NPY_B1;
    case LM_ELEMENT_TYPE_UINT64:
        return LMT_NPY_U8;
    default:
        return LMT_NPY_INVALID;
    }
}

static void buffer_layout(const lm_replay_buffer_info *bi, run_layout *l) {
    memset(l, 0, sizeof *l);
    l->dtype = dtype_of_format(bi->format);
    unsigned esize = lmt_npy_dtype_size(l->dtype);
    l->typed = l->dtype != LMT_NPY_U1 && bi->size % esize == 0;
    l->rank = 1;
    if (!l->typed) {
        l->dtype = LMT_NPY_U1;
        l->shape[0] = bi->size;
    } else if (bi->scalar) {
        l->shaped = true;
        l->rank = 0;
    } else if (bi->rank > 0 && bi->rank <= LM_MAX_TENSOR_RANK) {
        l->shaped = true;
        l->rank = bi->rank;
        memcpy(l->shape, bi->shape, bi->rank * sizeof bi->shape[0]);
    } else {
        l->shape[0] = bi->size / esize;
    }
    /* The replay verified that the element type fits the (4-byte) format. */
    if (l->typed) l->elem_dtype = dtype_of_element_type(bi->element_type);
    lmt_npy_format_shape(l->rank, l->shape, l->shape_text, sizeof l->shape_text);
}

/* What the buffer holds, for messages: "Float32 ('<f4') shape (32, 32)". */
static void describe_buffer(const lm_replay_buffer_info *bi, const run_layout *l, char *dst,
                            size_t size) {
    if (l->elem_dtype && l->shaped)
        snprintf(dst, size, "%s ('%s', or its storage %s '%s') of shape %s",
                 lm_element_type_name(bi->element_type), lmt_npy_dtype_descr(l->elem_dtype),
                 lm_data_format_name(bi->format), lmt_npy_dtype_descr(l->dtype), l->shape_text);
    else if (l->elem_dtype)
        snprintf(dst, size, "%" PRIu64 " %s ('%s', or its storage %s '%s') elements", l->shape[0],
                 lm_element_type_name(bi->element_type), lmt_npy_dtype_descr(l->elem_dtype),
                 lm_data_format_name(bi->format), lmt_npy_dtype_descr(l->dtype));
    else if (!l->typed)
        snprintf(dst, size, "%" PRIu64 " bytes of %s", bi->size,
                 bi->format ? lm_data_format_name(bi->format) : "plain bytes");
    else if (l->shaped)
        snprintf(dst, size, "%s ('%s') of shape %s", lm_data_format_name(bi->format),
                 lmt_npy_dtype_descr(l->dtype), l->shape_text);
    else
        snprintf(dst, size, "%" PRIu64 " %s ('%s') elements", l->shape[0],
                 lm_data_format_name(bi->format), lmt_npy_dtype_descr(l->dtype));
}

/* Checks a parsed .npy file against the buffer it feeds. The dtype must be
 * the buffer's (its element type's or its storage format's), and the shape
 * too when the capture recorded one (otherwise the element count); a buffer
 * of plain bytes takes any dtype of its size. */
static bool npy_fits(const run_binding *b, const lm_replay_buffer_info *bi, const lmt_npy *a) {
    run_layout l;
    buffer_layout(bi, &l);
    char want[320], given_shape[LMT_NPY_MAX_RANK * 22 + 8];
    describe_buffer(bi, &l, want, sizeof want);
    lmt_npy_format_shape(a->rank, a->shape, given_shape, sizeof given_shape);
    const char *dt = lmt_npy_dtype_descr(a->dtype);
    if (!l.typed) {
        if (a->data_size == bi->size) return true;
        lmt_error("run",
                  "--input %s: %s holds %" PRIu64 " bytes ('%s', shape %s), buffer '%s' "
                  "takes %s",
                  b->name, b->path, a->data_size, dt, given_shape, b->name, want);
        return false;
    }
    if (a->dtype != l.dtype && (!l.elem_dtype || a->dtype != l.elem_dtype)) {
        lmt_error("run", "--input %s: %s has dtype '%s', buffer '%s' takes %s", b->name, b->path,
                  dt, b->name, want);
        return false;
    }
    bool same = a->rank == l.rank;
    for (uint32_t i = 0; same && i < l.rank; i++)
        same = a->shape[i] == l.shape[i];
    /* One element fits either a scalar or a (1,) name: older binaries name
     * scalars (1,), and NumPy users write either. */
    same |= a->count == 1 && a->rank <= 1 && l.rank <= 1 && (l.rank == 0 || l.shape[0] == 1);
    if (l.shaped && !same) {
        lmt_error("run", "--input %s: %s has shape %s, buffer '%s' takes %s", b->name, b->path,
                  given_shape, b->name, want);
        return false;
    }
    if (!l.shaped && a->count != l.shape[0]) {
        lmt_error("run", "--input %s: %s has %" PRIu64 " elements (shape %s), buffer '%s' takes %s",
                  b->name, b->path, a->count, given_shape, b->name, want);
        return false;
    }
    return true;
}

/* Reads every input file and hands it to the replay (which checks raw
 * inputs' sizes itself). */
static int feed_inputs(lm_replay *r, run_args *ra) {
    for (size_t i = 0; i < ra->input_count; i++) {
        run_binding *b = &ra->inputs[i];
        lm_replay_buffer_info bi;
        if (!find_buffer(r, "--input", b->name, &bi)) return LMT_EXIT_INVALID;
        if (bi.role == LM_BUFFER_ROLE_OUTPUT) {
            /* The replay would accept it and never use it. */
            lmt_error("run",
                      "--input %s: buffer '%s' is an Output (the workload never writes it from "
                      "the host); see 'lightmetal info'",
                      b->name, b->name);
            return LMT_EXIT_INVALID;
        }
        size_t size = 0;
        lm_status st = file_read_all(b->path, &b->file, &size);
        if (st) {
            lmt_error("run", "--input %s: %s", b->name, lm_last_error());
            return LMT_EXIT_INVALID;
        }
        b->data = b->file;
        b->size = size;
        if (b->npy) {
            lmt_npy a;
            if ((st = lmt_npy_parse(b->file, size, &a))) {
                lmt_error("run", "--input %s: %s: %s", b->name, b->path, lm_last_error());
                return LMT_EXIT_INVALID;
            }
            if (!npy_fits(b, &bi, &a)) return LMT_EXIT_INVALID;
            b->data = a.data;
            b->size = a.data_size;
            run_layout l;
            buffer_layout(&bi, &l);
            if (l.elem_dtype && a.dtype == l.elem_dtype) {
                /* Element type -> storage: a.count 4-byte elements, which
                 * npy_fits matched to the buffer's size. */
                b->converted = malloc(bi.size ? (size_t)bi.size : 1);
                if (!b->converted) {
                    lmt_error("run", "--input %s: out of memory for %" PRIu64 " bytes", b->name,
                              bi.size);
                    return LMT_EXIT_INVALID;
                }
                if ((st = lmt_npy_to_storage(a.dtype, a.data, a.count, bi.format, b->converted))) {
                    lmt_error("run", "--input %s: %s: %s (buffer '%s' stores %s as %s)", b->name,
                              b->path, lm_last_error(), b->name,
                              lm_element_type_name(bi.element_type),
                              lm_data_format_name(bi.format));
                    return LMT_EXIT_INVALID;
                }
                b->data = b->converted;
                b->size = bi.size;
            }
        }
        if ((st = lm_replay_set_input(r, b->name, b->data, b->size))) {
            lmt_error("run", "--input %s: %s", b->name, lm_last_error());
            return exit_code(st);
        }
    }
    return -1;
}

static int save_outputs(lm_replay *r, const run_args *ra) {
    for (size_t i = 0; i < ra->output_count; i++) {
        const run_binding *b = &ra->outputs[i];
        lm_replay_buffer_info bi;
        if (!find_buffer(r, "--output", b->name, &bi)) return LMT_EXIT_INVALID;
        if (bi.size > SIZE_MAX) {
            lmt_error("run", "--output %s: %" PRIu64 " bytes do not fit in memory", b->name,
                      bi.size);
            return LMT_EXIT_INVALID;
        }
        void *data = malloc(bi.size ? (size_t)bi.size : 1);
        if (!data) {
            lmt_error("run", "--output %s: out of memory for %" PRIu64 " bytes", b->name, bi.size);
            return LMT_EXIT_INVALID;
        }
        lm_status st = lm_replay_get_output(r, b->name, data, bi.size);
        void *converted = NULL;
        if (!st) {
            char header[LMT_NPY_HEADER_MAX];
            file_chunk chunks[2];
            size_t nchunks = 0;
            const void *body = data;
            size_t body_size = (size_t)bi.size;
            if (b->npy) {
                run_layout l;
                buffer_layout(&bi, &l);
                lmt_npy_dtype dt = l.dtype;
                if (l.elem_dtype) {
                    /* Storage -> element type: 4-byte elements in, at most 8 out. */
                    uint64_t count = bi.size / 4;
                    unsigned esize = lmt_npy_dtype_size(l.elem_dtype);
                    body_size = count <= SIZE_MAX / esize ? (size_t)(count * esize) : 0;
                    converted =
                        count <= SIZE_MAX / esize ? malloc(body_size ? body_size : 1) : NULL;
                    if (!converted) {
                        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY,
                                     "out of memory for %" PRIu64 " elements of %u bytes", count,
                                     esize);
                    } else {
                        lmt_npy_from_storage(bi.format, data, count, l.elem_dtype, converted);
                        body = converted;
                        dt = l.elem_dtype;
                    }
                }
                /* A layout always describes an array the writer takes. */
                chunks[nchunks++] =
                    (file_chunk){header, lmt_npy_header(dt, l.rank, l.shape, header)};
            }
            chunks[nchunks++] = (file_chunk){body, body_size};
            if (!st) st = file_save_atomic(b->path, chunks, nchunks);
        }
        free(converted);
        free(data);
        if (st) {
            lmt_error("run", "--output %s: %s", b->name, lm_last_error());
            return exit_code(st);
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ summary */

/* Labels --profile lists in text (the slowest); --json lists every one. */
#define PROFILE_ROWS 20

typedef struct profile_row {
    const char *label; /* a label, or an op: the first word of labels */
    size_t label_len;
    uint64_t launches, instructions;
    double seconds;
} profile_row;

/* Slowest first; equal times keep the order of first launch. */
static int by_time(const void *a, const void *b) {
    const profile_row *x = a, *y = b;
    if (x->seconds != y->seconds) return x->seconds < y->seconds ? 1 : -1;
    return x->label < y->label ? -1 : x->label > y->label;
}

static void print_rows(const char *what, const profile_row *rows, size_t n, size_t shown,
                       double total) {
    printf("  %11s %6s %13s %9s  %s\n", "time", "share", "instructions", "launches", what);
    for (size_t i = 0; i < n && i < shown; i++)
        printf("  %8.2f ms %5.1f%% %13" PRIu64 " %9" PRIu64 "  %.*s\n", rows[i].seconds * 1e3,
               total > 0 ? 100 * rows[i].seconds / total : 0.0, rows[i].instructions,
               rows[i].launches, (int)rows[i].label_len,
               rows[i].label[0] ? rows[i].label : "(no label)");
    if (n > shown) printf("  (%zu more: --json lists every one)\n", n - shown);
}

/* Adds a launch count, instructions and time to the row of `key` in
 * rows[0..*n), made if new (rows has room for every key). */
static void add_to_row(profile_row *rows, size_t *n, const char *key, size_t len, uint64_t launches,
                       uint64_t instructions, double seconds) {
    size_t k = 0;
    while (k < *n && !(rows[k].label_len == len && !memcmp(rows[k].label, key, len)))
        k++;
    if (k == *n) rows[(*n)++] = (profile_row){key, len, 0, 0, 0};
    rows[k].launches += launches;
    rows[k].instructions += instructions;
    rows[k].seconds += seconds;
}

/* The profile in text: the slowest labels, the time by op when the labels
 * are "op name" (a compiled model's), then by program. */
static void print_profile(const lm_profile_entry *e, size_t n, const lm_profile_program_entry *pe,
                          size_t pn) {
    profile_row *rows = calloc(2 * n + pn + 1, sizeof *rows);
    if (!rows) {
        printf("  profile:     (out of memory)\n");
        return;
    }
    double total = 0;
    uint64_t launches = 0, instructions = 0;
    bool words = false;
    profile_row *ops = rows + n, *programs = rows + 2 * n;
    size_t op_count = 0, program_count = 0;
    for (size_t i = 0; i < n; i++) {
        /* e[] is in order of first launch, so the addresses of its labels
         * (one allocation, in order) break ties in that order. */
        rows[i] = (profile_row){e[i].label, strlen(e[i].label), e[i].launches, e[i].instructions,
                                e[i].seconds};
        total += e[i].seconds;
        launches += e[i].launches;
        instructions += e[i].instructions;
        const char *space = strchr(e[i].label, ' ');
        words |= space != NULL;
        add_to_row(ops, &op_count, e[i].label,
                   space ? (size_t)(space - e[i].label) : strlen(e[i].label), e[i].launches,
                   e[i].instructions, e[i].seconds);
    }
    for (size_t i = 0; i < pn; i++)
        add_to_row(programs, &program_count, pe[i].program, strlen(pe[i].program), pe[i].launches,
                   pe[i].instructions, pe[i].seconds);
    printf("  profile:     %" PRIu64 " launch%s, %.3f s in the simulator, %" PRIu64
           " kernel instructions, by label:\n",
           launches, launches == 1 ? "" : "es", total, instructions);
    qsort(rows, n, sizeof *rows, by_time);
    print_rows("label", rows, n, PROFILE_ROWS, total);
    /* A binary compiled with --trace replays as one launch per trace. */
    bool traces_only = n > 0;
    for (size_t i = 0; i < n; i++)
        traces_only &= !strncmp(e[i].label, "trace ", 6);
    if (traces_only) {
        printf("  (a metal trace is timed as one launch: a binary captured without one, such\n"
               "  as a model compiled without --trace, is profiled launch label by label)\n");
    } else {
        if (words) {
            printf("  by op (a label's first word):\n");
            qsort(ops, op_count, sizeof *ops, by_time);
            print_rows("op", ops, op_count, op_count, total);
        }
        printf("  by program (its kernels; --json gives each label's programs):\n");
        qsort(programs, program_count, sizeof *programs, by_time);
        print_rows("program", programs, program_count, PROFILE_ROWS, total);
    }
    free(rows);
}

/* A run's profile, as the replay gives it. */
typedef struct run_profile {
    const lm_profile_entry *labels;
    size_t label_count;
    const lm_profile_program_entry *programs;
    size_t program_count;
} run_profile;

static void print_summary(const run_args *ra, lm_status st, const lm_replay_report *rep,
                          const run_profile *prof) {
    bool goldens = ra->opts.check_goldens, hashes = ra->opts.check_blob_hashes;
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
        lmt_json_u64(&j, "host_waits", rep->host_waits);
        lmt_json_bool(&j, "goldens_skipped", !goldens);
        lmt_json_u64(&j, "goldens_checked", rep->goldens_checked);
        lmt_json_u64(&j, "goldens_failed", rep->goldens_failed);
        if (ra->opts.tolerance) {
            lmt_json_double(&j, "max_abs_error", rep->max_abs_error);
            lmt_json_double(&j, "max_rel_error", rep->max_rel_error);
        }
        if (rep->goldens_failed) lmt_json_u64(&j, "first_mismatch", rep->first_mismatch);
        lmt_json_bool(&j, "blob_hashes_checked", hashes);
        lmt_json_begin_array(&j, "outputs");
        for (size_t i = 0; i < ra->output_count; i++) {
            lmt_json_begin_object(&j, NULL);
            lmt_json_cstr(&j, "name", ra->outputs[i].name);
            lmt_json_cstr(&j, "path", ra->outputs[i].path);
            lmt_json_cstr(&j, "format", ra->outputs[i].npy ? "npy" : "raw");
            lmt_json_end_object(&j);
        }
        lmt_json_end_array(&j);
        if (ra->opts.profile) {
            lmt_json_begin_array(&j, "profile");
            for (size_t i = 0; i < prof->label_count; i++) {
                lmt_json_begin_object(&j, NULL);
                lmt_json_cstr(&j, "label", prof->labels[i].label);
                lmt_json_u64(&j, "launches", prof->labels[i].launches);
                lmt_json_double(&j, "seconds", prof->labels[i].seconds);
                lmt_json_u64(&j, "instructions", prof->labels[i].instructions);
                lmt_json_end_object(&j);
            }
            lmt_json_end_array(&j);
            lmt_json_begin_array(&j, "profile_programs");
            for (size_t i = 0; i < prof->program_count; i++) {
                lmt_json_begin_object(&j, NULL);
                lmt_json_cstr(&j, "label", prof->programs[i].label);
                lmt_json_cstr(&j, "program", prof->programs[i].program);
                lmt_json_u64(&j, "launches", prof->programs[i].launches);
                lmt_json_double(&j, "seconds", prof->programs[i].seconds);
                lmt_json_u64(&j, "instructions", prof->programs[i].instructions);
                lmt_json_end_object(&j);
            }
            lmt_json_end_array(&j);
        }
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
    printf("  host waits:  %" PRIu64 "\n", rep->host_waits);
    if (goldens)
        printf("  goldens:     %u checked, %u failed\n", (unsigned)rep->goldens_checked,
               (unsigned)rep->goldens_failed);
    else
        printf("  goldens:     skipped (--no-goldens)\n");
    if (ra->opts.tolerance)
        printf("  max error:   %.3g abs, %.3g rel\n", rep->max_abs_error, rep->max_rel_error);
    if (rep->goldens_failed) printf("  first mismatch at %" PRIu64 "\n", rep->first_mismatch);
    if (!hashes) printf("  blob hashes: not checked (--no-verify-hashes)\n");
    for (size_t i = 0; i < ra->output_count; i++)
        printf("  saved:       %s -> %s (%s)\n", ra->outputs[i].name, ra->outputs[i].path,
               ra->outputs[i].npy ? ".npy" : "raw bytes");
    printf("  time:        %.3f s\n", rep->seconds);
    if (ra->opts.profile)
        print_profile(prof->labels, prof->label_count, prof->programs, prof->program_count);
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
    st = lm_replay_open(map.data ? map.data : empty, map.size, &r);
    if (st) {
        lmt_error("run", "%s: %s", ra->path, lm_last_error());
        rc = exit_code(st);
        goto done;
    }
    /* Unknown output names fail before the replay spends any time. */
    for (size_t i = 0; i < ra->output_count; i++) {
        lm_replay_buffer_info bi;
        if (!find_buffer(r, "--output", ra->outputs[i].name, &bi)) {
            rc = LMT_EXIT_INVALID;
            goto done;
        }
    }
    if ((rc = feed_inputs(r, ra)) >= 0) goto done;

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
        /* The replay read nothing back: no output is written. */
        lmt_error("run", "%s: %s", ra->path, lm_last_error());
        rc = exit_code(st);
        goto done;
    }
    /* After a mismatch the message is needed once the outputs are saved. */
    char mismatch[ERR_MESSAGE_MAX + 1] = "";
    if (st == LM_ERR_MISMATCH) snprintf(mismatch, sizeof mismatch, "%s", lm_last_error());
    if ((rc = save_outputs(r, ra)) >= 0) goto done;
    run_profile prof = {0};
    lm_replay_get_profile(r, &prof.labels, &prof.label_count);
    lm_replay_get_program_profile(r, &prof.programs, &prof.program_count);
    print_summary(ra, st, &rep, &prof);
    rc = LMT_EXIT_OK;
    if (st == LM_ERR_MISMATCH) {
        lmt_error("run", "%s: %s%s", ra->path, mismatch,
                  ra->output_count ? " (outputs saved)" : "");
        rc = LMT_EXIT_MISMATCH;
    }
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
    for (size_t i = 0; ra.inputs && i < ra.input_count; i++) {
        free((void *)ra.inputs[i].name);
        free(ra.inputs[i].file);
        free(ra.inputs[i].converted);
    }
    for (size_t i = 0; ra.outputs && i < ra.output_count; i++)
        free((void *)ra.outputs[i].name);
    free(ra.inputs);
    free(ra.outputs);
    return rc;
}
