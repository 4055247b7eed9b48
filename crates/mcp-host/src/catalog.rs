//! The catalog: the tools of many servers under model-visible names, filtered by exposure
//! rules and a policy, rendered as each vendor's tool declarations. Pure data, no
//! connection: the `mcp` CLI builds one from `tools/list` results.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use mcp_client::apps::{UiLink, model_visible};
use mcp_types::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::naming::{NamingPolicy, is_model_name};
use crate::rules::{Approval, Decision, Exposure, Policy};
use crate::schema::{self, SchemaLimits, cap_text};

/// The function-calling dialects the catalog speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Vendor {
    /// OpenAI Chat Completions: `{"type": "function", "function": {name, description,
    /// parameters}}`.
    OpenAiChat,
    /// OpenAI Responses: `{"type": "function", name, description, parameters, strict}`,
    /// strict when the schema can be lowered to strict mode.
    OpenAiResponses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Gemini function declarations: `{name, description, parameters}` in the OpenAPI
    /// subset.
    Gemini,
}

impl Vendor {
    /// Every vendor, in a fixed order.
    pub const ALL: [Vendor; 4] = [
        Vendor::OpenAiChat,
        Vendor::OpenAiResponses,
        Vendor::Anthropic,
        Vendor::Gemini,
    ];

    /// The name the `mcp` CLI uses: `openai`, `openai-responses`, `anthropic`, `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::OpenAiChat => "openai",
            Vendor::OpenAiResponses => "openai-responses",
            Vendor::Anthropic => "anthropic",
            Vendor::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Vendor {
    type Err = crate::Error;

    /// Reads [`Vendor::as_str`]'s names (and `openai-chat`).
    ///
    /// ```
    /// use mcp_host::Vendor;
    /// assert_eq!("openai-responses".parse::<Vendor>()?, Vendor::OpenAiResponses);
    /// assert!("cohere".parse::<Vendor>().is_err());
    /// # Ok::<(), mcp_host::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" | "openai-chat" => Ok(Vendor::OpenAiChat),
            "openai-responses" => Ok(Vendor::OpenAiResponses),
            "anthropic" => Ok(Vendor::Anthropic),
            "gemini" => Ok(Vendor::Gemini),
            other => Err(crate::Error::UnknownVendor(other.to_owned())),
        }
    }
}

/// One exposed tool: its model-visible name and where it comes from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Entry {
    /// The name the model sees and calls.
    pub name: String,
    /// The server's name in the host.
    pub server: String,
    /// The tool as the server listed it, but for its `icons`: only those
    /// [`mcp_client::icons::check_icon`] accepts are kept. `tool.name` is what
    /// `tools/call` gets.
    pub tool: Tool,
    /// Whether each call needs approval (the policy said so).
    pub requires_approval: bool,
    /// The tool's MCP Apps link (`_meta.ui`), for the embedding application to render
    /// its results with (see `mcp_client::apps`).
    pub ui: Option<UiLink>,
    /// Whether the model is offered the tool: false for an app-only tool (its
    /// `_meta.ui.visibility` lacks `model`), which only the app may call
    /// ([`Host::call_from_app`](crate::Host::call_from_app)).
    pub model_visible: bool,
}

impl Entry {
    /// The tool's annotations, if any (hints, see [`Policy`]).
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.tool.annotations.as_ref()
    }
}

/// Builds a [`Catalog`] with non-default naming, exposure, policy or limits.
#[derive(Clone, Default)]
pub struct CatalogBuilder {
    naming: NamingPolicy,
    exposure: Exposure,
    policy: Option<Arc<dyn Policy>>,
    limits: SchemaLimits,
    /// Explicit model-visible names: server, then the server's tool name.
    renames: HashMap<String, HashMap<String, String>>,
    /// The tools that need approval, by server, on top of the policy.
    approvals: HashMap<String, Approval>,
}

impl fmt::Debug for CatalogBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogBuilder")
            .field("naming", &self.naming)
            .field("exposure", &self.exposure)
            .field("policy", &self.policy.is_some())
            .field("limits", &self.limits)
            .field("renames", &self.renames)
            .field("approvals", &self.approvals)
            .finish()
    }
}

