//! Request ids and progress tokens: a string or an integer, nothing else.
//!
//! JSON-RPC 2.0 allows a string, a number or null as an id; MCP narrows that to a string or
//! an integer and forbids null (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, Requests). Integers are
//! kept exactly as `i64` (so 9007199254740993, which a float would round, survives);
//! fractional numbers, integers beyond `i64`, booleans, objects, arrays and null are refused.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The id of a JSON-RPC request: a string or an integer.
///
/// ```
/// use mcp_types::RequestId;
///
/// let id: RequestId = serde_json::from_str("9007199254740993")?;
/// assert_eq!(id, RequestId::Integer(9_007_199_254_740_993));
/// assert_eq!(serde_json::to_string(&id)?, "9007199254740993");
/// assert!(serde_json::from_str::<RequestId>("1.5").is_err());
/// assert!(serde_json::from_str::<RequestId>("null").is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, kept exactly.
    Integer(i64),
    /// A string id.
    String(String),
}

/// A progress token has the same shape and rules as a request id
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/progress>).
pub type ProgressToken = RequestId;

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Integer(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Integer(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Integer(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer id")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
        Ok(RequestId::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
        i64::try_from(v)
            .map(RequestId::Integer)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &"an integer id within i64"))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RequestId, E> {
        Err(E::invalid_value(
            de::Unexpected::Float(v),
            &"an integer id (fractional and out-of-range numbers are not ids)",
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
        Ok(RequestId::String(v))
    }
}

#[cfg(test)]
mod tests {
    use super::RequestId;

    fn check(json: &str, expected: Result<RequestId, &str>) {
        let got = serde_json::from_str::<RequestId>(json);
        match (got, expected) {
            (Ok(id), Ok(want)) => {
                assert_eq!(id, want, "{json}");
                assert_eq!(
                    serde_json::to_string(&id).unwrap(),
                    json,
                    "round trip of {json}"
                );
            }
            (Err(e), Err(fragment)) => {
                assert!(e.to_string().contains(fragment), "{json}: {e}");
            }
            (got, want) => panic!("{json}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn ids() {
        check("0", Ok(RequestId::Integer(0)));
        check("-7", Ok(RequestId::Integer(-7)));
        check(
            "9007199254740993",
            Ok(RequestId::Integer(9_007_199_254_740_993)),
        );
        check("9223372036854775807", Ok(RequestId::Integer(i64::MAX)));
        check("-9223372036854775808", Ok(RequestId::Integer(i64::MIN)));
        check("\"abc\"", Ok(RequestId::String("abc".into())));
        check("\"\"", Ok(RequestId::String(String::new())));
        check("9223372036854775808", Err("within i64"));
        check("1.5", Err("fractional"));
        check("1.0", Err("fractional"));
        check("1e3", Err("fractional"));
        check("true", Err("a string or an integer id"));
        check("null", Err("a string or an integer id"));
        check("{}", Err("a string or an integer id"));
        check("[1]", Err("a string or an integer id"));
    }
}
