/* What a failed kernel compile tells its caller: lm_last_error() is bounded,
 * so a long compiler output is cut there at a line end with a note, and
 * lm_last_compile_log() returns all of it; a kernel that uses SFPI (out of
 * scope) gets that said on the first line of the error, whatever else
 * failed first or instead (a missing custom SFPU header). The SFPI kernels
 * are written in the style of tt-metal's custom_sfpi_* programming
 * examples. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "runtime/jit_diag.h"

static lm_device *dev;

/* Compiles `src` as kernel `name` (a string kernel, or the file at `path`
 * when not NULL) for `proc`, in a program of its own; the status. */
static lm_status build(lm_processor proc, const char *name, const char *src, const char *path) {
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, proc);
    lm_program prog;
    lm_kernel k;
    lm_status st = lm_create_program(dev, &prog);
    if (st) return st;
    st = path ? lm_create_kernel(prog, path, &core, &cfg, &k)
              : lm_create_kernel_from_string(prog, name, src, &core, &cfg, &k);
    /* A success leaves lm_last_error() and lm_last_compile_log() as they were. */
    lm_release_program(prog);
    return st;
}

/* The first line of lm_last_error(), in a static buffer. */
static const char *first_line(void) {
    static char line[2048];
    const char *msg = lm_last_error(), *nl = strchr(msg, '\n');
    snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - msg) : (int)strlen(msg), msg);
    return line;
}

static bool starts_with(const char *s, const char *prefix) {
    return !strncmp(s, prefix, strlen(prefix));
}

#define SFPI_STATEMENT                                                                             \
    "SFPI intrinsics (vFloat, dst_reg, v_if, ...) are out of scope for lightmetal"

/* A kernel whose errors print far more than lm_last_error() holds: long
 * names, so that clang's limit of 20 errors is not reached first, and a
 * last one to look for. */
static char *many_errors_kernel(void) {
    size_t cap = 1 << 14, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    n += (size_t)snprintf(s + n, cap - n, "void kernel_main(void) {\n");
    for (int i = 0; i < 12; i++)
        n += (size_t)snprintf(
            s + n, cap - n,
            "    an_undeclared_variable_with_a_rather_long_name_number_%02d = %d;\n", i, i);
    snprintf(s + n, cap - n, "    the_very_last_undeclared_thing = 1;\n}\n");
    return s;
}

static void test_long_output(void) {
    char *src = many_errors_kernel();
    CHECK(src);
    lm_status st = build(LM_PROCESSOR_DM0, "many.c", src, NULL);
    free(src);
    CHECK_STATUS(st, LM_ERR_COMPILE);
    const char *msg = lm_last_error(), *log = lm_last_compile_log();
    CHECK(
        !strcmp(first_line(), "lm_create_kernel_from_string: kernel 'many.c' failed to compile:"));
    /* The message: the first errors, whole lines, and the note at its end. */
    CHECK(strlen(msg) < 1024);
    CHECK(strstr(msg, "\nmany.c:2:5: error: use of undeclared identifier "
                      "'an_undeclared_variable_with_a_rather_long_name_number_00'\n"));
    CHECK(!strstr(msg, "the_very_last_undeclared_thing"));
    const char *note = strrchr(msg, '\n');
    CHECK(note && starts_with(note + 1, "["));
    CHECK(strstr(note, " lines of compiler output shown (source quotes and include chains left "
                       "out): lm_last_compile_log() returns all of it]"));
    CHECK(note[strlen(note) - 1] == ']');
    /* The log: everything, exactly as the compiler printed it. */
    CHECK(strlen(log) > 2048);
    CHECK(starts_with(log, "many.c:2:5: error: use of undeclared identifier"));
    CHECK(strstr(log, "many.c:14:5: error: use of undeclared identifier "
                      "'the_very_last_undeclared_thing'\n"
                      "    the_very_last_undeclared_thing = 1;\n"
                      "    ^\n"));
    CHECK(strstr(log, "13 errors generated."));
    /* The message's lines are the log's error lines, without the quoted
     * source and carets; the note counts them. */
    size_t shown = 0, total = 0, log_lines = 1, body_lines = 0;
    CHECK(sscanf(note + 1, "[%zu of %zu lines", &shown, &total) == 2);
    for (const char *p = log; *p; p++)
        log_lines += *p == '\n';
    CHECK_EQ_U64(total, log_lines);
    char line[512];
    for (const char *p = strchr(msg, '\n') + 1; p < note; p = strchr(p, '\n') + 1) {
        size_t n = (size_t)(strchr(p, '\n') - p);
        CHECK(n < sizeof line - 2);
        snprintf(line, sizeof line, "%.*s\n", (int)n, p);
        CHECK(starts_with(line, "many.c:") && strstr(line, ": error: "));
        CHECK(strstr(log, line));
        body_lines++;
    }
    CHECK(body_lines >= 3);
    CHECK_EQ_U64(shown, body_lines);

    /* A success keeps both; another thread has its own (none). */
    CHECK_OK(build(LM_PROCESSOR_DM0, "fine.c", "void kernel_main(void) {}\n", NULL));
    CHECK(strstr(lm_last_compile_log(), "the_very_last_undeclared_thing"));
}

