"""The array kinds the buffer-collective tests run on: NumPy (host), CuPy and PyTorch (device).
Each backend moves NumPy reference data to its memory and back, so one catalogue of collectives
(buffer_collectives.py) checks them all against the same NumPy references."""
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
    raise SystemExit(f"unknown array backend {name!r} (numpy, cupy, torch)")
