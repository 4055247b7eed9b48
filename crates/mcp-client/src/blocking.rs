//! A synchronous client (feature `blocking`), the way `reqwest::blocking` is one: each
//! [`Client`] owns a tokio runtime (one worker thread, which also runs the connection's
//! background tasks and the input handlers), and each method blocks the calling thread
//! until the async [`crate::Client`]'s call completes.
//!
//! A blocking call made from within an async runtime would block one of its threads (and,
//! on a current-thread runtime, deadlock it), so every method refuses it with
//! [`Error::BlockingInAsync`] instead of panicking as `reqwest::blocking` does. Use the
//! async [`crate::Client`] there.
//!
//! ```
//! # #[cfg(all(feature = "http", feature = "stdio"))] {
//! use std::time::Duration;
//! use mcp_client::{Client, blocking};
//! use mcp_types::JsonObject;
//! # // A server to talk to, on a runtime of its own.
//! # let server = mcp_server::Server::builder("doc-server", "1")
//! #     .tool(mcp_server::ToolDef::new("hello", serde_json::json!({"type": "object"}), |_, _| async {
//! #         Ok(mcp_types::CallToolResult::text("Hello!"))
//! #     }))
//! #     .build()
//! #     .unwrap();
//! # let server_runtime = tokio::runtime::Runtime::new().unwrap();
//! # let running = server_runtime
//! #     .block_on(mcp_transport_http::HttpServer::bind(
//! #         "127.0.0.1:0".parse().unwrap(),
//! #         server,
//! #         mcp_transport_http::HttpServerConfig::default(),
//! #     ))
//! #     .unwrap();
//! # let url = running.url().to_owned();
//!
//! // No async runtime here: the blocking client brings its own.
//! let client = blocking::Client::connect_http(
//!     Client::builder("my-app", "1.0"),
//!     &url,
//!     Default::default(),
//! )?;
//! let tools = client.list_tools_all()?;
//! assert_eq!(tools[0].name, "hello");
//! let result = client.call_tool("hello", &JsonObject::new())?;
//! assert_eq!(result.is_error, None);
//! client.close(Duration::from_secs(1))?;
//!
//! // Inside an async runtime the blocking client refuses to start, without panicking.
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let refused = runtime.block_on(async {
//!     blocking::Client::connect_http(Client::builder("my-app", "1.0"), &url, Default::default())
//! });
//! assert!(matches!(refused, Err(mcp_client::Error::BlockingInAsync)));
//! # }
//! # Ok::<(), mcp_client::Error>(())
//! ```

use std::future::Future;
use std::time::Duration;

use mcp_types::{
    CallToolResult, DiscoverResult, GetPromptResult, JsonObject, ListToolsResult, OrderedMap,
    Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};

use crate::{ClientBuilder, Error};

/// A connection to one MCP server whose methods block ([module docs](self)).
pub struct Client {
    inner: crate::Client,
    /// The owned runtime; `None` only while being dropped.
    runtime: Option<tokio::runtime::Runtime>,
    /// The server process, for a client that spawned one.
    #[cfg(feature = "stdio")]
    server: Option<mcp_transport_stdio::ServerConnection>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Client")
            .field("client", &self.inner)
            .finish_non_exhaustive()
    }
}

/// Refuses to block a thread of an async runtime.
fn outside_async() -> Result<(), Error> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::BlockingInAsync);
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("mcp-client-blocking")
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

impl Client {
    /// Spawns `command` and connects to it over stdio
    /// ([`ClientBuilder::connect_stdio`]). [`close`](Self::close) stops the server.
    #[cfg(feature = "stdio")]
    pub fn connect_stdio(
        builder: ClientBuilder,
        command: &mcp_transport_stdio::ServerCommand,
    ) -> Result<Self, Error> {
        outside_async()?;
        let runtime = runtime()?;
        let (client, server) = {
            let _entered = runtime.enter();
            builder.connect_stdio(command)?
        };
        Ok(Client {
            inner: client,
            runtime: Some(runtime),
            server: Some(server),
        })
    }

