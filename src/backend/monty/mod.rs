//! The Monty backend: Python on pydantic's embedded interpreter. Only this folder names `monty`
//! or `monty_types` items, so an upgrade of Monty touches nothing else.

mod convert;
mod error;
mod os;
mod pause;
mod printer;
mod run;

pub(crate) use error::differs_from_cpython;
pub(crate) use run::{Session, VERSION, run, run_in, run_tool, syntax_error, with_interpreter_thread};
