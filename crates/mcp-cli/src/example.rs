//! The bundled example server (`mcp serve-example`): a small server that shows MCP off, and
//! the fixed `echo` and `add` tools that the smoke tests rely on.
//!
//! It is an ordinary `mcp_server::Server`, served for both eras by `mcp-legacy`: a
//! 2026-07-28 client and an initialize-era client get the same tools, resources and
//! prompts, over stdio or Streamable HTTP (and the 2024-11-05 HTTP+SSE transport).
//!
//! - tools: `echo` (its `text` back), `add` (the sum of integers `a` and `b`), `countdown`
//!   (counts down `seconds`, reporting progress), `greet` (asks the user's name by
//!   elicitation, then greets them), `increment` (adds one to the counter resource and
//!   tells its subscribers);
//! - resources: `example://readme` (what this server is), `example://counter` (a number
//!   that `increment` changes: `mcp listen example://counter` follows it), and the
//!   template `example://squares/{n}` (the square of `n`);
//! - prompts: `explain` (argument `topic`, completed from a fixed list).
//!
//! The benchmark and the soak measure a server of their own, `mcp-bench-server`
//! (`crates/mcp-bench-server`), not this one.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, CompleteResultCompletion, ContentBlock, ElicitRequestFormParams,
    ElicitRequestParams, EmbeddedResourceResource, GetPromptResult, PromptMessage, Role,
    TextResourceContents,
};
use serde::Deserialize;
use serde_json::json;

use self::echo_add::echo_and_add;

mod echo_add;

/// The server's name, as `server/discover` (or `initialize`) reports it.
pub(crate) const NAME: &str = "mcp-example";

const README: &str = "# The mcp example server\n\n\
This server comes with the `mcp` tool. It has five tools (echo, add, countdown, greet, \
increment), a readme and a counter resource, a template of squares and one prompt. Try:\n\n\
    mcp tools\n    mcp call add a=2 b=3\n    mcp read example://squares/12\n    mcp prompt explain topic=tools\n";

const TOPICS: [&str; 6] = [
    "tools",
    "resources",
    "prompts",
    "elicitation",
    "subscriptions",
    "transports",
];

#[derive(Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Countdown {
    /// How many seconds to count down (at most 10).
    seconds: u8,
}

const COUNTER: &str = "example://counter";

/// What instances of the example server share when they serve as a fleet
/// (`serve-example --redis URL`), all in Redis: the change bus (list changes and
/// `resources/updated` reach listeners on every instance), the task store, the
/// `requestState` key ring, and the initialize-era HTTP sessions (any instance serves any
/// request of a 2025-era session).
pub(crate) struct Shared {
    bus: mcp_server::bus::RedisChangeBus,
    tasks: mcp_server::tasks::RedisStore,
    keys: mcp_server::RedisStateKeys,
    pub(crate) sessions: mcp_legacy::http::SessionStore,
}

impl Shared {
    /// Connects each to the Redis at `url`.
    pub(crate) async fn connect(url: &str) -> Result<Shared, crate::Error> {
        Ok(Shared {
            bus: mcp_server::bus::RedisChangeBus::connect(url).await?,
            tasks: mcp_server::tasks::RedisStore::connect(url).await?,
            keys: mcp_server::RedisStateKeys::builder(url).connect().await?,
            sessions: mcp_legacy::http::SessionStore::redis(url)
                .connect()
                .await
                .map_err(crate::Error::Serve)?,
        })
    }
}

/// The example server.
pub(crate) fn server() -> Result<Server, mcp_server::Error> {
    server_with(None)
}

