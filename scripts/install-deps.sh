#!/bin/sh
# Installs the Debian packages listed in scripts/debian-packages.txt that are not
# installed yet. Quiet and fast when everything is present, so every make target
# can call it. Needs root or sudo only when something is missing.
set -eu
here=$(dirname "$0")
list="$here/debian-packages.txt"
missing=""
for pkg in $(sed -e 's/#.*//' "$list"); do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing Debian packages:$missing"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=sudo
    else
        echo "install-deps: need root (or sudo) to install:$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists; refresh them only if needed.
if ! $sudo apt-get install -y -q --no-install-recommends $missing; then
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends $missing
fi
