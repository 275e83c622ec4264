"""Self cost per function (and, summed from it, per object file) from a callgrind output file (callgrind's format:
https://valgrind.org/docs/manual/cl-format.html). Inclusive costs of calls are skipped, so every
instruction is counted once, in the function that executed it."""
import collections
import re

_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


class _Names:
    """callgrind's name compression: "(7) name" the first time, "(7)" afterwards."""

    def __init__(self):
        self.by_id = {}

    def resolve(self, value):
        m = _NAMED.match(value)
        if not m:
            return value
        if m.group(2) is not None:
            self.by_id[m.group(1)] = m.group(2)
        return self.by_id.get(m.group(1), value)


def read(path):
    """Returns (events, by_function): events is the list of event names; by_function maps
    (object file, function) to its summed self cost, one number per event."""
    events = []
    by_function = collections.defaultdict(lambda: [0] * len(events))
    objects, functions = _Names(), _Names()
    current_object, current_function = "", ""
    function_object = ""
    skip_next_cost = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if skip_next_cost:  # the inclusive cost of the call just named
                    skip_next_cost = False
                    continue
                numbers = line.split()[1:]  # the first field is the position
                costs = by_function[(function_object, current_function)]
                for i, n in enumerate(numbers[: len(events)]):
                    costs[i] += int(n)
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                current_object = objects.resolve(value)
            elif key == "fn":
                current_function = functions.resolve(value)
                function_object = current_object
            elif key == "cob":
                objects.resolve(value)
            elif key == "cfn":
                functions.resolve(value)
            elif key == "calls":
                skip_next_cost = True
            elif line.startswith("events:"):
                events = line.split()[1:]
    return events, dict(by_function)


def by_object(by_function):
    """by_function's costs summed per object file."""
    totals = {}
    for (obj, _), costs in by_function.items():
        row = totals.setdefault(obj, [0] * len(costs))
        for i, c in enumerate(costs):
            row[i] += c
    return totals
