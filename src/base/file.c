/* O_TMPFILE (and AT_EMPTY_PATH) are Linux extensions; elsewhere saves use
 * the named-temporary scheme only. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

static lm_status io_error(const char *what, const char *path, int errnum) {
    return err_set(LM_ERR_IO, "%s '%s': %s", what, path, strerror(errnum));
}

lm_status file_map(const char *path, file_mapping *out_mapping) {
    out_mapping->data = NULL;
    out_mapping->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open", path, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return io_error("cannot stat", path, e);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(LM_ERR_IO, "cannot map '%s': not a regular file", path);
    }
    if ((uintmax_t)st.st_size > SIZE_MAX) {
        close(fd);
        return err_set(LM_ERR_IO, "cannot map '%s': file too large for this host", path);
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        return LM_OK;
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return io_error("cannot map", path, e);
    out_mapping->data = p;
    out_mapping->size = size;
    return LM_OK;
}

void file_unmap(file_mapping *mapping) {
    if (mapping->data) munmap((void *)mapping->data, mapping->size);
    mapping->data = NULL;
    mapping->size = 0;
}

static int write_all(int fd, const void *data, size_t size) {
    const char *p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

/* The directory holding `path` ("." for a bare name); false when too long. */
static bool parent_dir(const char *path, char *dir, size_t size) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, size, ".");
        return true;
    }
    size_t len = (size_t)(slash - path);
    if (len == 0) len = 1; /* "/file" lives in "/" */
    if (len >= size) return false;
    memcpy(dir, path, len);
    dir[len] = '\0';
    return true;
}

/* The directory entry must reach the disk too, or a crash could lose the link
 * or the rename. */
static void sync_parent_dir(const char *path) {
    char dir[4096];
    if (!parent_dir(path, dir, sizeof dir)) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

struct file_sink {
    int fd;
    const char *path;
    int error; /* the first write error, so a producer that ignores it still fails */
};

lm_status file_sink_write(file_sink *sink, const void *data, size_t size) {
    if (!sink->error) sink->error = write_all(sink->fd, data, size);
    return sink->error ? io_error("cannot write", sink->path, sink->error) : LM_OK;
}

static atomic_bool force_named_temp;

void file_force_named_temp(bool on) {
    atomic_store(&force_named_temp, on);
}

/* Runs the producer into fd, makes the file an ordinary document (0644, not
 * the private mode of a temporary) and flushes it. */
static lm_status fill(int fd, const char *path, file_produce_fn produce, void *ctx) {
    if (fchmod(fd, 0644) != 0) return io_error("cannot set the permissions of", path, errno);
    file_sink sink = {fd, path, 0};
    lm_status st = produce(ctx, &sink);
    if (st) return st;
    if (sink.error) return io_error("cannot write", path, sink.error);
    if (fsync(fd) != 0) return io_error("cannot flush", path, errno);
    return LM_OK;
}

/* "<path>.tmp.XXXXXX" with the X's filled from `seed`. */
static void temp_name(char *out, const char *path, size_t path_len, uint64_t seed) {
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    memcpy(out, path, path_len);
    memcpy(out + path_len, ".tmp.", 5);
    for (int i = 0; i < 6; i++) {
        out[path_len + 5 + i] = digits[seed % 36];
        seed /= 36;
    }
    out[path_len + 11] = '\0';
}

/* The current scheme where unnamed files are not available: a named temporary
 * file next to `path`, renamed over it when complete. */
static lm_status save_named(const char *path, file_produce_fn produce, void *ctx) {
    size_t path_len = strlen(path);
    static const char suffix[] = ".tmp.XXXXXX";
    char *tmp = malloc(path_len + sizeof suffix);
    if (!tmp) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot save '%s': out of memory", path);
    memcpy(tmp, path, path_len);
    memcpy(tmp + path_len, suffix, sizeof suffix);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        lm_status st = io_error("cannot create a temporary file to save", path, errno);
        free(tmp);
        return st;
    }
    lm_status st = fill(fd, path, produce, ctx);
    if (close(fd) != 0 && !st) st = io_error("cannot close", path, errno);
    if (!st && rename(tmp, path) != 0)
        st = io_error("cannot rename the temporary file onto", path, errno);
    if (st) unlink(tmp);
    free(tmp);
    if (!st) sync_parent_dir(path);
    return st;
}

