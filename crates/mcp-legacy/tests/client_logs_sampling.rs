//! The dual-era client in a pinned legacy era against this workspace's dual-era server on
//! 127.0.0.1: log messages (after `logging/setLevel`) reach the user's callback and
//! channel, and a `sampling/createMessage` carrying `tools` is refused with -32602 unless
//! the client declared `sampling.tools`.

#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};

use mcp_client::{Client, ClientBuilder};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{Server, ToolDef};
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, CreateMessageRequestParams, Era, JsonObject, LoggingLevel};
use serde_json::json;

fn server() -> Server {
    Server::builder("legacy-logs", "1")
        .tool(ToolDef::new(
            "chatty",
            json!({"type": "object"}),
            |_, cx| async move {
                cx.log(LoggingLevel::Debug, json!("too quiet to send"))
                    .await;
                for n in 0..3 {
                    cx.log(LoggingLevel::Warning, json!({ "n": n })).await;
                }
                Ok(CallToolResult::text("done"))
            },
        ))
        .tool(ToolDef::new(
            "tool_use",
            json!({"type": "object"}),
            |_, cx| async move {
                let ask: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}],
                    "maxTokens": 50,
                    "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
                    "toolChoice": {"mode": "auto"}
                }))?;
                let answer = cx.sample("tools", ask)?;
                Ok(CallToolResult::text(answer.model))
            },
        ))
        .build()
        .unwrap()
}

async fn start() -> RunningServer {
    let http = HttpServerConfig::default();
    let service = DualEraHttp::new(server(), http.clone(), LegacyHttpConfig::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    HttpServer::serve_endpoint(listener, service, &http).unwrap()
}

async fn legacy_client(running: &RunningServer, builder: ClientBuilder) -> Client {
    let connection = Connector::new(builder)
        .era(EraChoice::Legacy)
        .connect_http(running.url(), HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    connection.client
}

fn sampler(builder: ClientBuilder, calls: &Arc<Mutex<u32>>) -> ClientBuilder {
    let calls = Arc::clone(calls);
    builder.on_sample(move |params| {
        *calls.lock().unwrap() += 1;
        let tools = params.tools.map_or(0, |t| t.len());
        async move {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "sunny"},
                "model": format!("model-with-{tools}-tools")
            }))
            .unwrap())
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_log_messages_reach_the_callback_and_the_bounded_channel() {
    let running = start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let (builder, mut logs) = Client::builder("c", "1")
        .log_level(LoggingLevel::Info)
        .on_log(move |message| sink.lock().unwrap().push(message.data))
        .log_channel(2);
    let client = legacy_client(&running, builder).await;
    client.call_tool("chatty", JsonObject::new()).await.unwrap();
    // The debug message is below the level set with logging/setLevel.
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"n": 0}), json!({"n": 1}), json!({"n": 2})]
    );
    // The channel holds two; the third (the newest) was dropped and counted.
    assert_eq!(logs.try_recv().unwrap().data, json!({"n": 0}));
    assert_eq!(logs.try_recv().unwrap().data, json!({"n": 1}));
    assert!(logs.try_recv().is_none());
    assert_eq!(logs.dropped(), 1);
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sampling_with_tools_needs_the_sampling_tools_capability() {
    let running = start().await;
    let calls = Arc::new(Mutex::new(0));

    // Not declared: the server's request is refused with -32602, the handler never runs.
    let client = legacy_client(&running, sampler(Client::builder("c", "1"), &calls)).await;
    assert!(
        client
            .capabilities()
            .sampling
            .as_ref()
            .unwrap()
            .tools
            .is_none()
    );
    let outcome = client.call_tool("tool_use", JsonObject::new()).await;
    // The server relays the client's -32602 into the call's error (its message says why).
    let refused = matches!(
        &outcome,
        Err(mcp_client::Error::Protocol(error)) if error.message.contains("sampling.tools")
    );
    assert!(
        refused,
        "the call must fail with the client's refusal: {outcome:?}"
    );
    assert_eq!(*calls.lock().unwrap(), 0);

    // Declared: the handler gets the tools.
    let client = legacy_client(
        &running,
        sampler(Client::builder("c", "1"), &calls).sampling_tools(true),
    )
    .await;
    assert!(
        client
            .capabilities()
            .sampling
            .as_ref()
            .unwrap()
            .tools
            .is_some()
    );
    let result = client
        .call_tool("tool_use", JsonObject::new())
        .await
        .unwrap();
    assert_eq!(mcp_test_support::first_text(&result), "model-with-1-tools");
    assert_eq!(*calls.lock().unwrap(), 1);
    running.shutdown(std::time::Duration::from_secs(1)).await;
}
