/* lightmetal — status codes and error details.
 *
 * Every public function that can fail returns an lm_status. LM_OK is 0, so
 * `if (st != LM_OK)` and `if (st)` both work. On failure the calling thread's
 * detail message (lm_last_error) says what was wrong, naming the function and
 * the offending argument or field. A success does not clear the message.
 *
 * Thread-safety: all functions here may be called from any thread.
 */
#ifndef LIGHTMETAL_LM_STATUS_H
#define LIGHTMETAL_LM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lm_status {
    LM_OK = 0,
    LM_ERR_INVALID_ARGUMENT,     /* an argument or option is out of its domain */
    LM_ERR_INVALID_HANDLE,       /* handle is null, of the wrong type, or stale */
    LM_ERR_OUT_OF_HOST_MEMORY,   /* a host allocation failed */
    LM_ERR_OUT_OF_DEVICE_MEMORY, /* no room left in device DRAM or L1 */
    LM_ERR_INVALID_STATE,        /* the call is not allowed in the current state */
    LM_ERR_NOT_FOUND,            /* a named thing does not exist */
    LM_ERR_IO,                   /* a file or OS operation failed */
    LM_ERR_INVALID_FILE,         /* a file or blob is corrupt or not ours */
    LM_ERR_UNSUPPORTED,          /* valid request this build or device cannot serve */
    LM_ERR_COMPILE,              /* a kernel failed to compile or link */
    LM_ERR_DEVICE_FAULT,         /* the device stopped a command (kernel fault, ...) */
    LM_ERR_MISMATCH,             /* a golden comparison failed */
    LM_ERR_INTERNAL,             /* a bug in lightmetal; please report it */
    LM_STATUS_COUNT_
} lm_status;

/* Stable short name of a status, e.g. "LM_ERR_INVALID_ARGUMENT". Never NULL;
 * unknown values give "LM_ERR_UNKNOWN". */
const char *lm_status_string(lm_status status);

/* The calling thread's most recent error detail, e.g.
 * "lm_create_buffer: size 1000 is not a multiple of page_size 64".
 * Never NULL (empty when no error happened yet on this thread). The pointer
 * stays valid until the next lightmetal call on the same thread. */
const char *lm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
