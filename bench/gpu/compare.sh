#!/usr/bin/env bash
# Compare gpulint's memory model with the peaks measured by
# bench/gpu/measure_memory.py: for every measured row, run the matching
# `gpulint estimate` command and print a markdown table of measured vs
# predicted memory with the error of each, the median absolute errors by
# workload, and the max-micro-batch searches against gpulint's largest
# micro batch that fits. Needs go and jq. Writes markdown to stdout.
#
# Usage: bench/gpu/compare.sh [--update-readme] [results.jsonl ...]
#   default: bench/gpu/results/results.jsonl and bench/gpu/results/solo.jsonl;
#   a setup id found in more than one file is taken from the first.
#   --update-readme replaces the generated block of bench/gpu/README.md
#   instead of printing.
#
# What is compared (docs/validation.md uses the same split):
#   allocated  torch.cuda.max_memory_allocated over the 3 steps
#              vs weights + gradients + optimizer states + activations + KV cache
#   reserved   torch.cuda.max_memory_reserved
#              vs the estimate's total minus its CUDA context
#   device     the process's device memory (NVML) at the end, plus the rise of
#              reserved memory from its peak to the end, i.e. non-PyTorch memory + peak reserved
#              vs the estimate's total
# Error is (predicted - measured) / measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --update-readme ]; then
  shift
  readme=bench/gpu/README.md
  body=$(mktemp)
  trap 'rm -f "$body"' EXIT
  "$0" "$@" > "$body"
  awk -v body="$body" '
    /^<!-- BEGIN GENERATED: bench\/gpu\/compare.sh/ { print; while ((getline line < body) > 0) print line; skip = 1; next }
    /^<!-- END GENERATED -->/ { skip = 0 }
    !skip' "$readme" > "$readme.tmp"
  mv "$readme.tmp" "$readme"
  exit 0
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  files=(bench/gpu/results/results.jsonl)
  [ -f bench/gpu/results/solo.jsonl ] && files+=(bench/gpu/results/solo.jsonl)
