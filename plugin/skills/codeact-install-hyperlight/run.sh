#!/bin/sh
# Runs `codeact install --backend hyperlight` through the plugin's launcher; extra arguments pass through.
skill_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
exec sh "$skill_dir/../../bin/codeact" install --backend hyperlight "$@"
