#!/bin/sh
# Tests of the lightmetal command-line tool, run by ctest:
#   test_cli.sh LIGHTMETAL MAKE_SAMPLES WORKDIR SCHEMA [FLATC [MAKE_CAPTURE]]
# MAKE_CAPTURE (empty when the recorder is not built) makes a real capture.
# Each check prints PASS or FAIL; the script fails when any check failed.
# Errors must be exactly one line on stderr with the expected words and the
# documented exit code (0 ok, 1 golden mismatch, 2 usage/invalid file,
# 3 device fault).

LM=$1
MAKE_SAMPLES=$2
W=$3
SCHEMA=$4
FLATC=$5
MAKE_CAPTURE=$6
failures=0

rm -rf "$W" && mkdir -p "$W" || exit 1
if ! "$MAKE_SAMPLES" "$W"; then
    echo "FAIL make_samples"
    exit 1
fi

pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

# Runs lightmetal with the given arguments; output in $W/out and $W/err.
lm() {
    "$LM" "$@" >"$W/out" 2>"$W/err"
    rc=$?
}

# expect_ok NAME WORDS ARGS...: exit 0, nothing on stderr, WORDS on stdout.
expect_ok() {
    name=$1
    words=$2
    shift 2
    lm "$@"
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit $rc, expected 0: $(cat "$W/err")"
    elif [ -s "$W/err" ]; then
        fail "$name" "unexpected stderr: $(cat "$W/err")"
    elif ! grep -qF -- "$words" "$W/out"; then
        fail "$name" "stdout lacks '$words'"
    else
        pass "$name"
    fi
}

# expect_error NAME CODE WORDS ARGS...: exit CODE and exactly one line on
# stderr containing WORDS.
expect_error() {
    name=$1
    code=$2
    words=$3
    shift 3
    lm "$@"
    lines=$(wc -l <"$W/err")
    if [ "$rc" -ne "$code" ]; then
        fail "$name" "exit $rc, expected $code: $(cat "$W/err")"
    elif [ "$lines" -ne 1 ]; then
        fail "$name" "stderr has $lines lines, expected 1: $(cat "$W/err")"
    elif ! grep -qF -- "$words" "$W/err"; then
        fail "$name" "stderr lacks '$words': $(cat "$W/err")"
    else
        pass "$name"
    fi
}

# ---------------------------------------------------------------- help
expect_ok help_top "commands:" --help
for c in run info dump verify; do
    expect_ok "help_$c" "examples:" "$c" --help
    expect_ok "help_${c}_short" "usage: lightmetal $c" "$c" -h
done
expect_ok help_command "usage: lightmetal info" help info
expect_ok version "binary format 2.0" --version
expect_error no_command 2 "missing COMMAND"
expect_error unknown_command 2 "unknown command 'frobnicate'" frobnicate x.lmb

# ---------------------------------------------------------------- verify
expect_ok verify_valid "valid.lmb: ok" verify "$W/valid.lmb"
expect_ok verify_copy "copy.lmb: ok" verify "$W/copy.lmb"
expect_error verify_semantic 2 "kernel_binaries[0]: not an ELF file" verify "$W/sample.lmb"
expect_error verify_blob_hash 2 "blob-hash-mismatch" verify "$W/blobflip.lmb"

# Corrupt and unreadable files fail the same way in every command.
for c in verify info dump; do
    expect_error "${c}_truncated" 2 "invalid binary" "$c" "$W/truncated.lmb"
    expect_error "${c}_bad_identifier" 2 "bad-identifier" "$c" "$W/badid.lmb"
    expect_error "${c}_empty" 2 "too-small" "$c" "$W/empty.lmb"
    expect_error "${c}_missing" 2 "$W/missing.lmb" "$c" "$W/missing.lmb"
    expect_error "${c}_directory" 2 "$W" "$c" "$W"
    expect_error "${c}_no_file" 2 "missing FILE" "$c"
    expect_error "${c}_two_files" 2 "unexpected argument" "$c" "$W/valid.lmb" "$W/copy.lmb"
    expect_error "${c}_unknown_option" 2 "unknown option --bogus" "$c" --bogus "$W/valid.lmb"
done
expect_error dump_json_option 2 "unknown option --json" dump --json "$W/valid.lmb"
expect_error info_json_value 2 "--json takes no value" info --json=yes "$W/valid.lmb"
expect_error verify_unknown_with_value 2 "unknown option --bogus" verify --bogus=1 "$W/valid.lmb"
expect_error help_with_value 2 "--help takes no value" info --help=1

