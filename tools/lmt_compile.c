/* `lightmetal compile`: an ONNX model to a Light Metal binary.
 *
 * A thin main() over lmfe_compile_onnx: parses the options, reads the
 * tensors given as .npy (or ONNX TensorProto .pb) files, shows a progress
 * bar on a terminal, writes the binary atomically and prints the per-op
 * summary. `--info` prints the model's interface instead (no device). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "lightmetal/frontend.h"
#include "lmt.h"
#include "lmt_npy.h"

const char lmt_compile_help[] =
    "usage: lightmetal compile MODEL.onnx -o FILE.lmb [options]\n"
    "       lightmetal compile MODEL.onnx --info\n"
    "       lightmetal compile --list-ops\n"
    "\n"
    "Compiles an ONNX model into a Light Metal binary: every node runs as op\n"
    "library operations on the simulated device while the binary is captured.\n"
    "The binary's named inputs and outputs are the model's graph inputs and\n"
    "outputs (with their shapes and element types), so\n"
    "'lightmetal run FILE.lmb --input NAME=x.npy --output NAME=y.npy' runs it\n"
    "anywhere, with no compiler and no framework. Weights are stored once.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE        the binary to write (replaced atomically)\n"
    "  --input-shape NAME=DIMS  fix a graph input's shape, e.g. image=64x1x28x28\n"
    "                           (symbolic dims like 'batch' in it are bound too)\n"
    "  --dim SYMBOL=N           bind a symbolic dim of the inputs, e.g. batch=64\n"
    "  --sequence NAME=N        the length of a graph input that is a sequence of\n"
    "                           tensors: the binary takes it as N inputs NAME[0]..\n"
    "                           (a sequence output gives NAME[0].. likewise)\n"
    "  --absent NAME            an optional graph input the binary does not take\n"
    "                           (it is empty); other optional inputs are present\n"
    "  --const NAME=FILE        a graph input's value, known at compile time and\n"
    "                           folded in (needed when the input decides shapes,\n"
    "                           e.g. Reshape's shape; --info lists those)\n"
    "  --golden [NAME=]FILE     run the model on this input while compiling and\n"
    "                           store its outputs as goldens that every replay\n"
    "                           checks (NAME may be left out for a one-input model)\n"
    "  --dtype fp32|bf16|bfp8   float math on the device: fp32 (default), bf16,\n"
    "                           or bf16 with bfloat8_b weights\n"
    "  --trace                  record the model as one metal trace: a replay\n"
    "                           launches it with one command\n"
    "  --seed-input NAME[=N]    the binary takes a uint32 scalar input NAME that\n"
    "                           is mixed into every random op's seed at each run\n"
    "                           (recorded as N, default 0: the numbers the ops'\n"
    "                           seeds alone give); without it every run of the\n"
    "                           binary draws the same numbers\n"
    "  --trace-region MIB       with --trace: the trace region of the device the\n"
    "                           binary runs on, MiB per DRAM bank (1 to 512,\n"
    "                           default 8): a model of many launches needs more\n"
    "  --pad-dynamic            give outputs whose size the run decides their\n"
    "                           largest size, padded: NonMaxSuppression on boxes\n"
    "                           known only at run time (the selected rows, then\n"
    "                           rows of -1), NonZero of run-time data (a column\n"
    "                           per element, -1 after the nonzero ones), Compress\n"
    "                           with a run-time condition (a slice per entry, NaN,\n"
    "                           -1 or false after the kept ones), Unique of\n"
    "                           run-time values (an entry per element, padding\n"
    "                           after the distinct ones) and the scan outputs of\n"
    "                           a loop whose condition is computed at run time (a\n"
    "                           row per iteration, NaN, -1 or false where none\n"
    "                           ran). Only ops that keep padding apart may read\n"
    "                           such an output (a scan output: none): moving it\n"
    "                           (Identity, Transpose; Squeeze, Unsqueeze, Split,\n"
    "                           Reshape, Flatten leaving the padded dim whole or\n"
    "                           merging it with the dims after it; Expand of\n"
    "                           other dims; Slice counting from the front;\n"
    "                           Gather along another dim; Concat, along the\n"
    "                           padded dim each part's results in turn, then the\n"
    "                           padding; If picking it or an empty branch\n"
    "                           output), computing from it entry by entry\n"
    "                           (element-wise ops; MatMul and Gemm of padded\n"
    "                           rows; Gather and GatherND of padded indices;\n"
    "                           RoiAlign of padded regions; a batch padded along\n"
    "                           dim 0 through Conv, ConvTranspose, pooling,\n"
    "                           normalizations over other dims, Pad and Resize\n"
    "                           of other dims), selecting from it\n"
    "                           (NonZero, Compress, NonMaxSuppression),\n"
    "                           scattering it with padded indices, or into it\n"
    "                           (ScatterND, ScatterElements), sizing it (Shape,\n"
    "                           Size: the padded size where it decides a shape,\n"
    "                           the run's count where it is data; ConstantOfShape\n"
    "                           and Expand to its shape, Range(0, its size) are\n"
    "                           padded alike), or working along any dim\n"
    "                           (Reduce*, ArgMax, ArgMin, Softmax, LogSoftmax,\n"
    "                           Hardmax, CumSum, TopK), where padding takes no\n"
    "                           part: x[mask].sum() is the selected values' sum\n"
    "  --graph-outputs NAME,... the binary's outputs: these values of the graph\n"
    "                           (node outputs) instead of the model's outputs;\n"
    "                           only what they depend on is compiled (a detector\n"
    "                           up to its head, before post-processing whose\n"
    "                           shapes depend on the data; repeatable)\n"
    "  --info                   print the model's inputs, outputs and opset, and\n"
    "                           which inputs need --const; compile nothing\n"
    "  --list-ops               print the ONNX ops the compiler supports\n"
    "  -q, --quiet              no progress bar and no summary\n"
    "\n"
    "FILE is a NumPy .npy file, or a serialized ONNX TensorProto (.pb).\n"
    "\n"
    "exit codes: 0 ok, 2 usage error, an invalid model, an unsupported op or\n"
    "attribute (the message names the node), or a failed compile\n"
    "\n"
    "examples:\n"
    "  lightmetal compile cnn.onnx -o cnn.lmb --input-shape image=64x1x28x28\n"
    "  lightmetal compile cnn.onnx -o cnn.lmb --dim batch=1 --dtype bf16 --trace\n"
    "  lightmetal compile model.onnx -o model.lmb --golden x=x.npy\n"
    "  lightmetal compile model.onnx --info\n";

#define MAX_BINDINGS 64

typedef struct compile_args {
    const char *model, *output;
    lmfe_input_shape shapes[MAX_BINDINGS];
    lmfe_dim_binding dims[MAX_BINDINGS];
    lmfe_sequence_length seqs[MAX_BINDINGS];
    const char *absent[MAX_BINDINGS];
    const char *outputs[MAX_BINDINGS]; /* --graph-outputs */
    size_t output_count;
    lmfe_tensor_value consts[MAX_BINDINGS], goldens[MAX_BINDINGS];
    size_t shape_count, dim_count, seq_count, absent_count, const_count, golden_count;
    void *files[2 * MAX_BINDINGS]; /* file contents the tensors point into */
    size_t file_count;
    char *names[6 * MAX_BINDINGS]; /* NAME copies */
    size_t name_count;
    lmfe_dtype_mode dtype;
    const char *seed_input; /* --seed-input NAME[=VALUE] */
    uint32_t seed_value;
    uint64_t trace_region_mib; /* --trace-region */
    bool trace, info, quiet, list_ops, pad_dynamic;
} compile_args;

