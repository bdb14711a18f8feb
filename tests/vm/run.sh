#!/usr/bin/env bash
# Usage: tests/vm/run.sh 'COMMAND' [ARG...]
#
# Runs a shell command inside the throwaway test VM (tests/vm/image.sh builds it on first use)
# and exits with its status. Inside, the host's root is visible read-only, the repository's
# target/ directory (or $CODEACT_VM_RW) is writable at its own path, /tmp is empty, and the
# command runs as root in the current directory with the caller's PATH. Arguments after the
# command are appended to it, each quoted.
#
# Exit status: the command's; 124 when the VM ran past $CODEACT_VM_TIMEOUT seconds (default
# 900), or printed nothing for $CODEACT_VM_SILENCE seconds (when set); 98 when the image could
# not be built; 99 when the VM ended without a status.
# The console goes to stdout and to the job's .log file.
# Environment: CODEACT_VM_DIR (image and jobs, default target/vm), CODEACT_VM_RW,
# CODEACT_VM_MEMORY (default 4G), CODEACT_VM_CPUS (default: this machine's, at most 4).
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 'COMMAND' [ARG...]" >&2; exit 2; }
vm_src=$(cd "$(dirname "$0")" && pwd)
target=$(cd "$vm_src/../.." && pwd -P)/target
out=${CODEACT_VM_DIR:-$target/vm}
mkdir -p "$out" && out=$(cd "$out" && pwd -P)
rw=${CODEACT_VM_RW:-$target}
rw=$(cd "$rw" && pwd -P)
case "$out/" in "$rw"/*) ;; *) echo "tests/vm/run: $out must lie inside the writable share $rw" >&2; exit 2 ;; esac
CODEACT_VM_DIR=$out "$vm_src/image.sh" || { echo "tests/vm/run: the VM image could not be built" >&2; exit 98; }

quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
mkdir -p "$out/jobs"
find "$out/jobs" -maxdepth 1 -name 'job.*' -mmin +1440 -delete 2>/dev/null
job=$(mktemp "$out/jobs/job.XXXXXX")
command=$1; shift
for arg in "$@"; do command="$command $(quote "$arg")"; done
{
  echo "export PATH=$(quote "$PATH")"
  echo "cd $(quote "$PWD") || exit 97"
  printf '%s\n' "$command"
} > "$job"

kernel=$out/vmlinux
[ -f "$kernel" ] || kernel=$out/vmlinuz
cpus=${CODEACT_VM_CPUS:-$(nproc)}
[ "$cpus" -le 4 ] || cpus=4
append="console=ttyS0 loglevel=4 mitigations=off nokaslr tsc=reliable panic=-1"
append="$append codeact.job=$(printf '%s' "$job" | base64 -w0) codeact.rw=$(printf '%s' "$rw" | base64 -w0)"
append="$append codeact.cwd=$(printf '%s' "$PWD" | base64 -w0)"
# The emulated CPU runs a nested hypervisor; once in a while the VM's own kernel panics under
# it (seen: "corrupted stack end detected inside scheduler"), which says nothing of the command.
# Such a run ends without a status and is started once more, saying so.
for attempt in 1 2; do
  : > "$job.log"
  timeout -k 10 "${CODEACT_VM_TIMEOUT:-900}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp "$cpus" -m "${CODEACT_VM_MEMORY:-4G}" -machine q35 \
    -nodefaults -display none -no-reboot -monitor none -serial stdio \
    -kernel "$kernel" -initrd "$out/initramfs.cpio.gz" -append "$append" \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$rw,mount_tag=rw,security_model=none,multidevs=remap" \
    < /dev/null >> "$job.log" 2>&1 &
  vm=$!
  trap 'kill "$vm" 2>/dev/null' EXIT INT TERM
  tail -n +1 -f --pid="$vm" "$job.log" &
  console=$!
  silent=
  if [ -n "${CODEACT_VM_SILENCE:-}" ]; then
    size=0 quiet_since=$SECONDS
    while kill -0 "$vm" 2>/dev/null; do
      sleep 5
      # The kernel's own messages (soft lockups, RCU stalls) say the VM is stuck, not that it
      # makes progress: only the job's lines count.
      now=$(grep -av '^\[ *[0-9]*\.[0-9]*\]' "$job.log" | wc -c)
      if [ "$now" != "$size" ]; then
        size=$now quiet_since=$SECONDS
      elif [ $((SECONDS - quiet_since)) -ge "$CODEACT_VM_SILENCE" ]; then
        silent=1
        kill "$vm" 2>/dev/null
        break
      fi
    done
  fi
  wait "$vm"
  qemu=$?
  wait "$console" 2>/dev/null
  if [ -n "$silent" ]; then
    echo "tests/vm/run: the VM printed nothing for $CODEACT_VM_SILENCE s" >&2
    exit 124
  fi
  case $qemu in 124|137) echo "tests/vm/run: the VM ran past ${CODEACT_VM_TIMEOUT:-900} s" >&2; exit 124 ;; esac
  status=$(cat "$job.rc" 2>/dev/null || grep -a -o 'CODEACT-VM-RC=[0-9]*' "$job.log" | tail -n 1 | cut -d= -f2)
  if [ -z "$status" ] && [ "$attempt" = 1 ] && grep -a -q 'Kernel panic' "$job.log"; then
    echo "tests/vm/run: the VM's kernel panicked before the command ended; starting it once more" >&2
    continue
  fi
  break
done
exit "${status:-99}"
