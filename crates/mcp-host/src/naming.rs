//! The names a model sees: derived from server and tool, valid for every vendor, unique,
//! and mapped back exactly.
//!
//! A name is restricted to the intersection of what the vendors accept: OpenAI and
//! Anthropic allow `^[a-zA-Z0-9_-]{1,64}$`, Gemini also allows `.` and `:` but wants a
//! letter or an underscore first. So a derived name matches
//! `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$` (with the default length limit), and one list of
//! names serves every vendor.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The safe length limit of a tool name across vendors.
pub const DEFAULT_MAX_NAME_LEN: usize = 64;

/// The shortest length limit [`NamingPolicy::max_len`] accepts: room for one character,
/// an underscore and a 16-character hash.
const MIN_MAX_LEN: usize = 18;

/// How model-visible names are derived from (server, tool).
///
/// The default is `server__tool`, at most 64 characters; with a [`prefix`](Self::prefix),
/// `prefix__server__tool` (AgentScope's `mcp__server__tool`, for instance). A name that
/// had to be shortened, or that two tools would share, gets a short stable hash suffix
/// (`_` and 8 hex digits of the SHA-256 of server and tool), so the same tool keeps its
/// name from run to run. Names map back through the catalog's table, never by splitting
/// them at the separator, so a server or tool name that contains the separator is safe.
///
/// ```
/// use mcp_host::NamingPolicy;
///
/// let policy = NamingPolicy::default();
/// assert_eq!(policy.base_name("github", "create_issue"), "github__create_issue");
/// // Characters no vendor accepts become underscores.
/// assert_eq!(policy.base_name("my server", "get.weather"), "my_server__get_weather");
/// assert_eq!(NamingPolicy::default().separator("_").base_name("a", "b"), "a_b");
/// assert_eq!(NamingPolicy::default().tool_only().base_name("a", "b"), "b");
/// assert_eq!(NamingPolicy::default().prefix("mcp").base_name("a", "b"), "mcp__a__b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamingPolicy {
    /// Put before every name, followed by the separator (default none).
    pub prefix: Option<String>,
    /// Put between the prefix, the server name and the tool name (default `__`).
    pub separator: String,
    /// Whether the server name is a prefix (default true). Without it, tools of two
    /// servers that share a name get hash suffixes.
    pub prefix_server: bool,
    /// The longest name (default 64, at least 18).
    pub max_len: usize,
}

impl Default for NamingPolicy {
    fn default() -> Self {
        NamingPolicy {
            prefix: None,
            separator: "__".to_owned(),
            prefix_server: true,
            max_len: DEFAULT_MAX_NAME_LEN,
        }
    }
}

impl NamingPolicy {
    /// Puts `prefix` and the separator before every name (`mcp` gives
    /// `mcp__server__tool`).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Sets the separator between prefix, server and tool.
    #[must_use]
    pub fn separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// Uses the tool name alone (collisions get hash suffixes).
    #[must_use]
    pub fn tool_only(mut self) -> Self {
        self.prefix_server = false;
        self
    }