static void args_free(compile_args *a) {
    for (size_t i = 0; i < a->file_count; i++)
        free(a->files[i]);
    for (size_t i = 0; i < a->name_count; i++)
        free(a->names[i]);
}

/* The first n bytes of `text` copied into `a` (freed with it), or NULL
 * after an error naming `opt`. */
static const char *copy_name(compile_args *a, const char *opt, const char *text, size_t n) {
    char *copy = a->name_count < sizeof a->names / sizeof a->names[0] ? malloc(n + 1) : NULL;
    if (!copy) {
        lmt_error("compile", "%s: too many names", opt);
        return NULL;
    }
    memcpy(copy, text, n);
    copy[n] = '\0';
    a->names[a->name_count++] = copy;
    return copy;
}

/* Splits "NAME=REST" (the name copied into `a`). */
static bool split_binding(compile_args *a, const char *opt, const char *text, const char **name,
                          const char **rest) {
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || eq[1] == '\0') {
        lmt_error("compile", "%s: '%s' is not NAME=VALUE", opt, text);
        return false;
    }
    *name = copy_name(a, opt, text, (size_t)(eq - text));
    *rest = eq + 1;
    return *name != NULL;
}

/* "NAME,NAME,..." into a->outputs (each name copied). */
static bool split_names(compile_args *a, const char *opt, const char *text) {
    for (const char *p = text;; p++) {
        size_t n = strcspn(p, ",");
        if (n == 0) {
            lmt_error("compile", "%s: '%s' has an empty name", opt, text);
            return false;
        }
        if (a->output_count == MAX_BINDINGS) {
            lmt_error("compile", "%s: too many names", opt);
            return false;
        }
        if (!(a->outputs[a->output_count++] = copy_name(a, opt, p, n))) return false;
        p += n;
        if (!*p) return true;
    }
}

