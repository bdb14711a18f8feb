#!/usr/bin/env python3
# codeact's token-economy benchmark: the real Copilot CLI against a scripted model server,
# over a few everyday questions about a small repository, each asked several ways ("arms"):
# plain direct tool calls, parallel batches, the fewest direct calls, one codeact program, the
# codeact agent, and the nudge and exclusive hook modes; and one question that needs three of
# the user's own MCP servers, configured for the CLI or behind codeact; and a follow-up question
# on the same files in one session, with codeact's MCP sessions and without. It counts the model
# requests, the o200k_base tokens the CLI sends, checks every final answer against ground truth
# computed from the files, and splits the per-request "tax" codeact adds into its parts. Prints
# one Markdown report and writes it, with all data, to <work-dir>/economy.md and economy.json.
#
# How a run goes: a fresh HOME and workspace (a generated git repository, the same every time),
# the plugin installed from this repository as a marketplace where the arm needs it, `codeact
# install` through the plugin's launcher, then `copilot -p PROMPT` with the model pointed at a
# server of our own on 127.0.0.1. That server plays the model: a scripted policy per scenario
# and arm that reads the tool results the CLI sends back and builds its final answer only from
# them, so a tool path that breaks shows up as a wrong answer. codeact is reachable only
# through CODEACT_BIN (never PATH), and the codeact command a program runs with is taken from
# what the CLI sent, never written here. Every run happens in one directory (economy-runs/live)
# so that paths weigh the same in every arm, and is then kept as economy-runs/SCENARIO--ARM--N
# with every request it logged.
#
# Python 3.11, standard library only. Started by bench/economy, which builds what it needs.
"""codeact token-economy benchmark (see bench/economy --help)."""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generator

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MODEL = "gpt-4.1"
CLI_TIMEOUT_S = 120


def log(message: str) -> None:
    print(f"economy: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the workspace

APP_TODO_LINES = (8, 22, 54, 72, 89)
APP_LINES = 100

APP_TODOS = (
    "# TODO: read the port from the environment",
    "# TODO: validate the user name",
    "# TODO: retry when the store is busy",
    "# TODO: paginate the listing",
    "# TODO: flush the log before exit",
)

APP_HEAD = '''\
"""The fixture application: a tiny user store with a command-line front end."""
import os
import sys

from models import User, Store
from utils import slugify, clamp

DEFAULT_PORT = 8080
DEFAULT_HOST = "127.0.0.1"


def port_from_env():
    """The port to listen on."""
    value = os.environ.get("APP_PORT", "")
    if not value.isdigit():
        return DEFAULT_PORT
    return clamp(int(value), 1, 65535)


def make_user(name, email):
    """A new user with a slug made from the name."""
    user = User(name, email)
    user.slug = slugify(name)
    return user
'''

# Small functions appended until the file nearly has its length; the main block ends it.
APP_FILLERS = (
    ("load_store", "path", "Store(path)", "result.load()"),
    ("save_store", "store", "store", "store.save()"),
    ("add_user", "store", "make_user('guest', 'guest@example.com')", "store.add(result)"),
    ("list_users", "store", "sorted(store.users, key=lambda u: u.name)", "print(len(result))"),
    ("find_user", "store", "store.find('guest')", "print(result)"),
    ("remove_user", "store", "store.remove('guest')", "print(result)"),
    ("count_users", "store", "len(store.users)", "print(result)"),
    ("export_users", "store", "[u.to_dict() for u in store.users]", "print(len(result))"),
    ("rename_user", "store", "store.find('guest')", "print(result)"),
    ("check_store", "store", "store.is_valid()", "print(result)"),
)

APP_TAIL = '''\

def main(argv):
    """Entry point."""
    store = load_store(os.getcwd())
    print(port_from_env(), len(argv))
    return count_users(store)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''


def app_source() -> str:
    """src/app.py: exactly APP_LINES lines, the TODO comments on APP_TODO_LINES."""
    lines = APP_HEAD.splitlines()
    tail = APP_TAIL.splitlines()
    fillers = iter(APP_FILLERS)
    while len(lines) + len(tail) + len(APP_TODOS) < APP_LINES:
        name, arg, value, effect = next(fillers)
        block = ["", "", f"def {name}({arg}):", f'    """{name.replace("_", " ").capitalize()}."""',
                 f"    result = {value}", f"    {effect}", "    return result"]
        room = APP_LINES - len(APP_TODOS) - len(tail) - len(lines)
        lines += block[:room] if room < len(block) else block
    lines += tail
    # Comment lines may stand anywhere; indent each like the line it lands before.
    for number, comment in zip(APP_TODO_LINES, APP_TODOS):
        after = lines[number - 1] if number - 1 < len(lines) else ""
        indent = after[: len(after) - len(after.lstrip())]
        lines.insert(number - 1, indent + comment)
    assert len(lines) == APP_LINES, len(lines)
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text


UTILS_PY = '''\
"""Small helpers shared by the application (no file-system access here)."""
import re
import json

SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(text):
    """Lower-case text with runs of other characters made single dashes."""
    return SLUG_RE.sub("-", text.lower()).strip("-")


def clamp(value, low, high):
    """value limited to [low, high]."""
    return max(low, min(high, value))


def chunks(items, size):
    """items in lists of at most size."""
    return [items[i:i + size] for i in range(0, len(items), size)]


def to_json(value):
    """Compact, sorted JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
'''

MODELS_PY = '''\
"""The data the application stores."""
from dataclasses import dataclass, field


@dataclass
class User:
    """One user of the store."""

    name: str
    email: str
    slug: str = ""

    def to_dict(self):
        return {"name": self.name, "email": self.email, "slug": self.slug}

    def domain(self):
        return self.email.rsplit("@", 1)[-1]


class Store:
    """Users kept in memory, loaded from and saved to one path."""

    def __init__(self, path):
        self.path = path
        self.users = []

    def load(self):
        return self.users

    def save(self):
        return len(self.users)

    def add(self, user):
        self.users.append(user)

    def find(self, name):
        for user in self.users:
            if user.name == name:
                return user
        return None

    def remove(self, name):
        self.users = [u for u in self.users if u.name != name]

    def is_valid(self):
        return all(u.email for u in self.users)


@dataclass
class Settings:
    """What config/settings.json holds."""

    host: str = "127.0.0.1"
    port: int = 8080
    debug: bool = False
    tags: list = field(default_factory=list)
'''

API_PY = '''\
"""The HTTP routes of the application."""
import json
from os import path

from models import Store

ROUTES = {}


def route(name):
    """Register a handler under name."""
    def register(handler):
        ROUTES[name] = handler
        return handler
    return register


@route("/users")
def list_users(store):
    return json.dumps([u.to_dict() for u in store.users])


@route("/health")
def health(store):
    return json.dumps({"ok": path.exists(store.path)})


def dispatch(name, store):
    handler = ROUTES.get(name)
    if handler is None:
        return json.dumps({"error": "no route " + name})
    return handler(store)
'''

CONFIG_PY = '''\
"""Reads the JSON configuration under config/."""
import os
import json

CONFIG_DIR = os.path.join(os.path.dirname(__file__), "..", "config")


class ConfigError(Exception):
    """A configuration file is missing or invalid."""


def load(name):
    """The parsed contents of config/<name>.json."""
    with open(os.path.join(CONFIG_DIR, name + ".json"), encoding="utf-8") as handle:
        try:
            return json.load(handle)
        except ValueError as err:
            raise ConfigError(name + ": " + str(err)) from err


def database_url():
    db = load("database")
    return "postgres://" + db["host"] + ":" + str(db["port"]) + "/" + db["name"]
'''

SETTINGS_JSON = '''\
{
  "host": "127.0.0.1",
  "port": 8080,
  "debug": false,
  "tags": ["fixture", "demo"]
}
'''

DATABASE_JSON = '''\
{
  "host": "db.internal",
  "port": 5432,
  "name": "users",
  "pool": {"min": 1, "max": 8}
}
'''

BROKEN_JSON = '''\
{
  "feature_flags": {
    "new_ui": true,
    "beta_api": false,
  },
  "owner": "platform"
}
'''

TEST_APP_PY = '''\
"""Tests of src/app.py."""
import app


def test_make_user_sets_the_slug():
    user = app.make_user("Ada Lovelace", "ada@example.com")
    assert user.slug == "ada-lovelace"


def test_port_defaults_to_8080(monkeypatch):
    monkeypatch.delenv("APP_PORT", raising=False)
    assert app.port_from_env() == 8080
'''

TEST_UTILS_PY = '''\
"""Tests of src/utils.py."""
from utils import chunks, clamp, slugify


def test_slugify():
    assert slugify("Hello, World") == "hello-world"


def test_clamp():
    assert clamp(5, 1, 3) == 3


def test_chunks():
    assert chunks([1, 2, 3], 2) == [[1, 2], [3]]
'''

README_MD = '''\
# Fixture project

This project is a fixture for codeact's token-economy benchmark: a tiny user store with a
command-line front end and two HTTP routes. It has five TODO comments in its sources.

- `src/` holds the application: `app.py`, `api.py`, `config.py`, `models.py`, `utils.py`.
- `config/` holds its JSON settings.
- `tests/` holds its tests; run them with `pytest`.
'''


def workspace_files() -> dict[str, str]:
    return {
        "src/app.py": app_source(),
        "src/utils.py": UTILS_PY,
        "src/models.py": MODELS_PY,
        "src/api.py": API_PY,
        "src/config.py": CONFIG_PY,
        "config/settings.json": SETTINGS_JSON,
        "config/database.json": DATABASE_JSON,
        "config/broken.json": BROKEN_JSON,
        "tests/test_app.py": TEST_APP_PY,
        "tests/test_utils.py": TEST_UTILS_PY,
        "README.md": README_MD,
    }


def make_workspace(root: Path) -> None:
    """The fixture repository at root (a fresh git repository, nothing committed)."""
    for rel, text in workspace_files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


# --------------------------------------------------------------------------- the model server


@dataclass
class Turn:
    """One scripted model turn: tool calls (a parallel batch when several), or a final answer."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str | None = None


def call(name: str, **args: Any) -> Turn:
    return Turn(calls=[(name, args)])


def batch(*calls: tuple[str, dict[str, Any]]) -> Turn:
    return Turn(calls=list(calls))


def say(text: str) -> Turn:
    return Turn(text=text)


# A policy is a generator: it yields turns and is sent, after each turn of calls, the text of
# every result in call order. It reads what the CLI sent (system prompt, context) from ctx.
Policy = Callable[["Context"], Generator[Turn, list[str], None]]


@dataclass
class Context:
    """What a policy knows: the workspace and the request it is answering."""

    workspace: Path
    request: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # what the policy saw, for the report


def text_of(content: Any) -> str:
    """A message content as text, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def is_turn(body: Any) -> bool:
    """Whether a request asks for a model turn: only those offer tools."""
    return isinstance(body, dict) and isinstance(body.get("tools"), list)


class ModelServer:
    """OpenAI chat completions over server-sent events on 127.0.0.1, answering each model turn
    with the next turn of a policy. Records every request."""

    def __init__(self, policy: Policy, ctx: Context) -> None:
        self.policy, self.ctx = policy, ctx
        self.gen: Generator[Turn, list[str], None] | None = None
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # {"body", "bytes", "turn"}
        self.answers: list[Turn] = []  # the turn sent for each model turn, in order
        self.errors: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
                self.reply(200, "application/json", json.dumps(models).encode())

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                turn, index = server.answer(body, len(raw))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(sse(turn, index))
                self.wfile.flush()
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def turns(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["turn"]]

    def answer(self, body: Any, size: int) -> tuple[Turn, int]:
        """The turn for one request, and its index among the model turns (0 for others)."""
        with self.lock:
            turn_request = is_turn(body)
            self.requests.append({"body": body, "bytes": size, "turn": turn_request})
            if not turn_request:
                return say("ok"), 0
            messages = body.get("messages") or []
            done = sum(1 for m in messages if m.get("role") == "assistant")
            if done < len(self.answers):  # a retry of a turn already answered
                return self.answers[done], done
            self.ctx.request = body
            self.ctx.notes["turn_request"] = sum(1 for r in self.requests if r["turn"]) - 1
            try:
                if self.gen is None:
                    self.gen = self.policy(self.ctx)
                    turn = next(self.gen)
                else:
                    turn = self.gen.send(self.results(messages))
            except StopIteration:
                turn = say("(the policy ended without an answer)")
                self.errors.append("the policy ended without an answer")
            except Exception as err:  # noqa: BLE001 - a policy failure becomes a wrong answer
                turn = say(f"(the policy failed: {type(err).__name__}: {err})")
                self.errors.append(f"{type(err).__name__}: {err}")
            self.answers.append(turn)
            return turn, done

    def results(self, messages: list[dict[str, Any]]) -> list[str]:
        """The results of the last turn's calls, in call order."""
        last = self.answers[-1]
        ids = [f"call_{len(self.answers) - 1}_{i}" for i in range(len(last.calls))]
        by_id = {m.get("tool_call_id"): text_of(m.get("content")) for m in messages if m.get("role") == "tool"}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise RuntimeError(f"the CLI sent no result for {', '.join(missing)}")
        return [by_id[i] for i in ids]

    def final_answer(self) -> str:
        """The last text the model sent."""
        texts = [t.text for t in self.answers if t.text is not None]
        return texts[-1] if texts else ""


def sse(turn: Turn, index: int) -> bytes:
    """The streamed chat-completions answer for one turn; index names its calls."""
    def chunk(choices: list[Any], **extra: Any) -> str:
        event = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": MODEL, "choices": choices}
        event.update(extra)
        return f"data: {json.dumps(event)}\n\n"

    events = [chunk([{"index": 0, "delta": {"role": "assistant"}}])]
    if turn.calls:
        calls = [
            {"index": i, "id": f"call_{index}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args, separators=(",", ":"))}}
            for i, (name, args) in enumerate(turn.calls)
        ]
        events.append(chunk([{"index": 0, "delta": {"tool_calls": calls}}]))
        finish = "tool_calls"
    else:
        events.append(chunk([{"index": 0, "delta": {"content": turn.text or ""}}]))
        finish = "stop"
    events.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    events.append(chunk([], usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}))
    events.append("data: [DONE]\n\n")
    return "".join(events).encode()


# --------------------------------------------------------------------------- running the CLI


@dataclass
class Setup:
    copilot: Path
    codeact: Path
    benchtool: Path
    work_dir: Path
    runs_dir: Path
    cache_dir: Path
    path: str  # PATH for every process: the caller's, less any folder that holds a codeact
    mcp_copies: int = 1  # how many times mcp-servers configures each of its three servers


def clean_path(path: str) -> str:
    """PATH without the folders that hold a `codeact`: only CODEACT_BIN may lead to it."""
    dirs = [d for d in path.split(os.pathsep) if d and not (Path(d) / "codeact").exists()]
    return os.pathsep.join(dict.fromkeys(dirs))


def base_env(setup: Setup, home: Path) -> dict[str, str]:
    """A clean environment for one run: nothing of the caller's CODEACT_* or COPILOT_*."""
    return {
        "PATH": setup.path,
        "HOME": str(home),
        "COPILOT_HOME": str(home / ".copilot"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(setup.cache_dir),
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
    }


def run_checked(argv: list[str], env: dict[str, str], cwd: Path, what: str) -> str:
    done = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}): {' '.join(argv)}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def install_plugin(setup: Setup, env: dict[str, str], cwd: Path) -> None:
    """The plugin, installed the way users do: this repository as a marketplace, then
    codeact@codeact from it."""
    run_checked([str(setup.copilot), "plugin", "marketplace", "add", str(REPO_ROOT)], env, cwd, "marketplace add")
    run_checked([str(setup.copilot), "plugin", "install", "codeact@codeact"], env, cwd, "plugin install")


