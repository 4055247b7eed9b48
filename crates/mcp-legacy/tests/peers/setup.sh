#!/usr/bin/env bash
# Installs the pinned legacy-only peers of the dual-era client tests
# (crates/mcp-legacy/tests/client_*.rs run this once per test binary): the reference
# server `@modelcontextprotocol/server-everything` from package-lock.json into
# node_modules/ (git-ignored). The Python SDK (mcp 2.3.0) comes from interop/setup.sh.
# Idempotent; a no-op when up to date.
set -euo pipefail
cd "$(dirname "$0")"

if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund
    touch node_modules/.package-lock.json
fi
bash ../../../../interop/setup.sh
