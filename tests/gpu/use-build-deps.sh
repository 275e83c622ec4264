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
# mpicc/mpicxx -show answer with the /usr paths the packages were built for: wrappers in their place
# rewrite those answers to the unpacked tree, so CMake's FindMPI (and anyone asking) gets real paths.
for _w in mpicc mpicxx; do
  rm -f "$MPICH_ROOT/usr/bin/$_w"
  cat > "$MPICH_ROOT/usr/bin/$_w" <<WRAP
#!/usr/bin/env bash
case "\${1:-}" in
  -show|-compile[-_]info|-link[-_]info|-showme*) "$MPICH_ROOT/usr/bin/$_w.mpich" "\$@" | sed "s# /usr/# $MPICH_ROOT/usr/#g; s#-I/usr/#-I$MPICH_ROOT/usr/#g; s#-L/usr/#-L$MPICH_ROOT/usr/#g" ;;
  *) exec "$MPICH_ROOT/usr/bin/$_w.mpich" "\$@" ;;
esac
WRAP
  chmod +x "$MPICH_ROOT/usr/bin/$_w"
done
unset _w
