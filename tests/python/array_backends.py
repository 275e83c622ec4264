"""The array kinds the buffer tests run on: NumPy (host), CuPy and PyTorch (device), and the
library's fake device (NumPy arrays over memory from mcrpmpi_fake_device_alloc, which the library
treats as device memory when MCRPMPI_FAKE_DEVICE=1: its device paths on a CPU machine). Each
backend moves NumPy reference data to its memory and back, so one catalogue of calls checks them
all against the same NumPy references."""
import ctypes
import os

import numpy as np

from harness import skip


class NumpyBackend:
    name = "numpy"
    on_device = False

    def from_numpy(self, array):
        return np.array(array, copy=True)

    def to_numpy(self, array):
        return np.asarray(array)

    def full(self, n, dtype, value):
        return np.full(n, value, dtype=dtype)

    def synchronize(self):
        pass


class CupyBackend:
    name = "cupy"
    on_device = True

    def __init__(self, cupy):
        self.cp = cupy

    def from_numpy(self, array):
        return self.cp.asarray(array)

    def to_numpy(self, array):
        return self.cp.asnumpy(array)

    def full(self, n, dtype, value):
        return self.cp.full(n, value, dtype=dtype)

    def synchronize(self):
        # mpi4py hands device pointers to MPI without waiting for the stream (its docs' rule).
        self.cp.cuda.get_current_stream().synchronize()


class TorchBackend:
    name = "torch"
    on_device = True

    def __init__(self, torch):
        self.torch = torch

    def from_numpy(self, array):
        return self.torch.from_numpy(np.ascontiguousarray(array)).to("cuda")

    def to_numpy(self, tensor):
        return tensor.cpu().numpy()

    def full(self, n, dtype, value):
        return self.from_numpy(np.full(n, value, dtype=dtype))

    def synchronize(self):
        self.torch.cuda.synchronize()


class FakeDeviceBackend:
    """NumPy arrays in the library's fake device memory (the library must be preloaded)."""
    name = "fake"
    on_device = True

    def __init__(self, alloc, release):
        self.alloc, self.release = alloc, release
        self.blocks = []  # freed at exit: arrays may outlive the calls that made them

    def empty(self, n, dtype):
        dtype = np.dtype(dtype)
        nbytes = max(n * dtype.itemsize, 1)
        address = self.alloc(nbytes)
        if not address:
            raise MemoryError("mcrpmpi_fake_device_alloc failed")
        self.blocks.append(address)
        raw = (ctypes.c_char * nbytes).from_address(address)
        return np.frombuffer(raw, dtype=np.uint8, count=n * dtype.itemsize).view(dtype)

    def from_numpy(self, array):
        array = np.ascontiguousarray(array)
        out = self.empty(array.size, array.dtype)
        out[...] = array.ravel()
        return out

    def to_numpy(self, array):
        return np.array(array, copy=True)

    def full(self, n, dtype, value):
        out = self.empty(n, dtype)
        out[...] = value
        return out

    def synchronize(self):
        pass


def select_local_gpu(count):
    """Ranks of one node share its GPUs round-robin (run_python.sh gives ranks that share one GPU
    their own NCCL_HOSTID, so NCCL accepts them)."""
    local_rank = int(os.environ.get("MPI_LOCALRANKID", os.environ.get("PMI_RANK", "0")))
    return local_rank % count


def make_backend(name):
    """The backend called `name`, or a skip (exit 77) saying what is missing."""
    if name == "numpy":
        return NumpyBackend()
    if name == "cupy":
        try:
            import cupy
        except ImportError as error:
            skip(f"cupy not installed ({error})")
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # no driver / no device: CuPy raises its own runtime error
            skip(f"no CUDA device ({error})")
        if count == 0:
            skip("no CUDA device")
        cupy.cuda.Device(select_local_gpu(count)).use()
        return CupyBackend(cupy)
    if name == "torch":
        try:
            import torch
        except ImportError as error:
            skip(f"torch not installed ({error})")
        if not torch.cuda.is_available():
            skip("no CUDA device visible to torch")
        torch.cuda.set_device(select_local_gpu(torch.cuda.device_count()))
        return TorchBackend(torch)
    if name == "fake":
        process = ctypes.CDLL(None)
        try:
            alloc, release = process.mcrpmpi_fake_device_alloc, process.mcrpmpi_fake_device_free
        except AttributeError:
            skip("the fake device needs libmcrpmpi preloaded")
        alloc.restype, alloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
        release.restype, release.argtypes = None, [ctypes.c_void_p]
        probe = alloc(1)
        if not probe:
            skip("the fake device is off (set MCRPMPI_FAKE_DEVICE=1)")
        release(probe)
        return FakeDeviceBackend(alloc, release)
    raise SystemExit(f"unknown array backend {name!r} (numpy, cupy, torch, fake)")
