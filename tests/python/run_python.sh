#!/usr/bin/env bash
# run_python.sh VENV SCRIPT [ARGS...]: runs a test rank with the venv's Python, or skips (exit 77)
# when scripts/setup-python.sh has not made the venv yet, so the tests can be registered at
# configure time before the venv exists.
#
# MCRPMPI_TEST_RANKS_SHARE_GPU=1 (GPU tests on one GPU): NCCL refuses two ranks on one GPU of one
# host, so each rank goes through tests/gpu/rank-env.sh, which gives it its own NCCL_HOSTID (the
# socket transport over loopback). Tests only: on a real node it would turn off NVLink.
set -euo pipefail
venv=$1
shift
python=$venv/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP: no Python venv at $venv (run scripts/setup-python.sh)"
  exit 77
fi
if [ "${MCRPMPI_TEST_RANKS_SHARE_GPU:-0}" = 1 ]; then
  # The same per-rank settings as every other GPU test's ranks: one script says them.
  exec "$(dirname "$0")/../gpu/rank-env.sh" "$python" "$@"
fi
exec "$python" "$@"
