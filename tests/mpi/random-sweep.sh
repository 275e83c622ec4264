#!/usr/bin/env bash
# Runs the two random tests (test_p2p_random, test_coll_random) on a range of seeds, each seed in
# every configuration below, the ranks given the idle-yield shim as ctest gives them, each run
# killed after LIMIT seconds (default 300). A failing run's output is kept; the registered tests
# use a few fixed seeds, and this covers the others (docs/reliability.md).
# Usage: tests/mpi/random-sweep.sh BUILD_DIR FIRST_SEED LAST_SEED OUTDIR [NAME_REGEX]
#   OUTDIR/runs: one line a run ("SEED CONFIG rc=N SECONDS s"); OUTDIR/fail.CONFIG.SEED.log.
#   SWEEP_MPI=mpich or impi: the base MPI is that wheel of the ABI matrix (BUILD_DIR/abi-matrix, made
#   by scripts/setup-abi-matrix.sh), run through tests/abi/run_on_mpi.sh; default: Debian's MPICH.
# Exits 1 when any run failed.
set -uo pipefail
build=$(cd "${1:?usage: random-sweep.sh BUILD_DIR FIRST LAST OUTDIR [NAME_REGEX]}" && pwd) || exit 2
first=${2:?first seed}
last=${3:?last seed}
out=${4:?output folder}
only=${5:-.}
limit=${LIMIT:-300}
mkdir -p "$out"
source=$(cd "$(dirname "$0")/../.." && pwd)
fake_nccl=$build/tests/fake_nccl/libmcrpmpi_fake_nccl.so
p2p=$build/tests/mpi/test_p2p_random_linked
coll=$build/tests/mpi/test_coll_random_linked
for needed in "$fake_nccl" "$p2p" "$coll"; do
  [[ -e $needed ]] || { echo "random-sweep: $needed not built" >&2; exit 2; }
done
base_mpi=${SWEEP_MPI:-debian}
yield_shim=$build/tests/libmcrpmpi_test_yield.so
[[ -e $yield_shim ]] || yield_shim=
nccl="MCRPMPI_FAKE_DEVICE=1 MCRPMPI_NCCL_LIBRARY=$fake_nccl"
# name | ranks | environment | program and arguments (the seed is added)
configs=(
  "p2p_staged|3|MCRPMPI_FAKE_DEVICE=1|$p2p --space fake-device"
  "p2p_asserted_mpi|3|MCRPMPI_FAKE_DEVICE=1 MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=mpi|$p2p --space fake-device"
  "p2p_asserted_nccl_nb|4|$nccl MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_NCCL_INLINE_LAUNCH=0|$p2p --space fake-device"
  "p2p_assertedcomm_nccl|3|$nccl MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_POLLING_COLLECTIVES=1|$p2p --space fake-device --asserted-comm"
  "p2p_mixed_d2h|3|MCRPMPI_FAKE_DEVICE=async|$p2p --send-space fake-device --recv-space host"
  "p2p_chunks|3|MCRPMPI_FAKE_DEVICE=async MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=mpi MCRPMPI_STAGED_CHUNK_BYTES=1000 MCRPMPI_P2P_EAGER_LIMIT=0|$p2p --space fake-device"
  "coll_staged_chunks|3|MCRPMPI_FAKE_DEVICE=async MCRPMPI_STAGED_CHUNK_BYTES=1000|$coll --space fake-device"
  "coll_own_chunks|3|MCRPMPI_FAKE_DEVICE=async MCRPMPI_TUNING_FILE=$source/tests/tuning/data/own-chunks.json|$coll --space fake-device"
  "coll_nccl_poll|4|$nccl MCRPMPI_POLLING_COLLECTIVES=1|$coll --space fake-device"
  "coll_nccl_helper|3|$nccl MCRPMPI_PROGRESS_THREAD=1|$coll --space fake-device"
  "coll_fresh_nccl_nb|3|$nccl MCRPMPI_POLLING_COLLECTIVES=1 MCRPMPI_NCCL_INLINE_LAUNCH=0|$coll --space fake-device --fresh-comms"
  "coll_fresh_nccl_threads|3|$nccl|$coll --space fake-device --fresh-comms --threads 3 --rounds 40"
  "coll_fresh_nccl_nb_threads|3|$nccl MCRPMPI_NCCL_INLINE_LAUNCH=0|$coll --space fake-device --fresh-comms --threads 3 --rounds 40"
)
runs=0 failed=0
for seed in $(seq "$first" "$last"); do
  for config in "${configs[@]}"; do
    IFS='|' read -r name ranks environment command <<<"$config"
    [[ $name =~ $only ]] || continue
    [[ -n $yield_shim ]] && environment="LD_PRELOAD=$yield_shim $environment"
    read -r -a program <<<"$command"
    if [[ $base_mpi == debian ]]; then
      launch=(mpiexec -n "$ranks")
      for pair in $environment; do launch+=(-genv "${pair%%=*}" "${pair#*=}"); done
    else
      launch=("$source/tests/abi/run_on_mpi.sh" "$build/abi-matrix" "$base_mpi" "$build/pmpi/libmcrpmpi.so" linked "$ranks")
      for pair in $environment; do launch+=(--env "$pair"); done
      launch+=(--)
    fi
    start=$SECONDS
    timeout -k 5 "$limit" "${launch[@]}" "${program[@]}" --seed "$seed" >"$out/current.log" 2>&1
    rc=$?
    runs=$((runs + 1))
    echo "$seed $name rc=$rc $((SECONDS - start)) s" >>"$out/runs"
    if ((rc != 0)); then
      failed=$((failed + 1))
      cp "$out/current.log" "$out/fail.$name.$seed.log"
      echo "random-sweep: seed $seed $name failed (rc=$rc): $out/fail.$name.$seed.log"
    fi
  done
done
echo "random-sweep: seeds $first-$last: $runs runs (appended to $out/runs), $failed failed"
((failed == 0))
