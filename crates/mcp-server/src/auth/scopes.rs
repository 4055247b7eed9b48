//! The scope rules of a resource server, and the reading of the target a request names.
//!
//! The rules are asked twice, with the same answer: by the HTTP endpoint before the request
//! runs ([`ResourceServer`](super::ResourceServer)'s `authorize`, which can answer `403`
//! with a challenge), and by the server core once it has read the target out of the params
//! it dispatches ([`mcp_jsonrpc::Principal::permits`] of a [`TokenPrincipal`]). The first
//! reads the target with [`read_target`], which refuses whatever the core would not read as
//! one target (a missing or non-string `name`, a duplicate member, params that are not an
//! object); the second cannot be misled by anything the first was, because it sees only
//! what runs.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use mcp_types::method;

use super::TokenPrincipal;
use crate::UriTemplate;

/// The requests whose scopes can be set for one target, besides the endpoint's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operation {
    /// `tools/call` of a tool, by name.
    Tool,
    /// `prompts/get` of a prompt, by name.
    Prompt,
    /// `resources/read` of a resource, by URI.
    Resource,
}

impl Operation {
    /// The operation a method performs on a named target, if any. `completion/complete`
    /// names its target inside its `ref`: see [`read_target`].
    pub(super) fn of(method: &str) -> Option<Operation> {
        match method {
            method::TOOLS_CALL => Some(Operation::Tool),
            method::PROMPTS_GET => Some(Operation::Prompt),
            method::RESOURCES_READ => Some(Operation::Resource),
            _ => None,
        }
    }
}

/// The scopes of single tools, prompts and resources.
#[derive(Debug, Default)]
pub(super) struct Scoped {
    pub(super) tools: HashMap<String, Vec<String>>,
    pub(super) prompts: HashMap<String, Vec<String>>,
    /// By URI in its [normal form](normal_uri); a URI template is a key too, as written.
    pub(super) resources: HashMap<String, Vec<String>>,
    /// The keys of `resources` that are URI templates: every URI they match needs their
    /// scopes, however it is spelled.
    pub(super) templates: Vec<(UriTemplate, Vec<String>)>,
}

impl Scoped {
    /// Whether no target of `operation` has scopes of its own.
    pub(super) fn is_empty(&self, operation: Operation) -> bool {
        match operation {
            Operation::Tool => self.tools.is_empty(),
            Operation::Prompt => self.prompts.is_empty(),
            Operation::Resource => self.resources.is_empty(),
        }
    }

    /// The scopes configured for `target` itself (a resource by its normal form).
    pub(super) fn get(&self, operation: Operation, target: &str) -> &[String] {
        let found = match operation {
            Operation::Tool => self.tools.get(target),
            Operation::Prompt => self.prompts.get(target),
            Operation::Resource => self.resources.get(normal_uri(target).as_ref()),
        };
        found.map_or(&[], Vec::as_slice)
    }

    pub(super) fn all(&self) -> impl Iterator<Item = &String> {
        self.tools
            .values()
            .chain(self.prompts.values())
            .chain(self.resources.values())
            .flatten()
    }
}

/// What a resource server requires: of every request, of single operations, and which
/// scopes imply which. Shared by the server and every principal it authenticates.
#[derive(Debug)]
pub(super) struct Rules {
    pub(super) required: Vec<String>,
    pub(super) scoped: Scoped,
    /// For each broad scope, every scope it implies (transitively).
    pub(super) implied: HashMap<String, BTreeSet<String>>,
}

impl Rules {
    /// Whether `principal` holds `scope`, itself or through a broader scope.
    pub(super) fn grants(&self, principal: &TokenPrincipal, scope: &str) -> bool {
        principal.has_scope(scope)
            || principal
                .scopes()
                .iter()
                .any(|granted| self.implied.get(granted).is_some_and(|s| s.contains(scope)))
    }

