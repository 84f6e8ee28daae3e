#!/usr/bin/env bash
# Set up (venv + Debian chromium for the browser tests) and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "chromium is missing and apt-get is not available: browser tests will be skipped" >&2
  fi
fi
# nginx for the multi-replica tests (tests/test_deploy.py; deploy/run-replicas.sh).
if ! command -v nginx >/dev/null 2>&1 && ! [ -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
  else
    echo "nginx is missing and apt-get is not available: the live deploy tests will be skipped" >&2
  fi
fi
scripts/setup.sh dev
.venv/bin/hadolint Dockerfile
export STREAMLIT_BROWSER_GATHER_USAGE_STATS=false STREAMLIT_SERVER_HEADLESS=true
exec .venv/bin/python -m pytest -q "$@"
