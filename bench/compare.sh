#!/usr/bin/env bash
# gpulint against conftest (the policy-as-code tool a team would otherwise
# use), side by side on this machine. Installs the pinned conftest,
# generates a 1000-file corpus from testdata/corpus with values varied,
# and prints each target with its measured ratio:
#   one small file, start to exit:      <= 0.5x conftest, < 30 ms
#   1000 files, no cache:               <= 0.25x conftest wall, <= 0.5x its peak memory
#   1000 files again, warm cache:       <= 0.05x conftest
#   two workers vs one:                 >= 1.7x
# Usage: bench/compare.sh [RUNS]   (medians of RUNS runs, default 7)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
out=bench/out
mkdir -p "$out/bin"
export PATH="$PWD/$out/bin:$PATH"

CONFTEST_VERSION=v0.71.1
# Both tools are built the same way: static (CGO_ENABLED=0), as gpulint's
# Action builds it and its README recommends. A cgo build links libc
# dynamically and starts about 2 ms slower, for either tool
# (docs/performance.md).
export CGO_ENABLED=0
# go install leaves conftest's version string as "dev"; a stamp file records
# which version (and build) the binary was installed at.
stamp="$CONFTEST_VERSION static"
if [ "$(cat "$out/bin/conftest.version" 2>/dev/null)" != "$stamp" ] || [ ! -x "$out/bin/conftest" ]; then
  echo "installing conftest $CONFTEST_VERSION (a few minutes on 2 cores) ..." >&2
  GOBIN="$PWD/$out/bin" go install "github.com/open-policy-agent/conftest@$CONFTEST_VERSION"
  echo "$stamp" > "$out/bin/conftest.version"
fi
go build -o "$out/bin/gpulint" ./cmd/gpulint
go run ./bench/gencorpus -src testdata/corpus -n 1000 -out "$out/corpus1000"
small=examples/deepspeed/fp32-full-finetune/ds_config.json
policy=bench/conftest
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

# median of the first field over $runs runs of a command: wall seconds
# and peak RSS in KiB, from GNU time.
measure() { # label, command...
  local label=$1; shift
  local walls=() mems=()
  for _ in $(seq "$runs"); do
    local line tf
    tf=$(mktemp)
    # conftest exits 1 when a policy denies; only the timing matters here.
    /usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
    line=$(tail -1 "$tf"); rm -f "$tf"
    walls+=("${line% *}"); mems+=("${line#* }")
  done
  local w m
  w=$(printf '%s\n' "${walls[@]}" | sort -g | awk -v n="$runs" '{v[NR]=$1} END{print (n%2)?v[(n+1)/2]:(v[n/2]+v[n/2+1])/2}')
  m=$(printf '%s\n' "${mems[@]}" | sort -g | awk -v n="$runs" '{v[NR]=$1} END{print (n%2)?v[(n+1)/2]:(v[n/2]+v[n/2+1])/2}')
  printf '%s %s %s\n' "$label" "$w" "$m"
}

# Millisecond-resolution timing for the one-file case (GNU time rounds to
# 10 ms).
# Medians in ms of $runs runs each of gcmd and ccmd, taking turns.
paired_ms() {
  local gs=() cs=() t0
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME; "${gcmd[@]}" >/dev/null 2>&1 || true
    gs+=("$(echo "($EPOCHREALTIME - $t0) * 1000" | bc -l)")
    t0=$EPOCHREALTIME; "${ccmd[@]}" >/dev/null 2>&1 || true
    cs+=("$(echo "($EPOCHREALTIME - $t0) * 1000" | bc -l)")
  done
  local med='{v[NR]=$1} END{printf "%.1f", (n%2)?v[(n+1)/2]:(v[n/2]+v[n/2+1])/2}'
  printf '%s %s\n' "$(printf '%s\n' "${gs[@]}" | sort -g | awk -v n="$runs" "$med")" \
    "$(printf '%s\n' "${cs[@]}" | sort -g | awk -v n="$runs" "$med")"
}

ratio() { echo "scale=3; $1 / $2" | bc -l; }
verdict() { # value op limit
  if [ "$(echo "$1 $2 $3" | bc -l)" = 1 ]; then echo met; else echo MISSED; fi
}

echo "gpulint $(gpulint version | cut -d' ' -f2) vs conftest $CONFTEST_VERSION, both static, $runs runs each, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo

# 1. One small file, process start to exit (no cache). The two tools take
# turns, run by run, so that a change in the machine's load while the
# runs go on weighs on both alike.
gcmd=(gpulint lint --no-cache --fail-on never "$small")
ccmd=(conftest test --no-color -p "$policy" "$small")
read -r g1 c1 < <(paired_ms)
r1=$(ratio "$g1" "$c1")
printf 'one file:      gpulint %6.1f ms  conftest %6.1f ms  ratio %.2f (target <= 0.50: %s; < 30 ms: %s)\n' \
  "$g1" "$c1" "$r1" "$(verdict "$r1" '<=' 0.5)" "$(verdict "$g1" '<' 30)"

# 2. 1000 files, no cache: wall time and peak memory.
read -r _ gw gm < <(measure gpulint gpulint lint --no-cache --fail-on never "$out/corpus1000")
read -r _ cw cm < <(measure conftest conftest test --no-color -p "$policy" "$out/corpus1000")
rw=$(ratio "$gw" "$cw"); rm_=$(ratio "$gm" "$cm")
printf '1000 files:    gpulint %6.2f s %7d KiB  conftest %6.2f s %7d KiB  wall %.2f (<= 0.25: %s)  memory %.2f (<= 0.50: %s)\n' \
  "$gw" "$gm" "$cw" "$cm" "$rw" "$(verdict "$rw" '<=' 0.25)" "$rm_" "$(verdict "$rm_" '<=' 0.5)"

# 3. The same 1000 again with a warm result cache.
GPULINT_CACHE_DIR=$cache gpulint lint --fail-on never "$out/corpus1000" >/dev/null
read -r _ ww _ < <(GPULINT_CACHE_DIR=$cache measure gpulint-warm gpulint lint --fail-on never "$out/corpus1000")
rc=$(ratio "$ww" "$cw")
printf 'warm cache:    gpulint %6.2f s  conftest %6.2f s  ratio %.3f (<= 0.05: %s)\n' "$ww" "$cw" "$rc" "$(verdict "$rc" '<=' 0.05)"

# 4. Two workers against one.
read -r _ w1 _ < <(measure workers1 gpulint lint --no-cache --workers 1 --fail-on never "$out/corpus1000")
read -r _ w2 _ < <(measure workers2 gpulint lint --no-cache --workers 2 --fail-on never "$out/corpus1000")
sp=$(ratio "$w1" "$w2")
printf 'workers:       1 worker %6.2f s  2 workers %6.2f s  speed-up %.2f (>= 1.7: %s)\n' "$w1" "$w2" "$sp" "$(verdict "$sp" '>=' 1.7)"
