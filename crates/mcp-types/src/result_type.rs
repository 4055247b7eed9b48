//! `resultType`: how a client reads a result (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, Results).

use std::fmt;

/// The kind of a result: `complete`, `input_required`, or a value an extension defines
/// (such as `task`).
///
/// A result from a server of an earlier revision has no `resultType`; the spec says to read
/// it as `complete`, so that is the [`Default`] and what the generated result types assume
/// when the member is absent. Whether an extension value is acceptable depends on what was
/// negotiated, so unknown values are kept (in [`ResultType::Other`]) for the client to judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the result holds the final content.
    #[default]
    Complete,
    /// `"input_required"`: the server needs more input before it can finish (MRTR).
    InputRequired,
    /// Any other value, such as an extension's `"task"`.
    Other(String),
}

impl ResultType {
    /// The value as it appears on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            other => ResultType::Other(other.to_owned()),
        }
    }
}

// Any string is a result type: the ones this version does not know are kept as `Other`.
crate::tag::serde_as_str!(ResultType, |s: &str| {
    Ok::<_, std::convert::Infallible>(ResultType::from(s))
});
