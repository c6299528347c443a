#!/bin/sh
# Builds examples/minimal_replay as one static, stripped executable against
# musl (Debian's musl-tools): what an embedded target would ship. Only what
# replay needs goes in — no kernel compiler, no recorder, no CLI.
# Usage: build-static-replayer.sh SOURCE_DIR OUTPUT
set -eu
src=$1 out=$2
cc=${MUSL_GCC:-musl-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The content hash comes from Debian's libxxhash-dev header alone; a copy in a
# directory of its own keeps the host's other headers away from this libc.
mkdir "$tmp/xxhash"
cp "${XXHASH_HEADER:-/usr/include/xxhash.h}" "$tmp/xxhash/"
flags="-O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I$src/include -I$src/src -I$src/kernel-sdk/include
       -I$tmp/xxhash
       -ffp-contract=off -fno-math-errno -fno-trapping-math"
case "$(uname -m)" in x86_64) flags="$flags -DTILE_HAVE_AVX2=1" ;; esac

sources="src/replay/replay.c src/api/api_device.c
         src/format/fb_verify.c src/format/lmb_schema.c src/format/lmb_semantic.c
         src/format/lmb_verify.c src/format/fb_builder.c
         src/runtime/allocator.c src/runtime/backend_sim.c src/runtime/buffer.c src/runtime/cq.c
         src/runtime/device.c src/runtime/program.c src/runtime/trace.c src/runtime/trace_blob.c
         src/format/lmb_trace.c
         src/sim/sim_memory.c src/sim/sim_pool.c src/sim/sim_launch.c src/sim/sim_compute.c
         src/sim/rv32/rv_decode.c src/sim/rv32/rv_hart.c src/sim/rv32/rv_image.c
         src/sim/rv32/rv_run.c
         src/sim/tile/tile_format.c src/sim/tile/tile_engine.c src/sim/tile/tile_kern_portable.c
         src/base/error.c src/base/file.c src/base/handle.c src/base/hash.c
         src/base/idmap.c"
for f in $sources; do
    # shellcheck disable=SC2086
    $cc $flags -c "$src/$f" -o "$tmp/$(echo "$f" | tr / _).o"
done
case "$(uname -m)" in
x86_64)
    # shellcheck disable=SC2086
    $cc $flags -mavx2 -mfma -c "$src/src/sim/tile/tile_kern_avx2.c" -o "$tmp/avx2.o" ;;
esac
ar rcs "$tmp/libreplay.a" "$tmp"/*.o
# shellcheck disable=SC2086
$cc $flags -static -s "$src/examples/minimal_replay/minimal_replay.c" "$tmp/libreplay.a" \
    -lm -lpthread -o "$out"
