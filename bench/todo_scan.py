#!/usr/bin/env python3
# Measures whole-process wall time of `codeact run` against CPython (`python3`) on the same
# programs: a trivial `print(1)` and a TODO scan (glob every .py file, read each, count lines
# containing TODO) over deterministic generated workspaces. Runs are interleaved A, B, A, B…;
# outputs must be byte-identical. Prints a Markdown table and writes <work-dir>/results.json.
# Python 3.11, standard library only. Usually started through bench/run.
"""Benchmark `codeact run` against CPython, whole process (see bench/README.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Bump when the generator changes, so existing workspaces are rebuilt.
GENERATOR_VERSION = 1
SEED = 0x5EED_C0DE
MAX_FILES = 10_000  # glob() returns at most this many paths
MIN_LINES, MAX_LINES = 20, 200

# Limits given to codeact so the scan is never cut short (large outputs, 10 000 view() calls).
CODEACT_LIMITS = ["--max-output", "1000000000", "--max-tool-calls", "1000000", "--timeout", "600"]

TRIVIAL = "print(1)\n"

# The TODO scan as a codeact program: tools are functions.
CODEACT_SCAN = """\
total = 0
for path in glob(pattern="**/*.py"):
    count = 0
    for line in view(path=path).splitlines():
        if "TODO" in line:
            count += 1
    print(f"{path}: {count}")
    total += count
print(f"total: {total}")
"""

# The same scan for CPython: pathlib rglob, sorted by workspace-relative path, read_text.
CPYTHON_SCAN = """\
import sys
from pathlib import Path

root = Path(sys.argv[1])
total = 0
for path in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if p.is_file()):
    count = 0
    for line in (root / path).read_text(encoding="utf-8").splitlines():
        if "TODO" in line:
            count += 1
    print(f"{path}: {count}")
    total += count
