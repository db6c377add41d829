#!/usr/bin/env bash
# Measures the replay's speed and memory on the default DeepSeek-V3 step (or CONFIG) in the cases
# the README's speed table lists, side by side with another commit built in a scratch worktree
# (default: the commit before HEAD), alternating the two binaries case by case so that load on a
# shared machine hits both alike. Prints one table: wall time, peak RSS, activities (compute ops
# and transfers replayed), activities per wall second, the simulated step.
#
#   scripts/benchmark.sh [--against REV | --against-bin PATH | --alone] [--cases LIST] [CONFIG] [--set k=v ...]
#
# --against-bin compares with a stepsim binary already built (e.g. kept from an earlier checkout).
#
# LIST is comma-separated (default: reduced,full,zipf,straggler):
#   reduced     the default mode (one replica stands for all)
#   full        every GPU replayed (2048 on the default plan)
#   zipf        scenario.routing=zipf, auto mode
#   straggler   one GPU at 0.8x clock, auto mode, its unperturbed baseline included
#   cable       a 1:1 fat tree with the cable from leaf 0 to spine 3 down, auto mode, baseline included
#   16k         16,384 GPUs in full (2048 nodes, global batch 122880): long
#   sweep100    a 100-point reduced sweep (scenario.seed=1..100), wall time only
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "benchmark.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }

against="HEAD~1"
against_bin=""
cases="reduced,full,zipf,straggler"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --against) against="$2"; shift 2 ;;
    --against-bin) against_bin="$2"; against=""; shift 2 ;;
    --alone) against=""; shift ;;
    --cases) cases="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

[ -x build/stepsim ] || scripts/setup.sh stepsim >&2
out=$(mktemp -d)
cleanup() {
  if [ -n "${other_tree:-}" ]; then git worktree remove --force "$other_tree" >/dev/null 2>&1 || true; fi
  rm -rf "$out"
}
trap cleanup EXIT

bins=("build/stepsim")
labels=("$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo +)")
if [ -n "$against" ]; then
  rev=$(git rev-parse --short "$against")
  other_tree="$out/tree"
  git worktree add --detach "$other_tree" "$rev" >/dev/null 2>&1
  echo "benchmark.sh: building $rev for comparison ..." >&2
  (cd "$other_tree" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target stepsim >/dev/null)
  bins+=("$other_tree/build/stepsim")
  labels+=("$rev")
fi

if [ -n "$against_bin" ]; then
  [ -x "$against_bin" ] || { echo "benchmark.sh: --against-bin $against_bin: not an executable" >&2; exit 2; }
  bins+=("$against_bin")
  labels+=("other")
fi

case_args() {
  case "$1" in
    reduced) echo "" ;;
    full) echo "--set sim.mode=full" ;;
    zipf) echo "--set scenario.routing=zipf" ;;
    # YAML flow maps need "key": value or a space after the colon; these words must not hold spaces.
    straggler) echo '--set scenario.stragglers=[{"gpu":5,"clock":0.8}]' ;;
    cable) echo '--set cluster.topology=fat-tree --set scenario.stragglers=[{"leaf":0,"spine":3,"link":"down"}]' ;;
    16k) echo "--set sim.mode=full --set cluster.nodes=2048 --set train.global_batch=122880" ;;
    *) echo "benchmark.sh: unknown case $1 (reduced, full, zipf, straggler, cable, 16k, sweep100)" >&2; exit 2 ;;
  esac
}

printf '%-10s %-9s %9s %9s %12s %12s %10s\n' case commit wall_s peak_MiB activities "activities/s" step_s
IFS=, read -r -a list <<<"$cases"
for c in "${list[@]}"; do
  for i in "${!bins[@]}"; do
    bin=${bins[$i]}
    if [ "$c" = sweep100 ]; then
      seeds=$(seq -s, 1 100)
      /usr/bin/time -f '%e %M' -o "$out/time" "$bin" sweep "${args[@]}" --grid "scenario.seed=$seeds" \
        -o "$out/sweep$i" --quiet >/dev/null 2>"$out/err" || { echo "$c ${labels[$i]}: failed: $(tail -1 "$out/err")"; continue; }
      read -r wall kib <"$out/time"
      printf '%-10s %-9s %9.2f %9.0f %12s %12s %10s\n' "$c" "${labels[$i]}" "$wall" "$((kib / 1024))" - - -
      continue
    fi
    # shellcheck disable=SC2046  # the case's --set words split on purpose
    if ! /usr/bin/time -f '%e %M' -o "$out/time" "$bin" simulate "${args[@]}" $(case_args "$c") --json --quiet \
      >"$out/sim.json" 2>"$out/err"; then
      echo "$c ${labels[$i]}: failed: $(tail -1 "$out/err")"
      continue
    fi
    read -r wall kib <"$out/time"
    python3 - "$out/sim.json" "$c" "${labels[$i]}" "$wall" "$kib" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
case, label, wall, kib = sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
act = j["sim"]["activities"]
print(f"{case:<10} {label:<9} {wall:9.2f} {kib/1024:9.0f} {act:12d} {act/max(wall,1e-9):12.0f} {j['step_time_s']:10.4f}")
PY
  done
done
