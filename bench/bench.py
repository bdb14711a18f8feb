#!/usr/bin/env python3
# codeact's benchmarks, side by side in one invocation: each case runs codeact and what a user
# would otherwise run, interleaved run by run, checks that every variant printed the same
# bytes, and reports min / median / max and the ratio to codeact. Prints one Markdown report
# and writes it, with every sample, to <work-dir>/results.md and results.json.
# Python 3.11, standard library only. Started by bench/run, which builds what it needs.
"""codeact benchmarks, side by side (see bench/README.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import workspace

BENCH_DIR = Path(__file__).resolve().parent
CASES = ("size", "trivial", "scan", "wasm", "hyperlight", "hook", "commands", "mcp", "serve", "tokens")

# Limits given to codeact so the scan is never cut short (large outputs, 10 000 view() calls
# plus the glob: one more than the default tool-call budget).
CODEACT_LIMITS = ["--max-output", "1000000000", "--max-tool-calls", "1000000", "--timeout", "600"]

TRIVIAL = "print(1)\n"

# The TODO scan as a codeact program: tools are functions. The pydantic-monty hosts run it too.
TOOLS_SCAN = """\
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

# Programs Monty cannot run, for what `auto` costs when it runs them again on CPython: one that
# fails at once, and the scan that fails only at its end, after all its reads (made again).
BEYOND_MONTY = """\
import textwrap
print(textwrap.shorten("a program that needs a module Monty lacks", width=20))
"""
BEYOND_MONTY_SCAN = TOOLS_SCAN + """\
import textwrap
print(textwrap.shorten(f"{total} TODOs", width=20))
"""

# Two failures a model typically makes, for the size of what it reads back.
FAILED_RUNS = {
    "failed run: unknown argument": 'for path in glob(pattern="**/*.py", recursive=True):\n    print(path)\n',
    "failed run: missing file": 'text = view(path="src/main.py")\nprint(len(text.splitlines()))\n',
}

HOOK_MODES = ("off", "nudge", "exclusive")