print(f"total: {total}")
"""


# --------------------------------------------------------------------------- workspace generator


class Rng:
    """Seeded generator. Only getrandbits() is used: for an int seed its output is the same on
    every CPython version (unlike choice() or randrange(), whose algorithms have changed)."""

    def __init__(self, seed: int) -> None:
        self.bits = random.Random(seed).getrandbits

    def next(self) -> int:
        return self.bits(64)

    def below(self, n: int) -> int:
        return self.next() % n

    def between(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def chance(self, p: float) -> bool:
        return self.next() < p * 2**64

    def choice(self, items: list[str] | tuple[str, ...]) -> str:
        return items[self.below(len(items))]


# Directory and module names. None is a default-excluded directory (build, dist, target, …).
DIR_WORDS = (
    "api", "app", "auth", "billing", "cache", "cli", "common", "config", "core", "db",
    "events", "export", "handlers", "importers", "internal", "jobs", "lib", "metrics",
    "models", "net", "plugins", "reports", "schemas", "search", "services", "storage",
    "sync", "tasks", "tests", "ui", "utils", "views", "web", "workers",
)
NOUNS = (
    "account", "batch", "buffer", "client", "config", "cursor", "event", "invoice", "item",
    "job", "key", "message", "node", "order", "page", "payload", "queue", "record", "report",
    "request", "result", "session", "shard", "snapshot", "token", "user", "value",
)
VERBS = (
    "build", "check", "collect", "convert", "create", "decode", "encode", "fetch", "filter",
    "format", "handle", "load", "merge", "parse", "process", "read", "refresh", "render",
    "resolve", "save", "send", "split", "sync", "update", "validate", "write",
)
PHRASES = (
    "keep the order stable", "retry on transient errors", "handle the empty case",
    "avoid the extra copy", "cache the lookup", "validate input early", "log the failure",
    "split this into smaller pieces", "use the shared client", "drop the legacy path",
    "check the timezone", "make this configurable", "remove after the migration",
    "document the return value", "support pagination", "close the handle on error",
)
ODD_TEXT = ("café au lait", "naïve datetime", "→ next step", "größe", "déjà vu", "µs timing")
IMPORTS = (
    "import os", "import re", "import sys", "import json", "import logging", "import time",
    "from dataclasses import dataclass", "from typing import Any, Iterable",
    "from collections import defaultdict", "from pathlib import Path",
)
CLASS_SUFFIXES = ("Builder", "Client", "Handler", "Manager", "Registry", "Store", "View")


class FileWriter:
    """Builds one Python-looking source file of an exact number of lines."""

    def __init__(self, rng: Rng, name: str, lines: int, todo_rate: float) -> None:
        self.rng, self.name, self.target, self.todo_rate = rng, name, lines, todo_rate
        self.lines: list[str] = []

    def comment(self, indent: str) -> str:
        rng = self.rng
        phrase = rng.choice(PHRASES)
        if rng.chance(self.todo_rate):
            marker = rng.choice(("TODO:", "TODO:", "TODO:", "TODO(dev):", "FIXME/TODO"))
            return f"{indent}# {marker} {phrase}"
        if rng.chance(0.05):
            return f"{indent}# todo-ish, not a marker: {phrase}"  # lower case: not counted
        if rng.chance(0.03):
            return f"{indent}# note ({rng.choice(ODD_TEXT)}): {phrase}"
        return f"{indent}# {phrase}"

    def function(self, indent: str) -> list[str]:
        rng = self.rng
        noun = rng.choice(NOUNS)
        name = f"{rng.choice(VERBS)}_{noun}"
        receiver = "self, " if indent else ""
        out = [f"{indent}def {name}({receiver}{noun}, options=None):"]
        out.append(f'{indent}    """{rng.choice(VERBS).capitalize()} the {noun}: {rng.choice(PHRASES)}."""')
        for _ in range(rng.between(2, 12)):
            kind = rng.below(8)
            var = rng.choice(NOUNS)
            if kind == 0:
                out.append(self.comment(indent + "    "))
            elif kind == 1:
                out.append(f"{indent}    if {var} is None:")
                out.append(f"{indent}        raise ValueError(\"{var} is required\")")
            elif kind == 2:
                out.append(f"{indent}    for {var}_item in {noun}:")
                out.append(f"{indent}        {var} = {rng.choice(VERBS)}_{var}({var}_item)")
            elif kind == 3 and rng.chance(self.todo_rate):
                out.append(f'{indent}    log.warning("TODO: {rng.choice(PHRASES)}")')
            else:
                out.append(f"{indent}    {var} = {noun}.get(\"{var}\", {rng.between(0, 999)})")
        out.append(f"{indent}    return {noun}")
        return out

    def klass(self) -> list[str]:
        rng = self.rng
        noun = rng.choice(NOUNS)
        out = ["", "", "@dataclass", f"class {noun.capitalize()}{rng.choice(CLASS_SUFFIXES)}:"]
        out.append(f'    """{rng.choice(PHRASES).capitalize()}."""')
        out.append("")
        for _ in range(rng.between(1, 4)):
            out.append(f"    {rng.choice(NOUNS)}: int = {rng.between(0, 100)}")
        for _ in range(rng.between(1, 3)):
            out.append("")
            out.extend(self.function("    "))
        return out

    def build(self) -> str:
        rng = self.rng
        lines = self.lines
        lines.append(f'"""{self.name}: {rng.choice(PHRASES)}."""')
        lines.append("")
        for imp in sorted({"import logging"} | {rng.choice(IMPORTS) for _ in range(rng.between(1, 5))}):
            lines.append(imp)
        lines.append("")
        lines.append("log = logging.getLogger(__name__)")
        while len(lines) < self.target:
            kind = rng.below(6)
            if kind == 0:
                block = self.klass()
            elif kind == 1:
                block = ["", self.comment("")]
            else:
                block = ["", ""] + self.function("")
            if len(lines) + len(block) > self.target:
                break
            lines.extend(block)
        # Pad to the exact length with module-level constants.
        while len(lines) < self.target:
            if rng.chance(0.2):
                lines.append(self.comment(""))
            else:
                lines.append(f"{rng.choice(NOUNS).upper()}_{len(lines)} = {rng.between(0, 9999)}")
        return "\n".join(lines) + "\n"


def generate(n_py: int) -> dict[str, str]:
    """The files of the workspace with n_py Python files: relative path -> text. Deterministic."""
    rng = Rng(SEED + n_py)
    # A nested tree: each new directory goes below a random existing one, at most 4 deep.
    dirs: list[str] = [""]
    n_dirs = max(8, n_py // 8)
    while len(dirs) < n_dirs + 1:
        parent = rng.choice(dirs) if len(dirs) > 3 else ""
        if parent.count("/") >= 3:
            continue
        name = rng.choice(DIR_WORDS)
        path = f"{parent}/{name}" if parent else name
        if path not in dirs:
            dirs.append(path)
        elif rng.chance(0.5):
            dirs.append(f"{path}_{len(dirs)}")
    files: dict[str, str] = {}
    while len(files) < n_py:
        folder = dirs[0] if rng.chance(0.03) else rng.choice(dirs)
        stem = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" if rng.chance(0.7) else rng.choice(NOUNS)
        path = f"{folder}/{stem}.py" if folder else f"{stem}.py"
        if path in files:
            path = path[:-3] + f"_{len(files)}.py"
        todo_rate = 0.0 if rng.chance(0.4) else rng.between(2, 25) / 100
        writer = FileWriter(rng, stem, rng.between(MIN_LINES, MAX_LINES), todo_rate)
        files[path] = writer.build()
    # Files that are not Python (some mention TODO): the scan must skip them.
    extras = ("README.md", "notes.txt", "setup.cfg", "data.json", "schema.sql", "run.sh")
    for i in range(max(2, n_py // 10)):
        folder = rng.choice(dirs)
        name = rng.choice(extras)
        path = f"{folder}/{name}" if folder else name
        if path in files:
            continue
        body = [f"{name} {i}: {rng.choice(PHRASES)}"]
        for _ in range(rng.between(3, 30)):
            body.append(("TODO: " if rng.chance(0.2) else "- ") + rng.choice(PHRASES))
        files[path] = "\n".join(body) + "\n"
    return files


def digest(files: dict[str, str]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return h.hexdigest()


def ensure_workspace(work_dir: Path, n_py: int) -> tuple[Path, str]:
    """Write the workspace unless an identical one is already there; return its path and digest."""
    files = generate(n_py)
    sha = digest(files)
    root = work_dir / f"ws-{n_py}"
    stamp = work_dir / f"ws-{n_py}.stamp"
    want = f"generator {GENERATOR_VERSION} seed {SEED:#x} files {len(files)} sha256 {sha}\n"
    if root.is_dir() and stamp.is_file() and stamp.read_text() == want:
        return root, sha
    log(f"generating {root} ({n_py} .py files, {len(files) - n_py} others)")
    if root.exists():
        shutil.rmtree(root)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    stamp.write_text(want)
    return root, sha


# --------------------------------------------------------------------------- measurement


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def fail(message: str) -> None:
    print(f"bench: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


class Variant:
    """One way of running a program: a command line, the program on stdin, a clean environment."""

    def __init__(self, label: str, argv: list[str], program: str, env: dict[str, str]) -> None:
        self.label, self.argv, self.program, self.env = label, argv, program.encode(), env
        self.samples_ns: list[int] = []

    def run_once(self) -> tuple[int, bytes]:
        start = time.perf_counter_ns()
        proc = subprocess.run(
            self.argv, input=self.program, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env
        )
        elapsed = time.perf_counter_ns() - start
        if proc.returncode != 0:
            fail(
                f"{self.label} exited {proc.returncode}: {' '.join(self.argv)}\n"
                f"--- stderr ---\n{proc.stderr.decode(errors='replace')}"
            )
        if proc.stderr:
            log(f"warning: {self.label} wrote to stderr: {proc.stderr.decode(errors='replace').strip()}")
        return elapsed, proc.stdout


def describe_mismatch(a: bytes, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"first difference at line {i + 1}:\n  codeact: {x!r}\n  cpython: {y!r}"
    return f"lengths differ: codeact {len(a)} bytes / {len(la)} lines, cpython {len(b)} bytes / {len(lb)} lines"


def measure(name: str, a: Variant, b: Variant, runs: int, warmup: int) -> bytes:
    """Warm up, then run A, B, A, B… `runs` times each; every output must be byte-identical."""
    log(f"{name}: {warmup} warm-up + {runs} measured runs each, interleaved")
    expected: bytes | None = None
    for i in range(warmup + runs):
        for variant in (a, b):
            elapsed, out = variant.run_once()
            if expected is None:
                expected = out
            elif out != expected:
                fail(f"{name}: {variant.label} output differs from {a.label}'s; {describe_mismatch(expected, out)}")
            if i >= warmup:
                variant.samples_ns.append(elapsed)
    assert expected is not None
    return expected


def stats(samples_ns: list[int]) -> dict[str, float]:
    ms = [s / 1e6 for s in samples_ns]
    return {
        "min_ms": round(min(ms), 3),
        "median_ms": round(statistics.median(ms), 3),
        "max_ms": round(max(ms), 3),
        "samples_ms": [round(x, 3) for x in ms],
    }


# --------------------------------------------------------------------------- machine and report


def machine() -> dict[str, object]:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": model,
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "os": f"{platform.system()} {platform.release()}",
    }


def version_of(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (proc.stdout or proc.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def fmt(ms: float) -> str:
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def clean_env(config_dir: Path) -> dict[str, str]:
    """The caller's environment without CODEACT_* and PYTHON* settings, and an empty codeact
    user config, so that neither side is tuned or limited by whatever the caller had set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEACT_", "PYTHON"))}
    env["CODEACT_CONFIG_DIR"] = str(config_dir)
    return env


def parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or not 1 <= int(part) <= MAX_FILES:
            raise argparse.ArgumentTypeError(f"sizes are file counts from 1 to {MAX_FILES}, got {part!r}")
        sizes.append(int(part))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="bench/run",
        description="Whole-process wall time of `codeact run` vs CPython: print(1) and a TODO scan.",
    )
    parser.add_argument("--codeact", required=True, help="codeact binary (bench/run passes it)")
    parser.add_argument("--work-dir", type=Path, required=True, help="generated workspaces and results.json")
    parser.add_argument("--sizes", type=parse_sizes, default=[40, 1000], help="Python files per workspace, comma-separated [default: 40,1000]")
    parser.add_argument("--runs", type=int, default=20, help="measured runs per variant [default: 20]")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured runs per variant first [default: 2]")
    parser.add_argument("--python", default="python3", help="CPython to compare with [default: python3]")
    args = parser.parse_args()
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")

    codeact = str(Path(args.codeact).resolve())
    python = shutil.which(args.python)
    if python is None:
        fail(f"CPython interpreter {args.python!r} not found")
    work_dir: Path = args.work_dir.resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    config_dir = work_dir / "empty-config"
    config_dir.mkdir(exist_ok=True)
    env = clean_env(config_dir)

    info = machine()
    codeact_version = version_of([codeact, "--version"])
    python_version = version_of([python, "--version"])
    workspaces = [(n, *ensure_workspace(work_dir, n)) for n in args.sizes]

    benchmarks = []
    trivial_a = Variant("codeact", [codeact, "run", "--backend", "monty"], TRIVIAL, env)
    trivial_b = Variant("cpython", [python, "-"], TRIVIAL, env)
    measure("print(1)", trivial_a, trivial_b, args.runs, args.warmup)
    benchmarks.append(("trivial", "`print(1)`", None, None, trivial_a, trivial_b, 5.0))
    for n, root, sha in workspaces:
        a = Variant(
            "codeact",
            [codeact, "run", "--backend", "monty", "--workspace", str(root), *CODEACT_LIMITS],
            CODEACT_SCAN,
            env,
        )
        b = Variant("cpython", [python, "-", str(root)], CPYTHON_SCAN, env)
        out = measure(f"TODO scan, {n} files", a, b, args.runs, args.warmup)
        todos = out.decode().rstrip("\n").rsplit("\n", 1)[-1].removeprefix("total: ")
        limit = 10.0 if n == 40 else None
        benchmarks.append((f"todo_scan_{n}", f"TODO scan, {n} files ({todos} TODOs)", n, sha, a, b, limit))

    # Targets (bench/README.md): print(1) < 5 ms, 40-file scan < 10 ms, 1 000-file scan no slower than CPython.
    rows = []
    results = []
    for key, title, n, sha, a, b, limit_ms in benchmarks:
        sa, sb = stats(a.samples_ns), stats(b.samples_ns)
        ratio = sb["median_ms"] / sa["median_ms"]
        if limit_ms is not None:
            met = sa["median_ms"] < limit_ms
            target = f"codeact median < {limit_ms:g} ms"
        elif n == 1000:
            met = ratio >= 1.0
            target = "codeact no slower than CPython"
        else:
            met, target = None, None
        mark = "" if met is None else (" ✅" if met else " ❌")
        rows.append(
            f"| {title} | codeact | {fmt(sa['min_ms'])} | {fmt(sa['median_ms'])} | {fmt(sa['max_ms'])} "
            f"| {ratio:.1f}× | {(target or '—') + mark} |"
        )
        rows.append(f"| | CPython | {fmt(sb['min_ms'])} | {fmt(sb['median_ms'])} | {fmt(sb['max_ms'])} | | |")
        results.append(
            {
                "name": key,
                "python_files": n,
                "workspace_sha256": sha,
                "codeact": sa,
                "cpython": sb,
                "ratio_cpython_over_codeact_median": round(ratio, 3),
                "target": target,
                "target_met": met,
            }
        )

    cores = info["logical_cores"]
    usable = info["usable_cores"]
    core_text = f"{cores} cores" if cores == usable else f"{cores} cores ({usable} usable)"
    print(f"Machine: {info['cpu']}, {core_text}, {info['os']}")
    print(f"codeact: {codeact_version} ({codeact}); CPython: {python_version} ({python})")
    print(f"Whole process, wall time; {args.runs} runs each after {args.warmup} warm-up, interleaved A, B, A, B…")
    print()
    print("| benchmark | variant | min ms | median ms | max ms | CPython/codeact (median) | target |")
    print("|---|---|---:|---:|---:|---:|---|")
    print("\n".join(rows))

    report = {
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": info,
        "codeact": {"binary": codeact, "version": codeact_version},
        "cpython": {"executable": python, "version": python_version},
        "runs": args.runs,
        "warmup": args.warmup,
        "generator": {"version": GENERATOR_VERSION, "seed": SEED},
        "benchmarks": results,
    }
    out_path = work_dir / "results.json"
    out_path.write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(f"Results: {out_path}")


if __name__ == "__main__":
    main()
