"""Data-parallel training in NumPy with mpi4py, and its proof of correctness.

A two-layer tanh network (manual backpropagation) learns a synthetic regression task. Every step,
each rank takes its own slice of the global batch, computes the gradient of its mean loss, and
the ranks average gradients with one `Allreduce(MPI.IN_PLACE, ...)` on a flat buffer, as
data-parallel frameworks do. Because the slices are equal, the averaged gradient is the gradient
of the mean loss over the whole global batch: the run must match a single process trained on
the concatenated batch, step for step. Every rank also trains that single-process reference
(no MPI) and the losses are compared within floating-point tolerance.

    mpiexec -n 3 python examples/ddp_numpy.py                # plain MPI
    scripts/mcrpmpirun --stats -n 3 python examples/ddp_numpy.py   # through libmcrpmpi
Exit status 0 when the losses match, 1 when not.
"""
import argparse
import sys

import numpy as np


class TwoLayerNet:
    """y = W2 tanh(W1 x + b1) + b2, parameters in one flat vector so gradients reduce in one call."""

    def __init__(self, n_in, n_hidden, n_out, seed):
        rng = np.random.default_rng(seed)
        self.shapes = [(n_in, n_hidden), (n_hidden,), (n_hidden, n_out), (n_out,)]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.cumsum([0] + sizes)
        self.params = rng.normal(0.0, 0.5, self.offsets[-1])

    def unpack(self, flat):
        return [flat[a:b].reshape(s) for a, b, s in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]

    def loss_and_gradient(self, x, y):
        """Mean squared error over the rows of x and its gradient (flat, like params)."""
        w1, b1, w2, b2 = self.unpack(self.params)
        hidden = np.tanh(x @ w1 + b1)
        error = hidden @ w2 + b2 - y
        loss = float(np.mean(np.sum(error**2, axis=1)))
        d_out = 2.0 * error / len(x)
        d_hidden = (d_out @ w2.T) * (1.0 - hidden**2)
        grads = [x.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_out, d_out.sum(axis=0)]
        return loss, np.concatenate([g.ravel() for g in grads])


def synthetic_batches(steps, global_batch, n_in, n_out, seed):
    rng = np.random.default_rng(seed + 1)
    true_map = rng.normal(size=(n_in, n_out))
    for _ in range(steps):
        x = rng.normal(size=(global_batch, n_in))
        yield x, np.sin(x @ true_map)


def train_single_process(args, global_batch):
    """The reference: one process, the whole global batch each step."""
    net = TwoLayerNet(args.inputs, args.hidden, args.outputs, args.seed)
    losses = []
    for x, y in synthetic_batches(args.steps, global_batch, args.inputs, args.outputs, args.seed):
        loss, grad = net.loss_and_gradient(x, y)
        net.params -= args.lr * grad
        losses.append(loss)
    return losses


def train_data_parallel(args, comm, MPI):
    rank, size = comm.Get_rank(), comm.Get_size()
    global_batch = args.batch_per_rank * size
    net = TwoLayerNet(args.inputs, args.hidden, args.outputs, args.seed + 1000 * rank)
    comm.Bcast(net.params, root=0)  # start from rank 0's parameters, as DDP does
    losses = []
    for x, y in synthetic_batches(args.steps, global_batch, args.inputs, args.outputs, args.seed):
        mine = slice(rank * args.batch_per_rank, (rank + 1) * args.batch_per_rank)
        loss, grad = net.loss_and_gradient(x[mine], y[mine])
        packed = np.append(grad, loss)  # the loss rides along: one reduction per step
        comm.Allreduce(MPI.IN_PLACE, packed, op=MPI.SUM)
        packed /= size
        net.params -= args.lr * packed[:-1]
        losses.append(float(packed[-1]))
    return losses


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-per-rank", type=int, default=16)
    parser.add_argument("--inputs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--outputs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rtol", type=float, default=1e-10)
    return parser.parse_args()


def main():
    args = parse_args()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    parallel = train_data_parallel(args, comm, MPI)
    reference = train_single_process(args, args.batch_per_rank * comm.Get_size())
    worst = max(abs(p - r) / max(abs(r), 1e-30) for p, r in zip(parallel, reference))
    ok = worst <= args.rtol and parallel[-1] < parallel[0]
    all_ok = comm.allreduce(ok, op=MPI.LAND)
    if comm.Get_rank() == 0:
        print(f"ddp_numpy: {comm.Get_size()} ranks, {args.steps} steps, loss {parallel[0]:.6f} -> "
              f"{parallel[-1]:.6f}; max relative difference to single process {worst:.2e} "
              f"(tolerance {args.rtol:g}): {'MATCH' if all_ok else 'MISMATCH'}", flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
