#!/usr/bin/env bash
# Quick start 1: set up, build, and report the default DeepSeek-V3 step.
# Extra arguments go to `stepsim simulate` (e.g. --json, --set schedule=1f1b).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python module too (README, "Python"): `import stepsim` works after this command alone.
scripts/setup.sh stepsim stepsim_python
exec build/stepsim simulate "$@"
