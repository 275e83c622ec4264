#!/usr/bin/env bash
# Runs every GPU test (ctest label gpu) on a machine with one or more GPUs. On one GPU the ranks share
# it through NCCL's socket transport (each rank its own NCCL_HOSTID, via rank-env.sh as MPIEXEC_PREFLAGS).
# Usage: tests/gpu/run-gpu-suite.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cmake -S "$root" -B "$build" -DMPIEXEC_PREFLAGS="$root/tests/gpu/rank-env.sh" >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build" && ctest -L gpu --output-on-failure