    /// A client over Streamable HTTP to `url` ([`ClientBuilder::connect_http`]).
    #[cfg(feature = "http")]
    pub fn connect_http(
        builder: ClientBuilder,
        url: &str,
        config: mcp_transport_http::HttpClientConfig,
    ) -> Result<Self, Error> {
        outside_async()?;
        let runtime = runtime()?;
        let client = {
            let _entered = runtime.enter();
            builder.connect_http(url, config)?
        };
        Ok(Client {
            inner: client,
            runtime: Some(runtime),
            #[cfg(feature = "stdio")]
            server: None,
        })
    }

    /// The async client underneath, for what this one does not wrap. Its futures must be
    /// run on [`handle`](Self::handle)'s runtime (`handle().block_on(...)`).
    pub fn as_async(&self) -> &crate::Client {
        &self.inner
    }

    /// The owned runtime's handle.
    pub fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.runtime.as_ref().map(tokio::runtime::Runtime::handle)
    }

    /// Runs `call` on the owned runtime, blocking this thread until it completes.
    fn block<T>(&self, call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        outside_async()?;
        match &self.runtime {
            Some(runtime) => runtime.block_on(call),
            None => Err(Error::Transport(mcp_jsonrpc::Error::Closed(None))),
        }
    }

    /// `server/discover` ([`crate::Client::discover`]).
    pub fn discover(&self) -> Result<DiscoverResult, Error> {
        self.block(self.inner.discover())
    }

    /// One page of `tools/list` ([`crate::Client::list_tools`]).
    pub fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        self.block(self.inner.list_tools(cursor))
    }

    /// Every tool, following cursors ([`crate::Client::list_tools_all`]).
    pub fn list_tools_all(&self) -> Result<Vec<Tool>, Error> {
        self.block(self.inner.list_tools_all())
    }

    /// `tools/call` ([`crate::Client::call_tool`]): a tool failure is `Ok` with
    /// `is_error` set.
    pub fn call_tool(&self, name: &str, arguments: &JsonObject) -> Result<CallToolResult, Error> {
        self.block(self.inner.call_tool(name, arguments))
    }

    /// `tools/call` with per-call options ([`crate::Client::call_tool_with`]).
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: &JsonObject,
        options: &crate::CallOptions,
    ) -> Result<CallToolResult, Error> {
        self.block(self.inner.call_tool_with(name, arguments, options))
    }

    /// Every resource, following cursors ([`crate::Client::list_resources_all`]).
    pub fn list_resources_all(&self) -> Result<Vec<Resource>, Error> {
        self.block(self.inner.list_resources_all())
    }

    /// Every resource template ([`crate::Client::list_resource_templates_all`]).
    pub fn list_resource_templates_all(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.block(self.inner.list_resource_templates_all())
    }

    /// `resources/read` ([`crate::Client::read_resource`]).
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.block(self.inner.read_resource(uri))
    }

    /// Every prompt, following cursors ([`crate::Client::list_prompts_all`]).
    pub fn list_prompts_all(&self) -> Result<Vec<Prompt>, Error> {
        self.block(self.inner.list_prompts_all())
    }

    /// `prompts/get` ([`crate::Client::get_prompt`]).
    pub fn get_prompt(
        &self,
        name: &str,
        arguments: OrderedMap<String>,
    ) -> Result<GetPromptResult, Error> {
        self.block(self.inner.get_prompt(name, arguments))
    }

    /// Ends the connection: a server this client spawned is stopped (stdin closed, then
    /// SIGTERM, then SIGKILL after `grace`), and the runtime is shut down.
    pub fn close(mut self, grace: Duration) -> Result<(), Error> {
        outside_async()?;
        let Some(runtime) = self.runtime.take() else {
            return Ok(());
        };
        #[cfg(feature = "stdio")]
        let server = self.server.take();
        let client = self.inner.clone();
        let outcome = runtime.block_on(async move {
            client.shutdown(grace).await;
            #[cfg(feature = "stdio")]
            if let Some(server) = server {
                server.shutdown(grace).await.map_err(Error::Spawn)?;
            }
            Ok(())
        });
        runtime.shutdown_timeout(grace);
        outcome
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which a thread of another runtime may not do; shut it
        // down without waiting instead. A spawned server is killed with its connection.
        if let Some(runtime) = self.runtime.take() {
            // The server connection's parts are dropped in the runtime's context (the
            // process is killed, its tasks aborted).
            #[cfg(feature = "stdio")]
            {
                let _entered = runtime.enter();
                drop(self.server.take());
            }
            runtime.shutdown_background();
        }
    }
}