# ---------------------------------------------------------------- info
expect_ok info_version "format version: 2.0.0" info "$W/valid.lmb"
expect_ok info_system "grid 8x8, L1 1499136 bytes, DRAM 12 banks" info "$W/valid.lmb"
expect_ok info_kernel "reader" info "$W/valid.lmb"
expect_ok info_counts "CreateBuffer           2" info "$W/valid.lmb"
expect_ok info_trace "trace 9: 128 bytes" info "$W/valid.lmb"
expect_ok info_named "Output buffer 2, 2048 bytes" info "$W/valid.lmb"
expect_ok info_json_kernel '"processor": "DM0"' info --json "$W/valid.lmb"
expect_ok info_json_named '"role": "Input"' info "$W/valid.lmb" --json
expect_ok info_json_counts '"CompareToGolden": 1' info --json "$W/valid.lmb"
expect_error info_semantic 2 "not an ELF file" info "$W/sample.lmb"
expect_ok info_after_dashdash "format version" info -- "$W/valid.lmb"
# The JSON must parse (checked when a JSON parser is at hand).
if command -v python3 >/dev/null 2>&1; then
    "$LM" info --json "$W/valid.lmb" >"$W/info.json"
    if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/info.json"; then
        pass info_json_parses
    else
        fail info_json_parses "python3 cannot parse $W/info.json"
    fi
else
    echo "SKIP info_json_parses: python3 not found"
fi

# ---------------------------------------------------------------- dump
expect_ok dump_valid '"cmd_type": "CreateKernel"' dump "$W/valid.lmb"
# dump checks structure only, so files verify rejects can be inspected.
expect_ok dump_semantic '"cmd_type": "DeallocateBuffer"' dump "$W/sample.lmb"
if [ -n "$FLATC" ] && [ -x "$FLATC" ]; then
    # strings.json (built by flatc) covers escapes, empty vectors and tables,
    # an absent key field and extreme integers.
    mkdir -p "$W/flatc"
    "$FLATC" -b -o "$W" "$SCHEMA" "$(dirname "$0")/strings.json" ||
        fail flatc_build_strings "flatc -b failed"
    for f in sample valid strings; do
        "$LM" dump "$W/$f.lmb" >"$W/$f.dump.json"
        if ! "$FLATC" --json --strict-json -o "$W/flatc" "$SCHEMA" -- "$W/$f.lmb"; then
            fail "dump_matches_flatc_$f" "flatc failed"
        elif cmp -s "$W/$f.dump.json" "$W/flatc/$f.json"; then
            pass "dump_matches_flatc_$f"
        else
            fail "dump_matches_flatc_$f" "differs: diff $W/$f.dump.json $W/flatc/$f.json"
        fi
    done
else
    echo "SKIP dump_matches_flatc: flatc not found"
fi

# ---------------------------------------------------------------- run: usage
V=$W/copy.lmb
expect_error run_no_file 2 "missing FILE" run
expect_error run_loop_zero 2 "--loop: '0'" run "$V" --loop 0
expect_error run_loop_text 2 "--loop: 'abc'" run "$V" --loop abc
expect_error run_loop_negative 2 "--loop: '-1'" run "$V" --loop=-1
expect_error run_loop_huge 2 "--loop: '99999999999'" run "$V" --loop 99999999999
expect_error run_loop_missing 2 "--loop needs a value" run "$V" --loop
expect_error run_threads_zero 2 "--threads: '0'" run "$V" --threads 0
expect_error run_tolerance_one 2 "--tolerance: '1'" run "$V" --tolerance 1
expect_error run_tolerance_text 2 "--tolerance: 'a,b'" run "$V" --tolerance a,b
expect_error run_tolerance_negative 2 "--tolerance: '-1,0'" run "$V" --tolerance=-1,0
expect_error run_tolerance_extra 2 "--tolerance: '1,2,3'" run "$V" --tolerance 1,2,3
expect_error run_input_no_eq 2 "--input: 'data' is not NAME=PATH" run "$V" --input data
expect_error run_input_no_name 2 "--input: '=x' is not NAME=PATH" run "$V" --input =x
expect_error run_output_no_path 2 "--output: 'data=' is not NAME=PATH" run "$V" --output data=
expect_error run_json_value 2 "--json takes no value" run "$V" --json=1
expect_error run_unknown_option 2 "unknown option --fast" run "$V" --fast

