"""What the cost scripts (host_call_cost.py, device_call_cost.py) share: their common arguments, the
skip when valgrind is missing, and turning two runs' totals into per-call figures."""
import shutil

SKIP = 77


def add_common_arguments(parser, program_help, iterations, show):
    parser.add_argument("--program", required=True, help=program_help)
    parser.add_argument("--lib", required=True, help="libmcrpmpi.so")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--iterations", type=int, nargs=2, default=list(iterations), metavar=("LOW", "HIGH"))
    parser.add_argument("--show", type=int, default=show, help="the library's costliest functions to list")
    parser.add_argument("--timeout", type=float, default=300)


def valgrind_missing():
    """True (after saying so) when valgrind is not installed: the caller exits with SKIP."""
    if shutil.which("valgrind") is not None:
        return False
    print("SKIPPED: valgrind is not installed (scripts/setup.sh installs it)")
    return True


def per_call(low, high, span, calls):
    """(high - low) / span / calls per key, for dicts of number lists (one run at each iteration count)."""
    width = len(next(iter(high.values())))
    zero = [0] * width
    return {k: [(h - l) / span / calls for h, l in zip(high.get(k, zero), low.get(k, zero))]
            for k in set(low) | set(high)}
