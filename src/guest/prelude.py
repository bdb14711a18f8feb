# codeact's prelude for the CPython guest, loaded once into the guest's snapshot (see loader.rs).
#
# It defines one function per tool (plain calls and call_tool("name", ...) both reach the
# host's `tools.dispatch` with {"args": [...], "kwargs": {...}} as JSON), maps a host error
# "Type: message" back to that exception type, streams print() output to the host, and
# reports how the program ended — the last expression's repr and JSON value, or the uncaught
# exception with its line and a short traceback — through the `__codeact_report` call, once,
# headed by the run's nonce (the host takes no other report; see bridge.rs).


def __codeact_main(source, tool_names, mcp_functions, nonce, namespace=None):
    # `namespace` is a session's, kept from one program to the next; without one, the program
    # runs in a namespace of its own.
    # Only built-in and frozen modules on the way to success: `ast` and `linecache` would be
    # compiled from source on every run.
    import _ast
    import builtins
    import gc
    import json
    import math
    import sys

    import componentize_py_types as cpt
    from wit_world.imports import tools as host

    # Taken before the program runs, so that replacing them there does not reach the report.
    send = host.dispatch
    dumps = json.dumps
    report_header = nonce + "\n"
    del nonce

    hidden = ("<prelude>", "<string>")
    program = "<program>"
    errors = {
        name: getattr(builtins, name)
        for name in (
            "PermissionError", "FileNotFoundError", "FileExistsError", "IsADirectoryError",
            "NotADirectoryError", "OSError", "ValueError", "TypeError", "KeyError", "IndexError",
            "LookupError", "RuntimeError", "TimeoutError", "NameError", "NotImplementedError",
            "ConnectionError", "MemoryError", "RecursionError", "ZeroDivisionError",
        )
    }

    def jsonable(value):
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8", "replace")
        if isinstance(value, (set, frozenset)):
            return list(value)
        raise TypeError(f"cannot pass a {type(value).__name__} to a tool")

    def dispatch(name, args, kwargs):
        try:
            payload = json.dumps({"args": list(args), "kwargs": kwargs}, default=jsonable)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}(): {exc}") from None
        sys.stdout.flush()
        try:
            return json.loads(host.dispatch(name, payload))
        except cpt.Err as failure:
            kind, sep, message = failure.value.partition(": ")
            if kind == "UnicodeDecodeError":
                raise UnicodeDecodeError("utf-8", b"", 0, 1, message) from None
            raise errors.get(kind, RuntimeError)(message if sep else failure.value) from None

    def call_tool(name, /, *args, **kwargs):
        """Calls the tool `name`: call_tool("view", path="a.py") is view(path="a.py")."""
        return dispatch(name, args, kwargs)

    def tool_function(name):
        def tool(*args, **kwargs):
            return dispatch(name, args, kwargs)

        tool.__name__ = tool.__qualname__ = name
        return tool

    available = ", ".join(tool_names)

    class Builtins(dict):
        # Names the program did not define: MCP `server__tool` functions, else a NameError
        # that lists the tools.
        def __missing__(self, name):
            if mcp_functions and "__" in name.strip("_"):
                return tool_function(name)
            raise NameError(f"name '{name}' is not defined (available tools: {available})", name=name)

    names = Builtins(vars(builtins))
    names["call_tool"] = call_tool
    for name in tool_names:
        names[name] = tool_function(name)

    def to_json(value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value if -(2**63) <= value < 2**63 else str(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8", "replace")
        if isinstance(value, (list, tuple, set, frozenset)):
            return [to_json(item) for item in value]
        if isinstance(value, dict):
            if all(isinstance(key, str) for key in value):
                return {key: to_json(item) for key, item in value.items()}
            return [[to_json(key), to_json(item)] for key, item in value.items()]
        return repr(value)

    def program_line(exc):
        line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == program:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None and isinstance(exc, SyntaxError) and exc.filename == program:
            line = exc.lineno
        return line

    lines = source.splitlines()

    def source_line(filename, line):
        if filename == program:
            return lines[line - 1].strip() if 0 < line <= len(lines) else ""
        import linecache

        return linecache.getline(filename, line).strip()

    def bounded(message, limit=4096):
        # A message of megabytes would cross to the host in full; the host cuts it the same way.
        if len(message) <= limit:
            return message
        cut = len(message) - limit
        return f"{message[: limit // 2]}[… {cut} characters elided …]{message[-(limit // 2) :]}"

    def format_exception(exc):
        out = []
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename not in hidden:
                frames.append((code.co_filename, tb.tb_lineno, code.co_name))
            tb = tb.tb_next
        if frames:
            out.append("Traceback (most recent call last):\n")
            for filename, line, function in frames:
                out.append(f'  File "{filename}", line {line}, in {function}\n')
                text = source_line(filename, line)
                if text:
                    out.append(f"    {text}\n")
        if isinstance(exc, SyntaxError):
            out.append(f'  File "{exc.filename}", line {exc.lineno}\n')
            text = (exc.text or "").rstrip("\n")
            if text:
                stripped = text.lstrip()
                out.append(f"    {stripped}\n")
                if exc.offset:
                    column = max(exc.offset - 1 - (len(text) - len(stripped)), 0)
                    out.append("    " + " " * column + "^\n")
            out.append(f"{type(exc).__name__}: {bounded(str(exc.msg))}\n")
        else:
            message = bounded(str(exc))
            out.append(f"{type(exc).__name__}: {message}\n" if message else f"{type(exc).__name__}\n")
        return "".join(out)

    report = {}
    # Off while the prelude loaded. Its first passes walk the guest's whole initial heap, a few
    # milliseconds: a small program should finish before they are due.
    gc.set_threshold(20_000)
    gc.enable()
    saved = sys.stdout, sys.stderr
    # The interpreter's own streams on fds 1 and 2 (the executor's are in-memory), passing
    # each line to the host as it is printed: what a program printed before it was stopped
    # is kept. Reconfiguring them costs a fraction of making new ones.
    for stream in (sys.__stdout__, sys.__stderr__):
        stream.reconfigure(errors="backslashreplace", line_buffering=True)
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    if namespace is None:
        namespace = {"__name__": "__main__"}
    # The tools are this run's, in a session too.
    namespace["__builtins__"] = names
    try:
        try:
            tree = compile(source, program, "exec", _ast.PyCF_ONLY_AST)
        except SyntaxError as exc:
            exc.__traceback__ = None
            raise
        last = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            last = _ast.Expression(tree.body.pop().value)
        exec(compile(tree, program, "exec"), namespace)
        if last is not None:
            value = eval(compile(last, program, "eval"), namespace)
            if value is not None:
                report["repr"] = repr(value)
                try:
                    report["value"] = dumps(to_json(value))
                except RecursionError:
                    report["value"] = dumps(report["repr"])
    except SystemExit as exc:
        if exc.code not in (None, 0):
            report["error"] = {
                "type": "SystemExit",
                "message": bounded(str(exc.code)),
                "line": program_line(exc),
                "traceback": format_exception(exc),
            }
    except BaseException as exc:  # noqa: BLE001 - every uncaught exception is the program's result
        report["error"] = {
            "type": type(exc).__name__,
            "message": bounded(str(exc.msg if isinstance(exc, SyntaxError) else exc)),
            "line": program_line(exc),
            "traceback": format_exception(exc),
        }
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:  # noqa: BLE001
                pass
        sys.stdout, sys.stderr = saved
    send("__codeact_report", report_header + dumps(report))
