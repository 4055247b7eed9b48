//! The host over in-memory connections: groups switched at run time, refresh after a
//! change, connection failures that leave the rest working, and middleware that rejects.

use std::time::Duration;

use mcp_client::Client;
use mcp_host::{
    BoxFuture, CallInfo, Error, Exposure, Host, HttpConfig, Middleware, ServerConfig, StdioConfig,
    ToolCall, Verdict,
};
use mcp_jsonrpc::{Connection, Peer, PeerConfig, memory};
use mcp_server::{Server, ToolDef};
use mcp_types::CallToolResult;
use serde_json::json;

fn tool(name: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_, _| async move {
        Ok(CallToolResult::text(format!("{name} ran")))
    })
}

/// A client connected to `server` over an in-memory duplex; keep the connections alive.
fn in_memory(server: &Server) -> (Client, Connection, Connection) {
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(64);
    let (_peer, server_conn) =
        Peer::connect(b_read, b_write, server.clone(), PeerConfig::default());
    let (client, client_conn) =
        Client::builder("test", "1").connect(a_read, a_write, PeerConfig::default());
    (client, client_conn, server_conn)
}

fn names(host: &Host) -> Vec<String> {
    host.catalog()
        .entries()
        .iter()
        .map(|e| e.name.clone())
        .collect()
}

/// Rejects every call to `forbidden`, and panics on `admin` (a buggy hook).
struct Forbid;

impl Middleware for Forbid {
    fn before<'a>(&'a self, call: &'a CallInfo) -> BoxFuture<'a, Verdict> {
        assert!(call.tool != "admin", "a buggy middleware");
        let verdict = if call.tool == "forbidden" {
            Verdict::Reject(Box::new(CallToolResult::error("forbidden by policy")))
        } else {
            Verdict::Continue
        };
        Box::pin(async move { verdict })
    }
}

#[tokio::test]
async fn groups_refresh_failures_and_middleware() {
    let server = Server::builder("mem", "1")
        .tool(tool("open"))
        .tool(tool("forbidden"))
        .tool(tool("admin"))
        .build()
        .unwrap();
    let (client, _c, _s) = in_memory(&server);
    let host = Host::builder()
        .client("mem", client)
        .server(
            "missing",
            ServerConfig::Stdio(StdioConfig::new("/nonexistent/mcp-server-binary")),
        )
        .exposure(Exposure::new().group("admin", [("mem", "admin")], false))
        .middleware(Forbid)
        .connect()
        .await
        .unwrap();

    // The missing server is reported; the other works.
    assert_eq!(host.server_names(), ["mem"]);
    assert_eq!(host.failures().len(), 1);
    assert_eq!(host.failures()[0].0, "missing");
    assert_eq!(names(&host), ["mem__open", "mem__forbidden"]);

    // Groups switch at run time.
    assert!(host.set_group("admin", true));
    assert_eq!(names(&host), ["mem__open", "mem__forbidden", "mem__admin"]);
    assert!(!host.set_group("nope", true));

    // Nothing changed, nothing refreshed; a change is picked up by the next refresh.
    assert!(!host.refresh().await);
    let mut changes = host.changes();
    server.add_tool(tool("later")).unwrap();
    tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|n| *n >= 1))
        .await
        .unwrap()
        .unwrap();
    let before = host.catalog();
    assert!(host.refresh().await);
    assert!(names(&host).contains(&"mem__later".to_owned()));
    // A snapshot taken earlier is unchanged.
    assert!(before.resolve("mem__later").is_none());

    // Middleware rejects before the server is reached.
    let catalog = host.catalog();
    let outcomes = host
        .call(
            &catalog,
            vec![
                ToolCall::new("1", "mem__forbidden", serde_json::Map::new()),
                ToolCall::new("2", "mem__later", serde_json::Map::new()),
                ToolCall::new("3", "mem__admin", serde_json::Map::new()),
            ],
        )
        .await;
    assert_eq!(
        outcomes[0].to_openai_chat()["content"],
        "Error: forbidden by policy"
    );
    assert_eq!(outcomes[1].to_openai_chat()["content"], "later ran");
    // A panicking hook costs its call only, which still gets an answer.
    assert_eq!(outcomes[2].call_id, "3");
    assert!(outcomes[2].is_error());
    host.shutdown().await;
}

#[tokio::test]
async fn a_bad_header_is_a_configuration_error() {
    let result = Host::builder()
        .server(
            "web",
            ServerConfig::Http(HttpConfig::new("http://127.0.0.1:9/mcp").header("bad header", "x")),
        )
        .connect()
        .await;
    assert!(matches!(result, Err(Error::Config(_))), "{result:?}");
}

/// A `"type": "sse"` entry reaches a 2024-11-05 HTTP+SSE server at its SSE URL.
#[tokio::test]
async fn an_sse_entry_of_the_config_connects() {
    let server = Server::builder("old", "1")
        .tool(tool("echo"))
        .build()
        .unwrap();
    let running = mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        mcp_transport_http::HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap();
    let sse = running.url().replace("/mcp", "/sse");
    let config = mcp_host::HostConfig::from_json(
        &json!({"mcpServers": {"old": {"type": "sse", "url": sse}}}).to_string(),
    )
    .unwrap();
    let host = Host::builder().config(config).connect().await.unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    assert_eq!(names(&host), ["old__echo"]);
    let outcome = host
        .call(
            &host.catalog(),
            vec![ToolCall::new(
                "1",
                "old__echo",
                mcp_types::JsonObject::new(),
            )],
        )
        .await;
    assert!(!outcome[0].is_error(), "{outcome:?}");
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}
