//! The dual-era client against this workspace's own servers over stdio: the
//! `mcp-dual-era-demo` binary (an `mcp_server::Server` wrapped in `DualEra`) is detected
//! as modern and stays modern, and the same binary spoken to in a pinned legacy era runs
//! the same tool through real server-to-client requests. A server that never answers
//! is judged legacy after the probe timeout, and the handshake then fails in bounded
//! time.

#![cfg(feature = "stdio")]

use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_legacy::Error;
use mcp_legacy::client::{Connector, EraChoice, StdioConnection};
use mcp_test_support::{first_text as text, tool_names};
use mcp_transport_stdio::ServerCommand;
use mcp_types::{ElicitResult, ElicitResultAction, Era, JsonObject};
use serde_json::json;

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-dual-era-demo");

fn builder() -> ClientBuilder {
    Client::builder("era-test", "1.0.0")
        .on_elicit(|_| async {
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = serde_json::from_value(json!({"name": "Ada"})).ok();
            Ok(result)
        })
        .on_sample(|_| async {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "Quiet numbers hum"},
                "model": "test-model"
            }))
            .unwrap())
        })
}

/// Asserts that the `interview` tool, its questions answered by this client's handlers,
/// ends with `expected`.
async fn interviews(client: &mcp_client::Client, expected: &str) {
    let result = client
        .call_tool("interview", JsonObject::new())
        .await
        .unwrap();
    assert_eq!(text(&result), expected);
}