def codeact_install(setup: Setup, env: dict[str, str], cwd: Path) -> str:
    """`codeact install` in the workspace through the plugin's launcher, as its install skill runs it
    (without fetching the CPython guest: the scenarios are all Monty's, and every run would download it)."""
    launcher = REPO_ROOT / "plugin" / "bin" / "codeact"
    return run_checked(["sh", str(launcher), "install", "--no-guest"], {**env, "CODEACT_BIN": str(setup.codeact)}, cwd,
                       "codeact install")


def serving_with(setup: Setup, folder: Path, serve_args: list[str]) -> Path:
    """A CODEACT_BIN that runs setup.codeact, adding serve_args to `mcp serve`: how the plugin's
    MCP server (whose command this repository's plugin/.mcp.json fixes) gets other flags."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "codeact"
    real, extra = shlex.quote(str(setup.codeact)), " ".join(map(shlex.quote, serve_args))
    wrapper.write_text("#!/bin/sh\n"
                       'if [ "${1-}" = mcp ] && [ "${2-}" = serve ]; then\n'
                       f'    shift 2\n    exec {real} mcp serve {extra} "$@"\nfi\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def run_cli(setup: Setup, run_dir: Path, prompt: str, policy: Policy, *, plugin: bool, install: bool,
            extra_env: dict[str, str], extra_args: list[str], servers: str = "", serve_args: list[str] | None = None
            ) -> tuple[ModelServer, int | None, float, str, Context]:
    """One non-interactive prompt in a fresh HOME and workspace, answered by policy. servers
    says where the user's MCP servers go: "codeact" behind codeact, before `codeact install`
    renders its reference; "agent" in the CLI's own config, after it, so that the reference
    names none of them. serve_args are added to the plugin's `codeact mcp serve`."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    workspace, home = run_dir / "ws", run_dir / "home"
    workspace.mkdir(parents=True)
    home.mkdir()
    make_workspace(workspace)
    env = base_env(setup, home)
    ctx = Context(workspace=workspace)
    if servers == "codeact":
        ctx.notes["servers_setup"] = serve_behind_codeact(setup, env, workspace, home)
    if plugin:
        install_plugin(setup, env, workspace)
    if install:
        codeact_install(setup, {**env, **extra_env}, workspace)
    if servers == "agent":
        add_servers(Path(env["COPILOT_HOME"]) / "mcp-config.json", mcp_servers(workspace, home, setup.mcp_copies))
        ctx.notes["servers_setup"] = "the CLI's `$COPILOT_HOME/mcp-config.json`"
    env = {**env, "CODEACT_BIN": str(setup.codeact), "COPILOT_MODEL": MODEL, **extra_env}
    if serve_args:
        env["CODEACT_BIN"] = str(serving_with(setup, run_dir / "bin", serve_args))
        ctx.notes["serve_args"] = serve_args
    with ModelServer(policy, ctx) as server:
        env["COPILOT_PROVIDER_BASE_URL"] = server.base_url
        argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), str(setup.copilot), "-p", prompt,
                "--output-format", "json", "--allow-all-tools", "--allow-all-paths", *extra_args]
        start = time.monotonic()
        with open(run_dir / "cli.stdout", "wb") as out, open(run_dir / "cli.stderr", "wb") as err:
            proc = subprocess.Popen(argv, cwd=workspace, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
            try:
                returncode: int | None = proc.wait(timeout=CLI_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                returncode = None
        elapsed = time.monotonic() - start
    stderr = (run_dir / "cli.stderr").read_text(errors="replace")
    return server, returncode, elapsed, stderr[-2000:], ctx


# --------------------------------------------------------------------------- reading what the CLI sends

DENIED = "Denied by preToolUse hook:"
ADVICE_RE = re.compile(r"\n*Tool \"[^\"]*\" succeeded\. Additional guidance from postToolUse hooks:\n")
SHELL_TRAILER_RE = re.compile(r"\n?<shellId: [^>]*? completed with exit code (-?\d+)>\s*$")
NUMBERED_RE = re.compile(r"^\s*(\d+)[.:|\u2192]\s?(.*)$")


@dataclass
class Result:
    """A tool result as the model reads it: its text, the hook advice after it, a deny."""

    text: str
    advice: str | None = None
    denied: bool = False
    exit_code: int | None = None  # bash results only


def read_result(raw: str) -> Result:
    """Split a tool result into its text and a postToolUse hook's advice; recognise a deny and
    the exit-code trailer the CLI adds to a bash result."""
    if raw.startswith(DENIED):
        return Result(text=raw, denied=True)
    advice = None
    found = ADVICE_RE.search(raw)
    if found:
        raw, advice = raw[: found.start()], raw[found.end():]
    exit_code = None
    trailer = SHELL_TRAILER_RE.search(raw)
    if trailer:
        raw, exit_code = raw[: trailer.start()], int(trailer.group(1))
    return Result(text=raw, advice=advice, exit_code=exit_code)


def file_text(view_result: str) -> str:
    """A file's text from a view result, without line-number prefixes where the CLI adds them."""
    lines = view_result.splitlines()
    numbered = [NUMBERED_RE.match(line) for line in lines if line.strip()]
    if numbered and all(numbered):
        first = int(numbered[0].group(1))  # type: ignore[union-attr]
        if [int(m.group(1)) for m in numbered] == list(range(first, first + len(numbered))):  # type: ignore[union-attr]
            return "\n".join(m.group(2) for m in numbered) + "\n"  # type: ignore[union-attr]
    return view_result


def workspace_of(request: dict[str, Any], fallback: Path) -> str:
    """The working directory the system prompt names (the model learns it there)."""
    for message in request.get("messages") or []:
        found = re.search(r"Current working directory: (\S+)", text_of(message.get("content")))
        if found:
            return found.group(1)
    return str(fallback)


def relative(path: str, workspace: str) -> str:
    """A path as the report writes it: relative to the workspace, no leading ./"""
    path = path.strip()
    if path.startswith(workspace.rstrip("/") + "/"):
        path = path[len(workspace.rstrip("/")) + 1:]
    while path.startswith("./"):
        path = path[2:]
    return path


def paths_of(listing: str, workspace: str) -> list[str]:
    """The paths of a glob result (or a program's printed paths), sorted."""
    return sorted(relative(line, workspace) for line in listing.splitlines()
                  if line.strip() and not line.startswith("No files"))


def instructed_command(request: dict[str, Any]) -> str | None:
    """The codeact command line a request's instructions teach: in a ```bash block, the line
    that opens a <<'PY' here-document, up to that marker."""
    for message in request.get("messages") or []:
        text = text_of(message.get("content"))
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.splitlines():
                if line.rstrip().endswith("<<'PY'"):
                    return line[: line.rindex("<<'PY'")].rstrip()
    return None


MCP_RUN = "codeact-run"  # codeact's MCP `run` tool, as Copilot CLI names it (server `codeact`)
MCP_ERROR = "MCP server 'codeact':"  # how the CLI opens an error result of that server


def suggested_call(deny: str) -> tuple[str, dict[str, Any]] | None:
    """The call a hook's suggestion asks for, as it stands: its fenced program for codeact's
    MCP `run` tool, or its whole `… <<'PY'` … `PY` command for bash."""
    if "codeact's `run` tool" in deny:
        found = re.search(r"```python\n(.*?)\n```", deny, re.S)
        return None if found is None else (MCP_RUN, {"code": found.group(1)})
    lines = deny.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith("<<'PY'")), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i] == "PY"), None)
    if end is None:
        return None
    return ("bash", {"command": "\n".join(lines[start: end + 1]), "description": "Run the suggested codeact program"})


def teaches_mcp(request: dict[str, Any]) -> bool:
    """Whether a request's instructions teach codeact's MCP `run` tool."""
    return any("codeact's `run` tool" in text_of(m.get("content")) for m in request.get("messages") or [])


# --------------------------------------------------------------------------- the scripted model's moves

Moves = Generator[Turn, list[str], Any]


def note(ctx: Context, **event: Any) -> None:
    ctx.notes.setdefault("events", []).append(event)


def settle(ctx: Context, name: str, raw: str) -> Moves:
    """The text of one direct call's result. A deny is answered as the hook asks: its
    suggested command runs through bash, as it stands, and its output stands for the result."""
    result = read_result(raw)
    note(ctx, tool=name, denied=result.denied, advice=result.advice)
    if not result.denied:
        return result.text
    suggested = suggested_call(result.text)
    if suggested is None:
        raise RuntimeError(f"{name} was denied without a program to run instead: {result.text[:300]!r}")
    tool, args = suggested
    followed = read_result((yield call(tool, **args))[0])
    failed = followed.exit_code != 0 if tool == "bash" else followed.text.startswith(MCP_ERROR)
    note(ctx, tool=tool, followed=True, denied=followed.denied, advice=followed.advice,
         exit_code=1 if failed else 0, suggestion=args.get("command") or args.get("code"))
    if followed.denied or failed:
        raise RuntimeError(f"the suggested program failed: {followed.text[:500]!r}")
    return followed.text


def direct(ctx: Context, name: str, **args: Any) -> Moves:
    """One direct tool call in its own turn."""
    raw = (yield call(name, **args))[0]
    return (yield from settle(ctx, name, raw))


def direct_batch(ctx: Context, calls: list[tuple[str, dict[str, Any]]]) -> Moves:
    """Direct tool calls in one turn (a parallel batch)."""
    raws = yield batch(*calls)
    texts = []
    for (name, _), raw in zip(calls, raws):
        texts.append((yield from settle(ctx, name, raw)))
    return texts


