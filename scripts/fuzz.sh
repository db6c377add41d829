#!/usr/bin/env bash
# Fuzzes every input reader with libFuzzer (clang; ASan + UBSan) from the committed seed corpus:
#   scripts/fuzz.sh SECONDS [TARGET...]   each target for SECONDS (targets: config hf_config
#                                         profile_trace load_file manifest megatron_import
#                                         torchtitan_import; default all)
# Builds into build-fuzz/; the growing corpus is build-fuzz/corpus/TARGET, anything found is
# build-fuzz/findings/TARGET-crash-* (or -leak-, -timeout-, -oom-): add it to the seeds and as a
# regression test. Exits non-zero when a target finds something.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
((${#targets[@]})) || targets=(config hf_config profile_trace load_file manifest megatron_import torchtitan_import)

if ! command -v clang++ >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends clang >&2
fi
scripts/setup.sh --packages  # the Debian libraries the readers link
cmake -S fuzz -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build build-fuzz -j "$(nproc 2>/dev/null || echo 2)" >&2

status=0
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz: $t for $seconds s" >&2
  # -timeout: an input taking over 10 s is a hang; -rss_limit_mb: one over 2 GiB exhausts memory.
  if ! "build-fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" \
       "build-fuzz/corpus/$t" "fuzz/corpus/$t" 2> "build-fuzz/$t.log"; then
    echo "fuzz: $t FOUND something; see build-fuzz/$t.log and build-fuzz/findings/" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "build-fuzz/$t.log" | sed "s/^/fuzz: $t /" >&2 || true
done
exit $status