static void *other_thread(void *arg) {
    *(const char **)arg = lm_last_compile_log();
    return NULL;
}

static void test_log_per_thread(void) {
    CHECK_STATUS(build(LM_PROCESSOR_DM1, "short.c", "void kernel_main(void) { nope = 1; }\n", NULL),
                 LM_ERR_COMPILE);
    const char *seen = "unset";
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &seen) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(seen && !strcmp(seen, ""));
    /* A short output: all of it in the message too, no note. */
    const char *log = lm_last_compile_log();
    CHECK(strstr(log, "short.c:1:26: error: use of undeclared identifier 'nope'"));
    const char *body = strchr(lm_last_error(), '\n');
    CHECK(body && !strcmp(body + 1, log));
    CHECK(!strstr(lm_last_error(), "lm_last_compile_log"));
}

/* The first line says SFPI is out of scope, and why it was thought used. */
#define CHECK_SFPI_FIRST(name, why)                                                                \
    do {                                                                                           \
        const char *l_ = first_line();                                                             \
        if (!starts_with(l_, "lm_create_kernel") ||                                                \
            !strstr(l_, name "' failed to compile: " SFPI_STATEMENT " (the kernel " why ")")) {    \
            printf("  first line: %s\n", l_);                                                      \
            CHECK(!"SFPI statement first");                                                        \
        }                                                                                          \
    } while (0)

/* As custom_sfpi_add's compute kernel of older tt-metal: the face function
 * in SFPI, wrapped by the LLK SFPU call; errors before the SDK's SFPI
 * message (VectorMode, vConst) and more than lm_last_error() holds. */