def codeact(ctx: Context, program: str, session: str | None = None) -> Moves:
    """One codeact program, the way the instructions in the first request teach: through
    bash with their command (with `--session NAME` when session is given), or through codeact's
    MCP `run` tool."""
    first = ctx.notes["first_request"]
    command = instructed_command(first)
    if command is None and not teaches_mcp(first):
        raise RuntimeError("the first request teaches no way to run codeact (no ```bash line ending in <<'PY', "
                           "no `run` tool)")
    if command is None:
        ctx.notes["codeact_command"] = MCP_RUN
        result = read_result((yield call(MCP_RUN, code=program))[0])
        failed = result.text.startswith(MCP_ERROR)
        exit_code = 1 if failed else 0
    else:
        if session is not None:
            command += f" --session {session}"
        ctx.notes["codeact_command"] = command
        raw = (yield call("bash", command=f"{command} <<'PY'\n{program}\nPY", description="Run a codeact program"))[0]
        result = read_result(raw)
        exit_code = result.exit_code
        failed = exit_code != 0
    note(ctx, tool="bash" if command else MCP_RUN, codeact=True, denied=result.denied, advice=result.advice,
         exit_code=exit_code)
    ctx.notes.setdefault("codeact_exit_codes", []).append(-1 if result.denied else exit_code)
    if result.denied or failed:
        raise RuntimeError(f"the codeact program failed (exit {exit_code}): {result.text[:500]!r}")
    return result.text


def read_files(ctx: Context, pattern: str, parallel: bool) -> Moves:
    """glob, then view every file it found: one per turn, or all in one turn."""
    ws = workspace_of(ctx.request, ctx.workspace)
    files = paths_of((yield from direct(ctx, "glob", pattern=pattern)), ws)
    if not files:
        raise RuntimeError(f"glob {pattern!r} found nothing")
    views = [("view", {"path": f"{ws}/{rel}"}) for rel in files]
    if parallel:
        texts = yield from direct_batch(ctx, views)
    else:
        texts = []
        for name, args in views:
            texts.append((yield from direct(ctx, name, **args)))
    return {rel: file_text(text) for rel, text in zip(files, texts)}


def with_first_request(policy: Callable[[Context], Moves]) -> Policy:
    """A policy that keeps the first request it answers in ctx.notes["first_request"]."""
    def run(ctx: Context) -> Generator[Turn, list[str], None]:
        ctx.notes["first_request"] = ctx.request
        answer = yield from policy(ctx)
        yield say(answer)
    return run


# --------------------------------------------------------------------------- scenarios

# Answers are written in one plain format per scenario, built only from the tool results the
# model read; the harness parses them back and compares them with the ground truth.

TODO_LINE_RE = re.compile(r"^(.*?):(\d+):(.*)$")
COUNT_LINE_RE = re.compile(r"^(.*?):(\d+)$")
STATS_RE = re.compile(r"(\S+\.py): (\d+) functions, (\d+) classes, (\d+) lines")
JSON_RE = re.compile(r"(\S+\.json): (valid|invalid)")
DEF_RE = re.compile(r"^\s*def ")
CLASS_RE = re.compile(r"^\s*class ")
IMPORTS_OS_RE = re.compile(r"^\s*(import os\b|from os[ .])")

# The same searches in the forms grep (ripgrep) and a codeact program take.
DEF_PATTERN, CLASS_PATTERN, IMPORTS_OS_PATTERN = DEF_RE.pattern, CLASS_RE.pattern, IMPORTS_OS_RE.pattern


def src_files(root: Path) -> list[Path]:
    return sorted((root / "src").glob("*.py"))


# find-todos

def todos_truth(root: Path) -> list[list[Any]]:
    return [[f"src/{p.name}", n] for p in src_files(root)
            for n, line in enumerate(p.read_text().splitlines(), 1) if "TODO" in line]


def todos_answer(todos: list[tuple[str, int, str]]) -> str:
    lines = [f"- {path}:{line}: {text.strip()}" for path, line, text in sorted(todos)]
    return f"Found {len(lines)} TODO comments in src/:\n" + "\n".join(lines)


def todos_check(answer: str, truth: list[list[Any]]) -> tuple[bool, Any]:
    found = sorted([m.group(1).lstrip("- ").strip(), int(m.group(2))]
                   for m in map(TODO_LINE_RE.match, answer.splitlines()) if m)
    return found == sorted(truth), found


def todos_from_grep(ctx: Context, output: str) -> list[tuple[str, int, str]]:
    ws = workspace_of(ctx.request, ctx.workspace)
    return [(relative(m.group(1), ws), int(m.group(2)), m.group(3))
            for m in map(TODO_LINE_RE.match, output.splitlines()) if m]


def todos_from_files(files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(rel, n, line) for rel, text in files.items()
            for n, line in enumerate(text.splitlines(), 1) if "TODO" in line]


TODOS_PROGRAM = """\
for m in grep(pattern="TODO", paths="src", glob="*.py"):
    print(m["path"] + ":" + str(m["line"]) + ":" + m["text"])"""


def todos_baseline(parallel: bool) -> Callable[[Context], Moves]:
    def policy(ctx: Context) -> Moves:
        return todos_answer(todos_from_files((yield from read_files(ctx, "src/*.py", parallel))))
    return policy


def todos_smart(ctx: Context) -> Moves:
    output = yield from direct(ctx, "grep", pattern="TODO", paths="src", glob="*.py", output_mode="content",
                               **{"-n": True})
    return todos_answer(todos_from_grep(ctx, output))


def todos_codeact(ctx: Context) -> Moves:
    return todos_answer(todos_from_grep(ctx, (yield from codeact(ctx, TODOS_PROGRAM))))


def todos_nudge_grep(ctx: Context) -> Moves:
    """Looks around first (read-only rounds), then searches: the search is what gets denied."""
    ws = workspace_of(ctx.request, ctx.workspace)
    for rel in ("src", "config", "README.md"):
        yield from direct(ctx, "view", path=f"{ws}/{rel}")
    return (yield from todos_smart(ctx))


# code-stats

def stats_truth(root: Path) -> dict[str, list[int]]:
    out = {}
    for p in src_files(root):
        text = p.read_text()
        nodes = list(ast.walk(ast.parse(text)))
        out[f"src/{p.name}"] = [sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes),
                                sum(isinstance(n, ast.ClassDef) for n in nodes), len(text.splitlines())]
    return out


def stats_answer(stats: dict[str, list[int]]) -> str:
    return "Per file in src/:\n" + "\n".join(
        f"- {rel}: {d} functions, {c} classes, {n} lines" for rel, (d, c, n) in sorted(stats.items()))


def stats_check(answer: str, truth: dict[str, list[int]]) -> tuple[bool, Any]:
    found = {m.group(1): [int(m.group(2)), int(m.group(3)), int(m.group(4))] for m in STATS_RE.finditer(answer)}
    return found == truth, found


def stats_from_files(files: dict[str, str]) -> dict[str, list[int]]:
    return {rel: [sum(1 for line in text.splitlines() if DEF_RE.match(line)),
                  sum(1 for line in text.splitlines() if CLASS_RE.match(line)), len(text.splitlines())]
            for rel, text in files.items()}


def counts_from_grep(ctx: Context, output: str) -> dict[str, int]:
    """A grep count result: `path:count` lines (files without a match are left out)."""
    ws = workspace_of(ctx.request, ctx.workspace)
    return {relative(m.group(1), ws): int(m.group(2)) for m in map(COUNT_LINE_RE.match, output.splitlines()) if m}


STATS_PROGRAM = f"""\
import re
for path in sorted(glob(pattern="src/*.py")):
    lines = view(path=path).splitlines()
    defs = len([l for l in lines if re.match(r"{DEF_PATTERN}", l)])
    classes = len([l for l in lines if re.match(r"{CLASS_PATTERN}", l)])
    print(f"{{path}}: {{defs}} functions, {{classes}} classes, {{len(lines)}} lines")"""


def stats_baseline(parallel: bool) -> Callable[[Context], Moves]:
    def policy(ctx: Context) -> Moves:
        return stats_answer(stats_from_files((yield from read_files(ctx, "src/*.py", parallel))))
    return policy


def stats_smart(ctx: Context) -> Moves:
    counts = []
    for pattern in (DEF_PATTERN, CLASS_PATTERN, "^"):
        output = yield from direct(ctx, "grep", pattern=pattern, paths="src", glob="*.py", output_mode="count")
        counts.append(counts_from_grep(ctx, output))
    defs, classes, lines = counts
    return stats_answer({rel: [defs.get(rel, 0), classes.get(rel, 0), n] for rel, n in lines.items()})


def stats_codeact(ctx: Context) -> Moves:
    ws = workspace_of(ctx.request, ctx.workspace)
    output = yield from codeact(ctx, STATS_PROGRAM)
    return stats_answer({relative(m.group(1), ws): [int(m.group(2)), int(m.group(3)), int(m.group(4))]
                         for m in STATS_RE.finditer(output)})


# imports-os

def imports_truth(root: Path) -> list[str]:
    def imports_os(node: ast.AST) -> bool:
        if isinstance(node, ast.Import):
            return any(a.name == "os" or a.name.startswith("os.") for a in node.names)
        return isinstance(node, ast.ImportFrom) and (node.module == "os" or (node.module or "").startswith("os."))
    return [f"src/{p.name}" for p in src_files(root) if any(map(imports_os, ast.walk(ast.parse(p.read_text()))))]


def imports_answer(files: list[str]) -> str:
    return "Files in src/ that import os:\n" + "\n".join(f"- {rel}" for rel in sorted(set(files)))


def imports_check(answer: str, truth: list[str]) -> tuple[bool, Any]:
    found = sorted(re.findall(r"^- (\S+\.py)$", answer, re.M))
    return found == sorted(truth), found


IMPORTS_PROGRAM = f"""\
for path in sorted({{m["path"] for m in grep(pattern=r"{IMPORTS_OS_PATTERN}", paths="src", glob="*.py")}}):
    print(path)"""


def imports_baseline(parallel: bool) -> Callable[[Context], Moves]:
    def policy(ctx: Context) -> Moves:
        files = yield from read_files(ctx, "src/*.py", parallel)
        return imports_answer([rel for rel, text in files.items()
                               if any(IMPORTS_OS_RE.match(line) for line in text.splitlines())])
    return policy


def imports_smart(ctx: Context) -> Moves:
    ws = workspace_of(ctx.request, ctx.workspace)
    output = yield from direct(ctx, "grep", pattern=IMPORTS_OS_PATTERN, paths="src", glob="*.py",
                               output_mode="files_with_matches")
    return imports_answer(paths_of(output, ws))


def imports_codeact(ctx: Context) -> Moves:
    ws = workspace_of(ctx.request, ctx.workspace)
    return imports_answer(paths_of((yield from codeact(ctx, IMPORTS_PROGRAM)), ws))


# json-validate

