#!/usr/bin/env bash
# Takes the figures the open issues ask of a GPU session, in parts that each fit one device command
# (at most 10 minutes; the session has 30 in all), and writes one log per part plus a summary, so a
# session spends its GPU time measuring rather than composing commands. Every part is a fixed list
# of osu-compare / benchmark / compute-sanitizer runs; the logs hold the commands beside the tables.
#
#   tests/gpu/measure-figures.sh [--fake] [--quick | --short] BUILD OUTDIR PART...
#
# Parts (issue and goal in brackets):
#   collectives-np2, collectives-np4  lib NCCL path (nonblocking and blocking NCCL communicators) and
#                      default route vs raw NCCL, 8 B-4 MiB in one run per way, the five
#                      collectives NCCL has [15.2: <= 1.10 to 64 KiB, <= 1.03 at >= 1 MiB]
#   profile            the per-step profile of a blocking 8 B allreduce, and raw NCCL with the CUDA
#                      and MPI calls of the library's direct path added (nccl-steps) [15.2: own CPU <= 2 us]
#   host               host osu_allreduce 8 B with and without the library [15.3: <= 1.02], and
#                      its profile (the classify column: what detection costs there)
#   kinds              memory-kind detection per call, every kind [15.3: < 20 ns host, < 50 ns device]
#   calls              each CUDA call of the NCCL path's direct blocking launch, timed alone and
#                      under MPS: which of them the profile's queue step is [15.2: own CPU <= 2 us]
#   staged             pipelined staged path vs max(copies, host collective), 4-64 MiB, and its
#                      8 B latency [15.5: <= 1.25; 8 B not slower than 20.5 us]
#   p2p                osu_bw, osu_bibw, osu_latency on device buffers: staged, NCCL path (-A), raw
#                      NCCL, host without the library [10: NCCL path >= 95% of raw bw at >= 1 MiB;
#                      staged 8 B]; osu_bw staged vs pipelined chunks on the base MPI (-A, channel
#                      mpi) [15.5]
#   sanitizer          compute-sanitizer memcheck and racecheck over GPU test programs [13.4]
#   tune               mcrpmpi-tune on 2 ranks (8 B-64 MiB; --short: 16 MiB), writing
#                      OUTDIR/tune/tuning.{json,csv,svg}, the machine's table to ship as an example,
#                      and its quality; osu_allreduce / osu_bcast routed by it (lib-tuned) beside raw
#                      NCCL and both paths (the built-in table's route is the NCCL path); where the
#                      table sets staged chunks, osu_allreduce / osu_reduce_scatter on the staged path
#                      with them against copy and host [15.5, 15.6]
# --fake runs the parts on CPU (the fake device, the test suite's fake NCCL; no raw NCCL, no
# compute-sanitizer), to check this script; --quick cuts sizes and iterations for that check.
# --short keeps every size but runs fewer iterations (large messages a tenth, host runs 5 instead of
# 9) and, in the sanitizer part, racecheck on one program only: for a session whose
# device time (15 minutes in all) cannot hold the full parts. Its figures are noisier, not different.
# On a GPU: after `source .gpu/use-build-deps.sh` and a build (tests/gpu/run-gpu-suite.sh builds one);
# osu-compare starts the MPS daemon itself when ranks share a GPU. MCRPMPI_FIGURES_BUDGET (seconds,
# default 570: one device command) bounds the whole invocation: each part gets what is left, and parts
# that cannot start with a minute left are reported as not started, so the summary always comes back.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fake=0 quick=0 short=0
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --fake) fake=1 ;;
    --quick) quick=1 ;;
    --short) short=1 ;;
    *) echo "measure-figures.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ $# -lt 3 ]]; then
  sed -n '7,35p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd) out=$2
shift 2
mkdir -p "$out"
lib=$build/pmpi/libmcrpmpi.so
budget=${MCRPMPI_FIGURES_BUDGET:-570}

