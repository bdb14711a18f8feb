//! The integration tests: every test runs the real `codeact` binary in an isolated
//! environment built by [`support::TestEnv`].

// Everything in this crate is test code, helpers included: it fails loudly on the first
// surprise, as unit tests may (`allow-unwrap-in-tests` in `clippy.toml`).
#![cfg_attr(
    unix,
    expect(clippy::unwrap_used, clippy::expect_used, reason = "a test fails loudly on the first surprise")
)]
#![cfg_attr(windows, expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise"))]

// Helpers.
#[cfg(unix)]
mod anthropic;
#[cfg(unix)]
mod model;
#[cfg(unix)]
mod support;

// One module per area. They drive codeact through POSIX tools (`sh`, fixture servers in
// shell), so they run on Unix; `windows` holds what Windows runs, under Wine or on Windows.
#[cfg(unix)]
mod agentfolder;
#[cfg(unix)]
mod agents;
#[cfg(unix)]
mod agentschema;
#[cfg(unix)]
mod check;
#[cfg(unix)]
mod claude;
#[cfg(unix)]
mod cli;
#[cfg(unix)]
mod config;
#[cfg(unix)]
mod conformance;
#[cfg(unix)]
mod corpus;
#[cfg(unix)]
mod discover;
#[cfg(unix)]
mod e2e;
#[cfg(unix)]
mod fallback;
#[cfg(unix)]
mod fidelity;
#[cfg(unix)]
mod github;
#[cfg(unix)]
mod hook;
#[cfg(unix)]
mod hyperlight;
#[cfg(unix)]
mod install;
#[cfg(unix)]
mod javascript;
#[cfg(unix)]
mod limits;
#[cfg(unix)]
mod mcp;
#[cfg(unix)]
mod mcpconfig;
#[cfg(unix)]
mod output;
#[cfg(unix)]
mod packages;
#[cfg(unix)]
mod plugin;
#[cfg(unix)]
mod readonly;
#[cfg(unix)]
mod security;
#[cfg(unix)]
mod serve;
#[cfg(unix)]
mod session;
#[cfg(unix)]
mod setup;
#[cfg(unix)]
mod tools;
#[cfg(unix)]
mod trust;
#[cfg(unix)]
mod usertools;
#[cfg(unix)]
mod wasm;
#[cfg(unix)]
mod web;
#[cfg(windows)]
mod windows;
