#!/bin/sh
# `lightmetal --version` names the project version (CMakeLists.txt).
# Usage: check_version.sh LIGHTMETAL VERSION
set -eu
out=$("$1" --version)
got=$(echo "$out" | awk 'NR == 1 {print $2}')
if [ "$got" != "$2" ]; then
    echo "check_version: '$out' does not name version $2" >&2
    exit 1
fi
echo "check_version: $out"
