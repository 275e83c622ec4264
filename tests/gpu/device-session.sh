#!/usr/bin/env bash
# One device command for a GPU session, whose device time is short (15 minutes in all, a command at
# most 10, the machine's start included): builds build-gpu, takes the figures (measure-figures.sh
# --short, bounded by FIG_BUDGET seconds), runs the whole GPU suite in the time left (the Python
# tests too when the machine's mpi4py can run on MPICH: python-venv-on-device.sh; every test's
# output and any hang's host stacks kept: run-gpu-suite.sh's MCRPMPI_SUITE_LOGS), and packs every
# log into OUTDIR/session-logs.tar.gz, since the device tool brings back at most 8 files. Prints the
# figures' summary and the suite's result lines.
# Usage, on the GPU machine from the repository root (carry .gpu, made by fetch-build-deps.sh):
#   tests/gpu/device-session.sh OUTDIR [SECONDS (565)] [PART...]
# PARTs: measure-figures.sh's (default: profile kinds host collectives-np2 p2p: the short decisive ones
# first, so that a part cut by FIG_BUDGET, 290 s, is the last and longest, its log kept to the cut).
# FIG_OPTIONS: measure-figures.sh's options (default --short); `--fake --quick` rehearses the whole
# command on a CPU machine, where the GPU tests skip (docs/gpu-validation.md).
set -uo pipefail
out=${1:?usage: device-session.sh OUTDIR [SECONDS] [PART...]}
end=${2:-565}
shift 2 2>/dev/null || shift $#
parts=("$@")
((${#parts[@]})) || parts=(profile kinds host collectives-np2 p2p)
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
export PYTHONUNBUFFERED=1
# A hung GPU test spends its limit: 200 s here instead of 300 (the slowest passing one, memory_flat,
# took 135 s on the H200 with 8 tests at once).
export MCRPMPI_GPU_TEST_TIMEOUT=${MCRPMPI_GPU_TEST_TIMEOUT:-200}
mkdir -p "$out/logs/suite"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# shellcheck source=/dev/null
source .gpu/use-build-deps.sh >"$out/logs/setup.log" 2>&1 || { tail -30 "$out/logs/setup.log"; exit 1; }
# The suite's own configuration, so that its run later rebuilds nothing.
if ! tests/gpu/run-gpu-suite.sh build-gpu --build-only >>"$out/logs/setup.log" 2>&1; then
  tail -60 "$out/logs/setup.log"
  exit 1
fi
echo "build done at $SECONDS s"
# The Python GPU tests join the suite when the machine's own mpi4py, or the PyPI wheel that
# fetch-build-deps.sh saved for its Python, runs on the unpacked MPICH (a second); building mpi4py
# instead takes minutes this command does not have.
suite_filter=(-E python)
if found=$(tests/gpu/python-venv-on-device.sh .gpu build-gpu --no-build 2>>"$out/logs/setup.log"); then
  suite_filter=()
  echo "python tests in the suite: $found"
else
  echo "python tests left out: $(tail -1 "$out/logs/setup.log")"
fi
read -r -a fig_options <<<"${FIG_OPTIONS:---short}"
MCRPMPI_FIGURES_BUDGET=${FIG_BUDGET:-290} tests/gpu/measure-figures.sh "${fig_options[@]}" build-gpu "$out/logs/figures" "${parts[@]}"
echo "figures done at $SECONDS s"
left=$((end - SECONDS))
if ((left >= 30)); then
  echo "the suite gets $left s"
  MCRPMPI_SUITE_LOGS=$out/logs/suite timeout -k 10 "$left" tests/gpu/run-gpu-suite.sh build-gpu "${suite_filter[@]}" -j8 --timeout 120 \
    >"$out/logs/suite/console.log" 2>&1
  echo "suite exit $? at $SECONDS s"
else
  # A build slower than planned (a rehearsal on two busy cores took 46 minutes) leaves no time:
  # say so, where timeout(1) would refuse a negative limit with a bare status 125.
  echo "the suite not run: $left s left of $end" | tee "$out/logs/suite/console.log"
fi
# Failures and the totals; skipped tests only counted (where no GPU exists every one skips).
grep -E 'tests passed|\*\*\*(Failed|Timeout|Exception)|run-gpu-suite:' "$out/logs/suite/console.log" | head -40
echo "skipped: $(grep -c '\*\*\*Skipped' "$out/logs/suite/console.log")"
tar -czf "$out/session-logs.tar.gz" -C "$out" logs && rm -rf "$out/logs"
