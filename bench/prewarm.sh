#!/usr/bin/env bash
# Measures what start-up pre-warming saves: gpulint built as shipped against
# a build with it off (-tags noprewarm), run in turns on the same files, N
# runs each, without the result cache. Prints each build's median wall time.
# Usage: bench/prewarm.sh [N] [FILE...]
# Default: 101 runs on one DeepSpeed config, then on a three-file commit.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-101}
shift || true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -o "$dir/on" ./cmd/gpulint
CGO_ENABLED=0 go build -tags noprewarm -o "$dir/off" ./cmd/gpulint

measure() { # files...: prints "on|off median"
  for _ in $(seq "$n"); do
    for b in on off; do
      t0=$EPOCHREALTIME
      "$dir/$b" lint --no-cache --fail-on never "$@" >/dev/null 2>&1
      t1=$EPOCHREALTIME
      echo "$b $(echo "($t1 - $t0) * 1000" | bc -l)"
    done
  done | sort -k1,1 -k2,2n | awk -v n="$n" '
    { v[$1, ++c[$1]] = $2 }
    END { for (b in c) printf "  pre-warming %-3s median %.1f ms over %d runs\n", b, v[b, int((c[b] + 1) / 2)], c[b] }'
}

if [ $# -gt 0 ]; then
  echo "$*:"; measure "$@"
else
  one=examples/deepspeed/fp32-full-finetune/ds_config.json
  echo "$one:"; measure "$one"
  three=("$one" examples/kubernetes/clean/*.yaml examples/accelerate/bf16-clean/*.yaml)
  echo "${three[*]}:"; measure "${three[@]}"
fi
