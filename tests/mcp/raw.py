"""A raw JSON-RPC MCP server over stdio, for what a well-behaved SDK will not send.

Standard library only: it runs with a plain `python3`. One JSON-RPC message per line on stdin and
stdout; notifications from the client are ignored, `ping` gets `{}`, an unknown method gets the
JSON-RPC error -32601 and a line that is not JSON gets -32700.

    python3 raw.py MODE [ARGS]

Modes:

    plain             initialize (echoing the client's protocolVersion when it is 2025-03-26, 2025-06-18
                      or 2025-11-25, else answering 2025-11-25) and the tools `echo(text)`, which returns
                      the text, and `env()`, which returns the JSON text {"env": {…}, "cwd": "…"}.
                      Every mode that answers initialize does this too, and when the environment
                      variable RAW_INIT_LOG names a file, writes the client's initialize params to it
                      as JSON (for checks of clientInfo, protocolVersion and capabilities).
    hang-init         prints "waiting for credentials…" to stderr and never answers anything.
    garbage-only      writes only lines that are not JSON to stdout, and never a JSON-RPC message.
    huge MIB          like plain, but every tools/call answers a text of MIB MiB (a float is allowed),
                      all on one line.
    no-schema         tools/list has `bare`, which has no inputSchema, and `echo`, which has one.
    bad-structured    `bad` declares the outputSchema
                      {"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}
                      and returns the structuredContent {"n": "not an int"}; `good` has the same
                      schema and returns {"n": 3}.
    names             tools `get-sum` and `get_sum`, which answer differently ("dash" and
                      "underscore"), and `args`, whose input properties are `server` and `tool`, which
                      returns its arguments as JSON text.
    many N            plain, plus N tools `lookup_0000`…: `lookup_NNNN(key, option=…)` returns
                      "lookup NNNN".
    paged             tools/list in 3 pages joined by nextCursor: echo, env, tool_1 | tool_2, tool_3,
                      tool_4 | tool_5, tool_6, tool_7; `tool_N` returns "tool N".
    exit CODE         reads the initialize request, prints "fatal: missing API key" to stderr and
                      exits with CODE without answering.
    slowexit S FILE   plain, but after stdin reaches EOF it sleeps S seconds, then writes "saved" to
                      FILE: a server that saves its state on exit.
    ignore-term       plain, but ignores SIGTERM, and on stdin EOF keeps sleeping until it is killed.
    grow              plain, plus a tool `grow()`: after a call to it, tools/list also has `late_tool`
                      (which returns "I was added late"), and the call sends
                      notifications/tools/list_changed before its reply.

A server started through a wrapper is not a mode: tests run it as
`sh -c "python3 raw.py plain; sleep 120"` to check that the wrapper's children (the `sleep`) are
reaped along with the wrapper when the client closes.
"""

import json
import os
import signal
import sys
import time

KNOWN_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"

OBJECT = {"type": "object"}
TEXT_ARG = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
N_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def tool(name, description, input_schema=OBJECT, **extra):
    entry = {"name": name, "description": description}
    if input_schema is not None:
        entry["inputSchema"] = input_schema
    entry.update(extra)
    return entry


PLAIN_TOOLS = [
    tool("echo", "Returns `text`.", TEXT_ARG),
    tool("env", "The server's environment and working directory, as JSON text."),
]


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


def structured_result(value):
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value, "isError": False}


