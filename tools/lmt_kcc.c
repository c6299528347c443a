/* lightmetal kcc: compile a kernel exactly as lm_create_kernel does (the
 * same request to the same kernel build, so the same flags, SDK and cache)
 * and write its ELF. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "lightmetal/lm_program.h"
#include "lmt.h"
#include "runtime/program.h"

#define CMD "kcc"

const char lmt_kcc_help[] =
    "usage: lightmetal kcc KERNEL.c|KERNEL.cpp --processor dm0|dm1|compute [options] -o "
    "KERNEL.elf\n"
    "\n"
    "Compiles a kernel exactly as lm_create_kernel does (the same compiler, flags,\n"
    "kernel SDK and cache) and writes its RV32 ELF, to inspect (llvm-objdump -d)\n"
    "or to load with lm_create_kernel_from_elf. The build lands in the kernel\n"
    "cache too, so a program that then creates the same kernel starts no\n"
    "compiler. The ELF depends only on the inputs: the same kernel gives the\n"
    "same bytes from any directory, checkout or machine with the same compiler.\n"
    "\n"
    "options:\n"
    "  --processor P           dm0, dm1 or compute (required): tt-metal's RISCV_0\n"
    "                          (BRISC), RISCV_1 (NCRISC) or the compute cores\n"
    "  -D NAME[=VALUE]         a define, like lm_kernel_config.defines (repeatable)\n"
    "  --compile-args V1,V2,.. compile-time arguments (get_compile_time_arg_val),\n"
    "                          each a 32-bit unsigned integer, decimal or 0x hex;\n"
    "                          TensorAccessorArgs<N>() reads its buffer's words\n"
    "                          from index N (what lm_tensor_accessor_args gives)\n"
    "  --named-compile-arg NAME=V\n"
    "                          a named compile-time argument of a C++ kernel\n"
    "                          (get_named_compile_time_arg_val(\"NAME\")); repeatable\n"
    "  --math-fidelity F       compute: lofi, hifi2, hifi3 or hifi4 (default hifi4)\n"
    "  --fp32-dest-acc         compute: dst holds float32 (fp32_dest_acc_en)\n"
    "  --math-approx           compute: math_approx_mode\n"
    "  -o FILE, --output FILE  where to write the ELF (required)\n"
    "  -h, --help              show this help\n"
    "\n"
    "environment:\n"
    "  LM_CLANG            the compiler (default: clang on PATH)\n"
    "  LM_KERNEL_SDK_DIR   the kernel SDK (default: share/lightmetal/kernel-sdk of\n"
    "                      the install this program is in; in a build tree, the\n"
    "                      source tree's kernel-sdk)\n"
    "  LM_CACHE_DIR        the kernel cache (default: $XDG_CACHE_HOME/lightmetal/\n"
    "                      kernels, else ~/.cache/lightmetal/kernels)\n"
    "\n"
    "KERNEL.cpp (or .cc, .cxx) compiles as C++17 in tt-metal's kernel dialects,\n"
    "anything else as C11.\n"
    "\n"
    "Prints \"FILE: N bytes ...\" on success. A compile error prints one line\n"
    "naming the kernel, then every message of the compiler as it printed them\n"
    "(lm_last_compile_log() in a program). For a kernel that uses SFPI (vFloat,\n"
    "dst_reg, v_if, custom ckernel_sfpu headers), which lightmetal does not\n"
    "support, that line also says so, whatever else the compiler reports.\n"
    "\n"
    "exit codes: 0 ok, 2 usage error, unreadable kernel, compile error or\n"
    "unwritable output\n"
    "\n"
    "examples:\n"
    "  lightmetal kcc kernels/reader.c --processor dm0 -o reader.elf\n"
    "  lightmetal kcc mm.c --processor compute -D TILE=32 --compile-args 4,8 -o mm.elf\n"
    "  lightmetal kcc k.c --processor dm1 -DUSE_MCAST -o k.elf && llvm-objdump -d k.elf\n"
    "  lightmetal kcc reader.cpp --processor dm0 --named-compile-arg cb_in=0 -o reader.elf\n";

typedef struct kcc_options {
    const char *kernel, *output;
    lm_kernel_config cfg;
    lm_kernel_define defines[LM_MAX_KERNEL_DEFINES];
    uint32_t compile_args[LM_MAX_COMPILE_ARGS];
    lm_named_compile_arg named[LM_MAX_COMPILE_ARGS];
    uint32_t named_count;
    bool compute_options; /* a compute-only option was given */
} kcc_options;

static bool parse_processor(const char *text, lm_processor *out) {
    static const struct {
        const char *name;
        lm_processor p;
    } names[] = {
        {"dm0", LM_PROCESSOR_DM0}, {"dm1", LM_PROCESSOR_DM1}, {"compute", LM_PROCESSOR_COMPUTE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(text, names[i].name)) {
            *out = names[i].p;
            return true;
        }
    lmt_error(CMD, "--processor: '%s' is not dm0, dm1 or compute", text);
    return false;
}

static bool parse_fidelity(const char *text, lm_math_fidelity *out) {
    static const char *const names[] = {"lofi", "hifi2", "hifi3", "hifi4"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(text, names[i])) {
            *out = (lm_math_fidelity)(LM_MATH_FIDELITY_LOFI + i);
            return true;
        }
    lmt_error(CMD, "--math-fidelity: '%s' is not lofi, hifi2, hifi3 or hifi4", text);
    return false;
}

static bool is_identifier(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
    }
    return true;
}