if ((fake)); then
  # The fake device never picks the NCCL channel for asserted point-to-point by itself.
  export MCRPMPI_FAKE_DEVICE=1 MCRPMPI_NCCL_LIBRARY=$build/tests/fake_nccl/libmcrpmpi_fake_nccl.so MCRPMPI_P2P_CHANNEL=nccl
  space=fake raw_nccl=""
else
  space=cuda raw_nccl=nccl,
  # compute-sanitizer ships in the toolkit's bin, which need not be on PATH.
  [[ -d /usr/local/cuda/bin ]] && export PATH=$PATH:/usr/local/cuda/bin
fi
# Sizes and iterations: small sizes many times, large ones fewer; --quick for the CPU check. `all`
# is both in one run (the benchmarks' -i N:L and -x N:L: N up to the -L size, L above), which starts
# MPI, CUDA and NCCL once instead of twice: on the H200 a start cost more than the measuring did.
if ((quick)); then
  small=(-m 8:64 -i 50 -x 5) large=(-m 1048576:1048576 -i 3 -x 1) big=(-m 4194304:4194304 -i 2 -x 1) repeat=1
  bandwidth=("${large[@]}")
  all=(-m 4096:16384 -i 20:3 -x 2:1 -L 8192)
elif ((short)); then
  small=(-m 8:65536 -i 500 -x 50) large=(-m 1048576:4194304 -i 10 -x 2) big=(-m 4194304:67108864 -i 4 -x 1)
  bandwidth=(-m 1048576:4194304 -i 30 -x 3)
  all=(-m 8:4194304 -i 500:10 -x 50:2 -L 65536) repeat=3
else
  small=(-m 8:65536 -i 1000 -x 100) large=(-m 1048576:4194304 -i 100 -x 10) big=(-m 4194304:67108864 -i 10 -x 2)
  bandwidth=("${large[@]}")
  all=(-m 8:4194304 -i 1000:100 -x 100:10 -L 65536) repeat=3
fi

# Prints a command (paths in the repository shortened) and runs it, returning its status.
shown() {
  echo "\$ ${*#$root/}"
  "$@"
}

# One osu-compare run, its command first, on device buffers unless the arguments say -d host.
compare() {
  shown "$build/osu/osu-compare" --bin-dir "$build/osu" --lib "$lib" --rank-wrapper "$root/tests/gpu/rank-env.sh" \
    --repeat "$repeat" "$@"
  echo
}

reduction_type() { [[ $1 == allreduce || $1 == reduce || $1 == reduce_scatter ]] && echo "-T float"; }

part_collectives() {
  local np=$1 coll
  for coll in allreduce bcast allgather reduce_scatter alltoall; do
    # shellcheck disable=SC2046
    compare --np "$np" --ways "${raw_nccl}lib-nccl,lib-nccl-nb,lib" "osu_$coll" -d "$space" "${all[@]}" \
      $(reduction_type "$coll")
  done
}

part_profile() {
  local iterations=5000
  ((quick)) && iterations=200
  compare --np 2 --ways lib-nccl,lib-nccl-nb --profile osu_allreduce -d "$space" -m 8:8 -i "$iterations" -x 500 \
    -T float
  # Where the library's time over raw NCCL goes: nccl-steps is raw NCCL plus the CUDA and MPI calls of
  # the library's direct blocking path (osu_nccl's OSU_NCCL_STEPS=all: cudaGetDevice, the legacy-stream
  # query, an event polled with MPI probes instead of a stream synchronization), so nccl-steps/nccl is
  # what those calls cost and lib-nccl/nccl-steps the rest. (Until 2026-11-27 this compared nccl-nb:
  # raw NCCL on a nonblocking communicator, 2.06-2.99x nccl to 8 KiB on the H200.)
  [[ -n $raw_nccl ]] && compare --np 2 --ways nccl,nccl-steps,lib-nccl osu_allreduce -d "$space" \
    "${small[@]}" -T float
  return 0
}

