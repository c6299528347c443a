/* Thread-local error details behind lm_last_error().
 *
 * Convention: the function that detects a failure records the message once,
 * with err_set(), and returns the status it got back; callers above pass the
 * status through unchanged (they may add context with err_prefix()). A public
 * function's message starts with its name exactly once ("lm_x: ..."): it
 * records "lm_x: ..." itself, or prefixes "lm_x" to what a layer below
 * recorded; err_prefix() never repeats a context the message already starts
 * with, so both may happen on one path (a helper given the name) safely.
 */
#ifndef LM_BASE_ERROR_H
#define LM_BASE_ERROR_H

#include <stddef.h>

#include "lightmetal/lm_status.h"

#if defined(__GNUC__)
#define ERR_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#else
#define ERR_PRINTF(fmt_idx, args_idx)
#endif

/* Longest detail message kept; longer ones are truncated with "...". */
#define ERR_MESSAGE_MAX 1024

/* Records a printf-style message for the calling thread; returns `status`.
 * A macro, so that the compiler sees the status every error path returns
 * (the variadic function cannot be inlined); otherwise optimizing builds warn
 * that outputs written only on success may be read uninitialized after one.
 * `status` is evaluated twice: pass a constant or a variable. */
#define err_set(status, ...) err_return_((status), err_set_message((status), __VA_ARGS__))
lm_status err_set_message(lm_status status, const char *fmt, ...) ERR_PRINTF(2, 3);
static inline lm_status err_return_(lm_status status, lm_status recorded) {
    (void)recorded;
    return status;
}

/* Prepends "<printf-style text>: " to the current message, unless the message
 * already starts with exactly that; returns `status`. */
lm_status err_prefix(lm_status status, const char *fmt, ...) ERR_PRINTF(2, 3);

/* Empties the calling thread's message. */
void err_clear(void);

/* Copies the calling thread's message into dst (always NUL-terminated). Used to
 * carry a device-side failure over to the thread that will report it. */
void err_copy(char *dst, size_t dst_size);

#endif
