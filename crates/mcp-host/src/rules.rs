//! The rules on which tools are exposed and which need approval: the [`Policy`] hook,
//! allow and deny lists and groups ([`Exposure`]), shared by the catalog and the
//! configuration. Pure data, no connection.

use std::collections::{BTreeMap, HashMap, HashSet};

use mcp_types::Tool;

/// What the policy decides for a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// The model sees the tool and calls run freely.
    Expose,
    /// The model sees the tool; each call needs approval (see `HostBuilder::approver`).
    RequireApproval,
    /// The model does not see the tool.
    Hide,
}

/// A policy hook: sees each tool (with its annotations) and decides its exposure.
///
/// Annotations are hints from the server (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>,
/// `ToolAnnotations` in the schema), untrusted unless the server is: a policy may only
/// make a tool *less* exposed because of them with confidence.
/// Any `Fn(&str, &Tool) -> Decision` is a policy.
pub trait Policy: Send + Sync {
    /// The decision for `tool` of `server`.
    fn decide(&self, server: &str, tool: &Tool) -> Decision;
}

impl<F: Fn(&str, &Tool) -> Decision + Send + Sync> Policy for F {
    fn decide(&self, server: &str, tool: &Tool) -> Decision {
        self(server, tool)
    }
}

/// A policy that asks for approval before any call that may destroy something: per the
/// schema's defaults (`destructiveHint` defaults to true, and matters only when
/// `readOnlyHint` is false), every tool except those annotated `readOnlyHint: true` or
/// `destructiveHint: false`.
///
/// ```
/// use mcp_host::{Decision, require_approval_if_destructive};
/// use mcp_types::Tool;
///
/// let tool = Tool::without_arguments("rm");
/// assert_eq!(require_approval_if_destructive("fs", &tool), Decision::RequireApproval);
/// ```
pub fn require_approval_if_destructive(_server: &str, tool: &Tool) -> Decision {
    let hints = tool.annotations.as_ref();
    let read_only = hints.and_then(|a| a.read_only_hint) == Some(true);
    let additive = hints.and_then(|a| a.destructive_hint) == Some(false);
    if read_only || additive {
        Decision::Expose
    } else {
        Decision::RequireApproval
    }
}

/// Which tools of one server need approval before each call, on top of the policy: those
/// its selectors name (`*` matching any run of characters) and, with
/// [`destructive`](Self::destructive), every tool [`require_approval_if_destructive`]
/// asks for. It can only add approval: a tool the policy hides stays hidden. Selectors
/// name the server's own tools, whatever the model sees them as.
///
/// ```
/// use mcp_host::Approval;
/// use mcp_types::{Tool, ToolAnnotations};
///
/// let approval = Approval::new().tools(["delete_*"]).destructive(true);
/// assert!(approval.requires(&Tool::without_arguments("delete_file")));
/// // Unannotated tools may destroy something; read-only ones do not.
/// assert!(approval.requires(&Tool::without_arguments("write")));
/// let mut read = Tool::without_arguments("read");
/// let mut hints = ToolAnnotations::default();
/// hints.read_only_hint = Some(true);
/// read.annotations = Some(hints);
/// assert!(!approval.requires(&read));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approval {
    /// The tools (selectors) whose every call needs approval.
    pub tools: Vec<String>,
    /// Whether every tool not annotated `readOnlyHint: true` or `destructiveHint: false`
    /// needs approval too.
    pub destructive: bool,
}

impl Approval {
    /// No tool needs approval.
    pub fn new() -> Self {
        Approval::default()
    }

    /// Adds tools (selectors) whose every call needs approval.
    #[must_use]
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Sets whether every tool that may destroy something needs approval.
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// Whether nothing needs approval.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && !self.destructive
    }

    /// Adds `other`'s rules to these.
    pub(crate) fn merge(&mut self, other: Approval) {
        self.tools.extend(other.tools);
        self.destructive |= other.destructive;
    }

    /// Whether each call of `tool` needs approval.
    pub fn requires(&self, tool: &Tool) -> bool {
        let named = self
            .tools
            .iter()
            .any(|p| *p == tool.name || glob(p, &tool.name));
        named
            || (self.destructive
                && require_approval_if_destructive("", tool) == Decision::RequireApproval)
    }
}

/// Allow and deny lists per server, and groups of tools switched on and off together.
///
/// A tool is exposed when its server's allow list (if any) names it, its deny list does
/// not, and it belongs to no group or to at least one enabled group. A selector is a tool
/// name in which `*` matches any run of characters: `*` alone is every tool of the
/// server, `read_*` every tool whose name starts with `read_`.
///
/// ```
/// use mcp_host::Exposure;
///
/// let mut rules = Exposure::new()
///     .deny("fs", ["delete"])
///     .group("writes", [("fs", "write"), ("git", "*")], false);
/// assert!(rules.admits("fs", "read"));
/// assert!(!rules.admits("fs", "delete"));
/// assert!(!rules.admits("git", "commit"));
/// rules.set_group("writes", true);
/// assert!(rules.admits("git", "commit"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposure {
    allow: HashMap<String, HashSet<String>>,
    deny: HashMap<String, HashSet<String>>,
    groups: BTreeMap<String, Group>,
}

/// A named set of tools, on or off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Group {
    members: Vec<(String, String)>,
    enabled: bool,
}

