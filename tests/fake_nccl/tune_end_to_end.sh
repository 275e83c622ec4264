#!/bin/sh
# tune_end_to_end.sh OUTDIR TUNE FAKE_NCCL MAX_BYTES KINDS MPIEXEC...: runs mcrpmpi-tune under
# MPIEXEC... (launcher and rank count) on the library's fake device with the fake NCCL, sizes 8 B to
# MAX_BYTES (a power of two), `-c KINDS` ("all": no -c), and checks what it wrote: the JSON and CSV
# read back (--quality exits 0 or 2, not 1), --from-csv with the same margin builds the same table
# from the CSV, the CSV has collective rows for both paths.
# Where KINDS names p2p: p2p rows for both protocols at every size, and the JSON holds
# p2p_eager_limit_bytes exactly when the limit the p2p rows give (recomputed here: the largest size up
# to which inline is at most 5 % slower than rendezvous, contiguous from 8 B; 0 if none) is not the
# default 65536.
# Where KINDS names staged_chunk: below 256 KiB the part says it was skipped; from 256 KiB the CSV
# has staged_chunk:<collective> rows for each pipelined collective KINDS names (allreduce, reduce,
# bcast, allgather, reduce_scatter_block) at MAX_BYTES, a quarter and a sixteenth of it (none below
# 256 KiB), each unpipelined and at every power-of-two chunk from 64 KiB below the size. The chunk a
# collective's rows give is recomputed here: the lowest geometric mean of latency over the best at each
# size, a chunk at least as large as a size reading its unpipelined row, the current one kept unless
# beaten by more than 5 %. The allreduce's against the default 1048576 is every collective's: the JSON
# holds staged_chunk_bytes exactly when it is not the default. Each other collective's against that one
# is its own where it differs: the JSON's staged_chunk_bytes_by_collective holds it then, and only
# then (reduce_scatter_block's also for reduce_scatter).
# MCRPMPI_P2P_CHANNEL=nccl: on the fake device `auto` gives asserted communicators no engine.
set -u
out=$1 tune=$2 nccl=$3 max_bytes=$4 kinds=$5
shift 5
fail() { echo "tune_end_to_end: $*"; exit 1; }

if [ "$kinds" = all ]; then set -- "$@" "$tune"; else set -- "$@" "$tune" -c "$kinds"; fi
rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
MCRPMPI_FAKE_DEVICE=1 MCRPMPI_NCCL_LIBRARY=$nccl MCRPMPI_P2P_CHANNEL=nccl \
  "$@" --max-bytes "$max_bytes" -i 20 --warmup 2 --margin 0.05 \
  -o "$out/t.json" --csv "$out/t.csv" --plot "$out/t.svg" >"$out/log" 2>&1
status=$?
cat "$out/log"
[ "$status" -eq 0 ] || fail "mcrpmpi-tune exited $status"
grep -q "measuring on the library's fake device" "$out/log" || fail "did not measure on the fake device"
grep -q "mcrpmpi-tune: wrote" "$out/log" || fail "wrote nothing"
grep -q "<svg" "$out/t.svg" || fail "no plot"

"$tune" --quality "$out/t.csv" "$out/t.json" >"$out/quality" 2>&1
status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || { cat "$out/quality"; fail "--quality exited $status"; }

# The same choices again from the CSV alone (--from-csv, the same margin): the same table.
"$tune" --from-csv "$out/t.csv" --margin 0.05 -o "$out/rebuilt.json" --plot "$out/rebuilt.svg" >"$out/rebuilt.log" 2>&1 ||
  { cat "$out/rebuilt.log"; fail "--from-csv failed"; }
without_metadata() { grep -v '^  "\(machine\|created\|comment\)":' "$1"; }
without_metadata "$out/t.json" >"$out/t.rules" && without_metadata "$out/rebuilt.json" >"$out/rebuilt.rules" ||
  fail "cannot read the tables"
cmp -s "$out/t.rules" "$out/rebuilt.rules" || { diff "$out/t.rules" "$out/rebuilt.rules"; fail "--from-csv chose another table"; }

nccl_rows=$(grep -c '^[a-z_]*,[0-9]*,[a-z_]*,[0-9]*,nccl,' "$out/t.csv")
mpi_rows=$(grep -c '^[a-z_]*,[0-9]*,[a-z_]*,[0-9]*,mpi,' "$out/t.csv")
[ "$nccl_rows" -gt 0 ] && [ "$nccl_rows" -eq "$mpi_rows" ] || fail "collective rows: $nccl_rows nccl, $mpi_rows mpi"
expected_sizes=
size=8
while [ "$size" -le "$max_bytes" ]; do expected_sizes="$expected_sizes$size "; size=$((size * 2)); done
# KEY VALUE DEFAULT: the JSON holds "KEY": VALUE exactly when VALUE is not DEFAULT (the writer leaves
# out a key at its default).
written_only_if_not_default() {
  echo "tune_end_to_end: the rows give $1 $2"
  if [ "$2" = "$3" ]; then
    ! grep -q "\"$1\"" "$out/t.json" || fail "the JSON holds the default $1"
  else
    grep -q "\"$1\": $2," "$out/t.json" || fail "the JSON lacks $1 $2"
  fi
}

