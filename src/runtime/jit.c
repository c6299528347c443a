#include "runtime/jit.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"
#include "runtime/jit_compiler.h"
#include "runtime/jit_deps.h"
#include "runtime/jit_diag.h"
#include "runtime/jit_manifest.h"

/* Bump when anything about how kernels are built changes without showing up
 * in the hashed inputs, so old cache entries are not reused. */
#define JIT_KEY_VERSION "lightmetal-jit-3"
#define JIT_MAX_DEFINES 128
#define PATH_MAX_LEN JIT_PATH_MAX
/* Longest cache directory path: leaves room for the names made inside it. */
#define JIT_DIR_MAX 3800
/* Bounds on `.include` chains and on the files they add. */
#define JIT_MAX_ASM_FILES 256

/* The fixed names inside a build's scratch directory (the source's depends
 * on its language: clang picks the language by the extension). */
#define IR_NAME "kernel.ll"
#define DEP_NAME "kernel.d"
#define ELF_NAME "kernel.elf"
#define LOG_NAME "compiler.log"

static const char *const compile_flags[] = {
    "--target=riscv32", "-march=rv32im", "-mabi=ilp32",         "-O2",
    "-ffreestanding",   "-fno-builtin",  "-ffunction-sections", "-fdata-sections",
};
/* Per language. C++ kernels are freestanding: no exceptions or RTTI (no
 * runtime to support them), and no locks around function-local statics (a
 * kernel is one thread). Designated initialisers, C++20, are what tt-metal
 * kernels use to fill address generators. */
static const char *const c_flags[] = {"-std=c11"};
static const char *const cxx_flags[] = {"-std=c++17", "-fno-exceptions", "-fno-rtti",
                                        "-fno-threadsafe-statics", "-Wno-c++20-designator"};
static const char *const link_flags[] = {"-nostdlib", "-fuse-ld=lld", "-Wl,--gc-sections"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- paths ---- */

static lm_status path_join(char *out, const char *a, const char *b, const char *c) {
    int n = snprintf(out, PATH_MAX_LEN, "%s%s%s", a, b, c ? c : "");
    if (n < 0 || n >= PATH_MAX_LEN) return err_set(LM_ERR_IO, "path too long: '%s%s'", a, b);
    return LM_OK;
}

/* Whether `path` lies strictly below directory `dir`. */
static bool under(const char *path, const char *dir) {
    size_t n = strlen(dir);
    return n && strncmp(path, dir, n) == 0 && path[n] == '/';
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

static lm_status find_cache_dir(const jit_request *req, char *out) {
    const char *env;
    char dir[PATH_MAX_LEN];
    int n;
    if (req->cache_dir)
        n = snprintf(dir, sizeof dir, "%s", req->cache_dir);
    else if ((env = getenv("LM_CACHE_DIR")) && *env)
        n = snprintf(dir, sizeof dir, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && *env)
        n = snprintf(dir, sizeof dir, "%s/lightmetal/kernels", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(dir, sizeof dir, "%s/.cache/lightmetal/kernels", env);
    else
        return err_set(LM_ERR_IO, "no kernel cache directory: set LM_CACHE_DIR");
    if (n < 0 || n >= JIT_DIR_MAX) return err_set(LM_ERR_IO, "kernel cache path too long");
    struct stat sb;
    lm_status st = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) ? LM_OK : make_dirs(dir);
    if (!st) st = jit_absolute(dir, out);
    if (!st && strlen(out) >= JIT_DIR_MAX) st = err_set(LM_ERR_IO, "kernel cache path too long");
    return st;
}

/* ---- files ---- */

/* hash64 of a regular file's bytes; false when it cannot be read. */
static bool hash_file(const char *path, uint64_t *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    hash64_state h;
    hash64_begin(&h, 0);
    char buf[16384];
    while (ok) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        if (n <= 0) break;
        hash64_update(&h, buf, (size_t)n);
    }
    close(fd);
    if (ok) *out = hash64_end(&h);
    return ok;
}

/* Reads a whole regular file into a malloc'ed buffer with plain reads (the
 * cache's files are small: a mapping would cost more to set up and tear
 * down than the copy). False when it cannot be read, for any reason. */
static bool read_file(const char *path, void **out, size_t *out_size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    char *buf = NULL;
    size_t size = 0;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
              (uintmax_t)st.st_size < SIZE_MAX && (buf = malloc((size_t)st.st_size + 1));
    while (ok && size < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + size, (size_t)st.st_size - size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            ok = false; /* an error, or the file shrank */
        else
            size += (size_t)n;
    }
    close(fd);
    if (!ok) {
        free(buf);
        return false;
    }
    buf[size] = '\0';
    *out = buf;
    *out_size = size;
    return true;
}

static bool is_regular(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static lm_status write_new_file(const char *path, const void *data, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(LM_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    const char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            return err_set(LM_ERR_IO, "cannot write '%s': %s", path, strerror(e));
        }
        p += n;
        size -= (size_t)n;
    }
    if (close(fd) != 0) return err_set(LM_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return LM_OK;
}

/* ---- one build ---- */

typedef struct jit_ctx {
    const jit_request *req;
    const char *name;
    jit_compiler cc;
    char cache[PATH_MAX_LEN];
    char sdk[PATH_MAX_LEN];
    char inc[PATH_MAX_LEN];      /* "" without an include directory */
    char line[PATH_MAX_LEN];     /* the name `#line` gives the source */
    char line_dir[PATH_MAX_LEN]; /* its directory part, mapped away; or "" */
    char base[PATH_MAX_LEN];     /* what __FILE__ becomes: the name without directories */
    char **defines;              /* "-DNAME[=VALUE]", malloc'ed */
    size_t define_count;
    char *compile_args;   /* "-DKERNEL_COMPILE_TIME_ARGS=...", malloc'ed */
    char *named_args;     /* "-DKERNEL_NAMED_COMPILE_TIME_ARGS=...", malloc'ed, or NULL */
    const char *src_name; /* the source's name in the scratch directory */
    const char *const *lang_flags;
    size_t lang_flag_count;
    uint64_t direct;            /* the manifest's key */
    char scratch[PATH_MAX_LEN]; /* the private directory of this build; "" until made */
} jit_ctx;

/* A directory -ffile-prefix-map can name (its syntax splits on '='). */
static bool mappable(const char *dir) {
    return dir[0] && !strchr(dir, '=');
}

/* Removes a directory of plain files (a scratch directory). */
static void remove_flat_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX_LEN];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!path_join(path, dir, "/", e->d_name)) unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* Scratch directories a killed build left behind: any older than an hour
 * (no build takes that long). Swept when a build needs a new one. */