def json_truth(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted((root / "config").glob("*.json")):
        try:
            json.loads(p.read_text())
            out[f"config/{p.name}"] = "valid"
        except ValueError:
            out[f"config/{p.name}"] = "invalid"
    return out


def json_answer(verdicts: dict[str, str]) -> str:
    return "JSON files in config/:\n" + "\n".join(f"- {rel}: {v}" for rel, v in sorted(verdicts.items()))


def json_check(answer: str, truth: dict[str, str]) -> tuple[bool, Any]:
    found = {m.group(1): m.group(2) for m in JSON_RE.finditer(answer)}
    return found == truth, found


def json_verdicts(files: dict[str, str]) -> dict[str, str]:
    out = {}
    for rel, text in files.items():
        try:
            json.loads(text)
            out[rel] = "valid"
        except ValueError as err:
            out[rel] = f"invalid ({err})"
    return out


JSON_PROGRAM = """\
import json
for path in sorted(glob(pattern="config/*.json")):
    try:
        json.loads(view(path=path))
        print(path + ": valid")
    except ValueError as err:
        print(path + ": invalid (" + str(err) + ")")"""


def json_baseline(parallel: bool) -> Callable[[Context], Moves]:
    def policy(ctx: Context) -> Moves:
        return json_answer(json_verdicts((yield from read_files(ctx, "config/*.json", parallel))))
    return policy


def json_codeact(ctx: Context) -> Moves:
    ws = workspace_of(ctx.request, ctx.workspace)
    output = yield from codeact(ctx, JSON_PROGRAM)
    return json_answer({relative(m.group(1), ws): line[m.end(1) + 2:]
                        for line in output.splitlines() for m in [JSON_RE.match(line)] if m})


# single-file

def readme_truth(root: Path) -> str:
    return (root / "README.md").read_text()


def readme_answer(text: str) -> str:
    return "README.md says:\n\n" + text.strip()


def readme_check(answer: str, truth: str) -> tuple[bool, Any]:
    return truth.strip() in answer, answer.splitlines()[2] if len(answer.splitlines()) > 2 else answer


def readme_direct(ctx: Context) -> Moves:
    ws = workspace_of(ctx.request, ctx.workspace)
    return readme_answer(file_text((yield from direct(ctx, "view", path=f"{ws}/README.md"))))


# mcp-servers: the user's own MCP servers (three of the reference servers, pinned in tests/e2e),
# either configured for the CLI itself, which then offers every tool's schema on every request,
# or behind codeact, whose reference names them and programs call them. The question needs all
# three: files read through the filesystem server, stored as entities in the memory server and
# read back from it, and two numbers added by the everything server's get-sum.

MCP_SERVER_NAMES = ("everything", "filesystem", "memory")
MCP_MODULES = REPO_ROOT / "tests" / "e2e" / "node_modules" / "@modelcontextprotocol"
MCP_CONFIG_FILES = ("config/settings.json", "config/database.json")
GRAPH_LINE_RE = re.compile(r"^- (\S+) \(([^)]*)\): (.*)$", re.M)
PORT_SUM_RE = re.compile(r"The ports add up to (-?\d+)")
NO_SERVERS = "No MCP server named everything, filesystem or memory is configured here."
# The reference's list of MCP servers: "- `name`: sig, sig, +N more".
REFERENCE_SERVER_RE = re.compile(r"^- `([A-Za-z0-9_.-]+)`: (.*)$", re.M)
SIGNATURE_RE = re.compile(r"^([A-Za-z_]\w*)\((.*)\)$")
MORE_RE = re.compile(r"^\+(\d+) more$")


def mcp_servers(workspace: Path, state: Path, copies: int = 1) -> dict[str, dict[str, Any]]:
    """The three servers as a user configures them for the CLI (`mcpServers` entries): node
    runs each package's entry point; the filesystem server may reach the workspace only, and the
    memory server keeps its graph in state (never in node_modules). With copies > 1, each is
    configured that many times, the others under names of their own (`everything2`, …) that the
    question never needs: only the number of tools grows."""
    def server(package: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "local", "command": "node",
                                 "args": [str(MCP_MODULES / package / "dist" / "index.js"), *args], "tools": ["*"]}
        if env:
            entry["env"] = env
        return entry
    out = {}
    for copy in range(1, copies + 1):
        suffix = "" if copy == 1 else str(copy)
        out |= {
            f"everything{suffix}": server("server-everything", "stdio"),
            f"filesystem{suffix}": server("server-filesystem", str(workspace)),
            f"memory{suffix}": server("server-memory", env={"MEMORY_FILE_PATH": str(state / f"memory{suffix}.jsonl")}),
        }
    return out


def add_servers(path: Path, servers: dict[str, dict[str, Any]]) -> None:
    """servers added to an `mcpServers` file, what it already holds kept."""
    config = json.loads(path.read_text()) if path.exists() else {}
    config.setdefault("mcpServers", {}).update(servers)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")


def has_gateway(setup: Setup, env: dict[str, str], cwd: Path) -> bool:
    """Whether this codeact can move an agent's servers behind itself (`setup --gateway`)."""
    return "--gateway" in run_checked([str(setup.codeact), "setup", "--help"], env, cwd, "codeact setup --help")


def serve_behind_codeact(setup: Setup, env: dict[str, str], workspace: Path, home: Path) -> str:
    """The servers reachable through codeact only, before `codeact install` renders the reference:
    `codeact setup copilot --gateway` moves them out of the CLI's mcp-config.json into codeact's
    own file; a codeact without it reads them from the workspace's .mcp.json once trusted, a file
    the CLI does not read. Says which."""
    servers = mcp_servers(workspace, home, setup.mcp_copies)
    codeact_env = {**env, "CODEACT_BIN": str(setup.codeact)}
    if has_gateway(setup, codeact_env, workspace):
        add_servers(Path(env["COPILOT_HOME"]) / "mcp-config.json", servers)
        run_checked([str(setup.codeact), "setup", "copilot", "--gateway"], codeact_env, workspace,
                    "codeact setup copilot --gateway")
        return "`codeact setup copilot --gateway` (from the CLI's mcp-config.json)"
    add_servers(workspace / ".mcp.json", servers)
    run_checked([str(setup.codeact), "trust"], codeact_env, workspace, "codeact trust")
    return "the workspace's `.mcp.json`, trusted (`codeact trust`); this codeact has no `setup --gateway`"


def list_tools(name: str, argv: list[str], env: dict[str, str]) -> list[str]:
    """The names a stdio MCP server lists (tools/list, every page), asked as a plain client;
    a server that has not answered within 30 s is stopped."""
    proc = subprocess.Popen(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()

    def ask(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"MCP server {name} closed its output (or took over 30 s)")
            message = json.loads(line) if line.startswith("{") else {}
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"MCP server {name}: {method}: {message['error']}")
                return message["result"]

    try:
        ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "economy", "version": "1"}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        names: list[str] = []
        cursor = None
        for number in range(2, 100):
            page = ask(number, "tools/list", {"cursor": cursor} if cursor else {})
            names += [tool["name"] for tool in page.get("tools") or []]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return names
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


def count_server_tools(setup: Setup) -> dict[str, list[str]]:
    """Each server's tools as tools/list gives them to a client that offers no capabilities
    (the everything server lists more to a client that offers sampling, elicitation or roots)."""
    missing = [name for name, entry in mcp_servers(Path("."), Path(".")).items() if not Path(entry["args"][0]).exists()]
    if missing:
        raise SystemExit(f"economy: error: MCP servers {', '.join(missing)} are not installed under {MCP_MODULES} "
                         "(npm ci --prefix tests/e2e)")
    if shutil.which("node", path=setup.path) is None:
        raise SystemExit("economy: error: the mcp-servers scenario runs its MCP servers with node, not on PATH")
    with tempfile.TemporaryDirectory(prefix="codeact-economy-mcp-") as scratch:
        env = {"PATH": setup.path, "HOME": scratch}
        out = {}
        for name, entry in mcp_servers(Path(scratch), Path(scratch)).items():
            out[name] = list_tools(name, [entry["command"], *entry["args"]], {**env, **entry.get("env", {})})
        return out


def scalar_observations(data: dict[str, Any]) -> list[str]:
    """`key=value` for each top-level string or integer value of a config file."""
    return [f"{key}={value}" for key, value in data.items()
            if isinstance(value, (str, int)) and not isinstance(value, bool)]


def mcp_truth(root: Path) -> dict[str, Any]:
    entities, ports = {}, []
    for rel in MCP_CONFIG_FILES:
        data = json.loads((root / rel).read_text())
        entities[rel] = ["config", sorted(scalar_observations(data))]
        ports.append(data["port"])
    return {"entities": entities, "sum": sum(ports)}


def mcp_answer(entities: list[dict[str, Any]], port_sum: str) -> str:
    """The answer from the graph the memory server gave back and the sum get-sum gave."""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", port_sum)
    if not numbers:
        raise RuntimeError(f"get-sum gave no number: {port_sum[:200]!r}")
    total = float(numbers[-1])
    lines = [f"- {e['name']} ({e['entityType']}): {'; '.join(sorted(e['observations']))}"
             for e in sorted(entities, key=lambda e: e["name"])]
    return ("The memory server's knowledge graph holds:\n" + "\n".join(lines)
            + f"\n\nThe ports add up to {int(total) if total == int(total) else total} (everything's get-sum).")


def mcp_check(answer: str, truth: dict[str, Any]) -> tuple[bool, Any]:
    if NO_SERVERS in answer:
        found: dict[str, Any] = {"servers": "none"}
    else:
        total = PORT_SUM_RE.search(answer)
        found = {"entities": {m.group(1): [m.group(2), sorted(m.group(3).split("; "))]
                              for m in GRAPH_LINE_RE.finditer(answer)},
                 "sum": int(total.group(1)) if total else None}
    return found == truth, found


def first_json(text: str) -> Any:
    """The first JSON value in a tool result (the CLI may append the structured content)."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise RuntimeError(f"no JSON in {text[:200]!r}")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def offered_tool(request: dict[str, Any], server: str, tool: str, *params: str) -> str:
    """The CLI's function for one tool of one of its MCP servers (`server-tool`), checked to
    take params: what the model reads in the request's tool list."""
    for entry in request.get("tools") or []:
        function = entry.get("function") or {}
        if function.get("name") == f"{server}-{tool}":
            properties = (function.get("parameters") or {}).get("properties") or {}
            missing = [p for p in params if p not in properties]
            if missing:
                raise RuntimeError(f"{server}-{tool} takes no {', '.join(missing)}: {sorted(properties)}")
            return function["name"]
    raise RuntimeError(f"the CLI offers no {server}-{tool}")


def mcp_direct(ctx: Context) -> Moves:
    """The servers' tools called directly: both files read in one turn, the entities stored and
    the ports added in the next, the graph read back in a third."""
    ws = workspace_of(ctx.request, ctx.workspace)
    read = offered_tool(ctx.request, "filesystem", "read_text_file", "path")
    store = offered_tool(ctx.request, "memory", "create_entities", "entities")
    add = offered_tool(ctx.request, "everything", "get-sum", "a", "b")
    graph = offered_tool(ctx.request, "memory", "read_graph")
    texts = yield from direct_batch(ctx, [(read, {"path": f"{ws}/{rel}"}) for rel in MCP_CONFIG_FILES])
    files = {rel: first_json(text) for rel, text in zip(MCP_CONFIG_FILES, texts)}
    if not all(isinstance(data, dict) for data in files.values()):
        raise RuntimeError(f"read_text_file gave no JSON object: {texts}")
    entities = [{"name": rel, "entityType": "config", "observations": scalar_observations(data)}
                for rel, data in files.items()]
    ports = [data["port"] for data in files.values()]
    _, port_sum = yield from direct_batch(ctx, [(store, {"entities": entities}), (add, {"a": ports[0], "b": ports[1]})])
    stored = first_json((yield from direct(ctx, graph)))
    return mcp_answer(stored["entities"], port_sum)


def split_signatures(line: str) -> list[str]:
    """A reference line's signatures, split at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in line:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [p for p in [*parts, current.strip()] if p]


def reference_servers(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The MCP servers codeact's reference in a request lists: for each, the signatures it
    shows (function suffix → parameter names, a `=` marking optional ones) and how many of its
    functions it leaves unlisted."""
    text = "\n".join(text_of(m.get("content")) for m in request.get("messages") or [])
    start = text.find("MCP servers:")
    if start < 0:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for line in REFERENCE_SERVER_RE.finditer(text, start):
        listed, more = {}, 0
        for part in split_signatures(line.group(2)):
            signature, extra = SIGNATURE_RE.match(part), MORE_RE.match(part)
            if signature:
                listed[signature.group(1)] = [p.strip() for p in signature.group(2).split(",") if p.strip()]
            elif extra:
                more = int(extra.group(1))
        if not listed and not more:
            break  # past the list
        out[line.group(1)] = {"listed": listed, "more": more}
    return out


DISCOVER_PROGRAM = """\
for server in {servers!r}:
    for tool in mcp_tools(server):
        schema = tool["input_schema"]
        required = schema.get("required") or []
        optional = [p + "=…" for p in (schema.get("properties") or {{}}) if p not in required]
        print(server + ": " + str(tool["function"]) + "(" + ", ".join(required + optional) + ")")"""

MCP_PROGRAM = """\
import json

def value(result):
    return json.loads(result) if isinstance(result, str) else result

entities, ports = [], []
for rel in {files!r}:
    read = value({read}(path={ws!r} + "/" + rel))
    data = json.loads(read["content"] if isinstance(read, dict) else read)
    observations = [k + "=" + str(v) for k, v in data.items() if isinstance(v, (str, int)) and not isinstance(v, bool)]
    entities.append({{"name": rel, "entityType": "config", "observations": observations}})
    ports.append(data["port"])
{store}(entities=entities)
print("sum:", {add}(a=ports[0], b=ports[1]))
for entity in value({graph}())["entities"]:
    print("entity:", json.dumps(entity))"""


