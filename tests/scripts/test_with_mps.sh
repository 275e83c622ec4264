#!/usr/bin/env bash
# scripts/with-mps and scripts/mps.sh on a machine without a GPU: stub `nvidia-smi` (lists
# $STUB_GPUS GPUs) and `nvidia-cuda-mps-control` (creates and removes the control pipe as the daemon
# does) log their calls; the command run under the wrapper logs the MPS folders it sees.
# Usage: test_with_mps.sh <repository root> [<osu build dir> <libmcrpmpi.so> <mpiexec>]
# (the optional arguments also run osu-compare -d cuda under the stubs).
set -uo pipefail
root=$1
wrapper=$root/scripts/with-mps
work=$(mktemp -d "${TMPDIR:-/tmp}/test-with-mps.XXXXXX")
trap 'rm -rf "$work"' EXIT
stubs=$work/stubs
mkdir -p "$stubs" "$work/nostubs"
export STUB_LOG=$work/log TMPDIR=$work
failures=0

cat >"$stubs/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
echo "nvidia-smi $*" >>"$STUB_LOG"
for ((i = 0; i < ${STUB_GPUS:-1}; i++)); do echo "GPU $i: NVIDIA H100 80GB HBM3 (UUID: GPU-stub-$i)"; done
EOF
cat >"$stubs/nvidia-cuda-mps-control" <<'EOF'
#!/usr/bin/env bash
if [[ ${1:-} == -d ]]; then
  echo "start pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY" >>"$STUB_LOG"
  [[ -n ${STUB_START_FAILS:-} ]] && exit 1
  : >"$CUDA_MPS_PIPE_DIRECTORY/control"
  exit 0
fi
read -r command
echo "$command pipe=$CUDA_MPS_PIPE_DIRECTORY" >>"$STUB_LOG"
[[ $command == quit ]] && rm -f "$CUDA_MPS_PIPE_DIRECTORY/control"
exit 0
EOF
# The command under test: logs what it sees, then exits with its first argument (or sleeps).
cat >"$stubs/fake-run" <<'EOF'
#!/usr/bin/env bash
echo "run pipe=${CUDA_MPS_PIPE_DIRECTORY:-} log=${CUDA_MPS_LOG_DIRECTORY:-} decided=${MCRPMPI_MPS_DECIDED:-}" >>"$STUB_LOG"
[[ ${1:-0} == sleep ]] && exec sleep 30
exit "${1:-0}"
EOF
chmod +x "$stubs"/*
cp "$stubs/fake-run" "$work/nostubs/"
path_with_stubs=$stubs:/usr/local/bin:/usr/bin:/bin
path_without_mps=$work/nostubs:/usr/local/bin:/usr/bin:/bin

fail() {
  echo "FAIL ($case_name): $*"
  echo "--- log:"; cat "$STUB_LOG" 2>/dev/null; echo "--- output:"; cat "$work/out"
  failures=$((failures + 1))
}
count() { grep -c "^$1" "$STUB_LOG" 2>/dev/null || true; }
field() { grep "^$1" "$STUB_LOG" | head -1 | sed -n "s/.*$2=\([^ ]*\).*/\1/p"; }

# run_case NAME GPUS EXPECTED_STATUS ENV... -- COMMAND...: runs the wrapper, leaves the log.
run_case() {
  case_name=$1 gpus=$2 want=$3
  shift 3
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  : >"$STUB_LOG"
  env -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY -u MCRPMPI_MPS -u MCRPMPI_MPS_DECIDED \
    -u CUDA_VISIBLE_DEVICES PATH="$path_with_stubs" STUB_GPUS="$gpus" "${env[@]}" "$@" >"$work/out" 2>&1
  local got=$?
  [[ $got == "$want" ]] || fail "exit status $got, want $want"
}

# MPS started once, seen by the command, stopped after it, its folders gone.
expect_started_and_stopped() {
  [[ $(count start) == 1 ]] || fail "started $(count start) times, want 1"
  [[ $(count quit) == 1 ]] || fail "stopped $(count quit) times, want 1"
  local pipe
  pipe=$(field start pipe)
  [[ -n $pipe && $(field run pipe) == "$pipe" && $(field quit pipe) == "$pipe" ]] ||
    fail "the command or the stop saw another pipe directory than the start ($pipe)"
  [[ $(field run log) == "$(field start log)" ]] || fail "the command saw another log directory"
  [[ $pipe == "$work"/mcrpmpi-mps.*/pipe ]] || fail "pipe directory $pipe is not a private folder"
  [[ ! -e $(dirname "$pipe") ]] || fail "the private folders were left behind"
  grep -q "started the CUDA MPS daemon" "$work/out" || fail "did not say that it started MPS"
  grep -q "stopped the CUDA MPS daemon" "$work/out" || fail "did not say that it stopped MPS"
  local order
  order=$(grep -o '^[a-z]*' "$STUB_LOG" | grep -v nvidia | tr '\n' ' ')
  [[ $order == "start run quit " ]] || fail "calls in the order '$order', want 'start run quit'"
}

expect_not_started() {
  [[ $(count start) == 0 && $(count quit) == 0 ]] || fail "MPS was started or stopped"
  [[ $(count run) == 1 ]] || fail "the command ran $(count run) times"
  [[ -z $(field run pipe) ]] || fail "the command got CUDA_MPS_PIPE_DIRECTORY"
}

