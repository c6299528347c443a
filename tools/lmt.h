/* Shared pieces of the `lightmetal` command-line tool: exit codes, error
 * reporting, option parsing and opening a binary.
 *
 * Every failure is reported as exactly one line on stderr,
 * "lightmetal <command>: <what>", and maps to one exit code.
 */
#ifndef LM_TOOLS_LMT_H
#define LM_TOOLS_LMT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/file.h"
#include "format/lmb.h"
#include "lightmetal/lm_version.h"

/* The tool's version: the library's (lightmetal/lm_version.h, generated
 * from the one project version of the build). */
#define LMT_VERSION_STRING lm_version_string()

/* Exit codes (the tool's contract with scripts). */
enum {
    LMT_EXIT_OK = 0,
    LMT_EXIT_MISMATCH = 1, /* a golden comparison failed */
    LMT_EXIT_INVALID = 2,  /* usage error, or an invalid / corrupt / unreadable file */
    LMT_EXIT_FAULT = 3,    /* the device faulted during replay */
};

/* Prints "lightmetal <cmd>: <message>" as one line on stderr (newlines in
 * the message, e.g. from a verifier detail, become spaces). */
void lmt_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---------------------------------------------------------------- options */

/* Walks argv of one subcommand. Options are "--name VALUE", "--name=VALUE"
 * or flags "--name"; "--" ends options; everything else is positional. */
typedef struct lmt_args {
    const char *cmd; /* subcommand, for messages */
    int argc;
    char **argv;
    int next;
    const char *opt;   /* current option name, e.g. "--loop" */
    const char *value; /* its value (options taking one) */
    bool only_positional;
    char opt_buf[64]; /* the option name without its "=VALUE" part */
} lmt_args;

void lmt_args_init(lmt_args *a, const char *cmd, int argc, char **argv);

/* Result of lmt_args_next. */
typedef enum lmt_arg_kind {
    LMT_ARG_END,        /* no more arguments */
    LMT_ARG_POSITIONAL, /* a->value is the argument */
    LMT_ARG_OPTION,     /* a->opt is the option name ("--loop"); use lmt_args_value */
} lmt_arg_kind;

lmt_arg_kind lmt_args_next(lmt_args *a);

/* The value of the current option (the "=VALUE" part or the next argument).
 * Returns false after reporting a missing value. */
bool lmt_args_value(lmt_args *a, const char **out_value);

/* For flags: false after reporting "--name takes no value" when the current
 * option came as "--name=VALUE". */
bool lmt_args_no_value(lmt_args *a);

/* Reports an option the subcommand does not know. Always returns false. */
bool lmt_args_unknown(lmt_args *a);

/* Whether the current option asks for help (-h, --help). */
bool lmt_args_is_help(const lmt_args *a);

/* A decimal integer (digits only: no sign, space or base prefix) in
 * [min, max] for `opt`; reports and returns false otherwise. */
bool lmt_parse_u32(const char *cmd, const char *opt, const char *text, uint32_t min, uint32_t max,
                   uint32_t *out_value);
bool lmt_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min, uint64_t max,
                   uint64_t *out_value);

/* "ATOL,RTOL": two finite, non-negative numbers. */
bool lmt_parse_tolerance(const char *cmd, const char *opt, const char *text, double *out_atol,
                         double *out_rtol);

/* Parses the arguments of a command taking one FILE and (when allow_json)
 * an optional --json; handles --help. Returns -1 when the command should go
 * on, or the exit code to return (after printing help or an error). */
int lmt_parse_file_args(const char *cmd, int argc, char **argv, bool allow_json,
                        const char **out_path, bool *out_json);

/* ------------------------------------------------------------------ files */

/* A binary mapped read-only and verified. */
typedef struct lmt_file {
    file_mapping map;
    const void *data; /* never NULL, also for an empty file */
    uint64_t size;
    fb_table root;
} lmt_file;

/* How much lmt_file_open checks. Structure alone makes every reader safe;
 * meaning is what a replay needs as well. */
typedef enum lmt_check {
    LMT_CHECK_STRUCTURE,        /* lmb_verify */
    LMT_CHECK_MEANING,          /* lmb_verify, then lmb_verify_semantics */
    LMT_CHECK_MEANING_AND_HASH, /* the same, re-hashing every blob */
} lmt_check;

/* Maps `path` and verifies it as `check` says (semantics with the
 * simulator's kernel memory map). Returns LMT_EXIT_OK, or reports the reason
 * and returns LMT_EXIT_INVALID (nothing stays mapped). */
int lmt_file_open(const char *cmd, const char *path, lmt_check check, lmt_file *out_file);
void lmt_file_close(lmt_file *f);

/* Size of the buffer a BufferName entry refers to (the CreateBuffer with its
 * id); false when no such command exists. */
bool lmt_buffer_size(fb_table root, uint32_t buffer_id, uint64_t *out_size);

/* --------------------------------------------------------- subcommands */

int lmt_cmd_run(int argc, char **argv);
int lmt_cmd_info(int argc, char **argv);
int lmt_cmd_dump(int argc, char **argv);
int lmt_cmd_verify(int argc, char **argv);
int lmt_cmd_kcc(int argc, char **argv);
int lmt_cmd_compile(int argc, char **argv);

/* kcc's usage, options and examples. */
extern const char lmt_kcc_help[];
extern const char lmt_compile_help[];

/* Prints a subcommand's help (usage and examples) on stdout. */
void lmt_print_help(const char *cmd);

#endif
