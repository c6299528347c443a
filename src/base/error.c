#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char tls_message[ERR_MESSAGE_MAX];

static const char *const status_names[LM_STATUS_COUNT_] = {
    [LM_OK] = "LM_OK",
    [LM_ERR_INVALID_ARGUMENT] = "LM_ERR_INVALID_ARGUMENT",
    [LM_ERR_INVALID_HANDLE] = "LM_ERR_INVALID_HANDLE",
    [LM_ERR_OUT_OF_HOST_MEMORY] = "LM_ERR_OUT_OF_HOST_MEMORY",
    [LM_ERR_OUT_OF_DEVICE_MEMORY] = "LM_ERR_OUT_OF_DEVICE_MEMORY",
    [LM_ERR_INVALID_STATE] = "LM_ERR_INVALID_STATE",
    [LM_ERR_NOT_FOUND] = "LM_ERR_NOT_FOUND",
    [LM_ERR_IO] = "LM_ERR_IO",
    [LM_ERR_INVALID_FILE] = "LM_ERR_INVALID_FILE",
    [LM_ERR_UNSUPPORTED] = "LM_ERR_UNSUPPORTED",
    [LM_ERR_COMPILE] = "LM_ERR_COMPILE",
    [LM_ERR_DEVICE_FAULT] = "LM_ERR_DEVICE_FAULT",
    [LM_ERR_MISMATCH] = "LM_ERR_MISMATCH",
    [LM_ERR_INTERNAL] = "LM_ERR_INTERNAL",
};

const char *lm_status_string(lm_status status) {
    if ((unsigned)status >= LM_STATUS_COUNT_ || !status_names[status]) return "LM_ERR_UNKNOWN";
    return status_names[status];
}

const char *lm_last_error(void) {
    return tls_message;
}

/* Marks a truncated message so nobody mistakes it for the whole story. */
static void mark_truncated(char *msg, size_t size, int wanted) {
    if (wanted >= 0 && (size_t)wanted >= size && size >= 4) memcpy(msg + size - 4, "...", 4);
}

lm_status err_set_message(lm_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    mark_truncated(tls_message, sizeof tls_message, n);
    return status;
}

lm_status err_prefix(lm_status status, const char *fmt, ...) {
    char prefix[ERR_MESSAGE_MAX];
    char old[ERR_MESSAGE_MAX];
    memcpy(old, tls_message, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* A helper given its caller's name (a public function's "lm_x") may have
     * recorded it already; the caller's own prefix must not repeat it. */
    size_t len = strlen(prefix);
    if (strncmp(old, prefix, len) == 0 && old[len] == ':' && old[len + 1] == ' ') return status;
    int n = snprintf(tls_message, sizeof tls_message, "%s: %s", prefix, old);
    mark_truncated(tls_message, sizeof tls_message, n);
    return status;
}

void err_clear(void) {
    tls_message[0] = '\0';
}

void err_copy(char *dst, size_t dst_size) {
    if (dst_size == 0) return;
    snprintf(dst, dst_size, "%s", tls_message);
}