run_case shared_gpu 1 0 -- "$wrapper" --ranks 2 -- fake-run 0
expect_started_and_stopped

run_case rank_count_from_command 1 0 -- "$wrapper" -- fake-run 0 -n 4
expect_started_and_stopped

run_case command_fails 1 3 -- "$wrapper" --ranks 2 -- fake-run 3
expect_started_and_stopped

run_case refused 1 0 MCRPMPI_MPS=0 -- "$wrapper" --ranks 4 -- fake-run 0
expect_not_started
grep -q "MCRPMPI_MPS=0: not starting" "$work/out" || fail "did not say that MPS was refused"

run_case gpu_per_rank 2 0 -- "$wrapper" --ranks 2 -- fake-run 0
expect_not_started
grep -q "no GPU is shared" "$work/out" || fail "did not say why MPS was not started"

run_case visible_devices_narrow 4 0 CUDA_VISIBLE_DEVICES=1 -- "$wrapper" --ranks 2 -- fake-run 0
expect_started_and_stopped

run_case required 1 0 MCRPMPI_MPS=1 -- "$wrapper" --ranks 1 -- fake-run 0
expect_started_and_stopped

run_case required_but_missing 1 1 MCRPMPI_MPS=1 PATH="$path_without_mps" -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count run) == 0 ]] || fail "the command ran although MPS was required and missing"

run_case missing_is_fine 1 0 PATH="$path_without_mps" -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count run) == 1 ]] || fail "the command did not run"

run_case start_fails 1 0 STUB_START_FAILS=1 -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count run) == 1 && $(count quit) == 0 && -z $(field run pipe) ]] || fail "a failed start was not skipped"

run_case start_fails_required 1 1 STUB_START_FAILS=1 MCRPMPI_MPS=1 -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count run) == 0 ]] || fail "the command ran although the required daemon failed to start"

run_case bad_setting 1 2 MCRPMPI_MPS=maybe -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count run) == 0 ]] || fail "the command ran with a bad MCRPMPI_MPS"

# A daemon already serving this shell is used, not started again nor stopped.
mkdir -p "$work/existing"
: >"$work/existing/control"
run_case existing_daemon 1 0 CUDA_MPS_PIPE_DIRECTORY="$work/existing" -- "$wrapper" --ranks 2 -- fake-run 0
[[ $(count start) == 0 && $(count quit) == 0 && $(field run pipe) == "$work/existing" ]] ||
  fail "an existing daemon was not reused as it is"

# Signals: Ctrl-C (INT to the whole process group) and TERM to the wrapper alone stop MPS too.
signal_case() {
  case_name=$1
  local signal=$2 target=$3 want=$4
  : >"$STUB_LOG"
  # Job control on: the wrapper gets its own process group, as a command typed at a terminal, and
  # does not start with INT ignored (a script's background jobs do).
  set -m
  PATH="$path_with_stubs" STUB_GPUS=1 "$wrapper" --ranks 2 -- fake-run sleep >"$work/out" 2>&1 &
  local pid=$!
  set +m
  for _ in $(seq 100); do
    [[ $(count run) == 1 ]] && break
    sleep 0.1
  done
  if [[ $target == group ]]; then kill "-$signal" -- "-$pid"; else kill "-$signal" "$pid"; fi
  local started=$SECONDS
  wait "$pid"
  local got=$?
  [[ $got == "$want" ]] || fail "exit status $got after $signal, want $want"
  ((SECONDS - started < 20)) || fail "took $((SECONDS - started)) s to stop after $signal"
  expect_started_and_stopped
}
signal_case ctrl_c INT group 130
signal_case term TERM wrapper 143

# osu-compare on device buffers starts MPS itself (once for all its runs) when ranks share a GPU.
if (($# >= 4)); then
  osu_dir=$2 lib=$3 mpiexec=$4
  run_case osu_compare 1 0 -- python3 "$osu_dir/osu-compare" --np 2 --repeat 2 --bin-dir "$osu_dir" --lib "$lib" \
    --mpiexec "$mpiexec" --ways lib,lib-mpi osu_allreduce -d cuda -m 8:8 -i 2 -x 0
  [[ $(count start) == 1 && $(count quit) == 1 ]] || fail "osu-compare started MPS $(count start) times, stopped $(count quit)"
  grep -q "started the CUDA MPS daemon" "$work/out" || fail "osu-compare did not say that it started MPS"
  run_case osu_compare_refused 1 0 MCRPMPI_MPS=0 -- python3 "$osu_dir/osu-compare" --np 2 --repeat 1 \
    --bin-dir "$osu_dir" --lib "$lib" --mpiexec "$mpiexec" --ways lib osu_allreduce -d cuda -m 8:8 -i 2 -x 0
  [[ $(count start) == 0 ]] || fail "osu-compare started MPS although MCRPMPI_MPS=0"
  run_case osu_compare_host 1 0 -- python3 "$osu_dir/osu-compare" --np 2 --repeat 1 --bin-dir "$osu_dir" \
    --lib "$lib" --mpiexec "$mpiexec" --ways lib osu_allreduce -m 8:8 -i 2 -x 0
  [[ $(count start) == 0 ]] || fail "osu-compare started MPS for host buffers"
fi

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all with-mps cases passed"