/* NAME or NAME=VALUE; `text` stays alive (it is an argv string), so the
 * define points into it, with the '=' replaced by a terminator. */
static bool parse_define(kcc_options *o, char *text) {
    if (o->cfg.define_count == LM_MAX_KERNEL_DEFINES) {
        lmt_error(CMD, "-D: more than %d defines", LM_MAX_KERNEL_DEFINES);
        return false;
    }
    char *eq = strchr(text, '=');
    size_t n = eq ? (size_t)(eq - text) : strlen(text);
    if (!is_identifier(text, n)) {
        lmt_error(CMD, "-D: '%s' is not NAME or NAME=VALUE with NAME a C identifier", text);
        return false;
    }
    if (eq && strpbrk(eq + 1, "\n\r")) {
        lmt_error(CMD, "-D: the value of '%.*s' contains a line break", (int)n, text);
        return false;
    }
    if (eq) *eq = '\0';
    o->defines[o->cfg.define_count++] = (lm_kernel_define){text, eq ? eq + 1 : NULL};
    return true;
}

/* One 32-bit unsigned integer, decimal or 0x hex, spanning s[0, n). */
static bool parse_word(const char *s, size_t n, uint32_t *out) {
    unsigned base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (n == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9'                 ? (unsigned)(c - '0')
                     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                          : 99;
        if (d >= base) return false;
        v = v * base + d;
        if (v > UINT32_MAX) return false;
    }
    *out = (uint32_t)v;
    return true;
}

static bool parse_compile_args(kcc_options *o, const char *text) {
    uint32_t count = 0;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (count == LM_MAX_COMPILE_ARGS) {
            lmt_error(CMD, "--compile-args: more than %d values", LM_MAX_COMPILE_ARGS);
            return false;
        }
        if (!parse_word(p, n, &o->compile_args[count])) {
            lmt_error(CMD,
                      "--compile-args: '%.*s' in '%s' is not a 32-bit unsigned integer "
                      "(decimal or 0x hex)",
                      (int)n, p, text);
            return false;
        }
        count++;
        if (!comma) break;
        p = comma + 1;
    }
    o->cfg.compile_arg_count = count;
    return true;
}

