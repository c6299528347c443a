#!/bin/sh
# Builds a program against the library as one static, stripped executable,
# with a C compiler other than the build's: musl-gcc (Debian's musl-tools),
# which is what an embedded target would ship, or a cross compiler such as
# aarch64-linux-gnu-gcc. Every library source goes into an archive, so the
# program carries only what it calls: examples/minimal_replay gets no kernel
# compiler, no recorder and no file writer.
# Usage: build-static-replayer.sh SOURCE_DIR OUTPUT [PROGRAM_SOURCE...]
#   The program defaults to examples/minimal_replay/minimal_replay.c.
#   STATIC_CC names the compiler (else MUSL_GCC, else musl-gcc).
set -eu
src=$1 out=$2
shift 2
[ $# -gt 0 ] || set -- "$src/examples/minimal_replay/minimal_replay.c"
cc=${STATIC_CC:-${MUSL_GCC:-musl-gcc}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# lm_version.h, generated from the project version as the CMake build does.
version=$(sed -n 's/^project(lightmetal VERSION \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' \
    "$src/CMakeLists.txt")
case $version in
*.*.*) ;;
*)
    echo "build-static-replayer: no project version in $src/CMakeLists.txt" >&2
    exit 1
    ;;
esac
major=${version%%.*} patch=${version##*.}
minor=${version#*.}
minor=${minor%.*}
mkdir -p "$tmp/include/lightmetal"
sed -e "s/@PROJECT_VERSION_MAJOR@/$major/" -e "s/@PROJECT_VERSION_MINOR@/$minor/" \
    -e "s/@PROJECT_VERSION_PATCH@/$patch/" -e "s/@PROJECT_VERSION@/$version/" \
    "$src/cmake/lm_version.h.in" >"$tmp/include/lightmetal/lm_version.h"

# The content hash comes from Debian's libxxhash-dev header alone; a copy in a
# directory of its own keeps the host's other headers away from this libc.
mkdir "$tmp/xxhash"
cp "${XXHASH_HEADER:-/usr/include/xxhash.h}" "$tmp/xxhash/"

flags="-O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I$src/include -I$tmp/include -I$src/src
       -I$src/kernel-sdk/include -I$tmp/xxhash -ffp-contract=off -fno-math-errno -fno-trapping-math
       -DLM_ENABLE_CAPTURE=1 -DLM_KERNEL_SDK_DIR=\"$src/kernel-sdk\""
# The AVX2 and AVX-512 tile kernels only when the target (not the build
# host) is x86-64.
x86=false
case "$($cc -dumpmachine)" in
x86_64-*) x86=true flags="$flags -DTILE_HAVE_X86=1 -DHASH_HAVE_AVX2=1" ;;
esac

# The op library (src/nn) and the model frontend (src/frontend) are left out:
# they need sources the CMake build generates, and a replaying program never
# calls them.
for f in $(cd "$src" && find src -name '*.c' -not -path 'src/nn/*' -not -path 'src/frontend/*' | sort); do
    extra=""
    case $f in
    */tile_kern_avx2.c)
        $x86 || continue
        extra="-mavx2 -mfma"
        ;;
    */tile_kern_avx512.c)
        $x86 || continue
        extra="-mavx512f -mavx2 -mfma"
        ;;
    */hash_avx2.c)
        $x86 || continue
        extra="-mavx2"
        ;;
    esac
    # shellcheck disable=SC2086
    $cc $flags $extra -c "$src/$f" -o "$tmp/$(echo "$f" | tr / _).o"
done
ar rcs "$tmp/liblightmetal.a" "$tmp"/*.o
# shellcheck disable=SC2086
$cc $flags -I"$(dirname "$1")" -static -s "$@" "$tmp/liblightmetal.a" -lm -lpthread -o "$out"
