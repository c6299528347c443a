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

rm -rf "$W" && mkdir -p "$W" || exit 1
if ! "$MAKE_SAMPLES" "$W"; then
    echo "FAIL make_samples"
    exit 1
fi

. "$(dirname "$0")/check_lib.sh"

# ---------------------------------------------------------------- help
expect_ok help_top "commands:" --help
for c in run info dump verify; do
    expect_ok "help_$c" "examples:" "$c" --help
    expect_ok "help_${c}_short" "usage: lightmetal $c" "$c" -h
done
expect_ok help_command "usage: lightmetal info" help info
expect_ok version "binary format 2.4" --version
# Every command's help states its exit codes and options with defaults.
for c in run info dump verify; do
    expect_ok "help_${c}_exit_codes" "exit codes" "$c" --help
    expect_ok "help_${c}_options" "-h, --help" "$c" --help
done
for flag in --no-goldens --no-verify-hashes --watchdog "'lightmetal verify'" "default: the value" \
    ".npy" "'<u2'" "bfloat16 bit patterns" "--input act=act.npy" "golden mismatches (exit 1)"; do
    expect_ok "help_run_mentions_$flag" "$flag" run --help
done
expect_ok help_info_roles "InputOutput (both)" info --help
expect_ok help_run_profile "--profile" run --help
expect_ok help_info_no_format '"no format"' info --help
expect_ok help_top_version "--version" --help
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
expect_ok info_version "format version: 2.4.0" info "$W/valid.lmb"
expect_ok info_system "grid 8x8, L1 1499136 bytes, DRAM 12 banks" info "$W/valid.lmb"
expect_ok info_kernel "reader" info "$W/valid.lmb"
expect_ok info_counts "CreateBuffer           2" info "$W/valid.lmb"
expect_ok info_trace "trace 9: 128 bytes" info "$W/valid.lmb"
expect_ok info_named "out              Output            2048 bytes  no format  (buffer 2)" \
    info "$W/valid.lmb"
expect_ok info_named_input "in               Input             2048 bytes  no format  (buffer 1)" \
    info "$W/valid.lmb"
expect_ok info_reader_version "read by:        lightmetal " info "$W/valid.lmb"
expect_ok info_json_reader_version '"reader_version": "' info --json "$W/valid.lmb"
expect_ok info_json_output_role '"role": "Output"' info --json "$W/valid.lmb"
expect_ok info_json_format '"format": "none"' info --json "$W/valid.lmb"
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
U64_RANGE="is not an integer in [1, 18446744073709551615]"
expect_error run_watchdog_zero 2 "--watchdog: '0' $U64_RANGE" run "$V" --watchdog 0
expect_error run_watchdog_text 2 "--watchdog: 'many' $U64_RANGE" run "$V" --watchdog many
expect_error run_watchdog_float 2 "--watchdog: '1e6' $U64_RANGE" run "$V" --watchdog 1e6
expect_error run_watchdog_hex 2 "--watchdog: '0x10' $U64_RANGE" run "$V" --watchdog 0x10
expect_error run_watchdog_negative 2 "--watchdog: '-5' $U64_RANGE" run "$V" --watchdog=-5
expect_error run_watchdog_plus 2 "--watchdog: '+5' $U64_RANGE" run "$V" --watchdog +5
expect_error run_watchdog_space 2 "--watchdog: ' 5' $U64_RANGE" run "$V" --watchdog " 5"
expect_error run_watchdog_empty 2 "--watchdog: '' $U64_RANGE" run "$V" --watchdog=
expect_error run_watchdog_overflow 2 "--watchdog: '18446744073709551616' $U64_RANGE" \
    run "$V" --watchdog 18446744073709551616
expect_error run_watchdog_missing 2 "--watchdog needs a value" run "$V" --watchdog
expect_error run_no_goldens_value 2 "--no-goldens takes no value" run "$V" --no-goldens=1
expect_error run_no_hashes_value 2 "--no-verify-hashes takes no value" \
    run "$V" --no-verify-hashes=yes
expect_error run_no_goldens_tolerance 2 "--tolerance compares goldens, --no-goldens skips them" \
    run "$V" --no-goldens --tolerance 1e-3,0