/* "64x1x28x28" (also "64,1,28,28"); a 0 dim makes the input empty. */
static bool parse_dims(const char *opt, const char *text, lmfe_input_shape *s) {
    const char *p = text;
    s->rank = 0;
    while (*p) {
        if (s->rank == LMFE_MAX_RANK) {
            lmt_error("compile", "%s: '%s' has more than %d dims", opt, text, LMFE_MAX_RANK);
            return false;
        }
        char *end;
        if (*p < '0' || *p > '9') break;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || v > (1ull << 40)) break;
        s->dims[s->rank++] = (int64_t)v;
        p = end;
        if (*p == 'x' || *p == ',') {
            p++;
            if (!*p) break;
        } else if (*p) {
            break;
        }
    }
    if (*p || s->rank == 0) {
        lmt_error("compile", "%s: '%s' is not a shape like 1x3x224x224 (dims 0..2^40)", opt, text);
        return false;
    }
    return true;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The ONNX element type of a .npy dtype. */
static int32_t npy_elem_type(lmt_npy_dtype d) {
    switch (d) {
    case LMT_NPY_F4:
        return 1;
    case LMT_NPY_U1:
        return 2;
    case LMT_NPY_I1:
        return 3;
    case LMT_NPY_U2:
        return 4;
    case LMT_NPY_I2:
        return 5;
    case LMT_NPY_I4:
        return 6;
    case LMT_NPY_I8:
        return 7;
    case LMT_NPY_B1:
        return 9;
    case LMT_NPY_F2:
        return 10;
    case LMT_NPY_F8:
        return 11;
    case LMT_NPY_U4:
        return 12;
    case LMT_NPY_U8:
        return 13;
    default:
        return 0;
    }
}