impl CatalogBuilder {
    /// Sets how names are derived.
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.naming = naming;
        self
    }

    /// Sets the allow, deny and group rules.
    #[must_use]
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Sets the policy hook.
    #[must_use]
    pub fn policy(mut self, policy: impl Policy + 'static) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Sets the limits for untrusted schemas and descriptions.
    #[must_use]
    pub fn limits(mut self, limits: SchemaLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Gives `tool` of `server` the model-visible name `name`, exactly (no prefix, no
    /// server name). A derived name equal to it gets a hash suffix instead, so the
    /// explicit name wins. A name that is not valid for every vendor (or longer than the
    /// naming's limit), or that an earlier tool (in server order, then listing order) was
    /// given too, is not used: that tool keeps its derived name, and a warning is logged. A host checks its configured servers'
    /// renames when it connects and refuses such names there.
    ///
    /// ```
    /// use mcp_host::Catalog;
    /// use mcp_types::Tool;
    ///
    /// let tools = vec![Tool::without_arguments("create_issue")];
    /// let catalog = Catalog::builder()
    ///     .rename("github", "create_issue", "new_issue")
    ///     .build([("github", tools.as_slice())]);
    /// let entry = catalog.resolve("new_issue").unwrap();
    /// assert_eq!((entry.server.as_str(), entry.tool.name.as_str()), ("github", "create_issue"));
    /// assert!(catalog.resolve("github__create_issue").is_none());
    /// ```
    #[must_use]
    pub fn rename(
        mut self,
        server: impl Into<String>,
        tool: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        self.renames
            .entry(server.into())
            .or_default()
            .insert(tool.into(), name.into());
        self
    }

    /// Makes the tools `approval` names (of `server`) need approval before each call,
    /// whatever the policy decides, but for a tool it hides (adds to earlier rules for the
    /// server).
    #[must_use]
    pub fn approval(mut self, server: impl Into<String>, approval: Approval) -> Self {
        self.approvals
            .entry(server.into())
            .or_default()
            .merge(approval);
        self
    }

    /// The naming (for the host's prompts, named as tools are).
    pub(crate) fn naming_policy(&self) -> &NamingPolicy {
        &self.naming
    }

    /// The exposure rules.
    #[cfg(feature = "gateway")]
    pub(crate) fn exposure_rules(&self) -> &Exposure {
        &self.exposure
    }

    /// The exposure rules (for a host that switches groups).
    pub(crate) fn exposure_mut(&mut self) -> &mut Exposure {
        &mut self.exposure
    }

    /// Adds a configured server's rules: its `allow`, `deny` and `groups`, its approval
    /// rules, and its renames, which must be valid names within the naming's limit and
    /// given to one tool only across every server added.
    pub(crate) fn add_server_config(
        &mut self,
        server: &str,
        config: &crate::ServerConfig,
    ) -> Result<(), crate::Error> {
        self.exposure.add_server_rules(server, config);
        if !config.approval.is_empty() {
            self.approvals
                .entry(server.to_owned())
                .or_default()
                .merge(config.approval.clone());
        }
        let limit = self.naming.limit();
        for (tool, name) in &config.rename {
            if name.is_empty() || !is_model_name(name, limit) {
                return Err(crate::Error::InvalidField {
                    server: server.to_owned(),
                    field: format!("rename.{tool}"),
                    reason: format!(
                        "must be 1 to {limit} letters, digits, `_` or `-`, starting with a \
                         letter or `_`"
                    ),
                });
            }
            let taken = self.renames.iter().find_map(|(s, tools)| {
                tools
                    .iter()
                    .find(|(t, n)| *n == name && (s != server || *t != tool))
                    .map(|(t, _)| (s.clone(), t.clone()))
            });
            if let Some((other_server, other_tool)) = taken {
                return Err(crate::Error::Config(format!(
                    "the name `{name}` is given to `{tool}` of server `{server}` and to \
                     `{other_tool}` of server `{other_server}` (`rename`): a name must stand \
                     for one tool"
                )));
            }
            self.renames
                .entry(server.to_owned())
                .or_default()
                .insert(tool.clone(), name.clone());
        }
        Ok(())
    }

    /// The explicit names of `all` (see [`rename`](Self::rename)): `None` for a tool
    /// without one, or whose name is unusable or was given to an earlier tool.
    fn explicit_names(&self, all: &[(&str, &Tool)]) -> Vec<Option<String>> {
        let limit = self.naming.limit();
        let mut claimed = HashSet::new();
        all.iter()
            .map(|(server, tool)| {
                let name = self.renames.get(*server)?.get(&tool.name)?;
                if name.is_empty() || !is_model_name(name, limit) {
                    tracing::warn!(server, tool = %tool.name, name, "unusable rename ignored");
                    return None;
                }
                if !claimed.insert(name.as_str()) {
                    tracing::warn!(server, tool = %tool.name, name, "rename already taken: ignored");
                    return None;
                }
                Some(name.clone())
            })
            .collect()
    }

    /// The catalog of these servers' tools, in the order given. A server that lists two
    /// tools with one name keeps the first.
    pub fn build<'a, I>(&self, servers: I) -> Catalog
    where
        I: IntoIterator<Item = (&'a str, &'a [Tool])>,
    {
        let mut all: Vec<(&str, &Tool)> = Vec::new();
        for (server, tools) in servers {
            let mut seen = HashSet::new();
            for tool in tools {
                if seen.insert(tool.name.as_str()) {
                    all.push((server, tool));
                } else {
                    tracing::warn!(server, tool = %tool.name, "duplicate tool name ignored");
                }
            }
        }
        // Names are assigned over every tool, hidden or not, so that switching a group
        // or a deny list never renames another tool. Explicit names come first: a derived
        // name never takes one.
        let explicit = self.explicit_names(&all);
        let reserved: HashSet<String> = explicit.iter().flatten().cloned().collect();
        let mut derived = self
            .naming
            .assign_avoiding(
                all.iter()
                    .zip(&explicit)
                    .filter(|(_, name)| name.is_none())
                    .map(|((s, t), _)| (*s, t.name.as_str())),
                &reserved,
            )
            .into_iter();
        let names: Vec<String> = explicit
            .into_iter()
            .map(|name| name.or_else(|| derived.next()).unwrap_or_default())
            .collect();
        let mut entries = Vec::new();
        for ((server, tool), name) in all.into_iter().zip(names) {
            if !self.exposure.admits(server, &tool.name) {
                continue;
            }
            let decision = self
                .policy
                .as_ref()
                .map_or(Decision::Expose, |p| p.decide(server, tool));
            if decision == Decision::Hide {
                continue;
            }
            let decision = match self.approvals.get(server) {
                Some(approval) if approval.requires(tool) => Decision::RequireApproval,
                _ => decision,
            };
            let mut tool = tool.clone();
            // Icons are the server's choice of URI: only safe ones reach the application
            // (https://modelcontextprotocol.io/specification/2026-07-28/basic, `icons`). The catalog knows no server
            // origin, so an application that fetches them keeps to the server's own.
            if let Some(icons) = &tool.icons {
                tool.icons = Some(mcp_client::icons::safe_icons(icons, None));
            }
            let ui = UiLink::of(&tool);
            let visible = model_visible(&tool);
            entries.push(Entry {
                name,
                server: server.to_owned(),
                tool,
                requires_approval: decision == Decision::RequireApproval,
                ui,
                model_visible: visible,
            });
        }
        let by_name = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.model_visible)
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        Catalog {
            entries,
            by_name,
            limits: self.limits,
        }
    }
}

/// The exposed tools of many servers under model-visible names.
///
/// ```
/// use mcp_host::{Catalog, Vendor};
/// use mcp_types::Tool;
///
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
///     "required": ["path"]
/// });
/// let tools = vec![Tool::from_schema("read", schema.as_object().unwrap().clone())?];
/// let catalog = Catalog::new([("fs", tools.as_slice())]);
///
/// let decls = catalog.declarations(Vendor::OpenAiResponses);
/// assert_eq!(decls[0]["name"], "fs__read");
/// assert_eq!(decls[0]["strict"], true);
/// assert_eq!(decls[0]["parameters"]["properties"]["limit"]["type"], serde_json::json!(["integer", "null"]));
///
/// let entry = catalog.resolve("fs__read").unwrap();
/// assert_eq!((entry.server.as_str(), entry.tool.name.as_str()), ("fs", "read"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    limits: SchemaLimits,
}