fn selects(selectors: Option<&HashSet<String>>, tool: &str) -> bool {
    selectors.is_some_and(|s| s.contains(tool) || s.iter().any(|p| glob(p, tool)))
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters (none
/// included) and every other character itself. Linear in the lengths for one `*`, at
/// most their product otherwise; no recursion.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in `name` its match ends for now.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if let Some((at, matched)) = star {
            // Let the last `*` take one more byte and try again after it.
            star = Some((at, matched + 1));
            i = at + 1;
            j = matched + 1;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

impl Exposure {
    /// No rules: everything is exposed.
    pub fn new() -> Self {
        Exposure::default()
    }

    /// Exposes only these tools of `server` (adds to earlier calls).
    #[must_use]
    pub fn allow<I, S>(mut self, server: &str, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow
            .entry(server.to_owned())
            .or_default()
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Hides these tools of `server`.
    #[must_use]
    pub fn deny<I, S>(mut self, server: &str, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny
            .entry(server.to_owned())
            .or_default()
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Defines (or redefines) a group of `(server, tool selector)` members.
    #[must_use]
    pub fn group<I, A, B>(mut self, name: &str, members: I, enabled: bool) -> Self
    where
        I: IntoIterator<Item = (A, B)>,
        A: Into<String>,
        B: Into<String>,
    {
        let members = members
            .into_iter()
            .map(|(s, t)| (s.into(), t.into()))
            .collect();
        self.groups
            .insert(name.to_owned(), Group { members, enabled });
        self
    }

    /// Switches a group on or off; false if there is no such group.
    pub fn set_group(&mut self, name: &str, enabled: bool) -> bool {
        self.groups
            .get_mut(name)
            .map(|g| g.enabled = enabled)
            .is_some()
    }

    /// Adds a configured server's `allow`, `deny` and `groups` (a group first named here
    /// starts on; one already defined keeps its state).
    pub(crate) fn add_server_rules(&mut self, server: &str, config: &crate::ServerConfig) {
        if let Some(allow) = &config.allow {
            self.allow
                .entry(server.to_owned())
                .or_default()
                .extend(allow.iter().cloned());
        }
        if !config.deny.is_empty() {
            self.deny
                .entry(server.to_owned())
                .or_default()
                .extend(config.deny.iter().cloned());
        }
        for name in &config.groups {
            self.groups
                .entry(name.clone())
                .or_insert_with(|| Group {
                    members: Vec::new(),
                    enabled: true,
                })
                .members
                .push((server.to_owned(), "*".to_owned()));
        }
    }

    /// The groups and whether each is on, by name.
    pub fn groups(&self) -> impl Iterator<Item = (&str, bool)> {
        self.groups.iter().map(|(n, g)| (n.as_str(), g.enabled))
    }

    /// Whether the rules expose `tool` of `server`.
    pub fn admits(&self, server: &str, tool: &str) -> bool {
        if self.allow.contains_key(server) && !selects(self.allow.get(server), tool) {
            return false;
        }
        if selects(self.deny.get(server), tool) {
            return false;
        }
        let mut grouped = false;
        for group in self.groups.values() {
            let member = group
                .members
                .iter()
                .any(|(s, t)| s == server && (t == tool || glob(t, tool)));
            if member {
                if group.enabled {
                    return true;
                }
                grouped = true;
            }
        }
        !grouped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_globs() {
        for (pattern, name, matches) in [
            ("*", "", true),
            ("*", "anything", true),
            ("read", "read", true),
            ("read", "reads", false),
            ("read_*", "read_file", true),
            ("read_*", "read_", true),
            ("read_*", "write_file", false),
            ("*_file", "read_file", true),
            ("*_file", "read_files", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "abcbc", true),
            ("a*b*c", "acb", false),
            ("**", "x", true),
            ("", "", true),
            ("", "x", false),
        ] {
            assert_eq!(glob(pattern, name), matches, "{pattern} {name}");
        }
        let rules = Exposure::new()
            .allow("fs", ["read_*", "stat"])
            .deny("fs", ["*_secret"]);
        assert!(rules.admits("fs", "read_file"));
        assert!(rules.admits("fs", "stat"));
        assert!(!rules.admits("fs", "read_secret"));
        assert!(!rules.admits("fs", "write_file"));
        assert!(rules.admits("git", "read_secret"));
    }

    #[test]
    fn a_servers_configured_rules_join_the_exposure() {
        let server = crate::ServerConfig::new(crate::StdioConfig::new("x"))
            .allow(["read_*"])
            .deny(["read_secret"])
            .groups(["files", "admin"]);
        let mut rules = Exposure::new().group("admin", [("other", "*")], false);
        rules.add_server_rules("fs", &server);
        assert!(rules.admits("fs", "read_file"));
        assert!(!rules.admits("fs", "read_secret"));
        assert!(!rules.admits("fs", "write"));
        // `files` is new, so on; `admin` keeps its state and gains `fs`.
        assert_eq!(
            rules.groups().collect::<Vec<_>>(),
            [("admin", false), ("files", true)]
        );
        assert!(rules.set_group("files", false));
        assert!(!rules.admits("fs", "read_file"));
        assert!(rules.set_group("admin", true));
        assert!(rules.admits("fs", "read_file"));
        assert!(rules.admits("other", "anything"));
    }
}
