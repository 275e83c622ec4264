#!/usr/bin/env bash
# run_on_mpi.sh MATRIX MPI LIBRARY MODE NP [--python] [--env VAR=VALUE]... -- PROGRAM [ARGS...]
#
# Runs PROGRAM on NP ranks of one MPI of the ABI matrix, with that MPI's own launcher, and checks
# that libmcrpmpi.so bound that MPI (docs/python-and-abi.md, "MPI libraries (ABI)").
#   MATRIX  the directory made by scripts/setup-abi-matrix.sh (build/abi-matrix)
#   MPI     debian (the system MPICH and its mpiexec), mpich or impi (the pip wheels)
#   MODE    preload: LIBRARY is preloaded into the ranks; linked: PROGRAM links it itself;
#           plain: no library (checks the test program itself on that MPI)
#   --python  PROGRAM is a Python script, run by that MPI's venv (mpi4py wheel + NumPy); for debian
#             by the build's python-venv (mpi4py's wheel on Debian's libmpich.so.12)
#
# Test programs are linked against Debian's libmpich.so.12: for a wheel, the shim directory of
# setup-abi-matrix.sh on LD_LIBRARY_PATH makes that soname load the wheel's libmpi.so.12.
# A skip (exit 77) of the program counts as a failure here: in this matrix nothing may be missing
# (a Python test skips when mpi4py does not import, which is the defect this matrix guards against).
set -uo pipefail
[ $# -ge 6 ] || { sed -n 2,18p "$0" >&2; exit 2; }
matrix=$1 mpi=$2 library=$3 mode=$4 np=$5
shift 5
# Another matrix folder for the wheels (scripts/abi-wheel-versions.sh: other releases of a wheel).
[ "$mpi" != debian ] && matrix=${MCRPMPI_ABI_MATRIX:-$matrix}
python_program=0
rank_env=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --python) python_program=1; shift ;;
    --env) rank_env+=(-genv "${2%%=*}" "${2#*=}"); shift 2 ;;
    *) echo "run_on_mpi: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "run_on_mpi: no program" >&2; exit 2; }

build=$(dirname "$matrix")  # the matrix folder lives in the build folder (it may not exist yet for debian)
if [ "$mpi" = debian ]; then
  launcher=$(command -v mpiexec.hydra || command -v mpiexec)
  python=$build/python-venv/bin/python
  expected_library='/.*/libmpich[.]so[.]12'
else
  if [ ! -f "$matrix/$mpi/env.sh" ]; then
    # scripts/test.sh (CI) always runs the setup: there a failed setup fails the tests. A bare ctest
    # in a build where the setup never ran skips, saying how to set it up.
    if [ -f "$matrix/$mpi/setup-failed" ]; then
      echo "FAIL: scripts/setup-abi-matrix.sh could not set up $mpi:"
      cat "$matrix/$mpi/setup-failed"
      exit 1
    fi
    echo "SKIP: $matrix/$mpi is not set up: run scripts/setup-abi-matrix.sh (pip access to PyPI)"
    exit 77
  fi
  # shellcheck source=/dev/null
  source "$matrix/$mpi/env.sh"
  launcher=$MCRPMPI_ABI_MPIEXEC
  python=$MCRPMPI_ABI_VENV/bin/python
  export LD_LIBRARY_PATH=$MCRPMPI_ABI_SHIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  expected_library="$MCRPMPI_ABI_VENV/lib/libmpi[.]so"
fi
if [ "$python_program" = 1 ] && [ ! -x "$python" ]; then
  echo "SKIP: no Python venv at $python (run scripts/setup-python.sh, or scripts/setup-abi-matrix.sh)"
  exit 77
fi
command=("$@")
[ "$python_program" = 1 ] && command=("$python" "${command[@]}")

genv=(-genv MCRPMPI_SHOW_BASE_MPI 1 "${rank_env[@]}")
case "$mode" in
  preload) genv+=(-genv LD_PRELOAD "$(readlink -f "$library")") ;;
  linked|plain) ;;
  *) echo "run_on_mpi: MODE must be preload, linked or plain" >&2; exit 2 ;;
esac

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "run_on_mpi: $mpi ($launcher), $mode, $np ranks: ${command[*]}"
# The launcher itself never gets the library (only the ranks, through -genv).
env -u LD_PRELOAD "$launcher" -n "$np" "${genv[@]}" "${command[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" = 77 ]; then  # the program's own skip, not the missing set-up above
  echo "FAIL: the program skipped (exit 77), which the ABI matrix does not accept"
  exit 1
fi
[ "$status" = 0 ] || { echo "FAIL: exit status $status"; exit 1; }
if [ "$mode" != plain ]; then
  if ! grep -E "^mcrpmpi: base MPI ${expected_library}" "$log" >/dev/null; then
    echo "FAIL: libmcrpmpi.so did not report binding ${expected_library} (MCRPMPI_SHOW_BASE_MPI)"
    exit 1
  fi
fi
exit 0
