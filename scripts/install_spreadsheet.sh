#!/usr/bin/env bash
# Debian's LibreOffice Calc without a GUI, for the export-safety test that opens an exported
# CSV in a real spreadsheet (tests/data/test_export_safety.py: no cell may become a formula).
# Idempotent: does nothing when soffice is on PATH.
set -euo pipefail

if command -v soffice >/dev/null 2>&1; then
    echo "soffice: present at $(command -v soffice)"
    exit 0
fi

bash "$(dirname "$0")/apt_install.sh" libreoffice-calc-nogui
command -v soffice
