# Source on the GPU machine (after fetch-build-deps.sh filled this folder): unpacks MPICH and the
# build dependencies into $MPICH_ROOT (default /opt/mpich) through use-mpich.sh, and points CMake,
# pkg-config and the compiler at them. Then: tests/gpu/run-gpu-suite.sh build-gpu
_deps_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$_deps_here/use-mpich.sh"   # unpacks every .deb in debs/ into $MPICH_ROOT once
export CMAKE_PREFIX_PATH=$MPICH_ROOT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export PKG_CONFIG_PATH=$MPICH_ROOT/usr/lib/x86_64-linux-gnu/pkgconfig:$MPICH_ROOT/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$MPICH_ROOT   # the .pc files say /usr: prefix their -I and -L paths
export CPATH=$MPICH_ROOT/usr/include:$CPATH
unset _deps_here
