#!/usr/bin/env bash
# Installs what stepsim needs from Debian's archive (only the missing packages), then configures
# and builds it in build/. Safe to run again: it does nothing that is already done.
#   scripts/setup.sh [TARGET...]   (default: everything, tests included)
#   scripts/setup.sh --packages  only the Debian packages (scripts/test.sh --sanitize, scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: the tests load `stepsim report`'s HTML page in it (headless) and check it draws with no error.
packages=(g++ cmake make pkg-config libsimgrid-dev libyaml-cpp-dev libfmt-dev
          libgtest-dev nlohmann-json3-dev libcli11-dev libjemalloc-dev libcairo2-dev zlib1g-dev libtoml11-dev time chromium jq)
# The Python module (python/, `import stepsim`): pybind11 and Debian's python3 to build it; pytest,
# pandas and matplotlib for its tests and the example of docs/python.md.
packages+=(pybind11-dev python3-dev python3-pytest python3-pandas python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

[ "${1:-}" = "--packages" ] && exit 0

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
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