def mcp_codeact(ctx: Context) -> Moves:
    """The servers through codeact, as its reference teaches: the functions it lists are called
    by the signatures it shows; when one the question needs is left unlisted, a first program asks
    `mcp_tools(server)` for that server's functions. Then one program does all the work. A
    reference that lists none of the servers is answered with NO_SERVERS."""
    servers = reference_servers(ctx.notes["first_request"])
    ctx.notes["reference_servers"] = {name: {"listed": len(s["listed"]), "more": s["more"]}
                                      for name, s in servers.items()}
    if not any(name in servers for name in MCP_SERVER_NAMES):
        return NO_SERVERS
    ws = workspace_of(ctx.request, ctx.workspace)
    wanted = {"read": ("filesystem", "read_text_file", ["path"]), "store": ("memory", "create_entities", ["entities"]),
              "add": ("everything", "get_sum", ["a", "b"]), "graph": ("memory", "read_graph", [])}
    known = {name: dict(s["listed"]) for name, s in servers.items()}
    unlisted = sorted({server for server, tool, _ in wanted.values() if tool not in known.get(server, {})})
    if unlisted:
        if "mcp_tools(" not in request_text(ctx.notes["first_request"]):
            raise RuntimeError("the reference leaves functions unlisted and names no way to list them")
        ctx.notes["discovered"] = unlisted
        output = yield from codeact(ctx, DISCOVER_PROGRAM.format(servers=unlisted))
        for line in output.splitlines():
            found = re.match(r"^([\w.-]+): ([A-Za-z_]\w*)\((.*)\)$", line.strip())
            if found and found.group(2).startswith(found.group(1) + "__"):
                suffix = found.group(2)[len(found.group(1)) + 2:]
                params = [p.strip() for p in found.group(3).split(",") if p.strip()]
                known.setdefault(found.group(1), {})[suffix] = params
    names = {}
    for key, (server, tool, params) in wanted.items():
        signature = known.get(server, {}).get(tool)
        if signature is None:
            raise RuntimeError(f"codeact shows no {server}__{tool} (it shows {sorted(known.get(server, {}))})")
        takes = [p.split("=")[0] for p in signature]
        if [p for p in params if p not in takes]:
            raise RuntimeError(f"{server}__{tool}({', '.join(signature)}) does not take {params}")
        names[key] = f"{server}__{tool}"
    output = yield from codeact(ctx, MCP_PROGRAM.format(files=list(MCP_CONFIG_FILES), ws=ws, **names))
    entities = [json.loads(line[len("entity: "):]) for line in output.splitlines() if line.startswith("entity: ")]
    port_sum = next((line[len("sum: "):] for line in output.splitlines() if line.startswith("sum: ")), "")
    return mcp_answer(entities, port_sum)


# follow-up: two questions about the same files in one session, the second asked once the first
# is answered. One `copilot -p` prompt holds both, and the scripted model answers them in two
# rounds of calls: the CLI starts codeact's MCP server (stdio) once per process, so only within
# one process can a server's session carry what a program defined to the next call (a second
# `copilot -p --continue` would start a fresh server). With sessions (the default server), the
# first program keeps every file's lines in a variable and prints only the counts; the second
# answers from that variable, reading nothing. Without them (`--session-idle 0`), the second
# reads the files again, or the first prints them all for the model to answer from.

FOLLOWUP_PROMPT = ("For each Python file in src/, count functions, classes and lines. Once you have those counts, "
                   "a follow-up on the same files: which functions in src/ have no docstring? List them as "
                   "path:line: name.")
UNDOC_RE = re.compile(r"^- (\S+\.py):(\d+): (\w+)$", re.M)
DEF_NAME_RE = re.compile(r"^\s*def (\w+)")
FOLLOWUP_SESSION = "economy-follow-up"  # the shell route's `codeact run --session NAME`
STATE_LINE = "Variables persist across calls."


def undocumented_truth(root: Path) -> list[list[Any]]:
    return sorted([f"src/{p.name}", node.lineno, node.name] for p in src_files(root)
                  for node in ast.walk(ast.parse(p.read_text()))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node) is None)


def followup_truth(root: Path) -> dict[str, Any]:
    return {"stats": stats_truth(root), "undocumented": undocumented_truth(root)}


def followup_answer(stats: dict[str, list[int]], undocumented: list[tuple[str, int, str]]) -> str:
    return (stats_answer(stats) + "\n\nFunctions in src/ without a docstring:\n"
            + "\n".join(f"- {rel}:{n}: {name}" for rel, n, name in sorted(undocumented)))


def followup_check(answer: str, truth: dict[str, Any]) -> tuple[bool, Any]:
    stats = {m.group(1): [int(m.group(2)), int(m.group(3)), int(m.group(4))] for m in STATS_RE.finditer(answer)}
    undocumented = sorted([m.group(1), int(m.group(2)), m.group(3)] for m in UNDOC_RE.finditer(answer))
    found = {"stats": stats, "undocumented": undocumented}
    return found == truth, found


def undocumented_in(files: dict[str, str]) -> list[tuple[str, int, str]]:
    """Each `def` whose next line, past blank and comment lines, opens no string, from the
    files' text."""
    out = []
    for rel, text in files.items():
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            found = DEF_NAME_RE.match(line)
            if found:
                body = [rest.strip() for rest in lines[n:] if rest.strip() and not rest.strip().startswith("#")]
                if not body or body[0][:3] not in ('"""', "'''"):
                    out.append((rel, n, found.group(1)))
    return out


# The programs: the first reads every file into `files` and prints the counts; the second finds
# the functions without a docstring in `files`. Without a session, the second reads them again.
FOLLOWUP_READ = """\
import re
files = {path: view(path=path).splitlines() for path in sorted(glob(pattern="src/*.py"))}"""
FOLLOWUP_COUNTS = f"""\
for path, lines in files.items():
    defs = len([l for l in lines if re.match(r"{DEF_PATTERN}", l)])
    classes = len([l for l in lines if re.match(r"{CLASS_PATTERN}", l)])
    print(f"{{path}}: {{defs}} functions, {{classes}} classes, {{len(lines)}} lines")"""
FOLLOWUP_PRINT = """\
for path, lines in files.items():
    print("=== " + path)
    for n, line in enumerate(lines, 1):
        print(f"{n}|{line}")"""
FOLLOWUP_UNDOCUMENTED = f"""\
for path, lines in files.items():
    for n, line in enumerate(lines, 1):
        if re.match(r"{DEF_PATTERN}", line):
            body = [rest.strip() for rest in lines[n:] if rest.strip() and not rest.strip().startswith("#")]
            if not body or body[0][:3] not in ('\"\"\"', "'''"):
                print(f"{{path}}:{{n}}: {{line.split('def ', 1)[1].split('(')[0]}}")"""
PRINTED_FILE_RE = re.compile(r"^=== (\S+)$")
PRINTED_LINE_RE = re.compile(r"^(\d+)\|(.*)$")


def followup_stats(ctx: Context, output: str) -> dict[str, list[int]]:
    ws = workspace_of(ctx.request, ctx.workspace)
    return {relative(m.group(1), ws): [int(m.group(2)), int(m.group(3)), int(m.group(4))]
            for m in STATS_RE.finditer(output)}


def followup_undocumented(ctx: Context, output: str) -> list[tuple[str, int, str]]:
    ws = workspace_of(ctx.request, ctx.workspace)
    return [(relative(m.group(1), ws), int(m.group(2)), m.group(3).strip())
            for m in map(TODO_LINE_RE.match, output.splitlines()) if m]


def step_two(ctx: Context) -> None:
    """Marks the request the follow-up starts at: the one that brought the first answer's
    results (every later request belongs to the follow-up)."""
    ctx.notes["step2_from"] = ctx.notes.get("turn_request", 0)
    ctx.notes["says_state_persists"] = STATE_LINE in request_text(ctx.notes["first_request"])


def followup_codeact(reuse: bool, session: str | None = None) -> Callable[[Context], Moves]:
    """Two programs. reuse: the second reads `files` and `re` from the first (a session, the
    MCP server's or the shell route's `--session`); else it reads the files again."""
    def policy(ctx: Context) -> Moves:
        stats = followup_stats(ctx, (yield from codeact(ctx, FOLLOWUP_READ + "\n" + FOLLOWUP_COUNTS, session)))
        step_two(ctx)
        second = FOLLOWUP_UNDOCUMENTED if reuse else FOLLOWUP_READ + "\n" + FOLLOWUP_UNDOCUMENTED
        return followup_answer(stats, followup_undocumented(ctx, (yield from codeact(ctx, second, session))))
    return policy


def followup_print(ctx: Context) -> Moves:
    """One program that prints the counts and every file's numbered lines; the follow-up is
    answered from what it printed, with no call."""
    output = yield from codeact(ctx, FOLLOWUP_READ + "\n" + FOLLOWUP_COUNTS + "\n" + FOLLOWUP_PRINT)
    ws = workspace_of(ctx.request, ctx.workspace)
    files: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        head, numbered = PRINTED_FILE_RE.match(line), PRINTED_LINE_RE.match(line)
        if head:
            current = files.setdefault(relative(head.group(1), ws), [])
        elif numbered and current is not None:
            current.append(numbered.group(2))
    step_two(ctx)
    return followup_answer(followup_stats(ctx, output), undocumented_in({rel: "\n".join(lines) + "\n"
                                                                          for rel, lines in files.items()}))


def followup_direct(ctx: Context) -> Moves:
    """glob, every view in one turn; both answers from the files' text, which stays in the
    conversation (the follow-up needs no call)."""
    files = yield from read_files(ctx, "src/*.py", True)
    step_two(ctx)
    return followup_answer(stats_from_files(files), undocumented_in(files))


@dataclass
class Scenario:
    name: str
    prompt: str
    truth: Callable[[Path], Any]
    check: Callable[[str, Any], tuple[bool, Any]]
    policies: dict[str, Callable[[Context], Moves]]
    # Arms that lack by design what the question needs (mcp-servers without the servers): the
    # right answer there is `unserved`, saying so.
    unserved: dict[str, Any] = field(default_factory=dict)


SCENARIOS = [
    Scenario("find-todos", "Find all TODO comments in src/ and list them with line numbers.", todos_truth,
             todos_check, {"baseline": todos_baseline(False), "parallel": todos_baseline(True), "smart": todos_smart,
                           "codeact": todos_codeact, "bash": todos_codeact, "agent": todos_codeact, "nudge": todos_baseline(False),
                           "nudge-grep": todos_nudge_grep, "parallel-nudge": todos_baseline(True),
                           "codeact-nudge": todos_codeact}),
    Scenario("code-stats", "For each Python file in src/, count functions, classes and lines.", stats_truth,
             stats_check, {"baseline": stats_baseline(False), "parallel": stats_baseline(True), "smart": stats_smart,
                           "codeact": stats_codeact, "bash": stats_codeact}),
    Scenario("imports-os", "Which files in src/ import os?", imports_truth, imports_check,
             {"baseline": imports_baseline(False), "parallel": imports_baseline(True), "smart": imports_smart,
              "codeact": imports_codeact, "bash": imports_codeact}),
    Scenario("json-validate", "Check all JSON files in config/ for valid syntax.", json_truth, json_check,
             {"baseline": json_baseline(False), "parallel": json_baseline(True), "smart": json_baseline(True),
              "codeact": json_codeact, "bash": json_codeact, "agent": json_codeact, "nudge": json_baseline(False),
              "exclusive": json_baseline(False), "parallel-nudge": json_baseline(True)}),
    Scenario("single-file", "Read README.md and tell me what it says.", readme_truth, readme_check,
             {"baseline": readme_direct, "parallel": readme_direct, "smart": readme_direct, "codeact": readme_direct,
              "bash": readme_direct, "exclusive": readme_direct}),
    Scenario("mcp-servers", "Read config/settings.json and config/database.json with the filesystem MCP server, "
             "store each in the memory MCP server as an entity named after its path (type config, one observation "
             "key=value for each top-level string or integer), add their two ports with the everything server's "
             "get-sum, then read the knowledge graph back and tell me what it holds and the sum.",
             mcp_truth, mcp_check, {"codeact": mcp_codeact, "mcp-direct": mcp_direct, "mcp-codeact": mcp_codeact},
             unserved={"codeact": {"servers": "none"}}),
    Scenario("follow-up", FOLLOWUP_PROMPT, followup_truth, followup_check,
             {"parallel": followup_direct, "codeact": followup_codeact(True),
              "codeact-stateless": followup_codeact(False), "codeact-print": followup_print,
              "bash-session": followup_codeact(True, FOLLOWUP_SESSION)}),
]


@dataclass
class Arm:
    name: str
    what: str
    plugin: bool = False
    install: bool = False
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)
    servers: str = ""  # where the user's MCP servers are configured: "agent", "codeact" or nowhere
    serve_args: list[str] = field(default_factory=list)  # flags added to the plugin's `codeact mcp serve`


