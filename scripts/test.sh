#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests (rules against their
# fixtures, the explorer against its unreduced oracle and against SPIN, the
# server over stdio), then every fixture kernel compiled with nvidia-cutlass-dsl.
set -euo pipefail
cd "$(dirname "$0")/.."

export CUTE_LSP_REQUIRE_SPIN="${CUTE_LSP_REQUIRE_SPIN:-1}"
cargo test --release --locked --workspace

if [ ! -x .venv/bin/python ]; then
  echo "test: .venv is missing; run scripts/setup.sh first" >&2
  exit 2
fi
.venv/bin/python tests/python/compile_fixtures.py

# The signatures the linter's API table is checked against must be those of
# the installed package.
.venv/bin/python tests/python/api_surface.py > /dev/null
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git diff --exit-code --stat -- tests/python/api_surface.json \
    || { echo "test: nvidia-cutlass-dsl's signatures changed; review tests/python/api_surface.json" >&2; exit 1; }
fi
echo "api-surface: 1 passed, 0 failed"
