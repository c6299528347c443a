#!/bin/sh
# make demo: the main job. Runs the Fashion-MNIST MLP live on the simulated
# device while capturing it to a Light Metal binary, then replays that binary
# in a separate process (no compiler, goldens checked bit for bit) and prints
# the accuracy, the file size and both timings.
set -eu
build=${1:-build}
out="$build/demo"
mkdir -p "$out"
binary="$out/mlp.lmb"
replayer="$build/bin/lightmetal"

now() { date +%s.%N; }

echo "== live run with capture ($binary)"
t0=$(now)
"$build/examples/mlp_fashion_mnist" --capture "$binary" | tee "$out/live.txt"
t1=$(now)

echo "== replay in a separate process"
t2=$(now)
if [ -x "$replayer" ]; then
    "$replayer" run "$binary" | tee "$out/replay.txt"
else
    "$build/examples/minimal_replay" "$binary" | tee "$out/replay.txt"
fi
t3=$(now)

accuracy=$(sed -n 's/^accuracy on [0-9]* test images: device \([0-9.]*\) %.*/\1/p' "$out/live.txt")
size=$(wc -c <"$binary")
echo "== summary"
awk -v acc="$accuracy" -v size="$size" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v t3="$t3" 'BEGIN {
    live = t1 - t0; replay = t3 - t2
    printf "accuracy (device, and bit-identical on replay): %s %%\n", acc
    printf "Light Metal binary: %.1f MiB\n", size / 1048576
    printf "live run (whole process: data, host reference, device inference, capture): %.2f s\n", live
    printf "replay (whole process: open, verify, run, goldens): %.2f s\n", replay
}'
