//! The server every HTTP target talks to, and the runtime it runs on.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use mcp_server::{Server, ToolDef};
use mcp_transport_http::{HttpServerConfig, ParamHeader};
use mcp_types::CallToolResult;
use serde_json::json;
use tokio::runtime::Runtime;

/// A `tools/call` a target sends: one of the [`server`]'s tools, or `missing`, which it
/// lacks, with arbitrary arguments text.
#[derive(Debug, Arbitrary)]
pub struct ToolCall {
    /// Picks the tool.
    pub tool: u8,
    /// The request id.
    pub id: i64,
    /// The text of the `arguments` member, sent as it is.
    pub arguments: String,
}

impl ToolCall {
    /// The tool called.
    #[must_use]
    pub fn tool(&self) -> &'static str {
        const TOOLS: [&str; 4] = ["echo", "add", "slow", "missing"];
        TOOLS[usize::from(self.tool) % TOOLS.len()]
    }

    /// The request's text; `extra` (members after a comma, or nothing) ends its params.
    #[must_use]
    pub fn text(&self, extra: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{}","arguments":{}{extra}}}}}"#,
            self.id,
            self.tool(),
            self.arguments
        )
    }
}

/// A small server: `echo` (with an `x-mcp-header` parameter, `Mcp-Param-Region`), `add`
/// (a schema with required integers) and `slow` (waits 1 ms, so that responses can race
/// the end of a request).
#[must_use]
pub fn server() -> Server {
    Server::builder("fuzz", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            json!({"type": "object", "properties": {
                "text": {"type": "string"},
                "region": {"type": "string", "x-mcp-header": "Region"}
            }}),
            |args, _cx| async move {
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
            },
        ))
        .tool(ToolDef::new(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"], "additionalProperties": false}),
            |args, _cx| async move {
                let sum = args["a"].as_i64().unwrap_or(0).wrapping_add(args["b"].as_i64().unwrap_or(0));
                Ok(CallToolResult::text(sum.to_string()))
            },
        ))
        .tool(ToolDef::new("slow", json!({"type": "object"}), |_args, _cx| async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(CallToolResult::text("done"))
        }))
        .build()
        .expect("the fixture server is valid")
}

/// The HTTP configuration: defaults, with the server's `x-mcp-header` declarations and a
/// small body limit so that the limit is reachable.
#[must_use]
pub fn http_config(server: &Server) -> HttpServerConfig {
    let echo: Arc<[ParamHeader]> =
        ParamHeader::from_annotations(&server.param_headers("echo")).expect("echo has one");
    HttpServerConfig::default()
        .max_body_bytes(4096)
        .param_headers(move |tool: &str| (tool == "echo").then(|| Arc::clone(&echo)))
}

/// One current-thread runtime per process (time enabled; no I/O is needed).
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}