impl Catalog {
    /// A catalog with the default naming (`server__tool`), no exposure rules, no policy
    /// and the default limits.
    pub fn new<'a, I>(servers: I) -> Catalog
    where
        I: IntoIterator<Item = (&'a str, &'a [Tool])>,
    {
        CatalogBuilder::default().build(servers)
    }

    /// Starts a catalog with non-default settings.
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// The exposed tools, in server order then each server's listing order, app-only
    /// tools included ([`Entry::model_visible`] tells them apart).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tool a model-visible name stands for (exact match only). App-only tools are
    /// not the model's to call, so they do not resolve here.
    pub fn resolve(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The tool `tool` (its server's own name for it) of `server` if an app rendered from
    /// that server may call it: its visibility includes `app` (the default). The MCP Apps
    /// specification keeps an app's calls to its own server.
    pub fn app_tool(&self, server: &str, tool: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            e.server == server
                && e.tool.name == tool
                && mcp_types::apps::ToolUi::of(&e.tool)
                    .is_none_or(|ui| ui.is_visible_to(mcp_client::apps::Visibility::App))
        })
    }

    /// Every declaration for `vendor` of a tool offered to the model, in
    /// [`entries`](Self::entries) order (app-only tools are left out, as the MCP Apps
    /// specification requires). Wrap them as the vendor wants: `tools` for OpenAI and
    /// Anthropic, `tools: [{"functionDeclarations": [...]}]` for Gemini.
    pub fn declarations(&self, vendor: Vendor) -> Vec<Value> {
        self.entries
            .iter()
            .filter(|e| e.model_visible)
            .map(|e| self.declaration(e, vendor))
            .collect()
    }

