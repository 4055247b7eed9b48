//! [`ServerBuilder`]: the registrations, capabilities, cache policies and limits a
//! [`Server`] starts with.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mcp_jsonrpc::CancellationToken;
use mcp_types::{
    CompleteRequestParams, CompleteResultCompletion, Icon, Implementation, ResultMetaObject,
    ServerCapabilities,
};
use serde_json::Value;

#[cfg(feature = "skills")]
use super::skills;
use super::{CacheKind, CachePolicy, CompletionFn, Inner, Registry, Server, apps, tasks, to_raw};
use crate::bus::{Bus, ChangeBus};
use crate::context::Context;
use crate::define::{
    IntoPromptDef, IntoResourceDef, IntoResourceTemplateDef, IntoToolDef, ToolSet,
};
use crate::error::{Error, ToolError};
use crate::extension::Extension;
use crate::limits::{Limits, ListenStreams};
use crate::state::StateKeys;

/// Builds a [`Server`].
pub struct ServerBuilder {
    extensions: Vec<Arc<dyn Extension>>,
    tasks: Option<Arc<tasks::TaskEngine>>,
    #[cfg(feature = "skills")]
    skills: Option<Arc<skills::SkillsEngine>>,
    info: Implementation,
    instructions: Option<String>,
    registry: Registry,
    completion: Option<CompletionFn>,
    cache: [Option<CachePolicy>; 6],
    page_size: usize,
    state_keys: Option<StateKeys>,
    state_ttl: Duration,
    enable: (bool, bool, bool),
    error: Option<Error>,
    limits: Limits,
    changes: Bus,
}

mcp_types::debug_fields!(ServerBuilder { info });

impl Server {
    /// Starts building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            extensions: Vec::new(),
            tasks: None,
            #[cfg(feature = "skills")]
            skills: None,
            info: Implementation::new(name, version),
            instructions: None,
            registry: Registry::default(),
            completion: None,
            cache: [None; 6],
            // Large enough that a server of a few hundred tools lists them in one page:
            // one round trip, and all of them for a client that does not follow
            // `nextCursor`. Each page is written once and kept, so it costs no more per
            // request for being large.
            page_size: 1000,
            state_keys: None,
            state_ttl: Duration::from_mins(10),
            enable: (false, false, false),
            error: None,
            limits: Limits::default(),
            changes: Bus::default(),
        }
    }
}

/// Checks the icons of `owner`: each `src` must be an `https:` or a `data:` URI.
fn check_icons(owner: impl FnOnce() -> String, icons: Option<&Vec<Icon>>) -> Result<(), Error> {
    let unsafe_src = icons.into_iter().flatten().find(|icon| {
        let scheme = icon.src.split_once(':').map(|(scheme, _)| scheme);
        !scheme.is_some_and(|s| s.eq_ignore_ascii_case("https") || s.eq_ignore_ascii_case("data"))
    });
    match unsafe_src {
        Some(icon) => Err(Error::InvalidIcon {
            owner: owner(),
            src: icon.src.clone(),
        }),
        None => Ok(()),
    }
}

/// Adds `item` to `list` unless an entry there has the same `key`: a duplicate is an
/// [`Error::Duplicate`] of `kind`, and `list` is left as it was.
fn add_unique<T>(
    list: &mut Vec<Arc<T>>,
    item: T,
    kind: &'static str,
    key: impl Fn(&T) -> &String,
) -> Result<(), Error> {
    if list.iter().any(|x| key(x) == key(&item)) {
        let name = key(&item).clone();
        return Err(Error::Duplicate { kind, name });
    }
    list.push(Arc::new(item));
    Ok(())
}

