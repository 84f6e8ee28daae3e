#!/usr/bin/env bash
# Create .venv with the pinned dependencies (idempotent). Usage: scripts/setup.sh [dev]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if ! [ -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    # Debian ships venv separately (python3-venv); install it when we can.
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    "$PY" -m venv .venv
  fi
fi
req=requirements.txt
[ "${1:-}" = dev ] && req=requirements-dev.txt
.venv/bin/python -m pip install -q --disable-pip-version-check -r "$req"
