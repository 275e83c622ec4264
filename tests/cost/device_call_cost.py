#!/usr/bin/env python3
"""What the library spends on a blocking device-buffer collective, counted instead of timed.

Runs tests/cost/device_call_loop on 2 ranks under callgrind at two iteration counts, with buffers in
the library's fake device: with the fake NCCL loaded (the NCCL path: the direct blocking launch)
once on blocking NCCL communicators (the default since 2026-11-27) and once on nonblocking ones
(MCRPMPI_NCCL_INLINE_LAUNCH=0, the same budget), and once without the fake NCCL (the staged path).
It prints rank 0's instructions per call: everything
the calling thread executes inside the MPI entry points (the library, the C and C++ runtimes it
calls, its queries of the base MPI), less what it cannot help:
- waiting: the GPU wait (mcrp::device::wait_event), NCCL's enqueue (mcrp::NcclComm::wait_enqueued)
  and the base MPI's own collective on the host images (mcrp::call_base), whose instruction counts
  follow timing, are not collected (callgrind's --toggle-collect);
- the backend: what the (fake) NCCL's entry points execute, reported on its own line.
The difference of two iteration counts leaves out MPI_Init, the NCCL communicator's setup and
MPI_Finalize. On a GPU the fake device's few instructions per copy, event and pointer query become
CUDA runtime calls (hundreds of nanoseconds each, FIELD-NOTES): those are counted here as the
library's instructions but are not what a GPU pays for them.

With --calls p2p the program is tests/cost/device_p2p_loop, and the counted calls are a small
device MPI_Send and MPI_Recv whose message has already arrived: once on a communicator asserted to
carry device memory only (the message inside the library's header; the fake NCCL loaded, as on a
GPU machine) and once on a plain one (staged through pinned host memory). The base MPI's own send
and receive on the host bytes are counted: with the message arrived, they do not follow timing. Its
PMPI_Test is reported apart (BASE_TESTS below).

Exit status: 0 within budget, 1 over it (or a run failed), 77 when valgrind is missing (skipped).
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_costs  # noqa: E402
import cost_harness  # noqa: E402

RANKS = 2
NOT_COLLECTED = ("mcrp::device::wait_event*", "mcrp::NcclComm::wait_enqueued*", "mcrp::call_base*")
# Calls whose inclusive cost is counted apart from the library's, as (object, function): the base
# MPI's PMPI_Test runs its progress engine (UCX's worker progress), whose work follows what has
# arrived (967-1011 instructions a point-to-point call in four runs, where everything else repeats
# exactly from run to run of one build). A toggle cannot leave it out: the library's binding to the base MPI has a
# PMPI_Test of its own around it (runtime/base_mpi_binding.cpp), and nested toggles cancel.
BASE_TESTS = (("libmpich", "PMPI_Test"),)
# One way of running the program: its mode argument (None: none), whether the fake NCCL is loaded,
# the option holding its budget, and further environment as (name, value) pairs.
Family = collections.namedtuple("Family", "mode fake_nccl budget env")
# A kind of call: the entry points counted, the calls counted apart, its families by name.
Kind = collections.namedtuple("Kind", "entry_points apart families")
KINDS = {
    "collectives": Kind(("MPI_Allreduce", "MPI_Bcast", "MPI_Allgather"), (), {
        "nccl": Family(None, True, "budget_nccl", ()),
        # nonblocking NCCL communicators, the same budget
        "nccl-nb": Family(None, True, "budget_nccl", (("MCRPMPI_NCCL_INLINE_LAUNCH", "0"),)),
        "staged": Family(None, False, "budget_staged", ()),
    }),
    "p2p": Kind(("MPI_Send", "MPI_Recv"), BASE_TESTS, {
        # the fake device has no NCCL of its own to offer the automatic channel choice
        "device-only": Family("device-only", True, "budget_device_only", (("MCRPMPI_P2P_CHANNEL", "nccl"),)),
        "staged": Family("staged", False, "budget_staged", ()),
    }),
}


def run(args, family, iterations, workdir):
    """(calls per iteration, rank 0's calling-thread Profile)."""
    kind = KINDS[args.calls]
    spec = kind.families[family]
    prefix = os.path.join(workdir, f"{family}.{iterations}")
    command = [args.mpiexec, "-n", str(RANKS), "-genv", "LD_PRELOAD", args.lib, "-genv", "MCRPMPI_FAKE_DEVICE", "1"]
    if spec.fake_nccl:
        # The fake NCCL's first model (work done before the launch is reported enqueued, events
        # tokens): the budgets were set with it, and its late-kernel model allocates an event
        # object per event, which is the fake's cost, not the library's.
        command += ["-genv", "MCRPMPI_NCCL_LIBRARY", args.fake_nccl, "-genv", "MCRPMPI_FAKE_NCCL_LATE", "0"]
    for name, value in spec.env:
        command += ["-genv", name, value]
    command += ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}.%q{{PMI_RANK}}"]
    command += [f"--toggle-collect={name}" for name in kind.entry_points + NOT_COLLECTED]
    command += [args.program, str(iterations)] + ([spec.mode] if spec.mode else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0 or "calls per iteration:" not in done.stdout:
        sys.stderr.write(f"device_call_cost: {' '.join(command)} failed ({done.returncode})\n{done.stdout}{done.stderr}")
        sys.exit(1)
    calls = int(done.stdout.split("calls per iteration:")[1].split()[0])
    return calls, callgrind_costs.read(f"{prefix}.0-01")  # thread 1: the calling thread


def cost_of_calls_into(calls, obj, ir, function=None):
    """Inclusive cost of the calls from outside an object (a part of its file name) into it, per
    call; only into `function` if given."""
    return sum(arc[1 + ir] for (caller_obj, _, callee_obj, callee_fn), arc in calls.items()
               if obj in os.path.basename(callee_obj) and obj not in os.path.basename(caller_obj)
               and function in (None, callee_fn))


def measure(args, family, workdir):
    low, high = args.iterations
    calls, profile_low = run(args, family, low, workdir)
    _, profile_high = run(args, family, high, workdir)
    span = high - low
    return (calls, profile_high.events, cost_harness.per_call(profile_low.by_function, profile_high.by_function, span, calls),
            cost_harness.per_call(profile_low.calls, profile_high.calls, span, calls))


def report(args, family, budget, calls, events, functions, arcs):
    """Prints one family's figures; returns whether they are within the budget."""
    ir = events.index("Ir")
    backend = os.path.basename(args.fake_nccl).split(".so")[0]
    objects = callgrind_costs.by_object(functions)
    collected = sum(v[ir] for v in objects.values())
    in_backend = cost_of_calls_into(arcs, backend, ir)
    apart = [(f"{obj}'s {fn}", cost_of_calls_into(arcs, obj, ir, fn)) for obj, fn in KINDS[args.calls].apart]
    own = collected - in_backend - sum(cost for _, cost in apart)
    print(f"# {family}: {calls} blocking calls an iteration ({', '.join(KINDS[args.calls].entry_points)}); per call: the library "
          f"{own:.0f} instructions (budget {budget:.0f}), the backend's launch {in_backend:.0f}"
          + "".join(f", {name} {cost:.0f} (apart)" for name, cost in apart))
    print("#   executed per call by object (the backend's calls into the C runtime count in its line):")
    for obj in sorted(objects, key=lambda o: -objects[o][ir]):
        name = os.path.basename(obj) or "(unknown)"
        if objects[obj][ir] >= 1:
            print(f"#   {objects[obj][ir]:8.1f}  {name}{'  (the backend)' if backend in name else ''}")
    library = os.path.basename(args.lib).split(".so")[0]
    rows = [(v[ir], fn) for (obj, fn), v in functions.items() if library in os.path.basename(obj)]
    for cost, fn in sorted(rows, reverse=True)[: args.show]:
        if cost >= 0.5:
            print(f"#      {cost:8.1f}  {fn[:100]}")
    if own > budget:
        print(f"# FAIL: the library spends {own:.0f} instructions on a blocking {family} device call (budget {budget:.0f})")
        return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cost_harness.add_common_arguments(p, "tests/cost/device_call_loop (or device_p2p_loop with --calls p2p), built",
                                      (100, 300), 10)
    p.add_argument("--calls", choices=sorted(KINDS), default="collectives")
    p.add_argument("--fake-nccl", required=True, help="libmcrpmpi_fake_nccl.so (tests/fake_nccl)")
    p.add_argument("--budget-nccl", type=float, metavar="INSTRUCTIONS",
                   help="collectives: what the library may spend on one blocking call on the NCCL path (average "
                        "over the loop)")
    p.add_argument("--budget-device-only", type=float, metavar="INSTRUCTIONS",
                   help="p2p: the same on a communicator asserted to carry device memory only")
    p.add_argument("--budget-staged", type=float, required=True, metavar="INSTRUCTIONS",
                   help="the same on the staged path")
    args = p.parse_args()
    families = KINDS[args.calls].families
    missing = sorted({f.budget for f in families.values() if getattr(args, f.budget) is None})
    if missing:
        p.error(f"--calls {args.calls} needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
    if cost_harness.valgrind_missing():
        return cost_harness.SKIP
    low, high = args.iterations
    print(f"# device_call_cost: fake-device buffers on {RANKS} ranks under callgrind, iterations {low} and {high}; "
          f"rank 0's calling thread, waits not collected ({', '.join(NOT_COLLECTED)})")
    within = True
    with tempfile.TemporaryDirectory(prefix="mcrpmpi-device-cost-") as workdir:
        for family, spec in families.items():
            calls, events, functions, arcs = measure(args, family, workdir)
            budget = getattr(args, spec.budget)
            within = report(args, family, budget, calls, events, functions, arcs) and within
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