# --------------------------------------------------------------------------- running processes


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def fail(message: str) -> None:
    print(f"bench: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


@dataclass
class Run:
    elapsed_ns: int
    returncode: int
    stdout: bytes
    stderr: bytes


def spawn(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path | None = None) -> Run:
    """Run one process to completion; its wall time runs from spawn to reaped."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        fin.write(stdin)
        fin.seek(0)
        start = time.perf_counter_ns()
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, env=env, cwd=cwd)
        proc.wait()
        elapsed = time.perf_counter_ns() - start
        fout.seek(0)
        ferr.seek(0)
        return Run(elapsed, proc.returncode, fout.read(), ferr.read())


@dataclass
class Variant:
    """One way of doing the work: a command line, its stdin, its environment."""

    label: str
    argv: list[str]
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    after: list[str] | None = None  # an unmeasured command run after each run (e.g. uninstall)
    before: object = None  # an unmeasured function called before each run (e.g. drop caches)
    samples_ns: list[int] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)

    def run_once(self) -> Run:
        if callable(self.before):
            self.before()
        run = spawn(self.argv, self.stdin, self.env, self.cwd)
        if run.returncode != 0:
            fail(
                f"{self.label} exited {run.returncode}: {' '.join(self.argv)}\n"
                f"--- stderr ---\n{run.stderr.decode(errors='replace')}"
            )
        if self.after:
            done = subprocess.run(self.after, env=self.env, cwd=self.cwd, capture_output=True)
            if done.returncode != 0:
                fail(f"{' '.join(self.after)} failed: {done.stderr.decode(errors='replace')}")
        return run


def describe_mismatch(label_a: str, a: bytes, label_b: str, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"first difference at line {i + 1}:\n  {label_a}: {x!r}\n  {label_b}: {y!r}"
    return f"lengths differ: {label_a} {len(a)} bytes, {label_b} {len(b)} bytes"


def measure(name: str, variants: list[Variant], runs: int, warmup: int, same_output: bool = True) -> bytes:
    """Warm up, then run the variants in turn (A, B, C, A, B, C…) `runs` times each. With
    `same_output`, every run of every variant must print exactly what the first one printed."""
    log(f"{name}: {len(variants)} variants, {warmup} warm-up + {runs} measured runs each, interleaved")
    expected: bytes | None = None
    for i in range(warmup + runs):
        for variant in variants:
            run = variant.run_once()
            if expected is None:
                expected = run.stdout
            elif same_output and run.stdout != expected:
                fail(f"{name}: {variant.label}'s output differs from {variants[0].label}'s; "
                     + describe_mismatch(variants[0].label, expected, variant.label, run.stdout))
            if i >= warmup:
                variant.samples_ns.append(run.elapsed_ns)
    assert expected is not None
    return expected


def measure_memory(setup: Setup, variants: list[Variant]) -> None:
    """Peak resident set of each variant, `memory_runs` times, through `benchtool rss`."""
    if setup.benchtool is None:
        return
    log(f"peak memory: {len(variants)} variants, {setup.memory_runs} runs each")
    with tempfile.TemporaryDirectory(prefix="codeact-rss-") as temp:
        out = Path(temp) / "rss"
        for _ in range(setup.memory_runs):
            for variant in variants:
                run = spawn([setup.benchtool, "rss", str(out), *variant.argv], variant.stdin, variant.env, variant.cwd)
                if run.returncode != 0:
                    fail(f"{variant.label} exited {run.returncode} under benchtool rss: {run.stderr.decode(errors='replace')}")
                variant.rss_kib.append(int(out.read_text()))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(variant: Variant) -> dict[str, object]:
    out: dict[str, object] = {}
    if variant.samples_ns:
        ms = [s / 1e6 for s in variant.samples_ns]
        out.update({
            "min_ms": round(min(ms), 3),
            "median_ms": round(statistics.median(ms), 3),
            "p99_ms": round(percentile(ms, 0.99), 3),
            "max_ms": round(max(ms), 3),
            "samples_ms": [round(x, 3) for x in ms],
        })
    if variant.rss_kib:
        out["peak_rss_mib_median"] = round(statistics.median(variant.rss_kib) / 1024, 1)
        out["peak_rss_mib_max"] = round(max(variant.rss_kib) / 1024, 1)
    return out


def fmt(ms: float) -> str:
    return f"{ms:.0f}" if ms >= 1000 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


# --------------------------------------------------------------------------- the report


@dataclass
class Report:
    sections: list[str] = field(default_factory=list)
    targets: list[dict[str, object]] = field(default_factory=list)
    results: dict[str, object] = field(default_factory=dict)

    def section(self, title: str, intro: str, header: list[str], rows: list[list[str]]) -> None:
        lines = [f"### {title}", "", intro, ""] if intro else [f"### {title}", ""]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in rows)
        self.sections.append("\n".join(lines))

    def target(self, what: str, goal: str, measured: str, met: bool) -> None:
        self.targets.append({"target": what, "goal": goal, "measured": measured, "met": met})


def timing_rows(variants: list[Variant], base: Variant, title: str = "") -> list[list[str]]:
    base_median = statistics.median(base.samples_ns)
    rows = []
    for i, v in enumerate(variants):
        s = summary(v)
        ratio = statistics.median(v.samples_ns) / base_median
        rows.append([
            title if i == 0 else "",
            v.label,
            fmt(s["min_ms"]),
            f"**{fmt(s['median_ms'])}**" if v is base else fmt(s["median_ms"]),
            fmt(s["max_ms"]),
            "1×" if v is base else f"{ratio:.1f}×",
        ])
    return rows


# --------------------------------------------------------------------------- cases


@dataclass
class Setup:
    codeact: str
    python: str
    monty: dict[str, str]  # pydantic-monty version -> its venv's python
    benchtool: str | None
    work_dir: Path
    env: dict[str, str]
    home: Path
    runs: int
    large_runs: int
    warmup: int
    sizes: list[int]
    hook_calls: int
    mcp_runs: int
    memory_runs: int
    wasm_env: dict[str, str] | None
    compare: dict[str, str] = field(default_factory=dict)  # label -> another build of codeact
    packages: Path | None = None  # scripts/package's output for this binary


def program_variants(setup: Setup, codeact_program: str, cpython_program: str, root: Path | None) -> list[Variant]:
    """codeact, CPython and each pydantic-monty version running the same program."""
    ws = [str(root)] if root else []
    codeact_args = ["--workspace", str(root), *CODEACT_LIMITS] if root else []
    variants = [
        Variant("codeact", [setup.codeact, "run", "--backend", "monty", *codeact_args], codeact_program.encode(), setup.env),
        Variant("CPython", [setup.python, "-", *ws], cpython_program.encode(), setup.env),
    ]
    for label, binary in setup.compare.items():
        variants.append(Variant(f"codeact, {label}", [binary, "run", "--backend", "monty", *codeact_args],
                                codeact_program.encode(), setup.env))
    for version, python in setup.monty.items():
        host = BENCH_DIR / "hosts" / f"pydantic_monty_{version.replace('.', '_')}.py"
        variants.append(Variant(f"pydantic-monty {version}", [python, str(host), *ws], codeact_program.encode(), setup.env))
    return variants


def case_programs(setup: Setup, report: Report) -> None:
    """Cases 1, 2 and 6: print(1) and the TODO scans, wall time and peak memory."""
    rows: list[list[str]] = []
    memory_rows: list[list[str]] = []
    benches: list[dict[str, object]] = []

    variants = program_variants(setup, TRIVIAL, TRIVIAL, None)
    measure("print(1)", variants, setup.runs, setup.warmup)
    benches.append({"name": "trivial", "title": "`print(1)`", "python_files": None, "variants": variants, "runs": setup.runs})

    for n in setup.sizes:
        root, sha = workspace.ensure_workspace(setup.work_dir, n)
        variants = program_variants(setup, TOOLS_SCAN, CPYTHON_SCAN, root)
        runs = setup.runs if n < 10_000 else setup.large_runs
        out = measure(f"TODO scan, {n} files", variants, runs, setup.warmup)
        todos = out.decode().rstrip("\n").rsplit("\n", 1)[-1].removeprefix("total: ")
        benches.append({"name": f"todo_scan_{n}", "title": f"TODO scan, {n:,} files ({todos} TODOs)",
                        "python_files": n, "workspace_sha256": sha, "variants": variants, "runs": runs})

    measure_memory(setup, [v for bench in benches for v in bench["variants"]])
    floor = None
    if setup.benchtool:
        floor = Variant("spawn `true` (the floor)", [shutil.which("true") or "/bin/true"], b"", setup.env)
        measure_memory(setup, [floor])

    for bench in benches:
        variants, title, n = bench["variants"], bench["title"], bench["python_files"]
        codeact, cpython = variants[0], variants[1]
        rows.extend(timing_rows(variants, codeact, f"{title}, {bench['runs']} runs"))
        for i, v in enumerate(variants if setup.benchtool else []):
            s = summary(v)
            memory_rows.append([title if i == 0 else "", v.label, f"{s['peak_rss_mib_median']:.1f}", f"{s['peak_rss_mib_max']:.1f}"])
        median = statistics.median(codeact.samples_ns) / 1e6
        cp_ratio = statistics.median(cpython.samples_ns) / statistics.median(codeact.samples_ns)
        if n is None:
            report.target("`print(1)`, whole process", "< 5 ms", f"{fmt(median)} ms", median < 5)
        elif n == 40:
            report.target("TODO scan, 40 files", "< 10 ms", f"{fmt(median)} ms", median < 10)
        elif n == 10_000:
            report.target("TODO scan, 10 000 files", "no slower than CPython",
                          f"{fmt(median)} ms vs CPython {fmt(median * cp_ratio)} ms", cp_ratio >= 1)
        bench["variants"] = {v.label: summary(v) for v in variants}
        del bench["title"]
    if floor is not None:
        report.results["memory_floor"] = summary(floor)

    report.section(
        "Running a program: codeact vs CPython vs pydantic-monty",
        "Whole process, wall time (ms); ratio = variant median / codeact median (higher is slower).",
        ["benchmark", "variant", "min", "median", "max", "vs codeact"],
        rows,
    )
    if floor is not None:
        s = summary(floor)
        memory_rows.append([floor.label, "", f"{s['peak_rss_mib_median']:.1f}", f"{s['peak_rss_mib_max']:.1f}"])
        report.section(
            "Peak memory",
            f"Peak resident set (MiB) of the same programs, {setup.memory_runs} more runs each, measured apart from "
            "the timings (`getrusage` of a small spawner; the largest process of the run: for pydantic-monty 1.4.0, "
            "its host or its worker, whichever is larger).",
            ["benchmark", "variant", "median MiB", "max MiB"],
            memory_rows,
        )
    report.results["programs"] = benches


def drop_from_page_cache(directory: Path) -> None:
    """Asks the kernel to forget the cached pages of every file below `directory`, so the next
    run reads the compiled guest and the standard library from disk: a cold start."""
    for path in directory.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def case_wasm(setup: Setup, report: Report) -> None:
    """The wasm backend (full CPython in WebAssembly): cold and warm, beside Monty and CPython;
    then what `auto` costs on a program Monty cannot run."""
    guest_backend_case(setup, report, "wasm", "Compiling the guest once (`codeact guest install`) is not included.")
    fallback_case(setup, report)


def fallback_case(setup: Setup, report: Report) -> None:
    """`auto` on programs Monty cannot run (Monty first, then the same program again on the
    CPython guest) against `--backend wasm` given directly: the price of trying Monty first."""
    if setup.wasm_env is None:
        report.sections.append("### auto: Monty, then CPython\n\nSkipped: the CPython guest is not installed (bench/run installs it).")
        return
    env = {**setup.env, **setup.wasm_env}
    detected = json.loads(subprocess.run([setup.codeact, "detect", "--json"], env=env, capture_output=True,
                                         text=True, check=True).stdout)
    backend = detected.get("fallback")
    if backend is None:
        report.sections.append("### auto: Monty, then CPython\n\nSkipped: `codeact detect` finds no CPython backend for auto to fall back to.")
        return
    root, _ = workspace.ensure_workspace(setup.work_dir, 1000)
    rows: list[list[str]] = []
    results = {}
    worst = 0.0
    for title, program, ws in [("fails at once (`import textwrap`)", BEYOND_MONTY, None),
                               ("1,000-file scan, fails at its end", BEYOND_MONTY_SCAN, root)]:
        extra = ["--workspace", str(ws), *CODEACT_LIMITS] if ws else []
        direct = Variant(f"codeact --backend {backend}", [setup.codeact, "run", "--backend", backend, *extra], program.encode(), env)
        auto = Variant(f"codeact auto (Monty, then {backend})", [setup.codeact, "run", *extra], program.encode(), env)
        measure(f"auto: {title}", [direct, auto], setup.runs, setup.warmup)
        rows.extend(timing_rows([direct, auto], direct, f"{title}, {setup.runs} runs"))
        results[title] = {v.label: summary(v) for v in (direct, auto)}
        worst = max(worst, statistics.median(auto.samples_ns) / statistics.median(direct.samples_ns))
    report.target(f"auto on what Monty cannot run, vs {backend} directly", "≤ 1.2×", f"{worst:.2f}× (worse of two)", worst <= 1.2)
    report.section(
        "auto: Monty, then CPython",
        f"Whole process, warm, wall time (ms), ratio to `--backend {backend}` given directly. `auto` runs the "
        "program on Monty, which fails on what it lacks, then again from the start on the CPython guest: the scan's "
        "1,001 reads are made twice. Both print the same bytes.",
        ["benchmark", "variant", "min", "median", "max", f"vs {backend}"],
        rows,
    )
    report.results["fallback"] = results


def emulated_cpu() -> bool:
    """Whether this machine's CPU is QEMU's software emulation (the test VM of tests/vm)."""
    try:
        return "QEMU TCG" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def case_hyperlight(setup: Setup, report: Report) -> None:
    """The hyperlight backend (the same CPython in a Hyperlight micro-VM), where a micro-VM starts."""
    if setup.wasm_env is None:
        report.sections.append("### hyperlight backend\n\nSkipped: the CPython guest is not installed (bench/run installs it).")
        return
    env = {**setup.env, **setup.wasm_env}
    preflight = subprocess.run([setup.codeact, "preflight", "--backend", "hyperlight"], env=env, capture_output=True, text=True)
    if preflight.returncode != 0:
        why = " ".join(line.strip() for line in preflight.stdout.splitlines() if "FAIL" in line)
        report.sections.append(f"### hyperlight backend\n\nSkipped: no Hyperlight micro-VM starts on this machine ({why}).")
        return
    # The first run makes the prepared snapshot; that is not what the benchmark measures.
    subprocess.run([setup.codeact, "run", "--backend", "hyperlight", "--code", "print(1)"], env=env, capture_output=True, check=True)
    note = "Making the prepared snapshot (the first run after an install) is not included."
    if emulated_cpu():
        note += (" **Emulated:** this machine's CPU is QEMU's software emulation (the nested test VM), 10–100× slower "
                 "than hardware; these figures check that the backend works, not how fast it is.")
    guest_backend_case(setup, report, "hyperlight", note)


def guest_backend_case(setup: Setup, report: Report, backend: str, note: str) -> None:
    """A backend that runs the CPython guest: `print(1)` and the 1,000-file scan, cold and warm,
    beside Monty and CPython."""
    if setup.wasm_env is None:
        report.sections.append(f"### {backend} backend\n\nSkipped: the CPython guest is not installed (bench/run installs it).")
        return
    env = {**setup.env, **setup.wasm_env}
    cached = [Path(setup.wasm_env["CODEACT_CACHE_DIR"]), Path(setup.wasm_env["CODEACT_GUEST_DIR"])]

    def cold() -> None:
        for directory in cached:
            drop_from_page_cache(directory)

    rows: list[list[str]] = []
    results = {}
    programs = [("`print(1)`", TRIVIAL, TRIVIAL, None)]
    root, _ = workspace.ensure_workspace(setup.work_dir, 1000)
    programs.append(("TODO scan, 1,000 files", TOOLS_SCAN, CPYTHON_SCAN, root))
    for title, program, cpython_program, ws in programs:
        extra = ["--workspace", str(ws), *CODEACT_LIMITS] if ws else []
        argv = [setup.codeact, "run", "--backend", backend, *extra]
        warm = Variant(f"codeact {backend}, warm", argv, program.encode(), env)
        cold_run = Variant(f"codeact {backend}, cold", argv, program.encode(), env, before=cold)
        others = program_variants(setup, program, cpython_program, ws)[:2]
        others[0].label = "codeact monty"
        # Cold runs apart: dropping the page cache between warm runs would leave those partly cold.
        measure(f"{backend}: {title}", [warm, *others], setup.runs, setup.warmup)
        measure(f"{backend}: {title}, cold", [cold_run], setup.runs, setup.warmup)
        variants = [warm, cold_run, *others]
        rows.extend(timing_rows(variants, warm, f"{title}, {setup.runs} runs"))
        results[title] = {v.label: summary(v) for v in variants}
        if ws is None:
            median = statistics.median(warm.samples_ns) / 1e6
            goal = {"wasm": 15, "hyperlight": 10}[backend]
            label = f"{backend} `print(1)`, warm" + (" (emulated CPU)" if backend == "hyperlight" and emulated_cpu() else "")
            report.target(label, f"≤ {goal} ms", f"{fmt(median)} ms", median <= goal)
    report.section(
        f"{backend} backend",
        f"Whole process, wall time (ms), ratio to {backend} warm. *Cold*: the guest's files and caches dropped from "
        "the page cache before each run (`posix_fadvise(DONTNEED)`), as after a reboot; *warm*: as in a working "
        f"session (measured interleaved with Monty and CPython; the cold runs apart). {note}",
        ["benchmark", "variant", "min", "median", "max", f"vs {backend} warm"],
        rows,
    )
    report.results[backend] = results


def hook_payload(event: str, cwd: Path) -> bytes:
    if event == "pre-tool-use":
        # A search: denied in exclusive mode (which lets one direct read through), counted in nudge.
        return json.dumps({"sessionId": "bench", "timestamp": 0, "cwd": str(cwd), "toolName": "grep",
                           "toolArgs": {"pattern": "TODO", "paths": "src", "glob": "*.py"}}).encode()
    return json.dumps({"sessionId": "bench", "timestamp": 0, "cwd": str(cwd), "source": "new"}).encode()


def case_hook(setup: Setup, report: Report) -> None:
    """Case 3: the pre-tool-use hook, which runs before every tool call, beside /bin/true."""
    project = setup.home / "hook-project"
    project.mkdir(exist_ok=True)
    payload = hook_payload("pre-tool-use", project)
    true = shutil.which("true") or "/bin/true"
    variants = [Variant("spawn `true`", [true], payload, setup.env, project)]
    for mode in HOOK_MODES:
        variants.append(Variant(f"hook, {mode}", [setup.codeact, "hook", "pre-tool-use"], payload,
                                {**setup.env, "CODEACT_MODE": mode}, project))
    # The post-tool-use hook runs after every tool call too; only nudge reads its state there.
    variants.append(Variant("post-tool-use hook, nudge", [setup.codeact, "hook", "post-tool-use"], payload,
                            {**setup.env, "CODEACT_MODE": "nudge"}, project))
    for label, binary in setup.compare.items():
        variants.append(Variant(f"hook, off, {label}", [binary, "hook", "pre-tool-use"], payload,
                                {**setup.env, "CODEACT_MODE": "off"}, project))
    measure("hook pre-tool-use", variants, setup.hook_calls, setup.warmup, same_output=False)
    floor = statistics.median(variants[0].samples_ns)
    rows = []
    for v in variants:
        s = summary(v)
        ratio = statistics.median(v.samples_ns) / floor
        rows.append([v.label, fmt(s["median_ms"]), fmt(s["p99_ms"]), fmt(s["max_ms"]), f"{ratio:.2f}×"])
        if "hook" in v.label and not any(v.label.endswith(f", {label}") for label in setup.compare):
            report.target(f"{v.label}, p50", "< 2 ms", f"{fmt(s['median_ms'])} ms", s["median_ms"] < 2)
            report.target(f"{v.label}, p50 / spawning `true`", "≤ 1.5×", f"{ratio:.2f}×", ratio <= 1.5)
    report.section(
        "Hook latency",
        f"`codeact hook pre-tool-use` (runs before every tool call) and `post-tool-use` (after every one), "
        f"whole process, {setup.hook_calls} calls each, interleaved with spawning `true` — the floor for any hook.",
        ["variant", "p50 ms", "p99 ms", "max ms", "p50 vs `true`"],
        rows,
    )
    report.results["hook"] = {v.label: summary(v) for v in variants}


def case_size(setup: Setup, report: Report) -> None:
    """The binary on disk, and the packages that carry it as users download them."""
    binary = Path(setup.codeact)
    stripped = subprocess.run(["file", "-b", str(binary)], capture_output=True, text=True).stdout
    rows = [["the binary", f"{binary.stat().st_size / 2**20:.1f}",
             "stripped" if "not stripped" not in stripped else "not stripped"]]
    sizes = {"binary": binary.stat().st_size}
    for label, other in setup.compare.items():
        size = Path(other).stat().st_size
        rows.append([f"the binary, {label}", f"{size / 2**20:.1f}", f"{size / sizes['binary']:.2f}× this one's"])
        sizes[f"binary, {label}"] = size
    largest = 0
    if setup.packages is None:
        log("size: no --packages folder (scripts/package's output); only the binary is measured")
    else:
        version = version_of([setup.codeact, "--version"]).split()[1]
        found = sorted(p for p in setup.packages.iterdir()
                       if p.name.startswith(("codeact-", "codeact_")) and version in p.name)
        for package in found:
            size = package.stat().st_size
            sizes[package.name] = size
            rows.append([f"`{package.name}`", f"{size / 2**20:.1f}", "compressed, as downloaded"])
            largest = max(largest, size)
        if found:
            report.target("largest package (wheel, npm, archive)", "< 25 MB",
                          f"{largest / 1e6:.1f} MB", largest < 25e6)
    report.section("Size", "", ["file", "MiB", ""], rows)
    report.results["size_bytes"] = sizes


def case_commands(setup: Setup, report: Report) -> None:
    """Case 4: discover, instructions and install."""
    project = setup.home / "commands-project"
    project.mkdir(exist_ok=True)
    ws = ["--workspace", str(project)]
    variants = [
        Variant("discover", [setup.codeact, "discover", *ws], b"", setup.env, project),
        Variant("instructions", [setup.codeact, "instructions", *ws], b"", setup.env, project),
        Variant("install", [setup.codeact, "install", "--no-guest", *ws], b"", setup.env, project,
                after=[setup.codeact, "uninstall", *ws]),
    ]
    measure("discover, instructions, install", variants, setup.runs, setup.warmup, same_output=False)
    rows = []
    for v in variants:
        s = summary(v)
        rows.append([f"`codeact {v.label}`", fmt(s["min_ms"]), fmt(s["median_ms"]), fmt(s["max_ms"])])
        if v.label == "install":
            report.target("`codeact install`", "< 50 ms", f"{fmt(s['median_ms'])} ms", s["median_ms"] < 50)
    report.section(
        "Commands",
        f"Whole process, {setup.runs} runs each, interleaved; `install` writes the instructions and agent "
        "files into a project (removed again between runs, unmeasured).",
        ["command", "min ms", "median ms", "max ms"],
        rows,
    )
    report.results["commands"] = {v.label: summary(v) for v in variants}


def case_mcp(setup: Setup, report: Report) -> None:
    """Case 5: 50 MCP calls from one run vs 50 runs of one call (a server per call)."""
    calls = 50
    server = BENCH_DIR.parent / "tests/e2e/node_modules/.bin/mcp-server-everything"
    if not server.exists():
        log(f"MCP skipped: {server} is missing (run `npm ci --prefix tests/e2e`)")
        report.sections.append(f"### MCP\n\nSkipped: `{server}` is missing (`npm ci --prefix tests/e2e`).")
        return
    project = setup.home / "mcp-project"
    project.mkdir(exist_ok=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": {"command": str(server), "args": ["stdio"]}}}))
    # A workspace's servers start only once the user trusts its `.mcp.json`.
    subprocess.run([setup.codeact, "trust", "--workspace", str(project)], env=setup.env, check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    argv = [setup.codeact, "run", "--backend", "monty", "--workspace", str(project)]
    one = Variant("one run, 50 calls", argv, f"for i in range({calls}):\n    print(everything__echo(message=str(i)))\n".encode(),
                  setup.env, project)
    expected = "".join(f"Echo: {i}\n" for i in range(calls)).encode()
    log(f"MCP: {setup.mcp_runs} runs each, interleaved")
    many_ns: list[int] = []
    for _ in range(setup.mcp_runs):
        run = one.run_once()
        if run.stdout != expected:
            fail(f"MCP one run printed {run.stdout[:200]!r}")
        one.samples_ns.append(run.elapsed_ns)
        total = 0
        outs = []
        for i in range(calls):
            single = Variant("single", argv, f"print(everything__echo(message='{i}'))\n".encode(), setup.env, project).run_once()
            total += single.elapsed_ns
            outs.append(single.stdout)
        if b"".join(outs) != expected:
            fail("MCP: the 50 single runs printed something else")
        many_ns.append(total)
    many = Variant("50 runs, 1 call each", argv, samples_ns=many_ns)
    report.section(
        "MCP",
        f"{calls} calls to `@modelcontextprotocol/server-everything`'s `echo` (stdio): from one `codeact run` "
        f"(one server, one connection) vs {calls} runs of one call each (a server per call). "
        f"Whole process, {setup.mcp_runs} runs each.",
        ["benchmark", "variant", "min ms", "median ms", "max ms", "vs one run"],
        timing_rows([one, many], one, f"{calls} MCP calls"),
    )
    report.results["mcp"] = {v.label: summary(v) for v in (one, many)}


class McpHttp:
    """A minimal MCP client over streamable HTTP, on one kept-alive connection: enough to time
    `tools/call` against `codeact mcp serve --http` without a client library's own costs."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.session: str | None = None
        self.next_id = 0

    def send(self, method: str, params: dict[str, object], notify: bool = False) -> dict[str, object] | None:
        body: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            body["id"] = self.next_id
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            headers.update({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": "2025-06-18"})
        self.conn.request("POST", self.path, json.dumps(body), headers)
        response = self.conn.getresponse()
        data = response.read()
        self.session = response.getheader("Mcp-Session-Id") or self.session
        if notify:
            return None
        if response.status != 200:
            fail(f"MCP {method}: HTTP {response.status}: {data[:300]!r}")
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            for line in data.decode().splitlines():
                if line.startswith("data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    if message.get("id") == body["id"]:
                        return message
            fail(f"MCP {method}: no answer in the event stream: {data[:300]!r}")
        return json.loads(data)

    def run(self, code: str) -> tuple[int, str]:
        """One `run` call: its wall time and the text it returned."""
        start = time.perf_counter_ns()
        answer = self.send("tools/call", {"name": "run", "arguments": {"code": code}})
        elapsed = time.perf_counter_ns() - start
        result = answer.get("result") if answer else None
        if not isinstance(result, dict) or result.get("isError"):
            fail(f"MCP run failed: {answer}")
        return elapsed, "".join(block.get("text", "") for block in result["content"])


def start_server(setup: Setup, project: Path, *extra: str) -> tuple[subprocess.Popen[bytes], McpHttp]:
    """A `codeact mcp serve --http` on a free port in `project`, and a client initialized on it."""
    server = subprocess.Popen([setup.codeact, "mcp", "serve", "--http", "127.0.0.1:0", "--workspace", str(project),
                               *extra],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=setup.env, cwd=project)
    line = server.stderr.readline().decode() if server.stderr else ""
    if "serving MCP at " not in line:
        server.terminate()
        fail(f"`codeact mcp serve` did not start: {line}")
    client = McpHttp(line.split("serving MCP at ", 1)[1].strip())
    client.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "bench", "version": "1"}})
    client.send("notifications/initialized", {}, notify=True)
    return server, client


# What a session holds while its calls are timed: an index of 1 000 short entries, as a model
# that read a repository once would keep it.
SESSION_STATE = "index = {f'src/file_{i}.py': [f'line {j}' for j in range(5)] for i in range(1000)}\n"


def case_serve(setup: Setup, report: Report) -> None:
    """Case 6: a `run` call through a warm `codeact mcp serve --http`, with and without a session
    that keeps state, beside `codeact run` processes, with and without `--session`."""
    project = setup.home / "serve-project"
    project.mkdir(exist_ok=True)
    servers: list[subprocess.Popen[bytes]] = []
    try:
        stateless_server, stateless = start_server(setup, project, "--session-idle", "0")
        servers.append(stateless_server)
        session_server, in_session = start_server(setup, project)
        servers.append(session_server)
        elapsed, text = in_session.run(SESSION_STATE + "len(index)")
        if text != "1000\n":
            fail(f"the session's state was not made: {text!r}")
        run_args = [setup.codeact, "run", "--backend", "monty", "--workspace", str(project)]
        process = Variant("`codeact run` process", run_args, b"print(1)\n", setup.env, project)
        made = spawn([*run_args, "--session", "bench"], SESSION_STATE.encode(), setup.env, project)
        if made.returncode != 0:
            fail(f"codeact run --session failed: {made.stderr.decode(errors='replace')}")
        kept = Variant("`codeact run --session` process (state saved and loaded)",
                       [*run_args, "--session", "bench"], b"print(len(index))\n", setup.env, project)
        served = Variant("`run` call, warm server, no session (`--session-idle 0`)", [])
        kept_served = Variant("`run` call, warm server, in a session holding the index", [])
        warm = Variant("`run` call, warm server, in that session, `print(1)`", [])
        # Each session's worker saves its state after answering: calls of one session are kept
        # apart by the others, as a model's own turn keeps them apart.
        steps = (
            (None, process, None, b"1\n"),
            (in_session, kept_served, "print(len(index))", "1000\n"),
            (None, kept, None, b"1000\n"),
            (stateless, served, "print(1)", "1\n"),
        )
        steps_warm = ((in_session, warm, "print(1)", "1\n"),)
        for _ in range(setup.warmup):
            for client, variant, code, _ in (*steps, *steps_warm):
                if client is None:
                    variant.run_once()
                else:
                    client.run(code)
        log(f"serve: {setup.runs} runs each, interleaved")
        for _ in range(setup.runs):
            for client, variant, code, expected in (*steps, *steps_warm):
                if client is None:
                    run = variant.run_once()
                    if run.stdout != expected:
                        fail(f"{variant.label} printed {run.stdout!r}")
                    variant.samples_ns.append(run.elapsed_ns)
                    continue
                elapsed, text = client.run(code)
                if text != expected:
                    fail(f"the run tool returned {text!r} for {variant.label}")
                variant.samples_ns.append(elapsed)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        subprocess.run([setup.codeact, "session", "rm", "bench"], env=setup.env, cwd=project, capture_output=True)
    variants = [process, kept, served, kept_served, warm]
    report.section(
        "MCP server",
        "`print(1)` as a `run` call to a warm `codeact mcp serve --http` (one kept-alive connection), "
        "with sessions off (each call a `codeact run` of its own, started by the server) and in a "
        "session (its worker keeps the interpreter between calls, and saves it after each answer), "
        "beside a `codeact run` process started by the caller; and a call that reads a session's "
        "state (an index of 1 000 entries), over MCP and as `codeact run --session` (loaded before "
        f"the run and saved after it). {setup.runs} runs each, interleaved.",
        ["benchmark", "variant", "min ms", "median ms", "max ms", "vs process"],
        timing_rows(variants, process, "`print(1)`"),
    )
    report.results["serve"] = {v.label: summary(v) for v in variants}


def case_tokens(setup: Setup, report: Report) -> None:
    """Case 7: the size, in o200k_base tokens, of every text codeact puts in front of a model."""
    if setup.benchtool is None:
        report.sections.append("### Tokens\n\nSkipped: no token counter (bench/run builds `--example benchtool`).")
        return
    out_dir = setup.work_dir / "texts"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    project = setup.home / "tokens-project"
    project.mkdir(exist_ok=True)
    texts: dict[str, str] = {}

    def codeact(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None, ok: bool = True) -> Run:
        run = spawn([setup.codeact, *args], stdin, env or setup.env, project)
        if ok and run.returncode != 0:
            fail(f"codeact {' '.join(args)} exited {run.returncode}: {run.stderr.decode(errors='replace')}")
        return run

    codeact("install", "--agent", "--workspace", str(project))
    for path in sorted(project.rglob("*.md")):
        kind = "instructions file (always loaded)" if "instructions" in path.name else "agent file"
        texts[kind] = path.read_text()
    codeact("uninstall", "--workspace", str(project))
    skill = BENCH_DIR.parent / "plugin/skills/codeact-install/SKILL.md"
    if skill.exists():
        texts["skill `codeact-install` (loaded on request)"] = skill.read_text()
    deny = codeact("hook", "pre-tool-use", stdin=hook_payload("pre-tool-use", project),
                   env={**setup.env, "CODEACT_MODE": "exclusive"})
    texts["deny reason (exclusive mode)"] = json.loads(deny.stdout)["permissionDecisionReason"]
    start = codeact("hook", "session-start", stdin=hook_payload("session-start", project))
    texts["session-start context"] = json.loads(start.stdout)["additionalContext"]
    for name, program in FAILED_RUNS.items():
        run = codeact("run", "--backend", "monty", "--workspace", str(project), stdin=program.encode(), ok=False)
        if run.returncode == 0:
            fail(f"{name}: the program was expected to fail")
        texts[name] = (run.stdout + run.stderr).decode()

    files = {}
    for i, (name, text) in enumerate(texts.items()):
        path = out_dir / f"{i:02}.txt"
        path.write_text(text)
        files[str(path)] = name
    done = subprocess.run([setup.benchtool, "tokens", *files], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        fail(f"token counter failed: {done.stderr}")
    counts = {}
    for line in done.stdout.splitlines():
        count, path = line.split("\t", 1)
        counts[files[path]] = int(count)
    rows = [[name, str(counts[name]), str(len(texts[name].encode()))] for name in texts]
    instructions = counts["instructions file (always loaded)"]
    report.target("instructions file", "≤ 400 tokens", f"{instructions} tokens", instructions <= 400)
    report.section(
        "Tokens",
        f"Every text codeact puts in front of a model, in o200k_base tokens (counted offline). The texts are in `{out_dir}`.",
        ["text", "tokens", "bytes"],
        rows,
    )
    report.results["tokens"] = {name: {"tokens": counts[name], "bytes": len(texts[name].encode())} for name in texts}


# --------------------------------------------------------------------------- machine and main


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
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": model, "logical_cores": os.cpu_count(), "usable_cores": usable, "memory": memory,
            "os": f"{platform.system()} {platform.release()}"}


def version_of(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (proc.stdout or proc.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def clean_env(home: Path) -> dict[str, str]:
    """The caller's environment without CODEACT_*, COPILOT_* and PYTHON* settings, with a
    scratch HOME and an empty codeact user config: nobody is tuned or limited by the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEACT_", "COPILOT_", "PYTHON"))}
    env.update({
        "HOME": str(home),
        "CODEACT_CONFIG_DIR": str(home / "codeact-config"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "COPILOT_HOME": str(home / "copilot"),
    })
    return env


def parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or not 1 <= int(part) <= workspace.MAX_FILES:
            raise argparse.ArgumentTypeError(f"sizes are file counts from 1 to {workspace.MAX_FILES}, got {part!r}")
        sizes.append(int(part))
    return sizes


def parse_cases(text: str) -> list[str]:
    cases = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown case {unknown[0]!r}; the cases are {', '.join(CASES)}")
    return cases


def parse_monty(text: str) -> tuple[str, str]:
    version, sep, python = text.partition("=")
    if not sep or not version or not python:
        raise argparse.ArgumentTypeError(f"expected VERSION=PYTHON, got {text!r}")
    return version, python


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench/run", description=__doc__)
    parser.add_argument("--codeact", required=True, help="codeact binary (bench/run passes it)")
    parser.add_argument("--benchtool", help="token counter and peak-memory meter (bench/run builds it)")
    parser.add_argument("--monty", type=parse_monty, action="append", default=[], metavar="VERSION=PYTHON",
                        help="a Python with pydantic-monty VERSION installed (bench/run makes two venvs)")
    parser.add_argument("--work-dir", type=Path, default=BENCH_DIR / "work", help="workspaces and results [default: bench/work]")
    parser.add_argument("--only", type=parse_cases, default=list(CASES), help=f"cases to run, comma-separated [default: {','.join(CASES)}]")
    parser.add_argument("--sizes", type=parse_sizes, default=[40, 1000, 10000], help="Python files per scan workspace [default: 40,1000,10000]")
    parser.add_argument("--runs", type=int, default=20, help="measured runs per variant [default: 20]")
    parser.add_argument("--large-runs", type=int, default=5, help="measured runs per variant of the 10 000-file scan [default: 5]")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured runs per variant first [default: 2]")
    parser.add_argument("--hook-calls", type=int, default=300, help="hook calls per mode [default: 300]")
    parser.add_argument("--memory-runs", type=int, default=3, help="peak-memory runs per program variant [default: 3]")
    parser.add_argument("--mcp-runs", type=int, default=3, help="runs of each MCP variant [default: 3]")
    parser.add_argument("--wasm-env", type=parse_monty, action="append", default=[], metavar="NAME=VALUE",
                        help="CODEACT_GUEST_DIR and CODEACT_CACHE_DIR of an installed guest (bench/run installs one)")
    parser.add_argument("--python", default="python3", help="CPython to compare with [default: python3]")
    parser.add_argument("--compare", type=parse_monty, action="append", default=[], metavar="LABEL=BINARY",
                        help="another build of codeact to run beside it in print(1), the scans and the hook")
    parser.add_argument("--packages", type=Path, help="scripts/package's output folder, for the size case")
    args = parser.parse_args()
    if min(args.runs, args.large_runs, args.hook_calls, args.mcp_runs) < 1 or args.warmup < 0:
        parser.error("run counts must be at least 1 and --warmup at least 0")

    python = shutil.which(args.python)
    if python is None:
        fail(f"CPython interpreter {args.python!r} not found")
    work_dir: Path = args.work_dir.resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="codeact-bench-") as temp:
        home = Path(temp)
        setup = Setup(
            codeact=str(Path(args.codeact).resolve()), python=python, monty=dict(args.monty),
            benchtool=args.benchtool, memory_runs=args.memory_runs, work_dir=work_dir, env=clean_env(home), home=home, runs=args.runs,
            large_runs=args.large_runs, warmup=args.warmup, sizes=args.sizes, hook_calls=args.hook_calls,
            mcp_runs=args.mcp_runs,
            wasm_env=dict(args.wasm_env) if args.wasm_env else None,
            compare={label: str(Path(binary).resolve()) for label, binary in args.compare},
            packages=args.packages.resolve() if args.packages else None,
        )
        report = Report()
        steps = {"size": case_size, "trivial": case_programs, "wasm": case_wasm, "hyperlight": case_hyperlight, "hook": case_hook, "commands": case_commands, "mcp": case_mcp, "serve": case_serve, "tokens": case_tokens}
        if "scan" in args.only and "trivial" not in args.only:
            args.only.append("trivial")  # print(1) and the scans share one table
        for name, step in steps.items():
            if name in args.only:
                step(setup, report)

    info = machine()
    versions = {
        "codeact": version_of([setup.codeact, "--version"]),
        "cpython": version_of([python, "--version"]),
        **{f"pydantic-monty {v}": version_of([p, "-c", "import importlib.metadata as m; print(m.version('pydantic-monty'))"])
           for v, p in setup.monty.items()},
    }
    cores = f"{info['logical_cores']} cores" + ("" if info["logical_cores"] == info["usable_cores"] else f" ({info['usable_cores']} usable)")
    head = [
        f"Machine: {info['cpu']}, {cores}, {info['memory']}, {info['os']}.",
        "Versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"Finished in {time.monotonic() - started:.0f} s; generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC.",
        "",
        "### Targets",
        "",
        "| target | goal | measured | |",
        "|---|---|---|---|",
        *(f"| {t['target']} | {t['goal']} | {t['measured']} | {'✅' if t['met'] else '❌ missed'} |" for t in report.targets),
    ]
    text = "\n".join(head) + "\n\n" + "\n\n".join(report.sections) + "\n"
    print(text)
    (work_dir / "results.md").write_text(text)
    document = {
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": info,
        "versions": versions,
        "runs": args.runs, "large_runs": args.large_runs, "warmup": args.warmup,
        "generator": {"version": workspace.GENERATOR_VERSION, "seed": workspace.SEED},
        "targets": report.targets,
        **report.results,
    }
    (work_dir / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    log(f"results: {work_dir / 'results.md'}, {work_dir / 'results.json'}")


if __name__ == "__main__":
    main()
