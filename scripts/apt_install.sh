#!/usr/bin/env bash
# Install Debian packages with apt-get, as root or through sudo (one `apt-get update` first).
# Exits 3 when apt-get or root/sudo is missing (callers decide whether that is fatal).
#
# usage: scripts/apt_install.sh PACKAGE...
set -euo pipefail

if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt_install: apt-get is not available; install $* by hand" >&2
    exit 3
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "apt_install: need root (or sudo) to apt-get install $*" >&2
        exit 3
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "$@" >/dev/null
