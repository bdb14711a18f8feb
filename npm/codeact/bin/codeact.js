#!/usr/bin/env node
// Runs the codeact binary from this platform's package, an optional dependency that npm installs
// only where its `os` and `cpu` match. Everything passes through: arguments, standard streams,
// the environment, signals and the exit status.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

/** The package that carries each platform's binary, by `${process.platform}-${process.arch}`. */
const PACKAGES = {
  "linux-x64": "@codeact/linux-x64",
  "linux-arm64": "@codeact/linux-arm64",
  "darwin-x64": "@codeact/darwin-x64",
  "darwin-arm64": "@codeact/darwin-arm64",
  "win32-x64": "@codeact/win32-x64",
};

function fail(message) {
  process.stderr.write(`codeact: ${message}\n`);
  process.exit(127);
}

function binary() {
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  if (name === undefined) {
    const known = Object.keys(PACKAGES).join(", ");
    fail(`no codeact binary is published for ${platform} (there are: ${known}); build it from source with 'cargo install codeact'`);
  }
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    fail(`the package ${name}, which holds the binary, is not installed; reinstall without omitting optional dependencies: npm install -g codeact`);
  }
  const file = process.platform === "win32" ? "codeact.exe" : "codeact";
  return path.join(path.dirname(manifest), "bin", file);
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });

// The terminal sends Ctrl-C to the whole process group; other senders (a supervisor, `kill`)
// reach only this process, so each signal is passed on. The child decides how to end.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on("error", (error) => fail(`could not start ${child.spawnfile}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // End the same way, so that whoever waits on this process sees the signal.
    for (const name of forwarded) {
      process.removeAllListeners(name);
    }
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