#define JIT_STALE_SECONDS 3600

static void sweep_stale_scratch(const jit_ctx *c) {
    DIR *d = opendir(c->cache);
    struct dirent *e;
    char path[PATH_MAX_LEN];
    time_t now = time(NULL);
    while (d && (e = readdir(d))) {
        struct stat st;
        if (strncmp(e->d_name, "tmp-", 4) != 0 || path_join(path, c->cache, "/", e->d_name) ||
            lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || now - st.st_mtime < JIT_STALE_SECONDS)
            continue;
        remove_flat_dir(path);
    }
    if (d) closedir(d);
}

static lm_status make_scratch(jit_ctx *c) {
    if (c->scratch[0]) return LM_OK;
    sweep_stale_scratch(c);
    lm_status st = path_join(c->scratch, c->cache, "/tmp-XXXXXX", NULL);
    if (!st && !mkdtemp(c->scratch)) {
        st = err_set(LM_ERR_IO, "cannot create a scratch directory in '%s': %s", c->cache,
                     strerror(errno));
        c->scratch[0] = '\0';
    }
    return st;
}

static void remove_scratch(jit_ctx *c) {
    if (!c->scratch[0]) return;
    remove_flat_dir(c->scratch);
    c->scratch[0] = '\0';
}

static lm_status scratch_file(const jit_ctx *c, const char *name, char *out) {
    return path_join(out, c->scratch, "/", name);
}

/* Runs argv in the scratch directory, its messages in the log. */
static lm_status run_tool(const jit_ctx *c, char *const argv[], int *out_exit) {
    char log[PATH_MAX_LEN];
    lm_status st = scratch_file(c, LOG_NAME, log);
    return st ? st : jit_run(c->scratch, argv, log, out_exit);
}

static lm_status compiler_version(jit_ctx *c, uint64_t *out) {
    char log[PATH_MAX_LEN];
    lm_status st = make_scratch(c);
    if (!st) st = scratch_file(c, LOG_NAME, log);
    return st ? st : jit_compiler_version(&c->cc, c->scratch, log, out);
}

/* ---- the request ---- */

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
    if (r->define_count > JIT_MAX_DEFINES)
        return err_set(LM_ERR_INVALID_ARGUMENT, "too many defines: %zu (limit %d)", r->define_count,
                       JIT_MAX_DEFINES);
    if (r->compile_arg_count > JIT_MAX_DEFINES)
        return err_set(LM_ERR_INVALID_ARGUMENT, "too many compile-time arguments: %zu (limit %d)",
                       r->compile_arg_count, JIT_MAX_DEFINES);
    if (r->language != JIT_LANGUAGE_C && r->language != JIT_LANGUAGE_CXX)
        return err_set(LM_ERR_INVALID_ARGUMENT, "unknown kernel language %d", (int)r->language);
    if (r->named_arg_count && !r->named_args)
        return err_set(LM_ERR_INVALID_ARGUMENT, "named_arg_count is %zu but named_args is NULL",
                       r->named_arg_count);
    if (r->named_arg_count > JIT_MAX_DEFINES)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "too many named compile-time arguments: %zu (limit %d)", r->named_arg_count,
                       JIT_MAX_DEFINES);
    if (r->named_arg_count && r->language != JIT_LANGUAGE_CXX)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "named compile-time arguments need a C++ kernel (a .cpp file): C has no "
                       "constexpr lookup by name");
    for (size_t i = 0; i < r->named_arg_count; i++) {
        const char *name = r->named_args[i].name;
        if (!is_identifier(name))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "named compile-time argument %zu: '%s' is not an identifier", i,
                           name ? name : "(null)");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(r->named_args[j].name, name))
                return err_set(LM_ERR_INVALID_ARGUMENT,
                               "named compile-time argument '%s' is given twice", name);
    }
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

