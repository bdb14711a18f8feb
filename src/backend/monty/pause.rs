//! The pauses of a Monty run that the host answers, alike for a one-shot program
//! ([`RunProgress`]) and for a program fed to a session that keeps its state ([`ReplProgress`]).
//! The run loop ([`super::run`]) and the OS calls ([`super::os`]) are written once against
//! these traits.
//!
//! A session's interpreter state travels inside each pause and comes back with the end of
//! the program, or with the exception that ended it: [`Flow::step`] keeps it aside.

use std::time::Duration;

use monty::{
    FunctionCall, MontyRepl, NameLookup, OsCall, ReplFunctionCall, ReplNameLookup, ReplOsCall, ReplProgress,
    ReplResolveFutures, ReplStartError, ResolveFutures, RunProgress,
};
use monty_types::{
    CallArgs, ExtFunctionResult, MontyException, MontyObject, MontyUuid, NameLookupResult, OsFunctionCall, PrintWriter,
    ResourceTracker,
};

/// Where a run stands after a step.
pub(super) enum Stage<F: Flow> {
    /// The program ended with this value.
    Done(MontyObject),
    Call(F::Call),
    Os(F::Os),
    Lookup(F::Lookup),
    Futures(F::Futures),
}

/// One kind of run: what its steps give, and how a step is read.
pub(super) trait Flow: Sized {
    /// What resuming a pause gives.
    type Next;
    type Call: Call<Next = Self::Next>;
    type Os: Os<Next = Self::Next>;
    type Lookup: Lookup<Next = Self::Next>;
    type Futures: Pause<Next = Self::Next>;
    /// What the run keeps aside between steps: a session's state.
    type Kept: Default;

    /// Where `next` leaves the run, or the exception that ended it. `turn` is what is left of
    /// the run, for an interpreter whose pauses do not hold its limits ([`Call::tracker_mut`]).
    fn step(next: Self::Next, kept: &mut Self::Kept, turn: Duration) -> Result<Stage<Self>, MontyException>;
}