/// The example server, sharing what `shared` holds with the other instances of a fleet.
pub(crate) fn server_with(shared: Option<Shared>) -> Result<Server, mcp_server::Error> {
    let counter = Arc::new(AtomicI64::new(0));
    let read_counter = Arc::clone(&counter);
    let handle: Arc<OnceLock<Server>> = Arc::default();
    let notify = Arc::clone(&handle);
    let builder = echo_and_add(
        Server::builder(NAME, env!("CARGO_PKG_VERSION")).instructions(
            "An example server: echo and add are pure, countdown reports progress, greet \
             asks the user for their name.",
        ),
    )
    .tool(
        ToolDef::typed("countdown", |args: Countdown, cx| async move {
            let seconds = args.seconds.min(10);
            let total = f64::from(seconds);
            for left in (1..=seconds).rev() {
                let done = total - f64::from(left);
                cx.progress(done, Some(total), Some(&format!("{left} s left")))
                    .await;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    () = cx.cancellation().cancelled() => {
                        return Err(ToolError::failed("cancelled"));
                    }
                }
            }
            cx.progress(total, Some(total), Some("done")).await;
            Ok(CallToolResult::text(format!("Counted down {seconds} s")))
        })
        .description("Counts down the given seconds, reporting progress")
        // A client of the Tasks extension may run it as a task.
        .task_support(mcp_server::tasks::TaskSupport::Optional),
    )
    .tool(
        ToolDef::new(
            "greet",
            json!({"type": "object", "properties": {}}),
            |_args, cx| async move {
                let form: ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "title": "Your name"}},
                        "required": ["name"]
                    }
                }))?;
                let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
                let answer = serde_json::to_value(&answer)?;
                match answer["action"].as_str() {
                    Some("accept") => Ok(CallToolResult::text(format!(
                        "Hello, {}!",
                        answer["content"]["name"].as_str().unwrap_or("stranger")
                    ))),
                    _ => Ok(CallToolResult::text("Hello, whoever you are.")),
                }
            },
        )
        .description("Asks your name, then greets you"),
    )
    .tool(
        ToolDef::new(
            "increment",
            json!({"type": "object", "properties": {}}),
            move |_args, _cx| {
                let counter = Arc::clone(&counter);
                let notify = Arc::clone(&notify);
                async move {
                    let now = counter.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(server) = notify.get() {
                        server.resource_updated(COUNTER);
                    }
                    Ok(CallToolResult::text(now.to_string()))
                }
            },
        )
        .description("Adds one to example://counter and notifies its subscribers"),
    )
    .resource(
        ResourceDef::new(COUNTER, "counter", move |uri, _cx| {
            let counter = Arc::clone(&read_counter);
            async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new(counter.load(Ordering::Relaxed).to_string(), uri),
                )])
            }
        })
        .description("A number that the increment tool changes")
        .mime_type("text/plain"),
    )
    .resource(
        ResourceDef::new("example://readme", "readme", |uri, _cx| async move {
            let mut contents = TextResourceContents::new(README, uri);
            contents.mime_type = Some("text/markdown".to_owned());
            Ok(vec![EmbeddedResourceResource::TextResourceContents(
                contents,
            )])
        })
        .description("What this server is")
        .mime_type("text/markdown"),
    )
    .resource_template(
        ResourceTemplateDef::new(
            "example://squares/{n}",
            "squares",
            |uri, vars, _cx| async move {
                let n: i64 = vars
                    .get("n")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| ToolError::invalid_params("n must be an integer"))?;
                let square = n
                    .checked_mul(n)
                    .ok_or_else(|| ToolError::invalid_params("n is too large"))?;
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new(square.to_string(), uri),
                )])
            },
        )
        .map(|t| t.description("The square of n").mime_type("text/plain")),
    )
    .prompt(
        PromptDef::new("explain", |args, _cx| async move {
            let topic = args.get("topic").cloned().unwrap_or_default();
            Ok(GetPromptResult::new(vec![PromptMessage::new(
                ContentBlock::text(format!(
                    "Explain MCP {topic} to a newcomer, with one short example."
                )),
                Role::User,
            )]))
        })
        .description("Asks the model to explain an MCP topic")
        .argument("topic", "The topic, such as tools or resources", true),
    )
    .completion(|params, _cx| async move {
        let typed = params.argument.value;
        let values: Vec<String> = TOPICS
            .iter()
            .filter(|t| t.starts_with(&typed))
            .map(|t| (*t).to_owned())
            .collect();
        let mut completion = CompleteResultCompletion::new(values.clone());
        completion.total = i64::try_from(values.len()).ok();
        completion.has_more = Some(false);
        Ok(completion)
    });
    let builder = match shared {
        Some(shared) => builder
            .change_bus(shared.bus)
            // A short lease, so that a task of an instance that died is resumed by another
            // within seconds.
            .tasks(mcp_server::tasks::Tasks::new(shared.tasks).lease(Duration::from_secs(5)))
            .state_keys(shared.keys.keys()),
        None => builder,
    };
    let server = builder.build()?;
    let _ = handle.set(server.clone());
    Ok(server)
}

/// Serves the example server on stdin and stdout, for both eras, until stdin closes.
pub(crate) async fn serve_stdio() -> Result<(), mcp_server::Error> {
    mcp_legacy::server::DualEra::new(server()?)
        .serve_stdio()
        .await;
    Ok(())
}

/// Serves the example server over Streamable HTTP (both eras) on `addr`, printing the
/// endpoint URL as the first line of stdout, until the process is interrupted. The accept
/// loop runs on the caller's runtime, the connections on two threads of their own.
pub(crate) async fn serve_http(
    addr: SocketAddr,
    drain: crate::HttpServing,
    redis: Option<&str>,
) -> Result<(), crate::Error> {
    let shared = match redis {
        Some(url) => Some(Shared::connect(url).await?),
        None => None,
    };
    let mut legacy = mcp_legacy::http::LegacyHttpConfig::default();
    if let Some(shared) = &shared {
        legacy = legacy.session_store(shared.sessions.clone());
    }
    let running = mcp_legacy::http::DualEraHttp::bind(
        addr,
        server_with(shared)?,
        drain.apply(mcp_transport_http::HttpServerConfig::default().connection_threads(2)),
        legacy,
    )
    .await
    .map_err(crate::Error::Serve)?;
    println!("{}", running.url());
    drain.serve_until_stopped(running).await;
    Ok(())
}
