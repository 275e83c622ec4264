#!/usr/bin/env bash
# Runs every GPU test (ctest label gpu) on a machine with one or more GPUs. On one GPU the ranks share
# it through NCCL's socket transport (each rank its own NCCL_HOSTID, via rank-env.sh as MPIEXEC_PREFLAGS),
# under the CUDA MPS daemon (scripts/mps.sh): started after the build when nvidia-cuda-mps-control
# exists and the tests' ranks (up to 4) outnumber the GPUs, stopped at the end even on failure or
# Ctrl-C. MCRPMPI_MPS=0 runs without it, MCRPMPI_MPS=1 requires it. Tests labelled mps_unsafe (a rank
# killed with GPU work outstanding) run after the daemon is stopped.
# Usage: tests/gpu/run-gpu-suite.sh [build-dir] [extra ctest arguments, e.g. -R python]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
# shellcheck source=scripts/mps.sh
source "$root/scripts/mps.sh"
cmake -S "$root" -B "$build" -DMPIEXEC_PREFLAGS="$root/tests/gpu/rank-env.sh" >/dev/null
cmake --build "$build" -j "$(nproc)"
max_test_ranks=4
mcrpmpi_mps_begin "$max_test_ranks"
cd "$build"
status=0
ctest -L gpu -LE mps_unsafe --output-on-failure "$@" || status=$?
# Tests that kill a rank with GPU work outstanding (label mps_unsafe) poison an MPS daemon for every
# client: they run last, one at a time, with the daemon stopped.
mcrpmpi_mps_end
ctest -L mps_unsafe --output-on-failure "$@" || status=$?
exit $status
