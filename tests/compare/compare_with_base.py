#!/usr/bin/env python3
"""Runs one MPI test program twice, without and with libmcrpmpi preloaded, and requires the same
outcome: the same exit status and, on every rank, the same set of check outcomes (each program's
Checker writes them when MCRP_TEST_OUTCOMES is set; see tests/mpi/check.h). Differences the library
is known and meant to make (it works around a base-MPI defect) are allowed by --allow patterns,
each of which must name the defect it stands for.

With --library-env VAR=VALUE and --library-arg ARG the run with the library gets extra settings
and arguments: `--library-env MCRPMPI_FAKE_DEVICE=1 --library-arg=--space --library-arg=fake-device`
compares the library's device paths on the fake device with the base MPI on host memory.
With --rank-preload LIB both runs preload LIB into the ranks (after the library in its run): the
test suite's idle-yield shim on machines with fewer cores than ranks (tests/oversubscribed).

usage: compare_with_base.py --mpiexec MPIEXEC --np N --library LIB [--allow REGEX]...
                            [--library-env VAR=VALUE]... [--library-arg ARG]... [--rank-preload LIB]
                            -- PROGRAM [ARGS...]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile


def run(args, prefix, preload):
    command = [args.mpiexec, "-n", str(args.np), "-genv", "MCRP_TEST_OUTCOMES", prefix]
    extra = []
    preloads = ([args.library] if preload else []) + ([args.rank_preload] if args.rank_preload else [])
    if preloads:
        command += ["-genv", "LD_PRELOAD", ":".join(preloads)]
    if preload:
        for setting in args.library_env:
            key, _, value = setting.partition("=")
            command += ["-genv", key, value]
        extra = args.library_arg
    command += args.program + extra
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=args.timeout)
        status, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as expired:
        status, output = "timeout", (expired.stdout or b"").decode(errors="replace")
    outcomes = []
    for rank in range(args.np):
        path = f"{prefix}.{rank}"
        lines = open(path).read().splitlines() if os.path.exists(path) else ["(no outcome file: the rank did not finish)"]
        outcomes.append(collections.Counter(lines))
    return status, output, outcomes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--allow", action="append", default=[], help="regex of outcome lines allowed to differ")
    parser.add_argument("--library-env", action="append", default=[], help="VAR=VALUE for the run with the library")
    parser.add_argument("--library-arg", action="append", default=[], help="extra argument for the run with the library")
    parser.add_argument("--rank-preload", default=None, help="a library preloaded into the ranks of both runs")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.program and args.program[0] == "--":
        args.program = args.program[1:]
    if not args.program:
        parser.error("no program given")
    allowed = [re.compile(pattern) for pattern in args.allow]

    with tempfile.TemporaryDirectory(prefix="mcrp-compare-") as tmp:
        base = run(args, os.path.join(tmp, "base"), preload=False)
        lib = run(args, os.path.join(tmp, "lib"), preload=True)

    name = os.path.basename(args.program[0])
    problems = []
    if base[0] != lib[0]:
        problems.append(f"exit status: without the library {base[0]}, with it {lib[0]}")
    checks = 0
    for rank, (b, l) in enumerate(zip(base[2], lib[2])):
        checks += sum(b.values())
        for line in sorted(set(b) | set(l)):
            # Skips may differ: a case only the library can run is skipped without it, and its
            # checks are logged "beyond base" (not at all) with it; PASS/FAIL lines must match.
            if line.startswith("SKIP "):
                continue
            if b[line] == l[line] or any(p.search(line) for p in allowed):
                continue
            problems.append(f"rank {rank}: '{line}' x{b[line]} without the library, x{l[line]} with it")
    if problems:
        print(f"{name} on {args.np} ranks: outcomes differ with and without the library:")
        for p in problems[:40]:
            print("  " + p)
        if len(problems) > 40:
            print(f"  ... and {len(problems) - 40} more")
        for label, result in (("without the library", base), ("with the library", lib)):
            print(f"---- output {label} (last 30 lines) ----")
            print("\n".join(result[1].splitlines()[-30:]))
        return 1
    print(f"{name} on {args.np} ranks: same outcome with and without the library "
          f"(exit {base[0]}, {checks} outcomes over {args.np} ranks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