/* Reads a tensor file (.npy or TensorProto .pb) into `tv`. */
static bool read_tensor(compile_args *a, const char *opt, const char *name, const char *path,
                        lmfe_tensor_value *tv) {
    memset(tv, 0, sizeof *tv);
    if (!ends_with(path, ".npy")) {
        if (lmfe_read_tensor_pb(path, tv)) {
            lmt_error("compile", "%s %s: %s", opt, path, lm_last_error());
            return false;
        }
        /* Owned by `a` from here: the data with the files, the name with the names. */
        a->files[a->file_count++] = (void *)tv->data;
        if (tv->name) a->names[a->name_count++] = (char *)tv->name;
        if (name) tv->name = name;
        return true;
    }
    void *bytes;
    size_t size;
    lmt_npy npy;
    if (file_read_all(path, &bytes, &size)) {
        lmt_error("compile", "%s: %s", opt, lm_last_error());
        return false;
    }
    a->files[a->file_count++] = bytes;
    if (lmt_npy_parse(bytes, size, &npy)) {
        lmt_error("compile", "%s %s: %s", opt, path, lm_last_error());
        return false;
    }
    if (npy.rank > LMFE_MAX_RANK) {
        lmt_error("compile", "%s %s: rank %u exceeds %d", opt, path, npy.rank, LMFE_MAX_RANK);
        return false;
    }
    tv->name = name;
    tv->elem_type = npy_elem_type(npy.dtype);
    tv->rank = npy.rank;
    for (uint32_t d = 0; d < npy.rank; d++)
        tv->dims[d] = (int64_t)npy.shape[d];
    tv->data = npy.data;
    tv->size = npy.data_size;
    return true;
}

