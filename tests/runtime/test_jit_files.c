/* The kernel cache's file readers: the compiler's dependency output, the asm
 * scan for .incbin / .include, and the manifest format, each fed good and
 * malformed text. */
#include "lm_test.h"
#include "runtime/jit_deps.h"
#include "runtime/jit_manifest.h"

static int parse_make(const char *text, jit_strlist *out, bool *ok) {
    *out = (jit_strlist){0};
    return jit_deps_parse_make(text, strlen(text), "kernel.ll", out, ok) == LM_OK;
}

static void test_make_deps(void) {
    jit_strlist l;
    bool ok;
    CHECK(parse_make("kernel.ll: /s/kernel.c \\\n  /sdk/a.h /sys/b\\ c.h \\\n  /x/\\#y$$z.h\n", &l,
                     &ok));
    CHECK(ok && l.count == 4);
    CHECK(!strcmp(l.items[0], "/s/kernel.c") && !strcmp(l.items[1], "/sdk/a.h"));
    CHECK(!strcmp(l.items[2], "/sys/b c.h") && !strcmp(l.items[3], "/x/#y$z.h"));
    jit_strlist_free(&l);
    CHECK(parse_make("kernel.ll:\n", &l, &ok) && ok && l.count == 0);
    jit_strlist_free(&l);
    /* Anything ambiguous is refused, never guessed. */
    const char *bad[] = {
        "other.ll: /a.h\n",        /* another target */
        "kernel.ll /a.h\n",        /* no rule */
        "",                        /* empty */
        "kernel.ll: /a\\tb.h\n",   /* an unknown escape */
        "kernel.ll: /a$b.h\n",     /* a lone '$' */
        "kernel.ll: /a.h\nx: /b\n" /* a second rule */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(parse_make(bad[i], &l, &ok));
        CHECK(!ok);
        jit_strlist_free(&l);
    }
}

static int scan(const char *text, bool ir, jit_strlist *bins, jit_strlist *incs, bool *ok) {
    *bins = (jit_strlist){0};
    *incs = (jit_strlist){0};
    return jit_deps_scan_asm(text, strlen(text), ir, bins, incs, ok) == LM_OK;
}

static void test_asm_scan(void) {
    jit_strlist b, i;
    bool ok;
    /* IR escapes quotes and newlines as \22 and \0A; directive names in any case. */
    CHECK(scan("module asm \".section .rodata\"\nmodule asm \"blob: .incbin \\22data.bin\\22\"\n"
               "call void asm sideeffect \".INCLUDE\\09\\22x/more.s\\22\\0A\", \"\"()\n"
               "@s = constant [10 x i8] c\"includes.\\00\"\n",
               true, &b, &i, &ok));
    CHECK(ok && b.count == 1 && i.count == 1);
    CHECK(!strcmp(b.items[0], "data.bin") && !strcmp(i.items[0], "x/more.s"));
    jit_strlist_free(&b);
    jit_strlist_free(&i);
    CHECK(scan("  .incbin \"/abs/p.bin\", 4, 8\n .includes_not 1\n", false, &b, &i, &ok));
    CHECK(ok && b.count == 1 && i.count == 0 && !strcmp(b.items[0], "/abs/p.bin"));
    jit_strlist_free(&b);
    jit_strlist_free(&i);
    /* Operands the scan cannot read make the build uncacheable. */
    const char *bad[] = {
        ".incbin \"\\f\"\n",        /* a macro argument */
        ".incbin name.bin\n",       /* not quoted */
        ".incbin \"a$$b\"\n",       /* an inline-asm operand escape */
        ".include \"\"\n",          /* empty */
        ".incbin \"unterminated\n", /* no closing quote */
        "c\"use .incbin\\00\"",     /* the name in other text */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(scan(bad[k], k == 5, &b, &i, &ok));
        CHECK(!ok);
        jit_strlist_free(&b);
        jit_strlist_free(&i);
    }
}

static jit_entry entry(uint64_t version, const char *path, uint64_t hash) {
    jit_entry e = {.compiler_stat = 0x1111, .compiler_version = version, .elf_hash = 0xe1f};
    e.deps = calloc(1, sizeof *e.deps);
    e.deps[0] = (jit_dep){strdup(path), hash};
    e.dep_count = 1;
    return e;
}

