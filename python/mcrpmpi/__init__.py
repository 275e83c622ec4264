"""mcrpmpi: GPU-aware collectives for any MPICH-ABI MPI, as a preloaded PMPI library.

The wheel carries libmcrpmpi.so and the run wrapper mcrpmpirun; `python -m mcrpmpi` (see
__main__.py) runs mpiexec with the library preloaded into the ranks. The functions here find the
pieces a run needs: the library, the launcher, the MPI library the ranks will load and NCCL.
"""
import glob
import os
import shutil
import sys

__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))


def library_path():
    """libmcrpmpi.so inside this package."""
    return os.path.join(_HERE, "lib", "libmcrpmpi.so")


def mcrpmpirun_path():
    """The run wrapper inside this package."""
    return os.path.join(_HERE, "bin", "mcrpmpirun")


def _prefixes():
    """Where pip puts wheels' files: this interpreter's prefix (a venv) and the user base."""
    prefixes = [sys.prefix]
    if sys.base_prefix != sys.prefix:
        prefixes.append(sys.base_prefix)
    return prefixes


def find_mpiexec():
    """The launcher: $MCRPMPI_MPIEXEC, the one a pip-installed MPI put next to this Python
    (`pip install mpich` or `impi-rt`), then mpiexec on PATH."""
    configured = os.environ.get("MCRPMPI_MPIEXEC")
    if configured:
        return shutil.which(configured) or configured
    for prefix in _prefixes():
        candidate = os.path.join(prefix, "bin", "mpiexec")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("mpiexec")


def find_libmpi():
    """The MPICH-ABI library mpi4py would load next to this Python (a wheel's lib/libmpi.so.12),
    or None (then the system's, found by the dynamic loader)."""
    for prefix in _prefixes():
        candidate = os.path.join(prefix, "lib", "libmpi.so.12")
        if os.path.exists(candidate):
            return candidate
    return None


def find_nccl():
    """libnccl.so.2 of an nvidia-nccl-cu* wheel (site-packages/nvidia/nccl/lib), or None (the
    library then loads libnccl.so.2 from the loader's search path, if any)."""
    configured = os.environ.get("MCRPMPI_NCCL_LIBRARY")
    if configured:
        return configured
    for entry in sys.path:
        for candidate in sorted(glob.glob(os.path.join(entry, "nvidia", "nccl*", "lib", "libnccl.so.2"))):
            return candidate
    return None
