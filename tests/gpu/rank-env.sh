#!/usr/bin/env bash
# Wraps one rank on a shared GPU: a distinct NCCL_HOSTID per rank makes NCCL treat the ranks as
# separate hosts (FIELD-NOTES, "Testing several ranks on one GPU"); tests only. With
# MCRPMPI_STACKS_DIR set, a watcher writes the rank's host stacks there if it is still running 30 s
# before its test's timeout (MCRPMPI_TEST_LIMIT_S, which mcrpmpi_add_mpi_test and the Python GPU
# tests pass; 120 when unset), or after MCRPMPI_STACKS_AFTER seconds when that is set
# (stacks-after.sh). Not
# sooner: on the GPU machine the debugger is cuda-gdb, whose attach runs code inside the rank, so a
# test that is only slow must not meet it (on 2026-11-27 gpu.memory_flat.np2's resident memory grew
# by 38 MiB, a failure, after the watcher came at 100 s of its 140; alone it passed).
export NCCL_HOSTID="mcrpmpi-test-host-${PMI_RANK:-${MPI_LOCALRANKID:-0}}"
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_NET=${NCCL_NET:-Socket} NCCL_MNNVL_ENABLE=0
if [[ -n ${MCRPMPI_STACKS_DIR:-} ]]; then
  limit=${MCRPMPI_TEST_LIMIT_S:-120}
  after=${MCRPMPI_STACKS_AFTER:-$((limit > 60 ? limit - 30 : limit / 2))}
  # Its own descriptors closed, so the launcher does not wait for it once the rank is gone.
  "$(dirname "${BASH_SOURCE[0]}")/stacks-after.sh" $$ "$after" "$MCRPMPI_STACKS_DIR" </dev/null >/dev/null 2>&1 &
fi
exec "$@"
