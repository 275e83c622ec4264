#!/bin/sh
# tune_end_to_end.sh OUTDIR TUNE FAKE_NCCL MAX_BYTES KINDS MPIEXEC...: runs mcrpmpi-tune under
# MPIEXEC... (launcher and rank count) on the library's fake device with the fake NCCL, sizes 8 B to
# MAX_BYTES (a power of two), `-c KINDS` (which must name p2p; "all": no -c), and checks what it
# wrote: the JSON and CSV read back (--quality exits 0 or 2, not 1), the CSV has collective rows for
# both paths and p2p rows for both protocols at every size, and the JSON holds p2p_eager_limit_bytes
# exactly when the limit the p2p rows give (recomputed here: the largest size up to which inline is
# at most 5 % slower than rendezvous, contiguous from 8 B; 0 if none) is not the default 65536.
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
grep -q "p2p eager limit" "$out/t.svg" || fail "no eager-limit panel in the plot"

"$tune" --quality "$out/t.csv" "$out/t.json" >"$out/quality" 2>&1
status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || { cat "$out/quality"; fail "--quality exited $status"; }

nccl_rows=$(grep -c '^[a-z_]*,[0-9]*,[a-z_]*,[0-9]*,nccl,' "$out/t.csv")
mpi_rows=$(grep -c '^[a-z_]*,[0-9]*,[a-z_]*,[0-9]*,mpi,' "$out/t.csv")
[ "$nccl_rows" -gt 0 ] && [ "$nccl_rows" -eq "$mpi_rows" ] || fail "collective rows: $nccl_rows nccl, $mpi_rows mpi"
expected_sizes=
size=8
while [ "$size" -le "$max_bytes" ]; do expected_sizes="$expected_sizes$size "; size=$((size * 2)); done
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
echo "tune_end_to_end: the p2p rows give eager limit $expected"
if [ "$expected" = 65536 ]; then
  ! grep -q '"p2p_eager_limit_bytes"' "$out/t.json" || fail "the JSON holds the default eager limit"
else
  grep -q "\"p2p_eager_limit_bytes\": $expected," "$out/t.json" || fail "the JSON lacks p2p_eager_limit_bytes $expected"
fi
echo "tune_end_to_end: passed"
