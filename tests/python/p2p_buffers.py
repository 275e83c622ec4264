"""Point-to-point through mpi4py on every array kind (issue 10): Send/Recv, Isend/Irecv, Sendrecv,
Sendrecv_replace, Probe then receive by the probed size, persistent Send_init/Recv_init, the
lowercase (pickle) send/recv of objects holding arrays, in a ring, checked against NumPy
references; partitioned Psend_init/Precv_init with Pready and Parrived; a persistent wildcard
receive polled with Get_status; the error of a truncated receive in Waitall; then Disconnect with a freed send and an inactive persistent request;
then a rank blocked in Barrier while its peer waits for it on a communicator asserted device-only. mpi4py 4 calls the large-count symbols (MPI_Send_c, ...), so those are exercised.

    mpiexec -n 3 python p2p_buffers.py [--backend numpy|cupy|torch|fake] [--sizes 0,1,1024]
"""
import argparse
import sys

import numpy as np

from array_backends import make_backend
from harness import Checker, deterministic_data, dup_asserting_device_only, import_mpi, library_loaded

SENTINEL = 42


def run(MPI, comm, be, check, sizes, dtypes):
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    for dtype in dtypes:
        for n in sizes:
            label = f"[{dtype} n={n} ranks={size}]"
            mine = deterministic_data(rank, n, dtype, salt=1)
            theirs = deterministic_data(left, n, dtype, salt=1)

            def receive_buffer():
                return be.full(n + 1, dtype, SENTINEL)

            def expect(what, buf, status=None):
                got = be.to_numpy(buf)
                check.equal(f"{what} {label}", got[:n], theirs)
                check.equal(f"{what} sentinel {label}", got[n:], np.full(1, SENTINEL, dtype))
                if status is not None:
                    check.true(f"{what} status {label}",
                               status.Get_source() == left and status.Get_count(MPI._typedict[np.dtype(dtype).char]) == n,
                               f"source {status.Get_source()} count {status.Get_count()}")

            out = be.from_numpy(mine)
            be.synchronize()

            # Send/Recv: even ranks send first (a ring of blocking calls then completes; one rank
            # sends to itself without blocking).
            recv = receive_buffer()
            status = MPI.Status()
            if size == 1:
                request = comm.Isend([out, n], dest=right, tag=1)
                comm.Recv([recv, n], source=left, tag=1, status=status)
                request.Wait()
            elif rank % 2 == 0:
                comm.Send([out, n], dest=right, tag=1)
                comm.Recv([recv, n], source=left, tag=1, status=status)
            else:
                comm.Recv([recv, n], source=left, tag=1, status=status)
                comm.Send([out, n], dest=right, tag=1)
            expect("Send/Recv", recv, status)

            # Isend/Irecv, Waitall.
            recv = receive_buffer()
            requests = [comm.Irecv([recv, n], source=left, tag=2), comm.Isend([out, n], dest=right, tag=2)]
            statuses = [MPI.Status(), MPI.Status()]
            MPI.Request.Waitall(requests, statuses)
            expect("Isend/Irecv", recv, statuses[0])

            # Sendrecv and Sendrecv_replace.
            recv = receive_buffer()
            status = MPI.Status()
            comm.Sendrecv([out, n], dest=right, sendtag=3, recvbuf=[recv, n], source=left, recvtag=3, status=status)
            expect("Sendrecv", recv, status)
            buf = be.from_numpy(np.concatenate([mine, np.full(1, SENTINEL, dtype)]))
            be.synchronize()
            comm.Sendrecv_replace([buf, n], dest=right, sendtag=4, source=left, recvtag=4)
            expect("Sendrecv_replace", buf)

            # Probe, then receive exactly what it reports.
            request = comm.Isend([out, n], dest=right, tag=5)
            status = MPI.Status()
            comm.Probe(source=left, tag=5, status=status)
            probed = status.Get_count(MPI._typedict[np.dtype(dtype).char])
            check.true(f"Probe reports the size {label}", probed == n, f"probed {probed}")
            recv = receive_buffer()
            comm.Recv([recv, probed], source=left, tag=5)
            request.Wait()
            expect("Probe then Recv", recv)

            # Persistent, started twice.
            recv = receive_buffer()
            requests = [comm.Recv_init([recv, n], source=left, tag=6), comm.Send_init([out, n], dest=right, tag=6)]
            for _ in range(2):
                MPI.Prequest.Startall(requests)
                MPI.Request.Waitall(requests)
                expect("Send_init/Recv_init", recv)
            for request in requests:
                request.Free()

    # Objects through pickle (host memory inside mpi4py, whatever the arrays were).
    obj = {"rank": rank, "payload": deterministic_data(rank, 5, "float64").tolist()}
    if size == 1:
        request = comm.isend(obj, dest=right, tag=7)
        got = comm.recv(source=left, tag=7)
        request.wait()
    elif rank % 2 == 0:
        comm.send(obj, dest=right, tag=7)
        got = comm.recv(source=left, tag=7)
    else:
        got = comm.recv(source=left, tag=7)
        comm.send(obj, dest=right, tag=7)
    check.true("pickled send/recv", got == {"rank": left, "payload": deterministic_data(left, 5, "float64").tolist()},
               repr(got))


