//! Hints: the line that tells a person what to do about an error. A hint travels in an error's
//! chain as a [`Hint`] value — the source of the error it belongs to — and `output::error`
//! prints it on a `hint:` line of its own, after every cause.

use std::fmt::Display;

/// What to do about the error this is the source of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Hint(pub(crate) String);

impl Hint {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

/// An error saying `message`, with `hint`.
pub(crate) fn error(message: impl Display + Send + Sync + 'static, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Hint::new(hint)).context(message)
}

/// The message of `err` with all its causes, `: `-joined, and its hint.
#[must_use]
pub(crate) fn split(err: &anyhow::Error) -> (String, Option<String>) {
    let mut message = String::new();
    let mut hint = None;
    for cause in err.chain() {
        if let Some(found) = cause.downcast_ref::<Hint>() {
            hint.get_or_insert_with(|| found.0.clone());
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&cause.to_string());
    }
    (message, hint)
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::*;

    #[test]
    fn a_hint_is_printed_after_every_cause() {
        let err = Err::<(), _>(error("the guest is damaged", "reinstall it")).context("failed to start").unwrap_err();
        assert_eq!(split(&err), ("failed to start: the guest is damaged".into(), Some("reinstall it".into())));
    }

    #[test]
    fn a_typed_error_carries_its_hint_as_its_source() {
        #[derive(Debug, thiserror::Error)]
        #[error("not available")]
        struct Unavailable(#[source] Hint);
        let err = anyhow::Error::new(Unavailable(Hint::new("use another")));
        assert_eq!(split(&err), ("not available".into(), Some("use another".into())));
        assert_eq!(split(&anyhow::anyhow!("plain")), ("plain".into(), None));
    }
}
