"""An MCP test server on the official Python SDK (`mcp` 2.3.0, whose `MCPServer` is FastMCP renamed).

It offers what real servers built on the SDK send: structured output with an `outputSchema`, the SDK's
`{"result": X}` wrapping of plain return values, image, audio and resource content, progress and log
notifications, slow and large results, a tool list that changes at run time, `roots/list`, elicitation,
the HTTP headers of a call, tool errors and a crash, resources, a resource template and a prompt.

Usage (the interpreter is the venv `.ci/run` makes: `target/mcp-venv/bin/python`):

    server.py [stdio] [--log FILE] [--save-on-exit FILE] [--exit-delay SECONDS] [--ignore-sigterm]
    server.py http PORT [--stateless] [--json] [--log FILE]

`http` serves streamable HTTP at `http://127.0.0.1:PORT/mcp`; `--stateless` gives no session ids and
`--json` answers POSTs with plain JSON instead of an SSE stream. PORT 0 picks a free port; the server
prints its URL on one line on stdout once it accepts connections, so a test can wait for that line
rather than poll the port.

`--log FILE` appends one line per event: `slow start`, `slow cancelled`, `sigterm` (stdio only, also
when the signal is ignored) and `exit` (stdio: the server ends on its own after stdin EOF).

Shutdown, for stdio (the MCP spec's order is: the client closes stdin, waits, sends SIGTERM, waits,
then kills):
- `--save-on-exit FILE` with `--exit-delay SECONDS`: after stdin reaches EOF the server sleeps, then
  writes `saved\\n` to FILE, as a server that saves its state on exit does. A SIGTERM during the
  sleep kills it before it saves.
- `--ignore-sigterm`: SIGTERM is ignored and the server keeps running after stdin EOF, until it is
  killed with SIGKILL.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import socket
import sys
import time
import warnings
from typing import Any

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

# Logging, roots and elicitation are deprecated in the 2026-07-28 revision, which this server does not
# speak; the clients under test speak 2025-11-25, where they are current. Keep stderr free of the noise.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

# A 1×1 red PNG (8-bit RGB) and 8 samples of 8 kHz mono 8-bit WAV, built with `struct`/`zlib` and
# `wave` and frozen here so that tests can compare the bytes a client hands back.
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC"
WAV_BASE64 = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAoMCggGBAYA=="
README = "# eval server\n\nA test server for MCP clients.\n"

_log_file: str | None = None


def log_event(event: str) -> None:
    """Appends one event line to `--log`, if given."""
    if _log_file:
        with open(_log_file, "a", encoding="utf-8") as f:
            f.write(event + "\n")


mcp = MCPServer("eval", version="1.0.0", instructions="A test server for MCP clients.", log_level="WARNING")

# Advertise `tools.listChanged`, since `grow` changes the list. `MCPServer` has no option for it; every
# transport asks the low-level server for its initialization options, so wrap that one method.
_lowlevel = mcp._lowlevel_server
_plain_init_options = _lowlevel.create_initialization_options


def _init_options(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
    return _plain_init_options(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)


_lowlevel.create_initialization_options = _init_options


# --- structured output ------------------------------------------------------------------------


class Stats(BaseModel):
    """Summary statistics of a list of numbers."""

    count: int
    mean: float
    min: float
    max: float
    detail: dict[str, Any]
    note: str | None = None


@mcp.tool()
def stats(numbers: list[float]) -> Stats:
    """Count, mean, min and max of `numbers`, with a nested dict and a field that is always null."""
    if not numbers:
        raise ToolError("numbers must not be empty")
    return Stats(
        count=len(numbers),
        mean=sum(numbers) / len(numbers),
        min=min(numbers),
        max=max(numbers),
        detail={
            "sum": sum(numbers),
            "range": {"low": min(numbers), "high": max(numbers)},
            "sorted": sorted(numbers),
            "label": "średnia ✓",
            "exact": 2**53 + 1,
        },
    )


# --- plain values, which the SDK wraps as {"result": X} with a wrapper outputSchema --------------


@mcp.tool()
def shout(text: str) -> str:
    """`text` in upper case."""
    return text.upper()


@mcp.tool()
def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


@mcp.tool()
def nothing() -> None:
    """Returns nothing."""
    return None


# --- content blocks other than text --------------------------------------------------------------


@mcp.tool()
def picture() -> Image:
    """One image block: a 1×1 red PNG."""
    return Image(data=base64.b64decode(PNG_BASE64), format="png")


@mcp.tool()
def captioned() -> list[TextContent | ImageContent]:
    """A text block, then an image block."""
    return [TextContent(text="a red pixel"), ImageContent(data=PNG_BASE64, mime_type="image/png")]


@mcp.tool()
def sound() -> Audio:
    """One audio block: a few bytes of WAV (`audio/wav`)."""
    return Audio(data=base64.b64decode(WAV_BASE64), format="wav")


@mcp.tool()
def embedded() -> list[EmbeddedResource | ResourceLink]:
    """An embedded text resource, an embedded blob resource and a resource link."""
    return [
        EmbeddedResource(resource=TextResourceContents(uri="eval://doc/readme", mime_type="text/markdown", text=README)),
        EmbeddedResource(resource=BlobResourceContents(uri="eval://logo.png", mime_type="image/png", blob=PNG_BASE64)),
        ResourceLink(uri="eval://users/42", name="user 42", mime_type="text/plain"),
    ]


# --- notifications during a call, time and size ------------------------------------------------


@mcp.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Sends `steps` progress notifications (when the client sent a progress token), then returns "done"."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return "done"


@mcp.tool()
async def chatty(n: int, ctx: Context) -> int:
    """Sends `n` log notifications (level info), then returns `n`."""
    for i in range(1, n + 1):
        await ctx.info(f"message {i} of {n}")
    return n


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleeps `seconds`. Logs `slow start`, and `slow cancelled` when the client cancels the call."""
    log_event("slow start")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        log_event("slow cancelled")
        raise
    return f"slept {seconds}"


