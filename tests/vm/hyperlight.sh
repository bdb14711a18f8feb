#!/usr/bin/env bash
# Runs the `hyperlight` integration tests inside the test VM (tests/vm/run.sh), where a
# Hyperlight micro-VM can start whatever this machine's own /dev/kvm is. Inside, a test fails
# rather than skips when no sandbox starts (CODEACT_REQUIRE_HYPERLIGHT=1). Extra arguments go
# to the test binary (a filter narrows the tests further).
#
# Needs the guest wheels in target/guest-wheels (.ci/run fetches them). The test binary is
# built here, on the host; the VM runs it from the read-only host root.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(cargo test --locked --no-run --message-format=json --test it 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["name"] == "it":
        print(message["executable"])
')
[ -n "$binary" ] || { echo "tests/vm/hyperlight: could not build the integration tests" >&2; exit 1; }

# The tests' shared guest (as tests/it/support.rs installs it), installed here on the host:
# inside the VM the repository is read-only but for target/.
root=$PWD/target/it-guest
status=$(env -i HOME="$root" CODEACT_GUEST_DIR="$root/guest" CODEACT_CACHE_DIR="$root/cache" \
  target/debug/codeact guest status --json)
if ! printf '%s' "$status" | python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(0 if s.get("hyperlight", {}).get("installed") else 1)'; then
  env -i HOME="$root" CODEACT_GUEST_DIR="$root/guest" CODEACT_CACHE_DIR="$root/cache" \
    target/debug/codeact guest install --from target/guest-wheels
fi
echo "tests/vm/hyperlight: running $binary in the VM" >&2
# One test at a time, each in a process of its own (tests/vm/each.sh): two micro-VMs running at
# once each hold one of the emulated CPUs in guest mode, and the VM's kernel, left no CPU for its
# own work, stalled (RCU stalls, soft lockups). Even alone, a micro-VM nested in QEMU's emulated
# CPU now and then makes no progress at all: each.sh starts such a test once more, and a VM that
# prints nothing for CODEACT_VM_SILENCE seconds is started again, up to CODEACT_VM_STARTS times
# in all, going on from the first test that had not passed. A test's own failure is never tried
# again. each.sh prints a line a minute while a test runs, so three minutes of silence is a VM
# that stalled, not a slow test; one run has seen two such stalls among fourteen tests.
export CODEACT_VM_TIMEOUT=${CODEACT_VM_TIMEOUT:-1800}
export CODEACT_VM_SILENCE=${CODEACT_VM_SILENCE:-180}
starts=${CODEACT_VM_STARTS:-4}
# Zero starts would run no test and pass.
case $starts in
  '' | *[!0-9]* | 0*) echo "tests/vm/hyperlight: CODEACT_VM_STARTS must be a whole number from 1, not '$starts'" >&2; exit 2 ;;
esac
passed=$PWD/target/vm/hyperlight-passed
mkdir -p target/vm
rm -f "$passed"
job="CODEACT_REQUIRE_HYPERLIGHT=1 RUST_BACKTRACE=1 bash tests/vm/each.sh"
for start in $(seq "$starts"); do
  status=0
  tests/vm/run.sh "$job" "$passed" "$binary" hyperlight:: "$@" || status=$?
  [ "$status" -eq 124 ] || break
  if [ "$start" -lt "$starts" ]; then
    echo "tests/vm/hyperlight: the VM stalled (start $start of $starts); starting it again, after the tests that passed" >&2
  else
    echo "tests/vm/hyperlight: the VM stalled in each of its $starts starts" >&2
  fi
done
exit "$status"
