#!/usr/bin/env bash
# HAProxy (Debian's package) for `serve --workers K` and `loadtest --workers K`: installed with
# apt-get when missing (scripts/apt_install.sh). Exits 0 when haproxy is on PATH afterwards.
set -euo pipefail
if command -v haproxy >/dev/null 2>&1; then
    exit 0
fi
echo "install_proxy: installing Debian's haproxy" >&2
bash "$(dirname "$0")/apt_install.sh" haproxy
