#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, then runs the bundled OSU-style
# allreduce benchmark on 2 ranks through the library (device buffers when a GPU is present) and
# prints the library's stats report. With device buffers the 2 ranks may share one GPU: scripts/with-mps
# then runs them under the CUDA MPS daemon (MCRPMPI_MPS=0 to refuse).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
buffers=host
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then buffers=cuda; fi
echo "running osu_allreduce on 2 ranks through libmcrpmpi ($buffers buffers)"
mps=()
if [[ $buffers == cuda ]]; then mps=("$root/scripts/with-mps" --ranks 2 --); fi
exec "${mps[@]}" mpiexec -n 2 -genv LD_PRELOAD "$build/pmpi/libmcrpmpi.so" -genv MCRPMPI_STATS 1 \
  -genv MCRPMPI_SELECT_DEVICE 1 "$root/tests/gpu/rank-env.sh" \
  "$build/osu/osu_allreduce" -d "$buffers" -m 8:1048576 -c