names() { [ "$kinds" = all ] || case ",$kinds," in *",$1,"*) true ;; *) false ;; esac; }

if names p2p; then
grep -q "p2p eager limit" "$out/t.svg" || fail "no eager-limit panel in the plot"
for protocol in inline rendezvous; do
  sizes=$(grep "^p2p,2,[a-z_]*,[0-9]*,$protocol," "$out/t.csv" | cut -d, -f4 | tr '\n' ' ')
  [ "$sizes" = "$expected_sizes" ] || fail "p2p $protocol rows at sizes: $sizes (expected $expected_sizes)"
done

expected=$(awk -F, '$1 == "p2p" { t[$4, $5] = $6; if (!($4 in seen)) { seen[$4] = 1; order[n++] = $4 } }
  END {
    limit = -1
    for (i = 0; i < n; ++i) {
      b = order[i]
      if (t[b, "inline"] > t[b, "rendezvous"] * 1.05) { if (limit < 0) limit = 0; break }
      limit = b
    }
    print limit
  }' "$out/t.csv")
written_only_if_not_default p2p_eager_limit_bytes "$expected" 65536
fi

if names staged_chunk && [ "$max_bytes" -lt 262144 ]; then
  grep -q "staged chunk: skipped (no measured size from 256 KiB up" "$out/log" || fail "the staged chunk part did not say it was skipped"
elif names staged_chunk; then
  pipelined=
  for kind in allreduce reduce bcast allgather reduce_scatter_block; do names "$kind" && pipelined="$pipelined $kind"; done
  for kind in $pipelined; do
    size=$max_bytes
    while [ "$size" -gt 33554432 ]; do size=$((size / 2)); done
    for step in 1 2 3; do
      [ "$size" -ge 262144 ] || break
      expected_chunks="0 "
      chunk=65536
      while [ "$chunk" -lt "$size" ] && [ "$chunk" -le 16777216 ]; do expected_chunks="$expected_chunks$chunk "; chunk=$((chunk * 2)); done
      chunks=$(grep "^staged_chunk:$kind,[0-9]*,[a-z_]*,$size," "$out/t.csv" | cut -d, -f5 | tr '\n' ' ')
      [ "$chunks" = "$expected_chunks" ] || fail "staged_chunk:$kind rows at $size: $chunks (expected $expected_chunks)"
      size=$((size / 4))
    done
  done
  # KIND CURRENT: the chunk KIND's rows choose against CURRENT.
  chosen() {
    awk -F, -v row="staged_chunk:$1" -v current="$2" '$1 == row {
        t[$4, $5] = $6; sizes[$4] = 1
        if (!($5 in seen)) { seen[$5] = 1; cand[n++] = $5 + 0 }
        if (!($4 in best) || $6 + 0 < best[$4]) best[$4] = $6 + 0
      }
      function score(c,   s, e, sum, k) {
        sum = 0; k = 0
        for (s in sizes) {
          e = (c + 0 >= s + 0) ? 0 : c
          if (!((s, e) in t)) return -1
          sum += log(t[s, e] / best[s]); ++k
        }
        return exp(sum / k)
      }
      END {
        if (n == 0) { print current; exit }
        for (i = 0; i < n; ++i) for (j = i + 1; j < n; ++j) if (cand[j] < cand[i]) { x = cand[i]; cand[i] = cand[j]; cand[j] = x }
        winner = -1
        for (i = 0; i < n; ++i) { v = score(cand[i]); if (v >= 0 && (winner < 0 || v < won)) { winner = cand[i]; won = v } }
        kept = score(current)
        if (kept >= 0 && (winner < 0 || kept <= won * 1.05)) winner = current
        print winner
      }' "$out/t.csv"
  }
  every=$(chosen allreduce 1048576)
  written_only_if_not_default staged_chunk_bytes "$every" 1048576
  for kind in $pipelined; do
    [ "$kind" = allreduce ] && continue
    own=$(chosen "$kind" "$every")
    echo "tune_end_to_end: the rows give $kind the chunk $own"
    own_names=$kind
    [ "$kind" = reduce_scatter_block ] && own_names="$kind reduce_scatter"
    for name in $own_names; do
      if [ "$own" = "$every" ]; then
        ! grep -q "^    \"$name\": [0-9]" "$out/t.json" || fail "the JSON gives $name a chunk of its own"
      else
        grep -q "^    \"$name\": $own,\{0,1\}\$" "$out/t.json" || fail "the JSON lacks $name's own chunk $own"
      fi
    done
  done
fi
echo "tune_end_to_end: passed"