part_host() {
  local iterations=20000 runs=9
  ((quick)) && iterations=200 runs=1
  ((short)) && runs=5
  compare --np 2 --ways base,lib --repeat "$runs" osu_allreduce -d host -m 8:8 -i "$iterations" -x 1000
  compare --np 2 --ways lib,base --repeat "$runs" osu_allreduce -d host -m 8:8 -i "$iterations" -x 1000
  # Where a host call's time goes: the profile's classify column is the two memory-kind lookups, a
  # few ns when the benchmark's buffers are in the brk heap, a driver query each when they are not
  # (on the H200, 2026-11-26, host calls cost 1.45x without telling which).
  compare --np 2 --ways lib-profile osu_allreduce -d host -m 8:8 -i "$iterations" -x 1000
}

part_kinds() {
  local flags=(--gpu)
  ((fake)) && flags=()
  shown "$build/tests/unit/mcrpmpi_memory_kind_bench" "${flags[@]}"
}

part_calls() {
  local bench=("$build/tests/unit/mcrpmpi_cuda_call_bench")
  ((fake)) || bench+=(--gpu)
  shown "${bench[@]}" || return 1
  echo
  # As the ranks of the profile part make them: MPS clients (with-mps starts the daemon for two ranks
  # on one GPU and does nothing where there is no daemon to start).
  shown "$root/scripts/with-mps" --ranks 2 -- "${bench[@]}"
}

part_staged() {
  local coll
  for coll in allreduce reduce bcast allgather reduce_scatter; do
    # shellcheck disable=SC2046
    compare --np 2 --ways lib-mpi,copy,host "osu_$coll" -d "$space" "${big[@]}" $(reduction_type "$coll")
  done
  compare --np 2 --ways lib-mpi,copy,host osu_allreduce -d "$space" -m 8:8 -i 1000 -x 100 -T float
  # Where the pipelined allreduce missed its bound on the H200 (2026-11-28: 1.30 and 1.51 of it at 8
  # and 16 MiB, the base MPI's nonblocking collective on each 1 MiB chunk): the base MPI alone doing
  # the host half as the pipeline asks for it (osu_chunked_allreduce: 1 MiB chunks, all outstanding)
  # beside its one blocking call; then the pipeline with 4 MiB chunks, and unpipelined (0: one
  # blocking base call between one copy each way). Which of them beats the default says what to change.
  compare --np 2 --ways host osu_chunked_allreduce -d "$space" "${big[@]}" -T float
  local chunk
  for chunk in 4194304 0; do
    echo "# MCRPMPI_STAGED_CHUNK_BYTES=$chunk:"
    (export MCRPMPI_STAGED_CHUNK_BYTES=$chunk; compare --np 2 --ways lib-mpi,host osu_allreduce -d "$space" "${big[@]}" -T float)
  done
}

part_p2p() {
  # The open goals first, so that the budget cuts what is settled: the NCCL path's bandwidth against
  # raw NCCL (>= 95 % at >= 1 MiB; on the H200, 2026-11-27, 10 iterations were too few to say), with
  # `bandwidth`'s iterations in --short. Without --short (100 iterations) the staged way is left to
  # the next comparison, which has as many: raw NCCL and the NCCL path alone are 6 runs of 64 x 7
  # MiB x 110 iterations where the three ways were 9, which a second command's 200 s budget may not
  # hold on a loopback-socket set-up of about 3.3 GB/s (the H200's) with the start of each run (a
  # comparison the budget cuts keeps the lines of its finished runs, printed as each ends).
  local staged_too=""
  ((short)) && staged_too=",lib"
  compare --np 2 --ways "${raw_nccl}lib-nccl$staged_too" osu_bw -d "$space" "${bandwidth[@]}"
  # The staged path (lib: one copy each way around one base-MPI message) against the device-only
  # protocol's pipelined chunks through the base MPI (lib-chunked), and host buffers as the bound:
  # whether the staging pool's fix (2026-11-27) ended the staged path's fall at 4 MiB (1603 MB/s
  # against 4279 at 2 MiB on the H200 that day, the pool reallocating its blocks every iteration).
  compare --np 2 --ways "lib,lib-chunked,host" osu_bw -d "$space" "${large[@]}"
  compare --np 2 --ways "${raw_nccl}lib-nccl,lib" osu_bibw -d "$space" "${large[@]}"
  # Latency (goal met on the H200, 2026-11-27: staged 0.94-1.06 of host + one copy each way).
  compare --np 2 --ways "host,lib,lib-nccl,copy${raw_nccl:+,nccl}" osu_latency -d "$space" "${small[@]}"
  # With the pool's limit four times larger: whether 4 MiB in osu_bw's 64 messages in flight (256
  # MiB of staging blocks a rank, the default limit) still costs the staged path anything.
  echo "# MCRPMPI_PINNED_POOL_LIMIT=1G:"
  (export MCRPMPI_PINNED_POOL_LIMIT=1G; compare --np 2 --ways "lib,lib-chunked" osu_bw -d "$space" "${large[@]}")
}