static const char sfpi_add_kernel[] =
    "#include <cstdint>\n"
    "#include \"compute_kernel_api/common.h\"\n"
    "#include \"compute_kernel_api/tile_move_copy.h\"\n"
    "#include \"compute_kernel_api/eltwise_binary_sfpu.h\"\n"
    "#include \"compute_kernel_api.h\"\n"
    "\n"
    "#ifdef TRISC_MATH\n"
    "// Adds one face: 8 vectors of 32 lanes.\n"
    "inline void add_face(uint32_t in0, uint32_t in1, uint32_t out) {\n"
    "    for (uint32_t i = 0; i < 8; i++) {\n"
    "        sfpi::vFloat a = sfpi::dst_reg[in0 * 32 + i] * sfpi::vConst1;\n"
    "        vFloat b = dst_reg[in1 * 32 + i];\n"
    "        v_if(a < sfpi::vConst0) { a = sfpi::vConst0; }\n"
    "        v_endif;\n"
    "        dst_reg[out * 32 + i] = a + b;\n"
    "    }\n"
    "}\n"
    "#endif\n"
    "\n"
    "inline void face_add_tiles(uint32_t a, uint32_t b, uint32_t out) {\n"
    "    MATH(_llk_math_eltwise_binary_sfpu_params_<false>(add_face, a, b, out, "
    "VectorMode::RC));\n"
    "}\n"
    "\n"
    "namespace NAMESPACE {\n"
    "void MAIN {\n"
    "    uint32_t n = get_arg_val<uint32_t>(0);\n"
    "    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "        cb_wait_front(tt::CBIndex::c_0, 1);\n"
    "        cb_wait_front(tt::CBIndex::c_1, 1);\n"
    "        tile_regs_acquire();\n"
    "        copy_tile(tt::CBIndex::c_0, 0, 0);\n"
    "        copy_tile(tt::CBIndex::c_1, 0, 1);\n"
    "        face_add_tiles(0, 1, 0);\n"
    "        tile_regs_commit();\n"
    "        tile_regs_wait();\n"
    "        cb_reserve_back(tt::CBIndex::c_16, 1);\n"
    "        pack_tile(0, tt::CBIndex::c_16);\n"
    "        cb_push_back(tt::CBIndex::c_16, 1);\n"
    "        cb_pop_front(tt::CBIndex::c_0, 1);\n"
    "        cb_pop_front(tt::CBIndex::c_1, 1);\n"
    "        tile_regs_release();\n"
    "    }\n"
    "}\n"
    "}  // namespace NAMESPACE\n";

/* As the newest custom_sfpi_add: the SFPI code lives in a custom
 * ckernel_sfpu header (absent here), called through an LLK macro; nothing
 * SFPI in the kernel's own code. */
static const char sfpi_header_kernel[] =
    "#include <cstdint>\n"
    "#include \"api/compute/common.h\"\n"
    "#include \"api/compute/tile_move_copy.h\"\n"
    "#include \"api/compute/eltwise_binary_sfpu.h\"\n"
    "\n"
    "#ifdef TRISC_MATH\n"
    "#include \"experimental/llk_sfpu/ckernel_sfpu_face_add.h\"\n"
    "#endif\n"
    "\n"
    "inline void face_add_tiles(uint32_t a, uint32_t b, uint32_t out) {\n"
    "    MATH(SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, face_add, a, b, "
    "out, VectorMode::RC));\n"
    "}\n"
    "\n"
    "void kernel_main() {\n"
    "    init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);\n"
    "    tile_regs_acquire();\n"
    "    face_add_tiles(0, 1, 0);\n"
    "    tile_regs_commit();\n"
    "}\n";

