#!/bin/sh
# Tests of examples/minimal_replay, run by ctest:
#   test_minimal_replay.sh MINIMAL_REPLAY MAKE_SAMPLES WORKDIR
# The report line goes to stdout only when the workload ran (pass or golden
# mismatch); any other failure is one clean line on stderr and nothing on
# stdout, with the exit codes of `lightmetal run` (0 pass, 1 golden mismatch,
# 2 usage, invalid file or no device, 3 device fault).

LM=$1
MAKE_SAMPLES=$2
W=$3

rm -rf "$W" && mkdir -p "$W" || exit 1
if ! "$MAKE_SAMPLES" "$W"; then
    echo "FAIL make_samples"
    exit 1
fi

. "$(dirname "$0")/check_lib.sh"

# expect_report NAME CODE WORDS FILE: exit CODE, one report line on stdout
# with WORDS, nothing on stderr.
expect_report() {
    name=$1
    code=$2
    words=$3
    lm "$4"
    if [ "$rc" -ne "$code" ]; then
        fail "$name" "exit $rc, expected $code: $(cat "$W/err")"
    elif [ -s "$W/err" ]; then
        fail "$name" "unexpected stderr: $(cat "$W/err")"
    elif [ "$(wc -l <"$W/out")" -ne 1 ] || ! grep -qF -- "$words" "$W/out"; then
        fail "$name" "stdout is not one line with '$words': $(cat "$W/out")"
    else
        pass "$name"
    fi
}

# expect_error NAME CODE WORDS ARGS...: exit CODE, nothing on stdout, exactly
# one line on stderr containing WORDS.
expect_error() {
    name=$1
    code=$2
    words=$3
    shift 3
    lm "$@"
    if [ "$rc" -ne "$code" ]; then
        fail "$name" "exit $rc, expected $code: $(cat "$W/err")"
    elif [ -s "$W/out" ]; then
        fail "$name" "unexpected stdout: $(cat "$W/out")"
    elif [ "$(wc -l <"$W/err")" -ne 1 ] || ! grep -qF -- "$words" "$W/err"; then
        fail "$name" "stderr is not one line with '$words': $(cat "$W/err")"
    else
        pass "$name"
    fi
}

expect_report pass 0 "4 commands, 0 programs, 1 goldens checked in" "$W/copy.lmb"
expect_report pass_word 0 ": PASS" "$W/copy.lmb"
expect_report mismatch 1 "golden mismatch" "$W/mismatch.lmb"
# lm_replay_run fails before running anything (no device for this binary):
# there is no report to print.
expect_error no_device 2 "lm_replay_run: lm_device_open: options.l1_size = 1000" "$W/nodevice.lmb"
expect_error device_fault 3 "lm_replay_run: command" "$W/valid.lmb"
expect_error invalid_file 2 "invalid binary" "$W/truncated.lmb"
expect_error missing_file 2 "cannot open" "$W/missing.lmb"
expect_error usage 2 "usage:"

check_summary
