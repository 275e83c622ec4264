#!/usr/bin/env bash
# Runs every GPU test (ctest label gpu) on a machine with one or more GPUs. On one GPU the ranks share
# it through NCCL's socket transport (each rank its own NCCL_HOSTID, via rank-env.sh as MPIEXEC_PREFLAGS),
# under the CUDA MPS daemon (scripts/mps.sh): started after the build when nvidia-cuda-mps-control
# exists and the tests' ranks (up to 4) outnumber the GPUs, stopped at the end even on failure or
# Ctrl-C. MCRPMPI_MPS=0 runs without it, MCRPMPI_MPS=1 requires it. Tests labelled mps_unsafe (a rank
# killed with GPU work outstanding) run first, before the daemon starts.
# MCRPMPI_SUITE_LOGS=DIR keeps what a batch session needs to study a failure afterwards: every test's
# whole output (ctest's LastTest.log of each ctest run: tests-gpu.log, tests-mps-unsafe.log) and the
# host stacks of every rank still running 30 s before its test's timeout (MCRPMPI_STACKS_AFTER=S: after
# S seconds instead; watchers started by rank-env.sh) in DIR/hang-stacks.txt -- also when the suite
# is stopped from outside.
# Usage: tests/gpu/run-gpu-suite.sh [build-dir] [extra ctest arguments, e.g. -R python]
#        tests/gpu/run-gpu-suite.sh build-dir --build-only   (configure and build the suite's tree, no tests)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
# shellcheck source=scripts/mps.sh
source "$root/scripts/mps.sh"
cmake -S "$root" -B "$build" -DMPIEXEC_PREFLAGS="$root/tests/gpu/rank-env.sh" \
  ${MCRPMPI_GPU_TEST_TIMEOUT:+-DMCRPMPI_GPU_TEST_TIMEOUT=$MCRPMPI_GPU_TEST_TIMEOUT} >/dev/null
cmake --build "$build" -j "$(nproc)"
build=$(cd "$build" && pwd)  # absolute: keep_logs runs after the cd below, and from the EXIT trap
[[ ${1:-} == --build-only ]] && exit 0
max_test_ranks=4
logs=${MCRPMPI_SUITE_LOGS:-}
if [[ -n $logs ]]; then
  mkdir -p "$logs"
  logs=$(cd "$logs" && pwd)
  MCRPMPI_STACKS_DIR=$(mktemp -d /tmp/mcrpmpi-stacks.XXXXXX)
  export MCRPMPI_STACKS_DIR
fi
log_name=tests-gpu.log
ctest_logs=$build/Testing/Temporary
# Copies the ctest run's log and any stacks to $logs; from the EXIT trap too, so a suite stopped by a
# timeout still leaves them. ctest writes LastTest.log.tmp while it runs and renames it at the end;
# each run starts without either, so what is copied is never an earlier run's.
keep_logs() {
  [[ -n $logs ]] || return 0
  if [[ -f $ctest_logs/LastTest.log.tmp ]]; then
    cp "$ctest_logs/LastTest.log.tmp" "$logs/$log_name"
  elif [[ -f $ctest_logs/LastTest.log ]]; then
    cp "$ctest_logs/LastTest.log" "$logs/$log_name"
  fi
  if compgen -G "$MCRPMPI_STACKS_DIR/*" >/dev/null; then
    cat "$MCRPMPI_STACKS_DIR"/* >"$logs/hang-stacks.txt"
    echo "run-gpu-suite: host stacks of ranks still running near their timeout: $logs/hang-stacks.txt"
  fi
}
trap 'keep_logs; mcrpmpi_mps_end' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$build"
status=0
# Tests that kill a rank with GPU work outstanding (label mps_unsafe) poison an MPS daemon for every
# client: they run one at a time before the daemon starts. First, since they take seconds: on the
# H200 (2026-11-28) a suite cut by its caller's time limit lost them when they ran last.
log_name=tests-mps-unsafe.log
rm -f "$ctest_logs"/LastTest.log*
ctest -L mps_unsafe --output-on-failure "$@" || status=$?
keep_logs
mcrpmpi_mps_begin "$max_test_ranks"
log_name=tests-gpu.log
rm -f "$ctest_logs"/LastTest.log*
ctest -L gpu -LE mps_unsafe --output-on-failure "$@" || status=$?
exit $status
