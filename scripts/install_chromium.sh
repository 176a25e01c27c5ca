#!/usr/bin/env bash
# Debian Chromium + chromium-driver for the end-to-end browser tests.
# Idempotent: does nothing when /usr/bin/chromium exists. Never lets a tool download its own
# browser: Playwright is pointed at /usr/bin/chromium by the tests.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present) at /usr/bin/chromium"
    exit 0
fi

bash "$(dirname "$0")/apt_install.sh" chromium chromium-driver
/usr/bin/chromium --version
