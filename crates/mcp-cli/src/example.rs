//! The bundled example server (`mcp serve-example`): a small server that shows MCP off, and
//! the fixed `echo` and `add` tools that benchmarks and smoke tests rely on.
//!
//! It is an ordinary `mcp_server::Server`, served for both eras by `mcp-legacy`: a
//! 2026-07-28 client and an initialize-era client get the same tools, resources and
//! prompts, over stdio or Streamable HTTP (and the 2024-11-05 HTTP+SSE transport).
//!
//! - tools: `echo` (its `text` back), `add` (the sum of integers `a` and `b`), `countdown`
//!   (counts down `seconds`, reporting progress), `greet` (asks the user's name by
//!   elicitation, then greets them), `increment` (adds one to the counter resource and
//!   tells its subscribers);
//! - for the benchmark (`cargo xtask bench`), off by default: `--bench-tools`
//!   adds `search` (a realistic input schema: nested object, enums, patterns, a format,
//!   bounded arrays; it finds nothing) and `steps` (sends `steps` progress notifications at
//!   once, then answers), and `--extra-tools N` adds N generated tools, `extra_000` on, for
//!   the `tools/list` of 500 tools scenario;
//! - for the soak run (`cargo xtask soak`), off by default: `--soak-tools` adds
//!   `barrier`, `wait` and `stats` (see `soak_tools.rs`), and over HTTP
//!   `--max-concurrent-requests N` and `--max-connections N` raise the endpoint's limits
//!   of requests in flight and of open connections;
//! - resources: `example://readme` (what this server is), `example://counter` (a number
//!   that `increment` changes: `mcp listen example://counter` follows it), and the
//!   template `example://squares/{n}` (the square of `n`);
//! - prompts: `explain` (argument `topic`, completed from a fixed list).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, CompleteResultCompletion, ContentBlock, ElicitRequestFormParams,
    ElicitRequestParams, EmbeddedResourceResource, GetPromptResult, PromptMessage, Role,
    TextResourceContents, ToolAnnotations,
};
use serde::Deserialize;
use serde_json::json;

use self::arguments::{Add, Echo, Search, Steps, extra_tool_schema};
use crate::soak_tools::Probes;

mod arguments;

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
struct Countdown {
    /// How many seconds to count down (at most 10).
    seconds: u8,
}

fn read_only() -> ToolAnnotations {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(true);
    annotations.idempotent_hint = Some(true);
    annotations.open_world_hint = Some(false);
    annotations
}

const COUNTER: &str = "example://counter";

/// What `mcp serve-example` adds for `cargo xtask bench` and `cargo xtask
/// soak`; nothing by default.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Bench {
    /// `--bench-tools`: register `search` and `steps`.
    pub(crate) tools: bool,
    /// `--extra-tools N`: register N generated tools, `extra_000` on.
    pub(crate) extra_tools: usize,
    /// `--soak-tools`: register `barrier`, `wait` and `stats`.
    pub(crate) soak: bool,
    /// `--max-concurrent-requests N` (HTTP): the endpoint's limit, instead of its default.
    pub(crate) max_concurrent_requests: Option<usize>,
    /// `--max-connections N` (HTTP): the server's limit of open connections, instead of
    /// its default.
    pub(crate) max_connections: Option<usize>,
    /// `--idle-poll MICROS` (HTTP): the connection threads' idle poll, instead of its
    /// default.
    pub(crate) idle_poll: Option<std::time::Duration>,
    /// `--hyper-http1` (HTTP): every connection served by hyper, not the server's own
    /// HTTP/1.1.
    pub(crate) hyper_http1: bool,
}

