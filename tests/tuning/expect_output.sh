#!/bin/sh
# expect_output.sh EXPECTED_STATUS REGEX COMMAND...: runs COMMAND, shows its output, and passes
# when it exits with EXPECTED_STATUS and its output matches REGEX (grep -E). CTest alone can check
# either the status or the output, not both.
expected=$1; pattern=$2; shift 2
out=$("$@" 2>&1); status=$?
printf '%s\n' "$out"
if [ "$status" -ne "$expected" ]; then echo "expect_output: exit status $status, expected $expected"; exit 1; fi
if ! printf '%s\n' "$out" | grep -Eq "$pattern"; then echo "expect_output: output does not match: $pattern"; exit 1; fi
exit 0
