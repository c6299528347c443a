#!/bin/sh
# Tests of `lightmetal kcc`, run by ctest:
#   test_kcc.sh LIGHTMETAL KCC_REFERENCE WORKDIR
# KCC_REFERENCE writes the ELF lm_create_kernel builds for a kernel. Each
# check prints PASS or FAIL; the script fails when any check failed. Usage
# errors must be exactly one line on stderr with the expected words and exit
# code 2; a compile error is one line followed by the compiler's messages.

LM=$1
REF=$2
W=$3

rm -rf "$W" && mkdir -p "$W/kernels" "$W/elsewhere" || exit 1

. "$(dirname "$0")/check_lib.sh"

# same NAME A B: the two files are byte-identical.
same() {
    if [ -s "$2" ] && cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$2 and $3 differ"; fi
}

K=$W/kernels/scale.c
cat >"$K" <<'EOF'
#include "dataflow_api.h"
#include "scale.h"
void kernel_main(void) {
    volatile uint32_t *w = (volatile uint32_t *)0x20000;
    w[0] = get_arg_val(0) * SCALE + get_compile_time_arg_val(1) + OFFSET;
}
EOF
echo '#define OFFSET 3' >"$W/kernels/scale.h"
printf 'void kernel_main(void) { undeclared_thing = 1; }\n' >"$W/kernels/broken.c"
printf 'void kernel_main(void) {}\n\000\n' >"$W/kernels/nul.c"

# ---------------------------------------------------------------- help
expect_ok help_kcc "examples:" kcc --help
expect_ok help_kcc_short "usage: lightmetal kcc" kcc -h
expect_ok help_command_kcc "--compile-args" help kcc
expect_ok help_top_lists_kcc "kcc" --help

# ---------------------------------------------------------------- builds
export LM_CACHE_DIR="$W/cache1"
expect_ok kcc_compiles "a.elf: " kcc "$K" --processor dm1 -D SCALE=3 --compile-args 7,8 \
    -o "$W/a.elf"
if grep -qF "compiled" "$W/out"; then pass kcc_first_compiles; else
    fail kcc_first_compiles "$(cat "$W/out")"; fi
expect_ok kcc_cached "from the cache" kcc "$K" --processor=dm1 -DSCALE=3 --compile-args=7,8 \
    --output "$W/b.elf"