ARMS = [
    Arm("baseline", "glob, then one view per turn"),
    Arm("parallel", "glob, then every view in one turn"),
    Arm("smart", "the fewest direct calls, no bash: grep in content, files or count mode (json-validate: as "
        "parallel; single-file: one view)"),
    Arm("codeact", "plugin and `codeact install`; one codeact program through the default route, the `codeact-run` "
        "tool of the plugin's MCP server (single-file: one direct view, as the instructions say; mcp-servers: no MCP "
        "server configured, the answer says so; follow-up: two programs in the server's session, the second reads "
        "the first's variables, no file)", plugin=True,
        install=True),
    Arm("bash", "as codeact, on the shell route (`CODEACT_ROUTE=bash`): the program through bash", plugin=True,
        install=True, env={"CODEACT_ROUTE": "bash"}),
    Arm("codeact-stateless", "as codeact, the plugin's MCP server with `--session-idle 0` (no sessions); the "
        "follow-up's program reads the files again", plugin=True, install=True,
        serve_args=["--session-idle", "0"]),
    Arm("codeact-print", "as codeact-stateless; one program that prints the counts and every file's numbered lines, "
        "the follow-up answered from them with no call", plugin=True, install=True,
        serve_args=["--session-idle", "0"]),
    Arm("bash-session", "as bash, each program through `codeact run --session NAME` (state kept between processes); "
        "the follow-up's program reads the first's variables, no file", plugin=True, install=True,
        env={"CODEACT_ROUTE": "bash"}),
    Arm("agent", "plugin, no install; `--agent codeact:codeact`, one program", plugin=True,
        args=["--agent", "codeact:codeact"]),
    Arm("nudge", "plugin and install, `CODEACT_MODE=nudge`; baseline's calls, a deny's suggestion followed",
        plugin=True, install=True, env={"CODEACT_MODE": "nudge"}),
    Arm("nudge-grep", "as nudge; three views, then the grep that gets denied", plugin=True, install=True,
        env={"CODEACT_MODE": "nudge"}),
    Arm("exclusive", "plugin and install, `CODEACT_MODE=exclusive`; baseline's calls, a deny's suggestion followed",
        plugin=True, install=True, env={"CODEACT_MODE": "exclusive"}),
    Arm("parallel-nudge", "as parallel, with the plugin, install and `CODEACT_MODE=nudge`", plugin=True, install=True,
        env={"CODEACT_MODE": "nudge"}),
    Arm("codeact-nudge", "as codeact, with `CODEACT_MODE=nudge`", plugin=True, install=True,
        env={"CODEACT_MODE": "nudge"}),
    Arm("mcp-direct", "as codeact, then the three MCP servers (everything, filesystem, memory) in the CLI's own "
        "`mcp-config.json`, so it offers every tool's schema on every request; their tools called directly, "
        "independent calls batched", plugin=True, install=True, servers="agent"),
    Arm("mcp-codeact", "the same servers behind codeact only (`codeact setup copilot --gateway`, or the workspace's "
        "trusted `.mcp.json` where codeact has no gateway), then the plugin and `codeact install`; one program calls "
        "them, after one that lists a server's unlisted functions when the reference leaves one it needs out",
        plugin=True, install=True, servers="codeact"),
]
ARM_BY_NAME = {arm.name: arm for arm in ARMS}
SCENARIO_BY_NAME = {s.name: s for s in SCENARIOS}


# --------------------------------------------------------------------------- counting tokens


class TokenCounter:
    """o200k_base token counts through `benchtool tokens`, many texts per call, each distinct
    text counted once."""

    def __init__(self, benchtool: Path, scratch: Path) -> None:
        self.benchtool, self.scratch = benchtool, scratch
        self.known: dict[str, int] = {}
        scratch.mkdir(parents=True, exist_ok=True)

    def count(self, texts: list[str]) -> list[int]:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = {k: t for k, t in zip(keys, texts) if k not in self.known}
        items = list(todo.items())
        for start in range(0, len(items), 200):
            paths = []
            for key, text in items[start: start + 200]:
                path = self.scratch / key
                path.write_text(text, encoding="utf-8")
                paths.append(str(path))
            done = subprocess.run([str(self.benchtool), "tokens", *paths], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"benchtool tokens failed: {done.stderr}")
            for line in done.stdout.splitlines():
                count, path = line.split("\t", 1)
                self.known[Path(path).name] = int(count)
            for path in paths:
                os.unlink(path)
        return [self.known[k] for k in keys]

    def one(self, text: str) -> int:
        return self.count([text])[0]


PER_MESSAGE_TOKENS = 4


def request_text(body: dict[str, Any]) -> str:
    """Every message's text and every tool call's arguments, in order."""
    parts = []
    for message in body.get("messages") or []:
        parts.append(text_of(message.get("content")))
        for tool_call in message.get("tool_calls") or []:
            parts.append((tool_call.get("function") or {}).get("arguments") or "")
    return "".join(parts)


def tools_json(body: dict[str, Any]) -> str:
    return json.dumps(body.get("tools"))