/* The names the source goes by: `#line` keeps the caller's name for
 * messages, and its directory is mapped away so that __FILE__ (the only way
 * the name reaches the ELF) is the bare file name. */
static void set_names(jit_ctx *c) {
    const char *name = c->name;
    bool plain = *name != '\0' && strlen(name) < PATH_MAX_LEN;
    for (const char *p = name; plain && *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f) plain = false;
    const char *slash = plain ? strrchr(name, '/') : NULL;
    if (!plain || (slash && slash[1] == '\0')) {
        name = "kernel";
        slash = NULL;
    }
    snprintf(c->base, sizeof c->base, "%s", slash ? slash + 1 : name);
    c->line_dir[0] = '\0';
    if (slash) {
        snprintf(c->line_dir, sizeof c->line_dir, "%.*s", (int)(slash + 1 - name), name);
        if (!mappable(c->line_dir)) { /* then #line carries the bare name */
            c->line_dir[0] = '\0';
            name = slash + 1;
        }
    }
    snprintf(c->line, sizeof c->line, "%s", name);
}

static lm_status set_defines(jit_ctx *c) {
    const jit_request *r = c->req;
    c->defines = calloc(r->define_count + 2, sizeof *c->defines);
    if (!c->defines) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; i < r->define_count; i++) {
        const jit_define *d = &r->defines[i];
        size_t n = 3 + strlen(d->name) + (d->value ? 1 + strlen(d->value) : 0);
        char *s = malloc(n);
        if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        snprintf(s, n, "-D%s%s%s", d->name, d->value ? "=" : "", d->value ? d->value : "");
        c->defines[c->define_count++] = s;
    }
    /* How many compile-time args there are, so C++ kernels can refuse an
     * index past them at compile time. */
    char *s = malloc(48);
    if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(s, 48, "-DKERNEL_COMPILE_TIME_ARG_COUNT=%zu", r->compile_arg_count);
    c->defines[c->define_count++] = s;
    /* Compile-time args travel as one macro the SDK expands into a const array. */
    size_t cap = 40 + r->compile_arg_count * 12;
    s = malloc(cap);
    if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t n = (size_t)snprintf(s, cap, "-DKERNEL_COMPILE_TIME_ARGS=");
    for (size_t i = 0; i < r->compile_arg_count; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s%uu", i ? "," : "", r->compile_args[i]);
    if (r->compile_arg_count == 0) snprintf(s + n, cap - n, "0u");
    c->compile_args = s;
    if (!r->named_arg_count) return LM_OK;
    /* {"name",valueu},... : the SDK's constexpr table. Names are identifiers,
     * so they need no quoting beyond the quotes. */
    cap = 48;
    for (size_t i = 0; i < r->named_arg_count; i++)
        cap += strlen(r->named_args[i].name) + 20;
    if (!(s = malloc(cap))) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    n = (size_t)snprintf(s, cap, "-DKERNEL_NAMED_COMPILE_TIME_ARGS=");
    for (size_t i = 0; i < r->named_arg_count; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s{\"%s\",%uu}", i ? "," : "", r->named_args[i].name,
                              r->named_args[i].value);
    c->named_args = s;
    return LM_OK;
}

static void ctx_free(jit_ctx *c) {
    remove_scratch(c);
    for (size_t i = 0; i < c->define_count; i++)
        free(c->defines[i]);
    free(c->defines);
    free(c->compile_args);
    free(c->named_args);
}

/* What identifies an SDK apart from the headers a kernel reads (those are
 * its dependencies): crt0 and the linker script, which every kernel links,
 * and the names of its headers, which decide what an include finds. */
static lm_status sdk_identity_read(const jit_ctx *c, uint64_t *out) {
    if (access(c->sdk, F_OK) != 0) {
        const char *env = getenv("LM_KERNEL_SDK_DIR");
        if (env && *env)
            return err_set(LM_ERR_IO, "kernel SDK '%s' not found (set LM_KERNEL_SDK_DIR)", c->sdk);
        char where[3 * PATH_MAX_LEN];
        jit_sdk_searched(where, sizeof where);
        return err_set(LM_ERR_IO,
                       "no kernel SDK found: looked in %s (set LM_KERNEL_SDK_DIR to one: "
                       "share/lightmetal/kernel-sdk in an install, kernel-sdk in the sources)",
                       where);
    }
    hash64_state h;
    hash64_begin(&h, 0);
    static const char *const files[] = {"/crt0.S", "/link.ld"};
    char path[PATH_MAX_LEN];
    for (size_t i = 0; i < COUNT(files); i++) {
        uint64_t fh;
        lm_status st = path_join(path, c->sdk, files[i], NULL);
        if (st) return st;
        if (!hash_file(path, &fh))
            return err_set(LM_ERR_IO, "the kernel SDK at '%s' lacks '%s' (set LM_KERNEL_SDK_DIR)",
                           c->sdk, files[i] + 1);
        hash64_update_str(&h, files[i]);
        hash64_update_u64(&h, fh);
    }
    lm_status st = path_join(path, c->sdk, "/include", NULL);
    if (st) return st;
    DIR *d = opendir(path);
    if (!d)
        return err_set(LM_ERR_IO, "the kernel SDK at '%s' has no include directory: %s", c->sdk,
                       strerror(errno));
    jit_strlist names = {0};
    struct dirent *e;
    while (!st && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            st = jit_strlist_add(&names, e->d_name, strlen(e->d_name));
    closedir(d);
    /* Directory order is the file system's: sort for a stable identity. */
    for (size_t i = 1; !st && i < names.count; i++)
        for (size_t j = i; j > 0 && strcmp(names.items[j - 1], names.items[j]) > 0; j--) {
            char *t = names.items[j];
            names.items[j] = names.items[j - 1];
            names.items[j - 1] = t;
        }
    for (size_t i = 0; !st && i < names.count; i++)
        hash64_update_str(&h, names.items[i]);
    jit_strlist_free(&names);
    if (!st) *out = hash64_end(&h);
    return st;
}

/* The identity is read again only when the SDK's path or the status
 * (inode, size, mtime) of crt0.S, link.ld or the include directory (whose
 * mtime moves when a header is added or removed) changed. */
static pthread_mutex_t sdk_mutex = PTHREAD_MUTEX_INITIALIZER;
static char sdk_memo_path[PATH_MAX_LEN];
static uint64_t sdk_memo_signature, sdk_memo_id;

static bool sdk_signature(const jit_ctx *c, uint64_t *out) {
    static const char *const names[] = {"/crt0.S", "/link.ld", "/include"};
    hash64_state h;
    hash64_begin(&h, 0);
    char path[PATH_MAX_LEN];
    for (size_t i = 0; i < COUNT(names); i++) {
        struct stat st;
        if (path_join(path, c->sdk, names[i], NULL) || stat(path, &st) != 0) return false;
        hash64_update_u64(&h, (uint64_t)st.st_dev);
        hash64_update_u64(&h, (uint64_t)st.st_ino);
        hash64_update_u64(&h, (uint64_t)st.st_size);
        hash64_update_u64(&h, (uint64_t)st.st_mtim.tv_sec);
        hash64_update_u64(&h, (uint64_t)st.st_mtim.tv_nsec);
    }
    *out = hash64_end(&h);
    return true;
}

static lm_status sdk_identity(const jit_ctx *c, uint64_t *out) {
    uint64_t sig = 0;
    bool have_sig = sdk_signature(c, &sig);
    pthread_mutex_lock(&sdk_mutex);
    bool known = have_sig && sig == sdk_memo_signature && !strcmp(c->sdk, sdk_memo_path);
    if (known) *out = sdk_memo_id;
    pthread_mutex_unlock(&sdk_mutex);
    if (known) return LM_OK;
    lm_status st = sdk_identity_read(c, out);
    if (!st && have_sig) {
        pthread_mutex_lock(&sdk_mutex);
        snprintf(sdk_memo_path, sizeof sdk_memo_path, "%s", c->sdk);
        sdk_memo_signature = sig;
        sdk_memo_id = *out;
        pthread_mutex_unlock(&sdk_mutex);
    }
    return st;
}

/* The manifest key: everything known before compiling, and no absolute path
 * unless the compiler cannot be told to map it away. */
static lm_status direct_key(jit_ctx *c) {
    uint64_t sdk_id = 0;
    lm_status st = sdk_identity(c, &sdk_id);
    if (st) return st;
    hash64_state h;
    hash64_begin(&h, 0);
    hash64_update_str(&h, JIT_KEY_VERSION);
    for (size_t i = 0; i < COUNT(compile_flags); i++)
        hash64_update_str(&h, compile_flags[i]);
    for (size_t i = 0; i < c->lang_flag_count; i++)
        hash64_update_str(&h, c->lang_flags[i]);
    hash64_update_str(&h, c->src_name);
    for (size_t i = 0; i < COUNT(link_flags); i++)
        hash64_update_str(&h, link_flags[i]);
    hash64_update_str(&h, "-I$SDK/include");
    if (!mappable(c->sdk)) hash64_update_str(&h, c->sdk);
    if (c->inc[0]) {
        hash64_update_str(&h, "-I$INC");
        if (!mappable(c->inc)) hash64_update_str(&h, c->inc);
    }
    for (size_t i = 0; i < c->define_count; i++)
        hash64_update_str(&h, c->defines[i]);
    hash64_update_str(&h, c->compile_args);
    if (c->named_args) hash64_update_str(&h, c->named_args);
    if (c->req->prelude) {
        hash64_update_str(&h, "-include");
        hash64_update_str(&h, c->req->prelude);
    }
    hash64_update_str(&h, "__FILE__");
    hash64_update_str(&h, c->base);
    hash64_update_u64(&h, sdk_id);
    hash64_update_str(&h, c->req->source);
    c->direct = hash64_end(&h);
    return LM_OK;
}

static uint64_t result_key(uint64_t direct, const jit_entry *e) {
    hash64_state h;
    hash64_begin(&h, 0);
    hash64_update_u64(&h, direct);
    hash64_update_u64(&h, e->compiler_version);
    for (uint32_t i = 0; i < e->dep_count; i++) {
        hash64_update_str(&h, e->deps[i].path);
        hash64_update_u64(&h, e->deps[i].hash);
    }
    return hash64_end(&h);
}

static lm_status cache_file(const jit_ctx *c, uint64_t key, const char *suffix, char *out) {
    char name[40];
    snprintf(name, sizeof name, "/%016llx%s", (unsigned long long)key, suffix);
    return path_join(out, c->cache, name, NULL);
}

/* The manifest form of a file the compiler read: "$SDK/..." or "$INC/..."
 * below those directories, else the absolute path. False for what cannot be
 * recorded: the build's own scratch files, relative paths, line breaks. */
static bool symbolic_path(const jit_ctx *c, const char *path, char *out) {
    if (path[0] != '/' || strpbrk(path, "\n\r") || under(path, c->scratch)) return false;
    bool in_sdk = under(path, c->sdk), in_inc = c->inc[0] && under(path, c->inc);
    if (in_sdk && in_inc) in_sdk = strlen(c->sdk) >= strlen(c->inc), in_inc = !in_sdk;
    const char *root = in_sdk ? "$SDK" : in_inc ? "$INC" : "";
    size_t skip = in_sdk ? strlen(c->sdk) : in_inc ? strlen(c->inc) : 0;
    return snprintf(out, PATH_MAX_LEN, "%s%s", root, path + skip) < PATH_MAX_LEN;
}

static bool expand_path(const jit_ctx *c, const char *sym, char *out) {
    const char *root = "";
    if (!strncmp(sym, "$SDK/", 5))
        root = c->sdk, sym += 4;
    else if (!strncmp(sym, "$INC/", 5)) {
        if (!c->inc[0]) return false;
        root = c->inc, sym += 4;
    }
    return snprintf(out, PATH_MAX_LEN, "%s%s", root, sym) < PATH_MAX_LEN;
}

static bool deps_match(const jit_ctx *c, const jit_entry *e) {
    char path[PATH_MAX_LEN];
    for (uint32_t i = 0; i < e->dep_count; i++) {
        uint64_t h;
        if (!expand_path(c, e->deps[i].path, path) || !hash_file(path, &h) || h != e->deps[i].hash)
            return false;
    }
    return true;
}

/* Reads the manifest; a missing or malformed one is empty. */
static lm_status load_manifest(const jit_ctx *c, jit_manifest *m) {
    *m = (jit_manifest){0};
    char path[PATH_MAX_LEN];
    lm_status st = cache_file(c, c->direct, ".manifest", path);
    if (st) return st;
    void *text = NULL;
    size_t size = 0;
    if (!read_file(path, &text, &size)) return LM_OK;
    bool ok = false;
    st = jit_manifest_parse(text, size, m, &ok);
    free(text);
    if (st || !ok) jit_manifest_free(m);
    return st;
}

/* Publishes m through the scratch directory (a rename, so readers see the
 * old or the new manifest, never a mix). */
static lm_status store_manifest(jit_ctx *c, const jit_manifest *m) {
    char *text = NULL, tmp[PATH_MAX_LEN], path[PATH_MAX_LEN];
    size_t size = 0;
    lm_status st = make_scratch(c);
    if (!st) st = jit_manifest_format(m, &text, &size);
    if (!st) st = scratch_file(c, "manifest", tmp);
    if (!st) st = cache_file(c, c->direct, ".manifest", path);
    if (!st) st = write_new_file(tmp, text, size);
    if (!st && rename(tmp, path) != 0)
        st = err_set(LM_ERR_IO, "cannot store '%s' in the kernel cache: %s", path, strerror(errno));
    free(text);
    return st;
}

/* Looks for an entry whose files all hash as recorded and whose ELF is
 * intact. */
static lm_status try_cache(jit_ctx *c, jit_artifact *out, bool *out_hit) {
    *out_hit = false;
    jit_manifest m;
    lm_status st = load_manifest(c, &m);
    for (uint32_t i = 0; !st && i < m.count; i++) {
        jit_entry *e = &m.entries[i];
        bool restat = false;
        if (c->cc.found && e->compiler_stat != c->cc.stat_id) {
            /* Another binary, or the same one touched: its version decides.
             * One that cannot say is no compiler at all (as when none is
             * found: the newest matching entry serves). */
            uint64_t version;
            if (compiler_version(c, &version) != LM_OK) {
                err_clear();
                c->cc.found = false;
            } else if (version != e->compiler_version) {
                continue;
            } else {
                restat = true;
            }
        }
        if (!deps_match(c, e)) continue;
        uint64_t key = result_key(c->direct, e);
        char path[PATH_MAX_LEN];
        void *elf = NULL;
        size_t size = 0;
        if (cache_file(c, key, ".elf", path) || !read_file(path, &elf, &size)) continue;
        if (hash64(elf, size, 0) != e->elf_hash) { /* torn or replaced: rebuild */
            free(elf);
            continue;
        }
        if (restat) { /* so the next process need not ask for the version */
            e->compiler_stat = c->cc.stat_id;
            if (store_manifest(c, &m)) err_clear();
        }
        *out = (jit_artifact){.elf = elf, .elf_size = size, .key = key, .cache_hit = 1};
        *out_hit = true;
        break;
    }
    jit_manifest_free(&m);
    return st;
}

/* ---- compiling ---- */

/* Argument strings of one compiler run. */
typedef struct argbuf {
    char *argv[64 + JIT_MAX_DEFINES];
    char *owned[16];
    size_t argc, owned_count;
} argbuf;

static void push(argbuf *a, const char *s) {
    a->argv[a->argc++] = (char *)s;
}

static lm_status push_cat(argbuf *a, const char *p0, const char *p1, const char *p2) {
    size_t n = strlen(p0) + strlen(p1) + strlen(p2) + 1;
    char *s = malloc(n);
    if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(s, n, "%s%s%s", p0, p1, p2);
    a->owned[a->owned_count++] = s;
    push(a, s);
    return LM_OK;
}

static void argbuf_free(argbuf *a) {
    for (size_t i = 0; i < a->owned_count; i++)
        free(a->owned[i]);
}

/* The compiler, the compile flags, include directories, path maps and
 * defines, in a fixed order. */
static lm_status common_args(const jit_ctx *c, argbuf *a) {
    push(a, c->cc.path);
    for (size_t i = 0; i < COUNT(compile_flags); i++)
        push(a, compile_flags[i]);
    for (size_t i = 0; i < c->lang_flag_count; i++)
        push(a, c->lang_flags[i]);
    lm_status st = push_cat(a, "-I", c->sdk, "/include");
    /* The SDK's own standard headers, as system headers, for C++ only: C
     * kernels get the compiler's. */
    if (!st && c->req->language == JIT_LANGUAGE_CXX)
        st = push_cat(a, "-isystem", c->sdk, "/include/c++");
    if (!st && c->inc[0]) st = push_cat(a, "-I", c->inc, "");
    if (!st && mappable(c->sdk))
        st = push_cat(a, "-ffile-prefix-map=", c->sdk, "/=lightmetal-sdk/");
    if (!st && c->inc[0] && mappable(c->inc)) st = push_cat(a, "-ffile-prefix-map=", c->inc, "/=");
    if (!st && c->line_dir[0]) st = push_cat(a, "-ffile-prefix-map=", c->line_dir, "=");
    if (!st && mappable(c->scratch)) st = push_cat(a, "-ffile-prefix-map=", c->scratch, "/=");
    for (size_t i = 0; i < c->define_count; i++)
        push(a, c->defines[i]);
    push(a, c->compile_args);
    if (c->named_args) push(a, c->named_args);
    return st;
}

/* Reads the compiler's log into an LM_ERR_COMPILE message, keeping the
 * whole log for lm_last_compile_log (see jit_diag.h). */
static lm_status compile_error(const jit_ctx *c) {
    char log[PATH_MAX_LEN];
    void *text = NULL;
    size_t size = 0;
    if (!scratch_file(c, LOG_NAME, log)) file_read_all(log, &text, &size);
    lm_status st = jit_compile_error(c->name, c->req->source, text ? text : "", text ? size : 0);
    free(text);
    return st;
}

static lm_status run_compiler(const jit_ctx *c, argbuf *a) {
    push(a, NULL);
    int exit_code = 0;
    lm_status st = run_tool(c, a->argv, &exit_code);
    if (!st && exit_code != 0) st = compile_error(c);
    return st;
}

/* Reads a file the compiler must have written. */
static lm_status read_output(const jit_ctx *c, const char *name, void **out, size_t *out_size) {
    char path[PATH_MAX_LEN];
    lm_status st = scratch_file(c, name, path);
    if (!st && !is_regular(path))
        return err_set(LM_ERR_IO, "the kernel compiler '%s' did not write '%s'", c->cc.path, name);
    if (!st) st = file_read_all(path, out, out_size);
    return st;
}

/* Where the assembler finds a relative `.incbin` or `.include` name: the
 * working directory (the scratch directory), then each -I directory in
 * order. False when found nowhere in those (then it came from a directory
 * this code does not model, and the build is not cached). */
static bool resolve_asm_path(const jit_ctx *c, const char *name, char *out) {
    if (name[0] == '/') return snprintf(out, PATH_MAX_LEN, "%s", name) < PATH_MAX_LEN;
    const char *dirs[] = {c->scratch, c->sdk, c->inc};
    const char *subs[] = {"/", "/include/", "/"};
    for (size_t i = 0; i < COUNT(dirs); i++) {
        if (!dirs[i][0]) continue;
        if (snprintf(out, PATH_MAX_LEN, "%s%s%s", dirs[i], subs[i], name) < PATH_MAX_LEN &&
            is_regular(out))
            return true;
    }
    return false;
}

/* Adds a file the compiler read to the entry, hashed. False when it cannot
 * be recorded or read. */
static lm_status add_dep(const jit_ctx *c, jit_entry *e, const char *path, bool *ok) {
    char sym[PATH_MAX_LEN];
    uint64_t h;
    if (!symbolic_path(c, path, sym) || !hash_file(path, &h)) {
        *ok = false;
        return LM_OK;
    }
    for (uint32_t i = 0; i < e->dep_count; i++)
        if (!strcmp(e->deps[i].path, sym)) return LM_OK;
    if (e->dep_count == JIT_MANIFEST_MAX_DEPS) {
        *ok = false;
        return LM_OK;
    }
    jit_dep *grown = realloc(e->deps, (e->dep_count + 1) * sizeof *grown);
    if (!grown) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    e->deps = grown;
    e->deps[e->dep_count].path = strdup(sym);
    if (!e->deps[e->dep_count].path)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    e->deps[e->dep_count++].hash = h;
    return LM_OK;
}

/* Every file the compiler read for the kernel: the headers of its
 * dependency output, and the files the asm pulls in (found in the IR, and
 * in `.include`d files in turn). *ok = false when the list may be
 * incomplete. */
static lm_status collect_deps(const jit_ctx *c, jit_entry *e, bool *ok) {
    char src[PATH_MAX_LEN];
    void *text = NULL;
    size_t size = 0;
    jit_strlist headers = {0}, incbins = {0}, includes = {0};
    lm_status st = scratch_file(c, c->src_name, src);
    if (!st) st = read_output(c, DEP_NAME, &text, &size);
    if (!st) st = jit_deps_parse_make(text, size, IR_NAME, &headers, ok);
    free(text);
    text = NULL;
    if (!st && *ok) st = read_output(c, IR_NAME, &text, &size);
    if (!st && *ok) st = jit_deps_scan_asm(text, size, true, &incbins, &includes, ok);
    free(text);
    for (size_t i = 0; !st && *ok && i < headers.count; i++)
        if (strcmp(headers.items[i], src) != 0) st = add_dep(c, e, headers.items[i], ok);
    char path[PATH_MAX_LEN];
    for (size_t i = 0; !st && *ok && i < incbins.count; i++) {
        if (!resolve_asm_path(c, incbins.items[i], path)) *ok = false;
        if (*ok) st = add_dep(c, e, path, ok);
    }
    /* `.include`d asm may itself include and incbin (a growing list). */
    for (size_t i = 0; !st && *ok && i < includes.count; i++) {
        if (includes.count + incbins.count > JIT_MAX_ASM_FILES ||
            !resolve_asm_path(c, includes.items[i], path)) {
            *ok = false;
            break;
        }
        st = add_dep(c, e, path, ok);
        size_t first = incbins.count;
        if (!st && *ok) st = file_read_all(path, &text, &size);
        if (!st && *ok) st = jit_deps_scan_asm(text, size, false, &incbins, &includes, ok);
        free(text);
        text = NULL;
        char bin[PATH_MAX_LEN];
        for (size_t j = first; !st && *ok && j < incbins.count; j++) {
            if (!resolve_asm_path(c, incbins.items[j], bin)) *ok = false;
            if (*ok) st = add_dep(c, e, bin, ok);
        }
    }
    jit_strlist_free(&headers);
    jit_strlist_free(&incbins);
    jit_strlist_free(&includes);
    return st;
}

/* Compiles in the scratch directory: first to unoptimised IR with the
 * dependency output (what was read), then the real build to an ELF. */
static lm_status compile(jit_ctx *c, jit_entry *e, bool *cacheable, void **out_elf,
                         size_t *out_size) {
    char src[PATH_MAX_LEN], path[PATH_MAX_LEN];
    lm_status st = scratch_file(c, c->src_name, src);
    const char *prelude = c->req->prelude ? c->req->prelude : "";
    size_t n = strlen(prelude) + strlen(c->line) + strlen(c->req->source) + 48;
    char *text = malloc(n);
    if (!st && !text) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (!st) {
        /* #line makes messages name the caller's file, not the scratch copy.
         * The prelude goes in the text, not in an -include flag, which would
         * reach crt0.S too. */
        int len = snprintf(text, n, "%s%s%s#line 1 \"%s\"\n%s\n", *prelude ? "#include <" : "",
                           prelude, *prelude ? ">\n" : "", c->line, c->req->source);
        st = write_new_file(src, text, (size_t)len);
    }
    free(text);

    argbuf a = {0};
    if (!st) st = common_args(c, &a);
    if (!st) {
        const char *extra[] = {"-S",    "-emit-llvm", "-Xclang", "-disable-llvm-passes",
                               "-MD",   "-MF",        DEP_NAME,  "-MT",
                               IR_NAME, "-o",         IR_NAME,   src};
        for (size_t i = 0; i < COUNT(extra); i++)
            push(&a, extra[i]);
        st = run_compiler(c, &a);
    }
    argbuf_free(&a);
    *cacheable = true;
    if (!st) st = collect_deps(c, e, cacheable);

    argbuf b = {0};
    if (!st) st = common_args(c, &b);
    for (size_t i = 0; !st && i < COUNT(link_flags); i++)
        push(&b, link_flags[i]);
    if (!st) st = push_cat(&b, "-Wl,-T,", c->sdk, "/link.ld");
    if (!st) st = push_cat(&b, c->sdk, "/crt0.S", "");
    if (!st) {
        push(&b, src);
        push(&b, "-o");
        push(&b, ELF_NAME);
        st = run_compiler(c, &b);
    }
    argbuf_free(&b);
    if (!st) st = read_output(c, ELF_NAME, out_elf, out_size);
    /* A file edited while the compiler ran: the ELF may not match the
     * hashes taken before, so it is used but not cached. */
    for (uint32_t i = 0; !st && *cacheable && i < e->dep_count; i++) {
        uint64_t h;
        if (!expand_path(c, e->deps[i].path, path) || !hash_file(path, &h) || h != e->deps[i].hash)
            *cacheable = false;
    }
    return st;
}

static lm_status build(jit_ctx *c, jit_artifact *out) {
    if (!c->cc.found)
        return err_set(LM_ERR_IO, "cannot run the kernel compiler '%s': not found%s (set LM_CLANG)",
                       c->cc.name, strchr(c->cc.name, '/') ? "" : " on PATH");
    jit_entry e = {.compiler_stat = c->cc.stat_id};
    lm_status st = make_scratch(c);
    if (!st) st = compiler_version(c, &e.compiler_version);
    bool cacheable = false;
    void *elf = NULL;
    size_t size = 0;
    if (!st) st = compile(c, &e, &cacheable, &elf, &size);
    uint64_t key = 0;
    if (!st && cacheable) {
        char from[PATH_MAX_LEN], to[PATH_MAX_LEN];
        key = result_key(c->direct, &e);
        e.elf_hash = hash64(elf, size, 0);
        st = scratch_file(c, ELF_NAME, from);
        if (!st) st = cache_file(c, key, ".elf", to);
        /* Concurrent builders of the same key race harmlessly: same bytes. */
        if (!st && rename(from, to) != 0)
            st = err_set(LM_ERR_IO, "cannot store '%s' in the kernel cache: %s", to,
                         strerror(errno));
        jit_manifest m;
        if (!st) st = load_manifest(c, &m); /* again: another process may have added to it */
        if (!st) {
            jit_manifest_put(&m, &e);
            st = store_manifest(c, &m);
            jit_manifest_free(&m);
        }
    } else if (!st) {
        key = hash64(elf, size, c->direct);
    }
    jit_entry_free(&e);
    if (st) {
        free(elf);
        return st;
    }
    *out = (jit_artifact){.elf = elf, .elf_size = size, .key = key, .cache_hit = 0};
    return LM_OK;
}

lm_status jit_build(const jit_request *r, jit_artifact *out) {
    if (!r || !out) return err_set(LM_ERR_INVALID_ARGUMENT, "jit_build: NULL argument");
    lm_status st = validate(r);
    if (st) return st;
    jit_ctx c = {.req = r, .name = r->source_name ? r->source_name : "kernel"};
    if (r->language == JIT_LANGUAGE_CXX) {
        c.src_name = "kernel.cpp";
        c.lang_flags = cxx_flags;
        c.lang_flag_count = COUNT(cxx_flags);
    } else {
        c.src_name = "kernel.c";
        c.lang_flags = c_flags;
        c.lang_flag_count = COUNT(c_flags);
    }
    set_names(&c);
    st = find_cache_dir(r, c.cache);
    if (!st) st = jit_absolute(jit_sdk_dir(), c.sdk);
    if (!st && r->include_dir) st = jit_absolute(r->include_dir, c.inc);
    if (!st) st = jit_compiler_find(&c.cc);
    if (!st) st = set_defines(&c);
    if (!st) st = direct_key(&c);
    bool hit = false;
    if (!st) st = try_cache(&c, out, &hit);
    if (!st && !hit) st = build(&c, out);
    ctx_free(&c);
    return st;
}