    /// The scopes an operation needs: the endpoint's, and those of the tool, prompt or
    /// resource it names. A resource needs the scopes of its URI and of every scoped
    /// template that matches it.
    pub(super) fn needed(&self, target: Option<(Operation, &str)>) -> Vec<String> {
        let mut needed = self.required.clone();
        let mut add = |scopes: &[String]| {
            for scope in scopes {
                if !needed.contains(scope) {
                    needed.push(scope.clone());
                }
            }
        };
        if let Some((operation, target)) = target {
            add(self.scoped.get(operation, target));
            if operation == Operation::Resource {
                let normal = normal_uri(target);
                for (template, scopes) in &self.scoped.templates {
                    if template.matches(target).is_some() || template.matches(&normal).is_some() {
                        add(scopes);
                    }
                }
            }
        }
        needed
    }

    /// Whether `principal` lacks any scope of `needed`.
    pub(super) fn lacks_any(&self, principal: &TokenPrincipal, needed: &[String]) -> bool {
        !needed.iter().all(|scope| self.grants(principal, scope))
    }

    /// The core's question ([`mcp_jsonrpc::Principal::permits`]): may `principal` make
    /// `method` on `target`?
    pub(super) fn permits(&self, principal: &TokenPrincipal, method: &str, target: &str) -> bool {
        let needed = self.needed(Operation::of(method).map(|operation| (operation, target)));
        !self.lacks_any(principal, &needed)
    }
}

/// What [`read_target`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// The request names no target the rules know (another method).
    None,
    /// The request names this target.
    Named(Operation, String),
    /// The request should name a target but it cannot be read as exactly one: refused.
    Unreadable,
}

/// A `tools/call`'s or `prompts/get`'s params, as far as a target goes: unknown members of
/// any type are skipped, a duplicate `name` is an error (as it is for the core's own
/// derived parse), and so is a `name` that is missing or not a string.
#[derive(serde::Deserialize)]
struct ByName {
    name: String,
}

/// A `resources/read`'s params, as far as a target goes.
#[derive(serde::Deserialize)]
struct ByUri {
    uri: String,
}

/// A `completion/complete`'s params, as far as a target goes: its `ref`.
#[derive(serde::Deserialize)]
struct ByRef {
    #[serde(rename = "ref")]
    reference: Reference,
}

#[derive(serde::Deserialize)]
struct Reference {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
}

/// The target `method` names in `params` (the params' JSON text, `None` when absent).
///
/// Strict where the core is strict, so that what passes here is what the core reads: the
/// params must be one JSON object holding the target member once, as a string.
pub(super) fn read_target(method: &str, params: Option<&str>) -> Target {
    fn read<T: for<'de> serde::Deserialize<'de>>(params: Option<&str>) -> Option<T> {
        // A derived struct also reads from an array, by position; MCP params are objects,
        // and positions would be counted differently by each reading.
        let params = params.filter(|p| p.trim_start().starts_with('{'))?;
        serde_json::from_str(params).ok()
    }
    let named = match method {
        method::TOOLS_CALL => read::<ByName>(params).map(|p| (Operation::Tool, p.name)),
        method::PROMPTS_GET => read::<ByName>(params).map(|p| (Operation::Prompt, p.name)),
        method::RESOURCES_READ => read::<ByUri>(params).map(|p| (Operation::Resource, p.uri)),
        method::COMPLETION_COMPLETE => match read::<ByRef>(params) {
            Some(ByRef { reference }) => match reference {
                Reference {
                    kind,
                    name: Some(name),
                    ..
                } if kind == "ref/prompt" => Some((Operation::Prompt, name)),
                Reference {
                    kind,
                    uri: Some(uri),
                    ..
                } if kind == "ref/resource" => Some((Operation::Resource, uri)),
                _ => None,
            },
            None => None,
        },
        _ => return Target::None,
    };
    match named {
        Some((operation, target)) => Target::Named(operation, target),
        None => Target::Unreadable,
    }
}