/* Returns -1 to go on, or the exit code. */
static int parse_compile_args(int argc, char **argv, compile_args *ca) {
    lmt_args a;
    lmt_args_init(&a, "compile", argc, argv);
    for (lmt_arg_kind k; (k = lmt_args_next(&a)) != LMT_ARG_END;) {
        const char *v, *name, *rest;
        if (k == LMT_ARG_POSITIONAL) {
            if (ca->model) {
                lmt_error("compile", "unexpected argument '%s' (one MODEL only)", a.value);
                return LMT_EXIT_INVALID;
            }
            ca->model = a.value;
            continue;
        }
        if (lmt_args_is_help(&a)) {
            fputs(lmt_compile_help, stdout);
            return LMT_EXIT_OK;
        }
        bool full = false;
        if (!strcmp(a.opt, "-o") || !strcmp(a.opt, "--output")) {
            if (!lmt_args_value(&a, &ca->output)) return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--input-shape")) {
            if (!lmt_args_value(&a, &v) || !split_binding(ca, a.opt, v, &name, &rest))
                return LMT_EXIT_INVALID;
            full = ca->shape_count == MAX_BINDINGS;
            if (!full) {
                lmfe_input_shape *s = &ca->shapes[ca->shape_count++];
                s->name = name;
                if (!parse_dims(a.opt, rest, s)) return LMT_EXIT_INVALID;
            }
        } else if (!strcmp(a.opt, "--dim")) {
            if (!lmt_args_value(&a, &v) || !split_binding(ca, a.opt, v, &name, &rest))
                return LMT_EXIT_INVALID;
            uint64_t n;
            if (!lmt_parse_u64("compile", a.opt, rest, 0, UINT64_C(1) << 40, &n))
                return LMT_EXIT_INVALID;
            full = ca->dim_count == MAX_BINDINGS;
            if (!full) ca->dims[ca->dim_count++] = (lmfe_dim_binding){name, (int64_t)n};
        } else if (!strcmp(a.opt, "--sequence")) {
            if (!lmt_args_value(&a, &v) || !split_binding(ca, a.opt, v, &name, &rest))
                return LMT_EXIT_INVALID;
            uint64_t n;
            if (!lmt_parse_u64("compile", a.opt, rest, 0, 4096, &n)) return LMT_EXIT_INVALID;
            full = ca->seq_count == MAX_BINDINGS;
            if (!full) ca->seqs[ca->seq_count++] = (lmfe_sequence_length){name, (uint32_t)n};
        } else if (!strcmp(a.opt, "--absent")) {
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            full = ca->absent_count == MAX_BINDINGS;
            if (!full) ca->absent[ca->absent_count++] = v;
        } else if (!strcmp(a.opt, "--graph-outputs")) {
            if (!lmt_args_value(&a, &v) || !split_names(ca, a.opt, v)) return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--const")) {
            if (!lmt_args_value(&a, &v) || !split_binding(ca, a.opt, v, &name, &rest))
                return LMT_EXIT_INVALID;
            full = ca->const_count == MAX_BINDINGS;
            if (!full && !read_tensor(ca, a.opt, name, rest, &ca->consts[ca->const_count++]))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--golden")) {
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            name = NULL;
            rest = v;
            if (strchr(v, '=') && !split_binding(ca, a.opt, v, &name, &rest))
                return LMT_EXIT_INVALID;
            full = ca->golden_count == MAX_BINDINGS;
            if (!full && !read_tensor(ca, a.opt, name, rest, &ca->goldens[ca->golden_count++]))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--dtype")) {
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            if (!strcmp(v, "fp32"))
                ca->dtype = LMFE_DTYPE_FP32;
            else if (!strcmp(v, "bf16"))
                ca->dtype = LMFE_DTYPE_BF16;
            else if (!strcmp(v, "bfp8"))
                ca->dtype = LMFE_DTYPE_BFP8;
            else {
                lmt_error("compile", "--dtype: expected fp32, bf16 or bfp8, given '%s'", v);
                return LMT_EXIT_INVALID;
            }
        } else if (!strcmp(a.opt, "--trace")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ca->trace = true;
        } else if (!strcmp(a.opt, "--trace-region")) {
            if (!lmt_args_value(&a, &v) ||
                !lmt_parse_u64("compile", a.opt, v, 1, 512, &ca->trace_region_mib))
                return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--pad-dynamic")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ca->pad_dynamic = true;
        } else if (!strcmp(a.opt, "--seed-input")) {
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            uint64_t n = 0;
            if (!strchr(v, '=')) {
                ca->seed_input = v;
            } else if (!split_binding(ca, a.opt, v, &name, &rest) ||
                       !lmt_parse_u64("compile", a.opt, rest, 0, UINT32_MAX, &n)) {
                return LMT_EXIT_INVALID;
            } else {
                ca->seed_input = name;
            }
            ca->seed_value = (uint32_t)n;
        } else if (!strcmp(a.opt, "--info")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ca->info = true;
        } else if (!strcmp(a.opt, "--list-ops")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ca->list_ops = true;
        } else if (!strcmp(a.opt, "-q") || !strcmp(a.opt, "--quiet")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            ca->quiet = true;
        } else {
            lmt_args_unknown(&a);
            return LMT_EXIT_INVALID;
        }
        if (full) {
            lmt_error("compile", "%s: at most %d are taken", a.opt, MAX_BINDINGS);
            return LMT_EXIT_INVALID;
        }
    }
    if (ca->list_ops) return -1;
    if (!ca->model) {
        lmt_error("compile", "missing MODEL (try 'lightmetal compile --help')");
        return LMT_EXIT_INVALID;
    }
    if (!ca->info && !ca->output) {
        lmt_error("compile", "missing -o FILE (where to write the binary)");
        return LMT_EXIT_INVALID;
    }
    if (ca->trace_region_mib && !ca->trace) {
        lmt_error("compile", "--trace-region sizes the trace of --trace: give --trace too");
        return LMT_EXIT_INVALID;
    }
    return -1;
}

static void print_type(const lmfe_io_info *io) {
    if (io->elem_type == 0 && io->rank < 0) {
        /* A value inside the graph (--graph-outputs) the model gives no type. */
        printf("(type inferred when compiling)");
        return;
    }
    if (io->optional) printf("optional ");
    if (io->sequence) printf("sequence of ");
    printf("%s[", lmfe_elem_type_name(io->elem_type));
    if (io->rank < 0) printf("...");
    for (int32_t d = 0; d < io->rank; d++) {
        if (io->symbols[d])
            printf("%s%s", d ? ", " : "", io->symbols[d]);
        else if (io->dims[d] < 0)
            printf("%s?", d ? ", " : "");
        else
            printf("%s%" PRId64, d ? ", " : "", io->dims[d]);
    }
    printf("]");
}

