"""Starts an MCP server over stdio (the command line given), sends initialize, the initialized
notification and tools/list, and checks the answers: codeact's `run` and `describe` tools.

    python3 mcp_check.py codeact mcp serve

Standard library only. Prints the server's name, version and tools; exits 1 on anything else.
"""

import json
import shutil
import subprocess
import sys


def main() -> None:
    # The program as PATH and PATHEXT find it: npm's launcher on Windows is a `.cmd`, which
    # Windows starts only by its full name.
    command = [shutil.which(sys.argv[1]) or sys.argv[1], *sys.argv[2:]]
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict) -> None:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def answer(id_: int) -> dict:
        for line in server.stdout:
            message = json.loads(line)
            if message.get("id") == id_:
                if "error" in message:
                    sys.exit(f"error answer to request {id_}: {message['error']}")
                return message["result"]
        sys.exit(f"the server closed its output before answering request {id_}: {server.stderr.read()}")

    send({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "codeact-packages-check", "version": "1"},
        },
    })
    info = answer(1)["serverInfo"]
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = sorted(tool["name"] for tool in answer(2)["tools"])
    server.stdin.close()
    server.wait(timeout=30)
    if info.get("name") != "codeact" or tools != ["describe", "run"]:
        sys.exit(f"unexpected server {info} with tools {tools}")
    print(f"{info['name']} {info['version']}, tools {', '.join(tools)}")


if __name__ == "__main__":
    main()
