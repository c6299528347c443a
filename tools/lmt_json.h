/* A streaming JSON writer for the lightmetal tool.
 *
 * The layout is the one `flatc --json --strict-json` prints (two-space
 * indent, one member or element per line, "[\n\n]" for an empty array), so
 * `lightmetal dump` output can be compared with flatc's byte for byte.
 * Strings are escaped as flatc does: control characters and every non-ASCII
 * code point as \uXXXX (UTF-16 surrogate pairs above U+FFFF); bytes that are
 * not valid UTF-8 become \u00XX each.
 *
 * Misuse (unbalanced begin/end, nesting deeper than LMT_JSON_MAX_DEPTH) is a
 * programming error of the tool, not of the input; it is ignored rather than
 * crashing. Thread-safety: one writer per thread.
 */
#ifndef LM_TOOLS_LMT_JSON_H
#define LM_TOOLS_LMT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LMT_JSON_MAX_DEPTH 80

typedef struct lmt_json {
    FILE *out;
    uint32_t depth;
    struct {
        bool array;
        uint32_t count;
    } level[LMT_JSON_MAX_DEPTH];
} lmt_json;

void lmt_json_init(lmt_json *j, FILE *out);

/* Containers. `key` names the member inside an object and must be NULL
 * inside an array or at the top level. Ending the top-level value prints the
 * final newline. */
void lmt_json_begin_object(lmt_json *j, const char *key);
void lmt_json_end_object(lmt_json *j);
void lmt_json_begin_array(lmt_json *j, const char *key);
void lmt_json_end_array(lmt_json *j);

/* Values, each as a member (`key` set) or an array element (`key` NULL). */
void lmt_json_u64(lmt_json *j, const char *key, uint64_t v);
void lmt_json_double(lmt_json *j, const char *key, double v);
void lmt_json_bool(lmt_json *j, const char *key, bool v);
/* `len` bytes of s (need not be NUL-terminated). */
void lmt_json_string(lmt_json *j, const char *key, const char *s, size_t len);
void lmt_json_cstr(lmt_json *j, const char *key, const char *s);

/* Writes `len` bytes of s as a JSON string literal, quotes included. */
void lmt_json_write_string(FILE *out, const char *s, size_t len);

#endif
