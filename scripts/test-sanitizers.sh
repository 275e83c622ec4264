#!/usr/bin/env bash
# Builds the library and its host tests with AddressSanitizer and UndefinedBehaviorSanitizer into
# $MCRPMPI_SANITIZE_BUILD_DIR (default build-sanitize/) and runs the tests that drive the library's
# own code on CPU: unit tests, the fake-device paths (staging, requests, point-to-point protocol),
# thread stress. Any sanitizer report fails the test it happens in. Python tests are left
# out (the interpreter is not instrumented, so the sanitizer runtime cannot come first), as are GPU
# tests (on a GPU, compute-sanitizer is the tool: see README "Reliability").
# Usage: scripts/test-sanitizers.sh [extra ctest arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_SANITIZE_BUILD_DIR:-$root/build-sanitize}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCRPMPI_SANITIZE=address,undefined >/dev/null
cmake --build "$build" -j "$(nproc)"
# Leak checking is off: MPICH's hwloc plugin leaks at MPI_Init from a module it unloads, which
# LeakSanitizer cannot name (so no suppression matches), and the library's leaks are measured by
# the memory-flat test in the main suite instead -- which is left out here, since ASan's quarantine
# holds freed memory and makes resident memory grow. halt_on_error makes any report fatal.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600 -L "unit|fake_device|reliability|p2p" -LE "python|gpu|compare" \
  -E "memory_flat" "$@"
