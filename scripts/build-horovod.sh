#!/usr/bin/env bash
# Builds Horovod 0.28.1 from its PyPI sdist into a Python venv that has PyTorch, against the base
# MPICH, with Horovod's collectives set to MPI (its NCCL and Gloo stay off, on purpose):
#   - torch.cuda.is_available(): HOROVOD_GPU_OPERATIONS=MPI, so allreduce/allgather/broadcast/
#     alltoall on CUDA tensors are MPI calls on device pointers, which libmcrpmpi routes to NCCL;
#   - otherwise (CPU machine): HOROVOD_CPU_OPERATIONS=MPI only.
# Set HOROVOD_GPU_OPERATIONS / HOROVOD_CPU_OPERATIONS yourself to override that choice.
#
#   scripts/build-horovod.sh [--force]      (needs torch importable from the venv python)
#   scripts/mcrpmpirun --stats -n 2 "$python" examples/horovod_train.py
#
# Python: $MCRPMPI_PYTHON, else $MCRPMPI_BUILD_DIR/python-venv/bin/python (default build/).
# Work files (sdist, patched source tree with its incremental build, log) go to
# $MCRPMPI_BUILD_DIR/horovod. Idempotent: returns at once when horovod 0.28.1 with MPI imports.
#
# Patch: Horovod 0.28.1 compiles its PyTorch extension as C++14 (horovod/torch/CMakeLists.txt:
# set(CMAKE_CXX_STANDARD 14)); today's PyTorch headers need more. Unpatched, against torch 2.15.0
# the first error is c10/util/StringUtil.h:65: 'is_enum_v' is not a member of 'std' (then
# 'std::optional' / 'std::string_view' "only available from C++17 onwards"); with C++17 it is
# c10/core/DispatchKeySet.h:445: 'bit_width' is not a member of 'std' and c10/util/intrusive_ptr.h:
# 'strong_ordering' in namespace 'std' does not name a type (C++20). One sed sets the standard that
# torch's own cpp_extension uses for extensions (-std=c++20 or -std=c++17, read from its source).
#
# Not run in CI: it needs torch, which is not installed there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
vpy=${MCRPMPI_PYTHON:-$build/python-venv/bin/python}
version=0.28.1
work=$build/horovod
log=$work/build.log
force=0
[ "${1:-}" = "--force" ] && force=1

die() { echo "build-horovod: $*" >&2; exit 1; }
[ -x "$vpy" ] || die "no python at $vpy (set MCRPMPI_PYTHON or run scripts/setup-python.sh)"
"$vpy" -c "import torch" 2>/dev/null || die "torch is not importable from $vpy"
command -v cmake >/dev/null && command -v mpicc >/dev/null || die "needs cmake and mpicc on PATH"

report() {
  "$vpy" -c "import torch, horovod, horovod.torch as hvd; print('horovod', horovod.__version__, 'torch', torch.__version__, \
'mpi_built', hvd.mpi_built(), 'cuda_built', hvd.cuda_built(), 'nccl_built', hvd.nccl_built(), 'gloo_built', hvd.gloo_built())"
}
if [ "$force" = 0 ] && "$vpy" -c "import horovod, horovod.torch as hvd; assert horovod.__version__ == '$version' and hvd.mpi_built()" 2>/dev/null; then
  echo "build-horovod: already installed"; report; exit 0
fi

# Source: the PyPI sdist, unpacked once; the patch is applied to the unpacked tree (idempotent sed).
mkdir -p "$work"
src=$work/horovod-$version
if [ ! -f "$src/setup.py" ]; then
  "$vpy" -m pip download --quiet --no-binary :all: --no-deps --dest "$work" "horovod==$version"
  tar xzf "$work/horovod-$version.tar.gz" -C "$work"
fi
cxx_standard=$("$vpy" -c "import inspect, torch.utils.cpp_extension as e; print(20 if 'c++20' in inspect.getsource(e) else 17)" 2>/dev/null)
sed -i "s/^\(\s*\)set(CMAKE_CXX_STANDARD [0-9]*)\$/\1set(CMAKE_CXX_STANDARD $cxx_standard)/" "$src/horovod/torch/CMakeLists.txt"
grep -q "set(CMAKE_CXX_STANDARD $cxx_standard)" "$src/horovod/torch/CMakeLists.txt" || die "C++$cxx_standard patch did not apply"

export MPICC=${MPICC:-mpicc}
export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 HOROVOD_WITHOUT_GLOO=1
export HOROVOD_WITH_MPI=1 HOROVOD_CPU_OPERATIONS=${HOROVOD_CPU_OPERATIONS:-MPI}
if [ -z "${HOROVOD_GPU_OPERATIONS:-}" ] && "$vpy" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
  export HOROVOD_GPU_OPERATIONS=MPI
fi
[ -n "${HOROVOD_GPU_OPERATIONS:-}" ] && export HOROVOD_CUDA_HOME=${HOROVOD_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}
export MAKEFLAGS=${MAKEFLAGS:--j$(nproc)}
echo "build-horovod: C++$cxx_standard, CPU ops ${HOROVOD_CPU_OPERATIONS}, GPU ops ${HOROVOD_GPU_OPERATIONS:-none}; log $log"

# --no-build-isolation: setup.py must see the installed torch; a local directory builds in-tree,
# so a second run after a failure only recompiles what changed.
if ! "$vpy" -m pip install -v --no-build-isolation --no-cache-dir "$src" >"$log" 2>&1; then
  grep -m 20 -E '(error|Error):' "$log" >&2 || true
  die "pip install failed; full log in $log"
fi
report