same kcc_cached_same_bytes "$W/a.elf" "$W/b.elf"
# The ELF is the cache's entry.
n=$(ls "$W/cache1"/*.elf | wc -l)
if [ "$n" -eq 1 ]; then same kcc_is_cache_entry "$W/a.elf" "$(ls "$W/cache1"/*.elf)"; else
    fail kcc_is_cache_entry "$n ELFs in the cache"; fi
# From another directory, by a relative path, with a fresh cache: same bytes.
(cd "$W/kernels" && LM_CACHE_DIR="$W/cache3" "$LM" kcc scale.c --processor dm1 -D SCALE=3 \
    --compile-args 7,8 -o"$W/c.elf" >/dev/null 2>"$W/err")
same kcc_any_directory "$W/a.elf" "$W/c.elf"

# What lm_create_kernel builds (fresh cache) is byte for byte kcc's output.
if LM_CACHE_DIR="$W/cache2" "$REF" "$K" dm1 "$W/ref.elf" SCALE=3 2>"$W/err"; then
    same kcc_matches_lm_create_kernel "$W/a.elf" "$W/ref.elf"
else
    fail kcc_matches_lm_create_kernel "$(cat "$W/err")"
fi
# kcc warms the runtime's cache: lm_create_kernel then needs no compiler.
rm -f "$W/ref.elf"
if LM_CLANG=/nonexistent/clang "$REF" "$K" dm1 "$W/ref.elf" SCALE=3 2>"$W/err"; then
    same kcc_warms_lm_create_kernel "$W/a.elf" "$W/ref.elf"
else
    fail kcc_warms_lm_create_kernel "$(cat "$W/err")"
fi
# Inputs that change the output change the ELF.
expect_ok kcc_other_define "d.elf" kcc "$K" --processor dm1 -D SCALE=4 --compile-args 7,8 \
    -o "$W/d.elf"
if cmp -s "$W/a.elf" "$W/d.elf"; then fail kcc_define_matters "same bytes"; else
    pass kcc_define_matters; fi
expect_ok kcc_compute "e.elf" kcc "$K" --processor compute -D SCALE=3 --compile-args 0x7,8 \
    --math-fidelity lofi --fp32-dest-acc --math-approx -o "$W/e.elf"

# ---------------------------------------------------------------- usage errors
expect_error kcc_no_kernel 2 "missing KERNEL.c" kcc --processor dm0 -o "$W/x.elf"
expect_error kcc_two_kernels 2 "unexpected argument" kcc "$K" "$K" --processor dm0 -o "$W/x.elf"
expect_error kcc_no_processor 2 "missing --processor" kcc "$K" -o "$W/x.elf"
expect_error kcc_bad_processor 2 "--processor: 'brisc' is not dm0, dm1 or compute" \
    kcc "$K" --processor brisc -o "$W/x.elf"
expect_error kcc_processor_value 2 "--processor needs a value" kcc "$K" -o "$W/x.elf" --processor
expect_error kcc_no_output 2 "missing -o FILE" kcc "$K" --processor dm0
expect_error kcc_output_value 2 "-o needs a value" kcc "$K" --processor dm0 -o
expect_error kcc_bad_define 2 "-D: '1X=2' is not NAME or NAME=VALUE" \
    kcc "$K" --processor dm0 -D 1X=2 -o "$W/x.elf"
expect_error kcc_empty_define_name 2 "-D: '=2' is not NAME" kcc "$K" --processor dm0 -D=2 -o "$W/x.elf"
expect_error kcc_define_missing 2 "-D needs NAME or NAME=VALUE" kcc "$K" --processor dm0 -o "$W/x.elf" -D
expect_error kcc_args_text 2 "--compile-args: 'a' in '1,a' is not a 32-bit unsigned integer" \
    kcc "$K" --processor dm0 --compile-args 1,a -o "$W/x.elf"
expect_error kcc_args_empty 2 "--compile-args: '' in '1,,2'" \
    kcc "$K" --processor dm0 --compile-args 1,,2 -o "$W/x.elf"
expect_error kcc_args_huge 2 "'4294967296'" kcc "$K" --processor dm0 --compile-args 4294967296 \
    -o "$W/x.elf"
expect_error kcc_args_negative 2 "'-1'" kcc "$K" --processor dm0 --compile-args=-1 -o "$W/x.elf"
expect_error kcc_args_too_many 2 "more than 64 values" kcc "$K" --processor dm0 --compile-args \
    "$(seq -s, 1 65)" -o "$W/x.elf"
expect_error kcc_fidelity 2 "--math-fidelity: 'hifi5'" kcc "$K" --processor compute \
    --math-fidelity hifi5 -o "$W/x.elf"
expect_error kcc_compute_only 2 "are for --processor compute" kcc "$K" --processor dm0 \
    --fp32-dest-acc -o "$W/x.elf"
expect_error kcc_flag_value 2 "--math-approx takes no value" kcc "$K" --processor compute \
    --math-approx=1 -o "$W/x.elf"
expect_error kcc_unknown_option 2 "unknown option --fast" kcc "$K" --processor dm0 --fast -o "$W/x.elf"

# ---------------------------------------------------------------- input and output errors
expect_error kcc_missing_file 2 "cannot open '$W/kernels/nope.c'" kcc "$W/kernels/nope.c" \
    --processor dm0 -o "$W/x.elf"
expect_error kcc_directory 2 "$W/kernels" kcc "$W/kernels" --processor dm0 -o "$W/x.elf"
expect_error kcc_nul_byte 2 "contains a NUL byte" kcc "$W/kernels/nul.c" --processor dm0 -o "$W/x.elf"
expect_error kcc_unwritable 2 "$W/no/such/dir/x.elf" kcc "$K" --processor dm1 -D SCALE=3 \
    --compile-args 7,8 -o "$W/no/such/dir/x.elf"
expect_error kcc_output_is_directory 2 "$W/elsewhere" kcc "$K" --processor dm1 -D SCALE=3 \
    --compile-args 7,8 -o "$W/elsewhere"
export LM_CLANG=/nonexistent/clang
expect_error kcc_no_compiler 2 "cannot run the kernel compiler '/nonexistent/clang': not found" \
    kcc "$K" --processor dm0 -D SCALE=9 -o "$W/x.elf"
unset LM_CLANG
if [ -e "$W/x.elf" ]; then fail kcc_no_output_on_error "x.elf was written"; else
    pass kcc_no_output_on_error; fi

# A compile error: one line, then the compiler's own messages.
lm kcc "$W/kernels/broken.c" --processor dm0 -o "$W/x.elf"
first=$(head -n 1 "$W/err")
if [ "$rc" -ne 2 ]; then
    fail kcc_compile_error "exit $rc, expected 2: $(cat "$W/err")"
elif [ "$first" != "lightmetal kcc: kernel '$W/kernels/broken.c' failed to compile:" ]; then
    fail kcc_compile_error "first line: $first"
elif ! grep -qF "broken.c:1:26: error: use of undeclared identifier 'undeclared_thing'" "$W/err"; then
    fail kcc_compile_error "no compiler message: $(cat "$W/err")"
else
    pass kcc_compile_error
fi

# Many errors: kcc prints all of the compiler's output, well past the 1 KiB
# lm_last_error() holds, with no note about anything left out.
{
    echo 'void kernel_main(void) {'
    for i in 00 01 02 03 04 05 06 07 08 09 10 11; do
        echo "    an_undeclared_variable_with_a_rather_long_name_number_$i = 1;"
    done
    echo '    the_very_last_undeclared_thing = 1;'
    echo '}'
} >"$W/kernels/many.c"
lm kcc "$W/kernels/many.c" --processor dm0 -o "$W/x.elf"
first=$(head -n 1 "$W/err")
if [ "$rc" -ne 2 ]; then
    fail kcc_long_output "exit $rc, expected 2: $(cat "$W/err")"
elif [ "$first" != "lightmetal kcc: kernel '$W/kernels/many.c' failed to compile:" ]; then
    fail kcc_long_output "first line: $first"
elif [ "$(wc -c <"$W/err")" -lt 2048 ]; then
    fail kcc_long_output "only $(wc -c <"$W/err") bytes: $(cat "$W/err")"
elif ! grep -qF "many.c:14:5: error: use of undeclared identifier 'the_very_last_undeclared_thing'" \
    "$W/err" || [ "$(tail -n 1 "$W/err")" != "13 errors generated." ]; then
    fail kcc_long_output "the last error is missing: $(tail -n 5 "$W/err")"
elif grep -qF "lm_last_compile_log" "$W/err"; then
    fail kcc_long_output "a note about output not shown: $(cat "$W/err")"
else
    pass kcc_long_output
fi

# A kernel for SFPI (as tt-metal's newest custom_sfpi_add: a custom SFPU
# header the SDK does not have): the first line says SFPI is out of scope.
cat >"$W/kernels/tiles_add.cpp" <<'EOF'
#include "api/compute/common.h"
#ifdef TRISC_MATH
#include "experimental/llk_sfpu/ckernel_sfpu_face_add.h"
#endif
inline void face_add_tiles(uint32_t a, uint32_t b, uint32_t out) {
    MATH(SFPU_BINARY_CALL_NO_TEMPLATE_ARGS(DST_SYNC_MODE, DST_ACCUM_MODE, face_add, a, b, out));
}
void kernel_main() { face_add_tiles(0, 1, 0); }
EOF
lm kcc "$W/kernels/tiles_add.cpp" --processor compute -o "$W/x.elf"
first=$(head -n 1 "$W/err")
want="lightmetal kcc: kernel '$W/kernels/tiles_add.cpp' failed to compile: SFPI intrinsics"
want="$want (vFloat, dst_reg, v_if, ...) are out of scope for lightmetal (the kernel includes"
want="$want 'experimental/llk_sfpu/ckernel_sfpu_face_add.h'): "
case $first in
"$want"*)
    if [ "$rc" -eq 2 ] && grep -qF "file not found" "$W/err"; then pass kcc_sfpi_first; else
        fail kcc_sfpi_first "exit $rc: $(cat "$W/err")"; fi ;;
*) fail kcc_sfpi_first "first line: $first" ;;
esac

check_summary