/// A URI in the normal form RFC 3986 §6.2.2 allows comparing: the scheme lower-cased, a
/// percent-encoded unreserved character decoded (`%2E` is `.`), and every other
/// percent-encoding's hex digits upper-cased. Two spellings of one URI then name the same
/// scoped resource. Borrowed when already normal.
pub(super) fn normal_uri(uri: &str) -> Cow<'_, str> {
    let scheme_end = uri
        .find(':')
        .filter(|&end| {
            end > 0
                && uri[..end]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        })
        .unwrap_or(0);
    let needs_work = uri[..scheme_end].bytes().any(|b| b.is_ascii_uppercase()) || uri.contains('%');
    if !needs_work {
        return Cow::Borrowed(uri);
    }
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    out.extend(bytes[..scheme_end].iter().map(u8::to_ascii_lowercase));
    let mut i = scheme_end;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&hi), Some(&lo)) if hex(hi).is_some() && hex(lo).is_some() => {
                let byte =
                    u8::try_from(hex(hi).unwrap_or(0) * 16 + hex(lo).unwrap_or(0)).unwrap_or(b'%');
                if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                    out.push(byte);
                } else {
                    out.extend([b'%', hi.to_ascii_uppercase(), lo.to_ascii_uppercase()]);
                }
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so the text is still UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| uri.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::{Operation, Target, normal_uri, read_target};

    #[test]
    fn targets_are_read_strictly() {
        let tool = |params: &str| read_target("tools/call", Some(params));
        let named = |name: &str| Target::Named(Operation::Tool, name.to_owned());
        assert_eq!(tool(r#"{"name":"delete_file"}"#), named("delete_file"));
        // Members of every JSON type beside the name are skipped, not a reason to give up.
        for extra in [
            "0",
            "null",
            "true",
            "\"x\"",
            "[1,{}]",
            "{\"a\":[]}",
            "-1.5e300",
        ] {
            let params = format!(r#"{{"name":"delete_file","uri":{extra},"z":{extra}}}"#);
            assert_eq!(tool(&params), named("delete_file"), "{params}");
        }
        assert_eq!(
            tool(r#"{"n\u0061me":"delete\u005ffile"}"#),
            named("delete_file")
        );
        for unreadable in [
            r#"{"name":"echo","name":"delete_file"}"#,
            r#"{"name":0}"#,
            r#"{"name":null}"#,
            r#"{"arguments":{}}"#,
            r#"["delete_file"]"#,
            r#"{"name":"delete_file""#,
            "",
        ] {
            assert_eq!(tool(unreadable), Target::Unreadable, "{unreadable}");
        }
        assert_eq!(read_target("tools/call", None), Target::Unreadable);
        assert_eq!(read_target("tools/list", Some("{}")), Target::None);
        assert_eq!(
            read_target("resources/read", Some(r#"{"uri":"file:///a","name":7}"#)),
            Target::Named(Operation::Resource, "file:///a".to_owned())
        );
        assert_eq!(
            read_target(
                "completion/complete",
                Some(r#"{"ref":{"type":"ref/prompt","name":"p"},"argument":{}}"#)
            ),
            Target::Named(Operation::Prompt, "p".to_owned())
        );
        assert_eq!(
            read_target("completion/complete", Some(r#"{"ref":{"type":"ref/x"}}"#)),
            Target::Unreadable
        );
    }

    #[test]
    fn uris_compare_in_normal_form() {
        assert_eq!(normal_uri("file:///secret.txt"), "file:///secret.txt");
        assert_eq!(normal_uri("FILE:///secret%2Etxt"), "file:///secret.txt");
        assert_eq!(normal_uri("file:///%73ecret.txt"), "file:///secret.txt");
        assert_eq!(normal_uri("file:///a%2fb"), "file:///a%2Fb");
        assert_eq!(normal_uri("file:///100%"), "file:///100%");
        assert_eq!(normal_uri("file:///%zz"), "file:///%zz");
    }
}
