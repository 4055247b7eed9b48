//! The prompts and resources of many servers under host-visible names. Pure data, no
//! connection; the host rebuilds it whenever a server's lists change.
//!
//! - A prompt is named as a tool is ([`NamingPolicy`]: `server__prompt`, with the same
//!   prefix, separator and suffixes), in a namespace of its own: a prompt and a tool may
//!   share a name.
//! - A resource keeps its own URI when no other server lists the same one. A URI that two
//!   servers list is shown under each as `mcp-host://<server>/<uri>` (see
//!   [`qualified_uri`]), so that no server shadows another's resource; should that form
//!   be a URI some server lists itself, the resource is left out (and logged) rather than
//!   made ambiguous. Host-visible URIs are looked up in a table, never parsed.
//! - Resource templates are listed per server as they are: a URI made from one is read
//!   from that server ([`Host::read_resource_from`](crate::Host::read_resource_from)).
//!
//! Names, titles and descriptions are the servers' own untrusted text, passed on as data.

use std::collections::{HashMap, HashSet};

use mcp_types::{Prompt, Resource, ResourceTemplate};

use crate::naming::NamingPolicy;

/// A prompt of a server, under its host-visible name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptEntry {
    /// The name [`Host::get_prompt`](crate::Host::get_prompt) takes.
    pub name: String,
    /// The server's name in the host.
    pub server: String,
    /// The prompt as the server listed it; `prompt.name` is what `prompts/get` gets.
    pub prompt: Prompt,
}

/// A resource of a server, under its host-visible URI.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceEntry {
    /// The URI [`Host::read_resource`](crate::Host::read_resource) takes: the resource's
    /// own, or [`qualified_uri`] when another server lists the same one.
    pub uri: String,
    /// The server's name in the host.
    pub server: String,
    /// The resource as the server listed it; `resource.uri` is what `resources/read`
    /// gets.
    pub resource: Resource,
}

/// A resource template of a server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TemplateEntry {
    /// The server's name in the host: read a URI made from the template from it.
    pub server: String,
    /// The template as the server listed it.
    pub template: ResourceTemplate,
}

/// The host-visible URI of `uri` of `server` when another server lists the same URI.
///
/// ```
/// assert_eq!(
///     mcp_host::qualified_uri("docs", "file:///readme.md"),
///     "mcp-host://docs/file:///readme.md"
/// );
/// ```
pub fn qualified_uri(server: &str, uri: &str) -> String {
    format!("mcp-host://{server}/{uri}")
}

/// What one server lists.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Listed<'a> {
    pub(crate) server: &'a str,
    pub(crate) prompts: &'a [Prompt],
    pub(crate) resources: &'a [Resource],
    pub(crate) templates: &'a [ResourceTemplate],
}

/// The prompts, resources and templates of every server.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Content {
    prompts: Vec<PromptEntry>,
    prompt_by_name: HashMap<String, usize>,
    resources: Vec<ResourceEntry>,
    resource_by_uri: HashMap<String, usize>,
    templates: Vec<TemplateEntry>,
}

