/* lightmetal: run, inspect and check Light Metal binaries.
 *
 *   lightmetal run FILE [options]   replay a captured workload
 *   lightmetal info FILE [--json]   what a binary holds
 *   lightmetal dump FILE            the binary's tables as JSON
 *   lightmetal verify FILE          structural and semantic checks only
 *
 * Exit codes: 0 success, 1 a golden mismatched, 2 usage error or an invalid
 * file, 3 a device fault during replay.
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
     "Replays FILE on a simulated device matching its system descriptor and\n"
     "compares every golden. Prints a summary: commands, programs, bytes moved,\n"
     "goldens checked and the time taken.\n"
     "\n"
     "options:\n"
     "  --loop N               run the whole workload N times (default 1)\n"
     "  --input NAME=PATH      feed the named input buffer from a file of its size\n"
     "  --output NAME=PATH     save the named buffer after the run\n"
     "  --tolerance ATOL,RTOL  compare float32 goldens within |d| <= ATOL + RTOL*|want|\n"
     "  --threads N            host threads for the simulator (default: all CPUs)\n"
     "  --json                 print the summary as JSON\n"
     "\n"
     "exit codes: 0 ok, 1 golden mismatch, 2 usage or invalid file, 3 device fault\n"
     "\n"
     "examples:\n"
     "  lightmetal run model.lmb\n"
     "  lightmetal run model.lmb --loop 10 --threads 2 --json\n"
     "  lightmetal run model.lmb --input act=act.bin --output out=out.bin "
     "--tolerance 1e-5,1e-3\n"},
    {"info", lmt_cmd_info, "show what a binary holds",
     "usage: lightmetal info FILE [--json]\n"
     "\n"
     "Verifies FILE, then prints its format version, producer, system\n"
     "descriptor, sizes, commands per type, kernels (name, processor, size,\n"
     "hash), blobs, traces and named buffers.\n"
     "\n"
     "options:\n"
     "  --json   print one JSON object instead of text\n"
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
     "meaning is wrong (which `verify` and `run` reject) are dumped too, so\n"
     "they can be inspected.\n"
     "\n"
     "examples:\n"
     "  lightmetal dump model.lmb\n"
     "  lightmetal dump model.lmb > model.json\n"},
    {"verify", lmt_cmd_verify, "check a binary without running it",
     "usage: lightmetal verify FILE\n"
     "\n"
     "Checks FILE's structure (every offset, table, vector, blob range and\n"
     "blob hash) and meaning (ids defined before use, core ranges inside the\n"
     "grid, limits, kernel ELFs) without touching a device. Prints\n"
     "\"FILE: ok\" on success; otherwise the first problem, and exits 2.\n"
     "\n"
     "examples:\n"
     "  lightmetal verify model.lmb\n"
     "  lightmetal verify model.lmb && lightmetal run model.lmb\n"},
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
    fputs("usage: lightmetal COMMAND FILE [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < LMT_COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", lmt_commands[i].name, lmt_commands[i].summary);
    fputs("\n'lightmetal COMMAND --help' shows a command's options and examples.\n"
          "exit codes: 0 ok, 1 golden mismatch, 2 usage or invalid file, 3 device fault\n"
          "\n"
          "examples:\n"
          "  lightmetal verify model.lmb\n"
          "  lightmetal info model.lmb --json\n"
          "  lightmetal run model.lmb --loop 10\n",
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