static void test_sfpi_first(void) {
    /* SFPI after other errors, and past what lm_last_error() holds. */
    CHECK_STATUS(build(LM_PROCESSOR_COMPUTE, "tiles_add.cpp", sfpi_add_kernel, NULL),
                 LM_ERR_COMPILE);
    CHECK_SFPI_FIRST("tiles_add.cpp", "uses 'sfpi::vFloat'");
    CHECK(strstr(first_line(), "use the compute API's SFPU tile operations"));
    CHECK(strstr(lm_last_error(), "lm_last_compile_log() returns all of it]"));
    CHECK(strstr(lm_last_compile_log(), "tiles_add.cpp:"));

    /* A custom SFPU header the SDK does not have: only "file not found". */
    CHECK_STATUS(build(LM_PROCESSOR_COMPUTE, "tiles_add_new.cpp", sfpi_header_kernel, NULL),
                 LM_ERR_COMPILE);
    CHECK_SFPI_FIRST("tiles_add_new.cpp",
                     "includes 'experimental/llk_sfpu/ckernel_sfpu_face_add.h'");
    CHECK(strstr(lm_last_compile_log(), "file not found"));

    /* As custom_sfpi_smoothstep: v_if / v_elseif / v_endif, in a C++ kernel
     * for a data movement processor (where the SDK has no SFPI names). */
    CHECK_STATUS(build(LM_PROCESSOR_DM0, "smoothstep.cpp",
                       "void smoothstep_face() {\n"
                       "    /* t = clamp(x, 0, 1); t * t * (3 - 2 * t) */\n"
                       "    for (int i = 0; i < 8; i++) {\n"
                       "        vFloat t = dst_reg[i];\n"
                       "        v_if(t < 0.0f) { t = 0.0f; }\n"
                       "        v_elseif(t > 1.0f) { t = 1.0f; }\n"
                       "        v_endif;\n"
                       "        dst_reg[i] = t * t * (3.0f - 2.0f * t);\n"
                       "    }\n"
                       "}\n"
                       "void kernel_main() { smoothstep_face(); }\n",
                       NULL),
                 LM_ERR_COMPILE);
    CHECK_SFPI_FIRST("smoothstep.cpp", "uses 'vFloat'");

    /* A C kernel including the SDK's sfpi.h. */
    CHECK_STATUS(build(LM_PROCESSOR_COMPUTE, "sfpi_c.c",
                       "#include \"sfpi.h\"\nvoid kernel_main(void) {}\n", NULL),
                 LM_ERR_COMPILE);
    CHECK_SFPI_FIRST("sfpi_c.c", "includes 'sfpi.h'");
}

/* SFPI only in a header of the kernel's own directory: found in the
 * compiler's messages, not in the kernel's text. */
static void test_sfpi_in_own_header(void) {
    char dir[] = "/tmp/lm_test_jit_errors_XXXXXX", path[256];
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/face_math.h", dir);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("#pragma once\n"
          "inline void scale_face(float s) {\n"
          "    for (int i = 0; i < 8; i++) {\n"
          "        sfpi::vFloat v = sfpi::dst_reg[i];\n"
          "        sfpi::dst_reg[i] = v * s;\n"
          "    }\n"
          "}\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/scale.cpp", dir);
    f = fopen(path, "w");
    CHECK(f);
    fputs("#include \"compute_kernel_api.h\"\n"
          "#include \"face_math.h\"\n"
          "namespace NAMESPACE { void MAIN { MATH(scale_face(2.0f)); } }\n",
          f);
    fclose(f);
    lm_status st = build(LM_PROCESSOR_COMPUTE, NULL, NULL, path);
    unlink(path);
    snprintf(path, sizeof path, "%s/face_math.h", dir);
    unlink(path);
    rmdir(dir);
    CHECK_STATUS(st, LM_ERR_COMPILE);
    CHECK_SFPI_FIRST("scale.cpp", "uses 'sfpi::vFloat'");
}

/* Failing kernels that only mention SFPI names in comments and strings, or
 * use the compute API's SFPU operations (supported), get no SFPI line. */
static void test_not_sfpi(void) {
    CHECK_STATUS(build(LM_PROCESSOR_DM0, "comments.cpp",
                       "// Unlike SFPI code (vFloat a = dst_reg[0]; v_if ...), this\n"
                       "/* kernel moves whole tiles: sfpi::vFloat, ckernel::sfpu:: */\n"
                       "void kernel_main() {\n"
                       "    DPRINT << \"dst_reg vFloat v_if\" << ENDL();\n"
                       "    int x = 1'000 + undeclared;\n"
                       "}\n",
                       NULL),
                 LM_ERR_COMPILE);
    CHECK(!strcmp(first_line(), "lm_create_kernel_from_string: kernel 'comments.cpp' failed to "
                                "compile:"));
    CHECK(strstr(lm_last_error(), "undeclared identifier 'undeclared'"));
    CHECK_STATUS(build(LM_PROCESSOR_COMPUTE, "exp.cpp",
                       "#include \"compute_kernel_api/eltwise_binary_sfpu.h\"\n"
                       "#include \"compute_kernel_api/eltwise_unary/exp.h\"\n"
                       "namespace NAMESPACE { void MAIN {\n"
                       "    exp_tile_init();\n"
                       "    exp_tile(0);\n"
                       "    missing_call();\n"
                       "} }\n",
                       NULL),
                 LM_ERR_COMPILE);
    CHECK(
        !strcmp(first_line(), "lm_create_kernel_from_string: kernel 'exp.cpp' failed to compile:"));
}