# ---------------------------------------------------------------- run
expect_ok run_copy "goldens:     1 checked, 0 failed" run "$V"
expect_ok run_copy_summary "bytes moved:" run "$V" --threads 1
expect_ok run_copy_waits "host waits:  2" run "$V" # the finish and the golden
expect_ok run_copy_loops "loops:       3" run "$V" --loop 3
expect_ok run_copy_json '"goldens_checked": 1' run "$V" --json
expect_ok run_copy_tolerance '"result": "ok"' run "$V" --tolerance 0,0 --json
expect_ok run_watchdog_max "ok" run "$V" --watchdog 18446744073709551615
expect_ok run_copy_hashes_json '"blob_hashes_checked": true' run "$V" --json
expect_error run_mismatch 1 "mismatch.lmb" run "$W/mismatch.lmb"
if grep -qF "golden mismatch" "$W/out"; then pass run_mismatch_summary; else
    fail run_mismatch_summary "stdout lacks 'golden mismatch'"; fi
expect_ok run_mismatch_tolerance '"goldens_failed": 0' \
    run "$W/mismatch.lmb" --tolerance 1e-3,0 --json
expect_error run_mismatch_tight_tolerance 1 "mismatch.lmb" \
    run "$W/mismatch.lmb" --tolerance 1e-6,0
# Outputs are saved after a golden mismatch (exit 1), to inspect.
rm -f "$W/mm.bin"
expect_error run_mismatch_output 1 "(outputs saved)" run "$W/mismatch.lmb" --output "data=$W/mm.bin"
if cmp -s "$W/mm.bin" "$W/copy_data.bin"; then pass run_mismatch_output_bytes; else
    fail run_mismatch_output_bytes "mm.bin missing or differs from copy_data.bin"; fi
# --no-goldens: a mismatching file passes.
expect_ok run_no_goldens "goldens:     skipped (--no-goldens)" run "$W/mismatch.lmb" --no-goldens
expect_ok run_no_goldens_json '"goldens_skipped": true' run "$W/mismatch.lmb" --no-goldens --json
expect_ok run_no_goldens_result '"result": "ok"' run "$W/mismatch.lmb" --no-goldens --json

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
rm -f "$W/out.bin"
expect_error run_input_mismatch 1 "(outputs saved)" \
    run "$V" --input "data=$W/input.bin" --output "data=$W/out.bin"
if cmp -s "$W/out.bin" "$W/input.bin"; then pass run_input_mismatch_bytes; else
    fail run_input_mismatch_bytes "out.bin missing or differs from input.bin"; fi
expect_error run_input_size 2 "the input has 100" run "$V" --input "data=$W/short.bin"
expect_error run_input_name 2 "no buffer named 'nope'" run "$V" --input "nope=$W/input.bin"
expect_error run_input_missing 2 "$W/missing.bin" run "$V" --input "data=$W/missing.bin"
expect_error run_output_name 2 "no buffer named 'nope'" run "$V" --output "nope=$W/o.bin"

# valid.lmb's kernel is all zeros: an illegal instruction on the device.
# No output is written after a failure other than a mismatch.
rm -f "$W/fault.bin"
expect_error run_device_fault 3 "valid.lmb" run "$W/valid.lmb" --output "out=$W/fault.bin"
if [ -e "$W/fault.bin" ]; then fail run_device_fault_no_output "fault.bin was written"; else
    pass run_device_fault_no_output; fi

# nodevice.lmb verifies but no device can be opened for it.
rm -f "$W/nd.bin"
expect_error run_no_device 2 "l1_size = 1000" run "$W/nodevice.lmb" --output "data=$W/nd.bin"
if [ -e "$W/nd.bin" ]; then fail run_no_device_no_output "nd.bin was written"; else
    pass run_no_device_no_output; fi

# Blob hashes: copyflip.lmb's data blob changed after capture. Run refuses
# it as verify does, and writes nothing; --no-verify-hashes runs it (its
# golden is the same changed blob, so it passes).
expect_error verify_copyflip 2 "blob-hash-mismatch" verify "$W/copyflip.lmb"
rm -f "$W/flip.bin"
expect_error run_blob_hash 2 "hash" run "$W/copyflip.lmb" --output "data=$W/flip.bin"
if [ -e "$W/flip.bin" ]; then fail run_blob_hash_no_output "flip.bin was written"; else
    pass run_blob_hash_no_output; fi
