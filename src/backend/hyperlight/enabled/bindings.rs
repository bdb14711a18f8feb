//! Host bindings for the guest runtime's world, generated from [`root.wit`](../root.wit).

#![allow(clippy::all, clippy::pedantic, unreachable_pub, missing_docs, reason = "generated code")]

hyperlight_component_macro::host_bindgen!(wit: "src/backend/hyperlight/root.wit");