def measure_requests(counter: TokenCounter, requests: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Tokens of each request: its texts, its tool list as JSON, 4 per message."""
    texts = [request_text(r["body"]) for r in requests]
    tools = [tools_json(r["body"]) for r in requests]
    counts = counter.count(texts + tools)
    out = []
    for i, r in enumerate(requests):
        messages = len(r["body"].get("messages") or [])
        text_tokens, tool_tokens = counts[i], counts[len(requests) + i]
        out.append({"bytes": r["bytes"], "messages": messages, "text_tokens": text_tokens, "tools_tokens": tool_tokens,
                    "tokens": text_tokens + tool_tokens + PER_MESSAGE_TOKENS * messages})
    return out


# --------------------------------------------------------------------------- one run


def describe_events(events: list[dict[str, Any]]) -> str:
    """What the hooks did, call by call: `view`, `view+advice`, `view DENIED → bash exit 0`."""
    out: list[str] = []
    for event in events:
        if event.get("followed"):
            out[-1] += f" → suggestion ran, exit {event.get('exit_code')}"
            continue
        label = "codeact" if event.get("codeact") else event["tool"]
        if event.get("denied"):
            label += " DENIED"
        if event.get("advice"):
            label += "+advice"
        out.append(label)
    return ", ".join(out)


def live_dir(setup: Setup) -> Path:
    """Where every run happens: one path for all, so that the paths the CLI sends (working
    directory, session folder, view arguments) weigh the same in every arm."""
    return setup.runs_dir / "live"


def kept_dir(setup: Setup, scenario: Scenario, arm: Arm, index: int) -> Path:
    """Where a run is kept once it is done (the requests it logged still name live_dir)."""
    return setup.runs_dir / f"{scenario.name}--{arm.name}--{index}"


def keep(setup: Setup, scenario: Scenario, arm: Arm, index: int) -> Path:
    kept = kept_dir(setup, scenario, arm, index)
    if kept.exists():
        shutil.rmtree(kept)
    if live_dir(setup).exists():
        live_dir(setup).rename(kept)
    return kept


def cli_says(stdout: Path) -> str:
    """What the CLI's JSON output said went wrong (its session warnings and errors), for a run
    that failed: `: message; message`, or nothing."""
    said = []
    for line in stdout.read_text(errors="replace").splitlines() if stdout.exists() else []:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") in ("session.warning", "session.error"):
            said.append(str((event.get("data") or {}).get("message") or ""))
    return (": " + "; ".join(m for m in said if m)) if any(said) else ""


def run_one(setup: Setup, counter: TokenCounter, scenario: Scenario, arm: Arm, index: int) -> dict[str, Any]:
    run_dir = live_dir(setup)
    policy = with_first_request(scenario.policies[arm.name])
    server, returncode, elapsed, stderr_tail, ctx = run_cli(
        setup, run_dir, scenario.prompt, policy, plugin=arm.plugin, install=arm.install, extra_env=arm.env,
        extra_args=arm.args, servers=arm.servers, serve_args=arm.serve_args)
    workspace = run_dir / "ws"
    installed = workspace / ".github" / "instructions" / "codeact.instructions.md"
    if installed.exists():
        shutil.copyfile(installed, run_dir / "instructions.md")
    requests = server.turns()
    logs = run_dir / "requests"
    logs.mkdir()
    for i, r in enumerate(server.requests):
        (logs / f"{i:02d}{'' if r['turn'] else '-other'}.json").write_text(json.dumps(r["body"], indent=1))
    measured = measure_requests(counter, requests)
    answer = server.final_answer()
    truth = scenario.unserved[arm.name] if arm.name in scenario.unserved else scenario.truth(workspace)
    correct, parsed = scenario.check(answer, truth)
    errors = list(server.errors)
    first = requests[0]["body"] if requests else {}
    offered = [t.get("function", {}).get("name") for t in first.get("tools") or []]
    by_server = {name: sum(1 for o in offered if o and o.startswith(name + "-"))
                 for name in mcp_servers(workspace, run_dir, setup.mcp_copies)}
    if arm.servers != "agent" and any(by_server.values()):
        errors.append(f"the CLI offers the servers' tools directly: {by_server}")
    if returncode != 0:
        errors.append((f"the CLI exited {returncode}" if returncode is not None else
                       f"the CLI ran past {CLI_TIMEOUT_S} s and was stopped") + cli_says(run_dir / "cli.stdout"))
    events = ctx.notes.get("events", [])
    (run_dir / "first-request.json").write_text(json.dumps(first, indent=1))
    # Two-step scenarios: the follow-up's requests, from the one that brought the first answer.
    step2_from = ctx.notes.get("step2_from")
    steps = None if step2_from is None else [
        {"requests": len(part), "tokens": sum(m["tokens"] for m in part)}
        for part in (measured[:step2_from], measured[step2_from:])]
    record = {
        "scenario": scenario.name, "arm": arm.name, "run": index,
        "run_dir": str(kept_dir(setup, scenario, arm, index)),
        "cli_returncode": returncode, "elapsed_s": round(elapsed, 2),
        "requests": len(requests), "other_requests": len(server.requests) - len(requests),
        "prompt_tokens": sum(m["tokens"] for m in measured), "bytes_sent": sum(m["bytes"] for m in measured),
        "per_request": measured,
        "turns": [{"calls": [[n, a] for n, a in t.calls]} if t.calls else {"text": t.text} for t in server.answers],
        "answer": answer, "truth": truth, "parsed_answer": parsed, "correct": bool(correct and not errors),
        "errors": errors, "events": events, "hooks": describe_events(events),
        "codeact_command": ctx.notes.get("codeact_command"),
        "codeact_exit_codes": ctx.notes.get("codeact_exit_codes", []),
        "tools_offered": offered,
        "servers_setup": ctx.notes.get("servers_setup"),
        "server_tools_offered": by_server if arm.servers else None,
        "reference_servers": ctx.notes.get("reference_servers"),
        "discovered": ctx.notes.get("discovered"),
        "steps": steps, "serve_args": ctx.notes.get("serve_args"),
        "says_state_persists": ctx.notes.get("says_state_persists"),
        "stderr_tail": stderr_tail if errors else "",
    }
    (run_dir / "record.json").write_text(json.dumps(record, indent=1, default=str))
    keep(setup, scenario, arm, index)
    return record


# --------------------------------------------------------------------------- the tax split

SKILL_RE = re.compile(r"<skill>\s*<name>([^<]*)</name>.*?</skill>", re.S)
AGENTS_HEADER = "User-provided custom agents:"


def system_text(body: dict[str, Any]) -> str:
    return "".join(text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system")


def extra_user_messages(body: dict[str, Any]) -> list[str]:
    """User messages other than the prompt itself (which opens with <current_datetime>)."""
    return [text_of(m.get("content")) for m in body.get("messages") or []
            if m.get("role") == "user" and "<current_datetime>" not in text_of(m.get("content"))]


def without_codeact_agents(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The tool list without the codeact agents: their lines in the task tool's description (and
    the custom-agents header when only codeact agents were under it) and their names in its
    parameters' enums. Also what was taken out."""
    tools = json.loads(json.dumps(tools))
    removed: list[str] = []

    def drop_names(value: Any) -> Any:
        if isinstance(value, list):
            removed.extend(f"`{v}` in an enum" for v in value if isinstance(v, str) and v.startswith("codeact:"))
            return [drop_names(v) for v in value if not (isinstance(v, str) and v.startswith("codeact:"))]
        if isinstance(value, dict):
            return {k: drop_names(v) for k, v in value.items()}
        return value

    for tool in tools:
        function = tool.get("function") or {}
        if function.get("name") != "task":
            continue
        lines = (function.get("description") or "").split("\n")
        agents = [line for line in lines if line.startswith("- **codeact:")]
        if agents:
            kept = [line for line in lines if not line.startswith("- **codeact:")]
            header = next((i for i, line in enumerate(kept) if AGENTS_HEADER in line), None)
            if header is not None and not any(line.startswith("- **") for line in kept[header + 1:]):
                agents.insert(0, kept.pop(header))
            function["description"] = "\n".join(kept).rstrip("\n")
            removed.extend(agents)
        function["parameters"] = drop_names(function.get("parameters"))
    return tools, removed


def tax_split(counter: TokenCounter, baseline: dict[str, Any], codeact: dict[str, Any], instructions: str | None
              ) -> dict[str, Any]:
    """What the first request of a codeact run sends beyond the same request without codeact."""
    def tokens(body: dict[str, Any]) -> int:
        return measure_requests(counter, [{"body": body, "bytes": 0}])[0]["tokens"]

    total = tokens(codeact) - tokens(baseline)
    parts: list[dict[str, Any]] = []
    system = system_text(codeact)
    if instructions:
        body = re.sub(r"\A---\n.*?\n---\n", "", instructions, flags=re.S)
        for candidate, label in ((instructions, "whole file"), (instructions.strip(), "whole file"),
                                 (body.strip(), "without its front matter")):
            if candidate and candidate in system:
                parts.append({"part": "instructions file (.github/instructions/codeact.instructions.md)",
                              "tokens": counter.one(candidate), "note": f"inlined in the system message, {label}"})
                break
        else:
            parts.append({"part": "instructions file (.github/instructions/codeact.instructions.md)", "tokens": 0,
                          "note": "not found verbatim in the system message"})
    base_extra = set(extra_user_messages(baseline))
    for text in extra_user_messages(codeact):
        if text not in base_extra:
            parts.append({"part": "session-start context (a user message)", "tokens": counter.one(text) + PER_MESSAGE_TOKENS,
                          "note": f"{len(text)} characters, + {PER_MESSAGE_TOKENS} for the message"})
    base_skills = {m.group(1) for m in SKILL_RE.finditer(system_text(baseline))}
    for m in SKILL_RE.finditer(system):
        if m.group(1) not in base_skills:
            parts.append({"part": f"skill `{m.group(1)}` listing", "tokens": counter.one(m.group(0)),
                          "note": "its <skill> block in the system message"})
    tools, removed = without_codeact_agents(codeact.get("tools") or [])
    if removed:
        agent_tokens = counter.one(json.dumps(codeact.get("tools"))) - counter.one(json.dumps(tools))
        parts.append({"part": "codeact agent in the `task` tool (description line, agent_type enum)", "tokens": agent_tokens,
                      "note": "; ".join(line[:80] for line in removed)})
        if tools != baseline.get("tools"):
            parts[-1]["note"] += " (the rest of the tool list still differs from the baseline's)"
    framing = total - sum(p["tokens"] for p in parts)
    parts.append({"part": "framing (the rest: wrappers, headings, paths)", "tokens": framing, "note": ""})
    return {"baseline_tokens": tokens(baseline), "codeact_tokens": tokens(codeact), "total": total, "parts": parts}


def first_request_split(counter: TokenCounter, body: dict[str, Any]) -> dict[str, Any]:
    """What one first request is made of: each message, the tool list, the per-message tokens."""
    parts = []
    for message in body.get("messages") or []:
        text = text_of(message.get("content"))
        role = message.get("role")
        what = ("system message" if role == "system" else
                "the prompt (user message)" if "<current_datetime>" in text else f"{role} message (session-start context)")
        parts.append({"part": what, "tokens": counter.one(text) if text else 0, "characters": len(text)})
    tools = body.get("tools") or []
    tool_names = [(t.get("function") or {}).get("name", "?") for t in tools]
    parts.append({"part": f"tool list ({', '.join(tool_names) if len(tools) <= 8 else f'{len(tools)} tools'})",
                  "tokens": counter.one(json.dumps(tools)), "characters": len(json.dumps(tools))})
    count = len(body.get("messages") or [])
    parts.append({"part": f"{PER_MESSAGE_TOKENS} per message", "tokens": PER_MESSAGE_TOKENS * count, "characters": 0})
    return {"total": sum(p["tokens"] for p in parts), "parts": parts}


# --------------------------------------------------------------------------- the report


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@dataclass
class Row:
    scenario: str
    arm: str
    records: list[dict[str, Any]]

    @property
    def tokens(self) -> float:
        return median([r["prompt_tokens"] for r in self.records])

    @property
    def requests(self) -> float:
        return median([r["requests"] for r in self.records])

    @property
    def bytes_sent(self) -> float:
        return median([r["bytes_sent"] for r in self.records])

    @property
    def correct(self) -> bool:
        return all(r["correct"] for r in self.records)


def fmt(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def ratio(rows: dict[tuple[str, str], Row], scenario: str, arm: str, against: str) -> float | None:
    a, b = rows.get((scenario, arm)), rows.get((scenario, against))
    return None if a is None or b is None or not b.tokens else a.tokens / b.tokens


def targets(rows: dict[tuple[str, str], Row], tax: dict[str, Any] | None) -> list[tuple[str, str, str, bool | None]]:
    """(target, goal, measured, met); met is None when what it needs did not run. A ratio or a
    tax measured on a run whose answer is wrong does not count as met."""
    def right(*pairs: tuple[str, str]) -> bool:
        return all(rows[p].correct for p in pairs if p in rows)

    def versus(scenario: str, against: str, goal: float) -> tuple[str, bool | None]:
        r = ratio(rows, scenario, "codeact", against)
        if r is None:
            return "—", None
        ok = right((scenario, "codeact"), (scenario, against))
        return f"{r:.3f}×" + ("" if ok else " (wrong answer)"), ok and r <= goal

    out: list[tuple[str, str, str, bool | None]] = []
    tax_ok = right(("find-todos", "codeact"))
    # 500, and the 60 that sessions and runs that yield may add (their lines in the instructions
    # and `run`'s arguments).
    out.append(("codeact tax per request (find-todos, first request)", "≤ 560 tokens",
                (f"{tax['total']} tokens" + ("" if tax_ok else " (the codeact run failed)")) if tax else "not measured",
                (tax_ok and tax["total"] <= 560) if tax else None))
    for scenario, goal in (("find-todos", 0.40), ("code-stats", 0.40), ("imports-os", 0.40), ("json-validate", 0.45)):
        out.append((f"{scenario}: codeact vs baseline", f"≤ {goal:.2f}×", *versus(scenario, "baseline", goal)))
    for scenario in ("find-todos", "code-stats", "imports-os", "json-validate"):
        out.append((f"{scenario}: codeact vs smart", "≤ 1.05×", *versus(scenario, "smart", 1.05)))
    out.append(("single-file: codeact vs baseline (the tax alone)", "≤ 1.05×", *versus("single-file", "baseline", 1.05)))
    # The route the plugin takes by default must be the cheaper one.
    for scenario in [s.name for s in SCENARIOS if "bash" in s.policies]:
        r = ratio(rows, scenario, "codeact", "bash")
        ok = right((scenario, "codeact"), (scenario, "bash"))
        out.append((f"{scenario}: codeact's default route (MCP) vs the bash route", "≤ 1.00×",
                    "—" if r is None else f"{r:.3f}×" + ("" if ok else " (wrong answer)"),
                    None if r is None else ok and r <= 1.0))
    # What a program keeps in the MCP server's session must cost no more than reading again.
    r = ratio(rows, "follow-up", "codeact", "codeact-stateless")
    ok = right(("follow-up", "codeact"), ("follow-up", "codeact-stateless"))
    out.append(("follow-up: MCP sessions vs none (`--session-idle 0`)", "≤ 1.00×",
                "—" if r is None else f"{r:.3f}×" + ("" if ok else " (wrong answer)"), None if r is None else ok and r <= 1.0))
    wrong = [f"{row.scenario}/{row.arm}" for row in rows.values() if not row.correct]
    out.append(("every answer correct", "all", "all" if not wrong else "wrong: " + ", ".join(wrong), not wrong))
    for arm in ("nudge", "nudge-grep", "exclusive"):
        records = [rec for row in rows.values() if row.arm == arm for rec in row.records]
        if not records:
            continue
        followed = [e for rec in records for e in rec["events"] if e.get("followed")]
        correct = all(rec["correct"] for rec in records)
        out.append((f"{arm}: suggestions followed literally answer correctly", "≥ 1 followed, all correct",
                    f"{len(followed)} followed in {len(records)} run(s), " + ("all correct" if correct else "some wrong"),
                    bool(followed) and correct and all(e.get("exit_code") == 0 for e in followed)))
    # Nudge must not cost a well-behaved model anything: a parallel batch is never split, and a
    # model that runs codeact is left alone.
    for arm, like in (("parallel-nudge", "parallel"), ("codeact-nudge", "codeact")):
        for scenario in [s.name for s in SCENARIOS if arm in s.policies]:
            row, base = rows.get((scenario, arm)), rows.get((scenario, like))
            if row is None or base is None:
                continue
            denied = [e for rec in row.records for e in rec["events"] if e.get("denied")]
            met = row.correct and not denied and row.requests == base.requests
            out.append((f"{scenario}: {arm} vs {like}", "no denial, same requests",
                        f"{len(denied)} denied, {fmt(row.requests)} vs {fmt(base.requests)} requests", met))
    records = [rec for row in rows.values() if row.arm == "agent" for rec in row.records]
    if records:
        firsts = [rec["codeact_exit_codes"][0] if rec["codeact_exit_codes"] else None for rec in records]
        out.append(("agent: the first codeact call succeeds", "exit 0",
                    ", ".join("no call" if f is None else "denied" if f == -1 else f"exit {f}" for f in firsts),
                    all(f == 0 for f in firsts)))
    return out


MCP_GOAL = 600  # tokens a request may carry beyond the same request without the servers, behind codeact


def first_tokens(row: Row, key: str = "tokens") -> float:
    """The median over a row's runs of its first request's tokens (or its tool list's)."""
    return median([r["per_request"][0][key] if r.get("per_request") else 0 for r in row.records])


def mcp_targets(rows: dict[tuple[str, str], Row]) -> list[tuple[str, str, str, bool | None]]:
    """The servers behind codeact against no servers at all, first request against first request."""
    behind, none = rows.get(("mcp-servers", "mcp-codeact")), rows.get(("mcp-servers", "codeact"))
    if behind is None or none is None or not behind.requests or not none.requests:
        return []
    extra = first_tokens(behind) - first_tokens(none)
    ok = behind.correct and none.correct
    return [("mcp-servers: a request with the servers behind codeact vs without servers", f"≤ +{MCP_GOAL} tokens",
             f"{extra:+,.0f} tokens" + ("" if ok else " (wrong answer)"), ok and extra <= MCP_GOAL)]


def mcp_section(rows: dict[tuple[str, str], Row], server_tools: dict[str, list[str]] | None, copies: int = 1
                ) -> list[str]:
    """The user's MCP servers: how many tools each has, and what each way of configuring them
    costs per request and in all."""
    arms = [(arm, rows[("mcp-servers", arm)]) for arm in ("codeact", "mcp-direct", "mcp-codeact")
            if ("mcp-servers", arm) in rows]
    if not arms:
        return []
    lines = ["", "## The user's MCP servers", ""]
    if server_tools:
        total = sum(len(t) for t in server_tools.values())
        lines += [f"Tools each server lists (tools/list, a client without capabilities): "
                  + ", ".join(f"{name} {len(tools)}" for name, tools in server_tools.items()) + f"; {total} in all"
                  + ("" if total >= 30 else " (fewer than 30)") + "."
                  + (f" Each is configured {copies} times (`--mcp-copies`): {copies * total} tools."
                     if copies > 1 else ""),
                  ""]
    none = rows.get(("mcp-servers", "codeact"))
    lines += ["| arm | servers configured in | tools the CLI offers (of them the servers') | codeact's reference lists "
              "| requests | first request | its tool list | vs no servers | per request (mean) | all requests "
              "| wall s | correct |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for arm, row in arms:
        rec = row.records[0]
        if not row.requests:
            lines.append(f"| {arm} | {rec.get('servers_setup') or 'nowhere'} | — | — | 0 | — | — | — | — | — | "
                         f"— | NO: {'; '.join(rec.get('errors') or [])[:300]} |")
            continue
        offered = rec.get("server_tools_offered") or {}
        listed = rec.get("reference_servers") or {}
        shown = ", ".join(f"{n} {v['listed']}" + (f" (+{v['more']})" if v["more"] else "") for n, v in listed.items())
        if len(listed) > len(MCP_SERVER_NAMES):
            shown = (f"{len(listed)} servers, {sum(v['listed'] for v in listed.values())} signatures "
                     f"(+{sum(v['more'] for v in listed.values())})")
        first = first_tokens(row)
        versus = "—" if none is None or not none.requests or arm == "codeact" else f"{first - first_tokens(none):+,.0f}"
        per = median([r["prompt_tokens"] / r["requests"] for r in row.records if r["requests"]] or [0])
        wall = median([r.get("elapsed_s") or 0 for r in row.records])
        lines.append(f"| {arm} | {rec.get('servers_setup') or 'nowhere'} | {len(rec.get('tools_offered') or [])} "
                     f"({sum(offered.values())}) | {shown or '—'} | {fmt(row.requests)} | {fmt(first)} | "
                     f"{fmt(first_tokens(row, 'tools_tokens'))} | {versus} | {fmt(round(per))} | {fmt(row.tokens)} | "
                     f"{wall:.1f} | {'yes' if row.correct else 'NO'} |")
    discovered = [rec.get("discovered") for _, row in arms for rec in row.records if rec.get("discovered")]
    lines += ["", "The first request is what every request of a session carries before its turns; \"vs no "
              "servers\" is it against the codeact arm's (the same question, the plugin installed, no server "
              "configured: it answers that none is)."
              + (f" Behind codeact, a first program listed the functions of {', '.join(discovered[0])} "
                 "(`mcp_tools`), which the reference had left unlisted." if discovered else "")]
    return lines


FOLLOWUP_HOW = {
    "parallel": "the views stay in the conversation: no call",
    "codeact": "the MCP server's session: a program that reads `files`",
    "codeact-stateless": "no session (`--session-idle 0`): a program that reads the files again",
    "codeact-print": "no session: the first program printed every line, no call",
    "bash-session": "`codeact run --session NAME` on the shell route: a program that reads `files`",
}


def followup_section(rows: dict[tuple[str, str], Row]) -> list[str]:
    """follow-up: the whole run and its two steps per arm, side by side."""
    arms = [(arm, rows[("follow-up", arm)]) for arm in FOLLOWUP_HOW if ("follow-up", arm) in rows]
    if not arms:
        return []

    def step(row: Row, index: int, key: str) -> float:
        return median([r["steps"][index][key] for r in row.records if r.get("steps")] or [0])

    session = rows.get(("follow-up", "codeact"))
    lines = ["", "## Follow-up in one session", "",
             "Two questions about the same files in one `copilot -p` session: counts per file, then, once they are "
             "answered, the functions without a docstring. The follow-up's share is every request from the one that "
             "brought the first answer's results (it holds the final answer, which gives both).", "",
             "| arm | the follow-up reads the files through | requests | tokens | × codeact | first step: requests, "
             "tokens | follow-up: requests, tokens | instructions say state persists | correct |",
             "|---|---|---:|---:|---:|---:|---:|---|---|"]
    for arm, row in arms:
        says = {r.get("says_state_persists") for r in row.records} - {None}
        versus = "—" if session is None or not session.tokens or arm == "codeact" else f"{row.tokens / session.tokens:.2f}×"
        lines.append(f"| {arm} | {FOLLOWUP_HOW[arm]} | {fmt(row.requests)} | {fmt(row.tokens)} | {versus} | "
                     f"{fmt(step(row, 0, 'requests'))}, {fmt(step(row, 0, 'tokens'))} | "
                     f"{fmt(step(row, 1, 'requests'))}, {fmt(step(row, 1, 'tokens'))} | "
                     f"{'/'.join('yes' if v else 'no' for v in sorted(says)) or '—'} | {'yes' if row.correct else 'NO'} |")
    return lines


def mark(met: bool | None) -> str:
    return "—" if met is None else ("✅" if met else "❌")


def report(meta: dict[str, Any], rows: dict[tuple[str, str], Row], tax: dict[str, Any] | None,
           splits: dict[str, dict[str, Any]], goals: list[tuple[str, str, str, bool | None]],
           server_tools: dict[str, list[str]] | None = None) -> str:
    lines = [
        "# codeact token economy",
        "",
        f"Copilot CLI {meta['copilot_version']} driven by a scripted model server (chat completions); tokens are "
        f"o200k_base over every message text, tool-call arguments and the tool list, + {PER_MESSAGE_TOKENS} per "
        f"message, summed over the model requests of a run. {meta['runs']} run(s) per row (median). "
        f"{meta['date']}, {meta['host']}.",
        "",
        "| scenario | arm | requests | prompt tokens | × baseline | bytes sent | correct |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for (scenario, arm), row in rows.items():
        r = ratio(rows, scenario, arm, "baseline")
        lines.append(f"| {scenario} | {arm} | {fmt(row.requests)} | {fmt(row.tokens)} | "
                     f"{'—' if r is None else f'{r:.2f}×'} | {fmt(row.bytes_sent)} | {'yes' if row.correct else 'NO'} |")
    lines += ["", "Arms:", ""]
    used = {arm for _, arm in rows}
    lines += [f"- `{arm.name}`: {arm.what}" for arm in ARMS if arm.name in used]
    if tax:
        lines += ["", "## Tax per request", "",
                  f"The first request of find-todos with codeact ({fmt(tax['codeact_tokens'])} tokens) against the "
                  f"same request without it ({fmt(tax['baseline_tokens'])} tokens); every later request repeats it.",
                  "", "| part | tokens | note |", "|---|---:|---|"]
        lines += [f"| {p['part']} | {p['tokens']} | {p['note']} |" for p in tax["parts"]]
        lines.append(f"| **total** | **{tax['total']}** | |")
    if splits:
        lines += ["", "## First requests", "",
                  "What the first request of find-todos is made of in each arm that ran (every later request of the "
                  "run repeats it, plus the turns so far).", "",
                  "| arm | part | tokens |", "|---|---|---:|"]
        for arm, split in splits.items():
            lines += [f"| {arm} | {p['part']} | {p['tokens']} |" for p in split["parts"]]
            lines.append(f"| {arm} | **total** | **{split['total']}** |")
    lines += mcp_section(rows, server_tools, meta.get("mcp_copies", 1))
    lines += followup_section(rows)
    hooked = [rec for row in rows.values() if row.arm in ("nudge", "nudge-grep", "exclusive", "agent", "codeact")
              for rec in row.records]
    if hooked:
        lines += ["", "## What the hooks did", "", "| scenario | arm | run | calls, in order |", "|---|---|---:|---|"]
        lines += [f"| {rec['scenario']} | {rec['arm']} | {rec['run']} | {rec['hooks']} |" for rec in hooked]
    lines += ["", "## Targets", "", "| target | goal | measured | met |", "|---|---|---|---|"]
    lines += [f"| {t} | {g} | {m} | {mark(ok)} |" for t, g, m, ok in goals]
    failures = [rec for row in rows.values() for rec in row.records if not rec["correct"]]
    if failures:
        lines += ["", "## Wrong answers", ""]
        for rec in failures:
            lines += [f"- {rec['scenario']} / {rec['arm']} run {rec['run']}: "
                      + ("; ".join(rec["errors"]) or "the answer differs from the ground truth"),
                      f"  - expected `{json.dumps(rec['truth'])[:300]}`",
                      f"  - answered `{json.dumps(rec['parsed_answer'])[:300]}`",
                      f"  - run directory `{rec['run_dir']}`"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main


def plan(only: list[str] | None, arms: list[str] | None) -> list[tuple[Scenario, Arm]]:
    out = []
    for scenario in SCENARIOS:
        if only and scenario.name not in only:
            continue
        for arm in ARMS:
            if arm.name in scenario.policies and (not arms or arm.name in arms):
                out.append((scenario, arm))
    return out


def names(value: str, known: dict[str, Any], what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return items


def main() -> int:
    matrix = "\n".join(f"  {s.name:<14} {', '.join(a.name for a in ARMS if a.name in s.policies)}" for s in SCENARIOS)
    parser = argparse.ArgumentParser(
        prog="bench/economy", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Token economy of codeact with the real Copilot CLI and a scripted model server.",
        epilog=f"Scenarios and the arms each runs:\n{matrix}\n\nArms:\n"
        + "\n".join(f"  {a.name:<11} {a.what}" for a in ARMS)
        + "\n\nExit status: 1 when an answer is wrong or a run fails; a missed target is only marked ❌.")
    parser.add_argument("--only", type=lambda v: names(v, SCENARIO_BY_NAME, "scenario"), metavar="SCENARIO[,…]",
                        help="run only these scenarios")
    parser.add_argument("--arms", type=lambda v: names(v, ARM_BY_NAME, "arm"), metavar="ARM[,…]",
                        help="run only these arms")
    parser.add_argument("--runs", type=int, default=1, help="runs of each scenario and arm (default 1; the token "
                        "counts are near-deterministic); the report shows medians")
    parser.add_argument("--mcp-copies", type=int, default=1, metavar="N", help="mcp-servers: configure each of its "
                        "three MCP servers N times (default 1), to see how the cost grows with the number of tools")
    parser.add_argument("--keep", action="store_true", help="keep every run's workspace, HOME and request log under "
                        "<work-dir>/economy-runs/ (by default only the request logs and records are kept)")
    parser.add_argument("--copilot", type=Path, default=REPO_ROOT / "tests/e2e/node_modules/.bin/copilot",
                        help="the Copilot CLI (default: the one tests/e2e pins)")
    parser.add_argument("--codeact", type=Path, default=None, help="the codeact binary (set by bench/economy)")
    parser.add_argument("--benchtool", type=Path, default=None, help="the token counter (set by bench/economy)")
    parser.add_argument("--work-dir", type=Path, default=BENCH_DIR / "work", help="where results go")
    args = parser.parse_args()
    if args.codeact is None or args.benchtool is None:
        parser.error("--codeact and --benchtool are required (bench/economy passes them)")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.mcp_copies < 1:
        parser.error("--mcp-copies must be at least 1")

    work_dir = args.work_dir.resolve()
    setup = Setup(copilot=args.copilot.resolve(), codeact=args.codeact.resolve(), benchtool=args.benchtool.resolve(),
                  work_dir=work_dir, runs_dir=work_dir / "economy-runs", cache_dir=work_dir / "copilot-cache",
                  path=clean_path(os.environ.get("PATH", "/usr/bin:/bin")), mcp_copies=args.mcp_copies)
    setup.cache_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(setup.runs_dir, ignore_errors=True)  # the runs of this invocation only
    setup.runs_dir.mkdir(parents=True)
    counter = TokenCounter(setup.benchtool, Path(tempfile.mkdtemp(prefix="codeact-economy-")))
    with tempfile.TemporaryDirectory(prefix="codeact-economy-home-") as home:
        version = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in base_env(setup, Path(home)).items()),
                                  str(setup.copilot), "--version"], capture_output=True, text=True).stdout.strip()
    found = re.search(r"\d+\.\d+\.\d+", version)
    meta = {"copilot_version": found.group(0) if found else "?", "runs": args.runs,
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": f"{os.cpu_count()} CPUs", "codeact": str(setup.codeact), "model": MODEL}

    todo = plan(args.only, args.arms)
    server_tools = None
    if any(scenario.name == "mcp-servers" for scenario, _ in todo):
        server_tools = count_server_tools(setup)
        meta["mcp_server_tools"] = {name: len(tools) for name, tools in server_tools.items()}
        meta["mcp_copies"] = args.mcp_copies
        log("MCP servers' tools (tools/list): " + ", ".join(f"{n} {len(t)}" for n, t in server_tools.items())
            + f", {sum(len(t) for t in server_tools.values())} in all")
    log(f"{len(todo)} scenario/arm pairs × {args.runs} run(s), one CLI at a time; runs under {setup.runs_dir}")
    rows: dict[tuple[str, str], Row] = {}
    failed = False
    for number, (scenario, arm) in enumerate(todo, 1):
        row = rows.setdefault((scenario.name, arm.name), Row(scenario.name, arm.name, []))
        for index in range(1, args.runs + 1):
            try:
                record = run_one(setup, counter, scenario, arm, index)
            except Exception as err:  # noqa: BLE001 - a failed setup is reported as a wrong answer
                record = {"scenario": scenario.name, "arm": arm.name, "run": index, "requests": 0,
                          "prompt_tokens": 0, "bytes_sent": 0, "correct": False, "errors": [f"{err}"],
                          "events": [], "hooks": "", "codeact_exit_codes": [], "truth": None,
                          "parsed_answer": None, "run_dir": str(keep(setup, scenario, arm, index))}
            row.records.append(record)
            failed |= not record["correct"]
            log(f"[{number}/{len(todo)}] {scenario.name} / {arm.name} run {index}: {record['requests']} requests, "
                f"{record['prompt_tokens']:,} tokens, {'correct' if record['correct'] else 'WRONG'}"
                + (f" ({'; '.join(record['errors'])[:300]})" if record["errors"] else "")
                + (f" [{record['hooks']}]" if record.get("hooks") and arm.plugin else ""))
            if not args.keep:
                for sub in ("ws", "home"):
                    shutil.rmtree(Path(record["run_dir"]) / sub, ignore_errors=True)

    tax = None
    base_dir, codeact_dir = setup.runs_dir / "find-todos--baseline--1", setup.runs_dir / "find-todos--codeact--1"
    if ("find-todos", "baseline") in rows and ("find-todos", "codeact") in rows \
            and (base_dir / "first-request.json").exists() and (codeact_dir / "first-request.json").exists():
        instructions = codeact_dir / "instructions.md"
        tax = tax_split(counter, json.loads((base_dir / "first-request.json").read_text()),
                        json.loads((codeact_dir / "first-request.json").read_text()),
                        instructions.read_text() if instructions.exists() else None)
    splits = {}
    for arm in ("baseline", "codeact", "agent"):
        first = setup.runs_dir / f"find-todos--{arm}--1" / "first-request.json"
        if ("find-todos", arm) in rows and first.exists():
            splits[arm] = first_request_split(counter, json.loads(first.read_text()))
    goals = targets(rows, tax) + mcp_targets(rows)
    text = report(meta, rows, tax, splits, goals, server_tools)
    print(text)
    (work_dir / "economy.md").write_text(text)
    data = {"meta": meta, "runs": [rec for row in rows.values() for rec in row.records], "tax": tax,
            "first_requests": splits,
            "targets": [{"target": t, "goal": g, "measured": m, "met": ok} for t, g, m, ok in goals]}
    (work_dir / "economy.json").write_text(json.dumps(data, indent=1, default=str))
    log(f"wrote {work_dir / 'economy.md'} and {work_dir / 'economy.json'}")
    shutil.rmtree(counter.scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