@mcp.tool()
def big(kib: int) -> str:
    """A string of `kib` KiB (`kib * 1024` ASCII characters)."""
    return ("0123456789abcdef" * 64) * kib


# --- a tool list that changes ------------------------------------------------------------------


def late_tool() -> str:
    """A tool that `grow` adds."""
    return "I was added late"


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `late_tool` and sends `notifications/tools/list_changed`."""
    if "late_tool" not in {tool.name for tool in await mcp.list_tools()}:
        mcp.add_tool(late_tool)
    await ctx.session.send_tool_list_changed()
    return "added late_tool"


# --- what the client sent and offers ------------------------------------------------------------


@mcp.tool()
def env() -> dict[str, Any]:
    """The server's environment and working directory."""
    return {"env": dict(os.environ), "cwd": os.getcwd()}


@mcp.tool()
async def roots(ctx: Context) -> list[str]:
    """The URIs the client's `roots/list` answers."""
    result = await ctx.session.list_roots()
    return [str(root.uri) for root in result.roots]


@mcp.tool()
def headers(ctx: Context) -> dict[str, str]:
    """The HTTP request headers of this call (empty over stdio)."""
    return dict(ctx.headers or {})


@mcp.tool()
def echo(value: Any) -> str:
    """What the client sent as `value`, as JSON text `{"value": …, "type": "<Python type name>"}`."""
    return json.dumps({"value": value, "type": type(value).__name__}, ensure_ascii=False)


@mcp.tool()
async def ask(ctx: Context) -> str:
    """Asks the client for a name through elicitation, and says what the client answered."""

    class Name(BaseModel):
        name: str

    answer = await ctx.elicit("What is your name?", Name)
    data = getattr(answer, "data", None)
    return f"{answer.action}: {data.name}" if data is not None else answer.action