static int cmd_info(const char *path, const compile_args *ca) {
    lmfe_model_info info;
    if (lmfe_inspect_onnx_cut(path, ca->outputs, ca->output_count, &info)) {
        lmt_error("compile", "%s", lm_last_error());
        return LMT_EXIT_INVALID;
    }
    printf("%s: ONNX IR %" PRId64 ", opset %" PRId64 ", %u nodes%s%s\n", path, info.ir_version,
           info.opset, info.nodes, info.producer[0] ? ", made by " : "", info.producer);
    for (size_t i = 0; i < info.input_count; i++) {
        printf("  input  %-20s ", info.inputs[i].name);
        print_type(&info.inputs[i]);
        const lmfe_io_info *io = &info.inputs[i];
        printf("%s\n", io->needs_value ? "  (decides shapes: give it with --const)"
                       : io->padded_size
                           ? "  (decides output sizes: compile with --pad-dynamic, or give it "
                             "with --const)"
                       : io->optional && io->sequence
                           ? "  (give its length with --sequence, or --absent)"
                       : io->sequence ? "  (give its length with --sequence)"
                       : io->optional ? "  (present unless --absent)"
                                      : "");
    }
    for (size_t i = 0; i < info.output_count; i++) {
        printf("  output %-20s ", info.outputs[i].name);
        print_type(&info.outputs[i]);
        printf("\n");
    }
    lmfe_model_info_free(&info);
    return LMT_EXIT_OK;
}

/* The progress bar: one line on stderr, redrawn in place. */
static void progress(void *user, uint32_t done, uint32_t total, const char *op_type) {
    (void)user;
    const int width = 30;
    int fill = total ? (int)((uint64_t)done * width / total) : width;
    fprintf(stderr, "\r[%.*s%*s] %u/%u %-24s", fill, "==============================", width - fill,
            "", done, total, op_type ? op_type : "");
    if (!op_type) fputs("\r\033[K", stderr);
    fflush(stderr);
}

static const char *placement_name(lmfe_placement p) {
    switch (p) {
    case LMFE_ON_DEVICE:
        return "device";
    case LMFE_FOLDED:
        return "folded";
    case LMFE_VIEW:
        return "view";
    case LMFE_FUSED:
        return "fused";
    case LMFE_REMOVED:
        return "removed (dead)";
    }
    return "?";
}

static void print_bytes(uint64_t b) {
    if (b >= (1u << 20))
        printf("%.1f MiB", (double)b / (1u << 20));
    else if (b >= 1024)
        printf("%.1f KiB", (double)b / 1024);
    else
        printf("%" PRIu64 " B", b);
}

static void print_summary(const compile_args *ca, const lmfe_report *r, uint64_t size) {
    printf("%s -> %s: %u nodes, %u on the device; ", ca->model, ca->output, r->nodes,
           r->device_nodes);
    print_bytes(size);
    printf(" written in %.2f s\n\n", r->seconds);
    /* Host time is the op library's work to enqueue (programs built,
     * weights prepared); device time the simulator's running them. */
    printf("  %-24s %6s  %-15s %11s %11s\n", "op", "count", "runs", "host time", "device time");
    for (size_t i = 0; i < r->op_count; i++) {
        const lmfe_op_summary *o = &r->ops[i];
        printf("  %-24s %6u  %-15s", o->op_type, o->count, placement_name(o->placement));
        if (o->placement == LMFE_ON_DEVICE)
            printf(" %8.1f ms %8.1f ms\n", o->seconds * 1e3, o->device_seconds * 1e3);
        else
            printf(" %11s %11s\n", "-", "-");
    }
    printf("  device time, all launches: %.1f ms ('lightmetal run --profile' times a replay)\n",
           r->device_seconds * 1e3);
    printf("\n  weights stored: ");
    print_bytes(r->weight_bytes);
    printf(" (each distinct tensor once); device memory peak: ");
    print_bytes(r->peak_device_bytes);
    printf("\n");
    /* One note per line, each indented like the table. */
    for (const char *line = r->notes; line && *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        printf("  %.*s\n", len, line);
        line += len + (end != NULL);
    }
}

