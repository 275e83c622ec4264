#!/usr/bin/env bash
# On the GPU machine (no network, Python with CuPy and PyTorch but no mpi4py built for MPICH):
# builds mpi4py from the sdist that fetch-build-deps.sh saved (about 160 s on the H100 machine) and
# makes BUILD/python-venv/bin/python a wrapper of the machine's python3 that sees it, which is where
# tests/python looks. Then: ctest -L python -L gpu in BUILD. Needs use-build-deps.sh sourced first.
# Usage: tests/gpu/python-venv-on-device.sh DEPS-DIR BUILD-DIR
set -euo pipefail
deps=$(cd "${1:?usage: python-venv-on-device.sh DEPS-DIR BUILD-DIR}" && pwd)
build=$(cd "${2:?usage: python-venv-on-device.sh DEPS-DIR BUILD-DIR}" && pwd)
site=$build/python-site
if [ ! -d "$site/mpi4py" ]; then
  (cd /tmp && MPICC=mpicc python3 -m pip install -q --no-index --no-build-isolation --no-deps --target "$site" \
     "$deps"/py/mpi4py-*.tar.gz)
fi
mkdir -p "$build/python-venv/bin"
printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec python3 "$@"\n' "$site" > "$build/python-venv/bin/python"
chmod +x "$build/python-venv/bin/python"
"$build/python-venv/bin/python" -c "import mpi4py.MPI as MPI; print('mpi4py on', MPI.Get_library_version().split(chr(10))[0])"
