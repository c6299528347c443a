#include "lmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/lmb_semantic.h"
#include "replay/replay.h"

void lmt_error(const char *cmd, const char *fmt, ...) {
    char msg[ERR_MESSAGE_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, whatever the message holds. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "lightmetal %s: %s\n", cmd, msg);
}

/* ---------------------------------------------------------------- options */

void lmt_args_init(lmt_args *a, const char *cmd, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
}

lmt_arg_kind lmt_args_next(lmt_args *a) {
    a->opt = NULL;
    a->value = NULL;
    while (a->next < a->argc) {
        const char *s = a->argv[a->next++];
        if (a->only_positional || s[0] != '-' || s[1] == '\0') {
            a->value = s;
            return LMT_ARG_POSITIONAL;
        }
        if (!strcmp(s, "--")) {
            a->only_positional = true;
            continue;
        }
        const char *eq = strchr(s, '=');
        size_t n = eq ? (size_t)(eq - s) : strlen(s);
        if (n >= sizeof a->opt_buf) n = sizeof a->opt_buf - 1;
        memcpy(a->opt_buf, s, n);
        a->opt_buf[n] = '\0';
        a->opt = a->opt_buf;
        a->value = eq ? eq + 1 : NULL;
        return LMT_ARG_OPTION;
    }
    return LMT_ARG_END;
}

bool lmt_args_value(lmt_args *a, const char **out_value) {
    if (a->value) {
        *out_value = a->value;
        return true;
    }
    if (a->next >= a->argc) {
        lmt_error(a->cmd, "%s needs a value (see 'lightmetal %s --help')", a->opt, a->cmd);
        return false;
    }
    *out_value = a->argv[a->next++];
    return true;
}

bool lmt_args_no_value(lmt_args *a) {
    if (!a->value) return true;
    lmt_error(a->cmd, "%s takes no value (see 'lightmetal %s --help')", a->opt, a->cmd);
    return false;
}

bool lmt_args_unknown(lmt_args *a) {
    lmt_error(a->cmd, "unknown option %s (see 'lightmetal %s --help')", a->opt, a->cmd);
    return false;
}

bool lmt_args_is_help(const lmt_args *a) {
    return !strcmp(a->opt, "--help") || !strcmp(a->opt, "-h");
}

bool lmt_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min, uint64_t max,
                   uint64_t *out_value) {
    /* strtoull accepts signs, spaces and wraps negative numbers: count
     * digits by hand instead. */
    bool ok = text[0] != '\0';
    uint64_t v = 0;
    for (const char *p = text; *p && ok; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - d) / 10)
            ok = false;
        else
            v = v * 10 + d;
    }
    if (!ok || v < min || v > max) {
        lmt_error(cmd, "%s: '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]", opt, text, min,
                  max);
        return false;
    }
    *out_value = v;
    return true;
}

bool lmt_parse_u32(const char *cmd, const char *opt, const char *text, uint32_t min, uint32_t max,
                   uint32_t *out_value) {
    uint64_t v;
    if (!lmt_parse_u64(cmd, opt, text, min, max, &v)) return false;
    *out_value = (uint32_t)v;
    return true;
}

/* A finite, non-negative number spanning text[0..len). */
static bool parse_nonneg(const char *text, size_t len, double *out) {
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '+' || buf[0] == '-') return false;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v) || v < 0) return false;
    *out = v;
    return true;
}

bool lmt_parse_tolerance(const char *cmd, const char *opt, const char *text, double *out_atol,
                         double *out_rtol) {
    const char *comma = strchr(text, ',');
    if (!comma || !parse_nonneg(text, (size_t)(comma - text), out_atol) ||
        !parse_nonneg(comma + 1, strlen(comma + 1), out_rtol)) {
        lmt_error(cmd, "%s: '%s' is not ATOL,RTOL (two non-negative numbers, e.g. 1e-5,1e-3)", opt,
                  text);
        return false;
    }
    return true;
}

int lmt_parse_file_args(const char *cmd, int argc, char **argv, bool allow_json,
                        const char **out_path, bool *out_json) {
    lmt_args a;
    lmt_args_init(&a, cmd, argc, argv);
    *out_path = NULL;
    if (out_json) *out_json = false;
    for (lmt_arg_kind k; (k = lmt_args_next(&a)) != LMT_ARG_END;) {
        if (k == LMT_ARG_POSITIONAL) {
            if (*out_path) {
                lmt_error(cmd, "unexpected argument '%s' (one FILE only)", a.value);
                return LMT_EXIT_INVALID;
            }
            *out_path = a.value;
        } else if (lmt_args_is_help(&a)) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            lmt_print_help(cmd);
            return LMT_EXIT_OK;
        } else if (allow_json && !strcmp(a.opt, "--json")) {
            if (!lmt_args_no_value(&a)) return LMT_EXIT_INVALID;
            *out_json = true;
        } else {
            lmt_args_unknown(&a);
            return LMT_EXIT_INVALID;
        }
    }
    if (!*out_path) {
        lmt_error(cmd, "missing FILE (see 'lightmetal %s --help')", cmd);
        return LMT_EXIT_INVALID;
    }
    return -1;
}

/* ------------------------------------------------------------------ files */

int lmt_file_open(const char *cmd, const char *path, lmt_check check, lmt_file *out_file) {
    static const uint8_t empty[8];
    memset(out_file, 0, sizeof *out_file);
    lm_status st = file_map(path, &out_file->map);
    if (st) {
        lmt_error(cmd, "%s", lm_last_error());
        return LMT_EXIT_INVALID;
    }
    /* An empty file maps to NULL; the verifier then reports it too small. */
    out_file->data = out_file->map.data ? out_file->map.data : empty;
    out_file->size = out_file->map.size;
    lmb_verify_options vopts;
    lmb_verify_options_init(&vopts);
    vopts.check_blob_hashes = check == LMT_CHECK_MEANING_AND_HASH;
    vopts.ignore_table_digest = check == LMT_CHECK_STRUCTURE; /* dump shows damaged files */
    st = lmb_verify(out_file->data, out_file->size, &vopts, NULL);
    if (!st && check != LMT_CHECK_STRUCTURE) {
        lmb_semantic_options sopts;
        rp_semantic_options(&sopts); /* what replay checks, exactly */
        st = lmb_verify_semantics(out_file->data, out_file->size, &sopts, NULL);
    }
    if (st) {
        lmt_error(cmd, "%s: %s", path, lm_last_error());
        lmt_file_close(out_file);
        return LMT_EXIT_INVALID;
    }
    out_file->root = lmb_root(out_file->data);
    return LMT_EXIT_OK;
}

void lmt_file_close(lmt_file *f) {
    file_unmap(&f->map);
    memset(f, 0, sizeof *f);
}

bool lmt_buffer_size(fb_table root, uint32_t buffer_id, uint64_t *out_size) {
    fb_vec cmds = lmb_LightMetalBinary_commands(root);
    for (uint32_t i = 0; i < cmds.len; i++) {
        fb_table e = fb_vec_table(cmds, i);
        if (lmb_CommandEntry_cmd_type(e) != LMB_Command_CreateBuffer) continue;
        fb_table c = lmb_CommandEntry_cmd(e);
        if (lmb_CreateBuffer_buffer_id(c) == buffer_id) {
            *out_size = lmb_CreateBuffer_size(c);
            return true;
        }
    }
    return false;
}
