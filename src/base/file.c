#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* The directory entry must reach the disk too, or a crash could lose the rename. */
static void sync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t len = (size_t)(slash - path);
        if (len == 0) len = 1; /* "/file" lives in "/" */
        if (len >= sizeof dir) return;
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

lm_status file_save_atomic(const char *path, const file_chunk *chunks, size_t chunk_count) {
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
    const char *step = NULL;
    int e = 0;
    /* mkstemp makes the file private; saved files are ordinary documents. */
    if (fchmod(fd, 0644) != 0) {
        e = errno;
        step = "cannot set the permissions of";
    }
    for (size_t i = 0; i < chunk_count && !e; i++) {
        e = write_all(fd, chunks[i].data, chunks[i].size);
        if (e) step = "cannot write";
    }
    if (!e && fsync(fd) != 0) {
        e = errno;
        step = "cannot flush";
    }
    if (close(fd) != 0 && !e) {
        e = errno;
        step = "cannot close";
    }
    if (!e && rename(tmp, path) != 0) {
        e = errno;
        step = "cannot rename the temporary file onto";
    }
    if (e) {
        unlink(tmp);
        free(tmp);
        return io_error(step, path, e);
    }
    free(tmp);
    sync_parent_dir(path);
    return LM_OK;
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
