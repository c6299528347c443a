#!/bin/sh
# Cross-builds the static replayer (examples/minimal_replay) and the
# command-line tool for aarch64 with Debian's gcc-aarch64-linux-gnu, then,
# where qemu-aarch64 (qemu-user) is there, replays workloads captured on this
# host with them: every golden must match (goldens compare bit for bit) and
# every named output must equal the host's replay byte for byte.
# Usage: check-aarch64.sh BUILD_DIR   (a built tree: examples and bin/lightmetal)
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
cc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
out=$build/aarch64
rm -rf "$out"
mkdir -p "$out"

fail() {
    echo "check-aarch64: $*" >&2
    exit 1
}

command -v "$cc" >/dev/null || fail "$cc not found (Debian package gcc-aarch64-linux-gnu)"
STATIC_CC=$cc sh "$here/build-static-replayer.sh" "$src" "$out/minimal_replay"
# The tool without the ONNX compiler (the static build leaves the frontend
# out): its `compile` is the stub that says so.
tools=$(ls "$src"/tools/*.c | grep -v '/lmt_compile\.c$')
# shellcheck disable=SC2086 # one argument per source file
STATIC_CC=$cc sh "$here/build-static-replayer.sh" "$src" "$out/lightmetal" $tools
for b in minimal_replay lightmetal; do
    readelf -h "$out/$b" | grep -q 'Machine:.*AArch64' || fail "$out/$b is not an aarch64 program"
done
echo "check-aarch64: built $out/minimal_replay ($(wc -c <"$out/minimal_replay") bytes)" \
    "and $out/lightmetal"

qemu=$(command -v qemu-aarch64 || true)
if [ -z "$qemu" ]; then
    echo "check-aarch64: qemu-aarch64 not found (Debian package qemu-user): not replayed"
    exit 0
fi

# Workloads (example:output name): FPU matmul, SFPU math, a metal trace.
for w in matmul_multi_core:c eltwise_sfpu:out trace_chain:x; do
    ex=${w%%:*} name=${w#*:}
    lmb=$out/$ex.lmb
    "$build/examples/$ex" --capture "$lmb" >"$out/$ex.capture.log" 2>&1 ||
        { cat "$out/$ex.capture.log"; fail "$ex: capture failed"; }
    "$build/bin/lightmetal" run "$lmb" --output "$name=$out/$ex.host.bin" >/dev/null ||
        fail "$ex: host replay failed"
    "$qemu" "$out/minimal_replay" "$lmb" >"$out/$ex.replay.log" 2>&1 ||
        { cat "$out/$ex.replay.log"; fail "$ex: minimal_replay on aarch64 failed"; }
    "$qemu" "$out/lightmetal" run "$lmb" --output "$name=$out/$ex.aarch64.bin" >/dev/null ||
        fail "$ex: lightmetal run on aarch64 failed"
    cmp "$out/$ex.host.bin" "$out/$ex.aarch64.bin" ||
        fail "$ex: output '$name' differs between $(uname -m) and aarch64"
    echo "check-aarch64: $ex: goldens match on aarch64, output '$name'" \
        "($(wc -c <"$out/$ex.host.bin") bytes) identical to $(uname -m)"
done