expect_ok run_no_verify_hashes "blob hashes: not checked (--no-verify-hashes)" \
    run "$W/copyflip.lmb" --no-verify-hashes --output "data=$W/flip.bin"
if cmp -s "$W/flip.bin" "$W/copyflip_data.bin"; then pass run_no_verify_hashes_bytes; else
    fail run_no_verify_hashes_bytes "flip.bin missing or differs from copyflip_data.bin"; fi
expect_ok run_no_verify_hashes_json '"blob_hashes_checked": false' \
    run "$W/copyflip.lmb" --no-verify-hashes --json
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
    # Roles from use (in, out, f32, raw) and as named (bf16), formats, shapes.
    expect_ok capture_info_in "in               Input             4096 bytes  UInt32  (buffer 1)" info "$C"
    expect_ok capture_info_out "out              Output            4096 bytes  UInt32, shape (32, 32)  (buffer 2)" \
        info "$C"
    expect_ok capture_info_f32 "f32              InputOutput       4096 bytes  Float32, shape (4, 256)  (buffer 3)" \
        info "$C"
    expect_ok capture_info_bf16 "bf16             Input             4096 bytes  Float16_b, shape (8, 256)  (buffer 4)" \
        info "$C"
    expect_ok capture_info_raw "raw              InputOutput       4096 bytes  no format  (buffer 5)" info "$C"
    if grep -q "^  in .*shape" "$W/out"; then fail capture_info_in_no_shape "in shows a shape"; else
        pass capture_info_in_no_shape; fi
    expect_ok capture_info_json_role '"role": "InputOutput"' info --json "$C"
    expect_ok capture_info_json_format '"format": "Float16_b"' info --json "$C"
    if command -v python3 >/dev/null 2>&1; then
        "$LM" info --json "$C" >"$W/cinfo.json"
        if python3 - "$W/cinfo.json" <<'PY'; then pass capture_info_json_buffers; else
import json, sys
nb = {b["name"]: b for b in json.load(open(sys.argv[1]))["named_buffers"]}
want = {"in": ("Input", "UInt32", []), "out": ("Output", "UInt32", [32, 32]),
        "f32": ("InputOutput", "Float32", [4, 256]), "bf16": ("Input", "Float16_b", [8, 256]),
        "raw": ("InputOutput", "none", [])}
