#!/bin/sh
# Installs lightmetal into a temporary prefix and uses it the way a C user
# would: an out-of-tree program (device, buffers, a kernel compiled from a
# source file, a launch, capture and replay) built with pkg-config (shared and
# --static), a replay-only program built against lightmetal-replay, and the
# same programs built by a CMake project with find_package(lightmetal).
#
# The sources are copied, configured for the prefix, built and installed
# with `make install PREFIX=`, then the copy and its build tree are deleted:
# what runs afterwards can only use the installed files.
#
# Usage: test_install.sh SOURCE_DIR WORK_DIR CC BUILD_TYPE VERSION
set -eu
src=$1 work=$2 cc=$3 build_type=$4 version=$5
here=$(cd "$(dirname "$0")" && pwd)

fail() {
    echo "test_install: $*" >&2
    exit 1
}

# Nothing from the calling build or environment leaks in.
unset MAKEFLAGS MFLAGS MAKELEVEL LM_KERNEL_SDK LM_KERNEL_SDK_DIR PKG_CONFIG_PATH \
    LD_LIBRARY_PATH CMAKE_PREFIX_PATH 2>/dev/null || true
export LM_CACHE_DIR="$work/kernel-cache"

rm -rf "$work"
mkdir -p "$work/copy"
prefix=$work/prefix
for f in CMakeLists.txt Makefile cmake include kernel-sdk scripts src tools; do
    cp -R "$src/$f" "$work/copy/"
done
echo "== make install PREFIX=$prefix"
CC=$cc make -C "$work/copy" --no-print-directory install PREFIX="$prefix" BUILD="$work/build" \
    BUILD_TYPE="$build_type" JOBS=2 \
    CMAKE_ARGS="-DLM_BUILD_TESTS=OFF -DLM_BUILD_BENCH=OFF -DLM_BUILD_EXAMPLES=OFF" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "make install failed"; }
rm -rf "$work/copy" "$work/build"

pc=$(find "$prefix" -name lightmetal.pc)
[ -n "$pc" ] || fail "no lightmetal.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in include/lightmetal/lightmetal.h include/lightmetal/lm_version.h \
    include/lightmetal/tt_metal.hpp share/lightmetal/kernel-sdk/include/c++/cstdint \
    share/lightmetal/kernel-sdk/include/api/dataflow/dataflow_api.h \
    share/lightmetal/kernel-sdk/include/dataflow_api.h share/lightmetal/kernel-sdk/link.ld \
    bin/lightmetal; do
    [ -e "$prefix/$f" ] || fail "$f is not installed"
done
for f in liblightmetal.a liblightmetal.so liblightmetal_replay.a liblightmetal_replay.so \
    pkgconfig/lightmetal-replay.pc cmake/lightmetal/lightmetalConfig.cmake \
    cmake/lightmetal/lightmetalConfigVersion.cmake; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f is not installed"
done

got=$("$prefix/bin/lightmetal" --version | awk '{print $2}')
[ "$got" = "$version" ] || fail "installed 'lightmetal --version' says $got, want $version"

# The consumer's sources, away from the source tree.
cp -R "$here/consumer" "$work/consumer"
cd "$work/consumer"
kernel=$work/consumer/kernels/scale.c

export PKG_CONFIG_PATH="$libdir/pkgconfig"
got=$(pkg-config --modversion lightmetal)
[ "$got" = "$version" ] || fail "pkg-config --modversion lightmetal says $got, want $version"
sdk=$(pkg-config --variable=kernel_sdk_dir lightmetal)
[ -f "$sdk/include/dataflow_api.h" ] || fail "pkg-config kernel_sdk_dir '$sdk' has no SDK"
cflags="-std=c11 -Wall -Wextra -Werror"

echo "== pkg-config lightmetal (shared)"
# shellcheck disable=SC2046
$cc $cflags $(pkg-config --cflags lightmetal) workload.c -o workload_pc \
    $(pkg-config --libs lightmetal)
readelf -d workload_pc | grep -q 'NEEDED.*liblightmetal\.so' ||
    fail "workload_pc does not use liblightmetal.so"
LD_LIBRARY_PATH=$libdir ./workload_pc "$kernel" "$work/pc.lmb"

echo "== pkg-config --static lightmetal"
# shellcheck disable=SC2046
$cc $cflags -static $(pkg-config --cflags lightmetal) workload.c -o workload_static \
    $(pkg-config --static --libs lightmetal)
./workload_static "$kernel" "$work/static.lmb"

echo "== pkg-config lightmetal-replay (shared)"
# shellcheck disable=SC2046
$cc $cflags $(pkg-config --cflags lightmetal-replay) replayer.c -o replayer_pc \
    $(pkg-config --libs lightmetal-replay)
if readelf -d replayer_pc | grep -q 'NEEDED.*liblightmetal\.so'; then
    fail "replayer_pc needs the whole library"
fi
LD_LIBRARY_PATH=$libdir ./replayer_pc "$work/pc.lmb"

echo "== C++: lightmetal/tt_metal.hpp and a .cpp kernel from the installed SDK"
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Wextra -Wno-missing-field-initializers -Werror \
    $(pkg-config --cflags lightmetal) tt_host.cpp -o tt_host $(pkg-config --libs lightmetal)
LD_LIBRARY_PATH=$libdir ./tt_host "$work/consumer/kernels/copy.cpp"

echo "== installed lightmetal run"
"$prefix/bin/lightmetal" run "$work/static.lmb"

echo "== find_package(lightmetal)"
cmake -S . -B build -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    -DLM_EXPECT_VERSION="$version" >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; fail "configuring the CMake consumer failed"; }
cmake --build build >>"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; fail "building the CMake consumer failed"; }
./build/workload "$kernel" "$work/cmake.lmb"
./build/replayer "$work/cmake.lmb"
./build/replayer_static "$work/pc.lmb"
echo "test_install: PASS"
