#!/usr/bin/env bash
# Measures gpulint's wall time from process start to exit on one small
# file, over N runs, and prints the median and the spread. Usage:
#   bench/startup.sh [N] [FILE]
# Default: 31 runs on examples/deepspeed/fp32-full-finetune/ds_config.json.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-31}
file=${2:-examples/deepspeed/fp32-full-finetune/ds_config.json}
bin=$(mktemp -d)/gpulint
CGO_ENABLED=0 go build -o "$bin" ./cmd/gpulint # static, as shipped (README)

cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export GPULINT_CACHE_DIR=$cache

run_ms() { # prints one run's wall time in milliseconds
  local t0 t1
  t0=$EPOCHREALTIME
  "$bin" lint --fail-on never "$@" >/dev/null
  t1=$EPOCHREALTIME
  echo "($t1 - $t0) * 1000" | bc -l
}

report() { # label: reads times on stdin
  sort -n | awk -v n="$n" -v f="$file" -v label="$1" '
    { v[NR] = $1 }
    END {
      med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "gpulint lint %s (%s): median %.1f ms, min %.1f ms, max %.1f ms over %d runs\n", f, label, med, v[1], v[n], n
    }'
}

"$bin" lint --fail-on never "$file" >/dev/null # warm the page cache and the result cache
for _ in $(seq "$n"); do run_ms --no-cache "$file"; done | report "no cache"
for _ in $(seq "$n"); do run_ms "$file"; done | report "warm result cache"
