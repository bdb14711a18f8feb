#!/usr/bin/env bash
# Runs a codeact built for aarch64 Linux on this x86_64 machine, through qemu-user: the README's
# program, then the integration tests that exercise the binary itself, against it
# (CODEACT_TEST_BIN). For the tests, the kernel's binfmt_misc runs every aarch64 program through
# qemu, so the binary and the codeact processes it starts (each `mcp serve` call) run as they
# would natively; this registers qemu-aarch64 there when it is not yet.
#
#   tests/packages/qemu.sh PATH/TO/aarch64/codeact [TEST FILTER…]
#
# Needs qemu-user (Debian's `qemu-user`) and root for the registration.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=$(readlink -f "$1")
shift
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64) || {
    echo "qemu: qemu-aarch64 is not installed (apt-get install qemu-user)" >&2
    exit 1
}

workspace=$(mktemp -d)
trap 'rm -rf "$workspace"' EXIT
mkdir -p "$workspace/src/deep"
printf 'x = 1  # TODO: one\n' >"$workspace/src/a.py"
printf '// TODO: two\n// TODO: three\n' >"$workspace/src/deep/b.rs"
out=$(cd "$workspace" && "$qemu" "$binary" run <<'PY'
todos = [m for m in grep(pattern="TODO", paths="src")]
print(len(todos), "TODOs in", len({m["path"] for m in todos}), "files")
PY
)
[[ "$out" == "3 TODOs in 2 files" ]] || { echo "qemu: the README's program printed: $out" >&2; exit 1; }
echo "qemu: $("$qemu" "$binary" --version) runs the README's program: $out"

binfmt=/proc/sys/fs/binfmt_misc
[[ -e $binfmt/register ]] || mount -t binfmt_misc binfmt_misc "$binfmt"
if [[ ! -e $binfmt/qemu-aarch64 ]]; then
    # The ELF header of a 64-bit little-endian aarch64 executable (qemu's own pattern); F opens
    # the interpreter now, so it works in every mount namespace the tests make.
    magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    printf ':qemu-aarch64:M::%s:%s:%s:F\n' "$magic" "$mask" "$(readlink -f "$qemu")" >"$binfmt/register"
fi
"$binary" --version >/dev/null || { echo "qemu: binfmt_misc does not run $binary" >&2; exit 1; }

# The binary's own behaviour: the Python corpus, tools and their confinement, limits, output,
# the command line, hooks and the MCP server. Not the CPython backends (their guest is an x86_64
# install here), nor the one test that expects the x86_64 build's hyperlight message (on aarch64
# the backend is not compiled in, and says so).
filters=("$@")
((${#filters[@]})) || filters=(corpus:: tools:: security:: limits:: output:: cli:: hook:: serve:: packages::)
CODEACT_TEST_BIN="$binary" cargo test --locked --test it -- "${filters[@]}" \
    --skip wasm --skip hyperlight --skip cli::backends_that_cannot_run_here_exit_3_with_a_hint
