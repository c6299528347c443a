#include "runtime/jit.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"

#ifndef LM_KERNEL_SDK_DIR
#error "the build must define LM_KERNEL_SDK_DIR"
#endif

extern char **environ;

/* Bump when anything about how kernels are built changes without showing up
 * in the hashed inputs, so old cache entries are not reused. */
#define JIT_KEY_VERSION "lightmetal-jit-1"
#define JIT_MAX_ARGS 64
#define PATH_MAX_LEN 4096
/* Longest cache directory path: leaves room for the names made inside it. */
#define JIT_DIR_MAX 3900

static const char *const base_flags[] = {
    "--target=riscv32", "-march=rv32im",     "-mabi=ilp32",         "-O2",
    "-ffreestanding",   "-fno-builtin",      "-nostdlib",           "-std=c11",
    "-fuse-ld=lld",     "-Wl,--gc-sections", "-ffunction-sections", "-fdata-sections",
};
#define BASE_FLAG_COUNT (sizeof base_flags / sizeof base_flags[0])

static const char *clang_path(void) {
    const char *c = getenv("LM_CLANG");
    return c && *c ? c : "clang";
}

static const char *sdk_dir(void) {
    const char *s = getenv("LM_KERNEL_SDK");
    return s && *s ? s : LM_KERNEL_SDK_DIR;
}

/* mkdir -p; existing directories are fine. */
static lm_status make_dirs(const char *path) {
    char buf[PATH_MAX_LEN];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return err_set(LM_ERR_IO, "kernel cache path too long: '%s'", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return err_set(LM_ERR_IO, "cannot create kernel cache directory '%s': %s", buf,
                               strerror(errno));
            *p = saved;
            if (!saved) break;
        }
    }
    return LM_OK;
}

