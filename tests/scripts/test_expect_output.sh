#!/usr/bin/env bash
# tests/expect_output.py's verdicts, each of which a test of mcrpmpi_add_output_test relies on.
# Usage: test_expect_output.sh PYTHON EXPECT_OUTPUT_PY
python=${1:?usage: test_expect_output.sh PYTHON EXPECT_OUTPUT_PY} tool=${2:?usage: test_expect_output.sh PYTHON EXPECT_OUTPUT_PY}
output=$(mktemp "${TMPDIR:-/tmp}/expect_output.XXXXXX") || exit 1
trap 'rm -f "$output"' EXIT
judge() { "$python" "$tool" "$@" >"$output" 2>&1; }
failed=0
case_() {  # case_ WANTED_STATUS DESCRIPTION ARGS...
  local want=$1 what=$2
  shift 2
  judge "$@"
  local got=$?
  if ((got != want)); then
    echo "FAIL: $what: exit $got, wanted $want"
    sed 's/^/  | /' "$output"
    failed=1
  fi
}
case_ 0 "the status named" --status 1 -- false
case_ 1 "a status other than the one named" --expect printed -- sh -c 'echo printed; exit 3'
case_ 1 "0 where 1 was named" --status 1 --expect printed -- echo printed
case_ 0 "every pattern, multi-line" --expect 'b$' --expect '^a' -- printf 'a\nb\n'
case_ 1 "one pattern missing" --expect printed --expect other -- echo printed
case_ 1 "a rejected pattern present" --reject b -- echo b
case_ 77 "a skip passed through" --expect never -- sh -c 'exit 77'
judge -- sh -c 'exit 2'
grep -qx 'expect_output: FAIL: exit status 2, not 0' "$output" || { echo "FAIL: the status not named"; failed=1; }
((failed)) || echo "expect_output: all verdicts right"
exit $failed