    /// The value of the request's `tools` field for `vendor`: the declarations as an
    /// array for OpenAI and Anthropic, and `[{"functionDeclarations": [...]}]` for Gemini.
    ///
    /// ```
    /// use mcp_host::{Catalog, Vendor};
    /// let tools = vec![mcp_types::Tool::without_arguments("ping")];
    /// let catalog = Catalog::new([("net", tools.as_slice())]);
    /// assert_eq!(
    ///     catalog.tools_json(Vendor::Gemini),
    ///     serde_json::json!([{"functionDeclarations": [{"name": "net__ping"}]}])
    /// );
    /// ```
    pub fn tools_json(&self, vendor: Vendor) -> Value {
        let declarations = Value::Array(self.declarations(vendor));
        match vendor {
            Vendor::Gemini => json!([{ "functionDeclarations": declarations }]),
            _ => declarations,
        }
    }

    /// One entry's declaration for `vendor`.
    ///
    /// The description is the tool's `description` (or its `title`), cut to
    /// [`SchemaLimits::max_description`] characters. It is untrusted text from the server,
    /// passed on as data in the declaration and nowhere else.
    pub fn declaration(&self, entry: &Entry, vendor: Vendor) -> Value {
        let limits = &self.limits;
        let description = entry
            .tool
            .description
            .as_deref()
            .or(entry.tool.title.as_deref())
            .map(|d| cap_text(d, limits.max_description));
        let mut input =
            serde_json::to_value(&entry.tool.input_schema).unwrap_or_else(|_| json!({}));
        if let Some(map) = input.as_object_mut() {
            map.remove("$schema");
        }
        let mut out = Map::new();
        let described = |out: &mut Map<String, Value>| {
            if let Some(d) = &description {
                out.insert("description".to_owned(), Value::String(d.clone()));
            }
        };
        match vendor {
            Vendor::OpenAiChat => {
                let mut function = Map::new();
                function.insert("name".to_owned(), Value::String(entry.name.clone()));
                described(&mut function);
                function.insert("parameters".to_owned(), schema::bounded(&input, limits));
                out.insert("type".to_owned(), json!("function"));
                out.insert("function".to_owned(), Value::Object(function));
            }
            Vendor::OpenAiResponses => {
                out.insert("type".to_owned(), json!("function"));
                out.insert("name".to_owned(), Value::String(entry.name.clone()));
                described(&mut out);
                let strict = schema::strict(&input, limits);
                let is_strict = strict.is_some();
                let parameters = strict.unwrap_or_else(|| schema::bounded(&input, limits));
                out.insert("parameters".to_owned(), parameters);
                out.insert("strict".to_owned(), Value::Bool(is_strict));
            }
            Vendor::Anthropic => {
                out.insert("name".to_owned(), Value::String(entry.name.clone()));
                described(&mut out);
                out.insert("input_schema".to_owned(), schema::bounded(&input, limits));
            }
            Vendor::Gemini => {
                out.insert("name".to_owned(), Value::String(entry.name.clone()));
                described(&mut out);
                if let Some(parameters) = schema::gemini(&input, limits) {
                    out.insert("parameters".to_owned(), parameters);
                }
            }
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{Tool, ToolAnnotations};

    use super::*;
    use crate::rules::require_approval_if_destructive;

    fn tool(name: &str, destructive: Option<bool>) -> Tool {
        let mut tool = Tool::without_arguments(name);
        if destructive.is_some() {
            let mut hints = ToolAnnotations::default();
            hints.destructive_hint = destructive;
            tool.annotations = Some(hints);
        }
        tool
    }

    /// The exposed names and whether each needs approval.
    fn exposed(builder: &CatalogBuilder, servers: &[(&str, Vec<Tool>)]) -> Vec<(String, bool)> {
        builder
            .build(servers.iter().map(|(s, t)| (*s, t.as_slice())))
            .entries()
            .iter()
            .map(|e| (e.name.clone(), e.requires_approval))
            .collect()
    }

    #[test]
    fn exposure_and_policy() {
        let servers = [
            (
                "fs",
                vec![
                    tool("read", Some(false)),
                    tool("rm", Some(true)),
                    tool("read", None),
                ],
            ),
            ("git", vec![tool("log", Some(false)), tool("push", None)]),
            ("x.y", vec![tool("z", Some(false))]),
            ("x_y", vec![tool("z", Some(false))]),
        ];
        let hide_push = |_: &str, tool: &Tool| {
            if tool.name == "push" {
                Decision::Hide
            } else {
                require_approval_if_destructive("", tool)
            }
        };
        let mut builder = Catalog::builder()
            .exposure(
                Exposure::new()
                    .allow("fs", ["read", "rm"])
                    .deny("x_y", ["*"])
                    .group("git", [("git", "*")], false),
            )
            .policy(hide_push);
        let names = |v: &[(String, bool)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        let first = exposed(&builder, &servers);
        // The duplicate `read` is dropped; `x_y__z` is denied but still keeps `x.y`'s
        // name suffixed, so that undoing the deny renames nothing.
        assert_eq!(first[0], ("fs__read".to_owned(), false));
        assert_eq!(first[1], ("fs__rm".to_owned(), true));
        assert_eq!(first.len(), 3);
        assert!(first[2].0.starts_with("x_y__z_"));
        builder.exposure_mut().set_group("git", true);
        let second = exposed(&builder, &servers);
        assert_eq!(
            names(&second),
            ["fs__read", "fs__rm", "git__log", first[2].0.as_str()]
        );
        assert!(!builder.exposure_mut().set_group("nope", true));
    }

    #[test]
    fn approval_rules_add_to_the_policy() {
        let servers = [
            (
                "fs",
                vec![
                    tool("read", Some(false)),
                    tool("rm", None),
                    tool("mv", Some(false)),
                ],
            ),
            ("git", vec![tool("push", Some(false)), tool("log", None)]),
        ];
        let hide_log = |_: &str, tool: &Tool| {
            if tool.name == "log" {
                Decision::Hide
            } else {
                Decision::Expose
            }
        };
        let builder = Catalog::builder()
            .policy(hide_log)
            .approval("fs", Approval::new().destructive(true))
            .approval("fs", Approval::new().tools(["m*"]))
            .approval("git", Approval::new().tools(["*"]));
        assert_eq!(
            exposed(&builder, &servers),
            [
                ("fs__read".to_owned(), false),
                ("fs__rm".to_owned(), true),
                ("fs__mv".to_owned(), true),
                // `git__log` is hidden by the policy: approval rules do not bring it back.
                ("git__push".to_owned(), true),
            ]
        );
    }

    #[test]
    fn explicit_names_win_and_map_back() {
        let servers = [
            ("fs", vec![tool("read", None), tool("rm", None)]),
            ("git", vec![tool("log", None), tool("push", None)]),
            ("x", vec![tool("y", None)]),
        ];
        let builder = Catalog::builder()
            // Takes the name `git`'s `log` would derive.
            .rename("fs", "read", "git__log")
            .rename("git", "push", "publish")
            // Unusable, or taken by an earlier tool: the derived name stays.
            .rename("fs", "rm", "rm now")
            .rename("x", "y", "publish");
        let catalog = builder.build(servers.iter().map(|(s, t)| (*s, t.as_slice())));
        let names: Vec<&str> = catalog.entries().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names[0], "git__log");
        assert_eq!(names[1], "fs__rm");
        assert!(names[2].starts_with("git__log_"), "{names:?}");
        assert_eq!(names[3..], ["publish", "x__y"]);
        for (name, server, tool) in [
            ("git__log", "fs", "read"),
            ("publish", "git", "push"),
            (names[2], "git", "log"),
            ("x__y", "x", "y"),
        ] {
            let entry = catalog.resolve(name).unwrap();
            assert_eq!(
                (entry.server.as_str(), entry.tool.name.as_str()),
                (server, tool)
            );
        }
        // Apps address tools by their own names still.
        assert_eq!(catalog.app_tool("git", "push").unwrap().name, "publish");
    }

    #[test]
    fn vendors_round_trip_their_names() {
        for vendor in Vendor::ALL {
            assert_eq!(vendor.as_str().parse::<Vendor>().unwrap(), vendor);
        }
    }
}
