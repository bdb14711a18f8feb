# codeact's worker for Python drop-ins (`tools/*.py`): one process per run serves every call,
# one JSON request per line on stdin, one JSON answer per line on the protocol pipe.
# The tools' own prints go to stderr, so they can never corrupt an answer.
import json
import os
import sys
import traceback
import types

protocol = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

# The first line names each drop-in and gives the source codeact read (and the user trusted):
# that text is what runs, never whatever the file holds by now, nor a cached `.pyc` beside it.
tools = {}
for path, source in json.loads(sys.stdin.readline())["load"]:
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        module = types.ModuleType("codeact_tool_" + name)
        module.__file__ = path
        exec(compile(source, path, "exec"), module.__dict__)
        meta = getattr(module, "TOOL", None) or {}
        function = getattr(module, meta.get("function", "run"))
        doc = (module.__doc__ or "").strip().split("\n")[0]
        tools[name] = (function, {"name": name, "description": meta.get("description", doc), "parameters": meta.get("parameters", {})})
    except Exception as error:  # noqa: BLE001 - reported to codeact, which leaves the tool out
        tools[name] = (None, {"name": name, "error": f"{type(error).__name__}: {error}"})


def answer(value):
    protocol.write(json.dumps(value) + "\n")


for line in sys.stdin:
    request = json.loads(line)
    if request.get("describe"):
        answer({"ok": [meta for _, meta in tools.values()]})
        continue
    function, meta = tools.get(request["tool"], (None, {"error": "no such tool"}))
    if function is None:
        answer({"error": {"type": "RuntimeError", "message": meta.get("error", "no such tool")}})
        continue
    try:
        result = function(**request["args"])
    except Exception as error:  # noqa: BLE001 - becomes the same exception in the program
        frames = traceback.extract_tb(error.__traceback__)
        where = f" ({os.path.basename(frames[-1].filename)}, line {frames[-1].lineno})" if frames else ""
        answer({"error": {"type": type(error).__name__, "message": f"{error}{where}"}})
        continue
    try:
        answer({"ok": result})
    except (TypeError, ValueError) as error:
        answer({"error": {"type": "TypeError", "message": f"the result is not JSON-serialisable: {error}"}})
