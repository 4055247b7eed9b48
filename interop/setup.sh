#!/usr/bin/env bash
# Installs the pinned interop peers (crates/mcp-client/tests/interop.rs runs this once per
# test binary): the TypeScript SDK server from package-lock.json into node_modules/, and
# the Python SDK from requirements.txt into .venv/. Idempotent; a no-op when up to date.
set -euo pipefail
cd "$(dirname "$0")"

# npm ci when node_modules is missing or older than the lockfile.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund
    touch node_modules/.package-lock.json
fi

# A venv with the pinned requirements; reinstalled when requirements.txt changes.
python="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]] || ! cmp -s requirements.txt .venv/.requirements.installed; then
    rm -rf .venv
    "$python" -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
    cp requirements.txt .venv/.requirements.installed
fi
