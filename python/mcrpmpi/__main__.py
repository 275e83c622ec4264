"""python -m mcrpmpi [--info] [mcrpmpirun options] [--] <mpiexec arguments>

Runs the launcher found next to this Python (or $MCRPMPI_MPIEXEC, or mpiexec on PATH) with
libmcrpmpi.so preloaded into the ranks, through the packaged mcrpmpirun. Before starting it says
which launcher, MPI library and NCCL it found; rank 0 then names the MPI the library bound.
NCCL from an nvidia-nccl-cu* wheel is handed to the ranks as MCRPMPI_NCCL_LIBRARY.

    python -m mcrpmpi -n 2 python app.py
    python -m mcrpmpi --stats -n 4 python train.py
    python -m mcrpmpi --info
"""
import os
import sys

import mcrpmpi


def report():
    """Lines saying what a run would use."""
    mpiexec = mcrpmpi.find_mpiexec()
    libmpi = mcrpmpi.find_libmpi()
    nccl = mcrpmpi.find_nccl()
    return [
        f"mcrpmpi {mcrpmpi.__version__}: library {mcrpmpi.library_path()}",
        f"mcrpmpi: launcher {mpiexec or 'none found (install mpich or impi-rt, or set MCRPMPI_MPIEXEC)'}",
        f"mcrpmpi: MPI library {libmpi or 'from the system (no wheel libmpi.so.12 next to this Python)'}",
        f"mcrpmpi: NCCL {nccl or 'not found in an nvidia-nccl-cu* wheel (libnccl.so.2 from the system, if any)'}",
    ]


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "--info":
        print("\n".join(report()))
        return 0
    for line in report():
        print(line, file=sys.stderr)
    mpiexec = mcrpmpi.find_mpiexec()
    if mpiexec is None:
        print("mcrpmpi: no mpiexec found (pip install mpich, or set MCRPMPI_MPIEXEC)", file=sys.stderr)
        return 2
    env = dict(os.environ, MCRPMPI_MPIEXEC=mpiexec)
    options, rest = [], list(argv)
    # mcrpmpirun's own options come first; everything from the first other argument is mpiexec's.
    while rest and rest[0] in ("--stats", "--debug", "--verify", "--quiet", "--tuning-file"):
        options.append(rest.pop(0))
        if options[-1] == "--tuning-file" and rest:
            options.append(rest.pop(0))
    if rest and rest[0] == "--":
        rest.pop(0)
    nccl = mcrpmpi.find_nccl()
    nccl_env = ["-genv", "MCRPMPI_NCCL_LIBRARY", nccl] if nccl else []
    command = ["bash", mcrpmpi.mcrpmpirun_path(), "--library", mcrpmpi.library_path(), *options, "--",
               *nccl_env, *rest]
    os.execvpe("bash", command, env)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
