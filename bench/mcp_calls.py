#!/usr/bin/env python3
# Measures 50 MCP tool calls made from one `codeact run` (one server connection, reused)
# against 50 separate `codeact run` processes making one call each — the old design, which
# started a server per call. Uses @modelcontextprotocol/server-everything from tests/e2e
# (`npm ci --prefix tests/e2e`). Prints a Markdown table. Python 3.11, standard library only.
"""Benchmark MCP calls in one run against one process per call (see bench/README.md)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CALLS = 50


def run(codeact: str, workspace: Path, program: str) -> str:
    done = subprocess.run(
        [codeact, "run", "--backend", "monty", "--workspace", str(workspace)],
        input=program.encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"codeact failed: {done.stderr.decode()}")
    return done.stdout.decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--codeact", required=True, help="codeact binary")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per variant [default: 3]")
    args = parser.parse_args()
    server = Path(__file__).resolve().parent.parent / "tests/e2e/node_modules/.bin/mcp-server-everything"
    if not server.exists():
        print(f"\nMCP benchmark skipped: {server} is missing (run `npm ci --prefix tests/e2e`)")
        return
    with tempfile.TemporaryDirectory(prefix="codeact-mcp-bench-") as temp:
        workspace = Path(temp)
        (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": {"command": str(server), "args": ["stdio"]}}}))
        one_run = f"for i in range({CALLS}):\n    print(everything__echo(message=str(i)))\n"
        expected = "".join(f"Echo: {i}\n" for i in range(CALLS))
        samples: dict[str, list[float]] = {"one run, 50 calls": [], "50 runs, 1 call each": []}
        for _ in range(args.runs):
            started = time.perf_counter_ns()
            out = run(args.codeact, workspace, one_run)
            samples["one run, 50 calls"].append((time.perf_counter_ns() - started) / 1e6)
            assert out == expected, out
            started = time.perf_counter_ns()
            outs = [run(args.codeact, workspace, f"print(everything__echo(message='{i}'))\n") for i in range(CALLS)]
            samples["50 runs, 1 call each"].append((time.perf_counter_ns() - started) / 1e6)
            assert "".join(outs) == expected
    print(f"\nMCP: {CALLS} calls to server-everything's echo, whole process, {args.runs} runs each (interleaved)\n")
    print("| variant | min ms | median ms | max ms | ratio to one run |")
    print("|---|---:|---:|---:|---:|")
    base = statistics.median(samples["one run, 50 calls"])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {min(values):.0f} | {median:.0f} | {max(values):.0f} | {median / base:.1f}× |")


if __name__ == "__main__":
    main()
