#!/bin/sh
# Live run with capture, then replay in separate processes at 1, 2 and 8
# simulator threads: every replay checks the goldens recorded live, bit for
# bit, so success means outputs identical to the live run's whatever the
# thread count.
# Usage: roundtrip.sh EXAMPLE LIGHTMETAL FILE [--no-golden]
# (--no-golden: the example has no output to compare, e.g. it only prints)
set -eu
example=$1 lightmetal=$2 file=$3 goldens=${4:-}
rm -f "$file"
"$example" --capture "$file" >/dev/null
"$lightmetal" verify "$file" >/dev/null
if [ "$goldens" != --no-golden ] && ! "$lightmetal" info "$file" | grep -q CompareToGolden; then
    echo "FAIL $(basename "$example"): the capture has no golden to compare with" >&2
    exit 1
fi
for threads in 1 2 8; do
    "$lightmetal" run "$file" --threads "$threads" >/dev/null
done
rm -f "$file"
echo "PASS $(basename "$example") replayed bit-identically at 1, 2 and 8 threads"
