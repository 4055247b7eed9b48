#!/usr/bin/env bash
# Installs the pinned OpenID provider of the authorization end-to-end test
# (crates/mcp-server/tests/oidc/main.rs runs this once per test binary): oidc-provider and
# the Node.js 22 it supports, from package-lock.json into node_modules/ (git-ignored), with
# no install scripts. Idempotent; a no-op when up to date.
set -euo pipefail
cd "$(dirname "$0")"

if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --ignore-scripts --no-audit --no-fund
    touch node_modules/.package-lock.json
fi
