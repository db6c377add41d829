#!/usr/bin/env bash
# Regenerates docs/validation.md's table 2: every shipped config of workloads/published/ (one per
# row of ../shared/reference/PUBLISHED-RUNS.md, named by its row ID; the measured step is its
# train.reported_step_s, the source and every launch parameter in its header comment) simulated as
# it stands, the predicted step against the measured one, and where the critical GPU's step goes
# (simulate --json's compute_breakdown: GEMM, attention, memory-bound, launch / host, exposed
# communication, bubble), with the term that moves the most if the error were all in it.
#
#   scripts/validate-published.sh [--dir DIR] [--rows 'GLOB'] [--bar PERCENT] [--median PERCENT] [--set k=v ...]
#
# Adding a row is adding its YAML file to workloads/published/. `--dir workloads/published/checks
# --bar 15` runs the published runs that are in neither reference file (docs/validation.md, "checked
# without change"). Rows whose configs cannot run in
# this build (a plan stepsim refuses) are listed with the reason and count against the bar.
# Prints a Markdown table on stdout (progress on stderr); exits 1 when a row is more than --bar
# (default 10) percent off or the median error more than --median (default 5) percent.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=workloads/published
glob='*'
bar=10
median_bar=5
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --rows) glob="$2"; shift 2 ;;
    --bar) bar="$2"; shift 2 ;;
    --median) median_bar="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "validate-published.sh: unknown argument $1 (use --dir DIR, --rows GLOB, --bar P, --median P, --set k=v)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "validate-published.sh: needs jq (scripts/setup.sh --packages installs it)" >&2; exit 2; }
[ -x build/stepsim ] || scripts/setup.sh stepsim >&2

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "| row | GPUs | model | precision | TP/PP/CP/VP | software | measured step | predicted step | error | GEMM / attention / memory-bound / launch+host / exposed comm / bubble (s, critical GPU) | term |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
errors=()
failed=0
shopt -s nullglob
for file in "$dir"/$glob.yaml; do
  row=$(basename "$file" .yaml)
  echo "validate-published: $row ..." >&2
  if ! build/stepsim simulate "$file" "${sets[@]}" --json --quiet >"$out/$row.json" 2>"$out/$row.err"; then
    echo "| $row | | | | | | | not run | | $(head -c 300 "$out/$row.err" | tr '\n|' '  ') | |"
    failed=$((failed + 1))
    continue
  fi
  jq -r --arg row "$row" '
    . as $r
    | ($r.ranks[] | select(.rank == $r.critical_rank)) as $c
    | $r.compute_breakdown.step as $b
    | $r.roofline.reported_step_s as $m
    | ($r.step_time_s / $m - 1) as $e
    | ($r.roofline.plan.stages / $r.roofline.plan.pp) as $v
    | (if $v > 1 then "/\($v)" else "" end) as $vp
    | [ {t: "GEMM", s: $b.gemm_s}, {t: "attention", s: $b.attention_s}, {t: "memory-bound", s: $b.memory_bound_s},
        {t: "launch/host", s: $b.launch_s}, {t: "exposed comm", s: $c.exposed_comm_s}, {t: "bubble", s: $c.bubble_s} ] as $terms
    # The term the gap would need: the largest one of the sign the error asks for (too slow: a term
    # to shrink; too fast: one to grow, the largest besides GEMM unless GEMM dominates the gap).
    | ($r.step_time_s - $m) as $gap
    | ([ $terms[] | select(.t != "GEMM") ] | max_by(.s)) as $other
    | (if ($gap | fabs) > 0.5 * ($terms[0].s) then "GEMM" else $other.t end) as $term
    | [ $row,
        ($r.roofline.plan.gpus | tostring),
        $r.roofline.plan.model,
        $r.roofline.plan.precision,
        "\($r.roofline.plan.tp)/\($r.roofline.plan.pp)/\($r.roofline.plan.cp)\($vp)",
        $r.software.profile + (if $r.software.cuda_graphs != "none" then ", graphs " + $r.software.cuda_graphs + (if ($r.software.cuda_graph_scope // "") != "" then " (" + $r.software.cuda_graph_scope + ")" else "" end) else "" end),
        (if $r.roofline.reported_step_from_tflops_per_gpu != null
         then "\($m * 1000 | round / 1000) s (from \($r.roofline.reported_step_from_tflops_per_gpu) TFLOP/s)"
         else "\($m) s" end),
        "\($r.step_time_s * 1000 | round / 1000) s",
        "\($e * 1000 | round / 10) %",
        ([ $terms[] | (.s * 1000 | round / 1000 | tostring) ] | join(" / ")),
        $term
      ] | "| " + join(" | ") + " |"' "$out/$row.json"
  errors+=("$(jq -r '.step_time_s / .roofline.reported_step_s - 1' "$out/$row.json")")
done

if [ ${#errors[@]} -eq 0 ]; then echo "validate-published.sh: no row ran" >&2; exit 1; fi
verdict=$(printf '%s\n' "${errors[@]}" | sort -g | awk -v bar="$bar" '
  { e[NR] = $1; if ($1 > bar / 100 || $1 < -bar / 100) off++; a = $1 < 0 ? -$1 : $1; sum += a }
  END { m = (NR % 2) ? e[(NR + 1) / 2] : (e[NR / 2] + e[NR / 2 + 1]) / 2;
        printf "%d %.4f %.4f", off, m, sum / NR }')
read -r off median mean_abs <<<"$verdict"
echo
echo "rows run ${#errors[@]}, not run $failed; median error $(awk -v m="$median" 'BEGIN { printf "%+.1f %%", 100 * m }'), mean |error| $(awk -v m="$mean_abs" 'BEGIN { printf "%.1f %%", 100 * m }'); rows beyond ${bar} %: $off"
awk -v off="$off" -v m="$median" -v f="$failed" -v mb="$median_bar" \
  'BEGIN { exit (off > 0 || f > 0 || m > mb / 100 || m < -mb / 100) ? 1 : 0 }'