part_tune() {
  # Up to 64 MiB; 16 MiB in --short, so that the whole part fits after the p2p part in a session's
  # figure budget (a cut run leaves the CSV of what it measured, from which the loop below builds the
  # table; the comparisons with it are lost).
  local dir=$out/tune max=67108864 coll
  ((short)) && max=16777216
  ((quick)) && max=65536
  mkdir -p "$dir"
  # with-mps as osu-compare uses it: the daemon when the ranks share a GPU, nothing otherwise.
  # It prints the table's quality (chosen/best per point, the worst ratio) after writing the files.
  shown "$root/scripts/with-mps" -- mpiexec -n 2 "$root/tests/gpu/rank-env.sh" "$build/tuning/mcrpmpi-tune" \
    --max-bytes "$max" -o "$dir/tuning.json" --csv "$dir/tuning.csv" --plot "$dir/tuning.svg" || return 1
  echo
  for coll in allreduce bcast; do
    # shellcheck disable=SC2046
    compare --np 2 --tuning-file "$dir/tuning.json" --ways "${raw_nccl}lib-nccl,lib-mpi,lib-tuned" "osu_$coll" \
      -d "$space" "${all[@]}" $(reduction_type "$coll")
  done
  # The staged path with the chunks the table chose (every collective's, and reduce_scatter_block's
  # own, which reduce_scatter follows), against its bound as in the staged part: where the default
  # 1 MiB left the allreduce and the reduce_scatter at 1.3-1.7x the bound on the H200 (2026-11-28/30).
  if grep -q '"staged_chunk_bytes' "$dir/tuning.json"; then
    for coll in allreduce reduce_scatter; do
      echo "# the staged path with the table's chunks (MCRPMPI_TUNING_FILE=$dir/tuning.json):"
      # shellcheck disable=SC2046
      (export MCRPMPI_TUNING_FILE=$dir/tuning.json
       compare --np 2 --ways lib-mpi,copy,host "osu_$coll" -d "$space" "${big[@]}" $(reduction_type "$coll"))
    done
  else
    echo "# the table keeps the default staged chunk for every collective: the staged part's figures stand for it"
  fi
}

