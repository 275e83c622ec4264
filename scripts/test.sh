#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, prepares the Python environment and
# runs the whole ctest suite. GPU tests report "skipped" with their reason where no GPU exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
if [ -x "$root/scripts/setup-python.sh" ]; then
  "$root/scripts/setup-python.sh"
  cmake -S "$root" -B "$build" >/dev/null   # let tests/python see the new environment
  cmake --build "$build" -j "$(nproc)"
fi
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@"
