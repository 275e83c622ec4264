#!/usr/bin/env bash
# Builds Horovod 0.28.1 from its PyPI sdist into the Python venv, for a GPU machine that has
# PyTorch (with CUDA) and the base MPICH: GPU operations set to MPI, so Horovod's allreduce,
# allgather, broadcast and alltoall on CUDA tensors are MPI calls on device pointers, which
# libmcrpmpi routes to NCCL. Horovod's own NCCL support stays off, on purpose.
#
#   scripts/build-horovod.sh            (after scripts/setup-python.sh; needs torch importable)
#   scripts/mcrpmpirun --stats -n 2 python your_horovod_script.py
#
# Not run in CI: it needs torch, which is not installed there. Record the outcome (or the errors
# and the smallest patch) in the README.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
vpy=$build/python-venv/bin/python
[ -x "$vpy" ] || { echo "build-horovod: no venv at $build/python-venv (run scripts/setup-python.sh)" >&2; exit 1; }
"$vpy" -c "import torch" 2>/dev/null || { echo "build-horovod: torch is not importable from $vpy" >&2; exit 1; }
command -v cmake >/dev/null && command -v mpicc >/dev/null || { echo "build-horovod: needs cmake and mpicc" >&2; exit 1; }

export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 HOROVOD_WITHOUT_GLOO=1
export HOROVOD_WITH_MPI=1 HOROVOD_GPU_OPERATIONS=MPI HOROVOD_CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export MAKEFLAGS="-j$(nproc)"
# --no-build-isolation: Horovod's setup.py must see the installed torch to build its extension.
"$vpy" -m pip install -v --no-build-isolation --no-cache-dir "horovod[pytorch]==0.28.1" 2>&1 |
  tee "$build/horovod-build.log" | grep -E "error|Error|Successfully" || true
"$vpy" -c "import horovod.torch as hvd; print('horovod', hvd.__version__, 'mpi built:', hvd.mpi_built(), 'gpu ops MPI')"
