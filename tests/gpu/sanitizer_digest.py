#!/usr/bin/env python3
"""Digest of compute-sanitizer logs (one per process, --log-file): each distinct report once, with its
count and whose it is, so a device command's output shows what matters in a few lines.

A CUDA API error ("Program hit ...") that NCCL's own code made -- the innermost host frame outside
the CUDA runtime and driver is in libnccl -- is NCCL's doing: its initialisation probes kernels with
cudaFuncGetAttributes and expects some to fail (error 98 on the H100, 209 "no kernel image" on the
H200). Listed, not counted as a failure, also when the library's frames follow further out (NCCL's
setup runs from the library's thread on blocking communicators). Every other report fails the
digest (exit 1) -- memory errors inside NCCL's kernels included, since those kernels read the
buffers the library hands them, and their host backtrace cannot name the caller -- and so does a
log without a summary line (the process did not finish under the tool).

Usage: sanitizer_digest.py LOG...
"""
import collections
import re
import sys

OTHERS = ("libnccl", "libcuda", "libcudart", "libc.so", "ld-linux", "libstdc++", "libgcc", "libpthread")
CUDA = ("libcuda", "libcudart")


def reports(lines):
    """(headline, [detail lines]) for each report in one log."""
    headline, details = None, []
    for line in lines:
        m = re.match(r"^========= (\S.*)$", line)
        if m:
            if headline:
                yield headline, details
            text = m.group(1).strip()
            skip = text.startswith(("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                                    "Target application returned", "This can happen"))
            headline, details = (None if skip else text), []
        elif headline and line.startswith("========="):
            details.append(line[9:].strip())
    if headline:
        yield headline, details


def owner(details):
    """The first frame of the library or the test program, or None."""
    for d in details:
        if d.startswith("Host Frame:") and not any(lib in d for lib in OTHERS):
            return d[len("Host Frame:"):].strip()
    return None


def nccl_caller(details):
    """The frame that made the API call when it is NCCL's (the innermost one outside the CUDA
    runtime and driver), or None."""
    for d in details:
        if d.startswith("Host Frame:") and not any(lib in d for lib in CUDA):
            return d[len("Host Frame:"):].strip() if "libnccl" in d else None
    return None


def main(paths):
    failing = 0
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError as error:
            print("%s: no log (%s)" % (path, error.strerror))
            failing += 1
            continue
        summary = [l for l in lines if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l]
        print("%s: %s" % (path, summary[-1].strip("= ") if summary else "no summary (the run did not finish)"))
        failing += 0 if summary else 1
        seen = collections.OrderedDict()
        for headline, details in reports(lines):
            # Addresses and thread numbers differ from report to report of one defect.
            key = re.sub(r"0x[0-9a-f]+|\(\d+,\d+,\d+\)|\d+ bytes", "#", headline)
            ours, by_nccl = owner(details), nccl_caller(details)
            nccl_probe = headline.startswith("Program hit") and (ours is None or by_nccl is not None)
            where = (by_nccl if nccl_probe else ours) or next(
                (d for d in details if d.startswith(("at ", "Host Frame:"))), "")
            count, first = seen.get(key, (0, (headline, where, nccl_probe)))
            seen[key] = (count + 1, first)
        for count, (headline, where, nccl_probe) in seen.values():
            tag = "NCCL's own, not counted" if nccl_probe else "COUNTED"
            print("  %5d x %s\n          [%s] %s" % (count, headline, tag, where))
            failing += 0 if nccl_probe else count
    print("sanitizer digest: %d report(s) counted" % failing)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
