//! The official Rust MCP SDK (`rmcp` 3.11.0 from crates.io) serving the benchmark's two
//! tools, `echo` {text} and `add` {a, b}, the same as `mcp serve-example`.
//!
//! - `rmcp-server stdio-pipes`: stdio through `rmcp::transport::stdio_pipes()` (non-blocking
//!   pipes on the IO reactor, rmcp's fast path);
//! - `rmcp-server stdio`: stdio through `rmcp::transport::stdio()` (tokio's blocking stdin
//!   and stdout);
//! - `rmcp-server http ADDR`: Streamable HTTP at `/mcp`, stateless, JSON replies; prints
//!   `http://ADDR/mcp` (the bound address) on the first line of stdout.

use std::process::ExitCode;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt as _, schemars, tool, tool_handler, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(Debug, Clone)]
struct Bench {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
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
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
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
        _ => Err("usage: rmcp-server stdio | stdio-pipes | http ADDR".to_owned()),
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
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    println!("http://{local}/mcp");
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("rmcp-server: accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}
