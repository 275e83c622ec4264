#!/usr/bin/env bash
# check_library_symbols.sh LIBRARY: libmcrpmpi.so binds its MPI at run time (docs/python-and-abi.md,
# "MPI libraries (ABI)"), so it must not name one: no MPI library in DT_NEEDED, no undefined MPI symbol (each would
# be resolved in the global scope, where mpi4py's privately opened MPI is not), and none of the
# symbols mpi4py probes to decide that an MPI is already loaded (MPI_Get_version) among its exports.
set -uo pipefail
library=$1
failed=0
fail() { echo "FAIL: $*"; failed=1; }
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "DT_NEEDED: $(echo $needed)"
echo "$needed" | grep -E '^lib(mpi|mpich|mpi_abi)[._]' && fail "links an MPI library"
undefined=$(nm -D --undefined-only "$library" | awk '{print $2}' | grep -E '^P?MPIX?_')
[ -z "$undefined" ] || fail "undefined MPI symbols: $(echo $undefined | head -c 300)"
exported=$(nm -D --defined-only "$library" | awk '{print $3}')
for probe in MPI_Get_version MPI_Abi_get_version; do
  grep -qx "$probe" <<<"$exported" && fail "exports $probe (mpi4py would take the process for having an MPI)"
done
pmpi=$(echo "$exported" | grep -cE '^PMPIX?_')
[ "$pmpi" = 0 ] || fail "exports $pmpi PMPI_ symbols (the trampolines must stay hidden)"
grep -qx MPI_Allreduce <<<"$exported" || fail "does not export MPI_Allreduce"
[ "$failed" = 0 ] && echo "libmcrpmpi.so names no MPI library: ok"
exit $failed
