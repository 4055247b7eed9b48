//! Republishing the upstreams' listings on the gateway's server, changing only what
//! differs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef, ToolError};
use mcp_types::{Prompt, Resource, Tool};
use serde_json::{Value, json};

use super::calls::CallSpec;
use super::relay;
use super::upstream::{Listing, Upstream};
use mcp_server::tasks::{TaskStart, TaskSupport};

use crate::catalog::CatalogBuilder;
use crate::middleware::Middleware;

/// What the gateway serves now, keyed by downstream name or URI: the upstream, its own
/// name or URI, and the definition (to tell a changed one).
#[derive(Default)]
pub(super) struct Published {
    pub(super) tools: HashMap<String, (usize, String, Value)>,
    pub(super) prompts: HashMap<String, (usize, String, Value)>,
    pub(super) resources: HashMap<String, (usize, String, Value)>,
    pub(super) templates: HashMap<String, (usize, String, Value)>,
}

/// The state every handler shares.
pub(super) struct Shared {
    pub(super) server: Server,
    pub(super) catalog: CatalogBuilder,
    pub(super) middleware: Vec<Arc<dyn Middleware>>,
    pub(super) upstreams: Vec<Arc<Upstream>>,
    pub(super) published: Mutex<Published>,
    pub(super) lot: relay::ParkingLot,
}

/// The downstream URI of an upstream URI that another upstream published first: the
/// host's form for a URI two servers share ([`crate::qualified_uri`]).
pub(super) fn prefixed(server: &str, uri: &str) -> String {
    crate::qualified_uri(server, uri)
}

impl Shared {
    /// The downstream URI of an upstream's `uri`: as it is, unless another upstream
    /// published it first.
    pub(super) fn downstream_uri(&self, index: usize, uri: &str) -> String {
        let up = &self.upstreams[index];
        let published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match published.resources.get(uri) {
            Some((owner, _, _)) if *owner != index => prefixed(&up.name, uri),
            _ => uri.to_owned(),
        }
    }

    /// Republishes every upstream's listing, changing only what differs.
    pub(super) fn publish(self: &Arc<Self>) {
        self.server
            .set_instructions(Some(super::instructions(&self.upstreams)));
        let listings: Vec<Listing> = self
            .upstreams
            .iter()
            .map(|up| up.lock().listing.clone())
            .collect();
        let mut published = self
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner);

        // Tools: the catalog the host would build (naming, renames, exposure, policy,
        // approval rules), in upstream order.
        let catalog = self.catalog.build(
            listings
                .iter()
                .enumerate()
                .map(|(i, l)| (self.upstreams[i].name.as_str(), l.tools.as_slice())),
        );
        let tools: Vec<(usize, &Tool, bool, String)> = catalog
            .entries()
            .iter()
            .filter(|e| e.model_visible)
            .filter_map(|e| {
                let index = self.upstreams.iter().position(|u| u.name == e.server)?;
                Some((index, &e.tool, e.requires_approval, e.name.clone()))
            })
            .collect();
        // In upstream order, so that the listing is too.
        let mut wanted = Vec::new();
        for (index, tool, approval, name) in tools {
            let mut definition = tool.clone();
            definition.name.clone_from(&name);
            let key = json!([definition, approval]);
            wanted.push((name, (index, tool.name.clone(), key, definition, approval)));
        }
        let keys: HashMap<&str, &Value> = wanted.iter().map(|(n, w)| (n.as_str(), &w.2)).collect();
        published.tools.retain(|name, (_, _, key)| {
            let keep = keys.get(name.as_str()).is_some_and(|k| *k == key);
            if !keep {
                self.server.remove_tool(name);
            }
            keep
        });
        for (name, (index, upstream_name, key, definition, approval)) in wanted {
            if published.tools.contains_key(&name) {
                continue;
            }
            let shared = Arc::downgrade(self);
            let tool_name = upstream_name.clone();
            let annotations = definition.annotations.clone();
            let downstream_name = name.clone();
            let def = ToolDef::from_tool(definition, move |arguments, cx| {
                let shared = shared.upgrade();
                let call = CallSpec {
                    index,
                    tool: tool_name.clone(),
                    name: downstream_name.clone(),
                    annotations: annotations.clone(),
                    approval,
                };
                async move {
                    let Some(shared) = shared else {
                        return Err(ToolError::failed("the gateway is shutting down"));
                    };
                    shared.call_tool(call, arguments, cx).await
                }
            });
            // A task upstream becomes one downstream for a client that declared the
            // Tasks extension (`Context::escalate` once the upstream answers with one).
            let def = def
                .task_support(TaskSupport::Optional)
                .task_start(TaskStart::OnEscalate);
            match self.server.add_tool(def) {
                Ok(()) => {
                    published.tools.insert(name, (index, upstream_name, key));
                }
                Err(e) => {
                    tracing::warn!(tool = %name, error = %e, "upstream tool not republished");
                }
            }
        }