static lm_status cache_dir(const jit_request *req, char *out, size_t size) {
    const char *env;
    int n;
    if (req->cache_dir)
        n = snprintf(out, size, "%s", req->cache_dir);
    else if ((env = getenv("LM_CACHE_DIR")) && *env)
        n = snprintf(out, size, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        n = snprintf(out, size, "%s/lightmetal/kernels", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(out, size, "%s/.cache/lightmetal/kernels", env);
    else
        return err_set(LM_ERR_IO, "no kernel cache directory: set LM_CACHE_DIR");
    /* Leave room for the file names made inside it. */
    if (n < 0 || n >= JIT_DIR_MAX) return err_set(LM_ERR_IO, "kernel cache path too long");
    return make_dirs(out);
}

/* A unique scratch path inside the cache directory (whose length cache_dir()
 * bounds, so this never truncates). */
static void scratch_path(char *out, size_t size, const char *dir, const char *suffix) {
    static atomic_ulong counter;
    int n = snprintf(out, size, "%.*s/tmp-%ld-%lu%.16s", JIT_DIR_MAX, dir, (long)getpid(),
                     (unsigned long)atomic_fetch_add(&counter, 1), suffix);
    (void)n;
}

/* Runs argv with stdout and stderr going to `log_path`; *out_exit is the exit
 * status (or -1 when killed by a signal). */
static lm_status run(char *const argv[], const char *log_path, int *out_exit) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return err_set(LM_ERR_IO, "cannot run the kernel compiler '%s': %s (set LM_CLANG)", argv[0],
                       strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return err_set(LM_ERR_IO, "waiting for the compiler: %s", strerror(errno));
    /* 127 is what a spawned shell-less exec failure looks like on some systems. */
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return err_set(LM_ERR_IO, "cannot run the kernel compiler '%s' (set LM_CLANG)", argv[0]);
    *out_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return LM_OK;
}

/* The compiler's version text: part of every key. Read once per compiler path
 * (LM_CLANG may change between builds, in tests for instance). */
static pthread_mutex_t version_mutex = PTHREAD_MUTEX_INITIALIZER;
static char version_clang[PATH_MAX_LEN];
static char version_text[512];

static lm_status read_version(const char *dir, char *out, size_t out_size) {
    pthread_mutex_lock(&version_mutex);
    lm_status st = LM_OK;
    if (strcmp(version_clang, clang_path()) != 0) {
        char log[PATH_MAX_LEN];
        scratch_path(log, sizeof log, dir, ".version");
        char *argv[] = {(char *)clang_path(), "--version", NULL};
        int exit_code = 0;
        st = run(argv, log, &exit_code);
        if (!st && exit_code != 0) st = err_set(LM_ERR_IO, "'%s --version' failed", argv[0]);
        void *text = NULL;
        size_t size;
        if (!st) st = file_read_all(log, &text, &size);
        if (!st) {
            snprintf(version_text, sizeof version_text, "%s", (char *)text);
            snprintf(version_clang, sizeof version_clang, "%s", clang_path());
        }
        free(text);
        unlink(log);
    }
    if (!st) snprintf(out, out_size, "%s", version_text);
    pthread_mutex_unlock(&version_mutex);
    return st;
}

static int is_identifier(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

static lm_status validate(const jit_request *r) {
    if (!r->source) return err_set(LM_ERR_INVALID_ARGUMENT, "kernel source is NULL");
    if (r->define_count && !r->defines)
        return err_set(LM_ERR_INVALID_ARGUMENT, "define_count is %zu but defines is NULL",
                       r->define_count);
    if (r->compile_arg_count && !r->compile_args)
        return err_set(LM_ERR_INVALID_ARGUMENT, "compile_arg_count is %zu but compile_args is NULL",
                       r->compile_arg_count);
    if (r->define_count > JIT_MAX_ARGS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "too many defines: %zu (limit %d)", r->define_count,
                       JIT_MAX_ARGS);
    for (size_t i = 0; i < r->define_count; i++) {
        if (!is_identifier(r->defines[i].name))
            return err_set(LM_ERR_INVALID_ARGUMENT, "define %zu: '%s' is not a C identifier", i,
                           r->defines[i].name ? r->defines[i].name : "(null)");
        if (r->defines[i].value && strpbrk(r->defines[i].value, "\n\r"))
            return err_set(LM_ERR_INVALID_ARGUMENT, "define %s: value contains a line break",
                           r->defines[i].name);
    }
    return LM_OK;
}

/* Argument strings owned by one build. */
typedef struct argbuf {
    char *argv[BASE_FLAG_COUNT + 2 * JIT_MAX_ARGS + 24];
    char *owned[JIT_MAX_ARGS + 8];
    size_t argc, owned_count;
} argbuf;

static void push(argbuf *a, const char *s) {
    a->argv[a->argc++] = (char *)s;
}

/* Pushes the concatenation of up to four pieces (NULL pieces are skipped). */
static lm_status push_cat(argbuf *a, const char *p0, const char *p1, const char *p2,
                          const char *p3) {
    const char *parts[] = {p0, p1, p2, p3};
    size_t n = 1;
    for (int i = 0; i < 4; i++)
        n += parts[i] ? strlen(parts[i]) : 0;
    char *s = malloc(n);
    if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    s[0] = '\0';
    for (int i = 0; i < 4; i++)
        if (parts[i]) strcat(s, parts[i]);
    a->owned[a->owned_count++] = s;
    push(a, s);
    return LM_OK;
}

static void argbuf_free(argbuf *a) {
    for (size_t i = 0; i < a->owned_count; i++)
        free(a->owned[i]);
}

/* Compile-time args travel as one macro the SDK expands into a const array. */
static char *format_compile_args(const jit_request *r) {
    size_t cap = 32 + r->compile_arg_count * 12;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t n = (size_t)snprintf(s, cap, "-DKERNEL_COMPILE_TIME_ARGS=");
    for (size_t i = 0; i < r->compile_arg_count; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s%uu", i ? "," : "", r->compile_args[i]);
    if (r->compile_arg_count == 0) snprintf(s + n, cap - n, "0u");
    return s;
}

/* Flags shared by the preprocessing and the build, in a fixed order. */
static lm_status common_flags(argbuf *a, const jit_request *r) {
    push(a, clang_path());
    for (size_t i = 0; i < BASE_FLAG_COUNT; i++)
        push(a, base_flags[i]);
    lm_status st = push_cat(a, "-I", sdk_dir(), "/include", NULL);
    if (!st && r->include_dir) st = push_cat(a, "-I", r->include_dir, NULL, NULL);
    for (size_t i = 0; !st && i < r->define_count; i++) {
        const jit_define *d = &r->defines[i];
        st = push_cat(a, "-D", d->name, d->value ? "=" : NULL, d->value);
    }
    if (st) return st;
    char *ct = format_compile_args(r);
    if (!ct) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    a->owned[a->owned_count++] = ct;
    push(a, ct);
    return LM_OK;
}

/* Reads the compiler's log into an LM_ERR_COMPILE message. */
static lm_status compile_error(const char *log, const char *name) {
    void *text = NULL;
    size_t size = 0;
    file_read_all(log, &text, &size);
    char *t = text ? text : "";
    while (size && (t[size - 1] == '\n' || t[size - 1] == ' '))
        t[--size] = '\0';
    lm_status st = err_set(LM_ERR_COMPILE, "kernel '%s' failed to compile:\n%s", name, t);
    free(text);
    return st;
}

/* Finishes the command line with `src -o out`, runs it with its messages in
 * `log`, and turns a failure into LM_ERR_COMPILE with those messages. */
static lm_status run_compiler(argbuf *a, const char *src, const char *out, const char *log,
                              const char *name) {
    push(a, src);
    push(a, "-o");
    push(a, out);
    push(a, NULL);
    int exit_code = 0;
    lm_status st = run(a->argv, log, &exit_code);
    if (!st && exit_code != 0) st = compile_error(log, name);
    return st;
}

static lm_status hash_preprocessed(const jit_request *r, const char *src, const char *dir,
                                   const char *version, uint64_t *out_key) {
    argbuf a = {0};
    char out[PATH_MAX_LEN], log[PATH_MAX_LEN];
    scratch_path(out, sizeof out, dir, ".i");
    scratch_path(log, sizeof log, dir, ".log");
    lm_status st = common_flags(&a, r);
    size_t flag_count = a.argc; /* what follows are scratch paths, not hashed */
    if (!st) {
        push(&a, "-E");
        push(&a, "-P");
        st = run_compiler(&a, src, out, log, r->source_name);
    }
    file_mapping m = {0};
    if (!st) st = file_map(out, &m);
    if (!st) {
        hash64_state h;
        hash64_begin(&h, 0);
        hash64_update(&h, JIT_KEY_VERSION, sizeof JIT_KEY_VERSION);
        hash64_update(&h, version, strlen(version));
        for (size_t i = 1; i < flag_count; i++)
            hash64_update(&h, a.argv[i], strlen(a.argv[i]) + 1);
        hash64_update(&h, m.data, m.size);
        *out_key = hash64_end(&h);
        file_unmap(&m);
    }
    unlink(out);
    unlink(log);
    argbuf_free(&a);
    return st;
}

static lm_status compile_and_link(const jit_request *r, const char *src, const char *dir,
                                  const char *elf_path) {
    argbuf a = {0};
    char out[PATH_MAX_LEN], log[PATH_MAX_LEN];
    scratch_path(out, sizeof out, dir, ".elf");
    scratch_path(log, sizeof log, dir, ".log");
    lm_status st = common_flags(&a, r);
    if (!st) st = push_cat(&a, "-Wl,-T,", sdk_dir(), "/link.ld", NULL);
    if (!st) st = push_cat(&a, sdk_dir(), "/crt0.S", NULL, NULL);
    if (!st) st = run_compiler(&a, src, out, log, r->source_name);
    /* Publish atomically: concurrent builders of the same key race harmlessly. */
    if (!st && rename(out, elf_path) != 0)
        st = err_set(LM_ERR_IO, "cannot store '%s' in the kernel cache: %s", elf_path,
                     strerror(errno));
    unlink(out);
    unlink(log);
    argbuf_free(&a);
    return st;
}

lm_status jit_build(const jit_request *r, jit_artifact *out) {
    if (!r || !out) return err_set(LM_ERR_INVALID_ARGUMENT, "jit_build: NULL argument");
    lm_status st = validate(r);
    if (st) return st;
    const char *name = r->source_name ? r->source_name : "kernel";
    jit_request req = *r;
    req.source_name = name;

    char dir[PATH_MAX_LEN];
    char version[sizeof version_text];
    st = cache_dir(&req, dir, sizeof dir);
    if (!st) st = read_version(dir, version, sizeof version);
    if (st) return st;

    /* The source goes to a scratch file whose #line makes messages name it. */
    char src[PATH_MAX_LEN];
    scratch_path(src, sizeof src, dir, ".c");
    FILE *f = fopen(src, "wx");
    if (!f) return err_set(LM_ERR_IO, "cannot write '%s': %s", src, strerror(errno));
    fprintf(f, "#line 1 \"%s\"\n%s\n", name, r->source);
    if (fclose(f) != 0) {
        unlink(src);
        return err_set(LM_ERR_IO, "cannot write '%s'", src);
    }

    uint64_t key = 0;
    st = hash_preprocessed(&req, src, dir, version, &key);
    char elf_path[PATH_MAX_LEN];
    int n = snprintf(elf_path, sizeof elf_path, "%.*s/%016llx.elf", JIT_DIR_MAX, dir,
                     (unsigned long long)key);
    (void)n; /* cannot truncate: cache_dir() bounds dir */
    int hit = 0;
    if (!st) {
        hit = access(elf_path, R_OK) == 0;
        if (!hit) st = compile_and_link(&req, src, dir, elf_path);
    }
    unlink(src);
    if (st) return st;

    void *elf;
    size_t size;
    st = file_read_all(elf_path, &elf, &size);
    if (st) return st;
    *out = (jit_artifact){.elf = elf, .elf_size = size, .key = key, .cache_hit = hit};
    return LM_OK;
}
