"""Runs a command (typically mcrpmpirun ... or mpiexec ...), echoes its output, and passes only if
it exits with --status (default 0) and its output matches every --expect pattern and no --reject
pattern (Python regular expressions, multi-line mode). ctest alone judges either the exit status or,
once a PASS_REGULAR_EXPRESSION is set, the output only: a run that printed the wanted line and then
crashed would pass. Exit 77 (skip) from the command is passed through unchanged, so GPU tests still
skip without a GPU. Used by mcrpmpi_add_output_test (tests/CMakeLists.txt) and the Python tests.

    python expect_output.py [--expect REGEX]... [--reject REGEX]... [--status N] [--timeout S] -- command...
"""
import argparse
import re
import subprocess
import sys

SKIP_CODE = 77


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", action="append", default=[], help="regex the output must contain")
    parser.add_argument("--reject", action="append", default=[], help="regex the output must not contain")
    parser.add_argument("--status", type=int, default=0, help="the exit status the command must give")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds before the command counts as deadlocked (default: none of its own; "
                             "ctest's TIMEOUT bounds the test)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")

    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                              timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired as timeout:
        sys.stdout.write(timeout.stdout.decode(errors="replace") if timeout.stdout else "")
        print(f"expect_output: FAIL: {command[0]} still running after {args.timeout:g}s (deadlock?)")
        return 1
    sys.stdout.write(done.stdout)
    if done.returncode == SKIP_CODE:
        return SKIP_CODE
    problems = [f"exit status {done.returncode}, not {args.status}"] if done.returncode != args.status else []
    problems += [f"output lacks /{p}/" for p in args.expect if not re.search(p, done.stdout, re.MULTILINE)]
    problems += [f"output contains /{p}/" for p in args.reject if re.search(p, done.stdout, re.MULTILINE)]
    for problem in problems:
        print(f"expect_output: FAIL: {problem}")
    if not problems:
        print(f"expect_output: ok ({len(args.expect)} patterns found, {len(args.reject)} absent)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