got = {k: (v["role"], v["format"], v["shape"]) for k, v in nb.items()}
assert got == want, got
assert all(v["size"] == 4096 for v in nb.values())
PY
            fail capture_info_json_buffers "named_buffers differ: $W/cinfo.json"
        fi
    fi
    expect_ok capture_run "goldens:     1 checked, 0 failed" run "$C"
    expect_ok capture_run_loops '"goldens_checked": 2' run "$C" --loop 2 --threads 1 --json
    rm -f "$W/got.bin"
    expect_ok capture_run_output "ok" run "$C" --input "in=$W/in.bin" --output "out=$W/got.bin"
    if cmp -s "$W/got.bin" "$W/out.bin"; then pass capture_output_bytes; else
        fail capture_output_bytes "got.bin differs from out.bin"; fi
    expect_error capture_run_other_input 1 "mismatch" run "$C" --input "in=$W/in2.bin"
    expect_ok capture_run_other_input_no_goldens "goldens:     skipped" \
        run "$C" --input "in=$W/in2.bin" --no-goldens

    # The watchdog: far too few instructions for the kernel faults it (and
    # writes no output); a generous budget runs.
    rm -f "$W/wd.bin"
    expect_error capture_watchdog_fault 3 "watchdog" run "$C" --watchdog 10 --output "out=$W/wd.bin"
    if [ -e "$W/wd.bin" ]; then fail capture_watchdog_no_output "wd.bin was written"; else
        pass capture_watchdog_no_output; fi
    expect_ok capture_watchdog_large "ok" run "$C" --watchdog 100000000

    # .npy outputs: dtype and shape from the buffer's format and shape.
    N=$W/npy
    rm -rf "$N" && mkdir -p "$N"
    expect_ok capture_npy_outputs "saved:       out -> $N/out.npy (.npy)" run "$C" \
        --output "out=$N/out.npy" --output "in=$N/in.npy" --output "f32=$N/f32.npy" \
        --output "bf16=$N/bf16.npy" --output "raw=$N/raw.npy" --output "out=$N/out.raw"
    # header_is NAME FILE DICT: the .npy FILE starts with a v1.0 header
    # holding DICT, 64-byte aligned, and ends with the 4096 bytes of DATA.
    npy_is() {
        if ! head -c 128 "$2" | grep -qF "$3"; then
            fail "$1" "$2 lacks $3"
        elif [ "$(wc -c <"$2")" -ne $((128 + 4096)) ]; then
            fail "$1" "$2 is not 128 + 4096 bytes"
        elif ! tail -c 4096 "$2" | cmp -s - "$4"; then
            fail "$1" "$2's data differs from $4"
        else
            pass "$1"
        fi
    }
    npy_is capture_npy_out "$N/out.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (32, 32), }" \
        "$W/out.bin"
    npy_is capture_npy_in "$N/in.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (1024,), }" \
        "$W/in.bin"
    npy_is capture_npy_f32 "$N/f32.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 256), }" \
        "$W/extra.bin"
    npy_is capture_npy_bf16 "$N/bf16.npy" "{'descr': '<u2', 'fortran_order': False, 'shape': (8, 256), }" \
        "$W/extra.bin"
    npy_is capture_npy_raw "$N/raw.npy" "{'descr': '|u1', 'fortran_order': False, 'shape': (4096,), }" \
        "$W/extra.bin"
    if cmp -s "$N/out.raw" "$W/out.bin"; then pass capture_npy_and_raw; else
        fail capture_npy_and_raw "out.raw differs from out.bin"; fi
    # After a golden mismatch the .npy output holds the wrong result.
    head -c 128 "$N/in.npy" >"$N/in2.npy" && cat "$W/in2.bin" >>"$N/in2.npy"
    rm -f "$N/out2.npy"
    expect_error capture_npy_mismatch_output 1 "(outputs saved)" \
        run "$C" --input "in=$N/in2.npy" --output "out=$N/out2.npy"
    if [ -s "$N/out2.npy" ] && ! cmp -s "$N/out2.npy" "$N/out.npy"; then
        pass capture_npy_mismatch_output_written
    else
        fail capture_npy_mismatch_output_written "out2.npy missing or equal to out.npy"
    fi

    # .npy inputs: what we wrote reads back; the result is the captured one.
    rm -f "$N/got.npy"
    expect_ok capture_npy_input "goldens:     1 checked, 0 failed" run "$C" \
        --input "in=$N/in.npy" --input "f32=$N/f32.npy" --input "bf16=$N/bf16.npy" \
        --input "raw=$N/raw.npy" --output "out=$N/got.npy"
    if cmp -s "$N/got.npy" "$N/out.npy"; then pass capture_npy_input_result; else
        fail capture_npy_input_result "got.npy differs from out.npy"; fi
    # A buffer without a format takes any dtype of its byte size.
    expect_ok capture_npy_raw_any_dtype "ok" run "$C" --input "raw=$N/f32.npy"

    # mknpy FILE HEADER [DATA]: a v1.0 .npy with HEADER (under 256 bytes).
    mknpy() {
        printf '\223NUMPY\001\000' >"$1"
        # shellcheck disable=SC2059 # the format is the length's octal escape
        printf "$(printf '\\%03o\\000' "${#2}")" >>"$1"
        printf '%s' "$2" >>"$1"
        if [ -n "$3" ]; then cat "$3" >>"$1"; fi
    }
    head -c 2048 "$W/in.bin" >"$N/half.bin"
    mknpy "$N/u4_512.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (512,), }" "$N/half.bin"
    mknpy "$N/u4_1024x1.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (1024, 1), }" "$W/in.bin"
    mknpy "$N/i4.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (32, 32), }" "$W/in.bin"
    mknpy "$N/fortran.npy" "{'descr': '<u4', 'fortran_order': True, 'shape': (32, 32), }" "$W/in.bin"
    mknpy "$N/big.npy" "{'descr': '>u4', 'fortran_order': False, 'shape': (32, 32), }" "$W/in.bin"
    mknpy "$N/f4_1024.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (1024,), }" "$W/extra.bin"
    mknpy "$N/c8.npy" "{'descr': '<c8', 'fortran_order': False, 'shape': (512,), }" "$W/in.bin"
    mknpy "$N/short.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (32, 32), }" "$N/half.bin"
    mknpy "$N/dict.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (32, 32)" "$W/in.bin"
    mknpy "$N/overflow.npy" "{'descr': '<u4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }"
    head -c 9 "$N/in.npy" >"$N/cut.npy"
    head -c 100 "$N/in.npy" >"$N/hdrcut.npy"
    cp "$W/in.bin" "$N/notnpy.npy"
    cp "$N/in.npy" "$N/v4.npy" && printf '\004' | dd of="$N/v4.npy" bs=1 seek=6 conv=notrunc 2>/dev/null
    cp "$N/in.npy" "$N/long.npy" && printf 'xy' >>"$N/long.npy"
    I="--input in"
    expect_error capture_npy_wrong_dtype 2 \
        "$I: $N/i4.npy has dtype '<i4', buffer 'in' takes 1024 UInt32 ('<u4') elements" \
        run "$C" --input "in=$N/i4.npy"
    expect_error capture_npy_wrong_dtype_f4 2 "has dtype '<f4', buffer 'in' takes 1024 UInt32" \
        run "$C" --input "in=$N/f32.npy"
    expect_error capture_npy_wrong_dtype_shaped 2 \
        "--input f32: $N/in.npy has dtype '<u4', buffer 'f32' takes Float32 ('<f4') of shape (4, 256)" \
        run "$C" --input "f32=$N/in.npy"
    expect_error capture_npy_wrong_shape 2 \
        "--input f32: $N/f4_1024.npy has shape (1024,), buffer 'f32' takes Float32 ('<f4') of shape (4, 256)" \
        run "$C" --input "f32=$N/f4_1024.npy"
    # "in" has a format but no shape: any shape of 1024 elements fits.
    expect_ok capture_npy_any_shape "goldens:     1 checked, 0 failed" \
        run "$C" --input "in=$N/u4_1024x1.npy"
    expect_error capture_npy_wrong_count 2 \
        "$I: $N/u4_512.npy has 512 elements (shape (512,)), buffer 'in' takes 1024 UInt32 ('<u4') elements" \
        run "$C" --input "in=$N/u4_512.npy"
    # An Output is never written by the host: an input for it would be ignored.
    expect_error capture_input_to_output 2 \
        "--input out: buffer 'out' is an Output (the workload never writes it from the host)" \
        run "$C" --input "out=$W/out.bin"
    expect_error capture_npy_raw_wrong_size 2 \
        "--input raw: $N/u4_512.npy holds 2048 bytes ('<u4', shape (512,)), buffer 'raw' takes 4096 bytes of plain bytes" \
        run "$C" --input "raw=$N/u4_512.npy"
    expect_error capture_npy_not_npy 2 "$I: $N/notnpy.npy: not a .npy file" run "$C" --input "in=$N/notnpy.npy"
    expect_error capture_npy_cut 2 "$I: $N/cut.npy: truncated .npy file: 9 bytes" \
        run "$C" --input "in=$N/cut.npy"
    expect_error capture_npy_header_cut 2 "$N/hdrcut.npy: the .npy header length (118 bytes) runs past" \
        run "$C" --input "in=$N/hdrcut.npy"
    expect_error capture_npy_version 2 "unsupported .npy format version 4.0" \
        run "$C" --input "in=$N/v4.npy"
    expect_error capture_npy_dict 2 "$N/dict.npy: malformed .npy header: expected ',' or '}'" \
        run "$C" --input "in=$N/dict.npy"
    expect_error capture_npy_fortran 2 "'fortran_order': True is not supported" \
        run "$C" --input "in=$N/fortran.npy"
    expect_error capture_npy_big_endian 2 "big-endian dtype '>u4' is not supported" \
        run "$C" --input "in=$N/big.npy"
    expect_error capture_npy_unknown_dtype 2 "unsupported dtype '<c8'" run "$C" --input "in=$N/c8.npy"
    expect_error capture_npy_overflow 2 "has more than 2^64 elements" \
        run "$C" --input "in=$N/overflow.npy"
    expect_error capture_npy_short 2 "truncated .npy data: 2048 bytes, shape (32, 32) of '<u4' needs 4096" \
        run "$C" --input "in=$N/short.npy"
    expect_error capture_npy_long 2 "2 bytes after the .npy data" run "$C" --input "in=$N/long.npy"
    expect_error capture_npy_missing 2 "$N/missing.npy" run "$C" --input "in=$N/missing.npy"
    expect_error capture_npy_unknown_name 2 "--input nope: the binary has no buffer named 'nope'" \
        run "$C" --input "nope=$N/in.npy"
    expect_error capture_npy_output_dir 2 "--output out:" run "$C" --output "out=$N/nodir/x.npy"

    # NumPy itself (python3-numpy, a test-only dependency): numpy writes
    # what we read (versions 1.0, 2.0 and 3.0), we write what numpy reads.
    PY=""
    for p in python3 /usr/bin/python3; do
        if "$p" -c 'import numpy' >/dev/null 2>&1; then
            PY=$p
            break
        fi
    done
    if [ -z "$PY" ]; then
        echo "SKIP capture_numpy_*: python3 with numpy not found"
    elif ! "$PY" - "$W" <<'PY'; then
import sys, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(7)
x = (np.arange(1024, dtype=np.uint32) * np.uint32(2654435761) + np.uint32(11)).reshape(32, 32)
np.save(w + "/npy/np_in.npy", x)
with open(w + "/npy/np_in_v2.npy", "wb") as f:
    np.lib.format.write_array(f, x, version=(2, 0))
with open(w + "/npy/np_in_v3.npy", "wb") as f:
    np.lib.format.write_array(f, x, version=(3, 0))
np.save(w + "/npy/np_f32.npy", rng.standard_normal((4, 256)).astype("<f4"))
bf = (rng.standard_normal((8, 256)).astype("<f4").view("<u4") >> 16).astype("<u2")
np.save(w + "/npy/np_bf16.npy", bf)
np.save(w + "/npy/np_raw.npy", rng.integers(0, 256, 4096, dtype=np.uint8))
np.save(w + "/npy/np_fortran.npy", np.asfortranarray(x))
np.save(w + "/npy/np_big.npy", x.astype(">u4"))
np.save(w + "/npy/np_f64.npy", x.astype("<f8"))
PY
        fail capture_numpy_write "numpy could not write the inputs"
    else
        expect_ok capture_numpy_inputs "goldens:     1 checked, 0 failed" run "$C" \
            --input "in=$N/np_in.npy" --input "f32=$N/np_f32.npy" --input "bf16=$N/np_bf16.npy" \
            --input "raw=$N/np_raw.npy" --output "out=$N/o_out.npy" --output "in=$N/o_in.npy" \
            --output "f32=$N/o_f32.npy" --output "bf16=$N/o_bf16.npy" --output "raw=$N/o_raw.npy"
        expect_ok capture_numpy_v2 "ok" run "$C" --input "in=$N/np_in_v2.npy"
        expect_ok capture_numpy_v3 "ok" run "$C" --input "in=$N/np_in_v3.npy"
        expect_error capture_numpy_fortran 2 "'fortran_order': True is not supported" \
            run "$C" --input "in=$N/np_fortran.npy"
        expect_error capture_numpy_big_endian 2 "big-endian dtype '>u4'" \
            run "$C" --input "in=$N/np_big.npy"
        expect_error capture_numpy_f64 2 "np_f64.npy has dtype '<f8', buffer 'in' takes 1024 UInt32 ('<u4') elements" \
            run "$C" --input "in=$N/np_f64.npy"
        if "$PY" - "$N" <<'PY'; then pass capture_numpy_reads_ours; else
import sys, numpy as np
n = sys.argv[1]
def check(name, dtype, shape, want):
    a = np.load(n + "/" + name)
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == shape, (name, a.shape)
    assert np.array_equal(a, want), name
x = np.load(n + "/np_in.npy")
check("o_in.npy", "<u4", (1024,), x.reshape(-1))
check("o_out.npy", "<u4", (32, 32), x * np.uint32(3) + np.uint32(7))
check("o_f32.npy", "<f4", (4, 256), np.load(n + "/np_f32.npy"))
check("o_bf16.npy", "<u2", (8, 256), np.load(n + "/np_bf16.npy"))
check("o_raw.npy", "|u1", (4096,), np.load(n + "/np_raw.npy"))
PY
            fail capture_numpy_reads_ours "numpy read back other dtypes, shapes or values"
        fi
    fi
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

check_summary