class Server:
    def __init__(self, mode, args):
        self.mode = mode
        self.args = args
        self.grown = False

    # --- the wire ---

    def send(self, message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def reply(self, request_id, result):
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id, code, message):
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def serve(self):
        if self.mode == "hang-init":
            sys.stderr.write("waiting for credentials…\n")
            sys.stderr.flush()
        if self.mode == "garbage-only":
            sys.stdout.write("Starting server...\n")
            sys.stdout.flush()
        while True:
            line = sys.stdin.readline()
            if not line:
                return
            if not line.strip():
                continue
            self.handle_line(line)

    def handle_line(self, line):
        if self.mode == "garbage-only":
            sys.stdout.write(f"got {len(line)} bytes, but I only speak plain text\n")
            sys.stdout.flush()
            return
        if self.mode == "hang-init":
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.error(None, -32700, "Parse error")
            return
        if not isinstance(message, dict) or "method" not in message:
            return  # a response to a request this server never sent, or junk: ignore
        if "id" not in message:
            return  # a notification
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            self.initialize(request_id, params)
        elif method == "ping":
            self.reply(request_id, {})
        elif method == "tools/list":
            self.list_tools(request_id, params)
        elif method == "tools/call":
            self.call_tool(request_id, params)
        else:
            self.error(request_id, -32601, f"Method not found: {method}")

    # --- methods ---

    def initialize(self, request_id, params):
        if self.mode == "exit":
            sys.stderr.write("fatal: missing API key\n")
            sys.stderr.flush()
            sys.exit(int(self.args[0]))
        init_log = os.environ.get("RAW_INIT_LOG")
        if init_log:
            with open(init_log, "w", encoding="utf-8") as f:
                json.dump(params, f)
        asked = params.get("protocolVersion")
        capabilities = {"tools": {"listChanged": True}} if self.mode == "grow" else {"tools": {}}
        self.reply(
            request_id,
            {
                "protocolVersion": asked if asked in KNOWN_VERSIONS else LATEST_VERSION,
                "capabilities": capabilities,
                "serverInfo": {"name": f"raw-{self.mode}", "version": "1.0.0"},
            },
        )

    def tools(self):
        if self.mode == "no-schema":
            return [tool("bare", "A tool without an inputSchema.", None), PLAIN_TOOLS[0]]
        if self.mode == "bad-structured":
            return [
                tool("bad", "Returns structuredContent that breaks its outputSchema.", outputSchema=N_SCHEMA),
                tool("good", "Returns structuredContent that fits its outputSchema.", outputSchema=N_SCHEMA),
            ]
        if self.mode == "names":
            server_tool = {
                "type": "object",
                "properties": {"server": {"type": "string"}, "tool": {"type": "string"}},
                "required": ["server", "tool"],
            }
            return [
                tool("get-sum", "Answers `dash`."),
                tool("get_sum", "Answers `underscore`."),
                tool("args", "Returns its arguments as JSON text.", server_tool),
            ]
        if self.mode == "many":
            lookup = {
                "type": "object",
                "properties": {"key": {"type": "string"}, "option": {"type": "string"}},
                "required": ["key"],
            }
            count = int(self.args[0])
            return PLAIN_TOOLS + [tool(f"lookup_{n:04}", f"Returns `lookup {n:04}`.", lookup) for n in range(count)]
        if self.mode == "paged":
            return PLAIN_TOOLS + [tool(f"tool_{n}", f"Returns `tool {n}`.") for n in range(1, 8)]
        if self.mode == "grow":
            grown = [tool("late_tool", "Added by `grow`.")] if self.grown else []
            return PLAIN_TOOLS + [tool("grow", "Adds `late_tool` and says the tool list changed.")] + grown
        return PLAIN_TOOLS

    def list_tools(self, request_id, params):
        tools = self.tools()
        if self.mode != "paged":
            self.reply(request_id, {"tools": tools})
            return
        pages = {None: (0, "page-2"), "page-2": (3, "page-3"), "page-3": (6, None)}
        cursor = params.get("cursor")
        if cursor not in pages:
            self.error(request_id, -32602, f"Invalid cursor: {cursor!r}")
            return
        start, next_cursor = pages[cursor]
        page = {"tools": tools[start : start + 3]}
        if next_cursor:
            page["nextCursor"] = next_cursor
        self.reply(request_id, page)

    def call_tool(self, request_id, params):
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name not in {entry["name"] for entry in self.tools()}:
            self.error(request_id, -32602, f"Unknown tool: {name}")
            return
        if self.mode == "huge":
            self.send_huge(request_id, float(self.args[0]))
            return
        if name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                self.reply(request_id, {"content": [{"type": "text", "text": "text must be a string"}], "isError": True})
                return
            self.reply(request_id, text_result(text))
        elif name == "env":
            self.reply(request_id, text_result(json.dumps({"env": dict(os.environ), "cwd": os.getcwd()})))
        elif name == "bare":
            self.reply(request_id, text_result("bare"))
        elif name == "bad":
            self.reply(request_id, structured_result({"n": "not an int"}))
        elif name == "good":
            self.reply(request_id, structured_result({"n": 3}))
        elif name == "get-sum":
            self.reply(request_id, text_result("dash"))
        elif name == "get_sum":
            self.reply(request_id, text_result("underscore"))
        elif name == "args":
            self.reply(request_id, text_result(json.dumps(arguments, sort_keys=True)))
        elif name.startswith("tool_"):
            self.reply(request_id, text_result(f"tool {name[len('tool_'):]}"))
        elif name.startswith("lookup_"):
            self.reply(request_id, text_result(f"lookup {name[len('lookup_'):]}"))
        elif name == "grow":
            self.grown = True
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            self.reply(request_id, text_result("added late_tool"))
        elif name == "late_tool":
            self.reply(request_id, text_result("I was added late"))

    def send_huge(self, request_id, mib):
        text = "x" * int(mib * 1024 * 1024)
        # Built by hand: the text needs no escaping, and this skips a second copy of many MiB.
        sys.stdout.write('{"jsonrpc": "2.0", "id": ' + json.dumps(request_id))
        sys.stdout.write(', "result": {"content": [{"type": "text", "text": "' + text + '"}], "isError": false}}\n')
        sys.stdout.flush()


MODES = {
    "plain": 0,
    "hang-init": 0,
    "garbage-only": 0,
    "huge": 1,
    "no-schema": 0,
    "bad-structured": 0,
    "names": 0,
    "paged": 0,
    "many": 1,
    "exit": 1,
    "slowexit": 2,
    "ignore-term": 0,
    "grow": 0,
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in MODES or len(sys.argv) - 2 != MODES[sys.argv[1]]:
        sys.stderr.write(__doc__)
        sys.exit(2)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Server(mode, args).serve()
    # stdin reached EOF: the client is closing the connection.
    if mode == "slowexit":
        time.sleep(float(args[0]))
        with open(args[1], "w", encoding="utf-8") as f:
            f.write("saved\n")
    if mode == "ignore-term":
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