def partitioned(MPI, comm, be, check, sizes):
    """Psend_init/Precv_init around the ring, 4 partitions of n elements each, started twice with new
    data: partitions readied in reverse order, each read back as soon as Parrived says it arrived
    (the library has copied it to the device by then), then the whole buffer and the status."""
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = 4
    for n in sizes:
        label = f"[4 partitions of {n} ranks={size}]"
        out = be.full(parts * n, "int32", 0)
        recv = be.full(parts * n, "int32", SENTINEL)
        # mpi4py reads an explicit count as the count of one partition.
        requests = [comm.Precv_init([recv, n, MPI.INT], parts, source=left, tag=9),
                    comm.Psend_init([out, n, MPI.INT], parts, dest=right, tag=9)]
        for round_ in range(2):
            theirs = deterministic_data(left, parts * n, "int32", salt=4 + round_)
            out[...] = be.from_numpy(deterministic_data(rank, parts * n, "int32", salt=4 + round_))
            recv[...] = be.from_numpy(np.full(parts * n, SENTINEL, "int32"))
            be.synchronize()
            MPI.Prequest.Startall(requests)
            for p in reversed(range(parts)):
                requests[1].Pready(p)
            waiting = set(range(parts))
            while waiting:
                for p in sorted(waiting):
                    if requests[0].Parrived(p):
                        waiting.discard(p)
                        check.equal(f"partition {p} once Parrived {label}", be.to_numpy(recv)[p * n:(p + 1) * n],
                                    theirs[p * n:(p + 1) * n])
            status = MPI.Status()
            MPI.Request.Waitall(requests, [status, MPI.Status()])
            check.equal(f"Psend_init/Precv_init round {round_} {label}", be.to_numpy(recv), theirs)
            check.true(f"Precv_init status {label}", status.Get_source() == left and status.Get_count(MPI.INT) == parts * n,
                       f"source {status.Get_source()} count {status.Get_count(MPI.INT)}")
        for request in requests:
            request.Free()


def polled_persistent_receive(MPI, comm, be, check):
    """A persistent wildcard receive polled with Request.Get_status, then completed by Wait and by
    Waitany: the status names the sender, tag and size. The mpich 4.2-5.0 and impi-rt 2021.18 wheels
    lose it once Get_status has seen the receive complete, and their Waitany never returns it; the
    library keeps it (runtime/kept_statuses.h)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    n = 64
    out = be.from_numpy(deterministic_data(rank, n, "int32", salt=3))
    recv = be.full(n, "int32", SENTINEL)
    be.synchronize()
    receive = comm.Recv_init([recv, n], source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)
    for round_, completion in enumerate(["Wait", "Waitany"]):
        tag = 20 + round_
        receive.Start()
        send = comm.Isend([out, n], dest=right, tag=tag)
        while not receive.Get_status():
            pass
        status = MPI.Status()
        if completion == "Wait":
            receive.Wait(status)
            index = 0
        else:
            index = MPI.Request.Waitany([receive], status)
        send.Wait()
        check.true(f"a persistent receive polled by Get_status, then {completion}: its status",
                   index == 0 and status.Get_source() == left and status.Get_tag() == tag
                   and status.Get_count(MPI.INT) == n,
                   f"index {index} source {status.Get_source()} tag {status.Get_tag()} count {status.Get_count(MPI.INT)}")
        check.equal(f"a persistent receive polled by Get_status, then {completion}: the data", be.to_numpy(recv),
                    deterministic_data(left, n, "int32", salt=3))
    receive.Free()


def truncation_in_waitall(MPI, comm, be, check):
    """A receive shorter than its message, completed by Waitall beside a send: mpi4py raises
    MPI.Exception with ERR_IN_STATUS, and the receive's status has class ERR_TRUNCATE (through the
    library as on host buffers; MPICH 4.0.2 alone reported ERR_OTHER for a staged receive)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    n = 16
    out = be.from_numpy(np.arange(n + 3, dtype=np.int32))
    recv = be.full(n + 1, "int32", SENTINEL)
    be.synchronize()
    requests = [comm.Irecv([recv, n], source=left, tag=8), comm.Isend([out, n + 3], dest=right, tag=8)]
    statuses = [MPI.Status(), MPI.Status()]
    call_class = MPI.SUCCESS
    try:
        MPI.Request.Waitall(requests, statuses)
    except MPI.Exception as error:
        call_class = error.Get_error_class()
    check.true("Waitall over a truncated receive raises ERR_IN_STATUS", call_class == MPI.ERR_IN_STATUS,
               f"class {call_class}")
    receive_class = MPI.Get_error_class(statuses[0].Get_error())
    check.true("the truncated receive's status says ERR_TRUNCATE", receive_class == MPI.ERR_TRUNCATE,
               f"class {receive_class}")
    if statuses[1].Get_error() == MPI.ERR_PENDING:
        requests[1].Wait()  # neither failed nor completed by the failed Waitall
    check.equal("nothing written past the truncated receive", be.to_numpy(recv)[n:], np.full(1, SENTINEL, np.int32))


