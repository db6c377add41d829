#!/usr/bin/env bash
# Installs what stepsim needs from Debian's archive (only the missing packages), then configures
# and builds it in build/. Safe to run again: it does nothing that is already done.
#   scripts/setup.sh            everything: the simulator, the test suite and the tools the tests use
#   scripts/setup.sh stepsim    only what building and running the simulator needs (no test
#                               framework, no browser): the README's first command
#   scripts/setup.sh --packages only the Debian packages, all of them (scripts/test.sh --sanitize,
#                               scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# Building and running the simulator.
simulator=(g++ cmake make pkg-config libsimgrid-dev libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev
           libjemalloc-dev libcairo2-dev zlib1g-dev libtoml11-dev)
# The tests and the validation scripts: GoogleTest; chromium, in which the tests load `stepsim
# report`'s HTML page (headless) and check it draws with no error; jq and time for the scripts.
testing=(libgtest-dev chromium jq time)

packages=("${simulator[@]}")
[ "${1:-}" = "stepsim" ] || packages+=("${testing[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]} (a few minutes on a fresh machine)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  # apt's and dpkg's progress (hundreds of lines) go to a log shown only when something fails;
  # apt's own errors and warnings still reach the terminal.
  log=$(mktemp "${TMPDIR:-/tmp}/stepsim-setup.XXXXXX")
  trap 'rm -f "$log"' EXIT
  if ! { $sudo_cmd apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
           -o Dpkg::Use-Pty=0 "${missing[@]}"; } >"$log"; then
    echo "setup: installing the packages failed; apt said:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
fi

[ "${1:-}" = "--packages" ] && exit 0

jobs=$(nproc 2>/dev/null || echo 2)
# The test suite is configured only where GoogleTest is installed: `scripts/setup.sh stepsim` on a
# fresh machine builds the simulator alone, and a later scripts/test.sh (which installs it) adds
# the tests to the same build folder.
tests=OFF
dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null | grep -q "install ok installed" && tests=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTEPSIM_TESTS="$tests" >/dev/null
cmake --build build -j "$jobs" ${1:+--target "$1"} >&2
