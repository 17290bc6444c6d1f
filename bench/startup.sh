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
go build -o "$bin" ./cmd/gpulint

run_ms() { # prints one run's wall time in milliseconds
  local t0 t1
  t0=$EPOCHREALTIME
  "$bin" lint --fail-on never "$@" >/dev/null
  t1=$EPOCHREALTIME
  echo "($t1 - $t0) * 1000" | bc -l
}

"$bin" lint --fail-on never "$file" >/dev/null # warm the page cache
times=()
for _ in $(seq "$n"); do times+=("$(run_ms "$file")"); done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$n" -v f="$file" '
  { v[NR] = $1 }
  END {
    med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf "gpulint lint %s: median %.1f ms, min %.1f ms, max %.1f ms over %d runs\n", f, med, v[1], v[n], n
  }'
