#!/usr/bin/env bash
# Runs the ABI matrix's tests of one wheel (ctest -R '^abi\.<mpi>\.', tests/abi) on other releases
# of that wheel than the one the matrix pins (scripts/setup-abi-matrix.sh): each release gets its own
# venv under OUT/<mpi>-<version>/ and its own ctest run, and a summary line. Not part of CI (each
# release costs a download and about 80 s of tests on two cores); for checking that the one
# libmcrpmpi.so serves the MPICH-ABI releases users have (docs/python-and-abi.md).
#
#   scripts/abi-wheel-versions.sh BUILD OUT MPI VERSION...
#     e.g. scripts/abi-wheel-versions.sh build /tmp/wheels mpich 4.0.3 4.1.3 4.2.3 4.3.2
# Exits 1 when any release's setup or tests failed.
set -uo pipefail
[ $# -ge 4 ] || { sed -n 2,10p "$0" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) || exit 2
out=$2 mpi=$3
shift 3
case "$mpi" in
  mpich) spec_variable=MCRPMPI_ABI_MPICH_SPEC package=mpich ;;
  impi) spec_variable=MCRPMPI_ABI_IMPI_SPEC package=impi-rt ;;
  *) echo "abi-wheel-versions: MPI must be mpich or impi" >&2; exit 2 ;;
esac
mkdir -p "$out"
failed=0
summary=()
for version in "$@"; do
  folder=$out/$mpi-$version
  if ! env "$spec_variable=$package==$version" MCRPMPI_BUILD_DIR="$folder" "$root/scripts/setup-abi-matrix.sh" "$mpi"; then
    summary+=("$mpi $version: setup failed")
    failed=1
    continue
  fi
  if (cd "$build" && MCRPMPI_ABI_MATRIX=$folder/abi-matrix ctest -j "$(nproc)" --timeout 300 --no-tests=error \
        -R "^abi\.$mpi\." --output-on-failure > "$folder/ctest.log" 2>&1); then
    summary+=("$mpi $version: $(grep -o '[0-9]*% tests passed.*' "$folder/ctest.log")")
  else
    summary+=("$mpi $version: FAILED, $(grep -o '[0-9]*% tests passed.*' "$folder/ctest.log") (see $folder/ctest.log)")
    failed=1
  fi
done
printf 'abi-wheel-versions: %s\n' "${summary[@]}"
exit "$failed"
