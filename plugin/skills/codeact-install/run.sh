#!/bin/sh
# Runs `codeact install` through the plugin's launcher; the arguments (`--backend wasm`, …) pass through.
skill_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
exec /bin/sh "$skill_dir/../../bin/codeact" install "$@"
