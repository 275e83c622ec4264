"""Runs mpi4py's own test suite (test/ of its sdist, unpacked by scripts/setup-python.sh) twice on
the same ranks: on the base MPI alone, then with libmcrpmpi.so preloaded into the ranks, and passes
only if every test has the same outcome on every rank both times (the library must be invisible).

    python run_mpi4py_suite.py --suite DIR --library libmcrpmpi.so [--nprocs 2] [-i REGEX]...

-i selects test modules (main.py's own --include); by default the collective-related ones, which
keep the two runs to a few minutes on 2 cores.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

SKIP_CODE = 77
DEFAULT_MODULES = [r"test_cco_", r"test_msgzero", r"test_msgspec", r"test_op", r"test_comm", r"test_util_pkl5",
                   r"test_request", r"test_threads"]  # not test_util_sync: it hangs on 2 busy cores, library or not
# unittest's verbose line: "test_x (test_mod.Class.test_x) ... ok"
OUTCOME = re.compile(r"^(\w+ \([\w.]+\)) \.\.\. .*?(ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b",
                     re.MULTILINE)
SUMMARY = re.compile(r"^(Ran \d+ tests?|OK.*|FAILED.*)$", re.MULTILINE)


def run_suite(args, preload, workdir):
    """One run; returns ({rank: {test: outcome}}, {rank: summary lines}, exit status, seconds)."""
    label = "preloaded" if preload else "baseline"
    pattern = os.path.join(workdir, f"{label}.%r")
    command = [args.mpiexec, "-n", str(args.nprocs), "-outfile-pattern", pattern, "-errfile-pattern", pattern]
    if preload:
        command += ["-genv", "LD_PRELOAD", os.path.realpath(args.library)]
    command += [sys.executable, os.path.join(args.suite, "main.py"), "-v"]
    for module in args.include or DEFAULT_MODULES:
        command += ["-i", module]
    started = time.monotonic()
    try:
        status = subprocess.run(command, timeout=args.timeout, check=False).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    seconds = time.monotonic() - started
    outcomes, summaries = {}, {}
    for rank in range(args.nprocs):
        try:
            with open(f"{pattern.replace('%r', str(rank))}", encoding="utf-8", errors="replace") as log:
                text = log.read()
        except FileNotFoundError:
            text = ""
        outcomes[rank] = dict(OUTCOME.findall(text))
        summaries[rank] = SUMMARY.findall(text)
    return outcomes, summaries, status, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--suite", required=True, help="mpi4py's test/ directory")
    parser.add_argument("--library", required=True)
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--timeout", type=float, default=400, help="seconds per run")
    parser.add_argument("-i", "--include", action="append", help="test module regex (repeatable)")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.suite, "main.py")):
        print(f"SKIP: no mpi4py test suite at {args.suite} (run scripts/setup-python.sh)")
        return SKIP_CODE

    with tempfile.TemporaryDirectory(prefix="mpi4py-suite-") as workdir:
        runs = {preload: run_suite(args, preload, workdir) for preload in (False, True)}
    problems = []
    for preload, (outcomes, summaries, status, seconds) in runs.items():
        label = "with libmcrpmpi" if preload else "base MPI only  "
        for rank in range(args.nprocs):
            tally = collections.Counter(outcomes[rank].values())
            print(f"{label} rank {rank}: {' / '.join(summaries[rank]) or 'no summary'}; "
                  f"outcomes {dict(sorted(tally.items()))}; exit {status}; {seconds:.0f}s")
            if not outcomes[rank]:
                problems.append(f"{label.strip()}: rank {rank} reported no tests")
    base, preloaded = runs[False][0], runs[True][0]
    for rank in range(args.nprocs):
        for test in sorted(set(base[rank]) | set(preloaded[rank])):
            before, after = base[rank].get(test, "missing"), preloaded[rank].get(test, "missing")
            if before != after:
                problems.append(f"rank {rank}: {test}: {before} on the base MPI, {after} with the library")
    if runs[False][2] != runs[True][2]:
        problems.append(f"exit status {runs[False][2]} on the base MPI, {runs[True][2]} with the library")
    for problem in problems:
        print(f"FAIL: {problem}")
    total = sum(len(o) for o in preloaded.values())
    print(f"mpi4py suite: {'same' if not problems else 'DIFFERENT'} outcomes for {total} test runs "
          f"on {args.nprocs} ranks with and without the library")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
