#!/usr/bin/env bash
# Installs what stepsim needs from Debian's archive (only the missing packages), then configures
# and builds it in build/. Safe to run again: it does nothing that is already done.
#   scripts/setup.sh            everything: the simulator, the Python module, the test suite and the
#                               tools the tests use
#   scripts/setup.sh stepsim [TARGET...]
#                               only what building and running the simulator (and the named build
#                               targets, e.g. stepsim_python) needs: no test framework, no browser;
#                               the README's first command
#   scripts/setup.sh --packages only the Debian packages, all of them (scripts/test.sh --sanitize,
#                               scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# Building and running the simulator; pybind11 and Debian's python3 build the Python module
# (python/, `import stepsim`).
simulator=(g++ cmake make pkg-config libsimgrid-dev libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev
           libjemalloc-dev libcairo2-dev zlib1g-dev libtoml11-dev pybind11-dev python3-dev)
# The tests and the validation scripts: GoogleTest; chromium, in which the tests load `stepsim
# report`'s HTML page (headless) and check it draws with no error; jq and time for the scripts;
# pytest, pandas and matplotlib for the Python module's tests and the example of docs/python.md.
testing=(libgtest-dev chromium jq time python3-pytest python3-pandas python3-matplotlib)

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
targets=()
(($#)) && targets=(--target "$@")
cmake --build build -j "$jobs" "${targets[@]}" >&2

# `import stepsim` in Debian's python3 from any folder: a stepsim.pth in its site-packages names this
# checkout's build/python, as `pip install -e` would (the last checkout set up wins; PYTHONPATH=build/python
# chooses per shell). Skipped when the module was not built.
if [ -e build/python/stepsim/__init__.py ] && [ -x /usr/bin/python3 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  else
    site=$(/usr/bin/python3 -c 'import site; print(site.getusersitepackages())')
  fi
  line="$PWD/build/python"
  if [ "$(cat "$site/stepsim.pth" 2>/dev/null)" != "$line" ]; then
    mkdir -p "$site" && printf '%s\n' "$line" >"$site/stepsim.pth.$$" && mv "$site/stepsim.pth.$$" "$site/stepsim.pth"
    echo "setup: python3 imports stepsim from $line ($site/stepsim.pth)" >&2
  fi
fi
