#!/bin/sh
# Installs lightmetal into a temporary prefix and uses it the way a C user
# would: an out-of-tree program (device, buffers, a kernel compiled from a
# source file, a launch, capture and replay) built with pkg-config (shared and
# --static), a replay-only program built against lightmetal-replay, and the
# same programs built by a CMake project with find_package(lightmetal).
#
# The sources are copied, configured for the prefix, built and installed
# with `make install PREFIX=`, and the same build installed again with
# `cmake --install BUILD --prefix OTHER`, a prefix it was not configured for;
# then the copy and its build tree are deleted: what runs afterwards can only
# use the installed files. The install in OTHER is used with the configured
# prefix out of the way, then again after moving OTHER elsewhere: the
# library, the tool and the pkg-config files find everything from where they
# are.
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
other=$work/other
echo "== cmake --install --prefix $other (configured for $prefix)"
cmake --install "$work/build" --prefix "$other" >"$work/install-other.log" 2>&1 ||
    { cat "$work/install-other.log"; fail "cmake --install --prefix failed"; }
if grep -q "Warning" "$work/install-other.log"; then
    cat "$work/install-other.log"
    fail "installing to another prefix warns"
fi
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

# relocated NAME DIR: the install at DIR (not the configured prefix) used as
# above: kcc, a program built with its pkg-config files and run with its
# shared library, and one linked statically. Fresh kernel caches, so that
# each compiles against the SDK it finds.
relocated() {
    name=$1 dir=$2
    rel_libdir=$dir/${libdir#"$prefix"/}
    echo "== $name: $dir/bin/lightmetal kcc"
    LM_CACHE_DIR="$work/cache-$name-kcc" "$dir/bin/lightmetal" kcc "$kernel" --processor dm0 \
        -o "$work/$name.elf" || fail "$name: kcc failed"
    echo "== $name: pkg-config lightmetal (shared)"
    PKG_CONFIG_PATH="$rel_libdir/pkgconfig"
    sdk=$(pkg-config --variable=kernel_sdk_dir lightmetal)
    [ -f "$sdk/include/dataflow_api.h" ] || fail "$name: pkg-config kernel_sdk_dir '$sdk' has no SDK"
    # shellcheck disable=SC2046
    $cc $cflags $(pkg-config --cflags lightmetal) workload.c -o "workload_$name" \
        $(pkg-config --libs lightmetal)
    LM_CACHE_DIR="$work/cache-$name-shared" LD_LIBRARY_PATH=$rel_libdir "./workload_$name" \
        "$kernel" "$work/$name.lmb" || fail "$name: the shared library did not find its SDK"
    echo "== $name: pkg-config --static lightmetal"
    # shellcheck disable=SC2046
    $cc $cflags -static $(pkg-config --cflags lightmetal) workload.c -o "workload_static_$name" \
        $(pkg-config --static --libs lightmetal)
    # Linked into a program elsewhere, the library has only the configured
    # prefix (hidden here) to go by: an error saying what to set, then
    # LM_KERNEL_SDK_DIR serves.
    if LM_CACHE_DIR="$work/cache-$name-static" "./workload_static_$name" "$kernel" \
        "$work/$name-static.lmb" >"$work/static.err" 2>&1; then
        fail "$name: a static program found an SDK it should not know"
    fi
    grep -q "no kernel SDK found: looked in .*$prefix/.*(set LM_KERNEL_SDK_DIR" "$work/static.err" ||
        { cat "$work/static.err"; fail "$name: the static program's error does not help"; }
    LM_KERNEL_SDK_DIR="$dir/share/lightmetal/kernel-sdk" LM_CACHE_DIR="$work/cache-$name-static" \
        "./workload_static_$name" "$kernel" "$work/$name-static.lmb" ||
        fail "$name: the static program failed with LM_KERNEL_SDK_DIR"
    "$dir/bin/lightmetal" run "$work/$name.lmb" >/dev/null || fail "$name: lightmetal run failed"
    echo "== $name: find_package(lightmetal)"
    { cmake -S . -B "build-$name" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$dir" \
        -DLM_EXPECT_VERSION="$version" && cmake --build "build-$name"; } >"$work/cmake-$name.log" 2>&1 ||
        { cat "$work/cmake-$name.log"; fail "$name: the CMake consumer failed to build"; }
    LM_CACHE_DIR="$work/cache-$name-cmake" "./build-$name/workload" "$kernel" "$work/$name-cmake.lmb" ||
        fail "$name: the CMake consumer did not find its SDK"
}

# The configured prefix out of the way: nothing may come from there.
mv "$prefix" "$prefix.away"
relocated other "$other"
mv "$other" "$work/moved"
relocated moved "$work/moved"
cmp -s "$work/other.elf" "$work/moved.elf" || fail "kcc built different ELFs before and after the move"
mv "$prefix.away" "$prefix"
echo "test_install: PASS"
