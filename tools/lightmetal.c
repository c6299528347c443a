/* lightmetal: run, inspect and check Light Metal binaries; compile ONNX
 * models and kernels.
 *
 *   lightmetal run FILE [options]   replay a captured workload
 *   lightmetal info FILE [--json]   what a binary holds
 *   lightmetal dump FILE            the binary's tables as JSON
 *   lightmetal verify FILE          structural and semantic checks only
 *   lightmetal kcc KERNEL.c ...     compile a kernel as the runtime does
 *   lightmetal compile MODEL.onnx   an ONNX model into a binary
 *
 * Exit codes: 0 success, 1 a golden mismatched, 2 usage error, an invalid
 * file or a failed compile, 3 a device fault during replay.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lightmetal/lm_version.h"
#include "lmt.h"
#include "lmt_dump.h"

typedef struct lmt_command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
    const char *help; /* usage, options and examples */
} lmt_command;

static const lmt_command lmt_commands[] = {
    {"run", lmt_cmd_run, "replay a captured workload and check its goldens",
     "usage: lightmetal run FILE [options]\n"
     "\n"
     "Replays the workload captured in FILE on a simulated device built from the\n"
     "file's system descriptor and recorded device options, compares every\n"
     "golden (buffer contents the capture recorded as expected), and prints a\n"
     "summary: commands, programs, bytes moved, how often the host waited for\n"
     "the device mid-run, goldens checked and the time taken. FILE is verified\n"
     "before anything runs, and each kernel, trace and data blob is hashed as\n"
     "it goes to the device, so a file changed after capture is refused.\n"
     "\n"
     "options:\n"
     "  --input NAME=FILE      replace what the workload writes into the named\n"
     "                         buffer (an Input or InputOutput, not an Output)\n"
     "                         with FILE (repeatable): a NumPy array when\n"
     "                         FILE ends in .npy (see below), otherwise raw bytes,\n"
     "                         exactly the buffer's size. Goldens computed from\n"
     "                         the captured input may then mismatch (--no-goldens)\n"
     "  --output NAME=FILE     save the named buffer after the run (repeatable):\n"
     "                         a NumPy array when FILE ends in .npy, otherwise raw\n"
     "                         bytes. Written when the run passes and when a\n"
     "                         golden mismatches (exit 1); never after any other\n"
     "                         failure\n"
     "  --loop N               run the whole workload N times (default 1)\n"
     "  --tolerance ATOL,RTOL  compare goldens as float32 values, passing when\n"
     "                         |got - want| <= ATOL + RTOL * |want|\n"
     "                         (default: bit for bit)\n"
     "  --no-goldens           skip the golden comparisons (default: compare)\n"
     "  --no-verify-hashes     do not hash blobs while running (default: hash).\n"
     "                         Reasonable only for a file already checked with\n"
     "                         'lightmetal verify', which hashes every blob, and\n"
     "                         not changed since\n"
     "  --watchdog N           fault a kernel that runs more than N instructions in\n"
     "                         one launch (decimal, at least 1; default: the value\n"
     "                         recorded at capture)\n"
     "  --strict-protocol      make the compute protocol lapses the chip tolerates\n"
     "                         (packing without cb_reserve_back into free pages,\n"
     "                         packing without tile_regs_wait) faults; without it\n"
     "                         they run with a warning line (default: as captured)\n"
     "  --threads N            host threads for the simulator, 1 to 1024\n"
     "                         (default: all CPUs)\n"
     "  --profile              time every program launch and print where the time\n"
     "                         went: the slowest launch labels (a compiled model\n"
     "                         labels each node's launches 'OpType node-name'; a\n"
     "                         trace replay is 'trace N'), the time by op (the\n"
     "                         labels' first word) and by program (its kernels'\n"
     "                         names); with --json every label and every program\n"
     "                         inside each label. Each row also counts the RISC-V\n"
     "                         instructions its kernels ran: unlike the time, the\n"
     "                         same on any machine and thread count\n"
     "  --json                 print the summary as one JSON object (default: text)\n"
     "  -h, --help             show this help\n"
     "\n"
     "named buffers and .npy files:\n"
     "  'lightmetal info FILE' lists the named buffers with their role, size,\n"
     "  format and shape. A buffer's format gives the .npy dtype: Float32 '<f4',\n"
     "  UInt32 '<u4', Int32 '<i4', Float16_b (bfloat16) '<u2' holding the\n"
     "  bfloat16 bit patterns (the upper 16 bits of each float32), anything else\n"
     "  '|u1' bytes. --output writes the buffer's recorded shape, or one\n"
     "  dimension when none was recorded; a scalar's shape is (). --input wants\n"
     "  that dtype and shape (the element count when no shape was recorded; a\n"
     "  scalar or a one-element (1,) buffer takes either form); a buffer without\n"
     "  a format takes any of the dtypes above, if the data is exactly its size.\n"
     "  .npy versions 1.0, 2.0 and 3.0 are read, 1.0 is written; little-endian\n"
     "  C-order arrays only.\n"
     "  A buffer may record an element type other than its format's ('Int64\n"
     "  stored as Int32' in 'lightmetal info'): a model's int64 or bool tensor\n"
     "  kept as Int32, float64 or float16 as Float32. Its .npy files then have\n"
     "  the element type's dtype: Float64 '<f8', Float16 '<f2', Int64 '<i8',\n"
     "  Int16 '<i2', Int8 '|i1', UInt16 '<u2', UInt8 '|u1', Bool '|b1', UInt64\n"
     "  '<u8' (--input also takes the storage format's dtype as is). Inputs are\n"
     "  converted with a range check (a value the storage cannot hold is an\n"
     "  error naming the element; float64 rounds to nearest float32); outputs\n"
     "  sign- or zero-extend, wrap to narrow integer types, write nonzero as\n"
     "  True and round float32 to float16 to nearest even. Raw files are the\n"
     "  storage format.\n"
     "\n"
     "exit codes:\n"
     "  0  the run passed (every golden matched, or --no-goldens)\n"
     "  1  a golden mismatched: the summary says where; outputs are saved\n"
     "  2  usage error, an invalid or changed FILE (e.g. a blob hash mismatch),\n"
     "     or an --input/--output file that cannot be used\n"
     "  3  the device faulted (an illegal instruction, the watchdog, ...)\n"
     "\n"
     "examples:\n"
     "  lightmetal run model.lmb\n"
     "  lightmetal run model.lmb --loop 10 --threads 2 --json\n"
     "  lightmetal run model.lmb --input act=act.npy --output out=out.npy\n"
     "  lightmetal run model.lmb --input act=act.bin --output out=out.bin "
     "--tolerance 1e-5,1e-3\n"
     "  lightmetal run model.lmb --no-goldens --watchdog 100000000 --output out=out.npy\n"
     "  lightmetal verify model.lmb && lightmetal run model.lmb --no-verify-hashes "
     "--loop 100\n"
     "  python3 -c 'import numpy; print(numpy.load(\"out.npy\"))'\n"},
    {"info", lmt_cmd_info, "show what a binary holds",
     "usage: lightmetal info FILE [--json]\n"
     "\n"
     "Verifies FILE (structure, table digest and meaning; blob hashes are left to\n"
     "'lightmetal verify'), then prints its format version, the producer and its\n"
     "version, this tool's version, the system descriptor, sizes, commands per\n"
     "type, kernels (name, processor, size, hash), blobs, traces and the named\n"
     "buffers.\n"
     "\n"
     "Each named buffer is listed with its role, size, element format, shape\n"
     "and buffer id. Roles: Input (the workload's host writes it; 'run --input'\n"
     "replaces those contents), Output (the host reads it back or a golden\n"
     "checks it; 'run --output' saves it), InputOutput (both). \"no format\"\n"
     "(JSON: \"none\") means the contents are plain bytes; the shape is left\n"
     "out (JSON: []) when the capture recorded none. A tensor whose element\n"
     "type is not its format's own shows it: \"Int64 stored as Int32\" (JSON:\n"
     "\"element_type\": \"Int64\", absent otherwise); 'run' converts its .npy\n"
     "files.\n"
     "\n"
     "options:\n"
     "  --json       print one JSON object instead of text (default: text)\n"
     "  -h, --help   show this help\n"
     "\n"
     "exit codes: 0 ok, 2 usage error or an invalid FILE\n"
     "\n"
     "examples:\n"
     "  lightmetal info model.lmb\n"
     "  lightmetal info model.lmb --json\n"},
    {"dump", lmt_cmd_dump, "print a binary's tables as JSON",
     "usage: lightmetal dump FILE\n"
     "\n"
     "Checks FILE's structure, then prints its tables (commands, traces, kernel\n"
     "list, buffer names, ...) as JSON, exactly as\n"
     "`flatc --json --strict-json schema/lightmetal.fbs -- FILE` does.\n"
     "Blob contents are not printed; their references are. Files whose\n"
     "meaning is wrong or whose tables changed (which `verify` and `run`\n"
     "reject) are dumped too, so they can be inspected.\n"
     "\n"
     "options:\n"
     "  -h, --help   show this help\n"
     "\n"
     "exit codes: 0 ok, 2 usage error or a FILE whose structure is invalid\n"
     "\n"
     "examples:\n"
     "  lightmetal dump model.lmb\n"
     "  lightmetal dump model.lmb > model.json\n"},
    {"verify", lmt_cmd_verify, "check a binary without running it",
     "usage: lightmetal verify FILE\n"
     "\n"
     "Checks FILE's structure (every offset, table, vector and blob range),\n"
     "the digest of its tables, the hash of every blob, and its meaning (ids\n"
     "defined before use, core ranges inside the grid, limits, kernel ELFs)\n"
     "without touching a device. Prints \"FILE: ok\" on success; otherwise the\n"
     "first problem, on one line of stderr.\n"
     "\n"
     "options:\n"
     "  -h, --help   show this help\n"
     "\n"
     "exit codes: 0 ok, 2 usage error or an invalid FILE\n"
     "\n"
     "examples:\n"
     "  lightmetal verify model.lmb\n"
     "  lightmetal verify model.lmb && lightmetal run model.lmb\n"},
    {"kcc", lmt_cmd_kcc, "compile a kernel to an ELF as lm_create_kernel does", lmt_kcc_help},
    {"compile", lmt_cmd_compile, "compile an ONNX model into a binary", lmt_compile_help},
};

