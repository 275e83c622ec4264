#!/usr/bin/env bash
# run_python.sh VENV SCRIPT [ARGS...]: runs a test rank with the venv's Python, or skips (exit 77)
# when scripts/setup-python.sh has not made the venv yet, so the tests can be registered at
# configure time before the venv exists.
#
# MCRPMPI_TEST_RANKS_SHARE_GPU=1 (GPU tests on one GPU): NCCL refuses two ranks on one GPU of one
# host, and it takes NCCL_HOSTID as the host's identity, so each rank gets its own (and the socket
# transport over loopback). Tests only: on a real node it would turn off NVLink.
set -euo pipefail
venv=$1
shift
python=$venv/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP: no Python venv at $venv (run scripts/setup-python.sh)"
  exit 77
fi
if [ "${MCRPMPI_TEST_RANKS_SHARE_GPU:-0}" = 1 ] && [ -z "${NCCL_HOSTID:-}" ]; then
  export NCCL_HOSTID="mcrpmpi-test-rank-${PMI_RANK:-0}"
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_NET=${NCCL_NET:-Socket}
fi
exec "$python" "$@"
