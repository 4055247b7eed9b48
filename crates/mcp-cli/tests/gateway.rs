//! `mcp gateway` end to end: one gateway in front of three real upstreams (the pinned
//! `@modelcontextprotocol/server-everything` and `mcp serve-example` over stdio, and a
//! Python SDK server over Streamable HTTP), reached by our client in both eras and by the
//! TypeScript SDK v1 and v2 clients, over stdio and over HTTP.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ListenEvent};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_test_support::Killed;
use mcp_transport_stdio::ServerCommand;
use mcp_types::{CallToolResult, SubscriptionFilter};
use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Installs the pinned peers (server-everything, the TypeScript and Python SDKs).
fn setup() {
    mcp_test_support::setup_once(&root().join("crates/mcp-legacy/tests/peers/setup.sh"));
}

/// The Python SDK server over stateless Streamable HTTP on a free loopback port.
fn python_server() -> (Killed, String) {
    let port = mcp_test_support::free_port();
    let server = mcp_test_support::spawn_ready(
        Command::new(root().join("interop/.venv/bin/python"))
            .arg(root().join("interop/py-server.py"))
            .arg("--http")
            .arg(port.to_string()),
        |line| line.contains("Uvicorn running"),
        Duration::from_mins(1),
        "the Python SDK server",
    );
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// A config of the three upstreams, written under the tests' temporary directory.
fn config(name: &str, python_url: &str) -> PathBuf {
    let everything = root()
        .join("crates/mcp-legacy/tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let config = json!({"mcpServers": {
        "example": {"command": MCP, "args": ["serve-example"]},
        "everything": {"command": "node", "args": [everything, "stdio"]},
        "py": {"type": "http", "url": python_url},
    }});
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gateway-{name}.json"));
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// What the elicitation handler was asked.
type Asked = Arc<Mutex<Vec<String>>>;

/// A client that accepts every elicitation form with a name.
fn builder(asked: &Asked) -> ClientBuilder {
    let asked = Arc::clone(asked);
    Client::builder("gateway-test", "1.0.0").on_elicit(move |params| {
        let asked = Arc::clone(&asked);
        async move {
            let params = serde_json::to_value(&params).unwrap();
            asked.lock().unwrap().push(params["message"].to_string());
            Ok(serde_json::from_value(json!({
                "action": "accept",
                "content": {"name": "Ada through the gateway", "check": true}
            }))
            .unwrap())
        }
    })
}

/// Every text block of a result, joined.
fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lists the tools of all three upstreams and calls one of each, and the elicitation
/// trigger of server-everything, answered by this client.
async fn exercise(client: &Client, asked: &Asked) {
    let tools: Vec<String> = client
        .list_tools_all()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in ["everything__echo", "example__add", "py__add"] {
        assert!(
            tools.contains(&name.to_owned()),
            "{name} missing: {tools:?}"
        );
    }
    let echo = client
        .call_tool("everything__echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "Echo: hi");
    let add = client
        .call_tool("example__add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&add), "5");
    // The gateway answers, whichever upstream ran the tool.
    if let Some(info) = add.meta.as_ref().and_then(|m| m.server_info.as_ref()) {
        assert_eq!(info.name, "mcp-gateway");
    }
    let sum = client
        .call_tool("py__add", json!({"a": 4, "b": 5}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 9})), "{sum:?}");
    let elicited = client
        .call_tool("everything__trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    assert!(
        text(&elicited).contains("Ada through the gateway"),
        "{elicited:?}"
    );
    assert_eq!(asked.lock().unwrap().len(), 1, "{asked:?}");
}