#define LMT_COMMAND_COUNT (sizeof lmt_commands / sizeof lmt_commands[0])

static const lmt_command *lmt_find_command(const char *name) {
    for (size_t i = 0; i < LMT_COMMAND_COUNT; i++)
        if (!strcmp(lmt_commands[i].name, name)) return &lmt_commands[i];
    return NULL;
}

void lmt_print_help(const char *cmd) {
    const lmt_command *c = lmt_find_command(cmd);
    if (c) fputs(c->help, stdout);
}

static void print_usage(FILE *out) {
    fputs("usage: lightmetal COMMAND FILE [options]\n"
          "       lightmetal --help | --version\n"
          "\n"
          "Runs, inspects and checks Light Metal binaries (.lmb): workloads\n"
          "captured from the lightmetal runtime, replayed without a compiler.\n"
          "Also compiles ONNX models into binaries (compile), and kernels as the\n"
          "runtime does (kcc), to inspect or prebuild.\n"
          "\ncommands:\n",
          out);
    for (size_t i = 0; i < LMT_COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", lmt_commands[i].name, lmt_commands[i].summary);
    fputs("\n'lightmetal COMMAND --help' shows a command's options and examples.\n"
          "\n"
          "options:\n"
          "  -h, --help   show this help\n"
          "  --version    print the tool's version and the binary format it reads\n"
          "\n"
          "exit codes: 0 ok, 1 golden mismatch, 2 usage error, invalid file or\n"
          "failed compile, 3 device fault\n"
          "\n"
          "examples:\n"
          "  lightmetal verify model.lmb\n"
          "  lightmetal info model.lmb --json\n"
          "  lightmetal run model.lmb --loop 10\n"
          "  lightmetal run model.lmb --input x=x.npy --output y=y.npy\n"
          "  lightmetal compile model.onnx -o model.lmb --input-shape x=1x3x32x32\n"
          "  lightmetal kcc reader.cpp --processor dm0 -o reader.elf\n",
          out);
}

int lmt_cmd_verify(int argc, char **argv) {
    const char *path;
    int rc = lmt_parse_file_args("verify", argc, argv, false, &path, NULL);
    if (rc >= 0) return rc;
    lmt_file f;
    if ((rc = lmt_file_open("verify", path, LMT_CHECK_MEANING_AND_HASH, &f))) return rc;
    printf("%s: ok (%u commands, %" PRIu64 " bytes)\n", path,
           (unsigned)lmb_LightMetalBinary_commands(f.root).len, f.size);
    lmt_file_close(&f);
    return LMT_EXIT_OK;
}

int lmt_cmd_dump(int argc, char **argv) {
    const char *path;
    int rc = lmt_parse_file_args("dump", argc, argv, false, &path, NULL);
    if (rc >= 0) return rc;
    lmt_file f;
    if ((rc = lmt_file_open("dump", path, LMT_CHECK_STRUCTURE, &f))) return rc;
    lmt_dump_root(stdout, f.root);
    lmt_file_close(&f);
    return LMT_EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "lightmetal: missing COMMAND (try 'lightmetal --help')\n");
        return LMT_EXIT_INVALID;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2 && lmt_find_command(argv[2]))
            lmt_print_help(argv[2]);
        else
            print_usage(stdout);
        return LMT_EXIT_OK;
    }
    if (!strcmp(name, "--version")) {
        printf("lightmetal %s (binary format %d.%d)\n", lm_version_string(), LMB_FORMAT_MAJOR,
               LMB_FORMAT_MINOR);
        return LMT_EXIT_OK;
    }
    const lmt_command *c = lmt_find_command(name);
    if (!c) {
        fprintf(stderr, "lightmetal: unknown command '%s' (try 'lightmetal --help')\n", name);
        return LMT_EXIT_INVALID;
    }
    int rc = c->main(argc - 2, argv + 2);
    /* A failed write to stdout (a full disk, a closed pipe) is an error too. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "lightmetal %s: cannot write the output\n", c->name);
        if (rc == LMT_EXIT_OK) rc = LMT_EXIT_INVALID;
    }
    return rc;
}
