//! The dual-era client against `@modelcontextprotocol/server-everything` (pinned in
//! `tests/peers/package.json`), a legacy-only reference server built on the TypeScript
//! SDK v1: era detection, the `initialize` handshake, tools, resources, prompts, and tool
//! calls whose server-to-client `sampling/createMessage`, `elicitation/create` and
//! `roots/list` requests are answered by the handlers registered on the
//! `mcp_client::ClientBuilder`. `tests/peers/setup.sh` installs the peers once per test
//! binary; a setup failure fails the tests. The same session runs over stdio, over the
//! legacy Streamable HTTP transport (`streamableHttp` mode) and over the 2024-11-05
//! HTTP+SSE transport (`sse` mode); the HTTP servers are bound to a loopback port.

#![cfg(feature = "stdio")]

#[cfg(feature = "http")]
mod peers_common;
use peers_common::{peers_dir, setup};

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ListenEvent};
#[cfg(feature = "http")]
use mcp_legacy::client::Transport;
use mcp_legacy::client::{Connector, EraChoice};
use mcp_test_support::tool_names;
#[cfg(feature = "http")]
use mcp_test_support::{Killed, free_port, spawn_ready};
use mcp_transport_stdio::{ServerCommand, StderrMode};
use mcp_types::{Era, JsonObject};
use serde_json::{Value, json};

