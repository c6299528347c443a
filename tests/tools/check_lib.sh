# Shared by the tools' shell tests (sourced). The script sets W (its work
# directory) and LM (the program under test) first. Every check prints PASS
# or FAIL; check_summary ends the script, failing when any check failed.

failures=0

pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

# Runs $LM with the given arguments; output in $W/out and $W/err, status in rc.
lm() {
    "$LM" "$@" >"$W/out" 2>"$W/err"
    rc=$?
}

# expect_ok NAME WORDS ARGS...: exit 0, nothing on stderr, WORDS on stdout.
expect_ok() {
    name=$1
    words=$2
    shift 2
    lm "$@"
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit $rc, expected 0: $(cat "$W/err")"
    elif [ -s "$W/err" ]; then
        fail "$name" "unexpected stderr: $(cat "$W/err")"
    elif ! grep -qF -- "$words" "$W/out"; then
        fail "$name" "stdout lacks '$words': $(head -c 400 "$W/out")"
    else
        pass "$name"
    fi
}

# expect_error NAME CODE WORDS ARGS...: exit CODE and exactly one line on
# stderr containing WORDS.
expect_error() {
    name=$1
    code=$2
    words=$3
    shift 3
    lm "$@"
    lines=$(wc -l <"$W/err")
    if [ "$rc" -ne "$code" ]; then
        fail "$name" "exit $rc, expected $code: $(cat "$W/err")"
    elif [ "$lines" -ne 1 ]; then
        fail "$name" "stderr has $lines lines, expected 1: $(cat "$W/err")"
    elif ! grep -qF -- "$words" "$W/err"; then
        fail "$name" "stderr lacks '$words': $(cat "$W/err")"
    else
        pass "$name"
    fi
}

check_summary() {
    echo "$failures check(s) failed"
    [ "$failures" -eq 0 ]
}