        // Prompts, under namespaced names.
        let prompts: Vec<(usize, &Prompt)> = listings
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.prompts.iter().map(move |p| (i, p)))
            .filter(|(i, p)| {
                self.catalog
                    .exposure_rules()
                    .admits(&self.upstreams[*i].name, &p.name)
            })
            .collect();
        let names = self.catalog.naming_policy().assign(
            prompts
                .iter()
                .map(|(i, p)| (self.upstreams[*i].name.as_str(), p.name.as_str())),
        );
        let mut wanted = Vec::new();
        for ((index, prompt), name) in prompts.into_iter().zip(names) {
            let mut definition = prompt.clone();
            definition.name.clone_from(&name);
            let key = serde_json::to_value(&definition).unwrap_or_default();
            wanted.push((name, (index, prompt.name.clone(), key, definition)));
        }
        let keys: HashMap<&str, &Value> = wanted.iter().map(|(n, w)| (n.as_str(), &w.2)).collect();
        published.prompts.retain(|name, (_, _, key)| {
            let keep = keys.get(name.as_str()).is_some_and(|k| *k == key);
            if !keep {
                self.server.remove_prompt(name);
            }
            keep
        });
        for (name, (index, upstream_name, key, definition)) in wanted {
            if published.prompts.contains_key(&name) {
                continue;
            }
            let shared = Arc::downgrade(self);
            let prompt_name = upstream_name.clone();
            let def = PromptDef::from_prompt(definition, move |arguments, _cx| {
                let shared = shared.upgrade();
                let prompt_name = prompt_name.clone();
                async move {
                    let shared =
                        shared.ok_or_else(|| ToolError::failed("the gateway is shutting down"))?;
                    shared.get_prompt(index, &prompt_name, arguments).await
                }
            });
            match self.server.add_prompt(def) {
                Ok(()) => {
                    published.prompts.insert(name, (index, upstream_name, key));
                }
                Err(e) => {
                    tracing::warn!(prompt = %name, error = %e, "upstream prompt not republished");
                }
            }
        }

        // Resources, under their URIs unless an earlier upstream lists the same one.
        let mut wanted: Vec<(String, (usize, String, Value, Resource))> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (index, listing) in listings.iter().enumerate() {
            let server = &self.upstreams[index].name;
            for resource in &listing.resources {
                let mut definition = resource.clone();
                if !seen.insert(resource.uri.clone()) {
                    definition.uri = prefixed(server, &resource.uri);
                    if !seen.insert(definition.uri.clone()) {
                        continue;
                    }
                }
                let key = serde_json::to_value(&definition).unwrap_or_default();
                wanted.push((
                    definition.uri.clone(),
                    (index, resource.uri.clone(), key, definition),
                ));
            }
        }
        let keys: HashMap<&str, &Value> = wanted.iter().map(|(n, w)| (n.as_str(), &w.2)).collect();
        published.resources.retain(|uri, (_, _, key)| {
            let keep = keys.get(uri.as_str()).is_some_and(|k| *k == key);
            if !keep {
                self.server.remove_resource(uri);
            }
            keep
        });
        for (uri, (index, upstream_uri, key, definition)) in wanted {
            if published.resources.contains_key(&uri) {
                continue;
            }
            let shared = Arc::downgrade(self);
            let target = upstream_uri.clone();
            let def = ResourceDef::from_resource(definition, move |uri, _cx| {
                let shared = shared.upgrade();
                let target = target.clone();
                async move {
                    let shared =
                        shared.ok_or_else(|| ToolError::failed("the gateway is shutting down"))?;
                    shared.read(index, &target, &uri).await
                }
            });
            self.server.add_resource(def);
            published.resources.insert(uri, (index, upstream_uri, key));
        }

        // Templates: added, never removed (the server keeps no way to), so only new ones.
        for (index, listing) in listings.iter().enumerate() {
            let server = &self.upstreams[index].name;
            for template in &listing.templates {
                let mut definition = template.clone();
                if published
                    .templates
                    .get(&template.uri_template)
                    .is_some_and(|(owner, _, _)| *owner != index)
                {
                    definition.uri_template = prefixed(server, &template.uri_template);
                }
                if published.templates.contains_key(&definition.uri_template) {
                    continue;
                }
                let shared = Arc::downgrade(self);
                let prefix = (definition.uri_template != template.uri_template)
                    .then(|| prefixed(server, ""));
                let downstream = definition.uri_template.clone();
                let def = ResourceTemplateDef::from_template(definition, move |uri, _cx| {
                    let shared = shared.upgrade();
                    let target = match &prefix {
                        Some(prefix) => {
                            uri.strip_prefix(prefix.as_str()).unwrap_or(&uri).to_owned()
                        }
                        None => uri.clone(),
                    };
                    async move {
                        let shared = shared
                            .ok_or_else(|| ToolError::failed("the gateway is shutting down"))?;
                        shared.read(index, &target, &uri).await
                    }
                });
                match def {
                    Ok(def) => {
                        self.server.add_resource_template(def);
                        published.templates.insert(
                            downstream,
                            (index, template.uri_template.clone(), Value::Null),
                        );
                    }
                    Err(e) => tracing::warn!(
                        template = %template.uri_template,
                        error = %e,
                        "upstream resource template not republished"
                    ),
                }
            }
        }
    }
}