    /// Sets the length limit (values below 18 count as 18).
    #[must_use]
    pub fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len.max(MIN_MAX_LEN);
        self
    }

    pub(crate) fn limit(&self) -> usize {
        self.max_len.max(MIN_MAX_LEN)
    }

    /// The name before length limits and collisions: the prefix (if any), the server (if
    /// [`prefix_server`](Self::prefix_server)) and the tool joined by the separator, every
    /// character outside `[a-zA-Z0-9_-]` replaced by `_`, with `_` in front when the first
    /// character is not a letter or an underscore. It may be longer than the limit.
    pub fn base_name(&self, server: &str, tool: &str) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(3);
        parts.extend(self.prefix.as_deref());
        if self.prefix_server {
            parts.push(server);
        }
        parts.push(tool);
        let joined = parts.join(&self.separator);
        let mut name: String = joined
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            name.insert(0, '_');
        }
        name
    }

    /// `base` cut to leave room for `_` and `hash`, then `_` and `hash` appended.
    fn with_suffix(&self, base: &str, hash: &str) -> String {
        let room = self.limit() - hash.len() - 1;
        // The base is ASCII, so any byte index is a character boundary.
        let cut = &base[..base.len().min(room)];
        format!("{cut}_{hash}")
    }

    /// Assigns a unique model-visible name to each (server, tool), in input order.
    ///
    /// A base name within the limit that no other entry shares is used as is. The others
    /// get an 8-digit hash suffix; should even that collide, 16 digits, then a counter.
    /// The result depends only on the set of entries, not on their order.
    pub fn assign<'a>(&self, entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
        self.assign_avoiding(entries, &HashSet::new())
    }

    /// [`assign`](Self::assign), where no entry gets a name of `reserved` (the names given
    /// explicitly to other tools): a base name in it is suffixed as a shared one is.
    pub(crate) fn assign_avoiding<'a>(
        &self,
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
        reserved: &HashSet<String>,
    ) -> Vec<String> {
        let entries: Vec<(&str, &str)> = entries.into_iter().collect();
        let bases: Vec<String> = entries
            .iter()
            .map(|(server, tool)| self.base_name(server, tool))
            .collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for base in &bases {
            *counts.entry(base.as_str()).or_default() += 1;
        }
        let plain: Vec<bool> = bases
            .iter()
            .map(|base| {
                base.len() <= self.limit() && counts[base.as_str()] == 1 && !reserved.contains(base)
            })
            .collect();
        let mut taken: HashSet<String> = bases
            .iter()
            .zip(&plain)
            .filter(|(_, plain)| **plain)
            .map(|(base, _)| base.clone())
            .chain(reserved.iter().cloned())
            .collect();
        let mut names = Vec::with_capacity(entries.len());
        for (i, (server, tool)) in entries.iter().enumerate() {
            if plain[i] {
                names.push(bases[i].clone());
                continue;
            }
            let hash = stable_hash(server, tool);
            let mut name = self.with_suffix(&bases[i], &hash[..8]);
            if taken.contains(&name) {
                name = self.with_suffix(&bases[i], &hash[..16]);
            }
            let mut n = 2u32;
            while taken.contains(&name) {
                // Only identical (server, tool) pairs get here; keep it bounded anyway.
                name = self.with_suffix(&bases[i], &format!("{}{n}", &hash[..8]));
                n += 1;
            }
            taken.insert(name.clone());
            names.push(name);
        }
        names
    }
}

/// Whether `name` is a model-visible name of at most `limit` characters:
/// `^[a-zA-Z_][a-zA-Z0-9_-]*$`, which every vendor accepts.
pub(crate) fn is_model_name(name: &str, limit: usize) -> bool {
    name.len() <= limit
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The hex SHA-256 of `server`, a NUL and `tool`.
fn stable_hash(server: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str, limit: usize) -> bool {
        is_model_name(name, limit)
    }

    #[test]
    fn names_are_valid_unique_and_stable() {
        let long = "x".repeat(100);
        let entries = [
            ("a__b", "c"),
            ("a", "b__c"),
            ("a.b", "c"),
            ("a_b", "c"),
            ("9lives", "ünïcode tool"),
            ("srv", long.as_str()),
            ("srv", ""),
            ("", ""),
        ];
        let policy = NamingPolicy::default();
        let names = policy.assign(entries);
        assert_eq!(names.len(), entries.len());
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for name in &names {
            assert!(valid(name, 64), "{name}");
        }
        assert_eq!(names[4], "_9lives___n_code_tool");
        assert!(names[0].starts_with("a__b__c_") && names[1].starts_with("a__b__c_"));
        assert!(names[2].starts_with("a_b__c_") && names[3].starts_with("a_b__c_"));
        assert_eq!(names[5].len(), 64);
        assert_eq!(names[6], "srv__");
        // Order does not change a name.
        let mut reversed = entries;
        reversed.reverse();
        let mut again = policy.assign(reversed);
        again.reverse();
        assert_eq!(again, names);
        assert_eq!(policy.max_len(3).limit(), MIN_MAX_LEN);
    }

    #[test]
    fn a_prefix_comes_first_and_names_stay_valid() {
        let long = "y".repeat(80);
        let entries = [
            ("github", "create_issue"),
            ("a", "b__c"),
            ("a__b", "c"),
            ("srv", long.as_str()),
        ];
        let policy = NamingPolicy::default().prefix("mcp");
        let names = policy.assign(entries);
        assert_eq!(names[0], "mcp__github__create_issue");
        // `a` + `b__c` and `a__b` + `c` would both be `mcp__a__b__c`: both get suffixes.
        assert!(names[1].starts_with("mcp__a__b__c_") && names[2].starts_with("mcp__a__b__c_"));
        assert_ne!(names[1], names[2]);
        assert!(names[3].starts_with("mcp__srv__yyy") && names[3].len() == 64);
        for name in &names {
            assert!(valid(name, 64), "{name}");
        }
        let tool_only = NamingPolicy::default()
            .prefix("mcp")
            .separator("_")
            .tool_only();
        assert_eq!(tool_only.base_name("s", "t"), "mcp_t");
    }
}
