#!/bin/sh
# Named buffers whose element type is not their storage format's own, run by
# ctest:
#   test_element_types.sh LIGHTMETAL MAKE_TYPED_CAPTURE WORKDIR SCHEMA FLATC PYTHON3
# MAKE_TYPED_CAPTURE checks capture's refusals and writes typed.lmb (see
# make_typed_capture.c) and two files the verifier must reject. NumPy (Debian's
# python3-numpy under PYTHON3) makes the inputs and checks the outputs of
# `lightmetal run`, both ways: int64, bool, uint64, int8, uint16, float64 and
# float16 arrays in and out. Exit 77 (skipped) without NumPy.

LM=$1
MAKE_TYPED=$2
W=$3
SCHEMA=$4
FLATC=$5
PY=$6

rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/check_lib.sh"

if ! "$MAKE_TYPED" "$W"; then
    fail make_typed_capture "capture failed or a refusal was missing (see above)"
    check_summary
    exit 1
fi
pass capture_refusals
T=$W/typed.lmb

# ------------------------------------------------------------ the file
expect_ok typed_verify "typed.lmb: ok" verify "$T"
expect_ok typed_format_version "format version: 2.4.0" info "$T"
expect_ok typed_info_ids "ids              Input             4096 bytes  Int64 stored as Int32, shape (32, 32)" info "$T"
expect_ok typed_info_mask "mask             Output            4096 bytes  Bool stored as Int32  (buffer" info "$T"
expect_ok typed_info_hout "hout             Output            4096 bytes  Float16 stored as Float32, shape (4, 256)" info "$T"
expect_ok typed_info_u64 "u64              InputOutput       4096 bytes  UInt64 stored as UInt32  (buffer" info "$T"
expect_ok typed_info_t64 "t64              Input               24 bytes  Float64 stored as Float32, shape (2, 3)" info "$T"
expect_ok typed_info_json '"element_type": "Int64"' info --json "$T"
expect_ok typed_dump '"element_type": "Float16"' dump "$T"
if [ -n "$FLATC" ] && [ -x "$FLATC" ]; then
    "$LM" dump "$T" >"$W/typed.dump.json"
    if ! "$FLATC" --json --strict-json -o "$W/flatc" "$SCHEMA" -- "$T"; then
        fail typed_dump_matches_flatc "flatc cannot read typed.lmb"
    elif cmp -s "$W/typed.dump.json" "$W/flatc/typed.json"; then
        pass typed_dump_matches_flatc
    else
        fail typed_dump_matches_flatc "differs: diff $W/typed.dump.json $W/flatc/typed.json"
    fi
else
    echo "SKIP typed_dump_matches_flatc: flatc not found"
fi

# A file pairing an element type with a format that cannot hold it, or naming
# an undefined one, is invalid for every command that checks meaning.
for c in verify info run; do
    expect_error "badtype_$c" 2 \
        "buffer_names[0]: element type Float64 needs data format Float32, the name records Int32" \
        "$c" "$W/badtype.lmb"
    expect_error "badvalue_$c" 2 "buffer_names[0].element_type: value 10 (largest defined 9)" \
        "$c" "$W/badvalue.lmb"
done
expect_ok badtype_dump '"element_type": "Float64"' dump "$W/badtype.lmb"

# Raw files stay in the storage format (no NumPy needed).
expect_ok typed_run "ok" run "$T" --output "y=$W/y.bin" --output "mask=$W/mask.bin"

if [ -z "$PY" ] || ! "$PY" -c 'import numpy' >/dev/null 2>&1; then
    echo "SKIP typed_numpy_*: $PY with numpy not found"
    check_summary || exit 1
    exit 77
fi

N=$W/npy
mkdir -p "$N"
if ! "$PY" - "$N" <<'PY'; then
import sys, numpy as np
n = sys.argv[1]
rng = np.random.default_rng(15)
ids = rng.integers(-(2**31), 2**31, (32, 32), dtype=np.int64)
ids.flat[:6] = [-(2**31), 2**31 - 1, 0, 1, -1, 715827883]  # the edges of int32
np.save(n + "/ids.npy", ids)
np.save(n + "/ids_i4.npy", ids.astype("<i4"))
x64 = rng.standard_normal((4, 256)) * 1e3
x64.flat[:10] = [0.1, 1 / 3, 1e300, -1e-50, 65520.0, 65519.0, 1e-8, np.nan, -np.inf, 2.0**-25]
np.save(n + "/x64.npy", x64)
h16 = (rng.standard_normal((4, 256)) * 100).astype("<f2")
h16.flat[:8] = np.array([2.0**-24, 6e-5, 65504, -np.inf, np.inf, np.nan, -0.0, -(2.0**-14)],
                        dtype="<f2")
np.save(n + "/h16.npy", h16)
np.save(n + "/flags.npy", rng.integers(0, 2, 1024).astype(bool))
u64 = rng.integers(0, 2**32, 1024, dtype=np.uint64)
u64[:2] = [0, 2**32 - 1]
np.save(n + "/u64.npy", u64)
np.save(n + "/i8.npy", rng.integers(-128, 128, (32, 32)).astype(np.int8))
np.save(n + "/u16.npy", rng.integers(0, 65536, 1024).astype(np.uint16))
# Inputs that must be refused.
bad = ids.copy()
bad.flat[5] = 2**31
np.save(n + "/ids_big.npy", bad)
bad.flat[5] = -(2**31) - 1
np.save(n + "/ids_small.npy", bad)
np.save(n + "/ids_f8.npy", ids.astype("<f8"))
np.save(n + "/flags_i1.npy", rng.integers(0, 2, 1024).astype(np.int8))
np.save(n + "/flags_2.npy", np.full(1024, 2, dtype=np.uint8).view(bool))
big = u64.copy()
big[700] = 2**32
np.save(n + "/u64_big.npy", big)
np.save(n + "/x64_f4_shape.npy", np.zeros((1024,), dtype="<f8"))
PY
    fail typed_numpy_write "numpy could not write the inputs"
    check_summary
    exit 1
