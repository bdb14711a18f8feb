# The deterministic workspaces of the TODO-scan benchmark: N Python files of 20–200 lines in
# nested directories, about 60 % of them with TODO lines, plus non-Python files (some
# mentioning TODO) that the scan must skip. The same on every run and machine.
"""Generate the TODO-scan workspaces (see bench/README.md)."""

from __future__ import annotations

import hashlib
import random
import shutil
import sys
from pathlib import Path

# Bump when the generator changes, so existing workspaces are rebuilt.
GENERATOR_VERSION = 1
SEED = 0x5EED_C0DE
MAX_FILES = 10_000  # glob() returns at most this many paths
MIN_LINES, MAX_LINES = 20, 200

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
    print(f"bench: generating {root} ({n_py} .py files, {len(files) - n_py} others)", file=sys.stderr, flush=True)
    if root.exists():
        shutil.rmtree(root)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    stamp.write_text(want)
    return root, sha

