# shellcheck shell=bash
# The CUDA MPS daemon for runs where several ranks share a GPU (sourced; scripts/with-mps is the
# command-line form). Without MPS, processes sharing a GPU time-slice it and every small GPU step
# costs milliseconds of context switching (FIELD-NOTES, "Several ranks on the one lent GPU").
#
#   mcrpmpi_mps_begin RANKS   starts a private daemon when `nvidia-cuda-mps-control` exists and RANKS
#                             (ranks on this node) exceed the GPUs this node shows; exports
#                             CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY (fresh folders) for
#                             everything started afterwards, and stops the daemon when the shell
#                             exits, on failure, Ctrl-C or TERM alike (it sets the EXIT, INT and TERM
#                             traps). Says what it did on stdout.
#   mcrpmpi_mps_end           stops it now (also what the EXIT trap runs); safe to call twice.
#
# MCRPMPI_MPS: `auto` (default) as above; `0` never starts one; `1` starts one even with a GPU per
# rank and fails (status 1) when it cannot. A daemon already serving this shell (its control pipe
# in $CUDA_MPS_PIPE_DIRECTORY, or in the default /tmp/nvidia-mps) is used as it is, never stopped.

mcrpmpi_mps_say() { echo "mcrpmpi-mps: $*"; }

# GPUs this node shows to CUDA: nvidia-smi's list, narrowed by CUDA_VISIBLE_DEVICES when set.
mcrpmpi_gpu_count() {
  local listed=0
  if command -v nvidia-smi >/dev/null 2>&1; then
    listed=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
  if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
    local visible=0 entry
    local IFS=,
    for entry in $CUDA_VISIBLE_DEVICES; do
      if [[ -n $entry && $entry != -* ]]; then visible=$((visible + 1)); fi
    done
    if ((visible < listed)); then listed=$visible; fi
  fi
  echo "${listed:-0}"
}

# The rank count of a launcher command line (mpiexec/mpirun -n N or -np N), or empty.
mcrpmpi_ranks_of() {
  while (($# > 0)); do
    case $1 in
      -n | -np | --np) echo "${2:-}"; return 0 ;;
      -n=* | -np=* | --np=*) echo "${1#*=}"; return 0 ;;
    esac
    shift
  done
}

mcrpmpi_mps_begin() {
  local ranks=${1:-1} mode=${MCRPMPI_MPS:-auto}
  case $mode in
    0 | off | no) mcrpmpi_mps_say "MCRPMPI_MPS=$mode: not starting the CUDA MPS daemon"; return 0 ;;
    1 | on | yes | require) mode=require ;;
    auto | "") mode=auto ;;
    *) echo "mcrpmpi-mps: MCRPMPI_MPS must be 0, 1 or auto, not '$mode'" >&2; return 2 ;;
  esac
  if ! [[ $ranks =~ ^[0-9]+$ ]]; then
    echo "mcrpmpi-mps: the rank count must be a number, not '$ranks'" >&2
    return 2
  fi
  local control
  control=$(command -v nvidia-cuda-mps-control || true)
  if [[ -z $control ]]; then
    if [[ $mode == require ]]; then
      echo "mcrpmpi-mps: MCRPMPI_MPS=1 but nvidia-cuda-mps-control is not on PATH" >&2
      return 1
    fi
    return 0  # no MPS on this machine (and, usually, no GPU)
  fi
  local existing=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
  if [[ -e $existing/control ]]; then
    mcrpmpi_mps_say "using the CUDA MPS daemon already running (pipe directory $existing)"
    return 0
  fi
  local gpus
  gpus=$(mcrpmpi_gpu_count)
  if [[ $mode == auto ]] && ((gpus == 0 || ranks <= gpus)); then
    mcrpmpi_mps_say "$ranks rank(s) on $gpus GPU(s): no GPU is shared, MPS not started"
    return 0
  fi
  local folder
  folder=$(mktemp -d "${TMPDIR:-/tmp}/mcrpmpi-mps.XXXXXX") || return 1
  mkdir -p "$folder/pipe" "$folder/log"
  export CUDA_MPS_PIPE_DIRECTORY=$folder/pipe CUDA_MPS_LOG_DIRECTORY=$folder/log
  if ! "$control" -d; then
    echo "mcrpmpi-mps: nvidia-cuda-mps-control -d failed (logs: $folder/log)" >&2
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    [[ $mode == require ]] && return 1
    mcrpmpi_mps_say "going on without MPS"
    return 0
  fi
  MCRPMPI_MPS_FOLDER=$folder
  MCRPMPI_MPS_CONTROL=$control
  trap mcrpmpi_mps_end EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mcrpmpi_mps_say "started the CUDA MPS daemon for $ranks rank(s) on $gpus GPU(s)" \
    "(CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY)"
}

mcrpmpi_mps_end() {
  [[ -n ${MCRPMPI_MPS_FOLDER:-} ]] || return 0
  local folder=$MCRPMPI_MPS_FOLDER
  MCRPMPI_MPS_FOLDER=
  if echo quit | CUDA_MPS_PIPE_DIRECTORY=$folder/pipe "$MCRPMPI_MPS_CONTROL" >/dev/null 2>&1; then
    # The daemon removes its control pipe when it has gone; wait a little for that.
    local tries=0
    while [[ -e $folder/pipe/control ]] && ((tries < 50)); do
      sleep 0.1
      tries=$((tries + 1))
    done
    rm -rf "$folder" || true
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    mcrpmpi_mps_say "stopped the CUDA MPS daemon"
  else
    echo "mcrpmpi-mps: could not stop the CUDA MPS daemon (echo quit | CUDA_MPS_PIPE_DIRECTORY=$folder/pipe" \
      "nvidia-cuda-mps-control); logs in $folder/log" >&2
  fi
  return 0
}
