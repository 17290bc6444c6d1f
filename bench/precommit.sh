#!/usr/bin/env bash
# Measures gpulint's own time inside the pre-commit hook for a commit that
# touches a few configs, next to the whole `pre-commit run --files` time.
# Usage:
#   bench/precommit.sh [N] [FILE...]
# Default: 21 runs on three example configs of three kinds (DeepSpeed,
# Accelerate, Kubernetes). FILEs are paths from the repository root; the
# .gpulint.yaml files above them come along, as in a real repository.
#
# It snapshots the work tree (tracked and untracked, not ignored files) into
# a temporary repository, lets pre-commit build the hook from it
# (`language: golang`, the Go on PATH, the host's module and build caches),
# and times, interleaved so that machine load affects all alike:
#   gpulint cold    the hook's binary, `gpulint lint --no-cache F...`
#   gpulint miss    result cache on, but empty (a fresh GPULINT_CACHE_DIR)
#   gpulint warm    result cache on and filled (the usual re-commit)
#   pre-commit cold `pre-commit run <hook> --files F...`, hook args --no-cache
#   pre-commit warm the same with the cache on and filled
# Needs git, go, bc and pre-commit (`apt-get install pre-commit`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${1:-21}
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(examples/deepspeed/zero3-clean/ds_config.json
    examples/accelerate/bf16-clean/default_config.yaml
    examples/kubernetes/clean/deployment.yaml)
fi
command -v pre-commit >/dev/null || { echo "bench/precommit.sh: pre-commit is not on PATH" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE SKIP
export PRE_COMMIT_HOME=$tmp/pre-commit
export GOMODCACHE GOCACHE GOFLAGS
GOMODCACHE=$(go env GOMODCACHE)
GOCACHE=$(go env GOCACHE)
GOFLAGS="$(go env GOFLAGS) -mod=mod"
export GPULINT_CACHE_DIR=$tmp/gpulint-cache
gitc=(git -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false)

# The hook's repository: this work tree as it is.
src=$tmp/gpulint
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    [ -d "$f" ] && continue # a submodule
    mkdir -p "$src/$(dirname "$f")"
    cp -P "$f" "$src/$f"
  fi
done
git -C "$src" init -q
git -C "$src" add -A
"${gitc[@]}" -C "$src" commit -q -m snapshot
rev=$(git -C "$src" rev-parse HEAD)

# The user's repository: the files and the project files above them.
work=$tmp/work
git init -q "$work"
for f in "${files[@]}"; do
  mkdir -p "$work/$(dirname "$f")"
  cp "$f" "$work/$f"
  d=$(dirname "$f")
  while :; do
    if [ -f "$d/.gpulint.yaml" ]; then cp "$d/.gpulint.yaml" "$work/$d/.gpulint.yaml"; fi
    [ "$d" = . ] && break
    d=$(dirname "$d")
  done
done
cat >"$work/.pre-commit-config.yaml" <<EOF
repos:
  - repo: $src
    rev: $rev
    hooks:
      - {id: gpulint, alias: gpulint-warm, args: [--fail-on, never]}
      - {id: gpulint, alias: gpulint-cold, args: [--fail-on, never, --no-cache]}
EOF
git -C "$work" add -A
"${gitc[@]}" -C "$work" commit -q -m configs
cd "$work"

t0=$EPOCHREALTIME
# pre-commit's `go install` takes the environment as it is: static, as the
# README recommends.
CGO_ENABLED=0 pre-commit install-hooks >/dev/null
build_s=$(echo "$EPOCHREALTIME - $t0" | bc -l)
bin=$(ls "$PRE_COMMIT_HOME"/repo*/golangenv-*/bin/gpulint)

ms() { # runs a command, prints its wall time in milliseconds
  local t0 t1
  t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || { echo "bench/precommit.sh: failed: $*" >&2; return 1; }
  t1=$EPOCHREALTIME
  echo "($t1 - $t0) * 1000" | bc -l
}
lint=("$bin" lint --fail-on never)

# Warm-up (page cache, result cache) and a check that everything passes.
"${lint[@]}" "${files[@]}" >/dev/null
pre-commit run gpulint-warm --files "${files[@]}" >/dev/null
pre-commit run gpulint-cold --files "${files[@]}" >/dev/null

declare -a cold miss warm pccold pcwarm
for i in $(seq "$n"); do
  cold+=("$(ms "${lint[@]}" --no-cache "${files[@]}")")
  miss+=("$(GPULINT_CACHE_DIR=$tmp/miss-$i ms "${lint[@]}" "${files[@]}")")
  warm+=("$(ms "${lint[@]}" "${files[@]}")")
  pccold+=("$(ms pre-commit run gpulint-cold --files "${files[@]}")")
  pcwarm+=("$(ms pre-commit run gpulint-warm --files "${files[@]}")")
done

stats() { # label, values: prints median, min and max
  local label=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v n="$#" -v l="$label" '
    { v[NR] = $1 }
    END {
      med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "  %-16s median %7.1f ms   min %7.1f   max %7.1f\n", l, med, v[1], v[n]
    }'
}

echo "$(pre-commit --version), $(go version | cut -d' ' -f3), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hook built by pre-commit (one-time, host build cache): $(printf '%.1f' "$build_s") s"
echo "files: ${files[*]}"
echo "gpulint = $bin lint --fail-on never FILE... (from the repository root, as the hook runs it); $n runs each:"
stats "gpulint cold" "${cold[@]}"
stats "gpulint miss" "${miss[@]}"
stats "gpulint warm" "${warm[@]}"
stats "pre-commit cold" "${pccold[@]}"
stats "pre-commit warm" "${pcwarm[@]}"