fn gateway_command(config: &Path) -> ServerCommand {
    ServerCommand::new(MCP)
        .arg("gateway")
        .arg("--config")
        .arg(config.to_str().unwrap())
        // The gateway's warnings (an upstream down) belong in the test's output.
        .stderr(mcp_transport_stdio::StderrMode::Inherit)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_uses_three_upstreams_through_the_gateway_over_stdio_in_both_eras() {
    setup();
    let (_python, url) = python_server();
    let config = config("stdio", &url);
    for (era, version) in [
        (EraChoice::Detect, "2026-07-28"),
        (EraChoice::Legacy, "2025-11-25"),
    ] {
        let asked = Asked::default();
        let connection = Connector::new(builder(&asked))
            .era(era)
            .connect_stdio(&gateway_command(&config))
            .await
            .unwrap();
        assert_eq!(connection.verdict.version, version);
        exercise(&connection.client, &asked).await;
        let _ = connection.server.shutdown(Duration::from_secs(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_uses_the_gateway_over_http() {
    setup();
    let (_python, url) = python_server();
    let config = config("http", &url);
    let mut gateway = Command::new(MCP)
        .args(["gateway", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = gateway.stdout.take().unwrap();
    let _gateway = Killed(gateway);
    let endpoint = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
        line.trim().to_owned()
    })
    .await
    .unwrap();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint:?}");
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let asked = Asked::default();
        let connection = Connector::new(builder(&asked))
            .era(era)
            .connect_http(&endpoint, mcp_transport_http::HttpClientConfig::default())
            .await
            .unwrap();
        exercise(&connection.client, &asked).await;
        connection.client.shutdown(Duration::from_secs(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_resource_update_reaches_a_downstream_listener() {
    setup();
    let (_python, url) = python_server();
    let config = config("listen", &url);
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let connection = Connector::new(Client::builder("gateway-listener", "1.0.0"))
            .era(era)
            .connect_stdio(&gateway_command(&config))
            .await
            .unwrap();
        let client = &connection.client;
        let mut filter = SubscriptionFilter::new();
        filter.resource_subscriptions = Some(vec!["example://counter".to_owned()]);
        let mut listen = client.listen(filter).await.unwrap();
        let Some(ListenEvent::Acknowledged(ack)) = listen.next().await else {
            panic!("no acknowledgement");
        };
        assert_eq!(
            ack.resource_subscriptions.as_deref(),
            Some(&["example://counter".to_owned()][..])
        );
        client
            .call_tool("example__increment", json!({}))
            .await
            .unwrap();
        let event = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match listen.next().await {
                    Some(ListenEvent::ResourceUpdated(uri)) => return Some(uri),
                    Some(_) => {}
                    None => return None,
                }
            }
        })
        .await
        .expect("no resources/updated within 20 s");
        assert_eq!(event.as_deref(), Some("example://counter"));
        drop(listen);
        let _ = connection.server.shutdown(Duration::from_secs(5)).await;
    }
}

/// Runs `interop/ts-gateway.mjs` with `sdk` against the gateway over stdio.
fn typescript(sdk: &str, config: &Path) -> Value {
    let output = Command::new("node")
        .arg(root().join("interop/ts-gateway.mjs"))
        .arg(sdk)
        .arg(MCP)
        .args(["gateway", "--config"])
        .arg(config)
        .current_dir(root().join("interop"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| {
            panic!(
                "no JSON from the {sdk} client: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

#[test]
fn the_typescript_sdk_clients_use_three_upstreams_through_the_gateway() {
    setup();
    let (_python, url) = python_server();
    let config = config("typescript", &url);
    for (sdk, version) in [("v1", "2025-11-25"), ("v2-auto", "2026-07-28")] {
        let out = typescript(sdk, &config);
        assert_eq!(out.get("error"), None, "{sdk}: {out}");
        assert_eq!(out["protocolVersion"], version, "{sdk}: {out}");
        assert_eq!(out["serverName"], "mcp-gateway");
        let tools = out["tools"].as_array().unwrap();
        for name in ["everything__echo", "example__add", "py__add"] {
            assert!(tools.contains(&json!(name)), "{sdk}: {name} missing: {out}");
        }
        assert_eq!(out["everything"], "Echo: hi", "{sdk}: {out}");
        assert_eq!(out["example"], "5", "{sdk}: {out}");
        assert!(
            out["python"].as_str().unwrap().contains('9'),
            "{sdk}: {out}"
        );
        let elicitation = out["elicitation"].as_str().unwrap();
        assert!(
            elicitation.contains(&format!("answered by {sdk}")),
            "{sdk}: {out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_stdio_upstream_is_started_again() {
    setup();
    let config = json!({"mcpServers": {
        "crashy": {
            "command": root().join("interop/.venv/bin/python"),
            "args": [Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/crashy.py")],
        },
    }});
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gateway-crashy.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let connection = Connector::new(Client::builder("gateway-test", "1"))
        .connect_stdio(&gateway_command(&path))
        .await
        .unwrap();
    let client = &connection.client;
    let first = text(&client.call_tool("crashy__pid", ()).await.unwrap());
    let crashed = client.call_tool("crashy__crash", ()).await.unwrap();
    assert_eq!(crashed.is_error, Some(true), "{crashed:?}");
    // Started again by the gateway's client: a new process answers.
    let mut second = String::new();
    for _ in 0..100 {
        // Until then a call fails, as a result or (the tool briefly unlisted) an error.
        if let Ok(result) = client.call_tool("crashy__pid", ()).await
            && result.is_error != Some(true)
        {
            second = text(&result);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !second.is_empty() && second != first,
        "{first} then {second:?}"
    );
    let _ = connection.server.shutdown(Duration::from_secs(5)).await;
}
