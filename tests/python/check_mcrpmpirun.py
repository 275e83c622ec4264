"""Run by each rank under scripts/mcrpmpirun: checks that this rank has libmcrpmpi.so mapped, that
its parent (hydra's proxy, part of the launcher) does not, and that the wrapper's options reached
the rank's environment. Needs no mpi4py: it only inspects /proc and the environment.

    mcrpmpirun --stats --tuning-file F -n 2 python check_mcrpmpirun.py --library L --tuning-file F
"""
import argparse
import os
import sys


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps", encoding="utf-8") as maps:
        return {line.split()[-1] for line in maps if len(line.split()) >= 6}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True, help="the libmcrpmpi.so the wrapper must preload")
    parser.add_argument("--tuning-file", help="the file --tuning-file must have passed on")
    parser.add_argument("--stats", action="store_true", help="--stats must have set MCRPMPI_STATS=1")
    parser.add_argument("--runtime-connect", help="the NCCL_RUNTIME_CONNECT the rank must see")
    args = parser.parse_args()
    rank = os.environ.get("PMI_RANK", "?")
    library = os.path.realpath(args.library)
    problems = []
    if library not in mapped_libraries("self"):
        problems.append(f"{library} is not mapped in this rank")
    if library in mapped_libraries(os.getppid()):
        problems.append(f"the launcher process {os.getppid()} has {library} mapped too")
    if args.tuning_file and os.environ.get("MCRPMPI_TUNING_FILE") != os.path.realpath(args.tuning_file):
        problems.append(f"MCRPMPI_TUNING_FILE={os.environ.get('MCRPMPI_TUNING_FILE')!r}")
    if args.stats and os.environ.get("MCRPMPI_STATS") != "1":
        problems.append(f"MCRPMPI_STATS={os.environ.get('MCRPMPI_STATS')!r}")
    if args.runtime_connect is not None and os.environ.get("NCCL_RUNTIME_CONNECT") != args.runtime_connect:
        problems.append(f"NCCL_RUNTIME_CONNECT={os.environ.get('NCCL_RUNTIME_CONNECT')!r}, want {args.runtime_connect!r}")
    for problem in problems:
        print(f"rank {rank}: FAIL: {problem}", flush=True)
    if not problems:
        print(f"rank {rank}: preloaded {library}; launcher clean; options passed", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
