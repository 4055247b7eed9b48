//! Log messages and tool-enabled sampling against this workspace's server, in process and
//! over Streamable HTTP on 127.0.0.1: `notifications/message` reaches `on_log` and the
//! bounded `log_channel` (the newest dropped and counted when full), and a sampling input
//! request carrying `tools` is refused unless the client declared `sampling.tools`.

use std::sync::{Arc, Mutex};

use mcp_client::{Client, ClientBuilder, Error};
use mcp_server::{Server, ToolDef};
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig};
use mcp_types::{CallToolResult, CreateMessageRequestParams, JsonObject, LoggingLevel};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("logs", "1")
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

type Seen = Arc<Mutex<Vec<Value>>>;

fn logging(capacity: usize) -> (ClientBuilder, Seen, mcp_client::LogReceiver) {
    let seen = Seen::default();
    let sink = Arc::clone(&seen);
    let (builder, logs) = Client::builder("c", "1")
        .log_level(LoggingLevel::Info)
        .on_log(move |message| sink.lock().unwrap().push(message.data))
        .log_channel(capacity);
    (builder, seen, logs)
}

async fn assert_logged(client: &Client, seen: &Seen, logs: &mut mcp_client::LogReceiver) {
    client.call_tool("chatty", JsonObject::new()).await.unwrap();
    // Every message at or above the level reaches the callback, in order.
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"n": 0}), json!({"n": 1}), json!({"n": 2})]
    );
    // The channel holds two: the third, the newest, was dropped and counted.
    assert_eq!(logs.try_recv().unwrap().data, json!({"n": 0}));
    assert_eq!(logs.try_recv().unwrap().data, json!({"n": 1}));
    assert!(logs.try_recv().is_none());
    assert_eq!(logs.dropped(), 1);
}

#[tokio::test]
async fn log_messages_reach_the_callback_and_the_bounded_channel_in_process() {
    let (builder, seen, mut logs) = logging(2);
    let (client, _c, _s) = mcp_test_support::client::connect_in_memory(server(), builder, 64);
    assert_logged(&client, &seen, &mut logs).await;
}

#[tokio::test]
async fn log_messages_reach_the_callback_and_the_bounded_channel_over_http() {
    let running = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        server(),
        HttpServerConfig::default(),
    )
    .await
    .unwrap();
    let (builder, seen, mut logs) = logging(2);
    let client = builder
        .connect_http(running.url(), HttpClientConfig::default())
        .unwrap();
    assert_logged(&client, &seen, &mut logs).await;
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn without_a_log_level_no_message_is_sent() {
    let seen = Seen::default();
    let sink = Arc::clone(&seen);
    let builder = Client::builder("c", "1").on_log(move |m| sink.lock().unwrap().push(m.data));
    let (client, _c, _s) = mcp_test_support::client::connect_in_memory(server(), builder, 64);
    client.call_tool("chatty", JsonObject::new()).await.unwrap();
    assert!(seen.lock().unwrap().is_empty());
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

#[tokio::test]
async fn sampling_with_tools_needs_the_sampling_tools_capability() {
    let calls = Arc::new(Mutex::new(0));

    // Not declared: refused before the handler.
    let builder = sampler(Client::builder("c", "1"), &calls);
    let (client, _c, _s) = mcp_test_support::client::connect_in_memory(server(), builder, 64);
    assert!(
        client
            .capabilities()
            .sampling
            .as_ref()
            .unwrap()
            .tools
            .is_none()
    );
    let err = client
        .call_tool("tool_use", JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidInputRequest { method, .. } if method == "sampling/createMessage"),
        "{err:?}"
    );
    assert_eq!(*calls.lock().unwrap(), 0);

    // Declared: the handler gets the tools.
    let builder = sampler(Client::builder("c", "1"), &calls).sampling_tools(true);
    let (client, _c, _s) = mcp_test_support::client::connect_in_memory(server(), builder, 64);
    let declared = serde_json::to_value(client.capabilities()).unwrap();
    assert_eq!(declared["sampling"], json!({"tools": {}}));
    let result = client
        .call_tool("tool_use", JsonObject::new())
        .await
        .unwrap();
    assert_eq!(mcp_test_support::first_text(&result), "model-with-1-tools");
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[test]
fn sampling_tools_without_a_sampling_handler_declares_nothing() {
    let builder = Client::builder("c", "1").sampling_tools(true);
    assert!(builder.input_handlers().capabilities().sampling.is_none());
}
