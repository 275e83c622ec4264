# shellcheck shell=bash
# An MPI library under another soname (sourced by scripts/setup-python.sh and
# scripts/setup-abi-matrix.sh). The MPICH ABI has two sonames for one interface: Debian's MPICH is
# libmpich.so.12, the `mpich` and `impi-rt` wheels are libmpi.so.12. A symlink of the other name is
# not enough: the dynamic loader satisfies a DT_NEEDED entry with an object already loaded only when
# the names match its soname (or the name it was opened by), and a wheel's library finds its own
# libfabric/UCX through $ORIGIN, which comes from the directory of the path opened (the symlink's).
# So the alias is an empty library that carries the wanted soname and needs the real one: whatever
# opens or links the alias gets the real library from its own directory, its symbols visible
# through the alias as through the real one.
#
#   mcrpmpi_soname_alias OUTPUT TARGET [--runpath]
#     OUTPUT  the alias to write; its file name is its soname (libmpi.so.12)
#     TARGET  the real library (a path); the alias needs it by TARGET's own soname
#     --runpath  record TARGET's directory as the alias's RUNPATH (a library outside the loader's
#                search path, such as a wheel's)
# Uses $CC (default cc).
mcrpmpi_soname_alias() {
  local output=$1 target=$2 runpath=()
  [ "${3:-}" = --runpath ] && runpath=("-Wl,-rpath,$(dirname "$target")")
  mkdir -p "$(dirname "$output")"
  # An empty C source from stdin: the alias only carries its soname, DT_NEEDED and RUNPATH.
  echo "" | "${CC:-cc}" -shared -o "$output" -x c - -x none -Wl,-soname,"$(basename "$output")" \
    -Wl,--no-as-needed -L"$(dirname "$target")" -l:"$(basename "$target")" "${runpath[@]}"
}
