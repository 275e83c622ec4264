"""Data-parallel PyTorch training with mpi4py, gradients averaged on device tensors.

A small MLP learns a synthetic regression task. Each rank runs forward/backward on its slice of
the global batch; the gradients (and the loss) are packed into one flat tensor and averaged with
`comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)`. With CUDA tensors and libmcrpmpi preloaded, that
call goes to NCCL; without the library, a non-CUDA-aware MPI would be handed a device pointer.
Equal slices make the averaged gradient the gradient of the mean loss over the global batch, so
the losses must match one process trained on the concatenated batch (trained here on every rank
as the reference) within floating-point tolerance.

    scripts/mcrpmpirun --stats -n 2 python examples/ddp_train.py            # CUDA tensors
    scripts/mcrpmpirun -n 2 python examples/ddp_train.py --device cpu       # CPU tensors
Exit status 0 when the losses match, 1 when not, 77 when torch or CUDA is missing.
"""
import argparse
import os
import sys


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-per-rank", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rtol", type=float, default=1e-4, help="float32: reduction order differs")
    return parser.parse_args()


def make_model(torch, device, seed, hidden):
    torch.manual_seed(seed)  # same seed on every rank and for the reference: same initial weights
    return torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 4)).to(device)


def batches(torch, steps, global_batch, device, seed):
    generator = torch.Generator().manual_seed(seed + 1)
    true_map = torch.randn(16, 4, generator=generator)
    for _ in range(steps):
        x = torch.randn(global_batch, 16, generator=generator)
        yield x.to(device), torch.sin(x @ true_map).to(device)


def train(torch, model, data, lr, reduce_gradients=None):
    """Plain SGD on mean squared error; reduce_gradients(flat) averages across ranks when given."""
    params = list(model.parameters())
    losses = []
    for x, y in data:
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [loss.detach().reshape(1)])
        if reduce_gradients is not None:
            reduce_gradients(flat)
        with torch.no_grad():
            offset = 0
            for p in params:
                p -= lr * flat[offset:offset + p.numel()].view_as(p)
                offset += p.numel()
        losses.append(float(flat[-1]))
    return losses


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as error:
        print(f"SKIP: torch not installed ({error})", flush=True)
        return 77
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("SKIP: no CUDA device (use --device cpu for CPU tensors)", flush=True)
            return 77
        local_rank = int(os.environ.get("MPI_LOCALRANKID", os.environ.get("PMI_RANK", "0")))
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    device = torch.device(args.device, torch.cuda.current_device()) if args.device == "cuda" else "cpu"
    global_batch = args.batch_per_rank * size
    mine = slice(rank * args.batch_per_rank, (rank + 1) * args.batch_per_rank)

    def average(flat):
        if flat.is_cuda:
            torch.cuda.synchronize()  # mpi4py does not wait for the stream that produced `flat`
        comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
        flat /= size

    model = make_model(torch, device, args.seed, args.hidden)
    shards = ((x[mine], y[mine]) for x, y in batches(torch, args.steps, global_batch, device, args.seed))
    parallel = train(torch, model, shards, args.lr, average)
    reference = train(torch, make_model(torch, device, args.seed, args.hidden),
                      batches(torch, args.steps, global_batch, device, args.seed), args.lr)

    worst = max(abs(p - r) / max(abs(r), 1e-30) for p, r in zip(parallel, reference))
    ok = worst <= args.rtol and parallel[-1] < parallel[0]
    all_ok = comm.allreduce(ok, op=MPI.LAND)
    if rank == 0:
        print(f"ddp_train: {size} ranks on {args.device}, {args.steps} steps, loss {parallel[0]:.6f} -> "
              f"{parallel[-1]:.6f}; max relative difference to single process {worst:.2e} "
              f"(tolerance {args.rtol:g}): {'MATCH' if all_ok else 'MISMATCH'}", flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
