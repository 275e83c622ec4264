#!/usr/bin/env bash
# Wraps one rank on a shared GPU: a distinct NCCL_HOSTID per rank makes NCCL treat the ranks as
# separate hosts (FIELD-NOTES, "Testing several ranks on one GPU"); tests only.
export NCCL_HOSTID="mcrpmpi-test-host-${PMI_RANK:-${MPI_LOCALRANKID:-0}}"
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_NET=${NCCL_NET:-Socket} NCCL_MNNVL_ENABLE=0
exec "$@"