impl Content {
    /// The content of these servers, in the order given; a server that lists two prompts
    /// of one name, or two resources of one URI, keeps the first.
    pub(crate) fn build<'a>(
        naming: &NamingPolicy,
        servers: impl IntoIterator<Item = Listed<'a>>,
    ) -> Content {
        let servers: Vec<Listed<'a>> = servers.into_iter().collect();
        let mut prompts: Vec<(&str, &Prompt)> = Vec::new();
        let mut resources: Vec<(&str, &Resource)> = Vec::new();
        let mut templates = Vec::new();
        for listed in &servers {
            let mut names = HashSet::new();
            prompts.extend(
                listed
                    .prompts
                    .iter()
                    .filter(|p| names.insert(p.name.as_str()))
                    .map(|p| (listed.server, p)),
            );
            let mut uris = HashSet::new();
            resources.extend(
                listed
                    .resources
                    .iter()
                    .filter(|r| uris.insert(r.uri.as_str()))
                    .map(|r| (listed.server, r)),
            );
            templates.extend(listed.templates.iter().map(|t| TemplateEntry {
                server: listed.server.to_owned(),
                template: t.clone(),
            }));
        }
        let names = naming.assign(prompts.iter().map(|(s, p)| (*s, p.name.as_str())));
        let prompts: Vec<PromptEntry> = prompts
            .into_iter()
            .zip(names)
            .map(|((server, prompt), name)| PromptEntry {
                name,
                server: server.to_owned(),
                prompt: prompt.clone(),
            })
            .collect();
        let prompt_by_name = prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), i))
            .collect();
        let (resources, resource_by_uri) = Self::resource_table(&resources);
        Content {
            prompts,
            prompt_by_name,
            resources,
            resource_by_uri,
            templates,
        }
    }

    /// The resources under their host-visible URIs, and the table from those.
    fn resource_table(all: &[(&str, &Resource)]) -> (Vec<ResourceEntry>, HashMap<String, usize>) {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (_, resource) in all {
            *counts.entry(resource.uri.as_str()).or_default() += 1;
        }
        let shared = |r: &Resource| counts[r.uri.as_str()] > 1;
        // The URIs kept as they are come first, so that a qualified form can never take
        // one of them.
        let mut taken: HashSet<String> = all
            .iter()
            .filter(|(_, r)| !shared(r))
            .map(|(_, r)| r.uri.clone())
            .collect();
        let mut entries = Vec::with_capacity(all.len());
        for (server, resource) in all {
            let uri = if shared(resource) {
                let uri = qualified_uri(server, &resource.uri);
                if !taken.insert(uri.clone()) {
                    tracing::warn!(
                        server,
                        uri = %resource.uri,
                        "a resource whose qualified URI another server lists is left out"
                    );
                    continue;
                }
                uri
            } else {
                resource.uri.clone()
            };
            entries.push(ResourceEntry {
                uri,
                server: (*server).to_owned(),
                resource: (*resource).clone(),
            });
        }
        let by_uri = entries
            .iter()
            .enumerate()
            .map(|(i, r)| (r.uri.clone(), i))
            .collect();
        (entries, by_uri)
    }

    /// Every prompt, in server order then each server's listing order.
    pub(crate) fn prompts(&self) -> &[PromptEntry] {
        &self.prompts
    }

    /// The prompt a host-visible name stands for.
    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompt_by_name.get(name).map(|&i| &self.prompts[i])
    }

    /// Every resource, in server order then each server's listing order.
    pub(crate) fn resources(&self) -> &[ResourceEntry] {
        &self.resources
    }

    /// The resource a host-visible URI stands for (exact match only).
    pub(crate) fn resource(&self, uri: &str) -> Option<&ResourceEntry> {
        self.resource_by_uri.get(uri).map(|&i| &self.resources[i])
    }

    /// Every resource template, in server order.
    pub(crate) fn templates(&self) -> &[TemplateEntry] {
        &self.templates
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn prompt(name: &str) -> Prompt {
        serde_json::from_value(json!({"name": name})).unwrap()
    }

    fn resource(uri: &str) -> Resource {
        serde_json::from_value(json!({"uri": uri, "name": uri})).unwrap()
    }

    #[test]
    fn prompts_are_named_as_tools_and_uris_are_kept_unless_shared() {
        let (a_prompts, b_prompts) = (
            vec![prompt("review"), prompt("review"), prompt("plan")],
            vec![prompt("review")],
        );
        let a_resources = vec![
            resource("file:///a"),
            resource("file:///shared"),
            resource("file:///a"),
        ];
        // `c` lists what `b`'s shared resource would be qualified as: `b`'s is left out.
        let b_resources = vec![resource("file:///shared"), resource("file:///b")];
        let c_resources = vec![resource("mcp-host://b/file:///shared")];
        let listed = |server, prompts, resources| Listed {
            server,
            prompts,
            resources,
            templates: &[],
        };
        let content = Content::build(
            &NamingPolicy::default().prefix("mcp"),
            [
                listed("a", &a_prompts, &a_resources),
                listed("b", &b_prompts, &b_resources),
                listed("c", &[], &c_resources),
            ],
        );
        let names: Vec<&str> = content.prompts().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["mcp__a__review", "mcp__a__plan", "mcp__b__review"]);
        let entry = content.prompt("mcp__b__review").unwrap();
        assert_eq!(
            (entry.server.as_str(), entry.prompt.name.as_str()),
            ("b", "review")
        );
        let uris: Vec<(&str, &str)> = content
            .resources()
            .iter()
            .map(|r| (r.uri.as_str(), r.server.as_str()))
            .collect();
        assert_eq!(
            uris,
            [
                ("file:///a", "a"),
                ("mcp-host://a/file:///shared", "a"),
                ("file:///b", "b"),
                ("mcp-host://b/file:///shared", "c"),
            ]
        );
        let shared = content.resource("mcp-host://a/file:///shared").unwrap();
        assert_eq!(shared.resource.uri, "file:///shared");
        assert!(content.resource("file:///shared").is_none());
    }
}
