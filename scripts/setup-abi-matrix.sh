#!/usr/bin/env bash
# Prepares the MPI libraries of the ABI matrix (ctest -L abi; docs/python-and-abi.md, "MPI libraries (ABI)"): for each
# pip-installed MPICH-ABI MPI a venv with that MPI's wheel, the mpi4py wheel and NumPy, and a shim
# directory that lets the test programs (linked against Debian's libmpich.so.12) run on it.
#
#   scripts/setup-abi-matrix.sh [mpich] [impi]     (default: both)
#     -> $MCRPMPI_BUILD_DIR/abi-matrix/<name>/{venv,shim,env.sh}   (default build/abi-matrix)
#
# Idempotent and cached in the build directory: a second run only checks the stamp files. Debian's
# MPICH (the system MPI) needs nothing here. Wheel versions: MCRPMPI_ABI_MPICH_SPEC,
# MCRPMPI_ABI_IMPI_SPEC, MCRPMPI_ABI_MPI4PY_SPEC.
#
# The shim: the test programs need libmpich.so.12 (Debian's soname). The shim directory holds an
# alias of that name for the wheel's libmpi.so.12 (scripts/soname-alias.sh, with the wheel's lib/ as
# RUNPATH): the wheel's library is then opened from its own directory, and its symbols are in the
# program's global scope as Debian's would be. The same test binaries thus run on every MPI, unchanged.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_BUILD_DIR:-$root/build}
matrix=$build/abi-matrix
python=${PYTHON:-python3}
mpi4py_spec=${MCRPMPI_ABI_MPI4PY_SPEC:-mpi4py==4.1.2}
# shellcheck source=scripts/soname-alias.sh
source "$root/scripts/soname-alias.sh"

# The versions the matrix was tested with, pinned so that a fresh clone tests what the documentation
# names (docs/python-and-abi.md): a wildcard moves when PyPI does. impi-rt 2021.19.0 (on PyPI by
# 2026-12-01) requires the `libfabric` package, which PyPI does not have: under `2021.*` pip fetched
# its 129 MB wheel at every setup and then fell back to 2021.18.1.
wheel_spec() {
  case "$1" in
    mpich) echo "${MCRPMPI_ABI_MPICH_SPEC:-mpich==5.0.2}" ;;
    impi) echo "${MCRPMPI_ABI_IMPI_SPEC:-impi-rt==2021.18.1}" ;;
    *) echo "setup-abi-matrix: unknown MPI '$1' (known: mpich impi)" >&2; exit 2 ;;
  esac
}

# Environment every rank of that MPI gets (written to env.sh; docs/python-and-abi.md says why).
rank_environment() {
  case "$1" in
    # Intel MPI on one node of a container: shared memory only (no network provider to probe).
    # Its default MPI_Allgather algorithm on 2-rank communicators returns wrong data when the send
    # type is strided (MPI_Type_vector, count 1000; with or without the library): algorithm 1
    # (recursive doubling) is correct, so the matrix uses it (docs/python-and-abi.md lists the defect).
    impi) echo "export I_MPI_FABRICS=shm I_MPI_ADJUST_ALLGATHER=1" ;;
  esac
}

setup_one() {
  local name=$1 spec stamp dir venv shim want
  spec=$(wheel_spec "$name")
  dir=$matrix/$name
  venv=$dir/venv
  shim=$dir/shim
  stamp=$dir/ready
  want="$spec $mpi4py_spec numpy $(rank_environment "$name")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ] \
     && [ -e "$shim/libmpich.so.12" ]; then
    echo "setup-abi-matrix: $name ready ($(grep -o 'version .*' "$dir/env.sh" | head -1))"
    return 0
  fi
  rm -f "$stamp"
  mkdir -p "$dir"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  # The mpi4py wheel (not the sdist): the pip user's route, built for both MPI ABIs.
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$spec" "$mpi4py_spec" numpy
  local libmpi=$venv/lib/libmpi.so.12
  [ -e "$libmpi" ] || { echo "setup-abi-matrix: $spec installed no $libmpi" >&2; return 1; }
  local launcher=$venv/bin/mpiexec
  [ -x "$launcher" ] || { echo "setup-abi-matrix: $spec installed no $launcher" >&2; return 1; }

  mcrpmpi_soname_alias "$shim/libmpich.so.12" "$libmpi" --runpath

  local version
  version=$("$venv/bin/python" -m pip show "${spec%%[=<>]*}" 2>/dev/null | sed -n 's/^Version: //p')
  {
    echo "# Written by scripts/setup-abi-matrix.sh: $name $spec, version $version"
    echo "export MCRPMPI_ABI_NAME=$name MCRPMPI_ABI_VERSION=$version"
    echo "export MCRPMPI_ABI_VENV=$venv MCRPMPI_ABI_LIBMPI=$libmpi MCRPMPI_ABI_MPIEXEC=$launcher"
    echo "export MCRPMPI_ABI_SHIM=$shim"
    rank_environment "$name"
  } > "$dir/env.sh"
  echo "$want" > "$stamp"
  echo "setup-abi-matrix: $name ready: $spec (version $version) in $venv"
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(mpich impi)
status=0
for name in "${names[@]}"; do
  mkdir -p "$matrix/$name"
  errors=$matrix/$name/setup-errors
  if setup_one "$name" 2>"$errors"; then
    rm -f "$matrix/$name/setup-failed" "$errors"
  else
    # Kept for the tests (tests/abi/run_on_mpi.sh), which then fail with this text.
    cat "$errors" >&2
    echo "setup-abi-matrix: $name could not be set up" >&2
    mv "$errors" "$matrix/$name/setup-failed"
    status=1
  fi
done
exit $status