/// The demo server over stdio, in `era`.
async fn demo(era: EraChoice) -> StdioConnection {
    Connector::new(builder())
        .era(era)
        .connect_stdio(&ServerCommand::new(DEMO))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_server_is_detected_as_modern_and_stays_modern() {
    let connection = Connector::new(builder())
        .connect_stdio(&ServerCommand::new(DEMO))
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Modern);
    assert_eq!(connection.verdict.version, "2026-07-28");
    let client = &connection.client;
    for _ in 0..3 {
        // MRTR: input_required answered by the same handlers, no server requests.
        interviews(client, "Ada: Quiet numbers hum").await;
        assert_eq!(client.protocol_version(), "2026-07-28");
    }
    let discovered = client.discover().await.unwrap();
    assert!(
        discovered
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
    let _ = connection.server.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_legacy_era_runs_the_same_tool_through_server_requests() {
    let connection = demo(EraChoice::Legacy).await;
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.version, "2025-11-25");
    interviews(&connection.client, "Ada: Quiet numbers hum").await;
    let read = connection
        .client
        .read_resource("demo://hello")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "Hello, world"
    );
    let _ = connection.server.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_probed_then_the_handshake_times_out() {
    // `sleep` reads nothing and answers nothing.
    let started = std::time::Instant::now();
    let err = Connector::new(builder())
        .probe_timeout(Duration::from_millis(300))
        .connect_stdio(&ServerCommand::new("sleep").arg("30"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Handshake(mcp_client::Error::Timeout { method, .. }) if method == "initialize"),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_legacy_revision_can_be_pinned_and_a_modern_pin_skips_the_probe() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let connection = demo(EraChoice::Version(version.to_owned())).await;
        assert_eq!(connection.verdict.era, Era::Legacy);
        assert_eq!(connection.verdict.version, version);
        let mut args = JsonObject::new();
        args.insert("text".to_owned(), json!(version));
        let echo = connection.client.call_tool("echo", args).await.unwrap();
        assert_eq!(text(&echo), version);
        let discovered = connection.client.discover().await.unwrap();
        assert_eq!(discovered.supported_versions, [version]);
        let _ = connection.server.shutdown(Duration::from_secs(2)).await;
    }
    let connection = demo(EraChoice::Version("2026-07-28".to_owned())).await;
    assert_eq!(connection.verdict.era, Era::Modern);
    interviews(&connection.client, "Ada: Quiet numbers hum").await;
    let _ = connection.server.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_pinned_version_is_refused_before_any_process_starts() {
    let err = Connector::new(builder())
        .era(EraChoice::Version("2099-01-01".to_owned()))
        .connect_stdio(&ServerCommand::new("/nonexistent/server"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::UnknownVersion(v) if v == "2099-01-01"),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_once_is_a_handshake_error() {
    let err = Connector::new(builder())
        .connect_stdio(&ServerCommand::new("true"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Handshake(_)), "{err:?}");
}

/// Our own modern server over Streamable HTTP (an `mcp_server::Server` behind
/// `mcp_transport_http::HttpServer` on 127.0.0.1): the probe's `DiscoverResult` says
/// modern, the plain modern HTTP client takes over, and MRTR answers input with the same
/// handlers.
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_http_server_is_detected_as_modern_and_stays_modern() {
    use mcp_server::{Server, ToolDef};
    use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig};

    let server = Server::builder("modern-http", "1.0.0")
        .tool(ToolDef::new("interview", json!({"type": "object"}), |_args, cx| async move {
            let form: mcp_types::ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))?;
            let answer = cx.elicit("name", mcp_types::ElicitRequestParams::ElicitRequestForm(form))?;
            let name = serde_json::to_value(answer.content.as_ref().and_then(|c| c.get("name")))?;
            Ok(mcp_types::CallToolResult::text(format!("Hi {}", name.as_str().unwrap_or("?"))))
        }))
        .build()
        .unwrap();
    let running = HttpServer::bind(
        HttpServer::DEFAULT_ADDR,
        server,
        HttpServerConfig::default(),
    )
    .await
    .unwrap();
    let connection = Connector::new(builder())
        .connect_http(running.url(), HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Modern);
    assert_eq!(connection.verdict.version, "2026-07-28");
    for _ in 0..3 {
        interviews(&connection.client, "Hi Ada").await;
        assert_eq!(connection.client.protocol_version(), "2026-07-28");
    }
    running.shutdown(Duration::from_secs(1)).await;
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervised_server_that_crashes_is_restarted_and_reprobed() {
    let supervised = Connector::new(builder())
        .spawn_stdio(ServerCommand::new(DEMO), mcp_client::RestartPolicy::new(2))
        .await
        .unwrap();
    let (client, supervisor) = (&supervised.client, &supervised.supervisor);
    assert_eq!(supervisor.verdict().era, Era::Modern);
    interviews(client, "Ada: Quiet numbers hum").await;

    let first = supervisor.pid().unwrap();
    kill(first);
    // A list is safe to re-send: it succeeds on the new process.
    let tools = client.list_tools_all().await.unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(supervisor.restarts(), 1);
    assert_ne!(supervisor.pid(), Some(first));

    // A tool call is not re-sent: it may or may not have run.
    kill(supervisor.pid().unwrap());
    let err = client
        .call_tool("echo", JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, mcp_client::Error::MayHaveRun { method } if method == "tools/call"),
        "{err:?}"
    );
    assert_eq!(supervisor.restarts(), 2);

    // The budget is spent.
    kill(supervisor.pid().unwrap());
    let err = client.list_tools_all().await.unwrap_err();
    assert!(
        matches!(err, mcp_client::Error::RestartsExhausted(2)),
        "{err:?}"
    );
    client.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_that_changed_era_is_reached_in_its_new_era() {
    // The first process answers like a 2025-03-26 server; every later one is the modern
    // demo (a marker file tells them apart).
    let marker = std::env::temp_dir().join(format!(
        "mcp-legacy-era-change-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    let script = r#"
if [ -f "$MARKER" ]; then exec "$DEMO"; fi
touch "$MARKER"
read line; echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}'
read line; echo '{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"0.1"}}}'
read line; read line
echo '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"old-tool","inputSchema":{"type":"object"}}]}}'
cat > /dev/null
"#;
    let command = ServerCommand::new("sh")
        .arg("-c")
        .arg(script)
        .env("MARKER", &marker)
        .env("DEMO", DEMO);
    let supervised = Connector::new(builder())
        .spawn_stdio(command, mcp_client::RestartPolicy::default())
        .await
        .unwrap();
    let (client, supervisor) = (&supervised.client, &supervised.supervisor);
    assert_eq!(supervisor.verdict().era, Era::Legacy);
    assert_eq!(supervisor.verdict().version, "2025-03-26");
    let tools = tool_names(&client.list_tools_all().await.unwrap());
    assert_eq!(tools, ["old-tool"]);

    kill(supervisor.pid().unwrap());
    let tools = tool_names(&client.list_tools_all().await.unwrap());
    assert_eq!(tools, ["echo", "fails", "interview"]);
    assert_eq!(supervisor.verdict().era, Era::Modern);
    interviews(client, "Ada: Quiet numbers hum").await;
    client.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_file(&marker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_subscription_ends_when_the_server_process_exits() {
    let connection = demo(EraChoice::Legacy).await;
    let mut filter = mcp_types::SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    let mut subscription = connection.client.listen(filter).await.unwrap();
    assert!(matches!(
        subscription.next().await,
        Some(mcp_client::ListenEvent::Acknowledged(_))
    ));
    kill(connection.server.process().id());
    let end = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await;
    assert_eq!(end.unwrap(), None);
}
