//! Protocol revisions, their order and their era (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>).

use std::fmt;
use std::str::FromStr;

/// One of the five MCP revisions, ordered oldest first.
///
/// ```
/// use mcp_types::{Era, ProtocolVersion};
///
/// let v: ProtocolVersion = "2025-06-18".parse()?;
/// assert_eq!(v.era(), Era::Legacy);
/// assert!(ProtocolVersion::LATEST > v);
/// assert_eq!(ProtocolVersion::LATEST.as_str(), "2026-07-28");
/// # Ok::<(), mcp_types::UnknownVersion>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first published revision.
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, audio content, tool annotations, batching.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, resource links; no batching.
    V2025_06_18,
    /// `2025-11-25`: URL elicitation, sampling with tools, core tasks, icons.
    V2025_11_25,
    /// `2026-07-28`: stateless; no `initialize`, version and capabilities in every `_meta`.
    V2026_07_28,
}

/// Which family a revision belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// The initialize-era revisions: a handshake, sessions, server-to-client requests.
    Legacy,
    /// 2026-07-28 and later: every request carries its version and capabilities.
    Modern,
}

/// A version string that names none of the known revisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCP protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl ProtocolVersion {
    /// The current revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The version string as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether this revision uses the `initialize` handshake (legacy) or per-request
    /// metadata (modern).
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, UnknownVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

crate::tag::serde_as_str!(ProtocolVersion, str::parse::<ProtocolVersion>);

#[cfg(test)]
mod tests {
    use super::{Era, ProtocolVersion};

    #[test]
    fn every_revision_parses_back_and_is_ordered() {
        for pair in ProtocolVersion::ALL.windows(2) {
            assert!(pair[0] < pair[1]);
            assert!(
                pair[0].as_str() < pair[1].as_str(),
                "string order matches date order"
            );
        }
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
            let expected = if v == ProtocolVersion::LATEST {
                Era::Modern
            } else {
                Era::Legacy
            };
            assert_eq!(v.era(), expected);
        }
        assert!("2025-01-01".parse::<ProtocolVersion>().is_err());
        assert!(serde_json::from_str::<ProtocolVersion>("\"DRAFT\"").is_err());
    }
}
