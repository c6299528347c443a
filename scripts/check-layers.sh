#!/bin/sh
# Checks the layering rule on built objects: a symbol that one layer uses and
# another defines must come from a layer below it, one it depends on directly
# or through other layers.
# Usage: check-layers.sh SPEC
# SPEC has one line per layer: "NAME DEPS OBJECT...", DEPS being the layers it
# depends on, comma-separated ("-" for none).
set -eu
spec=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# symbol -> defining layer, and "layer symbol object" for every use.
while read -r layer deps objects; do
    # shellcheck disable=SC2086
    nm -A -g --defined-only $objects | awk -v l="$layer" '{print $NF, l}' >>"$tmp/defs"
    # shellcheck disable=SC2086
    nm -A -u $objects | awk -v l="$layer" '{o = $1; sub(/:.*/, "", o); sub(/.*\//, "", o);
                                            print l, $NF, o}' >>"$tmp/uses"
    echo "$layer $deps" >>"$tmp/deps"
done <"$spec"

awk '
FILENAME == ARGV[1] {
    n = split($2, ds, ",")
    for (i = 1; i <= n; i++) if (ds[i] != "-") dep[$1, ds[i]] = 1
    layers[$1] = 1
    count++
    next
}
FILENAME == ARGV[2] { definer[$1] = $2; next }
function below(a, b, depth,    c) { # does layer a reach layer b through its dependencies?
    if (depth > count) return 0 # a cycle, reported once below
    if ((a, b) in dep) return 1
    for (c in layers) if ((a, c) in dep && below(c, b, depth + 1)) return 1
    return 0
}
FNR == 1 {
    for (l in layers)
        if (below(l, l, 0)) {
            printf "check-layers: %s depends on itself through other layers\n", l
            bad = 1
        }
}
{
    if (!($2 in definer)) next # the C library and other system libraries
    owner = definer[$2]
    if (owner == $1 || below($1, owner, 0)) next
    printf "check-layers: %s (%s) calls %s, defined in %s, which is not below it\n", $1, $3, $2, owner
    bad = 1
}
END { exit bad }
' "$tmp/deps" "$tmp/defs" "$tmp/uses"
echo "check-layers: $(wc -l <"$tmp/deps") layers, $(wc -l <"$tmp/uses") uses checked"
