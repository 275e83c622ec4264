"""What every Python test shares: skipping with ctest's skip code, comparing against computed
references, and one verdict agreed by all ranks (so a failure on one rank fails every rank)."""
import ctypes
import os
import sys

import numpy as np

SKIP_CODE = 77  # SKIP_RETURN_CODE of every mcrpmpi test


def skip(reason):
    """Ends the test as skipped, saying why (ctest shows the output of skipped tests)."""
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP_CODE)


def import_mpi():
    """mpi4py, or a skip when the venv made by scripts/setup-python.sh is not the interpreter."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        skip(f"mpi4py not importable ({error}); run scripts/setup-python.sh")
    return MPI


def library_loaded():
    """Whether libmcrpmpi.so is in the process (preloaded or linked: its symbols are global)."""
    return hasattr(ctypes.CDLL(None), "mcrpmpi_held_handle_count")


def dup_asserting_device_only(MPI, comm):
    """A duplicate of `comm` asserting that its point-to-point buffers are device memory (the MPI
    4.1 info key, as mpi4py programs set it): the library's device-only protocol runs on it."""
    info = MPI.Info.Create()
    info.Set("mpi_assert_memory_alloc_kinds", "cuda:device")
    duplicate = comm.Dup(info)
    info.Free()
    return duplicate


def deterministic_data(rank, n, dtype, salt=0):
    """Values 1..7 that depend on rank and position: sums and products over a few ranks stay exact
    in every dtype tested (fp16 included), so references compare exactly."""
    values = (np.arange(n, dtype=np.int64) * 3 + rank * 5 + salt) % 7 + 1
    if np.dtype(dtype).kind == "c":
        return (values + 1j * ((values + rank) % 3)).astype(dtype)
    return values.astype(dtype)


class Checker:
    """Counts checks and failures on this rank; finish() turns them into the process exit code."""

    def __init__(self, name, comm, verbose=None):
        self.name = name
        self.comm = comm
        self.checks = 0
        self.failures = []
        self.verbose = verbose if verbose is not None else bool(os.environ.get("MCRPMPI_TEST_VERBOSE"))

    def equal(self, label, got, expected):
        self.checks += 1
        got = np.asarray(got)
        expected = np.asarray(expected)
        ok = got.shape == expected.shape and np.array_equal(got, expected)
        if not ok:
            self._fail(label, f"got {got!r}, expected {expected!r}")
        elif self.verbose:
            print(f"[{self.comm.Get_rank()}] ok {label}", flush=True)
        return ok

    def true(self, label, condition, detail=""):
        self.checks += 1
        if not condition:
            self._fail(label, detail)
        return bool(condition)

    def _fail(self, label, detail):
        self.failures.append(label)
        print(f"[rank {self.comm.Get_rank()}] FAIL {self.name}: {label}: {detail}"[:2000], flush=True)

    def finish(self):
        """All ranks agree on the verdict; rank 0 prints one summary line. Returns the exit code."""
        failed = self.comm.allreduce(len(self.failures))
        checks = self.comm.allreduce(self.checks)
        if self.comm.Get_rank() == 0:
            verdict = "FAILED" if failed else "passed"
            print(f"{self.name}: {verdict}: {checks} checks, {failed} failures on "
                  f"{self.comm.Get_size()} ranks", flush=True)
        return 1 if failed else 0
