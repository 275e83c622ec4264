#!/usr/bin/env bash
# Installs what mcrpmpi needs on Debian 12 (as root) and configures + builds it into build/.
# Safe to run again: apt and pip skip what is already there, and CMake rebuilds incrementally.
# CUDA 13 and NCCL are expected under /usr/local/cuda (compile and link only; no GPU is needed).
# --packages-only: install the packages and stop (scripts/test.sh builds mpi4py meanwhile).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}

packages="build-essential cmake pkg-config mpich libmpich-dev libhwloc-dev libgtest-dev
          nlohmann-json3-dev libcli11-dev valgrind"
missing=""
for p in $packages; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  # A mirror's passing hiccup retried rather than failing the whole run.
  apt-get -o Acquire::Retries=3 update -q >/dev/null
  apt-get -o Acquire::Retries=3 install -y -q $missing >/dev/null
fi
[ "${1:-}" = --packages-only ] && exit 0

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j "$(nproc)"
