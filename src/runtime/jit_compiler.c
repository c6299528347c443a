#include "runtime/jit_compiler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"

extern char **environ;

#define PATH_MAX_LEN JIT_PATH_MAX

static lm_status path_join(char *out, const char *a, const char *b, const char *c) {
    int n = snprintf(out, PATH_MAX_LEN, "%s%s%s", a, b, c ? c : "");
    if (n < 0 || n >= PATH_MAX_LEN) return err_set(LM_ERR_IO, "path too long: '%s%s'", a, b);
    return LM_OK;
}

/* Symlinks are kept: the dependency paths the compiler reports start with
 * exactly the directories it was given. */
lm_status jit_absolute(const char *path, char *out) {
    lm_status st;
    if (path[0] == '/') {
        st = path_join(out, path, "", NULL);
    } else {
        char cwd[PATH_MAX_LEN];
        if (!getcwd(cwd, sizeof cwd))
            return err_set(LM_ERR_IO, "cannot find the working directory: %s", strerror(errno));
        st = path_join(out, cwd, "/", path);
    }
    for (size_t n = strlen(out); !st && n > 1 && out[n - 1] == '/'; n--)
        out[n - 1] = '\0';
    return st;
}

/* The compiler's identity without running it. */
static uint64_t compiler_stat_id(const char *path, const struct stat *st) {
    hash64_state h;
    hash64_begin(&h, 0);
    hash64_update_str(&h, path);
    hash64_update_u64(&h, (uint64_t)st->st_size);
    hash64_update_u64(&h, (uint64_t)st->st_mtim.tv_sec);
    hash64_update_u64(&h, (uint64_t)st->st_mtim.tv_nsec);
    hash64_update_u64(&h, (uint64_t)st->st_ino);
    return hash64_end(&h);
}

static bool executable_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The last lookup, reused while LM_CLANG and PATH stay the same and the
 * file is still there (a PATH search is a dozen system calls). */
static pthread_mutex_t compiler_mutex = PTHREAD_MUTEX_INITIALIZER;
static char compiler_memo_key[2 * PATH_MAX_LEN], compiler_memo_path[PATH_MAX_LEN];

/* Finds the compiler without running it: LM_CLANG or `clang`, through PATH
 * unless it names a path. */
lm_status jit_compiler_find(jit_compiler *c) {
    const char *name = getenv("LM_CLANG");
    c->name = name && *name ? name : "clang";
    c->found = false;
    const char *path_env = getenv("PATH");
    char key[2 * PATH_MAX_LEN];
    int kn = snprintf(key, sizeof key, "%s%c%s", c->name, '\0', path_env ? path_env : "");
    bool memo = kn > 0 && kn < (int)sizeof key;
    pthread_mutex_lock(&compiler_mutex);
    if (memo && compiler_memo_path[0] && !memcmp(key, compiler_memo_key, (size_t)kn + 1)) {
        snprintf(c->path, sizeof c->path, "%s", compiler_memo_path);
        c->found = true;
    }
    pthread_mutex_unlock(&compiler_mutex);
    struct stat sb;
    if (c->found && stat(c->path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        c->stat_id = compiler_stat_id(c->path, &sb);
        return LM_OK;
    }
    c->found = false;
    char cand[PATH_MAX_LEN];
    if (strchr(c->name, '/')) {
        if (executable_file(c->name)) {
            lm_status st = jit_absolute(c->name, c->path);
            if (st) return st;
            c->found = true;
        }
    } else {
        const char *path = getenv("PATH");
        if (!path) path = "/usr/bin:/bin";
        while (!c->found) {
            const char *colon = strchr(path, ':');
            size_t len = colon ? (size_t)(colon - path) : strlen(path);
            int n = snprintf(cand, sizeof cand, "%.*s/%s", (int)(len ? len : 1), len ? path : ".",
                             c->name);
            if (n > 0 && n < (int)sizeof cand && executable_file(cand)) {
                lm_status st = jit_absolute(cand, c->path);
                if (st) return st;
                c->found = true;
            }
            if (!colon) break;
            path = colon + 1;
        }
    }
    if (c->found && stat(c->path, &sb) == 0) {
        c->stat_id = compiler_stat_id(c->path, &sb);
        pthread_mutex_lock(&compiler_mutex);
        if (memo) {
            memcpy(compiler_memo_key, key, (size_t)kn + 1);
            snprintf(compiler_memo_path, sizeof compiler_memo_path, "%s", c->path);
        }
        pthread_mutex_unlock(&compiler_mutex);
    }
    return LM_OK;
}

/* Only async-signal-safe calls happen between fork and exec. */
lm_status jit_run(const char *dir, char *const argv[], const char *log_path, int *out_exit) {
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return err_set(LM_ERR_IO, "cannot create '%s': %s", log_path, strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd);
        return err_set(LM_ERR_IO, "cannot start the kernel compiler: %s", strerror(e));
    }
    if (pid == 0) {
        if (chdir(dir) == 0 && dup2(fd, 1) >= 0 && dup2(fd, 2) >= 0) execve(argv[0], argv, environ);
        _exit(127);
    }
    close(fd);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return err_set(LM_ERR_IO, "waiting for the compiler: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return err_set(LM_ERR_IO, "cannot run the kernel compiler '%s' (set LM_CLANG)", argv[0]);
    *out_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return LM_OK;
}

/* The last version asked for (LM_CLANG may change between builds). */
static pthread_mutex_t version_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool version_known;
static uint64_t version_stat_id, version_hash;

static uint64_t hash_version(const char *text, size_t size) {
    hash64_state h;
    hash64_begin(&h, 0);
    const char *end = text + size;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        size_t len = nl ? (size_t)(nl - text) + 1 : (size_t)(end - text);
        if (strncmp(text, "InstalledDir:", 13) != 0) hash64_update(&h, text, len);
        text += len;
    }
    return hash64_end(&h);
}

lm_status jit_compiler_version(const jit_compiler *c, const char *dir, const char *log_path,
                               uint64_t *out) {
    pthread_mutex_lock(&version_mutex);
    lm_status st = LM_OK;
    if (!version_known || version_stat_id != c->stat_id) {
        char *argv[] = {(char *)c->path, "--version", NULL};
        int exit_code = 0;
        st = jit_run(dir, argv, log_path, &exit_code);
        if (!st && exit_code != 0)
            st = err_set(LM_ERR_IO, "'%s --version' failed (exit %d)", c->path, exit_code);
        void *text = NULL;
        size_t size = 0;
        if (!st) st = file_read_all(log_path, &text, &size);
        uint64_t h = 0;
        if (!st) h = hash_version(text, size);
        free(text);
        if (!st) {
            version_known = true;
            version_stat_id = c->stat_id;
            version_hash = h;
        }
    }
    if (!st) *out = version_hash;
    pthread_mutex_unlock(&version_mutex);
    return st;
}
