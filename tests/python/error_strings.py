"""An error the library raises reaches mpi4py with the library's words (issue 12): a host buffer sent
on a communicator asserted device-only (the MPI 4.1 info key, on the library's fake device) fails
with MPI_ERR_BUFFER, and the exception's text names the library, the call and the cause,
not an unrelated string from the base MPI's error ring. An error of the base MPI's own (a rank that
does not exist) keeps the base MPI's class and text. And mpi4py's Get_info shows what the library
reports: "cuda" among MPI 4.1's memory allocation kinds, and the assertion it acts on.

    MCRPMPI_FAKE_DEVICE=1 MCRPMPI_P2P_CHANNEL=mpi \
        mpiexec -n 2 -genv LD_PRELOAD .../libmcrpmpi.so python error_strings.py
"""
import sys

import numpy as np

from harness import Checker, dup_asserting_device_only, import_mpi


def main():
    MPI = import_mpi()
    world = MPI.COMM_WORLD
    check = Checker("error_strings", world)
    comm = dup_asserting_device_only(MPI, world)
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    host = np.arange(16, dtype=np.int32)
    try:
        comm.Send(host, dest=comm.Get_rank(), tag=3)
        check.true("a host buffer on an asserted communicator raises", False, "Send returned normally")
    except MPI.Exception as error:
        text = str(error)
        print(f"[{comm.Get_rank()}] mpi4py says: {text}", flush=True)
        check.true("error class", error.Get_error_class() == MPI.ERR_BUFFER, f"class {error.Get_error_class()}")
        check.true("the text names the library and the call", "mcrpmpi: MPI_Send" in text, text)
        check.true("the text gives the cause", "device memory only" in text, text)
        check.true("no unrelated base-MPI string", "inet_pton" not in text, text)
    try:
        comm.Send(np.zeros(0, dtype=np.int32), dest=comm.Get_size() + 5, tag=3)
        check.true("a send to a rank that does not exist raises", False, "Send returned normally")
    except MPI.Exception as error:
        check.true("base MPI's class", error.Get_error_class() == MPI.ERR_RANK, f"class {error.Get_error_class()}")
        check.true("base MPI's text", "mcrpmpi" not in str(error), str(error))
    for name, communicator in (("WORLD", world), ("the asserted communicator", comm)):
        used = communicator.Get_info()
        kinds = (used.Get("mpi_memory_alloc_kinds") or "").split(",")
        assertion = used.Get("mpi_assert_memory_alloc_kinds")
        used.Free()
        check.true(f"Get_info of {name} lists cuda once", kinds.count("cuda") == 1, f"kinds {kinds}")
        if communicator is comm:
            check.true("Get_info shows the assertion", assertion == "cuda:device", f"got {assertion!r}")
    comm.Free()
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
