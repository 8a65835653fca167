#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests (rules against their
# fixtures, the explorer against its unreduced oracle and against SPIN, the
# server over stdio), the Neovim and VS Code clients against the server, then
# every fixture kernel compiled with nvidia-cutlass-dsl, the SARIF output of
# every fixture validated against the SARIF 2.1.0 schema, and the picture of a
# trace loaded in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

export CUTE_LSP_REQUIRE_SPIN="${CUTE_LSP_REQUIRE_SPIN:-1}"
cargo test --release --locked --workspace
# The benchmarks BENCHMARKS.md runs keep building (they are not run here).
cargo build --release --locked --workspace --benches

if [ ! -x .venv/bin/python ]; then
  echo "test: .venv is missing; run scripts/setup.sh first" >&2
  exit 2
fi

# The editor clients end to end, against the release binary built above: the
# Neovim configuration in a headless Neovim 0.11, and the VS Code extension
# (its settings and its server round trip through the language client's
# protocol layer).
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
binary="$target_dir/release/cute-lsp"
if [ ! -x .venv/bin/nvim ]; then
  echo "test: .venv/bin/nvim is missing; run scripts/setup.sh first" >&2
  exit 2
fi
nvim_home="$target_dir/nvim-test"
mkdir -p "$nvim_home"
XDG_STATE_HOME="$nvim_home/state" XDG_DATA_HOME="$nvim_home/data" XDG_CACHE_HOME="$nvim_home/cache" \
  timeout 300 .venv/bin/nvim --clean --headless -l editors/nvim/test/roundtrip.lua "$binary"
if [ ! -d editors/vscode/node_modules ]; then
  echo "test: editors/vscode/node_modules is missing; run scripts/setup.sh first (npm ci)" >&2
  exit 2
fi
(cd editors/vscode && CUTE_LSP_BINARY="$binary" timeout 300 node --test test/*.test.js)

.venv/bin/python tests/python/compile_fixtures.py

# Every quick fix offered on the fixtures, applied alone, still compiles.
.venv/bin/python tests/python/compile_fixed_fixtures.py --binary "$binary"

# The SARIF output of every fixture against the SARIF 2.1.0 JSON schema.
.venv/bin/python tests/python/validate_sarif.py --binary "$binary"

# The page `cute-lsp trace` draws, loaded in headless Chromium: screenshot and
# DOM against the trace of the same finding. As root, setup.sh installs
# Chromium, so its absence is a failure there.
if [ "$(id -u)" = 0 ]; then
  export CUTE_LSP_REQUIRE_CHROMIUM="${CUTE_LSP_REQUIRE_CHROMIUM:-1}"
fi
.venv/bin/python tests/python/trace_in_browser.py --binary "$binary"

# The pre-commit hook, run by the real pre-commit on a temporary repository.
.venv/bin/python tests/python/pre_commit_hook.py "$binary"

# The signatures the linter's API table is checked against must be those of
# the installed package.
.venv/bin/python tests/python/api_surface.py > /dev/null
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git diff --exit-code --stat -- tests/python/api_surface.json \
    || { echo "test: nvidia-cutlass-dsl's signatures changed; review tests/python/api_surface.json" >&2; exit 1; }
fi
echo "api-surface: 1 passed, 0 failed"
