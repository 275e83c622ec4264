"""Self cost per function (and, summed from it, per object file) from a callgrind output file (callgrind's format:
https://valgrind.org/docs/manual/cl-format.html), and the inclusive cost of every call arc. Self costs
count every instruction once, in the function that executed it; an arc's cost is everything the
callee did for that caller, callees of its own included."""
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


Profile = collections.namedtuple("Profile", "events by_function calls")


def read(path):
    """Returns a Profile: events is the list of event names; by_function maps (object file,
    function) to its summed self cost, one number per event; calls maps (caller object, caller
    function, callee object, callee function) to [times called, inclusive cost per event...]."""
    events = []
    by_function = collections.defaultdict(lambda: [0] * len(events))
    calls = collections.defaultdict(lambda: [0] * (1 + len(events)))
    objects, functions = _Names(), _Names()
    current_object, current_function = "", ""
    function_object = ""
    callee_object, callee_function, call_count = None, "", 0
    in_call_cost = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                numbers = line.split()[1:]  # the first field is the position
                if in_call_cost:  # the inclusive cost of the call just named
                    in_call_cost = False
                    arc = calls[(function_object, current_function,
                                 function_object if callee_object is None else callee_object, callee_function)]
                    arc[0] += call_count
                    for i, n in enumerate(numbers[: len(events)]):
                        arc[1 + i] += int(n)
                    callee_object = None  # a call names its callee's object only when it differs
                    continue
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
                callee_object = objects.resolve(value)
            elif key == "cfn":
                callee_function = functions.resolve(value)
            elif key == "calls":
                call_count = int(value.split()[0])
                in_call_cost = True
            elif line.startswith("events:"):
                events = line.split()[1:]
    return Profile(events, dict(by_function), dict(calls))


def by_object(by_function):
    """by_function's costs summed per object file."""
    totals = {}
    for (obj, _), costs in by_function.items():
        row = totals.setdefault(obj, [0] * len(costs))
        for i, c in enumerate(costs):
            row[i] += c
    return totals
