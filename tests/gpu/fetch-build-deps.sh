#!/usr/bin/env bash
# Prepares DIR (a folder git ignores, e.g. .gpu) to travel to the project's GPU machine, which has
# CUDA, CMake and Python with NCCL but no MPI and none of the other build dependencies: Debian's
# MPICH (shared/gpu/fetch-mpich-debs.sh) plus the -dev packages the build needs (GoogleTest, hwloc,
# nlohmann-json, CLI11, pkg-config). On the GPU machine: `source DIR/use-build-deps.sh`.
# Usage: tests/gpu/fetch-build-deps.sh DIR
set -euo pipefail
dir=${1:?usage: fetch-build-deps.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
shared=${MCRPMPI_SHARED:-$here/../../../shared}
"$shared/gpu/fetch-mpich-debs.sh" "$dir"
(cd "$dir/debs" && apt-get download -q libgtest-dev libhwloc-dev libnuma-dev libudev-dev nlohmann-json3-dev \
   libcli11-dev pkg-config pkgconf pkgconf-bin libpkgconf3 >/dev/null)
# mpi4py for tests/gpu/python-venv-on-device.sh (the Python GPU tests): PyPI's wheels for the Python
# versions the GPU machine may have (its own mpi4py is built for Open MPI: H200, 2026-11-27), a few
# MB each, unpacked there in a second; and the sdist, built there (minutes) when no wheel fits. Only
# mpi4py itself from source: `--no-binary :all:` also built Cython from source here (4 minutes).
mkdir -p "$dir/py"
mpi4py="mpi4py==${MCRPMPI_MPI4PY_VERSION:-4.1.2}"
for version in 3.10 3.11 3.12 3.13; do
  python3 -m pip download -q --only-binary :all: --no-deps --python-version "$version" \
    -d "$dir/py" "$mpi4py" || echo "fetch-build-deps: no $mpi4py wheel for Python $version"
done
python3 -m pip download -q --no-binary mpi4py --no-deps -d "$dir/py" "$mpi4py"
cp "$here/use-build-deps.sh" "$dir/"
echo "fetch-build-deps: $(ls "$dir/debs" | wc -l) packages ($(du -sh "$dir/debs" | cut -f1)) in $dir/debs"
