#!/usr/bin/env python3
# Measures the latency of `codeact hook pre-tool-use` — it runs before every tool call Copilot
# CLI makes — in off, nudge and exclusive modes, beside the cost of spawning /bin/true, over
# N calls each (interleaved). Prints p50 and p99 in a Markdown table. Target: p50 < 2 ms.
# Python 3.11, standard library only. Usually started through bench/run.
"""Benchmark the codeact pre-tool-use hook (see bench/README.md)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

PAYLOAD = json.dumps(
    {"sessionId": "bench-session", "timestamp": 0, "toolName": "view", "toolArgs": {"path": "src/app.py"}}
).encode()


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--codeact", required=True, help="codeact binary")
    parser.add_argument("--calls", type=int, default=300, help="calls per variant [default: 300]")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="codeact-hook-bench-") as temp:
        home = Path(temp)
        (home / "project").mkdir()
        base_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
        }
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "/bin/true": (["/bin/true"], base_env),
        }
        for mode in ["off", "nudge", "exclusive"]:
            variants[f"hook, {mode}"] = ([args.codeact, "hook", "pre-tool-use"], {**base_env, "CODEACT_MODE": mode})
        samples: dict[str, list[float]] = {name: [] for name in variants}
        payload = PAYLOAD.replace(b'"timestamp"', f'"cwd": {json.dumps(str(home / "project"))}, "timestamp"'.encode())
        for _ in range(args.calls):
            for name, (command, env) in variants.items():
                started = time.perf_counter_ns()
                done = subprocess.run(command, input=payload, capture_output=True, env=env, cwd=home / "project")
                samples[name].append((time.perf_counter_ns() - started) / 1e6)
                if done.returncode != 0:
                    raise SystemExit(f"{name} failed: {done.stderr.decode()}")

    print(f"\nHook latency, whole process, {args.calls} calls per variant (interleaved)\n")
    print("| variant | p50 ms | p99 ms | max ms | target |")
    print("|---|---:|---:|---:|---|")
    for name, values in samples.items():
        p50 = statistics.median(values)
        target = ""
        if name.startswith("hook"):
            target = "p50 < 2 ms " + ("✅" if p50 < 2 else "❌")
        print(f"| {name} | {p50:.2f} | {percentile(values, 0.99):.2f} | {max(values):.2f} | {target} |")


if __name__ == "__main__":
    main()
