"""Fails, naming them, when tests of a build have no TIMEOUT: without one ctest waits forever, so a
hung test (a deadlocked rank, a thread that never ends) would hold CI until its own limit.

    python check_timeouts.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True)
    tests = json.loads(listing.stdout)["tests"]
    missing = [t["name"] for t in tests if "TIMEOUT" not in {p["name"] for p in t.get("properties", [])}]
    for name in missing:
        print(f"no TIMEOUT: {name}")
    print(f"{len(tests) - len(missing)} of {len(tests)} tests have a TIMEOUT")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
