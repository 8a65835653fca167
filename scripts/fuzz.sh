#!/usr/bin/env bash
# Coverage-guided fuzzing of cute-lsp's path from text to diagnostics, with
# cargo-fuzz (libFuzzer) on nightly. The targets are in fuzz/fuzz_targets:
#   parse_lower  parse, lower with recovery, slice every kernel, resolve launches
#   analyze      the whole-file analysis with small budgets
#   edits        a salsa database along random edits, compared after each with
#                the whole-file analysis (a difference is a "divergence")
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 60, all)
#
# Each target starts from the fixtures and corpus kernels (tests/fixtures,
# tests/corpus) and its saved regressions, copied into fuzz/corpus/<target>/,
# and runs for SECONDS_PER_TARGET with -timeout=10 (an input still running
# after 10 s is a hang: every analysis has a budget far below that) and
# -rss_limit_mb=2048, in libFuzzer's fork mode so that a crash does not end
# the run. At the end it prints, per target and in total, the executions, the
# crashes, the hangs (timeouts) and the divergences of `edits`, read from
# libFuzzer's output and the artifacts it wrote (fuzz/artifacts/<target>/).
# New crashers are minimised (`cargo fuzz tmin`) into fuzz/regressions/<target>/,
# which crates/cute-lint/tests/fuzz_replay.rs replays on stable Rust.
#
# Environment: FUZZ_SANITIZER (default none; "address" builds with ASan, which
# is slower and needs more stack), FUZZ_MINIMIZE=0 to keep crashers as found,
# FUZZ_MAX_MINIMIZE (default 5) crashers minimised per target.
set -uo pipefail

secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(parse_lower analyze edits)
fi
sanitizer=${FUZZ_SANITIZER:-none}
minimize=${FUZZ_MINIMIZE:-1}
max_minimize=${FUZZ_MAX_MINIMIZE:-5}
case "$secs" in
    ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: a nightly toolchain is needed (rustup toolchain install nightly)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is missing; install it from crates.io with: cargo install cargo-fuzz --locked" >&2
    exit 2
fi

echo "== building the fuzz targets (cargo +nightly fuzz build, sanitizer: $sanitizer)"
cargo +nightly fuzz build -s "$sanitizer" || exit 1
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin_dir="fuzz/target/$triple/release"

logs=fuzz/artifacts/logs
mkdir -p "$logs"
stamp=$(date +%Y%m%d-%H%M%S)
divergence_marker="divergence between the database and analyze_text"

declare -A execs crashes hangs divergences ooms regressions
for t in "${targets[@]}"; do
    corpus=fuzz/corpus/$t
    artifacts=fuzz/artifacts/$t
    mkdir -p "$corpus" "$artifacts" "fuzz/regressions/$t"
    # Seeds: every fixture and corpus kernel, and the saved regressions.
    while IFS= read -r -d '' f; do
        name=$(echo "${f#tests/}" | tr '/' '_')
        cp "$f" "$corpus/seed-$name"
    done < <(find tests/fixtures tests/corpus -name '*.py' -print0)
    for f in "fuzz/regressions/$t"/*; do
        [ -f "$f" ] && cp "$f" "$corpus/regression-$(basename "$f")"
    done
    before=$(mktemp)
    ls "$artifacts" >"$before" 2>/dev/null

    log=$logs/$t-$stamp.log
    echo "== $t: ${secs}s (log: $log)"
    cargo +nightly fuzz run -s "$sanitizer" "$t" "$corpus" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -dict=fuzz/cute.dict -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    grep -E '^#[0-9]+' "$log" | tail -n 1
    [ $status -ne 0 ] && echo "   (libFuzzer exited with $status)"

    # Executions: the final stats if printed, else the last status line.
    n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    if [ -z "$n" ]; then
        n=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    fi
    execs[$t]=${n:-0}

    new=$(ls "$artifacts" 2>/dev/null | grep -vxF -f "$before" || true)
    rm -f "$before"
    crashes[$t]=0 hangs[$t]=0 divergences[$t]=0 ooms[$t]=0 regressions[$t]=0
    minimized=0
    for a in $new; do
        path=$artifacts/$a
        case "$a" in
            timeout-*) hangs[$t]=$((hangs[$t] + 1)); echo "   hang: $path"; continue ;;
            oom-*) ooms[$t]=$((ooms[$t] + 1)); echo "   out of memory: $path"; continue ;;
            crash-*) ;;
            *) continue ;;
        esac
        kind=crash
        if [ "$t" = edits ] && timeout 60 "$bin_dir/$t" "$path" 2>&1 | grep -qF "$divergence_marker"; then
            kind=divergence
            divergences[$t]=$((divergences[$t] + 1))
        else
            crashes[$t]=$((crashes[$t] + 1))
        fi
        echo "   $kind: $path"
        if [ "$minimize" = 1 ] && [ $minimized -lt "$max_minimize" ]; then
            minimized=$((minimized + 1))
            out=$(timeout 600 cargo +nightly fuzz tmin -s "$sanitizer" -r 255 "$t" "$path" -- -timeout=10 -rss_limit_mb=2048 2>&1)
            small=$(echo "$out" | sed -n 's/.*Minimized artifact:[[:space:]]*//p' | tail -n 1)
            [ -f "$small" ] || small=$path
            dest=fuzz/regressions/$t/$kind-$(sha1sum "$small" | cut -c1-16)
            if [ ! -e "$dest" ]; then
                cp "$small" "$dest"
                regressions[$t]=$((regressions[$t] + 1))
                echo "   minimised ($(wc -c <"$small") bytes) -> $dest"
            fi
        fi
    done
done

te=0 tc=0 th=0 td=0 to=0 tr=0
for t in "${targets[@]}"; do
    te=$((te + execs[$t])) tc=$((tc + crashes[$t])) th=$((th + hangs[$t]))
    td=$((td + divergences[$t])) to=$((to + ooms[$t])) tr=$((tr + regressions[$t]))
done
row() { printf '%-12s %12s %8s %8s %12s %6s %12s\n' "$@"; }
summary=$logs/summary-$stamp.txt
{
    echo
    echo "== fuzz summary (${secs}s per target, sanitizer: $sanitizer)"
    row target executions crashes hangs divergences ooms regressions
    for t in "${targets[@]}"; do
        row "$t" "${execs[$t]}" "${crashes[$t]}" "${hangs[$t]}" "${divergences[$t]}" "${ooms[$t]}" "${regressions[$t]}"
    done
    row total "$te" "$tc" "$th" "$td" "$to" "$tr"
} | tee "$summary"
if [ $((tc + th + td + to)) -gt 0 ]; then
    echo "Crashers minimised into fuzz/regressions/ (hangs and ooms stay in fuzz/artifacts/); replay with:"
    echo "  cargo test --release -p cute-lint --test fuzz_replay"
    exit 1
fi
