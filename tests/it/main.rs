//! The integration tests: every test runs the real `codeact` binary in an isolated
//! environment built by [`support::TestEnv`].

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "a test fails loudly on the first surprise")]

mod check;
mod cli;
mod config;
mod corpus;
mod discover;
mod e2e;
mod github;
mod hook;
mod install;
mod limits;
mod mcp;
mod model;
mod output;
mod plugin;
mod security;
mod support;
mod tools;
mod usertools;
mod wasm;
mod web;
