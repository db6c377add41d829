#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite.
#   scripts/test.sh [CTEST ARGS...]              the normal build (build/)
#   scripts/test.sh --sanitize [CTEST ARGS...]   the same suite built with AddressSanitizer and
#                                                UndefinedBehaviorSanitizer (build-sanitize/); any
#                                                finding (leak, overflow, UB) fails the test
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  scripts/setup.sh --packages
  # -O1: a sanitized -O2 build takes far longer to compile and finds nothing more. -g1: line tables
  # only, enough for file:line in every report's stack trace, at about 2/3 of -g's compile time.
  # (STEPSIM_SANITIZE also makes the library a unity build and the tests -O0; see CMakeLists.txt.)
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
        -DSTEPSIM_SANITIZE=ON >/dev/null
  cmake --build build-sanitize -j "$jobs" >&2
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # SimGrid's own one-time allocations are not ours to fix.
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  ctest --test-dir build-sanitize --output-on-failure -j "$jobs" "$@"
  exit
fi
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$jobs" "$@"
