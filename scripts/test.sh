#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, prepares the Python environment and
# runs the whole ctest suite. GPU tests report "skipped" with their reason where no GPU exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
# The Python environment (NumPy and mpi4py's wheel: pip downloads, about half a minute) is made
# while the project builds.
"$root/scripts/setup.sh" --packages-only
python_log=$(mktemp)
python_pid=""
if [ -x "$root/scripts/setup-python.sh" ]; then
  mkdir -p "$build"
  MCRPMPI_BUILD_DIR=$build "$root/scripts/setup-python.sh" >"$python_log" 2>&1 &
  python_pid=$!
fi
"$root/scripts/setup.sh"
if [ -n "$python_pid" ]; then
  python_status=0
  wait "$python_pid" || python_status=$?
  cat "$python_log"
  rm -f "$python_log"
  [ "$python_status" = 0 ] || { echo "test: scripts/setup-python.sh failed (exit $python_status)" >&2; exit "$python_status"; }
  cmake -S "$root" -B "$build" >/dev/null   # let tests/python see the new environment
  cmake --build "$build" -j "$(nproc)"
fi
# The MPI libraries of the ABI matrix (ctest -L abi), cached in the build directory. A failure is
# recorded there and fails those tests, while the rest of the suite still runs.
MCRPMPI_BUILD_DIR=$build "$root/scripts/setup-abi-matrix.sh" || echo "test: the ABI matrix is incomplete (see above)"
status=0
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@") || status=$?
# The ASan+UBSan build and its focused tests (scripts/test-sanitizers.sh), after the main suite.
if [ "${MCRPMPI_SANITIZER_TESTS:-1}" != 0 ] && [ $# -eq 0 ]; then
  "$root/scripts/test-sanitizers.sh" || status=$?
fi
exit $status
