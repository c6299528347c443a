#!/bin/sh
# Live run with capture, then replay in a separate process: the replay checks
# the goldens recorded live, so success means bit-identical outputs.
# Usage: roundtrip.sh EXAMPLE LIGHTMETAL FILE
set -eu
example=$1 lightmetal=$2 file=$3
rm -f "$file"
"$example" --capture "$file" >/dev/null
"$lightmetal" run "$file" >/dev/null
"$lightmetal" verify "$file" >/dev/null
rm -f "$file"
echo "PASS $(basename "$example") replayed bit-identically"
