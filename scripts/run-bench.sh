#!/bin/sh
# Runs every benchmark binary in BUILD/bench, prints their `name: value` lines
# and collects them into BUILD/bench.json.
set -eu
build=${1:-build}
out="$build/bench.json"
tmp="$build/bench.txt"
: >"$tmp"
status=0
for b in "$build"/bench/*; do
    [ -f "$b" ] && [ -x "$b" ] || continue
    if ! "$b" | tee -a "$tmp"; then
        echo "bench: $(basename "$b") failed" >&2
        status=1
    fi
done
# Figures that come from an example rather than a benchmark binary.
if [ -x "$build/examples/mlp_fashion_mnist" ]; then
    "$build/examples/mlp_fashion_mnist" --bench | grep -E '^[a-z0-9_]+: ' | tee -a "$tmp" || status=1
fi
# onnx_node_tests_passed: ONNX's node tests run afresh through the conformance
# program (under a minute once kernels are cached; a count read from an
# earlier run's table could be stale or from another build).
if [ -x "$build/tests/onnx_conformance" ]; then
    "$build/tests/onnx_conformance" --filter node/ --jobs "$(nproc 2>/dev/null || echo 2)" \
        | grep -E '^onnx_node_tests_passed: ' | tee -a "$tmp" || status=1
else
    echo "bench: $build/tests/onnx_conformance not built: no onnx_node_tests_passed" >&2
fi
# name: value lines -> one JSON object; values are numbers or quoted strings.
awk -F': ' 'BEGIN { printf "{" }
    NF >= 2 && $1 ~ /^[a-z0-9_]+$/ {
        v = substr($0, length($1) + 3)
        if (v !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { gsub(/["\\]/, "\\\\&", v); v = "\"" v "\"" }
        printf "%s\n  \"%s\": %s", (n++ ? "," : ""), $1, v
    }
    END { print "\n}" }' "$tmp" >"$out"
echo "bench: wrote $out"
exit $status
