#!/usr/bin/env python3
"""Runs the registered MPI tests of a build on another MPI of the ABI matrix.

Usage: tests/abi/suite-on-mpi.py BUILD MPI OUTDIR [--regex R] [--exclude R] [--jobs N]
                                 [--timeout-factor F]

The ABI matrix (tests/abi/CMakeLists.txt) runs a chosen set of test programs on the `mpich` and
`impi-rt` wheels; the rest of the `mpi.*` tests only ever meet Debian's MPICH 4.0.2. This script
takes every test ctest lists in BUILD whose name matches R (default `^mpi\\.`) and whose command is
a plain launch (`mpiexec -n N [-genv VAR VALUE]... PROGRAM ARGS`), and runs the same program with
the same ranks, environment and arguments through tests/abi/run_on_mpi.sh on MPI (`mpich` or
`impi`, set up by scripts/setup-abi-matrix.sh in BUILD/abi-matrix). A program that links
libmcrpmpi.so runs `linked`; one that does not runs `plain` (the base-MPI references). Tests that
wrap their launch in a script are listed as not run.

OUTDIR/results: one line a test (`NAME pass|fail|skip|timeout SECONDS`); a failing test's output in
OUTDIR/NAME.log. Exits 1 when any test failed or timed out. Not part of CI: a base-MPI finding
first needs a look at whether the MPI or the library is at fault (docs/reliability.md).
"""

import argparse
import concurrent.futures
import functools
import json
import os
import re
import signal
import subprocess
import sys
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_ON_MPI = os.path.join(SOURCE, "tests", "abi", "run_on_mpi.sh")


def registered_tests(build):
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True, capture_output=True, text=True)
    return json.loads(listing.stdout)["tests"]


def test_property(test, name, default=None):
    for prop in test.get("properties", []):
        if prop["name"] == name:
            return prop["value"]
    return default


@functools.lru_cache(maxsize=None)
def links_library(program):
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True)
    return "libmcrpmpi.so" in ldd.stdout


def parse_launch(command):
    """(ranks, [VAR=VALUE], program and arguments) of `mpiexec -n N [-genv VAR VALUE]... PROGRAM ...`,
    or None for any other form."""
    if not command or os.path.basename(command[0]) not in ("mpiexec", "mpiexec.hydra"):
        return None
    if len(command) < 4 or command[1] != "-n":
        return None
    ranks, rest, environment = command[2], command[3:], []
    while len(rest) >= 3 and rest[0] == "-genv":
        environment.append(f"{rest[1]}={rest[2]}")
        rest = rest[3:]
    if not rest or rest[0].startswith("-"):
        return None
    return ranks, environment, rest


def wheel_command(build, mpi, launch):
    ranks, environment, program = launch
    mode = "linked" if links_library(program[0]) else "plain"
    library = os.path.join(build, "pmpi", "libmcrpmpi.so")
    command = [RUN_ON_MPI, os.path.join(build, "abi-matrix"), mpi, library, mode, ranks]
    for pair in environment:
        command += ["--env", pair]
    return command + ["--"] + program


def run_one(test, command, timeout, outdir):
    start = time.monotonic()
    # Its own session, so that a timeout ends the launcher and every rank, not only the script.
    process = subprocess.Popen(command, cwd=test_property(test, "WORKING_DIRECTORY"), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        outcome = "pass" if process.returncode == 0 else "fail"
        if outcome == "fail" and "the program skipped (exit 77)" in output:
            outcome = "skip"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        outcome = "timeout"
    seconds = time.monotonic() - start
    if outcome != "pass":
        with open(os.path.join(outdir, test["name"] + ".log"), "w") as log:
            log.write(" ".join(command) + "\n" + output)
    return test["name"], outcome, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("mpi", choices=["mpich", "impi"])
    parser.add_argument("outdir")
    parser.add_argument("--regex", default=r"^mpi\.")
    parser.add_argument("--exclude", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout-factor", type=float, default=2.0,
                        help="times each test's own TIMEOUT (the wheels' launchers are slower to start)")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    os.makedirs(args.outdir, exist_ok=True)
    chosen, not_run = [], []
    for test in registered_tests(build):
        name = test["name"]
        if not re.search(args.regex, name) or (args.exclude and re.search(args.exclude, name)):
            continue
        launch = parse_launch(test.get("command", []))
        if launch is None:
            not_run.append(name)
            continue
        timeout = float(test_property(test, "TIMEOUT", 300)) * args.timeout_factor
        chosen.append((test, wheel_command(build, args.mpi, launch), timeout))
    print(f"suite-on-mpi: {len(chosen)} tests on {args.mpi}, {len(not_run)} not run (launched by a script)")
    with open(os.path.join(args.outdir, "not-run"), "w") as listing:
        listing.writelines(name + "\n" for name in not_run)
    counts = {}
    with open(os.path.join(args.outdir, "results"), "a") as results, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = [pool.submit(run_one, test, command, timeout, args.outdir) for test, command, timeout in chosen]
        for done in concurrent.futures.as_completed(runs):
            name, outcome, seconds = done.result()
            counts[outcome] = counts.get(outcome, 0) + 1
            results.write(f"{name} {outcome} {seconds:.1f}\n")
            results.flush()
            if outcome != "pass":
                print(f"suite-on-mpi: {name} {outcome} ({seconds:.0f} s): {args.outdir}/{name}.log", flush=True)
    print("suite-on-mpi: " + ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items())))
    return 1 if counts.get("fail") or counts.get("timeout") else 0


if __name__ == "__main__":
    sys.exit(main())
