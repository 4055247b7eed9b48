//! `mcp serve-example --http ADDR --redis URL` as instances of a fleet: a listener on one
//! instance hears a change made through another, and a 2025-11-25 session initialized on
//! one is served by another, after the first is killed too, through a real `redis-server`.

#[path = "../../mcp-server/tests/redis_common/mod.rs"]
mod redis_common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_test_support::Killed;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// An example server instance sharing the Redis at `redis`: its endpoint URL.
fn instance(redis: &str) -> (Killed, String) {
    mcp_test_support::spawn_url(Command::new(MCP).args([
        "serve-example",
        "--http",
        "127.0.0.1:0",
        "--redis",
        redis,
    ]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_one_instance_hears_a_change_made_through_another() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let (_a, a) = instance(&redis.url);
    let (_b, b) = instance(&redis.url);
    assert!(
        a.starts_with("http://") && b.starts_with("http://") && a != b,
        "{a} {b}"
    );

    // Listening on A, with the 2026-07-28 protocol and, separately, a 2025-11-25 session.
    let listen = |protocol: &str| {
        let mut child = Command::new(MCP)
            .args([
                "listen",
                "example://counter",
                "--count",
                "1",
                "--json",
                "--protocol",
                protocol,
                "--server",
                &a,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        (Killed(child), rx)
    };
    let listeners = [listen("modern"), listen("legacy")];

    // Changes through B, until each listener has heard one (it prints nothing before, so
    // the first changes may come before it is subscribed).
    let mut heard = vec![None; listeners.len()];
    for _ in 0..100 {
        let out = Command::new(MCP)
            .args(["call", "increment", "--server", &b])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for ((_, rx), heard) in listeners.iter().zip(&mut heard) {
            if heard.is_none() {
                *heard = rx.recv_timeout(Duration::from_millis(100)).ok();
            }
        }
        if heard.iter().all(Option::is_some) {
            break;
        }
    }
    for event in heard {
        let event = event.expect("a listener on A heard no change made through B");
        assert!(
            event.contains("resources/updated") && event.contains("example://counter"),
            "{event}"
        );
    }
    drop(redis);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_initialized_on_one_instance_is_served_by_another_after_it_dies() {
    use mcp_test_support::http::{client, json_body, send, session_id};
    use serde_json::json;

    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let (a_process, a) = instance(&redis.url);
    let (_b, b) = instance(&redis.url);
    let http = client();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fleet", "version": "1"}}});
    let response = send(&http, "POST", &a, &[], initialize.to_string()).await;
    assert_eq!(response.status(), 200);
    let session = session_id(&response);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = send(
        &http,
        "POST",
        &a,
        &[("mcp-session-id", &session)],
        initialized.to_string(),
    )
    .await;
    assert_eq!(response.status(), 202);

    let echo = |id: i64, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}})
        .to_string()
    };
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let response = send(&http, "POST", &b, &headers, echo(1, "through B")).await;
    assert_eq!(response.status(), 200);
    let body = json_body(response).await;
    assert_eq!(body["result"]["content"][0]["text"], "through B", "{body}");

    // A dies; its session lives on in Redis, and B serves it.
    drop(a_process);
    let response = send(&http, "POST", &b, &headers, echo(2, "after A")).await;
    assert_eq!(response.status(), 200);
    let body = json_body(response).await;
    assert_eq!(body["result"]["content"][0]["text"], "after A", "{body}");
    drop(redis);
}

/// Two `mcp gateway --http ADDR --redis URL` in front of the same upstream (the example
/// server over stdio): a 2025-11-25 session initialized on one gateway is served by the
/// other, and a multi round-trip call's state sealed by one is opened by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_sharing_redis_serve_one_session_and_one_key_ring() {
    use mcp_test_support::http::{client, json_body, send, session_id};
    use serde_json::json;

    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let config = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet-gateway.json");
    let upstream = json!({"mcpServers": {"example": {"command": MCP, "args": ["serve-example"]}}});
    std::fs::write(&config, upstream.to_string()).unwrap();
    let gateway = || {
        mcp_test_support::spawn_url(
            Command::new(MCP)
                .args([
                    "gateway",
                    "--http",
                    "127.0.0.1:0",
                    "--redis",
                    &redis.url,
                    "--config",
                ])
                .arg(&config)
                .stderr(Stdio::null()),
        )
    };
    let ((_a, a), (_b, b)) = (gateway(), gateway());
    let http = client();

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fleet", "version": "1"}}});
    let response = send(&http, "POST", &a, &[], initialize.to_string()).await;
    assert_eq!(response.status(), 200);
    let session = session_id(&response);
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = send(&http, "POST", &a, &headers, initialized.to_string()).await;
    assert_eq!(response.status(), 202);
    let echo = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "example__echo", "arguments": {"text": "through B"}}});
    let response = send(&http, "POST", &b, &headers, echo.to_string()).await;
    assert_eq!(
        response.status(),
        200,
        "the session is served by the other gateway"
    );
    let body = json_body(response).await;
    assert_eq!(body["result"]["content"][0]["text"], "through B", "{body}");

    // The gateways seal with the same key: a forged or foreign state is refused by either,
    // while the state one of them handed out opens on the other (it names a call parked
    // in the first, so the second says it no longer holds that call, not that the state
    // is invalid).
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let modern = |params: serde_json::Value| {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
        body.to_string()
    };
    let modern_headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "example__greet"),
    ];
    let first = json!({"_meta": meta, "name": "example__greet", "arguments": {}});
    let response = send(&http, "POST", &a, &modern_headers, modern(first.clone())).await;
    let asked = json_body(response).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let key = asked["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = first.clone();
    retry["requestState"] = asked["result"]["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Ada"}}});
    let response = send(&http, "POST", &b, &modern_headers, modern(retry.clone())).await;
    let other = json_body(response).await;
    let text = other.to_string();
    assert!(
        text.contains("no longer holds this call"),
        "B opened A's state and found no parked call: {other}"
    );
    let mut forged = retry;
    forged["requestState"] = json!(format!(
        "{}x",
        asked["result"]["requestState"].as_str().unwrap()
    ));
    let response = send(&http, "POST", &b, &modern_headers, modern(forged)).await;
    let refused = json_body(response).await;
    assert_eq!(
        refused["error"]["code"], -32602,
        "a forged state: {refused}"
    );
    drop(redis);
}
