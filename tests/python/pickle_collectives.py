"""The collectives through mpi4py's lowercase (pickle) methods, checked against references every
rank computes itself. mpi4py turns them into byte-buffer collectives (Bcast, Gather(v), Scatter(v),
Alltoall(v), Allgather(v), ...) and point-to-point for reductions: the library must pass all of
them through unchanged. Objects range from None to a pickle of several hundred KiB.

    mpiexec -n 3 python pickle_collectives.py
"""
import sys

import numpy as np

from harness import Checker, import_mpi


def object_of(rank, large=False):
    """A rank-specific Python object; `large` adds an array of about 400 KiB."""
    obj = {"rank": rank, "items": list(range(rank)), "text": "r" * rank, "array": np.arange(rank + 2) * 1.5}
    if large:
        obj["big"] = np.full(50_000, float(rank))
    return obj


def same(a, b):
    """Deep equality that understands NumPy arrays inside containers."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def check_collectives(MPI, comm, check, large):
    rank, size = comm.Get_rank(), comm.Get_size()
    tag = " (large)" if large else ""
    everyone = [object_of(r, large) for r in range(size)]

    root = size - 1
    check("bcast" + tag, comm.bcast(everyone[rank] if rank == root else None, root=root), everyone[root])
    check("bcast None", comm.bcast(None, root=0), None)
    check("allgather" + tag, comm.allgather(everyone[rank]), everyone)
    gathered = comm.gather(everyone[rank], root=0)
    check("gather" + tag, gathered, everyone if rank == 0 else None)
    pieces = [object_of(100 + r, large) for r in range(size)] if rank == root else None
    check("scatter" + tag, comm.scatter(pieces, root=root), object_of(100 + rank, large))
    outgoing = [(rank, dst, object_of(dst, large)) for dst in range(size)]
    check("alltoall" + tag, comm.alltoall(outgoing), [(src, rank, object_of(rank, large)) for src in range(size)])

    arrays = [np.arange(7, dtype=np.int64) * (r + 1) for r in range(size)]
    check("allreduce SUM int", comm.allreduce(rank + 1), size * (size + 1) // 2)
    check("allreduce SUM array", comm.allreduce(arrays[rank], op=MPI.SUM), sum(arrays))
    check("allreduce MAX", comm.allreduce(rank * 10, op=MPI.MAX), (size - 1) * 10)
    check("allreduce PROD", comm.allreduce(rank + 2, op=MPI.PROD), int(np.prod(np.arange(2, size + 2))))
    check("allreduce MAXLOC", comm.allreduce((rank % 2, rank), op=MPI.MAXLOC), (1 if size > 1 else 0, 1 if size > 1 else 0))
    check("allreduce list concat", comm.allreduce([rank]), list(range(size)))
    check("reduce", comm.reduce(rank + 1, op=MPI.SUM, root=root), size * (size + 1) // 2 if rank == root else None)
    check("scan", comm.scan(rank + 1), (rank + 1) * (rank + 2) // 2)
    exscan = comm.exscan(rank + 1)
    check("exscan", exscan, None if rank == 0 else rank * (rank + 1) // 2)
    comm.barrier()
    check("barrier", True, True)

    comm.Ibarrier().Wait()  # mpi4py has no lowercase nonblocking collectives; this mixes one in


def main():
    MPI = import_mpi()
    comm = MPI.COMM_WORLD
    checker = Checker("pickle-collectives", comm)

    def check(label, got, expected):
        checker.true(f"{label} [ranks={comm.Get_size()}]", same(got, expected), f"got {got!r}, expected {expected!r}")

    for large in (False, True):
        check_collectives(MPI, comm, check, large)
    # A split communicator with reversed order: the library must map ranks per communicator.
    reversed_comm = comm.Split(0, comm.Get_size() - comm.Get_rank())
    check_collectives(MPI, reversed_comm, check, False)
    reversed_comm.Free()
    return checker.finish()


if __name__ == "__main__":
    sys.exit(main())
