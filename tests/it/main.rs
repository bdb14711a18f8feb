//! The integration tests: every test runs the real `codeact` binary in an isolated
//! environment built by [`support::TestEnv`].

// Everything in this crate is test code, helpers included: it fails loudly on the first
// surprise, as unit tests may (`allow-unwrap-in-tests` in `clippy.toml`).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "a test fails loudly on the first surprise")]

// Helpers.
mod anthropic;
mod model;
mod support;

// One module per area.
mod agentfolder;
mod agentschema;
mod check;
mod claude;
mod cli;
mod config;
mod conformance;
mod corpus;
mod discover;
mod e2e;
mod fallback;
mod fidelity;
mod github;
mod hook;
mod hyperlight;
mod install;
mod javascript;
mod limits;
mod mcp;
mod mcpconfig;
mod output;
mod packages;
mod plugin;
mod security;
mod serve;
mod tools;
mod trust;
mod usertools;
mod wasm;
mod web;
