//! Reading a server's lists (tools, prompts, resources and templates), and the host's
//! prompts and resources: listed under host-visible names ([`crate::content`]) and read
//! from the server they belong to.

use mcp_client::Client;
use mcp_types::{GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool};

use super::Host;
use super::changes::Lists;
use crate::Error;
use crate::content::{PromptEntry, ResourceEntry, TemplateEntry};

/// Lists read from a server; `None` for one not read, or that could not be.
#[derive(Debug, Default)]
pub(super) struct Fetched {
    pub(super) tools: Option<Vec<Tool>>,
    pub(super) prompts: Option<Vec<Prompt>>,
    pub(super) resources: Option<(Vec<Resource>, Vec<ResourceTemplate>)>,
}

impl Fetched {
    /// The lists that were read.
    pub(super) fn lists(&self) -> Lists {
        Lists {
            tools: self.tools.is_some(),
            prompts: self.prompts.is_some(),
            resources: self.resources.is_some(),
        }
    }
}

fn server_error(server: &str) -> impl Fn(mcp_client::Error) -> Error + '_ {
    move |source| Error::Server {
        server: server.to_owned(),
        source: Box::new(source),
    }
}

/// What was read of a list, if it was read; a failure is logged and the first one kept
/// in `error`.
fn keep<T>(
    name: &str,
    listed: Option<Result<T, mcp_client::Error>>,
    error: &mut Option<Error>,
) -> Option<T> {
    match listed? {
        Ok(listed) => Some(listed),
        Err(e) => {
            tracing::warn!(server = name, error = %e, "listing failed");
            error.get_or_insert_with(|| server_error(name)(e));
            None
        }
    }
}

/// The lists the server of `client` offers, as its discovery says: its tools always
/// (listing them is how a host uses a server), its prompts and resources when it declares
/// those capabilities. A server whose discovery fails is taken to offer tools only.
pub(super) async fn offered(name: &str, client: &Client) -> Lists {
    match client.discover().await {
        Ok(found) => Lists {
            tools: true,
            prompts: found.capabilities.prompts.is_some(),
            resources: found.capabilities.resources.is_some(),
        },
        Err(e) => {
            tracing::warn!(server = name, error = %e, "discovery failed: tools only");
            Lists {
                tools: true,
                ..Lists::default()
            }
        }
    }
}

/// Reads `lists` of the server `name` concurrently. Those that fail are left `None`; the
/// first failure is returned with them.
pub(super) async fn fetch(name: &str, client: &Client, lists: Lists) -> (Fetched, Option<Error>) {
    let tools = async {
        if lists.tools {
            Some(client.list_tools_all().await)
        } else {
            None
        }
    };
    let prompts = async {
        if lists.prompts {
            Some(client.list_prompts_all().await)
        } else {
            None
        }
    };
    let resources = async {
        if !lists.resources {
            return None;
        }
        let (resources, templates) = tokio::join!(
            client.list_resources_all(),
            client.list_resource_templates_all()
        );
        Some(resources.and_then(|r| templates.map(|t| (r, t))))
    };
    let (tools, prompts, resources) = tokio::join!(tools, prompts, resources);
    let mut error = None;
    let fetched = Fetched {
        tools: keep(name, tools, &mut error),
        prompts: keep(name, prompts, &mut error),
        resources: keep(name, resources, &mut error),
    };
    (fetched, error)
}

impl Host {
    /// Every prompt of every connected server, under host-visible names (named as tools
    /// are, by the host's [`NamingPolicy`](crate::NamingPolicy)), in server order. A
    /// snapshot: [`refresh`](Self::refresh) picks up changes.
    pub fn prompts(&self) -> Vec<PromptEntry> {
        self.content().prompts().to_vec()
    }

    /// Gets the prompt a host-visible name stands for (`prompts/get` on its server, under
    /// its own name). `arguments` are anything that serializes to a JSON object of
    /// strings (or `()` for none). Fails with [`Error::UnknownPrompt`] for a name no
    /// server's prompt has, and [`Error::Server`] when the server fails.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl serde::Serialize + Send,
    ) -> Result<GetPromptResult, Error> {
        let entry = self
            .content()
            .prompt(name)
            .cloned()
            .ok_or_else(|| Error::UnknownPrompt(name.to_owned()))?;
        let client = self
            .client(&entry.server)
            .ok_or_else(|| Error::UnknownServer(entry.server.clone()))?;
        client
            .get_prompt(&entry.prompt.name, arguments)
            .await
            .map_err(server_error(&entry.server))
    }

    /// Every resource of every connected server, under host-visible URIs: each one's own,
    /// or, for a URI two servers list, [`qualified_uri`](crate::qualified_uri) of each
    /// (see [`ResourceEntry`]). A snapshot, as [`prompts`](Self::prompts) is.
    pub fn resources(&self) -> Vec<ResourceEntry> {
        self.content().resources().to_vec()
    }

    /// Every resource template of every connected server, with its server: read a URI
    /// made from one with [`read_resource_from`](Self::read_resource_from).
    pub fn resource_templates(&self) -> Vec<TemplateEntry> {
        self.content().templates().to_vec()
    }

    /// Reads the resource a host-visible URI of [`resources`](Self::resources) stands for
    /// (`resources/read` on its server, with its own URI). Any other URI, one made from a
    /// template included, is [`Error::UnknownResource`]: the host does not guess a server.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let entry = self
            .content()
            .resource(uri)
            .cloned()
            .ok_or_else(|| Error::UnknownResource(uri.to_owned()))?;
        self.read_resource_from(&entry.server, &entry.resource.uri)
            .await
    }

    /// Reads `uri` from `server` (`resources/read`), whether or not it lists it: for a
    /// URI made from one of its [`resource_templates`](Self::resource_templates).
    pub async fn read_resource_from(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, Error> {
        let client = self
            .client(server)
            .ok_or_else(|| Error::UnknownServer(server.to_owned()))?;
        client
            .read_resource(uri)
            .await
            .map_err(server_error(server))
    }
}
