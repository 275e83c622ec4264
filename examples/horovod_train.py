"""An ordinary Horovod PyTorch training script, written the way users write them.

Nothing here knows about libmcrpmpi: run it through `mcrpmpirun` (library preloaded into the ranks)
or plain `mpiexec` and compare. A small MLP learns a synthetic regression task; each rank trains on
its own shard, hvd.DistributedOptimizer averages gradients (allreduce), hvd.broadcast_parameters /
broadcast_optimizer_state start every rank from rank 0's state, and each step also calls
hvd.allgather and hvd.alltoall on the model's outputs, so those collectives are exercised too.
Rank 0 prints one line per step: loss averaged over ranks, allgather and alltoall checksums.

    scripts/build-horovod.sh                                           # Horovod 0.28.1, MPI ops
    scripts/mcrpmpirun --stats -n 2 build/python-venv/bin/python examples/horovod_train.py
    mpiexec -n 2 build/python-venv/bin/python examples/horovod_train.py --device cpu
Exit status 0 after the last step, 77 when horovod/torch or the requested device is missing.
"""
import argparse
import sys

try:
    import torch
    import horovod
    import horovod.torch as hvd
except ImportError as error:  # not installed here: a skip, not a failure
    print(f"horovod_train: SKIP: {error}", file=sys.stderr)
    sys.exit(77)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--device", choices=["cuda", "cpu"],
                        default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def synthetic_shard(steps, batch_size, seed, rank):
    """Different data on every rank (seeded by rank), same target function everywhere."""
    target = torch.randn(16, 4, generator=torch.Generator().manual_seed(seed))
    generator = torch.Generator().manual_seed(seed + 1 + rank)
    for _ in range(steps):
        x = torch.randn(batch_size, 16, generator=generator)
        yield x, torch.sin(x @ target)


def main():
    args = parse_args()
    hvd.init()
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("horovod_train: SKIP: --device cuda but no CUDA device", file=sys.stderr)
            sys.exit(77)
        torch.cuda.set_device(hvd.local_rank())
    device = torch.device(args.device)

    torch.manual_seed(args.seed + hvd.rank())  # different initial weights: broadcast must fix that
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())

    if hvd.rank() == 0:
        print(f"horovod {horovod.__version__} torch {torch.__version__} size {hvd.size()} device {device} "
              f"mpi_enabled {hvd.mpi_enabled()} cuda_built {hvd.cuda_built()} nccl_built {hvd.nccl_built()}")
    for step, (x, y) in enumerate(synthetic_shard(args.steps, args.batch_size, args.seed, hvd.rank())):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        output = model(x)
        loss = torch.nn.functional.mse_loss(output, y)
        loss.backward()
        optimizer.step()

        detached = output.detach()
        gathered = hvd.allgather(detached, name="outputs")  # (size * batch, 4)
        # Uneven splits on purpose: rank r sends r + 1 rows to each peer (alltoallv underneath).
        splits = torch.full((hvd.size(),), hvd.rank() + 1, dtype=torch.int32)
        exchanged, received_splits = hvd.alltoall(detached[: int(splits.sum())], splits=splits, name="exchange")
        mean_loss = hvd.allreduce(loss.detach(), name="loss")  # average is the default op
        if hvd.rank() == 0:
            print(f"step {step:2d} loss {mean_loss.item():.9g} allgather_sum {gathered.sum().item():.6f} "
                  f"alltoall_received {received_splits.tolist()} alltoall_sum {exchanged.sum().item():.6f}")
    hvd.shutdown()


if __name__ == "__main__":
    main()
