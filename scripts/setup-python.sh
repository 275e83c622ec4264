#!/usr/bin/env bash
# Creates the Python environment the Python tests use: a venv with NumPy and mpi4py compiled from
# its sdist against the system MPICH (so mpi4py links libmpich.so.12 and the library can interpose
# on it), plus mpi4py's own test suite unpacked from the same sdist.
#
#   scripts/setup-python.sh            -> $MCRPMPI_BUILD_DIR/python-venv (default build/python-venv)
#
# Idempotent: when the venv already imports both packages against MPICH it returns at once.
# Versions can be overridden with MCRPMPI_MPI4PY_VERSION / MCRPMPI_NUMPY_SPEC.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
venv=$build/python-venv
mpi4py_version=${MCRPMPI_MPI4PY_VERSION:-4.1.2}
numpy_spec=${MCRPMPI_NUMPY_SPEC:-numpy}
sdist_dir=$venv/sdist
suite_dir=$venv/mpi4py-tests        # mpi4py's test/ directory, used by tests/python

python=${PYTHON:-python3}
vpy=$venv/bin/python

# Prints the path of mpi4py's compiled MPI extension (empty when mpi4py is missing).
mpi4py_extension() {
  "$vpy" - <<'EOF' 2>/dev/null || true
import importlib.util, mpi4py, os
spec = importlib.util.find_spec("mpi4py.MPI")
print(spec.origin if spec else "")
EOF
}

# True when the venv is complete: right mpi4py version, linked against MPICH, NumPy, test suite.
is_ready() {
  [ -x "$vpy" ] || return 1
  [ -f "$suite_dir/main.py" ] || return 1
  "$vpy" -c "import numpy, mpi4py; assert mpi4py.__version__ == '$mpi4py_version'" 2>/dev/null || return 1
  local ext
  ext=$(mpi4py_extension)
  [ -n "$ext" ] && ldd "$ext" | grep 'libmpich\.so\.12' >/dev/null
}

# System-wide CuPy / PyTorch (a GPU machine's) stay visible to the GPU tests; the venv's own NumPy
# and mpi4py come first on sys.path. MCRPMPI_PYTHON_SYSTEM_SITE=0 isolates the venv fully.
system_site=$([ "${MCRPMPI_PYTHON_SYSTEM_SITE:-1}" = 1 ] && echo true || echo false)
if [ -f "$venv/pyvenv.cfg" ]; then
  sed -i "s/^include-system-site-packages = .*/include-system-site-packages = $system_site/" "$venv/pyvenv.cfg"
fi

if is_ready; then
  echo "setup-python: $venv is ready (mpi4py $mpi4py_version against $(ldd "$(mpi4py_extension)" | grep -o '/[^ ]*libmpich\.so\.12'))"
  exit 0
fi

command -v mpicc >/dev/null || { echo "setup-python: mpicc not found (run scripts/setup.sh first)" >&2; exit 1; }
if [ ! -x "$vpy" ]; then
  venv_options=()
  [ "$system_site" = true ] && venv_options+=(--system-site-packages)
  "$python" -m venv "${venv_options[@]}" "$venv"
fi
"$vpy" -m pip install -q --upgrade pip setuptools wheel
"$vpy" -m pip install -q "$numpy_spec"

# One sdist serves both the build and the test suite.
mkdir -p "$sdist_dir"
sdist=$(ls "$sdist_dir"/mpi4py-"$mpi4py_version".tar.gz 2>/dev/null || true)
if [ -z "$sdist" ]; then
  "$vpy" -m pip download -q --no-binary mpi4py --no-deps -d "$sdist_dir" "mpi4py==$mpi4py_version"
  sdist=$(ls "$sdist_dir"/mpi4py-"$mpi4py_version".tar.gz)
fi
# --no-binary keeps pip from taking a wheel with its own bundled MPI; MPICC selects the system MPICH.
MPICC=mpicc "$vpy" -m pip install -q --no-binary=mpi4py --no-cache-dir --force-reinstall --no-deps "$sdist"

rm -rf "$suite_dir" "$sdist_dir/mpi4py-$mpi4py_version"
tar -xzf "$sdist" -C "$sdist_dir" "mpi4py-$mpi4py_version/test"
mv "$sdist_dir/mpi4py-$mpi4py_version/test" "$suite_dir"
rmdir "$sdist_dir/mpi4py-$mpi4py_version"

ext=$(mpi4py_extension)
if ! ldd "$ext" | grep 'libmpich\.so\.12' >/dev/null; then
  echo "setup-python: $ext does not link libmpich.so.12:" >&2
  ldd "$ext" >&2
  exit 1
fi
echo "setup-python: $venv ready: mpi4py $mpi4py_version ($ext -> $(ldd "$ext" | grep -o '/[^ ]*libmpich\.so\.12'))"
