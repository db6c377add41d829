#!/usr/bin/env bash
# Measures the replay's speed and memory on the default DeepSeek-V3 step (or CONFIG) in the cases
# the README's speed table lists, side by side with another commit built in a scratch worktree
# (default: the commit before HEAD), alternating the two binaries case by case so that load on a
# shared machine hits both alike, and which of them runs first. Prints one table: wall time, peak
# RSS, activities (compute ops and transfers replayed), activities per wall second, the simulated step.
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
#   search70b   `stepsim search` of Llama 3.1 70B on 512 H100s (64 nodes, 8M tokens per step: the whole
#               default space, 32 replays at most, -j 2), whatever CONFIG says; wall time, peak RSS and
#               the best step found (target: under 3 minutes on 2 cores)
#   python      the reduced replay as a Python call, plan.simulate() (the module in the binary's build
#               folder), beside the same replay by the binary, alternating; both rows, the call's
#               overhead in wall and CPU time (target: under 5 %) and what stepsim.load() adds
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
    *) echo "benchmark.sh: unknown case $1 (reduced, full, zipf, straggler, cable, 16k, sweep100, search70b, python)" >&2; exit 2 ;;
  esac
}

# The python case: in one Python process (stepsim imported once, as in a notebook), rounds of the
# command line's replay (`bin simulate ... --json`, a subprocess) and of the same replay as a Python
# call, plan.simulate() on a plan loaded once (the module of bin's build folder), alternating (5
# rounds, STEPSIM_BENCH_ROUNDS=N for more); the medians of wall and CPU time (the call's own and its
# replay process's), the call's overhead, and what stepsim.load() adds when the plan is loaded anew.
python_case() {
  local bin=$1 label=$2 build py
  build=$(dirname "$bin")
  [ -e "$build/python/stepsim/__init__.py" ] || { echo "python     $label: no Python module beside $bin"; return; }
  py=$(sed -n 's/^STEPSIM_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
  PYTHONPATH="$build/python" "${py:-/usr/bin/python3}" - "$bin" "$label" "${args[@]}" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
t_import = time.perf_counter()
import stepsim
t_import = time.perf_counter() - t_import
bin, label, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
config = argv[0] if argv and argv[0] != "--set" else None
given = argv[1:] if config else argv
def value(text):  # --set values are YAML; here JSON where they parse as JSON, else the text
    try:
        return json.loads(text)
    except ValueError:
        return text
sets = {k: value(v) for k, v in (a.split("=", 1) for a in given if a != "--set")}
def cpu():  # this process's CPU time and that of the children it waited for
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
def timed(call):
    t, c = time.perf_counter(), cpu()
    result = call()
    return time.perf_counter() - t, cpu() - c, result
plan = stepsim.load(config, sets)
runs = {"cli": [], "python": [], "load": []}
for _ in range(int(os.environ.get("STEPSIM_BENCH_ROUNDS", "5"))):
    runs["cli"].append(timed(lambda: json.loads(subprocess.run([bin, "simulate", *argv, "--json", "--quiet"],
                                                               check=True, stdout=subprocess.PIPE).stdout)))
    runs["python"].append(timed(lambda: plan.simulate().to_dict()))
    runs["load"].append(timed(lambda: stepsim.load(config, sets)))
med = {who: (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows), rows[-1][2])
       for who, rows in runs.items()}
for who in ("cli", "python"):
    wall, _, j = med[who]
    act = j["sim"]["activities"]
    print(f"{'python' if who == 'python' else 'python-cli':<10} {label:<9} {wall:9.2f} {'-':>9} {act:12d} "
          f"{act / max(wall, 1e-9):12.0f} {j['step_time_s']:10.4f}")
(cw, cc, cj), (pw, pc, pj), (lw, lc, _) = med["cli"], med["python"], med["load"]
same = "same step" if cj["step_time_s"] == pj["step_time_s"] else f"STEPS DIFFER: {cj['step_time_s']} vs {pj['step_time_s']}"
print(f"python     {label:<9} plan.simulate() over the command line: wall {100 * (pw / cw - 1):+.1f} %, CPU "
      f"{100 * (pc / cc - 1):+.1f} % ({pc:.3f} vs {cc:.3f} s CPU; medians of {len(runs['cli'])} alternating rounds; "
      f"{same}); stepsim.load() {lw:.3f} s ({lc:.3f} s CPU); import stepsim {t_import:.2f} s once")
PY
}

printf '%-10s %-9s %9s %9s %12s %12s %10s\n' case commit wall_s peak_MiB activities "activities/s" step_s
IFS=, read -r -a list <<<"$cases"
# Which binary runs first alternates from case to case: the first run of a case pays for a cold
# machine (measured: 2048-GPU full replays 15 % slower first, whichever binary), so a case named twice
# (--cases full,full) shows both orders.
round=0
for c in "${list[@]}"; do
  order=("${!bins[@]}")
  if [ "${#bins[@]}" -eq 2 ] && [ $((round % 2)) -eq 1 ]; then order=(1 0); fi
  round=$((round + 1))
  for i in "${order[@]}"; do
    bin=${bins[$i]}
    if [ "$c" = python ]; then
      python_case "$bin" "${labels[$i]}"
      continue
    fi
    if [ "$c" = search70b ]; then
      rm -rf "$out/search$i"
      /usr/bin/time -f '%e %M' -o "$out/time" "$bin" search workloads/llama-3.1-8b.yaml \
        --set model.config_json=workloads/models/llama-3.1-70b.config.json --set hardware.preset=h100-sxm \
        --gpus 512 --tokens-per-step 8388608 -j 2 -o "$out/search$i" --quiet >/dev/null 2>"$out/err" ||
        { echo "$c ${labels[$i]}: failed: $(tail -1 "$out/err")"; continue; }
      read -r wall kib <"$out/time"
      best=$(awk -F, 'NR == 2 { print $17 }' "$out/search$i/search.csv")
      printf '%-10s %-9s %9.2f %9.0f %12s %12s %10s\n' "$c" "${labels[$i]}" "$wall" "$((kib / 1024))" - - "$best"
      continue
    fi
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
