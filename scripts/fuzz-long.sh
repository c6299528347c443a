#!/bin/sh
# Long libFuzzer sessions over every fuzz target of a fuzz build (make fuzz-long).
#
#   scripts/fuzz-long.sh BUILD
#
# BUILD is a build configured with LM_FUZZ_INSTRUMENT=ON and its `fuzzers`
# target built; BUILD/fuzzers/ describes each target (binary, committed
# corpus, largest input). Each target runs for FUZZ_SECONDS seconds (default
# 600) in FUZZ_JOBS processes (default 1), one target after the other, seeded
# from its committed corpus. An input running longer than FUZZ_TIMEOUT
# seconds (default 30) counts as a hang. FUZZ_TARGETS (space-separated names)
# limits the run to some targets.
#
# Written under BUILD/fuzz-long/: crashes/ (crash-, leak-, timeout- and oom-
# inputs, prefixed with the target's name; kept across sessions), <target>/
# corpus (inputs found, kept: later sessions start from them) and
# <target>/logs (libFuzzer's output of the last session). Prints a summary per
# target (executions, coverage, new inputs, findings); exits 1 when any target
# found a crash, hang, leak or sanitizer report.
set -eu

if [ $# -ne 1 ] || [ ! -d "$1/fuzzers" ]; then
    echo "usage: $0 BUILD  (a build with LM_FUZZ_INSTRUMENT=ON and the fuzzers target built)" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
seconds=${FUZZ_SECONDS:-600}
jobs=${FUZZ_JOBS:-1}
timeout=${FUZZ_TIMEOUT:-30}
out=$build/fuzz-long
crashes=$out/crashes
mkdir -p "$crashes"
targets=${FUZZ_TARGETS:-$(ls "$build/fuzzers")}

summary=$out/summary.txt
: >"$summary"
total=0
bad=0
for name in $targets; do
    desc=$build/fuzzers/$name
    if [ ! -f "$desc" ]; then
        echo "fuzz-long: no fuzz target '$name' in $build/fuzzers" >&2
        exit 2
    fi
    binary='' corpus='' max_len=''
    . "$desc"
    work=$out/$name
    rm -rf "$work/logs"
    mkdir -p "$work/corpus" "$work/logs"
    stamp=$work/logs/.start
    : >"$stamp"
    echo "fuzz-long: $name for ${seconds} s ($jobs job(s))"
    # With -jobs, libFuzzer writes each job's output to fuzz-<job>.log in the
    # current directory. A failing job is a finding, reported below.
    (cd "$work/logs" && "$binary" -jobs="$jobs" -workers="$jobs" -max_total_time="$seconds" \
        -timeout="$timeout" -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="$crashes/$name-" "$work/corpus" "$corpus" >driver.log 2>&1) || true

    # Per job: executions from the final stats (or the last status line if a
    # job died without them), coverage at start and at the end.
    stats=$(awk '
        FNR == 1 { if (NR > 1) flush(); execs = last = 0; start = end = -1 }
        /^stat::number_of_executed_units:/ { execs = $2 }
        /^stat::new_units_added:/ { units += $2 }
        /^#[0-9]+/ {
            n = substr($1, 2) + 0; if (n > last) last = n
            for (i = 2; i < NF; i++) if ($i == "cov:") { c = $(i + 1) + 0; if (start < 0) start = c; end = c }
        }
        function flush() {
            total += execs ? execs : last
            if (start >= 0 && (cov0 < 0 || start < cov0)) cov0 = start
            if (end > cov1) cov1 = end
        }
        BEGIN { cov0 = -1; cov1 = -1 }
        END { if (NR > 0) flush(); printf "%d %d %d %d\n", total, units, cov0, cov1 }
    ' "$work"/logs/fuzz-*.log 2>/dev/null || echo "0 0 -1 -1")
    set -- $stats
    execs=$1 units=$2 cov0=$3 cov1=$4
    found=$(find "$crashes" -name "$name-*" -newer "$stamp" | wc -l)
    reports=$(cat "$work"/logs/fuzz-*.log 2>/dev/null |
        grep -c -E '==[0-9]+== ?ERROR: |runtime error: ' || true)
    line=$(printf '%-12s executions %10d  coverage %5d -> %5d  new inputs %5d  crashes/hangs %d  sanitizer reports %d' \
        "$name" "$execs" "$cov0" "$cov1" "$units" "$found" "$reports")
    echo "$line" >>"$summary"
    total=$((total + execs))
    if [ "$found" -ne 0 ] || [ "$reports" -ne 0 ]; then bad=1; fi
done

echo
echo "fuzz-long summary: ${seconds} s per target, $jobs job(s) each, per-input timeout ${timeout} s"
cat "$summary"
echo "total executions: $total; findings: $([ $bad -eq 0 ] && echo none || echo "see $crashes and $out/*/logs")"
exit $bad
