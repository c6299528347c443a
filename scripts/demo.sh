#!/bin/sh
# The main job. Runs the project's demonstration programs in BUILD/bin/examples.
set -eu
build=${1:-build}
for ex in "$build"/examples/*; do
    [ -f "$ex" ] && [ -x "$ex" ] || continue
    echo "== $(basename "$ex")"
    "$ex"
done
