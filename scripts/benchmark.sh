#!/usr/bin/env bash
# Measures the replay's speed and memory on the default DeepSeek-V3 step (or CONFIG), in the
# reduced and full modes: wall time, peak memory, activity count, simulated seconds per wall
# second. Prints one table; the README quotes its figures.
#   scripts/benchmark.sh [CONFIG] [--set k=v ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { apt-get install -y -qq time >/dev/null; }
[ -x build/stepsim ] || scripts/setup.sh

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-9s %10s %12s %14s %12s %14s %16s\n' mode wall_s peak_MiB activities step_s "sim_s/wall_s" "vs roofline"
for mode in reduced full; do
  /usr/bin/time -f '%e %M' -o "$out/time" build/stepsim simulate "$@" --set sim.mode=$mode --json --quiet >"$out/sim.json"
  read -r wall kib <"$out/time"
  python3 - "$out/sim.json" "$mode" "$wall" "$kib" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
mode, wall, kib = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
step = j["step_time_s"]
print(f"{mode:<9} {wall:10.2f} {kib/1024:12.0f} {j['sim']['activities']:14d} {step:12.4f} {step/max(wall,1e-9):14.4f} {100*j['vs_roofline']:+15.2f}%")
PY
done
