#!/usr/bin/env bash
# build_and_run.sh SOURCE WORKDIR: the pip route of the README's quick start, end to end.
#  1. builds the wheel of this repository (pyproject.toml, scikit-build-core; CMake's build
#     directory is kept in WORKDIR/cmake-build, so a second run only relinks);
#  2. installs it into a venv of its own with the `mpich` wheel, the mpi4py wheel and NumPy
#     (pip install mpi4py mpich numpy <wheel>);
#  3. checks `python -m mcrpmpi --info`, including NCCL found in an nvidia-nccl-cu* wheel layout;
#  4. runs the mpi4py tests (tests/python) through `python -m mcrpmpi`, which must start the wheel's
#     mpiexec and whose library must report binding the wheel's libmpi.so.12.
set -uo pipefail
source_dir=$1 work=$2
python=${PYTHON:-python3}
venv=$work/venv
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv" || fail "cannot make a venv"
if [ ! -f "$venv/mpi-ready" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check mpi4py mpich numpy \
    || fail "pip install mpi4py mpich numpy (needs PyPI)"
  touch "$venv/mpi-ready"
fi

rm -rf "$work/dist"
echo "wheel: building from $source_dir"
"$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" \
  -Cbuild-dir="$work/cmake-build" "$source_dir" || fail "pip wheel failed"
wheel=$(ls "$work"/dist/mcrpmpi-*.whl) || fail "no wheel built"
echo "wheel: $wheel"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel" \
  || fail "cannot install $wheel"

# What the wheel holds, and what it needs at run time (no MPI, no CUDA, no NCCL).
package=$("$venv/bin/python" -c 'import mcrpmpi, os; print(os.path.dirname(mcrpmpi.__file__))')
[ -f "$package/lib/libmcrpmpi.so" ] && [ -x "$package/bin/mcrpmpirun" ] || fail "wheel lacks the library or mcrpmpirun"
"$source_dir/tests/abi/check_library_symbols.sh" "$package/lib/libmcrpmpi.so" || fail "library symbols"

# NCCL from an nvidia-nccl-cu* wheel: its layout, faked (the real wheel is ~200 MB).
fake_site=$work/fake-site
mkdir -p "$fake_site/nvidia/nccl/lib" && touch "$fake_site/nvidia/nccl/lib/libnccl.so.2"
info=$(cd "$work" && PYTHONPATH=$fake_site "$venv/bin/python" -m mcrpmpi --info) || fail "--info failed"
# Here-strings, not `echo | grep -q`: under pipefail grep's early exit can fail echo's last write
# with SIGPIPE, and the check with it (1 run in 3000 here; it failed a CI run on 2026-12-01).
echo "$info"
grep -q "launcher $venv/bin/mpiexec" <<<"$info" || fail "--info does not name the mpich wheel's mpiexec"
grep -q "MPI library $venv/lib/libmpi.so.12" <<<"$info" || fail "--info does not name the wheel's libmpi.so.12"
grep -q "NCCL $fake_site/nvidia/nccl/lib/libnccl.so.2" <<<"$info" || fail "--info misses the NCCL wheel"

tests=$source_dir/tests/python
run() {
  local log=$work/run.log
  echo "wheel: python -m mcrpmpi $*"
  (cd "$work" && "$venv/bin/python" -m mcrpmpi "$@") > "$log" 2>&1
  local status=$?
  cat "$log"
  [ "$status" = 0 ] || fail "exit status $status"
  grep -q "^mcrpmpi: base MPI $venv/lib/libmpi[.]so" "$log" || fail "the library did not report binding $venv/lib/libmpi.so.12"
  grep -q "^SKIP" "$log" && fail "a test skipped"
  return 0
}
run -n 2 "$venv/bin/python" "$tests/buffer_collectives.py" --backend numpy
run -n 3 "$venv/bin/python" "$tests/pickle_collectives.py"
run -n 2 "$venv/bin/python" "$tests/p2p_buffers.py" --backend numpy
run -n 2 -genv MCRPMPI_FAKE_DEVICE 1 -genv MCRPMPI_P2P_CHANNEL mpi "$venv/bin/python" "$tests/error_strings.py"
run --stats -n 2 "$venv/bin/python" "$tests/buffer_collectives.py" --modes blocking --dtypes float64 --sizes 7
grep -qE '^ +MPI_Allreduce +mpi +[1-9]' "$work/run.log" || fail "--stats shows no MPI_Allreduce"
echo "wheel: passed"