# ---------------------------------------------------------------- run
expect_ok run_copy "goldens:     1 checked, 0 failed" run "$V"
expect_ok run_copy_summary "bytes moved:" run "$V" --threads 1
expect_ok run_copy_loops "loops:       3" run "$V" --loop 3
expect_ok run_copy_json '"goldens_checked": 1' run "$V" --json
expect_ok run_copy_tolerance '"result": "ok"' run "$V" --tolerance 0,0 --json
expect_error run_mismatch 1 "mismatch.lmb" run "$W/mismatch.lmb"
if grep -qF "golden mismatch" "$W/out"; then pass run_mismatch_summary; else
    fail run_mismatch_summary "stdout lacks 'golden mismatch'"; fi
expect_ok run_mismatch_tolerance '"goldens_failed": 0' \
    run "$W/mismatch.lmb" --tolerance 1e-3,0 --json
expect_error run_mismatch_tight_tolerance 1 "mismatch.lmb" \
    run "$W/mismatch.lmb" --tolerance 1e-6,0

rm -f "$W/out.bin"
expect_ok run_output "ok" run "$V" --output "data=$W/out.bin"
if cmp -s "$W/out.bin" "$W/copy_data.bin"; then pass run_output_bytes; else
    fail run_output_bytes "out.bin differs from copy_data.bin"; fi
# A replaced input is what the run writes: the same bytes as recorded
# still match, other bytes no longer match the golden.
rm -f "$W/out.bin"
expect_ok run_input_same "ok" \
    run "$V" --input "data=$W/copy_data.bin" --output "data=$W/out.bin"
if cmp -s "$W/out.bin" "$W/copy_data.bin"; then pass run_input_bytes; else
    fail run_input_bytes "out.bin differs from copy_data.bin"; fi
expect_error run_input_mismatch 1 "(outputs not saved)" \
    run "$V" --input "data=$W/input.bin" --output "data=$W/out.bin"
expect_error run_input_size 2 "the input has 100" run "$V" --input "data=$W/short.bin"
expect_error run_input_name 2 "no buffer named 'nope'" run "$V" --input "nope=$W/input.bin"
expect_error run_input_missing 2 "$W/missing.bin" run "$V" --input "data=$W/missing.bin"
expect_error run_output_name 2 "no buffer named 'nope'" run "$V" --output "nope=$W/o.bin"

# valid.lmb's kernel is all zeros: an illegal instruction on the device.
expect_error run_device_fault 3 "valid.lmb" run "$W/valid.lmb"
expect_error run_truncated 2 "invalid binary" run "$W/truncated.lmb"
expect_error run_semantic 2 "not an ELF file" run "$W/sample.lmb"
expect_error run_missing 2 "$W/missing.lmb" run "$W/missing.lmb"

# ---------------------------------------------------------------- a real capture
if [ -z "$MAKE_CAPTURE" ]; then
    echo "SKIP capture_*: the recorder is not part of this build"
elif ! "$MAKE_CAPTURE" "$W"; then
    fail capture_make "make_capture failed"
else
    C=$W/captured.lmb
    expect_ok capture_verify "captured.lmb: ok" verify "$C"
    expect_ok capture_info_kernel "scale" info "$C"
    expect_ok capture_info_named "buffer 2, 4096 bytes" info "$C"
    expect_ok capture_run "goldens:     1 checked, 0 failed" run "$C"
    expect_ok capture_run_loops '"goldens_checked": 2' run "$C" --loop 2 --threads 1 --json
    rm -f "$W/got.bin"
    expect_ok capture_run_output "ok" run "$C" --input "in=$W/in.bin" --output "out=$W/got.bin"
    if cmp -s "$W/got.bin" "$W/out.bin"; then pass capture_output_bytes; else
        fail capture_output_bytes "got.bin differs from out.bin"; fi
    expect_error capture_run_other_input 1 "mismatch" run "$C" --input "in=$W/in2.bin"
    if [ -n "$FLATC" ] && [ -x "$FLATC" ]; then
        "$LM" dump "$C" >"$W/captured.dump.json"
        if ! "$FLATC" --json --strict-json -o "$W/flatc" "$SCHEMA" -- "$C"; then
            fail dump_matches_flatc_captured "flatc failed"
        elif cmp -s "$W/captured.dump.json" "$W/flatc/captured.json"; then
            pass dump_matches_flatc_captured
        else
            fail dump_matches_flatc_captured "differs: diff $W/captured.dump.json $W/flatc/captured.json"
        fi
    fi
fi

echo "$failures check(s) failed"
[ "$failures" -eq 0 ]
