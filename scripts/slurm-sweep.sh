#!/usr/bin/env bash
# Runs the job lines of `stepsim sweep --emit-jobs JOBS -o DIR` (or of `stepsim search --emit-jobs`)
# as one Slurm job array: task i runs line i+1 of JOBS (each line writes DIR/points/NNN.json and
# .err). Then merge with `stepsim sweep --collect DIR` (a search: the same search again, without
# --emit-jobs).
#
#   scripts/slurm-sweep.sh JOBS [sbatch options...]     # submits; prints the array job id
#
# Each task simulates one point on one core; a full 2048-GPU replay needs about 1 GiB and a
# 16,384-GPU one a few GiB, so pass --mem and --time to suit the plan (the defaults below fit the
# default plan in full mode). At most SWEEP_MAX_PARALLEL tasks (default 200) run at once.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
jobs_file=$(realpath "$1")
shift
[[ -r "$jobs_file" ]] || { echo "slurm-sweep.sh: $jobs_file: cannot read the job list (write it with stepsim sweep --emit-jobs)" >&2; exit 2; }
lines=$(grep -c . "$jobs_file" || true)
[[ "$lines" -gt 0 ]] || { echo "slurm-sweep.sh: $jobs_file: the job list is empty" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "slurm-sweep.sh: sbatch not found; without Slurm run the lines with GNU parallel: parallel < $jobs_file" >&2; exit 2; }

case "$jobs_file" in *$'\n'*) echo "slurm-sweep.sh: the job list's path holds a line break; move it to a plain path" >&2; exit 2 ;; esac
# The path single-quoted for the sh that runs --wrap (each ' written as '\'').
quoted_jobs_file="'${jobs_file//\'/\'\\\'\'}'"

# Inside a task: run exactly the task's line with bash (the lines quote their arguments for a shell).
sbatch --parsable \
  --job-name=stepsim-sweep \
  --array="0-$((lines - 1))%${SWEEP_MAX_PARALLEL:-200}" \
  --cpus-per-task=1 --mem=2G --time=00:30:00 \
  --output=/dev/null \
  "$@" \
  --wrap="sed -n \"\$((SLURM_ARRAY_TASK_ID + 1))p\" $quoted_jobs_file | bash"