part_sanitizer() {
  if ((fake)) || ! command -v compute-sanitizer >/dev/null; then
    echo "skipped: compute-sanitizer needs a GPU and the CUDA toolkit's compute-sanitizer on PATH"
    return 0
  fi
  local tool program failed=0 programs
  # One run that outlasts its limit (NCCL under a sanitizer is slow) is reported and the next starts.
  local limit=${MCRPMPI_SANITIZER_RUN_LIMIT:-150}
  # No synccheck: the library launches no kernels of its own, so synccheck could only judge NCCL's,
  # and it flags their warp-specialised named barriers ("Barrier error detected. Divergent thread(s)
  # in block" in the SendRecv kernel on the H200, 2026-11-27) and the run then stops unfinished.
  # racecheck, also on NCCL's kernels alone, ran clean (0 hazards) and stays.
  for tool in memcheck racecheck; do
    programs=("tests/gpu/mcrpmpi_gpu_collectives --path nccl" "tests/gpu/mcrpmpi_gpu_collectives --path mpi"
              "tests/gpu/test_nonblocking_gpu" "tests/mpi/test_p2p_linked --space device --assert env")
    ((short)) && [[ $tool != memcheck ]] && programs=("tests/gpu/mcrpmpi_gpu_collectives --path nccl")
    for program in "${programs[@]}"; do
      # Without MPS: compute-sanitizer does not support MPS clients. One log per process (%p), read
      # after the run: filtering the live output through `head` once stopped the runs with SIGPIPE.
      local logs
      logs=$(mktemp -d /tmp/mcrpmpi-sanitizer.XXXXXX)
      local cmd=(timeout -k 5 "$limit" mpiexec -n 2 -genv MCRPMPI_P2P_DEVICE_ONLY 1 "$root/tests/gpu/rank-env.sh"
                 compute-sanitizer --tool "$tool" --error-exitcode 86 --print-limit 100 --log-file "$logs/rank-%p.log")
      # shellcheck disable=SC2206
      local args=($program)
      echo "\$ ${cmd[*]#$root/} build/${args[*]}"
      local started=$SECONDS
      "${cmd[@]}" "$build/${args[0]}" "${args[@]:1}" >"$logs/output.txt" 2>&1
      local rc=$?
      echo "exit $rc ($((SECONDS - started)) s$( ((rc == 124 || rc == 137)) && echo ", stopped at the ${limit} s limit"))"
      grep -E "passed|failed|FAIL" "$logs/output.txt" | tail -4
      # The digest decides: NCCL's own probing API errors make the exit code 86 without being ours.
      python3 "$root/tests/gpu/sanitizer_digest.py" "$logs"/rank-*.log || failed=1
      ((rc == 0 || rc == 86)) || failed=1
    done
  done
  return $failed
}

summary=$out/summary.txt
echo "# measure-figures.sh $( ((fake)) && echo --fake) $( ((quick)) && echo --quick) $( ((short)) && echo --short) on $(hostname), $(date -u +%FT%TZ)" >"$summary"
status=0
for part in "$@"; do
  case $part in
    collectives-np2) run=(part_collectives 2) ;;
    collectives-np4) run=(part_collectives 4) ;;
    profile | host | kinds | calls | staged | p2p | sanitizer | tune) run=("part_$part") ;;
    *) echo "measure-figures.sh: unknown part $part" >&2; exit 2 ;;
  esac
  start=$SECONDS
  left=$((budget - SECONDS - 10))
  if ((left < 60)); then
    printf '%-16s not started: %d s of the %d s budget left\n' "$part" $((budget - SECONDS)) "$budget" | tee -a "$summary"
    status=1
    continue
  fi
  # A part runs in a subshell under `timeout`, so one that hangs cannot eat the session's GPU time.
  export -f shown compare reduction_type "${run[0]}" 2>/dev/null
  export build root lib space raw_nccl repeat quick short fake out
  timeout -k 5 "$left" bash -c "small=(${small[*]}); large=(${large[*]}); bandwidth=(${bandwidth[*]}); big=(${big[*]}); all=(${all[*]}); ${run[*]}" \
    >"$out/$part.log" 2>&1
  rc=$?
  printf '%-16s exit %3d  %4d s  %s\n' "$part" "$rc" $((SECONDS - start)) "$out/$part.log" | tee -a "$summary"
  ((rc == 0)) || status=1
  # A tuning run the budget cut leaves the rows it measured (its CSV grows as it measures): the table
  # they give, beside them.
  if [[ $part == tune && ! -s $out/tune/tuning.json && -s $out/tune/tuning.csv ]]; then
    "$build/tuning/mcrpmpi-tune" --from-csv "$out/tune/tuning.csv" -o "$out/tune/tuning.json" \
      --plot "$out/tune/tuning.svg" >>"$out/$part.log" 2>&1
    echo "tune             cut: the table of the rows measured, $out/tune/tuning.json (exit $?)" | tee -a "$summary"
  fi
done
exit $status
