#!/usr/bin/env bash
# On the GPU machine (no network, Python with CuPy and PyTorch, no MPI): makes
# BUILD/python-venv/bin/python, a wrapper of the machine's python3 whose mpi4py runs on the unpacked
# MPICH, which is where tests/python looks. Then: ctest -L python -L gpu in BUILD. Needs
# use-build-deps.sh sourced first.
#
# Two routes, the quick one first:
# - the machine's own mpi4py, if it is a PyPI wheel: mpi4py 4's wheels carry an extension for the
#   MPICH ABI that needs `libmpi.so.12`, a name Debian's MPICH does not ship (its library is
#   `libmpich.so.12`, the same ABI). A link of that name in BUILD/python-libmpi, on the wrapper's
#   LD_LIBRARY_PATH, lets the wheel load the unpacked MPICH: a second, where building takes minutes.
# - else PyPI's wheel of mpi4py for the machine's Python, which fetch-build-deps.sh saved, unpacked
#   into BUILD/python-site (a second; the same link makes it load the unpacked MPICH);
# - else mpi4py built from the sdist that fetch-build-deps.sh saved (about 160 s on the H100
#   machine), into BUILD/python-site. `--no-build` skips this route: the script then fails, and the
#   Python tests skip, as they do without a venv.
# Usage: tests/gpu/python-venv-on-device.sh DEPS-DIR BUILD-DIR [--no-build]
set -euo pipefail
deps=$(cd "${1:?usage: python-venv-on-device.sh DEPS-DIR BUILD-DIR [--no-build]}" && pwd)
build=$(cd "${2:?usage: python-venv-on-device.sh DEPS-DIR BUILD-DIR [--no-build]}" && pwd)
may_build=1
[[ ${3:-} == --no-build ]] && may_build=0
libmpi=$build/python-libmpi site=$build/python-site python=$build/python-venv/bin/python
mkdir -p "$libmpi" "$build/python-venv/bin"
ln -sf "$(dirname "${MPICH_LIB:?source use-build-deps.sh first}")/libmpich.so.12" "$libmpi/libmpi.so.12"

# The wrapper: the sdist's build first on the module path (when there is one), the link on the
# library path (harmless for a build against libmpich.so.12), and mpi4py's wheel told which MPI to
# load: left to choose, it loaded the GPU machine's Open MPI (an `orted` that fails to start,
# 2026-11-27), whose `libmpi.so` its search tries before `libmpi.so.12`.
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} MPI4PY_MPIABI=mpich MPI4PY_LIBMPI=%s exec python3 "$@"\n' \
  "$libmpi" "$site" "$libmpi/libmpi.so.12" >"$python"
chmod +x "$python"
# Whether the wrapper's mpi4py runs on the unpacked MPICH (importing mpi4py.MPI initialises MPI as a
# singleton, as mpi4py does; no launcher needed). Bounded: a GPU session cannot spare a hang here.
runs_on_mpich() {
  timeout 60 "$python" -c "import mpi4py, mpi4py.MPI as MPI, sys
version = MPI.Get_library_version()
print('mpi4py', mpi4py.__version__, 'from', mpi4py.__file__, 'on', version.split(chr(10))[0])
sys.exit(0 if version.startswith('MPICH') else 1)"
}

# No wrapper is left behind that cannot import mpi4py: the Python tests then skip instead of failing.
give_up() {
  rm -f "$python"
  echo "python-venv-on-device: $1" >&2
  exit 1
}

# Every Python test imports NumPy (the GPU machine's Python has it, beside CuPy and PyTorch); a
# Python without it, such as a CPU machine's rehearsing this, gets no wrapper, so the tests skip.
python3 -c 'import numpy' 2>/dev/null || give_up "the machine's python3 has no NumPy, which the Python tests need"
# What decides which MPI an mpi4py loads, for the log when none runs on MPICH.
env | grep -E '^(MPI4PY_|OMPI_|LD_LIBRARY_PATH=|PYTHONPATH=)' | sed 's/^/python-venv-on-device: environment: /' >&2 || true
runs_on_mpich && exit 0
tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
for wheel in "$deps"/py/mpi4py-*-"$tag"-*.whl; do
  [[ -f $wheel ]] || continue
  echo "python-venv-on-device: unpacking $(basename "$wheel")" >&2
  rm -rf "$site" && mkdir -p "$site"
  python3 -m zipfile -e "$wheel" "$site" && runs_on_mpich && exit 0
  rm -rf "$site"
done
((may_build)) || give_up "the machine's Python has no mpi4py that runs on MPICH; not building (--no-build)"
echo "python-venv-on-device: building mpi4py from the saved sdist"
(cd /tmp && MPICC=mpicc python3 -m pip install -q --no-index --no-build-isolation --no-deps --target "$site" \
   "$deps"/py/mpi4py-*.tar.gz) || give_up "building mpi4py failed"
runs_on_mpich || give_up "the mpi4py built does not run on MPICH"