/// A paused run, which may be ended by an exception raised where it paused.
pub(super) trait Pause {
    type Next;
    /// Raises `exc`, uncatchably, where the run paused.
    fn abort(self, exc: MontyException, print: PrintWriter<'_>) -> Self::Next;
}

/// A call of a function the program did not define: a tool.
pub(super) trait Call: Pause {
    fn function_name(&self) -> &str;
    fn object_id(&self) -> Option<MontyUuid>;
    /// The arguments, taken out of the pause.
    fn take_args(&mut self) -> CallArgs;
    /// The limits the interpreter resumes with, where the pause holds them.
    fn tracker_mut(&mut self) -> Option<&mut ResourceTracker>;
    fn resume(self, result: ExtFunctionResult, print: PrintWriter<'_>) -> Self::Next;
}

/// An `open()`, `pathlib`, `os` or `time.sleep` call.
pub(super) trait Os: Pause {
    fn request(&self) -> &OsFunctionCall;
    /// Whether [`resume_eager`](Self::resume_eager) may answer an awaited call.
    fn eager(&self) -> bool;
    fn resume(self, result: ExtFunctionResult, print: PrintWriter<'_>) -> Self::Next;
    fn resume_eager(self, result: Result<MontyObject, MontyException>, print: PrintWriter<'_>) -> Self::Next;
}

/// A name the program did not define.
pub(super) trait Lookup: Pause {
    fn name(&self) -> &str;
    fn object_id(&self) -> Option<MontyUuid>;
    fn resume(self, result: NameLookupResult, print: PrintWriter<'_>) -> Self::Next;
}

/// A one-shot program.
pub(super) struct Once;

impl Flow for Once {
    type Next = Result<RunProgress, MontyException>;
    type Call = FunctionCall;
    type Os = OsCall;
    type Lookup = NameLookup;
    type Futures = ResolveFutures;
    type Kept = ();

    fn step(next: Self::Next, (): &mut (), _turn: Duration) -> Result<Stage<Self>, MontyException> {
        Ok(match next? {
            RunProgress::Complete(value) => Stage::Done(value),
            RunProgress::FunctionCall(call) => Stage::Call(call),
            RunProgress::OsCall(call) => Stage::Os(call),
            RunProgress::NameLookup(lookup) => Stage::Lookup(lookup),
            RunProgress::ResolveFutures(futures) => Stage::Futures(futures),
        })
    }
}

/// A program fed to a session: its state is kept, however the program ends.
pub(super) struct Fed;

impl Flow for Fed {
    type Next = Result<ReplProgress, Box<ReplStartError>>;
    type Call = ReplFunctionCall;
    type Os = ReplOsCall;
    type Lookup = ReplNameLookup;
    type Futures = ReplResolveFutures;
    type Kept = Option<MontyRepl>;

    fn step(next: Self::Next, kept: &mut Option<MontyRepl>, turn: Duration) -> Result<Stage<Self>, MontyException> {
        let next = next.map(|mut progress| {
            progress.tracker_mut().set_max_turn_duration(turn);
            progress
        });
        match next {
            Err(failed) => {
                let ReplStartError { repl, error } = *failed;
                *kept = Some(repl);
                Err(error)
            }
            Ok(ReplProgress::Complete { repl, value }) => {
                *kept = Some(repl);
                Ok(Stage::Done(value))
            }
            Ok(ReplProgress::FunctionCall(call)) => Ok(Stage::Call(call)),
            Ok(ReplProgress::OsCall(call)) => Ok(Stage::Os(call)),
            Ok(ReplProgress::NameLookup(lookup)) => Ok(Stage::Lookup(lookup)),
            Ok(ReplProgress::ResolveFutures(futures)) => Ok(Stage::Futures(futures)),
        }
    }
}

/// The same methods, of the same names, on both kinds of run.
macro_rules! pauses {
    ($next:ty, $call:ty, $os:ty, $lookup:ty, $futures:ty, |$this:ident| $tracker:expr) => {
        impl Pause for $call {
            type Next = $next;
            fn abort(self, exc: MontyException, print: PrintWriter<'_>) -> $next {
                <$call>::abort(self, exc, print)
            }
        }

        impl Call for $call {
            fn function_name(&self) -> &str {
                &self.function_name
            }
            fn object_id(&self) -> Option<MontyUuid> {
                self.object_id
            }
            fn take_args(&mut self) -> CallArgs {
                std::mem::take(&mut self.args)
            }
            fn tracker_mut(&mut self) -> Option<&mut ResourceTracker> {
                let $this = self;
                $tracker
            }
            fn resume(self, result: ExtFunctionResult, print: PrintWriter<'_>) -> $next {
                <$call>::resume(self, result, print)
            }
        }

        impl Pause for $os {
            type Next = $next;
            fn abort(self, exc: MontyException, print: PrintWriter<'_>) -> $next {
                <$os>::abort(self, exc, print)
            }
        }

        impl Os for $os {
            fn request(&self) -> &OsFunctionCall {
                &self.function_call
            }
            fn eager(&self) -> bool {
                self.allow_eager_await
            }
            fn resume(self, result: ExtFunctionResult, print: PrintWriter<'_>) -> $next {
                <$os>::resume(self, result, print)
            }
            fn resume_eager(self, result: Result<MontyObject, MontyException>, print: PrintWriter<'_>) -> $next {
                <$os>::resume_eager(self, result, print)
            }
        }

        impl Pause for $lookup {
            type Next = $next;
            fn abort(self, exc: MontyException, print: PrintWriter<'_>) -> $next {
                <$lookup>::abort(self, exc, print)
            }
        }

        impl Lookup for $lookup {
            fn name(&self) -> &str {
                &self.name
            }
            fn object_id(&self) -> Option<MontyUuid> {
                <$lookup>::object_id(self)
            }
            fn resume(self, result: NameLookupResult, print: PrintWriter<'_>) -> $next {
                <$lookup>::resume(self, result, print)
            }
        }

        impl Pause for $futures {
            type Next = $next;
            fn abort(self, exc: MontyException, print: PrintWriter<'_>) -> $next {
                <$futures>::abort(self, exc, print)
            }
        }
    };
}

pauses!(Result<RunProgress, MontyException>, FunctionCall, OsCall, NameLookup, ResolveFutures, |call| Some(
    call.tracker_mut()
));
// A session's pause keeps its limits inside: [`Fed::step`] sets them instead.
pauses!(
    Result<ReplProgress, Box<ReplStartError>>,
    ReplFunctionCall,
    ReplOsCall,
    ReplNameLookup,
    ReplResolveFutures,
    |_call| None
);