impl ServerBuilder {
    /// Records the first registration error; `build` reports it.
    fn fail(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    text_setters!(info {
        /// Sets the server's display title (`serverInfo.title`).
        title,
        /// Sets the server's description (`serverInfo.description`).
        description,
    });

    icons_setter!(info);

    /// Sets the instructions clients may show the model (`server/discover`).
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool: a [`ToolDef`](crate::ToolDef), a `Result` of one, or a function the `#[tool]` macro
    /// defined. A duplicate name or an invalid definition is an error at `build`; a tool
    /// whose `x-mcp-header` annotations are invalid is dropped with a warning, as clients
    /// would drop it.
    #[must_use]
    pub fn tool(mut self, tool: impl IntoToolDef) -> Self {
        let added = tool.into_tool_def().and_then(|tool| {
            check_icons(
                || format!("tool {:?}", tool.tool.name),
                tool.tool.icons.as_ref(),
            )?;
            add_unique(&mut self.registry.tools, tool, "tool", |t| &t.tool.name)
        });
        match added {
            Ok(()) => {}
            Err(e @ Error::InvalidHeaderAnnotation { .. }) => {
                tracing::warn!(error = %e, "dropping the tool");
            }
            Err(e) => self.fail(e),
        }
        self
    }

    /// Adds every tool of a set: what the `#[tools]` macro makes of an impl block.
    #[must_use]
    pub fn tools(self, tools: impl ToolSet) -> Self {
        tools.into_tool_defs().into_iter().fold(self, Self::tool)
    }

    /// Adds a prompt: a [`PromptDef`](crate::PromptDef), a `Result` of one, or a function the `#[prompt]`
    /// macro defined.
    #[must_use]
    pub fn prompt(mut self, prompt: impl IntoPromptDef) -> Self {
        let added = prompt.into_prompt_def().and_then(|p| {
            check_icons(
                || format!("prompt {:?}", p.prompt.name),
                p.prompt.icons.as_ref(),
            )?;
            add_unique(&mut self.registry.prompts, p, "prompt", |p| &p.prompt.name)
        });
        if let Err(e) = added {
            self.fail(e);
        }
        self
    }

    /// Adds a resource at a fixed URI: a [`ResourceDef`](crate::ResourceDef) or a function the `#[resource]`
    /// macro defined.
    #[must_use]
    pub fn resource(mut self, resource: impl IntoResourceDef) -> Self {
        let resource = resource.into_resource_def();
        let owner = || format!("resource {:?}", resource.resource.uri);
        let added = check_icons(owner, resource.resource.icons.as_ref()).and_then(|()| {
            add_unique(&mut self.registry.resources, resource, "resource", |r| {
                &r.resource.uri
            })
        });
        if let Err(e) = added {
            self.fail(e);
        }
        self
    }

    /// Adds an MCP App's UI resource (see [`crate::apps`]) and declares the extension
    /// (`io.modelcontextprotocol/ui`) in `server/discover`. It is listed only to clients
    /// that render apps.
    #[must_use]
    pub fn ui_resource(self, resource: crate::apps::UiResource) -> Self {
        self.resource(resource.into_def())
    }

    /// Adds a resource template: a [`ResourceTemplateDef`](crate::ResourceTemplateDef), a `Result` of one, or a
    /// function the `#[resource(template = "...")]` macro defined.
    #[must_use]
    pub fn resource_template(mut self, template: impl IntoResourceTemplateDef) -> Self {
        let checked = template.into_resource_template_def().and_then(|t| {
            let owner = || format!("resource template {:?}", t.template.uri_template);
            check_icons(owner, t.template.icons.as_ref()).map(|()| t)
        });
        match checked {
            Ok(t) => self.registry.templates.push(Arc::new(t)),
            Err(e) => self.fail(e),
        }
        self
    }

    /// Sets the handler of `completion/complete` (and declares the `completions`
    /// capability).
    #[must_use]
    pub fn completion<F, Fut>(mut self, complete: F) -> Self
    where
        F: Fn(CompleteRequestParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CompleteResultCompletion, ToolError>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |params, cx| Box::pin(complete(params, cx))));
        self
    }

    /// Adds an extension: advertised in `capabilities.extensions`, its methods served to
    /// requests that declare it.
    #[must_use]
    pub fn extension(mut self, extension: impl Extension) -> Self {
        self.extensions.push(Arc::new(extension));
        self
    }

    /// Serves the Tasks extension (`io.modelcontextprotocol/tasks`): tools registered with
    /// [`ToolDef::task_support`](crate::ToolDef::task_support) may run as tasks, and `tasks/get`, `tasks/update` and
    /// `tasks/cancel` are served to requests that declare the extension. See
    /// [`crate::tasks`].
    #[must_use]
    pub fn tasks(mut self, tasks: crate::tasks::Tasks) -> Self {
        let engine = Arc::new(tasks::TaskEngine::new(tasks));
        self.extensions
            .retain(|e| e.id() != mcp_types::tasks::EXTENSION_ID);
        self.extensions
            .push(Arc::clone(&engine) as Arc<dyn Extension>);
        self.tasks = Some(engine);
        self
    }

    /// Serves the Skills extension (`io.modelcontextprotocol/skills`, feature `skills`):
    /// every file of every skill becomes a resource (listed and read like any other), the
    /// `resources` capability is declared, and `skills/list`, `skills/get` and, when
    /// enabled, `resources/directory/read` are served. An invalid skill, or a skill file
    /// whose URI another resource already has, is an error at `build`. See
    /// [`crate::skills`].
    #[cfg(feature = "skills")]
    #[must_use]
    pub fn skills(mut self, skills: crate::skills::Skills) -> Self {
        match skills::SkillsEngine::new(skills) {
            Ok((engine, resources)) => {
                for resource in resources {
                    self = self.resource(resource);
                }
                self.extensions
                    .retain(|e| e.id() != mcp_types::skills::EXTENSION_ID);
                let engine = Arc::new(engine);
                self.extensions
                    .push(Arc::clone(&engine) as Arc<dyn Extension>);
                self.skills = Some(engine);
            }
            Err(e) => self.fail(e),
        }
        self
    }

    /// Declares the tools, prompts and resources capabilities even with nothing registered
    /// yet (for servers that add them at run time).
    #[must_use]
    pub fn enable(mut self, tools: bool, prompts: bool, resources: bool) -> Self {
        self.enable = (tools, prompts, resources);
        self
    }

    /// Sets the cache policy of every list, discover and read result.
    ///
    /// Without one, a result is stale at once and `public`, except that the lists and
    /// reads of an authenticated request (one whose transport established a
    /// [`Principal`](mcp_jsonrpc::Principal)) are `private`: they may depend on who asked,
    /// so a client may reuse them only within the same authorization context. A policy
    /// set here is used as it is, authenticated or not.
    #[must_use]
    pub fn cache(mut self, policy: CachePolicy) -> Self {
        self.cache = [Some(policy); 6];
        self
    }

    /// Sets the cache policy of one kind of result (for example a short TTL for
    /// `resources/read` and a long one for `tools/list`); see [`cache`](Self::cache) for
    /// the default.
    #[must_use]
    pub fn cache_for(mut self, kind: CacheKind, policy: CachePolicy) -> Self {
        self.cache[kind as usize] = Some(policy);
        self
    }

    /// Sets how many items a list page holds (default 1000).
    #[must_use]
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Sets the key that seals `requestState` (default: random per process), as a ring of
    /// that one key; see [`state_keys`](Self::state_keys) to rotate it later. A fleet of
    /// servers behind a load balancer shares one key so any of them can take a retry.
    #[must_use]
    pub fn state_key(mut self, key: [u8; 32]) -> Self {
        self.state_keys = Some(StateKeys::new(key));
        self
    }

    /// Sets the key ring that seals `requestState` (default: a ring of one random key made
    /// at [`build`](Self::build)). The server keeps this handle, so a clone kept by the
    /// caller rotates the running server's key ([`StateKeys::rotate`]).
    #[must_use]
    pub fn state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Sets the server's [`Limits`] (listen streams per principal, tool call time).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the bus that carries the server's changes to its `subscriptions/listen`
    /// streams (and to initialize-era sessions, which listen through one). The default is
    /// an [`InProcessBus`](crate::bus::InProcessBus) of its own: listeners hear this
    /// server's changes only. A bus shared by a fleet (such as
    /// [`RedisChangeBus`](crate::bus) with the feature `change-bus-redis`) makes a listener
    /// on one instance hear the changes made on any. An `InProcessBus` given here is kept
    /// as it is, any other bus behind the [`ChangeBus`] trait; either way no request pays
    /// for it but `subscriptions/listen`, once per stream. See [`crate::bus`].
    #[must_use]
    pub fn change_bus(mut self, bus: impl ChangeBus) -> Self {
        self.changes = Bus::from_installed(bus);
        self
    }

    /// Builds the server, or reports the first invalid or duplicate definition.
    pub fn build(mut self) -> Result<Server, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        check_icons(|| "server".to_owned(), self.info.icons.as_ref())?;
        #[cfg(not(feature = "schema-validation"))]
        {
            // Once per process: a server that quietly stopped validating arguments would
            // be a surprise in production, but a log line per built server is noise.
            static NOTICE: std::sync::Once = std::sync::Once::new();
            NOTICE.call_once(|| {
                tracing::info!(
                    "mcp-server built without the schema-validation feature: tool arguments \
                     are checked only by deserializing them, structured output is not checked"
                );
            });
        }
        apps::check_links(&self.registry)?;
        if apps::in_use(&self.registry)
            && !self
                .extensions
                .iter()
                .any(|e| e.id() == mcp_types::apps::EXTENSION_ID)
        {
            self.extensions.push(Arc::new(apps::AppsExtension));
        }
        let state_keys = match self.state_keys {
            Some(keys) => keys,
            None => StateKeys::random()?,
        };
        // A shorter overlap would refuse state handed out just before a rotation while it
        // is still within its lifetime.
        if state_keys.overlap() < self.state_ttl {
            return Err(Error::InvalidStateKeys {
                reason: "the overlap of a rotated key is shorter than the requestState lifetime",
            });
        }
        let mut capabilities = ServerCapabilities::new();
        let r = &self.registry;
        if !r.tools.is_empty() || self.enable.0 {
            let mut tools = mcp_types::ServerCapabilitiesTools::new();
            tools.list_changed = Some(true);
            capabilities.tools = Some(tools);
        }
        if !r.prompts.is_empty() || self.enable.1 {
            let mut prompts = mcp_types::ServerCapabilitiesPrompts::new();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        #[cfg(feature = "skills")]
        let serves_skills = self.skills.is_some();
        #[cfg(not(feature = "skills"))]
        let serves_skills = false;
        if !r.resources.is_empty() || !r.templates.is_empty() || self.enable.2 || serves_skills {
            let mut resources = mcp_types::ServerCapabilitiesResources::new();
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        if self.completion.is_some() {
            capabilities.completions = Some(mcp_types::JsonObject::new());
        }
        capabilities.logging = Some(mcp_types::JsonObject::new());
        if !self.extensions.is_empty() {
            let mut extensions = mcp_types::JsonObject::new();
            for extension in &self.extensions {
                extensions.insert(
                    extension.id().to_owned(),
                    Value::Object(extension.settings()),
                );
            }
            capabilities.extensions = Some(extensions);
        }
        let mut meta = ResultMetaObject::new();
        meta.server_info = Some(self.info.clone());
        let meta_json = to_raw(&meta).ok();
        let server = Server {
            inner: Arc::new(Inner {
                extensions: self.extensions,
                tasks: self.tasks,
                #[cfg(feature = "skills")]
                skills: self.skills,
                info: self.info,
                meta_json,
                instructions: std::sync::RwLock::new(self.instructions),
                capabilities,
                registry: RwLock::new(self.registry),
                completion: self.completion,
                cache: self.cache,
                page_size: self.page_size,
                state_keys,
                state_ttl: self.state_ttl,
                changes: self.changes,
                shutdown: CancellationToken::new(),
                limits: self.limits,
                listen_streams: ListenStreams::default(),
            }),
        };
        if let Some(engine) = &server.inner.tasks {
            engine.attach(&server.inner);
        }
        #[cfg(feature = "skills")]
        if let Some(engine) = &server.inner.skills {
            engine.attach(&server.inner);
        }
        Ok(server)
    }
}
