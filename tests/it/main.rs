//! The integration tests: every test runs the real `codeact` binary in an isolated
//! environment built by [`support::TestEnv`].

mod cli;
mod config;
mod corpus;
mod discover;
mod limits;
mod output;
mod security;
mod support;
mod tools;
