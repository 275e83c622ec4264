#!/usr/bin/env bash
# tune_cut_short.sh OUTDIR TUNE FAKE_NCCL MPIEXEC...: a tuning run cut short keeps what it measured.
# Runs mcrpmpi-tune under MPIEXEC... (launcher and rank count) on the library's fake device with the
# fake NCCL (allreduce and bcast, world only, up to 64 MiB: far longer than this test waits), and once
# its CSV holds at least MIN_ROWS measurements (rank 0 appends each as it is measured) ends the
# launcher with SIGTERM, as a time limit would. Then checks: no process of the run is left (a marker
# in their environment), the rows read back, and `mcrpmpi-tune --from-csv` builds a table from them
# that holds an allreduce rule and that `--quality` reads (exit 0 or 2, not 1).
set -u
out=$1 tune=$2 nccl=$3
shift 3
min_rows=6
fail() { echo "tune_cut_short: $*"; exit 1; }
rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
marker="mcrpmpi-tune-cut-$$-$RANDOM"

MCRPMPI_TEST_MARKER=$marker MCRPMPI_FAKE_DEVICE=1 MCRPMPI_NCCL_LIBRARY=$nccl \
  "$@" "$tune" -c allreduce,bcast --world-only --max-bytes 67108864 -i 20 --warmup 2 \
  -o "$out/t.json" --csv "$out/t.csv" --plot "$out/t.svg" >"$out/log" 2>&1 &
launcher=$!

rows() {
  if [ -f "$out/t.csv" ]; then grep -c '^[a-z_]*,[0-9]' "$out/t.csv"; else echo 0; fi
}
waited=0
while [ "$(rows)" -lt "$min_rows" ] && kill -0 "$launcher" 2>/dev/null && [ "$waited" -lt 600 ]; do
  sleep 0.1
  waited=$((waited + 1))
done
kill -0 "$launcher" 2>/dev/null || { cat "$out/log"; fail "the run ended before $min_rows rows were measured"; }
[ "$(rows)" -ge "$min_rows" ] || { kill -KILL "$launcher"; cat "$out/log"; fail "fewer than $min_rows rows after 60 s"; }
kill -TERM "$launcher"
wait "$launcher"
echo "tune_cut_short: the launcher ended (status $?) with $(rows) rows in the CSV"
cat "$out/log"
! grep -q "mcrpmpi-tune: wrote" "$out/log" || fail "the run was not cut short"

# Every process of the run gone within 10 s (hydra ends the ranks it launched).
left=""
for _ in $(seq 100); do
  left=""
  for environ in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' <"$environ"; } 2>/dev/null | grep -qx "MCRPMPI_TEST_MARKER=$marker"; then
      left="$left $(basename "$(dirname "$environ")")"
    fi
  done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || { kill -KILL $left 2>/dev/null; fail "processes left:$left"; }

"$tune" --from-csv "$out/t.csv" -o "$out/rebuilt.json" --plot "$out/rebuilt.svg" >"$out/rebuilt.log" 2>&1
status=$?
cat "$out/rebuilt.log"
[ "$status" -eq 0 ] || fail "--from-csv exited $status"
grep -q '"allreduce": \[' "$out/rebuilt.json" || fail "no allreduce rule in the rebuilt table"
grep -q "<svg" "$out/rebuilt.svg" || fail "no plot"
"$tune" --quality "$out/t.csv" "$out/rebuilt.json" >"$out/quality" 2>&1
status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || { cat "$out/quality"; fail "--quality exited $status"; }
echo "tune_cut_short: passed"