fi

ALL_IN="--input ids=$N/ids.npy --input x64=$N/x64.npy --input h16=$N/h16.npy \
--input flags=$N/flags.npy --input u64=$N/u64.npy --input i8=$N/i8.npy --input u16=$N/u16.npy"
# shellcheck disable=SC2086
expect_ok typed_numpy_run "saved:       y -> $N/o_y.npy (.npy)" run "$T" $ALL_IN \
    --output "y=$N/o_y.npy" --output "mask=$N/o_mask.npy" --output "hout=$N/o_hout.npy" \
    --output "z64=$N/o_z64.npy" --output "flags=$N/o_flags.npy" --output "u64=$N/o_u64.npy" \
    --output "i8=$N/o_i8.npy" --output "u16=$N/o_u16.npy" --output "ids=$N/o_ids.npy" \
    --output "y=$N/o_y.bin" --output "x64=$N/o_x64.npy"
if "$PY" - "$N" <<'PY'; then pass typed_numpy_values; else
import sys, numpy as np
n = sys.argv[1]
def load(name, dtype, shape):
    a = np.load(n + "/" + name)
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == shape, (name, a.shape)
    return a
def same(name, a, want):
    assert np.array_equal(a, want, equal_nan=a.dtype.kind == "f"), (name, a, want)
    if a.dtype.kind == "f":  # signs of zeros and infinities too
        assert np.array_equal(np.signbit(a), np.signbit(want)), name
ids = np.load(n + "/ids.npy")
wrapped = (ids * 3 - 7 + 2**31) % 2**32 - 2**31  # int32 arithmetic, sign-extended
same("y", load("o_y.npy", "<i8", (32, 32)), wrapped)
same("ids", load("o_ids.npy", "<i8", (32, 32)), ids)
same("mask", load("o_mask.npy", "|b1", (1024,)), ids.reshape(-1) > 0)
raw = np.fromfile(n + "/o_y.bin", dtype="<i4")  # raw files: the storage format
same("y.bin", raw, wrapped.reshape(-1).astype("<i4"))
x64 = np.load(n + "/x64.npy")
with np.errstate(over="ignore"):
    x32 = x64.astype("<f4")  # round to nearest; 1e300 -> inf, -1e-50 -> -0.0
same("x64", load("o_x64.npy", "<f8", (4, 256)), x32.astype("<f8"))
with np.errstate(over="ignore"):
    same("hout", load("o_hout.npy", "<f2", (4, 256)), x32.astype("<f2"))
h16 = np.load(n + "/h16.npy")
same("z64", load("o_z64.npy", "<f8", (4, 256)), h16.astype("<f8"))
same("flags", load("o_flags.npy", "|b1", (1024,)), np.load(n + "/flags.npy"))
same("u64", load("o_u64.npy", "<u8", (1024,)), np.load(n + "/u64.npy"))
same("i8", load("o_i8.npy", "|i1", (32, 32)), np.load(n + "/i8.npy"))
same("u16", load("o_u16.npy", "<u2", (1024,)), np.load(n + "/u16.npy"))
PY
    fail typed_numpy_values "numpy read back other dtypes, shapes or values"
fi

# The storage dtype is taken as it is.
expect_ok typed_storage_dtype "ok" run "$T" --input "ids=$N/ids_i4.npy" --output "y=$N/s_y.npy"
if cmp -s "$N/s_y.npy" "$N/o_y.npy"; then pass typed_storage_dtype_same; else
    fail typed_storage_dtype_same "int32 and int64 inputs gave different outputs"; fi

# Refusals: values outside the storage's range, other dtypes, non-bools.
expect_error typed_int64_too_big 2 \
    "--input ids: $N/ids_big.npy: element 5 is 2147483648, outside the Int32 range -2147483648..2147483647 (buffer 'ids' stores Int64 as Int32)" \
    run "$T" --input "ids=$N/ids_big.npy"
expect_error typed_int64_too_small 2 "$N/ids_small.npy: element 5 is -2147483649, outside the Int32 range" \
    run "$T" --input "ids=$N/ids_small.npy"
expect_error typed_uint64_too_big 2 \
    "--input u64: $N/u64_big.npy: element 700 is 4294967296, outside the UInt32 range 0..4294967295 (buffer 'u64' stores UInt64 as UInt32)" \
    run "$T" --input "u64=$N/u64_big.npy"
expect_error typed_f8_for_int64 2 \
    "--input ids: $N/ids_f8.npy has dtype '<f8', buffer 'ids' takes Int64 ('<i8', or its storage Int32 '<i4') of shape (32, 32)" \
    run "$T" --input "ids=$N/ids_f8.npy"
expect_error typed_int8_for_bool 2 \
    "--input flags: $N/flags_i1.npy has dtype '|i1', buffer 'flags' takes 1024 Bool ('|b1', or its storage Int32 '<i4') elements" \
    run "$T" --input "flags=$N/flags_i1.npy"
expect_error typed_bool_not_0_or_1 2 "$N/flags_2.npy: element 0 is byte 2, not a bool (0 or 1)" \
    run "$T" --input "flags=$N/flags_2.npy"
expect_error typed_wrong_shape 2 \
    "--input x64: $N/x64_f4_shape.npy has shape (1024,), buffer 'x64' takes Float64 ('<f8', or its storage Float32 '<f4') of shape (4, 256)" \
    run "$T" --input "x64=$N/x64_f4_shape.npy"

check_summary