int lmt_cmd_compile(int argc, char **argv) {
    compile_args ca = {0};
    int rc = parse_compile_args(argc, argv, &ca);
    if (rc >= 0) {
        args_free(&ca);
        return rc;
    }
    if (ca.list_ops) {
        size_t n = 0;
        for (const char *op; (op = lmfe_supported_op(n)); n++)
            printf("%s\n", op);
        fprintf(stderr, "%zu ONNX ops\n", n);
        args_free(&ca);
        return LMT_EXIT_OK;
    }
    if (ca.info) {
        rc = cmd_info(ca.model, &ca);
        args_free(&ca);
        return rc;
    }
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.input_shapes = ca.shapes;
    o.input_shape_count = ca.shape_count;
    o.dims = ca.dims;
    o.dim_count = ca.dim_count;
    o.sequence_lengths = ca.seqs;
    o.sequence_length_count = ca.seq_count;
    o.absent_inputs = ca.absent;
    o.absent_input_count = ca.absent_count;
    o.constants = ca.consts;
    o.constant_count = ca.const_count;
    o.golden_inputs = ca.goldens;
    o.golden_input_count = ca.golden_count;
    o.dtype = ca.dtype;
    o.trace = ca.trace;
    o.trace_region_size = ca.trace_region_mib << 20;
    o.pad_dynamic = ca.pad_dynamic;
    o.seed_input = ca.seed_input;
    o.seed_value = ca.seed_value;
    o.outputs = ca.outputs;
    o.output_count = ca.output_count;
    if (!ca.quiet && isatty(STDERR_FILENO)) o.progress = progress;
    if (ca.golden_count == 1 && !ca.goldens[0].name) {
        lmfe_model_info info;
        if (lmfe_inspect_onnx_cut(ca.model, ca.outputs, ca.output_count, &info)) {
            lmt_error("compile", "%s", lm_last_error());
            args_free(&ca);
            return LMT_EXIT_INVALID;
        }
        size_t runtime_inputs = 0, which = 0;
        for (size_t i = 0; i < info.input_count; i++) {
            bool is_const = false;
            for (size_t j = 0; j < ca.const_count; j++)
                is_const |= !strcmp(ca.consts[j].name, info.inputs[i].name);
            if (!is_const) {
                runtime_inputs++;
                which = i;
            }
        }
        if (runtime_inputs != 1) {
            lmt_error("compile",
                      "--golden FILE without NAME= needs a model with one input; "
                      "this one has %zu (use --golden NAME=FILE)",
                      runtime_inputs);
            lmfe_model_info_free(&info);
            args_free(&ca);
            return LMT_EXIT_INVALID;
        }
        char *name = malloc(strlen(info.inputs[which].name) + 1);
        if (name) strcpy(name, info.inputs[which].name);
        ca.names[ca.name_count++] = name;
        ca.goldens[0].name = name;
        lmfe_model_info_free(&info);
    }
    for (size_t i = 0; i < ca.golden_count; i++)
        if (!ca.goldens[i].name) {
            lmt_error("compile", "--golden: give NAME=FILE when there are several");
            args_free(&ca);
            return LMT_EXIT_INVALID;
        }
    lm_binary *bin = NULL;
    lmfe_report report;
    if (lmfe_compile_onnx(ca.model, &o, &bin, &report)) {
        lmt_error("compile", "%s", lm_last_error());
        args_free(&ca);
        return LMT_EXIT_INVALID;
    }
    uint64_t size = 0;
    rc = LMT_EXIT_OK;
    if (lm_binary_size(bin, &size) || lm_binary_save(bin, ca.output)) {
        lmt_error("compile", "%s", lm_last_error());
        rc = LMT_EXIT_INVALID;
    } else if (!ca.quiet) {
        print_summary(&ca, &report, size);
    }
    lmfe_report_free(&report);
    lm_binary_free(bin);
    args_free(&ca);
    return rc;
}
