"""Drives `codeact mcp serve` with the official Python MCP SDK, for tests/it/serve.rs.

Reads one JSON request on stdin and prints one JSON object with what it saw; the Rust tests
assert on that. The request:

    {"transport": "stdio", "command": "...", "args": [...], "env": {...}, "cwd": "..."}
    {"transport": "http", "url": "http://127.0.0.1:PORT/mcp"}

plus "scenario" and its fields:

    list                          initialize and tools/list
    calls      calls=[{tool, arguments}]     each call in turn, timed
    progress   arguments                     one `run` call with a progress callback
    cancel     arguments, after, pid_file    a `run` call abandoned after `after` seconds
                                             (the SDK sends notifications/cancelled); whether
                                             the process in `pid_file` still runs a moment
                                             later, in the same session; then `print("after")`
    concurrent arguments, clients            `clients` sessions each make the call at once
    parallel   arguments, calls              one session makes the call `calls` times at once
    sessions   clients, calls=[{client, tool, arguments, pause}]
                                             `clients` sessions open at once; each call in
                                             turn, by the session numbered `client`, after
                                             `pause` seconds (in `calls` too)
"""

import json
import sys
import time
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def session(request):
    if request["transport"] == "stdio":
        params = StdioServerParameters(
            command=request["command"], args=request["args"], env=request["env"], cwd=request["cwd"]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                yield client, await client.initialize()
    else:
        async with streamable_http_client(request["url"]) as (read, write, *_):
            async with ClientSession(read, write) as client:
                yield client, await client.initialize()


def alive(pid_file):
    """Whether the process whose pid is in `pid_file` runs (and is not a zombie)."""
    try:
        with open(pid_file) as file:
            pid = int(file.read().strip())
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError):
        return False


def result_of(result, started):
    return {
        "is_error": bool(result.is_error),
        "text": "".join(block.text for block in result.content if block.type == "text"),
        "structured": result.structured_content,
        "seconds": time.monotonic() - started,
    }


async def call(client, tool, arguments, **options):
    started = time.monotonic()
    try:
        return result_of(await client.call_tool(tool, arguments, **options), started)
    except Exception as error:  # a protocol error: the test asserts on its text
        return {"protocol_error": str(error), "seconds": time.monotonic() - started}


async def scenario(request):
    kind = request["scenario"]
    if kind == "concurrent":
        results = [None] * request["clients"]
        started = time.monotonic()

        async def one(index):
            async with session(request) as (client, _):
                results[index] = await call(client, "run", request["arguments"])

        async with anyio.create_task_group() as group:
            for index in range(request["clients"]):
                group.start_soon(one, index)
        return {"results": results, "seconds": time.monotonic() - started}
    if kind == "sessions":
        async with AsyncExitStack() as stack:
            clients = [(await stack.enter_async_context(session(request)))[0] for _ in range(request["clients"])]
            results = []
            for c in request["calls"]:
                await anyio.sleep(c.get("pause", 0))
                results.append(await call(clients[c["client"]], c["tool"], c["arguments"]))
            return {"results": results}

    async with session(request) as (client, init):
        if kind == "list":
            tools = await client.list_tools()
            return {
                "server": init.server_info.name,
                "instructions": init.instructions,
                "tools": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                        "output_schema": tool.output_schema,
                    }
                    for tool in tools.tools
                ],
            }
        if kind == "calls":
            results = []
            for c in request["calls"]:
                await anyio.sleep(c.get("pause", 0))
                results.append(await call(client, c["tool"], c["arguments"]))
            return {"results": results}
        if kind == "progress":
            seen = []

            async def progress(value, total, message):
                seen.append({"progress": value, "total": total, "message": message})

            result = await call(client, "run", request["arguments"], progress_callback=progress)
            return {"result": result, "progress": seen}
        if kind == "cancel":
            started = time.monotonic()
            with anyio.move_on_after(request["after"]) as scope:
                await client.call_tool("run", request["arguments"])
            abandoned = scope.cancelled_caught
            # Give the server a moment to stop the program, then look for it while the session
            # is still open.
            await anyio.sleep(request.get("settle", 3))
            still = alive(request["pid_file"])
            after = await call(client, "run", {"code": 'print("after")'})
            return {"abandoned": abandoned, "alive_after_cancel": still, "seconds": time.monotonic() - started,
                    "after": after}
        if kind == "parallel":
            first = await call(client, "run", request["first"]) if "first" in request else None
            arguments = request["arguments"]
            if request.get("wait_for_first"):
                arguments = dict(arguments, wait=first["structured"]["running"])
            results = [None] * request["calls"]
            started = time.monotonic()

            async def one(index):
                results[index] = await call(client, "run", arguments)

            async with anyio.create_task_group() as group:
                for index in range(request["calls"]):
                    group.start_soon(one, index)
            return {"first": first, "results": results, "seconds": time.monotonic() - started}
    raise SystemExit(f"unknown scenario {kind!r}")


def main():
    request = json.load(sys.stdin)
    print(json.dumps(anyio.run(scenario, request)))


if __name__ == "__main__":
    main()
