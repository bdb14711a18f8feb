//! Imports the guest may name but never gets, one file per WASI package: [`sockets`], [`http`]
//! and terminals ([`terminal`]).
//!
//! The guest has no network and no terminal. Creating a socket or resolving a name is denied
//! (`AccessDenied`, a `PermissionError` in Python), and `wasi:http/outgoing-handler` refuses
//! every request (`HTTP-request-denied`): a program's HTTP goes through codeact's `web_fetch`
//! tool, which applies the network policy. Resources that can never be created (sockets,
//! incoming messages, futures) still answer every method: with the refusal where the signature
//! has an error case, else with a harmless default or a ready pollable.

mod http;
mod sockets;
mod terminal;
