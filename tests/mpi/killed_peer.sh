#!/usr/bin/env bash
# Drives test_killed_peer (see there): runs the job, then checks that it ended within BOUND seconds
# with a failure status, that no process of the job is left (found by a marker in its environment),
# and, in `survivors` mode, that a surviving rank reported the failed MPI_Allreduce itself.
#   killed_peer.sh launcher|survivors BOUND RANKS mpiexec [mpiexec options...] -- program [arguments...]
# `launcher`: hydra ends the job when the rank dies (its default). `survivors`: each rank runs under
# this script's `rank` mode, which outlives its rank, so the launcher learns of the death only when
# the job ends: only the library's own failure detection can end the survivors' calls. (Hydra's
# -disable-auto-cleanup would be the natural way, but MPICH 4.0.2's hydra proxy still SIGKILLs the
# survivors in about half the runs here, right after its SIGUSR1 failure notice.)
set -u
if [[ $1 == rank ]]; then
  shift
  "$@" &
  wait $!
  status=$?
  # Killed by a signal: keep the launcher's slot until the job is ended (MPI_Abort of a survivor).
  ((status > 128)) && exec sleep 300
  exit $status
fi
mode=$1 bound=$2 ranks=$3
shift 3
launcher=()
while [[ $# -gt 0 && $1 != -- ]]; do launcher+=("$1"); shift; done
shift  # --
wrapper=()
[[ $mode == survivors ]] && wrapper=("$0" rank)

marker="mcrpmpi-killed-peer-$$-$RANDOM"
log=$(mktemp)
reports=$(mktemp -d)
trap 'rm -rf "$log" "$reports"' EXIT
start=$(date +%s%3N)
# The outer timeout only keeps a broken run from hanging ctest; the bound is checked below.
MCRPMPI_TEST_MARKER=$marker KILLED_PEER_REPORTS=$reports timeout -s KILL $((bound + 60)) "${launcher[@]}" -n "$ranks" "${wrapper[@]}" "$@" >"$log" 2>&1
status=$?
elapsed_ms=$(($(date +%s%3N) - start))
elapsed="$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))"
cat "$log"
# Every rank skipped (no GPU, or fewer than 2 ranks): pass the skip on to ctest.
if [[ $status -eq 77 ]] && ! grep -q "killed_peer: warm-up done" "$log"; then exit 77; fi

failures=0
fail() { echo "killed_peer.sh: FAIL: $*"; failures=$((failures + 1)); }

left_behind() {
  local pids=()
  for environ in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' <"$environ"; } 2>/dev/null | grep -qx "MCRPMPI_TEST_MARKER=$marker"; then
      pids+=("$(basename "$(dirname "$environ")")")
    fi
  done
  echo "${pids[@]:-}"
}

[[ -f $reports/victim.txt ]] || fail "the victim never reached its kill (see the log above)"
[[ $status -ne 0 ]] || fail "the job exited 0 although a rank was killed"
[[ $status -ne 137 ]] || fail "the job did not end within $((bound + 60)) s: killed by the outer timeout"
if ((elapsed_ms > bound * 1000)); then fail "the job took ${elapsed} s, more than the bound of ${bound} s"; fi
sleep 1
remaining=$(left_behind)
if [[ -n $remaining ]]; then
  fail "processes of the job still running after it ended: $remaining"
  kill -KILL $remaining 2>/dev/null
fi
if [[ $mode == survivors ]]; then
  # The first survivor's MPI_Abort may end the others before they report: one report is the least.
  cat "$reports"/rank-*.txt 2>/dev/null >"$log.reports"
  cat "$log.reports"
  grep -q "killed_peer: rank [0-9]*: MPI_Allreduce" "$log.reports" || fail "no surviving rank reported its MPI_Allreduce ending"
  ! grep -q "result WRONG" "$log.reports" || fail "a survivor's MPI_Allreduce completed with a wrong result"
  # The library's error must name the call (its text starts "mcrpmpi: MPI_Allreduce ...").
  ! grep "killed_peer: rank [0-9]*: MPI_Allreduce failed" "$log.reports" | grep -vq ": mcrpmpi: MPI_Allreduce" ||
    fail "a survivor's error does not name the call"
  rm -f "$log.reports"
fi
echo "killed_peer.sh: $mode mode, $ranks ranks: job ended with status $status after ${elapsed} s (bound ${bound} s)"
((failures == 0)) && echo "killed_peer.sh: PASS" || exit 1
