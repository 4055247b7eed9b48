//! The host over in-memory connections: groups switched at run time, refresh after a
//! change, connection failures that leave the rest working, and middleware that rejects.

use std::time::Duration;

use mcp_client::Client;
use mcp_host::{
    BoxFuture, CallInfo, Error, Exposure, Host, HttpConfig, Middleware, StdioConfig, ToolCall,
    Verdict,
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
            StdioConfig::new("/nonexistent/mcp-server-binary"),
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
            HttpConfig::new("http://127.0.0.1:9/mcp").header("bad header", "x"),
        )
        .connect()
        .await;
    assert!(
        matches!(&result, Err(Error::InvalidField { server, field, .. }) if server == "web" && field == "headers.bad header"),
        "{result:?}"
    );
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

/// Accepts `X-Api-Key: let-me-in` only.
struct ApiKey;

#[derive(Debug)]
struct Tester;

impl mcp_jsonrpc::Principal for Tester {
    fn id(&self) -> &'static str {
        "tester"
    }
}

impl mcp_transport_http::Authenticator for ApiKey {
    fn authenticate<'a>(
        &'a self,
        headers: &'a http::HeaderMap,
    ) -> mcp_transport_http::AuthenticateFuture<'a> {
        let known = headers.get("x-api-key").is_some_and(|k| k == "let-me-in");
        Box::pin(async move {
            if known {
                Ok(std::sync::Arc::new(Tester) as std::sync::Arc<dyn mcp_jsonrpc::Principal>)
            } else {
                let mut refusal = http::Response::new(bytes::Bytes::new());
                *refusal.status_mut() = http::StatusCode::UNAUTHORIZED;
                Err(refusal)
            }
        })
    }
}

/// A dual-era HTTP server with `read_file`, `read_secret`, `write` and a `slow` tool
/// (which answers after 5 s), that only lets in `X-Api-Key: let-me-in`.
async fn guarded_server() -> mcp_transport_http::RunningServer {
    let slow = ToolDef::new("slow", json!({"type": "object"}), |_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(CallToolResult::text("slow ran"))
    });
    let server = Server::builder("guarded", "1")
        .tool(tool("read_file"))
        .tool(tool("read_secret"))
        .tool(tool("write"))
        .tool(slow)
        .build()
        .unwrap();
    mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        mcp_transport_http::HttpServerConfig::default().authenticator(ApiKey),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap()
}

/// Every member of a config entry reaches the connection: its headers (with a variable
/// substituted), its protocol revisions, its allow/deny lists and groups, its timeout.
#[tokio::test]
async fn every_member_of_a_config_entry_is_wired() {
    let running = guarded_server().await;
    let entry = |key: &str| {
        json!({"mcpServers": {"web": {
            "url": running.url(),
            "headers": {"X-Api-Key": key},
            "protocolVersions": ["2025-06-18"],
            "timeout": 300,
            "deny": ["*_secret"],
            "groups": ["web-tools"]
        }}})
        .to_string()
    };
    let env = |name: &str| (name == "KEY").then(|| "let-me-in".to_owned());
    let config = mcp_host::HostConfig::from_json_with_env(&entry("${KEY}"), &env).unwrap();

    // The header and the revision: a legacy session at 2025-06-18.
    let server = config.get("web").unwrap();
    let connection = mcp_host::connect("web", server, &mcp_host::ClientInfo::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.version, "2025-06-18");
    connection.client.shutdown(Duration::from_secs(1)).await;

    // Without the header, the server refuses.
    let refused = mcp_host::HostConfig::from_json(&entry("wrong")).unwrap();
    let host = Host::builder().config(refused).connect().await.unwrap();
    assert_eq!(host.failures().len(), 1, "{:?}", host.failures());
    host.shutdown().await;

    // The deny list and the group.
    let host = Host::builder().config(config).connect().await.unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    assert_eq!(names(&host), ["web__read_file", "web__write", "web__slow"]);
    assert!(host.set_group("web-tools", false));
    assert!(names(&host).is_empty());
    assert!(host.set_group("web-tools", true));

    // The timeout: the slow tool's call fails after 300 ms, not 5 s.
    let started = std::time::Instant::now();
    let outcome = host
        .call(
            &host.catalog(),
            vec![ToolCall::new(
                "1",
                "web__slow",
                mcp_types::JsonObject::new(),
            )],
        )
        .await;
    assert!(outcome[0].is_error(), "{outcome:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let read = host
        .call(
            &host.catalog(),
            vec![ToolCall::new(
                "2",
                "web__read_file",
                mcp_types::JsonObject::new(),
            )],
        )
        .await;
    assert_eq!(read[0].to_openai_chat()["content"], "read_file ran");
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}

/// An allow list keeps only the tools it names.
#[tokio::test]
async fn an_allow_list_of_the_config_keeps_only_its_tools() {
    let running = guarded_server().await;
    let config = mcp_host::HostConfig::from_json(
        &json!({"servers": {"web": {
            "type": "http",
            "url": running.url(),
            "headers": {"X-Api-Key": "let-me-in"},
            "allow": ["read_*"],
            "protocolVersions": ["2026-07-28"]
        }}})
        .to_string(),
    )
    .unwrap();
    let host = Host::builder().config(config).connect().await.unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    assert_eq!(names(&host), ["web__read_file", "web__read_secret"]);
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}

/// Without the `auth` feature, an entry with `oauth` is refused rather than connected
/// without its tokens.
#[cfg(not(feature = "auth"))]
#[tokio::test]
async fn oauth_without_the_auth_feature_is_refused() {
    let config = mcp_host::HostConfig::from_json(
        &json!({"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp",
                                        "oauth": {"grant": "stored"}}}})
        .to_string(),
    )
    .unwrap();
    let host = Host::builder().config(config).connect().await.unwrap();
    assert!(
        matches!(host.failures(), [(_, Error::OAuth { reason, .. })] if reason.contains("`auth` feature")),
        "{:?}",
        host.failures()
    );
}