static void test_manifest_round_trip(void) {
    jit_manifest m = {0}, back;
    jit_entry e = entry(7, "$SDK/include/a.h", 0xabc);
    jit_manifest_put(&m, &e);
    e = entry(8, "/usr/include/b c.h", 0xdef);
    jit_manifest_put(&m, &e);
    CHECK(m.count == 2 && m.entries[0].compiler_version == 8);
    char *text;
    size_t size;
    CHECK_OK(jit_manifest_format(&m, &text, &size));
    bool ok;
    CHECK_OK(jit_manifest_parse(text, size, &back, &ok));
    CHECK(ok && back.count == 2);
    CHECK(back.entries[1].compiler_stat == 0x1111 && back.entries[1].elf_hash == 0xe1f);
    CHECK(!strcmp(back.entries[0].deps[0].path, "/usr/include/b c.h"));
    CHECK(back.entries[0].deps[0].hash == 0xdef);
    jit_manifest_free(&back);
    /* The same build again replaces its entry; the limit drops the oldest. */
    e = entry(7, "$SDK/include/a.h", 0xabc);
    jit_manifest_put(&m, &e);
    CHECK(m.count == 2 && m.entries[0].compiler_version == 7);
    for (uint64_t v = 100; v < 100 + JIT_MANIFEST_MAX_ENTRIES; v++) {
        e = entry(v, "/x.h", v);
        jit_manifest_put(&m, &e);
    }
    CHECK(m.count == JIT_MANIFEST_MAX_ENTRIES &&
          m.entries[0].compiler_version == 99 + JIT_MANIFEST_MAX_ENTRIES);
    free(text);
    jit_manifest_free(&m);
}

static void test_manifest_malformed(void) {
    const char *good = "lightmetal-kernel-manifest 1\n"
                       "entry 0000000000000001 0000000000000002 0000000000000003 1\n"
                       "dep 0000000000000004 $INC/v.h\n";
    jit_manifest m;
    bool ok;
    CHECK_OK(jit_manifest_parse(good, strlen(good), &m, &ok));
    CHECK(ok && m.count == 1 && m.entries[0].dep_count == 1);
    jit_manifest_free(&m);
    const char *bad[] = {
        "",
        "lightmetal-kernel-manifest 2\n",
        "lightmetal-kernel-manifest 1", /* torn: no line end */
        "lightmetal-kernel-manifest 1\nentry 0000000000000001 0000000000000002 "
        "0000000000000003 1\n", /* a dep missing */
        "lightmetal-kernel-manifest 1\nentry 000000000000000g 0000000000000002 "
        "0000000000000003 0\n", /* not hex */
        "lightmetal-kernel-manifest 1\nentry 0000000000000001 0000000000000002 "
        "0000000000000003 99999\n", /* too many deps */
        "lightmetal-kernel-manifest 1\nentry 0000000000000001 0000000000000002 "
        "0000000000000003 1\ndep 0000000000000004 relative/v.h\n", /* a relative path */
        "lightmetal-kernel-manifest 1\nentry 0000000000000001 0000000000000002 "
        "0000000000000003 1\ndep 0000000000000004 $INC/v.h", /* torn last line */
        "lightmetal-kernel-manifest 1\nentry 1 2 3 0\n",     /* short numbers */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_OK(jit_manifest_parse(bad[i], strlen(bad[i]), &m, &ok));
        CHECK(!ok);
        jit_manifest_free(&m);
    }
    /* More entries than the limit. */
    char many[4096] = "lightmetal-kernel-manifest 1\n";
    for (int i = 0; i <= JIT_MANIFEST_MAX_ENTRIES; i++)
        strcat(many, "entry 0000000000000001 0000000000000002 0000000000000003 0\n");
    CHECK_OK(jit_manifest_parse(many, strlen(many), &m, &ok));
    CHECK(!ok);
    jit_manifest_free(&m);
}

int main(void) {
    TEST_RUN(test_make_deps);
    TEST_RUN(test_asm_scan);
    TEST_RUN(test_manifest_round_trip);
    TEST_RUN(test_manifest_malformed);
    return test_summary();
}
