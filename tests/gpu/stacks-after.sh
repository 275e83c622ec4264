#!/usr/bin/env bash
# Writes the host stacks of process PID (every thread, gdb or else cuda-gdb) to a file in DIR once it
# has run SECONDS, and ends at once if it exits before: a test that hangs on a machine one can only
# reach through a batch command then still says where it is. Started by rank-env.sh for each rank
# when MCRPMPI_STACKS_DIR is set (tests/gpu/run-gpu-suite.sh sets it), with SECONDS 30 before the
# test's timeout.
# Under MPS cuda-gdb says "Late attach is not supported with CUDA MPS" and still prints the host
# threads' stacks, which is what a hang needs.
# Usage: tests/gpu/stacks-after.sh PID SECONDS DIR
pid=${1:?usage: stacks-after.sh PID SECONDS DIR} after=${2:?} dir=${3:?}
# Close what the rank's launcher gave it (PMI's socket, pipes): the launcher waits for those to close,
# so holding them would keep a finished test running until the watcher ends. 255 is bash's own.
for fd in /proc/self/fd/*; do
  fd=${fd##*/}
  ((fd > 2 && fd != 255)) && eval "exec $fd>&-"
done
for ((waited = 0; waited < after; waited++)); do
  kill -0 "$pid" 2>/dev/null || exit 0
  sleep 1
done
debugger=$(command -v gdb || command -v cuda-gdb) || exit 0
mkdir -p "$dir"
name=$(cat "/proc/$pid/comm" 2>/dev/null) || exit 0
{
  echo "# pid $pid rank ${PMI_RANK:-?}, still running after $after s ($(date -u +%FT%TZ)):"
  echo "# $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  timeout 60 "$debugger" -p "$pid" -batch -ex "thread apply all bt 16" 2>&1 | grep -v '^\[New LWP\|^\[Thread debugging\|^Using host libthread_db'
} >"$dir/stacks-$name-$pid.txt"
