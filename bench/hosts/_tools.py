# The two tools the benchmark programs call, for the pydantic-monty hosts: the same results as
# codeact's `glob` (workspace-relative paths of files, sorted) and `view` (the file's text)
# for the generated workspaces, which hold no ignored or excluded directories.
"""glob and view on the host, for the pydantic-monty benchmark hosts."""

import sys
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()


def glob(pattern: str) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern) if p.is_file())


def view(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def write(_stream: str, text: str) -> None:
    sys.stdout.write(text)


TOOLS = {"glob": glob, "view": view}