fn everything() -> PathBuf {
    peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// What the handlers were asked, in order.
type Asked = Arc<Mutex<Vec<String>>>;

/// A client builder whose handlers answer as a user would, recording what they were asked.
fn builder(asked: &Asked) -> ClientBuilder {
    let (elicited, sampled, rooted) = (Arc::clone(asked), Arc::clone(asked), Arc::clone(asked));
    Client::builder("dual-era-test", "1.0.0")
        .on_elicit(move |params| {
            let elicited = Arc::clone(&elicited);
            async move {
                let params = serde_json::to_value(&params).unwrap();
                elicited
                    .lock()
                    .unwrap()
                    .push(format!("elicit: {}", params["message"]));
                Ok(serde_json::from_value(json!({
                    "action": "accept",
                    "content": {"name": "Ada Lovelace", "check": true, "email": "ada@example.com"}
                }))
                .unwrap())
            }
        })
        .on_sample(move |params| {
            let sampled = Arc::clone(&sampled);
            async move {
                let params = serde_json::to_value(&params).unwrap();
                let text = params["messages"][0]["content"]["text"].clone();
                sampled.lock().unwrap().push(format!("sample: {text}"));
                Ok(serde_json::from_value(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "Quiet numbers hum"},
                    "model": "test-model",
                    "stopReason": "endTurn"
                }))
                .unwrap())
            }
        })
        .on_roots(move || {
            let rooted = Arc::clone(&rooted);
            async move {
                rooted.lock().unwrap().push("roots".to_owned());
                Ok(serde_json::from_value(
                    json!({"roots": [{"uri": "file:///tmp/dual-era", "name": "Dual era"}]}),
                )
                .unwrap())
            }
        })
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn text(result: &mcp_types::CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls the tool `name` with `arguments` (an object); the text of its result.
async fn call_text(client: &Client, name: &str, arguments: Value) -> String {
    text(&client.call_tool(name, args(arguments)).await.unwrap())
}

/// The whole legacy session, the same way over every transport.
async fn exercise(client: &Client, asked: &Asked) {
    // server/discover is answered from the initialize result.
    let discovered = serde_json::to_value(client.discover().await.unwrap()).unwrap();
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-servers/everything"
    );
    assert_eq!(discovered["supportedVersions"], json!(["2025-11-25"]));
    assert!(
        discovered["capabilities"]["tools"].is_object(),
        "{discovered}"
    );

    let tools = tool_names(&client.list_tools_all().await.unwrap());
    for expected in [
        "echo",
        "get-sum",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} not in {tools:?}"
        );
    }

    assert_eq!(
        call_text(client, "echo", json!({"message": "hi"})).await,
        "Echo: hi"
    );
    let sum = call_text(client, "get-sum", json!({"a": 2, "b": 3})).await;
    assert!(sum.contains('5'), "{sum}");

    // The server's sampling/createMessage request reaches our on_sample handler, its
    // elicitation/create request on_elicit, and roots/list on_roots; our answers come back.
    for (tool, arguments, expected) in [
        (
            "trigger-sampling-request",
            json!({"prompt": "a haiku", "maxTokens": 20}),
            &["Quiet numbers hum", "test-model"][..],
        ),
        ("trigger-elicitation-request", json!({}), &["Ada Lovelace"]),
        ("get-roots-list", json!({}), &["file:///tmp/dual-era"]),
    ] {
        let text = call_text(client, tool, arguments).await;
        for part in expected {
            assert!(text.contains(part), "{tool}: {text}");
        }
    }

    let asked = asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .any(|a| a.starts_with("sample: ") && a.contains("a haiku")),
        "{asked:?}"
    );
    assert!(asked.iter().any(|a| a.starts_with("elicit: ")), "{asked:?}");
    assert!(asked.iter().any(|a| a == "roots"), "{asked:?}");

    // Resources and prompts, in the modern shape.
    let resources = client.list_resources(None).await.unwrap();
    let first = resources.resources.first().expect("a resource").uri.clone();
    let read = serde_json::to_value(client.read_resource(&first).await.unwrap()).unwrap();
    assert_eq!(read["contents"][0]["uri"], first.as_str());
    assert_eq!(read["resultType"], "complete");
    let prompts: Vec<String> = client
        .list_prompts_all()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(prompts.iter().any(|p| p == "simple-prompt"), "{prompts:?}");
    let prompt = client.get_prompt("simple-prompt", ()).await.unwrap();
    assert!(!prompt.messages.is_empty());

    // A listen on one resource becomes resources/subscribe; the server's
    // notifications/resources/updated reaches the subscription.
    let mut filter = mcp_types::SubscriptionFilter::default();
    filter.resource_subscriptions = Some(vec![first.clone()]);
    filter.tools_list_changed = Some(true);
    let mut subscription = client.listen(filter).await.unwrap();
    let Some(ListenEvent::Acknowledged(granted)) = subscription.next().await else {
        panic!("no acknowledgement");
    };
    assert_eq!(granted.resource_subscriptions, Some(vec![first.clone()]));
    assert_eq!(granted.tools_list_changed, Some(true));
    client
        .call_tool("toggle-subscriber-updates", JsonObject::new())
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(20), subscription.next())
        .await
        .expect("no resource update within 20 s");
    assert_eq!(event, Some(ListenEvent::ResourceUpdated(first)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio_is_legacy_and_fully_usable() {
    setup();
    let asked = Asked::default();
    let command = ServerCommand::new("node").arg(everything()).arg("stdio");
    let connection = Connector::new(builder(&asked))
        .connect_stdio(&command)
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.version, "2025-11-25");
    exercise(&connection.client, &asked).await;
    let _ = connection.server.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_server_everything_over_stdio_is_clean() {
    // What `mcp call get-sum a=2 b=3 -- npx -y @modelcontextprotocol/server-everything
    // stdio` does: one call, then the CLI's close (the client, then the server). With
    // the client capabilities the CLI declares (roots, elicitation), the server still
    // writes to stdout after its stdin closes; if nobody read it any more, Node would
    // die of an unhandled `EPIPE` and print its stack trace on stderr.
    setup();
    let stderr = Arc::new(Mutex::new(Vec::<String>::new()));
    let lines = Arc::clone(&stderr);
    let command = ServerCommand::new("node")
        .arg(everything())
        .arg("stdio")
        .stderr(StderrMode::callback(move |line| {
            lines.lock().unwrap().push(line.to_owned());
        }));
    let connection = Connector::new(builder(&Asked::default()))
        .connect_stdio(&command)
        .await
        .unwrap();
    assert_eq!(
        call_text(&connection.client, "get-sum", json!({"a": 2, "b": 3})).await,
        "The sum of 2 and 3 is 5."
    );
    connection.client.shutdown(Duration::from_millis(500)).await;
    let status = tokio::time::timeout(
        Duration::from_secs(30),
        connection.server.shutdown(Duration::from_secs(2)),
    )
    .await
    .expect("the close is bounded by the graces")
    .unwrap();
    let stderr = stderr.lock().unwrap().join("\n");
    assert!(!stderr.contains("EPIPE"), "exited with {status}:\n{stderr}");
    // It exits by itself or of the SIGTERM after the stdin grace, never of an error.
    assert_ne!(status.code(), Some(1), "{status}:\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_legacy_version_is_offered_and_kept() {
    setup();
    let command = ServerCommand::new("node").arg(everything()).arg("stdio");
    let connection = Connector::new(Client::builder("pinned", "1.0.0"))
        .era(EraChoice::Version("2025-06-18".to_owned()))
        .connect_stdio(&command)
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.version, "2025-06-18");
    assert_eq!(
        call_text(&connection.client, "echo", json!({"message": "pinned"})).await,
        "Echo: pinned"
    );
    let _ = connection.server.shutdown(Duration::from_secs(2)).await;
}

/// A server-everything HTTP server on a free loopback port, killed on drop.
#[cfg(feature = "http")]
struct HttpServer {
    _child: Killed,
    port: u16,
}

#[cfg(feature = "http")]
/// Starts server-everything in `mode` (`streamableHttp` or `sse`) and waits until it
/// says it listens.
fn start_http(mode: &str) -> HttpServer {
    let port = free_port();
    let child = spawn_ready(
        Command::new("node")
            .arg(everything())
            .arg(mode)
            .env("PORT", port.to_string()),
        |line| line.contains("listening on port") || line.contains("running on port"),
        Duration::from_secs(30),
        "server-everything",
    );
    HttpServer {
        _child: child,
        port,
    }
}

/// server-everything in `mode` over HTTP, and this client connected to its endpoint
/// `path`: the server (killed on drop), what the handlers were asked, the connection.
#[cfg(feature = "http")]
async fn connect_over_http(
    mode: &str,
    path: &str,
) -> (HttpServer, Asked, mcp_legacy::client::HttpConnection) {
    setup();
    let server = start_http(mode);
    let asked = Asked::default();
    let url = format!("http://127.0.0.1:{}/{path}", server.port);
    let connection = Connector::new(builder(&asked))
        .connect_http(&url, mcp_transport_http::HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    (server, asked, connection)
}

#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http_is_legacy_and_fully_usable() {
    let (_server, asked, connection) = connect_over_http("streamableHttp", "mcp").await;
    assert_eq!(connection.verdict.version, "2025-11-25");
    assert_eq!(connection.verdict.transport, Transport::StreamableHttp);
    exercise(&connection.client, &asked).await;
    // DELETE ends the session.
    connection.client.shutdown(Duration::from_secs(2)).await;
}

#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_http_sse_is_found_after_streamable_http_fails() {
    let (_server, asked, connection) = connect_over_http("sse", "sse").await;
    assert_eq!(connection.verdict.transport, Transport::HttpSse);
    exercise(&connection.client, &asked).await;
    connection.client.shutdown(Duration::from_secs(2)).await;
}
