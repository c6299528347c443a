#!/bin/sh
# The libraries export the public API and nothing else: every global symbol
# they define is an `lm_`, `lmnn_` or `lmfe_` function declared in the public headers, the whole
# library exports every declared function, the replay library none of the
# recorder or the kernel compiler, and the shared libraries carry their soname.
# Usage: check_exports.sh CC INCLUDE_DIR GENERATED_INCLUDE_DIR SONAME_VERSION
#                         LIB.so REPLAY.so LIB.a REPLAY.a [ONNX]
# ONNX: the build's LM_ENABLE_ONNX (ON: the frontend's header is part of the API).
set -eu
export LC_ALL=C
cc=$1 inc=$2 geninc=$3 soversion=$4 full_so=$5 replay_so=$6 full_a=$7 replay_a=$8 onnx=${9:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() {
    echo "check_exports: $*" >&2
    bad=1
}

# The declared API: functions of the preprocessed umbrella header (comments
# and macros gone), less the static inline ones.
printf '#include "lightmetal/lightmetal.h"\n#include "lightmetal/nn.h"\n' >"$tmp/api.c"
case $onnx in
ON | on | 1 | TRUE | true | YES | yes) echo '#include "lightmetal/frontend.h"' >>"$tmp/api.c" ;;
esac
$cc -std=c11 -E -P -I"$inc" -I"$geninc" "$tmp/api.c" | tr '\n' ' ' | tr ';{}' '\n\n\n' >"$tmp/decls"
grep -v 'static' "$tmp/decls" | grep -o '\blm\(nn\|fe\)\{0,1\}_[a-z0-9_]*[[:space:]]*(' | tr -d ' (' |
    sort -u >"$tmp/api"
[ -s "$tmp/api" ] || fail "no function declared in the public headers"

exports() { # LIB -> its defined global symbols
    case $1 in
    *.so) nm -D --defined-only "$1" ;;
    *) nm -g --defined-only "$1" ;;
    esac | awk 'NF == 3 {print $3}' | sort -u
}

for lib in "$full_so" "$replay_so" "$full_a" "$replay_a"; do
    exports "$lib" >"$tmp/exports"
    leaks=$(comm -23 "$tmp/exports" "$tmp/api")
    [ -z "$leaks" ] || fail "$(basename "$lib") exports internal symbols:" $leaks
done

exports "$full_so" >"$tmp/full"
missing=$(comm -13 "$tmp/full" "$tmp/api")
[ -z "$missing" ] || fail "$(basename "$full_so") lacks declared functions:" $missing

exports "$replay_so" >"$tmp/replay"
for f in lm_replay_open_file lm_replay_run lm_replay_get_output lm_device_open lm_last_error \
    lm_version_string; do
    grep -qx "$f" "$tmp/replay" || fail "$(basename "$replay_so") lacks $f"
done
for f in lm_create_kernel lm_light_metal_begin_capture lm_binary_save lmnn_from_host \
    lmfe_read_tensor_pb; do
    ! grep -qx "$f" "$tmp/replay" || fail "$(basename "$replay_so") has $f (recorder or compiler)"
done

for lib in "$full_so" "$replay_so"; do
    name=$(basename "$lib")
    want="$name.$soversion"
    got=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$got" = "$want" ] || fail "$name has soname '$got', want '$want'"
done

[ $bad -eq 0 ] || exit 1
echo "check_exports: $(wc -l <"$tmp/api") public functions; full library $(wc -l <"$tmp/full")," \
    "replay library $(wc -l <"$tmp/replay") exported"
