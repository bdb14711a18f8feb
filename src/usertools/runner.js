// codeact's runner for JavaScript tools (`node -e`), doing what agentschema 0.2 does with a
// tool's code. One JSON request on stdin:
//   {"check": [source, …]}  parse each source as agentschema's `check` does; stdout gets, per
//                           source, null or [line, message] (the line as V8 counts it).
//   {"run": {code, filename, folder, workspace, file, input, reply}}
//                           run one call as agentschema's `runTool` does and write the answer
//                           to the file `reply`: {"text": s} for a string result (or one that
//                           JSON.stringify turns into nothing), {"json": s} for any other, with
//                           s its JSON text, or {"error": message}.
// Nothing the tool prints can reach the answer: console and process.stdout go to stderr, and
// even a raw write to fd 1 only lands on stdout, which codeact relays as the tool's output.
"use strict";
(() => {
  // `node -e` gives the global object the script's `require`, `module`, … ; agentschema's
  // process has none of them, and the tool's code must not see this runner's.
  const builtin = require;
  for (const name of ["require", "module", "exports", "__filename", "__dirname"]) delete globalThis[name];
  const fs = builtin("node:fs");
  const path = builtin("node:path");
  const vm = builtin("node:vm");
  const { createRequire } = builtin("node:module");
  const { stringify } = JSON;
  const writeFileSync = fs.writeFileSync;

  // The program can write anywhere in the workspace except the tools folders and the
  // `node_modules/` a tool loads packages from, which codeact refuses to its write tools. So a
  // module a tool loads must really be in one of those, or outside the workspace: a file found
  // through a link (npm's workspace links, `node_modules/x -> ../packages/x`) or a package's
  // `main` that leads elsewhere in the workspace is refused, for `require()` and, where Node
  // offers module hooks, `import` too.
  function guardModules(builtin, folder, workspace) {
    const real = (file) => {
      try {
        return fs.realpathSync(file);
      } catch {
        return null;
      }
    };
    const within = (file, dir) => dir !== null && (file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep));
    const root = real(workspace);
    const tools = real(folder);
    const packages = [];
    for (let dir = tools; dir !== null && within(dir, root); dir = path.dirname(dir)) {
      packages.push(path.join(dir, "node_modules"));
      if (dir === root) break;
    }
    const Module = builtin("node:module");
    // Without module hooks, what an ES module loaded by `require()` imports is resolved where
    // this guard cannot see it: such a module is refused where the program could have placed
    // what it imports.
    const hooked = typeof Module.registerHooks === "function";
    const typeModule = (dir) => {
      for (; within(dir, root); dir = path.dirname(dir)) {
        try {
          return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).type === "module";
        } catch (err) {
          if (err?.code !== "ENOENT") return true;
        }
        if (dir === root) break;
      }
      return false;
    };
    const esm = (at) => {
      if (at.endsWith(".mjs") || at.endsWith(".mts")) return true;
      if (!at.endsWith(".js") && !at.endsWith(".ts")) return false;
      if (typeModule(path.dirname(at))) return true;
      try {
        return /^\s*(import|export)\b/m.test(fs.readFileSync(at, "utf8"));
      } catch {
        return true;
      }
    };
    const check = (asked, found) => {
      if (!path.isAbsolute(found)) return;
      const at = real(found);
      if (at === null || !within(at, root)) return;
      if (within(at, tools) || packages.some((dir) => within(at, dir))) {
        if (hooked || !process.features.require_module || !esm(at)) return;
        throw new Error(
          `${file}: cannot load ${JSON.stringify(asked)}: it is an ES module in the workspace, and this Node (${process.version}) cannot show codeact what it imports; use Node 22.15 or later`,
        );
      }
      throw new Error(
        `${file}: cannot load ${JSON.stringify(asked)}: it leads to ${path.relative(root, at)}, a file of the workspace outside the tools folder and its node_modules, which the program may have written`,
      );
    };
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (asked, ...rest) {
      const found = resolve.call(this, asked, ...rest);
      check(asked, found);
      return found;
    };
    // A package may build a module itself rather than ask `require()`.
    const load = Module.prototype.load;
    Module.prototype.load = function (filename, ...rest) {
      check(filename, filename);
      return load.call(this, filename, ...rest);
    };
    if (typeof Module.registerHooks === "function") {
      const { fileURLToPath } = builtin("node:url");
      Module.registerHooks({
        resolve(asked, context, next) {
          const result = next(asked, context);
          if (result.url?.startsWith("file:")) check(asked, fileURLToPath(result.url));
          return result;
        },
      });
    }
  }

  // The same wrapper as agentschema's: nothing before the code's first line, so a line in the
  // script is the same line in the code.
  const wrap = (source) => `(function (exports, require, module, __filename, __dirname) {${source}\n})`;

  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  if (request.check) {
    const LONGEST = 1000;
    const answers = request.check.map((source) => {
      try {
        new vm.Script(wrap(source), { filename: "tool.js" });
        return null;
      } catch (err) {
        const line = /^tool\.js:(\d+)/.exec(String(err?.stack));
        const message = String(err?.message ?? err);
        return [line ? Number(line[1]) : 1, message.length > LONGEST ? `${message.slice(0, LONGEST)}…` : message];
      }
    });
    process.stdout.write(stringify(answers));
    return;
  }

  const { code, filename, folder, workspace, file, input, reply } = request.run;
  guardModules(builtin, folder, workspace);
  // `console.log` and its kin write through `process.stdout.write`, so this sends them all to
  // stderr, in order with `console.error`.
  process.stdout.write = process.stderr.write.bind(process.stderr);

  // agentschema's `loadTool`: a CommonJS module whose `module.exports` is the function, with
  // `require()` resolving from the tool's own file.
  const load = () => {
    const module = { exports: {} };
    const fn = vm.runInThisContext(wrap(code), { filename });
    fn(module.exports, createRequire(filename), module, filename, path.dirname(filename));
    if (typeof module.exports !== "function") throw new Error(`${file}: module.exports must be a function`);
    return module.exports;
  };
  // agentschema sends `Error: ${err?.message ?? err}`; a value whose conversion throws (a
  // Symbol, a bad toString) still gets a message.
  const describe = (err) => {
    try {
      return String(err?.message ?? err);
    } catch {
      return Object.prototype.toString.call(err);
    }
  };
  let answered = false;
  const finish = (answer) => {
    answered = true;
    writeFileSync(reply, stringify(answer));
    // Let what the tool printed drain, then end: a timer or socket it left open must not keep
    // the call waiting.
    setTimeout(() => process.exit(0), 1000);
    process.stderr.write("", () => process.exit(0));
  };

  // Node ends when nothing is left to wait on: a promise that can no longer settle.
  process.on("beforeExit", () => answered || finish({ error: "the tool's promise never settled" }));

  (async () => {
    try {
      const value = await load()(input);
      // A lone surrogate cannot cross as text; agentschema's API would not take it either.
      if (typeof value === "string") return { text: value.toWellFormed?.() ?? value };
      const json = stringify(value);
      return json === undefined ? { text: "" } : { json };
    } catch (err) {
      return { error: describe(err) };
    }
  })().then(finish);
})();
