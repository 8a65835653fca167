#!/usr/bin/env bash
# Check one Promela model with SPIN the way the seed article does, and print
# one line of key=value pairs for the benchmark table:
#
#   spin -a MODEL.pml && cc -O2 -o pan pan.c && ./pan -a
#
# Usage: scripts/bench_spin.sh MODEL.pml [TIMEOUT_SECONDS]
#   TIMEOUT_SECONDS bounds the whole run (spin + cc + pan), default 300.
#   CC_FLAGS and PAN_FLAGS override the compiler and verifier flags
#   (defaults: "-O2 -DVECTORSZ=4096" and "-a -m1000000").
#
# Output keys: status (ok, timeout, error), errors, verdict (clean, deadlock,
# hazard, -), states (stored), transitions, depth, spin_s, cc_s, pan_s,
# wall_s (all three), pan_mem_mb (pan's own report), rss_mb (peak resident
# set of pan), reason (on error).
set -uo pipefail

model=${1:?usage: bench_spin.sh MODEL.pml [TIMEOUT_SECONDS]}
limit=${2:-300}
cc_flags=${CC_FLAGS:-"-O2 -DVECTORSZ=4096"}
pan_flags=${PAN_FLAGS:-"-a -m1000000"}

for tool in spin cc timeout; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "status=error reason=${tool}_not_found"
    exit 0
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-spin.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/model.pml"
cd "$work" || exit 1

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
remaining() { awk -v s="$start" -v n="$(now)" -v l="$limit" 'BEGIN { r = l - (n - s); printf "%d", (r < 1 ? 1 : r) }'; }

start=$(now)
if ! timeout "$limit" spin -a model.pml >spin.out 2>&1; then
  echo "status=error reason=spin_failed $(tail -1 spin.out | tr ' =' '__')"
  exit 0
fi
t1=$(now)
# shellcheck disable=SC2086
timeout "$(remaining)" cc $cc_flags -o pan pan.c >cc.out 2>&1
rc=$?
if [ "$rc" = 124 ]; then
  echo "status=timeout limit_s=$limit states_so_far=- wall_s=$(elapsed "$start" "$(now)") reason=cc_timed_out"
  exit 0
elif [ "$rc" != 0 ]; then
  echo "status=error reason=cc_failed"
  exit 0
fi
t2=$(now)

timer=()
if [ -x /usr/bin/time ]; then
  timer=(/usr/bin/time -f "%M" -o rss.out)
fi
# shellcheck disable=SC2086
timeout "$(remaining)" "${timer[@]}" ./pan $pan_flags >pan.out 2>&1
rc=$?
t3=$(now)

spin_s=$(elapsed "$start" "$t1")
cc_s=$(elapsed "$t1" "$t2")
pan_s=$(elapsed "$t2" "$t3")
wall_s=$(elapsed "$start" "$t3")
rss_mb=-
if [ -s rss.out ]; then
  rss_mb=$(awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }' rss.out)
fi

if [ "$rc" = 124 ]; then
  # pan prints a progress line every million states:
  #   Depth=     232 States=    1e+06 Transitions= 1.25e+07 Memory=   245.581 t= 3.38 R=   3e+05
  last=$(grep 'States=' pan.out | tail -1)
  states=$(echo "$last" | sed -n 's/.*States= *\([0-9.e+]*\).*/\1/p')
  memory=$(echo "$last" | sed -n 's/.*Memory= *\([0-9.]*\).*/\1/p')
  echo "status=timeout limit_s=$limit states_so_far=${states:--} pan_mem_mb=${memory:--} spin_s=$spin_s cc_s=$cc_s pan_s=$pan_s wall_s=$wall_s rss_mb=$rss_mb"
  exit 0
fi

errors=$(grep -o 'errors: [0-9]*' pan.out | awk '{ print $2 }' | tail -1)
if [ -z "$errors" ]; then
  reason=$(grep -m1 -E 'error|pan:' pan.out | tr ' =' '__' | cut -c1-80)
  echo "status=error reason=${reason:-no_errors_line} spin_s=$spin_s cc_s=$cc_s pan_s=$pan_s wall_s=$wall_s rss_mb=$rss_mb"
  exit 0
fi
verdict=clean
if grep -q 'acceptance cycle' pan.out; then
  verdict=deadlock
elif grep -q 'assertion violated' pan.out; then
  verdict=hazard
elif [ "$errors" != 0 ]; then
  verdict=-
fi
if grep -q 'max search depth too small' pan.out; then
  verdict="${verdict}(depth_truncated)"
fi
states=$(awk '/states, stored/ { print $1; exit }' pan.out)
transitions=$(awk '/transitions \(=/ { print $1; exit }' pan.out)
depth=$(grep -o 'depth reached [0-9]*' pan.out | awk '{ print $3 }')
pan_mem=$(awk '/total actual memory usage/ { print $1; exit }' pan.out)
echo "status=ok errors=$errors verdict=$verdict states=${states:--} transitions=${transitions:--} depth=${depth:--}" \
  "spin_s=$spin_s cc_s=$cc_s pan_s=$pan_s wall_s=$wall_s pan_mem_mb=${pan_mem:--} rss_mb=$rss_mb"
