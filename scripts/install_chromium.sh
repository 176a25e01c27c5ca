#!/usr/bin/env bash
# Debian Chromium + chromium-driver for the end-to-end browser tests.
# Idempotent: does nothing when /usr/bin/chromium exists. Never lets a tool download its own
# browser: Playwright is pointed at /usr/bin/chromium by the tests.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present) at /usr/bin/chromium"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium: /usr/bin/chromium is missing and apt-get is not available;" >&2
    echo "install the Debian packages 'chromium' and 'chromium-driver' by hand." >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install_chromium: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium chromium-driver
/usr/bin/chromium --version
