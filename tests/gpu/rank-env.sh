#!/usr/bin/env bash
# Wraps one rank on a shared GPU: a distinct NCCL_HOSTID per rank makes NCCL treat the ranks as
# separate hosts (FIELD-NOTES, "Testing several ranks on one GPU"); tests only. With
# MCRPMPI_STACKS_AFTER (seconds) and MCRPMPI_STACKS_DIR set, a watcher writes the rank's host stacks
# there if it is still running by then (stacks-after.sh).
export NCCL_HOSTID="mcrpmpi-test-host-${PMI_RANK:-${MPI_LOCALRANKID:-0}}"
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_NET=${NCCL_NET:-Socket} NCCL_MNNVL_ENABLE=0
if [[ -n ${MCRPMPI_STACKS_AFTER:-} && -n ${MCRPMPI_STACKS_DIR:-} ]]; then
  # Its own descriptors closed, so the launcher does not wait for it once the rank is gone.
  "$(dirname "${BASH_SOURCE[0]}")/stacks-after.sh" $$ "$MCRPMPI_STACKS_AFTER" "$MCRPMPI_STACKS_DIR" </dev/null >/dev/null 2>&1 &
fi
exec "$@"
