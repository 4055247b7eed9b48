//! The official Rust MCP SDK (`rmcp` 3.11.0 from crates.io) serving the benchmark's
//! tools, the same as `mcp-bench-server`: `echo` {text}, `add` {a, b}, `search` (the same
//! realistic input schema, finds nothing) and `steps` {steps} (sends that many progress
//! notifications, then answers).
//!
//! - `rmcp-server stdio-pipes`: stdio through `rmcp::transport::stdio_pipes()` (non-blocking
//!   pipes on the IO reactor, rmcp's fast path);
//! - `rmcp-server stdio`: stdio through `rmcp::transport::stdio()` (tokio's blocking stdin
//!   and stdout);
//! - `rmcp-server http ADDR`: Streamable HTTP at `/mcp`, stateless, JSON replies (rmcp
//!   falls back to an event stream when a handler sends a notification first, as `steps`
//!   does); prints `http://ADDR/mcp` (the bound address) on the first line of stdout.
//! - `rmcp-server http-stateful ADDR`: the same in rmcp's default mode, with sessions
//!   (`LocalSessionManager`) and event-stream replies: what a user of rmcp gets.
//!
//! `--extra-tools N` after the mode registers N generated tools, `extra_000` on, for the
//! `tools/list` scenario. The tool router is built once and shared (an `Arc`) by every
//! stateless HTTP request's handler.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt as _, tool, tool_handler, tool_router,
};

// The tools' arguments and the generated tools' schema are `mcp-bench-server`'s, shared
// as a file.
#[path = "../../../crates/mcp-bench-server/src/arguments.rs"]
mod arguments;
// The HTTP/1.1 accept loop is the floor's, shared as a file.
#[path = "../../floor/src/http1.rs"]
mod http1;

use arguments::{Add, Echo, Search, Steps, extra_tool_schema};

/// The router, built once: `--extra-tools` may make it large.
static ROUTER: OnceLock<Arc<ToolRouter<Bench>>> = OnceLock::new();

#[derive(Debug, Clone)]
struct Bench {
    tool_router: Arc<ToolRouter<Self>>,
}

type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a>>;

/// A generated tool's handler.
fn extra_call(context: ToolCallContext<'_, Bench>) -> CallFuture<'_> {
    Box::pin(async move {
        let id = context
            .arguments
            .as_ref()
            .and_then(|a| a.get("id"))
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| ErrorData::invalid_params("id must be a non-negative integer", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "record {id} from {}",
            context.name
        ))])
        .into())
    })
}

#[tool_router]
impl Bench {
    /// The router with `extra` generated tools.
    fn router(extra: usize) -> ToolRouter<Self> {
        let mut router = Self::tool_router();
        let serde_json::Value::Object(schema) = extra_tool_schema() else {
            unreachable!("an object literal")
        };
        let schema = Arc::new(schema);
        for i in 0..extra {
            let tool = Tool::new(
                format!("extra_{i:03}"),
                format!("Fetches a record (generated tool {i} of {extra}, for benchmarks)"),
                Arc::clone(&schema),
            )
            // The hints ours gives the same tools, so that both listings carry the same.
            .annotate(
                ToolAnnotations::new()
                    .read_only(true)
                    .idempotent(true)
                    .open_world(false),
            );
            router.add_route(ToolRoute::new_dyn(tool, extra_call));
        }
        router
    }

    fn new() -> Self {
        Self {
            tool_router: Arc::clone(ROUTER.get_or_init(|| Arc::new(Self::router(0)))),
        }
    }

    #[tool(description = "Returns its text argument")]
    #[allow(clippy::unused_self)]
    fn echo(&self, Parameters(Echo { text }): Parameters<Echo>) -> String {
        text
    }

    #[tool(description = "Adds two integers")]
    #[allow(clippy::unused_self)]
    fn add(&self, Parameters(Add { a, b }): Parameters<Add>) -> Result<String, String> {
        a.checked_add(b)
            .map(|sum| sum.to_string())
            .ok_or_else(|| "the sum does not fit in a 64-bit integer".to_owned())
    }

    #[tool(description = "Searches code, issues or docs (finds nothing: a benchmark tool)")]
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    fn search(&self, Parameters(args): Parameters<Search>) -> String {
        format!("no results for {} in {}", args.query, args.scope.as_str())
    }

    #[tool(description = "Sends the given number of progress notifications, then answers")]
    #[allow(clippy::unused_self)]
    async fn steps(
        &self,
        Parameters(Steps { steps }): Parameters<Steps>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<String, String> {
        if let Some(token) = meta.get_progress_token() {
            for done in 1..=steps {
                peer.notify_progress(
                    ProgressNotificationParam::new(token.clone(), f64::from(done))
                        .with_total(f64::from(steps)),
                )
                .await
                .map_err(|e| format!("cannot send progress: {e}"))?;
            }
        }
        Ok(format!("{steps} steps"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Takes `--extra-tools N` out of the arguments.
fn extra_tools(args: &mut Vec<String>) -> Result<usize, String> {
    let Some(at) = args.iter().position(|a| a == "--extra-tools") else {
        return Ok(0);
    };
    let value = args
        .get(at + 1)
        .ok_or("--extra-tools needs a number")?
        .parse()
        .map_err(|e| format!("--extra-tools: {e}"))?;
    args.drain(at..=at + 1);
    Ok(value)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match extra_tools(&mut args) {
        Ok(extra) => {
            let _ = ROUTER.set(Arc::new(Bench::router(extra)));
        }
        Err(e) => {
            eprintln!("rmcp-server: {e}");
            return ExitCode::FAILURE;
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rmcp-server: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["stdio"] => runtime.block_on(async {
            let service = Bench::new()
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| format!("stdio: {e}"))?;
            service
                .waiting()
                .await
                .map(drop)
                .map_err(|e| format!("stdio: {e}"))
        }),
        ["stdio-pipes"] => runtime.block_on(async {
            let service = Bench::new()
                .serve(rmcp::transport::stdio_pipes())
                .await
                .map_err(|e| format!("stdio-pipes: {e}"))?;
            service
                .waiting()
                .await
                .map(drop)
                .map_err(|e| format!("stdio-pipes: {e}"))
        }),
        ["http", addr] => runtime.block_on(http(addr)),
        ["http-stateful", addr] => runtime.block_on(http_stateful(addr)),
        _ => Err(
            "usage: rmcp-server (stdio | stdio-pipes | http ADDR | http-stateful ADDR) \
             [--extra-tools N]"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rmcp-server: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn http(addr: &str) -> Result<(), String> {
    let service: StreamableHttpService<Bench, NeverSessionManager> = StreamableHttpService::new(
        || Ok(Bench::new()),
        std::sync::Arc::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .disable_allowed_hosts(),
    );
    http1::serve("rmcp-server", addr, || {
        hyper_util::service::TowerToHyperService::new(service.clone())
    })
    .await
}

/// rmcp's default Streamable HTTP: sessions (`initialize` first, so the 2025 era only)
/// kept in memory, replies as event streams; only the host check is off, as the bench
/// connects by address.
async fn http_stateful(addr: &str) -> Result<(), String> {
    let service: StreamableHttpService<Bench, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Bench::new()),
        std::sync::Arc::default(),
        StreamableHttpServerConfig::default().disable_allowed_hosts(),
    );
    http1::serve("rmcp-server", addr, || {
        hyper_util::service::TowerToHyperService::new(service.clone())
    })
    .await
}