/* The scan itself, on text alone. */
static void test_evidence(void) {
    char why[128];
#define FOUND(text, source, want)                                                                  \
    (jit_sfpi_evidence(text, strlen(text), source, why, sizeof why) && !strcmp(why, want))
#define NOT_FOUND(text, source) !jit_sfpi_evidence(text, strlen(text), source, why, sizeof why)
    CHECK(FOUND("x = dst_reg[3];", true, "uses 'dst_reg'"));
    CHECK(FOUND("auto c = sfpi::vConst0;", true, "uses 'sfpi::vConst0'"));
    CHECK(FOUND("ckernel::sfpu::calculate_exp<true>();", true,
                "uses 'ckernel::sfpu::calculate_exp'"));
    CHECK(FOUND("_llk_math_eltwise_unary_sfpu_params_<false>(f, 0);", true,
                "uses '_llk_math_eltwise_unary_sfpu_params_'"));
    CHECK(FOUND("#include \"llk_math_eltwise_unary_sfpu_macros.h\"\n", true,
                "includes 'llk_math_eltwise_unary_sfpu_macros.h'"));
    CHECK(FOUND("#include <sfpi.h>\n", true, "includes 'sfpi.h'"));
    CHECK(FOUND("k.cpp:3:10: fatal error: 'ckernel_sfpu_exp.h' file not found", false,
                "includes 'ckernel_sfpu_exp.h'"));
    CHECK(FOUND("error: invalid operands ('sfpi::vFloat' and 'float')", false,
                "uses 'sfpi::vFloat'"));
    /* Not SFPI: comments, strings, other names, the SDK's SFPU tile API. */
    CHECK(NOT_FOUND("// vFloat a = dst_reg[0];\nint x;", true));
    CHECK(NOT_FOUND("/* v_if */ const char *s = \"dst_reg\"; char c = 'v';", true));
    CHECK(NOT_FOUND("int dst_reg_index, my_vFloat, sfpi = 2; sfpu_op();", true));
    CHECK(NOT_FOUND("#include \"compute_kernel_api/eltwise_binary_sfpu.h\"\n"
                    "#include \"compute_kernel_api/eltwise_unary/sfpu_split_includes.h\"\n"
                    "add_binary_tile(0, 1, 0); SFPU_OP_CHAIN_0;",
                    true));
    CHECK(NOT_FOUND("lightmetal-sdk/include/lm/sfpi_guard.hpp:3: note: ckernel::pack_tile", false));
    /* An unterminated comment or literal ends the scan quietly. */
    CHECK(NOT_FOUND("int a; /* vFloat", true));
    CHECK(NOT_FOUND("const char *s = \"dst_reg", true));
    CHECK(FOUND("const char *s = \"x\ndst_reg", true, "uses 'dst_reg'"));
#undef FOUND
#undef NOT_FOUND
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_jit_errors_cache", 0);
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 1;
    o.grid_y = 1;
    o.dram_banks = 1;
    o.num_threads = 1;
    if (lm_device_open(&o, &dev)) {
        printf("FAIL setup: %s\n", lm_last_error());
        return 1;
    }
    TEST_RUN(test_long_output);
    TEST_RUN(test_log_per_thread);
    TEST_RUN(test_sfpi_first);
    TEST_RUN(test_sfpi_in_own_header);
    TEST_RUN(test_not_sfpi);
    TEST_RUN(test_evidence);
    lm_device_close(dev);
    return test_summary();
}