# --- failures -----------------------------------------------------------------------------------


@mcp.tool()
def fail(reason: str) -> str:
    """Fails on purpose with a tool error (`isError: true`): "deliberate failure: <reason>"."""
    raise ToolError(f"deliberate failure: {reason}")


@mcp.tool()
def crash() -> str:
    """Exits the whole server process mid-call with status 3, after a line on stderr."""
    sys.stderr.write("about to crash hard\n")
    sys.stderr.flush()
    os._exit(3)


# --- nested arguments ---------------------------------------------------------------------------


class Address(BaseModel):
    street: str
    city: str


class Person(BaseModel):
    name: str
    age: int
    address: Address


@mcp.tool()
def describe(person: Person, friends: list[Person] | None = None) -> str:
    """A sentence about `person` (and their `friends`)."""
    sentence = f"{person.name} ({person.age}) lives at {person.address.street}, {person.address.city}"
    if friends:
        sentence += "; friends: " + ", ".join(friend.name for friend in friends)
    return sentence


# --- resources and a prompt ---------------------------------------------------------------------


@mcp.resource("eval://doc/readme", name="readme", mime_type="text/markdown")
def readme() -> str:
    """The server's README."""
    return README


@mcp.resource("eval://logo.png", name="logo", mime_type="image/png")
def logo() -> bytes:
    """A 1×1 red PNG."""
    return base64.b64decode(PNG_BASE64)


@mcp.resource("eval://users/{id}", name="user", mime_type="text/plain")
def user(id: str) -> str:
    """A line about the user `id`."""
    return f"user {id}"


@mcp.prompt()
def review(code: str, style: str = "short") -> str:
    """Asks for a review of `code`, `short` or `long`."""
    return f"Please give a {style} review of this code:\n\n{code}"


# --- running ------------------------------------------------------------------------------------


def run_stdio(args: argparse.Namespace) -> None:
    def on_sigterm(signum: int, frame: Any) -> None:
        log_event("sigterm")
        if args.ignore_sigterm:
            return
        # Die of the signal, as a server without a handler would.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
    mcp.run("stdio")
    # stdin reached EOF: the client is closing the connection.
    if args.save_on_exit:
        time.sleep(args.exit_delay)
        with open(args.save_on_exit, "w", encoding="utf-8") as f:
            f.write("saved\n")
    if args.ignore_sigterm:
        while True:
            time.sleep(3600)


def run_http(args: argparse.Namespace) -> None:
    import uvicorn

    app = mcp.streamable_http_app(json_response=args.json, stateless_http=args.stateless, host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def serve() -> None:
        async def announce() -> None:
            while not server.started:
                await anyio.sleep(0.01)
            print(f"http://127.0.0.1:{port}/mcp", flush=True)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(announce)
            await server.serve(sockets=[sock])

    anyio.run(serve)


def main() -> None:
    global _log_file
    parser = argparse.ArgumentParser(description="An MCP test server on the official Python SDK.")
    parser.add_argument("transport", nargs="?", default="stdio", choices=["stdio", "http"])
    parser.add_argument("port", nargs="?", type=int, default=0, help="for http: the port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--stateless", action="store_true", help="http: no sessions")
    parser.add_argument("--json", action="store_true", help="http: JSON responses instead of SSE streams")
    parser.add_argument("--log", metavar="FILE", help="append one line per event to FILE")
    parser.add_argument("--save-on-exit", metavar="FILE", help="stdio: write `saved` to FILE after stdin EOF")
    parser.add_argument("--exit-delay", metavar="SECONDS", type=float, default=0.0, help="stdio: sleep before saving")
    parser.add_argument("--ignore-sigterm", action="store_true", help="stdio: ignore SIGTERM and stdin EOF")
    args = parser.parse_args()
    _log_file = args.log
    if args.transport == "http":
        run_http(args)
    else:
        run_stdio(args)
    log_event("exit")


if __name__ == "__main__":
    main()
