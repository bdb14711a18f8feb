#!/usr/bin/env bash
# codeact as the client under test of the MCP conformance suite:
#
#   conformance client --command tests/conformance/client.sh --scenario S
#
# The suite starts a scripted MCP server for scenario S, runs this script with the server's URL as
# the last argument (and MCP_CONFORMANCE_SCENARIO set), and grades the traffic. This script makes
# a throwaway workspace whose `.mcp.json` names that server `conf` (streamable HTTP), trusts it,
# allows the server's host in the user config, and runs one program that lists the server's tools and calls each one with arguments built from
# its input schema: a default or the first enum value where the schema has one, else 3 for
# numbers, "x" for strings, true for booleans.
#
# The binary is $CODEACT_BIN, or target/debug/codeact of this checkout. HOME and the XDG dirs
# point into the throwaway directory, so the trust given here never reaches the user's own.
set -euo pipefail

url=${!#}
repo=$(cd "$(dirname "$0")/../.." && pwd)
codeact=${CODEACT_BIN:-$repo/target/debug/codeact}

dir=$(mktemp -d "${TMPDIR:-/tmp}/codeact-conformance.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/ws" "$dir/home"
export HOME=$dir/home XDG_CONFIG_HOME=$dir/home/.config XDG_STATE_HOME=$dir/home/.local/state \
    XDG_CACHE_HOME=$dir/home/.cache XDG_DATA_HOME=$dir/home/.local/share COPILOT_HOME=$dir/home/.copilot
# The suite's servers listen on localhost, which codeact's network policy refuses unless the
# user's config allows that host.
python3 - "$url" "$dir" <<'PY'
import json, os, sys, urllib.parse
url, dir = sys.argv[1], sys.argv[2]
with open(os.path.join(dir, "ws", ".mcp.json"), "w") as f:
    json.dump({"mcpServers": {"conf": {"type": "http", "url": url, "timeout": 20}}}, f)
os.makedirs(os.path.join(dir, "home", ".config", "codeact"))
with open(os.path.join(dir, "home", ".config", "codeact", "config.json"), "w") as f:
    json.dump({"network": {"allowed_hosts": [urllib.parse.urlsplit(url).hostname]}}, f)
PY

"$codeact" trust --workspace "$dir/ws" > /dev/null

exec "$codeact" run --workspace "$dir/ws" <<'PY'
def value_for(schema):
    if not isinstance(schema, dict):
        return "x"
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ["anyOf", "oneOf"]:
        if schema.get(key):
            return value_for(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if kinds else "null"
    if kind == "number" or kind == "integer":
        return 3
    if kind == "boolean":
        return True
    if kind == "array":
        return [value_for(schema.get("items") or {})]
    if kind == "object":
        return arguments_for(schema)
    if kind == "null":
        return None
    return "x"


def arguments_for(schema):
    properties = schema.get("properties") or {}
    return {name: value_for(properties[name]) for name in properties}


failed = []
for tool in mcp_tools("conf"):
    name = tool["name"]
    arguments = arguments_for(tool.get("input_schema") or {})
    try:
        print(name, arguments, "->", mcp_call("conf", name, **arguments))
    except Exception as error:
        print(name, arguments, "failed:", error)
        failed.append(name)
if failed:
    raise RuntimeError("calls failed: " + ", ".join(failed))
PY
