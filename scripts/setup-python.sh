#!/usr/bin/env bash
# Creates the Python environment the Python tests use: a venv with NumPy and mpi4py running on the
# system MPICH, plus mpi4py's own test suite unpacked from its sdist.
#
#   scripts/setup-python.sh            -> $MCRPMPI_BUILD_DIR/python-venv (default build/python-venv)
#
# mpi4py is PyPI's wheel, as a pip user gets it. Its extension for the MPICH ABI needs libmpi.so.12,
# which its _mpiabi.py looks for first in the venv's lib/; Debian's MPICH has that ABI under the
# name libmpich.so.12, so the venv's lib/ gets an alias of the first name for it
# (scripts/soname-alias.sh). mpi4py opens the MPI library RTLD_LOCAL, and a preloaded libmcrpmpi.so
# interposes on it as on a linked one. MCRPMPI_MPI4PY_FROM=sdist compiles mpi4py against the system
# MPICH instead (one compiler process: the set-up took 6 min 11 s so on the 2-core machine, the
# wheel's 28 s); so does a Python that no wheel fits.
#
# Idempotent: when the venv already imports both packages on the system MPICH it returns at once.
# Versions can be overridden with MCRPMPI_MPI4PY_VERSION / MCRPMPI_NUMPY_SPEC.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
venv=$build/python-venv
mpi4py_version=${MCRPMPI_MPI4PY_VERSION:-4.1.2}
mpi4py_from=${MCRPMPI_MPI4PY_FROM:-wheel}
numpy_spec=${MCRPMPI_NUMPY_SPEC:-numpy}
sdist_dir=$venv/sdist
suite_dir=$venv/mpi4py-tests        # mpi4py's test/ directory, used by tests/python
from_stamp=$venv/mpi4py-from        # "WANTED GOT": the source asked for, and the one installed

python=${PYTHON:-python3}
vpy=$venv/bin/python

# Prints the MPI library files that importing mpi4py.MPI maps (nothing when the import fails).
mpi4py_mpi_libraries() {
  "$vpy" - <<'EOF' 2>/dev/null || true
from mpi4py import MPI  # noqa: F401 (loads the MPI library)
with open("/proc/self/maps") as maps:
    paths = {line.split()[-1] for line in maps if "/libmpi" in line}
print(" ".join(sorted(paths)))
EOF
}

# True when the venv is complete: NumPy, the right mpi4py from the wanted source on the system
# MPICH, and the test suite.
is_ready() {
  [ -x "$vpy" ] || return 1
  [ -f "$suite_dir/main.py" ] || return 1
  local wanted=""
  read -r wanted _ 2>/dev/null <"$from_stamp" || return 1
  [ "$wanted" = "$mpi4py_from" ] || return 1
  "$vpy" -c "import numpy, mpi4py; assert mpi4py.__version__ == '$mpi4py_version'" 2>/dev/null || return 1
  mpi4py_mpi_libraries | grep 'libmpich\.so\.12' >/dev/null
}

# System-wide CuPy / PyTorch (a GPU machine's) stay visible to the GPU tests; the venv's own NumPy
# and mpi4py come first on sys.path. MCRPMPI_PYTHON_SYSTEM_SITE=0 isolates the venv fully.
system_site=$([ "${MCRPMPI_PYTHON_SYSTEM_SITE:-1}" = 1 ] && echo true || echo false)
if [ -f "$venv/pyvenv.cfg" ]; then
  sed -i "s/^include-system-site-packages = .*/include-system-site-packages = $system_site/" "$venv/pyvenv.cfg"
fi

if is_ready; then
  read -r _ got <"$from_stamp"
  echo "setup-python: $venv is ready (mpi4py $mpi4py_version from its $got on $(mpi4py_mpi_libraries))"
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
rm -f "$from_stamp"

# The alias that lets the wheel find Debian's MPICH (harmless for an sdist build, which links it).
# shellcheck source=scripts/soname-alias.sh
source "$root/scripts/soname-alias.sh"
libmpich=$(mpicc -print-file-name=libmpich.so.12)
[ -e "$libmpich" ] || { echo "setup-python: the system MPICH's libmpich.so.12 not found" >&2; exit 1; }
mcrpmpi_soname_alias "$venv/lib/libmpi.so.12" "$libmpich"

# One sdist serves the test suite and, when mpi4py is compiled, the build.
mkdir -p "$sdist_dir"
sdist=$(ls "$sdist_dir"/mpi4py-"$mpi4py_version".tar.gz 2>/dev/null || true)
if [ -z "$sdist" ]; then
  "$vpy" -m pip download -q --no-binary mpi4py --no-deps -d "$sdist_dir" "mpi4py==$mpi4py_version"
  sdist=$(ls "$sdist_dir"/mpi4py-"$mpi4py_version".tar.gz)
fi
from=sdist
if [ "$mpi4py_from" = wheel ]; then
  if "$vpy" -m pip install -q --only-binary=mpi4py --force-reinstall --no-deps "mpi4py==$mpi4py_version"; then
    from=wheel
  else
    echo "setup-python: no mpi4py $mpi4py_version wheel for this Python; compiling its sdist" >&2
  fi
fi
if [ "$from" = sdist ]; then
  # --no-binary keeps pip from taking the wheel; MPICC selects the system MPICH.
  MPICC=mpicc "$vpy" -m pip install -q --no-binary=mpi4py --no-cache-dir --force-reinstall --no-deps "$sdist"
fi

rm -rf "$suite_dir" "$sdist_dir/mpi4py-$mpi4py_version"
tar -xzf "$sdist" -C "$sdist_dir" "mpi4py-$mpi4py_version/test"
mv "$sdist_dir/mpi4py-$mpi4py_version/test" "$suite_dir"
rmdir "$sdist_dir/mpi4py-$mpi4py_version"

libraries=$(mpi4py_mpi_libraries)
if ! grep 'libmpich\.so\.12' <<<"$libraries" >/dev/null; then
  echo "setup-python: mpi4py does not run on the system MPICH (it maps: ${libraries:-nothing, the import failed}):" >&2
  "$vpy" -c "from mpi4py import MPI" >&2 || true
  exit 1
fi
echo "$mpi4py_from $from" >"$from_stamp"
echo "setup-python: $venv ready: mpi4py $mpi4py_version from its $from on $libraries"