#ifdef O_TMPFILE
/* Gives the unnamed file `fd` the name `name`: through /proc (any user), else
 * by AT_EMPTY_PATH (needs a capability). Returns 0 or the errno. */
static int link_unnamed(int fd, const char *name) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    int e = errno;
    if (e != ENOENT) return e; /* ENOENT: no /proc mounted */
    return linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ? 0 : e;
}

/* Links the complete unnamed file at `path`: directly when `path` does not
 * exist, else under a fresh temporary name renamed over `path`. */
static lm_status publish(int fd, const char *path) {
    int e = link_unnamed(fd, path);
    if (e == 0) return LM_OK;
    if (e != EEXIST) return io_error("cannot link the saved file at", path, e);
    size_t path_len = strlen(path);
    char *tmp = malloc(path_len + 12);
    if (!tmp) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot save '%s': out of memory", path);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_nsec;
    for (int attempt = 0; attempt < 100; attempt++) {
        temp_name(tmp, path, path_len, seed);
        e = link_unnamed(fd, tmp);
        if (e != EEXIST) break;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    }
    lm_status st = LM_OK;
    if (e)
        st = io_error("cannot link the saved file next to", path, e);
    else if (rename(tmp, path) != 0) {
        st = io_error("cannot rename the temporary file onto", path, errno);
        unlink(tmp);
    }
    free(tmp);
    return st;
}

/* Returns -1 when the directory's file system has no unnamed files (the
 * caller falls back), else 0 with *out_status the outcome. */
static int save_unnamed(const char *path, file_produce_fn produce, void *ctx,
                        lm_status *out_status) {
    char dir[4096];
    if (!parent_dir(path, dir, sizeof dir)) return -1;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        /* Not supported by the kernel (EISDIR) or the file system. */
        if (e == EOPNOTSUPP || e == EISDIR || e == EINVAL) return -1;
        *out_status = io_error("cannot create a temporary file to save", path, e);
        return 0;
    }
    lm_status st = fill(fd, path, produce, ctx);
    if (!st) st = publish(fd, path);
    /* The data was flushed before the link; closing only drops the
     * descriptor (and frees the file when it was never linked). */
    close(fd);
    if (!st) sync_parent_dir(path);
    *out_status = st;
    return 0;
}
#endif

lm_status file_save_atomic_with(const char *path, file_produce_fn produce, void *ctx) {
#ifdef O_TMPFILE
    lm_status st;
    if (!atomic_load(&force_named_temp) && save_unnamed(path, produce, ctx, &st) == 0) return st;
#endif
    return save_named(path, produce, ctx);
}

typedef struct chunk_list {
    const file_chunk *chunks;
    size_t count;
} chunk_list;

static lm_status write_chunks(void *ctx, file_sink *sink) {
    const chunk_list *list = ctx;
    for (size_t i = 0; i < list->count; i++) {
        lm_status st = file_sink_write(sink, list->chunks[i].data, list->chunks[i].size);
        if (st) return st;
    }
    return LM_OK;
}

lm_status file_save_atomic(const char *path, const file_chunk *chunks, size_t chunk_count) {
    chunk_list list = {chunks, chunk_count};
    return file_save_atomic_with(path, write_chunks, &list);
}

lm_status file_read_all(const char *path, void **out_data, size_t *out_size) {
    *out_data = NULL;
    *out_size = 0;
    file_mapping m;
    lm_status st = file_map(path, &m);
    if (st) return st;
    char *buf = malloc(m.size + 1);
    if (!buf) {
        file_unmap(&m);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot read '%s': out of memory", path);
    }
    if (m.size) memcpy(buf, m.data, m.size);
    buf[m.size] = '\0';
    *out_data = buf;
    *out_size = m.size;
    file_unmap(&m);
    return LM_OK;
}