/* NAME=VALUE; `text` is an argv string, split in place as for -D. */
static bool parse_named_arg(kcc_options *o, char *text) {
    if (o->named_count == LM_MAX_COMPILE_ARGS) {
        lmt_error(CMD, "--named-compile-arg: more than %d", LM_MAX_COMPILE_ARGS);
        return false;
    }
    char *eq = strchr(text, '=');
    size_t n = eq ? (size_t)(eq - text) : strlen(text);
    if (!eq || !is_identifier(text, n)) {
        lmt_error(CMD, "--named-compile-arg: '%s' is not NAME=VALUE with NAME an identifier", text);
        return false;
    }
    uint32_t v;
    if (!parse_word(eq + 1, strlen(eq + 1), &v)) {
        lmt_error(CMD,
                  "--named-compile-arg: the value of '%.*s' is not a 32-bit unsigned integer "
                  "(decimal or 0x hex)",
                  (int)n, text);
        return false;
    }
    *eq = '\0';
    for (uint32_t i = 0; i < o->named_count; i++)
        if (!strcmp(o->named[i].name, text)) {
            lmt_error(CMD, "--named-compile-arg: '%s' is given twice", text);
            return false;
        }
    o->named[o->named_count++] = (lm_named_compile_arg){text, v};
    return true;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, kcc_options *o) {
    lmt_args a;
    lmt_args_init(&a, CMD, argc, argv);
    lm_processor proc = LM_PROCESSOR_INVALID;
    lm_math_fidelity fidelity = LM_MATH_FIDELITY_HIFI4;
    bool fp32 = false, approx = false;
    for (lmt_arg_kind k; (k = lmt_args_next(&a)) != LMT_ARG_END;) {
        const char *v;
        char *raw = argv[a.next - 1]; /* the argument as given (lmt_args splits at '=') */
        if (k == LMT_ARG_POSITIONAL) {
            if (o->kernel) {
                lmt_error(CMD, "unexpected argument '%s' (one KERNEL.c only)", a.value);
                return LMT_EXIT_INVALID;
            }
            o->kernel = a.value;
        } else if (!strncmp(raw, "-D", 2)) {
            char *def = raw + 2;
            if (!*def) {
                if (a.next >= argc) {
                    lmt_error(CMD, "-D needs NAME or NAME=VALUE (see 'lightmetal kcc --help')");
                    return LMT_EXIT_INVALID;
                }
                def = argv[a.next++];
            }
            if (!parse_define(o, def)) return LMT_EXIT_INVALID;
        } else if (!strncmp(raw, "-o", 2) && raw[2] && raw[2] != '=') {
            o->output = raw + 2;
        } else if (!strcmp(a.opt, "-o") || !strcmp(a.opt, "--output")) {
            if (!lmt_args_value(&a, &v)) return LMT_EXIT_INVALID;
            o->output = v;
        } else if (lmt_args_is_help(&a)) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            lmt_print_help(CMD);
            return LMT_EXIT_OK;
        } else if (!strcmp(a.opt, "--processor")) {
            if (!lmt_args_value(&a, &v) || !parse_processor(v, &proc)) return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--named-compile-arg")) {
            /* The value lies in an argv string, which parse_named_arg splits. */
            if (!lmt_args_value(&a, &v) || !parse_named_arg(o, (char *)v)) return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--compile-args")) {
            if (!lmt_args_value(&a, &v) || !parse_compile_args(o, v)) return LMT_EXIT_INVALID;
        } else if (!strcmp(a.opt, "--math-fidelity")) {
            if (!lmt_args_value(&a, &v) || !parse_fidelity(v, &fidelity)) return LMT_EXIT_INVALID;
            o->compute_options = true;
        } else if (!strcmp(a.opt, "--fp32-dest-acc")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            fp32 = o->compute_options = true;
        } else if (!strcmp(a.opt, "--math-approx")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            approx = o->compute_options = true;
        } else {
            lmt_args_unknown(&a);
            return LMT_EXIT_INVALID;
        }
    }
    if (!o->kernel) {
        lmt_error(CMD, "missing KERNEL.c (see 'lightmetal kcc --help')");
        return LMT_EXIT_INVALID;
    }
    if (proc == LM_PROCESSOR_INVALID) {
        lmt_error(CMD, "missing --processor dm0|dm1|compute (see 'lightmetal kcc --help')");
        return LMT_EXIT_INVALID;
    }
    if (!o->output) {
        lmt_error(CMD, "missing -o FILE (see 'lightmetal kcc --help')");
        return LMT_EXIT_INVALID;
    }
    if (o->compute_options && proc != LM_PROCESSOR_COMPUTE) {
        lmt_error(CMD, "--math-fidelity, --fp32-dest-acc and --math-approx are for "
                       "--processor compute");
        return LMT_EXIT_INVALID;
    }
    uint32_t defines = o->cfg.define_count, args = o->cfg.compile_arg_count;
    lm_kernel_config_init(&o->cfg, proc);
    o->cfg.defines = o->defines;
    o->cfg.define_count = defines;
    o->cfg.compile_args = o->compile_args;
    o->cfg.compile_arg_count = args;
    o->cfg.named_compile_args = o->named;
    o->cfg.named_compile_arg_count = o->named_count;
    o->cfg.math_fidelity = fidelity;
    o->cfg.fp32_dest_acc_en = fp32;
    o->cfg.math_approx_mode = approx;
    return -1;
}

int lmt_cmd_kcc(int argc, char **argv) {
    kcc_options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;

    /* Read as lm_create_kernel reads it: the same name, path and text. */
    void *source = NULL;
    size_t size = 0;
    if (file_read_all(o.kernel, &source, &size)) {
        lmt_error(CMD, "%s", lm_last_error());
        return LMT_EXIT_INVALID;
    }
    if (strlen(source) != size) {
        lmt_error(CMD, "'%s' contains a NUL byte", o.kernel);
        free(source);
        return LMT_EXIT_INVALID;
    }
    const char *slash = strrchr(o.kernel, '/');
    jit_artifact art;
    lm_status st = rt_kernel_build(slash ? slash + 1 : o.kernel, o.kernel, source, &o.cfg, &art);
    free(source);
    if (st == LM_ERR_COMPILE) {
        /* The summary line, then the compiler's whole output with its lines
         * (and carets): lm_last_error() holds only as much as fits. Without
         * any output, the message says so. */
        const char *msg = lm_last_error(), *nl = strchr(msg, '\n'), *log = lm_last_compile_log();
        if (!*log && nl) log = nl + 1;
        fprintf(stderr, "lightmetal kcc: %.*s\n%s%s", nl ? (int)(nl - msg) : (int)strlen(msg), msg,
                log, *log ? "\n" : "");
        return LMT_EXIT_INVALID;
    }
    if (st) {
        lmt_error(CMD, "%s", lm_last_error());
        return LMT_EXIT_INVALID;
    }
    file_chunk chunk = {art.elf, art.elf_size};
    st = file_save_atomic(o.output, &chunk, 1);
    if (st) {
        lmt_error(CMD, "%s", lm_last_error());
        free(art.elf);
        return LMT_EXIT_INVALID;
    }
    printf("%s: %zu bytes (cache key %016llx, %s)\n", o.output, art.elf_size,
           (unsigned long long)art.key, art.cache_hit ? "from the cache" : "compiled");
    free(art.elf);
    return LMT_EXIT_OK;
}
