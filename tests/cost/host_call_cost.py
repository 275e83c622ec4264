#!/usr/bin/env python3
"""What the library adds to a host-buffer MPI call, counted instead of timed.

Runs tests/cost/host_call_loop on one rank under callgrind (valgrind) at two iteration counts, with
and without libmcrpmpi preloaded, once for point-to-point calls and once for collectives, and prints
per call of each: the instructions the base MPI needs, the
instructions the library adds (in its own code and in what it calls: libc, libstdc++, ...) and the
system calls it adds. The difference between two iteration counts leaves out MPI_Init and
MPI_Finalize, so what remains is the per-call cost, the same on every run of the same build; a timed
comparison on a 2-core machine moves by tens of percent (osu.host_overhead prints those ratios).

Exit status: 0 within budget, 1 over it (or a run failed), 77 when valgrind is missing (skipped).
Extra environment for the library runs: --env NAME=VALUE (repeatable), e.g. MCRPMPI_FAKE_DEVICE=1
for the path a GPU machine takes (the library then routes every call, CUDA being "present").
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_costs  # noqa: E402
import cost_harness  # noqa: E402



FAMILIES = ("p2p", "collectives")

# Clock reads are system calls under valgrind (no vDSO), and how often the base MPI's progress engine
# reads the clock depends on timing, so they are left out of the count.
CLOCK_READS = ("gettimeofday", "clock_gettime", "time")


def run(args, family, iterations, preload, workdir):
    """(calls per iteration, event names, self costs by (object, function))."""
    out = os.path.join(workdir, f"callgrind.{family}.{'lib' if preload else 'base'}.{iterations}")
    command = [args.mpiexec, "-n", "1"]
    if preload:
        command += ["-genv", "LD_PRELOAD", args.lib]
        for kv in args.env:
            name, _, value = kv.partition("=")
            command += ["-genv", name, value]
    command += ["valgrind", "--tool=callgrind", "--collect-systime=yes", f"--callgrind-out-file={out}",
                args.program, str(iterations), family]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0 or "calls per iteration:" not in done.stdout:
        sys.stderr.write(f"host_call_cost: {' '.join(command)} failed ({done.returncode})\n{done.stdout}{done.stderr}")
        sys.exit(1)
    calls = int(done.stdout.split("calls per iteration:")[1].split()[0])
    profile = callgrind_costs.read(out)
    return calls, profile.events, profile.by_function


def counted_syscalls(by_function, syscalls):
    return sum(v[syscalls] for (_, fn), v in by_function.items()
               if not any(fn.startswith(c) or fn.startswith("__" + c) for c in CLOCK_READS))


def measure(args, family, workdir):
    """Per-call costs by (object, function) of one family, without ("base") and with ("lib") the library."""
    low, high = args.iterations
    costs = {}
    for way, preload in (("base", False), ("lib", True)):
        calls, events, functions_low = run(args, family, low, preload, workdir)
        _, _, functions_high = run(args, family, high, preload, workdir)
        costs[way] = cost_harness.per_call(functions_low, functions_high, high - low, calls)
    return calls, events, costs


def report(args, family, budget, calls, events, costs):
    """Prints one family's figures; returns whether they are within the budget."""
    ir, syscalls = events.index("Ir"), events.index("sysCount")
    base_functions, lib_functions = costs["base"], costs["lib"]
    base_objects, lib_objects = callgrind_costs.by_object(base_functions), callgrind_costs.by_object(lib_functions)
    base_total = sum(v[ir] for v in base_objects.values())
    lib_total = sum(v[ir] for v in lib_objects.values())
    added = lib_total - base_total
    added_syscalls = counted_syscalls(lib_functions, syscalls) - counted_syscalls(base_functions, syscalls)
    print(f"# {family}: {calls} calls an iteration; per call: base MPI {base_total:.0f} instructions, with the "
          f"library {lib_total:.0f}, added {added:.0f} (budget {budget:.0f}); system calls added "
          f"{added_syscalls:+.4f} (clock reads aside)")
    zero = [0] * len(events)
    for obj in sorted(lib_objects, key=lambda o: -(lib_objects[o][ir] - base_objects.get(o, zero)[ir])):
        delta = lib_objects[obj][ir] - base_objects.get(obj, zero)[ir]
        if abs(delta) >= 1:
            print(f"#   {delta:8.1f}  {os.path.basename(obj) or '(unknown)'}")
    library = os.path.basename(args.lib).split(".so")[0]
    rows = [(v[ir], fn) for (obj, fn), v in lib_functions.items() if library in os.path.basename(obj)]
    for cost, fn in sorted(rows, reverse=True)[: args.show]:
        if cost >= 0.5:
            print(f"#      {cost:8.1f}  {fn[:100]}")
    within = True
    if added > budget:
        print(f"# FAIL: the library adds {added:.0f} instructions to a host {family} call (budget {budget:.0f})")
        within = False
    # The base MPI's other system calls differ by a few between runs: never by one in a hundred calls.
    if added_syscalls >= 0.01:
        print(f"# FAIL: the library adds {added_syscalls:.3f} system calls to a host {family} call (budget 0)")
        within = False
    return within


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cost_harness.add_common_arguments(p, "tests/cost/host_call_loop, built", (500, 1500), 8)
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    for family in FAMILIES:
        p.add_argument(f"--budget-{family}", type=float, required=True, metavar="INSTRUCTIONS",
                       help=f"what the library may add to one host {family} call (average over the loop)")
    args = p.parse_args()
    if cost_harness.valgrind_missing():
        return cost_harness.SKIP
    low, high = args.iterations
    print(f"# host_call_cost: host buffers on 1 rank under callgrind, iterations {low} and {high}, "
          f"{' '.join(args.env) or 'no extra environment'}; instructions per call, the library's own functions indented")
    within = True
    with tempfile.TemporaryDirectory(prefix="mcrpmpi-cost-") as workdir:
        for family in FAMILIES:
            calls, events, costs = measure(args, family, workdir)
            budget = getattr(args, f"budget_{family}")
            within = report(args, family, budget, calls, events, costs) and within
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
