#!/usr/bin/env bash
# Usage: tests/vm/each.sh PASSED BINARY [FILTER...]
#
# Runs inside the test VM (tests/vm/hyperlight.sh starts it there). Runs each test of the
# libtest BINARY that FILTER selects (ignored ones included) in a process of its own, one at a
# time, under a limit of $CODEACT_VM_TEST_TIMEOUT seconds (default 600). A micro-VM nested in
# QEMU's emulated CPU now and then makes no progress at all, which says nothing of the test: a
# test process that runs past its limit is started once more, up to three times in all. A test
# that fails is never run again.
#
# Tests named in the file PASSED passed in an earlier start of the VM and are skipped; each test
# that passes is added to it. While a test runs a line is printed every minute, so that the host
# can tell a slow test from a VM that stalled (tests/vm/run.sh, CODEACT_VM_SILENCE).
#
# Exit status: 0 when every test passed; 1 when one failed or ran past its limit three times.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 PASSED BINARY [FILTER...]" >&2; exit 2; }
passed_file=$1 binary=$2
shift 2
limit=${CODEACT_VM_TEST_TIMEOUT:-600}
touch "$passed_file"

tests=$("$binary" --list --include-ignored "$@" | sed -n 's/: test$//p')
[ -n "$tests" ] || { echo "tests/vm/each: no test matches '$*'" >&2; exit 1; }

failed=()
count=0
while IFS= read -r name; do
  count=$((count + 1))
  if grep -qxF -- "$name" "$passed_file"; then
    echo "tests/vm/each: $name passed before this start of the VM"
    continue
  fi
  for attempt in 1 2 3; do
    started=$SECONDS
    ( while sleep 60; do echo "tests/vm/each: $name still running ($((SECONDS - started)) s)"; done ) &
    ticker=$!
    timeout -k 10 "$limit" "$binary" --include-ignored --exact --test-threads 1 "$name"
    status=$?
    kill "$ticker" 2>/dev/null
    wait "$ticker" 2>/dev/null
    case $status in
      124|137)
        echo "tests/vm/each: $name ran past $limit s (try $attempt of 3)"
        status=124
        ;;
      *) break ;;
    esac
  done
  if [ "$status" -eq 0 ]; then
    echo "$name" >> "$passed_file"
  else
    failed+=("$name")
  fi
done <<< "$tests"

if [ ${#failed[@]} -gt 0 ]; then
  echo "tests/vm/each: ${#failed[@]} of $count tests failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "tests/vm/each: all $count tests passed"