fi
command -v jq >/dev/null || { echo "compare.sh needs jq" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gpulint" ./cmd/gpulint
gl="$tmp/gpulint"

# The CUDA context the estimate includes, in bytes, from its text breakdown
# (GiB with two decimals; the JSON total folds it into "overhead").
context_bytes() {
  "$gl" estimate "$@" | awk '/CUDA context/ {printf "%.0f", $NF * 1073741824; found=1} END {if (!found) print 0}'
}

# One TSV line per measured row, sorted into groups ("-" for an empty field:
# read collapses empty tab-separated fields).
jq -r -s '
  [ .[] | select((.kind == "train" or .kind == "lora" or .kind == "inference") and .status == "ok") ]
  | group_by(.id) | map(.[0])
  | sort_by(.spec.workload, .spec.precision, .spec.model, .spec.attn, .spec.optimizer_impl // "",
            .spec.lora_targets // "", .spec.checkpointing, .spec.seq_len, .spec.micro_batch, .spec.logits_to_keep)
  | .[]
  | [ .id,
      (if .spec.workload == "train" then "train " + .spec.precision else .spec.workload end),
      .peak_allocated, .peak_reserved,
      (if .mem_after_steps.nvml_proc_used then
         .mem_after_steps.nvml_proc_used - .mem_after_steps.reserved + .peak_reserved else "-" end),
      ((.gpulint_gaps // []) | map(select(test("^AdamW foreach") | not) | sub(" \\(.*"; "")) | join("; ")
        | if . == "" then "-" else . end),
      (.gpulint_args | join(" ")) ] | @tsv' "${files[@]}" > "$tmp/rows.tsv"

: > "$tmp/errs.tsv"
printf '| # | Setup | Group | Alloc. meas. | Alloc. pred. | Err. | Reserved meas. | Reserved pred. | Err. | Device meas. | Total pred. | Err. | Not expressible in the CLI |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
n=0
while IFS=$'\t' read -r id group alloc reserved device gaps args; do
  n=$((n + 1))
  # shellcheck disable=SC2086 # args is a list of flags without spaces inside
  json=$("$gl" estimate $args --format json)
  # shellcheck disable=SC2086
  ctx=$(context_bytes $args)
  read -r palloc ptotal <<<"$(jq -r '.per_gpu | "\(.weights + .gradients + .optimizer_states + .activations + .kv_cache) \(.total)"' <<<"$json")"
  [ "$device" = - ] && device=""
  [ "$gaps" = - ] && gaps=""
  awk -v n="$n" -v id="$id" -v group="$group" -v a="$alloc" -v r="$reserved" -v d="$device" \
      -v pa="$palloc" -v pt="$ptotal" -v ctx="$ctx" -v gaps="$gaps" -v errs="$tmp/errs.tsv" 'BEGIN {
    G = 1073741824; pr = pt - ctx
    ea = (pa - a) / a * 100; er = (pr - r) / r * 100
    ed = ""; if (d != "") { ed = (pt - d) / d * 100 }
    printf "| %d | `%s` | %s | %.2f | %.2f | %+.1f%% | %.2f | %.2f | %+.1f%% | %s | %.2f | %s | %s |\n",
      n, id, group, a / G, pa / G, ea, r / G, pr / G, er, (d == "" ? "—" : sprintf("%.2f", d / G)), pt / G,
      (d == "" ? "—" : sprintf("%+.1f%%", ed)), (gaps == "" ? "—" : gaps)
    printf "%s\t%s\t%s\t%.4f\t%.4f\t%s\n", id, group, (gaps == "" ? "expressible" : "gap"), ea, er, ed >> errs
  }'
done < "$tmp/rows.tsv"
echo
echo "GiB = 2^30 bytes. Device = the process's memory by NVML (CUDA context, kernels and peak reserved)."
echo

# Median absolute errors by group.
median_table() {
  awk -F'\t' '
    function med(arr, k,   i, j, t) {
      for (i = 2; i <= k; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
      return (k % 2) ? arr[(k + 1) / 2] : (arr[k / 2] + arr[k / 2 + 1]) / 2
    }
    function add(key, ea, er, ed) {
      if (!(key in cnt)) { if (key ~ /rows/) torder[++nt] = key; else order[++nk] = key }
      c = ++cnt[key]; A[key, c] = (ea < 0 ? -ea : ea); R[key, c] = (er < 0 ? -er : er)
      if (ed != "") { cd = ++dcnt[key]; D[key, cd] = (ed < 0 ? -ed : ed) }
    }
    {
      add($2, $4, $5, $6); add("all rows", $4, $5, $6)
      add(($3 == "expressible" ? "rows the CLI can state exactly" : "rows with inputs the CLI cannot state"), $4, $5, $6)
    }
    END {
      print "| Group | Rows | Median abs. error, allocated | Median abs. error, reserved | Median abs. error, device |"
      print "|---|---|---|---|---|"
      for (o = 1; o <= nt; o++) order[nk + o] = torder[o]
      for (o = 1; o <= nk + nt; o++) {
        key = order[o]; k = cnt[key]
        for (i = 1; i <= k; i++) { x[i] = A[key, i]; y[i] = R[key, i] }
        kd = dcnt[key]; for (i = 1; i <= kd; i++) z[i] = D[key, i]
        printf "| %s | %d | %.1f%% | %.1f%% | %s |\n", key, k, med(x, k), med(y, k), (kd ? sprintf("%.1f%%", med(z, kd)) : "—")
      }
    }' "$tmp/errs.tsv"
}
median_table
echo

# Max-micro-batch searches: the largest micro batch that ran under the
# allocator cap vs the largest one gpulint says fits on the emulated card.
echo "| Search | Emulated card (gpulint capacity) | Allocator cap | Largest micro batch that ran | First that ran out of memory | gpulint's largest that fits | gpulint total at measured largest / first OOM |"
echo "|---|---|---|---|---|---|---|"
jq -c 'select(.kind == "search")' "${files[@]}" | while read -r s; do
  name=$(jq -r .id <<<"$s"); card=$(jq -r .card <<<"$s")
  lo=$(jq -r .largest_fitting_micro_batch <<<"$s"); hi=$(jq -r '.smallest_oom_micro_batch // "none"' <<<"$s")
  cap=$(jq -r .cap_bytes <<<"$s"); capacity=$(jq -r .capacity_bytes <<<"$s")
  base=(--model "$(jq -r .spec.model <<<"$s")" --gpu "$card" --workload "$(jq -r .spec.workload <<<"$s")"
        --precision "$(jq -r .spec.precision <<<"$s")" --seq-len "$(jq -r .spec.seq_len <<<"$s")")
  [ "$(jq -r .spec.checkpointing <<<"$s")" = true ] && base+=(--checkpointing)
  best=0; at_lo=""; at_hi=""
  for mb in $(seq 1 64); do
    out=$("$gl" estimate "${base[@]}" --micro-batch "$mb" --format json)
    fits=$(jq -r .fits <<<"$out"); tot=$(jq -r .per_gpu.total <<<"$out")
    [ "$mb" = "$lo" ] && at_lo=$tot
    [ "$mb" = "$hi" ] && at_hi=$tot
    [ "$fits" = true ] && best=$mb
  done
  awk -v n="$name" -v c="$card" -v cap="$cap" -v capy="$capacity" -v lo="$lo" -v hi="$hi" -v best="$best" \
      -v tl="$at_lo" -v th="$at_hi" 'BEGIN { G = 1073741824
    printf "| `%s` | %s (%.2f GiB) | %.2f GiB | %s | %s | %s | %s / %s GiB |\n", n, c, capy / G, cap / G, lo, hi, best,
      (tl == "" ? "—" : sprintf("%.2f", tl / G)), (th == "" ? "—" : sprintf("%.2f", th / G)) }'
done
echo
echo "Commands (run from the repository root; add --format json for the numbers above):"
echo
echo '```'
n=0
while IFS=$'\t' read -r id _ _ _ _ _ args; do
  n=$((n + 1))
  printf '%2d  go run ./cmd/gpulint estimate %s\n' "$n" "$args"
done < "$tmp/rows.tsv"
echo '```'