/// The example server, with the benchmark's additions that `bench` asks for.
pub(crate) fn server(bench: Bench, probes: &Arc<Probes>) -> Result<Server, mcp_server::Error> {
    let counter = Arc::new(AtomicI64::new(0));
    let read_counter = Arc::clone(&counter);
    let handle: Arc<OnceLock<Server>> = Arc::default();
    let notify = Arc::clone(&handle);
    let mut builder = Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .instructions(
            "An example server: echo and add are pure, countdown reports progress, greet \
             asks the user for their name.",
        )
        .tool(
            ToolDef::typed("echo", |args: Echo, _cx| async move {
                Ok(CallToolResult::text(args.text))
            })
            .map(|t| {
                t.description("Returns its text argument")
                    .annotations(read_only())
            }),
        )
        .tool(
            ToolDef::typed("add", |args: Add, _cx| async move {
                let sum = args
                    .a
                    .checked_add(args.b)
                    .ok_or_else(|| ToolError::failed("the sum does not fit in a 64-bit integer"))?;
                Ok(CallToolResult::text(sum.to_string()))
            })
            .map(|t| t.description("Adds two integers").annotations(read_only())),
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
            .map(|t| t.description("Counts down the given seconds, reporting progress")),
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
            .map(|t| t.description("Asks your name, then greets you")),
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
            .map(|t| t.description("Adds one to example://counter and notifies its subscribers")),
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
            .map(|p| {
                p.description("Asks the model to explain an MCP topic")
                    .argument("topic", "The topic, such as tools or resources", true)
            }),
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
    if bench.tools {
        builder = builder
            .tool(
                ToolDef::typed("search", |args: Search, _cx| async move {
                    Ok(CallToolResult::text(format!(
                        "no results for {} in {}",
                        args.query,
                        args.scope.as_str()
                    )))
                })
                .map(|t| {
                    t.description("Searches code, issues or docs (finds nothing: a benchmark tool)")
                        .annotations(read_only())
                }),
            )
            .tool(
                ToolDef::typed("steps", |args: Steps, cx| async move {
                    let total = f64::from(args.steps);
                    for done in 1..=args.steps {
                        cx.progress(f64::from(done), Some(total), None).await;
                    }
                    Ok(CallToolResult::text(format!("{} steps", args.steps)))
                })
                .map(|t| {
                    t.description("Sends the given number of progress notifications, then answers")
                        .annotations(read_only())
                }),
            );
    }
    if bench.soak {
        builder = crate::soak_tools::register(builder, Arc::clone(probes));
    }
    for i in 0..bench.extra_tools {
        let name = format!("extra_{i:03}");
        builder = builder.tool(
            ToolDef::new(name, extra_tool_schema(), move |args, _cx| async move {
                Ok(CallToolResult::text(format!(
                    "record {} from extra tool {i}",
                    args["id"]
                )))
            })
            .map(|t| {
                t.description(format!(
                    "Fetches a record (generated tool {i} of {}, for benchmarks)",
                    bench.extra_tools
                ))
                .annotations(read_only())
            }),
        );
    }
    let server = builder.build()?;
    let _ = handle.set(server.clone());
    Ok(server)
}

/// Serves the example server on stdin and stdout, for both eras, until stdin closes.
pub(crate) async fn serve_stdio(bench: Bench) -> Result<(), mcp_server::Error> {
    mcp_legacy::server::DualEra::new(server(bench, &Arc::default())?)
        .serve_stdio()
        .await;
    Ok(())
}

/// Serves the example server over Streamable HTTP (both eras) on `addr`, printing the
/// endpoint URL as the first line of stdout, until the process is interrupted. With
/// `connection_threads` above 0 the connections are served on that many threads of their
/// own.
pub(crate) async fn serve_http(
    addr: SocketAddr,
    bench: Bench,
    connection_threads: usize,
) -> Result<(), crate::Error> {
    let probes = Arc::<Probes>::default();
    let mut config =
        mcp_transport_http::HttpServerConfig::default().connection_threads(connection_threads);
    if let Some(limit) = bench.max_concurrent_requests {
        config.max_concurrent_requests = limit;
    }
    if let Some(limit) = bench.max_connections {
        config.max_connections = limit;
    }
    if let Some(window) = bench.idle_poll {
        config.idle_poll = window;
    }
    config.own_http1 = !bench.hyper_http1;
    let endpoint = mcp_legacy::http::DualEraHttp::new(
        server(bench, &probes)?,
        config.clone(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .map_err(crate::Error::Serve)?;
    let counted = endpoint.clone();
    let _ = probes.sessions.set(Box::new(move || counted.sessions()));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| crate::Error::Serve(mcp_legacy::Error::Bind { addr, source }))?;
    let running = mcp_transport_http::HttpServer::serve_endpoint(listener, endpoint, &config)
        .map_err(|e| crate::Error::Serve(e.into()))?;
    // Every runtime's tasks: the main one (the accept loop) and the connection threads'.
    let runtimes = running.connection_runtimes().to_vec();
    let main = tokio::runtime::Handle::current();
    let _ = probes.tasks.set(Box::new(move || {
        runtimes
            .iter()
            .chain([&main])
            .map(|runtime| runtime.metrics().num_alive_tasks())
            .sum()
    }));
    println!("{}", running.url());
    let _ = tokio::signal::ctrl_c().await;
    running.shutdown(Duration::from_secs(2)).await;
    Ok(())
}
