//! Backends: where Python runs. [`select`] turns the requested [`Choice`] into a [`Backend`]
//! that can run here, or says why none can; [`Backend::prepare`] sets it up and
//! [`Prepared::run`] runs a program on it. [`preflight`] and [`statuses`] explain the choice.

mod choice;
pub(crate) mod hyperlight;
pub(crate) mod monty;
mod preflight;
mod select;
pub(crate) mod wasm;

pub(crate) use choice::Choice;
pub(crate) use preflight::{Check, Status, preflight, statuses};
pub(crate) use select::{
    Backend, BackendUnavailable, GuestSession, Prepared, cpython, fallback, select, select_without_probing,
};