def disconnect(MPI, be, check):
    """comm.Disconnect() (MPI 4.1, 12.10.4): a send freed while active finishes within it, and an
    inactive persistent request may stay on the communicator, to be freed afterwards. The persistent
    part needs the library (MPICH 4.0.2 alone never returns from that disconnect: 
    docs/base-mpi-defects.md); so do host sends past the eager size, which MPICH 4.0.2's disconnect does not wait
    for (sizes above 8 elements only on device arrays, which the library moves itself)."""
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    for n in (8, 262144) if be.on_device else (8,):
        label = f"[disconnect n={n} ranks={size}]"
        comm = world.Dup()
        out = be.from_numpy(deterministic_data(rank, n, "int32", salt=2))
        recv = be.full(n, "int32", SENTINEL)
        be.synchronize()
        receive = comm.Irecv([recv, n, MPI.INT], source=left, tag=4)
        send = comm.Isend([out, n, MPI.INT], dest=right, tag=4)
        receive.Wait()
        send.Free()
        comm.Disconnect()
        check.true(f"Disconnect sets the handle to COMM_NULL {label}", comm == MPI.COMM_NULL)
        check.equal(f"Isend freed before Disconnect {label}", be.to_numpy(recv),
                    deterministic_data(left, n, "int32", salt=2))
        del out  # its memory goes: the disconnect has waited for the send
    if not library_loaded():
        return
    comm = world.Dup()
    mine = be.from_numpy(np.array([rank], dtype="int32"))
    everyone = be.full(size, "int32", SENTINEL)
    be.synchronize()
    request = comm.Allgather_init([mine, 1, MPI.INT], [everyone, 1, MPI.INT])
    request.Start()
    request.Wait()
    check.equal("persistent allgather before Disconnect", be.to_numpy(everyone), np.arange(size, dtype="int32"))
    comm.Disconnect()
    world.Set_errhandler(MPI.ERRORS_RETURN)
    try:
        request.Start()
        error_class = MPI.SUCCESS
    except MPI.Exception as error:
        error_class = error.Get_error_class()
    world.Set_errhandler(MPI.ERRORS_ARE_FATAL)
    check.true("Start after Disconnect fails with ERR_REQUEST", error_class == MPI.ERR_REQUEST, f"class {error_class}")
    request.Free()
    check.true("Free after Disconnect", request == MPI.REQUEST_NULL)


def blocked_elsewhere(MPI, be, check):
    """A rank that starts a send or a receive on a communicator asserted device-only (the info key,
    as mpi4py programs assert it: comm.Dup(info)) and then blocks in comm.Barrier() on COMM_WORLD,
    while its peer waits in Recv or Send: MPI says the peer's call completes. The library's helper
    thread answers for the blocked rank (docs/point-to-point.md, "Device-only communicators"; mpi4py asks for
    MPI_THREAD_MULTIPLE); before it both ranks hung. Device arrays with the library only."""
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if not be.on_device or not library_loaded() or size < 2:
        return
    comm = dup_asserting_device_only(MPI, world)
    n = 262144
    message = deterministic_data(0, n, "int32", salt=3)
    for blocked_sends in (True, False):
        for blocked in (0, 1):
            waiting = 1 - blocked
            label = f"[blocked {'sender' if blocked_sends else 'receiver'} rank {blocked} ranks={size}]"
            sends = (rank == blocked) == blocked_sends
            buf = be.from_numpy(message) if sends else be.full(n, "int32", SENTINEL)
            be.synchronize()
            peer = waiting if rank == blocked else blocked
            if rank == blocked:
                request = (comm.Isend if sends else comm.Irecv)([buf, n, MPI.INT], peer, 6)
                world.Barrier()
                request.Wait()
            elif rank == waiting:
                if sends:
                    comm.Send([buf, n, MPI.INT], dest=peer, tag=6)
                else:
                    comm.Recv([buf, n, MPI.INT], source=peer, tag=6)
                world.Barrier()
            else:
                world.Barrier()
            if rank in (blocked, waiting) and not sends:
                check.equal(f"message received while its peer was in Barrier {label}", be.to_numpy(buf), message)
    comm.Free()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--sizes", default="0,1,1024,262144")
    parser.add_argument("--dtypes", default="float32,int64")
    args = parser.parse_args()
    MPI = import_mpi()
    be = make_backend(args.backend)
    comm = MPI.COMM_WORLD
    check = Checker(f"p2p_buffers --backend {args.backend}", comm)
    sizes = [int(s) for s in args.sizes.split(",")]
    run(MPI, comm, be, check, sizes, args.dtypes.split(","))
    partitioned(MPI, comm, be, check, sizes)
    polled_persistent_receive(MPI, comm, be, check)
    truncation_in_waitall(MPI, comm, be, check)
    disconnect(MPI, be, check)
    blocked_elsewhere(MPI, be, check)
    sys.exit(check.finish())


if __name__ == "__main__":
    main()
